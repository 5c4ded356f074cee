"""kubelet_winnet.runtime.plan_sandbox_network: the two policies, input forms, typed errors.

Expected values restate ``shared/reference/cri-and-hcn.md`` and issue 3, not the code:
containerd decides by ``host_process`` alone; ``kep`` by ``namespace_options.network ==
NODE`` or ``host_process``, falling back to ``host_process`` when the options are absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import InvalidRequestError, WinnetError
from kubelet_winnet.runtime import (
    POLICIES,
    SETUP_CALLS,
    TEARDOWN_CALLS,
    NetworkPlan,
    Policy,
    render_docs_tables,
)
from kubelet_winnet.runtime import plan_sandbox_network as plan

REPO_ROOT = Path(__file__).resolve().parent.parent  # as in conftest (mypy cannot import it)
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
    assert plan(absent).host_network is True
    with pytest.raises(InvalidRequestError):
        plan(present)


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
        plan(config(host_process, mode))
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
    host_process: bool | None, mode: int | None, policy: str
) -> None:
    if policy == "kep" and host_process and mode == POD:
        return  # a contradiction: covered above
    req = request(host_process, mode)
    sandbox = req.config
    forms: list[object] = [
        req,
        sandbox,
        req.SerializeToString(),
        sandbox.SerializeToString(),
        bytearray(req.SerializeToString()),
        memoryview(sandbox.SerializeToString()),
    ]
    plans = {plan(form, policy=policy).host_network for form in forms}  # type: ignore[arg-type]
    assert len(plans) == 1


def test_empty_bytes_are_an_empty_config() -> None:
    assert plan(b"").host_network is False
    assert plan(b"", policy="containerd").host_network is False


@pytest.mark.parametrize(
    "data",
    [
        b"\x0a",  # tag without length
        b"\x0a\x05\x4a",  # length past the end
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",  # varint too long
        b"\x00\x00",  # field number 0
        b"\x0b",  # group start (wire type 3)
        b"\x0f",  # wire type 7 does not exist
        b"\x0a\x02\x4a\x05",  # frame fine, nested windows runs past its length
        b"\x12\x02\xc3\x28",  # runtime_handler is not UTF-8
    ],
)
@pytest.mark.parametrize("policy", POLICIES)
def test_malformed_bytes_raise_a_typed_error(data: bytes, policy: Policy) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        plan(data, policy=policy)
    assert "malformed" in str(caught.value) or "not a serialized" in str(caught.value)
    assert caught.value.__cause__ is None  # no protobuf traceback chained in


@given(st.binary(max_size=64))
@example(bytes.fromhex("0a084a060a0422020802"))
@example(b"\x4a\x02\x0a\x00")
def test_any_bytes_give_a_plan_or_a_typed_error(data: bytes) -> None:
    for policy in POLICIES:
        try:
            result = plan(data, policy=policy)
        except InvalidRequestError:
            continue
        assert isinstance(result, NetworkPlan)


def test_other_types_and_policies_are_refused() -> None:
    with pytest.raises(TypeError, match="expected a PodSandboxConfig"):
        plan("0a00")  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError) as caught:
        plan(config(), policy="docker")  # type: ignore[arg-type]
    assert caught.value.field == "policy"


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


# --- docs/runtime.md embeds the tables rendered from this module ------------------------

BEGIN = "<!-- BEGIN tables: python -m kubelet_winnet.runtime -->\n"
END = "<!-- END tables -->"


def test_docs_tables_match_the_module() -> None:
    text = (REPO_ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    assert text[start:end] == render_docs_tables(), (
        "docs/runtime.md is stale: paste `python -m kubelet_winnet.runtime` between the markers"
    )


def test_docs_call_table_lists_every_call_in_order() -> None:
    # Independent of the renderer: read the Markdown back and compare with the tables.
    text = render_docs_tables()
    for host, label in ((False, "pod network"), (True, "host network")):
        (row,) = [line for line in text.splitlines() if line.startswith(f"| {label} |")]
        setup_cell, teardown_cell = row.split("|")[2:4]
        assert re.findall(r"`(\w+)`", setup_cell) == [c.function for c in SETUP_CALLS[host]]
        assert re.findall(r"`(\w+)`", teardown_cell) == [c.function for c in TEARDOWN_CALLS[host]]


def test_docs_policy_table_rows_agree_with_the_rules() -> None:
    rows = {
        tuple(cell.strip() for cell in line.split("|")[1:3]): tuple(
            cell.strip() for cell in line.split("|")[4:6]
        )
        for line in render_docs_tables().splitlines()
        if line.startswith(("| true |", "| false |"))
    }
    assert rows[("false", "NODE")] == ("pod network", "host network")  # the KEP gap
    assert rows[("true", "(absent)")] == ("host network", "host network")
    assert rows[("true", "POD")] == ("host network", "**InvalidRequestError**")
    assert rows[("false", "(absent)")] == ("pod network", "pod network")
