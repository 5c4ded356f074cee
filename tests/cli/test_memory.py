"""Memory that must not grow with the input: ``run --dry-run``
and ``matrix --pod`` stream their input as the other commands do, and ``audit -f`` keeps
counts, not objects. Each reproducer runs in a child process started as the console
script is; its peak RSS is compared with the same command on a small input, measured in
the same run (a bound, not a timing), and its wall time is bounded generously."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet.cli.commands.matrix import (
    POD_CLASSES,
    matrix_rows,
    render_json,
    render_markdown,
)
from tests.strategies import ChildRun, cli_child

WINDOWS_NODE = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-1"},
    "status": {"nodeInfo": {"operatingSystem": "windows", "kubeletVersion": "v1.32.2",
                            "containerRuntimeVersion": "containerd://1.7.20"}},
}


def fat_pod(index: int, labels: int, namespace: str = "apps") -> dict[str, Any]:
    """A Windows pod whose labels make it large in memory (a dict entry and two strings
    per label) and small on disk."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"p{index}", "namespace": namespace,
                     "labels": {f"k{i}": "v" for i in range(labels)}},
        "spec": {"os": {"name": "windows"}, "nodeName": "win-1",
                 "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver"}]},
    }


def write_list(path: Path, items: list[dict[str, Any]] | Any) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.write('{"apiVersion": "v1", "kind": "List", "items": [')
        for index, item in enumerate(items):
            out.write(("," if index else "") + json.dumps(item, separators=(",", ":")))
        out.write("]}\n")
    return path


def bounded(big: ChildRun, small: ChildRun, grow_mb: float, seconds: float) -> None:
    assert big.seconds < seconds, big.seconds
    assert big.peak_mb < small.peak_mb + grow_mb, (big.peak_mb, small.peak_mb)


# --- run --dry-run and matrix --pod ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("stdin", [False, True])
def test_run_dry_run_streams_its_input(tmp_path: Path, stdin: bool) -> None:
    """Was ``list(pods(...))``: every pod of the file held at once (a 200 MB file:
    MemoryError at 3.46 GB). 1,500 pods of 1,000 labels: about 200 MB if held."""
    big = write_list(tmp_path / "big.json", (fat_pod(i, 1000) for i in range(1500)))
    small = write_list(tmp_path / "small.json", [fat_pod(0, 1000)])
    runs = []
    for path in (small, big):
        args = ["run", "--dry-run", "--quiet", "-" if stdin else str(path)]  # no note
        runs.append(cli_child(args, stdin=path.read_bytes() if stdin else None))
    for run in runs:
        assert run.status == 0 and run.err_lines == [], run.err_lines
    records = json.loads(runs[1].out)
    assert [r["pod"] for r in records] == [f"Pod/apps/p{i}" for i in range(1500)]
    assert records[0]["source"] == ("<stdin>#1.items[0]" if stdin else f"{big}#1.items[0]")
    bounded(runs[1], runs[0], grow_mb=60, seconds=240)


def test_run_dry_run_still_finds_a_config_map_after_its_pod(tmp_path: Path) -> None:
    pod = fat_pod(0, 1)
    pod["spec"]["containers"][0]["env"] = [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}}]
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "cm", "namespace": "apps"}, "data": {"a": "later"}}
    path = write_list(tmp_path / "p.json", [pod, config_map])
    for args, stdin in ((["run", "--dry-run", "--quiet", str(path)], None),
                        (["run", "--dry-run", "--quiet", "-"], path.read_bytes())):
        run = cli_child(args, stdin=stdin)
        assert run.status == 0 and run.err_lines == [], run.err_lines
        (record,) = json.loads(run.out)
        envs = record["createContainer"][0]["config"]["envs"]
        assert {"key": "A", "value": "later"} in envs


