"""The YAML comments of a file holding a marker (``# kubelet-winnet:ignore``): where a
``#`` starts a real comment as libyaml reads the file, and where more than one object
starts on a line. The linter's ignore comments are read through this; what they mean
is the linter's (:mod:`kubelet_winnet._lint.ignores`) and the CLI's to report."""

from __future__ import annotations

import bisect
import codecs
from collections import Counter
from collections.abc import Mapping
from typing import Any

import yaml

from kubelet_winnet.sources.manifests.lines import TextLines
from kubelet_winnet.sources.manifests.paths import head_of, replayable

__all__ = ["comment_lines", "marked_text"]


def comment_lines(text: str, lines: TextLines,
                   marks: Mapping[int, int]) -> tuple[set[int], set[int]]:
    """The lines of ``marks`` (line: the offset of a ``#`` on it) where that ``#`` starts
    a YAML comment: outside every scalar of the file, as libyaml reads it; and the lines
    where more than one object starts (a document, or an item of a List), whose comment
    belongs to none of them. A JSON file has no comment (a ``#`` in it is inside a
    string), and after a YAML error nothing is one: the input layer said what is wrong
    there. Places are the parser's character offsets, lines editors' (``lines``)."""
    offsets = sorted(marks.values())
    inside: set[int] = set()
    starts: Counter[int] = Counter()  # line: objects starting on it
    end = 1 << 62
    # Open collections: [is a mapping, expects a key, its last key] (a List's items).
    stack: list[list[Any]] = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    # libyaml's C reader leaves a leading BOM out of its offsets
    skew = int(text.startswith("\ufeff") and loader is not yaml.SafeLoader)
    try:
        for event in yaml.parse(text, Loader=loader):
            start, stop = event.start_mark, event.end_mark
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                continue
            if not isinstance(event, yaml.NodeEvent) or start is None or stop is None:
                continue
            parent = stack[-1] if stack else None
            if parent is not None and parent[0]:
                if parent[1] and isinstance(event, yaml.ScalarEvent):
                    parent[2] = event.value
                parent[1] = not parent[1]
            if isinstance(event, yaml.MappingStartEvent) and (not stack or (
                    len(stack) == 2 and stack[0][2] == "items" and not stack[1][0])):
                starts[lines.line(start.index + skew)] += 1
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([isinstance(event, yaml.MappingStartEvent), True, None])
            elif isinstance(event, yaml.ScalarEvent):
                at = bisect.bisect_left(offsets, start.index + skew)
                while at < len(offsets) and offsets[at] < stop.index + skew:
                    inside.add(offsets[at])
                    at += 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        end = mark.index + skew if mark is not None else 0
    real = {line for line, offset in marks.items() if offset not in inside and offset < end}
    return real, {line for line, count in starts.items() if count > 1}


def marked_text(source: str, marker: str, max_bytes: int) -> str | None:
    """The text of ``source`` as the input layer decodes it (UTF-8, or UTF-16 by its byte
    order mark; stdin: the part of it kept, :func:`head_of`) when it holds ``marker``,
    else None. A UTF-8 file is searched in 1 MiB chunks first: most hold no marker."""
    if source != "<stdin>" and not replayable(source):
        return None  # a FIFO or device named as an argument: read once, by the input layer
    if source != "<stdin>":
        needle = marker.encode()
        try:
            with open(source, "rb") as raw:
                head = raw.read(4)
                wide = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
                carry, read, seen = head, len(head), False
                while not wide and not seen and read < max_bytes:
                    chunk = raw.read(min(1 << 20, max_bytes - read))
                    if not chunk:
                        break
                    read += len(chunk)
                    seen = needle in carry + chunk
                    carry = chunk[-len(needle):]
                if not wide and not (seen or needle in head):
                    return None
        except OSError:
            return None
    data = head_of(source, max_bytes)
    if data is None:
        return None
    for bom, name in ((codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
                      (codecs.BOM_UTF8, "utf-8-sig")):
        if data.startswith(bom):
            text = data.decode(name, "replace")
            break
    else:
        text = data.decode("utf-8", "replace")
    return text if marker in text else None
