"""kubelet_pods_test.go's TestMakeEnvironmentVariables through ``container_config``'s
``envs``, service links included (the library once sent no service-link variables)."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.kubelet_pods_env import HOST_IPS, ROWS, SERVICES
from tests.upstream.rows import Row, cases


def _pod(given: dict[str, Any] | Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "env": given["env"], "envFrom": given["envFrom"]}
    return {"kind": "Pod",
            "metadata": {"name": "dapi-test-pod-name", "namespace": given["namespace"]},
            "spec": {"nodeName": "node-name", "serviceAccountName": "special",
                     "enableServiceLinks": given["enableServiceLinks"],
                     "containers": [container]}}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMakeEnvironmentVariables"))
def test_make_environment_variables(row: Row, minor: int) -> None:
    given = row.given
    call: dict[str, Any] = {
        "node": kw.NodeContext(node_ips=HOST_IPS), "pod_ips": tuple(given["podIPs"]),
        "services": SERVICES if given["lister"] else None, "config_maps": given["configMaps"],
        "secrets": given["secrets"], "kubelet_version": f"1.{minor}"}
    if row.want.get("error"):
        with pytest.raises(kw.SandboxConfigError):
            kw.container_config(_pod(given), "c", **call)
        return
    config = kw.container_config(_pod(given), "c", **call)
    got = {env.key: env.value.decode() for env in config.envs}
    assert len(got) == len(config.envs)  # each name once
    assert got == row.want  # upstream sorts both sides by name before comparing


# --- regression test (found while transcribing the downward-api rows) -------------------


@pytest.mark.parametrize(("minor", "want"), [(26, None), (27, None), (28, ""),
                                             (29, "127.0.0.1,::1"), (38, "127.0.0.1,::1")])
def test_status_host_ips_per_release(minor: int, want: str | None) -> None:
    """status.hostIPs: ConvertDownwardAPIFieldLabel rejects it before 1.28 (KEP-2681);
    podFieldSelectorRuntimeValue answers "" while PodHostIPs is off (1.28's default)."""
    pod = {"kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "env": [
               {"name": "H", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}}]}]}}
    call: dict[str, Any] = {"node": kw.NodeContext(node_ips=HOST_IPS),
                            "kubelet_version": f"1.{minor}"}
    if want is None:
        with pytest.raises(kw.SandboxConfigError) as caught:
            kw.container_config(pod, "c", **call)
        assert str(caught.value) == "field label not supported: status.hostIPs"
        return
    config = kw.container_config(pod, "c", **call)
    assert {e.key: e.value.decode() for e in config.envs} == {"H": want}
