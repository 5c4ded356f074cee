"""``sources/manifests/paths.py``: which files the arguments name, and the one way every
file any command reads is opened (:func:`open_input`): without waiting, then looked at,
so what a search listed as a regular file is one when it is read."""

from __future__ import annotations

import os
import pickle
import socket
import threading
from pathlib import Path

import pytest

from kubelet_winnet.errors import NotRegularFileError, WinnetError
from kubelet_winnet.sources.manifests import (
    BadInput,
    Named,
    expand_paths,
    head_of,
    open_input,
    read_source,
)
from tests.strategies import POD_YAML, without_waiting_on

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")


def _replaced_by_a_fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def test_a_file_a_search_listed_that_is_a_fifo_when_opened_is_refused_not_waited_on(
        tmp_path: Path) -> None:
    """A directory search listed b.yaml as a regular file; replaced by a FIFO before it
    was read, the open waited for a writer for ever."""
    (tmp_path / "a.yaml").write_text(POD_YAML, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(POD_YAML, encoding="utf-8")
    listed = list(expand_paths([str(tmp_path)]))
    assert listed == [str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]
    fifo = _replaced_by_a_fifo(tmp_path / "b.yaml")
    found = without_waiting_on([fifo], lambda: [list(read_source(str(p))) for p in listed])
    assert [type(f).__name__ for f in found[0]] == ["Document"]
    [refused] = found[1]
    assert isinstance(refused, BadInput)
    assert str(refused) == f"{fifo}: cannot read: a FIFO, not a regular file, when opened"


def test_a_file_named_as_an_argument_that_becomes_a_fifo_after_the_look_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Named, a FIFO is read as a stream only when it was one when looked at: a regular
    file there, replaced after that look and before the open, is refused."""
    path = tmp_path / "p.yaml"
    path.write_text(POD_YAML, encoding="utf-8")
    [named] = list(expand_paths([str(path)]))
    assert isinstance(named, Named)
    with open_input(named, streams=True) as file:
        assert file.read() == POD_YAML.encode()
    looked = os.stat(path)  # what the look saw: a regular file
    _replaced_by_a_fifo(path)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: looked if str(p) == str(path)
                        else real_stat(p, *a, **k))
    with pytest.raises(NotRegularFileError) as raised:
        without_waiting_on([path], lambda: open_input(named, streams=True))
    assert raised.value.kind == "a FIFO"


@pytest.mark.parametrize("kind", ["a FIFO", "a socket", "a character device", "a directory"])
def test_open_input_refuses_what_is_not_a_regular_file_and_names_it(
        tmp_path: Path, kind: str) -> None:
    fifos: list[Path] = []
    server = None
    if kind == "a FIFO":
        path = tmp_path / "f.yaml"
        os.mkfifo(path)
        fifos.append(path)
    elif kind == "a socket":
        path = tmp_path / "s.yaml"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    elif kind == "a character device":
        path = Path(os.devnull)
    else:
        path = tmp_path
    try:
        if kind == "a socket":  # a socket cannot be opened at all (ENXIO): said so
            with pytest.raises(OSError, match="No such device or address"):
                open_input(str(path))
            return
        with pytest.raises(NotRegularFileError) as raised:
            without_waiting_on(fifos, lambda: open_input(str(path)))
    finally:
        if server is not None:
            server.close()
    error = raised.value
    assert (error.path, error.kind) == (str(path), kind)
    assert isinstance(error, WinnetError) and isinstance(error, OSError)
    assert error.strerror == f"{kind}, not a regular file, when opened"
    assert str(error) == f"{path}: {kind}, not a regular file, when opened"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again)) == (NotRegularFileError, str(error))


def test_a_named_fifo_is_read_as_the_stream_it_is(tmp_path: Path) -> None:
    """<(cat pod.yaml) is a FIFO the user named: read, waiting for its writer."""
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("w", encoding="utf-8") as out:
            out.write(POD_YAML)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    found = without_waiting_on([fifo], lambda: list(read_source(Named(str(fifo)))))
    writer.join(10)
    assert [f.value["metadata"]["name"] for f in found] == ["p"]


def test_a_second_read_of_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    # the notes look into a file again (head_of): never into a stream, which the first
    # read consumed, and never by waiting on one that took a regular file's place
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    assert without_waiting_on([fifo], lambda: head_of(str(fifo), 100)) is None
    assert without_waiting_on([fifo], lambda: head_of(Named(str(fifo)), 100)) is None
