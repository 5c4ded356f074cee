"""The container's environment: ``makeEnvironmentVariables`` and
``podFieldSelectorRuntimeValue`` (pkg/kubelet/kubelet_pods.go), with the downward API's
``fieldRef`` / ``resourceFieldRef`` values, ConfigMap and Secret references,
service-link variables (:mod:`~kubelet_winnet._kubelet.service_env`) and ``$(VAR)``
expansion (:mod:`~kubelet_winnet._kubelet.expansion`) within the library's bounds.
``makeMounts``, of the same Go file, is :mod:`~kubelet_winnet._kubelet.mounts`.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Any

from kubelet_winnet._describe import quoted, type_name
from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.expansion import (
    ExpansionNotUtf8,
    ExpansionTooLarge,
    GoString,
    env_bytes_error,
    expand,
    go_string,
    not_utf8_error,
    utf8_len,
)
from kubelet_winnet._kubelet.kuberuntime_container_windows import (
    container_resources,
    quantity_text,
)
from kubelet_winnet._kubelet.node import NodeContext
from kubelet_winnet._kubelet.objectview import is_mapping, readable
from kubelet_winnet._kubelet.pod import (
    PodView,
    container_index,
    echo,
    get_bool,
    get_object,
    get_objects,
    get_str,
    get_str_map,
    is_utf8,
    read_field,
)
from kubelet_winnet._kubelet.quantity import go_scaled_value, parse_nanos
from kubelet_winnet._kubelet.request_facts import (
    EXACT_DOWNWARD_DIVISION,
    HOST_IPS_FIELD,
    HOST_IPS_VALUE,
    NEWEST_RULE,
    POD_LEVEL_LIMITS_DEFAULT,
    ExpansionRule,
)
from kubelet_winnet._kubelet.service_env import Service, service_env_vars
from kubelet_winnet._kubelet.timeline import MAX_MINOR
from kubelet_winnet._kubelet.validation import is_qualified_name
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError, SandboxConfigError

__all__ = [
    "ERROR_RULE",
    "MAX_EXPANDED_CONTAINER",
    "MAX_EXPANDED_VALUE",
    "Budget",
    "environment",
    "secret_data",
    "sort_pod_ips",
]

_MAX_ENV = 10_000
# The rule id of the errors a container's config raises.
ERROR_RULE = "container"
# $(VAR) expansion bounds, in UTF-8 bytes (docs/requests.md, "Environment"). The kubelet
# has none: 29 variables each "$(V{i-1})$(V{i-1})" would ask it for a 512 MiB value.
# One value: far beyond the 32,767 characters Windows lets an environment variable hold.
MAX_EXPANDED_VALUE = 1 << 20
# One container (every env value, command and args): containerd's default gRPC receive
# limit (defaults.DefaultMaxRecvMsgSize = 16 << 20), which is also what
# kubelet_winnet.cri.RuntimeClient sends at most; a larger CreateContainer cannot arrive.
MAX_EXPANDED_CONTAINER = 16 << 20


# --- $(VAR) expansion's bounds (the expansion itself: _kubelet/expansion.py) -----------


class Budget:
    """The bytes of values one container may still hold, and how far expansion may grow
    one value."""

    __slots__ = ("container", "left", "rule", "sizes")

    def __init__(self, container: str, rule: ExpansionRule | None = None) -> None:
        self.container = container
        self.rule = rule  # the kubelet's $(VAR) expansion; None: rune-wise
        self.left = MAX_EXPANDED_CONTAINER
        self.sizes: dict[str, int] = {}  # env name -> bytes its value holds now

    def limit(self, text: GoString) -> int:
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
        self, text: str, env: Mapping[str, GoString], field: str, what: str,
        *more: Mapping[str, GoString], binary: bool = False,
    ) -> GoString:
        """``text`` with ``$(VAR)`` expanded from ``env`` (then ``more``), within both
        bounds (the container's is charged by :meth:`set` or :meth:`expand`). A result
        that is not UTF-8 is ``bytes`` where ``binary`` (an environment value, judged by
        :meth:`set`); for a string field it raises ``InvalidUtf8Error``."""
        limit = self.limit(text)
        rule = self.rule
        runes = rule is None or rule.rune_wise
        try:
            value = expand(text, env, *more, limit=limit, runes=runes)
        except ExpansionTooLarge:
            raise self.refuse(field, what, container=limit == self.left) from None
        except ExpansionNotUtf8 as exc:
            assert rule is not None  # only the byte-wise rule raises it
            if binary and rule.sends_env_bytes:
                return exc.value  # the bytes the kubelet sends
            # Whether the byte-wise step made it so, or only a Secret's bytes did.
            secret = type(expand(text, env, *more, limit=limit)) is bytes
            raise not_utf8_error(field, what, exc.value, rule, secret=secret) from None
        if type(value) is bytes:
            if not is_utf8(text):  # the caller's own lone surrogate, not a Secret's bytes
                raise InvalidPodError(field, "not valid Unicode (contains a lone surrogate)")
            if not binary:
                raise not_utf8_error(field, what, value, rule or NEWEST_RULE, secret=True)
        return value

    def set(self, name: str, value: GoString, field: str) -> None:
        """Account for env ``name`` holding ``value`` (replacing its old value); a value
        that is not UTF-8 is refused where this kubelet cannot send it."""
        if type(value) is bytes and self.rule is not None and not self.rule.sends_env_bytes:
            raise env_bytes_error(field, name, value, self.rule)
        size = utf8_len(value)
        freed = self.sizes.get(name, 0)
        if size - freed > self.left:
            raise self.refuse(field, f"variable {quoted(name)}", container=True)
        self.left -= size - freed
        self.sizes[name] = size

    def expand_all(
        self, parts: list[str], env: Mapping[str, GoString], at: str, key: str
    ) -> list[str]:
        """``ExpandContainerCommandAndArgs`` of ``command`` or ``args``, each element
        expanded and charged to the container (strings: a result that is not UTF-8 is
        ``InvalidUtf8Error``)."""
        values: list[str] = []
        for index, part in enumerate(parts):
            if "$" in part:  # the field's name is built only when it may be needed
                found = self.expanded(part, env, f"{at}{key}[{index}]", f"{key}[{index}]")
                assert type(found) is str  # expanded() refuses bytes for a string field
                value = found
            else:
                value = part  # nothing to expand: only the container's bound applies
            size = utf8_len(value)
            if size > self.left:
                raise self.refuse(f"{at}{key}[{index}]", f"{key}[{index}]", container=True)
            self.left -= size
            values.append(value)
        return values


# --- the environment (makeEnvironmentVariables) --------------------------------------


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


def _split_subscript(path: str) -> tuple[str, str] | None:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``base['key']`` -> (base, key), else
    ``None`` (an unclosed ``['`` is no subscript)."""
    if not path.endswith("']"):
        return None
    base, sep, key = path[:-2].partition("['")
    return (base, key) if sep and base else None


def _host_ips(node: NodeContext) -> list[str]:
    """``getHostIPsAnyWay`` (``GetNodeHostIPs``): the first node IP and the first of the
    other family, printed as ``net.IP.String`` prints them (IPv4-mapped as IPv4)."""
    # node_ips are the node's InternalIP addresses; ParseIPSloppy skips what it cannot
    # read (an IPv6 zone).
    ips = [ip for ip in map(_parse_ip_sloppy, node.node_ips) if ip is not None]
    if not ips:
        known = " ".join(f"{{InternalIP {echo(text)}}}" for text in node.node_ips)
        raise SandboxConfigError(f"host IP unknown; known addresses: [{known}]", ERROR_RULE)
    chosen = [ips[0]]
    first_v6 = _is_v6(ips[0])
    for ip in ips:
        if _is_v6(ip) != first_v6:
            chosen.append(ip)
            break
    return [_ip_string(ip) for ip in chosen]


def _is_v6(ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    # utilnet.IsIPv6: To4() == nil, so an IPv4-mapped address is IPv4
    return isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None


def _ip_string(ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> str:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _convert_field_label(version: str, path: str, minor: int) -> str:
    """``ConvertDownwardAPIFieldLabel`` (pkg/apis/core/pods/helpers.go): the internal
    field path, or the kubelet's refusal."""
    if version != "v1":
        raise SandboxConfigError(f"unsupported pod version: {echo(version)}", ERROR_RULE)
    split = _split_subscript(path)
    if split is not None:
        if split[0] in ("metadata.annotations", "metadata.labels"):
            return path
        raise SandboxConfigError(
            f"field label does not support subscript: {echo(path)}", ERROR_RULE
        )
    if path == "spec.host":  # "backwards compatibility with old v1 clients"
        return "spec.nodeName"
    if path in _FIELD_PATHS and (path != "status.hostIPs" or HOST_IPS_FIELD.holds(minor)):
        # ConvertDownwardAPIFieldLabel knows status.hostIPs from 1.28 (KEP-2681)
        return path
    raise SandboxConfigError(f"field label not supported: {echo(path)}", ERROR_RULE)


def _field_value(
    selector: Mapping[str, Any], where: str, view: PodView, node: NodeContext,
    pod_ips: tuple[str, ...], minor: int = MAX_MINOR,
) -> str:
    version = get_str(selector, "apiVersion", where, "v1")
    path = _convert_field_label(version, get_str(selector, "fieldPath", where), minor)
    spec, spec_at = view.spec, view.spec_at
    name, namespace, uid = view.identity()
    # Both are read (and type-checked) whichever field is asked for.
    node_name = get_str(spec, "nodeName", spec_at)
    service_account = get_str(spec, "serviceAccountName", spec_at)
    if path == "spec.nodeName":
        return node_name or node.node_name  # the scheduler binds the pod to this node
    if path == "spec.serviceAccountName":
        return service_account
    if path == "status.hostIP":
        return _host_ips(node)[0]
    if path == "status.hostIPs":
        # podFieldSelectorRuntimeValue: "" while PodHostIPs is off (alpha, default off, 1.28)
        return ",".join(_host_ips(node)) if HOST_IPS_VALUE.holds(minor) else ""
    if path in ("status.podIP", "status.podIPs"):
        # podFieldSelectorRuntimeValue: "make podIPs order match node IP family preference"
        sorted_ips = sort_pod_ips(pod_ips, node.node_ips)
        if path == "status.podIPs":
            return ",".join(sorted_ips)
        return sorted_ips[0] if sorted_ips else pod_ips[0] if pod_ips else ""
    return _extract_field_path(path, view, minor, name, namespace, uid)


def _extract_field_path(
    path: str, view: PodView, minor: int, name: str, namespace: str, uid: str
) -> str:
    """``fieldpath.ExtractFieldPathAsString``: metadata only."""
    split = _split_subscript(path)
    if split is not None:
        base, key = split
        kind = base.split(".")[1]
        # IsQualifiedName of the key (lowercased for annotations)
        errors = is_qualified_name(key.lower() if kind == "annotations" else key, minor)
        if errors:
            raise SandboxConfigError(
                f"invalid key subscript in {echo(path)}: {';'.join(errors)}", ERROR_RULE
            )
        return get_str_map(view.metadata, kind, view.metadata_at).get(key, "")
    if path in ("metadata.annotations", "metadata.labels"):
        items = get_str_map(view.metadata, path.split(".")[1], view.metadata_at)
        return golang.format_map(items)
    if path == "metadata.name":
        return name
    if path == "metadata.namespace":
        return namespace
    if path == "metadata.uid":
        return uid
    # spec.restartPolicy, spec.schedulerName, status.phase
    raise SandboxConfigError(f"unsupported fieldPath: {echo(path)}", ERROR_RULE)


def _downward_defaults(view: PodView, node: NodeContext, minor: int) -> dict[str, str]:
    """``defaultPodLimitsForDownwardAPI``'s defaults (pkg/kubelet/kubelet_resources.go):
    node allocatable (cpu, memory and ephemeral-storage, as MergeContainerResourceLimits
    merges them), or from 1.34 the pod's non-zero ``spec.resources.limits`` (cpu and
    memory: the only pod-level resources)."""
    defaults = {"cpu": node.allocatable_cpu, "memory": node.allocatable_memory,
                "ephemeral-storage": node.allocatable_ephemeral_storage}
    if POD_LEVEL_LIMITS_DEFAULT.holds(minor):
        pod_limits, _ = container_resources(view.spec, view.spec_at)
        for name in ("cpu", "memory"):
            if parse_nanos(pod_limits.get(name, "0")):
                defaults[name] = pod_limits[name]
    return defaults


def _ratio(amount: str, divisor: str, cpu: bool, minor: int) -> int:
    """The ceiling of quantity / divisor, as the kubelet computes it
    (pkg/api/v1/resource/helpers.go)."""
    if EXACT_DOWNWARD_DIVISION.holds(minor):  # convertQuantityToString
        nanos, by = parse_nanos(amount), parse_nanos(divisor)
        if nanos <= 0 or by <= 0:
            return 0
        return min(-(-nanos // by), golang.INT64_MAX)
    # convertResourceCPUToString: int64(math.Ceil(float64(cpu.MilliValue()) /
    # float64(divisor.MilliValue()))), Value() for the other resources: int64 as
    # apimachinery computes it, so past the int64 range what the quantity's form gives.
    scale = -3 if cpu else 0
    return golang.ceil_div_float64(go_scaled_value(amount, scale), go_scaled_value(divisor, scale))


def _resource_value(
    selector: Mapping[str, Any], where: str, container: Mapping[str, Any],
    container_at: str, node: NodeContext,
    find: Callable[[str], tuple[Mapping[str, Any], str, str] | None],
    view: PodView, minor: int = MAX_MINOR,
) -> str:
    target = get_str(selector, "containerName", where)
    defaulted = True  # the container being started gets the defaults, whatever its kind
    if target:
        found = find(target)
        # findContainerInPod: containers, then init containers; never ephemeral ones
        if found is None or found[2] == "ephemeralContainers":
            raise SandboxConfigError(f"container {echo(target)} not found", ERROR_RULE)
        container, container_at = found[0], found[1]
        defaulted = found[2] == "containers"  # init containers keep their own limits
    resource = get_str(selector, "resource", where)
    divisor_value = read_field(selector, "divisor", where)
    divisor = quantity_text("1" if divisor_value is None else divisor_value, f"{where}divisor")
    if not parse_nanos(divisor):  # ExtractContainerResourceValue: a zero divisor means 1
        divisor = "1"
    limits, requests = container_resources(container, container_at)
    if defaulted:  # MergeContainerResourceLimits: a missing or zero limit is defaulted
        for name, amount in _downward_defaults(view, node, minor).items():
            if not parse_nanos(limits.get(name, "0")):
                limits[name] = amount
    part, _, name = resource.partition(".")
    table = {"limits": limits, "requests": requests}.get(part)
    if table is None or not (
        name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-")
    ):
        raise SandboxConfigError(f"unsupported container resource : {echo(resource)}", ERROR_RULE)
    return str(_ratio(table.get(name, "0"), divisor, name == "cpu", minor))


def _lookup(
    objects: Mapping[str, Mapping[str, Any]] | None, kind: str, namespace: str, name: str,
) -> dict[Any, Any] | None:
    """The data of object ``name`` from the caller's store, copied into a dict (a
    caller's Mapping that raises becomes ``InvalidArgumentError``). A Secret may be
    given as its data or as the Secret object (:func:`secret_data`)."""
    argument = "config_maps" if kind == "configMap" else "secrets"
    if objects is None:
        raise SandboxConfigError(
            f"couldn't get {kind} {echo(namespace)}/{echo(name)}, no kubeClient defined",
            ERROR_RULE,
        )
    try:
        found = objects.get(name)
        if found is None:
            return None
        at = f"{argument}[{quoted(name)}]"
        if kind == "secret":
            secret = _secret_object(found)
            if secret is not None:
                own = _object_namespace(secret)
                if own not in ("", namespace):
                    raise InvalidArgumentError(
                        at, f"a Secret of the pod's namespace {quoted(namespace)}",
                        f"one of namespace {quoted(own)}",
                    )
                return secret_data(secret, at)
        if not is_mapping(found):
            raise InvalidArgumentError(at, "a mapping of key to value", type_name(found))
        return {key: found[key] for key in found}
    except InvalidArgumentError:
        raise
    except Exception as exc:  # a caller's Mapping (get, iteration, items) can raise anything
        raise InvalidArgumentError(argument, "a readable mapping", type_name(exc)) from None


def _data_value(data: Mapping[str, Any], key: str, argument: str) -> GoString:
    """One value of a ConfigMap's or Secret's data: ``str`` (UTF-8), or for a Secret
    ``bytes`` that are not UTF-8 (``string(v)`` of the Secret's ``[]byte`` in
    makeEnvironmentVariables keeps every byte)."""
    item = data[key]
    if type(item) is bytes:
        value = go_string(item)
        if type(value) is bytes and argument == "config_maps":
            # ConfigMap.data is map[string]string: the API holds no such value.
            raise InvalidArgumentError(argument, "UTF-8 values (a ConfigMap's data is text)",
                                       "bytes that are not UTF-8")
        return value
    if type(item) is not str:
        raise InvalidArgumentError(argument, "str or bytes values", type_name(item))
    if not is_utf8(item):
        raise InvalidArgumentError(argument, "str values that are valid Unicode",
                                   "a str with a lone surrogate")
    return item


def _secret_object(value: object) -> Mapping[str, Any] | None:
    """``value`` as a Secret object (``kind: Secret`` of ``v1``, or a ``V1Secret`` of the
    ``kubernetes`` client), or ``None`` for a plain mapping of key to value."""
    view = readable(value)
    if view is None:
        return None
    mapping, kind = view
    if kind == "Secret":
        return mapping
    if kind is None and mapping.get("kind") == "Secret" and mapping.get("apiVersion") == "v1":
        return mapping
    return None


def _object_namespace(secret: Mapping[str, Any]) -> str:
    metadata: Any = secret.get("metadata")
    own = metadata.get("namespace") if is_mapping(metadata) else None
    return own if type(own) is str else ""


def secret_data(secret: Mapping[str, Any], at: str) -> dict[str, bytes]:
    """A Secret object's data as the kubelet's ``secret.Data`` (``map[string][]byte``)
    holds it: ``data`` is base64, as the API and ``kubectl get secret -o json`` write a
    ``[]byte`` (Go's ``base64.StdEncoding``: padding required, line breaks skipped; a
    ``V1Secret`` of the ``kubernetes`` client holds the same text), ``bytes`` already
    decoded are taken as they are, and ``stringData`` is text laid over it (the API
    server merges it into ``data`` on write: a key in both takes ``stringData``). Bad
    data is ``InvalidArgumentError`` naming ``at`` (may be empty) and the key, never the
    value."""
    data: dict[str, bytes] = {}
    for name in ("data", "stringData"):
        field = f"{at}.{name}" if at else name
        items = secret.get(name)
        if items is None:
            continue
        if not is_mapping(items):
            raise InvalidArgumentError(field, "a mapping", type_name(items))
        for key in items:
            if type(key) is not str or not is_utf8(key):
                raise InvalidArgumentError(field, "str keys", type_name(key))
            value = items[key]
            where = f"{field}[{quoted(key)}]"
            if name == "stringData":
                if type(value) is not str or not is_utf8(value):
                    raise InvalidArgumentError(where, "text", type_name(value))
                data[key] = value.encode()
            elif value is None:  # JSON null: an empty []byte
                data[key] = b""
            elif type(value) is bytes:
                data[key] = value
            elif type(value) is str:
                data[key] = _base64(value, where)
            else:
                raise InvalidArgumentError(where, "base64 text", type_name(value))
    return data


# Go's base64.StdEncoding.DecodeString after it drops "\r" and "\n": groups of four,
# padding required.
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _base64(text: str, where: str) -> bytes:
    cleaned = text.replace("\r", "").replace("\n", "")
    if not _BASE64.fullmatch(cleaned):
        # The text is not shown: it is a Secret's.
        raise InvalidArgumentError(
            where, "base64 text (a Secret's data as the API holds it)",
            f"other text ({len(text)} character{'' if len(text) == 1 else 's'}, not shown)",
        )
    return base64.b64decode(cleaned)


def _not_found(kind: str, name: str) -> SandboxConfigError:
    # The default Watch strategy's managers (pkg/kubelet/configmap, pkg/kubelet/secret:
    # NewWatching*Manager, gr := corev1.Resource("configmap") / ("secret")) answer with
    # apierrors.NewNotFound(gr, name): the singular resource.
    resource = "configmap" if kind == "configMap" else "secret"
    return SandboxConfigError(f'{resource} "{echo(name)}" not found', ERROR_RULE)


def environment(
    view: PodView, container: Mapping[str, Any], at: str, node: NodeContext,
    config_maps: Mapping[str, Mapping[str, Any]] | None,
    secrets: Mapping[str, Mapping[str, Any]] | None,
    pod_ips: tuple[str, ...],
    services: tuple[Service, ...] = (),
    minor: int = MAX_MINOR,
    budget: Budget | None = None,
    find: Callable[[str], tuple[Mapping[str, Any], str, str] | None] | None = None,
) -> dict[str, GoString]:
    """Name -> value in the order the kubelet first defines each name (its own order,
    a Go map walk, is unspecified), then the service variables the container's own do
    not override (makeEnvironmentVariables: "Add remaining service environment vars").
    ``budget`` bounds the values' bytes (``InvalidPodError`` naming the variable past it)
    and holds the kubelet's rule: a value that is not UTF-8 (a Secret's bytes, or what
    ``$(VAR)`` made of them) is ``bytes``, refused where that kubelet cannot send it."""
    namespace = view.identity()[1]
    if budget is None:
        budget = Budget(get_str(container, "name", at))
    if find is None:
        find = container_index(view).get
    links = get_bool(view.spec, "enableServiceLinks", view.spec_at)
    # enableServiceLinks defaults to true
    service_env = service_env_vars(services, namespace, links is not False) if services else {}
    env: dict[str, GoString] = {}
    for index, source in enumerate(get_objects(container, "envFrom", at)):
        _env_from(source, f"{at}envFrom[{index}].", namespace, config_maps, secrets, budget, env)
    for index, variable in enumerate(get_objects(container, "env", at)):
        if index >= _MAX_ENV:
            raise InvalidPodError(f"{at}env", f"more than {_MAX_ENV} variables")
        where = f"{at}env[{index}]."
        name = get_str(variable, "name", where)
        literal = get_str(variable, "value", where)
        runtime_value: GoString = literal
        value_from = get_object(variable, "valueFrom", where)
        if literal:
            if "$" in literal:  # the names an error needs are built only then
                # MappingFuncFor(tmpEnv, serviceEnv): the container's variables, then
                # services'
                runtime_value = budget.expanded(
                    literal, env, f"{where}value", f"variable {quoted(name)}",
                    service_env, binary=True,
                )
            elif utf8_len(literal) > budget.left:  # expanded()'s bound, unexpanded
                raise budget.refuse(f"{where}value", f"variable {quoted(name)}",
                                    container=True)
        elif value_from is not None:
            found = _value_from(
                value_from, f"{where}valueFrom.", view, container, at, node, pod_ips, minor,
                find, config_maps, secrets,
            )
            if found is None:  # an optional reference that is not there
                continue
            runtime_value = found
        budget.set(name, runtime_value, f"{where}value")
        env[name] = runtime_value
    for key, item in service_env.items():
        env.setdefault(key, item)
    return env


def _env_from(
    source: Mapping[str, Any], where: str, namespace: str,
    config_maps: Mapping[str, Mapping[str, Any]] | None,
    secrets: Mapping[str, Mapping[str, Any]] | None, budget: Budget,
    env: dict[str, GoString],
) -> None:
    """One ``envFrom`` entry's variables into ``env``: its ConfigMap or Secret, each key
    with the entry's prefix."""
    prefix = get_str(source, "prefix", where)
    for kind, key, argument, store in (
        ("configMap", "configMapRef", "config_maps", config_maps),
        ("secret", "secretRef", "secrets", secrets),
    ):
        ref = get_object(source, key, where)
        if ref is None:
            continue
        name = get_str(ref, "name", f"{where}{key}.")
        optional = get_bool(ref, "optional", f"{where}{key}.") is True
        data = _lookup(store, kind, namespace, name)
        if data is None:
            if optional:
                return
            raise _not_found(kind, name)
        for data_key in data:
            if type(data_key) is not str or not is_utf8(data_key):
                raise InvalidArgumentError(argument, "str keys", type_name(data_key))
            item = _data_value(data, data_key, argument)
            budget.set(prefix + data_key, item, f"{where}{key}")
            env[prefix + data_key] = item
        return


def _value_from(
    value_from: Mapping[str, Any], here: str, view: PodView, container: Mapping[str, Any],
    at: str, node: NodeContext, pod_ips: tuple[str, ...], minor: int,
    find: Callable[[str], tuple[Mapping[str, Any], str, str] | None],
    config_maps: Mapping[str, Mapping[str, Any]] | None,
    secrets: Mapping[str, Mapping[str, Any]] | None,
) -> GoString | None:
    """One ``env[].valueFrom``'s value; ``None`` for an optional ConfigMap or Secret key
    that is not there (the variable is left out)."""
    field = get_object(value_from, "fieldRef", here)
    resource = get_object(value_from, "resourceFieldRef", here)
    cm_ref = get_object(value_from, "configMapKeyRef", here)
    secret_ref = get_object(value_from, "secretKeyRef", here)
    if field is not None:
        return _field_value(field, f"{here}fieldRef.", view, node, pod_ips, minor)
    if resource is not None:
        return _resource_value(
            resource, f"{here}resourceFieldRef.", container, at, node, find, view, minor
        )
    if cm_ref is not None:
        return _key_ref_value(cm_ref, f"{here}configMapKeyRef.", "configMap", config_maps,
                              view.identity()[1])
    if secret_ref is not None:
        return _key_ref_value(secret_ref, f"{here}secretKeyRef.", "secret", secrets,
                              view.identity()[1])
    return ""


def _key_ref_value(
    ref: Mapping[str, Any], ref_at: str, kind: str,
    store: Mapping[str, Mapping[str, Any]] | None, namespace: str,
) -> GoString | None:
    """A ``configMapKeyRef`` / ``secretKeyRef`` value, ``None`` if optional and missing."""
    argument = "config_maps" if kind == "configMap" else "secrets"
    ref_name = get_str(ref, "name", ref_at)
    key = get_str(ref, "key", ref_at)
    optional = get_bool(ref, "optional", ref_at) is True
    data = _lookup(store, kind, namespace, ref_name)
    if data is None:
        if optional:
            return None
        raise _not_found(kind, ref_name)
    if key not in data:
        if optional:
            return None
        label = "ConfigMap" if kind == "configMap" else "Secret"
        raise SandboxConfigError(
            f"couldn't find key {echo(key)} in {label} {echo(namespace)}/{echo(ref_name)}",
            ERROR_RULE,
        )
    return _data_value(data, key, argument)
