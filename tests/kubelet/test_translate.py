"""The public translation (:mod:`kubelet_winnet._kubelet.translate`): upstream tables row by row,
the kubelet-version axis, totality, round trips and equality across input forms."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import kubelet_winnet
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet import (
    FeatureGateError,
    InvalidArgumentError,
    InvalidPodError,
    SandboxConfigError,
    WinnetError,
    windows_container_security_context,
    windows_sandbox_config,
)
from kubelet_winnet.testing.strategies import as_workload
from tests.strategies import (
    ERR_HOST_NETWORK_REQUIRED,
    ERR_MIXED,
    ERR_POD_HOST_PROCESS_FALSE,
    MINORS,
    WORKLOAD_KINDS,
    Profile,
    deserialize,
    gate_effective,
    json_junk,
    kubelet_profiles,
    oracle_container,
    oracle_sandbox,
    pod_manifests,
    require,
)

Manifest = dict[str, Any]
SC = api_pb2.WindowsSandboxSecurityContext
NS = api_pb2.WindowsNamespaceOption


def pod(spec: Manifest) -> Manifest:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def one_container(**spec: Any) -> Manifest:
    return pod({"containers": [{"name": "c"}], **spec})


def wo(**options: Any) -> Manifest:
    return {"windowsOptions": options}


def translate(manifest: object, profile: Profile | None = None) -> bytes | str:
    """The library's answer in the oracle's terms: bytes, or the kubelet's error text."""
    kwargs: dict[str, Any] = {}
    if profile is not None:
        kwargs = {"kubelet_version": profile.version, "feature_gates": profile.gates}
    try:
        return windows_sandbox_config(manifest, **kwargs).SerializeToString()  # type: ignore[arg-type]
    except SandboxConfigError as e:
        return str(e)


# --- TestGeneratePodSandboxWindowsConfig_HostNetwork (1.26-1.32) -----------------------------

# (gate, hostNetwork, expected message, expected bytes, namespace_options present)
HOST_NETWORK_TABLE = [
    (False, False, api_pb2.WindowsPodSandboxConfig(security_context=SC()), "0a00", False),
    (False, True, api_pb2.WindowsPodSandboxConfig(security_context=SC()), "0a00", False),
    (True, False,
     api_pb2.WindowsPodSandboxConfig(security_context=SC(namespace_options=NS(network=api_pb2.POD))),
     "0a022200", True),
    (True, True,
     api_pb2.WindowsPodSandboxConfig(
         security_context=SC(namespace_options=NS(network=api_pb2.NODE))),
     "0a0422020802", True),
]


@pytest.mark.parametrize("minor", range(26, 33))
@pytest.mark.parametrize(
    ("gate", "host_network", "message", "wire", "present"), HOST_NETWORK_TABLE
)
def test_upstream_host_network_table(
    minor: int, gate: bool, host_network: bool,
    message: api_pb2.WindowsPodSandboxConfig, wire: str, present: bool,
) -> None:
    got = windows_sandbox_config(
        one_container(hostNetwork=host_network),
        kubelet_version=f"1.{minor}",
        feature_gates={"WindowsHostNetwork": gate},
    )
    assert got == message
    assert got.SerializeToString().hex() == wire
    assert got.HasField("security_context")
    assert got.security_context.HasField("namespace_options") is present


# --- TestGeneratePodSandboxWindowsConfig_HostProcess (gate forced off) ----------------------

