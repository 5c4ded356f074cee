"""Proof against a real runtime: what the library builds for every corpus pod, sent through
``RuntimeClient`` to a private containerd (Debian's 1.6.x, tests/cri/containerd_fixture.py).

"Can run" here: the kubelet builds the request (pods it refuses with
``SandboxConfigError`` are never sent; the corpus has five, asserted below) and the pod
names no RuntimeClass (the test containerd has only its default handler). Every such pod
must reach READY; ``pod_sandbox_status`` must show network NODE and no IP for
``hostNetwork`` pods (read from the manifest here) and a pod IP from the test subnet for
the others; metadata, labels and annotations read back equal to what was sent (kubelet
1.32 and 1.33). Then, with the 1.32 requests, every init and regular container the
kubelet would create is created from the test image and started:
RUNNING, labels and annotations equal to what was sent. The corpus commands, arguments
and working directories are Windows ones (``powershell``, ``C:\\...``), which the Linux
test image cannot run, so those three fields are cleared; everything else is sent as
built. Finally the pod is stopped and removed, and no sandbox, shim process or mount may
remain.

Outside CI, when containerd cannot run here (not root, not installed) the module skips
with the reason; under CI (``CI`` set) that is a failure.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubelet_winnet
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cli import main
from kubelet_winnet.cri import RuntimeClient
from tests.cri import containerd_fixture
from tests.cri.containerd_fixture import IMAGE, SUBNET, Containerd
from tests.strategies import MUST_RUN, REPO_ROOT, WORKLOAD_KINDS, corpus_params, spec_of

REPO = REPO_ROOT
CORPUS = REPO.parent / "shared" / "corpus"
NODE = kubelet_winnet.NodeContext()
# 1.32 sends the Windows namespace option (gate on by default), 1.33 does not: both are
# what a runtime receives from real kubelets.
KUBELET_VERSIONS = ("1.32", "1.33")
REFUSED_COUNT = 5  # 28:badpod01-new, 28:badpod02-new, 28:badpod03-new, 29:... (test_corpus)
# Containers whose env reads, not optionally, a ConfigMap the file does not hold (read
# from the YAML; the azure-cred-file references of 11, 12, 14 are optional): the kubelet
# reports CreateContainerConfigError and never calls CreateContainer.
NOT_CREATED = (
    "39#2:albums-win-hp-app-hostprocess/cplauncher",  # hostprocess-launcher-env
    "40#1:addon-sync-ADDON_NAME_PLACEHOLDER/addon-sync",  # addon-sync-config
)


@dataclass(frozen=True)
class CorpusPod:
    label: str  # "<file number>#<document number>:<name>"
    doc: dict[str, Any]
    config_maps: dict[str, dict[str, str]]  # ConfigMaps of the same file and namespace
    secrets: dict[str, dict[str, str]]
    containers: tuple[str, ...]  # init then regular containers the kubelet would create


def _namespace(doc: dict[str, Any]) -> str:
    return (doc.get("metadata") or {}).get("namespace") or "default"


def _objects(docs: list[dict[str, Any]], kind: str, namespace: str) -> dict[str, dict[str, str]]:
    found = {}
    for doc in docs:
        if doc.get("kind") == kind and _namespace(doc) == namespace:
            data = {k: str(v) for k, v in (doc.get("data") or {}).items()}
            if kind == "Secret":  # data is base64; stringData is plain
                data = {k: base64.b64decode(v).decode() for k, v in data.items()}
                data.update({k: str(v) for k, v in (doc.get("stringData") or {}).items()})
            found[doc["metadata"]["name"]] = data
    return found


@cache
def corpus() -> tuple[tuple[CorpusPod, ...], tuple[str, ...], tuple[str, ...]]:
    """(pods the kubelet would send, labels of pods it refuses, "pod/container" labels of
    containers it would not create: CreateContainerConfigError for a ConfigMap that is
    not in the file)."""
    pods, refused, not_created = [], [], []
    for path in sorted(CORPUS.glob("*.yaml")):
        docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        for number, doc in enumerate(docs, 1):
            if not isinstance(doc, dict) or (
                doc.get("kind") != "Pod" and doc.get("kind") not in WORKLOAD_KINDS
            ):
                continue
            label = f"{path.name[:2]}#{number}:{(doc.get('metadata') or {}).get('name', '')}"
            try:
                kubelet_winnet.run_pod_sandbox_request(doc, node=NODE)
            except kubelet_winnet.SandboxConfigError:
                refused.append(label)
                continue
            plain = [d for d in docs if isinstance(d, dict)]
            config_maps = _objects(plain, "ConfigMap", _namespace(doc))
            secrets = _objects(plain, "Secret", _namespace(doc))
            spec = spec_of(doc)
            containers = []
            for name in _names(spec, "initContainers") + _names(spec, "containers"):
                try:
                    kubelet_winnet.container_config(
                        doc, name, node=NODE, config_maps=config_maps, secrets=secrets,
                        volume_paths=_volume_paths(spec),
                    )
                except kubelet_winnet.SandboxConfigError:
                    not_created.append(f"{label}/{name}")
                    continue
                containers.append(name)
            pods.append(CorpusPod(label, doc, config_maps, secrets, tuple(containers)))
    return tuple(pods), tuple(refused), tuple(not_created)


def _volume_paths(spec: Any) -> dict[str, str]:
    """A stand-in host path for each volume the volume manager would place (PVC, CSI)."""
    placed = ("emptyDir", "configMap", "secret", "projected", "downwardAPI", "hostPath")
    return {v["name"]: f"C:\\mnt\\{v['name']}" for v in (spec.get("volumes") or [])
            if not any(kind in v for kind in placed)}


OPT_IN = "KUBELET_WINNET_CONTAINERD"


@pytest.fixture(scope="module")
def daemon() -> Iterator[Containerd]:
    reason = containerd_fixture.unavailable_reason()
    if reason is not None:
        if MUST_RUN:
            pytest.fail(f"CI must run the containerd tests, but: {reason}")
        pytest.skip(reason)
    if not MUST_RUN and os.environ.get(OPT_IN) != "1":
        pytest.skip(
            "a private containerd takes about 40 s to start and drive: these tests run "
            f"under CI; set {OPT_IN}=1 to run them here"
        )
    directory = containerd_fixture.short_temporary_directory()
    try:
        daemon = containerd_fixture.start(
            directory, image_archive=containerd_fixture.build_image(directory)
        )
        try:
            yield daemon
        finally:
            daemon.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def runtime(daemon: Containerd) -> Iterator[RuntimeClient]:
    with RuntimeClient(daemon.endpoint, timeout=60) as client:
        yield client


def _wait_until_clean(daemon: Containerd, seconds: float = 10.0) -> list[str]:
    # A shim exits just after the RemovePodSandbox reply; give it a moment.
    deadline = time.monotonic() + seconds
    while True:
        left = containerd_fixture.leftovers(daemon)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _names(spec: dict[str, Any], key: str) -> list[str]:
    return [c["name"] for c in spec.get(key) or []]


# --- the runtime and the image -------------------------------------------------------------


def test_the_runtime_is_containerd_serving_cri_v1(runtime: RuntimeClient) -> None:
    reply = runtime.version()
    assert reply.runtime_name == "containerd"
    assert reply.runtime_api_version == "v1"
    conditions = {c.type: c.status for c in runtime.status().status.conditions}
    assert conditions == {"RuntimeReady": True, "NetworkReady": True}


def test_the_imported_test_image_is_visible_through_cri(runtime: RuntimeClient) -> None:
    image = runtime.image_status(IMAGE).image
    assert IMAGE in image.repo_tags
    assert image.id.startswith("sha256:")
    assert not runtime.image_status("localhost/not-imported:1").HasField("image")


def test_an_unknown_sandbox_is_a_typed_not_found(runtime: RuntimeClient) -> None:
    with pytest.raises(kubelet_winnet.CriError) as caught:
        runtime.pod_sandbox_status("0" * 64)
    assert caught.value.code == "NOT_FOUND"


# --- every runnable corpus pod ---------------------------------------------------------------


@pytest.mark.corpus
def test_the_corpus_has_56_runnable_pods_and_5_refused() -> None:
    pods, refused, not_created = corpus()
    assert len(refused) == REFUSED_COUNT
    assert len(pods) == 56
    # None names a RuntimeClass, so every pod runs on the default handler.
    assert all(spec_of(pod.doc).get("runtimeClassName") is None for pod in pods)
    # Containers reading a ConfigMap the file does not hold (read from the YAML).
    assert sorted(not_created) == sorted(NOT_CREATED)
    assert sum(1 for pod in pods if pod.containers) >= 5


@pytest.mark.corpus
@pytest.mark.parametrize("kubelet_version", KUBELET_VERSIONS)
@pytest.mark.parametrize("pod", corpus_params(lambda: ((pod.label, pod) for pod in corpus()[0])))
def test_corpus_pod_runs_with_its_containers(
    runtime: RuntimeClient, daemon: Containerd, pod: CorpusPod, kubelet_version: str
) -> None:
    doc = pod.doc
    spec = spec_of(doc)
    host_network = spec.get("hostNetwork") is True
    request = kubelet_winnet.run_pod_sandbox_request(
        doc, node=NODE, kubelet_version=kubelet_version
    )
    # runc refuses a hostname in the host's UTS namespace; the kubelet sends none.
    assert (request.config.hostname == "") is host_network
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    try:
        status = runtime.pod_sandbox_status(sandbox_id).status
        assert status.state == api_pb2.SANDBOX_READY
        assert status.metadata == request.config.metadata
        assert dict(status.labels) == dict(request.config.labels)
        assert dict(status.annotations) == dict(request.config.annotations)
        network = status.linux.namespaces.options.network
        if host_network:
            assert network == api_pb2.NODE
            assert status.network.ip == ""
        else:
            assert network == api_pb2.POD
            assert ipaddress.ip_address(status.network.ip) in ipaddress.ip_network(SUBNET)

        # Container requests hardly differ between the two kubelets: create them once.
        for name in pod.containers if kubelet_version == KUBELET_VERSIONS[0] else ():
            create = kubelet_winnet.create_container_request(
                doc, name, pod_sandbox_id=sandbox_id, node=NODE, image_ref=IMAGE,
                config_maps=pod.config_maps, secrets=pod.secrets,
                pod_ips=(status.network.ip,) if status.network.ip else (),
                kubelet_version=kubelet_version, volume_paths=_volume_paths(spec_of(doc)),
            )
            # mounts: Windows host paths under C:\var\lib\kubelet that nothing prepares here
            for windows_only in ("command", "args", "working_dir", "mounts"):
                create.config.ClearField(windows_only)
            container_id = runtime.create_container(create).container_id
            runtime.start_container(container_id)
            container = runtime.container_status(container_id).status
            assert container.state == api_pb2.CONTAINER_RUNNING, container.message
            assert container.metadata == create.config.metadata
            assert dict(container.labels) == dict(create.config.labels)
            assert dict(container.annotations) == dict(create.config.annotations)
            assert container.labels["io.kubernetes.container.name"] == name
        listed = runtime.list_pod_sandbox(api_pb2.PodSandboxFilter(id=sandbox_id)).items
        assert [item.id for item in listed] == [sandbox_id]
    finally:
        runtime.stop_pod_sandbox(sandbox_id)
        runtime.remove_pod_sandbox(sandbox_id)
    assert list(runtime.list_pod_sandbox().items) == []
    assert _wait_until_clean(daemon) == []


def test_a_secrets_bytes_reach_a_gogo_containerd_unchanged(
    runtime: RuntimeClient, daemon: Containerd
) -> None:
    """A 1.37 kubelet sends a Secret's bytes that are not UTF-8 as `bytes value = 2`; the
    wire is a string's, and containerd 1.6 (gogo protobuf, which checks no UTF-8) takes
    them: the container starts, and its OCI spec, which containerd's verbose status writes
    with Go's encoding/json, holds the variable with each bad byte as U+FFFD."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "bin", "namespace": "default", "uid": "u-bin"},
           "spec": {"containers": [{"name": "c", "image": IMAGE, "env": [
               {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]}}
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"k": "//4="}}  # ff fe
    request = kubelet_winnet.run_pod_sandbox_request(pod, node=NODE, kubelet_version="1.37")
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    try:
        create = kubelet_winnet.create_container_request(
            pod, "c", pod_sandbox_id=sandbox_id, node=NODE, image_ref=IMAGE,
            secrets={"s": secret}, kubelet_version="1.37",
        )
        assert [(e.key, e.value) for e in create.config.envs] == [("KEY", b"\xff\xfe")]
        create.config.ClearField("mounts")  # Windows host paths nothing prepares here
        container_id = runtime.create_container(create).container_id
        runtime.start_container(container_id)
        answer = runtime.container_status(container_id, verbose=True)
        assert answer.status.state == api_pb2.CONTAINER_RUNNING, answer.status.message
        env = json.loads(answer.info["info"])["runtimeSpec"]["process"]["env"]
        assert "KEY=\ufffd\ufffd" in env
    finally:
        runtime.stop_pod_sandbox(sandbox_id)
        runtime.remove_pod_sandbox(sandbox_id)
    assert _wait_until_clean(daemon) == []


