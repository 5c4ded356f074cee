"""``$(VAR)`` expansion as the kubelet does it (third_party/forked/golang/expansion/expand.go),
for command, args, environment values and ``subPathExpr``.

The syntax: ``$$`` is a literal ``$``; ``$(NAME)`` (NAME up to the first ``)``) is the
first source's value of NAME, or stays as written when no source has it; an unterminated
``$(`` stays; any other ``$`` stays with the character after it. "The character after it"
is version-dependent (``profile.expansion_rule``): kubelets before kubernetes#136325 read
one byte there and write it back as Go's ``string(byte)`` (:func:`golang.string_of_byte`),
so ``$é`` (bytes 24 C3 A9) becomes 24 C3 83 A9: ``$``, ``Ã`` and a stray byte, not UTF-8.
Such a value raises :class:`~kubelet_winnet.errors.InvalidUtf8Error` through
:func:`not_utf8_error`, which says what that kubelet does with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.profile import (
    EXPANSION_FIXED_IN,
    EXPANSION_RUNE_WISE_MINOR,
    ExpansionRule,
)
from kubelet_winnet.errors import InvalidUtf8Error

__all__ = [
    "ExpansionNotUtf8",
    "ExpansionTooLarge",
    "expand",
    "not_utf8_error",
    "utf8_len",
]


# expand.go's syntax: "$$" is an escaped "$", "$(NAME)" a reference (NAME up to the first
# ")"); any other "$" stays, with the character after it.
_REFERENCE = re.compile(r"\$(?:\$|\(([^)]*)\))")
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


utf8_len = golang.go_len  # Go's len(): bytes, which the bounds count


def expand(
    text: str, *sources: Mapping[str, str], limit: int | None = None, runes: bool = True
) -> str:
    """Replace ``$(NAME)`` by the first source defining it (left as is otherwise);
    ``$$`` is a literal ``$``; an unterminated ``$(`` is kept. With ``limit``, raises
    ``ExpansionTooLarge`` as soon as the result would pass ``limit`` UTF-8 bytes.

    ``runes=False`` is the kubelet before kubernetes#136325 (``profile.expansion_rule``):
    the character after a lone ``$`` is read as one byte; a result that is not UTF-8
    raises ``ExpansionNotUtf8`` with its bytes."""
    if not runes and _DOLLAR_MULTIBYTE.search(text):
        return _expand_bytes(text, sources, limit)
    if "$" not in text:
        if limit is not None and utf8_len(text) > limit:
            raise ExpansionTooLarge
        return text
    out: list[str] = []
    size = 0  # bytes in out, counted only with a limit
    checkpoint = 0
    # Only "$$" and a terminated "$(...)" change the text; the scan over the rest (a "$"
    # before any other character, an unterminated "$(") is the regular expression's. No
    # "$(" after the last ")" is terminated: the search stops there, so that it stays
    # linear however many unterminated ones there are.
    end = text.rfind(")") + 1
    for match in _REFERENCE.finditer(text, 0, end):
        piece = text[checkpoint : match.start()]
        name = match.group(1)
        if name is None:
            value = "$"
        else:
            for source in sources:
                if name in source:
                    value = source[name]
                    break
            else:
                value = match.group()
        out.append(piece)
        out.append(value)
        if limit is not None:
            size += utf8_len(piece) + utf8_len(value)
            if size > limit:
                raise ExpansionTooLarge
        checkpoint = match.end()
    rest = text[checkpoint:]
    if "$$" in rest:  # after the last ")", only "$$" changes, as the scan pairs them
        rest = text[checkpoint:end] + text[end:].replace("$$", "$")
    out.append(rest)
    if limit is not None and size + utf8_len(out[-1]) > limit:
        raise ExpansionTooLarge
    return "".join(out)


def _expand_bytes(
    text: str, sources: tuple[Mapping[str, str], ...], limit: int | None
) -> str:
    """expand.go before kubernetes#136325, over the Go string's bytes: Expand's cursor loop
    and tryReadVariableName, whose default case returns ``"$" + string(input[0])``."""
    data = golang.go_bytes(text)
    out = bytearray()
    checkpoint = 0
    cursor = 0
    n = len(data)
    while cursor < n:
        if data[cursor] == 0x24 and cursor + 1 < n:  # an operator with a byte after it
            out += data[checkpoint:cursor]
            following = data[cursor + 1]
            if following == 0x24:  # "$$": one "$"
                out += b"$"
                advance = 1
            elif following == 0x28:  # "$(": a reference if a ")" closes it
                close = data.find(b")", cursor + 2)
                if close < 0:
                    out += b"$("
                    advance = 1
                else:
                    name = data[cursor + 2 : close].decode("utf-8", "surrogatepass")
                    for source in sources:
                        if name in source:
                            out += golang.go_bytes(source[name])
                            break
                    else:
                        out += data[cursor : close + 1]
                    advance = close - cursor
            else:  # "$" and string(byte): one byte read as the code point of that value
                out += b"$" + golang.string_of_byte(following).encode("utf-8")
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
            if limit is not None and len(out) > limit:
                raise ExpansionTooLarge
        cursor += 1
    out += data[checkpoint:]
    if limit is not None and len(out) > limit:
        raise ExpansionTooLarge
    result = bytes(out)
    if not golang.valid_utf8(result):
        raise ExpansionNotUtf8(result)
    return result.decode("utf-8")


_MARSHAL_ERROR = "grpc: error while marshaling: string field contains invalid UTF-8"
_FIXED_IN = ", ".join(f"1.{minor}.{patch}" for minor, patch in sorted(EXPANSION_FIXED_IN.items()))
_FIXED_IN += f" and 1.{EXPANSION_RUNE_WISE_MINOR}.0"
_SHOWN_BYTES = 32  # the hex dump of the kubelet's value is cut after this many bytes


def not_utf8_error(
    field: str, what: str, value: bytes, rule: ExpansionRule
) -> InvalidUtf8Error:
    """The error for ``what`` (``variable "NAME"``, ``command[0]``, ``subPathExpr``) at
    ``field``, which kubelet ``rule.version`` expands to ``value``, bytes that are not
    UTF-8."""
    shown = value[:_SHOWN_BYTES].hex(" ") + (" ..." if len(value) > _SHOWN_BYTES else "")
    quoted = golang.quote(value if len(value) <= 200 else value[:200])
    head = (
        f"kubelet {rule.version} expands {what} to {quoted} (bytes {shown}), which is not "
        f'UTF-8: it reads the character after a lone "$" as one byte (fixed in {_FIXED_IN} '
        "by kubernetes#136325)"
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
