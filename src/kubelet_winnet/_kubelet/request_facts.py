"""What the request builders send, release by release: each change is one
:class:`RequestFact` (its first minor, the patch releases it was backported to, and its
upstream source) in :data:`REQUEST_FACTS`, and the ``$(VAR)`` expansion rule of a kubelet
version is read from three of them (:func:`expansion_rule`).
"""

from __future__ import annotations

from typing import NamedTuple

from kubelet_winnet._kubelet.kubelet_version import KubeletVersion
from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR

__all__ = [
    "CONTAINER_HASH_OF_NAME_AND_IMAGE",
    "CPU_MAXIMUM_HELPER",
    "ENV_VALUES_ARE_BYTES",
    "EXACT_DOWNWARD_DIVISION",
    "EXPANDED_DNS_LOCKED",
    "HASH_WITHOUT_RESOURCES_DROPPED",
    "HOSTS_MOUNT_FOR_HOST_NETWORK",
    "HOST_IPS_FIELD",
    "HOST_IPS_VALUE",
    "LABEL_DOTS_MESSAGE",
    "LABEL_KEY_MESSAGES",
    "MARSHAL_CHECKS_UTF8",
    "NEWEST_RULE",
    "POD_LEVEL_LIMITS_DEFAULT",
    "RECURSIVE_READ_ONLY",
    "REQUEST_FACTS",
    "RUNE_WISE_EXPANSION",
    "SATURATING_MILLI_VALUE",
    "SIGNAL_NAMES_PREFIXED",
    "SLASH_IS_ABSOLUTE",
    "SUPPLEMENTAL_GROUPS_POLICY",
    "USER_SPECIFIED_IMAGE",
    "ExpansionRule",
    "RequestFact",
    "expansion_rule",
]


