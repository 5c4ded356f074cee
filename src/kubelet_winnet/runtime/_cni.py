"""The CNI side of a Windows sandbox: the network configuration containerd loads
(:class:`CniNetwork`, its plugins and their own ``dns`` blocks), what each plugin type
does with the runtime's port mappings (:data:`CNI_PLUGINS`) and DNS (:data:`CNI_DNS`), and
what reaches the pod's endpoint of each (:func:`port_outcome`, :func:`dns_outcome`).
:mod:`._network` plans a sandbox with them.

Sources, all read at the tags or commits named (``git show``):

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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, NodeConfigError

__all__ = [
    "CNI_DNS",
    "CNI_PLUGINS",
    "DNS_LISTS",
    "CniDns",
    "CniNetwork",
    "CniPlugin",
    "DnsAsked",
    "DnsBehaviour",
    "DnsOutcome",
    "DnsPlan",
    "PluginBehaviour",
    "PortOutcome",
    "dns_outcome",
    "port_outcome",
    "require_str",
]

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


def require_str(name: str, value: object) -> None:
    if type(value) is not str:
        raise InvalidArgumentError(name, "a str", type_name(value))


def _strs(name: str, values: object) -> None:
    if not isinstance(values, tuple):
        raise InvalidArgumentError(name, "a tuple of str", type_name(values))
    for value in values:
        require_str(name, value)


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
        _strs("nameservers", self.nameservers)
        require_str("domain", self.domain)
        _strs("search", self.search)
        _strs("options", self.options)

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
        require_str("type", self.type)
        if not self.type:  # as a file's plugin without one is refused (sources/node/cni.py)
            raise NodeConfigError("type", "a CNI plugin configuration needs a type")
        if not isinstance(self.capabilities, frozenset):
            raise InvalidArgumentError("capabilities", "a frozenset of str",
                                       type_name(self.capabilities))
        for name in self.capabilities:
            require_str("capabilities", name)
        if self.delegate is not None:
            require_str("delegate", self.delegate)
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
        require_str("name", self.name)
        require_str("source", self.source)
        if not self.name:
            raise NodeConfigError(self.source or "name", "a CNI configuration needs a name")
        if not isinstance(self.plugins, tuple):
            raise InvalidArgumentError("plugins", "a tuple of CniPlugin", type_name(self.plugins))
        if not self.plugins:
            raise NodeConfigError(self.source or "cni", "a CNI configuration with no plugin")
        for index, plugin in enumerate(self.plugins):
            if not isinstance(plugin, CniPlugin):
                raise InvalidArgumentError(f"plugins[{index}]", "a CniPlugin", type_name(plugin))


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


def port_outcome(cni: CniNetwork) -> tuple[PortOutcome, str]:
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


def dns_outcome(cni: CniNetwork, asked: DnsAsked) -> DnsPlan:
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
