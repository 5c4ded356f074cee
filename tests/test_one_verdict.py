"""One situation, one verdict: generated situations (pod x RuntimeClasses x kubelet
version and gates x containerd release x the node's containerd configuration) pushed
through every door as a user runs it (``main([...])`` over files, and the library), each
door's answer compared with the judgement of what that door knows. A door that knows less
may be conditional (``unknown``), never confident where the judgement of more says
otherwise."""

from __future__ import annotations

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet import NodeContext, run_pod_sandbox_request
from kubelet_winnet._judgement import NodeKnowledge, Verdict, judge
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._lint.dns import NOT_READ, asks_own_dns
from kubelet_winnet.cli import main
from kubelet_winnet.errors import WinnetError
from kubelet_winnet.runtime import CniNetwork, CniPlugin, NodeFacts, plan_pod_network

RELEASES = (None, "containerd://1.7.20", "containerd://2.3.2", "containerd://2.3.3",
            "containerd://2.4.0")
HANDLERS = ("runhcs-wcow-process", "runhcs-wcow-hypervisor", "secure", "plain")
# What the generated config.toml says of each handler (SandboxIsolation = 1: Hyper-V).
ISOLATION = {"runhcs-wcow-process": "process", "runhcs-wcow-hypervisor": "hyperv",
             "secure": "hyperv", "plain": "process"}
# A pod's DNS settings: the cluster DNS, or its own (dnsPolicy None or Default, dnsConfig).
DNS_SETTINGS: tuple[dict[str, Any], ...] = (
    {}, {"dnsPolicy": "Default"},
    {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.0.0.53"],
                                        "options": [{"name": "edns0"}]}},
    {"dnsConfig": {"searches": ["corp.example"]}},
)
# The node's CNI file (beside its config.toml): flannel declaring dns (win-bridge takes
# servers and searches), nat declaring nothing, sdnbridge declaring it (takes all three).
CNI_FILES: dict[str, dict[str, Any]] = {
    "flannel": {"name": "cbr0", "type": "flannel", "capabilities": {"dns": True}},
    "nat": {"name": "nat", "type": "nat"},
    "sdnbridge": {"name": "l2", "type": "sdnbridge",
                  "capabilities": {"portMappings": True, "dns": True}},
}


