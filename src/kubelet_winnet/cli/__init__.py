"""``kubelet-winnet``: the command line, one module per command.

Results go to stdout, diagnostics (one line each) to stderr. Exit status:

* 0: everything read; no refusal (translate, explain) or no finding at or above
  ``--fail-on`` (check);
* 1: the kubelet would refuse a pod (translate, explain, run), findings at or above
  ``--fail-on`` (check, audit), or a runtime call failed (run);
* 2: bad input (a file, document or field that cannot be read), bad flags or usage, or
  output that cannot be written (``> /dev/full``); it outranks 1;
* 141 (128 + SIGPIPE): the reader of stdout went away (``| head``): the run stops quietly
  and does not claim success;
* SIGTERM and SIGHUP end the run by the signal (a shell says 143, 129) once a renderer
  it started is killed and its temporary files are removed.

Each command is a module of this package with a ``COMMAND``
(:class:`~kubelet_winnet.cli.session.Command`); :data:`COMMAND_MODULES` names them, and a
run imports only the module of the command it runs. A new command is a module plus one
line there.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import io
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from kubelet_winnet._printable import printable
from kubelet_winnet.cli.session import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_TEXT,
    Command,
    Session,
    program,
)

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["COMMANDS", "COMMAND_MODULES", "Command", "Session", "main"]

# name -> (module, one-line help); the help is here so `kubelet-winnet --help` imports no
# command module.
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "translate": ("translate", "print each pod's WindowsPodSandboxConfig (CRI runtime.v1)"),
    "explain": ("explain", "each kubelet decision, the result and warnings for each pod"),
    "check": ("check", "lint manifests: hostNetwork that is silently ignored, pods the "
              "kubelet refuses, fields a Windows pod cannot have"),
    "audit": ("audit", "every Windows pod of a cluster (live, or a kubectl dump) judged by "
              "its node's kubelet and runtime: what is sent, whether hostNetwork takes "
              "effect, check findings"),
    "matrix": ("matrix", "what each kubelet 1.26+ sends for each kind of Windows pod, per "
               "WindowsHostNetwork state"),
    "run": ("run", "send a CRI runtime what the kubelet would send for each pod "
            "(RunPodSandbox, then CreateContainer and StartContainer per container); "
            "--dry-run prints the requests"),
    "policy": ("policy", "print a ValidatingAdmissionPolicy and binding that warn at kubectl "
               "apply time about hostNetwork a Windows pod ignores"),
    "node": ("node", "one Windows node judged by its own files (containerd, CNI, kubelet, "
             "kube-proxy, netsh port ranges, the Node object): what each class of pod gets "
             "there, and findings"),
}


def load_command(name: str) -> Command:
    """The command ``name``, its module imported on first use."""
    module = importlib.import_module(f"{__name__}.commands.{COMMAND_MODULES[name][0]}")
    command: Command = module.COMMAND
    return command


class _Commands(Mapping[str, Command]):
    """Every command by name, each module imported when it is looked up."""

    def __getitem__(self, name: str) -> Command:
        if name not in COMMAND_MODULES:
            raise KeyError(name)
        return load_command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(COMMAND_MODULES)

    def __len__(self) -> int:
        return len(COMMAND_MODULES)


COMMANDS: Mapping[str, Command] = _Commands()


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the command line, if any (the first word that is one)."""
    for word in argv:
        if word in COMMAND_MODULES:
            return word
        if not word.startswith("-"):
            return None
    return None


# argparse's words for a COMMAND that is none (quoted with '' or not, by Python version).
_INVALID_COMMAND = re.compile(r"argument COMMAND: invalid choice: '?(.*?)'? \(choose from ")
# argparse's words for a flag whose value is missing ("-o/--output": the long name kept).
_NO_VALUE = re.compile(r"argument ((?:-\w+/)?(--[\w-]+)): expected one argument$")


