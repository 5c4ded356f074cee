"""``.kubelet-winnet.yaml`` and the rule listing, as other linters have them: found
from the working directory upward or given with --config, each setting changing what
``check`` reports, bad files naming file:line. Each test runs ``check`` and checks stdout,
stderr and the exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._lint.rules import RULES, RULES_BY_ID
from kubelet_winnet.cli import main
from kubelet_winnet.cli.config import Config, ConfigError, load_config
from kubelet_winnet.sources.manifests import DEFAULT_LIMITS
from kubelet_winnet.sources.manifests import paths as paths_module

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
    # the level written, though the pod is pinned to no OS
    assert (status, rules_of(out)) == (1, [("host-network-ignored", "error")])


@pytest.mark.parametrize(("spec", "rule", "level"), [
    # pinned to Windows by its node selector, not by spec.os.name: the rule says info
    ({"nodeSelector": {"kubernetes.io/os": "windows"}, "hostPID": True},
     "windows-forbidden-field", "error"),
    ({"nodeSelector": {"kubernetes.io/os": "windows"}, "hostPID": True},
     "windows-forbidden-field", "warning"),
    # pinned to no OS: the rule says info, one level below its warning
    ({"hostNetwork": True, "containers": [{"name": "c", "image": "i"}]},
     "host-network-ignored", "warning"),
])
def test_a_configured_severity_is_the_severity_where_the_rule_would_lower_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    spec: dict[str, Any], rule: str, level: str,
) -> None:
    """`severity: {windows-forbidden-field: error}` with `failOn: warning` reported a pod
    pinned to Windows by nodeSelector as info, exit 0: the configured level was lowered
    again. The level written is the level reported, and it fails the run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pod(spec)), encoding="utf-8")
    status, out, _ = run(capsys, "p.yaml", "-o", "json")
    assert (status, [(r, s) for r, s in rules_of(out) if r == rule]) == (0, [(rule, "info")])
    (tmp_path / ".kubelet-winnet.yaml").write_text(
        f"rules:\n  severity: {{{rule}: {level}}}\nfailOn: warning\n", encoding="utf-8")
    status, out, err = run(capsys, "p.yaml", "-o", "json")
    assert [(r, s) for r, s in rules_of(out) if r == rule] == [(rule, level)]
    assert status == 1
    assert f"1 {level}" in err.splitlines()[-1]  # the summary counts it at that level


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


@pytest.mark.parametrize(("text", "line", "where", "rule", "nearest"), [
    ("rules:\n  exclude:\n  - host-port-mismatch\n  - host-netwrk-ignored\n", 4,
     "rules.exclude[1]", "host-netwrk-ignored", "host-network-ignored"),
    ("rules: {include: [host-netwrok-ignored]}\n", 1, "rules.include[0]",
     "host-netwrok-ignored", "host-network-ignored"),
    ("rules:\n  severity:\n    host-port-mismatc: warning\n", 3,
     "rules.severity.host-port-mismatc", "host-port-mismatc", "host-port-mismatch"),
])
def test_an_unknown_rule_id_in_the_settings_is_exit_2_with_the_nearest(
    capsys: pytest.CaptureFixture[str], repo: Path, text: str, line: int, where: str,
    rule: str, nearest: str,
) -> None:
    """An unknown rule id is exit 2 naming the nearest: a typo in include once checked with
    no rule at all and exited 0."""
    config = repo / ".kubelet-winnet.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"kubelet-winnet: error: configuration {config}:{line}: {where}: {rule} names no "
        f"rule (did you mean {nearest}?); --list-rules lists the rules"]


