"""The ``ContainerConfig`` a kubelet on a Windows node sends in ``CreateContainer``.

``generateContainerConfig`` (pkg/kubelet/kuberuntime/kuberuntime_container.go), its steps
in the kubelet's order, each in the module named like its Go file: the environment
(:mod:`~kubelet_winnet._kubelet.kubelet_pods`, ``makeEnvironmentVariables``), the
non-root check (:mod:`~kubelet_winnet._kubelet.security_context_windows`), labels and
annotations (:mod:`~kubelet_winnet._kubelet.labels`), mounts
(:mod:`~kubelet_winnet._kubelet.mounts`, ``makeMounts``) and the Windows part
(:mod:`~kubelet_winnet._kubelet.kuberuntime_container_windows`). What is not modelled
(devices, the container hash annotation before 1.31) is listed in docs/requests.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import quoted, type_name
from kubelet_winnet._kubelet.kubelet_pods import MAX_EXPANDED_VALUE, Budget, environment
from kubelet_winnet._kubelet.kuberuntime_container_windows import fill_windows_config
from kubelet_winnet._kubelet.labels import fill_container_annotations, fill_container_labels
from kubelet_winnet._kubelet.mounts import (
    check_termination_log_id,
    check_volume_paths,
    container_mounts,
)
from kubelet_winnet._kubelet.node import NodeContext
from kubelet_winnet._kubelet.objectview import is_mapping
from kubelet_winnet._kubelet.pod import (
    PodView,
    container_index,
    get_bool,
    get_object,
    get_objects,
    get_str,
    get_strings,
    is_utf8,
    not_utf8_error,
    pod_facts,
    view_pod,
)
from kubelet_winnet._kubelet.profile import GateResolution, kubelet_profile
from kubelet_winnet._kubelet.request_facts import USER_SPECIFIED_IMAGE, expansion_rule
from kubelet_winnet._kubelet.rules import (
    ContainerDecision,
    ContainerFacts,
    PodFacts,
    decide_container,
    has_host_process_container,
)
from kubelet_winnet._kubelet.sandbox_config import (
    DEFAULT_NODE,
    build_sandbox_config,
    check_attempt,
    check_node,
    runtime_handler,
)
from kubelet_winnet._kubelet.security_context_windows import verify_run_as_non_root
from kubelet_winnet._kubelet.service_env import Service, read_services
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = [
    "DEFAULT_TERMINATION_LOG_ID",
    "MAX_EXPANDED_VALUE",  # its home is kubelet_pods; named here for older imports
    "ContainerBuilder",
    "PodRequests",
    "container_config",
    "create_container_request",
]

# makeUID draws the termination log's name from rand.Uint32(); a fixed stand-in by default.
DEFAULT_TERMINATION_LOG_ID = "00000000"


class ContainerBuilder:
    """The container configs of one pod, its containers located and their rule facts
    read once: building every container's config costs each container once (``run``
    builds them all), not once per container."""

    __slots__ = (
        "_facts", "_index", "expansion", "in_place_resize", "minor", "node", "services",
        "stop_signals", "view",
    )

    def __init__(
        self, view: PodView, node: NodeContext, profile: GateResolution,
        services: tuple[Service, ...] = (),
    ) -> None:
        self.view = view
        self.node = node
        self.minor = profile.version.minor
        self.in_place_resize = profile.in_place_resize
        self.stop_signals = profile.stop_signals
        # Resolved once with the kubelet: every $(VAR) expansion of the pod follows it.
        self.expansion = expansion_rule(profile.version)
        self.services = services  # what the kubelet's service lister holds
        self._index: dict[str, tuple[Mapping[str, Any], str, str]] | None = None
        self._facts: tuple[PodFacts, dict[str, ContainerFacts]] | None = None

    def names(self) -> list[str]:
        """Init then regular container names, in spec order (what ``SyncPod`` starts)."""
        at = self.view.spec_at
        names = []
        for kind in ("initContainers", "containers"):
            for index, container in enumerate(get_objects(self.view.spec, kind, at)):
                names.append(get_str(container, "name", f"{at}{kind}[{index}]."))
        return names

    def find(self, name: str) -> tuple[Mapping[str, Any], str, str] | None:
        """The first container named ``name`` in the kubelet's visiting order."""
        if self._index is None:
            self._index = container_index(self.view)
        return self._index.get(name)

    def _read_facts(self) -> tuple[PodFacts, dict[str, ContainerFacts]]:
        # The rule facts of the pod, read once: the security context and the hosts
        # mount's HasWindowsHostProcessContainer both come from them.
        if self._facts is None:
            facts = pod_facts(self.view.spec, self.view.spec_at)
            first: dict[str, ContainerFacts] = {}
            for container in facts.containers:
                first.setdefault(container.name, container)
            self._facts = facts, first
        return self._facts

    def _has_host_process(self) -> bool:
        return has_host_process_container(self._read_facts()[0])

    def _decision(self, name: str, image_username: str) -> ContainerDecision:
        # windows_container_security_context's decision, on facts read once per pod.
        facts, first = self._read_facts()
        return decide_container(facts, first[name], image_username)

    def config(
        self, container_name: str, attempt: int, image_ref: str | None, image_username: str,
        config_maps: Mapping[str, Mapping[str, Any]] | None,
        secrets: Mapping[str, Mapping[str, Any]] | None, pod_ips: tuple[str, ...],
        volume_paths: Mapping[str, str] | None = None,
        termination_log_id: str = DEFAULT_TERMINATION_LOG_ID,
    ) -> api_pb2.ContainerConfig:
        volume_paths = volume_paths or {}
        try:
            return self._config(
                container_name, attempt, image_ref, image_username, config_maps, secrets,
                pod_ips, volume_paths, termination_log_id,
            )
        except UnicodeEncodeError:  # protobuf strings must be UTF-8
            raise not_utf8_error(self.view) from None

    def _config(
        self, container_name: str, attempt: int, image_ref: str | None, image_username: str,
        config_maps: Mapping[str, Mapping[str, Any]] | None,
        secrets: Mapping[str, Mapping[str, Any]] | None, pod_ips: tuple[str, ...],
        volume_paths: Mapping[str, str], termination_log_id: str,
    ) -> api_pb2.ContainerConfig:
        view, node, minor = self.view, self.node, self.minor
        found = self.find(container_name)
        if found is None:
            raise InvalidPodError(
                view.at("spec"),
                f"no container named {quoted(container_name)} in initContainers, "
                "containers or ephemeralContainers",
            )
        container, at, _kind = found
        uid = view.identity()[2]
        host_network = get_bool(view.spec, "hostNetwork", view.spec_at) is True
        budget = Budget(container_name, self.expansion)
        env = environment(
            view, container, at, node, config_maps, secrets, pod_ips, self.services, minor,
            budget, self.find,
        )
        # GenerateRunContainerOptions builds the environment, then the mounts;
        # generateContainerConfig verifies runAsNonRoot after both.
        built_mounts = list(container_mounts(
            view, container, at, root=node.kubelet_root, uid=uid,
            container_name=container_name, env=env, pod_ips=pod_ips, minor=minor,
            volume_paths=volume_paths, termination_log_id=termination_log_id,
            host_network=host_network, host_process=self._has_host_process,
            expansion=self.expansion,
        ))
        verify_run_as_non_root(view, container, at, image_username)
        # Fields are set in place, one by one: faster in upb than keyword construction,
        # CopyFrom of built sub-messages or a map's update().
        config = api_pb2.ContainerConfig()
        metadata = config.metadata
        metadata.name = container_name
        metadata.attempt = attempt
        image = get_str(container, "image", at)
        image_spec = config.image
        image_spec.image = image if image_ref is None else image_ref
        if USER_SPECIFIED_IMAGE.holds(minor):
            image_spec.user_specified_image = image
        # ExpandContainerCommandAndArgs
        config.command.extend(budget.expand_all(get_strings(container, "command", at), env,
                                                at, "command"))
        config.args.extend(budget.expand_all(get_strings(container, "args", at), env, at,
                                             "args"))
        config.working_dir = get_str(container, "workingDir", at)
        envs = config.envs
        for key, item in env.items():
            pair = envs.add()
            pair.key = key
            # bytes value = 2 (cri-api d3d9c71): the same wire bytes as the string it was.
            # A str here is valid Unicode: the readers refuse a lone surrogate.
            pair.value = item if type(item) is bytes else item.encode()  # type: ignore[union-attr]
        fill_container_labels(config.labels, view, container_name)
        fill_container_annotations(config.annotations, view, container, at, container_name,
                                   image, attempt, minor, host_network, self.in_place_resize)
        mounts = config.mounts
        for container_path, host_path, read_only in built_mounts:
            mount = mounts.add()
            mount.container_path = container_path
            mount.host_path = host_path
            if read_only:
                mount.readonly = True
        config.log_path = f"{container_name}\\{attempt}.log"  # filepath.Join on Windows
        config.stdin = get_bool(container, "stdin", at) is True
        config.stdin_once = get_bool(container, "stdinOnce", at) is True
        config.tty = get_bool(container, "tty", at) is True
        if self.stop_signals:  # getContainerConfigStopSignal reads the kubelet's own gate
            config.stop_signal = _stop_signal(container, at)
        fill_windows_config(config.windows, container, at, node, minor,
                            self._decision(container_name, image_username))
        return config


