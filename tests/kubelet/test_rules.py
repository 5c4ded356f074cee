"""Properties of the pure core, :mod:`kubelet_winnet._kubelet.rules`, against kubelet-rules.md."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet._kubelet.rules import (
    STEPS,
    ContainerFacts,
    ContainerKind,
    PodFacts,
    Refusal,
    SandboxDecision,
    WindowsOptions,
    all_refusals,
    decide_container,
    decide_sandbox,
    effective_windows_options,
)
from tests.strategies import (
    ERR_HOST_NETWORK_REQUIRED,
    ERR_MIXED,
    ERR_POD_HOST_PROCESS_FALSE,
    container_context_bytes,
    oracle_container,
    oracle_sandbox,
)

_text = st.sampled_from(["", "ContainerUser", "NT AUTHORITY\\SYSTEM", "NT-AUTORITÄT\\SYSTEM"])
_opt_text = st.none() | _text
options_st = st.builds(
    WindowsOptions,
    run_as_user_name=_opt_text,
    gmsa_credential_spec_name=_opt_text,
    gmsa_credential_spec=_opt_text,
    host_process=st.sampled_from([None, True, False]),
)
_kinds: st.SearchStrategy[ContainerKind] = st.sampled_from(
    ["initContainers", "containers", "ephemeralContainers"]
)


@st.composite
def pod_facts(draw: st.DrawFn) -> PodFacts:
    n = draw(st.integers(0, 4))
    containers = tuple(
        ContainerFacts(f"c{i}", draw(_kinds), draw(st.none() | options_st)) for i in range(n)
    )
    kind_order = {"initContainers": 0, "containers": 1, "ephemeralContainers": 2}
    containers = tuple(sorted(containers, key=lambda c: kind_order[c.kind]))
    return PodFacts(draw(st.booleans()), draw(st.none() | options_st), containers)


def _opts_json(o: WindowsOptions | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {
        "runAsUserName": o.run_as_user_name,
        "gmsaCredentialSpecName": o.gmsa_credential_spec_name,
        "gmsaCredentialSpec": o.gmsa_credential_spec,
        "hostProcess": o.host_process,
    }


def to_spec(pod: PodFacts) -> dict[str, Any]:
    """PodFacts as the camelCase spec the oracle reads."""
    spec: dict[str, Any] = {"hostNetwork": pod.host_network}
    if pod.windows_options is not None:
        spec["securityContext"] = {"windowsOptions": _opts_json(pod.windows_options)}
    for c in pod.containers:
        entry: dict[str, Any] = {"name": c.name}
        if c.windows_options is not None:
            entry["securityContext"] = {"windowsOptions": _opts_json(c.windows_options)}
        spec.setdefault(c.kind, []).append(entry)
    return spec


def _bytes(d: SandboxDecision) -> bytes | str:
    """A decision in the oracle's terms (hand-encoded, see tests/strategies.py)."""
    from tests.strategies import _field, _security_context_bytes

    if d.error is not None:
        return d.error
    network = None if d.network is None else {"POD": 0, "NODE": 2}[d.network]
    return _field(
        1, _security_context_bytes(d.run_as_username, d.credential_spec, d.host_process, network)
    )


def _hp(host_process: bool | None) -> WindowsOptions:
    return WindowsOptions(host_process=host_process)


def _c(name: str, hp: bool | None = None, kind: ContainerKind = "containers") -> ContainerFacts:
    return ContainerFacts(name, kind, None if hp is None else _hp(hp))


