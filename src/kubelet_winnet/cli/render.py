"""Helm charts and kustomizations, rendered with the real tools before they are read.

A directory holding ``Chart.yaml`` is rendered with ``helm template`` (or, without ``helm``
on PATH, with the Helm engine that the ``helm-python-sdk`` package ships); a directory
holding a kustomization with ``kustomize build`` (or ``kubectl kustomize``), as checkov
does. Any file inside a chart stands for it: the pre-commit hook's
``chart/templates/ds.yaml`` renders ``chart/``, once per run. A kustomization file
stands for its build, and the other files beside it are still read as they are: they are
manifests, and one that no kustomization lists must not go unchecked.

Each renderer is a child process with a timeout; its output is bounded by ``--max-bytes``
and kept in a temporary file, which the input layer then reads under a name a person
knows: Helm's ``# Source:`` comments split the stream per template, so a finding names
``chart/templates/ds.yaml`` and the line of what that template rendered (docs/check.md,
"Charts and kustomizations"); a kustomization's findings name its kustomization file and
the line of the built stream.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from kubelet_winnet.cli.input import BadInput, Limits, Skipped, expand_paths

__all__ = [
    "DEFAULT_TIMEOUT",
    "KUSTOMIZATION_NAMES",
    "RenderOptions",
    "Renderer",
    "render_root",
]

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MANIFEST_NAMES = KUSTOMIZATION_NAMES[:2]  # the ones a directory search reads
CHART_FILE = "Chart.yaml"
DEFAULT_TIMEOUT = 60.0
# Helm's default release name for `helm template CHART` (cmd/helm/template.go).
RELEASE_NAME = "release-name"
_STDERR_KEPT = 64 * 1024
_CHUNK = 1 << 16
_SOURCE = "# Source: "


@dataclass(frozen=True)
class Root:
    """A directory rendered as a whole: ``kind`` is ``helm`` or ``kustomize``; ``path`` as
    the user would write it (relative when the argument was); ``manifest`` the file that
    makes it one (``Chart.yaml``, ``kustomization.yaml``)."""

    kind: str
    path: str
    manifest: str


@dataclass(frozen=True)
class RenderOptions:
    """What the command line says about rendering (``add_input_arguments``)."""

    enabled: bool = True
    helm_values: tuple[str, ...] = ()
    helm_set: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT


def render_root(
    path: str, cache: dict[str, str | None] | None = None, *, is_dir: bool | None = None,
) -> Root | None:
    """What ``path`` is rendered as: the chart it is or lies in (the nearest
    ``Chart.yaml`` above; a subchart, ``X/charts/sub``, renders through the chart above
    it, with that chart's values), else, for a kustomization file or a directory holding
    one, that kustomization. Other files of a kustomization's directory are read as they
    are (a file no kustomization lists must not go unchecked)."""
    absolute = os.path.abspath(path)
    directory = os.path.isdir(absolute) if is_dir is None else is_dir
    chart = _chart_dir(absolute if directory else os.path.dirname(absolute),
                       {} if cache is None else cache)
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


def _chart_dir(start: str, cache: dict[str, str | None]) -> str | None:
    """The absolute directory of the chart that ``start`` (absolute) is or lies in."""
    seen: list[str] = []
    directory = start
    found: str | None = None
    while True:
        if directory in cache:
            found = cache[directory]
            break
        seen.append(directory)
        if os.path.isfile(os.path.join(directory, CHART_FILE)):
            found = directory
            while os.path.basename(os.path.dirname(found)) == "charts":
                above = os.path.dirname(os.path.dirname(found))
                if not os.path.isfile(os.path.join(above, CHART_FILE)):
                    break
                found = above
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for directory in seen:
        cache[directory] = found
    return found


def _as_given(directory: str, path: str) -> str:
    """``directory`` (absolute) as the user wrote ``path``: relative when it was."""
    return directory if os.path.isabs(path) else os.path.relpath(directory)


def _under(directory: str, *parts: str) -> str:
    """``directory/parts``, without a leading ``./``."""
    return os.path.normpath(os.path.join(directory, *parts))


class RenderError(Exception):
    """A renderer that is missing, failed, ran too long or wrote too much: one line."""


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
    _results: dict[str, list[str | BadInput]] = field(default_factory=dict)
    _cache: dict[str, str | None] = field(default_factory=dict)
    _tmp: str | None = None
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
                root = render_root(argument, self._cache, is_dir=True)
                if root is not None and root.kind == "helm":
                    yield from self._render(root, done)
                    continue
                if root is not None and root.manifest not in MANIFEST_NAMES:
                    yield from self._render(root, done)  # `Kustomization`: no search finds it
            for entry in expand_paths([argument]):
                if isinstance(entry, str) and entry != "-":
                    root = render_root(entry, self._cache, is_dir=False)
                    if root is not None:
                        yield from self._render(root, done)
                        continue
                yield entry

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

        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="kubelet-winnet-render-")
            weakref.finalize(self, shutil.rmtree, self._tmp, ignore_errors=True)
        number = len(self._results)
        out = os.path.join(self._tmp, f"{number}.out")
        try:
            command = self._command(root)
            _run(command, out, self.limits.max_bytes, self.options.timeout)
        except RenderError as exc:
            yield BadInput(_under(root.path, root.manifest), 0, 0, str(exc))
            return
        if self.note is not None:
            self.note(f"{root.path}: rendered with {_shown(command)}; "
                      + ("findings name its kustomization file and the line of the output"
                         if root.kind == "kustomize" else
                         "findings name each template and the line of what it rendered"))
        if root.kind == "kustomize":
            name = _under(root.path, root.manifest)
            self._add(name, out)
            yield name
            return
        for name, path in _split_helm(out, root.path, os.path.join(self._tmp, str(number))):
            self._add(name, path)
            yield name

    def _add(self, name: str, path: str) -> None:
        self.copies[name] = path
        self.rendered.add(name)

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
        return [sys.executable, "-m", "kubelet_winnet.cli.render", "--engine", target,
                "--limits", f"{limits.max_bytes},{limits.max_depth},{limits.max_alias_nodes}",
                *values]


def _engine_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("helm_python") is not None
    except (ImportError, ValueError):
        return False


def _shown(command: Sequence[str]) -> str:
    """The command as the user would type it: the renderer's name, not its full path;
    the engine package as ``helm template``."""
    if command[0] == sys.executable:
        return f"helm template {command[4]} (helm-python-sdk)"
    return " ".join([os.path.basename(command[0]), *command[1:]])


def _run(command: list[str], out: str, max_bytes: int, timeout: float) -> None:
    """``command``'s stdout into the file ``out``; RenderError on anything but success."""
    import subprocess
    import threading

    shown = _shown(command)
    memory = _memory_limit(max_bytes)
    try:
        child = subprocess.Popen(_bounded(command, memory), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise RenderError(f"cannot run {shown}: {exc.strerror or type(exc).__name__}") from None
    killed: list[str] = []

    def kill(reason: str) -> None:
        if not killed:
            killed.append(reason)
        child.kill()

    timer = threading.Timer(timeout, kill, ("timeout",))
    timer.daemon = True
    errors = bytearray()
    reader = threading.Thread(target=_drain, args=(child.stderr, errors), daemon=True)
    timer.start()
    reader.start()
    try:
        assert child.stdout is not None
        with open(out, "wb") as sink:
            written = 0
            while chunk := child.stdout.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    kill("size")
                    break
                sink.write(chunk)
        status = child.wait()
    finally:
        timer.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
        reader.join(5)
        child.stdout.close()  # type: ignore[union-attr]
    if killed == ["timeout"]:
        raise RenderError(
            f"{shown} did not finish in {timeout:g} seconds (raise --render-timeout)")
    if killed == ["size"]:
        raise RenderError(f"the output of {shown} is larger than {max_bytes} bytes (raise "
                          "the limit with --max-bytes)")
    if status != 0 and any(word in errors for word in _OUT_OF_MEMORY):
        raise RenderError(
            f"{shown.removesuffix(' (helm-python-sdk)')} ran out of memory: a renderer may "
            f"use {memory >> 20} MiB here (2 GiB and 8 times --max-bytes); raise --max-bytes "
            "for a chart this large")
    if status != 0:
        said = " ".join(_KLOG_HEADER.sub("", errors.decode("utf-8", "replace")).split())
        said = said if len(said) <= 400 else said[:397] + "..."
        if status < 0:
            import signal

            name = signal.Signals(-status).name if -status in signal.valid_signals() \
                else f"signal {-status}"
            raise RenderError(f"{shown} was killed by {name}" + (f": {said}" if said else ""))
        failed_exec = _SHELL_EXEC_FAILED.match(said)
        if status in (126, 127) and failed_exec:
            raise RenderError(f"cannot run {shown}: {failed_exec.group(1)}")
        raise RenderError(f"{shown} failed (exit status {status})"
                          + (f": {said}" if said else ""))


def _memory_limit(max_bytes: int) -> int:
    """The address space a renderer may use: Helm and kustomize build their whole output
    in memory, so only a bound on the child keeps `{{ range until 1000000000 }}` from
    taking the machine's memory before the timeout fires (14 GB in 60 s, measured)."""
    return 2 * 1024**3 + 8 * max_bytes


def _bounded(command: list[str], limit: int) -> list[str]:
    """``command`` run under the address-space limit ``limit``, set by ``/bin/sh``'s
    ``ulimit -v`` before it execs the renderer. Not a ``preexec_fn``: with one, Python
    forks and runs its at-fork handlers in the child, and where a gRPC channel lives (the
    CRI client) gRPC's handler aborted the child before exec (SIGABRT, "epoll_wait error:
    Bad file descriptor"; 3 to 10 of 300 spawns, measured). Without one it uses vfork."""
    if sys.platform == "win32":
        return command
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # ulimit -v counts KiB; `exec` replaces the shell, so the renderer's exit status,
    # stdout and signals are its own. A renderer that cannot be run exits 126 or 127.
    return ["/bin/sh", "-c", 'ulimit -v "$1" && shift && exec "$@"', "sh",
            str(limit // 1024), *command]


# What /bin/sh says when `exec` fails (dash: "sh: 1: exec: PATH: not found").
_SHELL_EXEC_FAILED = re.compile(r"^(?:/bin/)?sh: (?:\d+: )?(.*)$")
# klog's line header (kubectl, kustomize): severity, date, time, thread id, file:line.
_KLOG_HEADER = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\s\]]+:\d+\] ",
                          re.MULTILINE)
# What a renderer says when an allocation fails: Go's runtime, Python's.
_OUT_OF_MEMORY = (b"fatal error: out of memory", b"MemoryError")


def _drain(stream: IO[bytes] | None, kept: bytearray) -> None:
    if stream is None:
        return
    with stream:
        while chunk := stream.read(_CHUNK):
            if len(kept) < _STDERR_KEPT:
                kept += chunk[: _STDERR_KEPT - len(kept)]


def _split_helm(rendered: str, chart: str, into: str) -> Iterator[tuple[str, str]]:
    """The rendered stream of a chart, one file per template: each ``---`` /
    ``# Source: NAME/templates/x.yaml`` header starts a part, and a template's parts,
    in order, are joined by ``---`` lines as the template itself separates its
    documents; the name is the template's path under ``chart`` (Helm names it under the
    chart's name). Text before the first header (none from Helm) is dropped."""
    os.makedirs(into, exist_ok=True)
    order: list[str] = []
    files: dict[str, str] = {}
    sink: IO[str] | None = None
    pending: str | None = None  # a "---" line that may open a header
    with open(rendered, encoding="utf-8", errors="surrogateescape", newline="") as stream:
        try:
            for line in stream:
                if pending is not None:
                    if line.startswith(_SOURCE):
                        name = _template_name(line[len(_SOURCE):].strip(), chart)
                        if sink is not None:
                            sink.close()
                        first = name not in files
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


def _template_name(source: str, chart: str) -> str:
    """``win/templates/ds.yaml`` of chart directory ``charts/win`` ->
    ``charts/win/templates/ds.yaml``: the first part is the chart's name, not its
    directory."""
    _, _, rest = source.partition("/")
    return _under(chart, *rest.split("/")) if rest else _under(chart, source)


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

    from kubelet_winnet.cli.input import DEFAULT_LIMITS, read_source

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
        out.write(f"---\n{_SOURCE}{name}\n{text}" + ("" if text.endswith("\n") else "\n"))
    out.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--engine"]:
        sys.exit(_engine(sys.argv[2:]))
    sys.exit(2)
