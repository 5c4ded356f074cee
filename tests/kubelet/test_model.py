"""The pydantic input model (:mod:`kubelet_winnet._kubelet.model`): strict, JSON-path errors, and
the same results as the manifest dict it was built from."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from pydantic import ValidationError

from kubelet_winnet import (
    InvalidArgumentError,
    InvalidPodError,
    SandboxConfigError,
    windows_sandbox_config,
)
from kubelet_winnet._kubelet.model import (
    Container,
    Pod,
    PodSecurityContext,
    PodSpec,
    SecurityContext,
    WindowsSecurityContextOptions,
)
from kubelet_winnet._kubelet.pod import read_pod
from tests.strategies import (
    Malformed,
    Profile,
    kubelet_profiles,
    malformed_manifests,
    pod_manifests,
)

Manifest = dict[str, Any]


def _translate(pod: object, profile: Profile) -> bytes | str:
    try:
        return windows_sandbox_config(
            pod, kubelet_version=profile.version, feature_gates=profile.gates  # type: ignore[arg-type]
        ).SerializeToString()
    except SandboxConfigError as e:
        return str(e)


@given(manifest=pod_manifests(), profile=kubelet_profiles())
@example(
    manifest={"spec": {"hostNetwork": True, "containers": [
        {"name": "c", "securityContext": {"windowsOptions": {"hostProcess": True}}}]}},
    profile=Profile("1.32", None, 32, None),
)
@example(manifest={"spec": {"containers": None}}, profile=Profile("1.32", None, 32, None))
@example(
    manifest={"spec": {"containers": [{"name": None}]}}, profile=Profile("1.32", None, 32, None)
)
def test_same_result_as_dict(manifest: Manifest, profile: Profile) -> None:
    """The model and the manifest it came from give identical results (null = unset in both)."""
    model = Pod.from_manifest(manifest)
    assert read_pod(model) == read_pod(manifest)
    assert _translate(model, profile) == _translate(manifest, profile)


@given(case=malformed_manifests(workloads=False))
def test_from_manifest_error_path_matches_dict(case: Malformed) -> None:
    """Strict: a wrong JSON type at a modelled field is an InvalidPodError at the same JSON
    path as the dict reader reports, never pydantic's ValidationError."""
    with pytest.raises(InvalidPodError) as info:
        Pod.from_manifest(case.manifest)
    assert info.value.field == case.field


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        ({"spec": {"hostNetwork": "true"}}, "spec.hostNetwork"),
        ({"spec": {"hostNetwork": 1}}, "spec.hostNetwork"),
        ({"spec": {"containers": [{"name": "a"}, {"name": "b", "securityContext": {
            "windowsOptions": {"hostProcess": "1"}}}]}},
         "spec.containers[1].securityContext.windowsOptions.hostProcess"),
        ({"spec": {"securityContext": {"windowsOptions": {"runAsUserName": 7}}}},
         "spec.securityContext.windowsOptions.runAsUserName"),
        ({"spec": {"ephemeralContainers": [{"securityContext": {
            "windowsOptions": {"gmsaCredentialSpec": ["x"]}}}]}},
         "spec.ephemeralContainers[0].securityContext.windowsOptions.gmsaCredentialSpec"),
        ({"spec": "x"}, "spec"),
        ({}, "spec"),
        ({"kind": "Deployment", "spec": {}}, "kind"),
    ],
)
def test_from_manifest_errors(manifest: Manifest, field: str) -> None:
    with pytest.raises(InvalidPodError) as info:
        Pod.from_manifest(manifest)
    assert info.value.field == field
    assert info.value.__cause__ is None or not isinstance(info.value.__cause__, ValidationError)


@pytest.mark.parametrize("value", [None, [], "spec: {}", 3])
def test_from_manifest_non_mapping(value: Any) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        Pod.from_manifest(value)
    assert info.value.argument == "manifest"


def test_snake_case_keys_are_not_manifest_fields() -> None:
    """A manifest is camelCase; the dict reader ignores ``host_network`` as an unknown key,
    so the model built from the same manifest must too."""
    manifest = {"spec": {"host_network": True, "containers": [{"name": "c"}]}}
    assert read_pod(Pod.from_manifest(manifest)) == read_pod(manifest)


def test_python_construction_by_name() -> None:
    pod = Pod(
        spec=PodSpec(
            host_network=True,
            security_context=PodSecurityContext(
                windows_options=WindowsSecurityContextOptions(host_process=True)
            ),
            containers=[Container(name="c", security_context=SecurityContext())],
        )
    )
    got = windows_sandbox_config(pod, feature_gates="WindowsHostNetwork=false")
    assert got.SerializeToString().hex() == "0a021801"


def test_model_is_strict_and_frozen() -> None:
    with pytest.raises(ValidationError):
        PodSpec(host_network="true")  # type: ignore[arg-type]
    spec = PodSpec()
    with pytest.raises(ValidationError):
        spec.host_network = True


def test_unknown_keys_ignored() -> None:
    pod = Pod.from_manifest({"spec": {"dnsPolicy": "None", "containers": [{"name": "c",
                                                                            "image": "x"}]}})
    assert pod.spec.containers is not None
    assert [c.name for c in pod.spec.containers] == ["c"]
