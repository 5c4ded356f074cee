"""Any accepted pod form as a camelCase mapping, plus typed getters naming the JSON path.

Builders of whole CRI requests read many more pod fields than the Windows rules do, so
they work on the manifest itself: a mapping as written (Pod, or a workload whose pod
template is used), a ``kubernetes.client`` object (client 36 classes through their
``attribute_map``, client 37 pydantic models through ``model_dump``) or
:class:`kubelet_winnet.Pod` (which keeps only the fields it models). Nothing is coerced:
a wrong type raises :class:`InvalidPodError` at its path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubelet_winnet._pod import _object_template, _template_of
from kubelet_winnet.errors import InvalidPodError

__all__ = ["PodView", "view_pod"]

_MAX_DEPTH = 64


class PodView:
    """The pod (template resolved) with the JSON path prefix of its root."""

    __slots__ = ("metadata", "prefix", "spec")

    def __init__(self, metadata: Mapping[str, Any], spec: Mapping[str, Any], prefix: str):
        self.metadata = metadata
        self.spec = spec
        self.prefix = prefix  # "" for a Pod, "spec.template." for a Deployment, ...

    def at(self, path: str) -> str:
        return self.prefix + path


def _describe(value: object) -> str:
    """A bounded description that never calls a foreign ``__repr__``."""
    kind = type(value)
    if kind is str:
        shown = json.dumps(value)
        return "string " + (shown if len(shown) <= 40 else shown[:37] + "...")
    if kind is bool or value is None:
        return "boolean " + json.dumps(value) if kind is bool else "null"
    if isinstance(value, float) and kind is float:
        return f"number {value!r}"
    if isinstance(value, int) and kind is int:
        return f"number {value}" if abs(value) < 10**30 else "number (a huge integer)"
    if _is_map(value):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return kind.__name__


def _bad(field: str, expected: str, value: object) -> InvalidPodError:
    return InvalidPodError(field, f"expected {expected}, got {_describe(value)}")


def _is_map(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _plain(obj: object, depth: int = 0) -> Any:
    """A client object as camelCase JSON-like data."""
    if depth > _MAX_DEPTH:
        raise InvalidPodError("", "pod object nested too deeply")
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [_plain(item, depth + 1) for item in obj]
    if _is_map(obj):
        return {key: _plain(item, depth + 1) for key, item in obj.items()}  # type: ignore[attr-defined]
    attribute_map = getattr(type(obj), "attribute_map", None)
    if isinstance(attribute_map, dict) and not hasattr(obj, "model_dump"):
        out: dict[str, Any] = {}
        for attribute, key in attribute_map.items():
            item = getattr(obj, attribute, None)
            if item is not None:
                out[key] = _plain(item, depth + 1)
        return out
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True)
    raise InvalidPodError("", f"cannot read a {type(obj).__name__} as part of a pod")


def view_pod(pod: object) -> PodView:
    """The pod in ``pod``; raises only :class:`InvalidPodError`."""
    if _is_map(pod):
        workload_meta = pod.get("metadata")  # type: ignore[attr-defined]
        template, prefix = _template_of(pod)  # type: ignore[arg-type]
    elif hasattr(pod, "spec") or hasattr(pod, "template"):
        try:
            template_obj, prefix = _object_template(pod)
            workload_meta = _plain(getattr(pod, "metadata", None))
            template = _plain(template_obj)
        except InvalidPodError:
            raise
        except Exception as exc:  # a property of a foreign object raised
            raise InvalidPodError(
                "", f"could not read the pod object: {type(exc).__name__}"
            ) from None
    else:
        raise InvalidPodError(
            "",
            "expected a Pod or workload manifest mapping, a kubernetes.client V1Pod or "
            f"kubelet_winnet.Pod, got {type(pod).__name__}",
        )
    if not _is_map(template):
        raise _bad(prefix.rstrip(".") or "", "an object", template)
    spec = template.get("spec")
    if spec is None:
        raise InvalidPodError(f"{prefix}spec", "required: the pod has no spec")
    if not _is_map(spec):
        raise _bad(f"{prefix}spec", "an object", spec)
    metadata = template.get("metadata")
    if metadata is None:
        metadata = {}
    elif not _is_map(metadata):
        raise _bad(f"{prefix}metadata", "an object", metadata)
    if prefix and _is_map(workload_meta):
        # A template has no name or namespace of its own; its controller derives them
        # from the workload (the generated suffix is unknowable here).
        merged = dict(metadata)
        for key in ("name", "namespace"):
            if merged.get(key) is None and workload_meta.get(key) is not None:
                merged[key] = workload_meta[key]
        metadata = merged
    return PodView(metadata, spec, prefix)


# --- typed getters: value at ``key`` of ``obj`` (at JSON path ``at``), null = absent ---


def get_str(obj: Mapping[str, Any], key: str, at: str, default: str = "") -> str:
    value = obj.get(key)
    if value is None:
        return default
    if type(value) is not str:
        raise _bad(f"{at}{key}", "a string", value)
    return value


def get_bool(obj: Mapping[str, Any], key: str, at: str) -> bool | None:
    value = obj.get(key)
    if value is None or value is True or value is False:
        return value
    raise _bad(f"{at}{key}", "a boolean", value)


def get_int(
    obj: Mapping[str, Any], key: str, at: str, low: int = -(2**63), high: int = 2**63 - 1
) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if type(value) is not int:
        raise _bad(f"{at}{key}", "an integer", value)
    if not low <= value <= high:
        raise InvalidPodError(f"{at}{key}", f"must be between {low} and {high}")
    return value


def get_map(obj: Mapping[str, Any], key: str, at: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not _is_map(value):
        raise _bad(f"{at}{key}", "an object", value)
    return value  # type: ignore[no-any-return]


def get_list(obj: Mapping[str, Any], key: str, at: str) -> list[Any] | tuple[Any, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if type(value) is not list and type(value) is not tuple:
        raise _bad(f"{at}{key}", "an array", value)
    return value


def get_objects(obj: Mapping[str, Any], key: str, at: str) -> list[Mapping[str, Any]]:
    """An array of objects; each entry checked."""
    entries = get_list(obj, key, at)
    for index, entry in enumerate(entries):
        if not _is_map(entry):
            raise _bad(f"{at}{key}[{index}]", "an object", entry)
    return list(entries)


def get_strings(obj: Mapping[str, Any], key: str, at: str) -> list[str]:
    entries = get_list(obj, key, at)
    for index, entry in enumerate(entries):
        if type(entry) is not str:
            raise _bad(f"{at}{key}[{index}]", "a string", entry)
    return list(entries)


def get_str_map(obj: Mapping[str, Any], key: str, at: str) -> dict[str, str]:
    value = get_map(obj, key, at)
    if value is None:
        return {}
    out: dict[str, str] = {}
    for name, item in value.items():
        if type(name) is not str:
            raise _bad(f"{at}{key}", "string keys", name)
        if type(item) is not str:
            raise _bad(f"{at}{key}.{name}", "a string", item)
        out[name] = item
    return out
