"""What the kubelet and kube-proxy accept at start-up (``_kubelet/startup.py``).

Expected values come from the sources the table cites: kubernetes/kubernetes' feature
lists and changelogs, the kubernetes/website gate pages (stages, ``removed: true``),
gardener's per-release gate lists, the profile's TIMELINE for WindowsHostNetwork, and the
changelogs for the removed flags.
"""

from __future__ import annotations

import pytest

from kubelet_winnet._kubelet.gate_locks import LOCKS, gate_lock
from kubelet_winnet._kubelet.startup import (
    GATE_SOURCES,
    GATE_TABLE,
    GATES,
    LISTED_THROUGH,
    REMOVED_FLAGS,
    gate_minors,
    removed_flag,
)
from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR

EVERY = tuple(range(MIN_MINOR, MAX_MINOR + 1))


@pytest.mark.parametrize(("gate", "minors"), [
    ("HyperVContainer", ()),  # deprecated 1.20, removed in 1.21 (feature-gates-removed.md)
    ("IPv6DualStack", ()),  # GA 1.23-1.24, then removed
    ("WindowsHostProcessContainers", (26, 27)),  # stable 1.26-1.27, removed: true
    ("CSIMigrationAzureFile", (26, 27, 28, 29)),  # stable to 1.29, removed: true
    ("ProxyTerminatingEndpoints", (26, 27, 28, 29)),
    ("KubeProxyDrainingTerminatingNodes", (28, 29, 30, 31, 32)),  # alpha 1.28, gone after 1.32
    ("WindowsHostNetwork", tuple(range(26, 38))),  # TIMELINE: removed in 1.38
    ("WinDSR", EVERY), ("WinOverlay", EVERY),  # alpha 1.14, still in 1.36's list
    ("ContextualLogging", EVERY), ("LoggingBetaOptions", EVERY),  # component-base's logging
    ("AllAlpha", EVERY), ("AllBeta", EVERY),  # featuregate's own names
    ("WindowsGracefulNodeShutdown", tuple(range(32, MAX_MINOR + 1))),  # alpha 1.32
    ("RuntimeClassInImageCriApi", tuple(range(29, MAX_MINOR + 1))),  # the gate's string
    ("CustomCPUCFSQuotaPeriod", EVERY),
])
def test_the_releases_that_accept_a_gate_are_those_its_sources_give(
    gate: str, minors: tuple[int, ...]
) -> None:
    assert gate_minors(gate) == minors


def upto(first: int, last: int = MAX_MINOR) -> tuple[int, ...]:
    return tuple(range(max(first, MIN_MINOR), min(last, MAX_MINOR) + 1))


@pytest.mark.parametrize(("gate", "minors"), [
    # RemoveSelfLink.md: stable 1.24 to 1.29, removed: true (a generic API server gate that
    # pkg/features does not relist); gardener: RemovedInVersion 1.30
    ("RemoveSelfLink", upto(MIN_MINOR, 29)),
    # gardener: RemovedInVersion 1.28; the 1.27 tree says "remove in 1.28"
    ("KubeletCredentialProviders", upto(MIN_MINOR, 27)),
    # gardener: AddedInVersion 1.28 (the 1.27 tree has UserNamespacesStatelessPodsSupport)
    ("UserNamespacesSupport", upto(28)),
])
def test_a_gate_removed_or_renamed_before_132_has_the_releases_of_its_trees(
    gate: str, minors: tuple[int, ...]
) -> None:
    assert gate_minors(gate) == minors


@pytest.mark.parametrize(("gate", "minors"), [
    ("CPUManager", upto(MIN_MINOR, 32)),  # CPUManager.md: stable to 1.32, removed: true
    ("ComponentSLIs", upto(MIN_MINOR, 34)),  # ComponentSLIs.md: stable to 1.34, removed
    ("PodDisruptionConditions", upto(MIN_MINOR, 33)),  # PodDisruptionConditions.md
    ("InTreePluginPortworxUnregister", upto(MIN_MINOR, 35)),  # its page: alpha to 1.35
    ("MemoryManager", upto(MIN_MINOR, 35)),  # gardener: RemovedInVersion 1.36
    ("HonorPVReclaimPolicy", upto(MIN_MINOR, 35)),  # gardener: RemovedInVersion 1.36
    ("LegacySidecarContainers", (33,)),  # gardener: added 1.33, removed 1.34
    ("StrictCostEnforcementForVAP", upto(30, 34)),  # gardener: 1.30, removed 1.35
])
def test_a_gate_removed_between_132_and_136_is_refused_after_its_last_release(
    gate: str, minors: tuple[int, ...]
) -> None:
    assert gate_minors(gate) == minors


