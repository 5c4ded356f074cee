"""``$(VAR)`` expansion as the kubelet does it (third_party/forked/golang/expansion/expand.go),
for command, args, environment values and ``subPathExpr``.

The syntax: ``$$`` is a literal ``$``; ``$(NAME)`` (NAME up to the first ``)``) is the
first source's value of NAME, or stays as written when no source has it; an unterminated
``$(`` stays; any other ``$`` stays with the character after it. "The character after it"
is version-dependent (``expansion_rule(version)``): kubelets before kubernetes#136325 read
one byte there and write it back as Go's ``string(byte)`` (:func:`golang.string_of_byte`),
so ``$é`` (bytes 24 C3 A9) becomes 24 C3 83 A9: ``$``, ``Ã`` and a stray byte, not UTF-8.
Such a value raises :class:`~kubelet_winnet.errors.InvalidUtf8Error` through
:func:`not_utf8_error`, which says what that kubelet does with it.

A variable's value may itself be bytes that are not UTF-8: a Secret's (``secretKeyRef``,
``envFrom``), held as ``bytes`` (a Go string holds any bytes; ``str`` here means UTF-8).
``Expand`` appends a referenced value to its buffer as it is, so such bytes reach the
result unchanged; a result that is not UTF-8 comes back as ``bytes`` (one that is, two
halves of a character joined, as ``str``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubelet_winnet._describe import quoted as quoted_name
from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.request_facts import (
    ENV_VALUES_ARE_BYTES,
    RUNE_WISE_EXPANSION,
    ExpansionRule,
)
from kubelet_winnet.errors import InvalidUtf8Error

__all__ = [
    "ExpansionNotUtf8",
    "ExpansionTooLarge",
    "GoString",
    "env_bytes_error",
    "expand",
    "go_string",
    "not_utf8_error",
    "utf8_len",
]

#: A Go string's value here: ``str`` when it is UTF-8, else its ``bytes``.
GoString = str | bytes


# Where the byte-wise rule can differ from the rune-wise one: a "$" before a character
# that is more than one byte.
_DOLLAR_MULTIBYTE = re.compile(r"\$[^\x00-\x7f]")


class ExpansionTooLarge(Exception):
    """Internal: an expansion passed its bound (the caller names the field)."""


class ExpansionNotUtf8(Exception):
    """Internal: the byte-wise expansion is not UTF-8; ``value`` holds its bytes (the
    caller names the field: :func:`not_utf8_error`)."""

    def __init__(self, value: bytes) -> None:
        super().__init__()
        self.value = value


def utf8_len(value: GoString) -> int:
    """Go's ``len()``: bytes, which the bounds count."""
    return len(value) if type(value) is bytes else golang.go_len(value)  # type: ignore[arg-type]


