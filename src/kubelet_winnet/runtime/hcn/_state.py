"""Durable per-sandbox records for :class:`~kubelet_winnet.runtime.hcn._sandbox.SandboxNetworks`.

One JSON file per sandbox, named by the SHA-256 of its id (ids are arbitrary text; file
names must not be). Every write is write-temp + fsync + ``os.replace`` + fsync of the
directory, so after a crash a file holds either the old record or the new one. Stray
temp files from a crash mid-write are ignored and swept on open.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import StateFileError

__all__ = ["FORMAT", "MAX_RECORD_BYTES", "Phase", "Record", "StateStore", "record_path"]

FORMAT = 1
Phase = Literal["creating", "ready", "removing"]
_SUFFIX = ".json"
_TEMP_SUFFIX = ".tmp"


@dataclass(frozen=True)
class Record:
    """What we know about one sandbox's network.

    ``creating``: the namespace GUID was chosen and recorded, HcnCreateNamespace may or
    may not have run. ``ready``: the namespace exists (pod network) or the HostDefault
    namespace was resolved (host network; we never delete that one). ``removing``:
    teardown began, HcnDeleteNamespace may or may not have run; without this phase a
    teardown cut short would leave a ``ready`` record naming a deleted namespace.
    """

    sandbox_id: str
    phase: Phase
    host_network: bool
    namespace_id: uuid.UUID
    policy: str
    reason: str

    def to_json(self) -> bytes:
        doc = {
            "format": FORMAT,
            "sandbox_id": self.sandbox_id,
            "phase": self.phase,
            "host_network": self.host_network,
            "namespace_id": str(self.namespace_id),
            "policy": self.policy,
            "reason": self.reason,
        }
        # Compact: json.dumps with indent runs the pure-Python encoder (3x slower).
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Record:
        """Parse one record file's bytes; any defect is a :class:`StateFileError` for
        ``where`` (atomic writes cannot produce one: someone else wrote the file)."""
        if not data.strip():
            raise StateFileError(where, "empty record file")
        try:
            doc = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise StateFileError(where, "record file is not UTF-8") from None
        except RecursionError:
            raise StateFileError(where, "record file is nested too deeply") from None
        except ValueError as exc:  # JSONDecodeError, or an integer past int_max_str_digits
            raise StateFileError(where, f"truncated or not JSON ({_brief(str(exc))})") from None
        if not isinstance(doc, dict):
            kind = type(doc).__name__
            raise StateFileError(where, f"foreign schema: a JSON {kind}, not a record")
        if doc.get("format") != FORMAT or type(doc.get("format")) is not int:
            raise StateFileError(
                where, f"foreign schema: format {_brief(repr(doc.get('format')))}, not {FORMAT}"
            )
        texts = ("sandbox_id", "phase", "namespace_id", "policy", "reason")
        wrong = [key for key in texts if type(doc.get(key)) is not str]
        if type(doc.get("host_network")) is not bool:
            wrong.append("host_network")
        if wrong:
            raise StateFileError(where, f"foreign schema: missing or mistyped {', '.join(wrong)}")
        phase = doc["phase"]
        if phase not in ("creating", "ready", "removing"):
            raise StateFileError(where, f"foreign schema: unknown phase {_brief(repr(phase))}")
        sandbox_id = doc["sandbox_id"]
        if not sandbox_id or "\x00" in sandbox_id or not _encodable(sandbox_id):
            raise StateFileError(where, "foreign schema: sandbox_id is not a valid sandbox id")
        try:
            namespace_id = uuid.UUID(doc["namespace_id"])
        except ValueError:
            raise StateFileError(where, "foreign schema: namespace_id is not a GUID") from None
        return cls(
            sandbox_id, phase, doc["host_network"], namespace_id, doc["policy"], doc["reason"]
        )


def _brief(text: str, limit: int = 80) -> str:
    return cut(text, limit + 3)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reason(exc: OSError) -> str:
    return _brief(exc.strerror or str(exc) or type(exc).__name__)


def _fsync_dir(path: Path) -> None:
    # Makes a rename or unlink durable. Windows cannot open a directory for fsync; its
    # MoveFileEx-based os.replace is what we rely on there.
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def record_path(directory: Path, sandbox_id: str) -> Path:
    """Where the record of ``sandbox_id`` lives in ``directory``."""
    digest = hashlib.sha256(sandbox_id.encode("utf-8", "surrogatepass")).hexdigest()
    return directory / f"sandbox-{digest}{_SUFFIX}"


# Far larger than any record we write; a bigger file is not ours, and is not read whole.
MAX_RECORD_BYTES = 64 * 1024
# O_NONBLOCK: a FIFO put where a record belongs must not block the open; O_NOFOLLOW: a
# symlink there is not our record. Neither flag exists on Windows, where neither can occur.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_BINARY", 0)
)


def _read_record_bytes(path: Path) -> bytes | None:
    """The file's bytes, ``None`` if it does not exist; ``StateFileError`` otherwise."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateFileError(str(path), f"cannot open record: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StateFileError(str(path), "not a regular file")
        if info.st_size > MAX_RECORD_BYTES:
            raise StateFileError(str(path), f"record file of {info.st_size} bytes is not ours")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 16384):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RECORD_BYTES:
                raise StateFileError(str(path), "record file grew past any record we write")
        return b"".join(chunks)
    except OSError as exc:
        if isinstance(exc, StateFileError):
            raise
        raise StateFileError(str(path), f"cannot read record: {_reason(exc)}") from None
    finally:
        os.close(fd)


