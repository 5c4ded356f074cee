"""The kubelet's Windows sandbox decision, as data plus pure functions.

Everything that decides what ``WindowsPodSandboxConfig`` and
``WindowsContainerSecurityContext`` a kubelet sends lives here; parsing pods, building
protobuf, version profiles, the CLI and HCN are adapters around it. Sources:
kubernetes/kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_sandbox.go``
(``generatePodSandboxWindowsConfig``), ``kuberuntime_container_windows.go`` and
``pkg/securitycontext/util.go`` (effective Windows options), releases 1.26-1.38.

``docs/decision-table.md`` is rendered from :data:`STEPS` and :func:`decide_sandbox`
(``python scripts/render_docs.py``); a test fails if it drifts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from kubelet_winnet._kubelet.timeline import (
    KEP_WITHDRAWN_MINOR,
    LAST_NAMESPACE_OPTIONS_MINOR,
    MIN_MINOR,
)

__all__ = [
    "ERROR_HOST_NETWORK_REQUIRED",
    "ERROR_MIXED_HOST_PROCESS",
    "ERROR_POD_HOST_PROCESS_FALSE",
    "STEPS",
    "STEP_BY_ID",
    "ContainerDecision",
    "ContainerFacts",
    "ContainerKind",
    "NetworkMode",
    "PodFacts",
    "PortFacts",
    "Refusal",
    "SandboxDecision",
    "Step",
    "WindowsOptions",
    "all_refusals",
    "decide_container",
    "decide_sandbox",
    "effective_host_process",
    "effective_windows_options",
    "has_host_process_container",
    "is_host_process_container",
]

ERROR_MIXED_HOST_PROCESS = "pod must not contain both HostProcess and non-HostProcess containers"
ERROR_HOST_NETWORK_REQUIRED = "hostNetwork is required if Pod contains HostProcess containers"
ERROR_POD_HOST_PROCESS_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)

ContainerKind = Literal["initContainers", "containers", "ephemeralContainers"]
# The CRI NamespaceMode names the kubelet can put in WindowsNamespaceOption.network.
NetworkMode = Literal["POD", "NODE"]


@dataclass(frozen=True, slots=True)
class WindowsOptions:
    """``windowsOptions`` (pod or container level); ``None`` = not set."""

    run_as_user_name: str | None = None
    gmsa_credential_spec_name: str | None = None
    gmsa_credential_spec: str | None = None
    host_process: bool | None = None


# Facts and container decisions are built for every pod: a NamedTuple is as immutable
# and costs a third of a frozen dataclass to build (0.4 µs against 1.2 µs on CPython 3.11).
class PortFacts(NamedTuple):
    """One entry of a container's ``ports`` as written (v1.ContainerPort), no API default
    applied: 0 and "" where a field is unset. Not read by the decision: the request
    builder's port mappings and the linter's hostPort rules."""

    container_port: int = 0
    host_port: int = 0
    protocol: str = ""
    host_ip: str = ""
    name: str = ""


class ContainerFacts(NamedTuple):
    name: str
    kind: ContainerKind
    windows_options: WindowsOptions | None = None
    ports: tuple[PortFacts, ...] = ()


class PodFacts(NamedTuple):
    """The only parts of a pod the decision reads.

    ``windows_options`` is ``None`` when ``spec.securityContext`` or its
    ``windowsOptions`` is absent (step 4 tells the two apart from an empty one).
    Containers are in the kubelet's visiting order: init, regular, ephemeral.
    """

    host_network: bool = False
    windows_options: WindowsOptions | None = None
    containers: tuple[ContainerFacts, ...] = ()
    # Not read by the decision: the judgement's (the kubelet's LookupRuntimeHandler).
    runtime_class: str | None = None  # spec.runtimeClassName; None when unset or empty


class Step(NamedTuple):
    """One step (or one outcome of a step) of ``generatePodSandboxWindowsConfig``.

    ``id`` is what decisions record; ``summary`` is the docs' text, ``text`` what
    ``explain`` prints (``{network}``, ``{error}`` and ``{copied}`` filled from the
    decision).
    """

    id: str
    summary: str
    text: str
    error: str | None = None
    since: int = MIN_MINOR
    until: int | None = None  # last kubelet minor that runs the step


STEPS: tuple[Step, ...] = (
    Step("1", "start with an empty security_context (always present)",
         "security_context present"),
    Step("2", "WindowsHostNetwork enabled: namespace_options on every pod, network NODE if "
         "spec.hostNetwork else POD", "namespace_options.network = {network}",
         until=LAST_NAMESPACE_OPTIONS_MINOR),
    Step("2.off", f"WindowsHostNetwork disabled (or kubelet 1.{KEP_WITHDRAWN_MINOR}+, where "
         "step 2 is gone): namespace_options unset", "namespace_options left unset"),
    Step("3", "any container effectively HostProcess and all of them are, with hostNetwork: "
         "host_process = true", "every container is HostProcess: host_process = true"),
    Step("3.none", "no container effectively HostProcess", "no HostProcess container"),
    Step("3a", "some but not all containers HostProcess: error", "error: {error}",
         ERROR_MIXED_HOST_PROCESS),
    Step("3b", "HostProcess containers without spec.hostNetwork: error", "error: {error}",
         ERROR_HOST_NETWORK_REQUIRED),
    Step("4", "no spec.securityContext.windowsOptions: done", "no pod-level windowsOptions: done"),
    Step("5", "pod-level gmsaCredentialSpec -> credential_spec, runAsUserName -> "
         "run_as_username", "pod-level windowsOptions: {copied}"),
    Step("6", "HostProcess containers with pod-level hostProcess: false: error",
         "error: {error}", ERROR_POD_HOST_PROCESS_FALSE),
)
STEP_BY_ID: Mapping[str, Step] = {step.id: step for step in STEPS}


def _path(*ids: str) -> tuple[str, ...]:
    """A sequence of step ids the decision can return; checked against STEPS at import."""
    for step_id in ids:
        if step_id not in STEP_BY_ID:  # pragma: no cover - a guard
            raise RuntimeError(f"step {step_id!r} is not in STEPS")
    return ids


@dataclass(frozen=True, slots=True)
class SandboxDecision:
    """What the kubelet sends, or its refusal (``error`` set, ``error_rule`` the step);
    ``steps`` are the ids of the :data:`STEPS` taken, in order."""

    network: NetworkMode | None = None  # None: namespace_options unset
    host_process: bool = False
    run_as_username: str = ""
    credential_spec: str = ""
    error: str | None = None
    error_rule: str | None = None
    # The path, not the outcome: two decisions that send the same config compare equal.
    steps: tuple[str, ...] = field(default=(), compare=False)


class ContainerDecision(NamedTuple):
    run_as_username: str
    credential_spec: str
    host_process: bool


def effective_host_process(pod_value: bool | None, own_value: bool | None) -> bool:
    """The one HostProcess rule: a container is HostProcess by its own
    ``windowsOptions.hostProcess`` when set, else by the pod's
    (``HasWindowsHostProcessRequest``, pkg/securitycontext/util.go). A pod is
    HostProcess when every container is (``AllContainersAreWindowsHostProcess``,
    pkg/kubelet/container/helpers.go; ``generatePodSandboxWindowsConfig`` step 3).
    """
    return (pod_value if own_value is None else own_value) is True


def is_host_process_container(pod: PodFacts, container: ContainerFacts) -> bool:
    """:func:`effective_host_process` of ``container`` in ``pod``."""
    base, own = pod.windows_options, container.windows_options
    return effective_host_process(
        None if base is None else base.host_process, None if own is None else own.host_process
    )


def has_host_process_container(pod: PodFacts) -> bool:
    """``HasWindowsHostProcessContainer`` (pkg/kubelet/container/helpers.go, over
    ``VisitContainers``: init, regular, ephemeral): some container is HostProcess."""
    base = pod.windows_options
    pod_value = None if base is None else base.host_process
    for container in pod.containers:
        own = container.windows_options
        if effective_host_process(pod_value, None if own is None else own.host_process):
            return True
    return False


def effective_windows_options(pod: PodFacts, container: ContainerFacts) -> WindowsOptions:
    """The pod's ``windowsOptions`` overridden field by field by the container's.

    The two GMSA fields travel together: if either is set on the container, both come
    from it (``DetermineEffectiveSecurityContext``).
    """
    base = pod.windows_options
    own = container.windows_options
    if own is None:
        return base if base is not None else _EMPTY
    if base is None:
        return own
    gmsa_from = (
        own
        if own.gmsa_credential_spec_name is not None or own.gmsa_credential_spec is not None
        else base
    )
    return WindowsOptions(
        run_as_user_name=(
            own.run_as_user_name if own.run_as_user_name is not None else base.run_as_user_name
        ),
        gmsa_credential_spec_name=gmsa_from.gmsa_credential_spec_name,
        gmsa_credential_spec=gmsa_from.gmsa_credential_spec,
        host_process=own.host_process if own.host_process is not None else base.host_process,
    )


_EMPTY = WindowsOptions()


class Refusal(NamedTuple):
    """One HostProcess refusal of ``generatePodSandboxWindowsConfig``: ``rule`` is the
    step (``3a``, ``3b``, ``6``), ``error`` the kubelet's text; ``host_process`` the pod's
    HostProcess containers and, for ``3a``, ``plain`` the others (both in visiting order,
    the objects of ``PodFacts.containers``)."""

    rule: str
    error: str
    host_process: tuple[ContainerFacts, ...]
    plain: tuple[ContainerFacts, ...] = ()


def all_refusals(pod: PodFacts) -> tuple[Refusal, ...]:
    """Every HostProcess refusal the pod meets, in the kubelet's precedence (3a, 3b, 6):
    the kubelet returns the first; the others are what it would refuse next once that
    one is fixed. Empty when it refuses none."""
    host_process: list[ContainerFacts] = []
    plain: list[ContainerFacts] = []
    for container in pod.containers:
        (host_process if is_host_process_container(pod, container) else plain).append(container)
    if not host_process:  # HasWindowsHostProcessContainer is false: no step refuses
        return ()
    found = []
    if plain:  # step 3a: !AllContainersAreWindowsHostProcess
        found.append(Refusal("3a", ERROR_MIXED_HOST_PROCESS, tuple(host_process), tuple(plain)))
    if not pod.host_network:  # step 3b: !IsHostNetworkPod
        found.append(Refusal("3b", ERROR_HOST_NETWORK_REQUIRED, tuple(host_process)))
    options = pod.windows_options
    if options is not None and options.host_process is False:  # step 6
        found.append(Refusal("6", ERROR_POD_HOST_PROCESS_FALSE, tuple(host_process)))
    return tuple(found)


def decide_sandbox(pod: PodFacts, sets_namespace_options: bool) -> SandboxDecision:
    """``generatePodSandboxWindowsConfig``: errors in the kubelet's precedence 3a, 3b, 6.

    ``sets_namespace_options``: the kubelet is 1.26-1.32 with ``WindowsHostNetwork``
    enabled. The decision's ``steps`` record the path taken.
    """
    network: NetworkMode | None = None
    if sets_namespace_options:  # step 2
        network = "NODE" if pod.host_network else "POD"
    any_host_process = has_host_process_container(pod)  # step 3
    if any_host_process:
        refusals = all_refusals(pod)  # steps 3a, 3b and 6: the first is the kubelet's
        if refusals:
            return _REFUSALS[network, refusals[0].rule]
    options = pod.windows_options
    if options is None:  # step 4
        return _PLAIN_DECISIONS[network, any_host_process, "4"]
    user = options.run_as_user_name or ""
    credential_spec = options.gmsa_credential_spec or ""
    if not user and not credential_spec:
        return _PLAIN_DECISIONS[network, any_host_process, "5"]
    return SandboxDecision(
        network, any_host_process, user, credential_spec,
        steps=_PLAIN_DECISIONS[network, any_host_process, "5"].steps,
    )


def _steps_until(network: bool, host_process: bool, last: str) -> tuple[str, ...]:
    return _path("1", "2" if network else "2.off", "3" if host_process else "3.none", last)


# Every decision without strings, built once with its path: most pods end in one of
# these, and a frozen dataclass costs more to build than the rest of the decision.
_PLAIN_DECISIONS: dict[tuple[NetworkMode | None, bool, str], SandboxDecision] = {
    (network, host_process, last): SandboxDecision(
        network, host_process, steps=_steps_until(network is not None, host_process, last)
    )
    for network in (None, "POD", "NODE")
    for host_process in (False, True)
    for last in ("4", "5")
}
# Refusals keep the network step 2 chose (explain shows it); messages are never built.
_REFUSALS: dict[tuple[NetworkMode | None, str], SandboxDecision] = {
    (network, rule): SandboxDecision(
        network,
        error=STEP_BY_ID[rule].error,
        error_rule=rule,
        steps=_path(
            "1", "2" if network else "2.off", *(("3", "5") if rule == "6" else ()), rule
        ),
    )
    for network in (None, "POD", "NODE")
    for rule in ("3a", "3b", "6")
}


def decide_container(
    pod: PodFacts, container: ContainerFacts, image_username: str = ""
) -> ContainerDecision:
    """``applyPlatformSpecificContainerConfig`` on Windows: the image's user, overridden by
    the effective ``runAsUserName``; GMSA spec and hostProcess from the effective options."""
    options = effective_windows_options(pod, container)
    return ContainerDecision(
        run_as_username=(
            options.run_as_user_name if options.run_as_user_name is not None else image_username
        ),
        credential_spec=options.gmsa_credential_spec or "",
        host_process=is_host_process_container(pod, container),
    )
