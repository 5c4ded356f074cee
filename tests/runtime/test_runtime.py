"""kubelet_winnet.runtime.plan_sandbox_network: the two policies, input forms, typed errors.

Expected values restate ``shared/reference/cri-and-hcn.md`` and the two policies, not the
code: containerd decides by ``host_process`` alone; ``kep`` by ``namespace_options.network ==
NODE`` or ``host_process``, falling back to ``host_process`` when the options are absent.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError, WinnetError
from kubelet_winnet.runtime import (
    POLICIES,
    SETUP_CALLS,
    TEARDOWN_CALLS,
    NetworkPlan,
    Policy,
    plan_sandbox_config_network,
)
from kubelet_winnet.runtime import plan_sandbox_network as plan

FIELD = "windows.security_context.namespace_options.network"
REQUEST_FIELD = "config." + FIELD
POD, CONTAINER, NODE, TARGET = 0, 1, 2, 3


def config(
    host_process: bool | None = None, mode: int | None = None
) -> api_pb2.PodSandboxConfig:
    """``host_process=None`` leaves ``windows`` unset unless ``mode`` is given."""
    sandbox = api_pb2.PodSandboxConfig()
    sandbox.metadata.name = "pod"
    if host_process is not None:
        sandbox.windows.security_context.host_process = host_process
    if mode is not None:
        sandbox.windows.security_context.namespace_options.network = mode  # type: ignore[assignment]
    return sandbox


def request(
    host_process: bool | None = None, mode: int | None = None
) -> api_pb2.RunPodSandboxRequest:
    return api_pb2.RunPodSandboxRequest(config=config(host_process, mode), runtime_handler="")


# --- containerd: internal/cri/server/helpers.go hostNetwork(), Windows branch -----------


@pytest.mark.parametrize(
    ("host_process", "expected"),
    [(False, False), (True, True), (None, False)],
    ids=["host_process false", "host_process true", "unset"],
)
def test_containerd_upstream_cases(host_process: bool | None, expected: bool) -> None:
    """containerd's three test cases: false -> false, true -> true, unset -> false."""
    result = plan(request(host_process), policy="containerd")
    assert result.host_network is expected
    assert result.policy == "containerd"
    assert "host_process" in result.reason


@pytest.mark.parametrize("mode", [POD, CONTAINER, NODE, TARGET, 99])
@pytest.mark.parametrize("host_process", [False, True])
def test_containerd_never_reads_namespace_options(host_process: bool, mode: int) -> None:
    # Not even contradictions or unknown enum values: containerd ignores the field.
    result = plan(request(host_process, mode), policy="containerd")
    assert result.host_network is host_process


# --- kep ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host_process", "mode", "expected"),
    [
        (False, None, False),  # kubelet 1.33+ / gate off, normal pod
        (True, None, True),  # kubelet 1.33+ / gate off, HostProcess pod
        (None, None, False),  # no windows config at all
        (False, POD, False),  # 1.26-1.32 gate on, pod network
        (False, NODE, True),  # 1.26-1.32 gate on, hostNetwork pod: what containerd misses
        (True, NODE, True),  # 1.26-1.32 gate on, HostProcess pod
    ],
)
def test_kep_policy(host_process: bool | None, mode: int | None, expected: bool) -> None:
    result = plan(request(host_process, mode))  # kep is the default
    assert result.policy == "kep"
    assert result.host_network is expected
    expected_mode = None if mode is None else api_pb2.NamespaceMode.Name(mode)  # type: ignore[arg-type]
    assert result.namespace_mode == expected_mode


@pytest.mark.parametrize("host_process", [False, True])
def test_kep_without_namespace_options_falls_back_to_host_process(host_process: bool) -> None:
    result = plan(request(host_process), policy="kep")
    assert result.host_network is host_process
    assert "no config.windows.security_context.namespace_options" in result.reason


def test_presence_not_default_decides() -> None:
    """``namespace_options {network: POD}`` is present (bytes ``22 00``), unlike absent."""
    present, absent = config(True, POD), config(True)
    assert present.windows.security_context.SerializeToString().endswith(b"\x22\x00")
    assert plan_sandbox_config_network(absent).host_network is True
    with pytest.raises(InvalidRequestError):
        plan_sandbox_config_network(present)


