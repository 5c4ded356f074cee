"""``kubelet-winnet run``: send a container runtime what the kubelet would send for each
pod of a manifest file, without a kubelet.

Per pod, in the kubelet's order (kuberuntime_manager.go ``SyncPod``): create the pod log
directory (when it is an absolute path here), ``RunPodSandbox``, ``PodSandboxStatus``
(for the pod IP), then for every init container and then every regular container:
``ImageStatus`` (the kubelet's image ID becomes ``image.image``; this command never pulls),
``CreateContainer``, ``StartContainer``, ``ContainerStatus``. ConfigMaps and Secrets in the
same files stand in for the kubelet's API client. ``--cleanup`` stops and removes each
sandbox it created (with its containers); ``--dry-run`` prints the requests as proto3
JSON without connecting (container requests then carry an empty ``podSandboxId``, and
their mounts; a volume whose host path the volume manager picks shows a stand-in).
Against a runtime, containers are created without mounts: nothing here prepares what
they would point at.

Exit status: 0 every pod ran (or was built); 1 the kubelet would refuse a pod or a
container, or the runtime failed a call; 2 bad input, flags or usage.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TextIO

from kubelet_winnet._printable import printable
from kubelet_winnet.cli.session import Command, Session
from kubelet_winnet.errors import CriError, InvalidPodError, SandboxConfigError, WinnetError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.node import NodeContext
    from kubelet_winnet.cli.session import Pod
    from kubelet_winnet.cri import RuntimeClient
    from kubelet_winnet.sources.manifests import Document, Limits

__all__ = ["configure_run", "run_command"]



class _UsageError(Exception):
    """Bad flags or input files: exit status 2."""


def configure_run(parser: argparse.ArgumentParser) -> None:
    """The flags of ``run``: the shared input and profile flags plus the runtime's."""
    from kubelet_winnet.cli.session import (
        add_input_arguments,
        add_profile_arguments,
        exit_text,
    )

    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.epilog = exit_text(
        (0, "every pod's sandbox and containers created and started (--dry-run: every "
         "request printed)"),
        (1, "the kubelet would refuse a pod, or the runtime failed a call"),
        (2, "bad input, bad flags or usage, a runtime that cannot be reached, or output "
         "that cannot be written"),
    )
    parser.add_argument(
        "--runtime-endpoint", metavar="unix:///PATH",
        help="the runtime's CRI socket, as crictl takes it (required unless --dry-run)",
    )
    parser.add_argument(
        "--dry-run", action="store_true",
        help="print the requests as proto3 JSON (a JSON array) without connecting",
    )
    parser.add_argument(
        "--cleanup", action="store_true",
        help="stop and remove each sandbox (and its containers) after starting it",
    )
    parser.add_argument(
        "--runtime-request-timeout", type=_request_timeout, default=None, metavar="DURATION",
        help="how long one CRI call may take before it fails (DEADLINE_EXCEEDED), as the "
        "kubelet's flag of that name: whole seconds or a Go duration such as 500ms, 1m30s "
        "(default 30s; the kubelet's is 2m)",
    )
    parser.add_argument(
        "--node-config", metavar="FILE",
        help="YAML mapping of NodeContext fields (camelCase or snake_case keys): node name, "
        "cluster DNS, pod log directory, RuntimeClass handlers, ...",
    )


def _request_timeout(text: str) -> float:
    from kubelet_winnet.sources.cluster.source import parse_timeout

    try:
        seconds = parse_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds <= 0:  # a CRI call always has a deadline here
        raise argparse.ArgumentTypeError("must be more than 0")
    return seconds


# --- input ---------------------------------------------------------------------------------


