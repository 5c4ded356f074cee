"""The ctypes binding against an independent description of computenetwork.dll: the
prototypes in ``computenetwork.h`` of Debian's ``mingw-w64-common`` (written by the
mingw-w64 project, not here). Every function the binding declares must exist there with
the same arity, an HRESULT result, and parameters of the same pointer depth and kind.

The binding takes every out-pointer (``PWSTR*``, ``PHCN_NAMESPACE``) as ``void**``: it
reads the pointee as an address so it can hand strings back to ``CoTaskMemFree``. So at
depth 2 only the depth is compared; at depth 1 the kind (wide string, GUID, opaque
handle) is compared too.

Skips with a reason when the header is absent and CI is unset; under CI
(``.ci/install-system-packages`` installs ``mingw-w64-common``) its absence fails.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from kubelet_winnet.runtime.hcn import _binding
from kubelet_winnet.runtime.hcn import _hresult as hresult
from tests.strategies import MUST_RUN

HEADER_CANDIDATES = (
    Path("/usr/share/mingw-w64/include/computenetwork.h"),
    Path("/usr/x86_64-w64-mingw32/include/computenetwork.h"),
)

# Windows SDK type names the header uses, as (kind, pointer depth) (winnt.h, guiddef.h:
# REFGUID is `const GUID *` in C).
_BASE_TYPES = {
    "PCWSTR": ("wchar", 1),
    "PWSTR": ("wchar", 1),
    "REFGUID": ("guid", 1),
    "HANDLE": ("void", 1),
    "void": ("void", 0),
}
_PROTOTYPE = re.compile(r"(\w+)\s+WINAPI\s+(Hcn\w+)\s*\(([^)]*)\)\s*;")
_TYPEDEF_POINTER = re.compile(r"typedef\s+(\w+)\s*\*\s*(\w+)\s*;")


def _header_text() -> str:
    for path in HEADER_CANDIDATES:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    reason = ("computenetwork.h not found (Debian package mingw-w64-common; looked at "
              + ", ".join(map(str, HEADER_CANDIDATES)) + ")")
    if MUST_RUN:
        pytest.fail(reason + ": CI installs it through .ci/install-system-packages")
    pytest.skip(reason)


def _types(text: str) -> dict[str, tuple[str, int]]:
    """The header's pointer typedefs (``typedef void* HCN_NAMESPACE;``) over the SDK's."""
    known = dict(_BASE_TYPES)
    for base, alias in _TYPEDEF_POINTER.findall(text):
        kind, depth = known[base]
        known[alias] = (kind, depth + 1)
    return known


def _header_prototypes(text: str) -> dict[str, tuple[str, list[tuple[str, int]]]]:
    """Name -> (result type, [(kind, pointer depth) per parameter])."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    known = _types(text)
    out: dict[str, tuple[str, list[tuple[str, int]]]] = {}
    for result, name, params in _PROTOTYPE.findall(text):
        parsed = []
        for param in params.split(","):
            param = param.strip()
            stars = param.count("*")
            words = param.replace("*", " ").split()
            type_name = words[-2] if len(words) >= 2 else words[0]
            if type_name not in known:
                parsed.append(("other", stars))
                continue
            kind, depth = known[type_name]
            parsed.append((kind, depth + stars))
        out[name] = (result, parsed)
    return out


def _binding_kind(argtype: object) -> tuple[str, int]:
    if argtype is ctypes.c_wchar_p:
        return ("wchar", 1)
    if argtype is ctypes.c_void_p:
        return ("void", 1)
    if argtype is ctypes.POINTER(_binding.GUID):
        return ("guid", 1)
    if argtype is ctypes.POINTER(ctypes.c_void_p):
        return ("out", 2)
    raise AssertionError(f"unexpected ctypes argtype {argtype!r}")


def test_every_bound_prototype_matches_the_header() -> None:
    prototypes = _header_prototypes(_header_text())
    assert len(prototypes) >= 30  # the whole namespace/network/endpoint/LB API was parsed
    for name, argtypes in _binding._PROTOTYPES.items():
        assert name in prototypes, f"{name} is not declared in computenetwork.h"
        result, params = prototypes[name]
        assert result == "HRESULT", name
        assert len(params) == len(argtypes), f"{name}: arity {len(argtypes)} != {len(params)}"
        for index, (header, argtype) in enumerate(zip(params, argtypes, strict=True)):
            kind, depth = _binding_kind(argtype)
            assert depth == header[1], f"{name} parameter {index}: pointer depth"
            if depth == 1:
                assert kind == header[0], f"{name} parameter {index}: {kind} != {header[0]}"


def test_header_parser_reads_the_namespace_api() -> None:
    """The parser itself, on the lines the binding depends on (so a parser that read
    nothing could not pass the test above)."""
    prototypes = _header_prototypes(_header_text())
    assert prototypes["HcnCreateNamespace"] == (
        "HRESULT", [("guid", 1), ("wchar", 1), ("void", 2), ("wchar", 2)])
    assert prototypes["HcnCloseNamespace"] == ("HRESULT", [("void", 1)])
    assert prototypes["HcnQueryNamespaceProperties"][1] == [
        ("void", 1), ("wchar", 1), ("wchar", 2), ("wchar", 2)]


def test_hresult_names_follow_microsofts_table() -> None:
    """Microsoft's HCN HRESULT table: 0x803B002B is HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS
    (the endpoint is already in a namespace), 0x803B0014 HCN_E_ENDPOINT_ALREADY_ATTACHED."""
    assert hresult.HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS == 0x803B002B
    assert hresult.HCN_E_ENDPOINT_ALREADY_ATTACHED == 0x803B0014
    assert hresult.HCN_E_INVALID_JSON == 0x803B001B
    assert "already in a namespace" in hresult.describe(0x803B002B)
