"""``_printable``: the one clipping rule (``cut``), and ``clip``, the escaping rule then
the cut, for every message that shows caller text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._printable import clip, cut
from kubelet_winnet.sources.manifests.documents import clip as json_clip


def test_cut_keeps_short_text_and_marks_a_cut() -> None:
    assert cut("x" * 60, 60) == "x" * 60
    assert cut("x" * 61, 60) == "x" * 57 + "..."


@given(st.text(), st.integers(4, 300))
def test_cut_is_bounded_and_keeps_a_prefix(text: str, size: int) -> None:
    shown = cut(text, size)
    assert len(shown) <= size
    assert shown == text or (shown.endswith("...") and text.startswith(shown[:-3]))


def test_clip_escapes_before_it_cuts() -> None:
    assert clip("a\nb", 60) == "a\\nb"
    shown = clip("\x1b" * 30, 60)  # 120 characters escaped: cut after escaping
    assert shown == ("\\x1b" * 30)[:57] + "..."


@given(st.text())
def test_a_readers_quoted_text_is_json_whatever_it_holds(text: str) -> None:
    """A reader's message quotes a clipped key or value as JSON: the cut comes before the
    quoting, so no escape is split and the quoted text always decodes."""
    shown = json_clip(text)
    decoded = json.loads(shown)
    assert decoded == cut(text, 38)
