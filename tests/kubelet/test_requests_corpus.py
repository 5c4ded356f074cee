"""tests/data/manifests and the whole corpus (marked ``corpus``: skipped where it is absent)
end to end: every pod (and workload template) -> RunPodSandboxRequest,
every init and regular container -> CreateContainerRequest; serialized, parsed back,
and checked field by field against what the YAML says (rules restated here, not
imported). Also the same through kubernetes.client objects."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from tests.strategies import CORPUS, corpus_params, fixture_documents, require

TEMPLATES = {
    "Deployment": ("spec", "template"), "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"), "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"), "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"), "PodTemplate": ("template",),
}
NODE = kw.NodeContext()


def _documents() -> list[tuple[str, dict[str, Any]]]:
    files = sorted(CORPUS.glob("*.yaml"))
    assert len(files) >= 40, f"corpus missing at {CORPUS}"
    found: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        for number, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(doc, dict) and (doc.get("kind") == "Pod" or doc.get("kind") in TEMPLATES):
                found.append((f"{path.name}#{number}", doc))
    return found


# The project's own manifests always; the published corpus where it sits beside the clone.
FIXTURE_DOCUMENTS = fixture_documents()
CORPUS_DOCUMENTS = _documents() if CORPUS.is_dir() else []
DOCUMENTS = FIXTURE_DOCUMENTS + CORPUS_DOCUMENTS


def _template(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pod metadata as the kubelet sees it, pod spec)."""
    if doc.get("kind") == "Pod":
        return dict(doc.get("metadata") or {}), doc["spec"]
    node: Any = doc
    for key in TEMPLATES[doc["kind"]]:
        node = node[key]
    meta = dict(node.get("metadata") or {})
    meta.setdefault("name", (doc.get("metadata") or {}).get("name"))
    meta.setdefault("namespace", (doc.get("metadata") or {}).get("namespace"))
    return meta, node["spec"]


def _stores(spec: dict[str, Any]) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """ConfigMaps and Secrets holding every key the pod references, value `<name>/<key>`."""
    config_maps: dict[str, dict[str, str]] = {}
    secrets: dict[str, dict[str, str]] = {}
    for kind in ("initContainers", "containers"):
        for container in spec.get(kind) or []:
            for source in container.get("envFrom") or []:
                for ref_key, store in (("configMapRef", config_maps), ("secretRef", secrets)):
                    if ref_key in source:
                        store.setdefault(source[ref_key]["name"], {})["FROM"] = "1"
            for env in container.get("env") or []:
                value_from = env.get("valueFrom") or {}
                for ref_key, store in (("configMapKeyRef", config_maps),
                                       ("secretKeyRef", secrets)):
                    if ref_key in value_from:
                        ref = value_from[ref_key]
                        data = store.setdefault(ref["name"], {})
                        data[ref["key"]] = f"{ref['name']}/{ref['key']}"
    return config_maps, secrets


@pytest.mark.parametrize(("label", "doc"), FIXTURE_DOCUMENTS,
                         ids=[label for label, _ in FIXTURE_DOCUMENTS])
def test_fixture_requests(label: str, doc: dict[str, Any]) -> None:
    check_requests(label, doc)


@pytest.mark.corpus
@pytest.mark.parametrize("case", corpus_params(lambda: ((c[0], c) for c in CORPUS_DOCUMENTS)))
def test_corpus_requests(case: tuple[str, dict[str, Any]]) -> None:
    check_requests(*case)


