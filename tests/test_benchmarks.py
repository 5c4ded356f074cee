"""``benchmarks/run.py --quick`` still runs: every measured path, the naive translator's
agreement with the library, the import probe and the report. No timing is asserted here,
ever: the numbers of a quick run on a shared CI machine mean nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.strategies import require

REPO = Path(__file__).resolve().parent.parent
BENCHMARK = REPO / "benchmarks" / "run.py"

require("kubernetes")  # the benchmark builds kubernetes.client V1Pods


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )


def test_quick_run_exits_0_and_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--json", str(out), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    table = done.stdout
    for operation in ("| dict |", "| V1Pod |", "| model |", "| naive |", "| floor |",
                      "| import |", "| import baseline |", "| import and first use |"):
        assert operation in table
    assert "| import | import kubelet_winnet (per import) |" in table
    assert "| import baseline | import yaml, google.protobuf (per import) |" in table
    budget = next(line for line in table.splitlines() if "(import / import baseline)" in line)
    assert budget.rstrip().endswith(("| met |", "| missed |"))
    for ratio in ("(dict / naive)", "(V1Pod / dict)"):
        line = next(line for line in table.splitlines() if ratio in line)
        assert line.rstrip().endswith(("| informational: within |", "| informational: over |"))
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["facts"]["measured_pods"] > 0
    assert results["facts"]["forbidden_modules_at_import"] == []
    assert {r["name"] for r in results["ratios"]} == {
        "import vs import yaml, google.protobuf (budget)",
        "dict path vs naive translator",
        "V1Pod path vs dict path",
        "import and first use vs pydantic+protobuf+api_pb2",
    }


def test_quick_run_on_the_bundled_examples(tmp_path: Path) -> None:
    """The fallback corpus (``examples/``) must be enough to run the benchmark."""
    examples = REPO / "examples"
    if not any(examples.glob("*.y*ml")):
        pytest.skip("no bundled examples")
    done = _run("--corpus", str(examples), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| dict |" in done.stdout


def test_a_missing_corpus_is_an_error(tmp_path: Path) -> None:
    done = _run("--corpus", str(tmp_path / "nowhere"), tmp_path=tmp_path)
    assert done.returncode != 0
    assert "not a directory" in done.stderr


def test_quick_profile_runs(tmp_path: Path) -> None:
    done = _run("--profile", "dict", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "own time share" in done.stdout


def test_ablation_runs_every_case(tmp_path: Path) -> None:
    """``benchmarks/ablate.py`` (the evidence for every cache in docs/performance.md)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "ablate.py"), "--rounds", "1",
         "--corpus", str(REPO / "examples")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "." in line]
    # Every cache named in docs/performance.md, and only those.
    assert [_label(row) for row in rows] == _documented_ablations(), done.stdout
    for row in rows:
        float(row.rstrip(" |").rsplit("|", 1)[1])  # a ratio in the last column


def _label(row: str) -> str:
    return row.split("|")[1].strip()


def _documented_ablations() -> list[str]:
    """The first column of the table of ablation ratios in docs/performance.md."""
    lines = (REPO / "docs" / "performance.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| cache | row | time off / on (median) |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        rows.append(_label(line))
    assert rows
    return rows
