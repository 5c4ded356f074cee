"""runtime/_network.py: what becomes of a sandbox's DNSConfig on one node (``dns`` of
plan_pod_network), for requests the kubelet builds and CNI files as nodes hold them.

Expected values come from the upstream rules, quoted at each test: containerd
sandbox_run.go ``cniNamespaceOpts`` (the DNSConfig reaches CNI only as the ``dns``
capability; no CNI for a host-network sandbox), libcni ``injectRuntimeConfig`` (a
capability reaches only a plugin declaring it), and each plugin's own code: win-bridge and
win-overlay ``NetConf.GetDNS`` (servers and searches, each when not empty; no options),
windows-container-networking ``GetNetworkInfo`` (each of the three when not empty),
azure-vnet ``getEndpointDNSSettings`` (all three when servers or searches are set), calico
``DoNetworking`` (all three when servers are set), antrea ``updateResultDNSConfig``
(servers and searches). The kubelet's DNSConfig for ``dnsPolicy: None`` is the pod's
``dnsConfig`` as written (dns.go ``GetPodDNS``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.runtime import CniDns, CniNetwork, CniPlugin, NodeFacts, plan_pod_network
from kubelet_winnet.sources.node.cni import read_cni

CNI = Path(__file__).resolve().parent.parent / "data" / "node" / "cni"
DNS = frozenset({"dns"})


def pod(**dns: Any) -> dict[str, Any]:
    """A Windows pod with ``dnsPolicy: None`` and the dnsConfig lists given."""
    config: dict[str, Any] = {}
    if "servers" in dns:
        config["nameservers"] = dns["servers"]
    if "searches" in dns:
        config["searches"] = dns["searches"]
    if "options" in dns:
        config["options"] = [{"name": n} for n in dns["options"]]
    spec: dict[str, Any] = {"os": {"name": "windows"}, "dnsPolicy": "None",
                            "dnsConfig": config, "containers": [{"name": "c", "image": "i"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


EVERY = pod(servers=["10.0.0.53"], searches=["corp.example"], options=["edns0"])


def plan_on(network: CniNetwork | None, manifest: dict[str, Any] = EVERY) -> Any:
    request = kw.run_pod_sandbox_request(manifest, kubelet_version="1.34")
    return plan_pod_network(request, NodeFacts(runtime="containerd://2.1.0", cni=network)).dns


def test_the_kubelet_sends_the_pods_own_dns_config() -> None:
    """dns.go GetPodDNS, dnsPolicy None: exactly the pod's dnsConfig."""
    sent = kw.run_pod_sandbox_request(EVERY, kubelet_version="1.34").config.dns_config
    assert (list(sent.servers), list(sent.searches), list(sent.options)) == (
        ["10.0.0.53"], ["corp.example"], ["edns0"])


# What each file's endpoint gets instead, read off the file: win-bridge-flannel.conf's
# delegate carries a dns block (flannel hands its delegate that object as written,
# flannel_windows.go doCmdAdd); the nat files carry none.
STATIC = {
    "nerdctl-nat.conflist": "the configuration has no dns block of its own, so its endpoint "
                            "gets no name servers or searches from CNI, the same for every pod",
    "nat.conf": "the configuration has no dns block of its own, so its endpoint gets no name "
                "servers or searches from CNI, the same for every pod",
    "win-bridge-flannel.conf": "its endpoint gets the configuration's own dns block "
                               "(nameservers 10.96.0.10; search svc.cluster.local), the same "
                               "for every pod",
    "sdnbridge.conf": "its endpoint gets the configuration's own dns block (nameservers "
                      "10.96.0.10; search svc.cluster.local), the same for every pod",
}


@pytest.mark.parametrize("name", sorted(STATIC))
def test_without_the_dns_capability_every_pod_gets_the_static_block(name: str) -> None:
    """libcni injectRuntimeConfig: an undeclared capability never reaches the plugin, which
    then puts its configuration's own dns block on the endpoint (NetConf.GetDNS,
    GetNetworkInfo start from it): the reason quotes that block, or says there is none."""
    plan = plan_on(read_cni(str(CNI / name)))
    assert (plan.outcome, plan.applied, plan.reaches) == ("dropped", False, ())
    assert "does not declare the dns capability" in plan.reason
    assert plan.reason.endswith(f"so the pod's DNS settings never reach it: {STATIC[name]}")


