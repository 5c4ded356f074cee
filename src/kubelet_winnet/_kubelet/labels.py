"""The container's labels and annotations: ``newContainerLabels`` and
``newContainerAnnotations`` (pkg/kubelet/kuberuntime/labels.go), with the 1.31+ container
hash (``HashContainer``, pkg/kubelet/container/helpers.go) and the ``preStop`` and ports
annotations in Go's ``encoding/json`` form."""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from typing import Any

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.pod import (
    PodView,
    get_int,
    get_object,
    get_objects,
    get_str,
    get_str_map,
    get_strings,
    read_field,
    read_ports,
)
from kubelet_winnet._kubelet.request_facts import (
    CONTAINER_HASH_OF_NAME_AND_IMAGE,
    HASH_WITHOUT_RESOURCES_DROPPED,
)

__all__ = [
    "CONTAINER_NAME_LABEL",
    "POD_NAMESPACE_LABEL",
    "POD_NAME_LABEL",
    "POD_UID_LABEL",
    "container_hash",
    "fill_container_annotations",
    "fill_container_labels",
    "fill_pod_annotations",
    "fill_pod_labels",
]

# labels.go and pkg/kubelet/types/labels.go
POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
POD_UID_LABEL = "io.kubernetes.pod.uid"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"
HASH_ANNOTATION = "io.kubernetes.container.hash"
HASH_WITHOUT_RESOURCES_ANNOTATION = "io.kubernetes.container.hashWithoutResources"
PRE_STOP_ANNOTATION = "io.kubernetes.container.preStopHandler"
RESTART_COUNT_ANNOTATION = "io.kubernetes.container.restartCount"
TERMINATION_PATH_ANNOTATION = "io.kubernetes.container.terminationMessagePath"
TERMINATION_POLICY_ANNOTATION = "io.kubernetes.container.terminationMessagePolicy"
PORTS_ANNOTATION = "io.kubernetes.container.ports"
DELETION_GRACE_ANNOTATION = "io.kubernetes.pod.deletionGracePeriod"
TERMINATION_GRACE_ANNOTATION = "io.kubernetes.pod.terminationGracePeriod"


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
    value = read_field(obj, key, at)
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
    action = get_object(handler, "exec", at)
    if action is not None:
        command = get_strings(action, "command", f"{at}exec.")
        out["exec"] = {"command": command} if command else {}
    action = get_object(handler, "httpGet", at)
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
    action = get_object(handler, "tcpSocket", at)
    if action is not None:
        here = f"{at}tcpSocket."
        entry = {"port": _int_or_string(action, "port", here)}
        host = get_str(action, "host", here)
        if host:
            entry["host"] = host
        out["tcpSocket"] = entry
    action = get_object(handler, "sleep", at)
    if action is not None:
        out["sleep"] = {"seconds": get_int(action, "seconds", f"{at}sleep.") or 0}
    return _go_json(out)


def _ports_annotation(container: Mapping[str, Any], at: str, host_network: bool) -> str:
    ports = []
    for container_port, host_port, protocol, host_ip, name in read_ports(container, at):
        entry: dict[str, Any] = {}
        if host_network and host_port == 0:
            host_port = container_port
        protocol = protocol or "TCP"
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


def fill_pod_labels(labels: MutableMapping[str, str], view: PodView) -> None:
    """``newPodLabels``: the pod's labels, then its name, namespace and uid."""
    # Entries set one by one: update() walks the map in Python, which costs more.
    for name, item in get_str_map(view.metadata, "labels", view.metadata_at).items():
        labels[name] = item
    name, namespace, uid = view.identity()
    labels[POD_NAME_LABEL] = name
    labels[POD_NAMESPACE_LABEL] = namespace
    labels[POD_UID_LABEL] = uid


def fill_pod_annotations(annotations: MutableMapping[str, str], view: PodView) -> None:
    """``newPodAnnotations``: the pod's annotations."""
    for name, item in get_str_map(view.metadata, "annotations", view.metadata_at).items():
        annotations[name] = item


def fill_container_labels(
    labels: MutableMapping[str, str], view: PodView, container_name: str
) -> None:
    """``newContainerLabels``: the pod's name, namespace and uid, and the container's name."""
    name, namespace, uid = view.identity()
    labels[POD_NAME_LABEL] = name
    labels[POD_NAMESPACE_LABEL] = namespace
    labels[POD_UID_LABEL] = uid
    labels[CONTAINER_NAME_LABEL] = container_name


def fill_container_annotations(
    annotations: MutableMapping[str, str], view: PodView, container: Mapping[str, Any],
    at: str, container_name: str, image: str, attempt: int, minor: int, host_network: bool,
    in_place_resize: bool = False,
) -> None:
    """``newContainerAnnotations``, in the kubelet's order of setting them."""
    spec, spec_at = view.spec, view.spec_at
    # Earlier kubelets hash the JSON of the whole API-defaulted v1.Container (and, for
    # hashWithoutResources, of a copy without resources): not reproduced here.
    if CONTAINER_HASH_OF_NAME_AND_IMAGE.holds(minor):
        hashed = container_hash(container_name, image)
        annotations[HASH_ANNOTATION] = hashed
        # From kubernetes#124220 labels.go stores HashContainer under both keys while
        # InPlacePodVerticalScaling is on, until the label was dropped.
        if in_place_resize and not HASH_WITHOUT_RESOURCES_DROPPED.holds(minor):
            annotations[HASH_WITHOUT_RESOURCES_ANNOTATION] = hashed
    annotations[RESTART_COUNT_ANNOTATION] = str(attempt)
    annotations[TERMINATION_PATH_ANNOTATION] = get_str(
        container, "terminationMessagePath", at, "/dev/termination-log"
    ) or "/dev/termination-log"
    annotations[TERMINATION_POLICY_ANNOTATION] = get_str(
        container, "terminationMessagePolicy", at, "File"
    ) or "File"
    deletion = get_int(view.metadata, "deletionGracePeriodSeconds", view.metadata_at)
    if deletion is not None:
        annotations[DELETION_GRACE_ANNOTATION] = golang.format_int64(deletion)
    grace = get_int(spec, "terminationGracePeriodSeconds", spec_at)
    annotations[TERMINATION_GRACE_ANNOTATION] = golang.format_int64(30 if grace is None else grace)
    lifecycle = get_object(container, "lifecycle", at)
    if lifecycle is not None:
        pre_stop = get_object(lifecycle, "preStop", f"{at}lifecycle.")
        if pre_stop is not None:
            annotations[PRE_STOP_ANNOTATION] = _pre_stop_annotation(
                pre_stop, f"{at}lifecycle.preStop."
            )
    if get_objects(container, "ports", at):
        annotations[PORTS_ANNOTATION] = _ports_annotation(container, at, host_network)
