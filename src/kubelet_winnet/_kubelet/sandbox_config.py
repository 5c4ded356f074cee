"""The whole ``PodSandboxConfig`` a kubelet on a Windows node builds for a pod.

``generatePodSandboxConfig`` (pkg/kubelet/kuberuntime/kuberuntime_sandbox.go), in the
kubelet's order, each step returning the kubelet's error text on refusal:

1. metadata, labels (pod labels plus ``io.kubernetes.pod.*``), annotations (labels.go);
2. DNS (pkg/kubelet/network/dns/dns.go ``GetPodDNS``);
3. hostname, non-hostNetwork pods only (kubelet_pods.go ``GeneratePodHostNameAndDomain``,
   pkg/kubelet/util ``GetNodenameForKernel``);
4. log directory ``<root>\\<namespace>_<name>_<uid>`` (``BuildPodLogsDirectory``);
5. port mappings of ``spec.containers`` (pkg/kubelet/container/helpers.go
   ``MakePortMappings``);
6. ``linux`` (``generatePodSandboxLinuxConfig``: sent on Windows too);
7. ``windows`` (the core's decision, as :func:`kubelet_winnet.windows_sandbox_config`).

API defaulting the kubelet relies on (pkg/apis/core/v1/defaults.go) is applied to raw
manifests: ``dnsPolicy: ClusterFirst``, ``securityContext: {}``, port ``protocol: TCP``,
``hostPort = containerPort`` for hostNetwork pods. ``docs/requests.md`` lists every field.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.feature_gates import parse_feature_gates
from kubelet_winnet._kubelet.labels import fill_pod_annotations, fill_pod_labels
from kubelet_winnet._kubelet.messages import sandbox_config_bytes
from kubelet_winnet._kubelet.node import NodeContext
from kubelet_winnet._kubelet.pod import (
    PodView,
    echo,
    get_bool,
    get_list,
    get_object,
    get_objects,
    get_optional_str,
    get_str,
    get_strings,
    not_utf8_error,
    pod_facts,
    read_field,
    read_ports,
    view_pod,
)
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._kubelet.request_facts import EXPANDED_DNS_LOCKED, SUPPLEMENTAL_GROUPS_POLICY
from kubelet_winnet._kubelet.rules import decide_sandbox
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
from kubelet_winnet._kubelet.validation import is_dns1123_label
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError, SandboxConfigError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = [
    "DEFAULT_NODE",
    "check_attempt",
    "check_node",
    "pod_sandbox_config",
    "run_pod_sandbox_request",
    "runtime_handler",
]

DEFAULT_NODE = NodeContext()

# pkg/apis/core/validation (MaxDNSNameservers, MaxDNSSearchPaths*, MaxDNSSearchListChars*)
# and apimachinery DNS1123SubdomainMaxLength.
MAX_NAMESERVERS = 3
SEARCH_LIMITS_EXPANDED = (32, 2048)
SEARCH_LIMITS_LEGACY = (6, 256)
MAX_SEARCH_LEN = 253
DEFAULT_DNS_OPTIONS = ("ndots:5",)
HOSTNAME_MAX_LEN = 63
FQDN_MAX_LEN = 64

_DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
_PROTOCOLS = {"TCP": api_pb2.TCP, "UDP": api_pb2.UDP, "SCTP": api_pb2.SCTP}


# --- argument checks shared with the container builder -----------------------------


def check_node(node: object) -> NodeContext:
    if node is None:
        return DEFAULT_NODE
    if type(node) is not NodeContext:
        raise InvalidArgumentError("node", "a NodeContext", type_name(node))
    return node


def check_attempt(attempt: object, name: str = "attempt") -> int:
    if type(attempt) is not int:
        raise InvalidArgumentError(name, "an int", type_name(attempt))
    if not 0 <= attempt <= 0xFFFFFFFF:
        raise InvalidArgumentError(name, "an int from 0 to 4294967295", "out of range")
    return attempt


# --- DNS (pkg/kubelet/network/dns/dns.go) --------------------------------------------


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge_options(existing: list[str], pod_options: list[tuple[str, str | None]]) -> list[str]:
    # mergeDNSOptions: name -> value, pod entries win; upstream rebuilds the list from a
    # Go map (unspecified order); here the first appearance of a name keeps its place.
    merged: dict[str, str] = {}
    for option in existing:
        name, sep, value = option.partition(":")
        merged[name] = value if sep else ""
    for option_name, option_value in pod_options:
        merged[option_name] = option_value or ""
    return [f"{name}:{value}" if value else name for name, value in merged.items()]


def _fit_searches(searches: list[str], limits: tuple[int, int]) -> list[str]:
    # formDNSSearchFitsLimits; every length is Go's len(), in bytes.
    max_paths, max_chars = limits
    sizes = [golang.go_len(s) for s in searches]
    if len(searches) <= max_paths and sum(n + 1 for n in sizes) <= min(
        max_chars, MAX_SEARCH_LEN
    ):
        return searches  # within every limit (the common case)
    pairs = zip(searches[:max_paths], sizes[:max_paths], strict=True)
    kept = [(s, n) for s, n in pairs if n <= MAX_SEARCH_LEN]
    searches = [s for s, _ in kept]
    line = sum(n for _, n in kept) + max(len(kept) - 1, 0)  # len(strings.Join(s, " "))
    if line > max_chars:
        cut = 0
        for _, size in reversed(kept):
            line -= size + 1
            cut += 1
            if line <= max_chars:
                break
        searches = searches[: len(searches) - cut]
    return searches


def dns_type(policy: str, host_network: bool) -> str:
    """``getPodDNSType``: "cluster", "host" or "none". An unknown policy is logged by the
    kubelet (``invalid DNSPolicy=...``) and treated as cluster."""
    if policy == "None":
        return "none"
    if policy == "ClusterFirstWithHostNet":
        return "cluster"
    if policy == "ClusterFirst":
        return "host" if host_network else "cluster"
    if policy == "Default":
        return "host"
    return "cluster"


def pod_dns(
    view: PodView, node: NodeContext, namespace: str, host_network: bool, minor: int,
    expanded: bool,
) -> tuple[list[str], list[str], list[str]]:
    spec, at = view.spec, view.spec_at
    policy = get_str(spec, "dnsPolicy", at, "ClusterFirst")
    if node.resolv_conf_set:
        servers = list(node.resolver_servers)
        searches = list(node.resolver_searches)
        options = list(node.resolver_options)
    else:
        servers, searches, options = [], [], []
    kind = dns_type(policy, host_network)
    if kind == "none":
        servers, searches, options = [], [], []
    elif kind == "cluster" and node.cluster_dns:
        servers = list(node.cluster_dns)
        if node.cluster_domain:
            domain = node.cluster_domain
            searches = _dedup(
                [f"{namespace}.svc.{domain}", f"svc.{domain}", domain, *searches]
            )
        options = list(DEFAULT_DNS_OPTIONS)
    elif not node.resolv_conf_set:  # host DNS, or cluster DNS without --cluster-dns
        for ip in node.node_ips:
            servers.append("::1" if ipaddress.ip_address(ip).version == 6 else "127.0.0.1")
        if not servers:
            servers.append("127.0.0.1")
        searches = ["."]
    config = get_object(spec, "dnsConfig", at)
    if config is not None:
        here = f"{at}dnsConfig."
        servers = _dedup(servers + get_strings(config, "nameservers", here))
        searches = _dedup(searches + get_strings(config, "searches", here))
        pod_options: list[tuple[str, str | None]] = []
        for index, option in enumerate(get_objects(config, "options", here)):
            where = f"{here}options[{index}]."
            value = get_optional_str(option, "value", where)
            pod_options.append((get_str(option, "name", where), value))
        options = _merge_options(options, pod_options)
    servers = servers[:MAX_NAMESERVERS]
    searches = _fit_searches(
        searches, SEARCH_LIMITS_EXPANDED if expanded else SEARCH_LIMITS_LEGACY
    )
    return servers, searches, options


def _dns_bytes(
    view: PodView, node: NodeContext, namespace: str, host_network: bool, minor: int,
    expanded: bool,
) -> bytes:
    """The encoded ``DNSConfig``; without ``spec.dnsConfig`` it depends only on the node,
    namespace, policy and hostNetwork, so it is remembered per node object."""
    spec = view.spec
    cacheable = read_field(spec, "dnsConfig", view.spec_at) is None
    if cacheable:
        policy = get_str(spec, "dnsPolicy", view.spec_at, "ClusterFirst")
        key = (id(node), namespace, host_network, policy, expanded)
        hit = _DNS_CACHE.get(key)
        if hit is not None and hit[0] is node:  # the strong reference keeps id() unique
            return hit[1]
    servers, searches, options = pod_dns(view, node, namespace, host_network, minor, expanded)
    data = api_pb2.DNSConfig(servers=servers, searches=searches, options=options)
    encoded = data.SerializeToString()
    if cacheable:
        if len(_DNS_CACHE) >= 256:  # bounded: namespaces come from the input
            _DNS_CACHE.clear()
        _DNS_CACHE[key] = (node, encoded)
    return encoded


_DNS_CACHE: dict[tuple[int, str, bool, str, bool], tuple[NodeContext, bytes]] = {}


# --- hostname (kubelet_pods.go, pkg/kubelet/util/util.go) ---------------------------


def _truncate_hostname(hostname: str, view: PodView) -> str:
    """``truncatePodHostnameIfNeeded``: ``hostname[:63]`` cuts bytes, then ``-`` and
    ``.`` are trimmed from the end."""
    if hostname.isascii():
        return hostname[:HOSTNAME_MAX_LEN].rstrip("-.")
    cut = golang.go_bytes(hostname)[:HOSTNAME_MAX_LEN]
    try:
        return cut.decode("utf-8").rstrip("-.")
    except UnicodeDecodeError:
        # Go keeps the broken sequence, and the runtime.v1 string cannot carry it: the
        # request would fail to marshal. Only a name the API would refuse gets here.
        where = "spec.hostname" if get_str(view.spec, "hostname", view.spec_at) else (
            "metadata.name"
        )
        raise InvalidPodError(
            view.at(where),
            f"longer than {HOSTNAME_MAX_LEN} bytes, and the kubelet's cut at byte "
            f"{HOSTNAME_MAX_LEN} falls inside a character: the hostname would not be "
            "valid UTF-8",
        ) from None


def pod_hostname(
    view: PodView, name: str, namespace: str, node: NodeContext, minor: int
) -> str:
    spec, at = view.spec, view.spec_at
    hostname = name
    wanted = get_str(spec, "hostname", at)
    if wanted:
        errors = is_dns1123_label(wanted, minor)
        if errors:
            raise SandboxConfigError(
                f"pod Hostname {golang.quote(echo(wanted))} is not a valid DNS label: "
                + ";".join(errors),
                "hostname",
            )
        hostname = wanted
    if golang.go_len(hostname) > HOSTNAME_MAX_LEN:
        truncated = _truncate_hostname(hostname, view)
        if not truncated:
            raise SandboxConfigError(
                f"hostname for pod {golang.quote(echo(name))} was invalid: "
                f"{golang.quote(echo(hostname))}",
                "hostname",
            )
        hostname = truncated
    domain = ""
    subdomain = get_str(spec, "subdomain", at)
    if subdomain:
        errors = is_dns1123_label(subdomain, minor)
        if errors:
            raise SandboxConfigError(
                f"pod Subdomain {golang.quote(echo(subdomain))} is not a valid DNS label: "
                + ";".join(errors),
                "hostname",
            )
        domain = f"{subdomain}.{namespace}.svc.{node.cluster_domain}"
    if domain and get_bool(spec, "setHostnameAsFQDN", at) is True:
        fqdn = f"{hostname}.{domain}"
        if golang.go_len(fqdn) > FQDN_MAX_LEN:
            raise SandboxConfigError(
                "failed to construct FQDN from pod hostname and cluster domain, FQDN "
                f"{fqdn} is too long ({FQDN_MAX_LEN} characters is the max, "
                f"{golang.go_len(fqdn)} characters requested)",
                "hostname",
            )
        hostname = fqdn
    return hostname


# --- port mappings (pkg/kubelet/container/helpers.go MakePortMappings) ---------------


def _family(host_ip: str) -> str:
    if not host_ip:
        return "any"
    try:
        return "v6" if ipaddress.ip_address(host_ip).version == 6 else "v4"
    except ValueError:
        return "v4"  # IsIPv6String is false for anything that is not IPv6


def container_port_mappings(
    container: Mapping[str, Any], at: str, host_network: bool
) -> list[api_pb2.PortMapping]:
    """One container's ports, API defaults applied, duplicates (by name, or by the
    synthesized ``<family>-<protocol>-<hostIP>:<containerPort>:<hostPort>``) dropped."""
    mappings = []
    names: set[str] = set()
    for container_port, host_port, protocol, host_ip, name in read_ports(container, at):
        # containerPort is required by API validation; the kubelet reads a missing one as 0.
        if host_network and host_port == 0:  # defaults.go: defaultHostNetworkPorts
            host_port = container_port
        protocol = protocol or "TCP"
        key = name or f"{_family(host_ip)}-{protocol}-{host_ip}:{container_port}:{host_port}"
        if key in names:
            continue  # "Port name conflicted, it is defined more than once"
        names.add(key)
        mapping = api_pb2.PortMapping(
            protocol=_PROTOCOLS.get(protocol, api_pb2.TCP),  # toRuntimeProtocol: else TCP
            container_port=container_port,
            host_port=host_port,
            host_ip=host_ip,
        )
        mappings.append(mapping)
    return mappings


# --- linux config (kuberuntime_sandbox.go generatePodSandboxLinuxConfig) -------------


def _security_context(spec: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    context = get_object(spec, "securityContext", at)
    return {} if context is None else context  # defaults.go: securityContext = {}


def _has_privileged(spec: Mapping[str, Any], at: str) -> bool:
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(get_objects(spec, kind, at)):
            where = f"{at}{kind}[{index}]."
            context = get_object(container, "securityContext", where)
            if context is not None and get_bool(
                context, "privileged", f"{where}securityContext."
            ):
                return True
    return False


def fill_linux_config(
    config: api_pb2.LinuxPodSandboxConfig, view: PodView, minor: int
) -> None:
    """Fill ``config`` (cgroup_parent stays "": no pod cgroups on Windows)."""
    spec, at = view.spec, view.spec_at
    context = _security_context(spec, at)
    here = f"{at}securityContext."
    privileged = _has_privileged(spec, at)
    sysctls = {}
    for index, sysctl in enumerate(get_objects(context, "sysctls", here)):
        where = f"{here}sysctls[{index}]."
        sysctls[get_str(sysctl, "name", where)] = get_str(sysctl, "value", where)
    # Only with spec.securityContext set, which API defaulting guarantees.
    network = api_pb2.NODE if get_bool(spec, "hostNetwork", at) else api_pb2.POD
    ipc = api_pb2.NODE if get_bool(spec, "hostIPC", at) else api_pb2.POD
    if get_bool(spec, "hostPID", at):
        pid = api_pb2.NODE
    elif get_bool(spec, "shareProcessNamespace", at):
        pid = api_pb2.POD
    else:
        pid = api_pb2.CONTAINER
    # runAsUser, runAsGroup, fsGroup and seLinuxOptions are skipped on Windows.
    groups = get_int_list(context, "supplementalGroups", here)
    policy = (
        get_optional_str(context, "supplementalGroupsPolicy", here)
        if SUPPLEMENTAL_GROUPS_POLICY.holds(minor) else None
    )
    if policy is not None and policy not in ("Merge", "Strict"):
        raise SandboxConfigError(
            f"unsupported supplementalGroupsPolicy: {echo(policy)}", "linux"
        )
    _fill_linux(config, privileged, sysctls, network, ipc, pid, groups, policy)


def _fill_linux(
    config: api_pb2.LinuxPodSandboxConfig, privileged: bool, sysctls: dict[str, str],
    network: int, ipc: int, pid: int, groups: list[int], policy: str | None,
) -> None:
    if sysctls or groups or policy is not None:
        _set_linux(config, privileged, sysctls, network, ipc, pid, groups, policy)
        return
    # Without sysctls, groups or a policy the part is one of 24 messages (privileged x
    # three namespace modes): each is encoded once and merged.
    key = (privileged, network, ipc, pid)
    encoded = _LINUX_PARTS.get(key)
    if encoded is None:
        part = api_pb2.LinuxPodSandboxConfig()
        _set_linux(part, privileged, {}, network, ipc, pid, [], None)
        encoded = _LINUX_PARTS[key] = part.SerializeToString()
    config.MergeFromString(encoded)


_LINUX_PARTS: dict[tuple[bool, int, int, int], bytes] = {}


def _set_linux(
    config: api_pb2.LinuxPodSandboxConfig, privileged: bool, sysctls: dict[str, str],
    network: int, ipc: int, pid: int, groups: list[int], policy: str | None,
) -> None:
    security = config.security_context
    security.SetInParent()
    security.privileged = privileged
    security.seccomp.SetInParent()  # RuntimeDefault: issue #84623
    config.sysctls.update(sysctls)
    options = security.namespace_options
    options.SetInParent()
    options.network = network  # type: ignore[assignment]
    options.ipc = ipc  # type: ignore[assignment]
    options.pid = pid  # type: ignore[assignment]
    security.supplemental_groups.extend(groups)
    if policy is not None:
        security.supplemental_groups_policy = (
            api_pb2.Strict if policy == "Strict" else api_pb2.Merge
        )


def get_int_list(obj: Mapping[str, Any], key: str, at: str) -> list[int]:
    out = []
    for index, item in enumerate(get_list(obj, key, at)):
        if type(item) is not int or not 0 <= item < 2**63:
            raise InvalidPodError(f"{at}{key}[{index}]", "expected a non-negative integer")
        out.append(item)
    return out


def log_directory(root: str, name: str) -> str:
    """``filepath.Join(root, name)`` on Windows (:func:`golang.join_windows`): cleaned,
    backslashes. A root that is not drive-absolute joins as Go's does: ``C:`` gives
    ``C:name`` (relative to that drive's current directory), ``""`` gives ``name``."""
    clean_root = _CLEAN_ROOTS.get(root)
    if clean_root is None:
        clean_root = golang.clean_windows(root)
        if len(_CLEAN_ROOTS) < 64:
            _CLEAN_ROOTS[root] = clean_root
    if (
        not _PLAIN_NAME.fullmatch(name) or name in (".", "..")
        or clean_root[-1] in ".:"  # ".", "C:.": Clean and Join drop that dot
    ):
        return golang.join_windows(root, name)
    # Join cleans root + "\" + name; a name of one plain element adds nothing to clean.
    return clean_root + name if clean_root.endswith("\\") else f"{clean_root}\\{name}"


# The pod's namespace_name_uid as the API allows it: one path element, nothing to clean.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")
# filepath.Clean of each node's log root, once per root rather than once per pod.
_CLEAN_ROOTS: dict[str, str] = {}


# --- the whole config ---------------------------------------------------------------


def runtime_handler(view: PodView, node: NodeContext) -> str:
    """``runtimeClassManager.LookupRuntimeHandler``: empty without a class."""
    name = get_str(view.spec, "runtimeClassName", view.spec_at)
    if not name:
        return ""
    try:
        return node.runtime_handlers[name]
    except KeyError:
        # The lister's NotFound error (runtimeclass_manager.go returns it as is).
        raise SandboxConfigError(
            f"runtimeclass.node.k8s.io {golang.quote(echo(name))} not found", "runtimeClass"
        ) from None


def _expanded_dns(feature_gates: FeatureGatesInput, minor: int) -> bool:
    # ExpandedDNSConfig: beta and on by default before it is locked on.
    if EXPANDED_DNS_LOCKED.holds(minor):
        return True
    gates = parse_feature_gates(feature_gates)
    return gates.get("ExpandedDNSConfig", True)


def build_sandbox_config(
    pod: PodInput, node: NodeContext, attempt: int, kubelet_version: KubeletVersionInput,
    feature_gates: FeatureGatesInput,
) -> tuple[api_pb2.PodSandboxConfig, PodView]:
    profile = kubelet_profile(kubelet_version, feature_gates)
    view = view_pod(pod)
    try:
        expanded = _expanded_dns(feature_gates, profile.version.minor)
        return _build_sandbox_config(view, node, attempt, profile, expanded), view
    except UnicodeEncodeError:  # protobuf strings must be UTF-8
        raise not_utf8_error(view) from None


def _build_sandbox_config(
    view: PodView, node: NodeContext, attempt: int, profile: Any, expanded_dns: bool
) -> api_pb2.PodSandboxConfig:
    minor = profile.version.minor
    name, namespace, uid = view.identity()
    spec, at = view.spec, view.spec_at
    host_network = get_bool(spec, "hostNetwork", at) is True
    config = api_pb2.PodSandboxConfig()
    fill_pod_labels(config.labels, view)
    fill_pod_annotations(config.annotations, view)
    metadata = config.metadata
    metadata.name = name
    metadata.uid = uid
    metadata.namespace = namespace
    metadata.attempt = attempt
    dns = config.dns_config
    dns.SetInParent()
    dns.MergeFromString(_dns_bytes(view, node, namespace, host_network, minor, expanded_dns))
    if not host_network:
        config.hostname = pod_hostname(view, name, namespace, node, minor)
    config.log_directory = log_directory(node.pod_logs_dir, f"{namespace}_{name}_{uid}")
    for index, container in enumerate(get_objects(spec, "containers", at)):
        config.port_mappings.extend(
            container_port_mappings(container, f"{at}containers[{index}].", host_network)
        )
    runtime_handler(view, node)  # NamespacesForPod looks the class up first
    fill_linux_config(config.linux, view, minor)
    # The core's generatePodSandboxWindowsConfig (windows_sandbox_config's steps), on
    # the spec already located rather than locating it a second time.
    decision = decide_sandbox(pod_facts(spec, at), profile.sets_namespace_options)
    if decision.error is not None:
        raise SandboxConfigError(decision.error, decision.error_rule or "")
    config.windows.MergeFromString(sandbox_config_bytes(decision))
    return config


def pod_sandbox_config(
    pod: PodInput,
    *,
    node: NodeContext | None = None,
    attempt: int = 0,
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> api_pb2.PodSandboxConfig:
    """The ``PodSandboxConfig`` kubelet ``kubelet_version`` on a Windows ``node`` sends in
    ``RunPodSandbox`` for ``pod`` (sandbox ``attempt``).

    Raises ``SandboxConfigError`` with the kubelet's text when the kubelet refuses the
    pod, ``InvalidPodError`` for malformed input, ``InvalidArgumentError`` for wrong
    argument types, ``UnsupportedVersionError`` / ``FeatureGateError`` for a kubelet
    that cannot exist.
    """
    config, _ = build_sandbox_config(
        pod, check_node(node), check_attempt(attempt), kubelet_version, feature_gates
    )
    return config


def run_pod_sandbox_request(
    pod: PodInput,
    *,
    node: NodeContext | None = None,
    attempt: int = 0,
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> api_pb2.RunPodSandboxRequest:
    """``RunPodSandboxRequest``: [`pod_sandbox_config`][kubelet_winnet.pod_sandbox_config] plus
    the runtime handler of
    ``spec.runtimeClassName`` from ``node.runtime_handlers`` (unknown class:
    ``SandboxConfigError``)."""
    node = check_node(node)
    config, view = build_sandbox_config(
        pod, node, check_attempt(attempt), kubelet_version, feature_gates
    )
    return api_pb2.RunPodSandboxRequest(config=config, runtime_handler=runtime_handler(view, node))