@pytest.mark.parametrize(
    ("host_process", "mode", "words"),
    [
        (True, POD, "contradicts host_process"),
        (False, CONTAINER, "CONTAINER is not possible"),
        (True, CONTAINER, "CONTAINER is not possible"),
        (False, TARGET, "TARGET is not possible"),
        (False, 7, "unknown NamespaceMode value 7"),
    ],
)
def test_kep_refuses_contradictions_naming_the_field(
    host_process: bool, mode: int, words: str
) -> None:
    with pytest.raises(InvalidRequestError) as from_request:
        plan(request(host_process, mode))
    assert from_request.value.field == REQUEST_FIELD
    assert words in str(from_request.value)
    assert isinstance(from_request.value, ValueError)
    assert isinstance(from_request.value, WinnetError)
    with pytest.raises(InvalidRequestError) as from_config:
        plan_sandbox_config_network(config(host_process, mode))
    assert from_config.value.field == FIELD  # paths start at the message given


# --- input forms -------------------------------------------------------------------------


def test_reference_hand_encoded_request() -> None:
    """The reference's bytes: a request with only namespace_options.network = NODE."""
    data = bytes.fromhex("0a 08 4a 06 0a 04 22 02 08 02")
    assert api_pb2.RunPodSandboxRequest(
        config=api_pb2.PodSandboxConfig(
            windows=api_pb2.WindowsPodSandboxConfig(
                security_context=api_pb2.WindowsSandboxSecurityContext(
                    namespace_options=api_pb2.WindowsNamespaceOption(network=api_pb2.NODE)
                )
            )
        )
    ).SerializeToString() == data
    kep = plan(data)
    assert kep.host_network and kep.namespace_mode == "NODE" and not kep.host_process
    assert not plan(data, policy="containerd").host_network


@pytest.mark.parametrize("host_process", [None, False, True])
@pytest.mark.parametrize("mode", [None, POD, NODE])
@pytest.mark.parametrize("policy", POLICIES)
def test_every_input_form_gives_the_same_plan(
    host_process: bool | None, mode: int | None, policy: Policy
) -> None:
    if policy == "kep" and host_process and mode == POD:
        return  # a contradiction: covered above
    req = request(host_process, mode)
    data = req.SerializeToString()
    config_data = req.config.SerializeToString()
    plans = {
        plan(req, policy=policy),
        plan(data, policy=policy),
        plan(bytearray(data), policy=policy),
        plan(memoryview(data), policy=policy),
    }
    config_plans = {
        plan_sandbox_config_network(req.config, policy=policy),
        plan_sandbox_config_network(config_data, policy=policy),
        plan_sandbox_config_network(memoryview(config_data), policy=policy),
    }
    assert len(plans) == len(config_plans) == 1
    assert plans.pop().host_network is config_plans.pop().host_network


def test_empty_bytes_are_an_empty_message() -> None:
    for policy in POLICIES:
        assert plan(b"", policy=policy).host_network is False
        assert plan_sandbox_config_network(b"", policy=policy).host_network is False


# --- bytes are decoded as the type named, by protobuf: requests that once misread --------


def test_reproducer_unknown_top_level_field_keeps_host_process() -> None:
    """A HostProcess request plus ``78 01`` (field 15, varint 1: a newer kubelet's field)
    is still a HostProcess request: protobuf skips the unknown field."""
    data = request(True).SerializeToString() + b"\x78\x01"
    decoded = api_pb2.RunPodSandboxRequest.FromString(data)
    assert decoded.config.windows.security_context.host_process
    for policy in POLICIES:
        result = plan(data, policy=policy)
        assert result.host_network is True and result.host_process is True


def test_reproducer_same_bytes_mean_what_the_caller_says() -> None:
    """``0a 06 4a 04 0a 02 18 01`` decoded by hand:

    * as a RunPodSandboxRequest: config (1) { windows (9) { security_context (1)
      { host_process (3) = 1 } } }: a HostProcess sandbox, host network;
    * as a PodSandboxConfig: metadata (1) { unknown field 9 { ... } }: no ``windows`` at
      all, so pod network under both policies.
    """
    data = b"\x0a\x06\x4a\x04\x0a\x02\x18\x01"
    for policy in POLICIES:
        assert plan(data, policy=policy).host_network is True
        assert plan_sandbox_config_network(data, policy=policy).host_network is False
    assert plan(data).reason.startswith("no config.windows")  # kep: host_process rule
    assert not api_pb2.PodSandboxConfig.FromString(data).HasField("windows")


def test_reproducer_well_formed_unknown_group_is_skipped() -> None:
    """Field 15 as a group (start ``7b``, a varint field inside, end ``7c``) is legal
    protobuf; it is skipped, not refused."""
    base = request(False, NODE).SerializeToString()
    group = b"\x7b" + b"\x08\x01" + b"\x7c"
    for data in (base + group, group + base):
        assert plan(data) == plan(base)
        assert plan(data).host_network is True
    nested_group = b"\x7b\x7b\x08\x01\x7c\x7c"  # a group inside a group
    assert plan(base + nested_group) == plan(base)


