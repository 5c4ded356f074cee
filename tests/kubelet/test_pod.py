"""Input reading (:mod:`kubelet_winnet._kubelet.pod`): JSON paths of ``InvalidPodError``, no
coercion, ``null`` as unset, non-mapping input and workloads without templates (issue 2, item 3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given

from kubelet_winnet import (
    InvalidArgumentError,
    InvalidPodError,
    WinnetError,
    explain,
    windows_sandbox_config,
)
from kubelet_winnet._kubelet.pod import read_pod
from tests.strategies import (
    WORKLOAD_KINDS,
    Malformed,
    malformed_manifests,
    pod_manifests,
    wrap,
)

Manifest = dict[str, Any]
HP = "securityContext.windowsOptions.hostProcess"


def _field_of(manifest: object) -> str:
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(manifest)  # type: ignore[arg-type]
    return info.value.field


@given(case=malformed_manifests())
@example(
    case=Malformed(
        {"spec": {"containers": [{"name": "a"}, {"name": "b", "securityContext": {
            "windowsOptions": {"hostProcess": "true"}}}]}},
        f"spec.containers[1].{HP}", "true",
    )
)
@example(
    case=Malformed(
        wrap("CronJob", {"spec": {"hostNetwork": 1, "containers": []}}),
        "spec.jobTemplate.spec.template.spec.hostNetwork", 1,
    )
)
@example(
    case=Malformed(
        wrap("Deployment", {"spec": {"hostNetwork": "true", "containers": []}}),
        "spec.template.spec.hostNetwork", "true",
    )
)
@example(
    case=Malformed(
        wrap("PodTemplate", {"spec": {"initContainers": [{"name": 1}]}}),
        "template.spec.initContainers[0].name", 1,
    )
)
def test_wrong_type_names_json_path(case: Malformed) -> None:
    """Issue 2 item 3: "Wrong types at those fields ... raise InvalidPodError whose message
    and .field name the JSON path"; no coercion ("the string "true" is not a boolean")."""
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(case.manifest)
    assert info.value.field == case.field
    assert str(info.value).startswith(case.field)
    with pytest.raises(InvalidPodError) as again:
        explain(case.manifest)
    assert again.value.field == case.field


# Every modelled field, plainly, with the values the API would have coerced elsewhere.
OPTION_PATHS = [
    ("spec.securityContext.windowsOptions", {"securityContext": {"windowsOptions": None}}),
    ("spec.initContainers[0].securityContext.windowsOptions",
     {"initContainers": [{"name": "i", "securityContext": {"windowsOptions": None}}]}),
    ("spec.containers[1].securityContext.windowsOptions",
     {"containers": [{"name": "a"}, {"name": "b", "securityContext": {"windowsOptions": None}}]}),
    ("spec.ephemeralContainers[0].securityContext.windowsOptions",
     {"ephemeralContainers": [{"name": "e", "securityContext": {"windowsOptions": None}}]}),
]
BOOL_JUNK = ["true", "false", 1, 0, "1", 1.0, [], {}]
STRING_JUNK = [1, True, 2.5, [], {}, ["x"]]


def _set_options(spec: Manifest, key: str, value: object) -> Manifest:
    """``spec`` (from OPTION_PATHS) with ``windowsOptions`` = {key: value}."""
    import copy

    spec = copy.deepcopy(spec)
    if "securityContext" in spec:
        spec["securityContext"]["windowsOptions"] = {key: value}
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(kind, []):
            if "securityContext" in c:
                c["securityContext"]["windowsOptions"] = {key: value}
    return spec


@pytest.mark.parametrize(("path", "spec"), OPTION_PATHS, ids=[p[0] for p in OPTION_PATHS])
@pytest.mark.parametrize("value", BOOL_JUNK, ids=repr)
def test_host_process_not_coerced(path: str, spec: Manifest, value: object) -> None:
    assert _field_of({"spec": _set_options(spec, "hostProcess", value)}) == f"{path}.hostProcess"


@pytest.mark.parametrize(("path", "spec"), OPTION_PATHS, ids=[p[0] for p in OPTION_PATHS])
@pytest.mark.parametrize("key", ["runAsUserName", "gmsaCredentialSpecName", "gmsaCredentialSpec"])
@pytest.mark.parametrize("value", STRING_JUNK, ids=repr)
def test_string_options_not_coerced(path: str, spec: Manifest, key: str, value: object) -> None:
    assert _field_of({"spec": _set_options(spec, key, value)}) == f"{path}.{key}"


