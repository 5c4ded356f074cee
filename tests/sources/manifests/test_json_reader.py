"""JSON read as kubectl reads it (``sources/manifests/json_reader.py``): concatenated values, a
List's items one at a time in bounded memory, repeated keys and out-of-range numbers
refused with their line, every layout of a List.

Expected values come from the JSON texts written here and CPython's decoder, never from a
run of the reader.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet_winnet.sources.manifests import (
    MAX_INT_DIGITS,
    BadInput,
    Document,
)
from kubelet_winnet.sources.manifests.json_reader import _Duplicate, decode
from tests.strategies import (
    PEAK_KB,
    bad_inputs,
    examples,
    input_values,
    read_input,
    read_input_text,
    run_main,
    write_input,
)


def test_json_list_items_stream_with_lines(tmp_path: Path) -> None:
    items = [
        '{"kind": "Pod",\n "spec": {\n  "hostNetwork": true}}',
        '{"kind": "Pod", "a": 1, "a": 2}',
        '{"kind": "Pod", "n": ' + "1" * (MAX_INT_DIGITS + 1) + "}",
        '{"kind": "Pod", "x": NaN}',
        '{"kind": "Pod", "x": 1e999}',
        '"text"',
        '{"kind": "Pod"}',
    ]
    text = '{"apiVersion": "v1",\n"items": [\n' + ",\n".join(items) + '],\n"kind": "List"}\n'
    found = read_input(write_input(tmp_path, "l.json", text))
    kinds = [(type(d).__name__, d.line) for d in found]
    assert kinds == [
        ("Document", 3), ("BadInput", 6), ("BadInput", 7), ("BadInput", 8), ("BadInput", 9),
        ("BadInput", 10), ("Document", 11),
    ]
    first = found[0]
    assert isinstance(first, Document)
    assert first.line_of(("spec", "hostNetwork")) == 5
    assert 'duplicate key "a"' in str(found[1])
    assert "digits" in str(found[2])
    assert all(d.document == 1 for d in found)


def test_concatenated_json_values(tmp_path: Path) -> None:
    path = write_input(tmp_path, "s.json", '{"kind": "Pod"}\n{"kind": "Pod", "kind": "Pod"}\n'
                                     '{"kind": "Service"}')
    found = read_input(path)
    assert [(type(d).__name__, d.document, d.line) for d in found] == [
        ("Document", 1, 1), ("BadInput", 2, 2), ("Document", 3, 3),
    ]


def test_flow_style_yaml_that_looks_like_json(tmp_path: Path) -> None:
    path = write_input(tmp_path, "f.yaml", '{\n  kind: "Pod",\n  spec: {hostNetwork: true},\n}\n')
    assert input_values(read_input(path)) == [{"kind": "Pod", "spec": {"hostNetwork": True}}]


def test_truncated_json(tmp_path: Path) -> None:
    path = write_input(tmp_path, "t.json", '{"kind": "Pod"}\n{"kind": "Pod", "spec": {\n')
    found = read_input(path)
    assert input_values(found) == [{"kind": "Pod"}]
    (problem,) = bad_inputs(found)
    assert "JSON" in problem.reason


@pytest.mark.slow  # a bound checked at scale: memory over a large generated List
def test_large_list_streams_in_bounded_memory(tmp_path: Path) -> None:
    """Peak memory of reading a ~60 MB JSON List stays far below its size."""
    path = tmp_path / "big.json"
    item = json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "n", "labels": {"app": "x" * 200}},
        "spec": {"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "windows"},
                 "containers": [{"name": "c", "image": "i" * 200}]},
    })
    count = 100_000
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{"apiVersion": "v1", "kind": "List", "items": [\n')
        for index in range(count):
            handle.write(("," if index else "") + item + "\n")
        handle.write("]}\n")
    size = path.stat().st_size
    assert size > 50_000_000
    code = PEAK_KB + (
        "import sys\n"
        "from kubelet_winnet.sources.manifests import read_source\n"
        "base = peak_kb()\n"
        "n = sum(1 for d in read_source(sys.argv[1]) if d.value['kind'] == 'Pod')\n"
        "print(n, base, peak_kb())\n"
    )
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=600, check=True)
    del start
    read_count, base_kb, peak_kb = map(int, done.stdout.split())
    assert read_count == count
    assert (peak_kb - base_kb) * 1024 < size / 5, (base_kb, peak_kb, size)


# --- Lists in kubectl's layout (sources/manifests/json_reader.py) ------------------------------


def _kubectl_list(items: list[str], indent: str = "        ", newline: str = "\n") -> str:
    """A List laid out as ``kubectl get -o json`` writes one: each item's lines indented,
    its braces alone at the item's indentation."""
    body = ("," + newline).join(
        indent + newline.join(indent + line if n else line
                              for n, line in enumerate(item.split("\n")))
        for item in items
    )
    return (f'{{{newline}    "apiVersion": "v1",{newline}    "items": [{newline}{body}'
            f'{newline}    ],{newline}    "kind": "List"{newline}}}{newline}')


