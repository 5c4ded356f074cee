"""``audit --node-config DIR``: each pod's row says what its network and hostPorts get on
its node, from that node's files (tests/data/node/nodes, one directory per node name).

Expected outcomes follow from each node's files: win-2025-a's CNI network is flannel with
a win-overlay delegate (declares portMappings, never applies them) and Hyper-V is its
default runtime on containerd 2.4.0 (hcsshim PR #2531: HostProcess gets no network);
akswin000001's is azure-vnet (applies them) on process isolation.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main
from tests.strategies import running_node

NODES = Path(__file__).resolve().parent.parent / "data" / "node" / "nodes"


def node(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((NODES / name / "node.json").read_text(encoding="utf-8"))
    return loaded


def pod(name: str, node_name: str, *, host_process: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i"}
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [container],
                            "nodeSelector": {"kubernetes.io/os": "windows"}}
    if host_process:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                      "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    else:
        container["ports"] = [{"containerPort": 80, "hostPort": 8081}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _only(tmp_path: Path, *names: str) -> Path:
    """A --node-config folder of these nodes' folders alone: a folder named after no node
    of the input is an input error. win-2025-a is the copy whose kubelet and CNI plugins
    start (``running_node``): these tests are about what its pods get from flannel."""
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    for name in names:
        if name == "win-2025-a":
            running_node(nodes)
        else:
            (nodes / name).symlink_to(NODES / name, target_is_directory=True)
    return nodes


def test_rows_say_what_the_node_gives(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), node("akswin000001"), node("sigwin-1"),
        pod("web-2025", "win-2025-a"), pod("agent-2025", "win-2025-a", host_process=True),
        pod("web-aks", "akswin000001"),
    ]}), encoding="utf-8")
    nodes = _only(tmp_path, "win-2025-a", "akswin000001", "sigwin-1")
    status = main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and status in (0, 1)
    rows = {p["name"]: p["onNode"] for p in json.loads(out)["pods"]}
    assert rows["web-2025"]["isolation"] == "hyperv"
    assert [(h["hostPort"], h["outcome"]) for h in rows["web-2025"]["hostPorts"]] == [
        (8081, "dropped")]
    assert "never applies" in rows["web-2025"]["hostPorts"][0]["reason"]
    assert (rows["agent-2025"]["network"], rows["agent-2025"]["isolation"]) == ("none", "hyperv")
    assert rows["web-aks"]["isolation"] == "process"
    assert [(h["hostPort"], h["outcome"]) for h in rows["web-aks"]["hostPorts"]] == [
        (8081, "applied")]
    main(["audit", "-f", str(dump), "--node-config", str(nodes)])
    out, _ = capsys.readouterr()
    assert "web-2025: on its node: hyperv isolation, network pod; hostPort 8081 dropped" in out
    main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "csv"])
    out, _ = capsys.readouterr()
    cells = {r["pod"]: (r["onNodeIsolation"], r["onNodeNetwork"], r["onNodeHostPorts"])
             for r in csv.DictReader(io.StringIO(out))}
    assert cells == {"web-2025": ("hyperv", "pod", "8081/tcp:dropped"),
                     "agent-2025": ("hyperv", "none", ""),
                     "web-aks": ("process", "pod", "8081/tcp:applied")}
    main(["audit", "-f", str(dump), "-o", "csv"])  # without --node-config: empty cells
    out, _ = capsys.readouterr()
    assert {(r["onNodeIsolation"], r["onNodeNetwork"], r["onNodeHostPorts"])
            for r in csv.DictReader(io.StringIO(out))} == {("", "", "")}


def test_node_config_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(node("win-2025-a")), encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(tmp_path / "missing")])
    _, err = capsys.readouterr()
    assert status == 2 and "--node-config" in err and "cannot read" in err
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "config.toml").write_text("version = \n", encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(tmp_path)])
    _, err = capsys.readouterr()
    assert status == 2
    assert next(line for line in err.splitlines() if "error" in line).endswith(
        "config.toml:1: not TOML: Invalid value")


def test_more_node_folders_than_the_bound_is_an_error_not_a_cut(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The folders past the bound were dropped in silence: a pod on a node whose folder
    # sorted after them was judged without its node's files, exit 0.
    import kubelet_winnet.sources.node.folders as folders

    monkeypatch.setattr(folders, "MAX_NODE_FOLDERS", 3)
    configs = tmp_path / "nodes"
    for name in ("a", "b", "c", "win-2025-a"):
        (configs / name).mkdir(parents=True)
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(node("win-2025-a")), encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(configs)])
    _, err = capsys.readouterr()
    assert status == 2
    assert (f"error: --node-config {configs}: more than 3 folders; give one folder per node "
            "of the cluster") in err


def test_a_node_folder_with_no_node_file_is_an_input_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Its pods were given default plans as if the folder had been read.
    configs = tmp_path / "nodes"
    (configs / "win-2025-a").mkdir(parents=True)
    (configs / "win-2025-a" / "README.txt").write_text("copied on Monday\n", encoding="utf-8")
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), pod("web", "win-2025-a")]}), encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(configs), "-o", "json"])
    out, err = capsys.readouterr()
    assert status == 2
    folder = configs / "win-2025-a"
    assert (f"error: --node-config {folder}: no node file in it (1 file read); its pods are "
            "not judged against it") in err
    (row,) = json.loads(out)["pods"]
    # Not judged against it: its hostPort rests on files that were not read.
    assert [p["outcome"] for p in row["onNode"]["hostPorts"]] == ["unknown"]
    assert row["note"].startswith("no node files for win-2025-a: ")
    assert row["outcomeKnown"] is False


def test_a_node_folder_named_after_no_node_of_the_input_is_an_input_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import shutil

    configs = tmp_path / "nodes"
    shutil.copytree(NODES / "win-2025-a", configs / "win-2025-b")  # a typo in the name
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), pod("web", "win-2025-a")]}), encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(configs)])
    _, err = capsys.readouterr()
    assert status == 2
    assert (f"error: --node-config {configs / 'win-2025-b'}: no node 'win-2025-b' in the input "
            "(1 node); name each folder after its node") in err


def _custom_node(tmp_path: Path, name: str, runtime: str = "containerd://2.4.0") -> Path:
    """A node folder whose containerd configuration has a process default and a custom
    handler ``secure`` with SandboxIsolation = 1 (a Hyper-V handler by its options, not
    by its name)."""
    nodes = tmp_path / "nodes"
    folder = nodes / name
    folder.mkdir(parents=True)
    table = '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes'
    (folder / "config.toml").write_text(
        'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n'
        '  default_runtime_name = "runhcs-wcow-process"\n'
        f'{table}.runhcs-wcow-process]\n  runtime_type = "io.containerd.runhcs.v1"\n'
        f'{table}.secure]\n  runtime_type = "io.containerd.runhcs.v1"\n'
        f'{table}.secure.options]\n  SandboxIsolation = 1\n', encoding="utf-8")
    return nodes


def _windows_node(name: str, runtime: str = "containerd://2.4.0") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows"}},
            "status": {"nodeInfo": {"kubeletVersion": "v1.33.1", "operatingSystem": "windows",
                                    "containerRuntimeVersion": runtime}}}


def _audit_report(capsys: pytest.CaptureFixture[str], tmp_path: Path, nodes: Path,
                  *items: Any) -> tuple[int, dict[str, Any], str]:
    """``audit -o json --node-config nodes`` of a List of ``items``: status, report, stderr."""
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(items)}),
                    encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, json.loads(out), err


def _audit_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, nodes: Path,
                *items: Any) -> tuple[int, dict[str, Any]]:
    status, report, _ = _audit_report(capsys, tmp_path, nodes, *items)
    return status, {p["name"]: p for p in report["pods"]}


def _class(name: str, handler: str) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": name}, "handler": handler}


def test_hostnetwork_column_says_no_network_under_the_nodes_hyperv_default_handler(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # win-2025-a: default_runtime_name is a handler with SandboxIsolation = 1 on
    # containerd 2.4.0 (hcsshim PR #2531): a HostProcess pod without a RuntimeClass takes
    # it, so it has no network; the column once said "applied".
    nodes = _only(tmp_path, "win-2025-a")
    _, rows = _audit_json(capsys, tmp_path, nodes, node("win-2025-a"),
                          pod("agent", "win-2025-a", host_process=True))
    assert rows["agent"]["hostNetworkEffect"] == "no-network"
    assert rows["agent"]["onNode"]["network"] == "none"
    [finding] = [f for f in rows["agent"]["findings"]
                 if f["rule"] == "host-process-hyperv-no-network"]
    assert finding["message"] == ("HostProcess under Hyper-V isolation: the pod gets no "
                                  "network at all; set a process-isolated runtimeClassName.")


def test_hostnetwork_column_knows_hyperv_by_the_handlers_options_not_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    nodes = _custom_node(tmp_path, "w1")
    agent = pod("agent", "w1", host_process=True)
    agent["spec"]["runtimeClassName"] = "vm"
    _, rows = _audit_json(capsys, tmp_path, nodes, _windows_node("w1"), _class("vm", "secure"),
                          agent)
    assert rows["agent"]["hostNetworkEffect"] == "no-network"
    assert (rows["agent"]["onNode"]["handler"], rows["agent"]["onNode"]["network"]) == (
        "secure", "none")
    assert [f["rule"] for f in rows["agent"]["findings"]] == ["host-process-hyperv-no-network"]
    assert rows["agent"]["findings"][0]["severity"] == "warning"


def test_a_runtime_class_missing_from_the_dump_is_not_taken_as_the_handler(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The kubelet resolves the class to its handler first; the dump does not hold the
    # class, so the handler is not known: no 'no runtime for "windows-2022" is configured'.
    nodes = _custom_node(tmp_path, "w1")
    agent = pod("agent", "w1", host_process=True)
    agent["spec"]["runtimeClassName"] = "windows-2022"
    _, rows = _audit_json(capsys, tmp_path, nodes, _windows_node("w1"), agent)
    on_node = rows["agent"]["onNode"]
    assert on_node["refused"] is None
    assert (on_node["handler"], on_node["network"]) == (None, "unknown")
    assert "Hyper-V isolated" in on_node["condition"]
    assert rows["agent"]["hostNetworkEffect"] == "unknown"


def test_a_sandbox_the_runtime_refuses_is_neither_applied_nor_its_own_namespace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # containerd GetSandboxRuntime: 'no runtime for "<handler>" is configured'.
    nodes = _custom_node(tmp_path, "w1")
    web = pod("web", "w1")
    web["spec"]["hostNetwork"] = True
    web["spec"]["runtimeClassName"] = "gpu"
    agent = pod("agent", "w1", host_process=True)
    agent["spec"]["runtimeClassName"] = "gpu"
    _, rows = _audit_json(capsys, tmp_path, nodes, _windows_node("w1"),
                          _class("gpu", "gpu-handler"), web, agent)
    for name in ("web", "agent"):
        assert rows[name]["hostNetworkEffect"] == "refused"
        assert rows[name]["onNode"]["refused"] == 'no runtime for "gpu-handler" is configured'
        assert "host-network-ignored" not in [f["rule"] for f in rows[name]["findings"]]


def test_a_dropped_host_port_and_the_nodes_own_findings_fail_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # win-2025-a: flannel delegating to win-overlay, which never applies port mappings
    # (containernetworking/plugins win-overlay): hostPort 8081 is dropped. The node's own
    # findings (as `node` reports them) come once, whatever the number of its pods.
    nodes = _only(tmp_path, "win-2025-a")
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), pod("web", "win-2025-a"), pod("web-2", "win-2025-a")]}),
        encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "json"])
    out, _ = capsys.readouterr()
    assert status == 1
    document = json.loads(out)
    rows = {p["name"]: p for p in document["pods"]}
    dropped = [f for f in rows["web"]["findings"] if f["rule"] == "node-host-port-dropped"]
    assert [(f["severity"], f["field"]) for f in dropped] == [
        ("warning", "spec.containers[0].ports[0].hostPort")]
    assert "hostPort 8081 is dropped" in dropped[0]["message"]
    main(["node", str(nodes / "win-2025-a"), "-o", "json"])
    own = json.loads(capsys.readouterr().out)["findings"]
    expected = sorted((f["rule"], f["line"]) for f in own if f["ignored"] is None)
    assert expected  # the folder has findings of its own
    listed = document["summary"]["nodeFindings"]["win-2025-a"]
    assert sorted((f["rule"], f["line"]) for f in listed) == expected
    main(["audit", "-f", str(dump), "--node-config", str(nodes)])
    text = capsys.readouterr().out
    assert sum(line.startswith("NODE win-2025-a: ") for line in text.splitlines()) == len(expected)
    assert main(["audit", "-f", str(dump), "--node-config", str(nodes), "--fail-on",
                 "never"]) == 0
    capsys.readouterr()
    assert main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "csv"]) == 1
    err = capsys.readouterr().err
    assert sum(": note: node win-2025-a: " in line for line in err.splitlines()) == len(expected)


WIN_2 = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-2"},
         "status": {"nodeInfo": {"operatingSystem": "windows", "kubeletVersion": "v1.34.1",
                                 "containerRuntimeVersion": "containerd://2.1.3"}}}


def test_a_host_port_on_a_node_without_files_is_not_known_in_every_output(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--node-config with files for some nodes: a hostPort pod on a Windows node without
    them rests on that node's CNI configuration, which no file gave: not known, counted
    and listed as such, naming the node, in text, JSON, CSV and the page."""
    configs = _only(tmp_path, "win-2025-a")
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), WIN_2, pod("ported", "win-2"),
        pod("host", "win-2", host_process=True)]}), encoding="utf-8")
    flags = ["audit", "-f", str(dump), "--node-config", str(configs), "--fail-on", "never"]
    outputs = {}
    for output in ("text", "json", "csv", "html"):
        assert main([*flags, "-o", output]) == 0
        outputs[output], _ = capsys.readouterr()
    rows = {r["name"]: r for r in json.loads(outputs["json"])["pods"]}
    said = ("no node files for win-2: on its node: isolation not known, network pod; "
            "hostPort 8081 unknown (the node's CNI configuration is not known)")
    assert rows["ported"]["note"] == said
    assert rows["ported"]["outcomeKnown"] is False
    assert [p["outcome"] for p in rows["ported"]["onNode"]["hostPorts"]] == ["unknown"]
    # The HostProcess pod gets the node's network on containerd 2.1.3 whatever its
    # handler (hcsshim before PR #2531): nothing of it rests on the node's files.
    assert rows["host"]["outcomeKnown"] is True and "onNode" not in rows["host"]
    assert json.loads(outputs["json"])["summary"]["totals"]["outcomeNotKnown"] == 1
    assert f"note: ported: {said}" in outputs["text"]
    assert "whose outcome is not known" in outputs["text"]
    csv_rows = {r["pod"]: r for r in csv.DictReader(io.StringIO(outputs["csv"]))}
    assert csv_rows["ported"]["onNodeHostPorts"] == "8081/tcp:unknown"
    assert csv_rows["ported"]["outcomeKnown"] == "false"
    assert csv_rows["ported"]["note"] == said
    page = outputs["html"]
    assert "<b>1</b>pod whose outcome is not known" in page
    listed = page[page.index('id="pods"'):]
    assert "<b>ported</b>" in listed and '<span class="b unknown">hostPort 8081 not known' \
        in listed


