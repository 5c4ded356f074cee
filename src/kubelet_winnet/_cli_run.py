"""``kubelet-winnet run``: send a container runtime what the kubelet would send for each
pod of a manifest file, without a kubelet.

Per pod, in the kubelet's order (kuberuntime_manager.go ``SyncPod``): create the pod log
directory (when it is an absolute path here), ``RunPodSandbox``, ``PodSandboxStatus``
(for the pod IP), then for every init container and then every regular container:
``ImageStatus`` (the kubelet's image ID becomes ``image.image``; this command never pulls),
``CreateContainer``, ``StartContainer``, ``ContainerStatus``. ConfigMaps and Secrets in the
same files stand in for the kubelet's API client. ``--cleanup`` stops and removes each
sandbox it created (with its containers); ``--dry-run`` prints the requests as proto3
JSON without connecting (container requests then carry an empty ``podSandboxId``).

Exit status: 0 every pod ran (or was built); 1 the kubelet would refuse a pod or a
container, or the runtime failed a call; 2 bad input, flags or usage.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from kubelet_winnet._profile import DEFAULT_KUBELET_VERSION
from kubelet_winnet.errors import CriError, SandboxConfigError, WinnetError

if TYPE_CHECKING:
    from kubelet_winnet._node import NodeContext
    from kubelet_winnet.cri import RuntimeClient

__all__ = ["add_run_parser", "run_command"]

_MAX_NODE_CONFIG_BYTES = 1 << 20


class _UsageError(Exception):
    """Bad flags or input files: exit status 2."""


def add_run_parser(commands: Any) -> None:
    """Register ``run`` on the ``kubelet-winnet`` sub-command parser."""
    run = commands.add_parser(
        "run",
        help="send a CRI runtime what the kubelet would send for each pod "
        "(RunPodSandbox, then CreateContainer and StartContainer per container)",
    )
    run.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON manifests; - for stdin")
    run.add_argument(
        "--runtime-endpoint", metavar="unix:///PATH",
        help="the runtime's CRI socket, as crictl takes it (required unless --dry-run)",
    )
    run.add_argument(
        "--dry-run", action="store_true",
        help="print the requests as proto3 JSON (a JSON array) without connecting",
    )
    run.add_argument(
        "--cleanup", action="store_true",
        help="stop and remove each sandbox (and its containers) after starting it",
    )
    run.add_argument(
        "--kubelet-version", default=DEFAULT_KUBELET_VERSION,
        help=f"kubelet release, 1.26 to 1.38 (default {DEFAULT_KUBELET_VERSION})",
    )
    run.add_argument(
        "--feature-gates", default=None,
        help="the kubelet's --feature-gates value, e.g. WindowsHostNetwork=false",
    )
    run.add_argument(
        "--node-config", metavar="FILE",
        help="YAML mapping of NodeContext fields (camelCase or snake_case keys): node name, "
        "cluster DNS, pod log directory, RuntimeClass handlers, ...",
    )


# --- input ---------------------------------------------------------------------------------


def _decode(data: bytes, path: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    else:
        encoding = "utf-8"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _UsageError(f"{path}: not valid {encoding} at byte {exc.start}") from None


def _load_node_config(path: str) -> NodeContext:
    """The ``NodeContext`` a ``--node-config`` YAML file describes."""
    import yaml

    from kubelet_winnet._node import NodeContext

    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_NODE_CONFIG_BYTES + 1)
    except OSError as exc:
        raise _UsageError(f"{path}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > _MAX_NODE_CONFIG_BYTES:
        raise _UsageError(f"{path}: larger than {_MAX_NODE_CONFIG_BYTES} bytes")
    try:
        document = yaml.safe_load(_decode(data, path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise _UsageError(f"{where}: not valid YAML") from None
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise _UsageError(f"{path}: expected a mapping of NodeContext fields")
    try:
        return NodeContext.from_mapping(document)
    except WinnetError as exc:
        raise _UsageError(f"{path}: {exc}") from None
    except TypeError:  # a YAML value NodeContext cannot take at all
        raise _UsageError(f"{path}: a value of the wrong type") from None


def _namespace(document: Mapping[str, Any]) -> str:
    metadata = document.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return namespace if isinstance(namespace, str) and namespace else "default"


@dataclass
class _Objects:
    """ConfigMaps and Secrets of the input files: namespace -> name -> data."""

    config_maps: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    secrets: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)

    def add(self, document: Any, source: str) -> None:
        if not isinstance(document, Mapping) or document.get("kind") not in (
            "ConfigMap", "Secret",
        ):
            return
        metadata = document.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if not isinstance(name, str):
            return
        data: dict[str, str] = {}
        raw = document.get("data") or {}
        plain = document.get("stringData") or {} if document["kind"] == "Secret" else {}
        if not isinstance(raw, Mapping) or not isinstance(plain, Mapping):
            raise _UsageError(f"{source}: data: expected a mapping")
        for key, value in raw.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise _UsageError(f"{source}: data: expected string keys and values")
            if document["kind"] == "Secret":  # base64, like the API server stores it
                try:
                    value = base64.b64decode(value, validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    raise _UsageError(
                        f"{source}: data.{key[:100]}: not base64 of UTF-8 text"
                    ) from None
            data[key] = value
        for key, value in plain.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise _UsageError(f"{source}: stringData: expected string keys and values")
            data[key] = value
        store = self.config_maps if document["kind"] == "ConfigMap" else self.secrets
        store.setdefault(_namespace(document), {})[name] = data


# --- one pod -------------------------------------------------------------------------------


def _containers(pod: Any) -> list[str]:
    """Init then regular container names, in spec order."""
    from kubelet_winnet._podview import get_objects, get_str, view_pod

    view = view_pod(pod)
    names = []
    for key in ("initContainers", "containers"):
        for index, container in enumerate(get_objects(view.spec, key, view.at("spec."))):
            names.append(get_str(container, "name", view.at(f"spec.{key}[{index}].")))
    return names


def _image(pod: Any, name: str) -> str:
    from kubelet_winnet._podview import get_objects, get_str, view_pod

    view = view_pod(pod)
    for key in ("initContainers", "containers"):
        for container in get_objects(view.spec, key, view.at("spec.")):
            if container.get("name") == name:
                return get_str(container, "image", "")
    return ""


@dataclass
class _Settings:
    node: NodeContext
    kubelet_version: str
    feature_gates: str | None
    objects: _Objects
    out: TextIO


def _message_json(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    result: dict[str, Any] = json_format.MessageToDict(message)
    return result


def _dry_run_pod(pod: Any, namespace: str, settings: _Settings) -> tuple[dict[str, Any], int]:
    import kubelet_winnet as api

    record: dict[str, Any] = {}
    request = api.run_pod_sandbox_request(
        pod, node=settings.node, kubelet_version=settings.kubelet_version,
        feature_gates=settings.feature_gates,
    )
    record["runPodSandbox"] = _message_json(request)
    record["createContainer"] = creates = []
    for name in _containers(pod):
        try:
            create = api.create_container_request(
                pod, name, pod_sandbox_id="", node=settings.node,
                config_maps=settings.objects.config_maps.get(namespace, {}),
                secrets=settings.objects.secrets.get(namespace, {}),
                kubelet_version=settings.kubelet_version, feature_gates=settings.feature_gates,
            )
        except SandboxConfigError as exc:
            record["error"] = f"container {name}: CreateContainerConfigError: {exc}"
            return record, 1
        creates.append(_message_json(create))
    return record, 0


def _run_pod(
    pod: Any, namespace: str, settings: _Settings, runtime: RuntimeClient, cleanup: bool
) -> int:
    import kubelet_winnet as api
    from cri_api.runtime.v1 import api_pb2

    out = settings.out
    request = api.run_pod_sandbox_request(
        pod, node=settings.node, kubelet_version=settings.kubelet_version,
        feature_gates=settings.feature_gates,
    )
    names = _containers(pod)
    log_directory = request.config.log_directory
    if os.path.isabs(log_directory):  # the kubelet creates it before RunPodSandbox
        os.makedirs(log_directory, mode=0o755, exist_ok=True)
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    try:
        status = runtime.pod_sandbox_status(sandbox_id).status
        network = api_pb2.NamespaceMode.Name(status.linux.namespaces.options.network)
        out.write(
            f"sandbox {sandbox_id} {api_pb2.PodSandboxState.Name(status.state)} "
            f"network={network} ip={status.network.ip or '-'}\n"
        )
        pod_ips = tuple(
            ip for ip in [status.network.ip, *(a.ip for a in status.network.additional_ips)] if ip
        )
        for name in names:
            image = runtime.image_status(_image(pod, name)).image
            if not image.id:
                out.write(
                    f"container {name}: image {_image(pod, name)!r} is not on the runtime "
                    "(kubelet-winnet run does not pull images)\n"
                )
                return 1
            try:
                create = api.create_container_request(
                    pod, name, pod_sandbox_id=sandbox_id, node=settings.node,
                    image_ref=image.id, pod_ips=pod_ips,
                    config_maps=settings.objects.config_maps.get(namespace, {}),
                    secrets=settings.objects.secrets.get(namespace, {}),
                    kubelet_version=settings.kubelet_version,
                    feature_gates=settings.feature_gates,
                )
            except SandboxConfigError as exc:
                out.write(f"container {name}: CreateContainerConfigError: {exc}\n")
                return 1
            container_id = runtime.create_container(create).container_id
            runtime.start_container(container_id)
            state = runtime.container_status(container_id).status.state
            out.write(
                f"container {name} {container_id} {api_pb2.ContainerState.Name(state)}\n"
            )
        return 0
    finally:
        if cleanup:
            runtime.stop_pod_sandbox(sandbox_id)
            runtime.remove_pod_sandbox(sandbox_id)
            out.write(f"removed sandbox {sandbox_id}\n")


# --- the command ---------------------------------------------------------------------------


def run_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``kubelet-winnet run``; returns the exit status."""
    import kubelet_winnet as api
    from kubelet_winnet._node import NodeContext
    from kubelet_winnet._pod import pod_identity
    from kubelet_winnet.cli import Document, InputError, _is_pod, _load

    try:
        if not args.dry_run and not args.runtime_endpoint:
            raise _UsageError("run: --runtime-endpoint is required unless --dry-run")
        if args.dry_run and args.cleanup:
            raise _UsageError("run: --cleanup needs a runtime; it cannot go with --dry-run")
        try:
            api.kubelet_profile(args.kubelet_version, args.feature_gates)
        except WinnetError as exc:
            raise _UsageError(str(exc)) from None
        node = _load_node_config(args.node_config) if args.node_config else NodeContext()
        objects = _Objects()
        documents = []
        for path in args.files:
            label = "<stdin>" if path == "-" else path
            try:
                loaded = _load(path)
            except InputError as exc:
                raise _UsageError(str(exc)) from None
            # Pods and workloads as `translate` finds them; a List's items in place.
            for number, doc in enumerate(loaded, start=1):
                items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" \
                    else None
                for suffix, item in (
                    [(f".items[{i}]", x) for i, x in enumerate(items)]
                    if isinstance(items, list) else [("", doc)]
                ):
                    objects.add(item, f"{label}#{number}{suffix}")
                    if _is_pod(item):
                        documents.append(Document(f"{label}#{number}{suffix}", item))
    except _UsageError as exc:
        print(f"kubelet-winnet: {exc}", file=err)
        return 2
    settings = _Settings(node, args.kubelet_version, args.feature_gates, objects, out)
    if args.dry_run:
        return _dry_run(documents, settings)
    from kubelet_winnet.cri import RuntimeClient

    try:
        runtime = RuntimeClient(args.runtime_endpoint)
    except (WinnetError, ImportError) as exc:
        print(f"kubelet-winnet: {exc}", file=err)
        return 2
    status = 0
    with runtime:
        for document in documents:
            out.write(f"# {pod_identity(document.manifest)} ({document.source})\n")
            try:
                status = max(status, _run_pod(
                    document.manifest, _namespace(document.manifest), settings, runtime,
                    args.cleanup,
                ))
            except SandboxConfigError as exc:
                out.write(f"error: Failed to create pod sandbox: {exc}\n")
                status = max(status, 1)
            except CriError as exc:
                out.write(f"error: {exc}\n")
                status = max(status, 1)
            except WinnetError as exc:
                out.write(f"invalid: {exc}\n")
                status = 2
    return status


def _dry_run(documents: list[Any], settings: _Settings) -> int:
    from kubelet_winnet._pod import pod_identity

    status = 0
    records = []
    for document in documents:
        record: dict[str, Any] = {
            "source": document.source, "pod": str(pod_identity(document.manifest)),
        }
        try:
            built, code = _dry_run_pod(
                document.manifest, _namespace(document.manifest), settings
            )
            record.update(built)
            status = max(status, code)
        except SandboxConfigError as exc:
            record["error"] = f"Failed to create pod sandbox: {exc}"
            status = max(status, 1)
        except WinnetError as exc:
            record["invalid"] = str(exc)
            status = 2
        records.append(record)
    json.dump(records, settings.out, indent=2)
    settings.out.write("\n")
    return status