@st.composite
def situations(draw: st.DrawFn) -> dict[str, Any]:
    level = draw(st.sampled_from(["none", "pod", "container"]))
    spec: dict[str, Any] = {"nodeName": "w1", "nodeSelector": {"kubernetes.io/os": "windows"},
                            "hostNetwork": draw(st.booleans()),
                            "containers": [{"name": "c", "image": "i"}]}
    if level == "pod":
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    elif level == "container":
        spec["containers"][0]["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    if draw(st.booleans()):
        spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    spec.update(draw(st.sampled_from(DNS_SETTINGS)))
    runtime_class = draw(st.sampled_from([None, "rc"]))
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    classes = {"rc": draw(st.sampled_from(HANDLERS))} if draw(st.booleans()) else {}
    minor = draw(st.integers(26, 38))
    gates = draw(st.sampled_from([None, "WindowsHostNetwork=true", "WindowsHostNetwork=false"]))
    try:
        kubelet_profile(f"1.{minor}", gates)
    except Exception:  # a gate that kubelet refuses: left at its default
        gates = None
    return {"pod": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"}, "spec": spec},
            "classes": classes, "kubelet": f"1.{minor}", "gates": gates,
            "release": draw(st.sampled_from(RELEASES)),
            "config": draw(st.sampled_from([None, "runhcs-wcow-process", "runhcs-wcow-hypervisor",
                                            "secure"])),
            "cni": draw(st.sampled_from([None, *CNI_FILES]))}


def _run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue()


def _config(default: str, release: str | None) -> str:
    """A config.toml the release loads: containerd 1.7 reads schema versions up to 2
    (with the CRI plugin at io.containerd.grpc.v1.cri), 2.x version 3."""
    old = release is not None and release.startswith("containerd://1.")
    plugin = '"io.containerd.grpc.v1.cri"' if old else '"io.containerd.cri.v1.runtime"'
    table = f"[plugins.{plugin}.containerd.runtimes"
    text = (f'version = {2 if old else 3}\n[plugins.{plugin}.containerd]\n'
            f'  default_runtime_name = "{default}"\n')
    for name in HANDLERS:
        text += f'{table}.{name}]\n  runtime_type = "io.containerd.runhcs.v1"\n'
        if ISOLATION[name] == "hyperv":
            text += f"{table}.{name}.options]\n  SandboxIsolation = 1\n"
    return text


def _facts(case: dict[str, Any]) -> NodeFacts | None:
    if case["config"] is None:
        return None
    body = CNI_FILES.get(case.get("cni") or "")
    cni = None if body is None else CniNetwork(body["name"], (CniPlugin(
        body["type"], frozenset(k for k, on in body.get("capabilities", {}).items() if on)),))
    return NodeFacts(runtime=case["release"] or "", handlers=dict(ISOLATION),  # type: ignore[arg-type]
                     default_handler=case["config"], cni=cni)


def _sent_dns(case: dict[str, Any]) -> tuple[tuple[str, ...], ...] | None:
    """The DNSConfig the kubelet sends for the pod (a RuntimeClass the input lacks looked
    up as the default handler: the DNS does not depend on it); None when it sends none."""
    spec = case["pod"]["spec"]
    handlers = dict(case["classes"])
    if spec.get("runtimeClassName") and spec["runtimeClassName"] not in handlers:
        handlers[spec["runtimeClassName"]] = ""
    try:
        request = run_pod_sandbox_request(case["pod"], kubelet_version=case["kubelet"],
                                          feature_gates=case["gates"],
                                          node=NodeContext(runtime_handlers=handlers))
    except WinnetError:
        return None
    sent = request.config.dns_config
    return (tuple(sent.servers), tuple(sent.searches), tuple(sent.options))


def _judged(case: dict[str, Any], knowledge: NodeKnowledge,
            dns: tuple[tuple[str, ...], ...] | None = None) -> Verdict:
    profile = kubelet_profile(case["kubelet"], case["gates"])
    return judge(case["pod"], profile, knowledge, dns=dns)  # type: ignore[arg-type]


def _dump(case: dict[str, Any], folder: Path) -> Path:
    info: dict[str, Any] = {"kubeletVersion": f"v{case['kubelet']}.0",
                            "operatingSystem": "windows"}
    if case["release"]:
        info["containerRuntimeVersion"] = case["release"]
    items: list[Any] = [{"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": "w1", "labels": {"kubernetes.io/os": "windows"}},
                         "status": {"nodeInfo": info}}]
    items += [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
               "metadata": {"name": name}, "handler": handler}
              for name, handler in case["classes"].items()]
    path = folder / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                    "items": [*items, case["pod"]]}), encoding="utf-8")
    return path


def _audit(case: dict[str, Any], folder: Path) -> dict[str, Any]:
    argv = ["audit", "-f", str(_dump(case, folder)), "-o", "json", "--fail-on", "never"]
    if case["gates"]:
        argv += ["--feature-gates", case["gates"]]
    if case["config"] is not None:
        (folder / "nodes" / "w1").mkdir(parents=True)
        (folder / "nodes" / "w1" / "config.toml").write_text(
            _config(case["config"], case["release"]), encoding="utf-8")
        if case.get("cni") is not None:
            (folder / "nodes" / "w1" / "10-net.conf").write_text(
                json.dumps(CNI_FILES[case["cni"]]), encoding="utf-8")
        argv += ["--node-config", str(folder / "nodes")]
    status, out = _run(*argv)
    assert status == 0, out
    pods: list[dict[str, Any]] = json.loads(out)["pods"]
    assert len(pods) == 1
    return pods[0]


