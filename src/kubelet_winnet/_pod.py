"""Read the facts the kubelet rules need from any accepted pod form.

Accepted: a manifest mapping in the API's camelCase (Pod, or a workload whose pod
template is used), a ``kubernetes.client`` object (``V1Pod``, workloads, ``V1PodTemplate``;
client 36 plain classes or 37 pydantic models, read by attribute, never imported), or
:class:`kubelet_winnet._model.Pod`. Only the fields the rules read are checked; everything
else is ignored. Wrong types raise :class:`InvalidPodError` naming the JSON path; nothing
is coerced (the string ``"true"`` is not ``true``). ``null`` means unset, as in the API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubelet_winnet._fastfacts import make_container_facts, make_pod_facts, make_windows_options
from kubelet_winnet._rules import (
    ContainerFacts,
    ContainerKind,
    PodFacts,
    WindowsOptions,
)
from kubelet_winnet.errors import InvalidPodError

__all__ = [
    "CONTAINER_KINDS",
    "WORKLOAD_TEMPLATE_PATHS",
    "PodIdentity",
    "is_utf8",
    "pod_identity",
    "read_pod",
    "spec_path",
]

CONTAINER_KINDS: tuple[ContainerKind, ...] = ("initContainers", "containers", "ephemeralContainers")

# Where each workload keeps its pod template (camelCase keys from the manifest root).
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
_EMPTY_OPTIONS = WindowsOptions()
_EMPTY_POD = PodFacts()

_JSON_TYPES = {
    str: "string", bool: "boolean", int: "number", float: "number", dict: "object",
    list: "array", tuple: "array", type(None): "null",
}


def _describe(value: object) -> str:
    kind = _JSON_TYPES.get(type(value))
    if kind is None:
        kind = "object" if isinstance(value, Mapping) else type(value).__name__
    shown = json.dumps(value) if type(value) is str else repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}" if kind not in ("object", "array") else kind


def _bad(field: str, expected: str, value: object) -> InvalidPodError:
    return InvalidPodError(field, f"expected {expected}, got {_describe(value)}")


def _is_map(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


# --- manifests (camelCase mappings) ------------------------------------------------


def _template_of(manifest: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    kind = manifest.get("kind")
    if kind is None or kind == "Pod":
        return manifest, ""
    if type(kind) is not str:
        raise _bad("kind", "a string", kind)
    path = WORKLOAD_TEMPLATE_PATHS.get(kind)
    if path is None:
        raise InvalidPodError(
            "kind", f"{kind!r} is neither a Pod nor a workload with a pod template"
        )
    node: object = manifest
    walked = ""
    for key in path:
        walked = f"{walked}.{key}" if walked else key
        node = node.get(key) if _is_map(node) else None  # type: ignore[attr-defined]
        if node is None:
            raise InvalidPodError(walked, f"required: {kind} has no pod template here")
        if not _is_map(node):
            raise _bad(walked, "an object", node)
    return node, walked + "."  # type: ignore[return-value]


def _under(prefix: str, exc: InvalidPodError) -> InvalidPodError:
    """``exc`` with its field re-rooted under ``prefix``.

    The readers build JSON paths only once something is wrong: inner levels raise with
    a path relative to themselves, and each outer level prefixes its own part.
    """
    field = exc.field
    if field and prefix:
        field = f"{prefix}{'' if field.startswith('[') else '.'}{field}"
    return InvalidPodError(field or prefix, exc.reason)


def _options_from_map(value: object, at: str) -> WindowsOptions:
    if type(value) is not dict and not isinstance(value, Mapping):
        raise _bad(at, "an object", value)
    if not value:
        return _EMPTY_OPTIONS
    get = value.get
    user = get("runAsUserName")
    gmsa_name = get("gmsaCredentialSpecName")
    gmsa = get("gmsaCredentialSpec")
    host_process = get("hostProcess")
    if user is not None and type(user) is not str:
        raise _bad(f"{at}.runAsUserName", "a string", user)
    if gmsa_name is not None and type(gmsa_name) is not str:
        raise _bad(f"{at}.gmsaCredentialSpecName", "a string", gmsa_name)
    if gmsa is not None and type(gmsa) is not str:
        raise _bad(f"{at}.gmsaCredentialSpec", "a string", gmsa)
    if host_process is not None and host_process is not True and host_process is not False:
        raise _bad(f"{at}.hostProcess", "a boolean", host_process)
    # These two go into runtime.v1 strings, which must be valid UTF-8.
    if user is not None and not user.isascii() and not is_utf8(user):
        raise InvalidPodError(f"{at}.runAsUserName", _NOT_UTF8)
    if gmsa is not None and not gmsa.isascii() and not is_utf8(gmsa):
        raise InvalidPodError(f"{at}.gmsaCredentialSpec", _NOT_UTF8)
    # Validated values only: the same few option sets recur on every pod of a workload,
    # and looking one up is cheaper than building it (~0.1 us against ~0.3 us).
    key = (user, gmsa_name, gmsa, host_process)
    options = _OPTIONS.get(key)
    if options is None:
        options = make_windows_options(user, gmsa_name, gmsa, host_process)
        if len(_OPTIONS) >= 256:  # bounded: the key holds user-supplied strings
            _OPTIONS.clear()
        _OPTIONS[key] = options
    return options


_OPTIONS: dict[tuple[str | None, str | None, str | None, bool | None], WindowsOptions] = {}


_NOT_UTF8 = "not valid Unicode (contains a lone surrogate)"


def is_utf8(text: str) -> bool:
    """``text`` can be UTF-8 encoded (no lone surrogates, as ``json.loads`` can produce)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True




