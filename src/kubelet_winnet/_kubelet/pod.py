"""The pod reader: one reading layer for every accepted pod form and every reader.

Accepted: a manifest mapping in the API's camelCase (a Pod, or a workload whose pod
template is used), a ``kubernetes.client`` object (``V1Pod``, workloads, ``V1PodTemplate``,
``V1PodTemplateSpec``; client 36 or 37, never imported), an attribute object such as
``SimpleNamespace`` with snake_case attributes, or :class:`kubelet_winnet.Pod`. Objects are
read through :class:`~kubelet_winnet._kubelet.objectview.ObjectView`, so everything below
is written once, against the ``Mapping`` protocol, and the same value gives the same result
or the same ``InvalidPodError.field`` in every form.

In this file, in reading order: the typed getters (``get_*``, each one guarded lookup,
and :func:`read_field` for a field read as it is: ``InvalidPodError`` at ``at + key``,
nothing coerced, ``"true"`` is not ``true``, ``null`` means unset as in the API, fields
nobody reads are not checked); :func:`pod_template` (any form to the pod or a workload's
template and its JSON path prefix); :func:`view_pod` (the :class:`PodView` the request
builders read: metadata, spec, path prefixes, the pod's identity); :func:`read_pod` (the
rule facts, ``PodFacts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubelet_winnet._describe import describe, quoted, type_name
from kubelet_winnet._kubelet.objectview import (
    SCALARS,
    GuardedMapping,
    ObjectView,
    is_mapping,
    readable,
    unreadable,
)
from kubelet_winnet._kubelet.rules import (
    ContainerFacts,
    ContainerKind,
    PodFacts,
    PortFacts,
    WindowsOptions,
)
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError

if TYPE_CHECKING:
    from typing import Protocol, TypeAlias

    from kubelet_winnet._kubelet.model import Pod

    class ClientObject(Protocol):
        """A ``kubernetes.client`` model (``V1Pod``, ``V1Deployment``, ...): the reader
        finds its camelCase fields through ``attribute_map`` (client 36 and 37)."""

        @property
        def attribute_map(self) -> Mapping[str, str]: ...

    # What the public functions take for a pod: a manifest (a Pod or a workload), a
    # kubernetes.client object, or kw.Pod; anything else is an InvalidArgumentError.
    PodInput: TypeAlias = "Mapping[str, Any] | Pod | ClientObject"

__all__ = [
    "CONTAINER_KINDS",
    "WORKLOAD_TEMPLATE_PATHS",
    "ObjectView",
    "PodIdentity",
    "PodView",
    "container_index",
    "echo",
    "get_bool",
    "get_int",
    "get_list",
    "get_object",
    "get_objects",
    "get_optional_str",
    "get_str",
    "get_str_map",
    "get_strings",
    "is_utf8",
    "not_utf8_error",
    "pod_facts",
    "pod_identity",
    "pod_spec",
    "pod_template",
    "read_field",
    "read_pod",
    "read_ports",
    "view_pod",
]

CONTAINER_KINDS: tuple[ContainerKind, ...] = ("initContainers", "containers", "ephemeralContainers")

# The one table of where each workload keeps its pod template (camelCase keys from the
# manifest root). A Pod is its own template.
WORKLOAD_TEMPLATE_PATHS: Mapping[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}
_POD_KINDS = frozenset({"Pod", "PodTemplateSpec"})  # the latter: a client class only

_NOT_UTF8 = "not valid Unicode (contains a lone surrogate)"
_INT64 = (-(2**63), 2**63 - 1)


def is_utf8(text: str) -> bool:
    """``text`` can be UTF-8 encoded (no lone surrogates, as ``json.loads`` can produce)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


ECHO_MAX = 256  # longer values are cut in messages (the API never lets them through)


def echo(text: str) -> str:
    """Caller text for a kubelet message: as is, unless absurdly long."""
    return cut(text, ECHO_MAX)


# --- the typed getters: obj[key] at path prefix `at` ("spec.", "spec.containers[0].") ---
# Each makes its one guarded lookup through read_field.


