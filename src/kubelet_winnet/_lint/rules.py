"""The ``check`` rules: what a Windows pod asks for that it will not get.

Rules are data (:data:`RULES`: id, severity, summary, docs page) plus one pure function,
:func:`check_pod`, from a manifest's pod to its findings. The kubelet and API-server
texts are quoted from upstream (kubelet: pkg/kubelet/kuberuntime/kuberuntime_sandbox_windows.go,
``generatePodSandboxWindowsConfig``; API server: pkg/apis/core/validation/validation.go,
``validateWindowsHostProcessPod``, ``validateHostNetwork``, ``validateWindows``).
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelet_winnet._judgement import NodeKnowledge, Verdict, judge
from kubelet_winnet._kubelet.rules import (
    ERROR_HOST_NETWORK_REQUIRED,
    ERROR_MIXED_HOST_PROCESS,
    ERROR_POD_HOST_PROCESS_FALSE,
    effective_host_process,
)
from kubelet_winnet._lint.fields import (
    CONTAINER,
    FIELDS,
    FIELDS_RELEASES,
    POD_SECURITY_CONTEXT,
    POD_SPEC,
    POD_TEMPLATE_SPEC,
    SECURITY_CONTEXT,
    WINDOWS_SECURITY_CONTEXT_OPTIONS,
)
from kubelet_winnet._lint.targeting import PodObject, Target

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.profile import FeatureGatesInput, KubeletVersionInput

__all__ = [
    "IGNORE_COMMENT",
    "IGNORE_PREFIX",
    "REASONS",
    "REASONS_BY_ID",
    "RULES",
    "RULES_BY_ID",
    "Finding",
    "HostNetworkReach",
    "Reason",
    "Rule",
    "Severity",
    "check_pod",
    "help_url",
    "host_network_reach",
    "ignore_comment",
    "ignored_rules",
    "nearest_rule",
    "rule_page",
    "unknown_ignores",
]

# The project has no published address: a rule's page is named by its path in the
# source tree, and an absolute helpUri exists only where the user configures where the
# pages are published (help_url).
RULE_PAGES = "docs/rules/"
# kube-linter's convention: ignore-check.kube-linter.io/<check>: "<reason>".
IGNORE_PREFIX = "ignore-check.kubelet-winnet.io/"
# The same in a YAML comment, for files that cannot be annotated (vendored manifests):
# "# kubelet-winnet:ignore <rule-id> <reason>" (checkov's "# checkov:skip=<id>:<reason>").
IGNORE_COMMENT = "kubelet-winnet:ignore"


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
    # What the rule warns of happens on Windows nodes only: for a pod that no OS field,
    # selector or affinity pins, the text says "if this pod runs on a Windows node" and
    # the severity is one level lower (a Linux workload in the same repository is fine).
    windows_nodes_only: bool = False

    @property
    def help_uri(self) -> str:
        """The rule's page, a URI reference relative to the project's source tree (no
        address is guessed: :func:`help_url` with a configured base gives an absolute
        one)."""
        return f"{RULE_PAGES}{self.id}.md"

    @property
    def severity_text(self) -> str:
        """The severities a finding of this rule can have, from the rule's data:
        "info (error when spec.os.name is windows)", "warning (info for a pod pinned to
        no OS)"."""
        base = self.severity_without_os or self.severity
        cases = []
        if self.severity_without_os is not None:
            cases.append(f"{self.severity.label} when spec.os.name is windows")
        if self.windows_nodes_only and self.severity > Severity.INFO:
            cases.append(f"{Severity(self.severity - 1).label} for a pod pinned to no OS")
        return base.label + (f" ({'; '.join(cases)})" if cases else "")

    def severity_for(self, target: Target) -> Severity:
        """The severity of a finding on a pod aimed at ``target``: a windows_nodes_only
        rule is one level lower on a pod pinned to no OS."""
        if target is Target.UNTARGETED and self.windows_nodes_only:
            return Severity(max(Severity.INFO, self.severity - 1))
        return self.severity


