"""``$(VAR)`` expansion as the kubelet does it (third_party/forked/golang/expansion/expand.go),
for command, args, environment values and ``subPathExpr``."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ExpansionTooLarge", "expand", "utf8_len"]


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
    length = len(text)
    cursor = text.find("$")
    # From one "$" to the next (a "$" that ends the text is kept as is).
    while cursor != -1 and cursor + 1 < length:
        piece = text[checkpoint:cursor]
        out.append(piece)
        following = text[cursor + 1]
        if following == "$":
            out.append("$")
            advance = 1
        elif following == "(":
            close = text.find(")", cursor + 2)
            if close == -1:
                out.append("$(")
                advance = 1
            else:
                name = text[cursor + 2 : close]
                for source in sources:
                    if name in source:
                        out.append(source[name])
                        break
                else:
                    out.append(f"$({name})")
                advance = close - cursor
        else:
            out.append("$" + following)
            advance = 1
        if limit is not None:
            size += utf8_len(piece) + utf8_len(out[-1])
            if size > limit:
                raise ExpansionTooLarge
        checkpoint = cursor + advance + 1
        cursor = text.find("$", checkpoint)
    out.append(text[checkpoint:])
    if limit is not None and size + utf8_len(out[-1]) > limit:
        raise ExpansionTooLarge
    return "".join(out)