def read_field(obj: Mapping[str, Any], key: str, at: str) -> Any:
    """``obj.get(key)`` with the getters' guard, for a field read as it is."""
    try:
        return obj.get(key)
    except Exception as exc:  # a caller's mapping: see _unreadable_field
        raise _unreadable_field(at, key, exc) from None


def _unreadable_field(at: str, key: str, exc: Exception) -> Exception:
    # A caller's dict key whose __eq__ raises (its hash equal to ``key``'s) or a
    # caller's Mapping.get can raise anything; a view's own error names its path.
    return exc if isinstance(exc, InvalidPodError) else unreadable(at + key, exc)


def _bad(field: str, expected: str, value: object) -> InvalidPodError:
    return InvalidPodError(field, f"expected {expected}, got {describe(value)}")


def _object(value: object, field: str) -> Mapping[str, Any]:
    """``value`` as a readable object at ``field``, or ``InvalidPodError``."""
    cls = type(value)
    if cls is dict or cls is ObjectView or cls is GuardedMapping:
        return value  # type: ignore[return-value]
    if cls not in SCALARS and cls is not list and cls is not tuple and is_mapping(value):
        return GuardedMapping(value, f"{field}.")  # type: ignore[arg-type]
    raise _bad(field, "an object", value)


def get_object(obj: Mapping[str, Any], key: str, at: str) -> Mapping[str, Any] | None:
    """An object field (``None`` if unset). Do not mutate what the getters return."""
    value = read_field(obj, key, at)
    if value is None or type(value) is dict:
        return value
    return _object(value, at + key)


def get_list(obj: Mapping[str, Any], key: str, at: str) -> list[Any]:
    """An array field, copied (``[]`` if unset)."""
    value = read_field(obj, key, at)
    if value is None:
        return []
    if type(value) is not list and type(value) is not tuple:
        raise _bad(at + key, "an array", value)
    return list(value)


def get_objects(obj: Mapping[str, Any], key: str, at: str) -> list[Mapping[str, Any]]:
    """The objects of array ``key`` (each checked); element ``i`` is at ``{at}{key}[i].``."""
    value = read_field(obj, key, at)
    if value is None:  # most arrays are absent
        return []
    if type(value) is list:
        for item in value:
            if type(item) is not dict:
                break
        else:
            return value  # plain manifest data: nothing to wrap or report
    items = get_list(obj, key, at)
    return [_object(item, f"{at}{key}[{index}]") for index, item in enumerate(items)]


def get_str(obj: Mapping[str, Any], key: str, at: str, default: str = "") -> str:
    value = read_field(obj, key, at)
    if type(value) is str:
        return value
    if value is None:
        return default
    raise _bad(at + key, "a string", value)


def get_optional_str(obj: Mapping[str, Any], key: str, at: str) -> str | None:
    """A string field where absent and ``""`` differ (a Go ``*string``)."""
    value = read_field(obj, key, at)
    if value is None or type(value) is str:
        return value
    raise _bad(at + key, "a string", value)


def get_bool(obj: Mapping[str, Any], key: str, at: str) -> bool | None:
    value = read_field(obj, key, at)
    if value is None or value is True or value is False:
        return value
    raise _bad(at + key, "a boolean", value)


def get_int(
    obj: Mapping[str, Any], key: str, at: str, low: int = _INT64[0], high: int = _INT64[1]
) -> int | None:
    """An integer field within ``low``..``high`` (int64 by default), ``None`` if unset."""
    value = read_field(obj, key, at)
    if value is None or (type(value) is int and low <= value <= high):
        return value
    if type(value) is not int:
        raise _bad(at + key, "an integer", value)
    raise InvalidPodError(at + key, f"{describe(value)} outside the range {low} to {high}")


def get_strings(obj: Mapping[str, Any], key: str, at: str) -> list[str]:
    """An array of strings (``[]`` if unset)."""
    items = get_list(obj, key, at)
    for index, item in enumerate(items):
        if type(item) is not str:
            raise InvalidPodError(
                f"{at}{key}[{index}]", f"expected a string, got {describe(item)}"
            )
    return items


