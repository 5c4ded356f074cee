"""The ``check`` rules applied: :func:`check_pod`, one pure function from a manifest's pod
to its findings (ignore annotations not applied yet). The kubelet and API-server texts are
quoted from upstream (kubelet: pkg/kubelet/kuberuntime/kuberuntime_sandbox.go,
``generatePodSandboxWindowsConfig``; API server: pkg/apis/core/validation/validation.go,
``validateWindowsHostProcessPod``, ``validateHostNetwork``, ``validateWindows``). The rules
themselves, as data, are :data:`kubelet_winnet._lint.rules.RULES`.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kubelet_winnet._judgement import NodeKnowledge, Verdict, judge
from kubelet_winnet._kubelet.pod import CONTAINER_KINDS, get_object, get_objects, read_pod
from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile
from kubelet_winnet._kubelet.rules import (
    ContainerFacts,
    PodFacts,
    Refusal,
    all_refusals,
    has_host_process_container,
)
from kubelet_winnet._lint.dns import NOT_READ, asks_own_dns, dns_findings
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
from kubelet_winnet._lint.reach import HostNetworkReach
from kubelet_winnet._lint.rules import RULES_BY_ID, Finding, Path, Severity
from kubelet_winnet._lint.targeting import PodObject, Target
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import WinnetError
from kubelet_winnet.runtime._releases import HOST_PROCESS_IN_UVM, from_release, shim_lines

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.profile import GateResolution

__all__ = ["check_pod"]


def _container_ports(containers: Sequence[_Container]) -> list[int]:
    """The containerPorts of the init and regular containers (the ones API defaulting
    gives a hostPort in a hostNetwork pod), in order, each once."""
    ports: dict[int, None] = {}
    for container in containers:
        if container.facts.kind != "ephemeralContainers":
            for port in container.facts.ports:
                if port.container_port:
                    ports[port.container_port] = None
    return list(ports)


# --- the pod's containers, as the kubelet model reads them ----------------------------


class _Container(NamedTuple):
    """One container of the kubelet model's facts, with where it is and what it holds."""

    facts: ContainerFacts
    path: Path  # from the manifest root
    name: str  # as findings name it
    entry: Mapping[str, Any]
    context: Mapping[str, Any] | None  # securityContext
    options: Mapping[str, Any] | None  # securityContext.windowsOptions


def _containers(pod: PodObject, facts: PodFacts) -> list[_Container]:
    """The containers of ``facts`` (read by the kubelet model's reader) beside the objects
    they were read from, through the same getters: one entry per fact, in visiting order."""
    found = []
    spec, at = pod.spec, ".".join(pod.spec_path) + "."
    read = iter(facts.containers)
    for kind in CONTAINER_KINDS:
        for index, entry in enumerate(get_objects(spec, kind, at)):
            where = f"{at}{kind}[{index}]."
            context = get_object(entry, "securityContext", where)
            options = (None if context is None
                       else get_object(context, "windowsOptions", f"{where}securityContext."))
            container = next(read)
            found.append(_Container(container, (*pod.spec_path, kind, index),
                                    container.name or f"{kind}[{index}]", entry, context,
                                    options))
    return found


def _dig(node: object, *keys: str) -> Any:
    for key in keys:
        if type(node) is not dict:
            return None
        node = node.get(key)
    return node


# --- the rules --------------------------------------------------------------------------

