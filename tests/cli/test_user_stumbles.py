"""Rough edges an experienced Kubernetes user meets on the command line: each test runs
the command on real files as a user would and asserts the sentences the user reads."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet.cli import main
from tests.strategies import WORKLOAD_KINDS

WINDOWS_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeSelector:
    kubernetes.io/os: windows
  containers:
  - name: c
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


# --- 1. files without objects ------------------------------------------------------------

EMPTY_FILES = {"empty.yaml": "", "comment.yaml": "# nothing here yet\n",
               "dashes.yaml": "---\n---\n", "blank.yml": "\n\n  \n"}


@pytest.mark.parametrize("fail_on", ["never", "warning"])
def test_empty_files_in_a_directory_are_skipped_not_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fail_on: str
) -> None:
    """kubectl apply -f DIR and kube-linter skip empty documents: a directory with a
    placeholder file is no input error (exit 2 would fail even --fail-on never)."""
    for name, text in EMPTY_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(WINDOWS_POD, encoding="utf-8")
    status, out, err = run(capsys, "check", str(tmp_path), "--fail-on", fail_on)
    assert status == 0
    assert out == ""
    assert err.splitlines() == [
        "kubelet-winnet: 1 pod in 5 files checked: 0 errors, 0 warnings, 0 info, 0 ignored "
        "by annotation; 0 Linux-targeted and 0 untargeted pods skipped; 0 input errors"
    ]


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
@pytest.mark.parametrize("name", sorted(EMPTY_FILES))
def test_a_file_without_objects_gets_a_note_and_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str
) -> None:
    path = tmp_path / name
    path.write_text(EMPTY_FILES[name], encoding="utf-8")
    status, _, err = run(capsys, command, str(path))
    assert status == 0
    assert "kubelet-winnet: error:" not in err
    assert f"kubelet-winnet: note: no Kubernetes objects in {path}\n" in err


# --- 2. document numbers in a stream of JSON values ---------------------------------------


def _ignored_host_network_pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "windows"},
                     "containers": [{"name": "c", "image": "i"}]}}


@pytest.mark.parametrize("indent", [None, 4])  # one line per value; kubectl's layout
def test_each_json_value_after_a_list_is_its_own_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, indent: int | None
) -> None:
    """kubectl reads concatenated JSON values as documents: the n-th top-level value is
    document n, a List's items all belong to the List's number."""
    def listed(*names: str) -> str:
        items = [_ignored_host_network_pod(n) for n in names]
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=indent)

    values = [
        listed("a", "b"),                          # 1
        '{"kind": "Pod", "x": 1, "x": 2}',         # 2: refused right after the List
        listed("c"),                               # 3: a List right after a refused value
        listed("d"),                               # 4: a List right after a List
        '{"kind": "Pod", "n": 1e999}',             # 5
        json.dumps(_ignored_host_network_pod("e"), indent=indent),  # 6
        "[1]",                                     # 7
    ]
    path = tmp_path / "stream.json"
    path.write_text("\n".join(values) + "\n", encoding="utf-8")
    status, out, err = run(capsys, "check", str(path), "-o", "json", "--fail-on", "never")
    assert status == 2
    found = [(f["object"]["name"], f["document"], f["item"]) for f in json.loads(out)["findings"]]
    assert found == [("a", 1, 0), ("b", 1, 1), ("c", 3, 0), ("d", 4, 0), ("e", 6, None)]
    errors = [line.split(": ")[3] for line in err.splitlines() if ": error: " in line]
    assert errors == ["document 2", "document 5", "document 7"]


# --- 3. the kubectl plugin says the name the user typed ----------------------------------


def _plugin() -> Path:
    script = Path(sysconfig.get_path("scripts")) / "kubectl-winnet"
    assert script.exists(), f"the kubectl-winnet console script is not installed in {script}"
    return script


def _plugin_run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_plugin()), *argv], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=60)


def test_the_kubectl_plugin_names_itself_kubectl_winnet(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(WINDOWS_POD, encoding="utf-8")
    missing = _plugin_run("check", "nope.yaml", "pod.yaml", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        "kubectl winnet: error: nope.yaml: cannot read: No such file or directory",
        "kubectl winnet: 1 pod in 2 files checked: 0 errors, 0 warnings, 0 info, 0 ignored "
        "by annotation; 0 Linux-targeted and 0 untargeted pods skipped; 1 input error",
    ]
    flag = _plugin_run("check", "--bogus", "pod.yaml", cwd=tmp_path)
    assert flag.stderr == ("kubectl winnet: error: check: unrecognized arguments: --bogus "
                           "(did you mean --verbose?); see kubectl winnet check --help\n")
    usage = _plugin_run(cwd=tmp_path)
    assert usage.stderr == ("kubectl winnet: error: the following arguments are required: "
                            "COMMAND; see kubectl winnet --help\n")
    version = _plugin_run("--version", cwd=tmp_path)
    assert version.stdout.startswith("kubectl winnet ")
    assert _plugin_run("check", "--help", cwd=tmp_path).stdout.startswith(
        "usage: kubectl winnet check ")


def test_the_plugins_notes_suggest_the_plugins_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/kubectl-winnet"])
    chart = tmp_path / "deployment.yaml"
    chart.write_text("kind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n",
                     encoding="utf-8")
    status, _, err = run(capsys, "check", str(chart))
    assert status == 0
    assert err.splitlines()[0] == (
        f"kubectl winnet: note: {chart}:3: a Helm template ({{{{ ... }}}}), not a manifest: "
        "check what it renders with helm template CHART | kubectl winnet check -"
    )


# --- 4. run: no lone "# Pod ..." header before an error ----------------------------------


def test_run_without_a_runtime_prints_the_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(WINDOWS_POD + "---\n" + WINDOWS_POD.replace("name: web", "name: api"),
                        encoding="utf-8")
    socket = tmp_path / "containerd.sock"
    status, out, err = run(capsys, "run", "--runtime-endpoint", f"unix://{socket}",
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
    status, out, err = run(capsys, "run", "--runtime-endpoint",
                           f"unix://{tmp_path}/none.sock", str(manifest))
    assert status == 2
    assert out == ""
    assert err == (f"kubelet-winnet: error: {manifest}:6: document 1: spec.hostNetwork: "
                   "expected a boolean, got string \"true\"\n")


# --- 5. run --dry-run marks what stands in for the API server's and controllers' fields ---


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
    status, out, _ = run(capsys, "run", "--dry-run", str(path))
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
    status, out, _ = run(capsys, "run", "--dry-run", str(path))
    assert status == 0
    (record,) = json.loads(out)
    assert record["runPodSandbox"]["config"]["metadata"]["uid"] == uid
    assert "standIns" not in record


# --- 6. matrix --pod: the Hyper-V note only where a HostProcess request is sent -----------

HOST_PROCESS_POD = WINDOWS_POD.replace("spec:\n", "spec:\n  hostNetwork: true\n"
                                       "  securityContext:\n    windowsOptions:\n"
                                       "      hostProcess: true\n")


@pytest.mark.parametrize(("manifests", "noted"), [
    ([WINDOWS_POD], False),  # no kubelet sends it host_process: the note cannot apply
    ([HOST_PROCESS_POD], True),
    ([WINDOWS_POD, HOST_PROCESS_POD], True),
])
def test_matrix_notes_hyperv_only_for_host_process_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, manifests: list[str], noted: bool
) -> None:
    path = tmp_path / "pods.yaml"
    path.write_text("---\n".join(manifests), encoding="utf-8")
    status, out, _ = run(capsys, "matrix", "--pod", str(path))
    assert status == 0
    assert out.count("| Pod/web (") == 3 * len(manifests)  # one row per table
    assert ("HostProcess under Hyper-V isolation: the kubelet sends the same `host_process` "
            "request whatever the pod's RuntimeClass" in out) is noted


# --- 7. a Helm template on stdin gets the same note as from a file ------------------------

HELM_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.name }}
spec:
  template:
    spec:
      {{- if .Values.hostNetwork }}
      hostNetwork: true
      {{- end }}
"""


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_helm_template_on_stdin_is_noted_like_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text(HELM_TEMPLATE, encoding="utf-8")
    note = ("a Helm template ({{ ... }}), not a manifest: check what it renders with "
            f"helm template CHART | kubelet-winnet {command} -")
    status, _, err = run(capsys, command, str(path))
    assert (status, err.splitlines()[0]) == (0, f"kubelet-winnet: note: {path}:4: {note}")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HELM_TEMPLATE.encode())))
    status, _, err = run(capsys, command, "-")
    assert (status, err.splitlines()[0]) == (0, f"kubelet-winnet: note: <stdin>:4: {note}")
    assert "kubelet-winnet: error:" not in err


