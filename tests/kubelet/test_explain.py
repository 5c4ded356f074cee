"""``explain``: steps in the kubelet's order naming the rules, and every warning it gives
(hostNetwork dropped, containerd ignores namespace_options, GMSA spec missing,
feature gates not modelled, deprecated-gate log line)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet import SandboxConfigError, WarningCode, explain, windows_sandbox_config
from kubelet_winnet.testing.strategies import as_workload
from tests.strategies import (
    ERR_HOST_NETWORK_REQUIRED,
    ERR_MIXED,
    ERR_POD_HOST_PROCESS_FALSE,
    MINORS,
    WORKLOAD_KINDS,
    Profile,
    gate_effective,
    kubelet_profiles,
    oracle_sandbox,
    pod_manifests,
)

Manifest = dict[str, Any]
NETWORK_CODES = {
    WarningCode.HOST_NETWORK_GATE_OFF,
    WarningCode.HOST_NETWORK_WITHDRAWN,
    WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS,
}
# Step ids of _rules.STEPS by their position in generatePodSandboxWindowsConfig.
_ORDER = {
    "1": 1, "2": 2, "2.off": 2, "3": 3, "3.none": 3, "3a": 3, "3b": 3, "4": 4, "5": 5, "6": 6,
}


def _host_process_sent(expected: bytes | str) -> bool:
    if isinstance(expected, str):
        return False
    return api_pb2.WindowsPodSandboxConfig.FromString(expected).security_context.host_process


def _pin(f: Any) -> Any:
    one = {"name": "c"}
    hp = {"name": "c", "securityContext": {"windowsOptions": {"hostProcess": True}}}
    cases = [
        ({"spec": {"hostNetwork": True, "containers": [one]}}, "1.32", None, 32, None),
        ({"spec": {"hostNetwork": True, "containers": [one]}}, "1.32", "WindowsHostNetwork=false",
         32, False),
        ({"spec": {"hostNetwork": True, "containers": [one]}}, "1.33", None, 33, None),
        ({"spec": {"hostNetwork": True, "containers": [hp]}}, "1.32", None, 32, None),
        ({"spec": {"hostNetwork": False, "containers": [hp]}}, "1.38", None, 38, None),
    ]
    for manifest, version, gates, minor, gate in cases:
        f = example(manifest=manifest, profile=Profile(version, gates, minor, gate))(f)
    return f


@_pin
@given(manifest=pod_manifests(), profile=kubelet_profiles())
def test_explain_agrees_with_translation_and_orders_steps(
    manifest: Manifest, profile: Profile
) -> None:
    """Steps follow generatePodSandboxWindowsConfig in order ("Order of operations"); a
    refusal is returned with .config None and .error the kubelet's text."""
    kwargs: dict[str, Any] = {"kubelet_version": profile.version, "feature_gates": profile.gates}
    got = explain(manifest, **kwargs)
    expected = oracle_sandbox(manifest["spec"], gate_effective(profile.minor, profile.gate))
    rules = [s.rule for s in got.steps]
    assert rules[0] == "gates"
    assert rules[1] == "1"
    assert rules[2] == ("2" if gate_effective(profile.minor, profile.gate) else "2.off")
    positions = [_ORDER[r] for r in rules[1:]]
    assert positions == sorted(positions)
    assert all(s.text for s in got.steps)
    if isinstance(expected, str):
        assert got.config is None
        assert isinstance(got.error, SandboxConfigError)
        assert str(got.error) == expected
        assert rules[-1] == got.error.rule
        with pytest.raises(SandboxConfigError):
            windows_sandbox_config(manifest, **kwargs)
    else:
        assert got.error is None
        assert got.config is not None
        assert got.config.SerializeToString() == expected
        assert got.config == windows_sandbox_config(manifest, **kwargs)


@_pin
@given(manifest=pod_manifests(), profile=kubelet_profiles())
def test_network_warnings(manifest: Manifest, profile: Profile) -> None:
    """A warning for every case where the pod asks for hostNetwork: true but will not reach
    the runtime as NODE (gate off, kubelet >= 1.33), and that containerd ignores
    namespace_options for non-HostProcess pods; HostProcess pods get the host network."""
    got = explain(manifest, kubelet_version=profile.version, feature_gates=profile.gates)
    effective = gate_effective(profile.minor, profile.gate)
    expected = oracle_sandbox(manifest["spec"], effective)
    codes = [w.code for w in got.warnings if w.code in NETWORK_CODES]
    asks = manifest["spec"].get("hostNetwork") is True
    if not asks or isinstance(expected, str) or _host_process_sent(expected):
        assert codes == []
    elif effective:
        assert codes == [WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS]
    elif profile.minor <= 32:
        assert codes == [WarningCode.HOST_NETWORK_GATE_OFF]
    else:
        assert codes == [WarningCode.HOST_NETWORK_WITHDRAWN]
    for w in got.warnings:
        if w.code in NETWORK_CODES:
            assert w.field == "spec.hostNetwork"
            assert w.message


