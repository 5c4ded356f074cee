"""An in-memory Host Compute Network, for tests and dry runs (pure Python, no I/O).

It implements the C-level contract of the seven namespace exports (HRESULTs, allocated
out-strings that must be freed, handles that must be closed) behind the same
:class:`~kubelet_winnet.runtime.hcn._client.HcnClient` methods as the ctypes binding, so the
freeing and closing logic under test is the production one.

Behaviour that real HCN may not share (documented in ``docs/runtime.md``): creating an
existing ID fails with ERROR_ALREADY_EXISTS; a namespace created without ``Type`` is a
``Host`` namespace in a new compartment (2, 3, ...); deleting a namespace with attached
endpoints is allowed; a failing ``HcnCloseNamespace`` still releases the handle.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kubelet_winnet._describe import type_name
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError
from kubelet_winnet.runtime.hcn import _args
from kubelet_winnet.runtime.hcn import _documents as documents
from kubelet_winnet.runtime.hcn import _hresult as hresult
from kubelet_winnet.runtime.hcn._client import FUNCTIONS, HcnClient

__all__ = ["CallHook", "InMemoryHcn"]

# hook(function, phase): phase "before" runs before the call has any effect, "after"
# once its effect is done but before its results are handed back. Tests raise from it
# to simulate a process that dies at that point.
CallHook = Callable[[str, str], None]


@dataclass
class _Fault:
    at_call: int
    hresult: int
    error_record: str | None


class _Failure(Exception):
    """Internal: a call ends with this HRESULT and error record."""

    def __init__(self, hr: int, record: str | None) -> None:
        super().__init__(hr)
        self.hr = hr & 0xFFFFFFFF
        self.record = record


def _signed(hr: int) -> int:
    # What a c_int32 restype would hand back: the raw layer speaks C.
    hr &= 0xFFFFFFFF
    return hr - (1 << 32) if hr & 0x80000000 else hr


def _natural(hr: int, message: str) -> _Failure:
    return _Failure(hr, documents.error_record(hr, message))


def _folded(doc: Mapping[str, object]) -> dict[str, object]:
    return {key.lower(): value for key, value in doc.items()}


def _parse_object(text: str, what: str) -> dict[str, object]:
    try:
        value = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        raise _natural(
            hresult.HCN_E_INVALID_JSON, f"{what} is not valid JSON"
        ) from None
    if not isinstance(value, dict):
        raise _natural(hresult.HCN_E_INVALID_JSON, f"{what} is not a JSON object")
    return value


def _matches(doc: Mapping[str, object], wanted: Mapping[str, object]) -> bool:
    have = _folded(doc)
    for key, value in wanted.items():
        actual = have.get(key.lower())
        if isinstance(value, str) and isinstance(actual, str):
            if value.strip("{}").lower() != actual.strip("{}").lower():
                return False
        elif actual != value:
            return False
    return True


class InMemoryHcn(HcnClient):
    """HCN namespaces held in memory.

    ``host_default`` adds the host's ``HostDefault`` namespace (compartment 1); pass
    ``False`` to model a host without one. Faults are armed with :meth:`fail` (the nth
    call) or :meth:`fail_randomly` (any call, with a probability); :attr:`hook` observes
    every call; :attr:`calls` logs the export names in order.
    """

    def __init__(
        self,
        *,
        host_default: bool = True,
        host_default_id: uuid.UUID | None = None,
        hook: CallHook | None = None,
    ) -> None:
        super().__init__()
        host_default = _args.flag("host_default", host_default)
        if host_default_id is not None:
            _args.guid("host_default_id", host_default_id)
        self.hook = _args.callable_or_none("hook", hook)
        self._lock = threading.RLock()
        self._namespaces: dict[uuid.UUID, dict[str, object]] = {}
        self._handles: dict[int, uuid.UUID] = {}
        self._strings: dict[int, str] = {}
        self._next_address = itertools.count(0x1000, 0x10)
        self._next_compartment = itertools.count(2)
        self._call_counts: dict[str, int] = dict.fromkeys(FUNCTIONS, 0)
        self._faults: dict[str, list[_Fault]] = {name: [] for name in FUNCTIONS}
        self._calls: list[str] = []
        self.bad_frees = 0
        self.bad_closes = 0
        self.faults_injected = 0  # armed and random faults that fired
        self._random_faults: tuple[float, random.Random, int] | None = None
        if host_default:
            self.add_namespace(
                host_default_id or uuid.uuid4(), namespace_type="HostDefault"
            )

    # --- test and dry-run controls -----------------------------------------------------

    def fail(
        self,
        function: str,
        hresult_value: int = hresult.E_FAIL,
        error_record: str | None = None,
        *,
        nth: int = 1,
    ) -> None:
        """Make the ``nth`` next call of ``function`` fail before it has any effect.

        The call returns ``hresult_value`` (a non-negative value with an error record
        also counts as failure, as in HCN) and ``error_record`` as its error record.
        """
        function = _args.text("function", function)
        hresult_value = _args.integer("hresult_value", hresult_value, -(1 << 31), 0xFFFFFFFF)
        error_record = _args.text_or_none("error_record", error_record)
        nth = _args.integer("nth", nth, -(1 << 63), (1 << 63) - 1)
        if function not in self._faults:
            raise InvalidRequestError(
                "function",
                f"unknown HCN function {function[:60]!r}; expected one of {', '.join(FUNCTIONS)}",
            )
        if nth < 1:
            raise InvalidRequestError("nth", "nth counts from 1 (the next call)")
        with self._lock:
            target = self._call_counts[function] + nth
            self._faults[function].append(_Fault(target, hresult_value, error_record))

    def fail_randomly(
        self, probability: float, *, seed: int, hresult_value: int = hresult.E_FAIL
    ) -> None:
        """From now on every call fails before any effect with ``probability`` (with a
        JSON error record, except ``HcnCloseNamespace`` which has none). ``seed`` makes
        the pattern repeatable for a given call order; :meth:`clear_faults` stops it."""
        if type(probability) not in (int, float):
            raise InvalidArgumentError("probability", "a float", type_name(probability))
        seed = _args.integer("seed", seed, -(1 << 63), (1 << 63) - 1)
        hresult_value = _args.integer("hresult_value", hresult_value, -(1 << 31), 0xFFFFFFFF)
        if not 0.0 <= probability <= 1.0:  # NaN fails this too
            raise InvalidRequestError("probability", "probability must be between 0 and 1")
        with self._lock:
            self._random_faults = (probability, random.Random(seed), hresult_value)

    def clear_faults(self) -> None:
        with self._lock:
            self._random_faults = None
            for pending in self._faults.values():
                pending.clear()

    def has_namespace(self, namespace_id: uuid.UUID) -> bool:
        """Whether the namespace exists (no call is counted, no fault can hit it)."""
        namespace_id = _args.guid("namespace_id", namespace_id)
        with self._lock:
            return namespace_id in self._namespaces

    @property
    def calls(self) -> tuple[str, ...]:
        """Every export called so far, in order (faulted calls included)."""
        with self._lock:
            return tuple(self._calls)

    def clear_calls(self) -> None:
        with self._lock:
            self._calls.clear()

    def add_namespace(
        self,
        namespace_id: uuid.UUID,
        *,
        namespace_type: str = "Host",
        owner: str | None = None,
        name: str | None = None,
    ) -> None:
        """Put a namespace in place directly (as if another component had made it)."""
        namespace_id = _args.guid("namespace_id", namespace_id)
        namespace_type = _args.text("namespace_type", namespace_type)
        owner = _args.text_or_none("owner", owner)
        name = _args.text_or_none("name", name)
        with self._lock:
            doc: dict[str, object] = {"SchemaVersion": dict(documents.SCHEMA_VERSION)}
            if owner is not None:
                doc["Owner"] = owner
            if name is not None:
                doc["Name"] = name
            doc["Type"] = namespace_type
            if namespace_id in self._namespaces:
                raise InvalidRequestError(
                    "namespace_id", f"namespace {namespace_id} already exists"
                )
            try:
                self._store(namespace_id, doc)
            except _Failure as failure:
                raise InvalidRequestError(
                    "namespace_type", f"cannot add namespace: {failure.record}"
                ) from None

    def namespaces(self) -> dict[uuid.UUID, documents.Namespace]:
        """A snapshot of every namespace, without going through the API (no counters move)."""
        with self._lock:
            return {
                ns_id: documents.parse_namespace(json.dumps(doc))
                for ns_id, doc in self._namespaces.items()
            }

    def simulate_process_exit(self) -> None:
        """Forget the caller's handles and strings, as the OS does when a process dies."""
        with self._lock:
            self._handles.clear()
            self._strings.clear()
        with self._counter_lock:
            self._open.clear()
            self._strings_held = 0

    @property
    def open_handles(self) -> int:
        """Handles handed out and not closed, counted on the library side."""
        with self._lock:
            return len(self._handles)

    @property
    def unfreed_strings(self) -> int:
        """Strings allocated for the caller and not freed, counted on the library side."""
        with self._lock:
            return len(self._strings)

    # --- the library side ----------------------------------------------------------------

    def _store(self, namespace_id: uuid.UUID, settings: Mapping[str, object]) -> None:
        # Our own keys win over any case-variant the caller sent.
        ours = {"id", "namespaceid", "resources"}
        doc = {k: v for k, v in settings.items() if k.lower() not in ours}
        kind = _folded(doc).get("type", "Host")
        if kind == "HostDefault":
            if any(
                _folded(d).get("type") == "HostDefault"
                for d in self._namespaces.values()
            ):
                raise _natural(
                    hresult.HCN_E_DEFAULT_NAMESPACE_EXISTS, "default namespace exists"
                )
            compartment = 1
        else:
            compartment = next(self._next_compartment)
        doc = {k: v for k, v in doc.items() if k.lower() != "type"}
        doc.update(
            {
                "ID": documents.format_guid(namespace_id),
                "NamespaceId": compartment,
                "Type": kind,
                "Resources": [],
            }
        )
        self._namespaces[namespace_id] = doc

    def _allocate(self, text: str) -> int:
        address = next(self._next_address)
        self._strings[address] = text
        return address

    def _run(
        self, function: str, effect: Callable[[], int | str | None]
    ) -> tuple[int, int | None, int | None]:
        """One export: count, maybe fault, apply, then hand back (hr, out, error record).

        ``effect`` returns a new handle (int), an out-string (str) or nothing.
        """
        if self.hook is not None:
            self.hook(function, "before")
        with self._lock:
            self._calls.append(function)
            self._call_counts[function] += 1
            count = self._call_counts[function]
            pending = self._faults[function]
            fault = next((f for f in pending if f.at_call == count), None)
            if fault is not None:
                pending.remove(fault)
            elif self._random_faults is not None:
                probability, rng, code = self._random_faults
                if rng.random() < probability:
                    text = documents.error_record(code, "injected fault")
                    fault = _Fault(count, code, text)
            if fault is not None:
                self.faults_injected += 1
                if function == "HcnCloseNamespace":
                    # the handle is released whatever the close reports; close has no
                    # error-record parameter
                    with contextlib.suppress(_Failure):
                        effect()
                    return _signed(fault.hresult), None, None
                record = (
                    self._allocate(fault.error_record) if fault.error_record else None
                )
                return _signed(fault.hresult), None, record
            try:
                result = effect()
            except _Failure as failure:
                record = self._allocate(failure.record) if failure.record else None
                return _signed(failure.hr), None, record
        if self.hook is not None:
            self.hook(function, "after")
        with self._lock:
            out = self._allocate(result) if isinstance(result, str) else result
            return 0, out, None

    def _namespace_for(self, handle: int) -> uuid.UUID:
        namespace_id = self._handles.get(handle)
        if namespace_id is None:
            raise _natural(hresult.E_HANDLE, "invalid namespace handle")
        if namespace_id not in self._namespaces:
            raise _natural(
                hresult.ERROR_NOT_FOUND_HRESULT, "namespace no longer exists"
            )
        return namespace_id

    def _new_handle(self, namespace_id: uuid.UUID) -> int:
        handle = next(self._next_address)
        self._handles[handle] = namespace_id
        return handle

    def _raw_enumerate(self, query: str) -> tuple[int, int | None, int | None]:
        def effect() -> int | str | None:
            doc = _folded(_parse_object(query, "query"))
            wanted: dict[str, object] = {}
            filter_text = doc.get("filter")
            if isinstance(filter_text, str) and filter_text.strip():
                wanted = _parse_object(filter_text, "query Filter")
            flags = doc.get("flags", 0)
            selected = [d for d in self._namespaces.values() if _matches(d, wanted)]
            if isinstance(flags, int) and flags & 1:
                return json.dumps(selected, ensure_ascii=False)
            return json.dumps([d["ID"] for d in selected])

        return self._run("HcnEnumerateNamespaces", effect)

    def _raw_create(
        self, namespace_id: uuid.UUID, settings: str
    ) -> tuple[int, int | None, int | None]:
        def effect() -> int | str | None:
            doc = _parse_object(settings, "settings")
            actual = (
                namespace_id if namespace_id.int else uuid.uuid4()
            )  # zero GUID: HCN picks
            if actual in self._namespaces:
                raise _natural(
                    hresult.hresult_from_win32(hresult.ERROR_ALREADY_EXISTS),
                    "namespace exists",
                )
            self._store(actual, doc)
            return self._new_handle(actual)

        return self._run("HcnCreateNamespace", effect)

    def _raw_open(self, namespace_id: uuid.UUID) -> tuple[int, int | None, int | None]:
        def effect() -> int | str | None:
            if namespace_id not in self._namespaces:
                raise _natural(hresult.ERROR_NOT_FOUND_HRESULT, "namespace not found")
            return self._new_handle(namespace_id)

        return self._run("HcnOpenNamespace", effect)

    def _raw_modify(self, handle: int, settings: str) -> tuple[int, int | None]:
        def effect() -> int | str | None:
            namespace_id = self._namespace_for(handle)
            request = _folded(_parse_object(settings, "modify request"))
            body = request.get("settings")
            endpoint_text = (
                _folded(body).get("endpointid") if isinstance(body, dict) else None
            )
            kind = request.get("requesttype")
            if request.get("resourcetype") != "Endpoint" or kind not in (
                "Add",
                "Remove",
            ):
                raise _natural(hresult.E_INVALIDARG, "unsupported modify request")
            try:
                endpoint = uuid.UUID(str(endpoint_text))
            except ValueError:
                raise _natural(
                    hresult.HCN_E_GUID_CONVERSION_FAILURE, "bad EndpointId"
                ) from None
            resources = self._namespaces[namespace_id]["Resources"]
            assert isinstance(resources, list)
            entry = {
                "Type": "Endpoint",
                "Data": {"ID": documents.format_guid(endpoint)},
            }
            if kind == "Add":
                for doc in self._namespaces.values():
                    held = doc["Resources"]
                    if isinstance(held, list) and entry in held:
                        raise _natural(
                            hresult.HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS, "endpoint attached"
                        )
                resources.append(entry)
            else:
                if entry not in resources:
                    raise _natural(
                        hresult.HCN_E_ENDPOINT_NOT_FOUND, "endpoint not found"
                    )
                resources.remove(entry)
            return None

        hr, _, record = self._run("HcnModifyNamespace", effect)
        return hr, record

    def _raw_query(self, handle: int, query: str) -> tuple[int, int | None, int | None]:
        def effect() -> int | str | None:
            namespace_id = self._namespace_for(handle)
            _parse_object(query, "query")
            return json.dumps(self._namespaces[namespace_id], ensure_ascii=False)

        return self._run("HcnQueryNamespaceProperties", effect)

    def _raw_delete(self, namespace_id: uuid.UUID) -> tuple[int, int | None]:
        def effect() -> int | str | None:
            if self._namespaces.pop(namespace_id, None) is None:
                raise _natural(hresult.ERROR_NOT_FOUND_HRESULT, "namespace not found")
            return None

        hr, _, record = self._run("HcnDeleteNamespace", effect)
        return hr, record

    def _raw_close(self, handle: int) -> int:
        def effect() -> int | str | None:
            if self._handles.pop(handle, None) is None:
                self.bad_closes += 1
                raise _Failure(hresult.E_HANDLE, None)
            return None

        hr, _, _ = self._run("HcnCloseNamespace", effect)
        return hr

    def _read_string(self, pointer: int) -> str:
        with self._lock:
            return self._strings[pointer]

    def _free_string(self, pointer: int) -> None:
        with self._lock:
            if self._strings.pop(pointer, None) is None:
                self.bad_frees += 1
