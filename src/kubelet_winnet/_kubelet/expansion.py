"""``$(VAR)`` expansion as the kubelet does it (third_party/forked/golang/expansion/expand.go),
for command, args, environment values and ``subPathExpr``."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["expand"]



def expand(text: str, *sources: Mapping[str, str]) -> str:
    """Replace ``$(NAME)`` by the first source defining it (left as is otherwise);
    ``$$`` is a literal ``$``; an unterminated ``$(`` is kept."""
    if "$" not in text:
        return text
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    length = len(text)
    while cursor < length:
        if text[cursor] == "$" and cursor + 1 < length:
            out.append(text[checkpoint:cursor])
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
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return "".join(out)
