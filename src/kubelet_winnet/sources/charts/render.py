"""Helm charts and kustomizations, rendered with the real tools before they are read.

A directory holding ``Chart.yaml`` is rendered with ``helm template`` (or, without ``helm``
on PATH, with the Helm engine that the ``helm-python-sdk`` package ships); a directory
holding a kustomization with ``kustomize build`` (or ``kubectl kustomize``), as checkov
does. Any file inside a chart stands for it: the pre-commit hook's
``chart/templates/ds.yaml`` renders ``chart/``, once per run. A kustomization file
stands for its build, and the other files beside it are still read as they are: they are
manifests, and one that no kustomization lists must not go unchecked.

Before a renderer runs, :mod:`.render_guard` refuses what must not be rendered (a link
leaving a chart, a dependency not vendored, a remote resource not allowed). Each renderer
is a child process (:mod:`.render_process`) in a session of its own, with a minimal
environment and a timeout that kills its whole process group; its output is bounded by
``--max-bytes`` and kept in a temporary file, which the input layer then reads under a
name a person knows: Helm's ``# Source:`` comments split the stream per template, so a
finding names ``chart/templates/ds.yaml``; a kustomization's build is read under its
kustomization file. sources/charts/origins.py then
places each object's lines in the file a person edits (the
template's lines, a kustomization's resource files; docs/check.md, "Charts and
kustomizations").
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from kubelet_winnet.sources.charts.guard import CHART_FILE, KUSTOMIZATION_NAMES, refusal
from kubelet_winnet.sources.manifests import BadInput, Limits, Skipped, expand_paths, paths
from kubelet_winnet.sources.manifests.documents import clip

__all__ = [
    "DEFAULT_TIMEOUT",
    "KUSTOMIZATION_NAMES",
    "RenderOptions",
    "Renderer",
    "render_root",
]

DEFAULT_TIMEOUT = 60.0
# Helm's default release name for `helm template CHART` (cmd/helm/template.go).
RELEASE_NAME = "release-name"
_SOURCE = "# Source: "
# The most one render may produce (150,000 "# Source:" headers made 150,000 files in
# 27 s); a large chart (kube-prometheus-stack) renders about 400 templates.
MAX_DOCUMENTS = 20_000
MAX_TEMPLATES = 2_000


class Root(NamedTuple):
    """A directory rendered as a whole: ``kind`` is ``helm`` or ``kustomize``; ``path`` as
    the user would write it (relative when the argument was); ``manifest`` the file that
    makes it one (``Chart.yaml``, ``kustomization.yaml``)."""

    kind: str
    path: str
    manifest: str


class RenderOptions(NamedTuple):
    """What the command line says about rendering (``add_input_arguments``)."""

    enabled: bool = True
    helm_values: tuple[str, ...] = ()
    helm_set: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    allow_remote: bool = False  # kustomize may fetch remote resources (--allow-remote)


def render_root(
    path: str, cache: dict[str, str | None] | None = None, *, is_dir: bool | None = None,
    passed_over: dict[str, int] | None = None,
) -> Root | None:
    """What ``path`` is rendered as: the chart it is or lies in (the nearest
    ``Chart.yaml`` above, within the repository, on its file system and owned by the
    user; a subchart, ``X/charts/sub``, renders through the chart above it, with that
    chart's values), else, for a kustomization file or a directory holding one, that
    kustomization. Other files of a kustomization's directory are read as they are (a
    file no kustomization lists must not go unchecked). ``passed_over`` collects the
    ``Chart.yaml`` files of other users that stopped the search, with the owner."""
    absolute = os.path.abspath(path)
    directory = os.path.isdir(absolute) if is_dir is None else is_dir
    chart = _chart_dir(absolute if directory else os.path.dirname(absolute),
                       {} if cache is None else cache,
                       {} if passed_over is None else passed_over)
    if chart is not None:
        return Root("helm", _as_given(chart, path), CHART_FILE)
    if directory:
        name = next((n for n in KUSTOMIZATION_NAMES
                     if os.path.isfile(os.path.join(absolute, n))), None)
        if name is not None:
            return Root("kustomize", _as_given(absolute, path), name)
    elif os.path.basename(absolute) in KUSTOMIZATION_NAMES:
        return Root("kustomize", _as_given(os.path.dirname(absolute), path),
                    os.path.basename(absolute))
    return None


def _chart_dir(
    start: str, cache: dict[str, str | None], passed_over: dict[str, int],
) -> str | None:
    """The absolute directory of the chart that ``start`` (absolute) is or lies in,
    searched as the settings file is (:func:`upward`): a ``Chart.yaml`` planted in a
    shared parent (``/tmp``) must not capture the files below it. A ``Chart.yaml`` that
    another user owns, or that lies in or above a directory another user owns, ends the
    search: no chart."""
    seen: list[str] = []
    found: str | None = None
    me = paths.current_user()
    for directory in paths.upward(start):
        if directory in cache:
            found = cache[directory]
            break
        seen.append(directory)
        chart_file = os.path.join(directory, CHART_FILE)
        is_chart = os.path.isfile(chart_file)
        owner = _foreign(directory, me)
        if owner is None and is_chart:
            owner = _foreign(chart_file, me)
        if owner is not None:
            if is_chart:
                passed_over[chart_file] = owner
            break
        if is_chart:
            found = directory
            while os.path.basename(os.path.dirname(found)) == "charts":
                above = os.path.dirname(os.path.dirname(found))
                if not (os.path.isfile(os.path.join(above, CHART_FILE))
                        and above in itertools.islice(paths.upward(found), 3)
                        and _foreign(above, me) is None
                        and _foreign(os.path.join(above, CHART_FILE), me) is None):
                    break
                found = above
            break
    for directory in seen:
        cache[directory] = found
    return found


def _foreign(path: str, me: int | None) -> int | None:
    """The other user who owns ``path`` (its link, or what it points to), else None."""
    if me is None:
        return None
    try:
        return next((uid for uid in (os.lstat(path).st_uid, os.stat(path).st_uid)
                     if uid != me), None)
    except OSError:
        return None


def _as_given(directory: str, path: str) -> str:
    """``directory`` (absolute) as the user wrote ``path``: relative when it was."""
    return directory if os.path.isabs(path) else os.path.relpath(directory)


def _under(directory: str, *parts: str) -> str:
    """``directory/parts``, without a leading ``./``."""
    return os.path.normpath(os.path.join(directory, *parts))


class RenderError(Exception):
    """A renderer that is missing, failed, ran too long or wrote too much, or a chart or
    kustomization that is refused before it runs: one line, naming ``source`` (else the
    chart's ``Chart.yaml`` or the kustomization file) and ``line`` where there is one."""

    def __init__(self, reason: str, source: str | None = None, line: int = 0) -> None:
        super().__init__(reason)
        self.source = source
        self.line = line

    def bad_input(self, manifest: str) -> BadInput:
        return BadInput(self.source or manifest, 0, self.line, str(self))


@dataclass
class Renderer:
    """One run's renders: :meth:`expand` turns the command line's paths into the files to
    read, and :attr:`copies` maps a rendered name to the temporary file holding it. A
    second :meth:`expand` (``run`` reads its input twice) gives the same renders again
    without running the renderers again; the files go when the renderer does."""

    options: RenderOptions
    limits: Limits
    copies: dict[str, str] = field(default_factory=dict)
    rendered: set[str] = field(default_factory=set)  # names that came from a renderer
    roots: dict[str, Root] = field(default_factory=dict)  # each name's chart or kustomization
    _results: dict[str, list[str | BadInput]] = field(default_factory=dict)
    _cache: dict[str, str | None] = field(default_factory=dict)
    _as_is: set[str] = field(default_factory=set)  # files read from disk, as themselves
    _passed_over: dict[str, int] = field(default_factory=dict)  # other users' Chart.yaml
    _noted: set[str] = field(default_factory=set)
    _tmp: str | None = None
    _remove: Callable[[], Any] | None = None  # the finalizer that removes _tmp
    note: Callable[[str], None] | None = None  # told of each render (``-v``)

    def expand(
        self, arguments: Sequence[str],
    ) -> Iterator[str | BadInput | Skipped]:
        """:func:`expand_paths`, with each chart or kustomization rendered in place of
        its files (at the first of them), once however many of its files are named; a
        render that fails is one ``BadInput``."""
        done: set[str] = set()
        for argument in arguments:
            if argument != "-" and os.path.isdir(argument):
                root = render_root(argument, self._cache, is_dir=True,
                                   passed_over=self._passed_over)
                yield from self._passed_over_notes()
                if root is not None and root.kind == "helm":
                    yield from self._render(root, done)
                    continue
            for entry in expand_paths([argument]):
                if isinstance(entry, str) and entry != "-":
                    root = render_root(entry, self._cache, is_dir=False,
                                       passed_over=self._passed_over)
                    yield from self._passed_over_notes()
                    if root is not None:
                        yield from self._render(root, done)
                        continue
                    if entry in self.copies:  # never read from a render's copy
                        yield BadInput(entry, 0, 0, "a render named a template so, and a "
                                       "rendered copy never stands for a file read as it "
                                       "is; rename the file or the template")
                        continue
                    self._as_is.add(entry)
                yield entry

    def _passed_over_notes(self) -> Iterator[Skipped]:
        """A note, once, for each chart of another user that a search stopped at."""
        for chart_file in sorted(set(self._passed_over) - self._noted):
            self._noted.add(chart_file)
            owner = paths.owner_name(self._passed_over[chart_file])
            yield Skipped(chart_file, (
                f"not rendered: it belongs to {owner}, not to you, so the files below it "
                "are read as they are (another user could have planted it); a chart must "
                "be yours to stand for its files"))

    def _render(self, root: Root, done: set[str]) -> Iterator[str | BadInput]:
        key = os.path.abspath(root.path)
        if key in done:
            return
        done.add(key)
        results = self._results.get(key)
        if results is None:
            results = self._results[key] = list(self._renders(root))
        yield from results

    def _renders(self, root: Root) -> Iterator[str | BadInput]:
        import shutil
        import tempfile
        import weakref

        # Loaded only when something is rendered: check of plain manifests starts without it.
        from kubelet_winnet.sources.charts.process import run_renderer, shown_command

        refused = refusal(root.kind, root.path, root.manifest, self.limits,
                          allow_remote=self.options.allow_remote)
        if refused is not None:
            yield refused
            return
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="kubelet-winnet-render-")
            self._remove = weakref.finalize(self, shutil.rmtree, self._tmp,
                                            ignore_errors=True)
        number = len(self._results)
        out = os.path.join(self._tmp, f"{number}.out")
        manifest = _under(root.path, root.manifest)
        try:
            command = self._command(root)
            failure = run_renderer(command, out, self.limits.max_bytes, self.options.timeout,
                                   self.options.allow_remote)
            if failure is not None:
                raise RenderError(failure)
            if root.kind == "kustomize":
                parts = [(manifest, out)]
            else:
                parts = list(_split_helm(out, root.path, os.path.join(self._tmp, str(number))))
                self._unclaimed(parts)
        except RenderError as exc:
            yield exc.bad_input(manifest)
            return
        if self.note is not None:
            self.note(f"{root.path}: rendered with {shown_command(command)}; "
                      + ("findings name the file each object came from"
                         if root.kind == "kustomize" else
                         "findings name each template and its lines"))
        for name, path in parts:
            self._add(name, path, root)
            yield name

    def _add(self, name: str, path: str, root: Root) -> None:
        self.copies[name] = path
        self.rendered.add(name)
        self.roots[name] = root

    def close(self) -> None:
        """Remove the renders' temporary files now (a signal ends the run)."""
        if self._remove is not None:
            self._remove()

    def _unclaimed(self, parts: list[tuple[str, str]]) -> None:
        """RenderError when a rendered name is already a file read as it is or another
        render's template: a render never stands for a file read from disk."""
        for name, _ in parts:
            if name in self._as_is or name in self.copies:
                raise RenderError(
                    f"the render names a template {clip(name, 120)}, which is also "
                    + ("a file read as it is" if name in self._as_is else
                       "a template of another render") + ", so none of it is read")

    def _command(self, root: Root) -> list[str]:
        from shutil import which

        target = os.path.join(".", root.path) if root.path.startswith("-") else root.path
        if root.kind == "kustomize":
            kustomize = which("kustomize")
            if kustomize is not None:
                return [kustomize, "build", target]
            kubectl = which("kubectl")
            if kubectl is not None:
                return [kubectl, "kustomize", target]
            raise RenderError(
                f"{root.path} is a kustomization, and building it needs kubectl or "
                "kustomize on PATH (Debian: apt install kubernetes-client); or give "
                "--no-render to read its files as they are"
            )
        # --values=X, --set=X: a value starting with "-" is a value, not a flag, to
        # helm's parser and to the engine's argparse alike.
        values = [f"--values={path}" for path in self.options.helm_values]
        values += [f"--set={setting}" for setting in self.options.helm_set]
        helm = which("helm")
        if helm is not None:
            return [helm, "template", target, *values]
        if not _engine_installed():
            raise RenderError(
                f"{root.path} is a Helm chart, and rendering it needs helm on PATH or the "
                "Python package helm-python-sdk (pip install helm-python-sdk); or give "
                "--no-render to read its files as they are"
            )
        limits = self.limits
        return [sys.executable, "-m", "kubelet_winnet.sources.charts.render", "--engine", target,
                "--limits", f"{limits.max_bytes},{limits.max_depth},{limits.max_alias_nodes}",
                *values]


