"""``.kubelet-winnet.yaml`` and the rule listing (issue 18, linter conventions): found
from the working directory upward or given with --config, each setting changing what
``check`` reports, bad files naming file:line. Each test runs ``check`` and checks stdout,
stderr and the exit status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet._lint.rules import RULES
from kubelet_winnet.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def pod(spec: dict[str, Any], name: str = "p") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i",
                                     "ports": [{"containerPort": 80, "hostPort": 81}]}],
                     **spec}}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with one untargeted hostNetwork pod (host-network-ignored, info;
    host-port-mismatch, error) in manifests/, the working directory a folder below."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "p.yaml").write_text(
        yaml.safe_dump(pod({"hostNetwork": True})), encoding="utf-8")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "v.yaml").write_text(
        yaml.safe_dump(pod({"hostNetwork": True}, "vendored")), encoding="utf-8")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def rules_of(out: str) -> list[tuple[str, str]]:
    return [(f["rule"], f["severity"]) for f in json.loads(out)["findings"]]


def test_config_found_upward_changes_what_is_reported(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    manifests = str(repo / "manifests")
    status, out, _ = run(capsys, manifests, "-o", "json")
    assert (status, sorted(rules_of(out))) == (
        1, [("host-network-ignored", "info"), ("host-port-mismatch", "error")])
    (repo / ".kubelet-winnet.yaml").write_text(
        "rules:\n  exclude: [host-port-mismatch]\nassumeWindows: true\n"
        'kubeletVersion: "1.34"\n', encoding="utf-8")
    status, out, _ = run(capsys, manifests, "-o", "json")
    assert (status, rules_of(out)) == (1, [("host-network-ignored", "warning")])
    assert "kubelet 1.34 does not send network NODE" in json.loads(out)["findings"][0]["message"]
    (repo / ".kubelet-winnet.yaml").write_text(
        "rules:\n  include: [host-network-ignored]\n  severity: {host-network-ignored: error}\n",
        encoding="utf-8")
    status, out, _ = run(capsys, manifests, "-o", "json")
    # error, one level lower for a pod pinned to no OS
    assert (status, rules_of(out)) == (1, [("host-network-ignored", "warning")])


def test_skip_and_windows_only(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    (repo / ".kubelet-winnet.yaml").write_text('skip: ["vendor/*"]\n', encoding="utf-8")
    status, out, err = run(capsys, str(repo), "-o", "json")
    assert status == 1
    files = {f["file"] for f in json.loads(out)["findings"]}
    assert files == {str(repo / "manifests" / "p.yaml")}
    (repo / ".kubelet-winnet.yaml").write_text("windowsOnly: true\n", encoding="utf-8")
    status, out, err = run(capsys, str(repo), "-o", "json")
    assert (status, json.loads(out)["findings"]) == (0, [])
    assert "2 untargeted pods skipped" in err


def test_config_flag_names_the_file(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    other = repo / "lint.yaml"
    other.write_text("rules:\n  exclude: [host-network-ignored, host-port-mismatch]\n",
                     encoding="utf-8")
    status, out, _ = run(capsys, str(repo / "manifests"), "--config", str(other), "-o", "json")
    assert (status, json.loads(out)["findings"]) == (0, [])


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("rules:\n  exlude: [x]\n", 2,
     "rules.exlude: not a setting (did you mean exclude?); the settings are include, "
     "exclude, severity"),
    ("kubeletVersion: 1.34\n", 1,
     'kubeletVersion: expected a string: YAML reads 1.34 as a number; write "1.34"'),
    ("rules:\n  severity:\n    host-port-mismatch: fatal\n", 3,
     "rules.severity.host-port-mismatch: expected error, warning or info, got 'fatal'"),
    ("assumeWindows: yes please\n", 1, "assumeWindows: expected true or false, got a string"),
])
def test_bad_config_is_exit_2_naming_file_and_line(
    capsys: pytest.CaptureFixture[str], repo: Path, text: str, line: int, reason: str
) -> None:
    config = repo / ".kubelet-winnet.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"kubelet-winnet: error: configuration {config}:{line}: {reason}"]


def test_unknown_rule_in_config_is_a_note_with_the_nearest(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    config = repo / ".kubelet-winnet.yaml"
    config.write_text("rules:\n  exclude:\n  - host-port-mismatch\n  - host-netwrk-ignored\n",
                      encoding="utf-8")
    status, _, err = run(capsys, str(repo / "manifests"))
    assert status == 0  # host-network-ignored is info for the untargeted pod
    assert (f"kubelet-winnet: note: {config}:4: host-netwrk-ignored names no rule, so it "
            "changes nothing (did you mean host-network-ignored?)") in err.splitlines()


def test_list_rules_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--list-rules")
    assert status == 0
    assert [line.split()[:2] for line in out.splitlines()] == [
        [r.id, r.severity.label] for r in RULES]
    status, out, _ = run(capsys, "--list-rules", "-o", "json")
    listed = json.loads(out)
    assert [(r["id"], r["severity"]) for r in listed] == [
        (r.id, r.severity.label) for r in RULES]
    assert all(r["helpUri"].endswith(f"/docs/rules/{r['id']}.md") for r in listed)


def test_explain_prints_the_rule_page(capsys: pytest.CaptureFixture[str]) -> None:
    for rule in RULES:
        status, out, _ = run(capsys, "--explain", rule.id)
        assert status == 0
        assert out.startswith(f"# {rule.id}\n")
        site = (REPO / "docs" / "rules" / f"{rule.id}.md").read_text(encoding="utf-8")
        assert site.endswith(out)  # the site's page is the same text
    status, out, err = run(capsys, "--explain", "host-port-mismatc")
    assert (status, out) == (2, "")
    assert err == ("kubelet-winnet: error: --explain: host-port-mismatc is not a rule nor an "
                   "id explain prints (did you mean host-port-mismatch?); --list-rules lists "
                   "the rules\n")


def test_fail_on_in_the_config_sets_the_exit_status_and_the_flag_wins(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    # The repo's pod has an error finding (host-port-mismatch) and an info one.
    manifests = str(repo / "manifests")
    config = repo / ".kubelet-winnet.yaml"
    assert run(capsys, manifests)[0] == 1  # --fail-on's default, warning
    config.write_text("failOn: never\n", encoding="utf-8")
    status, out, _ = run(capsys, manifests)
    assert status == 0 and "host-port-mismatch" in out
    assert run(capsys, manifests, "--fail-on", "error")[0] == 1  # the flag wins
    config.write_text("rules:\n  exclude: [host-port-mismatch]\nfailOn: info\n",
                      encoding="utf-8")
    assert run(capsys, manifests)[0] == 1  # the info finding now fails the run
    assert run(capsys, manifests, "--fail-on", "warning")[0] == 0


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("skip: []\nfailOn: warnings\n", 2,
     "failOn: expected error, warning, info or never, got 'warnings'"),
    ("failOn: no\n", 1, "failOn: expected error, warning, info or never, got a boolean "
     "(YAML reads a bare no or off as false; write never)"),
    ("failOn: [error]\n", 1, "failOn: expected error, warning, info or never, got a list"),
    ("failon: error\n", 1, "failon: not a setting (did you mean failOn?); the settings are "
     "rules, kubeletVersion, featureGates, windowsOnly, assumeWindows, skip, failOn"),
])
def test_a_bad_fail_on_is_one_line_naming_file_line_and_the_choices(
    capsys: pytest.CaptureFixture[str], repo: Path, text: str, line: int, reason: str
) -> None:
    config = repo / ".kubelet-winnet.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"kubelet-winnet: error: configuration {config}:{line}: {reason}"]


def test_checking_the_repository_root_passes_its_settings_file_by(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check .` at a repository's root: the settings file there is read as settings, not
    as a manifest (before, it drew "no Kubernetes objects in ./.kubelet-winnet.yaml")."""
    (repo / ".kubelet-winnet.yaml").write_text("rules:\n  exclude: [host-port-mismatch]\n",
                                               encoding="utf-8")
    monkeypatch.chdir(repo)
    status, out, err = run(capsys, ".", "-o", "json")
    assert ".kubelet-winnet.yaml" not in err
    assert sorted({r for r, _ in rules_of(out)}) == ["host-network-ignored"]
    assert "2 pods in 2 files checked" in err
    assert status == 0
