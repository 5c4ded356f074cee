"""Shared test configuration: hypothesis profiles and the corpus location."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# "ci", the default, is bounded so the README test command stays under 2 minutes on 2
# cores; HYPOTHESIS_PROFILE=dev digs deeper (10x the examples, random seeds).
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=1500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO_ROOT = Path(__file__).resolve().parent.parent
# scripts/ (docs renderer, generator) is not a package and not shipped in the wheel.
sys.path.insert(0, str(REPO_ROOT / "scripts"))