# --- 8. JSON records: where first, then what ---------------------------------------------


def test_json_records_of_every_command_start_with_where_then_what(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(WINDOWS_POD.replace("spec:\n", "spec:\n  hostNetwork: true\n"),
                    encoding="utf-8")
    _, out, _ = run(capsys, "check", str(path), "-o", "json")
    (finding,) = json.loads(out)["findings"]
    assert list(finding)[:7] == ["file", "line", "document", "item", "object", "container",
                                 "field"]
    assert finding["file"] == str(path) and finding["object"] == {"kind": "Pod", "name": "web"}
    for argv in (["translate", "-o", "json"], ["explain", "-o", "json"], ["run", "--dry-run"]):
        _, out, _ = run(capsys, *argv, str(path))
        (record,) = json.loads(out)
        assert list(record)[:3] == ["source", "line", "pod"], argv
        assert (record["source"], record["pod"]) == (f"{path}#1", "Pod/web")


# --- wrong input of every kind ----------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "translate", "explain", "run"])
def test_a_file_of_linux_pods_is_not_said_to_hold_no_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    path = tmp_path / "linux.yaml"
    path.write_text(WINDOWS_POD.replace("os: windows", "os: linux"), encoding="utf-8")
    argv = [command, str(path)] + (["--dry-run"] if command == "run" else [])
    status, _, err = run(capsys, *argv)
    assert status == 0
    assert "no Kubernetes objects" not in err
    assert ("1 Linux-targeted and 0 untargeted pods skipped" if command == "check"
            else "skipped 1 Linux-targeted pod (-v lists them)") in err


def test_run_notes_input_without_objects_and_helm_templates_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# placeholder\n", encoding="utf-8")
    chart = tmp_path / "deployment.yaml"
    chart.write_text(HELM_TEMPLATE, encoding="utf-8")
    status, out, err = run(capsys, "run", "--dry-run", str(empty), str(chart))
    assert (status, json.loads(out)) == (0, [])
    assert err.splitlines() == [
        f"kubelet-winnet: note: {chart}:4: a Helm template ({{{{ ... }}}}), not a manifest: "
        "check what it renders with helm template CHART | kubelet-winnet run --dry-run -",
        f"kubelet-winnet: note: no Kubernetes objects in {empty}",
    ]


def test_audit_of_an_empty_dump_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "audit", "-f", os.devnull)
    assert status == 0
    assert err == f"kubelet-winnet: note: no Kubernetes objects in {os.devnull}\n"
    assert "TOTAL: 0 pods" in out
    assert "findings: 0 errors, 0 warnings, 0 info" in out


