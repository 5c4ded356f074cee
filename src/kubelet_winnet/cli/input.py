"""Manifests from files, directories and stdin, read the way kubectl reads them.

One document at a time: YAML streams are composed event by event (libyaml's parser, our
own constructor), JSON values are decoded one by one and a ``List``'s ``items`` one item
at a time, so memory follows the largest document, not the file. Every value is a JSON
value (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``): YAML timestamps
stay strings and language tags are refused, as ``sigs.k8s.io/yaml`` (YAML -> JSON) does.

Everything wrong with the input becomes a :class:`BadInput` naming the file, the document
and the line; the reader then carries on with the next document where the format allows.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import json.scanner
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

from kubelet_winnet import _speedups
from kubelet_winnet._describe import describe_path
from kubelet_winnet._describe import json_string as _quote

__all__ = [
    "DEFAULT_LIMITS",
    "BadInput",
    "Document",
    "Limits",
    "Skipped",
    "describe_path",
    "expand_paths",
    "read_source",
    "replayable",
    "stdin_head",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# check's settings file (cli/config.py), never a manifest: a directory search passes it by.
SETTINGS_FILE = ".kubelet-winnet.yaml"
# Python refuses to convert longer decimal strings (sys.int_info.default_max_str_digits);
# such a literal is bad input rather than a traceback.
MAX_INT_DIGITS = 4300
_CHUNK = 1 << 16

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Limits:
    """Per-file bounds; each has a command-line flag to raise it."""

    max_bytes: int = 256 * 1024 * 1024  # --max-bytes
    max_depth: int = 100  # --max-depth: nesting of mappings and sequences
    max_alias_nodes: int = 10_000  # --max-alias-nodes: nodes reached through YAML aliases


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class BadInput:
    """Input that cannot be read: ``document`` is 1-based (0: the file as a whole),
    ``line`` 1-based (0: unknown)."""

    source: str
    document: int
    line: int
    reason: str

    def __str__(self) -> str:
        where = self.source
        if self.line:
            where += f":{self.line}"
        if self.document:
            where += f": document {self.document}"
        return f"{where}: {self.reason}"


@dataclass(slots=True)  # not frozen: a frozen dataclass pays a setattr per field
class Document:
    """One object: a document of a file, or an item of a ``List`` document."""

    source: str
    document: int  # 1-based document number in the file
    item: int | None  # index in the List's items, or None
    line: int  # line where the object starts
    value: dict[str, Any]
    _locate: Callable[[Path], int] = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        text = f"{self.source}#{self.document}"
        return text if self.item is None else f"{text}.items[{self.item}]"

    def line_of(self, path: Path) -> int:
        """The line of the field at ``path`` (or of its nearest present parent)."""
        try:
            return self._locate(path) or self.line
        except Exception:  # a locator is best effort: never lose a finding over it
            return self.line


# After an error the parser cannot recover from, nothing more of the file is read.
_STOPS = "; reading of this file stops here"


class _Refused(Exception):
    """Bad input found while reading; ``line`` 0 when unknown."""

    def __init__(self, reason: str, line: int = 0, *, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.fatal = fatal  # the rest of the stream cannot be read



# --- paths ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    """A file found by searching a directory that is not read, and why (a note)."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


