"""Line locating: the line of a field inside a document, found only when a finding asks.

Every line this package hands over is a line as editors and code scanning count them:
LF, CRLF (one break) and a bare CR each end a line (:func:`breaks`, :class:`TextLines`).
YAML 1.1 (libyaml, and go-yaml, kubectl's reader) also breaks lines at NEL (U+0085),
LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029), which editors show inside a
line: libyaml's lines are turned into editors' as the parser reads (:class:`YamlLines`).

A YAML document's lines are kept as it is composed (:class:`LineTable`); a JSON value's
are found in its text (:class:`JsonLines`), linear in the findings of a document."""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any

from kubelet_winnet._describe import json_string as _quote
from kubelet_winnet.sources.manifests.documents import FieldPath, Refused

__all__ = [
    "SKIPPER", "WHITESPACE", "YAML_ONLY_BREAKS", "ItemLines", "JsonLines", "LineTable",
    "MarkLines", "SpanLines", "TableLines", "TextLines", "YamlLines", "as_lf", "breaks",
    "editor_lines", "line_after", "yaml_only_break",
]

#: Line breaks of YAML 1.1 (spec 5.4, libyaml's IS_BREAK) that editors do not break at.
YAML_ONLY_BREAKS = "\x85\u2028\u2029"
_YAML_ONLY = re.compile("[\x85\u2028\u2029]")
_BLOCK = 12  # line breaks are counted per block of 2**12 characters, once
_NAMES = {"\x85": "U+0085 (NEXT LINE)", "\u2028": "U+2028 (LINE SEPARATOR)",
          "\u2029": "U+2029 (PARAGRAPH SEPARATOR)"}


def breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """The line breaks that start in ``text[start:end]`` as editors count them: each LF
    and each CR, a CRLF once (at its CR). Counts of adjacent ranges add up."""
    end = len(text) if end is None else end
    lf = text.count("\n", start, end)
    before = max(start - 1, 0)  # a CR just before the range: its LF is not a break here
    if text.find("\r", before, end) < 0:  # most text has no CR: one search, not two counts
        return lf
    return lf + text.count("\r", start, end) - text.count("\r\n", before, end)


_EDITOR_BREAK = re.compile(r"\r\n?|\n")


def editor_lines(text: str) -> list[str]:
    """``text``'s lines as editors show them, split at each LF, CRLF and CR (the breaks
    left out; ``str.splitlines`` also splits at NEL, LS, PS, VT, FF and more)."""
    return _EDITOR_BREAK.split(text)


def as_lf(text: str) -> str:
    """``text`` with each of editors' line breaks (LF, CRLF, CR) written as one LF: its
    ``\\n`` then count and split its lines as editors do."""
    return _EDITOR_BREAK.sub("\n", text) if "\r" in text else text


def line_after(refused: Refused, text: str, line: int = 1) -> Refused:
    """``refused`` (from :meth:`.encoding.Text.read`) placed where ``text``, the text
    handed over before it, ends; ``text`` starts at ``line``."""
    refused.line = line + breaks(text)
    return refused


def yaml_only_break(text: str) -> str | None:
    """The first line break of ``text`` that YAML reads and editors do not, named
    ("U+2028 (LINE SEPARATOR)"), or None."""
    found = _YAML_ONLY.search(text)
    return None if found is None else _NAMES[found[0]]


class TextLines:
    """Lines of a text held whole: the line of an offset, counted once per 4 KiB block."""

    __slots__ = ("_blocks", "_text")

    def __init__(self, text: str, first_line: int = 1) -> None:
        self._text = text
        self._blocks = [first_line]  # the line at each block's start, counted once

    def line(self, offset: int) -> int:
        """The line of the character at ``offset``."""
        text = self._text
        blocks = self._blocks
        block = offset >> _BLOCK
        if not block:  # most values are shorter than a block: count up to the offset only
            return blocks[0] + breaks(text, 0, offset)
        while len(blocks) <= block:
            start = (len(blocks) - 1) << _BLOCK
            blocks.append(blocks[-1] + breaks(text, start, start + (1 << _BLOCK)))
        return blocks[block] + breaks(text, block << _BLOCK, offset)

    def bounds(self, offset: int) -> tuple[int, int]:
        """Where the line of the character at ``offset`` starts and ends (before its
        break)."""
        text = self._text
        start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
        ends = [at for at in (text.find("\n", offset), text.find("\r", offset)) if at >= 0]
        return start, min(ends, default=len(text))


