"""What the kubelet knows about its own node when it builds CRI requests.

Every field is something a real kubelet takes from its flags, its config file or the
host: ``--hostname-override`` / the node object (node name), ``--cluster-dns``,
``--cluster-domain``, ``--resolv-conf`` (on Windows: the host's resolver through
``GetNetworkParams`` and the registry ``SearchList``, see
``pkg/kubelet/network/dns/dns_windows.go``), ``podLogsDir`` and the RuntimeClass objects
the node can see. Defaults describe a typical kubeadm-style Windows node.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.objectview import is_mapping
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError

__all__ = ["NodeContext"]


def _strings(name: str, value: object, *, limit: int = 4096) -> tuple[str, ...]:
    if type(value) is not list and type(value) is not tuple:
        # "list": what a YAML node config writes, and what the Python caller may pass too.
        raise InvalidArgumentError(name, "a list of strings", type_name(value))
    if len(value) > limit:
        raise InvalidArgumentError(name, f"at most {limit} strings", f"{len(value)} items")
    for index, item in enumerate(value):
        _string(f"{name}[{index}]", item)
    return tuple(value)


def _string(name: str, value: object) -> str:
    if type(value) is not str:
        raise InvalidArgumentError(name, "a string", type_name(value))
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            raise InvalidArgumentError(name, "valid Unicode", "a lone surrogate") from None
    return value


def _ip(name: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        shown = cut(value, 40)
        raise InvalidArgumentError(name, "an IP address", f"str {shown!r}") from None


# The node allocatable quantities resourceFieldRef reads for a container without a limit
# (MergeContainerResourceLimits, pkg/api/v1/resource/helpers.go: cpu, memory and
# ephemeral-storage; hugepages never, they are never overcommitted).
_ALLOCATABLE = ("allocatable_cpu", "allocatable_memory", "allocatable_ephemeral_storage")


@dataclass(frozen=True, slots=True)
class NodeContext:
    """The node a kubelet runs on, as far as the requests it builds depend on it.

    ``cluster_dns``: ``--cluster-dns`` (empty: pods asking for cluster DNS fall back to
    the node's resolver, as the kubelet does with a ``MissingClusterDNS`` event).
    ``resolver_*``: what the kubelet reads as the node's resolver configuration.
    ``resolv_conf_set``: ``False`` models ``--resolv-conf=""``; the node resolver is then
    replaced by ``127.0.0.1`` (``::1`` for an IPv6 node IP) per node IP with search ``.``.
    ``pod_logs_dir``: root of the pod log directories. ``runtime_handlers``: RuntimeClass
    name to handler. ``processor_count``: logical CPUs the kubelet sees (Windows CPU
    maximum). ``allocatable_cpu`` / ``allocatable_memory`` /
    ``allocatable_ephemeral_storage``: node allocatable quantities, used for
    ``resourceFieldRef`` of containers without limits. ``kubelet_root``:
    ``--root-dir``, under which the pod directories (``<root>\\pods\\<uid>``) hold the
    volumes, the hosts file and the termination logs the container mounts come from.
    """

    node_name: str = "win-node-1"
    hostname: str = "win-node-1"
    node_ips: tuple[str, ...] = ("10.240.0.4",)
    cluster_dns: tuple[str, ...] = ("10.96.0.10",)
    cluster_domain: str = "cluster.local"
    resolver_servers: tuple[str, ...] = ("168.63.129.16",)
    resolver_searches: tuple[str, ...] = ()
    resolver_options: tuple[str, ...] = ()
    resolv_conf_set: bool = True
    pod_logs_dir: str = "C:\\var\\log\\pods"
    runtime_handlers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    processor_count: int = 4
    allocatable_cpu: str = "4"
    allocatable_memory: str = "16Gi"
    allocatable_ephemeral_storage: str = "128Gi"
    kubelet_root: str = "C:\\var\\lib\\kubelet"

    def __post_init__(self) -> None:
        for name in ("node_name", "hostname", "cluster_domain", "pod_logs_dir"):
            _string(name, getattr(self, name))
        for name in _ALLOCATABLE:
            _string(name, getattr(self, name))
        if not _string("kubelet_root", self.kubelet_root):
            raise InvalidArgumentError("kubelet_root", "a non-empty path", "an empty string")
        for name in (
            "node_ips", "cluster_dns", "resolver_servers", "resolver_searches",
            "resolver_options",
        ):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        for name in ("node_ips", "cluster_dns"):
            for index, value in enumerate(getattr(self, name)):
                _ip(f"{name}[{index}]", value)
        if type(self.resolv_conf_set) is not bool:
            raise InvalidArgumentError(
                "resolv_conf_set", "a bool", type_name(self.resolv_conf_set)
            )
        count = self.processor_count
        if type(count) is not int or not 1 <= count <= 1 << 16:
            raise InvalidArgumentError(
                "processor_count", "an int from 1 to 65536",
                type_name(count) if type(count) is not int else "out of range",
            )
        handlers = self.runtime_handlers
        if not is_mapping(handlers):
            raise InvalidArgumentError("runtime_handlers", "a mapping", type_name(handlers))
        copied: dict[str, str] = {}
        try:
            items = list(handlers.items())
        except Exception as exc:  # a caller's Mapping.items() can raise anything
            raise InvalidArgumentError(
                "runtime_handlers", "a readable mapping", type_name(exc)
            ) from None
        for key, value in items:
            if type(key) is not str or type(value) is not str:
                raise InvalidArgumentError(
                    "runtime_handlers", "a mapping of str to str",
                    f"{type_name(key)} -> {type_name(value)}",
                )
            _string("runtime_handlers", key)
            copied[key] = _string("runtime_handlers", value)
        object.__setattr__(self, "runtime_handlers", MappingProxyType(copied))
        # Validate the quantities once, here, so a bad node fails at construction.
        from kubelet_winnet._kubelet.quantity import parse_quantity

        for name in _ALLOCATABLE:
            try:
                parse_quantity(getattr(self, name), name)
            except ValueError:
                raise InvalidArgumentError(name, "a resource quantity", "str") from None

    def __hash__(self) -> int:
        # Frozen, so hashable; the generated hash would fail on the read-only mapping.
        return hash(tuple(
            frozenset(value.items()) if name == "runtime_handlers" else value
            for name, value in ((f, getattr(self, f)) for f in self.__dataclass_fields__)
        ))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> NodeContext:
        """Build from camelCase or snake_case keys (a YAML node config); unknown keys are
        an error, lists become tuples."""
        if not is_mapping(data):
            raise InvalidArgumentError("node", "a mapping", type_name(data))
        known = set(cls.__dataclass_fields__)
        kwargs: dict[str, Any] = {}
        try:
            items = list(data.items())
        except Exception as exc:  # a caller's Mapping.items() can raise anything
            raise InvalidArgumentError("node", "a readable mapping", type_name(exc)) from None
        for key, value in items:
            name = _snake(key) if type(key) is str else None
            if name not in known:
                raise InvalidArgumentError(
                    f"node.{key[:64]}" if type(key) is str else "node",
                    "one of " + ", ".join(sorted(known)), "unknown key",
                )
            if name in kwargs:
                raise InvalidArgumentError(
                    f"node.{key[:64]}", "each field once", f"{name} given twice"
                )
            kwargs[name] = tuple(value) if type(value) is list else value
        return cls(**kwargs)


# Word boundaries of camelCase, acronyms kept whole: clusterDNS -> cluster_dns (the
# KubeletConfiguration spelling), podLogsDir -> pod_logs_dir; an acronym's plural "s"
# stays with it (nodeIPs -> node_ips), a word after an acronym needs two letters.
_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")


def _snake(key: str) -> str:
    return _BOUNDARY.sub("_", key).lower()