@pytest.mark.parametrize(("data", "said"), [
    (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)),
     "character U+007F at offset 0 is not allowed in YAML (a binary file?)"),
    (b"kind: Pod\nmetadata:\n  name: a\x01b\n",
     "character U+0001 at offset 29 is not allowed in YAML"),
])
def test_a_character_yaml_refuses_is_named_with_its_offset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: bytes, said: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    status, _, err = run(capsys, "translate", str(path))
    assert status == 2
    assert err == (f"kubelet-winnet: error: {path}: document 1: {said}; reading of this "
                   "file stops here\n")


@pytest.mark.parametrize("command", ["check", "translate", "explain", "run", "audit"])
def test_a_bad_feature_gates_value_is_named_with_the_kubelets_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """The kubelet's own text (featuregate's "missing bool value for X") said alone names
    no flag: the flag and the value come first."""
    path = tmp_path / "pod.yaml"
    path.write_text(WINDOWS_POD, encoding="utf-8")
    argv = {"run": ["run", "--dry-run", str(path)], "audit": ["audit", "-f", str(path)]}.get(
        command, [command, str(path)])
    status, _, err = run(capsys, *argv, "--feature-gates", "WindowsHostNetwork")
    assert status == 2
    assert err == ('kubelet-winnet: error: --feature-gates "WindowsHostNetwork": missing '
                   "bool value for WindowsHostNetwork\n")


