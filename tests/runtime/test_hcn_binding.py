"""The real ctypes path (runtime.hcn._binding) against our C double of computenetwork.dll.

The double (tests/runtime/hcn_double/computenetwork_double.c) is compiled here with the system C
compiler and loaded as both ``library`` and ``cotaskmem_library``. Every test ends by
asserting, on the C side, that no string is left unfreed, no handle open, and nothing was
freed or closed that the double did not hand out.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import HcnError, HcnNotFoundError
from kubelet_winnet.runtime import (
    SETUP_CALLS,
    TEARDOWN_CALLS,
)
from kubelet_winnet.runtime.hcn import FUNCTIONS, GUID, ComputeNetwork, SandboxNetworks
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn._binding import _PROTOTYPES
from tests.strategies import MUST_RUN, sandbox_plan, sandbox_stress

SOURCE = Path(__file__).resolve().parent / "hcn_double" / "computenetwork_double.c"
NON_ASCII = "sändbox-Ω-网络-🚀"


class Double:
    """The double's test controls, typed."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        lib.double_reset.argtypes = [ctypes.c_int32]
        lib.double_reset.restype = None
        lib.double_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int32, ctypes.c_wchar_p]
        lib.double_fail_next.restype = ctypes.c_int32
        lib.double_host_default_id.argtypes = [ctypes.POINTER(GUID)]
        lib.double_host_default_id.restype = None
        lib.double_call_count.argtypes = [ctypes.c_char_p]
        lib.double_fail_randomly.argtypes = [ctypes.c_uint32, ctypes.c_uint32]
        lib.double_fail_randomly.restype = None
        lib.double_namespace_exists.argtypes = [ctypes.POINTER(GUID)]
        for name in (
            "double_outstanding_allocations",
            "double_open_handles",
            "double_bad_frees",
            "double_bad_closes",
            "double_namespace_count",
            "double_call_count",
            "double_faults_injected",
            "double_namespace_exists",
        ):
            getattr(lib, name).restype = ctypes.c_int32
        for name in ("double_last_settings", "double_last_query"):
            getattr(lib, name).argtypes = []
            getattr(lib, name).restype = ctypes.c_wchar_p
        self.lib = lib
        self.path = path

    def reset(self, host_default: bool = True) -> None:
        self.lib.double_reset(1 if host_default else 0)

    def fail_next(self, function: str, hr: int, record: str | None = None) -> None:
        signed = hr - (1 << 32) if hr & 0x80000000 else hr
        assert self.lib.double_fail_next(function.encode(), signed, record) == 1

    def host_default_id(self) -> uuid.UUID:
        guid = GUID()
        self.lib.double_host_default_id(ctypes.byref(guid))
        return guid.to_uuid()

    def fail_randomly(self, per_million: int, seed: int) -> None:
        self.lib.double_fail_randomly(per_million, seed)

    @property
    def faults_injected(self) -> int:
        return int(self.lib.double_faults_injected())

    def exists(self, namespace_id: uuid.UUID) -> bool:
        guid = GUID.from_uuid(namespace_id)
        return bool(self.lib.double_namespace_exists(ctypes.byref(guid)))

    def calls(self, function: str) -> int:
        return int(self.lib.double_call_count(function.encode()))

    @property
    def outstanding(self) -> int:
        return int(self.lib.double_outstanding_allocations())

    @property
    def open_handles(self) -> int:
        return int(self.lib.double_open_handles())

    @property
    def namespace_count(self) -> int:
        return int(self.lib.double_namespace_count())

    @property
    def last_settings(self) -> str:
        return str(self.lib.double_last_settings())

    @property
    def last_query(self) -> str:
        return str(self.lib.double_last_query())

    def assert_clean(self) -> None:
        assert self.outstanding == 0, "strings returned by the double were not freed"
        assert self.open_handles == 0, "namespace handles were left open"
        assert self.lib.double_bad_frees() == 0, "freed a pointer the double never returned"
        assert self.lib.double_bad_closes() == 0, "closed a handle the double never returned"


