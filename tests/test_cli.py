"""The ``kubelet-winnet`` console script (issue 2 item 8).

For each pod in a YAML/JSON file it prints the ``WindowsPodSandboxConfig`` as proto3 JSON.
Exit status: 0 every pod translated; 1 the kubelet would refuse a pod
(``Failed to create pod sandbox: ...``); 2 bad input, flags or usage. Never a traceback.

Presence (kubelet-rules.md step 2, cri-and-hcn.md): on 1.26-1.32 with the gate on, every
pod's ``security_context`` carries ``namespace_options`` (``{}`` in proto3 JSON for POD,
``{"network": "NODE"}`` for hostNetwork); on 1.33+ it is absent.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main
from tests.strategies import CORPUS

MIXED_ERROR = "pod must not contain both HostProcess and non-HostProcess containers"
POD_SC: dict[str, Any] = {"securityContext": {"namespaceOptions": {}}}
NODE_SC: dict[str, Any] = {"securityContext": {"namespaceOptions": {"network": "NODE"}}}
NO_NS_SC: dict[str, Any] = {"securityContext": {}}


def pod(name: str, *, host_network: object = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "mcr.microsoft.com/x"}]}
    if host_network is not None:
        body["hostNetwork"] = host_network
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def deployment(name: str, *, host_network: bool) -> dict[str, Any]:
    template = pod(name, host_network=host_network)
    del template["apiVersion"], template["kind"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": template},
    }


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
              "data": {"spec": "not a pod"}}
MIXED_HOST_PROCESS = pod(
    "mixed",
    host_network=True,
    securityContext={"windowsOptions": {"hostProcess": True}},
    containers=[
        {"name": "a", "image": "i"},
        {"name": "b", "image": "i", "securityContext": {"windowsOptions": {"hostProcess": False}}},
    ],
)


def write_yaml(path: Path, *docs: object) -> str:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[Any]]:
    status, out, _ = run(capsys, *argv, "-o", "json")
    records = json.loads(out)
    assert isinstance(records, list)
    return status, records


def configs(records: list[Any]) -> list[Any]:
    return [r.get("windowsPodSandboxConfig") for r in records]


def text_configs(out: str) -> list[Any]:
    """The proto3 JSON objects of text output: one per pod, after a ``# `` header."""
    decoder = json.JSONDecoder()
    found = []
    index = out.find("\n{")
    while index != -1:
        value, end = decoder.raw_decode(out, index + 1)
        found.append(value)
        index = out.find("\n{", end)
    return found


@pytest.fixture
def multi(tmp_path: Path) -> str:
    return write_yaml(
        tmp_path / "multi.yaml",
        deployment("web", host_network=True),
        CONFIG_MAP,
        pod("plain"),
    )


# --- input forms ----------------------------------------------------------------------


def test_multi_document_yaml_skips_non_pod_kinds(
    capsys: pytest.CaptureFixture[str], multi: str
) -> None:
    status, out, _ = run(capsys, "translate", multi)
    assert status == 0
    assert text_configs(out) == [NODE_SC, POD_SC]
    assert out.count("\n# ") + out.startswith("# ") == 2  # one header per pod
    assert "ConfigMap" not in out
    assert '"namespaceOptions": {}' in out
    assert '"network": "NODE"' in out


def test_json_output(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, records = run_json(capsys, "translate", multi)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC]
    assert "web" in records[0]["pod"]
    assert "plain" in records[1]["pod"]


@pytest.mark.parametrize("version", ["1.26", "1.32", "v1.32.4"])
def test_namespace_options_present_up_to_1_32(
    capsys: pytest.CaptureFixture[str], multi: str, version: str
) -> None:
    status, records = run_json(capsys, "translate", multi, "--kubelet-version", version)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC]


@pytest.mark.parametrize("version", ["1.33", "1.37", "1.38"])
def test_namespace_options_absent_from_1_33(
    capsys: pytest.CaptureFixture[str], multi: str, version: str
) -> None:
    status, out, _ = run(capsys, "translate", multi, "--kubelet-version", version)
    assert status == 0
    assert text_configs(out) == [NO_NS_SC, NO_NS_SC]
    assert "namespaceOptions" not in out


