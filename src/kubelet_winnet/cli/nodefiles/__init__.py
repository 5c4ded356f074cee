"""Files copied off one Windows node, read as the node's components read them.

:func:`read_node` takes files and directories and sorts each file by what it holds:
``config.toml`` (containerd), CNI ``.conf``/``.conflist``, ``KubeletConfiguration`` /
``KubeProxyConfiguration`` / ``Node`` documents (YAML or JSON), ``netsh`` outputs and
command-line flag files. Every problem is a one-line :class:`NodeConfigError` naming the
file and line; the other files are still read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kubelet_winnet.cli.input import DEFAULT_LIMITS, BadInput, Limits, read_source, replayable
from kubelet_winnet.cli.nodefiles._text import read_text
from kubelet_winnet.cli.nodefiles.cni import CNI_SUFFIXES, parse_cni, read_cni
from kubelet_winnet.cli.nodefiles.containerd import ContainerdConfig, parse_containerd
from kubelet_winnet.cli.nodefiles.kube import (
    ComponentConfig,
    NodeObject,
    component_from_document,
    node_from_document,
    parse_commands,
)
from kubelet_winnet.cli.nodefiles.netsh import PortRanges, parse_netsh
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import CniNetwork, NodeFacts

__all__ = ["MAX_FILES", "NODE_LIMITS", "NodeFiles", "read_node"]

MAX_FILES = 1000  # files looked at per node: a node's configuration is a handful
# A node's files are kilobytes; the manifests' 256 MiB default would only let a wrong
# path (a log, a disk image) take time.
NODE_LIMITS = Limits(max_bytes=16 * 1024 * 1024)
_DOCUMENTS = (".yaml", ".yml", ".json")


@dataclass
class NodeFiles:
    """What one node's files say; ``errors`` the files that could not be read."""

    containerd: ContainerdConfig | None = None
    cni: list[CniNetwork] = field(default_factory=list)  # in file-name order
    kubelet: ComponentConfig | None = None
    proxy: ComponentConfig | None = None
    excluded: PortRanges | None = None
    dynamic: PortRanges | None = None
    node: NodeObject | None = None
    errors: list[NodeConfigError] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: int = 0
    # A component's flags beside its configuration file: both are read at start-up.
    more: list[ComponentConfig] = field(default_factory=list)

    @property
    def components(self) -> list[ComponentConfig]:
        """The kubelet's and kube-proxy's configuration files and flags, each on its own."""
        return [c for c in (self.kubelet, self.proxy) if c is not None] + self.more

    @property
    def network(self) -> CniNetwork | None:
        """The network containerd loads: the first file in name order (max_conf_num 1)."""
        return min(self.cni, key=lambda n: os.path.basename(n.source)) if self.cni else None

    def facts(self, runtime: str = "") -> NodeFacts:
        """The planner's view of this node (defaults where a file is missing); ``runtime``
        (``--runtime``) stands in when no Node object says which runtime the node has."""
        kwargs: dict[str, object] = {}
        if self.node is not None and self.node.runtime:
            kwargs["runtime"] = self.node.runtime
        elif runtime:
            kwargs["runtime"] = runtime
        if self.containerd is not None:
            handlers = self.containerd.handlers()
            kwargs["handlers"] = handlers
            if self.containerd.default_handler in handlers:  # else containerd refuses to
                kwargs["default_handler"] = self.containerd.default_handler  # start (a finding)
        return NodeFacts(
            cni=self.network,
            excluded_ports=tuple(r for r, _ in self.excluded.ranges) if self.excluded else (),
            dynamic_ports=self.dynamic.ranges[0][0] if self.dynamic and self.dynamic.ranges
            else None,
            **kwargs,  # type: ignore[arg-type]
        )

    @property
    def empty(self) -> bool:
        """No file was read as a node file (nothing to judge)."""
        return not self.cni and all(
            getattr(self, name) is None
            for name in ("containerd", "kubelet", "proxy", "excluded", "dynamic", "node"))

    def _set(self, name: str, value: object, source: str) -> None:
        first = getattr(self, name)
        if isinstance(first, ComponentConfig) and isinstance(value, ComponentConfig) \
                and (first.flags or value.flags):
            # --config's file and the command line (a start script, kubeadm-flags.env
            # that it reads): each counts; two configuration files are one too many.
            self.more.append(value)
            return
        if first is not None:
            earlier = getattr(first, "source", "?")
            self.errors.append(NodeConfigError(
                source, f"a second {_KINDS[name]} for one node (the first is "
                + ("earlier in this file" if earlier == source else earlier)
                + "); give one node's files"))
            return
        setattr(self, name, value)


