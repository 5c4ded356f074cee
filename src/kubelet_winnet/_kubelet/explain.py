"""Why a kubelet sends what it sends for a pod, and where ``hostNetwork`` gets lost."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import quoted
from kubelet_winnet._kubelet.feature_gates import MODELLED_GATES, WINDOWS_HOST_NETWORK
from kubelet_winnet._kubelet.messages import message_json, sandbox_config_message
from kubelet_winnet._kubelet.pod import pod_facts, pod_spec, pod_template
from kubelet_winnet._kubelet.profile import GateResolution
from kubelet_winnet._kubelet.rules import (
    STEP_BY_ID,
    ContainerFacts,
    PodFacts,
    SandboxDecision,
    decide_sandbox,
)
from kubelet_winnet._kubelet.timeline import GateStage
from kubelet_winnet.errors import SandboxConfigError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = ["ExplainStep", "Explanation", "Finding", "WarningCode", "explanation"]


class WarningCode(str, enum.Enum):
    """Stable identifiers of [`Finding`][kubelet_winnet.Finding] kinds (for filtering and the
    CLI); each is
    a ``str`` equal to its value."""

    def __str__(self) -> str:
        return str(self.value)

    HOST_NETWORK_GATE_OFF = "host-network-gate-off"
    HOST_NETWORK_WITHDRAWN = "host-network-withdrawn"
    CONTAINERD_IGNORES_NAMESPACE_OPTIONS = "containerd-ignores-namespace-options"
    GMSA_SPEC_MISSING = "gmsa-spec-missing"
    FEATURE_GATE_NOT_MODELLED = "feature-gate-not-modelled"
    DEPRECATED_FEATURE_GATE = "deprecated-feature-gate"


@dataclass(frozen=True)
class Finding:
    """Something the pod asks for and will not get (or a flag worth a look)."""

    code: WarningCode
    """What kind of finding it is."""
    message: str
    """One sentence for a person."""
    field: str = ""
    """The pod field it is about (``spec.hostNetwork``), or empty."""


@dataclass(frozen=True)
class ExplainStep:
    """One decision of the kubelet, in its order."""

    rule: str
    """``gates``, or the id of a step of the decision table (``1``, ``2.off``, ``3a``, ...)."""
    text: str
    """What the kubelet decided at that step, and why."""


@dataclass(frozen=True)
class Explanation:
    """What [`explain`][kubelet_winnet.explain] returns: the result and how it came about."""

    config: api_pb2.WindowsPodSandboxConfig | None
    """What the kubelet sends, or ``None`` when it refuses the pod."""
    error: SandboxConfigError | None
    """The kubelet's refusal, or ``None``."""
    steps: tuple[ExplainStep, ...]
    """Each decision, in the kubelet's order."""
    warnings: tuple[Finding, ...]
    """What the pod asks for and will not get."""
    profile: GateResolution = field(repr=False, compare=False)
    """The kubelet profile the pod was judged by."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the config as proto3 JSON (presence kept), steps and warnings."""
        return {
            "kubeletVersion": str(self.profile.version),
            "windowsPodSandboxConfig": (
                None if self.config is None else message_json(self.config)
            ),
            "error": None if self.error is None else str(self.error),
            "steps": [{"rule": s.rule, "text": s.text} for s in self.steps],
            "warnings": [
                {"code": w.code.value, "field": w.field, "message": w.message}
                for w in self.warnings
            ],
        }


def _gate_step(profile: GateResolution) -> str:
    version: object = profile.version
    if profile.release.status == "rc":  # said once, where the version is named
        version = f"{version} ({profile.release.status_text})"
    if profile.stage is GateStage.REMOVED:
        return f"kubelet {version}: {WINDOWS_HOST_NETWORK} no longer exists"
    state = "enabled" if profile.enabled else "disabled"
    how = f"set by {profile.set_by}" if profile.set_by else "by default"
    effect = (
        "namespace_options will be set"
        if profile.sets_namespace_options
        else "namespace_options will not be set"
    )
    return (
        f"kubelet {version}: {WINDOWS_HOST_NETWORK} is {profile.stage.value}, {state} "
        f"({how}); {effect}"
    )


