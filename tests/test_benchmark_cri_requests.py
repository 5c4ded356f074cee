"""``benchmarks/cri_requests.py --quick`` runs every path and agrees with the floor on
bytes. Nothing is timed here: numbers from a quick run on a shared machine mean nothing."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHMARK = REPO / "benchmarks" / "cri_requests.py"


@pytest.mark.slow  # a benchmark's quick run (CI also runs it on its own)
def test_quick_run_prints_the_ratio_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "requests.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--json", str(out),
         "--corpus", str(REPO / "tests" / "data" / "manifests")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    # 27 pod documents in the YAML files (the JSON List is not read), 4 of them refused.
    assert results["pods"] == 23 and results["pod_sandbox_config / floor"]["ratio"] > 0
    budget_rows = [x for x in done.stdout.splitlines() if "/ V1Pod deserialization" in x]
    if importlib.util.find_spec("kubernetes") is None:
        assert budget_rows == [] and "The kubernetes client is not installed" in done.stdout
    else:
        # Specs repeating (<= 1x) and every container spec new (<= 2.5x), for each builder.
        assert len(budget_rows) == 4, done.stdout
        assert all(x.rstrip().endswith(("| met |", "| missed |")) for x in budget_rows)
        assert sum("every spec new" in x and "<= 2.5x" in x for x in budget_rows) == 2
        assert results["container_config / V1Pod deserialization"]["reference_us"] > 0


def test_empty_corpus_is_an_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--corpus", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1 and "no accepted pods" in done.stderr
