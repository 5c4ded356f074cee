"""The decision table as data: pod classes × kubelet minor × ``WindowsHostNetwork`` state.

Every cell is computed by the public translation (:func:`kubelet_winnet.windows_sandbox_config`
on a representative manifest) and the judgement on any containerd node, so the table is
the library's answer, not a copy of it: what the kubelet sends in
``WindowsPodSandboxConfig.security_context``, or why it sends nothing (it refuses the pod,
or it refuses to start with that ``--feature-gates`` value). ``kubelet-winnet matrix``
renders these rows (``cli/commands/matrix.py``); ``kubelet_winnet.testing.decision_table`` hands
them to a parametrized test.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kubelet_winnet._judgement import NodeKnowledge, judge

__all__ = [
    "GATE_STATES",
    "POD_CLASSES",
    "Cell",
    "Outcome",
    "PodClass",
    "Row",
    "evaluate",
    "kubelet_minors",
    "matrix_rows",
]

# (label, --feature-gates value). "default" leaves the gate alone.
GATE_STATES: tuple[tuple[str, str | None], ...] = (
    ("default", None),
    ("on", "WindowsHostNetwork=true"),
    ("off", "WindowsHostNetwork=false"),
)


@dataclass(frozen=True)
class PodClass:
    id: str
    label: str
    manifest: Mapping[str, Any]


def _pod(host_network: bool, pod_options: dict[str, Any] | None,
         containers: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    spec: dict[str, Any] = {"hostNetwork": host_network, "containers": []}
    if pod_options is not None:
        spec["securityContext"] = {"windowsOptions": pod_options}
    for index, options in enumerate(containers):
        container: dict[str, Any] = {"name": f"c{index}", "image": "example"}
        if options is not None:
            container["securityContext"] = {"windowsOptions": options}
        spec["containers"].append(container)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "example"}, "spec": spec}


_HP = {"hostProcess": True}
_NOT_HP = {"hostProcess": False}
# The container layouts that lead to different kubelet answers (two containers each).
_LAYOUTS: tuple[tuple[str, str, dict[str, Any] | None, tuple[dict[str, Any] | None, ...]], ...] = (
    ("plain", "no HostProcess", None, (None, None)),
    ("hostprocess-pod", "HostProcess set on the pod", _HP, (None, None)),
    ("hostprocess-containers", "HostProcess set on every container", None, (_HP, _HP)),
    ("hostprocess-mixed", "one of two containers HostProcess", None, (_HP, None)),
    ("hostprocess-pod-false", "pod hostProcess: false, containers true", _NOT_HP, (_HP, _HP)),
)

POD_CLASSES: tuple[PodClass, ...] = tuple(
    PodClass(
        f"{layout}{'-host-network' if host_network else ''}",
        f"{label}, hostNetwork: {str(host_network).lower()}",
        _pod(host_network, pod_options, containers),
    )
    for host_network in (False, True)
    for layout, label, pod_options, containers in _LAYOUTS
)

Outcome = Literal["sent", "refused", "flag-error"]


@dataclass(frozen=True)
class Cell:
    """What one kubelet does with one pod.

    ``outcome``: ``sent`` (``network``: ``"POD"``/``"NODE"``, or ``None`` when
    ``namespace_options`` is unset; ``host_process``; ``containerd_host_network``: whether
    containerd then gives the pod the node's network), ``refused`` (the kubelet's
    ``error`` text and the ``step`` of ``generatePodSandboxWindowsConfig``), or
    ``flag-error`` (the kubelet does not start with that ``--feature-gates``).
    """

    kubelet: str
    gates: str
    outcome: Outcome
    network: str | None = None
    host_process: bool = False
    error: str | None = None
    step: str | None = None
    config: Mapping[str, Any] | None = None  # proto3 JSON of WindowsPodSandboxConfig
    containerd_host_network: bool = False
    containerd_condition: str = ""  # what decides the network where the handler does

    @property
    def short(self) -> str:
        """What the kubelet sends, then what the pod gets on containerd: the two differ
        (a NODE request is a pod network there unless the pod is HostProcess)."""
        if self.outcome == "flag-error":
            return "kubelet does not start"
        if self.outcome == "refused":
            return f"refused (step {self.step})"
        text = f"sends {self.network}" if self.network else "sends no namespace_options"
        text += ", host_process" if self.host_process else ""
        return text + f"; containerd: {_CONTAINERD[self.containerd_host_network]}"

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"kubelet": self.kubelet, "gates": self.gates,
                                  "outcome": self.outcome}
        if self.outcome == "sent":
            record["network"] = self.network
            record["hostProcess"] = self.host_process
            record["containerdNetwork"] = "host" if self.containerd_host_network else "pod"
            if self.containerd_condition:  # the markdown's Hyper-V note, per cell
                record["containerdNetworkCondition"] = self.containerd_condition
            record["windowsPodSandboxConfig"] = self.config
        else:
            record["error"] = self.error
            if self.step is not None:
                record["step"] = self.step
        return record


@dataclass(frozen=True)
class Row:
    id: str
    label: str
    cells: tuple[Cell, ...]  # kubelet minor ascending, then GATE_STATES order


def kubelet_minors() -> tuple[int, ...]:
    """Every kubelet minor the library models, asked of the library itself."""
    import kubelet_winnet as api

    found = []
    for minor in range(1, 100):
        try:
            api.kubelet_profile(f"1.{minor}")
        except api.UnsupportedVersionError:
            continue
        found.append(minor)
    return tuple(found)


def evaluate(manifest: Mapping[str, Any], kubelet: str, gates_label: str,
             gates: str | None) -> Cell:
    """One cell: raises ``InvalidPodError`` when the manifest is malformed."""
    import kubelet_winnet as api
    from kubelet_winnet._kubelet.messages import message_json

    try:
        profile = api.kubelet_profile(kubelet, gates)
    except api.FeatureGateError as exc:
        return Cell(kubelet, gates_label, "flag-error", error=str(exc))
    try:
        config = api.windows_sandbox_config(manifest, kubelet_version=kubelet,
                                            feature_gates=gates)
    except api.SandboxConfigError as exc:
        return Cell(kubelet, gates_label, "refused", error=str(exc), step=exc.rule)
    context = config.security_context
    network = None
    if context.HasField("namespace_options"):
        network = "NODE" if context.namespace_options.network == 2 else "POD"  # NamespaceMode
    verdict = judge(manifest, profile, _ANY_NODE)
    return Cell(kubelet, gates_label, "sent", network, context.host_process,
                config=message_json(config),
                containerd_host_network=verdict.network.value in ("node", "unknown"),
                containerd_condition=verdict.network.condition)


# Any containerd node: its release and the handler a pod gets are not known.
_ANY_NODE = NodeKnowledge(runtime="containerd", assume_default_handler=False)


_CONTAINERD = {True: "host network", False: "pod network"}


def matrix_rows(pods: Iterable[tuple[str, str, Mapping[str, Any]]] | None = None) -> Iterator[Row]:
    """Rows for ``pods`` (id, label, manifest), or for :data:`POD_CLASSES`."""
    classes = pods if pods is not None else [(c.id, c.label, c.manifest) for c in POD_CLASSES]
    minors = kubelet_minors()
    for pod_id, label, manifest in classes:
        cells = tuple(
            evaluate(manifest, f"1.{minor}", gates_label, gates)
            for minor in minors
            for gates_label, gates in GATE_STATES
        )
        yield Row(pod_id, label, cells)
