"""RuntimeClass objects (``node.k8s.io/v1``) of an input: the handler each names, which is
how the judgement tells a pod's runtime handler (and so its isolation) apart.

Every command that meets RuntimeClasses (``check``, ``translate`` and ``explain`` in their
manifests, ``audit`` in a cluster or a dump) reads them here.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["MAX_RUNTIME_CLASSES", "add_runtime_class"]

# Bounded: the classes are held for the whole run, and an input may hold any number.
MAX_RUNTIME_CLASSES = 10_000


def add_runtime_class(classes: MutableMapping[str, str], obj: Mapping[str, Any]) -> None:
    """Record the RuntimeClass ``obj`` in ``classes`` (its ``metadata.name`` to its
    ``handler``), up to :data:`MAX_RUNTIME_CLASSES`. A class without a name or a string
    handler names nothing a pod can use, and is passed over."""
    if len(classes) >= MAX_RUNTIME_CLASSES:
        return
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    handler = obj.get("handler")
    if isinstance(name, str) and name and isinstance(handler, str):
        classes[name] = handler
