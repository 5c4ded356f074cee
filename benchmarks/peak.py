"""Peak RSS of a benchmark's child process, reported by the child itself.

``wait4``'s ``ru_maxrss`` would also count the parent's pages at the fork before exec,
so a child started with :data:`PRELUDE` in front of its code writes its own ``VmHWM``
on stderr at exit, and :func:`peak_mb` reads it back (falling back to ``ru_maxrss``).
"""

from __future__ import annotations

import resource

__all__ = ["CONSOLE_SCRIPT", "PRELUDE", "peak_mb"]

PRELUDE = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            for line in status:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    sys.stderr.write('VmHWM ' + line.split()[1] + '\\n')\n"
    "    except OSError:\n"
    "        pass\n"
    "atexit.register(_peak)\n"
)
# `python -c CONSOLE_SCRIPT ARGS...` runs the CLI as the `kubelet-winnet` script does.
CONSOLE_SCRIPT = PRELUDE + "from kubelet_winnet.cli import main\nsys.exit(main())\n"


def peak_mb(stderr: bytes, usage: resource.struct_rusage) -> float:
    """The child's own peak RSS from its stderr, else ``ru_maxrss``, in MB."""
    reported = [line for line in stderr.splitlines() if line.startswith(b"VmHWM ")]
    peak_kb = int(reported[-1].split()[1]) if reported else usage.ru_maxrss
    return peak_kb / 1024
