"""The input layer (``kubelet_winnet.cli.input``): YAML and JSON read as kubectl reads them,
one document at a time, every problem a :class:`BadInput` with file, document and line.

Expected values come from the YAML/JSON texts written here (sigs.k8s.io/yaml semantics:
YAML 1.1 scalars, timestamps kept as strings, keys as JSON strings), never from a run.
"""

from __future__ import annotations

import base64
import codecs
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet_winnet.cli.input import (
    MAX_INT_DIGITS,
    BadInput,
    Document,
    Limits,
    expand_paths,
    read_source,
)
from tests.strategies import run_main

# Peak RSS of a child, from inside it: VmHWM belongs to the process image, while
# ru_maxrss also counts the parent's memory at the fork before exec (Linux keeps the max).
PEAK_KB = (
    "import resource\n"
    "def peak_kb():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            for line in status:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)


def read(path: Path, limits: Limits | None = None) -> list[Document | BadInput]:
    return list(read_source(str(path), limits or Limits()))


def docs(found: list[Document | BadInput]) -> list[Any]:
    return [d.value for d in found if isinstance(d, Document)]


def bad(found: list[Document | BadInput]) -> list[BadInput]:
    return [d for d in found if isinstance(d, BadInput)]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


POD_YAML = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  hostNetwork: true\n"
POD_VALUE = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"hostNetwork": True}}


# --- values ---------------------------------------------------------------------------


def test_yaml_scalars_become_json_values(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", (
        "a: 2021-02-30\nb: 2001-12-14t21:59:43.10-05:00\nc: yes\nd: off\ne: 0x1F\n"
        "f: 010\ng: 1_000\nh: ~\ni: 1.5\nj: !!str 12\nk: '12'\n1: int key\ntrue: bool key\n"
    ))
    (value,) = docs(read(path))
    assert value == {
        "a": "2021-02-30", "b": "2001-12-14t21:59:43.10-05:00", "c": True, "d": False,
        "e": 31, "f": 8, "g": 1000, "h": None, "i": 1.5, "j": "12", "k": "12",
        "1": "int key", "true": "bool key",
    }


def test_scalars_kubectl_resolves_where_yaml_1_1_does_not(tmp_path: Path) -> None:
    """sigs.k8s.io/yaml reads YAML with go-yaml v2, whose resolve.go also turns plain
    y/Y/n/N into booleans and parses integers with Go's base prefixes (0o17)."""
    path = write(tmp_path, "g.yaml", (
        "kind: Pod\nspec:\n  hostNetwork: y\n  a: N\n  b: Y\n  c: n\n  d: 0o17\n"
        "  e: -0o7\n  f: 'y'\n  g: \"0o17\"\n  h: yy\n  i: 0o8\n  y: key\n"
    ))
    (value,) = docs(read(path))
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
    """Issue 30 item 14: `name: !!binary cHA=` was checked as the name "cHA="."""
    path = write(tmp_path, "b.yaml", f"kind: Pod\nmetadata:\n  name: !!binary {scalar}\n")
    (value,) = docs(read(path))
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
    found = [d for d in read_source_text(text) if isinstance(d, Document)]
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
    path = write(tmp_path, "b.yaml",
                 f"kind: Pod\nmetadata:\n  name: !!binary {scalar}\n---\n{POD_YAML}")
    found = read(path)
    (problem,) = bad(found)
    assert (problem.document, problem.line) == (1, 3)
    assert "!!binary" in problem.reason and "is not valid base64" in problem.reason
    assert docs(found) == [POD_VALUE]


def test_check_names_a_pod_by_its_binary_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = write(tmp_path, "p.yaml", (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: !!binary cHA=\nspec:\n"
        "  hostNetwork: true\n  nodeSelector: {kubernetes.io/os: windows}\n"
        "  containers: [{name: c, image: i}]\n"
    ))
    _, out, _ = run_main(capsys, "check", str(path), "-o", "json", "--fail-on", "never")
    names = {f["object"]["name"] for f in json.loads(out)["findings"]}
    assert names == {"pp"}


def test_merge_keys_and_aliases(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", (
        "base: &b {u: 1, v: 2}\nspec:\n  <<: *b\n  v: 3\nlist: [*b, *b]\n"
    ))
    (value,) = docs(read(path))
    assert value["spec"] == {"u": 1, "v": 3}
    assert value["list"] == [{"u": 1, "v": 2}] * 2


