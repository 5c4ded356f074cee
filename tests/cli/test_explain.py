"""``kubelet-winnet explain``'s findings speak check's language: one id, one severity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet import WarningCode
from kubelet_winnet.cli import main

WINDOWS = {"kubernetes.io/os": "windows"}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "mcr.microsoft.com/x"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


GMSA = {"windowsOptions": {"gmsaCredentialSpecName": "webapp"}}


def _line_of(path: Path, text: str, after: int = 0) -> int:
    """The 1-based number of the first line of ``path`` after line ``after`` that is
    ``text`` (the input itself, not the tool, says where a field is)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if n > after and line == text)


@pytest.mark.parametrize(
    ("spec", "version", "rule", "severity", "reason"),
    [
        # docs/rules/README.md: host-network-ignored is a warning on a Windows pod, info
        # on a pod pinned to no OS; gmsa-spec-missing is info.
        ({"hostNetwork": True, "nodeSelector": WINDOWS}, "1.32", "host-network-ignored",
         "warning", "containerd-ignores-namespace-options"),
        ({"hostNetwork": True, "nodeSelector": WINDOWS}, "1.34", "host-network-ignored",
         "warning", "host-network-withdrawn"),
        ({"hostNetwork": True}, "1.34", "host-network-ignored", "info",
         "host-network-withdrawn"),
        ({"securityContext": GMSA, "nodeSelector": WINDOWS}, "1.32", "gmsa-spec-missing",
         "info", "gmsa-spec-missing"),
    ],
)
def test_explain_gives_a_finding_the_severity_check_gives_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spec: dict[str, Any], version: str,
    rule: str, severity: str, reason: str,
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(_pod("p", **spec)), encoding="utf-8")
    _, out, _ = _run(capsys, "explain", "--kubelet-version", version, str(path))
    (line,) = [t for t in out.splitlines() if t.startswith(f"{path}:")]
    name = rule if rule == reason else f"{rule} [{reason}]"
    assert line.split(": ", 1)[1].startswith(f"{severity} {name} spec.")
    _, out, _ = _run(capsys, "check", "--kubelet-version", version, str(path))
    assert f": {severity} {rule}: " in out  # check says the same of the same pod
    _, out, _ = _run(capsys, "explain", "--kubelet-version", version, str(path), "-o", "json")
    (warning,) = json.loads(out)[0]["warnings"]
    assert (warning["code"], warning["rule"], warning["severity"]) == (reason, rule, severity)


def test_flag_notes_are_notes_not_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(_pod("p")), encoding="utf-8")
    _, out, _ = _run(capsys, "explain", "--kubelet-version", "1.34", "--feature-gates",
                     "Foo=true,WindowsHostNetwork=true", str(path))
    assert ("note deprecated-feature-gate --feature-gates: Setting deprecated feature gate "
            "WindowsHostNetwork=true.") in out
    assert "note feature-gate-not-modelled --feature-gates: feature gate Foo " in out
    assert "warning" not in out


@pytest.mark.parametrize("code", [str(c) for c in WarningCode])
def test_every_id_explain_prints_is_explained_by_check(
    capsys: pytest.CaptureFixture[str], code: str
) -> None:
    status, out, err = _run(capsys, "check", "--explain", code)
    assert (status, err) == (0, "")
    first = out.splitlines()[0]
    if code == "gmsa-spec-missing":
        assert first == "# gmsa-spec-missing"  # a rule: its page
    elif code.startswith(("host-network", "containerd")):
        assert first.startswith(f"{code}: a reason `explain` gives for rule "
                                "host-network-ignored: ")
        assert "# host-network-ignored" in out
    else:
        assert first.startswith(f"{code}: a note of `explain` about the flags, not a check "
                                "rule: ")


@pytest.mark.parametrize(
    ("argv", "code", "outcome"),
    [
        # kubelet-rules.md timeline: 1.26-1.32 send NODE while the gate is on (its
        # default), and no released containerd reads it; 1.33+ never send it.
        ([], "containerd-ignores-namespace-options",
         "will not take effect: the kubelet sends namespace_options.network = NODE but no "
         "released containerd acts on it"),
        (["--feature-gates", "WindowsHostNetwork=false"], "host-network-gate-off",
         "will not reach the runtime: kubelet 1.32 does not send namespace_options.network "
         "= NODE while WindowsHostNetwork is off (WindowsHostNetwork=false)"),
        (["--kubelet-version", "1.35"], "host-network-withdrawn",
         "will not reach the runtime: kubelet 1.35 does not send namespace_options.network "
         "= NODE (no kubelet 1.33 or later does)"),
    ],
)
def test_translate_and_explain_say_the_same_true_sentence_of_host_network(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], code: str,
    outcome: str,
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(_pod("p", hostNetwork=True, nodeSelector=WINDOWS)),
                    encoding="utf-8")
    line = _line_of(path, "  hostNetwork: true")
    _, _, err = _run(capsys, "translate", *argv, str(path))
    assert err == (f"kubelet-winnet: note: {path}:{line}: Pod/p: hostNetwork: true {outcome}; "
                   "the pod gets its own network namespace (kubelet-winnet check explains)\n")
    _, out, _ = _run(capsys, "explain", *argv, str(path), "-o", "json")
    (warning,) = json.loads(out)[0]["warnings"]
    assert warning["code"] == code
    assert warning["message"].startswith(f"hostNetwork: true {outcome}; ")


