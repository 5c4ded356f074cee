"""The container labels and annotations (_kubelet/labels.py) against labels.go
newContainerAnnotations and HashContainer (pkg/kubelet/container/helpers.go)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet as kw
from kubelet_winnet._kubelet import golang
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


# --- io.kubernetes.container.hashWithoutResources ------------------------------------------

HASH = "io.kubernetes.container.hash"
HASH_WITHOUT_RESOURCES = "io.kubernetes.container.hashWithoutResources"
# TestHashContainerWithoutResources (helpers_test.go, index 76302740, kubelet 1.31+): a
# container named foo with image bar hashes to 0x11a6d6d6 whatever its resources and
# resizePolicy.
_RESIZED = {"name": "foo", "image": "bar",
            "resources": {"limits": {"cpu": "200m", "memory": "200Mi"},
                          "requests": {"cpu": "100m", "memory": "100Mi"}},
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"},
                             {"resourceName": "memory", "restartPolicy": "NotRequired"}]}


@pytest.mark.parametrize(
    ("version", "gates", "sent"),
    [
        # kube_features.go: InPlacePodVerticalScaling alpha (off) 1.27-1.32, beta (on)
        # 1.33-1.34, GA locked on from 1.35. labels.go and labels_test.go f6b65043 (1.31
        # cycle) set the annotation, = HashContainer, while the gate is on; from 1.33 it
        # is gone with the gate on: kuberuntime_container.go fbba6b47 (1.33 cycle) reads
        # no HashWithoutResources, and labels_test.go 0411cc70 (1.38) expects none.
        ("1.31", None, False),
        ("1.32", None, False),
        ("1.31", "InPlacePodVerticalScaling=true", True),
        ("1.32", "AllAlpha=true", True),
        ("1.32", "InPlacePodVerticalScaling=true", True),
        ("1.33", None, False),
        ("1.33", "InPlacePodVerticalScaling=true", False),
        ("1.34", "InPlacePodVerticalScaling=false", False),
        ("1.35", None, False),
        ("1.37", None, False),
        ("1.38", None, False),
    ],
)
def test_hash_without_resources_follows_the_gate_and_release(
    version: str, gates: str | None, sent: bool
) -> None:
    annotations = kw.container_config(pod([_RESIZED]), "foo", kubelet_version=version,
                                      feature_gates=gates).annotations
    assert annotations[HASH] == "11a6d6d6"
    if sent:
        assert annotations[HASH_WITHOUT_RESOURCES] == "11a6d6d6"
    else:
        assert HASH_WITHOUT_RESOURCES not in annotations


def test_hash_without_resources_is_not_sent_before_name_and_image_hashing() -> None:
    """1.27-1.30 hash the JSON of the whole API-defaulted container: not reproduced, so
    neither hash is sent (docs/requests.md says what the caller gets)."""
    annotations = kw.container_config(pod([_RESIZED]), "foo", kubelet_version="1.30",
                                      feature_gates="InPlacePodVerticalScaling=true").annotations
    assert HASH not in annotations and HASH_WITHOUT_RESOURCES not in annotations


@pytest.mark.parametrize(
    ("version", "gates", "message"),
    [
        ("1.26", "InPlacePodVerticalScaling=true",
         "unrecognized feature gate: InPlacePodVerticalScaling"),
        ("1.35", "InPlacePodVerticalScaling=false",
         "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to "
         "true"),
    ],
)
def test_in_place_resize_gate_refusals_are_the_kubelets(
    version: str, gates: str, message: str
) -> None:
    """component-base featuregate Set: an unknown gate, and a locked GA gate set against
    its default (kube_features.go: the gate exists from 1.27, GA and locked from 1.35)."""
    with pytest.raises(kw.FeatureGateError) as caught:
        kw.kubelet_profile(version, gates)
    assert message in str(caught.value)


def test_container_hash_is_gos_recipe(go: Any) -> None:
    """The Go oracle's rebuild of the 1.31+ recipe (encoding/json of a sorted map, the
    byte-slice print, hash/fnv) agrees with the upstream rows and with container_hash."""
    rows = [("test_container", "foo/image:v1", "8e45cbd0"), ("foo", "bar", "11a6d6d6")]
    sent = [[base64.b64encode(text.encode()).decode() for text in row[:2]] for row in rows]
    assert go.ask("container_hash", sent) == [row[2] for row in rows]


@given(st.lists(st.tuples(st.text(max_size=40), st.text(max_size=60)), max_size=20))
@example([("<a&b>", "\u2028img\u2029"), ("é中😀", "reg.io/x:1@sha256:00"), ("", "")])
def test_container_hash_matches_go_for_any_name_and_image(
    go: Any, pairs: list[tuple[str, str]]
) -> None:
    """HTML escapes and U+2028/U+2029 in encoding/json, multi-byte UTF-8: byte for byte."""
    pairs = [(n, i) for n, i in pairs if golang.valid_utf8(n.encode("utf-8", "surrogatepass"))
             and golang.valid_utf8(i.encode("utf-8", "surrogatepass"))]
    sent = [[base64.b64encode(text.encode()).decode() for text in pair] for pair in pairs]
    assert [container_hash(n, i) for n, i in pairs] == go.ask("container_hash", sent)


def test_whole_container_hash_depends_on_api_server_defaults(go: Any) -> None:
    """Before 1.31 the value is the hash of json.Marshal of the whole v1.Container. The
    same container as written, with and without the resizePolicy an API server adds only
    while its own InPlacePodVerticalScaling gate is on (kubernetes#122255, #126328),
    hashes differently: the pod as the caller passes it does not decide the value."""
    base = b'{"name":"foo","image":"bar","resources":{},"terminationMessagePath":' \
           b'"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":' \
           b'"Always"}'
    with_policy = base.replace(
        b'"resources":{},', b'"resources":{},"resizePolicy":[{"resourceName":"cpu",'
        b'"restartPolicy":"NotRequired"},{"resourceName":"memory","restartPolicy":'
        b'"NotRequired"}],')
    one, other = go.ask("bytes_hash", [base64.b64encode(v).decode() for v in (base, with_policy)])
    assert one != other