class MarkLines:
    """Editors' lines of a YAML text held whole, at the marks of a parser given it: a
    mark's line is counted from its character offset (libyaml's own line counts NEL, LS
    and PS too; its C reader leaves a leading byte order mark out of offsets)."""

    __slots__ = ("_lines", "_skew")

    def __init__(self, text: str, skip_bom: bool) -> None:
        self._lines = TextLines(text)
        self._skew = 1 if skip_bom and text.startswith("\ufeff") else 0

    def line(self, mark: Any) -> int:
        return self._lines.line(int(mark.index) + self._skew)


class YamlLines:
    """Editors' lines of the text a YAML parser reads, fed to it in order (:meth:`feed`),
    at the parser's marks (:meth:`line`).

    libyaml counts LF, CR and CRLF as editors do, so its lines are editors' until the
    first NEL, LS or PS (``moved``). From that chunk on, a mark's line is counted from
    its character offset, and the text is kept only until the marks have passed it:
    they come in the order of the stream."""

    __slots__ = ("_chunks", "_cr", "_first", "_line", "_skew", "_skip_bom", "_start",
                 "_total", "ended", "moved")

    def __init__(self, skip_bom: bool) -> None:
        self.moved = False  # a line break that only YAML reads was fed
        self.ended = 1  # the editors' line where the text fed so far ends
        self._total = 0  # characters fed
        self._cr = False  # the text fed so far ends with a CR
        self._skip_bom = skip_bom  # libyaml's C reader leaves a leading BOM out of offsets
        self._skew = 0  # what is added to a mark's offset to make it an offset of the text
        self._first = -1  # the offset of the first break only YAML reads
        self._chunks: list[tuple[int, str, bool]] = []  # (offset, text, CRLF cut before it)
        self._start = 0  # an offset no mark asked for later lies before ...
        self._line = 1  # ... and its line

    def feed(self, text: str) -> None:
        if not text:
            return
        if not self._total and self._skip_bom and text[0] == "\ufeff":
            self._skew = 1
        joined = self._cr and text[0] == "\n"  # a CRLF cut in two: counted at its CR
        if not self.moved:
            found = _YAML_ONLY.search(text)
            if found is not None:
                self.moved = True
                self._first = self._total + found.start()
                self._start, self._line = self._total, self.ended
        if self.moved:
            self._chunks.append((self._total, text, joined))
        self.ended += breaks(text) - joined
        self._total += len(text)
        self._cr = text[-1] == "\r"

    def line(self, mark: Any) -> int:
        """The editors' line of a parser's mark (``line``: libyaml's, 0-based; ``index``:
        its character offset); called only once ``moved``."""
        index = int(mark.index) + self._skew
        if index < self._first:  # no break only YAML reads before it
            return int(mark.line) + 1
        if index < self._start:  # pragma: no cover - the parser's marks never go back
            return self._line
        chunks = self._chunks
        line, start = self._line, self._start
        while chunks:
            offset, text, joined = chunks[0]
            stop = offset + len(text)
            begin = start - offset
            line += breaks(text, begin, min(index, stop) - offset)
            if joined and not begin and index > offset:
                line -= 1
            if index < stop:
                break
            start = stop
            del chunks[0]
        self._start, self._line = index, line
        return line


# Decodes anything the strict decoder does, to find where a value ends (refused values
# are skipped with it too).
SKIPPER = json.JSONDecoder(
    parse_int=lambda text: 0, parse_float=lambda text: 0.0, parse_constant=lambda name: 0.0
)