# (id, manifest, expected message or error text, bytes hex or error rule)
HOST_PROCESS_TABLE: list[tuple[str, Manifest, api_pb2.WindowsPodSandboxConfig | str, str]] = [
    ("empty pod security context", one_container(securityContext={}),
     api_pb2.WindowsPodSandboxConfig(security_context=SC()), "0a00"),
    ("pod GMSA spec only", one_container(securityContext=wo(gmsaCredentialSpec="gmsa spec")),
     api_pb2.WindowsPodSandboxConfig(security_context=SC(credential_spec="gmsa spec")),
     "0a0b1209676d73612073706563"),
    ("pod runAsUserName only", one_container(securityContext=wo(runAsUserName="SYSTEM")),
     api_pb2.WindowsPodSandboxConfig(security_context=SC(run_as_username="SYSTEM")),
     "0a080a0653595354454d"),
    ("pod hostProcess true, container overrides false",
     pod({"hostNetwork": True, "securityContext": wo(hostProcess=True),
          "containers": [{"name": "a"}, {"name": "b", "securityContext": wo(hostProcess=False)}]}),
     ERR_MIXED, "3a"),
    ("pod hostProcess true without hostNetwork",
     one_container(securityContext=wo(hostProcess=True)),
     ERR_HOST_NETWORK_REQUIRED, "3b"),
    ("hostProcess with hostNetwork",
     one_container(hostNetwork=True, securityContext=wo(hostProcess=True)),
     api_pb2.WindowsPodSandboxConfig(security_context=SC(host_process=True)), "0a021801"),
    ("pod false, container true",
     pod({"hostNetwork": True, "securityContext": wo(hostProcess=False),
          "containers": [{"name": "a", "securityContext": wo(hostProcess=True)}]}),
     ERR_POD_HOST_PROCESS_FALSE, "6"),
    ("container-level true only, with hostNetwork",
     pod({"hostNetwork": True,
          "containers": [{"name": "a", "securityContext": wo(hostProcess=True)}]}),
     api_pb2.WindowsPodSandboxConfig(security_context=SC(host_process=True)), "0a021801"),
]


@pytest.mark.parametrize(
    ("manifest", "expected", "detail"),
    [r[1:] for r in HOST_PROCESS_TABLE],
    ids=[r[0] for r in HOST_PROCESS_TABLE],
)
def test_upstream_host_process_table(
    manifest: Manifest, expected: api_pb2.WindowsPodSandboxConfig | str, detail: str
) -> None:
    kwargs: dict[str, Any] = {
        "kubelet_version": "1.32", "feature_gates": "WindowsHostNetwork=false"
    }
    if isinstance(expected, str):
        with pytest.raises(SandboxConfigError) as info:
            windows_sandbox_config(manifest, **kwargs)
        assert str(info.value) == expected
        assert info.value.rule == detail
        return
    got = windows_sandbox_config(manifest, **kwargs)
    assert got == expected
    assert got.SerializeToString().hex() == detail
    assert got.HasField("security_context")
    assert not got.security_context.HasField("namespace_options")


def _pin_tables(f: Any) -> Any:
    for gate, host_network, *_ in HOST_NETWORK_TABLE:
        f = example(
            manifest=one_container(hostNetwork=host_network),
            profile=Profile("1.32", {"WindowsHostNetwork": gate}, 32, gate),
        )(f)
    for _, manifest, *_ in HOST_PROCESS_TABLE:
        f = example(
            manifest=manifest, profile=Profile("1.32", "WindowsHostNetwork=false", 32, False)
        )(f)
    return f


@_pin_tables
@given(manifest=pod_manifests(), profile=kubelet_profiles())
def test_translation_matches_oracle(manifest: Manifest, profile: Profile) -> None:
    """kubelet-rules.md: steps 1-6 on 1.26-1.32 ("If WindowsHostNetwork is enabled: set
    namespace_options"), and "kubelet 1.33+: identical except step 2 is gone"."""
    expected = oracle_sandbox(manifest["spec"], gate_effective(profile.minor, profile.gate))
    assert translate(manifest, profile) == expected


@_pin_tables
@given(manifest=pod_manifests(), profile=kubelet_profiles())
def test_node_only_when_host_network_and_gate_effective(
    manifest: Manifest, profile: Profile
) -> None:
    """ "network = NODE when spec.hostNetwork is true" only while the gate exists and is
    enabled (1.26-1.32); namespace_options present iff the gate is effective."""
    effective = gate_effective(profile.minor, profile.gate)
    try:
        got = windows_sandbox_config(
            manifest, kubelet_version=profile.version, feature_gates=profile.gates
        )
    except SandboxConfigError:
        return
    context = got.security_context
    assert got.HasField("security_context")
    assert context.HasField("namespace_options") is effective
    is_node = context.namespace_options.network == api_pb2.NODE
    assert is_node is (effective and manifest["spec"].get("hostNetwork") is True)


