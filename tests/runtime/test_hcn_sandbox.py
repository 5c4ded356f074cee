"""SandboxNetworks on InMemoryHcn: setup/teardown/reconcile, crashes at every step, threads."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import pytest

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import (
    HcnError,
    HcnNotFoundError,
    InvalidArgumentError,
    InvalidRequestError,
    StateFileError,
    WinnetError,
)
from kubelet_winnet.runtime import NetworkPlan
from kubelet_winnet.runtime.hcn import DEFAULT_OWNER, InMemoryHcn, SandboxNetwork, SandboxNetworks
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn import _state as state_module
from tests.strategies import Crash, crash_at, sandbox_plan, sandbox_stress

NON_ASCII = "pod-ünïcødé-Ω-🚀"


POD = sandbox_plan()
HOST = sandbox_plan(host_process=True, mode=api_pb2.NODE)
NODE = sandbox_plan(mode=api_pb2.NODE)  # KEP: a normal pod on the host network


def owned(hcn: InMemoryHcn) -> set[uuid.UUID]:
    return {i for i, n in hcn.namespaces().items() if n.owner == DEFAULT_OWNER}


def assert_clean(hcn: InMemoryHcn) -> None:
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0
    assert hcn.bad_frees == 0 and hcn.bad_closes == 0


@pytest.fixture
def hcn() -> InMemoryHcn:
    return InMemoryHcn()


@pytest.fixture
def networks(hcn: InMemoryHcn, tmp_path: Path) -> SandboxNetworks:
    return SandboxNetworks(hcn, tmp_path / "state")


# --- the plans' HCN calls are the calls made ------------------------------------------


@pytest.mark.parametrize("the_plan", [POD, HOST, NODE], ids=["pod", "hostprocess", "node"])
def test_calls_made_are_the_plan_calls(
    hcn: InMemoryHcn, networks: SandboxNetworks, the_plan: NetworkPlan
) -> None:
    hcn.clear_calls()
    networks.setup("sb", the_plan)
    # with only HostDefault present each "per namespace" call happens once
    assert hcn.calls == tuple(c.function for c in the_plan.setup_calls)
    hcn.clear_calls()
    networks.teardown("sb")
    assert hcn.calls == tuple(c.function for c in the_plan.teardown_calls)
    assert_clean(hcn)


# --- setup -------------------------------------------------------------------------------


def test_pod_network_creates_an_owned_namespace(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    result = networks.setup(NON_ASCII, POD)
    assert not result.host_network and result.sandbox_id == NON_ASCII
    namespace = hcn.namespaces()[result.namespace_id]
    assert (namespace.owner, namespace.name, namespace.type) == (DEFAULT_OWNER, NON_ASCII, "Host")
    assert namespace.compartment is not None and namespace.compartment >= 2
    assert networks.get(NON_ASCII) == result
    assert networks.sandbox_ids() == (NON_ASCII,)
    assert_clean(hcn)


@pytest.mark.parametrize("the_plan", [HOST, NODE], ids=["hostprocess", "node"])
def test_host_network_resolves_host_default(
    hcn: InMemoryHcn, networks: SandboxNetworks, the_plan: NetworkPlan
) -> None:
    before = hcn.namespaces()
    result = networks.setup("sb", the_plan)
    assert result.host_network
    assert result.namespace_id == hcn.find_host_default().id
    assert hcn.namespaces() == before  # nothing created
    assert networks.teardown("sb")
    assert hcn.namespaces() == before  # HostDefault never deleted


def test_host_network_without_host_default(tmp_path: Path) -> None:
    hcn = InMemoryHcn(host_default=False)
    networks = SandboxNetworks(hcn, tmp_path)
    with pytest.raises(HcnNotFoundError, match="unable to find default host namespace"):
        networks.setup("sb", HOST)
    assert networks.sandbox_ids() == () and hcn.namespaces() == {}
    assert_clean(hcn)


def test_repeated_setup_returns_the_same_namespace(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    first = networks.setup("sb", POD)
    hcn.clear_calls()
    assert networks.setup("sb", POD) == first
    # it checks, without creating: the namespace handed out must exist right now
    assert hcn.calls == ("HcnOpenNamespace", "HcnCloseNamespace")
    assert len(owned(hcn)) == 1


@pytest.mark.parametrize("the_plan", [POD, HOST], ids=["pod", "host"])
def test_repeated_setup_never_returns_a_namespace_deleted_behind_its_back(
    hcn: InMemoryHcn, networks: SandboxNetworks, the_plan: NetworkPlan
) -> None:
    first = networks.setup("sb", the_plan)
    hcn.delete_namespace(first.namespace_id)  # e.g. an operator's hnsdiag delete
    if the_plan.host_network:
        hcn.add_namespace(uuid.uuid4(), namespace_type="HostDefault")
    second = networks.setup("sb", the_plan)
    assert second.namespace_id != first.namespace_id
    assert second.namespace_id in hcn.namespaces()
    assert networks.get("sb") == second
    assert_clean(hcn)


def test_setup_with_the_other_kind_of_network_is_refused(networks: SandboxNetworks) -> None:
    networks.setup("sb", POD)
    with pytest.raises(InvalidRequestError) as caught:
        networks.setup("sb", HOST)
    assert caught.value.field == "sandbox_id"
    assert "tear it down first" in str(caught.value)


@pytest.mark.parametrize("bad", ["", "a\x00b", "\ud800"])
def test_bad_sandbox_ids(networks: SandboxNetworks, bad: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        networks.setup(bad, POD)
    assert caught.value.field == "sandbox_id"
    with pytest.raises(InvalidRequestError):
        networks.teardown(bad)


def test_failed_create_leaves_nothing(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    hcn.fail("HcnCreateNamespace", 0x80070005)
    with pytest.raises(HcnError) as caught:
        networks.setup("sb", POD)
    assert caught.value.hresult == 0x80070005
    assert networks.sandbox_ids() == () and owned(hcn) == set()
    assert_clean(hcn)


def test_failed_create_and_failed_cleanup_keep_the_record(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    hcn.fail("HcnCreateNamespace", hresult.E_FAIL)
    hcn.fail("HcnDeleteNamespace", hresult.E_FAIL)
    with pytest.raises(HcnError) as caught:
        networks.setup("sb", POD)
    notes: list[str] = getattr(caught.value, "__notes__", [])  # 3.10 has no typed attribute
    assert any("later teardown" in note for note in notes)
    assert networks.sandbox_ids() == ("sb",)  # kept: we could not confirm the cleanup
    assert networks.get("sb") is None  # not ready
    assert networks.teardown("sb")  # the namespace is not there: done
    assert networks.sandbox_ids() == ()


def test_failed_close_then_retry_resumes(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    hcn.fail("HcnCloseNamespace", hresult.E_FAIL)
    with pytest.raises(HcnError):
        networks.setup("sb", POD)
    (namespace_id,) = owned(hcn)
    assert networks.get("sb") is None
    assert networks.setup("sb", POD).namespace_id == namespace_id  # found, not re-created
    assert owned(hcn) == {namespace_id}
    assert_clean(hcn)


# --- teardown ----------------------------------------------------------------------------


def test_teardown_is_idempotent(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    assert not networks.teardown("never-seen")
    networks.setup("sb", POD)
    assert networks.teardown("sb")
    assert not networks.teardown("sb")
    assert owned(hcn) == set()


def test_teardown_of_a_namespace_deleted_behind_our_back(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    result = networks.setup("sb", POD)
    hcn.delete_namespace(result.namespace_id)
    assert networks.teardown("sb")  # not found = done
    assert networks.sandbox_ids() == ()


def test_failed_teardown_keeps_the_record(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    result = networks.setup("sb", POD)
    hcn.fail("HcnDeleteNamespace", hresult.HCN_E_ENTITY_HAS_REFERENCES)
    with pytest.raises(HcnError):
        networks.teardown("sb")
    assert networks.get("sb") == result
    assert networks.teardown("sb") and owned(hcn) == set()


# --- crashes: every HCN call, before and after its effect, and inside state writes -------


def restart(hcn: InMemoryHcn, state_dir: Path) -> SandboxNetworks:
    hcn.hook = None
    hcn.simulate_process_exit()
    return SandboxNetworks(hcn, state_dir)


CRASH_POINTS = [(i, p) for i in (1, 2, 3, 4) for p in ("before", "after")]


@pytest.mark.parametrize(("index", "phase"), CRASH_POINTS)
@pytest.mark.parametrize("the_plan", [POD, HOST], ids=["pod", "host"])
def test_crash_during_setup_loses_nothing(
    hcn: InMemoryHcn, tmp_path: Path, index: int, phase: str, the_plan: NetworkPlan
) -> None:
    state_dir = tmp_path / "state"
    networks = SandboxNetworks(hcn, state_dir)
    hcn.hook = crash_at(index, phase)
    with contextlib.suppress(Crash):  # a host setup makes fewer calls than some indexes
        networks.setup("sb", the_plan)
    networks = restart(hcn, state_dir)
    # every namespace that may exist is named by a record
    named = {r.namespace_id for r in state_module.StateStore(state_dir).records()}
    assert owned(hcn) <= named
    # after restart both ways forward work: finish the setup, or tear it down
    result = networks.setup("sb", the_plan)
    assert len(owned(hcn)) == (0 if the_plan.host_network else 1)
    assert result.namespace_id in hcn.namespaces()
    assert networks.teardown("sb")
    assert owned(hcn) == set() and networks.sandbox_ids() == ()
    assert_clean(hcn)


@pytest.mark.parametrize(("index", "phase"), CRASH_POINTS[:2])
def test_crash_during_teardown_loses_nothing(
    hcn: InMemoryHcn, tmp_path: Path, index: int, phase: str
) -> None:
    state_dir = tmp_path / "state"
    networks = SandboxNetworks(hcn, state_dir)
    networks.setup("sb", POD)
    hcn.hook = crash_at(index, phase)
    with pytest.raises(Crash):
        networks.teardown("sb")
    networks = restart(hcn, state_dir)
    assert networks.sandbox_ids() == ("sb",)
    assert networks.teardown("sb")
    assert owned(hcn) == set()
    assert not networks.teardown("sb")


@pytest.mark.parametrize("phase", ["before", "after"])
def test_setup_after_an_interrupted_teardown_gets_a_live_namespace(
    hcn: InMemoryHcn, tmp_path: Path, phase: str
) -> None:
    """Regression: a crash right after HcnDeleteNamespace used to leave a "ready" record,
    and the next setup of that id handed out the deleted namespace's GUID."""
    state_dir = tmp_path / "state"
    networks = SandboxNetworks(hcn, state_dir)
    old = networks.setup("sb", POD)
    hcn.hook = crash_at(1, phase)
    with pytest.raises(Crash):
        networks.teardown("sb")
    networks = restart(hcn, state_dir)
    assert networks.get("sb") is None  # a half torn-down sandbox is not "set up"
    assert networks.setup("sb", HOST).host_network  # the old kind no longer binds
    assert networks.teardown("sb")
    new = networks.setup("sb", POD)
    assert new.namespace_id != old.namespace_id
    assert owned(hcn) == {new.namespace_id}
    assert_clean(hcn)


