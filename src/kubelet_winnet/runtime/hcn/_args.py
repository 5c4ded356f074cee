"""Argument checks for the public ``runtime.hcn`` names (pure).

Every public function, method and constructor here checks its arguments first and
raises :class:`~kubelet_winnet.errors.InvalidArgumentError` (a ``TypeError``) naming the
parameter, so a wrong type never reaches ctypes, ``json`` or a set lookup as a bare
``TypeError``/``AttributeError``. Values of the right type that HCN cannot take (a NUL
in a document, a lone surrogate) stay :class:`~kubelet_winnet.errors.InvalidRequestError`;
a path is checked whole here (no NUL, encodable by ``os.fsencode``), since every file call
would fail on it before HCN sees anything.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

from kubelet_winnet._describe import type_name
from kubelet_winnet.errors import InvalidArgumentError

__all__ = [
    "callable_or_none",
    "flag",
    "guid",
    "handle",
    "instance",
    "integer",
    "json_scalars",
    "path",
    "text",
    "text_or_none",
]


def instance(value: object, cls: type | tuple[type, ...]) -> bool:
    """``isinstance`` that a raising ``__class__`` cannot break."""
    try:
        return isinstance(value, cls)
    except Exception:  # a caller's __class__ or __instancecheck__ can raise anything
        return False


def text(name: str, value: object) -> str:
    if type(value) is not str:  # a subclass's own methods never run on our side
        if not instance(value, str):
            raise InvalidArgumentError(name, "a str", type_name(value))
        value = str.__str__(value)
    return value


def text_or_none(name: str, value: object) -> str | None:
    return None if value is None else text(name, value)


def flag(name: str, value: object) -> bool:
    if value is not True and value is not False:
        raise InvalidArgumentError(name, "a bool", type_name(value))
    return value


def integer(name: str, value: object, low: int, high: int) -> int:
    if type(value) is not int:
        raise InvalidArgumentError(name, "an int", type_name(value))
    if not low <= value <= high:
        raise InvalidArgumentError(name, f"an int from {low} to {high}", "out of range")
    return value


def guid(name: str, value: object) -> uuid.UUID:
    if type(value) is not uuid.UUID and not instance(value, uuid.UUID):
        raise InvalidArgumentError(name, "a uuid.UUID", type_name(value))
    return cast(uuid.UUID, value)


def handle(name: str, value: object) -> int:
    # An HCN_NAMESPACE is a pointer: a positive int that fits 64 bits.
    if type(value) is bool or not instance(value, int) or instance(value, bool):
        raise InvalidArgumentError(name, "a NamespaceHandle (int)", type_name(value))
    value = int.__index__(cast(int, value))  # a plain int; a subclass's methods never run
    if not 0 < value < 1 << 64:
        raise InvalidArgumentError(name, "a handle from open or create", "out of range")
    return value


def path(name: str, value: object) -> str:
    """A filesystem path given as ``str`` or ``os.PathLike[str]``, without NUL, that
    ``os.fsencode`` can encode (a surrogate from ``surrogateescape`` is a byte; a lone
    ``"\\ud800"`` is nothing)."""
    if not instance(value, (str, os.PathLike)):
        raise InvalidArgumentError(name, "a path (str or os.PathLike)", type_name(value))
    try:
        result = os.fspath(cast("str | os.PathLike[str]", value))
    except Exception:  # a PathLike whose __fspath__ raises
        raise InvalidArgumentError(name, "a readable os.PathLike", type_name(value)) from None
    if type(result) is not str:
        raise InvalidArgumentError(name, "a str path", type_name(result))
    if "\x00" in result:
        raise InvalidArgumentError(name, "a path without NUL characters", "a NUL character")
    try:
        os.fsencode(result)  # what every file call does first; "\ud800" has no bytes
    except UnicodeError:
        raise InvalidArgumentError(
            name, "a path the file system can encode",
            "a lone surrogate that stands for no character or byte",
        ) from None
    return result


def callable_or_none(name: str, value: object) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise InvalidArgumentError(name, "a callable or None", type_name(value))
    return value


def json_scalars(name: str, value: object) -> dict[str, object]:
    """A filter mapping of str keys to JSON scalars (what an HCN query filters on)."""
    if not instance(value, Mapping):
        raise InvalidArgumentError(name, "a mapping of str to JSON scalars", type_name(value))
    try:
        items = list(value.items())  # type: ignore[attr-defined]
    except Exception:  # a caller's Mapping can raise anything from items()
        raise InvalidArgumentError(name, "a readable mapping", type_name(value)) from None
    out: dict[str, object] = {}
    for key, item in items:
        if type(key) is not str:
            raise InvalidArgumentError(f"{name} key", "a str", type_name(key))
        if item is not None and type(item) not in (str, bool, int, float):
            raise InvalidArgumentError(
                f"{name}[{key[:40]!r}]", "a str, int, float, bool or None", type_name(item)
            )
        if type(item) is float and not math.isfinite(item):  # NaN is no JSON
            raise InvalidArgumentError(f"{name}[{key[:40]!r}]", "a finite number", "NaN or inf")
        if type(item) is int and item.bit_length() > 64:
            raise InvalidArgumentError(f"{name}[{key[:40]!r}]", "a 64-bit int", "out of range")
        out[key] = item
    return out