def _not_regular(path: str) -> str | None:
    """What ``path`` is when it is not a regular file (``None``: regular, or not there:
    reading it then says why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")


def replayable(path: str) -> bool:
    """Whether ``path`` can be read twice: a regular file, or a name that is not there
    (reading it fails the same way twice). Stdin, FIFOs and devices cannot."""
    return path != "-" and _not_regular(path) is None


def expand_paths(arguments: Sequence[str]) -> Iterator[str | BadInput | Skipped]:
    """Files in argument order; a directory's ``.yaml``/``.yml``/``.json`` files,
    recursively, sorted by path; ``-`` is stdin. A directory that cannot be listed is
    bad input ("cannot read", as a file); a FIFO, socket or device found in a directory
    is skipped with a note (reading one could block forever; named as an argument, it
    is read)."""
    for argument in arguments:
        if argument != "-" and os.path.isdir(argument):
            found: list[tuple[str, str | BadInput | Skipped]] = []

            def unreadable(
                exc: OSError, top: str = argument,
                found: list[tuple[str, str | BadInput | Skipped]] = found,
            ) -> None:
                where = exc.filename if isinstance(exc.filename, str) else top
                reason = f"cannot read: {exc.strerror or type(exc).__name__}"
                found.append((where, BadInput(where, 0, 0, reason)))

            for root, dirs, files in os.walk(argument, onerror=unreadable):
                dirs.sort()
                for name in files:
                    if not name.lower().endswith(MANIFEST_SUFFIXES) or name == SETTINGS_FILE:
                        continue
                    path = os.path.join(root, name)
                    kind = _not_regular(path)
                    found.append((path, path if kind is None else Skipped(
                        path, f"skipped: {kind}, not a regular file (a directory search "
                        "reads regular files only; name it as an argument to read it)",
                    )))
            if not found:
                yield BadInput(argument, 0, 0, "directory holds no .yaml, .yml or .json file")
            found.sort(key=lambda entry: entry[0])
            yield from (entry for _, entry in found)
        else:
            yield argument


# --- bytes -> text ----------------------------------------------------------------------


class _Text:
    """Text from a binary stream: the encoding chosen from the byte order mark, bytes
    counted against the limit, decoding errors reported with their line."""

    def __init__(self, raw: IO[bytes], max_bytes: int) -> None:
        self._raw = raw
        self._max = max_bytes
        self._read = 0
        self._lines = 1  # newlines seen so far + 1, for error lines
        self._eof = False
        head = self._take(4)
        encoding = "utf-8"
        skip = 0
        if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
            raise _Refused("UTF-32 is not supported (use UTF-8 or UTF-16 with a BOM)", 1)
        if head.startswith(codecs.BOM_UTF8):
            skip = 3
        elif head.startswith(codecs.BOM_UTF16_LE):
            encoding, skip = "utf-16-le", 2
        elif head.startswith(codecs.BOM_UTF16_BE):
            encoding, skip = "utf-16-be", 2
        elif len(head) >= 2 and (head[0] == 0) != (head[1] == 0):
            raise _Refused("looks like UTF-16 without a byte order mark; not UTF-8", 1)
        self._decoder = codecs.getincrementaldecoder(encoding)("strict")
        self._pending = head[skip:]
        self._failed: _Refused | None = None  # raised by the read after the good text

    def _take(self, size: int) -> bytes:
        if self._read >= self._max:  # the bytes up to the limit were handed over
            if not self._raw.read(1):
                self._eof = True
                return b""
            raise _Refused(
                f"larger than {self._max} bytes (raise the limit with --max-bytes)",
                self._lines, fatal=True,
            )
        data = self._raw.read(min(size, self._max - self._read))
        if not data:
            self._eof = True
            return b""
        self._read += len(data)
        return data

    def read(self, size: int = _CHUNK) -> str:
        """Up to about ``size`` characters; ``""`` at the end."""
        if self._failed is not None:
            raise self._failed
        while True:
            data = self._pending + (b"" if self._eof else self._take(max(size, 4)))
            self._pending = b""
            try:
                text = self._decoder.decode(data, final=self._eof)
            except UnicodeDecodeError as exc:  # the bytes before the bad one decode fine
                good = exc.object[: exc.start].decode(exc.encoding, "replace")
                line = self._lines + good.count("\n")
                name = "UTF-8" if exc.encoding.startswith("utf-8") else "UTF-16"
                bad = exc.object[exc.start : exc.start + 1].hex()
                failed = _Refused(f"not valid {name} (byte 0x{bad})", line, fatal=True)
                if not good:
                    raise failed from None
                # Hand over the good text first: the documents it completes are read and
                # reported; the error comes with the document that holds the bad byte.
                self._failed = failed
                self._lines = line
                return good
            if text or self._eof:
                self._lines += text.count("\n")
                return text


# --- YAML -------------------------------------------------------------------------------

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {
    f"{_TAG}str", f"{_TAG}int", f"{_TAG}float", f"{_TAG}bool", f"{_TAG}null",
    f"{_TAG}timestamp", f"{_TAG}binary", f"{_TAG}merge", f"{_TAG}value",
}


class _Frame:
    __slots__ = ("anchor", "explicit", "is_map", "key", "key_line", "line", "lines",
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
        self.merges: list[dict[str, Any]] = []
        self.explicit: set[str] = set()
        self.streamed = -1  # the root's "items": items handed over so far, else -1


_NO_KEY = object()


class _LineTable:
    """Lines of a YAML document's nodes: ``id(container) -> (line, child lines)``."""

    def __init__(self) -> None:
        self.table: dict[int, tuple[int, Any]] = {}
        self.keep: list[Any] = []  # containers stay alive while their ids are keys

    def add(self, value: Any, line: int, lines: Any) -> None:
        self.table[id(value)] = (line, lines)
        self.keep.append(value)

    def locate(self, root: Any, path: Path) -> int:
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


# Plain scalars kubectl's YAML reader (sigs.k8s.io/yaml over go-yaml v2, resolve.go)
# resolves where PyYAML's YAML 1.1 resolver leaves a string: the one-letter booleans, and
# integers in Go's 0o octal notation (strconv.ParseInt with base 0).
_GO_YAML_ONLY = {"y": f"{_TAG}bool", "Y": f"{_TAG}bool", "n": f"{_TAG}bool", "N": f"{_TAG}bool"}
_GO_OCTAL = re.compile(r"[-+]?0o[0-7]+")