@pytest.mark.corpus
def test_stop_and_remove_are_idempotent(runtime: RuntimeClient, daemon: Containerd) -> None:
    request = kubelet_winnet.run_pod_sandbox_request(corpus()[0][0].doc, node=NODE)
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    for _ in range(2):
        runtime.stop_pod_sandbox(sandbox_id)
    status = runtime.pod_sandbox_status(sandbox_id).status
    assert status.state == api_pb2.SANDBOX_NOTREADY
    for _ in range(2):
        runtime.remove_pod_sandbox(sandbox_id)
    with pytest.raises(kubelet_winnet.CriError) as caught:
        runtime.pod_sandbox_status(sandbox_id)
    assert caught.value.code == "NOT_FOUND"
    assert _wait_until_clean(daemon) == []


# --- what containerd keeps of the Windows fields ----------------------------------------------


def test_containerd_1_6_drops_the_windows_namespace_option(
    runtime: RuntimeClient, daemon: Containerd
) -> None:
    """KEP-3503's field never reaches containerd 1.6: its cri-api predates
    ``WindowsNamespaceOption`` (cri-api v0.26), so the field is an unknown one and is
    dropped, while ``host_process`` and ``run_as_username`` are kept. The verbose
    ``PodSandboxStatus`` info holds the config as containerd stored it."""
    version = runtime.version().runtime_version
    if not version.startswith("1.6."):
        pytest.skip(f"the dropped field is a containerd 1.6 fact; this is {version}")
    pod = {
        "metadata": {"name": "hp", "namespace": "ns", "uid": "u-hp"},
        "spec": {"hostNetwork": True, "securityContext": {"windowsOptions": {
            "hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
            "containers": [{"name": "c", "image": IMAGE}]},
    }
    request = kubelet_winnet.run_pod_sandbox_request(pod, kubelet_version="1.32")
    sent = request.config.windows.security_context
    assert sent.HasField("namespace_options") and sent.namespace_options.network == api_pb2.NODE
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    try:
        info = json.loads(runtime.pod_sandbox_status(sandbox_id, verbose=True).info["info"])
        kept = info["config"]["windows"]["security_context"]
        assert kept == {"run_as_username": "NT AUTHORITY\\SYSTEM", "host_process": True}
        # What makes it a host-network sandbox on Linux: the linux namespace option.
        assert info["config"]["linux"]["security_context"]["namespace_options"]["network"] == 2
        assert "windows" not in info["runtimeSpec"]
    finally:
        runtime.stop_pod_sandbox(sandbox_id)
        runtime.remove_pod_sandbox(sandbox_id)
    assert _wait_until_clean(daemon) == []


# --- `kubelet-winnet run` against the same containerd ------------------------------------------


def _manifest(tmp_path: Path, image: str = IMAGE) -> Path:
    host_process = {"windowsOptions": {"hostProcess": True,
                                       "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    pods = [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "hp", "namespace": "kube-system", "uid": "u-hp",
                      "labels": {"app": "hp"}, "annotations": {"note": "host"}},
         "spec": {"hostNetwork": True, "securityContext": host_process,
                  "initContainers": [{"name": "setup", "image": image}],
                  "containers": [{"name": "agent", "image": image}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": "default"},
         "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [
                                   {"name": "iis", "image": image,
                                    "ports": [{"containerPort": 80}]}]}}}},
    ]
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump_all(pods), encoding="utf-8")
    return path


