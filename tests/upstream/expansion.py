"""third_party/forked/golang/expansion/expand_test.go, as data: ``$(VAR)`` expansion's
rows (doExpansionTest, run by TestMapping with one context and by TestMappingDual with the
same variables split over two) and TestMapReference (environment variables referring to
earlier ones).

The stored version predates kubernetes#136325 (the rune-wise fix): its inputs are all
ASCII, where the byte-wise and the rune-wise rule agree, so every row holds at every
minor. The fix's own example (issue #136323) is pinned beside the runner, in
tests/upstream/test_expansion.py, with the releases it applies to.
"""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "third_party/forked/golang/expansion/expand_test.go"

V_490FFA4 = Source(
    FILE,
    "490ffa432a878f5a75e5b5906d820d06e672556e",
    tuple(range(26, 39)),
    "the rows are those of the file since it was forked (before 1.26); the fix of "
    "kubernetes#136325 (1.34.4, 1.35.1, 1.36.0) changed no answer for ASCII input",
)

# TestMapping's context; TestMappingDual splits it into two maps searched in order.
CONTEXT = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
DUAL = ({"VAR_A": "A", "VAR_EMPTY": ""}, {"VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)"})

# doExpansionTest: (name, input, expected), Go literals written as Python literals (their
# escapes coincide here).
_CASES: tuple[tuple[str, str, str], ...] = (
    ("whole string", "$(VAR_A)", "A"),
    ("repeat", "$(VAR_A)-$(VAR_A)", "A-A"),
    ("beginning", "$(VAR_A)-1", "A-1"),
    ("middle", "___$(VAR_B)___", "___B___"),
    ("end", "___$(VAR_C)", "___C"),
    ("compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"),
    ("backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"),
    # Upstream gives the next row the same name; it is told apart here.
    ("backslash escape ignored (second row of that name)", "foo\\\\$(VAR_C)bar",
     "foo\\\\Cbar"),
    ("lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
    ("nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
    ("value is a reference", "$(VAR_REF)", "$(VAR_A)"),
    ("value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
    ("empty var", "foo$(VAR_EMPTY)bar", "foobar"),
    ("unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"),
    ("shell special vars pass through", "$?_boo_$!", "$?_boo_$!"),
    ("bare operators are ignored", "$VAR_A", "$VAR_A"),
    ("undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"),
    ("multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"),
    ("missing open expression", "$VAR_A)", "$VAR_A)"),
    ("shell syntax ignored", "${VAR_A}", "${VAR_A}"),
    ("trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"),
    ("trailing incomplete expression, no content, is not consumed", "$(VAR_C)_______$(",
     "C_______$("),
    ("operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"),
    ("shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"),
    ("lots of $( in middle", "--$($($($($--", "--$($($($($--"),
    ("lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("),
    ("lots of $( at end", "foo0--$($($($(", "foo0--$($($($("),
    ("escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"),
    ("newline not expanded", "\n", "\n"),
)

ROWS: tuple[Row, ...] = (
    Row(V_490FFA4, "TestMapReference", "FOO, ZOO and BLU expanded in order",
        {"envs": (("FOO", "bar"), ("ZOO", "$(FOO)-1"), ("BLU", "$(ZOO)-2"))},
        {"env": {"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}}),
    *(Row(V_490FFA4, "TestMapping", name, {"input": given}, {"expected": want})
      for name, given, want in _CASES),
    *(Row(V_490FFA4, "TestMappingDual", name, {"input": given}, {"expected": want})
      for name, given, want in _CASES),
)
SOURCES = (V_490FFA4,)
