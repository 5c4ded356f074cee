"""``audit -o html``'s spool and ``--output-file``, run as a user runs them: the console
entry point in a child process, a real full ``$TMPDIR`` (a 64 KiB tmpfs in a mount
namespace of its own, so nothing outlives the test) and real signals. The page's pods
wait in SQLite's anonymous database, whose file SQLite creates 0600 and removes as soon as
it is opened; the output file is written beside its target and renamed once whole."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

# Enough listed pods (hostNetwork IGNORED: each is a row; a group of one node shows
# 2,000) that SQLite's page cache of about 2 MB spills to its file in $TMPDIR.
PODS = 12_000
NODES = 8


def _items(count: int) -> list[dict[str, Any]]:
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"win-{n}"},
              "status": {"nodeInfo": {"operatingSystem": "windows",
                                      "kubeletVersion": "v1.34.1",
                                      "containerRuntimeVersion": "containerd://2.1.3"}}}
             for n in range(NODES)]
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"iis-{i:06d}", "namespace": "web"},
             "spec": {"nodeName": f"win-{i % NODES}", "hostNetwork": True,
                      "containers": [{"name": "c", "image": "mcr.microsoft.com/iis"}]}}
            for i in range(count)]
    return [*nodes, *pods]


def _dump(path: Path, count: int = PODS) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _items(count)}),
                    encoding="utf-8")
    return path


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "kubelet_winnet.cli", *argv]


def _on_a_full_tmpdir(command: list[str], tmpdir: Path, env: dict[str, str],
                      ) -> subprocess.CompletedProcess[str]:
    """``command`` with TMPDIR a 64 KiB tmpfs, in a mount namespace of its own."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a tmpfs of its own needs root and unshare (CI runs as root)")
    script = (f'mount -t tmpfs -o size=64k tmpfs "{tmpdir}" && '
              f'TMPDIR="{tmpdir}" exec "$@"')
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                           "sh", *command], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    if "mount:" in done.stderr and done.returncode == 32:
        pytest.skip(f"no tmpfs here: {done.stderr.strip()}")
    return done


def test_a_full_tmpdir_is_one_error_line_exit_2_and_no_page(tmp_path: Path) -> None:
    dump = _dump(tmp_path / "dump.json")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = _on_a_full_tmpdir(_cli("audit", "-f", str(dump), "-o", "html"), tmpdir, env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""  # no page rather than part of one
    assert "Traceback" not in done.stderr
    assert done.stderr == (
        f"kubelet-winnet: error: -o html: the page is not written: its pods could not be "
        f"held in $TMPDIR ({tmpdir}) until the input ended: database or disk is full; free "
        "space there, or set TMPDIR to a folder with room\n")


def test_a_full_tmpdir_leaves_the_output_file_as_it_was(tmp_path: Path) -> None:
    dump = _dump(tmp_path / "dump.json")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    target = out / "audit.html"
    target.write_text("yesterday's page\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = _on_a_full_tmpdir(_cli("audit", "-f", str(dump), "-o", "html",
                                  "--output-file", str(target)), tmpdir, env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "database or disk is full" in done.stderr
    assert done.stderr.rstrip().endswith(f"; {target} is left as it was")
    assert target.read_text(encoding="utf-8") == "yesterday's page\n"
    assert os.listdir(out) == ["audit.html"]  # no temporary file beside it


def test_an_output_file_on_a_full_filesystem_is_not_half_written(tmp_path: Path) -> None:
    """The page's own file system fills: the output's write fails, the target is not
    created, and nothing is left beside it."""
    dump = _dump(tmp_path / "dump.json", 2_000)  # a page of about 1 MB
    full = tmp_path / "full"
    full.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    target = full / "audit.html"
    # TMPDIR is the full tmpfs too: the spool of 2,000 rows stays in SQLite's cache.
    done = _on_a_full_tmpdir(_cli("audit", "-f", str(dump), "-o", "html",
                                  "--output-file", str(target)), full, env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr == "kubelet-winnet: error: cannot write output: No space left on device\n"
    assert not full.exists() or os.listdir(full) == []  # the mount is gone with its namespace


def _spool_of(pid: int, tmpdir: Path, deadline: float) -> Path:
    """The child's open spool file in ``tmpdir`` (its /proc fd link), once it has one."""
    while time.monotonic() < deadline:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith(f"{tmpdir}/"):
                return Path(f"/proc/{pid}/fd/{fd}")
        time.sleep(0.05)
    raise AssertionError("the child never spooled a pod to $TMPDIR")


# One case here, the other seven under CI (about 1.5 s each): the signal a handler
# catches (SIGTERM, to stdout); SIGKILL, which no handler sees, is among the seven.
_SLOW = pytest.mark.slow


@pytest.mark.parametrize(("signum", "to_file"), [
    (signal.SIGTERM, False),
    *(pytest.param(signum, to_file, marks=_SLOW) for signum, to_file in [
        (signal.SIGKILL, True), (signal.SIGTERM, True), (signal.SIGHUP, False),
        (signal.SIGHUP, True), (signal.SIGINT, False), (signal.SIGINT, True),
        (signal.SIGKILL, False)]),
])
def test_every_signal_that_ends_the_run_leaves_nothing_in_tmpdir(
    tmp_path: Path, signum: signal.Signals, to_file: bool
) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to find the child's open files")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    target = out / "audit.html"
    argv = ["audit", "-f", "-", "-o", "html"] + (["--output-file", str(target)] if to_file
                                                  else [])
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": os.pathsep.join(sys.path)}
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": _items(PODS)})
    child = subprocess.Popen(_cli(*argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    try:
        assert child.stdin is not None
        child.stdin.write(text[:-3].encode())  # every pod but the end: the run waits
        child.stdin.flush()
        spool = _spool_of(child.pid, tmpdir, time.monotonic() + 120)
        assert os.readlink(spool).endswith(" (deleted)")  # removed as soon as it was made
        assert os.stat(spool).st_mode & 0o777 == 0o600  # readable by its owner only
        assert os.listdir(tmpdir) == []
        child.send_signal(signum)
        stdout, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # The run ends by the signal (SIGINT: Python's KeyboardInterrupt, exit 130).
    assert child.returncode in ((130,) if signum == signal.SIGINT else (-signum,)), stderr
    assert b"Traceback" not in stderr
    assert os.listdir(tmpdir) == []
    assert stdout == b""
    if signum != signal.SIGKILL:  # only SIGKILL can leave the file beside the target
        assert os.listdir(out) == []