def _lines(out: str, kind: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.startswith(kind + " ")]


def test_kubelet_winnet_run_starts_every_pod(
    daemon: Containerd, runtime: RuntimeClient, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "--runtime-endpoint", daemon.endpoint, str(_manifest(tmp_path))])
    out = capsys.readouterr().out
    try:
        assert code == 0, out
        sandboxes = _lines(out, "sandbox")
        assert [line[2:4] for line in sandboxes] == [
            ["SANDBOX_READY", "network=NODE"], ["SANDBOX_READY", "network=POD"]
        ]
        assert sandboxes[0][4] == "ip=-"
        assert ipaddress.ip_address(sandboxes[1][4].removeprefix("ip=")) in ipaddress.ip_network(
            SUBNET
        )
        containers = _lines(out, "container")
        # Init container first, then the regular ones, pod by pod.
        assert [(line[1], line[3]) for line in containers] == [
            ("setup", "CONTAINER_RUNNING"), ("agent", "CONTAINER_RUNNING"),
            ("iis", "CONTAINER_RUNNING"),
        ]
        listed = {item.id: item for item in runtime.list_pod_sandbox().items}
        assert set(listed) == {line[1] for line in sandboxes}
        hp = listed[sandboxes[0][1]]
        assert (hp.metadata.name, hp.metadata.namespace, hp.metadata.uid) == (
            "hp", "kube-system", "u-hp"
        )
        assert hp.labels["app"] == "hp" and hp.annotations["note"] == "host"
        for line in containers:
            status = runtime.container_status(line[2]).status
            assert status.labels["io.kubernetes.container.name"] == line[1]
            assert status.image_ref.startswith("sha256:")
    finally:
        daemon.remove_all_sandboxes()
    assert _wait_until_clean(daemon) == []


