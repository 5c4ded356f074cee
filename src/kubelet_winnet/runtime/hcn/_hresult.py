"""HRESULT decoding for the Host Compute Network API (pure: no I/O).

Every HCN export returns a 32-bit HRESULT and may hand back a JSON error record. This
module turns that pair into ``None`` (success) or an :class:`~kubelet_winnet.errors.HcnError`.
The rule "an error is a negative HRESULT *or* a non-empty error record" follows hcsshim
``hcn/hcnerrors.go`` (``checkForErrors``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kubelet_winnet.errors import HcnError, HcnNotFoundError
from kubelet_winnet.runtime.hcn import _args

__all__ = [
    "ERROR_ALREADY_EXISTS",
    "ERROR_MOD_NOT_FOUND",
    "ERROR_NOT_FOUND",
    "ERROR_NOT_FOUND_HRESULT",
    "ERROR_PROC_NOT_FOUND",
    "E_ACCESSDENIED",
    "E_FAIL",
    "E_HANDLE",
    "E_INVALIDARG",
    "E_NOTIMPL",
    "E_UNEXPECTED",
    "FACILITY_HCN",
    "FACILITY_WIN32",
    "HCN_E_DEFAULT_NAMESPACE_EXISTS",
    "HCN_E_ENDPOINT_ALREADY_ATTACHED",
    "HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS",
    "HCN_E_ENDPOINT_NOT_FOUND",
    "HCN_E_ENTITY_HAS_REFERENCES",
    "HCN_E_GUID_CONVERSION_FAILURE",
    "HCN_E_INVALID_JSON",
    "HCN_E_NAMESPACE_ATTACH_FAILED",
    "HCN_E_NETWORK_COMPARTMENT_NOT_FOUND",
    "NOT_FOUND_HRESULTS",
    "S_OK",
    "check",
    "describe",
    "error_for",
    "facility",
    "hresult_from_win32",
    "is_failure",
    "is_not_found",
    "parse_error_record",
    "win32_code",
]

FACILITY_WIN32 = 0x7
FACILITY_HCN = 0x3B  # the facility of the HCN-specific codes in the reference table

S_OK = 0x00000000
E_NOTIMPL = 0x80004001
E_FAIL = 0x80004005
E_UNEXPECTED = 0x8000FFFF
E_ACCESSDENIED = 0x80070005
E_HANDLE = 0x80070006
E_INVALIDARG = 0x80070057

# Win32 error numbers (not HRESULTs); wrap them with hresult_from_win32().
ERROR_MOD_NOT_FOUND = 126
ERROR_PROC_NOT_FOUND = 127
ERROR_ALREADY_EXISTS = 183
ERROR_NOT_FOUND = 1168

# HCN codes (facility 0x3B), named as in Microsoft's HCN HRESULT table (HCNHResult).
HCN_E_ENDPOINT_NOT_FOUND = 0x803B0002
HCN_E_ENDPOINT_ALREADY_ATTACHED = 0x803B0014
HCN_E_GUID_CONVERSION_FAILURE = 0x803B0019
HCN_E_INVALID_JSON = 0x803B001B
HCN_E_NETWORK_COMPARTMENT_NOT_FOUND = 0x803B0027
HCN_E_DEFAULT_NAMESPACE_EXISTS = 0x803B0029
HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS = 0x803B002B  # the endpoint is in a namespace
HCN_E_ENTITY_HAS_REFERENCES = 0x803B002C
HCN_E_NAMESPACE_ATTACH_FAILED = 0x803B002E

_WIN32_NAMES: Mapping[int, str] = {
    0: "ERROR_SUCCESS",
    2: "ERROR_FILE_NOT_FOUND",
    5: "ERROR_ACCESS_DENIED",
    6: "ERROR_INVALID_HANDLE",
    14: "ERROR_OUTOFMEMORY",
    87: "ERROR_INVALID_PARAMETER",
    ERROR_MOD_NOT_FOUND: "ERROR_MOD_NOT_FOUND",
    ERROR_PROC_NOT_FOUND: "ERROR_PROC_NOT_FOUND",
    ERROR_ALREADY_EXISTS: "ERROR_ALREADY_EXISTS",
    ERROR_NOT_FOUND: "ERROR_NOT_FOUND",
}

_HRESULT_TEXT: Mapping[int, str] = {
    E_NOTIMPL: "E_NOTIMPL: not implemented",
    E_FAIL: "E_FAIL: unspecified failure",
    E_UNEXPECTED: "E_UNEXPECTED: unexpected failure",
    HCN_E_ENDPOINT_NOT_FOUND: "HCN: endpoint not found",
    HCN_E_GUID_CONVERSION_FAILURE: "HCN: GUID conversion failure",
    HCN_E_INVALID_JSON: "HCN: invalid JSON",
    HCN_E_NETWORK_COMPARTMENT_NOT_FOUND: "HCN: network compartment not found",
    HCN_E_DEFAULT_NAMESPACE_EXISTS: "HCN: default namespace already exists",
    HCN_E_ENDPOINT_ALREADY_ATTACHED: "HCN: endpoint already attached",
    HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS: "HCN: the endpoint is already in a namespace",
    HCN_E_ENTITY_HAS_REFERENCES: "HCN: entity has references",
    HCN_E_NAMESPACE_ATTACH_FAILED: "HCN: namespace attach failed",
}


def hresult_from_win32(code: int) -> int:
    """``HRESULT_FROM_WIN32``: 0 stays 0, anything else goes to facility 7, severity 1."""
    if code <= 0:
        return code & 0xFFFFFFFF
    return (code & 0xFFFF) | (FACILITY_WIN32 << 16) | 0x80000000


ERROR_NOT_FOUND_HRESULT = hresult_from_win32(ERROR_NOT_FOUND)  # 0x80070490

# Codes that mean "the object is not there": teardown treats them as done. Kept tight on
# purpose: a code wrongly listed here would make teardown forget a live namespace.
NOT_FOUND_HRESULTS: frozenset[int] = frozenset(
    {
        ERROR_NOT_FOUND_HRESULT,
        HCN_E_ENDPOINT_NOT_FOUND,
        HCN_E_NETWORK_COMPARTMENT_NOT_FOUND,
    }
)


def _u32(hresult: int) -> int:
    # ctypes hands HRESULTs back as signed c_int32; compare them as unsigned.
    return hresult & 0xFFFFFFFF


def is_failure(hresult: int) -> bool:
    """True when the severity bit is set (a negative signed HRESULT)."""
    return bool(_u32(hresult) & 0x80000000)


def facility(hresult: int) -> int:
    """The 11-bit facility field."""
    return (_u32(hresult) >> 16) & 0x7FF


def win32_code(hresult: int) -> int | None:
    """The Win32 error inside a FACILITY_WIN32 failure (0x8007xxxx), else ``None``."""
    value = _u32(hresult)
    if is_failure(value) and facility(value) == FACILITY_WIN32:
        return value & 0xFFFF
    return None


def is_not_found(hresult: int) -> bool:
    """True for ERROR_NOT_FOUND and its HCN relatives (see :data:`NOT_FOUND_HRESULTS`)."""
    return _u32(hresult) in NOT_FOUND_HRESULTS


def describe(hresult: int) -> str:
    """A short human text for an HRESULT, e.g. ``Win32 error 1168 (ERROR_NOT_FOUND)``."""
    value = _u32(hresult)
    if value in _HRESULT_TEXT:
        return _HRESULT_TEXT[value]
    code = win32_code(value)
    if code is not None:
        name = _WIN32_NAMES.get(code)
        return f"Win32 error {code} ({name})" if name else f"Win32 error {code}"
    if not is_failure(value):
        return "success"
    return f"HRESULT 0x{value:08X} (facility 0x{facility(value):X})"


def parse_error_record(text: str | None) -> dict[str, object] | None:
    """The JSON object of an error record, or ``None`` if empty or not a JSON object."""
    text = _args.text_or_none("text", text)
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _get_ci(record: Mapping[str, object], key: str) -> object:
    # HCN documents are matched case-insensitively (the reference spells ID both ways).
    for name, value in record.items():
        if name.lower() == key.lower():
            return value
    return None


def error_for(
    operation: str, hresult: int, error_record: str | None = None
) -> HcnError | None:
    """The error an HCN call reported, or ``None`` if it succeeded.

    Failure means a negative HRESULT or a non-empty error record (hcsshim
    ``hcn/hcnerrors.go``). With a non-negative HRESULT the record's ``ErrorCode`` gives
    the code (``E_FAIL`` if it has no failure code). The message is the record's ``Error`` text,
    the raw record when it is not JSON, else a description of the code.
    """
    operation = _args.text("operation", operation)
    hresult = _args.integer("hresult", hresult, -(1 << 31), 0xFFFFFFFF)
    text = (_args.text_or_none("error_record", error_record) or "").strip()
    if not is_failure(hresult) and not text:
        return None
    record = parse_error_record(text)
    code = _u32(hresult)
    if not is_failure(code):
        reported = _get_ci(record, "ErrorCode") if record is not None else None
        # Only a failure code can explain a failure; anything else reads as E_FAIL.
        if (
            isinstance(reported, int)
            and not isinstance(reported, bool)
            and is_failure(reported)
        ):
            code = _u32(reported)
        else:
            code = E_FAIL
    error_text = _get_ci(record, "Error") if record is not None else None
    if isinstance(error_text, str) and error_text:
        message = error_text
    elif record is None and text:
        message = text
    else:
        message = describe(code)
    cls = HcnNotFoundError if is_not_found(code) else HcnError
    return cls(operation, code, message, record)


def check(operation: str, hresult: int, error_record: str | None = None) -> None:
    """Raise :func:`error_for`'s error, if any."""
    error = error_for(operation, hresult, error_record)
    if error is not None:
        raise error