def _load_node_config(path: str, limits: Limits) -> tuple[NodeContext, frozenset[str]]:
    """The ``NodeContext`` a ``--node-config`` file describes: one YAML or JSON mapping,
    read by the input layer (encodings, duplicate keys, alias and size limits); and the
    fields it sets (the rest are NodeContext's defaults, which --dry-run names)."""
    from kubelet_winnet._kubelet.node import NodeContext
    from kubelet_winnet.sources.manifests import BadInput, Named, read_source

    documents = []
    for found in read_source(Named(path), limits):  # --node-config names it: <(...) too
        if isinstance(found, BadInput):
            raise _UsageError(f"--node-config {found}")
        documents.append(found)
    if len(documents) != 1 or documents[0].item is not None:
        raise _UsageError(
            f"--node-config {path}: expected one mapping of NodeContext fields, "
            f"found {len(documents)} objects"
        )
    (document,) = documents
    try:
        from kubelet_winnet._kubelet.node import _snake

        given = frozenset(_snake(key) for key in document.value if isinstance(key, str))
        return NodeContext.from_mapping(document.value), given
    except WinnetError as exc:
        line = _field_line(document, getattr(exc, "argument", ""))
        raise _UsageError(f"--node-config {document.source}:{line}: {exc}") from None
    except TypeError:  # a value NodeContext cannot take at all
        raise _UsageError(
            f"--node-config {document.source}:{document.line}: a value of the wrong type"
        ) from None


def _field_line(document: Any, argument: str) -> int:
    """The line of the node-config key an error names (``node.bogus``, ``node_ips[1]``;
    keys may be camelCase), else the document's."""
    import re

    from kubelet_winnet._kubelet.node import _snake

    found = re.fullmatch(r"(?:node\.)?([^\[]+)(?:\[(\d+)\])?", argument)
    if found is None:
        return int(document.line)
    name, index = found.group(1), found.group(2)
    for key in document.value:
        if isinstance(key, str) and (key == name or _snake(key) == name):
            path = (key,) if index is None else (key, int(index))
            return int(document.line_of(path))
    return int(document.line)


def _namespace(document: Mapping[str, Any]) -> str:
    metadata = document.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return namespace if isinstance(namespace, str) and namespace else "default"


@dataclass
class _Objects:
    """ConfigMaps and Secrets of the input files: namespace -> name -> data."""

    config_maps: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    secrets: dict[str, dict[str, dict[str, bytes]]] = field(default_factory=dict)

    def add(self, document: Any, source: str) -> None:
        if not isinstance(document, Mapping) or document.get("kind") not in (
            "ConfigMap", "Secret",
        ):
            return
        metadata = document.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if not isinstance(name, str):
            return
        if document["kind"] == "Secret":  # data in base64, as the API server stores it
            from kubelet_winnet._kubelet.kubelet_pods import secret_data
            from kubelet_winnet.errors import InvalidArgumentError

            try:
                self.secrets.setdefault(_namespace(document), {})[name] = secret_data(
                    document, ""
                )
            except InvalidArgumentError as exc:
                raise _UsageError(f"{source}: {exc}") from None
            return
        data: dict[str, str] = {}
        raw = document.get("data") or {}
        if not isinstance(raw, Mapping):
            raise _UsageError(f"{source}: data: expected a mapping")
        for key, value in raw.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise _UsageError(f"{source}: data: expected string keys and values")
            data[key] = value
        self.config_maps.setdefault(_namespace(document), {})[name] = data


# --- one pod -------------------------------------------------------------------------------


def _enum_name(enum: Any, number: int) -> str:
    """The value's name, or its number: proto3 enums are open, a runtime may send any."""
    try:
        name: str = enum.Name(number)
    except ValueError:
        return str(number)
    return name


@dataclass
class _Settings:
    node: NodeContext
    kubelet_version: str
    feature_gates: str | None
    objects: _Objects
    out: TextIO
    given: frozenset[str] = frozenset()  # NodeContext fields --node-config sets
    node_config: str | None = None  # the --node-config path


