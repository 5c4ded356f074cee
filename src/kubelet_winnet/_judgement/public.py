"""``kubelet_winnet.judge``: the one verdict every command renders, for Python callers (a
node agent asking "does this pod get the host network and its hostPorts on this node?")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelet_winnet._judgement.verdict import NodeKnowledge, Verdict
from kubelet_winnet._judgement.verdict import judge as judge_under
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = ["judge"]


def judge(
    pod: PodInput,
    *,
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
    node: NodeKnowledge | None = None,
) -> Verdict:
    """What ``pod`` gets on a node: what the kubelet sends or its refusal, whether the
    sandbox starts, the network with the condition that decides it when a fact is not
    known, each hostPort's outcome, and the facts used. ``node`` says what is known of the
    node (``NodeKnowledge(files=kubelet_winnet.sources.read_node([...]).facts)`` for its
    own files); without it, a containerd node of unknown release with containerd's stock
    configuration, as ``check`` assumes, saying so in ``Verdict.facts``.

    Raises ``InvalidPodError``, ``FeatureGateError`` and ``UnsupportedVersionError`` as
    [`windows_sandbox_config`][kubelet_winnet.windows_sandbox_config] does, and
    ``InvalidArgumentError`` for a ``node`` that is not a ``NodeKnowledge``.
    """
    if node is not None and not isinstance(node, NodeKnowledge):
        from kubelet_winnet._describe import type_name
        from kubelet_winnet.errors import InvalidArgumentError

        raise InvalidArgumentError("node", "a NodeKnowledge or None", type_name(node))
    profile = kubelet_profile(kubelet_version, feature_gates)
    return judge_under(pod, profile, node)
