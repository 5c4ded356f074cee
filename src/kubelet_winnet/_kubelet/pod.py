"""The pod reader: one code path for every accepted pod form.

Accepted: a manifest mapping in the API's camelCase (a Pod, or a workload whose pod
template is used), a ``kubernetes.client`` object (``V1Pod``, workloads, ``V1PodTemplate``,
``V1PodTemplateSpec``; client 36 plain classes or 37 pydantic models, never imported), an
attribute object such as ``SimpleNamespace`` with snake_case attributes, or
:class:`kubelet_winnet.Pod`. Objects are read through :class:`ObjectView`, a lazy read-only
``Mapping`` that answers camelCase keys from snake_case attributes, so the reader below
is written once, against the ``Mapping`` protocol, and the same value gives the same result
or the same ``InvalidPodError.field`` in every form. (:func:`read_pod` first tries a compiled
reader, plain ``getattr`` on objects of classes already met, which never reports: anything
unusual goes to the general reader.)

For other readers of pod fields (requests, linters): :func:`pod_template` turns any form
into ``(template, at)``; the ``get_*`` helpers read typed fields and raise
``InvalidPodError`` with full JSON paths. Nothing is coerced (``"true"`` is not ``true``);
``null`` means unset, as in the API; fields nobody reads are not checked.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kubelet_winnet._describe import describe, quoted, type_name
from kubelet_winnet._kubelet.rules import (
    ContainerFacts,
    ContainerKind,
    PodFacts,
    WindowsOptions,
)
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError

if TYPE_CHECKING:
    from typing import Protocol, TypeAlias

    from kubelet_winnet._kubelet.model import Pod

    class ClientObject(Protocol):
        """A ``kubernetes.client`` model (``V1Pod``, ``V1Deployment``, ...): the reader
        finds its camelCase fields through ``attribute_map`` (client 36 and 37)."""

        @property
        def attribute_map(self) -> Mapping[str, str]: ...

    # What the public functions take for a pod: a manifest (a Pod or a workload), a
    # kubernetes.client object, or kw.Pod; anything else is an InvalidArgumentError.
    PodInput: TypeAlias = "Mapping[str, Any] | Pod | ClientObject"

__all__ = [
    "CONTAINER_KINDS",
    "WORKLOAD_TEMPLATE_PATHS",
    "ObjectView",
    "PodIdentity",
    "get_array",
    "get_bool",
    "get_int",
    "get_object",
    "get_objects",
    "get_str",
    "get_str_map",
    "is_utf8",
    "pod_facts",
    "pod_identity",
    "pod_template",
    "read_pod",
]

CONTAINER_KINDS: tuple[ContainerKind, ...] = ("initContainers", "containers", "ephemeralContainers")

# The one table of where each workload keeps its pod template (camelCase keys from the
# manifest root). A Pod is its own template.
WORKLOAD_TEMPLATE_PATHS: Mapping[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}
_POD_KINDS = frozenset({"Pod", "PodTemplateSpec"})  # the latter: a client class only

_NOT_UTF8 = "not valid Unicode (contains a lone surrogate)"
_SCALARS = frozenset({str, bool, int, float, bytes, bytearray, type(None)})
# Values, not objects, even with an instance __dict__: subclasses of these (a str
# subclass, an IntEnum) and enum members are refused as values are, never read as
# attribute objects with no fields.
_VALUE_BASES = (
    str, int, float, complex, bytes, bytearray, list, tuple, dict, set, frozenset, enum.Enum,
)


def _bad(field: str, expected: str, value: object) -> InvalidPodError:
    return InvalidPodError(field, f"expected {expected}, got {describe(value)}")


def _unreadable(field: str, exc: BaseException) -> InvalidPodError:
    return InvalidPodError(field, f"could not be read: {type_name(exc)} was raised")


def _lookup_failed(field: str, exc: Exception) -> InvalidPodError:
    """A lookup of ``field`` raised: a key of the caller's dict whose ``__eq__`` raises
    (its hash equal to the key looked up) or a mapping's own ``get``. The lookups below
    each sit in a ``try``, which costs nothing until something is raised."""
    return exc if isinstance(exc, InvalidPodError) else _unreadable(field, exc)


def _is_mapping(value: object) -> bool:
    try:
        return isinstance(value, Mapping)
    except Exception:  # an __instancecheck__ / __class__ that raises
        return False


def is_utf8(text: str) -> bool:
    """``text`` can be UTF-8 encoded (no lone surrogates, as ``json.loads`` can produce)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


