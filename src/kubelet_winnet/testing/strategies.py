"""Hypothesis strategies for tests of kuberuntime logic on Windows: pods, workloads,
kubelet releases, feature gates and what a node knows.

Needs hypothesis (``pip install 'kubelet-winnet[testing]'``). Every strategy draws from
the rules the library encodes (the supported releases, the request facts, where
workloads keep their pod template), so a new kubelet release added to the library
reaches these strategies without a change. Each docstring quotes the rule it encodes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from hypothesis import strategies as st

from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet._kubelet.request_facts import REQUEST_FACTS
from kubelet_winnet._kubelet.timeline import TIMELINE, GateStage
from kubelet_winnet.errors import InvalidArgumentError
from kubelet_winnet.runtime import CNI_PLUGINS, CniNetwork, CniPlugin, NodeFacts

__all__ = [
    "CONFIG_MAPS",
    "RUNTIME_CLASSES",
    "SECRETS",
    "HostProcess",
    "as_workload",
    "feature_gates",
    "kubelet_versions",
    "node_facts",
    "windows_pods",
    "workloads",
]

HostProcess = Literal["pod", "container", "mixed", "none"]
_HOST_PROCESS: Final = ("pod", "container", "mixed", "none")

# RuntimeClass name -> containerd handler, as a cluster's RuntimeClass objects map them;
# give them to NodeContext(runtime_handlers=...) for pods with a runtimeClassName.
RUNTIME_CLASSES: Final[Mapping[str, str]] = {
    "windows-process": "runhcs-wcow-process",
    "windows-hyperv": "runhcs-wcow-hypervisor",
}
# The ConfigMaps and Secrets the generated env references name (name -> data), for the
# request builders' config_maps= and secrets=.
CONFIG_MAPS: Final[Mapping[str, Mapping[str, Any]]] = {
    "app-config": {"LOG_LEVEL": "info", "REGION": "west"},
}
SECRETS: Final[Mapping[str, Mapping[str, Any]]] = {"app-secret": {"TOKEN": "s3cr3t"}}
_IMAGES: Final = ("mcr.microsoft.com/windows/nanoserver:ltsc2022",
                  "mcr.microsoft.com/windows/servercore:ltsc2022")
_USERS: Final = ("ContainerUser", "ContainerAdministrator", "NT AUTHORITY\\SYSTEM",
                 "NT AUTHORITY\\Local service", "NT-AUTORITÄT\\SYSTEM")
_BOOL_SPELLINGS: Final = {True: ("1", "t", "T", "TRUE", "true", "True"),
                          False: ("0", "f", "F", "FALSE", "false", "False")}


def _knob(name: str, value: object) -> None:
    if value is not None and type(value) is not bool:
        raise InvalidArgumentError(name, "True, False or None", type_name(value))


# --- pods -----------------------------------------------------------------------------


def windows_pods(
    *,
    host_network: bool | None = None,
    host_process: HostProcess | None = None,
    host_ports: bool | None = None,
    run_as_user_name: bool | None = None,
    runtime_class: bool | None = None,
    init_containers: bool | None = None,
    ephemeral_containers: bool | None = None,
    env_from: bool | None = None,
    accepted: bool | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Pod manifests (dicts) for Windows nodes, with only the fields the API server admits
    there: ``spec.os.name: windows`` and no Linux-only field ("validateWindows: ...
    cannot be set for a windows pod", ``pkg/apis/core/validation/validation.go``).

    Each keyword fixes one axis (``None``: drawn): ``host_network``; ``host_process``
    (``"pod"``: set on the pod's ``windowsOptions``, ``"container"``: on every container,
    ``"mixed"``: on some containers only, ``"none"``); ``host_ports`` (a container port
    with a ``hostPort``: equal to ``containerPort`` under ``hostNetwork``, as
    ``validateHostNetwork`` requires); ``run_as_user_name``; ``runtime_class`` (a name of
    ``RUNTIME_CLASSES``); ``init_containers``, ``ephemeral_containers``; ``env_from``
    (``env`` from ConfigMap and Secret keys and ``envFrom``, naming ``CONFIG_MAPS``
    and ``SECRETS``).

    ``accepted`` is whether the kubelet builds the sandbox (``None``: either). Its
    ``generatePodSandboxWindowsConfig`` (``kuberuntime_sandbox_windows.go``) refuses
    exactly: "pod must not contain both HostProcess and non-HostProcess containers",
    "hostNetwork is required if Pod contains HostProcess containers", and "pod must not
    contain any HostProcess containers if Pod's WindowsOptions.HostProcess is set to
    false". The API server refuses the same pods (``validateWindowsHostProcessPod``), so
    ``accepted=False`` pods reach a kubelet only around it (static pods, a kubelet test).
    A knob that contradicts ``accepted`` is an ``InvalidArgumentError``.
    """
    for name, value in (("host_network", host_network), ("host_ports", host_ports),
                        ("run_as_user_name", run_as_user_name),
                        ("runtime_class", runtime_class), ("init_containers", init_containers),
                        ("ephemeral_containers", ephemeral_containers), ("env_from", env_from),
                        ("accepted", accepted)):
        _knob(name, value)
    if host_process is not None and (type(host_process) is not str
                                     or host_process not in _HOST_PROCESS):
        raise InvalidArgumentError("host_process", "'pod', 'container', 'mixed', 'none' or "
                                   "None", repr(host_process)[:80] if isinstance(
                                       host_process, str) else type_name(host_process))
    if accepted is True and host_process == "mixed":
        raise InvalidArgumentError("host_process", "not 'mixed' with accepted=True (the kubelet "
                                   "refuses mixed pods)", "'mixed'")
    if accepted is True and host_network is False and host_process in ("pod", "container"):
        raise InvalidArgumentError("host_network", "True or None for an accepted HostProcess "
                                   "pod (hostNetwork is required)", "False")
    if accepted is False and host_process == "pod" and host_network is True:
        raise InvalidArgumentError("host_network", "False or None for accepted=False with "
                                   "host_process='pod' (the only refusal left is hostNetwork)",
                                   "True")
    if accepted is False and host_process == "none":
        raise InvalidArgumentError("host_process", "a HostProcess layout for accepted=False "
                                   "(every refusal is about HostProcess)", "'none'")
    return _windows_pods(host_network, host_process, host_ports, run_as_user_name,
                         runtime_class, init_containers, ephemeral_containers, env_from,
                         accepted)


