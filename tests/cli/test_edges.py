"""The command line's edges: what a directory search meets, SARIF for file names that are
not UTF-8, control characters in every text output and diagnostic, and flag errors. Each
test is an input that once broke, its exit status and the number of lines on stderr."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet_winnet._printable import printable
from kubelet_winnet.cli import main
from kubelet_winnet.sources.manifests import BadInput, Skipped, expand_paths
from tests.strategies import (
    HELM_TEMPLATE,
    MUST_RUN,
    REPO_ROOT,
    WINDOWS_POD,
    run_main,
    without_summary,
)

SARIF_SCHEMA = REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"

# A Windows pod whose hostNetwork is ignored: check reports one warning (exit 1).
POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"os": {"name": "windows"}, "hostNetwork": True,
             "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver"}]},
}


def pod_file(path: Path, namespace: str = "apps", name: str = "web") -> Path:
    doc = json.loads(json.dumps(POD))
    doc["metadata"] = {"name": name, "namespace": namespace}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # flag errors leave through argparse's exit
        status = exit_.code if isinstance(exit_.code, int) else 2
    out, err = capsys.readouterr()
    return status, out, without_summary(err)


# --- FIFOs and devices found by a directory search --------------------------------------


def test_fifo_in_a_directory_is_skipped_with_a_note(tmp_path: Path) -> None:
    """A FIFO named *.yaml blocked the walk forever (open waits for a writer). The child
    must end on its own: a timeout here is the bug."""
    pod_file(tmp_path / "a.yaml")
    os.mkfifo(tmp_path / "b.yaml")
    os.symlink("/dev/zero", tmp_path / "c.json")  # a device: endless, never a manifest
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kubelet_winnet.cli", "check", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert time.monotonic() - start < 60
    assert done.returncode == 1, done.stderr  # a.yaml's warning; nothing is bad input
    err = without_summary(done.stderr)
    assert len(err) == 2, err
    assert err[0] == (f"kubelet-winnet: note: {tmp_path / 'b.yaml'}: skipped: a FIFO, not a "
                      "regular file (a directory search reads regular files only; name it "
                      "as an argument to read it)")
    assert f"{tmp_path / 'c.json'}: skipped: a character device" in err[1]
    assert done.stdout.count("host-network-ignored") == 1


def test_a_fifo_named_as_an_argument_is_still_read(tmp_path: Path) -> None:
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "check", str(fifo)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    with open(fifo, "w", encoding="utf-8") as writer:  # as <(cat pod.yaml) would
        writer.write(json.dumps(POD))
    out, err = child.communicate(timeout=60)
    assert child.returncode == 1 and without_summary(err) == [] and "host-network-ignored" in out


def test_expand_paths_names_what_it_skips(tmp_path: Path) -> None:
    pod_file(tmp_path / "a.yaml")
    os.mkfifo(tmp_path / "b.yml")
    found = list(expand_paths([str(tmp_path)]))
    assert found[0] == str(tmp_path / "a.yaml")
    assert isinstance(found[1], Skipped) and found[1].source == str(tmp_path / "b.yml")
    assert "a FIFO" in found[1].reason


# --- a subdirectory that cannot be read ------------------------------------------------


_CANNOT_IMPORT = 77  # the child's status when nobody cannot load a module of the checkout
_AS_NOBODY = """\
import contextlib, io, os, sys
import kubelet_winnet
from kubelet_winnet.cli import main
with contextlib.redirect_stdout(io.StringIO()):  # imports what check needs, as root
    main(["check", sys.argv[1]])
package = os.path.dirname(kubelet_winnet.__file__)
if os.geteuid() == 0:  # root reads every directory: give that up
    os.setgid(65534)
    os.setuid(65534)
try:
    status = main(["check", sys.argv[2]])
except ImportError as exc:
    if os.access(package, os.R_OK | os.X_OK):
        raise
    sys.stderr.write(f"the nobody user cannot read the checkout ({package}), so {exc.name} "
                     "cannot be imported after dropping root; clone where others can read "
                     "to run this test")
    status = int(sys.argv[3])
