"""The judgement: one verdict per situation, the expected values from the rules (the
kubelet's texts in kuberuntime_sandbox.go, containerd's sandbox_run.go and
config.go, hcsshim PR #2531 in the shim of containerd 2.3.3 and later)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet_winnet._judgement import NodeKnowledge, judge
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet.runtime import NodeFacts, plan_pod_network

PROFILE = kubelet_profile("1.32")
HYPERV = {"hv": "runhcs-wcow-hypervisor"}


def _pod(host_process: bool = True, host_network: bool = True, runtime_class: str | None = None,
         host_port: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"hostNetwork": host_network,
                            "containers": [{"name": "c", "image": "i"}]}
    if host_process:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    if host_port is not None:
        spec["containers"][0]["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def _node(handlers: dict[str, str], default: str = "runhcs-wcow-process",
          runtime: str = "containerd://2.4.0") -> NodeFacts:
    return NodeFacts(runtime=runtime, handlers=handlers, default_handler=default)  # type: ignore[arg-type]


def test_a_custom_handler_with_hyperv_isolation_gives_a_host_process_pod_no_network() -> None:
    files = _node({"runhcs-wcow-process": "process", "secure": "hyperv"})
    verdict = judge(_pod(runtime_class="vm"), PROFILE,
                    NodeKnowledge(files=files, runtime_classes={"vm": "secure"}))
    assert (verdict.handler, verdict.isolation, verdict.network.value) == (
        "secure", "hyperv", "none")
    assert verdict.host_network_effect == "no-network"


def test_a_pod_without_runtime_class_takes_the_nodes_hyperv_default_handler() -> None:
    files = _node({"runhcs-wcow-process": "process", "vm": "hyperv"}, default="vm")
    verdict = judge(_pod(), PROFILE, NodeKnowledge(files=files))
    assert (verdict.handler, verdict.network.value) == ("vm", "none")


@pytest.mark.parametrize(("runtime", "network"), [
    ("containerd://2.3.2", "node"),  # hcsshim before v0.15.0-rc.2: host network
    ("containerd://2.3.3", "none"),  # PR #2531: the utility VM has no network
    ("containerd://2.4.0", "none"),
])
def test_b_hyperv_host_process_follows_the_containerd_release(runtime: str, network: str) -> None:
    verdict = judge(_pod(runtime_class="hv"), PROFILE,
                    NodeKnowledge(runtime=runtime, runtime_classes=HYPERV))
    assert verdict.network.value == network


def test_b_an_unknown_release_gives_a_conditional_network_naming_the_release() -> None:
    verdict = judge(_pod(runtime_class="hv"), PROFILE,
                    NodeKnowledge(runtime="containerd", runtime_classes=HYPERV))
    assert verdict.network.value == "unknown"
    assert "no network if the node runs containerd 2.3.3 or later" in verdict.network.condition
    assert verdict.host_network_effect == "unknown"


def test_d_a_runtime_class_missing_from_the_input_leaves_the_handler_unknown() -> None:
    files = _node({"runhcs-wcow-process": "process"})
    verdict = judge(_pod(runtime_class="windows-2022"), PROFILE, NodeKnowledge(files=files))
    assert verdict.handler is None
    assert verdict.runtime_refused is None
    assert verdict.starts is None
    assert verdict.network.value == "unknown"
    assert "Hyper-V isolated" in verdict.network.condition


def test_a_handler_missing_from_the_nodes_configuration_refuses_the_sandbox() -> None:
    files = _node({"runhcs-wcow-process": "process"})
    verdict = judge(_pod(host_process=False, runtime_class="gpu", host_port=8080), PROFILE,
                    NodeKnowledge(files=files, runtime_classes={"gpu": "gpu-handler"}),
                    mappings=[(8080, 8080, "tcp", "")])
    assert verdict.runtime_refused == 'no runtime for "gpu-handler" is configured'
    assert verdict.starts is False
    assert verdict.host_network_effect == "refused"  # never "ignored": no sandbox at all
    assert verdict.ports[0].outcome == "dropped"


def test_the_kubelets_refusal_is_its_own_text_and_no_sandbox_starts() -> None:
    pod = _pod(host_network=False)
    verdict = judge(pod, PROFILE, NodeKnowledge(runtime="containerd://2.4.0"))
    # kuberuntime_sandbox.go, step 3b
    assert verdict.refused == "hostNetwork is required if Pod contains HostProcess containers"
    assert (verdict.starts, verdict.network.value, verdict.host_network_effect) == (
        False, "none", "refused")


def test_host_network_without_host_process_is_a_pod_network_on_containerd() -> None:
    verdict = judge(_pod(host_process=False), PROFILE, NodeKnowledge(runtime="containerd://1.7.20"))
    assert (verdict.network.value, verdict.host_network_effect) == ("pod", "ignored")
    assert verdict.decision.network == "NODE"  # 1.32 sends it; containerd reads host_process


def test_an_unknown_runtime_gives_a_conditional_answer_not_a_confident_one() -> None:
    verdict = judge(_pod(host_process=False), PROFILE, NodeKnowledge())
    assert verdict.network.value == "unknown"
    assert "on containerd: network pod" in verdict.network.condition


def test_a_runtime_other_than_containerd_is_not_modelled() -> None:
    verdict = judge(_pod(host_port=80), PROFILE, NodeKnowledge(runtime="docker://20.10.7"),
                    mappings=[(80, 80, "tcp", "")])
    assert verdict.network.value == "unknown"
    assert "docker" in verdict.network.condition
    assert verdict.ports[0].outcome == "unknown"  # not containerd's "host" either


def test_the_planner_is_conditional_when_the_release_is_not_known() -> None:
    from kubelet_winnet import run_pod_sandbox_request
    from kubelet_winnet._kubelet.node import NodeContext

    request = run_pod_sandbox_request(
        _pod(runtime_class="hv"), kubelet_version="1.32",
        node=NodeContext(runtime_handlers=HYPERV))
    plan = plan_pod_network(request, NodeFacts(runtime="containerd"))
    assert plan.namespace == "unknown"
    assert "containerd 2.3.3 or later" in plan.condition
    assert plan_pod_network(request, NodeFacts(runtime="containerd://2.3.3")).namespace == "none"
