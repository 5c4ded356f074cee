"""Benchmark of the runtime half: what does SandboxNetworks cost per
sandbox on top of the HCN calls it makes?

Usage (after ``pip install -e .[test]``)::

    python benchmarks/runtime.py                  # full run, ~1 min on 2 cores
    python benchmarks/runtime.py --quick          # what the test runs: every path, tiny
    python benchmarks/runtime.py --json out.json  # also write the results
    python benchmarks/runtime.py --state-dir D    # state files on D (default: a temp dir)

Per sandbox, at 1 and at 32 threads (each thread works through its own sandboxes):

* ``sandboxes``: ``SandboxNetworks.setup(id, pod_plan)`` then ``teardown(id)`` over
  ``InMemoryHcn``: the locks, the state files (written with fsync, as in production) and
  the HCN calls.
* ``floor``: reference 1, measured in the same run: the raw HCN calls below plus the file
  I/O crash safety needs (three durable writes of a record-sized file, one durable
  unlink, each with the same fsyncs as the state store), without locks, JSON or checks.
* ``raw hcn``: reference 2: the HCN calls that setup and teardown make
  (HcnCreateNamespace, HcnCloseNamespace, HcnDeleteNamespace) made directly on an
  ``InMemoryHcn``, with nothing around them.

Rounds run the three in turn, each on a fresh client and directory. The table shows, per
row, the median over rounds of the throughput (sandboxes per second, wall clock) and of
the p50/p99 latency of one setup+teardown; ``× raw hcn`` is the median over rounds of the
per-round ratio of wall times to the raw calls'. Compare ``sandboxes`` with ``floor``:
the difference is what this library adds beyond the I/O it cannot avoid. The exit code
is non-zero only if something errors or leaks (a namespace, handle, string or state
record left behind).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.runtime import plan_sandbox_network
from kubelet_winnet.runtime.hcn import InMemoryHcn, SandboxNetworks, namespace_settings

POD_PLAN = plan_sandbox_network(api_pb2.RunPodSandboxRequest())
THREADS = (1, 32)


@dataclass
class Row:
    operation: str
    threads: int
    sandboxes: int  # per round
    throughput: float  # sandboxes per second, median over rounds
    p50_us: float
    p99_us: float
    ratio: float | None  # mean time per sandbox / the reference's, median over rounds


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _run_threads(
    threads: int, per_thread: int, one: Callable[[str], None]
) -> tuple[float, list[float]]:
    """Wall time of the whole batch and the latency of each call of ``one``."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []
    start = threading.Barrier(threads + 1)

    def work(index: int) -> None:
        mine = latencies[index]
        try:
            start.wait()
            for n in range(per_thread):
                began = time.perf_counter()
                one(f"bench-{index}-{n}")
                mine.append(time.perf_counter() - began)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in pool:
        thread.join()
    wall = time.perf_counter() - began
    if errors:
        raise errors[0]
    return wall, [latency for per in latencies for latency in per]


def _sandboxes(state_root: Path) -> tuple[Callable[[str], None], Callable[[], None]]:
    hcn = InMemoryHcn()
    state = Path(tempfile.mkdtemp(prefix="state-", dir=state_root))
    networks = SandboxNetworks(hcn, state)

    def one(sandbox_id: str) -> None:
        networks.setup(sandbox_id, POD_PLAN)
        networks.teardown(sandbox_id)

    def check() -> None:
        left = [n for n in hcn.namespaces().values() if not n.is_host_default]
        if left or hcn.open_handles or hcn.unfreed_strings or any(state.iterdir()):
            raise SystemExit(f"sandboxes leaked: {len(left)} namespaces or files in {state}")
        shutil.rmtree(state)

    return one, check


def _raw() -> tuple[Callable[[str], None], Callable[[], None]]:
    hcn = InMemoryHcn()
    settings = namespace_settings(owner="bench", name="bench")

    def one(sandbox_id: str) -> None:
        namespace_id = uuid.uuid4()
        hcn.close_namespace(hcn.create_namespace(namespace_id, settings))
        hcn.delete_namespace(namespace_id)

    def check() -> None:
        if len(hcn.namespaces()) != 1 or hcn.open_handles or hcn.unfreed_strings:
            raise SystemExit("raw hcn leaked")

    return one, check


