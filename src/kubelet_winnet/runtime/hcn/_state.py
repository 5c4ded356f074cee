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
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kubelet_winnet.errors import WinnetError

__all__ = ["FORMAT", "Phase", "Record", "StateStore"]

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
        return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Record:
        try:
            doc = json.loads(data.decode("utf-8"))
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise ValueError(f"not a format-{FORMAT} record")
            phase = doc["phase"]
            if phase not in ("creating", "ready", "removing"):
                raise ValueError(f"unknown phase {phase!r}")
            fields = (doc["sandbox_id"], doc["policy"], doc["reason"])
            if not all(isinstance(f, str) for f in fields) or not isinstance(
                doc["host_network"], bool
            ):
                raise ValueError("wrong field types")
            return cls(
                sandbox_id=doc["sandbox_id"],
                phase=phase,
                host_network=doc["host_network"],
                namespace_id=uuid.UUID(doc["namespace_id"]),
                policy=doc["policy"],
                reason=doc["reason"],
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # Atomic writes cannot produce this; it means someone edited the file.
            raise WinnetError(f"corrupt sandbox state file {where}: {exc}") from None


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


class StateStore:
    """The files in ``directory``; callers serialise access per sandbox id."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.sweep_temp_files()

    def path_for(self, sandbox_id: str) -> Path:
        digest = hashlib.sha256(sandbox_id.encode("utf-8", "surrogatepass")).hexdigest()
        return self.directory / f"sandbox-{digest}{_SUFFIX}"

    def load(self, sandbox_id: str) -> Record | None:
        path = self.path_for(sandbox_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        record = Record.from_json(data, str(path))
        if record.sandbox_id != sandbox_id:
            raise WinnetError(
                f"corrupt sandbox state file {path}: holds {record.sandbox_id!r}"
            )
        return record

    def save(self, record: Record) -> None:
        final = self.path_for(record.sandbox_id)
        fd, temp = tempfile.mkstemp(
            prefix=f".{final.stem}.", suffix=_TEMP_SUFFIX, dir=self.directory
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(record.to_json())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, final)
        except Exception:
            # Not BaseException: a process killed here leaves the temp file, which the
            # next open sweeps; an ordinary error should not.
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        _fsync_dir(self.directory)

    def delete(self, sandbox_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path_for(sandbox_id))
            _fsync_dir(self.directory)

    def records(self) -> list[Record]:
        found: list[Record] = []
        for path in sorted(self.directory.glob(f"sandbox-*{_SUFFIX}")):
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue  # torn down meanwhile
            found.append(Record.from_json(data, str(path)))
        return found

    def temp_files(self) -> list[Path]:
        return sorted(self.directory.glob(f".*{_TEMP_SUFFIX}"))

    def sweep_temp_files(self) -> None:
        for path in self.temp_files():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
