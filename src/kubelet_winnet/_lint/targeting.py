"""Which objects hold a pod, and which pods are meant for Windows nodes.

A pod is Windows-targeted when ``spec.os.name`` is ``windows``, or its ``nodeSelector``,
or every term of its required node affinity, pins ``kubernetes.io/os`` (or the legacy
``beta.kubernetes.io/os``) to ``windows``; Linux-targeted likewise with ``linux``. A pod
that no OS field or label pins but that its ``nodeSelector`` (or every required term)
keeps on control-plane nodes is Linux-targeted too: the control plane runs on Linux only
(kubernetes.io/docs/concepts/windows/intro/, "you can only run the control plane on
Linux"), so no Windows node carries a control-plane role. Anything else is untargeted:
the scheduler may put it on either OS.

Shared by ``translate``, ``explain`` and ``check``; pure functions of the manifest.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubelet_winnet._describe import json_kind
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet.errors import InvalidPodError

__all__ = ["CONTROL_PLANE_LABELS", "OS_LABELS", "PodObject", "Target", "pod_object",
           "target_of"]

# The well-known node labels (k8s.io/api/core/v1 well_known_labels.go: LabelOSStable and
# the deprecated beta label).
OS_LABELS = ("kubernetes.io/os", "beta.kubernetes.io/os")
# The role labels of control-plane nodes: kubeadm's LabelNodeRoleControlPlane
# (cmd/kubeadm/app/constants/constants.go) and the "master" label kubeadm set before 1.24,
# which charts still select. An explicit OS pin wins over them.
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane",
                        "node-role.kubernetes.io/master")


class Target(enum.Enum):
    WINDOWS = "windows"
    LINUX = "linux"
    UNTARGETED = "untargeted"


@dataclass(slots=True)
class PodObject:
    """A manifest holding a pod: the object, its pod spec and where that spec is."""

    manifest: Mapping[str, Any]
    kind: str  # "Pod" also for a kind-less object with a spec
    spec: Mapping[str, Any]
    spec_path: tuple[str, ...]  # ("spec",) or ("spec", "template", "spec"), ...
    template_metadata: Mapping[str, Any] | None  # the pod template's metadata, if any
    _identity: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        metadata = self.manifest.get("metadata")
        if isinstance(metadata, dict):
            name = metadata.get("name")
            namespace = metadata.get("namespace")
            text = name if isinstance(name, str) else "<unnamed>"
            if isinstance(namespace, str) and namespace:
                text = f"{namespace}/{text}"
            return text
        return "<unnamed>"

    @property
    def identity(self) -> str:
        """``Kind/namespace/name`` (made once: every report of the pod names it)."""
        if self._identity is None:
            self._identity = f"{self.kind}/{self.name}"
        return self._identity


def pod_object(manifest: Mapping[str, Any]) -> PodObject | None:
    """The pod in ``manifest`` (a Pod or a workload with a pod template), ``None`` for
    other kinds. A ``kind`` that is not a string, or a template that is not an object,
    raises :class:`InvalidPodError` naming the field."""
    kind = manifest.get("kind")
    if kind is None:
        if "spec" not in manifest:
            return None
        kind = "Pod"
    if type(kind) is not str:
        raise InvalidPodError("kind", f"expected a string, got {json_kind(kind)}")
    if kind == "Pod":
        path: tuple[str, ...] = ()
    else:
        template = WORKLOAD_TEMPLATE_PATHS.get(kind)
        if template is None:
            return None
        path = tuple(template)
    node: object = manifest
    for depth, key in enumerate(path):
        node = node.get(key) if type(node) is dict else None
        if type(node) is not dict:
            where = ".".join(path[: depth + 1])
            if node is None:
                raise InvalidPodError(where, f"required: {kind} has no pod template here")
            raise InvalidPodError(where, f"expected an object, got {json_kind(node)}")
    assert type(node) is dict
    spec = node.get("spec")
    spec_path = (*path, "spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise InvalidPodError(".".join(spec_path), f"expected an object, got {json_kind(spec)}")
    metadata = node.get("metadata") if path else None
    return PodObject(
        manifest, kind, spec, spec_path, metadata if isinstance(metadata, dict) else None
    )


def target_of(pod: PodObject) -> tuple[Target, str]:
    """The OS the pod is meant for and the field that says so (empty when untargeted)."""
    spec = pod.spec
    at = ".".join(pod.spec_path)
    os_field = spec.get("os")
    if os_field is not None:
        name = _get(os_field, "name", f"{at}.os")
        if name is not None:
            _string(name, f"{at}.os.name")
            target = _OS_TARGETS.get(name)
            if target is not None:
                return target, f"{at}.os.name"
    selector = spec.get("nodeSelector")
    if selector is not None:
        if type(selector) is not dict:
            raise InvalidPodError(f"{at}.nodeSelector", f"expected an object, got "
                                  f"{json_kind(selector)}")
        for label in OS_LABELS:
            value = selector.get(label)
            if value is None:
                continue
            if type(value) is not str:
                _string(value, f"{at}.nodeSelector.{label}")
            target = _OS_TARGETS.get(value)
            if target is not None:
                return target, f"{at}.nodeSelector.{label}"
    found = _affinity_target(spec, at)
    if found is not None:
        return found
    for label in CONTROL_PLANE_LABELS:
        if selector is not None and label in selector:
            _string(selector[label], f"{at}.nodeSelector.{label}")
            return Target.LINUX, f"{at}.nodeSelector.{label}"
    return Target.UNTARGETED, ""


_OS_TARGETS = {"windows": Target.WINDOWS, "linux": Target.LINUX}


def _affinity_target(spec: Mapping[str, Any], at: str) -> tuple[Target, str] | None:
    # Required terms are ORed (a node matching any term is eligible): the pod is pinned
    # only when every term pins the same OS. Expressions in one term are ANDed.
    path = f"{at}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = _get(_get(spec.get("affinity"), "nodeAffinity", f"{at}.affinity"),
                    "requiredDuringSchedulingIgnoredDuringExecution",
                    f"{at}.affinity.nodeAffinity")
    terms = _get(required, "nodeSelectorTerms", path)
    if terms is None:
        return None
    if not isinstance(terms, list):
        raise InvalidPodError(f"{path}.nodeSelectorTerms",
                              f"expected an array, got {json_kind(terms)}")
    pinned: set[Target] = set()
    for index, term in enumerate(terms):
        where = f"{path}.nodeSelectorTerms[{index}]"
        expressions = _get(term, "matchExpressions", where)
        if expressions is None:
            return None
        if not isinstance(expressions, list):
            raise InvalidPodError(f"{where}.matchExpressions",
                                  f"expected an array, got {json_kind(expressions)}")
        term_target = None
        control_plane = False
        for number, expression in enumerate(expressions):
            found = _expression_target(expression, f"{where}.matchExpressions[{number}]")
            if found is not None:
                term_target = found
            control_plane = control_plane or _keeps_to_control_plane(expression)
        if term_target is None and control_plane:
            term_target = Target.LINUX
        if term_target is None:
            return None
        pinned.add(term_target)
    if len(pinned) == 1:
        return pinned.pop(), f"{path}.nodeSelectorTerms"
    return None


def _expression_target(expression: object, where: str) -> Target | None:
    key = _get(expression, "key", where)
    if key not in OS_LABELS:
        return None
    operator = _get(expression, "operator", where)
    values = _get(expression, "values", where)
    if values is None:
        return None
    if not isinstance(values, list):
        raise InvalidPodError(f"{where}.values", f"expected an array, got {json_kind(values)}")
    if not all(type(value) is str for value in values):
        raise InvalidPodError(f"{where}.values", "expected an array of strings")
    chosen = set(values)
    if operator == "In" and chosen and chosen <= {"windows"}:
        return Target.WINDOWS
    if operator == "In" and chosen and chosen <= {"linux"}:
        return Target.LINUX
    if operator == "NotIn" and "windows" in chosen:
        return Target.LINUX
    if operator == "NotIn" and "linux" in chosen:
        return Target.WINDOWS
    return None


def _keeps_to_control_plane(expression: object) -> bool:
    """Whether an expression admits control-plane nodes only: a role label that must
    exist, or hold one of some values."""
    return (type(expression) is dict and expression.get("key") in CONTROL_PLANE_LABELS
            and expression.get("operator") in ("Exists", "In"))


def _get(node: object, key: str, at: str) -> Any:
    if node is None:
        return None
    if type(node) is not dict:
        raise InvalidPodError(at, f"expected an object, got {json_kind(node)}")
    return node.get(key)


def _string(value: object, at: str) -> None:
    if type(value) is not str:
        raise InvalidPodError(at, f"expected a string, got {json_kind(value)}")
