"""Running one renderer (``helm template``, ``kustomize build``, the Helm engine) as a
child process, and its failure in its own words.

The child runs in a session of its own with a minimal environment (never our tokens),
under an address-space limit set by ``/bin/sh``'s ``ulimit -v``, and a timeout that kills
its whole process group; its stdout goes to a file and stops at ``--max-bytes``; SIGTERM
and SIGHUP are held while it starts. A failure is returned as one line in the
renderer's own words, which :mod:`.render` raises as its ``RenderError``.
:mod:`.render` decides what is rendered and reads the result.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from kubelet_winnet._printable import cut

__all__ = ["run_renderer", "shown_command"]

_STDERR_KEPT = 64 * 1024
_CHUNK = 1 << 16


def shown_command(command: Sequence[str]) -> str:
    """The command as the user would type it: the renderer's name, not its full path;
    the engine package as ``helm template``."""
    if command[0] == sys.executable:
        return f"helm template {command[4]} (helm-python-sdk)"
    return " ".join([os.path.basename(command[0]), *command[1:]])


def run_renderer(command: list[str], out: str, max_bytes: int, timeout: float,
                 remote: bool = False) -> str | None:
    """``command``'s stdout into the file ``out``; on anything but success, why (one line).
    ``remote``: the user allowed remote resources, so the network settings pass."""
    import subprocess
    import threading

    shown = shown_command(command)
    memory = _memory_limit(max_bytes)
    release = _hold_signals()  # until the finally below can kill what is started
    try:
        # A session of its own: a timeout, too much output or a signal to us ends the
        # renderer's helpers too, not only the child (one holding stdout open kept the
        # read going after the child was killed).
        child = subprocess.Popen(_bounded(command, memory), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=_renderer_environment(remote),
                                 start_new_session=sys.platform != "win32")
    except OSError as exc:
        release()
        return f"cannot run {shown}: {exc.strerror or type(exc).__name__}"
    except BaseException:  # a signal too: the held signals are released, then re-raised
        release()
        raise
    killed: list[str] = []

    def kill(reason: str) -> None:
        if not killed:
            killed.append(reason)
        _kill_group(child)

    timer = threading.Timer(timeout, kill, ("timeout",))
    timer.daemon = True
    errors = bytearray()
    reader = threading.Thread(target=_drain, args=(child.stderr, errors), daemon=True)
    try:
        release()  # a signal that came while it started is handled from here on
        timer.start()
        reader.start()
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
        _kill_group(child)  # what is left of it: helpers, or all of it on an exception
        child.wait()
        if reader.ident is not None:  # started
            reader.join(5)
        child.stdout.close()  # type: ignore[union-attr]
    if killed == ["timeout"]:
        return (
            f"{shown} did not finish in {timeout:g} seconds (raise --render-timeout)")
    if killed == ["size"]:
        return (f"the output of {shown} is larger than {max_bytes} bytes (raise "
                "the limit with --max-bytes)")
    if status != 0 and any(word in errors for word in _OUT_OF_MEMORY):
        return (
            f"{shown.removesuffix(' (helm-python-sdk)')} ran out of memory: a renderer may "
            f"use {memory >> 20} MiB here (2 GiB and 8 times --max-bytes); raise --max-bytes "
            "for a chart this large")
    if status != 0:
        return _failure(shown, status, errors)
    return None


def _failure(shown: str, status: int, errors: bytes | bytearray) -> str:
    """Why a renderer that ended with ``status`` (not 0) failed, in its words."""
    said = " ".join(_KLOG_HEADER.sub("", errors.decode("utf-8", "replace")).split())
    said = cut(said, 400)
    if status < 0:
        import signal

        name = signal.Signals(-status).name if -status in signal.valid_signals() \
            else f"signal {-status}"
        return f"{shown} was killed by {name}" + (f": {said}" if said else "")
    outside = _OUTSIDE_ROOT.search(said)
    if outside is not None:
        return (
            f"{shown} refused to read {outside[1]}: with its links followed, that file "
            f"lies outside the kustomization's directory {outside[2]}, and kustomize "
            "reads only files inside it")
    failed_exec = _SHELL_EXEC_FAILED.match(said)
    if status in (126, 127) and failed_exec:
        return f"cannot run {shown}: {failed_exec.group(1)}"
    return f"{shown} failed (exit status {status})" + (f": {said}" if said else "")


def _hold_signals() -> Callable[[], None]:
    """Hold SIGTERM and SIGHUP while a renderer starts: one that ended the run inside
    ``Popen`` left the renderer, in a session of its own, running with nobody to kill
    it. The returned function puts the handlers back and delivers what arrived."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # handlers are the main thread's alone
    arrived: list[int] = []
    held: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not None:  # None: not ours
            held[number] = signal.signal(number, lambda signum, _: arrived.append(signum))

    def release() -> None:
        for number, handler in held.items():
            signal.signal(number, handler)
        held.clear()
        for signum in arrived:
            signal.raise_signal(signum)
        arrived.clear()

    return release


def _kill_group(child: Any) -> None:
    """SIGKILL to the renderer's process group (its session: ``start_new_session``);
    the child alone where there are no groups."""
    if sys.platform == "win32":
        if child.poll() is None:
            child.kill()
        return
    import contextlib
    import signal

    # ProcessLookupError: the group is gone (its leader reaped, no helper left).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


# What a renderer sees of our environment: enough to start and find its temporary
# directory, never the rest (CI tokens reached a pod name through a chart's
# `.Files.Get` of /proc/self/environ). PYTHONPATH: the engine is this package.
_ENVIRONMENT_KEPT = ("PATH", "HOME", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL",
                     "LC_CTYPE", "PYTHONPATH", "SYSTEMROOT")
# With --allow-remote, what fetching needs as well: the proxies and the SSH agent.
_ENVIRONMENT_REMOTE = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
                       "https_proxy", "no_proxy", "SSH_AUTH_SOCK")


def _renderer_environment(remote: bool = False) -> dict[str, str]:
    """The environment a renderer runs with: :data:`_ENVIRONMENT_KEPT` (and the network
    settings when ``remote``), each as we have it."""
    kept = _ENVIRONMENT_KEPT + (_ENVIRONMENT_REMOTE if remote else ())
    return {name: os.environ[name] for name in kept if name in os.environ}


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
# kustomize's load restrictor (api/internal/loader/loadrestrictions.go
# RestrictionRootOnly): a file whose real path leaves the kustomization's root.
_OUTSIDE_ROOT = re.compile(r"security; file '([^']*)' is not in or below '([^']*)'")
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
