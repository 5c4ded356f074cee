"""``kubelet-winnet run --dry-run`` over tests/data/manifests, the corpus (marked
``corpus``) and hand-written manifests, flag and input errors, and ``run`` against
unreachable runtimes. The real run against containerd is in tests/cri/test_containerd.py.

Expected values come from the manifests (names, container order, hostNetwork) and the
kubelet rules (init containers first; hostNetwork: no hostname, NODE), not from running
the library.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cli import main
from tests.strategies import (
    CORPUS,
    FIXTURES,
    WINDOWS_POD,
    WORKLOAD_KINDS,
    fixture_files,
    run_main,
    spec_of,
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _pod_docs(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]
    return [
        d for d in [i for d in docs for i in (d["items"] if d.get("kind") == "List" else [d])]
        if d.get("kind") == "Pod" or d.get("kind") in WORKLOAD_KINDS
    ]


def _pinned_to_linux(doc: dict[str, Any]) -> bool:
    spec = spec_of(doc)
    selector = spec.get("nodeSelector") or {}
    return selector.get("kubernetes.io/os") == "linux" or (spec.get("os") or {}).get(
        "name"
    ) == "linux"


def _container_names(doc: dict[str, Any]) -> list[str]:
    spec = spec_of(doc)
    return [c["name"] for key in ("initContainers", "containers") for c in spec.get(key) or []]


def _write(path: Path, *docs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(docs)), encoding="utf-8")
    return path


def _pod(name: str, *, host_network: bool = False, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "initContainers": [{"name": "init", "image": "img:1"}],
        "containers": [{"name": "app", "image": "img:1"}, {"name": "side", "image": "img:1"}],
        **extra,
    }
    if host_network:
        spec["hostNetwork"] = True
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns1", "uid": f"uid-{name}"}, "spec": spec}


# --- --dry-run over the project's manifests and the corpus ------------------------------------


def test_dry_run_over_the_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    # 28 pods not pinned to Linux; four the kubelet refuses (hostprocess-refused.yaml) and
    # one container whose ConfigMap is not in its file (csi-node-csiproxy.yaml's nfs).
    dry_run_over(capsys, fixture_files(), pods=28, refused=4, not_created=1)


@pytest.mark.corpus
def test_dry_run_over_the_whole_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    # Five pods the kubelet refuses (test_corpus.REFUSED) and two containers whose
    # ConfigMap is not in their file.
    dry_run_over(capsys, sorted(CORPUS.glob("*.yaml")), pods=60, refused=5, not_created=2)


def dry_run_over(capsys: pytest.CaptureFixture[str], files: list[Path], *, pods: int,
                 refused: int, not_created: int) -> None:
    code, out, err = run(capsys, "--dry-run", *map(str, files))
    records = json.loads(out)
    # A Linux-pinned pod never reaches a Windows kubelet: run skips it, as translate does.
    docs = [doc for path in files for doc in _pod_docs(path) if not _pinned_to_linux(doc)]
    assert len(records) == len(docs) == pods
    # Refused pods and containers whose ConfigMap is missing: exit 1, everything else built.
    assert code == 1, err
    assert sum(
        r.get("error", "").startswith("Failed to create pod sandbox") for r in records
    ) == refused
    assert sum("CreateContainerConfigError" in r.get("error", "") for r in records) == not_created
    assert not any("invalid" in r for r in records)
    for record, doc in zip(records, docs, strict=True):
        if "runPodSandbox" not in record:
            continue
        request = json_format.ParseDict(record["runPodSandbox"], api_pb2.RunPodSandboxRequest())
        metadata = doc.get("metadata") or {}
        assert request.config.metadata.name == metadata.get("name")
        spec = spec_of(doc)
        if spec.get("hostNetwork") is True:
            assert request.config.hostname == ""
            assert request.config.linux.security_context.namespace_options.network == (
                api_pb2.NODE
            )
        creates = [
            json_format.ParseDict(_as_newest_cri_api(c), api_pb2.CreateContainerRequest())
            for c in record["createContainer"]
        ]
        names = [c.config.metadata.name for c in creates]
        if "error" not in record:
            assert names == _container_names(doc)  # init containers first, spec order
        for create in creates:
            assert create.pod_sandbox_id == ""
            assert create.sandbox_config == request.config


def _as_newest_cri_api(create: dict[str, Any]) -> dict[str, Any]:
    """A default (1.32) kubelet's CreateContainerRequest JSON as the newest cri-api spells
    it: ``KeyValue.value`` was a string (text in JSON), now bytes (base64), and the
    Signal names gained ``SIGNAL_`` (cri-api d3d9c71, 044b7de)."""
    config = create["config"]
    for pair in config.get("envs", []):
        if "value" in pair:  # an empty value is not written, in either spelling
            pair["value"] = base64.b64encode(pair["value"].encode()).decode()
    if "stopSignal" in config:
        config["stopSignal"] = "SIGNAL_" + config["stopSignal"]
    return create


def test_dry_run_of_accepted_pods_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "run-as-username.yaml"
    code, out, _ = run(capsys, "--dry-run", str(path))
    assert code == 0
    assert all("error" not in r for r in json.loads(out))


def test_dry_run_of_a_hand_written_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod("web", host_network=True),
                  {"kind": "ConfigMap", "metadata": {"name": "other"}})
    code, out, _ = run(capsys, "--dry-run", "--kubelet-version", "1.33", str(path))
    assert code == 0
    [record] = json.loads(out)
    assert record["source"] == f"{path}#1"
    request = json_format.ParseDict(record["runPodSandbox"], api_pb2.RunPodSandboxRequest())
    assert request.config.metadata.uid == "uid-web"
    # 1.33 never sets the Windows namespace option (kubelet-rules.md timeline).
    assert not request.config.windows.security_context.HasField("namespace_options")
    assert [c["config"]["metadata"]["name"] for c in record["createContainer"]] == [
        "init", "app", "side"
    ]


def test_feature_gate_reaches_the_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod("web", host_network=True))
    _, on, _ = run(capsys, "--dry-run", "--kubelet-version", "1.32", str(path))
    _, off, _ = run(capsys, "--dry-run", "--kubelet-version", "1.32",
                    "--feature-gates", "WindowsHostNetwork=false", str(path))
    windows = [json.loads(o)[0]["runPodSandbox"]["config"]["windows"]["securityContext"]
               for o in (on, off)]
    assert windows[0].get("namespaceOptions") == {"network": "NODE"}
    assert "namespaceOptions" not in windows[1]


def test_container_stop_signals_gate_reaches_create_container(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--feature-gates ContainerStopSignals=true (alpha from 1.33, KEP-4960) makes the
    kubelet send lifecycle.stopSignal; accepted as a modelled gate (no note), and refused
    with the kubelet's text where the release has no such gate."""
    pod = _pod("web", os={"name": "windows"})
    pod["spec"]["containers"][0]["lifecycle"] = {"stopSignal": "SIGTERM"}
    path = _write(tmp_path / "p.yaml", pod)
    code, on, err = run(capsys, "--dry-run", "--kubelet-version", "1.33",
                        "--feature-gates", "ContainerStopSignals=true", str(path))
    assert code == 0, err
    assert "not modelled" not in err
    configs = [c["config"] for c in json.loads(on)[0]["createContainer"]]
    assert [c.get("stopSignal") for c in configs] == [None, "SIGTERM", None]
    _, off, _ = run(capsys, "--dry-run", "--kubelet-version", "1.33", str(path))
    assert all("stopSignal" not in c["config"] for c in json.loads(off)[0]["createContainer"])
    code, _, err = run(capsys, "--dry-run", "--kubelet-version", "1.32",
                       "--feature-gates", "ContainerStopSignals=true", str(path))
    assert code == 2
    assert "unrecognized feature gate: ContainerStopSignals" in err


