"""``verifyRunAsNonRoot`` on Windows (pkg/kubelet/kuberuntime/security_context_windows.go):
the check ``generateContainerConfig`` makes after building the environment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.kubelet_pods import ERROR_RULE
from kubelet_winnet._kubelet.pod import (
    PodView,
    echo,
    get_bool,
    get_object,
    get_optional_str,
    get_str,
)
from kubelet_winnet.errors import SandboxConfigError

__all__ = ["WINDOWS_ROOT_USER_NAME", "verify_run_as_non_root"]

WINDOWS_ROOT_USER_NAME = "ContainerAdministrator"  # windowsRootUserName


def _effective_non_root(
    view: PodView, container: Mapping[str, Any], at: str
) -> tuple[bool | None, str | None]:
    """(runAsNonRoot, windowsOptions.runAsUserName) of
    ``securitycontext.DetermineEffectiveSecurityContext``: the container's value of each
    field when set, else the pod's."""
    non_root: bool | None = None
    user_name: str | None = None
    # The pod's context, then the container's: each field set in the latter wins.
    for owner, where in ((view.spec, view.spec_at), (container, at)):
        context = get_object(owner, "securityContext", where)
        if context is None:
            continue
        here = f"{where}securityContext."
        options = get_object(context, "windowsOptions", here)
        if options is not None:
            user = get_optional_str(options, "runAsUserName", f"{here}windowsOptions.")
            if user is not None:  # a pointer in Go: "" set on the container wins too
                user_name = user
        run_as_non_root = get_bool(context, "runAsNonRoot", here)
        if run_as_non_root is not None:
            non_root = run_as_non_root
    return non_root, user_name


def verify_run_as_non_root(
    view: PodView, container: Mapping[str, Any], at: str, image_username: str
) -> None:
    """``verifyRunAsNonRoot`` on Windows, called by ``generateContainerConfig`` after the
    environment is built: with an effective ``runAsNonRoot: true``, the effective
    ``runAsUserName`` (else the image's user) must not be ``ContainerAdministrator``,
    compared case-insensitively (``strings.EqualFold``, PR #111009, kubelet 1.25+)."""
    non_root, user_name = _effective_non_root(view, container, at)
    if non_root is not True:
        return
    name, namespace, uid = view.identity()
    # format.Pod: "<name>_<namespace>(<uid>)", printed with %q.
    where = f"(pod: {golang.quote(echo(f'{name}_{namespace}({uid})'))}, container: " + echo(
        get_str(container, "name", at)
    ) + ")"
    if user_name is not None:
        if user_name.casefold() == WINDOWS_ROOT_USER_NAME.casefold():
            raise SandboxConfigError(
                f"container's runAsUserName ({echo(user_name)}) which will be regarded as "
                f"root identity and will break non-root policy {where}",
                ERROR_RULE,
            )
        return
    if image_username and image_username.casefold() == WINDOWS_ROOT_USER_NAME.casefold():
        raise SandboxConfigError(
            f"container's runAsUser ({echo(image_username)}) which will be regarded as root "
            f"identity and will break non-root policy {where}",
            ERROR_RULE,
        )
