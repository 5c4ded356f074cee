"""``kubelet-winnet run`` at its edges: limits past int64 and $(VAR) growth, a runtime
sending enum values this version does not name (proto3 enums are open), pods with
thousands of containers, and a fuzz of ``run``
against a fake CRI runtime answering with open enums, errors and garbage.

Time and memory are bounds on a child process (its own VmHWM, benchmarks/peak.py),
far from what the old behaviour took (12.6 GB and a SIGSEGV for $(VAR) doubling, 31.6 s for
4,000 containers), never timings of the library.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet import container_config, sandbox_config
from kubelet_winnet._kubelet.container_config import MAX_EXPANDED_VALUE
from kubelet_winnet.cli import main
from kubelet_winnet.testing import FakeRuntime
from tests.strategies import MUST_RUN, REPO_ROOT, error_lines

# The benchmarks' child-process prelude and peak reader (a sibling script there).
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
from peak import CONSOLE_SCRIPT, peak_mb

_SERVICE = "/runtime.v1.RuntimeService/"
_IMAGE = "/runtime.v1.ImageService/ImageStatus"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _pod(containers: list[dict[str, Any]], name: str = "web") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"containers": containers}}


def _write(path: Path, *docs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(docs)), encoding="utf-8")
    return path


def _child(*argv: str, timeout: float = 120) -> tuple[int, bytes, list[str], float, float]:
    """Run the CLI as the console script does; (status, stdout, stderr lines without the
    VmHWM report, seconds, peak MB)."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CONSOLE_SCRIPT, *argv],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = child.communicate(timeout=timeout)
    seconds = time.perf_counter() - start
    peak = peak_mb(err, resource.getrusage(resource.RUSAGE_CHILDREN))
    lines = [line for line in err.decode().splitlines() if not line.startswith("VmHWM ")]
    return child.returncode, out, lines, seconds, peak


# --- a memory limit past int64 ------------------------------------------------------------


@pytest.mark.parametrize("limit", ["8Ei", "999E", "1e30"])
def test_run_dry_run_reports_the_limit_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, limit: str
) -> None:
    path = _write(tmp_path / "p.yaml", _pod(
        [{"name": "c", "image": "i", "resources": {"limits": {"memory": limit}}}]
    ))
    code, out, err = run(capsys, "--dry-run", str(path))
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "spec.containers[0].resources.limits.memory: a limit of" in lines[0]
    assert "Traceback" not in err
    (record,) = json.loads(out)  # the array is whole, not a lone "["
    assert "does not fit the request's int64" in record["invalid"]


# --- $(VAR) growth, bounded -------------------------------------------------------------------


def test_doubling_env_is_refused_fast_and_small(tmp_path: Path) -> None:
    """A 1.3 KB file: 29 variables each "$(V{i-1})$(V{i-1})" (12.6 GB, then
    SIGSEGV, before). V20 is the first past the 1 MiB value bound."""
    env = [{"name": "V0", "value": "ab"}]
    env += [{"name": f"V{i}", "value": f"$(V{i - 1})$(V{i - 1})"} for i in range(1, 29)]
    path = _write(tmp_path / "grow.yaml", _pod([{"name": "c", "image": "i", "env": env}]))
    assert path.stat().st_size < 1500
    code, out, err, seconds, peak = _child("run", "--dry-run", str(path))
    assert code == 2, err
    assert len(err) == 1, err
    assert f'env[20].value: variable "V20" expands to more than {MAX_EXPANDED_VALUE}' in err[0]
    assert seconds < 20, seconds
    assert peak < 250, peak
    (record,) = json.loads(out)
    assert "V20" in record["invalid"]


# --- open enums from the runtime --------------------------------------------------------------


def _status(state: int, network: int, ip: str = "") -> bytes:
    reply = api_pb2.PodSandboxStatusResponse()
    reply.status.state = state  # type: ignore[assignment]
    reply.status.linux.namespaces.options.network = network  # type: ignore[assignment]
    reply.status.network.ip = ip
    return reply.SerializeToString()


def _container_status(state: int) -> bytes:
    reply = api_pb2.ContainerStatusResponse()
    reply.status.state = state  # type: ignore[assignment]
    return reply.SerializeToString()


