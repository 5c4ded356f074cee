"""``kubelet-winnet node PATH...``: one Windows node judged by its own files.

The files are read by :mod:`kubelet_winnet.cli.nodefiles`; what each class of pod gets is
planned by :func:`kubelet_winnet.runtime.plan_pod_network`; the findings are the rules of
:mod:`kubelet_winnet._lint.node_rules`, each checked here against the files.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelet_winnet.cli.session import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    Command,
    Session,
    add_limit_arguments,
    exit_text,
    limits_of,
)
from kubelet_winnet.errors import WinnetError

if TYPE_CHECKING:
    from kubelet_winnet._judgement import Verdict
    from kubelet_winnet._lint.rules import Rule, Severity
    from kubelet_winnet.cli.audit_page import NodeCard
    from kubelet_winnet.cli.nodefiles import NodeFiles
    from kubelet_winnet.cli.nodefiles.kube import ComponentConfig
    from kubelet_winnet.runtime import PodNetworkPlan, PortPlan

__all__ = ["COMMAND", "NodeFinding", "PodClass", "judge_node", "node_card", "pod_classes"]

FORMATS = ("text", "json", "sarif", "junit", "html")
_DEFAULT_BIN_DIRS = ("%programfiles%\\containerd\\cni\\bin",
                     "c:\\program files\\containerd\\cni\\bin")
_PAUSE_WITHOUT_2025 = re.compile(r"(^|/)pause:3\.10(\.1)?($|[^0-9.])")


@dataclass(frozen=True)
class NodeFinding:
    rule: Rule
    severity: Severity
    message: str  # one sentence: what happens and what to do
    source: str  # the file it is about ("" when no file says it)
    line: int
    detail: str = ""


@dataclass(frozen=True)
class PodClass:
    """One class of pod on the node, as the judgement has it."""

    name: str
    verdict: Verdict

    @property
    def ports(self) -> list[PortPlan]:
        return [p for p in self.verdict.ports if p.host_port > 0]

    @property
    def host_port(self) -> str:
        return self.ports[0].outcome if self.ports else "-"

    @property
    def network(self) -> str:
        """``refused``, or the network (``unknown`` when a fact decides it)."""
        return "refused" if self.verdict.runtime_refused else self.verdict.network.value

    @property
    def why(self) -> str:
        if self.verdict.runtime_refused:
            return self.verdict.runtime_refused
        notes = list(self.verdict.notes)
        if self.verdict.network.value == "unknown":
            notes.append(self.verdict.network.condition)  # the port's reason says it again
        elif self.ports:
            port = self.ports[0]
            notes.append(port.reason + (f"; {port.warning}" if port.warning else ""))
        return "; ".join(notes)


def _version_minor(text: str) -> int | None:
    match = re.fullmatch(r"v?1\.(\d{1,3})(\.\d+.*)?", text.strip())
    return int(match[1]) if match else None


def _probe(host_port: int, host_process: bool, runtime_class: str | None) -> dict[str, Any]:
    """A pod of one class asking for ``host_port`` (0: none)."""
    ports = [{"containerPort": host_port, "hostPort": host_port}] if host_port else []
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "ports": ports}]}
    if host_process:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"}, "spec": spec}


def pod_classes(
    files: NodeFiles, host_port: int, kubelet_version: str, runtime: str = ""
) -> list[PodClass]:
    """What a process-isolated pod, a Hyper-V pod, a HostProcess pod (with the default
    handler and, when the node has one, a Hyper-V handler) and a hostPort get here
    (``runtime``: ``--runtime``, when no Node object names the node's), each the
    judgement of a pod of that class (its RuntimeClass named after the handler)."""
    from kubelet_winnet._judgement import NodeKnowledge, judge
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile

    facts = files.facts(runtime)
    hyperv = sorted(n for n, i in facts.handlers.items() if i == "hyperv")
    process = sorted(n for n, i in facts.handlers.items() if i == "process")
    classes: list[tuple[str, str | None, bool]] = [("pod without RuntimeClass", None, False)]
    if process and facts.handlers[facts.default_handler] != "process":
        classes.append((f"process-isolated pod ({process[0]})", process[0], False))
    if hyperv:
        classes.append((f"Hyper-V pod ({hyperv[0]})", hyperv[0], False))
    classes.append(("HostProcess pod", None, True))
    if hyperv and facts.handlers[facts.default_handler] != "hyperv":
        classes.append((f"HostProcess pod, Hyper-V ({hyperv[0]})", hyperv[0], True))
    del kubelet_version  # the sandbox request for these classes is the same in 1.26+
    profile = kubelet_profile(DEFAULT_KUBELET_VERSION)
    mappings = ((host_port, host_port, "tcp", ""),)
    return [PodClass(name, judge(_probe(host_port, hp, handler), profile, NodeKnowledge(
        runtime=facts.runtime or "containerd", files=facts,  # the node command's runtime
        runtime_classes={handler: handler} if handler else {},
        handlers_read=files.containerd is not None), mappings=mappings))
        for name, handler, hp in classes]


_Finding = tuple[str, str, str, int, str, "Severity | None"]


def _releases(minors: tuple[int, ...]) -> str:
    """``1.26 to 1.27``, ``1.30``, or ``1.26 to 1.27 and 1.30`` (consecutive runs)."""
    runs: list[list[int]] = []
    for minor in minors:
        if runs and runs[-1][-1] == minor - 1:
            runs[-1].append(minor)
        else:
            runs.append([minor])
    parts = [f"1.{r[0]}" if len(r) == 1 else f"1.{r[0]} to 1.{r[-1]}" for r in runs]
    return " and ".join(parts)


_SUGGESTED = 20  # near-name suggestions per configuration: difflib is slow on thousands
_LISTED_GATES = 50  # refused gates reported one by one per configuration; then one total


def _accepts(gate: str, minor: int | None) -> bool:
    """Whether kubelet and kube-proxy 1.``minor`` (None: every release) take ``gate``."""
    from kubelet_winnet._kubelet.profile import MAX_MINOR, MIN_MINOR
    from kubelet_winnet._kubelet.startup import gate_minors

    accepted = gate_minors(gate)
    return accepted is not None and (minor in accepted if minor is not None
                                     else len(accepted) == MAX_MINOR - MIN_MINOR + 1)


def _gate_finding(component: str, gate: str, line: int, source: str,
                  minor: int | None, suggest: bool = True) -> _Finding | None:
    """A gate the component (``minor``; None: release unknown) refuses at start-up;
    ``suggest``: look for a gate of a near name."""
    import difflib

    from kubelet_winnet._kubelet.profile import MAX_MINOR, MIN_MINOR
    from kubelet_winnet._kubelet.startup import GATE_SOURCES, GATES, LISTED_THROUGH, gate_minors
    from kubelet_winnet._lint.rules import Severity

    rule = "node-gate-stops-kubelet" if component == "kubelet" else "node-gate-stops-kube-proxy"
    if _accepts(gate, minor):
        return None
    accepted = gate_minors(gate)
    # The kubelet's text; a name it would print as nothing or as two words is quoted.
    shown = gate if gate and not re.search(r"\s", gate) else json.dumps(gate)
    error = f"unrecognized feature gate: {shown}"
    span = GATES.get(gate)
    if not gate.strip():
        why = "an empty gate name; remove the entry"
    elif span is None:
        near = difflib.get_close_matches(gate, GATES, n=1, cutoff=0.8) \
            if suggest and len(gate) <= 100 else []
        why = (f"no Kubernetes release from 1.{MIN_MINOR} to 1.{LISTED_THROUGH} has it; "
               + (f"did you mean {near[0]}?" if near else "remove it or fix its name"))
    elif span.last is not None and (minor is None or minor > span.last):
        why = f"it was removed after Kubernetes 1.{span.last}; remove it"
    else:
        why = f"it first appears in Kubernetes 1.{span.first}; remove it or upgrade"
    # Where the gate's releases come from (the newest list read, for a name in none).
    detail = GATE_SOURCES[span.source if span is not None else "K36"].replace("NAME", gate)
    if minor is None and accepted:  # some releases take it: say which
        return (rule, f"{component} {_releases(accepted)} accepts this gate; any other "
                f"release exits at start-up: {error} ({why}). Say this node's release with "
                "--kubelet-version or a Node object.", source, line, detail, Severity.WARNING)
    if span is None and gate.strip() and minor is not None and minor > LISTED_THROUGH:
        return (rule, f"{component} 1.{minor} exits at start-up ({error}) unless {shown} is a "
                f"gate added after 1.{LISTED_THROUGH}: {why}.", source, line, detail,
                Severity.WARNING)
    if minor is None:
        upto = MAX_MINOR if span is not None else LISTED_THROUGH
        head = f"no {component} from 1.{MIN_MINOR} to 1.{upto} starts with this gate"
    else:
        head = f"{component} 1.{minor} exits at start-up"
    return (rule, f"{head}: {error} ({why}).", source, line, detail, None)


def _startup_findings(config: ComponentConfig, minor: int | None) -> list[_Finding]:
    """What stops the kubelet or kube-proxy of ``config`` at start-up: a gate its release
    does not have, a removed flag; and the flags read here whose values are script
    variables (not known, so not checked)."""
    from kubelet_winnet._kubelet.profile import MIN_MINOR
    from kubelet_winnet._kubelet.startup import LISTED_THROUGH, removed_flag
    from kubelet_winnet._lint.rules import Severity

    component, source = config.component, config.source
    rule = "node-gate-stops-kubelet" if component == "kubelet" else "node-gate-stops-kube-proxy"
    release = f"{component} 1.{minor}" if minor is not None else f"this node's {component}"
    found: list[_Finding] = []
    more, first = 0, 0  # refused gates past the listed ones: one stops it, so one total
    for index, (gate, (_, line)) in enumerate(config.gates.items()):
        if len(found) >= _LISTED_GATES:
            if not _accepts(gate, minor):
                more, first = more + 1, first or line
        elif (finding := _gate_finding(component, gate, line, source, minor,
                                       index < _SUGGESTED)) is not None:
            found.append(finding)
    if more:
        sure = minor is not None and minor <= LISTED_THROUGH
        found.append((rule, f"{more:,} more gates of this file, from line {first} on, are not "
                      f"gates of {release} either.", source, first, "",
                      None if sure else Severity.WARNING))
    found += [(rule, f"{release} exits at start-up: {text}.", source, line, "", None)
              for text, line in config.refused]
    for flag in config.flags:
        gone = removed_flag(flag.name, component)
        if gone is not None and (minor is None or minor >= gone.removed_in):
            sure = minor is not None or gone.removed_in <= MIN_MINOR  # no release has it
            head = (f"{release} exits at start-up" if sure
                    else f"if this node's {component} is 1.{gone.removed_in} or later, it "
                    "exits at start-up")
            found.append(("node-flag-removed",
                          f"{head}: unknown flag: --{flag.name} (removed in 1.{gone.removed_in}; "
                          f"{gone.replacement}).", source, flag.line, gone.source,
                          None if sure else Severity.WARNING))
        if flag.unknown and flag.name in ("feature-gates", "proxy-mode"):
            what = ("its gates are not known here and were not checked; a gate "
                    f"{release} does not have stops it at start-up"
                    if flag.name == "feature-gates" else
                    "its mode is not known here; any mode but kernelspace stops Windows "
                    "kube-proxy")
            found.append((rule if flag.name == "feature-gates" else "node-proxy-mode",
                          f"--{flag.name} is set from {flag.value}, a script variable: {what}.",
                          source, flag.line, "", Severity.INFO))
    return found


class _Found(list[NodeFinding]):
    """The findings of one node, added by rule id."""

    def add(self, rule_id: str, message: str, source: str, line: int, detail: str = "",
            severity: Severity | None = None) -> None:
        from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

        rule = NODE_RULES_BY_ID[rule_id]
        self.append(NodeFinding(rule, severity or rule.severity, message, source, line, detail))


def judge_node(files: NodeFiles, kubelet_version: str, runtime: str,
               version_known: bool = True) -> list[NodeFinding]:
    """Every node rule over one node's files (``kubelet_version``/``runtime``: the Node
    object's, or the command line's when there is no Node object; ``version_known`` False
    when neither says the release, and findings that depend on it are conditional)."""
    from kubelet_winnet.runtime._releases import containerd_line, parse_runtime

    found = _Found()
    minor = _version_minor(kubelet_version)
    name, version = parse_runtime(runtime)
    line = containerd_line(version) if name == "containerd" and version is not None else None
    for settings in files.components:
        for finding in _startup_findings(settings, minor if version_known else None):
            found.add(*finding)
    _proxy_findings(files, minor, found)
    if files.containerd is not None:
        _containerd_findings(files.containerd, line, found)
        _hyperv_findings(files, runtime, found)
    _cni_findings(files, found)
    _port_range_findings(files, found)
    _pause_findings(files, line, found)
    return found


def _proxy_findings(files: NodeFiles, minor: int | None, found: _Found) -> None:
    for proxy in (c for c in files.components if c.component == "kube-proxy"):
        for gate in ("WinDSR", "WinOverlay"):
            setting = proxy.gates.get(gate)
            if setting is not None and setting[0] is False and minor is not None and minor >= 34:
                found.add("node-gate-locked",
                          f"{gate}=false stops Windows kube-proxy 1.{minor}: the gate is locked "
                          "to true since 1.34; remove it.", proxy.source, setting[1],
                          "Azure/AgentBaker PR #6925; kubernetes/kubernetes #141988")
        if proxy.mode is not None and proxy.mode[0] not in ("", "kernelspace"):
            found.add("node-proxy-mode",
                      f"proxy mode {proxy.mode[0]!r} is a validation error on Windows: "
                      "kube-proxy does not start; use kernelspace.", proxy.source, proxy.mode[1])


def _containerd_findings(config: Any, line: Any, found: _Found) -> None:
    """What containerd's configuration makes of its own start-up and options."""
    from kubelet_winnet._lint.rules import Severity
    from kubelet_winnet.runtime._releases import CONTAINERD_LINES

    if line is not None and config.version > max(line.config_versions):
        found.add("node-config-version",
                  f"containerd {line.name} loads schema versions up to "
                  f"{max(line.config_versions)}, this file is version {config.version}: "
                  "containerd does not start.", config.source, config.version_line)
    newest = CONTAINERD_LINES[-1]
    if line is None and config.version > max(newest.config_versions):
        # Whatever the release: none loads it (ValidateVersion in each line's config.go).
        found.add("node-config-version",
                  f"no containerd release up to {newest.name} loads schema version "
                  f"{config.version} (the newest reads up to {max(newest.config_versions)}): "
                  "containerd does not start.", config.source, config.version_line)
    if line is not None and line.line < (2, 0):
        for key in config.short_plugin_keys:
            found.add("node-config-version",
                      f"containerd {line.name} refuses to start: {key.key} is no plugin id in "
                      f"a version {config.version} file (\"invalid plugin key URI\"); use the "
                      "io.containerd... id.", config.source, key.line)
    if config.default_runtime_name is not None \
            and config.default_handler not in config.handlers():
        # ValidatePluginConfig (internal/cri/config/config.go) refuses to start.
        found.add("node-config-version",
                  f"containerd refuses to start: default_runtime_name = "
                  f"{config.default_handler!r} names no runtime table it reads.",
                  config.source, config.default_runtime_name.line,
                  "no corresponding runtime configured in `containerd.runtimes` for "
                  "`containerd` `default_runtime_name`")
    removed = config.version >= 3 and (line is None or line.line >= (2, 4))
    unknown = line is None
    prefix = "if this node runs containerd 2.4+, " if unknown else "containerd 2.4 "
    if removed and config.bin_dir is not None:
        folder = str(config.bin_dir.value)
        custom = (folder.lower().rstrip("\\/") not in _DEFAULT_BIN_DIRS
                  and config.bin_dirs is None)
        found.add("node-option-removed",
                  prefix + f"ignores bin_dir = {folder!r}"
                  + (": CNI plugins there are not found and pods get no network; use bin_dirs."
                     if custom else "; use bin_dirs."),
                  config.source, config.bin_dir.line,
                  severity=Severity.INFO if unknown else (Severity.ERROR if custom else None))
    if removed and config.enable_cdi is not None:
        found.add("node-option-removed",
                  prefix + "ignores enable_cdi (CDI is always on); delete it.",
                  config.source, config.enable_cdi.line,
                  severity=Severity.INFO if unknown else None)
    for table in config.runtimes:
        if not table.read:
            found.add("node-runtime-table-unread",
                      f"runtime {table.name!r} is at a path a version {config.version} file "
                      f"does not read: no runtime for {table.name!r} is registered and its "
                      "RuntimeClass fails.", config.source, table.line, table.key)


