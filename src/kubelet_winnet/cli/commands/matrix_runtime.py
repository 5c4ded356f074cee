"""``matrix --runtime``, the runtime axis: containerd 1.7 to 2.4 by process and Hyper-V
isolation, what a HostProcess pod and a pod with a hostPort get (:func:`runtime_rows`),
as markdown (rendered into docs/node-runtime.md) or JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelet_winnet.runtime import PodNetworkPlan

__all__ = [
    "RUNTIME_COLUMNS",
    "RuntimeRow",
    "render_runtime_json",
    "render_runtime_markdown",
    "runtime_rows",
]


@dataclass(frozen=True)
class RuntimeRow:
    """One containerd release range and what each pod class gets under it."""

    releases: str  # "2.3.0-2.3.2", "2.4"
    hcsshim: str
    cells: tuple[tuple[str, PodNetworkPlan], ...]  # (column, plan)


RUNTIME_COLUMNS = ("HostProcess, process", "HostProcess, Hyper-V", "hostPort pod, process",
                   "hostPort pod, Hyper-V")


def runtime_rows() -> list[RuntimeRow]:
    """containerd 1.7 to 2.4 (``runtime._releases``) by process and Hyper-V isolation, for
    a HostProcess pod and a pod with a hostPort, planned with a CNI network whose plugin
    applies port mappings (win-bridge with the capability): the runtime's part alone."""
    from cri_api.runtime.v1 import api_pb2
    from kubelet_winnet.runtime import CniNetwork, CniPlugin, NodeFacts, plan_pod_network
    from kubelet_winnet.runtime._releases import (
        CONTAINERD_LINES,
        HYPERV_HANDLERS,
        PROCESS_HANDLERS,
        shim_has_hyperv_host_process,
    )

    cni = CniNetwork("example", (CniPlugin("win-bridge", frozenset({"portMappings"})),))
    rows: list[RuntimeRow] = []
    for line in CONTAINERD_LINES:
        groups: list[list[Any]] = []
        for row in line.shims:
            has = shim_has_hyperv_host_process("containerd://{}.{}.{}".format(*row.since))
            if groups and groups[-1][0] == has:
                groups[-1][1].append(row)
            else:
                groups.append([has, [row]])
        for index, (_, shims) in enumerate(groups):
            first = shims[0].since
            last = groups[index + 1][1][0].since if index + 1 < len(groups) else None
            if len(groups) == 1:
                label = line.name
            elif last is None:
                label = "{}.{}.{}+".format(*first)
            else:
                label = "{}.{}.{}-{}.{}.{}".format(*first, last[0], last[1], last[2] - 1)
            facts = NodeFacts(runtime="containerd://{}.{}.{}".format(*first), cni=cni)
            cells = []
            for column in RUNTIME_COLUMNS:
                host_process = column.startswith("HostProcess")
                handler = next(iter(HYPERV_HANDLERS if column.endswith("Hyper-V")
                                    else PROCESS_HANDLERS))
                message = api_pb2.RunPodSandboxRequest(runtime_handler=handler)
                message.config.port_mappings.add(container_port=80, host_port=8080)
                if host_process:
                    message.config.windows.security_context.host_process = True
                cells.append((column, plan_pod_network(message, facts)))
            tags = list(dict.fromkeys(s.hcsshim for s in shims))
            hcsshim = tags[0] if len(tags) == 1 else f"{tags[0]} to {tags[-1]}"
            rows.append(RuntimeRow(label, hcsshim, tuple(cells)))
    return rows


def _runtime_cell(plan: PodNetworkPlan) -> str:
    port = next(p for p in plan.ports if p.host_port > 0)
    network = {"node": "host network", "pod": "pod network", "none": "**no network**"}
    outcome = {"host": "is the node's own port", "applied": "mapped by CNI",
               "dropped": "dropped"}.get(port.outcome, port.outcome)
    text = f"{network[plan.namespace]}; hostPort {outcome}"
    if plan.notes and plan.namespace == "node":
        text += (" (this shim predates hcsshim PR #2531 and runs the container on the host; "
                 "read from hcsshim's code, not run on Windows)")
    return text


def render_runtime_markdown() -> str:
    """The runtime axis as a markdown table (``matrix --runtime``, docs/node-runtime.md)."""
    lines = ["| containerd | hcsshim of its shim | " + " | ".join(RUNTIME_COLUMNS) + " |",
             "|---|---|" + "---|" * len(RUNTIME_COLUMNS)]
    for row in runtime_rows():
        cells = " | ".join(_runtime_cell(plan) for _, plan in row.cells)
        lines.append(f"| {row.releases} | {row.hcsshim} | {cells} |")
    return "\n".join(lines) + "\n"


def render_runtime_json() -> str:
    return json.dumps([
        {"containerd": row.releases, "hcsshim": row.hcsshim,
         "cells": {column: {"network": plan.namespace, "isolation": plan.isolation,
                            "hostPort": next(p.outcome for p in plan.ports if p.host_port),
                            "notes": list(plan.notes)}
                   for column, plan in row.cells}}
        for row in runtime_rows()], indent=2) + "\n"
