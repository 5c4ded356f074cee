"""What every command shares: the session (streams, counts, exit status), the shared
flags, the pods of the input, and the exit statuses."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, NamedTuple, TextIO

from kubelet_winnet._lint.targeting import PodObject, Target, pod_object, target_of
from kubelet_winnet._printable import printable
from kubelet_winnet.errors import InvalidPodError, WinnetError
from kubelet_winnet.sources.manifest_files import ManifestFile, manifest_files
from kubelet_winnet.sources.manifests import (
    DEFAULT_LIMITS,
    BadInput,
    Document,
    Limits,
    Skipped,
)

if TYPE_CHECKING:
    from kubelet_winnet.sources.charts.origins import Origins
    from kubelet_winnet.sources.charts.render import Renderer

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_TEXT",
    "Command",
    "JsonArray",
    "Pod",
    "Session",
    "add_input_arguments",
    "add_limit_arguments",
    "add_profile_arguments",
    "add_render_arguments",
    "check_profile",
    "exit_text",
    "input_paths",
    "invalid_pod",
    "limits_of",
    "pods",
    "positive_float",
    "positive_int",
    "program",
    "renderer_of",
    "report_skipped",
]

def program() -> str:
    """The name the user typed: ``kubectl winnet`` when run as the kubectl plugin (the
    ``kubectl-winnet`` script), else ``kubelet-winnet``; every diagnostic starts with it."""
    name = os.path.basename(sys.argv[0] if sys.argv else "")
    return "kubectl winnet" if name.startswith("kubectl-winnet") else "kubelet-winnet"


EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 141

EXIT_TEXT = """\
exit status:
  0    all input read; no refusal (translate, explain) or no finding at or above
       --fail-on (check)
  1    the kubelet would refuse a pod, check or audit found problems at or above
       --fail-on, or the runtime failed a call (run)
  2    bad input, flags or usage, or output that cannot be written
  141  stdout was closed early (| head): stopped quietly, not a success
"""


def exit_text(*rows: tuple[int, str]) -> str:
    """One command's exit-status table for its ``--help``: its own ``(status, when)``
    rows, then the 141 every command shares (the top-level help keeps EXIT_TEXT)."""
    import textwrap

    lines = ["exit status:"]
    rows += ((EXIT_BROKEN_PIPE, "stdout was closed early (| head): stopped quietly, not a "
              "success"),)
    for status, when in rows:
        lines += textwrap.wrap(when, 86, initial_indent=f"  {status:<4} ",
                               subsequent_indent=" " * 7)
    return "\n".join(lines) + "\n"


class Command(NamedTuple):
    """A subcommand: ``configure(parser)`` adds its flags, ``run(args, session)`` writes to
    ``session.out``/``session.err`` and returns the exit status."""

    name: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Session], int]


# --- streams and the pods of the input ---------------------------------------------------


@dataclass
class Session:
    """One run's streams and what it has seen."""

    out: TextIO
    err: TextIO
    status: int = EXIT_OK
    skipped_linux: int = 0
    skipped_untargeted: int = 0
    pods: int = 0
    files: int = 0  # files read (empty ones too)
    errors: int = 0  # bad-input lines written
    verbose: bool = False
    quiet: bool = False
    notes: list[str] = field(default_factory=list)
    rendered: set[str] = field(default_factory=set)  # names of rendered templates (render.py)
    # The run's renderer, closed by main when a signal ends the run (a command may read
    # its input through a copy of the parsed arguments, as check does).
    renderer: Renderer | None = None
    diagnostics: list[str] = field(default_factory=list)  # error texts, for SARIF/JUnit
    prog: str = field(default_factory=program)  # what diagnostics start with

    def fail(self, status: int) -> None:
        self.status = max(self.status, status)

    def error(self, text: str) -> None:
        """A bad-input line on stderr; exit status 2."""
        self.err.write(f"{self.prog}: error: {printable(text)}\n")
        if len(self.diagnostics) < 1000:  # bounded: a report carries the first ones
            self.diagnostics.append(printable(text))
        self.errors += 1
        self.fail(EXIT_BAD_INPUT)

    def note(self, text: str) -> None:
        if not self.quiet:
            self.err.write(f"{self.prog}: note: {printable(text)}\n")

    def source(self, path: str | BadInput | Skipped) -> str | None:
        """A path of :func:`expand_paths` to read; bad input and skipped files are
        reported here instead (``None``)."""
        if isinstance(path, BadInput):
            self.error(str(path))
        elif isinstance(path, Skipped):
            self.note(str(path))
        else:
            return path
        return None