def _item_lines(text: str, count: int, indent: str = "        ") -> list[int]:
    """1-based lines where the items of a :func:`_kubectl_list` text start."""
    lines = text.split("\n")
    first = next(n for n, line in enumerate(lines) if '"items": [' in line) + 1
    return [n + 1 for n, line in enumerate(lines)
            if n >= first and line.rstrip("\r") == indent + "{"][:count]


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
    | st.sampled_from(["a:b", ":", "}", "\n}", '"', "\\", "\u2028", "é:ü"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b:c", "}", "spec", "é", ""]), inner, max_size=4),
    max_leaves=25,
)


@given(st.lists(st.dictionaries(st.sampled_from(["kind", "spec", "x", "a:b"]), _JSON_VALUES,
                                min_size=1, max_size=4), min_size=1, max_size=5),
       st.booleans(), st.booleans(), st.sampled_from(["        ", " ", ""]))
@settings(max_examples=examples(200), deadline=None)
def test_list_items_in_kubectl_layout_read_as_the_stdlib_decoder_reads_them(
    items: list[dict[str, Any]], ascii_only: bool, crlf: bool, indent: str,
) -> None:
    """Every item of a List in kubectl's layout (LF or CRLF, escaped or raw Unicode,
    items indented or at the start of their lines) is the value CPython's decoder gives
    for its text (types included: 1, 1.0 and true stay apart), at the line where the
    item starts."""
    texts = [json.dumps(item, indent=4, ensure_ascii=ascii_only) for item in items]
    newline = "\r\n" if crlf else "\n"
    text = _kubectl_list(texts, indent=indent, newline=newline)
    found = read_input_text(text)
    assert [type(d).__name__ for d in found] == ["Document"] * len(items)
    assert [json.dumps(d.value) for d in found if isinstance(d, Document)] == [
        json.dumps(json.loads(t)) for t in texts
    ]
    assert [d.line for d in found] == _item_lines(text, len(items), indent)


@pytest.mark.parametrize(("item", "line", "words"), [
    # A repeated key deep inside an item: refused with the repeated key's line.
    ('{\n    "kind": "Pod",\n    "spec": {\n        "a": 1,\n        "a": 2\n    }\n}', 5,
     'duplicate key "a"'),
    # \u003a spells a colon (a reader that counts colons would miss the repeated key).
    ('{\n    "kind": "Pod",\n    "a": 1,\n    "a": 2,\n    "b": "\\u003a"\n}', 4,
     'duplicate key "a"'),
    ('{\n    "kind": "Pod",\n    "n": ' + "7" * (MAX_INT_DIGITS + 1) + "\n}", 0, "digits"),
    ('{\n    "kind": "Pod",\n    "x": 1e999\n}', 0, "out of range"),
    ('{\n    "kind": "Pod",\n    "x": NaN\n}', 0, "NaN is not JSON"),
    ('{\n    "kind": "Pod",\n    "x": ' + "[" * 150 + "]" * 150 + "\n}", 0,
     "nested deeper than 100 levels"),
])
def test_bad_list_items_in_kubectl_layout(
    tmp_path: Path, item: str, line: int, words: str
) -> None:
    """A bad item is refused with its index and line; the later items are still read."""
    good = '{\n    "kind": "Pod"\n}'
    text = _kubectl_list([good, item, good])
    found = read_input(write_input(tmp_path, "l.json", text))
    starts = _item_lines(text, 3)
    assert [type(d).__name__ for d in found] == ["Document", "BadInput", "Document"]
    problem = found[1]
    assert isinstance(problem, BadInput)
    assert "items[1]" in problem.reason and words in problem.reason
    assert problem.line == (starts[1] + line - 1 if line else starts[1])
    assert found[2].line == starts[2]


