"""Shared test configuration: hypothesis profiles and the corpus location."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# Three profiles: "quick" (the default: the README test command stays under 2 minutes on
# 2 cores, pip install included), "ci" (the default when CI is set: 6x the examples),
# and "dev" (opt-in with HYPOTHESIS_PROFILE=dev: 60x, random seeds).
for _name, _examples in (("quick", 25), ("ci", 150)):
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
