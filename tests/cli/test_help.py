"""What each command's ``--help`` promises, checked against what the command does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kubelet_winnet.cli import main

HOST_NETWORK_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
    "spec": {"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "windows"},
             "containers": [{"name": "c", "image": "i"}]},
}

# The 1.38 release schedule (kubernetes/sig-release releases/release-1.38): rc.0 on
# 2026-12-02, v1.38.0 on 2026-12-16; observed: CHANGELOG-1.38.md reaches v1.38.0-alpha.2.
RC_38 = ("a release candidate by the schedule (rc.0 2026-12-02), due 2026-12-16; the "
         "newest pre-release seen is v1.38.0-alpha.2")


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    # argparse wraps at the terminal width: compare the words, not the lines.
    return " ".join(capsys.readouterr().out.split())


def _flag_help(text: str, flag: str) -> str:
    found = re.search(rf"{flag} [A-Z_]+ (.*?)(?= --?[a-z])", text)
    assert found, f"{flag} is not in the help"
    return found.group(1)


def test_check_help_says_it_judges_every_release_without_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = _flag_help(_help(capsys, "check"), "--kubelet-version")
    assert "default 1.32" not in text
    assert text.endswith("(default: none, and the hostNetwork finding speaks of every "
                         "release, unless the settings file sets kubeletVersion; as of "
                         "2026-12-04, 1.38 is " + RC_38 + ")")
    # ... and it does: the finding's detail names 1.26-1.32 and 1.33-1.38, not one kubelet.
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(HOST_NETWORK_POD), encoding="utf-8")
    main(["check", "-v", str(tmp_path / "pod.yaml")])
    out = capsys.readouterr().out
    assert "on 1.26-1.32 unless WindowsHostNetwork=false; never on 1.33-1.38" in out


@pytest.mark.parametrize("command", ["translate", "explain", "run", "policy"])
def test_other_commands_name_their_default_version_and_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    text = _flag_help(_help(capsys, command), "--kubelet-version")
    # kubelet-rules.md: 1.32 is the last release that sets namespace_options;
    # admission-and-distribution.md: on 2026-12-04 1.38 is due 2026-12-16.
    assert text.endswith("(default 1.32: the newest kubelet that sends hostNetwork to the "
                         "runtime; KEP-3503 was withdrawn in 1.33; as of 2026-12-04, 1.38 is "
                         + RC_38 + ")")


def test_a_mistyped_command_gets_did_you_mean_like_a_mistyped_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["chek", "x.yaml"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "kubelet-winnet: error: unknown command 'chek' (did you mean check?); see "
        "kubelet-winnet --help\n")
    with pytest.raises(SystemExit):
        main(["frobnicate"])
    assert capsys.readouterr().err == (
        "kubelet-winnet: error: unknown command 'frobnicate' (the commands: translate, "
        "explain, check, audit, matrix, run, policy, node); see kubelet-winnet --help\n")


OTHER_COMMANDS = ("translate", "explain", "check", "audit", "matrix", "run", "policy")


@pytest.mark.parametrize(
    ("command", "statuses"),
    [
        ("translate", ["0", "1", "2", "141"]),
        ("explain", ["0", "1", "2", "141"]),
        ("audit", ["0", "1", "2", "141"]),
        ("matrix", ["0", "2", "141"]),  # a refused pod is a cell of the matrix
        ("run", ["0", "1", "2", "141"]),
        ("policy", ["0", "2", "141"]),
    ],
)
def test_each_command_lists_its_own_exit_statuses(
    capsys: pytest.CaptureFixture[str], command: str, statuses: list[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "exit status:" in out
    table = out[out.index("exit status:"):].splitlines()[1:]
    assert [row.split()[0] for row in table if not row.startswith("       ")] == statuses
    text = " ".join(" ".join(table).split())
    # Its own statuses only: no row speaks of what another command does.
    others = [c for c in OTHER_COMMANDS if c != command and f"({c})" in text]
    assert others == [], text
    if command == "audit":
        assert "always with --fail-on never" in text


def test_matrix_exits_0_for_a_pod_the_kubelet_refuses_as_its_help_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    refused = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hp"},
               "spec": {"securityContext": {"windowsOptions": {"hostProcess": True}},
                        "containers": [{"name": "c", "image": "i"}]}}
    path = tmp_path / "hp.yaml"
    path.write_text(yaml.safe_dump(refused), encoding="utf-8")
    assert main(["matrix", "--pod", str(path)]) == 0
    # kubelet-rules.md step 3b: HostProcess without hostNetwork is refused.
    assert "hostNetwork is required if Pod contains HostProcess containers" in (
        capsys.readouterr().out)


def test_audit_help_says_the_default_is_for_pods_without_a_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _flag_help(_help(capsys, "audit"), "--kubelet-version")
    assert text == ("kubelet release for pods without a node that reports one (default 1.32: "
                    "the newest kubelet that sends hostNetwork to the runtime); a pod on a "
                    "node is judged by that node's kubelet")


@pytest.mark.parametrize("columns", ["80", "100", "160"])
def test_each_command_of_the_top_level_help_has_its_summary_on_its_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """`kubelet-winnet --help` lists the commands as a table: each name starts a line and
    its summary starts on the same line (translate, the longest, had it on the next)."""
    from kubelet_winnet.cli import COMMAND_MODULES

    monkeypatch.setenv("COLUMNS", columns)
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = capsys.readouterr().out.splitlines()
    for name, (_, summary) in COMMAND_MODULES.items():
        line = next(line for line in lines if line.strip().split(" ")[0] == name)
        first_words = " ".join(summary.split()[:3])
        assert first_words in line, line
