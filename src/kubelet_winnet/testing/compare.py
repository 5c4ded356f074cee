"""A received CRI request against the one the kubelet sends, field by field.

The expected request is built by the library's request builders
(``kubelet_winnet.run_pod_sandbox_request``, ``kubelet_winnet.create_container_request``)
for the kubelet release, gates and node given; the comparison walks both messages by
their descriptors, so every field of ``runtime.v1`` is compared, presence included: a
``WindowsNamespaceOption`` the kubelet sends with ``network`` POD (present, zero bytes)
differs from one it does not send at all. Maps are compared entry by entry, repeated
fields element by element, and a field the received bytes carry that ``runtime.v1``
does not define is named by its number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf import unknown_fields
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError, SandboxConfigError

__all__ = [
    "Difference",
    "assert_kubelet_request",
    "diff_kubelet_request",
    "failure_message",
    "message_differences",
]

UNSET: Final = "<unset>"
_MAX_SHOWN: Final = 200
_WIRE_TYPES: Final = {0: "varint", 1: "64-bit", 2: "length-delimited", 3: "group start",
                      4: "group end", 5: "32-bit"}
# The builders' own keywords a caller may pin (what the kubelet learnt at run time:
# restart counts, the image's user, the random termination-log name, ...).
_OPTIONS: Final = {
    "RunPodSandboxRequest": frozenset({"attempt"}),
    "CreateContainerRequest": frozenset({
        "attempt", "sandbox_attempt", "image_ref", "image_username", "config_maps", "secrets",
        "pod_ips", "services", "volume_paths", "termination_log_id",
    }),
}


@dataclass(frozen=True)
class Difference:
    """One field where the received request differs from the kubelet's.

    ``path`` is the proto path (``config.windows.security_context.namespace_options``,
    ``config.labels["app"]``, ``config.envs[2].value``; a field ``runtime.v1`` does not
    define ends in its number, ``config.windows.7``). ``expected`` and ``received``
    describe each side's value, ``None`` where the field is unset (absent).
    ``kubelet`` is the release compared against (``1.32``); ``unknown`` marks a field
    the schema does not define."""

    path: str
    expected: str | None
    received: str | None
    kubelet: str
    unknown: bool = False

    def __str__(self) -> str:
        received = UNSET if self.received is None else self.received
        if self.unknown:
            return (f"{self.path}: received a field runtime.v1 does not define ({received});"
                    f" kubelet {self.kubelet} sends no such field")
        expected = UNSET if self.expected is None else self.expected
        return f"{self.path}: kubelet {self.kubelet} sends {expected}, received {received}"


def diff_kubelet_request(
    received: api_pb2.RunPodSandboxRequest | api_pb2.CreateContainerRequest | bytes,
    pod: Any,
    *,
    kubelet_version: str | kw.KubeletVersion = DEFAULT_KUBELET_VERSION,
    feature_gates: str | Mapping[str, bool] | None = None,
    node: kw.NodeContext | None = None,
    container: str | None = None,
    request_options: Mapping[str, Any] | None = None,
) -> tuple[Difference, ...]:
    """Every field where ``received`` differs from what kubelet ``kubelet_version`` (with
    ``feature_gates``, on ``node``) sends for ``pod``, in field-number order; empty when
    they agree.

    ``received`` is a ``RunPodSandboxRequest`` or a ``CreateContainerRequest``, the
    message or its serialized bytes (bytes are read as a ``CreateContainerRequest`` when
    ``container`` is given, else as a ``RunPodSandboxRequest``). For a
    ``CreateContainerRequest`` ``container`` names the pod's container (default: the one
    ``received.config.metadata.name`` names); its ``pod_sandbox_id`` is the runtime's, so
    it is taken from ``received``. ``request_options`` passes the request builder's other
    keywords (``attempt``, ``image_ref``, ``termination_log_id``, ...).

    When the kubelet refuses the pod it sends nothing: the one difference is at path
    ``""``, the kubelet's text. Bad arguments raise the library's errors:
    ``InvalidArgumentError`` (wrong types, an unknown option), ``InvalidRequestError``
    (bytes that are not the message), ``InvalidPodError``, ``UnsupportedVersionError``,
    ``FeatureGateError``.
    """
    message = _received(received, container)
    version = kw.parse_kubelet_version(kubelet_version)
    kubelet = f"1.{version.minor}" if version.patch is None else str(version)
    options = _options(type(message).__name__, request_options)
    try:
        expected = _expected(message, pod, container, version, feature_gates, node, options)
    except SandboxConfigError as refusal:
        sent = f"a {type(message).DESCRIPTOR.name}"
        return (Difference("", f"no request (it refuses the pod: {_shown(str(refusal))})",
                           sent, kubelet),)
    found: list[Difference] = []
    _diff(expected, message, "", kubelet, found)
    return tuple(found)


def assert_kubelet_request(
    received: api_pb2.RunPodSandboxRequest | api_pb2.CreateContainerRequest | bytes,
    pod: Any,
    *,
    kubelet_version: str | kw.KubeletVersion = DEFAULT_KUBELET_VERSION,
    feature_gates: str | Mapping[str, bool] | None = None,
    node: kw.NodeContext | None = None,
    container: str | None = None,
    request_options: Mapping[str, Any] | None = None,
) -> None:
    """Raise ``AssertionError`` listing, one line each, every field of ``received`` that
    differs from what the kubelet sends (``diff_kubelet_request``, same arguments),
    e.g. ``config.windows.security_context.namespace_options: kubelet 1.32 sends network
    NODE, received <unset>``."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    found = diff_kubelet_request(
        received, pod, kubelet_version=kubelet_version, feature_gates=feature_gates,
        node=node, container=container, request_options=request_options,
    )
    if found:
        raise AssertionError(failure_message(found))


