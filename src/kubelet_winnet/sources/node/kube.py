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

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._releases import RUNTIME_FORM, is_runtime
from kubelet_winnet.sources.manifests import Document
from kubelet_winnet.sources.manifests.lines import editor_lines
from kubelet_winnet.sources.node._text import read_text

__all__ = [
    "ComponentConfig",
    "Flag",
    "NodeObject",
    "component_from_document",
    "node_from_document",
    "parse_commands",
    "parse_flags",
    "read_flags",
]

Component = Literal["kubelet", "kube-proxy"]
# Flags only kube-proxy has, of those a Windows start script passes (kube-proxy --help).
_PROXY_FLAGS = frozenset({"proxy-mode", "enable-dsr", "network-name", "source-vip",
                          "cluster-cidr", "masquerade-all", "bind-address"})


@dataclass(frozen=True)
class Flag:
    """One ``--name[=value]`` of a start script, as written (quotes removed)."""

    name: str
    value: str
    line: int
    unknown: bool = False  # the value is a script variable ($x, $(...), %X%): not known here


@dataclass(frozen=True)
class ComponentConfig:
    """One component's settings: ``gates`` name -> (value, line); ``mode`` and
    ``enable_dsr`` for kube-proxy (value, line) or None when not set; ``flags`` every flag
    of a flag file (none for a configuration file)."""

    component: Component
    source: str
    gates: Mapping[str, tuple[bool, int]] = field(default_factory=dict)
    mode: tuple[str, int] | None = None
    enable_dsr: tuple[bool, int] | None = None
    line: int = 1
    flags: tuple[Flag, ...] = ()
    # --feature-gates items the component cannot parse: (its own error text, line)
    refused: tuple[tuple[str, int], ...] = ()


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
    return [word for _, _, word in _split_at(line)]


def _split_at(line: str) -> list[tuple[int, int, str]]:
    """:func:`_split` with where each word starts and ends in ``line``."""
    words: list[tuple[int, int, str]] = []
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
        words.append((match.start(), match.end(), "".join(parts)))
        position = match.end()


# A script variable in a value: PowerShell $x, $env:X, $(...), ${x}; sh $X; cmd %X%.
_VARIABLE = re.compile(r"\$[A-Za-z_{(]|%[A-Za-z_][A-Za-z0-9_]*%")
# Where a kubelet or kube-proxy command starts: the binary by path or with .exe anywhere,
# or its bare name as a line's first word.
_COMMAND = re.compile(
    r"(?:(?<=[\\/])|(?<=^)|(?<=[\s&'\"(]))(kubelet|kube-proxy)(\.exe)?(?=$|[\s'\",;)])",
    re.IGNORECASE)
# A script variable assigned a component's arguments ($KubeletArgList = @(...),
# $global:KubeproxyArgs += ...); names are short: bounded, so a long $word stays linear.
_ASSIGNED = re.compile(
    r"\s*\$(?:[A-Za-z]{1,16}:)?\w{0,64}?(kubelet|kube-?proxy)\w{0,64}\s*\+?=(?!=)",
    re.IGNORECASE)