# Hand encoder for the property below: independent of protobuf's own serializer.


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _len_field(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


# None of the messages on the path has a field numbered 16 or more; 19000-19999 are
# reserved by protobuf itself.
_unknown_numbers = st.integers(16, 18999) | st.integers(20000, 2**29 - 1)


def _unknown_fields(depth: int = 2) -> st.SearchStrategy[bytes]:
    numbers = _unknown_numbers
    scalar = st.one_of(
        st.builds(lambda n, v: _key(n, 0) + _varint(v), numbers, st.integers(0, 2**64 - 1)),
        st.builds(lambda n, v: _key(n, 5) + v, numbers, st.binary(min_size=4, max_size=4)),
        st.builds(lambda n, v: _key(n, 1) + v, numbers, st.binary(min_size=8, max_size=8)),
        st.builds(_len_field, numbers, st.binary(max_size=12)),
    )
    if depth == 0:
        return scalar
    group = st.builds(
        lambda n, body: _key(n, 3) + body + _key(n, 4),
        _unknown_numbers,
        st.lists(_unknown_fields(depth - 1), max_size=2).map(b"".join),
    )
    return scalar | group


LEVELS = ("request", "config", "metadata", "windows", "security_context", "namespace_options")
UNKNOWN_FIELDS = st.lists(_unknown_fields(), max_size=2).map(b"".join)


@st.composite
def requests_with_unknown_fields(
    draw: st.DrawFn,
) -> tuple[bytes, bool | None, int | None]:
    """(bytes, host_process or None for no windows, network mode or None for absent)."""
    extra = {level: draw(UNKNOWN_FIELDS) for level in LEVELS}
    at_end = draw(st.booleans())

    def wrap(level: str, fields: bytes) -> bytes:
        return fields + extra[level] if at_end else extra[level] + fields

    host_process = draw(st.none() | st.booleans())
    mode = draw(st.none() | st.sampled_from([POD, CONTAINER, NODE, TARGET]))
    if host_process is None and mode is not None:
        host_process = False
    config = _len_field(1, wrap("metadata", _len_field(1, b"pod")))
    if host_process is not None:
        # host_process false: sent as an explicit 0 or left out, which decode the same.
        explicit = host_process or draw(st.booleans())
        context = _key(3, 0) + _varint(int(host_process)) if explicit else b""
        if mode is not None:
            # POD is 0: sent explicitly or left out, the submessage is present either way.
            network = _key(1, 0) + _varint(mode) if mode or draw(st.booleans()) else b""
            context += _len_field(4, wrap("namespace_options", network))
        windows = _len_field(1, wrap("security_context", context))
        config += _len_field(9, wrap("windows", windows))
    data = wrap("request", _len_field(1, wrap("config", config)) + _len_field(2, b"runhcs-wcow"))
    return data, host_process, mode


@given(requests_with_unknown_fields(), st.sampled_from(POLICIES))
@example((b"\x0a\x06\x4a\x04\x0a\x02\x18\x01", True, None), "kep")
def test_unknown_fields_at_any_level_change_nothing(
    case: tuple[bytes, bool | None, int | None], policy: Policy
) -> None:
    """KEP-3503: "the runtime ... should use the host network" when network is NODE; and
    protobuf's rule that a parser skips fields it does not know. Planning the bytes
    equals planning the decoded message, and both equal the rule applied to the fields
    that were encoded."""
    data, host_process, mode = case
    decoded = api_pb2.RunPodSandboxRequest.FromString(data)
    expected: bool | None  # None: kep refuses the request
    if policy == "containerd" or mode is None:
        expected = bool(host_process)
    elif mode == NODE:
        expected = True
    elif mode == POD:
        expected = None if host_process else False
    else:
        expected = None
    if expected is None:
        with pytest.raises(InvalidRequestError) as caught:
            plan(data, policy=policy)
        assert caught.value.field == REQUEST_FIELD
        with pytest.raises(InvalidRequestError):
            plan(decoded, policy=policy)
        return
    from_bytes = plan(data, policy=policy)
    assert from_bytes == plan(decoded, policy=policy)
    assert from_bytes.host_network is expected
    assert from_bytes.host_process is bool(host_process)


@pytest.mark.parametrize(
    "data",
    [
        b"\x0a",  # tag without length
        b"\x0a\x05\x4a",  # length past the end
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",  # varint too long
        b"\x00\x00",  # field number 0
        b"\x7b\x08\x01",  # group start without its end
        b"\x7c",  # group end without a start
        b"\x7b\x08\x01\x84\x01",  # group closed with another field's end (16)
        b"\x0f",  # wire type 7 does not exist
        b"\x0a\x02\x4a\x05",  # frame fine, nested windows runs past its length
        b"\x12\x02\xc3\x28",  # runtime_handler is not UTF-8
        b"\x7b" * 200 + b"\x7c" * 200,  # nested deeper than protobuf's recursion limit
    ],
)
@pytest.mark.parametrize("policy", POLICIES)
def test_malformed_bytes_raise_a_typed_error(data: bytes, policy: Policy) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        plan(data, policy=policy)
    assert "malformed protobuf: not a serialized RunPodSandboxRequest" in str(caught.value)
    assert caught.value.__cause__ is None  # no protobuf traceback chained in


@given(st.binary(max_size=64))
@example(bytes.fromhex("0a084a060a0422020802"))
@example(b"\x4a\x02\x0a\x00")
def test_any_bytes_give_a_plan_or_a_typed_error(data: bytes) -> None:
    for policy in POLICIES:
        for planner in (plan, plan_sandbox_config_network):
            try:
                result = planner(data, policy=policy)
            except InvalidRequestError:
                continue
            assert isinstance(result, NetworkPlan)


# --- arguments checked at the door --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "got"),
    [("0a00", "str"), (None, "NoneType"), (5, "int"), ([b"\x0a\x00"], "list")],
)
def test_request_of_the_wrong_type_is_refused(value: object, got: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        plan(value)  # type: ignore[arg-type]
    assert (caught.value.argument, caught.value.got) == ("request", got)
    assert isinstance(caught.value, TypeError)
    with pytest.raises(InvalidArgumentError) as from_config:
        plan_sandbox_config_network(value)  # type: ignore[arg-type]
    assert from_config.value.argument == "config"


def test_the_other_message_type_is_refused_with_a_pointer() -> None:
    with pytest.raises(InvalidArgumentError, match="plan_sandbox_config_network"):
        plan(config())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="plan_sandbox_network"):
        plan_sandbox_config_network(request())  # type: ignore[arg-type]


