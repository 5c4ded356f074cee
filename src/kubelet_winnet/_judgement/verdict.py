"""One pod on one node: `judge` returns the `Verdict` every door renders.

The kubelet half is ``decide_sandbox`` under the kubelet profile (what is sent, or the
kubelet's own refusal text); the runtime half is ``plan_runtime`` (containerd:
``internal/cri/server/sandbox_run.go`` takes the host network from ``host_process``
alone; ``internal/cri/config/config.go`` ``GetSandboxRuntime`` refuses a handler it has
no runtime for; hcsshim PR #2531 gives a HostProcess pod under Hyper-V isolation no
network). Hyper-V is known by the handler's configured isolation, never by its name; a
pod without a RuntimeClass takes the node's default handler; a RuntimeClass the input does
not hold has a handler that is not known.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from kubelet_winnet._kubelet.kubelet_version import KubeletVersion
from kubelet_winnet._kubelet.pod import read_pod
from kubelet_winnet._kubelet.rules import PodFacts, SandboxDecision, decide_sandbox
from kubelet_winnet.runtime._cni import DnsAsked, DnsPlan
from kubelet_winnet.runtime._network import (
    Isolation,
    Mapping4,
    NodeFacts,
    PortPlan,
    RuntimeOutcome,
    containerd_host_network,
    plan_runtime,
)
from kubelet_winnet.runtime._releases import is_runtime, runtime_name

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.profile import GateResolution

__all__ = ["Network", "NodeKnowledge", "Verdict", "host_network_effect", "judge"]

NetworkValue = Literal["pod", "node", "none", "unknown"]
# What becomes of spec.hostNetwork, as audit's HOSTNETWORK column says it.
HostNetworkEffect = Literal["not-requested", "applied", "ignored", "unknown", "refused",
                            "no-network"]


@dataclass(frozen=True)
class NodeKnowledge:
    """What is known of the node a pod runs on, each fact known or not. ``runtime``: the node's
    ``containerRuntimeVersion`` (``containerd://2.3.3``; ``"containerd"`` when only the
    runtime is known; None: not known). ``files``: what the node's own files say (its
    containerd handlers and default handler, CNI, port ranges); None: not read, and
    containerd's default configuration is assumed for the handlers it names, saying so.
    ``runtime_classes``: RuntimeClass name to handler for the classes the input holds; a
    class it does not hold has a handler that is not known. ``handlers_read``: the
    handlers of ``files`` were read from the node's containerd configuration (else
    containerd's defaults are assumed for the names they define). ``kubelet_version``: the
    node's own kubelet (its Node object's ``kubeletVersion``), which
    [`judge`][kubelet_winnet.judge] takes when it is given none; None: not known."""

    runtime: str | None = None
    files: NodeFacts | None = None
    runtime_classes: Mapping[str, str] = field(default_factory=dict)
    handlers_read: bool = True  # files.handlers come from the node's containerd configuration
    # Without files: take containerd's default handler (process isolated) as the node's,
    # as check does for a manifest; False where the node's default handler is simply not
    # known (audit of a node without its files, matrix): a HostProcess pod's network then
    # rests on it, and the verdict says so as its condition.
    assume_default_handler: bool = True
    kubelet_version: str | None = None

    def __post_init__(self) -> None:
        """A wrong argument is ``InvalidArgumentError`` naming it, not an error deep in the
        judgement of the first pod."""
        from kubelet_winnet._describe import type_name
        from kubelet_winnet.errors import InvalidArgumentError

        if self.runtime is not None and type(self.runtime) is not str:
            raise InvalidArgumentError("runtime", "a containerRuntimeVersion string or None",
                                       type_name(self.runtime))
        if self.kubelet_version is not None:
            if type(self.kubelet_version) is not str:
                raise InvalidArgumentError("kubelet_version", "a kubelet version string or None",
                                           type_name(self.kubelet_version))
            from kubelet_winnet._kubelet.kubelet_version import parse_kubelet_version

            parse_kubelet_version(self.kubelet_version)  # UnsupportedVersionError, as judge's
        if self.files is not None and not isinstance(self.files, NodeFacts):
            hint = (" (read_node(...) returns the node's files: pass its .facts)"
                    if isinstance(getattr(self.files, "facts", None), NodeFacts) else "")
            raise InvalidArgumentError("files", "a runtime.NodeFacts or None",
                                       type_name(self.files) + hint)
        classes = self.runtime_classes
        if not isinstance(classes, Mapping) or not all(
                type(k) is str and type(v) is str for k, v in classes.items()):
            raise InvalidArgumentError("runtime_classes",
                                       "a mapping of RuntimeClass names to handler strings",
                                       type_name(classes))
        for name in ("handlers_read", "assume_default_handler"):
            if type(getattr(self, name)) is not bool:
                raise InvalidArgumentError(name, "a bool", type_name(getattr(self, name)))


@dataclass(frozen=True)
class Network:
    """``value``: ``pod`` (its own namespace), ``node`` (the node's), ``none`` (no network
    at all, or no sandbox), ``unknown`` (``condition`` says what decides it)."""

    value: NetworkValue
    reasons: tuple[str, ...] = ()
    condition: str = ""

    @property
    def text(self) -> str:
        """One sentence-part: the value, or the condition when it is not known."""
        return self.condition if self.value == "unknown" else f"network {self.value}"


# Built for every pod of check and audit: a NamedTuple costs a third of a frozen
# dataclass to build (as PodFacts, _kubelet/rules.py).
class Verdict(NamedTuple):
    """What a pod gets on a node: ``decision`` (what the kubelet sends, or its refusal:
    ``refused`` is the kubelet's own text), ``handler`` (None: not known), ``isolation``
    (None: not known), ``starts`` (the sandbox starts; None: not known), the runtime's
    refusal, the ``network``, each ``ports`` mapping, and the ``facts`` used."""

    decision: SandboxDecision
    host_network: bool  # spec.hostNetwork as asked
    runtime_class: str | None
    handler: str | None
    isolation: Isolation | None
    starts: bool | None
    runtime_refused: str | None
    network: Network
    ports: tuple[PortPlan, ...]
    facts: tuple[str, ...]
    notes: tuple[str, ...] = ()  # the runtime's notes (Hyper-V HostProcess and the shim)
    dns: DnsPlan | None = None  # what becomes of the sandbox's DNSConfig (None: not asked)

    @property
    def refused(self) -> str | None:
        """The kubelet's refusal text (``generatePodSandboxWindowsConfig``), or None."""
        return self.decision.error

    @property
    def host_process(self) -> bool:
        return self.decision.host_process

    @property
    def host_network_effect(self) -> HostNetworkEffect:
        """What becomes of ``spec.hostNetwork``: refused (no sandbox), not requested,
        applied (the node's network), ignored (its own), no-network, unknown."""
        return _effect(self.starts, self.host_network, self.network.value)


_EFFECTS: dict[str, HostNetworkEffect] = {
    "node": "applied", "pod": "ignored", "none": "no-network", "unknown": "unknown"}


def _effect(starts: bool | None, host_network: bool, network: str) -> HostNetworkEffect:
    if starts is False:
        return "refused"
    if not host_network:
        return "not-requested"
    return _EFFECTS[network]


def judge(
    pod: object, profile: GateResolution, node: NodeKnowledge | None = None, *,
    mappings: Sequence[Mapping4] = (), facts: PodFacts | None = None,
    dns: DnsAsked | None = None,
) -> Verdict:
    """The verdict for ``pod`` (any form the reader takes) under the kubelet ``profile``
    on ``node``. ``mappings``: the request's port mappings (container port, host port,
    protocol, host IP), for doors that built the request; ``dns``: the request's
    DNSConfig (servers, searches, options), for doors that ask whether it reaches the
    pod; ``facts``: the pod already read. Raises ``InvalidPodError`` for a pod the reader
    refuses."""
    node = node or NodeKnowledge()
    facts = facts if facts is not None else read_pod(pod)
    decision = decide_sandbox(facts, profile.sets_namespace_options)
    runtime_class = facts.runtime_class
    if decision.error is not None:
        network = Network("none", (f"the kubelet refuses the pod: {decision.error}",))
        return Verdict(decision=decision, host_network=facts.host_network,
                       runtime_class=runtime_class, handler=None, isolation=None, starts=False,
                       runtime_refused=None, network=network, ports=(),
                       facts=(f"kubelet {profile.version}",),
                       dns=None if dns is None else DnsPlan(
                           "dropped", f"the kubelet refuses the pod: {decision.error}"))
    part = _runtime_of(profile, decision, facts, runtime_class, node, mappings, dns)
    return Verdict(decision=decision, host_network=facts.host_network,
                   runtime_class=runtime_class, handler=part.handler,
                   isolation=part.isolation, starts=part.starts,
                   runtime_refused=part.runtime_refused, network=part.network,
                   ports=part.ports, facts=part.facts, notes=part.notes, dns=part.dns)


def host_network_effect(
    profile: GateResolution, node: NodeKnowledge | None = None, *,
    facts: PodFacts, decision: SandboxDecision,
) -> HostNetworkEffect:
    """``judge(...).host_network_effect`` for a pod already read and decided, without
    building the Verdict (``translate`` asks it of every hostNetwork pod)."""
    if decision.error is not None:
        return "refused"
    node = node or NodeKnowledge()
    part = _runtime_of(profile, decision, facts, facts.runtime_class, node, ())
    return _effect(part.starts, facts.host_network, part.network.value)


def _runtime_of(profile: GateResolution, decision: SandboxDecision, facts: PodFacts,
                runtime_class: str | None, node: NodeKnowledge,
                mappings: Sequence[Mapping4], dns: DnsAsked | None = None) -> _RuntimePart:
    """The runtime's half of the verdict of a pod the kubelet accepts, from what ``node``
    knows."""
    default_unknown = (runtime_class is None and node.files is None
                       and not node.assume_default_handler)
    handler: str | None = None if default_unknown else ""  # "": the node's default handler
    if runtime_class is not None:
        handler = node.runtime_classes.get(runtime_class)
    runtime = node.runtime if node.runtime is not None else (
        node.files.runtime if node.files is not None and node.files.runtime else None)
    situation = (decision.network, decision.host_process, facts.host_network, runtime_class,
                 handler, default_unknown, runtime)
    version = profile.version
    if node.files is None and not mappings and dns is None:  # most doors, for every pod:
        # one per situation (the release as two ints: a KubeletVersion hashes in Python)
        return _situation(version.minor, version.patch, *situation, node.handlers_read)
    return _runtime_part(version, *situation, node.files, node.handlers_read, mappings, dns)


class _RuntimePart(NamedTuple):
    """The runtime's half of a Verdict (its fields of the same names)."""

    handler: str | None
    isolation: Isolation | None
    starts: bool | None
    runtime_refused: str | None
    network: Network
    ports: tuple[PortPlan, ...]
    facts: tuple[str, ...]
    notes: tuple[str, ...]
    dns: DnsPlan | None = None


@functools.lru_cache(maxsize=1024)
def _situation(minor: int, patch: int | None, mode: str | None, host_process: bool,
               host_network: bool, runtime_class: str | None, handler: str | None,
               default_unknown: bool, runtime: str | None, handlers_read: bool) -> _RuntimePart:
    """`_runtime_part` on a node whose files are not known, with no port mappings
    asked about, under kubelet 1.``minor``.``patch``: a pure function of a few short
    values, so each situation is judged once (the part is immutable and shared)."""
    return _runtime_part(KubeletVersion(minor, patch), mode, host_process, host_network,
                         runtime_class, handler, default_unknown, runtime, None, handlers_read,
                         ())


def _runtime_part(version: KubeletVersion, mode: str | None, host_process: bool, host_network: bool,
                  runtime_class: str | None, handler: str | None, default_unknown: bool,
                  runtime: str | None, files: NodeFacts | None, handlers_read: bool,
                  mappings: Sequence[Mapping4], dns: DnsAsked | None = None) -> _RuntimePart:
    """The runtime's half of the verdict of a pod the kubelet accepts."""
    used = [f"kubelet {version}"]
    if default_unknown:
        used.append("the node's default handler: not known")
    if runtime_class is not None:
        used.append(f"RuntimeClass {runtime_class}: " + (
            f"handler {handler}" if handler is not None else "not in the input"))
    name = runtime_name(runtime) if runtime and "://" in runtime else runtime
    if name is None and files is not None and handlers_read and files.handlers_read:
        name = "containerd"  # its configuration was read: the release alone is not known
    used.append(f"runtime: {runtime or 'not known'}")
    # A handler not known is the node's default one (not known) or a RuntimeClass's.
    unknown = _DEFAULT_HANDLER if default_unknown else "the pod's runtime handler"
    if files is None and not mappings and dns is None:
        out = _assumed(host_process, handler, runtime if runtime and is_runtime(runtime) else "",
                       unknown)
    else:
        # read from the node's containerd config (as the door says, and as the files say)
        known = files is not None and handlers_read and files.handlers_read
        out = plan_runtime(host_process, containerd_host_network(host_process), handler,
                           mappings, files if files is not None else NodeFacts(
                               runtime=runtime if runtime and is_runtime(runtime) else ""),
                           handlers_known=known, unknown_handler=unknown, dns=dns)
    used += out.facts
    network = _network(mode, host_network, out.namespace, out.condition, out.refused,
                       out.notes)
    ports, dns_plan = out.ports, out.dns
    if name is not None and name != "containerd":
        network = Network("unknown", (), f"what {name} does with the request is not modelled")
        ports = tuple(replace(p, outcome="unknown", reason=network.condition, warning="")
                      if p.host_port > 0 else p for p in ports)
        if dns_plan is not None:
            dns_plan = DnsPlan("unknown", network.condition)
    elif name is None and out.refused is None:
        network = Network("unknown", network.reasons,
                          "the node's runtime is not known; on containerd: "
                          + (network.condition or f"network {network.value}"))
        if dns_plan is not None and dns_plan.outcome != "unknown":
            dns_plan = DnsPlan("unknown", "the node's runtime is not known; on containerd: "
                               + dns_plan.reason)
    return _RuntimePart(handler=out.handler, isolation=out.isolation, starts=out.starts,
                        runtime_refused=out.refused, network=network, ports=ports,
                        facts=tuple(used), notes=out.notes, dns=dns_plan)


# How a condition names the node's default handler when it is not known (audit without
# the node's files): containerd's default_runtime_name, which its config.toml holds.
_DEFAULT_HANDLER = "the node's default runtime handler (containerd's default_runtime_name)"


@functools.lru_cache(maxsize=256)
def _assumed(host_process: bool, handler: str | None, runtime: str,
             unknown_handler: str) -> RuntimeOutcome:
    """The runtime half on a node of ``runtime`` with containerd's default configuration
    and no port mappings asked about (pure, so kept: check judges every pod so)."""
    return plan_runtime(host_process, containerd_host_network(host_process), handler, (),
                        NodeFacts(runtime=runtime),
                        handlers_known=False, unknown_handler=unknown_handler)


def _network(mode: str | None, host_network: bool, namespace: str, condition: str,
             refused: str | None, notes: tuple[str, ...]) -> Network:
    if refused is not None:
        return Network("none", (f"the sandbox is not created: {refused}",))
    if namespace == "unknown":
        return Network("unknown", notes, condition)
    if namespace == "none":
        return Network("none", notes)
    if namespace == "node":
        return Network("node", ("HostProcess: containerd gives the sandbox the node's "
                                "network (sandbox_run.go reads host_process alone)", *notes))
    if host_network:
        sent = "network NODE is sent, but " if mode == "NODE" else ""
        return Network("pod", (f"{sent}containerd takes host networking on Windows from "
                               "host_process alone: the pod gets its own network namespace",))
    return Network("pod", ("the pod gets its own network namespace",))
