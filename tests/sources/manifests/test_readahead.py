"""Files read ahead by worker processes (``sources/manifests/readahead.py``): each file gives what
``read_source`` gives in this process, document for document and line for line; a dead
worker's files are read here; workers never outlive the run.

The tests that fork run in a child Python (a clean process with one thread, as the
console script is), so that pytest's own state never decides whether a worker starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubelet_winnet.sources.manifests import Limits
from kubelet_winnet.sources.manifests.readahead import MAX_FILE_BYTES, MIN_FILES, ReadAhead
from tests.strategies import POD_YAML, write_input

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or sys.platform == "darwin",
    reason="workers are forked: POSIX, not macOS",
)

WINDOWS_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w{n}\nspec:\n"
    "  nodeSelector: {{kubernetes.io/os: windows}}\n  hostNetwork: true\n"
    "  containers:\n  - name: c\n    image: i\n    ports: [{{containerPort: 80, hostPort: 81}}]\n"
)


def _tree(tmp_path: Path) -> list[str]:
    """Files of every kind the reader meets, padded with pods past MIN_FILES."""
    files: dict[str, str | bytes] = {
        "a-multi.yaml": POD_YAML + "---\n" + POD_YAML.replace("name: p", "name: q"),
        "b-list.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + POD_YAML.replace(
            "\n", "\n  ").rstrip() + "\n",
        "c-alias.yaml": "x: &p\n- kind: Pod\n  spec: {hostNetwork: true}\n"
                        "kind: List\nitems: *p\n",
        "d-pod.json": json.dumps({"kind": "Pod", "metadata": {"name": "j"},
                                  "spec": {"hostNetwork": True}}, indent=1),
        "e-list.json": json.dumps({"kind": "List", "items": [
            {"kind": "Pod", "spec": {"hostNetwork": True}}, 7]}, indent=2),
        "f-syntax.yaml": POD_YAML + "---\nspec: [\n",
        "g-binary.yaml": b"\x00\x01\x02kind: Pod\n",
        "h-utf16.yaml": b"\xff\xfe" + POD_YAML.encode("utf-16-le"),
        "i-bom.yaml": b"\xef\xbb\xbf" + POD_YAML.encode(),
        "j-empty.yaml": "",
        "k-comments.yaml": "# nothing\n---\n",
        "l-deep.json": "[" * 150 + "]" * 150,
        "m-bomb.yaml": "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a]\n"
                       "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n",
        "n-duplicate.json": '{"kind": "Pod", "kind": "Pod"}',
        "o-large.yaml": "kind: List\nitems:\n" + "- kind: Pod\n  metadata: {name: x}\n"
                        * (MAX_FILE_BYTES // 30),
    }
    for n in range(MIN_FILES + 8):
        files[f"z{n:03}.yaml"] = WINDOWS_POD.format(n=n)
    for name, text in files.items():
        write_input(tmp_path, name, text)
    (tmp_path / "y-zero.yaml").symlink_to("/dev/zero")  # not a regular file: read here
    paths = sorted(str(path) for path in tmp_path.iterdir())
    return [*paths, str(tmp_path / "y-gone.yaml")]  # listed, then gone: cannot read


# Run in a child Python: every path read through a ReadAhead and by read_source, each
# document compared (kind, numbers, value, the line of every field, BadInput as is).
_COMPARE = """
import json, os, signal, sys
from kubelet_winnet.sources.manifests import Document, Limits, read_source
from kubelet_winnet.sources.manifests.readahead import ReadAhead

def fields(value, at=()):
    yield at
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, child in items:
        yield from fields(child, (*at, key))

def seen(found):
    if isinstance(found, Document):
        return ["doc", found.source, found.document, found.item, found.line, found.value,
                [found.line_of(path) for path in fields(found.value)], found.commented]
    return ["bad", str(found)]

paths, workers, how = json.loads(sys.argv[1])
limits = Limits(max_bytes=4 * 1024 * 1024, max_alias_nodes=100)
if how == "no-fork":  # the system refuses another process
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")
    os.fork = refused
if how == "thread":  # a second thread: a lock it holds would stay held in a worker
    import threading
    done = threading.Event()
    threading.Thread(target=done.wait, daemon=True).start()
ahead = ReadAhead(paths, limits, workers)
started = list(ahead.pids)
if how == "thread":
    done.set()
if how == "kill":
    os.kill(started[0], signal.SIGKILL)
asked = paths[::-1] if how == "out-of-order" else paths
mismatched = []
for path in asked:
    if [seen(f) for f in ahead.read(path)] != [seen(f) for f in read_source(path, limits)]:
        mismatched.append(path)
ahead.close()
gone = []
for pid in started:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        gone.append(pid)
print(json.dumps({"started": len(started), "mismatched": mismatched,
                  "reaped": len(gone) == len(started)}))
