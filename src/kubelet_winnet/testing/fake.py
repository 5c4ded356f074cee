"""A recording fake CRI runtime: ``runtime.v1`` RuntimeService and ImageService on a
unix socket, served by grpcio's generic handlers with this library's messages (no
generated gRPC stubs, as ``kubelet_winnet.cri`` calls them).

It keeps sandboxes, containers and images in memory, answers as a runtime does (ids,
states, ``NOT_FOUND`` for an unknown id) and as the kubelet's CRI client, which crictl
links, requires (staging/src/k8s.io/cri-client/pkg: every image with an id and a size,
every container status with an image ref), records every call with its decoded request
and its bytes, and refuses a malformed request with ``INVALID_ARGUMENT``. The sandbox network is the
runtime half's plan (``kubelet_winnet.runtime.plan_sandbox_network``) under the
``policy`` given: ``"kep"`` honours ``namespace_options``, ``"containerd"`` takes the
node's network from ``host_process`` alone, as containerd does.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from google.protobuf.message import DecodeError, Message

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError
from kubelet_winnet.runtime import plan_sandbox_network

if TYPE_CHECKING:
    import grpc

__all__ = ["NODE_IP", "RPCS", "Call", "FakeRuntime"]

_SERVICES: Final = {
    name: api_pb2.DESCRIPTOR.services_by_name[name] for name in ("RuntimeService", "ImageService")
}
# Every RPC of both services: its name -> (service, request class, response class).
RPCS: Final[Mapping[str, tuple[str, type[Message], type[Message]]]] = {
    method.name: (
        service_name,
        getattr(api_pb2, method.input_type.name),
        getattr(api_pb2, method.output_type.name),
    )
    for service_name, service in _SERVICES.items()
    for method in service.methods
    if not method.client_streaming and not method.server_streaming
}
_CODES: Final = (
    "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
)
_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024  # the kubelet's limit (cri.py)
NODE_IP: Final = "192.0.2.10"  # TEST-NET-1 (RFC 5737): never a real node
# The kubelet's CRI client (and crictl, which links it) refuses an image whose id or
# size is unset ("Id or size of image %q is not set", cri-client remote_image.go).
_IMAGE_SIZE: Final = 1 << 20


@dataclass(frozen=True)
class Call:
    """One call the fake received: the RPC name (``RunPodSandbox``), its service
    (``RuntimeService`` or ``ImageService``), the decoded request message (``None``
    when its bytes were not that message) and ``data``, the request's bytes as they
    came off the wire."""

    method: str
    service: str
    request: Message | None
    data: bytes = b""

    @property
    def path(self) -> str:
        """The gRPC method path, ``/runtime.v1.RuntimeService/RunPodSandbox``."""
        return f"/runtime.v1.{self.service}/{self.method}"


@dataclass
class _Sandbox:
    config: api_pb2.PodSandboxConfig
    handler: str
    network: str  # "node" or "pod"
    ip: str
    created_at: int
    state: api_pb2.PodSandboxState.ValueType = api_pb2.SANDBOX_READY


@dataclass
class _Container:
    sandbox_id: str
    config: api_pb2.ContainerConfig
    created_at: int
    state: api_pb2.ContainerState.ValueType = api_pb2.CONTAINER_CREATED
    started_at: int = 0
    finished_at: int = 0


def _check_socket_path(socket_path: object) -> None:
    if not isinstance(socket_path, (str, os.PathLike)):
        raise InvalidArgumentError("socket_path", "a path or None", type_name(socket_path))
    path = os.fspath(socket_path)
    if not isinstance(path, str):
        raise InvalidArgumentError("socket_path", "a path as str", type_name(path))
    if "\x00" in path:
        raise InvalidArgumentError("socket_path", "a path without NUL", "a path with NUL")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidArgumentError("socket_path", "a path of valid Unicode",
                                   "a path with a lone surrogate") from None
    if size > 107:  # sun_path holds 108 bytes with the final NUL
        raise InvalidArgumentError("socket_path", "a unix socket path of at most 107 bytes",
                                   f"{size} bytes")


def _method(method: object) -> str:
    if not isinstance(method, str):
        raise InvalidArgumentError("method", "an RPC name such as 'RunPodSandbox'",
                                   type_name(method))
    name = method.rsplit("/", 1)[-1]
    if name not in RPCS:
        shown = cut(name, 80)
        raise InvalidRequestError("method", f"{shown!r} is not a unary RPC of runtime.v1 "
                                  "RuntimeService or ImageService")
    return name


class FakeRuntime:
    """A CRI runtime in this process for tests; use it as a context manager::

        with FakeRuntime() as runtime, RuntimeClient(runtime.endpoint) as client:
            client.run_pod_sandbox(request)
        runtime.assert_calls(["RunPodSandbox"])

    ``socket_path``: where to listen (default: a new temporary directory's
    ``cri.sock``); ``policy``: how the sandbox network is decided (``"kep"`` or
    ``"containerd"``); ``images``: the images it already has. ``runtime_name`` and
    ``runtime_version`` are what ``Version`` answers.

    A sandbox on the node's network reports the node's address, ``node_ip``
    (``192.0.2.10``), in ``PodSandboxStatus``; one on a pod network an address of
    ``10.244.0.0/24``. It serves every unary call crictl makes of a runtime it drives:
    sandboxes, containers (``ListContainers`` too), ``Version``, ``Status`` and the image
    calls (``PullImage``, ``ListImages``, ``ImageStatus``, ``RemoveImage``,
    ``ImageFsInfo``); any other call is ``UNIMPLEMENTED``.
    """

    node_ip: Final = NODE_IP

    def __init__(
        self,
        *,
        socket_path: str | os.PathLike[str] | None = None,
        policy: str = "kep",
        images: Sequence[str] = (),
        runtime_name: str = "kubelet-winnet-fake",
        runtime_version: str = "0.0.0",
    ) -> None:
        if socket_path is not None:
            _check_socket_path(socket_path)
        if not isinstance(policy, str) or policy not in ("kep", "containerd"):
            raise InvalidArgumentError("policy", "'kep' or 'containerd'", type_name(policy)
                                       if not isinstance(policy, str) else repr(policy)[:80])
        if (not isinstance(images, (list, tuple, set, frozenset))
                or not all(isinstance(i, str) for i in images)):
            raise InvalidArgumentError("images", "a list of image names (str)",
                                       type_name(images))
        for argument, value in (("runtime_name", runtime_name),
                                ("runtime_version", runtime_version)):
            if not isinstance(value, str):
                raise InvalidArgumentError(argument, "a str", type_name(value))
        self.policy = policy
        self.runtime_name = runtime_name
        self.runtime_version = runtime_version
        self._own_directory: tempfile.TemporaryDirectory[str] | None = None
        self._socket = Path(socket_path) if socket_path is not None else None
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._failures: dict[str, tuple[str, str]] = {}
        self._canned: dict[str, Message | bytes] = {}
        self._stalls: dict[str, float] = {}
        self._stopping = threading.Event()
        self._sandboxes: dict[str, _Sandbox] = {}
        self._containers: dict[str, _Container] = {}
        self._images: set[str] = set(images)
        self._ids = itertools.count(1)
        self._server: grpc.Server | None = None

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The ``unix://`` URL to give ``RuntimeClient`` or
        ``crictl --runtime-endpoint``; known once started."""
        if self._socket is None or self._server is None:
            raise InvalidRequestError("endpoint", "the FakeRuntime is not started: use it "
                                      "as a context manager or call start()")
        return f"unix://{self._socket}"

    def start(self) -> FakeRuntime:
        """Listen on the socket; returns the fake itself."""
        try:
            import grpc
        except ImportError:
            raise ImportError("FakeRuntime needs grpcio: "
                              "pip install 'kubelet-winnet[testing]'") from None
        if self._server is not None:
            raise InvalidRequestError("start", "the FakeRuntime is already started")
        if self._socket is None:
            self._own_directory = tempfile.TemporaryDirectory(prefix="kw-fake-cri-")
            self._socket = Path(self._own_directory.name) / "cri.sock"
        from concurrent import futures

        # What it receives is capped as a runtime caps it; what it sends is not, so a
        # test can put a reply past the client's limit on the wire.
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8),
            options=[("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES)],
        )
        server.add_generic_rpc_handlers((_handler(self, grpc),))
        try:
            server.add_insecure_port(f"unix://{self._socket}")
        except RuntimeError:  # grpcio's only word for a bind that failed
            raise InvalidRequestError(
                "socket_path", f"cannot listen on {str(self._socket)[:200]} (does its "
                "directory exist, and is the path at most 107 bytes?)") from None
        server.start()
        self._stopping.clear()
        self._server = server
        return self

    def stop(self) -> None:
        """Stop serving (calls in flight are cancelled) and remove the socket."""
        server, self._server = self._server, None
        self._stopping.set()  # wakes the calls a stall() holds
        if server is not None:
            server.stop(grace=None).wait(10)
        if self._socket is not None:
            self._socket.unlink(missing_ok=True)
        if self._own_directory is not None:
            self._own_directory.cleanup()
            self._own_directory = None
            self._socket = None

    def __enter__(self) -> FakeRuntime:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    # --- what a test arranges -----------------------------------------------------------

    def fail(self, method: str, code: str, details: str = "") -> None:
        """Answer every later call of ``method`` (``"RunPodSandbox"``) with the gRPC
        status ``code`` (its name, ``"UNAVAILABLE"``) and ``details``, until
        ``reset``."""
        name = _method(method)
        if not isinstance(code, str) or code not in _CODES:
            raise InvalidArgumentError("code", "a gRPC status code name other than OK, "
                                       "such as 'UNAVAILABLE'",
                                       repr(code)[:80] if isinstance(code, str)
                                       else type_name(code))
        if not isinstance(details, str):
            raise InvalidArgumentError("details", "a str", type_name(details))
        with self._lock:
            self._failures[name] = (code, details)

    def reply(self, method: str, response: Message | bytes) -> None:
        """Answer every later call of ``method`` with ``response``: its response message,
        or raw bytes (truncated, unknown fields, junk) put on the wire as they are."""
        name = _method(method)
        expected = RPCS[name][2]
        if not isinstance(response, (expected, bytes)):
            raise InvalidArgumentError("response", f"a {expected.DESCRIPTOR.full_name} or "
                                       "bytes", type_name(response))
        with self._lock:
            self._canned[name] = response

    def stall(self, method: str, seconds: float) -> None:
        """Hold every later call of ``method`` for ``seconds`` before answering it (a
        runtime that hangs: the caller's deadline should end the call), until
        ``reset``; ``stop`` releases the calls held."""
        name = _method(method)
        if (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
                or not 0 <= seconds <= 3600):
            raise InvalidArgumentError("seconds", "a number of seconds from 0 to 3600",
                                       repr(seconds)[:80] if isinstance(seconds, (int, float))
                                       else type_name(seconds))
        with self._lock:
            self._stalls[name] = float(seconds)

    def reset(self) -> None:
        """Forget the recorded calls, the failures, the stalls and the canned replies."""
        with self._lock:
            self._calls.clear()
            self._failures.clear()
            self._canned.clear()
            self._stalls.clear()

    # --- what a test reads ----------------------------------------------------------------

    @property
    def calls(self) -> tuple[Call, ...]:
        """Every call received, in order."""
        with self._lock:
            return tuple(self._calls)

    @overload
    def requests(self, method: Literal["RunPodSandbox"]
                 ) -> tuple[api_pb2.RunPodSandboxRequest, ...]: ...

    @overload
    def requests(self, method: Literal["CreateContainer"]
                 ) -> tuple[api_pb2.CreateContainerRequest, ...]: ...

    @overload
    def requests(self, method: str) -> tuple[Message, ...]: ...

    def requests(self, method: str) -> tuple[Any, ...]:
        """The decoded requests of every call of ``method``, in order (typed as their
        messages for ``RunPodSandbox`` and ``CreateContainer``)."""
        name = _method(method)
        return tuple(c.request for c in self.calls if c.method == name and c.request is not None)

    def sandbox_network(self, pod_sandbox_id: str) -> str:
        """``"node"`` or ``"pod"``: the network the sandbox got under the fake's policy."""
        with self._lock:
            sandbox = self._sandboxes.get(pod_sandbox_id) if isinstance(
                pod_sandbox_id, str) else None
        if sandbox is None:
            raise InvalidRequestError("pod_sandbox_id", "no such sandbox")
        return sandbox.network

    def assert_calls(self, expected: Sequence[str | tuple[str, Message]]) -> None:
        """Raise ``AssertionError`` unless the calls received are exactly ``expected``, in
        order: each an RPC name, or (name, request) to compare the request too."""
        __tracebackhide__ = True
        if isinstance(expected, (str, bytes)) or not isinstance(expected, Sequence):
            raise InvalidArgumentError("expected", "a list of RPC names or (name, request)",
                                       type_name(expected))
        wanted: list[tuple[str, Message | None]] = []
        for index, item in enumerate(expected):
            if isinstance(item, str):
                wanted.append((_method(item), None))
            elif (isinstance(item, tuple) and len(item) == 2
                  and isinstance(item[1], Message)):
                wanted.append((_method(item[0]), item[1]))
            else:
                raise InvalidArgumentError(f"expected[{index}]", "an RPC name or "
                                           "(name, request message)", type_name(item))
        got = self.calls
        problems = []
        for index in range(max(len(wanted), len(got))):
            want = wanted[index] if index < len(wanted) else None
            call = got[index] if index < len(got) else None
            if want is None:
                problems.append(f"call {index}: {call.method if call else ''} was not expected")
            elif call is None:
                problems.append(f"call {index}: expected {want[0]}, none was made")
            elif call.method != want[0]:
                problems.append(f"call {index}: expected {want[0]}, received {call.method}")
            elif want[1] is not None and call.request != want[1]:
                problems.append(f"call {index}: {call.method}'s request differs from the "
                                "one expected")
        if problems:
            made = ", ".join(c.method for c in got) or "none"
            raise AssertionError("the calls differ: " + "; ".join(problems)
                                 + f" (received: {made})")

    # --- the runtime ----------------------------------------------------------------------

    def _answer(self, method: str, data: bytes) -> tuple[bytes, tuple[str, str] | None]:
        """Record the call; the reply bytes, or the (code, details) to abort with."""
        service, request_class, _ = RPCS[method]
        try:
            request: Message | None = request_class.FromString(data)
        except DecodeError:
            request = None
        with self._lock:
            self._calls.append(Call(method, service, request, bytes(data)))
            failure = self._failures.get(method)
            canned = self._canned.get(method)
            stall = self._stalls.get(method)
        if stall:
            self._stopping.wait(stall)
        if failure is not None:
            return b"", failure
        if request is None:
            return b"", ("INVALID_ARGUMENT", f"malformed request: not a serialized "
                         f"{request_class.DESCRIPTOR.full_name}")
        if canned is not None:
            return (canned if isinstance(canned, bytes) else canned.SerializeToString()), None
        try:
            response = self._serve(method, request)
        except InvalidRequestError as error:
            return b"", ("INVALID_ARGUMENT", str(error))
        except LookupError as error:
            return b"", ("NOT_FOUND", str(error.args[0]))
        if response is None:
            return b"", ("UNIMPLEMENTED", f"the fake runtime does not implement {method}")
        return response.SerializeToString(), None

    def _serve(self, method: str, request: Any) -> Message | None:
        handler: Callable[[Any], Message] | None = getattr(self, f"_rpc_{method}", None)
        if handler is None:
            return None
        with self._lock:
            return handler(request)

    def _next_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    def _sandbox(self, pod_sandbox_id: str) -> _Sandbox:
        sandbox = self._sandboxes.get(pod_sandbox_id)
        if sandbox is None:
            raise LookupError(f'an error occurred when try to find sandbox "{pod_sandbox_id}":'
                              " not found")
        return sandbox

    def _container(self, container_id: str) -> _Container:
        container = self._containers.get(container_id)
        if container is None:
            raise LookupError(f'an error occurred when try to find container "{container_id}":'
                              " not found")
        return container

    def _rpc_Version(self, request: api_pb2.VersionRequest) -> Message:
        return api_pb2.VersionResponse(version="0.1.0", runtime_name=self.runtime_name,
                                       runtime_version=self.runtime_version,
                                       runtime_api_version="v1")

    def _rpc_Status(self, request: api_pb2.StatusRequest) -> Message:
        return api_pb2.StatusResponse(status=api_pb2.RuntimeStatus(conditions=[
            api_pb2.RuntimeCondition(type="RuntimeReady", status=True),
            api_pb2.RuntimeCondition(type="NetworkReady", status=True),
        ]))

    def _rpc_RunPodSandbox(self, request: api_pb2.RunPodSandboxRequest) -> Message:
        metadata = request.config.metadata
        if not request.HasField("config") or not request.config.HasField("metadata"):
            raise InvalidRequestError("config.metadata", "required: the sandbox's name, "
                                      "namespace and uid")
        for name in ("name", "namespace", "uid"):
            if not getattr(metadata, name):
                raise InvalidRequestError(f"config.metadata.{name}", "must not be empty")
        plan = plan_sandbox_network(request, policy=self.policy)  # type: ignore[arg-type]
        pod_sandbox_id = self._next_id("sandbox")
        index = len(self._sandboxes) + 1
        self._sandboxes[pod_sandbox_id] = _Sandbox(
            api_pb2.PodSandboxConfig.FromString(request.config.SerializeToString()),
            request.runtime_handler, "node" if plan.host_network else "pod",
            NODE_IP if plan.host_network else f"10.244.0.{index % 250 + 2}", time.time_ns(),
        )
        return api_pb2.RunPodSandboxResponse(pod_sandbox_id=pod_sandbox_id)

    def _rpc_PodSandboxStatus(self, request: api_pb2.PodSandboxStatusRequest) -> Message:
        sandbox = self._sandbox(request.pod_sandbox_id)
        status = api_pb2.PodSandboxStatus(
            id=request.pod_sandbox_id, metadata=sandbox.config.metadata, state=sandbox.state,
            created_at=sandbox.created_at, labels=sandbox.config.labels,
            annotations=sandbox.config.annotations, runtime_handler=sandbox.handler,
            network=api_pb2.PodSandboxNetworkStatus(ip=sandbox.ip),
        )
        response = api_pb2.PodSandboxStatusResponse(status=status)
        if request.verbose:  # the fake's own verbose info: the network it gave
            response.info["info"] = json.dumps({"network": sandbox.network})
        return response

    def _rpc_StopPodSandbox(self, request: api_pb2.StopPodSandboxRequest) -> Message:
        if request.pod_sandbox_id in self._sandboxes:  # a runtime stops an unknown one too
            self._sandboxes[request.pod_sandbox_id].state = api_pb2.SANDBOX_NOTREADY
            for container in self._containers.values():
                if container.sandbox_id == request.pod_sandbox_id:
                    container.state = api_pb2.CONTAINER_EXITED
        return api_pb2.StopPodSandboxResponse()

    def _rpc_RemovePodSandbox(self, request: api_pb2.RemovePodSandboxRequest) -> Message:
        self._sandboxes.pop(request.pod_sandbox_id, None)
        for container_id in [c for c, v in self._containers.items()
                             if v.sandbox_id == request.pod_sandbox_id]:
            del self._containers[container_id]
        return api_pb2.RemovePodSandboxResponse()

    def _rpc_ListPodSandbox(self, request: api_pb2.ListPodSandboxRequest) -> Message:
        wanted = request.filter
        items = []
        for pod_sandbox_id, sandbox in self._sandboxes.items():
            if wanted.id and pod_sandbox_id != wanted.id:
                continue
            if wanted.HasField("state") and sandbox.state != wanted.state.state:
                continue
            if any(sandbox.config.labels.get(k) != v for k, v in wanted.label_selector.items()):
                continue
            items.append(api_pb2.PodSandbox(
                id=pod_sandbox_id, metadata=sandbox.config.metadata, state=sandbox.state,
                created_at=sandbox.created_at, labels=sandbox.config.labels,
                annotations=sandbox.config.annotations, runtime_handler=sandbox.handler,
            ))
        return api_pb2.ListPodSandboxResponse(items=items)

    def _rpc_CreateContainer(self, request: api_pb2.CreateContainerRequest) -> Message:
        self._sandbox(request.pod_sandbox_id)
        if not request.config.metadata.name:
            raise InvalidRequestError("config.metadata.name", "must not be empty")
        if not request.config.image.image:
            raise InvalidRequestError("config.image.image", "must not be empty")
        container_id = self._next_id("container")
        self._containers[container_id] = _Container(
            request.pod_sandbox_id,
            api_pb2.ContainerConfig.FromString(request.config.SerializeToString()),
            time.time_ns(),
        )
        return api_pb2.CreateContainerResponse(container_id=container_id)

    def _rpc_StartContainer(self, request: api_pb2.StartContainerRequest) -> Message:
        container = self._container(request.container_id)
        if container.state != api_pb2.CONTAINER_CREATED:
            raise InvalidRequestError("container_id", "the container is not in the created "
                                      "state")
        container.state, container.started_at = api_pb2.CONTAINER_RUNNING, time.time_ns()
        return api_pb2.StartContainerResponse()

    def _rpc_StopContainer(self, request: api_pb2.StopContainerRequest) -> Message:
        container = self._container(request.container_id)
        if container.state == api_pb2.CONTAINER_RUNNING:
            container.state, container.finished_at = api_pb2.CONTAINER_EXITED, time.time_ns()
        return api_pb2.StopContainerResponse()

    def _rpc_RemoveContainer(self, request: api_pb2.RemoveContainerRequest) -> Message:
        self._containers.pop(request.container_id, None)
        return api_pb2.RemoveContainerResponse()

    def _rpc_ContainerStatus(self, request: api_pb2.ContainerStatusRequest) -> Message:
        container = self._container(request.container_id)
        return api_pb2.ContainerStatusResponse(status=api_pb2.ContainerStatus(
            id=request.container_id, metadata=container.config.metadata,
            state=container.state, created_at=container.created_at,
            started_at=container.started_at, finished_at=container.finished_at,
            image=container.config.image,
            image_ref=_image_id(container.config.image.image),
            labels=container.config.labels, annotations=container.config.annotations,
        ))

    def _rpc_ListContainers(self, request: api_pb2.ListContainersRequest) -> Message:
        wanted = request.filter
        items = []
        for container_id, container in self._containers.items():
            if wanted.id and container_id != wanted.id:
                continue
            if wanted.pod_sandbox_id and container.sandbox_id != wanted.pod_sandbox_id:
                continue
            if wanted.HasField("state") and container.state != wanted.state.state:
                continue
            if any(container.config.labels.get(k) != v
                   for k, v in wanted.label_selector.items()):
                continue
            items.append(api_pb2.Container(
                id=container_id, pod_sandbox_id=container.sandbox_id,
                metadata=container.config.metadata, image=container.config.image,
                image_ref=_image_id(container.config.image.image), state=container.state,
                created_at=container.created_at, labels=container.config.labels,
                annotations=container.config.annotations,
            ))
        return api_pb2.ListContainersResponse(containers=items)

    def _rpc_ImageStatus(self, request: api_pb2.ImageStatusRequest) -> Message:
        name = request.image.image
        if name not in self._images:
            return api_pb2.ImageStatusResponse()  # absent: not an error
        return api_pb2.ImageStatusResponse(image=_image(name))

    def _rpc_ListImages(self, request: api_pb2.ListImagesRequest) -> Message:
        wanted = request.filter.image.image
        return api_pb2.ListImagesResponse(images=[
            _image(name) for name in sorted(self._images) if not wanted or name == wanted])

    def _rpc_PullImage(self, request: api_pb2.PullImageRequest) -> Message:
        name = request.image.image
        if not name:
            raise InvalidRequestError("image.image", "must not be empty")
        self._images.add(name)
        return api_pb2.PullImageResponse(image_ref=_image_id(name))

    def _rpc_RemoveImage(self, request: api_pb2.RemoveImageRequest) -> Message:
        self._images.discard(request.image.image)  # removing an absent image is no error
        return api_pb2.RemoveImageResponse()

    def _rpc_ImageFsInfo(self, request: api_pb2.ImageFsInfoRequest) -> Message:
        # The CRI client's first call to an image service (its connection check).
        return api_pb2.ImageFsInfoResponse()


def _image_id(name: str) -> str:
    """The fake's content id of an image: a digest of its name, as stable as a real one."""
    return "sha256:" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def _image(name: str) -> api_pb2.Image:
    return api_pb2.Image(id=_image_id(name), repo_tags=[name], size=_IMAGE_SIZE,
                         spec=api_pb2.ImageSpec(image=name))


def _handler(fake: FakeRuntime, grpc: Any) -> Any:
    """grpcio's generic handler: raw bytes in and out, every unary ``runtime.v1`` path."""

    class Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
        def service(self, details: grpc.HandlerCallDetails) -> Any:
            prefix, _, name = details.method.rpartition("/")
            if name not in RPCS or prefix != f"/runtime.v1.{RPCS[name][0]}":
                return None  # grpcio answers UNIMPLEMENTED

            def handle(request: bytes, context: Any) -> bytes:
                reply, failure = fake._answer(name, request)
                if failure is not None:
                    context.abort(getattr(grpc.StatusCode, failure[0]), failure[1])
                return reply

            return grpc.unary_unary_rpc_method_handler(handle)

    return Handler()
