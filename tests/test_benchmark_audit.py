"""benchmarks/audit.py runs end to end (``--quick``); nothing is timed here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "audit.py"


@pytest.mark.slow  # a benchmark's quick run (CI also runs it on its own)
def test_quick_run_audits_every_windows_pod() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json"],
        capture_output=True, text=True, check=False, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    rows = {row["row"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"audit -o json", "audit -o csv", "audit -o text", "audit -o html",
                         "reference: json.load"}
    # The generator puts pod i on node i % 20 and makes 2 nodes in 5 Windows; unscheduled
    # pods target the OS of the node they would have had.
    windows = sum(1 for i in range(2_000) if (i % 20) % 5 < 2)
    assert rows["audit -o json"]["windowsPods"] == windows
    assert rows["audit -o csv"]["windowsPods"] == windows
    assert rows["audit -o text"]["windowsPods"] == windows
    # The page lists the Windows pods with something to say: a hostNetwork pod that is not
    # HostProcess (kinds 1, 2: IGNORED) and a HostProcess pod without it (kind 4: refused).
    listed = sum(1 for i in range(2_000) if (i % 20) % 5 < 2 and i % 10 in (1, 2, 4))
    assert rows["audit -o html"]["windowsPods"] == listed
    for row in rows.values():
        assert row["pods"] == 2_000
        assert row["seconds"] > 0 and row["peakMB"] > 0