def _own_dns(name: str, node_name: str, **spec: Any) -> dict[str, Any]:
    manifest = pod(name, node_name)
    manifest["spec"]["containers"][0].pop("ports")
    manifest["spec"].update(spec)
    return manifest


_EVERY_LIST = {"dnsPolicy": "None", "dnsConfig": {
    "nameservers": ["10.0.0.53"], "searches": ["corp.example"], "options": [{"name": "edns0"}]}}


def _dns_dump(tmp_path: Path, first: str, on_win_2: dict[str, Any]) -> Path:
    """A dump of the three DNS nodes and a pod of each kind of DNS settings on them:
    ``first`` (every list) and one more on win-2025-a, two on sigwin-1, one on win-2."""
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), node("sigwin-1"), WIN_2,
        _own_dns(first, "win-2025-a", **_EVERY_LIST),
        _own_dns("servers-2025", "win-2025-a", dnsPolicy="None",
                 dnsConfig={"nameservers": ["10.0.0.53"]}),
        _own_dns("own-sig", "sigwin-1", **_EVERY_LIST),
        _own_dns("plain-sig", "sigwin-1"),
        _own_dns("own-2", "win-2", **on_win_2),
    ]}), encoding="utf-8")
    return dump


def test_rows_say_whether_a_pods_own_dns_reaches_it(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    """containerd passes the DNSConfig only as the dns capability. win-2025-a: flannel
    (declares dns) delegating to win-overlay, which takes servers and searches, never
    options (pkg/hns/netconf_windows.go); sigwin-1: flannel to sdnoverlay, which takes all
    three (cni/cni.go GetNetworkInfo); a node without files: not known."""
    dump = _dns_dump(tmp_path, "own-2025", _EVERY_LIST)
    nodes = _only(tmp_path, "win-2025-a", "sigwin-1")
    status = main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and status == 1
    rows = {p["name"]: p for p in json.loads(out)["pods"]}
    dns = {name: row["onNode"]["dns"] for name, row in rows.items()}
    assert (dns["own-2025"]["outcome"], dns["own-2025"]["reaches"]) == (
        "partly", ["servers", "searches"])
    assert (dns["servers-2025"]["outcome"], dns["own-sig"]["outcome"]) == ("applied", "applied")
    assert dns["plain-sig"]["ownSettings"] is False and dns["own-sig"]["ownSettings"] is True
    assert dns["own-2"]["outcome"] == "unknown"
    assert "the node's CNI configuration is not known" in dns["own-2"]["reason"]
    # Only the pod whose settings are partly ignored has the node rule's finding (info: a
    # part), at its dnsPolicy; the pod on a node without files has check's conditional one.
    dropped = {name: [(f["rule"], f["severity"], f["field"]) for f in row["findings"]
                      if f["rule"] in ("node-dns-dropped", "dns-needs-cni-capability")]
               for name, row in rows.items()}
    assert dropped == {
        "own-2025": [("node-dns-dropped", "info", "spec.dnsPolicy")],
        "servers-2025": [], "own-sig": [], "plain-sig": [],
        "own-2": [("dns-needs-cni-capability", "info", "spec.dnsPolicy")]}
    (finding,) = [f for f in rows["own-2025"]["findings"] if f["rule"] == "node-dns-dropped"]
    assert finding["message"] == ("dnsPolicy: None with dnsConfig: the CNI plugin of this "
                                  "pod's node ignores part of them.")
    assert "win-overlay" in rows["own-2025"]["note"]
    assert "its options do not" in rows["own-2025"]["note"]
    main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "csv"])
    cells = {r["pod"]: r["onNodeDns"] for r in csv.DictReader(io.StringIO(
        capsys.readouterr().out))}
    assert cells == {"own-2025": "partly", "servers-2025": "applied", "own-sig": "applied",
                     "plain-sig": "applied", "own-2": "unknown"}
    main(["audit", "-f", str(dump), "--node-config", str(nodes)])
    text = capsys.readouterr().out
    assert "its DNS settings partly applied" in text
    assert "own-2: no node files for win-2: " in text and "its DNS settings unknown" in text


