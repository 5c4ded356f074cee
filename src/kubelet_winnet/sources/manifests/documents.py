"""What the input layer hands over: a `Document` (one object, with its lines) or a
`BadInput` (what is wrong, with file, document and line), and the words shared by
the readers that make them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kubelet_winnet._printable import cut

__all__ = [
    "STOPS",
    "BadInput",
    "Document",
    "FieldPath",
    "Place",
    "Refused",
    "clip",
    "field_path",
    "list_items",
]

#: A field's path inside a document: keys and list indexes.
FieldPath = tuple[str | int, ...]


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


class Place(NamedTuple):  # one per finding: a NamedTuple is built in a third of the time
    """Where a person edits a field of a rendered object: ``line`` in the document's
    source; ``remark`` says why it is not the field's own line, or which other file set
    the field (``also``: that file and line, a kustomize patch)."""

    line: int
    remark: str = ""
    also: tuple[str, int] | None = None


@dataclass(slots=True)  # not frozen: a frozen dataclass pays a setattr per field
class Document:
    """One object: a document of a file, or an item of a ``List`` document. A rendered
    object's lines count in ``text`` (the renderer's output, kept in a temporary file)
    and ``place`` turns them into lines of ``source``, the file a person edits.
    ``locator`` finds a field's line; ``placer`` (rendered objects only) maps a line of
    ``text`` to the file a person edits. Both are given when the Document is made."""

    source: str
    document: int  # 1-based document number in the file
    item: int | None  # index in the List's items, or None
    line: int  # line where the object starts
    value: dict[str, Any]
    locator: Callable[[FieldPath], int] = field(repr=False, compare=False)
    text: str | None = field(default=None, repr=False, compare=False)
    placer: Callable[[FieldPath, int], Place] | None = field(
        default=None, repr=False, compare=False)
    commented: bool = field(default=True, repr=False, compare=False)  # False: JSON text

    @property
    def label(self) -> str:
        if self.item is None:
            return f"{self.source}#{self.document}"
        return f"{self.source}#{self.document}.items[{self.item}]"

    def line_of(self, path: FieldPath | str) -> int:
        """The line of the field at ``path`` (or of its nearest present parent): a tuple
        of keys and indexes, or the text an error names it by (``InvalidPodError.field``,
        ``spec.containers[0].ports[0].hostPort``)."""
        try:
            return self.locator(field_path(path) if isinstance(path, str) else path) or self.line
        except Exception:  # a locator is best effort: never lose a finding over it
            return self.line

    def place(self, path: FieldPath | str, line: int) -> Place:
        """Where a person edits the field at ``path``, found at ``line`` (of
        `line_of`): the same line unless the object was rendered."""
        if self.placer is None:
            return Place(line)
        try:
            return self.placer(field_path(path) if isinstance(path, str) else path, line)
        except Exception:  # best effort, as line_of: never lose a finding over it
            return Place(line)


def field_path(text: str) -> FieldPath:
    """``spec.containers[1].ports`` -> ``("spec", "containers", 1, "ports")``: a field as
    errors name it, as the locators take it."""
    parts: list[str | int] = []
    for piece in text.split("."):
        name, _, rest = piece.partition("[")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            parts.append(int(index) if index.isdigit() else index)
            rest = rest.removeprefix("[")
    return tuple(parts)


#: Ends every error after which nothing more of the file is read (a parser that cannot
#: recover, a limit): one wording for all of them.
STOPS = "; reading of this file stops here"


class Refused(Exception):
    """Bad input found while reading; ``line`` 0 when unknown. ``fatal``: the rest of the
    stream cannot be read (the message then ends with `STOPS`)."""

    def __init__(self, reason: str, line: int = 0, *, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.fatal = fatal

    def bad_input(self, source: str, document: int) -> BadInput:
        """The `BadInput` a user reads for this refusal."""
        return BadInput(source, document, self.line,
                        self.reason + STOPS if self.fatal else self.reason)


def list_items(value: dict[str, Any]) -> list[Any] | None:
    """The items of a ``List`` (``kind`` ending in ``List``, as kubectl's ``*List``), else
    None."""
    kind = value.get("kind")
    items = value.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        return items
    return None


def clip(text: str, size: int = 40) -> str:
    """``text`` :func:`cut` to ``size`` characters less its quotes, as a JSON string (a cut
    never splits an escape)."""
    return json.dumps(cut(text, size - 2))
