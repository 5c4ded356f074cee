"""One reader for every input form: a pod given as a manifest mapping, as
attribute objects (``SimpleNamespace``) or as ``kubernetes.client`` objects gives the same
config, or the same refusal, or ``InvalidPodError`` with the same ``.field``.

All forms give identical results.
"""

from __future__ import annotations

import enum
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet import (
    InvalidArgumentError,
    InvalidPodError,
    SandboxConfigError,
    windows_container_security_context,
    windows_sandbox_config,
)
from kubelet_winnet._kubelet.pod import (
    ObjectView,
    get_bool,
    get_int,
    get_object,
    get_objects,
    get_str,
    get_str_map,
    pod_template,
    read_pod,
)
from kubelet_winnet.testing.strategies import as_workload
from tests.strategies import (
    WORKLOAD_KINDS,
    Malformed,
    as_client_object,
    as_namespace,
    json_junk,
    malformed_manifests,
    pod_manifests,
    require,
)

client = require("kubernetes.client")


def outcome(pod: object, version: str = "1.32") -> tuple[str, object]:
    try:
        return ("sent", windows_sandbox_config(pod, kubelet_version=version).SerializeToString())  # type: ignore[arg-type]
    except SandboxConfigError as exc:
        return ("refused", str(exc))
    except InvalidPodError as exc:
        return ("invalid", exc.field)
    except InvalidArgumentError as exc:
        return ("argument", exc.argument)


def _forms(manifest: Any) -> list[tuple[str, object]]:
    forms: list[tuple[str, object]] = [("namespace", as_namespace(manifest))]
    if isinstance(manifest, dict):
        obj = as_client_object(manifest)
        if obj is not None:
            forms.append(("client", obj))
    return forms


@given(manifest=pod_manifests(), kind=st.sampled_from([None, *WORKLOAD_KINDS]),
       version=st.sampled_from(["1.26", "1.32", "1.33", "1.38"]))
def test_valid_pods_read_alike_in_every_form(
    manifest: dict[str, Any], kind: str | None, version: str
) -> None:
    document = manifest if kind is None else as_workload(kind, manifest)
    expected = outcome(document, version)
    assert expected[0] in ("sent", "refused")
    for label, form in _forms(document):
        assert outcome(form, version) == expected, label


@given(case=malformed_manifests())
@example(case=Malformed({"kind": "Pod", "spec": "nonsense"}, "spec", "nonsense"))
@example(case=Malformed({"spec": {"securityContext": 5}}, "spec.securityContext", 5))
@example(case=Malformed({"spec": {"containers": [b"x"]}}, "spec.containers[0]", b"x"))
def test_malformed_pods_fail_alike_in_every_form(case: Malformed) -> None:
    """The same bad value names the same JSON path whichever form carries it (the
    attribute path once accepted ``spec="nonsense"`` and ``containers=[b"x"]``)."""
    expected = outcome(case.manifest)
    assert expected == ("invalid", case.field)
    for label, form in _forms(case.manifest):
        assert outcome(form) == expected, label


@given(value=json_junk())
def test_junk_reads_alike_as_mapping_and_namespace(value: Any) -> None:
    expected = outcome(value)
    assert outcome(as_namespace(value)) == expected


@pytest.mark.parametrize(
    ("obj", "kind"),
    [(client.V1Service(), "Service"), (client.V1Node(), "Node"),
     (client.V1Namespace(), "Namespace"), (client.V1ConfigMap(), "ConfigMap")],
)
def test_client_objects_that_are_not_pods_name_their_kind(obj: object, kind: str) -> None:
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(obj)  # type: ignore[arg-type]
    assert info.value.field == "kind"
    assert f'"{kind}"' in str(info.value)