class _Parser(argparse.ArgumentParser):
    """argparse, but a flag error is one line like every other error (argparse prints the
    usage first), naming the command and, for a mistyped flag, the nearest one ("did you
    mean"); ``--help`` still shows the usage. ``command``: the chosen command's parser,
    which reports unrecognized arguments against its own flags."""

    command: argparse.ArgumentParser | None = None
    words: Sequence[str] = ()  # the command line being parsed

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse drops a failed write of --help or --version; main reports it (a lost
        # stderr stays lost: the exit status still says what happened).
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            flush = getattr(stream, "flush", None)
            if flush is not None:
                flush()
        except OSError:
            if stream is not sys.stderr:
                raise

    def error(self, message: str) -> NoReturn:
        prefix = "unrecognized arguments: "
        if self.command is not None and message.startswith(prefix):
            self.command.error(message)  # its flags, its name
        choice = _INVALID_COMMAND.match(message)
        if choice is not None:  # a mistyped command, said as a mistyped flag is
            word = choice.group(1).strip("\"")  # %r double-quotes a word holding '
            close = difflib.get_close_matches(word, COMMAND_MODULES, n=1, cutoff=0.6)
            message = f"unknown command {word!r} " + (
                f"(did you mean {close[0]}?)" if close
                else f"(the commands: {', '.join(COMMAND_MODULES)})")
        if message.startswith(prefix):
            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            for word in message[len(prefix):].split():
                flag = word.partition("=")[0]
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
                if flag.startswith("--") and close:
                    message += f" (did you mean {close[0]}?)"
                    break
        missing = _NO_VALUE.match(message)
        if missing is not None and any(  # argparse took a value starting with "-" for a flag
                word.startswith("-") and before in missing.group(1).split("/")
                for before, word in zip(self.words, self.words[1:], strict=False)):
            message += (f" (a value that starts with '-' is written "
                        f"{missing.group(2)}=VALUE)")
        top = "kubectl winnet" if self.prog.startswith("kubectl winnet") else "kubelet-winnet"
        command = self.prog.removeprefix(top).strip()
        where = f"{command}: " if command else ""
        self.exit(EXIT_BAD_INPUT, printable(
            f"{top}: error: {where}{message}; see {top}"
            f"{f' {command}' if command else ''} --help"
        ) + "\n")


def _parsers(chosen: str | None) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser | None]:
    """The top-level parser and the chosen command's."""
    from kubelet_winnet import __version__

    # Run as the kubectl plugin (the kubectl-winnet script), usage says `kubectl winnet`.
    parser = _Parser(
        prog=program(),
        description="What the kubelet tells the container runtime about networking for "
        "Windows pods (CRI runtime.v1), by kubelet version and feature gates.",
        epilog=EXIT_TEXT,
        formatter_class=_CommandListFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser)
    chosen_parser = None
    for name, (_, help_text) in COMMAND_MODULES.items():
        sub = commands.add_parser(
            name, help=help_text, description=help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXIT_TEXT,
        )
        if name == chosen:  # only the command that runs configures (and imports) itself
            load_command(name).configure(sub)
            chosen_parser = sub
    parser.command = chosen_parser
    return parser, chosen_parser


def _usage_needs_paths(args: argparse.Namespace) -> bool:
    if getattr(args, "list_rules", False) or getattr(args, "explain", None) is not None:
        return False  # check --list-rules, check --explain RULE
    return hasattr(args, "paths") and not args.paths and not args.filename



class _CommandListFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse measures the command names at the indentation of ``COMMAND`` but prints
    them one level deeper, so the longest (translate) had its help pushed to the next
    line: measure them where they are printed."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            longest = max((len(name) for name in action.choices), default=0)
            self._action_max_length = max(
                self._action_max_length,
                longest + self._current_indent + 2 * self._indent_increment,
            )

