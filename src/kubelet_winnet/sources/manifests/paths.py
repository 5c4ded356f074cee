"""Which files the arguments name: files, directories searched for manifests, ``-`` for
standard input (whose first bytes are kept for the notes), and which of them can be read
twice."""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, cast

from kubelet_winnet.errors import NotRegularFileError
from kubelet_winnet.sources.manifests.documents import BadInput

__all__ = [
    "KUSTOMIZATION_FILE",
    "MANIFEST_SUFFIXES",
    "SETTINGS_FILE",
    "Named",
    "Skipped",
    "current_user",
    "expand_paths",
    "open_input",
    "open_source",
    "owner_name",
    "replayable",
    "stdin_head",
    "upward",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# check's settings file (cli/config.py), never a manifest: a directory search passes it by.
SETTINGS_FILE = ".kubelet-winnet.yaml"
# The one kustomization file name kustomize recognises that has no manifest suffix
# (sigs.k8s.io/kustomize/api/konfig: RecognizedKustomizationFileNames): a directory search
# finds it too, so its build is not lost when the search, not the directory, names it.
KUSTOMIZATION_FILE = "Kustomization"

@dataclass(frozen=True)
class Skipped:
    """A file found by searching a directory that is not read, and why (a note)."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


def current_user() -> int | None:
    """The user whose files a search may trust (None where the OS has no owners)."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())


def owner_name(uid: int) -> str:
    """A user as messages name one: ``ana (uid 1000)``."""
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _device(path: str) -> int:
    return os.stat(path).st_dev


def upward(start: str) -> Iterator[str]:
    """``start`` (an absolute directory) and each directory above it, as far as a search
    for a repository's own files goes: where git's discovery stops (setup.c,
    ``setup_git_directory_gently``), after the first directory holding ``.git`` (the
    repository's root) and before a parent on another file system
    (``GIT_DISCOVERY_ACROSS_FILESYSTEM`` unset). The settings search and the chart
    search both walk it; each judges ownership itself."""
    directory = start
    while True:
        yield directory
        if os.path.lexists(os.path.join(directory, ".git")):
            return
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        try:
            if _device(parent) != _device(directory):
                return
        except FileNotFoundError:
            pass  # a name not there (yet): its parent's file system is the one searched
        except OSError:
            return
        directory = parent


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")


def _not_regular(path: str) -> str | None:
    """What ``path`` is when it is not a regular file (``None``: regular, or not there:
    reading it then says why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


class Named(str):
    """A path the user named as itself (not one a search found): opened
    (:func:`open_source`), a FIFO or device there is read as the stream it is."""

    __slots__ = ()


# Opening a FIFO for reading waits for a writer; O_NONBLOCK returns at once (POSIX
# open(2)), so what was opened can be looked at first. Windows has neither.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def open_input(path: str, *, streams: bool = False) -> io.BufferedReader:
    """``path`` opened for reading, every file any command reads: a regular file when
    opened, or :class:`NotRegularFileError` naming what it is (a FIFO, a socket, a device,
    a directory), without waiting on it; other failures are the ``OSError`` of the open.

    ``streams``: the user named ``path`` itself, so a FIFO or device there when it is
    looked at is read as the stream it is (``<(cat pod.yaml)``), waiting for its writer;
    one that becomes a FIFO between that look and the open is still refused."""
    if streams:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG  # the open says why
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            return open(path, "rb")
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, _kind(mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def replayable(path: str) -> bool:
    """Whether ``path`` can be read twice: a regular file, or a name that is not there
    (reading it fails the same way twice). Stdin, FIFOs and devices cannot."""
    return path != "-" and _not_regular(path) is None


def expand_paths(arguments: Sequence[str]) -> Iterator[str | BadInput | Skipped]:
    """Files in argument order; a directory's ``.yaml``/``.yml``/``.json`` files and
    ``Kustomization`` files, recursively, sorted by path; ``-`` is stdin. A directory
    that cannot be listed is bad input ("cannot read", as a file); a FIFO, socket or
    device found in a directory is skipped with a note (reading one could block
    forever; named as an argument, it is read)."""
    for argument in arguments:
        if argument != "-" and os.path.isdir(argument):
            found: list[tuple[str, str | BadInput | Skipped]] = []

            def unreadable(
                exc: OSError, top: str = argument,
                found: list[tuple[str, str | BadInput | Skipped]] = found,
            ) -> None:
                where = exc.filename if isinstance(exc.filename, str) else top
                reason = f"cannot read: {exc.strerror or type(exc).__name__}"
                found.append((where, BadInput(where, 0, 0, reason)))

            for root, dirs, files in os.walk(argument, onerror=unreadable):
                dirs.sort()
                for name in files:
                    if name == SETTINGS_FILE or not (
                            name.lower().endswith(MANIFEST_SUFFIXES)
                            or name == KUSTOMIZATION_FILE):
                        continue
                    path = os.path.join(root, name)
                    kind = _not_regular(path)
                    found.append((path, path if kind is None else Skipped(
                        path, f"skipped: {kind}, not a regular file (a directory search "
                        "reads regular files only; name it as an argument to read it)",
                    )))
            if not found:
                yield BadInput(argument, 0, 0, "directory holds no .yaml, .yml or .json file")
            found.sort(key=lambda entry: entry[0])
            yield from (entry for _, entry in found)
        else:
            yield argument if argument == "-" else Named(argument)


_HEAD_KEPT = 1 << 20


class _KeptHead:
    """Stdin, keeping its first bytes: stdin cannot be read twice, and the note that
    the input is a Helm template needs them after the reader has failed on them."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.head = bytearray()

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if len(self.head) < _HEAD_KEPT:
            self.head += data[:_HEAD_KEPT - len(self.head)]
        return data


_stdin: _KeptHead | None = None


def stdin_head() -> bytes:
    """The first bytes (up to 1 MiB) read from stdin so far."""
    return bytes(_stdin.head) if _stdin is not None else b""


def head_of(source: str, max_bytes: int) -> bytes | None:
    """The first ``max_bytes`` of the file ``source`` (``<stdin>``: the part of standard
    input kept), for the notes that look into a file again; None when it cannot be read."""
    if source == "<stdin>":
        return stdin_head()
    try:
        with open_input(source) as file:  # a second read: of a regular file only
            return file.read(max_bytes)
    except OSError:
        return None


def open_source(path: str) -> IO[bytes]:
    """The file at ``path`` opened for reading (``-``: standard input, its head kept): a
    path the user :class:`Named` may be a stream, any other must be a regular file when
    opened (:func:`open_input`)."""
    global _stdin
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # started with stdin closed (`<&-`)
            raise OSError(9, "stdin is closed")
        _stdin = _KeptHead(stdin)
        return cast(IO[bytes], _stdin)
    return open_input(path, streams=isinstance(path, Named))
