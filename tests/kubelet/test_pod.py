"""Input reading (:mod:`kubelet_winnet._kubelet.pod`): JSON paths of ``InvalidPodError``, no
coercion, ``null`` as unset, non-mapping input and workloads without templates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given

from kubelet_winnet import (
    InvalidArgumentError,
    InvalidPodError,
    WinnetError,
    container_config,
    create_container_request,
    explain,
    pod_sandbox_config,
    run_pod_sandbox_request,
    windows_sandbox_config,
)
from kubelet_winnet._kubelet.pod import read_pod
from kubelet_winnet.testing.strategies import as_workload
from tests.strategies import (
    WORKLOAD_KINDS,
    Malformed,
    malformed_manifests,
    pod_manifests,
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
        as_workload("CronJob", {"spec": {"hostNetwork": 1, "containers": []}}),
        "spec.jobTemplate.spec.template.spec.hostNetwork", 1,
    )
)
@example(
    case=Malformed(
        as_workload("Deployment", {"spec": {"hostNetwork": "true", "containers": []}}),
        "spec.template.spec.hostNetwork", "true",
    )
)
@example(
    case=Malformed(
        as_workload("PodTemplate", {"spec": {"initContainers": [{"name": 1}]}}),
        "template.spec.initContainers[0].name", 1,
    )
)
def test_wrong_type_names_json_path(case: Malformed) -> None:
    """A wrong type at a field raises InvalidPodError whose message and ``.field`` name the
    JSON path; nothing is coerced (the string "true" is not a boolean)."""
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
    manifest = pod if kind == "Pod" else as_workload(kind, pod)
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


# --- a key whose __eq__ raises ---------------------------------------------------------------


class _Raised(Exception):
    """The caller's own exception, which must not escape the reader."""


class _HashTwin:
    """A dict key with the hash of a field name whose ``__eq__`` raises once armed: a dict
    lookup of that name compares the two keys (CPython's dict probe), so the lookup raises.
    Disarmed while the dict is built, so that building it compares nothing fatally."""

    armed = False

    def __init__(self, twin: str) -> None:
        self.twin = twin

    def __hash__(self) -> int:
        return hash(self.twin)

    def __eq__(self, other: object) -> bool:
        if _HashTwin.armed:
            raise _Raised
        return other is self


def _twin_first(mapping: dict[str, Any], key: str) -> None:
    """Put a twin of ``key`` before every key of ``mapping``, so a lookup of ``key`` meets
    the twin first."""
    items = list(mapping.items())
    mapping.clear()
    mapping[_HashTwin(key)] = 1  # type: ignore[index]
    mapping.update(items)


def _armed_pod(where: str, key: str) -> Manifest:
    container: Any = {"name": "c",
                      "securityContext": {"windowsOptions": {"hostProcess": True}}}
    spec: Any = {"hostNetwork": True, "containers": [container],
                 "securityContext": {"windowsOptions": {"hostProcess": True}}}
    pod: Manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": spec}
    holder: dict[str, Any] = {
        "": pod, "spec.": spec, "spec.securityContext.": spec["securityContext"],
        "spec.securityContext.windowsOptions.": spec["securityContext"]["windowsOptions"],
        "spec.containers[0].": container,
        "spec.containers[0].securityContext.": container["securityContext"],
        "spec.containers[0].securityContext.windowsOptions.":
            container["securityContext"]["windowsOptions"],
    }[where]
    _twin_first(holder, key)
    return pod


TWIN_FIELDS = [
    ("", "kind"), ("", "spec"), ("spec.", "hostNetwork"), ("spec.", "securityContext"),
    ("spec.", "initContainers"), ("spec.", "containers"),
    ("spec.securityContext.", "windowsOptions"),
    ("spec.securityContext.windowsOptions.", "runAsUserName"),
    ("spec.securityContext.windowsOptions.", "gmsaCredentialSpecName"),
    ("spec.securityContext.windowsOptions.", "gmsaCredentialSpec"),
    ("spec.securityContext.windowsOptions.", "hostProcess"),
    ("spec.containers[0].", "name"), ("spec.containers[0].", "securityContext"),
    ("spec.containers[0].securityContext.", "windowsOptions"),
    ("spec.containers[0].securityContext.windowsOptions.", "hostProcess"),
    ("spec.containers[0].securityContext.windowsOptions.", "runAsUserName"),
]


