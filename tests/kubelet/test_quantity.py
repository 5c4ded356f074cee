"""Resource quantities as apimachinery's resource.Quantity reads them (quantity.go)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.quantity import (
    go_amount,
    go_scaled_value,
    go_value,
    milli_value,
    nanos_milli_value,
    nanos_value,
    parse_nanos,
    parse_quantity,
    value,
)
from tests.go_oracle import GoOracle


@pytest.mark.parametrize(
    ("text", "exact"),
    [("1", Fraction(1)), ("500m", Fraction(1, 2)), ("1.5", Fraction(3, 2)),
     ("128Mi", Fraction(128 * 2**20)), ("1e3", Fraction(1000)), ("2k", Fraction(2000)),
     ("1n", Fraction(1, 10**9)), (".5", Fraction(1, 2)), ("1.", Fraction(1))],
)
def test_quantities(text: str, exact: Fraction) -> None:
    assert parse_quantity(text) == exact


def test_quantity_rounding_and_errors() -> None:
    assert value(parse_quantity("0.1")) == 1  # Value() rounds up
    assert milli_value(parse_quantity("1n")) == 1
    for bad in ("", "1.2.3", "Mi", "1 Mi", "1e999", "x" * 100, "1ki"):
        with pytest.raises(ValueError, match="quantities must match"):
            parse_quantity(bad)


_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_FACTORS = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
            "": Fraction(1), "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
            "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
            "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
            "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60)}


@st.composite
def _quantity_texts(draw: st.DrawFn) -> tuple[str, Fraction]:
    """A quantity's text and its exact value, worked out with Decimal and Fraction."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.text("0123456789", max_size=12))
    fraction = draw(st.none() | st.text("0123456789", max_size=12))
    if not whole and not fraction:
        whole = "0"
    number = whole if fraction is None else f"{whole}.{fraction}"
    exact = Fraction(Decimal(number if number[0] != "." else "0" + number))
    if draw(st.booleans()):
        power = draw(st.integers(-30, 30))
        text = f"{sign}{number}{draw(st.sampled_from('eE'))}{power}"
        exact *= Fraction(10) ** power
    else:
        suffix = draw(st.sampled_from(_SUFFIXES))
        text = f"{sign}{number}{suffix}"
        exact *= _FACTORS[suffix]
    return text, -exact if sign == "-" else exact


@given(_quantity_texts())
def test_billionths_are_the_exact_value_rounded_up_to_nanos(case: tuple[str, Fraction]) -> None:
    """quantity.go: "Quantity ... keeps at most nanosecond precision", rounding the
    magnitude up (inf.Dec RoundUp); Value() and MilliValue() round up from there."""
    text, exact = case
    magnitude = math.ceil(abs(exact) * 10**9)
    nanos = -magnitude if exact < 0 else magnitude
    assert parse_nanos(text) == nanos
    assert parse_quantity(text) == Fraction(nanos, 10**9)
    assert nanos_value(nanos) == math.ceil(Fraction(nanos, 10**9))
    assert nanos_milli_value(nanos) == math.ceil(Fraction(nanos, 10**6))



def test_remembered_quantities_stay_exact_and_bounded() -> None:
    # A workload's pods repeat a few quantities, so parses are remembered: a second read
    # gives the same value, a malformed text raises every time, and the memory is bounded.
    from kubelet_winnet._kubelet import quantity

    for _ in range(2):
        assert parse_nanos("150Mi") == 150 * 2**20 * 10**9
        assert quantity.go_milli_value("2000m") == 2000
        with pytest.raises(ValueError, match="quantities must match"):
            parse_nanos("1 Mi")
    for number in range(3 * quantity._REMEMBERED):
        assert parse_nanos(f"{number}m") == number * 10**6
        assert quantity.go_milli_value(f"{number}k") == number * 10**6
    assert len(quantity._NANOS) <= quantity._REMEMBERED
    assert len(quantity._SCALED) <= quantity._REMEMBERED


def test_remembered_quantities_agree_across_threads() -> None:
    """Eight threads parse more distinct texts than are remembered, so the memory is
    cleared while others read it: every answer is still the quantity's own value."""
    import threading

    from kubelet_winnet._kubelet import quantity

    texts = [f"{number}Mi" for number in range(2 * quantity._REMEMBERED)]
    wrong: list[str] = []

    def work(offset: int) -> None:
        for index in range(len(texts)):
            text = texts[(index + offset) % len(texts)]
            number = int(text[:-2])
            if parse_nanos(text) != number * 2**20 * 10**9:
                wrong.append(text)
            if quantity.go_milli_value(text) != number * 2**20 * 1000:
                wrong.append(text)

    threads = [threading.Thread(target=work, args=(37 * n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


# Past the int64 range Value() and MilliValue() are what apimachinery's int64 arithmetic
# makes of the stored form, as Go computes it. The rows are the rules read by hand.
@pytest.mark.parametrize(
    ("text", "stored", "value"),
    [
        # ParseQuantity's fast path: one digit at exponent 19 is int64Amount{1, 19};
        # AsScaledInt64(0) runs positiveScaleInt64's loop, which overflows to 0.
        ("1e19", (True, 1, 19), 0),
        # Scale 9 is one multiplication (int64Multiply): the wrapped product.
        ("10G", (True, 10, 9), 10 * 10**9),
        ("10000000000G", (True, 10**10, 9), golang.wrap_int64(10**19)),
        # Twenty digits leave the fast path: an inf.Dec rounded to nanos, whose
        # scaledValue keeps big.Int.Int64()'s low 64 bits.
        ("12345678901234567890", (False, 12345678901234567890 * 10**9, 9),
         golang.wrap_int64(12345678901234567890)),
        # BinarySI beyond MaxInt64 is capped there ("the max is just a simple cap").
        ("16Ei", (False, golang.INT64_MAX, 0), golang.INT64_MAX),
        ("1Gi", (True, 2**30, 0), 2**30),
        ("1m", (True, 1, -3), 1),
    ],
)
def test_value_past_int64_is_the_stored_forms(
    text: str, stored: tuple[bool, int, int], value: int
) -> None:
    assert go_amount(text) == stored
    assert go_value(text) == value


_GO_TEXTS = st.one_of(
    _quantity_texts().map(lambda case: case[0]),
    st.builds(lambda digits, tail: f"{digits}{tail}", st.integers(0, 10**25),
              st.sampled_from(["", "e19", "e20", "E", "P", "Ei", "Pi", "k", "m", "n", "e-12"])),
)


@given(st.lists(_GO_TEXTS, min_size=1, max_size=30))
@example(["1e19", "10E", "9223372036854775807", "9223372036854775808", "16Ei", "8Ei",
          "12345678901234567890", "1.5Ei", "10000000000G", "0.000000000001", "-1e19"])
def test_scaled_value_is_gos(go: GoOracle, texts: list[str]) -> None:
    """Quantity.ScaledValue(0) and (-3), Value() and MilliValue(), up to 1.37's
    apimachinery: int64Amount.AsScaledInt64 (amount.go) or scaledValue (scale_int.go),
    in Go's int64 arithmetic and math/big, on the form ParseQuantity stores."""
    asked = [[("int64" if fast else "dec"), str(number), str(scale), str(target)]
             for text in texts for fast, number, scale in [go_amount(text)]
             for target in (0, -3)]
    want = [int(answer) for answer in go.ask("scaled_value", asked)]
    assert [go_scaled_value(text, target) for text in texts for target in (0, -3)] == want
