"""The admission policy: the ``check`` rules an API server can decide, as CEL.

:func:`policy_objects` builds a ValidatingAdmissionPolicy (``admissionregistration.k8s.io/v1``,
GA in 1.30) and its binding from the data ``check`` runs on: the rule ids and docs URLs
(:data:`~kubelet_winnet._lint.rules.RULES`), the OS labels and the three targeting routes
(:mod:`~kubelet_winnet._lint.targeting`), where each workload keeps its pod template
(``WORKLOAD_TEMPLATE_PATHS``), the Linux-only fields and the ignore annotations. Every field
is read with ``?.``/``orValue`` (CEL environment 1.28+): a sparse object never makes an
evaluation error. Pure: plain dicts out, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet._lint.checks import (
    _API_HOST_PORT,
    _API_IDENTICAL,
    _API_IDENTICAL_TRUE,
    _API_MIXED,
    _API_NEEDS_NETWORK,
    _WINDOWS_CONTAINER_CONTEXT,
    _WINDOWS_POD_CONTEXT,
    _WINDOWS_SPEC_SET,
    _WINDOWS_SPEC_TRUE,
)
from kubelet_winnet._lint.ignores import IGNORE_PREFIX
from kubelet_winnet._lint.reach import HostNetworkReach
from kubelet_winnet._lint.rules import RULES_BY_ID
from kubelet_winnet._lint.targeting import OS_LABELS
from kubelet_winnet.errors import InvalidArgumentError

__all__ = [
    "ACTIONS",
    "DEFAULT_ACTIONS",
    "DEFAULT_NAME",
    "MESSAGE_LIMIT",
    "NOT_IN_POLICY",
    "POLICY_RULES",
    "RESOURCES",
    "PolicyOptions",
    "policy_objects",
]

DEFAULT_NAME = "kubelet-winnet"
ACTIONS = ("Deny", "Warn", "Audit")  # the binding's validationActions, in this order
DEFAULT_ACTIONS = ("Warn", "Audit")
# The API server prefixes its own text ("Validation failed for ValidatingAdmissionPolicy
# '<policy>' with binding '<binding>': ") and may truncate a warning past 256 characters.
MESSAGE_LIMIT = 120

# Where each matched kind lives: API group and resource (all at version v1).
RESOURCES: Mapping[str, tuple[str, str]] = {
    "Pod": ("", "pods"),
    "Deployment": ("apps", "deployments"),
    "DaemonSet": ("apps", "daemonsets"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicaSet": ("apps", "replicasets"),
    "ReplicationController": ("", "replicationcontrollers"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
    "PodTemplate": ("", "podtemplates"),
}

# Why the other rules stay out: the API server rejects those objects before any
# validating admission runs (pkg/apis/core/validation/validation.go, ValidatePodSpec for
# pods and pod templates alike), or the object alone cannot decide the rule.
NOT_IN_POLICY: Mapping[str, str] = {
    "host-process-mixed": f'the API server already rejects such objects ("{_API_MIXED}")',
    "host-process-needs-host-network":
        f'the API server already rejects such objects ("{_API_NEEDS_NETWORK}")',
    "host-process-pod-false": f'the API server already rejects such objects ("{_API_IDENTICAL}")',
    "host-process-override":
        f'the API server already rejects such objects ("{_API_IDENTICAL_TRUE}")',
    "host-port-mismatch":
        f'the API server already rejects such objects ("hostPort {_API_HOST_PORT}")',
    "gmsa-spec-missing": "the GMSA webhook fills in gmsaCredentialSpec on pods only, never on "
        "pod templates, so the object alone does not decide it",
    "host-process-hyperv-no-network": "the handler of the pod's RuntimeClass and the node's "
        "containerd release decide it, and a policy on the pod reads neither",
    "dns-needs-cni-capability": "the node's CNI configuration (its dns capability) decides "
        "whether a pod's own DNS settings take effect, and a policy on the pod does not read "
        "it; only the HostProcess case is certain without it, left to check and audit",
    "unknown-field": "the API server decodes field names itself, before any admission "
        "policy runs: strict field validation rejects the object, Warn or Ignore drops the "
        "field, and a policy never sees it",
}


# --- the variables: check's reading of the object, in CEL ------------------------------

_OS_NAMES = ("windows", "linux")


def _cel_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_cel_string(item) for item in items) + "]"


def _cel_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _select(path: Sequence[str]) -> str:
    return "".join(f".?{key}" for key in path)


def _by_kind(tail: Sequence[str], pod: str) -> str:
    """``dyn(object)`` followed to the pod template, then ``tail``; ``pod`` for a Pod.

    ``dyn`` keeps the API server's per-kind type check from flagging, say, a Pod's lack of
    ``spec.template``: the branches for other kinds are never taken for it.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for kind, path in WORKLOAD_TEMPLATE_PATHS.items():
        groups.setdefault(tuple(path), []).append(kind)
    text = pod
    for path, kinds in reversed(list(groups.items())):
        test = (f"object.kind == {_cel_string(kinds[0])}" if len(kinds) == 1
                else f"object.kind in {_cel_list(kinds)}")
        text = f"{test} ?\n    dyn(object){_select((*path, *tail))} :\n  {text}"
    return text