def _answer(fake: FakeRuntime, *, state: int, network: int, container_state: int) -> None:
    for rpc, reply in {
        _SERVICE + "RunPodSandbox": api_pb2.RunPodSandboxResponse(
            pod_sandbox_id="s1").SerializeToString(),
        _SERVICE + "PodSandboxStatus": _status(state, network, "10.1.0.5"),
        _IMAGE: api_pb2.ImageStatusResponse(image=api_pb2.Image(id="sha256:1")).SerializeToString(),
        _SERVICE + "CreateContainer": api_pb2.CreateContainerResponse(
            container_id="c1").SerializeToString(),
        _SERVICE + "StartContainer": b"",
        _SERVICE + "ContainerStatus": _container_status(container_state),
        _SERVICE + "StopPodSandbox": b"",
        _SERVICE + "RemovePodSandbox": b"",
    }.items():
        fake.reply(rpc, reply)


def test_unknown_enum_values_print_as_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod([{"name": "app", "image": "img:1"}]))
    with FakeRuntime() as fake:
        _answer(fake, state=99, network=7, container_state=99)
        code, out, err = run(capsys, "--runtime-endpoint", fake.endpoint, str(path))
    assert code == 0, err
    assert err == ""
    assert "sandbox s1 99 network=7 ip=10.1.0.5\n" in out
    assert "container app c1 99\n" in out


def test_known_enum_values_keep_their_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.yaml", _pod([{"name": "app", "image": "img:1"}]))
    with FakeRuntime() as fake:
        _answer(fake, state=api_pb2.SANDBOX_READY, network=api_pb2.POD,
                container_state=api_pb2.CONTAINER_RUNNING)
        code, out, _ = run(capsys, "--runtime-endpoint", fake.endpoint, str(path))
    assert code == 0
    assert "sandbox s1 SANDBOX_READY network=POD ip=10.1.0.5\n" in out
    assert "container app c1 CONTAINER_RUNNING\n" in out


# --- linear in containers -----------------------------------------------------------------------


@pytest.mark.slow  # times the container loop (15 s against 31.6 s before): machinery
def test_dry_run_of_4000_containers_is_bounded(tmp_path: Path) -> None:
    """4,000 containers took 31.6 s (each rebuilt the sandbox and rescanned the pod)."""
    count = 4000
    path = tmp_path / "big.json"
    containers = [{"name": f"c{i}", "image": "img:1"} for i in range(count)]
    path.write_text(json.dumps(_pod(containers)), encoding="utf-8")
    code, out, err, seconds, peak = _child("run", "--dry-run", "--quiet", str(path))
    assert code == 0, err
    assert err == []  # --quiet: not even the note naming the assumed node
    (record,) = json.loads(out)
    names = [c["config"]["metadata"]["name"] for c in record["createContainer"]]
    assert names == [f"c{i}" for i in range(count)]
    assert seconds < 15, seconds
    assert peak < 400, peak