# helpers.go signalNameToRuntimeEnum: every CRI Signal but RUNTIME_DEFAULT, by its API
# name; the enum spells the API's "+" and "-" as PLUS and MINUS (SIGRTMIN+1, SIGRTMAX-14),
# and from cri-api 044b7de prefixes every name with SIGNAL_ (the API's names stay).
_STOP_SIGNALS: dict[str, api_pb2.Signal.ValueType] = {
    name.removeprefix("SIGNAL_").replace("PLUS", "+").replace("MINUS", "-"): number
    for name, number in api_pb2.Signal.items() if number != api_pb2.SIGNAL_RUNTIME_DEFAULT
}


def _stop_signal(container: Mapping[str, Any], at: str) -> api_pb2.Signal.ValueType:
    """getContainerConfigStopSignal (helpers.go): ``lifecycle.stopSignal`` as the CRI enum.
    The kubelet checks no name and no OS (the API server does); a name outside the map
    is RUNTIME_DEFAULT, 0, which proto3 does not send, and so is an absent field."""
    lifecycle = get_object(container, "lifecycle", at)
    if lifecycle is None:
        return api_pb2.SIGNAL_RUNTIME_DEFAULT
    return _STOP_SIGNALS.get(
        get_str(lifecycle, "stopSignal", f"{at}lifecycle."), api_pb2.SIGNAL_RUNTIME_DEFAULT
    )