def _windows_options_in(security_context: object, at: str) -> WindowsOptions | None:
    if security_context is None:
        return None
    if type(security_context) is not dict and not isinstance(security_context, Mapping):
        raise _bad(at, "an object", security_context)
    options = security_context.get("windowsOptions")
    if options is None:
        return None
    try:
        return _options_from_map(options, "windowsOptions")
    except InvalidPodError as exc:
        raise _under(at, exc) from None


def _facts_from_spec(spec: object, at: str) -> PodFacts:
    if not _is_map(spec):
        raise _bad(at.rstrip("."), "an object", spec)
    get = spec.get  # type: ignore[attr-defined]
    host_network = get("hostNetwork")
    if host_network is None:
        host_network = False
    elif host_network is not True and host_network is not False:
        raise _bad(f"{at}hostNetwork", "a boolean", host_network)
    context = get("securityContext")
    pod_options = None
    if context is not None:
        pod_options = _windows_options_in(context, f"{at}securityContext")
    containers: list[ContainerFacts] = []
    for kind in CONTAINER_KINDS:
        entries = get(kind)
        if entries is None:
            continue
        if type(entries) is not list and type(entries) is not tuple:
            raise _bad(f"{at}{kind}", "an array", entries)
        for index, entry in enumerate(entries):
            if type(entry) is not dict and not isinstance(entry, Mapping):
                raise _bad(f"{at}{kind}[{index}]", "an object", entry)
            name = entry.get("name")
            if name is None:
                name = ""
            elif type(name) is not str:
                raise _bad(f"{at}{kind}[{index}].name", "a string", name)
            context = entry.get("securityContext")
            options = None
            if context is not None:
                try:
                    options = _windows_options_in(context, "securityContext")
                except InvalidPodError as exc:
                    raise _under(f"{at}{kind}[{index}]", exc) from None
            containers.append(make_container_facts(name, kind, options))
    if not containers and pod_options is None and not host_network:
        return _EMPTY_POD
    return make_pod_facts(host_network, pod_options, tuple(containers))


def _from_manifest(manifest: Mapping[str, Any]) -> PodFacts:
    template, at = _template_of(manifest)
    spec = template.get("spec")
    if spec is None:
        raise InvalidPodError(f"{at}spec", "required: the pod has no spec")
    return _facts_from_spec(spec, f"{at}spec.")