# --- the version axis --------------------------------------------------------------------

@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("gate", [None, True, False])
@pytest.mark.parametrize("spelling", ["1.{m}", "v1.{m}.4", "1.{m}.0"])
def test_version_axis(minor: int, gate: bool | None, spelling: str) -> None:
    """Timeline: 1.26-1.32 alpha default true; 1.33-1.37 deprecated, code path gone;
    1.38 removed: "unrecognized feature gate: WindowsHostNetwork"."""
    version = spelling.format(m=minor)
    gates = None if gate is None else f"WindowsHostNetwork={str(gate).lower()}"
    manifest = one_container(hostNetwork=True)
    if minor >= 38 and gate is not None:
        with pytest.raises(FeatureGateError) as info:
            windows_sandbox_config(manifest, kubelet_version=version, feature_gates=gates)
        assert str(info.value) == "unrecognized feature gate: WindowsHostNetwork"
        return
    got = windows_sandbox_config(manifest, kubelet_version=version, feature_gates=gates)
    if minor <= 32 and gate is not False:
        assert got.SerializeToString() == bytes.fromhex("0a0422020802")
        assert got.security_context.namespace_options.network == api_pb2.NODE
    else:
        assert got.SerializeToString() == bytes.fromhex("0a00")
        assert not got.security_context.HasField("namespace_options")
    assert got.HasField("security_context")


def test_default_profile_is_1_32_gate_on() -> None:
    got = windows_sandbox_config(one_container(hostNetwork=False))
    assert got.security_context.HasField("namespace_options")
    assert got.security_context.namespace_options.network == api_pb2.POD


# --- totality --------------------------------------------------------------------------------

_OUR_ERRORS = (InvalidPodError, InvalidArgumentError, SandboxConfigError)


def _total(value: object, **kwargs: Any) -> None:
    try:
        got = windows_sandbox_config(value, **kwargs)  # type: ignore[arg-type]
    except _OUR_ERRORS:
        return
    assert isinstance(got, api_pb2.WindowsPodSandboxConfig)
    assert got.HasField("security_context")


@given(value=json_junk())
@example(value={"spec": {"securityContext": {"windowsOptions": {"runAsUserName": "\ud800"}}}})
@example(value={"spec": {"securityContext": {"windowsOptions": {"gmsaCredentialSpec": "\udfff"}}}})
@example(value={"kind": "CronJob", "spec": {"jobTemplate": []}})
@example(value={"kind": ["Pod"], "spec": {}})
@example(value=[])
@example(value=None)
def test_totality_on_junk(value: object) -> None:
    """No exception but the library's typed ones escapes, for any input."""
    _total(value)


@given(
    value=st.one_of(
        st.from_type(type).flatmap(st.from_type).filter(lambda v: not isinstance(v, type)),
        st.text(), st.binary(), st.integers(), st.builds(object),
    )
)
@settings(suppress_health_check=list(HealthCheck))
def test_totality_on_arbitrary_objects(value: object) -> None:
    """Any Python object is rejected with InvalidPodError or translated."""
    _total(value)


@given(
    name=st.text(max_size=6), image_username=st.text(max_size=6), data=st.data()
)
@example(name="\ud800", image_username="", data=None)
@example(name="u", image_username="\udc80", data=None)
def test_totality_on_strings_not_utf8_encodable(
    name: str, image_username: str, data: st.DataObject | None
) -> None:
    """Strings decoded from JSON may hold lone surrogates (json.loads('"\\ud800"')); the
    runtime.v1 strings are UTF-8, so such input is rejected as ours, never UnicodeError."""
    manifest = json.loads(json.dumps(
        one_container(securityContext=wo(runAsUserName=name, gmsaCredentialSpec=name))
    ))
    _total(manifest)
    with contextlib.suppress(InvalidPodError):
        windows_container_security_context(manifest, "c", image_username=image_username)
    with contextlib.suppress(InvalidPodError):
        kubelet_winnet.explain(manifest)


# --- serialization ---------------------------------------------------------------------------