# Upstream TestGeneratePodSandboxWindowsConfig_HostProcess rows (gate forced off).
HOST_PROCESS_ROWS: list[tuple[str, PodFacts, SandboxDecision]] = [
    ("empty pod security context", PodFacts(False, WindowsOptions(), (_c("c"),)),
     SandboxDecision()),
    ("pod GMSA spec only",
     PodFacts(False, WindowsOptions(gmsa_credential_spec="gmsa spec"), (_c("c"),)),
     SandboxDecision(credential_spec="gmsa spec")),
    ("pod runAsUserName only",
     PodFacts(False, WindowsOptions(run_as_user_name="SYSTEM"), (_c("c"),)),
     SandboxDecision(run_as_username="SYSTEM")),
    ("pod hostProcess true, one container overriding false",
     PodFacts(True, _hp(True), (_c("c1"), _c("c2", False))),
     SandboxDecision(error=ERR_MIXED, error_rule="3a")),
    ("pod hostProcess true without hostNetwork",
     PodFacts(False, _hp(True), (_c("c"),)),
     SandboxDecision(error=ERR_HOST_NETWORK_REQUIRED, error_rule="3b")),
    ("hostProcess with hostNetwork",
     PodFacts(True, _hp(True), (_c("c"),)),
     SandboxDecision(host_process=True)),
    ("pod false, container true",
     PodFacts(True, _hp(False), (_c("c", True),)),
     SandboxDecision(error=ERR_POD_HOST_PROCESS_FALSE, error_rule="6")),
    ("container-level true only, with hostNetwork",
     PodFacts(True, None, (_c("c", True),)),
     SandboxDecision(host_process=True)),
]
# Upstream TestGeneratePodSandboxWindowsConfig_HostNetwork rows: (gate, hostNetwork) -> network.
HOST_NETWORK_ROWS: list[tuple[bool, bool, str | None]] = [
    (False, False, None), (False, True, None), (True, False, "POD"), (True, True, "NODE"),
]


@pytest.mark.parametrize(
    ("pod", "expected"), [r[1:] for r in HOST_PROCESS_ROWS], ids=[r[0] for r in HOST_PROCESS_ROWS]
)
def test_upstream_host_process_rows(pod: PodFacts, expected: SandboxDecision) -> None:
    assert decide_sandbox(pod, sets_namespace_options=False) == expected


@pytest.mark.parametrize(("gate", "host_network", "network"), HOST_NETWORK_ROWS)
def test_upstream_host_network_rows(gate: bool, host_network: bool, network: str | None) -> None:
    pod = PodFacts(host_network, None, (_c("c"),))
    assert decide_sandbox(pod, sets_namespace_options=gate) == SandboxDecision(network=network)  # type: ignore[arg-type]


def _pin_rows(f: Any) -> Any:
    for _, pod, _ in HOST_PROCESS_ROWS:
        f = example(pod=pod, gate=False)(f)
    for gate, host_network, _ in HOST_NETWORK_ROWS:
        f = example(pod=PodFacts(host_network, None, (_c("c"),)), gate=gate)(f)
    return f


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_decide_sandbox_matches_oracle(pod: PodFacts, gate: bool) -> None:
    """kubelet-rules.md, generatePodSandboxWindowsConfig steps 1-6, "Every error returns no
    config. Precedence is fixed: 3a, then 3b, then 6." """
    assert _bytes(decide_sandbox(pod, gate)) == oracle_sandbox(to_spec(pod), gate)


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_node_only_with_host_network_and_effective_gate(pod: PodFacts, gate: bool) -> None:
    """Step 2: "set namespace_options = WindowsNamespaceOption{} on every pod, with
    network = NODE when spec.hostNetwork is true, else POD ... Gate off: leave
    namespace_options unset." """
    d = decide_sandbox(pod, gate)
    if d.error is None:
        assert (d.network is not None) == gate
        assert (d.network == "NODE") == (gate and pod.host_network)


