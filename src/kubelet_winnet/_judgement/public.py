"""``kubelet_winnet.judge``: the one verdict every command renders, for Python callers (a
node agent asking "does this pod get the host network and its hostPorts on this node?")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubelet_winnet._judgement.verdict import NodeKnowledge, Verdict
from kubelet_winnet._judgement.verdict import judge as judge_under
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput
    from kubelet_winnet.runtime._cni import DnsAsked
    from kubelet_winnet.runtime._network import Mapping4

__all__ = ["judge", "request_network"]


def judge(
    pod: PodInput,
    *,
    kubelet_version: KubeletVersionInput | None = None,
    feature_gates: FeatureGatesInput = None,
    node: NodeKnowledge | None = None,
    dns: tuple[Sequence[str], Sequence[str], Sequence[str]] | None = None,
) -> Verdict:
    """What ``pod`` gets on a node: what the kubelet sends or its refusal, whether the
    sandbox starts, the network with the condition that decides it when a fact is not
    known, each hostPort's outcome, and the facts used. ``node`` says what is known of the
    node ([`node_knowledge`][kubelet_winnet.node_knowledge] of
    ``kubelet_winnet.sources.read_node([...])`` for its own files); without it, a
    containerd node of unknown release with containerd's stock configuration, as
    ``check`` assumes, saying so in ``Verdict.facts``. ``kubelet_version``: the node's
    own (``NodeKnowledge.kubelet_version``) when not given, else 1.32; one of another
    minor than the node's own is ``NodeConfigError``.

    ``Verdict.dns`` says whether the sandbox's DNSConfig reaches the pod's endpoint: the
    one the kubelet's request builder makes for the pod (as ``audit --node-config`` asks),
    or ``dns`` (servers, searches, options) when given, for a node whose cluster DNS or
    resolver differs from the builder's defaults (``pod_sandbox_config(pod,
    node=...).dns_config``'s lists). It is None only when the kubelet refuses the pod.

    Raises ``InvalidPodError``, ``FeatureGateError`` and ``UnsupportedVersionError`` as
    [`windows_sandbox_config`][kubelet_winnet.windows_sandbox_config] does, and
    ``InvalidArgumentError`` for a ``node`` that is not a ``NodeKnowledge`` or a ``dns``
    that is not three lists of strings.
    """
    if node is not None and not isinstance(node, NodeKnowledge):
        from kubelet_winnet._describe import type_name
        from kubelet_winnet.errors import InvalidArgumentError

        raise InvalidArgumentError("node", "a NodeKnowledge or None", type_name(node))
    given = None if dns is None else _dns_lists(dns)
    known = node or NodeKnowledge()
    kubelet_version = _kubelet_of(kubelet_version, known)
    profile = kubelet_profile(kubelet_version, feature_gates)
    mappings, sent = request_network(pod, kubelet_version, feature_gates,
                                     known.runtime_classes)
    return judge_under(pod, profile, known, mappings=mappings,
                       dns=given if given is not None else sent)


def _kubelet_of(given: KubeletVersionInput | None, node: NodeKnowledge,
                ) -> KubeletVersionInput:
    """The kubelet to judge as: ``given``, which must not contradict the node's own."""
    own = node.kubelet_version
    if given is None:
        return own or DEFAULT_KUBELET_VERSION
    if own is not None:
        from kubelet_winnet._kubelet.kubelet_version import parse_kubelet_version
        from kubelet_winnet.errors import NodeConfigError

        if parse_kubelet_version(given).minor != parse_kubelet_version(own).minor:
            raise NodeConfigError("kubelet_version", (
                f"{given!s} is not the node's own kubelet {own} (its Node object): leave "
                "kubelet_version out to judge with the node's, or give its release"))
    return given


def _dns_lists(
    dns: object,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    from kubelet_winnet._describe import type_name
    from kubelet_winnet.errors import InvalidArgumentError

    wanted = "three lists of strings (servers, searches, options)"
    if isinstance(dns, (str, bytes)) or not isinstance(dns, Sequence) or len(dns) != 3:
        raise InvalidArgumentError("dns", wanted, type_name(dns))
    lists = []
    for index, entries in enumerate(dns):
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence) or not all(
                isinstance(entry, str) for entry in entries):
            raise InvalidArgumentError(f"dns[{index}]", "a list of strings", type_name(entries))
        lists.append(tuple(entries))
    return lists[0], lists[1], lists[2]


def request_network(obj: Any, kubelet: KubeletVersionInput, feature_gates: FeatureGatesInput,
                    runtime_classes: Mapping[str, str],
                    ) -> tuple[tuple[Mapping4, ...], DnsAsked | None]:
    """The port mappings and the DNSConfig (servers, searches, options) the kubelet sends
    for the pod (its request builder's), for the judgement's hostPort and DNS outcomes;
    ((), None) when the kubelet refuses the pod (the verdict says why). The handler is
    the judgement's, not this request's: a RuntimeClass the input lacks is looked up as
    "". Raises ``InvalidPodError`` for a field the request builder cannot read (a
    hostPort written as a string)."""
    from kubelet_winnet._kubelet.node import NodeContext
    from kubelet_winnet._kubelet.sandbox_config import run_pod_sandbox_request
    from kubelet_winnet.errors import SandboxConfigError

    handlers = dict(runtime_classes)
    spec = obj.get("spec") if isinstance(obj, dict) else None
    name = spec.get("runtimeClassName") if isinstance(spec, dict) else None
    if isinstance(name, str) and name and name not in handlers:
        handlers[name] = ""
    try:
        request = run_pod_sandbox_request(
            obj, kubelet_version=kubelet, feature_gates=feature_gates,
            node=NodeContext(runtime_handlers=handlers))
    except SandboxConfigError:
        return (), None
    protocols = {0: "tcp", 1: "udp", 2: "sctp"}  # cri-api runtime.v1 Protocol
    sent = request.config.dns_config
    return tuple((m.container_port, m.host_port, protocols.get(m.protocol, str(m.protocol)),
                  m.host_ip) for m in request.config.port_mappings), (
        tuple(sent.servers), tuple(sent.searches), tuple(sent.options))
