"""The shape of a transcribed upstream table row: facts only (inputs, expected values,
error texts), never upstream code.

A :class:`Source` is one stored version of an upstream test file: its commit in
kubernetes/kubernetes and the kubelet minors whose source it describes (with the evidence
for that range, since the stored versions are not tagged). A :class:`Row` is one table
entry of one test function at that version. A row is in scope unless ``out_of_scope``
says why not; ``fake`` says which test fake the expectation depends on and how it maps
to a ``NodeContext``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

__all__ = ["Row", "Source", "cases", "minors_label"]


@dataclass(frozen=True)
class Source:
    """One version of an upstream test file."""

    file: str  # path in kubernetes/kubernetes
    commit: str  # the stored version's commit
    minors: tuple[int, ...]  # the kubelet minors (1.x) whose source this version describes
    evidence: str  # why those minors

    @property
    def release(self) -> str:
        return minors_label(self.minors)


@dataclass(frozen=True)
class Row:
    """One table entry: ``given`` inputs, ``want`` expectations, both as plain data."""

    source: Source
    test: str  # the Go test function
    name: str  # the row's name (or description) as upstream wrote it
    given: Mapping[str, Any]
    want: Mapping[str, Any]
    out_of_scope: str = ""  # the reason, when the row is not run
    fake: str = ""  # the test fake the expectation depends on, and its NodeContext
    minors: tuple[int, ...] = field(default=())  # narrower than the source's, when set
    note: str = ""  # a part of the row not checked, or why it runs at fewer minors

    @property
    def in_scope(self) -> bool:
        return not self.out_of_scope

    @property
    def run_minors(self) -> tuple[int, ...]:
        return self.minors or self.source.minors

    @property
    def ident(self) -> str:
        return f"{self.test}/{self.name}@{self.source.commit[:8]}"


def minors_label(minors: Iterable[int]) -> str:
    """``1.27–1.37`` for a contiguous range, else the minors listed."""
    ordered = sorted(minors)
    if not ordered:
        return "none"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        if len(ordered) == 1:
            return f"1.{ordered[0]}"
        return f"1.{ordered[0]}–1.{ordered[-1]}"
    return ", ".join(f"1.{minor}" for minor in ordered)


def cases(rows: Iterable[Row], test: str | None = None) -> list[Any]:
    """pytest parameters (row, minor) for every in-scope row of ``test`` at every minor
    it covers, with readable ids."""
    out = []
    for row in rows:
        if not row.in_scope or (test is not None and row.test != test):
            continue
        for minor in row.run_minors:
            out.append(pytest.param(row, minor, id=f"{row.ident}@1.{minor}"))
    return out
