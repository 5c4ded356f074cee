"""The runtime half: plan a sandbox's network from what the kubelet sent, then apply the
plan through the Host Compute Network (:mod:`kubelet_winnet.runtime.hcn`).

:func:`plan_sandbox_network` (for a ``RunPodSandboxRequest``) and
:func:`plan_sandbox_config_network` (for a ``PodSandboxConfig``) are pure;
:mod:`~kubelet_winnet.runtime.hcn` does the I/O and is imported only when used.

The planner's names are loaded on first use (PEP 562), so that the release tables of
``runtime._releases``, which the linter reads, do not bring protobuf with them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_HOMES = dict.fromkeys(__all__, "kubelet_winnet.runtime._plan")


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
