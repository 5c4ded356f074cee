"""``kubelet-winnet matrix``: the decision table (``_lint/matrix.py``, pod classes ×
kubelet minor × ``WindowsHostNetwork`` state) rendered as markdown (runs of versions with
the same answer merged into one column) or JSON (one record per cell); ``--pod FILE``
puts the pods of a file in place of the representative classes.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from kubelet_winnet._lint.matrix import (
    GATE_STATES,
    POD_CLASSES,
    Cell,
    PodClass,
    Row,
    evaluate,
    kubelet_minors,
    matrix_rows,
)
from kubelet_winnet._printable import printable
from kubelet_winnet.cli.session import Command
from kubelet_winnet.runtime._releases import HOST_PROCESS_IN_UVM, shim_lines

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
            # a minor not yet out: rc.0's date by the schedule, and the newest pre-release seen
            f"1.{row.minor}": {"status": row.status, "date": row.date} | (
                {"rc0Date": row.rc0_date, "newestSeen": row.newest_seen}
                if row.status == "rc" else {})
            for row in TIMELINE
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
    f"`runhcs-wcow-hypervisor`) and hcsshim {HOST_PROCESS_IN_UVM.hcsshim} or later (the shim "
    f"of containerd {shim_lines(HOST_PROCESS_IN_UVM)}; hcsshim PR "
    f"#{HOST_PROCESS_IN_UVM.pull_request}, merged as {HOST_PROCESS_IN_UVM.commit}) run the "
    "pod in a utility VM with no network at all, since containerd gives a HostProcess pod "
    "no network namespace. `kubelet-winnet check` reports it as host-process-hyperv-no-network."
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
