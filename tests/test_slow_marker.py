"""The `slow` marker (tests/conftest.py): README's test command skips the slow memory tests
with their reason, so that it stays under 2 minutes on 2 cores; CI runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ONE_SLOW_TEST = "tests/cli/test_memory.py::test_audit_pods_before_their_node_wait_on_disk"


def _pytest(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0",
         "--setup-only",
         ONE_SLOW_TEST], cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "KUBELET_WINNET_CI", "KUBELET_WINNET_SLOW")}
    return {**env, **values}


def test_a_slow_test_skips_with_its_reason_outside_ci() -> None:
    done = _pytest(_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "these run under CI; set KUBELET_WINNET_SLOW=1 to run them here" in done.stdout


@pytest.mark.parametrize("variable", [pytest.param("CI", marks=pytest.mark.slow),
                                      "KUBELET_WINNET_SLOW"])  # CI runs the CI case
def test_a_slow_test_runs_under_ci_or_when_asked(variable: str) -> None:
    done = _pytest(_env(**{variable: "1"}))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped" not in done.stdout and "SETUP" in done.stdout  # set up, not skipped
