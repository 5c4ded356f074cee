"""CNI network configurations (``.conf``: one plugin; ``.conflist``: ``plugins``), read
through the input layer, as :class:`kubelet_winnet.runtime.CniNetwork`: each plugin's
``type``, the capabilities it declares true (CNI ``CONVENTIONS.md``: a runtime inserts
only those), and flannel's ``delegate.type``.

containerd on Windows loads one network, the first file of ``conf_dir`` in name order
(``max_conf_num = 1``, containerd ``internal/cri/config/config_windows.go``; libcni
``ConfFiles`` lists ``.conf``, ``.conflist`` and ``.json`` sorted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelet_winnet.cli.input import DEFAULT_LIMITS, BadInput, Limits, read_source
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import CniNetwork, CniPlugin

__all__ = ["CNI_SUFFIXES", "parse_cni", "read_cni"]

CNI_SUFFIXES = (".conf", ".conflist", ".json")


def _plugin(body: Any, where: Callable[..., str]) -> CniPlugin:
    if not isinstance(body, dict):
        raise NodeConfigError(where(), "a CNI plugin configuration must be an object")
    kind = body.get("type")
    if not isinstance(kind, str) or not kind:
        raise NodeConfigError(where(), "a CNI plugin configuration needs a type")
    capabilities = body.get("capabilities", {})
    if not isinstance(capabilities, dict):
        raise NodeConfigError(where(), "capabilities must be an object of booleans")
    for name, on in capabilities.items():
        # libcni decodes into map[string]bool (pkg/types/types.go NetConf): another value
        # fails the whole file, so the network does not load; null is false.
        if on is not None and type(on) is not bool:
            raise NodeConfigError(where("capabilities", name),
                                  f"capabilities.{name} must be true or false")
    declared = frozenset(name for name, on in capabilities.items() if on is True)
    delegate = body.get("delegate")
    delegate_type = delegate.get("type") if isinstance(delegate, dict) else None
    return CniPlugin(kind, declared, delegate_type if isinstance(delegate_type, str) else None)


def parse_cni(value: Any, source: str, line_of: Any = None) -> CniNetwork:
    """A decoded CNI configuration (``line_of(path)`` gives a field's line, if known)."""
    def where(*path: str | int) -> str:
        line = line_of(path) if line_of is not None else 0
        return f"{source}:{line}" if line else source

    if not isinstance(value, dict):
        raise NodeConfigError(where(), "a CNI configuration must be a JSON object")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise NodeConfigError(where(), "a CNI configuration needs a name")
    if "plugins" in value:
        plugins = value["plugins"]
        if not isinstance(plugins, list) or not plugins:
            raise NodeConfigError(where("plugins"), "plugins must be a non-empty list")
        return CniNetwork(name, tuple(
            _plugin(p, lambda *sub, i=i: where("plugins", i, *sub))
            for i, p in enumerate(plugins)), source)
    return CniNetwork(name, (_plugin(value, where),), source)


def read_cni(path: str, limits: Limits = DEFAULT_LIMITS) -> CniNetwork:
    """The one CNI network in the JSON file ``path``."""
    found: CniNetwork | None = None
    for item in read_source(path, limits):
        if isinstance(item, BadInput):
            raise NodeConfigError(f"{item.source}:{item.line}" if item.line else item.source,
                                  item.reason)
        if found is not None:
            raise NodeConfigError(f"{path}:{item.line}", "more than one JSON value in a CNI file")
        found = parse_cni(item.value, path, item.line_of)
    if found is None:
        raise NodeConfigError(path, "empty: no CNI configuration")
    return found
