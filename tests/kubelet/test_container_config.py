"""container_config / create_container_request / PodRequests against
generateContainerConfig (kuberuntime_container.go). The parts in their own modules have
their own test files: test_kubelet_pods.py (environment), test_labels.py,
test_kuberuntime_container_windows.py. Expected values come from the kubelet's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.container_config import PodRequests
from tests.strategies import wrap


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1",
                         "labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"containers": containers, **spec}}


# --- identity, labels, annotations, log path ------------------------------------------


def test_metadata_image_labels_annotations_log_path() -> None:
    manifest = pod([{"name": "app", "image": "mcr.microsoft.com/x:1",
                     "command": ["cmd", "/c"], "args": ["echo", "$(GREETING)"],
                     "workingDir": "C:\\app", "stdin": True, "tty": True,
                     "env": [{"name": "GREETING", "value": "hi"}],
                     "ports": [{"containerPort": 80, "name": "http"}]}],
                   terminationGracePeriodSeconds=60)
    config = kw.container_config(manifest, "app", attempt=2, image_ref="sha256:abc",
                                 kubelet_version="1.33")
    assert config.metadata == api_pb2.ContainerMetadata(name="app", attempt=2)
    assert config.image.image == "sha256:abc"
    assert config.image.user_specified_image == "mcr.microsoft.com/x:1"
    assert list(config.command) == ["cmd", "/c"]
    assert list(config.args) == ["echo", "hi"]  # ExpandContainerCommandAndArgs
    assert config.working_dir == "C:\\app"
    assert (config.stdin, config.stdin_once, config.tty) == (True, False, True)
    assert dict(config.labels) == {  # newContainerLabels: no pod labels
        "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "shop",
        "io.kubernetes.pod.uid": "u-1", "io.kubernetes.container.name": "app",
    }
    annotations = dict(config.annotations)
    assert annotations["io.kubernetes.container.restartCount"] == "2"
    assert annotations["io.kubernetes.container.terminationMessagePath"] == "/dev/termination-log"
    assert annotations["io.kubernetes.container.terminationMessagePolicy"] == "File"
    assert annotations["io.kubernetes.pod.terminationGracePeriod"] == "60"
    assert json.loads(annotations["io.kubernetes.container.ports"]) == [
        {"name": "http", "containerPort": 80, "protocol": "TCP"}]
    assert annotations["io.kubernetes.container.ports"] == (
        '[{"name":"http","containerPort":80,"protocol":"TCP"}]')
    assert "note" not in annotations  # pod annotations are not copied
    assert config.log_path == "app\\2.log"
    old = kw.container_config(manifest, "app", kubelet_version="1.26")
    assert old.image.image == "mcr.microsoft.com/x:1" and old.image.user_specified_image == ""


def test_init_and_ephemeral_containers_are_found() -> None:
    manifest = pod([{"name": "main"}], initContainers=[{"name": "setup", "image": "i"}],
                   ephemeralContainers=[{"name": "debug", "image": "d"}])
    assert kw.container_config(manifest, "setup").metadata.name == "setup"
    assert kw.container_config(manifest, "debug").image.image == "d"
    with pytest.raises(kw.InvalidPodError, match="no container named"):
        kw.container_config(manifest, "nope")


# --- requests --------------------------------------------------------------------------


def test_create_container_request_carries_the_sandbox_config() -> None:
    manifest = pod([{"name": "c", "image": "i"}], hostNetwork=True)
    request = kw.create_container_request(manifest, "c", pod_sandbox_id="sb-1",
                                          attempt=1, sandbox_attempt=3)
    assert request.pod_sandbox_id == "sb-1"
    assert request.sandbox_config == kw.pod_sandbox_config(manifest, attempt=3)
    assert request.config == kw.container_config(manifest, "c", attempt=1)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"container_name": 3}, "container_name"),
        ({"image_ref": b"x"}, "image_ref"),
        ({"image_username": None}, "image_username"),
        ({"pod_ips": "10.0.0.1"}, "pod_ips"),
        ({"config_maps": [1]}, "config_maps"),
        ({"attempt": -1}, "attempt"),
        ({"node": "node"}, "node"),
    ],
)
def test_argument_types(kwargs: dict[str, Any], argument: str) -> None:
    call: dict[str, Any] = {"container_name": "c", **kwargs}
    name = call.pop("container_name")
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.container_config(pod([{"name": "c"}]), name, **call)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    ("container", "field"),
    [
        ({"name": "c", "image": 5}, "spec.containers[0].image"),
        ({"name": "c", "command": "ping"}, "spec.containers[0].command"),
        ({"name": "c", "args": [1]}, "spec.containers[0].args[0]"),
        ({"name": "c", "tty": "true"}, "spec.containers[0].tty"),
        ({"name": "c", "resources": {"limits": {"cpu": "lots"}}},
         "spec.containers[0].resources.limits.cpu"),
        ({"name": "c", "env": [{"name": 1}]}, "spec.containers[0].env[0].name"),
    ],
)
def test_typed_pod_errors(container: dict[str, Any], field: str) -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(pod([container]), "c")
    assert info.value.field == field


def test_lone_surrogates_are_typed_errors() -> None:
    manifest = pod([{"name": "c", "args": ["ok", "\udc80"]}])
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(manifest, "c")
    assert info.value.field == "spec.containers[0].args[1]"
    with pytest.raises(kw.InvalidArgumentError):
        kw.container_config(pod([{"name": "c", "envFrom": [{"configMapRef": {"name": "m"}}]}]),
                            "c", config_maps={"m": {"\ud800": "v"}})


# --- one pod, several containers -------------------------------------------------------


def test_termination_log_is_the_last_mount() -> None:
    """makeMounts appends the termination log last: ``<root>\\pods\\<uid>\\containers\\
    <name>\\<id>`` (kubelet_pods.go), after the volume mounts."""
    manifest = wrap("Deployment", pod(
        [{"name": "app", "image": "img:1", "command": ["run", "$(A)", "$$x"],
          "env": [{"name": "A", "value": "1"},
                  {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
          "volumeMounts": [{"name": "c", "mountPath": "C:\\c"}, {"name": "h", "mountPath": "/h"}],
          "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
        hostNetwork=True, volumes=[{"name": "c", "configMap": {"name": "c"}},
                                   {"name": "h", "hostPath": {"path": "C:\\host"}}]))
    config = kw.container_config(manifest, "app")
    assert list(config.command) == ["run", "1", "$x"]
    paths = [m.container_path for m in config.mounts]
    assert paths[:2] == ["C:\\c", "/h"]
    assert config.mounts[-1].host_path.endswith("\\containers\\app\\00000000")


def test_pod_requests_builds_each_container_as_alone() -> None:
    """PodRequests builds every container of a pod with one builder (its later
    containers located through the builder's index): each message is the one a
    builder of that container alone gives."""
    manifest = pod(
        [{"name": f"c{i}", "image": f"img:{i}", "env": [{"name": "A", "value": str(i)}],
          "securityContext": {"windowsOptions": {"runAsUserName": f"u{i}"}}}
         for i in range(4)],
        hostNetwork=True, initContainers=[{"name": "init", "image": "i"}],
        securityContext={"windowsOptions": {"gmsaCredentialSpec": "spec"}},
    )
    requests = PodRequests(manifest)
    for name in ["c2", "init", "c0", "c3", "c1", "c2"]:
        alone = kw.container_config(manifest, name, pod_ips=("10.0.0.5",))
        assert requests.container_config(name, pod_ips=("10.0.0.5",)) == alone
        assert alone.windows.security_context.credential_spec == "spec"


def test_non_root_error_quotes_the_pod_as_go_percent_q() -> None:
    """verifyRunAsNonRoot's "(pod: %q, ...)" of format.Pod, "<name>_<namespace>(<uid>)":
    Go's %q keeps ü and writes a tab as \\t."""
    manifest = {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop",
                                            "uid": "gr\u00fcn\t1"},
                "spec": {"containers": [{"name": "app", "image": "img", "securityContext": {
                    "runAsNonRoot": True,
                    "windowsOptions": {"runAsUserName": "ContainerAdministrator"}}}]}}
    with pytest.raises(kw.SandboxConfigError) as info:
        kw.container_config(manifest, "app")
    assert str(info.value).endswith('(pod: "web_shop(gr\u00fcn\\t1)", container: app)')