def _all_host_process(pod: PodFacts) -> bool:
    return all(effective_windows_options(pod, c).host_process is True for c in pod.containers)


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_host_process_iff_all_containers_and_host_network(pod: PodFacts, gate: bool) -> None:
    """Step 3: "If any container is effectively HostProcess ... else host_process = true";
    zero containers: "all are HostProcess" is vacuously true, but no container is HostProcess
    so step 3 does not run."""
    d = decide_sandbox(pod, gate)
    if d.error is None:
        expected = (
            bool(pod.containers) and _all_host_process(pod) and pod.host_network
        )
        assert d.host_process == expected
    else:
        assert d.error_rule in ("3a", "3b", "6")
        # A refusal sends nothing; it keeps only what step 2 chose (explain shows it).
        assert d == SandboxDecision(d.network, error=d.error, error_rule=d.error_rule)
        assert d.network == (("NODE" if pod.host_network else "POD") if gate else None)


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_error_precedence(pod: PodFacts, gate: bool) -> None:
    """ "Precedence is fixed: 3a, then 3b, then 6." with the exact kubelet texts."""
    flags = [effective_windows_options(pod, c).host_process is True for c in pod.containers]
    d = decide_sandbox(pod, gate)
    if any(flags) and not all(flags):
        assert (d.error, d.error_rule) == (ERR_MIXED, "3a")
    elif any(flags) and not pod.host_network:
        assert (d.error, d.error_rule) == (ERR_HOST_NETWORK_REQUIRED, "3b")
    elif (
        any(flags)
        and pod.windows_options is not None
        and pod.windows_options.host_process is False
    ):
        assert (d.error, d.error_rule) == (ERR_POD_HOST_PROCESS_FALSE, "6")
    else:
        assert d.error is None


@given(pod=pod_facts(), gate=st.booleans(), data=st.data())
def test_container_order_independence(pod: PodFacts, gate: bool, data: st.DataObject) -> None:
    """ "Containers visited: initContainers, then containers, then ephemeralContainers; all
    count." The decision depends on the set of containers, not their order."""
    shuffled = data.draw(st.permutations(pod.containers))
    other = PodFacts(pod.host_network, pod.windows_options, tuple(shuffled))
    assert decide_sandbox(other, gate) == decide_sandbox(pod, gate)


def test_all_rows_cover_all_error_rules() -> None:
    rules = {r[2].error_rule for r in HOST_PROCESS_ROWS}
    assert {"3a", "3b", "6"} <= rules
    ids = [s.id for s in STEPS]
    assert ids == ["1", "2", "2.off", "3", "3.none", "3a", "3b", "4", "5", "6"]
    # kubelet-rules.md: "kubelet 1.33+: identical except step 2 is gone".
    assert next(s for s in STEPS if s.id == "2").until == 32


# --- effective options and the container context ------------------------------------------

EFFECTIVE_CASES = [
    # (pod, container, expected effective hostProcess)
    (_hp(True), None, True),  # pod true + container unset -> true
    (None, _hp(True), True),  # pod unset + container true -> true
    (_hp(True), _hp(False), False),  # pod true + container false -> false
    (None, None, None),
    (_hp(False), WindowsOptions(run_as_user_name="u"), False),
]


@pytest.mark.parametrize(("pod_opts", "own", "expected"), EFFECTIVE_CASES)
def test_effective_host_process(
    pod_opts: WindowsOptions | None, own: WindowsOptions | None, expected: bool | None
) -> None:
    pod = PodFacts(True, pod_opts, (ContainerFacts("c", "containers", own),))
    assert effective_windows_options(pod, pod.containers[0]).host_process == expected


def test_gmsa_pair_overridden_together() -> None:
    """ "the two GMSA fields ... are overridden together if either is set" """
    pod_opts = WindowsOptions(gmsa_credential_spec_name="podname", gmsa_credential_spec="podspec")
    own = WindowsOptions(gmsa_credential_spec_name="own")
    pod = PodFacts(False, pod_opts, (ContainerFacts("c", "containers", own),))
    eff = effective_windows_options(pod, pod.containers[0])
    assert (eff.gmsa_credential_spec_name, eff.gmsa_credential_spec) == ("own", None)
    own = WindowsOptions(gmsa_credential_spec="ownspec")
    pod = PodFacts(False, pod_opts, (ContainerFacts("c", "containers", own),))
    eff = effective_windows_options(pod, pod.containers[0])
    assert (eff.gmsa_credential_spec_name, eff.gmsa_credential_spec) == (None, "ownspec")
    assert decide_container(pod, pod.containers[0]).credential_spec == "ownspec"


