"""Bytes to text within the limits: the encoding chosen from the byte order mark (UTF-8,
or UTF-16 with a BOM, as kubectl's reader accepts), every file bounded by
``--max-bytes``, ``--max-depth`` and ``--max-alias-nodes`` (:class:`Limits`)."""

from __future__ import annotations

import codecs
import sys
from dataclasses import dataclass
from typing import IO, Any

from kubelet_winnet.sources.manifests.documents import Refused

__all__ = [
    "CHUNK",
    "DEFAULT_LIMITS",
    "MAX_INT_DIGITS",
    "TOO_MANY_DIGITS",
    "Limits",
    "Text",
    "past_python_digit_limit",
    "python_digit_limit",
    "too_deep",
    "too_deep_reason",
]

# Python refuses to convert longer decimal strings (sys.int_info.default_max_str_digits);
# such a literal is bad input rather than a traceback.
MAX_INT_DIGITS = 4300
CHUNK = 1 << 16  # characters asked of the stream at a time
# This process's own limit on the decimal digits int() converts (0: none; Python before
# 3.10.7 has none). A process may lower it below MAX_INT_DIGITS.
python_digit_limit = getattr(sys, "get_int_max_str_digits", lambda: 0)


TOO_MANY_DIGITS = f"integer with more than {MAX_INT_DIGITS} digits"


def past_python_digit_limit(limit: int) -> str:
    """Why a decimal literal within MAX_INT_DIGITS is refused all the same."""
    return f"integer with more than {limit} digits, the limit this Python process sets"


@dataclass(frozen=True)
class Limits:
    """Per-file bounds; each has a command-line flag to raise it."""

    max_bytes: int = 256 * 1024 * 1024  # --max-bytes
    max_depth: int = 100  # --max-depth: nesting of mappings and sequences
    max_alias_nodes: int = 10_000  # --max-alias-nodes: nodes reached through YAML aliases


DEFAULT_LIMITS = Limits()

class Text:
    """Text from a binary stream: the encoding chosen from the byte order mark, bytes
    counted against the limit, decoding errors reported.

    A refusal raised by :meth:`read` (too many bytes, a byte that does not decode) lies
    where the text handed over so far ends; its ``line`` is left 0 for the caller, which
    holds that text, to set (:func:`.lines.line_after`). The readers count lines anyway, and
    counting them here too cost a List's translation 1-2%."""

    def __init__(self, raw: IO[bytes], max_bytes: int) -> None:
        self._raw = raw
        self._max = max_bytes
        self._read = 0
        self._eof = False
        head = self._take(4)
        encoding = "utf-8"
        skip = 0
        if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
            raise Refused("UTF-32 is not supported (use UTF-8 or UTF-16 with a BOM)", 1,
                          fatal=True)
        if head.startswith(codecs.BOM_UTF8):
            skip = 3
        elif head.startswith(codecs.BOM_UTF16_LE):
            encoding, skip = "utf-16-le", 2
        elif head.startswith(codecs.BOM_UTF16_BE):
            encoding, skip = "utf-16-be", 2
        elif len(head) >= 2 and (head[0] == 0) != (head[1] == 0):
            raise Refused("looks like UTF-16 without a byte order mark; not UTF-8", 1,
                          fatal=True)
        self._decoder = codecs.getincrementaldecoder(encoding)("strict")
        self._pending = head[skip:]
        self._failed: Refused | None = None  # raised by the read after the good text

    def _take(self, size: int) -> bytes:
        if self._read >= self._max:  # the bytes up to the limit were handed over
            if not self._raw.read(1):
                self._eof = True
                return b""
            unit = "byte" if self._max == 1 else "bytes"
            raise Refused(
                f"larger than {self._max} {unit} (raise the limit with --max-bytes)", 0,
                fatal=True,
            )
        data = self._raw.read(min(size, self._max - self._read))
        if not data:
            self._eof = True
            return b""
        self._read += len(data)
        return data

    def read(self, size: int = CHUNK) -> str:
        """Up to about ``size`` characters; ``""`` at the end."""
        if self._failed is not None:
            raise self._failed
        while True:
            data = self._pending + (b"" if self._eof else self._take(max(size, 4)))
            self._pending = b""
            try:
                text = self._decoder.decode(data, final=self._eof)
            except UnicodeDecodeError as exc:  # the bytes before the bad one decode fine
                good = exc.object[: exc.start].decode(exc.encoding, "replace")
                name = "UTF-8" if exc.encoding.startswith("utf-8") else "UTF-16"
                bad = exc.object[exc.start : exc.start + 1].hex()
                failed = Refused(f"not valid {name} (byte 0x{bad})", 0, fatal=True)
                if not good:
                    raise failed from None
                # Hand over the good text first: the documents it completes are read and
                # reported; the error comes with the document that holds the bad byte.
                self._failed = failed
                return good
            if text or self._eof:
                return text


def too_deep_reason(limits: Limits) -> str:
    return f"nested deeper than {limits.max_depth} levels (raise the limit with --max-depth)"


def too_deep(value: Any, limit: int, brackets: int | None) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (``brackets``: how many its JSON
    text has, which bounds the depth, or None)."""
    if brackets is not None and brackets <= limit:
        return False  # cannot nest deeper than it has brackets
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack += [(c, depth + 1) for c in children if isinstance(c, (dict, list))]
    return False
