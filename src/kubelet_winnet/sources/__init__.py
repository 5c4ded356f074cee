"""The readers every command stands on, for Python callers too: manifests
(:func:`read_manifests`: files, directories, stdin, charts and kustomizations rendered),
the files copied off a node (:func:`read_node`), and a cluster (a live API server or a
dump, :mod:`kubelet_winnet.sources.cluster`). Everything here reads; nothing judges.

Each name loads its module on first use, so reading manifests never loads the node
files' TOML reader.
"""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from kubelet_winnet.sources.charts.render import RenderOptions
    from kubelet_winnet.sources.manifest_files import read_manifests
    from kubelet_winnet.sources.manifests import BadInput, Document, Limits, Skipped
    from kubelet_winnet.sources.node import NodeFiles, read_node

_LAZY = {
    "BadInput": "manifests",
    "Document": "manifests",
    "Limits": "manifests",
    "NodeFiles": "node",
    "RenderOptions": "charts.render",
    "Skipped": "manifests",
    "read_manifests": "manifest_files",
    "read_node": "node",
}

__all__ = ["BadInput", "Document", "Limits", "NodeFiles", "RenderOptions", "Skipped",
           "read_manifests", "read_node"]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubelet_winnet.sources' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"kubelet_winnet.sources.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
