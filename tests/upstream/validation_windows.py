"""pkg/apis/core/validation/validation_test.go, as data: TestValidateWindowsHostProcessPod
(the API server's HostProcess rules, which the ``check`` rules host-process-mixed,
host-process-needs-host-network, host-process-pod-false and host-process-override quote
from validation.go's ``validateWindowsHostProcessPod``).

Read at 000f2605 (888,659 characters; the table sits at characters 805,000-817,000). The
rows give ``expectError`` only, no texts: a row agrees when ``check`` reports an error
finding from one of those rules exactly when the row expects an error. Rows use
``containerName`` ("container") for every container, as upstream does.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/apis/core/validation/validation_test.go"

V_000F = Source(
    FILE,
    "000f26050b9be6fb3d79fae95e06b47fc96128cd",
    tuple(range(26, 39)),
    "validateWindowsHostProcessPod runs without the WindowsHostProcessContainers gate (GA "
    "and locked on from 1.26); the check rules do not depend on the kubelet release",
)

_T: dict[str, Any] = {"windowsOptions": {"hostProcess": True}}
_F: dict[str, Any] = {"windowsOptions": {"hostProcess": False}}


def _c(sc: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": "container", **({"securityContext": sc} if sc else {})}


def _spec(pod: dict[str, Any] | None, network: bool, containers: list[dict[str, Any]],
          init: list[dict[str, Any]] | None = None,
          ephemeral: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if pod is not None:
        spec["securityContext"] = pod
    if network:
        spec["hostNetwork"] = True
    if init is not None:
        spec["initContainers"] = init
    if ephemeral is not None:
        spec["ephemeralContainers"] = ephemeral
    return spec


_ALLOW = ("capabilities.AllowPrivileged is the API server's --allow-privileged flag, not "
          "part of the pod; check assumes the default (true)")
# (name as upstream, expectError, spec, out_of_scope)
_ROWS: tuple[tuple[str, bool, dict[str, Any], str], ...] = (
    ("Spec with feature enabled, pod-wide HostProcess=true, and HostNetwork unset should not "
     "validate", True, _spec(_T, False, [_c()]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=ture, and HostNetwork set should "
     "validate", False, _spec(_T, True, [_c()]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=ture, HostNetwork set, and containers "
     "setting HostProcess=true should validate", False,
     _spec(_T, True, [_c(_T)], [_c(_T)]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=nil, HostNetwork set, and all "
     "containers setting HostProcess=true should validate", False,
     _spec(None, True, [_c(_T)], [_c(_T)]), ""),
    ("Pods with feature enabled, some containers setting HostProcess=true, and others "
     "setting HostProcess=false should not validate", True,
     _spec(None, True, [_c(_T)], [_c(_F)]), ""),
    ("Spec with feature enabled, some containers setting HostProcess=true, and other leaving "
     "HostProcess unset should not validate", True, _spec(None, True, [_c(_T)], [_c()]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=true, some containers setting "
     "HostProcess=true, and init containers setting HostProcess=false should not validate",
     True, _spec(_T, True, [_c(_T)], [_c(_F)]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=true, some containers setting "
     "HostProcess=true, and others setting HostProcess=false should not validate", True,
     _spec(_T, True, [_c(_T), _c(_F)]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=true, some containers setting "
     "HostProcess=true, and others leaving HostProcess=nil should validate", False,
     _spec(_T, True, [_c(_T)], [_c()]), ""),
    ("Spec with feature enabled, pod-wide HostProcess=false, some contaienrs setting "
     "HostProccess=true should not validate", True, _spec(_F, True, [_c(_T)], [_c()]), ""),
    ("Pod's HostProcess set to true but all containers override to false should not "
     "validate", True, _spec(_T, True, [_c(_F)]), ""),
    ("Valid HostProcess pod should spec should not validate if allowPrivileged is not set",
     True, _spec(None, True, [_c(_T)]), _ALLOW),
    ("Non-HostProcess ephemeral container in HostProcess pod should not validate", True,
     _spec(_T, True, [_c()], ephemeral=[{"securityContext": _F}]), ""),
    ("HostProcess ephemeral container in HostProcess pod should validate", False,
     _spec(_T, True, [_c()], ephemeral=[{}]), ""),
    ("Non-HostProcess ephemeral container in Non-HostProcess pod should validate", False,
     _spec(None, False, [_c()], ephemeral=[{"securityContext": _F}]), ""),
    ("HostProcess ephemeral container in Non-HostProcess pod should not validate", True,
     _spec(None, False, [_c()], ephemeral=[{"securityContext": _T}]), ""),
)

ROWS: tuple[Row, ...] = tuple(
    Row(V_000F, "TestValidateWindowsHostProcessPod", name, {"podSpec": spec},
        {"expectError": expect}, out_of_scope=reason)
    for name, expect, spec, reason in _ROWS
)
NOT_TRANSCRIBED = (
    ("the other Windows rows (TestValidateWindowsSecurityContext, TestValidateOS, the "
     "windows cases of TestValidatePodSpec)",
     "not located in the 888,659-character file before the deadline; validateWindows' "
     "forbidden fields are checked against validation.go in tests/lint"),
)
SOURCES = (V_000F,)
