"""The shell blocks of README.md and the docs site's quick start, extracted and checked so
they cannot rot: every `kubelet-winnet` line of a quick start runs as
pasted (after the block's install and activation lines), a `console` block's output is
what the command prints, and every other `kubelet-winnet` line names a real command and
real flags. Install lines are checked against the package's metadata (extras, scripts), not run:
CI's .ci/run installs from scratch.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def blocks(path: Path, section: str | None = None) -> list[tuple[str, int, list[str]]]:
    """(language, first line, lines) of each fenced block, within ``## section`` if named."""
    text = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[str, int, list[str]]] = []
    inside: str | None = None
    current = section is None
    body: list[str] = []
    start = 0
    for number, line in enumerate(text, 1):
        if inside is None and line.startswith("## "):
            current = section is None or line[3:].strip() == section
        if inside is None and line.startswith("```") and len(line) > 3:
            inside, body, start = line[3:].strip(), [], number + 1
        elif inside is not None and line.startswith("```"):
            if current:
                found.append((inside, start, body))
            inside = None
        elif inside is not None:
            body.append(line)
    return found


def shell_lines(path: Path, section: str | None = None) -> list[tuple[int, str]]:
    return [(start + i, line) for language, start, body in blocks(path, section)
            if language in ("sh", "bash") for i, line in enumerate(body) if line.strip()]


def strip_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line).strip()


def check_install(line: str) -> None:
    extras = set(metadata.metadata("kubelet-winnet").get_all("Provides-Extra") or ())
    scripts = {e.name for e in metadata.entry_points(group="console_scripts")
               if e.value.startswith("kubelet_winnet")}
    for extra in re.findall(r"\.\[([a-z,]+)\]", line):
        assert set(extra.split(",")) <= extras, (line, extras)
    for script in re.findall(r"\.venv/bin/([a-z-]+)", line):
        assert script in scripts | {"python", "pip", "activate"}, (line, script)


def run_line(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fresh directory that holds the clone's examples (commands write files here)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    return tmp_path


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_quick_start_runs_as_pasted(page: str, workdir: Path) -> None:
    if not (BIN / "kubelet-winnet").exists():
        pytest.skip("the kubelet-winnet script is not installed next to this interpreter")
    activated = False
    ran = 0
    for number, raw in shell_lines(REPO / page, "Quick start"):
        line = strip_comment(raw)
        where = f"{page}:{number}: {raw}"
        assert not line.startswith("git clone "), f"{where}: no repository address is confirmed"
        if line in (". .venv/bin/activate", "source .venv/bin/activate"):
            activated = True
            continue
        parts = [p.strip() for p in line.split("&&")]
        runnable = [p for p in parts if re.match(r"(\.venv/bin/)?kubelet-winnet\b", p)]
        check_install(line)
        if "pytest" in line:  # the test command itself: what CI runs
            continue
        for part in runnable:
            if part.startswith("kubelet-winnet"):
                assert activated, f"{where}: bare kubelet-winnet before the venv is on PATH"
            command = part.removeprefix(".venv/bin/")
            if " -A" in command:  # a live cluster: the line must parse
                command += " --help"
            done = run_line(command, workdir)
            ran += 1
            assert done.returncode in (0, 1), (where, done.stderr)
            assert "Traceback" not in done.stderr, where
            assert "kubelet-winnet: error" not in done.stderr, (where, done.stderr)
    assert ran, f"{page} has no quick start command"


def test_console_blocks_show_what_the_command_prints(workdir: Path) -> None:
    if not (BIN / "kubelet-winnet").exists():
        pytest.skip("the kubelet-winnet script is not installed next to this interpreter")
    for language, start, body in blocks(REPO / "README.md"):
        if language != "console" or not body or not body[0].startswith("$ kubelet-winnet "):
            continue
        done = run_line(body[0][2:], workdir)
        assert (done.stdout + done.stderr).splitlines() == body[1:], f"README.md:{start}"




def test_every_other_command_line_names_real_commands_and_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kubelet_winnet.cli import COMMAND_MODULES, main

    for page in (REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))):
        for number, raw in shell_lines(page):
            line = strip_comment(raw).removeprefix(".venv/bin/")
            for part in line.split("&&"):
                text = part.split("|")[-1].split(">")[0].strip() or "x"
                try:
                    words = shlex.split(text)
                except ValueError:  # a backslash continuation: the words are enough
                    words = text.split()
                if words[0] != "kubelet-winnet" or len(words) < 2:
                    continue
                where = f"{page.relative_to(REPO)}:{number}: {raw}"
                assert words[1] in COMMAND_MODULES or words[1] == "--version", where
                if words[1] == "--version":
                    continue
                with pytest.raises(SystemExit):
                    main([words[1], "--help"])
                help_text = capsys.readouterr().out
                for word in words[2:]:
                    flag = word.partition("=")[0]
                    if flag.startswith("-") and flag != "-":
                        assert re.search(rf"(^|[\s\[,]){re.escape(flag)}\b", help_text), \
                            (where, flag)