RULES: tuple[Rule, ...] = (
    Rule("host-network-ignored", Severity.WARNING,
         "hostNetwork: true on a Windows pod that is not HostProcess is silently ignored",
         windows_nodes_only=True),
    Rule("host-process-mixed", Severity.ERROR,
         "some but not all containers are HostProcess: the kubelet refuses the pod"),
    Rule("host-process-needs-host-network", Severity.ERROR,
         "HostProcess containers without hostNetwork: true: the kubelet refuses the pod"),
    Rule("host-process-pod-false", Severity.ERROR,
         "a HostProcess container in a pod whose hostProcess is false: the kubelet refuses "
         "the pod"),
    Rule("host-process-override", Severity.ERROR,
         "hostProcess: false on a container of a pod whose hostProcess is true: the API "
         "server rejects the pod"),
    Rule("host-port-mismatch", Severity.ERROR,
         "under hostNetwork a hostPort must equal its containerPort"),
    Rule("windows-forbidden-field", Severity.ERROR,
         "a field the API server rejects for a pod with spec.os.name: windows",
         severity_without_os=Severity.INFO),
    Rule("gmsa-spec-missing", Severity.INFO,
         "gmsaCredentialSpecName without gmsaCredentialSpec: needs the GMSA webhook"),
    Rule("host-process-hyperv-no-network", Severity.WARNING,
         "a HostProcess pod with a Hyper-V RuntimeClass: hcsshim v0.15 runs it in a utility "
         "VM with no network at all"),
    Rule("unknown-field", Severity.ERROR,
         "a key that is no field of its Kubernetes type: kubectl apply rejects the object, "
         "other clients drop the field"),
)



@dataclass(frozen=True)
class Reason:
    """A code ``explain`` prints (``kubelet_winnet.WarningCode``): the check rule it is a
    case of, so one id has one severity everywhere; ``rule`` None: a note about the
    command-line flags, which ``check`` prints as a note too."""

    id: str
    rule: str | None
    summary: str


REASONS: tuple[Reason, ...] = (
    Reason("host-network-gate-off", "host-network-ignored",
           "kubelet 1.26-1.32 with WindowsHostNetwork turned off does not send network NODE"),
    Reason("host-network-withdrawn", "host-network-ignored",
           "kubelet 1.33 and later never send network NODE (KEP-3503 withdrawn)"),
    Reason("containerd-ignores-namespace-options", "host-network-ignored",
           "the kubelet sends network NODE, but no released containerd acts on it"),
    Reason("gmsa-spec-missing", "gmsa-spec-missing",
           "gmsaCredentialSpecName without gmsaCredentialSpec: needs the GMSA webhook"),
    Reason("feature-gate-not-modelled", None,
           "a --feature-gates name this library does not model (a kubelet refuses a gate it "
           "does not know)"),
    Reason("deprecated-feature-gate", None,
           "a deprecated gate set in --feature-gates (the kubelet logs that it will be "
           "removed)"),
)
REASONS_BY_ID: Mapping[str, Reason] = {reason.id: reason for reason in REASONS}

RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in RULES}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    rule: Rule
    severity: Severity  # the rule's, or lower (no os.name, or a pod pinned to no OS)
    message: str  # one sentence under 120 characters: what happens and what to do
    field: Path  # from the manifest root
    container: str | None = None
    detail: str = ""  # the versions, upstream's words, other ways out

    @property
    def text(self) -> str:
        """The whole finding: the sentence, then the detail."""
        return f"{self.message} {self.detail}" if self.detail else self.message


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
    given: bool = True  # the user named the kubelet version (else: every release is told)

    message = (
        "hostNetwork: true is ignored: the pod gets its own network namespace; for the "
        "node's network make it HostProcess."
    )
    conditional = (
        "if this pod runs on a Windows node, hostNetwork: true is ignored there; pin it with "
        "spec.os.name."
    )

    @functools.cached_property
    def detail(self) -> str:
        """Why the pod does not get the node's network, and how to reach it all the same."""
        return (f"{self._why} To reach the pod on the node's address use a hostPort or a "
                "NodePort Service.")

    @functools.cached_property
    def _why(self) -> str:
        if self.given:
            sent = (
                f"{self.selected} sends network NODE in the sandbox request, but no released "
                "containerd acts on it"
                if self.selected_carries_node
                else f"{self.selected} does not send network NODE in the sandbox request"
            )
        else:
            sent = (
                f"The kubelet sends network NODE in the sandbox request {self.text} "
                "(--kubelet-version names yours), but no released containerd acts on it"
            )
        return f"{sent}: containerd takes host networking on Windows from host_process alone."

    def detail_with_ports(self, ports: Sequence[int]) -> str:
        """:attr:`detail` for a pod with container ports, which already have hostPorts:
        the API server sets hostPort to containerPort in a hostNetwork pod
        (``defaultHostNetworkPorts``, pkg/apis/core/v1/defaults.go), and the kubelet sends
        them as the sandbox's port mappings."""
        shown = ", ".join(map(str, ports[:5])) + (", ..." if len(ports) > 5 else "")
        plural = "s" if len(ports) != 1 else ""
        return (
            f"{self._why} Its container port{plural} {shown} "
            f"{'have hostPorts' if plural else 'has a hostPort'} (in a hostNetwork pod the "
            "API server sets hostPort to containerPort where none is given), which reach"
            f"{'' if plural else 'es'} the pod on the node's address where the node's CNI "
            "plugin maps ports (the portMappings capability; kubelet-winnet node checks it)."
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


def host_network_reach(
    kubelet_version: KubeletVersionInput, feature_gates: FeatureGatesInput, given: bool = True
) -> HostNetworkReach:
    """Evaluate every kubelet of ``TIMELINE`` under each gate state with the decision
    the public translation serializes (no protobuf: ``check`` starts without it).
    ``given``: the user named ``kubelet_version``; otherwise the finding names the
    releases, not the default version."""
    from kubelet_winnet._kubelet.pod import read_pod
    from kubelet_winnet._kubelet.profile import MIN_MINOR, kubelet_profile
    from kubelet_winnet._kubelet.rules import decide_sandbox
    from kubelet_winnet.errors import FeatureGateError, UnsupportedVersionError

    probe = read_pod(_PROBE)

    def carries_node(version: KubeletVersionInput, gates: FeatureGatesInput) -> bool:
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
    return HostNetworkReach(
        tuple(rows), selected, carries_node(kubelet_version, feature_gates), given
    )


def _container_ports(spec: Mapping[str, Any]) -> list[int]:
    """The containerPorts of the init and regular containers (the ones API defaulting
    gives a hostPort in a hostNetwork pod), in order, each once."""
    ports: dict[int, None] = {}
    for kind in ("initContainers", "containers"):
        entries = spec.get(kind)
        for entry in entries if isinstance(entries, list) else ():
            declared = entry.get("ports") if isinstance(entry, dict) else None
            for port in declared if isinstance(declared, list) else ():
                number = port.get("containerPort") if isinstance(port, dict) else None
                if type(number) is int and 0 < number < 65536:
                    ports[number] = None
    return list(ports)


# --- the pod's containers, as the kubelet visits them --------------------------------

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


class _Container:
    """One container as the kubelet visits it (init, regular, ephemeral)."""

    __slots__ = ("context", "effective", "entry", "host_process", "name", "options", "path")

    def __init__(self, path: Path, name: str, context: Any, pod_host_process: bool | None,
                 entry: Mapping[str, Any]):
        self.path = path  # from the manifest root
        self.name = name
        self.entry = entry
        self.context = context if type(context) is dict else None  # securityContext
        options = None if self.context is None else self.context.get("windowsOptions")
        self.options = options if type(options) is dict else None
        own = None if self.options is None else _bool(self.options.get("hostProcess"))
        self.host_process = own  # as set on the container
        self.effective = effective_host_process(pod_host_process, own)


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
                entry,
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

# The kubelet's refusals quote the kubelet model's texts (one home: _kubelet/rules.py).
_KUBELET_MIXED = ERROR_MIXED_HOST_PROCESS
_API_MIXED = (
    "If pod contains any hostProcess containers then all containers must be HostProcess "
    "containers"
)
_KUBELET_NEEDS_NETWORK = ERROR_HOST_NETWORK_REQUIRED
_API_NEEDS_NETWORK = "hostNetwork must be true if pod contains any hostProcess containers"
_KUBELET_POD_FALSE = ERROR_POD_HOST_PROCESS_FALSE
_API_IDENTICAL = "pod hostProcess value must be identical if both are specified, was false"
_API_IDENTICAL_TRUE = "pod hostProcess value must be identical if both are specified, was true"
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


_SPEC_FIELDS = frozenset(_WINDOWS_SPEC_TRUE + _WINDOWS_SPEC_SET)
_POD_CONTEXT_FIELDS = frozenset(_WINDOWS_POD_CONTEXT)
_CONTAINER_CONTEXT_FIELDS = frozenset(_WINDOWS_CONTAINER_CONTEXT)


def _names(containers: Sequence[_Container]) -> str:
    shown = ", ".join(c.name for c in containers[:5])
    return shown + (f" and {len(containers) - 5} more" if len(containers) > 5 else "")


def check_pod(
    pod: PodObject, target: Target, reach: HostNetworkReach,
    node: NodeKnowledge | None = None, verdict: Verdict | None = None,
) -> list[Finding]:
    """Every finding for one pod (ignore annotations not applied yet). ``node``: what is
    known of the node (``check`` knows the RuntimeClasses of its input and assumes
    containerd); ``verdict``: the judgement already made for the pod on its node (``audit``)."""
    spec = pod.spec
    host_network = spec.get("hostNetwork") is True
    context = spec.get("securityContext")
    pod_options = context.get("windowsOptions") if type(context) is dict else None
    pod_host_process = (
        _bool(pod_options.get("hostProcess")) if type(pod_options) is dict else None
    )
    containers = _containers(pod, pod_host_process)
    host_process = [c for c in containers if c.effective]
    plain = [c for c in containers if not c.effective]
    found = _refusals(pod, containers, host_process, plain, pod_host_process)
    verdict = verdict or _judged(pod, node) if host_network else verdict
    if verdict is not None and verdict.host_network_effect == "ignored":
        rule = RULES_BY_ID["host-network-ignored"]
        container_ports = _container_ports(spec)
        found.append(_on_windows(target, reach.conditional, Finding(
            rule, rule.severity, reach.message, (*pod.spec_path, "hostNetwork"), None,
            reach.detail_with_ports(container_ports) if container_ports else reach.detail,
        )))
    if host_network:
        found += _host_port_mismatch(pod)
    found += _forbidden(pod, target, containers)
    found += _unknown_fields(pod, containers)
    found += _gmsa(pod, pod_options, containers)
    if host_process and not plain:
        found += _hyperv(pod, verdict or _judged(pod, node))  # one judgement per pod
    return found


def _refusals(pod: PodObject, containers: Sequence[_Container],
              host_process: Sequence[_Container], plain: Sequence[_Container],
              pod_host_process: bool | None) -> list[Finding]:
    """What the kubelet (its own texts) and the API server refuse about HostProcess."""
    found: list[Finding] = []
    host_network = pod.spec.get("hostNetwork") is True
    if host_process and plain:
        rule = RULES_BY_ID["host-process-mixed"]
        first = plain[0]
        found.append(Finding(
            rule, rule.severity,
            "HostProcess and non-HostProcess containers in one pod: the kubelet refuses it; "
            "make all or none HostProcess.",
            (*first.path, "securityContext", "windowsOptions", "hostProcess")
            if first.host_process is not None else first.path,
            first.name,
            f"HostProcess: {_names(host_process)}; not HostProcess: {_names(plain)}. Kubelet: "
            f"\"{_KUBELET_MIXED}\"; API server: \"{_API_MIXED}\".",
        ))
    if host_process and not host_network:
        rule = RULES_BY_ID["host-process-needs-host-network"]
        found.append(Finding(
            rule, rule.severity,
            "HostProcess containers without hostNetwork: true: the kubelet refuses the pod; "
            "set spec.hostNetwork: true.",
            (*pod.spec_path, "hostNetwork"),
            None,
            f"HostProcess: {_names(host_process)}. Kubelet: \"{_KUBELET_NEEDS_NETWORK}\"; "
            f"API server: \"{_API_NEEDS_NETWORK}\".",
        ))
    if pod_host_process is False:
        rule = RULES_BY_ID["host-process-pod-false"]
        for container in containers:
            if container.host_process is True:
                found.append(Finding(
                    rule, rule.severity,
                    "a HostProcess container in a pod with hostProcess: false: the kubelet "
                    "refuses the pod; make the two agree.",
                    (*container.path, "securityContext", "windowsOptions", "hostProcess"),
                    container.name,
                    f"Kubelet: \"{_KUBELET_POD_FALSE}\"; API server: \"{_API_IDENTICAL}\".",
                ))
    if pod_host_process is True:
        # validateWindowsHostProcessPod (pkg/apis/core/validation/validation.go): a
        # container's hostProcess, when set, must equal the pod's.
        rule = RULES_BY_ID["host-process-override"]
        for container in containers:
            if container.host_process is False:
                found.append(Finding(
                    rule, rule.severity,
                    "hostProcess: false on a container of a pod with hostProcess: true: the "
                    "API server rejects the pod; make them agree.",
                    (*container.path, "securityContext", "windowsOptions", "hostProcess"),
                    container.name, f"API server: \"{_API_IDENTICAL_TRUE}\".",
                ))
    return found


def _host_port_mismatch(pod: PodObject) -> list[Finding]:
    """Under hostNetwork the API server requires each hostPort to equal its containerPort
    (validateHostNetwork)."""
    spec = pod.spec
    at = pod.spec_path
    found: list[Finding] = []
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
                        "hostNetwork: the API server rejects the pod; set hostPort to "
                        f"{container_port}.",
                        (*at, kind, index, "ports", number, "hostPort"),
                        name if isinstance(name, str) else None,
                        f"API server: \"{_API_HOST_PORT}\". Under hostNetwork the pod "
                        f"listens on the node's port {container_port}.",
                    ))
    return found


