"""Whether a Windows pod's own DNS settings take effect, as findings: the judgement
(``Verdict.dns``, from ``runtime/_network.py``) decides; this renders it for ``check``
(the ``dns-needs-cni-capability`` rule: conditional, the node's CNI configuration not
known) and for ``audit --node-config`` (the ``node-dns-dropped`` node rule, for a pod
whose node's configuration drops them).

A pod has its own DNS settings when its ``dnsPolicy`` is ``None`` or ``Default`` or it
sets ``dnsConfig`` (kubelet ``pkg/kubelet/network/dns/dns.go`` ``getPodDNSType`` and
``GetPodDNS``: otherwise it gets the cluster DNS every pod of the node gets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubelet_winnet._lint.rules import RULES_BY_ID, Finding, Severity

if TYPE_CHECKING:
    from kubelet_winnet._judgement import Verdict
    from kubelet_winnet._lint.rules import Path
    from kubelet_winnet._lint.targeting import PodObject

__all__ = ["NOT_READ", "asks_node_resolver", "asks_own_dns", "dns_findings", "dropped_dns"]

# What a door that does not read the node's CNI configuration passes as the request's
# DNSConfig: without that configuration the lists never change the answer.
NOT_READ: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())
_OWN_POLICIES = ("None", "Default")


def asks_own_dns(spec: Mapping[str, Any]) -> bool:
    """Whether the pod asks for DNS other than the cluster DNS of every pod."""
    return spec.get("dnsPolicy") in _OWN_POLICIES or isinstance(spec.get("dnsConfig"), dict)


def asks_node_resolver(spec: Mapping[str, Any]) -> bool:
    """Whether the pod's own DNS settings are ``dnsPolicy: Default`` alone: it asks to
    resolve names as its node does, which a HostProcess or host-network pod does whatever
    it asks (the judgement's outcome ``host``), so it gets what it asks for."""
    return spec.get("dnsPolicy") == "Default" and not isinstance(spec.get("dnsConfig"), dict)


def _asked(pod: PodObject) -> tuple[str, Path, str]:
    """How a message names the pod's own settings, the field a finding points at, and
    the pronoun for them."""
    spec = pod.spec
    policy = spec.get("dnsPolicy")
    parts = [f"dnsPolicy: {policy}"] if policy in _OWN_POLICIES else []
    if isinstance(spec.get("dnsConfig"), dict):
        parts.append("dnsConfig")
    field = "dnsConfig" if policy not in _OWN_POLICIES else "dnsPolicy"
    return " with ".join(parts), (*pod.spec_path, field), "them" if len(parts) > 1 else "it"


def dns_findings(pod: PodObject, verdict: Verdict | None, windows: bool) -> list[Finding]:
    """``check``: a pod with its own DNS settings, on a node whose CNI configuration is not
    known (``windows``: the pod is pinned to Windows; else the finding says "if"), or a
    HostProcess pod, which resolves names as the node does whatever it asks."""
    if verdict is None or verdict.starts is False or not asks_own_dns(pod.spec):
        return []
    plan = verdict.dns
    outcome = plan.outcome if plan is not None else "unknown"
    if outcome in ("applied", "dropped", "partly"):
        return []  # the node's configuration is known: audit's node-dns-dropped says it
    rule = RULES_BY_ID["dns-needs-cni-capability"]
    asked, path, them = _asked(pod)
    if outcome == "host":
        if asks_node_resolver(pod.spec):
            return []  # it asks for the node's resolver, and gets it
        return [Finding(
            rule, Severity.WARNING,
            f"{asked}: no effect on a HostProcess pod, which resolves names as the node "
            f"does; drop {them}.",
            path, None, plan.reason if plan is not None else "")]
    where = "on a Windows node" if windows else "if it runs on Windows"
    return [Finding(
        rule, rule.severity,
        f"{asked}: {where}, only a CNI plugin declaring the dns capability applies {them}.",
        path, None, _DETAIL)]


_DETAIL = ("containerd hands the sandbox's DNSConfig to the CNI plugin only as the dns "
           "capability, and libcni passes a capability only to a plugin whose configuration "
           "declares it (\"capabilities\": {\"dns\": true}); without it the endpoint gets "
           "the configuration's own dns block, the same for every pod. win-bridge and "
           "win-overlay take only servers and searches, never options. kubelet-winnet node "
           "and audit --node-config read the node's CNI file.")


def dropped_dns(pod: PodObject, verdict: Verdict | None) -> list[Finding]:
    """``audit --node-config``: a pod with its own DNS settings that its node's CNI
    configuration drops (all or some), as a finding of the node rule that says why."""
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID

    plan = verdict.dns if verdict is not None else None
    if (verdict is None or plan is None or verdict.starts is False
            or plan.outcome not in ("dropped", "partly") or not asks_own_dns(pod.spec)):
        return []
    rule = NODE_RULES_BY_ID["node-dns-dropped"]
    asked, path, them = _asked(pod)
    how = "ignores" if plan.outcome == "dropped" else "ignores part of"
    severity = rule.severity if plan.outcome == "dropped" else Severity.INFO
    return [Finding(rule, severity,
                    f"{asked}: the CNI plugin of this pod's node {how} {them}.",
                    path, None, plan.reason[:1].upper() + plan.reason[1:] + ".")]
