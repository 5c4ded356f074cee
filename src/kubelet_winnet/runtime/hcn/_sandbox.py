"""Apply a :class:`~kubelet_winnet.runtime.NetworkPlan` through HCN, crash-safely.

Call order (the tables in ``kubelet_winnet.runtime`` list the same calls, and a test
checks that they agree):

* pod network setup: record intent (a GUID we choose) -> HcnCreateNamespace ->
  HcnCloseNamespace -> record ready. containerd creates the namespace from an empty
  document (``pkg/netns/netns_windows.go``, ``NewNetNS``); we add ``Owner``/``Name``.
* host network setup: create nothing; find the ``HostDefault`` namespace (enumerate, then
  open/query/close each until one has that Type) -> record ready.
* repeated setup of a sandbox that is set up: HcnOpenNamespace -> HcnCloseNamespace on
  the recorded namespace, so what is handed out exists (a new one if it vanished).
* teardown: record "removing" -> HcnDeleteNamespace by GUID, "not found" counting as
  done (containerd ``pkg/netns/netns_windows.go``, ``Remove``) -> forget the record. If
  HCN refuses the delete the record goes back to what it was. Host records never delete
  anything.

Because the GUID is written down before HcnCreateNamespace runs, a crash between any two
steps leaves a record that names every namespace that might exist; teardown and
reconcile work from those records after a restart. One ``SandboxNetworks`` per state
directory (it sweeps stray temp files when it opens the directory).

Concurrency: one lock per sandbox id; everything that reads or changes a sandbox's record
or its namespace holds it and reads the record afresh under it (reconcile included, per
decision), which makes the operations on one sandbox linearizable.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kubelet_winnet._describe import type_name
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import (
    HcnError,
    HcnNotFoundError,
    InvalidArgumentError,
    InvalidRequestError,
    StateFileError,
)
from kubelet_winnet.runtime._plan import NetworkPlan
from kubelet_winnet.runtime.hcn import _args
from kubelet_winnet.runtime.hcn import _documents as documents
from kubelet_winnet.runtime.hcn._client import HcnClient
from kubelet_winnet.runtime.hcn._state import MAX_RECORD_BYTES, Record, StateStore

__all__ = [
    "DEFAULT_OWNER",
    "ReconcileReport",
    "SandboxNetwork",
    "SandboxNetworks",
]

DEFAULT_OWNER = "kubelet-winnet"
# More live sandboxes than any node runs; a bound so that an endless iterable fails fast.
_MAX_LIVE_IDS = 1 << 20
# Sandbox ids are 64 hex digits in containerd and CRI-O. The bound keeps every record
# (the id JSON-escaped, up to 6 bytes per byte) far inside what the state reader
# accepts, so setup, get, teardown and reconcile all accept the same ids.
MAX_SANDBOX_ID_BYTES = 4096


@dataclass(frozen=True)
class SandboxNetwork:
    """The network a sandbox got: the namespace GUID to hand to CNI and the containers
    (``spec.windows.network.networkNamespace``), or the host's HostDefault namespace."""

    sandbox_id: str
    namespace_id: uuid.UUID
    host_network: bool
    policy: str
    reason: str

    def __post_init__(self) -> None:
        _args.text("sandbox_id", self.sandbox_id)
        _args.guid("namespace_id", self.namespace_id)
        _args.flag("host_network", self.host_network)
        _args.text("policy", self.policy)
        _args.text("reason", self.reason)


@dataclass(frozen=True)
class ReconcileReport:
    """What :meth:`SandboxNetworks.reconcile` changed, and the record files it could not
    read (left as they are, and any namespace they might name left in place)."""

    torn_down: tuple[str, ...] = ()  # recorded sandboxes that are no longer live
    deleted_orphans: tuple[uuid.UUID, ...] = ()  # our namespaces no record named
    adopted: tuple[str, ...] = ()  # live sandboxes whose record was lost, re-recorded
    state_errors: tuple[StateFileError, ...] = ()  # unreadable records, one per file

    def __post_init__(self) -> None:
        kinds: tuple[tuple[str, type], ...] = (
            ("torn_down", str), ("deleted_orphans", uuid.UUID), ("adopted", str),
            ("state_errors", StateFileError),
        )
        for name, kind in kinds:
            value = getattr(self, name)
            if type(value) is not tuple:
                raise InvalidArgumentError(name, f"a tuple of {kind.__name__}", type_name(value))
            for index, item in enumerate(value):
                if not _args.instance(item, kind):
                    raise InvalidArgumentError(
                        f"{name}[{index}]", f"a {kind.__name__}", type_name(item)
                    )


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

    def busy(self, key: str) -> bool:
        """Whether someone holds or waits for ``key`` (for tests that interleave)."""
        with self._guard:
            return key in self._locks


