"""The ``kubelet-winnet`` console script: translate and explain, input forms, targeting,
exit statuses and streams.

Presence (kubelet-rules.md step 2, cri-and-hcn.md): on 1.26-1.32 with the gate on, every
pod's ``security_context`` carries ``namespace_options`` (POD, or NODE for hostNetwork);
on 1.33+ it is absent. Exit status: 0 all translated; 1 the kubelet refuses a pod; 2 bad
input, flags, usage or output that cannot be written; 141 stdout closed early.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.cli import main
from tests.strategies import (
    CORPUS,
    FIXTURES,
    MUST_RUN,
    REPO_ROOT,
    WINDOWS_POD,
    fixture_files,
    run_main,
    without_summary,
)

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
LINUX_POD = pod("linux", host_network=True, nodeSelector={"kubernetes.io/os": "linux"})


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
    status, records = run_json(capsys, "translate", multi)
    assert status == 0
    assert configs(records) == [NODE_SC, POD_SC]
    assert records[0]["pod"] == "Deployment/web/web"
    assert records[1]["pod"] == "Pod/plain"
    assert [r["source"] for r in records] == [f"{multi}#1", f"{multi}#3"]


def test_text_output_shows_pod_network_explicitly(
    capsys: pytest.CaptureFixture[str], multi: str
) -> None:
    status, out, _ = run(capsys, "translate", multi)
    assert status == 0
    assert '"network": "NODE"' in out
    assert '"network": "POD"' in out
    assert '"namespaceOptions": {}' not in out
    status, out, _ = run(capsys, "translate", multi, "--kubelet-version", "1.33")
    assert "network" not in out  # 1.33+: namespace_options is absent, not POD


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
    status, records = run_json(capsys, "translate", multi, "--kubelet-version", version)
    assert status == 0
    assert configs(records) == [NO_NS_SC, NO_NS_SC]


def test_gate_off_on_1_32(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, records = run_json(
        capsys, "translate", multi, "--feature-gates", "WindowsHostNetwork=false"
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
    assert [r["source"] for r in records] == [f"{path}#1.items[0]", f"{path}#1.items[2]"]


def test_json_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod("j", host_network=True), indent=1), encoding="utf-8")
    status, records = run_json(capsys, "translate", str(path))
    assert status == 0
    assert configs(records) == [NODE_SC]


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = yaml.safe_dump_all([CONFIG_MAP, pod("s", host_network=False)])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    status, records = run_json(capsys, "translate", "-")
    assert status == 0
    assert configs(records) == [POD_SC]
    assert records[0]["source"] == "<stdin>#2"


def test_directories_and_repeated_f(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, multi: str
) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    write_yaml(tree / "sub" / "b.yaml", pod("b", host_network=True))
    write_yaml(tree / "a.yml", pod("a"))
    (tree / "README.md").write_text("not a manifest")
    status, records = run_json(capsys, "translate", "-f", str(tree), "-f", multi)
    assert status == 0
    assert [r["pod"] for r in records] == ["Pod/a", "Pod/b", "Deployment/web/web", "Pod/plain"]


def test_file_without_pods(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "cm.yaml", CONFIG_MAP)
    status, records = run_json(capsys, "translate", path)
    assert (status, records) == (0, [])


# --- output formats ---------------------------------------------------------------------


def expected_messages() -> list[api_pb2.WindowsPodSandboxConfig]:
    """NODE for the hostNetwork Deployment, POD for the plain pod (kubelet 1.32)."""
    node = api_pb2.WindowsPodSandboxConfig()
    node.security_context.namespace_options.network = api_pb2.NODE
    plain = api_pb2.WindowsPodSandboxConfig()
    plain.security_context.namespace_options.SetInParent()
    return [node, plain]


def test_output_yaml(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, out, _ = run(capsys, "translate", multi, "-o", "yaml")
    assert status == 0
    assert configs(list(yaml.safe_load_all(out))) == [NODE_SC, POD_SC]


def test_output_textproto(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    from google.protobuf import text_format

    status, out, _ = run(capsys, "translate", multi, "-o", "textproto")
    assert status == 0
    chunks = [c for c in out.split("# ") if c.strip()]
    parsed = []
    for chunk in chunks:
        message = api_pb2.WindowsPodSandboxConfig()
        text_format.Parse(chunk.split("\n", 1)[1], message)
        parsed.append(message)
    assert parsed == expected_messages()
    assert parsed[1].security_context.HasField("namespace_options")


def test_output_hex(capsys: pytest.CaptureFixture[str], multi: str) -> None:
    status, out, _ = run(capsys, "translate", multi, "-o", "hex")
    assert status == 0
    # security_context (field 1) { namespace_options (field 4) { network (field 1) = 2 } }
    assert out.split() == ["0a0422020802", "0a022200"]
    assert out.split() == [m.SerializeToString().hex() for m in expected_messages()]


def test_output_hex_keeps_one_line_per_pod_when_one_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "three.yaml"
    refused = {"kind": "Pod", "metadata": {"name": "mixed"}, "spec": {
        "hostNetwork": True,
        "containers": [{"name": "a", "securityContext": {"windowsOptions": {"hostProcess": True}}},
                       {"name": "b"}]}}
    plain = {"kind": "Pod", "metadata": {"name": "plain"}, "spec": {"containers": [{"name": "c"}]}}
    path.write_text(yaml.safe_dump_all([plain, refused, plain]), encoding="utf-8")
    status, out, err = run(capsys, "translate", str(path), "-o", "hex")
    assert status == 1  # the kubelet refuses the mixed pod (kubelet-rules.md)
    # 1.32 with the gate on: namespace_options present with network POD (zero bytes).
    assert out.split("\n") == ["0a022200", "", "0a022200", ""]
    assert "pod must not contain both HostProcess and non-HostProcess containers" in err


def test_output_binary_is_length_delimited(tmp_path: Path, multi: str) -> None:
    done = subprocess.run([console_script(), "translate", multi, "-o", "binary"],
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    data = done.stdout
    messages = []
    while data:
        size = data[0]  # both messages are shorter than 128 bytes: a one-byte varint
        messages.append(api_pb2.WindowsPodSandboxConfig.FromString(data[1 : 1 + size]))
        data = data[1 + size :]
    assert messages == expected_messages()


# --- what translate says on stderr --------------------------------------------------------


def test_translate_notes_host_network_that_is_lost(
    capsys: pytest.CaptureFixture[str], multi: str
) -> None:
    status, _out, err = run(capsys, "translate", multi)
    assert status == 0
    (note,) = err.splitlines()
    assert "Deployment/web/web" in note
    assert "hostNetwork" in note
    assert "containerd" in note
    status, _, err = run(capsys, "translate", multi, "--kubelet-version", "1.33")
    assert ("hostNetwork: true will not reach the runtime: kubelet 1.33 does not send "
            "namespace_options.network = NODE (no kubelet 1.33 or later does)") in err
    status, _, err = run(capsys, "translate", multi, "--quiet")
    assert err == ""


def test_host_process_pod_gets_no_note(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "hp.yaml", pod(
        "hp", host_network=True, securityContext={"windowsOptions": {"hostProcess": True}},
    ))
    status, _, err = run(capsys, "translate", path)
    assert (status, err) == (0, "")


# --- targeting ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["translate", "explain"])
def test_linux_pods_are_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    os_linux = pod("os-linux", host_network=True, os={"name": "linux"})
    path = write_yaml(tmp_path / "l.yaml", LINUX_POD, os_linux, pod("any"))
    status, records = run_json(capsys, command, path)
    assert status == 0
    assert [r["pod"] for r in records] == ["Pod/any"]
    status, _, err = run(capsys, command, path, "-o", "json", "-v")
    assert "Pod/linux" in err
    assert "Pod/os-linux" in err
    status, records = run_json(capsys, command, path, "--windows-only")
    assert records == []


# --- exit 1: the kubelet refuses a pod ----------------------------------------------------


def test_mixed_host_process_pod_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", pod("ok"), MIXED_HOST_PROCESS)
    status, out, _ = run(capsys, "translate", path)
    assert status == 1
    assert MIXED_ERROR in out
    status, records = run_json(capsys, "translate", path)
    assert status == 1
    assert configs(records)[0] == POD_SC
    assert records[1]["error"] == f"Failed to create pod sandbox: {MIXED_ERROR}"


def test_explain_mixed_pod_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", MIXED_HOST_PROCESS)
    status, out, _ = run(capsys, "explain", path)
    assert status == 1
    assert MIXED_ERROR in out
    status, out, _ = run(capsys, "explain", path, "-o", "yaml")
    (record,) = yaml.safe_load_all(out)
    assert record["error"] == MIXED_ERROR


# --- exit 2: bad input, one line each -------------------------------------------------------

BAD_INPUTS: dict[str, tuple[bytes, int, int]] = {
    # name: (file bytes, document number, line); a good pod follows as the next document
    # whenever the format lets reading go on.
    "utf16-no-bom": ("kind: Pod\n".encode("utf-16-le"), 1, 1),
    "latin1": (b"kind: Pod\nmetadata: {name: caf\xe9}\n", 1, 2),
    "random-bytes": (bytes(range(256)), 1, 0),
    "kind-list": (b"kind: [1]\nspec: {}\n", 1, 1),
    "invalid-date": (b"kind: Pod\nmetadata: {name: 2021-02-30x}\nspec: {hostNetwork: 2021-02-30}\n",
                     1, 3),
    "int-abc": (b"kind: ConfigMap\ndata: {a: !!int abc}\n", 1, 2),
    "huge-int": (b"kind: ConfigMap\ndata: {a: " + b"1" * 4301 + b"}\n", 1, 2),
    "duplicate-key": (b"kind: Pod\nspec:\n  hostNetwork: false\n  hostNetwork: true\n", 1, 4),
    "alias-bomb": (
        b"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        b"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        b"kind: Pod\nspec: {hostNetwork: *f}\n", 1, 5),
    "host-network-string": (b"kind: Pod\nspec:\n  hostNetwork: 'true'\n", 1, 3),
    "not-an-object": (b"- kind: Pod\n", 1, 1),
    "yaml-syntax": (b"kind: Pod\nspec: {containers: [\n", 1, 3),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["translate", "explain", "check"])
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, command: str
) -> None:
    data, document, line = BAD_INPUTS[name]
    path = tmp_path / f"{name}.yaml"
    follows = name not in ("utf16-no-bom", "latin1", "random-bytes", "yaml-syntax")
    good = b"---\n" + yaml.safe_dump(pod("good", host_network=False)).encode()
    path.write_bytes(data + (good if follows else b""))
    status, out, err = run(capsys, command, str(path), "-o", "json")
    assert status == 2
    (message,) = without_summary(err)
    assert message.startswith(f"kubelet-winnet: error: {path}")
    if line:
        assert message.startswith(f"kubelet-winnet: error: {path}:{line}:")
    if document:
        assert f"document {document}:" in message
    if follows and command != "check":
        assert [r["pod"] for r in json.loads(out)] == ["Pod/good"]


def test_missing_file_does_not_stop_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, multi: str
) -> None:
    status, out, err = run(capsys, "translate", str(tmp_path / "nope.yaml"), multi, "-o", "json")
    assert status == 2
    assert configs(json.loads(out)) == [NODE_SC, POD_SC]
    assert "nope.yaml" in err


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
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"kubelet-winnet: error: --kubelet-version {json.dumps(version)}: ")
    assert ("supported kubelet versions are 1.26 to 1.38" in err) is (version[:1].isdigit())
    assert ("not a version like" in err) is (not version[:1].isdigit())


@pytest.mark.parametrize(("gates", "text"), [
    ("WindowsHostNetwork=maybe",
     'invalid value of WindowsHostNetwork=maybe, err: strconv.ParseBool: parsing "maybe": '
     "invalid syntax"),
    ("WindowsHostNetwork", "missing bool value for WindowsHostNetwork"),
])
def test_invalid_feature_gates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gates: str, text: str
) -> None:
    path = write_yaml(tmp_path / "cm.yaml", CONFIG_MAP)
    for command in ("translate", "explain", "check"):
        status, out, err = run(capsys, command, path, "--feature-gates", gates)
        assert (status, out) == (2, "")
        assert text in err


@pytest.mark.parametrize(
    "argv",
    [[], ["translate"], ["frobnicate", "x.yaml"], ["translate", "x.yaml", "-o", "xml"],
     ["check", "x.yaml", "--fail-on", "sometimes"], ["check", "x.yaml", "--max-bytes", "0"]],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_help_documents_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["check", "--help"], ["translate", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        for status in ("0 ", "1 ", "2 ", "141"):
            assert f"  {status}" in out, argv


# --- the project's manifests (tests/data/manifests), and the published corpus ------------


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def test_hostnetwork_daemonset_without_host_process(capsys: pytest.CaptureFixture[str]) -> None:
    # ConfigMap + DaemonSet with hostNetwork: true and no HostProcess (the wins pipe era).
    path = fixture("cni-wins-legacy.yaml")
    status, records = run_json(capsys, "translate", path)
    assert status == 0
    assert configs(records) == [NODE_SC]
    status, records = run_json(capsys, "translate", path, "--kubelet-version", "1.33")
    assert (status, configs(records)) == (0, [NO_NS_SC])


def test_linux_twin_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    # The Linux DaemonSet (nodeSelector linux, hostNetwork) and its two Windows twins.
    status, records = run_json(capsys, "translate", fixture("node-agent-linux-and-windows.yaml"))
    assert status == 0
    assert [r["pod"] for r in records] == ["DaemonSet/observability/node-agent-windows",
                                           "DaemonSet/observability/node-agent-windows-hostnet"]
    assert configs(records) == [POD_SC, NODE_SC]


def test_flow_style(capsys: pytest.CaptureFixture[str]) -> None:
    status, records = run_json(capsys, "translate", fixture("run-as-username-flow.yaml"))
    assert status == 0
    assert len(records) == 1
    assert records[0]["windowsPodSandboxConfig"]["securityContext"] == {
        "runAsUsername": "NT-AUTORITÄT\\Lokaler Dienst", "namespaceOptions": {}}


def test_refused_pods(capsys: pytest.CaptureFixture[str]) -> None:
    # Four Pods; the first mixes an init HostProcess container with a non-HostProcess one.
    status, records = run_json(capsys, "translate", fixture("hostprocess-refused.yaml"))
    assert status == 1
    assert len(records) == 4
    assert records[0]["error"] == f"Failed to create pod sandbox: {MIXED_ERROR}"


def test_whole_fixture_directory(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "translate", str(FIXTURES), "-o", "json", "-q")
    assert status == 1  # hostprocess-refused.yaml holds pods the kubelet refuses
    assert err == ""
    records = json.loads(out)
    files = {r["source"].split("#")[0] for r in records}
    # Every file holds a pod not pinned to Linux; only node-agent is, of the 29.
    assert files == {str(path) for path in fixture_files()}
    assert len(records) == 28


@pytest.mark.corpus
def test_whole_corpus_directory(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "translate", str(CORPUS), "-o", "json", "-q")
    assert status == 1  # 28 and 29 hold pods the kubelet refuses
    assert err == ""
    files = {r["source"].split("#")[0] for r in json.loads(out)}
    assert len(files) == 40  # every corpus file holds a pod not pinned to Linux


# --- the installed console script: real streams ------------------------------------------


def console_script() -> str:
    script = Path(sys.executable).parent / "kubelet-winnet"
    assert script.is_file(), f"console script not installed next to {sys.executable}"
    return str(script)


def test_console_script(tmp_path: Path) -> None:
    script = console_script()
    stdin = yaml.safe_dump_all([CONFIG_MAP, pod("h", host_network=True), pod("p")])
    done = subprocess.run(
        [script, "translate", "-", fixture("cni-wins-legacy.yaml"),
         "-o", "json", "-q"],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert configs(json.loads(done.stdout)) == [NODE_SC, POD_SC, NODE_SC]


@pytest.mark.parametrize("command", ["translate", "check"])
def test_closed_pipe_ends_quietly_and_not_as_success(tmp_path: Path, command: str) -> None:
    many = write_yaml(tmp_path / "many.yaml",
                      *[pod(f"p{i}", host_network=True) for i in range(3000)])
    done = subprocess.run(
        f"'{console_script()}' {command} '{many}' | head -n 1; "
        'echo "status=${PIPESTATUS[0]}" >&2',
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert "status=141" in done.stderr


@pytest.mark.parametrize("command", ["translate", "explain", "check"])
def test_write_error_is_one_line(tmp_path: Path, command: str) -> None:
    if not Path("/dev/full").exists():
        if MUST_RUN:
            pytest.fail("/dev/full is missing on a CI machine")
        pytest.skip("no /dev/full on this system")
    path = write_yaml(tmp_path / "p.yaml", pod("p", host_network=True))
    with open("/dev/full", "w") as full:
        done = subprocess.run([console_script(), command, path, "-q"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert done.returncode == 2
    (line,) = without_summary(done.stderr)
    assert "cannot write output" in line
    assert "No space left on device" in line


def test_dev_zero_and_endless_stdin_stop_at_the_limit() -> None:
    done = subprocess.run([console_script(), "check", "/dev/zero"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert len(without_summary(done.stderr)) == 1
    endless = subprocess.Popen(["yes", "--", "- kind: Pod"], stdout=subprocess.PIPE)
    try:
        done = subprocess.run(
            [console_script(), "check", "-", "--max-bytes", "1000000"],
            stdin=endless.stdout, capture_output=True, text=True, timeout=120, check=False,
        )
    finally:
        endless.kill()
        endless.wait()
        assert endless.stdout is not None
        endless.stdout.close()
    assert done.returncode == 2
    (line,) = without_summary(done.stderr)
    assert "--max-bytes" in line


def test_lone_surrogates_and_odd_names_never_raise(tmp_path: Path) -> None:
    """JSON may carry a lone surrogate (\\ud800) that no UTF-8 stream can print."""
    path = tmp_path / "sur.json"
    path.write_text('{"kind": "Pod", "metadata": {"name": "a\\ud800b"}, '
                    '"spec": {"hostNetwork": true}}', encoding="utf-8")
    for argv in (["translate", "-o", "text"], ["translate", "-o", "yaml"],
                 ["translate", "-o", "json"], ["explain", "-o", "yaml"],
                 ["check", "-o", "text"], ["check", "-o", "sarif"]):
        done = subprocess.run([console_script(), *argv, str(path)], capture_output=True,
                              timeout=60, check=False)
        assert done.returncode == 0, (argv, done.stderr)  # no OS marker: info for check
        assert b"Traceback" not in done.stderr


def test_closed_stdin_is_bad_input() -> None:
    done = subprocess.run(f"'{console_script()}' check - <&-", shell=True, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    (line,) = without_summary(done.stderr)
    assert "stdin" in line


@pytest.mark.parametrize("command", ["translate", "explain", "check", "run --dry-run"])
def test_closed_stdout_or_stderr_is_one_line_and_status_2(command: str) -> None:
    """`kubelet-winnet check x >&-`: nothing can be written, which is not a success."""
    examples = REPO_ROOT / "examples" / "windows-pods.yaml"
    script = f"{console_script()} {command} {examples}"
    closed_out = subprocess.run(["bash", "-c", f"{script} >&-"], capture_output=True,
                                text=True, timeout=60, check=False)
    assert closed_out.returncode == 2
    assert closed_out.stderr == "kubelet-winnet: error: cannot write output: stdout is closed\n"
    closed_err = subprocess.run(["bash", "-c", f"{script} 2>&-"], capture_output=True,
                                text=True, timeout=60, check=False)
    assert closed_err.returncode in (0, 1)  # the run itself, its notes lost
    assert closed_err.stdout


@pytest.mark.parametrize("command", ["translate", "check", "run --dry-run"])
def test_a_gate_the_library_does_not_model_is_noted(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    examples = REPO_ROOT / "examples" / "windows-pods.yaml"
    status = main([*command.split(), "--feature-gates", "WindowsHostNetworking=false,"
                   "WindowsHostNetwork=true", str(examples)])
    _, err = capsys.readouterr()
    assert status in (0, 1)
    notes = [line for line in err.splitlines() if "--feature-gates" in line]
    assert notes == ["kubelet-winnet: note: --feature-gates: WindowsHostNetworking is not "
                     "modelled: assumed not to affect Windows sandbox networking (a kubelet "
                     "refuses a gate it does not know: check the spelling)"]
    main([*command.split(), "-q", "--feature-gates", "Foo=true", str(examples)])
    assert "--feature-gates" not in capsys.readouterr().err


@pytest.mark.parametrize("command", [["audit", "-f"], ["matrix", "--pod"], ["check"],
                                     ["run", "--dry-run"]])
def test_every_limit_an_error_suggests_is_a_flag_of_that_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    """The messages say "raise the limit with --max-depth": every command that reads
    files takes it."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("kind: Pod\nspec:\n" + "\n".join(
        "  " * (i + 1) + "k:" for i in range(150)) + " 1\n", encoding="utf-8")
    status = main([*command, str(deep)])
    err = capsys.readouterr().err
    assert status == 2
    assert "nested deeper than 100 levels (raise the limit with --max-depth)" in err
    main([*command[:1], "--max-depth", "400", *command[1:], str(deep)])
    assert "nested deeper" not in capsys.readouterr().err


