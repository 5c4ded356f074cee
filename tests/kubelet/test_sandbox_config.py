"""pod_sandbox_config / run_pod_sandbox_request: every field of PodSandboxConfig against
the kubelet's rules (kuberuntime_sandbox.go, dns.go, helpers.go, kubelet_pods.go).

Expected values are written from the upstream rules and tables, never recorded from
our own output. Upstream table rows are pinned with ``@example``.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2

NODE_PLAIN = kw.NodeContext()


def pod(spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    metadata = {"name": "foo", "namespace": "new", "uid": "12345678"}
    metadata.update(meta)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": spec if spec is not None else {"containers": [{"name": "c"}]}}


# --- TestGeneratePodSandboxConfig (kuberuntime_sandbox_test.go) ----------------------


def test_upstream_generate_pod_sandbox_config_row() -> None:
    """newTestPod(): UID 12345678, name foo, namespace new, one container with
    ports [{hostPort: 8080}], attempt 1. Upstream expects the three pod labels, log
    directory <root>/new_foo_12345678, metadata with attempt 1 and one port mapping
    {HostPort: 8080} (protocol TCP = 0, containerPort 0)."""
    manifest = pod({"containers": [{"name": "foo", "image": "busybox",
                                    "ports": [{"hostPort": 8080}]}]})
    config = kw.pod_sandbox_config(manifest, attempt=1)
    assert dict(config.labels) == {
        "io.kubernetes.pod.name": "foo",
        "io.kubernetes.pod.namespace": "new",
        "io.kubernetes.pod.uid": "12345678",
    }
    assert config.log_directory == "C:\\var\\log\\pods\\new_foo_12345678"
    assert config.metadata == api_pb2.PodSandboxMetadata(
        name="foo", namespace="new", uid="12345678", attempt=1
    )
    assert list(config.port_mappings) == [api_pb2.PortMapping(host_port=8080)]


def test_log_directory_follows_the_node_root() -> None:
    node = kw.NodeContext(pod_logs_dir="D:/k/logs/")
    config = kw.pod_sandbox_config(pod(), node=node)
    # filepath.Join on Windows cleans the path and uses backslashes.
    assert config.log_directory == "D:\\k\\logs\\new_foo_12345678"


def test_labels_annotations_and_kubelet_labels_win() -> None:
    manifest = pod(labels={"app": "x", "io.kubernetes.pod.name": "spoof"},
                   annotations={"a": "1"})
    config = kw.pod_sandbox_config(manifest)
    assert dict(config.labels) == {
        "app": "x", "io.kubernetes.pod.name": "foo",
        "io.kubernetes.pod.namespace": "new", "io.kubernetes.pod.uid": "12345678",
    }
    assert dict(config.annotations) == {"a": "1"}


# --- TestMakePortMappings (pkg/kubelet/container/helpers_test.go), 4 rows ------------

def _port(name: str, protocol: str, container_port: int, host_port: int, ip: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"protocol": protocol, "containerPort": container_port,
                             "hostPort": host_port}
    if name:
        entry["name"] = name
    if ip:
        entry["hostIP"] = ip
    return entry


_P = {"TCP": api_pb2.TCP, "UDP": api_pb2.UDP}
MAKE_PORT_MAPPINGS_ROWS = [
    (
        [("", "TCP", 80, 8080, "127.0.0.1"), ("", "TCP", 443, 4343, "192.168.0.1"),
         ("foo", "UDP", 555, 5555, ""), ("foo", "UDP", 888, 8888, ""),
         ("", "TCP", 80, 8080, "::"), ("", "TCP", 1234, 5678, "")],
        [("TCP", 80, 8080, "127.0.0.1"), ("TCP", 443, 4343, "192.168.0.1"),
         ("UDP", 555, 5555, ""), ("TCP", 80, 8080, "::"), ("TCP", 1234, 5678, "")],
    ),
    (
        [("", "TCP", 443, 4343, "192.168.0.1"), ("", "TCP", 4343, 4343, "192.168.0.1")],
        [("TCP", 443, 4343, "192.168.0.1"), ("TCP", 4343, 4343, "192.168.0.1")],
    ),
    (
        [("", "TCP", 443, 4343, ""), ("", "TCP", 443, 4343, "")],
        [("TCP", 443, 4343, "")],
    ),
    (
        [("", "TCP", 443, 4343, "192.168.0.1"), ("", "TCP", 443, 4343, "172.16.0.1")],
        [("TCP", 443, 4343, "192.168.0.1"), ("TCP", 443, 4343, "172.16.0.1")],
    ),
]


@pytest.mark.parametrize(("ports", "expected"), MAKE_PORT_MAPPINGS_ROWS)
def test_upstream_make_port_mappings(ports: list[Any], expected: list[Any]) -> None:
    manifest = pod({"containers": [{"name": "fooContainer",
                                    "ports": [_port(*p) for p in ports]}]})
    config = kw.pod_sandbox_config(manifest)
    assert list(config.port_mappings) == [
        api_pb2.PortMapping(protocol=_P[proto], container_port=cport, host_port=hport,
                            host_ip=ip)
        for proto, cport, hport, ip in expected
    ]


def test_dedup_is_per_container_and_host_port_defaults_under_host_network() -> None:
    manifest = pod({"hostNetwork": True, "containers": [
        {"name": "a", "ports": [{"containerPort": 80}]},
        {"name": "b", "ports": [{"containerPort": 80}, {"containerPort": 81,
                                                         "protocol": "UDP"}]},
    ]})
    config = kw.pod_sandbox_config(manifest)
    # defaults.go: hostPort = containerPort for hostNetwork pods; MakePortMappings'
    # name set is per container, so a's and b's port 80 both stay.
    assert [(m.container_port, m.host_port, m.protocol) for m in config.port_mappings] == [
        (80, 80, api_pb2.TCP), (80, 80, api_pb2.TCP), (81, 81, api_pb2.UDP),
    ]


ports_st = st.lists(
    st.fixed_dictionaries({"containerPort": st.integers(1, 65535)},
                          optional={"hostPort": st.integers(0, 65535),
                                    "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
                                    "name": st.sampled_from(["http", "dns", "m"])}),
    max_size=4,
)


@given(regular=ports_st, init=ports_st, ephemeral=ports_st, host_network=st.booleans())
def test_port_mappings_come_only_from_regular_containers(
    regular: list[dict[str, Any]], init: list[dict[str, Any]],
    ephemeral: list[dict[str, Any]], host_network: bool,
) -> None:
    """kuberuntime_sandbox.go: `for _, c := range pod.Spec.Containers { ...
    MakePortMappings(&c) }` - init and ephemeral containers never publish ports."""
    with_all = pod({"hostNetwork": host_network,
                    "initContainers": [{"name": "i", "ports": init}],
                    "containers": [{"name": "c", "ports": regular}],
                    "ephemeralContainers": [{"name": "e", "ports": ephemeral}]})
    only_regular = pod({"hostNetwork": host_network,
                        "containers": [{"name": "c", "ports": regular}]})
    got = list(kw.pod_sandbox_config(with_all).port_mappings)
    assert got == list(kw.pod_sandbox_config(only_regular).port_mappings)
    # Independently: one mapping per distinct key, in order.
    seen, expected = set(), []
    for p in regular:
        host_port = p.get("hostPort", 0) or (p["containerPort"] if host_network else 0)
        protocol = p.get("protocol", "TCP")
        key = p.get("name") or f"any-{protocol}-:{p['containerPort']}:{host_port}"
        if key not in seen:
            seen.add(key)
            expected.append((p["containerPort"], host_port, protocol))
    assert [(m.container_port, m.host_port, api_pb2.Protocol.Name(m.protocol))
            for m in got] == expected


# --- TestNamespacesForPod (kuberuntime util) ------------------------------------------


@given(host_ipc=st.sampled_from([None, True, False]), host_network=st.booleans(),
       host_pid=st.sampled_from([None, True, False]),
       share=st.sampled_from([None, True, False]))
@example(host_ipc=False, host_network=False, host_pid=False, share=None).via(
    "TestNamespacesForPod: v1.Pod default namespaces -> POD, POD, CONTAINER")
@example(host_ipc=True, host_network=True, host_pid=True, share=None).via(
    "TestNamespacesForPod: Host Namespaces -> NODE, NODE, NODE")
@example(host_ipc=False, host_network=False, host_pid=False, share=True).via(
    "TestNamespacesForPod: Shared Process Namespace -> pid POD")
@example(host_ipc=True, host_network=False, host_pid=None, share=None).via(
    "hostIPC alone, the other fields left out")
@example(host_ipc=None, host_network=False, host_pid=True, share=None).via(
    "hostPID alone, the other fields left out")
@example(host_ipc=None, host_network=False, host_pid=None, share=True).via(
    "shareProcessNamespace alone, the other fields left out")
def test_namespaces_for_pod(
    host_ipc: bool | None, host_network: bool, host_pid: bool | None, share: bool | None
) -> None:
    """kuberuntime/util NamespacesForPod: ipc NODE if hostIPC else POD; network NODE if
    hostNetwork else POD; pid NODE if hostPID, POD if shareProcessNamespace, else
    CONTAINER; no user namespace on Windows. A field left out is false."""
    spec: dict[str, Any] = {"hostNetwork": host_network, "containers": [{"name": "c"}]}
    for key, value in (("hostIPC", host_ipc), ("hostPID", host_pid),
                       ("shareProcessNamespace", share)):
        if value is not None:
            spec[key] = value
    options = kw.pod_sandbox_config(pod(spec)).linux.security_context.namespace_options
    node, pod_mode = api_pb2.NODE, api_pb2.POD
    assert options.ipc == (node if host_ipc else pod_mode)
    assert options.network == (node if host_network else pod_mode)
    expected_pid = node if host_pid else (pod_mode if share else api_pb2.CONTAINER)
    assert options.pid == expected_pid
    assert not options.HasField("userns_options")  # userns_manager_windows.go: nil


def test_linux_config_on_windows() -> None:
    """generatePodSandboxLinuxConfig: cgroup parent empty on Windows, seccomp
    RuntimeDefault, privileged if any container is, sysctls map, supplemental groups
    kept; runAsUser/runAsGroup/fsGroup/seLinuxOptions skipped on Windows."""
    manifest = pod({
        "securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000,
                            "seLinuxOptions": {"level": "s0"},
                            "supplementalGroups": [5, 6],
                            "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
        "initContainers": [{"name": "i", "securityContext": {"privileged": True}}],
        "containers": [{"name": "c"}],
    })
    linux = kw.pod_sandbox_config(manifest).linux
    assert linux.cgroup_parent == ""
    context = linux.security_context
    assert context.privileged is True
    assert context.HasField("seccomp") and context.seccomp.profile_type == 0
    assert dict(linux.sysctls) == {"net.core.somaxconn": "1024"}
    assert list(context.supplemental_groups) == [5, 6]
    assert not context.HasField("run_as_user") and not context.HasField("run_as_group")
    assert not context.HasField("selinux_options")


def test_supplemental_groups_policy_is_version_dependent() -> None:
    manifest = pod({"securityContext": {"supplementalGroupsPolicy": "Strict"},
                    "containers": [{"name": "c"}]})
    new = kw.pod_sandbox_config(manifest, kubelet_version="1.33")
    assert new.linux.security_context.supplemental_groups_policy == api_pb2.Strict
    old = kw.pod_sandbox_config(manifest, kubelet_version="1.30")
    assert old.linux.security_context.supplemental_groups_policy == api_pb2.Merge
    bad = pod({"securityContext": {"supplementalGroupsPolicy": "Loose"},
               "containers": [{"name": "c"}]})
    with pytest.raises(
        kw.SandboxConfigError, match=r"^unsupported supplementalGroupsPolicy: Loose$"
    ):
        kw.pod_sandbox_config(bad, kubelet_version="1.33")


# --- DNS (dns_test.go) ---------------------------------------------------------------

CLUSTER_NS = "203.0.113.1"


@given(policy=st.sampled_from(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]),
       host_network=st.booleans(), has_cluster_dns=st.booleans())
@example("ClusterFirst", False, True).via("TestGetPodDNSType: ClusterFirst -> cluster")
@example("ClusterFirstWithHostNet", True, True).via("WithHostNet + hostnetwork -> cluster")
@example("ClusterFirstWithHostNet", False, True).via("WithHostNet -> cluster")
@example("Default", False, False).via("Default -> host")
@example("Default", True, False).via("Default + hostnetwork -> host")
@example("ClusterFirst", True, True).via("ClusterFirst + hostnetwork -> host (fallback)")
@example("None", False, False).via("None -> none")
def test_get_pod_dns_type(policy: str, host_network: bool, has_cluster_dns: bool) -> None:
    """dns.go getPodDNSType, then GetPodDNS: cluster DNS replaces the servers, prepends
    `<ns>.svc.<domain>`, `svc.<domain>`, `<domain>` and sets ndots:5; a pod asking for
    cluster DNS on a kubelet without --cluster-dns falls back to the node's resolver."""
    node = kw.NodeContext(cluster_dns=(CLUSTER_NS,) if has_cluster_dns else (),
                          cluster_domain="TEST", resolver_servers=("192.0.2.53",),
                          resolver_searches=("host.example",))
    manifest = pod({"dnsPolicy": policy, "hostNetwork": host_network,
                    "containers": [{"name": "c"}]}, namespace="testNS")
    dns = kw.pod_sandbox_config(manifest, node=node).dns_config
    kind = {"None": "none", "Default": "host", "ClusterFirstWithHostNet": "cluster",
            "ClusterFirst": "host" if host_network else "cluster"}[policy]
    if kind == "cluster" and not has_cluster_dns:
        kind = "host"
    expected = {
        "cluster": ([CLUSTER_NS], ["testNS.svc.TEST", "svc.TEST", "TEST", "host.example"],
                    ["ndots:5"]),
        "host": (["192.0.2.53"], ["host.example"], []),
        "none": ([], [], []),
    }[kind]
    assert (list(dns.servers), list(dns.searches), list(dns.options)) == expected


