"""Benchmark: a ``RunPodSandbox`` round trip against a real containerd (informational).

Starts the private containerd of the tests (tests/cri/containerd_fixture.py: Debian's 1.6.x,
native snapshotter, bridge + host-local CNI), then per round, for each measured corpus pod
(half ``hostNetwork``, half pod network, as the corpus has them):

* ``RunPodSandbox``: ``RuntimeClient.run_pod_sandbox(request)`` with the request built
  beforehand by ``run_pod_sandbox_request``; timed from the call to the reply, so it
  covers containerd creating the sandbox (pause container, and a CNI ADD for pod-network
  sandboxes). The sandbox is stopped and removed after the timing, untimed.
* ``Version``: the reference measured in the same run, interleaved with the above: the
  cheapest CRI call, i.e. the gRPC round trip on the unix socket with no runtime work.

The table shows per-call medians and spreads over all samples, and the paired ratio
RunPodSandbox / Version (median over rounds of the ratio of the round medians). There is
no target: what containerd does in RunPodSandbox is not ours to speed up; the row shows
what a caller of ``kubelet-winnet run`` should expect per pod.

When containerd cannot run here (not Linux, not root, packages missing) the benchmark
prints why and exits 0.

Usage::

    python benchmarks/cri.py            # 5 rounds over 12 pods
    python benchmarks/cri.py --quick    # 1 round over 4 pods (a smoke test)
    python benchmarks/cri.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # tests/ is not installed: take the harness from the checkout
    sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

import kubelet_winnet  # noqa: E402
from cri_api.runtime.v1 import api_pb2  # noqa: E402
from tests.cri import containerd_fixture  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
FALLBACK_CORPUS = REPO / "examples"
VERSION_CALLS_PER_POD = 5


def corpus_requests(corpus: Path, count: int) -> list[tuple[str, Any, bool]]:
    """(label, RunPodSandboxRequest, hostNetwork) for up to ``count`` pods the kubelet
    accepts, alternating hostNetwork and pod network while both last."""
    from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS

    host: list[tuple[str, Any, bool]] = []
    pod: list[tuple[str, Any, bool]] = []
    for path in sorted(corpus.glob("*.y*ml")):
        for number, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8")), 1):
            if not isinstance(doc, dict) or (
                doc.get("kind") != "Pod" and doc.get("kind") not in WORKLOAD_TEMPLATE_PATHS
            ):
                continue
            try:
                request = kubelet_winnet.run_pod_sandbox_request(doc)
            except kubelet_winnet.WinnetError:
                continue
            options = request.config.linux.security_context.namespace_options
            host_network = options.network == api_pb2.NODE
            (host if host_network else pod).append((f"{path.name}#{number}", request, host_network))
    mixed: list[tuple[str, Any, bool]] = []
    while (host or pod) and len(mixed) < count:
        for pool in (host, pod):
            if pool and len(mixed) < count:
                mixed.append(pool.pop(0))
    return mixed


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) >= 2 else ordered * 3
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "min_ms": ordered[0] * 1e3,
        "max_ms": ordered[-1] * 1e3,
        "q1_ms": quartiles[0] * 1e3,
        "q3_ms": quartiles[-1] * 1e3,
        "samples": len(ordered),
    }


def measure(endpoint: str, requests: list[tuple[str, Any, bool]], rounds: int) -> dict[str, Any]:
    from kubelet_winnet.cri import RuntimeClient

    run_samples: list[float] = []
    version_samples: list[float] = []
    ratios: list[float] = []
    by_network: dict[str, list[float]] = {"hostNetwork": [], "pod network": []}
    with RuntimeClient(endpoint, timeout=120) as runtime:
        runtime.version()  # connect outside the timing
        for _ in range(rounds):
            round_run: list[float] = []
            round_version: list[float] = []
            for _label, request, host_network in requests:
                for _ in range(VERSION_CALLS_PER_POD):
                    started = time.perf_counter()
                    runtime.version()
                    round_version.append(time.perf_counter() - started)
                started = time.perf_counter()
                sandbox_id = runtime.run_pod_sandbox(request).pod_sandbox_id
                elapsed = time.perf_counter() - started
                runtime.stop_pod_sandbox(sandbox_id)
                runtime.remove_pod_sandbox(sandbox_id)
                round_run.append(elapsed)
                by_network["hostNetwork" if host_network else "pod network"].append(elapsed)
            run_samples += round_run
            version_samples += round_version
            ratios.append(statistics.median(round_run) / statistics.median(round_version))
    return {
        "RunPodSandbox": _summary(run_samples),
        "RunPodSandbox hostNetwork": _summary(by_network["hostNetwork"])
        if by_network["hostNetwork"] else None,
        "RunPodSandbox pod network": _summary(by_network["pod network"])
        if by_network["pod network"] else None,
        "Version": _summary(version_samples),
        "ratio RunPodSandbox / Version": statistics.median(ratios),
    }


def render(results: dict[str, Any], facts: dict[str, Any]) -> str:
    lines = [
        f"containerd {facts['runtime_version']} on {facts['machine']}, "
        f"{facts['pods']} pods x {facts['rounds']} rounds",
        "",
        "| operation | median ms | IQR ms | min-max ms | samples |",
        "|---|---|---|---|---|",
    ]
    for name in ("RunPodSandbox", "RunPodSandbox hostNetwork", "RunPodSandbox pod network",
                 "Version"):
        row = results[name]
        if row is None:
            continue
        lines.append(
            f"| {name} | {row['median_ms']:.2f} | {row['q1_ms']:.2f}-{row['q3_ms']:.2f} | "
            f"{row['min_ms']:.2f}-{row['max_ms']:.2f} | {row['samples']} |"
        )
    lines += [
        "",
        f"RunPodSandbox / Version (paired, per round): "
        f"{results['ratio RunPodSandbox / Version']:.0f}x (informational, no target)",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1 round over 4 pods")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pods", type=int, default=12)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    rounds, count = (1, 4) if args.quick else (args.rounds, args.pods)

    reason = containerd_fixture.unavailable_reason()
    if reason is not None:
        print(f"skipped: {reason}")
        if args.json:
            args.json.write_text(json.dumps({"skipped": reason}) + "\n", encoding="utf-8")
        return 0
    corpus = args.corpus or (DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else FALLBACK_CORPUS)
    requests = corpus_requests(corpus, count)
    if not requests:
        print(f"no pod in {corpus} that the kubelet accepts", file=sys.stderr)
        return 1

    directory = containerd_fixture.short_temporary_directory()
    try:
        daemon = containerd_fixture.start(
            directory, image_archive=containerd_fixture.build_image(directory)
        )
        try:
            from kubelet_winnet.cri import RuntimeClient

            with RuntimeClient(daemon.endpoint) as runtime:
                runtime_version = runtime.version().runtime_version
            results = measure(daemon.endpoint, requests, rounds)
        finally:
            leftovers = daemon.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    facts = {
        "runtime_version": runtime_version,
        "machine": f"{platform.machine()} {platform.python_implementation()} "
        f"{platform.python_version()}",
        "pods": len(requests),
        "rounds": rounds,
        "leftovers": leftovers,
    }
    print(render(results, facts))
    if args.quick:
        print("\n(--quick: too few samples for the numbers to mean anything)")
    if args.json:
        args.json.write_text(
            json.dumps({"results": results, "facts": facts}, indent=2) + "\n", encoding="utf-8"
        )
    if leftovers:
        print(f"left behind: {leftovers}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