_SPACE = re.compile(r"\s")
_ENV_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,64}=(?=--)")
# The literal flags of a line the shell rules cannot split (a here-string, embedded JSON).
_LOOSE_FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9-]*(?:=[^\s'\"`,]*)?")


def _component_of(name: str) -> Component:
    return "kubelet" if name.lower() == "kubelet" else "kube-proxy"


# Where a line names a component: (position, component, whether a variable assignment
# names it: it then holds for that statement only).
_Cut = tuple[int, Component, bool]


def _cuts(line: str) -> list[_Cut]:
    """Where an assignment ($KubeletArgList = ...) or a command starts in ``line``."""
    assigned = _ASSIGNED.match(line)
    cuts: list[_Cut] = []
    if assigned is not None:
        cuts.append((0, _component_of(assigned[1]), True))
    code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]  # a comment names no command
    lead = len(code) - len(code.lstrip(" \t&'\"("))  # where the first word starts
    for match in _COMMAND.finditer(code):
        start = match.start()
        path = match[2] is not None or (start > 0 and code[start - 1] in "\\/")
        if path or (start == lead and assigned is None):  # a bare name leads a line
            cuts.append((start, _component_of(match[1]), False))
    return cuts


def _continues(line: str, previous: str) -> bool:
    """Whether ``line`` goes on the statement of ``previous`` (an array or a command line
    over several lines)."""
    if previous.rstrip().endswith(("`", ",", "(", "+", "\\", "{", "|")):
        return True
    return line[:1].isspace() or line.lstrip().startswith(("\"", "'", ")", "--", ","))


def _words(text: str) -> list[str]:
    """Shell words of ``text``; a quoted command line is split again; the literal flags
    alone when the quoting is unbalanced."""
    try:
        words = _split(text)
    except ValueError:
        return _LOOSE_FLAG.findall(text)
    out: list[str] = []
    for word in words:
        if "--" in word and _SPACE.search(word):
            out.extend(_words(word))
        else:
            out.append(word)
    return out


def _unwrap(word: str) -> str:
    """A word without what a PowerShell array puts around it: @("--a=1", "--b=2") leaves
    "@(--a=1," and "--b=2)" (a closing parenthesis with no opening one in the word); nor
    the variable an environment file assigns (KUBELET_KUBEADM_ARGS="--a=1 --b=2")."""
    word = _ENV_PREFIX.sub("", word.lstrip("@("), count=1).rstrip(",").strip("'\"")
    if word.endswith(")") and "(" not in word:
        word = word.rstrip(")").rstrip(",").strip("'\"")
    return word


def _flag(words: list[str], index: int, number: int) -> Flag | None:
    """``words[index]`` as a flag (its value the next word when it has no ``=``)."""
    match = _FLAG.fullmatch(_unwrap(words[index]))
    if match is None:
        return None
    value = match[2]
    if value is None:  # "--flag value" when the next word is no flag
        following = words[index + 1] if index + 1 < len(words) else ""
        value = following if following and not following.startswith("-") else "true"
    value = value.rstrip(",").strip("'\"")
    return Flag(match[1], value, number, _VARIABLE.search(value) is not None)


def _spans(line: str) -> list[tuple[int, str]]:
    """The words of ``line``, each with where it ends: a quoted command line gives its
    own words; the literal flags alone when the quoting is unbalanced."""
    try:
        spans = _split_at(line.replace("`", " "))
    except ValueError:
        return [(m.end(), m[0]) for m in _LOOSE_FLAG.finditer(line)]
    out: list[tuple[int, str]] = []
    for _, end, word in spans:
        if "--" in word and _SPACE.search(word):
            out.extend((end, inner) for inner in _words(word))
        else:
            out.append((end, word))
    return out


def _flags_in(text: str) -> list[tuple[Component | None, Flag]]:
    """Every flag with the command it belongs to: the command named before it, or the
    variable assignment whose statement holds it; flags before any are the next command's
    ($args = @(...) then kube-proxy.exe $args); None when no command follows them."""
    found: list[tuple[Component | None, Flag]] = []
    pending: list[Flag] = []
    command: Component | None = None  # the last command named
    statement: Component | None = None  # the assignment being continued
    previous = ""
    for number, line in enumerate(editor_lines(text), 1):
        if statement is not None and not _continues(line, previous):
            statement = None
        previous = line
        cuts = _cuts(line)
        spans = _spans(line) if "--" in line else []
        words = [word for _, word in spans]
        done = 0  # cuts applied
        for index, end in enumerate([*(end for end, _ in spans), len(line) + 1]):
            while done < len(cuts) and cuts[done][0] < end:  # names before or in this word
                _, named, by_assignment = cuts[done]
                done += 1
                if by_assignment:
                    statement = named
                else:
                    command, statement = named, None
                    found += [(named, flag) for flag in pending]
                    pending = []
            flag = _flag(words, index, number) if index < len(words) else None
            owner = statement or command
            if flag is not None and owner is None:
                pending.append(flag)
            elif flag is not None:
                found.append((owner, flag))
    return found + [(None, flag) for flag in pending]


def _infer(flags: list[Flag]) -> Component:
    return "kube-proxy" if any(f.name in _PROXY_FLAGS for f in flags) else "kubelet"


def _parse_gates(items: list[str]) -> tuple[dict[str, bool], list[str]]:
    """``--feature-gates`` items as the kubelet parses them (component-base featuregate,
    through the profile): the gates, and each refused item's own error text."""
    from kubelet_winnet._kubelet.feature_gates import FeatureGates
    from kubelet_winnet.errors import FeatureGateError

    try:  # all at once; item by item only to name each refusal
        return dict(FeatureGates.from_flag(",".join(items))), []
    except FeatureGateError:
        pass
    gates: dict[str, bool] = {}
    refused: list[str] = []
    for item in items:
        try:
            gates.update(FeatureGates.from_flag(item))
        except FeatureGateError as exc:
            refused.append(exc.message)
    return gates, refused


def _config(component: Component, flags: list[Flag], source: str) -> ComponentConfig:
    gates: dict[str, tuple[bool, int]] = {}
    refused: list[tuple[str, int]] = []
    mode: tuple[str, int] | None = None
    dsr: tuple[bool, int] | None = None
    for flag in flags:
        if flag.name == "feature-gates":
            # Items set from a variable are not known here (reported with the flag); the
            # rest is parsed as the kubelet parses it, each refusal with its own text.
            parsed, texts = _parse_gates(
                [item for item in flag.value.split(",") if not _VARIABLE.search(item)])
            gates.update((name, (on, flag.line)) for name, on in parsed.items())
            refused += [(text, flag.line) for text in texts]
        elif flag.unknown:
            continue
        elif flag.name == "proxy-mode":
            mode = (flag.value, flag.line)
        elif flag.name == "enable-dsr":
            on = _BOOL.get(flag.value.lower())
            if on is None:
                raise NodeConfigError(f"{source}:{flag.line}",
                                      f"--enable-dsr={flag.value!r}: expected true or false")
            dsr = (on, flag.line)
    return ComponentConfig(component, source, gates, mode, dsr,
                           flags[0].line if flags else 1, tuple(flags), tuple(refused))


def parse_flags(text: str, source: str, component: Component | None = None) -> ComponentConfig:
    """Command-line flags as a start script passes them (one or many per line, quoted as
    a shell or PowerShell would; ``#`` starts a comment), all read as one component's:
    ``component``, or kube-proxy when a kube-proxy-only flag is present, else kubelet."""
    flags = [flag for _, flag in _flags_in(text)]
    return _config(component or _infer(flags), flags, source)


def parse_commands(text: str, source: str) -> list[ComponentConfig]:
    """Each command's flags as its own: a script that starts the kubelet and kube-proxy
    gives both. Flags before any command is named go to the one they fit (see
    :func:`parse_flags`); none when the text holds no flag."""
    groups: dict[Component, list[Flag]] = {}
    loose: list[Flag] = []
    for named, flag in _flags_in(text):
        if named is None:
            loose.append(flag)
        else:
            groups.setdefault(named, []).append(flag)
    if loose:
        groups.setdefault(_infer(loose), [])[:0] = loose
    return [_config(component, flags, source) for component, flags in groups.items()]


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

    runtime = text("containerRuntimeVersion")
    if runtime and not is_runtime(runtime):  # NodeFacts would refuse it later, with no line
        shown = cut(runtime, 80)
        raise NodeConfigError(where("status", "nodeInfo", "containerRuntimeVersion"),
                              f"status.nodeInfo.containerRuntimeVersion {shown!r} is not "
                              f"{RUNTIME_FORM}")
    return NodeObject(
        document.source, name, text("kubeletVersion"), runtime,
        text("operatingSystem"), text("kernelVersion"),
        {k: v for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(annotations, dict) else {},
        document.line,
        document.line_of(("status", "nodeInfo", "kubeletVersion")) or document.line,
    )