def _scalar(loader: Any, event: Any, limits: Limits) -> tuple[Any, str]:
    """The JSON value of a YAML scalar and its resolved tag."""
    import yaml

    value: str = event.value
    tag = event.tag
    if tag is None and event.implicit[0] and value in _GO_YAML_ONLY:  # plain, untagged
        tag = _GO_YAML_ONLY[value]
    elif tag is None and event.implicit[0] and _GO_OCTAL.fullmatch(value):
        tag = f"{_TAG}int"
    elif tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
    elif tag.startswith("!!"):
        tag = _TAG + tag[2:]
    line = event.start_mark.line + 1
    if tag not in _SCALAR_TAGS:
        raise _Refused(f"unsupported tag {_short(tag)}", line)
    if tag.endswith((":str", ":timestamp", ":binary", ":value")):
        return value, tag
    if tag.endswith(":null"):
        if value in ("", "~", "null", "Null", "NULL"):
            return None, tag
        raise _Refused(f"!!null {_clip(value)} is not null", line)
    if tag.endswith(":bool"):
        lowered = value.lower()
        if lowered in ("yes", "true", "on", "y"):
            return True, tag
        if lowered in ("no", "false", "off", "n"):
            return False, tag
        raise _Refused(f"!!bool {_clip(value)} is not a boolean", line)
    if tag.endswith(":merge"):
        return value, tag
    if tag.endswith(":int"):
        return _yaml_int(value, line), tag
    return _yaml_float(value, line), tag


def _yaml_int(text: str, line: int) -> int:
    # YAML 1.1 integers, as PyYAML and go-yaml v2 resolve them.
    digits = text.replace("_", "")
    if len(digits) > MAX_INT_DIGITS:
        raise _Refused(f"integer with more than {MAX_INT_DIGITS} digits", line)
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
        raise _Refused(f"!!int {_clip(text)} is not an integer", line) from None


def _yaml_float(text: str, line: int) -> float:
    cleaned = text.replace("_", "").lower()
    if cleaned.lstrip("+-") in (".inf", ".nan"):
        raise _Refused(f"{_clip(text)} has no JSON form (infinity or NaN)", line)
    try:
        if ":" in cleaned:
            sign = -1.0 if cleaned.startswith("-") else 1.0
            total = 0.0
            for part in cleaned.lstrip("+-").split(":"):
                total = total * 60 + float(part)
            return sign * total
        return float(cleaned)
    except ValueError:
        raise _Refused(f"!!float {_clip(text)} is not a number", line) from None


def _clip(text: str, size: int = 40) -> str:
    shown = json.dumps(text)
    return shown if len(shown) <= size else shown[: size - 4] + '..."'


