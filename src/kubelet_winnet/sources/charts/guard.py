"""What a chart or kustomization must be before a renderer runs over it (sources/charts/render.py):
no symbolic link of a chart leaves it, every dependency a chart declares is vendored,
and a kustomization names no remote resource unless the user allowed it, read as kustomize
reads it or refused. Each refusal is one :class:`BadInput` naming the file (and line) to
change; docs/check.md, "Charts and kustomizations"."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

from kubelet_winnet._kubelet.golang import json_fold
from kubelet_winnet.sources.manifests import BadInput, Document, Limits, read_source
from kubelet_winnet.sources.manifests.documents import STOPS, Refused, clip
from kubelet_winnet.sources.manifests.encoding import Text
from kubelet_winnet.sources.manifests.lines import MarkLines
from kubelet_winnet.sources.manifests.paths import open_input

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

    with open_input(path) as raw, tarfile.open(fileobj=raw, mode="r:gz") as archive:
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

# kustomize reads a kustomization with sigs.k8s.io/yaml (go-yaml v2, then JSON) and
# encoding/json into its Kustomization struct (api/types/kustomization.go Unmarshal):
# of a repeated key go-yaml keeps the last, a merge key (<<) overrides the keys before it,
# and a struct's fields match keys without regard to case (json_fold, so "ſ" is an
# "s" and the Kelvin sign a "k"). The guard reads the file with our reader, so it builds
# a kustomization only where the two readings agree: it refuses any key our reader
# refuses or two keys one field takes, and any merge key.

# kustomize's remote forms, of every version that kubectl has shipped: a URL of any
# scheme ("file://", "ssh://", "https:\/\/" too), go-getter's "git::"-style forced
# getters, scp-style "user@host:path" and "host:port/..." (a colon or "@" before the
# first "/"), the hosts kustomize knows ("github.com/org/repo"), Azure's "_git/"
# (api/internal/git/repospec.go) and a "?ref=" query; and the http(s) files its
# loader fetches (api/loader/fileloader.go, IsRemoteFile).
_REMOTE_HOSTS = ("github.com/", "github.com:", "gitlab.com/", "bitbucket.org/")
_FIRST_SEGMENT = re.compile(r"[^/\\]*")
# The struct fields whose entries kustomize loads: bases and components, or files.
_LISTS = ("resources", "bases", "components", "crds", "configurations", "generators",
          "transformers", "validators", "patchesStrategicMerge")
_DIRECTORIES = ("resources", "bases", "components", "generators", "transformers",
                "validators")  # entries that may be kustomizations
_PLUGINS = ("generators", "transformers", "validators")  # entries are plugin configs
# Fields of each struct named by a list of them, and of a builtin plugin's config
# (api/types: GeneratorArgs' KvPairSources, HelmChart, HelmGlobals, ReplacementField;
# the plugins' own configs: PatchTransformer `path`, PatchStrategicMergeTransformer
# `paths`, HelmChartInflationGenerator `chartRepoUrl`), each a file or a URL.
_FILES_OF = {
    "configMapGenerator": ("files", "envs", "env"),
    "secretGenerator": ("files", "envs", "env"),
    "helmCharts": ("repo", "valuesFile", "additionalValuesFiles"),
    "helmChartInflationGenerator": ("chartRepoUrl", "chartHome", "values"),
    "patches": ("path",), "patchesJson6902": ("path",), "replacements": ("path",),
}
_PLUGIN_FILES = ("path", "paths", "files", "envs", "env", "repo", "valuesFile",
                 "additionalValuesFiles", "chartHome", "configHome", "chartRepoUrl",
                 "values")


def _is_remote(entry: str) -> bool:
    text = entry.strip().lower()
    first = _FIRST_SEGMENT.match(text)
    head = first.group() if first is not None else text
    return ("://" in text or "::" in text or ":" in head or "@" in head
            or text.startswith(_REMOTE_HOSTS) or "_git/" in text
            or "?ref=" in text or "?version=" in text)


def _fold(key: str) -> str:
    """``key`` as encoding/json compares it with a struct field's name (``json_fold``),
    in lower case as the field names here are written."""
    return json_fold(key).lower()


def _fields(value: dict[str, Any]) -> dict[str, str]:
    """Each folded key of a struct's mapping and the key as written."""
    return {_fold(key): key for key in value}