def _judged(pod: PodObject, node: NodeKnowledge | None) -> Verdict | None:
    """The judgement of a pod ``check`` reads (on containerd, its release not known), or
    None for a pod the kubelet model cannot read (other rules say why)."""
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile
    from kubelet_winnet.errors import WinnetError

    try:
        return judge(pod.manifest, kubelet_profile(DEFAULT_KUBELET_VERSION),
                     node or NodeKnowledge(runtime="containerd"))
    except WinnetError:
        return None


_HYPERV_DETAIL = (
    "hcsshim v0.15.0-rc.2 and later (PR #2531; the shim of containerd 2.3.3+ and "
    "2.4) run HostProcess containers under Hyper-V isolation inside the utility "
    "VM, which has no network: containerd gives a HostProcess pod no network namespace. "
    "hostNetwork: true does not change that."
)


def _hyperv(pod: PodObject, verdict: Verdict | None) -> list[Finding]:
    """hcsshim PR #2531 (commit b07af140d, v0.15.0-rc.2+): a HostProcess pod whose
    runtime handler sets SandboxIsolation = 1 gets a utility VM with no network. The
    judgement decides (its network ``none``, or ``unknown`` with the condition); this
    renders it: a warning when the handler is known to be Hyper-V isolated (conditional
    on the release when that is not known), a note when the handler is not known."""
    if verdict is None or verdict.starts is False or verdict.isolation == "process":
        return []
    network = verdict.network
    if network.value not in ("none", "unknown"):
        return []
    rule = RULES_BY_ID["host-process-hyperv-no-network"]
    name = verdict.runtime_class
    path = (*pod.spec_path, "runtimeClassName") if name else (*pod.spec_path,)
    owner = f"RuntimeClass {_clip(name)}" if name else "The node's default runtime handler"
    fix = "drop runtimeClassName" if name else "set a process-isolated runtimeClassName"
    if verdict.isolation == "hyperv":
        has = (f"{owner} has handler {verdict.handler!r}" if name
               else f"The node's default runtime handler is {verdict.handler!r}")
        if network.value == "none":
            return [Finding(
                rule, rule.severity,
                f"HostProcess under Hyper-V isolation: the pod gets no network at all; {fix}.",
                path, None, f"{has}. {_HYPERV_DETAIL}",
            )]
        return [Finding(
            rule, rule.severity,
            f"HostProcess under Hyper-V isolation: no network on containerd 2.3.3 or later; "
            f"{fix}.",
            path, None, f"{has}: {network.condition}. {_HYPERV_DETAIL}",
        )]
    known = (f"handler {verdict.handler!r}" if verdict.handler is not None
             else "a handler not in the input")
    return [Finding(
        rule, Severity.INFO,
        "HostProcess with a RuntimeClass: if its handler is Hyper-V isolated, the pod gets "
        "no network; check the handler.",
        path, None,
        f"{owner} has {known}; a handler whose runhcs options set "
        f"SandboxIsolation = 1 is Hyper-V isolated. {_HYPERV_DETAIL}",
    )]


