"""HCN JSON documents: builders for what we send, parsers for what comes back (pure).

Shapes follow the HCN schema 2.0 namespace documents as restated in
``shared/reference/cri-and-hcn.md`` (hcsshim ``hcn/hcnnamespace.go`` and
``hcn/hcn.go`` model the same documents in Go). HCN keys are read case-insensitively:
the ID key is spelled ``ID`` by the service and ``Id`` in parts of the documentation.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import HcnError, InvalidArgumentError, InvalidRequestError
from kubelet_winnet.runtime.hcn import _args
from kubelet_winnet.runtime.hcn._hresult import E_UNEXPECTED

__all__ = [
    "HOST_DEFAULT",
    "SCHEMA_VERSION",
    "Namespace",
    "NamespaceResource",
    "endpoint_modify_request",
    "error_record",
    "format_guid",
    "namespace_query",
    "namespace_settings",
    "parse_guid",
    "parse_guid_list",
    "parse_namespace",
    "parse_namespace_list",
]

SCHEMA_VERSION: Mapping[str, int] = MappingProxyType({"Major": 2, "Minor": 0})
HOST_DEFAULT = "HostDefault"  # Type of the host's own namespace (compartment 1)

NamespaceType = Literal["Host", "HostDefault", "Guest", "GuestDefault"]
_NAMESPACE_TYPES = ("Host", "HostDefault", "Guest", "GuestDefault")


def _dumps(value: object) -> str:
    # Non-ASCII stays literal so names reach HCN as real UTF-16, not \u escapes.
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def format_guid(value: uuid.UUID) -> str:
    """The GUID text we send: lower case, no braces (HCN accepts either case)."""
    return str(value)


def namespace_settings(
    *,
    owner: str | None = None,
    name: str | None = None,
    namespace_type: NamespaceType | None = None,
) -> str:
    """The ``HcnCreateNamespace`` settings document (schema 2.0).

    containerd sends an empty HostComputeNamespace; we add ``Owner``/``Name`` so our
    namespaces can be found again after the state directory is lost. The ID is not in
    the document: ``HcnCreateNamespace`` takes it as its GUID argument.
    """
    owner = _args.text_or_none("owner", owner)
    name = _args.text_or_none("name", name)
    if namespace_type is not None:
        _args.text("namespace_type", namespace_type)
        if namespace_type not in _NAMESPACE_TYPES:
            raise InvalidRequestError(
                "namespace_type", f"must be one of {', '.join(_NAMESPACE_TYPES)}"
            )
    doc: dict[str, object] = {"SchemaVersion": dict(SCHEMA_VERSION)}
    if owner is not None:
        doc["Owner"] = owner
    if name is not None:
        doc["Name"] = name
    if namespace_type is not None:
        doc["Type"] = namespace_type
    return _dumps(doc)


def namespace_query(
    filter: Mapping[str, object] | None = None, *, detailed: bool = False
) -> str:
    """A HostComputeQuery: ``Filter`` is itself JSON, carried as a string.

    No filter means no ``Filter`` key (hcsshim omits it when empty). Filter values are
    JSON scalars (``{"Owner": "kubelet-winnet"}``).
    """
    checked = None if filter is None else _args.json_scalars("filter", filter)
    detailed = _args.flag("detailed", detailed)
    doc: dict[str, object] = {
        "SchemaVersion": dict(SCHEMA_VERSION),
        "Flags": 1 if detailed else 0,
    }
    if checked:
        doc["Filter"] = _dumps(checked)
    return _dumps(doc)


def endpoint_modify_request(
    endpoint_id: uuid.UUID, request: Literal["Add", "Remove"]
) -> str:
    """The ``HcnModifyNamespace`` request attaching or detaching an endpoint.

    The Windows CNI plugin sends this after we create the namespace; we build it for
    tests and for callers that attach endpoints themselves.
    """
    endpoint_id = _args.guid("endpoint_id", endpoint_id)
    _args.text("request", request)
    if request not in ("Add", "Remove"):
        raise InvalidRequestError("request", f"must be 'Add' or 'Remove', not {_shown(request)}")
    return _dumps(
        {
            "ResourceType": "Endpoint",
            "RequestType": request,
            "Settings": {"EndpointId": format_guid(endpoint_id)},
        }
    )


def error_record(hresult: int, message: str) -> str:
    """An error record as HCN shapes it (used by the in-memory double)."""
    return _dumps(
        {"Success": False, "Error": message, "ErrorCode": hresult & 0xFFFFFFFF}
    )


# --- parsing -------------------------------------------------------------------------


def _malformed(operation: str, detail: str) -> HcnError:
    # HCN answered, but not with the document the API promises: E_UNEXPECTED, not a
    # code that would suggest HCN itself reported the problem.
    return HcnError(operation, E_UNEXPECTED, f"malformed HCN output: {detail}")


def _fold(doc: Mapping[str, object], operation: str) -> dict[str, object]:
    folded: dict[str, object] = {}
    for key, value in doc.items():
        lowered = key.lower()
        if lowered in folded and folded[lowered] != value:
            raise _malformed(
                operation, f"key {_shown(key)} appears twice with different values"
            )
        folded[lowered] = value
    return folded


def parse_guid(value: object, *, operation: str = "parse GUID") -> uuid.UUID:
    """A GUID from HCN text: either case, with or without braces."""
    operation = _args.text("operation", operation)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1]
        if len(text) == 36:
            try:
                return uuid.UUID(text)
            except ValueError:
                pass
    raise _malformed(operation, f"not a GUID: {_shown(value)}")


def _shown(value: object) -> str:
    """A bounded description of a value HCN sent (never its unbounded repr)."""
    if isinstance(value, str):
        return repr(cut(value, 63))
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return "a number" if value.bit_length() > 64 else str(value)
    return f"a JSON {type(value).__name__}"


def _load(text: object, operation: str) -> object:
    # The caller's argument: a wrong type is the caller's mistake, not HCN's.
    text = _args.text("text", text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _malformed(operation, f"not JSON ({exc.msg} at {exc.pos})") from None
    except RecursionError:
        raise _malformed(operation, "JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than int_max_str_digits
        raise _malformed(operation, f"not JSON we can read ({_shown(str(exc))})") from None


def parse_guid_list(
    text: str, *, operation: str = "HcnEnumerateNamespaces"
) -> tuple[uuid.UUID, ...]:
    """The JSON array of GUID strings that an enumeration returns (empty text = none)."""
    text = _args.text("text", text)
    operation = _args.text("operation", operation)
    if not text.strip():
        return ()
    value = _load(text, operation)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _malformed(operation, "expected a JSON array of GUIDs")
    return tuple(parse_guid(item, operation=operation) for item in value)


@dataclass(frozen=True)
class NamespaceResource:
    """One entry of a namespace's ``Resources`` (``Container`` or ``Endpoint``)."""

    type: str
    id: uuid.UUID | None

    def __post_init__(self) -> None:
        _args.text("type", self.type)
        if self.id is not None:
            _args.guid("id", self.id)