def _durable_write(directory: Path, name: str, data: bytes) -> None:
    # The same steps as StateStore.save: temp file, fsync, replace, fsync the directory.
    fd, temp = tempfile.mkstemp(dir=directory)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, directory / name)
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    if os.name != "nt":
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _floor(state_root: Path) -> tuple[Callable[[str], None], Callable[[], None]]:
    """The raw HCN calls plus the file I/O a setup+teardown must do to be crash-safe
    (three durable writes of a record-sized file, then a durable unlink)."""
    raw, check_raw = _raw()
    state = Path(tempfile.mkdtemp(prefix="floor-", dir=state_root))
    record = b"x" * 300

    def one(sandbox_id: str) -> None:
        name = f"{sandbox_id}.json"
        _durable_write(state, name, record)  # creating
        raw(sandbox_id)
        _durable_write(state, name, record)  # ready
        _durable_write(state, name, record)  # removing
        os.unlink(state / name)
        _fsync_dir(state)

    def check() -> None:
        check_raw()
        shutil.rmtree(state)

    return one, check


OPERATIONS = ("sandboxes", "floor", "raw hcn")


def measure(rounds: int, per_thread: dict[int, int], state_root: Path) -> list[Row]:
    makers: dict[str, Callable[[], tuple[Callable[[str], None], Callable[[], None]]]] = {
        "sandboxes": lambda: _sandboxes(state_root),
        "floor": lambda: _floor(state_root),
        "raw hcn": _raw,
    }
    rows: list[Row] = []
    for threads in THREADS:
        count = per_thread[threads]
        total = threads * count
        samples: dict[str, list[tuple[float, list[float]]]] = {name: [] for name in OPERATIONS}
        for _ in range(rounds):
            for name in OPERATIONS:
                one, check = makers[name]()
                samples[name].append(_run_threads(threads, count, one))
                check()
        for name, runs in samples.items():
            # paired: each round's wall time against the raw calls' in the same round
            ratios = [
                wall / raw_wall
                for (wall, _), (raw_wall, _) in zip(runs, samples["raw hcn"], strict=True)
            ]
            rows.append(
                Row(
                    operation=name,
                    threads=threads,
                    sandboxes=total,
                    throughput=statistics.median(total / wall for wall, _ in runs),
                    p50_us=statistics.median(_percentile(lat, 0.50) for _, lat in runs) * 1e6,
                    p99_us=statistics.median(_percentile(lat, 0.99) for _, lat in runs) * 1e6,
                    ratio=statistics.median(ratios) if name != "raw hcn" else None,
                )
            )
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| operation | threads | sandboxes/round | sandboxes/s | p50 µs | p99 µs | × raw hcn |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = f"{row.ratio:.1f}" if row.ratio is not None else "(reference)"
        lines.append(
            f"| {row.operation} | {row.threads} | {row.sandboxes} | {row.throughput:,.0f} | "
            f"{row.p50_us:,.0f} | {row.p99_us:,.0f} | {ratio} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="few sandboxes, one round")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--state-dir", type=Path, help="where state files go (a temp dir)")
    args = parser.parse_args(argv)
    rounds, per_thread = (1, {1: 10, 32: 2}) if args.quick else (3, {1: 100, 32: 10})
    root = args.state_dir or Path(tempfile.mkdtemp(prefix="winnet-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        rows = measure(rounds, per_thread, root)
    finally:
        if args.state_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print(table(rows))
    python = f"{platform.python_implementation()} {platform.python_version()}"
    machine = f"{python}, {os.cpu_count()} CPUs"
    print(f"\n{rounds} round(s); {machine}; state files under {root}")
    if args.json is not None:
        result = {"rounds": rounds, "machine": machine, "rows": [asdict(r) for r in rows]}
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
