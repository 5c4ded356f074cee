"""YAML read as kubectl reads it (``sources/manifests/yaml_reader.py``): sigs.k8s.io/yaml semantics
(YAML 1.1 scalars and go-yaml v2's, timestamps kept as strings, keys as JSON strings,
``!!binary`` decoded), aliases bounded, a List's items handed over as they are composed.

Expected values come from the YAML texts written here and go-yaml v2's rules, never from
a run.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet_winnet.sources.manifests import (
    MAX_INT_DIGITS,
    BadInput,
    Document,
    Limits,
    read_source,
)
from tests.strategies import (
    PEAK_KB,
    POD_VALUE,
    POD_YAML,
    bad_inputs,
    input_values,
    read_input,
    read_input_text,
    run_main,
    write_input,
)

# --- values ---------------------------------------------------------------------------


def test_yaml_scalars_become_json_values(tmp_path: Path) -> None:
    path = write_input(tmp_path, "s.yaml", (
        "a: 2021-02-30\nb: 2001-12-14t21:59:43.10-05:00\nc: yes\nd: off\ne: 0x1F\n"
        "f: 010\ng: 1_000\nh: ~\ni: 1.5\nj: !!str 12\nk: '12'\n1: int key\ntrue: bool key\n"
    ))
    (value,) = input_values(read_input(path))
    assert value == {
        "a": "2021-02-30", "b": "2001-12-14t21:59:43.10-05:00", "c": True, "d": False,
        "e": 31, "f": 8, "g": 1000, "h": None, "i": 1.5, "j": "12", "k": "12",
        "1": "int key", "true": "bool key",
    }


def test_scalars_kubectl_resolves_where_yaml_1_1_does_not(tmp_path: Path) -> None:
    """sigs.k8s.io/yaml reads YAML with go-yaml v2, whose resolve.go also turns plain
    y/Y/n/N into booleans and parses integers with Go's base prefixes (0o17)."""
    path = write_input(tmp_path, "g.yaml", (
        "kind: Pod\nspec:\n  hostNetwork: y\n  a: N\n  b: Y\n  c: n\n  d: 0o17\n"
        "  e: -0o7\n  f: 'y'\n  g: \"0o17\"\n  h: yy\n  i: 0o8\n  y: key\n"
    ))
    (value,) = input_values(read_input(path))
    assert value["spec"] == {
        "hostNetwork": True, "a": False, "b": True, "c": False, "d": 15, "e": -7,
        "f": "y", "g": "0o17", "h": "yy", "i": "0o8", "true": "key",
    }


# !!binary as kubectl reads it: go-yaml v2 (decode.go ``scalar``) decodes the base64
# with Go's base64.StdEncoding (padding required, line breaks skipped) into a string of
# the raw bytes, and sigs.k8s.io/yaml's json.Marshal writes each byte that does not start
# valid UTF-8 as U+FFFD. Rows checked against go-yaml v2 and encoding/json themselves.
_BINARY_ROWS = [
    ("cHA=", "pp"),
    ('""', ""),
    ("|\n    cH\n    A=\n", "pp"),  # a literal block: Go's decoder skips the line breaks
    ("8J+Ygg==", "\U0001f602"),  # f0 9f 98 82: valid UTF-8 stays as it is
    ("gA==", "\ufffd"),  # 80: a continuation byte alone
    ("4oI=", "\ufffd\ufffd"),  # e2 82: a cut sequence, one U+FFFD per byte
    ("7aCA", "\ufffd\ufffd\ufffd"),  # ed a0 80: a UTF-16 surrogate is not UTF-8
    ("cHB=", "pp"),  # bits past the last byte are ignored (StdEncoding is not Strict)
]


@pytest.mark.parametrize(("scalar", "expected"), _BINARY_ROWS)
def test_binary_scalars_read_as_kubectl_reads_them(
    tmp_path: Path, scalar: str, expected: str,
) -> None:
    """As kubectl reads it: `name: !!binary cHA=` was once checked as the name "cHA="."""
    path = write_input(tmp_path, "b.yaml", f"kind: Pod\nmetadata:\n  name: !!binary {scalar}\n")
    (value,) = input_values(read_input(path))
    assert value["metadata"]["name"] == expected


