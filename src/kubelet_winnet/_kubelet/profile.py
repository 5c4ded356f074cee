"""The kubelet profile: what one (version, gates) pair sends, as :class:`GateResolution`
(``WindowsHostNetwork`` and the versioned gates resolved as that kubelet would), and the one
profile cache (:func:`kubelet_profile`).

The releases are in :mod:`~kubelet_winnet._kubelet.timeline`, the version grammar in
:mod:`~kubelet_winnet._kubelet.kubelet_version`, the flag in
:mod:`~kubelet_winnet._kubelet.feature_gates` and the request builders' version facts in
:mod:`~kubelet_winnet._kubelet.request_facts`; the names other packages import from here
are re-exported.

Sources: kubernetes/kubernetes ``pkg/features/kube_features.go`` of each release (gate
stage and default); gate refusals follow ``k8s.io/component-base/featuregate/feature_gate.go``
(``Set``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelet_winnet._kubelet.feature_gates import (
    ALL_ALPHA,
    ALL_BETA,
    CONTAINER_STOP_SIGNALS,
    IN_PLACE_POD_VERTICAL_SCALING,
    MODELLED_GATES,
    WINDOWS_HOST_NETWORK,
    FeatureGates,
    parse_feature_gates,
)
from kubelet_winnet._kubelet.kubelet_version import KubeletVersion, parse_kubelet_version
from kubelet_winnet._kubelet.request_facts import REQUEST_FACTS, RequestFact
from kubelet_winnet._kubelet.timeline import (
    _BY_MINOR,
    DEFAULT_KUBELET_VERSION,
    KEP_WITHDRAWN_MINOR,
    MAX_MINOR,
    MIN_MINOR,
    STATUS_AS_OF,
    TIMELINE,
    GateStage,
    Release,
    release,
)
from kubelet_winnet.errors import FeatureGateError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput as FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput as KubeletVersionInput

# Defined here, and re-exported for the modules that import them from here.
__all__ = [
    "DEFAULT_KUBELET_VERSION",
    "IN_PLACE_RESIZE_STAGES",
    "KEP_WITHDRAWN_MINOR",
    "MAX_MINOR",
    "MIN_MINOR",
    "STATUS_AS_OF",
    "STOP_SIGNALS_STAGES",
    "TIMELINE",
    "FeatureGates",
    "GateResolution",
    "KubeletVersion",
    "kubelet_profile",
    "parse_kubelet_version",
    "resolve_gates",
]

# InPlacePodVerticalScaling per release, from the versioned table of
# pkg/features/kube_features.go (the stored 1.37 version): (first minor, stage, default,
# locked to its default). The gate does not exist before 1.27.
IN_PLACE_RESIZE_STAGES: tuple[tuple[int, str, bool, bool], ...] = (
    (27, "alpha", False, False),
    (33, "beta", True, False),
    (35, "GA", True, True),
)
# ContainerStopSignals (KEP-4960), the same way: alpha and off from 1.33, the only row of
# the versioned tables of 1.33 (kube_features.go b0b89d3b) and 1.35 (the stored table with
# ContainerRestartRules beta), and of the kubernetes/website gate page (584eca24); 1.36-1.38
# are taken as the same (no newer table is stored).
STOP_SIGNALS_STAGES: tuple[tuple[int, str, bool, bool], ...] = ((33, "alpha", False, False),)


@dataclass(frozen=True)
class GateResolution:
    """``WindowsHostNetwork`` as one kubelet sees it: the kubelet profile."""

    version: KubeletVersion
    """The kubelet release."""
    stage: GateStage
    """The gate's stage in that release (alpha, beta, deprecated, removed, ...)."""
    enabled: bool | None
    """The gate's value (its default, or as set); ``None`` when the gate does not exist."""
    explicitly_set: bool
    """Whether ``--feature-gates`` set it."""
    sets_namespace_options: bool
    """What matters for the sandbox config: whether the kubelet sets
    ``namespace_options`` for a ``hostNetwork`` pod."""
    not_modelled: tuple[str, ...]
    """Gates of the flag the library does not model (assumed not to matter)."""
    log_lines: tuple[str, ...]
    """What the kubelet logs while parsing the flag."""
    set_by: str = ""
    """The ``--feature-gates`` item that decided the gate's value (``WindowsHostNetwork=false``,
    ``AllAlpha=false``), or empty when it has its release's default."""
    in_place_resize: bool = False
    """Whether ``InPlacePodVerticalScaling`` is on (default or as set); ``False`` where the
    gate does not exist (before 1.27)."""
    stop_signals: bool = False
    """Whether ``ContainerStopSignals`` is on (default or as set): the kubelet then sends a
    container's ``lifecycle.stopSignal`` as ``stop_signal``; ``False`` before 1.33."""

    @property
    def release(self) -> Release:
        return _BY_MINOR[self.version.minor]

    @property
    def request_facts(self) -> tuple[RequestFact, ...]:
        """The request builders' version facts (``REQUEST_FACTS``) that hold for this kubelet."""
        version = self.version
        return tuple(fact for fact in REQUEST_FACTS if fact.holds(version.minor, version.patch))

    @property
    def host_network_outcome(self) -> str:
        """What becomes of ``hostNetwork: true`` on a pod that is not HostProcess, as the
        rest of a sentence starting "hostNetwork: true" (translate's note, explain's
        finding): either the kubelet sends NODE and the runtime ignores it, or the kubelet
        does not send it (kuberuntime_sandbox.go, generatePodSandboxWindowsConfig;
        containerd internal/cri/server/helpers.go reads host_process alone)."""
        if self.sets_namespace_options:
            return (
                "will not take effect: the kubelet sends namespace_options.network = NODE "
                "but no released containerd acts on it"
            )
        if self.release.reads_gate:
            why = f"while {WINDOWS_HOST_NETWORK} is off"
            why += f" ({self.set_by})" if self.set_by else " (by default)"
        else:
            why = f"(no kubelet 1.{KEP_WITHDRAWN_MINOR} or later does)"
        return (
            f"will not reach the runtime: kubelet {self.version} does not send "
            f"namespace_options.network = NODE {why}"
        )


