"""``kubelet_winnet.explain`` takes whether hostNetwork takes effect from the judgement:
the kubelet model words the warning, it does not decide it."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from kubelet_winnet._kubelet.explain import explanation
from kubelet_winnet._kubelet.profile import kubelet_profile

HOST_NETWORK_CODES = {"host-network-gate-off", "host-network-withdrawn",
                      "containerd-ignores-namespace-options"}


def pod(host_network: bool, host_process: bool) -> dict[str, Any]:
    options = {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "hostNetwork": host_network,
        "securityContext": {"windowsOptions": options} if host_process else {},
        "containers": [{"name": "c", "image": "i"}]}}


@pytest.mark.parametrize("version", ["1.26", "1.32", "1.33", "1.38"])
@pytest.mark.parametrize(("host_network", "host_process"),
                         [(True, False), (True, True), (False, False)])
def test_the_host_network_warning_is_where_containerd_ignores_host_network(
    version: str, host_network: bool, host_process: bool,
) -> None:
    """containerd's sandbox_run.go takes the host network from host_process alone: a
    hostNetwork pod that is not HostProcess gets its own namespace, and is warned about;
    a HostProcess one gets the node's network (KEP-3503), and is not."""
    codes = {w.code.value for w in kw.explain(pod(host_network, host_process),
                                              kubelet_version=version).warnings}
    assert bool(codes & HOST_NETWORK_CODES) == (host_network and not host_process)


def test_the_kubelet_model_words_the_warning_but_does_not_decide_it() -> None:
    profile = kubelet_profile("1.32", None)
    asked = pod(True, False)
    assert not {w.code.value for w in explanation(
        asked, profile, host_network_ignored=False).warnings} & HOST_NETWORK_CODES
    assert {w.code.value for w in explanation(
        asked, profile, host_network_ignored=True).warnings} & HOST_NETWORK_CODES