def _hyperv_findings(files: NodeFiles, runtime: str, found: _Found) -> None:
    """HostProcess pods that get no network here, as the judgement has them (hcsshim PR
    #2531): every one without a RuntimeClass when the default handler is Hyper-V
    isolated, else those whose RuntimeClass names a Hyper-V handler."""
    from kubelet_winnet._judgement import NodeKnowledge, judge
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile
    from kubelet_winnet._lint.rules import Severity

    config = files.containerd
    facts = files.facts(runtime)
    hyperv = sorted(n for n, i in facts.handlers.items() if i == "hyperv")
    if config is None or not hyperv:
        return
    profile = kubelet_profile(DEFAULT_KUBELET_VERSION)

    def no_network(handler: str | None) -> bool:
        knowledge = NodeKnowledge(runtime=runtime or "containerd", files=facts,
                                  runtime_classes={handler: handler} if handler else {})
        return judge(_probe(0, True, handler), profile, knowledge).network.value == "none"

    default = config.default_handler
    if facts.handlers.get(default) == "hyperv":
        if no_network(None):
            found.add("node-hyperv-host-process",
                      f"the default runtime {default!r} is Hyper-V isolated: every HostProcess "
                      "pod without a RuntimeClass gets no network at all.", config.source,
                      config.default_runtime_name.line if config.default_runtime_name else 0)
    elif no_network(hyperv[0]):
        found.add("node-hyperv-host-process",
                  f"HostProcess pods whose RuntimeClass names {', '.join(map(repr, hyperv))} get "
                  "no network at all (hcsshim PR #2531).", config.source,
                  next((t.line for t in config.runtimes if t.name in hyperv), 0),
                  severity=Severity.INFO)


