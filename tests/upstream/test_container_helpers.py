"""helpers_test.go's rows through the requests that carry each helper's result:
``container_config`` (command and args, container lookup, hash) and
``pod_sandbox_config`` (privileged, port mappings, HostProcess)."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from tests.upstream.container_helpers import ROWS
from tests.upstream.rows import Row, cases


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestExpandCommandAndArgs"))
def test_expand_command_and_args(row: Row, minor: int) -> None:
    env = [{"name": k, "value": v} for k, v in row.given["envs"].items()]
    container = {"name": "c", **row.given["container"], "env": env}
    config = kw.container_config(_pod({"containers": [container]}), "c",
                                 kubelet_version=f"1.{minor}")
    assert list(config.command) == row.want["command"]
    assert list(config.args) == row.want["args"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestGetContainerSpec"))
def test_get_container_spec(row: Row, minor: int) -> None:
    config = kw.container_config(_pod(row.given["spec"]), row.given["name"],
                                 kubelet_version=f"1.{minor}")
    assert config.metadata.name == row.want["container"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestHasPrivilegedContainer"))
def test_has_privileged_container(row: Row, minor: int) -> None:
    container: dict[str, Any] = {"name": "c"}
    if row.given["securityContext"] is not None:
        container["securityContext"] = row.given["securityContext"]
    config = kw.pod_sandbox_config(_pod({row.given["kind"]: [container]}),
                                   kubelet_version=f"1.{minor}")
    assert config.linux.security_context.privileged is row.want["privileged"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMakePortMappings"))
def test_make_port_mappings(row: Row, minor: int) -> None:
    spec = {"containers": [{"name": "fooContainer", "ports": row.given["ports"]}]}
    config = kw.pod_sandbox_config(_pod(spec), kubelet_version=f"1.{minor}")
    want = [api_pb2.PortMapping(protocol=api_pb2.Protocol.Value(m["protocol"]),
                                container_port=m["container_port"], host_port=m["host_port"],
                                host_ip=m["host_ip"]) for m in row.want["port_mappings"]]
    assert list(config.port_mappings) == want


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestHashContainer"))
def test_hash_container(row: Row, minor: int) -> None:
    config = kw.container_config(_pod({"containers": [dict(row.given)]}), row.given["name"],
                                 kubelet_version=f"1.{minor}")
    assert config.annotations["io.kubernetes.container.hash"] == format(row.want["hash"], "x")


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestHashContainerWithoutResources"))
def test_hash_container_without_resources(row: Row, minor: int) -> None:
    config = kw.container_config(_pod({"containers": [dict(row.given)]}), row.given["name"],
                                 kubelet_version=f"1.{minor}",
                                 feature_gates="InPlacePodVerticalScaling=true")
    want = format(row.want["hash"], "x")
    assert config.annotations["io.kubernetes.container.hash"] == want
    # labels.go f6b65043 stores the same value; 1.33-cycle master (kuberuntime_container.go
    # fbba6b47) and the 1.38 labels_test.go (0411cc70) no longer have it.
    without = config.annotations.get("io.kubernetes.container.hashWithoutResources")
    assert without == (want if minor <= 32 else None)


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestHasWindowsHostProcessContainer"))
def test_has_windows_host_process_container(row: Row, minor: int) -> None:
    windows = kw.windows_sandbox_config(_pod(row.given["spec"]), kubelet_version=f"1.{minor}")
    assert windows.security_context.host_process is row.want["host_process"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestExpandVolumeMountsWithSubpath"))
def test_expand_volume_mounts_with_subpath(row: Row, minor: int) -> None:
    """ExpandContainerVolumeMounts through makeMounts: the expanded subPath joins the
    volume's host path (filepath.Join on Windows: backslashes); a name without a non-empty
    value is the kubelet's "missing value for" error."""
    given = row.given
    env = [{"name": k, "value": v} for k, v in given["envs"].items()]
    mount = {"name": "v", "mountPath": given["mountPath"] or "C:\\data",
             "subPathExpr": given["subPathExpr"]}
    spec = {"volumes": [{"name": "v", "emptyDir": {}}],
            "containers": [{"name": "c", "env": env, "volumeMounts": [mount]}]}
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": spec}
    base = "C:\\var\\lib\\kubelet\\pods\\u\\volumes\\kubernetes.io~empty-dir\\v"
    if not row.want["ok"]:
        with pytest.raises(kw.SandboxConfigError, match=r"^missing value for "):
            kw.container_config(pod, "c", kubelet_version=f"1.{minor}")
        return
    config = kw.container_config(pod, "c", kubelet_version=f"1.{minor}")
    sub_path = row.want["subPath"]
    expected = base + ("\\" + sub_path.replace("/", "\\") if sub_path else "")
    assert config.mounts[0].host_path == expected


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestHasWindowsHostProcessContainer"))
def test_host_process_container_decides_the_hosts_mount(row: Row, minor: int) -> None:
    """shouldMountHostsFile on Windows: pod IPs known and not HasWindowsHostProcessContainer."""
    config = kw.container_config(_pod(row.given["spec"]), _first(row.given["spec"]),
                                 pod_ips=("10.244.0.9",), kubelet_version=f"1.{minor}")
    paths = [mount.container_path for mount in config.mounts]
    assert ("C:\\Windows\\System32\\drivers\\etc\\hosts" in paths) is not row.want["host_process"]


def _first(spec: dict[str, Any]) -> str:
    return str(spec["containers"][0]["name"])
