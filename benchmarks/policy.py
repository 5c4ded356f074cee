"""How long ``kubelet-winnet policy`` takes to print (it should be well under a second).

Usage::

    python benchmarks/policy.py            # 15 rounds
    python benchmarks/policy.py --quick    # what CI runs: 3 rounds, same code paths

Each round runs, back to back, the console entry point as a child process twice: once
``policy`` (the generator, the rule data, YAML output) and once ``--help`` (the reference:
interpreter start-up and the command line, no command module). The table shows the median
wall time of each and the median of the per-round ratio policy / reference.

Targets (informational; they never change the exit code): policy < 1 s and <= 3 x the
reference. The exit code is non-zero only when a run fails or its output does not parse.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

import yaml

ENTRY = "from kubelet_winnet.cli import main; raise SystemExit(main())"


def _timed(*argv: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *argv], capture_output=True,
                          text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"kubelet-winnet {' '.join(argv)} exited {done.returncode}: "
                         f"{done.stderr.strip()[:200]}")
    return elapsed, done.stdout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 15
    policy_times, reference_times, ratios = [], [], []
    for _ in range(rounds):
        policy, out = _timed("policy")
        kinds = [document["kind"] for document in yaml.safe_load_all(out)]
        if kinds != ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]:
            raise SystemExit(f"kubelet-winnet policy printed {kinds}")
        reference, _ = _timed("--help")
        policy_times.append(policy)
        reference_times.append(reference)
        ratios.append(policy / reference)
    policy_ms = statistics.median(policy_times) * 1000
    reference_ms = statistics.median(reference_times) * 1000
    ratio = statistics.median(ratios)
    print("| run | rounds | median wall (ms) |")
    print("| --- | ---: | ---: |")
    print(f"| kubelet-winnet policy | {rounds} | {policy_ms:.0f} |")
    print(f"| reference: kubelet-winnet --help | {rounds} | {reference_ms:.0f} |")
    print()
    print(f"ratio policy / reference (median of rounds): {ratio:.2f}")
    print(f"targets (informational): policy < 1000 ms: {'met' if policy_ms < 1000 else 'MISSED'}; "
          f"<= 3 x reference: {'met' if ratio <= 3 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