sys.exit(status)
"""


def _check_as_nobody(warm: Path, target: Path) -> tuple[int, str, list[str]]:
    """``check target`` in a fresh interpreter that gives up root after its imports (the
    interpreter's own files may be private to root), run in ``target``: the settings
    search starts in the working directory, which nobody may not reach (a clone in a
    private ``mktemp -d`` directory)."""
    done = subprocess.run([sys.executable, "-c", _AS_NOBODY, str(warm), str(target),
                           str(_CANNOT_IMPORT)],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=target)
    if done.returncode == _CANNOT_IMPORT:  # the reason is the child's last line
        reason = done.stderr.splitlines()[-1]
        if MUST_RUN:
            pytest.fail(reason)
        pytest.skip(reason)
    return done.returncode, done.stdout, without_summary(done.stderr)


@pytest.fixture
def world_tmp() -> Iterator[Path]:
    """A directory the nobody user can reach (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="kubelet-winnet-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for root, dirs, _ in os.walk(path):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(path)


def test_unreadable_subdirectory_is_cannot_read_exit_2(world_tmp: Path, tmp_path: Path) -> None:
    """Was skipped silently (os.walk without onerror): exit 0, nothing on stderr."""
    (world_tmp / ".git").mkdir()  # the settings search stops here, as at a repository root
    pod_file(world_tmp / "a.yaml").chmod(0o644)
    locked = world_tmp / "locked"
    pod_file(locked / "b.yaml").chmod(0o644)
    warm = pod_file(tmp_path / "w.yaml")  # read as root, before the locked directory
    locked.chmod(0)
    status, out, err = _check_as_nobody(warm, world_tmp)
    assert status == 2
    assert err == [f"kubelet-winnet: error: {locked}: cannot read: Permission denied"]
    assert out.count("host-network-ignored") == 1  # a.yaml is still checked


def test_a_directory_too_deep_to_name_is_cannot_read(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The same for any reason listing fails: a path longer than PATH_MAX (ENAMETOOLONG),
    which no user, root included, can list by name."""
    pod_file(tmp_path / "a.yaml")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(20):  # 20 * 251 characters > 4096
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    status, out, err = run(capsys, "check", str(tmp_path))
    assert status == 2
    assert len(err) == 1, err
    assert err[0].startswith(f"kubelet-winnet: error: {tmp_path}/ddd")
    assert err[0].endswith(": cannot read: File name too long")
    assert out.count("host-network-ignored") == 1
    found = [p for p in expand_paths([str(tmp_path)]) if isinstance(p, BadInput)]
    assert len(found) == 1 and found[0].reason == "cannot read: File name too long"


# --- SARIF for a file name that is not UTF-8 -------------------------------------------


def test_sarif_for_a_file_name_that_is_not_utf8(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Was a traceback in urllib.parse.quote (a lone surrogate cannot be UTF-8)."""
    raw = os.fsencode(tmp_path) + b"/caf\xe9-\xff.yaml"
    with open(raw, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(POD))
    name = os.fsdecode(raw)
    status, out, err = run(capsys, "check", "-o", "sarif", name)
    assert status == 1 and err == []
    sarif = json.loads(out)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    (result,) = sarif["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.isascii() and uri.startswith("file://") and uri.endswith("/caf%E9-%FF.yaml")
    assert urllib.parse.unquote_to_bytes(uri.removeprefix("file://")) == raw
    relative = os.path.relpath(name, os.getcwd())
    status, out, _ = run(capsys, "check", "-o", "sarif", relative)
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert urllib.parse.unquote_to_bytes(uri) == os.fsencode(relative)


# --- control characters: one escaping rule, no line ever split -------------------------

# Every character str.splitlines breaks at, and terminal escape sequences.
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
FORGED = "ns\r\nkubelet-winnet: error: forged\x1b]0;retitled\x07\x0b\x0c\x1c\x1d\x1e\x85\u2028x"


def test_printable_escapes_every_line_break_and_escape_sequence() -> None:
    for char in BREAKS + "\x1b\x07\x00\x7f\x9b\u202e\ufeff\udcff":
        text = printable(f"a{char}b")
        assert text.isprintable() and len(text.splitlines()) == 1, repr(char)
        assert text.startswith("a\\") and text.endswith("b")
    assert printable("\x1b") == "\\x1b" and printable("\u2028") == "\\u2028"
    assert printable("\n\r\t") == "\\n\\r\\t" and printable("\U000e0001") == "\\U000e0001"
    assert printable("caf\u00e9 \u65e5\u672c \\x1b") == "caf\u00e9 \u65e5\u672c \\x1b"


def _lines_ok(text: str) -> None:
    for line in text.splitlines():
        assert "\x1b" not in line and "\x07" not in line, line
        assert "forged" not in line or not line.startswith("kubelet-winnet: error: forged")


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "-v"], ["translate"], ["translate", "-o", "textproto"],
    ["explain"], ["translate", "-o", "yaml"],
])
def test_a_forged_namespace_never_splits_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
) -> None:
    path = pod_file(tmp_path / "p.json", namespace=FORGED)
    status, out, err = run(capsys, *argv, str(path))
    assert status in (0, 1), err
    lines = out.splitlines()
    assert all(line.isprintable() for line in lines), [ln for ln in lines if not ln.isprintable()]
    _lines_ok(out)
    assert not any(line.startswith("kubelet-winnet: error") for line in err)
    if argv[-1] == "yaml":
        assert yaml.safe_load(out)["pod"] == f"Pod/{FORGED}/web"


