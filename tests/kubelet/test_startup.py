"""What the kubelet and kube-proxy accept at start-up (``_kubelet/startup.py``).

Expected values come from the sources the table cites: kubernetes/kubernetes' feature
lists and the kubernetes/website gate pages (stages, ``removed: true``), the profile's
TIMELINE for WindowsHostNetwork, and the changelogs for the removed flags.
"""

from __future__ import annotations

import pytest

from kubelet_winnet._kubelet.startup import (
    GATE_SOURCES,
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


@pytest.mark.parametrize("name", [
    "", "a b", "WindowsHostNetwrok", "windowshostnetwork",
    # kube_features.go's Go identifiers, not the gate strings the kubelet matches
    "RuntimeClassInImageCriAPI", "CPUCFSQuotaPeriod",
])
def test_a_name_no_release_has_is_in_no_list(name: str) -> None:
    assert gate_minors(name) is None


def test_every_row_names_a_source_and_a_range_in_order() -> None:
    assert len(GATES) > 300  # the 1.36 list alone has over 200 gates
    for span in GATES.values():
        assert span.source in GATE_SOURCES, span
        assert span.first >= 1 and (span.last is None or span.first <= span.last), span
        assert span.name and not any(c.isspace() for c in span.name), span
    assert LISTED_THROUGH <= MAX_MINOR


@pytest.mark.parametrize(("flag", "component", "removed_in"), [
    ("logtostderr", "kubelet", 26), ("logtostderr", "kube-proxy", 26),
    ("log-dir", "kube-proxy", 26), ("stderrthreshold", "kubelet", 26),
    ("network-plugin", "kubelet", 24), ("image-pull-progress-deadline", "kubelet", 24),
    ("container-runtime", "kubelet", 27),
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
])
def test_flags_that_stay_are_not_reported_removed(flag: str, component: str) -> None:
    assert removed_flag(flag, component) is None  # type: ignore[arg-type]
    assert len(REMOVED_FLAGS) == 20