def _near(name: str, target: str, most: int = 2) -> bool:
    """Case-insensitive edit distance of at most ``most`` (bounded: short names only)."""
    a, b = name.lower(), target.lower()
    if abs(len(a) - len(b)) > most:
        return False
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (char != other)))
        previous = current
    return previous[-1] <= most


def resolve_gates(version: KubeletVersion, gates: FeatureGates) -> GateResolution:
    """Apply ``gates`` as kubelet ``version`` would; raise its ``FeatureGateError`` texts."""
    row = release(version.minor)
    # Every kubelet refuses a gate it does not know (component-base featuregate.Set:
    # "unrecognized feature gate"). The library cannot list every gate of every release,
    # but a near miss of WindowsHostNetwork ("windowshostnetwork", "WindowsHostNetworks")
    # is no gate in any of them: refuse it rather than silently use the default.
    for name in gates:
        if name != WINDOWS_HOST_NETWORK and _near(name, WINDOWS_HOST_NETWORK):
            raise FeatureGateError(f"unrecognized feature gate: {name}", name)
    explicit = gates.get(WINDOWS_HOST_NETWORK)
    log_lines: tuple[str, ...] = ()
    set_by = "" if explicit is None else f"{WINDOWS_HOST_NETWORK}={str(explicit).lower()}"
    if row.stage is GateStage.REMOVED:
        if explicit is not None:
            raise FeatureGateError(
                f"unrecognized feature gate: {WINDOWS_HOST_NETWORK}", WINDOWS_HOST_NETWORK
            )
        enabled: bool | None = None
    elif explicit is not None:
        enabled = explicit
        if row.stage is GateStage.DEPRECATED:
            log_lines = (
                f"Setting deprecated feature gate {WINDOWS_HOST_NETWORK}="
                f"{str(explicit).lower()}. It will be removed in a future release.",
            )
    elif row.stage is GateStage.ALPHA and ALL_ALPHA in gates:
        # AllAlpha switches every alpha gate not set by name.
        enabled = gates[ALL_ALPHA]
        set_by = f"{ALL_ALPHA}={str(enabled).lower()}"
    else:
        enabled = row.default
    return GateResolution(
        in_place_resize=_versioned_gate(
            IN_PLACE_POD_VERTICAL_SCALING, IN_PLACE_RESIZE_STAGES, version.minor, gates
        ),
        stop_signals=_versioned_gate(
            CONTAINER_STOP_SIGNALS, STOP_SIGNALS_STAGES, version.minor, gates
        ),
        version=version,
        stage=row.stage,
        enabled=enabled,
        explicitly_set=explicit is not None,
        sets_namespace_options=row.reads_gate and bool(enabled),
        not_modelled=tuple(name for name in gates if name not in MODELLED_GATES),
        log_lines=log_lines,
        set_by=set_by,
    )


def _versioned_gate(
    name: str, stages: tuple[tuple[int, str, bool, bool], ...], minor: int,
    gates: FeatureGates,
) -> bool:
    """Gate ``name`` as kubelet ``1.<minor>`` resolves it from its versioned ``stages``
    (first minor, stage, default, locked), with component-base featuregate ``Set``'s
    refusals."""
    explicit = gates.get(name)
    stage = None
    for first, *rest in stages:
        if minor >= first:
            stage = rest
    if stage is None:
        if explicit is not None:
            raise FeatureGateError(f"unrecognized feature gate: {name}", name)
        return False
    kind, default, locked = stage
    if explicit is not None:
        if locked and explicit != default:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(explicit).lower()}, feature is "
                f"locked to {str(default).lower()}",
                name,
            )
        return explicit
    special = {"alpha": ALL_ALPHA, "beta": ALL_BETA}.get(str(kind))
    if special is not None and special in gates:  # AllAlpha / AllBeta, not set by name
        return gates[special]
    return bool(default)


# The one cache: a node agent asks with the same version and flag string on every pod
# event. Keyed only by exact str / KubeletVersion / FeatureGates / None arguments, whose
# hash and equality cannot raise or lie; bounded because the keys are caller strings.
_PROFILES: dict[tuple[object, object], GateResolution] = {}
_PROFILES_MAX = 256
_CACHEABLE = frozenset({str, KubeletVersion, FeatureGates, type(None)})


def kubelet_profile(
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> GateResolution:
    """``WindowsHostNetwork`` as kubelet ``kubelet_version`` started with ``feature_gates``
    sees it. Raises ``UnsupportedVersionError``, ``FeatureGateError`` or
    ``InvalidArgumentError``."""
    key = (kubelet_version, feature_gates)
    cacheable = type(kubelet_version) in _CACHEABLE and type(feature_gates) in _CACHEABLE
    if cacheable:
        found = _PROFILES.get(key)
        if found is not None:
            return found
    profile = resolve_gates(
        parse_kubelet_version(kubelet_version), parse_feature_gates(feature_gates)
    )
    if cacheable:
        if len(_PROFILES) >= _PROFILES_MAX:
            _PROFILES.clear()
        _PROFILES[key] = profile
    return profile
