"""_kubelet/expansion.py: the byte-wise rule of kubelets before kubernetes#136325, the
version rule that picks it (profile.expansion_rule), and the error that says what such a
kubelet does with a value that is not UTF-8. The rows of expand_test.go run in
tests/upstream/test_expansion.py."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet._kubelet.expansion import (
    ExpansionNotUtf8,
    ExpansionTooLarge,
    expand,
    not_utf8_error,
)
from kubelet_winnet._kubelet.kubelet_version import parse_kubelet_version
from kubelet_winnet._kubelet.mounts import expand_sub_path
from kubelet_winnet._kubelet.request_facts import expansion_rule
from kubelet_winnet.errors import InvalidUtf8Error

NAMES = st.sampled_from(["A", "B", "VAR_1", "é", ""])
ENV = st.dictionaries(NAMES, st.text(max_size=6), max_size=4)
# Text whose "$" never comes right before a character of more than one byte.
_ASCII_AFTER_DOLLAR = st.text(max_size=30).filter(
    lambda t: all(not (a == "$" and ord(b) > 0x7F) for a, b in itertools.pairwise(t))
)


@given(_ASCII_AFTER_DOLLAR, ENV)
@example("$$é$(é)$(A)$", {"é": "x", "A": "ü"})
def test_byte_wise_differs_only_after_a_dollar(text: str, env: dict[str, str]) -> None:
    # expand.go reads one byte after a lone "$" (tryReadVariableName's default case) and
    # otherwise only compares bytes with "$", "(" and ")", which are ASCII: with no
    # multi-byte character right after a "$", the byte-wise and rune-wise rules agree.
    assert expand(text, env, runes=False) == expand(text, env)


_NON_ASCII = st.characters(min_codepoint=0x80, codec="utf-8")
_NO_DOLLAR = st.text(st.characters(blacklist_characters="$", codec="utf-8"), max_size=8)


@given(_NO_DOLLAR, _NON_ASCII, _NO_DOLLAR)
@example("", "é", "")
@example("", "£", "FOO")
def test_a_lone_dollar_before_a_multibyte_character(before: str, char: str, after: str) -> None:
    # "Return the operator and the first rune in the string" says expand.go's comment;
    # before kubernetes#136325 the code wrote string(input[0]): the first *byte* taken as
    # a code point (0xC3 -> "Ã", bytes C3 83), then the character's other bytes as they
    # are: never UTF-8, since a continuation byte cannot follow "Ã".
    encoded = char.encode("utf-8")
    want = (before.encode() + b"$" + chr(encoded[0]).encode("utf-8") + encoded[1:]
            + after.encode())
    with pytest.raises(ExpansionNotUtf8) as caught:
        expand(before + "$" + char + after, {}, runes=False)
    assert caught.value.value == want
    assert expand(before + "$" + char + after, {}) == before + "$" + char + after


def test_byte_wise_expansion_splitting_a_character_is_not_utf8() -> None:
    with pytest.raises(ExpansionNotUtf8) as caught:
        expand("$é", runes=False)
    assert caught.value.value.hex(" ") == "24 c3 83 a9"


def test_byte_wise_respects_the_limit() -> None:
    with pytest.raises(ExpansionTooLarge):
        expand("$(A)$(A)$é", {"A": "x" * 10}, limit=15, runes=False)
    with pytest.raises(ExpansionNotUtf8):
        expand("$(A)$(A)$é", {"A": "x" * 10}, limit=25, runes=False)


@pytest.mark.parametrize(
    ("version", "rune_wise", "checks"),
    [
        ("1.26", False, False), ("1.33.7", False, False), ("1.34.0", False, True),
        ("1.34.3", False, True), ("1.34.4", True, True), ("1.34", True, True),
        ("1.35.0", False, True), ("1.35.1", True, True), ("1.35", True, True),
        ("1.36.0", True, True), ("v1.38.2", True, True),
    ],
)
def test_expansion_rule_per_release(version: str, rune_wise: bool, checks: bool) -> None:
    # CHANGELOG-1.34.md / CHANGELOG-1.35.md: the fix (#136490, #136491) is in 1.34.4 and
    # 1.35.1; CHANGELOG-1.36.md lists #136325 in v1.36.0-alpha.1. A version without a
    # patch means the newest patch of its minor. The CRI client checks UTF-8 from 1.34.
    rule = expansion_rule(parse_kubelet_version(version))
    assert (rule.rune_wise, rule.marshal_checks_utf8) == (rune_wise, checks)


def test_the_error_says_what_a_1_34_kubelet_does() -> None:
    rule = expansion_rule(parse_kubelet_version("1.34.2"))
    error = not_utf8_error("spec.containers[0].env[1].value", 'variable "GREETING"',
                           b"$\xc3\x83\xa9", rule)
    assert isinstance(error, InvalidUtf8Error) and isinstance(error, ValueError)
    assert error.field == "spec.containers[0].env[1].value"
    assert error.value == b"$\xc3\x83\xa9"
    text = str(error)
    assert text.startswith("spec.containers[0].env[1].value: kubelet 1.34.2 expands "
                           'variable "GREETING" to "$Ã\\xa9" (bytes 24 c3 83 a9)')
    assert '"grpc: error while marshaling: string field contains invalid UTF-8"' in text
    assert "CreateContainerError" in text
    assert "1.34.4, 1.35.1 and 1.36.0" in text


def test_the_error_says_what_an_older_kubelet_does() -> None:
    rule = expansion_rule(parse_kubelet_version("1.32"))
    text = str(not_utf8_error("spec.containers[0].args[0]", "args[0]", b"$\xc2\xa3", rule))
    assert "kubelet 1.32 expands args[0]" in text
    assert "sends those bytes unchecked" in text
    assert "grpc" not in text


def test_sub_path_expr_follows_the_rule() -> None:
    old = expansion_rule(parse_kubelet_version("1.30"))
    with pytest.raises(InvalidUtf8Error) as caught:
        expand_sub_path("logs/$é", {}, old, "spec.containers[0].volumeMounts[0].subPathExpr")
    assert caught.value.field == "spec.containers[0].volumeMounts[0].subPathExpr"
    assert "expands subPathExpr to" in str(caught.value)
    new = expansion_rule(parse_kubelet_version("1.36"))
    assert expand_sub_path("logs/$é", {}, new) == "logs/$é"
    assert expand_sub_path("logs/$é", {}) == "logs/$é"  # rune-wise without a rule