def _forbidden(
    pod: PodObject, target: Target, containers: Sequence[_Container]
) -> list[Finding]:
    spec = pod.spec
    at = pod.spec_path
    os_name = _dig(spec, "os", "name")
    if os_name != "windows" and target is not Target.WINDOWS:
        return []
    # (what, path, container) of each field set; most pods set none of them, which a
    # key-set test finds in C.
    present: list[tuple[str, Path, str | None]] = []
    if not _SPEC_FIELDS.isdisjoint(spec):
        for name in _WINDOWS_SPEC_TRUE:
            if spec.get(name) is True:
                present.append((f"{name}: true", (*at, name), None))
        for name in _WINDOWS_SPEC_SET:
            if spec.get(name) is not None:
                present.append((name, (*at, name), None))
    context = spec.get("securityContext")
    if type(context) is dict and not _POD_CONTEXT_FIELDS.isdisjoint(context):
        for name in _WINDOWS_POD_CONTEXT:
            if context.get(name) is not None:
                present.append((f"securityContext.{name}", (*at, "securityContext", name),
                                None))
    for container in containers:
        context = container.context
        if context is None or _CONTAINER_CONTEXT_FIELDS.isdisjoint(context):
            continue
        for name in _WINDOWS_CONTAINER_CONTEXT:
            if context.get(name) is not None:
                present.append((f"securityContext.{name}",
                                (*container.path, "securityContext", name), container.name))
    if not present:
        return []
    rule = RULES_BY_ID["windows-forbidden-field"]
    declared = os_name == "windows"
    severity = rule.severity if declared else (rule.severity_without_os or rule.severity)
    if declared:
        tail = "cannot be set on a Windows pod: the API server rejects the pod; remove it."
        detail = f"API server: \"{_API_WINDOWS}\" (spec.os.name is windows)."
    else:
        tail = "does nothing on Windows nodes; remove it before setting spec.os.name: windows."
        detail = (
            f"The API server rejects it (\"{_API_WINDOWS}\") once spec.os.name is windows; "
            "without it the pod is only pinned to Windows nodes."
        )
    return [Finding(rule, severity, f"{what} {tail}", path, container, detail)
            for what, path, container in present]


