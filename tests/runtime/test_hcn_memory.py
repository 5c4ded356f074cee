"""InMemoryHcn (the dry-run/test HCN) and the cleanup contract of the shared HcnClient base."""

from __future__ import annotations

import json
import uuid

import pytest

from kubelet_winnet.errors import HcnError, HcnNotFoundError
from kubelet_winnet.runtime.hcn import HcnClient, InMemoryHcn
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn._documents import namespace_query, parse_namespace_list
from tests.strategies import Crash


def test_host_default_present_by_default() -> None:
    hcn = InMemoryHcn()
    (only,) = hcn.namespaces().values()
    assert only.is_host_default and only.compartment == 1
    assert hcn.find_host_default() == only


def test_host_without_host_default() -> None:
    hcn = InMemoryHcn(host_default=False)
    with pytest.raises(HcnNotFoundError) as caught:
        hcn.find_host_default()
    assert "unable to find default host namespace to attach to" in str(caught.value)
    assert caught.value.hresult == 0x80070490


def test_find_host_default_skips_other_namespaces() -> None:
    hcn = InMemoryHcn(host_default=False)
    hcn.add_namespace(uuid.uuid4(), namespace_type="Guest")
    host_id = uuid.uuid4()
    hcn.add_namespace(host_id, namespace_type="HostDefault")
    hcn.clear_calls()
    assert hcn.find_host_default().id == host_id
    per_namespace = ("HcnOpenNamespace", "HcnQueryNamespaceProperties", "HcnCloseNamespace")
    assert hcn.calls == ("HcnEnumerateNamespaces", *per_namespace, *per_namespace)


def test_second_host_default_is_refused() -> None:
    hcn = InMemoryHcn()
    with pytest.raises(HcnError) as caught:
        hcn.create_namespace(uuid.uuid4(), '{"Type": "HostDefault"}')
    assert caught.value.hresult == hresult.HCN_E_DEFAULT_NAMESPACE_EXISTS
    with pytest.raises(ValueError, match="cannot add"):
        hcn.add_namespace(uuid.uuid4(), namespace_type="HostDefault")


def test_zero_guid_lets_hcn_pick() -> None:
    hcn = InMemoryHcn()
    handle = hcn.create_namespace(uuid.UUID(int=0), "{}")
    picked = json.loads(hcn.query_namespace_properties(handle))["ID"]
    hcn.close_namespace(handle)
    assert uuid.UUID(picked).int != 0


def test_filters_and_detailed_queries() -> None:
    hcn = InMemoryHcn()
    ours = uuid.uuid4()
    hcn.add_namespace(ours, owner="kubelet-winnet", name="a")
    assert hcn.namespace_ids({"ID": str(ours).upper()}) == (ours,)
    assert hcn.namespace_ids({"owner": "kubelet-winnet"}) == (ours,)
    assert hcn.namespace_ids({"Type": "HostDefault"}) == (hcn.find_host_default().id,)
    assert hcn.namespace_ids({"Owner": "someone else"}) == ()
    detailed = parse_namespace_list(hcn.enumerate_namespaces(namespace_query(detailed=True)))
    assert {n.id for n in detailed} == set(hcn.namespaces())
    with pytest.raises(HcnError) as caught:
        hcn.enumerate_namespaces('{"Filter": "{not json"}')
    assert caught.value.hresult == hresult.HCN_E_INVALID_JSON


def test_fault_on_nth_call_only() -> None:
    hcn = InMemoryHcn()
    host = hcn.find_host_default().id
    hcn.fail("HcnOpenNamespace", 0x80070005, nth=2)
    hcn.close_namespace(hcn.open_namespace(host))
    with pytest.raises(HcnError) as caught:
        hcn.open_namespace(host)
    assert caught.value.hresult == 0x80070005
    hcn.close_namespace(hcn.open_namespace(host))
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0


