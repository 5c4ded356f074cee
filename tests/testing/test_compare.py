"""``assert_kubelet_request`` / ``diff_kubelet_request``: a received request against the
kubelet's, by proto path, presence included.

Expected values are written from the kubelet rules (kubelet 1.26-1.32 send
``namespace_options``, NODE for hostNetwork; 1.33+ never) and from the proto paths of
cri-api's ``api.proto``, not from the comparison's own output.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.testing import Difference, assert_kubelet_request, diff_kubelet_request

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "labels": {"app": "web"}},
    "spec": {"hostNetwork": True, "containers": [{"name": "iis", "image": "iis:ltsc2022"}]},
}
NS = "config.windows.security_context.namespace_options"


def _sent(minor: int) -> api_pb2.RunPodSandboxRequest:
    return kw.run_pod_sandbox_request(POD, kubelet_version=f"1.{minor}")


@pytest.mark.parametrize("minor", range(26, 39))
def test_the_kubelets_own_request_has_no_difference(minor: int) -> None:
    assert diff_kubelet_request(_sent(minor), POD, kubelet_version=f"1.{minor}") == ()
    assert diff_kubelet_request(_sent(minor).SerializeToString(), POD,
                                kubelet_version=f"1.{minor}") == ()
    assert_kubelet_request(_sent(minor), POD, kubelet_version=f"1.{minor}")


def test_a_dropped_namespace_option_is_named_by_path_with_presence() -> None:
    received = _sent(32)
    received.config.windows.security_context.ClearField("namespace_options")
    with pytest.raises(AssertionError) as caught:
        assert_kubelet_request(received, POD, kubelet_version="1.32")
    assert str(caught.value) == (
        "1 field differs from what kubelet 1.32 sends:\n"
        f"  {NS}: kubelet 1.32 sends network NODE, received <unset>"
    )


def test_an_empty_namespace_option_is_pod_and_present() -> None:
    """Step 2: a pod without hostNetwork gets namespace_options present with network POD
    (zero bytes); a runtime that drops the empty message loses it."""
    pod = {**POD, "spec": {**POD["spec"], "hostNetwork": False}}
    received = kw.run_pod_sandbox_request(pod, kubelet_version="1.26")
    received.config.windows.security_context.ClearField("namespace_options")
    [difference] = diff_kubelet_request(received, pod, kubelet_version="1.26")
    assert (difference.path, difference.expected, difference.received) == (NS, "network POD", None)


def test_a_later_kubelet_never_sends_namespace_options() -> None:
    [difference] = diff_kubelet_request(_sent(26), POD, kubelet_version="1.33")
    assert str(difference) == f"{NS}: kubelet 1.33 sends <unset>, received network NODE"


def test_map_entries_are_compared_by_key() -> None:
    received = _sent(32)
    received.config.labels["app"] = "api"
    received.config.labels["extra"] = "x"
    found = {d.path: (d.expected, d.received) for d in
             diff_kubelet_request(received, POD, kubelet_version="1.32")}
    assert found == {'config.labels["app"]': ('"web"', '"api"'),
                     'config.labels["extra"]': (None, '"x"')}


def test_repeated_fields_by_index_and_scalars_by_value() -> None:
    received = kw.create_container_request(POD, "iis", pod_sandbox_id="sb-9")
    received.config.envs.add(key="EXTRA", value=b"1")
    received.config.windows.security_context.host_process = True
    paths = {d.path: d for d in diff_kubelet_request(received, POD, container="iis")}
    index = len(received.config.envs) - 1
    assert paths[f"config.envs[{index}]"].expected is None
    assert paths[f"config.envs[{index}]"].received == 'key "EXTRA", value "1"'
    assert str(paths["config.windows.security_context.host_process"]).endswith(
        "sends false, received true")


def test_bytes_that_are_not_utf8_read_in_hex() -> None:
    received = kw.create_container_request(POD, "iis", pod_sandbox_id="sb-9")
    received.config.envs.add(key="BLOB", value=b"\xff\xfe")
    paths = {d.path: d for d in diff_kubelet_request(received, POD, container="iis")}
    index = len(received.config.envs) - 1
    assert paths[f"config.envs[{index}]"].received == 'key "BLOB", value bytes ff fe'


def test_the_sandbox_id_is_the_runtimes_and_the_container_is_read_from_the_request() -> None:
    received = kw.create_container_request(POD, "iis", pod_sandbox_id="whatever-the-runtime-said")
    assert diff_kubelet_request(received, POD) == ()


def test_unknown_fields_are_named_by_number() -> None:
    inner = _sent(32)
    inner.config.windows.security_context.ParseFromString(
        inner.config.windows.security_context.SerializeToString() + bytes.fromhex("3a0178"))
    [difference] = diff_kubelet_request(inner, POD, kubelet_version="1.32")
    assert difference.unknown
    assert difference.path == "config.windows.security_context.7"
    assert "field 7, length-delimited, 1 bytes" in str(difference)
    assert "does not define" in str(difference)


def test_a_refused_pod_is_one_difference_with_the_kubelets_text() -> None:
    pod = {**POD, "spec": {**POD["spec"], "hostNetwork": False, "securityContext": {
        "windowsOptions": {"hostProcess": True}}}}
    [difference] = diff_kubelet_request(_sent(32), pod)
    assert difference.path == ""
    assert "hostNetwork is required if Pod contains HostProcess containers" in str(difference)


def test_differences_are_data_and_pickle() -> None:
    received = _sent(32)
    received.config.windows.security_context.ClearField("namespace_options")
    found = diff_kubelet_request(received, POD)
    assert found == (Difference(NS, "network NODE", None, "1.32"),)
    assert pickle.loads(pickle.dumps(found)) == found


def test_patch_releases_are_named_as_given() -> None:
    received = _sent(32)
    received.config.hostname = "other"
    [difference] = diff_kubelet_request(received, POD, kubelet_version="v1.32.4")
    assert str(difference).startswith("config.hostname: kubelet 1.32.4 sends ")


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"received": "not a request"}, kw.InvalidArgumentError, "RunPodSandboxRequest or"),
    ({"received": api_pb2.PodSandboxConfig()}, kw.InvalidArgumentError, "got PodSandboxConfig"),
    ({"received": b"\xff\xff"}, kw.InvalidRequestError, "not a serialized RunPodSandboxRequest"),
    ({"container": 3}, kw.InvalidArgumentError, "container"),
    ({"container": "iis"}, kw.InvalidArgumentError, "None for a RunPodSandboxRequest"),
    ({"kubelet_version": 1.32}, kw.InvalidArgumentError, "float"),
    ({"kubelet_version": "1.25"}, kw.UnsupportedVersionError, "1.26"),
    ({"feature_gates": "WindowsHostNetwork=maybe"}, kw.FeatureGateError, "maybe"),
    ({"kubelet_version": "1.38", "feature_gates": "WindowsHostNetwork=true"},
     kw.FeatureGateError, "unrecognized feature gate: WindowsHostNetwork"),
    ({"node": {"node_name": "x"}}, kw.InvalidArgumentError, "node"),
    ({"pod": {"spec": {"hostNetwork": "true"}}}, kw.InvalidPodError, "spec.hostNetwork"),
    ({"request_options": {"pod_sandbox_id": "x"}}, kw.InvalidArgumentError, "attempt"),
    ({"request_options": ["attempt"]}, kw.InvalidArgumentError, "mapping"),
])
def test_bad_arguments_get_the_librarys_typed_errors(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    arguments: dict[str, Any] = {"received": _sent(32), "pod": POD, **kwargs}
    for function in (diff_kubelet_request, assert_kubelet_request):
        with pytest.raises(error) as caught:
            function(**arguments)
        assert isinstance(caught.value, kw.WinnetError)
        assert words in str(caught.value)


@pytest.mark.parametrize("found", [(), [], "x", ("x",), None])
def test_the_failure_message_of_nothing_is_a_typed_error(found: Any) -> None:
    from kubelet_winnet.testing.compare import failure_message

    with pytest.raises(kw.InvalidArgumentError) as caught:
        failure_message(found)
    assert str(caught.value).startswith("found: expected a non-empty tuple of Difference")
