"""``kubelet-winnet translate -o json``: the records are written by hand (cli/commands/translate.py,
``_record_text``), so their bytes are checked against what ``json.dumps(record,
indent=2)`` writes for the same records, and the configs against the protobuf runtime's
own JSON mapping of the message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format

import kubelet_winnet as api
from kubelet_winnet.cli import main
from tests.strategies import run_main


def _pod(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


_PODS = [
    _pod("plain", "ns"),
    _pod("host-network", "ns", hostNetwork=True),
    _pod("host-process", "ns", hostNetwork=True, securityContext={"windowsOptions": {
        "hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}),
    _pod("gmsa-é", "名前空間", securityContext={"windowsOptions": {
        "gmsaCredentialSpec": '{"a": "ü\\u2028"}', "runAsUserName": "ContainerUser"}}),
    _pod("mixed", "ns", hostNetwork=True,
         securityContext={"windowsOptions": {"hostProcess": True}},
         initContainers=[{"name": "i", "image": "i",
                          "securityContext": {"windowsOptions": {"hostProcess": False}}}]),
    _pod("plain-again", "ns"),
]


@pytest.mark.parametrize("version", ["1.32", "1.33"])
def test_json_records_are_the_bytes_json_dumps_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str,
) -> None:
    path = tmp_path / "pods é.yaml"
    path.write_text(yaml.safe_dump_all(_PODS, allow_unicode=True), encoding="utf-8")
    status = main(["translate", str(path), "-o", "json", "--kubelet-version", version])
    out, err = capsys.readouterr()
    assert status == 1, err  # the mixed pod is refused
    records = json.loads(out)
    assert out == "[\n" + ",\n".join(json.dumps(r, indent=2) for r in records) + "\n]\n"
    assert [r["pod"] for r in records] == [
        f"Pod/{p['metadata']['namespace']}/{p['metadata']['name']}" for p in _PODS
    ]
    for record, pod in zip(records, _PODS, strict=True):
        if pod["metadata"]["name"] == "mixed":
            assert record["error"] == ("Failed to create pod sandbox: pod must not contain "
                                       "both HostProcess and non-HostProcess containers")
            continue
        config = api.windows_sandbox_config(pod, kubelet_version=version)
        assert record["windowsPodSandboxConfig"] == json_format.MessageToDict(config)


def test_the_host_network_note_names_the_line_of_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The note is about spec.template.spec.hostNetwork: it names that line, as check
    names it for its finding, not the line where the document starts."""
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "kind: Service\nmetadata: {name: s}\n---\n"  # the Deployment starts on line 4
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  template:\n    spec:\n      containers: [{name: c, image: i}]\n"
        "      nodeSelector: {kubernetes.io/os: windows}\n      hostNetwork: true\n",
        encoding="utf-8",
    )
    line = path.read_text(encoding="utf-8").splitlines().index("      hostNetwork: true") + 1
    assert line == 12
    main(["translate", str(path)])
    _, err = capsys.readouterr()
    assert err.startswith(f"kubelet-winnet: note: {path}:{line}: Deployment/web: hostNetwork: "
                          "true will not take effect: ")
    main(["check", str(path)])
    out, _ = capsys.readouterr()
    assert f"{path}:{line}: warning host-network-ignored: " in out


def test_a_runtime_class_name_that_is_no_string_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """spec.runtimeClassName is read with the pod (the judgement of a hostNetwork pod
    looks its handler up): a number there is bad input naming the field, exit 2, where
    it used to end translate in a traceback."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n"
        "  runtimeClassName: 5\n  containers: [{name: c, image: i}]\n", encoding="utf-8")
    status = main(["translate", str(path)])
    out, err = capsys.readouterr()
    assert status == 2
    assert "Traceback" not in err
    assert "spec.runtimeClassName: expected a string, got number 5" in err
    assert out == ""


def test_json_of_the_windows_sandbox_config_is_the_same_across_the_cri_api_renames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """translate writes WindowsPodSandboxConfig, which holds neither a KeyValue nor a
    Signal: the renames of cri-api 1.37 (bytes env values, SIGNAL_ names) leave it alone."""
    pod = _pod("p", "ns", containers=[{
        "name": "c", "image": "i", "env": [{"name": "A", "value": "x"}],
        "lifecycle": {"stopSignal": "SIGTERM"},
    }])
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(pod), encoding="utf-8")
    outputs = []
    for version in ("1.36.1", "1.37.0"):
        status = main(["translate", str(path), "-o", "json", "--kubelet-version", version,
                       "--feature-gates", "ContainerStopSignals=true"])
        out, err = capsys.readouterr()
        assert status == 0, err
        outputs.append(json.loads(out)[0]["windowsPodSandboxConfig"])
    assert outputs[0] == outputs[1] == {"securityContext": {}}


def test_a_host_port_written_as_a_string_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """translate reads a pod as the request builder does: a hostPort the API server
    would not decode ends the pod as bad input with its field path."""
    path = tmp_path / "pod.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "spec": {
        "os": {"name": "windows"},
        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": "80"}]}]}}))
    status, out, err = run_main(capsys, "translate", str(path))
    assert status == 2
    assert 'spec.containers[0].ports[0].hostPort: expected an integer, got string "80"' in err
    assert out == ""