def _check(case: dict[str, Any], folder: Path) -> set[str]:
    path = folder / "pod.yaml"
    classes = [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": n}, "handler": h} for n, h in case["classes"].items()]
    path.write_text(yaml.safe_dump_all([*classes, case["pod"]]), encoding="utf-8")
    argv = ["check", str(path), "-o", "json", "--fail-on", "never",
            "--kubelet-version", case["kubelet"]]
    if case["gates"]:
        argv += ["--feature-gates", case["gates"]]
    _, out = _run(*argv)
    return {f["rule"] for f in json.loads(out)["findings"]}


def _explain_and_translate(case: dict[str, Any], folder: Path) -> tuple[bool, bool]:
    """Whether explain warns and translate notes that hostNetwork does not take effect."""
    flags = ["--kubelet-version", case["kubelet"]]
    if case["gates"]:
        flags += ["--feature-gates", case["gates"]]
    _, out = _run("explain", str(folder / "pod.yaml"), "-o", "json", *flags)
    warned = any(w["field"].endswith("hostNetwork") for w in json.loads(out)[0]["warnings"])
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        main(["translate", str(folder / "pod.yaml"), *flags])
    return warned, "hostNetwork: true will not" in err.getvalue()


_GATE_LABELS = {None: "default", "WindowsHostNetwork=true": "on",
                "WindowsHostNetwork=false": "off"}


def _matrix(case: dict[str, Any], folder: Path, full: Verdict) -> None:
    """matrix --pod: its cell for the kubelet and gates, on any containerd node (handler
    and release not known): the network, with the condition where it depends on them."""
    _, out = _run("matrix", "--pod", str(folder / "pod.yaml"), "-o", "json")
    cells = json.loads(out)["rows"][0]["cells"]
    cell = next(c for c in cells if c["kubelet"] == case["kubelet"]
                and c["gates"] == _GATE_LABELS[case["gates"]])
    verdict = _judged(case, NodeKnowledge(runtime="containerd", assume_default_handler=False))
    assert (cell["outcome"] == "refused") == (verdict.refused is not None)
    if cell["outcome"] != "sent":
        return
    value = verdict.network.value
    assert cell["containerdNetwork"] == ("pod" if value == "pod" else "host")
    assert cell.get("containerdNetworkCondition", "") == verdict.network.condition
    if case["config"] is None:
        _agrees("matrix", verdict, full)


def _agrees(door: str, less: Verdict, more: Verdict) -> None:
    """A door that knows less is the judgement of what it knows; where that is confident,
    the judgement of more agrees."""
    if less.network.value != "unknown" and more.network.value != "unknown":
        assert less.network.value == more.network.value, (door, less.network, more.network)


@given(situations())
def test_every_door_renders_the_one_verdict(case: dict[str, Any]) -> None:
    _every_door(case)


def test_check_and_the_node_differ_on_a_host_process_pod_behind_a_hyper_v_default() -> None:
    """check assumes a process-isolated default handler, so it gives a HostProcess pod the
    node's network (and DNS); a node whose default handler is Hyper-V gives it none."""
    spec = {"nodeName": "w1", "nodeSelector": {"kubernetes.io/os": "windows"},
            "hostNetwork": True, "containers": [{"name": "c", "image": "i"}],
            "securityContext": {"windowsOptions": {"hostProcess": True}}}
    _every_door({"pod": {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "p", "namespace": "default"}, "spec": spec},
                 "classes": {}, "kubelet": "1.26", "gates": None,
                 "release": "containerd://2.3.3", "config": "runhcs-wcow-hypervisor",
                 "cni": None})


@pytest.mark.parametrize("host_process", [False, True])
@pytest.mark.parametrize("cni", [None, *CNI_FILES])
@pytest.mark.parametrize("dns", range(len(DNS_SETTINGS)))
def test_every_door_says_whether_the_pods_dns_reaches_it(dns: int, cni: str | None,
                                                         host_process: bool) -> None:
    """Each DNS setting on each CNI file, as every door renders it (the generated
    situations draw too few of these to reach each)."""
    spec: dict[str, Any] = {"nodeName": "w1", "nodeSelector": {"kubernetes.io/os": "windows"},
                            "containers": [{"name": "c", "image": "i"}], **DNS_SETTINGS[dns]}
    if host_process:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    _every_door({"pod": {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "p", "namespace": "default"}, "spec": spec},
                 "classes": {}, "kubelet": "1.34", "gates": None,
                 "release": "containerd://2.1.0", "config": "runhcs-wcow-process", "cni": cni})


