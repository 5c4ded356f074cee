"""YAML read as kubectl reads it (``sigs.k8s.io/yaml``: go-yaml v2, then JSON): libyaml's
parser, our own constructor over its events, one document (and one ``List`` item) at a
time. Every value is a JSON value: timestamps stay strings, language tags are refused,
scalars resolve as go-yaml v2's ``resolve.go`` does, aliases count against
``--max-alias-nodes`` and nesting against ``--max-depth``."""

from __future__ import annotations

import base64
import codecs
import contextlib
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
    past_python_digit_limit,
    python_digit_limit,
)
from kubelet_winnet.sources.manifests.lines import ItemLines, LineTable, TableLines, YamlLines

__all__ = ["YamlReader", "yaml_documents"]

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {
    f"{_TAG}str", f"{_TAG}int", f"{_TAG}float", f"{_TAG}bool", f"{_TAG}null",
    f"{_TAG}timestamp", f"{_TAG}binary", f"{_TAG}merge", f"{_TAG}value",
}


class _Frame:
    __slots__ = ("anchor", "is_map", "key", "key_line", "line", "lines",
                 "merges", "size", "streamed", "value")

    def __init__(self, is_map: bool, line: int, anchor: str | None) -> None:
        self.is_map = is_map
        self.line = line
        self.anchor = anchor
        self.value: Any = {} if is_map else []
        self.lines: Any = {} if is_map else []  # child lines, same shape as value
        self.size = 1
        self.key: Any = _NO_KEY
        self.key_line = 0
        # Applied when the mapping ends: until then ``value`` holds its own keys only.
        self.merges: list[dict[str, Any]] = []
        self.streamed = -1  # the root's "items": items handed over so far, else -1


_NO_KEY = object()

# Plain scalars kubectl's YAML reader (sigs.k8s.io/yaml over go-yaml v2, resolve.go)
# resolves where PyYAML's YAML 1.1 resolver leaves a string: the one-letter booleans, and
# integers in Go's 0o octal notation (strconv.ParseInt with base 0).
_GO_YAML_ONLY = {"y": f"{_TAG}bool", "Y": f"{_TAG}bool", "n": f"{_TAG}bool", "N": f"{_TAG}bool"}
_GO_OCTAL = re.compile(r"[-+]?0o[0-7]+")


_STR = f"{_TAG}str"
_MERGE_TAG = f"{_TAG}merge"


def _scalar(loader: Any, event: Any, line: int) -> tuple[Any, str]:
    """The JSON value of a YAML scalar (at ``line``) and its resolved tag."""
    value: str = event.value
    tag = event.tag
    if tag is None and (
        not event.implicit[0] or value[:1] not in loader.yaml_implicit_resolvers
    ):
        return value, _STR  # quoted, or plain and no resolver's first character
    import yaml

    if tag is None and event.implicit[0] and value in _GO_YAML_ONLY:  # plain, untagged
        tag = _GO_YAML_ONLY[value]
    elif tag is None and event.implicit[0] and _GO_OCTAL.fullmatch(value):
        tag = f"{_TAG}int"
    elif tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
    elif tag.startswith("!!"):
        tag = _TAG + tag[2:]
    if tag not in _SCALAR_TAGS:
        raise Refused(f"unsupported tag {_short(tag)}", line)
    if tag.endswith(":binary"):
        return _binary(value, line), tag
    if tag.endswith((":str", ":timestamp", ":value")):
        return value, tag
    if tag.endswith(":null"):
        if value in ("", "~", "null", "Null", "NULL"):
            return None, tag
        raise Refused(f"!!null {clip(value)} is not null", line)
    if tag.endswith(":bool"):
        lowered = value.lower()
        if lowered in ("yes", "true", "on", "y"):
            return True, tag
        if lowered in ("no", "false", "off", "n"):
            return False, tag
        raise Refused(f"!!bool {clip(value)} is not a boolean", line)
    if tag.endswith(":merge"):
        return value, tag
    if tag.endswith(":int"):
        return _yaml_int(value, line), tag
    return _yaml_float(value, line), tag