# --- unknown-field: keys the API server does not decode ---------------------------------

# How a finding names each level, after "unknown field X in".
_LEVELS: Mapping[str, str] = {
    "PodTemplateSpec": "pod template",
    "PodSpec": "pod spec",
    "PodSecurityContext": "pod securityContext",
    "WindowsSecurityContextOptions": "windowsOptions",
    "Container": "container",
    "EphemeralContainer": "ephemeral container",
    "SecurityContext": "container securityContext",
}
# Where a field put at the wrong level belongs, in the order a pod is written.
_HOMES = ("PodSpec", "PodSecurityContext", "WindowsSecurityContextOptions", "Container",
          "SecurityContext")
_LOWERED: Mapping[str, Mapping[str, str]] = {
    kind: {name.lower(): name for name in names} for kind, names in FIELDS.items()
}


def _unknown_fields(pod: PodObject, containers: Sequence[_Container]) -> list[Finding]:
    """Keys that are no field of their core/v1 type, at each level the kubelet's decision
    reads. One C-level key-set test per level (``issuperset`` over the dict's keys, no set
    built) passes the pods that have none, which is nearly all."""
    found: list[Finding] = []
    spec = pod.spec
    at = pod.spec_path
    if len(at) > 1:  # a workload: its pod template
        template: Any = pod.manifest
        for key in at[:-1]:
            template = template.get(key) if type(template) is dict else None
        if type(template) is dict and not POD_TEMPLATE_SPEC.issuperset(template):
            _unknown(found, "PodTemplateSpec", template, at[:-1], None)
    if not POD_SPEC.issuperset(spec):
        _unknown(found, "PodSpec", spec, at, None)
    context = spec.get("securityContext")
    if type(context) is dict:
        if not POD_SECURITY_CONTEXT.issuperset(context):
            _unknown(found, "PodSecurityContext", context, (*at, "securityContext"), None)
        options = context.get("windowsOptions")
        if type(options) is dict and not WINDOWS_SECURITY_CONTEXT_OPTIONS.issuperset(options):
            _unknown(found, "WindowsSecurityContextOptions", options,
                     (*at, "securityContext", "windowsOptions"), None)
    for container in containers:
        if not CONTAINER.issuperset(container.entry):
            kind = "EphemeralContainer" if container.path[-2] == "ephemeralContainers" \
                else "Container"
            if not FIELDS[kind].issuperset(container.entry):
                _unknown(found, kind, container.entry, container.path, container.name)
        context = container.context
        if context is None:
            continue
        if not SECURITY_CONTEXT.issuperset(context):
            _unknown(found, "SecurityContext", context, (*container.path, "securityContext"),
                     container.name)
        options = container.options
        if options is not None and not WINDOWS_SECURITY_CONTEXT_OPTIONS.issuperset(options):
            _unknown(found, "WindowsSecurityContextOptions", options,
                     (*container.path, "securityContext", "windowsOptions"), container.name)
    return found