@given(pod=pod_facts(), image_username=_text)
@example(
    pod=PodFacts(False, WindowsOptions(run_as_user_name="pod"), (_c("c"),)), image_username="img"
)
@example(pod=PodFacts(False, None, (_c("c"),)), image_username="img")
@example(
    pod=PodFacts(
        False, None, (ContainerFacts("c", "containers", WindowsOptions(run_as_user_name="")),)
    ),
    image_username="img",
)
def test_decide_container_matches_oracle(pod: PodFacts, image_username: str) -> None:
    """WindowsContainerSecurityContext: "run_as_username = the image's configured user if
    non-empty, then overridden by the effective runAsUserName when set; credential_spec =
    effective gmsaCredentialSpec; host_process = effective hostProcess." """
    spec = to_spec(pod)
    entries = {e["name"]: e for kind in ("initContainers", "containers", "ephemeralContainers")
               for e in spec.get(kind, [])}
    for c in pod.containers:
        d = decide_container(pod, c, image_username)
        got = container_context_bytes(d.run_as_username, d.credential_spec, d.host_process)
        assert got == oracle_container(spec, entries[c.name], image_username)


# --- the decision drives the trace: step ids <-> STEPS ---------------------------------


def _every_small_pod() -> list[PodFacts]:
    """Every pod of up to two containers over the hostProcess values None/True/False,
    with and without pod-level options and a user name: all paths of the decision."""
    levels: list[bool | None] = [None, True, False]
    pods = []
    for host_network in (False, True):
        for pod_options in [None, *(WindowsOptions(host_process=h) for h in levels),
                            WindowsOptions(run_as_user_name="u")]:
            for count in (0, 1, 2):
                for flags in _product(levels, count):
                    containers = tuple(_c(f"c{i}", flag) for i, flag in enumerate(flags))
                    pods.append(PodFacts(host_network, pod_options, containers))
    return pods


def _product(values: list[bool | None], count: int) -> list[tuple[bool | None, ...]]:
    out: list[tuple[bool | None, ...]] = [()]
    for _ in range(count):
        out = [(*prefix, value) for prefix in out for value in values]
    return out


def test_every_step_id_is_produced_and_every_produced_id_is_a_step() -> None:
    """The ids a decision records exist in STEPS, and each step of STEPS
    is taken by some pod (so no step of the docs is dead prose)."""
    produced: set[str] = set()
    for pod in _every_small_pod():
        for gate in (False, True):
            steps = decide_sandbox(pod, gate).steps
            assert steps, pod
            produced.update(steps)
    assert produced == {step.id for step in STEPS}


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_steps_follow_the_kubelet_order_and_end_in_the_outcome(pod: PodFacts, gate: bool) -> None:
    """ "Order of operations": 1, 2, 3, then 4 or 5 (and 6); every error ends the path at
    its own step."""
    d = decide_sandbox(pod, gate)
    ids = list(d.steps)
    assert ids[:2] == ["1", "2" if gate else "2.off"]
    assert len(set(ids)) == len(ids)
    if d.error is not None:
        assert ids[-1] == d.error_rule
        assert next(s for s in STEPS if s.id == d.error_rule).error == d.error
    else:
        assert ids[2] == ("3" if d.host_process else "3.none")
        assert ids[-1] == ("4" if pod.windows_options is None else "5")


# --- all_refusals: every HostProcess refusal, in the kubelet's precedence -----------------
# generatePodSandboxWindowsConfig (pkg/kubelet/kuberuntime/kuberuntime_sandbox_windows.go):
#   if kubecontainer.HasWindowsHostProcessContainer(pod) {
#       if !kubecontainer.AllContainersAreWindowsHostProcess(pod) { ... "pod must not
#           contain both HostProcess and non-HostProcess containers" }            // 3a
#       if !kubecontainer.IsHostNetworkPod(pod) { ... "hostNetwork is required if Pod
#           contains HostProcess containers" }                                     // 3b
#   ...
#   if kubecontainer.HasWindowsHostProcessContainer(pod) {
#       if wo.HostProcess != nil && !*wo.HostProcess { ... "pod must not contain any
#           HostProcess containers if Pod's WindowsOptions.HostProcess is set to false" } // 6

_INIT, _MAIN, _EPHEMERAL = (_c("i", True, "initContainers"), _c("m"),
                            _c("e", True, "ephemeralContainers"))
