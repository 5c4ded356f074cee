"""One source: every object of a file or of standard input, whichever format it holds
(JSON when its first character opens an object or array and it parses as JSON, else
YAML, as kubectl decides)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from kubelet_winnet.sources.manifests.documents import BadInput, Document, Refused
from kubelet_winnet.sources.manifests.encoding import (
    CHUNK,
    DEFAULT_LIMITS,
    Limits,
    Text,
)
from kubelet_winnet.sources.manifests.json_reader import (
    WHITESPACE,
    JsonReader,
    NotJson,
    json_documents,
)
from kubelet_winnet.sources.manifests.lines import line_after
from kubelet_winnet.sources.manifests.paths import open_source
from kubelet_winnet.sources.manifests.yaml_reader import yaml_documents

__all__ = ["read_source"]


def read_source(
    path: str | IO[bytes], limits: Limits = DEFAULT_LIMITS, *, label: str | None = None,
) -> Iterator[Document | BadInput]:
    """Every object of one file (``-``: stdin), in order, one at a time. ``path`` may
    also be a seekable copy of a source that cannot be read twice (an open binary
    file, read from its start and left open); ``label`` names the file in documents
    and messages when ``path`` is a copy of it. A file without objects (empty, only
    comments or ``---``) yields nothing, as kubectl and kube-linter skip empty
    documents; the commands note an argument that held no object at all."""
    if not isinstance(path, str):
        source = label if label is not None else "<copy>"
        try:
            path.seek(0)
        except OSError as exc:
            yield BadInput(source, 0, 0, f"cannot read: {exc.strerror or type(exc).__name__}")
            return
        yield from _guarded(path, source, limits)
        return
    # str(): a Named path decides how the file is opened, never what a document holds
    source = label if label is not None else "<stdin>" if path == "-" else str(path)
    try:
        raw = open_source(path)
    except OSError as exc:
        yield BadInput(source, 0, 0, f"cannot read: {exc.strerror or type(exc).__name__}")
        return
    try:
        yield from _guarded(raw, source, limits)
    finally:
        if path != "-":
            raw.close()


def _guarded(raw: IO[bytes], source: str, limits: Limits) -> Iterator[Document | BadInput]:
    try:
        yield from _read(raw, source, limits)
    except OSError as exc:
        yield BadInput(source, 0, 0, f"cannot read: {exc.strerror or type(exc).__name__}")


def _read(raw: IO[bytes], source: str, limits: Limits) -> Iterator[Document | BadInput]:
    try:
        text = Text(raw, limits.max_bytes)
        first = text.read()
    except Refused as exc:  # every refusal here stops the file: it says so
        yield line_after(exc, "").bad_input(source, 1)
        return
    start = first.lstrip(WHITESPACE)
    try:
        while not start and first:  # whitespace only so far
            more = text.read()
            if not more:
                break
            first += more
            start = first.lstrip(WHITESPACE)
    except Refused as exc:  # a bad byte after leading whitespace stops the file too
        yield line_after(exc, first).bad_input(source, 1)
        return
    if start[:1] in ("{", "["):
        reader = JsonReader(text, first, limits)
        try:
            yield from json_documents(reader, source, limits)
            return
        except NotJson:
            first = reader.buffer  # nothing consumed: the whole text so far is here
    yield from yaml_documents(_Chained(first, text), source, limits)


class _Chained:
    """Already-read text, then the rest of the stream (the YAML parser's ``read``)."""

    def __init__(self, first: str, rest: Text) -> None:
        self._first = first
        self._rest = rest

    def read(self, size: int = CHUNK) -> str:
        if self._first:
            out, self._first = self._first, ""
            return out
        return self._rest.read(size)