# One well-formed UTF-8 sequence at a position, by Go's table (unicode/utf8/utf8.go:
# ``first`` and ``acceptRanges``); Go's json.Marshal writes each byte where none starts
# as U+FFFD and goes on at the next byte.
_GO_UTF8 = re.compile(
    rb"[\x00-\x7f]|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]"
    rb"|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)


def _go_json_string(data: bytes) -> str:
    out, at = [], 0
    while at < len(data):
        match = _GO_UTF8.match(data, at)
        if match is None:
            out.append("\ufffd")
            at += 1
        else:
            out.append(match.group().decode("utf-8"))
            at = match.end()
    return "".join(out)


@given(st.binary(max_size=24) | st.lists(
    st.sampled_from([b"\x80", b"\xbf", b"\xc2", b"\xe0", b"\xe2\x82", b"\xed\xa0",
                     b"\xf0\x9f", b"\xf4\x90", b"\xf5", b"\xff", b"a", b"\xc3\xa9"]),
    max_size=8).map(b"".join))
@settings(max_examples=150, deadline=None)
def test_binary_scalars_of_any_bytes_read_as_go_writes_them(data: bytes) -> None:
    """go-yaml v2 gives string(data); json.Marshal replaces, byte by byte, what does not
    start valid UTF-8 (sigs.k8s.io/yaml, YAML -> JSON)."""
    encoded = base64.b64encode(data).decode()
    text = f'kind: Pod\nv: !!binary "{encoded}"\n'  # the reader goes by content, not suffix
    found = [d for d in read_input_text(text) if isinstance(d, Document)]
    assert [d.value["v"] for d in found] == [_go_json_string(data)]


@pytest.mark.parametrize("scalar", [
    "cHA",  # no padding
    "cA=",  # too little padding
    '"="',
    "YQ==YQ==",  # data after the padding
    "cH\n    A=",  # a plain scalar folds its line break into a space
    "cH*A",
])
def test_invalid_base64_in_a_binary_scalar_is_bad_input_with_its_line(
    tmp_path: Path, scalar: str,
) -> None:
    """kubectl refuses the document ("!!binary value contains invalid base64 data"): so
    does the reader, naming the line, and the next document is still read."""
    path = write_input(tmp_path, "b.yaml",
                 f"kind: Pod\nmetadata:\n  name: !!binary {scalar}\n---\n{POD_YAML}")
    found = read_input(path)
    (problem,) = bad_inputs(found)
    assert (problem.document, problem.line) == (1, 3)
    assert "!!binary" in problem.reason and "is not valid base64" in problem.reason
    assert input_values(found) == [POD_VALUE]


def test_check_names_a_pod_by_its_binary_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = write_input(tmp_path, "p.yaml", (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: !!binary cHA=\nspec:\n"
        "  hostNetwork: true\n  nodeSelector: {kubernetes.io/os: windows}\n"
        "  containers: [{name: c, image: i}]\n"
    ))
    _, out, _ = run_main(capsys, "check", str(path), "-o", "json", "--fail-on", "never")
    names = {f["object"]["name"] for f in json.loads(out)["findings"]}
    assert names == {"pp"}


def test_merge_keys_and_aliases(tmp_path: Path) -> None:
    path = write_input(tmp_path, "m.yaml", (
        "base: &b {u: 1, v: 2}\nspec:\n  <<: *b\n  v: 3\nlist: [*b, *b]\n"
    ))
    (value,) = input_values(read_input(path))
    assert value["spec"] == {"u": 1, "v": 3}
    assert value["list"] == [{"u": 1, "v": 2}] * 2


def test_huge_integer_within_the_limit_is_kept_exactly(tmp_path: Path) -> None:
    digits = "7" * MAX_INT_DIGITS
    path = write_input(tmp_path, "i.yaml", f"kind: ConfigMap\nnumber: {digits}\n")
    (value,) = input_values(read_input(path))
    assert value["number"] == int(digits)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("kind: Pod\nn: " + "9" * (MAX_INT_DIGITS + 1) + "\n", 2, "digits"),
        ("kind: Pod\nspec: {x: !!int abc}\n", 2, "!!int"),
        ("kind: Pod\nx: !!python/object:os.system ls\n", 2, "tag"),
        ("kind: Pod\nx: !custom 1\n", 2, "tag"),
        ("kind: Pod\nx: !!float .inf\n", 2, "JSON"),
        ("kind: Pod\nx: !!set {a, b}\n", 2, "tag"),
        ("kind: Pod\nspec:\n  hostNetwork: false\n  hostNetwork: true\n", 4,
         'duplicate key "hostNetwork"'),
        ("kind: Pod\n? [a]\n: 1\n", 2, "scalar"),
        ("kind: Pod\nspec: {containers: [\n", 3, "YAML"),
    ],
)
def test_bad_yaml_values(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write_input(tmp_path, "bad.yaml", text + "---\n" + POD_YAML)
    found = read_input(path)
    (problem,) = bad_inputs(found)
    assert problem.source == str(path)
    assert problem.document == 1
    assert problem.line == line
    assert words in problem.reason
    if "YAML" not in words:  # a syntax error ends the stream; the others do not
        assert input_values(found) == [POD_VALUE]


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    (problem,) = bad_inputs(read_input(write_input(tmp_path, "r.yaml", "a: &a [1, *a]\n")))
    assert "alias" in problem.reason


@pytest.mark.slow  # times the reader (< 1 s): machinery; test_run.py's bomb keeps the refusal
def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    """Nine levels of nine aliases: 387 million nodes if expanded."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append("spec: {hostNetwork: *l8}")
    path = write_input(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    assert path.stat().st_size < 1000
    code = PEAK_KB + (
        "import sys, time\n"
        "from kubelet_winnet.sources.manifests import read_source\n"
        "start = time.perf_counter()\n"
        "found = list(read_source(sys.argv[1]))\n"
        "print(time.perf_counter() - start)\n"
        "print(peak_kb())\n"
        "print(found[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=60, check=True)
    seconds, peak_kb, problem = done.stdout.splitlines()
    assert float(seconds) < 1.0
    assert int(peak_kb) < 100 * 1024
    assert "--max-alias-nodes" in problem


def test_alias_limit_can_be_raised(tmp_path: Path) -> None:
    path = write_input(tmp_path, "a.yaml", "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n")
    assert bad_inputs(read_input(path, Limits(max_alias_nodes=8)))
    assert input_values(read_input(path, Limits(max_alias_nodes=12))) == [
        {"a": [1, 2, 3], "b": [[1, 2, 3]] * 3}
    ]


def test_yaml_list_items_are_handed_over_as_they_are_read(tmp_path: Path) -> None:
    """`kubectl get -o yaml` output: items before kind; the first item arrives before the
    rest of the document is parsed (here: before a syntax error further down)."""
    path = write_input(tmp_path, "l.yaml", (
        "apiVersion: v1\nitems:\n- kind: Pod\n  spec:\n    hostNetwork: true\n"
        "- kind: Pod\n  spec: {containers: [\n"
    ))
    reader = read_source(str(path))
    first = next(reader)
    assert isinstance(first, Document)
    assert (first.item, first.line, first.line_of(("spec", "hostNetwork"))) == (0, 3, 5)
    assert isinstance(next(reader), BadInput)


def test_list_items_given_by_an_alias_are_each_an_object(tmp_path: Path) -> None:
    """An alias hands the whole sequence over at once (nothing to stream): each item is
    still a document of its own, placed where its anchor wrote it; a non-object item is
    bad input naming its index."""
    path = write_input(tmp_path, "l.yaml", (
        "x: &pods\n- kind: Pod\n  spec:\n    hostNetwork: true\n- 7\n"
        "apiVersion: v1\nkind: List\nitems: *pods\n"
    ))
    first, second = read_input(path)
    assert isinstance(first, Document)
    assert (first.item, first.value["spec"], first.line_of(("spec", "hostNetwork"))) == (
        0, {"hostNetwork": True}, 4)
    assert isinstance(second, BadInput)
    assert "items[1] is a number, not an object" in second.reason


@pytest.mark.slow  # a bound checked at scale: memory over a large generated List
def test_large_yaml_list_streams_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    count = 8_000
    with path.open("w", encoding="utf-8") as handle:
        handle.write("apiVersion: v1\nitems:\n")
        for index in range(count):
            handle.write(f"- kind: Pod\n  metadata:\n    name: p{index}\n"
                         f"    annotations: {{note: {'x' * 3000}}}\n"
                         "  spec: {hostNetwork: true}\n")
        handle.write("kind: List\n")
    size = path.stat().st_size
    code = PEAK_KB + (
        "import sys\n"
        "from kubelet_winnet.sources.manifests import read_source\n"
        "base = peak_kb()\n"
        "n = sum(1 for d in read_source(sys.argv[1]) if d.value.get('kind') == 'Pod')\n"
        "print(n, base, peak_kb())\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=600, check=True)
    read_count, base_kb, peak_kb = map(int, done.stdout.split())
    assert read_count == count
    assert (peak_kb - base_kb) * 1024 < size / 4, (base_kb, peak_kb, size)


@pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"),
                    reason="this Python (before 3.10.7) has no integer digit limit to set")
def test_an_integer_past_a_lowered_python_limit_says_so(tmp_path: Path) -> None:
    """A process that lowered Python's digit limit below the reader's (640 here) cannot
    convert a 1,000-digit integer: the document is refused naming that limit (not "is not
    an integer"), and a word that is no integer still says so."""
    path = write_input(tmp_path, "p.yaml", "kind: Pod\nn: " + "7" * 1000 + "\n---\n"
                       "kind: Pod\nm: !!int 12x\n")
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        found = read_input(path)
    finally:
        sys.set_int_max_str_digits(before)
    reasons = [str(d) for d in found]
    assert reasons[0].endswith(
        "p.yaml:2: document 1: integer with more than 640 digits, the limit this Python "
        "process sets")
    assert reasons[1].endswith('!!int "12x" is not an integer')


@given(st.text(max_size=12))
def test_the_plain_scalar_shortcut_agrees_with_pyyaml_s_resolver(value: str) -> None:
    """The reader takes a plain scalar as a string, without asking the resolver, when its
    first character starts none of PyYAML's implicit resolvers: for every such scalar the
    resolver itself must say ``str``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if value[:1] in loader.yaml_implicit_resolvers:
        return
    resolved = loader("").resolve(yaml.ScalarNode, value, (True, False))
    assert resolved == "tag:yaml.org,2002:str", (value, resolved)


def test_the_shortcut_keys_are_the_resolvers_first_characters() -> None:
    """The characters the shortcut passes on to the resolver include every first
    character of a value PyYAML resolves to something other than a string."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolved = {"1": "int", "-": "int", ".": "float", "t": "bool", "n": "null", "~": "null",
                "2": "int", "<": "merge", "=": "value", "": "null"}
    for first in resolved:
        assert first in loader.yaml_implicit_resolvers, first
