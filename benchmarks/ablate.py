"""Does each cache still earn its place?

Each one is switched off and on in alternating rounds on the benchmark row it serves
(``dict``, ``V1Pod`` or ``dict refused`` of ``benchmarks/run.py``, or
``pod_sandbox_config`` or ``container_config`` of ``benchmarks/cri_requests.py``; same
corpus; ``container_config`` also over 500 pods of ``benchmarks/gen_manifests.py``, which
set CPU and memory limits as workloads do; or, for the command line's, translating a
generated 2,000-pod List in kubectl's layout, in this process); the
table gives the median over rounds of time(off) / time(on). A row under 1.10 means the
code should go. Usage: ``python benchmarks/ablate.py [--corpus DIR] [--rounds N]
[--rows container_config]`` (``--rows``: only the rows whose name holds the text).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import io
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


import cri_requests
import gen_manifests
import run

import kubelet_winnet as kw
from kubelet_winnet._kubelet import labels as _labels
from kubelet_winnet._kubelet import messages as _messages
from kubelet_winnet._kubelet import objectview as _objectview
from kubelet_winnet._kubelet import pod as _pod
from kubelet_winnet._kubelet import profile as _profile
from kubelet_winnet._kubelet import quantity as _quantity
from kubelet_winnet._kubelet import rules as _rules
from kubelet_winnet._kubelet import sandbox_config as _sandbox_config
from kubelet_winnet._kubelet.rules import (
    SandboxDecision,
)
from kubelet_winnet.cli import main as cli_main
from kubelet_winnet.cli.commands import translate as _translate_module


class _NoCache(dict[Any, Any]):
    """A cache that never finds anything and keeps nothing."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __getitem__(self, key: Any) -> Any:
        raise KeyError(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def __len__(self) -> int:
        return 0


class _Rebuilt(dict[Any, SandboxDecision]):
    """The prebuilt decisions, built anew on every lookup (as without the table)."""

    def __getitem__(self, key: Any) -> SandboxDecision:
        d = dict.__getitem__(self, key)
        return SandboxDecision(
            d.network, d.host_process, d.run_as_username, d.credential_spec, d.error,
            d.error_rule, steps=d.steps,
        )


def _time(function: Callable[[Any], object], items: Sequence[Any], loops: int = 3) -> float:
    gc.disable()
    start = time.perf_counter()
    for _ in range(loops):
        for item in items:
            function(item)
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed / loops / len(items)


def _translate(pod: Any) -> None:
    with contextlib.suppress(kw.SandboxConfigError):
        kw.windows_sandbox_config(pod)


def _sandbox(pod: Any) -> None:
    with contextlib.suppress(kw.SandboxConfigError):
        kw.pod_sandbox_config(pod)


def _container(pod: Any) -> None:
    name = cri_requests.first_container(pod)
    # As cri_requests.py: a pod needing a volume path or ConfigMap is refused, quickly.
    with contextlib.suppress(kw.SandboxConfigError, kw.InvalidPodError):
        if name is not None:
            kw.container_config(pod, name)


def _swap(module: Any, name: str, off: Any) -> tuple[Callable[[], None], Callable[[], None]]:
    on = getattr(module, name)
    return (lambda: setattr(module, name, on)), (lambda: setattr(module, name, off))


def _both(
    first: tuple[Callable[[], None], Callable[[], None]],
    second: tuple[Callable[[], None], Callable[[], None]],
) -> tuple[Callable[[], None], Callable[[], None]]:
    def on() -> None:
        first[0]()
        second[0]()

    def off() -> None:
        first[1]()
        second[1]()

    return on, off


def _list_file(pods: int) -> str:
    """A generated ``kind: List`` in kubectl's layout (benchmarks/gen_manifests.py),
    written once into a temporary directory."""
    directory = tempfile.mkdtemp(prefix="kubelet-winnet-ablate-")
    atexit.register(shutil.rmtree, directory, True)
    path = Path(directory) / "list.json"
    gen_manifests.write_list(path, pods)
    return str(path)


def _translate_list(path: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli_main(["translate", path, "-o", "json"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=run.DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--list-pods", type=int, default=2_000,
                        help="pods in the generated List of the command-line rows")
    parser.add_argument("--rows", default="", help="only the rows whose name holds this")
    args = parser.parse_args(argv)
    listed = _list_file(args.list_pods)
    accepted, refused, v1pods = [], [], []
    for pod in run.load_corpus(args.corpus):
        try:
            kw.windows_sandbox_config(pod.manifest)
        except kw.SandboxConfigError:
            refused.append(pod.manifest)
            continue
        accepted.append(pod.manifest)
        with contextlib.suppress(Exception):  # the client refuses a few; run.py skips them
            v1pods.append(run.to_v1pod(pod.manifest))
    # Pods as a workload's are written, with CPU and memory limits (the corpus's
    # published DaemonSets mostly set none): what the quantity caches are for.
    generated = [gen_manifests.pod(index) for index in range(500)]
    cases: list[tuple[str, str, list[Any], tuple[Callable[[], None], Callable[[], None]]]] = [
        ("profile cache (_profile._PROFILES)", "dict", accepted,
         _swap(_profile, "_PROFILES", _NoCache())),
        ("option-set cache (_pod._OPTION_SETS)", "dict", accepted,
         _swap(_pod, "_OPTION_SETS", _NoCache())),
        ("encoded-message cache (_messages._ENCODED)", "dict", accepted,
         _swap(_messages, "_ENCODED", _NoCache())),
        ("schema cache (_objectview._SCHEMAS)", "V1Pod", v1pods,
         _swap(_objectview, "_SCHEMAS", _NoCache())),
        ("prebuilt decisions (_rules._PLAIN_DECISIONS)", "dict", accepted,
         _swap(_rules, "_PLAIN_DECISIONS", _Rebuilt(_rules._PLAIN_DECISIONS))),
        ("prebuilt refusals (_rules._REFUSALS)", "dict refused", refused,
         _swap(_rules, "_REFUSALS", _Rebuilt(_rules._REFUSALS))),
        ("DNS config cache (_sandbox_config._DNS_CACHE)", "pod_sandbox_config", accepted,
         _swap(_sandbox_config, "_DNS_CACHE", _NoCache())),
        ("log-root cache (_sandbox_config._CLEAN_ROOTS)", "pod_sandbox_config", accepted,
         _swap(_sandbox_config, "_CLEAN_ROOTS", _NoCache())),
        ("Linux part encodings (_sandbox_config._LINUX_PARTS)", "pod_sandbox_config",
         accepted, _swap(_sandbox_config, "_LINUX_PARTS", _NoCache())),
        ("container-hash cache (_labels._HASHES)", "container_config", accepted,
         _swap(_labels, "_HASHES", _NoCache())),
        ("quantity cache (_quantity._NANOS)", "container_config, generated pods",
         generated, _swap(_quantity, "_NANOS", _NoCache())),
        ("config JSON cache (cli.translate._CONFIG_JSON)", "translate -o json", [listed],
         _swap(_translate_module, "_CONFIG_JSON", _NoCache())),
    ]
    if args.rows:
        cases = [case for case in cases if args.rows in case[1]]
    print("| cache | row | time off / on (median) |")
    print("|---|---|---:|")
    for label, row, items, (on, off) in cases:
        ratios = []
        rounds = args.rounds if row != "V1Pod" else max(args.rounds // 4, 3)
        function = {"pod_sandbox_config": _sandbox, "pod_sandbox_config V1Pod": _sandbox,
                    "container_config": _container,
                    "container_config, generated pods": _container,
                    "translate -o json": _translate_list}.get(
            row, _translate)
        whole_runs = row == "translate -o json"  # one run is a whole file
        loops = 1 if whole_runs else 3
        for _ in range(max(args.rounds // 8, 3) if whole_runs else rounds):
            on()
            with_it = _time(function, items, loops)
            off()
            without = _time(function, items, loops)
            on()
            ratios.append(without / with_it)
        print(f"| {label} | {row} | {statistics.median(ratios):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