class RequestFact(NamedTuple):
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
# v1.37.0 divides as every release before it: kubernetes#142232 ("fix precision loss and
# division-by-zero in resource conversion", opened 2026-09-18) and #142265 ("downward API:
# compute resource ceilings with integer math", opened 2026-09-21) both quote
# int64(math.Ceil(float64(...) / float64(...))) as the code they replace, weeks after
# v1.37.0, and master takes a fix before a release branch does. Neither is in
# CHANGELOG-1.38.md's v1.38.0-alpha.1 or alpha.2 notes (0411cc70); the stored sources hold
# no 1.37 patch notes and no cherry-pick of either, so a backport is not modelled.
EXACT_DOWNWARD_DIVISION = RequestFact(
    "exact-downward-division", 38,
    "resourceFieldRef divides exactly (ceil of quantity / divisor, 0 for a zero quantity, "
    "MaxInt64 past int64); before: int64(math.Ceil(float64(MilliValue or Value) / "
    "float64(divisor's)))",
    "pkg/api/v1/resource/helpers.go convertQuantityToString (the newest stored version); "
    "kubernetes#142232 and #142265, opened 2026-09-18 and 09-21 against the float64 "
    "division, after v1.37.0 (2026-08-26); no 1.37 patch release is known to carry it",
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

# KeyValue.value became bytes in cri-api (kubernetes PR #139168, issue #139132), so a
# Secret's value that is not UTF-8 is sent again as it was before 1.34. cri-api commits:
# d3d9c71 on master (first tag kubernetes-1.37.0-alpha.1), a544ba3 on release-1.34
# (kubernetes-1.34.9), 48b4f42 on release-1.35 (kubernetes-1.35.6), 5f84746 on
# release-1.36 (kubernetes-1.36.2); each tag was read in cri-api's history. The kubelet
# side converts the Go string holding the Secret's bytes where generateContainerConfig
# (kuberuntime_container.go) builds each KeyValue, as the diff in kubernetes#139132 shows;
# command, args and working_dir stay strings.
ENV_VALUES_ARE_BYTES = RequestFact(
    "env-values-are-bytes", 37,
    "ContainerConfig.envs[].value is bytes: a value that is not UTF-8 (a Secret's) is sent "
    "unchanged (1.34.0 to this fix: CreateContainer fails to marshal it)",
    "cri-api pkg/apis/runtime/v1/api.proto (bytes value = 2), commits d3d9c71, a544ba3 "
    "(1.34.9), 48b4f42 (1.35.6), 5f84746 (1.36.2); kubernetes#139168, #139192-#139194",
    backports=((34, 9), (35, 6), (36, 2)),
)
# cri-api 044b7de (kubernetes commit 73fbf8ca, first tag kubernetes-1.37.0-alpha.1, not on
# release-1.36): every Signal name gains the prefix, the numbers stay. Nothing on the
# wire changes; the proto3 JSON of stop_signal does.
SIGNAL_NAMES_PREFIXED = RequestFact(
    "signal-names-prefixed", 37,
    "the Signal enum's names carry a SIGNAL_ prefix (SIGNAL_SIGTERM = 23; before: SIGTERM), "
    "which is how proto3 JSON writes stop_signal",
    "cri-api pkg/apis/runtime/v1/api.proto, commit 044b7de (kubernetes commit 73fbf8ca)",
)

#: Every version fact of the request builders, oldest first.
REQUEST_FACTS: tuple[RequestFact, ...] = (
    LABEL_DOTS_MESSAGE, CPU_MAXIMUM_HELPER, EXPANDED_DNS_LOCKED, HOST_IPS_FIELD, HOST_IPS_VALUE,
    USER_SPECIFIED_IMAGE, RECURSIVE_READ_ONLY, CONTAINER_HASH_OF_NAME_AND_IMAGE,
    SLASH_IS_ABSOLUTE, SUPPLEMENTAL_GROUPS_POLICY, HOSTS_MOUNT_FOR_HOST_NETWORK,
    HASH_WITHOUT_RESOURCES_DROPPED, MARSHAL_CHECKS_UTF8, POD_LEVEL_LIMITS_DEFAULT,
    LABEL_KEY_MESSAGES, RUNE_WISE_EXPANSION, ENV_VALUES_ARE_BYTES, SIGNAL_NAMES_PREFIXED,
    EXACT_DOWNWARD_DIVISION, SATURATING_MILLI_VALUE,
)
for _fact in REQUEST_FACTS:  # a fact outside the supported range would never be tested
    if not MIN_MINOR < _fact.since <= MAX_MINOR:  # pragma: no cover - a guard
        raise RuntimeError(f"{_fact.name}: 1.{_fact.since} is outside TIMELINE")
del _fact


# --- $(VAR) expansion, per release --------------------------------------------------------


class ExpansionRule(NamedTuple):  # built for every container config: see PodFacts
    """How kubelet ``version`` expands ``$(VAR)`` and what becomes of a value that is not
    UTF-8 (only the byte-wise rule makes one from UTF-8 input)."""

    version: KubeletVersion
    rune_wise: bool
    """The character after a lone ``$`` is read as a rune (kubernetes#136325), not a byte."""
    marshal_checks_utf8: bool
    """``CreateContainer`` fails to marshal a request holding a string that is not UTF-8."""
    env_bytes: bool = True
    """An environment value is a ``bytes`` field (:data:`ENV_VALUES_ARE_BYTES`): one that is
    not UTF-8 is sent as it is, whatever ``marshal_checks_utf8`` says."""

    @property
    def sends_env_bytes(self) -> bool:
        """Whether this kubelet sends an environment value that is not UTF-8 (before 1.34:
        unchecked; 1.34.0 up to the bytes fix: refused at marshal)."""
        return self.env_bytes or not self.marshal_checks_utf8


def expansion_rule(version: KubeletVersion) -> ExpansionRule:
    """The ``$(VAR)`` expansion of kubelet ``version``. A version without a patch
    (``1.34``) means the newest patch release of that minor, which has every fix its
    release branch got (``1.34.0`` asks for the first)."""
    return ExpansionRule(
        version, RUNE_WISE_EXPANSION.holds(version.minor, version.patch),
        MARSHAL_CHECKS_UTF8.holds(version.minor),
        ENV_VALUES_ARE_BYTES.holds(version.minor, version.patch),
    )


#: The rule of the newest kubelet modelled, for callers that name no version.
NEWEST_RULE = expansion_rule(KubeletVersion(MAX_MINOR))
