"""The transcribed rows themselves: every row cites its file, test, row name and version,
runs only at modelled minors, and says why when it is out of scope."""

from __future__ import annotations

import re

from tests.strategies import MINORS
from tests.upstream.catalog import MODULES


def test_every_row_is_cited_and_scoped() -> None:
    seen: set[tuple[str, str]] = set()
    for module in MODULES:
        for row in module.ROWS:
            assert row.source.file == module.FILE
            assert row.test.startswith("Test") and row.name
            assert re.fullmatch(r"[0-9a-f]{40}|index-[0-9]+", row.source.commit)
            assert row.source.evidence
            assert set(row.run_minors) <= set(MINORS), row.ident
            if row.in_scope:
                assert row.run_minors, f"{row.ident} is in scope but runs at no minor"
            key = (module.__name__, row.ident)
            assert key not in seen, f"duplicate row {row.ident}"
            seen.add(key)


def test_not_transcribed_entries_give_reasons() -> None:
    for module in MODULES:
        for test, reason in getattr(module, "NOT_TRANSCRIBED", ()):
            assert test and len(reason) > 20
