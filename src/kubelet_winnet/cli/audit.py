"""``kubelet-winnet audit``: every Windows pod of a cluster, judged by the node it runs on.

For each pod: the node, that node's kubelet version (``status.nodeInfo.kubeletVersion``)
and runtime (``containerRuntimeVersion``), and the judgement of the pod on that node
(:func:`kubelet_winnet._judgement.judge`: what the kubelet sends, whether the sandbox
starts, its network, each hostPort with ``--node-config``), rendered: this module decides
nothing itself. The ``check`` findings come from the same verdict.

Which pods: those on a Windows node (the node's OS decides what the kubelet builds, not
``spec.os``); pods not scheduled yet, or whose node is not in the input, when the pod
targets Windows (``spec.os.name``, node selector or affinity). They are judged against
``--kubelet-version``.

:class:`Auditor` is the pure part (objects in, :class:`PodAudit` out); the sources live in
:mod:`kubelet_winnet.cli.cluster`; :func:`run_audit` is the command.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from kubelet_winnet import DEFAULT_KUBELET_VERSION, kubelet_profile
from kubelet_winnet._describe import describe_path
from kubelet_winnet._judgement import NodeKnowledge, Verdict, judge
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.ignores import ignored_rules
from kubelet_winnet._lint.reach import HostNetworkReach, host_network_reach
from kubelet_winnet._lint.rules import RULES, RULES_BY_ID, Finding, Severity
from kubelet_winnet._lint.targeting import PodObject, Target, pod_object, target_of
from kubelet_winnet._printable import clip, printable
from kubelet_winnet.cli.cluster import (
    DEFAULT_PAGE_BYTES,
    DEFAULT_PAGE_SIZE,
    DEFAULT_REQUEST_TIMEOUT,
    ClusterObject,
    LiveCluster,
    Node,
    dump_objects,
    node_from,
    parse_timeout,
)
from kubelet_winnet.cli.session import Command
from kubelet_winnet.errors import (
    ClusterAccessError,
    FeatureGateError,
    InvalidPodError,
    UnsupportedVersionError,
)
from kubelet_winnet.runtime._releases import runtime_name

if TYPE_CHECKING:
    from kubelet_winnet.cli.nodefiles import NodeFiles
    from kubelet_winnet.cli.session import Session

__all__ = [
    "EFFECTS",
    "Auditor",
    "PodAudit",
    "Totals",
    "configure_audit",
    "run_audit",
    "runtime_name",
]

# What becomes of spec.hostNetwork on the node.
EFFECTS = ("not-requested", "applied", "ignored", "unknown", "refused", "not-modelled",
           "no-network")


@dataclass(frozen=True, slots=True)
class FindingRecord:
    rule: str
    severity: str
    message: str
    field: str
    ignored: str | None  # the annotation's reason when ignored


@dataclass(frozen=True, slots=True)
class PodAudit:
    """One Windows pod, judged by its node's kubelet and runtime."""

    namespace: str
    name: str
    node: str  # "" when not scheduled
    kubelet_version: str  # as the node reports it, or the --kubelet-version used
    kubelet_source: str  # "node", "--kubelet-version"
    runtime: str  # as the node reports it; "" when unknown
    host_network: bool
    network: str | None  # namespace_options.network sent (None: unset)
    host_process: bool
    refused: str | None  # the kubelet's refusal text
    effect: str  # one of EFFECTS
    note: str
    findings: tuple[FindingRecord, ...]
    where: str
    on_node: dict[str, Any] | None = None  # audit --node-config: cli.node.pod_on_node

    @property
    def sent(self) -> str:
        if self.effect == "not-modelled":
            return "not modelled"
        if self.refused is not None:
            return "refused"
        text = f"network {self.network}" if self.network else "no namespace_options"
        return text + (", host_process" if self.host_process else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node or None,
            "kubeletVersion": self.kubelet_version,
            "kubeletVersionFrom": self.kubelet_source,
            "runtime": self.runtime or None,
            "hostNetwork": self.host_network,
            "sent": None if self.refused is not None or self.effect == "not-modelled" else {
                "network": self.network, "hostProcess": self.host_process,
            },
            "refused": self.refused,
            "hostNetworkEffect": self.effect,
            "note": self.note or None,
            "findings": [
                {"rule": f.rule, "severity": f.severity, "message": f.message,
                 "field": f.field, "ignored": f.ignored}
                for f in self.findings
            ],
            **({"onNode": self.on_node} if self.on_node is not None else {}),
        }


