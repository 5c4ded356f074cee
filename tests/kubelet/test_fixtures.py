"""The project's own manifests (``tests/data/manifests``: CNI, CSI, exporter, IIS, GMSA,
run-as-user and batch workloads written for these tests) translated on kubelet 1.32 and
1.33 and compared with the oracle of tests/strategies.py, so that a plain clone exercises
every sandbox outcome and every workload kind without the published corpus.

What each document is (HostProcess, refused, hostNetwork only, its pod-level user and
credential spec) is written down here from reading the YAML, not from running the library.
"""

from __future__ import annotations

from collections import Counter

import pytest

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet import SandboxConfigError, WarningCode, explain, windows_sandbox_config
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from tests.strategies import (
    ERR_HOST_NETWORK_REQUIRED,
    ERR_MIXED,
    ERR_POD_HOST_PROCESS_FALSE,
    fixture_documents,
    oracle_sandbox,
    spec_of,
)

DOCS = dict(fixture_documents())

# Read from the files: 29 pod-bearing documents, every kind that carries a pod template.
EXPECTED_KINDS = {
    "Pod": 11, "DaemonSet": 10, "Deployment": 2, "StatefulSet": 1, "ReplicaSet": 1,
    "ReplicationController": 1, "Job": 1, "CronJob": 1, "PodTemplate": 1,
}
# Every container HostProcess and hostNetwork: true.
HOST_PROCESS = {
    "batch-hostprocess:windows-update-scan", "batch-hostprocess:prune-images",
    "cni-calico-hostprocess:calico-node-windows", "cni-flannel-hostprocess:flannel-windows",
    "csi-node-hostprocess:csi-smb-node-win", "exporter-hostprocess:windows-exporter",
    "exporter-hostprocess:windows-exporter-alt-port", "legacy-controllers:node-debug-windows",
    "pods-list:windows-exporter-7xk2p",
}
# The kubelet's refusal, in its precedence (mixed first, then hostNetwork, then pod false).
REFUSED = {
    "hostprocess-refused:debug-mixed": ERR_MIXED,
    "hostprocess-refused:debug-no-host-network": ERR_HOST_NETWORK_REQUIRED,
    "hostprocess-refused:debug-pod-says-false": ERR_POD_HOST_PROCESS_FALSE,
    "hostprocess-refused:debug-mixed-no-host-network": ERR_MIXED,
}
# hostNetwork: true without HostProcess: NODE on 1.32, dropped on 1.33.
HOST_NETWORK_ONLY = {
    "cni-wins-legacy:flannel-wins", "legacy-controllers:iis-legacy",
    "node-agent-linux-and-windows:node-agent",
    "node-agent-linux-and-windows:node-agent-windows-hostnet",
}
# Pod-level runAsUserName (the sandbox's run_as_username); container-level ones are not sent.
RUN_AS = {
    "batch-hostprocess:windows-update-scan": "NT AUTHORITY\\SYSTEM",
    "cni-flannel-hostprocess:flannel-windows": "NT AUTHORITY\\SYSTEM",
    "csi-node-hostprocess:csi-smb-node-win": "NT AUTHORITY\\SYSTEM",
    "exporter-hostprocess:windows-exporter": "NT AUTHORITY\\system",
    "exporter-hostprocess:windows-exporter-alt-port": "NT AUTHORITY\\Local service",
    "legacy-controllers:node-debug-windows": "NT AUTHORITY\\SYSTEM",
    "pods-list:windows-exporter-7xk2p": "NT AUTHORITY\\system",
    "run-as-username:run-as-container-user": "ContainerUser",
    "run-as-username:run-as-admin-in-one-container": "ContainerUser",
    "run-as-username-flow:run-as-localized-service": "NT-AUTORITÄT\\Lokaler Dienst",
    "statefulset-sql:sql-win": "ContainerAdministrator",
}
# Pod-level gmsaCredentialSpec contents (the sandbox's credential_spec).
CREDENTIAL_SPEC = {
    "gmsa-pods:gmsa-iis-admitted": "WebApp01",
    "statefulset-sql:sql-win": "SqlSvc",
}


def test_fixture_counts_and_coverage() -> None:
    assert Counter(doc["kind"] for doc in DOCS.values()) == EXPECTED_KINDS
    # Every kind the library reads a pod template from, and the Pod itself.
    assert set(EXPECTED_KINDS) == {"Pod", *WORKLOAD_TEMPLATE_PATHS}
    assert set(DOCS) >= HOST_PROCESS | set(REFUSED) | HOST_NETWORK_ONLY | set(RUN_AS)
    # Each of the kubelet's three refusals.
    assert set(REFUSED.values()) == {ERR_MIXED, ERR_HOST_NETWORK_REQUIRED,
                                     ERR_POD_HOST_PROCESS_FALSE}


@pytest.mark.parametrize("key", sorted(DOCS))
@pytest.mark.parametrize(("version", "effective"), [("1.32", True), ("1.33", False)])
def test_fixture_document(key: str, version: str, effective: bool) -> None:
    doc = DOCS[key]
    expected = oracle_sandbox(spec_of(doc), effective)
    try:
        got: bytes | str = windows_sandbox_config(doc, kubelet_version=version).SerializeToString()
    except SandboxConfigError as e:
        got = str(e)
    assert got == expected
    if key in REFUSED:
        assert got == REFUSED[key]
        return
    assert isinstance(got, bytes)
    context = api_pb2.WindowsPodSandboxConfig.FromString(got).security_context
    assert context.host_process is (key in HOST_PROCESS)
    # 1.26-1.32: namespace_options on every pod, NODE or POD; 1.33 on: never.
    assert context.HasField("namespace_options") is effective
    node = context.namespace_options.network == api_pb2.NODE
    assert node is (effective and (key in HOST_PROCESS or key in HOST_NETWORK_ONLY))
    assert context.run_as_username == RUN_AS.get(key, "")
    if key in CREDENTIAL_SPEC:
        assert f'"MachineAccountName":"{CREDENTIAL_SPEC[key]}"' in context.credential_spec
    else:
        assert context.credential_spec == ""


def test_every_namespace_outcome_is_exercised() -> None:
    """NODE, POD (present, zero bytes) and no namespace_options, from the tables above."""
    accepted = set(DOCS) - set(REFUSED)
    assert HOST_PROCESS | HOST_NETWORK_ONLY  # NODE on 1.32
    assert accepted - HOST_PROCESS - HOST_NETWORK_ONLY  # POD on 1.32
    assert accepted  # no namespace_options on 1.33


@pytest.mark.parametrize("key", sorted(HOST_NETWORK_ONLY))
def test_host_network_only_warnings(key: str) -> None:
    on_32 = {w.code for w in explain(DOCS[key], kubelet_version="1.32").warnings}
    on_33 = {w.code for w in explain(DOCS[key], kubelet_version="1.33").warnings}
    assert WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS in on_32
    assert WarningCode.HOST_NETWORK_WITHDRAWN in on_33
