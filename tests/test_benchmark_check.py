"""``benchmarks/check.py --quick`` still runs end to end: the generator, every row, the
table. No timing is asserted: a quick run on a shared CI machine measures nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "check.py"


@pytest.mark.slow  # a benchmark's quick run (CI also runs it on its own)
def test_quick_run(tmp_path: Path) -> None:
    keep = tmp_path / "inputs"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--checkov", "", "--keep", str(keep)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    for row in ("| check one pod (start-up) | 1 |", "| check List (2000 pods) | 2000 |",
                "| check directory (200 files) | 200 |",
                "| reference: json.load of the List | 2000 |",
                "| floor: the List read and each pod by the kubelet model's reader "
                "(no rule, no output) | 2000 |"):
        assert row in done.stdout
    assert len(list((keep / "tree").rglob("*.yaml"))) == 200
    assert "budget: check of the List, CPU against json.load of it: " in done.stdout
    assert "budget: peak RSS of check and translate: " in done.stdout
    assert "informational: before any rule, reading the List and each pod by the kubelet " \
        "model's reader costs " in done.stdout