@dataclass
class Totals:
    pods: int = 0
    host_network: int = 0
    effects: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EFFECTS, 0))
    severities: dict[str, int] = field(
        default_factory=lambda: {s.label: 0 for s in Severity}
    )
    ignored_by_annotation: int = 0

    def add(self, record: PodAudit) -> None:
        self.pods += 1
        self.host_network += record.host_network
        self.effects[record.effect] += 1
        for finding in record.findings:
            if finding.ignored is None:
                self.severities[finding.severity] += 1
            else:
                self.ignored_by_annotation += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "pods": self.pods,
            "hostNetwork": self.host_network,
            "hostNetworkEffect": dict(self.effects),
            "findings": dict(self.severities),
            "ignoredByAnnotation": self.ignored_by_annotation,
        }

    def text(self) -> str:
        e = self.effects
        s = self.severities
        return (
            f"{self.pods} pod{'s' * (self.pods != 1)}, {self.host_network} with hostNetwork "
            f"({e['applied']} applied, {e['ignored']} ignored, {e['unknown']} unknown"
            + (f", {e['no-network']} with no network" if e["no-network"] else "") + "); "
            f"{e['refused']} refused, {e['not-modelled']} not modelled; findings: "
            f"{s['error']} error{'s' * (s['error'] != 1)}, "
            f"{s['warning']} warning{'s' * (s['warning'] != 1)}, {s['info']} info"
            + (f", {self.ignored_by_annotation} ignored by annotation"
               if self.ignored_by_annotation else "")
        )


class Auditor:
    """Judges pods against the nodes seen so far: a pod's node must be given before the
    pod (``kubectl get nodes,pods`` and the live source do that, and ``_ordered`` holds
    back a pod whose node has not come yet); :meth:`pod` returns ``None`` for a pod that
    is not a Windows pod, counting why."""

    def __init__(self, default_kubelet: str, feature_gates: str | None) -> None:
        self.default_kubelet = default_kubelet
        self.feature_gates = feature_gates
        self.nodes: dict[str, Node] = {}
        self.windows_nodes = 0
        self.skipped: dict[str, int] = {"linux-node": 0, "not-windows-targeted": 0,
                                        "finished": 0}
        self._reach: dict[str, HostNetworkReach | Exception] = {}
        self.runtime_classes: dict[str, str] = {}  # RuntimeClass name -> handler
        self.node_files: dict[str, NodeFiles] = {}  # --node-config, by node name

    def node(self, obj: Mapping[str, Any]) -> Node:
        node = node_from(obj)
        if node.name in self.nodes and self.nodes[node.name].os == "windows":
            self.windows_nodes -= 1
        self.nodes[node.name] = node
        self.windows_nodes += node.os == "windows"
        return node

    def pod(self, obj: Mapping[str, Any], where: str) -> PodAudit | None:
        """Raises :class:`InvalidPodError` for a pod the library cannot read."""
        spec = obj.get("spec")
        if isinstance(spec, dict):  # most pods of a mixed cluster: skip Linux ones first
            node_name = spec.get("nodeName")
            if isinstance(node_name, str) and node_name:
                node = self.nodes.get(node_name)
                if node is not None and node.os and node.os != "windows":
                    self.skipped["linux-node"] += 1
                    return None
        pod = pod_object(obj)
        if pod is None:
            return None
        status = obj.get("status")
        if isinstance(status, dict) and status.get("phase") in ("Succeeded", "Failed"):
            # Finished: the kubelet has stopped its sandbox; nothing is sent any more.
            self.skipped["finished"] += 1
            return None
        spec = pod.spec
        node_name = spec.get("nodeName")
        node_name = node_name if isinstance(node_name, str) else ""
        node = self.nodes.get(node_name) if node_name else None
        note = ""
        if node is not None and node.os != "windows":
            if node.os:
                self.skipped["linux-node"] += 1
                return None
            note = f"node {node_name} does not report its OS; "
        if node is None or not node.os:
            target, _ = target_of(pod)
            if target is not Target.WINDOWS:
                self.skipped["not-windows-targeted"] += 1
                return None
            if node_name and node is None:
                note += f"node {node_name} is not in the input; "
        if node is not None and node.kubelet_version:
            kubelet, source = node.kubelet_version, "node"
        else:
            kubelet, source = self.default_kubelet, "--kubelet-version"
        runtime = node.runtime if node is not None else ""
        metadata = obj.get("metadata")
        namespace = _text(metadata, "namespace") or "default"
        name = _text(metadata, "name") or "<unnamed>"
        host_network = spec.get("hostNetwork") is True

        verdict, effect, why = self._verdict(obj, kubelet, runtime, node_name)
        note += why
        findings, why = self._findings(pod, kubelet, runtime, verdict)
        note += why
        on_node = None
        if verdict is not None and node_name in self.node_files:
            from kubelet_winnet.cli.node import on_node_value

            on_node, text = on_node_value(verdict)
            note += f"{text}; "
        decision = verdict.decision if verdict is not None else None
        network = decision.network if decision is not None and not decision.error else None
        host_process = decision is not None and decision.host_process
        refused = decision.error if decision is not None else None
        return PodAudit(
            namespace, name, node_name, kubelet, source, runtime, host_network, network,
            host_process, refused, effect, note.removesuffix("; "), findings, where, on_node,
        )

    def runtime_class(self, obj: Mapping[str, Any]) -> None:
        """A RuntimeClass of the input: its handler tells Hyper-V isolation apart."""
        name = _text(obj.get("metadata"), "name")
        handler = obj.get("handler")
        if name and isinstance(handler, str) and len(self.runtime_classes) < 10_000:
            self.runtime_classes[name] = handler

    def _verdict(self, obj: Mapping[str, Any], kubelet: str, runtime: str, node_name: str,
                 ) -> tuple[Verdict | None, str, str]:
        """The judgement of the pod on its node, its HOSTNETWORK effect and the note."""
        try:
            profile = kubelet_profile(kubelet, self.feature_gates)
        except (UnsupportedVersionError, FeatureGateError) as exc:
            return None, "not-modelled", (
                f"{exc}: not modelled, findings judged as kubelet {self.default_kubelet}; ")
        files = self.node_files.get(node_name)
        mappings: tuple[tuple[int, int, str, str], ...] = ()
        if files is not None:
            from kubelet_winnet.cli.node import request_mappings

            mappings = request_mappings(obj, kubelet, self.feature_gates, self.runtime_classes)
        verdict = judge(obj, profile, NodeKnowledge(
            runtime=runtime or None, files=files.facts(runtime) if files is not None else None,
            runtime_classes=self.runtime_classes,
            handlers_read=files is not None and files.containerd is not None,
        ), mappings=mappings)
        network = verdict.network
        why = ""
        if verdict.starts is not False and runtime_name(runtime) == "containerd" and (
                network.value == "unknown" or (network.value == "none" and verdict.host_process)):
            why = (network.condition if network.value == "unknown" else network.reasons[0]) + "; "
        return verdict, verdict.host_network_effect, why

    def _findings(self, pod: PodObject, kubelet: str, runtime: str, verdict: Verdict | None,
                  ) -> tuple[tuple[FindingRecord, ...], str]:
        """The check findings of the pod (as its node's verdict has it), and a note."""
        reach = self._reach_for(kubelet)
        if not isinstance(reach, HostNetworkReach):  # a kubelet the library does not model:
            reach = self._reach_for(self.default_kubelet)  # the findings still hold
        if not isinstance(reach, HostNetworkReach):
            return (), ""
        # The API server decoded every key of a pod it returns, so unknown-field here
        # could only mean a field newer than the pinned lists: not the pod's problem.
        # A pod whose runtime is not known is linted as check lints it (on containerd).
        judged = verdict if runtime else None
        raw = [f for f in check_pod(pod, Target.WINDOWS, reach, NodeKnowledge(
            runtime="containerd", runtime_classes=self.runtime_classes), judged)
               if f.rule.id != "unknown-field"]
        note = ""
        raw += _dropped_ports(pod, verdict)
        other = runtime_name(runtime)
        host_network = pod.spec.get("hostNetwork") is True
        if other and other != "containerd" and host_network and (
                verdict is None or verdict.starts is not False):
            # What becomes of hostNetwork here is unknown: no finding says "ignored".
            raw = [f for f in raw if f.rule.id != "host-network-ignored"]
            note = _not_modelled_runtime(other)
        if not raw:
            return (), note
        ignored = ignored_rules(pod)
        return tuple(_record(f, ignored.get(f.rule.id)) for f in raw), note

    def _reach_for(self, kubelet: str) -> HostNetworkReach | Exception:
        reach = self._reach.get(kubelet)
        if reach is None:
            try:
                reach = host_network_reach(kubelet, self.feature_gates)
            except (UnsupportedVersionError, FeatureGateError) as exc:
                reach = exc
            if len(self._reach) < 4096:
                self._reach[kubelet] = reach
        return reach


