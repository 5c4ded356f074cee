"""kuberuntime_container_windows_test.go's rows through ``container_config``, at every
kubelet minor each stored version covers, plus the regression tests for the areas where
the library used to disagree with the kubelet: the int64 edge of ``calculateCPUMaximum`` per
release, and a zero CPU limit."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.kuberuntime_container_windows import ROWS
from tests.upstream.rows import Row, cases


def _pod(container: dict[str, Any], meta: dict[str, str] | None = None) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": meta or {"name": "bar", "namespace": "new"},
            "spec": {"os": {"name": "windows"}, "containers": [container]}}


def _resources(limits: dict[str, str], processors: int, minor: int) -> Any:
    manifest = _pod({"name": "foo", "image": "busybox", "resources": {"limits": limits}})
    config = kw.container_config(manifest, "foo", node=kw.NodeContext(processor_count=processors),
                                 kubelet_version=f"1.{minor}")
    return config.windows.resources


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestCalculateCPUMaximum"))
def test_calculate_cpu_maximum(row: Row, minor: int) -> None:
    given = row.given
    got = _resources({"cpu": given["cpuLimit"]}, given["cpuCount"], minor)
    assert got.cpu_maximum == row.want["cpu_maximum"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestCalculateWindowsResources"))
def test_calculate_windows_resources(row: Row, minor: int) -> None:
    got = _resources({"cpu": row.given["cpuLim"], "memory": row.given["memLim"]}, 8, minor)
    assert got.cpu_maximum == row.want["cpu_maximum"]
    assert got.memory_limit_in_bytes == row.want["memory_limit_in_bytes"]
    assert got.cpu_count == 0 and got.cpu_shares == 0


@pytest.mark.parametrize("processors", [1, 2, 4, 8, 64])
@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestApplyPlatformSpecificContainerConfig"))
def test_apply_platform_specific_container_config(row: Row, minor: int, processors: int) -> None:
    given, want = row.given, row.want
    container = {**given["container"], "resources": given["resources"],
                 "securityContext": {"windowsOptions": given["windowsOptions"]}}
    config = kw.container_config(
        _pod(container, given["pod"]), "foo", image_username=given["image_username"],
        node=kw.NodeContext(processor_count=processors), kubelet_version=f"1.{minor}",
    )
    windows = config.windows
    cpu = want["cpu_maximum"]
    assert windows.resources.cpu_maximum == min(cpu["numerator"] // processors, cpu["cap"])
    assert windows.resources.memory_limit_in_bytes == want["memory_limit_in_bytes"]
    context = windows.security_context
    assert context.credential_spec == want["credential_spec"]
    assert context.run_as_username == want["run_as_username"]
    assert context.host_process is want["host_process"]


# --- where the library used to disagree with the kubelet's Go: the int64 edge, zero CPU --

# The same limits as the 1.38 rows, at the older releases: 1.27-1.37 wrap MilliValue() to
# the low 64 bits (``big.Int.Int64()``), so 2^64 + 4000 milli is 4000 milli there; 1.26
# multiplies by 10000 (``10000 * MilliValue() / NumCPU / 1000``), which overflows for any
# limit above 922337203685477 milli. Values worked out from those formulas by hand.
@pytest.mark.parametrize(
    ("limit", "minor", "want"),
    [
        ("18446744073709555616m", 37, 10000),  # 10 * 4000 / 4
        ("18446744073709555616m", 27, 10000),
        ("18446744073709555616m", 38, 1),  # saturates to MaxInt64, times 10 wraps to -10
        ("922337203685477580m", 26, 1),  # 10000 * that wraps negative
        ("922337203685477580m", 27, 10000),
        ("922337203685477m", 26, 10000),  # the largest that fits 10000 * milli
        ("922337203685478m", 26, 1),  # the smallest that does not: wraps negative
        ("100E", 26, 1),  # int64Amount scaled by 10^21 overflows: MilliValue() is 0
        ("9223372036854775808m", 30, 1),  # low 64 bits: MinInt64; times 10 wraps to 0
    ],
)
def test_cpu_maximum_int64_edge_per_release(limit: str, minor: int, want: int) -> None:
    """calculateCPUMaximum (1.27+) / calculateWindowsResources (1.26), in int64."""
    assert _resources({"cpu": limit}, 4, minor).cpu_maximum == want


@pytest.mark.parametrize("minor", [26, 27, 33, 38])
@pytest.mark.parametrize("zero", ["0", "0m", "0.0", "0Ki", "0e3"])
def test_zero_cpu_limit_leaves_cpu_maximum_unset(zero: str, minor: int) -> None:
    """calculateWindowsResources: `if !cpuLimit.IsZero()` guards CpuMaximum and
    `if memLimit != 0` the memory limit: zero limits send neither (unlike the skipped
    upstream row RequestZeroCPU, which expects 1)."""
    resources = _resources({"cpu": zero, "memory": zero}, 4, minor)
    assert resources.cpu_maximum == 0
    assert resources.memory_limit_in_bytes == 0
    assert not resources.ListFields()