# The kubelet's refusals quote the kubelet model's texts (one home: _kubelet/rules.py).
_API_MIXED = (
    "If pod contains any hostProcess containers then all containers must be HostProcess "
    "containers"
)
_API_NEEDS_NETWORK = "hostNetwork must be true if pod contains any hostProcess containers"
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
    node: NodeKnowledge | None = None, verdict: Verdict | None = None, *,
    facts: PodFacts | None = None, profile: GateResolution | None = None,
) -> list[Finding]:
    """Every finding for one pod (ignore annotations not applied yet). ``node``: what is
    known of the node (``check`` knows the RuntimeClasses of its input and assumes
    containerd); ``verdict``: the judgement already made for the pod on its node
    (``audit``); else the pod is judged when a rule needs it, under ``profile`` (the
    newest kubelet that sends hostNetwork by default). The pod is read by the kubelet
    model's reader (``facts``, when the caller read them already): ``InvalidPodError``
    for a pod it refuses."""
    facts = facts if facts is not None else read_pod(pod.manifest)
    host_network = facts.host_network
    containers = _containers(pod, facts)
    any_host_process = has_host_process_container(facts)
    refusals = all_refusals(facts) if any_host_process else ()
    # Every container HostProcess (AllContainersAreWindowsHostProcess, with one at least).
    host_process_pod = any_host_process and not any(r.rule == "3a" for r in refusals)
    found = _refusals(pod, facts, containers, refusals)
    own_dns = asks_own_dns(pod.spec)
    if verdict is None and (host_network or host_process_pod or own_dns):
        # one judgement per pod; check reads no CNI file, so the DNS lists do not matter
        verdict = _judged(pod, node, facts, profile, NOT_READ if own_dns else None)
    if verdict is not None and verdict.host_network_effect == "ignored":
        rule = RULES_BY_ID["host-network-ignored"]
        container_ports = _container_ports(containers)
        found.append(_on_windows(target, reach.conditional, Finding(
            rule, rule.severity, reach.message, (*pod.spec_path, "hostNetwork"), None,
            reach.detail_with_ports(container_ports) if container_ports else reach.detail,
        )))
    if host_network:
        found += _host_port_mismatch(containers)
    found += _forbidden(pod, target, containers)
    found += _unknown_fields(pod, containers)
    found += _gmsa(pod, facts, containers)
    if host_process_pod:
        found += _hyperv(pod, verdict)
    if own_dns:
        found += dns_findings(pod, verdict, target is not Target.UNTARGETED)
    return found


def _refusals(pod: PodObject, facts: PodFacts, containers: Sequence[_Container],
              refusals: Sequence[Refusal]) -> list[Finding]:
    """The kubelet's refusals (``all_refusals``: its own texts, with the API server's
    beside them) and the API server's own about HostProcess."""
    found: list[Finding] = []
    linted = {id(c.facts): c for c in containers} if refusals else {}
    for refusal in refusals:
        host_process = [linted[id(c)] for c in refusal.host_process]
        if refusal.rule == "3a":
            rule = RULES_BY_ID["host-process-mixed"]
            plain = [linted[id(c)] for c in refusal.plain]
            first = plain[0]
            found.append(Finding(
                rule, rule.severity,
                "HostProcess and non-HostProcess containers in one pod: the kubelet refuses "
                "it; make all or none HostProcess.",
                (*first.path, "securityContext", "windowsOptions", "hostProcess")
                if _own_host_process(first) is not None else first.path,
                first.name,
                f"HostProcess: {_names(host_process)}; not HostProcess: {_names(plain)}. "
                f"Kubelet: \"{refusal.error}\"; API server: \"{_API_MIXED}\".",
            ))
        elif refusal.rule == "3b":
            rule = RULES_BY_ID["host-process-needs-host-network"]
            found.append(Finding(
                rule, rule.severity,
                "HostProcess containers without hostNetwork: true: the kubelet refuses the "
                "pod; set spec.hostNetwork: true.",
                (*pod.spec_path, "hostNetwork"),
                None,
                f"HostProcess: {_names(host_process)}. Kubelet: \"{refusal.error}\"; "
                f"API server: \"{_API_NEEDS_NETWORK}\".",
            ))
        else:  # step 6: each HostProcess container sets hostProcess: true itself
            rule = RULES_BY_ID["host-process-pod-false"]
            found += [Finding(
                rule, rule.severity,
                "a HostProcess container in a pod with hostProcess: false: the kubelet "
                "refuses the pod; make the two agree.",
                (*container.path, "securityContext", "windowsOptions", "hostProcess"),
                container.name,
                f"Kubelet: \"{refusal.error}\"; API server: \"{_API_IDENTICAL}\".",
            ) for container in host_process]
    pod_options = facts.windows_options
    if pod_options is not None and pod_options.host_process is True:
        # validateWindowsHostProcessPod (pkg/apis/core/validation/validation.go): a
        # container's hostProcess, when set, must equal the pod's.
        rule = RULES_BY_ID["host-process-override"]
        for container in containers:
            if _own_host_process(container) is False:
                found.append(Finding(
                    rule, rule.severity,
                    "hostProcess: false on a container of a pod with hostProcess: true: the "
                    "API server rejects the pod; make them agree.",
                    (*container.path, "securityContext", "windowsOptions", "hostProcess"),
                    container.name, f"API server: \"{_API_IDENTICAL_TRUE}\".",
                ))
    return found


