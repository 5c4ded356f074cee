"""expand_test.go's rows through _kubelet/expansion.py, with each kubelet minor's rule
(request_facts.expansion_rule), plus the example of the fix (kubernetes#136323/#136325) pinned
with the releases it applies to."""

from __future__ import annotations

import pytest

from kubelet_winnet._kubelet.expansion import ExpansionNotUtf8, expand
from kubelet_winnet._kubelet.kubelet_version import KubeletVersion, parse_kubelet_version
from kubelet_winnet._kubelet.request_facts import expansion_rule
from tests.upstream.expansion import CONTEXT, DUAL, ROWS
from tests.upstream.rows import Row, cases


def _runes(minor: int) -> bool:
    return expansion_rule(KubeletVersion(minor)).rune_wise


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMapping"))
def test_mapping(row: Row, minor: int) -> None:
    got = expand(row.given["input"], CONTEXT, runes=_runes(minor))
    assert got == row.want["expected"]
    # ASCII input: the byte-wise and the rune-wise rule agree.
    assert expand(row.given["input"], CONTEXT, runes=not _runes(minor)) == got


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMappingDual"))
def test_mapping_dual(row: Row, minor: int) -> None:
    assert expand(row.given["input"], *DUAL, runes=_runes(minor)) == row.want["expected"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMapReference"))
def test_map_reference(row: Row, minor: int) -> None:
    # Each value is expanded with the variables declared so far (the map the Go test
    # updates in place), the way makeEnvironmentVariables does.
    declared = dict(row.given["envs"])
    for name, value in row.given["envs"]:
        declared[name] = expand(value, declared, runes=_runes(minor))
    assert declared == row.want["env"]


# kubernetes#136323 (liggitt's comment of 2026-01-22): "$£FOO" resolved by the kubelet
# before kubernetes#136325 is the bytes 36 195 130 163 70 79 79 ("$", "Â", a stray 0xA3,
# "FOO"), which 1.34's CRI client refuses to marshal; from 1.34.4, 1.35.1 and 1.36.0 it
# stays "$£FOO" (the fix's release note in CHANGELOG-1.34.md and CHANGELOG-1.35.md).
BYTE_WISE = bytes([36, 195, 130, 163, 70, 79, 79])


@pytest.mark.parametrize("version", ["1.26", "1.33.7", "1.34.0", "1.34.3", "1.35.0"])
def test_the_fix_example_before_the_fix(version: str) -> None:
    rule = expansion_rule(parse_kubelet_version(version))
    assert not rule.rune_wise
    with pytest.raises(ExpansionNotUtf8) as caught:
        expand("$£FOO", {}, runes=rule.rune_wise)
    assert caught.value.value == BYTE_WISE


@pytest.mark.parametrize("version", ["1.34.4", "1.34", "1.35.1", "1.35", "1.36.0", "1.38"])
def test_the_fix_example_after_the_fix(version: str) -> None:
    rule = expansion_rule(parse_kubelet_version(version))
    assert rule.rune_wise
    assert expand("$£FOO", {}, runes=rule.rune_wise) == "$£FOO"
