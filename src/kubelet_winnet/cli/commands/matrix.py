"""The version matrix: pod classes × kubelet minor × ``WindowsHostNetwork`` state.

Every cell is computed by the public translation (:func:`kubelet_winnet.windows_sandbox_config`
on a representative manifest), so the matrix is the library's answer, not a copy of it:
what the kubelet sends in ``WindowsPodSandboxConfig.security_context``, or why it sends
nothing (it refuses the pod, or it refuses to start with that ``--feature-gates`` value).

``kubelet-winnet matrix`` renders it as markdown (runs of versions with the same answer
merged into one column) or JSON (one record per cell); ``--pod FILE`` puts the pods of a
file in place of the representative classes.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TextIO

from kubelet_winnet._judgement import NodeKnowledge, judge
from kubelet_winnet._printable import printable
from kubelet_winnet.cli.session import Command

if TYPE_CHECKING:
    from kubelet_winnet._lint.targeting import PodObject
    from kubelet_winnet.cli.session import Session
    from kubelet_winnet.sources.manifests import Document

__all__ = [
    "GATE_STATES",
    "HYPERV_NOTE",
    "POD_CLASSES",
    "Cell",
    "PodClass",
    "Row",
    "configure_matrix",
    "evaluate",
    "kubelet_minors",
    "matrix_rows",
    "render_json",
    "render_markdown",
    "run_matrix",
    "write_json",
    "write_markdown",
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


def _row_dict(row: Row) -> dict[str, Any]:
    return {"pod": row.id, "label": row.label, "cells": [c.to_dict() for c in row.cells]}


def write_json(rows: Iterable[Row], out: TextIO) -> int:
    """:func:`render_json`'s text, written a row at a time (nothing for no row); the
    number of rows."""
    count = 0
    for row in rows:
        if count == 0:
            head = json.dumps(_json_head(), indent=2)[:-2]
            out.write(head + ',\n  "rows": [\n')
        else:
            out.write(",\n")
        out.write(textwrap.indent(json.dumps(_row_dict(row), indent=2), "    "))
        count += 1
    if count:
        out.write("\n  ]\n}\n")
    return count


def _json_head() -> dict[str, Any]:
    """The gate states, and where each kubelet minor stands (released or a release
    candidate, with the date) as of the day the timeline records."""
    from kubelet_winnet._kubelet.timeline import STATUS_AS_OF, TIMELINE

    return {
        "gateStates": dict(GATE_STATES),
        "kubeletReleasesAsOf": STATUS_AS_OF,
        "kubeletReleases": {
            f"1.{row.minor}": {"status": row.status, "date": row.date} for row in TIMELINE
        },
    }


def _releases_line() -> str:
    """One sentence of the legend: which minors are out and which is a release
    candidate, from the timeline."""
    from kubelet_winnet._kubelet.timeline import STATUS_AS_OF, TIMELINE

    out = [row.minor for row in TIMELINE if row.status == "released"]
    text = f"As of {STATUS_AS_OF}, kubelet 1.{out[0]}–1.{out[-1]} are released"
    for row in TIMELINE:
        if row.status == "rc":
            text += f"; 1.{row.minor} is {row.status_text}"
    return text + "."


def _span_label(first: str, last: str) -> str:
    """A column's kubelet versions, with the release candidates among them marked."""
    from kubelet_winnet._kubelet.kubelet_version import parse_kubelet_version
    from kubelet_winnet._kubelet.timeline import release

    low, high = parse_kubelet_version(first).minor, parse_kubelet_version(last).minor
    label = first if low == high else f"{first}–{last}"
    rcs = [f"1.{m}" for m in range(low, high + 1) if release(m).status == "rc"]
    if not rcs:
        return label
    return label + (" (rc)" if low == high else f" ({', '.join(rcs)} rc)")


def render_json(rows: Sequence[Row]) -> str:
    if not rows:
        return json.dumps({**_json_head(), "rows": []}, indent=2) + "\n"
    text = io.StringIO()
    write_json(rows, text)
    return text.getvalue()


