"""``check_pod``'s ``unknown-field`` rule: a key that is no field of its core/v1 type, at
each level the kubelet's decision reads, with the path from the manifest root and the
nearest known field.

The expected names and paths are written from the input and from k8s.io/api core/v1
types.go's JSON names (``hostNetwork``, ``hostProcess``, ...); the API server decodes them
case-sensitively, so a case error is an unknown field too.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.fields import FIELDS
from kubelet_winnet._lint.reach import host_network_reach
from kubelet_winnet._lint.rules import Finding
from kubelet_winnet._lint.targeting import Target, pod_object
from kubelet_winnet.errors import InvalidPodError
from kubelet_winnet.testing.strategies import as_workload
from tests.strategies import pod_manifests

REACH = host_network_reach("1.32", None, given=False)


def unknown(manifest: dict[str, Any]) -> list[Finding]:
    pod = pod_object(manifest)
    assert pod is not None
    return [f for f in check_pod(pod, Target.WINDOWS, REACH) if f.rule.id == "unknown-field"]


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    body = {"containers": [{"name": "c", "image": "i"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": body}


def container(**fields: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "i", **fields}]}


# (spec of a Pod, path of the bad key from the spec, the sentence's hint)
LEVELS = [
    ({"hostNetwrok": True}, ("hostNetwrok",), "(did you mean hostNetwork?)"),
    ({"HostNetwork": True}, ("HostNetwork",), "(did you mean hostNetwork?)"),
    ({"securityContext": {"runAsNonroot": True}}, ("securityContext", "runAsNonroot"),
     "(did you mean runAsNonRoot?)"),
    ({"securityContext": {"windowsOptions": {"hostprocess": True}}},
     ("securityContext", "windowsOptions", "hostprocess"), "(did you mean hostProcess?)"),
    (container(imagePullpolicy="Always"), ("containers", 0, "imagePullpolicy"),
     "(did you mean imagePullPolicy?)"),
    (container(hostNetwork=True), ("containers", 0, "hostNetwork"),
     "(hostNetwork belongs in pod spec)"),
    (container(securityContext={"privilegd": True}),
     ("containers", 0, "securityContext", "privilegd"), "(did you mean privileged?)"),
    (container(securityContext={"windowsOptions": {"runAsUsername": "x"}}),
     ("containers", 0, "securityContext", "windowsOptions", "runAsUsername"),
     "(did you mean runAsUserName?)"),
    ({"securityContext": {"runAsUserName": "x"}}, ("securityContext", "runAsUserName"),
     "(runAsUserName belongs in windowsOptions)"),
    ({"initContainers": [{"name": "i", "image": "i", "Args": ["x"]}]},
     ("initContainers", 0, "Args"), "(did you mean args?)"),
    ({"ephemeralContainers": [{"name": "e", "image": "i", "targetContainer": "c"}]},
     ("ephemeralContainers", 0, "targetContainer"), "(did you mean targetContainerName?)"),
    ({"zzz": 1}, ("zzz",), ""),
]


@pytest.mark.parametrize(("spec", "path", "hint"), LEVELS)
@pytest.mark.parametrize("kind", ["Pod", *WORKLOAD_TEMPLATE_PATHS])
def test_a_bad_key_at_each_level_is_found_with_its_path_and_hint(
    kind: str, spec: dict[str, Any], path: tuple[str | int, ...], hint: str
) -> None:
    manifest = pod(spec) if kind == "Pod" else as_workload(kind, pod(spec))
    (finding,) = unknown(manifest)
    spec_path = ("spec",) if kind == "Pod" else (*WORKLOAD_TEMPLATE_PATHS[kind], "spec")
    assert finding.field == (*spec_path, *path)
    key = str(path[-1])
    assert finding.message.startswith(f"unknown field {key} in ")
    if hint:
        assert f" {hint}: " in finding.message
    else:
        assert "(" not in finding.message
    assert finding.message.endswith(": the API server refuses or drops it.")
    in_container = path[0] in ("initContainers", "containers", "ephemeralContainers")
    assert finding.container == (spec[str(path[0])][0]["name"] if in_container else None)
    # kubectl apply's strict field validation: the API server's own words and path.
    json_path = ".".join(str(p) for p in (*spec_path, *path)).replace(".0.", "[0].")
    assert f'strict decoding error: unknown field "{json_path}"' in finding.detail
    assert ("field names are case-sensitive" in finding.detail) == (
        key.lower() in {n.lower() for n in FIELDS[_type_of(path)]} and key not in
        FIELDS[_type_of(path)]
    )


def _type_of(path: tuple[str | int, ...]) -> str:
    """The core/v1 type that holds the last key of ``path`` (from the spec)."""
    parents = [p for p in path[:-1] if isinstance(p, str)]
    if not parents:
        return "PodSpec"
    if parents[-1] == "windowsOptions":
        return "WindowsSecurityContextOptions"
    if parents == ["securityContext"]:
        return "PodSecurityContext"
    if parents[-1] == "securityContext":
        return "SecurityContext"
    return "EphemeralContainer" if parents[0] == "ephemeralContainers" else "Container"


@pytest.mark.parametrize("kind", list(WORKLOAD_TEMPLATE_PATHS))
def test_the_pod_template_level(kind: str) -> None:
    manifest = as_workload(kind, pod({}))
    template: Any = manifest
    for key in WORKLOAD_TEMPLATE_PATHS[kind]:
        template = template[key]
    template["metdata"] = template.pop("metadata")
    (finding,) = unknown(manifest)
    assert finding.field == (*WORKLOAD_TEMPLATE_PATHS[kind], "metdata")
    assert finding.message.startswith("unknown field metdata in pod template (did you mean "
                                      "metadata?): ")


def test_the_new_users_pod_gets_both_findings_and_the_kinds_own_fields_are_fine() -> None:
    manifest = pod({"hostNetwrok": True, "nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": "c", "image": "i", "securityContext": {
                        "windowsOptions": {"hostprocess": True}}}]})
    found = unknown(manifest)
    assert [f.field for f in found] == [
        ("spec", "hostNetwrok"),
        ("spec", "containers", 0, "securityContext", "windowsOptions", "hostprocess"),
    ]
    # A Pod's top level (apiVersion, kind, metadata, status) and a workload's own spec
    # (selector, replicas, ...) are not levels of the rule.
    manifest["status"] = {}
    manifest["metadata"]["labelz"] = {}
    assert len(unknown(manifest)) == 2
    deployment = as_workload("Deployment", pod({}))
    deployment["spec"]["replicas"] = 2
    deployment["spec"]["strategy"] = {"type": "Recreate"}
    assert unknown(deployment) == []


def test_several_bad_keys_come_in_the_objects_order() -> None:
    manifest = pod({"zeta": 1, "hostNetwork": True, "alpha": None, "securityContext": {},
                    "initContainers": [], "ephemeralContainers": None})
    assert [f.field[-1] for f in unknown(manifest)] == ["zeta", "alpha"]


@pytest.mark.parametrize(("spec", "field"), [
    ({"securityContext": "x"}, "spec.securityContext"),
    ({"initContainers": "x"}, "spec.initContainers"),
    ({"ephemeralContainers": [None, 3]}, "spec.ephemeralContainers[0]"),
])
def test_a_pod_the_kubelet_model_cannot_read_is_its_error_not_a_finding(
        spec: dict[str, Any], field: str) -> None:
    """The linter reads pods through the kubelet model's reader: a field of the wrong type
    is that reader's InvalidPodError, naming the field (check reports it as bad input)."""
    with pytest.raises(InvalidPodError) as caught:
        unknown(pod(spec))
    assert caught.value.field == field


