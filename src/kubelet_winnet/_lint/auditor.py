"""``audit``'s judging part, pure: :class:`Auditor` takes a cluster's objects (nodes,
RuntimeClasses, then pods) and makes each Windows pod's :class:`PodAudit` from the
judgement of the pod on its node (:func:`kubelet_winnet._judgement.judge`: what the kubelet
sends, whether the sandbox starts, its network, each hostPort with ``--node-config``) and
the ``check`` findings of that verdict: it decides nothing itself.

Which pods: those on a Windows node (the node's OS decides what the kubelet builds, not
``spec.os``); pods not scheduled yet, or whose node is not in the input, when the pod
targets Windows (``spec.os.name``, node selector or affinity). They are judged against
``--kubelet-version``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubelet_winnet import kubelet_profile
from kubelet_winnet._describe import describe_path
from kubelet_winnet._judgement import NodeKnowledge, Verdict, judge
from kubelet_winnet._kubelet.pod import read_pod
from kubelet_winnet._lint.audit_records import FindingRecord, PodAudit
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.dns import NOT_READ, asks_node_resolver, asks_own_dns, dropped_dns
from kubelet_winnet._lint.ignores import ignored_rules
from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID
from kubelet_winnet._lint.reach import HostNetworkReach, host_network_reach
from kubelet_winnet._lint.rules import Finding
from kubelet_winnet._lint.targeting import PodObject, Target, pod_object, target_of
from kubelet_winnet._printable import clip
from kubelet_winnet.errors import FeatureGateError, UnsupportedVersionError, WinnetError
from kubelet_winnet.runtime._releases import runtime_name
from kubelet_winnet.sources.cluster.source import Node, node_from
from kubelet_winnet.sources.runtime_classes import add_runtime_class

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.rules import PodFacts
    from kubelet_winnet._lint.node_checks import NodeFinding
    from kubelet_winnet.sources.node import NodeFiles

__all__ = ["Auditor"]


class Auditor:
    """Judges pods against the nodes seen so far: a pod's node must be given before the
    pod (``kubectl get nodes,pods`` and the live source do that, and the command's
    ``_ordered`` holds back a pod whose node has not come yet); :meth:`pod` returns
    ``None`` for a pod that is not a Windows pod, counting why."""

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
        self._with_files: dict[tuple[int, str, str], NodeKnowledge] = {}
        self._node_judged: dict[tuple[str, str, str], tuple[NodeFinding, ...] | None] = {}
        # --node-config was given: a pod on a node without files is judged with what is
        # not known there (its hostPorts), and says so.
        self.node_config = False
        # What is known of a node without its files, by its runtime (the classes are
        # this dict, filled as the input goes on): one per runtime, not one per pod.
        self._knowledge: dict[str, NodeKnowledge] = {}
        self._containerd = NodeKnowledge(runtime="containerd",
                                         runtime_classes=self.runtime_classes)

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

        facts = read_pod(obj)  # once, by the kubelet model's reader, for both
        verdict, effect, why = self._verdict(obj, facts, kubelet, runtime, node_name)
        note += why
        findings, why = self._findings(pod, facts, kubelet, runtime, verdict)
        note += why
        on_node = None
        if verdict is not None and node_name and self.node_config:
            from kubelet_winnet._lint.node_config import on_node_value, rests_on_the_unknown

            own = asks_own_dns(spec)
            asked = own and asks_node_resolver(spec)
            if node_name in self.node_files:
                on_node, text = on_node_value(verdict, own, asked)
                note += f"{text}; "
            elif rests_on_the_unknown(verdict, own):  # on a fact only the node's files give
                on_node, text = on_node_value(verdict, own, asked)
                note += f"no node files for {clip(node_name, 80)}: {text}; "
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
        add_runtime_class(self.runtime_classes, obj)

    def _verdict(self, obj: Mapping[str, Any], facts: PodFacts, kubelet: str, runtime: str,
                 node_name: str) -> tuple[Verdict | None, str, str]:
        """The judgement of the pod on its node, its HOSTNETWORK effect and the note."""
        try:
            profile = kubelet_profile(kubelet, self.feature_gates)
        except (UnsupportedVersionError, FeatureGateError) as exc:
            return None, "not-modelled", (
                f"{exc}: not modelled, findings judged as kubelet {self.default_kubelet}; ")
        files = self.node_files.get(node_name)
        mappings: tuple[tuple[int, int, str, str], ...] = ()
        spec = obj.get("spec")
        # check's DNS rule needs the pod's DNS judged; without the node's CNI file the
        # lists the kubelet sends do not change the answer
        dns = NOT_READ if isinstance(spec, dict) and asks_own_dns(spec) else None
        if files is not None or (self.node_config and node_name):
            from kubelet_winnet._judgement.public import request_network

            try:
                mappings, dns = request_network(obj, kubelet, self.feature_gates,
                                                self.runtime_classes)
            except WinnetError:  # a field only the request reads: judged without its ports
                mappings, dns = (), None
        known = self._node_knowledge(runtime, files, kubelet, node_name)
        verdict = judge(obj, profile, known, mappings=mappings, dns=dns, facts=facts)
        network = verdict.network
        why = ""
        if verdict.starts is not False and runtime_name(runtime) == "containerd" and (
                network.value == "unknown" or (network.value == "none" and verdict.host_process)):
            why = (network.condition if network.value == "unknown" else network.reasons[0]) + "; "
        return verdict, verdict.host_network_effect, why

    def _node_knowledge(self, runtime: str, files: NodeFiles | None, kubelet: str,
                        node_name: str) -> NodeKnowledge:
        if files is not None:
            key = (id(files), runtime, kubelet)  # each node's files, judged once
            known = self._with_files.get(key)
            if known is None:
                from kubelet_winnet._lint.node_checks import node_stops

                # What keeps the node from making any sandbox, as its own findings say.
                found = self._judged_node(node_name, files, runtime, kubelet) or ()
                known = self._with_files[key] = NodeKnowledge(
                    runtime=runtime or None,
                    files=node_stops(files.node_facts(runtime), found),  # handlers_read
                    runtime_classes=self.runtime_classes)
            return known
        known = self._knowledge.get(runtime)
        if known is None:  # the node's default handler is not known without its files
            known = NodeKnowledge(runtime=runtime or None, runtime_classes=self.runtime_classes,
                                  handlers_read=False, assume_default_handler=False)
            if len(self._knowledge) < 4096:
                self._knowledge[runtime] = known
        return known

    def node_findings(self) -> dict[str, list[NodeFinding]]:
        """``audit --node-config``: each node's own findings (as ``node`` reports them), once
        per folder whose node is in the input, without those its files ignore; the same
        findings that judged its pods (a node whose files contradict each other has none:
        reading them said so)."""
        from kubelet_winnet._lint.node_checks import ignored_node_rules

        found: dict[str, list[NodeFinding]] = {}
        for name, files in self.node_files.items():
            node = self.nodes.get(name)
            if node is None:
                continue  # the audit command says so: no node of that name
            judged = self._judged_node(name, files, node.runtime,
                                       node.kubelet_version or self.default_kubelet)
            if judged is not None:
                ignored = ignored_node_rules(files, [])
                found[name] = [f for f in judged if f.rule.id not in ignored]
        return found

    def _judged_node(self, name: str, files: NodeFiles, runtime: str, kubelet: str,
                     ) -> tuple[NodeFinding, ...] | None:
        """``judge_node`` of a node's files, once for its pods and its own findings; the
        release is known when its Node object says it."""
        from kubelet_winnet._lint.node_checks import judge_node

        key = (name, runtime, kubelet)
        if key not in self._node_judged:
            node = self.nodes.get(name)
            try:
                self._node_judged[key] = tuple(judge_node(
                    files, kubelet, runtime, bool(node is not None and node.kubelet_version)))
            except WinnetError:  # the files contradict each other: read_node said so
                self._node_judged[key] = None
        return self._node_judged[key]

    def _findings(self, pod: PodObject, facts: PodFacts, kubelet: str, runtime: str,
                  verdict: Verdict | None) -> tuple[tuple[FindingRecord, ...], str]:
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
        raw = [f for f in check_pod(pod, Target.WINDOWS, reach, self._containerd, judged,
                                    facts=facts)
               if f.rule.id != "unknown-field"]
        note = ""
        raw += _dropped_ports(pod, facts, verdict) + dropped_dns(pod, verdict)
        other = runtime_name(runtime)
        host_network = facts.host_network
        if other and other != "containerd" and host_network and (
                verdict is None or verdict.starts is not False):
            # What becomes of hostNetwork here is unknown: no finding says "ignored", nor
            # what containerd's shim does under Hyper-V.
            raw = [f for f in raw if f.rule.id not in (
                "host-network-ignored", "host-process-hyperv-no-network")]
            note = _not_modelled_runtime(other)
        if other and other != "containerd":  # how it hands DNS to CNI is containerd's
            raw = [f for f in raw if f.rule.id != "dns-needs-cni-capability"]
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


def _dropped_ports(pod: PodObject, facts: PodFacts, verdict: Verdict | None,
                   ) -> list[Finding]:
    """A hostPort the verdict drops on the pod's node (``audit --node-config``), as a
    finding of the node rule that says why: it counts toward ``--fail-on``."""
    if verdict is None or verdict.starts is False or not verdict.ports:
        return []  # a sandbox that never starts: the refusal is the finding
    rule = NODE_RULES_BY_ID["node-host-port-dropped"]
    found = []
    for port in verdict.ports:
        if port.outcome == "dropped" and port.host_port > 0:
            found.append(Finding(
                rule, rule.severity,
                f"hostPort {port.host_port} is dropped on this pod's node: {port.reason}.",
                _host_port_path(pod, facts, port.container_port, port.host_port)))
    return found


def _host_port_path(pod: PodObject, facts: PodFacts, container_port: int, host_port: int,
                    ) -> tuple[str | int, ...]:
    """Where the pod declares the mapping (the first container port that matches; the
    kubelet maps the regular containers' ports only)."""
    regular = (c for c in facts.containers if c.kind == "containers")
    for index, container in enumerate(regular):
        for number, port in enumerate(container.ports):
            if port.container_port == container_port and port.host_port in (host_port, 0):
                return (*pod.spec_path, "containers", index, "ports", number, "hostPort")
    return (*pod.spec_path, "containers")


def _not_modelled_runtime(name: str) -> str:
    """Why hostNetwork's effect is unknown on a node whose runtime is not containerd."""
    if name == "docker":  # dockershim was removed in 1.24 (KEP-2221)
        return ("docker: the kubelet has had no dockershim since 1.24, so it reaches Docker "
                "through cri-dockerd, whose handling of a Windows pod's hostNetwork is not "
                "modelled; ")
    return (f"{clip(name, 40)}: only containerd's handling of a Windows pod's hostNetwork "
            "is modelled; ")


def _text(node: object, key: str) -> str:
    value = node.get(key) if isinstance(node, Mapping) else None
    return value if isinstance(value, str) else ""


def _record(finding: Finding, ignored: str | None) -> FindingRecord:
    return FindingRecord(
        finding.rule.id, finding.severity.label, finding.message,
        describe_path(finding.field), ignored,
    )
