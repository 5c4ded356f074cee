"""``kubelet-winnet``: translate, explain and check Windows pod manifests from the shell.

Results go to stdout, diagnostics (one line each) to stderr. Exit status:

* 0: everything read; no refusal (translate, explain) or no finding at or above
  ``--fail-on`` (check);
* 1: the kubelet would refuse a pod (translate, explain, run), findings at or above
  ``--fail-on`` (check, audit), or a runtime call failed (run);
* 2: bad input (a file, document or field that cannot be read), bad flags or usage, or
  output that cannot be written (``> /dev/full``); it outranks 1;
* 141 (128 + SIGPIPE): the reader of stdout went away (``| head``): the run stops quietly
  and does not claim success.

Subcommands are entries of :data:`COMMANDS`. A subcommand living in its own module is
added here in two lines, next to the three below::

    from kubelet_winnet._run_command import RUN  # a Command(name, help, configure, run)
    register(RUN)

``configure(parser)`` adds its flags (``add_input_arguments`` and
``add_profile_arguments`` give the shared ones); ``run(args, session)`` writes to
``session.out``/``session.err`` and returns the exit status.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

from kubelet_winnet._input import (
    DEFAULT_LIMITS,
    BadInput,
    Document,
    Limits,
    expand_paths,
    read_source,
)
from kubelet_winnet._targeting import PodObject, Target, pod_object, target_of
from kubelet_winnet.errors import InvalidPodError, WinnetError

__all__ = ["COMMANDS", "Command", "Session", "main", "register"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 141

_EXIT_TEXT = """\
exit status:
  0    all input read; no refusal (translate, explain) or no finding at or above
       --fail-on (check)
  1    the kubelet would refuse a pod, check or audit found problems at or above
       --fail-on, or the runtime failed a call (run)
  2    bad input, flags or usage, or output that cannot be written
  141  stdout was closed early (| head): stopped quietly, not a success
"""


# --- subcommand registry ----------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Session], int]


COMMANDS: dict[str, Command] = {}


def register(command: Command) -> Command:
    COMMANDS[command.name] = command
    return command


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
    errors: int = 0  # bad-input lines written
    verbose: bool = False
    quiet: bool = False
    notes: list[str] = field(default_factory=list)

    def fail(self, status: int) -> None:
        self.status = max(self.status, status)

    def error(self, text: str) -> None:
        """A bad-input line on stderr; exit status 2."""
        self.err.write(f"kubelet-winnet: error: {_one_line(text)}\n")
        self.errors += 1
        self.fail(EXIT_BAD_INPUT)

    def note(self, text: str) -> None:
        if not self.quiet:
            self.err.write(f"kubelet-winnet: note: {_one_line(text)}\n")


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


@dataclass(frozen=True)
class Pod:
    document: Document
    pod: PodObject
    target: Target

    @property
    def where(self) -> str:
        return f"{self.document.source}:{self.document.line}"


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", metavar="PATH",
        help="YAML or JSON files, directories (searched recursively for .yaml, .yml and "
        ".json), or - for stdin",
    )
    parser.add_argument(
        "-f", "--filename", action="append", default=[], metavar="PATH",
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


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._profile import DEFAULT_KUBELET_VERSION, MAX_MINOR, MIN_MINOR

    parser.add_argument(
        "--kubelet-version", default=DEFAULT_KUBELET_VERSION,
        help=f"kubelet release, 1.{MIN_MINOR} to 1.{MAX_MINOR} (default "
        f"{DEFAULT_KUBELET_VERSION}, the last that implements KEP-3503)",
    )
    parser.add_argument(
        "--feature-gates", default=None,
        help="the kubelet's --feature-gates value, e.g. WindowsHostNetwork=false",
    )


def positive_int(text: str) -> int:
    """argparse type of the count and size flags: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def check_profile(args: argparse.Namespace, session: Session) -> bool:
    """A kubelet version or --feature-gates value the kubelet cannot have is a flag
    error, reported once even when no file holds a pod."""
    import kubelet_winnet as api

    try:
        profile = api.kubelet_profile(args.kubelet_version, args.feature_gates)
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


def field_path(text: str) -> tuple[str | int, ...]:
    """``spec.containers[1].ports`` -> ``("spec", "containers", 1, "ports")``."""
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


def invalid_pod(session: Session, document: Document, exc: InvalidPodError) -> None:
    line = document.line_of(field_path(exc.field)) if exc.field else document.line
    session.error(f"{document.source}:{line}: document {document.document}: {exc}")