@dataclass(frozen=True)
class Namespace:
    """The fields of a namespace properties document we act on.

    ``raw`` keeps the whole document (read-only) for callers that need more.
    """

    id: uuid.UUID
    type: str | None = None
    owner: str | None = None
    name: str | None = None
    compartment: int | None = None
    resources: tuple[NamespaceResource, ...] = ()
    raw: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        _args.guid("id", self.id)
        for name in ("type", "owner", "name"):
            _args.text_or_none(name, getattr(self, name))
        if self.compartment is not None:
            _args.integer("compartment", self.compartment, 0, 0xFFFFFFFF)
        if type(self.resources) is not tuple:
            raise InvalidArgumentError(
                "resources", "a tuple of NamespaceResource", type_name(self.resources)
            )
        for index, resource in enumerate(self.resources):
            if not _args.instance(resource, NamespaceResource):
                raise InvalidArgumentError(
                    f"resources[{index}]", "a NamespaceResource", type_name(resource)
                )
        if not _args.instance(self.raw, Mapping):
            raise InvalidArgumentError("raw", "a mapping", type_name(self.raw))

    @property
    def is_host_default(self) -> bool:
        return (self.type or "").lower() == HOST_DEFAULT.lower()

    @property
    def endpoint_ids(self) -> tuple[uuid.UUID, ...]:
        return tuple(
            r.id
            for r in self.resources
            if r.type.lower() == "endpoint" and r.id is not None
        )


def _optional_str(doc: Mapping[str, object], key: str, operation: str) -> str | None:
    value = doc.get(key.lower())
    if value is None or isinstance(value, str):
        return value
    raise _malformed(operation, f"{key} is not a string: {_shown(value)}")


def _namespace_from(value: object, operation: str) -> Namespace:
    if not isinstance(value, dict):
        raise _malformed(operation, "expected a JSON object")
    doc = _fold(value, operation)
    if "id" not in doc:
        raise _malformed(operation, "namespace document has no ID")
    compartment = doc.get("namespaceid")
    if compartment is not None and (
        not isinstance(compartment, int)
        or isinstance(compartment, bool)
        or not 0 <= compartment <= 0xFFFFFFFF  # a compartment ID is a 32-bit unsigned
    ):
        raise _malformed(
            operation, f"NamespaceId is not a compartment number: {_shown(compartment)}"
        )
    resources_value = doc.get("resources")
    if resources_value is None:
        resources_value = []
    if not isinstance(resources_value, list):
        raise _malformed(operation, "Resources is not a list")
    resources: list[NamespaceResource] = []
    for item in resources_value:
        if not isinstance(item, dict):
            raise _malformed(operation, f"resource is not an object: {_shown(item)}")
        entry = _fold(item, operation)
        kind = entry.get("type")
        if not isinstance(kind, str):
            raise _malformed(operation, "resource has no Type")
        data = entry.get("data")
        resource_id: uuid.UUID | None = None
        if isinstance(data, dict):
            data_id = _fold(data, operation).get("id")
            if data_id is not None:
                resource_id = parse_guid(data_id, operation=operation)
        resources.append(NamespaceResource(kind, resource_id))
    return Namespace(
        id=parse_guid(doc["id"], operation=operation),
        type=_optional_str(doc, "Type", operation),
        owner=_optional_str(doc, "Owner", operation),
        name=_optional_str(doc, "Name", operation),
        compartment=compartment,
        resources=tuple(resources),
        raw=MappingProxyType(dict(value)),
    )


def parse_namespace(
    text: str, *, operation: str = "HcnQueryNamespaceProperties"
) -> Namespace:
    """A namespace properties document."""
    operation = _args.text("operation", operation)
    value = _load(text, operation)
    try:
        return _namespace_from(value, operation)
    except RecursionError:  # comparing two deeply nested duplicate keys
        raise _malformed(operation, "JSON nested too deeply") from None


def parse_namespace_list(
    text: str, *, operation: str = "HcnEnumerateNamespaces"
) -> tuple[Namespace, ...]:
    """The JSON array of full documents that a detailed (``Flags: 1``) query returns."""
    text = _args.text("text", text)
    operation = _args.text("operation", operation)
    if not text.strip():
        return ()
    value = _load(text, operation)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _malformed(operation, "expected a JSON array of namespaces")
    try:
        return tuple(_namespace_from(item, operation) for item in value)
    except RecursionError:
        raise _malformed(operation, "JSON nested too deeply") from None