@pytest.mark.parametrize(("lists", "refused"), [(97, False), (98, True)])
def test_list_item_depth_at_the_limit(tmp_path: Path, lists: int, refused: bool) -> None:
    """An item inside a List counts two levels of --max-depth (100) already: an item of
    98 nested objects and arrays is read, one of 99 is refused."""
    item = '{\n    "kind": "Pod",\n    "x": ' + "[" * lists + "]" * lists + "\n}"
    found = read_input(write_input(tmp_path, "l.json", _kubectl_list([item])))
    assert len(found) == 1
    if refused:
        assert isinstance(found[0], BadInput)
        assert "items[0]: nested deeper than 100 levels" in found[0].reason
    else:
        assert input_values(found) == [json.loads(item)]


def test_list_item_with_a_lone_surrogate_escape_reads_as_the_stdlib_reads_it(
    tmp_path: Path,
) -> None:
    item = '{\n    "kind": "Pod",\n    "x": "\\ud800"\n}'
    found = read_input(write_input(tmp_path, "l.json", _kubectl_list([item])))
    assert input_values(found) == [json.loads(item)]


@pytest.mark.parametrize("layout", ["inner brace at the item's indentation", "compact",
                                    "tabs", "item after the bracket"])
def test_list_items_in_other_layouts(tmp_path: Path, layout: str) -> None:
    """Every layout of a List reads item by item, to the same values."""
    items = [{"kind": "Pod", "spec": {"n": n, "list": [{"a": 1}]}} for n in range(3)]
    if layout == "compact":
        text = json.dumps({"kind": "List", "items": items})
    elif layout == "tabs":
        text = _kubectl_list([json.dumps(i, indent="\t") for i in items], indent="\t")
    elif layout == "item after the bracket":
        text = '{"kind": "List", "items": [' + json.dumps(items[0], indent=4) + ",\n" + \
            ",\n".join(json.dumps(i, indent=4) for i in items[1:]) + "]}"
    else:  # an inner object closed on a line of its own at the item's indentation
        texts = ['{\n"kind": "Pod",\n"spec": {\n"n": ' + str(n)
                 + ',\n"list": [\n{\n"a": 1\n}\n]\n}\n}' for n in range(3)]
        text = _kubectl_list(texts, indent="")
    found = read_input(write_input(tmp_path, "l.json", text))
    assert input_values(found) == items


def test_a_repeated_key_far_into_a_long_list_is_refused(tmp_path: Path) -> None:
    """An item past several reads (64 KiB each) with a \\u003a-hidden repeated key is
    still refused, with its index."""
    filler = '{\n    "kind": "Pod",\n    "pad": "' + "x" * 1000 + '"\n}'
    hidden = '{\n    "kind": "Pod",\n    "a": 1,\n    "a": 2,\n    "b": "\\u003a"\n}'
    items = [filler] * 300 + [hidden] + [filler] * 10
    found = read_input(write_input(tmp_path, "l.json", _kubectl_list(items)))
    assert [type(d).__name__ for d in found].count("Document") == 310
    (problem,) = bad_inputs(found)
    assert "items[300]" in problem.reason and 'duplicate key "a"' in problem.reason


# --- document numbers in a stream of JSON values ---------------------------------------


def _ignored_host_network_pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "windows"},
                     "containers": [{"name": "c", "image": "i"}]}}


