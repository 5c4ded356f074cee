"""Every transcribed upstream file: its data module, in the order the conformance page
lists them (scripts/render_docs.py renders docs/conformance.md from this)."""

from __future__ import annotations

from types import ModuleType

from tests.upstream import (
    container_helpers,
    dns,
    expansion,
    kubelet_pods,
    kubelet_pods_env,
    kubelet_pods_windows,
    kuberuntime_container_windows,
    kuberuntime_sandbox,
    kuberuntime_util,
    labels,
    not_transcribed,
    resource_helpers,
    security_context_windows,
    validation_windows,
)

__all__ = ["MODULES"]

MODULES: tuple[ModuleType, ...] = (
    kuberuntime_sandbox,
    kuberuntime_container_windows,
    security_context_windows,
    kuberuntime_util,
    labels,
    container_helpers,
    kubelet_pods,
    kubelet_pods_env,
    kubelet_pods_windows,
    resource_helpers,
    dns,
    expansion,
    validation_windows,
    not_transcribed,
)
