"""The runtime half: plan a sandbox's network from what the kubelet sent, then apply the
plan through the Host Compute Network (:mod:`kubelet_winnet.runtime.hcn`).

:func:`plan_sandbox_network` (for a ``RunPodSandboxRequest``) and
:func:`plan_sandbox_config_network` (for a ``PodSandboxConfig``) are pure;
:mod:`~kubelet_winnet.runtime.hcn` does the I/O and is imported only when used.
"""

from __future__ import annotations

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
    "POLICIES",
    "SETUP_CALLS",
    "TEARDOWN_CALLS",
    "HcnCall",
    "NetworkPlan",
    "Policy",
    "plan_sandbox_config_network",
    "plan_sandbox_network",
]
