"""``kubelet-winnet node``: one node's files judged.

Each finding expected below follows from the fixture's own content (tests/data/node,
sources in its README) and the rule page's upstream sources: the line is the line of the
setting in the file.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kubelet_winnet._lint.node_rules import NODE_RULES
from kubelet_winnet.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
NODES = DATA / "node" / "nodes"
SCHEMA = DATA / "sarif-schema-2.1.0.json"


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text in line)


def findings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    status, out, _ = command(capsys, "node", *argv, "-o", "json")
    return status, json.loads(out)


def test_a_node_on_containerd_24_and_kubelet_138(capsys: pytest.CaptureFixture[str]) -> None:
    node = NODES / "win-2025-a"
    status, report = findings(capsys, str(node))
    assert status == 1
    got = {(f["rule"], Path(f["file"]).name, f["line"], f["severity"])
           for f in report["findings"] if f["ignored"] is None}
    config = node / "config.toml"
    assert got == {
        ("node-gate-stops-kubelet", "kubelet-config.yaml",
         line_of(node / "kubelet-config.yaml", "WindowsHostNetwork"), "error"),
        ("node-gate-locked", "kube-proxy-config.yaml",
         line_of(node / "kube-proxy-config.yaml", "WinOverlay"), "error"),
        ("node-option-removed", "config.toml", line_of(config, "bin_dir"), "error"),
        ("node-option-removed", "config.toml", line_of(config, "enable_cdi"), "warning"),
        ("node-runtime-table-unread", "config.toml",
         line_of(config, '[plugins."io.containerd.grpc.v1.cri"'), "error"),
        ("node-hyperv-host-process", "config.toml", line_of(config, "default_runtime_name"),
         "warning"),
        ("node-host-port-dropped", "0-flannel.conf", 1, "warning"),
        # flannel hands runtimeConfig.dns to win-overlay, which never takes options.
        ("node-dns-dropped", "0-flannel.conf", 1, "info"),
        ("node-port-range", "dynamicport.txt", 4, "warning"),
        ("node-pause-image", "config.toml", line_of(config, "pause:3.10.1"), "warning"),
    }
    # The Node object's annotation silences the proxy-mode finding, with its reason.
    (mode,) = [f for f in report["findings"] if f["rule"] == "node-proxy-mode"]
    assert mode["ignored"] == "kube-proxy runs from a wrapper that overrides the mode"
    classes = {c["class"]: c for c in report["podClasses"]}
    host_process = classes["HostProcess pod"]
    assert (host_process["isolation"], host_process["network"]) == ("hyperv", "none")
    assert classes["pod without RuntimeClass"]["ports"][0]["outcome"] == "dropped"


def test_an_aks_shaped_node(capsys: pytest.CaptureFixture[str]) -> None:
    """containerd 1.7 and kubelet 1.33: WinOverlay=false is still allowed (locked from
    1.34), bin_dir in a version 1 file is migrated, azure-vnet applies port mappings."""
    node = NODES / "akswin000001"
    status, report = findings(capsys, str(node))
    assert status == 1
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [
        ("node-port-range", line_of(node / "excludedportrange.txt", "30100"))]
    classes = {c["class"]: c for c in report["podClasses"]}
    assert classes["pod without RuntimeClass"]["ports"][0]["outcome"] == "applied"
    assert classes["HostProcess pod"]["ports"][0]["outcome"] == "host"
    # The same node on kubelet 1.34 (no Node object): kube-proxy would exit.
    files = [str(p) for p in node.iterdir() if p.name != "node.json"]
    _, later = findings(capsys, *files, "--kubelet-version", "1.34", "--runtime",
                        "containerd://1.7.20")
    assert "node-gate-locked" in {f["rule"] for f in later["findings"]}


def test_containerd_that_cannot_load_the_file(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("version = 3\n", encoding="utf-8")
    _, report = findings(capsys, str(tmp_path), "--runtime", "containerd://1.7.30")
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("node-config-version", 1)]
    _, report = findings(capsys, str(tmp_path), "--runtime", "containerd://2.0.0")
    assert report["findings"] == []
    # containerd 1.x: a version 2 file with a version 1 plugin name ("invalid plugin key URI").
    (tmp_path / "config.toml").write_text(
        "version = 2\n\n[plugins.cri.cni]\nconf_dir = 'C:/k/cni'\n", encoding="utf-8")
    _, report = findings(capsys, str(tmp_path), "--runtime", "containerd://1.7.30")
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("node-config-version", 3)]
    assert "invalid plugin key URI" in report["findings"][0]["message"]
    _, report = findings(capsys, str(tmp_path), "--runtime", "containerd://2.1.0")
    assert report["findings"] == []


def test_host_port_dropped_without_the_capability(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    nat = DATA / "node" / "cni" / "nerdctl-nat.conflist"
    status, report = findings(capsys, str(nat))
    assert status == 1
    finding, dns = report["findings"]
    assert finding["rule"] == "node-host-port-dropped"
    assert "no plugin of CNI network 'nat'" in finding["message"]
    assert "declares the portMappings capability" in finding["message"]
    # Nor does it declare dns: every pod gets the configuration's own DNS.
    assert (dns["rule"], dns["severity"]) == ("node-dns-dropped", "warning")
    assert "nat, the first plugin of CNI network 'nat'" in dns["message"]
    assert "does not declare the dns capability" in dns["message"]


def test_sarif_and_junit(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command(capsys, "node", str(NODES / "win-2025-a"), "-o", "sarif")
    assert status == 1
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [r.id for r in NODE_RULES]
    suppressed = [r for r in run["results"] if "suppressions" in r]
    assert [r["ruleId"] for r in suppressed] == ["node-proxy-mode"]
    status, out, _ = command(capsys, "node", str(NODES / "win-2025-a"), "-o", "junit")
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromstring(out)
    assert xml.failures == 9 and xml.skipped == 1  # every finding shown is a warning or error


def test_ignore_flag_and_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command(capsys, "node", str(NODES / "akswin000001"),
                             "--ignore", "node-port-range")
    assert status == 0 and "0 findings, 1 ignored" in out
    status, _, err = command(capsys, "node", str(NODES / "akswin000001"),
                             "--ignore", "node-port-ranges")
    assert status == 2
    assert "no node rule 'node-port-ranges'; did you mean node-port-range?" in err
    status, _, err = command(capsys, "node")
    assert status == 2 and "name a directory of one node's files" in err


def test_bad_files_are_one_line_errors(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_bytes(b"version = 3\n[plugins.\xff]\n")
    status, _, err = command(capsys, "node", str(tmp_path))
    assert status == 2
    (line,) = err.splitlines()
    assert line.endswith("config.toml:2: not valid UTF-8 (byte 0xff)")


def test_explain_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command(capsys, "node", "--list-rules")
    assert status == 0 and [line.split()[0] for line in out.splitlines()] == [
        r.id for r in NODE_RULES]
    status, out, _ = command(capsys, "node", "--explain", "node-gate-locked")
    assert status == 0 and out.startswith("# node-gate-locked") and "#6925" in out


def test_a_sig_windows_tools_flannel_node(capsys: pytest.CaptureFixture[str]) -> None:
    """sig-windows-tools' HostProcess flannel set-up: WinOverlay=true (allowed, locked
    true from 1.34), kernelspace, flannel declaring portMappings over sdnoverlay
    (applies them): nothing to report, and the PowerShell argument array is read."""
    status, report = findings(capsys, str(NODES / "sigwin-1"))
    assert status == 0 and report["findings"] == []
    classes = {c["class"]: c for c in report["podClasses"]}
    assert classes["pod without RuntimeClass"]["ports"][0]["outcome"] == "applied"
    # containerd 2.3.4's shim (hcsshim v0.15.0-rc.3) under its default Hyper-V handler.
    hyperv = classes["HostProcess pod, Hyper-V (runhcs-wcow-hypervisor)"]
    assert hyperv["network"] == "none"


_GATE_138 = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
             "featureGates:\n  WindowsHostNetwork: true\n")


@pytest.mark.parametrize(("version", "reason"), [
    ("banana", "not a version like"),
    ("1.99", "supported"),
])
def test_a_kubelet_version_node_cannot_judge_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str, reason: str) -> None:
    # A version outside the model used to skip the gate rule in silence: exit 0 over a
    # gate that stops the kubelet. `check --kubelet-version banana` refuses it; so must node.
    (tmp_path / "kubelet.yaml").write_text(_GATE_138)
    status, out, err = command(capsys, "node", str(tmp_path), "--kubelet-version", version)
    assert status == 2 and not out
    (line,) = err.splitlines()
    assert "--kubelet-version" in line and repr(version)[1:-1] in line and reason in line


@pytest.mark.parametrize(("info", "field", "message"), [
    ('{"kubeletVersion": 1.30}', "status.nodeInfo.kubeletVersion", "must be a string"),
    ('{"kubeletVersion": "banana"}', "status.nodeInfo.kubeletVersion", "not a version like"),
    ('[]', "status.nodeInfo", "must be an object"),
    ('{"containerRuntimeVersion": ["containerd://2.4.0"]}',
     "status.nodeInfo.containerRuntimeVersion", "must be a string"),
    # NodeFacts refuses it too; read from a file, the error names the file's line
    ('{"containerRuntimeVersion": "2.3.3"}', "status.nodeInfo.containerRuntimeVersion",
     "'2.3.3' is not NAME://VERSION, as the Node's containerRuntimeVersion "
     "(containerd://2.4.0)"),
])
def test_a_node_object_with_wrong_node_info_is_refused_with_its_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, info: str, field: str,
        message: str) -> None:
    # kubectl never writes these; taking them as "not given" judged the node by the
    # default kubelet (1.30 read as absent: kubelet 1.32) without a word.
    (tmp_path / "kubelet.yaml").write_text(_GATE_138)
    node = tmp_path / "node.json"
    node.write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},\n'
                    f' "status": {{\n  "nodeInfo": {info}}}}}\n')
    status, _, err = command(capsys, "node", str(tmp_path))
    assert status == 2
    assert f"node.json:3: {field}" in err and message in err


def test_a_run_that_reads_no_node_file_is_not_a_pass(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # check's rule (an empty run is not a pass) holds for node: an empty
    # folder, or one of unrelated files, judged nothing and exited 0.
    status, out, err = command(capsys, "node", str(tmp_path))
    assert status == 2 and not out
    assert f"error: node: no node file in {tmp_path} (0 files read)" in err
    (tmp_path / "notes.txt").write_text("nothing here\n")
    status, out, err = command(capsys, "node", str(tmp_path))
    assert status == 2 and not out
    assert f"error: node: no node file in {tmp_path} (1 file read)" in err


def test_a_schema_version_no_containerd_loads_is_found_without_a_runtime(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Every containerd refuses a config version above its ConfigVersion
    # (cmd/containerd/server/config/config.go ValidateVersion); the newest is 4 in our
    # table (runtime/_releases.py). Without a known runtime, version 99 passed green.
    (tmp_path / "config.toml").write_text("\n\nversion = 99\n", encoding="utf-8")
    status, report = findings(capsys, str(tmp_path))
    assert status == 1
    [finding] = report["findings"]
    assert finding["rule"] == "node-config-version" and finding["line"] == 3
    assert "no containerd release up to 2.4 loads schema version 99" in finding["message"]


@pytest.mark.parametrize("runtime", ["banana", "2.3.3", "containerd", "://2.4.0", "containerd://",
                                     ""])
def test_a_runtime_flag_that_is_not_name_and_version_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, runtime: str) -> None:
    # Node.status.nodeInfo.containerRuntimeVersion is "<name>://<version>"; anything
    # else was shown back as the runtime and judged as an unknown one, exit 0.
    (tmp_path / "kubelet.yaml").write_text(_GATE_138)
    status, out, err = command(capsys, "node", str(tmp_path), "--kubelet-version", "1.34",
                               "--runtime", runtime)
    assert status == 2 and not out
    # the words NodeFacts(runtime=...) says it in (tests/runtime/test_node_plan.py)
    assert ("error: --runtime: expected NAME://VERSION, as the Node's "
            f"containerRuntimeVersion (containerd://2.4.0), got {runtime!r}") in err


@pytest.mark.parametrize(("runtime", "network"), [
    ("containerd://2.4.0", "none"),  # hcsshim v0.15.0-rc.4: PR #2531, no network
    ("containerd://2.2.0", "node"),  # hcsshim v0.14: the HostProcess container on the host
])
def test_the_runtime_flag_plans_a_node_without_a_node_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, runtime: str, network: str,
) -> None:
    """--runtime "when no Node object is given": win-2025-a's config.toml alone makes the
    Hyper-V handler the default, so a HostProcess pod's network follows the runtime's shim."""
    (tmp_path / "config.toml").write_bytes((NODES / "win-2025-a" / "config.toml").read_bytes())
    _, report = findings(capsys, "--runtime", runtime, str(tmp_path))
    (host_process,) = [c for c in report["podClasses"] if c["class"] == "HostProcess pod"]
    assert (report["runtime"], host_process["isolation"], host_process["network"]) == (
        runtime, "hyperv", network)


def test_a_path_that_cannot_be_read_gives_its_error_and_no_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """Nothing was read: a table of a default node would answer a question nobody asked."""
    status, out, err = command(capsys, "node", str(tmp_path / "missing"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"kubelet-winnet: error: {tmp_path / 'missing'}: cannot read: No such file or directory"]


def test_an_assumed_kubelet_version_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    (tmp_path / "config.toml").write_bytes((NODES / "win-2025-a" / "config.toml").read_bytes())
    _, _, err = command(capsys, "node", str(tmp_path))
    from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION

    assert ("kubelet-winnet: note: no Node object and no --kubelet-version: the node is "
            f"judged as kubelet {DEFAULT_KUBELET_VERSION}") in err.splitlines()
    _, _, err = command(capsys, "node", "--kubelet-version", "1.34", str(tmp_path))
    assert "no --kubelet-version" not in err


# --- a run that stops early still writes its report ------------------------------------------


def _stopped_runs(tmp_path: Path) -> list[tuple[list[str], str]]:
    (tmp_path / "notes.txt").write_text("copied on Monday\n", encoding="utf-8")
    node = tmp_path / "node.json"
    node.write_text(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                "status": {"nodeInfo": {"kubeletVersion": "v0.9.0"}}}),
                    encoding="utf-8")
    return [
        ([str(tmp_path / "notes.txt")], "no file was read as a node file"),
        ([str(NODES / "akswin000001"), "--ignore", "no-such-rule"],
         "the command line is not valid"),
        ([str(node)], "the kubelet version is not one the rules can judge"),
    ]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_run_that_stops_early_writes_a_json_report_saying_why(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, case: int) -> None:
    argv, why = _stopped_runs(tmp_path)[case]
    status, out, err = command(capsys, "node", *argv, "-o", "json")
    assert status == 2
    report = json.loads(out)
    assert report["stopped"].startswith(why)
    assert report["podClasses"] == [] and report["findings"] == []
    assert report["errors"] and report["errors"][0] in err


@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_run_that_stops_early_writes_sarif_that_is_not_a_clean_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, case: int) -> None:
    argv, why = _stopped_runs(tmp_path)[case]
    status, out, _ = command(capsys, "node", *argv, "-o", "sarif")
    assert status == 2
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert f"The node was not judged: {why}" in texts[-1]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_run_that_stops_early_writes_junit_with_its_errors(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, case: int) -> None:
    junitparser = pytest.importorskip("junitparser")
    argv, why = _stopped_runs(tmp_path)[case]
    status, out, err = command(capsys, "node", *argv, "-o", "junit")
    assert status == 2
    xml = junitparser.JUnitXml.fromstring(out)
    assert xml.errors >= 2 and xml.failures == 0
    messages = [result.message for suite in xml for case_ in suite for result in case_.result]
    assert any(m.startswith(f"The node was not judged: {why}") for m in messages)
    first_error = next(line for line in err.splitlines()
                       if line.startswith("kubelet-winnet: error: ")).split(": error: ", 1)[1]
    assert first_error in messages


def test_input_errors_of_a_judged_node_are_junit_errors(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser")
    (tmp_path / "config.toml").write_text("version = \n", encoding="utf-8")
    status, out, _ = command(capsys, "node", str(NODES / "akswin000001" / "node.json"),
                             str(tmp_path / "config.toml"), "-o", "junit")
    assert status == 2
    xml = junitparser.JUnitXml.fromstring(out)
    assert xml.errors == 1


def test_a_text_run_that_stops_early_writes_nothing_to_stdout(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv, _ = _stopped_runs(tmp_path)[0]
    status, out, err = command(capsys, "node", *argv)
    assert status == 2 and out == ""
    assert "no node file in" in err


# --- what each file was read as ----------------------------------------------------------------


def test_verbose_says_what_each_file_was_read_as(capsys: pytest.CaptureFixture[str]) -> None:
    node = NODES / "akswin000001"
    status, _, err = command(capsys, "node", str(node), "-v")
    assert status == 1
    said = {line.split(": read as ")[0].removeprefix("kubelet-winnet: "):
            line.split(": read as ")[1] for line in err.splitlines() if ": read as " in line}
    assert said == {
        str(node / "10-azure.conflist"): "CNI network 'azure' (plugins: azure-vnet)",
        str(node / "containerd.toml"):
            "containerd config.toml, schema version 1, 2 runtime tables",
        str(node / "dynamicport.txt"): "netsh TCP dynamic port range 33000-65535",
        str(node / "excludedportrange.txt"): "netsh TCP excluded port ranges (5 ranges)",
        str(node / "kubeproxy.args"): "kube-proxy command-line flags",
        str(node / "node.json"): "Node object 'akswin000001'",
    }
    _, report = findings(capsys, str(node))
    assert {f["file"]: f["readAs"] for f in report["files"]} == said


def test_a_file_that_could_not_be_read_is_said_as_such(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("version = \n", encoding="utf-8")
    (tmp_path / "readme.txt").write_text("hello\n", encoding="utf-8")
    _, out, _ = command(capsys, "node", str(tmp_path), "-o", "json")
    files = {Path(f["file"]).name: f["readAs"] for f in json.loads(out)["files"]}
    assert files == {"config.toml": "not read: not TOML: Invalid value",
                     "readme.txt": "not a node file"}


def test_verbose_says_a_file_not_read_was_not_read(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """-v said "read as not read: a template ..." of a file it did not read."""
    (tmp_path / "kubelet.yaml").write_text(_GATE_138)
    template = tmp_path / "config.toml"
    template.write_text('version = 2\nsandbox_image = "{{ .Values.pause }}"\n',
                        encoding="utf-8")
    (tmp_path / "readme.txt").write_text("hello\n", encoding="utf-8")
    _, _, err = command(capsys, "node", str(tmp_path), "-v", "--kubelet-version", "1.34")
    lines = err.splitlines()
    assert (f"kubelet-winnet: {template}: not read: a template ({{{{ .Values.pause }}}} is a "
            "placeholder), not a configuration: give the file as the node has it, "
            "rendered") in lines
    assert f"kubelet-winnet: {tmp_path / 'readme.txt'}: not a node file" in lines
    assert not [line for line in lines if "read as not" in line]
    assert f"kubelet-winnet: {tmp_path / 'kubelet.yaml'}: read as KubeletConfiguration" in [
        line[:len(f"kubelet-winnet: {tmp_path / 'kubelet.yaml'}: read as KubeletConfiguration")]
        for line in lines]


# --- netsh outputs --------------------------------------------------------------------------


_TCP = ("Protocol tcp Port Exclusion Ranges\n\nStart Port    End Port\n"
        "----------    --------\n")
_UDP = _TCP.replace("tcp", "udp")


def test_a_udp_exclusion_does_not_drop_a_tcp_host_port(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cni = DATA / "node" / "cni" / "azure-windows.conflist"
    (tmp_path / "excluded.txt").write_text(
        _TCP + "      5985        5985\n\n" + _UDP + "      8000        8099\n", encoding="utf-8")
    _, report = findings(capsys, str(cni), str(tmp_path / "excluded.txt"), "--host-port", "8080")
    (default,) = [c for c in report["podClasses"] if c["class"] == "pod without RuntimeClass"]
    assert default["ports"][0]["outcome"] == "applied"
    (tmp_path / "excluded.txt").write_text(_TCP + "      8000        8099\n", encoding="utf-8")
    _, report = findings(capsys, str(cni), str(tmp_path / "excluded.txt"), "--host-port", "8080")
    (default,) = [c for c in report["podClasses"] if c["class"] == "pod without RuntimeClass"]
    assert default["ports"][0]["outcome"] == "dropped"
    assert "TCP port 8080 is inside the excluded range 8000-8099" in default["ports"][0]["reason"]


def test_a_before_and_after_netsh_file_uses_the_last_output(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "excluded.txt"
    before = _TCP + "     30000       30099\n\n"
    path.write_text(before + _TCP + "      5985        5985\n", encoding="utf-8")
    status, out, err = command(capsys, "node", str(path), "-o", "json", "-v")
    report = json.loads(out)
    assert status == 0 and report["findings"] == []  # the 30000 range was removed since
    after = before.count("\n") + 1  # the second heading's line
    assert (f"note: {path}: 2 netsh TCP excluded port range outputs (lines 1 and {after}): "
            f"the last, at line {after}, is read as the node's current state") in err
    assert report["files"] == [{"file": str(path), "readAs":
                                f"netsh TCP excluded port ranges (1 range) (the last of 2, "
                                f"line {after})"}]


def test_overlapping_rows_are_one_finding_per_file(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = "".join(f"{30000 + 10 * i:>10}  {30000 + 10 * i + 4:>10}\n" for i in range(200))
    path = tmp_path / "excluded.txt"
    path.write_text(_TCP + rows, encoding="utf-8")
    _, report = findings(capsys, str(path))
    (finding,) = report["findings"]
    assert finding["rule"] == "node-port-range" and finding["line"] == 5
    assert finding["message"] == (
        "200 ranges (TCP excluded range 30000-30004, TCP excluded range 30010-30014, TCP "
        "excluded range 30020-30024 and 197 more) overlap the NodePort range 30000-32767: "
        "node ports there collide with ports Windows keeps.")


def test_dev_zero_named_as_a_node_file_is_refused_at_the_limit(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = command(capsys, "node", "/dev/zero", "-o", "json")
    assert status == 2
    assert json.loads(out)["stopped"].startswith("no file was read as a node file")
    assert err.splitlines()[0] == ("kubelet-winnet: error: /dev/zero:1: larger than 1048576 "
                                   "bytes (raise the limit with --max-bytes)")


def test_a_utf16_netsh_file_with_tcp_and_udp_outputs(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # PowerShell 5.1's `>>` appends the second output to the UTF-16 file the first made.
    path = tmp_path / "excluded.txt"
    text = _TCP + "     30000       30099\n\n" + _UDP + "      5985        5985\n"
    path.write_bytes(codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"))
    _, report = findings(capsys, str(path))
    assert report["files"] == [{"file": str(path), "readAs":
                                "netsh TCP excluded port ranges (1 range); "
                                "netsh UDP excluded port ranges (1 range)"}]
    (finding,) = report["findings"]
    assert finding["message"].startswith("the TCP excluded range 30000-30099 overlaps")


@pytest.mark.parametrize(("runtime", "network"), [
    ((), "unknown"),  # the release decides: not known, so conditional
    (("--runtime", "containerd://2.3.2"), "node"),  # hcsshim before v0.15.0-rc.2
    (("--runtime", "containerd://2.3.3"), "none"),  # hcsshim PR #2531
])
def test_a_hyperv_host_process_class_follows_the_release_or_says_it_depends_on_it(
    runtime: tuple[str, ...], network: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    table = '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes'
    (tmp_path / "config.toml").write_text(
        'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n'
        '  default_runtime_name = "runhcs-wcow-process"\n'
        f'{table}.runhcs-wcow-process]\n  runtime_type = "io.containerd.runhcs.v1"\n'
        f'{table}.secure]\n  runtime_type = "io.containerd.runhcs.v1"\n'
        f'{table}.secure.options]\n  SandboxIsolation = 1\n', encoding="utf-8")
    main(["node", str(tmp_path), "-o", "json", *runtime])
    classes = {c["class"]: c for c in json.loads(capsys.readouterr().out)["podClasses"]}
    # containerd keeps its default runhcs-wcow-hypervisor table beside the file's own.
    judged = next(c for name, c in classes.items() if name.startswith("HostProcess pod, Hyper-V"))
    assert (judged["isolation"], judged["network"]) == ("hyperv", network)
    if network == "unknown":
        assert "containerd 2.3.3 or later" in judged["condition"]


def test_a_kubelet_that_exits_at_start_up_makes_no_pod_of_any_class(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """win-2025-a's kubelet-config.yaml sets WindowsHostNetwork, which kubelet 1.38 does not
    have (removed after 1.37): it exits at start-up, so the table says no class of pod
    starts, with the finding's words and place, and audit says the same of a pod there."""
    node = NODES / "win-2025-a"
    _, report = findings(capsys, str(node))
    where = f"({node / 'kubelet-config.yaml'}:{line_of(node / 'kubelet-config.yaml', 'Windows')})"
    assert report["podClasses"]
    for row in report["podClasses"]:
        assert row["network"] == "none" and row["refused"].startswith(
            "kubelet 1.38 exits at start-up: unrecognized feature gate: WindowsHostNetwork")
        assert row["refused"].endswith(where)
        assert {p["outcome"] for p in row["ports"] if p["hostPort"]} <= {"dropped"}
    _, out, _ = command(capsys, "node", str(node))
    table = out.splitlines()
    assert all(" refused " in line for line in table[3:3 + len(report["podClasses"])])
    # audit --node-config judges a pod on that node by the same facts
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        json.loads((node / "node.json").read_text(encoding="utf-8")),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "d"},
         "spec": {"nodeName": "win-2025-a", "containers": [{"name": "c", "image": "i"}]}}]}))
    configs = tmp_path / "nodes"
    configs.mkdir()
    (configs / "win-2025-a").symlink_to(node, target_is_directory=True)
    _, out, _ = command(capsys, "audit", "-f", str(dump), "--node-config", str(configs),
                        "-o", "json", "--fail-on", "never")
    (pod,) = json.loads(out)["pods"]
    said = report["podClasses"][0]["refused"]  # the same words, at the folder audit read
    assert pod["onNode"]["refused"] == said.replace(str(node), str(configs / "win-2025-a"))