def test_feature_gates_from_a_config_file_are_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(WINDOWS_POD, encoding="utf-8")
    config = tmp_path / "settings.yaml"
    config.write_text("featureGates: WindowsHostNetwork=maybe\n", encoding="utf-8")
    status, _, err = run(capsys, "check", "--config", str(config), str(path))
    assert status == 2
    assert err.splitlines()[0] == (
        f'kubelet-winnet: error: featureGates of {config} "WindowsHostNetwork=maybe": '
        'invalid value of WindowsHostNetwork=maybe, err: strconv.ParseBool: parsing "maybe": '
        "invalid syntax"
    )


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_a_directory_without_manifests_is_said_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    (tmp_path / "README.md").write_text("not a manifest\n", encoding="utf-8")
    status, _, err = run(capsys, command, str(tmp_path))
    assert status == 2
    said = [line for line in err.splitlines() if " checked: " not in line]  # check's summary
    assert said == [f"kubelet-winnet: error: {tmp_path}: directory holds no .yaml, .yml or "
                    ".json file"]


def test_matrix_names_stdin_as_every_command_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    status, out, err = run(capsys, "matrix", "--pod", "-")
    assert (status, out, err) == (2, "", "kubelet-winnet: error: no pod in <stdin>\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("argv", [["--version"], ["check", "--help"]])
def test_help_and_version_that_cannot_be_written_are_not_a_success(argv: list[str]) -> None:
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = subprocess.run([sys.executable, "-m", "kubelet_winnet.cli", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, check=False, timeout=60)
    assert (done.returncode, done.stderr) == (
        2, "kubelet-winnet: error: cannot write output: No space left on device\n")


def _fake_runtime_answers(fake: Any, image_id: str) -> None:
    from cri_api.runtime.v1 import api_pb2

    service = "/runtime.v1.RuntimeService/"
    status = api_pb2.PodSandboxStatusResponse()
    status.status.state = api_pb2.SANDBOX_READY
    status.status.network.ip = "10.1.0.5"
    fake.reply.update({
        service + "RunPodSandbox": api_pb2.RunPodSandboxResponse(
            pod_sandbox_id="s1").SerializeToString(),
        service + "PodSandboxStatus": status.SerializeToString(),
        "/runtime.v1.ImageService/ImageStatus": api_pb2.ImageStatusResponse(
            image=api_pb2.Image(id=image_id)).SerializeToString(),
    })


@pytest.mark.parametrize(("image_id", "env", "why"), [
    ("", None, "container c: image 'mcr.microsoft.com/windows/nanoserver:ltsc2022' is not on "
               "the runtime (kubelet-winnet run does not pull images)"),
    ("sha256:1", "      valueFrom: {configMapKeyRef: {name: cm, key: k}}\n",
     "the kubelet refuses it: container c: CreateContainerConfigError: configmaps \"cm\" "
     "not found"),
])
def test_run_says_on_stderr_why_a_pod_stopped_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, image_id: str, env: str | None,
    why: str,
) -> None:
    """Exit status 1 comes with its one line on stderr, as --dry-run's does."""
    from tests.cri.test_cri import serving

    manifest = tmp_path / "pod.yaml"
    text = WINDOWS_POD if env is None else WINDOWS_POD + "    env:\n    - name: A\n" + env
    manifest.write_text(text, encoding="utf-8")
    with serving(f"kw-stumble-{id(tmp_path):x}.sock") as fake:
        _fake_runtime_answers(fake, image_id)
        status, out, err = run(capsys, "run", "--runtime-endpoint", fake.endpoint,
                               str(manifest))
    assert status == 1
    assert out.splitlines() == [f"# Pod/web ({manifest}#1)",
                                "sandbox s1 SANDBOX_READY network=POD ip=10.1.0.5",
                                why.removeprefix("the kubelet refuses it: ")]
    assert err == f"kubelet-winnet: {manifest}:1: Pod/web: {why}\n"