class LineTable:
    """Lines of a YAML document's nodes: ``id(container) -> (line, child lines)``."""

    def __init__(self) -> None:
        self.table: dict[int, tuple[int, Any]] = {}
        self.keep: list[Any] = []  # containers stay alive while their ids are keys

    def __reduce__(self) -> tuple[Any, ...]:
        # The ids are this process's: a copy (a document pickled for another process)
        # is keyed again by the ids of its copied containers.
        return _copied_table, ([(value, self.table[id(value)]) for value in self.keep],)

    def add(self, value: Any, line: int, lines: Any) -> None:
        self.table[id(value)] = (line, lines)
        self.keep.append(value)

    def locate(self, root: Any, path: FieldPath) -> int:
        node = root
        entry = self.table.get(id(root))
        best = 0 if entry is None else entry[0]
        for part in path:  # the line of the deepest key present
            entry = self.table.get(id(node))
            if entry is None:
                break
            try:
                best = entry[1][part]
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
        return best


def _copied_table(entries: list[tuple[Any, tuple[int, Any]]]) -> LineTable:
    table = LineTable()
    table.table = {id(value): entry for value, entry in entries}
    table.keep = [value for value, _ in entries]
    return table


# The locators a Document is given are objects, not closures, so that a document read in
# another process can be pickled with them.


class TableLines:
    """The lines of a YAML document ``root``, from its :class:`LineTable`."""

    __slots__ = ("_root", "_table")

    def __init__(self, table: LineTable, root: Any) -> None:
        self._table = table
        self._root = root

    def __call__(self, path: FieldPath) -> int:
        return self._table.locate(self._root, path)


class ItemLines:
    """The lines of item ``index`` of a List, found by the List's own locator."""

    __slots__ = ("_index", "_list")

    def __init__(self, list_lines: Callable[[FieldPath], int], index: int) -> None:
        self._list = list_lines
        self._index = index

    def __call__(self, path: FieldPath) -> int:
        return int(self._list(("items", self._index, *path)))


class SpanLines:
    """Lines in a top-level object read key by key: each key's value has its own text."""

    __slots__ = ("_locators", "_spans", "_values")

    def __init__(self, spans: dict[str, tuple[str, int]], values: dict[str, Any]) -> None:
        self._spans = spans
        self._values = values
        self._locators: dict[str, JsonLines] = {}

    def __call__(self, path: FieldPath) -> int:
        if not path or path[0] not in self._spans:
            return 0
        key = str(path[0])
        locator = self._locators.get(key)
        if locator is None:
            text, line = self._spans[key]
            locator = self._locators[key] = JsonLines(text, line, self._values.get(key))
        return locator(path[1:])


_SCAN = json.scanner.make_scanner(SKIPPER)  # type: ignore[arg-type]
WHITESPACE = " \t\n\r"  # JSON's
_SPACE = re.compile(r"[ \t\n\r]*")
_NOWHERE = (-1, -1)  # a key that does not occur once, as a key


def _present(value: Any, path: FieldPath) -> int:
    """How many leading parts of ``path`` are present in ``value``."""
    for depth, part in enumerate(path):
        if type(value) is dict:
            if type(part) is not str or part not in value:
                return depth
        elif type(value) is list:
            if type(part) is not int or not 0 <= part < len(value):
                return depth
        else:
            return depth
        value = value[part]
    return len(path)


def _skip_space(text: str, pos: int) -> int:
    char = text[pos : pos + 1]
    if not char or char not in WHITESPACE:  # most positions start a token
        return pos
    match = _SPACE.match(text, pos)
    return pos if match is None else match.end()


def _key_once(text: str, needle: str, start: int) -> tuple[int, int]:
    """(where ``needle``, a key's JSON string, starts, where the colon after it is) when
    it occurs once in ``text`` from ``start`` on, as a key; :data:`_NOWHERE` otherwise."""
    at = text.find(needle, start)
    if at >= 0 and text.find(needle, at + 1) < 0:
        colon = _skip_space(text, at + len(needle))
        if text.startswith(":", colon):
            return at, colon
    return _NOWHERE