def test_kubelet_winnet_run_cleanup_removes_what_it_created(
    daemon: Containerd, runtime: RuntimeClient, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "--cleanup", "--runtime-endpoint", daemon.endpoint,
                 str(_manifest(tmp_path))])
    out = capsys.readouterr().out
    assert code == 0, out
    created = [line[1] for line in _lines(out, "sandbox")]
    assert [line[2] for line in _lines(out, "removed")] == created
    assert len(created) == 2
    assert list(runtime.list_pod_sandbox().items) == []
    assert _wait_until_clean(daemon) == []


def test_kubelet_winnet_run_does_not_pull(
    daemon: Containerd, runtime: RuntimeClient, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _manifest(tmp_path, image="localhost/not-imported:1")
    code = main(["run", "--cleanup", "--runtime-endpoint", daemon.endpoint, str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "container setup: image 'localhost/not-imported:1' is not on the runtime" in out
    assert list(runtime.list_pod_sandbox().items) == []
    assert _wait_until_clean(daemon) == []


def test_the_cri_benchmark_runs(daemon: Containerd, tmp_path: Path) -> None:
    """benchmarks/cri.py --quick: its own containerd, every row, nothing left behind (no
    timing is asserted)."""
    out = tmp_path / "cri.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "cri.py"), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| RunPodSandbox |" in done.stdout and "| Version |" in done.stdout
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["facts"]["leftovers"] == []
    assert results["results"]["RunPodSandbox"]["samples"] == 4
    assert results["results"]["ratio RunPodSandbox / Version"] > 0


@pytest.mark.corpus
def test_stopping_containerd_leaves_nothing_behind(daemon: Containerd) -> None:
    with RuntimeClient(daemon.endpoint, timeout=60) as runtime:
        for pod in corpus()[0][:3]:
            runtime.run_pod_sandbox(kubelet_winnet.run_pod_sandbox_request(pod.doc, node=NODE))
        assert len(runtime.list_pod_sandbox().items) == 3
    assert containerd_fixture.leftovers(daemon) != []  # the check sees live ones
    assert daemon.stop() == []
    assert daemon.process.returncode is not None
