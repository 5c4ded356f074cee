"""``audit --node-config``: what a pod gets on its node (:func:`on_node_value`, from the
request ``_judgement.public.request_network`` reads); each node's own findings are the
auditor's (``Auditor.node_findings``), judged once with its pods.
The folders are read by :mod:`kubelet_winnet.sources.node.folders`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelet_winnet._judgement import Verdict

__all__ = ["DNS_SAID", "dns_said", "on_node_value", "rests_on_the_unknown"]


def on_node_value(verdict: Verdict, own: bool = False, node_resolver: bool = False,
                  ) -> tuple[dict[str, Any], str]:
    """What one pod of the cluster gets on its node, rendered from its verdict: the JSON
    value of audit's ``onNode`` and one sentence. ``own``: the pod has its own DNS
    settings (``_lint.dns.asks_own_dns``), which the sentence then says the fate of;
    ``node_resolver``: they are ``dnsPolicy: Default`` alone (``asks_node_resolver``)."""
    ports = [p for p in verdict.ports if p.host_port > 0]
    network = verdict.network
    dns = verdict.dns
    value: dict[str, Any] = {
        "handler": verdict.handler, "isolation": verdict.isolation, "network": network.value,
        **({"condition": network.condition} if network.value == "unknown" else {}),
        "refused": verdict.runtime_refused,
        "hostPorts": [{"hostPort": p.host_port, "protocol": p.protocol, "outcome": p.outcome,
                       "reason": p.reason} for p in ports],
        **({"dns": {"outcome": dns.outcome, "reason": dns.reason, "reaches": list(dns.reaches),
                    "ownSettings": own, "asksNodeResolver": own and node_resolver}}
           if dns is not None else {}),
    }
    if verdict.runtime_refused:
        return value, f"on its node: {verdict.runtime_refused}"
    isolation = f"{verdict.isolation} isolation" if verdict.isolation else "isolation not known"
    text = f"on its node: {isolation}, {network.text}"
    for port in ports:
        text += f"; hostPort {port.host_port} {port.outcome}"
        if port.outcome in ("dropped", "unknown"):
            text += f" ({port.reason})"
    if dns is not None and own:  # the pod's own DNS settings: whether they reach it
        said = _said(dns.outcome, node_resolver)
        text += f"; its DNS settings {said}"
        if not said.startswith(DNS_SAID["applied"]):
            text += f" ({dns.reason})"
    return value, text


# What becomes of a pod's own DNS settings, in the words every audit output uses (the
# note's sentence, the text table's DNS column, the page's badge and summary).
# "host, asked": the node's resolver is what a pod whose only setting is dnsPolicy: Default
# asks for, and a HostProcess or host-network pod gets it.
DNS_SAID = {"applied": "applied", "partly": "partly applied", "dropped": "ignored",
            "host": "ignored (the node's resolver)",
            "host, asked": "applied (the node's resolver)", "unknown": "unknown"}


def _said(outcome: str, node_resolver: bool) -> str:
    return DNS_SAID["host, asked" if outcome == "host" and node_resolver else outcome]


def dns_said(on_node: Mapping[str, Any] | None) -> str | None:
    """The words for what becomes of the pod's own DNS settings on its node, from
    audit's ``onNode`` value; None when it has none of its own (the cluster DNS), the node
    refuses the sandbox, or nothing is known of its node (no ``--node-config``)."""
    dns = on_node.get("dns") if on_node is not None else None
    if on_node is None or dns is None or not dns["ownSettings"] or on_node["refused"]:
        return None
    return _said(dns["outcome"], dns.get("asksNodeResolver") is True)


def rests_on_the_unknown(verdict: Verdict, own: bool = False) -> bool:
    """Whether what the pod gets rests on a fact that is not known: its network (for a
    pod that asks for the node's network, or maps a hostPort), a hostPort's outcome, or
    whether its own DNS settings (``own``) reach it."""
    ports = [p for p in verdict.ports if p.host_port > 0]
    dns_unknown = own and verdict.dns is not None and verdict.dns.outcome == "unknown"
    return dns_unknown or any(p.outcome == "unknown" for p in ports) or (
        verdict.network.value == "unknown" and (verdict.host_network or bool(ports)))
