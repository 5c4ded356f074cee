"""docs/decision-table.md is rendered from the rules module and must not drift."""

from __future__ import annotations

from pathlib import Path

from render_docs import main, render_decision_table

from kubelet_winnet import _rules as rules

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_checked_in_decision_table_matches_the_rules() -> None:
    checked_in = (REPO_ROOT / "docs" / "decision-table.md").read_text(encoding="utf-8")
    assert checked_in == render_decision_table(), (
        "docs/decision-table.md is stale: run `python scripts/render_docs.py`"
    )


def test_table_quotes_every_kubelet_error_text() -> None:
    text = render_decision_table()
    for message in (
        rules.ERROR_MIXED_HOST_PROCESS,
        rules.ERROR_HOST_NETWORK_REQUIRED,
        rules.ERROR_POD_HOST_PROCESS_FALSE,
    ):
        assert f"`{message}`" in text


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "table.md"
    stale.write_text("old\n", encoding="utf-8")
    assert main(["--check", "--path", str(stale)]) == 1
    assert main(["--path", str(stale)]) == 0
    assert main(["--check", "--path", str(stale)]) == 0
