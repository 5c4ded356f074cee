"""The kubelet model stays readable: no function past ~80 lines, and every catch-all
``except`` says which hostile caller object it is there for."""

from __future__ import annotations

import ast
import re

from tests.strategies import REPO_ROOT

KUBELET = REPO_ROOT / "src" / "kubelet_winnet" / "_kubelet"
MAX_FUNCTION_LINES = 80


def _sources() -> list[tuple[str, str]]:
    return [(path.name, path.read_text("utf-8")) for path in sorted(KUBELET.glob("*.py"))]


def test_no_function_in_the_kubelet_model_is_longer_than_80_lines() -> None:
    long = []
    for name, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{name}:{node.name} ({lines} lines)")
    assert not long, long


def test_every_catch_all_except_in_the_kubelet_model_says_why() -> None:
    unexplained = []
    for name, text in _sources():
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if re.match(r"\s*except (Exception|BaseException)\b", line):
                following = lines[number + 1].strip() if number + 1 < len(lines) else ""
                if "#" not in line and not following.startswith("#"):
                    unexplained.append(f"{name}:{number + 1}")
    assert not unexplained, unexplained
    assert sum(text.count("except Exception") for _, text in _sources()) >= 1


MAX_MODULE_LINES = 700
SRC = REPO_ROOT / "src" / "kubelet_winnet"
# The modules held to both bounds so far; the whole of src/ joins them once the modules
# still over a bound are split.
SHAPED = (
    "_kubelet/profile.py",
    "_kubelet/timeline.py",
    "_kubelet/kubelet_version.py",
    "_kubelet/feature_gates.py",
    "_kubelet/request_facts.py",
    "cli/cluster.py",
    "cli/kube_client.py",
    "cli/render.py",
    "cli/render_process.py",
    "cli/input/yaml_reader.py",
    "cli/nodefiles/containerd.py",
)


def test_no_shaped_module_is_longer_than_700_lines_nor_any_of_its_functions_than_80() -> None:
    too_long = []
    for name in SHAPED:
        text = (SRC / name).read_text("utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{name} ({lines} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.name} ({length} lines)")
    assert not too_long, too_long
