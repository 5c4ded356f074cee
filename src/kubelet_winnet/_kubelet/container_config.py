"""The ``ContainerConfig`` a kubelet on a Windows node sends in ``CreateContainer``.

``generateContainerConfig`` (pkg/kubelet/kuberuntime/kuberuntime_container.go) with the
environment of ``makeEnvironmentVariables`` (pkg/kubelet/kubelet_pods.go), the
``$(VAR)`` expansion of third_party/forked/golang/expansion, labels and annotations of
labels.go and the Windows part of kuberuntime_container_windows.go
(``calculateWindowsResources``, ``calculateCPUMaximum``) with the security context from
the core. Service-link variables come from :mod:`~kubelet_winnet._kubelet.service_env`,
mounts from :mod:`~kubelet_winnet._kubelet.mounts`. What is not modelled (devices, the
container hash annotation before 1.31) is listed in docs/requests.md.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping
from typing import Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import describe, quoted, type_name
from kubelet_winnet._kubelet.expansion import ExpansionTooLarge, expand, utf8_len
from kubelet_winnet._kubelet.messages import fill_container_security_context
from kubelet_winnet._kubelet.mounts import (
    check_termination_log_id,
    check_volume_paths,
    container_mounts,
)
from kubelet_winnet._kubelet.node import NodeContext, is_mapping
from kubelet_winnet._kubelet.pod import (
    is_utf8,
    pod_facts,
)
from kubelet_winnet._kubelet.podview import (
    PodView,
    get_bool,
    get_int,
    get_map,
    get_objects,
    get_str,
    get_str_map,
    get_strings,
    not_utf8_error,
    view_pod,
)
from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION, kubelet_profile
from kubelet_winnet._kubelet.quantity import (
    go_div,
    go_milli_value,
    nanos_milli_value,
    nanos_value,
    parse_nanos,
    wrap_int64,
)
from kubelet_winnet._kubelet.rules import (
    ContainerFacts,
    PodFacts,
    decide_container,
)
from kubelet_winnet._kubelet.sandbox_config import (
    DEFAULT_NODE,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    build_sandbox_config,
    check_attempt,
    check_node,
    echo,
    pod_identity_of,
    runtime_handler,
)
from kubelet_winnet._kubelet.sandbox_config import _go_quote as go_percent_q
from kubelet_winnet._kubelet.service_env import Service, read_services, service_env_vars
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError, SandboxConfigError

__all__ = [
    "calculate_cpu_maximum",
    "container_config",
    "container_hash",
    "create_container_request",
    "expand",
]

# labels.go and pkg/kubelet/types/labels.go
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"
HASH_ANNOTATION = "io.kubernetes.container.hash"
PRE_STOP_ANNOTATION = "io.kubernetes.container.preStopHandler"
RESTART_COUNT_ANNOTATION = "io.kubernetes.container.restartCount"
TERMINATION_PATH_ANNOTATION = "io.kubernetes.container.terminationMessagePath"
TERMINATION_POLICY_ANNOTATION = "io.kubernetes.container.terminationMessagePolicy"
PORTS_ANNOTATION = "io.kubernetes.container.ports"
DELETION_GRACE_ANNOTATION = "io.kubernetes.pod.deletionGracePeriod"
TERMINATION_GRACE_ANNOTATION = "io.kubernetes.pod.terminationGracePeriod"

_KINDS = ("initContainers", "containers", "ephemeralContainers")
# makeUID draws the termination log's name from rand.Uint32(); a fixed stand-in by default.
DEFAULT_TERMINATION_LOG_ID = "00000000"
_MAX_ENV = 10_000
_ERROR_RULE = "container"
_INT64_MAX = 2**63 - 1

# $(VAR) expansion bounds, in UTF-8 bytes (docs/requests.md, "Environment"). The kubelet
# has none: 29 variables each "$(V{i-1})$(V{i-1})" would ask it for a 512 MiB value.
# One value: far beyond the 32,767 characters Windows lets an environment variable hold.
MAX_EXPANDED_VALUE = 1 << 20
# One container (every env value, command and args): containerd's default gRPC receive
# limit (defaults.DefaultMaxRecvMsgSize = 16 << 20), which is also what
# kubelet_winnet.cri.RuntimeClient sends at most; a larger CreateContainer cannot arrive.
MAX_EXPANDED_CONTAINER = 16 << 20


# --- $(VAR) expansion's bounds (the expansion itself: _kubelet/expansion.py) -----------


class _Budget:
    """The bytes of values one container may still hold, and how far expansion may grow
    one value."""

    __slots__ = ("container", "left", "sizes")

    def __init__(self, container: str) -> None:
        self.container = container
        self.left = MAX_EXPANDED_CONTAINER
        self.sizes: dict[str, int] = {}  # env name -> bytes its value holds now

    def limit(self, text: str) -> int:
        # Expansion may not grow a value past MAX_EXPANDED_VALUE; a longer literal is
        # the manifest's own size, bounded by the container alone.
        return min(max(MAX_EXPANDED_VALUE, utf8_len(text)), self.left)

    def refuse(self, field: str, what: str, *, container: bool) -> InvalidPodError:
        if container:
            return InvalidPodError(
                field,
                f"{what}: the environment, command and args of container "
                f"{quoted(self.container)} would pass {MAX_EXPANDED_CONTAINER} bytes after "
                "$(VAR) expansion; kubelet-winnet refuses such a container (docs/requests.md)",
            )
        return InvalidPodError(
            field,
            f"{what} expands to more than {MAX_EXPANDED_VALUE} bytes through $(VAR) "
            "references; kubelet-winnet refuses such a value (docs/requests.md)",
        )

    def expanded(
        self, text: str, env: Mapping[str, str], field: str, what: str,
        *more: Mapping[str, str],
    ) -> str:
        """``text`` with ``$(VAR)`` expanded from ``env`` (then ``more``), within both
        bounds (the container's is charged by :meth:`set` or :meth:`expand`)."""
        limit = self.limit(text)
        try:
            return expand(text, env, *more, limit=limit)
        except ExpansionTooLarge:
            raise self.refuse(field, what, container=limit == self.left) from None

    def set(self, name: str, value: str, field: str) -> None:
        """Account for env ``name`` holding ``value`` (replacing its old value)."""
        size = utf8_len(value)
        freed = self.sizes.get(name, 0)
        if size - freed > self.left:
            raise self.refuse(field, f"variable {quoted(name)}", container=True)
        self.left -= size - freed
        self.sizes[name] = size

    def expand(self, text: str, env: Mapping[str, str], field: str, what: str) -> str:
        """A ``command`` or ``args`` element, expanded and charged to the container."""
        value = self.expanded(text, env, field, what)
        self.left -= utf8_len(value)
        return value

    def expand_all(
        self, parts: list[str], env: Mapping[str, str], at: str, key: str
    ) -> list[str]:
        """``ExpandContainerCommandAndArgs`` of ``command`` or ``args``, charged to the
        container."""
        return [self.expand(part, env, f"{at}{key}[{index}]", f"{key}[{index}]")
                for index, part in enumerate(parts)]


# --- resources ------------------------------------------------------------------------


# The first kubelet whose apimachinery saturates ScaledValue() at the int64 range instead of
# wrapping: the release of the TestCalculateCPUMaximum table that pins "limit of 2^64 plus
# 4000 milli" to 1 (kubernetes commit 0411cc70, TODO #141166); earlier tables lack the row.
SATURATING_MILLI_VALUE_MINOR = 38


def calculate_cpu_maximum(cpu_limit_milli: int, processor_count: int, minor: int = 38) -> int:
    """Hundredths of a percent of all processors, clamped to [1, 10000], computed in Go's
    int64 arithmetic (products wrap; division truncates toward zero), per release:

    * 1.27+: ``calculateCPUMaximum`` (kuberuntime_container_windows.go, PR #114231):
      ``10 * cpuLimit.MilliValue() / cpuCount``;
    * 1.26: inline in ``calculateWindowsResources``:
      ``10000 * cpuLimit.MilliValue() / NumCPU / 1000``, which overflows 1000 times sooner.

    ``cpu_limit_milli`` is the int64 ``MilliValue()`` (:func:`go_milli_value`).
    """
    if minor >= 27:
        maximum = go_div(wrap_int64(10 * cpu_limit_milli), processor_count)
    else:
        maximum = go_div(go_div(wrap_int64(10000 * cpu_limit_milli), processor_count), 1000)
    return max(1, min(10000, maximum))


def _quantity_text(value: object) -> str:
    # The text Quantity parses: a string, or a JSON number's digits.
    return repr(value) if type(value) is float else str(value)


def _quantity(value: object, where: str) -> int:
    """A quantity field in billionths: a string, or a JSON number (Quantity unmarshals
    both)."""
    if type(value) is int:
        if value.bit_length() > 100:  # far beyond any resource; str() of it is costly
            raise InvalidPodError(where, "quantity out of range")
        value = str(value)
    elif type(value) is float:
        value = repr(value)
    if type(value) is not str:
        raise InvalidPodError(where, f"expected a quantity string, got {describe(value)}")
    try:
        return parse_nanos(value)
    except ValueError as exc:
        raise InvalidPodError(where, str(exc)) from None


def _quantities(raw: Mapping[str, Any] | None, where: str) -> dict[str, int]:
    """Resource name -> billionths of ``resources.limits`` or ``.requests`` at ``where``."""
    if raw is None:
        return {}
    values = {}
    for name in raw:
        if type(name) is not str:
            raise InvalidPodError(where, "expected string resource names")
        values[name] = _quantity(raw.get(name), f"{where}.{name}")
    return values


def _resources(container: Mapping[str, Any], at: str) -> tuple[dict[str, int], dict[str, int]]:
    """(limits, requests) in billionths; requests default to limits (defaults.go)."""
    resources = get_map(container, "resources", at)
    if resources is None:
        return {}, {}
    here = f"{at}resources."
    limits = _quantities(get_map(resources, "limits", here), f"{here}limits")
    requests = _quantities(get_map(resources, "requests", here), f"{here}requests")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return limits, requests


def fill_windows_resources(
    target: api_pb2.WindowsContainerResources, container: Mapping[str, Any], at: str,
    node: NodeContext, minor: int = 38,
) -> None:
    """``calculateWindowsResources`` into ``target`` (marked present): ``if
    !cpuLimit.IsZero()`` sets ``cpu_maximum`` and ``if memLimit != 0`` the memory limit,
    so a zero CPU or memory limit leaves the field unset (0 on the wire); ``cpu_count``
    and ``cpu_shares`` are never set."""
    target.SetInParent()
    resources = get_map(container, "resources", at)
    if resources is None:
        return
    here = f"{at}resources."
    raw = get_map(resources, "limits", here)
    limits = _quantities(raw, f"{here}limits")
    _quantities(get_map(resources, "requests", here), f"{here}requests")  # checked only
    if limits.get("cpu"):  # !cpuLimit.IsZero()
        assert raw is not None
        milli = go_milli_value(
            _quantity_text(raw.get("cpu")), saturating=minor >= SATURATING_MILLI_VALUE_MINOR
        )
        target.cpu_maximum = calculate_cpu_maximum(milli, node.processor_count, minor)
    memory = limits.get("memory")
    if memory:
        amount = nanos_value(memory)
        if not -_INT64_MAX - 1 <= amount <= _INT64_MAX:
            # memory_limit_in_bytes is an int64, as is the Quantity.Value() it comes from.
            raise InvalidPodError(
                f"{here}limits.memory",
                f"a limit of {amount} bytes does not fit the request's int64 "
                f"memory_limit_in_bytes (at most {_INT64_MAX})",
            )
        target.memory_limit_in_bytes = amount


# --- environment (kubelet_pods.go makeEnvironmentVariables) ---------------------------


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _format_map(items: Mapping[str, str]) -> str:
    # fieldpath.FormatMap: sorted `key="value"` lines.
    return "\n".join(f"{key}={_go_quote(items[key])}" for key in sorted(items))


_FIELD_PATHS = (
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
    "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
    "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs",
    "status.podIP", "status.podIPs",
)


def _parse_ip_sloppy(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy``: Go 1.16's ``net.ParseIP``, which also takes IPv4
    octets with leading zeros (as decimal) and no IPv6 zone."""
    if "%" in text:
        return None
    parts = text.split(".")
    if len(parts) == 4 and ":" not in text and all(p.isdigit() and p.isascii() for p in parts):
        text = ".".join(str(int(p)) if len(p) <= 3 else p for p in parts)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _is_ipv4(text: str) -> bool:
    # utilnet.IsIPv4String: ParseIPSloppy(ip).To4() != nil, so IPv4-mapped IPv6 counts.
    address = _parse_ip_sloppy(text)
    if isinstance(address, ipaddress.IPv6Address):
        return address.ipv4_mapped is not None
    return address is not None


def _is_ipv6(text: str) -> bool:
    return _parse_ip_sloppy(text) is not None and not _is_ipv4(text)


def sort_pod_ips(pod_ips: tuple[str, ...], node_ips: tuple[str, ...]) -> tuple[str, ...]:
    """``sortPodIPs`` (kubelet_pods.go): the first IP of the node's primary family (IPv6
    when the first node IP is IPv6, else IPv4), then the first IP of the other family;
    every other entry is dropped."""
    if not pod_ips:
        return ()
    primary, secondary = (
        (_is_ipv6, _is_ipv4) if node_ips and _is_ipv6(node_ips[0]) else (_is_ipv4, _is_ipv6)
    )
    ips: list[str] = []
    for family in (primary, secondary):
        for ip in pod_ips:
            if family(ip):
                ips.append(ip)
                break
    return tuple(ips)


HOST_IPS_MINOR = 28  # status.hostIPs: unknown before, PodHostIPs off by default in it


def _field_value(
    selector: Mapping[str, Any], where: str, view: PodView, node: NodeContext,
    pod_ips: tuple[str, ...], minor: int = 38,
    identity: tuple[str, str, str] | None = None,
) -> str:
    version = get_str(selector, "apiVersion", where, "v1")
    path = get_str(selector, "fieldPath", where)
    if version != "v1":
        raise SandboxConfigError(f"unsupported pod version: {echo(version)}", _ERROR_RULE)
    if path == "status.hostIPs" and minor < HOST_IPS_MINOR:
        # ConvertDownwardAPIFieldLabel knows status.hostIPs from 1.28 (KEP-2681)
        raise SandboxConfigError(f"field label not supported: {echo(path)}", _ERROR_RULE)
    base, _, subscript = path.partition("[")
    if subscript:
        if base not in ("metadata.annotations", "metadata.labels"):
            raise SandboxConfigError(f"field label not supported: {echo(path)}", _ERROR_RULE)
    elif path not in _FIELD_PATHS:
        raise SandboxConfigError(f"field label not supported: {echo(path)}", _ERROR_RULE)
    spec, spec_at = view.spec, view.at("spec.")
    name, namespace, uid = pod_identity_of(view) if identity is None else identity
    # Both are read (and type-checked) whichever field is asked for.
    node_name = get_str(spec, "nodeName", spec_at)
    service_account = get_str(spec, "serviceAccountName", spec_at)
    if base in ("metadata.annotations", "metadata.labels"):
        items = get_str_map(view.metadata, base.split(".")[1], view.at("metadata."))
        if not subscript:
            return _format_map(items)
        key = subscript[:-1].strip("'\"") if subscript.endswith("]") else subscript
        return items.get(key, "")
    if path == "metadata.name":
        return name
    if path == "metadata.namespace":
        return namespace
    if path == "metadata.uid":
        return uid
    if path == "spec.nodeName":
        return node_name or node.node_name  # the scheduler binds the pod to this node
    if path == "spec.serviceAccountName":
        return service_account
    if path == "status.hostIP":
        return node.node_ips[0] if node.node_ips else ""
    if path == "status.hostIPs":
        # podFieldSelectorRuntimeValue: "" while PodHostIPs is off (alpha, default off, 1.28)
        return ",".join(node.node_ips) if minor > HOST_IPS_MINOR else ""
    if path in ("status.podIP", "status.podIPs"):
        # podFieldSelectorRuntimeValue: "make podIPs order match node IP family preference"
        sorted_ips = sort_pod_ips(pod_ips, node.node_ips)
        if path == "status.podIPs":
            return ",".join(sorted_ips)
        return sorted_ips[0] if sorted_ips else pod_ips[0] if pod_ips else ""
    # spec.restartPolicy, spec.schedulerName, status.phase reach ExtractFieldPathAsString,
    # which only knows metadata fields.
    raise SandboxConfigError(f"unsupported fieldPath: {echo(path)}", _ERROR_RULE)


def _resource_value(
    selector: Mapping[str, Any], where: str, container: Mapping[str, Any],
    container_at: str, node: NodeContext,
    find: Callable[[str], tuple[Mapping[str, Any], str, str] | None],
) -> str:
    target = get_str(selector, "containerName", where)
    if target:
        found = find(target)
        if found is None:
            raise SandboxConfigError(
                f"container {echo(target)} not found", _ERROR_RULE
            )
        container, container_at = found[0], found[1]
    resource = get_str(selector, "resource", where)
    divisor_value = selector.get("divisor")
    divisor = _quantity("1" if divisor_value is None else divisor_value, f"{where}divisor")
    limits, requests = _resources(container, container_at)
    # defaultPodLimitsForDownwardAPI: missing limits are the node's allocatable.
    limits.setdefault("cpu", parse_nanos(node.allocatable_cpu))
    limits.setdefault("memory", parse_nanos(node.allocatable_memory))
    part, _, name = resource.partition(".")
    table = {"limits": limits, "requests": requests}.get(part)
    if table is None or name not in ("cpu", "memory", "ephemeral-storage"):
        raise SandboxConfigError(f"unsupported container resource : {echo(resource)}", _ERROR_RULE)
    amount = table.get(name, 0)
    if not divisor:
        raise InvalidPodError(f"{where}divisor", "must be positive")
    if name == "cpu":  # math.Ceil of the ratio
        result = -(-nanos_milli_value(amount) // nanos_milli_value(divisor))
    else:
        result = -(-nanos_value(amount) // nanos_value(divisor))
    return str(result)


def _lookup(
    objects: Mapping[str, Mapping[str, Any]] | None, kind: str, namespace: str, name: str,
) -> dict[Any, Any] | None:
    """The data of object ``name`` from the caller's store, copied into a dict (a
    caller's Mapping that raises becomes ``InvalidArgumentError``)."""
    argument = "config_maps" if kind == "configMap" else "secrets"
    if objects is None:
        raise SandboxConfigError(
            f"couldn't get {kind} {echo(namespace)}/{echo(name)}, no kubeClient defined",
            _ERROR_RULE,
        )
    try:
        found = objects.get(name)
        if found is None:
            return None
        if not is_mapping(found):
            raise InvalidArgumentError(
                f"{argument}[{quoted(name)}]", "a mapping of key to value", type_name(found)
            )
        return {key: found[key] for key in found}
    except InvalidArgumentError:
        raise
    except Exception as exc:  # a foreign Mapping that raises
        raise InvalidArgumentError(argument, "a readable mapping", type_name(exc)) from None


def _data_value(data: Mapping[str, Any], key: str, argument: str) -> str:
    item = data[key]
    if type(item) is bytes:
        try:
            item = item.decode()
        except UnicodeDecodeError:
            raise InvalidArgumentError(argument, "UTF-8 values", "bytes") from None
    if type(item) is not str or not is_utf8(item):
        raise InvalidArgumentError(argument, "str or UTF-8 bytes values", type_name(item))
    return item


def _not_found(kind: str, name: str) -> SandboxConfigError:
    plural = "configmaps" if kind == "configMap" else "secrets"
    return SandboxConfigError(f'{plural} "{echo(name)}" not found', _ERROR_RULE)


def environment(
    view: PodView, container: Mapping[str, Any], at: str, node: NodeContext,
    config_maps: Mapping[str, Mapping[str, Any]] | None,
    secrets: Mapping[str, Mapping[str, Any]] | None,
    pod_ips: tuple[str, ...],
    services: tuple[Service, ...] = (),
    minor: int = 38,
    budget: _Budget | None = None,
    find: Callable[[str], tuple[Mapping[str, Any], str, str] | None] | None = None,
    identity: tuple[str, str, str] | None = None,
) -> dict[str, str]:
    """Name -> value in the order the kubelet first defines each name (its own order,
    a Go map walk, is unspecified), then the service variables the container's own do
    not override (makeEnvironmentVariables: "Add remaining service environment vars").
    ``budget`` bounds the values' bytes (``InvalidPodError`` naming the variable past it).
    ``identity``: the pod's (name, namespace, uid), when the caller has read them."""
    if identity is None:
        identity = pod_identity_of(view)
    namespace = identity[1]
    if budget is None:
        budget = _Budget(get_str(container, "name", at))
    if find is None:
        find = ContainerBuilder(view, node, minor).find
    spec_at = view.at("spec.")
    links = get_bool(view.spec, "enableServiceLinks", spec_at)
    # enableServiceLinks defaults to true
    service_env = service_env_vars(services, namespace, links is not False) if services else {}
    env: dict[str, str] = {}
    for index, source in enumerate(get_objects(container, "envFrom", at)):
        where = f"{at}envFrom[{index}]."
        prefix = get_str(source, "prefix", where)
        for kind, key, argument, store in (
            ("configMap", "configMapRef", "config_maps", config_maps),
            ("secret", "secretRef", "secrets", secrets),
        ):
            ref = get_map(source, key, where)
            if ref is None:
                continue
            name = get_str(ref, "name", f"{where}{key}.")
            optional = get_bool(ref, "optional", f"{where}{key}.") is True
            data = _lookup(store, kind, namespace, name)
            if data is None:
                if optional:
                    break
                raise _not_found(kind, name)
            for data_key in data:
                if type(data_key) is not str or not is_utf8(data_key):
                    raise InvalidArgumentError(argument, "str keys", type_name(data_key))
                item = _data_value(data, data_key, argument)
                budget.set(prefix + data_key, item, f"{where}{key}")
                env[prefix + data_key] = item
            break
    for index, variable in enumerate(get_objects(container, "env", at)):
        if index >= _MAX_ENV:
            raise InvalidPodError(f"{at}env", f"more than {_MAX_ENV} variables")
        where = f"{at}env[{index}]."
        name = get_str(variable, "name", where)
        runtime_value = get_str(variable, "value", where)
        value_from = get_map(variable, "valueFrom", where)
        if runtime_value:
            # MappingFuncFor(tmpEnv, serviceEnv): the container's variables, then services'
            runtime_value = budget.expanded(
                runtime_value, env, f"{where}value", f"variable {quoted(name)}", service_env
            )
        elif value_from is not None:
            here = f"{where}valueFrom."
            field = get_map(value_from, "fieldRef", here)
            resource = get_map(value_from, "resourceFieldRef", here)
            cm_ref = get_map(value_from, "configMapKeyRef", here)
            secret_ref = get_map(value_from, "secretKeyRef", here)
            if field is not None:
                runtime_value = _field_value(
                    field, f"{here}fieldRef.", view, node, pod_ips, minor, identity
                )
            elif resource is not None:
                runtime_value = _resource_value(
                    resource, f"{here}resourceFieldRef.", container, at, node, find
                )
            elif cm_ref is not None or secret_ref is not None:
                kind, ref, key_name, store, argument = (
                    ("configMap", cm_ref, "configMapKeyRef", config_maps, "config_maps")
                    if cm_ref is not None
                    else ("secret", secret_ref, "secretKeyRef", secrets, "secrets")
                )
                assert ref is not None
                ref_at = f"{here}{key_name}."
                ref_name = get_str(ref, "name", ref_at)
                key = get_str(ref, "key", ref_at)
                optional = get_bool(ref, "optional", ref_at) is True
                data = _lookup(store, kind, namespace, ref_name)
                if data is None:
                    if optional:
                        continue
                    raise _not_found(kind, ref_name)
                if key not in data:
                    if optional:
                        continue
                    label = "ConfigMap" if kind == "configMap" else "Secret"
                    raise SandboxConfigError(
                        f"couldn't find key {echo(key)} in {label} "
                        f"{echo(namespace)}/{echo(ref_name)}",
                        _ERROR_RULE,
                    )
                runtime_value = _data_value(data, key, argument)
        budget.set(name, runtime_value, f"{where}value")
        env[name] = runtime_value
    for key, item in service_env.items():
        env.setdefault(key, item)
    return env


# --- runAsNonRoot (kuberuntime/security_context_windows.go) ----------------------------

WINDOWS_ROOT_USER_NAME = "ContainerAdministrator"  # windowsRootUserName


def _effective_non_root(
    view: PodView, container: Mapping[str, Any], at: str
) -> tuple[bool | None, str | None]:
    """(runAsNonRoot, windowsOptions.runAsUserName) of
    ``securitycontext.DetermineEffectiveSecurityContext``: the container's value of each
    field when set, else the pod's."""
    non_root: bool | None = None
    user_name: str | None = None
    # The pod's context, then the container's: each field set in the latter wins.
    for owner, where in ((view.spec, view.prefix + "spec."), (container, at)):
        if owner.get("securityContext") is None:
            continue
        context = get_map(owner, "securityContext", where)
        assert context is not None
        here = f"{where}securityContext."
        options = get_map(context, "windowsOptions", here)
        if options is not None and options.get("runAsUserName") is not None:
            user_name = get_str(options, "runAsUserName", f"{here}windowsOptions.")
        run_as_non_root = get_bool(context, "runAsNonRoot", here)
        if run_as_non_root is not None:
            non_root = run_as_non_root
    return non_root, user_name


def verify_run_as_non_root(
    view: PodView, container: Mapping[str, Any], at: str, image_username: str,
    identity: tuple[str, str, str] | None = None,
) -> None:
    """``verifyRunAsNonRoot`` on Windows, called by ``generateContainerConfig`` after the
    environment is built: with an effective ``runAsNonRoot: true``, the effective
    ``runAsUserName`` (else the image's user) must not be ``ContainerAdministrator``,
    compared case-insensitively (``strings.EqualFold``, PR #111009, kubelet 1.25+)."""
    non_root, user_name = _effective_non_root(view, container, at)
    if non_root is not True:
        return
    name, namespace, uid = pod_identity_of(view) if identity is None else identity
    # format.Pod: "<name>_<namespace>(<uid>)", printed with %q.
    where = f"(pod: {go_percent_q(f'{name}_{namespace}({uid})')}, container: " + echo(
        get_str(container, "name", at)
    ) + ")"
    if user_name is not None:
        if user_name.casefold() == WINDOWS_ROOT_USER_NAME.casefold():
            raise SandboxConfigError(
                f"container's runAsUserName ({echo(user_name)}) which will be regarded as "
                f"root identity and will break non-root policy {where}",
                _ERROR_RULE,
            )
        return
    if image_username and image_username.casefold() == WINDOWS_ROOT_USER_NAME.casefold():
        raise SandboxConfigError(
            f"container's runAsUser ({echo(image_username)}) which will be regarded as root "
            f"identity and will break non-root policy {where}",
            _ERROR_RULE,
        )


# --- the whole config -------------------------------------------------------------------


# json.dumps(data, separators=(",", ":"), ensure_ascii=False), without building the
# encoder on every call
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _go_json(data: Any) -> str:
    # encoding/json: compact, HTML-sensitive characters escaped.
    text = _COMPACT_JSON(data)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def container_hash(name: str, image: str) -> str:
    """``HashContainer`` of kubelet 1.31+ (PR #124220, pkg/kubelet/container/helpers.go):
    FNV-32a over the ``%#v`` dump of ``json.Marshal({"image": ..., "name": ...})``
    (a ``[]uint8``: ``([]uint8)[123 34 ...]``), as lowercase hex."""
    key = (name, image)
    hit = _HASHES.get(key)
    if hit is not None:
        return hit
    data = _go_json({"image": image, "name": name}).encode()
    dumped = ("([]uint8)[" + " ".join(map(str, data)) + "]").encode()
    value = 0x811C9DC5
    for byte in dumped:  # a byte at a time in Python: a third of container_config
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    if len(_HASHES) >= 256:  # bounded: names and images come from the input
        _HASHES.clear()
    _HASHES[key] = hashed = format(value, "x")
    return hashed


# (name, image) -> hash: a node agent builds the same containers on every restart.
_HASHES: dict[tuple[str, str], str] = {}


def _int_or_string(obj: Mapping[str, Any], key: str, at: str) -> int | str:
    value = obj.get(key)
    if value is None:
        return 0
    if type(value) is str:
        return value
    return get_int(obj, key, at, -(2**31), 2**31 - 1) or 0


def _pre_stop_annotation(handler: Mapping[str, Any], at: str) -> str:
    """Go's ``json.Marshal`` of the ``v1.LifecycleHandler`` (field order exec, httpGet,
    tcpSocket, sleep; omitempty as in the API types; httpGet path "/" and scheme HTTP
    from API defaulting)."""
    out: dict[str, Any] = {}
    action = get_map(handler, "exec", at)
    if action is not None:
        command = get_strings(action, "command", f"{at}exec.")
        out["exec"] = {"command": command} if command else {}
    action = get_map(handler, "httpGet", at)
    if action is not None:
        here = f"{at}httpGet."
        entry: dict[str, Any] = {"path": get_str(action, "path", here) or "/",
                                 "port": _int_or_string(action, "port", here)}
        host = get_str(action, "host", here)
        if host:
            entry["host"] = host
        entry["scheme"] = get_str(action, "scheme", here) or "HTTP"
        headers = [
            {"name": get_str(h, "name", f"{here}httpHeaders[{i}]."),
             "value": get_str(h, "value", f"{here}httpHeaders[{i}].")}
            for i, h in enumerate(get_objects(action, "httpHeaders", here))
        ]
        if headers:
            entry["httpHeaders"] = headers
        out["httpGet"] = entry
    action = get_map(handler, "tcpSocket", at)
    if action is not None:
        here = f"{at}tcpSocket."
        entry = {"port": _int_or_string(action, "port", here)}
        host = get_str(action, "host", here)
        if host:
            entry["host"] = host
        out["tcpSocket"] = entry
    action = get_map(handler, "sleep", at)
    if action is not None:
        out["sleep"] = {"seconds": get_int(action, "seconds", f"{at}sleep.") or 0}
    return _go_json(out)


def _ports_annotation(container: Mapping[str, Any], at: str, host_network: bool) -> str:
    ports = []
    for index, port in enumerate(get_objects(container, "ports", at)):
        where = f"{at}ports[{index}]."
        entry: dict[str, Any] = {}
        name = get_str(port, "name", where)
        container_port = get_int(port, "containerPort", where, 0, 65535) or 0
        host_port = get_int(port, "hostPort", where, 0, 65535) or 0
        if host_network and host_port == 0:
            host_port = container_port
        protocol = get_str(port, "protocol", where, "TCP") or "TCP"
        host_ip = get_str(port, "hostIP", where)
        # v1.ContainerPort field order; omitempty on all but containerPort.
        if name:
            entry["name"] = name
        if host_port:
            entry["hostPort"] = host_port
        entry["containerPort"] = container_port
        entry["protocol"] = protocol
        if host_ip:
            entry["hostIP"] = host_ip
        ports.append(entry)
    return _go_json(ports)


class ContainerBuilder:
    """The container configs of one pod, its containers located and their rule facts
    read once: building every container's config costs each container once (``run``
    builds them all), not once per container."""

    __slots__ = ("_facts", "_index", "identity", "minor", "node", "services", "view")

    def __init__(
        self, view: PodView, node: NodeContext, minor: int, services: tuple[Service, ...] = ()
    ) -> None:
        self.view = view
        self.node = node
        self.minor = minor
        self.services = services  # what the kubelet's service lister holds
        self._index: dict[str, tuple[Mapping[str, Any], str, str]] | None = None
        self._facts: tuple[PodFacts, dict[str, ContainerFacts]] | None = None
        self.identity: tuple[str, str, str] | None = None  # pod_identity_of, read once

    def names(self) -> list[str]:
        """Init then regular container names, in spec order (what ``SyncPod`` starts)."""
        at = self.view.at("spec.")
        names = []
        for kind in ("initContainers", "containers"):
            for index, container in enumerate(get_objects(self.view.spec, kind, at)):
                names.append(get_str(container, "name", f"{at}{kind}[{index}]."))
        return names

    def find(self, name: str) -> tuple[Mapping[str, Any], str, str] | None:
        """The first container named ``name`` in the kubelet's visiting order."""
        if self._index is None:
            index: dict[str, tuple[Mapping[str, Any], str, str]] = {}
            at = self.view.at("spec.")
            for kind in _KINDS:
                for position, container in enumerate(get_objects(self.view.spec, kind, at)):
                    where = f"{at}{kind}[{position}]."
                    index.setdefault(get_str(container, "name", where), (container, where, kind))
            self._index = index
        return self._index.get(name)

    def _read_facts(self) -> tuple[PodFacts, dict[str, ContainerFacts]]:
        # The rule facts of the pod, read once: the security context and the hosts
        # mount's HasWindowsHostProcessContainer both come from them.
        if self._facts is None:
            facts = pod_facts(self.view.spec, self.view.at("spec."))
            first: dict[str, ContainerFacts] = {}
            for container in facts.containers:
                first.setdefault(container.name, container)
            self._facts = facts, first
        return self._facts

    def _has_host_process(self) -> bool:
        """``HasWindowsHostProcessContainer``: some container's effective
        ``hostProcess`` (its own, else the pod's) is true."""
        facts, _ = self._read_facts()
        pod = facts.windows_options
        pod_value = None if pod is None else pod.host_process
        for container in facts.containers:
            own = container.windows_options
            value = None if own is None else own.host_process
            if (pod_value if value is None else value) is True:
                return True
        return False

    def _security_context(
        self, target: api_pb2.WindowsContainerSecurityContext, name: str,
        image_username: str,
    ) -> None:
        # windows_container_security_context's decision, on facts read once per pod.
        facts, first = self._read_facts()
        fill_container_security_context(
            target, decide_container(facts, first[name], image_username)
        )

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
        identity = self.identity
        if identity is None:
            identity = self.identity = pod_identity_of(view)
        name, namespace, uid = identity
        spec, spec_at = view.spec, view.at("spec.")
        host_network = get_bool(spec, "hostNetwork", spec_at) is True
        budget = _Budget(container_name)
        env = environment(
            view, container, at, node, config_maps, secrets, pod_ips, self.services, minor,
            budget, self.find, identity,
        )
        verify_run_as_non_root(view, container, at, image_username, identity)
        # Fields are set in place, one by one: faster in upb than keyword construction,
        # CopyFrom of built sub-messages or a map's update().
        config = api_pb2.ContainerConfig()
        metadata = config.metadata
        metadata.name = container_name
        metadata.attempt = attempt
        image = get_str(container, "image", at)
        image_spec = config.image
        image_spec.image = image if image_ref is None else image_ref
        if minor >= 30:  # ImageSpec.user_specified_image, sent since 1.30
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
            pair.value = item
        labels = config.labels
        labels[POD_NAME_LABEL] = name
        labels[POD_NAMESPACE_LABEL] = namespace
        labels[POD_UID_LABEL] = uid
        labels[CONTAINER_NAME_LABEL] = container_name
        annotations = config.annotations
        if minor >= 31:  # earlier kubelets hash the whole Go struct: not reproduced here
            annotations[HASH_ANNOTATION] = container_hash(container_name, image)
        annotations[RESTART_COUNT_ANNOTATION] = str(attempt)
        annotations[TERMINATION_PATH_ANNOTATION] = get_str(
            container, "terminationMessagePath", at, "/dev/termination-log"
        ) or "/dev/termination-log"
        annotations[TERMINATION_POLICY_ANNOTATION] = get_str(
            container, "terminationMessagePolicy", at, "File"
        ) or "File"
        deletion = get_int(view.metadata, "deletionGracePeriodSeconds", view.at("metadata."))
        if deletion is not None:
            annotations[DELETION_GRACE_ANNOTATION] = str(deletion)
        grace = get_int(spec, "terminationGracePeriodSeconds", spec_at)
        annotations[TERMINATION_GRACE_ANNOTATION] = str(30 if grace is None else grace)
        lifecycle = get_map(container, "lifecycle", at)
        if lifecycle is not None:
            pre_stop = get_map(lifecycle, "preStop", f"{at}lifecycle.")
            if pre_stop is not None:
                annotations[PRE_STOP_ANNOTATION] = _pre_stop_annotation(
                    pre_stop, f"{at}lifecycle.preStop."
                )
        if get_objects(container, "ports", at):
            annotations[PORTS_ANNOTATION] = _ports_annotation(container, at, host_network)
        mounts = config.mounts
        for container_path, host_path, read_only in container_mounts(
            view, container, at, root=node.kubelet_root, uid=uid,
            container_name=container_name, env=env, pod_ips=pod_ips, minor=minor,
            volume_paths=volume_paths, termination_log_id=termination_log_id,
            host_process=self._has_host_process,
        ):
            mount = mounts.add()
            mount.container_path = container_path
            mount.host_path = host_path
            if read_only:
                mount.readonly = True
        config.log_path = f"{container_name}\\{attempt}.log"  # filepath.Join on Windows
        config.stdin = get_bool(container, "stdin", at) is True
        config.stdin_once = get_bool(container, "stdinOnce", at) is True
        config.tty = get_bool(container, "tty", at) is True
        windows = config.windows
        fill_windows_resources(windows.resources, container, at, node, minor)
        self._security_context(windows.security_context, container_name, image_username)
        return config


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
    pod: object,
    container_name: str,
    *,
    node: NodeContext | None = None,
    attempt: int = 0,
    image_ref: str | None = None,
    image_username: str = "",
    config_maps: Mapping[str, Mapping[str, Any]] | None = None,
    secrets: Mapping[str, Mapping[str, Any]] | None = None,
    pod_ips: tuple[str, ...] = (),
    kubelet_version: object = DEFAULT_KUBELET_VERSION,
    feature_gates: object = None,
    services: object = None,
    volume_paths: Mapping[str, str] | None = None,
    termination_log_id: str = DEFAULT_TERMINATION_LOG_ID,
) -> api_pb2.ContainerConfig:
    """The ``ContainerConfig`` for the init, regular or ephemeral container
    ``container_name`` of ``pod``, restart count ``attempt``.

    ``image_ref``: the image ID the runtime's ``PullImage`` returned (default: the
    container's ``image``); ``image_username``: the user configured in the image.
    ``config_maps`` / ``secrets``: name -> data of the objects in the pod's namespace
    (``None``: like a kubelet without an API client). ``pod_ips``: the sandbox's IPs,
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
        view_pod(pod), node, profile.version.minor,
        () if services is None else read_services(services),
    )
    return builder.config(
        container_name, attempt, image_ref, image_username, config_maps, secrets, ips,
        {} if volume_paths is None else check_volume_paths(volume_paths),
        termination_log_id if termination_log_id is DEFAULT_TERMINATION_LOG_ID
        else check_termination_log_id(termination_log_id),
    )


def create_container_request(
    pod: object,
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
    kubelet_version: object = DEFAULT_KUBELET_VERSION,
    feature_gates: object = None,
    services: object = None,
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
    builder = ContainerBuilder(view, node, profile.version.minor, read_services(services))
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
        self, pod: object, *, node: NodeContext | None = None,
        kubelet_version: object = DEFAULT_KUBELET_VERSION, feature_gates: object = None,
    ) -> None:
        node = check_node(node)
        profile = kubelet_profile(kubelet_version, feature_gates)
        self.sandbox_config, view = build_sandbox_config(
            pod, node, 0, kubelet_version, feature_gates
        )
        self.run_pod_sandbox = api_pb2.RunPodSandboxRequest(
            config=self.sandbox_config, runtime_handler=runtime_handler(view, node)
        )
        self._builder = ContainerBuilder(view, node, profile.version.minor)

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