# --- views: objects as camelCase mappings ----------------------------------------------

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CLIENT_CLASS = re.compile(r"V[0-9]+(?:(?:alpha|beta)[0-9]+)?([A-Z][A-Za-z0-9]*)")


class _Schema:
    """How one class spells camelCase keys as attributes."""

    __slots__ = ("attributes", "kind", "names")

    def __init__(self, attributes: Mapping[str, str] | None, kind: str | None) -> None:
        self.attributes = attributes  # camelCase -> attribute; None: derive snake_case
        self.kind = kind  # the API kind a client class stands for, else None
        # For the compiled reader: the attribute of each key it reads (a key missing
        # here sends it to the general reader).
        self.names: Mapping[str, str] = _SNAKE_NAMES if attributes is None else attributes


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
    except Exception:
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
    except Exception:  # a hostile class: read it generically
        pass
    return _Schema(None, None)


def _snake(key: str) -> str:
    if type(key) is not str:
        raise TypeError(key)
    return _CAMEL_BOUNDARY.sub("_", key).lower()


# The keys the compiled reader reads, spelt for objects without a schema (SimpleNamespace).
_SNAKE_NAMES: Mapping[str, str] = {
    key: _snake(key)
    for key in (
        "spec", "kind", "hostNetwork", "securityContext", *CONTAINER_KINDS, "name",
        "windowsOptions", "runAsUserName", "gmsaCredentialSpecName", "gmsaCredentialSpec",
        "hostProcess",
    )
}


def _is_attribute_object(value: object) -> bool:
    """Read by attribute: client models and plain objects with an instance ``__dict__``
    (``SimpleNamespace``); not scalars, containers, numpy values or classes."""
    cls = type(value)
    if cls in _SCALARS or cls is list or cls is tuple or cls is dict:
        return False
    if cls in _SCHEMAS:
        return True
    try:
        return (
            cls.__dictoffset__ != 0
            and not issubclass(cls, _VALUE_BASES)
            and not isinstance(value, type)
            and not _is_mapping(value)
        )
    except Exception:
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