def test_dns_on_a_runtime_not_modelled_is_not_said(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    """How the DNSConfig reaches CNI is containerd's (sandbox_run.go): on another runtime
    the rule says nothing, on containerd it is check's conditional info."""
    other = {**WIN_2, "metadata": {"name": "win-3"},
             "status": {"nodeInfo": {**WIN_2["status"]["nodeInfo"],  # type: ignore[index]
                                     "containerRuntimeVersion": "docker://20.10.9"}}}
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        WIN_2, other, _own_dns("on-containerd", "win-2", dnsPolicy="Default"),
        _own_dns("on-docker", "win-3", dnsPolicy="Default")]}), encoding="utf-8")
    main(["audit", "-f", str(dump), "-o", "json", "--fail-on", "never"])
    rows = {p["name"]: {f["rule"] for f in p["findings"]}
            for p in json.loads(capsys.readouterr().out)["pods"]}
    assert rows == {"on-containerd": {"dns-needs-cni-capability"}, "on-docker": set()}


def _dns_cluster(tmp_path: Path) -> tuple[Path, Path]:
    """A dump and --node-config folders: win-2025-a as it is (flannel declares dns and
    hands it to win-overlay: servers and searches, never options); sigwin-1 with
    win-bridge-flannel.conf instead of its own file (no dns capability: every pod gets
    the delegate's own block); win-2 without files (not known)."""
    nodes = _only(tmp_path, "win-2025-a")
    (nodes / "sigwin-1").mkdir()
    for name in ("node.json", "kube-proxy-args.ps1"):
        (nodes / "sigwin-1" / name).symlink_to(NODES / "sigwin-1" / name)
    (nodes / "sigwin-1" / "cni.conf").symlink_to(
        NODES.parent / "cni" / "win-bridge-flannel.conf")
    dump = _dns_dump(tmp_path, "partly-2025", {"dnsPolicy": "Default"})
    return dump, nodes


