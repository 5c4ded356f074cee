"""Go's semantics that the kubelet's output depends on, in one place.

The kubelet is Go: its strings are bytes (usually, not always, UTF-8), its integers wrap,
its ``%q`` escapes by Go's own idea of a printable character, and its paths are joined by
``path/filepath`` for Windows. Every function here names the Go standard-library function
it mirrors. ``tests/go_oracle/main.go`` asks Go's standard library the same questions and
``tests/kubelet/test_golang.py`` runs generated strings, bytes and integers through both;
the Windows path rules (which a Linux build of Go cannot answer) are checked against the
rows of Go's own ``path/filepath`` tests instead.

A Python ``str`` stands for the Go string of its UTF-8 bytes (:func:`go_bytes`). A lone
surrogate (``json.loads`` lets ``"\\ud800"`` through; no UTF-8 can hold it) stands for
U+FFFD, which is what Go's ``encoding/json`` makes of that escape ("invalid UTF-8 or
invalid UTF-16 surrogate pairs are not treated as an error. Instead, they are replaced by
the Unicode replacement character U+FFFD"), so the kubelet, which reads the pod through
Go's JSON decoder, holds U+FFFD there.

No I/O; no state.
"""

from __future__ import annotations

import codecs
import math
import re
from bisect import bisect_right
from collections.abc import Mapping

from kubelet_winnet._kubelet.golang_print import PRINT_ENDS, PRINT_STARTS

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "RUNE_ERROR",
    "clean_windows",
    "decode_rune",
    "div_int64",
    "format_int64",
    "format_map",
    "go_bytes",
    "go_len",
    "is_print",
    "join_windows",
    "json_fold",
    "json_text",
    "mul_int64",
    "quote",
    "rem_int64",
    "string_of_byte",
    "valid_utf8",
    "wrap_int64",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
RUNE_ERROR = 0xFFFD  # utf8.RuneError

_SURROGATE = re.compile("[\ud800-\udfff]")


# --- encoding/json ----------------------------------------------------------------------


def json_fold(key: str) -> str:
    """``key`` as encoding/json folds an object key to match it with a struct field's name
    without regard to case (fold.go ``foldName``: each rune ``ToUpper(ToLower(r))``), so
    ``"ſ"`` matches an ``s`` and the Kelvin sign a ``k``. Runes whose Python case change
    is more than one character are kept as they are (Go's mappings are rune to rune)."""
    folded = []
    for char in key:
        lower = char.lower()
        lower = lower if len(lower) == 1 else char
        upper = lower.upper()
        folded.append(upper if len(upper) == 1 else lower)
    return "".join(folded)


# --- strings are bytes ------------------------------------------------------------------


def _without_surrogates(text: str) -> str:
    # As Go's JSON decoder reads "\ud83d\ude00" (one rune) and "\ud800" (U+FFFD): a high
    # and a low surrogate side by side are the character they encode, any other U+FFFD.
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def go_bytes(text: str) -> bytes:
    """The bytes of the Go string ``text`` stands for: UTF-8, a lone surrogate as U+FFFD
    (a high and a low one side by side as the character they encode)."""
    if text.isascii():
        return text.encode("ascii")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _without_surrogates(text).encode("utf-8")


def go_len(text: str) -> int:
    """Go's ``len(s)``: the bytes of the string, not its characters."""
    return len(text) if text.isascii() else len(go_bytes(text))