@st.composite
def _windows_pods(draw: st.DrawFn, host_network: bool | None, host_process: str | None,
                  host_ports: bool | None, run_as_user_name: bool | None,
                  runtime_class: bool | None, init_containers: bool | None,
                  ephemeral_containers: bool | None, env_from: bool | None,
                  accepted: bool | None) -> dict[str, Any]:
    def pick(value: bool | None) -> bool:
        return draw(st.booleans()) if value is None else value

    layout, refusal, network = _layout(draw, host_process, host_network, accepted)
    groups = _container_groups(draw, layout, network, pick(host_ports), pick(env_from),
                               pick(init_containers), pick(ephemeral_containers))
    every = [c for kind in groups for c in groups[kind]]
    spec: dict[str, Any] = {"os": {"name": "windows"},
                            "nodeSelector": {"kubernetes.io/os": "windows"}}
    pod_options: dict[str, Any] = {}
    if layout == "pod":
        pod_options["hostProcess"] = True
    elif layout == "container":
        for container in every:
            _options(container)["hostProcess"] = True
        if refusal == "pod-false":
            pod_options["hostProcess"] = False
    elif layout == "mixed":
        marked = draw(st.integers(1, len(every) - 1))
        for container in every[:marked]:
            _options(container)["hostProcess"] = True
    elif draw(st.booleans()):  # "none": hostProcess false written out, or left unset
        pod_options["hostProcess"] = False
    if pick(run_as_user_name):
        user = draw(st.sampled_from(
            ("NT AUTHORITY\\SYSTEM", "NT AUTHORITY\\Local service")
            if layout in ("pod", "container") else _USERS))
        pod_options["runAsUserName"] = user
    if pod_options:
        spec["securityContext"] = {"windowsOptions": pod_options}
    spec["hostNetwork"] = network
    if pick(runtime_class):
        spec["runtimeClassName"] = draw(st.sampled_from(sorted(RUNTIME_CLASSES)))
    spec.update(groups)
    name = draw(st.sampled_from(("web", "agent", "iis-0")))
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": draw(st.sampled_from(("default", "win"))),
                     "uid": f"0000000{draw(st.integers(1, 9))}-aaaa-bbbb-cccc-000000000000"},
        "spec": spec,
    }