def test_a_containerd_that_does_not_start_makes_no_pod(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """containerd 2.1 reads schema versions up to 3 (ValidateVersion): version 4 stops it,
    and with it every sandbox."""
    (tmp_path / "config.toml").write_text('version = 4\n[plugins]\n', encoding="utf-8")
    _, report = findings(capsys, str(tmp_path), "--runtime", "containerd://2.1.0")
    assert any(f["rule"] == "node-config-version" for f in report["findings"])
    for row in report["podClasses"]:
        assert row["network"] == "none"
        assert "containerd does not start" in row["refused"]
        assert row["refused"].endswith(f"({tmp_path / 'config.toml'}:1)")


def test_a_config_toml_containerd_cannot_decode_stops_every_pod(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A config.toml that is not TOML is an input error (exit 2), and containerd exits at
    start-up on it (loadConfigFile's "failed to unmarshal TOML", returned by main.go):
    every pod class is refused, quoting the file and line; its defaults do not stand in."""
    (tmp_path / "config.toml").write_text("version = 3\n[plugins\n", encoding="utf-8")
    (tmp_path / "10-net.conf").write_bytes((DATA / "node" / "cni" / "nat.conf").read_bytes())
    status, out, err = command(capsys, "node", str(tmp_path))
    assert status == 2
    assert f"error: {tmp_path / 'config.toml'}:2: not TOML" in err
    assert "judged without" not in err and "stands in" not in err
    assert (f"{tmp_path / 'config.toml'}:2: error node-config-version: containerd does not "
            "start: it cannot decode this file and exits with \"failed to unmarshal TOML\"; "
            "not TOML: ") in out
    _, report = findings(capsys, str(tmp_path))
    assert report["podClasses"]
    for row in report["podClasses"]:
        assert row["network"] == "none"
        assert row["refused"].startswith("containerd does not start: it cannot decode")
        assert row["refused"].endswith(f"({tmp_path / 'config.toml'}:2)")


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('version = "2"\n', 1, "version must be an integer"),
    ("version = 2\nplugins = 3\n", 2, "plugins must be a table"),
])
def test_values_containerd_cannot_decode_stop_it_too(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, line: int,
        reason: str) -> None:
    # go-toml cannot decode a string into Config.Version (int) or a number into Plugins
    # (map[string]toml.Tree): the same DecodeError as a syntax error.
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    (tmp_path / "10-net.conf").write_bytes((DATA / "node" / "cni" / "nat.conf").read_bytes())
    _, report = findings(capsys, str(tmp_path))
    stopped = [f for f in report["findings"] if f["rule"] == "node-config-version"]
    assert [(f["line"], reason in f["message"]) for f in stopped] == [(line, True)]
    assert all(row["refused"] for row in report["podClasses"])


def test_a_table_judged_without_an_unreadable_file_says_so(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A config.toml past the reader's own bounds (nested deeper than --max-depth) is not
    known to stop containerd: the table rests on the other files and says so, with
    containerd's defaults standing in for that one."""
    (tmp_path / "config.toml").write_text("x = " + "[" * 200 + "]" * 200 + "\n",
                                          encoding="utf-8")
    (tmp_path / "10-net.conf").write_bytes((DATA / "node" / "cni" / "nat.conf").read_bytes())
    status, out, err = command(capsys, "node", str(tmp_path))
    assert status == 2
    assert f"error: {tmp_path / 'config.toml'}:1: nested deeper than" in err
    assert ("note: the pod classes are judged without the 1 file that could not be read "
            "(the error above): what it says is not known here; containerd's default "
            "configuration stands in for the node's config.toml") in err
    assert "POD CLASS" in out and "node-config-version" not in out
    (tmp_path / "config.toml").unlink()
    _, _, err = command(capsys, "node", str(tmp_path))
    assert "judged without" not in err
