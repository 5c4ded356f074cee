"""``sources/runtime_classes.py``: the one reader of RuntimeClass objects (node.k8s.io/v1
``RuntimeClass``: ``metadata.name`` and ``handler``, both strings)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet_winnet.sources.runtime_classes import MAX_RUNTIME_CLASSES, add_runtime_class


def _class(name: Any, handler: Any) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": name}, "handler": handler}


def test_a_class_maps_its_name_to_its_handler_and_a_later_one_wins() -> None:
    classes: dict[str, str] = {}
    add_runtime_class(classes, _class("hyperv", "runhcs-wcow-hypervisor"))
    add_runtime_class(classes, _class("process", "runhcs-wcow-process"))
    add_runtime_class(classes, _class("hyperv", "other"))
    assert classes == {"hyperv": "other", "process": "runhcs-wcow-process"}


@pytest.mark.parametrize("obj", [
    _class("", "h"), _class(None, "h"), _class(3, "h"), _class("c", None), _class("c", 1),
    {"kind": "RuntimeClass", "metadata": "c", "handler": "h"},
    {"kind": "RuntimeClass", "handler": "h"},
])
def test_a_class_no_pod_can_name_is_passed_over(obj: dict[str, Any]) -> None:
    classes: dict[str, str] = {}
    add_runtime_class(classes, obj)
    assert classes == {}


def test_the_classes_are_bounded() -> None:
    classes = {f"c{i}": "h" for i in range(MAX_RUNTIME_CLASSES)}
    add_runtime_class(classes, _class("one-more", "h"))
    assert len(classes) == MAX_RUNTIME_CLASSES and "one-more" not in classes