@pytest.mark.slow  # counts internal calls, not what the user gets: machinery
def test_the_sandbox_is_built_once_per_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Work per pod, counted: one sandbox build and one pass over the containers (to
    index them) however many containers there are."""
    builds: list[int] = []
    real = sandbox_config.build_sandbox_config

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(container_config, "build_sandbox_config", counting)
    scans: list[int] = []
    real_find = container_config.ContainerBuilder.find

    def find(self: Any, name: str) -> Any:
        if self._index is None:
            scans.append(1)
        return real_find(self, name)

    monkeypatch.setattr(container_config.ContainerBuilder, "find", find)
    containers = [{"name": f"c{i}", "image": "img:1"} for i in range(50)]
    path = _write(tmp_path / "p.yaml", _pod(containers))
    code, out, _ = run(capsys, "--dry-run", str(path))
    assert code == 0
    assert len(json.loads(out)[0]["createContainer"]) == 50
    assert (len(builds), len(scans)) == (1, 1)


# --- fuzz: run against a fake CRI runtime ----------------------------------------------------

_METHODS = ("RunPodSandbox", "PodSandboxStatus", "ImageStatus", "CreateContainer",
            "StartContainer", "ContainerStatus", "StopPodSandbox", "RemovePodSandbox")
_CODES = [grpc.StatusCode.UNKNOWN, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INTERNAL,
          grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INVALID_ARGUMENT]
_INT32 = st.integers(-(2**31), 2**31 - 1)


@st.composite
def _replies(draw: st.DrawFn) -> dict[str, Any]:
    """Per method: a well-formed reply (enums anywhere in int32), garbage bytes, or a
    gRPC error with arbitrary details."""
    plan: dict[str, Any] = {}
    for method in _METHODS:
        kind = draw(st.sampled_from(["ok", "ok", "ok", "garbage", "error"]))
        if kind == "garbage":
            plan[method] = ("garbage", draw(st.binary(max_size=64)))
        elif kind == "error":
            plan[method] = ("error", draw(st.sampled_from(_CODES)),
                            draw(st.text(max_size=80)))
        else:
            plan[method] = ("ok", draw(_INT32), draw(_INT32), draw(st.text(max_size=20)))
    return plan


def _ok_reply(method: str, first: int, second: int, text: str) -> bytes:
    if method == "RunPodSandbox":
        return api_pb2.RunPodSandboxResponse(pod_sandbox_id=text or "s").SerializeToString()
    if method == "PodSandboxStatus":
        return _status(first, second)
    if method == "ImageStatus":
        image = api_pb2.Image(id=text) if first % 2 else None
        return api_pb2.ImageStatusResponse(image=image).SerializeToString()
    if method == "CreateContainer":
        return api_pb2.CreateContainerResponse(container_id=text).SerializeToString()
    if method == "ContainerStatus":
        return _container_status(first)
    return b""


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plan=_replies(), cleanup=st.booleans())
def test_run_against_a_hostile_runtime_exits_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, plan: dict[str, Any], cleanup: bool
) -> None:
    """Whatever the runtime answers: exit 0 (it all worked), 1 (a call failed) or 2 (it
    cannot be reached), one line per failure, never a traceback; an unknown enum value
    prints as its number."""
    path = tmp_path / "p.yaml"
    if not path.exists():
        _write(path, _pod([{"name": "app", "image": "img:1"}, {"name": "side", "image": "i"}]))
    with FakeRuntime() as fake:
        for method, answer in plan.items():
            where = _IMAGE if method == "ImageStatus" else _SERVICE + method
            if answer[0] == "garbage":
                fake.reply(where, answer[1])
            elif answer[0] == "error":
                fake.fail(where, answer[1].name, answer[2])
            else:
                fake.reply(where, _ok_reply(method, *answer[1:]))
        argv = ["--runtime-endpoint", fake.endpoint, str(path)]
        code, out, err = run(capsys, *argv, *(["--cleanup"] if cleanup else []))
    assert code in (0, 1, 2), (code, out, err)
    if code == 2:  # UNAVAILABLE reads as an unreachable runtime: one error, the run stops
        assert err.startswith("kubelet-winnet: error: cannot reach the runtime at ")
        assert err.count("\n") == 1, err
        return
    assert "Traceback" not in err and "Traceback" not in out
    # Runtime failures go to the report on stdout, and each as one line on stderr; so does
    # an image the runtime says it does not have (an empty ImageStatus).
    assert all(line.startswith("kubelet-winnet: ") and (
        "the runtime failed: " in line or "is not on the runtime" in line)
               for line in err.splitlines()), err
    sandbox = plan["PodSandboxStatus"]
    if code == 0 and sandbox[0] == "ok" and sandbox[1] not in api_pb2.PodSandboxState.values():
        assert f" {sandbox[1]} network=" in out


def test_a_runtime_that_hangs_ends_at_the_request_timeout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A runtime that never answers RunPodSandbox (it sleeps past the deadline): the call
    fails at --runtime-request-timeout (the kubelet's flag name) with one line on stderr
    and exit 1, instead of waiting for the runtime."""
    import time

    path = tmp_path / "p.yaml"
    _write(path, _pod([{"name": "app", "image": "img:1"}]))
    with FakeRuntime() as fake:
        fake.stall("RunPodSandbox", 8.0)
        start = time.monotonic()
        code, _out, err = run(capsys, "--runtime-endpoint", fake.endpoint,
                              "--runtime-request-timeout", "500ms", str(path))
        elapsed = time.monotonic() - start
    assert code == 1, err
    assert elapsed < 6.0  # the deadline, not the runtime's 8 s, ended the call
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert "the runtime failed: /runtime.v1.RuntimeService/RunPodSandbox: DEADLINE_EXCEEDED" \
        in lines[0]