def pods(
    args: argparse.Namespace, session: Session,
    others: Callable[[Document], None] | None = None,
) -> Iterator[Pod]:
    """Each pod of the input, one at a time; bad input reported on the way. ``others``
    sees every document that holds no pod (``run`` keeps ConfigMaps and Secrets)."""
    limits = limits_of(args)
    session.verbose = args.verbose
    session.quiet = args.quiet
    for path in expand_paths([*args.paths, *args.filename]):
        if isinstance(path, BadInput):
            session.error(str(path))
            continue
        for found in read_source(path, limits):
            if isinstance(found, BadInput):
                session.error(str(found))
                continue
            try:
                pod = pod_object(found.value)
                if pod is None:
                    if others is not None:
                        others(found)
                    continue
                target, _ = target_of(pod)
            except InvalidPodError as exc:
                invalid_pod(session, found, exc)
                continue
            if target is Target.LINUX or (
                target is Target.UNTARGETED and args.windows_only
            ):
                if target is Target.LINUX:
                    session.skipped_linux += 1
                else:
                    session.skipped_untargeted += 1
                if session.verbose:
                    session.err.write(
                        f"kubelet-winnet: skipped {target.value} pod {pod.identity} "
                        f"({found.source}:{found.line})\n"
                    )
                continue
            session.pods += 1
            yield Pod(found, pod, target)


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
        self._out.write("\n" if self._first else ",\n")
        self._first = False
        self._out.write(json.dumps(value, indent=2))

    def close(self) -> None:
        self._out.write(("" if self._first else "\n") + self._tail)


# --- translate ---------------------------------------------------------------------------

_TRANSLATE_FORMATS = ("text", "json", "yaml", "textproto", "hex", "binary")


def _configure_translate(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=_TRANSLATE_FORMATS, default="text",
        help="text: a header and the message as JSON with every field shown; json: one "
        "array of records; yaml: one document per pod; textproto: protobuf text format; "
        "hex: the serialized bytes, one line per pod (empty for a refused pod); binary: "
        "length-delimited messages (varint size, then bytes; a refused pod has none)",
    )


def _run_translate(args: argparse.Namespace, session: Session) -> int:
    import kubelet_winnet as api
    from kubelet_winnet.errors import SandboxConfigError

    if not check_profile(args, session):
        return session.status
    writer = _TranslateWriter(args.output, session.out)
    for item in pods(args, session):
        manifest = item.document.value
        try:
            config = api.windows_sandbox_config(
                manifest, kubelet_version=args.kubelet_version,
                feature_gates=args.feature_gates,
            )
        except SandboxConfigError as exc:
            session.fail(EXIT_FINDINGS)
            writer.refused(item, f"Failed to create pod sandbox: {exc}")
            if args.output in ("hex", "binary"):
                session.err.write(f"kubelet-winnet: {item.where}: {item.pod.identity}: "
                                  f"Failed to create pod sandbox: {exc}\n")
            continue
        except InvalidPodError as exc:
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        writer.config(item, config)
        if item.pod.spec.get("hostNetwork") is True and not config.security_context.host_process:
            sent = config.security_context.namespace_options.network == 2  # NODE
            how = (
                "the kubelet sends namespace_options.network = NODE but no released "
                "containerd acts on it" if sent
                else f"kubelet {args.kubelet_version} does not send it"
            )
            session.note(
                f"{item.where}: {item.pod.identity}: hostNetwork: true will not reach the "
                f"runtime ({how}); the pod gets its own network namespace "
                "(kubelet-winnet check explains)"
            )
    writer.close()
    report_skipped(session)
    return session.status


class _TranslateWriter:
    def __init__(self, output: str, out: TextIO) -> None:
        self._output = output
        self._out = out
        self._array = JsonArray(out) if output == "json" else None
        self._first = True

    def _record(self, item: Pod) -> dict[str, Any]:
        return {
            "source": item.document.label,
            "line": item.document.line,
            "pod": item.pod.identity,
        }

    def config(self, item: Pod, config: Any) -> None:
        from google.protobuf import json_format, text_format

        output = self._output
        if output == "json" and self._array is not None:
            record = self._record(item)
            record["windowsPodSandboxConfig"] = json_format.MessageToDict(config)
            self._array.add(record)
        elif output == "yaml":
            record = self._record(item)
            record["windowsPodSandboxConfig"] = json_format.MessageToDict(config)
            self._yaml(record)
        elif output == "text":
            shown = json_format.MessageToDict(config, always_print_fields_with_no_presence=True)
            self._out.write(f"# {item.pod.identity} ({item.document.label}, line "
                            f"{item.document.line})\n{json.dumps(shown, indent=2)}\n\n")
        elif output == "textproto":
            self._out.write(f"# {item.pod.identity} ({item.document.label}, line "
                            f"{item.document.line})\n{text_format.MessageToString(config)}\n")
        elif output == "hex":
            self._out.write(config.SerializeToString().hex() + "\n")
        else:
            data = config.SerializeToString()
            self._out.flush()
            binary: IO[bytes] | None = getattr(self._out, "buffer", None)
            if binary is None:  # a text-only stream (tests): show the bytes as hex
                self._out.write((_varint(len(data)) + data).hex() + "\n")
                return
            binary.write(_varint(len(data)) + data)
            binary.flush()

    def refused(self, item: Pod, error: str) -> None:
        output = self._output
        if output == "json" and self._array is not None:
            self._array.add({**self._record(item), "error": error})
        elif output == "yaml":
            self._yaml({**self._record(item), "error": error})
        elif output in ("text", "textproto"):
            self._out.write(f"# {item.pod.identity} ({item.document.label}, line "
                            f"{item.document.line})\nerror: {error}\n\n")
        elif output == "hex":  # one line per pod; a config is never empty bytes
            self._out.write("\n")  # (security_context is always present)

    def _yaml(self, record: dict[str, Any]) -> None:
        import yaml

        self._out.write(yaml.safe_dump(record, sort_keys=False, explicit_start=True))

    def close(self) -> None:
        if self._array is not None:
            self._array.close()


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# --- explain -----------------------------------------------------------------------------