class _RaisingEq(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ must not be called")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__ must not be called")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ must not be called")


class _Anything:
    def __eq__(self, other: object) -> bool:
        return True  # claims to be every policy

    __hash__ = object.__hash__


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        plan(request(), policy="docker")  # type: ignore[arg-type]
    assert caught.value.field == "policy"
    with pytest.raises(InvalidRequestError) as long:
        plan(request(), policy="x" * 100_000)  # type: ignore[arg-type]
    assert len(str(long.value)) < 200  # described in bounded size


@pytest.mark.parametrize(
    "policy", [_RaisingEq("kep"), _Anything(), None, b"kep", 1], ids=lambda p: type(p).__name__
)
def test_policy_of_the_wrong_type_is_refused_without_comparing(policy: object) -> None:
    for planner in (plan, plan_sandbox_config_network):
        with pytest.raises(InvalidArgumentError) as caught:
            planner(b"", policy=policy)  # type: ignore[arg-type]
        assert caught.value.argument == "policy"
        assert caught.value.got == type(policy).__name__


# --- plans and their HCN calls -----------------------------------------------------------


@given(
    host_process=st.none() | st.booleans(),
    mode=st.none() | st.integers(0, 3),
    policy=st.sampled_from(POLICIES),
)
def test_plan_shape(host_process: bool | None, mode: int | None, policy: Policy) -> None:
    try:
        result = plan(request(host_process, mode), policy=policy)
    except InvalidRequestError:
        assert policy == "kep" and mode is not None
        return
    assert result.create_namespace is result.run_cni is (not result.host_network)
    assert result.setup_calls == SETUP_CALLS[result.host_network]
    assert result.teardown_calls == TEARDOWN_CALLS[result.host_network]
    assert result.hcn_calls == result.setup_calls + result.teardown_calls
    if mode is None:  # without namespace_options both policies agree
        other_policy: Policy = "kep" if policy == "containerd" else "containerd"
        other = plan(request(host_process, mode), policy=other_policy)
        assert other.host_network is result.host_network
    text = result.explain()
    assert result.reason in text
    assert all(call.function in text for call in result.hcn_calls)


def test_host_network_plans_never_delete() -> None:
    assert TEARDOWN_CALLS[True] == ()  # HostDefault belongs to the host
    assert [c.function for c in TEARDOWN_CALLS[False]] == ["HcnDeleteNamespace"]
    assert SETUP_CALLS[False][0].function == "HcnCreateNamespace"


def test_inconsistent_plan_is_refused() -> None:
    with pytest.raises(ValueError, match="must both be"):
        NetworkPlan("kep", host_network=True, create_namespace=True, run_cni=False, reason="x")
