"""Every public ``runtime.hcn`` name with arbitrary arguments.

There were once 62 call sites that raised an untyped error
(``InMemoryHcn().create_namespace(uuid4(), 5)``,
``ComputeNetwork(library=True)``, ``SandboxNetworks(InMemoryHcn(), "a\\x00b")``,
``parse_error_record(True)``, ``error_for("op", None)``,
``namespace_settings(owner=b"x", name="x")``, ...). The table below lists, for every
callable in ``runtime.hcn.__all__`` and every method of its classes, valid arguments and
what each parameter accepts. Two properties:

* one argument of a type the parameter does not accept: ``InvalidArgumentError`` whose
  ``argument`` names that parameter;
* any arguments at all (right types with hostile values included): a result or a
  ``WinnetError``, never another exception.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError, WinnetError
from kubelet_winnet.runtime import hcn
from kubelet_winnet.runtime.hcn import (
    GUID,
    ComputeNetwork,
    HcnError,
    HcnNotFoundError,
    InMemoryHcn,
    Namespace,
    NamespaceHandle,
    NamespaceResource,
    ReconcileReport,
    SandboxNetwork,
    SandboxNetworks,
)
from kubelet_winnet.runtime.hcn._sandbox import MAX_SANDBOX_ID_BYTES
from tests.strategies import HOSTILE, sandbox_plan

# What a parameter accepts, by type only (values of the right type may still be refused).
Accepts = Callable[[object], bool]


def _str(v: object) -> bool:
    return isinstance(v, str)


def _opt(check: Accepts) -> Accepts:
    return lambda v: v is None or check(v)


def _int(v: object) -> bool:
    return type(v) is int


def _bool(v: object) -> bool:
    return v is True or v is False


def _uuid(v: object) -> bool:
    return isinstance(v, uuid.UUID)


def _path(v: object) -> bool:
    return isinstance(v, str | os.PathLike)


def _mapping(v: object) -> bool:
    try:
        return isinstance(v, Mapping)
    except Exception:
        return False


def _tuple(v: object) -> bool:
    return type(v) is tuple


def _callable(v: object) -> bool:
    return callable(v)


def _anything(v: object) -> bool:
    return True


@dataclass
class Param:
    name: str
    accepts: Accepts
    valid: Callable[[], Any]
    argument: str = ""  # the name InvalidArgumentError gives, when not ``name``


@dataclass
class Target:
    """``call(env, args)`` runs the name with ``args`` (one per param, by keyword or
    position as the real signature wants) in a fresh environment."""

    name: str
    params: list[Param]
    call: Callable[[Env, dict[str, Any]], Any]


@dataclass
class Env:
    hcn: InMemoryHcn
    state: Path

    def networks(self) -> SandboxNetworks:
        return SandboxNetworks(self.hcn, self.state)


# Valid state directories the table hands out live here, removed when the run ends.
_STATE_ROOT = tempfile.TemporaryDirectory(prefix="kw-hcn-args-")


@contextlib.contextmanager
def _env() -> Iterator[Env]:
    with tempfile.TemporaryDirectory() as state:
        yield Env(InMemoryHcn(), Path(state))


def _namespace(env: Env) -> uuid.UUID:
    namespace_id = uuid.uuid4()
    env.hcn.add_namespace(namespace_id, owner="o", name="n")
    return namespace_id


def _handle(env: Env) -> NamespaceHandle:
    return env.hcn.open_namespace(_namespace(env))


def _opened(env: Env, a: dict[str, Any]) -> None:
    with env.hcn.opened(a["namespace_id"]):
        pass


def _data4() -> Any:
    return (ctypes.c_uint8 * 8)(*range(8))


P = Param
U = uuid.uuid4
TARGETS: list[Target] = [
    Target("GUID", [P("Data1", _int, lambda: 1), P("Data2", _int, lambda: 2),
                    P("Data3", _int, lambda: 3), P("Data4", _anything, _data4)],
           lambda e, a: GUID(a["Data1"], a["Data2"], a["Data3"], a["Data4"])),
    Target("GUID.from_uuid", [P("value", _uuid, U)], lambda e, a: GUID.from_uuid(a["value"])),
    Target("ComputeNetwork",
           [P("library", _opt(_path), lambda: "/nonexistent/computenetwork.so"),
            P("cotaskmem_library", _opt(_path), lambda: None)],
           lambda e, a: ComputeNetwork(a["library"], a["cotaskmem_library"])),
    Target("HcnError", [P("operation", _str, lambda: "op"), P("hresult", _int, lambda: 5),
                        P("message", _str, lambda: "m"),
                        P("error_record", _opt(lambda v: type(v) is dict), lambda: None)],
           lambda e, a: HcnError(a["operation"], a["hresult"], a["message"], a["error_record"])),
    Target("HcnNotFoundError", [P("operation", _str, lambda: "op"),
                                P("hresult", _int, lambda: 5)],
           lambda e, a: HcnNotFoundError(a["operation"], a["hresult"])),
    Target("InMemoryHcn", [P("host_default", _bool, lambda: True),
                           P("host_default_id", _opt(_uuid), lambda: None),
                           P("hook", _opt(_callable), lambda: None)],
           lambda e, a: InMemoryHcn(**a)),
    Target("InMemoryHcn.fail",
           [P("function", _str, lambda: "HcnOpenNamespace"),
            P("hresult_value", _int, lambda: 0x80004005),
            P("error_record", _opt(_str), lambda: None), P("nth", _int, lambda: 1)],
           lambda e, a: e.hcn.fail(a["function"], a["hresult_value"], a["error_record"],
                                   nth=a["nth"])),
    Target("InMemoryHcn.fail_randomly",
           [P("probability", lambda v: type(v) in (int, float), lambda: 0.5),
            P("seed", _int, lambda: 1), P("hresult_value", _int, lambda: 0x80004005)],
           lambda e, a: e.hcn.fail_randomly(a["probability"], seed=a["seed"],
                                            hresult_value=a["hresult_value"])),
    Target("InMemoryHcn.has_namespace", [P("namespace_id", _uuid, U)],
           lambda e, a: e.hcn.has_namespace(a["namespace_id"])),
    Target("InMemoryHcn.add_namespace",
           [P("namespace_id", _uuid, U), P("namespace_type", _str, lambda: "Host"),
            P("owner", _opt(_str), lambda: None), P("name", _opt(_str), lambda: None)],
           lambda e, a: e.hcn.add_namespace(a["namespace_id"], namespace_type=a["namespace_type"],
                                            owner=a["owner"], name=a["name"])),
    Target("HcnClient.enumerate_namespaces", [P("query", _opt(_str), lambda: None)],
           lambda e, a: e.hcn.enumerate_namespaces(a["query"])),
    Target("HcnClient.create_namespace",
           [P("namespace_id", _uuid, U), P("settings", _str, lambda: "{}")],
           lambda e, a: e.hcn.create_namespace(a["namespace_id"], a["settings"])),
    Target("HcnClient.open_namespace", [P("namespace_id", _uuid, U)],
           lambda e, a: e.hcn.open_namespace(a["namespace_id"])),
    Target("HcnClient.modify_namespace",
           [P("handle", _int, lambda: 0x1000), P("settings", _str, lambda: "{}")],
           lambda e, a: e.hcn.modify_namespace(a["handle"], a["settings"])),
    Target("HcnClient.query_namespace_properties",
           [P("handle", _int, lambda: 0x1000), P("query", _opt(_str), lambda: None)],
           lambda e, a: e.hcn.query_namespace_properties(a["handle"], a["query"])),
    Target("HcnClient.delete_namespace", [P("namespace_id", _uuid, U)],
           lambda e, a: e.hcn.delete_namespace(a["namespace_id"])),
    Target("HcnClient.close_namespace", [P("handle", _int, lambda: 0x1000)],
           lambda e, a: e.hcn.close_namespace(a["handle"])),
    Target("HcnClient.opened", [P("namespace_id", _uuid, U)], _opened),
    Target("HcnClient.namespace_ids", [P("filter", _opt(_mapping), lambda: {"Owner": "o"})],
           lambda e, a: e.hcn.namespace_ids(a["filter"])),
    Target("HcnClient.get_namespace", [P("namespace_id", _uuid, U)],
           lambda e, a: e.hcn.get_namespace(a["namespace_id"])),
    Target("HcnClient.attach_endpoint",
           [P("namespace_id", _uuid, U), P("endpoint_id", _uuid, U)],
           lambda e, a: e.hcn.attach_endpoint(a["namespace_id"], a["endpoint_id"])),
    Target("HcnClient.detach_endpoint",
           [P("namespace_id", _uuid, U), P("endpoint_id", _uuid, U)],
           lambda e, a: e.hcn.detach_endpoint(a["namespace_id"], a["endpoint_id"])),
    Target("Namespace",
           [P("id", _uuid, U), P("type", _opt(_str), lambda: "Host"),
            P("owner", _opt(_str), lambda: None), P("name", _opt(_str), lambda: None),
            P("compartment", _opt(_int), lambda: 2), P("resources", _tuple, tuple),
            P("raw", _mapping, dict)],
           lambda e, a: Namespace(**a)),
    Target("NamespaceHandle", [P("value", _int, lambda: 0x1000, argument="handle")],
           lambda e, a: NamespaceHandle(a["value"])),
    Target("NamespaceResource", [P("type", _str, lambda: "Endpoint"),
                                 P("id", _opt(_uuid), lambda: None)],
           lambda e, a: NamespaceResource(**a)),
    Target("ReconcileReport",
           [P("torn_down", _tuple, tuple), P("deleted_orphans", _tuple, tuple),
            P("adopted", _tuple, tuple), P("state_errors", _tuple, tuple)],
           lambda e, a: ReconcileReport(**a)),
    Target("SandboxNetwork",
           [P("sandbox_id", _str, lambda: "s"), P("namespace_id", _uuid, U),
            P("host_network", _bool, lambda: False), P("policy", _str, lambda: "kep"),
            P("reason", _str, lambda: "r")],
           lambda e, a: SandboxNetwork(**a)),
    Target("SandboxNetworks",
           [P("client", lambda v: isinstance(v, hcn.HcnClient), InMemoryHcn),
            P("state_dir", _path, lambda: tempfile.mkdtemp(dir=_STATE_ROOT.name)),
            P("owner", lambda v: type(v) is str, lambda: "kubelet-winnet")],
           lambda e, a: SandboxNetworks(a["client"], a["state_dir"], owner=a["owner"])),
    Target("SandboxNetworks.get", [P("sandbox_id", _str, lambda: "s")],
           lambda e, a: e.networks().get(a["sandbox_id"])),
    Target("SandboxNetworks.setup",
           [P("sandbox_id", _str, lambda: "s"),
            P("plan", lambda v: type(v).__name__ == "NetworkPlan", sandbox_plan)],
           lambda e, a: e.networks().setup(a["sandbox_id"], a["plan"])),
    Target("SandboxNetworks.teardown", [P("sandbox_id", _str, lambda: "s")],
           lambda e, a: e.networks().teardown(a["sandbox_id"])),
    Target("SandboxNetworks.reconcile",
           [P("live_sandbox_ids",
              lambda v: not isinstance(v, str | bytes | bytearray) and _iterable_of_str(v),
              lambda: ["s"])],
           lambda e, a: e.networks().reconcile(a["live_sandbox_ids"])),
    Target("endpoint_modify_request",
           [P("endpoint_id", _uuid, U), P("request", _str, lambda: "Add")],
           lambda e, a: hcn.endpoint_modify_request(a["endpoint_id"], a["request"])),
    Target("error_for", [P("operation", _str, lambda: "op"), P("hresult", _int, lambda: -1),
                         P("error_record", _opt(_str), lambda: None)],
           lambda e, a: hcn.error_for(a["operation"], a["hresult"], a["error_record"])),
    Target("namespace_query", [P("filter", _opt(_mapping), lambda: None),
                               P("detailed", _bool, lambda: False)],
           lambda e, a: hcn.namespace_query(a["filter"], detailed=a["detailed"])),
    Target("namespace_settings",
           [P("owner", _opt(_str), lambda: "o"), P("name", _opt(_str), lambda: "n"),
            P("namespace_type", _opt(_str), lambda: None)],
           lambda e, a: hcn.namespace_settings(**a)),
    Target("parse_error_record", [P("text", _opt(_str), lambda: '{"Error": "x"}')],
           lambda e, a: hcn.parse_error_record(a["text"])),
    Target("parse_guid_list", [P("text", _str, lambda: "[]"), P("operation", _str, lambda: "op")],
           lambda e, a: hcn.parse_guid_list(a["text"], operation=a["operation"])),
    Target("parse_namespace_list",
           [P("text", _str, lambda: "[]"), P("operation", _str, lambda: "op")],
           lambda e, a: hcn.parse_namespace_list(a["text"], operation=a["operation"])),
    Target("parse_namespace",
           [P("text", _str, lambda: f'{{"ID": "{uuid.UUID(int=1)}"}}'),
            P("operation", _str, lambda: "op")],
           lambda e, a: hcn.parse_namespace(a["text"], operation=a["operation"])),
]
BY_NAME = {target.name: target for target in TARGETS}


def _iterable_of_str(value: object) -> bool:
    try:
        return all(isinstance(item, str) for item in value)  # type: ignore[attr-defined]
    except Exception:
        return False


def test_the_table_covers_every_public_callable() -> None:
    """A new public name, or a new public method, must join the table."""
    constants = {"DEFAULT_OWNER", "FUNCTIONS"}
    names = set(hcn.__all__) - constants
    expected: set[str] = set()
    for name in names:
        value = getattr(hcn, name)
        if name == "HcnClient":  # abstract: its methods are listed, run on InMemoryHcn
            pass
        else:
            expected.add(name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            for attr, member in vars(value).items():
                if attr.startswith("_") or (not callable(member) and not isinstance(
                    member, classmethod
                )):
                    continue
                owner = "HcnClient" if name in ("InMemoryHcn", "ComputeNetwork") else name
                if name == "ComputeNetwork":
                    continue  # its methods are HcnClient's (the raw ones are private)
                expected.add(f"{owner if attr in vars(hcn.HcnClient) else name}.{attr}")
    for attr, member in vars(hcn.HcnClient).items():
        if not attr.startswith("_") and callable(member):
            expected.add(f"HcnClient.{attr}")
    # Methods without parameters cannot get wrong types; they run in the totality test.
    no_params = {"InMemoryHcn.clear_faults", "InMemoryHcn.clear_calls",
                 "InMemoryHcn.namespaces", "InMemoryHcn.simulate_process_exit",
                 "HcnClient.list_namespaces", "HcnClient.find_host_default",
                 "SandboxNetworks.sandbox_ids", "Namespace.is_host_default",
                 "Namespace.endpoint_ids", "GUID.to_uuid"}
    assert expected - no_params - {"InMemoryHcn.calls"} <= set(BY_NAME), sorted(
        expected - no_params - set(BY_NAME)
    )


# --- values -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hostile:
    """A HOSTILE value by name: hypothesis handles the name, the test the value (a raising
    ``__class__`` breaks hypothesis's own bookkeeping of drawn values)."""

    name: str


def _resolve(value: object) -> Any:
    return HOSTILE[value.name] if type(value) is Hostile else value


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.binary(max_size=8),
    st.text(max_size=12), st.uuids(), st.lists(st.integers(), max_size=3),
    st.tuples(st.text(max_size=3)), st.dictionaries(st.text(max_size=3), st.integers(),
                                                    max_size=2),
    st.sampled_from([object(), Path("/tmp"), b"x", bytearray(b"x"), 1j, ...]),
    # By name: hypothesis shows the strategy, and some of these cannot be repr()'d.
    st.sampled_from(sorted(set(HOSTILE) - {"huge string"})).map(Hostile),
)


