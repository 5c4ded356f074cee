"""Caller objects as read-only camelCase mappings, and a caller's ``Mapping`` guarded.

:class:`ObjectView` answers camelCase keys from a ``kubernetes.client`` object (client 36
plain classes or 37 pydantic models, never imported), :class:`kubelet_winnet.Pod` or an
attribute object such as ``SimpleNamespace``, so the reader (:mod:`.pod`) is written
once, against the ``Mapping`` protocol. :class:`GuardedMapping` wraps a caller's
``Mapping`` that is not a dict: whatever its methods raise becomes ``InvalidPodError`` at
the key's path. These are the places a hostile object can raise anything, so each guard
here catches ``Exception``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from typing import Any

from kubelet_winnet._describe import describe, quoted, type_name
from kubelet_winnet.errors import InvalidPodError

__all__ = ["SCALARS", "GuardedMapping", "ObjectView", "is_mapping", "readable", "unreadable"]

SCALARS = frozenset({str, bool, int, float, bytes, bytearray, type(None)})
# Values, not objects, even with an instance __dict__: subclasses of these (a str
# subclass, an IntEnum) and enum members are refused as values are, never read as
# attribute objects with no fields.
_VALUE_BASES = (
    str, int, float, complex, bytes, bytearray, list, tuple, dict, set, frozenset, enum.Enum,
)


def unreadable(field: str, exc: BaseException) -> InvalidPodError:
    return InvalidPodError(field, f"could not be read: {type_name(exc)} was raised")


def is_mapping(value: object) -> bool:
    """``isinstance(value, Mapping)`` that a raising ``__class__`` cannot break."""
    try:
        return isinstance(value, Mapping)
    except Exception:  # a caller's __instancecheck__ / __class__ can raise anything
        return False


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CLIENT_CLASS = re.compile(r"V[0-9]+(?:(?:alpha|beta)[0-9]+)?([A-Z][A-Za-z0-9]*)")


class _Schema:
    """How one class spells camelCase keys as attributes."""

    __slots__ = ("attributes", "kind")

    def __init__(self, attributes: Mapping[str, str] | None, kind: str | None) -> None:
        self.attributes = attributes  # camelCase -> attribute; None: derive snake_case
        self.kind = kind  # the API kind a client class stands for, else None


def _schema_of(cls: type) -> _Schema:
    found = _SCHEMAS.get(cls)  # (a metaclass whose __hash__ raises is not defended against)
    if found is None:
        found = _derive_schema(cls)
        if not _is_value_class(cls):  # (an ObjectView built over a value by a caller)
            if len(_SCHEMAS) >= 256:  # bounded: a caller can make types
                _SCHEMAS.clear()
            # Only object classes, so a class found here is one the reader views.
            _SCHEMAS[cls] = found
    return found


def _is_value_class(cls: type) -> bool:
    try:
        return cls in _PLAIN or cls is list or cls is tuple or issubclass(cls, _VALUE_BASES)
    except Exception:  # a caller's metaclass __subclasscheck__ can raise anything
        return True


# Per class: computing a schema costs ~20 us; V1Pod input meets ~6 classes per pod.
_SCHEMAS: dict[type, _Schema] = {}


def _derive_schema(cls: type) -> _Schema:
    try:
        # kubernetes.client 36 and 37: attribute_map = {snake_case: camelCase}.
        attribute_map = cls.__dict__.get("attribute_map")
        if type(attribute_map) is dict and all(
            type(k) is str and type(v) is str for k, v in attribute_map.items()
        ):
            match = _CLIENT_CLASS.fullmatch(cls.__name__)
            return _Schema(
                {camel: snake for snake, camel in attribute_map.items()},
                match[1] if match else None,
            )
        # pydantic models with aliases (kubelet_winnet.Pod): model_fields[name].alias.
        fields = getattr(cls, "model_fields", None)
        if type(fields) is dict:
            attributes = {}
            for name, info in fields.items():
                alias = getattr(info, "alias", None)
                attributes[alias if type(alias) is str else name] = name
            return _Schema(attributes, None)
    except Exception:  # a caller's class attributes can raise anything: read it generically
        pass
    return _Schema(None, None)


def _snake(key: str) -> str:
    if type(key) is not str:
        raise TypeError(key)
    return _CAMEL_BOUNDARY.sub("_", key).lower()


def _is_attribute_object(value: object) -> bool:
    """Read by attribute: client models and plain objects with an instance ``__dict__``
    (``SimpleNamespace``); not scalars, containers, numpy values or classes."""
    cls = type(value)
    if cls in SCALARS or cls is list or cls is tuple or cls is dict:
        return False
    if cls in _SCHEMAS:
        return True
    try:
        return (
            cls.__dictoffset__ != 0
            and not issubclass(cls, _VALUE_BASES)
            and not isinstance(value, type)
            and not is_mapping(value)
        )
    except Exception:  # a caller's class (__dictoffset__, __subclasscheck__) can raise anything
        return False


def _wrap(value: Any, parent: ObjectView, key: str | tuple[str, int]) -> Any:
    cls = type(value)
    if cls in _PLAIN:
        return value
    schema = _SCHEMAS.get(cls)
    if schema is not None:
        return ObjectView(value, parent, key, schema)
    if cls is list or cls is tuple:
        # One level only, so a deeply nested list costs no recursion: no pod field is
        # an array of arrays, and the readers refuse an inner array as it is.
        name = key if type(key) is str else key[0]
        return [_wrap_item(item, parent, (name, index)) for index, item in enumerate(value)]
    if _is_attribute_object(value):
        return ObjectView(value, parent, key)
    return value


def _wrap_item(value: Any, parent: ObjectView, key: tuple[str, int]) -> Any:
    """An array element: a view if it is an object, else as it is (never recursing)."""
    cls = type(value)
    if cls in _PLAIN or cls is list or cls is tuple:
        return value
    schema = _SCHEMAS.get(cls)
    if schema is not None:
        return ObjectView(value, parent, key, schema)
    if _is_attribute_object(value):
        return ObjectView(value, parent, key)
    return value


_PLAIN = SCALARS | {dict}


class ObjectView(Mapping[str, Any]):
    """A read-only, lazy camelCase ``Mapping`` over an attribute object.

    ``view["hostNetwork"]`` reads ``obj.host_network`` (through ``attribute_map`` for
    client classes, the field aliases for pydantic models, else by converting the key to
    snake_case). ``None`` attributes are absent keys. Nested objects come back as views,
    lists as lists of views, dicts as they are. An attribute that raises becomes
    ``InvalidPodError`` naming its JSON path.
    """

    __slots__ = ("_attributes", "_key", "_obj", "_parent")

    def __init__(
        self,
        obj: object,
        parent: ObjectView | None = None,
        key: str | tuple[str, int] = "",
        schema: _Schema | None = None,
    ) -> None:
        self._obj = obj
        self._attributes = (schema or _schema_of(type(obj))).attributes
        self._parent = parent
        self._key = key

    @property
    def path(self) -> str:
        """The JSON path of this object from the root ("spec.containers[0]")."""
        parts: list[str] = []
        view: ObjectView | None = self
        while view is not None:
            key = view._key
            if type(key) is tuple:
                parts.append(f"{key[0]}[{key[1]}]")
            elif key:
                parts.append(key)  # type: ignore[arg-type]
            view = view._parent
        return ".".join(reversed(parts))

    @property
    def kind(self) -> str | None:
        """The API kind of a ``kubernetes.client`` class (``V1Service`` -> ``Service``)."""
        return _schema_of(type(self._obj)).kind

    def get(self, key: str, default: Any = None) -> Any:
        try:
            name = self._attributes[key]  # type: ignore[index]
        except KeyError:
            return default
        except TypeError:  # a generic object (no schema), or a key that is not a string
            if self._attributes is not None or type(key) is not str:
                return default
            name = _snake(key)
        try:
            value = getattr(self._obj, name, None)
        except Exception as exc:  # a caller's property or __getattr__ can raise anything
            at = self.path
            raise unreadable(f"{at}.{key}" if at else key, exc) from None
        if value is None:
            return default
        cls = type(value)
        if cls in _PLAIN:
            return value
        schema = _SCHEMAS.get(cls)
        if schema is not None:
            return ObjectView(value, self, key, schema)
        if cls is list:
            out = []
            for index, item in enumerate(value):
                schema = _SCHEMAS.get(type(item))
                out.append(
                    _wrap_item(item, self, (key, index))
                    if schema is None
                    else ObjectView(item, self, (key, index), schema)
                )
            return out
        return _wrap(value, self, key)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        attributes = self._attributes
        if attributes is None:
            try:
                names = [name for name in vars(self._obj) if type(name) is str]
            except Exception:  # a caller's __dict__ can raise anything: no keys then
                names = []
            keys = [re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), n) for n in names]
        else:
            keys = list(attributes)
        return (key for key in keys if self.get(key) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<ObjectView of {type_name(self._obj)} at {quoted(self.path or '.')}>"


class GuardedMapping(Mapping[str, Any]):
    """A caller's ``Mapping`` (not a dict) whose methods may raise: any exception becomes
    ``InvalidPodError`` at the key's path."""

    __slots__ = ("_at", "_mapping")

    def __init__(self, mapping: Mapping[str, Any], at: str) -> None:
        self._mapping = mapping
        self._at = at  # path prefix: "" or "spec."

    def get(self, key: str, default: Any = None) -> Any:
        try:
            value = self._mapping.get(key)
        except Exception as exc:  # a caller's get() can raise anything
            shown = key if type(key) is str else f"[{describe(key)}]"
            raise unreadable(self._at + shown, exc) from None
        return default if value is None else value

    def __getitem__(self, key: str) -> Any:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def _keys(self) -> list[Any]:
        # Every key, strings or not: the readers refuse a key that is not a string.
        try:
            # A comprehension, not list(): that would ask the caller's __len__ too.
            return [key for key in self._mapping]  # noqa: C416
        except Exception as exc:  # a caller's __iter__ can raise anything
            raise unreadable(self._at.rstrip("."), exc) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        # Not len(list(self)): list() asks __len__ for a size hint, which recursed.
        return len(self._keys())


def readable(value: object) -> tuple[Mapping[str, Any], str | None] | None:
    """``value`` as a camelCase mapping and the API kind its class says (client classes),
    or ``None`` when it is neither a mapping nor an attribute object."""
    cls = type(value)
    if cls is dict:
        return value, None  # type: ignore[return-value]
    if cls in _SCHEMAS or _is_attribute_object(value):
        view = ObjectView(value)
        return view, view.kind
    if is_mapping(value):
        return GuardedMapping(value, ""), None  # type: ignore[arg-type]
    return None
