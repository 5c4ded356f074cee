"""Shared test configuration: hypothesis profiles, and the tests over the published corpus."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.strategies import CORPUS, MUST_RUN

# pytester: tests/testing/test_plugin.py runs pytest on a harness of its own.
pytest_plugins = ["pytester"]

# Three profiles: "quick" (the default: the README test command stays under 2 minutes on
# 2 cores, pip install included), "ci" (the default when CI is set: 12x the examples),
# and "dev" (opt-in with HYPOTHESIS_PROFILE=dev: 125x, random seeds).
for _name, _examples in (("quick", 12), ("ci", 150)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
settings.register_profile("dev", max_examples=1500, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "quick")
)

REPO_ROOT = Path(__file__).resolve().parent.parent
# scripts/ (docs renderer, generator) is not a package and not shipped in the wheel.
sys.path.insert(0, str(REPO_ROOT / "scripts"))

# Tests marked `corpus` read the published manifests beside the clone (../shared/corpus).
# Where it is absent they skip, all with this one reason raised from this one place; under
# CI (CI set) that is a failure, so .ci/run cannot pass without them.
CORPUS_ABSENT = (
    f"the published manifest corpus is not beside this clone ({CORPUS}), so the tests over "
    "it skip; tests/data/manifests covers the same rules, and CI runs both"
)


# Tests marked `slow` run under CI and with KUBELET_WINNET_SLOW=1; README's test command
# skips them so that it stays under 2 minutes on 2 cores. They check a bound at scale
# (memory or time over a large generated input, 1-6 s each), time or count the library's
# machinery rather than what a user gets, run a stress loop, a benchmark's quick run, a
# signal matrix past its first cases, the longer child pytest runs (the docs page's
# harness, the CI side of the skip rules), or the pre-commit hook (about 90 s).
RUN_SLOW = MUST_RUN or bool(os.environ.get("CI")) or os.environ.get("KUBELET_WINNET_SLOW") == "1"
SLOW_SKIPPED = (
    "a slow test (a bound checked at scale, a test that times the library's machinery, a "
    "stress loop, a benchmark's quick run, a signal matrix past its first cases, one of the "
    "longer child pytest runs, or the pre-commit hook through pre-commit): these run under "
    "CI; set KUBELET_WINNET_SLOW=1 to run them here"
)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A hook, not a fixture: pytest reports a skip raised here at this line, once for all.
    if item.get_closest_marker("slow") is not None and not RUN_SLOW:
        pytest.skip(SLOW_SKIPPED)
    if item.get_closest_marker("corpus") is None or CORPUS.is_dir():
        return
    if MUST_RUN:
        pytest.fail(f"CI must run the corpus tests, but there is no corpus at {CORPUS}",
                    pytrace=False)
    pytest.skip(CORPUS_ABSENT)
