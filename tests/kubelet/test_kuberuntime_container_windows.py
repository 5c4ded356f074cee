"""The Windows part of the container config (_kubelet/kuberuntime_container_windows.py)
against kuberuntime_container_windows.go: generateWindowsContainerConfig,
calculateWindowsResources and calculateCPUMaximum. Expected values come from those rules."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.kuberuntime_container_windows import calculate_cpu_maximum


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1",
                         "labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"containers": containers, **spec}}


# --- TestCalculateCPUMaximum (kuberuntime_container_windows_test.go) -----------------


@given(limit=st.sampled_from(["1", "94", "2", "1m", "500m", "3"]),
       count=st.integers(1, 256))
@example(limit="1", count=1).via("max range when same amount")  # -> 10000
@example(limit="94", count=96).via("percentage calculation is working as intended")  # 9791
@example(limit="1", count=2).via("half range when half amount")  # 5000
@example(limit="2", count=1).via("max range when more requested than available")  # 10000
@example(limit="1m", count=100).via("min range when less than minimum")  # 1
def test_calculate_cpu_maximum(limit: str, count: int) -> None:
    """calculateCPUMaximum: `10 * cpuLimit.MilliValue() / cpuCount`, clamped to
    [1, 10000]."""
    pinned = {("1", 1): 10000, ("94", 96): 9791, ("1", 2): 5000, ("2", 1): 10000,
              ("1m", 100): 1}
    milli = {"1": 1000, "94": 94000, "2": 2000, "1m": 1, "500m": 500, "3": 3000}[limit]
    got = calculate_cpu_maximum(milli, count)
    if (limit, count) in pinned:
        assert got == pinned[limit, count]
    assert got == max(1, min(10000, (10 * milli) // count))


def test_windows_resources_and_security_context() -> None:
    """generateWindowsContainerConfig: resources always present (cpu_maximum from
    limits.cpu, memory limit in bytes, cpu_count never set) and the security context
    from the effective windowsOptions over the image user."""
    manifest = pod([{"name": "app", "image": "img:1",
                     "resources": {"limits": {"cpu": "3", "memory": "256Mi"}},
                     "securityContext": {"windowsOptions": {
                         "gmsaCredentialSpec": "spec",
                         "runAsUserName": "ContainerAdministrator"}}}])
    node = kw.NodeContext(processor_count=4)
    config = kw.container_config(manifest, "app", node=node, image_username="foo")
    assert config.windows.resources == api_pb2.WindowsContainerResources(
        cpu_maximum=7500, memory_limit_in_bytes=256 * 1024 * 1024
    )
    assert config.windows.security_context == api_pb2.WindowsContainerSecurityContext(
        run_as_username="ContainerAdministrator", credential_spec="spec"
    )
    plain = kw.container_config(pod([{"name": "app", "image": "i"}]), "app",
                                image_username="imguser")
    assert plain.windows.HasField("resources") and plain.windows.resources.ByteSize() == 0
    assert plain.windows.security_context.run_as_username == "imguser"
    assert not plain.HasField("linux")

@given(
    milli=st.integers(1, 10**7), count=st.integers(1, 1024),
    memory_mi=st.integers(0, 10**6), unit=st.sampled_from(["m", ""]),
)
def test_windows_resources_property(milli: int, count: int, memory_mi: int, unit: str) -> None:
    """calculateWindowsResources: `if !cpuLimit.IsZero() { CpuMaximum =
    calculateCPUMaximum(cpuLimit, ProcessorCount) }`; `if memLimit != 0 {
    MemoryLimitInBytes = memLimit }`; CpuCount is never set."""
    cpu = f"{milli}m" if unit == "m" else str(milli)
    cpu_milli = milli if unit == "m" else milli * 1000
    limits = {"cpu": cpu, "memory": f"{memory_mi}Mi"}
    config = kw.container_config(pod([{"name": "c", "resources": {"limits": limits}}]), "c",
                                 node=kw.NodeContext(processor_count=count))
    resources = config.windows.resources
    assert resources.cpu_maximum == max(1, min(10000, 10 * cpu_milli // count))
    assert resources.memory_limit_in_bytes == memory_mi * 2**20
    assert resources.cpu_count == 0 and resources.cpu_shares == 0