def test_a_forged_file_name_in_a_diagnostic_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tmp_path / "evil\x1b]0;t\x07\u2028.yaml"
    name.write_text("kind: Pod\nspec: [\n", encoding="utf-8")
    status, _, err = run(capsys, "check", str(name))
    assert status == 2 and len(err) == 1, err
    assert err[0].isprintable() and "evil\\x1b]0;t\\x07\\u2028.yaml" in err[0]


@settings()
@given(text=st.text(alphabet=st.characters(codec=None, categories=None), max_size=20)
       | st.text(alphabet=BREAKS + "\x1b\x07\t\\ a", max_size=20))
def test_fuzz_every_text_output_keeps_each_value_on_its_line(text: str) -> None:
    """Names, namespaces and container names of any text reach every text output of
    check, translate and explain as one line each."""
    with tempfile.TemporaryDirectory() as directory:
        doc: dict[str, Any] = json.loads(json.dumps(POD))
        doc["metadata"] = {"name": "n" + text, "namespace": text or "x"}
        doc["spec"]["containers"][0]["name"] = "c" + text
        path = Path(directory) / "p.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        for argv in (["check"], ["check", "--fail-on", "info", "-v"], ["translate"],
                     ["explain"], ["translate", "-o", "textproto"]):
            out, err = _capture([*argv, str(path)])
            for line in (out + err).splitlines():
                assert line.isprintable(), (argv, line)
            assert not any(line.startswith("kubelet-winnet: error") for line in
                           err.splitlines()), err


def _capture(argv: list[str]) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) in (0, 1, 2)
    return out.getvalue(), err.getvalue()


# --- flag errors are one line ----------------------------------------------------------


@pytest.mark.parametrize(("argv", "needle"), [
    ([], "kubelet-winnet: error: the following arguments are required: COMMAND; see "
         "kubelet-winnet --help"),
    (["frobnicate"], "unknown command 'frobnicate' (the commands: translate, "),
    (["check"], "kubelet-winnet: error: check: no PATH given (use - for stdin); see "
                "kubelet-winnet check --help"),
    (["check", "x.yaml", "--bogus"], "check: unrecognized arguments: --bogus (did you mean "
     "--verbose?); see "
                                     "kubelet-winnet check --help"),
    (["translate", "x.yaml", "-o", "xml"], "translate: argument -o/--output: invalid choice"),
    (["check", "x.yaml", "--max-bytes", "0"], "check: argument --max-bytes: must be at "
                                              "least 1"),
    (["check", "x.yaml", "--max-bytes", "-5"], "check: argument --max-bytes: must be at "
                                               "least 1"),
    (["audit", "--page-size", "x\x1b[2J"], "not a whole number: 'x\\x1b[2J'"),
    (["run", "x.yaml", "--dry-run", "--node-config"], "expected one argument"),
])
def test_flag_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                  needle: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert len(err) == 1, err
    assert needle in err[0] and "usage:" not in err[0]


def test_help_still_shows_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "check", "--help")
    assert status == 0 and out.startswith("usage: kubelet-winnet check")


