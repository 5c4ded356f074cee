"""``run`` and ``audit`` as a new user meets them: why the exit status is 1 is
on stderr, an absent runtime or kubeconfig is one line and status 2, and every mark of the
audit table is explained. Each test runs the command and checks stdout, stderr and the
exit status; expected values come from the input objects and the kubelet rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main
from tests.strategies import require

MIXED = {  # kubelet: "pod must not contain both HostProcess and non-HostProcess containers"
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mixed"},
    "spec": {"os": {"name": "windows"}, "hostNetwork": True, "containers": [
        {"name": "a", "image": "i", "securityContext": {"windowsOptions": {"hostProcess": True}}},
        {"name": "b", "image": "i"},
    ]},
}


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def write(path: Path, *docs: Any) -> str:
    path.write_text(yaml.safe_dump_all(list(docs)), encoding="utf-8")
    return str(path)


def test_dry_run_says_on_stderr_why_it_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "mixed.yaml", MIXED)
    status, out, err = command(capsys, "run", "--dry-run", path)
    assert status == 1
    (record,) = json.loads(out)
    assert record["error"] == ("Failed to create pod sandbox: pod must not contain both "
                               "HostProcess and non-HostProcess containers")
    assert err.splitlines() == [
        f"kubelet-winnet: {path}:1: Pod/mixed: the kubelet refuses it: {record['error']}"
    ]


def test_run_without_a_runtime_is_one_error_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require("grpc", "test")
    plain = {"apiVersion": "v1", "kind": "Pod",
             "spec": {"os": {"name": "windows"}, "containers": [{"name": "c", "image": "i"}]}}
    path = write(tmp_path / "pods.yaml", *({**plain, "metadata": {"name": f"p{n}"}}
                                           for n in range(3)))
    socket = tmp_path / "absent.sock"
    status, out, err = command(capsys, "run", "--runtime-endpoint", f"unix://{socket}", path)
    assert status == 2
    assert "error" not in out  # the connection error is not repeated per pod on stdout
    (line,) = err.splitlines()
    assert line.startswith(f"kubelet-winnet: error: cannot reach the runtime at unix://{socket}: ")
    assert line.endswith("; 3 pods not run")


def _node(name: str, kubelet: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows"}},
            "status": {"nodeInfo": {"kubeletVersion": kubelet, "operatingSystem": "windows",
                                    "containerRuntimeVersion": "containerd://1.7.20"}}}


def _pod(name: str, node: str, phase: str, annotations: dict[str, str] | None = None,
         ) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node, "hostNetwork": True, "os": {"name": "windows"},
                     "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": phase}}


def test_audit_table_marks_are_all_explained(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        _node("win", "v1.31.2"), _node("old", "v1.25.16"),
        _pod("done", "win", "Succeeded"), _pod("crashed", "win", "Failed"),
        _pod("silenced", "win", "Running",
             {"ignore-check.kubelet-winnet.io/host-network-ignored": "known"}),
        _pod("ancient", "old", "Running"),
    ]}
    path = write(tmp_path / "dump.yaml", dump)
    status, out, _ = command(capsys, "audit", "-f", path)
    assert status == 1  # ancient's warning
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.split() and line.split()[0] in ("done", "crashed", "silenced", "ancient")}
    assert set(rows) == {"silenced", "ancient"}  # finished pods have no sandbox to judge
    assert "2 finished (Succeeded or Failed) pods" in out
    assert rows["silenced"][-1] == "host-network-ignored(ignored)"
    assert "FINDINGS (ignored): turned off for the object by an " \
        "ignore-check.kubelet-winnet.io annotation" in out
    assert rows["ancient"][-2] == "?"
    assert "HOSTNETWORK ?: the node's kubelet is a release the library does not model" in out
    (note,) = [line for line in out.splitlines() if line.strip().startswith("note: ancient")]
    assert note.strip() == ('note: ancient: kubelet version "v1.25.16": supported kubelet '
                            "versions are 1.26 to 1.38: not modelled, findings judged as "
                            "kubelet 1.32")


def test_audit_with_a_missing_kubeconfig_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require("kubernetes")
    missing = tmp_path / "nonexistent"
    status, out, err = command(capsys, "audit", "--kubeconfig", str(missing))
    assert status == 2
    assert err.splitlines() == [
        f"kubelet-winnet: error: the kubeconfig {missing} does not exist (or read a dump "
        "with -f)"
    ]
    assert out == ""  # nothing was read: no table of zeros under the error
