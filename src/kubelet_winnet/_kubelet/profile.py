"""The kubelet profile: which kubelet versions exist here, what ``WindowsHostNetwork`` is
in each, how ``--feature-gates`` parses, and what one (version, gates) pair sends.

Everything that depends on the kubelet version is derived from :data:`TIMELINE`, one row
per supported minor: the version range, the default version, the window of step 2 in
``rules.STEPS``, the rows of ``docs/decision-table.md`` and the texts of ``explain``.
Adding kubelet 1.39 is adding one row (see docs/architecture.md).

Sources: kubernetes/kubernetes ``pkg/features/kube_features.go`` of each release (gate
stage and default) and ``pkg/kubelet/kuberuntime/kuberuntime_sandbox_windows.go`` (whether
the sandbox code reads the gate); flag parsing follows
``k8s.io/component-base/featuregate/feature_gate.go`` (``Set`` / ``SetFromMap``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from kubelet_winnet._describe import describe, type_name
from kubelet_winnet._kubelet import golang
from kubelet_winnet.errors import FeatureGateError, InvalidArgumentError, UnsupportedVersionError

if TYPE_CHECKING:
    from typing import TypeAlias

    # What the public functions take for a kubelet version and for feature gates; any
    # other value is still an InvalidArgumentError at run time.
    KubeletVersionInput: TypeAlias = "str | KubeletVersion"
    FeatureGatesInput: TypeAlias = "str | Mapping[str, bool] | None"

__all__ = [
    "CONTAINER_STOP_SIGNALS",
    "DEFAULT_KUBELET_VERSION",
    "IN_PLACE_POD_VERTICAL_SCALING",
    "IN_PLACE_RESIZE_STAGES",
    "KEP_WITHDRAWN_MINOR",
    "LAST_NAMESPACE_OPTIONS_MINOR",
    "MARSHAL_CHECKS_UTF8",
    "MAX_MINOR",
    "MIN_MINOR",
    "MODELLED_GATES",
    "REQUEST_FACTS",
    "RUNE_WISE_EXPANSION",
    "STATUS_AS_OF",
    "STOP_SIGNALS_STAGES",
    "TIMELINE",
    "WINDOWS_HOST_NETWORK",
    "Band",
    "ExpansionRule",
    "FeatureGates",
    "GateResolution",
    "GateStage",
    "KubeletVersion",
    "Release",
    "ReleaseStatus",
    "RequestFact",
    "bands",
    "expansion_rule",
    "kubelet_profile",
    "parse_feature_gates",
    "parse_kubelet_version",
    "release",
    "resolve_gates",
]

WINDOWS_HOST_NETWORK = "WindowsHostNetwork"
IN_PLACE_POD_VERTICAL_SCALING = "InPlacePodVerticalScaling"
CONTAINER_STOP_SIGNALS = "ContainerStopSignals"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
MODELLED_GATES = frozenset(
    {WINDOWS_HOST_NETWORK, IN_PLACE_POD_VERTICAL_SCALING, CONTAINER_STOP_SIGNALS, ALL_ALPHA,
     ALL_BETA}
)

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


# Where a minor stands on STATUS_AS_OF: out, or a release candidate (its .0 not yet out).
ReleaseStatus = Literal["released", "rc"]
STATUS_AS_OF = "2026-12-04"


class GateStage(enum.Enum):
    ALPHA = "alpha"
    DEPRECATED = "deprecated"
    REMOVED = "removed"


@dataclass(frozen=True)
class Release:
    """``WindowsHostNetwork`` in one kubelet minor release."""

    minor: int
    stage: GateStage
    default: bool | None  # None: the gate does not exist
    # The sandbox code sets namespace_options when the gate is enabled (KEP-3503 live).
    reads_gate: bool
    note: str
    status: ReleaseStatus  # as of STATUS_AS_OF
    date: str  # ISO date: released on ("released"), or due ("rc")

    @property
    def status_text(self) -> str:
        """``released 2025-12-17`` or ``a release candidate, due 2026-12-16``."""
        if self.status == "rc":
            return f"a release candidate, due {self.date}"
        return f"released {self.date}"


_ALPHA = "sets namespace_options when enabled"
_GONE = "accepted, but namespace_options is never set (PR #130250)"
_REMOVED = "removed (PR #142018): setting it is an error"
A, D, R = GateStage.ALPHA, GateStage.DEPRECATED, GateStage.REMOVED

# The timeline. 1.26-1.32 say {Default: true, PreRelease: Alpha} in their own
# kube_features.go (the versioned table of 1.33+ rewrote that history as false). Status
# and date as of STATUS_AS_OF: each minor's .0 release date (the kubernetes.io release
# announcements); 1.38 is a release candidate, its .0 due 2026-12-16 (the 1.38 release
# schedule, kubernetes/sig-release releases/release-1.38).
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
    Release(38, R, None, False, _REMOVED, "rc", "2026-12-16"),
)
del A, D, R

MIN_MINOR = TIMELINE[0].minor
MAX_MINOR = TIMELINE[-1].minor
_BY_MINOR = {row.minor: row for row in TIMELINE}
# The last release whose kubelet implements KEP-3503 is the default.
LAST_NAMESPACE_OPTIONS_MINOR = max(row.minor for row in TIMELINE if row.reads_gate)
KEP_WITHDRAWN_MINOR = LAST_NAMESPACE_OPTIONS_MINOR + 1
DEFAULT_KUBELET_VERSION = f"1.{LAST_NAMESPACE_OPTIONS_MINOR}"


@dataclass(frozen=True)
class RequestFact:
    """A change in what the request builders send, from kubelet ``1.<since>`` on.

    The builders ask ``FACT.holds(minor)`` (or ``FACT.holds(minor, patch)`` where a
    fix was backported), never compare versions themselves: a release added to
    :data:`TIMELINE` gets every fact with ``since`` at or below it, and a new change is
    one row here with its upstream source. ``backports`` holds (minor, first patch) for
    older release branches that got the change in a patch release.
    """

    name: str
    since: int
    change: str
    source: str
    backports: tuple[tuple[int, int], ...] = ()

    def holds(self, minor: int, patch: int | None = None) -> bool:
        """Whether kubelet ``1.<minor>.<patch>`` behaves the new way. Without a patch,
        the newest patch release of that minor, which has every backport."""
        if minor >= self.since:
            return True
        for backported_minor, first_patch in self.backports:
            if minor == backported_minor:
                return patch is None or patch >= first_patch
        return False


LABEL_DOTS_MESSAGE = RequestFact(
    "label-dots-message", 27,
    "a hostname or subdomain that is a valid DNS subdomain but not a label is refused with "
    "'must not contain dots' (before: the label regular-expression message)",
    "apimachinery pkg/util/validation/validation.go IsDNS1123Label, kubernetes commit "
    "276c7e86 (apimachinery cf894f11, first tagged in v0.27.0)",
)
LABEL_KEY_MESSAGES = RequestFact(
    "label-key-messages", 35,
    "a downward API label or annotation subscript is checked by content.IsLabelKey: 'a "
    "valid label key' for too many slashes, lengths in bytes (before: 'a qualified name', "
    "characters)",
    "apimachinery pkg/util/validation/validation.go (IsQualifiedName = content.IsLabelKey "
    "from v0.35.0, commit da7b67ed) and pkg/api/validate/content/errors.go",
)
CPU_MAXIMUM_HELPER = RequestFact(
    "cpu-maximum-helper", 27,
    "cpu_maximum is calculateCPUMaximum's 10 * MilliValue / cpuCount (1.26: inline, "
    "10000 * MilliValue / NumCPU / 1000)",
    "kuberuntime_container_windows.go, kubernetes#114231 (merged after 1.26 was cut)",
)
EXPANDED_DNS_LOCKED = RequestFact(
    "expanded-dns-locked", 28,
    "ExpandedDNSConfig is GA and locked on: the 32 / 2048 search limits whatever the gates",
    "pkg/features/kube_features.go (ExpandedDNSConfig GA in 1.28, KEP-2595)",
)
HOST_IPS_FIELD = RequestFact(
    "host-ips-field", 28,
    "status.hostIPs is a downward API field label (before: 'field label not supported')",
    "pkg/apis/core/v1/conversion.go ConvertDownwardAPIFieldLabel, KEP-2681",
)
HOST_IPS_VALUE = RequestFact(
    "host-ips-value", 29,
    "status.hostIPs holds the node IPs (PodHostIPs beta, on by default; 1.28: alpha, off, '')",
    "kubelet_pods.go podFieldSelectorRuntimeValue, pkg/features/kube_features.go, KEP-2681",
)
USER_SPECIFIED_IMAGE = RequestFact(
    "user-specified-image", 30,
    "ImageSpec.user_specified_image carries the container's image as written",
    "kuberuntime_container.go generateContainerConfig (taken as 1.30, not read at a tag)",
)
RECURSIVE_READ_ONLY = RequestFact(
    "recursive-read-only", 30,
    "volumeMounts[].recursiveReadOnly other than Disabled is acted on (here: refused)",
    "kubelet_pods.go makeMounts, KEP-3857 (alpha in 1.30)",
)
CONTAINER_HASH_OF_NAME_AND_IMAGE = RequestFact(
    "container-hash", 31,
    "io.kubernetes.container.hash is FNV-32a over the name and image only",
    "pkg/kubelet/container/helpers.go HashContainer, kubernetes#124220",
)
SLASH_IS_ABSOLUTE = RequestFact(
    "slash-is-absolute", 31,
    "a slash-rooted mountPath counts as absolute (utilfs.IsAbs; before: filepath.IsAbs)",
    "kubelet_pods.go makeMounts; the stored 1.30 TestMakeMountsWindows pins the old rule",
)
SUPPLEMENTAL_GROUPS_POLICY = RequestFact(
    "supplemental-groups-policy", 31,
    "supplemental_groups_policy is sent (Merge / Strict; another value is refused)",
    "kuberuntime_sandbox.go generatePodSandboxLinuxConfig, KEP-3619 (alpha in 1.31)",
)
HOSTS_MOUNT_FOR_HOST_NETWORK = RequestFact(
    "hosts-mount-host-network", 32,
    "a hostNetwork pod gets the hosts-file mount before its pod IPs are known",
    "kubelet_pods.go makeMounts, kubernetes#126460 (merged after 1.31's code freeze)",
)
# The release that dropped hashWithoutResources is bounded, not pinned: labels.go and
# labels_test.go at kubernetes f6b65043 (the 1.31 cycle, after #124220) still write it;
# master of the 1.33 cycle no longer does: kuberuntime_container.go at fbba6b47 (with the
# allocation manager and image-volume subPath, before KEP-4960's stop signal) reads no
# HashWithoutResources back, and the master snapshot in mmorel-35/kubernetes 0b0abd6c
# (singleProcessOOMKill of 1.32, TODO(#128675), no stop signal) writes none. The PR was
# not found, so 1.31 and 1.32 keep the f6b65043 behaviour (docs/requests.md#versions).
HASH_WITHOUT_RESOURCES_DROPPED = RequestFact(
    "hash-without-resources-dropped", 33,
    "io.kubernetes.container.hashWithoutResources is no longer sent (1.31-1.32: the "
    "name-and-image hash again while InPlacePodVerticalScaling is on)",
    "pkg/kubelet/kuberuntime/kuberuntime_container.go at kubernetes fbba6b47 (1.33 cycle: "
    "no HashWithoutResources) and labels.go in mmorel-35/kubernetes 0b0abd6c; labels.go "
    "and labels_test.go f6b65043 and the kubelet v1.32.10 packages still set it; "
    "labels_test.go 0411cc70 (1.38) has none",
)
POD_LEVEL_LIMITS_DEFAULT = RequestFact(
    "pod-level-limits-default", 34,
    "a container without a cpu or memory limit reads the pod's spec.resources.limits, not "
    "node allocatable, through resourceFieldRef (PodLevelResources beta, on by default)",
    "pkg/kubelet/kubelet_resources.go defaultPodLimitsForDownwardAPI, "
    "pkg/features/kube_features.go (PodLevelResources: 1.32 alpha, 1.34 beta on)",
)
EXACT_DOWNWARD_DIVISION = RequestFact(
    "exact-downward-division", 38,
    "resourceFieldRef divides exactly (ceil of quantity / divisor, 0 for a zero quantity, "
    "MaxInt64 past int64); before: int64(math.Ceil(float64(MilliValue or Value) / "
    "float64(divisor's)))",
    "pkg/api/v1/resource/helpers.go convertQuantityToString (the newest stored version; "
    "kubernetes#142265 and #142232 of September 2026, after 1.37's release)",
)
SATURATING_MILLI_VALUE = RequestFact(
    "saturating-milli-value", 38,
    "Quantity.MilliValue() saturates at the int64 range instead of wrapping",
    "apimachinery resource/quantity.go, kubernetes commit 0411cc70 (the first "
    "TestCalculateCPUMaximum table pinning 2^64 + 4000 milli to 1)",
)

# The kubelet's CRI client refuses to marshal a string field that is not UTF-8 from 1.34
# (cri-api left gogo protobuf between v1.34.0-alpha.1 and v1.34.0: issue #136323's
# bisect); before, gogo encoded whatever bytes the string held.
MARSHAL_CHECKS_UTF8 = RequestFact(
    "marshal-checks-utf8", 34,
    "CreateContainer fails to marshal a request holding a string that is not UTF-8 "
    "(before: the bytes were sent unchecked)",
    "staging/src/k8s.io/cri-api (gogo protobuf replaced before v1.34.0), kubernetes#136323",
)
# third_party/forked/golang/expansion read the character after a lone "$" as one byte
# (Go's string(input[0])) until kubernetes PR #136325 (January 2026, issue #136323) made it
# read a rune. Cherry-picks: #136490 shipped in 1.34.4, #136491 in 1.35.1 (CHANGELOG-1.34.md,
# CHANGELOG-1.35.md: "Fixes a 1.34 regression starting pods with environment variables with
# a value containing `$` followed by a multi-byte character"); 1.36.0 has it from
# v1.36.0-alpha.1.
RUNE_WISE_EXPANSION = RequestFact(
    "rune-wise-expansion", 36,
    '$(VAR) expansion reads the character after a lone "$" as a rune (before: one byte, '
    "written back as Go's string(byte))",
    "third_party/forked/golang/expansion/expand.go, kubernetes#136325; cherry-picks "
    "#136490 (1.34.4) and #136491 (1.35.1)",
    backports=((34, 4), (35, 1)),
)

#: Every version fact of the request builders, oldest first.
REQUEST_FACTS: tuple[RequestFact, ...] = (
    LABEL_DOTS_MESSAGE, CPU_MAXIMUM_HELPER, EXPANDED_DNS_LOCKED, HOST_IPS_FIELD, HOST_IPS_VALUE,
    USER_SPECIFIED_IMAGE, RECURSIVE_READ_ONLY, CONTAINER_HASH_OF_NAME_AND_IMAGE,
    SLASH_IS_ABSOLUTE, SUPPLEMENTAL_GROUPS_POLICY, HOSTS_MOUNT_FOR_HOST_NETWORK,
    HASH_WITHOUT_RESOURCES_DROPPED, MARSHAL_CHECKS_UTF8, POD_LEVEL_LIMITS_DEFAULT,
    LABEL_KEY_MESSAGES, RUNE_WISE_EXPANSION, EXACT_DOWNWARD_DIVISION, SATURATING_MILLI_VALUE,
)
for _fact in REQUEST_FACTS:  # a fact outside the supported range would never be tested
    if not MIN_MINOR < _fact.since <= MAX_MINOR:  # pragma: no cover - a guard
        raise RuntimeError(f"{_fact.name}: 1.{_fact.since} is outside TIMELINE")
del _fact


@dataclass(frozen=True)
class Band:
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
        shown = f"1.{minor}" if type(minor) is int and -(10**9) < minor < 10**9 else (
            f"1.<{describe(minor)}>"
        )
        raise UnsupportedVersionError(shown, _RANGE)
    return row


# --- versions ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class KubeletVersion:
    """A kubelet release, 1.MINOR[.PATCH] (Kubernetes 1.x only); ``str()`` gives it back,
    ordered by minor then patch. Build with
    [`parse_kubelet_version`][kubelet_winnet.parse_kubelet_version]."""

    minor: int
    """The minor version: 32 for 1.32."""
    patch: int | None = None
    """The patch release, or ``None`` when only 1.MINOR was given."""

    def __str__(self) -> str:
        return f"1.{self.minor}" + ("" if self.patch is None else f".{self.patch}")


# The grammar: v?MAJOR.MINOR[.PATCH][-pre][+build]. ASCII digits only ([0-9], not \d,
# which also matches fullwidth digits int() accepts), no leading zeros, nothing around
# it; pre-release and build identifiers as in SemVer (`kubelet --version` prints
# "v1.32.4-eks-1" or "v1.32.4+k3s1"); both are accepted and ignored.
_NUMBER = r"(0|[1-9][0-9]*)"
_IDENTS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_VERSION = re.compile(rf"v?{_NUMBER}\.{_NUMBER}(?:\.{_NUMBER})?(?:-{_IDENTS})?(?:\+{_IDENTS})?")
_MAX_VERSION_LENGTH = 128
_MAX_DIGITS = 9  # more cannot be a supported minor; int() of 5,000 digits raises


def _parse_version(text: str) -> KubeletVersion:
    if len(text) > _MAX_VERSION_LENGTH:
        raise UnsupportedVersionError(text, f"longer than {_MAX_VERSION_LENGTH} characters")
    match = _VERSION.fullmatch(text)
    if match is None:
        raise UnsupportedVersionError(
            text, 'not a version like "1.32" or "v1.32.4" (v?MAJOR.MINOR[.PATCH][-pre][+build])'
        )
    major, minor, patch = match[1], match[2], match[3]
    if major != "1" or len(minor) > _MAX_DIGITS or int(minor) not in _BY_MINOR:
        raise UnsupportedVersionError(text, _RANGE)
    if patch is not None and len(patch) > _MAX_DIGITS:
        raise UnsupportedVersionError(text, f"patch number longer than {_MAX_DIGITS} digits")
    return KubeletVersion(int(minor), None if patch is None else int(patch))


def parse_kubelet_version(value: KubeletVersionInput) -> KubeletVersion:
    """Parse ``"1.32"``, ``"v1.32.4"``, ``"1.32.0"`` or ``"v1.32.4-eks-1"``.

    Raises ``UnsupportedVersionError`` for any other string and for minors outside
    ``TIMELINE``, ``InvalidArgumentError`` for anything but a string or ``KubeletVersion``.
    """
    if type(value) is KubeletVersion:
        release(value.minor)
        patch = value.patch
        if patch is not None and (type(patch) is not int or not 0 <= patch < 10**_MAX_DIGITS):
            raise UnsupportedVersionError(
                f"1.{value.minor}.<{describe(patch)}>", "the patch must be a small integer"
            )
        return value
    if type(value) is not str:
        raise InvalidArgumentError(
            "kubelet_version", 'a string like "1.32" or a KubeletVersion', type_name(value)
        )
    return _parse_version(value)


# --- $(VAR) expansion, per release --------------------------------------------------------


class ExpansionRule(NamedTuple):  # built for every container config: see PodFacts
    """How kubelet ``version`` expands ``$(VAR)`` and what becomes of a value that is not
    UTF-8 (only the byte-wise rule makes one from UTF-8 input)."""

    version: KubeletVersion
    rune_wise: bool
    """The character after a lone ``$`` is read as a rune (kubernetes#136325), not a byte."""
    marshal_checks_utf8: bool
    """``CreateContainer`` fails to marshal a request holding a string that is not UTF-8."""


def expansion_rule(version: KubeletVersion) -> ExpansionRule:
    """The ``$(VAR)`` expansion of kubelet ``version``. A version without a patch
    (``1.34``) means the newest patch release of that minor, which has every fix its
    release branch got (``1.34.0`` asks for the first)."""
    return ExpansionRule(
        version, RUNE_WISE_EXPANSION.holds(version.minor, version.patch),
        MARSHAL_CHECKS_UTF8.holds(version.minor),
    )


# --- feature gates ----------------------------------------------------------------------

# strconv.ParseBool's accepted spellings.
_BOOLS = {
    "1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
    "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False,
}
# Go's strings.TrimSpace trims Unicode White_Space. Python's str.strip() also drops
# U+001C..U+001F (information separators), which Go keeps.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + (
    "\u2028\u2029\u202f\u205f\u3000"
)
# The kubelet echoes names and values verbatim; ours are cut so a message stays small.
_MAX_ECHO = 200


