"""Files read ahead in worker processes while this process judges the files before them.

Reading (bytes to documents: :func:`read_source`) is most of ``check``'s work on a
directory of small manifests, and each file is read on its own. So worker processes,
forked once the command is ready, take the files in turn (this process keeps one in
every ``2n + 1`` for itself), read each with :func:`read_source` and hand its documents
over, pickled, through a pipe. This process asks for the files in input order and gets,
for each, what :func:`read_source` gives here, document for document: every note,
finding and decision is still made here, in input order, so the output does not change
(tests/sources/manifests/test_readahead.py).

Only where it is safe and pays: a POSIX fork (not macOS, where a forked child may crash
in system libraries), no second thread (a lock it holds would stay held in the child),
at least :data:`MIN_FILES` files. A worker leaves to this process any file that is not
a regular file of at most :data:`MAX_FILE_BYTES` (a FIFO, ``/dev/zero``, a large List
read streaming) and any file it fails on: the failure then happens here, where it is
reported. A worker that dies leaves all its files to this process. Memory stays bounded:
a worker waits while its pipe is full.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import struct
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from typing import IO

from kubelet_winnet.sources.manifests.documents import BadInput, Document
from kubelet_winnet.sources.manifests.encoding import Limits
from kubelet_winnet.sources.manifests.source import read_source

__all__ = ["MAX_FILE_BYTES", "MIN_FILES", "ReadAhead", "default_workers"]

MIN_FILES = 32  # fewer are read before two processes could be forked
MAX_FILE_BYTES = 256 * 1024  # a larger file is read here, a document at a time
MAX_WORKERS = 4  # this process's own share (judging, unpickling) bounds the gain beyond

_LENGTH = struct.Struct("!I")  # a frame: the pickle's length, then the pickle
_HERE = _LENGTH.pack(0)  # an empty frame: this process reads the file itself


def default_workers() -> int:
    """One worker for each CPU this process may use but its own, at most
    :data:`MAX_WORKERS`: a worker beyond would take turns with another on a CPU."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(0, min(cpus - 1, MAX_WORKERS))


def _can_fork() -> bool:
    threading = sys.modules.get("threading")
    return (hasattr(os, "fork") and sys.platform != "darwin"
            and (threading is None or threading.active_count() == 1))


class ReadAhead:
    """Reads ``paths`` (each a file name, in the order :meth:`read` asks for them) in
    ``workers`` processes; with fewer than :data:`MIN_FILES` paths, or where forking is
    not safe, every file is read here. Close it (or use it as a context manager) to end
    and reap the workers."""

    def __init__(self, paths: Sequence[str], limits: Limits, workers: int) -> None:
        self._limits = limits
        self._pipes: list[IO[bytes] | None] = []  # worker i's pipe; None: it is gone
        self._pids: list[int] = []
        if workers < 1 or len(paths) < MIN_FILES or not _can_fork():
            workers = 0
        # Who reads each path: None for this process, which takes one file in each round
        # of 2 * workers + 1 (judging a file costs it about half as much as reading one),
        # the workers the others in turn.
        turns = 2 * workers + 1
        readers = [None if index % turns == 0 else (index % turns - 1) % workers
                   for index in range(len(paths))]
        for worker in range(workers):
            self._pipes.append(self._fork(
                [path for path, reader in zip(paths, readers, strict=True) if reader == worker]))
        self._planned: deque[tuple[str, int | None]] = deque(zip(paths, readers, strict=True))

    @property
    def pids(self) -> tuple[int, ...]:
        """The process ids of the workers started (and not yet reaped)."""
        return tuple(self._pids)

    def _fork(self, paths: Sequence[str]) -> IO[bytes] | None:
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no more processes: this one reads what is left
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                os.close(read_end)
                for pipe in self._pipes:
                    if pipe is not None:
                        os.close(pipe.fileno())
                # Off the user's terminal and pipes: a reader of this run's output sees
                # its end when this process ends, whatever a worker still does.
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # not this process's handlers
                    number = getattr(signal, name, None)
                    if number is not None:
                        signal.signal(number, signal.SIG_DFL)
                with os.fdopen(write_end, "wb") as out:
                    for path in paths:
                        out.write(_frame(path, self._limits))
                code = 0
            finally:
                os._exit(code)  # no atexit, no flushing of this process's buffers
        os.close(write_end)
        self._pids.append(pid)
        return os.fdopen(read_end, "rb")

    def read(self, path: str) -> Iterable[Document | BadInput]:
        """What :func:`read_source` gives for ``path``, the next file planned."""
        planned, worker = self._planned.popleft() if self._planned else (None, None)
        if planned != path:  # asked out of order: every file is read here from now on
            self.close()
        elif worker is not None:
            pipe = self._pipes[worker]
            if pipe is not None:
                received = _receive(pipe)
                if received is not None:
                    return received
                if pipe.closed:  # the worker is gone: the rest of its files are ours
                    self._pipes[worker] = None
        return read_source(path, self._limits)

    def close(self) -> None:
        """End the workers (those still reading are killed) and reap them."""
        self._planned = deque((path, None) for path, _ in self._planned)
        for pipe in self._pipes:
            if pipe is not None:
                pipe.close()
        self._pipes = [None] * len(self._pipes)
        for pid in self._pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        self._pids = []

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _frame(path: str, limits: Limits) -> bytes:
    """In a worker: the frame for one file."""
    import pickle  # here and in _receive: a run without workers never pays its import

    try:
        found = os.stat(path)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_FILE_BYTES:
            return _HERE
        data = pickle.dumps(list(read_source(path, limits)), pickle.HIGHEST_PROTOCOL)
    except Exception:  # whatever failed fails again here, where it is reported
        return _HERE
    return _LENGTH.pack(len(data)) + data


def _receive(pipe: IO[bytes]) -> list[Document | BadInput] | None:
    """The documents of the next frame; None when this process reads the file itself
    (an empty frame, or the worker is gone: the pipe is then closed)."""
    import pickle

    header = pipe.read(_LENGTH.size)
    size = _LENGTH.unpack(header)[0] if len(header) == _LENGTH.size else -1
    if size == 0:
        return None
    data = pipe.read(size) if size > 0 else b""
    if size < 0 or len(data) < size:  # the worker died
        pipe.close()
        return None
    found: list[Document | BadInput] = pickle.loads(data)
    return found