def _configure_explain(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=("text", "json", "yaml"), default="text",
        help="text: each step, the result and warnings; json: one array; yaml: one "
        "document per pod",
    )


def _run_explain(args: argparse.Namespace, session: Session) -> int:
    import kubelet_winnet as api

    if not check_profile(args, session):
        return session.status
    array = JsonArray(session.out) if args.output == "json" else None
    for item in pods(args, session):
        try:
            explanation = api.explain(
                item.document.value, kubelet_version=args.kubelet_version,
                feature_gates=args.feature_gates,
            )
        except InvalidPodError as exc:
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        if explanation.error is not None:
            session.fail(EXIT_FINDINGS)
        record = _explain_record(item, explanation, args)
        if array is not None:
            array.add(record)
        elif args.output == "yaml":
            import yaml

            session.out.write(yaml.safe_dump(record, sort_keys=False, explicit_start=True))
        else:
            _explain_text(record, session.out)
    if array is not None:
        array.close()
    report_skipped(session)
    return session.status


def _explain_record(item: Pod, explanation: Any, args: argparse.Namespace) -> dict[str, Any]:
    # Read by attribute only (steps: .rule/.text; warnings: .code/.field/.message): the
    # classes behind them are the library's to rename.
    from google.protobuf import json_format

    import kubelet_winnet as api

    config = explanation.config
    error = explanation.error
    return {
        "source": item.document.label,
        "line": item.document.line,
        "pod": item.pod.identity,
        "target": item.target.value,
        "kubeletVersion": str(api.kubelet_profile(args.kubelet_version,
                                                  args.feature_gates).version),
        "windowsPodSandboxConfig": (
            None if config is None else json_format.MessageToDict(config)
        ),
        "error": None if error is None else str(error),
        "steps": [{"rule": step.rule, "text": step.text} for step in explanation.steps],
        "warnings": [
            {"code": str(w.code), "field": w.field, "message": w.message}
            for w in explanation.warnings
        ],
    }


def _explain_text(record: dict[str, Any], out: TextIO) -> None:
    out.write(f"# {record['pod']} ({record['source']}, line {record['line']}; "
              f"{record['target']})\n")
    for step in record["steps"]:
        out.write(f"  step {step['rule']}: {step['text']}\n")
    config = record.get("windowsPodSandboxConfig")
    if config is not None:
        out.write(json.dumps(config, indent=2) + "\n")
    if record.get("error"):
        out.write(f"error: Failed to create pod sandbox: {record['error']}\n")
    for warning in record["warnings"]:
        out.write(f"warning [{warning['code']}] {warning['field']}: {warning['message']}\n")
    out.write("\n")


# --- check -------------------------------------------------------------------------------


def _configure_check(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._check import RULES

    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=("text", "json", "sarif"), default="text",
        help="text: file:line: severity rule-id: message [field]; json: findings and a "
        "summary; sarif: SARIF 2.1.0",
    )
    parser.add_argument(
        "--fail-on", choices=("error", "warning", "info"), default="warning",
        help="exit 1 when a finding has this severity or higher (default %(default)s)",
    )
    parser.epilog = (
        "rules: " + ", ".join(
            f"{r.id} ({r.severity.label}"
            + (f", {r.severity_without_os.label} without spec.os.name: windows"
               if r.severity_without_os is not None else "")
            + ")"
            for r in RULES
        )
        + ". Ignore one for an object with the annotation "
        "ignore-check.kubelet-winnet.io/<rule-id>: \"<reason>\" on the object or its pod "
        "template.\n\n" + _EXIT_TEXT
    )


