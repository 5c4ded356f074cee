"""Bytes to text within the limits (``sources/manifests/encoding.py``): UTF-8 and UTF-16 with a
BOM, everything else refused with its line; ``--max-bytes`` and ``--max-depth``, and one
ending for every error that stops a file.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from kubelet_winnet.sources.manifests import (
    BadInput,
    Limits,
    read_source,
)
from tests.strategies import (
    POD_VALUE,
    POD_YAML,
    bad_inputs,
    input_values,
    read_input,
    run_main,
    write_input,
)


@pytest.mark.parametrize(("name", "text"), [
    ("deep.yaml", "a: " + "[" * 150 + "]" * 150 + "\n"),
    ("deep.json", '{"a": ' + "[" * 150 + "]" * 150 + "}"),
    ("deeper.json", '{"a": ' + "[" * 100_000),
    ("deeper.yaml", "[" * 100_000),
])
def test_depth_limit(tmp_path: Path, name: str, text: str) -> None:
    found = read_input(write_input(tmp_path, name, text))
    (problem,) = bad_inputs(found)
    assert "nest" in problem.reason
    assert problem.line == 1


def test_depth_limit_can_be_raised(tmp_path: Path) -> None:
    path = write_input(tmp_path, "deep.yaml", "a: " + "[" * 150 + "]" * 150 + "\n")
    assert not bad_inputs(read_input(path, Limits(max_depth=200)))


# --- encodings --------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_unicode_encodings(tmp_path: Path, encoding: str) -> None:
    text = POD_YAML.replace("name: p", "name: café")
    path = write_input(tmp_path, "e.yaml", text.encode(encoding))  # utf-16 writes a BOM
    (value,) = input_values(read_input(path))
    assert value["metadata"]["name"] == "café"


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_utf16_json(tmp_path: Path, bom: bytes) -> None:
    codec = "utf-16-le" if bom == codecs.BOM_UTF16_LE else "utf-16-be"
    path = write_input(tmp_path, "e.json", bom + json.dumps(POD_VALUE).encode(codec))
    assert input_values(read_input(path)) == [POD_VALUE]


@pytest.mark.parametrize(("data", "line", "words"), [
    (b"kind: Pod\nmetadata: {name: caf\xe9}\n", 2, "UTF-8"),  # Latin-1
    (POD_YAML.encode("utf-16-le"), 1, "UTF-16"),  # no BOM
    (codecs.BOM_UTF32_LE + "kind: Pod\n".encode("utf-32-le"), 1, "UTF-32"),
    (bytes(range(256)) * 4, 0, ""),
    (b"kind: Pod\n\x00\x01", 0, "YAML"),
    (b" \x80", 1, "UTF-8"),  # a bad byte after whitespace: the file's start is read twice
    (b" \n\n\t\x80", 3, "UTF-8"),
    (b"\n" * 70000 + b"\xff", 70001, "UTF-8"),  # past the first chunk
])
def test_other_bytes_are_bad_input(tmp_path: Path, data: bytes, line: int, words: str) -> None:
    (problem,) = read_input(write_input(tmp_path, "x.yaml", data))
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
    found = read_input(write_input(tmp_path, f"x.{suffix}", data))
    assert input_values(found) == [POD_VALUE, POD_VALUE]
    (problem,) = bad_inputs(found)
    assert (problem.document, problem.line) == (expected_document, line)
    assert "not valid UTF-8 (byte 0xe9)" in problem.reason


def test_byte_limit(tmp_path: Path) -> None:
    text = POD_YAML + "---\n" + "kind: X\nx: " + "a" * 5000 + "\n"
    path = write_input(tmp_path, "big.yaml", text)
    found = read_input(path, Limits(max_bytes=2000))
    assert input_values(found) == [POD_VALUE]  # the documents before the limit still count
    (problem,) = bad_inputs(found)
    assert "--max-bytes" in problem.reason


@pytest.mark.parametrize("max_bytes", range(1, 9))
def test_every_byte_limit_error_says_reading_stops_here(tmp_path: Path, max_bytes: int) -> None:
    """With --max-bytes 1 to 4 the limit was once met inside the first four
    bytes (read for the byte order mark) and the error lacked the ending every error
    that stops a file has. One wording for every limit, whatever the value."""
    path = write_input(tmp_path, "small.yaml", POD_YAML)
    assert len(POD_YAML) > 8
    (problem,) = read_input(path, Limits(max_bytes=max_bytes))
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
    path = write_input(tmp_path, "small.yaml", POD_YAML)
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
    (problem,) = read_input(write_input(tmp_path, "x.yaml", data))
    assert isinstance(problem, BadInput)
    assert problem.reason.endswith("; reading of this file stops here")


def test_dev_zero_stops_at_the_byte_limit() -> None:
    found = list(read_source("/dev/zero", Limits(max_bytes=1 << 20)))
    assert len(found) == 1
    assert isinstance(found[0], BadInput)


@pytest.mark.parametrize("layout", ["yaml", "json list", "json values"])
@pytest.mark.parametrize("max_bytes", [700, 70_000, 140_000])
def test_the_byte_limit_is_reported_at_the_line_where_it_is_met(
    tmp_path: Path, layout: str, max_bytes: int
) -> None:
    """The refusal names the line holding the first byte past the limit: one more than
    the newlines before it (the readers count them; the byte layer does not)."""
    one = json.dumps(POD_VALUE, indent=2)
    if layout == "yaml":
        data = ("---\n".join([POD_YAML] * 4000)).encode()
    elif layout == "json list":
        data = ('{"kind": "List", "items": [\n' + ",\n".join([one] * 2000) + "\n]}\n").encode()
    else:
        data = ("\n".join([one] * 2000) + "\n").encode()
    assert len(data) > max_bytes
    found = read_input(write_input(tmp_path, "big." + layout.split()[0], data),
                       Limits(max_bytes=max_bytes))
    problem = bad_inputs(found)[-1]
    assert "--max-bytes" in problem.reason
    assert problem.line == data[:max_bytes].count(b"\n") + 1