@dataclass(slots=True)
class Pod:
    document: Document
    pod: PodObject
    target: Target

    @property
    def where(self) -> str:
        document = self.document  # a rendered object: the line a person edits
        return f"{document.source}:{document.place((), document.line).line}"


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", action=_InOrder,
        help="YAML or JSON files, directories (searched recursively for .yaml, .yml and "
        ".json files and kustomize's Kustomization files), or - for stdin",
    )
    parser.add_argument(
        "-f", "--filename", action=_InOrder, default=[], metavar="PATH",
        help="as PATH, repeatable (kubectl's flag)",
    )
    parser.add_argument(
        "--windows-only", action="store_true",
        help="skip pods that no OS field, node selector or node affinity pins to Windows",
    )
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list skipped pods on stderr")
    parser.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr")
    add_limit_arguments(parser)
    add_render_arguments(parser)


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    """How charts and kustomizations are rendered (sources/charts/render.py, ``renderer_of``)."""
    from kubelet_winnet.sources.charts.render import DEFAULT_TIMEOUT

    group = parser.add_argument_group(
        "charts and kustomizations (a directory with Chart.yaml or kustomization.yaml, or "
        "any file in one, is read as the tool renders it)")
    group.add_argument("--helm-values", action="append", default=[], metavar="FILE",
                       help="a values file for every chart, as helm template --values; "
                       "repeatable, later files win")
    group.add_argument("--helm-set", action="append", default=[], metavar="KEY=VALUE",
                       help="a value for every chart, as helm template --set; repeatable")
    group.add_argument("--render-timeout", type=positive_float, default=DEFAULT_TIMEOUT,
                       metavar="SECONDS",
                       help="stop a renderer after this long (default %(default)g)")
    group.add_argument("--allow-remote", action="store_true",
                       help="let a kustomization's build fetch remote resources (git "
                       "repositories, http URLs); refused by default (allowRemote in the "
                       "settings file)")
    group.add_argument("--no-render", action="store_true",
                       help="read charts and kustomizations as files: the notes say how to "
                       "render them")


def renderer_of(args: argparse.Namespace) -> Renderer | None:
    """The run's renderer (kept on ``args``: a second pass over the input reuses its
    renders), or None when the command renders nothing or --no-render is given."""
    if getattr(args, "no_render", True):
        return None
    renderer: Renderer | None = getattr(args, "renderer", None)
    if renderer is None:
        from kubelet_winnet.sources.charts.render import Renderer, RenderOptions

        options = RenderOptions(True, tuple(args.helm_values), tuple(args.helm_set),
                                args.render_timeout, args.allow_remote)
        renderer = Renderer(options, limits_of(args))
        args.renderer = renderer
    return renderer


