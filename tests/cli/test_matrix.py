"""``kubelet-winnet matrix``: pod classes × kubelet 1.26-1.38 × WindowsHostNetwork state.

Expected cells come from kubelet-rules.md, restated here as an oracle independent of the
library: the timeline (1.26-1.32 alpha default true, sets namespace_options when enabled;
1.33-1.37 deprecated, never sets it; 1.38 removed, setting it is
``unrecognized feature gate: WindowsHostNetwork``) and generatePodSandboxWindowsConfig's
steps 2, 3a, 3b, 6 in that precedence.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet.cli import main
from tests.strategies import FIXTURES, MINORS, WINDOWS_POD, run_main

GATES = {"default": None, "on": True, "off": False}

MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
NEEDS_NETWORK = "hostNetwork is required if Pod contains HostProcess containers"
POD_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)
UNRECOGNIZED = "unrecognized feature gate: WindowsHostNetwork"


def expected_cell(minor: int, gate: bool | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The rules, restated: what kubelet 1.<minor> with the gate set to ``gate`` (None:
    default) does with a pod spec."""
    if minor >= 38 and gate is not None:
        return {"outcome": "flag-error", "error": UNRECOGNIZED}
    enabled = (True if gate is None else gate) if minor <= 32 else False
    host_network = spec.get("hostNetwork") is True
    pod_hp = spec.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess")
    flags = []
    for container in spec.get("initContainers", []) + spec["containers"]:
        own = container.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess")
        flags.append(own if own is not None else pod_hp is True)
    if any(flags):
        if not all(flags):
            return {"outcome": "refused", "step": "3a", "error": MIXED}
        if not host_network:
            return {"outcome": "refused", "step": "3b", "error": NEEDS_NETWORK}
        if pod_hp is False:
            return {"outcome": "refused", "step": "6", "error": POD_FALSE}
    return {
        "outcome": "sent",
        "network": ("NODE" if host_network else "POD") if enabled else None,
        "hostProcess": any(flags),
        # cri-and-hcn.md: containerd's hostNetwork() on Windows reads host_process alone.
        "containerdNetwork": "host" if any(flags) else "pod",
    }


