"""The judgement: one verdict for one pod on one node, which every command renders.

Pure (no I/O, no protobuf): the kubelet's half comes from :mod:`kubelet_winnet._kubelet`
(the profile, ``decide_sandbox`` and its refusal texts), the runtime's half from
:func:`kubelet_winnet.runtime._network.plan_runtime`. Every fact of the node is known or
not; an unknown fact gives an answer with the condition that decides it.
"""

from __future__ import annotations

from kubelet_winnet._judgement.verdict import (
    Network,
    NodeKnowledge,
    Verdict,
    host_network_effect,
    judge,
)

__all__ = ["Network", "NodeKnowledge", "Verdict", "host_network_effect", "judge"]
