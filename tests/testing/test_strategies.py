"""The shipped strategies against the strict pod model and the request builders.

Every generated pod is read without error by ``kw.Pod.from_manifest`` and by both request
builders; an ``accepted=True`` pod is never refused and an ``accepted=False`` pod always
is, with one of the three texts of ``generatePodSandboxWindowsConfig`` (restated here
from ``kuberuntime_sandbox_windows.go``, not imported). Knobs are checked on the pods
they shape.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kubelet_winnet as kw
from kubelet_winnet.runtime import NodeFacts, plan_pod_network
from kubelet_winnet.testing import strategies as ws
from tests.strategies import MINORS, WORKLOAD_KINDS

REFUSALS = {
    "pod must not contain both HostProcess and non-HostProcess containers",
    "hostNetwork is required if Pod contains HostProcess containers",
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false",
}
NODE = kw.NodeContext(runtime_handlers=dict(ws.RUNTIME_CLASSES))
KINDS = ("initContainers", "containers", "ephemeralContainers")


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for kind in KINDS for c in pod["spec"].get(kind, [])]


def _build_all(pod: dict[str, Any], version: str) -> None:
    kw.run_pod_sandbox_request(pod, kubelet_version=version, node=NODE)
    for container in _containers(pod):
        kw.create_container_request(pod, container["name"], pod_sandbox_id="s",
                                    kubelet_version=version, node=NODE,
                                    config_maps=ws.CONFIG_MAPS, secrets=ws.SECRETS)


@given(pod=ws.windows_pods(), version=ws.kubelet_versions())
def test_every_pod_is_read_by_the_strict_model(pod: dict[str, Any], version: str) -> None:
    model = kw.Pod.from_manifest(pod)
    try:
        expected: Any = kw.windows_sandbox_config(pod, kubelet_version=version)
    except kw.SandboxConfigError as refusal:
        expected = str(refusal)
    try:
        got: Any = kw.windows_sandbox_config(model, kubelet_version=version)
    except kw.SandboxConfigError as refusal:
        got = str(refusal)
    assert got == expected


@given(pod=ws.windows_pods(accepted=True), version=ws.kubelet_versions())
def test_accepted_pods_are_never_refused(pod: dict[str, Any], version: str) -> None:
    _build_all(pod, version)


@given(pod=ws.windows_pods(accepted=False), version=ws.kubelet_versions())
def test_refused_pods_are_refused_with_a_kubelet_text(pod: dict[str, Any], version: str) -> None:
    with pytest.raises(kw.SandboxConfigError) as caught:
        kw.run_pod_sandbox_request(pod, kubelet_version=version, node=NODE)
    assert str(caught.value) in REFUSALS


@given(pod=ws.windows_pods(accepted=None))
def test_either_way_pods_are_read_without_error(pod: dict[str, Any]) -> None:
    refusal = None
    try:
        _build_all(pod, "1.32")
    except kw.SandboxConfigError as error:
        refusal = str(error)
    assert refusal is None or refusal in REFUSALS


@given(pod=ws.windows_pods(host_process="container", accepted=True, init_containers=True,
                           ephemeral_containers=True))
def test_container_layout_marks_every_container(pod: dict[str, Any]) -> None:
    assert pod["spec"]["hostNetwork"] is True
    flags = [c["securityContext"]["windowsOptions"]["hostProcess"] for c in _containers(pod)]
    assert flags and all(flags)
    assert {"initContainers", "ephemeralContainers"} <= set(pod["spec"])


@given(pod=ws.windows_pods(host_network=True, host_ports=True, host_process="none"))
def test_host_ports_under_host_network_equal_the_container_port(pod: dict[str, Any]) -> None:
    [port] = pod["spec"]["containers"][0]["ports"]
    assert port["hostPort"] == port["containerPort"]


@given(pod=ws.windows_pods(env_from=True, runtime_class=True, run_as_user_name=True))
def test_knobs_set_their_fields(pod: dict[str, Any]) -> None:
    spec = pod["spec"]
    assert spec["runtimeClassName"] in ws.RUNTIME_CLASSES
    assert "runAsUserName" in spec["securityContext"]["windowsOptions"]
    assert all("envFrom" in c for c in spec["containers"])
    assert spec["os"] == {"name": "windows"}


@given(workload=ws.workloads(ws.windows_pods(accepted=True)))
def test_workloads_hold_an_accepted_pod(workload: dict[str, Any]) -> None:
    kw.windows_sandbox_config(workload)
    kw.Pod.from_manifest(workload) if workload["kind"] == "Pod" else None


@given(version=ws.kubelet_versions())
def test_versions_are_supported(version: str) -> None:
    kw.kubelet_profile(version)


def test_versions_cover_every_minor_and_the_backport_patches() -> None:
    drawn = set(ws.kubelet_versions().elements)  # type: ignore[attr-defined]
    assert {f"1.{m}" for m in range(26, 39)} <= drawn
    # EXPANDED_DNS_LOCKED-style backports land in patch releases: both sides are drawn.
    patches = {v for v in drawn if v.count(".") == 2 and not v.endswith(".0")}
    assert patches


@given(data=st.data(), minor=st.sampled_from(range(26, 38)), gate=st.sampled_from([True, False]))
def test_feature_gates_set_the_gate_as_asked(data: st.DataObject, minor: int, gate: bool) -> None:
    gates = data.draw(ws.feature_gates(kubelet_version=f"1.{minor}", windows_host_network=gate))
    resolution = kw.kubelet_profile(f"1.{minor}", gates)
    # kube_features.go: 1.26-1.32 the sandbox code reads the gate; it is then on iff set true.
    assert resolution.sets_namespace_options is (gate and minor <= 32)


@given(gates=ws.feature_gates(kubelet_version="1.38"))
def test_unset_gates_are_accepted_by_every_kubelet(gates: Any) -> None:
    kw.kubelet_profile("1.38", gates)


@given(node=ws.node_facts(), pod=ws.windows_pods(accepted=True, runtime_class=False))
def test_node_facts_plan_every_accepted_pod(node: NodeFacts, pod: dict[str, Any]) -> None:
    plan = plan_pod_network(kw.run_pod_sandbox_request(pod), node)
    assert plan.namespace in ("node", "pod", "none", "unknown")


# The calls below break the signatures on purpose, so they go through an untyped name.
loose: Any = ws


@pytest.mark.parametrize(("call", "words"), [
    (lambda: loose.windows_pods(host_network="yes"), "host_network"),
    (lambda: loose.windows_pods(host_process="all"), "host_process"),
    (lambda: loose.windows_pods(host_process="mixed", accepted=True), "mixed"),
    (lambda: loose.windows_pods(host_process="pod", host_network=False, accepted=True),
     "hostNetwork is required"),
    (lambda: loose.windows_pods(host_process="none", accepted=False), "HostProcess layout"),
    (lambda: loose.windows_pods(host_process="pod", host_network=True, accepted=False),
     "host_network"),
    (lambda: loose.kubelet_versions([25]), "minors"),
    (lambda: loose.kubelet_versions(["1.32"]), "minors"),
    (lambda: loose.kubelet_versions([]), "at least one"),
    (lambda: loose.feature_gates(windows_host_network=1), "windows_host_network"),
    (lambda: loose.feature_gates(kubelet_version="1.38", windows_host_network=True), "removed"),
    (lambda: loose.workloads(kinds=["Pod"]), "kinds"),
    (lambda: loose.workloads(kinds=[]), "at least one"),
    (lambda: loose.workloads(pods={"spec": {}}), "strategy"),
    (lambda: loose.as_workload("Deployment", {"metadata": {}}), "pod"),
    (lambda: loose.as_workload(3, {"spec": {}}), "got int"),
    (lambda: loose.windows_pods(accepted="yes"), "accepted: expected True, False or None"),
    (lambda: loose.windows_pods(host_ports=1), "host_ports"),
    (lambda: loose.workloads(kinds="Job"), "a list of workload kinds, got str"),
    (lambda: loose.workloads(kinds=iter(["Job"])), "a list of workload kinds"),
    (lambda: loose.kubelet_versions("26"), "a list of kubelet minors"),
    (lambda: loose.kubelet_versions([True]), "got bool"),
    (lambda: loose.feature_gates(kubelet_version=3), "kubelet_version"),
])
def test_bad_arguments_get_typed_errors(call: Any, words: str) -> None:
    with pytest.raises(kw.InvalidArgumentError) as caught:
        call()
    assert words in str(caught.value)


def test_unsupported_versions_in_feature_gates_are_typed() -> None:
    with pytest.raises(kw.UnsupportedVersionError):
        ws.feature_gates(kubelet_version="1.20")


@pytest.mark.parametrize("kind", sorted(WORKLOAD_KINDS))
def test_as_workload_puts_the_pod_where_its_kind_keeps_the_template(kind: str) -> None:
    """Where each kind keeps its template is the tests' own table (``WORKLOAD_KINDS``,
    from the workload APIs), not the library's."""
    spec = {"containers": [{"name": "c", "image": "i"}], "hostNetwork": True}
    workload = ws.as_workload(kind, {"metadata": {"name": "web"}, "spec": spec})
    node: Any = workload
    for key in WORKLOAD_KINDS[kind]:
        node = node[key]
    assert node["spec"]["containers"] == spec["containers"]
    assert node["spec"]["hostNetwork"] is True
    assert workload["kind"] == kind
    assert spec == {"containers": [{"name": "c", "image": "i"}], "hostNetwork": True}


def test_versions_are_every_minor_of_the_tests_own_range_in_each_spelling() -> None:
    """``--kubelet-version`` accepts ``1.N``, ``v1.N``, ``1.N.P`` and ``v1.N.P``."""
    drawn = set(ws.kubelet_versions().elements)  # type: ignore[attr-defined]
    for minor in MINORS:
        assert {f"1.{minor}", f"v1.{minor}", f"1.{minor}.0", f"v1.{minor}.0"} <= drawn
    assert {v.lstrip("v").split(".")[1] for v in drawn} == {str(m) for m in MINORS}


def test_a_workload_never_takes_a_name_that_is_not_a_string() -> None:
    workload = ws.as_workload("Job", {"metadata": {"name": 3, "namespace": ["x"]},
                                      "spec": {"containers": []}})
    assert workload["metadata"] == {"name": "w", "namespace": "default"}
    assert workload["spec"]["template"]["metadata"]["labels"] == {"app": "w"}
    assert workload["spec"]["template"]["spec"]["restartPolicy"] == "Never"
