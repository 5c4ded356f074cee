"""The official ``kubernetes`` client, connected for a live audit and kept within bounds.

:func:`connect` reads the kubeconfig through the bounded input layer (merged as kubectl
merges KUBECONFIG's files) and hands the client the parsed configuration; the client's
pool manager reports its sockets to :data:`SOCKETS` (so a request given up on can be
ended) and reads error bodies only up to 64 KiB; :func:`quiet_client` keeps the client's
log records off stderr. The listing itself is
:class:`~kubelet_winnet.sources.cluster.source.LiveCluster`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kubelet_winnet._printable import clip
from kubelet_winnet.errors import ClusterAccessError
from kubelet_winnet.sources.manifests import BadInput, Named

__all__ = ["SOCKETS", "ClientLog", "connect", "get_path", "quiet_client", "text_of"]


def get_path(node: object, *keys: str) -> object:
    """The value at ``keys`` under ``node``; ``None`` where a step is not a mapping."""
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def text_of(value: object) -> str:
    return value if isinstance(value, str) else ""



class ClientLog(logging.Handler):
    """Takes every record the client libraries log while audit runs; keeps the first
    error's text (an exec credential plugin that failed, say) for the error line."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.first: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.first is None and record.levelno >= logging.ERROR:
            try:
                self.first = clip(record.getMessage(), 200)
            except Exception:  # a record whose arguments do not format
                self.first = clip(str(record.msg), 200)


# The loggers of the client and its HTTP library. The client also logs with the root
# logger's functions (logging.error(...) in its exec provider), which install a stderr
# handler on the root logger when it has none.
_CLIENT_LOGGERS = ("kubernetes", "urllib3")


@contextmanager
def quiet_client(log: ClientLog) -> Iterator[None]:
    """While it is open, the client's log records go to ``log`` and nowhere else, so that
    audit's one error line stays the only diagnostic; the loggers are as they were
    after (a root handler the client installed meanwhile is removed)."""
    root = logging.getLogger()
    loggers = [logging.getLogger(name) for name in _CLIENT_LOGGERS]
    saved = [(logger.handlers[:], logger.propagate) for logger in loggers]
    root_handlers = root.handlers[:]
    for logger in loggers:
        logger.handlers = [log]
        logger.propagate = False
    root.handlers = [log]  # not empty: logging.error() installs nothing
    try:
        yield
    finally:
        for logger, (handlers, propagate) in zip(loggers, saved, strict=True):
            logger.handlers = handlers
            logger.propagate = propagate
        root.handlers = root_handlers


