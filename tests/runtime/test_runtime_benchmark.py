"""``benchmarks/runtime.py --quick`` runs every measured path and reports every row. No
timing is asserted, ever: the numbers of a quick run on a shared CI machine mean nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.strategies import REPO_ROOT

REPO = REPO_ROOT
BENCHMARK = REPO / "benchmarks" / "runtime.py"


def test_quick_run_reports_every_row(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    state = tmp_path / "state"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--json", str(out), "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for operation in ("sandboxes", "floor", "raw hcn"):
        for threads in (1, 32):
            assert f"| {operation} | {threads} |" in done.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    rows = {(r["operation"], r["threads"]): r for r in result["rows"]}
    assert set(rows) == {(o, t) for o in ("sandboxes", "floor", "raw hcn") for t in (1, 32)}
    for (operation, _), row in rows.items():
        assert row["throughput"] > 0 and row["p99_us"] >= row["p50_us"] > 0
        assert (row["ratio"] is None) == (operation == "raw hcn")
    assert rows[("sandboxes", 32)]["sandboxes"] == 32 * 2
    assert not [p for p in state.rglob("*") if p.is_file()]  # every round cleaned up


def test_benchmark_refuses_unknown_options() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--no-such-option"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "usage" in done.stderr
