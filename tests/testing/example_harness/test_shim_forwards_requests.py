"""A CRI shim's own suite: what reaches the runtime behind it is what the kubelet sent.

The code under test is ``Shim``, a stand-in for a Windows CRI shim or a node agent
that sits between the kubelet and the runtime and forwards sandbox and container
requests. Hypothesis draws Windows pods the API server admits and the kubelet
accepts, every supported kubelet release and the feature-gate spellings it takes; the
kubelet's request for each is sent through the shim to a FakeRuntime, and the request
the runtime received is compared, field by field, with the one that kubelet sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cri import RuntimeClient
from kubelet_winnet.testing import FakeRuntime, assert_kubelet_request
from kubelet_winnet.testing.strategies import (
    CONFIG_MAPS,
    RUNTIME_CLASSES,
    SECRETS,
    feature_gates,
    kubelet_versions,
    windows_pods,
)

# The cluster the pods run in: RuntimeClass names and their containerd handlers.
NODE = kw.NodeContext(runtime_handlers=dict(RUNTIME_CLASSES))


class Shim:
    """The code under test: decodes each request as its own copy and forwards it."""

    def __init__(self, backend: RuntimeClient) -> None:
        self.backend = backend

    def run_pod_sandbox(self, data: bytes) -> str:
        request = api_pb2.RunPodSandboxRequest.FromString(data)
        return self.backend.run_pod_sandbox(request).pod_sandbox_id

    def create_container(self, data: bytes) -> str:
        request = api_pb2.CreateContainerRequest.FromString(data)
        return self.backend.create_container(request).container_id


@pytest.fixture(scope="module")
def runtime() -> Iterator[FakeRuntime]:
    with FakeRuntime() as fake:
        yield fake


@settings(max_examples=50, deadline=None)
@given(pod=windows_pods(accepted=True), version=kubelet_versions(), data=st.data())
def test_the_runtime_receives_what_the_kubelet_sends(
    runtime: FakeRuntime, pod: dict[str, Any], version: str, data: st.DataObject
) -> None:
    gates = data.draw(feature_gates(kubelet_version=version), label="feature_gates")
    runtime.reset()
    sandbox_request = kw.run_pod_sandbox_request(
        pod, kubelet_version=version, feature_gates=gates, node=NODE)
    container = pod["spec"]["containers"][0]["name"]
    with RuntimeClient(runtime.endpoint) as client:
        shim = Shim(client)
        sandbox = shim.run_pod_sandbox(sandbox_request.SerializeToString())
        container_request = kw.create_container_request(
            pod, container, pod_sandbox_id=sandbox, kubelet_version=version,
            feature_gates=gates, node=NODE, config_maps=CONFIG_MAPS, secrets=SECRETS)
        shim.create_container(container_request.SerializeToString())

    [received_sandbox] = runtime.requests("RunPodSandbox")
    assert_kubelet_request(received_sandbox, pod, kubelet_version=version,
                           feature_gates=gates, node=NODE)
    [received_container] = runtime.requests("CreateContainer")
    assert_kubelet_request(received_container, pod, kubelet_version=version,
                           feature_gates=gates, node=NODE,
                           request_options={"config_maps": CONFIG_MAPS, "secrets": SECRETS})
