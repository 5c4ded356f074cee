"""pkg/kubelet/kuberuntime/util/util_test.go, as data: TestNamespacesForPod (the
sandbox's ``linux.security_context.namespace_options``) and TestPodSandboxChanged.

Two stored versions: cb6ff2d8 (five NamespacesForPod rows) and 025958e5 (the same five plus
four user-namespace rows, and one more PodSandboxChanged row).
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kuberuntime/util/util_test.go"

V_CB6FF2D = Source(
    FILE,
    "cb6ff2d8ce3595f88570f82c7d0e6d98910afd3c",
    tuple(range(26, 30)),
    "NamespacesForPod without the user-namespace rows, which came with the runtime-handler "
    "check of UserNamespacesSupport (beta in 1.30)",
)
V_025958E = Source(
    FILE,
    "025958e5edea22785b3fa64c0d656d94a369e12e",
    tuple(range(30, 39)),
    "the newest stored version: the user-namespace rows check runtime handlers "
    "(SupportsUserNamespaces), which the kubelet does from 1.30",
)

# NamespaceMode: POD 0, CONTAINER 1, NODE 2 (api.proto).
POD, CONTAINER, NODE = "POD", "CONTAINER", "NODE"

_NAMESPACES: tuple[tuple[str, dict[str, Any] | None, dict[str, str]], ...] = (
    ("nil pod -> default v1 namespaces", None, {"ipc": POD, "network": POD, "pid": CONTAINER}),
    ("v1.Pod default namespaces", {}, {"ipc": POD, "network": POD, "pid": CONTAINER}),
    ("Host Namespaces", {"hostIPC": True, "hostNetwork": True, "hostPID": True},
     {"ipc": NODE, "network": NODE, "pid": NODE}),
    ("Shared Process Namespace (feature enabled)", {"shareProcessNamespace": True},
     {"ipc": POD, "network": POD, "pid": POD}),
    ("Shared Process Namespace, redundant flag (feature enabled)",
     {"shareProcessNamespace": False}, {"ipc": POD, "network": POD, "pid": CONTAINER}),
)
_NIL = ("the library builds requests for a pod; a nil *v1.Pod has no counterpart (the "
        "defaults it pins are the \"v1.Pod default namespaces\" row's)")
_USERNS_REASON = (
    "user namespaces: the expectation depends on FakeRuntimeHelper's Linux ID mappings and "
    "runtime handlers; on Windows the API rejects spec.hostUsers for spec.os.name windows "
    "and the kubelet's userns manager (userns_manager_windows.go) maps nothing, so there "
    "is no NodeContext to map the fake to"
)
_USERNS = (
    ("hostUsers: false and feature enabled", {"hostUsers": False},
     {"ipc": POD, "network": POD, "pid": CONTAINER, "userns": "POD, 65536 ids at 65536"}),
    ("hostUsers: false and feature disabled --> error", {"hostUsers": False}, {"error": True}),
    ("hostUsers: true and feature disabled --> error", {"hostUsers": True}, {"error": True}),
    ("error if runtime handler not found", {"hostUsers": False}, {"error": True}),
    ("error if runtime handler does not support userns", {"hostUsers": False},
     {"error": True}),
)
_SANDBOX_CHANGED_REASON = (
    "PodSandboxChanged decides whether to recreate the sandbox from the runtime's sandbox "
    "statuses (the fake's PodStatus); no request field the library builds depends on it "
    "(the caller passes sandbox_attempt)"
)
_SANDBOX_CHANGED = (
    ("Pod with no existing sandboxes", {"changed": True, "attempt": 0, "sandboxID": ""}),
    ("Pod with multiple ready sandbox statuses",
     {"changed": True, "attempt": 2, "sandboxID": "sandboxID2"}),
    ("Pod with no ready sandbox statuses",
     {"changed": True, "attempt": 2, "sandboxID": "sandboxID2"}),
    ("Pod with ready sandbox status but network namespace mismatch",
     {"changed": True, "attempt": 1, "sandboxID": ""}),
    ("Pod with ready sandbox status but no IP",
     {"changed": True, "attempt": 1, "sandboxID": "sandboxID1"}),
    ("Pod with ready sandbox status with IP",
     {"changed": False, "attempt": 0, "sandboxID": "sandboxID1"}),
)
_SANDBOX_CHANGED_NEW = (
    ("Pod with multiple sandboxes but ready one is not latest",
     {"changed": False, "attempt": 1, "sandboxID": "sandboxID1"}),
)


def _rows(source: Source, newest: bool) -> list[Row]:
    rows = [
        Row(source, "TestNamespacesForPod", name, {"spec": spec}, want,
            out_of_scope=_NIL if spec is None else "")
        for name, spec, want in _NAMESPACES
    ]
    if newest:
        rows += [Row(source, "TestNamespacesForPod", name, {"spec": spec}, want,
                     out_of_scope=_USERNS_REASON) for name, spec, want in _USERNS]
    changed = _SANDBOX_CHANGED + (_SANDBOX_CHANGED_NEW if newest else ())
    rows += [Row(source, "TestPodSandboxChanged", name, {}, want,
                 out_of_scope=_SANDBOX_CHANGED_REASON) for name, want in changed]
    return rows


ROWS: tuple[Row, ...] = (*_rows(V_CB6FF2D, newest=False), *_rows(V_025958E, newest=True))
SOURCES = (V_CB6FF2D, V_025958E)