@pytest.mark.parametrize("indent", [None, 4])  # one line per value; kubectl's layout
def test_each_json_value_after_a_list_is_its_own_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, indent: int | None
) -> None:
    """kubectl reads concatenated JSON values as documents: the n-th top-level value is
    document n, a List's items all belong to the List's number."""
    def listed(*names: str) -> str:
        items = [_ignored_host_network_pod(n) for n in names]
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=indent)

    values = [
        listed("a", "b"),                          # 1
        '{"kind": "Pod", "x": 1, "x": 2}',         # 2: refused right after the List
        listed("c"),                               # 3: a List right after a refused value
        listed("d"),                               # 4: a List right after a List
        '{"kind": "Pod", "n": 1e999}',             # 5
        json.dumps(_ignored_host_network_pod("e"), indent=indent),  # 6
        "[1]",                                     # 7
    ]
    path = tmp_path / "stream.json"
    path.write_text("\n".join(values) + "\n", encoding="utf-8")
    status, out, err = run_main(capsys, "check", str(path), "-o", "json", "--fail-on", "never")
    assert status == 2
    found = [(f["object"]["name"], f["document"], f["item"]) for f in json.loads(out)["findings"]]
    assert found == [("a", 1, 0), ("b", 1, 1), ("c", 3, 0), ("d", 4, 0), ("e", 6, None)]
    errors = [line.split(": ")[3] for line in err.splitlines() if ": error: " in line]
    assert errors == ["document 2", "document 5", "document 7"]


# --- repeated keys -----------------------------------------------------------------------


class _Repeated(Exception):
    pass


def _refusing_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _Repeated
    return dict(pairs)


def _members(data: st.DataObject, depth: int) -> str:
    """An object's text whose keys may repeat, with colons written as they are or as
    ``\\u003a``/``\\u003A`` escapes, in keys and values."""
    draw = data.draw
    keys = draw(st.lists(st.sampled_from(["a", "b", "a:b", ":", "é", "x\\y"]), max_size=4))
    parts = []
    for key in keys:
        if depth and draw(st.booleans()):
            value = _members(data, depth - 1)
        else:
            value = json.dumps(draw(st.sampled_from(["", ":", "a:b", "\\u", 1, None, [":"]])))
        parts.append(f"{json.dumps(key)}{draw(st.sampled_from(['', ' ']))}:{value}")
    text = "{" + ",".join(parts) + "}"
    if draw(st.booleans()):
        escape = draw(st.sampled_from(["\\u003a", "\\u003A"]))
        text = text.replace('a:b"', f'a{escape}b"')  # only inside strings
    return text


@given(st.data())
@settings(max_examples=examples(500), deadline=None)
def test_decode_refuses_exactly_the_values_with_a_repeated_key(
    data: st.DataObject,
) -> None:
    """``decode`` gives what a decoder with a repeated-key hook gives, for every object
    text (keys and values holding colons, as they are or as ``\\u003a`` escapes): a
    repeated key is found, and no value without one is refused."""
    text = _members(data, 2)
    padded = "  " + text + "  ,"
    try:
        expected: Any = json.loads(text, object_pairs_hook=_refusing_repeats)
    except _Repeated:
        with pytest.raises(_Duplicate):
            decode(padded, 2)
        return
    value, end, brackets = decode(padded, 2)
    assert (value, end) == (expected, 2 + len(text))
    assert brackets >= text.count("{")  # a bound of the nesting


@pytest.mark.parametrize(("after", "words"), [
    ('"x": NaN', 'duplicate key "a"'),
    ('"x": ' + "7" * (MAX_INT_DIGITS + 1), 'duplicate key "a"'),
])
def test_a_repeated_key_before_another_problem_is_the_one_reported(
    tmp_path: Path, after: str, words: str
) -> None:
    """The first problem in the text is the one reported, as Go's decoder reports it."""
    good = '{\n    "kind": "Pod"\n}'
    item = '{\n    "kind": "Pod",\n    "s": {"a": 1, "a": 2},\n    ' + after + "\n}"
    text = _kubectl_list([good, item, good])
    found = read_input(write_input(tmp_path, "l.json", text))
    assert [type(d).__name__ for d in found] == ["Document", "BadInput", "Document"]
    problem = found[1]
    assert isinstance(problem, BadInput)
    assert problem.reason == f"items[1]: {words}"
    lines = text.splitlines()
    assert problem.line == next(n for n, line in enumerate(lines, 1) if '"s"' in line)


@pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"),
                    reason="this Python (before 3.10.7) has no integer digit limit to set")
@pytest.mark.parametrize("python_limit", [0, 640, MAX_INT_DIGITS, 10 * MAX_INT_DIGITS])
def test_an_integer_past_the_digit_limit_is_refused_whatever_pythons_limit(
    tmp_path: Path, python_limit: int
) -> None:
    """The reader refuses integers of more than MAX_INT_DIGITS digits itself: a process
    that lifted Python's own limit (0: none) or lowered it still gets that refusal, and
    the integers it accepts keep their value."""
    good = '{\n    "kind": "Pod",\n    "n": ' + "1" * 600 + "\n}"
    item = '{\n    "kind": "Pod",\n    "n": ' + "7" * (MAX_INT_DIGITS + 1) + "\n}"
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(python_limit)
    try:
        found = read_input(write_input(tmp_path, "l.json", _kubectl_list([good, item, good])))
    finally:
        sys.set_int_max_str_digits(before)
    assert [type(d).__name__ for d in found] == ["Document", "BadInput", "Document"]
    first = found[0]
    assert isinstance(first, Document) and first.value["n"] == int("1" * 600)
    assert str(found[1]).endswith(f"items[1]: integer with more than {MAX_INT_DIGITS} digits")


def test_a_file_cut_off_after_a_repeated_key_is_truncated(tmp_path: Path) -> None:
    """A List item with a repeated key whose text then ends: the key is met first, and the
    value cannot be skipped to its end."""
    text = '{"kind": "List", "items": [{"kind": "Pod"}, {"kind": "Pod", "s": {"a": 1, "a": 2}, '
    found = read_input(write_input(tmp_path, "l.json", text + '"x": [tru'))
    assert [type(d).__name__ for d in found] == ["Document", "BadInput"]
    problem = found[1]
    assert isinstance(problem, BadInput)
    assert problem.reason.startswith("not valid JSON: truncated")


@pytest.mark.parametrize("repeated", [False, True])
def test_a_raw_lone_surrogate_leaves_the_repeated_key_to_the_hook(repeated: bool) -> None:
    """A lone surrogate written as itself (not as a ``\\u`` escape) cannot be encoded to
    count colons: the decoder with the hook decides, and a repeated key is still found."""
    second = '"a"' if repeated else '"b"'
    text = '{"a": "\ud800:", ' + second + ': 1}'
    if repeated:
        with pytest.raises(_Duplicate):
            decode(text, 0)
        return
    value, end, _ = decode(text, 0)
    assert (value, end) == ({"a": "\ud800:", "b": 1}, len(text))


@pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"),
                    reason="this Python (before 3.10.7) has no integer digit limit to set")
def test_an_integer_past_a_lowered_python_limit_is_bad_input_not_a_traceback(
    tmp_path: Path,
) -> None:
    """A process that lowered Python's digit limit below the reader's (640 here) cannot
    convert a 1,000-digit literal: that item is refused, naming the limit, and the items
    around it are read."""
    good = '{\n    "kind": "Pod",\n    "n": ' + "1" * 600 + "\n}"
    item = '{\n    "kind": "Pod",\n    "n": ' + "7" * 1000 + "\n}"
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        found = read_input(write_input(tmp_path, "l.json", _kubectl_list([good, item, good])))
    finally:
        sys.set_int_max_str_digits(before)
    assert [type(d).__name__ for d in found] == ["Document", "BadInput", "Document"]
    assert str(found[1]).endswith(
        "items[1]: integer with more than 640 digits, the limit this Python process sets")
