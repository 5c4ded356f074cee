"""What a pod gets on one Windows node from a ``RunPodSandboxRequest``: the request
decoded (:mod:`._plan`) and handed to :func:`._network.plan_runtime`, the one home of the
runtime's half (the node's facts, the handler's isolation, the CNI configuration, the port
ranges Windows keeps; its docstring cites the upstream sources)."""

from __future__ import annotations

from dataclasses import dataclass

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import type_name
from kubelet_winnet.errors import InvalidArgumentError
from kubelet_winnet.runtime._cni import (
    CNI_DNS,
    CNI_PLUGINS,
    CniDns,
    CniNetwork,
    CniPlugin,
    DnsPlan,
    PluginBehaviour,
)
from kubelet_winnet.runtime._network import (
    Isolation,
    NetworkNamespace,
    NodeFacts,
    PortPlan,
    PortRange,
    _not_host,
    plan_runtime,
)
from kubelet_winnet.runtime._plan import (
    NetworkPlan,
    Policy,
    _check_policy,
    _plan_config,
    _request_of,
)
from kubelet_winnet.runtime._releases import runtime_name

__all__ = [
    "CNI_DNS",
    "CNI_PLUGINS",
    "CniDns",
    "CniNetwork",
    "CniPlugin",
    "DnsPlan",
    "Isolation",
    "NetworkNamespace",
    "NodeFacts",
    "PluginBehaviour",
    "PodNetworkPlan",
    "PortPlan",
    "PortRange",
    "plan_pod_network",
]


@dataclass(frozen=True)
class PodNetworkPlan:
    """What one sandbox gets on a node: ``namespace`` (``node``: the host's network,
    ``pod``: its own, ``none``: no network at all, ``unknown``: ``condition`` says what
    decides it), its isolation, each port mapping, what becomes of its ``DNSConfig``
    (``dns``), and ``refused``, the runtime's error when it does not start the sandbox."""

    sandbox: NetworkPlan
    namespace: NetworkNamespace
    handler: str
    isolation: Isolation | None
    ports: tuple[PortPlan, ...]
    refused: str | None = None
    notes: tuple[str, ...] = ()
    condition: str = ""
    dns: DnsPlan | None = None


_PROTOCOLS = {api_pb2.TCP: "tcp", api_pb2.UDP: "udp", api_pb2.SCTP: "sctp"}


def plan_pod_network(
    request: api_pb2.RunPodSandboxRequest | bytes | bytearray | memoryview,
    node: NodeFacts | None = None,
    *,
    policy: Policy | None = None,
) -> PodNetworkPlan:
    """Plan what the sandbox a ``RunPodSandboxRequest`` asks for gets on ``node``.

    ``policy`` defaults to ``containerd`` when ``node.runtime`` names containerd and to
    ``kep`` otherwise (the default of
    [`plan_sandbox_network`][kubelet_winnet.runtime.plan_sandbox_network], whose answer
    ``.sandbox`` is when no node is given). A HostProcess sandbox under a Hyper-V handler
    on a node whose release is not known is ``unknown``, with the condition that decides
    it. Errors as ``plan_sandbox_network``; a ``node`` of another type raises
    [`InvalidArgumentError`][kubelet_winnet.errors.InvalidArgumentError].
    """
    if node is not None and not isinstance(node, NodeFacts):
        raise InvalidArgumentError("node", "a NodeFacts or None", type_name(node))
    if policy is None:
        policy = ("containerd" if node is not None and runtime_name(node.runtime) == "containerd"
                  else "kep")
    checked = _check_policy(policy)
    message = _request_of(request)
    sandbox = _plan_config(message.config, "config.", checked)
    handler = message.runtime_handler
    mappings = [
        (m.container_port, m.host_port, _PROTOCOLS.get(m.protocol, str(m.protocol)), m.host_ip)
        for m in message.config.port_mappings
    ]
    sent = message.config.dns_config  # containerd's toCNIDNS: no DNSConfig sets nothing
    dns = (tuple(sent.servers), tuple(sent.searches), tuple(sent.options))

    if node is None:
        namespace: NetworkNamespace = "node" if sandbox.host_network else "pod"
        ports = tuple(
            PortPlan(c, h, p, ip, "unknown", "no node facts: the CNI configuration decides")
            if h > 0 else _not_host(c, h, p, ip)
            for c, h, p, ip in mappings
        )
        return PodNetworkPlan(sandbox, namespace, handler, None, ports, dns=DnsPlan(
            "unknown", "no node facts: the CNI configuration decides"))
    out = plan_runtime(sandbox.host_process, sandbox.host_network, handler, mappings, node,
                       dns=dns)
    return PodNetworkPlan(sandbox, out.namespace, out.handler or handler, out.isolation,
                          out.ports, out.refused, out.notes, out.condition, out.dns)
