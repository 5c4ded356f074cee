"""How fast ``kubelet-winnet audit`` reads a cluster dump, and how much memory it holds.

Usage (after ``pip install -e .[test]``)::

    python benchmarks/audit.py            # 100,000 pods on 500 nodes
    python benchmarks/audit.py --quick    # what the test suite runs: same code, small dump

The dump is what ``kubectl get nodes,pods -A -o json`` prints (a ``List``: nodes, then
pods sorted by namespace, each pod with the metadata, status and defaulted fields the API
server returns), generated into a temporary directory and never committed. Each row runs
the real console entry point in a child process and measures wall time and peak RSS
(``wait4``). The reference row, measured in the same run on the same file, only parses it:
``json.load`` and a loop over the items. The ratio is audit time / reference time: in
``--pairs`` rounds of every output and the reference (the order rotating), the median
of the ratios within a round, since ``json.load`` of a large dump swings by 2x on a
shared machine.

Budgets (``benchmarks/budgets.py``; they never change the exit code): ``audit -f -o
json`` and ``-o html`` at most 2x the CPU time of ``json.load`` of the dump, in under
50 MB. The exit code is non-zero only when a run fails (an exit status other than 0 or
1, or output that does not parse).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))
from budgets import CPU_RATIO, RSS_MB, at_most  # a sibling script
from peak import CONSOLE_SCRIPT, PRELUDE, peak_mb  # a sibling script

OUTPUTS = ("json", "csv", "text", "html")

_REFERENCE = (
    "import json, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    items = json.load(f)['items']\n"
    "print(sum(1 for i in items if i.get('kind') == 'Pod'))\n"
)

# (kubeletVersion, containerRuntimeVersion) of the Windows node pools.
_WINDOWS_POOLS = (
    ("v1.30.4-eks-a737599", "containerd://1.7.20"),
    ("v1.32.2", "containerd://1.7.27"),
    ("v1.33.1-gke.1000", "containerd://2.0.4"),
    ("v1.35.0", "containerd://2.2.0"),
    ("v1.38.1", "containerd://2.4.0"),
)


def node(index: int) -> dict[str, Any]:
    windows = index % 5 < 2  # 40% of the nodes
    kubelet, runtime = (
        _WINDOWS_POOLS[index % len(_WINDOWS_POOLS)] if windows
        else ("v1.33.1", "containerd://2.0.4")
    )
    os_name = "windows" if windows else "linux"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": f"node-{index:04d}",
            "labels": {"kubernetes.io/os": os_name, "kubernetes.io/arch": "amd64",
                       "node.kubernetes.io/instance-type": "m5.2xlarge",
                       "topology.kubernetes.io/zone": f"zone-{index % 3}"},
            "resourceVersion": str(1000 + index), "uid": f"00000000-0000-0000-0000-{index:012d}",
        },
        "spec": {"podCIDR": f"10.{index // 250}.{index % 250}.0/24"},
        "status": {
            "nodeInfo": {"operatingSystem": os_name, "architecture": "amd64",
                         "kubeletVersion": kubelet, "kubeProxyVersion": kubelet,
                         "containerRuntimeVersion": runtime,
                         "osImage": "Windows Server 2022 Datacenter" if windows else "Linux"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def pod(index: int, nodes: int) -> dict[str, Any]:
    on = index % nodes
    windows = on % 5 < 2
    kind = index % 10  # mix: plain, hostNetwork, HostProcess, refused, unscheduled
    spec: dict[str, Any] = {
        "containers": [{
            "name": "app", "image": "mcr.microsoft.com/windows/servercore/iis:ltsc2022",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
        }],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName":
        "default-scheduler", "securityContext": {}, "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "nodeSelector": {"kubernetes.io/os": "windows" if windows else "linux"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
    }
    if kind != 9:
        spec["nodeName"] = f"node-{on:04d}"
    if kind in (1, 2, 3):
        spec["hostNetwork"] = True
        spec["containers"][0]["ports"][0]["hostPort"] = 80
    if kind == 3:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                      "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    if kind == 4:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}  # no hostNetwork
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"web-{index:06d}", "namespace": f"team-{index * 40 // 100_000:02d}",
            "labels": {"app": "web", "pod-template-hash": "5d4f8b7c9"},
            "annotations": {"kubernetes.io/psp": "eks.privileged"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-5d4f8b7c9", "uid": "1111",
                                 "controller": True, "blockOwnerDeletion": True}],
            "resourceVersion": str(100_000 + index), "uid": f"pod-{index:012d}",
            "creationTimestamp": "2026-11-30T10:00:00Z",
        },
        "spec": spec,
        "status": {
            "phase": "Running" if kind != 9 else "Pending", "qosClass": "Burstable",
            "hostIP": "10.0.0.1", "podIP": "10.1.0.1", "startTime": "2026-11-30T10:00:01Z",
            "conditions": [{"type": "Ready", "status": "True",
                            "lastTransitionTime": "2026-11-30T10:00:05Z"}],
            "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0,
                                   "image": "mcr.microsoft.com/windows/servercore/iis",
                                   "containerID": f"containerd://{index:064x}"}],
        },
    }


def write_dump(out: TextIO, pods: int, nodes: int) -> None:
    """Item by item, as kubectl prints it: never the whole list in memory."""
    out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
    first = True
    items = (node(i) for i in range(nodes))
    for item in items:
        out.write(("" if first else ",\n") + json.dumps(item, indent=4))
        first = False
    for index in range(pods):
        out.write(",\n" + json.dumps(pod(index, nodes), indent=4))
    out.write('\n    ],\n    "kind": "List",\n    "metadata": {"resourceVersion": ""}\n}\n')


# A pod line of `audit -o json` starts with {"namespace"; a CSV row with its namespace,
# which the generator names team-NN, quoted (audit quotes every CSV cell); a text table
# row with the pod's name, web-NNNNNN; a pod the HTML page lists, its table row.
_RECORDS = (b'{"namespace"', b'"team-', b"web-", b"<tr><th scope=row>")


def measure(argv: list[str]) -> tuple[float, float, float, int, bytes, int, int]:
    """CPU seconds (user + system: one core, whatever else the machine runs), wall
    seconds, peak RSS in MB, records on stdout (lines of CSV after the header, or pod
    lines of ``audit -o json``), its first bytes, the exit status of one child and the
    bytes it wrote. The
    output stays in a file: reading it here would grow this process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        head = out.read(4096)
        out.seek(0)
        lines = sum(1 for line in out if line.startswith(_RECORDS))
        size = out.tell()
        err.seek(0)
        peak = peak_mb(err.read(), usage)
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, wall, peak, lines, head, os.waitstatus_to_exitcode(status), size