def _layout(draw: st.DrawFn, host_process: str | None, host_network: bool | None,
            accepted: bool | None) -> tuple[str, str | None, bool]:
    """The HostProcess layout, the refusal the pod is built for (``None``: built to be
    accepted) and ``hostNetwork``."""
    layout = host_process if host_process is not None else draw(st.sampled_from(
        ("pod", "container", "none") if accepted is True
        else ("container", "mixed") if accepted is False and host_network is True
        else ("pod", "container", "mixed") if accepted is False else _HOST_PROCESS))
    # The refusal the pod is built for (None: built to be accepted).
    refusal: str | None = None
    if layout == "mixed":
        refusal = "mixed"
    elif accepted is not True:
        choices = []
        if layout in ("pod", "container") and host_network is not True:
            choices.append("no-host-network")
        if layout == "container":
            choices.append("pod-false")
        if layout in ("pod", "container") and host_network is False:
            refusal = "no-host-network"
        elif choices:
            refusal = draw(st.sampled_from(choices if accepted is False else [None, *choices]))
    if refusal == "no-host-network":
        network = False
    elif layout in ("pod", "container"):
        network = True if host_network is None else host_network
    else:
        network = draw(st.booleans()) if host_network is None else host_network
    return layout, refusal, network


def _container_groups(draw: st.DrawFn, layout: str, network: bool, ports: bool,
                      envs: bool, init: bool, ephemeral: bool) -> dict[str, list[dict[str, Any]]]:
    """The containers of each kind, with a hostPort and env references as asked."""
    groups: dict[str, list[dict[str, Any]]] = {"containers": []}
    if init:
        groups["initContainers"] = []
    if ephemeral:
        groups["ephemeralContainers"] = []
    counts = {"initContainers": draw(st.integers(1, 2)),
              "containers": draw(st.integers(2 if layout == "mixed" else 1, 3)),
              "ephemeralContainers": 1}
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        if kind not in groups:
            continue
        for index in range(counts[kind]):
            container: dict[str, Any] = {"name": f"{kind[0]}{index}",
                                         "image": draw(st.sampled_from(_IMAGES))}
            if ports and kind == "containers" and index == 0:
                port = draw(st.sampled_from((80, 443, 8080)))
                host = port if network else draw(st.sampled_from((port, 30080)))
                container["ports"] = [{"containerPort": port, "hostPort": host,
                                       "protocol": draw(st.sampled_from(("TCP", "UDP")))}]
            if envs and kind == "containers":
                container["env"] = [
                    {"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {
                        "name": "app-config", "key": "LOG_LEVEL"}}},
                    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {
                        "name": "app-secret", "key": "TOKEN"}}},
                ]
                container["envFrom"] = [{"configMapRef": {"name": "app-config"}}]
            groups[kind].append(container)

    return groups


def _options(container: dict[str, Any]) -> dict[str, Any]:
    context = container.setdefault("securityContext", {})
    options: dict[str, Any] = context.setdefault("windowsOptions", {})
    return options


# --- workloads ------------------------------------------------------------------------