@pytest.mark.parametrize("kind", list(WORKLOAD_KINDS))
def test_network_warning_field_in_workloads(kind: str) -> None:
    manifest = as_workload(kind, {"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}})
    got = explain(manifest, kubelet_version="1.33")
    (warning,) = [w for w in got.warnings if w.code in NETWORK_CODES]
    assert warning.field == ".".join(WORKLOAD_KINDS[kind]) + ".spec.hostNetwork"


@pytest.mark.parametrize("version", ["1.26", "1.32", "1.33", "1.37", "1.38"])
def test_no_network_warning_for_host_process_pod(version: str) -> None:
    manifest = {"spec": {"hostNetwork": True, "securityContext": {
        "windowsOptions": {"hostProcess": True}}, "containers": [{"name": "c"}]}}
    got = explain(manifest, kubelet_version=version)
    assert got.config is not None
    assert got.config.security_context.host_process
    assert not [w for w in got.warnings if w.code in NETWORK_CODES]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "webapp1"}},
          "containers": [{"name": "c"}]},
         "spec.securityContext.windowsOptions.gmsaCredentialSpecName"),
        ({"containers": [{"name": "a"}, {"name": "c", "securityContext": {
            "windowsOptions": {"gmsaCredentialSpecName": "webapp1"}}}]},
         "spec.containers[1].securityContext.windowsOptions.gmsaCredentialSpecName"),
        ({"initContainers": [{"name": "i", "securityContext": {
            "windowsOptions": {"gmsaCredentialSpecName": "webapp1"}}}]},
         "spec.initContainers[0].securityContext.windowsOptions.gmsaCredentialSpecName"),
    ],
)
def test_gmsa_name_without_spec_warns(spec: Manifest, field: str) -> None:
    got = explain({"spec": spec})
    gmsa = [w for w in got.warnings if w.code == WarningCode.GMSA_SPEC_MISSING]
    assert [w.field for w in gmsa] == [field]
    assert "webapp1" in gmsa[0].message


def test_gmsa_name_with_spec_does_not_warn() -> None:
    spec = {"securityContext": {"windowsOptions": {
        "gmsaCredentialSpecName": "webapp1", "gmsaCredentialSpec": "{}"}}}
    got = explain({"spec": spec})
    assert not [w for w in got.warnings if w.code == WarningCode.GMSA_SPEC_MISSING]
    assert got.config is not None
    assert got.config.security_context.credential_spec == "{}"


@pytest.mark.parametrize("gates", ["Foo=true", {"Foo": True}, "WindowsHostNetwork=true,Foo=false"])
def test_unmodelled_gates_reported(gates: object) -> None:
    got = explain({"spec": {}}, feature_gates=gates)  # type: ignore[arg-type]
    notes = [w for w in got.warnings if w.code == WarningCode.FEATURE_GATE_NOT_MODELLED]
    assert len(notes) == 1
    assert "Foo" in notes[0].message


def test_modelled_gates_not_reported() -> None:
    got = explain({"spec": {}}, feature_gates="WindowsHostNetwork=true")
    assert not [w for w in got.warnings if w.code == WarningCode.FEATURE_GATE_NOT_MODELLED]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("value", [True, False, None])
def test_deprecated_gate_log_line(minor: int, value: bool | None) -> None:
    """ "setting a deprecated gate only logs `Setting deprecated feature gate NAME=VALUE. It
    will be removed in a future release.`" (1.33-1.37)."""
    if minor >= 38 and value is not None:
        return  # an error on 1.38, tested in test_translate
    gates = None if value is None else {"WindowsHostNetwork": value}
    got = explain({"spec": {}}, kubelet_version=f"1.{minor}", feature_gates=gates)
    lines = [w.message for w in got.warnings if w.code == WarningCode.DEPRECATED_FEATURE_GATE]
    if 33 <= minor <= 37 and value is not None:
        assert lines == [
            f"Setting deprecated feature gate WindowsHostNetwork={str(value).lower()}. "
            "It will be removed in a future release."
        ]
    else:
        assert lines == []


