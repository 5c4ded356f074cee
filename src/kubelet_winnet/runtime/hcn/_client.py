"""The Python-level HCN namespace API, shared by the ctypes binding and the in-memory double.

A subclass supplies seven ``_raw_*`` methods that behave like the C exports: they return
the HRESULT and the raw out-values (string pointers and handles as ints, ``None`` for
NULL). This base class owns everything that must be right on every path: each returned
string is read and then freed (even if reading fails), an error record becomes an
:class:`~kubelet_winnet.errors.HcnError`, a handle that comes back together with an
error is closed, and a handle is never closed twice. Keeping that logic here means the
in-memory double exercises the exact code the real binding runs.
"""

from __future__ import annotations

import abc
import contextlib
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager

from kubelet_winnet.errors import HcnError, HcnNotFoundError, InvalidRequestError
from kubelet_winnet.runtime.hcn import _args
from kubelet_winnet.runtime.hcn import _documents as documents
from kubelet_winnet.runtime.hcn import _hresult as hresult

__all__ = ["FUNCTIONS", "HcnClient", "NamespaceHandle"]

class NamespaceHandle(int):
    """An opened HCN_NAMESPACE (a void* on the C side): a positive 64-bit int."""

    __slots__ = ()

    def __new__(cls, value: object) -> NamespaceHandle:
        return super().__new__(cls, _args.handle("handle", value))

# The seven namespace exports of computenetwork.dll, in the order of the reference table.
FUNCTIONS: tuple[str, ...] = (
    "HcnEnumerateNamespaces",
    "HcnCreateNamespace",
    "HcnOpenNamespace",
    "HcnModifyNamespace",
    "HcnQueryNamespaceProperties",
    "HcnDeleteNamespace",
    "HcnCloseNamespace",
)

_NO_HOST_DEFAULT = (
    "unable to find default host namespace to attach to"  # hcsshim ncproxy
)


def _checked_text(field: str, text: object) -> str:
    # A PCWSTR ends at the first NUL, and lone surrogates have no UTF-16 form: refuse
    # both rather than let the C side see a different document than we built.
    text = _args.text(field, text)
    if "\x00" in text:
        raise InvalidRequestError(field, "contains a NUL character")
    try:
        text.encode("utf-16-le")
    except UnicodeEncodeError:
        raise InvalidRequestError(
            field, "is not valid Unicode (lone surrogate)"
        ) from None
    return text


