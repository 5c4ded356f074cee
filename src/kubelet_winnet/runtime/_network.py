"""What a runtime does with a sandbox on one Windows node, without protobuf: the node's
facts (:class:`NodeFacts`), the CNI plugins' behaviour, and :func:`plan_runtime`, the one
home of the runtime's half of every verdict (which handler, which isolation, whether the
sandbox starts, which network, each hostPort). :mod:`._node` decodes a request into it;
the judgement (``kubelet_winnet._judgement``) calls it with what the kubelet decided.

Sources, all read at the tags or commits named (``git show``):

* containerd ``internal/cri/server/sandbox_run.go`` (main @ 301026e5): the pod network
  is set up only ``if !hostNetwork(config)``, and ``toCNIPortMappings`` drops mappings
  with ``HostPort <= 0`` before ``cni.WithCapabilityPortMap``;
  ``internal/cri/config/config.go`` ``GetSandboxRuntime``: an empty handler is the
  default runtime, an unknown one fails with ``no runtime for "<handler>" is configured``.
* containerd ``internal/cri/server/sandbox_run.go`` ``cniNamespaceOpts`` (the same file
  for Windows and Linux): the sandbox's ``DNSConfig`` goes to CNI only as the ``dns``
  capability (``toCNIDNS``, ``cni.WithCapabilityDNS``); on Windows nothing else carries
  it (the Windows sandbox and container specs set no DNS), so a pod's DNS is what its CNI
  plugin makes of that capability.
* libcni ``api.go`` ``injectRuntimeConfig`` (containernetworking/cni @ 3f51e880): a
  capability argument reaches a plugin only when its configuration declares it; an
  undeclared one is dropped without an error.
* CNI ``pkg/types/types.go`` ``DNS`` (containernetworking/cni @ 3f51e880): a
  configuration's own ``dns`` block is ``nameservers``, ``domain``, ``search`` and
  ``options``; containernetworking/plugins ``pkg/hns/netconf_windows.go`` ``GetDNS``
  starts from it and replaces only what the runtime's DNS sets, so without the capability
  the endpoint gets that block as written, the same for every pod.
* hcsshim PR #2531 (see :mod:`._releases`): HostProcess under Hyper-V isolation runs in
  the utility VM, which has no network.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, NodeConfigError
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
    "CNI_DNS",
    "CNI_PLUGINS",
    "CniDns",
    "CniNetwork",
    "CniPlugin",
    "DnsAsked",
    "DnsBehaviour",
    "DnsPlan",
    "Isolation",
    "Mapping4",
    "NetworkNamespace",
    "NodeFacts",
    "PluginBehaviour",
    "PortPlan",
    "PortRange",
    "RuntimeOutcome",
    "plan_runtime",
]

# "unknown": a fact the answer depends on is not known (RuntimeOutcome.condition).
NetworkNamespace = Literal["node", "pod", "none", "unknown"]
PortOutcome = Literal["applied", "dropped", "host", "not-a-host-port", "unknown"]

_PORTMAP = "portMappings"
_DNS = "dns"


@dataclass(frozen=True)
class PluginBehaviour:
    """What a CNI plugin type does with ``runtimeConfig.portMappings`` on Windows.
    ``applies``: ``yes``, ``no`` (declared in samples but never used), ``delegate`` (hands
    ``runtimeConfig`` to its delegate) or ``unknown`` (not read upstream)."""

    applies: Literal["yes", "no", "delegate", "unknown"]
    note: str
    source: str


# Per plugin type, from the plugins' own sources (each row's `source`; the user's view is
# docs/rules/node-host-port-dropped.md).
CNI_PLUGINS: Mapping[str, PluginBehaviour] = {
    "win-bridge": PluginBehaviour(
        "yes",
        "applies them since containernetworking/plugins v0.8.6 (PR #475); older releases "
        "dropped them silently",
        "containernetworking/plugins plugins/main/windows/win-bridge/win-bridge_windows.go "
        "(n.ApplyPortMappingPolicy); PR #475, merged 2020-04-22",
    ),
    "win-overlay": PluginBehaviour(
        "no",
        "never applies them, although its own sample declares the capability",
        "containernetworking/plugins plugins/main/windows/win-overlay/win-overlay_windows.go "
        "(no port mapping code) and sample-v2.conf",
    ),
    "sdnbridge": PluginBehaviour(
        "yes", "adds an HCN PortMapping policy per mapping",
        "microsoft/windows-container-networking cni/cni.go GetEndpointInfo",
    ),
    "sdnoverlay": PluginBehaviour(
        "yes", "adds an HCN PortMapping policy per mapping",
        "microsoft/windows-container-networking cni/cni.go GetEndpointInfo",
    ),
    "nat": PluginBehaviour(
        "yes", "adds an HCN PortMapping policy per mapping",
        "microsoft/windows-container-networking cni/cni.go GetEndpointInfo",
    ),
    "azure-vnet": PluginBehaviour(
        "yes", "adds a port mapping policy per mapping",
        "Azure/azure-container-networking cni/network/network_windows.go "
        "getPoliciesFromRuntimeCfg",
    ),
    "flannel": PluginBehaviour(
        "delegate", "hands runtimeConfig to its delegate (win-bridge unless set)",
        "flannel-io/cni-plugin flannel.go (runtimeConfig copied to the delegate), "
        "flannel_windows.go (delegate type defaults to win-bridge)",
    ),
    "calico": PluginBehaviour(
        "unknown", "its Windows configuration declares only dns; whether it would apply "
        "port mappings was not read",
        "projectcalico/calico node/windows-packaging/CalicoWindows/cni.conf.template",
    ),
    "antrea": PluginBehaviour(
        "unknown", "its Windows configuration declares only dns and chains no portmap",
        "antrea-io/antrea build/charts/antrea-windows/conf/antrea-cni.conflist",
    ),
}
_FLANNEL_DEFAULT_DELEGATE = "win-bridge"

# The DNSConfig lists a runtime sends (cri-api DNSConfig: servers, searches, options).
DNS_LISTS = ("servers", "searches", "options")
# One sandbox's DNSConfig as sent: its servers, searches and options.
DnsAsked = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
DnsOutcome = Literal["applied", "partly", "dropped", "host", "unknown"]


@dataclass(frozen=True)
class DnsBehaviour:
    """What a CNI plugin type puts on the endpoint from ``runtimeConfig.dns`` on Windows.
    ``takes``: the lists it reads from it; ``when``: empty when each taken list replaces
    the configuration's own only when it is not empty, else the lists one of which must
    be non-empty for the runtime's DNS to be taken at all (the configuration's own
    ``dns`` block otherwise)."""

    takes: frozenset[str]
    when: frozenset[str]
    note: str
    source: str


_SERVERS_SEARCHES = frozenset({"servers", "searches"})
_ALL_LISTS = frozenset(DNS_LISTS)
_HNS_NETCONF = DnsBehaviour(
    _SERVERS_SEARCHES, frozenset(),
    "takes only servers and searches from runtimeConfig.dns, each when not empty, and never "
    "options",
    "containernetworking/plugins pkg/hns/netconf_windows.go (NetConf.GetDNS; RuntimeDNS "
    "has no options), since v0.8.0 (commit b71e8db6)",
)
_SDN = DnsBehaviour(
    _ALL_LISTS, frozenset(),
    "takes servers, searches and options from runtimeConfig.dns, each when not empty",
    "microsoft/windows-container-networking cni/cni.go GetNetworkInfo (called by "
    "common/core/network.go for sdnbridge, sdnoverlay and nat)",
)
# Per plugin type, from the plugins' own sources (each row's `source`; the user's view is
# docs/rules/node-dns-dropped.md). A type not here (or flannel's delegate not here) is
# not modelled. flannel hands runtimeConfig to its delegate, as for port mappings.
CNI_DNS: Mapping[str, DnsBehaviour] = {
    "win-bridge": _HNS_NETCONF,
    "win-overlay": _HNS_NETCONF,
    "sdnbridge": _SDN,
    "sdnoverlay": _SDN,
    "nat": _SDN,
    "azure-vnet": DnsBehaviour(
        _ALL_LISTS, _SERVERS_SEARCHES,
        "takes the servers, searches and options of runtimeConfig.dns together when its "
        "servers or searches are not empty",
        "Azure/azure-container-networking cni/network/network_windows.go "
        "getEndpointDNSSettings, getCustomDNS",
    ),
    "calico": DnsBehaviour(
        _ALL_LISTS, frozenset({"servers"}),
        "takes the servers, searches and options of runtimeConfig.dns together when its "
        "servers are not empty",
        "projectcalico/calico cni-plugin/pkg/dataplane/windows/dataplane_windows.go "
        "DoNetworking (result.DNS becomes the endpoint's Dns), pkg/types/types.go "
        "RuntimeConfigDNS",
    ),
    "antrea": DnsBehaviour(
        _SERVERS_SEARCHES, frozenset(),
        "takes only servers and searches from runtimeConfig.dns, each when not empty, and never "
    "options",
        "antrea-io/antrea pkg/agent/cniserver/server_windows.go updateResultDNSConfig",
    ),
}


@dataclass(frozen=True)
class DnsPlan:
    """What becomes of the sandbox's ``DNSConfig`` on the node: ``applied`` (every list
    it sets reaches the pod's endpoint), ``partly`` (some do; ``reaches`` names them),
    ``dropped`` (none does: the endpoint gets the CNI configuration's own ``dns`` block,
    the same for every pod), ``host`` (the pod uses the node's own resolver settings),
    ``unknown`` (``reason`` says what decides it)."""

    outcome: DnsOutcome
    reason: str
    reaches: tuple[str, ...] = ()

    @property
    def applied(self) -> bool | None:
        """True when every list the pod's DNSConfig sets reaches it, None when not known."""
        if self.outcome == "applied":
            return True
        return None if self.outcome == "unknown" else False


def _text(name: str, value: object) -> None:
    if type(value) is not str:
        raise InvalidArgumentError(name, "a str", type_name(value))


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


def _texts(name: str, values: object) -> None:
    if not isinstance(values, tuple):
        raise InvalidArgumentError(name, "a tuple of str", type_name(values))
    for value in values:
        _text(name, value)


@dataclass(frozen=True)
class CniDns:
    """A CNI configuration's own ``dns`` block (CNI ``types.DNS``): what the plugin puts
    on the endpoint of every pod when the runtime's DNS does not reach it. All empty: the
    configuration has no block (Go decodes an absent one and ``{}`` alike)."""

    nameservers: tuple[str, ...] = ()
    domain: str = ""
    search: tuple[str, ...] = ()
    options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _texts("nameservers", self.nameservers)
        _text("domain", self.domain)
        _texts("search", self.search)
        _texts("options", self.options)

    def __bool__(self) -> bool:
        return bool(self.nameservers or self.domain or self.search or self.options)

    def __str__(self) -> str:
        """The block as a reason quotes it: each list's first values, bounded."""
        parts = [f"{key} {_names(values)}" for key, values in (
            ("nameservers", self.nameservers), ("search", self.search),
            ("options", self.options)) if values]
        if self.domain:
            parts.insert(1 if self.nameservers else 0, f"domain {cut(self.domain, 60)}")
        return "; ".join(parts)


@dataclass(frozen=True)
class CniPlugin:
    """One plugin of a CNI network configuration: its ``type``, the capabilities its
    configuration declares true, its own ``dns`` block, and, for flannel, its delegate's
    type and ``dns`` block (flannel hands its delegate the ``delegate`` object as written,
    never its own ``dns``: flannel-io/cni-plugin ``flannel_windows.go`` ``doCmdAdd``)."""

    type: str
    capabilities: frozenset[str] = frozenset()
    delegate: str | None = None
    dns: CniDns = CniDns()
    delegate_dns: CniDns = CniDns()

    def __post_init__(self) -> None:
        _text("type", self.type)
        if not self.type:  # as a file's plugin without one is refused (sources/node/cni.py)
            raise NodeConfigError("type", "a CNI plugin configuration needs a type")
        if not isinstance(self.capabilities, frozenset):
            raise InvalidArgumentError("capabilities", "a frozenset of str",
                                       type_name(self.capabilities))
        for name in self.capabilities:
            _text("capabilities", name)
        if self.delegate is not None:
            _text("delegate", self.delegate)
        for name in ("dns", "delegate_dns"):
            if not isinstance(getattr(self, name), CniDns):
                raise InvalidArgumentError(name, "a CniDns", type_name(getattr(self, name)))


@dataclass(frozen=True)
class CniNetwork:
    """The CNI network configuration containerd uses (the first file of ``conf_dir`` in
    lexical order: ``max_conf_num = 1`` on Windows). ``source`` names the file."""

    name: str
    plugins: tuple[CniPlugin, ...]
    source: str = ""

    def __post_init__(self) -> None:
        _text("name", self.name)
        _text("source", self.source)
        if not self.name:
            raise NodeConfigError(self.source or "name", "a CNI configuration needs a name")
        if not isinstance(self.plugins, tuple):
            raise InvalidArgumentError("plugins", "a tuple of CniPlugin", type_name(self.plugins))
        if not self.plugins:
            raise NodeConfigError(self.source or "cni", "a CNI configuration with no plugin")
        for index, plugin in enumerate(self.plugins):
            if not isinstance(plugin, CniPlugin):
                raise InvalidArgumentError(f"plugins[{index}]", "a CniPlugin", type_name(plugin))


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

    def __post_init__(self) -> None:
        if type(self.runtime) is not str:
            raise InvalidArgumentError("runtime", "a str like 'containerd://2.4.0'",
                                       type_name(self.runtime))
        check_runtime(self.runtime)
        if not isinstance(self.handlers, Mapping):
            raise InvalidArgumentError("handlers", "a mapping of handler name to isolation",
                                       type_name(self.handlers))
        _text("default_handler", self.default_handler)
        if self.cni is not None and not isinstance(self.cni, CniNetwork):
            raise InvalidArgumentError("cni", "a CniNetwork or None", type_name(self.cni))
        if not isinstance(self.excluded_ports, tuple):
            raise InvalidArgumentError("excluded_ports", "a tuple of PortRange",
                                       type_name(self.excluded_ports))
        if self.dynamic_ports is not None and not isinstance(self.dynamic_ports, PortRange):
            raise InvalidArgumentError("dynamic_ports", "a PortRange or None",
                                       type_name(self.dynamic_ports))
        for name, isolation in self.handlers.items():
            _text("handlers", name)
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


def _effective(plugin: CniPlugin) -> tuple[str, str]:
    """(how a reason names the plugin, the type whose code runs): a delegating plugin
    (flannel) runs its delegate's type with the runtimeConfig it was given."""
    found = CNI_PLUGINS.get(plugin.type)
    if found is not None and found.applies == "delegate":
        kind = plugin.delegate or _FLANNEL_DEFAULT_DELEGATE
        return f"{plugin.type} (delegate {kind})", kind
    return plugin.type, plugin.type


def _behaviour(plugin: CniPlugin) -> tuple[str, PluginBehaviour | None]:
    name, kind = _effective(plugin)
    return name, CNI_PLUGINS.get(kind)


def _names(names: Iterable[str], shown: int = 8) -> str:
    """Each name once, the first ``shown`` of them (each cut to 60 characters), then how
    many more: a reason stays a sentence whatever the file holds."""
    unique = list(dict.fromkeys(names))
    kept = [cut(n, 60) for n in unique[:shown]]
    more = len(unique) - len(kept)
    return ", ".join(kept) + (f" and {more} more" if more else "")


def _cni_outcome(cni: CniNetwork) -> tuple[PortOutcome, str]:
    """Whether the capability reaches a plugin that applies it (libcni
    injectRuntimeConfig: only plugins declaring it get it)."""
    declared = [p for p in cni.plugins if _PORTMAP in p.capabilities]
    where = f"CNI network {cni.name!r}" + (f" ({cni.source})" if cni.source else "")
    if not declared:
        types = _names(p.type for p in cni.plugins)
        return "dropped", (
            f"no plugin of {where} declares the portMappings capability ({types}), so the "
            "runtime's port mappings never reach CNI and nothing maps the port"
        )
    unknown: list[str] = []
    ignoring: list[str] = []
    for plugin in declared:
        name, behaviour = _behaviour(plugin)
        if behaviour is not None and behaviour.applies == "yes":
            return "applied", f"{name} in {where} declares portMappings and {behaviour.note}"
        if behaviour is not None and behaviour.applies == "no":
            ignoring.append(f"{name} {behaviour.note}")
        else:
            unknown.append(name)
    if unknown:
        return "unknown", (f"{_names(unknown)} in {where} declares portMappings; what it "
                           "does with them is not modelled")
    ignored = list(dict.fromkeys(ignoring))
    more = f"; and {len(ignored) - 3} more" if len(ignored) > 3 else ""
    return "dropped", f"{where} declares portMappings, but {'; '.join(ignored[:3])}{more}"


def _listed(lists: Sequence[str]) -> str:
    return " and ".join(lists) if len(lists) < 3 else f"{lists[0]}, {lists[1]} and {lists[2]}"


def _dns_outcome(cni: CniNetwork, asked: DnsAsked) -> DnsPlan:
    """What the endpoint gets of ``asked``: the network's first plugin creates the
    endpoint, and gets ``runtimeConfig.dns`` only when it declares the capability
    (libcni injectRuntimeConfig); each plugin type then takes what ``CNI_DNS`` says."""
    where = f"CNI network {cni.name!r}" + (f" ({cni.source})" if cni.source else "")
    first = cni.plugins[0]
    static = _static(first)
    if _DNS not in first.capabilities:
        others = _names(p.type for p in cni.plugins[1:] if _DNS in p.capabilities)
        also = f" ({others} declares it, but does not make the endpoint)" if others else ""
        near = sorted(c for c in first.capabilities if "dns" in c.lower())
        if near:  # microsoft/windows-container-networking's examples say dnsCapabilities
            also += (f" (it declares {_names(near)}, which names no capability containerd "
                     "passes: the name is dns)")
        return DnsPlan("dropped", (
            f"{_names([first.type])}, the first plugin of {where}, which makes the endpoint, "
            f"does not declare the dns capability{also}, so the pod's DNS settings never "
            f"reach it: {static}"))
    shown, kind = _effective(first)
    name = _names([shown])
    behaviour = CNI_DNS.get(kind)
    if behaviour is None:
        return DnsPlan("unknown", f"{name} in {where} declares dns; what it does with the "
                       "pod's DNS settings is not modelled")
    sets = [lst for lst, values in zip(DNS_LISTS, asked, strict=True) if values]
    if not sets:
        return DnsPlan("applied", f"the sandbox's DNSConfig sets nothing, so {static}")
    taken = not behaviour.when or any(
        values for lst, values in zip(DNS_LISTS, asked, strict=True) if lst in behaviour.when)
    reaches = tuple(n for n in sets if taken and n in behaviour.takes)
    lost = [n for n in sets if n not in reaches]
    said = f"{name} in {where} declares dns and {behaviour.note}"
    if not lost:
        return DnsPlan("applied", f"{said}: the pod's {_listed(sets)} reach its endpoint",
                       reaches)
    if not reaches:
        return DnsPlan("dropped", f"{said}: none of the pod's {_listed(sets)} reach its "
                       f"endpoint, so {static}")
    return DnsPlan("partly", f"{said}: the pod's {_listed(reaches)} reach its endpoint, its "
                   f"{_listed(lost)} do not", reaches)


def _static(plugin: CniPlugin) -> str:
    """What the endpoint gets instead of the pod's DNS: the block of the plugin whose
    code makes it (a delegating plugin's delegate), quoted."""
    found = CNI_PLUGINS.get(plugin.type)
    delegating = found is not None and found.applies == "delegate"
    block = plugin.delegate_dns if delegating else plugin.dns
    if block:
        return (f"its endpoint gets the configuration's own dns block ({block}), the "
                "same for every pod")
    if delegating and plugin.dns:
        return (f"its endpoint gets no name servers or searches from CNI, the same for every "
                f"pod: the delegate's configuration has no dns block, and {plugin.type} "
                f"never hands it its own ({plugin.dns})")
    return ("the configuration has no dns block of its own, so its endpoint gets no name "
            "servers or searches from CNI, the same for every pod")


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
    return _dns_outcome(node.cni, asked)


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
        ports = tuple(PortPlan(c, h, p, ip, "dropped", f"the sandbox is not created: {refused}")
                      if h > 0 else _not_host(c, h, p, ip) for c, h, p, ip in mappings)
        return RuntimeOutcome("none", effective, None, ports, refused=refused, starts=False,
                              facts=tuple(facts), dns=_dns(dns, "none", "", node, refused))
    notes: list[str] = []
    namespace: NetworkNamespace = "node" if host_network else "pod"
    condition = ""
    if host_process:
        facts.append("runtime release: " + (node.runtime or "not known"))
        namespace, condition = _host_process_namespace(effective, isolation, node, notes,
                                                       unknown_handler)
    starts = None if effective is None and handlers_known else True
    ports = _ports(mappings, namespace, condition, node)
    facts.append("CNI configuration: " + ("known" if node.cni is not None else "not known"))
    return RuntimeOutcome(namespace, effective, isolation, ports, None, condition,
                          tuple(notes), starts, tuple(facts),
                          _dns(dns, namespace, condition, node))


def _ports(mappings: Sequence[Mapping4], namespace: NetworkNamespace, condition: str,
           node: NodeFacts) -> tuple[PortPlan, ...]:
    out: list[PortPlan] = []
    cni = _cni_outcome(node.cni) if node.cni is not None else None
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
