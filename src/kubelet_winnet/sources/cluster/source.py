"""Where ``audit`` reads nodes and pods: a live API server or a dump file.

Live: the official ``kubernetes`` client (connected and bounded by
:mod:`~kubelet_winnet.sources.cluster.kube_client`, only when a live audit runs) lists nodes, then
pods, page by page (``limit`` / ``continue``). Each page is fetched
with ``_preload_content=False`` and decoded with :func:`json.loads`, so the client never
builds model objects and memory follows one page, not the cluster.

Dump: ``kubectl get nodes,pods -A -o json`` (or YAML, or several files), read one item at
a time by the shared input layer (:mod:`kubelet_winnet.sources.manifests`).

Failures of the live path are :class:`~kubelet_winnet.errors.ClusterAccessError`, one line
each: what was being listed, what went wrong, and which permission is missing.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelet_winnet._printable import clip
from kubelet_winnet.errors import ClusterAccessError
from kubelet_winnet.sources.cluster.kube_client import (
    SOCKETS,
    ClientLog,
    connect,
    get_path,
    quiet_client,
    text_of,
)
from kubelet_winnet.sources.manifests import (
    DEFAULT_LIMITS,
    BadInput,
    Limits,
    Skipped,
    expand_paths,
    read_source,
)

__all__ = [
    "DEFAULT_PAGE_BYTES",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_REQUEST_TIMEOUT",
    "MAX_PAGES",
    "ClusterObject",
    "LiveCluster",
    "Node",
    "dump_objects",
    "node_from",
    "parse_timeout",
]

DEFAULT_PAGE_SIZE = 500  # kubectl's --chunk-size default
# What one list response may take. kubectl's --request-timeout defaults to 0 (no limit);
# audit must end, so it waits at most a minute for each page unless told otherwise.
DEFAULT_REQUEST_TIMEOUT = 60.0
DEFAULT_PAGE_BYTES = 128 * 1024 * 1024  # one page's body; 500 pods are a few MB
# Pages of one list: 5 million objects at the default page size, 33 times the 150,000
# pods Kubernetes is tested with (sig-scalability thresholds).
MAX_PAGES = 10_000
_READ = 1 << 16
# The well-known node label (k8s.io/api/core/v1 well_known_labels.go, LabelOSStable).
_OS_LABEL = "kubernetes.io/os"


@dataclass(frozen=True, slots=True)
class Node:
    """What audit needs of a node (``status.nodeInfo``): its OS (``""`` when the node
    says nothing), its kubelet version (``v1.30.4-eks-abc``) and runtime
    (``containerd://1.7.20``), as reported."""

    name: str
    os: str
    kubelet_version: str
    runtime: str



def node_from(obj: Mapping[str, Any]) -> Node:
    """A node object's audit facts; fields of the wrong type count as absent."""
    info = get_path(obj, "status", "nodeInfo")
    os_name = text_of(get_path(info, "operatingSystem")) or text_of(
        get_path(obj, "metadata", "labels", _OS_LABEL)
    )
    return Node(
        text_of(get_path(obj, "metadata", "name")),
        os_name,
        text_of(get_path(info, "kubeletVersion")),
        text_of(get_path(info, "containerRuntimeVersion")),
    )


@dataclass(frozen=True, slots=True)
class ClusterObject:
    """One node or pod of the input; ``where`` locates it for messages."""

    kind: str  # "Node" or "Pod"
    value: Mapping[str, Any]
    where: str


# Go's time.ParseDuration units (src/time/format.go unitMap), in seconds.
_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0,
          "m": 60.0, "h": 3600.0}
_PIECE = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_MAX_SECONDS = (2**63 - 1) / 1e9  # a Go time.Duration is int64 nanoseconds


