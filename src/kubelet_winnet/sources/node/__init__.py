"""Files copied off one Windows node, read as the node's components read them.

`read_node` takes files and directories and sorts each file by what it holds:
``config.toml`` (containerd), CNI ``.conf``/``.conflist``, ``KubeletConfiguration`` /
``KubeProxyConfiguration`` / ``Node`` documents (YAML or JSON), ``netsh`` outputs and
command-line flag files. Every problem is a one-line `NodeConfigError` naming the
file and line; the other files are still read.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import CniNetwork, NodeFacts
from kubelet_winnet.sources.manifests import (
    BadInput,
    Limits,
    Named,
    read_source,
    replayable,
)
from kubelet_winnet.sources.node._text import read_text, refuse_template
from kubelet_winnet.sources.node.cni import CNI_SUFFIXES, read_cni
from kubelet_winnet.sources.node.containerd import ContainerdConfig, parse_containerd
from kubelet_winnet.sources.node.kube import (
    ComponentConfig,
    NodeObject,
    component_from_document,
    node_from_document,
    parse_commands,
)
from kubelet_winnet.sources.node.netsh import PortRanges, parse_netsh

__all__ = ["MAX_FILES", "NODE_LIMITS", "NodeFiles", "read_node"]

MAX_FILES = 1000  # files looked at per node: a node's configuration is a handful
MAX_ENTRIES = 10_000  # folders (and passed-by entries) a directory search looks at
# A node's files are kilobytes (a Node object with its image list tens of them); the
# manifests' 256 MiB default would only let a wrong path (a log, a disk image) take time,
# and tomllib, pure Python, takes seconds per MiB of the worst TOML shapes.
NODE_LIMITS = Limits(max_bytes=1024 * 1024)
_DOCUMENTS = (".yaml", ".yml", ".json")


@dataclass
class NodeFiles:
    """What one node's files say; ``errors`` the files that could not be read;
    ``read_as`` what each file was read as (file, one phrase), in the order read."""

    containerd: ContainerdConfig | None = None
    cni: list[CniNetwork] = field(default_factory=list)  # in file-name order
    kubelet: ComponentConfig | None = None
    proxy: ComponentConfig | None = None
    # (kind, protocol): ("excluded", "tcp"), ("dynamic", "udp"), ...
    ports: dict[tuple[str, str], PortRanges] = field(default_factory=dict)
    node: NodeObject | None = None
    errors: list[NodeConfigError] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: int = 0
    read_as: list[tuple[str, str]] = field(default_factory=list)
    refused_cni: list[str] = field(default_factory=list)  # CNI files libcni cannot load
    # A component's flags beside its configuration file: both are read at start-up.
    more: list[ComponentConfig] = field(default_factory=list)

    @property
    def excluded(self) -> PortRanges | None:
        """The TCP excluded port ranges (what hostPorts and NodePorts mostly are)."""
        return self.ports.get(("excluded", "tcp"))

    @property
    def dynamic(self) -> PortRanges | None:
        return self.ports.get(("dynamic", "tcp"))

    @property
    def components(self) -> list[ComponentConfig]:
        """The kubelet's and kube-proxy's configuration files and flags, each on its own."""
        return [c for c in (self.kubelet, self.proxy) if c is not None] + self.more

    @property
    def network(self) -> CniNetwork | None:
        """The network containerd loads: the first file in name order (max_conf_num 1);
        None when that file is one libcni cannot load (go-cni stops there)."""
        if not self.cni:
            return None
        first = min(self.cni, key=lambda n: os.path.basename(n.source))
        if any(os.path.basename(p) < os.path.basename(first.source) for p in self.refused_cni):
            return None
        return first

    @property
    def facts(self) -> NodeFacts:
        """What the node's own files give the planner and the judgement (containerd's
        handlers and default handler, the CNI network, excluded and dynamic port ranges,
        the runtime its Node object reports); defaults where a file is missing."""
        return self.node_facts()

    def node_facts(self, runtime: str = "") -> NodeFacts:
        """`facts`, with ``runtime`` (``--runtime``) standing in when no Node
        object says which runtime the node has."""
        kwargs: dict[str, object] = {}
        if self.node is not None and self.node.runtime:
            kwargs["runtime"] = self.node.runtime
        elif runtime:
            kwargs["runtime"] = runtime
        if self.containerd is None:
            kwargs["handlers_read"] = False  # containerd's defaults, assumed
        else:
            handlers = self.containerd.handlers()
            kwargs["handlers"] = handlers
            if self.containerd.default_handler in handlers:  # else containerd refuses to
                kwargs["default_handler"] = self.containerd.default_handler  # start (a finding)
        dynamic = self.dynamic or self.ports.get(("dynamic", "udp"))
        return NodeFacts(
            cni=self.network,
            excluded_ports=tuple(r for (kind, _), output in sorted(self.ports.items())
                                 if kind == "excluded" for r, _ in output.ranges),
            dynamic_ports=dynamic.ranges[0][0] if dynamic is not None else None,
            **kwargs,  # type: ignore[arg-type]
        )

    @property
    def empty(self) -> bool:
        """No file was read as a node file (nothing to judge)."""
        return not self.cni and not self.ports and all(
            getattr(self, name) is None for name in ("containerd", "kubelet", "proxy", "node"))

    def _set(self, name: str, value: object, source: str) -> None:
        first = getattr(self, name)
        if isinstance(first, ComponentConfig) and isinstance(value, ComponentConfig) \
                and (first.flags or value.flags):
            # --config's file and the command line (a start script, kubeadm-flags.env
            # that it reads): each counts; two configuration files are one too many.
            self.more.append(value)
            return
        if first is not None:
            self.errors.append(_second(_KINDS[name], getattr(first, "source", "?"), source))
            return
        setattr(self, name, value)

    def _set_ports(self, output: PortRanges) -> None:
        key = (output.kind, output.protocol)
        first = self.ports.get(key)
        if first is not None:
            self.errors.append(_second(f"netsh {output.protocol.upper()} {output.kind} port "
                                       "range output", first.source, output.source))
            return
        self.ports[key] = output


def _second(kind: str, earlier: str, source: str) -> NodeConfigError:
    return NodeConfigError(source, f"a second {kind} for one node (the first is "
                           + ("earlier in this file" if earlier == source else earlier)
                           + "); give one node's files")


_KINDS = {"containerd": "containerd config.toml", "kubelet": "kubelet configuration",
          "proxy": "kube-proxy configuration", "node": "Node object"}


def _walk(top: str, found: NodeFiles, room: int) -> list[str] | None:
    """The regular files under ``top`` (name order, each folder's files before its
    subfolders), or None once there are more than ``room`` files or ``MAX_ENTRIES``
    entries in all: the search stops there, so ``/`` is not listed whole to be refused.
    Links to folders are not followed (as ``os.walk``)."""
    out: list[str] = []
    looked = 0
    stack = [top]
    while stack:
        folder = stack.pop()
        files: list[str] = []
        folders: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    looked += 1
                    if looked > MAX_ENTRIES:
                        return None
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(entry.name)
                    elif not entry.is_symlink():
                        folders.append(entry.name)
        except OSError as exc:
            found.errors.append(NodeConfigError(
                folder, f"cannot read: {exc.strerror or type(exc).__name__}"))
            continue
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not replayable(path):  # opening a FIFO waits for a writer, maybe forever
                found.skipped.append(
                    f"{path}: skipped: not a regular file (a FIFO, socket or device; a "
                    "directory search reads regular files only, name it as an argument "
                    "to read it)")
                continue
            out.append(path)
            if len(out) > room:
                return None
        stack.extend(os.path.join(folder, name) for name in sorted(folders, reverse=True))
    return out


def _files(paths: list[str], found: NodeFiles) -> list[str]:
    out: list[str] = []
    for path in paths:
        notes = len(found.skipped)
        walked = (_walk(path, found, MAX_FILES - len(out)) if os.path.isdir(path)
                  else [Named(path)])  # a file named as itself may be a stream
        if walked is None or len(out) + len(walked) > MAX_FILES:
            del found.skipped[notes:]  # nothing under it is read: no note about its parts
            found.errors.append(NodeConfigError(
                path, f"more than {MAX_FILES} files or {MAX_ENTRIES} entries: the search "
                "stopped there and nothing under it was read; give one node's folder or "
                "its files"))
            continue
        out.extend(walked)
    return out


def _documents(path: str, found: NodeFiles, limits: Limits, text: str) -> list[str]:
    """A YAML or JSON file's documents, from ``text``, the file as read once (a FIFO
    named as a node file cannot be read twice); what each was read as."""
    read: list[str] = []
    others: list[tuple[str, str]] = []  # (label, kind shown) of documents not node files
    for item in read_source(io.BytesIO(text.encode("utf-8")), limits, label=path):
        if isinstance(item, BadInput):
            where = f"{item.source}:{item.line}" if item.line else item.source
            found.errors.append(NodeConfigError(where, item.reason))
            continue
        if "kind" not in item.value and any(  # YAML reads a no-break space into the key
                isinstance(key, str) and key.strip().strip("\"'") == "cniVersion"
                for key in item.value):
            if len(read) or others:  # libcni reads one JSON value per file
                raise NodeConfigError(f"{path}:{item.line}", "more than one JSON value in a "
                                      "CNI file")
            network = _cni(path, found, limits)  # as libcni reads the file, not as YAML
            found.cni.append(network)
            read.append(_describe_cni(network))
            continue
        component = component_from_document(item)
        if component is not None:
            found._set("kubelet" if component.component == "kubelet" else "proxy", component,
                       path)
            read.append("KubeletConfiguration" if component.component == "kubelet"
                        else "KubeProxyConfiguration")
            continue
        node = node_from_document(item)
        if node is not None:
            found._set("node", node, path)
            read.append(f"Node object {node.name!r}")
            continue
        kind = repr(item.value.get("kind"))
        others.append((item.label, cut(kind, 60)))
    if len(others) == 1:
        found.skipped.append(f"{others[0][0]}: not a node file (kind {others[0][1]})")
    elif others:  # one note per file, not per object (a cluster dump given by mistake)
        kinds = list(dict.fromkeys(kind for _, kind in others))
        shown = ", ".join(kinds[:5]) + (f" and {len(kinds) - 5} more" if len(kinds) > 5 else "")
        found.skipped.append(f"{path}: {len(others)} documents are not node files "
                             f"(kinds {shown})")
    if others:
        read.append(f"{len(others)} document{'' if len(others) == 1 else 's'} that "
                    f"{'is' if len(others) == 1 else 'are'} not node files")
    return read


def _cni(path: str, found: NodeFiles, limits: Limits) -> CniNetwork:
    try:
        return read_cni(path, limits)
    except NodeConfigError:
        found.refused_cni.append(str(path))
        raise


def _describe_cni(network: CniNetwork) -> str:
    types = list(dict.fromkeys(cut(p.type, 40) for p in network.plugins))
    shown = ", ".join(types[:4]) + (f" and {len(types) - 4} more" if len(types) > 4 else "")
    name = cut(network.name, 60)
    return f"CNI network {name!r} (plugins: {shown})"


def _netsh(outputs: list[PortRanges], path: str, found: NodeFiles) -> list[str]:
    """Keep the last output of each kind and protocol: a file saved before and after a
    change holds both, and the last is the node's current state."""
    last: dict[tuple[str, str], PortRanges] = {}
    earlier: dict[tuple[str, str], list[int]] = {}
    for output in outputs:
        key: tuple[str, str] = (output.kind, output.protocol)
        if key in last:
            earlier.setdefault(key, []).append(last[key].line)
        last[key] = output
    for key, lines in earlier.items():
        kept = last[key]
        count = len(lines) + 1
        found.skipped.append(
            f"{path}: {count} netsh {key[1].upper()} {key[0]} port range outputs (lines "
            f"{', '.join(map(str, lines[:5]))}{' ...' if len(lines) > 5 else ''} and "
            f"{kept.line}): the last, at line {kept.line}, is read as the node's current state")
    for output in last.values():
        found._set_ports(output)
    return [o.describe() + (f" (the last of {len(earlier[k]) + 1}, line {o.line})"
                            if k in earlier else "") for k, o in last.items()]


