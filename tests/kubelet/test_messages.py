"""``_kubelet/messages.py``: the messages built from decisions, and their JSON form."""

from __future__ import annotations

import json
from itertools import permutations

import pytest

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.messages import message_json

# WindowsSandboxSecurityContext (api.proto): run_as_username = 1, credential_spec = 2,
# host_process = 3, namespace_options = 4.
FIELD_ORDER = ["runAsUsername", "credentialSpec", "hostProcess", "namespaceOptions"]


def _set(order: tuple[str, ...]) -> api_pb2.WindowsPodSandboxConfig:
    config = api_pb2.WindowsPodSandboxConfig()
    context = config.security_context
    for name in order:
        if name == "runAsUsername":
            context.run_as_username = "ContainerUser"
        elif name == "credentialSpec":
            context.credential_spec = "{}"
        elif name == "hostProcess":
            context.host_process = True
        else:
            context.namespace_options.network = api_pb2.NODE
    return config


@pytest.mark.parametrize("order", list(permutations(FIELD_ORDER)))
def test_json_keys_follow_field_numbers_whatever_order_they_were_set_in(
    order: tuple[str, ...],
) -> None:
    """Two pods with the same fields print them in the same order (upb lists fields in
    the order they were set: the same config read differently came out reordered)."""
    shown = message_json(_set(order))
    assert list(shown) == ["securityContext"]
    assert list(shown["securityContext"]) == FIELD_ORDER
    assert shown["securityContext"]["namespaceOptions"] == {"network": "NODE"}


def test_with_defaults_shows_zero_fields_in_the_same_order() -> None:
    config = api_pb2.WindowsPodSandboxConfig()
    config.security_context.namespace_options.network = api_pb2.POD
    shown = message_json(config, with_defaults=True)
    assert list(shown["securityContext"]) == FIELD_ORDER
    assert shown["securityContext"]["hostProcess"] is False
    assert shown["securityContext"]["namespaceOptions"] == {"network": "POD"}
    # without defaults only what has presence or a non-zero value
    assert message_json(config) == {"securityContext": {"namespaceOptions": {}}}


def test_maps_and_repeated_messages_keep_their_contents() -> None:
    config = api_pb2.ContainerConfig()
    config.labels["b"] = "2"
    config.labels["a"] = "1"
    mount = config.mounts.add()
    mount.host_path = "C:\\h"
    mount.container_path = "C:\\c"
    config.metadata.name = "app"
    shown = message_json(config)
    assert shown["labels"] == {"a": "1", "b": "2"}
    assert shown["mounts"] == [{"containerPath": "C:\\c", "hostPath": "C:\\h"}]
    # ContainerConfig: metadata = 1, mounts = 7, labels = 9; Mount: container_path = 1,
    # host_path = 2 (set here in the other order)
    assert list(shown) == ["metadata", "mounts", "labels"]
    assert list(shown["mounts"][0]) == ["containerPath", "hostPath"]
    assert json.loads(json.dumps(shown)) == shown


# --- each release's cri-api in JSON -----------------------------------------------------

def _config(value: bytes) -> api_pb2.ContainerConfig:
    return api_pb2.ContainerConfig(envs=[api_pb2.KeyValue(key="K", value=value)],
                                   stop_signal=api_pb2.SIGNAL_SIGKILL)


@pytest.mark.parametrize(("version", "value", "signal"), [
    # KeyValue.value was a string: its JSON is the text (Go's encoding/json and protojson
    # alike), a byte that is not UTF-8 as U+FFFD.
    ("1.33", "p\ufffdw", "SIGKILL"), ("1.34.8", "p\ufffdw", "SIGKILL"),
    ("1.35.5", "p\ufffdw", "SIGKILL"), ("1.36.1", "p\ufffdw", "SIGKILL"),
    # bytes value = 2 (cri-api a544ba3, 48b4f42, 5f84746, d3d9c71): standard base64 with
    # padding, as protojson and encoding/json write a []byte; "p", ff, "w" is cP93.
    ("1.34.9", "cP93", "SIGKILL"), ("1.35.6", "cP93", "SIGKILL"),
    ("1.36.2", "cP93", "SIGKILL"), ("1.36", "cP93", "SIGKILL"),
    # cri-api 044b7de: SIGKILL = 13 became SIGNAL_SIGKILL = 13 (1.37 on).
    ("1.37.0", "cP93", "SIGNAL_SIGKILL"), ("1.38", "cP93", "SIGNAL_SIGKILL"),
])
def test_json_is_that_of_the_releases_cri_api(version: str, value: str, signal: str) -> None:
    from kubelet_winnet import parse_kubelet_version

    shown = message_json(_config(b"p\xffw"), kubelet=parse_kubelet_version(version))
    assert shown == {"envs": [{"key": "K", "value": value}], "stopSignal": signal}


def test_json_without_a_release_is_the_newest_cri_api() -> None:
    assert message_json(_config(b"pw")) == {
        "envs": [{"key": "K", "value": "cHc="}], "stopSignal": "SIGNAL_SIGKILL",
    }


def test_an_unknown_signal_number_stays_a_number_in_every_release() -> None:
    from kubelet_winnet import parse_kubelet_version

    config = api_pb2.ContainerConfig(stop_signal=99)  # type: ignore[arg-type]
    assert message_json(config, kubelet=parse_kubelet_version("1.33")) == {"stopSignal": 99}