def _copied(decision: SandboxDecision, pod: PodFacts) -> str:
    """What step 5 copied, from what the decision sends: an empty field is not set (the
    kubelet copies a pointer's value; an empty string sends nothing either). A pod
    refused at step 6 sends nothing, but step 5 ran first: its pod-level options say."""
    user, spec = bool(decision.run_as_username), bool(decision.credential_spec)
    if decision.error is not None and pod.windows_options is not None:
        options = pod.windows_options
        user, spec = bool(options.run_as_user_name), bool(options.gmsa_credential_spec)
    if user and spec:
        return "copied runAsUserName and gmsaCredentialSpec"
    if user:
        return "copied runAsUserName (gmsaCredentialSpec is not set)"
    if spec:
        return "copied gmsaCredentialSpec (runAsUserName is not set)"
    return "neither runAsUserName nor gmsaCredentialSpec is set: nothing copied"


def _warnings(
    pod: PodFacts,
    profile: GateResolution,
    config: api_pb2.WindowsPodSandboxConfig | None,
    at: str,
    host_network_ignored: bool,
) -> list[Finding]:
    found: list[Finding] = []
    context = None if config is None else config.security_context
    if host_network_ignored:  # the judgement's answer; the words say why, from what was sent
        sent_node = context is not None and context.HasField("namespace_options")
        if not sent_node:
            code = (WarningCode.HOST_NETWORK_GATE_OFF if profile.release.reads_gate
                    else WarningCode.HOST_NETWORK_WITHDRAWN)
        else:
            code = WarningCode.CONTAINERD_IGNORES_NAMESPACE_OPTIONS
        # The same words as translate's note: one sentence per case, from the profile.
        found.append(Finding(
            code,
            f"hostNetwork: true {profile.host_network_outcome}; the pod gets its own network "
            "namespace (only HostProcess pods get the node's network)",
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
            found.append(Finding(
                WarningCode.GMSA_SPEC_MISSING,
                f"gmsaCredentialSpecName {quoted(options.gmsa_credential_spec_name)} without "
                "gmsaCredentialSpec: the kubelet sends only the spec contents, which the "
                "GMSA admission webhook must fill in; without it credential_spec is empty",
                f"{at}{where}.gmsaCredentialSpecName",
            ))
    for line in profile.log_lines:
        found.append(Finding(WarningCode.DEPRECATED_FEATURE_GATE, line, "--feature-gates"))
    for name in profile.not_modelled:
        hint = ""
        if name.lower() in {m.lower() for m in MODELLED_GATES}:
            hint = " (gate names are case-sensitive: did you mean "
            hint += next(m for m in MODELLED_GATES if m.lower() == name.lower()) + "?)"
        found.append(Finding(
            WarningCode.FEATURE_GATE_NOT_MODELLED,
            f"feature gate {name} is not modelled: accepted, assumed not to affect "
            f"Windows sandbox networking (a kubelet refuses a gate it does not know){hint}",
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


def explanation(
    pod: PodInput, profile: GateResolution, *, host_network_ignored: bool,
) -> Explanation:
    """Every kubelet decision for ``pod`` in order, the result, and what the pod will not
    get; ``host_network_ignored`` is the judgement's answer to whether ``hostNetwork``
    takes effect (``kubelet_winnet.explain`` asks it: this model does not decide it)."""
    template, at = pod_template(pod)  # read_pod's steps, keeping the path for warnings
    facts = pod_facts(pod_spec(template, at), f"{at}spec.")
    decision = decide_sandbox(facts, profile.sets_namespace_options)
    steps = [ExplainStep("gates", _gate_step(profile))]
    steps += [
        ExplainStep(
            step_id,
            STEP_BY_ID[step_id].text.format(
                network=decision.network, error=decision.error, copied=_copied(decision, facts)
            ),
        )
        for step_id in decision.steps
    ]
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
        warnings=tuple(_warnings(facts, profile, config, f"{at}spec.",
                                 host_network_ignored and config is not None)),
        profile=profile,
    )
