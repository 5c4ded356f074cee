"""Write the inputs of ``benchmarks/check.py`` (never committed; they go to a temp dir).

* ``DIR/tree/``: ``--files`` manifest files (default 10,000), YAML, in 100 subdirectories,
  each a Deployment, DaemonSet or Pod drawn from a fixed mix of Windows pods: plain,
  hostNetwork (host-network-ignored), HostProcess, mixed HostProcess (refused), GMSA, and
  some Linux-targeted ones that are skipped.
* ``DIR/list.json``: one ``kind: List`` with ``--pods`` Pods (default 100,000), laid out
  like ``kubectl get pods -o json`` (``items`` before ``kind``), the same mix.

Deterministic: the same arguments write the same bytes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

WINDOWS = {"kubernetes.io/os": "windows"}


def pod_spec(index: int) -> dict[str, Any]:
    """The index-th pod spec of the mix (one in ten needs no finding at all)."""
    variant = index % 10
    spec: dict[str, Any] = {
        "nodeSelector": dict(WINDOWS),
        "containers": [{
            "name": "app",
            "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
            "env": [{"name": "INDEX", "value": str(index)}],
        }],
    }
    if variant in (1, 2):
        spec["hostNetwork"] = True
    elif variant == 3:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {
            "hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    elif variant == 4:
        spec["hostNetwork"] = True
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True}}
        spec["initContainers"] = [{"name": "init", "image": "busybox", "securityContext": {
            "windowsOptions": {"hostProcess": False}}}]
    elif variant == 5:
        spec["securityContext"] = {"windowsOptions": {"gmsaCredentialSpecName": "webapp1"}}
    elif variant == 6:
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
        spec["hostNetwork"] = True
    return spec


def pod(index: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{index}", "namespace": f"ns-{index % 7}",
                         "labels": {"app": f"app-{index % 13}"}},
            "spec": pod_spec(index)}


def workload(index: int) -> dict[str, Any]:
    kind = ("Deployment", "DaemonSet", "Pod")[index % 3]
    if kind == "Pod":
        return pod(index)
    labels = {"app": f"app-{index}"}
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": f"w-{index}", "namespace": f"ns-{index % 7}"},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod_spec(index)}}}


def write_tree(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"d{index % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        config = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": f"cm-{index}"}, "data": {"k": "v"}}
        text = yaml.safe_dump_all([config, workload(index)], sort_keys=False)
        (folder / f"m{index:05d}.yaml").write_text(text, encoding="utf-8")


def write_list(path: Path, pods: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for index in range(pods):
            text = json.dumps(pod(index), indent=4)
            handle.write(("" if index == 0 else ",\n") + text)
        handle.write('\n    ],\n    "kind": "List",\n    "metadata": {"resourceVersion": ""}\n}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=100_000)
    args = parser.parse_args()
    write_tree(args.directory / "tree", args.files)
    write_list(args.directory / "list.json", args.pods)


if __name__ == "__main__":
    main()