def test_flannels_own_dns_block_never_reaches_its_delegate(tmp_path: Path) -> None:
    """flannel_windows.go doCmdAdd hands the delegate only the ``delegate`` object (with
    name, ipMasq, cniVersion and ipam added): a dns block beside it is not the endpoint's."""
    conf = tmp_path / "10-flannel.conf"
    conf.write_text('{"name": "cbr0", "type": "flannel", "dns": {"nameservers": ["10.96.0.10"]},'
                    ' "delegate": {"type": "win-bridge"}}', encoding="utf-8")
    plan = plan_on(read_cni(str(conf)))
    assert plan.outcome == "dropped"
    assert plan.reason.endswith(
        "its endpoint gets no name servers or searches from CNI, the same for every pod: the "
        "delegate's configuration has no dns block, and flannel never hands it its own "
        "(nameservers 10.96.0.10)")


def test_the_static_block_is_quoted_when_the_pods_lists_are_not_taken(tmp_path: Path) -> None:
    """calico DoNetworking takes runtimeConfig.dns only when its servers are set: a pod
    setting searches alone keeps calico.conf's own block ("DNS", "Nameservers": Go's
    encoding/json matches keys without regard to case)."""
    plan = plan_on(read_cni(str(CNI / "calico.conf")), pod(searches=["corp.example"]))
    assert plan.outcome == "dropped"
    assert plan.reason.endswith(
        "none of the pod's searches reach its endpoint, so its endpoint gets the "
        "configuration's own dns block (nameservers 10.96.0.10; search svc.cluster.local), "
        "the same for every pod")


def test_a_long_static_block_is_quoted_within_bounds() -> None:
    """A block of thousands of servers, each huge, stays a sentence: the first eight,
    each cut, then how many more."""
    block = CniDns(nameservers=tuple(f"10.0.{i // 250}.{i % 250}" + "x" * 500
                                     for i in range(3000)), domain="d" * 5000)
    plan = plan_on(CniNetwork("n", (CniPlugin("win-bridge", dns=block),)))
    assert plan.outcome == "dropped" and "and 2992 more" in plan.reason
    assert len(plan.reason) < 1500


@pytest.mark.parametrize("name", ["sdnbridge.conf", "flannel-sdnoverlay.conf"])
def test_dns_capabilities_is_not_the_dns_capability(name: str) -> None:
    """windows-container-networking's examples declare "dnsCapabilities": libcni matches
    the capability's name, "dns", so nothing is passed."""
    plan = plan_on(read_cni(str(CNI / name)))
    assert plan.outcome == "dropped"
    assert "it declares dnsCapabilities, which names no capability containerd passes" in (
        plan.reason)


def test_win_overlay_takes_servers_and_searches_never_options() -> None:
    """pkg/hns/netconf_windows.go: RuntimeDNS has servers and searches only."""
    plan = plan_on(read_cni(str(CNI / "win-overlay.conf")))
    assert (plan.outcome, plan.applied, plan.reaches) == ("partly", False,
                                                           ("servers", "searches"))
    assert "its options do not" in plan.reason
    only_servers = plan_on(read_cni(str(CNI / "win-overlay.conf")), pod(servers=["1.1.1.1"]))
    assert (only_servers.outcome, only_servers.reaches) == ("applied", ("servers",))


def test_flannel_hands_dns_to_its_delegate() -> None:
    """flannel.go copies runtimeConfig to the delegate (win-bridge unless set)."""
    plan = plan_on(CniNetwork("cbr0", (CniPlugin("flannel", DNS),), "10-flannel.conf"))
    assert plan.outcome == "partly" and "flannel (delegate win-bridge)" in plan.reason
    sdn = plan_on(CniNetwork("cbr0", (CniPlugin("flannel", DNS, delegate="sdnbridge"),)))
    assert (sdn.outcome, sdn.reaches) == ("applied", ("servers", "searches", "options"))


def test_sdn_plugins_take_every_list() -> None:
    """cni/cni.go GetNetworkInfo: each of servers, searches, options when not empty."""
    for kind in ("sdnbridge", "sdnoverlay", "nat"):
        plan = plan_on(CniNetwork("n", (CniPlugin(kind, DNS),)))
        assert (plan.outcome, plan.applied) == ("applied", True)


