"""What ``audit`` finds for one Windows pod on its node: a :class:`PodAudit` record (what
its node's kubelet sends, what becomes of hostNetwork, its findings, with
``--node-config`` what it gets there) and the run's :class:`Totals`. The records are made
by :class:`kubelet_winnet._lint.auditor.Auditor` and written by
:mod:`kubelet_winnet.cli.output.audit_report` and :mod:`kubelet_winnet.cli.output.audit_page`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubelet_winnet._lint.rules import RULES_BY_ID, Severity

__all__ = ["EFFECTS", "FindingRecord", "PodAudit", "Totals", "record_rule"]

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
    on_node: dict[str, Any] | None = None  # audit --node-config: _lint.node_config.on_node_value

    @property
    def outcome_known(self) -> bool:
        """Whether what the pod gets is known: its hostNetwork's effect, and with
        ``--node-config`` each hostPort's outcome and whether its own DNS settings reach
        it (not known on a node without files)."""
        if self.effect in ("unknown", "not-modelled"):
            return False
        if self.on_node is None:
            return True
        dns = self.on_node.get("dns")
        return all(p["outcome"] != "unknown" for p in self.on_node["hostPorts"]) and not (
            dns is not None and dns["ownSettings"] and dns["outcome"] == "unknown")

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
            "outcomeKnown": self.outcome_known,
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
    not_known: int = 0  # pods whose outcome is not known (PodAudit.outcome_known)

    def add(self, record: PodAudit) -> None:
        self.pods += 1
        self.not_known += not record.outcome_known
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
            "outcomeNotKnown": self.not_known,
        }

    def text(self) -> str:
        e = self.effects
        s = self.severities
        return (
            f"{self.pods} pod{'s' * (self.pods != 1)}, {self.host_network} with hostNetwork "
            f"({e['applied']} applied, {e['ignored']} ignored, {e['unknown']} unknown"
            + (f", {e['no-network']} with no network" if e["no-network"] else "") + "); "
            f"{e['refused']} refused, {e['not-modelled']} not modelled; "
            f"{self.not_known} whose outcome is not known; findings: "
            f"{s['error']} error{'s' * (s['error'] != 1)}, "
            f"{s['warning']} warning{'s' * (s['warning'] != 1)}, {s['info']} info"
            + (f", {self.ignored_by_annotation} ignored by annotation"
               if self.ignored_by_annotation else "")
        )


def record_rule(rule_id: str) -> Any:
    """A check rule, or the node rule a row's finding comes from (a dropped hostPort, DNS
    settings the node's CNI plugin ignores)."""
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

    return RULES_BY_ID.get(rule_id) or NODE_RULES_BY_ID[rule_id]
