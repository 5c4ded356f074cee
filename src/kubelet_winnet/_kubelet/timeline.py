"""The kubelet releases this library models: :data:`TIMELINE`, one row per supported minor
with what ``WindowsHostNetwork`` is in it, its release status and date.

Everything that depends on the kubelet version is derived from :data:`TIMELINE`: the
version range, the default version, the window of step 2 in ``rules.STEPS``, the rows of
``docs/decision-table.md`` and the texts of ``explain``. Adding kubelet 1.39 is adding one
row (see docs/architecture.md).

Sources: kubernetes/kubernetes ``pkg/features/kube_features.go`` of each release (gate
stage and default) and ``pkg/kubelet/kuberuntime/kuberuntime_sandbox.go``
(``generatePodSandboxWindowsConfig``: whether the sandbox code reads the gate).
"""

from __future__ import annotations

import enum
from typing import Literal, NamedTuple

from kubelet_winnet._describe import describe
from kubelet_winnet.errors import UnsupportedVersionError

__all__ = [
    "DEFAULT_KUBELET_VERSION",
    "KEP_WITHDRAWN_MINOR",
    "LAST_NAMESPACE_OPTIONS_MINOR",
    "MAX_MINOR",
    "MIN_MINOR",
    "STATUS_AS_OF",
    "TIMELINE",
    "Band",
    "GateStage",
    "Release",
    "ReleaseStatus",
    "bands",
    "release",
]

# Where a minor stands on STATUS_AS_OF: out, or a release candidate (its .0 not yet out).
ReleaseStatus = Literal["released", "rc"]
STATUS_AS_OF = "2026-12-04"


class GateStage(enum.Enum):
    ALPHA = "alpha"
    DEPRECATED = "deprecated"
    REMOVED = "removed"


class Release(NamedTuple):
    """``WindowsHostNetwork`` in one kubelet minor release."""

    minor: int
    stage: GateStage
    default: bool | None  # None: the gate does not exist
    # The sandbox code sets namespace_options when the gate is enabled (KEP-3503 live).
    reads_gate: bool
    note: str
    status: ReleaseStatus  # as of STATUS_AS_OF ("rc": by the release schedule)
    date: str  # ISO date: released on ("released"), or due by the schedule ("rc")
    # An "rc" row only: rc.0's date by the schedule, and the newest pre-release a source
    # read shows (observed; no source read shows rc.0 itself).
    rc0_date: str = ""
    newest_seen: str = ""

    @property
    def status_text(self) -> str:
        """``released 2025-12-17``, or for a minor not yet out what the schedule says and
        what was observed: ``a release candidate by the schedule (rc.0 2026-12-02), due
        2026-12-16; the newest pre-release seen is v1.38.0-alpha.2``."""
        if self.status == "rc":
            return (f"a release candidate by the schedule (rc.0 {self.rc0_date}), due "
                    f"{self.date}; the newest pre-release seen is {self.newest_seen}")
        return f"released {self.date}"


_ALPHA = "sets namespace_options when enabled"
_GONE = "accepted, but namespace_options is never set (PR #130250)"
_REMOVED = "removed (PR #142018): setting it is an error"
A, D, R = GateStage.ALPHA, GateStage.DEPRECATED, GateStage.REMOVED

# The timeline. 1.26-1.32 say {Default: true, PreRelease: Alpha} in their own
# kube_features.go (the versioned table of 1.33+ rewrote that history as false). Status
# and date as of STATUS_AS_OF: each minor's .0 release date (the kubernetes.io release
# announcements). 1.38 is not out: by its schedule (kubernetes/sig-release
# releases/release-1.38) v1.38.0-rc.0 is released on 2026-12-02 and v1.38.0 on 2026-12-16;
# observed, the newest pre-release a source read shows is v1.38.0-alpha.2
# (CHANGELOG/CHANGELOG-1.38.md at 0411cc704533).
TIMELINE: tuple[Release, ...] = (
    Release(26, A, True, True, _ALPHA, "released", "2022-12-08"),
    Release(27, A, True, True, _ALPHA, "released", "2023-04-11"),
    Release(28, A, True, True, _ALPHA, "released", "2023-08-15"),
    Release(29, A, True, True, _ALPHA, "released", "2023-12-13"),
    Release(30, A, True, True, _ALPHA, "released", "2024-04-17"),
    Release(31, A, True, True, _ALPHA, "released", "2024-08-13"),
    Release(32, A, True, True, _ALPHA, "released", "2024-12-11"),
    Release(33, D, False, False, _GONE, "released", "2025-04-23"),
    Release(34, D, False, False, _GONE, "released", "2025-08-27"),
    Release(35, D, False, False, _GONE, "released", "2025-12-17"),
    Release(36, D, False, False, _GONE, "released", "2026-04-22"),
    Release(37, D, False, False, _GONE, "released", "2026-08-26"),
    Release(38, R, None, False, _REMOVED, "rc", "2026-12-16", "2026-12-02", "v1.38.0-alpha.2"),
)
del A, D, R

MIN_MINOR = TIMELINE[0].minor
MAX_MINOR = TIMELINE[-1].minor
_BY_MINOR = {row.minor: row for row in TIMELINE}
# The last release whose kubelet implements KEP-3503 is the default.
LAST_NAMESPACE_OPTIONS_MINOR = max(row.minor for row in TIMELINE if row.reads_gate)
KEP_WITHDRAWN_MINOR = LAST_NAMESPACE_OPTIONS_MINOR + 1
DEFAULT_KUBELET_VERSION = f"1.{LAST_NAMESPACE_OPTIONS_MINOR}"


class Band(NamedTuple):
    """Consecutive releases with the same row apart from the minor (for docs)."""

    first_minor: int
    last_minor: int
    release: Release

    @property
    def label(self) -> str:
        if self.first_minor == self.last_minor:
            return f"1.{self.first_minor}" + ("+" if self.last_minor == MAX_MINOR else "")
        return f"1.{self.first_minor}–1.{self.last_minor}"


def bands() -> tuple[Band, ...]:
    out: list[Band] = []
    for row in TIMELINE:
        last = out[-1] if out else None
        same = last is not None and (
            (last.release.stage, last.release.default, last.release.reads_gate, last.release.note)
            == (row.stage, row.default, row.reads_gate, row.note)
        )
        if last is not None and same:
            out[-1] = Band(last.first_minor, row.minor, last.release)
        else:
            out.append(Band(row.minor, row.minor, row))
    return tuple(out)


_RANGE = f"supported kubelet versions are 1.{MIN_MINOR} to 1.{MAX_MINOR}"


def release(minor: int) -> Release:
    """The timeline row of kubelet ``1.minor``; ``UnsupportedVersionError`` outside it."""
    row = _BY_MINOR.get(minor) if type(minor) is int else None
    if row is None:
        shown = f"1.{minor}" if type(minor) is int and abs(minor) < 10**9 else (
            f"1.<{describe(minor)}>"
        )
        raise UnsupportedVersionError(shown, _RANGE)
    return row