def test_invalid_dns_policy_falls_back_to_cluster_first() -> None:
    """GetPodDNS logs getPodDNSType's `invalid DNSPolicy=...` and uses podDNSCluster."""
    manifest = pod({"dnsPolicy": "invalidPolicy", "containers": [{"name": "c"}]})
    dns = kw.pod_sandbox_config(manifest).dns_config
    assert list(dns.servers) == ["10.96.0.10"]


def test_upstream_get_pod_dns_without_resolv_conf() -> None:
    """TestGetPodDNS, --resolv-conf="": pods 0 (ClusterFirstWithHostNet, hostNetwork)
    and 2 (ClusterFirst) get the cluster server and search `.svc.kubernetes.io` first
    (namespace ""); pods 1 (ClusterFirst + hostNetwork) and 3 (Default) get 127.0.0.1
    and search `.`."""
    node = kw.NodeContext(cluster_dns=(CLUSTER_NS,), cluster_domain="kubernetes.io",
                          resolv_conf_set=False, node_ips=())
    cases = [("ClusterFirstWithHostNet", True), ("ClusterFirst", True),
             ("ClusterFirst", False), ("Default", True)]
    got = []
    for policy, host_network in cases:
        manifest = pod({"dnsPolicy": policy, "hostNetwork": host_network,
                        "containers": [{"name": "c"}]}, namespace="")
        dns = kw.pod_sandbox_config(manifest, node=node).dns_config
        got.append((list(dns.servers), dns.searches[0]))
    assert got == [([CLUSTER_NS], ".svc.kubernetes.io"), (["127.0.0.1"], "."),
                   ([CLUSTER_NS], ".svc.kubernetes.io"), (["127.0.0.1"], ".")]