def test_run_dry_run_prints_nothing_when_the_input_has_an_error(tmp_path: Path) -> None:
    path = write_list(tmp_path / "p.json", [fat_pod(0, 1)])
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nspec: [\n", encoding="utf-8")
    run = cli_child(["run", "--dry-run", str(path), str(bad)])
    assert run.status == 2 and len(run.err_lines) == 1 and run.out == b"", run.err_lines


@pytest.mark.slow
@pytest.mark.parametrize("output", ["json", "markdown"])
def test_matrix_pod_streams_its_input(tmp_path: Path, output: str) -> None:
    """Was ``list(_pods_of(...))`` and ``list(matrix_rows(...))`` (SIGSEGV at 3.45 GB).
    400 pods of 2,500 labels: about 150 MB if held."""
    big = write_list(tmp_path / "big.json", (fat_pod(i, 2500) for i in range(400)))
    small = write_list(tmp_path / "small.json", [fat_pod(0, 2500)])
    runs = [cli_child(["matrix", "--pod", str(path), "-o", output]) for path in (small, big)]
    for run in runs:
        assert run.status == 0 and run.err_lines == [], run.err_lines
    if output == "json":
        rows = json.loads(runs[1].out)["rows"]
        assert [r["label"] for r in rows] == [f"Pod/apps/p{i} ({big}:1)" for i in range(400)]
    else:
        text = runs[1].out.decode()
        assert text.count("| Pod/apps/p399 ") == 3  # one table per gate state
    bounded(runs[1], runs[0], grow_mb=50, seconds=300)


def test_streamed_renderings_are_the_whole_documents() -> None:
    """write_json/write_markdown (row by row) give what one json.dumps of every row and
    the column merging over all rows give."""
    rows = list(matrix_rows())
    from kubelet_winnet._kubelet.timeline import TIMELINE

    whole = {"gateStates": {"default": None, "on": "WindowsHostNetwork=true",
                            "off": "WindowsHostNetwork=false"},
             "kubeletReleasesAsOf": "2026-12-04",
             # a release candidate also says rc.0's scheduled date and the newest seen
             "kubeletReleases": {f"1.{row.minor}": {"status": row.status, "date": row.date}
                                 | ({"rc0Date": row.rc0_date, "newestSeen": row.newest_seen}
                                    if row.status == "rc" else {})
                                 for row in TIMELINE},
             "rows": [{"pod": r.id, "label": r.label, "cells": [c.to_dict() for c in r.cells]}
                      for r in rows]}
    assert render_json(rows) == json.dumps(whole, indent=2) + "\n"
    assert render_json([]) == json.dumps({**whole, "rows": []}, indent=2) + "\n"
    text = render_markdown(rows)
    assert len(rows) == len(POD_CLASSES)
    for row in rows:  # every row in each of the three tables
        assert text.count(f"| {row.label} |") == 3
    # Columns merge runs of versions: no two neighbouring columns of a table are equal.
    for table in text.split("### ")[1:]:
        lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
        columns = list(zip(*(line.split(" | ")[1:] for line in lines), strict=True))
        assert all(a != b for a, b in itertools.pairwise(columns))
    assert render_markdown([]) == ""


# --- audit -f keeps counts, not objects -----------------------------------------------------


@pytest.mark.slow
def test_audit_counts_other_kinds_without_keeping_them(tmp_path: Path) -> None:
    """Was one list entry per object (1 M ConfigMaps: 94 MB)."""
    big = write_list(tmp_path / "big.json",
                     ({"kind": "ConfigMap", "metadata": {"name": f"c{i}"}}
                      for i in range(1_000_000)))
    small = write_list(tmp_path / "small.json", [{"kind": "ConfigMap"}])
    runs = [cli_child(["audit", "-f", str(path), "-o", "csv"]) for path in (small, big)]
    for run, count in zip(runs, ("1 object that is", "1000000 objects that are"),
                          strict=True):
        assert run.status == 0 and len(run.err_lines) == 1, run.err_lines
        assert f"not audited: {count} neither a Pod nor a Node (ConfigMap)" in run.err_lines[0]
    bounded(runs[1], runs[0], grow_mb=25, seconds=240)


@pytest.mark.slow
def test_audit_text_writes_a_large_namespace_in_groups(tmp_path: Path) -> None:
    """Was every row of a namespace buffered until the namespace changed (300 k pods in
    one namespace: 153 MB)."""
    big = write_list(tmp_path / "big.json",
                     [WINDOWS_NODE, *(fat_pod(i, 0) for i in range(150_000))])
    small = write_list(tmp_path / "small.json", [WINDOWS_NODE, fat_pod(0, 0)])
    runs = [cli_child(["audit", "-f", str(path)]) for path in (small, big)]
    for run in runs:
        assert run.status == 0 and run.err_lines == [], run.err_lines
    lines = runs[1].out.decode().splitlines()
    assert lines[0] == "NAMESPACE apps" and lines.count("NAMESPACE apps") == 1
    assert sum(1 for line in lines if line.startswith("p")) == 150_000
    assert "  total: 150000 pods, 0 with hostNetwork" in "\n".join(lines)
    bounded(runs[1], runs[0], grow_mb=40, seconds=300)


@pytest.mark.slow
def test_audit_pods_before_their_node_wait_on_disk(tmp_path: Path) -> None:
    """Was every pod listed before any node held in memory (800 MB). They wait in a
    temporary file and are judged by their node once it is read."""
    pods = [fat_pod(i, 60) for i in range(20_000)]
    big = write_list(tmp_path / "big.json", [*pods, WINDOWS_NODE])
    small = write_list(tmp_path / "small.json", [pods[0], WINDOWS_NODE])
    runs = [cli_child(["audit", "-f", str(path), "-o", "csv"]) for path in (small, big)]
    for run in runs:
        assert run.status == 0 and run.err_lines == [], run.err_lines
    rows = runs[1].out.decode().splitlines()[1:]
    assert len(rows) == 20_000
    assert all('","win-1","v1.32.2","node","containerd://1.7.20","' in row for row in rows)
    bounded(runs[1], runs[0], grow_mb=40, seconds=300)


# --- node: the slowest shapes of a node file, at the node's size limit ----------------------


_NODE_BUDGET_SECONDS = 10
_NODE_BUDGET_MB = 1024


def _just_under_the_node_limit(line: str) -> str:
    from kubelet_winnet.sources.node import NODE_LIMITS

    count = (NODE_LIMITS.max_bytes - 100) // len(line.format(10**6))
    return "".join(line.format(i) for i in range(count))


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["a{}.b.c = 1\n", "k{} = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]\n",
                                   "[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.r{}]\n"])
