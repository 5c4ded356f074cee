"""containerd's runtime handler names on Windows, alone in a module so that the linter
(``_lint/rules.py``) reads them without loading the release tables.

containerd's default Windows configuration (internal/cri/config/config_windows.go,
DefaultRuntimeConfig, unchanged from 1.7 to 2.4): the default runtime is process
isolated; "runhcs-wcow-hypervisor" sets SandboxIsolation = 1 (Hyper-V).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

__all__ = ["DEFAULT_ISOLATION", "DEFAULT_RUNTIME_NAME", "HYPERV_HANDLERS", "PROCESS_HANDLERS",
           "Isolation"]

Isolation = Literal["process", "hyperv"]

DEFAULT_RUNTIME_NAME = "runhcs-wcow-process"
HYPERV_HANDLERS = frozenset({"runhcs-wcow-hypervisor"})
PROCESS_HANDLERS = frozenset({DEFAULT_RUNTIME_NAME})
# The handlers of the default configuration and their isolation: what a node registers
# before its config.toml adds or overrides any (read-only; copy it to build on it).
DEFAULT_ISOLATION: Mapping[str, Isolation] = MappingProxyType({
    **dict.fromkeys(PROCESS_HANDLERS, "process"),
    **dict.fromkeys(HYPERV_HANDLERS, "hyperv"),
})
