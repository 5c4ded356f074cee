"""The budgets of ``docs/performance.md``, each printed as one line a person reads.

A budget is what a user feels: a ratio to something they already run (``json.load`` of
the same file, the peer linter, the official client, ``import yaml, google.protobuf``)
or a memory bound. A comparison with an earlier commit is reported, never a budget. The
verdict never changes a benchmark's exit code.
"""

from __future__ import annotations

__all__ = ["CPU_RATIO", "PEER_RATIO", "RSS_MB", "at_least", "at_most"]

CPU_RATIO = 2.0  # streaming commands: CPU seconds / json.load's of the same file
RSS_MB = 50.0  # streaming commands: peak RSS, whatever the input size
PEER_RATIO = 20.0  # checkov's CPU seconds / check's on the same 1,000 files


def at_most(what: str, measured: float, budget: float, unit: str = "x") -> str:
    """``budget: WHAT: 1.64x (at most 2x): met``."""
    verdict = "met" if measured <= budget else "missed"
    return f"budget: {what}: {measured:.2f}{unit} (at most {budget:g}{unit}): {verdict}"


def at_least(what: str, measured: float, budget: float, unit: str = "x") -> str:
    """``budget: WHAT: 35.1x (at least 20x): met``."""
    verdict = "met" if measured >= budget else "missed"
    return f"budget: {what}: {measured:.2f}{unit} (at least {budget:g}{unit}): {verdict}"