def _volume_paths(pod: Any) -> dict[str, str]:
    """A visible stand-in for the host path of every volume whose path the kubelet's
    volume manager picks (PVC, CSI, ...), which this command cannot know."""
    from kubelet_winnet._kubelet.mounts import PLUGIN_DIRS
    from kubelet_winnet._kubelet.podview import get_objects, get_str, view_pod

    view = view_pod(pod)
    at = view.spec_at
    paths = {}
    for index, volume in enumerate(get_objects(view.spec, "volumes", at)):
        kinds = [key for key in volume if key != "name"]
        if kinds and kinds[0] not in PLUGIN_DIRS and kinds[0] != "hostPath":
            name = get_str(volume, "name", f"{at}volumes[{index}].")
            paths[name] = f"<the {kinds[0]} volume {name} as its plugin mounts it>"
    for name, _ in view.claims:  # a StatefulSet's claim templates: PVC volumes
        paths[name] = f"<the persistentVolumeClaim volume {name} as its plugin mounts it>"
    return paths


def _message_json(message: Any, kubelet: Any) -> dict[str, Any]:
    from kubelet_winnet._kubelet.messages import message_json

    return message_json(message, kubelet=kubelet)  # that release's names and types


def _dry_run_pod(pod: Any, namespace: str, settings: _Settings) -> tuple[dict[str, Any], int]:
    from kubelet_winnet._kubelet.container_config import PodRequests

    record: dict[str, Any] = {}
    requests = PodRequests(
        pod, node=settings.node, kubelet_version=settings.kubelet_version,
        feature_gates=settings.feature_gates,
    )
    record["runPodSandbox"] = _message_json(requests.run_pod_sandbox, requests.kubelet_version)
    record["createContainer"] = creates = []
    # Each CreateContainerRequest carries the same sandbox config: convert it once.
    sandbox = _message_json(requests.sandbox_config, requests.kubelet_version)
    volume_paths = _volume_paths(pod)
    for name in requests.names():
        try:
            config = requests.container_config(
                name, volume_paths=volume_paths,
                config_maps=settings.objects.config_maps.get(namespace, {}),
                secrets=settings.objects.secrets.get(namespace, {}),
            )
        except SandboxConfigError as exc:
            record["error"] = f"container {name}: CreateContainerConfigError: {exc}"
            return record, 1
        # MessageToDict of the request: an empty podSandboxId is left out.
        creates.append({
            "config": _message_json(config, requests.kubelet_version), "sandboxConfig": sandbox,
        })
    return record, 0


def _run_pod(
    pod: Any, namespace: str, settings: _Settings, runtime: RuntimeClient, cleanup: bool,
    out: _Lines,
) -> str | None:
    """Run one pod; why it stopped short (a container not created), else ``None``."""
    from cri_api.runtime.v1 import api_pb2
    from kubelet_winnet._kubelet.container_config import PodRequests
    from kubelet_winnet.cli.session import program

    requests = PodRequests(
        pod, node=settings.node, kubelet_version=settings.kubelet_version,
        feature_gates=settings.feature_gates,
    )
    request = requests.run_pod_sandbox
    names = requests.names()
    log_directory = request.config.log_directory
    if os.path.isabs(log_directory):  # the kubelet creates it before RunPodSandbox
        os.makedirs(log_directory, mode=0o755, exist_ok=True)
    sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
    try:
        status = runtime.pod_sandbox_status(sandbox_id).status
        network = _enum_name(api_pb2.NamespaceMode, status.linux.namespaces.options.network)
        out.say(f"sandbox {sandbox_id} {_enum_name(api_pb2.PodSandboxState, status.state)} "
                  f"network={network} ip={status.network.ip or '-'}")
        pod_ips = tuple(
            ip for ip in [status.network.ip, *(a.ip for a in status.network.additional_ips)] if ip
        )
        volume_paths = _volume_paths(pod)
        for name in names:
            wanted = requests.image(name)
            image = runtime.image_status(wanted).image
            if not image.id:
                reason = (f"container {name}: image {wanted!r} is not on the runtime "
                          f"({program()} run does not pull images)")
                out.say(reason)
                return reason
            try:
                create = requests.create_container(
                    name, pod_sandbox_id=sandbox_id, image_ref=image.id, pod_ips=pod_ips,
                    config_maps=settings.objects.config_maps.get(namespace, {}),
                    secrets=settings.objects.secrets.get(namespace, {}),
                    volume_paths=volume_paths,
                )
            except SandboxConfigError as exc:
                reason = f"container {name}: CreateContainerConfigError: {exc}"
                out.say(reason)
                return _waiting(reason)
            # No volume manager here prepares the volumes, hosts file and termination
            # log the mounts point at, so the runtime gets none (--dry-run shows them).
            del create.config.mounts[:]
            container_id = runtime.create_container(create).container_id
            runtime.start_container(container_id)
            state = runtime.container_status(container_id).status.state
            out.say(f"container {name} {container_id} "
                    f"{_enum_name(api_pb2.ContainerState, state)}")
        return None
    finally:
        if cleanup:
            runtime.stop_pod_sandbox(sandbox_id)
            runtime.remove_pod_sandbox(sandbox_id)
            out.say(f"removed sandbox {sandbox_id}")