def _dropped_ports(pod: PodObject, verdict: Verdict | None) -> list[Finding]:
    """A hostPort the verdict drops on the pod's node (``audit --node-config``), as a
    finding of the node rule that says why: it counts toward ``--fail-on``."""
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

    if verdict is None or verdict.starts is False:
        return []  # a sandbox that never starts: the refusal is the finding
    rule = NODE_RULES_BY_ID["node-host-port-dropped"]
    found = []
    for port in verdict.ports:
        if port.outcome == "dropped" and port.host_port > 0:
            found.append(Finding(
                rule, rule.severity,
                f"hostPort {port.host_port} is dropped on this pod's node: {port.reason}.",
                _host_port_path(pod, port.container_port, port.host_port)))
    return found


def _host_port_path(pod: PodObject, container_port: int, host_port: int,
                    ) -> tuple[str | int, ...]:
    """Where the pod declares the mapping (the first container port that matches)."""
    containers = pod.spec.get("containers")
    for index, container in enumerate(containers if isinstance(containers, list) else ()):
        ports = container.get("ports") if isinstance(container, dict) else None
        for number, port in enumerate(ports if isinstance(ports, list) else ()):
            if isinstance(port, dict) and port.get("containerPort") == container_port and (
                    port.get("hostPort") in (host_port, None)):
                return (*pod.spec_path, "containers", index, "ports", number, "hostPort")
    return (*pod.spec_path, "containers")


