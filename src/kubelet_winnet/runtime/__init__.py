"""The runtime half: plan a sandbox's network from what the kubelet sent, then apply the
plan through the Host Compute Network (:mod:`kubelet_winnet.runtime.hcn`).

:func:`plan_sandbox_network` (for a ``RunPodSandboxRequest``) and
:func:`plan_sandbox_config_network` (for a ``PodSandboxConfig``) are pure;
:mod:`~kubelet_winnet.runtime.hcn` does the I/O and is imported only when used.

:func:`plan_pod_network` plans the same request on one node (:class:`NodeFacts`: its
runtime release, handlers, CNI configuration and port ranges): port mappings and isolation.

The planner's names are loaded on first use (PEP 562), so that the release tables of
``runtime._releases``, which the linter reads, do not bring protobuf with them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubelet_winnet.runtime._node import (
        CNI_DNS,
        CNI_PLUGINS,
        CniDns,
        CniNetwork,
        CniPlugin,
        DnsPlan,
        NodeFacts,
        PodNetworkPlan,
        PortPlan,
        PortRange,
        plan_pod_network,
    )
    from kubelet_winnet.runtime._plan import (
        POLICIES,
        SETUP_CALLS,
        TEARDOWN_CALLS,
        HcnCall,
        NetworkPlan,
        Policy,
        plan_sandbox_config_network,
        plan_sandbox_network,
    )

__all__ = [
    "CNI_DNS",
    "CNI_PLUGINS",
    "POLICIES",
    "SETUP_CALLS",
    "TEARDOWN_CALLS",
    "CniDns",
    "CniNetwork",
    "CniPlugin",
    "DnsPlan",
    "HcnCall",
    "NetworkPlan",
    "NodeFacts",
    "PodNetworkPlan",
    "Policy",
    "PortPlan",
    "PortRange",
    "plan_pod_network",
    "plan_sandbox_config_network",
    "plan_sandbox_network",
]

_HOMES = {
    "POLICIES": "kubelet_winnet.runtime._plan",
    "SETUP_CALLS": "kubelet_winnet.runtime._plan",
    "TEARDOWN_CALLS": "kubelet_winnet.runtime._plan",
    "HcnCall": "kubelet_winnet.runtime._plan",
    "NetworkPlan": "kubelet_winnet.runtime._plan",
    "Policy": "kubelet_winnet.runtime._plan",
    "plan_sandbox_config_network": "kubelet_winnet.runtime._plan",
    "plan_sandbox_network": "kubelet_winnet.runtime._plan",
    "CNI_DNS": "kubelet_winnet.runtime._node",
    "CNI_PLUGINS": "kubelet_winnet.runtime._node",
    "CniDns": "kubelet_winnet.runtime._node",
    "CniNetwork": "kubelet_winnet.runtime._node",
    "CniPlugin": "kubelet_winnet.runtime._node",
    "DnsPlan": "kubelet_winnet.runtime._node",
    "NodeFacts": "kubelet_winnet.runtime._node",
    "PodNetworkPlan": "kubelet_winnet.runtime._node",
    "PortPlan": "kubelet_winnet.runtime._node",
    "PortRange": "kubelet_winnet.runtime._node",
    "plan_pod_network": "kubelet_winnet.runtime._node",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