def _engine_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("helm_python") is not None
    except (ImportError, ValueError):
        return False


def _split_helm(rendered: str, chart: str, into: str) -> Iterator[tuple[str, str]]:
    """The rendered stream of a chart, one file per template: each ``---`` /
    ``# Source: NAME/templates/x.yaml`` header starts a part, and a template's parts,
    in order, are joined by ``---`` lines as the template itself separates its
    documents; the name is the template's path under ``chart`` (Helm names it under the
    chart's name). Text before the first header (none from Helm) is dropped."""
    os.makedirs(into, exist_ok=True)
    order: list[str] = []
    files: dict[str, str] = {}
    documents = 0
    sink: IO[str] | None = None
    pending: str | None = None  # a "---" line that may open a header
    import io

    with io.TextIOWrapper(paths.open_input(rendered), encoding="utf-8",
                          errors="surrogateescape", newline="") as stream:
        try:
            for line in stream:
                if pending is not None:
                    if line.startswith(_SOURCE):
                        name = _template_name(line[len(_SOURCE):].strip(), chart)
                        if sink is not None:
                            sink.close()
                        documents += 1
                        first = name not in files
                        if documents > MAX_DOCUMENTS or (first and len(files) == MAX_TEMPLATES):
                            raise RenderError(_too_many(documents > MAX_DOCUMENTS))
                        if first:
                            files[name] = os.path.join(into, f"{len(files)}.yaml")
                            order.append(name)
                        sink = open(files[name], "a", encoding="utf-8",  # noqa: SIM115
                                    errors="surrogateescape", newline="")
                        if not first:
                            sink.write("---\n")
                        pending = None
                        continue
                    if sink is not None:
                        sink.write(pending)
                    pending = None
                if line.rstrip("\r\n") == "---":
                    pending = line
                    continue
                if sink is not None:
                    sink.write(line)
            if pending is not None and sink is not None:
                sink.write(pending)
        finally:
            if sink is not None:
                sink.close()
    for name in order:
        yield name, files[name]


