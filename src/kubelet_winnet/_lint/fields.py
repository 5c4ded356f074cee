"""The JSON field names of the Kubernetes types a pod is made of, at the levels the
kubelet's decision reads (the ``unknown-field`` rule of ``check``).

Upstream facts: the ``json:"..."`` tags of the structs in k8s.io/api core/v1 types.go
(staging/src/k8s.io/api/core/v1/types.go), as each release publishes them in its OpenAPI
definitions ``io.k8s.api.core.v1.<Type>``. Derived from the per-release JSON schemas that
the PyPI package kubernetes-validate 1.37.0 ships (kubernetes-json-schema/v1.26.0-local-strict
to v1.37.0-local-strict, ``_definitions.json``): for each type, the union of the
``properties`` over 1.26 (the oldest kubelet the project models) to 1.37 (the newest
release any schema source holds; 1.38's is not published there yet), so that a field
valid in any of those releases is never reported. A comment names the first release of
each field added after 1.26. tests/lint/test_fields.py checks these sets against every
such schema under CI: nothing a schema has is missing, nothing here is in no schema.

Matching is exact: the API server decodes JSON case-sensitively (sigs.k8s.io/json), so
``hostprocess`` is not ``hostProcess``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CONTAINER",
    "EPHEMERAL_CONTAINER",
    "FIELDS",
    "FIELDS_RELEASES",
    "POD_SECURITY_CONTEXT",
    "POD_SPEC",
    "POD_TEMPLATE_SPEC",
    "SECURITY_CONTEXT",
    "WINDOWS_SECURITY_CONTEXT_OPTIONS",
]

# The releases the sets are the union over (kubernetes-validate's schemas).
FIELDS_RELEASES = ("1.26", "1.37")

POD_TEMPLATE_SPEC = frozenset({"metadata", "spec"})

POD_SPEC = frozenset({
    "activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers",
    "dnsConfig", "dnsPolicy", "enableServiceLinks", "ephemeralContainers",
    "evictionResponders",  # 1.37
    "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostUsers", "hostname",
    "hostnameOverride",  # 1.34
    "imagePullSecrets", "initContainers", "nodeName", "nodeSelector", "os", "overhead",
    "preemptionPolicy", "priority", "priorityClassName", "readinessGates", "resourceClaims",
    "resources",  # 1.32
    "restartPolicy", "runtimeClassName", "schedulerName", "schedulingGates",
    "schedulingGroup",  # 1.36
    "securityContext", "serviceAccount", "serviceAccountName", "setHostnameAsFQDN",
    "shareProcessNamespace", "subdomain", "terminationGracePeriodSeconds", "tolerations",
    "topologySpreadConstraints", "volumes",
    "workloadRef",  # 1.35 only
})

POD_SECURITY_CONTEXT = frozenset({
    "appArmorProfile",  # 1.30
    "fsGroup", "fsGroupChangePolicy", "runAsGroup", "runAsNonRoot", "runAsUser",
    "seLinuxChangePolicy",  # 1.32
    "seLinuxOptions", "seccompProfile", "supplementalGroups",
    "supplementalGroupsPolicy",  # 1.31
    "sysctls", "windowsOptions",
})

WINDOWS_SECURITY_CONTEXT_OPTIONS = frozenset({
    "gmsaCredentialSpec", "gmsaCredentialSpecName", "hostProcess", "runAsUserName",
})

CONTAINER = frozenset({
    "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle",
    "livenessProbe", "name", "ports", "readinessProbe",
    "resizePolicy",  # 1.27
    "resources",
    "restartPolicy",  # 1.28
    "restartPolicyRules",  # 1.34
    "securityContext", "startupProbe", "stdin", "stdinOnce", "terminationMessagePath",
    "terminationMessagePolicy", "tty", "volumeDevices", "volumeMounts", "workingDir",
})

EPHEMERAL_CONTAINER = CONTAINER | {"targetContainerName"}

SECURITY_CONTEXT = frozenset({
    "allowPrivilegeEscalation",
    "appArmorProfile",  # 1.30
    "capabilities", "privileged", "procMount", "readOnlyRootFilesystem", "runAsGroup",
    "runAsNonRoot", "runAsUser", "seLinuxOptions", "seccompProfile", "windowsOptions",
})

# core/v1 type name -> its fields.
FIELDS: Mapping[str, frozenset[str]] = {
    "PodTemplateSpec": POD_TEMPLATE_SPEC,
    "PodSpec": POD_SPEC,
    "PodSecurityContext": POD_SECURITY_CONTEXT,
    "WindowsSecurityContextOptions": WINDOWS_SECURITY_CONTEXT_OPTIONS,
    "Container": CONTAINER,
    "EphemeralContainer": EPHEMERAL_CONTAINER,
    "SecurityContext": SECURITY_CONTEXT,
}