def _cni_findings(files: NodeFiles, found: _Found) -> None:
    from kubelet_winnet._lint.rules import Severity

    network = files.network
    if network is None:
        return
    from kubelet_winnet.runtime._network import _cni_outcome

    outcome, reason = _cni_outcome(network)
    if outcome != "applied":
        verb = "are dropped" if outcome == "dropped" else "may be dropped"
        found.add("node-host-port-dropped",
                  f"hostPorts of pods on this node {verb}: {reason}.", network.source, 1,
                  severity=Severity.INFO if outcome == "unknown" else None)


def _port_range_findings(files: NodeFiles, found: _Found) -> None:
    from kubelet_winnet._lint.node_rules import NODE_PORT_RANGE

    low, high = NODE_PORT_RANGE
    overlapping: dict[str, list[tuple[str, int]]] = {}  # per file: (range named, line)
    for (kind, protocol), output in sorted(files.ports.items()):
        for kept, at in output.ranges:
            if kept.start <= high and kept.end >= low:
                overlapping.setdefault(output.source, []).append(
                    (f"{protocol.upper()} {kind} range {kept}", at))
    for source, ranges in overlapping.items():  # one finding per file: a file of a
        # million rows is one line to read, not a million
        ranges.sort(key=lambda item: item[1])
        if len(ranges) == 1:
            subject = f"the {ranges[0][0]} overlaps"
        else:
            shown = ", ".join(name for name, _ in ranges[:3])
            more = f" and {len(ranges) - 3} more" if len(ranges) > 3 else ""
            subject = f"{len(ranges)} ranges ({shown}{more}) overlap"
        found.add("node-port-range",
                  f"{subject} the NodePort range {low}-{high}: node ports there collide with "
                  "ports Windows keeps.", source, ranges[0][1])


