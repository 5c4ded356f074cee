"""Docstrings and comments say the behaviour or the reason, not a number on this project's
tracker: an issue or item number tells a reader of the code nothing the code does not.

Every comment and every module, class and function docstring of ``src/``, ``tests/``,
``scripts/`` and ``benchmarks/`` is read (comments with :mod:`tokenize`, docstrings with
:mod:`ast`), so test data such as an ignore comment's reason in a YAML string is not.
Upstream references stay: they name their project or are a link (``kubernetes#136325``,
``containerd issue #4856``, ``kubernetes/kubernetes issue 139132``, ``PR #130250``), and
the trackers they point at number in the thousands.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.strategies import REPO_ROOT

FOLDERS = ("src", "tests", "scripts", "benchmarks")

# Ours: "issue" with a number of at most three digits (ours are two; every upstream tracker
# named here is past 4,000), "item" with a number, "#" and a short number alone.
TRACKER = re.compile(
    r"(?<!containerd )(?<!hcsshim )(?<!kubernetes )(?<!cri-api )(?<!PR )"
    r"\bissues?[ -]#?\d{1,3}(?![\d.])"
    r"|\bitems? \d+\b"
    r"|(?<![\w/#&])(?<!issue )#\d{1,3}\b",
    re.IGNORECASE,
)


def _python_files() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (REPO_ROOT / folder).rglob("*.py")
                  if ".venv" not in path.parts and "build" not in path.parts)


def _prose(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring of one module."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string.lstrip("#")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                for offset, line in enumerate(body[0].value.value.splitlines()):
                    yield body[0].lineno + offset, line


def test_no_docstring_or_comment_cites_the_project_tracker() -> None:
    files = _python_files()
    assert len(files) > 100  # the walk found the code, not an empty folder
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {match.group()}"
        for path in files
        if TRACKER.search(text := path.read_text(encoding="utf-8"))  # most files: no prose to walk
        for number, line in _prose(text)
        for match in TRACKER.finditer(line)
    ]
    assert not found, "\n".join(found)


def test_the_tracker_pattern_catches_ours_and_leaves_upstream_references() -> None:
    for ours in ("regression tests (issue 17)", "Issue 30 item 17: a path", "issues 2 and 3",
                 "the issue-8 reproducer", "(item 5: proto3 enums are open)", "see #12",
                 "one line (issue 16 item 21)"):
        assert TRACKER.search(ours), ours
    for upstream in ("kubernetes#136325", "containerd issue #4856 is still open",
                     "kubernetes/kubernetes issue 139132", "RuntimeDefault: issue #84623",
                     "kubernetes PR #130250", "hcsshim issue #123", "Go's %#v",
                     "the first item of the list", "an issue with IPv6", "&#10; in XML"):
        assert not TRACKER.search(upstream), upstream


def test_comments_and_docstrings_are_what_the_walk_reads() -> None:
    text = ('"""Module (issue 1)."""\n'
            'X = "a string, issue 2"  # a comment, issue 3\n'
            'def f():\n    """Function, item 4."""\n    return "issue 5"\n')
    assert [TRACKER.search(line).group() for _, line in _prose(text)  # type: ignore[union-attr]
            if TRACKER.search(line)] == ["issue 3", "issue 1", "item 4"]