def test_pod_template_spec_is_read_as_a_pod() -> None:
    template = client.V1PodTemplateSpec(
        spec=client.V1PodSpec(host_network=True, containers=[client.V1Container(name="c")])
    )
    assert windows_sandbox_config(template) == windows_sandbox_config(
        {"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}}
    )


# --- pod_template and the typed getters (the reader other modules build on) --------------


@pytest.mark.parametrize("kind", sorted(WORKLOAD_KINDS))
def test_pod_template_of_every_workload_in_every_form(kind: str) -> None:
    manifest = as_workload(kind, {"metadata": {"name": "web"},
                                  "spec": {"containers": [{"name": "c"}]}})
    expected_at = "".join(f"{key}." for key in WORKLOAD_KINDS[kind])
    for form in (manifest, as_namespace(manifest), as_client_object(manifest)):
        template, at = pod_template(form)
        assert at == expected_at
        spec = get_object(template, "spec", at)
        assert spec is not None
        (container,) = get_objects(spec, "containers", f"{at}spec.")
        assert get_str(container, "name", f"{at}spec.containers[0].") == "c"
        assert get_str_map(template["metadata"], "labels", f"{at}metadata.") == {"app": "web"}


def test_getters_name_full_paths() -> None:
    spec = {"hostNetwork": "true", "priority": 10**30, "nodeSelector": {"a": 1}}
    with pytest.raises(InvalidPodError, match=r"^spec\.template\.spec\.hostNetwork: "):
        get_bool(spec, "hostNetwork", "spec.template.spec.")
    with pytest.raises(InvalidPodError) as info:
        get_int(spec, "priority", "spec.", high=2**31 - 1)
    assert info.value.field == "spec.priority"
    assert len(str(info.value)) < 200
    with pytest.raises(InvalidPodError) as info:
        get_str_map(spec, "nodeSelector", "spec.")
    assert info.value.field == 'spec.nodeSelector["a"]'


def test_view_is_a_read_only_camel_case_mapping() -> None:
    pod = client.V1Pod(spec=client.V1PodSpec(host_network=True, containers=[]))
    view = ObjectView(pod)
    assert view["spec"]["hostNetwork"] is True
    assert "status" not in view  # None is absent
    assert "spec" in set(view)
    assert view.get("host_network") is None  # snake_case is not a manifest key
    assert not hasattr(view, "__setitem__")


class _Raises:
    def __getattr__(self, name: str) -> Any:
        raise KeyError(name)


def test_attribute_that_raises_names_its_path() -> None:
    pod = SimpleNamespace(spec=SimpleNamespace(security_context=_RaisesOnWindows()))
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(pod)
    assert info.value.field == "spec.securityContext.windowsOptions"


class _RaisesOnWindows:
    @property
    def windows_options(self) -> Any:
        raise RuntimeError("boom")


def test_object_whose_getattr_raises_key_error() -> None:
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(SimpleNamespace(spec=_Raises()))
    assert info.value.field.startswith("spec.")


def test_container_lookup_is_the_same_in_every_form() -> None:
    manifest = {"spec": {"containers": [{"name": "a", "securityContext": {
        "windowsOptions": {"runAsUserName": "u"}}}]}}
    expected = windows_container_security_context(manifest, "a")
    for _, form in _forms(manifest):
        assert windows_container_security_context(form, "a") == expected  # type: ignore[arg-type]


# --- every form read twice (the second read meets classes the reader has met) ----------
#
# All forms give identical results.


@given(manifest=pod_manifests())
def test_every_form_gives_the_facts_of_the_manifest(manifest: dict[str, Any]) -> None:
    expected = read_pod(manifest)
    for label, form in _forms(manifest):
        assert read_pod(form) == expected, label
        assert read_pod(form) == expected, label  # its classes known


@given(case=malformed_manifests(workloads=False))
def test_every_form_of_a_malformed_pod_names_the_field(case: Malformed) -> None:
    """The same field on the first and the second read."""
    for label, form in _forms(case.manifest):
        assert outcome(form) == ("invalid", case.field), label
        assert outcome(form) == ("invalid", case.field), label


class _Name(str):
    pass


class _Flag(enum.IntEnum):
    ON = 1


_NAMESPACE_ONLY = [
    # A dict or a tuple inside objects, read as the general reader reads them.
    (SimpleNamespace(spec=SimpleNamespace(
        security_context={"windowsOptions": {"runAsUserName": "u"}}, containers=[])),
     {"securityContext": {"windowsOptions": {"runAsUserName": "u"}}, "containers": []}),
    (SimpleNamespace(spec=SimpleNamespace(containers=(
        SimpleNamespace(name="a"), SimpleNamespace(name="b")))),
     {"containers": [{"name": "a"}, {"name": "b"}]}),
    (SimpleNamespace(spec=SimpleNamespace(containers=[{"name": "a", "securityContext": {
        "windowsOptions": {"hostProcess": False}}}])),
     {"containers": [{"name": "a", "securityContext": {"windowsOptions": {
         "hostProcess": False}}}]}),
    (SimpleNamespace(spec={"hostNetwork": True, "containers": []}),
     {"hostNetwork": True, "containers": []}),
]


@pytest.mark.parametrize(("pod", "spec"), _NAMESPACE_ONLY)
def test_dicts_and_tuples_inside_objects_read_as_the_manifest(
    pod: object, spec: dict[str, Any]
) -> None:
    expected = outcome({"spec": spec})
    assert expected[0] == "sent"
    assert outcome(pod) == expected
    assert outcome(pod) == expected  # its classes known


def _pod_options(**options: Any) -> dict[str, Any]:
    return {"securityContext": {"windowsOptions": options}, "containers": []}


def _container_options(**options: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "securityContext": {"windowsOptions": options}}]}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"hostNetwork": _Flag.ON, "containers": []}, "spec.hostNetwork"),
        ({"hostNetwork": 1, "containers": []}, "spec.hostNetwork"),
        ({"containers": [{"name": _Name("c")}]}, "spec.containers[0].name"),
        ({"containers": [None]}, "spec.containers[0]"),
        ({"containers": "c"}, "spec.containers"),
        ({"containers": [{"name": "c"}], "initContainers": [{"name": 5}]},
         "spec.initContainers[0].name"),
        (_pod_options(runAsUserName="\udc80"), "spec.securityContext.windowsOptions.runAsUserName"),
        (_pod_options(hostProcess="true"), "spec.securityContext.windowsOptions.hostProcess"),
        (_pod_options(gmsaCredentialSpecName=_Name("g")),
         "spec.securityContext.windowsOptions.gmsaCredentialSpecName"),
        (_container_options(gmsaCredentialSpec=b"x"),
         "spec.containers[0].securityContext.windowsOptions.gmsaCredentialSpec"),
        (_container_options(runAsUserName=["u"]),
         "spec.containers[0].securityContext.windowsOptions.runAsUserName"),
    ],
)
def test_refused_values_on_known_classes_name_the_manifest_field(
    spec: dict[str, Any], field: str
) -> None:
    manifest = {"spec": spec}
    assert outcome(manifest) == ("invalid", field)
    for label, form in _forms(manifest):
        assert outcome(form) == ("invalid", field), label
        assert outcome(form) == ("invalid", field), label  # its classes known


