"""ctypes binding to computenetwork.dll (the only module here that touches a C library).

Nothing is loaded at import time: the library is opened on the first call. On Windows
that is ``computenetwork.dll`` from System32 and ``CoTaskMemFree`` from ``ole32.dll``;
elsewhere only the paths passed in are opened (our C test double, on Linux).

C signatures (reference table; all WINAPI, so ``WinDLL`` on Windows):

* HRESULT is a 32-bit signed int: ``c_int32``, never ``c_long`` (64-bit on LP64 Linux).
* GUIDs go in by pointer (``POINTER(GUID)``).
* Strings in are ``PCWSTR`` (``c_wchar_p``: UTF-16 on Windows, UTF-32 where wchar_t is
  32-bit). Strings out are ``PWSTR*``; we take them as ``void*`` so ctypes does not
  convert them and lose the pointer we must hand to ``CoTaskMemFree``.
* ``HCN_NAMESPACE`` is ``void*``.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import uuid
from typing import Any

from kubelet_winnet._describe import type_name
from kubelet_winnet.errors import HcnError, InvalidArgumentError
from kubelet_winnet.runtime.hcn import _args
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn._client import FUNCTIONS, HcnClient

__all__ = ["GUID", "ComputeNetwork"]

_LOAD_LIBRARY_SEARCH_SYSTEM32 = (
    0x00000800  # never pick up a computenetwork.dll from CWD/PATH
)


class GUID(ctypes.Structure):
    """The Win32 GUID layout: native-endian Data1..3, then 8 bytes in order."""

    _fields_ = [
        ("Data1", ctypes.c_uint32),
        ("Data2", ctypes.c_uint16),
        ("Data3", ctypes.c_uint16),
        ("Data4", ctypes.c_uint8 * 8),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # ctypes would truncate an out-of-range int silently, or raise a bare TypeError.
        if kwargs:
            raise InvalidArgumentError("GUID", "positional fields only", "keyword arguments")
        if len(args) > 4:
            raise InvalidArgumentError("GUID", "at most 4 fields", f"{len(args)} arguments")
        for index, (value, bits) in enumerate(zip(args[:3], (32, 16, 16), strict=False)):
            _args.integer(f"Data{index + 1}", value, 0, (1 << bits) - 1)
        if len(args) == 4:
            data4 = args[3]
            if not _args.instance(data4, ctypes.Array) or len(data4) != 8:
                raise InvalidArgumentError("Data4", "a c_uint8 * 8 array", type_name(data4))
        super().__init__(*args)

    @classmethod
    def from_uuid(cls, value: uuid.UUID) -> GUID:
        # The fields, not uuid.bytes_le: the struct holds native ints, so this is right
        # on any byte order.
        raw = _args.guid("value", value).bytes
        return cls(
            int.from_bytes(raw[0:4], "big"),
            int.from_bytes(raw[4:6], "big"),
            int.from_bytes(raw[6:8], "big"),
            (ctypes.c_uint8 * 8)(*raw[8:16]),
        )

    def to_uuid(self) -> uuid.UUID:
        raw = (
            int(self.Data1).to_bytes(4, "big")
            + int(self.Data2).to_bytes(2, "big")
            + int(self.Data3).to_bytes(2, "big")
            + bytes(self.Data4)
        )
        return uuid.UUID(bytes=raw)


_PWSTR_OUT = ctypes.POINTER(ctypes.c_void_p)
_HANDLE_OUT = ctypes.POINTER(ctypes.c_void_p)
_GUID_IN = ctypes.POINTER(GUID)

# export name -> argtypes; every one returns HRESULT (c_int32).
_PROTOTYPES: dict[str, list[Any]] = {
    "HcnEnumerateNamespaces": [ctypes.c_wchar_p, _PWSTR_OUT, _PWSTR_OUT],
    "HcnCreateNamespace": [_GUID_IN, ctypes.c_wchar_p, _HANDLE_OUT, _PWSTR_OUT],
    "HcnOpenNamespace": [_GUID_IN, _HANDLE_OUT, _PWSTR_OUT],
    "HcnModifyNamespace": [ctypes.c_void_p, ctypes.c_wchar_p, _PWSTR_OUT],
    "HcnQueryNamespaceProperties": [
        ctypes.c_void_p,
        ctypes.c_wchar_p,
        _PWSTR_OUT,
        _PWSTR_OUT,
    ],
    "HcnDeleteNamespace": [_GUID_IN, _PWSTR_OUT],
    "HcnCloseNamespace": [ctypes.c_void_p],
}
assert tuple(_PROTOTYPES) == FUNCTIONS


def _load(path: str, *, system32: bool) -> ctypes.CDLL:
    if sys.platform == "win32":
        if system32:
            return ctypes.WinDLL(path, winmode=_LOAD_LIBRARY_SEARCH_SYSTEM32)
        return ctypes.WinDLL(path)
    return ctypes.CDLL(path)


class ComputeNetwork(HcnClient):
    """The real HCN namespace API through ctypes.

    ``library``: path of computenetwork.dll or a stand-in (required off Windows).
    ``cotaskmem_library``: the library exporting ``CoTaskMemFree``; defaults to
    ``ole32.dll`` on Windows and to ``library`` elsewhere (our double exports both).
    Loading happens on the first call, once, under a lock.
    """

    def __init__(
        self,
        library: str | os.PathLike[str] | None = None,
        cotaskmem_library: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        library = None if library is None else _args.path("library", library)
        if cotaskmem_library is not None:
            cotaskmem_library = _args.path("cotaskmem_library", cotaskmem_library)
        if library is None and sys.platform != "win32":
            raise HcnError(
                "load computenetwork.dll",
                hresult.hresult_from_win32(hresult.ERROR_MOD_NOT_FOUND),
                "computenetwork.dll exists only on Windows; pass library= (a test double)",
            )
        self._library = (
            os.fspath(library) if library is not None else "computenetwork.dll"
        )
        self._system_library = library is None
        if cotaskmem_library is not None:
            self._cotaskmem = os.fspath(cotaskmem_library)
        elif sys.platform == "win32":
            self._cotaskmem = "ole32.dll"
        else:
            self._cotaskmem = self._library
        self._load_lock = threading.Lock()
        self._functions: dict[str, Any] | None = None
        self._free: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the library has been opened yet (it is, after the first call)."""
        return self._functions is not None

    def _fn(self, name: str) -> Any:
        functions = self._functions
        if functions is None:
            functions = self._load_all()
        return functions[name]

    def _load_all(self) -> dict[str, Any]:
        with self._load_lock:
            if self._functions is not None:
                return self._functions
            try:
                network = _load(self._library, system32=self._system_library)
                memory = (
                    network
                    if self._cotaskmem == self._library
                    else _load(self._cotaskmem, system32=sys.platform == "win32")
                )
            except OSError as exc:
                raise HcnError(
                    "load computenetwork.dll",
                    hresult.hresult_from_win32(hresult.ERROR_MOD_NOT_FOUND),
                    str(exc),
                ) from exc
            functions: dict[str, Any] = {}
            try:
                for name, argtypes in _PROTOTYPES.items():
                    function = getattr(network, name)
                    function.argtypes = argtypes
                    function.restype = ctypes.c_int32
                    functions[name] = function
                free = memory.CoTaskMemFree
            except AttributeError as exc:
                raise HcnError(
                    "load computenetwork.dll",
                    hresult.hresult_from_win32(hresult.ERROR_PROC_NOT_FOUND),
                    str(exc),
                ) from exc
            free.argtypes = [ctypes.c_void_p]
            free.restype = None
            self._free = free
            self._functions = functions
            return functions

    # --- raw calls: C semantics, results as ints ---------------------------------------

    def _raw_enumerate(self, query: str) -> tuple[int, int | None, int | None]:
        out, record = ctypes.c_void_p(), ctypes.c_void_p()
        hr = self._fn("HcnEnumerateNamespaces")(
            query, ctypes.byref(out), ctypes.byref(record)
        )
        return int(hr), out.value, record.value

    def _raw_create(
        self, namespace_id: uuid.UUID, settings: str
    ) -> tuple[int, int | None, int | None]:
        guid = GUID.from_uuid(namespace_id)
        handle, record = ctypes.c_void_p(), ctypes.c_void_p()
        hr = self._fn("HcnCreateNamespace")(
            ctypes.byref(guid), settings, ctypes.byref(handle), ctypes.byref(record)
        )
        return int(hr), handle.value, record.value

    def _raw_open(self, namespace_id: uuid.UUID) -> tuple[int, int | None, int | None]:
        guid = GUID.from_uuid(namespace_id)
        handle, record = ctypes.c_void_p(), ctypes.c_void_p()
        hr = self._fn("HcnOpenNamespace")(
            ctypes.byref(guid), ctypes.byref(handle), ctypes.byref(record)
        )
        return int(hr), handle.value, record.value

    def _raw_modify(self, handle: int, settings: str) -> tuple[int, int | None]:
        record = ctypes.c_void_p()
        hr = self._fn("HcnModifyNamespace")(
            ctypes.c_void_p(handle), settings, ctypes.byref(record)
        )
        return int(hr), record.value

    def _raw_query(self, handle: int, query: str) -> tuple[int, int | None, int | None]:
        out, record = ctypes.c_void_p(), ctypes.c_void_p()
        hr = self._fn("HcnQueryNamespaceProperties")(
            ctypes.c_void_p(handle), query, ctypes.byref(out), ctypes.byref(record)
        )
        return int(hr), out.value, record.value

    def _raw_delete(self, namespace_id: uuid.UUID) -> tuple[int, int | None]:
        guid = GUID.from_uuid(namespace_id)
        record = ctypes.c_void_p()
        hr = self._fn("HcnDeleteNamespace")(ctypes.byref(guid), ctypes.byref(record))
        return int(hr), record.value

    def _raw_close(self, handle: int) -> int:
        return int(self._fn("HcnCloseNamespace")(ctypes.c_void_p(handle)))

    def _read_string(self, pointer: int) -> str:
        return ctypes.wstring_at(pointer)

    def _free_string(self, pointer: int) -> None:
        if self._free is None:
            self._load_all()
        self._free(ctypes.c_void_p(pointer))