@pytest.fixture(scope="session")
def double_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if sys.platform == "win32":
        pytest.skip("the C double is a POSIX shared object; on Windows test the real DLL")
    compiler = shutil.which("cc")
    if compiler is None:
        reason = "no C compiler ('cc') on PATH: cannot build the computenetwork.dll double"
        if MUST_RUN:
            pytest.fail(f"{reason}; CI must have one, or the ctypes path goes untested")
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("hcn_double") / "libcomputenetwork_double.so"
    command = [compiler, "-shared", "-fPIC", "-pthread", "-O1", "-Wall", "-Wextra", "-Werror"]
    result = subprocess.run(
        [*command, "-o", str(out), str(SOURCE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"building the double failed:\n{result.stderr}"
    return out


@pytest.fixture(scope="session")
def double(double_library: Path) -> Double:
    return Double(double_library)


@pytest.fixture
def client(double: Double) -> Iterator[ComputeNetwork]:
    double.reset()
    network = ComputeNetwork(library=double.path, cotaskmem_library=double.path)
    yield network
    double.assert_clean()
    assert network.open_handles == 0 and network.unfreed_strings == 0


# --- ABI -------------------------------------------------------------------------------


def test_guid_struct_is_the_win32_layout() -> None:
    assert ctypes.sizeof(GUID) == 16
    value = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    guid = GUID.from_uuid(value)
    assert (guid.Data1, guid.Data2, guid.Data3) == (0x00112233, 0x4455, 0x6677)
    assert bytes(guid.Data4) == bytes.fromhex("8899aabbccddeeff")


@given(st.uuids())
def test_guid_round_trip(value: uuid.UUID) -> None:
    assert GUID.from_uuid(value).to_uuid() == value


def test_prototypes_are_the_reference_signatures(client: ComputeNetwork) -> None:
    client.enumerate_namespaces()  # forces the load
    functions = client._functions
    assert functions is not None
    assert tuple(functions) == FUNCTIONS
    pwstr_out = ctypes.POINTER(ctypes.c_void_p)
    guid_in = ctypes.POINTER(GUID)
    expected = {
        "HcnEnumerateNamespaces": [ctypes.c_wchar_p, pwstr_out, pwstr_out],
        "HcnCreateNamespace": [guid_in, ctypes.c_wchar_p, pwstr_out, pwstr_out],
        "HcnOpenNamespace": [guid_in, pwstr_out, pwstr_out],
        "HcnModifyNamespace": [ctypes.c_void_p, ctypes.c_wchar_p, pwstr_out],
        "HcnQueryNamespaceProperties": [ctypes.c_void_p, ctypes.c_wchar_p, pwstr_out, pwstr_out],
        "HcnDeleteNamespace": [guid_in, pwstr_out],
        "HcnCloseNamespace": [ctypes.c_void_p],
    }
    for name, function in functions.items():
        assert function.restype is ctypes.c_int32, name  # HRESULT is 32-bit, not c_long
        assert list(function.argtypes) == expected[name] == _PROTOTYPES[name], name
    assert ctypes.sizeof(ctypes.c_int32) == 4
    assert client._free.argtypes == [ctypes.c_void_p] and client._free.restype is None


def test_importing_loads_no_library(double_library: Path) -> None:
    # In a fresh interpreter, make every way of loading a library fail, then import
    # and construct: nothing may trip it until the first call.
    script = textwrap.dedent(
        f"""
        import ctypes
        def refuse(*args, **kwargs):
            raise AssertionError(f"library loaded at import: {{args!r}}")
        ctypes.CDLL.__init__ = refuse
        import kubelet_winnet.runtime.hcn, kubelet_winnet.runtime
        from kubelet_winnet.runtime.hcn import ComputeNetwork
        network = ComputeNetwork(library={str(double_library)!r})
        assert not network.loaded
        try:
            network.enumerate_namespaces()
        except AssertionError as exc:
            assert "library loaded" in str(exc)
        else:
            raise SystemExit("the first call did not load the library")
        print("ok")
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.skipif(sys.platform == "win32", reason="on Windows the default is computenetwork.dll")
def test_no_default_library_off_windows() -> None:
    with pytest.raises(HcnError) as caught:
        ComputeNetwork()
    assert caught.value.hresult == hresult.hresult_from_win32(hresult.ERROR_MOD_NOT_FOUND)


def test_missing_library_fails_on_first_call(tmp_path: Path) -> None:
    network = ComputeNetwork(library=tmp_path / "absent.so")
    with pytest.raises(HcnError) as caught:
        network.enumerate_namespaces()
    assert caught.value.hresult == 0x8007007E  # ERROR_MOD_NOT_FOUND


def test_library_without_the_exports(double_library: Path, tmp_path: Path) -> None:
    source = tmp_path / "empty.c"
    source.write_text("int unrelated(void) { return 0; }\n")
    empty = tmp_path / "libempty.so"
    cc = shutil.which("cc")
    assert cc is not None
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(empty), str(source)], check=True)
    with pytest.raises(HcnError) as caught:
        ComputeNetwork(library=empty).enumerate_namespaces()
    assert caught.value.hresult == 0x8007007F  # ERROR_PROC_NOT_FOUND


def test_loads_lazily_once(client: ComputeNetwork, double: Double) -> None:
    assert not client.loaded
    client.enumerate_namespaces()
    assert client.loaded
    functions = client._functions
    client.enumerate_namespaces()
    assert client._functions is functions
    assert double.calls("HcnEnumerateNamespaces") == 2


# --- the seven calls ----------------------------------------------------------------------


def test_enumerate_returns_the_host_default(client: ComputeNetwork, double: Double) -> None:
    text = client.enumerate_namespaces()
    assert json.loads(text) == [str(double.host_default_id()).upper()]  # the double's casing
    host = client.find_host_default()
    assert host.id == double.host_default_id()
    assert host.compartment == 1 and host.is_host_default
    assert json.loads(double.last_query) == {"SchemaVersion": {"Major": 2, "Minor": 0}, "Flags": 0}


def test_create_passes_guid_and_non_ascii_settings(client: ComputeNetwork, double: Double) -> None:
    namespace_id = uuid.uuid4()
    settings = json.dumps({"Owner": "kubelet-winnet", "Name": NON_ASCII}, ensure_ascii=False)
    handle = client.create_namespace(namespace_id, settings)
    assert client.open_handles == 1 and double.open_handles == 1
    assert double.last_settings == settings  # the wchar_t text arrived unchanged
    properties = json.loads(client.query_namespace_properties(handle))
    assert properties["Name"] == NON_ASCII
    assert properties["ID"] == str(namespace_id).upper()  # GUID fields marshalled in order
    client.close_namespace(handle)
    namespace = client.get_namespace(namespace_id)
    expected = (NON_ASCII, "kubelet-winnet", "Host")
    assert (namespace.name, namespace.owner, namespace.type) == expected
    assert namespace.compartment == 2
    assert namespace_id in client.namespace_ids()
    client.delete_namespace(namespace_id)
    assert double.namespace_count == 1


def test_create_existing_id_fails(client: ComputeNetwork) -> None:
    namespace_id = uuid.uuid4()
    client.close_namespace(client.create_namespace(namespace_id, "{}"))
    with pytest.raises(HcnError) as caught:
        client.create_namespace(namespace_id, "{}")
    assert caught.value.hresult == 0x800700B7
    client.delete_namespace(namespace_id)


def test_create_invalid_json(client: ComputeNetwork) -> None:
    with pytest.raises(HcnError) as caught:
        client.create_namespace(uuid.uuid4(), '{"Name": ')
    assert caught.value.hresult == hresult.HCN_E_INVALID_JSON
    assert caught.value.error_record is not None
    assert caught.value.error_record["ErrorCode"] == hresult.HCN_E_INVALID_JSON


def test_open_missing_is_not_found_with_record(client: ComputeNetwork) -> None:
    with pytest.raises(HcnNotFoundError) as caught:
        client.open_namespace(uuid.uuid4())
    assert caught.value.hresult == 0x80070490
    assert caught.value.message == "namespace not found"
    assert caught.value.error_record == {
        "Success": False,
        "Error": "namespace not found",
        "ErrorCode": 0x80070490,
    }


def test_delete_missing_is_not_found(client: ComputeNetwork) -> None:
    with pytest.raises(HcnNotFoundError):
        client.delete_namespace(uuid.uuid4())


def test_modify_attaches_and_detaches_endpoints(client: ComputeNetwork, double: Double) -> None:
    namespace_id, endpoint = uuid.uuid4(), uuid.uuid4()
    client.close_namespace(client.create_namespace(namespace_id, "{}"))
    client.attach_endpoint(namespace_id, endpoint)
    assert json.loads(double.last_settings) == {
        "ResourceType": "Endpoint",
        "RequestType": "Add",
        "Settings": {"EndpointId": str(endpoint)},
    }
    assert client.get_namespace(namespace_id).endpoint_ids == (endpoint,)
    with pytest.raises(HcnError) as caught:
        client.attach_endpoint(namespace_id, endpoint)
    assert caught.value.hresult == hresult.HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS
    client.detach_endpoint(namespace_id, endpoint)
    with pytest.raises(HcnNotFoundError) as missing:
        client.detach_endpoint(namespace_id, endpoint)
    assert missing.value.hresult == hresult.HCN_E_ENDPOINT_NOT_FOUND
    with client.opened(namespace_id) as handle, pytest.raises(HcnError) as bad:
        client.modify_namespace(handle, '{"ResourceType": "Container", "RequestType": "Add"}')
    assert bad.value.hresult == hresult.E_INVALIDARG
    client.delete_namespace(namespace_id)


def test_handle_outlives_its_namespace(client: ComputeNetwork) -> None:
    namespace_id = uuid.uuid4()
    handle = client.create_namespace(namespace_id, "{}")
    client.delete_namespace(namespace_id)
    with pytest.raises(HcnNotFoundError):
        client.query_namespace_properties(handle)
    client.close_namespace(handle)


def test_double_close_never_reaches_the_library(client: ComputeNetwork, double: Double) -> None:
    handle = client.open_namespace(double.host_default_id())
    client.close_namespace(handle)
    with pytest.raises(HcnError) as caught:
        client.close_namespace(handle)
    assert caught.value.hresult == hresult.E_HANDLE
    assert double.calls("HcnCloseNamespace") == 1


def test_filters_are_refused_by_the_double(client: ComputeNetwork) -> None:
    # The double does not implement Filter; it says so instead of ignoring it.
    with pytest.raises(HcnError) as caught:
        client.namespace_ids({"ID": str(uuid.uuid4())})
    assert caught.value.hresult == hresult.E_NOTIMPL


def test_nul_in_text_is_refused_before_the_call(client: ComputeNetwork, double: Double) -> None:
    from kubelet_winnet.errors import InvalidRequestError

    with pytest.raises(InvalidRequestError):
        client.create_namespace(uuid.uuid4(), '{"Name": "a\x00b"}')
    with pytest.raises(InvalidRequestError):
        client.enumerate_namespaces("\ud800")
    assert double.calls("HcnCreateNamespace") == 0


# --- error injection: every call, error records, cleanup on error paths -----------------

RECORD = json.dumps(
    {"Success": False, "Error": "Zugriff verweigert ✗", "ErrorCode": 0x80070005},
    ensure_ascii=False,
)


def _call(client: ComputeNetwork, function: str, known: uuid.UUID) -> None:
    if function == "HcnEnumerateNamespaces":
        client.enumerate_namespaces()
    elif function == "HcnCreateNamespace":
        client.create_namespace(uuid.uuid4(), "{}")
    elif function == "HcnOpenNamespace":
        client.open_namespace(known)
    elif function == "HcnModifyNamespace":
        client.attach_endpoint(known, uuid.uuid4())
    elif function == "HcnQueryNamespaceProperties":
        client.get_namespace(known)
    elif function == "HcnDeleteNamespace":
        client.delete_namespace(known)
    else:
        client.close_namespace(client.open_namespace(known))


FAULTS = [
    (0x80070005, RECORD, 0x80070005),  # failure HRESULT + record
    (0x80004005, None, 0x80004005),  # failure HRESULT, no record
    (0, RECORD, 0x80070005),  # S_OK but a record: still an error, code from the record
]
# HcnCloseNamespace has no error-record parameter, so only the bare HRESULT case applies.
FAULT_CASES = [
    (function, hr, record, expected)
    for function in FUNCTIONS
    for hr, record, expected in FAULTS
    if function != "HcnCloseNamespace" or record is None
]


@pytest.mark.parametrize(("function", "hr", "record", "expected"), FAULT_CASES)
def test_injected_fault(
    client: ComputeNetwork,
    double: Double,
    function: str,
    hr: int,
    record: str | None,
    expected: int,
) -> None:
    known = uuid.uuid4()
    client.close_namespace(client.create_namespace(known, "{}"))
    before = double.namespace_count
    double.fail_next(function, hr, record)
    with pytest.raises(HcnError) as caught:
        _call(client, function, known)
    assert caught.value.hresult == expected
    assert caught.value.operation == function
    if record is not None:
        assert caught.value.message == "Zugriff verweigert ✗"
        assert caught.value.error_record == json.loads(RECORD)
    # the fault happened before any effect, and the handle/strings were released
    assert double.namespace_count == before
    assert double.open_handles == 0 and double.outstanding == 0
    client.delete_namespace(known)


# --- SandboxNetworks over the real binding -----------------------------------------------


def test_sandbox_networks_over_the_double(
    client: ComputeNetwork, double: Double, tmp_path: Path
) -> None:
    networks = SandboxNetworks(client, tmp_path / "state")
    pod = sandbox_plan()
    host = sandbox_plan(host_process=True, mode=api_pb2.NODE)
    before = {f: double.calls(f) for f in FUNCTIONS}

    result = networks.setup(NON_ASCII, pod)
    made = {f: double.calls(f) - before[f] for f in FUNCTIONS}
    assert made == {f: sum(c.function == f for c in SETUP_CALLS[False]) for f in FUNCTIONS}
    assert client.get_namespace(result.namespace_id).name == NON_ASCII

    host_result = networks.setup("hostprocess", host)
    assert host_result.host_network and host_result.namespace_id == double.host_default_id()

    before = {f: double.calls(f) for f in FUNCTIONS}
    assert networks.teardown(NON_ASCII) and networks.teardown("hostprocess")
    made = {f: double.calls(f) - before[f] for f in FUNCTIONS}
    expected = TEARDOWN_CALLS[False] + TEARDOWN_CALLS[True]
    assert made == {f: sum(c.function == f for c in expected) for f in FUNCTIONS}
    assert double.namespace_count == 1  # only HostDefault is left
    assert not networks.teardown(NON_ASCII)


def test_concurrent_sandboxes_over_the_double(
    client: ComputeNetwork, double: Double, tmp_path: Path
) -> None:
    networks = SandboxNetworks(client, tmp_path / "state")
    pod, host = sandbox_plan(), sandbox_plan(host_process=True)
    ids = [f"sb-{i}" for i in range(200)]
    barrier = threading.Barrier(8)

    def life(index: int) -> uuid.UUID:
        if index < 8:
            barrier.wait()  # make the first calls really overlap
        sandbox = ids[index]
        plan = host if index % 5 == 0 else pod
        first = networks.setup(sandbox, plan)
        assert networks.setup(sandbox, plan) == first
        assert networks.teardown(sandbox)
        return first.namespace_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        namespace_ids = list(pool.map(life, range(200)))
    pod_ids = [n for i, n in enumerate(namespace_ids) if i % 5]
    assert len(set(pod_ids)) == len(pod_ids) == 160
    assert double.namespace_count == 1
    assert networks.sandbox_ids() == ()


@pytest.mark.slow  # a stress run
def test_stress_over_the_double(
    client: ComputeNetwork, double: Double, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The InMemoryHcn stress of test_hcn_sandbox.py through ctypes: 32 worker threads
    and 4 reconcilers over 256 sandboxes, every export failing with probability 5 %."""
    networks = SandboxNetworks(client, tmp_path / "state")
    host_default = double.host_default_id()
    double.fail_randomly(50_000, seed=8)
    report = sandbox_stress(
        networks,
        pod_plan=sandbox_plan(),
        host_plan=sandbox_plan(host_process=True),
        exists=double.exists,
        host_default=host_default,
    )
    faults = double.faults_injected
    double.fail_randomly(0, seed=1)
    assert report.violations == []
    assert faults > 100 and report.hcn_errors > 0
    assert networks.reconcile([]).state_errors == ()
    assert networks.sandbox_ids() == () and not list((tmp_path / "state").iterdir())
    assert double.namespace_count == 1 and double.exists(host_default)
    calls = sum(double.calls(f) for f in FUNCTIONS)
    with capsys.disabled():
        print(
            f"\n[stress C double] operations={report.operations} hcn_calls={calls} "
            f"faults_injected={faults} failed_operations={report.hcn_errors} "
            f"violations={len(report.violations)}"
        )
    # the client fixture then checks, on the C side: no string unfreed, no handle open