def failure_message(found: tuple[Difference, ...]) -> str:
    """The ``AssertionError`` text of a non-empty ``diff_kubelet_request`` result."""
    if (not isinstance(found, (tuple, list)) or not found
            or not all(isinstance(d, Difference) for d in found)):
        raise InvalidArgumentError("found", "a non-empty tuple of Difference (what "
                                   "diff_kubelet_request returns when the requests differ)",
                                   "an empty tuple" if isinstance(found, (tuple, list))
                                   and not found else type_name(found))
    kind = "field differs" if len(found) == 1 else "fields differ"
    lines = [f"{len(found)} {kind} from what kubelet {found[0].kubelet} sends:"]
    lines += [f"  {difference}" for difference in found]
    return "\n".join(lines)


def message_differences(left: object, right: object) -> list[str] | None:
    """The fields where two ``runtime.v1`` messages of one type differ, one line each
    (``path: left X, right Y``), or ``None`` when they are not such a pair."""
    if not (isinstance(left, Message) and type(left) is type(right)
            and left.DESCRIPTOR.file is api_pb2.DESCRIPTOR):
        return None
    assert isinstance(right, Message)
    found: list[Difference] = []
    _diff(left, right, "", "", found)
    return [
        f"{d.path}: left {UNSET if d.expected is None else d.expected}, right "
        f"{UNSET if d.received is None else d.received}" + (" (a field runtime.v1 does not "
                                                            "define)" if d.unknown else "")
        for d in found
    ]


# --- the two sides ---------------------------------------------------------------------

_Request = api_pb2.RunPodSandboxRequest | api_pb2.CreateContainerRequest
_EXPECTED = "a RunPodSandboxRequest or CreateContainerRequest (message or bytes)"


def _received(received: object, container: object) -> _Request:
    if container is not None and not isinstance(container, str):
        raise InvalidArgumentError("container", "a container name (str) or None",
                                   type_name(container))
    if isinstance(received, api_pb2.RunPodSandboxRequest):
        if container is not None:
            raise InvalidArgumentError("container", "None for a RunPodSandboxRequest",
                                       "a container name")
        return received
    if isinstance(received, api_pb2.CreateContainerRequest):
        return received
    if isinstance(received, (bytes, bytearray, memoryview)):
        cls: type[_Request] = (
            api_pb2.RunPodSandboxRequest if container is None else api_pb2.CreateContainerRequest
        )
        message = cls()
        try:
            message.ParseFromString(bytes(received))
        except DecodeError:
            raise InvalidRequestError(
                "", f"malformed protobuf: not a serialized {cls.DESCRIPTOR.name}"
            ) from None
        return message
    raise InvalidArgumentError("received", _EXPECTED, type_name(received))


def _options(kind: str, options: object) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidArgumentError("request_options", "a mapping of keyword to value",
                                   type_name(options))
    chosen = dict(options)
    for key in chosen:
        if not isinstance(key, str) or key not in _OPTIONS[kind]:
            allowed = ", ".join(sorted(_OPTIONS[kind]))
            shown = key if isinstance(key, str) else type_name(key)
            raise InvalidArgumentError(
                "request_options", f"keywords of the {kind} builder ({allowed})",
                _shown(repr(shown)) if isinstance(key, str) else shown,
            )
    return chosen


def _expected(message: _Request, pod: Any, container: str | None, version: kw.KubeletVersion,
              gates: Any, node: kw.NodeContext | None, options: dict[str, Any]) -> _Request:
    if isinstance(message, api_pb2.RunPodSandboxRequest):
        return kw.run_pod_sandbox_request(
            pod, kubelet_version=version, feature_gates=gates, node=node, **options
        )
    name = container if container is not None else message.config.metadata.name
    return kw.create_container_request(
        pod, name, pod_sandbox_id=message.pod_sandbox_id, kubelet_version=version,
        feature_gates=gates, node=node, **options,
    )


# --- the walk ------------------------------------------------------------------------