def test_an_iterable_of_known_objects_is_not_an_array() -> None:
    pod = SimpleNamespace(spec=SimpleNamespace(containers=iter([SimpleNamespace(name="c")])))
    windows_sandbox_config(SimpleNamespace(spec=SimpleNamespace(containers=[
        SimpleNamespace(name="c")])))  # the classes known
    assert outcome(pod) == ("invalid", "spec.containers")
    assert outcome({"spec": {"containers": iter([{"name": "c"}])}}) == outcome(pod)


class _RaisingContainer(SimpleNamespace):
    @property
    def security_context(self) -> Any:
        raise RuntimeError("boom")


def test_attribute_that_raises_on_a_known_class_names_its_path() -> None:
    pod = SimpleNamespace(spec=SimpleNamespace(containers=[_RaisingContainer(name="a")]))
    for _ in range(2):  # the second time, _RaisingContainer is a known class
        with pytest.raises(InvalidPodError) as info:
            windows_sandbox_config(pod)
        assert info.value.field == "spec.containers[0].securityContext"
        assert "RuntimeError was raised" in str(info.value)


def test_views_a_caller_builds_over_values_leave_the_reader_alone() -> None:
    """``ObjectView`` over a list or a string subclass (a caller may build one) does not
    make the reader read lists or such strings as objects."""
    ObjectView([])
    ObjectView(_Name("x"))
    manifest = {"spec": {"containers": [{"name": "a"}]}}
    assert outcome(as_client_object(manifest)) == outcome(manifest)
    bad = {"spec": {"containers": [{"name": _Name("a")}]}}
    for label, form in _forms(bad):
        assert outcome(form) == ("invalid", "spec.containers[0].name"), label
        assert outcome(form) == ("invalid", "spec.containers[0].name"), label