class JsonLines:
    """The line of the field at a path inside one JSON value's text (called as a
    locator), where the deepest key of the path present starts.

    Linear in the findings of a document: each container on a path asked for is
    scanned once (its members' offsets kept), each key's text searched for at most
    twice from one place (once before the tables exist, then once into them), and a
    line is counted from the start of its 4 KiB block, whose line is counted once."""

    __slots__ = ("_lines", "_members", "_text", "_unique", "_value")

    def __init__(self, text: str, first_line: int, value: Any) -> None:
        self._text = text
        self._value = value
        self._lines = TextLines(text, first_line)
        # Most documents are never asked, and most questions need no table: they are
        # made by the first question that does.
        self._unique: dict[tuple[str, int], tuple[int, int]] | None = None

    def __call__(self, path: FieldPath) -> int:
        """The line where the deepest key of ``path`` present starts (the value's first
        line when none is).

        A key of the present path whose JSON string occurs once in the text (followed by
        a colon) is that key: its value lies inside the one reached, and so does every
        other occurrence it could be. Most questions end at the deepest key, searched
        in the whole text before any table is made. Otherwise, from the value reached so
        far (at first the whole text), the deepest key of the rest of the present path
        that occurs once from there on is jumped to; when there is none, one step of the
        walk through the containers' members is taken."""
        text = self._text
        present = _present(self._value, path)
        deepest = path[present - 1] if present else None
        if type(deepest) is str:
            at, _ = _key_once(text, _quote(deepest), 0)
            if at >= 0:
                return self._line(at)
        if self._unique is None:  # the first question that needs them makes the tables:
            # (a key's JSON text, from where) -> (its only offset from there, where its
            # colon is), or _NOWHERE; a container's offset -> its members so far
            self._unique = {}
            self._members: dict[int, list[Any]] = {}
        unique = self._unique
        begin, pos, found = 0, 0, 0  # parts resolved, where the value reached starts
        while begin < present:
            index = present
            while index > begin:  # the deepest key first
                index -= 1
                part = path[index]
                if type(part) is not str:
                    continue
                needle = _quote(part)
                jump = unique.get((needle, pos))
                if jump is None:
                    jump = unique[needle, pos] = _key_once(text, needle, pos)
                if jump[0] >= 0:
                    found, pos = jump[0], _skip_space(text, jump[1] + 1)
                    begin = index + 1
                    break
            else:
                entry = self._member(pos if begin else _skip_space(text, 0), path[begin])
                if entry is None:
                    break
                found, pos = entry
                begin += 1
        return self._line(found)

    def _member(self, pos: int, part: str | int) -> tuple[int, int] | None:
        """(where the key or element ``part`` of the container at ``pos`` starts, where
        its value starts), or None. The container is scanned from where the last question
        stopped, only as far as ``part``: every sibling value is skipped once, by the C
        scanner."""
        text = self._text
        state = self._members.get(pos)
        if state is None:  # [members, where to go on (-1: the end), opener, skip first]
            opener = text[pos:pos + 1]
            go_on = _skip_space(text, pos + 1) if opener in ("{", "[") else -1
            state = self._members[pos] = [{}, go_on, opener, False]
        members: dict[str | int, tuple[int, int]] = state[0]
        go_on, opener, skip = state[1], state[2], state[3]
        entry = members.get(part)
        if entry is not None or go_on < 0:
            return entry
        scan = _SCAN
        space = _skip_space
        try:
            while go_on >= 0:
                if skip:  # the value of the member found last time
                    _, at = scan(text, go_on)
                    at = space(text, at)
                    go_on = space(text, at + 1) if text.startswith(",", at) else -1
                    skip = False
                    continue
                if opener == "{":
                    if not text.startswith('"', go_on):
                        go_on = -1
                        break
                    key_at = go_on
                    key, at = scan(text, go_on)
                    at = space(text, space(text, at) + 1)  # past ":"
                    members.setdefault(key, (key_at, at))
                else:
                    if go_on >= len(text) or text[go_on] == "]":
                        go_on = -1
                        break
                    key, at = len(members), go_on
                    members[key] = (at, at)
                go_on, skip = at, True
                if key == part:
                    break
        except (StopIteration, ValueError, RecursionError):  # text the decoder refused
            go_on = -1
        state[1], state[3] = go_on, skip
        return members.get(part)

    def _line(self, offset: int) -> int:
        return self._lines.line(offset)
