"""Kubernetes resource quantities (``500m``, ``1.5``, ``128Mi``, ``1e3``), exactly: as
fractions, or as integers of billionths (a quantity's precision), which cost less.

Follows ``k8s.io/apimachinery/pkg/api/resource`` (quantity.go): a signed decimal number
with one suffix (binary ``Ki``..``Ei``, decimal ``n u m k M G T P E`` or an exponent
``e``/``E``). ``Value()`` and ``MilliValue()`` round up, as the kubelet's callers rely on.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from kubelet_winnet._kubelet import golang

__all__ = [
    "go_amount",
    "go_div",
    "go_milli_value",
    "go_scaled_value",
    "go_value",
    "milli_value",
    "nanos_milli_value",
    "nanos_value",
    "parse_nanos",
    "parse_quantity",
    "value",
    "wrap_int64",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_SYNTAX = re.compile(
    r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE])([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)"
)
# The upstream error text (resource.ErrFormatWrong).
FORMAT_ERROR = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_MAX_LEN = 64  # far beyond any real quantity; bounds the work on hostile input


def _match(text: str) -> re.Match[str]:
    if len(text) > _MAX_LEN:
        raise ValueError(FORMAT_ERROR)
    match = _SYNTAX.fullmatch(text)
    if match is None:
        raise ValueError(FORMAT_ERROR)
    return match


def _nanos(match: re.Match[str]) -> int:
    # The exact value times 10**9, its magnitude rounded up (upstream keeps at most
    # nanosecond precision), in integers: the same number Fraction arithmetic gives.
    sign, number, exp_mark, exponent, suffix = match.groups()
    whole, _, fraction = number.partition(".")
    magnitude = int(whole + fraction or "0")
    if exp_mark:
        power = int(exponent)
        if abs(power) > 30:  # upstream caps scale well below this
            raise ValueError(FORMAT_ERROR)
    elif suffix in _BINARY:
        magnitude *= _BINARY[suffix]
        power = 0
    else:
        power = _DECIMAL_EXPONENT[suffix or ""]
    scale = power + 9 - len(fraction)
    factor: int = 10 ** abs(scale)
    magnitude = magnitude * factor if scale >= 0 else -(-magnitude // factor)
    return -magnitude if sign == "-" else magnitude


def parse_nanos(text: str) -> int:
    """``text``'s value in billionths (what :func:`parse_quantity` gives, times
    ``10**9``); ``ValueError`` (upstream's text) when malformed."""
    found = _NANOS.get(text)
    if found is None:
        found = _remember(_NANOS, text, _nanos(_match(text)))
    return found


# The same few quantities ("500m", "512Mi") recur on every pod of a workload, and looking
# one up costs a tenth of parsing it. Only parsed texts (at most _MAX_LEN long) are kept.
_NANOS: dict[str, int] = {}
_SCALED: dict[tuple[str, int, bool], int] = {}
_REMEMBERED = 512


def _remember(cache: dict[Any, int], key: Any, value: int) -> int:
    if len(cache) >= _REMEMBERED:  # bounded: the keys come from the input
        cache.clear()
    cache[key] = value
    return value


def parse_quantity(text: str, field: str = "") -> Fraction:
    """The exact value of ``text``; ``ValueError`` (upstream's text) when malformed."""
    return Fraction(parse_nanos(text), 10**9)


def nanos_value(nanos: int) -> int:
    """``Quantity.Value()`` of a quantity of ``nanos`` billionths: rounded up."""
    return -(-nanos // 10**9)


def nanos_milli_value(nanos: int) -> int:
    """``Quantity.MilliValue()`` of a quantity of ``nanos`` billionths: rounded up."""
    return -(-nanos // 10**6)


def value(amount: Fraction) -> int:
    """``Quantity.Value()``: rounded up to an integer."""
    return math.ceil(amount)


def milli_value(amount: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(amount * 1000)


# --- MilliValue() as Go's int64 computes it ------------------------------------------
# Exact fractions answer every realistic quantity; at the int64 edge the kubelet's answer
# depends on how apimachinery stores the quantity (int64Amount, or inf.Dec past 18 digits)
# and on ScaledValue's overflow: it wraps (the low 64 bits), or, in the newest
# apimachinery, saturates (scale_int.go ``scaledValue``: "the result saturates").

_INT64_MAX = golang.INT64_MAX
_INT64_MIN = golang.INT64_MIN
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12,
                     "P": 15, "E": 18}
_BINARY_EXPONENT = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


# Go's int64 arithmetic lives in golang.py; these names stay for the builders' imports.
wrap_int64 = golang.wrap_int64
go_div = golang.div_int64


def _int64_multiply(a: int, b: int) -> tuple[int, bool]:
    # amount.go int64Multiply: the wrapped product and whether it fit.
    if a in (0, 1) or b in (0, 1):
        return a * b, True
    if _INT64_MIN in (a, b):
        return 0, False
    product = wrap_int64(a * b)
    return product, go_div(product, b) == a


def _positive_scale(base: int, scale: int) -> tuple[int, bool]:
    # amount.go positiveScaleInt64: scales 1, 2, 3, 6 and 9 return the wrapped product of
    # one multiplication; any other scale multiplies by 10 in a loop and gives 0 on overflow.
    if scale == 0:
        return base, True
    if scale in (1, 2, 3, 6, 9):
        return _int64_multiply(base, 10**scale)
    current = base
    for _ in range(scale):
        current, fits = _int64_multiply(current, 10)
        if not fits:
            return 0, False
    return current, True


def _saturate(number: int) -> int:
    return max(_INT64_MIN, min(_INT64_MAX, number))


def go_milli_value(text: str, *, saturating: bool = False) -> int:
    """``Quantity.MilliValue()`` of ``ParseQuantity(text)`` in Go's int64 arithmetic
    (quantity.go, amount.go, scale_int.go). ``saturating``: the newest apimachinery,
    whose ScaledValue clamps to the int64 range instead of wrapping."""
    return go_scaled_value(text, -3, saturating=saturating)


def go_value(text: str) -> int:
    """``Quantity.Value()`` of ``ParseQuantity(text)`` in Go's int64 arithmetic: past the
    int64 range it is what the representation gives (0 where positiveScaleInt64's loop
    overflows, the low 64 bits of an inf.Dec), not the exact value wrapped."""
    return go_scaled_value(text, 0)


def go_scaled_value(text: str, scale: int, *, saturating: bool = False) -> int:
    """``Quantity.ScaledValue(scale)`` (quantity.go) of ``ParseQuantity(text)``, for the
    scales the kubelet asks: 0 (``Value()``) and -3 (``MilliValue()``)."""
    key = (text, scale, saturating)
    found = _SCALED.get(key)
    if found is None:
        found = _remember(_SCALED, key, _go_scaled_value(text, scale, saturating))
    return found


def go_amount(text: str) -> tuple[bool, int, int]:
    """How ``ParseQuantity(text)`` (quantity.go) stores the quantity: ``(True, value,
    scale)`` for an ``int64Amount`` (value * 10^scale), ``(False, unscaled, scale)`` for an
    ``inf.Dec`` (unscaled * 10^-scale: rounded up to nanos, so scale 9, or BinarySI's
    cap, MaxInt64 at scale 0)."""
    match = _match(text)  # validates, and bounds the length
    exact = _nanos(match)  # and the exponent
    sign, number, exp_mark, exponent_text, suffix = match.groups()
    negative = sign == "-"
    whole, _, fraction = number.partition(".")
    whole = whole.lstrip("0")
    binary = not exp_mark and suffix in _BINARY_EXPONENT
    exponent = (int(exponent_text) if exp_mark else
                _BINARY_EXPONENT[suffix] if binary else _DECIMAL_EXPONENT[suffix or ""])
    digits = int((whole + fraction) or "0")
    # ParseQuantity's int64 fast path.
    if binary:
        precision = -1
        if not fraction:
            precision = 15 - len(whole) - int(exponent * 3 / 10) - 1
        scale, mantissa = 0, 1 << exponent
    else:
        precision = 18 - (len(whole) + len(fraction))
        scale, mantissa = exponent - len(fraction), 1
    if precision >= 0 and scale >= -9:
        amount, fits = _int64_multiply(digits, mantissa)
        if fits:
            return True, -amount if negative else amount, scale
    # inf.Dec: amount.Round(amount, Nano.infScale(), inf.RoundUp), then "the max is just
    # a simple cap" for BinarySI (amount.Cmp(maxAllowed.Dec) > 0: positive values only).
    if binary and exact > _INT64_MAX * 10**9:
        return False, _INT64_MAX, 0
    return False, exact, 9


def _go_scaled_value(text: str, scale: int, saturating: bool) -> int:
    fast, unscaled, amount_scale = go_amount(text)
    if fast:
        return _int64_amount_scaled(unscaled, amount_scale, scale, saturating)
    if saturating:  # the exact value, rounded away from zero, clamped
        magnitude = -(-abs(unscaled) * 10**max(0, -amount_scale - scale)
                      // 10**max(0, amount_scale + scale))
        return _saturate(-magnitude if unscaled < 0 else magnitude)
    return _dec_scaled_value(unscaled, amount_scale, -scale)


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    # scale_int.go scaledValue, whose big.Int.Int64() keeps the low 64 bits.
    dif = scale - new_scale
    if dif == 0:
        return wrap_int64(unscaled)
    if dif < 0:  # "if any intermediate operation causes overflow, the result will overflow"
        return golang.mul_int64(wrap_int64(unscaled), 10**-dif)
    divisor = 10**dif
    if unscaled < _INT64_MAX and dif < 19:  # the int64 fast path: truncated, then +1
        low = wrap_int64(unscaled)
        quotient = go_div(low, divisor)
        return quotient + 1 if golang.rem_int64(low, divisor) else quotient
    quotient, remainder = divmod(unscaled, divisor)  # big.Int.DivMod: Euclidean
    return wrap_int64(wrap_int64(quotient) + (1 if remainder else 0))


def _int64_amount_scaled(amount: int, scale: int, target: int, saturating: bool) -> int:
    # amount.go int64Amount.AsScaledInt64(target); ScaledValue ignores its "ok".
    if scale < target:
        # negativeScaleInt64: "if not exact, is rounded away from zero"
        divisor = 10 ** (target - scale)
        quotient = go_div(amount, divisor)
        if golang.rem_int64(amount, divisor):
            quotient += 1 if amount > 0 else -1
        return quotient
    scaled, fits = _positive_scale(amount, scale - target)
    if not fits and saturating:
        return _INT64_MAX if amount > 0 else _INT64_MIN
    return scaled
