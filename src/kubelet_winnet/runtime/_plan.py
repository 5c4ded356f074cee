"""The runtime half of KEP-3503: decide a sandbox's network from a RunPodSandbox request.

Pure: no I/O, no HCN. Everything that decides lives in this file, as two small rules
(one per policy) and the tables of HCN calls each outcome implies; ``docs/runtime.md``
shows the same tables, rendered from this module by ``scripts/render_docs.py``.

* ``containerd``: what containerd 2.x does on Windows (``internal/cri/server/helpers.go``,
  ``hostNetwork(config)``): host network iff ``windows.security_context.host_process``.
  ``namespace_options`` is never read.
* ``kep``: what KEP-3503 asked the runtime to do: host network iff
  ``namespace_options.network == NODE`` or ``host_process``. Without
  ``namespace_options`` (a kubelet after KEP-3503's withdrawal, or one before it with the
  gate off) it falls back to the host_process rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

from google.protobuf.message import DecodeError

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.timeline import KEP_WITHDRAWN_MINOR
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError
from kubelet_winnet.runtime._network import containerd_host_network

__all__ = [
    "POLICIES",
    "SETUP_CALLS",
    "TEARDOWN_CALLS",
    "HcnCall",
    "NetworkPlan",
    "Policy",
    "plan_sandbox_config_network",
    "plan_sandbox_network",
]

Policy = Literal["kep", "containerd"]
POLICIES: tuple[Policy, ...] = get_args(Policy)

# Who sends a config without namespace_options, from the kubelet profile.
_NO_OPTIONS_SENDERS = f"kubelet 1.{KEP_WITHDRAWN_MINOR}+, or the WindowsHostNetwork gate off"

_M = TypeVar("_M", api_pb2.PodSandboxConfig, api_pb2.RunPodSandboxRequest)


@dataclass(frozen=True)
class HcnCall:
    """One computenetwork.dll call a plan implies. ``repeated``: once per namespace
    listed, until the HostDefault one is found."""

    function: str
    purpose: str
    repeated: bool = False

    def __str__(self) -> str:
        return f"{self.function}{' (per namespace)' if self.repeated else ''}: {self.purpose}"


# What kubelet_winnet.runtime.hcn.SandboxNetworks calls, keyed by host_network, in order.
SETUP_CALLS: Mapping[bool, tuple[HcnCall, ...]] = {
    False: (
        HcnCall("HcnCreateNamespace", "create the sandbox namespace under a GUID recorded first"),
        HcnCall("HcnCloseNamespace", "release the handle the create returned"),
    ),
    True: (
        HcnCall("HcnEnumerateNamespaces", "list the host's namespace GUIDs"),
        HcnCall("HcnOpenNamespace", "open a listed namespace", repeated=True),
        HcnCall("HcnQueryNamespaceProperties", "read its Type", repeated=True),
        HcnCall("HcnCloseNamespace", "close it; stop at Type HostDefault", repeated=True),
    ),
}
TEARDOWN_CALLS: Mapping[bool, tuple[HcnCall, ...]] = {
    False: (HcnCall("HcnDeleteNamespace", "delete the sandbox namespace; not found = done"),),
    True: (),  # the HostDefault namespace is the host's: never deleted
}


@dataclass(frozen=True)
class NetworkPlan:
    """The network a sandbox gets, why, and the HCN calls that carry it out.

    ``namespace_mode`` is the ``namespace_options.network`` the request carried (enum
    name) or ``None`` when absent; ``host_process`` its ``host_process`` flag.
    """

    policy: Policy
    host_network: bool
    create_namespace: bool
    run_cni: bool
    reason: str
    host_process: bool = False
    namespace_mode: str | None = None
    setup_calls: tuple[HcnCall, ...] = ()
    teardown_calls: tuple[HcnCall, ...] = ()

    def __post_init__(self) -> None:
        # A host-network sandbox has no namespace of its own and nothing for CNI to
        # attach to; a pod-network one needs both.
        if self.create_namespace == self.host_network or self.run_cni == self.host_network:
            raise ValueError("create_namespace and run_cni must both be `not host_network`")

    @property
    def hcn_calls(self) -> tuple[HcnCall, ...]:
        """Setup calls, then teardown calls."""
        return self.setup_calls + self.teardown_calls

    def explain(self) -> str:
        """A few lines for a CLI or a log."""
        kind = "host network" if self.host_network else "pod network (own HCN namespace + CNI)"
        lines = [f"policy {self.policy}: {kind}", f"  because {self.reason}", "  setup:"]
        lines += [f"    {call}" for call in self.setup_calls] or ["    (no HCN call)"]
        lines.append("  teardown:")
        lines += [f"    {call}" for call in self.teardown_calls] or ["    (no HCN call)"]
        return "\n".join(lines)


def _plan(
    policy: Policy, host: bool, reason: str, host_process: bool, mode: str | None
) -> NetworkPlan:
    return NetworkPlan(
        policy=policy,
        host_network=host,
        create_namespace=not host,
        run_cni=not host,
        reason=reason,
        host_process=host_process,
        namespace_mode=mode,
        setup_calls=SETUP_CALLS[host],
        teardown_calls=TEARDOWN_CALLS[host],
    )


# --- reading the input ---------------------------------------------------------------
# Bytes are decoded as the one message type the caller names, by protobuf itself: unknown
# fields and groups are skipped exactly as protobuf skips them, and no guess is made from
# the shape of the bytes (the same bytes are a valid encoding of both message types,
# meaning different things).

_BYTES = (bytes, bytearray, memoryview)
_REQUEST_EXPECTED = "a RunPodSandboxRequest or its serialized bytes"
_CONFIG_EXPECTED = "a PodSandboxConfig or its serialized bytes"


def _decode(message: type[_M], data: bytes | bytearray | memoryview) -> _M:
    decoded = message()
    try:
        decoded.ParseFromString(bytes(data))
    except DecodeError:
        # The protobuf text says only "Wire format was corrupt"; chaining it adds nothing.
        raise InvalidRequestError(
            "", f"malformed protobuf: not a serialized {message.DESCRIPTOR.name}"
        ) from None
    return decoded


def _check_policy(policy: object) -> Policy:
    # `type(...) is str` first: a str subclass or any object with its own __eq__ is never
    # compared, so a raising __eq__ cannot escape and "kep"-lookalikes do not pass.
    if type(policy) is not str:
        raise InvalidArgumentError("policy", " or ".join(map(repr, POLICIES)), type_name(policy))
    for known in POLICIES:
        if policy == known:
            return known
    shown = repr(cut(policy, 43))
    raise InvalidRequestError("policy", f"must be one of {', '.join(POLICIES)}, not {shown}")


def _request_of(request: object) -> api_pb2.RunPodSandboxRequest:
    if isinstance(request, api_pb2.RunPodSandboxRequest):
        return request
    if isinstance(request, _BYTES):
        return _decode(api_pb2.RunPodSandboxRequest, request)
    expected = _REQUEST_EXPECTED
    if isinstance(request, api_pb2.PodSandboxConfig):
        expected += " (plan a PodSandboxConfig with plan_sandbox_config_network)"
    raise InvalidArgumentError("request", expected, type_name(request))


def _config_of(config: object) -> api_pb2.PodSandboxConfig:
    if isinstance(config, api_pb2.PodSandboxConfig):
        return config
    if isinstance(config, _BYTES):
        return _decode(api_pb2.PodSandboxConfig, config)
    expected = _CONFIG_EXPECTED
    if isinstance(config, api_pb2.RunPodSandboxRequest):
        expected += " (plan a RunPodSandboxRequest with plan_sandbox_network)"
    raise InvalidArgumentError("config", expected, type_name(config))


# --- the two rules -------------------------------------------------------------------


def _mode_name(value: api_pb2.NamespaceMode.ValueType) -> str | None:
    try:
        return api_pb2.NamespaceMode.Name(value)
    except ValueError:
        return None  # proto3 enums are open: any int32 can arrive


def plan_sandbox_network(
    request: api_pb2.RunPodSandboxRequest | bytes | bytearray | memoryview,
    *,
    policy: Policy = "kep",
) -> NetworkPlan:
    """Plan the network of the sandbox a ``RunPodSandboxRequest`` asks for.

    ``request`` is the message or its serialized bytes; bytes are always decoded as a
    ``RunPodSandboxRequest`` (use
    [`plan_sandbox_config_network`][kubelet_winnet.runtime.plan_sandbox_config_network] for a
    ``PodSandboxConfig``). Raises
    [`InvalidRequestError`][kubelet_winnet.errors.InvalidRequestError] for
    malformed bytes or an unknown policy, and, under ``kep``, for requests Windows cannot
    honour or that contradict themselves; ``.field`` is the proto path
    (``config.windows...``). Other argument types raise
    [`InvalidArgumentError`][kubelet_winnet.errors.InvalidArgumentError].
    """
    checked = _check_policy(policy)
    return _plan_config(_request_of(request).config, "config.", checked)


def plan_sandbox_config_network(
    config: api_pb2.PodSandboxConfig | bytes | bytearray | memoryview,
    *,
    policy: Policy = "kep",
) -> NetworkPlan:
    """[`plan_sandbox_network`][kubelet_winnet.runtime.plan_sandbox_network] for a
    ``PodSandboxConfig`` (message or bytes, decoded
    as a ``PodSandboxConfig``); field paths start at the config (``windows...``)."""
    checked = _check_policy(policy)
    return _plan_config(_config_of(config), "", checked)


def _plan_config(sandbox: api_pb2.PodSandboxConfig, prefix: str, policy: Policy) -> NetworkPlan:
    context_path = f"{prefix}windows.security_context"
    context = (
        sandbox.windows.security_context
        if sandbox.HasField("windows") and sandbox.windows.HasField("security_context")
        else None
    )
    host_process = bool(context is not None and context.host_process)
    has_options = context is not None and context.HasField("namespace_options")
    mode_value = context.namespace_options.network if context is not None and has_options else None
    mode = _mode_name(mode_value) if mode_value is not None else None
    mode_text = mode if mode is not None else (str(mode_value) if mode_value is not None else None)

    if policy == "containerd":
        why = "is true" if host_process else "is false or unset"
        return _plan(
            policy,
            containerd_host_network(host_process),
            f"containerd reads only {context_path}.host_process, which {why}; "
            "namespace_options is ignored",
            host_process,
            mode_text,
        )

    if not has_options:
        why = "host_process is true" if host_process else "host_process is false or unset"
        return _plan(
            policy,
            host_process,
            f"no {context_path}.namespace_options ({_NO_OPTIONS_SENDERS}), so the "
            f"host_process rule decides: {why}",
            host_process,
            None,
        )

    field = f"{context_path}.namespace_options.network"
    if mode is None:
        raise InvalidRequestError(field, f"unknown NamespaceMode value {mode_value}")
    if mode in ("CONTAINER", "TARGET"):
        raise InvalidRequestError(
            field,
            f"{mode} is not possible for a Windows pod sandbox: only POD or NODE "
            "(a sandbox cannot join another container's network namespace)",
        )
    if mode == "POD" and host_process:
        raise InvalidRequestError(
            field,
            "POD contradicts host_process=true: a HostProcess sandbox runs in the host "
            "network (the kubelet sends NODE for it)",
        )
    if mode == "NODE":
        reason = f"{field} is NODE" + (" (and host_process is true)" if host_process else "")
        return _plan(policy, True, reason, host_process, mode)
    return _plan(policy, False, f"{field} is POD", host_process, mode)