def test_check_starts_without_protobuf_and_translate_loads_it(tmp_path: Path) -> None:
    """Pre-commit runs ``check`` on every commit, so it imports no module it
    does not use: the linter needs the kubelet's decisions, not CRI messages."""
    path = tmp_path / "one.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                    "  nodeSelector: {kubernetes.io/os: windows}\n  hostNetwork: true\n"
                    "  containers: [{name: c, image: i}]\n", encoding="utf-8")
    code = (
        "import io, sys, contextlib\n"
        "from kubelet_winnet.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    status = main(sys.argv[1:])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('google.protobuf',"
        " 'cri_api.runtime.v1.api_pb2', 'kubelet_winnet.cli.', 'kubelet_winnet.sources.')))\n"
        "print(status, out.getvalue().count('host-network-ignored'), *loaded)\n"
    )
    loaded = {}
    for command in ("check", "translate"):
        done = subprocess.run([sys.executable, "-c", code, command, str(path)],
                              capture_output=True, text=True, timeout=120, check=True)
        loaded[command] = done.stdout.split()
    status, warnings, *modules = loaded["check"]
    assert (status, warnings) == ("1", "1")  # the check ran and found the ignored field
    assert not [m for m in modules if m.startswith(("google.protobuf", "cri_api"))], modules
    assert {m for m in modules if m.startswith("kubelet_winnet.cli.")} <= {
        "kubelet_winnet.cli.commands", "kubelet_winnet.cli.commands.check",
        "kubelet_winnet.cli.config", "kubelet_winnet.cli.notes", "kubelet_winnet.cli.session",
        "kubelet_winnet.cli.suppressions"}
    assert "cri_api.runtime.v1.api_pb2" in loaded["translate"]


