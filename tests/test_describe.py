"""``_describe``: error messages describe any value in bounded size, never raising and
never calling the value's own ``repr``/``str``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._describe import describe, json_kind, quoted, type_name, yaml_kind
from tests.strategies import HOSTILE


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", 'string "true"'),
        (True, "boolean true"),
        (5, "number 5"),
        (2.5, "number 2.5"),
        (None, "null"),
        ({}, "object"),
        ([1], "array"),
        (b"x", "bytes b'x'"),
    ],
)
def test_json_kinds(value: object, expected: str) -> None:
    assert describe(value) == expected


def test_huge_int_is_described_by_its_size() -> None:
    assert describe(10**5000) == "number with about 5001 digits"
    assert describe(-(10**5000)).startswith("number with about 50")


def test_long_strings_and_bytes_are_cut() -> None:
    assert len(describe("x" * 1_000_000)) < 80
    assert describe("x" * 100) == 'string "' + "x" * 37 + '"...'
    assert len(describe(b"y" * 1_000_000)) < 80


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_values_never_raise(name: str) -> None:
    text = describe(HOSTILE[name])
    assert 0 < len(text) < 120
    assert 0 < len(type_name(HOSTILE[name])) <= 40


@given(st.text())
def test_quoted_is_json_and_bounded(text: str) -> None:
    shown = quoted(text)
    assert shown.startswith('"')
    # JSON escapes a character in at most 12 (a surrogate pair), 37 characters kept.
    assert len(shown) <= 5 + 12 * 37


@given(st.from_type(type).flatmap(st.from_type))
def test_any_value(value: Any) -> None:
    assert len(describe(value)) < 200


@pytest.mark.parametrize(
    ("value", "json_words", "yaml_words"),
    [
        ({}, "an object", "a mapping"),
        ([], "an array", "a list"),
        ("x", "a string", "a string"),
        (True, "a boolean", "a boolean"),
        (0, "a number", "a number"),
        (1.5, "a number", "a number"),
        (None, "null", "null"),
        (b"x", "bytes", "bytes"),
    ],
)
def test_json_kind_says_what_a_value_is_in_each_formats_words(
        value: object, json_words: str, yaml_words: str) -> None:
    """One describer for "expected X, got Y": JSON's words, and YAML's for its files."""
    assert json_kind(value) == json_words
    assert yaml_kind(value) == yaml_words


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_json_kind_of_hostile_values_never_raises(name: str) -> None:
    assert 0 < len(json_kind(HOSTILE[name])) <= 40