@pytest.mark.parametrize(
    ("version", "gates", "state"),
    [
        # kubelet-rules.md: on 1.26-1.32 WindowsHostNetwork is alpha and on by default;
        # AllAlpha switches every alpha gate not set by name; the gate's own item wins.
        ("1.32", "", "alpha, enabled (by default)"),
        ("1.32", "AllAlpha=false", "alpha, disabled (set by AllAlpha=false)"),
        ("1.26", "AllAlpha=0", "alpha, disabled (set by AllAlpha=false)"),
        ("1.32", "WindowsHostNetwork=false", "alpha, disabled (set by WindowsHostNetwork=false)"),
        ("1.32", "AllAlpha=false,WindowsHostNetwork=true",
         "alpha, enabled (set by WindowsHostNetwork=true)"),
        ("1.34", "", "deprecated, disabled (by default)"),
        ("1.34", "AllAlpha=true", "deprecated, disabled (by default)"),
    ],
)
def test_the_gate_step_names_what_decided_the_gate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str, gates: str, state: str,
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(_pod("p", nodeSelector=WINDOWS)), encoding="utf-8")
    _, out, _ = _run(capsys, "explain", "--kubelet-version", version, "--feature-gates", gates,
                     str(path))
    (step,) = [t for t in out.splitlines() if t.startswith("  step gates: ")]
    assert step.startswith(f"  step gates: kubelet {version}: WindowsHostNetwork is {state}; ")


def test_a_mistyped_reason_id_is_suggested_by_check_explain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(capsys, "check", "--explain", "host-network-withdrwn")
    assert (status, out) == (2, "")
    assert err == ("kubelet-winnet: error: --explain: host-network-withdrwn is not a rule nor "
                   "an id explain prints (did you mean host-network-withdrawn?); --list-rules "
                   "lists the rules\n")


# A Deployment after a ConfigMap, its fields far below the document's first line.
_FAR = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/os: windows
      securityContext:
        windowsOptions:
          gmsaCredentialSpecName: webapp
      containers:
      - name: c
        image: mcr.microsoft.com/x
      hostNetwork: true
"""


def test_explain_warnings_name_the_line_of_their_field_as_check_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(_FAR, encoding="utf-8")
    network = _line_of(path, "      hostNetwork: true")
    gmsa = _line_of(path, "          gmsaCredentialSpecName: webapp")
    assert (network, gmsa) == (20, 16)  # the document starts on line 5
    _, out, _ = _run(capsys, "explain", str(path), "--feature-gates", "Foo=true")
    lines = out.splitlines()
    assert lines[0].startswith(f"# Deployment/web ({path}#2, line 5; windows)")
    assert any(t.startswith(f"{path}:{network}: warning host-network-ignored "
                            "[containerd-ignores-namespace-options] "
                            "spec.template.spec.hostNetwork: hostNetwork: true will not take "
                            "effect") for t in lines), out
    assert any(t.startswith(f"{path}:{gmsa}: info gmsa-spec-missing "
                            "spec.template.spec.securityContext.windowsOptions."
                            "gmsaCredentialSpecName: ") for t in lines), out
    # a note about the flags has no line of the file
    assert any(t.startswith("note feature-gate-not-modelled --feature-gates: ") for t in lines)
    _, out, _ = _run(capsys, "check", str(path))
    assert f"{path}:{network}: warning host-network-ignored: " in out
    assert f"{path}:{gmsa}: info gmsa-spec-missing: " in out
    for output in ("json", "yaml"):
        _, out, _ = _run(capsys, "explain", str(path), "--feature-gates", "Foo=true",
                         "-o", output)
        (record,) = json.loads(out) if output == "json" else list(yaml.safe_load_all(out))
        assert {w["code"]: w["line"] for w in record["warnings"]} == {
            "containerd-ignores-namespace-options": network, "gmsa-spec-missing": gmsa,
            "feature-gate-not-modelled": None,
        }


@pytest.mark.parametrize(("version", "noted"), [("1.37", False), ("1.38", True)])
def test_explain_says_once_that_1_38_is_a_release_candidate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str, noted: bool,
) -> None:
    """As of 2026-12-04, 1.38 is due 2026-12-16 (admission-and-distribution.md)."""
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump_all([_pod("a", nodeSelector=WINDOWS),
                                        _pod("b", nodeSelector=WINDOWS)]), encoding="utf-8")
    _, out, _ = _run(capsys, "explain", "--kubelet-version", version, str(path))
    steps = [t for t in out.splitlines() if t.startswith("  step gates: ")]
    assert len(steps) == 2
    for step in steps:
        assert step.startswith(f"  step gates: kubelet {version}"
                               + (" (a release candidate by the schedule (rc.0 2026-12-02), due "
                                  "2026-12-16; the newest pre-release seen is "
                                  "v1.38.0-alpha.2): " if noted else ": "))
    assert out.count("release candidate") == (2 if noted else 0)  # once per pod, no more
