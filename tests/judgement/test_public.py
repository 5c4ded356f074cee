"""``kubelet_winnet.judge``, the verdict for Python callers: its DNS question and its
argument checks. Expected DNS outcomes restate win-bridge's ``NetConf.GetDNS``
(containernetworking/plugins ``pkg/hns/netconf_windows.go``: servers and searches, never
options) and libcni ``injectRuntimeConfig`` (a capability only for a plugin declaring it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kubelet_winnet as kw
from kubelet_winnet.errors import InvalidArgumentError
from kubelet_winnet.runtime import CniNetwork, CniPlugin, NodeFacts

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
    "spec": {"os": {"name": "windows"}, "dnsPolicy": "None",
             "dnsConfig": {"nameservers": ["10.0.0.53"], "options": [{"name": "edns0"}]},
             "containers": [{"name": "c", "image": "i"}]}}


def _node(capabilities: frozenset[str]) -> kw.NodeKnowledge:
    network = CniNetwork("n", (CniPlugin("win-bridge", capabilities),))
    return kw.NodeKnowledge(files=NodeFacts(runtime="containerd://2.1.0", cni=network))


def _sent(pod: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    sent = kw.pod_sandbox_config(pod, kubelet_version="1.34").dns_config
    return list(sent.servers), list(sent.searches), list(sent.options)


@pytest.mark.parametrize(("capabilities", "outcome"), [
    (frozenset({"dns"}), "partly"), (frozenset(), "dropped")])
def test_without_dns_given_the_verdict_asks_with_the_dnsconfig_the_kubelet_sends(
        capabilities: frozenset[str], outcome: str) -> None:
    """As audit --node-config asks: the request builder's DNSConfig for the pod, so a
    node agent gets the DNS answer without building the lists."""
    verdict = kw.judge(POD, kubelet_version="1.34", node=_node(capabilities))
    assert verdict.dns is not None and verdict.dns.outcome == outcome
    assert verdict.dns == kw.judge(POD, kubelet_version="1.34", node=_node(capabilities),
                                   dns=_sent(POD)).dns


def test_a_pod_the_kubelet_refuses_has_no_dns_answer() -> None:
    refused = {**POD, "spec": {**POD["spec"], "containers": [
        {"name": "a", "image": "i",
         "securityContext": {"windowsOptions": {"hostProcess": True}}},
        {"name": "b", "image": "i"}]}}
    verdict = kw.judge(refused, kubelet_version="1.34", node=_node(frozenset({"dns"})))
    assert verdict.starts is False
    assert verdict.dns is None  # the sandbox is never made: no DNSConfig is sent


def test_win_bridge_with_the_capability_drops_only_the_options() -> None:
    verdict = kw.judge(POD, kubelet_version="1.34", node=_node(frozenset({"dns"})),
                       dns=_sent(POD))
    assert verdict.dns is not None and verdict.dns.outcome == "partly"


def test_without_the_capability_the_pods_dns_is_dropped() -> None:
    verdict = kw.judge(POD, kubelet_version="1.34", node=_node(frozenset()), dns=_sent(POD))
    assert verdict.dns is not None and verdict.dns.outcome == "dropped"


@pytest.mark.parametrize(("dns", "argument"), [
    ("10.0.0.53", "dns"),
    ((["a"], ["b"]), "dns"),
    ((["a"], "b", []), "dns[1]"),
    (([1], [], []), "dns[0]"),
])
def test_a_dns_that_is_not_three_lists_of_strings_is_a_typed_error(
        dns: Any, argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        kw.judge(POD, kubelet_version="1.34", dns=dns)
    assert argument in str(raised.value)


_WEB: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
    "spec": {"os": {"name": "windows"}, "containers": [
        {"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080},
                                              {"containerPort": 9000}]}]}}


@pytest.mark.parametrize(("capabilities", "outcome"), [
    # libcni injectRuntimeConfig: portMappings reaches win-bridge only when declared, and
    # win-bridge applies them (ApplyPortMappingPolicy); undeclared, nothing maps the port.
    (frozenset({"portMappings"}), "applied"),
    (frozenset(), "dropped"),
])
def test_judge_gives_each_host_port_its_outcome(capabilities: frozenset[str],
                                                 outcome: str) -> None:
    """MakePortMappings sends the hostPort 8080 mapping (and 9000 without a hostPort);
    the verdict judges the one with a hostPort, as audit and node do."""
    verdict = kw.judge(_WEB, kubelet_version="1.34", node=_node(capabilities))
    assert [(p.host_port, p.outcome) for p in verdict.ports if p.host_port] == [
        (8080, outcome)]


def test_judge_without_node_files_gives_a_host_port_an_unknown_outcome() -> None:
    verdict = kw.judge(_WEB, kubelet_version="1.34")
    assert [(p.host_port, p.outcome) for p in verdict.ports if p.host_port] == [
        (8080, "unknown")]


def test_judge_refuses_a_host_port_written_as_text() -> None:
    """The request builder reads every port (MakePortMappings): a hostPort "8080" is bad
    input with its field path, never a pod judged without its ports."""
    pod = {**_WEB, "spec": {**_WEB["spec"], "containers": [
        {"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": "8080"}]}]}}
    with pytest.raises(kw.InvalidPodError) as info:
        kw.judge(pod, kubelet_version="1.34")
    assert info.value.field == "spec.containers[0].ports[0].hostPort"
    assert str(info.value) == ('spec.containers[0].ports[0].hostPort: expected an integer, '
                               'got string "8080"')


def test_judge_of_a_pod_the_kubelet_refuses_is_the_refusal() -> None:
    """A HostProcess pod without hostNetwork: the kubelet refuses it (no request is
    built), and the verdict says so rather than raising."""
    pod = {**_WEB, "spec": {**_WEB["spec"], "securityContext": {
        "windowsOptions": {"hostProcess": True}}}}
    verdict = kw.judge(pod, kubelet_version="1.34")
    assert verdict.starts is False and verdict.ports == ()
    assert verdict.decision.error is not None and "hostNetwork" in verdict.decision.error


@pytest.mark.parametrize(("argument", "value", "said"), [
    ("runtime", 2, "runtime: expected a containerRuntimeVersion string or None, got int"),
    ("files", {"cni": None}, "files: expected a runtime.NodeFacts or None, got dict"),
    ("runtime_classes", {"hyperv": 1}, "runtime_classes: expected a mapping of RuntimeClass"),
    ("runtime_classes", ["hyperv"], "runtime_classes: expected a mapping of RuntimeClass"),
    ("handlers_read", "yes", "handlers_read: expected a bool, got str"),
    ("assume_default_handler", None, "assume_default_handler: expected a bool"),
])
def test_node_knowledge_refuses_a_wrong_argument_by_name(argument: str, value: Any,
                                                         said: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        kw.NodeKnowledge(**{argument: value})
    assert said in str(raised.value)


def test_node_files_in_place_of_their_facts_are_refused_with_the_fix() -> None:
    """read_node returns the files and what each was read as; the verdict takes the
    facts they give (a node agent's likely slip)."""
    from kubelet_winnet.sources import read_node

    files = read_node([str(_NODES / "win-2025-a")])
    with pytest.raises(InvalidArgumentError) as raised:
        kw.NodeKnowledge(files=files)  # type: ignore[arg-type]
    assert str(raised.value).endswith(
        "got NodeFiles (read_node(...) returns the node's files: pass its .facts)")
    assert kw.judge(POD, node=kw.NodeKnowledge(files=files.facts)).starts is True


_NODES = Path(__file__).resolve().parent.parent / "data" / "node" / "nodes"


def test_a_node_read_without_its_containerd_file_has_its_handlers_assumed() -> None:
    """sigwin-1 holds no config.toml: read_node's facts carry containerd's default
    handlers as assumed, so the verdict says so, and a RuntimeClass handler they lack is
    not known rather than refused as containerd would refuse an unconfigured one
    (GetSandboxRuntime)."""
    from kubelet_winnet.sources import read_node

    facts = read_node([str(_NODES / "sigwin-1")]).facts
    assert facts.handlers_read is False
    plain = kw.judge(POD, node=kw.NodeKnowledge(files=facts))
    assert "handler isolation: assumed from containerd's default configuration" in plain.facts
    custom = {**POD, "spec": {**POD["spec"], "runtimeClassName": "custom"}}
    verdict = kw.judge(custom, node=kw.NodeKnowledge(files=facts,
                                                     runtime_classes={"custom": "custom"}))
    assert verdict.runtime_refused is None and verdict.isolation is None
    assert "handler isolation: not known" in verdict.facts
    read = read_node([str(_NODES / "win-2025-a")]).facts
    assert read.handlers_read is True
    refused = kw.judge(custom, node=kw.NodeKnowledge(files=read,
                                                     runtime_classes={"custom": "custom"}))
    assert refused.runtime_refused == 'no runtime for "custom" is configured'


def test_node_knowledge_carries_what_stops_the_node(tmp_path: Path) -> None:
    """A config.toml containerd cannot decode stops containerd at start-up
    (loadConfigFile's "failed to unmarshal TOML"): judged with node_knowledge the pod is
    refused with the file and line, as `node` says; the facts alone judge it with
    containerd's defaults, and say so."""
    from kubelet_winnet.sources import read_node

    (tmp_path / "config.toml").write_text("version = 2\n[plugins\n", encoding="utf-8")
    files = read_node([str(tmp_path)])
    known = kw.node_knowledge(files, runtime="containerd://2.1.3")
    assert known.runtime == "containerd://2.1.3"
    verdict = kw.judge(POD, node=known)
    assert verdict.starts is False and verdict.network.value == "none"
    assert verdict.runtime_refused is not None
    assert verdict.runtime_refused.startswith("containerd does not start: it cannot decode")
    assert verdict.runtime_refused.endswith(f"({tmp_path / 'config.toml'}:2)")
    alone = kw.judge(POD, node=kw.NodeKnowledge(files=files.facts))
    assert alone.starts is True
    assert "handler isolation: assumed from containerd's default configuration" in alone.facts


def test_node_knowledge_is_the_facts_with_the_nodes_own_stops() -> None:
    """win-2025-a's kubelet 1.38 sets WindowsHostNetwork, a gate removed after 1.37: the
    kubelet exits at start-up (its own finding), and node_knowledge says so where the
    facts alone do not; the runtime is the Node object's."""
    from kubelet_winnet.sources import read_node

    files = read_node([str(_NODES / "win-2025-a")])
    known = kw.node_knowledge(files, runtime_classes={"hv": "runhcs-wcow-hypervisor"})
    assert known.runtime_classes == {"hv": "runhcs-wcow-hypervisor"}
    assert known.runtime == files.node.runtime if files.node else False
    assert known.files is not None
    assert (known.files.handlers, known.files.default_handler) == (
        files.facts.handlers, files.facts.default_handler)
    assert files.facts.stops == ()
    assert [s.split(":")[0] for s in known.files.stops] == ["kubelet 1.38 exits at start-up"]
    assert "WindowsHostNetwork" in known.files.stops[0]
    assert kw.judge(POD, kubelet_version="1.38", node=known).starts is False
    with pytest.raises(InvalidArgumentError, match="runtime_classes"):
        kw.node_knowledge(files, runtime_classes=["hv"])  # type: ignore[arg-type]


def test_judge_takes_the_nodes_own_kubelet_when_given_none() -> None:
    """akswin-1's Node object says kubelet v1.34.1: from 1.33 the kubelet sends no
    namespace_options (kubelet-rules.md), so a hostNetwork pod judged with the node's
    knowledge and no kubelet_version gets none, as audit --node-config says; a kubelet of
    another minor than the node's own is refused, naming both."""
    from kubelet_winnet.errors import NodeConfigError
    from kubelet_winnet.sources import read_node

    files = read_node([str(Path(__file__).resolve().parents[2] / "examples" / "nodes"
                           / "akswin-1")])
    known = kw.node_knowledge(files)
    assert known.kubelet_version == "v1.34.1"
    host = {**POD, "spec": {**POD["spec"], "hostNetwork": True}}
    verdict = kw.judge(host, node=known)
    assert "kubelet 1.34.1" in verdict.facts
    assert verdict.decision is not None and verdict.decision.network is None
    assert kw.judge(host, node=known, kubelet_version="1.34.0").decision == verdict.decision
    with pytest.raises(NodeConfigError) as info:
        kw.judge(host, node=known, kubelet_version="1.32")
    assert str(info.value) == (
        "kubelet_version: 1.32 is not the node's own kubelet v1.34.1 (its Node object): leave "
        "kubelet_version out to judge with the node's, or give its release")
    sent = kw.judge(host)  # no node: 1.32, which sends network NODE
    assert sent.decision is not None and sent.decision.network == "NODE"


@pytest.mark.parametrize("version", ["banana", "1.20", "1.99"])
def test_node_knowledge_refuses_a_kubelet_the_rules_cannot_judge(version: str) -> None:
    from kubelet_winnet.sources import read_node

    files = read_node([str(_NODES / "sigwin-1")])
    with pytest.raises(kw.UnsupportedVersionError):
        kw.node_knowledge(files, kubelet_version=version)
    with pytest.raises(kw.UnsupportedVersionError):
        kw.node_findings(files, kubelet_version=version)
    with pytest.raises(kw.UnsupportedVersionError):
        kw.NodeKnowledge(kubelet_version=version)
