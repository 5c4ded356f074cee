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
