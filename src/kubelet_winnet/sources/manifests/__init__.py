"""Manifests from files, directories and stdin, read the way kubectl reads them.

One document at a time: YAML streams are composed event by event (libyaml's parser, our
own constructor), JSON values are decoded one by one and a ``List``'s ``items`` one item
at a time, so memory follows the largest document, not the file. Every value is a JSON
value (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``): YAML timestamps
stay strings and language tags are refused, as ``sigs.k8s.io/yaml`` (YAML -> JSON) does.

Everything wrong with the input becomes a :class:`BadInput` naming the file, the document
and the line; the reader then carries on with the next document where the format allows.

The modules, along the reader's seams: :mod:`.paths` (arguments to files, stdin),
:mod:`.encoding` (bytes to text, the limits), :mod:`.yaml_reader`, :mod:`.json_reader`,
:mod:`.lines` (a field's line), :mod:`.documents` (what is handed over),
:mod:`.source` (one file, either format). The files of a command's arguments, charts
rendered, are :mod:`kubelet_winnet.sources.manifest_files`.
"""

from __future__ import annotations

from kubelet_winnet._describe import describe_path
from kubelet_winnet.sources.manifests.documents import BadInput, Document, Place
from kubelet_winnet.sources.manifests.encoding import DEFAULT_LIMITS, MAX_INT_DIGITS, Limits
from kubelet_winnet.sources.manifests.paths import (
    SETTINGS_FILE,
    Named,
    Skipped,
    expand_paths,
    head_of,
    open_input,
    replayable,
    stdin_head,
)
from kubelet_winnet.sources.manifests.source import read_source

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_INT_DIGITS",
    "SETTINGS_FILE",
    "BadInput",
    "Document",
    "Limits",
    "Named",
    "Place",
    "Skipped",
    "describe_path",
    "expand_paths",
    "head_of",
    "open_input",
    "read_source",
    "replayable",
    "stdin_head",
]