def as_workload(kind: str, pod: Mapping[str, Any]) -> dict[str, Any]:
    """``pod`` as the template of a workload ``kind`` (``Deployment``, ``CronJob``, ...),
    placed where that kind keeps its template (``spec.template``; a CronJob's
    ``spec.jobTemplate.spec.template``; a PodTemplate's ``template``) with the selector
    its API requires ("It must match the pod template's labels", the ``selector`` of the
    apps/v1 Deployment, DaemonSet, StatefulSet and ReplicaSet specs) and, for a Job or
    CronJob, ``restartPolicy: Never`` unless the pod sets one ("The only allowed
    template.spec.restartPolicy values are "Never" or "OnFailure"", batch/v1 JobSpec).
    The template is labelled ``app: <the pod's name>`` (``w`` when it has none) and the
    workload takes the pod's name and namespace. ``pod`` is copied, never changed."""
    if not isinstance(kind, str) or kind not in WORKLOAD_TEMPLATE_PATHS:
        raise InvalidArgumentError("kind", "one of " + ", ".join(WORKLOAD_TEMPLATE_PATHS),
                                   repr(kind)[:80] if isinstance(kind, str) else type_name(kind))
    if not isinstance(pod, Mapping) or not isinstance(pod.get("spec"), Mapping):
        raise InvalidArgumentError("pod", "a Pod manifest with a spec", type_name(pod))
    metadata = pod.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    name = name if isinstance(name, str) and name else "w"
    template: dict[str, Any] = {"metadata": {"labels": {"app": name}},
                                "spec": copy.deepcopy(dict(pod["spec"]))}
    node: dict[str, Any] = template
    path = WORKLOAD_TEMPLATE_PATHS[kind]
    for key in reversed(path):
        node = {key: node}
    if kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"):
        node["spec"]["selector"] = {"matchLabels": {"app": name}}
    if kind == "StatefulSet":
        node["spec"]["serviceName"] = name
    if kind == "CronJob":
        node["spec"]["schedule"] = "*/5 * * * *"
    if kind in ("Job", "CronJob"):
        template["spec"].setdefault("restartPolicy", "Never")
    group = {"Deployment": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
             "ReplicaSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1"}
    node["apiVersion"] = group.get(kind, "v1")
    node["kind"] = kind
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    node["metadata"] = {"name": name, "namespace": namespace
                        if isinstance(namespace, str) and namespace else "default"}
    return node


def workloads(pods: st.SearchStrategy[dict[str, Any]] | None = None,
              kinds: Sequence[str] | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """A pod of ``pods`` (default ``windows_pods``) inside a workload of one of
    ``kinds`` (default: every kind whose template the kubelet's pods come from:
    Deployment, DaemonSet, StatefulSet, ReplicaSet, ReplicationController, Job, CronJob,
    PodTemplate), through ``as_workload``. The kubelet runs the template's pod
    ("Template describes the pods that will be created", apps/v1 DeploymentSpec), so
    the workload's pod spec is the drawn pod's spec."""
    if pods is not None and not isinstance(pods, st.SearchStrategy):
        raise InvalidArgumentError("pods", "a hypothesis strategy of Pod manifests",
                                   type_name(pods))
    if kinds is not None and (isinstance(kinds, str) or not isinstance(kinds, Sequence)):
        raise InvalidArgumentError("kinds", "a list of workload kinds", type_name(kinds))
    chosen = tuple(WORKLOAD_TEMPLATE_PATHS) if kinds is None else tuple(kinds)
    for kind in chosen:
        if not isinstance(kind, str) or kind not in WORKLOAD_TEMPLATE_PATHS:
            raise InvalidArgumentError("kinds", "workload kinds: " + ", ".join(
                WORKLOAD_TEMPLATE_PATHS), repr(kind)[:80] if isinstance(kind, str)
                else type_name(kind))
    if not chosen:
        raise InvalidArgumentError("kinds", "at least one workload kind", "none")
    return st.builds(as_workload, st.sampled_from(chosen),
                     pods if pods is not None else windows_pods())


# --- kubelet releases and gates ---------------------------------------------------------


def _patches(minor: int) -> tuple[int, ...]:
    """Patch releases of ``minor`` on both sides of each backported request fact."""
    found = {0}
    for fact in REQUEST_FACTS:
        for backported_minor, first_patch in fact.backports:
            if backported_minor == minor:
                found.update({first_patch - 1, first_patch})
    return tuple(sorted(p for p in found if p >= 0))


def kubelet_versions(minors: Sequence[int] | None = None) -> st.SearchStrategy[str]:
    """Kubelet versions as ``--kubelet-version`` and ``kubelet --version`` spell them
    (``1.32``, ``v1.32``, ``v1.32.4``, ``1.32.0``): every supported minor (1.26 to the
    newest in the library's timeline), or those of ``minors``, and for each the patch
    releases where a request fact changes ("``backports`` holds (minor, first patch)
    for older release branches that got the change in a patch release",
    ``_kubelet/request_facts.py``): the last patch before the change and the first with
    it."""
    supported = tuple(row.minor for row in TIMELINE)
    if minors is not None and (isinstance(minors, str) or not isinstance(minors, Sequence)):
        raise InvalidArgumentError("minors", "a list of kubelet minors (int)",
                                   type_name(minors))
    chosen = supported if minors is None else tuple(minors)
    for minor in chosen:
        if type(minor) is not int or minor not in supported:
            raise InvalidArgumentError("minors", f"kubelet minors from {supported[0]} to "
                                       f"{supported[-1]}", type_name(minor) if type(minor)
                                       is not int else f"1.{minor}")
    if not chosen:
        raise InvalidArgumentError("minors", "at least one kubelet minor", "none")
    spellings = [f"{v}1.{m}" for m in chosen for v in ("", "v")]
    spellings += [f"{v}1.{m}.{p}" for m in chosen for p in _patches(m) for v in ("v", "")]
    return st.sampled_from(spellings)


def feature_gates(*, kubelet_version: str | None = None,
                  windows_host_network: bool | None = None) -> st.SearchStrategy[Any]:
    """``--feature-gates`` values the kubelet accepts, as a flag string or a mapping,
    with ``WindowsHostNetwork`` set to ``windows_host_network`` (``None``: not set).

    A flag is parsed as ``component-base/featuregate`` parses it: comma-separated
    ``key=value`` pairs, spaces around each trimmed, the value read by Go's
    ``strconv.ParseBool`` ("accepts 1, t, T, TRUE, true, True, 0, f, F, FALSE, false,
    False"); gates the library does not model ride along. From kubelet 1.38 the gate is
    removed ("unrecognized feature gate: WindowsHostNetwork"), so a ``kubelet_version``
    of 1.38 or later with ``windows_host_network`` set is an ``InvalidArgumentError``."""
    _knob("windows_host_network", windows_host_network)
    if kubelet_version is not None:
        import kubelet_winnet as kw

        minor = kw.parse_kubelet_version(kubelet_version).minor
        stage = next(row.stage for row in TIMELINE if row.minor == minor)
        if stage is GateStage.REMOVED and windows_host_network is not None:
            raise InvalidArgumentError("windows_host_network", f"None for kubelet 1.{minor}, "
                                       "where the gate is removed", repr(windows_host_network))
    if windows_host_network is None:
        return st.sampled_from([None, "", {}, "SomeOtherGate=true", {"SomeOtherGate": False},
                                " SomeOtherGate = false ,"])
    spellings = _BOOL_SPELLINGS[windows_host_network]
    value = windows_host_network
    return st.one_of(
        st.sampled_from(spellings).map(lambda v: f"WindowsHostNetwork={v}"),
        st.sampled_from(spellings).map(
            lambda v: f" SomeOtherGate=false , WindowsHostNetwork = {v} ,"),
        st.just({"WindowsHostNetwork": value}),
        st.just({"WindowsHostNetwork": value, "SomeOtherGate": True}),
    )


# --- what a node knows ----------------------------------------------------------------


def node_facts() -> st.SearchStrategy[NodeFacts]:
    """What a Windows node's own files say, as ``kubelet_winnet.runtime.NodeFacts``:
    the containerd release (``containerd://1.7.x`` to ``2.4.x``, or not known), the
    runtime handlers with their isolation ("``SandboxIsolation = 1``" is Hyper-V:
    ``runhcs-wcow-hypervisor``), and the CNI network with and without a plugin that
    declares the ``portMappings`` capability (a CNI plugin gets port mappings only when
    its configuration declares it: the CNI spec's ``runtimeConfig``), over the plugin
    types the runtime half knows (``kubelet_winnet.runtime.CNI_PLUGINS``)."""
    from kubelet_winnet.runtime._releases import CONTAINERD_LINES

    runtimes = st.one_of(st.just(""), st.builds(
        lambda line, patch: f"containerd://{line.name}.{patch}",
        st.sampled_from(CONTAINERD_LINES), st.integers(0, 6)))
    handlers = st.sampled_from([
        {"runhcs-wcow-process": "process"},
        {"runhcs-wcow-process": "process", "runhcs-wcow-hypervisor": "hyperv"},
    ])
    cni = st.one_of(st.none(), st.builds(
        lambda kind, ports: CniNetwork("pods", (CniPlugin(
            kind, frozenset({"portMappings"}) if ports else frozenset()),), "10-pods.conf"),
        st.sampled_from(sorted(CNI_PLUGINS)), st.booleans()))
    return st.builds(lambda runtime, found, network: NodeFacts(
        runtime=runtime, handlers=found, cni=network), runtimes, handlers, cni)