def test_fault_with_record_and_success_code() -> None:
    hcn = InMemoryHcn()
    record = json.dumps({"Success": False, "Error": "nein ✗", "ErrorCode": 0x803B002C})
    hcn.fail("HcnDeleteNamespace", 0, record)
    host = hcn.find_host_default().id
    with pytest.raises(HcnError) as caught:
        hcn.delete_namespace(host)
    assert caught.value.hresult == hresult.HCN_E_ENTITY_HAS_REFERENCES
    assert caught.value.message == "nein ✗"
    assert host in hcn.namespaces()  # faults strike before any effect
    assert hcn.unfreed_strings == 0


def test_fault_arguments_are_checked() -> None:
    hcn = InMemoryHcn()
    with pytest.raises(ValueError, match="unknown HCN function"):
        hcn.fail("HcnCreateEndpoint")
    with pytest.raises(ValueError, match="nth"):
        hcn.fail("HcnOpenNamespace", nth=0)
    hcn.fail("HcnOpenNamespace")
    hcn.clear_faults()
    hcn.close_namespace(hcn.open_namespace(hcn.find_host_default().id))


def test_close_fault_still_releases_the_handle() -> None:
    hcn = InMemoryHcn()
    handle = hcn.open_namespace(hcn.find_host_default().id)
    hcn.fail("HcnCloseNamespace", hresult.E_FAIL)
    with pytest.raises(HcnError):
        hcn.close_namespace(handle)
    assert hcn.open_handles == 0
    with pytest.raises(HcnError, match="not open"):
        hcn.close_namespace(handle)  # never closed twice
    assert hcn.bad_closes == 0


def test_opened_closes_on_error() -> None:
    hcn = InMemoryHcn()
    host = hcn.find_host_default().id
    held: list[int] = []

    def body() -> None:
        with hcn.opened(host):
            held.append(hcn.open_handles)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        body()
    assert held == [1] and hcn.open_handles == 0


def test_opened_keeps_the_block_error_when_close_fails_too() -> None:
    hcn = InMemoryHcn()
    host = hcn.find_host_default().id
    hcn.fail("HcnCloseNamespace", hresult.E_FAIL)
    with pytest.raises(RuntimeError, match="boom"), hcn.opened(host):
        raise RuntimeError("boom")
    assert hcn.open_handles == 0 and hcn.calls[-1] == "HcnCloseNamespace"


def test_opened_reports_a_failing_close_after_a_clean_block() -> None:
    hcn = InMemoryHcn()
    host = hcn.find_host_default().id
    hcn.fail("HcnCloseNamespace", hresult.E_FAIL)
    with pytest.raises(HcnError) as caught, hcn.opened(host):
        pass
    assert caught.value.operation == "HcnCloseNamespace"
    assert hcn.open_handles == 0


def test_crash_hook_and_process_exit() -> None:
    def crash_after_create(function: str, phase: str) -> None:
        if function == "HcnCreateNamespace" and phase == "after":
            raise Crash

    hcn = InMemoryHcn(hook=crash_after_create)
    namespace_id = uuid.uuid4()
    with pytest.raises(Crash):
        hcn.create_namespace(namespace_id, "{}")
    assert namespace_id in hcn.namespaces()  # the effect happened
    assert hcn.open_handles == 1  # the dead process held the handle
    hcn.simulate_process_exit()
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0


def test_modify_rules() -> None:
    hcn = InMemoryHcn()
    first, second, endpoint = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    hcn.add_namespace(first)
    hcn.add_namespace(second)
    hcn.attach_endpoint(first, endpoint)
    with pytest.raises(HcnError) as caught:
        hcn.attach_endpoint(second, endpoint)  # one namespace per endpoint
    assert caught.value.hresult == hresult.HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS
    assert hcn.get_namespace(first).endpoint_ids == (endpoint,)
    with hcn.opened(first) as handle, pytest.raises(HcnError) as bad:
        hcn.modify_namespace(handle, '{"ResourceType": "Endpoint", "RequestType": "Add"}')
    assert bad.value.hresult == hresult.HCN_E_GUID_CONVERSION_FAILURE
    hcn.detach_endpoint(first, endpoint)
    with pytest.raises(HcnNotFoundError):
        hcn.detach_endpoint(first, endpoint)


# --- the HcnClient base contract, with a scripted library ---------------------------------


