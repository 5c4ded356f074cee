"""The comment scan: which ``#`` starts a YAML comment, and where objects share a line."""

from __future__ import annotations

from pathlib import Path

from kubelet_winnet.sources.manifests.comments import comment_lines, marked_text
from kubelet_winnet.sources.manifests.lines import TextLines

MARK = "# kubelet-winnet:ignore"


def _marks(text: str) -> dict[int, int]:
    lines = TextLines(text)
    found, at = {}, text.find(MARK)
    while at >= 0:
        found[lines.line(at)] = at
        at = text.find(MARK, at + 1)
    return found


def test_a_hash_inside_a_block_scalar_is_text_not_a_comment() -> None:
    text = ("kind: Pod  " + MARK + " a b\n"
            "data: |\n"
            "  " + MARK + " c d\n"
            "other: 1\n")
    real, shared = comment_lines(text, TextLines(text), _marks(text))
    assert real == {1} and shared == set()


def test_a_hash_inside_a_quoted_string_is_text() -> None:
    text = 'kind: Pod\nnote: "' + MARK + ' x y"\n' + MARK + " x y\n"
    real, _ = comment_lines(text, TextLines(text), _marks(text))
    assert real == {3}


def test_two_documents_starting_on_one_line_share_it() -> None:
    # A flow mapping ends the first document; "--- {" starts the next on line 2.
    text = "{kind: Pod}\n--- {kind: Pod} " + MARK + " a b\n"
    real, shared = comment_lines(text, TextLines(text), _marks(text))
    assert real == {2} and shared == set()
    text = "kind: List\nitems: [{kind: Pod}, {kind: Pod}] " + MARK + " a b\n"
    _, shared = comment_lines(text, TextLines(text), _marks(text))
    assert shared == {2}


def test_after_a_yaml_error_no_hash_is_a_comment() -> None:
    text = "kind: Pod\nbad: ]\n" + MARK + " a b\n"
    real, _ = comment_lines(text, TextLines(text), _marks(text))
    assert real == set()


def test_lines_count_as_editors_show_them_with_bare_cr() -> None:
    text = "a: 1\r\rkind: Pod " + MARK + " a b\n"
    real, _ = comment_lines(text, TextLines(text), _marks(text))
    assert real == {3}


def test_marked_text_reads_a_file_only_when_it_holds_the_marker(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("kind: Pod\n", encoding="utf-8")
    assert marked_text(str(plain), MARK, 1 << 20) is None
    marked = tmp_path / "marked.yaml"
    marked.write_bytes(("kind: Pod " + MARK + " a b\n").encode("utf-16"))
    assert marked_text(str(marked), MARK, 1 << 20) == "kind: Pod " + MARK + " a b\n"