def _every_door(case: dict[str, Any]) -> None:
    classes = case["classes"]
    sent = _sent_dns(case)
    full = _judged(case, NodeKnowledge(runtime=case["release"], files=_facts(case),
                                       runtime_classes=classes), sent)
    own_dns = asks_own_dns(case["pod"]["spec"])
    # check reads no CNI file: the DNS lists do not change its answer
    as_check = _judged(case, NodeKnowledge(runtime="containerd", runtime_classes=classes),
                       NOT_READ)
    # audit without the node's files: the node's default handler is not known.
    as_audit = _judged(case, NodeKnowledge(runtime=case["release"], runtime_classes=classes,
                                           assume_default_handler=False))
    _agrees("audit without the node's files", as_audit, full)
    if case["config"] is None:
        _agrees("check", as_check, full)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        row = _audit(case, folder)
        expected = full if case["config"] is not None else as_audit
        assert row["hostNetworkEffect"] == expected.host_network_effect, (row, expected)
        if case["config"] is not None:
            assert row["onNode"]["network"] == full.network.value
            assert row["onNode"]["handler"] == full.handler
            if full.dns is not None and "dns" in row["onNode"]:
                # whether the pod's DNS reaches its endpoint, as the judgement has it
                assert row["onNode"]["dns"]["outcome"] == full.dns.outcome, (row, full.dns)
                assert row["onNode"]["dns"]["ownSettings"] is own_dns
            dropped = "node-dns-dropped" in {f["rule"] for f in row["findings"]}
            assert dropped == (own_dns and full.starts is not False and full.dns is not None
                               and full.dns.outcome in ("dropped", "partly"))
        found = _check(case, folder)
        _matrix(case, folder, full)
        said = _explain_and_translate(case, folder)
    ignored = as_check.host_network_effect == "ignored"
    assert said == (ignored, ignored), (said, as_check.network)
    # check: hostNetwork ignored exactly where the judgement says so; the Hyper-V finding
    # where it gives no network or says it depends on a Hyper-V handler.
    assert ("host-network-ignored" in found) == (as_check.host_network_effect == "ignored")
    hyperv = as_check.starts is not False and as_check.isolation != "process" and (
        as_check.network.value in ("none", "unknown"))
    assert ("host-process-hyperv-no-network" in found) == hyperv
    # check: a pod's own DNS settings rest on the node's CNI file, or never apply (HostProcess)
    assert as_check.dns is not None and as_check.dns.outcome in ("unknown", "host", "dropped")
    default_only = "dnsConfig" not in case["pod"]["spec"]  # Default alone: the node's resolver
    assert ("dns-needs-cni-capability" in found) == (
        own_dns and as_check.starts is not False and (as_check.dns.outcome == "unknown" or (
            as_check.dns.outcome == "host" and not (
                default_only and case["pod"]["spec"].get("dnsPolicy") == "Default"))))
    # Where check's assumed default handler gives the network the node's own gives, the
    # DNS outcome follows: it rests on the network and the CNI file alone.
    if full.dns is not None and as_check.dns.outcome != "unknown" and full.dns.outcome != (
            "unknown") and as_check.network.value == full.network.value:
        assert as_check.dns.outcome == full.dns.outcome, (as_check.dns, full.dns)
    if full.refused is not None:
        assert {"host-process-mixed", "host-process-needs-host-network",
                "host-process-pod-false"} & found
    # The library: the planner on the request the kubelet sends, with the node's facts.
    facts = _facts(case)
    if facts is not None and full.refused is None:
        if case["pod"]["spec"].get("runtimeClassName") and "rc" not in classes:
            return  # a class the input lacks: the kubelet's request needs its handler
        request = run_pod_sandbox_request(
            case["pod"], kubelet_version=case["kubelet"], feature_gates=case["gates"],
            node=NodeContext(runtime_handlers=classes))
        plan = plan_pod_network(request, facts, policy="containerd")
        assert plan.namespace == full.network.value or full.runtime_refused is not None
        assert plan.dns is not None and full.dns is not None
        assert plan.dns.outcome == full.dns.outcome, (plan.dns, full.dns)


def test_audit_without_node_files_does_not_assume_the_default_handler(
        tmp_path: Path) -> None:
    """A HostProcess pod without a RuntimeClass on containerd 2.3.3: its network rests on
    the node's default handler's isolation (hcsshim PR #2531: Hyper-V gives none). Without
    the node's files audit does not know it, so the row is conditional, naming the default
    handler; with a config.toml whose default is Hyper-V isolated it is no-network."""
    case = {"pod": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"nodeName": "w1", "hostNetwork": True,
                             "securityContext": {"windowsOptions": {"hostProcess": True}},
                             "containers": [{"name": "c", "image": "i"}]}},
            "classes": {}, "kubelet": "1.34", "gates": None,
            "release": "containerd://2.3.3", "config": None}
    (tmp_path / "a").mkdir()
    row = _audit(case, tmp_path / "a")
    assert row["hostNetworkEffect"] == "unknown"
    assert row["note"] == ("no network if the node's default runtime handler (containerd's "
                           "default_runtime_name) is Hyper-V isolated (SandboxIsolation = 1); "
                           "otherwise the node's network")
    (tmp_path / "b").mkdir()
    row = _audit({**case, "config": "runhcs-wcow-hypervisor"}, tmp_path / "b")
    assert row["hostNetworkEffect"] == "no-network"
    assert "default runtime handler" not in (row["note"] or "")
    (tmp_path / "c").mkdir()
    row = _audit({**case, "config": "runhcs-wcow-process"}, tmp_path / "c")
    assert row["hostNetworkEffect"] == "applied"
