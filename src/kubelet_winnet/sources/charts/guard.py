"""What a chart or kustomization must be before a renderer runs over it (sources/charts/render.py):
no symbolic link of a chart leaves it, every dependency a chart declares is vendored,
and a kustomization names no remote resource unless the user allowed it. Each refusal is
one :class:`BadInput` naming the file (and line) to change; docs/check.md, "Charts and
kustomizations"."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from kubelet_winnet.sources.manifests import BadInput, Document, Limits, read_source
from kubelet_winnet.sources.manifests.documents import clip

__all__ = ["CHART_FILE", "KUSTOMIZATION_NAMES", "refusal"]

CHART_FILE = "Chart.yaml"
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# How far the search for remote resources follows local bases: kustomize's own
# nesting is rarely past 5; these only bound hostile input.
_MAX_KUSTOMIZATIONS = 200
_MAX_ARCHIVE_MEMBERS = 10_000
_MAX_ARCHIVED_CHART_FILE = 1 << 20


def refusal(kind: str, directory: str, manifest: str, limits: Limits, *,
            allow_remote: bool = False) -> BadInput | None:
    """Why the chart (``kind`` ``helm``) or kustomization in ``directory`` must not be
    rendered, or None."""
    if kind == "helm":
        return _leaving_link(directory) or _missing_dependency(directory, limits)
    if allow_remote:
        return None
    return _remote_resource(os.path.join(directory, manifest), limits)


# --- charts ------------------------------------------------------------------------------


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _leaving_link(chart: str) -> BadInput | None:
    """The first symbolic link in ``chart`` that resolves outside it. Helm reads what a
    link points to as a file of the chart ("found symbolic link in path"), so
    ``files/env -> /proc/self/environ`` put the environment into the render."""
    root = os.path.realpath(chart)
    for directory, dirs, files in os.walk(chart):  # a linked directory is listed, not entered
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = os.path.join(directory, name)
            if os.path.islink(path) and not _inside(os.path.realpath(path), root):
                try:
                    target = os.readlink(path)
                except OSError:
                    target = "a file it cannot reach"
                return BadInput(os.path.normpath(path), 0, 0, (
                    f"a symbolic link to {target}, outside the chart {chart}; Helm would "
                    "read that file into the render, so the chart is not rendered (put a "
                    "copy of the file inside the chart)"))
    return None


def _documents(path: str, limits: Limits) -> list[Document]:
    """The objects of ``path``, none when it is missing or cannot be read (the renderer
    then says what is wrong with it, in its own words)."""
    if not os.path.isfile(path):
        return []
    found = list(read_source(path, limits))
    if any(isinstance(item, BadInput) for item in found):
        return []
    return [item for item in found if isinstance(item, Document)]


def _declared(chart: str, limits: Limits) -> Iterator[tuple[str, Document, int]]:
    """Each dependency ``chart`` declares: its name, the document, its index. Helm 3
    reads ``dependencies`` of ``Chart.yaml``; an apiVersion v1 chart's
    ``requirements.yaml`` (Helm 2's file, which Helm 3 still reads)."""
    for manifest in (CHART_FILE, "requirements.yaml"):
        for document in _documents(os.path.join(chart, manifest), limits)[:1]:
            dependencies = document.value.get("dependencies")
            if not isinstance(dependencies, list):
                continue
            for index, dependency in enumerate(dependencies):
                name = dependency.get("name") if isinstance(dependency, dict) else None
                if isinstance(name, str) and name:
                    yield name, document, index


def _vendored(chart: str, limits: Limits) -> dict[str, str] | None:
    """The charts under ``chart/charts``, by the name their ``Chart.yaml`` gives (as
    Helm matches a dependency, not by file name), each with its directory ("" for an
    archive); None when an archive cannot be read (the renderer then says why)."""
    import tarfile

    below = os.path.join(chart, "charts")
    names: dict[str, str] = {}
    try:
        entries = sorted(os.listdir(below))
    except OSError:
        return names
    for entry in entries:
        path = os.path.join(below, entry)
        if os.path.isdir(path):
            for document in _documents(os.path.join(path, CHART_FILE), limits)[:1]:
                name = document.value.get("name")
                if isinstance(name, str):
                    names[name] = path
        elif entry.endswith((".tgz", ".tar.gz")):
            try:
                name = _archived_name(path, limits)
            except (OSError, tarfile.TarError, EOFError):
                return None
            if name is None:
                return None
            names[name] = ""
    return names


def _archived_name(path: str, limits: Limits) -> str | None:
    """The ``name`` in ``NAME/Chart.yaml`` of a packaged chart (``helm package``)."""
    import io
    import tarfile

    with tarfile.open(path, "r:gz") as archive:
        for count, member in enumerate(archive):
            if count == _MAX_ARCHIVE_MEMBERS:
                return None
            parts = member.name.split("/")
            if len(parts) == 2 and parts[1] == CHART_FILE and member.isfile():
                if member.size > _MAX_ARCHIVED_CHART_FILE:
                    return None
                stream = archive.extractfile(member)
                if stream is None:
                    return None
                copy = io.BytesIO(stream.read())
                found = next(iter(read_source(copy, limits, label=member.name)), None)
                name = found.value.get("name") if isinstance(found, Document) else None
                return name if isinstance(name, str) else None
    return None


def _missing_dependency(chart: str, limits: Limits) -> BadInput | None:
    """A dependency ``chart`` (or a chart vendored in it) declares that its ``charts/``
    does not hold. ``helm template`` refuses such a chart ("found in Chart.yaml, but
    missing in charts/ directory", helm's pkg/action/install.go CheckDependencies, by
    the subchart's name); an engine that renders without it would leave the
    subchart's objects unchecked."""
    vendored = _vendored(chart, limits)
    if vendored is None:
        return None
    missing = [(name, document, index) for name, document, index in _declared(chart, limits)
               if name not in vendored]
    if missing:
        _, document, index = missing[0]
        names = [name for name, _, _ in missing]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return BadInput(document.source, 0, document.line_of(("dependencies", index)), (
            f"the chart depends on {listed}, which {'is' if len(names) == 1 else 'are'} not "
            f"in {os.path.join(chart, 'charts')}; helm template refuses such a chart "
            "(\"missing in charts/ directory\"), so it is not rendered: run helm dependency "
            f"build {chart} to vendor {'it' if len(names) == 1 else 'them'}"))
    for sub in sorted(path for path in vendored.values() if path):
        found = _missing_dependency(sub, limits)
        if found is not None:
            return found
    return None


# --- kustomizations -----------------------------------------------------------------------

# kustomize's remote forms: what its git URL parser takes for a host
# (api/internal/git/repospec.go parseHostSpec, and "_git/" in parseGitUrl) and the
# http(s) files its loader fetches (api/loader fileloader.go IsRemoteFile).
_REMOTE_PREFIXES = ("git::", "gh:", "git@", "github.com:", "github.com/")
# The fields whose entries kustomize loads: bases and components, or files.
_LISTS = ("resources", "bases", "components", "crds", "configurations", "generators",
          "transformers", "validators", "patchesStrategicMerge")
_PATHS = ("patches", "patchesJson6902", "replacements")  # entries with a `path`
_GENERATORS = ("configMapGenerator", "secretGenerator")  # `files`, `envs`, `env`


def _is_remote(entry: str) -> bool:
    lowered = entry.lower()
    return "://" in entry or lowered.startswith(_REMOTE_PREFIXES) or "_git/" in entry


def _loaded(value: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each place of a kustomization that names something kustomize loads, with its
    field path."""
    for key in _LISTS:
        entries = value.get(key)
        if isinstance(entries, list):
            for index, entry in enumerate(entries):
                if isinstance(entry, str):
                    yield (key, index), entry
    for key in _PATHS:
        entries = value.get(key)
        if isinstance(entries, list):
            for index, entry in enumerate(entries):
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    yield (key, index, "path"), entry["path"]
    openapi = value.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield ("openapi", "path"), openapi["path"]
    for key in _GENERATORS:
        generators = value.get(key)
        for index, generator in enumerate(generators if isinstance(generators, list) else []):
            if not isinstance(generator, dict):
                continue
            for field in ("files", "envs"):
                listed = generator.get(field)
                for number, entry in enumerate(listed if isinstance(listed, list) else []):
                    if isinstance(entry, str):  # `key=path` or `path`
                        yield (key, index, field, number), entry.partition("=")[2] or entry
            if isinstance(generator.get("env"), str):
                yield (key, index, "env"), generator["env"]


def _remote_resource(kustomization: str, limits: Limits) -> BadInput | None:
    """The first remote resource named by ``kustomization`` or by a local base or
    component it builds on (kustomize fetches those too), or None."""
    pending = [kustomization]
    seen: set[str] = set()
    while pending and len(seen) < _MAX_KUSTOMIZATIONS:
        path = pending.pop(0)
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        for document in _documents(path, limits)[:1]:
            directory = os.path.dirname(path)
            for at, entry in _loaded(document.value):
                if _is_remote(entry):
                    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                                    for part in at).lstrip(".")
                    return BadInput(document.source, 0, document.line_of(at), (
                        f"{field}: {clip(entry, 120)} is a remote resource, which the build "
                        "would fetch over the network; remote resources are refused unless "
                        "--allow-remote or allowRemote: true in the settings allows them"))
                base = os.path.normpath(os.path.join(directory, entry))
                if at[0] in ("resources", "bases", "components") and os.path.isdir(base):
                    pending += [os.path.join(base, name) for name in KUSTOMIZATION_NAMES
                                if os.path.isfile(os.path.join(base, name))][:1]
    if pending:
        return BadInput(kustomization, 0, 0, (
            f"the build reaches more than {_MAX_KUSTOMIZATIONS} kustomizations, too many to "
            "make sure none names a remote resource; give --allow-remote to build it"))
    return None
