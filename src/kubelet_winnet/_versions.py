"""Kubelet versions this library models, and what the ``WindowsHostNetwork`` gate is in each.

The timeline (kubernetes/kubernetes ``pkg/features/kube_features.go`` and
``pkg/kubelet/kuberuntime/kuberuntime_sandbox_windows.go`` across releases):

* 1.26-1.32: alpha, default true, never locked; sets ``namespace_options`` when enabled.
* 1.33-1.37: deprecated, default false, still settable; the code path is gone (PR #130250).
* 1.38+: removed (PR #142018); setting it is ``unrecognized feature gate``.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass

from kubelet_winnet.errors import UnsupportedVersionError

__all__ = [
    "DEFAULT_KUBELET_VERSION",
    "GATE_TIMELINE",
    "MAX_MINOR",
    "MIN_MINOR",
    "GateStage",
    "GateStatus",
    "KubeletVersion",
    "gate_status",
    "parse_kubelet_version",
]

MIN_MINOR = 26
MAX_MINOR = 38
# The last release whose kubelet implements KEP-3503.
DEFAULT_KUBELET_VERSION = "1.32"


class GateStage(enum.Enum):
    ALPHA = "alpha"
    DEPRECATED = "deprecated"
    REMOVED = "removed"


@dataclass(frozen=True)
class GateStatus:
    """``WindowsHostNetwork`` in one band of kubelet releases."""

    first_minor: int
    last_minor: int
    stage: GateStage
    default: bool
    # Whether the kubelet's sandbox code reads the gate at all.
    sets_namespace_options: bool
    note: str


GATE_TIMELINE: tuple[GateStatus, ...] = (
    GateStatus(26, 32, GateStage.ALPHA, True, True, "sets namespace_options when enabled"),
    GateStatus(
        33, 37, GateStage.DEPRECATED, False, False,
        "accepted, but namespace_options is never set (PR #130250)",
    ),
    GateStatus(
        38, MAX_MINOR, GateStage.REMOVED, False, False,
        "removed (PR #142018): setting it is an error",
    ),
)


def gate_status(minor: int) -> GateStatus:
    for status in GATE_TIMELINE:
        if status.first_minor <= minor <= status.last_minor:
            return status
    raise UnsupportedVersionError(f"1.{minor}", _RANGE)


@dataclass(frozen=True, order=True)
class KubeletVersion:
    minor: int
    patch: int | None = None

    def __str__(self) -> str:
        return f"1.{self.minor}" + ("" if self.patch is None else f".{self.patch}")


_RANGE = f"supported kubelet versions are 1.{MIN_MINOR} to 1.{MAX_MINOR}"
# "1.32", "v1.32.4", "1.32.0"; a build suffix as in `kubelet --version`
# ("v1.32.4-eks-1") is accepted and ignored.
# ASCII digits only: \d would also match fullwidth or Arabic-Indic digits, which int() accepts.
_VERSION = re.compile(r"v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:[-+][0-9A-Za-z.+-]*)?")


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> KubeletVersion:
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise UnsupportedVersionError(text, 'not a version like "1.32" or "v1.32.4"')
    major, minor = int(match[1]), int(match[2])
    if major != 1 or not MIN_MINOR <= minor <= MAX_MINOR:
        raise UnsupportedVersionError(text, _RANGE)
    return KubeletVersion(minor, None if match[3] is None else int(match[3]))


def parse_kubelet_version(value: object) -> KubeletVersion:
    """Parse ``"1.32"``, ``"v1.32.4"`` or ``"1.32.0"``; raise ``UnsupportedVersionError``."""
    if isinstance(value, KubeletVersion):
        return value
    if not isinstance(value, str):
        raise UnsupportedVersionError(value, f"expected a string, got {type(value).__name__}")
    return _parse(value)
