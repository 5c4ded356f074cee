"""container_config / create_container_request / PodRequests against
generateContainerConfig (kuberuntime_container.go). The parts in their own modules have
their own test files: test_kubelet_pods.py (environment), test_labels.py,
test_kuberuntime_container_windows.py. Expected values come from the kubelet's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf import json_format

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.container_config import PodRequests
from kubelet_winnet.testing.strategies import as_workload


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
    manifest = as_workload("Deployment", pod(
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


# --- stop_signal: the ContainerStopSignals gate (KEP-4960) -------------------------------
#
# generateContainerConfig sets ContainerConfig.stop_signal (field 18 of cri-api's api.proto)
# to getContainerConfigStopSignal's value (kubelet helpers.go, openshift/kubernetes
# 1139833e): nothing unless the kubelet's own ContainerStopSignals gate is on, else
# signalNameToRuntimeEnum[lifecycle.stopSignal], whose missing names give RUNTIME_DEFAULT
# (0). The gate: alpha, off, from 1.33 (kube_features.go). Enum numbers: api.proto's
# `enum Signal` (SIGKILL = 13, SIGTERM = 23, SIGRTMIN+1 spelt SIGRTMINPLUS1 = 36, ...).
STOP_ON = "ContainerStopSignals=true"


def stopping(signal: Any, os_name: str = "windows") -> dict[str, Any]:
    return pod([{"name": "c", "image": "i", "lifecycle": {"stopSignal": signal}}],
               os={"name": os_name})


@pytest.mark.parametrize(
    ("version", "gates", "sent"),
    [
        ("1.33", None, False),  # alpha, off by default
        ("1.37", None, False),
        ("1.33", STOP_ON, True),
        ("1.34", "AllAlpha=true", True),  # AllAlpha turns every alpha gate not set by name
        ("1.35", "AllAlpha=true,ContainerStopSignals=false", False),
        ("1.36", "AllBeta=true", False),  # an alpha gate: AllBeta leaves it off
        ("1.38", STOP_ON, True),
        ("1.32", "AllAlpha=true", False),  # no such gate before 1.33
    ],
)
def test_stop_signal_is_sent_only_while_the_kubelets_gate_is_on(
    version: str, gates: str | None, sent: bool
) -> None:
    config = kw.container_config(stopping("SIGKILL"), "c", kubelet_version=version,
                                 feature_gates=gates)
    assert config.stop_signal == (13 if sent else 0)


@pytest.mark.parametrize(
    ("name", "number"),
    [("SIGTERM", 23), ("SIGKILL", 13), ("SIGQUIT", 18), ("SIGUSR1", 29), ("SIGABRT", 1),
     ("SIGCLD", 5), ("SIGIOT", 12), ("SIGRTMIN", 35), ("SIGRTMIN+1", 36),
     ("SIGRTMIN+15", 50), ("SIGRTMAX-14", 51), ("SIGRTMAX-1", 64), ("SIGRTMAX", 65)],
)
def test_stop_signal_names_are_the_cri_enum(name: str, number: int) -> None:
    config = kw.container_config(stopping(name, "linux"), "c", kubelet_version="1.33",
                                 feature_gates=STOP_ON)
    assert config.stop_signal == number


def test_stop_signal_is_field_18_on_the_wire() -> None:
    """api.proto: `Signal stop_signal = 18;` a varint, tag (18 << 3) | 0 = 0x90 0x01."""
    config = kw.container_config(stopping("SIGTERM"), "c", kubelet_version="1.33",
                                 feature_gates=STOP_ON)
    assert b"\x90\x01\x17" in config.SerializeToString()
    assert json.loads(json_format.MessageToJson(config))["stopSignal"] == "SIGNAL_SIGTERM"


@pytest.mark.parametrize(("version", "name"), [
    ("1.33", "SIGTERM"), ("1.36", "SIGTERM"), ("1.36.9", "SIGTERM"),
    # cri-api 044b7de (first tag kubernetes-1.37.0-alpha.1, on no release branch):
    # "SIGTERM = 23" became "SIGNAL_SIGTERM = 23".
    ("1.37.0", "SIGNAL_SIGTERM"), ("1.38", "SIGNAL_SIGTERM"),
])
def test_stop_signal_json_uses_the_releases_enum_names(version: str, name: str) -> None:
    from kubelet_winnet._kubelet.messages import message_json

    config = kw.container_config(stopping("SIGTERM"), "c", kubelet_version=version,
                                 feature_gates=STOP_ON)
    assert config.stop_signal == 23  # the number on the wire is every release's
    assert message_json(config, kubelet=kw.parse_kubelet_version(version))["stopSignal"] == name


@pytest.mark.parametrize(
    "lifecycle",
    [None, {}, {"preStop": {"exec": {"command": ["stop"]}}}, {"stopSignal": None},
     {"stopSignal": ""}, {"stopSignal": "SIGFOO"}, {"stopSignal": "sigterm"},
     {"stopSignal": "SIGRTMINPLUS1"}, {"stopSignal": "RUNTIME_DEFAULT"}],
    ids=["no lifecycle", "empty lifecycle", "preStop only", "null", "empty name",
         "unknown name", "lower case", "enum spelling", "the default's enum name"],
)
def test_stop_signal_unset_or_unknown_leaves_the_image_and_runtime_to_choose(
    lifecycle: dict[str, Any] | None,
) -> None:
    """No name, or one signalNameToRuntimeEnum lacks (it is case-sensitive and keyed by
    the API's names): RUNTIME_DEFAULT, which proto3 does not send, so the runtime uses the
    image's STOPSIGNAL or its own default."""
    container: dict[str, Any] = {"name": "c", "image": "i"}
    if lifecycle is not None:
        container["lifecycle"] = lifecycle
    config = kw.container_config(pod([container]), "c", kubelet_version="1.33",
                                 feature_gates=STOP_ON)
    assert config.stop_signal == 0
    assert "stop_signal" not in [field.name for field, _ in config.ListFields()]


def test_stop_signal_of_a_windows_pod_is_passed_on_unchecked() -> None:
    """The API server allows only SIGTERM and SIGKILL on a pod with spec.os.name windows
    (KEP-4960, "Windows support"); the kubelet checks neither name nor OS, so a pod that
    did not pass that validation has any signal sent as written."""
    config = kw.container_config(stopping("SIGUSR1", "windows"), "c",
                                 kubelet_version="1.33", feature_gates=STOP_ON)
    assert config.stop_signal == 29


def test_stop_signal_of_init_and_ephemeral_containers() -> None:
    manifest = pod([{"name": "c", "image": "i"}],
                   initContainers=[{"name": "i", "image": "i",
                                    "lifecycle": {"stopSignal": "SIGKILL"}}],
                   ephemeralContainers=[{"name": "e", "image": "i",
                                         "lifecycle": {"stopSignal": "SIGTERM"}}])
    signals = [kw.container_config(manifest, name, kubelet_version="1.33",
                                   feature_gates=STOP_ON).stop_signal for name in "ice"]
    assert signals == [13, 0, 23]


def test_a_stop_signal_that_is_not_a_string_is_refused_only_when_read() -> None:
    """With the gate off the kubelet never reads the field, so neither does the library."""
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(stopping(15), "c", kubelet_version="1.33", feature_gates=STOP_ON)
    assert info.value.field == "spec.containers[0].lifecycle.stopSignal"
    assert "expected a string, got number 15" in str(info.value)
    assert kw.container_config(stopping(15), "c", kubelet_version="1.33").stop_signal == 0