# --- the command ---------------------------------------------------------------------------


def run_command(args: argparse.Namespace, session: Session) -> int:
    """``kubelet-winnet run``; returns the exit status."""
    from kubelet_winnet._kubelet.node import NodeContext
    from kubelet_winnet.cli.session import check_profile, limits_of, pods, report_skipped

    out = session.out
    try:
        if not args.dry_run and not args.runtime_endpoint:
            raise _UsageError("run: --runtime-endpoint is required unless --dry-run")
        if args.dry_run and args.cleanup:
            raise _UsageError("run: --cleanup needs a runtime; it cannot go with --dry-run")
        limits = limits_of(args)
        node, given = (
            _load_node_config(args.node_config, limits) if args.node_config
            else (NodeContext(), frozenset[str]())
        )
    except _UsageError as exc:
        session.error(str(exc))
        return session.status
    if not check_profile(args, session):
        return session.status
    from kubelet_winnet.cli.notes import InputNotes
    from kubelet_winnet.cli.session import input_paths

    objects = _Objects()
    inputs = InputNotes(session, limits.max_bytes, "run --dry-run")

    def keep(document: Document) -> None:
        inputs.document(document)
        try:
            objects.add(document.value, document.label)
        except _UsageError as exc:
            session.error(str(exc))

    with _copies([*args.paths, *args.filename], limits.max_bytes, session) as copies:
        if copies is None:  # said on stderr: nothing is read of an input half copied
            return session.status
        # Pass 1: every ConfigMap and Secret (a pod may come before the ConfigMap it
        # reads) and every input error, before anything is sent or printed; no pod is
        # kept. Pass 2 reads the pods again, one at a time, so memory follows the
        # largest document and the ConfigMaps, not the file.
        for item in pods(args, session, keep, inputs.bad, copies=copies):
            inputs.document(item.document)
        inputs.note_empty(input_paths(args))
        report_skipped(session)
        if session.status:
            return session.status
        again = argparse.Namespace(**{**vars(args), "verbose": False, "quiet": True})
        second = Session(session.out, session.err)  # counts and notes were pass 1's
        found = pods(again, second, None, inputs.bad, copies=copies)  # notes said once
        settings = _Settings(node, args.kubelet_version, args.feature_gates, objects, out,
                             given, args.node_config)
        if args.dry_run:
            status = _dry_run(found, settings, session)
        else:
            status = _run_all(found, settings, session, args)
        session.fail(second.status)
        return max(status, session.status)


