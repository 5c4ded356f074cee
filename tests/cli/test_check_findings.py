"""``kubelet-winnet check`` as a new user meets it: the words of each finding,
pods pinned to no OS, the summary line, notes for input that holds no manifests, report
formats CI systems read, and the flags' conventions.

Each test runs the command and checks stdout, stderr and the exit status; expected texts
come from the rules as kubelet-rules.md states them and from the input manifests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main
from tests.strategies import require

NGINX = {  # the manifest of the trial: a Linux workload with no OS marker
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"},
    "spec": {"selector": {"matchLabels": {"app": "nginx"}}, "template": {
        "metadata": {"labels": {"app": "nginx"}},
        "spec": {"hostNetwork": True, "containers": [{"name": "nginx", "image": "nginx"}]},
    }},
}
SUMMARY = re.compile(r"^kubelet-winnet: (\d+) pods? in (\d+) files? checked: ", re.M)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def write(path: Path, *docs: Any) -> str:
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False), encoding="utf-8")
    return str(path)


def windows(spec: dict[str, Any], name: str = "w") -> dict[str, Any]:
    body = {"os": {"name": "windows"}, "containers": [{"name": "c", "image": "i"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


# --- pods with no OS marker ---------------------------------------------------------------


def test_untargeted_host_network_is_conditional_and_does_not_fail_ci(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "nginx.yaml", NGINX)
    status, out, err = run(capsys, path)
    assert status == 0  # info, below the default --fail-on warning
    (line,) = out.splitlines()
    at = Path(path).read_text(encoding="utf-8").splitlines().index("      hostNetwork: true") + 1
    assert line.startswith(f"{path}:{at}: info host-network-ignored: Deployment/nginx: ")
    assert "if this pod runs on a Windows node" in line
    assert "Windows pod" not in line
    assert SUMMARY.search(err)
    assert "0 errors, 0 warnings, 1 info" in err


def _pinned(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    pinned: dict[str, Any] = json.loads(json.dumps(NGINX))
    pinned["metadata"]["name"] = name
    pinned["spec"]["template"]["spec"].update(spec)
    return pinned


def test_pods_that_cannot_run_on_windows_get_no_windows_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A controller kept on control-plane nodes (an AKS-style chart's), or pinned to Linux
    by node selector or required affinity, got "info host-network-ignored ... if this pod
    runs on a Windows node": none of them can. They are Linux-targeted pods, skipped and
    counted, and -v says so for each."""
    linux_term = {"matchExpressions": [
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}
    path = write(
        tmp_path / "chart.yaml",
        _pinned("control-plane", {"nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
                                  "tolerations": [{"key": "node-role.kubernetes.io/control-plane",
                                                   "effect": "NoSchedule"}]}),
        _pinned("master", {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "node-role.kubernetes.io/master", "operator": "Exists"}]}]}}}}),
        _pinned("linux", {"nodeSelector": {"kubernetes.io/os": "linux"}}),
        _pinned("linux-affinity", {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [linux_term]}}}}),
    )
    status, out, err = run(capsys, "-v", path)
    assert (status, out) == (0, "")
    assert [line.split(" (")[0] for line in err.splitlines() if "skipped linux" in line] == [
        f"kubelet-winnet: skipped linux pod Deployment/{name}"
        for name in ("control-plane", "master", "linux", "linux-affinity")]
    assert err.splitlines()[-1].endswith(
        "4 Linux-targeted and 0 untargeted pods skipped; 0 input errors")
    assert f"kubelet-winnet: skipped linux pod Deployment/control-plane ({path}:1; " \
        "spec.template.spec.nodeSelector.node-role.kubernetes.io/control-plane pins it to " \
        "Linux)" in err.splitlines()
    # the same pod pinned to nothing still gets the conditional finding
    status, out, _ = run(capsys, write(tmp_path / "free.yaml", NGINX))
    assert (status, out.count("info host-network-ignored")) == (0, 1)