def _echo(text: str) -> str:
    return text if len(text) <= _MAX_ECHO else text[: _MAX_ECHO - 3] + "..."


def _items_of(settings: object) -> list[tuple[object, object]]:
    try:
        if not isinstance(settings, Mapping):
            raise InvalidArgumentError(
                "feature_gates", "a mapping of gate names to booleans", type_name(settings)
            )
        return list(settings.items())
    except InvalidArgumentError:
        raise
    except Exception as exc:  # a caller's Mapping.items() (or __instancecheck__) can raise anything
        raise InvalidArgumentError(
            "feature_gates",
            "a readable mapping of gate names to booleans",
            f"{type_name(settings)} (reading it raised {type_name(exc)})",
        ) from None


class FeatureGates(Mapping[str, bool]):
    """Explicitly set gates, immutable and hashable. Build with
    [`parse_feature_gates`][kubelet_winnet.parse_feature_gates]."""

    __slots__ = ("_hash", "_items")

    def __init__(self, settings: Mapping[str, bool] | None = None) -> None:
        items: dict[str, bool] = {}
        for name, value in _items_of({} if settings is None else settings):
            if type(name) is not str:
                raise FeatureGateError(
                    f"feature gate names must be strings, got {describe(name)}", ""
                )
            if type(value) is not bool:
                raise FeatureGateError(
                    f"invalid value of {_echo(name)}={describe(value)}, err: expected a "
                    "boolean",
                    name,
                )
            items[name] = value
        self._items = items
        self._hash = hash(frozenset(items.items()))

    @classmethod
    def from_flag(cls, flag: str) -> FeatureGates:
        """Parse a ``--feature-gates`` value with the kubelet's error texts."""
        if type(flag) is not str:
            raise InvalidArgumentError("feature_gates", "a --feature-gates string", type_name(flag))
        settings: dict[str, bool] = {}
        for item in flag.split(","):
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name = name.strip(_GO_SPACE)
            if not sep:
                raise FeatureGateError(f"missing bool value for {_echo(name)}", name)
            raw = raw.strip(_GO_SPACE)
            value = _BOOLS.get(raw)
            if value is None:
                shown = _echo(raw)
                raise FeatureGateError(
                    f"invalid value of {_echo(name)}={shown}, err: strconv.ParseBool: "
                    f"parsing {golang.quote(shown)}: invalid syntax",
                    name,
                )
            settings[name] = value
        return cls(settings)

    def __getitem__(self, name: str) -> bool:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FeatureGates):
            return self._items == other._items
        return NotImplemented

    def __repr__(self) -> str:
        return f"FeatureGates({_echo(self.to_flag())!r})"

    def to_flag(self) -> str:
        return ",".join(f"{k}={str(v).lower()}" for k, v in self._items.items())


_NO_GATES = FeatureGates()


def parse_feature_gates(value: FeatureGatesInput) -> FeatureGates:
    """Accept ``None``, a flag string, a mapping of name to bool, or
    [`FeatureGates`][kubelet_winnet.FeatureGates]."""
    if value is None:
        return _NO_GATES
    if type(value) is FeatureGates:
        return value
    if type(value) is str:
        return FeatureGates.from_flag(value)
    return FeatureGates(value)  # type: ignore[arg-type]  # checked there


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
        does not send it (kuberuntime_sandbox_windows.go, generatePodSandboxWindowsConfig;
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