_KINDS = {"containerd": "containerd config.toml", "kubelet": "kubelet configuration",
          "proxy": "kube-proxy configuration", "excluded": "netsh excluded port ranges output",
          "dynamic": "netsh dynamic port range output", "node": "Node object"}


def _files(paths: list[str], found: NodeFiles) -> list[str]:
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    found_path = os.path.join(root, name)
                    if replayable(found_path):
                        out.append(found_path)
                    else:  # opening a FIFO waits for a writer, maybe forever
                        found.skipped.append(
                            f"{found_path}: skipped: not a regular file (a FIFO, socket or "
                            "device; a directory search reads regular files only, name it "
                            "as an argument to read it)")
        else:
            out.append(path)
        if len(out) > MAX_FILES:
            found.errors.append(NodeConfigError(
                path, f"more than {MAX_FILES} files: name the node's files, not a whole disk"))
            return out[:MAX_FILES]
    return out


def _documents(path: str, found: NodeFiles, limits: Limits = DEFAULT_LIMITS) -> None:
    others: list[tuple[str, str]] = []  # (label, kind shown) of documents not node files
    for item in read_source(path, limits):
        if isinstance(item, BadInput):
            where = f"{item.source}:{item.line}" if item.line else item.source
            found.errors.append(NodeConfigError(where, item.reason))
            continue
        if "cniVersion" in item.value and "kind" not in item.value:
            found.cni.append(parse_cni(item.value, path, item.line_of))
            continue
        component = component_from_document(item)
        if component is not None:
            found._set("kubelet" if component.component == "kubelet" else "proxy", component,
                       path)
            continue
        node = node_from_document(item)
        if node is not None:
            found._set("node", node, path)
            continue
        kind = repr(item.value.get("kind"))
        others.append((item.label, kind if len(kind) <= 60 else kind[:57] + "..."))
    if len(others) == 1:
        found.skipped.append(f"{others[0][0]}: not a node file (kind {others[0][1]})")
    elif others:  # one note per file, not per object (a cluster dump given by mistake)
        kinds = list(dict.fromkeys(kind for _, kind in others))
        shown = ", ".join(kinds[:5]) + (f" and {len(kinds) - 5} more" if len(kinds) > 5 else "")
        found.skipped.append(f"{path}: {len(others)} documents are not node files "
                             f"(kinds {shown})")


def _text_file(path: str, found: NodeFiles, limits: Limits) -> None:
    text = read_text(path, limits)
    ranges = parse_netsh(text, path)
    if ranges is not None:
        found._set(ranges.kind, ranges, path)
        return
    commands = parse_commands(text, path) if "--" in text else []
    for flags in commands:  # a script that starts both gives each its own flags
        found._set("kubelet" if flags.component == "kubelet" else "proxy", flags, path)
    if commands:
        return
    found.skipped.append(f"{path}: neither netsh output nor command-line flags")


def read_node(paths: list[str], limits: Limits = NODE_LIMITS) -> NodeFiles:
    """Read one node's files (directories searched); never raises for a bad file."""
    found = NodeFiles()
    for path in _files(paths, found):
        found.files += 1
        lower = path.lower()
        try:
            if lower.endswith(".toml"):
                found._set("containerd", parse_containerd(read_text(path, limits), path,
                                                          limits.max_depth), path)
            elif lower.endswith(CNI_SUFFIXES[:2]):
                found.cni.append(read_cni(path, limits))
            elif lower.endswith(_DOCUMENTS):
                _documents(path, found, limits)
            else:
                _text_file(path, found, limits)
        except NodeConfigError as exc:
            found.errors.append(exc)
    return found