def test_every_mistake_of_the_settings_file_is_reported_in_one_run(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    """Every mistake in one run: `failOn: eror` on line 1 was once reported only after line 2
    was fixed."""
    config = repo / ".kubelet-winnet.yaml"
    config.write_text("failOn: eror\nkubeletVersion: 1.34\nrules:\n  include: [nope-rule]\n"
                      "  exlude: []\nwindowsOnly: 3\n", encoding="utf-8")
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    lines = [line.removeprefix(f"kubelet-winnet: error: configuration {config}:")
             for line in err.splitlines()]
    assert sorted(lines) == sorted([
        "1: failOn: expected error, warning, info or never, got 'eror'",
        '2: kubeletVersion: expected a string: YAML reads 1.34 as a number; write "1.34"',
        "4: rules.include[0]: nope-rule names no rule; --list-rules lists the rules",
        "5: rules.exlude: not a setting (did you mean exclude?); the settings are include, "
        "exclude, severity",
        "6: windowsOnly: expected true or false, got a number",
    ])


def test_the_mistakes_of_the_settings_file_come_in_the_order_of_its_lines(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    """Four mistakes on lines 1, 3, 4 and 5 are told in that order, whatever order the
    settings are checked in; a CRLF file has the same lines."""
    text = ("kubeletVersion: 1.30\nrules:\n  include: [nope-rule]\n  exclude: 5\n"
            "  severity: loud\n")
    want = [
        '1: kubeletVersion: expected a string: YAML reads 1.30 as a number; write "1.30"',
        "3: rules.include[0]: nope-rule names no rule; --list-rules lists the rules",
        "4: rules.exclude: expected a list of rule ids, got a number",
        "5: rules.severity: expected a mapping of rule id to severity, got a string",
    ]
    config = repo / ".kubelet-winnet.yaml"
    for newline in ("\n", "\r\n"):
        config.write_bytes(text.replace("\n", newline).encode("utf-8"))
        status, out, err = run(capsys, str(repo / "manifests"))
        assert (status, out) == (2, "")
        assert [line.removeprefix(f"kubelet-winnet: error: configuration {config}:")
                for line in err.splitlines()] == want


def test_an_empty_include_checks_every_rule(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    """kube-linter's reading of an empty include (nothing added to the defaults): every
    rule, as without the key; never "no rules"."""
    manifests = str(repo / "manifests")
    _, out, _ = run(capsys, manifests, "-o", "json")
    everything = sorted(rules_of(out))
    assert {rule for rule, _ in everything} == {"host-network-ignored", "host-port-mismatch"}
    (repo / ".kubelet-winnet.yaml").write_text("rules:\n  include: []\n", encoding="utf-8")
    status, out, _ = run(capsys, manifests, "-o", "json")
    assert (status, sorted(rules_of(out))) == (1, everything)


def test_a_misspelt_ignore_annotation_stays_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = pod({"hostNetwork": True, "os": {"name": "windows"}})
    manifest["metadata"]["annotations"] = {
        "ignore-check.kubelet-winnet.io/host-netwrk-ignored": "vendored"}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    status, out, err = run(capsys, str(path))
    assert status == 1 and "host-network-ignored" in out  # the finding still counts
    assert any(line.startswith(f"kubelet-winnet: note: {path}:1: Pod/p: ignore-check."
                               "kubelet-winnet.io/host-netwrk-ignored names no rule")
               and line.endswith("(did you mean host-network-ignored?)")
               for line in err.splitlines())


def test_list_rules_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--list-rules")
    assert status == 0
    assert [line.split()[:2] for line in out.splitlines()] == [
        [r.id, (r.severity_without_os or r.severity).label] for r in RULES]
    status, out, _ = run(capsys, "--list-rules", "-o", "json")
    listed = json.loads(out)
    assert [(r["id"], r["severity"]) for r in listed] == [
        (r.id, r.severity.label) for r in RULES]
    assert all(r["page"] == f"docs/rules/{r['id']}.md" for r in listed)
    assert all("helpUri" not in r for r in listed)  # no address configured: none guessed
    status, out, _ = run(capsys, "--list-rules", "-o", "json", "--docs-url",
                         "https://docs.example/winnet/rules/{rule}/")
    assert [r["helpUri"] for r in json.loads(out)] == [
        f"https://docs.example/winnet/rules/{r.id}/" for r in RULES]


def test_list_rules_says_when_windows_forbidden_field_is_an_error(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """The listing says windows-forbidden-field is info, but an error for a pod with
    spec.os.name: windows: the API server rejects the fields only there (validation.go
    validateWindows); all 6 real hits were info."""
    _, out, _ = run(capsys, "--list-rules")
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert " info (error when spec.os.name is windows) " in rows["windows-forbidden-field"]
    # host-network-ignored is lowered for a pod pinned to no OS (rules.py _on_windows).
    assert " warning (info for a pod pinned to no OS) " in rows["host-network-ignored"]
    assert rows["host-process-mixed"].split()[1:3] == ["error", "some"]
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "windows-forbidden-field (info (error when spec.os.name is windows))" in \
        " ".join(out.split())


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
     "rules, kubeletVersion, featureGates, windowsOnly, assumeWindows, skip, failOn, "
     "allowEmpty, docsUrl, allowRemote"),
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


# --- settings that can be planted, or that are not a file -----------------------------


def test_a_planted_settings_file_of_another_user_is_refused(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settings file found upward but owned by another user is refused, not read (simulated:
    the owner lookup says the file is someone else's)."""
    config = repo / ".kubelet-winnet.yaml"
    config.write_text('skip: ["manifests/*"]\nfailOn: never\n', encoding="utf-8")
    mine = os.geteuid()
    other = mine + 1
    monkeypatch.setattr(paths_module, "current_user", lambda: other)
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"kubelet-winnet: error: configuration {config}: the file is owned "
                           f"by ")
    assert f"(uid {mine}), not by " in line and f"(uid {other}), so it is not read" in line
    assert "--config" in line
    # Named with --config, the user chose it: read (its skip pattern leaves nothing).
    status, _, err = run(capsys, str(repo / "manifests"), "--config", str(config),
                         "--allow-empty")
    assert status == 0
    assert ("kubelet-winnet: note: every file of the input was left out (1 file matching a "
            f"skip pattern of {config})") in err.splitlines()


def test_a_directory_on_the_way_owned_by_another_user_is_refused(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = repo / ".kubelet-winnet.yaml"
    config.write_text("failOn: never\n", encoding="utf-8")
    work = str(repo / "work")
    real_stat = os.stat
    mine = os.geteuid()

    class Foreign:
        def __init__(self, status: os.stat_result) -> None:
            self._status = status
            self.st_uid = mine + 7

        def __getattr__(self, name: str) -> Any:
            return getattr(self._status, name)

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        status = real_stat(path, *args, **kwargs)
        return Foreign(status) if os.fspath(path) == work else status

    monkeypatch.setattr(os, "stat", stat)
    status, _, err = run(capsys, str(repo / "manifests"))
    assert status == 2
    assert f"configuration {config}: the directory {work} is owned by " in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0,
                    reason="chown to another user needs root (CI runs as root)")
def test_a_planted_settings_file_is_refused_for_real_as_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack as reported: root in /tmp/x/victim, nobody's file in world-writable
    /tmp/x silenced every finding."""
    shared = tmp_path / "x"
    victim = shared / "victim"
    victim.mkdir(parents=True)
    shared.chmod(0o1777)
    planted = shared / ".kubelet-winnet.yaml"
    planted.write_text('skip: ["*.yaml"]\nfailOn: never\n', encoding="utf-8")
    os.chown(planted, 65534, 65534)
    (victim / "p.yaml").write_text(yaml.safe_dump(pod({"hostNetwork": True})), encoding="utf-8")
    monkeypatch.chdir(victim)
    status, out, err = run(capsys, "p.yaml")
    assert (status, out) == (2, "")
    assert err.startswith(f"kubelet-winnet: error: configuration {planted}: the file is "
                          "owned by ")
    assert "(uid 65534)" in err and "not by root (uid 0)" in err


def test_the_search_stops_at_the_repository_root(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    """git's discovery stops at the directory holding .git: a file above it is not read."""
    (repo / ".kubelet-winnet.yaml").write_text("failOn: never\n", encoding="utf-8")
    assert run(capsys, str(repo / "manifests"))[0] == 0
    (repo / "work" / ".git").mkdir()
    assert run(capsys, str(repo / "manifests"))[0] == 1  # the error finding counts again
    # The repository root's own file is read.
    (repo / "work" / ".kubelet-winnet.yaml").write_text("failOn: never\n", encoding="utf-8")
    assert run(capsys, str(repo / "manifests"))[0] == 0


def test_the_search_stops_at_a_file_system_boundary(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DISCOVERY_ACROSS_FILESYSTEM unset: a parent on another device is not searched
    (simulated: the device lookup says the working directory is a mount point)."""
    (repo / ".kubelet-winnet.yaml").write_text("failOn: never\n", encoding="utf-8")
    work = str(repo / "work")
    real = paths_module._device
    monkeypatch.setattr(paths_module, "_device",
                        lambda path: -1 if path == work else real(path))
    assert run(capsys, str(repo / "manifests"))[0] == 1


@pytest.mark.parametrize("kind", ["dangling link", "FIFO", "directory"])
def test_a_settings_name_that_is_not_a_file_is_an_error(
    tmp_path: Path, kind: str
) -> None:
    """A settings name that is not a file is never passed over for the parent's file, and a
    FIFO is not opened (run in a child process with a timeout: a blocking open would hang
    it)."""
    (tmp_path / ".kubelet-winnet.yaml").write_text("failOn: never\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    name = work / ".kubelet-winnet.yaml"
    if kind == "dangling link":
        name.symlink_to(work / "gone.yaml")
        said = "a symbolic link to"
    elif kind == "FIFO":
        os.mkfifo(name)
        said = "a FIFO, not a regular file"
    else:
        name.mkdir()
        said = "a directory, not a regular file"
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(pod({"hostNetwork": True})), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "kubelet_winnet.cli", "check", str(manifest)],
                          cwd=work, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"kubelet-winnet: error: configuration {name}: {said}")


@pytest.mark.parametrize(("pattern", "shown"), [
    ('""', "''"), ('"/"', "'/'"), ('"*"', "'*'"), ('"**/"', "'**/'"), ('"."', "'.'"),
    # spelt otherwise, they match every file all the same
    ('"?*"', "'?*'"), ('"*.*"', "'*.*'"), ('"[!~]*"', "'[!~]*'"), ('"*[!x]"', "'*[!x]'"),
    ('"./*"', "'./*'"), ('"/*"', "'/*'"), ('"*[lLnN]"', "'*[lLnN]'"),
])
def test_skip_patterns_that_match_every_file_are_refused(
    capsys: pytest.CaptureFixture[str], repo: Path, pattern: str, shown: str
) -> None:
    """A skip pattern that matches every file is refused: `skip: [""]` once skipped every file
    given by an absolute path."""
    config = repo / ".kubelet-winnet.yaml"
    config.write_text(f'skip:\n- "vendor/*"\n- {pattern}\n', encoding="utf-8")
    status, out, err = run(capsys, str(repo / "manifests"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"kubelet-winnet: error: configuration {config}:3: skip[1]: {shown} matches every "
        'file, so nothing would be checked; name the paths to skip ("vendor/*")']


# Every manifest path a directory search reads ends .yaml, .yml or .json, in any case; so
# these leave some file checked: .json or upper case, a name not starting with a letter,
# a file outside the folder, a glob class with no closing bracket (a literal "[").
@pytest.mark.parametrize("pattern", [
    "*.yaml", "*.[yj]*", "*.y*", "*l", "*[ln]", "[a-z]*", "vendor/*", "charts/**",
    "**/*.yaml", "deploy", "*a*", "[!]*", "[", "*/templates/*",
])
def test_skip_patterns_that_leave_files_to_check_are_kept(
    capsys: pytest.CaptureFixture[str], repo: Path, pattern: str
) -> None:
    (repo / ".kubelet-winnet.yaml").write_text(f"skip: [{json.dumps(pattern)}]\n",
                                               encoding="utf-8")
    status, _, err = run(capsys, str(repo / "manifests"), "-o", "json")
    assert [line for line in err.splitlines() if "configuration" in line] == []
    assert status in (1, 2)  # p.yaml's host-port-mismatch, or p.yaml skipped: an empty run
    assert ("every file of the input was left out" in err) is (status == 2)


_NAME = st.text(alphabet="abcXYZ09._-", min_size=1, max_size=6)
_MANIFEST_PATH = st.builds(
    lambda dirs, stem, suffix: "/".join([*dirs, stem + suffix]),
    st.lists(_NAME, max_size=3), _NAME, st.sampled_from([".yaml", ".YML", ".json", ".Json"]))
_GLOB = st.lists(st.sampled_from(["*", "?", "a", ".", "/", "y", "[!~]", "[a-z]", "[lLnN]",
                                  "json", "[!.]", "X", "-"]), max_size=5).map("".join)


@given(_GLOB, st.lists(_MANIFEST_PATH, min_size=1, max_size=20))
def test_a_refused_skip_pattern_skips_every_path_of_a_form(
    pattern: str, paths: list[str]
) -> None:
    """What the refusal claims, checked with the matcher itself: a pattern refused as
    matching every file skips every manifest path named relatively, with ./, or
    absolutely (one of the three forms)."""
    from kubelet_winnet.cli.config import matches_every_file

    if not matches_every_file(pattern):
        return
    config = Config(skip=(pattern,), base="/")
    assert any(all(config.skips(form + path) for path in paths)
               for form in ("", "./", "/")), pattern


@pytest.mark.parametrize("written", ["1.30", "1.20", "1.300", "1"])
def test_a_numeric_kubelet_version_is_quoted_as_written(
    capsys: pytest.CaptureFixture[str], repo: Path, written: str
) -> None:
    """The version as written: `kubeletVersion: 1.30` was once told to write "1.3"."""
    config = repo / ".kubelet-winnet.yaml"
    config.write_text(f"rules: {{}}\nkubeletVersion: {written}  # ours\n", encoding="utf-8")
    status, _, err = run(capsys, str(repo / "manifests"))
    assert status == 2
    assert err.splitlines() == [
        f"kubelet-winnet: error: configuration {config}:2: kubeletVersion: expected a "
        f'string: YAML reads {written} as a number; write "{written}"']


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=20), st.sampled_from([*RULES_BY_ID, "error", "never"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(
        ["rules", "include", "exclude", "severity", "skip", "failOn", "kubeletVersion",
         "allowEmpty", "docsUrl", "windowsOnly"])), inner, max_size=4)), max_leaves=12)


@given(settings=st.one_of(_VALUES, st.dictionaries(st.sampled_from(
    ["rules", "kubeletVersion", "featureGates", "windowsOnly", "assumeWindows", "skip",
     "failOn", "allowEmpty", "docsUrl"]), _VALUES, max_size=6)))
def test_any_settings_value_gives_a_config_or_one_line_errors(settings: object) -> None:
    """The fuzz property for the settings file: whatever YAML it holds, the loader
    gives settings or typed one-line errors naming the file, never a traceback."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / ".kubelet-winnet.yaml"
        path.write_text(yaml.safe_dump(settings), encoding="utf-8")
        loaded: Config | ConfigError
        try:
            loaded = load_config(str(path), DEFAULT_LIMITS, RULES_BY_ID)
        except ConfigError as exc:
            loaded = exc
        if isinstance(loaded, ConfigError):
            assert loaded.messages
            for message in loaded.messages:
                assert "\n" not in message
                assert message.startswith(f"configuration {path}")
        else:
            assert loaded.include is None or loaded.include <= set(RULES_BY_ID)


def test_a_settings_fifo_named_with_config_is_read_once(tmp_path: Path) -> None:
    """--config on a FIFO (process substitution): the numeric-version message quotes the
    source text from a second read only of a regular file, so the run cannot block."""
    fifo = tmp_path / "settings"
    os.mkfifo(fifo)
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(pod({"hostNetwork": True})), encoding="utf-8")
    script = (f'printf "kubeletVersion: 1.30\\n" > "{fifo}" & '
              f'"{sys.executable}" -m kubelet_winnet.cli check --config "{fifo}" "{manifest}"')
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    # (its text cannot be read twice: the message does not pretend to quote it)
    assert done.stderr == (f"kubelet-winnet: error: configuration {fifo}:1: kubeletVersion: "
                           "expected a string: YAML reads the value as the number 1.3; write "
                           'the version in quotes, as "1.30"\n')


def test_config_help_names_every_key_of_the_documented_settings_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--config's help listed the keys by hand, without allowEmpty and docsUrl. Every
    top-level key of the example file in docs/ci.md, and the keys under rules, is
    named there now."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    example = yaml.safe_load(text.split("```yaml\n", 1)[1].split("```", 1)[0])
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    said = help_text.split("--config FILE settings file", 1)[1].split(" --", 1)[0]
    for key in [*example, *example["rules"]]:
        assert key in said, (key, said)


def test_the_settings_file_merges_into_a_copy_not_the_parsed_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    import argparse

    import kubelet_winnet.cli as cli
    from kubelet_winnet.cli.session import Command

    (tmp_path / ".kubelet-winnet.yaml").write_text(
        "kubeletVersion: '1.30'\nfailOn: error\nwindowsOnly: true\n", encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: "
        "{kubernetes.io/os: windows}\n  hostNetwork: true\n  containers: [{name: c, image: i}]\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    seen: list[tuple[dict[str, object], dict[str, object]]] = []
    real = cli.load_command

    def recording(name: str) -> Command:
        command = real(name)

        def run(args: argparse.Namespace, session: object) -> int:
            before = dict(vars(args))
            status = command.run(args, session)  # type: ignore[arg-type]
            seen.append((before, dict(vars(args))))
            return status

        return Command(command.name, command.configure, run)

    monkeypatch.setattr(cli, "load_command", recording)
    assert cli.main(["check", "pod.yaml", "-o", "json"]) == 0  # failOn: error; a warning
    before, after = seen[0]
    assert before == after
    assert after["kubelet_version"] is None and after["fail_on"] is None
    assert "kubelet 1.30" in capsys.readouterr().out  # the file's kubelet was used
