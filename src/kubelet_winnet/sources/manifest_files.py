"""The manifests a command is given, file by file: paths expanded as kubectl expands them
(directories searched, ``-`` for stdin), charts and kustomizations rendered in place of
their files, and each file's documents read one at a time with their file and line.

`read_manifests` is the whole of it for a Python caller; the commands walk
`manifest_files`, which says where each file starts, to count the files they read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, NamedTuple

from kubelet_winnet.sources.manifests import (
    DEFAULT_LIMITS,
    BadInput,
    Document,
    Limits,
    Skipped,
    expand_paths,
    read_source,
)

if TYPE_CHECKING:
    from kubelet_winnet.sources.charts.origins import Origins
    from kubelet_winnet.sources.charts.render import Renderer, RenderOptions

__all__ = ["ManifestFile", "manifest_files", "read_manifests"]


class ManifestFile(NamedTuple):
    """One file of the input (``-`` for stdin, or a rendered template's name) and its
    documents, read as they are asked for."""

    path: str
    documents: Iterator[Document | BadInput]


def manifest_files(
    paths: Iterable[str], limits: Limits = DEFAULT_LIMITS, *,
    renderer: Renderer | None = None,
    origins_of: Callable[[Renderer], Origins | None] | None = None,
    copies: Mapping[str, str | IO[bytes]] | None = None,
) -> Iterator[ManifestFile | BadInput | Skipped]:
    """Each file of ``paths`` in order, or what kept an argument from being read (a
    `BadInput`, a `Skipped` file of a directory). With a ``renderer``,
    every chart and kustomization is rendered first (the files a kustomization lists
    are then known before any of them would be read as it is), and what ``origins_of``
    makes of the renders places a rendered document's lines in the file a person edits.
    ``copies`` reads some arguments (stdin) from a copy, under their own name."""
    entries = list(renderer.expand(list(paths)) if renderer is not None
                   else expand_paths(list(paths)))
    origins = None
    if renderer is not None and origins_of is not None:
        origins = origins_of(renderer)
    for entry in entries:
        if not isinstance(entry, str):
            yield entry
            continue
        if origins is not None and origins.hides(entry):
            continue  # a file of a rendered kustomization: read through its build only
        copy = copies.get(entry) if copies is not None else None
        adapt: Callable[[Document], Document] | None = None
        if copy is None and renderer is not None:
            copy = renderer.copies.get(entry)
            adapt = origins.adapter(entry) if origins is not None else None
        label = None if copy is None else "<stdin>" if entry == "-" else entry
        documents = read_source(copy or entry, limits, label=label)
        if adapt is not None:
            documents = _adapted(documents, adapt)
        yield ManifestFile(str(entry), documents)


def _adapted(documents: Iterator[Document | BadInput],
             adapt: Callable[[Document], Document]) -> Iterator[Document | BadInput]:
    for found in documents:
        yield adapt(found) if isinstance(found, Document) else found


def read_manifests(
    paths: Iterable[str], *, limits: Limits = DEFAULT_LIMITS,
    render: RenderOptions | None = None,
) -> Iterator[Document | BadInput | Skipped]:
    """Every object of ``paths`` (files, directories, ``-`` for stdin), in order, one at
    a time, as ``check`` reads them: each `Document` with its file and line, each
    problem a `BadInput` naming file, document and line, within ``limits``.
    With ``render`` (`RenderOptions`),
    Helm charts and kustomizations are rendered by their own tools first; without it
    they are read as the files they are."""
    from kubelet_winnet._describe import type_name
    from kubelet_winnet.errors import InvalidArgumentError

    if isinstance(paths, (str, bytes)):
        raise InvalidArgumentError("paths", "a list of path strings", type_name(paths))
    paths = list(paths)
    for index, path in enumerate(paths):
        if not isinstance(path, str):
            raise InvalidArgumentError(f"paths[{index}]", "a path string", type_name(path))
    renderer = None
    if render is not None and render.enabled:
        from kubelet_winnet.sources.charts.render import Renderer

        renderer = Renderer(render, limits)
    for item in manifest_files(paths, limits, renderer=renderer, origins_of=_origins):
        if isinstance(item, ManifestFile):
            yield from item.documents
        else:
            yield item


def _origins(renderer: Renderer) -> Origins | None:
    if not renderer.roots:
        return None  # nothing rendered: the module is not loaded
    from kubelet_winnet.sources.charts.origins import Origins

    return Origins(renderer.roots, renderer.copies, renderer.limits)
