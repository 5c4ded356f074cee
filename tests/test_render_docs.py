"""scripts/render_docs.py: every generated page is up to date, and --check notices drift."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from render_docs import PAGES, main, render_decision_table, render_runtime_tables

from kubelet_winnet._kubelet import rules as rules
from kubelet_winnet._kubelet.timeline import TIMELINE, bands
from kubelet_winnet.runtime import SETUP_CALLS, TEARDOWN_CALLS

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_every_checked_in_page_is_up_to_date() -> None:
    assert main(["--check", "--root", str(REPO_ROOT)]) == 0, "run python scripts/render_docs.py"


def test_pages_cover_both_generated_documents() -> None:
    from kubelet_winnet._lint.node_rules import NODE_RULES
    from kubelet_winnet._lint.rules import RULES

    assert {path for path, _ in PAGES} == {"docs/decision-table.md", "docs/runtime.md",
                                           "docs/versions.md", "docs/cli.md",
                                           "docs/conformance.md", "docs/policy.md",
                                           "docs/node-runtime.md", "docs/audit-example.html"} | {
        f"docs/rules/{rule.id}.md" for rule in (*RULES, *NODE_RULES)}


def test_runtime_page_embeds_the_runtime_tables() -> None:
    text = (REPO_ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    assert render_runtime_tables() in text


def test_table_quotes_every_kubelet_error_text() -> None:
    text = render_decision_table()
    for message in (
        rules.ERROR_MIXED_HOST_PROCESS,
        rules.ERROR_HOST_NETWORK_REQUIRED,
        rules.ERROR_POD_HOST_PROCESS_FALSE,
    ):
        assert f"`{message}`" in text


def test_version_rows_come_from_the_timeline() -> None:
    text = render_decision_table()
    for band in bands():
        assert f"| {band.label} | {band.release.stage.value} |" in text
    # Every minor of the timeline is inside exactly one band.
    covered = [m for b in bands() for m in range(b.first_minor, b.last_minor + 1)]
    assert covered == [row.minor for row in TIMELINE]


def test_decision_table_says_which_kubelets_are_released() -> None:
    """admission-and-distribution.md, "Updates, 2026-12-04": 1.35-1.37 are out, 1.38 is
    due 2026-12-16."""
    text = render_decision_table()
    assert "## Kubelet releases as of 2026-12-04" in text
    for line in ("| 1.35 | released | 2025-12-17 |", "| 1.36 | released | 2026-04-22 |",
                 "| 1.37 | released | 2026-08-26 |",
                 "| 1.38 | release candidate by the schedule (rc.0 2026-12-02), due; the "
                 "newest pre-release seen is v1.38.0-alpha.2 | 2026-12-16 |"):
        assert line in text


@pytest.mark.parametrize("page", ["docs/decision-table.md", "docs/runtime.md"])
def test_check_mode_reports_each_stale_page(
    tmp_path: Path, page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for relative, _ in PAGES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / relative, tmp_path / relative)
    assert main(["--check", "--root", str(tmp_path)]) == 0
    target = tmp_path / page
    text = target.read_text(encoding="utf-8")
    # Damage a generated line only (a table row), not the prose around it.
    row = next(line for line in text.splitlines() if line.startswith("| "))
    target.write_text(text.replace(row, row + " stale", 1), encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert page in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") != text  # --check wrote nothing
    assert main(["--root", str(tmp_path)]) == 0
    assert target.read_text(encoding="utf-8") == text
    assert main(["--check", "--root", str(tmp_path)]) == 0


def test_missing_markers_are_reported(tmp_path: Path) -> None:
    for relative, _ in PAGES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / relative, tmp_path / relative)
    (tmp_path / "docs" / "runtime.md").write_text("no markers\n", encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1


def test_runtime_call_table_lists_every_call_in_order() -> None:
    # Read the Markdown back and compare with the planner's tables.
    text = render_runtime_tables()
    for host, label in ((False, "pod network"), (True, "host network")):
        (row,) = [line for line in text.splitlines() if line.startswith(f"| {label} |")]
        setup_cell, teardown_cell = row.split("|")[2:4]
        assert re.findall(r"`(\w+)`", setup_cell) == [c.function for c in SETUP_CALLS[host]]
        assert re.findall(r"`(\w+)`", teardown_cell) == [
            c.function for c in TEARDOWN_CALLS[host]
        ]


def test_runtime_policy_table_rows_agree_with_the_rules() -> None:
    rows = {
        tuple(cell.strip() for cell in line.split("|")[1:4]): tuple(
            cell.strip() for cell in line.split("|")[4:6]
        )
        for line in render_runtime_tables().splitlines()
        if line.startswith(("| true |", "| false |"))
    }
    by_mode = {key[:2]: value for key, value in rows.items()}
    # containerd reads host_process only; the KEP also reads namespace_options (the gap).
    assert by_mode[("false", "NODE")] == ("pod network", "host network")
    assert by_mode[("true", "(absent)")] == ("host network", "host network")
    assert by_mode[("true", "POD")] == ("host network", "**InvalidRequestError**")
    assert by_mode[("false", "(absent)")] == ("pod network", "pod network")
    # The sender windows come from the timeline: the first and last minor that sends
    # namespace_options, and the withdrawal.
    sending = [row.minor for row in TIMELINE if row.reads_gate]
    senders = {key[:2]: key[2] for key in rows}
    assert senders[("false", "NODE")].startswith(f"1.{sending[0]}–1.{sending[-1]}, gate on")
    assert senders[("false", "(absent)")].startswith(f"1.{sending[-1] + 1}+")