def _not_modelled_runtime(name: str) -> str:
    """Why hostNetwork's effect is unknown on a node whose runtime is not containerd."""
    if name == "docker":  # dockershim was removed in 1.24 (KEP-2221)
        return ("docker: the kubelet has had no dockershim since 1.24, so it reaches Docker "
                "through cri-dockerd, whose handling of a Windows pod's hostNetwork is not "
                "modelled; ")
    return (f"{_cell(name, 40)}: only containerd's handling of a Windows pod's hostNetwork "
            "is modelled; ")


def _text(node: object, key: str) -> str:
    value = node.get(key) if isinstance(node, Mapping) else None
    return value if isinstance(value, str) else ""


def _record(finding: Finding, ignored: str | None) -> FindingRecord:
    return FindingRecord(
        finding.rule.id, finding.severity.label, finding.message,
        describe_path(finding.field), ignored,
    )


# --- output --------------------------------------------------------------------------------

_COLUMNS = ("POD", "NODE", "KUBELET", "RUNTIME", "SENT", "HOSTNETWORK", "FINDINGS")
_EFFECT_TEXT = {
    "not-requested": "-", "applied": "applied", "ignored": "IGNORED", "unknown": "unknown",
    "refused": "refused", "not-modelled": "?", "no-network": "NO-NETWORK",
}


def _cell(text: str, size: int = 80) -> str:
    """One table cell: one line (the shared escaping rule), bounded."""
    return clip(text, size)


def _row(record: PodAudit) -> tuple[str, ...]:
    kubelet = record.kubelet_version + ("*" if record.kubelet_source != "node" else "")
    findings = ",".join(
        f.rule + ("(ignored)" if f.ignored is not None else "") for f in record.findings
    )
    return (
        _cell(record.name), _cell(record.node) or "(unscheduled)", _cell(kubelet),
        _cell(record.runtime) or "-", record.sent, _EFFECT_TEXT[record.effect],
        findings or "-",
    )


class _Writer(Protocol):
    def add(self, record: PodAudit) -> None: ...

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None: ...


_GROUP = 500  # rows of a table held before they are written (kubectl's chunk size)
_SEEN = 65_536  # namespaces remembered to mark a table "(continued)"
_NOTES = 20  # notes shown under a namespace's table