def connect(kubeconfig: str | None, context: str | None) -> tuple[Any, str, str]:
    """A ``CoreV1Api`` for the context, the server URL and the context's namespace."""
    try:
        from kubernetes import client
        from kubernetes import config as typed_config
    except ImportError:
        raise ClusterAccessError(
            "kubeconfig",
            "a live audit needs the kubernetes client: pip install 'kubelet-winnet[audit]' "
            "(or read a dump with -f)",
        ) from None
    import yaml

    config: Any = typed_config  # load_kube_config and friends carry no annotations
    where = kubeconfig or "the default kubeconfig (KUBECONFIG or ~/.kube/config)"
    if kubeconfig is not None and not os.path.isfile(kubeconfig):
        state = "is not a file" if os.path.exists(kubeconfig) else "does not exist"
        raise ClusterAccessError(
            "kubeconfig", f"the kubeconfig {kubeconfig} {state} (or read a dump with -f)"
        )
    configuration = client.Configuration()
    # The files are read here, through the bounded input layer; the client gets the
    # parsed, merged configuration and never parses a file itself (a few hundred bytes of
    # nested YAML aliases took it to a MemoryError).
    merged = _read_kubeconfig(kubeconfig, where)
    try:
        loader = config.kube_config.KubeConfigLoader(
            config_dict=merged, active_context=context, config_base_path=None,
        )
        loader.load_and_set(configuration)
        contexts, active = loader.list_contexts(), loader.current_context
    except (config.ConfigException, OSError, ValueError, TypeError, KeyError,
            AttributeError, yaml.YAMLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else clip(
            str(exc) if isinstance(exc, config.ConfigException) else type(exc).__name__, 200
        )
        if "No configuration found" in reason:  # the client's words for "no file"
            reason = "there is no kubeconfig there (pass --kubeconfig, or read a dump with -f)"
        raise ClusterAccessError("kubeconfig", f"cannot use {where}: {reason}") from None
    chosen = active
    if context is not None:
        chosen = next((c for c in contexts or () if get_path(c, "name") == context), active)
    namespace = text_of(get_path(chosen, "context", "namespace")) or "default"
    configuration.retries = 1  # a refused connection is reported, not retried for long
    api_client = client.ApiClient(configuration)
    rest = getattr(api_client, "rest_client", None)
    manager = getattr(rest, "pool_manager", None)
    if manager is not None:  # error bodies are read by the client itself: bound them
        _track_sockets(manager)
        rest.pool_manager = _BoundedBodies(manager)  # type: ignore[union-attr]
    api = client.CoreV1Api(api_client)
    return api, str(configuration.host), namespace


_ERROR_BODY = 65536  # bytes of a body the client reads itself (a Status message)
# A kubeconfig is a few kilobytes; this holds hundreds of embedded certificates.
_KUBECONFIG_BYTES = 16 * 1024 * 1024


def _read_kubeconfig(kubeconfig: str | None, where: str) -> Any:
    """The kubeconfig the client would load, read through the input layer (byte, depth
    and YAML alias bounds; a refusal is a ``ClusterAccessError`` naming file:line) and
    merged as kubectl merges the files of KUBECONFIG (client-go's loading rules: the
    first file to name a cluster, context or user, or to set current-context, wins; each
    entry keeps the file its relative paths are resolved against). ``--kubeconfig`` is
    one file, as kubectl's is."""
    from dataclasses import replace

    from kubernetes.config import kube_config

    node: Any = kube_config.ConfigNode  # unannotated

    from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, read_source

    if kubeconfig is not None:
        paths: list[str] = [Named(kubeconfig)]  # named by the user: it may be <(...)
    else:
        listed = os.environ.get("KUBECONFIG") or "~/.kube/config"
        paths = [os.path.expanduser(p) for p in listed.split(os.pathsep) if p]
        paths = [p for p in paths if os.path.exists(p)]
    limits = replace(DEFAULT_LIMITS, max_bytes=_KUBECONFIG_BYTES)
    merged: Any = None
    for path in paths:
        documents = []
        for found in read_source(path, limits):
            if isinstance(found, BadInput):
                raise ClusterAccessError("kubeconfig", f"cannot use the kubeconfig {found}")
            documents.append(found.value)
            if len(documents) > 1:
                raise ClusterAccessError(
                    "kubeconfig",
                    f"cannot use the kubeconfig {path}:{found.line}: a second YAML document "
                    "(a kubeconfig is one)",
                )
        if not documents:
            raise ClusterAccessError("kubeconfig", f"cannot use the kubeconfig {path}: it is "
                                     "empty")
        document = documents[0]
        if merged is None:
            merged = node(path, {**document, "clusters": [], "contexts": [], "users": []}, path)
            merged.value.pop("current-context", None)
        for section in ("clusters", "contexts", "users"):
            entries = document.get(section) or []
            if not isinstance(entries, list):
                raise ClusterAccessError(
                    "kubeconfig", f"cannot use the kubeconfig {path}: {section} is not a list"
                )
            known = {get_path(entry.value, "name") for entry in merged.value[section]}
            for entry in entries:
                if not isinstance(entry, dict):
                    raise ClusterAccessError(
                        "kubeconfig",
                        f"cannot use the kubeconfig {path}: an entry of {section} is not "
                        "a mapping",
                    )
                if entry.get("name") not in known:
                    known.add(entry.get("name"))
                    merged.value[section].append(node(f"{path}/{section}", entry, path))
        if "current-context" not in merged.value and document.get("current-context"):
            merged.value["current-context"] = document["current-context"]
    if merged is None:
        raise ClusterAccessError("kubeconfig", f"cannot use {where}: there is no kubeconfig "
                                 "there (pass --kubeconfig, or read a dump with -f)")
    return merged


class _ThreadSockets:
    """The sockets each list worker thread has opened, so that the waiting thread can
    end a request it gave up on: ``shutdown`` makes a blocked ``recv`` return at once,
    and a thread marked aborted opens no new connection (urllib3 would retry)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, list[socket.socket]] = {}
        self._aborted: set[int] = set()

    def opened(self, sock: socket.socket) -> None:
        ident = threading.get_ident()
        with self._lock:
            self._open.setdefault(ident, []).append(sock)
            aborted = ident in self._aborted
        if aborted:
            _shutdown(sock)

    def check(self) -> None:
        if threading.get_ident() in self._aborted:
            raise ConnectionAbortedError("the request was given up (--request-timeout)")

    def abort(self, ident: int | None) -> None:
        if ident is None:
            return
        with self._lock:
            self._aborted.add(ident)
            sockets = list(self._open.get(ident, ()))
        for sock in sockets:
            _shutdown(sock)

    def forget(self) -> None:
        ident = threading.get_ident()
        with self._lock:
            self._open.pop(ident, None)
            self._aborted.discard(ident)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed, or never connected
        sock.shutdown(socket.SHUT_RDWR)


SOCKETS = _ThreadSockets()


def _track_sockets(manager: Any) -> None:
    """Give the client's pool manager connections that report their sockets to
    ``SOCKETS``; a manager with pools of its own (a SOCKS proxy) is left as it is."""
    import urllib3
    from urllib3.connection import HTTPConnection, HTTPSConnection

    pools = getattr(manager, "pool_classes_by_scheme", None)
    if pools != {"http": urllib3.HTTPConnectionPool, "https": urllib3.HTTPSConnectionPool}:
        return

    class Tracked(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            SOCKETS.check()
            sock = super()._new_conn()
            SOCKETS.opened(sock)
            return sock

    class TrackedTLS(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            SOCKETS.check()
            sock = super()._new_conn()
            SOCKETS.opened(sock)
            return sock

    class Pool(urllib3.HTTPConnectionPool):
        ConnectionCls = Tracked

    class TLSPool(urllib3.HTTPSConnectionPool):
        ConnectionCls = TrackedTLS

    manager.pool_classes_by_scheme = {"http": Pool, "https": TLSPool}


class _BoundedBodies:
    """The client's urllib3 pool manager, whose responses' ``data`` (read whole by the
    ``kubernetes`` client for an error status, before it raises) stops after
    ``_ERROR_BODY`` bytes: a 500 with a body that never ends costs 64 KiB, not memory
    without bound. Everything else is the pool manager's own."""

    def __init__(self, manager: Any) -> None:
        self._manager = manager

    def request(self, *args: Any, **kwargs: Any) -> Any:
        return _BoundedResponse(self._manager.request(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)


class _BoundedResponse:
    def __init__(self, response: Any) -> None:
        self._response = response
        self._data: bytes | None = None

    @property
    def data(self) -> bytes:
        if self._data is None:
            body = bytearray()
            while len(body) < _ERROR_BODY:
                piece = self._response.read1(_ERROR_BODY - len(body))
                if not piece:
                    break
                body += piece
            self._data = bytes(body)
            self._response.close()  # the rest is dropped with the connection
        return self._data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)