@pytest.mark.parametrize("value", BOOL_JUNK, ids=repr)
@pytest.mark.parametrize("kind", ["Pod", *WORKLOAD_KINDS])
def test_host_network_not_coerced(kind: str, value: object) -> None:
    pod = {"spec": {"hostNetwork": value, "containers": [{"name": "c"}]}}
    manifest = pod if kind == "Pod" else wrap(kind, pod)
    prefix = "" if kind == "Pod" else ".".join(WORKLOAD_KINDS[kind]) + "."
    assert _field_of(manifest) == f"{prefix}spec.hostNetwork"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("x", "spec"), (1, "spec"), ([], "spec"), (True, "spec"),
        ({"containers": {"name": "a"}}, "spec.containers"),
        ({"initContainers": "a"}, "spec.initContainers"),
        ({"ephemeralContainers": 3}, "spec.ephemeralContainers"),
        ({"containers": ["a"]}, "spec.containers[0]"),
        ({"containers": [{"name": "a"}, None]}, "spec.containers[1]"),
        ({"containers": [{"name": ["a"]}]}, "spec.containers[0].name"),
        ({"securityContext": "x"}, "spec.securityContext"),
        ({"securityContext": {"windowsOptions": []}}, "spec.securityContext.windowsOptions"),
        ({"containers": [{"name": "a", "securityContext": 0}]},
         "spec.containers[0].securityContext"),
        ({"containers": [{"name": "a", "securityContext": {"windowsOptions": "x"}}]},
         "spec.containers[0].securityContext.windowsOptions"),
    ],
)
def test_structure_paths(spec: object, field: str) -> None:
    assert _field_of({"kind": "Pod", "spec": spec}) == field


def _strip_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


@given(manifest=pod_manifests())
@example(manifest={"spec": {"hostNetwork": None, "securityContext": None, "containers": None}})
@example(manifest={"spec": {"containers": [{"name": None, "securityContext": None}]}})
def test_null_is_unset(manifest: Manifest) -> None:
    """ "null means unset, as in the API": a pod with explicit nulls reads as the same pod
    without those keys."""
    assert read_pod(manifest) == read_pod(_strip_nulls(manifest))


def test_empty_windows_options_is_not_absent() -> None:
    """Step 4 tells an absent ``windowsOptions`` from an empty one."""
    assert read_pod({"spec": {"securityContext": {}}}).windows_options is None
    assert read_pod({"spec": {"securityContext": {"windowsOptions": {}}}}).windows_options == (
        read_pod({"spec": {"securityContext": {"windowsOptions": {"hostProcess": None}}}})
        .windows_options
    )
    assert read_pod({"spec": {"securityContext": {"windowsOptions": {}}}}).windows_options


@pytest.mark.parametrize("value", [None, [], [{"spec": {}}], "kind: Pod", 1, 2.5, b"x", object()])
def test_non_mapping_input(value: object) -> None:
    """Something that is no pod form at all is a wrong argument type, not bad pod content."""
    with pytest.raises(InvalidArgumentError) as info:
        windows_sandbox_config(value)  # type: ignore[arg-type]
    assert info.value.argument == "pod"


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        ({"kind": "Deployment"}, "spec"),
        ({"kind": "Deployment", "spec": {}}, "spec.template"),
        ({"kind": "Deployment", "spec": {"template": None}}, "spec.template"),
        ({"kind": "Deployment", "spec": {"template": {}}}, "spec.template.spec"),
        ({"kind": "DaemonSet", "spec": {"template": "x"}}, "spec.template"),
        ({"kind": "DaemonSet", "spec": "x"}, "spec"),
        ({"kind": "Job", "spec": {"template": {"metadata": {}}}}, "spec.template.spec"),
        ({"kind": "CronJob", "spec": {}}, "spec.jobTemplate"),
        ({"kind": "CronJob", "spec": {"jobTemplate": {}}}, "spec.jobTemplate.spec"),
        ({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {}}}},
         "spec.jobTemplate.spec.template"),
        ({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": []}}}},
         "spec.jobTemplate.spec.template"),
        ({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {}}}}},
         "spec.jobTemplate.spec.template.spec"),
        ({"kind": "PodTemplate"}, "template"),
        ({"kind": "PodTemplate", "template": {}}, "template.spec"),
        ({"kind": "Pod"}, "spec"),
        ({}, "spec"),
    ],
)
def test_workloads_without_template(manifest: Manifest, field: str) -> None:
    assert _field_of(manifest) == field


@pytest.mark.parametrize("kind", ["Service", "ConfigMap", "pod", "deployment", "", 5, ["Pod"]])
def test_unknown_kinds(kind: object) -> None:
    assert _field_of({"kind": kind, "spec": {"containers": []}}) == "kind"


def test_invalid_pod_error_types() -> None:
    err = InvalidPodError("spec.hostNetwork", "expected a boolean")
    assert isinstance(err, ValueError)
    assert isinstance(err, WinnetError)
    assert err.field == "spec.hostNetwork"
    assert "spec.hostNetwork" in str(err)
    import pickle

    back = pickle.loads(pickle.dumps(err))
    assert (back.field, str(back)) == (err.field, str(err))


def test_unmodelled_keys_ignored() -> None:
    """ "Only the fields the rules read are modelled; other keys are ignored." """
    manifest = {
        "kind": "Pod", "metadata": {"name": 5}, "status": "x",
        "spec": {"hostPID": "yes", "dnsPolicy": 3, "containers": [{"name": "c", "image": 1}]},
    }
    assert windows_sandbox_config(manifest) == windows_sandbox_config(
        {"spec": {"containers": [{"name": "c"}]}}
    )