def test_huge_integer_within_the_limit_is_kept_exactly(tmp_path: Path) -> None:
    digits = "7" * MAX_INT_DIGITS
    path = write(tmp_path, "i.yaml", f"kind: ConfigMap\nnumber: {digits}\n")
    (value,) = docs(read(path))
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
    path = write(tmp_path, "bad.yaml", text + "---\n" + POD_YAML)
    found = read(path)
    (problem,) = bad(found)
    assert problem.source == str(path)
    assert problem.document == 1
    assert problem.line == line
    assert words in problem.reason
    if "YAML" not in words:  # a syntax error ends the stream; the others do not
        assert docs(found) == [POD_VALUE]


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    (problem,) = bad(read(write(tmp_path, "r.yaml", "a: &a [1, *a]\n")))
    assert "alias" in problem.reason


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    """Nine levels of nine aliases: 387 million nodes if expanded."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append("spec: {hostNetwork: *l8}")
    path = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    assert path.stat().st_size < 1000
    code = PEAK_KB + (
        "import sys, time\n"
        "from kubelet_winnet.cli.input import read_source\n"
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
    path = write(tmp_path, "a.yaml", "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n")
    assert bad(read(path, Limits(max_alias_nodes=8)))
    assert docs(read(path, Limits(max_alias_nodes=12))) == [
        {"a": [1, 2, 3], "b": [[1, 2, 3]] * 3}
    ]


@pytest.mark.parametrize(("name", "text"), [
    ("deep.yaml", "a: " + "[" * 150 + "]" * 150 + "\n"),
    ("deep.json", '{"a": ' + "[" * 150 + "]" * 150 + "}"),
    ("deeper.json", '{"a": ' + "[" * 100_000),
    ("deeper.yaml", "[" * 100_000),
])
def test_depth_limit(tmp_path: Path, name: str, text: str) -> None:
    found = read(write(tmp_path, name, text))
    (problem,) = bad(found)
    assert "nest" in problem.reason
    assert problem.line == 1


def test_depth_limit_can_be_raised(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.yaml", "a: " + "[" * 150 + "]" * 150 + "\n")
    assert not bad(read(path, Limits(max_depth=200)))


# --- encodings --------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_unicode_encodings(tmp_path: Path, encoding: str) -> None:
    text = POD_YAML.replace("name: p", "name: café")
    path = write(tmp_path, "e.yaml", text.encode(encoding))  # utf-16 writes a BOM
    (value,) = docs(read(path))
    assert value["metadata"]["name"] == "café"


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_utf16_json(tmp_path: Path, bom: bytes) -> None:
    codec = "utf-16-le" if bom == codecs.BOM_UTF16_LE else "utf-16-be"
    path = write(tmp_path, "e.json", bom + json.dumps(POD_VALUE).encode(codec))
    assert docs(read(path)) == [POD_VALUE]


@pytest.mark.parametrize(("data", "line", "words"), [
    (b"kind: Pod\nmetadata: {name: caf\xe9}\n", 2, "UTF-8"),  # Latin-1
    (POD_YAML.encode("utf-16-le"), 1, "UTF-16"),  # no BOM
    (codecs.BOM_UTF32_LE + "kind: Pod\n".encode("utf-32-le"), 1, "UTF-32"),
    (bytes(range(256)) * 4, 0, ""),
    (b"kind: Pod\n\x00\x01", 0, "YAML"),
])
def test_other_bytes_are_bad_input(tmp_path: Path, data: bytes, line: int, words: str) -> None:
    (problem,) = read(write(tmp_path, "x.yaml", data))
    assert isinstance(problem, BadInput)
    if line:
        assert problem.line == line
    assert words in problem.reason


@pytest.mark.parametrize("padding", [0, 3000])
@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_bad_byte_in_a_later_document_keeps_the_earlier_ones(
    tmp_path: Path, padding: int, suffix: str
) -> None:
    """Documents before the bad byte are read and reported; the bad byte is reported
    with the document and line that hold it (padding pushes it past the first chunk)."""
    comment = "".join(f"# {i}\n" for i in range(padding)) if suffix == "yaml" else ""
    if suffix == "yaml":
        good = f"{POD_YAML}---\n{comment}{POD_YAML}---\n".encode()
        line = good.count(b"\n") + 1
        data = good + b"# caf\xe9\n"
        expected_document = 3
    else:
        one = json.dumps(POD_VALUE)
        good = (one + "\n" + " " * padding + one + "\n").encode()
        line = good.count(b"\n") + 1
        data = good + b'{"kind": "caf\xe9"}\n'
        expected_document = 3
    found = read(write(tmp_path, f"x.{suffix}", data))
    assert docs(found) == [POD_VALUE, POD_VALUE]
    (problem,) = bad(found)
    assert (problem.document, problem.line) == (expected_document, line)
    assert "not valid UTF-8 (byte 0xe9)" in problem.reason


# --- documents, Lists, JSON streams -----------------------------------------------------


def test_documents_lines_and_lists(tmp_path: Path) -> None:
    path = write(tmp_path, "l.yaml", (
        "# comment\n"
        "kind: ConfigMap\n"  # line 2, document 1
        "---\n"
        "---\n"  # an empty document is skipped
        "kind: List\n"  # document 3
        "items:\n"
        "- kind: Pod\n"  # line 7
        "  spec:\n"
        "    hostNetwork: true\n"  # line 9
        "- 5\n"
        "- kind: Service\n"
    ))
    found = read(path)
    assert [(type(d).__name__, d.document, d.line) for d in found] == [
        ("Document", 1, 2), ("Document", 3, 7), ("BadInput", 3, 10), ("Document", 3, 11),
    ]
    pod = found[1]
    assert isinstance(pod, Document)
    assert pod.item == 0
    assert pod.label == f"{path}#3.items[0]"
    assert pod.line_of(("spec", "hostNetwork")) == 9
    assert pod.line_of(("spec", "missing")) == 8


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
    found = read(write(tmp_path, "l.json", text))
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
    path = write(tmp_path, "s.json", '{"kind": "Pod"}\n{"kind": "Pod", "kind": "Pod"}\n'
                                     '{"kind": "Service"}')
    found = read(path)
    assert [(type(d).__name__, d.document, d.line) for d in found] == [
        ("Document", 1, 1), ("BadInput", 2, 2), ("Document", 3, 3),
    ]


def test_flow_style_yaml_that_looks_like_json(tmp_path: Path) -> None:
    path = write(tmp_path, "f.yaml", '{\n  kind: "Pod",\n  spec: {hostNetwork: true},\n}\n')
    assert docs(read(path)) == [{"kind": "Pod", "spec": {"hostNetwork": True}}]


def test_truncated_json(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '{"kind": "Pod"}\n{"kind": "Pod", "spec": {\n')
    found = read(path)
    assert docs(found) == [{"kind": "Pod"}]
    (problem,) = bad(found)
    assert "JSON" in problem.reason


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n---\n"])
def test_empty_file_holds_nothing_and_is_no_bad_input(tmp_path: Path, text: str) -> None:
    """kubectl and kube-linter skip empty documents; a file of them is no error."""
    assert read(write(tmp_path, "empty.yaml", text)) == []


def test_missing_file(tmp_path: Path) -> None:
    (problem,) = read(tmp_path / "nope.yaml")
    assert isinstance(problem, BadInput)
    assert "cannot read" in problem.reason


def test_byte_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "big.yaml", POD_YAML + "---\n" + "kind: X\nx: " + "a" * 5000 + "\n")
    found = read(path, Limits(max_bytes=2000))
    assert docs(found) == [POD_VALUE]  # the documents before the limit still count
    (problem,) = bad(found)
    assert "--max-bytes" in problem.reason


@pytest.mark.parametrize("max_bytes", range(1, 9))
def test_every_byte_limit_error_says_reading_stops_here(tmp_path: Path, max_bytes: int) -> None:
    """Issue 30 item 17: with --max-bytes 1 to 4 the limit was met inside the first four
    bytes (read for the byte order mark) and the error lacked the ending every error
    that stops a file has. One wording for every limit, whatever the value."""
    path = write(tmp_path, "small.yaml", POD_YAML)
    assert len(POD_YAML) > 8
    (problem,) = read(path, Limits(max_bytes=max_bytes))
    assert isinstance(problem, BadInput)
    unit = "byte" if max_bytes == 1 else "bytes"
    assert (problem.document, problem.line) == (1, 1)
    assert problem.reason == (
        f"larger than {max_bytes} {unit} (raise the limit with --max-bytes); "
        "reading of this file stops here"
    )


def test_max_bytes_1_on_the_command_line_says_reading_stops_here(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = write(tmp_path, "small.yaml", POD_YAML)
    status, _, err = run_main(capsys, "check", str(path), "--max-bytes", "1")
    assert status == 2
    assert (f"error: {path}:1: document 1: larger than 1 byte (raise the limit with "
            "--max-bytes); reading of this file stops here\n") in err


@pytest.mark.parametrize("data", [
    codecs.BOM_UTF32_LE + "kind: Pod\n".encode("utf-32-le"),
    POD_YAML.encode("utf-16-le"),
    b"\xe9kind: Pod\n",
])
def test_an_encoding_refused_at_the_start_says_reading_stops_here(
    tmp_path: Path, data: bytes,
) -> None:
    """Refused in the first bytes, the file is not read at all: the same ending as a
    bad byte further in."""
    (problem,) = read(write(tmp_path, "x.yaml", data))
    assert isinstance(problem, BadInput)
    assert problem.reason.endswith("; reading of this file stops here")


def test_dev_zero_stops_at_the_byte_limit() -> None:
    found = list(read_source("/dev/zero", Limits(max_bytes=1 << 20)))
    assert len(found) == 1
    assert isinstance(found[0], BadInput)


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(POD_YAML.encode())))
    (document,) = read_source("-")
    assert isinstance(document, Document)
    assert document.source == "<stdin>"
    assert document.value == POD_VALUE


def test_directories_are_searched_recursively_and_sorted(tmp_path: Path) -> None:
    for name in ("b/z.yaml", "b/a.JSON", "a.yml", "c/d/e.yaml", "notes.txt", "b/x.yaml.bak"):
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("kind: Pod\n")
    found = list(expand_paths([str(tmp_path), "-"]))
    assert found == [
        str(tmp_path / "a.yml"), str(tmp_path / "b" / "a.JSON"), str(tmp_path / "b" / "z.yaml"),
        str(tmp_path / "c" / "d" / "e.yaml"), "-",
    ]
    (tmp_path / "empty").mkdir()
    (problem,) = expand_paths([str(tmp_path / "empty")])
    assert isinstance(problem, BadInput)


def test_reading_is_lazy(tmp_path: Path) -> None:
    """The first document is handed over before the rest of the file is parsed."""
    path = write(tmp_path, "lazy.yaml", POD_YAML + "---\n" + "kind: X\n" * 1 + "a: [\n")
    reader = read_source(str(path))
    first = next(reader)
    assert isinstance(first, Document)
    assert isinstance(next(reader), BadInput)


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
        "from kubelet_winnet.cli.input import read_source\n"
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


def test_yaml_list_items_are_handed_over_as_they_are_read(tmp_path: Path) -> None:
    """`kubectl get -o yaml` output: items before kind; the first item arrives before the
    rest of the document is parsed (here: before a syntax error further down)."""
    path = write(tmp_path, "l.yaml", (
        "apiVersion: v1\nitems:\n- kind: Pod\n  spec:\n    hostNetwork: true\n"
        "- kind: Pod\n  spec: {containers: [\n"
    ))
    reader = read_source(str(path))
    first = next(reader)
    assert isinstance(first, Document)
    assert (first.item, first.line, first.line_of(("spec", "hostNetwork"))) == (0, 3, 5)
    assert isinstance(next(reader), BadInput)


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
        "from kubelet_winnet.cli.input import read_source\n"
        "base = peak_kb()\n"
        "n = sum(1 for d in read_source(sys.argv[1]) if d.value.get('kind') == 'Pod')\n"
        "print(n, base, peak_kb())\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=600, check=True)
    read_count, base_kb, peak_kb = map(int, done.stdout.split())
    assert read_count == count
    assert (peak_kb - base_kb) * 1024 < size / 4, (base_kb, peak_kb, size)


@pytest.mark.parametrize(("text", "expected"), [
    # the key's text also inside a string value: still the real key's line
    ('{"kind": "Pod",\n "metadata": {"annotations": {"a": "x \\"hostNetwork\\": true"}},\n'
     ' "spec": {\n  "hostNetwork": true}}', 4),
    # the key elsewhere, but not at the path: the nearest present parent
    ('{"kind": "Pod",\n "metadata": {"labels": {"hostNetwork": "x"}},\n "spec": {}}', 3),
    # twice at the path's level in different objects
    ('{"items": [\n{"spec": {"hostNetwork": false}},\n{"spec": {\n"hostNetwork": true}}]}', 4),
])
def test_json_field_lines_are_exact(tmp_path: Path, text: str, expected: int) -> None:
    found = [d for d in read(write(tmp_path, "x.json", text)) if isinstance(d, Document)]
    assert found[-1].line_of(("spec", "hostNetwork")) == expected


def test_json_lines_of_many_findings_in_one_document_are_linear(tmp_path: Path) -> None:
    """Issue 16 item 7: ``check`` on one JSON document with 8,000 findings looked each
    line up by walking the text from its start (43.5 s). Every finding's line is right,
    and the run stays within a bound on time and peak memory in a child process."""
    count = 8_000
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many"},
           "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": f"c{i}", "image": "img",
                                    "securityContext": {"privileged": True}}
                                   for i in range(count)]}}
    text = json.dumps(pod, indent=2)
    path = write(tmp_path, "many.json", text)
    # The line of each container's "privileged" key, from the text itself.
    want = [n for n, line in enumerate(text.splitlines(), 1) if '"privileged"' in line]
    assert len(want) == count
    code = PEAK_KB + (
        "import sys, io, contextlib\n"
        "from kubelet_winnet.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    status = main(['check', sys.argv[1], '-o', 'json', '-q', '--fail-on', 'error'])\n"
        "sys.stderr.write(f'{status} {peak_kb()}\\n')\n"
        "print(out.getvalue())\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    status, peak_kb = map(int, done.stderr.split())
    assert status == 0
    assert peak_kb < 150 * 1024, peak_kb  # the document is 1.1 MB of text
    findings = json.loads(done.stdout)["findings"]
    got = sorted(f["line"] for f in findings
                 if f["field"].endswith("securityContext.privileged"))
    assert got == want


def _lines_of(value: Any, line: int, path: tuple[Any, ...], out: dict[Any, int]) -> None:
    """The line of every key and element in ``json.dumps(value, indent=2)``: each member
    starts a line, and takes as many lines as its own dump."""
    if isinstance(value, dict):
        members: list[tuple[Any, Any]] = list(value.items())
    elif isinstance(value, list):
        members = list(enumerate(value))
    else:
        return
    at = line + 1
    for key, child in members:
        where = (*path, key)
        out[where] = at
        _lines_of(child, at, where, out)
        at += json.dumps(child, indent=2).count("\n") + 1


_JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "spec", "x:y", 'q"'] ), inner, max_size=4),
    max_leaves=30,
)


@given(_JSON_TREES, st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_json_field_lines_match_the_text_in_any_order(tree: Any, rnd: Any) -> None:
    """Every key's and element's line, asked in any order and twice (the locator keeps
    what it scanned), is its line in the text; a missing path gives its deepest present
    parent's line."""
    document = {"kind": "Pod", "spec": tree}
    text = json.dumps(document, indent=2)
    want: dict[Any, int] = {}
    _lines_of(document, 1, (), want)
    found = [d for d in read_source_text(text) if isinstance(d, Document)]
    assert len(found) == 1
    paths = list(want) * 2
    rnd.shuffle(paths)
    for path in paths:
        assert found[0].line_of(path) == want[path], path
    for path in list(want)[:5]:
        assert found[0].line_of((*path, "absent-key", 7)) == want[path]


