"""util_test.go's TestNamespacesForPod through ``pod_sandbox_config`` (the sandbox's
``linux.security_context.namespace_options``), at every minor each version covers."""

from __future__ import annotations

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from tests.upstream.kuberuntime_util import ROWS
from tests.upstream.rows import Row, cases


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestNamespacesForPod"))
def test_namespaces_for_pod(row: Row, minor: int) -> None:
    # &v1.Pod{...} with only the spec the row sets; the name is what a request needs and
    # NamespacesForPod does not read.
    manifest = {"kind": "Pod", "metadata": {"name": "p"}, "spec": dict(row.given["spec"])}
    config = kw.pod_sandbox_config(manifest, kubelet_version=f"1.{minor}")
    options = config.linux.security_context.namespace_options
    want = row.want
    assert options.ipc == api_pb2.NamespaceMode.Value(want["ipc"])
    assert options.network == api_pb2.NamespaceMode.Value(want["network"])
    assert options.pid == api_pb2.NamespaceMode.Value(want["pid"])
    assert not options.HasField("userns_options")