def _check_args(
    container_name: object, image_ref: object, image_username: object, pod_ips: object,
    config_maps: object, secrets: object,
) -> tuple[str, ...]:
    if type(container_name) is not str:
        raise InvalidArgumentError("container_name", "a string", type_name(container_name))
    if image_ref is not None and type(image_ref) is not str:
        raise InvalidArgumentError("image_ref", "a string or None", type_name(image_ref))
    if type(image_username) is not str:
        raise InvalidArgumentError("image_username", "a string", type_name(image_username))
    if type(image_ref) is str and not is_utf8(image_ref):
        raise InvalidArgumentError("image_ref", "valid Unicode", "a lone surrogate")
    if not is_utf8(image_username):
        raise InvalidArgumentError("image_username", "valid Unicode", "a lone surrogate")
    if config_maps is not None and not is_mapping(config_maps):
        raise InvalidArgumentError("config_maps", "a mapping or None", type_name(config_maps))
    if secrets is not None and not is_mapping(secrets):
        raise InvalidArgumentError("secrets", "a mapping or None", type_name(secrets))
    if type(pod_ips) is tuple:
        ips: tuple[Any, ...] = pod_ips
    elif type(pod_ips) is list:
        ips = tuple(pod_ips)
    else:
        raise InvalidArgumentError("pod_ips", "a tuple of strings", type_name(pod_ips))
    for index, ip in enumerate(ips):
        if type(ip) is not str:
            raise InvalidArgumentError(f"pod_ips[{index}]", "a string", type_name(ip))
    return ips