def _accepts(param: Param, value: object) -> bool:
    try:
        return param.accepts(value)
    except Exception:  # a hostile value's __class__ or __iter__
        return False


def _run(target: Target, args: dict[str, Any]) -> tuple[BaseException | None, Any]:
    with _env() as env:
        try:
            return None, target.call(env, args)
        except BaseException as exc:  # the assertion below says which are allowed
            return exc, None


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_wrong_argument_type_is_invalid_argument_error(
    data: st.DataObject, target: Target
) -> None:
    index = data.draw(st.integers(0, len(target.params) - 1))
    param = target.params[index]
    wrong = data.draw(_VALUES.filter(lambda v: not _accepts(param, _resolve(v))),
                      label=param.name)
    args = {p.name: p.valid() for p in target.params}
    args[param.name] = _resolve(wrong)
    error, _ = _run(target, args)
    assert isinstance(error, InvalidArgumentError), (target.name, param.name, error)
    assert error.argument.startswith(param.argument or param.name), error
    assert len(str(error)) < 300


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_arguments_give_a_result_or_a_winnet_error(
    data: st.DataObject, target: Target
) -> None:
    args = {p.name: _resolve(data.draw(st.one_of(st.builds(p.valid), _VALUES), label=p.name))
            for p in target.params}
    error, _ = _run(target, args)
    assert error is None or isinstance(error, WinnetError), (target.name, repr(error))
    if error is not None:
        assert len(str(error)) < 1000


