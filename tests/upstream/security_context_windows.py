"""pkg/kubelet/kuberuntime/security_context_windows_test.go (TestVerifyRunAsNonRoot), as
data. The test calls ``verifyRunAsNonRoot(pod, container, uid, username)`` directly, for
a pod ``bar`` in ``new`` with uid ``12345678`` and one container ``foo``; ``username`` is
the image's user (``image_username`` here) and only pass/fail is asserted. The texts of
the failures come from the source, security_context_windows.go at the same releases.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kuberuntime/security_context_windows_test.go"

V_E63752E = Source(
    FILE,
    "e63752e0f2710cbb0ae36a012878fa1812b14e5a",
    tuple(range(26, 39)),
    "the case-insensitive rows arrived with kubernetes#111009 (Windows: ensure runAsNonRoot "
    "does case-insensitive comparison on username), merged for 1.25; no later stored "
    "version changes the table",
)
V_04791B4 = Source(
    FILE,
    "04791b4906602ffda5ccf9bc4c84d3329f1d7080",
    (),
    "the case-sensitive version of kubernetes#92355, replaced by kubernetes#111009 in 1.25: "
    "older than any kubelet modelled here",
)

# security_context_windows.go (kubelet 1.25+): the two refusals, with Go's %q of
# format.Pod(pod) = "<name>_<namespace>(<uid>)".
TEXT_RUN_AS_USER_NAME = (
    "container's runAsUserName ({user}) which will be regarded as root identity and will "
    'break non-root policy (pod: "bar_new(12345678)", container: foo)'
)
TEXT_IMAGE_USER = (
    "container's runAsUser ({user}) which will be regarded as root identity and will break "
    'non-root policy (pod: "bar_new(12345678)", container: foo)'
)

ROOT = "ContainerAdministrator"
ROOT_UPPER = "CONTAINERADMINISTRATOR"
ANY = "anyone"

# (description, container securityContext or None, image username, fails, which text)
_TABLE: tuple[tuple[str, dict[str, Any] | None, str, bool], ...] = (
    ("Pass if SecurityContext is not set", None, ROOT, False),
    ("Pass if RunAsNonRoot is not set", {}, ROOT, False),
    ("Pass if RunAsNonRoot is false (image user is root)", {"runAsNonRoot": False}, ROOT, False),
    ("Pass if RunAsNonRoot is false (WindowsOptions RunAsUserName is root)",
     {"runAsNonRoot": False, "windowsOptions": {"runAsUserName": ROOT}}, ROOT, False),
    ("Fail if container's RunAsUser is root and RunAsNonRoot is true",
     {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": ROOT}}, ROOT, True),
    ("Fail if container's RunAsUser is root (case-insensitive) and RunAsNonRoot is true",
     {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": ROOT_UPPER}}, ANY, True),
    ("Fail if image's user is root and RunAsNonRoot is true", {"runAsNonRoot": True}, ROOT,
     True),
    ("Fail if image's user is root (case-insensitive) and RunAsNonRoot is true",
     {"runAsNonRoot": True}, ROOT_UPPER, True),
    ("Pass if image's user is non-root and RunAsNonRoot is true", {"runAsNonRoot": True}, ANY,
     False),
    ("Pass if container's user and image's user aren't set and RunAsNonRoot is true",
     {"runAsUser": 0, "seLinuxOptions": {}, "runAsGroup": 0, "runAsNonRoot": True}, "", False),
    ("Pass if image's user is root, container's RunAsUser is not root and RunAsNonRoot is true",
     {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": ANY}}, ROOT, False),
    ("Pass if image's user is root (case-insensitive), container's RunAsUser is not root and "
     "RunAsNonRoot is true",
     {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": ANY}}, ROOT_UPPER, False),
)
# The 04791b49 table: the rows above without the case-insensitive ones and without the
# RunAsUser/SELinuxOptions/RunAsGroup fields of the "aren't set" row.
_OLD = (0, 1, 2, 3, 4, 6, 8)


def _want(sc: dict[str, Any] | None, username: str, fails: bool) -> dict[str, object]:
    if not fails:
        return {"fail": False}
    options = (sc or {}).get("windowsOptions")
    if isinstance(options, dict) and "runAsUserName" in options:
        return {"fail": True, "error": TEXT_RUN_AS_USER_NAME.format(user=options["runAsUserName"])}
    return {"fail": True, "error": TEXT_IMAGE_USER.format(user=username)}


ROWS: tuple[Row, ...] = (
    *(
        Row(V_E63752E, "TestVerifyRunAsNonRoot", desc, {"sc": sc, "username": username},
            _want(sc, username, fails))
        for desc, sc, username, fails in _TABLE
    ),
    *(
        Row(V_04791B4, "TestVerifyRunAsNonRoot", _TABLE[i][0],
            {"sc": _TABLE[i][1], "username": _TABLE[i][2]}, {"fail": _TABLE[i][3]},
            out_of_scope="this version describes kubelets before 1.25 (case-sensitive "
            "comparison); the same row at e63752e0 is run at 1.26-1.38")
        for i in _OLD
    ),
    Row(V_04791B4, "TestVerifyRunAsNonRoot",
        "Pass if container's user and image's user aren't set and RunAsNonRoot is true",
        {"sc": {"runAsNonRoot": True}, "username": ""}, {"fail": False},
        out_of_scope="this version describes kubelets before 1.25; the row's successor at "
        "e63752e0 (with RunAsUser, SELinuxOptions and RunAsGroup set) is run at 1.26-1.38"),
)
SOURCES = (V_E63752E, V_04791B4)