def _expression_target() -> str:
    # _expression_target in targeting.py: In with only one OS pins it; NotIn with an OS
    # pins the other; the first matching case wins, Windows first.
    values = "e.?values.orValue([])"
    operator = "e.?operator.orValue('')"
    cases = [
        (f"{operator} == 'In' && size({values}) > 0 && {values}.all(v, v == '{name}')", name)
        for name in _OS_NAMES
    ]
    cases += [
        (f"{operator} == 'NotIn' && '{name}' in {values}", other)
        for name, other in zip(_OS_NAMES, reversed(_OS_NAMES), strict=True)
    ]
    chain = "".join(f"\n    {test} ?\n      '{target}' :" for test, target in cases)
    return f"!(e.?key.orValue('') in {_cel_list(OS_LABELS)}) ? '' :{chain}\n    ''"


def _variables() -> list[tuple[str, str]]:
    spec = "variables.spec"
    windows_options = "?securityContext.?windowsOptions.?hostProcess"
    return [
        ("spec", f"({_by_kind(('spec',), 'dyn(object).?spec')}).orValue({{}})"),
        ("annotations", "dyn(object).?metadata.?annotations.orValue({})"),
        ("templateAnnotations",
         f"({_by_kind(('metadata', 'annotations'), 'optional.none()')}).orValue({{}})"),
        # target_of: spec.os.name, then each OS label of the nodeSelector, then the
        # required node affinity when every term pins the same OS (a term's last
        # expression that pins one decides it).
        ("osName",
         f"{spec}.?os.?name.orValue('') in {_cel_list(_OS_NAMES)} ? {spec}.os.name : ''"),
        ("selectorOS",
         f"{_cel_list(OS_LABELS)}\n  .map(l, {spec}.?nodeSelector[?l].orValue(''))\n"
         f"  .filter(v, v in {_cel_list(_OS_NAMES)})"),
        ("termOS",
         f"{spec}.?affinity.?nodeAffinity.?requiredDuringSchedulingIgnoredDuringExecution\n"
         "  .?nodeSelectorTerms.orValue([])\n"
         f"  .map(t, t.?matchExpressions.orValue([]).map(e,\n    {_expression_target()})\n"
         "  .filter(x, x != ''))\n"
         "  .map(ts, size(ts) > 0 ? ts[size(ts) - 1] : '')"),
        ("target",
         "variables.osName != '' ? variables.osName :\n"
         "  size(variables.selectorOS) > 0 ? variables.selectorOS[0] :\n"
         "  size(variables.termOS) > 0 && variables.termOS[0] != '' &&\n"
         "    variables.termOS.all(x, x == variables.termOS[0]) ? variables.termOS[0] :\n"
         "  ''"),
        # Effective HostProcess: the container's own setting, else the pod's; over init,
        # regular and ephemeral containers (the kubelet's visiting order).
        ("containers",
         " +\n".join(f"{spec}.?{kind}.orValue([])"
                     for kind in ("initContainers", "containers", "ephemeralContainers"))),
        ("podHostProcess", f"{spec}.{windows_options}.orValue(false)"),
        ("hostProcess",
         f"variables.containers.map(c,\n  c.{windows_options}.orValue(variables.podHostProcess))"),
    ]


def _ignored(rule_id: str) -> str:
    key = _cel_string(IGNORE_PREFIX + rule_id)
    return f"{key} in variables.annotations ||\n{key} in variables.templateAnnotations"


