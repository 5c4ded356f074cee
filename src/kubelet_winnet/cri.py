"""A small CRI ``runtime.v1`` client: drive a container runtime (containerd, CRI-O) with
the requests this library builds, without a kubelet.

Needs the optional extra ``kubelet-winnet[cri]`` (grpcio); ``grpc`` is imported when a
:class:`RuntimeClient` is created, so importing this module stays cheap. Calls go through
gRPC's generic unary API with our own ``runtime.v1`` messages; no generated gRPC stubs.

Every method is named after its RPC, returns the RPC's response message, and turns a
gRPC failure into :class:`~kubelet_winnet.errors.CriError` carrying the status code name
and the runtime's details::

    with RuntimeClient("unix:///run/containerd/containerd.sock") as runtime:
        sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from google.protobuf.message import Message

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import CriEndpointError, CriError, InvalidArgumentError

if TYPE_CHECKING:
    import grpc

__all__ = ["DEFAULT_TIMEOUT", "KUBELET_CRI_VERSION", "RuntimeClient"]

# Seconds per call. The kubelet's default --runtime-request-timeout is 2m; a tool wants
# to hear sooner that a runtime is stuck.
DEFAULT_TIMEOUT: Final = 30.0
# What the kubelet sends in VersionRequest.version (kuberuntime_manager.go,
# kubeRuntimeAPIVersion).
KUBELET_CRI_VERSION: Final = "0.1.0"
# The kubelet's CRI message size limit, both ways (pkg/kubelet/cri/remote/utils.go, now
# k8s.io/cri-client pkg/utils.go: maxMsgSize = 16 MiB).
_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024
# sockaddr_un.sun_path holds 108 bytes on Linux, NUL included.
_MAX_SOCKET_PATH_BYTES: Final = 107
_MAX_DETAILS: Final = 2000
_MAX_SHOWN: Final = 200
_SCHEME: Final = "unix://"

_RUNTIME: Final = "/runtime.v1.RuntimeService/"
_IMAGE: Final = "/runtime.v1.ImageService/"
_Request = TypeVar("_Request", bound=Message)
_Response = TypeVar("_Response", bound=Message)


def _shown(text: str) -> str:
    return cut(text, _MAX_SHOWN + 3)


def _socket_path(endpoint: object) -> str:
    """The socket path of a ``unix:///absolute/path`` endpoint, or a typed error."""
    if not isinstance(endpoint, str):
        raise InvalidArgumentError("endpoint", "a str such as 'unix:///path'", type_name(endpoint))
    shown = _shown(endpoint)
    if not endpoint.startswith(_SCHEME):
        scheme, sep, _ = endpoint.partition("://")
        reason = (
            f"unsupported scheme {_shown(scheme)!r}: only unix:// endpoints are supported"
            if sep
            else "expected unix:///path/to/socket"
        )
        raise CriEndpointError(shown, reason)
    path = endpoint[len(_SCHEME) :]
    if not path.startswith("/"):
        raise CriEndpointError(shown, "the socket path must be absolute (unix:///path)")
    if "\x00" in path:
        raise CriEndpointError(shown, "the socket path contains a NUL character")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise CriEndpointError(shown, "the socket path is not valid UTF-8") from None
    if size > _MAX_SOCKET_PATH_BYTES:
        raise CriEndpointError(
            shown, f"the socket path is {size} bytes; a unix socket path holds at most "
            f"{_MAX_SOCKET_PATH_BYTES}"
        )
    return path