def _unknown(
    found: list[Finding], kind: str, node: Mapping[Any, Any], at: Path, container: str | None
) -> None:
    rule = RULES_BY_ID["unknown-field"]
    known = FIELDS[kind]
    first, last = FIELDS_RELEASES
    for key in [key for key in node if key not in known]:  # in the object's order
        name = key if type(key) is str else str(key)
        path = (*at, name)
        hint, case_only = _field_hint(name, kind)
        found.append(Finding(
            rule, rule.severity,
            f"unknown field {_key(name)} in {_LEVELS[kind]}" + (f" ({hint})" if hint else "")
            + ": the API server refuses or drops it.",
            path, container,
            f"{kind} (k8s.io/api core/v1) has no field {_key(name)} in Kubernetes "
            f"{first}-{last}" + ("; field names are case-sensitive" if case_only else "")
            + ". kubectl apply, strict by default, fails: the API server answers strict "
            f"decoding error: unknown field \"{_json_path(path)}\". With field validation "
            "Warn (the API server's default for a client that sends none) or Ignore, the API "
            "server drops the field and the pod runs without it.",
        ))


def _field_hint(name: str, kind: str) -> tuple[str, bool]:
    """("did you mean X?", whether only the case differs) for a field of ``kind`` that
    differs in case; else the level a field of another type belongs to; else a field of
    ``kind`` close to ``name``; else nothing."""
    lowered = name.lower()
    same = _LOWERED[kind].get(lowered)
    if same is not None:
        return f"did you mean {same}?", True
    for home in _HOMES:
        elsewhere = _LOWERED[home].get(lowered) if home != kind else None
        if elsewhere is not None:
            return f"{elsewhere} belongs in {_LEVELS[home]}", elsewhere != name
    close = difflib.get_close_matches(lowered, _LOWERED[kind], n=1, cutoff=0.75)
    if close:
        return f"did you mean {_LOWERED[kind][close[0]]}?", False
    return "", False


def _key(name: str) -> str:
    """A key as written when it is a plain name, else quoted (and clipped)."""
    return name if _PLAIN_KEY.fullmatch(name) else _clip(name)


_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,59}")


def _json_path(path: Path) -> str:
    """The path as the API server's strict decoding error writes it: spec.containers[0].x."""
    text = ""
    for part in path:
        text += f"[{part}]" if type(part) is int else f".{part}" if text else str(part)
    return text


