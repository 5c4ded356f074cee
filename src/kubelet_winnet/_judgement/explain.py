"""``kubelet_winnet.explain``: the kubelet's decisions for a pod, step by step, with the
judgement's answer to whether ``hostNetwork`` takes effect (on containerd, which every
released Windows node runs: the words are the kubelet model's, the answer is not)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelet_winnet._judgement.verdict import NodeKnowledge, judge
from kubelet_winnet._kubelet.explain import Explanation, explanation
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = ["explain"]

_CONTAINERD = NodeKnowledge(runtime="containerd")


def explain(
    pod: PodInput,
    *,
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> Explanation:
    """Every decision for ``pod`` in order, the result, and what the pod will not get.

    Input errors (``InvalidPodError``, ``FeatureGateError``, ``UnsupportedVersionError``)
    are raised as by [`windows_sandbox_config`][kubelet_winnet.windows_sandbox_config]; a kubelet
    refusal is returned in ``.error`` with ``.config`` None.
    """
    profile = kubelet_profile(kubelet_version, feature_gates)
    ignored = judge(pod, profile, _CONTAINERD).host_network_effect == "ignored"
    return explanation(pod, profile, host_network_ignored=ignored)