def parse_timeout(text: str) -> float:
    """kubectl's ``--request-timeout`` value in seconds: a whole number of seconds, or a
    Go duration (``1m30s``, ``1.5h``, ``500ms``); 0 means no limit
    (k8s.io/client-go/tools/clientcmd/helpers.go ``ParseTimeout``). Raises
    :class:`ValueError`; negative values too, which kubectl reads as no limit."""
    if text.isascii() and text.isdigit():
        seconds = float(int(text)) if len(text) <= 19 else float("inf")
    else:
        body = text.removeprefix("+")
        if body.startswith("-"):
            raise ValueError("must not be negative (0 means no limit)")
        pos, seconds = 0, 0.0
        while pos < len(body):
            match = _PIECE.match(body, pos)
            if match is None:
                break
            seconds += float(match[1]) * _UNITS[match[2]]
            pos = match.end()
        if not body or pos != len(body):
            raise ValueError(
                "not a timeout: give whole seconds, or a number with a unit (1s, 2m, 3h)"
            )
    if seconds > _MAX_SECONDS:
        raise ValueError("longer than a Go duration can be (about 292 years)")
    return seconds


# --- dump ------------------------------------------------------------------------------


def dump_objects(
    paths: Sequence[str], on_bad: Callable[[str], None], limits: Limits = DEFAULT_LIMITS,
    on_other: Callable[[object], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> Iterator[ClusterObject]:
    """Nodes and pods of dump files, in file order, one at a time; other kinds go to
    ``on_other`` (their ``kind``), bad input to ``on_bad`` (one line), files a directory
    search skips and arguments that held nothing (empty files) to ``on_note``, and
    reading goes on."""
    for argument in paths:
        held = False  # an object or bad input: the argument held something
        for path in expand_paths([argument]):
            if isinstance(path, BadInput):
                on_bad(str(path))
                held = True
                continue
            if isinstance(path, Skipped):
                if on_note is not None:
                    on_note(str(path))
                continue
            for found in read_source(path, limits):
                held = True
                if isinstance(found, BadInput):
                    on_bad(str(found))
                    continue
                kind = found.value.get("kind")
                if kind in ("Node", "Pod", "RuntimeClass"):
                    yield ClusterObject(kind, found.value, f"{found.source}:{found.line}")
                elif on_other is not None:
                    on_other(kind)
        if not held and on_note is not None:
            on_note(f"no Kubernetes objects in {'<stdin>' if argument == '-' else argument}")


# --- live --------------------------------------------------------------------------------




def _describe_exception(exc: BaseException) -> str:
    """A short reason for a network failure: the OS error's text when there is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TimeoutError) or type(current).__name__.endswith("TimeoutError"):
            return "timed out"
        if isinstance(current, OSError) and current.strerror:
            return current.strerror.lower()
        reason = getattr(current, "reason", None)
        current = (
            reason if isinstance(reason, BaseException)
            else current.__cause__ or current.__context__
        )
    return type(exc).__name__


class LiveCluster:
    """Nodes, then pods, from the API server a kubeconfig context points at.

    ``namespace`` ``None`` means the context's namespace (``default`` when it names
    none), as kubectl does; ``all_namespaces`` lists pods cluster-wide.
    ``expected_pods`` is known after the first page of pods (the list's
    ``remainingItemCount``, when the server sends it).
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
        all_namespaces: bool = False,
        page_size: int = DEFAULT_PAGE_SIZE,
        timeout: tuple[float, float] = (10.0, 60.0),
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_page_bytes: int = DEFAULT_PAGE_BYTES,
    ) -> None:
        self._page_size = page_size
        # (connect, each read) for urllib3; request_timeout bounds a whole request
        # (connect, headers and body), as kubectl's --request-timeout does; 0: none.
        self._timeout = timeout
        self._request_timeout = request_timeout
        self._max_page_bytes = max_page_bytes
        self.all_namespaces = all_namespaces
        self.expected_pods: int | None = None
        self.pages = 0
        self._logged = ClientLog()
        with quiet_client(self._logged):
            self._api, self.host, context_namespace = connect(kubeconfig, context)
        self.namespace = namespace or context_namespace

    def objects(self) -> Iterator[ClusterObject]:
        with quiet_client(self._logged):
            try:
                yield from self._objects()
            except ClusterAccessError as exc:
                said = self._logged.first
                if said is None or exc.kind not in ("unreachable", "unauthorized"):
                    raise
                raise ClusterAccessError(  # the client's own reason, on the same line
                    exc.kind, f"{exc.message}; the kubernetes client logged: {said}",
                    status=exc.status, permission=exc.permission,
                ) from None

    def _objects(self) -> Iterator[ClusterObject]:
        for node in self._list("nodes", "list_node"):
            yield ClusterObject("Node", node, f"{self.host}: nodes")
        if self.all_namespaces:
            pods = self._list("pods", "list_pod_for_all_namespaces")
        else:
            pods = self._list("pods", "list_namespaced_pod", namespace=self.namespace)
        for pod in pods:
            metadata = pod.get("metadata")
            namespace, name = get_path(metadata, "namespace"), get_path(metadata, "name")
            name = f"{text_of(namespace)}/{text_of(name)}"
            yield ClusterObject("Pod", pod, f"{self.host}: pod {clip(name, 120)}")

    def _scope(self, resource: str) -> str:
        if resource == "nodes":
            return " (cluster-scoped)"
        return " in all namespaces" if self.all_namespaces else f' in namespace "{self.namespace}"'

    def _list(self, resource: str, method: str, **kwargs: Any) -> Iterator[Mapping[str, Any]]:
        call = getattr(self._api, method)
        token: str | None = None
        sent: set[bytes] = set()  # digests of the continue tokens of this list
        for page in range(1, MAX_PAGES + 2):
            what = f"listing {resource}{self._scope(resource)}, page {page}"
            if page > MAX_PAGES:
                raise ClusterAccessError(
                    "malformed",
                    f"the API server at {self.host} did not end the list after {MAX_PAGES} "
                    f"pages ({what}); raise --page-size if the cluster holds more than "
                    f"{MAX_PAGES * self._page_size} {resource}",
                )
            status, data = self._request(call, what, resource, token, kwargs)
            if not 200 <= status <= 299:
                raise self._status_error(resource, what, status, data)
            self.pages += 1
            items, token, remaining = self._page(data, what)
            if resource == "pods" and page == 1:
                self.expected_pods = len(items) + remaining if remaining is not None else None
            yield from items
            if not token:
                return
            digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"),
                                     digest_size=16).digest()
            if digest in sent:
                raise ClusterAccessError(
                    "malformed",
                    f"the API server at {self.host} sent a continue token it had sent "
                    f"before ({what}): the list would never end",
                )
            sent.add(digest)

    def _request(
        self, call: Callable[..., Any], what: str, resource: str, token: str | None,
        kwargs: dict[str, Any],
    ) -> tuple[int, bytes | bytearray]:
        """One page: the status and the body, read in a worker thread so that the whole
        request (connect, headers, body) ends within ``request_timeout`` even when the
        server trickles bytes (urllib3's read timeout is per read)."""
        limit = self._request_timeout
        read_timeout = min(self._timeout[1], limit) if limit > 0 else self._timeout[1]
        timeout = (min(self._timeout[0], read_timeout), read_timeout)
        stop = threading.Event()
        outcome: list[tuple[int, bytes | bytearray] | BaseException] = []

        def work() -> None:
            try:
                outcome.append(self._fetch(call, what, resource, token, kwargs, timeout, stop))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append(exc)
            finally:
                SOCKETS.forget()

        worker = threading.Thread(target=work, name="kubelet-winnet-list", daemon=True)
        worker.start()
        worker.join(limit if limit > 0 else None)
        if worker.is_alive():
            stop.set()  # the worker drops the connection at its next read
            # A thread still blocked in a read when the interpreter exits aborts the
            # process (status 134): end its reads now, and wait for it (a connect it is
            # in may take its own timeout), so the error line is the whole story.
            SOCKETS.abort(worker.ident)
            worker.join(timeout[0] + 1.0)
            raise ClusterAccessError(
                "timeout",
                f"the API server at {self.host} did not send the whole response within "
                f"--request-timeout {limit:g}s ({what})",
            )
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _fetch(
        self, call: Callable[..., Any], what: str, resource: str, token: str | None,
        kwargs: dict[str, Any], timeout: tuple[float, float], stop: threading.Event,
    ) -> tuple[int, bytes | bytearray]:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        try:
            response = call(
                limit=self._page_size, _continue=token, _preload_content=False,
                _request_timeout=timeout, **kwargs,
            )
        except ApiException as exc:
            raise self._status_error(resource, what, exc.status or 0, exc.body) from None
        except urllib3.exceptions.MaxRetryError as exc:
            raise ClusterAccessError(
                "unreachable",
                f"cannot reach the API server at {self.host}: "
                f"{_describe_exception(exc)} ({what})",
            ) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._read_error(exc, what) from None
        try:
            status = response.status
            body = bytearray()
            while not stop.is_set():
                piece = response.read1(_READ)  # what one read brings, at most _READ
                if not piece:
                    break
                body += piece
                if len(body) > self._max_page_bytes:
                    raise ClusterAccessError(
                        "malformed",
                        f"the API server at {self.host} sent more than "
                        f"{self._max_page_bytes} bytes for one page ({what}); lower "
                        "--page-size, or raise --max-bytes",
                    )
            return status if isinstance(status, int) else 0, body
        except ClusterAccessError:
            raise
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._read_error(exc, what) from None
        finally:
            response.close()  # never back to the pool: it may be half read

    def _read_error(self, exc: BaseException, what: str) -> ClusterAccessError:
        import urllib3

        if isinstance(exc, (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError)):
            return ClusterAccessError(
                "malformed",
                f"the API server at {self.host} closed the connection before the whole "
                f"response arrived ({what}; {type(exc).__name__})",
            )
        return ClusterAccessError(
            "unreachable",
            f"cannot talk to the API server at {self.host}: "
            f"{_describe_exception(exc)} ({what})",
        )

    def _page(
        self, data: object, what: str
    ) -> tuple[list[Mapping[str, Any]], str | None, int | None]:
        def bad(reason: str) -> ClusterAccessError:
            return ClusterAccessError(
                "malformed", f"the API server at {self.host} sent {reason} ({what})"
            )

        if not isinstance(data, (bytes, bytearray, str)):
            raise bad("no body")
        try:
            body = json.loads(data)
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(data) - 1 or exc.msg.startswith("Unterminated string")
            raise bad(
                "a body cut short" if cut
                else f"a body that is not JSON ({exc.msg} at byte {exc.pos})"
            ) from None
        except (ValueError, RecursionError):
            raise bad("a body that is not JSON") from None
        if not isinstance(body, dict):
            raise bad("a list response that is not an object")
        items = body.get("items")
        if items is None:
            items = []
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise bad("a list whose items are not objects")
        metadata = body.get("metadata")
        token = get_path(metadata, "continue")
        remaining = get_path(metadata, "remainingItemCount")
        if token is not None and not isinstance(token, str):
            raise bad("a continue token that is not a string")
        return (
            items,
            token or None,
            remaining if type(remaining) is int and remaining >= 0 else None,
        )

    def _status_error(
        self, resource: str, what: str, status: int, body: object
    ) -> ClusterAccessError:
        said = _server_message(body)
        said_text = f"; the API server said: {said}" if said else ""
        if status == 401:
            return ClusterAccessError(
                "unauthorized",
                f"the API server at {self.host} did not accept the kubeconfig's credentials "
                f"(401 Unauthorized, {what}){said_text}",
                status=401,
            )
        if status == 403:
            permission = f"list {resource}"
            return ClusterAccessError(
                "forbidden",
                f"forbidden (403): the kubeconfig's user may not {permission}"
                f"{self._scope(resource)}; grant the RBAC verb \"list\" on \"{resource}\" "
                f"({what}){said_text}",
                status=403,
                permission=permission,
            )
        if status == 410:
            return ClusterAccessError(
                "server",
                f"the list's continue token expired (410 Gone, {what}); run again{said_text}",
                status=410,
            )
        return ClusterAccessError(
            "server",
            f"the API server at {self.host} answered HTTP {status} ({what}){said_text}",
            status=status,
        )


def _server_message(body: object) -> str:
    """The ``message`` of a ``Status`` body, clipped; ``""`` when there is none."""
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body[:65536]).decode("utf-8", "replace")
    if not isinstance(body, str):
        return ""
    try:
        status = json.loads(body)
    except (ValueError, RecursionError):
        return clip(body, 200) if body.strip() else ""
    message = status.get("message") if isinstance(status, dict) else None
    return clip(message, 200) if isinstance(message, str) else ""