def test_run_escapes_what_a_runtime_sends(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A runtime's ids and error details reach run's text output escaped: no escape
    sequence reaches the terminal, no line is forged."""
    if not MUST_RUN:  # under CI grpcio must be there
        pytest.importorskip("grpc", reason="grpcio (cri extra) is not installed")
    from cri_api.runtime.v1 import api_pb2
    from kubelet_winnet.testing import FakeRuntime

    service = "/runtime.v1.RuntimeService/"
    forged = "id\x1b]0;t\x07\r\nkubelet-winnet: error: forged\u2028x"
    pod = json.loads(json.dumps(POD))
    pod["spec"].pop("hostNetwork")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(pod), encoding="utf-8")
    with FakeRuntime() as fake:
        fake.reply(service + "RunPodSandbox", api_pb2.RunPodSandboxResponse(
            pod_sandbox_id=forged))
        fake.reply(service + "PodSandboxStatus", api_pb2.PodSandboxStatusResponse(
            status=api_pb2.PodSandboxStatus(id=forged, state=api_pb2.SANDBOX_READY),
        ))
        fake.reply("/runtime.v1.ImageService/ImageStatus", api_pb2.ImageStatusResponse(
            image=api_pb2.Image(id="sha256:" + forged)))
        fake.reply(service + "CreateContainer", api_pb2.CreateContainerResponse(
            container_id=forged))
        fake.reply(service + "ContainerStatus", api_pb2.ContainerStatusResponse(
            status=api_pb2.ContainerStatus(id=forged, state=api_pb2.CONTAINER_RUNNING),
        ))
        fake.fail(service + "StartContainer", "UNKNOWN", forged)
        status, out, err = run(capsys, "run", "--runtime-endpoint", fake.endpoint, str(path))
    # The failure is on stderr too, one line, escaped like the output.
    assert status == 1 and len(err) == 1, err
    assert err[0].endswith("UNKNOWN: id\\x1b]0;t\\x07\\r\\nkubelet-winnet: error: forged\\u2028x")
    lines = out.splitlines()
    assert len(lines) == 3, lines  # the pod's header, the sandbox, the failed call
    assert all(line.isprintable() for line in lines), lines
    assert lines[1].startswith("sandbox id\\x1b]0;t\\x07\\r\\nkubelet-winnet: error: forged")
    assert lines[2].startswith("error: /runtime.v1.RuntimeService/StartContainer: UNKNOWN")


# --- wrong input of every kind ----------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "translate", "explain", "run"])
def test_a_file_of_linux_pods_is_not_said_to_hold_no_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    path = tmp_path / "linux.yaml"
    path.write_text(WINDOWS_POD.replace("os: windows", "os: linux"), encoding="utf-8")
    argv = [command, str(path)] + (["--dry-run"] if command == "run" else [])
    status, _, err = run_main(capsys, *argv)
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
    status, out, err = run_main(capsys, "run", "--dry-run", str(empty), str(chart))
    assert (status, json.loads(out)) == (0, [])
    assert err.splitlines() == [
        f"kubelet-winnet: note: {chart}:4: a Helm template ({{{{ ... }}}}), not a manifest: "
        "check what it renders with helm template CHART | kubelet-winnet run --dry-run -",
        f"kubelet-winnet: note: no Kubernetes objects in {empty}",
    ]


def test_audit_of_an_empty_dump_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run_main(capsys, "audit", "-f", os.devnull)
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
    status, _, err = run_main(capsys, "translate", str(path))
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
    status, _, err = run_main(capsys, *argv, "--feature-gates", "WindowsHostNetwork")
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
    status, _, err = run_main(capsys, "check", "--config", str(config), str(path))
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
    status, _, err = run_main(capsys, command, str(tmp_path))
    assert status == 2
    said = [line for line in err.splitlines() if " checked: " not in line]  # check's summary
    assert said == [f"kubelet-winnet: error: {tmp_path}: directory holds no .yaml, .yml or "
                    ".json file"]


def test_matrix_names_stdin_as_every_command_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    status, out, err = run_main(capsys, "matrix", "--pod", "-")
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
    fake.reply(service + "RunPodSandbox", api_pb2.RunPodSandboxResponse(pod_sandbox_id="s1"))
    fake.reply(service + "PodSandboxStatus", status)
    fake.reply("/runtime.v1.ImageService/ImageStatus", api_pb2.ImageStatusResponse(
        image=api_pb2.Image(id=image_id)))


@pytest.mark.parametrize(("image_id", "env", "why"), [
    ("", None, "container c: image 'mcr.microsoft.com/windows/nanoserver:ltsc2022' is not on "
               "the runtime (kubelet-winnet run does not pull images)"),
    ("sha256:1", "      valueFrom: {configMapKeyRef: {name: cm, key: k}}\n",
     "the kubelet does not start it: container c: CreateContainerConfigError: configmap "
     "\"cm\" not found (the pod waits in CreateContainerConfigError and the kubelet retries)"),
])
def test_run_says_on_stderr_why_a_pod_stopped_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, image_id: str, env: str | None,
    why: str,
) -> None:
    """Exit status 1 comes with its one line on stderr, as --dry-run's does."""
    from kubelet_winnet.testing import FakeRuntime

    manifest = tmp_path / "pod.yaml"
    text = WINDOWS_POD if env is None else WINDOWS_POD + "    env:\n    - name: A\n" + env
    manifest.write_text(text, encoding="utf-8")
    with FakeRuntime() as fake:
        _fake_runtime_answers(fake, image_id)
        status, out, err = run_main(capsys, "run", "--runtime-endpoint", fake.endpoint,
                               str(manifest))
    assert status == 1
    assert out.splitlines() == [f"# Pod/web ({manifest}#1)",
                                "sandbox s1 SANDBOX_READY network=POD ip=10.1.0.5",
                                why.removeprefix("the kubelet does not start it: ")
                                .split(" (the pod waits")[0]]
    assert err == f"kubelet-winnet: {manifest}:1: Pod/web: {why}\n"


@pytest.mark.parametrize("argv", [["check", "."], ["node", "x"], ["check", "-"]])
def test_a_removed_working_directory_is_said_not_a_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str]) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "cannot write output" not in err
    assert err == ("kubelet-winnet: error: the working directory cannot be used (No such file "
                   "or directory; it was removed or cannot be reached): change to a folder "
                   "that exists and run again\n")