def _short(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else _clip(tag)


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
    raise _Refused("a mapping key must be a scalar", line)


class _YamlReader:
    """YAML documents from a text stream, composed from parser events with a stack."""

    def __init__(self, text: Any, source: str, limits: Limits) -> None:
        import yaml

        loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        self._loader = loader_class(text)
        self._yaml = yaml
        self._source = source
        self._limits = limits

    def documents(
        self,
    ) -> Iterator[tuple[int, int | None, int, Any, _LineTable] | BadInput]:
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
                        except _Refused as exc:
                            if exc.fatal:
                                yield BadInput(self._source, number, exc.line,
                                               exc.reason + _STOPS)
                                return
                            yield BadInput(self._source, number, exc.line, exc.reason)
                            self._skip_document()
                            continue
            except yaml.MarkedYAMLError as exc:
                mark = exc.problem_mark or exc.context_mark
                line = mark.line + 1 if mark is not None else 0
                problem = (exc.problem or exc.context or "syntax error").split("\n", 1)[0]
                yield BadInput(self._source, max(number, 1), line,
                               f"not valid YAML: {problem}{_STOPS}")
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
                yield BadInput(self._source, max(number, 1), 0, f"{reason}{_STOPS}")
            except _Refused as exc:  # from the byte/encoding layer below the parser
                yield BadInput(self._source, max(number, 1), exc.line, exc.reason + _STOPS)
        finally:
            with contextlib.suppress(Exception):
                loader.dispose()

    def _skip_document(self) -> None:
        yaml = self._yaml
        while True:
            event = self._loader.get_event()
            if isinstance(event, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
                return

    def _document(self) -> Iterator[tuple[int | None, int, Any, _LineTable]]:
        yaml = self._yaml
        loader = self._loader
        limits = self._limits
        table = root_table = _LineTable()
        anchors: dict[str, tuple[Any, int]] = {}
        stack: list[_Frame] = []
        aliased = 0
        root: Any = None
        root_line = 0
        while True:
            event = loader.get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            if kind is yaml.DocumentEndEvent:
                yield None, root_line, root, root_table
                return
            if kind is yaml.ScalarEvent:
                value, tag = _scalar(loader, event, limits)
                size = 1
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
                if tag == f"{_TAG}merge" and stack and stack[-1].is_map and (
                    stack[-1].key is _NO_KEY
                ):
                    value = _MERGE
            elif kind is yaml.AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise _Refused(
                        f"alias *{_clip(event.anchor)} names no complete anchor before it",
                        line,
                    )
                value, size = found
                aliased += size
                if aliased > limits.max_alias_nodes:
                    raise _Refused(
                        f"aliases expand to more than {limits.max_alias_nodes} nodes "
                        "(raise the limit with --max-alias-nodes)",
                        line,
                    )
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                is_map = kind is yaml.MappingStartEvent
                tag = event.tag
                want = f"{_TAG}map" if is_map else f"{_TAG}seq"
                if tag is not None and tag != "!" and tag != want and tag != (
                    "!!" + want[len(_TAG):]
                ):
                    raise _Refused(f"unsupported tag {_short(tag)}", line)
                if len(stack) >= limits.max_depth:
                    raise _Refused(
                        f"nested deeper than {limits.max_depth} levels "
                        "(raise the limit with --max-depth)",
                        line,
                    )
                frame = _Frame(is_map, line, event.anchor)
                if len(stack) == 1 and not is_map and stack[0].key == "items":
                    frame.streamed = 0  # a List's items: handed over one at a time
                elif len(stack) == 2 and stack[1].streamed >= 0:
                    table = _LineTable()  # one item's lines, dropped with the item
                stack.append(frame)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                frame = stack.pop()
                value = frame.value
                if frame.merges:
                    for merged in frame.merges:
                        for key, item in merged.items():
                            if key not in value:
                                value[key] = item
                                frame.lines[key] = frame.line
                table.add(value, frame.line, frame.lines)
                size = frame.size
                line = frame.line
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, size)
            else:  # pragma: no cover - the parser emits no other event inside a document
                raise _Refused(f"unexpected YAML event {kind.__name__}", line)
            # attach `value` (of `size` nodes, starting at `line`) to its parent
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
            if not parent.is_map:
                parent.value.append(value)
                parent.lines.append(line)
            elif parent.key is _NO_KEY:
                if isinstance(value, (dict, list)):
                    raise _Refused("a mapping key must be a scalar", line)
                parent.key = value if value is _MERGE else _key_text(value, line)
                parent.key_line = line
            else:
                key = parent.key
                parent.key = _NO_KEY
                if key is _MERGE:
                    merged_maps = value if isinstance(value, list) else [value]
                    if not all(isinstance(m, dict) for m in merged_maps):
                        raise _Refused("a merge key (<<) takes a mapping or a list of them",
                                       line)
                    parent.merges.extend(merged_maps)
                    continue
                if key in parent.explicit:
                    raise _Refused(f"duplicate key {_clip(key)}", parent.key_line)
                parent.explicit.add(key)
                parent.value[key] = value
                parent.lines[key] = parent.key_line


_MERGE: Any = type("_Merge", (), {"__repr__": lambda self: "<<"})()


# --- JSON -------------------------------------------------------------------------------


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
        raise _JsonValue(f"integer with more than {MAX_INT_DIGITS} digits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise _JsonValue(f"number {_clip(text)} is out of range")
    return value


_INF = float("inf")


def _json_constant(name: str) -> float:
    raise _JsonValue(f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_int=_json_int, parse_float=_json_float,
    parse_constant=_json_constant,
)
_WHITESPACE = " \t\n\r"
_NOT_SPACE = re.compile(r"[^ \t\n\r]")


class _NotJson(Exception):
    """The text is not JSON before anything was consumed: read it as YAML instead."""


# Decodes anything the strict decoder does, to find where a refused value ends.
_SKIPPER = json.JSONDecoder(
    parse_int=lambda text: 0, parse_float=lambda text: 0.0, parse_constant=lambda name: 0.0
)

Found = tuple[int | None, int, Any, Any]  # (item index or None, line, value, text or spans)


class _JsonReader:
    """JSON values one by one (a stream of concatenated values, as kubectl accepts),
    and the ``items`` of a large top-level object one item at a time.

    Yields :data:`Found` tuples, or a ``_Refused`` for one bad value that could be
    skipped; raises ``_Refused`` (fatal) when the stream cannot go on, ``_NotJson`` when
    nothing was consumed yet (the caller reads the text as YAML instead).
    """

    def __init__(self, text: _Text, first: str, limits: Limits) -> None:
        self._text = text
        self.buffer = first
        self._pos = 0
        self._mark = 0  # a position in the buffer ...
        self._mark_line = 1  # ... and its line: lines are counted forward from here
        self._eof = False
        self._limits = limits
        self.consumed = False  # a value was yielded: no going back to YAML
        self._fast_failures = 0  # items the fast path could not read (see _fast_item)
        self._fast_indent: str | None = None  # the items' indentation, the line that
        self._fast_close = ""  # closes one, and the line break, indentation and brace
        self._fast_open = "\x00"  # that open the next (never met before the first)
        self._escape_at = -1  # where the next backslash is (see _fast_item)
        # The List item just yielded was proved no deeper than the limit (the fast path
        # counts its brackets in the compact encoding it already made)
        self.shallow = False
        self.document = 0  # the top-level value being read, 1-based: a List's items are its

    def _more(self, at_least: int = _CHUNK) -> bool:
        if self._eof:
            return False
        self._escape_at = -1  # positions move, or text comes that was not searched
        if self._pos > _CHUNK and self.consumed:  # keep all text until it is surely JSON
            # Cut at the start of the line (when near), so an item's indentation stays.
            cut = self.buffer.rfind("\n", self._pos - _INDENT_KEPT, self._pos) + 1 or self._pos
            self._mark_line = self._line_at(cut)
            self._mark = 0
            self.buffer = self.buffer[cut:]
            self._pos -= cut
        chunk = self._text.read(at_least)
        if not chunk:
            self._eof = True
            return False
        self.buffer += chunk
        return True

    def _line_at(self, pos: int) -> int:
        if pos < self._mark:
            return self._mark_line - self.buffer.count("\n", pos, self._mark)
        self._mark_line += self.buffer.count("\n", self._mark, pos)
        self._mark = pos
        return self._mark_line

    @property
    def _line(self) -> int:
        return self._line_at(self._pos)

    def _advance(self, pos: int) -> None:
        self._pos = pos

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

    def _fail(self, reason: str, pos: int | None = None) -> _Refused:
        if not self.consumed:
            raise _NotJson(reason)
        line = self._line_at(self._pos if pos is None else max(pos, self._pos))
        return _Refused(f"not valid JSON: {reason}", line, fatal=True)

    def _value(self) -> tuple[Any, int, str] | _Refused:
        """The next value, its first line and its text; a ``_Refused`` for a bad value
        that was skipped."""
        self._peek()
        step = _CHUNK
        start = self._pos
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, start)
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
                    _, end = _SKIPPER.raw_decode(self.buffer, start)
                except (json.JSONDecodeError, RecursionError):
                    if self._more(step):
                        step *= 2
                        start = self._pos
                        continue
                    raise self._fail("truncated") from None
                text = self.buffer[start:end]
                first = self._line
                self._advance(end)
                if isinstance(exc, _Duplicate):
                    reason = f"duplicate key {_clip(exc.key)}"
                    return _Refused(reason, _line_in(text, first, self._limits))
                return _Refused(exc.reason, first)
            line = self._line
            text = self.buffer[start:end]
            self._advance(end)
            return value, line, text

    def values(self) -> Iterator[Found | _Refused]:
        while True:
            char = self._peek()
            if not char:
                return
            self.document += 1
            if char == "{":
                yield from self._object()
                continue
            if not self.consumed:
                raise _NotJson("not an object")
            found = self._value()
            if isinstance(found, _Refused):
                yield found
                continue
            value, line, text = found
            yield None, line, value, text

    def _object(self) -> Iterator[Found | _Refused]:
        """A top-level object key by key (each value's text kept to find lines later),
        its ``items`` array item by item."""
        line = self._line
        self._advance(self._pos + 1)  # "{"
        head: dict[str, Any] = {}
        spans: dict[str, tuple[str, int]] = {}
        problem: _Refused | None = None
        first = True
        while True:
            char = self._peek()
            if char == "}":
                self._advance(self._pos + 1)
                break
            if not first:
                if char != ",":
                    raise self._fail("expected ',' or '}'")
                self._advance(self._pos + 1)
                char = self._peek()
            first = False
            if char != '"':
                raise self._fail("expected a string key")
            key = self._value()
            if not isinstance(key, tuple):
                raise self._fail("bad key")
            name = key[0]
            if name in head and problem is None:
                problem = _Refused(f"duplicate key {_clip(name)}", key[1])
            if self._peek() != ":":
                raise self._fail("expected ':'")
            self._advance(self._pos + 1)
            if name == "items" and self._peek() == "[" and problem is None:
                head[name] = None
                self.consumed = True
                yield from self._items()
                continue
            found = self._value()
            self.consumed = True
            if isinstance(found, _Refused):
                problem = problem or found
                continue
            head[name] = found[0]
            spans[name] = (found[2], found[1])
        self.consumed = True
        if problem is not None:
            yield problem
        elif "items" not in head or spans.get("items") is not None:
            yield None, line, head, spans

    def _items(self) -> Iterator[Found | _Refused]:
        self._advance(self._pos + 1)  # "["
        if self._peek() == "]":
            self._advance(self._pos + 1)
            return
        index = 0
        fast = _fast_decoder() if _speedups.is_on("list-items") else None
        while True:
            found: tuple[Any, int, str] | _Refused | None = (
                None if fast is None or self._fast_failures >= _FAST_GIVE_UP
                else self._fast_item(*fast)
            )
            if found is None:
                self.shallow = False
                found = self._value()
            if isinstance(found, _Refused):
                found.reason = f"items[{index}]: {found.reason}"
                yield found
            else:
                value, line, text = found
                yield index, line, value, text
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


    def _fast_item(
        self, decode: Callable[[str], Any], encode: Callable[[Any], bytes], failure: Any,
    ) -> tuple[Any, int, str] | None:
        """The next item by the fast path, or None to read it the careful way (and, when
        the layout does not suit the fast path, read every later item that way too).

        An item alone on its line ends at the first later line that holds its
        indentation and "}" (JSON strings hold no newline). The guess is proved by
        decoding exactly that window: one value and nothing after it. The decoder keeps
        the last of repeated keys, so the text's colons are counted against those of
        the value written back compactly: each dropped member takes at least one colon
        with it. Text with a \\u escape (which can spell a colon or a lone surrogate)
        or a digit run longer than the integer limit goes the careful way."""
        buffer = self.buffer
        pos = self._pos
        if buffer.startswith(self._fast_open, pos):
            # what _peek and the indentation test below would find: the brace of an item
            # on its own line, indented as the last one
            pos = self._pos = pos + len(self._fast_open) - 1
        else:
            self._peek()
            buffer = self.buffer
            pos = self._pos
            line_start = buffer.rfind("\n", 0, pos) + 1
            indent = buffer[line_start:pos]
            if indent != self._fast_indent:
                if not buffer.startswith("{", pos) or indent.strip(" \t"):
                    self._fast_failures = _FAST_GIVE_UP  # not one item per line: never again
                    return None
                self._fast_indent = indent
                self._fast_close = "\n" + indent + "}"
                self._fast_open = "\n" + indent + "{"
            elif not buffer.startswith("{", pos):
                self._fast_failures = _FAST_GIVE_UP
                return None
        close = self._fast_close
        searched = pos
        while True:
            end = buffer.find(close, searched)
            if end >= 0:
                break
            searched = max(pos, len(buffer) - len(close))
            if len(buffer) - pos > _FAST_WINDOW or not self._more():
                return None
            searched += self._pos - pos
            buffer = self.buffer
            pos = self._pos
        end += len(close)
        text = buffer[pos:end]
        escape = self._escape_at  # the first backslash from here on, found once
        if escape < pos:
            escape = buffer.find("\\", pos)
            self._escape_at = escape = len(buffer) if escape < 0 else escape
        if (escape < end and "\\u" in text) or (
            len(text) > MAX_INT_DIGITS and re.search(_LONG_DIGITS, text)
        ):
            return None
        try:
            value = decode(text)
        except failure:
            self._fast_failures += 1
            return None
        encoded = encode(value)
        if text.count(":") != encoded.count(b":"):
            return None  # a repeated key: the careful way names it and its line
        # Each level of nesting opens a bracket (strings may hold more): no more
        # brackets than the limit, no deeper than it; for the others _json_documents
        # measures the depth.
        self.shallow = (
            encoded.count(b"{") + encoded.count(b"[") <= self._limits.max_depth - 2
        )
        line = self._line_at(pos)
        self._pos = end
        return value, line, text


_INDENT_KEPT = 256
_FAST_WINDOW = 4 << 20  # a longer item goes the careful way
_FAST_GIVE_UP = 16  # failed decodes before the fast path stops being tried
# Compiled on first use (re's cache): compiling it costs 10 ms of every start-up.
_LONG_DIGITS = f"[0-9]{{{MAX_INT_DIGITS + 1}}}"


def _fast_decoder() -> tuple[Callable[[str], Any], Callable[[Any], bytes], Any] | None:
    """msgspec's decoder and encoder, and the errors its decoder raises (None when it
    cannot be imported: every item is read the careful way)."""
    try:
        import msgspec
    except ImportError:  # pragma: no cover - a dependency
        return None
    failure = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
    return msgspec.json.Decoder().decode, msgspec.json.Encoder().encode, failure


def _spans_locator(
    spans: dict[str, tuple[str, int]], values: dict[str, Any]
) -> Callable[[Path], int]:
    """Lines in a top-level object read key by key: each key's value has its own text."""
    locators: dict[str, Callable[[Path], int]] = {}

    def locate(path: Path) -> int:
        if not path or path[0] not in spans:
            return 0
        key = str(path[0])
        if key not in locators:
            text, line = spans[key]
            locators[key] = _json_locator(text, line, values.get(key))
        return locators[key](path[1:])

    return locate


def _line_in(text: str, first_line: int, limits: Limits) -> int:
    """The line of the first problem in a JSON value's text, read again as YAML (JSON is
    YAML, and the YAML reader tracks lines)."""
    import io

    for found in _YamlReader(io.StringIO(text), "", limits).documents():
        if isinstance(found, BadInput) and found.line:
            return first_line + found.line - 1
        break
    return first_line


def _json_locator(text: str, first_line: int, value: Any) -> Callable[[Path], int]:
    """Lines inside a JSON value's text, found only when a finding asks."""
    return _JsonLines(text, first_line, value)


_SCAN = json.scanner.make_scanner(_SKIPPER)  # type: ignore[arg-type]
_SPACE = re.compile(r"[ \t\n\r]*")
_BLOCK = 12  # newlines are counted per block of 2**12 characters, once


def _present(value: Any, path: Path) -> int:
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
    match = _SPACE.match(text, pos)
    return pos if match is None else match.end()


class _JsonLines:
    """The line of the field at a path inside one JSON value's text (called as a
    locator), where the deepest key of the path present starts.

    Linear in the findings of a document: each container on a path asked for is
    scanned once (its members' offsets kept), each key's text searched for once, and a
    line is counted from the start of its 4 KiB block, whose line is counted once."""

    __slots__ = ("_blocks", "_members", "_text", "_unique", "_value")

    def __init__(self, text: str, first_line: int, value: Any) -> None:
        # Most documents are never asked: the tables are made by the first question.
        self._text = text
        self._value = value
        self._blocks: list[int] | int = first_line  # then the line at each block's start

    def __call__(self, path: Path) -> int:
        if isinstance(self._blocks, int):
            self._blocks = [self._blocks]
            self._members: dict[int, list[Any]] = {}
            # (a key's JSON text, from where) -> (its only offset from there, its
            # value's offset), or (-1, -1)
            self._unique: dict[tuple[str, int], tuple[int, int]] = {}
        return self._line(self._offset(path))

    def _offset(self, path: Path) -> int:
        """Where the deepest key of ``path`` present starts (0: the value itself).

        From the value reached so far (at first the whole text), a key of the rest of
        the present path whose JSON string occurs once from there on (followed by a
        colon) is that key: its value lies inside the one reached, and so does every
        other occurrence it could be. The deepest such key is jumped to; when there is
        none, one step of the walk through the containers' members is taken."""
        text = self._text
        present = _present(self._value, path)
        begin, pos, found = 0, -1, 0  # parts resolved, where the value reached starts
        while begin < present:
            for index in range(present - 1, begin - 1, -1):
                part = path[index]
                if type(part) is str:
                    at, value_at = self._unique_key(part, max(pos, 0))
                    if at >= 0:
                        begin, pos, found = index + 1, value_at, at
                        break
            else:
                if pos < 0:
                    pos = _skip_space(text, 0)
                entry = self._member(pos, path[begin])
                if entry is None:
                    break
                found, pos = entry
                begin += 1
        return found

    def _unique_key(self, key: str, start: int) -> tuple[int, int]:
        """(where the key's JSON string starts, where its value starts) when it occurs
        once in the text from ``start`` on, as a key; (-1, -1) otherwise."""
        needle = _quote(key)
        known = self._unique.get((needle, start))
        if known is not None:
            return known
        text = self._text
        at = text.find(needle, start)
        value_at = -1
        if at >= 0 and text.find(needle, at + 1) < 0:
            colon = _skip_space(text, at + len(needle))
            if text.startswith(":", colon):
                value_at = _skip_space(text, colon + 1)
        found = (at, value_at) if value_at >= 0 else (-1, -1)
        self._unique[needle, start] = found
        return found

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
        assert isinstance(blocks, list)
        block = offset >> _BLOCK
        while len(blocks) <= block:
            start = (len(blocks) - 1) << _BLOCK
            blocks.append(blocks[-1] + text.count("\n", start, start + (1 << _BLOCK)))
        return blocks[block] + text.count("\n", block << _BLOCK, offset)


# --- one source -------------------------------------------------------------------------


_HEAD_KEPT = 1 << 20


class _KeptHead:
    """Stdin, keeping its first bytes: stdin cannot be read twice, and the note that
    the input is a Helm template needs them after the reader has failed on them."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.head = bytearray()

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if len(self.head) < _HEAD_KEPT:
            self.head += data[:_HEAD_KEPT - len(self.head)]
        return data


_stdin: _KeptHead | None = None


def stdin_head() -> bytes:
    """The first bytes (up to 1 MiB) read from stdin so far."""
    return bytes(_stdin.head) if _stdin is not None else b""


def _open(path: str) -> IO[bytes]:
    global _stdin
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # started with stdin closed (`<&-`)
            raise OSError(9, "stdin is closed")
        _stdin = _KeptHead(stdin)
        return cast(IO[bytes], _stdin)
    return open(path, "rb")


def _list_items(value: dict[str, Any]) -> list[Any] | None:
    kind = value.get("kind")
    items = value.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        return items
    return None


def read_source(
    path: str, limits: Limits = DEFAULT_LIMITS, *, label: str | None = None,
) -> Iterator[Document | BadInput]:
    """Every object of one file (``-``: stdin), in order, one at a time; ``label`` names
    the file in documents and messages when ``path`` is a copy of it. A file without
    objects (empty, only comments or ``---``) yields nothing, as kubectl and kube-linter
    skip empty documents; the commands note an argument that held no object at all."""
    source = label if label is not None else "<stdin>" if path == "-" else path
    try:
        raw = _open(path)
    except OSError as exc:
        yield BadInput(source, 0, 0, f"cannot read: {exc.strerror or type(exc).__name__}")
        return
    try:
        yield from _read(raw, source, limits)
    except OSError as exc:
        yield BadInput(source, 0, 0, f"cannot read: {exc.strerror or type(exc).__name__}")
    finally:
        if path != "-":
            raw.close()


def _read(raw: IO[bytes], source: str, limits: Limits) -> Iterator[Document | BadInput]:
    try:
        text = _Text(raw, limits.max_bytes)
        first = text.read()
    except _Refused as exc:
        yield BadInput(source, 1, exc.line, exc.reason)
        return
    start = first.lstrip(_WHITESPACE)
    while not start and first:  # whitespace only so far
        more = text.read()
        if not more:
            break
        first += more
        start = first.lstrip(_WHITESPACE)
    if start[:1] in ("{", "["):
        reader = _JsonReader(text, first, limits)
        try:
            yield from _json_documents(reader, source, limits)
            return
        except _NotJson:
            first = reader.buffer  # nothing consumed: the whole text so far is here
    yield from _yaml_documents(_Chained(first, text), source, limits)


class _Chained:
    """Already-read text, then the rest of the stream (the YAML parser's ``read``)."""

    def __init__(self, first: str, rest: _Text) -> None:
        self._first = first
        self._rest = rest

    def read(self, size: int = _CHUNK) -> str:
        if self._first:
            out, self._first = self._first, ""
            return out
        return self._rest.read(size)


def _json_documents(
    reader: _JsonReader, source: str, limits: Limits
) -> Iterator[Document | BadInput]:
    values = reader.values()
    while True:
        try:
            found = next(values)
        except StopIteration:
            return
        except _Refused as exc:  # fatal: the rest of the stream cannot be read
            yield BadInput(source, reader.document, exc.line, exc.reason + _STOPS)
            return
        number = reader.document  # the value (or the List) this one is part of
        if isinstance(found, _Refused):
            yield BadInput(source, number, found.line, found.reason)
            continue
        item, line, value, text = found
        if item is not None:  # an item of a streamed List
            if not isinstance(value, dict):
                yield BadInput(source, number, line,
                               f"items[{item}] is {_json_kind(value)}, not an object")
            elif not reader.shallow and _too_deep(value, limits.max_depth - 2, text):
                yield BadInput(source, number, line, f"items[{item}]: {_deep(limits)}")
            else:
                yield Document(source, number, item, line, value,
                               _JsonLines(text, line, value))
            continue
        if value is None:
            continue
        if not isinstance(value, dict):
            yield BadInput(source, number, line,
                           f"document is {_json_kind(value)}, not an object")
            continue
        if _too_deep(value, limits.max_depth, text):
            yield BadInput(source, number, line, _deep(limits))
            continue
        locate = (
            _spans_locator(text, value) if isinstance(text, dict)
            else _json_locator(text, line, value)
        )
        items = _list_items(value)
        if items is None:
            yield Document(source, number, None, line, value, locate)
            continue
        for index, entry in enumerate(items):
            where = locate(("items", index))
            if not isinstance(entry, dict):
                yield BadInput(source, number, where,
                               f"items[{index}] is {_json_kind(entry)}, not an object")
                continue

            def locate_item(path: Path, at: int = index, outer: Any = locate) -> int:
                return int(outer(("items", at, *path)))

            yield Document(source, number, index, where, entry, locate_item)


def _deep(limits: Limits) -> str:
    return f"nested deeper than {limits.max_depth} levels (raise the limit with --max-depth)"


def _too_deep(value: Any, limit: int, text: str) -> bool:
    if isinstance(text, str) and text.count("{") + text.count("[") <= limit:
        return False  # cannot nest deeper than it has brackets
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack += [(c, depth + 1) for c in children if isinstance(c, (dict, list))]
    return False


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is True or value is False:
        return "a boolean"
    return "a number"


def _yaml_documents(
    text: Any, source: str, limits: Limits
) -> Iterator[Document | BadInput]:
    for found in _YamlReader(text, source, limits).documents():
        if isinstance(found, BadInput):
            yield found
            continue
        number, streamed, line, value, table = found
        if streamed is not None:
            if not isinstance(value, dict):
                yield BadInput(source, number, line,
                               f"items[{streamed}] is {_json_kind(value)}, not an object")
                continue

            def locate_streamed(path: Path, root: Any = value, lines: _LineTable = table) -> int:
                return lines.locate(root, path)

            yield Document(source, number, streamed, line, value, locate_streamed)
            continue
        if value is None:
            continue  # an empty document ("---" at the end), as kubectl skips it
        if not isinstance(value, dict):
            yield BadInput(source, number, line,
                           f"document is {_json_kind(value)}, not an object")
            continue

        def locate(path: Path, root: Any = value, lines: _LineTable = table) -> int:
            return lines.locate(root, path)

        items = _list_items(value)
        if items is None:
            yield Document(source, number, None, line, value, locate)
            continue
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                yield BadInput(source, number, locate(("items", index)),
                               f"items[{index}] is {_json_kind(item)}, not an object")
                continue

            def locate_item(
                path: Path, root: Any = value, lines: _LineTable = table, at: int = index
            ) -> int:
                return lines.locate(root, ("items", at, *path))

            yield Document(source, number, index, locate(("items", index)), item, locate_item)
