"""``kubelet_winnet.cri.RuntimeClient`` against a real gRPC server in this process, and the
``runtime.v1`` messages of its calls.

The server is the shipped :class:`kubelet_winnet.testing.FakeRuntime` (grpcio's own
server on a unix socket): it records exactly the bytes the client put on the wire and
answers with bytes (or a status) the test chooses, including truncated and unknown-field
replies. Field tables are transcribed
from upstream cri-api (kubernetes/kubernetes
staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto, the commit named in our
api.proto), never from our own output. The same client against a real containerd is
tests/cri/test_containerd.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from hypothesis import given, settings
from hypothesis import strategies as st

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cri import KUBELET_CRI_VERSION, RuntimeClient
from kubelet_winnet.errors import CriEndpointError, CriError, InvalidArgumentError, WinnetError
from kubelet_winnet.testing import FakeRuntime
from tests.strategies import REPO_ROOT

# --- the messages of the client's calls (upstream cri-api) ---------------------------------

# "name=number:type" with type a scalar, `map`, `enum Name` or a message name; `*` marks
# a repeated field.
UPSTREAM_FIELDS: dict[str, str] = {
    "VersionRequest": "version=1:string",
    "VersionResponse": "version=1:string runtime_name=2:string runtime_version=3:string "
    "runtime_api_version=4:string",
    "StatusRequest": "verbose=1:bool",
    "StatusResponse": "status=1:RuntimeStatus info=2:map *runtime_handlers=3:RuntimeHandler "
    "features=4:RuntimeFeatures",
    "RuntimeStatus": "*conditions=1:RuntimeCondition",
    "RuntimeCondition": "type=1:string status=2:bool reason=3:string message=4:string",
    "RuntimeHandler": "name=1:string features=2:RuntimeHandlerFeatures",
    "RuntimeHandlerFeatures": "recursive_read_only_mounts=1:bool user_namespaces=2:bool",
    # mount_options = 3: cri-api d279f3c (master, after v0.37.0-beta.0).
    "RuntimeFeatures": "supplemental_groups_policy=1:bool user_namespaces_host_network=2:bool "
    "mount_options=3:bool",
    "StopPodSandboxRequest": "pod_sandbox_id=1:string",
    "StopPodSandboxResponse": "",
    "RemovePodSandboxRequest": "pod_sandbox_id=1:string",
    "RemovePodSandboxResponse": "",
    "PodSandboxStatusRequest": "pod_sandbox_id=1:string verbose=2:bool",
    "PodSandboxStatusResponse": "status=1:PodSandboxStatus info=2:map "
    "*containers_statuses=3:ContainerStatus timestamp=4:int64",
    "PodSandboxStatus": "id=1:string metadata=2:PodSandboxMetadata "
    "state=3:enum PodSandboxState created_at=4:int64 network=5:PodSandboxNetworkStatus "
    "linux=6:LinuxPodSandboxStatus labels=7:map annotations=8:map runtime_handler=9:string",
    "PodSandboxNetworkStatus": "ip=1:string *additional_ips=2:PodIP",
    "PodIP": "ip=1:string",
    "LinuxPodSandboxStatus": "namespaces=1:Namespace",
    "Namespace": "options=2:NamespaceOption",
    "ListPodSandboxRequest": "filter=1:PodSandboxFilter",
    "PodSandboxFilter": "id=1:string state=2:PodSandboxStateValue label_selector=3:map",
    "PodSandboxStateValue": "state=1:enum PodSandboxState",
    "ListPodSandboxResponse": "*items=1:PodSandbox",
    "PodSandbox": "id=1:string metadata=2:PodSandboxMetadata state=3:enum PodSandboxState "
    "created_at=4:int64 labels=5:map annotations=6:map runtime_handler=7:string",
    "CreateContainerResponse": "container_id=1:string",
    "StartContainerRequest": "container_id=1:string",
    "StartContainerResponse": "",
    "StopContainerRequest": "container_id=1:string timeout=2:int64",
    "StopContainerResponse": "",
    "RemoveContainerRequest": "container_id=1:string",
    "RemoveContainerResponse": "",
    "ContainerStatusRequest": "container_id=1:string verbose=2:bool",
    "ContainerStatusResponse": "status=1:ContainerStatus info=2:map",
    "ContainerStatus": "id=1:string metadata=2:ContainerMetadata state=3:enum ContainerState "
    "created_at=4:int64 started_at=5:int64 finished_at=6:int64 exit_code=7:int32 "
    "image=8:ImageSpec image_ref=9:string reason=10:string message=11:string labels=12:map "
    "annotations=13:map *mounts=14:Mount log_path=15:string resources=16:ContainerResources "
    "image_id=17:string user=18:ContainerUser stop_signal=19:enum Signal",
    "ContainerResources": "linux=1:LinuxContainerResources windows=2:WindowsContainerResources",
    "ContainerUser": "linux=1:LinuxContainerUser",
    "LinuxContainerUser": "uid=1:int64 gid=2:int64 *supplemental_groups=3:int64",
    "ImageStatusRequest": "image=1:ImageSpec verbose=2:bool",
    "ImageStatusResponse": "image=1:Image info=2:map",
    # What crictl calls besides (the FakeRuntime serves them).
    "ContainerStateValue": "state=1:enum ContainerState",
    "ContainerFilter": "id=1:string state=2:ContainerStateValue pod_sandbox_id=3:string "
    "label_selector=4:map",
    "ListContainersRequest": "filter=1:ContainerFilter",
    "ListContainersResponse": "*containers=1:Container",
    "Container": "id=1:string pod_sandbox_id=2:string metadata=3:ContainerMetadata "
    "image=4:ImageSpec image_ref=5:string state=6:enum ContainerState created_at=7:int64 "
    "labels=8:map annotations=9:map image_id=10:string",
    "ImageFilter": "image=1:ImageSpec",
    "ListImagesRequest": "filter=1:ImageFilter",
    "ListImagesResponse": "*images=1:Image",
    "AuthConfig": "username=1:string password=2:string auth=3:string "
    "server_address=4:string identity_token=5:string registry_token=6:string",
    "PullImageRequest": "image=1:ImageSpec auth=2:AuthConfig sandbox_config=3:PodSandboxConfig",
    "PullImageResponse": "image_ref=1:string",
    "RemoveImageRequest": "image=1:ImageSpec",
    "RemoveImageResponse": "",
    "ImageFsInfoRequest": "",
    "ImageFsInfoResponse": "*image_filesystems=1:FilesystemUsage "
    "*container_filesystems=2:FilesystemUsage",
    "FilesystemUsage": "timestamp=1:int64 fs_id=2:FilesystemIdentifier "
    "used_bytes=3:UInt64Value inodes_used=4:UInt64Value",
    "FilesystemIdentifier": "mountpoint=1:string",
    "UInt64Value": "value=1:uint64",
    "Image": "id=1:string *repo_tags=2:string *repo_digests=3:string size=4:uint64 "
    "uid=5:Int64Value username=6:string spec=7:ImageSpec pinned=8:bool",
}
UPSTREAM_ENUMS = {
    "PodSandboxState": {"SANDBOX_READY": 0, "SANDBOX_NOTREADY": 1},
    "ContainerState": {
        "CONTAINER_CREATED": 0, "CONTAINER_RUNNING": 1, "CONTAINER_EXITED": 2,
        "CONTAINER_UNKNOWN": 3,
    },
}
# Client method -> (service, RPC, request, response), from the upstream service blocks.
CALLS = {
    "version": ("RuntimeService", "Version", "VersionRequest", "VersionResponse"),
    "status": ("RuntimeService", "Status", "StatusRequest", "StatusResponse"),
    "run_pod_sandbox": (
        "RuntimeService", "RunPodSandbox", "RunPodSandboxRequest", "RunPodSandboxResponse"),
    "pod_sandbox_status": ("RuntimeService", "PodSandboxStatus", "PodSandboxStatusRequest",
                           "PodSandboxStatusResponse"),
    "stop_pod_sandbox": ("RuntimeService", "StopPodSandbox", "StopPodSandboxRequest",
                         "StopPodSandboxResponse"),
    "remove_pod_sandbox": ("RuntimeService", "RemovePodSandbox", "RemovePodSandboxRequest",
                           "RemovePodSandboxResponse"),
    "list_pod_sandbox": ("RuntimeService", "ListPodSandbox", "ListPodSandboxRequest",
                         "ListPodSandboxResponse"),
    "create_container": ("RuntimeService", "CreateContainer", "CreateContainerRequest",
                         "CreateContainerResponse"),
    "start_container": ("RuntimeService", "StartContainer", "StartContainerRequest",
                        "StartContainerResponse"),
    "container_status": ("RuntimeService", "ContainerStatus", "ContainerStatusRequest",
                         "ContainerStatusResponse"),
    "stop_container": ("RuntimeService", "StopContainer", "StopContainerRequest",
                       "StopContainerResponse"),
    "remove_container": ("RuntimeService", "RemoveContainer", "RemoveContainerRequest",
                         "RemoveContainerResponse"),
    "image_status": ("ImageService", "ImageStatus", "ImageStatusRequest", "ImageStatusResponse"),
}

_SCALARS = {
    FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_UINT64: "uint64", FieldDescriptor.TYPE_UINT32: "uint32",
}


def _describe(descriptor_field: FieldDescriptor) -> str:
    message_type = descriptor_field.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        kind = "map"
    elif message_type is not None:
        kind = message_type.full_name.removeprefix("runtime.v1.")
    elif descriptor_field.enum_type is not None:
        kind = "enum " + descriptor_field.enum_type.full_name.removeprefix("runtime.v1.")
    else:
        kind = _SCALARS[descriptor_field.type]
    repeated = descriptor_field.is_repeated and kind != "map"
    return f"{'*' if repeated else ''}{descriptor_field.name}={descriptor_field.number}:{kind}"


def _expected(row: str) -> list[str]:
    # Split "a=1:enum X b=2:string" on the spaces that start a new field.
    parts: list[str] = []
    for token in row.split():
        if "=" in token:
            parts.append(token)
        else:
            parts[-1] += " " + token
    return sorted(parts)


@pytest.mark.parametrize("message", sorted(UPSTREAM_FIELDS))
def test_message_fields_match_upstream(message: str) -> None:
    descriptor = descriptor_pool.Default().FindMessageTypeByName(f"runtime.v1.{message}")
    assert sorted(_describe(f) for f in descriptor.fields) == _expected(UPSTREAM_FIELDS[message])
    assert getattr(api_pb2, message).DESCRIPTOR is descriptor


@pytest.mark.parametrize("enum", sorted(UPSTREAM_ENUMS))
def test_enums_match_upstream(enum: str) -> None:
    descriptor = descriptor_pool.Default().FindEnumTypeByName(f"runtime.v1.{enum}")
    assert {v.name: v.number for v in descriptor.values} == UPSTREAM_ENUMS[enum]


def test_client_has_a_method_per_cri_rpc() -> None:
    public = {name for name in vars(RuntimeClient) if not name.startswith("_")}
    assert set(CALLS) <= public


@pytest.mark.parametrize("method", sorted(CALLS))
def test_method_paths_and_types_match_the_service_descriptors(
    method: str, fake_cri_runtime: FakeRuntime
) -> None:
    service_name, rpc, request_name, response_name = CALLS[method]
    service = api_pb2.DESCRIPTOR.services_by_name[service_name]
    descriptor = service.methods_by_name[rpc]
    assert descriptor.input_type.name == request_name
    assert descriptor.output_type.name == response_name
    assert not descriptor.client_streaming and not descriptor.server_streaming
    path = f"/runtime.v1.{service_name}/{rpc}"
    response_type = getattr(api_pb2, response_name)
    fake_cri_runtime.reply(path, response_type().SerializeToString())
    with RuntimeClient(fake_cri_runtime.endpoint, timeout=10) as client:
        result = getattr(client, method)(*SAMPLE_ARGUMENTS[method])
    assert type(result) is response_type
    assert [c.path for c in fake_cri_runtime.calls] == [path]
    request = getattr(api_pb2, request_name).FromString(fake_cri_runtime.calls[0].data)
    assert request == EXPECTED_REQUESTS[method]


# --- the runtime: the shipped FakeRuntime (kubelet_winnet.testing) ------------------------
#
# Each test takes the plugin's ``fake_cri_runtime`` fixture: a real grpcio server on a
# unix socket that records each call's bytes as they came off the wire and answers with
# the bytes (or the status) a test gives it with reply() and fail().


def _sandbox_request() -> api_pb2.RunPodSandboxRequest:
    request = api_pb2.RunPodSandboxRequest(runtime_handler="runhcs-wcow-process")
    request.config.metadata.name = "web"
    request.config.metadata.uid = "a1"
    request.config.metadata.namespace = "default"
    request.config.labels["io.kubernetes.pod.name"] = "web"
    request.config.windows.security_context.namespace_options.network = api_pb2.NODE
    return request


def _container_request() -> api_pb2.CreateContainerRequest:
    request = api_pb2.CreateContainerRequest(pod_sandbox_id="s1")
    request.config.metadata.name = "app"
    request.config.image.image = "mcr.microsoft.com/windows/nanoserver:ltsc2022"
    request.config.annotations["io.kubernetes.container.hash"] = "abc"
    request.sandbox_config.CopyFrom(_sandbox_request().config)
    return request


_FILTER = api_pb2.PodSandboxFilter(label_selector={"app": "web"})
SAMPLE_ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "version": (),
    "status": (),
    "run_pod_sandbox": (_sandbox_request(),),
    "pod_sandbox_status": ("s1",),
    "stop_pod_sandbox": ("s1",),
    "remove_pod_sandbox": ("s1",),
    "list_pod_sandbox": (_FILTER,),
    "create_container": (_container_request(),),
    "start_container": ("c1",),
    "container_status": ("c1",),
    "stop_container": ("c1",),
    "remove_container": ("c1",),
    "image_status": ("registry.k8s.io/pause:3.10",),
}
EXPECTED_REQUESTS: dict[str, Message] = {
    "version": api_pb2.VersionRequest(version="0.1.0"),
    "status": api_pb2.StatusRequest(),
    "run_pod_sandbox": _sandbox_request(),
    "pod_sandbox_status": api_pb2.PodSandboxStatusRequest(pod_sandbox_id="s1"),
    "stop_pod_sandbox": api_pb2.StopPodSandboxRequest(pod_sandbox_id="s1"),
    "remove_pod_sandbox": api_pb2.RemovePodSandboxRequest(pod_sandbox_id="s1"),
    "list_pod_sandbox": api_pb2.ListPodSandboxRequest(filter=_FILTER),
    "create_container": _container_request(),
    "start_container": api_pb2.StartContainerRequest(container_id="c1"),
    "container_status": api_pb2.ContainerStatusRequest(container_id="c1"),
    "stop_container": api_pb2.StopContainerRequest(container_id="c1"),
    "remove_container": api_pb2.RemoveContainerRequest(container_id="c1"),
    "image_status": api_pb2.ImageStatusRequest(
        image=api_pb2.ImageSpec(image="registry.k8s.io/pause:3.10")
    ),
}

VERSION = "/runtime.v1.RuntimeService/Version"
RUN = "/runtime.v1.RuntimeService/RunPodSandbox"


# --- what goes on the wire -----------------------------------------------------------------


def test_the_kubelet_cri_version_is_0_1_0() -> None:
    # kuberuntime_manager.go: kubeRuntimeAPIVersion = "0.1.0".
    assert KUBELET_CRI_VERSION == "0.1.0"


def test_request_bytes_are_the_messages_serialization(fake_cri_runtime: FakeRuntime) -> None:
    request = _sandbox_request()
    fake_cri_runtime.reply(RUN, api_pb2.RunPodSandboxResponse(pod_sandbox_id="s-1"))
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        assert client.run_pod_sandbox(request).pod_sandbox_id == "s-1"
    # The hand-encoded NODE form inside config.windows (cri-and-hcn.md) is on the wire.
    wire = fake_cri_runtime.calls[0].data
    assert bytes.fromhex("4a 06 0a 04 22 02 08 02") in wire
    assert wire == request.SerializeToString()


def test_optional_arguments_reach_the_wire(fake_cri_runtime: FakeRuntime) -> None:
    for rpc in ("PodSandboxStatus", "ContainerStatus", "StopContainer"):  # for any id
        fake_cri_runtime.reply(rpc, b"")
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        client.version("v1")
        client.status(verbose=True)
        client.pod_sandbox_status("s1", verbose=True)
        client.container_status("c1", verbose=True)
        client.stop_container("c1", grace_period=30)
        client.list_pod_sandbox()
        client.image_status(api_pb2.ImageSpec(image="x", annotations={"k": "v"}), verbose=True)
    wire = [call.data for call in fake_cri_runtime.calls]
    decoded = [
        api_pb2.VersionRequest.FromString(wire[0]).version,
        api_pb2.StatusRequest.FromString(wire[1]).verbose,
        api_pb2.PodSandboxStatusRequest.FromString(wire[2]).verbose,
        api_pb2.ContainerStatusRequest.FromString(wire[3]).verbose,
        api_pb2.StopContainerRequest.FromString(wire[4]).timeout,
        api_pb2.ListPodSandboxRequest.FromString(wire[5]).HasField("filter"),
        dict(api_pb2.ImageStatusRequest.FromString(wire[6]).image.annotations),
    ]
    assert decoded == ["v1", True, True, True, 30, False, {"k": "v"}]


def test_unknown_reply_fields_are_kept_not_fatal(fake_cri_runtime: FakeRuntime) -> None:
    # A newer runtime's field 99 (string "x") after a known one.
    known = api_pb2.VersionResponse(runtime_name="containerd").SerializeToString()
    sent = known + bytes.fromhex("9a 06 01") + b"x"
    fake_cri_runtime.reply(VERSION, sent)
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        reply = client.version()
    assert reply.runtime_name == "containerd"
    assert reply.SerializeToString() == sent


def test_absent_image_is_a_reply_without_image(fake_cri_runtime: FakeRuntime) -> None:
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        reply = client.image_status("nope:1")
    assert not reply.HasField("image")


@settings(max_examples=60, deadline=None)
@given(reply=st.binary(max_size=64) | st.builds(
    lambda good, cut: good[:cut],
    st.builds(lambda name, version: api_pb2.VersionResponse(
        runtime_name=name, runtime_version=version).SerializeToString(),
        st.text(max_size=20), st.text(max_size=20)),
    st.integers(0, 50)))
def test_any_reply_bytes_give_a_message_or_a_cri_error(reply: bytes) -> None:
    """Whatever a runtime puts on the wire (junk, truncated, unknown fields), the caller
    gets the response message or ``CriError``, never another exception."""
    with FakeRuntime() as fake:
        fake.reply(VERSION, reply)
        try:  # protobuf itself says whether the bytes parse
            expected: api_pb2.VersionResponse | None = api_pb2.VersionResponse.FromString(reply)
        except DecodeError:
            expected = None
        with RuntimeClient(fake.endpoint, timeout=10) as client:
            if expected is None:
                with pytest.raises(CriError) as caught:
                    client.version()
                assert caught.value.code == "INTERNAL"
            else:
                assert client.version() == expected


# --- failures become CriError ----------------------------------------------------------------


def test_status_code_and_details_are_carried(fake_cri_runtime: FakeRuntime) -> None:
    fake_cri_runtime.fail("PodSandboxStatus", "NOT_FOUND",
             'an error occurred when try to find sandbox "s9": not found')
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            CriError) as caught:
        client.pod_sandbox_status("s9")
    error = caught.value
    assert (error.code, error.method) == (
        "NOT_FOUND", "/runtime.v1.RuntimeService/PodSandboxStatus"
    )
    assert error.details == 'an error occurred when try to find sandbox "s9": not found'
    assert isinstance(error, WinnetError) and isinstance(error, OSError)
    assert str(error) == (
        "/runtime.v1.RuntimeService/PodSandboxStatus: NOT_FOUND: "
        'an error occurred when try to find sandbox "s9": not found'
    )


def test_huge_details_are_truncated(fake_cri_runtime: FakeRuntime) -> None:
    # Under grpc's 8 KiB metadata limit, over our 2000-character cap.
    fake_cri_runtime.fail(VERSION, "INTERNAL", "x" * 6000)
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            CriError) as caught:
        client.version()
    assert caught.value.code == "INTERNAL"
    assert 0 < len(caught.value.details) <= 2003
    assert len(str(caught.value)) < 2100


def test_truncated_reply_bytes_are_an_error_not_a_partial_message(
    fake_cri_runtime: FakeRuntime,
) -> None:
    full = api_pb2.RunPodSandboxResponse(pod_sandbox_id="s" * 64).SerializeToString()
    fake_cri_runtime.reply(RUN, full[:10])
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            CriError) as caught:
        client.run_pod_sandbox(_sandbox_request())
    # grpcio reports a reply its deserializer rejects as INTERNAL.
    assert caught.value.code == "INTERNAL"


def test_reply_larger_than_the_kubelet_limit_is_refused(fake_cri_runtime: FakeRuntime) -> None:
    # pkg/kubelet/cri/remote/utils.go: maxMsgSize = 16 MiB.
    big = api_pb2.VersionResponse(runtime_name="x" * (16 * 1024 * 1024)).SerializeToString()
    fake_cri_runtime.reply(VERSION, big)
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            CriError) as caught:
        client.version()
    assert caught.value.code == "RESOURCE_EXHAUSTED"


def test_slow_runtime_hits_the_deadline(fake_cri_runtime: FakeRuntime) -> None:
    fake_cri_runtime.stall(VERSION, 2.0)
    started = time.monotonic()
    with RuntimeClient(fake_cri_runtime.endpoint, timeout=0.2) as client, pytest.raises(
            CriError) as caught:
        client.version()
    assert caught.value.code == "DEADLINE_EXCEEDED"
    assert time.monotonic() - started < 1.9


def test_missing_socket_is_unavailable_promptly(tmp_path: Path) -> None:
    started = time.monotonic()
    with RuntimeClient(f"unix://{tmp_path}/none.sock", timeout=20) as client, pytest.raises(
        CriError
    ) as caught:
        client.version()
    assert caught.value.code == "UNAVAILABLE"
    assert time.monotonic() - started < 15


def test_calls_after_close_fail_typed(fake_cri_runtime: FakeRuntime) -> None:
    client = RuntimeClient(fake_cri_runtime.endpoint)
    client.close()
    client.close()  # idempotent
    with pytest.raises(CriError) as caught:
        client.version()
    assert caught.value.code == "CANCELLED"
    assert fake_cri_runtime.calls == ()
    assert "closed" in repr(client)


def test_context_manager_closes(fake_cri_runtime: FakeRuntime) -> None:
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        client.version()
    with pytest.raises(CriError):
        client.version()


def test_one_client_serves_many_threads(fake_cri_runtime: FakeRuntime) -> None:
    fake_cri_runtime.reply(VERSION, api_pb2.VersionResponse(runtime_name="r"))
    errors: list[BaseException] = []

    def work(client: RuntimeClient) -> None:
        try:
            for _ in range(20):
                assert client.version().runtime_name == "r"
        except BaseException as exc:  # reported below
            errors.append(exc)

    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        threads = [threading.Thread(target=work, args=(client,)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert errors == []
    assert len(fake_cri_runtime.calls) == 160


# --- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [
        ("tcp://127.0.0.1:10010", "unsupported scheme 'tcp'"),
        ("npipe:////./pipe/containerd-containerd", "unsupported scheme 'npipe'"),
        ("/run/containerd/containerd.sock", "expected unix:///path/to/socket"),
        ("", "expected unix:///path/to/socket"),
        ("unix://run/containerd.sock", "the socket path must be absolute"),
        ("unix://", "the socket path must be absolute"),
        ("unix:///tmp/a\x00b", "NUL"),
        ("unix:///tmp/\udc80", "not valid UTF-8"),
        ("unix:///" + "a" * 107, "108 bytes"),
    ],
)
def test_bad_endpoints_are_refused(endpoint: str, reason: str) -> None:
    with pytest.raises(CriEndpointError) as caught:
        RuntimeClient(endpoint)
    assert reason in caught.value.reason
    assert isinstance(caught.value, ValueError)
    assert len(caught.value.endpoint) <= 203


def test_huge_endpoint_is_described_in_bounded_size() -> None:
    with pytest.raises(CriEndpointError) as caught:
        RuntimeClient("tcp://" + "x" * 1_000_000)
    assert len(str(caught.value)) < 600


def test_longest_socket_path_is_accepted() -> None:
    endpoint = "unix:///" + "a" * 106
    with RuntimeClient(endpoint) as client:
        assert client.socket_path == "/" + "a" * 106


class _Hostile:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    __str__ = __repr__


@pytest.mark.parametrize("endpoint", [None, 5, b"unix:///x", _Hostile()])
def test_endpoint_of_wrong_type(endpoint: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        RuntimeClient(endpoint)  # type: ignore[arg-type]
    assert caught.value.argument == "endpoint"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5", None])
def test_bad_timeouts(timeout: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        RuntimeClient("unix:///tmp/x.sock", timeout=timeout)  # type: ignore[arg-type]
    assert caught.value.argument == "timeout"


@pytest.mark.parametrize(
    ("method", "args", "kwargs", "argument"),
    [
        ("run_pod_sandbox", ({"config": {}},), {}, "request"),
        ("run_pod_sandbox", (api_pb2.RunPodSandboxResponse(),), {}, "request"),
        ("create_container", (_sandbox_request(),), {}, "request"),
        ("pod_sandbox_status", (b"s1",), {}, "pod_sandbox_id"),
        ("pod_sandbox_status", ("s1",), {"verbose": "true"}, "verbose"),
        ("stop_pod_sandbox", (None,), {}, "pod_sandbox_id"),
        ("remove_pod_sandbox", (_Hostile(),), {}, "pod_sandbox_id"),
        ("list_pod_sandbox", ({"id": "x"},), {}, "filter"),
        ("start_container", (1,), {}, "container_id"),
        ("container_status", ("c",), {"verbose": 1}, "verbose"),
        ("stop_container", ("c",), {"grace_period": 1.5}, "grace_period"),
        ("stop_container", ("c",), {"grace_period": True}, "grace_period"),
        ("stop_container", ("c",), {"grace_period": -1}, "grace_period"),
        ("stop_container", ("c",), {"grace_period": 10**30}, "grace_period"),
        ("remove_container", (["c"],), {}, "container_id"),
        ("image_status", (None,), {}, "image"),
        ("version", (0,), {}, "version"),
        ("status", (), {"verbose": None}, "verbose"),
    ],
)
def test_wrong_argument_types_are_refused_before_any_call(
    fake_cri_runtime: FakeRuntime, method: str, args: tuple[Any, ...], kwargs: dict[str, Any],
    argument: str,
) -> None:
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            InvalidArgumentError) as caught:
        getattr(client, method)(*args, **kwargs)
    assert caught.value.argument == argument
    assert fake_cri_runtime.calls == ()


def test_timeout_beyond_float_is_refused() -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        RuntimeClient("unix:///tmp/x.sock", timeout=10**5000)
    assert caught.value.argument == "timeout"
    assert str(caught.value) == (
        "timeout: expected seconds as a positive number, got a number too large for a float"
    )


_STRING_METHODS = [
    ("pod_sandbox_status", "pod_sandbox_id"), ("stop_pod_sandbox", "pod_sandbox_id"),
    ("remove_pod_sandbox", "pod_sandbox_id"), ("start_container", "container_id"),
    ("container_status", "container_id"), ("stop_container", "container_id"),
    ("remove_container", "container_id"), ("image_status", "image"), ("version", "version"),
]


@pytest.mark.parametrize(("method", "argument"), _STRING_METHODS)
def test_lone_surrogates_are_refused_before_any_call(
    fake_cri_runtime: FakeRuntime, method: str, argument: str
) -> None:
    """A runtime.v1 string is UTF-8: a lone surrogate has no encoding (it raised
    UnicodeEncodeError from protobuf)."""
    with RuntimeClient(fake_cri_runtime.endpoint) as client, pytest.raises(
            InvalidArgumentError) as caught:
        getattr(client, method)("id-\ud800")
    assert caught.value.argument == argument
    assert str(caught.value) == (
        f"{argument}: expected valid Unicode, got a str with a lone surrogate"
    )
    assert fake_cri_runtime.calls == ()


def test_every_string_taking_method_is_in_the_surrogate_table() -> None:
    """Methods whose first parameter is annotated ``str`` (or ``str | ImageSpec``)."""
    import inspect

    found = set()
    for name, member in vars(RuntimeClient).items():
        if name.startswith("_") or not callable(member):
            continue
        params = list(inspect.signature(member).parameters.values())[1:]
        if params and params[0].default is inspect.Parameter.empty and (
            str(params[0].annotation).startswith("str")
        ):
            found.add(name)
    assert found == {method for method, _ in _STRING_METHODS} - {"version"}


# --- import cost and the optional extra --------------------------------------------------------


def _fresh(code: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_module_does_not_load_grpc() -> None:
    assert _fresh(
        "import sys, json\nimport kubelet_winnet.cri\nprint(json.dumps('grpc' in sys.modules))"
    ) is False


def test_without_grpcio_the_client_names_the_extra() -> None:
    message = _fresh(
        "import sys, json\n"
        "sys.modules['grpc'] = None  # as if grpcio were not installed\n"
        "from kubelet_winnet.cri import RuntimeClient\n"
        "try:\n"
        "    RuntimeClient('unix:///tmp/x.sock')\n"
        "except ImportError as exc:\n"
        "    print(json.dumps(str(exc)))\n"
    )
    assert "kubelet-winnet[cri]" in message


def test_errors_are_typed() -> None:
    assert issubclass(CriError, OSError) and not issubclass(CriError, ValueError)
    assert issubclass(CriEndpointError, ValueError) and not issubclass(CriEndpointError, OSError)


def test_the_cri_benchmark_skips_cleanly_without_containerd(tmp_path: Path) -> None:
    """With no containerd on PATH the benchmark says why and exits 0."""
    benchmark = REPO_ROOT / "benchmarks" / "cri.py"
    done = subprocess.run(
        [sys.executable, str(benchmark), "--quick", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=120, check=False,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("skipped: ")
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["skipped"]


@pytest.mark.parametrize(
    ("ci", "returncode", "outcome"), [(None, 0, "skipped"),
                                      pytest.param("1", 1, "error", marks=pytest.mark.slow)]
)
def test_containerd_tests_skip_outside_ci_and_fail_under_ci(
    tmp_path: Path, ci: str | None, returncode: int, outcome: str
) -> None:
    """tests/cri/test_containerd.py with no containerd on PATH: skipped (with the reason)
    outside CI, errors under CI."""
    repo = REPO_ROOT
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "HYPOTHESIS_PROFILE": "ci"}
    if ci is not None:
        env["KUBELET_WINNET_CI"] = ci
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/cri/test_containerd.py", "-k", "runtime_is_containerd or run_starts"],
        capture_output=True, text=True, timeout=300, check=False, cwd=repo, env=env,
    )
    assert done.returncode == returncode, done.stdout[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert f"2 {outcome}" in summary, summary
    reason = "not installed: containerd"
    assert reason in done.stdout