def test_resolv_conf_unset_uses_loopback_per_node_ip_family() -> None:
    node = kw.NodeContext(resolv_conf_set=False, node_ips=("10.0.0.4", "fd00::4"))
    dns = kw.pod_sandbox_config(pod({"dnsPolicy": "Default", "containers": []}),
                                node=node).dns_config
    assert list(dns.servers) == ["127.0.0.1", "::1"] and list(dns.searches) == ["."]


CUSTOM_NODE = kw.NodeContext(cluster_dns=("10.0.0.10",), cluster_domain="kubernetes.io",
                             resolver_servers=("8.8.8.8",), resolver_searches=("host.domain",))
POD_DNS_CONFIG = {"nameservers": ["10.0.0.11"], "searches": ["my.domain"],
                  "options": [{"name": "ndots", "value": "3"}, {"name": "debug"}]}


@pytest.mark.parametrize(
    ("policy", "host_network", "dns_config", "servers", "searches", "options"),
    [  # TestGetPodDNSCustom rows
        ("None", False, None, [], [], []),
        ("None", False, {"nameservers": ["203.0.113.1"],
                         "searches": ["my.domain", "second.domain"],
                         "options": [{"name": "ndots", "value": "3"}, {"name": "debug"}]},
         ["203.0.113.1"], ["my.domain", "second.domain"], {"ndots:3", "debug"}),
        ("ClusterFirst", False, POD_DNS_CONFIG, ["10.0.0.10", "10.0.0.11"],
         ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain",
          "my.domain"], {"ndots:3", "debug"}),
        ("ClusterFirstWithHostNet", True, POD_DNS_CONFIG, ["10.0.0.10", "10.0.0.11"],
         ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain",
          "my.domain"], {"ndots:3", "debug"}),
        ("Default", False, POD_DNS_CONFIG, ["8.8.8.8", "10.0.0.11"],
         ["host.domain", "my.domain"], {"ndots:3", "debug"}),
    ],
)
def test_upstream_get_pod_dns_custom(policy: str, host_network: bool, dns_config: Any,
                                     servers: list[str], searches: list[str],
                                     options: Any) -> None:
    spec: dict[str, Any] = {"dnsPolicy": policy, "hostNetwork": host_network,
                            "containers": [{"name": "c"}]}
    if dns_config is not None:
        spec["dnsConfig"] = dns_config
    dns = kw.pod_sandbox_config(pod(spec, namespace="testNS"), node=CUSTOM_NODE).dns_config
    assert list(dns.servers) == servers and list(dns.searches) == searches
    assert set(dns.options) == set(options)  # upstream: order unspecified (a Go map)


