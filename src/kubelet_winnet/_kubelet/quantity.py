"""Kubernetes resource quantities (``500m``, ``1.5``, ``128Mi``, ``1e3``) as exact fractions.

Follows ``k8s.io/apimachinery/pkg/api/resource`` (quantity.go): a signed decimal number
with one suffix (binary ``Ki``..``Ei``, decimal ``n u m k M G T P E`` or an exponent
``e``/``E``). ``Value()`` and ``MilliValue()`` round up, as the kubelet's callers rely on.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["milli_value", "parse_quantity", "value"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
_SYNTAX = re.compile(
    r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE])([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)"
)
# The upstream error text (resource.ErrFormatWrong).
FORMAT_ERROR = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_MAX_LEN = 64  # far beyond any real quantity; bounds the work on hostile input


def parse_quantity(text: str, field: str = "") -> Fraction:
    """The exact value of ``text``; ``ValueError`` (upstream's text) when malformed."""
    if len(text) > _MAX_LEN:
        raise ValueError(FORMAT_ERROR)
    match = _SYNTAX.fullmatch(text)
    if match is None:
        raise ValueError(FORMAT_ERROR)
    sign, number, exp_mark, exponent, suffix = match.groups()
    amount = Fraction(number)
    if exp_mark:
        power = int(exponent)
        if abs(power) > 30:  # upstream caps scale well below this
            raise ValueError(FORMAT_ERROR)
        amount *= Fraction(10) ** power
    elif suffix in _BINARY:
        amount *= _BINARY[suffix]
    else:
        amount *= _DECIMAL[suffix or ""]
    # Upstream keeps at most nanosecond precision, rounding up.
    amount = Fraction(math.ceil(amount * 10**9), 10**9)
    return -amount if sign == "-" else amount


def value(amount: Fraction) -> int:
    """``Quantity.Value()``: rounded up to an integer."""
    return math.ceil(amount)


def milli_value(amount: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(amount * 1000)