# What each pod's own DNS settings get, in the words every output uses, from the rules
# above; plain-sig has none of its own (the cluster DNS).
DNS_WORDS = {"partly-2025": "partly applied", "servers-2025": "applied", "own-sig": "ignored",
             "plain-sig": None, "own-2": "unknown"}


def test_every_audit_output_says_what_becomes_of_each_pods_own_dns(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Text (a DNS column), CSV (the outcome and whether the settings are the pod's own),
    JSON (onNode.dns) and the page (a badge, the summary) say the same of each pod."""
    dump, nodes = _dns_cluster(tmp_path)
    outputs = {}
    for output in ("text", "json", "csv", "html"):
        main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", output,
              "--fail-on", "never"])
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        outputs[output] = out
    lines = outputs["text"].splitlines()
    header = next(line for line in lines if line.startswith("POD "))
    assert header.split() == ["POD", "NODE", "KUBELET", "RUNTIME", "SENT", "HOSTNETWORK",
                              "DNS", "FINDINGS"]
    at, end = header.index("DNS"), header.index("FINDINGS")
    cells = {line.split()[0]: line[at:end].strip() for line in lines
             if line.split()[:1] and line.split()[0] in DNS_WORDS}
    assert cells == {name: said or "-" for name, said in DNS_WORDS.items()}
    assert "  DNS: whether the pod's own DNS settings" in outputs["text"]

    rows = {p["name"]: p["onNode"]["dns"] for p in json.loads(outputs["json"])["pods"]}
    assert {n: (d["outcome"], d["ownSettings"]) for n, d in rows.items()} == {
        "partly-2025": ("partly", True), "servers-2025": ("applied", True),
        "own-sig": ("dropped", True), "plain-sig": ("dropped", False),
        "own-2": ("unknown", True)}
    assert rows["own-sig"]["reason"].endswith(
        "its endpoint gets the configuration's own dns block (nameservers 10.96.0.10; "
        "search svc.cluster.local), the same for every pod")

    csv_rows = {r["pod"]: (r["onNodeDns"], r["onNodeDnsOwnSettings"])
                for r in csv.DictReader(io.StringIO(outputs["csv"]))}
    assert csv_rows == {n: (d["outcome"], str(d["ownSettings"]).lower())
                        for n, d in rows.items()}

    page = outputs["html"]
    listed = page[page.index('id="pods"'):]
    for name, said in DNS_WORDS.items():
        if f"<b>{name}</b>" in listed:  # a listed pod's verdict says it as the text does
            row = listed[listed.index(f"<b>{name}</b>"):].split("</tr>")[0]
            assert (f"DNS settings {said}</span>" in row) is (said is not None), row
    assert {"partly-2025", "own-sig", "own-2"} <= {
        n for n in DNS_WORDS if f"<b>{n}</b>" in listed}
    assert '<span class="b bad">DNS settings ignored</span>' in listed
    assert ("<dt>own DNS settings</dt><dd>applied 1, partly applied 1, ignored 1, unknown 1 "
            "(of the pods") in page
    # partly-2025 and own-sig do not get the DNS settings they ask for (node-dns-dropped)
    assert "<b>2</b>pods whose networking is not what they ask for" in page


def test_the_node_page_has_a_dns_column(capsys: pytest.CaptureFixture[str]) -> None:
    main(["node", str(NODES / "win-2025-a"), "-o", "html", "--fail-on", "never"])
    page = capsys.readouterr().out
    assert "<th>hostPort</th><th>DNS</th><th>why</th>" in page
    assert "<td>pod with its own DNS (dnsPolicy: None)</td>" in page


def test_without_node_files_the_text_table_has_no_dns_column(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without --node-config no node's CNI file is known: check's conditional finding
    says it, and the table keeps its columns."""
    dump, _ = _dns_cluster(tmp_path)
    main(["audit", "-f", str(dump), "--fail-on", "never"])
    header = next(line for line in capsys.readouterr().out.splitlines()
                  if line.startswith("POD "))
    assert "DNS" not in header.split()


def test_audit_reports_what_stops_a_135_nodes_kubelet_at_start_up(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # CHANGELOG-1.35.md: --pod-infra-container-image removed (PR #133779); feature_list.md:
    # SidecarContainers locked to true from 1.33
    folder = tmp_path / "nodes" / "win-3"
    folder.mkdir(parents=True)
    (folder / "kubeadm-flags.env").write_text(
        'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n',
        encoding="utf-8")
    (folder / "config.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  SidecarContainers: false\n",
        encoding="utf-8")
    win_3 = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-3"},
             "status": {"nodeInfo": {"operatingSystem": "windows", "kubeletVersion": "v1.35.2",
                                     "containerRuntimeVersion": "containerd://2.1.3"}}}
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        win_3, pod("web", "win-3")]}), encoding="utf-8")
    status = main(["audit", "-f", str(dump), "--node-config", str(tmp_path / "nodes"),
                   "-o", "json"])
    out, _ = capsys.readouterr()
    assert status == 1
    listed = json.loads(out)["summary"]["nodeFindings"]["win-3"]
    assert sorted((f["rule"], f["line"], f["message"]) for f in listed) == [
        ("node-flag-removed", 1, "kubelet 1.35 exits at start-up: unknown flag: "
         "--pod-infra-container-image (removed in 1.35; the pause image is the runtime's "
         "setting: containerd's sandbox image)."),
        ("node-gate-locked", 3, "kubelet 1.35 exits at start-up: cannot set feature gate "
         "SidecarContainers to false, feature is locked to true (locked since Kubernetes "
         "1.33; remove it)."),
    ]


