"""Resource quantities as apimachinery's resource.Quantity reads them (quantity.go)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubelet_winnet._kubelet.quantity import milli_value, parse_quantity, value


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