def _one_per_field(document: Document, value: dict[str, Any],
                   at: tuple[str | int, ...]) -> BadInput | None:
    """Two keys of ``value`` (at field path ``at``) that one struct field takes."""
    seen: dict[str, str] = {}
    for key in value:
        other = seen.setdefault(_fold(key), key)
        if other != key:
            return BadInput(document.source, 0, document.line_of((*at, key)), (
                f"{_shown((*at, key))} and {other} are one field to kustomize, which "
                "matches keys without regard to case and keeps only one of them, so the "
                "kustomization is not built: write the field once"))
    return None


def _shown(at: tuple[str | int, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                   for part in at).lstrip(".")


def _strings(value: Any) -> list[tuple[tuple[int, ...], Any]]:
    """A field's entries: each of a list with its index, or the value itself."""
    if isinstance(value, list):
        return [((index,), entry) for index, entry in enumerate(value)]
    return [((), value)]


def _loaded(document: Document) -> Iterator[tuple[tuple[str | int, ...], Any] | BadInput]:
    """Each place of a kustomization that names something kustomize loads, with its
    field path (keys as written), or the refusal of two keys that one field takes."""
    value = document.value
    refused = _one_per_field(document, value, ())
    if refused is not None:
        yield refused
        return
    keys = _fields(value)
    for field in _LISTS:
        key = keys.get(field.lower())
        if key is not None and isinstance(value[key], list):
            for index, entry in enumerate(value[key]):
                yield (key, index), entry
    for field, names in _FILES_OF.items():
        key = keys.get(field.lower())
        if key is None or not isinstance(value[key], list):
            continue
        for index, item in enumerate(value[key]):
            if not isinstance(item, dict):
                continue
            refused = _one_per_field(document, item, (key, index))
            if refused is not None:
                yield refused
                return
            inner = _fields(item)
            for name in names:
                found = inner.get(name.lower())
                if found is not None:
                    for more, entry in _strings(item[found]):
                        yield (key, index, found, *more), entry
    key = keys.get("helmglobals")
    if key is not None and isinstance(value[key], dict):
        refused = _one_per_field(document, value[key], (key,))
        if refused is not None:
            yield refused
            return
        inner = _fields(value[key])
        for name in ("chartHome", "configHome"):
            found = inner.get(name.lower())
            if found is not None:
                yield (key, found), value[key][found]
    key = keys.get("openapi")
    if key is not None and isinstance(value[key], dict) and "path" in value[key]:
        yield (key, "path"), value[key]["path"]  # a map: its keys are taken as written


def _plugin_paths(config: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """The files and URLs a builtin plugin's config names (its own fields, and
    ReplacementTransformer's ``replacements[].path``)."""
    keys = _fields(config)
    for name in _PLUGIN_FILES:
        found = keys.get(name.lower())
        if found is not None:
            for more, entry in _strings(config[found]):
                yield (found, *more), entry
    found = keys.get("replacements")
    if found is not None and isinstance(config[found], list):
        for index, item in enumerate(config[found]):
            if isinstance(item, dict):
                path = _fields(item).get("path")
                if path is not None:
                    yield (found, index, path), item[path]


def _not_as_kustomize(reason: str) -> str:
    return (f"{reason.removesuffix(STOPS)}; the check for remote resources reads the file "
            "before kustomize does and cannot read it as kustomize would, so it is not built")


def _read(path: str, limits: Limits, *, config: bool = False) -> list[Document] | BadInput:
    """The objects of a kustomization (its first document, as kustomize reads it) or of
    a plugin's config file, or why the file cannot be read as kustomize reads it."""
    found = list(read_source(path, limits))
    for item in found:
        if isinstance(item, BadInput):
            return BadInput(item.source, 0, item.line, _not_as_kustomize(item.reason))
    documents = [item for item in found if isinstance(item, Document)]
    if not config and documents and (documents[0].document != 1
                                     or documents[0].item is not None):
        return BadInput(path, 0, documents[0].line, _not_as_kustomize(
            "the kustomization is not the file's first document, or is a List"))
    merge = _merge_key(path, limits)
    if merge:
        return BadInput(path, 0, merge, _not_as_kustomize(
            "a merge key (<<), which kustomize applies over the keys before it"))
    return documents if config else documents[:1]


def _merge_key(path: str, limits: Limits) -> int:
    """The line of the first merge key (``<<``) in the YAML file ``path``, or 0."""
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        raw = open_input(path)  # a second read: of a regular file only
    except OSError:
        return 0  # our reader read it a moment ago; it says what changed
    with raw:
        try:  # whole (within --max-bytes), to count its lines as editors do
            text = "".join(iter(Text(raw, limits.max_bytes).read, ""))
        except (Refused, OSError):
            return 0  # our reader read it a moment ago; it says what changed
        lines = MarkLines(text, skip_bom=loader_class is not yaml.SafeLoader)
        loader = loader_class(text)
        try:
            expecting_key: list[bool | None] = []  # per open mapping; None: a sequence
            while True:
                event = loader.get_event()
                if isinstance(event, yaml.StreamEndEvent):
                    return 0
                if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    expecting_key.pop()
                    continue
                if not isinstance(event, yaml.NodeEvent):
                    continue
                if expecting_key and expecting_key[-1] is not None:
                    if expecting_key[-1] and isinstance(event, yaml.ScalarEvent) and (
                        event.tag in ("!!merge", _MERGE_TAG)
                        or (event.tag is None and event.implicit[0] and event.value == "<<")
                    ):
                        return lines.line(event.start_mark) if event.start_mark else 1
                    expecting_key[-1] = not expecting_key[-1]
                if isinstance(event, yaml.MappingStartEvent):
                    expecting_key.append(True)
                elif isinstance(event, yaml.SequenceStartEvent):
                    expecting_key.append(None)
        except (yaml.YAMLError, Refused):  # JSON our reader took: it has no merge key
            return 0
        finally:
            with contextlib.suppress(Exception):
                loader.dispose()


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _remote_refusal(document: Document, at: tuple[str | int, ...], entry: str,
                    line: int = 0) -> BadInput:
    return BadInput(document.source, 0, line or document.line_of(at), (
        f"{_shown(at)}: {clip(entry, 120)} is a remote resource, which the build "
        "would fetch over the network; remote resources are refused unless "
        "--allow-remote or allowRemote: true in the settings allows them"))


def _remote(at: tuple[str | int, ...], entry: str) -> bool:
    """Whether the file or base ``entry`` at field path ``at`` is fetched: a
    generator's ``files`` entry is ``key=path`` or ``path``; a Helm chart's repository
    is remote whatever its form (Helm fetches from it)."""
    named = [part for part in at if isinstance(part, str)]
    field = _fold(named[-1])
    if field in ("repo", "chartrepourl"):
        return bool(entry.strip())
    if field == "files":
        entry = entry.partition("=")[2] or entry
    return _is_remote(entry)


def _inline_configs(entry: str, limits: Limits) -> list[Document] | BadInput | None:
    """The plugin configs written inline in a generators/transformers/validators entry
    (kustomize takes an entry that parses as objects for them), or None: a path."""
    import io

    copy = io.BytesIO(entry.encode("utf-8"))
    found = list(read_source(copy, limits, label="inline"))
    documents = [item for item in found if isinstance(item, Document)]
    if "\n" not in entry and not documents:
        return None
    for item in found:
        if isinstance(item, BadInput):
            return item
    return documents


def _in_configs(configs: list[Document], inline: tuple[Document, tuple[str | int, ...]] | None,
                ) -> BadInput | None:
    """The first remote file or URL that builtin plugins' configs name: written inline
    at ``inline`` (the kustomization and the field path), or each in its own file."""
    for config in configs:
        for field, named in _plugin_paths(config.value):
            if isinstance(named, str) and _remote(field, named):
                if inline is None:
                    return _remote_refusal(config, field, named)
                document, at = inline
                return _remote_refusal(document, (*at, *field), named, document.line_of(at))
    return None


def _remote_resource(kustomization: str, limits: Limits) -> BadInput | None:
    """The first remote resource named by ``kustomization`` or by a local base,
    component, generator or transformer it builds on (kustomize fetches those too), or
    why one of those files cannot be read as kustomize reads it, or None."""
    pending: list[tuple[str, bool]] = [(kustomization, False)]  # (file, lists configs)
    seen: set[str] = set()
    while pending and len(seen) < _MAX_KUSTOMIZATIONS:
        path, configs = pending.pop(0)
        if os.path.realpath(path) in seen or not os.path.isfile(path):
            continue
        seen.add(os.path.realpath(path))
        read = _read(path, limits)
        if isinstance(read, BadInput):
            return read
        for document in read:
            found = _named(document, configs, limits)
            if isinstance(found, BadInput):
                return found
            pending += found
    if pending:
        return BadInput(kustomization, 0, 0, (
            f"the build reaches more than {_MAX_KUSTOMIZATIONS} kustomizations, too many to "
            "make sure none names a remote resource; give --allow-remote to build it"))
    return None


def _named(document: Document, configs: bool,
           limits: Limits) -> BadInput | list[tuple[str, bool]]:
    """The first remote resource ``document`` (a kustomization) names, or the
    kustomizations it builds on, each with whether its resources are plugin configs
    (it was named by generators, transformers or validators)."""
    directory = os.path.dirname(document.source)
    bases: list[tuple[str, bool]] = []
    for found in _loaded(document):
        if isinstance(found, BadInput):
            return found
        at, entry = found
        if not isinstance(entry, str):
            continue  # kustomize refuses a number or an object there itself
        field = _fold(str(at[0]))
        plugins = field in _PLUGINS
        if plugins or (configs and field in ("resources", "bases")):
            inline = _inline_configs(entry, limits)
            if isinstance(inline, BadInput):
                return BadInput(document.source, 0, document.line_of(at), _not_as_kustomize(
                    f"{_shown(at)} is an inline plugin config that {inline.reason}"))
            if inline is not None:
                refused = _in_configs(inline, (document, at))
                if refused is not None:
                    return refused
                continue
            path = os.path.normpath(os.path.join(directory, entry))
            # Only a file kustomize would load: its loader refuses one that a path or
            # link puts outside the kustomization's directory (LoadRestrictionsRootOnly),
            # and so the guard never reads it into a message.
            if (os.path.isfile(path) and not _is_remote(entry)
                    and _inside(os.path.realpath(path), os.path.realpath(directory))):
                read = _read(path, limits, config=True)
                if isinstance(read, BadInput):
                    return read
                refused = _in_configs(read, None)
                if refused is not None:
                    return refused
        if field == "patchesstrategicmerge" and "\n" in entry:
            continue  # an inline patch, which names nothing to load
        if _remote(at, entry):
            return _remote_refusal(document, at, entry)
        base = os.path.normpath(os.path.join(directory, entry))
        if field in _DIRECTORIES and os.path.isdir(base):
            bases += [(os.path.join(base, name), configs or plugins)
                      for name in KUSTOMIZATION_NAMES
                      if os.path.isfile(os.path.join(base, name))][:1]
    return bases
