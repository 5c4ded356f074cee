"""containerd's runtime handler names on Windows, alone in a module so that the linter
(``_lint/rules.py``) reads them without loading the release tables.

containerd's default Windows configuration (internal/cri/config/config_windows.go,
DefaultRuntimeConfig, unchanged from 1.7 to 2.4): the default runtime is process
isolated; "runhcs-wcow-hypervisor" sets SandboxIsolation = 1 (Hyper-V).
"""

from __future__ import annotations

__all__ = ["DEFAULT_RUNTIME_NAME", "HYPERV_HANDLERS", "PROCESS_HANDLERS"]

DEFAULT_RUNTIME_NAME = "runhcs-wcow-process"
HYPERV_HANDLERS = frozenset({"runhcs-wcow-hypervisor"})
PROCESS_HANDLERS = frozenset({DEFAULT_RUNTIME_NAME})