def test_dns_limits() -> None:
    """formDNSNameserversFitsLimits keeps 3 servers; formDNSSearchFitsLimits keeps 32
    paths, drops paths over 253 characters and cuts the line to 2048 characters; with
    ExpandedDNSConfig=false (1.26-1.27 only) 6 paths and 256 characters."""
    long_path = "a" * 254
    searches = [f"s{i}.example" for i in range(40)]
    spec = {"dnsPolicy": "None", "containers": [],
            "dnsConfig": {"nameservers": ["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"],
                          "searches": [long_path, *searches]}}
    dns = kw.pod_sandbox_config(pod(spec)).dns_config
    assert list(dns.servers) == ["1.1.1.1", "2.2.2.2", "3.3.3.3"]
    # first 32 entries, then the 254-character one removed
    assert list(dns.searches) == searches[:31]
    legacy = kw.pod_sandbox_config(pod(spec), kubelet_version="1.27",
                                   feature_gates="ExpandedDNSConfig=false").dns_config
    assert list(legacy.searches) == searches[:5]
    wide = [("x" * 200) + f".{i}" for i in range(20)]
    spec["dnsConfig"] = {"searches": wide}
    cut = list(kw.pod_sandbox_config(pod(spec)).dns_config.searches)
    assert len(" ".join(cut)) <= 2048 and cut == wide[: len(cut)]
    assert len(" ".join(wide[: len(cut) + 1])) > 2048