@pytest.mark.parametrize(("gate", "minors"), [
    ("DRAListTypeAttributes", upto(36)),  # DRAListTypeAttributes.md: alpha from 1.36
    ("TopologyAwareWorkloadScheduling", upto(36)),  # its page: alpha from 1.36
    ("StaleControllerConsistencyJob", upto(36)),  # gardener: AddedInVersion 1.36
    ("KubeProxyNFTablesLocalhostNodePorts", upto(37)),  # its page: alpha from 1.37
    ("CompositePodGroup", upto(37)),  # CompositePodGroup.md: alpha from 1.37
    ("KubeProxyIPVS", upto(37)),  # KubeProxyIPVS.md: deprecated from 1.37 (new gate)
    ("ConsistentListFromCacheSkipTimeoutFallback", upto(37)),  # CHANGELOG-1.37 alpha.1
    ("ManagedFieldsOptOut", upto(38)),  # CHANGELOG-1.38: alpha, added in 1.38
    ("CertificateSigningRequestMLDSA", upto(38)),  # CHANGELOG-1.38
])
def test_a_gate_added_in_136_to_138_is_refused_before_its_first_release(
    gate: str, minors: tuple[int, ...]
) -> None:
    assert gate_minors(gate) == minors


@pytest.mark.parametrize(("gate", "minors"), [
    # CHANGELOG-1.37 (v1.37.0-alpha.1) removed these: 1.36 is the last release with them
    ("AnyVolumeDataSource", upto(MIN_MINOR, 36)),
    ("SidecarContainers", upto(28, 36)),
    ("RelaxedDNSSearchValidation", upto(32, 36)),
    # CHANGELOG-1.38 (v1.38.0-alpha.1 and alpha.2) removed these: the last is 1.37
    ("MatchLabelKeysInPodAffinity", upto(29, 37)),
    ("KubeletTracing", upto(MIN_MINOR, 37)),
    ("SeparateTaintEvictionController", upto(29, 37)),
])
def test_a_gate_removed_in_137_or_138_is_refused_from_that_release(
    gate: str, minors: tuple[int, ...]
) -> None:
    assert gate_minors(gate) == minors


@pytest.mark.parametrize("source", ["C37", "C38", "W37", "G"])
def test_each_newer_source_only_dates_the_releases_it_covers(source: str) -> None:
    # A changelog dates only its own release; the v1.37 page only gates 1.37 added; gardener's
    # lists end at 1.36, so a removal it records is at most 1.35's last release.
    spans = [span for span in GATES.values() if span.source == source]
    assert spans, source
    for span in spans:
        if source in ("C37", "C38"):
            minor = int(source[1:])
            assert span.first == minor or span.last == minor - 1, span
        elif source == "W37":
            assert (span.first, span.last) == (37, None), span
        else:
            assert span.first <= LISTED_THROUGH and (span.last is None or span.last < 36), span


def test_every_row_names_a_source_and_a_range_in_order() -> None:
    rows = [row.split() for row in GATE_TABLE.split("\n") if row]
    assert all(len(row) == 4 for row in rows), [row for row in rows if len(row) != 4]
    names = [row[0] for row in rows]
    assert len({name.lower() for name in names}) == len(names)  # no name twice in any case
    assert len(GATES) == len(rows) > 400
    for span in GATES.values():
        assert span.source in GATE_SOURCES, span
        assert 1 <= span.first <= MAX_MINOR, span
        assert span.last is None or span.first <= span.last < MAX_MINOR, span
        assert span.name and not any(c.isspace() for c in span.name), span
    assert LISTED_THROUGH <= MAX_MINOR
    # every supported release has its gates: a shifted column would empty some of them
    assert all(sum(span.accepts(m) for span in GATES.values()) > 100
               for m in range(MIN_MINOR, MAX_MINOR + 1))


