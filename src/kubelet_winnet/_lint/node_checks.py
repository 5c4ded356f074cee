"""One node's files judged, for ``kubelet-winnet node`` and ``audit --node-config``:
what each class of pod gets there (`pod_classes`, the judgement of a pod of that
class) and the node rules of `node_rules` checked against the
files (`judge_node`), each finding a `NodeFinding` with its file and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelet_winnet._judgement import NodeKnowledge, Verdict
    from kubelet_winnet._lint.rules import Rule, Severity
    from kubelet_winnet.runtime import NodeFacts, PortPlan
    from kubelet_winnet.sources.node import NodeFiles
    from kubelet_winnet.sources.node.kube import ComponentConfig

__all__ = [
    "NodeFinding", "PodClass", "ignored_node_rules", "judge_node", "node_findings",
    "node_knowledge", "node_stops", "pod_classes"]

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
    # What it keeps from running when the node then makes no sandbox at all ("kubelet",
    # "containerd", "cni"); "" for a finding pods start despite (node_stops).
    stops: str = ""


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
    def dns(self) -> str:
        """What becomes of the class's DNS settings (``-``: not judged)."""
        plan = self.verdict.dns
        return plan.outcome if plan is not None else "-"

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
        plan = self.verdict.dns
        if self.name == _OWN_DNS_CLASS and plan is not None and plan.outcome != "applied":
            notes.append(f"DNS: {plan.reason}")  # the row is about its DNS settings
        return "; ".join(notes)


def _version_minor(text: str) -> int | None:
    match = re.fullmatch(r"v?1\.(\d{1,3})(\.\d+.*)?", text.strip())
    return int(match[1]) if match else None


# The DNS settings of the "own DNS" class: every list of a DNSConfig set, so the answer
# says which of them reach the endpoint.
_OWN_DNS = {"dnsPolicy": "None", "dnsConfig": {
    "nameservers": ["10.0.0.53"], "searches": ["corp.example"],
    "options": [{"name": "ndots", "value": "2"}]}}
_OWN_DNS_CLASS = "pod with its own DNS (dnsPolicy: None)"


def _probe(host_port: int, host_process: bool, runtime_class: str | None,
           own_dns: bool = False) -> dict[str, Any]:
    """A pod of one class asking for ``host_port`` (0: none), with its own DNS settings
    (``own_dns``) or the cluster DNS."""
    ports = [{"containerPort": host_port, "hostPort": host_port}] if host_port else []
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "ports": ports}],
                            **(_OWN_DNS if own_dns else {})}
    if host_process:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"}, "spec": spec}


def pod_classes(
    files: NodeFiles, host_port: int, kubelet_version: str, runtime: str = "",
    findings: Sequence[NodeFinding] = (),
) -> list[PodClass]:
    """What a process-isolated pod, a Hyper-V pod, a HostProcess pod (with the default
    handler and, when the node has one, a Hyper-V handler), a pod with its own DNS
    settings, a hostPort and each pod's DNS get here (``runtime``: ``--runtime``, when no
    Node object names the node's), each the judgement of a pod of that class (its
    RuntimeClass named after the handler) with the DNSConfig the kubelet sends for it.
    ``findings``: the node's own (``judge_node``); one that keeps the node from making any
    sandbox (`node_stops`) refuses every class."""
    facts = node_stops(files.node_facts(runtime), findings)
    hyperv = sorted(n for n, i in facts.handlers.items() if i == "hyperv")
    process = sorted(n for n, i in facts.handlers.items() if i == "process")
    classes: list[tuple[str, str | None, bool]] = [("pod without RuntimeClass", None, False),
                                                   (_OWN_DNS_CLASS, None, False)]
    if process and facts.handlers[facts.default_handler] != "process":
        classes.append((f"process-isolated pod ({process[0]})", process[0], False))
    if hyperv:
        classes.append((f"Hyper-V pod ({hyperv[0]})", hyperv[0], False))
    classes.append(("HostProcess pod", None, True))
    if hyperv and facts.handlers[facts.default_handler] != "hyperv":
        classes.append((f"HostProcess pod, Hyper-V ({hyperv[0]})", hyperv[0], True))
    del kubelet_version  # the sandbox request for these classes is the same in 1.26+
    return [_pod_class(files, facts, name, handler, hp, host_port)
            for name, handler, hp in classes]


