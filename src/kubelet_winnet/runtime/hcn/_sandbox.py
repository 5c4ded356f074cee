"""Apply a :class:`~kubelet_winnet.runtime.NetworkPlan` through HCN, crash-safely.

Call order (the tables in ``kubelet_winnet.runtime`` list the same calls, and a test
checks that they agree):

* pod network setup: record intent (a GUID we choose) -> HcnCreateNamespace ->
  HcnCloseNamespace -> record ready. containerd creates the namespace from an empty
  document (``pkg/netns/netns_windows.go``, ``NewNetNS``); we add ``Owner``/``Name``.
* host network setup: create nothing; find the ``HostDefault`` namespace (enumerate, then
  open/query/close each until one has that Type) -> record ready.
* teardown: record "removing" -> HcnDeleteNamespace by GUID, "not found" counting as
  done (containerd ``pkg/netns/netns_windows.go``, ``Remove``) -> forget the record. If
  HCN refuses the delete the record goes back to what it was. Host records never delete
  anything.

Because the GUID is written down before HcnCreateNamespace runs, a crash between any two
steps leaves a record that names every namespace that might exist; teardown and
reconcile work from those records after a restart. One ``SandboxNetworks`` per state
directory (it sweeps stray temp files when it opens the directory).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from kubelet_winnet.errors import HcnError, HcnNotFoundError, InvalidRequestError
from kubelet_winnet.runtime.hcn import _documents as documents
from kubelet_winnet.runtime.hcn._client import HcnClient
from kubelet_winnet.runtime.hcn._state import Record, StateStore

__all__ = [
    "DEFAULT_OWNER",
    "PlanLike",
    "ReconcileReport",
    "SandboxNetwork",
    "SandboxNetworks",
]

DEFAULT_OWNER = "kubelet-winnet"


class PlanLike(Protocol):
    """What :meth:`SandboxNetworks.setup` reads from a plan (``runtime.NetworkPlan`` fits)."""

    @property
    def host_network(self) -> bool: ...

    @property
    def policy(self) -> str: ...

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class SandboxNetwork:
    """The network a sandbox got: the namespace GUID to hand to CNI and the containers
    (``spec.windows.network.networkNamespace``), or the host's HostDefault namespace."""

    sandbox_id: str
    namespace_id: uuid.UUID
    host_network: bool
    policy: str
    reason: str


@dataclass(frozen=True)
class ReconcileReport:
    """What :meth:`SandboxNetworks.reconcile` changed."""

    torn_down: tuple[str, ...] = ()  # recorded sandboxes that are no longer live
    deleted_orphans: tuple[uuid.UUID, ...] = ()  # our namespaces no record named
    adopted: tuple[str, ...] = ()  # live sandboxes whose record was lost, re-recorded


