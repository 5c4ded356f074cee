"""The public translation: pod in, CRI ``runtime.v1`` message out, as one kubelet would.

An adapter around :mod:`kubelet_winnet._kubelet.rules`: resolve the kubelet profile
(:mod:`~kubelet_winnet._kubelet.profile`), read the pod
(:mod:`~kubelet_winnet._kubelet.pod`), decide,
build protobuf (:mod:`~kubelet_winnet._kubelet.messages`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import quoted, type_name
from kubelet_winnet._kubelet.messages import (
    container_security_context_message,
    sandbox_config_message,
)
from kubelet_winnet._kubelet.pod import is_utf8, read_pod
from kubelet_winnet._kubelet.profile import kubelet_profile
from kubelet_winnet._kubelet.rules import (
    PodFacts,
    SandboxDecision,
    decide_container,
    decide_sandbox,
)
from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError, SandboxConfigError

if TYPE_CHECKING:
    from kubelet_winnet._kubelet.feature_gates import FeatureGatesInput
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersionInput
    from kubelet_winnet._kubelet.pod import PodInput

__all__ = ["accepted_decision", "windows_container_security_context", "windows_sandbox_config"]


def windows_sandbox_config(
    pod: PodInput,
    *,
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> api_pb2.WindowsPodSandboxConfig:
    """The ``WindowsPodSandboxConfig`` that kubelet ``kubelet_version`` sends for ``pod``.

    Raises ``SandboxConfigError`` (the kubelet's text) when the kubelet refuses the pod,
    ``InvalidPodError`` for malformed input, ``UnsupportedVersionError`` and
    ``FeatureGateError`` for a kubelet profile that cannot exist, ``InvalidArgumentError``
    for arguments of the wrong type.
    """
    profile = kubelet_profile(kubelet_version, feature_gates)
    return sandbox_config_message(accepted_decision(read_pod(pod), profile.sets_namespace_options))


def accepted_decision(facts: PodFacts, sets_namespace_options: bool) -> SandboxDecision:
    """The kubelet's decision for a pod read into ``facts`` (:func:`read_pod`) under a
    resolved profile, or its ``SandboxConfigError``: what :func:`windows_sandbox_config`
    encodes, for callers that resolve the profile once for many pods (``translate``)."""
    decision = decide_sandbox(facts, sets_namespace_options)
    if decision.error is not None:
        raise SandboxConfigError(decision.error, decision.error_rule or "")
    return decision


def windows_container_security_context(
    pod: PodInput,
    container_name: str,
    *,
    image_username: str = "",
    kubelet_version: KubeletVersionInput = DEFAULT_KUBELET_VERSION,
    feature_gates: FeatureGatesInput = None,
) -> api_pb2.WindowsContainerSecurityContext:
    """The ``WindowsContainerSecurityContext`` for the init, regular or ephemeral container
    named ``container_name`` (the first one in the kubelet's visiting order).

    ``image_username`` is the user configured in the image; the effective
    ``runAsUserName`` overrides it. The kubelet version does not change this message
    (``WindowsNamespaceOption`` was never added to it) but is still validated.
    """
    kubelet_profile(kubelet_version, feature_gates)
    if type(container_name) is not str:
        raise InvalidArgumentError("container_name", "a string", type_name(container_name))
    if type(image_username) is not str:
        raise InvalidArgumentError("image_username", "a string", type_name(image_username))
    if not is_utf8(image_username):
        raise InvalidPodError("image_username", "not valid Unicode (contains a lone surrogate)")
    facts = read_pod(pod)
    for container in facts.containers:
        if container.name == container_name:
            return container_security_context_message(
                decide_container(facts, container, image_username)
            )
    raise InvalidPodError(
        "spec",
        f"no container named {quoted(container_name)} in initContainers, containers or "
        "ephemeralContainers",
    )