class _InOrder(argparse.Action):
    """PATH and -f PATH: each kept in its own list and, in command-line order, in
    ``inputs`` (``-f A -f B C`` reads A, B, then C)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        given = [values] if isinstance(values, str) else list(values)
        if self.dest == "filename":
            namespace.filename = [*getattr(namespace, "filename", []), *given]
        else:
            setattr(namespace, self.dest, given)
        inputs = getattr(namespace, "inputs", None) or []
        namespace.inputs = [*inputs, *given]


def input_paths(args: argparse.Namespace) -> list[str]:
    """PATH and -f arguments in the order given."""
    inputs = getattr(args, "inputs", None)  # [] when check left every file out
    return list(inputs) if inputs is not None else [*args.paths, *args.filename]


def add_limit_arguments(
    parser: argparse.ArgumentParser, max_bytes: int = DEFAULT_LIMITS.max_bytes,
    bytes_help: str = "bytes read (default %(default)s)",
) -> None:
    """The per-file input limits every command that reads files takes (``limits_of``)."""
    limits = parser.add_argument_group("input limits (per file)")
    limits.add_argument("--max-bytes", type=positive_int, default=max_bytes,
                        metavar="N", help=bytes_help)
    limits.add_argument("--max-depth", type=positive_int, default=DEFAULT_LIMITS.max_depth,
                        metavar="N", help="nesting of objects and arrays (default %(default)s)")
    limits.add_argument("--max-alias-nodes", type=positive_int,
                        default=DEFAULT_LIMITS.max_alias_nodes, metavar="N",
                        help="YAML nodes reached through aliases in one document "
                        "(default %(default)s)")


def limits_of(args: argparse.Namespace) -> Limits:
    return Limits(args.max_bytes, args.max_depth, args.max_alias_nodes)


def add_profile_arguments(
    parser: argparse.ArgumentParser, without: str | None = None
) -> None:
    """``--kubelet-version`` and ``--feature-gates``; ``without``: what the command does
    when ``--kubelet-version`` is not given, if not judging by the default version."""
    from kubelet_winnet._kubelet.profile import (
        DEFAULT_KUBELET_VERSION,
        KEP_WITHDRAWN_MINOR,
        MAX_MINOR,
        MIN_MINOR,
        STATUS_AS_OF,
        TIMELINE,
    )

    candidates = "".join(
        f"; as of {STATUS_AS_OF}, 1.{row.minor} is {row.status_text}"
        for row in TIMELINE if row.status == "rc"
    )
    parser.add_argument(
        "--kubelet-version", default=DEFAULT_KUBELET_VERSION,
        help=f"kubelet release, 1.{MIN_MINOR} to 1.{MAX_MINOR} (" + (without or (
            f"default {DEFAULT_KUBELET_VERSION}: the newest kubelet that sends hostNetwork "
            f"to the runtime; KEP-3503 was withdrawn in 1.{KEP_WITHDRAWN_MINOR}"))
        + candidates + ")",
    )
    parser.add_argument(
        "--feature-gates", default=None,
        help="the kubelet's --feature-gates value, e.g. WindowsHostNetwork=false",
    )


def positive_float(text: str) -> float:
    """argparse type of the time flags: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a number of seconds above 0")
    return value