def test_interrupted_teardown_is_finished_by_setup(hcn: InMemoryHcn, tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    networks = SandboxNetworks(hcn, state_dir)
    old = networks.setup("sb", POD)
    hcn.hook = crash_at(1, "before")  # the record says "removing", the namespace exists
    with pytest.raises(Crash):
        networks.teardown("sb")
    networks = restart(hcn, state_dir)
    assert owned(hcn) == {old.namespace_id}
    new = networks.setup("sb", POD)
    assert owned(hcn) == {new.namespace_id} and new.namespace_id != old.namespace_id


@pytest.mark.parametrize("write", [1, 2])
def test_crash_inside_a_state_write(hcn: InMemoryHcn, tmp_path: Path, write: int) -> None:
    """Killed after the temp file is written but before os.replace: old record stands."""
    state_dir = tmp_path / "state"
    networks = SandboxNetworks(hcn, state_dir)
    real_replace = os.replace
    count = [0]

    def replace(src: str, dst: str) -> None:
        count[0] += 1
        if count[0] == write:
            raise Crash
        real_replace(src, dst)

    with mock.patch.object(os, "replace", replace), pytest.raises(Crash):
        networks.setup("sb", POD)
    assert list(state_dir.glob(".*.tmp"))  # the dead process left its temp file
    networks = restart(hcn, state_dir)
    assert not list(state_dir.glob(".*.tmp"))  # swept on open
    named = {r.namespace_id for r in state_module.StateStore(state_dir).records()}
    assert owned(hcn) <= named
    assert networks.teardown("sb") == (write == 2)
    assert owned(hcn) == set()


def test_ordinary_write_error_removes_the_temp_file(networks: SandboxNetworks) -> None:
    with (
        mock.patch.object(os, "replace", side_effect=OSError("disk full")),
        pytest.raises(OSError, match="disk full"),
    ):
        networks.setup("sb", POD)
    assert not list(Path(networks.state_dir).glob(".*.tmp"))


# --- state files -------------------------------------------------------------------------


def test_state_file_contents(networks: SandboxNetworks) -> None:
    result = networks.setup(NON_ASCII, POD)
    (path,) = Path(networks.state_dir).glob("sandbox-*.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc == {
        "format": 1,
        "sandbox_id": NON_ASCII,
        "phase": "ready",
        "host_network": False,
        "namespace_id": str(result.namespace_id),
        "policy": "kep",
        "reason": POD.reason,
    }


def test_corrupt_state_file_is_reported(networks: SandboxNetworks) -> None:
    networks.setup("sb", POD)
    (path,) = Path(networks.state_dir).glob("sandbox-*.json")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(StateFileError, match="truncated or not JSON") as caught:
        networks.teardown("sb")
    assert caught.value.path == str(path)
    assert isinstance(caught.value, WinnetError)


# --- reconcile ---------------------------------------------------------------------------


def test_reconcile(hcn: InMemoryHcn, tmp_path: Path) -> None:
    networks = SandboxNetworks(hcn, tmp_path / "state")
    live = networks.setup("live", POD)
    dead = networks.setup("dead", POD)
    networks.setup("dead-host", HOST)
    orphan, lost_live, foreign = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    hcn.add_namespace(orphan, owner=DEFAULT_OWNER, name="gone-long-ago")
    hcn.add_namespace(lost_live, owner=DEFAULT_OWNER, name="live-without-record")
    hcn.add_namespace(foreign, owner="someone-else", name="dead")
    stale_duplicate = uuid.uuid4()  # ours, for a live sandbox, but not the recorded one
    hcn.add_namespace(stale_duplicate, owner=DEFAULT_OWNER, name="live")

    report = networks.reconcile(["live", "live-without-record"])

    assert set(report.torn_down) == {"dead", "dead-host"}
    assert set(report.deleted_orphans) == {orphan, stale_duplicate}
    assert report.adopted == ("live-without-record",)
    remaining = set(hcn.namespaces())
    assert live.namespace_id in remaining and foreign in remaining and lost_live in remaining
    assert dead.namespace_id not in remaining and orphan not in remaining
    assert hcn.find_host_default().id in remaining
    adopted = networks.get("live-without-record")
    assert adopted is not None and adopted.namespace_id == lost_live
    assert networks.reconcile(["live", "live-without-record"]) == type(report)()
    assert_clean(hcn)


def test_reconcile_after_losing_the_state_dir(hcn: InMemoryHcn, tmp_path: Path) -> None:
    SandboxNetworks(hcn, tmp_path / "old").setup("sb", POD)
    fresh = SandboxNetworks(hcn, tmp_path / "new")
    report = fresh.reconcile([])
    assert len(report.deleted_orphans) == 1 and owned(hcn) == set()


# --- threads -----------------------------------------------------------------------------


def test_200_sandboxes_from_8_threads(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    barrier = threading.Barrier(8)
    plans = [POD, HOST, NODE, POD, POD]

    def life(index: int) -> uuid.UUID:
        if index < 8:
            barrier.wait()
        sandbox = f"sandbox-{index:03d}-ü"
        the_plan = plans[index % len(plans)]
        first = networks.setup(sandbox, the_plan)
        assert networks.setup(sandbox, the_plan) == first
        assert networks.teardown(sandbox)
        assert not networks.teardown(sandbox)
        return first.namespace_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(life, range(200)))
    pod_ids = [r for i, r in enumerate(results) if not plans[i % len(plans)].host_network]
    assert len(set(pod_ids)) == len(pod_ids) == 120
    assert owned(hcn) == set()
    assert networks.sandbox_ids() == ()
    assert len(hcn.namespaces()) == 1
    assert_clean(hcn)


def test_same_sandbox_from_8_threads_gets_one_namespace(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    barrier = threading.Barrier(8)

    def setup(_: int) -> uuid.UUID:
        barrier.wait()
        return networks.setup("shared", POD).namespace_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(setup, range(8)))
    assert len(ids) == 1 and owned(hcn) == ids


def test_distinct_sandboxes_do_not_wait_for_each_other(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    entered, release = threading.Event(), threading.Event()
    creates = [0]
    guard = threading.Lock()

    def hold_first_create(function: str, phase: str) -> None:
        if function == "HcnCreateNamespace" and phase == "before":
            with guard:
                creates[0] += 1
                first = creates[0] == 1
            if first:
                entered.set()
                assert release.wait(10)

    hcn.hook = hold_first_create
    with ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(networks.setup, "slow", POD)
        assert entered.wait(10)
        networks.setup("fast", POD)  # would deadlock under one global lock
        assert not slow.done()
        release.set()
        slow.result(timeout=10)
    assert len(owned(hcn)) == 2


# --- reconcile and teardown are linearizable per sandbox ----------------------------------


def test_reconcile_does_not_adopt_a_namespace_torn_down_meanwhile(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    """The race: reconcile lists the namespaces, a teardown of a live
    sandbox finishes before reconcile decides about it, and reconcile used to "adopt"
    the deleted namespace, so the next setup handed it out without calling HCN."""
    old = networks.setup("sb", POD)
    torn = []
    queries = [0]

    def tear_down_after_listing(function: str, phase: str) -> None:
        # Namespaces are listed in creation order: HostDefault, then sb. After the second
        # query reconcile has read sb's document and holds no lock yet.
        if function == "HcnQueryNamespaceProperties" and phase == "after":
            queries[0] += 1
            if queries[0] == 2:
                hcn.hook = None
                torn.append(networks.teardown("sb"))

    hcn.hook = tear_down_after_listing
    report = networks.reconcile(["sb"])
    assert torn == [True]  # the race really happened
    assert report.adopted == () and report.deleted_orphans == ()
    assert networks.get("sb") is None and networks.sandbox_ids() == ()  # stays torn down
    new = networks.setup("sb", POD)
    assert new.namespace_id != old.namespace_id
    assert hcn.has_namespace(new.namespace_id)
    assert_clean(hcn)


def test_reconcile_keeps_a_sandbox_set_up_meanwhile(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    """The mirror race: a setup between the listing and the decision is not undone."""
    made: list[SandboxNetwork] = []

    def set_up_after_listing(function: str, phase: str) -> None:
        if function == "HcnEnumerateNamespaces" and phase == "after" and not made:
            hcn.hook = None
            made.append(networks.setup("late", POD))

    hcn.hook = set_up_after_listing
    report = networks.reconcile(["late"])
    assert report == type(report)()
    assert networks.get("late") == made[0] and hcn.has_namespace(made[0].namespace_id)


@pytest.mark.slow  # a stress run
def test_stress_over_in_memory_hcn(
    hcn: InMemoryHcn, networks: SandboxNetworks, capsys: pytest.CaptureFixture[str]
) -> None:
    """32 worker threads and 4 reconcilers over 256 sandboxes, every HCN call failing
    with probability 5 %: no dead namespace handed out, nothing leaked at the end."""
    host_default = hcn.find_host_default().id
    hcn.fail_randomly(0.05, seed=8)
    report = sandbox_stress(
        networks, pod_plan=POD, host_plan=HOST, exists=hcn.has_namespace, host_default=host_default
    )
    faults = hcn.faults_injected
    hcn.clear_faults()
    assert report.violations == []
    assert faults > 100 and report.hcn_errors > 0  # the faults really hit
    final = networks.reconcile([])
    assert final.state_errors == ()
    assert networks.sandbox_ids() == () and not list(Path(networks.state_dir).iterdir())
    assert set(hcn.namespaces()) == {host_default}
    assert_clean(hcn)
    with capsys.disabled():
        print(
            f"\n[stress InMemoryHcn] operations={report.operations} "
            f"hcn_calls={len(hcn.calls)} faults_injected={faults} "
            f"failed_operations={report.hcn_errors} violations={len(report.violations)}"
        )


# --- arguments checked at the door ---------------------------------------------------------


@pytest.mark.parametrize(
    ("live", "argument", "got"),
    [
        ("sandbox-1", "live_sandbox_ids", "str"),  # would iterate its characters
        (b"sandbox-1", "live_sandbox_ids", "bytes"),
        (bytearray(b"sb"), "live_sandbox_ids", "bytearray"),
        (5, "live_sandbox_ids", "int"),
        (None, "live_sandbox_ids", "NoneType"),
        (["sandbox-1", 5], "live_sandbox_ids[1]", "int"),
        ([b"sandbox-1"], "live_sandbox_ids[0]", "bytes"),
    ],
)
def test_reconcile_refuses_anything_but_an_iterable_of_ids(
    hcn: InMemoryHcn, networks: SandboxNetworks, live: object, argument: str, got: str
) -> None:
    """reconcile("sandbox-1") once iterated the characters and tore the live sandbox down."""
    live_result = networks.setup("sandbox-1", POD)
    with pytest.raises(InvalidArgumentError) as caught:
        networks.reconcile(live)  # type: ignore[arg-type]
    assert (caught.value.argument, caught.value.got) == (argument, got)
    assert networks.get("sandbox-1") == live_result  # nothing was torn down
    assert hcn.has_namespace(live_result.namespace_id)


def test_reconcile_reads_the_ids_before_acting(networks: SandboxNetworks) -> None:
    networks.setup("kept", POD)

    def ids() -> Iterator[str]:
        yield "other"
        raise RuntimeError("the caller's iterator broke")

    # Typed, like every bad argument: the caller's iterator broke midway.
    with pytest.raises(InvalidArgumentError) as broken:
        networks.reconcile(ids())
    assert broken.value.argument == "live_sandbox_ids"
    assert networks.sandbox_ids() == ("kept",)  # torn down nothing on the way
    with pytest.raises(InvalidRequestError) as caught:
        networks.reconcile(["kept", ""])
    assert caught.value.field == "live_sandbox_ids[1]"
    assert networks.reconcile(iter(["kept"])) == networks.reconcile(("kept",))


class _Sneaky(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ must not be called")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__ must not be called")


def test_str_subclass_ids_are_used_as_plain_text(networks: SandboxNetworks) -> None:
    result = networks.setup(_Sneaky("sb"), POD)
    assert type(result.sandbox_id) is str
    assert networks.reconcile([_Sneaky("sb")]).torn_down == ()
    assert networks.teardown(_Sneaky("sb"))


@pytest.mark.parametrize("plan_value", [None, "pod", {"host_network": False}, api_pb2.NODE])
def test_setup_refuses_what_is_not_a_plan(
    hcn: InMemoryHcn, networks: SandboxNetworks, plan_value: object
) -> None:
    hcn.clear_calls()
    with pytest.raises(InvalidArgumentError) as caught:
        networks.setup("x", plan_value)  # type: ignore[arg-type]
    assert caught.value.argument == "plan"
    assert hcn.calls == () and networks.sandbox_ids() == ()


@pytest.mark.parametrize("bad", [None, 5, b"sb", ["sb"]])
def test_sandbox_ids_of_the_wrong_type(networks: SandboxNetworks, bad: object) -> None:
    for call in (
        lambda: networks.setup(bad, POD),  # type: ignore[arg-type]
        lambda: networks.teardown(bad),  # type: ignore[arg-type]
        lambda: networks.get(bad),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidArgumentError) as caught:
            call()
        assert caught.value.argument == "sandbox_id"


def test_constructor_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        SandboxNetworks(None, tmp_path)  # type: ignore[arg-type]
    assert caught.value.argument == "client"
    with pytest.raises(InvalidArgumentError):
        SandboxNetworks(InMemoryHcn(), 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        SandboxNetworks(InMemoryHcn(), tmp_path, owner=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError):
        SandboxNetworks(InMemoryHcn(), tmp_path, owner="")