class StateStore:
    """The files in ``directory``; callers serialise access per sandbox id.

    Every failure is a :class:`StateFileError` naming the one file (or the directory) it
    concerns; one bad record never stops another from being read or written.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StateFileError(
                str(self.directory), f"cannot create the state directory: {_reason(exc)}"
            ) from None
        if not self.directory.is_dir():
            raise StateFileError(str(self.directory), "the state directory is not a directory")
        self.sweep_temp_files()

    def path_for(self, sandbox_id: str) -> Path:
        return record_path(self.directory, sandbox_id)

    def load(self, sandbox_id: str) -> Record | None:
        path = self.path_for(sandbox_id)
        data = _read_record_bytes(path)
        if data is None:
            return None
        record = Record.from_json(data, str(path))
        if record.sandbox_id != sandbox_id:
            raise StateFileError(str(path), "holds the record of another sandbox")
        return record

    def save(self, record: Record) -> None:
        final = self.path_for(record.sandbox_id)
        try:
            fd, temp = tempfile.mkstemp(
                prefix=f".{final.stem}.", suffix=_TEMP_SUFFIX, dir=self.directory
            )
        except OSError as exc:
            raise StateFileError(str(final), f"cannot write record: {_reason(exc)}") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(record.to_json())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, final)
            _fsync_dir(self.directory)
        except Exception as exc:
            # Not BaseException: a process killed here leaves the temp file, which the
            # next open sweeps; an ordinary error should not.
            with contextlib.suppress(OSError):
                os.unlink(temp)
            if isinstance(exc, OSError) and not isinstance(exc, StateFileError):
                raise StateFileError(str(final), f"cannot write record: {_reason(exc)}") from None
            raise

    def delete(self, sandbox_id: str) -> None:
        path = self.path_for(sandbox_id)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StateFileError(str(path), f"cannot remove record: {_reason(exc)}") from None
        try:
            _fsync_dir(self.directory)
        except OSError as exc:
            raise StateFileError(str(path), f"cannot remove record: {_reason(exc)}") from None

    def scan(self) -> list[Record | StateFileError]:
        """Every record file: its record, or the error that file gives. Files removed
        while scanning are skipped; a missing directory has no records."""
        try:
            paths = sorted(self.directory.glob(f"sandbox-*{_SUFFIX}"))
        except OSError as exc:
            return [StateFileError(str(self.directory), f"cannot list: {_reason(exc)}")]
        found: list[Record | StateFileError] = []
        for path in paths:
            try:
                data = _read_record_bytes(path)
                if data is None:
                    continue  # torn down meanwhile
                record = Record.from_json(data, str(path))
                if self.path_for(record.sandbox_id) != path:
                    raise StateFileError(str(path), "file name does not match its sandbox id")
            except StateFileError as error:
                found.append(error)
                continue
            found.append(record)
        return found

    def records(self) -> list[Record]:
        """The readable records (see :meth:`scan` for the others)."""
        return [entry for entry in self.scan() if isinstance(entry, Record)]

    def temp_files(self) -> list[Path]:
        try:
            return sorted(self.directory.glob(f".*{_TEMP_SUFFIX}"))
        except OSError:
            return []

    def sweep_temp_files(self) -> None:
        for path in self.temp_files():
            with contextlib.suppress(OSError):  # best effort: a read-only dir keeps them
                path.unlink()
