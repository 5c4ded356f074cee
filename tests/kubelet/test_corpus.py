"""Every Pod and workload of ``../shared/corpus/*.yaml`` (real published Windows manifests)
translated on kubelet 1.32 and 1.33 and compared with the oracle of tests/strategies.py.

The corpus is read-only input (CI keeps a read-only copy beside the clone); nothing is
written there. Where it is absent the module skips with tests/conftest.py's one reason
(a failure under CI); tests/kubelet/test_fixtures.py runs the same checks over the
project's own manifests. Which documents are HostProcess is written down here from
reading the YAML (and SOURCES.md), not from running the library.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest
import yaml

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet import SandboxConfigError, WarningCode, explain, windows_sandbox_config
from tests.strategies import (
    CORPUS,
    ERR_HOST_NETWORK_REQUIRED,
    ERR_MIXED,
    WORKLOAD_KINDS,
    corpus_params,
    oracle_sandbox,
    spec_of,
)

pytestmark = pytest.mark.corpus

POD_KINDS = ("Pod", *WORKLOAD_KINDS)

# Read from the files: 61 pod-bearing documents.
EXPECTED_KINDS = {"Pod": 20, "DaemonSet": 18, "Deployment": 15, "CronJob": 6, "Job": 2}

# Documents whose every container is HostProcess and that set hostNetwork: true.
HOST_PROCESS = {
    "01:calico-node-windows", "02:kube-proxy-windows", "03:kube-flannel-ds-windows-amd64",
    "04:csi-proxy", "07:windows-exporter", "10:integration-test", "11:csi-azuredisk-node-win",
    "14:csi-azurefile-node-win", "16:calico-node-windows", "19:windows-debug",
    "20:windows-updates", "22:hpc-com-app", "24:windowshostprocess0", "25:windowshostprocess1",
    "26:windowshostprocess0", "28:badpod01", "28:badpod02", "28:badpod03", "28:badpod04",
    "28:badpod05", "29:baddeployment01", "29:baddeployment02", "29:baddeployment03",
    "29:baddeployment04", "29:baddeployment05", "29:badcronjob01", "29:badcronjob02",
    "29:badcronjob03", "29:badcronjob04", "29:badcronjob05", "30:bad-windows-pod",
    "35:configure-node", "36:wcnspect-server", "37:device-plugin-mcdm",
    "37:device-plugin-wddm", "39:albums-win-hp-app-hostprocess",
    "40:addon-sync-ADDON_NAME_PLACEHOLDER",
}
# Kyverno fixtures the kubelet refuses (mixed HostProcess, or HostProcess without hostNetwork).
REFUSED = {
    "28:badpod01-new": ERR_MIXED,
    "28:badpod02-new": ERR_HOST_NETWORK_REQUIRED,
    "28:badpod03-new": ERR_MIXED,
    "29:baddeployment01-new": ERR_MIXED,
    "29:badcronjob01-new": ERR_MIXED,
}
# hostNetwork: true without HostProcess: NODE on 1.32, dropped on 1.33.
HOST_NETWORK_ONLY = {"06:kube-flannel-ds-windows-amd64", "15:cloud-node-manager"}


@cache
def corpus_documents() -> tuple[tuple[str, dict[str, Any]], ...]:
    assert CORPUS.is_dir(), f"corpus missing at {CORPUS} (shared/ must sit beside the clone)"
    files = sorted(CORPUS.glob("*.yaml"))
    assert len(files) == 40, files
    out = []
    for path in files:
        with path.open(encoding="utf-8") as fh:
            for doc in yaml.safe_load_all(fh):
                if isinstance(doc, dict) and doc.get("kind") in POD_KINDS:
                    out.append((f"{path.name[:2]}:{doc['metadata']['name']}", doc))
    return tuple(out)


def test_corpus_counts() -> None:
    docs = corpus_documents()
    assert Counter(doc["kind"] for _, doc in docs) == EXPECTED_KINDS
    assert len(docs) == 61
    keys = {key for key, _ in docs}
    assert len(keys) == 61
    assert keys >= HOST_PROCESS | set(REFUSED) | HOST_NETWORK_ONLY
    assert len(HOST_PROCESS) == 37


@pytest.mark.parametrize("key", corpus_params(lambda: ((k, k) for k, _ in corpus_documents())))
@pytest.mark.parametrize(("version", "effective"), [("1.32", True), ("1.33", False)])
def test_corpus_document(key: str, version: str, effective: bool) -> None:
    doc = dict(corpus_documents())[key]
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
    message = api_pb2.WindowsPodSandboxConfig.FromString(got)
    context = message.security_context
    assert context.host_process is (key in HOST_PROCESS)
    assert context.HasField("namespace_options") is effective
    node = context.namespace_options.network == api_pb2.NODE
    assert node is (effective and (key in HOST_PROCESS or key in HOST_NETWORK_ONLY))


@pytest.mark.parametrize("key", sorted(HOST_NETWORK_ONLY))
def test_corpus_host_network_only_warnings(key: str) -> None:
    doc = dict(corpus_documents())[key]
    on_32 = {w.code for w in explain(doc, kubelet_version="1.32").warnings}
    on_33 = {w.code for w in explain(doc, kubelet_version="1.33").warnings}
    assert WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS in on_32
    assert WarningCode.HOST_NETWORK_WITHDRAWN in on_33


def test_corpus_run_as_user_names() -> None:
    """Spot checks read from the YAML: pod-level runAsUserName reaches run_as_username."""
    docs = dict(corpus_documents())
    got = windows_sandbox_config(docs["30:bad-windows-pod"], kubelet_version="1.33")
    assert got.security_context.run_as_username == "NT AUTHORITY\\Local service"
    got = windows_sandbox_config(docs["09:run-as-username-pod-demo"], kubelet_version="1.33")
    assert got.security_context.run_as_username == "ContainerUser"