@pytest.mark.parametrize(("value", "reason"), [
    ("0", "must be more than 0"), ("-1s", "must not be negative"), ("soon", "not a timeout"),
])
def test_a_bad_runtime_request_timeout_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str, reason: str
) -> None:
    path = tmp_path / "p.yaml"
    _write(path, _pod([{"name": "app", "image": "img:1"}]))
    with pytest.raises(SystemExit) as exit_:  # a flag error leaves through argparse
        main(["run", "--runtime-endpoint", "unix:///nonexistent.sock",
              f"--runtime-request-timeout={value}", str(path)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == ""
    assert err.count("\n") == 1 and reason in err and "--runtime-request-timeout" in err, err


# --- the copy of standard input -----------------------------------------------------------
#
# `run` reads its input twice (ConfigMaps first, then the pods), so stdin is copied to a
# temporary file first. Expected texts are the OS's own strerror for the errno.

_WINDOWS_POD = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
                "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                         "containers": [{"name": "c", "image": "i"}]}}


def _pods_text(size: int) -> bytes:
    """YAML documents of Windows pods, at least ``size`` bytes, not a multiple of 1 MiB
    (a copy cut at a 1 MiB read then ends inside a document)."""
    one = ("---\n" + yaml.safe_dump(_WINDOWS_POD)).encode()
    text = one * (size // len(one) + 1)
    assert len(text) % (1 << 20)
    return text


def _copy_error(code: int) -> str:
    return f"kubelet-winnet: error: cannot copy standard input: {os.strerror(code)}"


def _needs(path: str, what: str) -> None:
    """Skip without ``path`` (``what`` says why it is needed); under CI, fail."""
    if not os.path.exists(path):
        reason = f"needs {path}: {what}"
        if MUST_RUN:
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.mark.parametrize("size", [1_000, 3 << 20])  # one buffered write; several 1 MiB ones
def test_a_full_disk_under_the_stdin_copy_is_said_and_nothing_is_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, size: int,
) -> None:
    """The copy lands on /dev/full (every write: ENOSPC): exit 2 with the OS's reason,
    nothing printed, no pod read from what was left of stdin, no blame on the YAML."""
    _needs("/dev/full", "a device whose every write fails with ENOSPC (Linux, FreeBSD)")
    import kubelet_winnet.cli.commands.run as run_module

    monkeypatch.setattr(run_module, "_temporary_copy",
                        lambda: open("/dev/full", "w+b"))  # noqa: SIM115 - closed by run
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_pods_text(size))))
    code, out, err = run(capsys, "--dry-run", "-")
    assert (code, out) == (2, "")
    assert error_lines(err) == [_copy_error(errno.ENOSPC)]


def test_a_file_size_limit_under_the_stdin_copy_is_said(tmp_path: Path) -> None:
    """RLIMIT_FSIZE below the input (SIGXFSZ ignored, as Python does): the write fails
    with EFBIG part-way through a 3 MiB input that is not a multiple of 1 MiB."""
    text = _pods_text(3 << 20)
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    # The limit is set by the child itself: a preexec_fn runs Python between fork and
    # exec, which a parent with threads (pytest-xdist's) may abort.
    limited = (
        "import resource, runpy, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))\n"
        "sys.argv = ['kubelet-winnet', 'run', '--dry-run', '-']\n"
        "runpy.run_module('kubelet_winnet.cli', run_name='__main__')\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", limited],
        input=text, capture_output=True, timeout=120, env=env, check=False,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert error_lines(done.stderr.decode()) == [_copy_error(errno.EFBIG)]
    assert os.listdir(scratch) == []