def _diff(expected: Message, received: Message, path: str, kubelet: str,
          found: list[Difference]) -> None:
    for field in expected.DESCRIPTOR.fields:
        at = f"{path}.{field.name}" if path else field.name
        if _is_map(field):
            _diff_map(field, getattr(expected, field.name), getattr(received, field.name),
                      at, kubelet, found)
        elif field.is_repeated:
            mine, theirs = getattr(expected, field.name), getattr(received, field.name)
            for index in range(max(len(mine), len(theirs))):
                _diff_value(field, mine[index] if index < len(mine) else None,
                            theirs[index] if index < len(theirs) else None,
                            f"{at}[{index}]", kubelet, found)
        elif field.message_type is not None or field.has_presence:
            _diff_value(field,
                        getattr(expected, field.name) if expected.HasField(field.name) else None,
                        getattr(received, field.name) if received.HasField(field.name) else None,
                        at, kubelet, found)
        else:  # a proto3 scalar: no presence, its zero value is "not sent"
            _diff_value(field, getattr(expected, field.name), getattr(received, field.name),
                        at, kubelet, found)
    for unknown in _unknown(received):
        at = f"{path}.{unknown.field_number}" if path else str(unknown.field_number)
        wire = _WIRE_TYPES.get(unknown.wire_type, f"wire type {unknown.wire_type}")
        size = f", {len(unknown.data)} bytes" if isinstance(unknown.data, bytes) else ""
        found.append(Difference(at, None, f"field {unknown.field_number}, {wire}{size}",
                                kubelet, unknown=True))


def _diff_value(field: Any, mine: Any, theirs: Any, at: str, kubelet: str,
                found: list[Difference]) -> None:
    if mine is not None and theirs is not None and field.message_type is not None:
        _diff(mine, theirs, at, kubelet, found)
        return
    if mine is None and theirs is None:
        return
    if mine is not None and theirs is not None and mine == theirs:
        return
    found.append(Difference(at, _render(field, mine), _render(field, theirs), kubelet))


def _diff_map(field: Any, mine: Any, theirs: Any, at: str, kubelet: str,
              found: list[Difference]) -> None:
    value_field = field.message_type.fields_by_name["value"]
    for key in sorted(set(mine) | set(theirs)):
        _diff_value(value_field, mine.get(key), theirs.get(key),
                    f"{at}[{_scalar(field.message_type.fields_by_name['key'], key)}]",
                    kubelet, found)


def _unknown(message: Message) -> list[Any]:
    """The fields of ``message``'s bytes that its type does not define."""
    found: Any = unknown_fields.UnknownFieldSet(message)
    return list(found)


def _is_map(field: Any) -> bool:
    return (field.is_repeated and field.message_type is not None
            and field.message_type.GetOptions().map_entry)


# --- how a value reads -------------------------------------------------------------------


def _shown(text: str) -> str:
    return cut(text, _MAX_SHOWN)


def _render(field: Any, value: Any) -> str | None:
    if value is None:
        return None
    if field.message_type is not None:
        return _shown(_message_text(value))
    return _shown(_scalar(field, value))


def _scalar(field: Any, value: Any) -> str:
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    if field.enum_type is not None:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named is not None else str(value)
    if field.type == FieldDescriptor.TYPE_STRING:
        return json.dumps(value, ensure_ascii=False)
    if field.type == FieldDescriptor.TYPE_BYTES:
        # Text reads as text (an env value is bytes from cri-api 1.37 on, and mostly
        # UTF-8); other bytes in hex, a pair each.
        try:
            return json.dumps(bytes(value).decode("utf-8"), ensure_ascii=False)
        except UnicodeDecodeError:
            return "bytes " + bytes(value).hex(" ")
    return str(value)


def _message_text(message: Message) -> str:
    """A message on one line: its set fields, ``name value``; a message with none set
    reads as its scalar fields at their defaults (``network POD``: what an empty
    ``WindowsNamespaceOption`` means), or ``{}``."""
    parts = []
    listed: list[tuple[Any, Any]] = list(message.ListFields())
    for field, value in listed:
        if _is_map(field):
            entry = field.message_type
            entries = ", ".join(
                f"{_scalar(entry.fields_by_name['key'], k)}: "
                f"{_render(entry.fields_by_name['value'], value[k])}"
                for k in sorted(value)
            )
            parts.append(f"{field.name} {{{entries}}}")
        elif field.is_repeated:
            items = ", ".join(_render(field, item) or "" for item in value)
            parts.append(f"{field.name} [{items}]")
        elif field.message_type is not None:
            parts.append(f"{field.name} {{{_message_text(value)}}}")
        else:
            parts.append(f"{field.name} {_scalar(field, value)}")
    if not listed:
        parts = [
            f"{field.name} {_scalar(field, getattr(message, field.name))}"
            for field in message.DESCRIPTOR.fields
            if field.message_type is None and not field.is_repeated
        ]
    return ", ".join(parts) if parts else "{}"
