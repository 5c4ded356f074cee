"""security_context_windows_test.go's TestVerifyRunAsNonRoot through ``container_config``
(``generateContainerConfig`` calls ``verifyRunAsNonRoot`` after building the environment),
at 1.26-1.38, and regression tests for where the library used to return a
ContainerConfig although the kubelet refuses."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.rows import Row, cases
from tests.upstream.security_context_windows import ROWS, TEXT_IMAGE_USER, TEXT_RUN_AS_USER_NAME


def _pod(sc: dict[str, Any] | None, pod_sc: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "foo", "image": "windows", "command": ["testCommand"],
                                 "workingDir": "testWorkingDir"}
    if sc is not None:
        container["securityContext"] = sc
    spec: dict[str, Any] = {"containers": [container]}
    if pod_sc is not None:
        spec["securityContext"] = pod_sc
    return {"kind": "Pod", "metadata": {"uid": "12345678", "name": "bar", "namespace": "new"},
            "spec": spec}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestVerifyRunAsNonRoot"))
def test_verify_run_as_non_root(row: Row, minor: int) -> None:
    manifest = _pod(row.given["sc"])
    call = {"image_username": row.given["username"], "kubelet_version": f"1.{minor}"}
    if not row.want["fail"]:
        assert kw.container_config(manifest, "foo", **call).metadata.name == "foo"
        return
    with pytest.raises(kw.SandboxConfigError) as caught:
        kw.container_config(manifest, "foo", **call)
    assert str(caught.value) == row.want["error"]


# --- where the library used to return a ContainerConfig the kubelet refuses -------------


def test_pod_level_run_as_non_root_refuses_root_image_user() -> None:
    """DetermineEffectiveSecurityContext: the pod's runAsNonRoot applies to a container
    that does not set it."""
    with pytest.raises(kw.SandboxConfigError) as caught:
        kw.container_config(_pod(None, {"runAsNonRoot": True}), "foo",
                            image_username="containeradministrator")
    assert str(caught.value) == TEXT_IMAGE_USER.format(user="containeradministrator")


def test_pod_level_user_name_with_container_non_root() -> None:
    """The effective runAsUserName comes from the pod when the container sets only
    runAsNonRoot; it takes precedence over the image's (non-root) user."""
    with pytest.raises(kw.SandboxConfigError) as caught:
        kw.create_container_request(
            _pod({"runAsNonRoot": True},
                 {"windowsOptions": {"runAsUserName": "ContainerAdministrator"}}),
            "foo", pod_sandbox_id="s", image_username="ContainerUser")
    assert str(caught.value) == TEXT_RUN_AS_USER_NAME.format(user="ContainerAdministrator")


def test_container_run_as_non_root_false_overrides_pod_true() -> None:
    config = kw.container_config(_pod({"runAsNonRoot": False}, {"runAsNonRoot": True}), "foo",
                                 image_username="ContainerAdministrator")
    assert config.windows.security_context.run_as_username == "ContainerAdministrator"


def test_environment_errors_come_first() -> None:
    """generateContainerConfig builds the environment (GenerateRunContainerOptions)
    before it calls verifyRunAsNonRoot, so an env error is the one reported."""
    manifest = _pod({"runAsNonRoot": True})
    manifest["spec"]["containers"][0]["env"] = [
        {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "missing", "key": "k"}}}]
    with pytest.raises(kw.SandboxConfigError, match='configmap "missing" not found'):
        kw.container_config(manifest, "foo", image_username="ContainerAdministrator",
                            config_maps={})


def test_mount_errors_come_before_the_non_root_check() -> None:
    """GenerateRunContainerOptions builds the environment, then makeMounts; only then
    does generateContainerConfig call verifyRunAsNonRoot, so a mount's error is the one
    reported (makeMounts: "cannot find volume %q to mount into container %q")."""
    manifest = _pod({"runAsNonRoot": True})
    manifest["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "C:\\data"}]
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.container_config(manifest, "foo", image_username="ContainerAdministrator")
    assert str(info.value) == 'cannot find volume "data" to mount into container "foo"'