@pytest.mark.parametrize(("where", "key"), TWIN_FIELDS, ids=[w + k for w, k in TWIN_FIELDS])
def test_a_key_whose_eq_raises_is_an_invalid_pod_error_naming_the_field(
    where: str, key: str
) -> None:
    """The caller's exception from a key's ``__eq__`` never escapes the
    reader; it is InvalidPodError at the field being looked up, in the one wording of an
    unreadable field."""
    pod = _armed_pod(where, key)
    _HashTwin.armed = True
    try:
        with pytest.raises(InvalidPodError) as info:
            windows_sandbox_config(pod)
    finally:
        _HashTwin.armed = False
    assert info.value.field == where + key
    assert str(info.value) == f"{where}{key}: could not be read: _Raised was raised"
    assert not isinstance(info.value.__context__, _Raised) or info.value.__suppress_context__


@pytest.mark.parametrize("getter", ["get_object", "get_list", "get_objects", "get_str",
                                    "get_optional_str", "get_bool", "get_int", "get_strings",
                                    "get_str_map"])
def test_every_getter_turns_a_raising_key_into_invalid_pod_error(getter: str) -> None:
    from kubelet_winnet._kubelet import pod as reader

    mapping: dict[str, Any] = {"other": 1}
    _twin_first(mapping, "labels")
    _HashTwin.armed = True
    try:
        with pytest.raises(InvalidPodError) as info:
            getattr(reader, getter)(mapping, "labels", "metadata.")
    finally:
        _HashTwin.armed = False
    assert info.value.field == "metadata.labels"


def _request_pod(where: str, key: str) -> Manifest:
    """A pod with every field the request builders read on the way to ``key``, and a
    raising twin of ``key`` put first in the object at ``where``."""
    env: Any = {"name": "A", "value": "v"}
    container: Any = {"name": "c", "image": "i", "env": [env], "command": ["x"],
                      "workingDir": "C:\\w", "resources": {"limits": {"cpu": "1"}},
                      "securityContext": {"runAsNonRoot": False}}
    spec: Any = {"containers": [container], "hostname": "h", "dnsConfig": {"searches": []},
                 "securityContext": {}, "volumes": []}
    metadata: Any = {"name": "p", "namespace": "n", "uid": "u", "labels": {"a": "b"}}
    pod: Manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    holder = {"": pod, "metadata.": metadata, "spec.": spec, "spec.containers[0].": container,
              "spec.containers[0].env[0].": env}[where]
    _twin_first(holder, key)
    return pod


REQUEST_BUILDERS: dict[str, Callable[[Manifest], object]] = {
    "pod_sandbox_config": lambda p: pod_sandbox_config(p),
    "run_pod_sandbox_request": lambda p: run_pod_sandbox_request(p),
    "container_config": lambda p: container_config(p, "c"),
    "create_container_request": lambda p: create_container_request(p, "c", pod_sandbox_id="s"),
    "explain": lambda p: explain(p),
}
# Fields each builder reads (a raw lookup in the builders or explain let the caller's
# exception out before).
REQUEST_TWINS = {
    "pod_sandbox_config": [("", "spec"), ("metadata.", "name"), ("spec.", "hostname"),
                           ("spec.", "dnsConfig"), ("spec.containers[0].", "securityContext")],
    "run_pod_sandbox_request": [("metadata.", "uid"), ("spec.", "runtimeClassName"),
                                ("spec.", "dnsPolicy"), ("spec.", "containers")],
    "container_config": [
        ("metadata.", "namespace"), ("spec.", "containers"), ("spec.", "volumes"),
        ("spec.", "securityContext"), ("spec.containers[0].", "image"),
        ("spec.containers[0].", "env"), ("spec.containers[0].", "workingDir"),
        ("spec.containers[0].", "securityContext"), ("spec.containers[0].env[0].", "value"),
        ("spec.containers[0].", "resources"),
    ],
    "create_container_request": [("metadata.", "labels"), ("spec.", "dnsConfig"),
                                 ("spec.containers[0].", "envFrom"),
                                 ("spec.containers[0].env[0].", "name")],
    "explain": [("", "spec"), ("spec.", "containers")],
}
REQUEST_CASES = [(name, where, key) for name, fields in REQUEST_TWINS.items()
                 for where, key in fields]


@pytest.mark.parametrize(("builder", "where", "key"), REQUEST_CASES,
                         ids=[f"{n}-{w}{k}" for n, w, k in REQUEST_CASES])
def test_request_builders_turn_a_raising_key_into_invalid_pod_error(
    builder: str, where: str, key: str
) -> None:
    """The request builders: the same typed error and one wording as the
    reader's getters, whichever module does the lookup."""
    pod = _request_pod(where, key)
    _HashTwin.armed = True
    try:
        with pytest.raises(InvalidPodError) as info:
            REQUEST_BUILDERS[builder](pod)
    finally:
        _HashTwin.armed = False
    assert info.value.field == where + key
    assert str(info.value) == f"{where}{key}: could not be read: _Raised was raised"
