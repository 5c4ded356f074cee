"""Build CRI ``runtime.v1`` messages from rule decisions; the only module that does."""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

from google.protobuf.message import Message

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.golang import json_text
from kubelet_winnet._kubelet.kubelet_version import KubeletVersion
from kubelet_winnet._kubelet.request_facts import ENV_VALUES_ARE_BYTES, SIGNAL_NAMES_PREFIXED
from kubelet_winnet._kubelet.rules import ContainerDecision, SandboxDecision

__all__ = [
    "container_security_context_message",
    "fill_container_security_context",
    "message_json",
    "sandbox_config_bytes",
    "sandbox_config_message",
]

_MODES = {"POD": api_pb2.POD, "NODE": api_pb2.NODE}
_Config = api_pb2.WindowsPodSandboxConfig


def sandbox_config_message(decision: SandboxDecision) -> api_pb2.WindowsPodSandboxConfig:
    """The ``WindowsPodSandboxConfig`` of an accepted decision (a new message each call).

    ``security_context`` is always present; ``namespace_options`` is present exactly when
    the decision has a network mode, even ``POD``, which encodes to zero bytes.
    """
    # Parsing the few bytes back is ~2x faster than building the message field by
    # field; both give the same message, presence included.
    return _parse(sandbox_config_bytes(decision))


def sandbox_config_bytes(decision: SandboxDecision) -> bytes:
    """:func:`sandbox_config_message`, encoded: for merging into a ``PodSandboxConfig``'s
    ``windows`` without a message in between."""
    key = (
        decision.network,
        decision.host_process,
        decision.run_as_username,
        decision.credential_spec,
    )
    data = _ENCODED.get(key)
    if data is None:
        data = _build(decision).SerializeToString()
        if len(_ENCODED) >= _ENCODED_MAX:
            _ENCODED.clear()
        _ENCODED[key] = data
    return data


# Decisions repeat (a node sees the same few pod shapes), so their encodings are memoized;
# bounded because the key holds user-supplied strings.
_ENCODED: dict[tuple[str | None, bool, str, str], bytes] = {}
_ENCODED_MAX = 256
_parse = _Config.FromString


def _build(decision: SandboxDecision) -> api_pb2.WindowsPodSandboxConfig:
    config = _Config()
    context = config.security_context
    context.SetInParent()
    # Setting fields one by one on the embedded message is ~2x faster than keyword
    # construction, and proto3 scalars at their default encode to nothing either way.
    if decision.run_as_username:
        context.run_as_username = decision.run_as_username
    if decision.credential_spec:
        context.credential_spec = decision.credential_spec
    if decision.host_process:
        context.host_process = True
    if decision.network is not None:
        options = context.namespace_options
        options.SetInParent()
        options.network = _MODES[decision.network]
    return config


def container_security_context_message(
    decision: ContainerDecision,
) -> api_pb2.WindowsContainerSecurityContext:
    return api_pb2.WindowsContainerSecurityContext(
        run_as_username=decision.run_as_username,
        credential_spec=decision.credential_spec,
        host_process=decision.host_process,
    )


def fill_container_security_context(
    target: api_pb2.WindowsContainerSecurityContext, decision: ContainerDecision
) -> None:
    """:func:`container_security_context_message` into ``target`` (marked present), in
    place: no message to build and copy."""
    target.SetInParent()
    if decision.run_as_username:
        target.run_as_username = decision.run_as_username
    if decision.credential_spec:
        target.credential_spec = decision.credential_spec
    if decision.host_process:
        target.host_process = True


def message_json(
    message: Message, *, with_defaults: bool = False, kubelet: KubeletVersion | None = None,
) -> dict[str, Any]:
    """proto3 JSON of ``message`` (``json_format.MessageToDict``; ``with_defaults``: fields
    without presence shown at their zero value), keys in field-number order at every
    level and map entries by key. upb lists a message's fields in the order they were
    set, so without this two pods' outputs showed the same fields in different orders.

    ``kubelet``: the JSON of that release's cri-api, whose types can differ from the
    newest one compiled here (:class:`_ReleaseTypes`); without it, the newest."""
    from google.protobuf import json_format

    value = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=with_defaults
    )
    return _ordered(message.DESCRIPTOR, value, _release_types(kubelet))


class _ReleaseTypes(NamedTuple):
    env_bytes: bool
    """``KeyValue.value`` is ``bytes``, which proto3 JSON (Go's ``protojson``, like
    ``encoding/json`` for a ``[]byte``) writes as standard base64 with padding; before
    ``ENV_VALUES_ARE_BYTES`` it is a ``string``: the text, a byte that is not UTF-8 (a
    kubelet before 1.34 sends one) written as ``encoding/json`` writes it, U+FFFD."""
    signal_prefixed: bool
    """The ``Signal`` enum's names carry ``SIGNAL_`` (``SIGNAL_NAMES_PREFIXED``)."""


_NEWEST_TYPES = _ReleaseTypes(True, True)


def _release_types(kubelet: KubeletVersion | None) -> _ReleaseTypes:
    if kubelet is None:
        return _NEWEST_TYPES
    return _ReleaseTypes(
        ENV_VALUES_ARE_BYTES.holds(kubelet.minor, kubelet.patch),
        SIGNAL_NAMES_PREFIXED.holds(kubelet.minor, kubelet.patch),
    )


def _ordered(descriptor: Any, value: dict[str, Any], types: _ReleaseTypes) -> dict[str, Any]:
    ordered: dict[str, Any] = {}
    for field in sorted(descriptor.fields, key=lambda f: f.number):
        name = field.json_name
        if name not in value:
            continue
        item = value[name]
        sub = field.message_type
        if sub is not None and sub.GetOptions().map_entry:
            # Map entries by key, as Go's protojson writes them: upb iterates a map in
            # hash order, which changes from one process to the next.
            of = sub.fields_by_name["value"].message_type
            item = {key: _ordered(of, item[key], types) if of is not None else item[key]
                    for key in sorted(item)}
        elif sub is not None:
            if type(item) is dict:
                item = _ordered(sub, item, types)
            elif type(item) is list:
                item = [_ordered(sub, x, types) if type(x) is dict else x for x in item]
        elif field is _ENV_VALUE and not types.env_bytes:
            item = json_text(base64.b64decode(item))
        elif field.enum_type is _SIGNAL and not types.signal_prefixed and type(item) is str:
            item = item.removeprefix("SIGNAL_")  # an unknown number stays a number
        ordered[name] = item
    return ordered


_ENV_VALUE = api_pb2.KeyValue.DESCRIPTOR.fields_by_name["value"]
_SIGNAL = api_pb2.Signal.DESCRIPTOR
