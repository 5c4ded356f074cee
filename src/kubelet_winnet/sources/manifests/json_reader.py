"""JSON read as kubectl reads it: a stream of concatenated values, each a document, a
top-level object read key by key and its ``items`` one item at a time, so memory follows
the largest item. CPython's decoder with hooks that refuse what Go's ``encoding/json``
into ``sigs.k8s.io/yaml`` would not keep: repeated keys (named with their line),
integers past Python's digit limit, NaN and infinities."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from kubelet_winnet._describe import json_kind
from kubelet_winnet.sources.manifests.documents import (
    STOPS,
    BadInput,
    Document,
    Refused,
    clip,
    list_items,
)
from kubelet_winnet.sources.manifests.encoding import (
    CHUNK,
    MAX_INT_DIGITS,
    TOO_MANY_DIGITS,
    Limits,
    Text,
    past_python_digit_limit,
    python_digit_limit,
    too_deep,
    too_deep_reason,
)
from kubelet_winnet.sources.manifests.lines import (
    SKIPPER,
    WHITESPACE,
    ItemLines,
    JsonLines,
    SpanLines,
    breaks,
)
from kubelet_winnet.sources.manifests.yaml_reader import YamlReader

__all__ = ["DECODER", "WHITESPACE", "JsonReader", "NotJson", "decode", "json_documents"]

class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _JsonValue(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return result


def _json_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise _JsonValue(TOO_MANY_DIGITS)
    try:
        return int(text)
    except ValueError:  # a process that lowered Python's own limit (int_max_str_digits)
        raise _JsonValue(past_python_digit_limit(python_digit_limit())) from None


def _json_float(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise _JsonValue(f"number {clip(text)} is out of range")
    return value


_INF = float("inf")


def _json_constant(name: str) -> float:
    raise _JsonValue(f"{name} is not JSON")


_HOOKS: dict[str, Any] = {
    "parse_int": _json_int, "parse_float": _json_float, "parse_constant": _json_constant,
}
DECODER = json.JSONDecoder(object_pairs_hook=_pairs, **_HOOKS)  # names a repeated key


def decode(text: str, start: int) -> tuple[Any, int, int]:
    """The JSON value at ``start``, where it ends, and its brackets (which bound how deep
    it nests), as :data:`DECODER` reads it."""
    value, end = DECODER.raw_decode(text, start)
    return value, end, _brackets(text, start, end)


def _brackets(text: str, start: int, end: int) -> int:
    return text.count("{", start, end) + text.count("[", start, end)


_AHEAD = CHUNK // 4  # the text kept ahead of a value about to be decoded
_NOT_SPACE = re.compile(r"[^ \t\n\r]")


class NotJson(Exception):
    """The text is not JSON before anything was consumed: read it as YAML instead."""


# (item index or None, line, value, text or spans, brackets or None)
Found = tuple[int | None, int, Any, Any, int | None]


class JsonReader:
    """JSON values one by one (a stream of concatenated values, as kubectl accepts),
    and the ``items`` of a large top-level object one item at a time.

    Yields :data:`Found` tuples, or a ``Refused`` for one bad value that could be
    skipped; raises ``Refused`` (fatal) when the stream cannot go on, ``NotJson`` when
    nothing was consumed yet (the caller reads the text as YAML instead).
    """

    def __init__(self, text: Text, first: str, limits: Limits) -> None:
        self._text = text
        self.buffer = first
        self._pos = 0
        self._mark = 0  # a position in the buffer ...
        self._mark_line = 1  # ... and its line: lines are counted forward from here
        self._eof = False
        self._limits = limits
        self._held: Refused | None = None  # met when reading ahead; raised when needed
        self.consumed = False  # a value was yielded: no going back to YAML
        self.document = 0  # the top-level value being read, 1-based: a List's items are its

    def _more(self, at_least: int = CHUNK) -> bool:
        if self._held is not None:  # the text went bad after what the buffer holds
            raise self._held
        if self._eof:
            return False
        if self._pos > CHUNK and self.consumed:  # keep all text until it is surely JSON
            cut = self._pos - self.buffer.endswith("\r", 0, self._pos)  # a CRLF stays whole
            self._mark_line = self._line_at(cut)
            self._mark = 0
            self.buffer = self.buffer[cut:]
            self._pos -= cut
        try:
            chunk = self._text.read(at_least)
        except Refused as exc:  # where the buffer ends
            exc.line = self._line_at(len(self.buffer))
            raise
        if not chunk:
            self._eof = True
            return False
        self.buffer += chunk
        return True

    def _line_at(self, pos: int) -> int:
        if pos < self._mark:
            return self._mark_line - breaks(self.buffer, pos, self._mark)
        self._mark_line += breaks(self.buffer, self._mark, pos)
        self._mark = pos
        return self._mark_line

    @property
    def _line(self) -> int:
        return self._line_at(self._pos)

    def _peek(self) -> str:
        while True:
            buffer = self.buffer
            found = _NOT_SPACE.search(buffer, self._pos)
            if found is not None:
                pos = self._pos = found.start()
                return buffer[pos]
            self._pos = len(buffer)
            if not self._more():
                return ""

    def _fail(self, reason: str, pos: int | None = None) -> Refused:
        if not self.consumed:
            raise NotJson(reason)
        line = self._line_at(self._pos if pos is None else max(pos, self._pos))
        return Refused(f"not valid JSON: {reason}", line, fatal=True)

    def _value(self) -> tuple[Any, int, str, int] | Refused:
        """The next value, its first line, its text and its brackets; a ``Refused`` for
        a bad value that was skipped."""
        self._peek()
        if len(self.buffer) - self._pos < _AHEAD and self._held is None:
            # Read on first: a value cut off by the buffer's end is decoded again, and
            # the decoder's error counts the lines of the whole buffer before that. Bad
            # text further on waits until the text before it is read.
            try:
                self._more()
            except Refused as exc:
                self._held = exc
        step = CHUNK
        start = self._pos
        while True:
            try:
                value, end, brackets = decode(self.buffer, start)
            except json.JSONDecodeError as exc:
                if self._more(step):
                    step *= 2
                    start = self._pos
                    continue
                raise self._fail(exc.msg, exc.pos) from None
            except RecursionError:
                raise self._fail(
                    "nested deeper than Python can decode "
                    f"(--max-depth is {self._limits.max_depth})"
                ) from None
            except (_Duplicate, _JsonValue) as exc:
                try:
                    _, end = SKIPPER.raw_decode(self.buffer, start)
                except (json.JSONDecodeError, RecursionError):
                    if self._more(step):
                        step *= 2
                        start = self._pos
                        continue
                    raise self._fail("truncated") from None
                text = self.buffer[start:end]
                first = self._line
                self._pos = end
                if isinstance(exc, _Duplicate):
                    reason = f"duplicate key {clip(exc.key)}"
                    return Refused(reason, _line_in(text, first, self._limits))
                return Refused(exc.reason, first)
            line = self._line
            text = self.buffer[start:end]
            self._pos = end
            return value, line, text, brackets

    def values(self) -> Iterator[Found | Refused]:
        while True:
            char = self._peek()
            if not char:
                return
            self.document += 1
            if char == "{":
                yield from self._object()
                continue
            if not self.consumed:
                raise NotJson("not an object")
            found = self._value()
            if isinstance(found, Refused):
                yield found
                continue
            value, line, text, brackets = found
            yield None, line, value, text, brackets

    def _object(self) -> Iterator[Found | Refused]:
        """A top-level object key by key (each value's text kept to find lines later),
        its ``items`` array item by item."""
        line = self._line
        self._pos += 1  # "{"
        head: dict[str, Any] = {}
        spans: dict[str, tuple[str, int]] = {}
        problem: Refused | None = None
        first = True
        while True:
            char = self._peek()
            if char == "}":
                self._pos += 1
                break
            if not first:
                if char != ",":
                    raise self._fail("expected ',' or '}'")
                self._pos += 1
                char = self._peek()
            first = False
            if char != '"':
                raise self._fail("expected a string key")
            key = self._value()
            if not isinstance(key, tuple):
                raise self._fail("bad key")
            name = key[0]
            if name in head and problem is None:
                problem = Refused(f"duplicate key {clip(name)}", key[1])
            if self._peek() != ":":
                raise self._fail("expected ':'")
            self._pos += 1
            if name == "items" and self._peek() == "[" and problem is None:
                head[name] = None
                self.consumed = True
                yield from self._items()
                continue
            found = self._value()
            self.consumed = True
            if isinstance(found, Refused):
                problem = problem or found
                continue
            head[name] = found[0]
            spans[name] = (found[2], found[1])
        self.consumed = True
        if problem is not None:
            yield problem
        elif "items" not in head or spans.get("items") is not None:
            yield None, line, head, spans, None

    def _items(self) -> Iterator[Found | Refused]:
        self._pos += 1  # "["
        if self._peek() == "]":
            self._pos += 1
            return
        index = 0
        while True:
            found = self._value()
            if isinstance(found, Refused):
                found.reason = f"items[{index}]: {found.reason}"
                yield found
            else:
                value, line, text, brackets = found
                yield index, line, value, text, brackets
            index += 1
            if self.buffer.startswith(",", self._pos):  # kubectl's layout: right after it
                self._pos += 1
                continue
            char = self._peek()
            if char == "]":
                self._pos += 1
                return
            if char != ",":
                raise self._fail("expected ',' or ']'")
            self._pos += 1



def _line_in(text: str, first_line: int, limits: Limits) -> int:
    """The line of the first problem in a JSON value's text, read again as YAML (JSON is
    YAML, and the YAML reader tracks lines)."""
    import io

    for found in YamlReader(io.StringIO(text), "", limits).documents():
        if isinstance(found, BadInput) and found.line:
            return first_line + found.line - 1
        break
    return first_line

def json_documents(
    reader: JsonReader, source: str, limits: Limits
) -> Iterator[Document | BadInput]:
    try:
        for found in reader.values():
            number = reader.document  # the value (or the List) this one is part of
            if isinstance(found, Refused):
                yield BadInput(source, number, found.line, found.reason)
                continue
            item, line, value, text, brackets = found
            if item is not None:  # an item of a streamed List
                if not isinstance(value, dict):
                    yield BadInput(source, number, line,
                                   f"items[{item}] is {json_kind(value)}, not an object")
                elif too_deep(value, limits.max_depth - 2, brackets):
                    yield BadInput(source, number, line,
                                   f"items[{item}]: {too_deep_reason(limits)}")
                else:
                    yield Document(source, number, item, line, value,
                                   JsonLines(text, line, value), commented=False)
                continue
            if value is None:
                continue
            if not isinstance(value, dict):
                yield BadInput(source, number, line,
                               f"document is {json_kind(value)}, not an object")
                continue
            if too_deep(value, limits.max_depth, brackets):
                yield BadInput(source, number, line, too_deep_reason(limits))
                continue
            locate = (
                SpanLines(text, value) if isinstance(text, dict)
                else JsonLines(text, line, value)
            )
            items = list_items(value)
            if items is None:
                yield Document(source, number, None, line, value, locate, commented=False)
                continue
            for index, entry in enumerate(items):
                where = locate(("items", index))
                if not isinstance(entry, dict):
                    yield BadInput(source, number, where,
                                   f"items[{index}] is {json_kind(entry)}, not an object")
                    continue
                yield Document(source, number, index, where, entry, ItemLines(locate, index),
                               commented=False)
    except Refused as exc:  # fatal: the rest of the stream cannot be read
        yield BadInput(source, reader.document, exc.line, exc.reason + STOPS)