# --- objects read by attribute (kubernetes client, kubelet_winnet._model) -------------
# Their attributes are snake_case; error paths stay in the API's camelCase.


def _attr(obj: object, name: str) -> Any:
    return getattr(obj, name, None)


def _is_map_object(value: object) -> bool:
    """``isinstance(value, Mapping)``, remembered per type: an ABC check costs ~4 dict
    lookups, and the attribute path asks it of every model object it meets."""
    kind = type(value)
    if kind is dict:
        return True
    known = _MAPPING_TYPES.get(kind)
    if known is None:
        known = isinstance(value, Mapping)
        if len(_MAPPING_TYPES) >= 256:
            _MAPPING_TYPES.clear()
        _MAPPING_TYPES[kind] = known
    return known


_MAPPING_TYPES: dict[type, bool] = {}


def _options_from_attrs(value: object, at: str) -> WindowsOptions:
    if _is_map_object(value):
        return _options_from_map(value, at)
    return _options_from_map(
        {
            "runAsUserName": getattr(value, "run_as_user_name", None),
            "gmsaCredentialSpecName": getattr(value, "gmsa_credential_spec_name", None),
            "gmsaCredentialSpec": getattr(value, "gmsa_credential_spec", None),
            "hostProcess": getattr(value, "host_process", None),
        },
        at,
    )


def _windows_options_attr(security_context: object, at: str) -> WindowsOptions | None:
    if security_context is None:
        return None
    if _is_map_object(security_context):
        return _windows_options_in(security_context, at)
    options = getattr(security_context, "windows_options", None)
    if options is None:
        return None
    try:
        return _options_from_attrs(options, "windowsOptions")
    except InvalidPodError as exc:
        raise _under(at, exc) from None


_ATTR_KINDS = (
    ("initContainers", "init_containers"),
    ("containers", "containers"),
    ("ephemeralContainers", "ephemeral_containers"),
)


def _facts_from_spec_attrs(spec: object, at: str) -> PodFacts:
    if _is_map_object(spec):
        return _facts_from_spec(spec, at)
    host_network = getattr(spec, "host_network", None)
    if host_network is None:
        host_network = False
    elif host_network is not True and host_network is not False:
        raise _bad(f"{at}hostNetwork", "a boolean", host_network)
    context = getattr(spec, "security_context", None)
    pod_options = None
    if context is not None:
        pod_options = _windows_options_attr(context, f"{at}securityContext")
    containers: list[ContainerFacts] = []
    for kind, attribute in _ATTR_KINDS:
        entries = getattr(spec, attribute, None)
        if entries is None:
            continue
        if type(entries) is not list and type(entries) is not tuple:
            raise _bad(f"{at}{kind}", "an array", entries)
        for index, entry in enumerate(entries):
            if entry is None or isinstance(entry, (str, int, float, list, tuple)):
                raise _bad(f"{at}{kind}[{index}]", "an object", entry)
            if _is_map_object(entry):
                name = entry.get("name")
                context = entry.get("securityContext")
            else:
                name = getattr(entry, "name", None)
                context = getattr(entry, "security_context", None)
            if name is None:
                name = ""
            elif type(name) is not str:
                raise _bad(f"{at}{kind}[{index}].name", "a string", name)
            options = None
            if context is not None:
                try:
                    options = _windows_options_attr(context, "securityContext")
                except InvalidPodError as exc:
                    raise _under(f"{at}{kind}[{index}]", exc) from None
            containers.append(make_container_facts(name, kind, options))  # type: ignore[arg-type]
    return make_pod_facts(host_network, pod_options, tuple(containers))


def _probe(obj: object, name: str) -> Any:
    """``getattr(obj, name, None)``, without the lookup when ``obj`` is a pydantic model
    (client 37, our ``Pod``) that cannot have ``name``: there a miss goes through
    pydantic's ``__getattr__`` and a raised ``AttributeError``, ~1.5 us each."""
    absent = _ABSENT_ATTRIBUTES.get(type(obj))
    if absent is None:
        absent = _absent_attributes(type(obj))
    if name in absent:
        return None
    return getattr(obj, name, None)