def test_gate_off_on_1_32(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, records = run_json(
        capsys, "translate", multi, "--feature-gates", "WindowsHostNetwork=false"
    )
    assert status == 0
    assert configs(records) == [NO_NS_SC, NO_NS_SC]


def test_deprecated_gate_set_on_1_33(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, records = run_json(
        capsys, "translate", multi, "--kubelet-version", "1.33",
        "--feature-gates", "WindowsHostNetwork=true",
    )
    assert status == 0
    assert configs(records) == [NO_NS_SC, NO_NS_SC]


def test_kind_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "list.yaml",
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                pod("a", host_network=True),
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                 "spec": {"ports": [{"port": 80}]}},
                deployment("b", host_network=False),
            ],
        },
    )
    status, records = run_json(capsys, "translate", path)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC]
    assert ["/a" in r["pod"] for r in records] == [True, False]


def test_json_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod("j", host_network=True), indent=1), encoding="utf-8")
    status, records = run_json(capsys, "translate", str(path))
    assert status == 0
    assert configs(records) == [NODE_SC]


def test_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = yaml.safe_dump_all([CONFIG_MAP, pod("s", host_network=False)])
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status, records = run_json(capsys, "translate", "-")
    assert status == 0
    assert configs(records) == [POD_SC]


def test_several_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, multi: str
) -> None:
    other = write_yaml(tmp_path / "other.yaml", pod("o", host_network=True))
    status, records = run_json(capsys, "translate", multi, other)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC, NODE_SC]


def test_file_without_pods(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "cm.yaml", CONFIG_MAP)
    status, records = run_json(capsys, "translate", path)
    assert (status, records) == (0, [])


# --- exit 1: the kubelet refuses a pod ------------------------------------------------


def test_mixed_host_process_pod_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", pod("ok"), MIXED_HOST_PROCESS)
    status, out, _ = run(capsys, "translate", path)
    assert status == 1
    assert MIXED_ERROR in out
    assert text_configs(out) == [POD_SC]
    status, records = run_json(capsys, "translate", path)
    assert status == 1
    assert configs(records)[0] == POD_SC
    assert records[1]["error"] == f"Failed to create pod sandbox: {MIXED_ERROR}"


def test_explain_mixed_pod_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", MIXED_HOST_PROCESS)
    status, out, _ = run(capsys, "explain", path)
    assert status == 1
    assert MIXED_ERROR in out


# --- exit 2: bad input ----------------------------------------------------------------