def test_config_maps_and_secrets_of_the_same_file_feed_env(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pod = _pod("web")
    pod["spec"]["containers"][0]["env"] = [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}},
        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "b"}}},
        {"name": "C", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "c"}}},
    ]
    path = _write(
        tmp_path / "p.yaml", pod,
        {"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns1"}, "data": {"a": "1"}},
        {"kind": "Secret", "metadata": {"name": "sec", "namespace": "ns1"},
         "data": {"b": base64.b64encode("zwei ü".encode()).decode()}, "stringData": {"c": "3"}},
    )
    code, out, err = run(capsys, "--dry-run", str(path))
    assert code == 0, err
    app = json.loads(out)[0]["createContainer"][1]["config"]
    assert app["envs"] == [{"key": "A", "value": "1"}, {"key": "B", "value": "zwei ü"},
                           {"key": "C", "value": "3"}]


def test_config_map_of_another_namespace_is_not_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pod = _pod("web")
    pod["spec"]["containers"][0]["env"] = [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}}
    ]
    path = _write(tmp_path / "p.yaml", pod,
                  {"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}})
    code, out, err = run(capsys, "--dry-run", str(path))
    assert code == 1
    error = 'container app: CreateContainerConfigError: configmap "cm" not found'
    assert json.loads(out)[0]["error"] == error
    # Not refused: the kubelet keeps the pod waiting and retries (CreateContainerConfigError
    # is a waiting reason: kuberuntime_container.go, startContainer).
    (line,) = [t for t in err.splitlines() if "/web: " in t]
    assert line.endswith(f"/web: the kubelet does not start it: {error} (the pod waits "
                         "in CreateContainerConfigError and the kubelet retries)")
    assert "refuses" not in err


def test_node_config_applies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text("nodeName: n7\npodLogsDir: D:\\logs\nclusterDns: [10.0.0.10]\n",
                    encoding="utf-16")
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, out, err = run(capsys, "--dry-run", "--node-config", str(node), str(path))
    assert code == 0, err
    config = json.loads(out)[0]["runPodSandbox"]["config"]
    assert config["logDirectory"] == "D:\\logs\\ns1_web_uid-web"
    assert config["dnsConfig"]["servers"] == ["10.0.0.10"]


def test_stdin_is_read_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    text = yaml.safe_dump_all([_pod("a"), _pod("b")])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(capsys, "--dry-run", "-")
    assert code == 0
    assert [r["source"] for r in json.loads(out)] == ["<stdin>#1", "<stdin>#2"]


# --- usage and input errors: exit 2 ------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["p.yaml"], "--runtime-endpoint is required unless --dry-run"),
        (["--dry-run", "--cleanup", "p.yaml"], "--cleanup needs a runtime"),
        (["--dry-run", "--kubelet-version", "1.25", "p.yaml"], "kubelet version"),
        (["--dry-run", "--feature-gates", "WindowsHostNetwork=maybe", "p.yaml"],
         'strconv.ParseBool: parsing "maybe": invalid syntax'),
        (["--dry-run", "missing.yaml"], "missing.yaml"),
        (["--runtime-endpoint", "tcp://127.0.0.1:1", "p.yaml"], "unsupported scheme 'tcp'"),
        (["--runtime-endpoint", "unix://relative.sock", "p.yaml"], "must be absolute"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    argv: list[str], message: str,
) -> None:
    _write(tmp_path / "p.yaml", _pod("web"))
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.startswith("kubelet-winnet: ")
    assert "Traceback" not in err


_ALIAS_BOMB = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n".encode()
    for i in range(8)
)


@pytest.mark.parametrize(
    ("content", "flags", "message"),
    [
        (b"nodeName: [1, 2\n", [], "node.yaml:2: document 1: not valid YAML"),
        (b"- a\n- b\n", [], "document is an array, not an object"),
        (b"nodeName: a\n---\nnodeName: b\n", [], "expected one mapping of NodeContext "
         "fields, found 2 objects"),
        (b"nodeName: a\nnodeName: b\n", [], "duplicate key"),
        (_ALIAS_BOMB, [], "--max-alias-nodes"),
        (b"noSuchField: 1\n", [], "node.noSuchField"),
        (b"clusterDns: [not-an-ip]\n", [], "cluster_dns[0]: expected an IP address"),
        (b"nodeName: 5\n", [], "node_name: expected a string, got int"),
        (b"\xff\xfe\x00\xd8", [], "not valid UTF-16"),
        (b"nodeName: \xff\n", [], "not valid UTF-8 (byte 0xff)"),
        (b"nodeName: " + b"a" * 2000 + b"\n", ["--max-bytes", "1000"], "--max-bytes"),
        (b"", [], "node.yaml"),
    ],
)
def test_bad_node_config_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, flags: list[str],
    message: str,
) -> None:
    node = tmp_path / "node.yaml"
    node.write_bytes(content)
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, out, err = run(capsys, "--dry-run", *flags, "--node-config", str(node), str(path))
    assert code == 2
    assert out == ""  # nothing is built from a node that cannot be read
    (line,) = err.splitlines()
    assert line.startswith("kubelet-winnet: error: --node-config ")
    assert message in line
    assert len(line) < 1000