def _gmsa(
    pod: PodObject, pod_options: object, containers: Sequence[_Container]
) -> list[Finding]:
    found = []
    for owner in (None, *containers):
        options = pod_options if owner is None else owner.options
        if type(options) is not dict:
            continue
        spec_name = options.get("gmsaCredentialSpecName")
        if not isinstance(spec_name, str) or options.get("gmsaCredentialSpec") is not None:
            continue
        rule = RULES_BY_ID["gmsa-spec-missing"]
        path = pod.spec_path if owner is None else owner.path
        found.append(Finding(
            rule, rule.severity,
            "gmsaCredentialSpecName without gmsaCredentialSpec: only the GMSA webhook fills "
            "it in; check the webhook runs.",
            (*path, "securityContext", "windowsOptions", "gmsaCredentialSpecName"),
            None if owner is None else owner.name,
            f"gmsaCredentialSpecName {_clip(spec_name)}: the kubelet sends only the spec "
            "contents (gmsaCredentialSpec), which the GMSA admission webhook fills in; "
            "without the webhook the container gets no GMSA identity.",
        ))
    return found


def _on_windows(target: Target, conditional: str, finding: Finding) -> Finding:
    """A windows_nodes_only finding for a pod pinned to no OS: said conditionally ("if
    this pod runs on a Windows node, ..."), one severity level lower."""
    if target is not Target.UNTARGETED or not finding.rule.windows_nodes_only:
        return finding
    return dataclasses.replace(
        finding, severity=finding.rule.severity_for(target),
        message=conditional,
        detail=finding.detail + (" " if finding.detail else "") + (
            "No OS field, node selector or affinity pins this pod to an OS; --assume-windows "
            "checks such pods as Windows pods."
        ),
    )


def _clip(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")


def rule_page(rule_id: str) -> str:
    """The documentation of a rule (markdown), as ``check --explain`` prints it and the
    docs site shows it (docs/rules/ is generated from these pages)."""
    from importlib import resources

    if rule_id not in RULES_BY_ID:
        raise KeyError(rule_id)
    return (resources.files("kubelet_winnet._lint") / "pages" / f"{rule_id}.md").read_text(
        encoding="utf-8"
    )


def help_url(rule_id: str, base: str | None) -> str | None:
    """The address of a rule's page under the documentation base the user configured
    (``{rule}`` in it is replaced by the id, else ``<id>.md`` is appended), or None
    without a base: never a guessed address."""
    if not base:
        return None
    if "{rule}" in base:
        return base.replace("{rule}", rule_id)
    return f"{base}{'' if base.endswith('/') else '/'}{rule_id}.md"


_COMMENT = re.compile(r"#\s*" + re.escape(IGNORE_COMMENT) + r"(?:\s+(\S+))?(?:\s+(.*?))?\s*$")


def ignore_comment(line: str) -> tuple[str, str] | None:
    """``(rule id, reason)`` of a ``# kubelet-winnet:ignore RULE reason`` comment on
    ``line`` (either may be empty: the caller says what is missing), or None."""
    found = _COMMENT.search(line)
    if found is None:
        return None
    return found.group(1) or "", found.group(2) or ""


def nearest_rule(name: str) -> str | None:
    """The rule id closest to a misspelt one, if any is close."""
    close = difflib.get_close_matches(name, RULES_BY_ID, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_ignores(ignored: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The ids of :func:`ignored_rules` that name no rule, each with the nearest rule
    id."""
    return [(name, nearest_rule(name)) for name in ignored if name not in RULES_BY_ID]


def ignored_rules(pod: PodObject) -> dict[str, str]:
    """Rule ids the object or its pod template opts out of, with the reasons given."""
    ignored: dict[str, str] = {}
    for metadata in (pod.manifest.get("metadata"), pod.template_metadata):
        annotations = metadata.get("annotations") if type(metadata) is dict else None
        if type(annotations) is not dict:
            continue
        for key, value in annotations.items():
            if isinstance(key, str) and key.startswith(IGNORE_PREFIX):
                ignored[key[len(IGNORE_PREFIX):]] = value if isinstance(value, str) else ""
    return ignored
