"""Where ``hostNetwork: true`` reaches the runtime, from the library's own decisions:
for each kubelet minor and gate state, whether the sandbox request carries network NODE
(:func:`host_network_reach`), and the words of the ``host-network-ignored`` finding.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.profile import FeatureGatesInput, KubeletVersionInput

__all__ = ["GATE_STATES", "HostNetworkReach", "host_network_reach"]

GATE_STATES: tuple[tuple[str, str | None], ...] = (
    ("default", None),
    ("WindowsHostNetwork=true", "WindowsHostNetwork=true"),
    ("WindowsHostNetwork=false", "WindowsHostNetwork=false"),
)
_PROBE = {"spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "i"}]}}


@dataclass(frozen=True)
class HostNetworkReach:
    """For each kubelet minor, the gate states under which the sandbox request for a
    plain ``hostNetwork: true`` pod carries ``network = NODE``; and whether the
    kubelet profile being checked does."""

    by_minor: tuple[tuple[int, frozenset[str], frozenset[str]], ...]  # minor, NODE, valid
    selected: str
    selected_carries_node: bool
    given: bool = True  # the user named the kubelet version (else: every release is told)

    message = (
        "hostNetwork: true is ignored: the pod gets its own network namespace; for the "
        "node's network make it HostProcess."
    )
    conditional = (
        "if this pod runs on a Windows node, hostNetwork: true is ignored there; pin it with "
        "spec.os.name."
    )

    @functools.cached_property
    def detail(self) -> str:
        """Why the pod does not get the node's network, and how to reach it all the same."""
        return (f"{self._why} To reach the pod on the node's address use a hostPort or a "
                "NodePort Service.")

    @functools.cached_property
    def _why(self) -> str:
        if self.given:
            sent = (
                f"{self.selected} sends network NODE in the sandbox request, but no released "
                "containerd acts on it"
                if self.selected_carries_node
                else f"{self.selected} does not send network NODE in the sandbox request"
            )
        else:
            sent = (
                f"The kubelet sends network NODE in the sandbox request {self.text} "
                "(--kubelet-version names yours), but no released containerd acts on it"
            )
        return f"{sent}: containerd takes host networking on Windows from host_process alone."

    def detail_with_ports(self, ports: Sequence[int]) -> str:
        """:attr:`detail` for a pod with container ports, which already have hostPorts:
        the API server sets hostPort to containerPort in a hostNetwork pod
        (``defaultHostNetworkPorts``, pkg/apis/core/v1/defaults.go), and the kubelet sends
        them as the sandbox's port mappings."""
        shown = ", ".join(map(str, ports[:5])) + (", ..." if len(ports) > 5 else "")
        plural = "s" if len(ports) != 1 else ""
        return (
            f"{self._why} Its container port{plural} {shown} "
            f"{'have hostPorts' if plural else 'has a hostPort'} (in a hostNetwork pod the "
            "API server sets hostPort to containerPort where none is given), which reach"
            f"{'' if plural else 'es'} the pod on the node's address where the node's CNI "
            "plugin maps ports (the portMappings capability; kubelet-winnet node checks it)."
        )

    @functools.cached_property
    def text(self) -> str:
        parts = []
        for first, last, node, valid in _runs(self.by_minor):
            span = f"1.{first}" if first == last else f"1.{first}-1.{last}"
            if not node:
                parts.append(f"never on {span}")
            elif node == valid:
                parts.append(f"always on {span}")
            elif "default" in node:
                off = sorted(valid - node)
                parts.append(f"on {span} unless {' or '.join(off)}")
            else:
                parts.append(f"on {span} only with {' or '.join(sorted(node))}")
        return "; ".join(parts)


def _runs(
    rows: Sequence[tuple[int, frozenset[str], frozenset[str]]],
) -> Iterator[tuple[int, int, frozenset[str], frozenset[str]]]:
    def key(row: tuple[int, frozenset[str], frozenset[str]]) -> object:
        return (row[1], row[2]) if row[1] else ()  # "never" whatever the gate accepts

    start = 0
    for index in range(1, len(rows) + 1):
        if index == len(rows) or key(rows[index]) != key(rows[start]):
            yield rows[start][0], rows[index - 1][0], rows[start][1], rows[start][2]
            start = index


def host_network_reach(
    kubelet_version: KubeletVersionInput, feature_gates: FeatureGatesInput, given: bool = True
) -> HostNetworkReach:
    """Evaluate every kubelet of ``TIMELINE`` under each gate state with the decision
    the public translation serializes (no protobuf: ``check`` starts without it).
    ``given``: the user named ``kubelet_version``; otherwise the finding names the
    releases, not the default version."""
    from kubelet_winnet._kubelet.pod import read_pod
    from kubelet_winnet._kubelet.profile import MIN_MINOR, kubelet_profile
    from kubelet_winnet._kubelet.rules import decide_sandbox
    from kubelet_winnet.errors import FeatureGateError, UnsupportedVersionError

    probe = read_pod(_PROBE)

    def carries_node(version: KubeletVersionInput, gates: FeatureGatesInput) -> bool:
        profile = kubelet_profile(version, gates)
        return decide_sandbox(probe, profile.sets_namespace_options).network == "NODE"

    rows = []
    minor = MIN_MINOR
    while True:
        version = f"1.{minor}"
        try:
            kubelet_profile(version)
        except UnsupportedVersionError:
            break
        node: set[str] = set()
        valid: set[str] = set()
        for label, gates in GATE_STATES:
            try:
                kubelet_profile(version, gates)
            except FeatureGateError:
                continue
            valid.add(label)
            if carries_node(version, gates):
                node.add(label)
        rows.append((minor, frozenset(node), frozenset(valid)))
        minor += 1
    profile = kubelet_profile(kubelet_version, feature_gates)
    selected = f"kubelet {profile.version}" + (f" with {feature_gates}" if feature_gates else "")
    return HostNetworkReach(
        tuple(rows), selected, carries_node(kubelet_version, feature_gates), given
    )