@pytest.mark.parametrize(
    ("spec", "text", "rule"),
    [
        ({"hostNetwork": True, "containers": [
            {"name": "a", "securityContext": {"windowsOptions": {"hostProcess": True}}},
            {"name": "b"}]}, ERR_MIXED, "3a"),
        ({"containers": [{"name": "a", "securityContext": {"windowsOptions": {
            "hostProcess": True}}}]}, ERR_HOST_NETWORK_REQUIRED, "3b"),
        ({"hostNetwork": True, "securityContext": {"windowsOptions": {"hostProcess": False}},
          "containers": [{"name": "a", "securityContext": {"windowsOptions": {
              "hostProcess": True}}}]}, ERR_POD_HOST_PROCESS_FALSE, "6"),
    ],
)
def test_error_case(spec: Manifest, text: str, rule: str) -> None:
    got = explain({"spec": spec})
    assert got.config is None
    assert got.error is not None
    assert str(got.error) == text
    assert got.error.rule == rule
    assert got.steps[-1].rule == rule
    as_dict = got.to_dict()
    assert as_dict["error"] == text
    assert as_dict["windowsPodSandboxConfig"] is None


def test_to_dict_keeps_presence() -> None:
    got = explain({"spec": {"containers": [{"name": "c"}]}}, kubelet_version="1.32")
    assert got.to_dict()["windowsPodSandboxConfig"] == {
        "securityContext": {"namespaceOptions": {}}
    }


# --- the words of the steps ---------------------------------------------------------------


@pytest.mark.parametrize(("options", "copied"), [
    # kuberuntime_sandbox.go, generatePodSandboxWindowsConfig: with pod-level
    # windowsOptions, GMSACredentialSpec -> credential_spec and RunAsUserName ->
    # run_as_username, each only when set. The text says which were there to copy.
    ({"runAsUserName": "u", "gmsaCredentialSpec": "{}"},
     "copied runAsUserName and gmsaCredentialSpec"),
    ({"runAsUserName": "u"}, "copied runAsUserName (gmsaCredentialSpec is not set)"),
    ({"runAsUserName": "u", "gmsaCredentialSpecName": "webapp"},
     "copied runAsUserName (gmsaCredentialSpec is not set)"),
    ({"gmsaCredentialSpec": "{}"}, "copied gmsaCredentialSpec (runAsUserName is not set)"),
    ({"hostProcess": False},
     "neither runAsUserName nor gmsaCredentialSpec is set: nothing copied"),
    ({"gmsaCredentialSpecName": "webapp"},
     "neither runAsUserName nor gmsaCredentialSpec is set: nothing copied"),
])
def test_step_5_says_what_was_copied(options: dict[str, Any], copied: str) -> None:
    got = explain({"spec": {"securityContext": {"windowsOptions": options},
                            "containers": [{"name": "c"}]}})
    (step,) = [s for s in got.steps if s.rule == "5"]
    assert step.text == f"pod-level windowsOptions: {copied}"
    assert got.config is not None
    context = got.config.security_context  # the text agrees with what is sent
    assert context.run_as_username == options.get("runAsUserName", "")
    assert context.credential_spec == options.get("gmsaCredentialSpec", "")


def test_step_5_of_a_pod_refused_at_step_6_names_what_it_copied_first() -> None:
    """Step 5 copies before step 6 refuses (the same if block of the kubelet)."""
    got = explain({"spec": {
        "hostNetwork": True,
        "securityContext": {"windowsOptions": {"hostProcess": False, "runAsUserName": "u"}},
        "containers": [{"name": "c", "securityContext": {"windowsOptions": {
            "hostProcess": True}}}],
    }})
    assert got.error is not None
    assert [(s.rule, s.text) for s in got.steps if s.rule in ("5", "6")] == [
        ("5", "pod-level windowsOptions: copied runAsUserName (gmsaCredentialSpec is not set)"),
        ("6", f"error: {ERR_POD_HOST_PROCESS_FALSE}"),
    ]


@pytest.mark.parametrize("minor", MINORS)
def test_the_gate_step_says_a_release_candidate_is_one(minor: int) -> None:
    """As of 2026-12-04 1.38 is a release candidate due 2026-12-16; 1.26-1.37 are out
    (admission-and-distribution.md): said once, in the step that names the version."""
    got = explain({"spec": {"containers": [{"name": "c"}]}}, kubelet_version=f"1.{minor}")
    gates = got.steps[0]
    assert gates.rule == "gates"
    # the 1.38 schedule (rc.0 2026-12-02, .0 2026-12-16); CHANGELOG-1.38.md: alpha.2
    rc = ("(a release candidate by the schedule (rc.0 2026-12-02), due 2026-12-16; the "
          "newest pre-release seen is v1.38.0-alpha.2)")
    if minor == 38:
        assert gates.text == f"kubelet 1.38 {rc}: WindowsHostNetwork no longer exists"
    else:
        assert gates.text.startswith(f"kubelet 1.{minor}: ")
        assert "release candidate" not in gates.text
    assert sum("release candidate" in s.text for s in got.steps) == (minor == 38)