_GATE_TITLES = {
    "default": "`WindowsHostNetwork` left at its default",
    "on": "`--feature-gates=WindowsHostNetwork=true`",
    "off": "`--feature-gates=WindowsHostNetwork=false`",
}
_LEGEND = (
    "Each cell says what the kubelet puts in `WindowsPodSandboxConfig.security_context`,",
    "then what the pod gets on containerd: `sends POD` / `sends NODE` (`namespace_options`",
    "present) or `sends no namespace_options`, with `host_process` when it is true; then",
    "`containerd: pod network` (its own network namespace) or `containerd: host network`",
    "(the node's). containerd takes the host network from `host_process` alone, so a pod",
    "sent `NODE` still gets a pod network unless it is HostProcess. `refused (step N)`:",
    "the kubelet fails the sandbox at that step of `generatePodSandboxWindowsConfig`;",
    "`kubelet does not start`: it rejects the `--feature-gates` value.",
    "",
)


def write_markdown(rows: Iterable[Row], out: TextIO) -> int:
    """:func:`render_markdown`'s text for any number of rows in bounded memory; the
    number of rows. A column is a run of kubelet minors where every row answers the
    same, so the columns are known only after the last row: the first pass keeps, per
    gate state, where the runs break, and each row's cell texts go to a temporary file
    (one JSON line), which the tables are then written from."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        versions: list[tuple[str, str]] = []  # (kubelet, gates) of each cell
        breaks: set[int] = set()  # cell indexes where a run of versions ends
        errors: dict[str, str] = {}
        host_process = False  # a cell sends host_process: the Hyper-V note applies
        count = 0
        for row in rows:
            if not versions:
                versions = [(cell.kubelet, cell.gates) for cell in row.cells]
            shorts = [cell.short for cell in row.cells]
            for gates_label, _ in GATE_STATES:
                previous: int | None = None
                for index, (_, gates) in enumerate(versions):
                    if gates != gates_label:
                        continue
                    if previous is not None and shorts[index] != shorts[previous]:
                        breaks.add(index)
                    previous = index
            for cell in row.cells:
                host_process = host_process or cell.host_process
                if cell.error is not None:
                    key = "kubelet does not start" if cell.outcome == "flag-error" else (
                        f"refused (step {cell.step})")
                    errors.setdefault(key, cell.error)
            spool.write(json.dumps([row.label, shorts]) + "\n")
            count += 1
        if not count:
            return 0
        out.write("\n".join((*_LEGEND, _releases_line(), "")))
        for gates_label, _ in GATE_STATES:
            indexes = [i for i, (_, gates) in enumerate(versions) if gates == gates_label]
            runs: list[list[int]] = []
            for index in indexes:
                if not runs or index in breaks:
                    runs.append([])
                runs[-1].append(index)
            spans = [_span_label(versions[run[0]][0], versions[run[-1]][0]) for run in runs]
            out.write(f"\n### {_GATE_TITLES[gates_label]}\n\n")
            out.write("| pod | " + " | ".join(f"kubelet {span}" for span in spans) + " |\n")
            out.write("|---" * (len(runs) + 1) + "|")
            spool.seek(0)
            for line in spool:
                label, shorts = json.loads(line)
                texts = [shorts[run[0]] for run in runs]
                out.write(f"\n| {_cell_text(label)} | " + " | ".join(texts) + " |")
            out.write("\n")
        if errors:
            out.write("\nRefusals, with the kubelet's text:\n")
            for key, text in sorted(errors.items()):
                out.write("\n" + printable(f"- {key}: `{text}`"))
            out.write("\n")
        if host_process:
            out.write(f"\n{HYPERV_NOTE}\n")
        return count


def render_markdown(rows: Sequence[Row]) -> str:
    text = io.StringIO()
    write_markdown(rows, text)
    return text.getvalue()


# What no cell shows: the runtime handler changes what a HostProcess request gets (so
# written only under a table where some cell sends host_process).
HYPERV_NOTE = (
    "HostProcess under Hyper-V isolation: the kubelet sends the same `host_process` request "
    "whatever the pod's RuntimeClass, but a handler with `SandboxIsolation = 1` (containerd's "
    "`runhcs-wcow-hypervisor`) and hcsshim v0.15.0-rc.2 or later (the shim of containerd "
    "2.3.3+ and 2.4; hcsshim PR #2531, merged as b07af140d) run the pod in a utility "
    "VM with no network at all, since containerd gives a HostProcess pod no network "
    "namespace. `kubelet-winnet check` reports it as host-process-hyperv-no-network."
)


def _cell_text(text: str) -> str:
    """A file's pod name inside a markdown table cell: one line (the shared escaping
    rule), no column breaks."""
    return printable(text).replace("|", "\\|")


# --- command line ------------------------------------------------------------------------


def configure_matrix(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pod", action="append", default=[], metavar="FILE",
        help="rows for the pods (and workloads) in FILE instead of the representative "
        "pod classes; repeatable, - for stdin",
    )
    parser.add_argument("-o", "--output", choices=("markdown", "json"), default="markdown",
                        help="markdown: one table per gate state, versions with the same "
                        "answers merged; json: every cell")
    parser.add_argument(
        "--runtime", action="store_true",
        help="the runtime axis instead: containerd 1.7 to 2.4 by process and Hyper-V "
        "isolation, for a HostProcess pod and a pod with a hostPort (what the node's "
        "runtime does with the request; see kubelet-winnet node for one node's files)",
    )
    from kubelet_winnet.cli.session import add_limit_arguments, exit_text

    add_limit_arguments(parser)
    parser.epilog = exit_text(
        (0, "the matrix printed (a pod the kubelet refuses is a cell of it, not a failure)"),
        (2, "a --pod file that cannot be read or holds no pod, bad flags or usage, or "
         "output that cannot be written"),
    )


def run_matrix(args: argparse.Namespace, session: Session) -> int:
    """One pod of ``--pod`` at a time: JSON is written row by row, markdown from a
    temporary file once the columns are known (:func:`write_markdown`)."""
    if args.runtime:
        from kubelet_winnet.cli.commands.matrix_runtime import (
            render_runtime_json,
            render_runtime_markdown,
        )

        if args.pod:
            session.error("--runtime shows the representative pod classes; --pod is for "
                          "the kubelet's axis")
            return session.status
        session.out.write(render_runtime_json() if args.output == "json"
                          else render_runtime_markdown())
        return session.status
    pods = _pods_of(args.pod, session, args) if args.pod else None
    rows = matrix_rows(pods)  # _pods_of refuses malformed pods first
    if args.output == "json":
        count = write_json(rows, session.out)
    else:
        count = write_markdown(rows, session.out)
    if not count and pods is not None and session.status == 0:
        session.error("no pod in " + ", ".join("<stdin>" if p == "-" else p for p in args.pod))
    return session.status


def _pods_of(
    paths: Sequence[str], session: Session, args: argparse.Namespace
) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    import kubelet_winnet as api
    from kubelet_winnet._lint.targeting import pod_object
    from kubelet_winnet.cli.session import invalid_pod, limits_of
    from kubelet_winnet.sources.manifests import BadInput, expand_paths, read_source

    for entry in expand_paths(paths):
        path = session.source(entry)
        if path is None:
            continue
        for found in read_source(path, limits_of(args)):
            if isinstance(found, BadInput):
                session.error(str(found))
                continue
            try:
                pod = pod_object(found.value)
                if pod is not None:
                    # Malformed pods are bad input here, once, rather than in every cell.
                    api.windows_sandbox_config(found.value,
                                               feature_gates="WindowsHostNetwork=false")
            except api.SandboxConfigError:
                pass
            except api.InvalidPodError as exc:
                invalid_pod(session, found, exc)
                continue
            if pod is None:
                continue
            yield found.label, _pod_label(found, pod), found.value


def _pod_label(found: Document, pod: PodObject) -> str:
    """A --pod row's name: the pod and the line of its hostNetwork field, what the row's
    cells turn on (located as check locates a finding's), else of the object."""
    host_network = pod.spec.get("hostNetwork")
    if not isinstance(host_network, bool):
        return f"{pod.identity} ({found.source}:{found.line})"
    line = found.line_of((*pod.spec_path, "hostNetwork"))
    return f"{pod.identity} ({found.source}:{line}: hostNetwork: {str(host_network).lower()})"


COMMAND = Command("matrix", configure_matrix, run_matrix)