class _KeyedLocks:
    """One lock per key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, list[int]]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[key]


def _add_note(error: BaseException, note: str) -> None:
    # BaseException.add_note is 3.11+; we support 3.10, where __notes__ is the same
    # attribute the exceptiongroup backport and pytest read.
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:
        notes = [*getattr(error, "__notes__", []), note]
        error.__notes__ = notes  # type: ignore[attr-defined]


def _check_sandbox_id(sandbox_id: object) -> str:
    if not isinstance(sandbox_id, str) or not sandbox_id:
        raise InvalidRequestError("sandbox_id", "must be a non-empty string")
    if "\x00" in sandbox_id:
        raise InvalidRequestError("sandbox_id", "contains a NUL character")
    try:
        sandbox_id.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequestError(
            "sandbox_id", "is not valid Unicode (lone surrogate)"
        ) from None
    return sandbox_id


class SandboxNetworks:
    """Sets up and tears down sandbox networks on ``client``, remembering them in
    ``state_dir``. Thread-safe; distinct sandboxes proceed concurrently."""

    def __init__(
        self,
        client: HcnClient,
        state_dir: str | os.PathLike[str],
        *,
        owner: str = DEFAULT_OWNER,
    ) -> None:
        if not owner:
            raise InvalidRequestError("owner", "must be a non-empty string")
        self.client = client
        self.owner = owner
        self._store = StateStore(state_dir)
        self._locks = _KeyedLocks()

    @property
    def state_dir(self) -> str:
        return str(self._store.directory)

    # --- queries -----------------------------------------------------------------------

    def get(self, sandbox_id: str) -> SandboxNetwork | None:
        """The recorded network of a sandbox whose setup completed, else ``None``."""
        with self._locks.hold(_check_sandbox_id(sandbox_id)):
            record = self._store.load(sandbox_id)
        if record is None or record.phase != "ready":
            return None
        return self._result(record)

    def sandbox_ids(self) -> tuple[str, ...]:
        """Every sandbox with a record (complete or not)."""
        return tuple(sorted(r.sandbox_id for r in self._store.records()))

    # --- setup -------------------------------------------------------------------------

    def setup(self, sandbox_id: str, plan: PlanLike) -> SandboxNetwork:
        """Give ``sandbox_id`` the network ``plan`` asks for.

        Repeating it for a sandbox that is set up returns the recorded result without
        calling HCN; an interrupted setup is resumed. Asking for the other kind of network
        than the one recorded is an :class:`InvalidRequestError` (tear down first).
        """
        _check_sandbox_id(sandbox_id)
        with self._locks.hold(sandbox_id):
            record = self._store.load(sandbox_id)
            if record is not None and record.phase == "removing":
                # A teardown was cut short: its namespace may be gone already, so never
                # hand it out again. Finish the teardown, then set up afresh.
                self._teardown_locked(sandbox_id)
                record = None
            if record is not None and record.host_network != plan.host_network:
                have = "host" if record.host_network else "pod"
                want = "host" if plan.host_network else "pod"
                raise InvalidRequestError(
                    "sandbox_id",
                    f"sandbox {sandbox_id!r} already has a {have} network; the plan asks for a "
                    f"{want} network (tear it down first)",
                )
            if record is not None and record.phase == "ready":
                return self._result(record)
            if plan.host_network:
                return self._setup_host(sandbox_id, plan)
            return self._setup_pod(sandbox_id, plan, record)

    def _setup_host(self, sandbox_id: str, plan: PlanLike) -> SandboxNetwork:
        host = self.client.find_host_default()
        record = Record(sandbox_id, "ready", True, host.id, plan.policy, plan.reason)
        self._store.save(record)
        return self._result(record)

    def _setup_pod(
        self, sandbox_id: str, plan: PlanLike, pending: Record | None
    ) -> SandboxNetwork:
        if pending is not None:
            # Interrupted before: the namespace may exist. Look before creating again.
            try:
                with self.client.opened(pending.namespace_id):
                    pass
            except HcnNotFoundError:
                pass
            else:
                return self._mark_ready(pending)
            intent = pending
        else:
            intent = Record(
                sandbox_id, "creating", False, uuid.uuid4(), plan.policy, plan.reason
            )
            self._store.save(intent)
        settings = documents.namespace_settings(owner=self.owner, name=sandbox_id)
        try:
            handle = self.client.create_namespace(intent.namespace_id, settings)
        except HcnError as error:
            self._abandon(intent, error)
            raise
        # A failing close leaves the record at "creating": a retry or teardown finishes.
        self.client.close_namespace(handle)
        return self._mark_ready(intent)

    def _mark_ready(self, intent: Record) -> SandboxNetwork:
        record = Record(
            intent.sandbox_id,
            "ready",
            False,
            intent.namespace_id,
            intent.policy,
            intent.reason,
        )
        self._store.save(record)
        return self._result(record)

    def _abandon(self, intent: Record, error: HcnError) -> None:
        """After a failed create: make sure no namespace stayed behind, then forget it.

        If that cannot be confirmed the record stays, so teardown or reconcile can finish.
        """
        try:
            self.client.delete_namespace(intent.namespace_id)
        except HcnNotFoundError:
            pass
        except HcnError as cleanup:
            _add_note(error, f"cleanup left the record for a later teardown: {cleanup}")
            return
        self._store.delete(intent.sandbox_id)

    # --- teardown ----------------------------------------------------------------------

    def teardown(self, sandbox_id: str) -> bool:
        """Release a sandbox's network. Idempotent: an unknown sandbox, or a namespace
        that is already gone, is done. Returns whether a record was removed.

        Run CNI DEL before this, as containerd does: HCN may refuse to delete a
        namespace that still holds endpoints.
        """
        _check_sandbox_id(sandbox_id)
        with self._locks.hold(sandbox_id):
            return self._teardown_locked(sandbox_id)

    def _teardown_locked(self, sandbox_id: str) -> bool:
        record = self._store.load(sandbox_id)
        if record is None:
            return False
        if not record.host_network:
            if record.phase != "removing":
                # Written first so that a crash after the delete cannot leave a "ready"
                # record naming a namespace that no longer exists.
                self._store.save(dataclasses.replace(record, phase="removing"))
            try:
                self.client.delete_namespace(record.namespace_id)
            except HcnNotFoundError:
                pass  # already gone counts as done: containerd treats it as success too
            except HcnError:
                # HCN refused, so the namespace is still there: the sandbox keeps the
                # network it had until a retry succeeds.
                if record.phase != "removing":
                    self._store.save(record)
                raise
        self._store.delete(sandbox_id)
        return True

    # --- reconcile ---------------------------------------------------------------------

    def reconcile(self, live_sandbox_ids: Iterable[str]) -> ReconcileReport:
        """Delete what belongs to sandboxes that are gone.

        Tears down every recorded sandbox not in ``live_sandbox_ids``, then looks at
        every namespace marked with our ``Owner``: one that a record names stays; one
        of a live sandbox that has no record is adopted (recorded again); any other is
        an orphan and deleted. Meant for startup: ``live_sandbox_ids`` must include
        sandboxes being set up meanwhile.
        """
        live = {_check_sandbox_id(s) for s in live_sandbox_ids}
        torn_down = [
            r.sandbox_id
            for r in self._store.records()
            if r.sandbox_id not in live and self.teardown(r.sandbox_id)
        ]
        deleted: list[uuid.UUID] = []
        adopted: list[str] = []
        for namespace in self.client.list_namespaces():
            if namespace.owner != self.owner or namespace.is_host_default:
                continue
            verdict = self._reconcile_one(namespace, live)
            if verdict == "deleted":
                deleted.append(namespace.id)
            elif verdict == "adopted":
                adopted.append(namespace.name or "")
        return ReconcileReport(tuple(torn_down), tuple(deleted), tuple(adopted))

    def _reconcile_one(self, namespace: documents.Namespace, live: set[str]) -> str:
        name = namespace.name or ""
        valid_name = bool(name) and "\x00" not in name
        with self._locks.hold(name) if valid_name else contextlib.nullcontext():
            known = self._store.load(name) if valid_name else None
            if known is not None and known.namespace_id == namespace.id:
                return "kept"
            if known is None and name in live:
                reason = "adopted by reconcile: namespace found, state record missing"
                self._store.save(Record(name, "ready", False, namespace.id, "unknown", reason))
                return "adopted"
            try:
                self.client.delete_namespace(namespace.id)
            except HcnNotFoundError:
                return "gone"
            return "deleted"

    def _result(self, record: Record) -> SandboxNetwork:
        return SandboxNetwork(
            record.sandbox_id,
            record.namespace_id,
            record.host_network,
            record.policy,
            record.reason,
        )