def _pod_class(files: NodeFiles, facts: NodeFacts, name: str, handler: str | None,
               host_process: bool, host_port: int) -> PodClass:
    """The judgement of one class's probe pod, with the request's port mapping and the
    DNSConfig the kubelet sends for it."""
    from kubelet_winnet._judgement import NodeKnowledge, judge
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile

    probe = _probe(host_port, host_process, handler, name == _OWN_DNS_CLASS)
    known = {handler: handler} if handler else {}
    from kubelet_winnet._judgement.public import request_network

    _, dns = request_network(probe, DEFAULT_KUBELET_VERSION, None, known)
    mappings = ((host_port, host_port, "tcp", ""),)
    return PodClass(name, judge(probe, kubelet_profile(DEFAULT_KUBELET_VERSION), NodeKnowledge(
        runtime=facts.runtime or "containerd", files=facts,  # the node command's runtime
        runtime_classes=known),  # facts.handlers_read: whether config.toml was read
        mappings=mappings, dns=dns))


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
        # a name no gate list through 1.LISTED_THROUGH holds may be a newer gate; an empty
        # one is no gate of any release
        upto = MAX_MINOR if span is not None or not gate.strip() else LISTED_THROUGH
        head = f"no {component} from 1.{MIN_MINOR} to 1.{upto} starts with this gate"
    else:
        head = f"{component} 1.{minor} exits at start-up"
    return (rule, f"{head}: {error} ({why}).", source, line, detail, None)


def _lock_finding(component: str, gate: str, value: bool, line: int, source: str,
                  minor: int | None) -> _Finding | None:
    """A gate set against the value its release locks it to (None: release unknown, then
    conditional on the releases that lock it)."""
    from kubelet_winnet._kubelet.gate_locks import gate_lock
    from kubelet_winnet._kubelet.profile import MAX_MINOR, MIN_MINOR
    from kubelet_winnet._kubelet.startup import GATE_SOURCES
    from kubelet_winnet._lint.rules import Severity

    minors = range(MIN_MINOR, MAX_MINOR + 1) if minor is None else (minor,)
    locking = [m for m in minors if (lock := gate_lock(gate, m)) and lock.value != value]
    if not locking:
        return None
    lock = gate_lock(gate, locking[0])
    assert lock is not None
    # component-base's text (featuregate SetFromMap), Go's %v of a bool.
    error = (f"cannot set feature gate {gate} to {str(value).lower()}, feature is locked "
             f"to {str(lock.value).lower()}")
    why = f"locked since Kubernetes 1.{lock.since}; remove it"
    detail = GATE_SOURCES[lock.source]
    if minor is not None:
        return ("node-gate-locked", f"{component} 1.{minor} exits at start-up: {error} "
                f"({why}).", source, line, detail, None)
    return ("node-gate-locked", f"if this node's {component} is {_releases(tuple(locking))}, "
            f"it exits at start-up: {error} ({why}). Say this node's release with "
            "--kubelet-version or a Node object.", source, line, detail, Severity.WARNING)


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
    found += [finding for gate, (value, line) in config.gates.items()
              if (finding := _lock_finding(component, gate, value, line, source, minor))]
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
            severity: Severity | None = None, stops: str = "") -> None:
        from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

        rule = NODE_RULES_BY_ID[rule_id]
        self.append(NodeFinding(rule, severity or rule.severity, message, source, line, detail,
                                stops))