def _run_all(
    found: Iterator[Pod], settings: _Settings, session: Session, args: argparse.Namespace
) -> int:
    from kubelet_winnet.cli.session import invalid_pod
    from kubelet_winnet.cri import RuntimeClient

    try:
        runtime = (
            RuntimeClient(args.runtime_endpoint) if args.runtime_request_timeout is None
            else RuntimeClient(args.runtime_endpoint, timeout=args.runtime_request_timeout)
        )
    except (WinnetError, ImportError) as exc:
        session.error(str(exc))
        return session.status
    with runtime:
        for index, item in enumerate(found):
            manifest = item.document.value
            out = _Lines(settings.out, f"# {item.pod.identity} ({item.document.label})")
            try:
                stopped = _run_pod(
                    manifest, _namespace(manifest), settings, runtime, args.cleanup, out,
                )
                if stopped is not None:  # the exit status says 1: stderr says why
                    session.err.write(printable(
                        f"{session.prog}: {item.where}: {item.pod.identity}: {stopped}"
                    ) + "\n")
                    session.fail(1)
            except SandboxConfigError as exc:
                out.say(f"error: Failed to create pod sandbox: {exc}")
                _refused(session, item, f"Failed to create pod sandbox: {exc}")
                session.fail(1)
            except CriError as exc:
                if exc.code == "UNAVAILABLE":  # no runtime there: once, not once per pod
                    left = session.pods - index  # pass 1 counted them
                    socket = args.runtime_endpoint.removeprefix("unix://")
                    why = (f"{socket} does not exist (is the runtime running?)"
                           if not os.path.exists(socket) else exc.details or exc.code)
                    session.error(
                        f"cannot reach the runtime at {args.runtime_endpoint}: "
                        f"{why}; {left} pod{'s' * (left != 1)} not run"
                    )
                    break
                out.say(f"error: {exc}")
                session.err.write(printable(
                    f"{session.prog}: {item.where}: {item.pod.identity}: the runtime "
                    f"failed: {exc}"
                ) + "\n")
                session.fail(1)
            except InvalidPodError as exc:
                invalid_pod(session, item.document, exc)
            except WinnetError as exc:
                session.error(f"{item.where}: document {item.document.document}: {exc}")
    return session.status


def _waiting(reason: str) -> str:
    """A container the kubelet cannot create yet: the pod is not refused, it waits."""
    return (f"the kubelet does not start it: {reason} (the pod waits in "
            "CreateContainerConfigError and the kubelet retries)")


def _refused(session: Session, item: Pod, text: str) -> None:
    """A pod the kubelet would refuse, on stderr (the exit status is 1 for it)."""
    session.err.write(printable(
        f"{session.prog}: {item.where}: {item.pod.identity}: the kubelet refuses it: {text}"
    ) + "\n")


def _stand_ins(item: Pod, metadata: Mapping[str, Any]) -> dict[str, str]:
    """What the requests carry in place of what the API server or a controller would
    give the pod, by field of the sandbox's ``metadata``: the uid a manifest lacks, the
    name of a workload's pods."""
    found: dict[str, str] = {}
    pod = item.pod
    name = str(metadata.get("name", ""))
    if pod.kind == "StatefulSet":
        spec = pod.manifest.get("spec")
        service = spec.get("serviceName") if isinstance(spec, dict) else None
        found["name"] = (
            f"the StatefulSet's name {name!r} stands in for its pods' names {name}-0, "
            f"{name}-1, ...; the controller also sets each pod's hostname to that name"
            + (f", its subdomain to {service!r}" if isinstance(service, str) and service
               else "")
            + " and adds the labels statefulset.kubernetes.io/pod-name and "
            "apps.kubernetes.io/pod-index, which these requests do not have"
        )
    elif pod.kind == "PodTemplate":
        found["name"] = f"the PodTemplate's name {name!r} stands in for a pod made from it"
    elif pod.kind != "Pod":
        found["name"] = (
            f"the {pod.kind}'s name {name!r} stands in for the pod's, which its controller "
            f"generates ({name}-...) along with the labels it adds"
        )
    if not metadata.get("uid"):
        found["uid"] = (
            "empty: the manifest has none (the API server assigns it when the pod is "
            "created), so the io.kubernetes.pod.uid label, the log directory and the pod "
            "directories of the mounts carry an empty uid too"
        )
    return found