class HcnClient(abc.ABC):
    """Namespace calls of the Host Compute Network API, one method per export.

    Thread-safe as long as the ``_raw_*`` methods are. ``open_handles`` and
    ``unfreed_strings`` count what this client holds right now; both are 0 between calls.
    """

    def __init__(self) -> None:
        self._counter_lock = threading.Lock()
        self._open: set[int] = set()
        self._strings_held = 0

    # --- what a subclass provides (C semantics, no exceptions for HCN failures) ------

    @abc.abstractmethod
    def _raw_enumerate(self, query: str) -> tuple[int, int | None, int | None]:
        """HcnEnumerateNamespaces -> (hresult, namespaces string, error record)."""

    @abc.abstractmethod
    def _raw_create(
        self, namespace_id: uuid.UUID, settings: str
    ) -> tuple[int, int | None, int | None]:
        """HcnCreateNamespace -> (hresult, handle, error record)."""

    @abc.abstractmethod
    def _raw_open(self, namespace_id: uuid.UUID) -> tuple[int, int | None, int | None]:
        """HcnOpenNamespace -> (hresult, handle, error record)."""

    @abc.abstractmethod
    def _raw_modify(self, handle: int, settings: str) -> tuple[int, int | None]:
        """HcnModifyNamespace -> (hresult, error record)."""

    @abc.abstractmethod
    def _raw_query(self, handle: int, query: str) -> tuple[int, int | None, int | None]:
        """HcnQueryNamespaceProperties -> (hresult, properties string, error record)."""

    @abc.abstractmethod
    def _raw_delete(self, namespace_id: uuid.UUID) -> tuple[int, int | None]:
        """HcnDeleteNamespace -> (hresult, error record)."""

    @abc.abstractmethod
    def _raw_close(self, handle: int) -> int:
        """HcnCloseNamespace -> hresult."""

    @abc.abstractmethod
    def _read_string(self, pointer: int) -> str:
        """The NUL-terminated wide string at ``pointer``."""

    @abc.abstractmethod
    def _free_string(self, pointer: int) -> None:
        """CoTaskMemFree(pointer)."""

    # --- counters ----------------------------------------------------------------------

    @property
    def open_handles(self) -> int:
        """Handles this client opened and has not closed yet."""
        with self._counter_lock:
            return len(self._open)

    @property
    def unfreed_strings(self) -> int:
        """Strings the library handed to this client that it has not freed yet."""
        with self._counter_lock:
            return self._strings_held

    # --- plumbing shared by every call ----------------------------------------------

    def _take(self, operation: str, *pointers: int | None) -> list[str | None]:
        """Read then free each non-NULL string; all are freed even if a read fails.

        A string that cannot be read as text (invalid UTF-16 on Windows, a code point
        past U+10FFFF where wchar_t is 32-bit) is HCN's fault: an HcnError.
        """
        with ExitStack() as frees:
            for pointer in pointers:
                if pointer:
                    with self._counter_lock:
                        self._strings_held += 1
                    frees.callback(self._release_string, pointer)
            try:
                return [self._read_string(p) if p else None for p in pointers]
            except (ValueError, MemoryError) as exc:  # UnicodeDecodeError is a ValueError
                raise HcnError(
                    operation,
                    hresult.E_UNEXPECTED,
                    f"malformed HCN output: unreadable string ({type(exc).__name__})",
                ) from None

    def _release_string(self, pointer: int) -> None:
        try:
            self._free_string(pointer)
        finally:
            with self._counter_lock:
                self._strings_held -= 1

    def _adopt_handle(self, handle: int | None) -> None:
        if handle:
            with self._counter_lock:
                self._open.add(handle)

    def _returned_handle(
        self, operation: str, hr: int, handle: int | None, record_ptr: int | None
    ) -> NamespaceHandle:
        self._adopt_handle(handle)
        try:
            (record,) = self._take(operation, record_ptr)
            hresult.check(operation, hr, record)
            if not handle:
                raise HcnError(
                    operation, hresult.E_UNEXPECTED, "succeeded but returned no handle"
                )
        except BaseException:  # anything, KeyboardInterrupt too: close, then re-raise
            if handle:
                self._close_quietly(handle)
            raise
        return NamespaceHandle(handle)

    def _close_quietly(self, handle: int) -> None:
        # the error that got us here matters more than a failed close
        with contextlib.suppress(HcnError):
            self.close_namespace(NamespaceHandle(handle))

    # --- the seven calls -------------------------------------------------------------

    def enumerate_namespaces(self, query: str | None = None) -> str:
        """HcnEnumerateNamespaces: the JSON array text (GUIDs, or documents with Flags 1)."""
        text = _checked_text(
            "query", query if query is not None else documents.namespace_query()
        )
        hr, out, record_ptr = self._raw_enumerate(text)
        result, record = self._take("HcnEnumerateNamespaces", out, record_ptr)
        hresult.check("HcnEnumerateNamespaces", hr, record)
        return result or ""

    def create_namespace(
        self, namespace_id: uuid.UUID, settings: str
    ) -> NamespaceHandle:
        """HcnCreateNamespace: create with the given GUID; returns an open handle."""
        namespace_id = _args.guid("namespace_id", namespace_id)
        hr, handle, record_ptr = self._raw_create(
            namespace_id, _checked_text("settings", settings)
        )
        return self._returned_handle("HcnCreateNamespace", hr, handle, record_ptr)

    def open_namespace(self, namespace_id: uuid.UUID) -> NamespaceHandle:
        """HcnOpenNamespace: an open handle to an existing namespace."""
        hr, handle, record_ptr = self._raw_open(_args.guid("namespace_id", namespace_id))
        return self._returned_handle("HcnOpenNamespace", hr, handle, record_ptr)

    def modify_namespace(self, handle: NamespaceHandle, settings: str) -> None:
        """HcnModifyNamespace: apply a modify request (e.g. endpoint Add/Remove)."""
        handle = NamespaceHandle(handle)
        hr, record_ptr = self._raw_modify(handle, _checked_text("settings", settings))
        (record,) = self._take("HcnModifyNamespace", record_ptr)
        hresult.check("HcnModifyNamespace", hr, record)

    def query_namespace_properties(
        self, handle: NamespaceHandle, query: str | None = None
    ) -> str:
        """HcnQueryNamespaceProperties: the namespace document as JSON text."""
        handle = NamespaceHandle(handle)
        text = _checked_text(
            "query", query if query is not None else documents.namespace_query()
        )
        hr, out, record_ptr = self._raw_query(handle, text)
        result, record = self._take("HcnQueryNamespaceProperties", out, record_ptr)
        hresult.check("HcnQueryNamespaceProperties", hr, record)
        if result is None:
            raise HcnError(
                "HcnQueryNamespaceProperties",
                hresult.E_UNEXPECTED,
                "no properties returned",
            )
        return result

    def delete_namespace(self, namespace_id: uuid.UUID) -> None:
        """HcnDeleteNamespace by GUID (raises HcnNotFoundError when it is not there)."""
        hr, record_ptr = self._raw_delete(_args.guid("namespace_id", namespace_id))
        (record,) = self._take("HcnDeleteNamespace", record_ptr)
        hresult.check("HcnDeleteNamespace", hr, record)

    def close_namespace(self, handle: NamespaceHandle) -> None:
        """HcnCloseNamespace. The handle counts as released even if the call fails:
        closing it a second time could hit a handle the library has reused."""
        handle = NamespaceHandle(handle)
        with self._counter_lock:
            if handle not in self._open:
                raise HcnError(
                    "HcnCloseNamespace",
                    hresult.E_HANDLE,
                    "handle is not open in this client",
                )
            self._open.discard(handle)
        hresult.check("HcnCloseNamespace", self._raw_close(handle))

    # --- compositions ------------------------------------------------------------------

    @contextmanager
    def opened(self, namespace_id: uuid.UUID) -> Iterator[NamespaceHandle]:
        """Open a namespace for the ``with`` block; always closed afterwards.

        If the block raises, a failing close is suppressed so the block's error is the
        one the caller sees; after a clean block a failing close raises.
        """
        handle = self.open_namespace(namespace_id)
        try:
            yield handle
        except BaseException:  # whatever the block raised: close quietly, then re-raise it
            self._close_quietly(handle)
            raise
        self.close_namespace(handle)

    def namespace_ids(
        self, filter: Mapping[str, object] | None = None
    ) -> tuple[uuid.UUID, ...]:
        """GUIDs of the namespaces HCN lists for ``filter`` (all when ``None``)."""
        return documents.parse_guid_list(
            self.enumerate_namespaces(documents.namespace_query(filter))
        )

    def get_namespace(self, namespace_id: uuid.UUID) -> documents.Namespace:
        """Open, query and close: the parsed properties of one namespace."""
        with self.opened(namespace_id) as handle:
            text = self.query_namespace_properties(handle)
        return documents.parse_namespace(text)

    def list_namespaces(self) -> list[documents.Namespace]:
        """Every namespace, one open/query/close each (like hcsshim ``ListNamespaces``).

        A namespace deleted between the listing and its query is skipped.
        """
        found: list[documents.Namespace] = []
        for namespace_id in self.namespace_ids():
            try:
                found.append(self.get_namespace(namespace_id))
            except HcnNotFoundError:
                continue
        return found

    def find_host_default(self) -> documents.Namespace:
        """The host's ``HostDefault`` namespace, stopping at the first one found.

        hcsshim ncproxy (``ListNamespaces`` then ``Type == "HostDefault"``) does the same
        lookup and fails with the same text when there is none.
        """
        for namespace_id in self.namespace_ids():
            try:
                namespace = self.get_namespace(namespace_id)
            except HcnNotFoundError:
                continue
            if namespace.is_host_default:
                return namespace
        raise HcnNotFoundError(
            "find HostDefault namespace",
            hresult.ERROR_NOT_FOUND_HRESULT,
            _NO_HOST_DEFAULT,
        )

    def attach_endpoint(self, namespace_id: uuid.UUID, endpoint_id: uuid.UUID) -> None:
        """What the Windows CNI plugin does after we create the namespace."""
        request = documents.endpoint_modify_request(endpoint_id, "Add")
        with self.opened(namespace_id) as handle:
            self.modify_namespace(handle, request)

    def detach_endpoint(self, namespace_id: uuid.UUID, endpoint_id: uuid.UUID) -> None:
        """The CNI DEL counterpart of :meth:`attach_endpoint`."""
        request = documents.endpoint_modify_request(endpoint_id, "Remove")
        with self.opened(namespace_id) as handle:
            self.modify_namespace(handle, request)