def get_str_map(obj: Mapping[str, Any], key: str, at: str) -> dict[str, str]:
    """An object of string values (labels, annotations), copied (``{}`` if unset)."""
    value = get_object(obj, key, at)
    if value is None:
        return {}
    out = {}
    for name in value:
        if type(name) is not str:
            # The key is what is wrong (str() of it may raise or run for seconds).
            raise InvalidPodError(
                at + key, f"expected string keys, got a key that is {describe(name)}"
            )
        item = value.get(name)
        if type(item) is not str:
            raise _bad(f"{at}{key}[{quoted(name)}]", "a string", item)
        out[name] = item
    return out


# --- from any form to the pod template -------------------------------------------------


def _root(pod: object) -> tuple[Mapping[str, Any], str | None]:
    """The pod argument as a readable mapping, and its kind if its class says it."""
    found = readable(pod)
    if found is None:
        raise InvalidArgumentError(
            "pod",
            "a Pod or workload manifest mapping, a kubernetes.client object or "
            "kubelet_winnet.Pod",
            type_name(pod),
        )
    return found


def pod_template(pod: object) -> tuple[Mapping[str, Any], str]:
    """``(template, at)`` for any accepted form of ``pod``.

    ``template`` is a read-only camelCase ``Mapping`` of the pod (for a workload, its pod
    template: ``metadata`` and ``spec``); ``at`` is that template's JSON path prefix
    (``""`` for a pod, ``"spec.template."``, ``"spec.jobTemplate.spec.template."``,
    ``"template."``). Read fields with the ``get_*`` helpers and ``at``. Raises
    ``InvalidPodError`` (a kind that has no pod template, a missing template) or
    ``InvalidArgumentError`` (not a pod form at all).
    """
    root, kind = (pod, None) if type(pod) is dict else _root(pod)  # most pods are dicts
    if kind is None:
        kind = get_optional_str(root, "kind", "")
        if kind is None:
            return root, ""
    if kind in _POD_KINDS:
        return root, ""
    path = WORKLOAD_TEMPLATE_PATHS.get(kind)
    if path is None:
        raise InvalidPodError(
            "kind", f"{quoted(kind)} is neither a Pod nor a workload with a pod template"
        )
    node: Mapping[str, Any] = root
    at = ""
    for key in path:
        found = get_object(node, key, at)
        if found is None:
            raise InvalidPodError(at + key, f"required: {kind} has no pod template here")
        node, at = found, f"{at}{key}."
    return node, at