_PLAIN = _SCALARS | {dict}


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
        except Exception as exc:  # a property or __getattr__ that raises
            at = self.path
            raise _unreadable(f"{at}.{key}" if at else key, exc) from None
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
            except Exception:
                names = []
            keys = [re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), n) for n in names]
        else:
            keys = list(attributes)
        return (key for key in keys if self.get(key) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<ObjectView of {type_name(self._obj)} at {quoted(self.path or '.')}>"


class _GuardedMapping(Mapping[str, Any]):
    """A caller's ``Mapping`` (not a dict) whose methods may raise: any exception becomes
    ``InvalidPodError`` at the key's path."""

    __slots__ = ("_at", "_mapping")

    def __init__(self, mapping: Mapping[str, Any], at: str) -> None:
        self._mapping = mapping
        self._at = at  # path prefix: "" or "spec."

    def get(self, key: str, default: Any = None) -> Any:
        try:
            value = self._mapping.get(key)
        except Exception as exc:
            shown = key if type(key) is str else f"[{describe(key)}]"
            raise _unreadable(self._at + shown, exc) from None
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
        except Exception as exc:
            raise _unreadable(self._at.rstrip("."), exc) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        # Not len(list(self)): list() asks __len__ for a size hint, which recursed.
        return len(self._keys())


# --- typed getters (for every reader of pod fields) ------------------------------------


def _object(value: object, field: str) -> Mapping[str, Any]:
    """``value`` as a readable object at ``field``, or ``InvalidPodError``."""
    cls = type(value)
    if cls is dict or cls is ObjectView or cls is _GuardedMapping:
        return value  # type: ignore[return-value]
    if cls not in _SCALARS and cls is not list and cls is not tuple and _is_mapping(value):
        return _GuardedMapping(value, f"{field}.")  # type: ignore[arg-type]
    raise _bad(field, "an object", value)


def get_object(mapping: Mapping[str, Any], key: str, at: str = "") -> Mapping[str, Any] | None:
    """``mapping[key]`` as an object (``None`` if unset); ``at`` is ``mapping``'s path
    prefix ("spec." ...); errors name ``at + key``."""
    try:
        value = mapping.get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if value is None or type(value) is dict:  # the common cases, without _object's call
        return value
    return _object(value, at + key)


def get_array(mapping: Mapping[str, Any], key: str, at: str = "") -> list[Any] | None:
    try:
        value = mapping.get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if value is None:
        return None
    if type(value) is not list and type(value) is not tuple:
        raise _bad(at + key, "an array", value)
    return list(value)


def get_objects(
    mapping: Mapping[str, Any], key: str, at: str = ""
) -> list[tuple[Mapping[str, Any], str]]:
    """The objects of array ``key`` with each one's path prefix ("spec.containers[0].")."""
    items = get_array(mapping, key, at) or []
    out = []
    for index, item in enumerate(items):
        field = f"{at}{key}[{index}]"
        out.append((_object(item, field), field + "."))
    return out


def get_str(mapping: Mapping[str, Any], key: str, at: str = "") -> str | None:
    try:
        value = mapping.get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if value is not None and type(value) is not str:
        raise _bad(at + key, "a string", value)
    return value


def get_bool(mapping: Mapping[str, Any], key: str, at: str = "") -> bool | None:
    try:
        value = mapping.get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if value is not None and value is not True and value is not False:
        raise _bad(at + key, "a boolean", value)
    return value


def get_int(
    mapping: Mapping[str, Any],
    key: str,
    at: str = "",
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    try:
        value = mapping.get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if value is None:
        return None
    if type(value) is not int:
        raise _bad(at + key, "an integer", value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise InvalidPodError(
            at + key, f"{describe(value)} outside the range {minimum} to {maximum}"
        )
    return value


def get_str_map(mapping: Mapping[str, Any], key: str, at: str = "") -> dict[str, str] | None:
    """An object of string values (labels, annotations), copied."""
    value = get_object(mapping, key, at)
    if value is None:
        return None
    out = {}
    for name in value:
        if type(name) is not str:
            # The key is what is wrong (str() of it may raise or run for seconds).
            raise InvalidPodError(
                at + key, f"expected string keys, got a key that is {describe(name)}"
            )
        item = value.get(name)
        if type(item) is not str:
            raise _bad(f"{at}{key}[{quoted(name)}]", "a string", item)
        out[name] = item
    return out


# --- from any form to the pod template -------------------------------------------------


def _root(pod: object) -> tuple[Mapping[str, Any], str | None]:
    """The pod argument as a readable mapping, and its kind if its class says it."""
    cls = type(pod)
    if cls is dict:
        return pod, None  # type: ignore[return-value]
    if cls in _SCHEMAS or _is_attribute_object(pod):
        view = ObjectView(pod)
        return view, view.kind
    if _is_mapping(pod):
        return _GuardedMapping(pod, ""), None  # type: ignore[arg-type]
    raise InvalidArgumentError(
        "pod",
        "a Pod or workload manifest mapping, a kubernetes.client object or kubelet_winnet.Pod",
        type_name(pod),
    )


def pod_template(pod: object) -> tuple[Mapping[str, Any], str]:
    """``(template, at)`` for any accepted form of ``pod``.

    ``template`` is a read-only camelCase ``Mapping`` of the pod (for a workload, its pod
    template: ``metadata`` and ``spec``); ``at`` is that template's JSON path prefix
    (``""`` for a pod, ``"spec.template."``, ``"spec.jobTemplate.spec.template."``,
    ``"template."``). Read fields with the ``get_*`` helpers and ``at``. Raises
    ``InvalidPodError`` (a kind that has no pod template, a missing template) or
    ``InvalidArgumentError`` (not a pod form at all).
    """
    if type(pod) is dict:
        root: Mapping[str, Any] = pod
        kind = None
    else:
        root, kind = _root(pod)
    if kind is None:
        try:
            kind = root.get("kind")
        except Exception as exc:
            raise _lookup_failed("kind", exc) from None
        if kind is None:
            return root, ""
        if type(kind) is not str:
            raise _bad("kind", "a string", kind)
    if kind in _POD_KINDS:
        return root, ""
    path = WORKLOAD_TEMPLATE_PATHS.get(kind)
    if path is None:
        raise InvalidPodError(
            "kind", f"{quoted(kind)} is neither a Pod nor a workload with a pod template"
        )
    node: Mapping[str, Any] = root
    at = ""
    for key in path:
        found = get_object(node, key, at)
        if found is None:
            raise InvalidPodError(at + key, f"required: {kind} has no pod template here")
        node, at = found, f"{at}{key}."
    return node, at


# --- the facts the kubelet rules read ---------------------------------------------------


def _path(at: str, container: tuple[str, int] | None, rest: str) -> str:
    """A JSON path, built only once something is wrong."""
    if container is None:
        return at + rest
    return f"{at}{container[0]}[{container[1]}].{rest}"


def _windows_options_in(
    context: object, at: str, container: tuple[str, int] | None
) -> WindowsOptions | None:
    """``securityContext.windowsOptions`` of the pod (``container`` None) or of a container."""
    if type(context) is not dict:
        context = _object(context, _path(at, container, "securityContext"))
    try:
        options = context.get("windowsOptions")
    except Exception as exc:
        raise _lookup_failed(_path(at, container, "securityContext.windowsOptions"), exc) from None
    if options is None:
        return None
    if type(options) is not dict:
        options = _object(options, _path(at, container, "securityContext.windowsOptions"))
    get = options.get
    key = "runAsUserName"
    try:
        user = get(key)
        key = "gmsaCredentialSpecName"
        gmsa_name = get(key)
        key = "gmsaCredentialSpec"
        gmsa = get(key)
        key = "hostProcess"
        host_process = get(key)
    except Exception as exc:
        raise _lookup_failed(_path(at, container, _OPTIONS + key), exc) from None
    if user is not None and type(user) is not str:
        raise _bad(_path(at, container, _OPTIONS + "runAsUserName"), "a string", user)
    if gmsa_name is not None and type(gmsa_name) is not str:
        raise _bad(
            _path(at, container, _OPTIONS + "gmsaCredentialSpecName"), "a string", gmsa_name
        )
    if gmsa is not None and type(gmsa) is not str:
        raise _bad(_path(at, container, _OPTIONS + "gmsaCredentialSpec"), "a string", gmsa)
    if host_process is not None and host_process is not True and host_process is not False:
        raise _bad(_path(at, container, _OPTIONS + "hostProcess"), "a boolean", host_process)
    # These two go into runtime.v1 strings, which must be valid UTF-8.
    if user is not None and not user.isascii() and not is_utf8(user):
        raise InvalidPodError(_path(at, container, _OPTIONS + "runAsUserName"), _NOT_UTF8)
    if gmsa is not None and not gmsa.isascii() and not is_utf8(gmsa):
        raise InvalidPodError(_path(at, container, _OPTIONS + "gmsaCredentialSpec"), _NOT_UTF8)
    found = _OPTION_SETS.get((user, gmsa_name, gmsa, host_process))
    return found if found is not None else _option_set(user, gmsa_name, gmsa, host_process)


def _option_set(
    user: str | None, gmsa_name: str | None, gmsa: str | None, host_process: bool | None
) -> WindowsOptions:
    # Validated values only: the same few option sets recur on every pod of a workload,
    # and looking one up is cheaper than building it.
    key = (user, gmsa_name, gmsa, host_process)
    found = _OPTION_SETS.get(key)
    if found is None:
        found = WindowsOptions(user, gmsa_name, gmsa, host_process)
        if len(_OPTION_SETS) >= 256:  # bounded: the key holds caller strings
            _OPTION_SETS.clear()
        _OPTION_SETS[key] = found
    return found


_OPTION_SETS: dict[tuple[str | None, str | None, str | None, bool | None], WindowsOptions] = {}


_OPTIONS = "securityContext.windowsOptions."


def pod_facts(spec: object, at: str) -> PodFacts:
    """The rule inputs of the pod spec ``spec`` found at path prefix ``at`` ("spec.")."""
    if type(spec) is not dict:
        spec = _object(spec, at[:-1])
    get = spec.get
    key = "hostNetwork"
    try:
        host_network = get(key)
        key = "securityContext"
        context = get(key)
    except Exception as exc:
        raise _lookup_failed(at + key, exc) from None
    if host_network is None:
        host_network = False
    elif host_network is not True and host_network is not False:
        raise _bad(f"{at}hostNetwork", "a boolean", host_network)
    pod_options = None
    if context is not None:
        pod_options = _windows_options_in(context, at, None)
    containers: list[ContainerFacts] = []
    for kind in CONTAINER_KINDS:
        try:
            entries = get(kind)
        except Exception as exc:
            raise _lookup_failed(at + kind, exc) from None
        if entries is None:
            continue
        if type(entries) is not list and type(entries) is not tuple:
            raise _bad(f"{at}{kind}", "an array", entries)
        for index, entry in enumerate(entries):
            if type(entry) is not dict:
                entry = _object(entry, f"{at}{kind}[{index}]")
            key = "name"
            try:
                name = entry.get(key)
                key = "securityContext"
                context = entry.get(key)
            except Exception as exc:
                raise _lookup_failed(f"{at}{kind}[{index}].{key}", exc) from None
            if name is None:
                name = ""
            elif type(name) is not str:
                raise _bad(f"{at}{kind}[{index}].name", "a string", name)
            options = None
            if context is not None:
                options = _windows_options_in(context, at, (kind, index))
            containers.append(ContainerFacts(name, kind, options))
    return PodFacts(host_network, pod_options, tuple(containers))


def read_pod(pod: object) -> PodFacts:
    """The rule inputs of ``pod`` in any accepted form; raises ``InvalidPodError`` (or
    ``InvalidArgumentError`` for something that is no pod form at all)."""
    template, at = pod_template(pod)
    try:
        spec = template.get("spec")
    except Exception as exc:
        raise _lookup_failed(f"{at}spec", exc) from None
    if spec is None:
        raise InvalidPodError(f"{at}spec", "required: the pod has no spec")
    return pod_facts(spec, f"{at}spec." if at else "spec.")


class PodIdentity(tuple[str, str, str]):
    """(kind, namespace, name) for reports; empty strings where unknown."""

    __slots__ = ()

    def __str__(self) -> str:
        kind, namespace, name = self
        where = f"{namespace}/{name}" if namespace else name
        return f"{kind or 'Pod'}/{where or '<unnamed>'}"


def pod_identity(pod: object) -> PodIdentity:
    """Best effort, never raises: used to label output, not to decide anything."""

    def text(value: object) -> str:
        return value if type(value) is str else ""

    try:
        root, kind = _root(pod)
        meta = root.get("metadata")
        meta = _object(meta, "metadata") if meta is not None else {}
        return PodIdentity(
            (kind or text(root.get("kind")), text(meta.get("namespace")), text(meta.get("name")))
        )
    except Exception:
        return PodIdentity(("", "", ""))
