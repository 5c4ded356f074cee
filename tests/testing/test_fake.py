"""``FakeRuntime`` driven by the library's own ``RuntimeClient``: ids, states, recorded
calls, injected failures, canned replies, and refusals of malformed requests with
``INVALID_ARGUMENT`` as a runtime gives them.

The sandbox network follows the policy's rule (``kep``: NODE in ``namespace_options``
or ``host_process``; ``containerd``: ``host_process`` alone, its ``hostNetwork()``).
crictl's request shapes, rebuilt from its source, are tests/testing/test_crictl.py.
"""

from __future__ import annotations

import json
import os
from typing import Any

import grpc
import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cri import RuntimeClient
from kubelet_winnet.testing import Call, FakeRuntime

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
    "spec": {"hostNetwork": True, "containers": [{"name": "iis", "image": "iis:ltsc2022"}]},
}
HOST_PROCESS = {**POD, "spec": {**POD["spec"], "securityContext": {
    "windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}}}


class _Hostile:
    """Raises from every comparison, hash, iteration and repr."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __iter__(self) -> Any:
        raise RuntimeError("iter")

    def __repr__(self) -> str:
        raise RuntimeError("repr")


def test_a_pod_runs_through_the_fake_and_every_call_is_recorded() -> None:
    request = kw.run_pod_sandbox_request(POD)
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint, timeout=10) as client:
        sandbox = client.run_pod_sandbox(request).pod_sandbox_id
        container = client.create_container(
            kw.create_container_request(POD, "iis", pod_sandbox_id=sandbox)).container_id
        client.start_container(container)
        status = client.container_status(container).status
        assert status.state == api_pb2.CONTAINER_RUNNING
        assert status.metadata.name == "iis"
        sandbox_status = client.pod_sandbox_status(sandbox).status
        assert (sandbox_status.id, sandbox_status.metadata.name) == (sandbox, "web")
        assert sandbox_status.state == api_pb2.SANDBOX_READY
        client.stop_pod_sandbox(sandbox)
        assert client.pod_sandbox_status(sandbox).status.state == api_pb2.SANDBOX_NOTREADY
        client.remove_pod_sandbox(sandbox)
        assert list(client.list_pod_sandbox().items) == []
        fake.assert_calls(["RunPodSandbox", "CreateContainer", "StartContainer",
                           "ContainerStatus", "PodSandboxStatus", "StopPodSandbox",
                           "PodSandboxStatus", "RemovePodSandbox", "ListPodSandbox"])
        fake.assert_calls([("RunPodSandbox", request), *[c.method for c in fake.calls[1:]]])
        assert fake.calls[0] == Call("RunPodSandbox", "RuntimeService", request,
                                     request.SerializeToString())
        assert fake.calls[0].path == "/runtime.v1.RuntimeService/RunPodSandbox"
        assert fake.requests("RunPodSandbox") == (request,)


@pytest.mark.parametrize(("policy", "pod", "minor", "network"), [
    ("kep", POD, 32, "node"),         # NODE sent: the KEP's runtime honours it
    ("kep", POD, 33, "pod"),          # 1.33+ never sends namespace_options
    ("containerd", POD, 32, "pod"),   # containerd reads host_process only
    ("containerd", HOST_PROCESS, 33, "node"),
    ("kep", HOST_PROCESS, 38, "node"),
])
def test_the_sandbox_network_follows_the_policy(
    policy: str, pod: dict[str, Any], minor: int, network: str
) -> None:
    with FakeRuntime(policy=policy) as fake, RuntimeClient(fake.endpoint) as client:
        request = kw.run_pod_sandbox_request(pod, kubelet_version=f"1.{minor}")
        sandbox = client.run_pod_sandbox(request).pod_sandbox_id
        assert fake.sandbox_network(sandbox) == network
        info = client.pod_sandbox_status(sandbox, verbose=True).info
        assert json.loads(info["info"]) == {"network": network}


def test_failures_are_injected_and_reset() -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        fake.fail("RunPodSandbox", "UNAVAILABLE", "the runtime is restarting")
        with pytest.raises(kw.CriError) as caught:
            client.run_pod_sandbox(kw.run_pod_sandbox_request(POD))
        assert (caught.value.code, caught.value.details) == (
            "UNAVAILABLE", "the runtime is restarting")
        fake.reset()
        assert fake.calls == ()
        assert client.run_pod_sandbox(kw.run_pod_sandbox_request(POD)).pod_sandbox_id


def test_canned_replies_as_messages_or_raw_bytes() -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        fake.reply("Version", api_pb2.VersionResponse(runtime_name="containerd",
                                                      runtime_version="v2.4.0"))
        assert client.version().runtime_version == "v2.4.0"
        fake.reply("Version", b"\x12")  # truncated: the client sees INTERNAL
        with pytest.raises(kw.CriError) as caught:
            client.version()
        assert caught.value.code == "INTERNAL"


def test_version_status_and_images_answer_as_a_runtime() -> None:
    with FakeRuntime(images=["pause:3.10"]) as fake, RuntimeClient(fake.endpoint) as client:
        reply = client.version()
        assert (reply.version, reply.runtime_api_version) == ("0.1.0", "v1")
        conditions = {c.type: c.status for c in client.status().status.conditions}
        assert conditions == {"RuntimeReady": True, "NetworkReady": True}
        image = client.image_status("pause:3.10").image
        assert image.id.startswith("sha256:") and len(image.id) == 71
        assert (list(image.repo_tags), image.size > 0) == (["pause:3.10"], True)
        assert not client.image_status("absent:1").HasField("image")


@pytest.mark.parametrize(("call", "field"), [
    (lambda c: c.run_pod_sandbox(api_pb2.RunPodSandboxRequest()), "config.metadata"),
    (lambda c: c.run_pod_sandbox(api_pb2.RunPodSandboxRequest(config=api_pb2.PodSandboxConfig(
        metadata=api_pb2.PodSandboxMetadata(name="a", namespace="b")))), "config.metadata.uid"),
])
def test_malformed_requests_are_invalid_argument(call: Any, field: str) -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        with pytest.raises(kw.CriError) as caught:
            call(client)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert caught.value.details.startswith(field + ":")
        assert len(fake.calls) == 1


def test_an_out_of_range_namespace_mode_is_invalid_argument() -> None:
    request = kw.run_pod_sandbox_request(POD, kubelet_version="1.32")
    request.config.windows.security_context.namespace_options.network = 7  # type: ignore[assignment]
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client, pytest.raises(
            kw.CriError) as caught:
        client.run_pod_sandbox(request)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert "namespace_options.network" in caught.value.details


def test_bytes_that_are_not_the_request_are_invalid_argument() -> None:
    with FakeRuntime() as fake:
        channel = grpc.insecure_channel(fake.endpoint)
        call: Any = channel.unary_unary("/runtime.v1.RuntimeService/RunPodSandbox")
        with pytest.raises(grpc.RpcError) as caught:
            call(b"\xff\xff\xff", timeout=10)
        channel.close()
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert fake.calls[0].request is None


def test_unknown_ids_are_not_found_and_unknown_methods_unimplemented() -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        with pytest.raises(kw.CriError) as caught:
            client.pod_sandbox_status("nope")
        assert caught.value.code == "NOT_FOUND"
        assert '"nope"' in caught.value.details
        channel = grpc.insecure_channel(fake.endpoint)
        exec_call: Any = channel.unary_unary("/runtime.v1.RuntimeService/Exec")
        with pytest.raises(grpc.RpcError) as unknown:
            exec_call(b"", timeout=10)
        channel.close()
        assert unknown.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_socket_is_removed_when_it_stops(tmp_path: Any) -> None:
    socket = f"/tmp/kw-fake-{os.getpid()}.sock"
    with FakeRuntime(socket_path=socket) as fake:
        assert fake.endpoint == f"unix://{socket}"
        assert os.path.exists(socket)
    assert not os.path.exists(socket)
    with pytest.raises(kw.InvalidRequestError, match="not started"):
        _ = fake.endpoint


def test_assert_calls_names_each_difference() -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        client.version()
        with pytest.raises(AssertionError) as caught:
            fake.assert_calls(["Status", "Version"])
    assert str(caught.value) == (
        "the calls differ: call 0: expected Status, received Version; call 1: expected "
        "Version, none was made (received: Version)")


# The calls below break the signatures on purpose, so they go through an untyped name.
Fake: Any = FakeRuntime


@pytest.mark.parametrize(("make", "error", "words"), [
    (lambda: Fake(policy="strict"), kw.InvalidArgumentError, "'kep' or 'containerd'"),
    (lambda: Fake(socket_path=3), kw.InvalidArgumentError, "socket_path"),
    (lambda: Fake(images="pause"), kw.InvalidArgumentError, "images"),
    (lambda: Fake(runtime_name=b"x"), kw.InvalidArgumentError, "runtime_name"),
    (lambda: Fake().fail("Exec", "UNAVAILABLE"), kw.InvalidRequestError, "'Exec'"),
    (lambda: Fake().fail("Version", "OK"), kw.InvalidArgumentError, "status code"),
    (lambda: Fake().fail(1, "OK"), kw.InvalidArgumentError, "RPC name"),
    (lambda: Fake().fail("Version", "UNKNOWN", b"x"), kw.InvalidArgumentError,
     "details"),
    (lambda: Fake().reply("Version", api_pb2.StatusResponse()),
     kw.InvalidArgumentError, "runtime.v1.VersionResponse"),
    (lambda: Fake().assert_calls("Version"), kw.InvalidArgumentError, "list"),
    (lambda: Fake().assert_calls([3]), kw.InvalidArgumentError, "expected[0]"),
    (lambda: Fake().sandbox_network("x"), kw.InvalidRequestError, "no such sandbox"),
    (lambda: Fake(socket_path="/nonexistent-dir/x.sock").start(),
     kw.InvalidRequestError, "cannot listen"),
    (lambda: Fake(socket_path="/tmp/" + "a" * 103), kw.InvalidArgumentError,
     "at most 107 bytes, got 108 bytes"),
    (lambda: Fake(socket_path="/tmp/a\x00b.sock"), kw.InvalidArgumentError, "NUL"),
    (lambda: Fake(socket_path="/tmp/\udc80.sock"), kw.InvalidArgumentError,
     "lone surrogate"),
    (lambda: Fake(policy=_Hostile()), kw.InvalidArgumentError, "got _Hostile"),
    (lambda: Fake(images=None), kw.InvalidArgumentError, "list of image names"),
    (lambda: Fake(images=_Hostile()), kw.InvalidArgumentError, "got _Hostile"),
    (lambda: Fake().requests(3), kw.InvalidArgumentError, "RPC name"),
    (lambda: Fake().stall("Version", float("nan")), kw.InvalidArgumentError,
     "from 0 to 3600, got nan"),
    (lambda: Fake().stall("Version", True), kw.InvalidArgumentError, "got True"),
    (lambda: Fake().stall("Version", -1), kw.InvalidArgumentError, "got -1"),
    (lambda: Fake().stall("Version", 10**400), kw.InvalidArgumentError, "3600"),
    (lambda: Fake().stall("Version", "1"), kw.InvalidArgumentError, "got str"),
    (lambda: Fake().stall("Exec", 1), kw.InvalidRequestError, "'Exec'"),
    (lambda: Fake().fail("x" * 10**6, "UNKNOWN"), kw.InvalidRequestError, "..."),
    (lambda: Fake().start().start(), kw.InvalidRequestError, "already started"),
])
def test_bad_arguments_get_typed_errors(make: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error) as caught:
        make()
    assert isinstance(caught.value, kw.WinnetError)
    assert words in str(caught.value)
    assert len(str(caught.value)) < 300


def test_a_stalled_call_ends_at_the_callers_deadline_and_stop_releases_it() -> None:
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint, timeout=0.3) as client:
        fake.stall("Version", 60)
        with pytest.raises(kw.CriError) as caught:
            client.version()
        assert caught.value.code == "DEADLINE_EXCEEDED"
        fake.reset()
        assert client.version().runtime_api_version == "v1"


def test_each_call_keeps_the_bytes_it_came_with() -> None:
    request = kw.run_pod_sandbox_request(POD, kubelet_version="1.32")
    with FakeRuntime() as fake, RuntimeClient(fake.endpoint) as client:
        client.run_pod_sandbox(request)
    # The hand-encoded NODE option (network = 2) inside config.windows is on the wire.
    assert bytes.fromhex("22 02 08 02") in fake.calls[0].data
    assert api_pb2.RunPodSandboxRequest.FromString(fake.calls[0].data) == request
