"""The ``check`` rules: what a Windows pod asks for that it will not get.

Rules are data (:data:`RULES`: id, severity, summary, docs page) plus one pure function,
:func:`check_pod`, from a manifest's pod to its findings. The kubelet and API-server
texts are quoted from upstream (kubelet: pkg/kubelet/kuberuntime/kuberuntime_sandbox_windows.go,
``generatePodSandboxWindowsConfig``; API server: pkg/apis/core/validation/validation.go,
``validateWindowsHostProcessPod``, ``validateHostNetwork``, ``validateWindows``).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelet_winnet._lint.targeting import PodObject, Target

__all__ = [
    "DOCS_URL",
    "IGNORE_PREFIX",
    "PROJECT_URL",
    "RULES",
    "RULES_BY_ID",
    "Finding",
    "HostNetworkReach",
    "Rule",
    "Severity",
    "check_pod",
    "host_network_reach",
    "ignored_rules",
]

# The project's home and where docs/rules/<rule-id>.md is published (SARIF helpUri).
PROJECT_URL = "https://github.com/kubelet-winnet/kubelet-winnet"
DOCS_URL = f"{PROJECT_URL}/blob/main/docs/rules/"
# kube-linter's convention: ignore-check.kube-linter.io/<check>: "<reason>".
IGNORE_PREFIX = "ignore-check.kubelet-winnet.io/"


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def sarif_level(self) -> str:
        return {1: "note", 2: "warning", 3: "error"}[self.value]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    # The severity when the pod does not declare spec.os.name: windows (only targets it),
    # for rules whose upstream check applies to declared Windows pods alone.
    severity_without_os: Severity | None = None

    @property
    def help_uri(self) -> str:
        return f"{DOCS_URL}{self.id}.md"


RULES: tuple[Rule, ...] = (
    Rule("host-network-ignored", Severity.WARNING,
         "hostNetwork: true on a Windows pod that is not HostProcess is silently ignored"),
    Rule("host-process-mixed", Severity.ERROR,
         "some but not all containers are HostProcess: the kubelet refuses the pod"),
    Rule("host-process-needs-host-network", Severity.ERROR,
         "HostProcess containers without hostNetwork: true: the kubelet refuses the pod"),
    Rule("host-process-pod-false", Severity.ERROR,
         "a HostProcess container in a pod whose hostProcess is false: the kubelet refuses "
         "the pod"),
    Rule("host-port-mismatch", Severity.ERROR,
         "under hostNetwork a hostPort must equal its containerPort"),
    Rule("windows-forbidden-field", Severity.ERROR,
         "a field the API server rejects for a pod with spec.os.name: windows",
         severity_without_os=Severity.INFO),
    Rule("gmsa-spec-missing", Severity.INFO,
         "gmsaCredentialSpecName without gmsaCredentialSpec: needs the GMSA webhook"),
)
RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in RULES}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    rule: Rule
    severity: Severity  # the rule's, or lower (windows-forbidden-field without os.name)
    message: str
    field: Path  # from the manifest root
    container: str | None = None


# --- where hostNetwork reaches the runtime, from the library's own decisions ----------

GATE_STATES: tuple[tuple[str, str | None], ...] = (
    ("default", None),
    ("WindowsHostNetwork=true", "WindowsHostNetwork=true"),
    ("WindowsHostNetwork=false", "WindowsHostNetwork=false"),
)
_PROBE = {"spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "i"}]}}


@dataclass(frozen=True)
class HostNetworkReach:
    """For each kubelet minor, the gate states under which the sandbox request for a
    plain ``hostNetwork: true`` pod carries ``network = NODE``; and whether the
    kubelet profile being checked does."""

    by_minor: tuple[tuple[int, frozenset[str], frozenset[str]], ...]  # minor, NODE, valid
    selected: str
    selected_carries_node: bool

    @functools.cached_property
    def message(self) -> str:
        here = "does" if self.selected_carries_node else "does not"
        return (
            "hostNetwork: true is not applied to this Windows pod: the kubelet's sandbox "
            f"request carries network NODE {self.text} ({self.selected}: it {here}), "
            "and no released containerd acts on it (containerd takes host networking on "
            "Windows from host_process alone), so the pod gets its own network namespace. "
            "For the node's network make every container HostProcess; to reach the pod "
            "on the node's address use a hostPort or a NodePort Service"
        )

    @functools.cached_property
    def text(self) -> str:
        parts = []
        for first, last, node, valid in _runs(self.by_minor):
            span = f"1.{first}" if first == last else f"1.{first}-1.{last}"
            if not node:
                parts.append(f"never on {span}")
            elif node == valid:
                parts.append(f"always on {span}")
            elif "default" in node:
                off = sorted(valid - node)
                parts.append(f"on {span} unless {' or '.join(off)}")
            else:
                parts.append(f"on {span} only with {' or '.join(sorted(node))}")
        return "; ".join(parts)


def _runs(
    rows: Sequence[tuple[int, frozenset[str], frozenset[str]]],
) -> Iterator[tuple[int, int, frozenset[str], frozenset[str]]]:
    def key(row: tuple[int, frozenset[str], frozenset[str]]) -> object:
        return (row[1], row[2]) if row[1] else ()  # "never" whatever the gate accepts

    start = 0
    for index in range(1, len(rows) + 1):
        if index == len(rows) or key(rows[index]) != key(rows[start]):
            yield rows[start][0], rows[index - 1][0], rows[start][1], rows[start][2]
            start = index


def host_network_reach(kubelet_version: object, feature_gates: object) -> HostNetworkReach:
    """Evaluate every kubelet of ``TIMELINE`` under each gate state with the decision
    the public translation serializes (no protobuf: ``check`` starts without it)."""
    from kubelet_winnet._kubelet.pod import read_pod
    from kubelet_winnet._kubelet.profile import MIN_MINOR, kubelet_profile
    from kubelet_winnet._kubelet.rules import decide_sandbox
    from kubelet_winnet.errors import FeatureGateError, UnsupportedVersionError

    probe = read_pod(_PROBE)

    def carries_node(version: object, gates: object) -> bool:
        profile = kubelet_profile(version, gates)
        return decide_sandbox(probe, profile.sets_namespace_options).network == "NODE"

    rows = []
    minor = MIN_MINOR
    while True:
        version = f"1.{minor}"
        try:
            kubelet_profile(version)
        except UnsupportedVersionError:
            break
        node: set[str] = set()
        valid: set[str] = set()
        for label, gates in GATE_STATES:
            try:
                kubelet_profile(version, gates)
            except FeatureGateError:
                continue
            valid.add(label)
            if carries_node(version, gates):
                node.add(label)
        rows.append((minor, frozenset(node), frozenset(valid)))
        minor += 1
    profile = kubelet_profile(kubelet_version, feature_gates)
    selected = f"kubelet {profile.version}" + (f" with {feature_gates}" if feature_gates else "")
    return HostNetworkReach(tuple(rows), selected, carries_node(kubelet_version, feature_gates))


# --- the pod's containers, as the kubelet visits them --------------------------------

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


class _Container:
    """One container as the kubelet visits it (init, regular, ephemeral)."""

    __slots__ = ("context", "effective", "host_process", "name", "options", "path")

    def __init__(self, path: Path, name: str, context: Any, pod_host_process: bool | None):
        self.path = path  # from the manifest root
        self.name = name
        self.context = context if type(context) is dict else None  # securityContext
        options = None if self.context is None else self.context.get("windowsOptions")
        self.options = options if type(options) is dict else None
        own = None if self.options is None else _bool(self.options.get("hostProcess"))
        self.host_process = own  # as set on the container
        self.effective = own if own is not None else bool(pod_host_process)


def _containers(pod: PodObject, pod_host_process: bool | None) -> list[_Container]:
    found = []
    spec = pod.spec
    for kind in _CONTAINER_LISTS:
        entries = spec.get(kind)
        if type(entries) is not list:
            continue
        for index, entry in enumerate(entries):
            if type(entry) is not dict:
                continue
            name = entry.get("name")
            found.append(_Container(
                (*pod.spec_path, kind, index),
                name if type(name) is str else f"{kind}[{index}]",
                entry.get("securityContext"),
                pod_host_process,
            ))
    return found


def _dig(node: object, *keys: str) -> Any:
    for key in keys:
        if type(node) is not dict:
            return None
        node = node.get(key)
    return node


def _bool(value: object) -> bool | None:
    return value if value is True or value is False else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None


# --- the rules --------------------------------------------------------------------------

_KUBELET_MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
_API_MIXED = (
    "If pod contains any hostProcess containers then all containers must be HostProcess "
    "containers"
)
_KUBELET_NEEDS_NETWORK = "hostNetwork is required if Pod contains HostProcess containers"
_API_NEEDS_NETWORK = "hostNetwork must be true if pod contains any hostProcess containers"
_KUBELET_POD_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)
_API_IDENTICAL = "pod hostProcess value must be identical if both are specified, was false"
_API_HOST_PORT = "must match `containerPort` when `hostNetwork` is true"
_API_WINDOWS = "cannot be set for a windows pod"

# validateWindows: pod-level fields, pod securityContext fields, container securityContext
# fields. The three booleans are rejected only when true.
_WINDOWS_SPEC_TRUE = ("hostPID", "hostIPC", "shareProcessNamespace")
_WINDOWS_SPEC_SET = ("hostUsers",)
_WINDOWS_POD_CONTEXT = (
    "seLinuxOptions", "seccompProfile", "appArmorProfile", "fsGroup", "fsGroupChangePolicy",
    "sysctls", "runAsUser", "runAsGroup", "supplementalGroups", "supplementalGroupsPolicy",
)
_WINDOWS_CONTAINER_CONTEXT = (
    "seLinuxOptions", "seccompProfile", "appArmorProfile", "capabilities",
    "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
    "runAsUser", "runAsGroup",
)


def _names(containers: Sequence[_Container]) -> str:
    shown = ", ".join(c.name for c in containers[:5])
    return shown + (f" and {len(containers) - 5} more" if len(containers) > 5 else "")


def check_pod(pod: PodObject, target: Target, reach: HostNetworkReach) -> list[Finding]:
    """Every finding for one pod (ignore annotations not applied yet)."""
    spec = pod.spec
    at = pod.spec_path
    found: list[Finding] = []
    host_network = spec.get("hostNetwork") is True
    pod_options = _dig(spec, "securityContext", "windowsOptions")
    pod_host_process = _bool(_dig(pod_options, "hostProcess"))
    containers = _containers(pod, pod_host_process)
    host_process = [c for c in containers if c.effective]
    plain = [c for c in containers if not c.effective]

    if host_process and plain:
        rule = RULES_BY_ID["host-process-mixed"]
        first = plain[0]
        found.append(Finding(
            rule, rule.severity,
            f"HostProcess: {_names(host_process)}; not HostProcess: {_names(plain)}: the kubelet "
            f"refuses the pod (\"{_KUBELET_MIXED}\") and the API server rejects it "
            f"(\"{_API_MIXED}\")",
            (*first.path, "securityContext", "windowsOptions", "hostProcess")
            if first.host_process is not None else first.path,
            first.name,
        ))
    if host_process and not host_network:
        rule = RULES_BY_ID["host-process-needs-host-network"]
        found.append(Finding(
            rule, rule.severity,
            f"HostProcess containers ({_names(host_process)}) without hostNetwork: true: the "
            f"kubelet refuses the pod (\"{_KUBELET_NEEDS_NETWORK}\") and the API server rejects it "
            f"(\"{_API_NEEDS_NETWORK}\"); set spec.hostNetwork: true",
            (*at, "hostNetwork"),
        ))
    if pod_host_process is False:
        rule = RULES_BY_ID["host-process-pod-false"]
        for container in containers:
            if container.host_process is True:
                found.append(Finding(
                    rule, rule.severity,
                    f"container {container.name} is HostProcess but the pod sets "
                    f"hostProcess: false: the kubelet refuses the pod (\"{_KUBELET_POD_FALSE}\") "
                    f"and the API server rejects it (\"{_API_IDENTICAL}\")",
                    (*container.path, "securityContext", "windowsOptions", "hostProcess"),
                    container.name,
                ))
    if host_network and not host_process:
        rule = RULES_BY_ID["host-network-ignored"]
        found.append(Finding(rule, rule.severity, reach.message, (*at, "hostNetwork")))
    if host_network:
        rule = RULES_BY_ID["host-port-mismatch"]
        for kind in ("initContainers", "containers"):
            entries = spec.get(kind)
            if not isinstance(entries, list):
                continue
            for index, entry in enumerate(entries):
                ports = entry.get("ports") if type(entry) is dict else None
                if not isinstance(ports, list):
                    continue
                for number, port in enumerate(ports):
                    if type(port) is not dict:
                        continue
                    host_port = _int(port.get("hostPort"))
                    container_port = _int(port.get("containerPort"))
                    if host_port and container_port is not None and host_port != container_port:
                        name = entry.get("name")
                        found.append(Finding(
                            rule, rule.severity,
                            f"hostPort {host_port} with containerPort {container_port} under "
                            f"hostNetwork: the API server rejects it (\"{_API_HOST_PORT}\"); "
                            "the pod listens on the node's port containerPort",
                            (*at, kind, index, "ports", number, "hostPort"),
                            name if isinstance(name, str) else None,
                        ))
    found += _forbidden(pod, target, containers)
    found += _gmsa(pod, pod_options, containers)
    return found


def _forbidden(
    pod: PodObject, target: Target, containers: Sequence[_Container]
) -> list[Finding]:
    spec = pod.spec
    at = pod.spec_path
    os_name = _dig(spec, "os", "name")
    if os_name != "windows" and target is not Target.WINDOWS:
        return []
    rule = RULES_BY_ID["windows-forbidden-field"]
    declared = os_name == "windows"
    severity = rule.severity if declared else (rule.severity_without_os or rule.severity)
    tail = (
        f"the API server rejects it (\"{_API_WINDOWS}\")"
        if declared
        else "ignored on Windows nodes; the API server rejects it "
        f"(\"{_API_WINDOWS}\") once spec.os.name is windows"
    )
    found = []
    for name in _WINDOWS_SPEC_TRUE:
        if spec.get(name) is True:
            found.append(Finding(rule, severity, f"{name}: true is {tail}", (*at, name)))
    for name in _WINDOWS_SPEC_SET:
        if spec.get(name) is not None:
            found.append(Finding(rule, severity, f"{name} is {tail}", (*at, name)))
    context = spec.get("securityContext")
    if type(context) is dict:
        for name in _WINDOWS_POD_CONTEXT:
            if context.get(name) is not None:
                found.append(Finding(rule, severity, f"securityContext.{name} is {tail}",
                                     (*at, "securityContext", name)))
    for container in containers:
        context = container.context
        if context is None:
            continue
        for name in _WINDOWS_CONTAINER_CONTEXT:
            if context.get(name) is not None:
                found.append(Finding(
                    rule, severity, f"container securityContext.{name} is {tail}",
                    (*container.path, "securityContext", name), container.name,
                ))
    return found


def _gmsa(
    pod: PodObject, pod_options: object, containers: Sequence[_Container]
) -> list[Finding]:
    rule = RULES_BY_ID["gmsa-spec-missing"]
    sources: list[tuple[Path, object, str | None]] = [
        ((*pod.spec_path, "securityContext", "windowsOptions"), pod_options, None)
    ]
    sources += [
        ((*c.path, "securityContext", "windowsOptions"), c.options, c.name)
        for c in containers if c.options is not None
    ]
    found = []
    for path, options, name in sources:
        if type(options) is not dict:
            continue
        spec_name = options.get("gmsaCredentialSpecName")
        if isinstance(spec_name, str) and options.get("gmsaCredentialSpec") is None:
            found.append(Finding(
                rule, rule.severity,
                f"gmsaCredentialSpecName {_clip(spec_name)} without gmsaCredentialSpec: the "
                "kubelet sends only the spec contents, which the GMSA admission webhook fills "
                "in; without the webhook the container gets no GMSA identity",
                (*path, "gmsaCredentialSpecName"), name,
            ))
    return found


def _clip(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")


def ignored_rules(pod: PodObject) -> dict[str, str]:
    """Rule ids the object or its pod template opts out of, with the reasons given."""
    ignored: dict[str, str] = {}
    for metadata in (pod.manifest.get("metadata"), pod.template_metadata):
        annotations = _dig(metadata, "annotations")
        if type(annotations) is not dict:
            continue
        for key, value in annotations.items():
            if isinstance(key, str) and key.startswith(IGNORE_PREFIX):
                ignored[key[len(IGNORE_PREFIX):]] = value if isinstance(value, str) else ""
    return ignored