def test_a_long_or_odd_key_is_quoted_and_clipped() -> None:
    key = "a key with spaces " + "x" * 100
    (finding,) = unknown(pod({key: 1}))
    assert finding.field == ("spec", key)
    assert "unknown field 'a key with spaces xx" in finding.message
    assert "...'" in finding.message
    assert len(finding.message) < 160


# --- no finding for a pod of known fields ------------------------------------------------

def _object(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """An object with any subset of the known fields of ``kind`` (values null)."""
    return st.builds(dict.fromkeys, st.sets(st.sampled_from(sorted(FIELDS[kind]))))


@st.composite
def known_pods(draw: st.DrawFn) -> dict[str, Any]:
    """Every level built only from the names k8s.io/api core/v1 gives it."""
    spec = draw(_object("PodSpec"))

    def context(kind: str) -> dict[str, Any]:
        value = draw(_object(kind))
        if "windowsOptions" in value:
            value["windowsOptions"] = draw(_object("WindowsSecurityContextOptions"))
        return value

    if "securityContext" in spec:
        spec["securityContext"] = context("PodSecurityContext")
    for name, kind in (("initContainers", "Container"), ("containers", "Container"),
                       ("ephemeralContainers", "EphemeralContainer")):
        if name in spec:
            entries = draw(st.lists(_object(kind), max_size=2))
            for entry in entries:
                if "securityContext" in entry:
                    entry["securityContext"] = context("SecurityContext")
            spec[name] = entries
    return spec


@given(spec=known_pods(), kind=st.sampled_from(["Pod", *WORKLOAD_TEMPLATE_PATHS]))
def test_a_pod_of_known_fields_never_gets_the_rule(spec: dict[str, Any], kind: str) -> None:
    """types.go: each name here is the JSON name of a field of the type at that level."""
    manifest = {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    if kind != "Pod":
        manifest = as_workload(kind, manifest)
    assert unknown(manifest) == []


@given(manifest=pod_manifests(), kind=st.sampled_from(["Pod", *WORKLOAD_TEMPLATE_PATHS]))
def test_the_projects_generated_pods_have_no_unknown_field(
    manifest: dict[str, Any], kind: str
) -> None:
    manifest = copy.deepcopy(manifest)
    if kind != "Pod":
        manifest = as_workload(kind, manifest)
    assert unknown(manifest) == []


# --- host-network-ignored: what it advises ---------------------------------------------


def _ignored_detail(spec: dict[str, Any]) -> str:
    found = pod_object(pod({"hostNetwork": True, **spec}))
    assert found is not None
    [finding] = [f for f in check_pod(found, Target.WINDOWS, REACH)
                 if f.rule.id == "host-network-ignored"]
    return finding.detail


def test_a_pod_without_ports_is_advised_a_host_port_or_a_node_port_service() -> None:
    detail = _ignored_detail({})
    assert detail.endswith(
        "To reach the pod on the node's address use a hostPort or a NodePort Service.")


@pytest.mark.parametrize(("ports", "said"), [
    ([[{"containerPort": 80, "hostPort": 80}]], "Its container port 80 has a hostPort"),
    ([[{"containerPort": 80}], [{"containerPort": 443}, {"containerPort": 80}]],
     "Its container ports 80, 443 have hostPorts"),
])
def test_a_pod_with_ports_is_told_they_already_have_host_ports(
    ports: list[list[dict[str, Any]]], said: str,
) -> None:
    """A check -v advised "use a hostPort" to a pod that had one. In a hostNetwork pod
    the API server sets hostPort to containerPort where none is given
    (defaultHostNetworkPorts, pkg/apis/core/v1/defaults.go)."""
    spec = {"containers": [{"name": f"c{i}", "image": "i", "ports": declared}
                           for i, declared in enumerate(ports)]}
    detail = _ignored_detail(spec)
    assert "use a hostPort" not in detail
    assert said in detail
    assert detail.endswith("where the node's CNI plugin maps ports (the portMappings "
                           "capability; kubelet-winnet node checks it).")