# A !!binary scalar, as kubectl reads it: go-yaml v2 (decode.go, ``scalar``) decodes it
# with Go's ``base64.StdEncoding.DecodeString`` (padding required, line breaks skipped,
# nothing else) into ``string(data)``, raw bytes; sigs.k8s.io/yaml then writes it with
# ``json.Marshal``, whose ``encodeState.string`` turns each byte that does not start a
# valid UTF-8 sequence into U+FFFD, one per byte, and decoding goes on at the next byte.
_BASE64 = re.compile(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
)
_GO_REPLACE = "kubelet-winnet-go-json"


def _go_replace(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd", exc.start + 1


codecs.register_error(_GO_REPLACE, _go_replace)


def _binary(text: str, line: int) -> str:
    cleaned = text.replace("\r", "").replace("\n", "")
    if not _BASE64.fullmatch(cleaned):
        raise Refused(f"!!binary {clip(text)} is not valid base64", line)
    return base64.b64decode(cleaned).decode("utf-8", _GO_REPLACE)


def _yaml_int(text: str, line: int) -> int:
    # YAML 1.1 integers, as PyYAML and go-yaml v2 resolve them.
    digits = text.replace("_", "")
    if len(digits) > MAX_INT_DIGITS:
        raise Refused(TOO_MANY_DIGITS, line)
    sign = -1 if digits[:1] == "-" else 1
    body = digits[1:] if digits[:1] in "+-" and digits else digits
    try:
        if body == "0":
            return 0
        if body.startswith("0b"):
            return sign * int(body[2:], 2)
        if body.startswith("0x"):
            return sign * int(body[2:], 16)
        if body.startswith("0o"):
            return sign * int(body[2:], 8)
        if body.startswith("0") and body.isdigit():
            return sign * int(body, 8)
        if ":" in body:
            total = 0
            for part in body.split(":"):
                total = total * 60 + int(part)
            return sign * total
        return sign * int(body, 10)
    except ValueError:
        limit = python_digit_limit()
        if body.isdigit() and body[0] != "0" and 0 < limit < len(body):  # a lowered limit
            raise Refused(past_python_digit_limit(limit), line) from None
        raise Refused(f"!!int {clip(text)} is not an integer", line) from None


def _yaml_float(text: str, line: int) -> float:
    cleaned = text.replace("_", "").lower()
    if cleaned.lstrip("+-") in (".inf", ".nan"):
        raise Refused(f"{clip(text)} has no JSON form (infinity or NaN)", line)
    try:
        if ":" in cleaned:
            sign = -1.0 if cleaned.startswith("-") else 1.0
            total = 0.0
            for part in cleaned.lstrip("+-").split(":"):
                total = total * 60 + float(part)
            return sign * total
        return float(cleaned)
    except ValueError:
        raise Refused(f"!!float {clip(text)} is not a number", line) from None


def _short(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else clip(tag)


def _key_text(key: Any, line: int) -> str:
    # sigs.k8s.io/yaml turns scalar keys into JSON strings.
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if key is True or key is False:
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return str(key)
    raise Refused("a mapping key must be a scalar", line)


class _Counted:
    """A text stream whose text is counted into editors' lines as the parser reads it; a
    refusal of the stream below (a bad byte, a limit) lies where that text ends."""

    def __init__(self, text: Any, lines: YamlLines) -> None:
        self._text = text
        self._lines = lines

    def read(self, size: int = CHUNK) -> str:
        try:
            out: str = self._text.read(size)
        except Refused as exc:
            exc.line = exc.line or self._lines.ended
            raise
        self._lines.feed(out)
        return out


class YamlReader:
    """YAML documents from a text stream, composed from parser events with a stack;
    every line is an editors' line (:class:`YamlLines`)."""

    def __init__(self, text: Any, source: str, limits: Limits) -> None:
        import yaml

        loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        self._lines = YamlLines(skip_bom=loader_class is not yaml.SafeLoader)
        self._loader = loader_class(_Counted(text, self._lines))
        self._yaml = yaml
        self._source = source
        self._limits = limits

    def documents(
        self,
    ) -> Iterator[tuple[int, int | None, int, Any, LineTable] | BadInput]:
        """``(document number, item index or None, line, value, lines)``: the items of
        the root's ``items`` sequence one by one as they are composed, then the document
        (whose ``items`` is then empty)."""
        yaml = self._yaml
        loader = self._loader
        number = 0
        try:
            try:
                while True:
                    event = loader.get_event()
                    if isinstance(event, yaml.StreamEndEvent):
                        return
                    if isinstance(event, yaml.DocumentStartEvent):
                        number += 1
                        try:
                            for item, line, value, table in self._document():
                                yield number, item, line, value, table
                        except Refused as exc:
                            if exc.fatal:
                                yield BadInput(self._source, number, exc.line,
                                               exc.reason + STOPS)
                                return
                            yield BadInput(self._source, number, exc.line, exc.reason)
                            self._skip_document()
                            continue
            except yaml.MarkedYAMLError as exc:
                mark = exc.problem_mark or exc.context_mark
                line = self._line(mark) if mark is not None else 0
                problem = (exc.problem or exc.context or "syntax error").split("\n", 1)[0]
                yield BadInput(self._source, max(number, 1), line,
                               f"not valid YAML: {problem}{STOPS}")
            except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
                reason = getattr(exc, "reason", None) or str(exc).split("\n", 1)[0]
                character = getattr(exc, "character", None)
                if isinstance(character, int):  # which one, and where: libyaml knows no line
                    position = getattr(exc, "position", 0)
                    reason = (f"character U+{character:04X} at offset {position} is not "
                              "allowed in YAML"
                              + (" (a binary file?)" if position == 0 or character == 0
                                 else ""))
                else:
                    reason = f"not valid YAML: {reason}"
                yield BadInput(self._source, max(number, 1), 0, f"{reason}{STOPS}")
            except Refused as exc:  # from the byte/encoding layer below the parser
                yield BadInput(self._source, max(number, 1), exc.line, exc.reason + STOPS)
        finally:
            with contextlib.suppress(Exception):
                loader.dispose()

    def _line(self, mark: Any) -> int:
        """The editors' line of a parser's mark."""
        return self._lines.line(mark) if self._lines.moved else int(mark.line) + 1

    def _skip_document(self) -> None:
        yaml = self._yaml
        while True:
            event = self._loader.get_event()
            if isinstance(event, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
                return

    def _document(self) -> Iterator[tuple[int | None, int, Any, LineTable]]:
        """The composer's loop over one document's events: each node is built
        (:func:`_alias`, :func:`_open`, :func:`_close`), then attached to its parent
        (:func:`_attach`), or handed over at once when the parent is a List's ``items``."""
        yaml = self._yaml
        loader = self._loader
        limits = self._limits
        lines = self._lines
        table = root_table = LineTable()
        anchors: dict[str, tuple[Any, int]] = {}
        stack: list[_Frame] = []
        aliased = 0
        root: Any = None
        root_line = 0
        while True:
            event = loader.get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            if lines.moved:  # a line break only YAML reads came before: editors' line
                line = lines.line(event.start_mark)
            if kind is yaml.DocumentEndEvent:
                yield None, root_line, root, root_table
                return
            if kind is yaml.ScalarEvent:
                value, tag = _scalar(loader, event, line)
                size = 1
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
                if tag == _MERGE_TAG and stack and stack[-1].is_map and (
                    stack[-1].key is _NO_KEY
                ):
                    value = _MERGE
            elif kind is yaml.AliasEvent:
                value, size = _alias(anchors, event.anchor, line, aliased, limits)
                aliased += size
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                frame = _open(event, kind is yaml.MappingStartEvent, line, stack, limits)
                if len(stack) == 2 and stack[1].streamed >= 0:
                    table = LineTable()  # one item's lines, dropped with the item
                stack.append(frame)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value, size, line = _close(stack.pop(), table, anchors)
            else:  # pragma: no cover - the parser emits no other event inside a document
                raise Refused(f"unexpected YAML event {kind.__name__}", line)
            if not stack:
                root, root_line = value, line
                continue
            parent = stack[-1]
            parent.size += size
            if parent.streamed >= 0:
                yield parent.streamed, line, value, table
                parent.streamed += 1
                table = root_table
                continue
            if parent.is_map:
                _attach(parent, value, line)
            else:
                parent.value.append(value)
                parent.lines.append(line)


def _alias(
    anchors: dict[str, tuple[Any, int]], anchor: str, line: int, aliased: int,
    limits: Limits,
) -> tuple[Any, int]:
    """The value an alias names and its size in nodes; refused past ``--max-alias-nodes``
    counting the ``aliased`` nodes the document's aliases expanded to before it."""
    found = anchors.get(anchor)
    if found is None:
        raise Refused(f"alias *{clip(anchor)} names no complete anchor before it", line)
    if aliased + found[1] > limits.max_alias_nodes:
        raise Refused(
            f"aliases expand to more than {limits.max_alias_nodes} nodes "
            "(raise the limit with --max-alias-nodes)",
            line,
        )
    return found


def _open(event: Any, is_map: bool, line: int, stack: list[_Frame], limits: Limits) -> _Frame:
    """The frame a mapping or sequence is built in, after its tag and depth are checked;
    the root's ``items`` sequence is marked to be handed over item by item."""
    tag = event.tag
    want = f"{_TAG}map" if is_map else f"{_TAG}seq"
    if tag is not None and tag != "!" and tag != want and tag != "!!" + want[len(_TAG):]:
        raise Refused(f"unsupported tag {_short(tag)}", line)
    if len(stack) >= limits.max_depth:
        raise Refused(
            f"nested deeper than {limits.max_depth} levels (raise the limit with --max-depth)",
            line,
        )
    frame = _Frame(is_map, line, event.anchor)
    if len(stack) == 1 and not is_map and stack[0].key == "items":
        frame.streamed = 0  # a List's items: handed over one at a time
    return frame


def _close(
    frame: _Frame, table: LineTable, anchors: dict[str, tuple[Any, int]]
) -> tuple[Any, int, int]:
    """A finished mapping or sequence: its merge keys applied (a key set in the mapping
    itself wins), its lines recorded; ``(value, size in nodes, first line)``."""
    value = frame.value
    if frame.merges:
        for merged in frame.merges:
            for key, item in merged.items():
                if key not in value:
                    value[key] = item
                    frame.lines[key] = frame.line
    table.add(value, frame.line, frame.lines)
    if frame.anchor is not None:
        anchors[frame.anchor] = (value, frame.size)
    return value, frame.size, frame.line


def _attach(parent: _Frame, value: Any, line: int) -> None:
    """``value`` (starting at ``line``) into the mapping being built: as its next key,
    or as the value of the key before it (a merge key's mappings kept for :func:`_close`)."""
    if parent.key is _NO_KEY:
        if type(value) is not str:  # most keys are: nothing to check or convert
            if isinstance(value, (dict, list)):
                raise Refused("a mapping key must be a scalar", line)
            value = value if value is _MERGE else _key_text(value, line)
        parent.key = value
        parent.key_line = line
        return
    key = parent.key
    parent.key = _NO_KEY
    if key is _MERGE:
        merged_maps = value if isinstance(value, list) else [value]
        if not all(isinstance(m, dict) for m in merged_maps):
            raise Refused("a merge key (<<) takes a mapping or a list of them", line)
        parent.merges.extend(merged_maps)
        return
    if key in parent.value:
        raise Refused(f"duplicate key {clip(key)}", parent.key_line)
    parent.value[key] = value
    parent.lines[key] = parent.key_line


_MERGE: Any = type("_Merge", (), {"__repr__": lambda self: "<<"})()


def yaml_documents(
    text: Any, source: str, limits: Limits
) -> Iterator[Document | BadInput]:
    """Every object of a YAML stream (``text.read(size)`` gives its characters)."""
    for found in YamlReader(text, source, limits).documents():
        if isinstance(found, BadInput):
            yield found
            continue
        number, streamed, line, value, table = found
        if streamed is not None:
            if not isinstance(value, dict):
                yield BadInput(source, number, line,
                               f"items[{streamed}] is {json_kind(value)}, not an object")
                continue
            yield Document(source, number, streamed, line, value, TableLines(table, value))
            continue
        if value is None:
            continue  # an empty document ("---" at the end), as kubectl skips it
        if not isinstance(value, dict):
            yield BadInput(source, number, line,
                           f"document is {json_kind(value)}, not an object")
            continue
        locate = TableLines(table, value)
        items = list_items(value)
        if items is None:
            yield Document(source, number, None, line, value, locate)
            continue
        for index, item in enumerate(items):  # a List whose items an alias gave
            where = locate(("items", index))
            if not isinstance(item, dict):
                yield BadInput(source, number, where,
                               f"items[{index}] is {json_kind(item)}, not an object")
                continue
            yield Document(source, number, index, where, item, ItemLines(locate, index))