def test_bad_yaml(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Pod\nspec: {containers: [\n", encoding="utf-8")
    status, _, err = run(capsys, "translate", str(path))
    assert status == 2
    assert "bad.yaml" in err


def test_bad_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"kind": "Pod", "spec": {', encoding="utf-8")
    status, _, err = run(capsys, "translate", str(path))
    assert status == 2
    assert "bad.json" in err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    status, _, err = run(capsys, "translate", str(missing))
    assert status == 2
    assert "nope.yaml" in err


def test_missing_file_does_not_stop_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, multi: str
) -> None:
    status, records = run_json(capsys, "translate", str(tmp_path / "nope.yaml"), multi)
    assert status == 2
    assert configs(records) == [NODE_SC, POD_SC]


def test_bad_input_outranks_a_refused_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", MIXED_HOST_PROCESS)
    status, _, _ = run(capsys, "translate", path, str(tmp_path / "nope.yaml"))
    assert status == 2


@pytest.mark.parametrize("version", ["1.25", "1.39", "2.0", "latest", ""])
def test_unsupported_kubelet_version(
    capsys: pytest.CaptureFixture[str], multi: str, version: str
) -> None:
    status, out, err = run(capsys, "translate", multi, "--kubelet-version", version)
    assert status == 2
    assert out == ""  # a flag error, reported once on stderr, not per pod
    assert "kubelet version" in err


def test_unsupported_kubelet_version_without_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A flag the kubelet cannot have is bad input even when the file holds no pod."""
    path = write_yaml(tmp_path / "cm.yaml", CONFIG_MAP)
    status, out, err = run(capsys, "translate", path, "--kubelet-version", "1.25")
    assert status == 2
    assert out == ""
    assert "1.25" in err


def test_invalid_feature_gate_value(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, out, err = run(
        capsys, "translate", multi, "--feature-gates", "WindowsHostNetwork=maybe"
    )
    assert status == 2
    assert out == ""
    assert (
        "invalid value of WindowsHostNetwork=maybe, err: "
        'strconv.ParseBool: parsing "maybe": invalid syntax'
    ) in err


def test_invalid_feature_gate_without_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "cm.yaml", CONFIG_MAP)
    status, out, err = run(capsys, "translate", path, "--feature-gates", "WindowsHostNetwork")
    assert status == 2
    assert out == ""
    assert "missing bool value for WindowsHostNetwork" in err


def test_removed_gate_on_1_38(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, out, err = run(
        capsys, "explain", multi, "--kubelet-version", "1.38",
        "--feature-gates", "WindowsHostNetwork=false",
    )
    assert status == 2
    assert out == ""
    assert "unrecognized feature gate: WindowsHostNetwork" in err


def test_host_network_string_is_not_a_boolean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "str.yaml", pod("s", host_network="true"))
    status, out, err = run(capsys, "translate", path)
    assert status == 2
    assert "spec.hostNetwork" in out + err
    status, records = run_json(capsys, "translate", path)
    assert status == 2
    assert records[0].get("windowsPodSandboxConfig") is None


@pytest.mark.parametrize(
    "argv",
    [[], ["translate"], ["frobnicate", "x.yaml"], ["translate", "x.yaml", "-o", "yaml"]],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


# --- real manifests from the shared corpus (read-only) ---------------------------------


def corpus(name: str) -> str:
    path = CORPUS / name
    assert path.is_file(), f"shared corpus file missing: {path}"
    return str(path)


def test_corpus_hostnetwork_daemonset(capsys: pytest.CaptureFixture[str]) -> None:
    # 06: ConfigMap + DaemonSet with hostNetwork: true and no HostProcess (pre-HostProcess era).
    path = corpus("06-swt-kubeadm-flannel-overlay-wins-legacy.yaml")
    status, records = run_json(capsys, "translate", path)
    assert status == 0
    assert configs(records) == [NODE_SC]
    status, records = run_json(capsys, "translate", path, "--kubelet-version", "1.33")
    assert (status, configs(records)) == (0, [NO_NS_SC])


def test_corpus_mixed_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    # 15: ServiceAccount, ClusterRole, ClusterRoleBinding, then a hostNetwork DaemonSet and
    # its Windows twin without hostNetwork.
    path = corpus("15-cloud-provider-azure-cloud-node-manager-linux-and-windows.yaml")
    status, records = run_json(capsys, "translate", path)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC]


def test_corpus_flow_style(capsys: pytest.CaptureFixture[str]) -> None:
    # 09: a JSON-like flow-style Pod with pod-level runAsUserName.
    status, records = run_json(
        capsys, "translate", corpus("09-k8s-website-run-as-username-pod-flowstyle.yaml")
    )
    assert status == 0
    assert len(records) == 1
    assert records[0]["windowsPodSandboxConfig"]["securityContext"]["namespaceOptions"] == {}


def test_corpus_refused_pods(capsys: pytest.CaptureFixture[str]) -> None:
    # 28: eight Pods; the first mixes an init HostProcess container with a non-HostProcess one.
    status, records = run_json(
        capsys, "translate", corpus("28-kyverno-disallow-host-process-pod-bad.yaml")
    )
    assert status == 1
    assert len(records) == 8
    assert records[0]["error"] == f"Failed to create pod sandbox: {MIXED_ERROR}"


# --- the installed console script -------------------------------------------------------


def console_script() -> str:
    script = Path(sys.executable).parent / "kubelet-winnet"
    assert script.is_file(), f"console script not installed next to {sys.executable}"
    return str(script)


def test_console_script(tmp_path: Path) -> None:
    script = console_script()
    stdin = yaml.safe_dump_all([CONFIG_MAP, pod("h", host_network=True), pod("p")])
    done = subprocess.run(
        [script, "translate", "-", corpus("06-swt-kubeadm-flannel-overlay-wins-legacy.yaml"),
         "-o", "json"],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert configs(json.loads(done.stdout)) == [NODE_SC, POD_SC, NODE_SC]

    refused = write_yaml(tmp_path / "mixed.yaml", MIXED_HOST_PROCESS)
    done = subprocess.run(
        [script, "translate", refused], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert MIXED_ERROR in done.stdout

    for argv in (
        ["translate", str(tmp_path / "nope.yaml")],
        ["translate", refused, "--kubelet-version", "1.25"],
        ["translate", refused, "--feature-gates", "WindowsHostNetwork=maybe"],
        [],
    ):
        done = subprocess.run(
            [script, *argv], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 2, argv
        assert "Traceback" not in done.stderr
