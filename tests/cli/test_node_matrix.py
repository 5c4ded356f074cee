"""``matrix --runtime``: containerd releases by isolation, for HostProcess and hostPort.

Expected: a HostProcess pod under Hyper-V has no network exactly where the release's shim
carries hcsshim PR #2531 (v0.15.0-rc.2+): containerd 2.3.3 and later (runhcs-version
v0.15.0-rc.3; 2.4.0: rc.4), not 1.7 to 2.3.2 (git show vX.Y.Z:script/setup/runhcs-version).
A HostProcess pod never reaches CNI (containerd sandbox_run.go), so its hostPort is the
node's own port under process isolation.
"""

from __future__ import annotations

import json

import pytest

from kubelet_winnet.cli import main

NO_NETWORK = {"1.7": False, "2.0": False, "2.1": False, "2.2": False, "2.3.0-2.3.2": False,
              "2.3.3+": True, "2.4": True}


def test_runtime_axis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--runtime", "-o", "json"]) == 0
    rows = {row["containerd"]: row for row in json.loads(capsys.readouterr().out)}
    assert {name: row["cells"]["HostProcess, Hyper-V"]["network"] == "none"
            for name, row in rows.items()} == NO_NETWORK
    for row in rows.values():
        assert row["cells"]["HostProcess, process"]["network"] == "node"
        assert row["cells"]["HostProcess, process"]["hostPort"] == "host"
        assert row["cells"]["hostPort pod, Hyper-V"]["isolation"] == "hyperv"
    assert rows["2.4"]["hcsshim"] == "v0.15.0-rc.4"


def test_runtime_axis_markdown_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--runtime"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| 2.3.3+ "))
    assert "**no network**" in row
    assert main(["matrix", "--runtime", "--pod", "x.yaml"]) == 2
    assert "--pod is for the kubelet's axis" in capsys.readouterr().err