def _forbidden_fields() -> str:
    spec = "variables.spec"
    tests = [f"{spec}.?{name}.orValue(false)" for name in _WINDOWS_SPEC_TRUE]
    tests += [f"has({spec}.{name})" for name in _WINDOWS_SPEC_SET]
    tests.append(f"{_cel_list(_WINDOWS_POD_CONTEXT)}.exists(f,\n"
                 f"    f in {spec}.?securityContext.orValue({{}}))")
    tests.append(f"variables.containers.exists(c, {_cel_list(_WINDOWS_CONTAINER_CONTEXT)}"
                 ".exists(f,\n    f in c.?securityContext.orValue({})))")
    return "(" + " ||\n  ".join(tests) + ")"


# rule id -> CEL that is true when check reports the rule for a Windows-targeted object.
POLICY_RULES: Mapping[str, str] = {
    "host-network-ignored":
        "variables.spec.?hostNetwork.orValue(false) && !variables.hostProcess.exists(h, h)",
    "windows-forbidden-field": _forbidden_fields(),
}


def _message(rule_id: str, reach: HostNetworkReach) -> str:
    if rule_id == "host-network-ignored":
        text = f"{rule_id}: hostNetwork: true is ignored on this Windows pod"
        sends = ("sends NODE, containerd drops it" if reach.selected_carries_node
                 else "does not send NODE")
        full = f"{text}; {reach.selected} {sends}"
        # With --feature-gates the kubelet's name is long: then the fix instead.
        return full if len(full) <= MESSAGE_LIMIT else (
            f"{text} unless all its containers are HostProcess"
        )
    return (f"{rule_id}: this Windows pod sets a field Windows nodes ignore (hostPID, "
            "runAsUser, seccompProfile, ...)")


# --- the objects -----------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyOptions:
    """What ``kubelet-winnet policy`` takes; the defaults are its defaults."""

    name: str = DEFAULT_NAME
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    rules: tuple[str, ...] = tuple(POLICY_RULES)
    # A LabelSelector (matchLabels/matchExpressions) for the binding, and namespaces left out.
    namespace_selector: Mapping[str, Any] = field(default_factory=dict)
    exclude_namespaces: tuple[str, ...] = ()


def policy_objects(
    options: PolicyOptions, reach: HostNetworkReach
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ValidatingAdmissionPolicy and its ValidatingAdmissionPolicyBinding."""
    unknown = [rule for rule in options.rules if rule not in POLICY_RULES]
    if unknown:  # the CLI says why first; a caller of this function gets this
        raise InvalidArgumentError(
            "rules", f"rules of the policy ({', '.join(POLICY_RULES)})", ", ".join(unknown)
        )
    groups: dict[str, list[str]] = {}
    for group, resource in RESOURCES.values():
        groups.setdefault(group, []).append(resource)
    validations = []
    for rule_id in POLICY_RULES:
        if rule_id not in options.rules:
            continue
        validations.append({
            "expression": f"variables.target != 'windows' ||\n{_ignored(rule_id)} ||\n"
                          f"!({POLICY_RULES[rule_id]})",
            "message": _message(rule_id, reach),
        })
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {
            "name": options.name,
            # Each rule's page in the project's docs, by its path in the source tree (the
            # project has no confirmed address to point at).
            "annotations": {
                f"kubelet-winnet.io/{rule_id}": RULES_BY_ID[rule_id].help_uri
                for rule_id in POLICY_RULES if rule_id in options.rules
            },
        },
        "spec": {
            # An evaluation error never rejects a request: with Deny it is ignored, with
            # Warn or Audit it is reported the way a finding is.
            "failurePolicy": "Ignore" if "Deny" in options.actions else "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [group], "apiVersions": ["v1"],
                     "operations": ["CREATE", "UPDATE"], "resources": resources}
                    for group, resources in groups.items()
                ],
            },
            "variables": [
                {"name": name, "expression": expression} for name, expression in _variables()
            ],
            "validations": validations,
        },
    }
    match: dict[str, Any] = {}
    selector = {key: list(value) if isinstance(value, list) else value
                for key, value in options.namespace_selector.items()}
    if options.exclude_namespaces:
        selector["matchExpressions"] = [*selector.get("matchExpressions", []), {
            "key": "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": list(options.exclude_namespaces),
        }]
    if selector:
        match["namespaceSelector"] = selector
    binding: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": options.name},
        "spec": {
            "policyName": options.name,
            "validationActions": [a for a in ACTIONS if a in options.actions],
        },
    }
    if match:
        binding["spec"]["matchResources"] = match
    return policy, binding