"""


def _compare(paths: list[str], workers: int, how: str = "") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _COMPARE, json.dumps([paths, workers, how])],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_workers_hand_over_what_read_source_gives(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    assert _compare(paths, 2) == {"started": 2, "mismatched": [], "reaped": True}


def test_a_dead_workers_files_are_read_here(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    assert _compare(paths, 1, "kill") == {"started": 1, "mismatched": [], "reaped": True}


def test_no_worker_when_the_system_refuses_a_process(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    assert _compare(paths, 2, "no-fork") == {"started": 0, "mismatched": [], "reaped": True}


def test_no_worker_beside_a_second_thread(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    assert _compare(paths, 2, "thread") == {"started": 0, "mismatched": [], "reaped": True}


def test_files_asked_out_of_order_are_read_here(tmp_path: Path) -> None:
    """A caller that strays from the plan gets what read_source gives, every time."""
    paths = _tree(tmp_path)
    assert _compare(paths, 2, "out-of-order") == {
        "started": 2, "mismatched": [], "reaped": True}


def test_few_files_or_no_workers_are_read_here(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    with ReadAhead(paths[: MIN_FILES - 1], Limits(), 2) as few:
        assert few.pids == ()
    with ReadAhead(paths, Limits(), 0) as none:
        assert none.pids == ()


def test_closing_early_ends_and_reaps_the_workers(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    script = (
        "import json, os, sys\n"
        "from kubelet_winnet.sources.manifests import Limits\n"
        "from kubelet_winnet.sources.manifests.readahead import ReadAhead\n"
        "paths = json.loads(sys.argv[1])\n"
        "ahead = ReadAhead(paths, Limits(max_bytes=4096), 2)\n"
        "pids = ahead.pids\n"
        "list(ahead.read(paths[0]))\n"
        "ahead.close()\n"
        "alive = []\n"
        "for pid in pids:\n"
        "    try:\n"
        "        os.kill(pid, 0)\n"
        "        alive.append(pid)\n"
        "    except ProcessLookupError:\n"
        "        pass\n"
        "print(len(pids), alive)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, json.dumps(paths)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    assert done.stdout.split() == ["2", "[]"]


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubelet_winnet.cli", "check", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


def test_check_says_the_same_with_and_without_workers(tmp_path: Path) -> None:
    """Order matters to a run (a RuntimeClass read before a pod is known to it, notes come
    in input order): the workers change none of it."""
    _tree(tmp_path)
    os.unlink(tmp_path / "y-zero.yaml")  # a directory search skips it anyway, with a note
    write_input(tmp_path, "a0-runtimeclass.yaml",
                "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: hv}\n"
                "handler: runhcs-wcow-hypervisor\n")
    write_input(tmp_path, "z999.yaml", WINDOWS_POD.format(n=999).replace(
        "spec:\n", "spec:\n  runtimeClassName: hv\n", 1))
    runs = {jobs: _check(str(tmp_path), "-o", "json", "--jobs", jobs, "--max-bytes",
                         str(4 * 1024 * 1024)) for jobs in ("0", "1", "3")}
    first = runs["0"]
    assert first.returncode == 2  # the bad files are input errors
    assert json.loads(first.stdout)["summary"]["podsChecked"] > MIN_FILES
    for jobs in ("1", "3"):
        assert (runs[jobs].returncode, runs[jobs].stdout, runs[jobs].stderr) == (
            first.returncode, first.stdout, first.stderr)


@pytest.mark.parametrize(("value", "reason"), [
    ("-1", "must be 0 or more"), ("two", "not a whole number: 'two'"),
])
def test_jobs_must_be_a_whole_number(tmp_path: Path, value: str, reason: str) -> None:
    done = _check(str(write_input(tmp_path, "p.yaml", POD_YAML)), "--jobs", value)
    assert done.returncode == 2
    assert f"argument -j/--jobs: {reason}" in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_workers_do_not_outlive_a_run_ended_by_a_signal(tmp_path: Path, signum: int) -> None:
    for n in range(3000):
        write_input(tmp_path, f"p{n:04}.yaml", WINDOWS_POD.format(n=n))
    child = subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "check", str(tmp_path), "--jobs", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
        start_new_session=True,
    )
    time.sleep(0.6)  # started, and reading
    child.send_signal(signum)
    child.wait(timeout=60)
    deadline = time.monotonic() + 20
    while True:  # a worker left behind would still be in the run's process group
        try:
            os.killpg(child.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a worker outlived the run"
        time.sleep(0.05)


def test_a_closed_pipe_ends_the_run_and_its_workers(tmp_path: Path) -> None:
    """``check DIR -o json | head -c 100``: the run ends as a closed pipe ends it (141),
    and no worker is left reading."""
    for n in range(400):
        write_input(tmp_path, f"p{n:04}.yaml", WINDOWS_POD.format(n=n))
    check = subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "check", str(tmp_path), "-o", "json",
         "--jobs", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, start_new_session=True,
    )
    assert check.stdout is not None
    check.stdout.read(100)
    check.stdout.close()
    assert check.wait(timeout=60) == 141
    deadline = time.monotonic() + 20
    while True:
        try:
            os.killpg(check.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a worker outlived the run"
        time.sleep(0.05)