def _run_check(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._check import check_pod, host_network_reach
    from kubelet_winnet._report import report_writer

    if not check_profile(args, session):
        return session.status
    from kubelet_winnet._pod import read_pod

    reach = host_network_reach(args.kubelet_version, args.feature_gates)
    threshold = {"error": 3, "warning": 2, "info": 1}[args.fail_on]
    writer = report_writer(args.output, session.out)
    for item in pods(args, session):
        try:  # the library's reading: "true" is not true, wrong types are bad input
            read_pod(item.document.value)
        except InvalidPodError as exc:
            session.pods -= 1  # read, but not checked: an input error instead
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        findings = check_pod(item.pod, item.target, reach)
        if not findings:
            continue
        from kubelet_winnet._check import ignored_rules

        ignored = ignored_rules(item.pod)
        # In line order within the object, as a reader of the file meets them.
        located = sorted(
            ((item.document.line_of(f.field), i, f) for i, f in enumerate(findings)),
            key=lambda entry: entry[:2],
        )
        for line, _, finding in located:
            reason = ignored.get(finding.rule.id)
            if reason is None and finding.severity >= threshold:
                session.fail(EXIT_FINDINGS)
            writer.finding(item.document, item.pod, finding, reason, line)
    writer.close(session)
    if args.verbose:
        session.err.write(f"kubelet-winnet: {writer.summary(session)}\n")
    elif args.output == "text":
        report_skipped(session)
    return session.status


register(Command(
    "translate", "print each pod's WindowsPodSandboxConfig (CRI runtime.v1)",
    _configure_translate, _run_translate,
))
register(Command(
    "explain", "each kubelet decision, the result and warnings for each pod",
    _configure_explain, _run_explain,
))
register(Command(
    "check", "lint manifests: hostNetwork that is silently ignored, pods the kubelet "
    "refuses, fields a Windows pod cannot have",
    _configure_check, _run_check,
))

# Commands kept in their own modules (audit, matrix, run): registered here in a few lines.
from kubelet_winnet._audit import configure_audit, run_audit  # noqa: E402
from kubelet_winnet._matrix import configure_matrix, run_matrix  # noqa: E402

register(Command(
    "audit", "every Windows pod of a cluster (live, or a kubectl dump) judged by its node's "
    "kubelet and runtime: what is sent, whether hostNetwork takes effect, check findings",
    configure_audit, run_audit,
))

register(Command(
    "matrix", "what each kubelet 1.26+ sends for each kind of Windows pod, per "
    "WindowsHostNetwork state",
    configure_matrix, run_matrix,
))

from kubelet_winnet._cli_run import configure_run, run_command  # noqa: E402

register(Command(
    "run", "send a CRI runtime what the kubelet would send for each pod (RunPodSandbox, "
    "then CreateContainer and StartContainer per container); --dry-run prints the requests",
    configure_run, run_command,
))


# --- main ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kubelet-winnet",
        description="What the kubelet tells the container runtime about networking for "
        "Windows pods (CRI runtime.v1), by kubelet version and feature gates.",
        epilog=_EXIT_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS.values():
        sub = commands.add_parser(
            command.name, help=command.help, description=command.help,
            formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EXIT_TEXT,
        )
        command.configure(sub)
    return parser


def _usage_needs_paths(args: argparse.Namespace) -> bool:
    return hasattr(args, "paths") and not args.paths and not args.filename


def main(argv: Sequence[str] | None = None) -> int:
    if sys.stderr is None:  # started with stderr closed (`2>&-`): diagnostics are lost,
        # the exit status is not; the stream lives as long as the process.
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stdout is None:  # started with stdout closed (`>&-`): nothing can be written
        sys.stderr.write("kubelet-winnet: error: cannot write output: stdout is closed\n")
        return EXIT_BAD_INPUT
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # lone surrogates and odd file names never raise
            reconfigure(errors="backslashreplace")
    if argv is None:  # the console script owns the process (not a caller's main([...]))
        # Documents are JSON values freed by reference counting as soon as they are done;
        # the cyclic collector would mostly re-scan long-lived modules (10 % of the time).
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)
    parser = _parser()
    args = parser.parse_args(argv)
    if _usage_needs_paths(args):
        parser.error(f"{args.command}: no PATH given (use - for stdin)")
    session = Session(sys.stdout, sys.stderr, verbose=getattr(args, "verbose", False),
                      quiet=getattr(args, "quiet", False))
    try:
        status = COMMANDS[args.command].run(args, session)
        sys.stdout.flush()
    except BrokenPipeError:  # `kubelet-winnet check . | head`
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # only writes get here: reads are bad input, handled above
        _drop_stdout()
        sys.stderr.write(f"kubelet-winnet: error: cannot write output: "
                         f"{exc.strerror or type(exc).__name__}\n")
        return EXIT_BAD_INPUT
    return status


def _drop_stdout() -> None:
    # What is still buffered cannot be written either; point the descriptor at
    # /dev/null so the interpreter's final flush does not print a second error.
    if sys.stdout is not sys.__stdout__ or sys.__stdout__ is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