def test_assume_windows_gives_windows_semantics(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "nginx.yaml", NGINX)
    status, out, _ = run(capsys, path, "--assume-windows")
    assert status == 1
    assert "warning host-network-ignored" in out
    assert "if this pod runs" not in out
    status, out, _ = run(capsys, path, "--windows-only")
    assert (status, out) == (0, "")


# --- the words of the findings --------------------------------------------------------------

CASES: dict[str, dict[str, Any]] = {  # one Windows pod per rule
    "host-network-ignored": {"hostNetwork": True},
    "host-process-mixed": {
        "hostNetwork": True, "securityContext": {"windowsOptions": {"hostProcess": True}},
        "initContainers": [{"name": "plain", "image": "i", "securityContext": {
            "windowsOptions": {"hostProcess": False}}}],
    },
    "host-process-needs-host-network": {
        "securityContext": {"windowsOptions": {"hostProcess": True}},
    },
    "host-process-pod-false": {
        "hostNetwork": True, "securityContext": {"windowsOptions": {"hostProcess": False}},
        "containers": [{"name": "c", "image": "i",
                        "securityContext": {"windowsOptions": {"hostProcess": True}}}],
    },
    "host-process-override": {
        "securityContext": {"windowsOptions": {"hostProcess": True}},
        "containers": [{"name": "c", "image": "i",
                        "securityContext": {"windowsOptions": {"hostProcess": False}}}],
    },
    "host-port-mismatch": {
        "hostNetwork": True, "securityContext": {"windowsOptions": {"hostProcess": True}},
        "containers": [{"name": "c", "image": "i",
                        "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    },
    "windows-forbidden-field": {"hostPID": True},
    "gmsa-spec-missing": {
        "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "webapp1"}},
    },
    "host-process-hyperv-no-network": {
        "hostNetwork": True, "runtimeClassName": "runhcs-wcow-hypervisor",
        "securityContext": {"windowsOptions": {"hostProcess": True}},
    },
    "unknown-field": {"hostNetwrok": True},
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_first_sentence_is_short_and_the_full_text_is_in_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rule: str
) -> None:
    path = write(tmp_path / "p.yaml", windows(CASES[rule]))
    status, out, _ = run(capsys, path, "-o", "json", "--fail-on", "never")
    assert status == 0
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == rule]
    headline = finding["headline"]
    assert len(headline) < 120, headline
    assert headline.endswith("."), headline
    assert headline.count(". ") == 0, headline  # one sentence
    assert finding["message"].startswith(headline)
    assert len(finding["message"]) > len(headline)  # the detail follows
    status, text, _ = run(capsys, path, "--fail-on", "never")
    assert headline in text
    assert finding["message"][len(headline):].strip() not in text  # detail: -v and json
    _, verbose, _ = run(capsys, path, "--fail-on", "never", "-v")
    assert finding["message"][len(headline):].strip() in verbose


def test_forbidden_field_and_host_port_read_as_sentences(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pod = windows({"hostPID": True, "hostNetwork": True,
                   "securityContext": {"windowsOptions": {"hostProcess": True}},
                   "containers": [{"name": "c", "image": "i",
                                   "ports": [{"containerPort": 443, "hostPort": 8443}]}]})
    path = write(tmp_path / "p.yaml", pod)
    status, out, _ = run(capsys, path, "-o", "json")
    assert status == 1
    by_rule = {f["rule"]: f for f in json.loads(out)["findings"]}
    forbidden = by_rule["windows-forbidden-field"]["message"]
    assert forbidden.startswith("hostPID: true cannot be set on a Windows pod: the API server "
                                "rejects the pod; remove it.")
    assert "is the API server" not in forbidden
    assert '"cannot be set for a windows pod"' in forbidden  # validateWindows' words
    port = by_rule["host-port-mismatch"]["message"]
    assert "set hostPort to 443" in port
    assert "node's port 443" in port
    assert "port containerPort" not in port


def test_host_network_detail_names_the_kubelet_only_when_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """kubelet-rules.md: 1.26-1.32 send NODE unless WindowsHostNetwork=false; 1.33+ never."""
    path = write(tmp_path / "p.yaml", windows({"hostNetwork": True}))
    _, out, _ = run(capsys, path, "-o", "json")
    message = json.loads(out)["findings"][0]["message"]
    assert "on 1.26-1.32 unless WindowsHostNetwork=false; never on 1.33-1.38" in message
    assert "kubelet 1.32" not in message  # the default is not the user's kubelet
    assert "(kubelet" not in message
    _, out, _ = run(capsys, path, "-o", "json", "--kubelet-version", "1.34")
    message = json.loads(out)["findings"][0]["message"]
    assert "kubelet 1.34 does not send network NODE" in message
    assert "1.26-1.32" not in message
    _, out, _ = run(capsys, path, "-o", "json", "--kubelet-version", "1.30")
    message = json.loads(out)["findings"][0]["message"]
    assert "kubelet 1.30 sends network NODE in the sandbox request, but no released " \
        "containerd acts on it" in message
    assert message.index("ignored") < message.index("kubelet 1.30")  # advice first


def test_sarif_carries_the_full_text_and_input_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = write(tmp_path / "p.yaml", windows({"hostNetwork": True}))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    status, out, err = run(capsys, good, str(bad), "-o", "sarif")
    assert status == 2
    (run_,) = json.loads(out)["runs"]
    (result,) = run_["results"]
    assert "containerd takes host networking on Windows from host_process alone" in \
        result["message"]["text"]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert rules["host-network-ignored"]["help"]["markdown"].startswith(
        "# host-network-ignored\n")  # the rule's page, shown by code scanning
    (invocation,) = run_["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert notification["message"]["text"].startswith(f"{bad}:2: document 1: not valid YAML")
    assert f"kubelet-winnet: error: {bad}:2:" in err


# --- input that is not a manifest --------------------------------------------------------------


def test_helm_template_kustomization_and_values_get_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    template = chart / "templates" / "pod.yaml"
    template.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n",
                        encoding="utf-8")
    values = chart / "values.yaml"
    values.write_text("replicaCount: 1\nimage: {repository: nginx}\n", encoding="utf-8")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text("resources:\n- deployment.yaml\n", encoding="utf-8")
    status, out, err = run(capsys, "--no-render", str(chart), str(overlay))
    assert (status, out) == (2, "")  # nothing was checked: an empty run fails
    lines = err.splitlines()
    assert f"kubelet-winnet: note: {template}:4: a Helm template ({{{{ ... }}}}), not a " \
        "manifest: check what it renders with helm template CHART | kubelet-winnet check -" \
        in lines
    assert f"kubelet-winnet: note: {kustomization} is a kustomization: check what it builds " \
        f"with kubectl kustomize {overlay} | kubelet-winnet check -" in lines
    # no YAML-parser error for the template: only the empty run's
    assert [line for line in lines if line.startswith("kubelet-winnet: error")] == [
        "kubelet-winnet: error: nothing was checked: no file of the input (3 files) held "
        "Kubernetes manifests (2 Helm templates or kustomizations left unrendered); an empty "
        "run fails so that CI does not pass unchecked (--allow-empty, or allowEmpty: true in "
        "the settings file, accepts it)"]
    status, _, err = run(capsys, str(values), "--allow-empty")
    assert status == 0
    assert f"kubelet-winnet: note: no Kubernetes objects in {values}" in err.splitlines()


def test_misspelt_ignore_annotation_names_the_nearest_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pod = windows({"hostNetwork": True})
    pod["metadata"]["annotations"] = {
        "ignore-check.kubelet-winnet.io/host-network-ignore": "known"}
    path = write(tmp_path / "p.yaml", pod)
    status, out, err = run(capsys, path)
    assert status == 1  # silences nothing
    assert "host-network-ignored" in out
    assert (f"kubelet-winnet: note: {path}:1: Pod/w: ignore-check.kubelet-winnet.io/"
            "host-network-ignore names no rule, so it silences nothing (did you mean "
            "host-network-ignored?)") in err.splitlines()


# --- report formats and flags -------------------------------------------------------------------


def test_fail_on_never_reports_and_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "p.yaml", windows({"hostPID": True}))
    status, out, err = run(capsys, path, "--fail-on", "never")
    assert status == 0
    assert "error windows-forbidden-field" in out
    assert "1 error," in err


def test_summary_counts_pods_and_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    one = write(tmp_path / "a.yaml", windows({}, "a"), windows({"hostNetwork": True}, "b"))
    two = write(tmp_path / "b.yaml", windows({}, "c"))
    status, _, err = run(capsys, one, two)
    assert status == 1
    match = SUMMARY.search(err)
    assert match is not None and match.groups() == ("3", "2")
    assert "0 errors, 1 warning, 0 info" in err
    _, _, quiet = run(capsys, one, two, "-q")
    assert quiet == ""


@pytest.mark.parametrize(("environ", "colour"), [
    ({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
])
def test_colours_only_when_asked_for_or_on_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str], colour: bool,
) -> None:
    for name in ("FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    path = write(tmp_path / "p.yaml", windows({"hostNetwork": True}))
    _, out, _ = run(capsys, path)  # captured stdout is not a terminal
    assert ("\033[" in out) is colour
    _, out, _ = run(capsys, path, "-o", "json")
    assert "\033[" not in out  # machine formats never


def test_paths_are_read_in_command_line_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b, c = (write(tmp_path / f"{n}.yaml", windows({"hostNetwork": True}, n)) for n in "abc")
    _, out, _ = run(capsys, "-f", a, "-f", b, c)
    assert [line.split(":")[0] for line in out.splitlines()] == [a, b, c]


def test_junit_output_is_read_by_a_junit_parser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junitparser = require("junitparser", "test")
    pod = windows({"hostNetwork": True, "hostPID": True})
    quiet = windows({}, "fine")
    silenced = windows({"hostNetwork": True}, "silenced")
    silenced["metadata"]["annotations"] = {
        "ignore-check.kubelet-winnet.io/host-network-ignored": "known"}
    path = write(tmp_path / "p.yaml", pod, quiet, silenced)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    status, out, _ = run(capsys, path, str(bad), "-o", "junit")
    assert status == 2
    report = tmp_path / "junit.xml"
    report.write_text(out, encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(report))
    (suite,) = list(xml)
    cases = list(suite)
    results = {case.name: [type(r).__name__ for r in case.result] for case in cases}
    assert results["host-network-ignored Pod/w spec.hostNetwork"] == ["Failure"]
    assert results["windows-forbidden-field Pod/w spec.hostPID"] == ["Failure"]
    assert results["host-network-ignored Pod/silenced spec.hostNetwork"] == ["Skipped"]
    assert results["Pod/fine"] == []
    assert results["input error"] == ["Error"]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 2, 1, 1)
    failure = next(c for c in cases if c.name.startswith("windows-forbidden")).result[0]
    assert failure.message.startswith("hostPID: true cannot be set on a Windows pod")


def test_help_and_usage_speak_of_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    exit_text = out[out.index("exit status:"):]
    assert "translate" not in exit_text and "explain" not in exit_text
    assert "--fail-on never" in exit_text
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 2
    err = capsys.readouterr().err  # one line, naming check and its help
    assert err == ("kubelet-winnet: error: check: no PATH given (use - for stdin); see "
                   "kubelet-winnet check --help\n")
    with pytest.raises(SystemExit) as info:
        main(["check", "--fail-om", "error", "x.yaml"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kubelet-winnet: error: check: ")
    assert "unrecognized arguments: --fail-om (did you mean --fail-on?)" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from kubelet_winnet import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"kubelet-winnet {__version__}\n"


def test_colours_on_a_real_terminal(tmp_path: Path) -> None:
    """stdout a pseudo-terminal: coloured, unless NO_COLOR is set."""
    import os
    import pty
    import subprocess
    import sys

    script = Path(sys.executable).parent / "kubelet-winnet"
    if not script.exists():
        pytest.skip("the kubelet-winnet script is not installed next to this interpreter")
    path = write(tmp_path / "p.yaml", windows({"hostNetwork": True}))
    for extra, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        leader, follower = pty.openpty()
        try:
            done = subprocess.run([str(script), "check", path], stdout=follower,
                                  stderr=subprocess.PIPE, env={**env, **extra}, timeout=60,
                                  check=False)
            os.close(follower)
            follower = -1
            shown = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal is closed: all read
                    break
                if not chunk:
                    break
                shown += chunk
        finally:
            if follower >= 0:
                os.close(follower)
            os.close(leader)
        assert done.returncode == 1
        assert b"host-network-ignored" in shown
        assert (b"\033[33m" in shown) is coloured, extra
        assert b"\033[" not in done.stderr


# --- unknown-field: the new user's pod -----------------------------------------------------

NEW_USERS_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: win-agent
spec:
  nodeSelector:
    kubernetes.io/os: windows
  hostNetwrok: true
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    securityContext:
      windowsOptions: {hostprocess: true}
"""


def test_a_misspelt_and_a_miscased_field_are_errors_on_their_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The pod that was checked "0 errors, 0 warnings": kubectl apply refuses it (strict
    decoding), and with field validation Warn it would run without host networking and
    without HostProcess."""
    path = tmp_path / "pod.yaml"
    path.write_text(NEW_USERS_POD, encoding="utf-8")
    lines = NEW_USERS_POD.splitlines()
    status, out, err = run(capsys, str(path))
    assert status == 1
    first, second = out.splitlines()
    assert first == (
        f"{path}:{lines.index('  hostNetwrok: true') + 1}: error unknown-field: Pod/win-agent: "
        "unknown field hostNetwrok in pod spec (did you mean hostNetwork?): the API server "
        "refuses or drops it. [spec.hostNetwrok]"
    )
    assert second.startswith(
        f"{path}:{lines.index('      windowsOptions: {hostprocess: true}') + 1}: error "
        "unknown-field: Pod/win-agent container agent: unknown field hostprocess in "
        "windowsOptions (did you mean hostProcess?): "
    )
    assert second.endswith("[spec.containers[0].securityContext.windowsOptions.hostprocess]")
    assert "1 pod in 1 file checked: 2 errors, 0 warnings" in err
    _, verbose, _ = run(capsys, str(path), "-v")
    assert 'kubectl apply, strict by default, fails: the API server answers strict decoding ' \
        'error: unknown field "spec.hostNetwrok".' in verbose
    assert "field names are case-sensitive" in verbose  # hostprocess, not hostNetwrok
    assert verbose.count("field names are case-sensitive") == 1
    assert "drops the field and the pod runs without it" in verbose


def test_the_rule_is_listed_explained_and_in_sarif(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = run(capsys, "--list-rules")
    assert status == 0
    assert re.search(r"^unknown-field +error +a key", out, re.M), out
    status, out, _ = run(capsys, "--explain", "unknown-field")
    assert status == 0
    assert out.startswith("# unknown-field\n")
    assert "kubectl apply" in out and "Warn" in out and "Not in the admission policy" in out
    path = tmp_path / "pod.yaml"
    path.write_text(NEW_USERS_POD, encoding="utf-8")
    _, out, _ = run(capsys, str(path), "-o", "sarif")
    (run_,) = json.loads(out)["runs"]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert "helpUri" not in rules["unknown-field"]
    assert {r["ruleId"] for r in run_["results"]} == {"unknown-field"}
