"""End to end over tests/data/manifests and the shared corpus, under both runtime
policies.

manifest -> ``kubelet_winnet.windows_sandbox_config`` -> ``RunPodSandboxRequest`` bytes ->
``plan_sandbox_network`` -> ``SandboxNetworks`` on ``InMemoryHcn``.

The expected outcome of each step is computed here from the kubelet rules as restated in
``shared/reference/kubelet-rules.md`` (``generatePodSandboxWindowsConfig``, steps 2, 3a,
3b and 6; effective HostProcess per container) and the two runtime rules in
``shared/reference/cri-and-hcn.md``, never by running the library's own rules:

* the kubelet sets ``namespace_options`` iff it is 1.26-1.32 with ``WindowsHostNetwork``
  on (the default there); ``host_process`` iff the pod is HostProcess; it refuses mixed
  pods, HostProcess pods without hostNetwork, and HostProcess containers under a pod-level
  ``hostProcess: false``. A refused pod has no sandbox, so no plan and no HCN call.
* containerd: host network iff HostProcess. kep: host network iff hostNetwork with
  ``namespace_options`` sent (1.26-1.32, gate on), or HostProcess.

The project's manifests are in every clone; the corpus (``../shared/corpus`` beside the
clone) is only read, and its cases are marked ``corpus``: they skip with one reason where
it is absent, and fail under CI.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubelet_winnet
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import SandboxConfigError
from kubelet_winnet.runtime import POLICIES, Policy, plan_sandbox_network
from kubelet_winnet.runtime.hcn import DEFAULT_OWNER, InMemoryHcn, SandboxNetworks
from tests.strategies import CORPUS, FIXTURES, WORKLOAD_KINDS

# Where each kind keeps its pod template (a Pod is its own template).
TEMPLATE_PATHS: Mapping[str, tuple[str, ...]] = {"Pod": (), **WORKLOAD_KINDS}

# Kubelet texts (kubelet-rules.md, step 3a, 3b, 6).
MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
NEEDS_HOST_NETWORK = "hostNetwork is required if Pod contains HostProcess containers"
POD_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)


@dataclass(frozen=True)
class Kubelet:
    version: str
    gates: str | None
    sends_namespace_options: bool  # from the timeline, not from the library

    def __str__(self) -> str:
        return f"{self.version}{'+' + self.gates if self.gates else ''}"


KUBELETS = (
    Kubelet("1.26", None, True),  # alpha, default on
    Kubelet("1.32", None, True),
    Kubelet("1.32", "WindowsHostNetwork=false", False),
    Kubelet("1.33", None, False),  # code path gone
    Kubelet("1.37", "WindowsHostNetwork=true", False),  # deprecated: settable, no effect
    Kubelet("1.38", None, False),  # removed
)


@dataclass(frozen=True)
class CorpusPod:
    file: str
    index: int
    kind: str
    name: str
    manifest: Mapping[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file}#{self.index}:{self.kind}/{self.name}"


def load_pods(directory: Path) -> list[CorpusPod]:
    pods: list[CorpusPod] = []
    for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.json")):
        with path.open(encoding="utf-8") as stream:  # read-only; JSON is YAML too
            documents = list(yaml.safe_load_all(stream))
        if len(documents) == 1 and isinstance(documents[0], dict) and (
            documents[0].get("kind") == "List"
        ):
            documents = documents[0]["items"]  # the index is then the item's
        for index, doc in enumerate(documents):
            if isinstance(doc, dict) and doc.get("kind") in TEMPLATE_PATHS:
                name = str((doc.get("metadata") or {}).get("name", "?"))
                pods.append(CorpusPod(path.name, index, doc["kind"], name, doc))
    return pods


SOURCES = {
    "fixtures": load_pods(FIXTURES),
    "corpus": load_pods(CORPUS) if CORPUS.is_dir() else [],
}
CORPUS_MARK = pytest.mark.corpus
# The corpus cases, or one stand-in that skips (tests/conftest.py) where it is absent.
PODS = [pytest.param(p, id=p.id) for p in SOURCES["fixtures"]] + (
    [pytest.param(p, id=p.id, marks=CORPUS_MARK) for p in SOURCES["corpus"]]
    or [pytest.param(None, id="corpus-absent", marks=CORPUS_MARK)]
)
BOTH = ["fixtures", pytest.param("corpus", marks=CORPUS_MARK)]


@pytest.mark.corpus
def test_the_corpus_is_there() -> None:
    pods = SOURCES["corpus"]
    assert len(list(CORPUS.glob("*.yaml"))) >= 40
    assert len(pods) >= 60, f"only {len(pods)} pod documents found in {CORPUS}"


# --- the oracle: kubelet rules and runtime rules, restated -----------------------------


def _get(doc: Mapping[str, Any] | None, *keys: str) -> Any:
    value: Any = doc
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _flag(value: object, where: str) -> bool | None:
    # The corpus only holds real booleans here; anything else would need the input
    # layer's rules, which this oracle does not restate.
    assert value is None or isinstance(value, bool), f"{where}: not a bool: {value!r}"
    return value


@dataclass(frozen=True)
class Expected:
    error: str | None
    host_process: bool = False
    namespace_mode: int | None = None  # NamespaceMode value, None when not sent

    def host_network(self, policy: Policy) -> bool:
        if policy == "containerd":
            return self.host_process
        return self.host_process or self.namespace_mode == api_pb2.NODE


def expected_for(pod: CorpusPod, kubelet: Kubelet) -> Expected:
    template = _get(pod.manifest, *TEMPLATE_PATHS[pod.kind])  # no keys: the Pod itself
    spec = _get(template, "spec") or {}
    host_network = bool(_flag(spec.get("hostNetwork"), "spec.hostNetwork"))
    windows_options = _get(spec, "securityContext", "windowsOptions")
    pod_hp = _flag(_get(windows_options, "hostProcess"), "pod hostProcess")
    effective: list[bool] = []
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(kind) or []:
            own = _flag(_get(container, "securityContext", "windowsOptions", "hostProcess"), kind)
            value = own if own is not None else pod_hp
            effective.append(bool(value))
    any_hp = any(effective)
    mode = None
    if kubelet.sends_namespace_options:
        mode = api_pb2.NODE if host_network else api_pb2.POD
    if any_hp and not all(effective):
        return Expected(MIXED)
    if any_hp and not host_network:
        return Expected(NEEDS_HOST_NETWORK)
    if any_hp and pod_hp is False:
        return Expected(POD_FALSE)
    return Expected(None, any_hp, mode)


# --- the pipeline ------------------------------------------------------------------------


def request_bytes(pod: CorpusPod, kubelet: Kubelet) -> bytes:
    config = kubelet_winnet.windows_sandbox_config(
        pod.manifest, kubelet_version=kubelet.version, feature_gates=kubelet.gates
    )
    request = api_pb2.RunPodSandboxRequest(config=api_pb2.PodSandboxConfig(windows=config))
    return request.SerializeToString()


def owned(hcn: InMemoryHcn) -> set[uuid.UUID]:
    return {i for i, n in hcn.namespaces().items() if n.owner == DEFAULT_OWNER}


@pytest.mark.parametrize("pod", PODS)
def test_manifest_to_hcn(pod: CorpusPod, tmp_path: Path) -> None:
    hcn = InMemoryHcn()
    host_default = hcn.find_host_default().id
    networks = SandboxNetworks(hcn, tmp_path / "state")
    for kubelet in KUBELETS:
        expected = expected_for(pod, kubelet)
        if expected.error is not None:
            with pytest.raises(SandboxConfigError) as refused:
                request_bytes(pod, kubelet)
            assert str(refused.value) == expected.error, kubelet
            continue  # no sandbox: nothing to plan, nothing for HCN
        data = request_bytes(pod, kubelet)
        sent = api_pb2.RunPodSandboxRequest.FromString(data).config.windows.security_context
        assert sent.host_process is expected.host_process, kubelet
        if expected.namespace_mode is None:
            assert not sent.HasField("namespace_options"), kubelet
        else:
            assert sent.HasField("namespace_options"), kubelet
            assert sent.namespace_options.network == expected.namespace_mode, kubelet

        for policy in POLICIES:
            where = f"{kubelet}, {policy}"
            host = expected.host_network(policy)
            plan = plan_sandbox_network(data, policy=policy)
            assert plan.host_network is host, where
            assert plan.create_namespace is plan.run_cni is (not host), where

            sandbox_id = f"{pod.id}@{where}"
            hcn.clear_calls()
            result = networks.setup(sandbox_id, plan)
            assert hcn.calls == tuple(c.function for c in plan.setup_calls), where
            assert result.host_network is host, where
            if host:
                assert result.namespace_id == host_default, where
                assert owned(hcn) == set(), where
            else:
                namespace = hcn.namespaces()[result.namespace_id]
                assert (namespace.owner, namespace.name) == (DEFAULT_OWNER, sandbox_id), where
                assert owned(hcn) == {result.namespace_id}, where
            assert networks.setup(sandbox_id, plan) == result, where  # repeated: same

            hcn.clear_calls()
            assert networks.teardown(sandbox_id), where
            assert hcn.calls == tuple(c.function for c in plan.teardown_calls), where
            assert not networks.teardown(sandbox_id), where
            assert owned(hcn) == set() and networks.sandbox_ids() == (), where
            assert set(hcn.namespaces()) == {host_default}, where
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0
    assert hcn.bad_frees == 0 and hcn.bad_closes == 0


@pytest.mark.parametrize("source", BOTH)
@pytest.mark.parametrize("policy", POLICIES)
def test_whole_corpus_on_one_node(policy: Policy, source: str, tmp_path: Path) -> None:
    """Every sandbox of the manifests up at once on one host, then reconciled away."""
    kubelet = KUBELETS[1]  # 1.32 with the gate on: the only profile where policies differ
    hcn = InMemoryHcn()
    networks = SandboxNetworks(hcn, tmp_path / "state")
    sandboxes, pod_networks = 0, 0
    for pod in SOURCES[source]:
        expected = expected_for(pod, kubelet)
        if expected.error is not None:
            continue
        plan = plan_sandbox_network(request_bytes(pod, kubelet), policy=policy)
        networks.setup(pod.id, plan)
        sandboxes += 1
        pod_networks += not expected.host_network(policy)
    assert len(owned(hcn)) == pod_networks > 0
    assert len(networks.sandbox_ids()) == sandboxes
    report = networks.reconcile([])  # every sandbox is gone
    assert len(report.torn_down) == sandboxes and report.deleted_orphans == ()
    assert owned(hcn) == set() and networks.sandbox_ids() == ()
    assert hcn.open_handles == 0 and hcn.unfreed_strings == 0


@pytest.mark.parametrize("source", BOTH)
def test_the_corpus_exercises_every_outcome(source: str) -> None:
    """Guards against a vacuous run: the manifests must reach each branch of the rules
    (the project's own, every refusal: tests/data/manifests/hostprocess-refused.yaml)."""
    outcomes: set[str] = set()
    for pod in SOURCES[source]:
        gate_on = expected_for(pod, KUBELETS[1])
        if gate_on.error is not None:
            outcomes.add(f"refused: {gate_on.error}")
        elif gate_on.host_network("kep") != gate_on.host_network("containerd"):
            outcomes.add("policies differ")  # a hostNetwork pod that is not HostProcess
        elif gate_on.host_process:
            outcomes.add("HostProcess")
        else:
            outcomes.add("pod network")
    assert {
        "policies differ",
        "HostProcess",
        "pod network",
        f"refused: {MIXED}",
        f"refused: {NEEDS_HOST_NETWORK}",
    } <= outcomes
    if source == "fixtures":
        assert f"refused: {POD_FALSE}" in outcomes