def node_stops(facts: NodeFacts, findings: Sequence[NodeFinding]) -> NodeFacts:
    """``facts`` with what the node's own findings say keeps sandboxes from being made
    (``NodeFacts.stops``: the kubelet or containerd does not start; ``cni_fails``: no CNI
    plugin is found), each the finding's sentence with its file and line."""
    from dataclasses import replace

    def said(kinds: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(f"{f.message.rstrip('.')} ({f.source}:{f.line})" if f.source
                     else f.message.rstrip(".") for f in findings if f.stops in kinds)

    return replace(facts, stops=said(("kubelet", "containerd")), cni_fails=said(("cni",)))


def node_findings(files: NodeFiles, *, kubelet_version: str | None = None,
                  runtime: str | None = None) -> tuple[NodeFinding, ...]:
    """The findings ``kubelet-winnet node`` reports for one node's files
    (`read_node`), before any ignore annotation. The Node
    object's kubelet version and runtime come first, as for the command; else
    ``kubelet_version`` and ``runtime`` (``containerd://2.3.3``, as ``--kubelet-version``
    and ``--runtime`` give them); a release neither says makes the findings that rest on
    it conditional. Raises ``NodeConfigError`` for files that contradict each other."""
    from kubelet_winnet._describe import type_name
    from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
    from kubelet_winnet.errors import InvalidArgumentError
    from kubelet_winnet.sources.node import NodeFiles

    if not isinstance(files, NodeFiles):
        raise InvalidArgumentError("files", "the NodeFiles of read_node", type_name(files))
    for name, value in (("kubelet_version", kubelet_version), ("runtime", runtime)):
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentError(name, "a string or None", type_name(value))
    if kubelet_version is not None:  # UnsupportedVersionError, as the command's flag
        from kubelet_winnet._kubelet.kubelet_version import parse_kubelet_version

        parse_kubelet_version(kubelet_version)
    node = files.node
    kubelet = node.kubelet_version if node and node.kubelet_version else kubelet_version
    used_runtime = node.runtime if node and node.runtime else runtime or ""
    return tuple(judge_node(files, kubelet or DEFAULT_KUBELET_VERSION, used_runtime,
                            bool(kubelet)))


def node_knowledge(files: NodeFiles, *, kubelet_version: str | None = None,
                   runtime: str | None = None,
                   runtime_classes: Mapping[str, str] | None = None) -> NodeKnowledge:
    """What ``node`` and ``audit --node-config`` know of a node from its files
    (`read_node`), for [`judge`][kubelet_winnet.judge]: the facts its files give, with
    what its own findings ([`node_findings`][kubelet_winnet.node_findings], the same
    arguments) say keeps it from making any sandbox: the kubelet or containerd does not
    start (``NodeFacts.stops``), no CNI plugin is found (``cni_fails``).
    ``runtime_classes`` as for ``NodeKnowledge`` (a RuntimeClass name to its handler).
    The Node object's kubelet version and runtime come first, as for the command; its
    kubelet is ``NodeKnowledge.kubelet_version``, which ``judge`` then judges with.
    ``NodeKnowledge(files=files.facts)`` has the facts alone, so a node whose containerd
    cannot decode its ``config.toml`` would be judged with containerd's defaults there."""
    from kubelet_winnet._judgement import NodeKnowledge

    found = node_findings(files, kubelet_version=kubelet_version, runtime=runtime)
    node = files.node
    used_runtime = node.runtime if node and node.runtime else runtime or ""
    own = node.kubelet_version if node and node.kubelet_version else kubelet_version
    return NodeKnowledge(runtime=used_runtime or None, kubelet_version=own,
                         files=node_stops(files.node_facts(used_runtime), found),
                         runtime_classes={} if runtime_classes is None else runtime_classes)


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
            # one the release surely refuses (no severity of its own): the kubelet exits,
            # and a node without a kubelet starts no pod (kube-proxy's stop only services)
            sure = settings.component == "kubelet" and finding[5] is None
            found.add(*finding, stops="kubelet" if sure else "")
    _proxy_findings(files, found)
    if files.containerd is not None:
        _containerd_findings(files.containerd, line, found)
        _hyperv_findings(files, runtime, found)
    _undecoded_findings(files, found)
    _cni_findings(files, found)
    _dns_findings(files, runtime, found)
    _port_range_findings(files, found)
    _pause_findings(files, line, found)
    return found


def _proxy_findings(files: NodeFiles, found: _Found) -> None:
    for proxy in (c for c in files.components if c.component == "kube-proxy"):
        if proxy.mode is not None and proxy.mode[0] not in ("", "kernelspace"):
            found.add("node-proxy-mode",
                      f"proxy mode {proxy.mode[0]!r} is a validation error on Windows: "
                      "kube-proxy does not start; use kernelspace.", proxy.source, proxy.mode[1])


def _undecoded_findings(files: NodeFiles, found: _Found) -> None:
    """A ``config.toml`` containerd cannot decode: containerd exits at start-up, so the
    node makes no sandbox (its defaults do not stand in, as they do for a missing file)."""
    from kubelet_winnet.sources.node.containerd import ContainerdDecodeError

    for error in files.errors:
        if isinstance(error, ContainerdDecodeError):
            source = error.file or error.where
            found.add("node-config-version",
                      "containerd does not start: it cannot decode this file and exits "
                      f"with \"failed to unmarshal TOML\"; {error.reason}.",
                      source, error.line or 0,
                      stops="containerd")


def _containerd_findings(config: Any, line: Any, found: _Found) -> None:
    """What containerd's configuration makes of its own start-up and options."""
    from kubelet_winnet._lint.rules import Severity
    from kubelet_winnet.runtime._releases import CONTAINERD_LINES, removed_in, removed_option

    if line is not None and config.version > max(line.config_versions):
        found.add("node-config-version",
                  f"containerd {line.name} loads schema versions up to "
                  f"{max(line.config_versions)}, this file is version {config.version}: "
                  "containerd does not start.", config.source, config.version_line,
                  stops="containerd")
    newest = CONTAINERD_LINES[-1]
    if line is None and config.version > max(newest.config_versions):
        # Whatever the release: none loads it (ValidateVersion in each line's config.go).
        found.add("node-config-version",
                  f"no containerd release up to {newest.name} loads schema version "
                  f"{config.version} (the newest reads up to {max(newest.config_versions)}): "
                  "containerd does not start.", config.source, config.version_line,
                  stops="containerd")
    if line is not None and line.line < (2, 0):
        for key in config.short_plugin_keys:
            found.add("node-config-version",
                      f"containerd {line.name} refuses to start: {key.key} is no plugin id in "
                      f"a version {config.version} file (\"invalid plugin key URI\"); use the "
                      "io.containerd... id.", config.source, key.line, stops="containerd")
    if config.default_runtime_name is not None \
            and config.default_handler not in config.handlers():
        # ValidatePluginConfig (internal/cri/config/config.go) refuses to start.
        found.add("node-config-version",
                  f"containerd refuses to start: default_runtime_name = "
                  f"{config.default_handler!r} names no runtime table it reads.",
                  config.source, config.default_runtime_name.line,
                  "no corresponding runtime configured in `containerd.runtimes` for "
                  "`containerd` `default_runtime_name`", stops="containerd")
    unknown = line is None

    def removed(key: str) -> tuple[bool, str]:
        """Whether this node's containerd no longer reads ``key`` (a version 3+ file on a
        line from the row's release on, or a release not known), and the sentence's start."""
        option = removed_option(key)
        release = removed_in(option)
        return (config.version >= 3 and (unknown or line.line >= option.removed_in),
                f"if this node runs containerd {release}+, " if unknown
                else f"containerd {release} ")

    bin_dir_removed, prefix = removed("bin_dir")
    if bin_dir_removed and config.bin_dir is not None:
        folder = str(config.bin_dir.value)
        custom = (folder.lower().rstrip("\\/") not in _DEFAULT_BIN_DIRS
                  and config.bin_dirs is None)
        found.add("node-option-removed",
                  prefix + f"ignores bin_dir = {folder!r}"
                  + (": CNI plugins there are not found and pods get no network; use bin_dirs."
                     if custom else "; use bin_dirs."),
                  config.source, config.bin_dir.line,
                  severity=Severity.INFO if unknown else (Severity.ERROR if custom else None),
                  stops="cni" if custom and not unknown else "")
    enable_cdi_removed, prefix = removed("enable_cdi")
    if enable_cdi_removed and config.enable_cdi is not None:
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
    from kubelet_winnet.runtime._releases import HOST_PROCESS_IN_UVM

    config = files.containerd
    facts = files.node_facts(runtime)
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
                  f"no network at all (hcsshim PR #{HOST_PROCESS_IN_UVM.pull_request}).",
                  config.source,
                  next((t.line for t in config.runtimes if t.name in hyperv), 0),
                  severity=Severity.INFO)


