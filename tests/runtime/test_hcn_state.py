"""The state directory (runtime.hcn._state) in the real world: records that are damaged,
foreign or unreadable, and directories that are missing or read-only.

Each damaged record gives a StateFileError whose ``.path`` is that file, while every
other record keeps working, and ``reconcile`` reports it instead of stopping.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from kubelet_winnet.errors import StateFileError, WinnetError
from kubelet_winnet.runtime.hcn import DEFAULT_OWNER, InMemoryHcn, SandboxNetworks
from kubelet_winnet.runtime.hcn._state import record_path
from tests.strategies import MUST_RUN, sandbox_plan

POD = sandbox_plan()


def record_doc(sandbox_id: str, namespace_id: uuid.UUID) -> dict[str, object]:
    return {
        "format": 1,
        "sandbox_id": sandbox_id,
        "phase": "ready",
        "host_network": False,
        "namespace_id": str(namespace_id),
        "policy": "kep",
        "reason": "r",
    }


def _json(doc: object) -> bytes:
    return json.dumps(doc).encode()


# (what the file holds, words of the reason). The bytes of a good record are built by
# the test from the record's own fields, so "truncated" really is a prefix of ours.
DAMAGE: dict[str, tuple[Callable[[bytes, dict[str, object]], bytes], str]] = {
    "empty": (lambda good, doc: b"", "empty record file"),
    "blank": (lambda good, doc: b" \n\t", "empty record file"),
    "truncated": (lambda good, doc: good[: len(good) // 2], "truncated or not JSON"),
    "not JSON": (lambda good, doc: b"sandbox=bad\n", "truncated or not JSON"),
    "not UTF-8": (lambda good, doc: b"\xff" + good, "not UTF-8"),
    "UTF-16 with BOM": (lambda good, doc: good.decode().encode("utf-16"), "not UTF-8"),
    "a JSON list": (lambda good, doc: _json([doc]), "a JSON list, not a record"),
    "format 2": (lambda good, doc: _json({**doc, "format": 2}), "foreign schema: format 2"),
    "format true": (lambda good, doc: _json({**doc, "format": True}), "foreign schema"),
    "no format": (lambda good, doc: _json({k: v for k, v in doc.items() if k != "format"}),
                  "foreign schema: format None"),
    "string bool": (lambda good, doc: _json({**doc, "host_network": "false"}),
                    "mistyped host_network"),
    "missing id": (lambda good, doc: _json({**doc, "namespace_id": None}),
                   "mistyped namespace_id"),
    "bad GUID": (lambda good, doc: _json({**doc, "namespace_id": "not-a-guid"}),
                 "namespace_id is not a GUID"),
    "unknown phase": (lambda good, doc: _json({**doc, "phase": "x" * 10_000}), "unknown phase"),
    "5000 digits": (lambda good, doc: good[:-1] + b', "n": ' + b"9" * 5000 + b"}",
                    "truncated or not JSON"),
    "deep nesting": (lambda good, doc: b"[" * 30_000 + b"]" * 30_000, "nested too deeply"),
    "another sandbox": (lambda good, doc: _json({**doc, "sandbox_id": "good"}),
                        "another sandbox"),
    "NUL in id": (lambda good, doc: _json({**doc, "sandbox_id": "bad\x00"}),
                  "not a valid sandbox id"),
    "too large": (lambda good, doc: good + b" " * 70_000, "is not ours"),
}


@pytest.fixture
def hcn() -> InMemoryHcn:
    return InMemoryHcn()


@pytest.fixture
def networks(hcn: InMemoryHcn, tmp_path: Path) -> SandboxNetworks:
    return SandboxNetworks(hcn, tmp_path / "state")


def path_of(networks: SandboxNetworks, sandbox_id: str) -> Path:
    return record_path(Path(networks.state_dir), sandbox_id)


def check_isolated(
    hcn: InMemoryHcn, networks: SandboxNetworks, bad_path: Path, bad_namespace: uuid.UUID, why: str
) -> None:
    """The bad record fails on its own; "good" and the rest of the store keep working."""
    for call in (
        lambda: networks.get("bad"),
        lambda: networks.teardown("bad"),
        lambda: networks.setup("bad", POD),
    ):
        with pytest.raises(StateFileError) as caught:
            call()
        assert caught.value.path == str(bad_path)
        assert why in caught.value.reason
        assert isinstance(caught.value, WinnetError) and isinstance(caught.value, OSError)
        assert len(str(caught.value)) < 500  # described in bounded size
    assert networks.sandbox_ids() == ("good",)
    good = networks.get("good")
    assert good is not None and networks.setup("good", POD) == good
    # reconcile reports the bad file and acts on everything else
    report = networks.reconcile(["good"])
    assert [e.path for e in report.state_errors] == [str(bad_path)]
    report = networks.reconcile([])  # even "not live": its record cannot be read
    assert report.torn_down == ("good",)
    assert [e.path for e in report.state_errors] == [str(bad_path)]  # once per file
    assert hcn.has_namespace(bad_namespace)  # it might be named by the bad record: kept
    assert not hcn.has_namespace(good.namespace_id)
    # once the operator removes the file, the namespace is an orphan like any other
    os.unlink(bad_path) if not bad_path.is_dir() else bad_path.rmdir()
    assert networks.reconcile([]).deleted_orphans == (bad_namespace,)


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_damaged_record(
    hcn: InMemoryHcn, networks: SandboxNetworks, damage: str
) -> None:
    bad = networks.setup("bad", POD)
    networks.setup("good", POD)
    path = path_of(networks, "bad")
    make, why = DAMAGE[damage]
    path.write_bytes(make(path.read_bytes(), record_doc("bad", bad.namespace_id)))
    check_isolated(hcn, networks, path, bad.namespace_id, why)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_in_place_of_a_record_does_not_block(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    # Opening a FIFO for reading waits for a writer; the store opens non-blocking and
    # refuses anything but a regular file, so this test ends instead of hanging.
    bad = networks.setup("bad", POD)
    networks.setup("good", POD)
    path = path_of(networks, "bad")
    path.unlink()
    os.mkfifo(path)
    check_isolated(hcn, networks, path, bad.namespace_id, "not a regular file")


def test_unreadable_record(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    # CI runs as root, for whom chmod 000 changes nothing; a directory where the record
    # file belongs cannot be read as a file by anyone, root included.
    bad = networks.setup("bad", POD)
    networks.setup("good", POD)
    path = path_of(networks, "bad")
    path.unlink()
    path.mkdir()
    check_isolated(hcn, networks, path, bad.namespace_id, "not a regular file")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlink_in_place_of_a_record(
    hcn: InMemoryHcn, networks: SandboxNetworks, tmp_path: Path
) -> None:
    bad = networks.setup("bad", POD)
    networks.setup("good", POD)
    path = path_of(networks, "bad")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(elsewhere)
    check_isolated(hcn, networks, path, bad.namespace_id, "cannot open record")


def test_record_under_a_foreign_file_name(hcn: InMemoryHcn, networks: SandboxNetworks) -> None:
    """A good record copied under another name is not that sandbox's record."""
    networks.setup("good", POD)
    copy = Path(networks.state_dir) / ("sandbox-" + "0" * 64 + ".json")
    copy.write_bytes(path_of(networks, "good").read_bytes())
    report = networks.reconcile(["good"])
    assert [(e.path, e.reason) for e in report.state_errors] == [
        (str(copy), "file name does not match its sandbox id")
    ]
    assert networks.get("good") is not None