# --- the kubectl plugin says the name the user typed ----------------------------------


def _plugin() -> Path:
    script = Path(sysconfig.get_path("scripts")) / "kubectl-winnet"
    assert script.exists(), f"the kubectl-winnet console script is not installed in {script}"
    return script


def _plugin_run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_plugin()), *argv], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=60)


def test_files_checked_counts_the_files_that_were_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A file that could not be opened (missing, a dangling link) was counted as
    checked. One that was read counts, whatever it held: nothing, one bad document, or
    bytes that are not text (an input error of its own)."""
    (tmp_path / "pod.yaml").write_text(WINDOWS_POD, encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    (tmp_path / "binary.yaml").write_bytes(b"\x00\xff\xfe\x00" * 8)
    (tmp_path / "half.yaml").write_text(WINDOWS_POD + "---\n: [\n", encoding="utf-8")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    names = ("missing.yaml", "dangling.yaml", "binary.yaml", "empty.yaml", "half.yaml",
             "pod.yaml")
    status, _, err = run(capsys, "check", *(str(tmp_path / name) for name in names))
    assert status == 2
    summary = err.splitlines()[-1]
    # read: binary, empty, half and pod; errors: missing, dangling, binary, half's second
    assert summary.startswith("kubelet-winnet: 2 pods in 4 files checked: "), summary
    assert summary.endswith("; 4 input errors"), summary


def test_the_kubectl_plugin_names_itself_kubectl_winnet(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(WINDOWS_POD, encoding="utf-8")
    missing = _plugin_run("check", "nope.yaml", "pod.yaml", cwd=tmp_path)
    assert missing.returncode == 2
    # nope.yaml could not be read: an input error, not a file checked
    assert missing.stderr.splitlines() == [
        "kubectl winnet: error: nope.yaml: cannot read: No such file or directory",
        "kubectl winnet: 1 pod in 1 file checked: 0 errors, 0 warnings, 0 info, 0 ignored "
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
    # (--allow-empty: a run that read no manifest is otherwise status 2, test_check_runs.py)
    status, _, err = run_main(capsys, "check", "--allow-empty", str(chart))
    assert status == 0
    assert err.splitlines()[0] == (
        f"kubectl winnet: note: {chart}:3: a Helm template ({{{{ ... }}}}), not a manifest: "
        "check what it renders with helm template CHART | kubectl winnet check -"
    )


def test_one_large_write_to_a_closed_pipe_is_141_not_a_lost_report(tmp_path: Path) -> None:
    """CPython's BufferedWriter.write returns a short count when the pipe closes part-way
    through one large write, and TextIOWrapper drops the rest without an error: `node -o
    json` (one write of the whole report) exited 1 as if the report had been read."""
    # A report of several hundred KB: each file of the folder is one entry of "files".
    node = tmp_path / "node"
    node.mkdir()
    (node / "10-nat.conf").write_text(
        '{"cniVersion": "0.3.0", "name": "nat", "type": "nat"}', encoding="utf-8")
    for index in range(900):
        (node / f"{index:03}-{'x' * 200}.txt").write_text("notes\n", encoding="utf-8")
    done = subprocess.run(
        f"'{console_script()}' node '{node}' -o json | head -c 1 >/dev/null; "
        'echo "status=${PIPESTATUS[0]}" >&2',
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert "status=141" in done.stderr, done.stderr
