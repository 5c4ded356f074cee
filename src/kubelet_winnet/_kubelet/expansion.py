"""``$(VAR)`` expansion as the kubelet does it (third_party/forked/golang/expansion/expand.go),
for command, args, environment values and ``subPathExpr``."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["ExpansionTooLarge", "expand", "utf8_len"]


# expand.go's syntax: "$$" is an escaped "$", "$(NAME)" a reference (NAME up to the first
# ")"); any other "$" stays, with the character after it.
_REFERENCE = re.compile(r"\$(?:\$|\(([^)]*)\))")


class ExpansionTooLarge(Exception):
    """Internal: an expansion passed its bound (the caller names the field)."""


def utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def expand(text: str, *sources: Mapping[str, str], limit: int | None = None) -> str:
    """Replace ``$(NAME)`` by the first source defining it (left as is otherwise);
    ``$$`` is a literal ``$``; an unterminated ``$(`` is kept. With ``limit``, raises
    ``ExpansionTooLarge`` as soon as the result would pass ``limit`` UTF-8 bytes."""
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
