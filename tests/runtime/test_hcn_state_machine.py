"""A hypothesis state machine over SandboxNetworks + InMemoryHcn, with faults and crashes.

Rules set sandboxes up and tear them down, reconcile, inject an HCN fault at any of the
seven calls (any nth call), and kill the process at any HCN call (before or after its
effect) or inside a state-file write, then restart on the same state directory.
Invariants, after every step:

* no leaked namespace: every namespace we own is named by a state record;
* no open handle, no unfreed string, nothing freed or closed twice;
* HostDefault is never deleted;
* state files always parse (atomic writes); a "ready" record always names a namespace
  that exists, even right after a crash; a sandbox whose setup returned and that has
  not been torn down or crashed since still has exactly that namespace;
* teardown is idempotent (checked inside the teardown rule);
* linearizability per sandbox: the ``interleaved`` rule runs a second operation
  from inside the first one's HCN call (any call, before or after its effect), as another
  thread could. Whatever the interleaving, a namespace setup returns exists at that
  moment, and a sandbox torn down stays torn down (no record, no namespace of its name)
  until it is set up again. A second operation that would have to wait for the first's
  lock is not run there: a thread would wait too.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from unittest import mock

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kubelet_winnet.errors import HcnError, InvalidRequestError
from kubelet_winnet.runtime.hcn import (
    DEFAULT_OWNER,
    FUNCTIONS,
    InMemoryHcn,
    SandboxNetwork,
    SandboxNetworks,
)
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn import _state as state_module
from tests.strategies import Crash, crash_at, sandbox_plan

SANDBOXES = ("a", "b", "c", "ü-Ω-🚀")
# Not the not-found family: a "not found" that lies (the object is there) would make any
# runtime forget a live namespace; real absence is exercised through crashes instead.
FAULT_CODES = (
    hresult.E_FAIL,
    hresult.E_ACCESSDENIED,
    hresult.HCN_E_INVALID_JSON,
    hresult.HCN_E_ENTITY_HAS_REFERENCES,
    0,  # S_OK with an error record
)


PLANS = {host: sandbox_plan(host_process=host, policy="containerd") for host in (False, True)}

# Mostly two ids, so that rules often meet a sandbox an earlier rule (or crash) touched.
sandboxes = st.sampled_from(SANDBOXES[:2]) | st.sampled_from(SANDBOXES)
operations = st.tuples(
    st.sampled_from(["setup", "teardown", "reconcile"]),
    sandboxes,
    st.booleans(),
    st.frozensets(st.sampled_from(SANDBOXES)),
)
faults = st.lists(
    st.tuples(st.sampled_from(FUNCTIONS), st.sampled_from(FAULT_CODES), st.integers(1, 3)),
    max_size=2,
)


class SandboxNetworkMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        # Real files either way; on tmpfs the thousands of fsyncs of a run cost nothing.
        shm = Path("/dev/shm")
        where = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
        self.state_dir = Path(tempfile.mkdtemp(prefix="winnet-state-machine-", dir=where))
        self.hcn = InMemoryHcn()
        self.host_default = self.hcn.find_host_default().id
        self.networks = SandboxNetworks(self.hcn, self.state_dir)
        self.ready: dict[str, SandboxNetwork] = {}  # setups that returned, still standing
        self.torn: set[str] = set()  # teardowns that returned, not set up since
        self.in_interleave = False

    # --- helpers ---------------------------------------------------------------------

    def arm(self, armed: list[tuple[str, int, int]]) -> None:
        for function, code, nth in armed:
            record = None
            if code == 0 and function != "HcnCloseNamespace":
                record = json.dumps(
                    {"Success": False, "Error": "injected ✗", "ErrorCode": 0x80004005}
                )
            elif code == 0:
                code = hresult.E_FAIL
            self.hcn.fail(function, code, record, nth=nth)

    def restart(self) -> None:
        self.hcn.hook = None
        self.hcn.clear_faults()
        self.hcn.simulate_process_exit()
        self.networks = SandboxNetworks(self.hcn, self.state_dir)

    def records(self) -> list[state_module.Record]:
        return [
            state_module.Record.from_json(path.read_bytes(), str(path))
            for path in self.state_dir.glob("sandbox-*.json")
        ]

    def owned(self) -> set[uuid.UUID]:
        return {i for i, n in self.hcn.namespaces().items() if n.owner == DEFAULT_OWNER}

    def recorded_kind(self, sandbox: str) -> bool | None:
        # A "removing" record is finished off by the next setup, so it binds no kind.
        for record in self.records():
            if record.sandbox_id == sandbox and record.phase != "removing":
                return record.host_network
        return None

    def run(self, operation: str, sandbox: str, host: bool, live: frozenset[str]) -> None:
        if operation == "setup":
            self.networks.setup(sandbox, PLANS[host])
        elif operation == "teardown":
            self.networks.teardown(sandbox)
        else:
            self.networks.reconcile(live)

    # --- rules -----------------------------------------------------------------------

    @rule(sandbox=sandboxes, host=st.booleans(), armed=faults)
    def set_up_sandbox(self, sandbox: str, host: bool, armed: list[tuple[str, int, int]]) -> None:
        self.arm(armed)
        try:
            self.perform("setup", sandbox, host, frozenset())
        finally:
            self.hcn.clear_faults()

    def perform(self, operation: str, sandbox: str, host: bool, live: frozenset[str]) -> None:
        """Run one operation, check what it returned at the moment it returns, and
        update the model."""
        if operation == "setup":
            self.torn.discard(sandbox)
            kind = self.recorded_kind(sandbox)
            try:
                result = self.networks.setup(sandbox, PLANS[host])
            except InvalidRequestError as error:
                # an outcome checked, not an expected raise: pytest.raises does not fit
                assert error.field == "sandbox_id"  # noqa: PT017
                assert kind is not None and kind != host
                return
            except HcnError:
                return
            assert kind in (None, host)
            assert result.host_network == host
            if host:
                assert result.namespace_id == self.host_default
            else:  # exists now, when setup returns
                assert self.hcn.has_namespace(result.namespace_id)
            if sandbox in self.ready:
                assert result == self.ready[sandbox]  # a repeated setup: the same namespace
            self.ready[sandbox] = result
        elif operation == "teardown":
            try:
                self.networks.teardown(sandbox)
            except HcnError:
                return
            self.ready.pop(sandbox, None)
            self.torn.add(sandbox)
        else:
            # Sandboxes reconcile may tear down: no prediction about them from here on.
            for known in [s for s in self.ready if s not in live]:
                self.ready.pop(known)
            try:
                self.networks.reconcile(live)
            except HcnError:
                return
            for known in [s for s in self.ready if s not in live]:
                self.ready.pop(known)  # set up by a second operation meanwhile
            if not self.in_interleave:
                self.torn |= set(SANDBOXES) - live

    @rule(
        first=operations,
        second=operations,
        at=st.integers(1, 4) | st.integers(1, 12),
        phase=st.sampled_from(["before", "after"]),
        armed=faults,
    )
    def interleaved(
        self,
        first: tuple[str, str, bool, frozenset[str]],
        second: tuple[str, str, bool, frozenset[str]],
        at: int,
        phase: str,
        armed: list[tuple[str, int, int]],
    ) -> None:
        seen = [0]
        fired = [False]
        # reconcile may lock any sandbox; setup and teardown lock their own
        needs = SANDBOXES if second[0] == "reconcile" else (second[1],)

        def hook(function: str, when: str) -> None:
            if when == "before":
                seen[0] += 1
            if fired[0] or seen[0] != at or when != phase:
                return
            # White-box: a thread would block on a lock the first operation holds.
            if any(self.networks._locks.busy(s) for s in needs):
                return
            fired[0] = True
            self.hcn.hook = None
            try:
                self.perform(*second)
            finally:
                self.hcn.hook = hook

        self.arm(armed)
        self.in_interleave = True
        self.hcn.hook = hook
        try:
            self.perform(*first)
        finally:
            self.hcn.hook = None
            self.in_interleave = False
            self.hcn.clear_faults()

    @rule(sandbox=sandboxes, armed=faults)
    def tear_down_sandbox(self, sandbox: str, armed: list[tuple[str, int, int]]) -> None:
        self.arm(armed)
        try:
            self.networks.teardown(sandbox)
        except HcnError:
            assert sandbox in self.networks.sandbox_ids()  # the record stays for a retry
            return
        finally:
            self.hcn.clear_faults()
        self.ready.pop(sandbox, None)
        self.torn.add(sandbox)
        assert sandbox not in self.networks.sandbox_ids()
        assert self.networks.teardown(sandbox) is False  # idempotent

    @rule(live=st.frozensets(st.sampled_from(SANDBOXES)), armed=faults)
    def reconcile(self, live: frozenset[str], armed: list[tuple[str, int, int]]) -> None:
        self.arm(armed)
        try:
            self.networks.reconcile(live)
        except HcnError:
            for sandbox in list(self.ready):  # some may have been torn down before it failed
                if sandbox not in live:
                    self.ready.pop(sandbox)
            return
        finally:
            self.hcn.clear_faults()
        for sandbox in list(self.ready):
            if sandbox not in live:
                self.ready.pop(sandbox)
        self.torn |= set(SANDBOXES) - live
        assert set(self.networks.sandbox_ids()) <= live
        recorded = {r.namespace_id for r in self.records()}
        assert self.owned() <= recorded

    @rule(
        operation=st.sampled_from(["setup", "teardown", "reconcile"]),
        sandbox=sandboxes,
        host=st.booleans(),
        live=st.frozensets(st.sampled_from(SANDBOXES)),
        index=st.integers(1, 3) | st.integers(1, 12),  # low indexes hit most paths
        phase=st.sampled_from(["before", "after"]),
    )
    def crash_at_hcn_call(
        self, operation: str, sandbox: str, host: bool, live: frozenset[str], index: int, phase: str
    ) -> None:
        self.hcn.hook = crash_at(index, phase)
        try:
            self.run(operation, sandbox, host, live)
        except (Crash, HcnError, InvalidRequestError):
            pass
        finally:
            self.restart()
        self.forget_after_crash(operation, sandbox, live)

    @rule(
        operation=st.sampled_from(["setup", "teardown"]),
        sandbox=sandboxes,
        host=st.booleans(),
        write=st.integers(1, 2),
    )
    def crash_in_state_write(self, operation: str, sandbox: str, host: bool, write: int) -> None:
        real_replace = os.replace
        count = [0]

        def replace(src: str, dst: str) -> None:
            count[0] += 1
            if count[0] == write:
                raise Crash
            real_replace(src, dst)

        try:
            with mock.patch.object(os, "replace", replace):
                self.run(operation, sandbox, host, frozenset())
        except (Crash, HcnError, InvalidRequestError):
            pass
        finally:
            self.restart()
        assert not list(self.state_dir.glob(".*.tmp"))  # swept on restart
        self.forget_after_crash(operation, sandbox, frozenset())

    def forget_after_crash(self, operation: str, sandbox: str, live: frozenset[str]) -> None:
        # What an interrupted operation did is unknown: stop predicting those sandboxes.
        if operation == "reconcile":
            for known in list(self.ready):
                if known not in live:
                    self.ready.pop(known)
        elif operation == "teardown":
            self.ready.pop(sandbox, None)
        self.torn.discard(sandbox)

    @precondition(lambda self: bool(self.ready))
    @rule()
    def restart_cleanly(self) -> None:
        self.restart()

    # --- invariants ------------------------------------------------------------------

    @rule(
        live=st.frozensets(st.sampled_from(SANDBOXES)),
        sandbox=sandboxes,
        host=st.booleans(),
        teardown_first=st.booleans(),
        skip=st.integers(0, 20),
        times=st.integers(1, 3),
    )
    def reconcile_while_toggling(
        self,
        live: frozenset[str],
        sandbox: str,
        host: bool,
        teardown_first: bool,
        skip: int,
        times: int,
    ) -> None:
        """reconcile, while the sandbox is torn down or set up, alternately, ``times``
        times from the ``skip``-th point of its HCN calls on (before and after each, where
        the sandbox's lock is free): any point between reconcile's listing and its
        decisions sees the sandbox change under it."""
        points = [0]
        toggles = [teardown_first]

        def hook(function: str, when: str) -> None:
            points[0] += 1
            if points[0] <= skip or len(toggles) > times:
                return
            if self.networks._locks.busy(sandbox):  # white-box, as in `interleaved`
                return
            self.hcn.hook = None
            try:
                self.perform("teardown" if toggles[-1] else "setup", sandbox, host, live)
            finally:
                toggles.append(not toggles[-1])
                self.hcn.hook = hook

        self.in_interleave = True
        self.hcn.hook = hook
        try:
            self.perform("reconcile", sandbox, host, live)
        finally:
            self.hcn.hook = None
            self.in_interleave = False

    @invariant()
    def no_open_handle_or_unfreed_string(self) -> None:
        assert self.hcn.open_handles == 0
        assert self.hcn.unfreed_strings == 0
        assert self.hcn.bad_frees == 0 and self.hcn.bad_closes == 0

    @invariant()
    def no_leaked_namespace(self) -> None:
        recorded = {r.namespace_id for r in self.records()}
        assert self.owned() <= recorded

    @invariant()
    def torn_down_stays_torn_down(self) -> None:
        recorded = {r.sandbox_id for r in self.records()}
        names = {n.name for n in self.hcn.namespaces().values() if n.owner == DEFAULT_OWNER}
        for sandbox in self.torn:
            assert sandbox not in recorded, f"{sandbox} came back after its teardown"
            assert sandbox not in names, f"{sandbox}'s namespace outlived its teardown"

    @invariant()
    def host_default_intact(self) -> None:
        assert self.host_default in self.hcn.namespaces()

    @invariant()
    def ready_records_name_live_namespaces(self) -> None:
        # "ready" must never lie, even right after a crash: a setup of that id would hand
        # the recorded GUID to CNI without calling HCN.
        namespaces = self.hcn.namespaces()
        for record in self.records():
            if record.phase == "ready" and record.host_network:
                assert record.namespace_id == self.host_default
            elif record.phase == "ready":
                assert record.namespace_id in namespaces, record

    @invariant()
    def state_consistent(self) -> None:
        records = self.records()  # raises if any file is torn
        assert len({r.sandbox_id for r in records}) == len(records)
        for sandbox, result in self.ready.items():
            assert self.networks.get(sandbox) == result
            assert result.namespace_id in self.hcn.namespaces()

    def teardown(self) -> None:  # hypothesis calls this at the end of each run
        try:
            self.restart()
            for sandbox in SANDBOXES:
                self.networks.teardown(sandbox)
            assert self.owned() == set()
            assert self.networks.sandbox_ids() == ()
            assert set(self.hcn.namespaces()) == {self.host_default}
        finally:
            shutil.rmtree(self.state_dir, ignore_errors=True)


SandboxNetworkMachine.TestCase.settings = settings(settings.default, stateful_step_count=25)
TestSandboxNetworkMachine = SandboxNetworkMachine.TestCase
