"""Issue 16, the command line's edges: what a directory search meets (items 8, 10), SARIF
for file names that are not UTF-8 (17), control characters in every text output and
diagnostic (19) and flag errors (21). Each test is the issue's reproducer, its exit status
and the number of lines on stderr."""

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
from kubelet_winnet.cli.input import BadInput, Skipped, expand_paths
from tests.strategies import MUST_RUN, REPO_ROOT, without_summary

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


# --- 8: FIFOs and devices found by a directory search --------------------------------------


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


# --- 10: a subdirectory that cannot be read ------------------------------------------------


_AS_NOBODY = """\
import contextlib, io, os, sys
from kubelet_winnet.cli import main
with contextlib.redirect_stdout(io.StringIO()):  # imports what check needs, as root
    main(["check", sys.argv[1]])
if os.geteuid() == 0:  # root reads every directory: give that up
    os.setgid(65534)
    os.setuid(65534)
sys.exit(main(["check", sys.argv[2]]))
"""


def _check_as_nobody(warm: Path, target: Path) -> tuple[int, str, list[str]]:
    """``check target`` in a fresh interpreter that gives up root after its imports (the
    interpreter's own files may be private to root)."""
    done = subprocess.run([sys.executable, "-c", _AS_NOBODY, str(warm), str(target)],
                          capture_output=True, text=True, timeout=120, check=False)
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


# --- 17: SARIF for a file name that is not UTF-8 -------------------------------------------


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


# --- 19: control characters: one escaping rule, no line ever split -------------------------

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


# --- 21: flag errors are one line ----------------------------------------------------------


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
    from tests.cri.test_cri import serving

    service = "/runtime.v1.RuntimeService/"
    forged = "id\x1b]0;t\x07\r\nkubelet-winnet: error: forged\u2028x"
    pod = json.loads(json.dumps(POD))
    pod["spec"].pop("hostNetwork")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(pod), encoding="utf-8")
    with serving(f"kw-h16b-{os.getpid()}.sock") as fake:
        fake.reply[service + "RunPodSandbox"] = api_pb2.RunPodSandboxResponse(
            pod_sandbox_id=forged).SerializeToString()
        fake.reply[service + "PodSandboxStatus"] = api_pb2.PodSandboxStatusResponse(
            status=api_pb2.PodSandboxStatus(id=forged, state=api_pb2.SANDBOX_READY),
        ).SerializeToString()
        fake.reply["/runtime.v1.ImageService/ImageStatus"] = api_pb2.ImageStatusResponse(
            image=api_pb2.Image(id="sha256:" + forged)).SerializeToString()
        fake.reply[service + "CreateContainer"] = api_pb2.CreateContainerResponse(
            container_id=forged).SerializeToString()
        fake.reply[service + "ContainerStatus"] = api_pb2.ContainerStatusResponse(
            status=api_pb2.ContainerStatus(id=forged, state=api_pb2.CONTAINER_RUNNING),
        ).SerializeToString()
        from grpc import StatusCode

        fake.abort[service + "StartContainer"] = (StatusCode.UNKNOWN, forged)
        status, out, err = run(capsys, "run", "--runtime-endpoint", fake.endpoint, str(path))
    # The failure is on stderr too, one line, escaped like the output.
    assert status == 1 and len(err) == 1, err
    assert err[0].endswith("UNKNOWN: id\\x1b]0;t\\x07\\r\\nkubelet-winnet: error: forged\\u2028x")
    lines = out.splitlines()
    assert len(lines) == 3, lines  # the pod's header, the sandbox, the failed call
    assert all(line.isprintable() for line in lines), lines
    assert lines[1].startswith("sandbox id\\x1b]0;t\\x07\\r\\nkubelet-winnet: error: forged")
    assert lines[2].startswith("error: /runtime.v1.RuntimeService/StartContainer: UNKNOWN")