# --- the directory ---------------------------------------------------------------------------


def test_missing_state_dir_is_created(hcn: InMemoryHcn, tmp_path: Path) -> None:
    state = tmp_path / "a" / "b" / "state"
    networks = SandboxNetworks(hcn, state)
    assert state.is_dir() and stat.S_IMODE(state.stat().st_mode) == 0o700
    assert networks.setup("sb", POD).namespace_id in hcn.namespaces()


def test_state_dir_that_is_a_file(hcn: InMemoryHcn, tmp_path: Path) -> None:
    target = tmp_path / "state"
    target.write_text("not a directory")
    with pytest.raises(StateFileError) as caught:
        SandboxNetworks(hcn, target)
    assert caught.value.path == str(target)
    with pytest.raises(StateFileError) as below:
        SandboxNetworks(hcn, target / "state")
    assert below.value.path == str(target / "state")


def test_state_dir_removed_while_running(hcn: InMemoryHcn, tmp_path: Path) -> None:
    state = tmp_path / "state"
    networks = SandboxNetworks(hcn, state)
    kept = networks.setup("kept", POD)
    for path in state.iterdir():
        path.unlink()
    state.rmdir()
    before = hcn.namespaces()
    with pytest.raises(StateFileError) as caught:
        networks.setup("new", POD)
    assert caught.value.path == str(path_of(networks, "new"))
    assert hcn.namespaces() == before  # the intent could not be recorded: nothing created
    assert networks.sandbox_ids() == () and networks.get("kept") is None
    # reconcile: "kept" is live but its record cannot be written again: reported, kept
    report = networks.reconcile(["kept"])
    assert [e.path for e in report.state_errors] == [str(path_of(networks, "kept"))]
    assert hcn.has_namespace(kept.namespace_id)


def _read_only_dirs(tmp_path: Path) -> list[Path]:
    dirs = []
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)  # refuses new files to anyone but root
        dirs.append(locked)
    if sys.platform.startswith("linux") and Path("/sys").is_dir():
        # sysfs refuses to create regular files even for root: a read-only directory
        # that also holds when the tests run as root (as they do in CI).
        dirs.append(Path("/sys"))
    return dirs


def test_read_only_state_dir(tmp_path: Path) -> None:
    dirs = _read_only_dirs(tmp_path)
    if not dirs:
        if MUST_RUN:
            pytest.fail("no read-only directory to test with; CI runs on Linux with /sys")
        pytest.skip("no read-only directory available on this platform")
    for directory in dirs:
        hcn = InMemoryHcn()
        networks = SandboxNetworks(hcn, directory)  # opening is fine: nothing is written
        before = hcn.namespaces()
        with pytest.raises(StateFileError) as caught:
            networks.setup("sb", POD)
        assert caught.value.path == str(directory / path_of(networks, "sb").name)
        assert "cannot write record" in caught.value.reason
        assert hcn.namespaces() == before
        assert networks.teardown("sb") is False
        assert networks.reconcile([]) == type(networks.reconcile([]))()


def test_owned_namespace_of_an_unreadable_record_is_not_an_orphan(
    hcn: InMemoryHcn, networks: SandboxNetworks
) -> None:
    """Reconcile must not delete what a record it cannot read might name."""
    bad = networks.setup("bad", POD)
    path_of(networks, "bad").write_bytes(b"{")
    foreign = uuid.uuid4()
    hcn.add_namespace(foreign, owner=DEFAULT_OWNER, name="bad")  # a second one, same name
    report = networks.reconcile([])
    assert report.deleted_orphans == ()
    assert hcn.has_namespace(bad.namespace_id) and hcn.has_namespace(foreign)
    assert [e.path for e in report.state_errors] == [str(path_of(networks, "bad"))]
