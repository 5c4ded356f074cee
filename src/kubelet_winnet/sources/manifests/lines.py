"""Line locating: the line of a field inside a document, found only when a finding asks.

A YAML document's lines are kept as it is composed (:class:`LineTable`); a JSON value's
are found in its text (:class:`JsonLines`), linear in the findings of a document."""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any

from kubelet_winnet._describe import json_string as _quote
from kubelet_winnet.sources.manifests.documents import FieldPath

__all__ = [
    "SKIPPER", "WHITESPACE", "ItemLines", "JsonLines", "LineTable", "SpanLines", "TableLines",
]

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
_BLOCK = 12  # newlines are counted per block of 2**12 characters, once


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

    __slots__ = ("_blocks", "_members", "_text", "_unique", "_value")

    def __init__(self, text: str, first_line: int, value: Any) -> None:
        self._text = text
        self._value = value
        self._blocks = [first_line]  # the line at each 4 KiB block's start, counted once
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
        text = self._text
        blocks = self._blocks
        block = offset >> _BLOCK
        if not block:  # most values are shorter than a block: count up to the offset only
            return blocks[0] + text.count("\n", 0, offset)
        while len(blocks) <= block:
            start = (len(blocks) - 1) << _BLOCK
            blocks.append(blocks[-1] + text.count("\n", start, start + (1 << _BLOCK)))
        return blocks[block] + text.count("\n", block << _BLOCK, offset)