def valid_utf8(data: bytes) -> bool:
    """``utf8.Valid``: ``data`` is well-formed UTF-8 (no surrogates, nothing past
    U+10FFFF, no overlong forms); Python's strict decoder has the same definition."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _sequence_length(lead: int) -> int:
    # UTF-8 lead bytes: 0xC2-0xDF two bytes, 0xE0-0xEF three, 0xF0-0xF4 four.
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def decode_rune(data: bytes, offset: int = 0) -> tuple[int, int]:
    """``utf8.DecodeRune(data[offset:])``: the first rune and its width in bytes;
    ``(RuneError, 1)`` for a byte that does not start a well-formed sequence (Go never
    consumes more than one bad byte at a time), ``(RuneError, 0)`` at the end."""
    if offset >= len(data):
        return RUNE_ERROR, 0
    lead = data[offset]
    if lead < 0x80:
        return lead, 1
    size = _sequence_length(lead)
    if size:
        try:
            char = data[offset : offset + size].decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return ord(char), size
    return RUNE_ERROR, 1


def _one_per_byte(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd", exc.start + 1


codecs.register_error("kubelet-winnet-go-rune-error", _one_per_byte)


def json_text(data: bytes) -> str:
    """What Go's ``encoding/json`` writes for a Go string holding ``data``
    (``encodeState.string``): each byte that does not start a valid UTF-8 sequence is
    U+FFFD, one per byte, as ``utf8.DecodeRuneInString`` steps over it."""
    return data.decode("utf-8", "kubelet-winnet-go-rune-error")


def string_of_byte(byte: int) -> str:
    """Go's ``string(b)`` for a ``byte`` ``b``: an integer converted to a string is the
    UTF-8 of that code point, so byte 0xC3 becomes "Ã" (bytes C3 83), not the byte C3.
    (This is what made the old ``$(VAR)`` expansion mangle ``$é``.)"""
    if type(byte) is not int or not 0 <= byte <= 0xFF:
        raise ValueError(f"a byte is 0 to 255, not {byte!r}")
    return chr(byte)


# --- %q ---------------------------------------------------------------------------------


def is_print(rune: int) -> bool:
    """``strconv.IsPrint`` (= ``unicode.IsPrint``): letters, marks, numbers, punctuation,
    symbols and the ASCII space; not U+00A0 or any other space, not U+00AD or any other
    format character, not U+2028. The table is Go's, of the Unicode version in
    ``golang_print.UNICODE_VERSION``."""
    if rune < 0x80:
        return 0x20 <= rune < 0x7F
    index = bisect_right(PRINT_STARTS, rune) - 1
    return index >= 0 and rune <= PRINT_ENDS[index]


# Printable ASCII other than the quote and the backslash: quoted as it is.
_PLAIN = re.compile(r'[ !#-\[\]-~]*')
_SHORT = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
          0x0B: "\\v", 0x22: '\\"', 0x5C: "\\\\"}


# What quote may have to escape: anything but printable ASCII other than " and \.
_NOT_PLAIN = re.compile(r'[^ !#-\[\]-~]')


def _escape(match: re.Match[str]) -> str:
    # strconv.appendEscapedRune, with quote '"', not ASCII-only.
    char = match.group()
    rune = ord(char)
    short = _SHORT.get(rune)
    if short is not None:
        return short
    if 0xD800 <= rune <= 0xDFFF:  # a byte that is not UTF-8 (surrogateescape below)
        return f"\\x{rune & 0xFF:02x}"
    if is_print(rune):
        return char
    if rune < 0x20 or rune == 0x7F:
        return f"\\x{rune:02x}"
    if rune < 0x10000:
        return f"\\u{rune:04x}"
    return f"\\U{rune:08x}"


def quote(value: str | bytes) -> str:
    """``strconv.Quote`` / ``fmt.Sprintf("%q", s)`` of a Go string: double quotes; ``\\"``
    and ``\\\\``; ``\\a \\b \\f \\n \\r \\t \\v``; other control characters and DEL as
    ``\\x..``; other unprintable runes (:func:`is_print`) as ``\\u....`` or
    ``\\U........``; and, for ``bytes``, every byte that is not part of well-formed UTF-8
    as ``\\x..`` ("If s contains invalid UTF-8, each invalid byte is escaped", as
    ``strconv.Quote``'s loop does it). A ``str`` is quoted as the Go string of
    :func:`go_bytes`."""
    if isinstance(value, str):
        if _PLAIN.fullmatch(value):
            return f'"{value}"'
        text = _without_surrogates(value)
    else:
        # Each byte that is not UTF-8 becomes one surrogate U+DC80..U+DCFF; well-formed
        # UTF-8 never decodes to a surrogate, so _escape can tell them apart.
        text = bytes(value).decode("utf-8", "surrogateescape")
    return '"' + _NOT_PLAIN.sub(_escape, text) + '"'


def format_map(items: Mapping[str, str]) -> str:
    """``fieldpath.FormatMap`` (pkg/fieldpath/fieldpath.go), the value of the downward
    API's ``metadata.annotations`` and ``metadata.labels``: one ``key="value"`` line per
    key (``%v=%q``), keys sorted as Go sorts strings (by bytes: for UTF-8 the order of code
    points), joined by newlines; ``""`` for no keys."""
    keys = {_without_surrogates(key): key for key in items}
    return "\n".join(f"{key}={quote(items[keys[key]])}" for key in sorted(keys))


# --- int64 ------------------------------------------------------------------------------


def wrap_int64(number: int) -> int:
    """Two's-complement int64 overflow: the low 64 bits, as Go's ``+``, ``-``, ``*`` and
    ``big.Int.Int64()`` give it ("the result is computed ... modulo 2^64")."""
    number &= (1 << 64) - 1
    return number - (1 << 64) if number > INT64_MAX else number


def ceil_div_float64(a: int, b: int) -> int:
    """``int64(math.Ceil(float64(a) / float64(b)))`` for int64 ``a`` and ``b``: each
    converted to the nearest float64 (ties to even), the quotient rounded once, and the
    conversion back as amd64 does it (CVTTSD2SQ): a NaN, an infinity or a value outside
    the int64 range becomes ``math.MinInt64`` (the spec leaves it implementation-defined;
    Windows kubelets run on amd64)."""
    if b == 0:  # float division: ±Inf or NaN
        return INT64_MIN
    result = math.ceil(float(a) / float(b))
    return result if INT64_MIN <= result <= INT64_MAX else INT64_MIN


def mul_int64(a: int, b: int) -> int:
    """Go's ``a * b`` on int64: wraps."""
    return wrap_int64(a * b)


def div_int64(dividend: int, divisor: int) -> int:
    """Go's ``/`` on int64: truncated toward zero ("integer division truncates toward
    zero"), and ``math.MinInt64 / -1`` is ``math.MinInt64`` (the spec: "the quotient
    q = x / -1 is equal to x ... due to two's-complement integer overflow"). A zero
    divisor raises ``ZeroDivisionError`` where Go panics."""
    quotient = abs(dividend) // abs(divisor)
    return wrap_int64(quotient if (dividend < 0) == (divisor < 0) else -quotient)


def rem_int64(dividend: int, divisor: int) -> int:
    """Go's ``%`` on int64: the sign of the dividend (``x == (x/y)*y + x%y``)."""
    remainder = abs(dividend) % abs(divisor)
    return wrap_int64(-remainder if dividend < 0 else remainder)


def format_int64(number: int) -> str:
    """``strconv.FormatInt(n, 10)``, which is also ``%v`` and ``%d`` of an int64:
    decimal digits, ``-`` for negatives, no ``+``; ``ValueError`` outside int64."""
    if type(number) is not int or not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(f"{number!r} is not an int64")
    return str(number)


# --- path/filepath on Windows -------------------------------------------------------------
# Go's algorithm over bytes (internal/filepathlite on Windows: volumeNameLen, Clean with
# postClean; path/filepath join): separators, dots, colons and drive letters are ASCII,
# and a drive letter is one byte (so "é:" has none: its second byte is not the colon).


def _sep(byte: int) -> bool:
    return byte in b"\\/"


def _has_prefix_fold(path: bytes, prefix: bytes) -> bool:
    # pathHasPrefixFold: case-insensitive, any separator for a separator, and whole
    # elements only.
    if len(path) < len(prefix):
        return False
    for want, got in zip(prefix, path, strict=False):
        if _sep(want):
            if not _sep(got):
                return False
        elif bytes([want]).upper() != bytes([got]).upper():
            return False
    return len(path) == len(prefix) or _sep(path[len(prefix)])


def _unc_length(path: bytes, start: int) -> int:
    # The volume of a UNC path ends at its second separator after the prefix.
    count = 0
    for index in range(start, len(path)):
        if _sep(path[index]):
            count += 1
            if count == 2:
                return index
    return len(path)


def _cut(path: bytes) -> tuple[bytes, bytes, bool]:
    for index, byte in enumerate(path):
        if _sep(byte):
            return path[:index], path[index + 1 :], True
    return path, b"", False


def _valid_volume(path: bytes, length: int) -> int:
    # A volume with a ".." element is no volume (validVolumeNameLen).
    rest = path[:length]
    while rest:
        part, rest, _ = _cut(rest)
        if part == b"..":
            return 0
    return length


def _volume_length(path: bytes) -> int:
    # volumeNameLen on Windows.
    if len(path) >= 2 and path[1:2] == b":":
        return 2
    if not path or not _sep(path[0]):
        return 0
    if any(_has_prefix_fold(path, prefix) for prefix in (b"\\\\.", b"\\\\?", b"\\??")):
        if len(path) == 3:
            return 3
        if _has_prefix_fold(path[4:], b"UNC"):
            return _valid_volume(path, _unc_length(path, len(b"\\\\.\\UNC\\")))
        _, rest, found = _cut(path[4:])
        return _valid_volume(path, len(path) - len(rest) - 1 if found else len(path))
    if len(path) >= 2 and _sep(path[1]):
        return _valid_volume(path, _unc_length(path, 2))
    return 0


class _Output:
    """Clean's output buffer: it stays a prefix of the input until a byte differs, and only
    then becomes a buffer of its own, the input's length, whose bytes past the current end
    are left from earlier writes (postClean reads them: see :func:`_clean_bytes`)."""

    __slots__ = ("buf", "path", "w")

    def __init__(self, path: bytes) -> None:
        self.path = path
        self.buf: bytearray | None = None
        self.w = 0

    def at(self, index: int) -> int:
        return self.path[index] if self.buf is None else self.buf[index]

    def append(self, byte: int) -> None:
        if self.buf is None:
            if self.w < len(self.path) and self.path[self.w] == byte:
                self.w += 1
                return
            self.buf = bytearray(len(self.path))
            self.buf[: self.w] = self.path[: self.w]
        self.buf[self.w] = byte
        self.w += 1

    def text(self) -> bytes:
        return self.path[: self.w] if self.buf is None else bytes(self.buf[: self.w])


def _clean_bytes(path: bytes) -> bytes:
    original = path
    volume_length = _volume_length(path)
    volume, path = path[:volume_length], path[volume_length:]
    if not path:
        if volume_length > 1 and _sep(original[0]) and _sep(original[1]):
            return original.replace(b"/", b"\\")  # a UNC volume alone stays as it is
        return original + b"."
    n = len(path)
    rooted = _sep(path[0])
    out = _Output(path)
    r = dotdot = 0
    if rooted:
        out.append(0x5C)
        r = dotdot = 1
    while r < n:
        if _sep(path[r]) or (path[r] == 0x2E and (r + 1 == n or _sep(path[r + 1]))):  # "", "."
            r += 1
        elif path[r : r + 2] == b".." and (r + 2 == n or _sep(path[r + 2])):
            r += 2
            if out.w > dotdot:  # remove the last element
                out.w -= 1
                while out.w > dotdot and not _sep(out.at(out.w)):
                    out.w -= 1
            elif not rooted:  # nothing to remove: keep the ".."
                if out.w > 0:
                    out.append(0x5C)
                out.append(0x2E)
                out.append(0x2E)
                dotdot = out.w
        else:
            if (rooted and out.w != 1) or (not rooted and out.w != 0):
                out.append(0x5C)
            while r < n and not _sep(path[r]):
                out.append(path[r])
                r += 1
    if out.w == 0:
        out.append(0x2E)
    body = out.text()
    if not volume_length and out.buf is not None:
        # postClean: a relative path whose first element holds a colon gets a ".\" before
        # it (a\..\c: is .\c:, not the drive-relative c:), one that starts with \?? a
        # "\." (not a device path). Go reads its whole buffer, past the end of the output:
        # bytes left there by an earlier write count (Clean of a/b:/../../cd is .\cd).
        buf = bytes(out.buf)
        if b":" in re.split(rb"[\\/]", buf, maxsplit=1)[0]:
            body = b".\\" + body
        elif len(buf) >= 3 and _sep(buf[0]) and buf[1:3] == b"??":
            body = b"\\." + body
    return (volume + body).replace(b"/", b"\\")


# A path Clean would give back unchanged: an optional drive letter, then "\\" alone or
# elements joined by single backslashes, none empty, "." or "..", none holding "/" or ":",
# and no "\\??" device prefix. Clean is idempotent, so such a path is its own answer; the
# common case (a kubelet root joined with plain names) skips the byte loop. Every other
# path goes through _clean_bytes (tests/kubelet/test_golang.py holds the two together).
_ALREADY_CLEAN = re.compile(
    r"(?:[A-Za-z]:)?(?:\\|(?!\\\?\?(?:\\|\Z))\\?"
    r"(?:(?!\.\.?(?:\\|\Z))[^\\/:]+\\)*(?!\.\.?\Z)[^\\/:]+)\Z"
)


def _as_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _as_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def clean_windows(path: str) -> str:
    """``filepath.Clean`` on Windows: the shortest equivalent path. Separators become
    ``\\``; repeated separators, ``.`` elements and ``..`` with what it cancels go; ``..``
    above a root is dropped; the volume (``C:``, ``\\\\host\\share``, ``\\\\?\\C:``, ...)
    is kept as it is; ``""`` is ``"."`` and ``C:`` is ``C:.``; and a relative path never
    becomes absolute or a device path (``a\\..\\c:`` is ``.\\c:``)."""
    # Non-ASCII characters are never separators, dots or colons, so a str and its UTF-8
    # bytes are clean together.
    if _ALREADY_CLEAN.match(path):
        return path
    return _as_text(_clean_bytes(_as_bytes(path)))


def join_windows(*elements: str) -> str:
    """``filepath.Join`` on Windows: the non-empty elements joined by ``\\`` and cleaned;
    no separator after an element ending in a colon (``C:``, ``a`` is ``C:a``); after a
    separator the next element's leading separators are dropped, so that joining never
    makes a UNC path that no element spelled; ``""`` when every element is empty."""
    out = ""
    for element in elements:
        if not out:
            pass
        elif out[-1] in "\\/":
            element = element.lstrip("\\/")
            if len(out) == 1 and element[:2] == "??" and element[2:3] in ("", "\\", "/"):
                out += ".\\"
        elif out[-1] != ":":
            out += "\\"
        out += element
    return clean_windows(out) if out else ""