def _one(name: str, dump: Path, pods: int) -> dict[str, Any]:
    """One run of ``audit -o NAME`` (or of the reference, ``name`` "reference")."""
    if name == "reference":
        seconds, wall, peak, _, head, status, _ = measure(
            [sys.executable, "-c", PRELUDE + _REFERENCE, str(dump)])
        if status != 0 or int(head) != pods:
            raise SystemExit("reference run failed")
        return {"row": "reference: json.load", "seconds": seconds, "wall": wall,
                "peakMB": peak, "windowsPods": None}
    argv = [sys.executable, "-c", CONSOLE_SCRIPT, "audit", "-f", str(dump), "-o", name]
    seconds, wall, peak, lines, _, status, size = measure(argv)
    if status not in (0, 1):
        raise SystemExit(f"audit -o {name} exited {status}")
    return {"row": f"audit -o {name}", "seconds": seconds, "wall": wall, "peakMB": peak,
            "windowsPods": lines, "outputMB": size / 1e6}


def run(pods: int, nodes: int, pairs: int = 1) -> list[dict[str, Any]]:
    """Each output and the reference in ``pairs`` rounds; each row is the run of median
    CPU time, with ``ratio`` the median of its CPU ratios to the reference within a round
    (and the largest peak RSS of its runs)."""
    with tempfile.TemporaryDirectory(prefix="winnet-audit-bench-") as tmp:
        dump = Path(tmp) / "cluster.json"
        with dump.open("w", encoding="utf-8") as out:
            write_dump(out, pods, nodes)
        size_mb = dump.stat().st_size / 1e6
        names = [*OUTPUTS, "reference"]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for index in range(pairs):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                runs[name].append(_one(name, dump, pods))
        rows = []
        for name in names:
            row = dict(sorted(runs[name], key=lambda r: r["seconds"])[len(runs[name]) // 2])
            row["ratio"] = statistics.median(
                ours["seconds"] / theirs["seconds"]
                for ours, theirs in zip(runs[name], runs["reference"], strict=True))
            row["peakMB"] = max(r["peakMB"] for r in runs[name])
            row["pods"] = pods
            row["podsPerSecond"] = pods / row["seconds"]
            row["dumpMB"] = size_mb
            row["pairs"] = pairs
            rows.append(row)
        return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| row | pods (Windows; html: listed) | CPU s | wall s | pods/CPU s | peak RSS MB | "
        "× json.load CPU, paired | output MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        windows = f" ({row['windowsPods']})" if row["windowsPods"] is not None else ""
        lines.append(
            f"| {row['row']} | {row['pods']}{windows} | {row['seconds']:.2f} | {row['wall']:.2f} | "
            f"{row['podsPerSecond']:,.0f} | {row['peakMB']:.0f} | {row['ratio']:.2f} | "
            + (f"{row['outputMB']:.1f} |" if "outputMB" in row else "- |")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="2,000 pods on 20 nodes")
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pairs", type=int, default=None,
                        help="rounds of every output and json.load (default 3, quick 1)")
    parser.add_argument("--json", action="store_true", help="rows as JSON")
    args = parser.parse_args(argv)
    pods, nodes = (2_000, 20) if args.quick else (args.pods, args.nodes)
    pairs = args.pairs if args.pairs is not None else (1 if args.quick else 3)
    if pairs < 1:
        parser.error("--pairs must be at least 1")
    rows = run(pods, nodes, pairs)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"dump: {pods:,} pods on {nodes} nodes, {rows[0]['dumpMB']:.0f} MB, "
          f"{pairs} rounds\n")
    print(table(rows))
    print()
    for row in rows:
        if row["row"] in ("audit -o json", "audit -o html"):
            print(at_most(f"{row['row']}, CPU against json.load of the dump", row["ratio"],
                          CPU_RATIO))
            print(at_most(f"{row['row']}, peak RSS", row["peakMB"], RSS_MB, " MB"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
