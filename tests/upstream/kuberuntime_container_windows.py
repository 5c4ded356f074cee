"""pkg/kubelet/kuberuntime/kuberuntime_container_windows_test.go, as data.

Two stored versions: 78acd4d4 (five TestCalculateCPUMaximum rows) and 0411cc70 (the same
five plus five rows at the int64 edge, TODO kubernetes#141166). Each test builds the
pod or calls the function directly; the expectations of TestApplyPlatformSpecificContainerConfig
and TestCalculateWindowsResources depend on ``winstats.ProcessorCount()`` of the machine
running the test, which maps to ``NodeContext.processor_count``.
"""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kuberuntime/kuberuntime_container_windows_test.go"

V_78ACD4D = Source(
    FILE,
    "78acd4d422b2bd9cda806bc079bbc9d48736352c",
    tuple(range(27, 38)),
    "TestCalculateCPUMaximum arrived with calculateCPUMaximum in kubernetes#114231 (win: fix "
    "cpu count to calculate cpu_maximum), merged after 1.26 was cut; this version lacks the "
    "int64-edge rows that the 1.38 table adds",
)
V_0411CC7 = Source(
    FILE,
    "0411cc704533ed25a1bfc6e21a3195d9c6a2f0f2",
    (38,),
    "the newest stored version: it adds the int64-edge rows of kubernetes#141166, an issue "
    "of the 1.38 cycle",
)

_PROCESSORS = "winstats.ProcessorCount() of the test machine -> NodeContext(processor_count=N)"

_APPLY = {
    "resources": {"requests": {"memory": "128Mi", "cpu": "1"},
                  "limits": {"memory": "256Mi", "cpu": "3"}},
    "windowsOptions": {"gmsaCredentialSpecName": "gmsa spec name",
                       "gmsaCredentialSpec": "credential spec",
                       "runAsUserName": "ContainerAdministrator", "hostProcess": True},
    "image_username": "foo",
    "pod": {"uid": "12345678", "name": "bar", "namespace": "new"},
    "container": {"name": "foo", "image": "busybox", "command": ["testCommand"],
                  "workingDir": "testWorkingDir"},
}
# expectedCpuMax := 10 * 3000 / ProcessorCount, capped at 10000.
_APPLY_WANT = {
    "cpu_maximum": {"numerator": 10 * 3000, "cap": 10000},
    "memory_limit_in_bytes": 256 * 1024 * 1024,
    "credential_spec": "credential spec",
    "run_as_username": "ContainerAdministrator",
    "host_process": True,
}

_CPU_MAXIMUM = (
    ("max range when same amount", "1", 1, 10000),
    ("percentage calculation is working as intended", "94", 96, 9791),
    ("half range when half amount", "1", 2, 5000),
    ("max range when more requested than available", "2", 1, 10000),
    ("min range when less than minimum", "1m", 100, 1),
)
_CPU_MAXIMUM_INT64_EDGE = (
    ("largest limit whose product fits int64", "922337203685477580m", 4, 10000),
    ("smallest limit whose product overflows int64", "922337203685477581m", 4, 1),
    ("limit past int64", "100E", 4, 1),
    ("limit of MaxInt64 plus one milli", "9223372036854775808m", 4, 1),
    ("limit of 2^64 plus 4000 milli", "18446744073709555616m", 4, 1),
)
_WINDOWS_RESOURCES = (
    ("Request128MBLimit256MB", "2", "128Mi", 2500, 134217728, ""),
    ("RequestNoMemory", "8", "0", 10000, 0, ""),
    ("RequestZeroCPU", "0", "128Mi", 1, 134217728,
     "upstream skips this test (t.Skip \"Skip failing test on Windows.\") and this row "
     "contradicts the source it would test: calculateWindowsResources sets CpuMaximum only "
     "`if !cpuLimit.IsZero()`, so a zero CPU limit sends cpu_maximum unset (0), not 1; the "
     "library follows the source (tests/upstream/test_kuberuntime_container_windows.py "
     "test_zero_cpu_limit_leaves_cpu_maximum_unset)"),
)


def _rows(source: Source, edge: bool) -> list[Row]:
    rows = [Row(source, "TestApplyPlatformSpecificContainerConfig", "(single case)",
                _APPLY, _APPLY_WANT, fake=_PROCESSORS + ", run for N in 1, 2, 4, 8, 64")]
    table = _CPU_MAXIMUM + (_CPU_MAXIMUM_INT64_EDGE if edge else ())
    rows += [
        Row(source, "TestCalculateCPUMaximum", name,
            {"cpuLimit": limit, "cpuCount": count}, {"cpu_maximum": want})
        for name, limit, count, want in table
    ]
    rows += [
        Row(source, "TestCalculateWindowsResources", name,
            {"cpuLim": cpu, "memLim": memory},
            {"cpu_maximum": cpu_max, "memory_limit_in_bytes": memory_bytes},
            out_of_scope=reason,
            fake=_PROCESSORS + "; the expectations imply N = 8 (2 CPUs -> 2500)")
        for name, cpu, memory, cpu_max, memory_bytes, reason in _WINDOWS_RESOURCES
    ]
    return rows


# The 78acd4d4 table lacks "largest limit whose product fits int64" and the overflow rows.
ROWS: tuple[Row, ...] = (*_rows(V_78ACD4D, edge=False), *_rows(V_0411CC7, edge=True))
SOURCES = (V_78ACD4D, V_0411CC7)
