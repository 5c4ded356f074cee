"""``audit``'s output: the writers of its records
(:mod:`kubelet_winnet._lint.audit_records`) as a text table per namespace, JSON or CSV
(the HTML page is :mod:`kubelet_winnet.cli.output.audit_page`); the command is
:mod:`kubelet_winnet.cli.commands.audit`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from kubelet_winnet._lint.audit_records import PodAudit, Totals, record_rule
from kubelet_winnet._lint.node_config import dns_said
from kubelet_winnet._lint.rules import RULES
from kubelet_winnet._printable import clip, printable
from kubelet_winnet.runtime._releases import HOST_PROCESS_IN_UVM

__all__ = ["EFFECT_TEXT", "Writer", "writer_for"]

# --- output --------------------------------------------------------------------------------

_COLUMNS = ("POD", "NODE", "KUBELET", "RUNTIME", "SENT", "HOSTNETWORK", "FINDINGS")
# audit --node-config: what becomes of each pod's own DNS settings on its node, before
# FINDINGS.
_DNS_COLUMNS = (*_COLUMNS[:-1], "DNS", _COLUMNS[-1])
EFFECT_TEXT = {
    "not-requested": "-", "applied": "applied", "ignored": "IGNORED", "unknown": "unknown",
    "refused": "refused", "not-modelled": "?", "no-network": "NO-NETWORK",
}


def _cell(text: str, size: int = 80) -> str:
    """One table cell: one line (the shared escaping rule), bounded."""
    return clip(text, size)


def _row(record: PodAudit, dns: bool) -> tuple[str, ...]:
    kubelet = record.kubelet_version + ("*" if record.kubelet_source != "node" else "")
    findings = ",".join(
        f.rule + ("(ignored)" if f.ignored is not None else "") for f in record.findings
    )
    return (
        _cell(record.name), _cell(record.node) or "(unscheduled)", _cell(kubelet),
        _cell(record.runtime) or "-", record.sent, EFFECT_TEXT[record.effect],
        *((dns_said(record.on_node) or "-",) if dns else ()), findings or "-",
    )


class Writer(Protocol):
    def add(self, record: PodAudit) -> None: ...

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None: ...


_GROUP = 500  # rows of a table held before they are written (kubectl's chunk size)
_SEEN = 65_536  # namespaces remembered to mark a table "(continued)"
_NOTES = 20  # notes shown under a namespace's table


class _TextWriter:
    """One table per namespace, its totals under it, then the totals of the run. Rows
    are written in groups of 500, each group's columns as wide as its widest cell and
    never narrower than the group before, so memory does not grow with a namespace.
    ``dns``: a DNS column (``audit --node-config``)."""

    def __init__(self, out: TextIO, dns: bool = False) -> None:
        self._out = out
        self._dns = dns
        self._columns = _DNS_COLUMNS if dns else _COLUMNS
        self._namespace: str | None = None
        self._rows: list[tuple[str, ...]] = []
        self._widths = [len(column) for column in self._columns]
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
        self._rows.append(_row(record, self._dns))
        if len(self._rows) == _GROUP:
            self._write_rows()
        self._totals.add(record)
        if record.note:
            if len(self._notes) < _NOTES:
                self._notes.append(_cell(f"{record.name}: {record.note}", 300))
            else:
                self._more_notes += 1

    def _write_rows(self) -> None:
        rows = self._rows if self._headed else [self._columns, *self._rows]
        if not self._headed:
            again = " (continued)" if self._again else ""
            self._out.write(f"NAMESPACE {_cell(self._namespace or '')}{again}\n")
            self._headed = True
        self._widths = [max(self._widths[i], *(len(row[i]) for row in rows))
                        for i in range(len(self._columns))]
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
        self._widths = [len(column) for column in self._columns]
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
                f"hcsshim {HOST_PROCESS_IN_UVM.hcsshim_line} runs it in a utility VM with no "
                "network (host-process-hyperv-no-network)\n"
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
        if self._dns:
            self._out.write(
                "  DNS: whether the pod's own DNS settings (dnsPolicy None or Default, "
                "dnsConfig) reach its endpoint on its node (the note says why); - for a pod "
                "with none of its own\n"
            )
        if totals.effects["unknown"]:
            self._out.write(
                "  HOSTNETWORK unknown: the pod's runtime is not known (no node yet, or not "
                "containerd), or its runtime handler (its RuntimeClass's, or the node's "
                "default one without --node-config) may be Hyper-V isolated (see the note), "
                "so whether it applies what the kubelet sends is not known\n"
            )
        for rule in RULES:
            if rule.id in rules:
                self._out.write(f"  {rule.id}: {rule.summary} ({rule.help_uri})\n")
        for node_rule in ("node-host-port-dropped", "node-dns-dropped"):  # a pod's, by its node
            if node_rule in rules:
                rule = record_rule(node_rule)
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
    "onNodeIsolation", "onNodeNetwork", "onNodeHostPorts", "onNodeDns", "onNodeDnsOwnSettings",
    # false: what the pod gets rests on a fact not known (the note says which).
    "outcomeKnown",
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


def _on_node_cells(on_node: dict[str, Any] | None) -> tuple[str, str, str, str, str]:
    """The onNode columns: isolation, network (or why the node refuses the pod), each
    hostPort as PORT/PROTOCOL:OUTCOME (the protocol as CNI gets it, lowercase), what
    becomes of the DNSConfig the kubelet sends (applied, partly, dropped, host, unknown),
    and whether that is the pod's own (true: dnsPolicy None or Default, or dnsConfig;
    false: the cluster DNS every pod gets)."""
    if on_node is None:
        return "", "", "", "", ""
    network = on_node["refused"] or on_node["network"] or ""
    ports = " ".join(f"{p['hostPort']}/{p['protocol']}:{p['outcome']}"
                     for p in on_node["hostPorts"])
    dns = on_node.get("dns")
    return (on_node["isolation"] or "", network, ports, dns["outcome"] if dns else "",
            str(dns["ownSettings"]).lower() if dns else "")


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
            *_on_node_cells(r.on_node), str(r.outcome_known).lower(),
        ))

    def close(self, summary: dict[str, Any], totals: Totals, rules: set[str]) -> None:
        pass


def writer_for(output: str, node_config: bool) -> Callable[[TextIO], Writer]:
    """The writer of ``-o text``, ``json`` or ``csv`` (html: the page writer of
    cli/output/audit_page.py); ``node_config``: the run reads the nodes' files, and the
    text table has a DNS column."""
    if output == "text":
        return lambda out: _TextWriter(out, node_config)
    return _JsonWriter if output == "json" else _CsvWriter