@given(
    policy=st.sampled_from(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None", None]),
    host_network=st.booleans(),
)
def test_dns_fallback_property(policy: str | None, host_network: bool) -> None:
    """dns.go getPodDNSType: `case v1.DNSClusterFirst: if !IsHostNetworkPod(pod) {
    return podDNSCluster } // Fallback to DNSDefault for pod on hostnetwork.`"""
    spec: dict[str, Any] = {"hostNetwork": host_network, "containers": [{"name": "c"}]}
    if policy is not None:
        spec["dnsPolicy"] = policy
    servers = list(kw.pod_sandbox_config(pod(spec)).dns_config.servers)
    effective = policy or "ClusterFirst"  # API defaulting
    if effective == "None":
        assert servers == []
    elif effective == "Default" or (effective == "ClusterFirst" and host_network):
        assert servers == list(NODE_PLAIN.resolver_servers)
    else:
        assert servers == list(NODE_PLAIN.cluster_dns)


# --- hostname ---------------------------------------------------------------------------

names = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,70}[a-z0-9])?", fullmatch=True)


@given(name=names, host_network=st.booleans())
def test_host_network_means_no_hostname_and_node_network(name: str, host_network: bool) -> None:
    """kuberuntime_sandbox.go: `if !kubecontainer.IsHostNetworkPod(pod) { ...
    podSandboxConfig.Hostname = podHostname }`; NamespacesForPod: network NODE for
    hostNetwork pods, else POD."""
    config = kw.pod_sandbox_config(pod({"hostNetwork": host_network,
                                        "containers": [{"name": "c"}]}, name=name))
    network = config.linux.security_context.namespace_options.network
    if host_network:
        assert config.hostname == "" and network == api_pb2.NODE
    else:
        expected = name if len(name) <= 63 else name[:63].rstrip("-.")
        assert config.hostname == expected and network == api_pb2.POD


def test_hostname_subdomain_and_fqdn() -> None:
    spec = {"hostname": "web", "subdomain": "svc1", "setHostnameAsFQDN": True,
            "containers": []}
    assert kw.pod_sandbox_config(pod(spec)).hostname == "web.svc1.new.svc.cluster.local"
    spec["setHostnameAsFQDN"] = False
    assert kw.pod_sandbox_config(pod(spec)).hostname == "web"