def test_node_config_in_utf16_with_bom(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """What Windows PowerShell 5's `>` writes."""
    node = tmp_path / "node.yaml"
    node.write_bytes("nodeName: win-1\nclusterDns: [10.0.0.10]\n".encode("utf-16"))
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, out, _ = run(capsys, "--dry-run", "--node-config", str(node), str(path))
    assert code == 0
    [record] = json.loads(out)
    assert record["runPodSandbox"]["config"]["dnsConfig"]["servers"] == ["10.0.0.10"]


def test_bad_secret_data_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(tmp_path / "p.yaml", _pod("web"),
                  {"kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}})
    code, _, err = run(capsys, "--dry-run", str(path))
    assert code == 2
    assert (f'{path}#2: data["k"]: expected base64 text (a Secret\'s data as the API holds '
            "it), got other text (11 characters, not shown)") in err
    assert "not base64!" not in err  # a Secret's text is never echoed


def _binary_secret_pod(tmp_path: Path) -> Path:
    pod = _pod("web", os={"name": "windows"})
    pod["spec"]["containers"][0]["env"] = [
        {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    pod["spec"]["containers"][0]["lifecycle"] = {"stopSignal": "SIGTERM"}
    # //4= is base64 of the bytes ff fe, which are not UTF-8.
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns1"},
              "data": {"k": "//4="}}
    return _write(tmp_path / "p.yaml", pod, secret)


@pytest.mark.parametrize(("version", "value", "signal"), [
    # Go's encoding/json writes each byte that is not UTF-8 as U+FFFD (gogo types, 1.33).
    ("1.33", "\ufffd\ufffd", "SIGTERM"),
    ("1.34.9", "//4=", "SIGTERM"),  # bytes value = 2: protojson writes base64
    ("1.36.2", "//4=", "SIGTERM"),
    ("1.37.0", "//4=", "SIGNAL_SIGTERM"),  # cri-api 044b7de renamed the enum's values
])
def test_dry_run_writes_each_releases_cri_api_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str, value: str, signal: str,
) -> None:
    """The JSON of a Secret's bytes and of stop_signal is that of the release's cri-api."""
    path = _binary_secret_pod(tmp_path)
    code, out, err = run(capsys, "--dry-run", "--kubelet-version", version,
                         "--feature-gates", "ContainerStopSignals=true", str(path))
    assert code == 0, err
    app = json.loads(out)[0]["createContainer"][1]["config"]
    assert app["envs"] == [{"key": "KEY", "value": value}]
    assert app["stopSignal"] == signal


@pytest.mark.parametrize("version", ["1.34.8", "1.35.5", "1.36.1"])
def test_dry_run_refuses_a_secrets_bytes_where_the_release_cannot_send_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str,
) -> None:
    path = _binary_secret_pod(tmp_path)
    code, out, err = run(capsys, "--dry-run", "--kubelet-version", version,
                         "--feature-gates", "ContainerStopSignals=true", str(path))
    assert code == 2
    message = json.loads(out)[0]["invalid"]
    assert message.startswith(
        f'spec.containers[0].env[0].value: kubelet {version} cannot send variable "KEY"'
    )
    assert "string field contains invalid UTF-8" in message
    lines = [line for line in err.splitlines() if "spec.containers[0].env[0].value" in line]
    assert len(lines) == 1 and "//4=" not in err and "\\xff" not in err


def test_malformed_pod_is_reported_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pod = _pod("web")
    pod["spec"]["hostNetwork"] = "true"
    path = _write(tmp_path / "p.yaml", pod, _pod("ok"))
    code, out, _ = run(capsys, "--dry-run", str(path))
    assert code == 2
    records = json.loads(out)
    assert "spec.hostNetwork" in records[0]["invalid"]
    assert "runPodSandbox" in records[1]


# --- an unreachable runtime ---------------------------------------------------------------------


def test_unreachable_runtime_is_one_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, out, err = run(capsys, "--runtime-endpoint", f"unix://{tmp_path}/none.sock", str(path))
    assert code == 2
    assert "UNAVAILABLE" not in out
    assert err.startswith(f"kubelet-winnet: error: cannot reach the runtime at unix://{tmp_path}")


def test_refused_pod_is_not_sent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pod = _pod("web", securityContext={"windowsOptions": {"hostProcess": True}})
    path = _write(tmp_path / "p.yaml", pod)
    # No server behind the socket: a refused pod must not even try to connect.
    code, out, _ = run(capsys, "--runtime-endpoint", f"unix://{tmp_path}/none.sock", str(path))
    assert code == 1
    assert "error: Failed to create pod sandbox: hostNetwork is required if Pod contains " \
        "HostProcess containers" in out
    assert "UNAVAILABLE" not in out


def test_closed_pipe_is_not_a_traceback() -> None:
    """`kubelet-winnet run --dry-run tests/data/manifests/*.yaml | head -c 10`."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "run", "--dry-run",
         # Three times over: about 300 KB, well past any pipe buffer.
         *map(str, fixture_files() * 3)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(4) == b"[\n{\n"
    process.stdout.close()
    err = process.stderr.read()
    process.stderr.close()
    assert process.wait(60) == 141  # 128 + SIGPIPE: stopped quietly, not a success
    assert b"Traceback" not in err


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"nodeName: win1\nbogus: 1\n", ":2: node.bogus: expected one of allocatable_cpu, "),
        (b"nodeName: win1\nclusterDomain: c\nresolverSearches: x\n",
         ":3: resolver_searches: expected a list of strings, got str"),
        (b"nodeName: win1\nnode_ips:\n  - 10.0.0.1\n  - nope\n",
         ":4: node_ips[1]: expected an IP address, got str 'nope'"),
    ],
)
def test_node_config_errors_name_the_line_of_the_key_in_yaml_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, where: str,
) -> None:
    node = tmp_path / "node.yaml"
    node.write_bytes(content)
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, _, err = run(capsys, "--dry-run", "--node-config", str(node), str(path))
    assert code == 2
    assert err.startswith(f"kubelet-winnet: error: --node-config {node}{where}")
    assert "tuple" not in err  # a YAML list is a list


# --- run: no lone "# Pod ..." header before an error ----------------------------------


def test_run_without_a_runtime_prints_the_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(WINDOWS_POD + "---\n" + WINDOWS_POD.replace("name: web", "name: api"),
                        encoding="utf-8")
    socket = tmp_path / "containerd.sock"
    status, out, err = run_main(capsys, "run", "--runtime-endpoint", f"unix://{socket}",
                           str(manifest))
    assert status == 2
    assert out == ""  # no "# Pod/web (...)" header with nothing under it
    assert err == (f"kubelet-winnet: error: cannot reach the runtime at unix://{socket}: "
                   f"{socket} does not exist (is the runtime running?); 2 pods not run\n")


def test_run_of_a_pod_that_cannot_be_read_prints_no_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(WINDOWS_POD.replace("spec:\n", "spec:\n  hostNetwork: 'true'\n"),
                        encoding="utf-8")
    status, out, err = run_main(capsys, "run", "--runtime-endpoint",
                           f"unix://{tmp_path}/none.sock", str(manifest))
    assert status == 2
    assert out == ""
    assert err == (f"kubelet-winnet: error: {manifest}:6: document 1: spec.hostNetwork: "
                   "expected a boolean, got string \"true\"\n")


# --- run --dry-run marks what stands in for the API server's and controllers' fields ---


def _workload(kind: str, name: str, uid: str | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": name}},
        "spec": {"nodeSelector": {"kubernetes.io/os": "windows"}, "restartPolicy": "Never",
                 "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore"}]},
    }
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": kind,
                                "metadata": {"name": name, "namespace": "prod"}}
    if kind == "Pod":
        manifest.update(template)
        manifest["metadata"] = {**template["metadata"], **manifest["metadata"]}
    else:
        where = WORKLOAD_KINDS[kind]
        holder = manifest
        for key in where[:-1]:
            holder = holder.setdefault(key, {})
        holder[where[-1]] = template
    if kind == "StatefulSet":
        manifest["spec"]["serviceName"] = "db-headless"
    if uid is not None:
        manifest["metadata"]["uid"] = uid
    return manifest


@pytest.mark.parametrize("kind", ["Pod", *WORKLOAD_KINDS])
def test_dry_run_says_which_metadata_is_a_stand_in(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_workload(kind, "db")), encoding="utf-8")
    status, out, _ = run_main(capsys, "run", "--dry-run", str(path))
    assert status == 0
    (record,) = json.loads(out)
    metadata = record["runPodSandbox"]["config"]["metadata"]
    assert metadata.get("uid", "") == ""  # proto3 JSON leaves an empty string out
    stand_ins = record["standIns"]
    assert stand_ins["uid"].startswith("empty: the manifest has none (the API server "
                                       "assigns it when the pod is created)")
    if kind == "Pod":
        assert set(stand_ins) == {"uid"}
    elif kind == "StatefulSet":
        assert stand_ins["name"] == (
            "the StatefulSet's name 'db' stands in for its pods' names db-0, db-1, ...; the "
            "controller also sets each pod's hostname to that name, its subdomain to "
            "'db-headless' and adds the labels statefulset.kubernetes.io/pod-name and "
            "apps.kubernetes.io/pod-index, which these requests do not have"
        )
        assert metadata["name"] == "db"
    elif kind == "PodTemplate":
        assert stand_ins["name"] == "the PodTemplate's name 'db' stands in for a pod made from it"
    else:
        assert stand_ins["name"] == (
            f"the {kind}'s name 'db' stands in for the pod's, which its controller "
            "generates (db-...) along with the labels it adds"
        )


def test_dry_run_of_a_pod_with_a_uid_has_no_stand_ins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    uid = "6b4d0f9e-1c7a-4e55-9a39-2f4b8f8c1d21"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_workload("Pod", "web", uid)), encoding="utf-8")
    status, out, _ = run_main(capsys, "run", "--dry-run", str(path))
    assert status == 0
    (record,) = json.loads(out)
    assert record["runPodSandbox"]["config"]["metadata"]["uid"] == uid
    assert "standIns" not in record


# --- run --dry-run names what it assumed ---------------------------------------------------

# NodeContext's defaults (a typical kubeadm-style Windows node, its resolver Azure's
# wire server 168.63.129.16), each with the --node-config key that sets it.
_ASSUMED = (
    "the node's DNS server 168.63.129.16 (resolverServers), cluster DNS 10.96.0.10 "
    "(clusterDNS), cluster domain cluster.local (clusterDomain), node name win-node-1 "
    "(nodeName), hostname win-node-1 (hostname), node IP 10.240.0.4 (nodeIPs), pod log "
    "directory C:\\var\\log\\pods (podLogsDir), kubelet root directory C:\\var\\lib\\kubelet "
    "(kubeletRoot), logical CPUs 4 (processorCount), allocatable CPU 4 (allocatableCpu), "
    "allocatable memory 16Gi (allocatableMemory), allocatable ephemeral storage 128Gi "
    "(allocatableEphemeralStorage)"
)


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("kubelet-winnet: note: ")]


def test_dry_run_names_the_node_it_assumed_and_the_empty_uid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    without = _pod("a")
    del without["metadata"]["uid"]
    path = _write(tmp_path / "p.yaml", without, _pod("b"), without | {
        "metadata": {"name": "c", "namespace": "ns1"}})
    code, out, err = run(capsys, "--dry-run", str(path))
    assert code == 0, err
    assert _notes(err) == [
        "kubelet-winnet: note: run --dry-run assumed a node (set each with --node-config "
        f"FILE, key in parentheses): {_ASSUMED}; gave 2 pods without metadata.uid an empty "
        "pod uid (set metadata.uid in the manifest to give one)"
    ]
    # What the note names is what the requests carry.
    config = json.loads(out)[0]["runPodSandbox"]["config"]
    assert config["dnsConfig"]["servers"] == ["10.96.0.10"]  # ClusterFirst: cluster DNS
    assert config["logDirectory"] == "C:\\var\\log\\pods\\ns1_a_"  # the empty uid
    code, _, err = run(capsys, "--dry-run", "--quiet", str(path))
    assert (code, err) == (0, "")


def test_dry_run_default_dns_policy_pod_gets_the_assumed_dns_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod("a", dnsPolicy="Default"))
    code, out, err = run(capsys, "--dry-run", str(path))
    assert code == 0, err
    config = json.loads(out)[0]["runPodSandbox"]["config"]
    assert config["dnsConfig"]["servers"] == ["168.63.129.16"]
    (note,) = _notes(err)
    assert "the node's DNS server 168.63.129.16 (resolverServers)" in note
    assert "uid" not in note  # the pod has one


def test_dry_run_names_only_what_the_node_config_leaves_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from kubelet_winnet._kubelet.node import NodeContext

    node = tmp_path / "node.yaml"
    # Every key the note names, as the note spells it: each must set its field.
    keys = {
        "resolverServers": ["1.1.1.1"], "clusterDNS": ["10.0.0.10"], "clusterDomain": "c.l",
        "nodeName": "n7", "hostname": "h7", "nodeIPs": ["10.9.9.9"], "podLogsDir": "D:\\l",
        "kubeletRoot": "D:\\k", "processorCount": 8, "allocatableCpu": "8",
        "allocatableMemory": "1Gi", "allocatableEphemeralStorage": "20Gi",
    }
    assert all(getattr(NodeContext.from_mapping(keys), f) != getattr(NodeContext(), f)
               for f in NodeContext.__dataclass_fields__
               if f not in ("resolver_searches", "resolver_options", "resolv_conf_set",
                            "runtime_handlers"))
    node.write_text(yaml.safe_dump(keys), encoding="utf-8")
    path = _write(tmp_path / "p.yaml", _pod("web"))
    code, _, err = run(capsys, "--dry-run", "--node-config", str(node), str(path))
    assert (code, _notes(err)) == (0, [])  # everything given: nothing assumed
    node.write_text("nodeName: n7\nclusterDns: [10.0.0.10]\n", encoding="utf-8")
    code, _, err = run(capsys, "--dry-run", "--node-config", str(node), str(path))
    (note,) = _notes(err)
    assert note.startswith(f"kubelet-winnet: note: run --dry-run assumed what --node-config "
                           f"{node} does not set (key in parentheses): the node's DNS server "
                           "168.63.129.16 (resolverServers), cluster domain cluster.local "
                           "(clusterDomain), hostname win-node-1 (hostname), ")
    assert "clusterDNS" not in note and "nodeName" not in note


def test_dry_run_of_refused_pods_only_assumes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    refused = _pod("hp", containers=[{"name": "c", "image": "i", "securityContext": {
        "windowsOptions": {"hostProcess": True}}}])
    path = _write(tmp_path / "p.yaml", refused)
    code, _, err = run(capsys, "--dry-run", str(path))
    assert code == 1
    assert _notes(err) == []  # no request was built


def test_dry_run_of_a_value_a_byte_wise_kubelet_cannot_send(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Kubelet 1.34.0 expands "$é" to bytes that are not UTF-8 and cannot marshal them
    (kubernetes#136323); the pod is refused like any invalid one (exit 2, one error line
    naming the field), and the next pod is still built."""
    bad = _pod("web")
    bad["spec"]["containers"][0]["env"] = [{"name": "GREETING", "value": "$é"}]
    path = _write(tmp_path / "p.yaml", bad, _pod("ok"))
    code, out, err = run(capsys, "--dry-run", "--kubelet-version", "1.34.0", str(path))
    assert code == 2
    records = json.loads(out)
    field = "spec.containers[0].env[0].value"
    assert records[0]["invalid"].startswith(
        f'{field}: kubelet 1.34.0 expands variable "GREETING"'
    )
    assert "runPodSandbox" in records[1]
    lines = [line for line in err.splitlines() if field in line]
    assert len(lines) == 1 and "(bytes 24 c3 83 a9)" in lines[0]
    code, out, _ = run(capsys, "--dry-run", "--kubelet-version", "1.34.4", str(path))
    assert code == 0
    configs = [c["config"] for c in json.loads(out)[0]["createContainer"]]
    app = next(c for c in configs if c["metadata"]["name"] == "app")
    assert app["envs"] == [{"key": "GREETING", "value": "$é"}]  # rune-wise: as written


def test_dry_run_writes_map_entries_in_key_order_in_every_process() -> None:
    """Labels and annotations are proto maps, which upb iterates in string-hash order: the
    dry run writes them by key, as Go's protojson does, so two runs (two hash seeds) print
    the same bytes."""
    import os
    import subprocess
    import sys

    from tests.strategies import REPO_ROOT

    example = str(REPO_ROOT / "examples" / "windows-pods.yaml")
    outputs = []
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-m", "kubelet_winnet.cli", "run", "--dry-run", example],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode in (0, 1), done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    labels = json.loads(outputs[0])[0]["runPodSandbox"]["config"]["labels"]
    assert list(labels) == sorted(labels)
