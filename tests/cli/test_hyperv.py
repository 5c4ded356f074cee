"""HostProcess under Hyper-V isolation: ``check`` finds it, ``audit``
says the pod has no network instead of "applied", ``matrix`` notes it.

Facts, verified at the sources (rule page host-process-hyperv-no-network): hcsshim PR
#2531 (commit b07af140d02cab92528831e52aad12ee99078d20, tags v0.15.0-rc.2 on) runs a
HostProcess pod whose handler sets SandboxIsolation = 1 in a utility VM without network;
containerd's default config calls that handler runhcs-wcow-hypervisor and the process one
runhcs-wcow-process; containerd builds its shim from hcsshim v0.15.0-rc.3 from 2.3.3 and
2.4.0-beta.0 on, v0.15.0-rc.4 in 2.4.0 (release notes, PR #14169), v0.15.0-rc.1 in 2.3.0-2.3.2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main

RULE = "host-process-hyperv-no-network"


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def runtime_class(name: str, handler: str) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": handler}


def host_process(name: str, runtime_class: str | None, node: str | None = None,
                 ) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "windows"},
        "securityContext": {"windowsOptions": {"hostProcess": True}},
        "containers": [{"name": "agent", "image": "i"}],
    }
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system"}, "spec": spec}


def write(path: Path, *docs: Any) -> str:
    path.write_text(yaml.safe_dump_all(list(docs)), encoding="utf-8")
    return str(path)


def test_check_finds_host_process_under_a_hyperv_runtime_class(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(
        tmp_path / "m.yaml",
        runtime_class("isolated", "runhcs-wcow-hypervisor"),
        runtime_class("process", "runhcs-wcow-process"),
        host_process("hyperv", "isolated"), host_process("plain", None),
        host_process("process", "process"), host_process("custom", "gpu"),
        host_process("named", "runhcs-wcow-hypervisor"),  # class named after the handler
    )
    status, out, _ = command(capsys, "check", path, "-o", "json")
    assert status == 1
    found = {f["object"]["name"]: f for f in json.loads(out)["findings"] if f["rule"] == RULE}
    assert set(found) == {"hyperv", "custom", "named"}
    # check does not know the node's containerd release: the headline is conditional on it
    # (hcsshim PR #2531 ships with containerd 2.3.3 and later), as the detail is.
    assert found["hyperv"]["severity"] == "warning"
    assert found["hyperv"]["headline"] == (
        "HostProcess under Hyper-V isolation: no network on containerd 2.3.3 or later; drop "
        "runtimeClassName.")
    assert found["hyperv"]["field"] == "spec.runtimeClassName"
    assert "PR #2531" in found["hyperv"]["message"]
    # A class the input does not hold has a handler that is not known, whatever its name.
    for name in ("custom", "named"):
        assert found[name]["severity"] == "info"
        assert "if its handler is Hyper-V isolated" in found[name]["headline"]
        assert "a handler not in the input" in found[name]["message"]


def node(name: str, runtime: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows"}},
            "status": {"nodeInfo": {"kubeletVersion": "v1.33.1", "operatingSystem": "windows",
                                    "containerRuntimeVersion": runtime}}}


def test_audit_says_no_network_where_the_shim_has_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        runtime_class("isolated", "runhcs-wcow-hypervisor"),
        node("n233", "containerd://2.3.3"), node("n240", "containerd://2.4.0-beta.0"),
        node("n2400", "containerd://v2.4.0"),
        node("n232", "containerd://2.3.2"), node("n22", "containerd://2.2.7"),
        *(host_process(f"on-{n}", "isolated", n) for n in ("n233", "n240", "n2400", "n232", "n22")),
        host_process("plain", None, "n233"), host_process("elsewhere", "missing", "n233"),
    ]}
    status, out, _ = command(capsys, "audit", "-f", write(tmp_path / "dump.yaml", dump),
                             "-o", "json")
    assert status == 1
    effects = {p["name"]: p["hostNetworkEffect"] for p in json.loads(out)["pods"]}
    # Before hcsshim v0.15.0-rc.2 (containerd < 2.3.3) the shim runs HostProcess on the
    # host: the node's network, as `node` and the library say (contradiction B).
    assert effects == {"on-n233": "no-network", "on-n240": "no-network",
                       "on-n2400": "no-network",
                       "on-n232": "applied", "on-n22": "applied",
                       # the node's default handler: not known without its files
                       "plain": "unknown", "elsewhere": "unknown"}
    status, out, _ = command(capsys, "audit", "-f", write(tmp_path / "dump.yaml", dump))
    assert "3 with no network" in out
    assert "HOSTNETWORK NO-NETWORK: a HostProcess pod under a Hyper-V isolated handler" in out
    row = next(line for line in out.splitlines() if line.startswith("on-n233 "))
    assert "NO-NETWORK" in row.split()


def test_matrix_notes_it(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command(capsys, "matrix")
    assert status == 0
    assert "HostProcess under Hyper-V isolation" in out
    assert "hcsshim PR #2531" in out and "no network at all" in out


def test_audit_judges_each_pod_with_the_runtime_classes_read_before_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """What audit knows of a node is built once per runtime, but a RuntimeClass read after
    a pod still counts for the pods after it: the first pod's class is not in the input
    yet (its handler unknown), the second's is Hyper-V isolated (no network)."""
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        node("n233", "containerd://2.3.3"),
        host_process("first", "isolated", "n233"),
        runtime_class("isolated", "runhcs-wcow-hypervisor"),
        host_process("second", "isolated", "n233"),
    ]}
    _, out, _ = command(capsys, "audit", "-f", write(tmp_path / "dump.yaml", dump), "-o", "json")
    effects = {p["name"]: p["hostNetworkEffect"] for p in json.loads(out)["pods"]}
    assert effects == {"first": "unknown", "second": "no-network"}
