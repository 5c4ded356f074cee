"""What a runtime does with a sandbox on one Windows node, without protobuf: the node's
facts (:class:`NodeFacts`; its CNI configuration and the plugins' behaviour are
:mod:`._cni`) and :func:`plan_runtime`, the one home of the runtime's half of every
verdict (which handler, which isolation, whether the sandbox starts, which network, each
hostPort and the DNS). :mod:`._node` decodes a request into it; the judgement
(``kubelet_winnet._judgement``) calls it with what the kubelet decided.

Sources, all read at the tags or commits named (``git show``):

* containerd ``internal/cri/server/sandbox_run.go`` (main @ 301026e5): the pod network
  is set up only ``if !hostNetwork(config)``, and ``toCNIPortMappings`` drops mappings
  with ``HostPort <= 0`` before ``cni.WithCapabilityPortMap``;
  ``internal/cri/config/config.go`` ``GetSandboxRuntime``: an empty handler is the
  default runtime, an unknown one fails with ``no runtime for "<handler>" is configured``.
* hcsshim PR #2531 (see :mod:`._releases`): HostProcess under Hyper-V isolation runs in
  the utility VM, which has no network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kubelet_winnet._describe import type_name
from kubelet_winnet.errors import InvalidArgumentError, NodeConfigError
from kubelet_winnet.runtime._cni import (
    CniNetwork,
    DnsAsked,
    DnsPlan,
    PortOutcome,
    dns_outcome,
    port_outcome,
    require_str,
)
from kubelet_winnet.runtime._handlers import DEFAULT_ISOLATION, Isolation
from kubelet_winnet.runtime._releases import (
    DEFAULT_RUNTIME_NAME,
    HOST_PROCESS_IN_UVM,
    check_runtime,
    from_release,
    parse_runtime,
    shim_has_hyperv_host_process,
)

__all__ = [
    "Isolation",
    "Mapping4",
    "NetworkNamespace",
    "NodeFacts",
    "PortPlan",
    "PortRange",
    "RuntimeOutcome",
    "plan_runtime",
]

# "unknown": a fact the answer depends on is not known (RuntimeOutcome.condition).
NetworkNamespace = Literal["node", "pod", "none", "unknown"]

@dataclass(frozen=True)
class PortRange:
    """Ports ``start`` to ``end`` (inclusive) that Windows keeps: ``kind`` ``excluded``
    (``netsh int ipv4 show excludedportrange``; a bind fails with WSAEACCES 10013) or
    ``dynamic`` (``netsh int ipv4 show dynamicport``: ephemeral ports, taken by outgoing
    connections and by HNS for SNAT)."""

    start: int
    end: int
    kind: Literal["excluded", "dynamic"] = "excluded"
    administered: bool = False
    protocol: Literal["tcp", "udp"] = "tcp"  # netsh keeps each protocol's ranges apart

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if type(value) is not int:
                raise InvalidArgumentError(name, "an int port", type_name(value))
            if not 1 <= value <= 65535:
                raise NodeConfigError(name, f"port {value} is outside 1 to 65535")
        if self.start > self.end:
            raise NodeConfigError("end", f"range {self.start}-{self.end} ends before it starts")
        if self.kind not in ("excluded", "dynamic"):
            raise NodeConfigError("kind", f"must be excluded or dynamic, not {self.kind!r}")
        if self.administered is not True and self.administered is not False:
            raise InvalidArgumentError("administered", "a bool", type_name(self.administered))
        if self.protocol not in ("tcp", "udp"):
            raise NodeConfigError("protocol", f"must be tcp or udp, not {self.protocol!r}")

    def __contains__(self, port: object) -> bool:
        return type(port) is int and self.start <= port <= self.end

    def __str__(self) -> str:
        return f"{self.start}-{self.end}"


@dataclass(frozen=True)
class NodeFacts:
    """What is known of one Windows node. Every field may be left at its default, which
    means "not known" (``handlers``: containerd's default Windows configuration)."""

    runtime: str = ""  # containerRuntimeVersion: "containerd://2.4.0"
    handlers: Mapping[str, Isolation] = field(default_factory=lambda: dict(DEFAULT_ISOLATION))
    default_handler: str = DEFAULT_RUNTIME_NAME
    cni: CniNetwork | None = None
    excluded_ports: tuple[PortRange, ...] = ()
    dynamic_ports: PortRange | None = None
    # False: no containerd configuration was read (sources.read_node of a node without
    # one), so ``handlers`` are containerd's defaults, assumed, and a handler they lack
    # is not known rather than refused.
    handlers_read: bool = True
    # What keeps the node from making any sandbox, each a sentence with its file and line
    # (containerd does not start, the kubelet exits at start-up, no CNI plugin is found):
    # the node's own findings say them (_lint/node_checks.py), and every pod is refused.
    stops: tuple[str, ...] = ()
    # What keeps every sandbox with its own network namespace from being made (no CNI
    # plugin is found): its CNI ADD fails, so RunPodSandbox does; a HostProcess sandbox
    # never reaches CNI.
    cni_fails: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if type(self.handlers_read) is not bool:
            raise InvalidArgumentError("handlers_read", "a bool", type_name(self.handlers_read))
        for name in ("stops", "cni_fails"):
            said = getattr(self, name)
            if not isinstance(said, tuple) or not all(type(s) is str for s in said):
                raise InvalidArgumentError(name, "a tuple of strings", type_name(said))
        if type(self.runtime) is not str:
            raise InvalidArgumentError("runtime", "a str like 'containerd://2.4.0'",
                                       type_name(self.runtime))
        check_runtime(self.runtime)
        if not isinstance(self.handlers, Mapping):
            raise InvalidArgumentError("handlers", "a mapping of handler name to isolation",
                                       type_name(self.handlers))
        require_str("default_handler", self.default_handler)
        if self.cni is not None and not isinstance(self.cni, CniNetwork):
            raise InvalidArgumentError("cni", "a CniNetwork or None", type_name(self.cni))
        if not isinstance(self.excluded_ports, tuple):
            raise InvalidArgumentError("excluded_ports", "a tuple of PortRange",
                                       type_name(self.excluded_ports))
        if self.dynamic_ports is not None and not isinstance(self.dynamic_ports, PortRange):
            raise InvalidArgumentError("dynamic_ports", "a PortRange or None",
                                       type_name(self.dynamic_ports))
        for name, isolation in self.handlers.items():
            require_str("handlers", name)
            if isolation not in ("process", "hyperv"):
                raise NodeConfigError(f"handlers[{name!r}]",
                                      f"isolation must be process or hyperv, not {isolation!r}")
        if self.default_handler not in self.handlers:
            # containerd's ValidatePluginConfig refuses to start with this text.
            raise NodeConfigError(
                "default_handler",
                f"no corresponding runtime configured in `containerd.runtimes` for "
                f"`containerd` `default_runtime_name = \"{self.default_handler}\"`",
            )
        for index, item in enumerate(self.excluded_ports):
            if not isinstance(item, PortRange):
                raise InvalidArgumentError(f"excluded_ports[{index}]", "a PortRange",
                                           type_name(item))
            if item.kind != "excluded":  # a dynamic range is not one a bind is refused in
                raise NodeConfigError(f"excluded_ports[{index}]",
                                      f"the range {item} is of kind {item.kind}, not excluded")
        if self.dynamic_ports is not None and self.dynamic_ports.kind != "dynamic":
            raise NodeConfigError("dynamic_ports", f"the range {self.dynamic_ports} is of "
                                  f"kind {self.dynamic_ports.kind}, not dynamic")


@dataclass(frozen=True)
class PortPlan:
    """One ``PortMapping`` of the request and what becomes of it on the node."""

    container_port: int
    host_port: int
    protocol: str
    host_ip: str
    outcome: PortOutcome
    reason: str
    warning: str = ""

    @property
    def applied(self) -> bool | None:
        """True when the node's port reaches the pod, False when not, None when unknown."""
        if self.outcome in ("applied", "host"):
            return True
        return None if self.outcome == "unknown" else False


def _dns(asked: DnsAsked | None, namespace: NetworkNamespace, condition: str,
         node: NodeFacts, refused: str | None = None) -> DnsPlan | None:
    """What becomes of the sandbox's DNSConfig ``asked`` (None: not asked about)."""
    if asked is None:
        return None
    if refused is not None:
        return DnsPlan("dropped", f"the sandbox is not created: {refused}")
    if namespace == "none":
        return DnsPlan("dropped", "the pod has no network at all")
    if namespace == "unknown":  # only a HostProcess sandbox's network is ever not known
        return DnsPlan("host", "a HostProcess sandbox never reaches CNI (containerd "
                       "sandbox_run.go): the pod resolves names as the node does, if it has a "
                       f"network at all ({condition})")
    if namespace == "node":
        return DnsPlan("host", "a host-network sandbox never reaches CNI (containerd "
                       "sandbox_run.go): the pod resolves names as the node does, whatever "
                       "its dnsPolicy and dnsConfig")
    if node.cni is None:
        return DnsPlan("unknown", "the node's CNI configuration is not known: the pod's DNS "
                       "settings reach it only if the plugin that makes its endpoint declares "
                       "the dns capability")
    return dns_outcome(node.cni, asked)


def _ranges(port: int, protocol: str, node: NodeFacts) -> tuple[str, str]:
    """(reason it cannot be bound, warning) for a host port inside Windows' ranges of the
    mapping's own protocol (a UDP exclusion leaves the TCP port free)."""
    for kept in node.excluded_ports:
        if kept.protocol == protocol and port in kept:
            return (f"{protocol.upper()} port {port} is inside the excluded range {kept} "
                    "(netsh excludedportrange): binding it fails with WSAEACCES 10013"), ""
    dynamic = node.dynamic_ports
    if dynamic is not None and dynamic.protocol == protocol and port in dynamic:
        return "", (f"{protocol.upper()} port {port} is inside the dynamic range {dynamic}: "
                    "an outgoing connection or HNS SNAT may hold it first")
    return "", ""




def _not_host(container: int, host: int, protocol: str, ip: str) -> PortPlan:
    return PortPlan(container, host, protocol, ip, "not-a-host-port",
                    "no hostPort: containerd drops mappings with host_port <= 0 "
                    "(toCNIPortMappings)")


# One mapping of the request: container port, host port, protocol, host IP.
Mapping4 = tuple[int, int, str, str]

# hcsshim PR #2531 as a user can check it on a node (made from the rows of ._releases).
_UVM_SHIM = (f"hcsshim {HOST_PROCESS_IN_UVM.hcsshim}+, "
             f"PR #{HOST_PROCESS_IN_UVM.pull_request}")
HYPERV_HOST_PROCESS_RELEASES = f"{from_release(HOST_PROCESS_IN_UVM)} ({_UVM_SHIM})"


@dataclass(frozen=True)
class RuntimeOutcome:
    """The runtime's half of a verdict. ``namespace``: ``node`` (the host's network),
    ``pod`` (its own), ``none`` (no network at all: a Hyper-V HostProcess pod on a shim
    with PR #2531, or a sandbox the runtime refuses), ``unknown`` (``condition`` says what
    decides it, as a sentence a user can act on). ``handler`` None: not known (a
    RuntimeClass the input does not hold); ``isolation`` None: not known; ``starts``
    None: not known (a handler the node's configuration may lack)."""

    namespace: NetworkNamespace
    handler: str | None
    isolation: Isolation | None
    ports: tuple[PortPlan, ...]
    refused: str | None = None
    condition: str = ""
    notes: tuple[str, ...] = ()
    starts: bool | None = True
    facts: tuple[str, ...] = ()  # the node facts this outcome used, each said as known or not
    dns: DnsPlan | None = None  # what becomes of the sandbox's DNSConfig (None: not asked)


def _release(node: NodeFacts) -> bool | None:
    """Whether the node's shim has hcsshim PR #2531; None when its release is not known."""
    name, version = parse_runtime(node.runtime)
    if name != "containerd" or version is None:
        return None
    return shim_has_hyperv_host_process(node.runtime)


def _isolation(handler: str | None, node: NodeFacts, handlers_known: bool,
               facts: list[str]) -> tuple[Isolation | None, str | None]:
    """(isolation, runtime refusal) of ``handler`` (None: not known) on ``node``."""
    if handler is None:
        facts.append("runtime handler: not known")
        return None, None
    if handlers_known:
        facts.append("handler isolation: from the node's containerd configuration")
        isolation = node.handlers.get(handler)
        if isolation is None:
            # GetSandboxRuntime (internal/cri/config/config.go).
            return None, f"no runtime for \"{handler}\" is configured"
        return isolation, None
    assumed = DEFAULT_ISOLATION.get(handler)
    facts.append("handler isolation: " + (
        "assumed from containerd's default configuration" if assumed else "not known"))
    return assumed, None


def _host_process_namespace(
    handler: str | None, isolation: Isolation | None, node: NodeFacts, notes: list[str],
    unknown_handler: str = "the pod's runtime handler",
) -> tuple[NetworkNamespace, str]:
    """(namespace, condition) of a HostProcess sandbox: the host's network, unless it is
    Hyper-V isolated on a shim with PR #2531 (no network at all)."""
    shim = _release(node)
    if isolation == "process":
        return "node", ""
    if shim is False:  # a shim before PR #2531: the host's network whatever the isolation
        if isolation == "hyperv":
            notes.append(
                f"HostProcess under the Hyper-V handler {handler!r}: hcsshim before "
                f"{HOST_PROCESS_IN_UVM.hcsshim} runs its containers on the host next to an "
                "unused utility VM (read from the code, not run); from "
                f"{HOST_PROCESS_IN_UVM.hcsshim} it has no network")
        return "node", ""
    which = f"the handler {handler!r}" if handler is not None else unknown_handler
    if isolation == "hyperv":
        if shim:
            notes.append(f"HostProcess under the Hyper-V handler {handler!r}: the shim of "
                         f"{node.runtime} ({_UVM_SHIM}) runs it in the "
                         "utility VM, which has no network")
            return "none", ""
        return "unknown", (f"no network if the node runs {HYPERV_HOST_PROCESS_RELEASES}, "
                           f"since {which} is Hyper-V isolated; the node's network before")
    where = "" if shim else f" on {HYPERV_HOST_PROCESS_RELEASES}"
    return "unknown", (f"no network if {which} is Hyper-V isolated (SandboxIsolation = 1)"
                       f"{where}; otherwise the node's network")


def containerd_host_network(host_process: bool) -> bool:
    """Whether containerd gives a Windows sandbox the node's network
    (``internal/cri/server/helpers.go`` ``hostNetwork(config)``, Windows branch): from
    ``host_process`` alone; ``namespace_options`` is never read."""
    return host_process


def _refused(handler: str | None, isolation: Isolation | None, mappings: Sequence[Mapping4],
             refused: str, facts: list[str], dns: DnsAsked | None,
             node: NodeFacts) -> RuntimeOutcome:
    """A sandbox the runtime does not create, for ``refused``: no network, no port."""
    ports = tuple(PortPlan(c, h, p, ip, "dropped", f"the sandbox is not created: {refused}")
                  if h > 0 else _not_host(c, h, p, ip) for c, h, p, ip in mappings)
    return RuntimeOutcome("none", handler, isolation, ports, refused=refused, starts=False,
                          facts=tuple(facts), dns=_dns(dns, "none", "", node, refused))


def plan_runtime(
    host_process: bool, host_network: bool, handler: str | None,
    mappings: Sequence[Mapping4], node: NodeFacts, *, handlers_known: bool = True,
    unknown_handler: str = "the pod's runtime handler", dns: DnsAsked | None = None,
) -> RuntimeOutcome:
    """What the runtime of ``node`` does with a sandbox the kubelet asked for:
    ``host_process`` as sent, ``host_network`` as the runtime's policy reads the request
    (containerd: ``host_process`` alone), ``handler`` the runtime handler (``""``: the
    node's default; None: not known), ``mappings`` the request's port mappings.
    ``handlers_known``: ``node.handlers`` was read from the node's containerd
    configuration (else containerd's default handlers are assumed, and said so);
    ``unknown_handler``: how a condition names a handler that is not known; ``dns``: the
    request's DNSConfig (servers, searches, options), to say what reaches the endpoint."""
    facts: list[str] = []
    effective = handler or node.default_handler if handler is not None else None
    isolation, refused = _isolation(effective, node, handlers_known, facts)
    if refused is not None:
        return _refused(effective, None, mappings, refused, facts, dns, node)
    if node.stops:  # the node makes no sandbox at all, whatever the handler
        return _refused(effective, isolation, mappings, node.stops[0], facts, dns, node)
    notes: list[str] = []
    namespace: NetworkNamespace = "node" if host_network else "pod"
    condition = ""
    if host_process:
        facts.append("runtime release: " + (node.runtime or "not known"))
        namespace, condition = _host_process_namespace(effective, isolation, node, notes,
                                                       unknown_handler)
    if namespace == "pod" and node.cni_fails:  # its CNI ADD fails: RunPodSandbox fails
        return _refused(effective, isolation, mappings, node.cni_fails[0], facts, dns, node)
    starts = None if effective is None and handlers_known else True
    ports = _ports(mappings, namespace, condition, node)
    facts.append("CNI configuration: " + ("known" if node.cni is not None else "not known"))
    return RuntimeOutcome(namespace, effective, isolation, ports, None, condition,
                          tuple(notes), starts, tuple(facts),
                          _dns(dns, namespace, condition, node))


def _ports(mappings: Sequence[Mapping4], namespace: NetworkNamespace, condition: str,
           node: NodeFacts) -> tuple[PortPlan, ...]:
    out: list[PortPlan] = []
    cni = port_outcome(node.cni) if node.cni is not None else None
    for c, h, p, ip in mappings:
        if h <= 0:
            out.append(_not_host(c, h, p, ip))
            continue
        if namespace == "none":
            out.append(PortPlan(c, h, p, ip, "dropped", "the pod has no network at all"))
            continue
        blocked, warning = _ranges(h, p, node)
        outcome: PortOutcome
        if namespace == "unknown":
            outcome, reason = "unknown", f"it depends on the pod's network: {condition}"
        elif namespace == "node":
            outcome = "host"
            reason = ("a host-network sandbox never reaches CNI (containerd sandbox_run.go): "
                      f"the container listens on the node's port {h} itself")
        elif cni is None:
            outcome, reason = "unknown", "the node's CNI configuration is not known"
        else:
            outcome, reason = cni
        if blocked and outcome in ("applied", "host", "unknown"):
            outcome, reason = "dropped", blocked
        out.append(PortPlan(c, h, p, ip, outcome, reason, warning))
    return tuple(out)