def test_the_own_dns_row_says_why_its_dns_is_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The row of a pod with its own DNS settings gives the DNS reason beside the port's:
    without the dns capability libcni hands the plugin no DNS (injectRuntimeConfig)."""
    folder = tmp_path / "node"
    shutil.copytree(NODES / "sigwin-1", folder)
    conf = folder / "flannel.4096.conf"
    conf.write_text(conf.read_text(encoding="utf-8").replace(', "dns": true', ""),
                    encoding="utf-8")
    main(["node", str(folder), "--fail-on", "never"])
    (row,) = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("pod with its own DNS")]
    assert " dropped " in row
    assert "; DNS: flannel, the first plugin of CNI network 'flannel.4096'" in row
    assert "does not declare the dns capability" in row


def test_a_dropped_host_port_is_placed_at_the_container_port_that_asks_for_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The kubelet maps the regular containers' ports only (MakePortMappings over
    pod.Spec.Containers): an init container's port is not where hostPort 8081 is
    declared, and the second regular container's second port is."""
    nodes = _only(tmp_path, "win-2025-a")
    web = pod("web", "win-2025-a")
    web["spec"]["initContainers"] = [{"name": "init", "image": "i",
                                      "ports": [{"containerPort": 80, "hostPort": 8081}]}]
    web["spec"]["containers"] = [
        {"name": "a", "image": "i", "ports": [{"containerPort": 90}]},
        {"name": "b", "image": "i",
         "ports": [{"containerPort": 91}, {"containerPort": 80, "hostPort": 8081}]}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("win-2025-a"), web]}), encoding="utf-8")
    main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", "json"])
    document = json.loads(capsys.readouterr().out)
    (row,) = document["pods"]
    assert [f["field"] for f in row["findings"] if f["rule"] == "node-host-port-dropped"] == [
        "spec.containers[1].ports[1].hostPort"]


