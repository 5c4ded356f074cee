"""What ``kubelet-winnet node`` has to say about one node (:class:`NodeReport`) and its
writers: text, JSON, SARIF, JUnit and HTML (:data:`WRITERS`); :func:`node_card`, the
node's card on the audit page, for ``node -o html`` and ``audit -o html`` alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelet_winnet._lint.node_checks import NodeFinding, PodClass, ignored_node_rules, judge_node

if TYPE_CHECKING:
    from kubelet_winnet._lint.rules import Severity
    from kubelet_winnet.cli.output.audit_page import NodeCard
    from kubelet_winnet.cli.session import Session
    from kubelet_winnet.sources.node import NodeFiles

__all__ = ["WRITERS", "NodeReport", "node_card"]


@dataclass
class NodeReport:
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


def _text(session: Session, report: NodeReport) -> None:
    from kubelet_winnet._printable import printable

    if report.stopped is not None:  # stderr said why; stdout stays empty for scripts
        return
    out = session.out
    classes, ignored = report.classes, report.ignored
    out.write(printable(f"node {report.name}: kubelet {report.kubelet}, runtime "
                        f"{report.runtime or 'unknown'}") + "\n\n")
    width = max(len(c.name) for c in classes)
    out.write(f"{'POD CLASS'.ljust(width)}  ISOLATION  NETWORK  HOSTPORT         DNS      "
              "WHY\n")
    for item in classes:
        out.write(printable(
            f"{item.name.ljust(width)}  {(item.verdict.isolation or '?').ljust(9)}  "
            f"{item.network.ljust(7)}  {item.host_port.ljust(15)}  {item.dns.ljust(7)}  "
            f"{item.why}") + "\n")
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


def _json(session: Session, report: NodeReport) -> None:
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
             **({"dns": {"outcome": c.verdict.dns.outcome, "reason": c.verdict.dns.reason,
                         "reaches": list(c.verdict.dns.reaches)}}
                if c.verdict.dns is not None else {}),
             "notes": list(c.verdict.notes)}
            for c in report.classes],
        "findings": [_finding_json(f, report.ignored) for f in report.findings],
        "errors": list(session.diagnostics),
    }
    session.out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _results(report: NodeReport) -> list[Any]:
    return [(f.rule, f.severity, f.message, f.source, f.line, report.ignored.get(f.rule.id))
            for f in report.findings]


def _sarif(session: Session, report: NodeReport) -> None:
    from kubelet_winnet._lint.report import node_sarif

    session.out.write(node_sarif(_results(report), session.diagnostics, session.status,
                                 report.stopped) + "\n")


def _junit(session: Session, report: NodeReport) -> None:
    from kubelet_winnet._lint.report import node_junit

    session.out.write(node_junit(report.name, _results(report), report.threshold,
                                 session.diagnostics, report.stopped))


def _html(session: Session, report: NodeReport) -> None:
    from kubelet_winnet.cli.output.audit_page import write_node_page

    if report.stopped is not None or report.node_files is None:  # as text: stderr said why
        return
    rows = tuple((c.name, c.verdict.isolation or "?", c.network, c.host_port, c.dns, c.why)
                 for c in report.classes)
    card = node_card(report.name, report.kubelet, report.runtime, report.node_files, None,
                     report.findings, report.ignored, rows)
    write_node_page(session.out, card, None)


def node_card(
    name: str, kubelet: str, runtime: str, files: NodeFiles | None, feature_gates: str | None,
    findings: list[NodeFinding] | None = None, ignored: dict[str, str] | None = None,
    classes: tuple[tuple[str, str, str, str, str, str], ...] = (), note: str = "",
) -> NodeCard:
    """One node's card on the audit page: what its Node object and its files say, and its
    findings (``judge_node``'s, run here when not given)."""
    from kubelet_winnet.cli.output.audit_page import CardFinding, NodeCard
    from kubelet_winnet.errors import WinnetError
    from kubelet_winnet.runtime import NodeFacts
    from kubelet_winnet.runtime._releases import runtime_name

    unset = "not known (no --node-config)"
    gates = feature_gates or "the release's defaults (a node does not publish its gates)"
    handlers_from = "containerd's defaults (no --node-config)"
    try:
        facts = files.node_facts(runtime) if files is not None else NodeFacts(runtime=runtime)
        if files is not None and findings is None:
            findings = judge_node(files, kubelet, runtime)
            ignored = ignored_node_rules(files, [])
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
            from kubelet_winnet.runtime._cni import port_outcome

            port = port_outcome(files.network)
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


# -o text, json, sarif, junit, html; a writer of a stopped run says what it can (see each).
WRITERS: Mapping[str, Callable[[Session, NodeReport], None]] = {
    "text": _text, "json": _json, "sarif": _sarif, "junit": _junit, "html": _html,
}