def test_azure_vnet_needs_servers_or_searches() -> None:
    """getEndpointDNSSettings: the runtime's DNS only when servers or searches are set."""
    network = read_cni(str(CNI / "azure-windows.conflist"))
    assert plan_on(network).outcome == "applied"
    alone = plan_on(network, pod(options=["edns0"]))
    assert (alone.outcome, alone.reaches) == ("dropped", ())
    assert plan_on(network, pod(searches=["a.example"], options=["edns0"])).reaches == (
        "searches", "options")


def test_calico_needs_servers() -> None:
    """DoNetworking: the runtime's DNS only when its servers are not empty."""
    network = read_cni(str(CNI / "calico.conf"))
    assert plan_on(network).outcome == "applied"
    assert plan_on(network, pod(searches=["a.example"])).outcome == "dropped"


def test_antrea_takes_servers_and_searches() -> None:
    """antrea server_windows.go updateResultDNSConfig: no options."""
    plan = plan_on(read_cni(str(CNI / "antrea.conflist")))
    assert (plan.outcome, plan.reaches) == ("partly", ("servers", "searches"))


def test_only_the_first_plugin_makes_the_endpoint() -> None:
    network = CniNetwork("n", (CniPlugin("win-bridge"), CniPlugin("portmap", DNS)))
    plan = plan_on(network)
    assert plan.outcome == "dropped"
    assert "portmap declares it, but does not make the endpoint" in plan.reason


def test_a_plugin_not_modelled_is_unknown() -> None:
    plan = plan_on(CniNetwork("n", (CniPlugin("bridge", DNS),)))
    assert (plan.outcome, plan.applied) == ("unknown", None)
    assert "bridge in CNI network 'n' declares dns" in plan.reason


def test_a_host_process_pod_resolves_as_the_node_does() -> None:
    """sandbox_run.go: no CNI for a host-network sandbox (HostProcess on Windows)."""
    manifest = {**EVERY, "spec": {**EVERY["spec"], "hostNetwork": True,
                                  "securityContext": {"windowsOptions": {"hostProcess": True}}}}
    plan = plan_on(CniNetwork("n", (CniPlugin("sdnbridge", DNS),)), manifest)
    assert (plan.outcome, plan.applied) == ("host", False)


def test_unknown_cni_and_no_node() -> None:
    assert plan_on(None).outcome == "unknown"
    request = kw.run_pod_sandbox_request(EVERY, kubelet_version="1.34")
    assert plan_pod_network(request).dns.outcome == "unknown"  # type: ignore[union-attr]


def test_a_request_without_dns_config_sets_nothing() -> None:
    """toCNIDNS: no DNSConfig, no capability argument; the static block applies."""
    request = api_pb2.RunPodSandboxRequest()
    plan = plan_pod_network(request, NodeFacts(runtime="containerd://2.1.0", cni=CniNetwork(
        "n", (CniPlugin("win-bridge", DNS),))))
    assert plan.dns is not None and plan.dns.outcome == "applied"
    assert "sets nothing" in plan.dns.reason


def test_a_reason_stays_a_sentence_whatever_the_file_names() -> None:
    """Plugin types and delegates come from the node's file: each is cut to 60 characters."""
    for network in (CniNetwork("n", (CniPlugin("x" * 5000, DNS),)),
                    CniNetwork("n", (CniPlugin("flannel", DNS, delegate="y" * 5000),)),
                    CniNetwork("n", (CniPlugin("z" * 5000, frozenset({"dns" * 2000})),))):
        plan = plan_on(network)
        assert plan.outcome in ("unknown", "dropped")
        assert len(plan.reason) < 600 and "..." in plan.reason


def test_a_host_process_pod_whose_network_is_not_known_never_reaches_cni() -> None:
    """Under a Hyper-V handler on a release not known it has the node's network or none
    (hcsshim PR #2531): CNI never sees its DNSConfig either way."""
    manifest = {**EVERY, "spec": {**EVERY["spec"], "hostNetwork": True,
                                  "securityContext": {"windowsOptions": {"hostProcess": True}}}}
    request = kw.run_pod_sandbox_request(manifest, kubelet_version="1.34")
    request.runtime_handler = "runhcs-wcow-hypervisor"
    plan = plan_pod_network(request, NodeFacts(runtime="", cni=CniNetwork(
        "n", (CniPlugin("sdnbridge", DNS),))))
    assert plan.namespace == "unknown"
    assert plan.dns is not None and plan.dns.outcome == "host"
    assert "if it has a network at all" in plan.dns.reason