_PROBED = ("template", "job_template")
_ABSENT_ATTRIBUTES: dict[type, frozenset[str]] = {}


def _absent_attributes(kind: type) -> frozenset[str]:
    absent: frozenset[str] = frozenset()
    model_fields = getattr(kind, "model_fields", None)
    config = getattr(kind, "model_config", None)
    if (
        isinstance(model_fields, dict)
        and isinstance(config, dict)
        and config.get("extra") != "allow"  # no per-instance extra attributes
        and type(getattr(kind, "__pydantic_extra__", None)) is not dict
    ):
        private = getattr(kind, "__private_attributes__", None) or {}
        absent = frozenset(
            name
            for name in _PROBED
            if name not in model_fields and name not in private and not hasattr(kind, name)
        )
    if len(_ABSENT_ATTRIBUTES) >= 256:
        _ABSENT_ATTRIBUTES.clear()
    _ABSENT_ATTRIBUTES[kind] = absent
    return absent


def _object_template(obj: object) -> tuple[object, str]:
    """The pod template of a client object (the object itself for a pod) and its path."""
    if _probe(obj, "template") is not None:  # V1PodTemplate
        return _attr(obj, "template"), "template."
    spec = _attr(obj, "spec")
    job = _probe(spec, "job_template")
    if job is not None:  # V1CronJob
        template = _attr(_attr(job, "spec"), "template")
        at = "spec.jobTemplate.spec.template."
    elif _probe(spec, "template") is not None:  # Deployment, DaemonSet, Job, ...
        template, at = _attr(spec, "template"), "spec.template."
    else:
        return obj, ""
    if template is None:
        raise InvalidPodError(at.rstrip("."), "required: no pod template here")
    return template, at


def spec_path(pod: object) -> str:
    """The JSON path prefix of the pod spec in ``pod`` (``spec.``,
    ``spec.template.spec.``, ...), for messages; assumes ``read_pod(pod)`` succeeded."""
    if isinstance(pod, Mapping):
        return _template_of(pod)[1] + "spec."
    return _object_template(pod)[1] + "spec."


def _from_object(obj: object) -> PodFacts:
    template, at = _object_template(obj)
    spec = _attr(template, "spec")
    if spec is None:
        raise InvalidPodError(f"{at}spec", "required: the pod has no spec")
    return _facts_from_spec_attrs(spec, f"{at}spec.")


def read_pod(pod: object) -> PodFacts:
    """The rule inputs of ``pod`` in any accepted form; raises only ``InvalidPodError``."""
    if type(pod) is dict:
        kind = pod.get("kind")
        if kind is None or kind == "Pod":  # the common case, without _template_of
            spec = pod.get("spec")
            if spec is not None:
                return _facts_from_spec(spec, "spec.")
        return _from_manifest(pod)
    if isinstance(pod, Mapping):
        return _from_manifest(pod)
    if hasattr(pod, "spec") or hasattr(pod, "template"):
        try:
            return _from_object(pod)
        except InvalidPodError:
            raise
        except Exception as exc:  # a property of a foreign object raised
            raise InvalidPodError("", f"could not read the pod object: {exc!r}") from exc
    raise InvalidPodError(
        "",
        "expected a Pod or workload manifest mapping, a kubernetes.client V1Pod or "
        f"kubelet_winnet.Pod, got {type(pod).__name__}",
    )


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
        return value if isinstance(value, str) else ""

    if isinstance(pod, Mapping):
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        return PodIdentity(
            (text(pod.get("kind")), text(meta.get("namespace")), text(meta.get("name")))
        )
    meta = _attr(pod, "metadata")
    kind = text(_attr(pod, "kind")) or type(pod).__name__.removeprefix("V1")
    return PodIdentity((kind, text(_attr(meta, "namespace")), text(_attr(meta, "name"))))
