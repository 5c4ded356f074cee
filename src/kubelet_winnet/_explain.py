"""Why a kubelet sends what it sends for a pod, and where ``hostNetwork`` gets lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._featuregates import MODELLED_GATES, WINDOWS_HOST_NETWORK, GateResolution
from kubelet_winnet._messages import sandbox_config_message
from kubelet_winnet._pod import read_pod, spec_path
from kubelet_winnet._rules import (
    ContainerFacts,
    PodFacts,
    Trace,
    decide_sandbox,
)
from kubelet_winnet._translate import kubelet_profile
from kubelet_winnet._versions import DEFAULT_KUBELET_VERSION, GateStage
from kubelet_winnet.errors import SandboxConfigError

__all__ = ["ExplainStep", "Explanation", "Warning", "WarningCode", "explain"]


class WarningCode:
    """Stable identifiers of :class:`Warning` kinds (for filtering and the CLI)."""

    HOST_NETWORK_GATE_OFF = "host-network-gate-off"
    HOST_NETWORK_WITHDRAWN = "host-network-withdrawn"
    CONTAINERD_IGNORES_NAMESPACE_OPTIONS = "containerd-ignores-namespace-options"
    GMSA_SPEC_MISSING = "gmsa-spec-missing"
    FEATURE_GATE_NOT_MODELLED = "feature-gate-not-modelled"
    DEPRECATED_FEATURE_GATE = "deprecated-feature-gate"


@dataclass(frozen=True)
class Warning:
    code: str
    message: str
    field: str = ""


@dataclass(frozen=True)
class ExplainStep:
    rule: str  # "gates" or a step of rules.STEPS ("1" .. "6", "3a", "3b")
    text: str


@dataclass(frozen=True)
class Explanation:
    config: api_pb2.WindowsPodSandboxConfig | None
    error: SandboxConfigError | None
    steps: tuple[ExplainStep, ...]
    warnings: tuple[Warning, ...]
    profile: GateResolution = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the config as proto3 JSON (presence kept), steps and warnings."""
        from google.protobuf import json_format

        return {
            "kubeletVersion": str(self.profile.version),
            "windowsPodSandboxConfig": (
                None if self.config is None else json_format.MessageToDict(self.config)
            ),
            "error": None if self.error is None else str(self.error),
            "steps": [{"rule": s.rule, "text": s.text} for s in self.steps],
            "warnings": [
                {"code": w.code, "field": w.field, "message": w.message} for w in self.warnings
            ],
        }


def _gate_step(profile: GateResolution) -> str:
    version = profile.version
    if profile.stage is GateStage.REMOVED:
        return f"kubelet {version}: {WINDOWS_HOST_NETWORK} no longer exists"
    state = "enabled" if profile.enabled else "disabled"
    how = "set explicitly" if profile.explicitly_set else "by default"
    effect = (
        "namespace_options will be set"
        if profile.sets_namespace_options
        else "namespace_options will not be set"
    )
    return (
        f"kubelet {version}: {WINDOWS_HOST_NETWORK} is {profile.stage.value}, {state} "
        f"({how}); {effect}"
    )


def _warnings(
    pod: PodFacts,
    profile: GateResolution,
    config: api_pb2.WindowsPodSandboxConfig | None,
    at: str,
) -> list[Warning]:
    found: list[Warning] = []
    context = None if config is None else config.security_context
    host_process = context is not None and context.host_process
    if pod.host_network and config is not None and not host_process:
        sent_node = context is not None and context.HasField("namespace_options")
        if not sent_node:
            if profile.stage is GateStage.ALPHA:
                found.append(Warning(
                    WarningCode.HOST_NETWORK_GATE_OFF,
                    f"hostNetwork: true is dropped: {WINDOWS_HOST_NETWORK} is disabled on "
                    f"kubelet {profile.version}, so namespace_options is not sent and the "
                    "runtime gives the pod its own network namespace",
                    f"{at}hostNetwork",
                ))
            else:
                found.append(Warning(
                    WarningCode.HOST_NETWORK_WITHDRAWN,
                    f"hostNetwork: true is dropped: kubelet {profile.version} never sets "
                    "namespace_options (KEP-3503 withdrawn in 1.33), so the runtime gives "
                    "the pod its own network namespace; only HostProcess pods get the "
                    "host network",
                    f"{at}hostNetwork",
                ))
        else:
            found.append(Warning(
                WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS,
                "namespace_options.network = NODE is sent, but containerd decides host "
                "networking on Windows from host_process alone: on containerd this pod "
                "gets its own network namespace",
                f"{at}hostNetwork",
            ))
    gmsa_sources = [("securityContext.windowsOptions", pod.windows_options)]
    # Container-level options only where the container sets them: inherited pod-level
    # values were reported once already.
    gmsa_sources += [
        (f"{c.kind}[{i}].securityContext.windowsOptions", c.windows_options)
        for i, c in _indexed(pod)
    ]
    for where, options in gmsa_sources:
        if (
            options is not None
            and options.gmsa_credential_spec_name is not None
            and options.gmsa_credential_spec is None
        ):
            found.append(Warning(
                WarningCode.GMSA_SPEC_MISSING,
                f"gmsaCredentialSpecName {options.gmsa_credential_spec_name!r} without "
                "gmsaCredentialSpec: the kubelet sends only the spec contents, which the "
                "GMSA admission webhook must fill in; without it credential_spec is empty",
                f"{at}{where}.gmsaCredentialSpecName",
            ))
    for line in profile.log_lines:
        found.append(Warning(WarningCode.DEPRECATED_FEATURE_GATE, line, "--feature-gates"))
    for name in profile.not_modelled:
        hint = ""
        if name.lower() in {m.lower() for m in MODELLED_GATES}:
            hint = " (gate names are case-sensitive: did you mean "
            hint += next(m for m in MODELLED_GATES if m.lower() == name.lower()) + "?)"
        found.append(Warning(
            WarningCode.FEATURE_GATE_NOT_MODELLED,
            f"feature gate {name} is not modelled: accepted, assumed not to affect "
            f"Windows sandbox networking{hint}",
            "--feature-gates",
        ))
    return found


def _indexed(pod: PodFacts) -> list[tuple[int, ContainerFacts]]:
    """Containers with their index inside their own list (initContainers[0], ...)."""
    seen: dict[str, int] = {}
    out = []
    for container in pod.containers:
        index = seen.get(container.kind, 0)
        seen[container.kind] = index + 1
        out.append((index, container))
    return out


def explain(
    pod: object,
    *,
    kubelet_version: object = DEFAULT_KUBELET_VERSION,
    feature_gates: object = None,
) -> Explanation:
    """Every decision for ``pod`` in order, the result, and what the pod will not get.

    Input errors (``InvalidPodError``, ``FeatureGateError``, ``UnsupportedVersionError``)
    are raised as by :func:`windows_sandbox_config`; a kubelet refusal is returned in
    ``.error`` with ``.config`` None.
    """
    profile = kubelet_profile(kubelet_version, feature_gates)
    facts = read_pod(pod)
    trace: Trace = []
    decision = decide_sandbox(facts, profile.sets_namespace_options, trace)
    steps = [ExplainStep("gates", _gate_step(profile))]
    steps += [ExplainStep(rule, text) for rule, text in trace]
    config = None
    error = None
    if decision.error is not None:
        error = SandboxConfigError(decision.error, decision.error_rule or "")
    else:
        config = sandbox_config_message(decision)
    return Explanation(
        config=config,
        error=error,
        steps=tuple(steps),
        warnings=tuple(_warnings(facts, profile, config, spec_path(pod))),
        profile=profile,
    )