def _too_many(documents: bool) -> str:
    what = (f"{MAX_DOCUMENTS:,} documents" if documents
            else f"{MAX_TEMPLATES:,} templates")
    return (f"the render holds more than {what}, the most one chart may render here, so "
            "none of it is read")


def _template_name(source: str, chart: str) -> str:
    """``win/templates/ds.yaml`` of chart directory ``charts/win`` ->
    ``charts/win/templates/ds.yaml``: the first part is the chart's name, not its
    directory. Helm names a template ``NAME/templates/...``, a subchart's
    ``NAME/charts/SUB/templates/...``; any other name (``win/../victim.yaml``) would
    let the render stand for a file outside the chart's templates, and is refused."""
    parts = source.split("/")
    at = 1
    while parts[at:at + 1] == ["charts"] and len(parts) > at + 2:
        at += 2
    if (len(parts) < at + 2 or parts[at] != "templates"
            or any(part in ("", ".", "..") or os.sep in part for part in parts)):
        raise RenderError(
            f"the render names a template {clip(source, 120)}, which is no file under the "
            "chart's templates/ (Helm writes CHART/templates/... or "
            "CHART/charts/SUB/templates/...), so none of it is read")
    return _under(chart, *parts[1:])


# --- the Helm engine of helm-python-sdk, in a child process -------------------------------