def main(argv: Sequence[str] | None = None) -> int:
    if sys.stderr is None:  # started with stderr closed (`2>&-`): diagnostics are lost,
        # the exit status is not; the stream lives as long as the process.
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stdout is None:  # started with stdout closed (`>&-`): nothing can be written
        sys.stderr.write(f"{program()}: error: cannot write output: stdout is closed\n")
        return EXIT_BAD_INPUT
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # lone surrogates and odd file names never raise
            reconfigure(errors="backslashreplace")
    if argv is None:  # the console script owns the process (not a caller's main([...]))
        _whole_writes_to_stdout()
        # Documents are JSON values freed by reference counting as soon as they are done;
        # the cyclic collector would mostly re-scan long-lived modules (10 % of the time).
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)
    words = sys.argv[1:] if argv is None else list(argv)
    parser, command_parser = _parsers(_chosen(words))
    for each in (parser, command_parser):
        if isinstance(each, _Parser):
            each.words = words
    try:
        args = parser.parse_args(words)
    except BrokenPipeError:  # `--help | head -1`
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # `--version > /dev/full`
        _drop_stdout()
        sys.stderr.write(f"{program()}: error: cannot write output: "
                         f"{exc.strerror or type(exc).__name__}\n")
        return EXIT_BAD_INPUT
    if _usage_needs_paths(args):
        (command_parser or parser).error("no PATH given (use - for stdin)")
    try:  # relative paths, the settings search and reports' file names start there
        os.getcwd()
    except OSError as exc:
        sys.stderr.write(f"{program()}: error: the working directory cannot be used "
                         f"({exc.strerror or type(exc).__name__}; it was removed or cannot be "
                         "reached): change to a folder that exists and run again\n")
        return EXIT_BAD_INPUT
    session = Session(sys.stdout, sys.stderr, verbose=getattr(args, "verbose", False),
                      quiet=getattr(args, "quiet", False))
    ending = _end_on_signals() if argv is None else None
    try:
        status = load_command(args.command).run(args, session)
        sys.stdout.flush()
    except _Ended as ended:
        renderer = getattr(args, "renderer", None) or session.renderer
        if renderer is not None:
            renderer.close()
        _die_by(ended.signum)
    except BrokenPipeError:  # `kubelet-winnet check . | head`
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # only writes get here: reads are bad input, handled above
        _drop_stdout()
        sys.stderr.write(f"{program()}: error: cannot write output: "
                         f"{exc.strerror or type(exc).__name__}\n")
        return EXIT_BAD_INPUT
    finally:
        if ending is not None:
            ending()
    return status


class _Ended(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the run so its ``finally`` blocks kill a
    renderer's process group, then :func:`_die_by` ends the process by the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _end_on_signals() -> Callable[[], None]:
    """SIGTERM and SIGHUP (a cancelled CI job, a closed terminal) raise :class:`_Ended`
    instead of killing the run outright, so that a renderer's output, a rendered Secret
    among it, leaves $TMPDIR first. A disposition someone else set is left alone; the
    returned function puts the defaults back."""
    import signal

    def end(signum: int, _frame: object) -> NoReturn:
        raise _Ended(signum)

    changed = []
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, end)
            changed.append(number)

    def restore() -> None:
        for number in changed:
            signal.signal(number, signal.SIG_DFL)

    return restore


def _die_by(signum: int) -> NoReturn:
    """End the process by ``signum``, as it would have ended without our handler (a
    shell then says 128 + the signal)."""
    import contextlib
    import signal

    with contextlib.suppress(OSError, ValueError):  # what is written stays written
        sys.stdout.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # where the signal does not end a process


class _WholeWrites(io.RawIOBase):
    """A file descriptor whose ``write`` writes everything or raises. CPython's
    BufferedWriter returns a short count when a pipe closes part-way through one large
    write, and TextIOWrapper drops the rest without an error: a report lost, the run not
    ended as 141."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.write(self._fd, view[done:])  # OSError (EPIPE) raises
        return done


_owned_stdout: list[io.TextIOWrapper] = []  # the stdout _whole_writes_to_stdout made


def _whole_writes_to_stdout() -> None:
    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper) or stream is not sys.__stdout__:
        return
    try:
        fd = stream.fileno()
        stream.flush()
    except (OSError, ValueError):
        return
    raw: Any = _WholeWrites(fd)
    replaced = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding,
                                errors=stream.errors, line_buffering=stream.line_buffering)
    _owned_stdout[:] = [replaced]
    sys.stdout = replaced


def _drop_stdout() -> None:
    # What is still buffered cannot be written either; point the descriptor at
    # /dev/null so the interpreter's final flush does not print a second error.
    stream: Any = sys.stdout
    if stream is None or (stream is not sys.__stdout__ and stream not in _owned_stdout):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass

