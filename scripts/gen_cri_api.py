#!/usr/bin/env python3
"""Generate the Python modules of ``cri_api/runtime/v1/api.proto``.

Runs the protoc bundled with grpcio-tools plus the mypy-protobuf plugin and
writes ``api_pb2.py`` and ``api_pb2.pyi`` next to the .proto. The proto is
compiled with the repository root as its only include path, so the descriptor
registers it as ``cri_api/runtime/v1/api.proto``.

Usage::

    python -m pip install -r scripts/gen-requirements.txt
    python scripts/gen_cri_api.py          # regenerate in place
    python scripts/gen_cri_api.py --check  # fail (exit 1) if out of date
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROTO = Path("cri_api/runtime/v1/api.proto")
OUTPUTS = (
    Path("cri_api/runtime/v1/api_pb2.py"),
    Path("cri_api/runtime/v1/api_pb2.pyi"),
)
REQUIREMENTS = REPO_ROOT / "scripts" / "gen-requirements.txt"
REGENERATE = (
    "python -m pip install -r scripts/gen-requirements.txt && python scripts/gen_cri_api.py"
)
PLUGIN_NAMES = ("protoc-gen-mypy", "protoc-gen-mypy.exe")


class GenerationError(Exception):
    """The generator could not run or produced no output."""


def find_mypy_plugin() -> Path:
    """Locate protoc-gen-mypy in the running interpreter's scripts directory."""
    candidates = [Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]
    for directory in candidates:
        for name in PLUGIN_NAMES:
            plugin = directory / name
            if plugin.is_file():
                return plugin
    searched = ", ".join(str(d) for d in candidates)
    raise GenerationError(
        f"protoc-gen-mypy not found in {searched}; install the pins: "
        "python -m pip install -r scripts/gen-requirements.txt"
    )


def pinned_versions(requirements: Path = REQUIREMENTS) -> dict[str, str]:
    """Read ``name==version`` pins from the generator requirements file."""
    pins: dict[str, str] = {}
    for raw in requirements.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if sep:
            pins[name.strip().lower()] = version.strip()
    return pins


def version_mismatches(pins: dict[str, str]) -> list[str]:
    """Describe each pinned distribution whose installed version differs."""
    problems: list[str] = []
    for name, wanted in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name}: not installed (pinned {wanted})")
            continue
        if installed != wanted:
            problems.append(f"{name}: installed {installed}, pinned {wanted}")
    return problems


def generate(out_dir: Path) -> None:
    """Compile the proto into ``out_dir`` (which mirrors the repository layout)."""
    plugin = find_mypy_plugin()
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--plugin=protoc-gen-mypy={plugin}",
        f"-I{REPO_ROOT}",
        f"--python_out={out_dir}",
        f"--mypy_out={out_dir}",
        str(REPO_ROOT / PROTO),
    ]
    result = subprocess.run(  # fixed argv, no shell
        command, cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise GenerationError(
            f"protoc failed with exit code {result.returncode}:\n{result.stderr}"
        )
    missing = [str(p) for p in OUTPUTS if not (out_dir / p).is_file()]
    if missing:
        raise GenerationError(f"protoc did not write: {', '.join(missing)}")


def diff_outputs(generated_root: Path) -> str:
    """Unified diff from the checked-in files to freshly generated ones."""
    chunks: list[str] = []
    for rel in OUTPUTS:
        current_path = REPO_ROOT / rel
        current = (
            current_path.read_text(encoding="utf-8").splitlines(keepends=True)
            if current_path.is_file()
            else []
        )
        fresh = (generated_root / rel).read_text(encoding="utf-8").splitlines(keepends=True)
        chunks.extend(
            difflib.unified_diff(
                current,
                fresh,
                fromfile=f"{rel} (checked in)",
                tofile=f"{rel} (generated)",
            )
        )
    return "".join(chunks)


def warn_on_version_drift() -> None:
    """Tell the user when the installed generator differs from the pins."""
    for problem in version_mismatches(pinned_versions()):
        print(f"warning: {problem}; output may differ", file=sys.stderr)


def run_check() -> int:
    """Generate into a temporary directory and compare with the checked-in files."""
    with tempfile.TemporaryDirectory(prefix="gen_cri_api_") as tmp:
        generate(Path(tmp))
        diff = diff_outputs(Path(tmp))
    if diff:
        sys.stdout.write(diff)
        if not diff.endswith("\n"):
            sys.stdout.write("\n")
        print(
            f"error: generated CRI modules are out of date with {PROTO}.\n"
            f"Regenerate them with: {REGENERATE}",
            file=sys.stderr,
        )
        return 1
    print(f"ok: {', '.join(str(p) for p in OUTPUTS)} match {PROTO}")
    return 0


def run_write() -> int:
    """Regenerate the checked-in files in place."""
    with tempfile.TemporaryDirectory(prefix="gen_cri_api_") as tmp:
        generate(Path(tmp))
        for rel in OUTPUTS:
            shutil.copyfile(Path(tmp) / rel, REPO_ROOT / rel)
            print(f"wrote {rel}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 with a diff if the checked-in files are stale",
    )
    args = parser.parse_args(argv)
    warn_on_version_drift()
    try:
        return run_check() if args.check else run_write()
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