def go_string(data: bytes) -> GoString:
    """Bytes as a :data:`GoString`: ``str`` when they are UTF-8 (Go's ``utf8.Valid``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


class _Bounded:
    """The expansion's output, within the library's own bound (``limit`` bytes; the
    kubelet has none): :class:`ExpansionTooLarge` as soon as a write passes it."""

    __slots__ = ("data", "limit")

    def __init__(self, limit: int | None) -> None:
        self.data = bytearray()
        self.limit = limit

    def write(self, piece: bytes) -> None:
        self.data += piece
        if self.limit is not None and len(self.data) > self.limit:
            raise ExpansionTooLarge


def expand(
    text: str, *sources: Mapping[str, GoString], limit: int | None = None, runes: bool = True
) -> GoString:
    """expand.go's ``Expand`` with ``MappingFuncFor(sources...)``: ``$(NAME)`` becomes the
    first source's value of NAME (or stays as written when none has it), ``$$`` becomes
    ``$``, an unterminated ``$(`` stays, and any other ``$`` stays with the character
    after it. ``runes=False`` is the kubelet before kubernetes#136325
    (``expansion_rule(version)``), which reads that character as one byte: a result that
    is not UTF-8 raises :class:`ExpansionNotUtf8` with its bytes. A referenced value in
    ``bytes`` is written as it is; a result that is then not UTF-8 is returned as
    ``bytes``. With ``limit``, raises :class:`ExpansionTooLarge` as soon as the result
    passes ``limit`` UTF-8 bytes."""
    out = _Bounded(limit)
    if "$" not in text:  # nothing to expand (most values)
        if limit is not None and utf8_len(text) > limit:
            raise ExpansionTooLarge
        return text
    if runes or not _DOLLAR_MULTIBYTE.search(text):
        # The text's own bytes, a lone surrogate kept for the caller to report. Without a
        # "$" before a character of more than one byte, both rules give the same result.
        runes = True
        data = text.encode("utf-8", "surrogatepass")
        value_of = _utf8_surrogatepass
    else:  # the Go string's bytes (a lone surrogate is U+FFFD there)
        data = golang.go_bytes(text)
        value_of = golang.go_bytes
    binary = False  # a value in bytes was written
    last_close = data.rfind(b")")  # no "$(" after it can be terminated
    checkpoint = 0
    cursor = data.find(b"$")
    while 0 <= cursor < len(data) - 1:  # an operator with a byte after it
        out.write(data[checkpoint:cursor])
        following = data[cursor + 1]  # tryReadVariableName(input[cursor+1:])
        if following == 0x24:  # "$$": an escaped operator
            out.write(b"$")
            advance = 1
        elif following == 0x28:  # "$(": a reference, if a ")" closes it
            close = data.find(b")", cursor + 2) if cursor + 2 <= last_close else -1
            if close < 0:  # incomplete: "$(" stays
                out.write(b"$(")
                advance = 1
            else:
                name = data[cursor + 2 : close].decode("utf-8", "surrogatepass")
                for source in sources:
                    if name in source:
                        found = source[name]
                        if type(found) is bytes:  # a Secret's bytes, appended as they are
                            binary = True
                            out.write(found)
                        else:
                            out.write(value_of(found))  # type: ignore[arg-type]
                        break
                else:  # syntaxWrap(name): the reference as written
                    out.write(data[cursor : close + 1])
                advance = close - cursor
        elif runes:  # the operator and the first rune (kubernetes#136325)
            _, size = golang.decode_rune(data, cursor + 1)
            out.write(data[cursor : cursor + 1 + size])
            advance = size
        else:  # before it: the operator and string(input[0]), one byte as a code point
            out.write(b"$" + golang.string_of_byte(following).encode("utf-8"))
            advance = 1
        checkpoint = cursor + advance + 1
        cursor = data.find(b"$", checkpoint)
    out.write(data[checkpoint:])
    result = bytes(out.data)
    if runes:
        if binary:  # (a lone surrogate of the caller's text is then bytes ED xx xx)
            return go_string(result)
        return result.decode("utf-8", "surrogatepass")
    if not golang.valid_utf8(result):
        raise ExpansionNotUtf8(result)
    return result.decode("utf-8")


def _utf8_surrogatepass(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


_MARSHAL_ERROR = "grpc: error while marshaling: string field contains invalid UTF-8"
_FIXED_IN = ", ".join(f"1.{minor}.{patch}" for minor, patch in RUNE_WISE_EXPANSION.backports)
_FIXED_IN += f" and 1.{RUNE_WISE_EXPANSION.since}.0"
_SHOWN_BYTES = 32  # the hex dump of the kubelet's value is cut after this many bytes


def _count(value: bytes) -> str:
    return "1 byte" if len(value) == 1 else f"{len(value)} bytes"


def not_utf8_error(
    field: str, what: str, value: bytes, rule: ExpansionRule, *, secret: bool = False
) -> InvalidUtf8Error:
    """The error for ``what`` (``variable "NAME"``, ``command[0]``, ``subPathExpr``) at
    ``field``, which kubelet ``rule.version`` expands to ``value``, bytes that are not
    UTF-8, into a string field. ``secret``: because a variable it references holds such
    bytes (a Secret's), not because of the byte-wise rule; the value is then not shown."""
    if secret:
        head = (
            f"kubelet {rule.version} expands {what} to a value that is not UTF-8 "
            f"({_count(value)}, not shown) because a variable it references holds a "
            f"Secret's bytes, and {what} is a string in every release's cri-api"
        )
    else:
        shown = value[:_SHOWN_BYTES].hex(" ") + (" ..." if len(value) > _SHOWN_BYTES else "")
        quoted = golang.quote(value if len(value) <= 200 else value[:200])
        head = (
            f"kubelet {rule.version} expands {what} to {quoted} (bytes {shown}), which is "
            f'not UTF-8: it reads the character after a lone "$" as one byte (fixed in '
            f"{_FIXED_IN} by kubernetes#136325)"
        )
    if rule.marshal_checks_utf8:
        tail = (
            f'; its CreateContainer call then fails with "{_MARSHAL_ERROR}", and the '
            "container waits in CreateContainerError"
        )
    else:
        tail = (
            "; it sends those bytes unchecked, and what the container gets is up to the "
            "runtime, but a runtime.v1 string cannot hold them, so kubelet-winnet builds "
            "no request"
        )
    return InvalidUtf8Error(field, head + tail, value)


_BYTES_IN = ", ".join(f"1.{minor}.{patch}" for minor, patch in ENV_VALUES_ARE_BYTES.backports)
_BYTES_IN += f" and 1.{ENV_VALUES_ARE_BYTES.since}.0"


def env_bytes_error(field: str, name: str, value: bytes, rule: ExpansionRule) -> InvalidUtf8Error:
    """The error for environment variable ``name`` at ``field``, whose value is ``value``,
    bytes that are not UTF-8 (a Secret's, not shown), on a kubelet whose environment values
    are strings it checks (1.34.0 up to the bytes fix of its release branch)."""
    return InvalidUtf8Error(
        field,
        f"kubelet {rule.version} cannot send variable {quoted_name(name)}: its value, "
        f"{_count(value)} from a Secret (not shown), is not UTF-8, and this release's "
        "cri-api holds an environment value as a string, so its CreateContainer call "
        f'fails with "{_MARSHAL_ERROR}" and the container waits in CreateContainerError '
        f"(kubernetes#139132; values are bytes again from {_BYTES_IN}, kubernetes#139168)",
        value,
    )
