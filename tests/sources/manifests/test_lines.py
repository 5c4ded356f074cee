"""The line of a field (``sources/manifests/lines.py``): exact in JSON texts whatever the order of
the questions, and linear in the findings of a document.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet_winnet.sources.manifests import (
    Document,
)
from tests.strategies import (
    PEAK_KB,
    examples,
    read_input,
    read_input_text,
    write_input,
)


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
    found = read_input(write_input(tmp_path, "x.json", text))
    found = [d for d in found if isinstance(d, Document)]
    assert found[-1].line_of(("spec", "hostNetwork")) == expected


@pytest.mark.slow  # a bound checked at scale: time over a large generated document
def test_json_lines_of_many_findings_in_one_document_are_linear(tmp_path: Path) -> None:
    """``check`` on one JSON document with 8,000 findings once looked each
    line up by walking the text from its start (43.5 s). Every finding's line is right,
    and the run stays within a bound on time and peak memory in a child process."""
    count = 8_000
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many"},
           "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": f"c{i}", "image": "img",
                                    "securityContext": {"privileged": True}}
                                   for i in range(count)]}}
    text = json.dumps(pod, indent=2)
    path = write_input(tmp_path, "many.json", text)
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
    found = [d for d in read_input_text(text) if isinstance(d, Document)]
    assert len(found) == 1
    paths = list(want) * 2
    rnd.shuffle(paths)
    for path in paths:
        assert found[0].line_of(path) == want[path], path
    for path in list(want)[:5]:
        assert found[0].line_of((*path, "absent-key", 7)) == want[path]


# --- editors' lines ----------------------------------------------------------------------

_EDITOR_BREAK = re.compile("\r\n|\r|\n")
_KINDS = ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_libyaml_and_pure_pyyaml_count_yamls_line_breaks(loader: str) -> None:
    """The fact the conversion rests on: both of PyYAML's readers end a line at LF, CR,
    CRLF (once), NEL, LS and PS (YAML 1.1, 5.4), and a mark's ``index`` is its character
    offset."""
    import yaml

    cls = getattr(yaml, loader, None)
    if cls is None:
        pytest.skip("PyYAML without libyaml")
    for brk in _KINDS:
        text = f"a: é{brk}b: 1{brk}{brk}c: 2"
        keys = [(e.value, e.start_mark.line, e.start_mark.index)
                for e in yaml.parse(text, Loader=cls)
                if isinstance(e, yaml.ScalarEvent) and e.start_mark is not None]
        assert keys[::2] == [("a", 0, 0), ("b", 1, text.index("b")),
                             ("c", 3, text.index("c"))], repr(brk)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_KINDS), st.integers(0, 2)), min_size=1,
                max_size=30),
       st.booleans())
def test_yaml_lines_are_editors_lines_whatever_the_breaks(
    breaks: list[tuple[str, int]], bom: bool
) -> None:
    """Every key's line is the editors' line (LF, CRLF, CR) it is written on, whatever
    breaks (and blank lines of them) come before it."""
    text = "\ufeff" if bom else ""
    for number, (brk, blanks) in enumerate(breaks):
        text += f"k{number}: v{brk}" + brk * blanks
    found = [d for d in read_input_text_yaml(text) if isinstance(d, Document)]
    assert len(found) == 1
    for number in range(len(breaks)):
        want = next(n for n, line in enumerate(_EDITOR_BREAK.split(text), 1)
                    if f"k{number}:" in line)
        assert found[0].line_of((f"k{number}",)) == want


def read_input_text_yaml(text: str) -> list[Any]:
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".yaml", delete=False) as handle:
        handle.write(text.encode("utf-8"))
    try:
        return read_input(Path(handle.name))
    finally:
        Path(handle.name).unlink()


@pytest.mark.parametrize("odd", ["", "\x85"])
def test_a_crlf_cut_between_two_reads_is_one_line_break(tmp_path: Path, odd: str) -> None:
    """The reader's first read ends between a CR and its LF; with a NEL before it the
    lines are counted from offsets, across the cut and the reads after it."""
    from kubelet_winnet.sources.manifests.encoding import CHUNK

    head = f"a: 1{odd}\n#"
    pad = CHUNK - 1 - len(head)  # the CR is the last character of the first read
    text = head + "x" * pad + "\r\n" + "".join(f"k{n}: {n}\r\n" for n in range(20000))
    assert text[CHUNK - 1 : CHUNK + 1] == "\r\n"
    path = write_input(tmp_path, "cut.yaml", text.encode("utf-8"))
    (document,) = [d for d in read_input(path) if isinstance(d, Document)]
    rows = _EDITOR_BREAK.split(text)
    for key in ("k0", "k1", "k12345", "k19999"):
        assert document.line_of((key,)) == next(
            n for n, line in enumerate(rows, 1) if line.startswith(f"{key}:"))


def test_a_bad_byte_after_yaml_only_breaks_names_the_editors_line(tmp_path: Path) -> None:
    """A refusal of the stream (a byte that is not UTF-8) lies where the good text ends,
    on the editors' line."""
    text = "a: 1\x85b: 2\u2028c: 3\rd: 4\r\ne: "
    path = write_input(tmp_path, "bad.yaml", text.encode("utf-8") + b"\xff\n")
    bad = [f for f in read_input(path) if not isinstance(f, Document)]
    assert [(b.line, b.reason.split(";")[0]) for b in bad] == [(3, "not valid UTF-8 (byte 0xff)")]


@given(st.text(alphabet="\r\na", max_size=40), st.data())
def test_breaks_of_adjacent_ranges_add_up_to_editors_lines(text: str, data: Any) -> None:
    """LF, CR and CRLF each end one line, and a CRLF split between two ranges is counted
    once, at its CR, whichever range holds the CR (the JSON reader counts a List's lines
    item by item)."""
    from kubelet_winnet.sources.manifests.lines import breaks

    cut = data.draw(st.integers(0, len(text)))
    editors = len(re.split(r"\r\n|\r|\n", text)) - 1
    assert breaks(text, 0, cut) + breaks(text, cut) == editors
    assert breaks(text) == editors


@pytest.mark.parametrize("name", ["pod.yaml", "pod.json"])
def test_a_field_named_as_an_error_names_it_has_its_line(tmp_path: Path, name: str) -> None:
    """InvalidPodError.field is text (spec.containers[1].ports[0].hostPort): a Python
    caller asks the document for its line with it, as with the path's parts."""
    import yaml

    import kubelet_winnet as kw
    from kubelet_winnet.errors import InvalidPodError

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "a", "image": "i"},
                       {"name": "b", "image": "i",
                        "ports": [{"containerPort": 80, "hostPort": "80"}]}]}}
    text = (json.dumps(pod, indent=2) if name.endswith(".json")
            else yaml.safe_dump(pod, sort_keys=False))
    (found,) = read_input(write_input(tmp_path, name, text))
    assert isinstance(found, Document)
    with pytest.raises(InvalidPodError) as raised:
        kw.run_pod_sandbox_request(found.value)
    field = raised.value.field
    assert field == "spec.containers[1].ports[0].hostPort"
    expected = next(number for number, line in enumerate(text.splitlines(), 1)
                    if '"hostPort"' in line or "hostPort:" in line)
    assert found.line_of(field) == expected
    assert found.line_of(("spec", "containers", 1, "ports", 0, "hostPort")) == expected
    assert found.place(field, expected).line == expected