class Scripted(HcnClient):
    """A library whose raw results are scripted, to reach paths real ones rarely take."""

    def __init__(self) -> None:
        super().__init__()
        self.strings: dict[int, str] = {}
        self.freed: list[int] = []
        self.closed: list[int] = []
        self.unreadable: set[int] = set()
        self.create_result: tuple[int, int | None, int | None] = (0, 0x100, None)

    def give(self, address: int, text: str) -> int:
        self.strings[address] = text
        return address

    def _raw_enumerate(self, query: str) -> tuple[int, int | None, int | None]:
        return -2147467259, self.give(1, "[]"), self.give(2, '{"Error": "both"}')

    def _raw_create(
        self, namespace_id: uuid.UUID, settings: str
    ) -> tuple[int, int | None, int | None]:
        return self.create_result

    def _raw_open(self, namespace_id: uuid.UUID) -> tuple[int, int | None, int | None]:
        return 0, None, None  # success without a handle: a broken library

    def _raw_modify(self, handle: int, settings: str) -> tuple[int, int | None]:
        return 0, None

    def _raw_query(self, handle: int, query: str) -> tuple[int, int | None, int | None]:
        return 0, self.give(3, "{}"), self.give(4, "")

    def _raw_delete(self, namespace_id: uuid.UUID) -> tuple[int, int | None]:
        return 0, None

    def _raw_close(self, handle: int) -> int:
        self.closed.append(handle)
        return 0

    def _read_string(self, pointer: int) -> str:
        if pointer in self.unreadable:
            raise UnicodeDecodeError("utf-32", b"", 0, 1, "scripted")
        return self.strings[pointer]

    def _free_string(self, pointer: int) -> None:
        self.freed.append(pointer)


def test_every_string_is_freed_even_when_the_call_failed() -> None:
    client = Scripted()
    with pytest.raises(HcnError, match="both"):
        client.enumerate_namespaces()
    assert sorted(client.freed) == [1, 2]
    assert client.unfreed_strings == 0


def test_strings_are_freed_when_reading_one_fails() -> None:
    client = Scripted()
    client.unreadable = {3}
    with pytest.raises(HcnError, match="unreadable string") as caught:
        client.query_namespace_properties(client.create_namespace(uuid.uuid4(), "{}"))
    assert caught.value.operation == "HcnQueryNamespaceProperties"
    assert caught.value.__cause__ is None
    assert sorted(client.freed) == [3, 4]
    assert client.unfreed_strings == 0


def test_handle_returned_with_an_error_is_closed() -> None:
    client = Scripted()
    client.create_result = (-2147467259, 0x200, client.give(5, '{"Error": "half done"}'))
    with pytest.raises(HcnError, match="half done"):
        client.create_namespace(uuid.uuid4(), "{}")
    assert client.closed == [0x200]
    assert client.freed == [5]
    assert client.open_handles == 0


def test_success_without_a_handle_is_an_error() -> None:
    with pytest.raises(HcnError, match="no handle") as caught:
        Scripted().open_namespace(uuid.uuid4())
    assert caught.value.hresult == hresult.E_UNEXPECTED


def test_random_faults() -> None:
    """The stress tests' fault source: every call may fail before any effect."""
    hcn = InMemoryHcn()
    with pytest.raises(ValueError, match="between 0 and 1"):
        hcn.fail_randomly(1.5, seed=1)
    hcn.fail_randomly(1.0, seed=1)
    before = hcn.namespaces()
    with pytest.raises(HcnError, match="injected fault") as caught:
        hcn.create_namespace(uuid.uuid4(), "{}")
    assert caught.value.hresult == hresult.E_FAIL
    assert hcn.namespaces() == before and hcn.faults_injected == 1
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0
    hcn.fail_randomly(0.5, seed=7)
    outcomes = []
    for _ in range(200):
        try:
            hcn.namespace_ids()
        except HcnError:
            outcomes.append(False)
        else:
            outcomes.append(True)
    assert 40 < outcomes.count(False) < 160  # about half, from a seeded generator
    assert hcn.faults_injected == 1 + outcomes.count(False)
    hcn.clear_faults()
    assert hcn.namespace_ids() == tuple(before)