def _cni_findings(files: NodeFiles, found: _Found) -> None:
    from kubelet_winnet._lint.rules import Severity

    network = files.network
    if network is None:
        return
    from kubelet_winnet.runtime._cni import port_outcome

    outcome, reason = port_outcome(network)
    if outcome != "applied":
        verb = "are dropped" if outcome == "dropped" else "may be dropped"
        found.add("node-host-port-dropped",
                  f"hostPorts of pods on this node {verb}: {reason}.", network.source, 1,
                  severity=Severity.INFO if outcome == "unknown" else None)


def _dns_findings(files: NodeFiles, runtime: str, found: _Found) -> None:
    """Pods' own DNS settings the node's CNI network ignores, as the judgement has them
    for a pod that sets every list of a DNSConfig (the own-DNS class of `pod_classes`)."""
    from kubelet_winnet._lint.rules import Severity

    network = files.network
    if network is None:
        return
    own = _pod_class(files, files.node_facts(runtime), _OWN_DNS_CLASS, None, False, 0)
    plan = own.verdict.dns
    if plan is None or plan.outcome in ("applied", "host"):
        return
    verb = {"dropped": "are ignored", "partly": "are partly ignored"}.get(
        plan.outcome, "may be ignored")
    found.add("node-dns-dropped",
              f"pods' own DNS settings (dnsPolicy None or Default, dnsConfig) {verb} on this "
              f"node: {plan.reason}.", network.source, 1,
              severity=None if plan.outcome == "dropped" else Severity.INFO)


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
    hyperv = any(i == "hyperv" for i in files.facts.handlers.values())
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


def ignored_node_rules(files: NodeFiles, flags: list[str]) -> dict[str, str]:
    from kubelet_winnet._lint.ignores import IGNORE_PREFIX

    ignored = dict.fromkeys(flags, "--ignore")
    if files.node is not None:
        for key, value in files.node.annotations.items():
            if key.startswith(IGNORE_PREFIX):
                ignored.setdefault(key[len(IGNORE_PREFIX):], value)
    return ignored