def run(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["matrix", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_matrix_matches_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run("-o", "json", capsys=capsys)
    assert (status, err) == (0, "")
    document = json.loads(out)
    from kubelet_winnet.cli.commands.matrix import POD_CLASSES

    assert [row["pod"] for row in document["rows"]] == [c.id for c in POD_CLASSES]
    classes = {c.id: c for c in POD_CLASSES}
    checked = 0
    for row in document["rows"]:
        spec = dict(classes[row["pod"]].manifest["spec"])
        assert [(c["kubelet"], c["gates"]) for c in row["cells"]] == [
            (f"1.{m}", g) for m in MINORS for g in GATES
        ]
        for cell in row["cells"]:
            minor = int(cell["kubelet"].split(".")[1])
            expected = expected_cell(minor, GATES[cell["gates"]], spec)
            got = {k: cell.get(k) for k in expected}
            assert got == expected, (row["pod"], cell["kubelet"], cell["gates"])
            checked += 1
    assert checked == 10 * 13 * 3


def test_classes_cover_every_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    """The representative classes reach every step that can refuse and both modes."""
    _, out, _ = run("-o", "json", capsys=capsys)
    seen = {
        (c["outcome"], c.get("step"), c.get("network"), c.get("hostProcess"))
        for row in json.loads(out)["rows"] for c in row["cells"]
    }
    for wanted in [("refused", "3a"), ("refused", "3b"), ("refused", "6")]:
        assert any(s[:2] == wanted for s in seen)
    for network in ("POD", "NODE", None):
        for host_process in (False, True):
            if network == "POD" and host_process:
                continue  # HostProcess needs hostNetwork, so never POD
            assert ("sent", None, network, host_process) in seen
    assert any(s[0] == "flag-error" for s in seen)


def test_json_config_is_the_wire_form(capsys: pytest.CaptureFixture[str]) -> None:
    """cri-and-hcn.md: namespace_options {network: POD} is present (proto3 JSON ``{}``)."""
    _, out, _ = run("-o", "json", capsys=capsys)
    rows = {row["pod"]: row for row in json.loads(out)["rows"]}
    cells = {(c["kubelet"], c["gates"]): c for c in rows["plain"]["cells"]}
    assert cells["1.32", "default"]["windowsPodSandboxConfig"] == {
        "securityContext": {"namespaceOptions": {}}
    }
    assert cells["1.33", "on"]["windowsPodSandboxConfig"] == {"securityContext": {}}
    host = {(c["kubelet"], c["gates"]): c for c in rows["plain-host-network"]["cells"]}
    assert host["1.26", "on"]["windowsPodSandboxConfig"] == {
        "securityContext": {"namespaceOptions": {"network": "NODE"}}
    }


def test_markdown_merges_versions_where_the_timeline_changes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys=capsys)
    assert status == 0
    headers = [line for line in out.splitlines() if line.startswith("| pod |")]
    # default: the answer changes only at 1.33 (PR #130250); "on": also at 1.38 where the
    # gate is unrecognized; "off": only at 1.38.
    # 1.38 is a release candidate on 2026-12-04 (admission-and-distribution.md): every
    # column holding it says so.
    assert headers == [
        "| pod | kubelet 1.26–1.32 | kubelet 1.33–1.38 (1.38 rc) |",
        "| pod | kubelet 1.26–1.32 | kubelet 1.33–1.37 | kubelet 1.38 (rc) |",
        "| pod | kubelet 1.26–1.37 | kubelet 1.38 (rc) |",
    ]
    assert ("| no HostProcess, hostNetwork: true | sends NODE; containerd: pod network | "
            "sends no namespace_options; containerd: pod network |") in out
    assert f"`{UNRECOGNIZED}`" in out and f"`{POD_FALSE}`" in out
    # The legend says the two halves of a cell apart (cri-and-hcn.md: containerd reads
    # host_process alone).
    legend = " ".join(out.split("### ")[0].split())
    assert ("Each cell says what the kubelet puts in `WindowsPodSandboxConfig.security_context`, "
            "then what the pod gets on containerd: ") in legend
    assert ("containerd takes the host network from `host_process` alone, so a pod sent `NODE` "
            "still gets a pod network unless it is HostProcess.") in legend


# admission-and-distribution.md, "Updates, 2026-12-04": 1.35 (2025-12-17), 1.36
# (2026-04-22) and 1.37 (2026-08-26) released, 1.38 due 2026-12-16; the earlier minors'
# dates are their kubernetes.io release announcements.
RELEASES = {
    26: "2022-12-08", 27: "2023-04-11", 28: "2023-08-15", 29: "2023-12-13",
    30: "2024-04-17", 31: "2024-08-13", 32: "2024-12-11", 33: "2025-04-23",
    34: "2025-08-27", 35: "2025-12-17", 36: "2026-04-22", 37: "2026-08-26",
}


def test_matrix_says_which_kubelets_are_released(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run("-o", "json", capsys=capsys)
    document = json.loads(out)
    assert document["kubeletReleasesAsOf"] == "2026-12-04"
    assert document["kubeletReleases"] == {
        **{f"1.{m}": {"status": "released", "date": d} for m, d in RELEASES.items()},
        # the 1.38 schedule: rc.0 2026-12-02, .0 2026-12-16; observed: CHANGELOG-1.38.md
        # reaches v1.38.0-alpha.2
        "1.38": {"status": "rc", "date": "2026-12-16", "rc0Date": "2026-12-02",
                 "newestSeen": "v1.38.0-alpha.2"},
    }
    _, out, _ = run(capsys=capsys)
    (line,) = [t for t in out.splitlines() if t.startswith("As of ")]
    assert line == ("As of 2026-12-04, kubelet 1.26–1.37 are released; 1.38 is a release "
                    "candidate by the schedule (rc.0 2026-12-02), due 2026-12-16; the newest "
                    "pre-release seen is v1.38.0-alpha.2.")


@pytest.mark.parametrize(("spec", "sent", "gets"), [
    # KEP-3503: 1.26-1.32 send NODE for hostNetwork; containerd gives a pod the node's
    # network only when host_process is set (cri-and-hcn.md), so the two differ here.
    ("  hostNetwork: true\n", "sends NODE", "containerd: pod network"),
    ("  hostNetwork: true\n  securityContext:\n    windowsOptions:\n      hostProcess: true\n",
     "sends NODE, host_process", "containerd: host network"),
    ("", "sends POD", "containerd: pod network"),
])
def test_pod_cells_tell_what_is_sent_from_what_containerd_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spec: str, sent: str, gets: str,
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(WINDOWS_POD.replace("spec:\n", "spec:\n" + spec), encoding="utf-8")
    status, out, _ = run_main(capsys, "matrix", "--pod", str(path))
    assert status == 0
    (row, *_) = [t for t in out.splitlines() if t.startswith("| Pod/web (")]
    assert row.split(" | ")[1] == f"{sent}; {gets}"
    assert "network NODE" not in out
    status, out, _ = run_main(capsys, "matrix", "--pod", str(path), "-o", "json")
    cell = json.loads(out)["rows"][0]["cells"][0]  # kubelet 1.26, gate at its default
    assert cell["containerdNetwork"] == gets.removeprefix("containerd: ").split()[0]


def _fixture_spec(name: str) -> dict[str, Any]:
    import yaml

    for document in yaml.safe_load_all((FIXTURES / name).read_text(encoding="utf-8")):
        if document and document.get("kind") in ("Pod", "DaemonSet", "Deployment"):
            spec = document["spec"]
            return dict(spec["template"]["spec"] if "template" in spec else spec)
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name",
    [
        "iis-deployment.yaml",  # a plain Deployment
        "cni-flannel-hostprocess.yaml",  # a HostProcess DaemonSet after two other objects
        "cni-wins-legacy.yaml",  # hostNetwork without HostProcess
        "hostprocess-refused.yaml",  # mixed HostProcess: refused on every kubelet
    ],
)
def test_pod_file_rows_match_the_rules(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run("--pod", str(FIXTURES / name), "-o", "json", capsys=capsys)
    assert status == 0, err
    rows = json.loads(out)["rows"]
    assert rows
    spec = _fixture_spec(name)
    for cell in rows[0]["cells"]:
        minor = int(cell["kubelet"].split(".")[1])
        expected = expected_cell(minor, GATES[cell["gates"]], spec)
        assert {k: cell.get(k) for k in expected} == expected, (cell["kubelet"], cell["gates"])


def test_pod_file_markdown_names_the_pod(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "p.yaml"
    manifest.write_text(
        "# a comment\nkind: Pod\nmetadata: {name: 'a|b', namespace: web}\n"
        "spec:\n  containers: [{name: c, image: i}]\n  hostNetwork: true\n",
        encoding="utf-8",
    )
    status, out, _ = run("--pod", str(manifest), capsys=capsys)
    assert status == 0
    # The row names the hostNetwork line (6), where check puts a finding about it, not
    # the object's first line (2).
    assert f"| Pod/web/a\\|b ({manifest}:6: hostNetwork: true) | " in out
    assert ("| sends NODE; containerd: pod network | sends no namespace_options; "
            "containerd: pod network |") in out
    status, out, _ = run_main(capsys, "check", str(manifest), "--assume-windows")
    assert f"{manifest}:6: " in out


def test_pod_file_row_without_host_network_names_the_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "p.yaml"
    manifest.write_text("---\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: []\n",
                        encoding="utf-8")
    status, out, _ = run("--pod", str(manifest), capsys=capsys)
    assert status == 0
    assert f"| Pod/a ({manifest}:2) | " in out


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"kind: Pod\nspec: {hostNetwork: 'true', containers: []}\n", "spec.hostNetwork"),
        (b"kind: Pod\nmetadata: {name: \xc3\x28}\n", "not valid UTF-8"),
        (b"kind: ConfigMap\ndata: {}\n", "no pod in"),
    ],
)
def test_bad_pod_file_is_one_line_and_status_2(
    tmp_path: Path, content: bytes, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    status, out, err = run("--pod", str(path), capsys=capsys)
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and needle in err, err
    assert "Traceback" not in err


def test_console_script_runs_matrix() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kubelet_winnet.cli", "matrix", "-o", "json"],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["rows"]) == 10


# --- matrix --pod: the Hyper-V note only where a HostProcess request is sent -----------

HOST_PROCESS_POD = WINDOWS_POD.replace("spec:\n", "spec:\n  hostNetwork: true\n"
                                       "  securityContext:\n    windowsOptions:\n"
                                       "      hostProcess: true\n")


@pytest.mark.parametrize(("manifests", "noted"), [
    ([WINDOWS_POD], False),  # no kubelet sends it host_process: the note cannot apply
    ([HOST_PROCESS_POD], True),
    ([WINDOWS_POD, HOST_PROCESS_POD], True),
])
def test_matrix_notes_hyperv_only_for_host_process_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, manifests: list[str], noted: bool
) -> None:
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(manifests), encoding="utf-8")
    status, out, _ = run_main(capsys, "matrix", "--pod", str(path))
    assert status == 0
    assert out.count("| Pod/web (") == 3 * len(manifests)  # one row per table
    assert ("HostProcess under Hyper-V isolation: the kubelet sends the same `host_process` "
            "request whatever the pod's RuntimeClass" in out) is noted


def test_json_cells_carry_the_hyperv_condition_the_markdown_notes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The markdown's note under a table with a HostProcess cell (hcsshim PR #2531: a
    # handler with SandboxIsolation = 1 on containerd 2.3.3+ gives no network) is, in
    # the JSON, the condition of each HostProcess cell; a cell without host_process has
    # no such condition (containerd reads host_process alone).
    assert main(["matrix", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    cells = [cell for row in rows for cell in row["cells"] if cell["outcome"] == "sent"]
    host_process = [cell for cell in cells if cell["hostProcess"]]
    assert host_process
    for cell in host_process:
        condition = cell["containerdNetworkCondition"]
        assert "Hyper-V isolated" in condition and "containerd 2.3.3 or later" in condition
    assert all("containerdNetworkCondition" not in c for c in cells if not c["hostProcess"])
