"""The one escaping rule for text a person reads: every text output and every diagnostic.

Names, messages and file names come from manifests, API servers, CRI runtimes and the file
system; any of them may hold a line break or a terminal escape sequence (a namespace
``"ns\\r\\nkubelet-winnet: error: forged"`` would forge a line, an OSC sequence retitle the
terminal). Every character that is not printable (``str.isprintable``: control characters,
separators other than the space, format characters such as bidi overrides, surrogates,
private-use and unassigned code points) is written as a Python-style escape, so one value
stays on one line for every reader, ``str.splitlines`` included (which also breaks at
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029). The backslash is
kept as it is: the rule is for reading, and it leaves escaped text unchanged.
"""

from __future__ import annotations

__all__ = ["clip", "cut", "printable"]

_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: str) -> str:
    """``text`` with each non-printable character escaped (``\\n``, ``\\x1b``,
    ``\\u2028``, ``\\udcff`` for a byte of a file name that is not UTF-8)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def cut(text: str, size: int) -> str:
    """``text`` at most ``size`` characters, ``...`` marking a cut: the one clipping rule
    of every message (as it is, for text another rule escapes or quotes next)."""
    return text if len(text) <= size else text[: size - 3] + "..."


def clip(text: str, size: int) -> str:
    """:func:`printable` ``text``, :func:`cut` to ``size`` characters."""
    return cut(printable(text), size)
