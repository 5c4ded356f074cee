"""The ``fast_paths`` fixture (tests/conftest.py): a test that takes it runs once with the
fast paths of ``_speedups.FAST_PATHS`` as the process has them and once with every one
switched off."""

from __future__ import annotations

import os

from kubelet_winnet import _speedups

_PROCESS_OFF = os.environ.get("KUBELET_WINNET_NO_FAST_PATHS", "") not in ("", "0")


def test_each_run_sees_its_switches(fast_paths: bool) -> None:
    states = [_speedups.is_on(name) for name in _speedups.FAST_PATHS]
    if fast_paths and not _PROCESS_OFF:
        assert all(states)
    else:
        assert not any(states)
