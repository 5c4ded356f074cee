"""The input layer (``kubelet_winnet.sources.manifests``) as a whole: one source's documents and
their lines, files, directories and stdin (``paths``, ``source``).

Expected values come from the texts written here, never from a run.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from kubelet_winnet.sources.manifests import (
    BadInput,
    Document,
    expand_paths,
    read_source,
)
from tests.strategies import (
    POD_VALUE,
    POD_YAML,
    read_input,
    write_input,
)

# --- documents, Lists, JSON streams -----------------------------------------------------


def test_documents_lines_and_lists(tmp_path: Path) -> None:
    path = write_input(tmp_path, "l.yaml", (
        "# comment\n"
        "kind: ConfigMap\n"  # line 2, document 1
        "---\n"
        "---\n"  # an empty document is skipped
        "kind: List\n"  # document 3
        "items:\n"
        "- kind: Pod\n"  # line 7
        "  spec:\n"
        "    hostNetwork: true\n"  # line 9
        "- 5\n"
        "- kind: Service\n"
    ))
    found = read_input(path)
    assert [(type(d).__name__, d.document, d.line) for d in found] == [
        ("Document", 1, 2), ("Document", 3, 7), ("BadInput", 3, 10), ("Document", 3, 11),
    ]
    pod = found[1]
    assert isinstance(pod, Document)
    assert pod.item == 0
    assert pod.label == f"{path}#3.items[0]"
    assert pod.line_of(("spec", "hostNetwork")) == 9
    assert pod.line_of(("spec", "missing")) == 8


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n---\n"])
def test_empty_file_holds_nothing_and_is_no_bad_input(tmp_path: Path, text: str) -> None:
    """kubectl and kube-linter skip empty documents; a file of them is no error."""
    assert read_input(write_input(tmp_path, "empty.yaml", text)) == []


def test_missing_file(tmp_path: Path) -> None:
    (problem,) = read_input(tmp_path / "nope.yaml")
    assert isinstance(problem, BadInput)
    assert "cannot read" in problem.reason


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(POD_YAML.encode())))
    (document,) = read_source("-")
    assert isinstance(document, Document)
    assert document.source == "<stdin>"
    assert document.value == POD_VALUE


def test_directories_are_searched_recursively_and_sorted(tmp_path: Path) -> None:
    for name in ("b/z.yaml", "b/a.JSON", "a.yml", "c/d/e.yaml", "notes.txt", "b/x.yaml.bak"):
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("kind: Pod\n")
    found = list(expand_paths([str(tmp_path), "-"]))
    assert found == [
        str(tmp_path / "a.yml"), str(tmp_path / "b" / "a.JSON"), str(tmp_path / "b" / "z.yaml"),
        str(tmp_path / "c" / "d" / "e.yaml"), "-",
    ]
    (tmp_path / "empty").mkdir()
    (problem,) = expand_paths([str(tmp_path / "empty")])
    assert isinstance(problem, BadInput)


def test_reading_is_lazy(tmp_path: Path) -> None:
    """The first document is handed over before the rest of the file is parsed."""
    path = write_input(tmp_path, "lazy.yaml", POD_YAML + "---\n" + "kind: X\n" * 1 + "a: [\n")
    reader = read_source(str(path))
    first = next(reader)
    assert isinstance(first, Document)
    assert isinstance(next(reader), BadInput)