def pod_spec(template: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    """The ``spec`` of the template :func:`pod_template` gave, which must be there."""
    spec = get_object(template, "spec", at)
    if spec is None:
        raise InvalidPodError(f"{at}spec", "required: the pod has no spec")
    return spec


# --- the request builders' view: metadata, spec and their paths ------------------------


class PodView:
    """The pod's ``metadata`` and ``spec`` with the JSON path prefix of its root."""

    __slots__ = ("_identity", "claims", "metadata", "metadata_at", "prefix", "spec", "spec_at")

    def __init__(
        self, metadata: Mapping[str, Any], spec: Mapping[str, Any], prefix: str,
        claims: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.metadata = metadata
        self.spec = spec
        self.prefix = prefix  # "" for a Pod, "spec.template." for a Deployment, ...
        self.spec_at = prefix + "spec."  # the path prefixes the getters are given most
        self.metadata_at = prefix + "metadata."
        # A StatefulSet's volumeClaimTemplates as (volume name, JSON path): its controller
        # adds each to the pod as a persistentVolumeClaim volume (updateStorage).
        self.claims = claims
        self._identity: tuple[str, str, str] | None = None

    def at(self, path: str) -> str:
        return self.prefix + path

    def identity(self) -> tuple[str, str, str]:
        """(name, namespace, uid), read once; a namespace left out of a manifest is
        ``default``, the namespace ``kubectl`` would create it in."""
        if self._identity is None:
            metadata, at = self.metadata, self.metadata_at
            self._identity = (
                get_str(metadata, "name", at),
                get_str(metadata, "namespace", at, "default"),
                get_str(metadata, "uid", at),
            )
        return self._identity


def view_pod(pod: object) -> PodView:
    """The pod in ``pod``; raises ``InvalidPodError`` or ``InvalidArgumentError``."""
    template, prefix = pod_template(pod)
    spec = pod_spec(template, prefix)
    metadata = get_object(template, "metadata", prefix) or {}
    if prefix:
        # A template has no name or namespace of its own; its controller derives them
        # from the workload (the generated name suffix is unknowable here).
        root, kind = _root(pod)  # the workload itself, as the reader sees it
        workload = get_object(root, "metadata", "") or {}
        merged = dict(metadata)
        for key in ("name", "namespace"):
            if read_field(merged, key, f"{prefix}metadata.") is None:
                value = read_field(workload, key, "metadata.")
                if value is not None:
                    merged[key] = value
        metadata = merged
        if (kind or read_field(root, "kind", "")) == "StatefulSet":
            return PodView(metadata, spec, prefix, _claims(root))
    return PodView(metadata, spec, prefix)


def container_index(view: PodView) -> dict[str, tuple[Mapping[str, Any], str, str]]:
    """Container name -> (container, its path prefix, its kind), the first of each name in
    the kubelet's visiting order (init, regular, ephemeral)."""
    index: dict[str, tuple[Mapping[str, Any], str, str]] = {}
    at = view.spec_at
    for kind in CONTAINER_KINDS:
        for position, container in enumerate(get_objects(view.spec, kind, at)):
            where = f"{at}{kind}[{position}]."
            index.setdefault(get_str(container, "name", where), (container, where, kind))
    return index


def _claims(root: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(name, path) of each of a StatefulSet's ``volumeClaimTemplates``
    (pkg/controller/statefulset/stateful_set_utils.go ``updateStorage``)."""
    spec = get_object(root, "spec", "") or {}
    claims = []
    for index, claim in enumerate(get_objects(spec, "volumeClaimTemplates", "spec.")):
        at = f"spec.volumeClaimTemplates[{index}]."
        metadata = get_object(claim, "metadata", at) or {}
        claims.append((get_str(metadata, "name", f"{at}metadata."), at.rstrip(".")))
    return tuple(claims)


def _first_non_utf8(value: Any, at: str, depth: int = 0) -> str | None:
    """The JSON path of the first string (or key) protobuf cannot encode, or ``None``."""
    if depth > 64:
        return None
    if type(value) is str:
        return None if is_utf8(value) else at
    if type(value) is dict or type(value) is ObjectView:
        for key in value:
            if type(key) is not str:
                continue  # never str() of a caller's key; the readers refuse it anyway
            where = f"{at}.{key}" if at else key
            if not is_utf8(key):
                return where
            found = _first_non_utf8(value.get(key), where, depth + 1)
            if found is not None:
                return found
    elif type(value) is list or type(value) is tuple:
        for index, item in enumerate(value):
            found = _first_non_utf8(item, f"{at}[{index}]", depth + 1)
            if found is not None:
                return found
    return None


def not_utf8_error(view: PodView) -> InvalidPodError:
    """For a ``UnicodeEncodeError`` raised while filling a message: name the field."""
    for part, value in (("metadata", view.metadata), ("spec", view.spec)):
        found = _first_non_utf8(value, view.at(part))
        if found is not None:
            return InvalidPodError(found, _NOT_UTF8)
    return InvalidPodError(view.prefix.rstrip("."), _NOT_UTF8)


# --- the facts the kubelet rules read ---------------------------------------------------


def _windows_options(context: Mapping[str, Any], at: str) -> WindowsOptions | None:
    """``windowsOptions`` of the security context ``context`` at ``at``."""
    options = get_object(context, "windowsOptions", at)
    if options is None:
        return None
    here = f"{at}windowsOptions."
    user = get_optional_str(options, "runAsUserName", here)
    gmsa_name = get_optional_str(options, "gmsaCredentialSpecName", here)
    gmsa = get_optional_str(options, "gmsaCredentialSpec", here)
    host_process = get_bool(options, "hostProcess", here)
    # These two go into runtime.v1 strings, which must be valid UTF-8.
    if user is not None and not is_utf8(user):
        raise InvalidPodError(f"{here}runAsUserName", _NOT_UTF8)
    if gmsa is not None and not is_utf8(gmsa):
        raise InvalidPodError(f"{here}gmsaCredentialSpec", _NOT_UTF8)
    # Validated values only: the same few option sets recur on every pod of a workload,
    # and looking one up is cheaper than building it.
    key = (user, gmsa_name, gmsa, host_process)
    found = _OPTION_SETS.get(key)
    if found is None:
        found = WindowsOptions(user, gmsa_name, gmsa, host_process)
        if len(_OPTION_SETS) >= 256:  # bounded: the key holds caller strings
            _OPTION_SETS.clear()
        _OPTION_SETS[key] = found
    return found


_OPTION_SETS: dict[tuple[str | None, str | None, str | None, bool | None], WindowsOptions] = {}


def read_ports(container: Mapping[str, Any], at: str) -> tuple[PortFacts, ...]:
    """The ``ports`` of the container ``container`` at ``at``, each field typed as the API
    decodes it (a port number within 0..65535, which any int32 port the API server keeps
    is); ``InvalidPodError`` names the field that is not."""
    ports = get_objects(container, "ports", at)
    if not ports:
        return ()
    read = []
    for index, port in enumerate(ports):
        where = f"{at}ports[{index}]."
        read.append(PortFacts(
            get_int(port, "containerPort", where, 0, 65535) or 0,
            get_int(port, "hostPort", where, 0, 65535) or 0,
            get_str(port, "protocol", where),
            get_str(port, "hostIP", where),
            get_str(port, "name", where),
        ))
    return tuple(read)


def pod_facts(spec: Mapping[str, Any], at: str) -> PodFacts:
    """The rule inputs of the pod spec ``spec`` found at path prefix ``at`` ("spec.")."""
    host_network = get_bool(spec, "hostNetwork", at) is True
    context = get_object(spec, "securityContext", at)
    pod_options = None if context is None else _windows_options(context, f"{at}securityContext.")
    containers: list[ContainerFacts] = []
    for kind in CONTAINER_KINDS:
        for index, entry in enumerate(get_objects(spec, kind, at)):
            where = f"{at}{kind}[{index}]."
            name = get_str(entry, "name", where)
            context = get_object(entry, "securityContext", where)
            options = (
                None if context is None else _windows_options(context, f"{where}securityContext.")
            )
            containers.append(ContainerFacts(name, kind, options, read_ports(entry, where)))
    runtime_class = get_str(spec, "runtimeClassName", at) or None
    return PodFacts(host_network, pod_options, tuple(containers), runtime_class)


def read_pod(pod: object) -> PodFacts:
    """The rule inputs of ``pod`` in any accepted form; raises ``InvalidPodError`` (or
    ``InvalidArgumentError`` for something that is no pod form at all)."""
    template, at = pod_template(pod)
    return pod_facts(pod_spec(template, at), f"{at}spec.")


class PodIdentity(tuple[str, str, str]):
    """(kind, namespace, name) for reports; empty strings where unknown."""

    __slots__ = ()

    def __str__(self) -> str:
        kind, namespace, name = self
        where = f"{namespace}/{name}" if namespace else name
        return f"{kind or 'Pod'}/{where or '<unnamed>'}"


def pod_identity(pod: object) -> PodIdentity:
    """Best effort, never raises: used to label output, not to decide anything."""

    def text(value: object) -> str:
        return value if type(value) is str else ""

    try:
        root, kind = _root(pod)
        meta = root.get("metadata")
        meta = _object(meta, "metadata") if meta is not None else {}
        return PodIdentity(
            (kind or text(root.get("kind")), text(meta.get("namespace")), text(meta.get("name")))
        )
    except Exception:  # a caller's object can raise anything here, and labels never fail
        return PodIdentity(("", "", ""))
