"""The public translation: pod in, CRI ``runtime.v1`` message out, as one kubelet would.

An adapter around :mod:`kubelet_winnet._rules`: resolve the kubelet profile, read the pod,
decide, build protobuf.
"""

from __future__ import annotations

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._featuregates import GateResolution, parse_feature_gates, resolve_gates
from kubelet_winnet._messages import container_security_context_message, sandbox_config_message
from kubelet_winnet._pod import is_utf8, read_pod
from kubelet_winnet._rules import decide_container, decide_sandbox
from kubelet_winnet._versions import DEFAULT_KUBELET_VERSION, parse_kubelet_version
from kubelet_winnet.errors import InvalidPodError, SandboxConfigError

__all__ = ["kubelet_profile", "windows_container_security_context", "windows_sandbox_config"]

_PROFILES: dict[tuple[object, object], GateResolution] = {}


def kubelet_profile(
    kubelet_version: object = DEFAULT_KUBELET_VERSION, feature_gates: object = None
) -> GateResolution:
    """``WindowsHostNetwork`` as kubelet ``kubelet_version`` started with ``feature_gates``
    sees it. Raises ``UnsupportedVersionError`` or ``FeatureGateError``."""
    key = (kubelet_version, feature_gates)
    try:
        return _PROFILES[key]
    except (KeyError, TypeError):  # TypeError: an unhashable mapping of gates
        pass
    resolution = resolve_gates(
        parse_kubelet_version(kubelet_version), parse_feature_gates(feature_gates)
    )
    try:
        if len(_PROFILES) < 1024:
            _PROFILES[key] = resolution
    except TypeError:
        pass
    return resolution


def windows_sandbox_config(
    pod: object,
    *,
    kubelet_version: object = DEFAULT_KUBELET_VERSION,
    feature_gates: object = None,
) -> api_pb2.WindowsPodSandboxConfig:
    """The ``WindowsPodSandboxConfig`` that kubelet ``kubelet_version`` sends for ``pod``.

    Raises ``SandboxConfigError`` (the kubelet's text) when the kubelet refuses the pod,
    ``InvalidPodError`` for malformed input, ``UnsupportedVersionError`` and
    ``FeatureGateError`` for a kubelet profile that cannot exist.
    """
    try:  # kubelet_profile's cache, looked up inline: this runs once per pod event
        profile = _PROFILES[kubelet_version, feature_gates]
    except (KeyError, TypeError):
        profile = kubelet_profile(kubelet_version, feature_gates)
    decision = decide_sandbox(read_pod(pod), profile.sets_namespace_options)
    if decision.error is not None:
        raise SandboxConfigError(decision.error, decision.error_rule or "")
    return sandbox_config_message(decision)


def windows_container_security_context(
    pod: object,
    container_name: str,
    *,
    image_username: str = "",
    kubelet_version: object = DEFAULT_KUBELET_VERSION,
    feature_gates: object = None,
) -> api_pb2.WindowsContainerSecurityContext:
    """The ``WindowsContainerSecurityContext`` for the init, regular or ephemeral container
    named ``container_name`` (the first one in the kubelet's visiting order).

    ``image_username`` is the user configured in the image; the effective
    ``runAsUserName`` overrides it. The kubelet version does not change this message
    (``WindowsNamespaceOption`` was never added to it) but is still validated.
    """
    kubelet_profile(kubelet_version, feature_gates)
    if not isinstance(container_name, str):
        raise InvalidPodError(
            "container_name", f"expected a string, got {type(container_name).__name__}"
        )
    if not isinstance(image_username, str):
        raise InvalidPodError(
            "image_username", f"expected a string, got {type(image_username).__name__}"
        )
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
        f"no container named {container_name!r} in initContainers, containers or "
        "ephemeralContainers",
    )