def test_node_reads_the_slowest_toml_shapes_within_budget(tmp_path: Path, shape: str) -> None:
    """An 8.4 MB config.toml took 24.5 s in tomllib: the node limit (1 MiB) bounds it,
    and what is read around tomllib stays linear."""
    path = tmp_path / "config.toml"
    path.write_text("version = 2\n" + _just_under_the_node_limit(shape), encoding="utf-8")
    run = cli_child(["node", str(path), "--runtime", "containerd://2.4.0"])
    assert run.status in (0, 1), run.err_lines
    assert not any("Traceback" in line for line in run.err_lines)
    assert run.seconds < _NODE_BUDGET_SECONDS and run.peak_mb < _NODE_BUDGET_MB


_HEAD = "Protocol tcp Port Exclusion Ranges\n\nStart Port    End Port\n----------    --------\n"


@pytest.mark.slow
def test_node_reads_a_netsh_output_of_many_overlapping_rows_as_one_finding(
        tmp_path: Path) -> None:
    """A 15.6 MB netsh output printed 255 MB, one finding per row: one per file now."""
    path = tmp_path / "excluded.txt"
    path.write_text(_HEAD + _just_under_the_node_limit(f"{31000:>10}  {31000:>10}\n"),
                    encoding="utf-8")
    run = cli_child(["node", str(path)])
    assert run.status == 1, run.err_lines
    assert run.out.count(b"node-port-range") == 1 and len(run.out) < 2000
    assert run.seconds < _NODE_BUDGET_SECONDS and run.peak_mb < _NODE_BUDGET_MB


@pytest.mark.slow
def test_node_refuses_a_16_mb_netsh_output_at_the_row_bound(tmp_path: Path) -> None:
    """With --max-bytes raised past the 15.6 MB file, the rows are still bounded."""
    path = tmp_path / "excluded.txt"
    with path.open("w", encoding="utf-8") as out:
        out.write(_HEAD)
        for _ in range(700):
            out.write("     31000       31000\n" * 1000)
    run = cli_child(["node", str(path), "--max-bytes", str(32 * 1024 * 1024)])
    assert run.status == 2 and run.out == b""
    assert run.err_lines == [f"kubelet-winnet: error: {path}:65540: more than 65535 port "
                             "ranges in one file: netsh lists at most one per port"]
    assert run.seconds < _NODE_BUDGET_SECONDS and run.peak_mb < _NODE_BUDGET_MB
