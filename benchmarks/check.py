"""How fast ``kubelet-winnet check`` reads and lints, and how much memory it holds.

Usage (after ``pip install -e .[test]``)::

    python benchmarks/check.py            # 10,000-file directory, 100,000-pod List
    python benchmarks/check.py --quick    # what CI runs: small inputs, same code paths
    python benchmarks/check.py --checkov-venv /tmp/checkov-venv   # opt in to the peer row

Inputs are written by ``benchmarks/gen_manifests.py`` into a temporary directory (never
committed). Each row runs the real console entry point in a child process; its wall time
and peak RSS (``wait4``) are measured, and for the List rows also its CPU seconds (user +
system), the steadier measure on a shared machine. The reference rows, measured in the
same run, only parse the same input without checking anything: ``json.load`` of the List
and PyYAML's C loader over the directory; the ratio is check time / reference time.
The List rows run in ``--pairs`` rounds (check, translate and json.load one after
another, the order rotating): ``json.load`` of a 100 MB List allocates half a gigabyte
and its CPU time swings by 2x on a shared machine, so the verdict uses the median of
the ratios within a round ("paired"), and the table shows the run of median CPU time.

The peer row is opt-in (``--checkov-venv DIR``, or ``--checkov PATH`` to an installed
checkov): checkov is installed into its own virtual environment (``DIR``, created and
filled with ``pip install checkov`` when missing; never this project's) and runs on a
1,000-file subset of the directory, against ``check`` on the same subset, in alternating
rounds after a warm-up (both with their bytecode cached, as installed packages have it).

Budgets (``benchmarks/budgets.py``; they never change the exit code): ``check`` and
``translate -o json`` of the List at most 2x the CPU time of ``json.load`` of it, paired;
peak RSS under 50 MB whatever the input size; with the peer row, checkov's CPU time at
least 20x ``check``'s on the same 1,000 files. The start-up row (``check`` of one small
file against ``import yaml, google.protobuf``) is informational. The exit code is
non-zero only when a run fails (exit status other than 0 or 1, or output that does not
parse).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
gen_manifests = importlib.import_module("gen_manifests")  # a sibling script, not a package
from budgets import CPU_RATIO, PEER_RATIO, RSS_MB, at_least, at_most  # noqa: E402
from peak import CONSOLE_SCRIPT, PRELUDE, peak_mb  # noqa: E402

STARTUP_REFERENCE = "import yaml, google.protobuf"
CHECKOV_FILES = 1_000

_REFERENCE_LIST = PRELUDE + (
    "import json, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    items = json.load(f)['items']\n"
    "print(sum(1 for i in items if i.get('kind') == 'Pod'))\n"
)
# What check pays before any rule: the List read as check reads it (the streaming reader,
# lines and bounds included), each pod found and targeted, and read by the kubelet model's
# reader, which every rule reads through (nothing judged, nothing written).
_FLOOR_LIST = PRELUDE + (
    "import sys\n"
    "from kubelet_winnet._kubelet.pod import read_pod\n"
    "from kubelet_winnet._lint.targeting import pod_object, target_of\n"
    "from kubelet_winnet.sources import read_manifests\n"
    "n = 0\n"
    "for document in read_manifests([sys.argv[1]]):\n"
    "    pod = pod_object(document.value)\n"
    "    if pod is not None:\n"
    "        target_of(pod)\n"
    "        read_pod(document.value)\n"
    "        n += 1\n"
    "print(n)\n"
)
_REFERENCE_TREE = (
    "import os, sys, yaml\n"
    "n = 0\n"
    "for root, _, files in os.walk(sys.argv[1]):\n"
    "    for name in files:\n"
    "        with open(os.path.join(root, name), 'rb') as f:\n"
    "            n += sum(1 for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if d)\n"
    "print(n)\n"
)


@dataclass
class Row:
    name: str
    pods: int
    seconds: float
    peak_mb: float
    reference: float | None = None  # seconds of the reference row
    startup: float = 0.0  # seconds of the one-pod run, for the steady rate
    cpu: float = 0.0  # CPU seconds of the run, and of its reference (List rows)
    reference_cpu: float | None = None
    # List rows: the median over alternating pairs of (this run's CPU / the reference's
    # CPU in the same pair); json.load of a large List swings by 2x on a shared VM
    paired: float | None = None

    @property
    def pods_per_second(self) -> float:
        return self.pods / self.seconds if self.seconds else 0.0

    @property
    def steady_pods_per_second(self) -> float:
        busy = self.seconds - self.startup
        return self.pods / busy if busy > 0 else 0.0


# CPU seconds (user + system) of the last child measured: on a shared machine they move
# less than wall seconds (other jobs take turns on the cores, not on this child's CPU).
LAST_CPU = [0.0]


def measure(argv: list[str], env: dict[str, str] | None = None,
            ) -> tuple[float, float, bytes, int]:
    """Wall seconds, peak RSS in MB, stdout and exit status of one child process (its
    CPU seconds in ``LAST_CPU``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        LAST_CPU[0] = usage.ru_utime + usage.ru_stime
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        data = out.read()
        err.seek(0)
        peak = peak_mb(err.read(), usage)
    return seconds, peak, data, child.returncode


def check(path: Path) -> tuple[float, float, dict[str, object]]:
    argv = [sys.executable, "-c", CONSOLE_SCRIPT, "check", str(path), "-o", "json", "-q"]
    seconds, peak, data, status = measure(argv)
    if status not in (0, 1):
        raise SystemExit(f"check {path} exited {status}")
    report: dict[str, object] = json.loads(data)
    return seconds, peak, report


def translate(path: Path) -> tuple[float, float, int]:
    """``translate -o json`` of a file: seconds, peak RSS and the configs printed."""
    argv = [sys.executable, "-c", CONSOLE_SCRIPT, "translate", str(path), "-o", "json"]
    seconds, peak, data, status = measure(argv)
    if status not in (0, 1):
        raise SystemExit(f"translate {path} exited {status}")
    return seconds, peak, data.count(b'"source"')


def compile_package() -> None:
    """Write the bytecode of the package the children import, as pip does when it
    installs a wheel: an editable install run with PYTHONDONTWRITEBYTECODE set would
    otherwise compile every module from source in every start-up, which no installed
    user pays (the reference's yaml and protobuf come from site-packages, compiled)."""
    import compileall

    import cri_api
    import kubelet_winnet

    for package in (kubelet_winnet, cri_api):
        compileall.compile_dir(str(Path(package.__path__[0])), quiet=1)


def startup(one: Path, pairs: int) -> tuple[float, float]:
    """Median wall seconds of ``check`` on one small YAML file and of
    ``python -c 'import yaml, google.protobuf'``, in alternating pairs, and the median
    of the per-pair ratios (pre-commit pays this start-up on every commit)."""
    compile_package()
    ours, reference, ratios = [], [], []
    for index in range(pairs):
        runs = [[sys.executable, "-c", CONSOLE_SCRIPT, "check", str(one), "-q"],
                [sys.executable, "-c", STARTUP_REFERENCE]]
        timed = []
        for argv in runs if index % 2 else runs[::-1]:
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
            timed.append(time.perf_counter() - start)
        check_s, reference_s = timed if index % 2 else timed[::-1]
        ours.append(check_s)
        reference.append(reference_s)
        ratios.append(check_s / reference_s)
    return statistics.median(ours), statistics.median(ratios)


def checkov_in(venv: Path) -> str:
    """checkov in its own virtual environment ``venv``, installed there when missing."""
    executable = venv / "bin" / "checkov"
    if not executable.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                        "checkov"], check=True)
    return str(executable)


