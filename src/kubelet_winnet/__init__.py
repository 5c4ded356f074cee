"""kubelet-winnet: what the kubelet tells the container runtime about networking for a
Windows pod (KEP-3503), version by version, and how a runtime applies it through HCN.

Importing this package loads only the errors; each public name loads its module on first
use (translation: protobuf and the generated ``runtime.v1`` module); ``kubernetes``,
pydantic, YAML and HCN only when a call needs them.
"""

from __future__ import annotations

# Private alias: `TYPE_CHECKING` / `Any` must not become public names of the package.
import typing as _typing

from kubelet_winnet._version import __version__
from kubelet_winnet.errors import (
    ClusterAccessError,
    CriEndpointError,
    CriError,
    FeatureGateError,
    HcnError,
    HcnNotFoundError,
    InvalidArgumentError,
    InvalidPodError,
    InvalidRequestError,
    InvalidUtf8Error,
    NodeConfigError,
    NotRegularFileError,
    SandboxConfigError,
    StateFileError,
    UnsupportedVersionError,
    WinnetError,
)

if _typing.TYPE_CHECKING:
    from kubelet_winnet._judgement.explain import explain
    from kubelet_winnet._judgement.public import judge
    from kubelet_winnet._judgement.verdict import Network, NodeKnowledge, Verdict
    from kubelet_winnet._kubelet.container_config import container_config, create_container_request
    from kubelet_winnet._kubelet.explain import (
        ExplainStep,
        Explanation,
        Finding,
        WarningCode,
    )
    from kubelet_winnet._kubelet.feature_gates import FeatureGates, parse_feature_gates
    from kubelet_winnet._kubelet.kubelet_version import KubeletVersion, parse_kubelet_version
    from kubelet_winnet._kubelet.model import Pod
    from kubelet_winnet._kubelet.node import NodeContext
    from kubelet_winnet._kubelet.profile import GateResolution, kubelet_profile
    from kubelet_winnet._kubelet.sandbox_config import pod_sandbox_config, run_pod_sandbox_request
    from kubelet_winnet._kubelet.timeline import DEFAULT_KUBELET_VERSION
    from kubelet_winnet._kubelet.translate import (
        windows_container_security_context,
        windows_sandbox_config,
    )
    from kubelet_winnet._lint.node_checks import NodeFinding, node_findings, node_knowledge

# Each name's module, imported when the name is first used: a command that needs no
# protobuf message (``kubelet-winnet check``) starts without loading protobuf.
_LAZY = {
    "container_config": "container_config",
    "create_container_request": "container_config",
    "ExplainStep": "explain",
    "Explanation": "explain",
    "Finding": "explain",
    "WarningCode": "explain",
    "explain": "_judgement.explain",
    "judge": "_judgement.public",
    "Network": "_judgement.verdict",
    "NodeKnowledge": "_judgement.verdict",
    "Verdict": "_judgement.verdict",
    "NodeFinding": "_lint.node_checks",
    "node_findings": "_lint.node_checks",
    "node_knowledge": "_lint.node_checks",
    "NodeContext": "node",
    "DEFAULT_KUBELET_VERSION": "timeline",
    "FeatureGates": "feature_gates",
    "GateResolution": "profile",
    "KubeletVersion": "kubelet_version",
    "kubelet_profile": "profile",
    "parse_feature_gates": "feature_gates",
    "parse_kubelet_version": "kubelet_version",
    "pod_sandbox_config": "sandbox_config",
    "run_pod_sandbox_request": "sandbox_config",
    "windows_container_security_context": "translate",
    "windows_sandbox_config": "translate",
    "Pod": "model",  # pydantic: loaded only when asked for
}

__all__ = [
    "DEFAULT_KUBELET_VERSION",
    "ClusterAccessError",
    "CriEndpointError",
    "CriError",
    "ExplainStep",
    "Explanation",
    "FeatureGateError",
    "FeatureGates",
    "Finding",
    "GateResolution",
    "HcnError",
    "HcnNotFoundError",
    "InvalidArgumentError",
    "InvalidPodError",
    "InvalidRequestError",
    "InvalidUtf8Error",
    "KubeletVersion",
    "Network",
    "NodeConfigError",
    "NodeContext",
    "NodeFinding",
    "NodeKnowledge",
    "NotRegularFileError",
    "Pod",
    "SandboxConfigError",
    "StateFileError",
    "UnsupportedVersionError",
    "Verdict",
    "WarningCode",
    "WinnetError",
    "__version__",
    "container_config",
    "create_container_request",
    "explain",
    "judge",
    "kubelet_profile",
    "node_findings",
    "node_knowledge",
    "parse_feature_gates",
    "parse_kubelet_version",
    "pod_sandbox_config",
    "run_pod_sandbox_request",
    "windows_container_security_context",
    "windows_sandbox_config",
]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubelet_winnet' has no attribute {name!r}")
    import importlib

    where = module if "." in module else f"_kubelet.{module}"  # most live in the model
    value = getattr(importlib.import_module(f"kubelet_winnet.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