def read_source_text(text: str) -> list[Document | BadInput]:
    import os
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(text)
    try:
        return list(read_source(handle.name))
    finally:
        os.unlink(handle.name)


# --- Lists in kubectl's layout (cli/input/json_reader.py) ------------------------------


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
@settings(max_examples=200, deadline=None)
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
    found = read_source_text(text)
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
    found = read(write(tmp_path, "l.json", text))
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
    found = read(write(tmp_path, "l.json", _kubectl_list([item])))
    assert len(found) == 1
    if refused:
        assert isinstance(found[0], BadInput)
        assert "items[0]: nested deeper than 100 levels" in found[0].reason
    else:
        assert docs(found) == [json.loads(item)]


def test_list_item_with_a_lone_surrogate_escape_reads_as_the_stdlib_reads_it(
    tmp_path: Path,
) -> None:
    item = '{\n    "kind": "Pod",\n    "x": "\\ud800"\n}'
    found = read(write(tmp_path, "l.json", _kubectl_list([item])))
    assert docs(found) == [json.loads(item)]


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
    found = read(write(tmp_path, "l.json", text))
    assert docs(found) == items


def test_a_repeated_key_far_into_a_long_list_is_refused(tmp_path: Path) -> None:
    """An item past several reads (64 KiB each) with a \\u003a-hidden repeated key is
    still refused, with its index."""
    filler = '{\n    "kind": "Pod",\n    "pad": "' + "x" * 1000 + '"\n}'
    hidden = '{\n    "kind": "Pod",\n    "a": 1,\n    "a": 2,\n    "b": "\\u003a"\n}'
    items = [filler] * 300 + [hidden] + [filler] * 10
    found = read(write(tmp_path, "l.json", _kubectl_list(items)))
    assert [type(d).__name__ for d in found].count("Document") == 310
    (problem,) = bad(found)
    assert "items[300]" in problem.reason and 'duplicate key "a"' in problem.reason


# --- 2. document numbers in a stream of JSON values ---------------------------------------


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