def _pause_findings(files: NodeFiles, line: Any, found: _Found) -> None:
    node, config = files.node, files.containerd
    hyperv = any(i == "hyperv" for i in files.facts().handlers.values())
    if node is None or not node.kernel.startswith("10.0.26100") or not hyperv:
        return
    image = config.sandbox_image if config is not None else None
    text = str(image.value) if image is not None else (
        line.default_sandbox_image if line is not None else "")
    if _PAUSE_WITHOUT_2025.search(text):
        found.add("node-pause-image",
                  f"sandbox image {text} has no Windows Server 2025 variant: Hyper-V pods here "
                  "fail with HCS_E_IMAGE_MISMATCH; use pause:3.10.2.",
                  config.source if config is not None and image is not None else node.source,
                  image.line if image is not None else node.line,
                  "" if image is not None else f"containerd {line.name if line else '?'}'s default")


def _ignored(files: NodeFiles, flags: list[str]) -> dict[str, str]:
    from kubelet_winnet._lint.ignores import IGNORE_PREFIX

    ignored = dict.fromkeys(flags, "--ignore")
    if files.node is not None:
        for key, value in files.node.annotations.items():
            if key.startswith(IGNORE_PREFIX):
                ignored.setdefault(key[len(IGNORE_PREFIX):], value)
    return ignored


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("node_paths", nargs="*", metavar="PATH",
                        help="a directory of one node's files, or the files: containerd "
                        "config.toml, CNI .conf/.conflist, KubeletConfiguration and "
                        "KubeProxyConfiguration YAML, kubelet or kube-proxy flags, netsh "
                        "port-range outputs, the Node object (kubectl get node NAME -o json)")
    parser.add_argument("-o", "--output", choices=FORMATS, default="text")
    parser.add_argument("--kubelet-version", metavar="VERSION",
                        help="the node's kubelet when no Node object is given")
    parser.add_argument("--runtime", metavar="NAME://VERSION",
                        help="the node's runtime (containerd://2.4.0) when no Node object "
                        "is given")
    parser.add_argument("--host-port", type=int, default=8080, metavar="PORT",
                        help="the hostPort each pod class asks for (default %(default)s)")
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                        default="warning",
                        help="exit 1 when a finding has this severity or higher")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE",
                        help="a rule not to report (repeatable); the Node object's "
                        "annotation ignore-check.kubelet-winnet.io/RULE does the same")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="say on stderr what each file was read as, one line per file")
    parser.add_argument("--list-rules", action="store_true", help="list the node rules")
    parser.add_argument("--explain", metavar="RULE", help="print a node rule's page")
    from kubelet_winnet.cli.nodefiles import NODE_LIMITS

    add_limit_arguments(parser, NODE_LIMITS.max_bytes)
    parser.epilog = exit_text(
        (0, "every file read; no finding at or above --fail-on"),
        (1, "a finding at or above --fail-on"),
        (2, "a file that cannot be read, bad flags"),
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


@dataclass
class _Report:
    """What one run has to say, whatever stopped it: ``stopped`` is why the node was not
    judged (then no pod class and no finding), None when it was."""

    name: str = "(no Node object)"
    kubelet: str = ""
    runtime: str = ""
    classes: list[PodClass] = field(default_factory=list)
    findings: list[NodeFinding] = field(default_factory=list)
    ignored: dict[str, str] = field(default_factory=dict)
    threshold: Severity | None = None
    stopped: str | None = None
    files: list[tuple[str, str]] = field(default_factory=list)  # (file, read as)
    node_files: NodeFiles | None = None  # what was read, once the node is judged


def _run(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._lint.node_rules import NODE_RULES, NODE_RULES_BY_ID, node_rule_page

    out = session.out
    if args.list_rules:
        for rule in NODE_RULES:
            out.write(f"{rule.id}  {rule.severity.label}  {rule.summary}\n")
        return session.status
    if args.explain is not None:
        if args.explain not in NODE_RULES_BY_ID:
            _no_rule(session, "--explain", args.explain)
            return session.status
        out.write(node_rule_page(args.explain))
        return session.status
    report = _Report()
    _judge(args, session, report)
    writer = {"text": _text, "json": _json, "sarif": _sarif, "junit": _junit,
              "html": _html}[args.output]
    writer(session, report)  # a stopped run too: a missing report reads as "nothing found"
    return session.status


def _no_rule(session: Session, where: str, name: str) -> None:
    from kubelet_winnet._lint.node_rules import nearest_node_rule

    near = nearest_node_rule(name)
    session.error(f"{where}: no node rule {name!r}" + (f"; did you mean {near}?" if near else ""))


def _arguments(args: argparse.Namespace, session: Session) -> None:
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

    for name in args.ignore:
        if name not in NODE_RULES_BY_ID:
            _no_rule(session, "--ignore", name)
    if args.runtime is not None:
        name, sep, version = args.runtime.partition("://")
        if not (name and sep and version):
            shown = args.runtime if len(args.runtime) <= 80 else args.runtime[:77] + "..."
            session.error(f"--runtime {shown!r}: expected NAME://VERSION, as the Node's "
                          "containerRuntimeVersion (containerd://2.4.0)")
    if not 1 <= args.host_port <= 65535:
        session.error(f"--host-port: {args.host_port} is not a port (1 to 65535)")
    if not args.node_paths:
        session.error("node: name a directory of one node's files, or the files")


def _judge(args: argparse.Namespace, session: Session, report: _Report) -> None:
    """Fill ``report``; ``report.stopped`` says why when the node cannot be judged."""
    from kubelet_winnet import DEFAULT_KUBELET_VERSION, parse_kubelet_version
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID, nearest_node_rule
    from kubelet_winnet._lint.rules import Severity
    from kubelet_winnet._printable import printable
    from kubelet_winnet.cli.nodefiles import read_node
    from kubelet_winnet.errors import UnsupportedVersionError, WinnetError

    _arguments(args, session)
    if session.status == EXIT_BAD_INPUT:
        report.stopped = "the command line is not valid; the errors say why"
        return
    files = read_node(args.node_paths, limits_of(args))
    session.files = files.files
    report.files = files.read_as
    for problem in files.errors:
        session.error(str(problem))
    for skipped in files.skipped:
        session.note(skipped)
    if args.verbose:
        for path, what in files.read_as:
            session.err.write(printable(f"{session.prog}: {path}: read as {what}") + "\n")
    if files.empty:  # an empty run is not a pass (as check's), nor a table of defaults
        if not files.errors:
            count = f"{files.files} file" + ("" if files.files == 1 else "s")
            session.error(f"node: no node file in {', '.join(args.node_paths)} ({count} read)")
        report.stopped = "no file was read as a node file; the errors say why"
        return
    node = files.node
    report.name = node.name if node else report.name
    kubelet = (node.kubelet_version if node and node.kubelet_version
               else args.kubelet_version or DEFAULT_KUBELET_VERSION)
    report.kubelet = kubelet
    if not (node and node.kubelet_version) and not args.kubelet_version:
        session.note(f"no Node object and no --kubelet-version: the node is judged as "
                     f"kubelet {DEFAULT_KUBELET_VERSION}")
    try:  # a version the rules cannot judge must not pass their checks in silence
        parse_kubelet_version(kubelet)
    except UnsupportedVersionError as exc:
        given = (f"{node.source}:{node.kubelet_version_line}: status.nodeInfo.kubeletVersion"
                 if node and node.kubelet_version else "--kubelet-version")
        shown = kubelet if len(kubelet) <= 80 else kubelet[:77] + "..."
        session.error(f"{given} {shown!r}: {exc.reason}")
        report.stopped = "the kubelet version is not one the rules can judge"
        return
    runtime = node.runtime if node and node.runtime else args.runtime or ""
    report.runtime = runtime
    try:
        findings = judge_node(files, kubelet, runtime,
                              bool((node and node.kubelet_version) or args.kubelet_version))
        classes = pod_classes(files, args.host_port, kubelet, runtime)
    except WinnetError as exc:  # a NodeConfigError from facts the files contradict
        session.error(str(exc))
        report.stopped = "the node's files contradict each other; the errors say why"
        return
    ignored = _ignored(files, args.ignore)
    for rule_id in ignored:
        if rule_id not in NODE_RULES_BY_ID:
            near = nearest_node_rule(rule_id)
            session.note(f"the Node object's ignore annotation names no node rule "
                         f"{rule_id!r}" + (f"; did you mean {near}?" if near else ""))
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    shown = [f for f in findings if f.rule.id not in ignored]
    if threshold is not None and any(f.severity >= threshold for f in shown):
        session.fail(EXIT_FINDINGS)
    report.classes, report.findings = classes, findings
    report.ignored, report.threshold = ignored, threshold
    report.node_files = files


def _text(session: Session, report: _Report) -> None:
    from kubelet_winnet._printable import printable

    if report.stopped is not None:  # stderr said why; stdout stays empty for scripts
        return
    out = session.out
    classes, ignored = report.classes, report.ignored
    out.write(printable(f"node {report.name}: kubelet {report.kubelet}, runtime "
                        f"{report.runtime or 'unknown'}") + "\n\n")
    width = max(len(c.name) for c in classes)
    out.write(f"{'POD CLASS'.ljust(width)}  ISOLATION  NETWORK  HOSTPORT         WHY\n")
    for item in classes:
        out.write(printable(
            f"{item.name.ljust(width)}  {(item.verdict.isolation or '?').ljust(9)}  "
            f"{item.network.ljust(7)}  {item.host_port.ljust(15)}  {item.why}") + "\n")
    out.write("\n")
    for finding in report.findings:
        if finding.rule.id in ignored:
            continue
        where = (f"{finding.source}:{finding.line}" if finding.line
                 else finding.source or report.name)
        out.write(printable(f"{where}: {finding.severity.label} {finding.rule.id}: "
                            f"{finding.message}") + "\n")
    shown = sum(1 for f in report.findings if f.rule.id not in ignored)
    hidden = len(report.findings) - shown
    out.write(f"{shown} finding{'' if shown == 1 else 's'}"
              f"{f', {hidden} ignored' if hidden else ''}\n")


def _finding_json(finding: NodeFinding, ignored: dict[str, str]) -> dict[str, Any]:
    return {"file": finding.source, "line": finding.line, "rule": finding.rule.id,
            "severity": finding.severity.label, "message": finding.message,
            "detail": finding.detail, "helpUri": finding.rule.help_uri,
            "ignored": ignored.get(finding.rule.id)}


def _json(session: Session, report: _Report) -> None:
    document = {
        "node": report.name, "kubeletVersion": report.kubelet, "runtime": report.runtime,
        "stopped": report.stopped,
        "files": [{"file": path, "readAs": what} for path, what in report.files],
        "podClasses": [
            {"class": c.name, "handler": c.verdict.handler, "isolation": c.verdict.isolation,
             "network": c.verdict.network.value, "refused": c.verdict.runtime_refused,
             **({"condition": c.verdict.network.condition}
                if c.verdict.network.value == "unknown" else {}),
             "ports": [{"containerPort": p.container_port, "hostPort": p.host_port,
                        "outcome": p.outcome, "reason": p.reason, "warning": p.warning}
                       for p in c.verdict.ports],
             "notes": list(c.verdict.notes)}
            for c in report.classes],
        "findings": [_finding_json(f, report.ignored) for f in report.findings],
        "errors": list(session.diagnostics),
    }
    session.out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _results(report: _Report) -> list[Any]:
    return [(f.rule, f.severity, f.message, f.source, f.line, report.ignored.get(f.rule.id))
            for f in report.findings]


def _sarif(session: Session, report: _Report) -> None:
    from kubelet_winnet._lint.report import node_sarif

    session.out.write(node_sarif(_results(report), session.diagnostics, session.status,
                                 report.stopped) + "\n")


def _junit(session: Session, report: _Report) -> None:
    from kubelet_winnet._lint.report import node_junit

    session.out.write(node_junit(report.name, _results(report), report.threshold,
                                 session.diagnostics, report.stopped))


def _html(session: Session, report: _Report) -> None:
    from kubelet_winnet.cli.audit_page import write_node_page

    if report.stopped is not None or report.node_files is None:  # as text: stderr said why
        return
    rows = tuple((c.name, c.verdict.isolation or "?", c.network, c.host_port, c.why)
                 for c in report.classes)
    card = node_card(report.name, report.kubelet, report.runtime, report.node_files, None,
                     report.findings, report.ignored, rows)
    write_node_page(session.out, card, None)


COMMAND = Command("node", _configure, _run)


def node_card(
    name: str, kubelet: str, runtime: str, files: NodeFiles | None, feature_gates: str | None,
    findings: list[NodeFinding] | None = None, ignored: dict[str, str] | None = None,
    classes: tuple[tuple[str, str, str, str, str], ...] = (), note: str = "",
) -> NodeCard:
    """One node's card on the audit page: what its Node object and its files say, and its
    findings (``judge_node``'s, run here when not given)."""
    from kubelet_winnet.cli.audit_page import CardFinding, NodeCard
    from kubelet_winnet.errors import WinnetError
    from kubelet_winnet.runtime import NodeFacts
    from kubelet_winnet.runtime._releases import runtime_name

    unset = "not known (no --node-config)"
    gates = feature_gates or "the release's defaults (a node does not publish its gates)"
    handlers_from = "containerd's defaults (no --node-config)"
    try:
        facts = files.facts(runtime) if files is not None else NodeFacts(runtime=runtime)
        if files is not None and findings is None:
            findings = judge_node(files, kubelet, runtime)
            ignored = _ignored(files, [])
    except WinnetError as exc:  # files that contradict each other: a note, not a crash
        note += f"{'; ' if note else ''}{exc}"
        facts = None
    if files is not None:
        handlers_from = ("its containerd config.toml" if files.containerd is not None
                         else "containerd's default configuration (no config.toml given)")
        if files.kubelet is not None and files.kubelet.gates:
            gates = ", ".join(f"{g}={str(v).lower()}" for g, (v, _) in
                              sorted(files.kubelet.gates.items()))
    if runtime_name(runtime) not in ("containerd", "") and files is None:
        facts, handlers_from = None, "not known: only containerd's handlers are modelled"
    port = ("", unset)
    proxy = unset
    if files is not None:
        port = ("", "no CNI configuration among its files")
        if files.network is not None:
            from kubelet_winnet.runtime._network import _cni_outcome

            port = _cni_outcome(files.network)
        proxy = "no kube-proxy configuration among its files"
        if files.proxy is not None:
            proxy = ", ".join(f"{g}={str(v).lower()}" for g, (v, _) in
                              sorted(files.proxy.gates.items())) or "none set"
    ignored = ignored or {}
    return NodeCard(
        name, kubelet, runtime, gates,
        tuple(sorted(facts.handlers.items())) if facts is not None else (),
        facts.default_handler if facts is not None else "", handlers_from, port, proxy,
        tuple(CardFinding(f.rule.id, f.severity.label, f.message,
                          f"{f.source}:{f.line}" if f.line else f.source,
                          ignored.get(f.rule.id)) for f in findings or ()),
        classes, note)


# --- audit --node-config: one directory per node, joined with the cluster's pods ----------


MAX_NODE_FOLDERS = 10_000  # a cluster's Windows nodes; more is a wrong directory


def node_configs(directory: str, session: Session) -> dict[str, NodeFiles]:
    """Each subdirectory of ``directory`` read as one node's files, keyed by its name
    (the node's name); read errors go to ``session`` as one line each."""
    import os

    from kubelet_winnet.cli.nodefiles import read_node

    try:
        names = sorted(n for n in os.listdir(directory)
                       if os.path.isdir(os.path.join(directory, n)))
    except OSError as exc:
        session.error(f"--node-config {directory}: cannot read: "
                      f"{exc.strerror or type(exc).__name__}")
        return {}
    if not names:
        session.error(f"--node-config {directory}: no directory per node in it")
    if len(names) > MAX_NODE_FOLDERS:  # cutting them would judge pods without their node
        session.error(f"--node-config {directory}: more than {MAX_NODE_FOLDERS} folders; "
                      "give one folder per node of the cluster")
        return {}
    found: dict[str, NodeFiles] = {}
    for name in names:
        folder = os.path.join(directory, name)
        files = read_node([folder])
        for problem in files.errors:
            session.error(str(problem))
        for skipped in files.skipped:
            session.note(skipped)
        if files.empty:  # its pods would get default plans as if judged: an input error
            if not files.errors:
                count = f"{files.files} file" + ("" if files.files == 1 else "s")
                session.error(f"--node-config {folder}: no node file in it ({count} read); "
                              "its pods are not judged against it")
            continue
        if files.node is not None and files.node.name != name:
            session.note(f"--node-config {name}: its Node object is {files.node.name!r}; "
                         f"the folder name {name!r} is used to join pods")
        found[name] = files
    return found


def unmatched_node_configs(folders: dict[str, NodeFiles], nodes: Iterable[str],
                           directory: str, session: Session) -> None:
    """An error for each ``--node-config`` folder named after no node of the input: its
    files judged nothing (a typo in the folder name, or the wrong cluster)."""
    import os

    seen = set(nodes)
    for name in folders:
        if name not in seen:
            session.error(f"--node-config {os.path.join(directory, name)}: no node {name!r} in "
                          f"the input ({len(seen)} node{'' if len(seen) == 1 else 's'}); "
                          "name each folder after its node")


def audit_node_findings(folders: dict[str, NodeFiles], nodes: Mapping[str, Any],
                        default_kubelet: str) -> dict[str, list[NodeFinding]]:
    """``audit --node-config``: each node's own findings (as ``node`` reports them), once
    per folder whose node is in the input, without those its Node object ignores."""
    found: dict[str, list[NodeFinding]] = {}
    for name, files in folders.items():
        node = nodes.get(name)
        if node is None:
            continue  # an error of its own (unmatched_node_configs)
        kubelet = node.kubelet_version or default_kubelet
        ignored = _ignored(files, [])
        try:
            judged = judge_node(files, kubelet, node.runtime, bool(node.kubelet_version))
        except WinnetError:  # the files contradict each other: read_node said so
            continue
        found[name] = [f for f in judged if f.rule.id not in ignored]
    return found


def request_mappings(obj: Any, kubelet: str, feature_gates: str | None,
                     runtime_classes: Mapping[str, str]) -> tuple[tuple[int, int, str, str], ...]:
    """The port mappings the kubelet sends for the pod (its request builder's), for the
    judgement's hostPort outcome; () when it builds no request. The handler is the
    judgement's, not this request's: a RuntimeClass the input lacks is looked up as ""."""
    from kubelet_winnet import NodeContext, run_pod_sandbox_request
    from kubelet_winnet.errors import WinnetError

    handlers = dict(runtime_classes)
    spec = obj.get("spec") if isinstance(obj, dict) else None
    name = spec.get("runtimeClassName") if isinstance(spec, dict) else None
    if isinstance(name, str) and name and name not in handlers:
        handlers[name] = ""
    try:
        request = run_pod_sandbox_request(
            obj, kubelet_version=kubelet, feature_gates=feature_gates,
            node=NodeContext(runtime_handlers=handlers))
    except WinnetError:
        return ()
    protocols = {0: "tcp", 1: "udp", 2: "sctp"}  # cri-api runtime.v1 Protocol
    return tuple((m.container_port, m.host_port, protocols.get(m.protocol, str(m.protocol)),
                  m.host_ip) for m in request.config.port_mappings)


def on_node_value(verdict: Verdict) -> tuple[dict[str, Any], str]:
    """What one pod of the cluster gets on its node, rendered from its verdict: the JSON
    value of audit's ``onNode`` and one sentence."""
    ports = [p for p in verdict.ports if p.host_port > 0]
    network = verdict.network
    value = {
        "handler": verdict.handler, "isolation": verdict.isolation, "network": network.value,
        **({"condition": network.condition} if network.value == "unknown" else {}),
        "refused": verdict.runtime_refused,
        "hostPorts": [{"hostPort": p.host_port, "protocol": p.protocol, "outcome": p.outcome,
                       "reason": p.reason} for p in ports],
    }
    if verdict.runtime_refused:
        return value, f"on its node: {verdict.runtime_refused}"
    isolation = f"{verdict.isolation} isolation" if verdict.isolation else "isolation not known"
    text = f"on its node: {isolation}, {network.text}"
    for port in ports:
        text += f"; hostPort {port.host_port} {port.outcome}"
        if port.outcome in ("dropped", "unknown"):
            text += f" ({port.reason})"
    return value, text


# --- matrix --runtime: the runtime axis ----------------------------------------------------


@dataclass(frozen=True)
class RuntimeRow:
    """One containerd release range and what each pod class gets under it."""

    releases: str  # "2.3.0-2.3.2", "2.4"
    hcsshim: str
    cells: tuple[tuple[str, PodNetworkPlan], ...]  # (column, plan)


RUNTIME_COLUMNS = ("HostProcess, process", "HostProcess, Hyper-V", "hostPort pod, process",
                   "hostPort pod, Hyper-V")


def runtime_rows() -> list[RuntimeRow]:
    """containerd 1.7 to 2.4 (``runtime._releases``) by process and Hyper-V isolation, for
    a HostProcess pod and a pod with a hostPort, planned with a CNI network whose plugin
    applies port mappings (win-bridge with the capability): the runtime's part alone."""
    from cri_api.runtime.v1 import api_pb2
    from kubelet_winnet.runtime import CniNetwork, CniPlugin, NodeFacts, plan_pod_network
    from kubelet_winnet.runtime._releases import (
        CONTAINERD_LINES,
        HYPERV_HANDLERS,
        PROCESS_HANDLERS,
        shim_has_hyperv_host_process,
    )

    cni = CniNetwork("example", (CniPlugin("win-bridge", frozenset({"portMappings"})),))
    rows: list[RuntimeRow] = []
    for line in CONTAINERD_LINES:
        groups: list[list[Any]] = []
        for row in line.shims:
            has = shim_has_hyperv_host_process("containerd://{}.{}.{}".format(*row.since))
            if groups and groups[-1][0] == has:
                groups[-1][1].append(row)
            else:
                groups.append([has, [row]])
        for index, (_, shims) in enumerate(groups):
            first = shims[0].since
            last = groups[index + 1][1][0].since if index + 1 < len(groups) else None
            if len(groups) == 1:
                label = line.name
            elif last is None:
                label = "{}.{}.{}+".format(*first)
            else:
                label = "{}.{}.{}-{}.{}.{}".format(*first, last[0], last[1], last[2] - 1)
            facts = NodeFacts(runtime="containerd://{}.{}.{}".format(*first), cni=cni)
            cells = []
            for column in RUNTIME_COLUMNS:
                host_process = column.startswith("HostProcess")
                handler = next(iter(HYPERV_HANDLERS if column.endswith("Hyper-V")
                                    else PROCESS_HANDLERS))
                message = api_pb2.RunPodSandboxRequest(runtime_handler=handler)
                message.config.port_mappings.add(container_port=80, host_port=8080)
                if host_process:
                    message.config.windows.security_context.host_process = True
                cells.append((column, plan_pod_network(message, facts)))
            tags = list(dict.fromkeys(s.hcsshim for s in shims))
            hcsshim = tags[0] if len(tags) == 1 else f"{tags[0]} to {tags[-1]}"
            rows.append(RuntimeRow(label, hcsshim, tuple(cells)))
    return rows


def _runtime_cell(plan: PodNetworkPlan) -> str:
    port = next(p for p in plan.ports if p.host_port > 0)
    network = {"node": "host network", "pod": "pod network", "none": "**no network**"}
    outcome = {"host": "is the node's own port", "applied": "mapped by CNI",
               "dropped": "dropped"}.get(port.outcome, port.outcome)
    text = f"{network[plan.namespace]}; hostPort {outcome}"
    if plan.notes and plan.namespace == "node":
        text += (" (this shim predates hcsshim PR #2531 and runs the container on the host; "
                 "read from hcsshim's code, not run on Windows)")
    return text


def render_runtime_markdown() -> str:
    """The runtime axis as a markdown table (``matrix --runtime``, docs/node-runtime.md)."""
    lines = ["| containerd | hcsshim of its shim | " + " | ".join(RUNTIME_COLUMNS) + " |",
             "|---|---|" + "---|" * len(RUNTIME_COLUMNS)]
    for row in runtime_rows():
        cells = " | ".join(_runtime_cell(plan) for _, plan in row.cells)
        lines.append(f"| {row.releases} | {row.hcsshim} | {cells} |")
    return "\n".join(lines) + "\n"


def render_runtime_json() -> str:
    return json.dumps([
        {"containerd": row.releases, "hcsshim": row.hcsshim,
         "cells": {column: {"network": plan.namespace, "isolation": plan.isolation,
                            "hostPort": next(p.outcome for p in plan.ports if p.host_port),
                            "notes": list(plan.notes)}
                   for column, plan in row.cells}}
        for row in runtime_rows()], indent=2) + "\n"