def test_a_host_process_pod_asking_for_the_nodes_resolver_gets_what_it_asks(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A HostProcess sandbox never reaches CNI (containerd sandbox_run.go): the pod
    resolves names as the node does. dnsPolicy: Default alone asks for just that
    (getPodDNSType: podDNSHost), so it is applied; a dnsConfig is not."""
    nodes = _only(tmp_path, "akswin000001")  # process-isolated: the pod has the network
    default = pod("asks-node", "akswin000001", host_process=True)
    default["spec"]["dnsPolicy"] = "Default"
    configured = pod("asks-own", "akswin000001", host_process=True)
    configured["spec"].update(_EVERY_LIST)
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("akswin000001"), default, configured]}), encoding="utf-8")
    outputs = {}
    for output in ("text", "json", "html"):
        main(["audit", "-f", str(dump), "--node-config", str(nodes), "-o", output,
              "--fail-on", "never"])
        outputs[output] = capsys.readouterr().out
    rows = {p["name"]: p for p in json.loads(outputs["json"])["pods"]}
    assert {n: (r["onNode"]["dns"]["outcome"], r["onNode"]["dns"]["asksNodeResolver"])
            for n, r in rows.items()} == {"asks-node": ("host", True),
                                          "asks-own": ("host", False)}
    assert "its DNS settings applied (the node's resolver);" in rows["asks-node"]["note"] + ";"
    assert "its DNS settings ignored (the node's resolver) (a host-network sandbox" in (
        rows["asks-own"]["note"])
    lines = outputs["text"].splitlines()
    header = next(line for line in lines if line.startswith("POD "))
    at, end = header.index("DNS"), header.index("FINDINGS")
    cells = {line.split()[0]: line[at:end].strip() for line in lines
             if line.split()[:1] and line.split()[0] in rows}
    assert cells == {"asks-node": "applied (the node's resolver)",
                     "asks-own": "ignored (the node's resolver)"}
    page = outputs["html"]
    assert ("<dt>own DNS settings</dt><dd>ignored (the node&#x27;s resolver) 1, applied "
            "(the node&#x27;s resolver) 1 (of the pods") in page
    # only asks-own is listed (what it asks for is not what it gets), with a bad badge
    assert '<span class="b bad">DNS settings ignored (the node&#x27;s resolver)</span>' in page
    assert "<b>asks-node</b>" not in page[page.index('id="pods"'):]


def test_each_node_folder_is_judged_once_for_its_pods_and_its_own_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The library-first rule for every command: nothing is read or judged twice. The pods'
    # verdicts and the listed findings must come from the same judgement of the node.
    from kubelet_winnet._lint import node_checks

    calls: list[str] = []
    real = node_checks.judge_node

    def counted(files: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(files))
        return real(files, *args, **kwargs)

    monkeypatch.setattr(node_checks, "judge_node", counted)
    nodes = _only(tmp_path, "win-2025-a")
    _, report, _ = _audit_report(capsys, tmp_path, nodes, node("win-2025-a"),
                                 *(pod(f"web-{i}", "win-2025-a") for i in range(3)))
    assert len(calls) == 1
    assert len(report["pods"]) == 3
    assert "win-2025-a" in report["summary"]["nodeFindings"]


def test_a_node_whose_config_toml_containerd_cannot_decode_runs_no_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # containerd exits on a config.toml it cannot decode (loadConfigFile, command/main.go):
    # the pods of that node are refused with the file and line, and the node's findings
    # list it; the read error itself is still an input error.
    nodes = _only(tmp_path, "win-2025-a")
    config = nodes / "win-2025-a" / "config.toml"
    config.unlink()
    config.write_text("version = 2\n[plugins\n", encoding="utf-8")
    status, report, err = _audit_report(capsys, tmp_path, nodes, node("win-2025-a"),
                                        pod("web", "win-2025-a"))
    assert status == 2
    assert f"error: {config}:2: not TOML" in err
    (web,) = report["pods"]
    assert web["onNode"]["refused"].startswith("containerd does not start: it cannot decode")
    assert web["onNode"]["refused"].endswith(f"({config}:2)")
    assert [f["line"] for f in report["summary"]["nodeFindings"]["win-2025-a"]
            if f["rule"] == "node-config-version"] == [2]