REFUSAL_ROWS: list[tuple[str, PodFacts, list[tuple[str, str, list[str], list[str]]]]] = [
    ("no HostProcess container: HasWindowsHostProcessContainer is false, nothing refused",
     PodFacts(False, _hp(False), (_c("a"), _c("b", False))), []),
    ("every container HostProcess with hostNetwork: the kubelet sends host_process",
     PodFacts(True, _hp(True), (_c("a"), _c("b", True))), []),
    ("mixed, with hostNetwork: 3a alone, the containers on each side",
     PodFacts(True, _hp(True), (_c("a"), _c("b", False), _c("c"))),
     [("3a", ERR_MIXED, ["a", "c"], ["b"])]),
    ("mixed without hostNetwork: 3a first, then 3b (IsHostNetworkPod is checked next)",
     PodFacts(False, None, (_c("a", True), _c("b"))),
     [("3a", ERR_MIXED, ["a"], ["b"]), ("3b", ERR_HOST_NETWORK_REQUIRED, ["a"], [])]),
    ("pod hostProcess false, one container true, without hostNetwork: 3b, then 6",
     PodFacts(False, _hp(False), (_c("a", True),)),
     [("3b", ERR_HOST_NETWORK_REQUIRED, ["a"], []),
      ("6", ERR_POD_HOST_PROCESS_FALSE, ["a"], [])]),
    ("pod hostProcess false, one container true of two, no hostNetwork: 3a, 3b and 6",
     PodFacts(False, _hp(False), (_c("a", True), _c("b"))),
     [("3a", ERR_MIXED, ["a"], ["b"]), ("3b", ERR_HOST_NETWORK_REQUIRED, ["a"], []),
      ("6", ERR_POD_HOST_PROCESS_FALSE, ["a"], [])]),
    ("pod hostProcess false, every container true, with hostNetwork: 6 alone",
     PodFacts(True, _hp(False), (_c("a", True), _c("b", True))),
     [("6", ERR_POD_HOST_PROCESS_FALSE, ["a", "b"], [])]),
    ("init and ephemeral containers count (VisitContainers), in visiting order",
     PodFacts(True, None, (_INIT, _MAIN, _EPHEMERAL)),
     [("3a", ERR_MIXED, ["i", "e"], ["m"])]),
]


@pytest.mark.parametrize(("pod", "expected"), [row[1:] for row in REFUSAL_ROWS],
                         ids=[row[0] for row in REFUSAL_ROWS])
def test_all_refusals_rows(pod: PodFacts, expected: list[tuple[str, str, list[str], list[str]]],
                           ) -> None:
    """Each refusal the pod meets, in the order the kubelet checks them, with the kubelet's
    text, its HostProcess containers and (3a) the others."""
    found = all_refusals(pod)
    assert [(r.rule, r.error, [c.name for c in r.host_process], [c.name for c in r.plain])
            for r in found] == expected
    for refusal in found:  # the pod's own container facts, not copies
        assert all(any(c is own for own in pod.containers)
                   for c in (*refusal.host_process, *refusal.plain))


@_pin_rows
@given(pod=pod_facts(), gate=st.booleans())
def test_all_refusals_against_the_oracle(pod: PodFacts, gate: bool) -> None:
    """The kubelet returns the first of the refusals: ``all_refusals`` is empty exactly
    when the kubelet's steps (the oracle of kubelet-rules.md) send a config, and its first
    is the error they return; every later one is a step the pod would meet next."""
    found = all_refusals(pod)
    expected = oracle_sandbox(to_spec(pod), gate)
    if isinstance(expected, bytes):
        assert found == ()
        return
    assert found[0].error == expected
    assert decide_sandbox(pod, gate).error_rule == found[0].rule
    flags = [effective_windows_options(pod, c).host_process is True for c in pod.containers]
    options = pod.windows_options
    rules = [rule for rule, holds in (
        ("3a", any(flags) and not all(flags)),
        ("3b", any(flags) and not pod.host_network),
        ("6", any(flags) and options is not None and options.host_process is False),
    ) if holds]
    assert [r.rule for r in found] == rules
    assert all(isinstance(r, Refusal) for r in found)