@pytest.mark.parametrize("name", [
    "", "a b", "WindowsHostNetwrok", "windowshostnetwork",
    # kube_features.go's Go identifiers, not the gate strings the kubelet matches
    "RuntimeClassInImageCriAPI", "CPUCFSQuotaPeriod",
])
def test_a_name_no_release_has_is_in_no_list(name: str) -> None:
    assert gate_minors(name) is None


@pytest.mark.parametrize(("flag", "component", "removed_in"), [
    ("logtostderr", "kubelet", 26), ("logtostderr", "kube-proxy", 26),
    ("log-dir", "kube-proxy", 26), ("stderrthreshold", "kubelet", 26),
    ("network-plugin", "kubelet", 24), ("image-pull-progress-deadline", "kubelet", 24),
    ("container-runtime", "kubelet", 27),
    # CHANGELOG-1.35.md, v1.35.0 Urgent Upgrade Notes: kubernetes PR #133779
    ("pod-infra-container-image", "kubelet", 35),
])
def test_removed_flags_are_known_per_component(flag: str, component: str,
                                               removed_in: int) -> None:
    found = removed_flag(flag, component)  # type: ignore[arg-type]
    assert found is not None and found.removed_in == removed_in


@pytest.mark.parametrize(("flag", "component"), [
    ("network-plugin", "kube-proxy"),  # a dockershim flag: the kubelet's alone
    ("container-runtime-endpoint", "kubelet"),  # kept when --container-runtime went
    ("v", "kubelet"), ("vmodule", "kube-proxy"),  # KEP-2845 keeps -v and --vmodule
    ("feature-gates", "kubelet"),
    ("pod-infra-container-image", "kube-proxy"),  # PR #133779 removed the kubelet's flag
])
def test_flags_that_stay_are_not_reported_removed(flag: str, component: str) -> None:
    assert removed_flag(flag, component) is None  # type: ignore[arg-type]
    assert len(REMOVED_FLAGS) == 21


@pytest.mark.parametrize(("gate", "unlocked", "locked"), [
    # feature_list.md's Locked column: ":closed_lock_with_key: 1.34+" (GA in 1.34)
    ("WinDSR", 33, 34), ("WinOverlay", 33, 34),
    ("NodeSwap", 33, 34), ("KubeletCgroupDriverFromCRI", 33, 34),
    ("PodSchedulingReadiness", 29, 30), ("LogarithmicScaleDown", 30, 31),
    ("KubeletFineGrainedAuthz", 35, 36), ("VolumeAttributesClass", 35, 36),
    # the 1.37 versioned specs: GA with LockToDefault: true in 1.37
    ("DRAExtendedResource", 36, 37), ("DRAPrioritizedList", 36, 37),
    ("NodeDeclaredFeatures", 36, 37), ("DRAResourceClaimDeviceStatus", 36, 37),
])
def test_a_gate_is_locked_from_the_release_its_versioned_spec_says(
    gate: str, unlocked: int, locked: int
) -> None:
    assert gate_lock(gate, unlocked) is None
    lock = gate_lock(gate, locked)
    assert lock is not None and lock.value is True and lock.since == locked


@pytest.mark.parametrize(("gate", "last_locked"), [
    ("SidecarContainers", 36),  # locked 1.33; CHANGELOG-1.37 removed it
    ("DynamicResourceAllocation", 37),  # locked 1.35; CHANGELOG-1.38 removed it
    ("PodSchedulingReadiness", 37),  # locked 1.30; CHANGELOG-1.38 removed it
])
def test_a_lock_ends_with_the_gate(gate: str, last_locked: int) -> None:
    assert gate_lock(gate, last_locked) is not None
    assert gate_lock(gate, last_locked + 1) is None