def check_requests(label: str, doc: dict[str, Any]) -> None:
    meta, spec = _template(doc)
    refusal = ""
    try:
        expected_windows = kw.windows_sandbox_config(doc)
    except kw.SandboxConfigError as exc:
        refusal = str(exc)
    if refusal:
        with pytest.raises(kw.SandboxConfigError) as info:
            kw.run_pod_sandbox_request(doc)
        assert str(info.value) == refusal
        return
    request = kw.run_pod_sandbox_request(doc)
    parsed = api_pb2.RunPodSandboxRequest.FromString(request.SerializeToString())
    assert parsed == request
    config = parsed.config
    host_network = spec.get("hostNetwork") is True
    name, namespace = meta.get("name") or "", meta.get("namespace") or "default"
    assert (config.metadata.name, config.metadata.namespace) == (name, namespace)
    assert dict(config.labels) == {**(meta.get("labels") or {}),
                                   "io.kubernetes.pod.name": name,
                                   "io.kubernetes.pod.namespace": namespace,
                                   "io.kubernetes.pod.uid": meta.get("uid") or ""}
    assert dict(config.annotations) == (meta.get("annotations") or {})
    assert config.log_directory == f"C:\\var\\log\\pods\\{namespace}_{name}_{meta.get('uid') or ''}"
    network = config.linux.security_context.namespace_options.network
    if host_network:
        assert config.hostname == "" and network == api_pb2.NODE
    else:
        assert config.hostname == (spec.get("hostname") or name)[:63] and network == api_pb2.POD
    policy = spec.get("dnsPolicy", "ClusterFirst")
    if policy == "Default" or (policy == "ClusterFirst" and host_network):
        assert list(config.dns_config.servers)[:1] == list(NODE.resolver_servers)
    elif policy in ("ClusterFirst", "ClusterFirstWithHostNet"):
        assert list(config.dns_config.servers)[:1] == list(NODE.cluster_dns)
        assert config.dns_config.searches[0] == f"{namespace}.svc.cluster.local"
    ports = [p for c in spec.get("containers") or [] for p in c.get("ports") or []]
    assert len(config.port_mappings) <= len(ports)
    for mapping in config.port_mappings:
        assert mapping.host_port != 0 or not host_network
    assert config.windows == expected_windows
    assert request.runtime_handler == ""
    config_maps, secrets = _stores(spec)
    volume_paths = _volume_paths(spec, doc)
    for kind in ("initContainers", "containers"):
        for container in spec.get(kind) or []:
            create = kw.create_container_request(
                doc, container["name"], pod_sandbox_id="sandbox", config_maps=config_maps,
                secrets=secrets, volume_paths=volume_paths,
            )
            back = api_pb2.CreateContainerRequest.FromString(create.SerializeToString())
            assert back == create and back.sandbox_config == config
            cc = back.config
            assert cc.metadata.name == container["name"]
            assert cc.image.image == container.get("image", "")
            if not any("$" in part for part in container.get("command") or []):
                assert list(cc.command) == (container.get("command") or [])
            assert cc.labels["io.kubernetes.container.name"] == container["name"]
            assert cc.log_path == f"{container['name']}\\0.log"
            envs = {kv.key: kv.value.decode() for kv in cc.envs}
            for env in container.get("env") or []:
                if "value" in env and "$" not in str(env["value"]):
                    assert envs[env["name"]] == str(env["value"])
                ref = (env.get("valueFrom") or {}).get("configMapKeyRef") or (
                    env.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    assert envs[env["name"]] == f"{ref['name']}/{ref['key']}"
            assert cc.windows.security_context == kw.windows_container_security_context(
                doc, container["name"]
            )
            _check_mounts(cc, container, spec, meta.get("uid") or "", volume_paths, doc)


# The plugin directories of GetPodVolumeDir (pkg/volume/<plugin>): kind -> (dir, read-only).
_PLUGINS = {"emptyDir": ("empty-dir", False), "configMap": ("configmap", True),
            "secret": ("secret", True), "projected": ("projected", True),
            "downwardAPI": ("downward-api", True)}


def _kind(volume: dict[str, Any]) -> str:
    return next(key for key in volume if key != "name")


def _claim_volumes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The volumes a StatefulSet's controller adds to its pods, one per claim template."""
    if doc.get("kind") != "StatefulSet":
        return {}
    return {t["metadata"]["name"]: {"name": t["metadata"]["name"], "persistentVolumeClaim": {}}
            for t in doc["spec"].get("volumeClaimTemplates") or []}


def _volume_paths(spec: dict[str, Any], doc: dict[str, Any]) -> dict[str, str]:
    """A host path for every volume whose path the volume manager picks (PVC, CSI, ...)."""
    volumes = [*(spec.get("volumes") or []), *_claim_volumes(doc).values()]
    return {v["name"]: f"C:\\mnt\\{v['name']}" for v in volumes
            if _kind(v) not in _PLUGINS and _kind(v) != "hostPath"}


def _check_mounts(cc: Any, container: dict[str, Any], spec: dict[str, Any], uid: str,
                  volume_paths: dict[str, str], doc: dict[str, Any]) -> None:
    """makeMounts: one mount per volumeMount in order, the termination log last."""
    volumes = {v["name"]: v for v in spec.get("volumes") or []} | _claim_volumes(doc)
    wanted = container.get("volumeMounts") or []
    mounts = list(cc.mounts)
    assert mounts[-1].container_path == "c:/dev/termination-log" or mounts[-1].container_path \
        == container.get("terminationMessagePath")
    # filepath.Join drops an empty uid
    root = "C:\\var\\lib\\kubelet\\pods\\" + (f"{uid}\\" if uid else "")
    assert mounts[-1].host_path == f"{root}containers\\{container['name']}\\00000000"
    assert len(mounts) >= len(wanted) + 1
    for mount, want in zip(mounts[: len(wanted)], wanted, strict=True):
        volume = volumes[want["name"]]
        kind = _kind(volume)
        assert mount.propagation == api_pb2.PROPAGATION_PRIVATE
        if want.get("subPath") or want.get("subPathExpr"):
            continue
        if kind in _PLUGINS:
            plugin, read_only = _PLUGINS[kind]
            assert mount.host_path == f"{root}volumes\\kubernetes.io~{plugin}\\{want['name']}"
            assert mount.readonly is (read_only or want.get("readOnly") is True)
        elif kind != "hostPath":
            assert mount.host_path == volume_paths[want["name"]]


def test_kubernetes_client_objects_give_the_same_requests() -> None:
    client: Any = require("kubernetes.client")

    # The client's own deserializer: what `kubernetes` users hold after a list/watch.
    deserialize = client.ApiClient()._ApiClient__deserialize
    checked = 0
    for label, doc in DOCUMENTS:
        kind = doc["kind"]
        model = {"Pod": "V1Pod", "Deployment": "V1Deployment", "DaemonSet": "V1DaemonSet",
                 "Job": "V1Job", "StatefulSet": "V1StatefulSet", "CronJob": "V1CronJob"}.get(kind)
        if model is None:
            continue
        doc = _string_quantities(doc)  # client 37 refuses `cpu: 1`; the API accepts it
        obj = deserialize(doc, model)
        try:
            expected = kw.run_pod_sandbox_request(doc)
        except kw.SandboxConfigError:
            with pytest.raises(kw.SandboxConfigError):
                kw.run_pod_sandbox_request(obj)
            continue
        assert kw.run_pod_sandbox_request(obj) == expected, label
        _, spec = _template(doc)
        first = (spec.get("containers") or [{}])[0].get("name")
        config_maps, secrets = _stores(spec)
        paths = _volume_paths(spec, doc)
        assert kw.container_config(obj, first, config_maps=config_maps, secrets=secrets,
                                   volume_paths=paths) == (
            kw.container_config(doc, first, config_maps=config_maps, secrets=secrets,
                                volume_paths=paths)
        ), label
        checked += 1
    assert checked >= 20


def _string_quantities(doc: Any) -> Any:
    if isinstance(doc, dict):
        out = {}
        for key, item in doc.items():
            if key in ("limits", "requests") and isinstance(item, dict):
                out[key] = {k: str(v) if isinstance(v, (int, float)) else v
                            for k, v in item.items()}
            else:
                out[key] = _string_quantities(item)
        return out
    if isinstance(doc, list):
        return [_string_quantities(item) for item in doc]
    return doc
