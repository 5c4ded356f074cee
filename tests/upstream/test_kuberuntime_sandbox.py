"""kuberuntime_sandbox_test.go's rows through ``pod_sandbox_config``,
``run_pod_sandbox_request`` and ``windows_sandbox_config``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from tests.upstream.kuberuntime_sandbox import ROWS
from tests.upstream.rows import Row, cases


def _pod(meta: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": meta, "spec": spec}


def _test_pod(row: Row) -> dict[str, Any]:
    pod = row.given.get("pod") or {
        "uid": "12345678", "name": "bar", "namespace": "new",
        "containers": [{"name": "foo", "image": "busybox", "ports": [{"hostPort": 8080}]}]}
    meta = {key: pod[key] for key in ("uid", "name", "namespace")}
    return _pod(meta, {"containers": [dict(c) for c in pod["containers"]]})


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestGeneratePodSandboxConfig"))
def test_generate_pod_sandbox_config(row: Row, minor: int) -> None:
    config = kw.pod_sandbox_config(_test_pod(row), attempt=row.given["attempt"],
                                   kubelet_version=f"1.{minor}")
    want = row.want
    assert dict(config.labels) == want["labels"]
    assert config.metadata == api_pb2.PodSandboxMetadata(**want["metadata"])
    assert list(config.port_mappings) == [api_pb2.PortMapping(**m)
                                          for m in want["port_mappings"]]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestGeneratePodSandboxLinuxConfigSeccomp"))
def test_generate_pod_sandbox_linux_config_seccomp(row: Row, minor: int) -> None:
    manifest = _test_pod(row)
    if row.given["pod_seccomp"] is not None:
        manifest["spec"]["securityContext"] = {"seccompProfile": row.given["pod_seccomp"]}
    if row.given["container_seccomp"] is not None:
        manifest["spec"]["containers"][0]["securityContext"] = {
            "seccompProfile": row.given["container_seccomp"]}
    context = kw.pod_sandbox_config(manifest, kubelet_version=f"1.{minor}").linux.security_context
    assert context.HasField("seccomp")
    assert context.seccomp.profile_type == api_pb2.SecurityProfile.ProfileType.Value(
        row.want["seccomp"])


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestCreatePodSandbox_RuntimeClass"))
def test_create_pod_sandbox_runtime_class(row: Row, minor: int) -> None:
    manifest = _test_pod(row)
    if row.given["runtimeClassName"] is not None:
        manifest["spec"]["runtimeClassName"] = row.given["runtimeClassName"]
    node = kw.NodeContext(runtime_handlers={"sandbox": "kata-containers"})
    if "error" in row.want:
        with pytest.raises(kw.SandboxConfigError) as caught:
            kw.run_pod_sandbox_request(manifest, node=node, kubelet_version=f"1.{minor}")
        assert str(caught.value) == row.want["error"]
        return
    request = kw.run_pod_sandbox_request(manifest, node=node, kubelet_version=f"1.{minor}")
    assert request.runtime_handler == row.want["handler"]


def _windows(row: Row, minor: int) -> api_pb2.WindowsPodSandboxConfig:
    return kw.windows_sandbox_config(
        _pod({"name": "p"}, row.given["spec"]), kubelet_version=f"1.{minor}",
        feature_gates={"WindowsHostNetwork": row.given["WindowsHostNetwork"]})


def _expected(want: Mapping[str, Any]) -> api_pb2.WindowsPodSandboxConfig:
    context = dict(want["context"])
    options = context.pop("namespace_options", None)
    message = api_pb2.WindowsPodSandboxConfig(
        security_context=api_pb2.WindowsSandboxSecurityContext(**context))
    if options is not None:
        message.security_context.namespace_options.CopyFrom(api_pb2.WindowsNamespaceOption(
            network=api_pb2.NamespaceMode.Value(options["network"])))
    return message


@pytest.mark.parametrize(("row", "minor"),
                         cases(ROWS, "TestGeneratePodSandboxWindowsConfig_HostProcess")
                         + cases(ROWS, "TestGeneratePodSandboxWindowsConfig_HostNetwork"))
def test_generate_pod_sandbox_windows_config(row: Row, minor: int) -> None:
    if "error" in row.want:
        with pytest.raises(kw.SandboxConfigError) as caught:
            _windows(row, minor)
        assert str(caught.value) == row.want["error"]
        return
    got = _windows(row, minor)
    assert got == _expected(row.want)
    assert got.HasField("security_context")