def container_config(
    pod: PodInput,
    container_name: str,
    *,
    node: NodeContext | None = None,
    attempt: int = 0,
    image_ref: str | None = None,
    image_username: str = "",
    config_maps: Mapping[str, Mapping[str, Any]] | None = None,
    secrets: Mapping[str, Mapping[str, Any]] | None = None,
    pod_ips: tuple[str, ...] = (),
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
    services: Sequence[Mapping[str, Any]] | None = None,
    volume_paths: Mapping[str, str] | None = None,
    termination_log_id: str = DEFAULT_TERMINATION_LOG_ID,
) -> api_pb2.ContainerConfig:
    """The ``ContainerConfig`` for the init, regular or ephemeral container
    ``container_name`` of ``pod``, restart count ``attempt``.

    ``image_ref``: the image ID the runtime's ``PullImage`` returned (default: the
    container's ``image``); ``image_username``: the user configured in the image.
    ``config_maps`` / ``secrets``: name -> data of the objects in the pod's namespace
    (``None``: like a kubelet without an API client); a Secret may also be the object
    as the API holds it (``data`` in base64, ``stringData``), and its values ``bytes``:
    ``envs[i].value`` is ``bytes`` (cri-api's ``bytes value = 2``), and a value that is
    not UTF-8 is sent or refused as that kubelet release does. ``pod_ips``: the sandbox's IPs,
    for ``status.podIP`` references. ``services``: the Service manifests the kubelet's
    service lister holds (any namespace), for the service-link variables; ``None``: like a
    kubelet without a service lister (none). ``volume_paths``: volume name -> the host
    path its volume plugin mounted it at, for volumes whose path the library cannot derive
    (PersistentVolumeClaims, CSI, ...; overrides the derived path of any other).
    ``termination_log_id``: the termination log's file name, which the kubelet draws at
    random (``makeUID``); see docs/requests.md.
    """
    node = DEFAULT_NODE if node is None else check_node(node)
    if type(attempt) is not int or not 0 <= attempt <= 0xFFFFFFFF:
        check_attempt(attempt)  # raises
    if (
        type(container_name) is str and image_ref is None and type(image_username) is str
        and not image_username and type(pod_ips) is tuple and not pod_ips
        and config_maps is None and secrets is None
    ):
        ips: tuple[str, ...] = ()  # the defaults: nothing for _check_args to look at
    else:
        ips = _check_args(
            container_name, image_ref, image_username, pod_ips, config_maps, secrets
        )
    profile = kubelet_profile(kubelet_version, feature_gates)
    builder = ContainerBuilder(
        view_pod(pod), node, profile, () if services is None else read_services(services),
    )
    return builder.config(
        container_name, attempt, image_ref, image_username, config_maps, secrets, ips,
        {} if volume_paths is None else check_volume_paths(volume_paths),
        termination_log_id if termination_log_id is DEFAULT_TERMINATION_LOG_ID
        else check_termination_log_id(termination_log_id),
    )