def test_hostname_errors_are_the_kubelets() -> None:
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.pod_sandbox_config(pod({"hostname": "Bad_Name", "containers": []}))
    assert str(info.value) == (
        'pod Hostname "Bad_Name" is not a valid DNS label: a lowercase RFC 1123 label '
        "must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
        "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    long_domain = "d" * 40
    spec = {"hostname": "h" * 20, "subdomain": "s" * 10, "setHostnameAsFQDN": True,
            "containers": []}
    node = kw.NodeContext(cluster_domain=long_domain)
    fqdn = f"{'h' * 20}.{'s' * 10}.new.svc.{long_domain}"
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.pod_sandbox_config(pod(spec), node=node)
    assert str(info.value) == (
        "failed to construct FQDN from pod hostname and cluster domain, FQDN "
        f"{fqdn} is too long (64 characters is the max, {len(fqdn)} characters requested)"
    )
    with pytest.raises(kw.SandboxConfigError, match=r"^hostname for pod"):
        kw.pod_sandbox_config(pod({"containers": []}, name="-" * 70))


# --- windows config and versions --------------------------------------------------------


@pytest.mark.parametrize("version", ["1.26", "1.32", "1.33", "1.38"])
def test_windows_part_is_the_core(version: str) -> None:
    manifest = pod({"hostNetwork": True, "containers": [{"name": "c"}]})
    config = kw.pod_sandbox_config(manifest, kubelet_version=version)
    assert config.windows == kw.windows_sandbox_config(manifest, kubelet_version=version)
    has_ns = config.windows.security_context.HasField("namespace_options")
    assert has_ns is (version in ("1.26", "1.32"))


def test_runtime_handler_and_unknown_class() -> None:
    node = kw.NodeContext(runtime_handlers={"hyperv": "runhcs-wcow-hypervisor"})
    manifest = pod({"runtimeClassName": "hyperv", "containers": []})
    request = kw.run_pod_sandbox_request(manifest, node=node)
    assert request.runtime_handler == "runhcs-wcow-hypervisor"
    assert request.config == kw.pod_sandbox_config(manifest, node=node)
    assert kw.run_pod_sandbox_request(pod()).runtime_handler == ""
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.run_pod_sandbox_request(pod({"runtimeClassName": "gone", "containers": []}))
    assert str(info.value) == 'runtimeclass.node.k8s.io "gone" not found'


def test_refusal_texts_come_from_the_core() -> None:
    manifest = pod({"containers": [{"name": "c", "securityContext": {
        "windowsOptions": {"hostProcess": True}}}]})
    with pytest.raises(kw.SandboxConfigError,
                       match=r"^hostNetwork is required if Pod contains HostProcess containers$"):
        kw.pod_sandbox_config(manifest)


def test_workload_template_uses_workload_name_and_namespace() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "prod"},
                  "spec": {"template": {"metadata": {"labels": {"app": "w"}},
                                        "spec": {"containers": [{"name": "c"}]}}}}
    config = kw.pod_sandbox_config(deployment)
    assert (config.metadata.name, config.metadata.namespace) == ("web", "prod")
    assert config.labels["app"] == "w"


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"hostNetwork": "true", "containers": []}, "spec.hostNetwork"),
        ({"dnsPolicy": 1, "containers": []}, "spec.dnsPolicy"),
        ({"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]},
         "spec.containers[0].ports[0].containerPort"),
        ({"containers": [{"name": "c", "ports": [{"containerPort": 70000}]}]},
         "spec.containers[0].ports[0].containerPort"),
        ({"containers": [{"name": "c", "ports": "80"}]}, "spec.containers[0].ports"),
        ({"dnsConfig": {"nameservers": [1]}, "containers": []}, "spec.dnsConfig.nameservers[0]"),
        ({"dnsConfig": {"options": [{"name": "x", "value": 3}]}, "containers": []},
         "spec.dnsConfig.options[0].value"),
        ({"securityContext": {"sysctls": [{"name": 1}]}, "containers": []},
         "spec.securityContext.sysctls[0].name"),
        ({"securityContext": {"supplementalGroups": ["5"]}, "containers": []},
         "spec.securityContext.supplementalGroups[0]"),
        ({"hostname": 5, "containers": []}, "spec.hostname"),
    ],
)
def test_typed_errors_name_the_field(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        kw.pod_sandbox_config(pod(spec))
    assert info.value.field == field


def test_bad_metadata_and_arguments() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        kw.pod_sandbox_config(pod(labels={"a": 1}))
    assert info.value.field == 'metadata.labels["a"]'
    with pytest.raises(kw.InvalidArgumentError):
        kw.pod_sandbox_config(pod(), node={"node_name": "x"})  # type: ignore[arg-type]
    with pytest.raises(kw.InvalidArgumentError):
        kw.pod_sandbox_config(pod(), attempt=True)
    with pytest.raises(kw.InvalidArgumentError):
        kw.pod_sandbox_config(pod(), attempt=2**32)
    with pytest.raises(kw.UnsupportedVersionError):
        kw.pod_sandbox_config(pod(), kubelet_version="1.25")
    with pytest.raises(kw.FeatureGateError):
        kw.pod_sandbox_config(pod(), kubelet_version="1.38",
                              feature_gates="WindowsHostNetwork=true")
    with pytest.raises(kw.InvalidArgumentError) as arg_info:
        kw.pod_sandbox_config(42)  # type: ignore[arg-type]
    assert arg_info.value.argument == "pod"


class _Hostile(dict[str, Any]):
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_hostile_values_are_described_without_repr() -> None:
    manifest = pod({"containers": [{"name": "c", "ports": [_Hostile()]}]})
    manifest["spec"]["containers"][0]["ports"][0]["containerPort"] = _Hostile()
    with pytest.raises(kw.InvalidPodError) as info:
        kw.pod_sandbox_config(manifest)
    assert info.value.field == "spec.containers[0].ports[0].containerPort"


def test_deep_and_huge_input_is_bounded() -> None:
    spec = {"containers": [{"name": "c", "ports": [{"containerPort": 10**400}]}]}
    with pytest.raises(kw.InvalidPodError):
        kw.pod_sandbox_config(pod(spec))
    long_name = "x" * 100_000
    config = kw.pod_sandbox_config(pod({"hostNetwork": True, "containers": []},
                                       name=long_name))
    assert config.metadata.name == long_name


def test_input_is_not_mutated_and_threads_agree() -> None:
    manifest = pod({"hostNetwork": True, "dnsConfig": {"searches": ["a"]},
                    "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]})
    before = copy.deepcopy(manifest)
    expected = kw.pod_sandbox_config(manifest).SerializeToString(deterministic=True)
    results: list[bytes] = []

    def work() -> None:
        for _ in range(50):
            results.append(kw.pod_sandbox_config(manifest).SerializeToString(deterministic=True))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert manifest == before
    assert set(results) == {expected}


def test_pydantic_pod_model_is_accepted() -> None:
    """kubelet_winnet.Pod keeps only the fields it models (name, namespace, hostNetwork,
    windowsOptions): the request built from it matches the manifest's on those."""
    manifest = pod({"hostNetwork": True, "containers": [{"name": "c", "securityContext": {
        "windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}}]})
    model = kw.Pod.from_manifest(manifest)
    from_model = kw.pod_sandbox_config(model)
    from_manifest = kw.pod_sandbox_config(manifest)
    assert from_model.metadata.name == "foo" and from_model.hostname == ""
    assert from_model.windows == from_manifest.windows
    assert from_model.linux == from_manifest.linux


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        (pod(labels={"a": "\ud800"}), "metadata.labels.a"),
        (pod(annotations={"\udc80": "v"}), "metadata.annotations.\udc80"),
        (pod(name="x\ud800"), "metadata.name"),
        (pod({"hostNetwork": True, "containers": [{"name": "c", "ports": [
            {"containerPort": 80, "hostIP": "\ud800"}]}]}),
         "spec.containers[0].ports[0].hostIP"),
    ],
)
def test_lone_surrogates_are_typed_errors(manifest: dict[str, Any], field: str) -> None:
    """json.loads can produce strings protobuf cannot encode: InvalidPodError at the field."""
    with pytest.raises(kw.InvalidPodError) as info:
        kw.pod_sandbox_config(manifest)
    assert info.value.field == field


def test_mapping_that_raises_is_a_typed_error() -> None:
    class Foreign(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise RuntimeError("boom")

        def __iter__(self) -> Iterator[str]:
            raise RuntimeError("boom")

        def __len__(self) -> int:
            return 1

    manifest = pod()
    manifest["spec"] = Foreign()
    with pytest.raises(kw.InvalidPodError):
        kw.pod_sandbox_config(manifest)


def test_plain_pod_dns_linux_and_windows_parts() -> None:
    """A plain pod at 1.30: cluster DNS with the namespace's search list (dns.go), PID
    namespace per container without hostPID or shareProcessNamespace
    (kuberuntime_sandbox.go), the Windows namespace options sent (WindowsHostNetwork on
    from 1.30), and the container port without a host port."""
    manifest = pod({"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]})
    config = kw.pod_sandbox_config(manifest, kubelet_version="1.30")
    assert config.dns_config.servers == ["10.96.0.10"]
    assert config.dns_config.searches == ["new.svc.cluster.local", "svc.cluster.local",
                                          "cluster.local"]
    assert config.linux.security_context.namespace_options.pid == api_pb2.CONTAINER
    assert config.windows.security_context.HasField("namespace_options")  # 1.30: POD
    assert [(m.container_port, m.host_port) for m in config.port_mappings] == [(80, 0)]



# --- Go's %q and filepath.Join in the sandbox config ---------------------------------------


def test_hostname_error_quotes_as_go_percent_q() -> None:
    """The kubelet's "pod Hostname %q": strconv.Quote keeps what unicode.IsPrint accepts
    (é, as is; not %+q's \\u00e9) and escapes the rest (soft hyphen U+00AD, BEL)."""
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.pod_sandbox_config(pod({"hostname": "h\u00e9\u00ad\x07", "containers": []}))
    assert str(info.value).startswith('pod Hostname "h\u00e9\\u00ad\\a" is not a valid DNS label: ')


def test_runtime_class_error_quotes_as_go_percent_q() -> None:
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.run_pod_sandbox_request(pod({"runtimeClassName": "gr\u00fcn\t", "containers": []}))
    assert str(info.value) == 'runtimeclass.node.k8s.io "gr\u00fcn\\t" not found'


@pytest.mark.parametrize(("root", "expected"), [
    ("D:\\logs\\..\\pods\\", "D:\\pods\\new_foo_12345678"),  # Clean: ".." cancels "logs"
    ("D:/k//logs/.", "D:\\k\\logs\\new_foo_12345678"),  # separators become "\"
    ("\\\\server\\share", "\\\\server\\share\\new_foo_12345678"),  # a UNC volume is kept
    ("C:", "C:new_foo_12345678"),  # no separator after a drive's colon (Join)
])
def test_log_directory_is_go_filepath_join(root: str, expected: str) -> None:
    """kuberuntime_sandbox.go: filepath.Join(podLogsDir, namespace_name_uid) on Windows."""
    config = kw.pod_sandbox_config(pod(), node=kw.NodeContext(pod_logs_dir=root))
    assert config.log_directory == expected


_ROOT_PARTS = st.sampled_from(["C:", "c:", "\\", "/", "\\\\", "\\\\?\\", "\\\\.\\", "..", ".",
                               "logs", "é", "a b", "D:\\", "\\\\srv\\share", "??", ":"])


@given(root=st.lists(_ROOT_PARTS, max_size=6).map("".join),
       name=st.text("az09._-?:/\\é", max_size=10))
@example(root="\\\\srv", name="x").via("an incomplete UNC root")
@example(root="\\", name="??").via("Join keeps a device path from appearing")
def test_log_directory_is_join_windows_for_any_root(root: str, name: str) -> None:
    """BuildPodLogsDirectory is filepath.Join(podLogsDir, ...): the log directory is Go's
    Join of the root and the name whatever either holds (the one-element fast path and
    the cleaned-root cache included)."""
    from kubelet_winnet._kubelet import golang
    from kubelet_winnet._kubelet.sandbox_config import log_directory

    assert log_directory(root, name) == golang.join_windows(root, name)
    assert log_directory(root, name) == golang.join_windows(root, name)  # cached root


_REGEX_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    ("field", "value", "version", "reason"),
    [
        # apimachinery pkg/util/validation IsDNS1123Label: a valid subdomain that is no
        # label "must not contain dots" from commit cf894f11 (v0.27.0, kubelet 1.27).
        ("hostname", "a.b", "1.27", "must not contain dots"),
        ("hostname", "a.b", "1.37", "must not contain dots"),
        ("subdomain", "web.v2", "1.32", "must not contain dots"),
        ("hostname", "a.b", "1.26", _REGEX_MESSAGE),
        ("subdomain", "web.v2", "1.26", _REGEX_MESSAGE),
        # Not a subdomain either: the regular expression's message at every release.
        ("hostname", "a..b", "1.32", _REGEX_MESSAGE),
        ("hostname", "A.b", "1.32", _REGEX_MESSAGE),
        # Both too long and dotted: the length first, then the dots.
        ("hostname", "a." + "b" * 62, "1.32",
         "must be no more than 63 characters;must not contain dots"),
    ],
)
def test_dotted_hostname_or_subdomain_gets_the_releases_message(
    field: str, value: str, version: str, reason: str
) -> None:
    spec = {field: value, "containers": []}
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.pod_sandbox_config(pod(spec), kubelet_version=version)
    label = "Hostname" if field == "hostname" else "Subdomain"
    assert str(info.value) == f'pod {label} "{value}" is not a valid DNS label: {reason}'


def test_a_long_fqdn_is_printed_whole() -> None:
    """GeneratePodHostNameAndDomain prints the FQDN with %s: a cluster domain the API
    server never validates makes it as long as the node's flag."""
    domain = "d" * 300
    spec = {"hostname": "h", "subdomain": "s", "setHostnameAsFQDN": True, "containers": []}
    fqdn = f"h.s.new.svc.{domain}"
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.pod_sandbox_config(pod(spec), node=kw.NodeContext(cluster_domain=domain))
    assert str(info.value) == (
        f"failed to construct FQDN from pod hostname and cluster domain, FQDN {fqdn} is too "
        f"long (64 characters is the max, {len(fqdn)} characters requested)"
    )