def _timeout(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError("timeout", "seconds as a positive number", type_name(value))
    try:
        seconds = float(value)
    except OverflowError:  # an int past float's range
        raise InvalidArgumentError(
            "timeout", "seconds as a positive number", "a number too large for a float"
        ) from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise InvalidArgumentError("timeout", "seconds as a positive number", "not positive")
    return seconds


def _text(argument: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(argument, "a str", type_name(value))
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a runtime.v1 string must be UTF-8
            raise InvalidArgumentError(
                argument, "valid Unicode", "a str with a lone surrogate"
            ) from None
    return value


def _flag(argument: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(argument, "a bool", type_name(value))
    return value


def _message(argument: str, value: object, cls: type[_Request]) -> _Request:
    if not isinstance(value, cls):
        raise InvalidArgumentError(argument, cls.DESCRIPTOR.full_name, type_name(value))
    return value



def _details(error: grpc.RpcError) -> str:
    try:
        details = error.details()
    except Exception:  # an RpcError from an interceptor is any object: it may raise
        return ""
    if not isinstance(details, str):
        return ""
    return cut(details, _MAX_DETAILS + 3)


def _code(error: grpc.RpcError) -> str:
    try:
        code = error.code()
        name = code.name
    except Exception:  # likewise its code(), or a code without a name
        return "UNKNOWN"
    return name if isinstance(name, str) else "UNKNOWN"


class RuntimeClient:
    """A connection to a CRI runtime on a unix socket (``unix:///path``, crictl's
    ``--runtime-endpoint`` form). ``timeout`` bounds each call, in seconds.

    Connecting is lazy: a missing socket shows up as ``CriError`` with code
    ``UNAVAILABLE`` on the first call. Safe to share between threads. Close it (or use it
    as a context manager) to release the channel.
    """

    def __init__(self, endpoint: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.socket_path = _socket_path(endpoint)
        self.endpoint = endpoint
        self.timeout = _timeout(timeout)
        try:
            import grpc
        except ImportError:
            raise ImportError(
                "kubelet_winnet.cri needs grpcio: pip install 'kubelet-winnet[cri]'"
            ) from None
        self._grpc = grpc
        self._lock = threading.Lock()
        self._closed = False
        self._channel = grpc.insecure_channel(
            endpoint,
            options=[
                ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
            ],
        )
        self._calls: dict[str, Callable[..., Any]] = {}

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Release the channel; later calls raise ``CriError`` (``CANCELLED``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._channel.close()

    def __enter__(self) -> RuntimeClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<RuntimeClient {_shown(self.endpoint)!r} {state}>"

    # --- the generic unary call ---------------------------------------------------------

    def _call(self, method: str, request: Message, response: type[_Response]) -> _Response:
        with self._lock:
            if self._closed:
                raise CriError(method, "CANCELLED", "the RuntimeClient is closed")
            call = self._calls.get(method)
            if call is None:
                call = self._channel.unary_unary(
                    method,
                    request_serializer=type(request).SerializeToString,
                    response_deserializer=response.FromString,
                )
                self._calls[method] = call
        try:
            result = call(request, timeout=self.timeout)
        except self._grpc.RpcError as error:
            raise CriError(method, _code(error), _details(error)) from None
        except ValueError as error:  # grpc's "closed channel", raced with close()
            raise CriError(method, "CANCELLED", _shown(str(error))) from None
        if not isinstance(result, response):  # pragma: no cover - grpc guarantees it
            raise CriError(method, "INTERNAL", f"unexpected reply type {type_name(result)}")
        return result

    # --- RuntimeService -----------------------------------------------------------------

    def version(self, version: str = KUBELET_CRI_VERSION) -> api_pb2.VersionResponse:
        """``Version``: runtime name and versions; ``version`` is the caller's CRI version
        (the kubelet sends ``0.1.0``)."""
        request = api_pb2.VersionRequest(version=_text("version", version))
        return self._call(_RUNTIME + "Version", request, api_pb2.VersionResponse)

    def status(self, *, verbose: bool = False) -> api_pb2.StatusResponse:
        """``Status``: the runtime's conditions (RuntimeReady, NetworkReady)."""
        request = api_pb2.StatusRequest(verbose=_flag("verbose", verbose))
        return self._call(_RUNTIME + "Status", request, api_pb2.StatusResponse)

    def run_pod_sandbox(
        self, request: api_pb2.RunPodSandboxRequest
    ) -> api_pb2.RunPodSandboxResponse:
        """``RunPodSandbox``: create and start a sandbox; the reply holds its ID."""
        request = _message("request", request, api_pb2.RunPodSandboxRequest)
        return self._call(_RUNTIME + "RunPodSandbox", request, api_pb2.RunPodSandboxResponse)

    def pod_sandbox_status(
        self, pod_sandbox_id: str, *, verbose: bool = False
    ) -> api_pb2.PodSandboxStatusResponse:
        """``PodSandboxStatus``: state, network and metadata of one sandbox."""
        request = api_pb2.PodSandboxStatusRequest(
            pod_sandbox_id=_text("pod_sandbox_id", pod_sandbox_id),
            verbose=_flag("verbose", verbose),
        )
        return self._call(
            _RUNTIME + "PodSandboxStatus", request, api_pb2.PodSandboxStatusResponse
        )

    def stop_pod_sandbox(self, pod_sandbox_id: str) -> api_pb2.StopPodSandboxResponse:
        """``StopPodSandbox``: stop the sandbox's processes, release its network."""
        request = api_pb2.StopPodSandboxRequest(
            pod_sandbox_id=_text("pod_sandbox_id", pod_sandbox_id)
        )
        return self._call(_RUNTIME + "StopPodSandbox", request, api_pb2.StopPodSandboxResponse)

    def remove_pod_sandbox(self, pod_sandbox_id: str) -> api_pb2.RemovePodSandboxResponse:
        """``RemovePodSandbox``: delete a (stopped) sandbox and its containers."""
        request = api_pb2.RemovePodSandboxRequest(
            pod_sandbox_id=_text("pod_sandbox_id", pod_sandbox_id)
        )
        return self._call(
            _RUNTIME + "RemovePodSandbox", request, api_pb2.RemovePodSandboxResponse
        )

    def list_pod_sandbox(
        self, filter: api_pb2.PodSandboxFilter | None = None
    ) -> api_pb2.ListPodSandboxResponse:
        """``ListPodSandbox``: sandboxes matching ``filter`` (all when ``None``)."""
        request = api_pb2.ListPodSandboxRequest()
        if filter is not None:
            request.filter.CopyFrom(_message("filter", filter, api_pb2.PodSandboxFilter))
        return self._call(_RUNTIME + "ListPodSandbox", request, api_pb2.ListPodSandboxResponse)

    def create_container(
        self, request: api_pb2.CreateContainerRequest
    ) -> api_pb2.CreateContainerResponse:
        """``CreateContainer``: create a container in a sandbox; the reply holds its ID."""
        request = _message("request", request, api_pb2.CreateContainerRequest)
        return self._call(
            _RUNTIME + "CreateContainer", request, api_pb2.CreateContainerResponse
        )

    def start_container(self, container_id: str) -> api_pb2.StartContainerResponse:
        """``StartContainer``: start a created container."""
        request = api_pb2.StartContainerRequest(container_id=_text("container_id", container_id))
        return self._call(_RUNTIME + "StartContainer", request, api_pb2.StartContainerResponse)

    def container_status(
        self, container_id: str, *, verbose: bool = False
    ) -> api_pb2.ContainerStatusResponse:
        """``ContainerStatus``: state, labels and annotations of one container."""
        request = api_pb2.ContainerStatusRequest(
            container_id=_text("container_id", container_id), verbose=_flag("verbose", verbose)
        )
        return self._call(
            _RUNTIME + "ContainerStatus", request, api_pb2.ContainerStatusResponse
        )

    def stop_container(
        self, container_id: str, *, grace_period: int = 0
    ) -> api_pb2.StopContainerResponse:
        """``StopContainer``: stop a container; ``grace_period`` (seconds, the request's
        ``timeout``) before the runtime kills it, 0 kills at once."""
        if isinstance(grace_period, bool) or not isinstance(grace_period, int):
            raise InvalidArgumentError("grace_period", "an int", type_name(grace_period))
        if not 0 <= grace_period < 1 << 63:
            raise InvalidArgumentError("grace_period", "seconds from 0 to 2**63-1", "out of range")
        request = api_pb2.StopContainerRequest(
            container_id=_text("container_id", container_id), timeout=grace_period
        )
        return self._call(_RUNTIME + "StopContainer", request, api_pb2.StopContainerResponse)

    def remove_container(self, container_id: str) -> api_pb2.RemoveContainerResponse:
        """``RemoveContainer``: delete a container (stopping it first if needed)."""
        request = api_pb2.RemoveContainerRequest(
            container_id=_text("container_id", container_id)
        )
        return self._call(
            _RUNTIME + "RemoveContainer", request, api_pb2.RemoveContainerResponse
        )

    # --- ImageService -------------------------------------------------------------------

    def image_status(
        self, image: str | api_pb2.ImageSpec, *, verbose: bool = False
    ) -> api_pb2.ImageStatusResponse:
        """``ImageStatus``: the image, or a reply without ``image`` when the runtime does
        not have it (not an error)."""
        request = api_pb2.ImageStatusRequest(verbose=_flag("verbose", verbose))
        if isinstance(image, str):
            request.image.image = _text("image", image)
        else:
            request.image.CopyFrom(_message("image", image, api_pb2.ImageSpec))
        return self._call(_IMAGE + "ImageStatus", request, api_pb2.ImageStatusResponse)