def _add_note(error: BaseException, note: str) -> None:
    # BaseException.add_note is 3.11+; we support 3.10, where __notes__ is the same
    # attribute the exceptiongroup backport and pytest read.
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:
        notes = [*getattr(error, "__notes__", []), note]
        error.__notes__ = notes  # type: ignore[attr-defined]


def _brief(text: str) -> str:
    return repr(cut(text, 63))


def _sandbox_id_problem(sandbox_id: str) -> str | None:
    if not sandbox_id:
        return "must be a non-empty string"
    if "\x00" in sandbox_id:
        return "contains a NUL character"
    try:
        size = len(sandbox_id.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid Unicode (lone surrogate)"
    if size > MAX_SANDBOX_ID_BYTES:
        return f"is {size} bytes long; sandbox ids of at most {MAX_SANDBOX_ID_BYTES} are accepted"
    return None


def _check_sandbox_id(sandbox_id: object, field: str = "sandbox_id") -> str:
    if not _args.instance(sandbox_id, str):
        raise InvalidArgumentError(field, "a sandbox id (str)", type_name(sandbox_id))
    text = str.__str__(sandbox_id)  # a plain str: a subclass's own methods never run
    problem = _sandbox_id_problem(text)
    if problem is not None:
        raise InvalidRequestError(field, problem)
    return text


def _live_ids(value: object) -> frozenset[str]:
    """The ids ``reconcile`` must leave alone; read completely before anything is done."""
    if _args.instance(value, (str, bytes, bytearray, memoryview)):
        # A lone id iterates as its characters: every recorded sandbox would look dead.
        raise InvalidArgumentError(
            "live_sandbox_ids", "an iterable of sandbox ids (not a single str)", type_name(value)
        )
    try:
        iterator = iter(value)  # type: ignore[call-overload]
    except Exception:  # not iterable, or an __iter__ that raises
        raise InvalidArgumentError(
            "live_sandbox_ids", "an iterable of sandbox ids", type_name(value)
        ) from None
    live: set[str] = set()
    index = 0
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            break
        except Exception:  # the caller's iterator raised midway
            raise InvalidArgumentError(
                "live_sandbox_ids", "an iterable that can be read", type_name(value)
            ) from None
        if index == _MAX_LIVE_IDS:
            raise InvalidRequestError(
                "live_sandbox_ids", f"more than {_MAX_LIVE_IDS} sandbox ids"
            )
        live.add(_check_sandbox_id(item, f"live_sandbox_ids[{index}]"))
        index += 1
    return frozenset(live)


class SandboxNetworks:
    """Sets up and tears down sandbox networks on ``client``, remembering them in
    ``state_dir``. Thread-safe; distinct sandboxes proceed concurrently.

    Every operation on one sandbox (setup, teardown, and each decision ``reconcile``
    makes about it) runs under that sandbox's lock and reads its record afresh under
    the lock, so the operations on one sandbox are linearizable: each takes effect at
    one instant between its call and its return.
    """

    def __init__(
        self,
        client: HcnClient,
        state_dir: str | os.PathLike[str],
        *,
        owner: str = DEFAULT_OWNER,
    ) -> None:
        if not _args.instance(client, HcnClient):
            raise InvalidArgumentError(
                "client", "an HcnClient (ComputeNetwork or InMemoryHcn)", type_name(client)
            )
        state_dir = _args.path("state_dir", state_dir)
        if type(owner) is not str:
            raise InvalidArgumentError("owner", "str", type_name(owner))
        if _sandbox_id_problem(owner) is not None:
            raise InvalidRequestError("owner", "must be a non-empty string without NUL")
        self.client = client
        self.owner = owner
        self._store = StateStore(state_dir)
        self._locks = _KeyedLocks()

    @property
    def state_dir(self) -> str:
        return str(self._store.directory)

    # --- queries -----------------------------------------------------------------------

    def get(self, sandbox_id: str) -> SandboxNetwork | None:
        """The recorded network of a sandbox whose setup completed, else ``None``.

        Reads the record only; :meth:`setup` is what checks the namespace in HCN.
        """
        checked = _check_sandbox_id(sandbox_id)
        with self._locks.hold(checked):
            record = self._store.load(checked)
        if record is None or record.phase != "ready":
            return None
        return self._result(record)

    def sandbox_ids(self) -> tuple[str, ...]:
        """Every sandbox with a readable record (complete or not); :meth:`reconcile`
        reports the unreadable ones."""
        return tuple(sorted(r.sandbox_id for r in self._store.records()))

    # --- setup -------------------------------------------------------------------------

    def setup(self, sandbox_id: str, plan: NetworkPlan) -> SandboxNetwork:
        """Give ``sandbox_id`` the network ``plan`` asks for.

        The namespace returned exists in HCN when this returns: a repeated setup opens
        the recorded namespace to check (it was created, or found, under this sandbox's
        lock, and nothing but this sandbox's teardown deletes it), and if it vanished
        behind our back it makes a new one. An interrupted setup is resumed. Asking for
        the other kind of network than the one recorded is an
        :class:`InvalidRequestError` (tear down first).
        """
        checked = _check_sandbox_id(sandbox_id)
        if not _args.instance(plan, NetworkPlan):
            raise InvalidArgumentError(
                "plan", "a NetworkPlan (from plan_sandbox_network)", type_name(plan)
            )
        # Refused before anything is created: a record the reader would refuse could
        # never be torn down.
        policy = _args.text("plan.policy", plan.policy)
        reason = _args.text("plan.reason", plan.reason)
        probe = Record(checked, "creating", plan.host_network, uuid.UUID(int=0), policy, reason)
        if len(probe.to_json()) > MAX_RECORD_BYTES:
            raise InvalidRequestError(
                "plan", f"its reason and policy make a state record over {MAX_RECORD_BYTES} bytes"
            )
        with self._locks.hold(checked):
            record = self._store.load(checked)
            if record is not None and record.phase == "removing":
                # A teardown was cut short: its namespace may be gone already, so never
                # hand it out again. Finish the teardown, then set up afresh.
                self._teardown_locked(checked)
                record = None
            if record is not None and record.host_network != plan.host_network:
                have = "host" if record.host_network else "pod"
                want = "host" if plan.host_network else "pod"
                raise InvalidRequestError(
                    "sandbox_id",
                    f"sandbox {_brief(checked)} already has a {have} network; the plan asks "
                    f"for a {want} network (tear it down first)",
                )
            if record is not None and record.phase == "ready":
                if self._exists(record.namespace_id):
                    return self._result(record)
                # Deleted behind our back (not by us: our deletes are under this lock).
                self._store.delete(checked)
                record = None
            if plan.host_network:
                return self._setup_host(checked, plan)
            return self._setup_pod(checked, plan, record)

    def _exists(self, namespace_id: uuid.UUID) -> bool:
        try:
            with self.client.opened(namespace_id):
                return True
        except HcnNotFoundError:
            return False

    def _setup_host(self, sandbox_id: str, plan: NetworkPlan) -> SandboxNetwork:
        host = self.client.find_host_default()
        record = Record(sandbox_id, "ready", True, host.id, plan.policy, plan.reason)
        self._store.save(record)
        return self._result(record)

    def _setup_pod(
        self, sandbox_id: str, plan: NetworkPlan, pending: Record | None
    ) -> SandboxNetwork:
        if pending is not None:
            # Interrupted before: the namespace may exist. Look before creating again.
            if self._exists(pending.namespace_id):
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
        record = dataclasses.replace(intent, phase="ready")
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
        try:
            self._store.delete(intent.sandbox_id)
        except StateFileError as cleanup:
            _add_note(error, f"cleanup could not remove the record: {cleanup}")

    # --- teardown ----------------------------------------------------------------------

    def teardown(self, sandbox_id: str) -> bool:
        """Release a sandbox's network. Idempotent: an unknown sandbox, or a namespace
        that is already gone, is done. Returns whether a record was removed.

        Run CNI DEL before this, as containerd does: HCN may refuse to delete a
        namespace that still holds endpoints.
        """
        checked = _check_sandbox_id(sandbox_id)
        with self._locks.hold(checked):
            return self._teardown_locked(checked)

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

        Tears down every recorded sandbox not in ``live_sandbox_ids`` (an iterable of
        ids, read completely first; a single ``str`` is refused), then looks at every
        namespace marked with our ``Owner``: one that its sandbox's record names stays;
        one of a live sandbox that has no record is adopted (recorded again) if it still
        exists; any other is an orphan and deleted. Each of these decisions is taken
        under the sandbox's lock on a fresh read of its record, so it cannot undo a
        setup or teardown that ran meanwhile. It never touches a namespace without our
        ``Owner``, the HostDefault namespace, a live sandbox's recorded namespace, or
        anything an unreadable record might name (those files are reported in
        ``state_errors``). An HCN failure stops it; calling it again is safe.
        """
        live = _live_ids(live_sandbox_ids)
        errors: list[StateFileError] = []
        torn_down: list[str] = []
        for entry in self._store.scan():
            if isinstance(entry, StateFileError):
                errors.append(entry)
            elif entry.sandbox_id not in live and self._reap(entry.sandbox_id, errors):
                torn_down.append(entry.sandbox_id)
        deleted: list[uuid.UUID] = []
        adopted: list[str] = []
        for namespace_id in self.client.namespace_ids():
            try:
                namespace = self.client.get_namespace(namespace_id)
            except HcnNotFoundError:
                continue  # deleted since the listing
            if namespace.owner != self.owner or namespace.is_host_default:
                continue
            verdict = self._reconcile_namespace(namespace, live, errors)
            if verdict == "deleted":
                deleted.append(namespace.id)
            elif verdict == "adopted":
                adopted.append(namespace.name or "")
        by_path = {error.path: error for error in reversed(errors)}  # the first per file
        unique = tuple(by_path[path] for path in dict.fromkeys(e.path for e in errors))
        return ReconcileReport(tuple(torn_down), tuple(deleted), tuple(adopted), unique)

    def _reap(self, sandbox_id: str, errors: list[StateFileError]) -> bool:
        with self._locks.hold(sandbox_id):
            try:
                return self._teardown_locked(sandbox_id)
            except StateFileError as error:
                errors.append(error)
                return False

    def _reconcile_namespace(
        self, namespace: documents.Namespace, live: frozenset[str], errors: list[StateFileError]
    ) -> str:
        name = namespace.name or ""
        if _sandbox_id_problem(name) is not None:
            # No sandbox can have this id, so no record names it.
            return self._delete_orphan(namespace.id)
        with self._locks.hold(name):
            try:
                known = self._store.load(name)
            except StateFileError as error:
                errors.append(error)  # it may name this namespace: leave both alone
                return "unknown"
            if known is not None and known.namespace_id == namespace.id:
                return "kept"
            if known is None and name in live:
                # Listed before we held the lock: a teardown may have deleted it since.
                # Recording it without looking would hand a dead namespace to setup.
                if not self._exists(namespace.id):
                    return "gone"
                reason = "adopted by reconcile: namespace found, state record missing"
                try:
                    self._store.save(Record(name, "ready", False, namespace.id, "unknown", reason))
                except StateFileError as error:
                    errors.append(error)  # not recorded: left for the next reconcile
                    return "unknown"
                return "adopted"
            return self._delete_orphan(namespace.id)

    def _delete_orphan(self, namespace_id: uuid.UUID) -> str:
        try:
            self.client.delete_namespace(namespace_id)
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