def _text_file(path: str, text: str, found: NodeFiles) -> list[str]:
    outputs = parse_netsh(text, path)
    if outputs is not None:
        return _netsh(outputs, path, found)
    commands = parse_commands(text, path) if "--" in text else []
    for flags in commands:  # a script that starts both gives each its own flags
        found._set("kubelet" if flags.component == "kubelet" else "proxy", flags, path)
    if commands:
        return [f"{flags.component} command-line flags" for flags in commands]
    found.skipped.append(f"{path}: neither netsh output nor command-line flags")
    return []


def _read_one(path: str, found: NodeFiles, limits: Limits) -> list[str]:
    """Read one file into ``found``; what it was read as (empty: not a node file)."""
    lower = path.lower()
    if lower.endswith(CNI_SUFFIXES[:2]):
        network = _cni(path, found, limits)
        found.cni.append(network)
        return [_describe_cni(network)]
    if lower.endswith(_DOCUMENTS):
        text = read_text(path, limits)
        refuse_template(text, path)
        return _documents(str(path), found, limits, text)
    text = read_text(path, limits)
    path = str(path)  # read: a Named path's mark is done with
    refuse_template(text, path)
    if lower.endswith(".toml"):
        config = parse_containerd(text, path, limits.max_depth)
        found._set("containerd", config, path)
        tables = len(config.runtimes)
        return [f"containerd config.toml, schema version {config.version}, {tables} runtime "
                f"table{'' if tables == 1 else 's'}"]
    return _text_file(path, text, found)


