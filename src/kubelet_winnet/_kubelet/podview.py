"""The pod (template resolved) for the request builders, through the one pod reader.

:func:`kubelet_winnet._kubelet.pod.pod_template` turns every accepted form (manifest mapping,
``kubernetes.client`` 36/37 object, attribute object, :class:`kubelet_winnet.Pod`) into a
read-only camelCase ``Mapping`` plus its JSON path prefix; the getters here are thin
defaults over the reader's typed ``get_*`` helpers (``InvalidPodError`` at the field path,
nothing coerced).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelet_winnet._describe import describe
from kubelet_winnet._kubelet import pod as _pod
from kubelet_winnet.errors import InvalidPodError

__all__ = [
    "PodView",
    "container_index",
    "get_bool",
    "get_int",
    "get_list",
    "get_map",
    "get_objects",
    "get_optional_str",
    "get_str",
    "get_str_map",
    "get_strings",
    "not_utf8_error",
    "read_field",
    "view_pod",
]


class PodView:
    """The pod's ``metadata`` and ``spec`` with the JSON path prefix of its root."""

    __slots__ = ("claims", "metadata", "metadata_at", "prefix", "spec", "spec_at")

    def __init__(
        self, metadata: Mapping[str, Any], spec: Mapping[str, Any], prefix: str,
        claims: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.metadata = metadata
        self.spec = spec
        self.prefix = prefix  # "" for a Pod, "spec.template." for a Deployment, ...
        self.spec_at = prefix + "spec."  # the path prefixes the getters are given most
        self.metadata_at = prefix + "metadata."
        # A StatefulSet's volumeClaimTemplates as (volume name, JSON path): its controller
        # adds each to the pod as a persistentVolumeClaim volume (updateStorage).
        self.claims = claims

    def at(self, path: str) -> str:
        return self.prefix + path


def read_field(obj: Mapping[str, Any], key: str, at: str) -> Any:
    """``obj.get(key)``, guarded as the reader's getters are: a caller's key whose
    ``__eq__`` raises (or a mapping's ``get``) is an ``InvalidPodError`` at ``at + key``."""
    try:
        return obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None


def view_pod(pod: object) -> PodView:
    """The pod in ``pod``; raises ``InvalidPodError`` or ``InvalidArgumentError``."""
    template, prefix = _pod.pod_template(pod)
    spec = _pod.get_object(template, "spec", prefix)
    if spec is None:
        raise InvalidPodError(f"{prefix}spec", "required: the pod has no spec")
    metadata = _pod.get_object(template, "metadata", prefix) or {}
    if prefix:
        # A template has no name or namespace of its own; its controller derives them
        # from the workload (the generated name suffix is unknowable here).
        root, kind = _pod._root(pod)  # the workload itself, as the reader sees it
        workload = _pod.get_object(root, "metadata") or {}
        merged = dict(metadata)
        for key in ("name", "namespace"):
            if read_field(merged, key, f"{prefix}metadata.") is None:
                value = read_field(workload, key, "metadata.")
                if value is not None:
                    merged[key] = value
        metadata = merged
        if (kind or read_field(root, "kind", "")) == "StatefulSet":
            return PodView(metadata, spec, prefix, _claims(root))
    return PodView(metadata, spec, prefix)


def container_index(view: PodView) -> dict[str, tuple[Mapping[str, Any], str, str]]:
    """Container name -> (container, its path prefix, its kind), the first of each name in
    the kubelet's visiting order (init, regular, ephemeral)."""
    index: dict[str, tuple[Mapping[str, Any], str, str]] = {}
    at = view.spec_at
    for kind in _pod.CONTAINER_KINDS:
        for position, container in enumerate(get_objects(view.spec, kind, at)):
            where = f"{at}{kind}[{position}]."
            index.setdefault(get_str(container, "name", where), (container, where, kind))
    return index


def _claims(root: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(name, path) of each of a StatefulSet's ``volumeClaimTemplates``
    (pkg/controller/statefulset/stateful_set_utils.go ``updateStorage``)."""
    spec = _pod.get_object(root, "spec") or {}
    claims = []
    for claim, at in _pod.get_objects(spec, "volumeClaimTemplates", "spec."):
        metadata = _pod.get_object(claim, "metadata", at) or {}
        claims.append((get_str(metadata, "name", f"{at}metadata."), at.rstrip(".")))
    return tuple(claims)


def get_str(obj: Mapping[str, Any], key: str, at: str, default: str = "") -> str:
    try:  # read_field's guard, inline: the builders' most frequent call
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if type(value) is str:  # the common cases, without the reader's call
        return value
    if value is None:
        return default
    return _pod.get_str(obj, key, at) or default  # raises: not a string


def get_optional_str(obj: Mapping[str, Any], key: str, at: str) -> str | None:
    """A string field where absent and ``""`` differ (a Go ``*string``)."""
    try:  # read_field's guard, inline
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if value is None or type(value) is str:
        return value
    return _pod.get_str(obj, key, at)  # raises: not a string


def get_bool(obj: Mapping[str, Any], key: str, at: str) -> bool | None:
    try:  # read_field's guard, inline
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if value is None or value is True or value is False:
        return value
    return _pod.get_bool(obj, key, at)  # raises: not a boolean


get_map = _pod.get_object


def get_int(
    obj: Mapping[str, Any], key: str, at: str, low: int = -(2**63), high: int = 2**63 - 1
) -> int | None:
    try:  # read_field's guard, inline
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if value is None or (type(value) is int and low <= value <= high):
        return value
    return _pod.get_int(obj, key, at, low, high)  # raises: not an int64 in range


def get_list(obj: Mapping[str, Any], key: str, at: str) -> list[Any]:
    return _pod.get_array(obj, key, at) or []


def get_objects(obj: Mapping[str, Any], key: str, at: str) -> list[Mapping[str, Any]]:
    """The objects of array ``key`` (each checked)."""
    try:  # read_field's guard, inline
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if value is None:  # most arrays are absent: skip the reader's path building
        return []
    if type(value) is list:
        for item in value:
            if type(item) is not dict:
                break
        else:
            return value  # plain manifest data: nothing to wrap or report
    return [item for item, _ in _pod.get_objects(obj, key, at)]


def get_strings(obj: Mapping[str, Any], key: str, at: str) -> list[str]:
    try:  # read_field's guard, inline
        value = obj.get(key)
    except Exception as exc:
        raise _pod._lookup_failed(at + key, exc) from None
    if value is None:  # most commands and args are absent
        return []
    items = get_list(obj, key, at)
    for index, item in enumerate(items):
        if type(item) is not str:
            raise InvalidPodError(
                f"{at}{key}[{index}]", f"expected a string, got {describe(item)}"
            )
    return items


def get_str_map(obj: Mapping[str, Any], key: str, at: str) -> dict[str, str]:
    if read_field(obj, key, at) is None:
        return {}
    return _pod.get_str_map(obj, key, at) or {}


_NOT_UTF8 = "not valid Unicode (contains a lone surrogate)"


def _first_non_utf8(value: Any, at: str, depth: int = 0) -> str | None:
    """The JSON path of the first string (or key) protobuf cannot encode, or ``None``."""
    if depth > 64:
        return None
    if type(value) is str:
        return None if _pod.is_utf8(value) else at
    if type(value) is dict or type(value) is _pod.ObjectView:
        for key in value:
            if type(key) is not str:
                continue  # never str() of a caller's key; the readers refuse it anyway
            where = f"{at}.{key}" if at else key
            if not _pod.is_utf8(key):
                return where
            found = _first_non_utf8(value.get(key), where, depth + 1)
            if found is not None:
                return found
    elif type(value) is list or type(value) is tuple:
        for index, item in enumerate(value):
            found = _first_non_utf8(item, f"{at}[{index}]", depth + 1)
            if found is not None:
                return found
    return None


def not_utf8_error(view: PodView) -> InvalidPodError:
    """For a ``UnicodeEncodeError`` raised while filling a message: name the field."""
    for part, value in (("metadata", view.metadata), ("spec", view.spec)):
        found = _first_non_utf8(value, view.at(part))
        if found is not None:
            return InvalidPodError(found, _NOT_UTF8)
    return InvalidPodError(view.prefix.rstrip("."), _NOT_UTF8)
