"""validation_test.go's TestValidateWindowsHostProcessPod through ``check``: a row expecting
an API error must get an error finding from a HostProcess rule, and a valid row none."""

from __future__ import annotations

import pytest

from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.reach import host_network_reach
from kubelet_winnet._lint.rules import Severity
from kubelet_winnet._lint.targeting import Target, pod_object
from tests.upstream.rows import Row, cases
from tests.upstream.validation_windows import ROWS

_RULES = {"host-process-mixed", "host-process-needs-host-network", "host-process-pod-false",
          "host-process-override"}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestValidateWindowsHostProcessPod"))
def test_validate_windows_host_process_pod(row: Row, minor: int) -> None:
    manifest = {"kind": "Pod", "metadata": {"name": "p"},
                "spec": {"os": {"name": "windows"}, **row.given["podSpec"]}}
    pod = pod_object(manifest)
    assert pod is not None
    findings = check_pod(pod, Target.WINDOWS, host_network_reach(f"1.{minor}", None))
    errors = [f for f in findings if f.rule.id in _RULES and f.severity is Severity.ERROR]
    assert bool(errors) is row.want["expectError"], [f.message for f in errors]
    for finding in errors:  # the API server's text, quoted from validation.go
        assert 'API server: "' in (finding.detail or ""), finding