class _Lines:
    """One pod's lines of run's text output. The ``# Pod ...`` header goes out with the
    first line after it, so a pod that fails with nothing to show for it (no runtime
    there, a pod that cannot be read) leaves the one error line on stderr alone. What a
    runtime sends is escaped (one rule for every text output, :mod:`kubelet_winnet._printable`)."""

    def __init__(self, out: TextIO, header: str) -> None:
        self._out = out
        self._header: str | None = header

    def say(self, text: str) -> None:
        if self._header is not None:
            self._out.write(printable(self._header) + "\n")
            self._header = None
        self._out.write(printable(text) + "\n")


def _temporary_copy() -> IO[bytes]:
    """An unlinked temporary file (``O_TMPFILE`` where the OS has it, else unlinked as
    soon as it is made): whatever signal ends the process, SIGKILL included, nothing of
    the input (possibly Secrets) stays in ``$TMPDIR``, and no handler is needed."""
    return tempfile.TemporaryFile(prefix="kubelet-winnet-run-")


@contextlib.contextmanager
def _copies(
    arguments: list[str], max_bytes: int, session: Session,
) -> Iterator[dict[str, IO[bytes]] | None]:
    """Arguments that cannot be read twice (stdin, FIFOs, devices), each copied to an
    unlinked temporary file, at most ``max_bytes`` + 1 bytes (the reader reports the
    excess). None, the error said, when a copy cannot be made: what was read of stdin
    is gone, so nothing is read from it at all rather than its rest."""
    from kubelet_winnet.sources.manifests import open_input, replayable

    copies: dict[str, IO[bytes]] = {}
    failure = ""
    with contextlib.ExitStack() as stack:
        for argument in dict.fromkeys(arguments):
            if replayable(argument):
                continue
            try:
                source = (sys.stdin.buffer if argument == "-"  # named: may be a stream
                          else open_input(argument, streams=True))
            except (OSError, AttributeError):
                continue  # pass 1 reports it
            if argument != "-":
                stack.callback(source.close)
            try:
                copies[argument] = _copy(source, stack, max_bytes)
            except _Uncopied as exc:
                name = "standard input" if argument == "-" else argument
                failure = f"cannot {exc.verb} {name}: {exc.reason}"
                break
        if failure:
            session.error(failure)
            yield None
        else:
            yield copies


def _discard(copy: IO[bytes]) -> None:
    # Closing flushes: a copy that failed to write fails again, and that is said already.
    with contextlib.suppress(OSError):
        copy.close()


class _Uncopied(Exception):
    def __init__(self, verb: str, exc: OSError) -> None:
        super().__init__(verb)
        self.verb = verb  # "read" the source or "copy" it (the write failed)
        self.reason = exc.strerror or str(exc) or type(exc).__name__


def _copy(source: IO[bytes], stack: contextlib.ExitStack, max_bytes: int) -> IO[bytes]:
    try:
        copy = _temporary_copy()
    except OSError as exc:  # no usable temporary directory
        raise _Uncopied("copy", exc) from None
    stack.callback(_discard, copy)
    left = max_bytes + 1
    while left > 0:
        try:
            chunk = source.read(min(left, 1 << 20))
        except OSError as exc:
            raise _Uncopied("read", exc) from None
        if not chunk:
            break
        try:
            copy.write(chunk)
        except OSError as exc:  # ENOSPC; EFBIG past RLIMIT_FSIZE (Python ignores SIGXFSZ)
            raise _Uncopied("copy", exc) from None
        left -= len(chunk)
    try:
        copy.flush()
    except OSError as exc:
        raise _Uncopied("copy", exc) from None
    return copy