@_pin_tables
@given(manifest=pod_manifests(), profile=kubelet_profiles())
def test_serialize_parse_round_trip(manifest: Manifest, profile: Profile) -> None:
    """Presence survives the wire: `namespace_options {network: POD}` is `22 00`."""
    try:
        got = windows_sandbox_config(
            manifest, kubelet_version=profile.version, feature_gates=profile.gates
        )
    except SandboxConfigError:
        return
    wire = got.SerializeToString(deterministic=True)
    back = api_pb2.WindowsPodSandboxConfig.FromString(wire)
    assert back == got
    assert back.SerializeToString(deterministic=True) == wire
    assert back.security_context.HasField("namespace_options") is got.security_context.HasField(
        "namespace_options"
    )
    request = api_pb2.RunPodSandboxRequest()
    request.config.windows.CopyFrom(got)
    parsed = api_pb2.RunPodSandboxRequest.FromString(request.SerializeToString())
    assert parsed.config.windows == got


# --- equality across input forms ---------------------------------------------------------------



@pytest.fixture(scope="module")
def kubernetes_client() -> Any:
    """Outside hypothesis, so a missing client skips the test once, before any example."""
    return require("kubernetes.client")


def _forms(manifest: Manifest) -> list[tuple[str, object]]:
    from kubelet_winnet import Pod

    forms: list[tuple[str, object]] = [
        ("dict", manifest),
        ("V1Pod", deserialize(manifest, "V1Pod")),
        ("model", Pod.from_manifest(manifest)),
    ]
    for kind in WORKLOAD_KINDS:
        forms.append((kind, as_workload(kind, manifest)))
        forms.append((f"V1 {kind}", deserialize(as_workload(kind, manifest), f"V1{kind}")))
    return forms


@pytest.mark.usefixtures("kubernetes_client")
@_pin_tables
@given(manifest=pod_manifests(), profile=kubelet_profiles())
@settings(max_examples=40)
def test_equality_across_input_forms(manifest: Manifest, profile: Profile) -> None:
    """A dict, a V1Pod, our model and every workload kind give identical results."""
    # The kubernetes client requires spec.containers to be a list (null is rejected there).
    manifest = {**manifest, "spec": {**manifest["spec"]}}
    manifest["spec"]["containers"] = manifest["spec"].get("containers") or []
    expected = translate(manifest, profile)
    for name, form in _forms(manifest):
        assert translate(form, profile) == expected, name


@pytest.mark.usefixtures("kubernetes_client")
@given(manifest=pod_manifests(), profile=kubelet_profiles())
@example(
    manifest=pod({"hostNetwork": True, "containers": [{"name": "c"}],
                  "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "x"}}}),
    profile=Profile("1.33", None, 33, None),
)
@settings(max_examples=25)
def test_explain_equal_across_input_forms(manifest: Manifest, profile: Profile) -> None:
    """explain() on any form of the same pod gives the same steps, warnings (with JSON
    paths into that form) and result."""
    manifest = {**manifest, "spec": {**manifest["spec"]}}
    manifest["spec"]["containers"] = manifest["spec"].get("containers") or []
    kwargs: dict[str, Any] = {"kubelet_version": profile.version, "feature_gates": profile.gates}
    by_kind: dict[str, Any] = {}
    for name, form in _forms(manifest):
        got = explain_dict(form, **kwargs)
        kind = name.removeprefix("V1 ")
        kind = "Pod" if kind in ("dict", "V1Pod", "model") else kind
        assert by_kind.setdefault(kind, got) == got, name
    base = by_kind.pop("Pod")
    for kind, got in by_kind.items():
        prefix = ".".join(WORKLOAD_KINDS[kind]) + "."
        for w in got["warnings"]:
            if w["field"].startswith(prefix):
                w["field"] = w["field"].removeprefix(prefix)
        assert got == base, kind


def explain_dict(pod: object, **kwargs: Any) -> dict[str, Any]:
    return kubelet_winnet.explain(pod, **kwargs).to_dict()  # type: ignore[arg-type]


def test_v1pod_built_from_models() -> None:
    client = require("kubernetes.client")

    options = client.V1WindowsSecurityContextOptions(host_process=True, run_as_user_name="SYS")
    v1 = client.V1Pod(
        spec=client.V1PodSpec(
            host_network=True,
            security_context=client.V1PodSecurityContext(windows_options=options),
            init_containers=[client.V1Container(name="i")],
            containers=[client.V1Container(name="c")],
        )
    )
    got = windows_sandbox_config(v1, feature_gates="WindowsHostNetwork=false")
    assert got == api_pb2.WindowsPodSandboxConfig(
        security_context=SC(run_as_username="SYS", host_process=True)
    )


def test_v1pod_wrong_attribute_type_is_invalid_pod_error() -> None:
    client = require("kubernetes.client")

    options = client.V1WindowsSecurityContextOptions.model_construct(host_process="true")
    v1 = client.V1Pod(
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(name="a"),
                client.V1Container(
                    name="b", security_context=client.V1SecurityContext(windows_options=options)
                ),
            ]
        )
    )
    with pytest.raises(InvalidPodError) as info:
        windows_sandbox_config(v1)
    assert info.value.field == "spec.containers[1].securityContext.windowsOptions.hostProcess"


