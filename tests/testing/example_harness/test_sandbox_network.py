"""A runtime's sandbox network against the exact requests of kubelet 1.26 to 1.38.

Every cell of the decision table in which the kubelet sends a sandbox (each pod kind,
kubelet minor and WindowsHostNetwork setting) becomes one RunPodSandbox. The test
sends the request that kubelet sends and checks the sandbox's address: a runtime that
follows KEP-3503 puts the sandbox on the node's network when the request says NODE or
the pod is HostProcess, and on a pod network otherwise.

By default the runtime is kubelet-winnet's FakeRuntime. To test your own runtime, set
CRI_ENDPOINT to its unix:// socket and NODE_IP to the node's address.
"""

from __future__ import annotations

import os

import pytest

import kubelet_winnet as kw
from kubelet_winnet.cri import RuntimeClient
from kubelet_winnet.testing import DecisionRow, FakeRuntime, decision_table

SENT = [row for row in decision_table() if row.cell.outcome == "sent"]


@pytest.fixture
def runtime(fake_cri_runtime: FakeRuntime) -> tuple[str, str]:
    """The endpoint under test and the node's address."""
    endpoint = os.environ.get("CRI_ENDPOINT")
    if endpoint:
        return endpoint, os.environ["NODE_IP"]
    return fake_cri_runtime.endpoint, fake_cri_runtime.node_ip


@pytest.mark.parametrize("row", SENT, ids=[row.id for row in SENT])
def test_the_sandbox_gets_the_network_the_kubelet_asks_for(
    row: DecisionRow, runtime: tuple[str, str]
) -> None:
    endpoint, node_ip = runtime
    # The API server gives every pod a uid; the kubelet never sends a sandbox without one.
    pod = {**row.manifest, "metadata": {"name": row.pod, "namespace": "default",
                                        "uid": f"uid-{row.id}"}}
    request = kw.run_pod_sandbox_request(
        pod, kubelet_version=row.cell.kubelet, feature_gates=row.feature_gates)
    wants_node = row.cell.network == "NODE" or row.cell.host_process
    with RuntimeClient(endpoint) as client:
        sandbox = client.run_pod_sandbox(request).pod_sandbox_id
        try:
            ip = client.pod_sandbox_status(sandbox).status.network.ip
        finally:
            client.stop_pod_sandbox(sandbox)
            client.remove_pod_sandbox(sandbox)
    options = request.config.windows.security_context
    sent = (f"namespace_options network "
            f"{'NODE' if options.namespace_options.network else 'POD'}"
            if options.HasField("namespace_options") else "no namespace_options")
    wanted = f"the node's network ({node_ip})" if wants_node else "a pod network"
    assert (ip == node_ip) == wants_node, (
        f"kubelet {row.cell.kubelet} sent {sent}"
        f"{' for a HostProcess pod' if row.cell.host_process else ''}; "
        f"the sandbox should be on {wanted}, but its address is {ip}")
