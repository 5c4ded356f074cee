"""kubelet_pods_windows_test.go's TestMakeMountsWindows through ``container_config``: each
volume mount of the table's container, with the table's stub volumes as ``volume_paths``."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from tests.upstream.kubelet_pods_windows import ROWS
from tests.upstream.rows import Row, cases


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMakeMountsWindows"))
def test_make_mounts_windows(row: Row, minor: int) -> None:
    given = row.given
    pod: dict[str, Any] = {
        "kind": "Pod", "metadata": {"name": "fakepodname", "namespace": "ns"},
        "spec": {"hostNetwork": True, "volumes": [{"name": given["name"], "emptyDir": {}}],
                 "containers": [{"name": "c", "volumeMounts": [
                     {"name": given["name"], "mountPath": given["mountPath"],
                      "readOnly": given["readOnly"]}]}]},
    }
    config = kw.container_config(pod, "c", pod_ips=("",), kubelet_version=f"1.{minor}",
                                 volume_paths={given["name"]: given["stubPath"]})
    mount = config.mounts[0]
    assert mount.container_path == row.want["containerPath"]
    assert mount.host_path == row.want["hostPath"]
    assert mount.readonly is row.want["readOnly"]
    assert mount.selinux_relabel is row.want["selinuxRelabel"]
    assert mount.propagation == api_pb2.PROPAGATION_PRIVATE