class _TextWriter:
    """One table per namespace, its totals under it, then the totals of the run. Rows
    are written in groups of 500, each group's columns as wide as its widest cell and
    never narrower than the group before, so memory does not grow with a namespace."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._namespace: str | None = None
        self._rows: list[tuple[str, ...]] = []
        self._widths = [len(column) for column in _COLUMNS]
        self._headed = False  # the namespace's title and column names are written
        self._totals = Totals()
        self._notes: list[str] = []
        self._more_notes = 0
        self._starred = False
        self._seen: set[str] = set()
        self._again = False

    def add(self, record: PodAudit) -> None:
        self._starred = self._starred or record.kubelet_source != "node"
        if record.namespace != self._namespace:
            self._flush()
            self._namespace = record.namespace
            # Input not grouped by namespace: a namespace seen before gets another table.
            self._again = record.namespace in self._seen
            if len(self._seen) < _SEEN:
                self._seen.add(record.namespace)
        self._rows.append(_row(record))
        if len(self._rows) == _GROUP:
            self._write_rows()
        self._totals.add(record)
        if record.note:
            if len(self._notes) < _NOTES:
                self._notes.append(_cell(f"{record.name}: {record.note}", 300))
            else:
                self._more_notes += 1

    def _write_rows(self) -> None:
        rows = self._rows if self._headed else [_COLUMNS, *self._rows]
        if not self._headed:
            again = " (continued)" if self._again else ""
            self._out.write(f"NAMESPACE {_cell(self._namespace or '')}{again}\n")
            self._headed = True
        self._widths = [max(self._widths[i], *(len(row[i]) for row in rows))
                        for i in range(len(_COLUMNS))]
        for row in rows:
            cells = (c.ljust(w) for c, w in zip(row, self._widths, strict=True))
            self._out.write("  ".join(cells).rstrip() + "\n")
        self._rows = []

    def _flush(self) -> None:
        if self._namespace is None:
            return
        if self._rows or not self._headed:
            self._write_rows()
        self._out.write(f"  total: {self._totals.text()}\n")
        for note in self._notes:
            self._out.write(f"  note: {note}\n")
        if self._more_notes:
            self._out.write(f"  note: ... and {self._more_notes} more\n")
        self._out.write("\n")
        self._widths = [len(column) for column in _COLUMNS]
        self._headed = False
        self._totals = Totals()
        self._notes = []
        self._more_notes = 0

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None:
        self._flush()
        if "error" in summary:
            self._out.write(printable(
                f"INCOMPLETE: the cluster could not be read: {summary['error']}") + "\n")
        self._out.write(f"TOTAL: {totals.text()}\n")
        linux = summary["skipped"]["linux-node"]
        other = summary["skipped"]["not-windows-targeted"]
        self._out.write(
            f"  {summary['nodes']} nodes ({summary['windowsNodes']} Windows); skipped "
            f"{linux} pod{'s' * (linux != 1)} on Linux nodes and {other} "
            f"pod{'s' * (other != 1)} without a Windows node or target"
            + (f"; {summary['skipped']['finished']} finished (Succeeded or Failed) "
               f"pod{'s' * (summary['skipped']['finished'] != 1)}"
               if summary["skipped"].get("finished") else "")
            + "\n"
        )
        if self._starred:
            self._out.write(
                "  KUBELET with *: no node (yet) that reports one; judged as --kubelet-version\n"
            )
        if totals.effects["no-network"]:
            self._out.write(
                "  HOSTNETWORK NO-NETWORK: a HostProcess pod under a Hyper-V isolated handler: "
                "hcsshim v0.15 runs it in a utility VM with no network "
                "(host-process-hyperv-no-network)\n"
            )
        if totals.effects["not-modelled"]:
            self._out.write(
                "  HOSTNETWORK ?: the node's kubelet is a release the library does not model, "
                "so what it sends is not known\n"
            )
        if totals.ignored_by_annotation:
            self._out.write(
                "  FINDINGS (ignored): turned off for the object by an "
                "ignore-check.kubelet-winnet.io annotation\n"
            )
        if totals.effects["unknown"]:
            self._out.write(
                "  HOSTNETWORK unknown: the pod's runtime is not known (no node yet, or not "
                "containerd), or its RuntimeClass may be Hyper-V isolated (see the note), so "
                "whether it applies what the kubelet sends is not known\n"
            )
        for rule in RULES:
            if rule.id in rules:
                self._out.write(f"  {rule.id}: {rule.summary} ({rule.help_uri})\n")
        if "node-host-port-dropped" in rules:
            rule = _rule("node-host-port-dropped")
            self._out.write(f"  {rule.id}: {rule.summary} ({rule.help_uri})\n")
        for name, found in summary.get("nodeFindings", {}).items():
            for f in found:
                where = f"{f['file']}:{f['line']}" if f["line"] else f["file"] or name
                self._out.write(printable(
                    f"NODE {name}: {where}: {f['severity']} {f['rule']}: {f['message']}") + "\n")


class _JsonWriter:
    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._first = True
        out.write('{\n"pods": [')

    def add(self, record: PodAudit) -> None:
        self._out.write("\n" if self._first else ",\n")
        self._first = False
        self._out.write(json.dumps(record.to_dict()))

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None:
        self._out.write(("" if self._first else "\n") + "],\n")
        body = json.dumps({**summary, "totals": totals.to_dict()}, indent=2)
        self._out.write(f'"summary": {body}\n}}\n')


_CSV_HEADER = (
    "namespace", "pod", "node", "kubeletVersion", "kubeletVersionFrom", "runtime",
    "hostNetwork", "network", "hostProcess", "refused", "hostNetworkEffect", "findings",
    "ignoredFindings", "note",
    # audit --node-config (empty without it, or for a pod whose node has no folder): what
    # the pod gets there, as the JSON's onNode says it.
    "onNodeIsolation", "onNodeNetwork", "onNodeHostPorts",
)


# A spreadsheet reads a cell that starts with one of these as a formula (OWASP, "CSV
# Injection": = + - @, tab and carriage return); a node's kubeletVersion and every name of
# a dump are free text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(text: str) -> str:
    """One CSV cell, safe to open in a spreadsheet: the shared escaping rule, then a single
    quote before a cell that would start a formula, as OWASP recommends. The writer quotes
    every cell (OWASP's other half), so a separator inside a value never starts a new cell
    that could begin with a formula character."""
    text = printable(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _on_node_cells(on_node: dict[str, Any] | None) -> tuple[str, str, str]:
    """The onNode columns: isolation, network (or why the node refuses the pod), and each
    hostPort as PORT/PROTOCOL:OUTCOME (the protocol as CNI gets it, lowercase)."""
    if on_node is None:
        return "", "", ""
    network = on_node["refused"] or on_node["network"] or ""
    ports = " ".join(f"{p['hostPort']}/{p['protocol']}:{p['outcome']}"
                     for p in on_node["hostPorts"])
    return on_node["isolation"] or "", network, ports


class _CsvWriter:
    def __init__(self, out: TextIO) -> None:
        self._csv = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
        self._csv.writerow(_CSV_HEADER)

    def add(self, r: PodAudit) -> None:
        self._csv.writerow(_csv_cell(cell) for cell in (  # one record a line, as the rest
            r.namespace, r.name, r.node, r.kubelet_version, r.kubelet_source, r.runtime,
            str(r.host_network).lower(), r.network or "", str(r.host_process).lower(),
            r.refused or "", r.effect,
            " ".join(f"{f.severity}:{f.rule}" for f in r.findings if f.ignored is None),
            " ".join(f.rule for f in r.findings if f.ignored is not None), r.note,
            *_on_node_cells(r.on_node),
        ))

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None:
        pass


# --- command line --------------------------------------------------------------------------


def configure_audit(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet.cli.session import add_limit_arguments, exit_text, positive_int

    parser.epilog = exit_text(
        (0, "the cluster (or every dump) read; no finding at or above --fail-on that no "
         "ignore annotation silences (always with --fail-on never)"),
        (1, "a finding at or above --fail-on that no ignore annotation silences"),
        (2, "a cluster or dump that cannot be read, wholly or in part (what was read is "
         "still reported), bad flags or usage, or output that cannot be written"),
    )

    source = parser.add_argument_group("source (live by default; a dump with -f)")
    source.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                        help="read a dump (kubectl get nodes,pods -A -o json) instead of the "
                        "API server; repeatable, - for stdin, directories searched")
    source.add_argument("--kubeconfig", default=None,
                        help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
    source.add_argument("--context", default=None, help="kubeconfig context to use")
    source.add_argument("-n", "--namespace", default=None,
                        help="namespace of the pods (default: the context's, else default)")
    source.add_argument("-A", "--all-namespaces", action="store_true",
                        help="pods of every namespace")
    source.add_argument("--page-size", type=positive_int, default=DEFAULT_PAGE_SIZE,
                        metavar="N", help="objects per list request (default %(default)s)")
    source.add_argument("--request-timeout", type=_timeout, default=DEFAULT_REQUEST_TIMEOUT,
                        metavar="DURATION",
                        help="the longest one list request may take, body included, "
                        "spelled as kubectl spells it: whole seconds, or 1s, 2m, 3h; 0 for "
                        f"no limit (default {DEFAULT_REQUEST_TIMEOUT:g}s; kubectl's is 0)")
    parser.add_argument(
        "--kubelet-version", default=DEFAULT_KUBELET_VERSION,
        help="kubelet release for pods without a node that reports one (default "
        f"{DEFAULT_KUBELET_VERSION}: the newest kubelet that sends hostNetwork to the "
        "runtime); a pod on a node is judged by that node's kubelet",
    )
    parser.add_argument(
        "--feature-gates", default=None,
        help="--feature-gates of every kubelet, e.g. WindowsHostNetwork=false (nodes do "
        "not publish theirs)",
    )
    parser.add_argument(
        "--node-config", metavar="DIR",
        help="a directory per node, named by node name, of the files kubelet-winnet node "
        "reads: each pod's row then says what its network and hostPorts get on that node",
    )
    parser.add_argument("-o", "--output", choices=("text", "json", "csv", "html"),
                        default="text",
                        help="text: a table per namespace with totals; json: every pod and "
                        "the totals; csv: one row per pod; html: one self-contained page "
                        "(a summary, a card per node, the pods with something to say)")
    parser.add_argument("--output-file", metavar="FILE",
                        help="write the output to FILE instead of stdout")
    parser.add_argument(
        "--docs-url", metavar="URL",
        help="where the rule pages are published: -o html links each rule to URL/<rule-id>.md "
        "({rule} in URL is replaced by the id instead); default: the rule pages embedded",
    )
    parser.add_argument(
        "--fail-on", choices=("error", "warning", "info", "never"), default="warning",
        help="exit 1 when a finding has this severity or higher; never: report only, as "
        "check takes it (default %(default)s)",
    )
    add_limit_arguments(
        parser, _DUMP_MAX_BYTES,
        f"bytes read per dump file (default {_DUMP_MAX_BYTES}: a dump of a large cluster "
        "is big; memory does not grow with it), or per page of a live list (default "
        f"{DEFAULT_PAGE_BYTES})",
    )
    parser.set_defaults(max_bytes=None)  # each source has its own default


def _timeout(text: str) -> float:
    try:
        return parse_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_DUMP_MAX_BYTES = 4 * 1024**3
_LARGE_DUMP = 8 * 1024 * 1024  # bytes of dump, or ...
_LARGE_LIST = 2000  # ... pods announced by the API server, before a progress bar shows


class _Progress:
    """A tqdm bar on stderr, only when stderr is a terminal and the work is large; tqdm
    is optional (the ``audit`` extra)."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._bar: Any = None
        self._enabled = _isatty(err)

    def start(self, total: int | None, large: bool) -> None:
        if not self._enabled or not large or self._bar is not None:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._enabled = False
            return
        self._bar = tqdm(total=total, unit="pod", file=self._err, leave=False,
                         dynamic_ncols=True)

    def update(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def run_audit(args: argparse.Namespace, session: Session) -> int:
    try:
        kubelet_profile(args.kubelet_version, args.feature_gates)
    except FeatureGateError as exc:  # the kubelet's text, after where the value is
        session.error(f"--feature-gates {json.dumps(args.feature_gates)}: {exc}")
        return session.status
    except UnsupportedVersionError as exc:
        session.error(str(exc))
        return session.status
    if args.filename and (args.kubeconfig or args.context or args.namespace
                          or args.all_namespaces):
        session.error("-f reads a dump: --kubeconfig, --context, -n and -A are for the "
                      "live API server")
        return session.status
    if args.docs_url is not None:
        from kubelet_winnet.cli.config import docs_url_error

        why = docs_url_error(args.docs_url)
        if why is not None:
            session.error(f"--docs-url {clip(args.docs_url, 80)!r}: {why}")
            return session.status
    if args.output_file is not None:
        try:
            stream = open(args.output_file, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            session.error(f"--output-file {clip(args.output_file, 200)}: cannot write: "
                          f"{exc.strerror or type(exc).__name__}")
            return session.status
        with stream:
            session.out = stream
            return _audit(args, session)
    return _audit(args, session)


def _html_writer(auditor: Auditor, args: argparse.Namespace) -> Callable[[TextIO], _Writer]:
    """``-o html``: the page of :mod:`kubelet_winnet.cli.audit_page`, each node's card from
    its Node object and (``--node-config``) its files, as ``node`` reads them."""
    from kubelet_winnet.cli.audit_page import PageWriter
    from kubelet_winnet.cli.node import node_card

    def card(name: str) -> Any:
        node = auditor.nodes.get(name)
        note = ("not in the input: its pods are judged as --kubelet-version" if node is None
                else "" if node.os else "does not report its OS")
        kubelet = node.kubelet_version if node is not None else ""
        if node is not None and not kubelet:
            note += (f"{'; ' if note else ''}reports no kubelet version: judged as "
                     f"--kubelet-version {args.kubelet_version}")
        return node_card(name, kubelet or args.kubelet_version,
                         node.runtime if node is not None else "",
                         auditor.node_files.get(name), args.feature_gates, note=note)

    def names() -> list[str]:
        return [n.name for n in auditor.nodes.values() if n.os == "windows"]

    return lambda out: PageWriter(out, card, names, _EFFECT_TEXT, args.docs_url)


def _audit(args: argparse.Namespace, session: Session) -> int:
    auditor = Auditor(args.kubelet_version, args.feature_gates)
    if args.node_config is not None:
        from kubelet_winnet.cli.node import node_configs

        auditor.node_files = node_configs(args.node_config, session)
    writers: dict[str, Callable[[TextIO], _Writer]] = {
        "text": _TextWriter, "json": _JsonWriter, "csv": _CsvWriter,
    }
    make_writer = _html_writer(auditor, args) if args.output == "html" else writers[args.output]
    # Made at the first pod (or at the end): when nothing could be read, the error line on
    # stderr is the whole answer, not a table of zeros under it.
    writer: _Writer | None = None
    read = 0  # objects of the input, of any kind
    # never: above every severity, so no finding fails the run.
    threshold = {"error": 3, "warning": 2, "info": 1, "never": 4}[args.fail_on]
    rank = {s.label: s.value for s in Severity}
    totals = Totals()
    rules: set[str] = set()
    progress = _Progress(session.err)
    live = None
    error: str | None = None
    other_kinds = _Kinds()  # objects of a dump that are neither Pods nor Nodes
    try:
        objects, live = _source(args, session, progress, other_kinds)
        def counted(objects: Iterator[ClusterObject]) -> Iterator[ClusterObject]:
            nonlocal read
            for item in objects:
                read += 1
                yield item

        for item in _ordered(counted(objects), auditor):
            if live is not None and live.expected_pods is not None:
                progress.start(live.expected_pods, live.expected_pods >= _LARGE_LIST)
            progress.update()
            try:
                record = auditor.pod(item.value, item.where)
            except InvalidPodError as exc:
                session.error(f"{item.where}: {exc}")
                continue
            if record is None:
                continue
            totals.add(record)
            for finding in record.findings:
                rules.add(finding.rule)
                if finding.ignored is None and rank[finding.severity] >= threshold:
                    session.fail(1)
            if writer is None:
                writer = make_writer(session.out)
            writer.add(record)
    except ClusterAccessError as exc:
        error = str(exc)
        session.error(error)
    progress.close()
    if args.node_config is not None and error is None:
        from kubelet_winnet.cli.node import unmatched_node_configs

        unmatched_node_configs(auditor.node_files, auditor.nodes, args.node_config, session)
    node_findings = _node_findings(auditor, args.kubelet_version)
    for name, found in node_findings.items():
        for finding in found:
            if finding.severity.value >= threshold:
                session.fail(1)
            if args.output == "csv":  # one row per pod: the node's own findings on stderr
                where = f"{finding.source}:{finding.line}" if finding.line else finding.source
                session.note(f"node {name}: {where}: {finding.severity.label} "
                             f"{finding.rule.id}: {finding.message}")
    summary = _summary(args, auditor, rules, node_findings)
    if error is not None:  # what was read is still reported, marked incomplete
        summary["error"] = error
    nothing_read = not read and not other_kinds.count and session.errors > 0
    if writer is None and not (nothing_read and args.output != "json"):
        # JSON stays one document (its summary carries the error); text and CSV say nothing.
        writer = make_writer(session.out)
    if writer is not None:
        writer.close(summary, totals, rules)
    _note_other_kinds(session, other_kinds)
    return session.status


def _source(args: argparse.Namespace, session: Session, progress: _Progress,
            other_kinds: _Kinds) -> tuple[Iterator[ClusterObject], LiveCluster | None]:
    """The objects to audit: a dump's, or the live cluster's (then also the cluster)."""
    if args.filename:
        size = sum(_size(p) for p in args.filename)
        progress.start(None, size >= _LARGE_DUMP)
        return _dump(args, session, other_kinds.add), None
    live = LiveCluster(args.kubeconfig, args.context, args.namespace,
                       args.all_namespaces, args.page_size,
                       request_timeout=args.request_timeout,
                       max_page_bytes=args.max_bytes or DEFAULT_PAGE_BYTES)
    return live.objects(), live


def _summary(args: argparse.Namespace, auditor: Auditor, rules: set[str],
             node_findings: dict[str, list[Any]]) -> dict[str, Any]:
    """The run's summary: the source, the nodes, what was skipped, the rules named."""
    return {
        "source": "dump" if args.filename else "live",
        "nodes": len(auditor.nodes),
        "windowsNodes": auditor.windows_nodes,
        "defaultKubelet": args.kubelet_version,
        "featureGates": args.feature_gates,
        "skipped": dict(auditor.skipped),
        "rules": {rule: _rule(rule).help_uri for rule in sorted(rules)},
        **({"nodeFindings": {
            name: [{"rule": f.rule.id, "severity": f.severity.label, "message": f.message,
                    "file": f.source, "line": f.line} for f in found]
            for name, found in node_findings.items()}} if args.node_config is not None else {}),
    }


def _note_other_kinds(session: Session, other_kinds: _Kinds) -> None:
    """A note for the objects of a dump that are neither Pods nor Nodes."""
    if not other_kinds.count:
        return
    count = other_kinds.count
    kinds = sorted(other_kinds.kinds)
    shown = ", ".join(kinds[:5]) + (", ..." if len(kinds) > 5 or other_kinds.more else "")
    session.note(
        f"not audited: {count} object{'s' * (count != 1)} that {'is' if count == 1 else 'are'} "
        f"neither a Pod nor a Node{f' ({shown})' if shown else ''}; audit judges pods "
        f"where they run, {session.prog} check lints manifests and workload templates"
    )


def _node_findings(auditor: Auditor, default_kubelet: str) -> dict[str, list[Any]]:
    """``--node-config``: each node's own findings, once per node."""
    if not auditor.node_files:
        return {}
    from kubelet_winnet.cli.node import audit_node_findings

    return audit_node_findings(auditor.node_files, auditor.nodes, default_kubelet)


def _rule(rule_id: str) -> Any:
    """A check rule, or the node rule a row's finding comes from (a dropped hostPort)."""
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

    return RULES_BY_ID.get(rule_id) or NODE_RULES_BY_ID[rule_id]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if path != "-" else 0
    except OSError:
        return 0


def _dump(
    args: argparse.Namespace, session: Session, others: Callable[[object], None]
) -> Iterator[ClusterObject]:
    from kubelet_winnet.cli.session import limits_of

    limits = replace(limits_of(args), max_bytes=args.max_bytes or _DUMP_MAX_BYTES)
    return dump_objects(args.filename, session.error, limits, others, session.note)


@dataclass
class _Kinds:
    """How many objects of other kinds, and the first of their kinds in sorted order:
    a count, not a list, so a dump of a million ConfigMaps costs nothing."""

    count: int = 0
    kinds: set[str] = field(default_factory=set)  # at most 6, each clipped
    more: bool = False  # kinds were dropped

    def add(self, kind: object) -> None:
        self.count += 1
        if isinstance(kind, str):
            kind = kind[:60]
            if kind not in self.kinds:
                self.kinds.add(kind)
                if len(self.kinds) > 6:
                    self.kinds.remove(max(self.kinds))
                    self.more = True


def _ordered(objects: Iterator[ClusterObject], auditor: Auditor) -> Iterator[ClusterObject]:
    """Pods, each after its node wherever the node comes in the input. Nodes normally
    come first (the live source, ``kubectl get nodes,pods``); a scheduled pod whose node
    has not been seen yet (``[Node n1, Pod on n2, Node n2]``, or nodes in a later ``-f``
    file) waits in a temporary file (one JSON line each) until the input ends, so memory
    does not grow with the pods that wait; disk holds them meanwhile. A pod whose node
    never comes is then judged as one whose node is not in the input."""
    nodes = auditor.nodes
    with tempfile.TemporaryFile("w+", encoding="utf-8") as pending:
        waiting = 0
        for item in objects:
            if item.kind == "Node":
                auditor.node(item.value)
                continue
            if item.kind == "RuntimeClass":  # before the pods: kubectl get runtimeclasses,...
                auditor.runtime_class(item.value)
                continue
            spec = item.value.get("spec")
            node = spec.get("nodeName") if isinstance(spec, Mapping) else None
            if isinstance(node, str) and node and node not in nodes:
                pending.write(json.dumps([item.where, item.value]) + "\n")
                waiting += 1
                continue
            yield item
        if not waiting:
            return
        pending.seek(0)
        for line in pending:
            where, value = json.loads(line)
            yield ClusterObject("Pod", value, where)


COMMAND = Command("audit", configure_audit, run_audit)