@pytest.mark.parametrize("gate", [
    # the 1.37 specs: GA in 1.37 with LockToDefault: false; CHANGELOG-1.38 (alpha.1,
    # PR #140256): "now locked to true (GA) in 1.38"
    "DRADeviceTaints", "DRADeviceTaintRules",
    # feature_list.md: beta, not locked; CHANGELOG-1.38: EnvFiles "now locked to enabled"
    # (PR #139115), KEP-4858's rules "now always in effect" (PR #141979)
    "EnvFiles", "StrictIPCIDRValidation",
])
def test_a_gate_the_138_notes_lock_is_locked_from_138(gate: str) -> None:
    assert gate_lock(gate, 37) is None
    lock = gate_lock(gate, 38)
    assert lock is not None and (lock.since, lock.value, lock.source) == (38, True, "C38a")


@pytest.mark.parametrize("gate", ["WindowsHostNetwork", "WindowsGracefulNodeShutdown",
                                  "HPAScaleToZero"])
def test_a_gate_no_source_locks_is_not_locked(gate: str) -> None:
    assert all(gate_lock(gate, m) is None for m in EVERY)


def test_a_deprecated_gate_the_137_notes_lock_is_locked_to_false() -> None:
    # CHANGELOG-1.37.md (v1.37.0-alpha.1, PR #139212): DeclarativeValidationTakeover "is now
    # locked to its default value"; feature_list.md: beta from 1.33, never enabled
    assert gate_lock("DeclarativeValidationTakeover", 36) is None
    lock = gate_lock("DeclarativeValidationTakeover", 37)
    assert lock is not None and (lock.since, lock.value) == (37, False)


def test_every_lock_is_of_a_gate_its_release_has() -> None:
    for lock in LOCKS.values():
        assert lock.source in GATE_SOURCES, lock
        assert GATES[lock.name].accepts(lock.since), lock


@pytest.mark.parametrize(("gate", "first", "source"), [
    # kubernetes/website feature-gates/CloudNodeAdditionalLabelsReconciliation.md:
    # alpha, fromVersion "1.38"
    ("CloudNodeAdditionalLabelsReconciliation", 38, "W"),
    # the 1.37 versioned specs (kube-scheduler's kube_features.go): first row 1.37
    ("DRAFractionalCapacityRange", 37, "S37"), ("InterPodAffinityHostnameFastPath", 37, "S37"),
    ("SchedulerPreQueueingHints", 37, "S37"),
    # kubernetes/website feature-gates pages: alpha, fromVersion "1.37" / "1.38"
    ("ConditionalAuthorization", 37, "W"), ("DRASharedConsumableCapacity", 37, "W"),
    ("DownwardAPIAssignedResources", 37, "W"),
    ("ContainerUlimits", 38, "W"), ("PodDefaultNetwork", 38, "W"),
    ("CSIControllerGetNodeInfo", 38, "W"), ("MutableContainerProbes", 38, "W"),
    ("MemoryManagerDriftTolerance", 38, "W"), ("CSIGlobalMountReconstruction", 38, "W"),
    ("LeaderElectionRecovery", 38, "W"),
])
def test_a_gate_new_in_137_or_138_is_accepted_from_its_first_release(
    gate: str, first: int, source: str
) -> None:
    assert gate_minors(gate) == upto(first)
    assert GATES[gate].source == source


@pytest.mark.parametrize("gate", ["InPlacePodVerticalScaling", "ContainerStopSignals"])
def test_the_profiles_versioned_gates_agree_with_the_start_up_table(gate: str) -> None:
    """The profile models these two gates' stages for translate and explain
    (kube_features.go's versioned specs); `node` reads the same facts from this table, so
    the two must give each release the same existence, default lock and locked value."""
    from kubelet_winnet._kubelet.profile import IN_PLACE_RESIZE_STAGES, STOP_SIGNALS_STAGES

    stages = (IN_PLACE_RESIZE_STAGES if gate == "InPlacePodVerticalScaling"
              else STOP_SIGNALS_STAGES)
    assert GATES[gate].first == stages[0][0]
    for minor in EVERY:
        current = [s for s in stages if s[0] <= minor]
        lock = gate_lock(gate, minor)
        if not current:
            assert lock is None and not GATES[gate].accepts(minor)
            continue
        _, _, default, locked = current[-1]
        assert (lock is not None) == locked, minor
        assert lock is None or lock.value == default, minor