def _merge(into: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of values (pkg/cli/values/options.go mergeMaps): maps merge key by
    key, anything else replaces."""
    for key, value in values.items():
        old = into.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            into[key] = _merge(dict(old), value)
        else:
            into[key] = value
    return into


def _engine(argv: Iterable[str]) -> int:
    """``helm template CHART --values F --set K=V`` through helm-python-sdk's Helm
    engine, written as ``helm template`` writes it (a ``---`` and ``# Source:`` header
    per template, NOTES.txt and empty templates left out); the template's text is kept
    whole, so lines are the template's rendered lines."""
    import argparse

    import yaml

    parser = argparse.ArgumentParser(prog="kubelet-winnet-helm-engine")
    parser.add_argument("chart")
    parser.add_argument("--values", action="append", default=[])
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--limits", default="")  # the caller's --max-bytes,depth,alias-nodes
    args = parser.parse_args(list(argv))
    try:
        import helm_python as helm
    except (ImportError, OSError) as exc:  # e.g. its native library cannot load here
        sys.stderr.write(f"Error: cannot load helm-python-sdk: {exc}\n")
        return 1

    from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, read_source

    limits = Limits(*map(int, args.limits.split(","))) if args.limits else DEFAULT_LIMITS

    values: dict[str, Any] = {}
    try:
        for path in args.values:
            # Through the input layer: its encodings, alias and size bounds, and words.
            for found in read_source(path, limits):
                if isinstance(found, BadInput):
                    sys.stderr.write(f"Error: {found}\n")
                    return 1
                _merge(values, found.value)
        for setting in args.set:
            _merge(values, helm.parse_set_string(setting))
        with helm.Chart.load(args.chart) as chart:
            # helm template renders as an install (.Release.IsInstall) of release-name
            manifests = chart.render(values, name=RELEASE_NAME, namespace="default",
                                     is_install=True)
    except (OSError, yaml.YAMLError, helm.HelmError) as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    out = sys.stdout
    for name in sorted(manifests):
        text = manifests[name]
        if os.path.basename(name) == "NOTES.txt" or not text.strip():
            continue
        header = f"---\n{_SOURCE}{name}\n"
        out.write(header)
        # As helm does, every "---" of the template's text is followed by its header:
        # a "# Source:" line the template printed itself is then never a header.
        for line in text.splitlines(keepends=True):
            out.write(header if line.rstrip("\r\n") == "---" else line)
        if not text.endswith("\n"):
            out.write("\n")
    out.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--engine"]:
        sys.exit(_engine(sys.argv[2:]))
    sys.exit(2)
