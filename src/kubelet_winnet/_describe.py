"""Bounded, exception-free descriptions of arbitrary values for error messages.

Error messages never call ``repr()``/``str()`` on a caller's object: either can raise, loop
or return megabytes (a 5,000-digit int's ``repr`` raises ``ValueError`` on CPython 3.11+).
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Mapping

__all__ = ["describe", "describe_path", "json_kind", "json_string", "quoted", "type_name",
           "yaml_kind"]

# ``json.dumps`` of a string (ensure_ascii), without the encoder's Python layers: the C
# function behind it. The hand-written JSON records and the JSON line finder use it.
json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii

_SHOWN = 40  # characters of a value shown in a message
_JSON_KINDS = {
    str: "string", bool: "boolean", int: "number", float: "number", dict: "object",
    list: "array", tuple: "array", type(None): "null",
}


def type_name(value: object) -> str:
    """``type(value).__name__``, bounded; a metaclass cannot make it raise."""
    try:
        name = type(value).__name__
    except Exception:
        return "object"
    return name[:_SHOWN] if type(name) is str else "object"


def quoted(text: str) -> str:
    """``text`` as a JSON string, cut to a bounded length first."""
    if len(text) > _SHOWN:
        return json.dumps(text[: _SHOWN - 3]) + "..."
    return json.dumps(text)


def describe(value: object) -> str:
    """The value's JSON kind (or Python type) plus, for scalars, a bounded rendering."""
    kind = type(value)
    label = _JSON_KINDS.get(kind)
    if kind is str:
        return f"string {quoted(value)}"  # type: ignore[arg-type]
    if kind is bool:
        return f"boolean {'true' if value else 'false'}"
    if kind is int:
        number: int = value  # type: ignore[assignment]
        if number.bit_length() > 120:
            # str() of a huge int is quadratic and raises past 4,300 digits.
            return f"number with about {int(number.bit_length() * 0.30103) + 1} digits"
        return f"number {number}"
    if kind is float:
        return f"number {float.__repr__(value)}"
    if kind is bytes:
        data: bytes = value  # type: ignore[assignment]
        shown = bytes.__repr__(data[:_SHOWN])
        return f"bytes {shown}{'...' if len(data) > _SHOWN else ''}"
    if label is not None:
        return label
    try:
        if isinstance(value, Mapping):
            return "object"
    except Exception:  # an __instancecheck__ or __class__ that raises
        pass
    return type_name(value)


def json_kind(value: object) -> str:
    """What a value is, in JSON's words with an article (``an object``, ``an array``, ``a
    string``, ``a boolean``, ``a number``, ``null``); any other value by its type's name."""
    label = _JSON_KINDS.get(type(value))
    if label is None:
        described = describe(value)  # a Mapping of the caller's is "object" there
        if described != "object":
            return type_name(value)
        label = described
    return label if label == "null" else ("an " if label[0] in "aeiou" else "a ") + label


_YAML_WORDS = {"an object": "a mapping", "an array": "a list"}


def yaml_kind(value: object) -> str:
    """:func:`json_kind` in YAML's words, for a YAML file's reader: ``a mapping``, ``a
    list``."""
    kind = json_kind(value)
    return _YAML_WORDS.get(kind, kind)


def describe_path(path: tuple[str | int, ...]) -> str:
    """``("spec", "containers", 1, "ports")`` -> ``spec.containers[1].ports``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
