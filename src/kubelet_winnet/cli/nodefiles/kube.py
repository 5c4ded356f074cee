"""The Kubernetes side of a node: ``KubeletConfiguration`` and ``KubeProxyConfiguration``
(YAML or JSON, through the input layer), the same settings as a file of command-line
flags, and the ``Node`` object (``kubectl get node NAME -o json``).

Only what the node rules read is kept: feature gates, kube-proxy's mode and
``winkernel.enableDSR``, and the node's name, versions and OS build, each with its line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubelet_winnet.cli.input import Document
from kubelet_winnet.cli.nodefiles._text import read_text
from kubelet_winnet.errors import NodeConfigError

__all__ = [
    "ComponentConfig",
    "NodeObject",
    "component_from_document",
    "node_from_document",
    "parse_flags",
    "read_flags",
]

Component = Literal["kubelet", "kube-proxy"]
# Flags only kube-proxy has, of those a Windows start script passes (kube-proxy --help).
_PROXY_FLAGS = frozenset({"proxy-mode", "enable-dsr", "network-name", "source-vip",
                          "cluster-cidr", "masquerade-all", "bind-address"})


@dataclass(frozen=True)
class ComponentConfig:
    """One component's settings: ``gates`` name -> (value, line); ``mode`` and
    ``enable_dsr`` for kube-proxy (value, line) or None when not set."""

    component: Component
    source: str
    gates: Mapping[str, tuple[bool, int]] = field(default_factory=dict)
    mode: tuple[str, int] | None = None
    enable_dsr: tuple[bool, int] | None = None
    line: int = 1


@dataclass(frozen=True)
class NodeObject:
    source: str
    name: str
    kubelet_version: str
    runtime: str  # containerRuntimeVersion
    os: str  # nodeInfo.operatingSystem
    kernel: str  # nodeInfo.kernelVersion: 10.0.26100.x is Windows Server 2025
    annotations: Mapping[str, str]
    line: int
    kubelet_version_line: int = 0  # of status.nodeInfo.kubeletVersion


def _gates(value: Any, document: Document) -> dict[str, tuple[bool, int]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        line = document.line_of(("featureGates",))
        raise NodeConfigError(f"{document.source}:{line}", "featureGates must be a map of booleans")
    gates: dict[str, tuple[bool, int]] = {}
    for name, on in value.items():
        line = document.line_of(("featureGates", name))
        if type(on) is not bool:
            raise NodeConfigError(f"{document.source}:{line}",
                                  f"featureGates.{name} must be true or false")
        gates[name] = (on, line)
    return gates


def component_from_document(document: Document) -> ComponentConfig | None:
    """A ``KubeletConfiguration`` or ``KubeProxyConfiguration`` document, or None for
    any other kind."""
    value = document.value
    kind = value.get("kind")

    def where(path: tuple[str | int, ...]) -> str:
        return f"{document.source}:{document.line_of(path)}"

    if kind == "KubeletConfiguration":
        return ComponentConfig("kubelet", document.source,
                               _gates(value.get("featureGates"), document), line=document.line)
    if kind != "KubeProxyConfiguration":
        return None
    mode = value.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise NodeConfigError(where(("mode",)), "mode must be a string")
    winkernel = value.get("winkernel")
    dsr = winkernel.get("enableDSR") if isinstance(winkernel, dict) else None
    if dsr is not None and type(dsr) is not bool:
        raise NodeConfigError(where(("winkernel", "enableDSR")), "enableDSR must be true or false")
    return ComponentConfig(
        "kube-proxy", document.source, _gates(value.get("featureGates"), document),
        (mode, document.line_of(("mode",))) if mode is not None else None,
        (dsr, document.line_of(("winkernel", "enableDSR"))) if dsr is not None else None,
        document.line,
    )


_FLAG = re.compile(r"--([A-Za-z0-9-]+)(?:=(.*))?", re.DOTALL)
_BOOL = {"true": True, "false": False, "1": True, "0": False, "t": True, "f": False}


# A shell word: unquoted runs, 'literal' and "escaped" quotes, backslash pairs (POSIX
# sh rules, as shlex.split(posix=True) reads them, in linear time: shlex grows each word
# a character at a time, quadratic in its length).
_WORD = re.compile(r"""(?:[^\s'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+""", re.DOTALL)
_PIECE = re.compile(r"""[^\s'"\\]+|'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.DOTALL)
_IN_QUOTES = re.compile(r'\\(["\\])')


def _split(line: str) -> list[str]:
    """The words of one line; ``#`` at a word's start begins a comment. ValueError for
    an unclosed quote or a trailing backslash."""
    words: list[str] = []
    position, size = 0, len(line)
    while True:
        while position < size and line[position].isspace():
            position += 1
        if position >= size or line[position] == "#":
            return words
        match = _WORD.match(line, position)
        if match is None or (match.end() < size and not line[match.end()].isspace()):
            stop = match.end() if match is not None else position
            raise ValueError("no escaped character" if line[stop] == "\\"
                             else "no closing quotation")
        parts: list[str] = []
        for piece in _PIECE.finditer(match[0]):
            single, double, escaped = piece.groups()
            if single is not None:
                parts.append(single)
            elif double is not None:
                parts.append(_IN_QUOTES.sub(r"\1", double))
            elif escaped is not None:
                parts.append(escaped)
            else:
                parts.append(piece[0])
        words.append("".join(parts))
        position = match.end()


def parse_flags(text: str, source: str, component: Component | None = None) -> ComponentConfig:
    """Command-line flags as a start script passes them (one or many per line, quoted as
    a shell or PowerShell would; ``#`` starts a comment). ``component`` None: kube-proxy
    when a kube-proxy-only flag is present, else kubelet."""
    flags: list[tuple[str, str, int]] = []
    for number, line in enumerate(text.split("\n"), 1):
        try:
            words = _split(line.replace("`", " "))
        except ValueError as exc:
            raise NodeConfigError(f"{source}:{number}", f"cannot split the flags: {exc}") from None
        for index, word in enumerate(words):
            # A PowerShell array ("--a=1", "--b=2") leaves a comma after each word.
            match = _FLAG.fullmatch(word.rstrip(",").strip("'\""))
            if match is None:
                continue
            value = match[2]
            if value is None:  # "--flag value" when the next word is no flag
                following = words[index + 1] if index + 1 < len(words) else ""
                value = following if following and not following.startswith("-") else "true"
            flags.append((match[1], value.strip("'\""), number))
    if component is None:
        component = "kube-proxy" if any(name in _PROXY_FLAGS for name, _, _ in flags) else "kubelet"
    gates: dict[str, tuple[bool, int]] = {}
    mode: tuple[str, int] | None = None
    dsr: tuple[bool, int] | None = None
    for name, value, number in flags:
        if name == "feature-gates":
            for item in filter(None, (part.strip() for part in value.split(","))):
                gate, sep, setting = item.partition("=")
                on = _BOOL.get(setting.strip().lower()) if sep else None
                if on is None:
                    raise NodeConfigError(f"{source}:{number}",
                                          f"--feature-gates {item!r}: expected NAME=true|false")
                gates[gate.strip()] = (on, number)
        elif name == "proxy-mode":
            mode = (value, number)
        elif name == "enable-dsr":
            on = _BOOL.get(value.lower())
            if on is None:
                raise NodeConfigError(f"{source}:{number}",
                                      f"--enable-dsr={value!r}: expected true or false")
            dsr = (on, number)
    return ComponentConfig(component, source, gates, mode, dsr)


def read_flags(path: str, component: Component | None = None) -> ComponentConfig:
    return parse_flags(read_text(path), path, component)


def node_from_document(document: Document) -> NodeObject | None:
    """A ``Node`` object (``kubectl get node NAME -o json``), or None for another kind."""
    value = document.value
    if value.get("kind") != "Node":
        return None
    metadata: dict[str, Any] = value["metadata"] if isinstance(value.get("metadata"), dict) else {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise NodeConfigError(f"{document.source}:{document.line}", "a Node without metadata.name")
    # What kubectl never writes is refused, not read as "not given": a default kubelet
    # or runtime would then judge the node in silence.
    def where(*path: str) -> str:
        return f"{document.source}:{document.line_of(path) or document.line}"

    status = value.get("status", {})
    if not isinstance(status, dict):
        raise NodeConfigError(where("status"), "status must be an object")
    info = status.get("nodeInfo", {})
    if not isinstance(info, dict):
        raise NodeConfigError(where("status", "nodeInfo"), "status.nodeInfo must be an object")
    annotations = metadata.get("annotations")

    def text(key: str) -> str:
        found = info.get(key, "")
        if not isinstance(found, str):
            raise NodeConfigError(where("status", "nodeInfo", key),
                                  f"status.nodeInfo.{key} must be a string")
        return found

    return NodeObject(
        document.source, name, text("kubeletVersion"), text("containerRuntimeVersion"),
        text("operatingSystem"), text("kernelVersion"),
        {k: v for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(annotations, dict) else {},
        document.line,
        document.line_of(("status", "nodeInfo", "kubeletVersion")) or document.line,
    )
