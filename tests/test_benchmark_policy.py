"""``benchmarks/policy.py --quick`` still runs end to end. No timing is asserted: a quick
run on a shared CI machine measures nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "policy.py"


@pytest.mark.slow  # a benchmark's quick run
def test_quick_run() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARK), "--quick"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "| kubelet-winnet policy | 3 |" in done.stdout
    assert "| reference: kubelet-winnet --help | 3 |" in done.stdout
    assert "ratio policy / reference (median of rounds): " in done.stdout
    assert "targets (informational): policy < 1000 ms: " in done.stdout
