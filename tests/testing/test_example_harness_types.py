"""The example harness (tests/testing/example_harness/, included by docs/testing.md)
under ``mypy --strict`` as a user's own files: copied to a directory with no
configuration, checked against the installed package. A harness that passes the wrong
type to the harness's functions is reported at the argument."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.strategies import REPO_ROOT, require

HARNESS = Path(__file__).resolve().parent / "example_harness"
BAD = """\
from kubelet_winnet.testing import FakeRuntime, assert_kubelet_request
from kubelet_winnet.testing.strategies import windows_pods

with FakeRuntime(policy="kep") as fake:
    [sent] = fake.requests("RunPodSandbox")
    assert_kubelet_request(sent, {}, kubelet_version=1.32)
windows_pods(host_process="all")
"""


def test_the_example_harness_passes_mypy_strict_as_a_users_files(tmp_path: Path) -> None:
    require("mypy")
    names = sorted(p.name for p in HARNESS.glob("test_*.py"))
    for name in names:
        shutil.copy(HARNESS / name, tmp_path / name)
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    cache = REPO_ROOT / ".mypy_cache" / "example-harness"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache),
         "--no-error-summary", *names, "bad.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert "Cannot find implementation or library stub" not in done.stdout, done.stdout
    assert [line for line in errors if not line.startswith("bad.py:")] == [], done.stdout
    found = [(int(m[1]), m[2]) for m in (re.match(r"bad\.py:(\d+): error: (.*)", line)
                                          for line in errors) if m]
    # One error a line: requests("RunPodSandbox") is typed as RunPodSandboxRequest, so
    # only the version's type is wrong on line 6.
    assert [line for line, _ in found] == [6, 7], done.stdout
    assert '"kubelet_version"' in found[0][1] and '"float"' in found[0][1], found[0]
    assert '"host_process"' in found[1][1] and "all" in found[1][1], found[1]