@pytest.mark.parametrize(
    "call",
    [
        lambda: InMemoryHcn().create_namespace(uuid.uuid4(), 5),  # type: ignore[arg-type]
        lambda: ComputeNetwork(library=True),  # type: ignore[arg-type]
        lambda: SandboxNetworks(InMemoryHcn(), "a\x00b"),
        lambda: hcn.parse_error_record(True),  # type: ignore[arg-type]
        lambda: hcn.error_for("op", None),  # type: ignore[arg-type]
        lambda: hcn.namespace_settings(owner=b"x", name="x"),  # type: ignore[arg-type]
    ],
    ids=["create_namespace int settings", "ComputeNetwork library=True",
         "SandboxNetworks NUL state_dir", "parse_error_record(True)", "error_for None",
         "namespace_settings bytes owner"],
)
def test_wrongly_typed_arguments_are_invalid_argument_errors(call: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgumentError):
        call()


# --- sandbox ids the state reader would refuse --------------------------------------------


def test_overlong_sandbox_id_creates_nothing(tmp_path: Path) -> None:
    """An id of 65,300 characters made a namespace and a record that get, teardown and
    reconcile then refused. Now setup refuses it before any HCN call or file."""
    fake = InMemoryHcn()
    networks = SandboxNetworks(fake, tmp_path)
    before = set(fake.namespaces())
    for sandbox_id in ("x" * 65_300, "é" * (MAX_SANDBOX_ID_BYTES // 2 + 1)):
        fake.clear_calls()
        with pytest.raises(InvalidRequestError) as caught:
            networks.setup(sandbox_id, sandbox_plan())
        assert caught.value.field == "sandbox_id"
        assert f"at most {MAX_SANDBOX_ID_BYTES}" in str(caught.value)
        assert fake.calls == ()
        for refuse in (networks.get, networks.teardown):
            with pytest.raises(InvalidRequestError):
                refuse(sandbox_id)
    assert set(fake.namespaces()) == before
    assert list(tmp_path.iterdir()) == []


def test_longest_accepted_id_round_trips(tmp_path: Path) -> None:
    """The worst case for the record: every byte a control character, JSON-escaped to
    six bytes. Setup, get, teardown and reconcile all accept it."""
    fake = InMemoryHcn()
    networks = SandboxNetworks(fake, tmp_path)
    sandbox_id = "\x01" * MAX_SANDBOX_ID_BYTES
    made = networks.setup(sandbox_id, sandbox_plan())
    assert networks.get(sandbox_id) == made
    assert networks.reconcile([sandbox_id]).torn_down == ()
    assert networks.teardown(sandbox_id) is True
    assert not fake.has_namespace(made.namespace_id)


# --- a path the file system cannot encode --------------------------------------------------


@pytest.mark.parametrize("state_dir", ["\ud800", "state-\udfff", Path("a") / "\ud83d"])
def test_a_state_dir_with_a_lone_surrogate_is_invalid_argument_error(
    state_dir: str | Path,
) -> None:
    """``SandboxNetworks(InMemoryHcn(), "\\ud800")`` raised UnicodeEncodeError from the
    first file call: the parameter is named, as for every other argument it cannot take."""
    with pytest.raises(InvalidArgumentError) as caught:
        SandboxNetworks(InMemoryHcn(), state_dir)
    assert caught.value.argument == "state_dir"
    assert str(caught.value) == (
        "state_dir: expected a path the file system can encode, got a lone surrogate that "
        "stands for no character or byte"
    )


@pytest.mark.skipif(os.name == "nt", reason="surrogateescape is the POSIX file system's")
def test_a_state_dir_of_undecodable_bytes_is_still_a_path(tmp_path: Path) -> None:
    """A directory whose name is not UTF-8 comes to Python as surrogateescape text; it is
    a real path and stays accepted."""
    state_dir = tmp_path / os.fsdecode(b"state-\xff")
    networks = SandboxNetworks(InMemoryHcn(), state_dir)
    assert networks.reconcile([]).torn_down == ()