# A child that gives up root after its imports (a read-only directory binds root in
# nothing); argv: a pod file to warm up with, the temporary directory to pin ("" none).
_AS_NOBODY = """\
import contextlib, io, os, sys, tempfile
from kubelet_winnet.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["run", "--dry-run", sys.argv[1]])
tempfile.tempdir = sys.argv[2] or None
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
sys.exit(main(["run", "--dry-run", "-"]))
"""


@pytest.mark.parametrize("pinned", [False, True])
def test_a_read_only_temporary_directory(tmp_path: Path, pinned: bool) -> None:
    """$TMPDIR read-only: Python's tempfile takes the next usable directory (its
    documented search), and every pod is read. No usable directory at all (the
    directory pinned as tempfile's own): exit 2, "Permission denied", nothing read."""
    base = Path(tempfile.mkdtemp(prefix="kubelet-winnet-"))
    try:
        base.chmod(0o755)
        read_only = base / "ro"
        read_only.mkdir(mode=0o555)
        read_only.chmod(0o555)
        pod = base / "pod.yaml"
        pod.write_bytes(_pods_text(1))
        pod.chmod(0o644)
        env = {**os.environ, "TMPDIR": str(read_only), "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-c", _AS_NOBODY, str(pod), str(read_only) if pinned else ""],
            input=_pods_text(20_000), capture_output=True, timeout=120, env=env, check=False,
        )
        assert os.listdir(read_only) == []
    finally:
        shutil.rmtree(base)
    if pinned:
        assert (done.returncode, done.stdout) == (2, b"")
        assert error_lines(done.stderr.decode()) == [_copy_error(errno.EACCES)]
    else:
        assert done.returncode == 0, done.stderr
        records = json.loads(done.stdout)
        assert len(records) == _pods_text(20_000).count(b"---\n")
        assert records[0]["source"] == "<stdin>#1"


def _holds_a_file_in(pid: int, directory: Path) -> bool:
    """Whether process ``pid`` has a file in ``directory`` open (unlinked or not)."""
    fds = Path(f"/proc/{pid}/fd")
    with contextlib.suppress(OSError):
        for fd in fds.iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd).startswith(str(directory) + os.sep):
                    return True
    return False


# Python's own action for SIGINT (KeyboardInterrupt), the system's for the others.
_WITH_DEFAULT_ACTION = (
    "import runpy, signal\n"
    "signal.signal({signum}, signal.default_int_handler if {signum} == signal.SIGINT "
    "else signal.SIG_DFL)\n"
    "runpy.run_module('kubelet_winnet.cli', run_name='__main__', alter_sys=True)"
)


@pytest.mark.parametrize(("signum", "status"), [
    (signal.SIGTERM, -signal.SIGTERM),  # killed by the signal: a shell says 128 + 15
    (signal.SIGHUP, -signal.SIGHUP),
    (signal.SIGINT, 130),  # KeyboardInterrupt: the CLI exits 128 + 2 (cli/__init__.py)
])
def test_no_signal_leaves_the_stdin_copy_behind(
    tmp_path: Path, signum: int, status: int,
) -> None:
    """A signal while stdin is being copied (the input half sent, stdin still open)
    leaves nothing in $TMPDIR: the copy was never a name there to remove."""
    _needs("/proc/self/fd", "/proc, to see the copy being written")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    # The CLI as `python -m` runs it, with the signal's default action: a disposition
    # inherited from the caller (nohup ignores SIGHUP; a shell's background job, SIGINT)
    # would keep it from ever arriving, and the test waited 60 s for nothing.
    child = subprocess.Popen(
        [sys.executable, "-c", _WITH_DEFAULT_ACTION.format(signum=int(signum)),
         "run", "--dry-run", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    try:
        assert child.stdin is not None
        child.stdin.write(_pods_text(256 << 10))
        child.stdin.flush()
        deadline = time.monotonic() + 60
        while not _holds_a_file_in(child.pid, scratch):
            assert time.monotonic() < deadline, "the copy never started"
            assert child.poll() is None, child.stderr.read() if child.stderr else b""
            time.sleep(0.02)
        time.sleep(0.1)  # the written part is in the copy: the child waits for more
        child.send_signal(signum)
        assert child.wait(timeout=60) == status
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdin, child.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    assert os.listdir(scratch) == []
