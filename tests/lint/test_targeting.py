"""Which pods are Windows pods (``kubelet_winnet._lint.targeting``).

Rule: Windows-targeted when ``spec.os.name`` is ``windows``, or a
``nodeSelector``, or the required node affinity, pins ``kubernetes.io/os`` (or
``beta.kubernetes.io/os``) to ``windows``; required terms are ORed by the scheduler, so
every term must pin the OS.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._lint.targeting import Target, pod_object, target_of
from kubelet_winnet.errors import InvalidPodError


def target(spec: dict[str, Any], kind: str = "Pod") -> Target:
    if kind == "Pod":
        manifest: dict[str, Any] = {"kind": "Pod", "spec": spec}
    elif kind == "CronJob":
        manifest = {"kind": kind, "spec": {"jobTemplate": {"spec": {"template": {"spec": spec}}}}}
    else:
        manifest = {"kind": kind, "spec": {"template": {"spec": spec}}}
    pod = pod_object(manifest)
    assert pod is not None
    return target_of(pod)[0]


def term(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(expressions)}


def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}


WIN = {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}
LIN = {"key": "beta.kubernetes.io/os", "operator": "In", "values": ["linux"]}
ARCH = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, Target.UNTARGETED),
    ({"os": {"name": "windows"}}, Target.WINDOWS),
    ({"os": {"name": "linux"}, "nodeSelector": {"kubernetes.io/os": "windows"}}, Target.LINUX),
    ({"nodeSelector": {"kubernetes.io/os": "windows"}}, Target.WINDOWS),
    ({"nodeSelector": {"beta.kubernetes.io/os": "windows"}}, Target.WINDOWS),
    ({"nodeSelector": {"kubernetes.io/os": "linux"}}, Target.LINUX),
    ({"nodeSelector": {"node.kubernetes.io/windows-build": "10.0.17763"}}, Target.UNTARGETED),
    (affinity(term(WIN)), Target.WINDOWS),
    (affinity(term(WIN, ARCH)), Target.WINDOWS),
    (affinity(term(WIN), term(WIN)), Target.WINDOWS),
    (affinity(term(WIN), term(ARCH)), Target.UNTARGETED),  # the second term allows Linux
    (affinity(term(WIN), term(LIN)), Target.UNTARGETED),
    (affinity(term(LIN)), Target.LINUX),
    (affinity(term({"key": "kubernetes.io/os", "operator": "NotIn", "values": ["windows"]})),
     Target.LINUX),
    (affinity(term({**WIN, "values": ["windows", "linux"]})), Target.UNTARGETED),
])
def test_targets(spec: dict[str, Any], expected: Target) -> None:
    assert target(spec) is expected


@given(st.sampled_from(["Pod", "Deployment", "DaemonSet", "Job", "CronJob", "StatefulSet"]),
       st.sampled_from(["windows", "linux"]))
def test_same_rule_for_every_workload(kind: str, os_name: str) -> None:
    """The pod template of every workload is read like a Pod's spec."""
    assert target({"nodeSelector": {"kubernetes.io/os": os_name}}, kind) is Target(os_name)


def test_other_kinds_hold_no_pod() -> None:
    assert pod_object({"kind": "ConfigMap", "data": {"spec": "x"}}) is None
    assert pod_object({"apiVersion": "v1"}) is None
    kindless = pod_object({"spec": {"containers": []}})
    assert kindless is not None
    assert kindless.kind == "Pod"


@pytest.mark.parametrize(("manifest", "field"), [
    ({"kind": ["Pod"]}, "kind"),
    ({"kind": "Deployment", "spec": {"template": []}}, "spec.template"),
    ({"kind": "Deployment", "spec": {}}, "spec.template"),
    ({"kind": "Pod", "spec": []}, "spec"),
])
def test_malformed_objects(manifest: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPodError) as info:
        pod_object(manifest)
    assert info.value.field == field


@pytest.mark.parametrize(("spec", "field"), [
    ({"nodeSelector": ["kubernetes.io/os=windows"]}, "spec.nodeSelector"),
    ({"nodeSelector": {"kubernetes.io/os": True}}, "spec.nodeSelector.kubernetes.io/os"),
    ({"os": {"name": 1}}, "spec.os.name"),
    ({"os": "windows"}, "spec.os"),
    (affinity(term({**WIN, "values": "windows"})),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values"),
    (affinity(term({**WIN, "values": [{"a": 1}]})),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values"),
])
def test_malformed_targeting_fields_are_not_coerced(spec: dict[str, Any], field: str) -> None:
    pod = pod_object({"kind": "Pod", "spec": spec})
    assert pod is not None
    with pytest.raises(InvalidPodError) as info:
        target_of(pod)
    assert info.value.field == field


CONTROL_PLANE = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}
MASTER = {"key": "node-role.kubernetes.io/master", "operator": "In", "values": [""]}


@pytest.mark.parametrize(("spec", "expected"), [
    # kubeadm's role label (cmd/kubeadm/app/constants/constants.go), value "" as kubeadm
    # sets it, and the label kubeadm set before 1.24
    ({"nodeSelector": {"node-role.kubernetes.io/control-plane": ""}}, Target.LINUX),
    ({"nodeSelector": {"node-role.kubernetes.io/master": ""}}, Target.LINUX),
    (affinity(term(CONTROL_PLANE)), Target.LINUX),
    (affinity(term(MASTER)), Target.LINUX),
    (affinity(term(CONTROL_PLANE), term(LIN)), Target.LINUX),
    # a term that also admits other nodes keeps the pod untargeted
    (affinity(term(CONTROL_PLANE), term(ARCH)), Target.UNTARGETED),
    (affinity(term({**CONTROL_PLANE, "operator": "DoesNotExist"})), Target.UNTARGETED),
    (affinity(term({**MASTER, "operator": "NotIn"})), Target.UNTARGETED),
    # tolerating the control-plane taint lets a pod run there, it does not keep it there
    ({"tolerations": [{"key": "node-role.kubernetes.io/control-plane",
                       "operator": "Exists", "effect": "NoSchedule"}]}, Target.UNTARGETED),
    # an explicit OS pin wins: the pod says which OS it is for
    ({"nodeSelector": {"node-role.kubernetes.io/control-plane": "",
                       "kubernetes.io/os": "windows"}}, Target.WINDOWS),
    ({"os": {"name": "windows"}, **affinity(term(CONTROL_PLANE))}, Target.WINDOWS),
    (affinity(term(CONTROL_PLANE, WIN)), Target.WINDOWS),
])
def test_a_pod_kept_on_control_plane_nodes_is_linux_targeted(
    spec: dict[str, Any], expected: Target,
) -> None:
    """The control plane runs on Linux only (kubernetes.io/docs/concepts/windows/intro/:
    "you can only run the control plane on Linux"), so a pod that only control-plane nodes
    may run is not a Windows pod."""
    assert target(spec) is expected


def test_a_control_plane_selector_that_is_not_a_string_is_not_coerced() -> None:
    pod = pod_object({"kind": "Pod", "spec": {
        "nodeSelector": {"node-role.kubernetes.io/control-plane": True}}})
    assert pod is not None
    with pytest.raises(InvalidPodError) as info:
        target_of(pod)
    assert info.value.field == "spec.nodeSelector.node-role.kubernetes.io/control-plane"