def _own_host_process(container: _Container) -> bool | None:
    """The container's own ``windowsOptions.hostProcess``, None when it sets none."""
    options = container.facts.windows_options
    return None if options is None else options.host_process


def _host_port_mismatch(containers: Sequence[_Container]) -> list[Finding]:
    """Under hostNetwork the API server requires each hostPort of an init or regular
    container to equal its containerPort (validateHostNetwork)."""
    found: list[Finding] = []
    rule = RULES_BY_ID["host-port-mismatch"]
    for container in containers:
        if container.facts.kind == "ephemeralContainers":
            continue
        for number, (container_port, host_port, *_) in enumerate(container.facts.ports):
            # an unset containerPort (0) is the API server's other error, not this one
            if host_port and container_port and host_port != container_port:
                found.append(Finding(
                    rule, rule.severity,
                    f"hostPort {host_port} with containerPort {container_port} under "
                    "hostNetwork: the API server rejects the pod; set hostPort to "
                    f"{container_port}.",
                    (*container.path, "ports", number, "hostPort"),
                    container.facts.name or None,
                    f"API server: \"{_API_HOST_PORT}\". Under hostNetwork the pod "
                    f"listens on the node's port {container_port}.",
                ))
    return found


def _judged(pod: PodObject, node: NodeKnowledge | None, facts: PodFacts | None,
            profile: GateResolution | None,
            dns: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None,
            ) -> Verdict | None:
    """The judgement of a pod ``check`` reads (on containerd, its release not known), or
    None for a pod the kubelet model cannot read (other rules say why)."""
    try:
        return judge(pod.manifest, profile or kubelet_profile(DEFAULT_KUBELET_VERSION),
                     node or NodeKnowledge(runtime="containerd"), facts=facts, dns=dns)
    except WinnetError:
        return None


_HYPERV_DETAIL = (
    f"hcsshim {HOST_PROCESS_IN_UVM.hcsshim} and later (PR #{HOST_PROCESS_IN_UVM.pull_request}; "
    f"the shim of containerd {shim_lines(HOST_PROCESS_IN_UVM)}) run HostProcess containers "
    "under Hyper-V isolation inside the utility "
    "VM, which has no network: containerd gives a HostProcess pod no network namespace. "
    "hostNetwork: true does not change that."
)


def _hyperv(pod: PodObject, verdict: Verdict | None) -> list[Finding]:
    """hcsshim PR #2531 (``HOST_PROCESS_IN_UVM``): a HostProcess pod whose
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
            "HostProcess under Hyper-V isolation: no network on "
            f"{from_release(HOST_PROCESS_IN_UVM)}; {fix}.",
            path, None, f"{has}: {network.condition}. {_HYPERV_DETAIL}",
        )]
    if not name:  # the node's default handler, not known (audit without the node's files)
        return [Finding(
            rule, Severity.INFO,
            "HostProcess on the node's default runtime handler: if that handler is Hyper-V "
            "isolated, the pod gets no network; check the node's containerd "
            "default_runtime_name.",
            path, None,
            f"{owner} is not known: {network.condition}. {_HYPERV_DETAIL}",
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


def _gmsa(pod: PodObject, facts: PodFacts, containers: Sequence[_Container]) -> list[Finding]:
    found = []
    for owner in (None, *containers):
        options = facts.windows_options if owner is None else owner.facts.windows_options
        if options is None:
            continue
        spec_name = options.gmsa_credential_spec_name
        if spec_name is None or options.gmsa_credential_spec is not None:
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
    return repr(cut(text, 60))

