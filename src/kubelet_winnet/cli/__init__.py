"""``kubelet-winnet``: the command line, one module per command.

Results go to stdout, diagnostics (one line each) to stderr. Exit status:

* 0: everything read; no refusal (translate, explain) or no finding at or above
  ``--fail-on`` (check);
* 1: the kubelet would refuse a pod (translate, explain, run), findings at or above
  ``--fail-on`` (check, audit), or a runtime call failed (run);
* 2: bad input (a file, document or field that cannot be read), bad flags or usage, or
  output that cannot be written (``> /dev/full``); it outranks 1;
* 141 (128 + SIGPIPE): the reader of stdout went away (``| head``): the run stops quietly
  and does not claim success.

Each command is a module of this package with a ``COMMAND``
(:class:`~kubelet_winnet.cli.session.Command`); :data:`COMMAND_MODULES` names them, and a
run imports only the module of the command it runs. A new command is a module plus one
line there.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import NoReturn

from kubelet_winnet._printable import printable
from kubelet_winnet.cli.session import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_TEXT,
    Command,
    Session,
)

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
}


def load_command(name: str) -> Command:
    """The command ``name``, its module imported on first use."""
    module = importlib.import_module(f"{__name__}.{COMMAND_MODULES[name][0]}")
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


class _Parser(argparse.ArgumentParser):
    """argparse, but a flag error is one line like every other error (argparse prints
    the usage first); ``--help`` still shows the usage. ``command``: the command named
    on the command line, which the top parser reports some errors for."""

    command: str | None = None

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("kubelet-winnet").strip() or self.command
        where = f"{command}: " if command else ""
        self.exit(EXIT_BAD_INPUT, printable(
            f"kubelet-winnet: error: {where}{message}; see kubelet-winnet"
            f"{f' {command}' if command else ''} --help"
        ) + "\n")


def _parser(chosen: str | None) -> _Parser:
    parser = _Parser(
        prog="kubelet-winnet",
        description="What the kubelet tells the container runtime about networking for "
        "Windows pods (CRI runtime.v1), by kubelet version and feature gates.",
        epilog=EXIT_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_text) in COMMAND_MODULES.items():
        sub = commands.add_parser(
            name, help=help_text, description=help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXIT_TEXT,
        )
        if name == chosen:  # only the command that runs configures (and imports) itself
            load_command(name).configure(sub)
    parser.command = chosen
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
    words = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(_chosen(words))
    args = parser.parse_args(words)
    if _usage_needs_paths(args):
        parser.error("no PATH given (use - for stdin)")
    session = Session(sys.stdout, sys.stderr, verbose=getattr(args, "verbose", False),
                      quiet=getattr(args, "quiet", False))
    try:
        status = load_command(args.command).run(args, session)
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