def positive_int(text: str) -> int:
    """argparse type of the count and size flags: a whole number, at least 1."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None


def check_profile(args: argparse.Namespace, session: Session) -> bool:
    """A kubelet version or --feature-gates value the kubelet cannot have is a flag
    error, reported once even when no file holds a pod."""
    import kubelet_winnet as api

    try:
        profile = api.kubelet_profile(args.kubelet_version, args.feature_gates)
    except api.FeatureGateError as exc:  # the kubelet's text, after where the value is
        where = getattr(args, "feature_gates_from", None) or "--feature-gates"
        session.error(f"{where} {json.dumps(args.feature_gates)}: {exc}")
        return False
    except api.UnsupportedVersionError as exc:  # named as the other flags are
        session.error(f"--kubelet-version {json.dumps(args.kubelet_version)}: {exc.reason}")
        return False
    except WinnetError as exc:
        session.error(str(exc))
        return False
    for name in profile.not_modelled:
        session.note(
            f"--feature-gates: {name} is not modelled: assumed not to affect Windows "
            "sandbox networking (a kubelet refuses a gate it does not know: check the "
            "spelling)"
        )
    return True


def invalid_pod(session: Session, document: Document, exc: InvalidPodError) -> None:
    path = exc.field or ()
    line = document.place(path, document.line_of(path) if path else document.line).line
    session.error(f"{document.source}:{line}: document {document.document}: {exc}")


def pods(
    args: argparse.Namespace, session: Session,
    others: Callable[[Document], None] | None = None,
    bad: Callable[[BadInput], bool] | None = None,
    copies: Mapping[str, str | IO[bytes]] | None = None,
) -> Iterator[Pod]:
    """Each pod of the input, one at a time; bad input reported on the way. ``others``
    sees every document that is not yielded: one that holds no pod (``run`` keeps
    ConfigMaps and Secrets) or a pod skipped for its target; ``bad``
    sees bad input first and returns True when it has said what is wrong (``check``:
    a Helm template); ``copies`` reads some arguments (stdin) from a copy, under their
    own name."""
    limits = limits_of(args)
    session.verbose = args.verbose
    session.quiet = args.quiet
    renderer = renderer_of(args)
    if renderer is not None:  # charts and kustomizations, rendered in place
        session.renderer = renderer
        session.rendered = renderer.rendered
        renderer.note = session.note if session.verbose else None
    for entry in manifest_files(input_paths(args), limits, renderer=renderer,
                                origins_of=lambda r: origins_of(args, r, limits),
                                copies=copies):
        if isinstance(entry, BadInput) and bad is not None and bad(entry):
            continue  # (an empty directory is then known as said: no second note)
        if not isinstance(entry, ManifestFile):
            session.source(entry)  # reported
            continue
        first = True
        for found in entry.documents:
            if first:
                first = False
                # A file that could not be opened (missing, a dangling link) was not
                # checked: it is an input error, not a file checked.
                if not (isinstance(found, BadInput) and found.document == 0):
                    session.files += 1
            pod = _pod(args, session, found, others, bad)
            if pod is not None:
                yield pod
        if first:  # an empty file: read, and nothing in it
            session.files += 1


def _pod(args: argparse.Namespace, session: Session, found: Document | BadInput,
         others: Callable[[Document], None] | None,
         bad: Callable[[BadInput], bool] | None) -> Pod | None:
    """The pod to judge in ``found``, or None: bad input is reported, a document that
    holds no pod goes to ``others``, a pod left out for its target is counted."""
    if isinstance(found, BadInput):
        if bad is None or not bad(found):
            session.error(str(found))
        return None
    try:
        pod = pod_object(found.value)
        if pod is None:
            if others is not None:
                others(found)
            return None
        target, pinned_by = target_of(pod)
    except InvalidPodError as exc:
        invalid_pod(session, found, exc)
        return None
    if target is Target.LINUX or (target is Target.UNTARGETED and args.windows_only):
        _skip(session, found, pod, target, pinned_by, others)
        return None
    session.pods += 1
    return Pod(found, pod, target)


def _skip(session: Session, found: Document, pod: PodObject, target: Target,
          pinned_by: str | None, others: Callable[[Document], None] | None) -> None:
    """A pod left out for its target: counted, and said with -v."""
    if others is not None:  # the file held an object all the same
        others(found)
    if target is Target.LINUX:
        session.skipped_linux += 1
    else:
        session.skipped_untargeted += 1
    if session.verbose:
        session.err.write(printable(
            f"{session.prog}: skipped {target.value} pod {pod.identity} "
            f"({found.source}:{found.place((), found.line).line}"
            + (f"; {pinned_by} pins it to Linux)" if pinned_by else ")")
        ) + "\n")


def origins_of(args: argparse.Namespace, renderer: Renderer,
               limits: Limits) -> Origins | None:
    """Where the renderer's output was written (sources/charts/origins.py), kept on ``args`` with
    the renderer: a second pass over the input reuses it. None when nothing was
    rendered (the module is then not loaded: pre-commit's check starts fast)."""
    if not renderer.roots:
        return None
    from kubelet_winnet.sources.charts.origins import Origins

    origins: Origins | None = getattr(args, "origins", None)
    if origins is None:
        origins = args.origins = Origins(renderer.roots, renderer.copies, limits)
    return origins


def report_skipped(session: Session) -> None:
    if session.skipped_linux and not session.verbose:
        count = session.skipped_linux
        session.note(f"skipped {count} Linux-targeted pod{'s' * (count != 1)} "
                     "(-v lists them)")


class JsonArray:
    """A JSON array written one element at a time."""

    def __init__(self, out: TextIO, head: str = "[", tail: str = "]\n") -> None:
        self._out = out
        self._first = True
        self._tail = tail
        out.write(head)

    def add(self, value: Any) -> None:
        self.add_text(json.dumps(value, indent=2))

    def add_text(self, text: str) -> None:
        """An element already written as ``json.dumps(element, indent=2)`` writes it."""
        self._out.write(("\n" if self._first else ",\n") + text)  # one write, not two
        self._first = False

    def close(self) -> None:
        self._out.write(("" if self._first else "\n") + self._tail)