# The NodeContext fields --dry-run names when it assumes them: (field, --node-config
# key, what it is). Left out: those whose default is nothing (no search domains, resolver
# options or RuntimeClass handlers) and resolvConfSet (true: the node's resolver is read).
_NODE_VALUES = (
    ("resolver_servers", "resolverServers", "the node's DNS server"),
    ("cluster_dns", "clusterDNS", "cluster DNS"),
    ("cluster_domain", "clusterDomain", "cluster domain"),
    ("node_name", "nodeName", "node name"),
    ("hostname", "hostname", "hostname"),
    ("node_ips", "nodeIPs", "node IP"),
    ("pod_logs_dir", "podLogsDir", "pod log directory"),
    ("kubelet_root", "kubeletRoot", "kubelet root directory"),
    ("processor_count", "processorCount", "logical CPUs"),
    ("allocatable_cpu", "allocatableCpu", "allocatable CPU"),
    ("allocatable_memory", "allocatableMemory", "allocatable memory"),
    ("allocatable_ephemeral_storage", "allocatableEphemeralStorage",
     "allocatable ephemeral storage"),
)


def _assumed_note(settings: _Settings, without_uid: int) -> str | None:
    """One line naming every value the requests carry that nothing given set: the
    NodeContext defaults (a typical node, its DNS server Azure's 168.63.129.16) and the
    empty uid of a pod without ``metadata.uid``; each with the key that sets it."""
    values = []
    for name, key, what in _NODE_VALUES:
        if name in settings.given:
            continue
        value = getattr(settings.node, name)
        shown = ", ".join(value) if isinstance(value, tuple) else str(value)
        values.append(f"{what} {shown} ({key})")
    parts = []
    if values:
        parts.append(
            ("assumed a node (set each with --node-config FILE, key in parentheses): "
             if settings.node_config is None else
             f"assumed what --node-config {settings.node_config} does not set (key in "
             "parentheses): ") + ", ".join(values)
        )
    if without_uid:
        parts.append(
            f"gave {without_uid} pod{'s' * (without_uid != 1)} without metadata.uid an "
            "empty pod uid (set metadata.uid in the manifest to give one)"
        )
    return "run --dry-run " + "; ".join(parts) if parts else None


def _dry_run(found: Iterator[Pod], settings: _Settings, session: Session) -> int:
    from kubelet_winnet.cli.session import JsonArray, invalid_pod

    array = JsonArray(settings.out)
    built = 0  # pods whose requests were built
    without_uid = 0
    for item in found:
        manifest = item.document.value
        record: dict[str, Any] = {
            "source": item.document.label, "line": item.document.line,
            "pod": item.pod.identity,
        }
        try:
            requests, code = _dry_run_pod(manifest, _namespace(manifest), settings)
            record.update(requests)
            stand_ins = _stand_ins(item, requests["runPodSandbox"]["config"]["metadata"])
            if stand_ins:
                record["standIns"] = stand_ins
            built += 1
            without_uid += "uid" in stand_ins
            session.fail(code)
        except SandboxConfigError as exc:
            record["error"] = f"Failed to create pod sandbox: {exc}"
            session.fail(1)
        except InvalidPodError as exc:
            invalid_pod(session, item.document, exc)
            record["invalid"] = str(exc)
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            record["invalid"] = str(exc)
        if "error" in record:  # the exit status says 1: stderr says why
            error = record["error"]
            session.err.write(printable(
                f"{session.prog}: {item.where}: {item.pod.identity}: "
                + (_waiting(error) if "createContainer" in record else
                   f"the kubelet refuses it: {error}")
            ) + "\n")
        array.add(record)
    array.close()
    note = _assumed_note(settings, without_uid) if built else None
    if note is not None:
        session.note(note)
    return session.status


COMMAND = Command("run", configure_run, run_command)