def subset(tree: Path, target: Path, files: int) -> Path:
    """The first ``files`` manifests of ``tree`` (sorted), copied under ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for source in sorted(tree.rglob("*.yaml"))[:files]:
        shutil.copy(source, target / source.name)
    return target


def pods_checked(report: dict[str, object]) -> int:
    summary = report["summary"]
    assert isinstance(summary, dict)
    return int(summary["podsChecked"]) + int(summary["linuxPodsSkipped"])


def _median_row(runs: list[Row]) -> Row:
    """The run of median CPU time (its wall time and peak RSS with it)."""
    return sorted(runs, key=lambda row: row.cpu)[len(runs) // 2]


def _list_rows(path: Path, pods: int, pairs: int) -> tuple[Row, Row, Row, Row]:
    """``check`` and ``translate -o json`` of the List against ``json.load`` of it, in
    ``pairs`` rounds of the processes (the order rotating), so that each ratio is the
    median of ratios within a round, not of runs minutes apart; with them the floor,
    what ``check`` pays before any rule (:data:`_FLOOR_LIST`)."""
    runs: dict[str, list[Row]] = {"check": [], "translate": [], "reference": [], "floor": []}
    for index in range(pairs):
        order = ["check", "reference", "translate", "floor"]
        for name in order[index % 4:] + order[:index % 4]:
            if name == "check":
                seconds, peak, report = check(path)
                row = Row(f"check List ({pods} pods)", pods_checked(report), seconds, peak)
            elif name == "translate":
                seconds, peak, configs = translate(path)
                row = Row(f"translate -o json List ({pods} pods)", configs, seconds, peak)
            elif name == "floor":
                seconds, peak, _, _ = measure([sys.executable, "-c", _FLOOR_LIST, str(path)])
                row = Row("floor: the List read and each pod by the kubelet model's reader "
                          "(no rule, no output)", pods, seconds, peak)
            else:
                seconds, peak, _, _ = measure([sys.executable, "-c", _REFERENCE_LIST,
                                               str(path)])
                # The floor: CPython's C JSON decoder alone, no checks, the List in memory.
                row = Row("reference: json.load of the List", pods, seconds, peak)
            row.cpu = LAST_CPU[0]
            runs[name].append(row)
    reference = _median_row(runs["reference"])
    out = []
    for name in ("check", "translate", "floor"):
        row = _median_row(runs[name])
        row.reference, row.reference_cpu = reference.seconds, reference.cpu
        row.paired = statistics.median(
            ours.cpu / theirs.cpu for ours, theirs in zip(runs[name], runs["reference"],
                                                          strict=True))
        out.append(row)
    return out[0], out[1], reference, out[2]


def run(files: int, pods: int, checkov: str | None, keep: Path | None,
        pairs: int = 3) -> list[Row]:
    workdir = keep or Path(tempfile.mkdtemp(prefix="kubelet-winnet-bench-"))
    rows = []
    try:
        gen_manifests.write_tree(workdir / "tree", files)
        gen_manifests.write_list(workdir / "list.json", pods)
        one = workdir / "one.yaml"
        one.write_text(json.dumps(gen_manifests.pod(1)))
        seconds, peak, report = check(one)
        rows.append(Row("check one pod (start-up)", pods_checked(report), seconds, peak))
        startup_s = seconds
        small = workdir / "small.yaml"
        small.write_text(yaml.safe_dump(gen_manifests.pod(1)), encoding="utf-8")
        median, ratio = startup(small, 3 if files < 1_000 else 20)
        rows.append(Row(f"check one YAML file vs `{STARTUP_REFERENCE}` (start-up)", 1,
                        median, 0.0, median / ratio))

        listed, translated, loaded, floor = _list_rows(workdir / "list.json", pods, pairs)
        listed.startup = translated.startup = startup_s
        rows += [listed, loaded, translated, floor]

        seconds, peak, report = check(workdir / "tree")
        reference, _, _, _ = measure([sys.executable, "-c", _REFERENCE_TREE,
                                      str(workdir / "tree")])
        rows.append(Row(f"check directory ({files} files)", pods_checked(report), seconds,
                        peak, reference, startup_s))

        if checkov:
            few = subset(workdir / "tree", workdir / "subset", min(files, CHECKOV_FILES))
            rows += _peer_rows(few, checkov, pairs)
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return rows


def _peer_rows(few: Path, checkov: str, pairs: int) -> list[Row]:
    """``check`` and checkov on the same subset, ``pairs`` rounds in turn after one
    warm-up run of each; each row holds the median wall time. Both run as installed
    packages do, with their bytecode cached: pip compiles checkov's at install, and the
    warm-up writes this checkout's (PYTHONDONTWRITEBYTECODE is dropped for the children).
    The budget is CPU time (checkov's helper processes included), which another job on
    the machine disturbs less than wall time; the wall time is shown beside it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ours_argv = [sys.executable, "-c", CONSOLE_SCRIPT, "check", str(few), "-o", "json", "-q"]
    peer_argv = [checkov, "-d", str(few), "--framework", "kubernetes", "--quiet", "-o", "json"]
    ours, theirs, report, peak = [], [], b"", 0.0
    ours_cpu, theirs_cpu = [], []
    for index in range(pairs + 1):
        seconds, _, report, status = measure(ours_argv, env)
        cpu = LAST_CPU[0]
        if status not in (0, 1):
            raise SystemExit(f"check {few} exited {status}")
        peer_seconds, peak, _, _ = measure(peer_argv, env)
        if index:  # the first round warms both up
            ours.append(seconds)
            theirs.append(peer_seconds)
            ours_cpu.append(cpu)
            theirs_cpu.append(LAST_CPU[0])
    count = len(list(few.iterdir()))
    mine = Row(f"check directory ({count} files), median of {pairs}",
               pods_checked(json.loads(report)), statistics.median(ours), 0.0,
               cpu=statistics.median(ours_cpu))
    mine.peak_mb = measure([sys.executable, "-c", CONSOLE_SCRIPT, "check", str(few), "-q"],
                           env)[1]
    # The ratio of this row is checkov / kubelet-winnet on the same subset.
    return [mine, Row(f"checkov -d ({count} files), median of {pairs}", mine.pods,
                      statistics.median(theirs), peak, mine.seconds,
                      cpu=statistics.median(theirs_cpu), reference_cpu=mine.cpu)]


def table(rows: list[Row]) -> str:
    lines = [
        "| run | pods | seconds | pods/s | pods/s after start-up | peak RSS MB "
        "| ratio to reference | CPU s | CPU ratio | CPU ratio, paired |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ratio = f"{row.seconds / row.reference:.2f}" if row.reference else "-"
        cpu = f"{row.cpu:.2f}" if row.cpu else "-"
        cpu_ratio = f"{row.cpu / row.reference_cpu:.2f}" if row.reference_cpu else "-"
        paired = f"{row.paired:.2f}" if row.paired is not None else "-"
        lines.append(f"| {row.name} | {row.pods} | {row.seconds:.2f} | "
                     f"{row.pods_per_second:,.0f} | "
                     f"{row.steady_pods_per_second:,.0f} | {row.peak_mb:.0f} | {ratio} | "
                     f"{cpu} | {cpu_ratio} | {paired} |")
    return "\n".join(lines)


def count(text: str) -> int:
    """A count of at least 1, for argparse (which reports the ValueError's type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (CI smoke run)")
    parser.add_argument("--files", type=int, default=None)
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--checkov", default=None,
                        help="checkov executable for the opt-in peer row")
    parser.add_argument("--checkov-venv", type=Path, default=None,
                        help="opt in to the peer row with checkov from this virtual "
                        "environment (created and filled with pip when missing)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the inputs here and keep them")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--pairs", type=count, default=None,
                        help="rounds of check, translate and json.load of the List "
                        "(default 3, 1 with --quick); the CPU ratios are the medians of "
                        "the ratios within a round")
    args = parser.parse_args()
    files = args.files or (200 if args.quick else 10_000)
    pods = args.pods or (2_000 if args.quick else 100_000)
    checkov = args.checkov or (checkov_in(args.checkov_venv) if args.checkov_venv else None)
    pairs = args.pairs if args.pairs is not None else (1 if args.quick else 3)
    rows = run(files, pods, checkov, args.keep, pairs)
    print(table(rows))
    if not checkov:
        print("\n(peer row not asked for: --checkov-venv DIR runs it; see docs/check.md)")
    started, listed, translated, floor = rows[1], rows[2], rows[4], rows[5]
    assert listed.reference and translated.reference
    assert listed.paired is not None and translated.paired is not None
    print()
    print(at_most("check of the List, CPU against json.load of it", listed.paired, CPU_RATIO))
    print(at_most("translate -o json of the List, CPU against json.load of it",
                  translated.paired, CPU_RATIO))
    ours = [r for r in rows if not r.name.startswith(("ref", "checkov", "floor"))]
    print(at_most("peak RSS of check and translate", max(r.peak_mb for r in ours), RSS_MB,
                  " MB"))
    peer = [r for r in rows if r.name.startswith("checkov")]
    if peer and peer[0].reference_cpu:
        print(at_least("checkov's CPU against check's on the same files",
                       peer[0].cpu / peer[0].reference_cpu, PEER_RATIO))
    assert floor.paired is not None and floor.reference_cpu
    left = max(CPU_RATIO - floor.paired, 0.0)
    print(f"informational: before any rule, reading the List and each pod by the kubelet "
          f"model's reader costs {floor.paired:.2f}x json.load's CPU, which leaves "
          f"{left:.2f}x of the budget for the rules and the output "
          f"({left * floor.reference_cpu / floor.pods * 1e6:.1f} us a pod)")
    print(f"informational: List {listed.pods_per_second:,.0f} pods/s "
          f"({listed.steady_pods_per_second:,.0f} after start-up); start-up "
          f"{started.seconds / (started.reference or 1):.2f}x `{STARTUP_REFERENCE}`")
    if args.json:
        args.json.write_text(json.dumps([row.__dict__ for row in rows], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
