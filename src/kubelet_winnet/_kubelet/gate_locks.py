"""The feature gates each release locks to their default: component-base refuses the
other value at start-up. A row of :data:`LOCK_TABLE` names its source, a key of
:data:`kubelet_winnet._kubelet.startup.GATE_SOURCES`; a lock lasts as long as the gate
does (:data:`~kubelet_winnet._kubelet.startup.GATES`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubelet_winnet._kubelet.startup import GATE_SOURCES, GATES

__all__ = ["LOCKS", "LOCK_TABLE", "GateLock", "gate_lock"]


# NAME  SINCE  VALUE  SOURCE: from 1.SINCE on the gate is locked to VALUE, its default, and
# component-base refuses the other value at start-up (featuregate ``SetFromMap``: "cannot
# set feature gate NAME to VALUE, feature is locked to DEFAULT"). K36: the "Locked" column
# of feature_list.md (the first release whose versioned spec says ``LockToDefault: true``);
# S37: the 1.37 versioned specs; C37a: a deprecated gate (default off, feature_list.md)
# the 1.37 notes lock; C38a: the gates the 1.38 notes lock (its "will be ignored" is the
# note's wording: component-base refuses the other value). A lock ends when the gate does
# (GATE_TABLE). Locks of gates removed before the 1.36 list are not in these sources and
# not modelled.
LOCK_TABLE = """
AggregatedDiscoveryRemoveBetaType            35 true K36
AllowOverwriteTerminationGracePeriodSeconds  35 true K36
AnonymousAuthConfigurableEndpoints           34 true K36
AnyVolumeDataSource                          33 true K36
APIServerTracing                             34 true K36
AuthorizeNodeWithSelectors                   34 true K36
AuthorizeWithSelectors                       34 true K36
BtreeWatchCache                              33 true K36
ConsistentListFromCache                      34 true K36
CPUManagerPolicyOptions                      33 true K36
CRDValidationRatcheting                      33 true K36
CSIServiceAccountTokenSecrets                36 true K36
CustomResourceFieldSelectors                 32 true K36
DeclarativeValidationTakeover                37 false C37a
DisableAllocatorDualWrite                    35 true K36
DRAAdminAccess                               36 true S37
DRADeviceTaintRules                          38 true C38a
DRADeviceTaints                              38 true C38a
DRAExtendedResource                          37 true S37
DRAPrioritizedList                           37 true S37
DRAResourceClaimDeviceStatus                 37 true S37
DynamicResourceAllocation                    35 true K36
EnvFiles                                     38 true C38a
ExecProbeTimeout                             35 true K36
HonorPVReclaimPolicy                         33 true K36
ImageMaximumGCAge                            35 true K36
InPlacePodVerticalScaling                    35 true K36
JobBackoffLimitPerIndex                      33 true K36
JobManagedBy                                 35 true K36
JobPodReplacementPolicy                      34 true K36
JobSuccessPolicy                             33 true K36
KubeletCgroupDriverFromCRI                   34 true K36
KubeletFineGrainedAuthz                      36 true K36
KubeletTracing                               34 true K36
LogarithmicScaleDown                         31 true K36
MatchLabelKeysInPodAffinity                  33 true K36
MultiCIDRServiceAllocator                    34 true K36
NFTablesProxyMode                            33 true K36
NodeDeclaredFeatures                         37 true S37
NodeInclusionPolicyInPodTopologySpread       33 true K36
NodeSwap                                     34 true K36
OrderedNamespaceDeletion                     34 true K36
PodLifecycleSleepAction                      34 true K36
PodLifecycleSleepActionAllowZero             34 true K36
PodObservedGenerationTracking                35 true K36
PodSchedulingReadiness                       30 true K36
PreferSameTrafficDistribution                35 true K36
RecoverVolumeExpansionFailure                34 true K36
RecursiveReadOnlyMounts                      33 true K36
RelaxedDNSSearchValidation                   34 true K36
RelaxedEnvironmentVariableValidation         34 true K36
ResilientWatchCacheInitialization            34 true K36
RetryGenerateName                            32 true K36
SchedulerQueueingHints                       34 true K36
SeparateTaintEvictionController              34 true K36
ServiceAccountTokenJTI                       32 true K36
ServiceAccountTokenNodeBinding               33 true K36
ServiceAccountTokenNodeBindingValidation     32 true K36
ServiceAccountTokenPodNodeInfo               32 true K36
SidecarContainers                            33 true K36
StreamingCollectionEncodingToJSON            34 true K36
StreamingCollectionEncodingToProtobuf        34 true K36
StrictIPCIDRValidation                       38 true C38a
StructuredAuthenticationConfiguration        34 true K36
SupplementalGroupsPolicy                     35 true K36
SystemdWatchdog                              35 true K36
TopologyManagerPolicyOptions                 32 true K36
VolumeAttributesClass                        36 true K36
WinDSR                                       34 true K36
WinOverlay                                   34 true K36
"""


@dataclass(frozen=True)
class GateLock:
    """A gate locked to ``value`` (its default) from ``1.since`` for as long as it exists."""

    name: str
    since: int
    value: bool
    source: str  # a key of GATE_SOURCES


def _locks() -> dict[str, GateLock]:
    locks: dict[str, GateLock] = {}
    for row in LOCK_TABLE.split("\n"):
        if not row:
            continue
        name, since, value, source = row.split()
        if (name in locks or name not in GATES or source not in GATE_SOURCES
                or value not in ("true", "false")):  # pragma: no cover - a table typo
            raise RuntimeError(f"LOCK_TABLE row {row!r}")
        locks[name] = GateLock(name, int(since), value == "true", source)
    return locks


LOCKS: Mapping[str, GateLock] = _locks()


def gate_lock(name: str, minor: int) -> GateLock | None:
    """The lock of gate ``name`` in release 1.``minor``: None when that release does not
    lock it (or does not have it: that is :func:`gate_minors`)."""
    lock = LOCKS.get(name)
    span = GATES.get(name)
    if lock is None or span is None or minor < lock.since or not span.accepts(minor):
        return None
    return lock
