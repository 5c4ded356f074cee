"""``FakeRuntime`` against the requests crictl sends and the checks its client makes of
the answers.

crictl is not installed on this machine or by ``.ci/install-system-packages`` (no
package of it in the registries the project uses), so its calls are rebuilt here from
its source, request by request: cri-tools ``cmd/crictl/*.go`` (commit ba03eabc,
v1.36.0-196) says which request each subcommand builds, and the CRI client it links,
kubernetes ``staging/src/k8s.io/cri-client/pkg/remote_runtime.go`` and
``remote_image.go``, puts it on the wire and then checks the response
(``verifySandboxStatus``, ``verifyContainerStatus`` in ``utils.go``; "not all fields
are set in VersionResponse"; "Id or size of image %q is not set"; "PodSandboxId is not
set"; "ContainerId is not set"; "imageRef of image %q is not set"). The session below
is the one a developer types against a runtime: ``crictl version``, ``info``,
``pull``, ``runp``, ``create``, ``start``, ``ps``, ``pods``, ``inspectp``,
``inspect``, ``images``, ``inspecti``, ``stop``, ``stopp``, ``rmp``. Each goes through
a raw gRPC channel as bytes, the way crictl's Go client sends them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.testing import FakeRuntime

IMAGE = "mcr.microsoft.com/windows/nanoserver:ltsc2022"


def _pod_config() -> api_pb2.PodSandboxConfig:
    """A ``crictl runp`` pod config as its JSON files write it (metadata, a log
    directory, labels), for Windows."""
    config = api_pb2.PodSandboxConfig(log_directory="C:\\logs\\web")
    config.metadata.name, config.metadata.namespace = "web", "default"
    config.metadata.uid, config.metadata.attempt = "hdishd83djaidwnduwk28bcsb", 1
    config.labels["app"] = "web"
    config.windows.security_context.run_as_username = "ContainerUser"
    return config


def _container_config() -> api_pb2.ContainerConfig:
    """A ``crictl create`` container config: crictl sets ``user_specified_image`` to the
    image when the file leaves it empty (container.go ``CreateContainer``)."""
    config = api_pb2.ContainerConfig(command=["cmd", "/c", "ping -t localhost"])
    config.metadata.name = "ping"
    config.image.image = IMAGE
    config.image.user_specified_image = IMAGE
    config.labels["app"] = "web"
    return config


# --- what crictl's client refuses in an answer (cri-client, transcribed) ------------------


def _client_refusal(method: str, reply: Any) -> str | None:
    if method == "Version" and not (reply.version and reply.runtime_name
                                    and reply.runtime_api_version and reply.runtime_version):
        return "not all fields are set in VersionResponse"
    if method == "RunPodSandbox" and not reply.pod_sandbox_id:
        return "PodSandboxId is not set"
    if method == "CreateContainer" and not reply.container_id:
        return "ContainerId is not set"
    if method == "PullImage" and not reply.image_ref:
        return "imageRef of image is not set"
    if method == "ImageStatus" and reply.HasField("image") and not (
            reply.image.id and reply.image.size):
        return "Id or size of image is not set"
    if method == "PodSandboxStatus" and reply.HasField("status"):
        status = reply.status
        if not status.id:
            return "status.Id is not set"
        if not status.HasField("metadata"):
            return "status.Metadata is not set"
        if not (status.metadata.name and status.metadata.namespace and status.metadata.uid):
            return "metadata.Name, metadata.Namespace or metadata.Uid is not in metadata"
        if not status.created_at:
            return "status.CreatedAt is not set"
    if method == "ContainerStatus" and reply.HasField("status"):
        status = reply.status
        if not status.id:
            return "status.Id is not set"
        if not status.HasField("metadata"):
            return "status.Metadata is not set"
        if not status.metadata.name:
            return "metadata.Name is not in metadata"
        if not status.created_at:
            return "status.CreatedAt is not set"
        if not status.image.image:
            return "status.Image is not set"
        if not status.image_ref:
            return "status.ImageRef is not set"
    return None


class Crictl:
    """crictl's two CRI clients over one raw channel: each call is the request's bytes
    on ``/runtime.v1.<Service>/<Method>``, its answer parsed and checked as the Go client
    checks it."""

    def __init__(self, endpoint: str) -> None:
        self.channel = grpc.insecure_channel(endpoint)

    def call(self, service: str, method: str, request: Message) -> Any:
        reply_type = getattr(api_pb2, f"{method}Response")
        stub: Callable[..., bytes] = self.channel.unary_unary(
            f"/runtime.v1.{service}/{method}")
        reply = reply_type.FromString(stub(request.SerializeToString(), timeout=10))
        refusal = _client_refusal(method, reply)
        assert refusal is None, f"crictl's client refuses the {method} answer: {refusal}"
        return reply

    def connect(self) -> None:
        # NewRemoteRuntimeService / NewRemoteImageService: validateServiceConnection.
        self.call("RuntimeService", "Version", api_pb2.VersionRequest())
        self.call("ImageService", "ImageFsInfo", api_pb2.ImageFsInfoRequest())


@pytest.fixture
def crictl(fake_cri_runtime: FakeRuntime) -> Any:
    client = Crictl(fake_cri_runtime.endpoint)
    client.connect()
    yield client
    client.channel.close()


def test_a_crictl_session_is_served_and_recorded_as_sent(
    fake_cri_runtime: FakeRuntime, crictl: Crictl
) -> None:
    run, image = "RuntimeService", "ImageService"
    version = crictl.call(run, "Version", api_pb2.VersionRequest(version="v1"))  # version.go
    assert version.runtime_api_version == "v1"
    info = crictl.call(run, "Status", api_pb2.StatusRequest(verbose=True))  # info.go
    assert {c.type for c in info.status.conditions} == {"RuntimeReady", "NetworkReady"}
    # image.go PullImageWithSandbox: the spec with the annotations given, no auth.
    pulled = crictl.call(image, "PullImage", api_pb2.PullImageRequest(
        image=api_pb2.ImageSpec(image=IMAGE)))
    # sandbox.go RunPodSandbox: the config as read, the --runtime handler (default "").
    sandbox = crictl.call(run, "RunPodSandbox", api_pb2.RunPodSandboxRequest(
        config=_pod_config())).pod_sandbox_id
    # container.go CreateContainer: the sandbox id, the config, the pod config.
    container = crictl.call(run, "CreateContainer", api_pb2.CreateContainerRequest(
        pod_sandbox_id=sandbox, config=_container_config(),
        sandbox_config=_pod_config())).container_id
    crictl.call(run, "StartContainer", api_pb2.StartContainerRequest(container_id=container))
    # container.go ListContainers: without --all, a filter on CONTAINER_RUNNING.
    running = crictl.call(run, "ListContainers", api_pb2.ListContainersRequest(
        filter=api_pb2.ContainerFilter(state=api_pb2.ContainerStateValue(
            state=api_pb2.CONTAINER_RUNNING))))
    assert [(c.id, c.pod_sandbox_id, c.metadata.name, c.image_ref)
            for c in running.containers] == [(container, sandbox, "ping", pulled.image_ref)]
    # sandbox.go ListPodSandboxes: always a filter, empty without flags.
    pods = crictl.call(run, "ListPodSandbox", api_pb2.ListPodSandboxRequest(
        filter=api_pb2.PodSandboxFilter()))
    assert [(p.id, p.metadata.uid) for p in pods.items] == [
        (sandbox, "hdishd83djaidwnduwk28bcsb")]
    # inspectp / inspect: verbose unless --quiet.
    status = crictl.call(run, "PodSandboxStatus", api_pb2.PodSandboxStatusRequest(
        pod_sandbox_id=sandbox, verbose=True))
    assert status.status.state == api_pb2.SANDBOX_READY and "info" in status.info
    inspected = crictl.call(run, "ContainerStatus", api_pb2.ContainerStatusRequest(
        container_id=container, verbose=True))
    assert inspected.status.state == api_pb2.CONTAINER_RUNNING
    # image.go ListImages: a filter holding an image spec with the name given ("" = all).
    images = crictl.call(image, "ListImages", api_pb2.ListImagesRequest(
        filter=api_pb2.ImageFilter(image=api_pb2.ImageSpec(image=""))))
    assert [(i.id, list(i.repo_tags)) for i in images.images] == [(pulled.image_ref, [IMAGE])]
    found = crictl.call(image, "ImageStatus", api_pb2.ImageStatusRequest(
        image=api_pb2.ImageSpec(image=IMAGE), verbose=True))
    assert found.image.id == pulled.image_ref
    # stop (--timeout 0 by default), stopp, rmp.
    crictl.call(run, "StopContainer", api_pb2.StopContainerRequest(container_id=container))
    crictl.call(run, "StopPodSandbox", api_pb2.StopPodSandboxRequest(pod_sandbox_id=sandbox))
    crictl.call(run, "RemovePodSandbox", api_pb2.RemovePodSandboxRequest(
        pod_sandbox_id=sandbox))
    assert crictl.call(run, "ListPodSandbox", api_pb2.ListPodSandboxRequest(
        filter=api_pb2.PodSandboxFilter())).items == []

    fake_cri_runtime.assert_calls([
        "Version", "ImageFsInfo", "Version", "Status", "PullImage", "RunPodSandbox",
        "CreateContainer", "StartContainer", "ListContainers", "ListPodSandbox",
        "PodSandboxStatus", "ContainerStatus", "ListImages", "ImageStatus",
        "StopContainer", "StopPodSandbox", "RemovePodSandbox", "ListPodSandbox",
    ])
    [create] = fake_cri_runtime.requests("CreateContainer")
    assert create.config.image.user_specified_image == IMAGE
    assert create.sandbox_config == _pod_config()


@pytest.mark.parametrize(("state", "listed"), [
    (api_pb2.CONTAINER_CREATED, ["created"]),
    (api_pb2.CONTAINER_RUNNING, ["running"]),
    (api_pb2.CONTAINER_EXITED, []),
])
def test_crictl_ps_state_filters(
    crictl: Crictl, state: api_pb2.ContainerState.ValueType, listed: list[str]
) -> None:
    """``crictl ps --state created|running|exited`` lists only containers in that state
    (container.go: the state goes into ``ContainerFilter.state``)."""
    run = "RuntimeService"
    sandbox = crictl.call(run, "RunPodSandbox", api_pb2.RunPodSandboxRequest(
        config=_pod_config())).pod_sandbox_id
    ids = {}
    for name in ("created", "running"):
        config = _container_config()
        config.metadata.name = name
        ids[name] = crictl.call(run, "CreateContainer", api_pb2.CreateContainerRequest(
            pod_sandbox_id=sandbox, config=config)).container_id
    crictl.call(run, "StartContainer", api_pb2.StartContainerRequest(
        container_id=ids["running"]))
    reply = crictl.call(run, "ListContainers", api_pb2.ListContainersRequest(
        filter=api_pb2.ContainerFilter(state=api_pb2.ContainerStateValue(state=state))))
    assert [c.metadata.name for c in reply.containers] == listed
    everything = crictl.call(run, "ListContainers", api_pb2.ListContainersRequest(
        filter=api_pb2.ContainerFilter(pod_sandbox_id=sandbox)))  # crictl ps -a -p POD
    assert sorted(c.metadata.name for c in everything.containers) == ["created", "running"]


def test_crictl_pull_without_an_image_name_is_invalid_argument(crictl: Crictl) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        crictl.call("ImageService", "PullImage", api_pb2.PullImageRequest())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == "image.image: must not be empty"


def test_an_absent_image_is_no_error_for_crictl_inspecti(crictl: Crictl) -> None:
    """A runtime answers ImageStatus of an image it lacks with no image, not an error
    (the kubelet's image manager then pulls it)."""
    reply = crictl.call("ImageService", "ImageStatus", api_pb2.ImageStatusRequest(
        image=api_pb2.ImageSpec(image="absent:1"), verbose=True))
    assert not reply.HasField("image")