def read_node(paths: list[str], limits: Limits = NODE_LIMITS) -> NodeFiles:
    """Read one node's files (directories searched) as ``kubelet-winnet node`` reads them:
    ``.facts`` is what they give the judgement, ``.read_as`` what each file was read as,
    ``.errors`` a `NodeConfigError` (file:line) for each file that could not be
    read. Never raises for a bad file; a wrong argument is ``InvalidArgumentError``."""
    _check_paths(paths, limits)
    found = NodeFiles()
    for path in _files(paths, found):
        found.files += 1
        try:
            read = _read_one(path, found, limits)
        except NodeConfigError as exc:
            found.errors.append(exc)
            read = [f"not read: {exc.reason}"]
        except MemoryError:  # bounded inputs should not get here; if one does, one line
            refused = NodeConfigError(path, "too large to read in this process's memory; "
                                      "give the node's own file")
            found.errors.append(refused)
            read = [f"not read: {refused.reason}"]
        found.read_as.append((str(path), "; ".join(read) if read else "not a node file"))
    return found


def _check_paths(paths: object, limits: object) -> None:
    from kubelet_winnet._describe import type_name
    from kubelet_winnet.errors import InvalidArgumentError

    if not isinstance(paths, (list, tuple)):
        raise InvalidArgumentError("paths", "a list of paths", type_name(paths))
    for index, path in enumerate(paths):
        if not isinstance(path, str):
            raise InvalidArgumentError(f"paths[{index}]", "a path string", type_name(path))
    if not isinstance(limits, Limits):
        raise InvalidArgumentError("limits", "a Limits", type_name(limits))
