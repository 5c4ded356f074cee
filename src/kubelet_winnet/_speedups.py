"""The one door to the fast paths.

The code a reviewer reads is the code that runs: every kubelet step has one reference
implementation. A fast path may stand beside a reference only when it earns its place on a
row a user runs (``benchmarks/ablate.py``), and it is chosen here and nowhere else, the way
CPython's ``json`` picks its C scanner at one point. Tests run the modules a fast path
speeds up with it on and off (``tests/conftest.py``: the ``fast_paths`` fixture), and a
fast path gives up only by raising :class:`GiveUp`: any other exception is a bug and
propagates, in tests and in use alike, never swallowed into the reference path.

``KUBELET_WINNET_NO_FAST_PATHS=1`` in the environment switches every fast path off for a
whole process (the ablation benchmark and CI's reference-only run use it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FAST_PATHS", "GiveUp", "is_on", "switched_off"]

#: Every fast path there is: its name, then what it speeds up and where its reference is.
#: A fast path not named here cannot be switched, so it cannot exist.
FAST_PATHS: dict[str, str] = {
    "list-items": (
        "cli/input: a kubectl-layout JSON List's items decoded by msgspec; the reference is "
        "the careful reader of the same module"
    ),
}

_ENV = "KUBELET_WINNET_NO_FAST_PATHS"
_off: set[str] = set(FAST_PATHS) if os.environ.get(_ENV, "") not in ("", "0") else set()


class GiveUp(Exception):  # noqa: N818 - a signal, not an error a user ever sees
    """Raised by a fast path that cannot answer; the caller then runs the reference."""


def is_on(name: str) -> bool:
    """Whether fast path ``name`` may run now (a name not in :data:`FAST_PATHS` is a bug)."""
    if name not in FAST_PATHS:
        raise KeyError(f"no fast path is named {name!r}")
    return name not in _off


@contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """Run the block with the named fast paths (all of them when none is named) off."""
    chosen = set(names) if names else set(FAST_PATHS)
    unknown = chosen - set(FAST_PATHS)
    if unknown:
        raise KeyError(f"no fast path is named {sorted(unknown)[0]!r}")
    before = set(_off)
    _off.update(chosen)
    try:
        yield
    finally:
        _off.clear()
        _off.update(before)