def create_container_request(
    pod: PodInput,
    container_name: str,
    *,
    pod_sandbox_id: str,
    node: NodeContext | None = None,
    attempt: int = 0,
    sandbox_attempt: int = 0,
    image_ref: str | None = None,
    image_username: str = "",
    config_maps: Mapping[str, Mapping[str, Any]] | None = None,
    secrets: Mapping[str, Mapping[str, Any]] | None = None,
    pod_ips: tuple[str, ...] = (),
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
    services: Sequence[Mapping[str, Any]] | None = None,
    volume_paths: Mapping[str, str] | None = None,
    termination_log_id: str = DEFAULT_TERMINATION_LOG_ID,
) -> api_pb2.CreateContainerRequest:
    """``CreateContainerRequest``: [`container_config`][kubelet_winnet.container_config] plus the
    sandbox's
    ``PodSandboxConfig`` (attempt ``sandbox_attempt``) and ``pod_sandbox_id``."""
    if type(pod_sandbox_id) is not str:
        raise InvalidArgumentError("pod_sandbox_id", "a string", type_name(pod_sandbox_id))
    if not is_utf8(pod_sandbox_id):
        raise InvalidArgumentError("pod_sandbox_id", "valid Unicode", "a lone surrogate")
    node = check_node(node)
    attempt = check_attempt(attempt)
    sandbox_attempt = check_attempt(sandbox_attempt, "sandbox_attempt")
    ips = _check_args(container_name, image_ref, image_username, pod_ips, config_maps, secrets)
    profile = kubelet_profile(kubelet_version, feature_gates)
    sandbox, view = build_sandbox_config(
        pod, node, sandbox_attempt, kubelet_version, feature_gates
    )
    builder = ContainerBuilder(view, node, profile, read_services(services))
    config = builder.config(
        container_name, attempt, image_ref, image_username, config_maps, secrets, ips,
        check_volume_paths(volume_paths), check_termination_log_id(termination_log_id),
    )
    return api_pb2.CreateContainerRequest(
        pod_sandbox_id=pod_sandbox_id, config=config, sandbox_config=sandbox
    )


class PodRequests:
    """What the kubelet sends for one pod, the pod read once (``kubelet-winnet run``):
    the ``RunPodSandboxRequest``, then each container's config or whole
    ``CreateContainerRequest``, each built from its own container only, so a pod of n
    containers costs n container builds, not n sandbox builds and n scans."""

    def __init__(
        self, pod: PodInput, *, node: NodeContext | None = None,
        kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
        feature_gates: FeatureGatesInput = None,
    ) -> None:
        node = check_node(node)
        profile = kubelet_profile(kubelet_version, feature_gates)
        self.kubelet_version = profile.version  # whose cri-api JSON the requests read as
        self.sandbox_config, view = build_sandbox_config(
            pod, node, 0, kubelet_version, feature_gates
        )
        self.run_pod_sandbox = api_pb2.RunPodSandboxRequest(
            config=self.sandbox_config, runtime_handler=runtime_handler(view, node)
        )
        self._builder = ContainerBuilder(view, node, profile)

    def names(self) -> list[str]:
        """Init then regular container names, in spec order."""
        return self._builder.names()

    def image(self, name: str) -> str:
        found = self._builder.find(name)
        return "" if found is None else get_str(found[0], "image", found[1])

    def container_config(
        self, name: str, *, image_ref: str | None = None, pod_ips: tuple[str, ...] = (),
        config_maps: Mapping[str, Mapping[str, Any]] | None = None,
        secrets: Mapping[str, Mapping[str, Any]] | None = None,
        volume_paths: Mapping[str, str] | None = None,
    ) -> api_pb2.ContainerConfig:
        ips = _check_args(name, image_ref, "", pod_ips, config_maps, secrets)
        return self._builder.config(
            name, 0, image_ref, "", config_maps, secrets, ips, check_volume_paths(volume_paths)
        )

    def create_container(
        self, name: str, *, pod_sandbox_id: str, image_ref: str | None = None,
        pod_ips: tuple[str, ...] = (),
        config_maps: Mapping[str, Mapping[str, Any]] | None = None,
        secrets: Mapping[str, Mapping[str, Any]] | None = None,
        volume_paths: Mapping[str, str] | None = None,
    ) -> api_pb2.CreateContainerRequest:
        config = self.container_config(
            name, image_ref=image_ref, pod_ips=pod_ips, config_maps=config_maps,
            secrets=secrets, volume_paths=volume_paths,
        )
        return api_pb2.CreateContainerRequest(
            pod_sandbox_id=pod_sandbox_id, config=config, sandbox_config=self.sandbox_config
        )