# --- container context -------------------------------------------------------------------------

@given(manifest=pod_manifests(), image_username=st.sampled_from(["", "ContainerUser", "Ädmin"]))
@example(
    manifest=pod({"securityContext": wo(runAsUserName="pod"),
                  "initContainers": [{"name": "i", "securityContext": wo(runAsUserName="init")}],
                  "containers": [{"name": "c"}],
                  "ephemeralContainers": [{"name": "e", "securityContext": wo(hostProcess=True)}]}),
    image_username="img",
)
def test_container_context_matches_oracle(manifest: Manifest, image_username: str) -> None:
    """WindowsContainerSecurityContext for init, regular and ephemeral containers, from the
    effective options; kubelet version does not change it."""
    spec = manifest["spec"]
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(kind) or []:
            expected = oracle_container(spec, container, image_username)
            for version in ("1.26", "1.33", "v1.38.1"):
                got = windows_container_security_context(
                    manifest, container["name"], image_username=image_username,
                    kubelet_version=version,
                )
                assert got.SerializeToString() == expected


def test_container_context_unknown_name() -> None:
    with pytest.raises(InvalidPodError):
        windows_container_security_context(one_container(), "nope")


@pytest.mark.usefixtures("kubernetes_client")
def test_container_context_in_workload_and_v1pod() -> None:
    manifest = pod({
        "hostNetwork": True,
        "securityContext": wo(hostProcess=True, runAsUserName="NT AUTHORITY\\SYSTEM"),
        "initContainers": [{"name": "i", "securityContext": wo(runAsUserName="x")}],
        "containers": [{"name": "c"}],
    })
    expected = api_pb2.WindowsContainerSecurityContext(run_as_username="x", host_process=True)
    for _, form in _forms(manifest):
        assert windows_container_security_context(form, "i") == expected  # type: ignore[arg-type]


def test_public_errors_hierarchy() -> None:
    for cls in (InvalidPodError, SandboxConfigError, FeatureGateError):
        assert issubclass(cls, WinnetError)
        assert issubclass(cls, ValueError)


@given(
    value=json_junk(),
    version=json_junk() | st.sampled_from(["1.25", "2.32", "v1.39", "1.32.x", " 1.32 "]),
    gates=json_junk() | st.sampled_from(["WindowsHostNetwork", "WindowsHostNetwork=yes"]),
    name=json_junk(),
    image_username=json_junk(),
)
def test_totality_all_arguments(
    value: object, version: object, gates: object, name: object, image_username: object
) -> None:
    """Every public function yields its message or one of our errors for any arguments."""
    calls: list[Callable[[], object]] = [
        lambda: windows_sandbox_config(value, kubelet_version=version, feature_gates=gates),  # type: ignore[arg-type]
        lambda: kubelet_winnet.explain(value, kubelet_version=version, feature_gates=gates),  # type: ignore[arg-type]
        lambda: windows_container_security_context(
            value, name, image_username=image_username  # type: ignore[arg-type]
        ),
    ]
    for call in calls:
        with contextlib.suppress(WinnetError):
            call()
