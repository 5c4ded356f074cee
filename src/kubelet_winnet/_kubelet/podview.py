"""The request builders' view of a pod, for imports from before the one reading layer:
its home is :mod:`kubelet_winnet._kubelet.pod`."""

from __future__ import annotations

from kubelet_winnet._kubelet.pod import (
    PodView,
    container_index,
    get_objects,
    get_str,
    not_utf8_error,
    view_pod,
)

__all__ = ["PodView", "container_index", "get_objects", "get_str", "not_utf8_error", "view_pod"]
