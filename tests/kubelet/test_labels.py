"""The container labels and annotations (_kubelet/labels.py) against labels.go
newContainerAnnotations and HashContainer (pkg/kubelet/container/helpers.go)."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from kubelet_winnet._kubelet.labels import container_hash


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1",
                         "labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"containers": containers, **spec}}


def test_upstream_hash_container_row() -> None:
    """TestHashContainer (pkg/kubelet/container/helpers_test.go): name test_container,
    image foo/image:v1 (args and ports do not count since 1.31) -> 0x8e45cbd0."""
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"
    manifest = pod([{"name": "test_container", "image": "foo/image:v1",
                     "args": ["/bin/sh", "-c", "echo abc"], "ports": [{"containerPort": 8001}]}])
    new = kw.container_config(manifest, "test_container", kubelet_version="1.31")
    assert new.annotations["io.kubernetes.container.hash"] == "8e45cbd0"
    old = kw.container_config(manifest, "test_container", kubelet_version="1.30")
    assert "io.kubernetes.container.hash" not in old.annotations


@pytest.mark.parametrize(
    ("pre_stop", "expected"),
    [
        ({"exec": {"command": ["/azurediskplugin.exe", "--pre-stop-hook=true"]}},
         '{"exec":{"command":["/azurediskplugin.exe","--pre-stop-hook=true"]}}'),
        ({"httpGet": {"port": 8080}}, '{"httpGet":{"path":"/","port":8080,"scheme":"HTTP"}}'),
        ({"httpGet": {"port": "http", "host": "h", "path": "/q?a=<b>",
                      "httpHeaders": [{"name": "X", "value": "1"}]}},
         '{"httpGet":{"path":"/q?a=\\u003cb\\u003e","port":"http","host":"h",'
         '"scheme":"HTTP","httpHeaders":[{"name":"X","value":"1"}]}}'),
        ({"tcpSocket": {"port": 22}}, '{"tcpSocket":{"port":22}}'),
        ({"sleep": {"seconds": 5}}, '{"sleep":{"seconds":5}}'),
    ],
)
def test_pre_stop_annotation(pre_stop: dict[str, Any], expected: str) -> None:
    """newContainerAnnotations: json.Marshal(container.Lifecycle.PreStop) - Go field
    order, omitempty, HTML characters escaped; httpGet defaults path "/", scheme HTTP."""
    manifest = pod([{"name": "c", "lifecycle": {"preStop": pre_stop}}])
    annotations = kw.container_config(manifest, "c").annotations
    assert annotations["io.kubernetes.container.preStopHandler"] == expected

def test_hash_cache_keeps_the_upstream_value_and_stays_bounded() -> None:
    """The (name, image) -> hash cache (docs/performance.md) gives the upstream row's
    value from a warm cache and after it was cleared by 300 other containers."""
    from kubelet_winnet._kubelet import labels as module

    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"  # cached
    for i in range(300):
        container_hash(f"c{i}", "foo/image:v1")
    assert len(module._HASHES) <= 256
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"
