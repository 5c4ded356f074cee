"""NodeContext: frozen, typed, validated at construction (InvalidArgumentError)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import kubelet_winnet as kw


def test_defaults() -> None:
    node = kw.NodeContext()
    assert node.pod_logs_dir == "C:\\var\\log\\pods"
    assert node.cluster_domain == "cluster.local"
    assert node.cluster_dns == ("10.96.0.10",)
    assert dict(node.runtime_handlers) == {}


def test_frozen_and_copies_mappings() -> None:
    handlers = {"a": "h"}
    node = kw.NodeContext(runtime_handlers=handlers, cluster_dns=["10.0.0.10"])  # type: ignore[arg-type]
    handlers["b"] = "x"
    assert dict(node.runtime_handlers) == {"a": "h"}
    assert node.cluster_dns == ("10.0.0.10",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.node_name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        node.runtime_handlers["c"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"node_name": 1}, "node_name"),
        ({"cluster_dns": "10.0.0.10"}, "cluster_dns"),
        ({"cluster_dns": ("not-an-ip",)}, "cluster_dns[0]"),
        ({"node_ips": (1,)}, "node_ips[0]"),
        ({"resolver_searches": ("a", None)}, "resolver_searches[1]"),
        ({"resolv_conf_set": "false"}, "resolv_conf_set"),
        ({"processor_count": 0}, "processor_count"),
        ({"processor_count": True}, "processor_count"),
        ({"processor_count": 10**100}, "processor_count"),
        ({"runtime_handlers": [("a", "b")]}, "runtime_handlers"),
        ({"runtime_handlers": {"a": 1}}, "runtime_handlers"),
        ({"allocatable_cpu": "lots"}, "allocatable_cpu"),
        ({"allocatable_ephemeral_storage": "1 Ti"}, "allocatable_ephemeral_storage"),
        ({"allocatable_ephemeral_storage": 5}, "allocatable_ephemeral_storage"),
        ({"resolver_servers": ("x",) * 5000}, "resolver_servers"),
    ],
)
def test_bad_fields(kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.NodeContext(**kwargs)
    assert info.value.argument == argument
    assert isinstance(info.value, TypeError) and isinstance(info.value, kw.WinnetError)


class _Raising(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1


def test_mapping_that_raises() -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.NodeContext(runtime_handlers=_Raising())
    assert info.value.argument == "runtime_handlers"


def test_from_mapping() -> None:
    node = kw.NodeContext.from_mapping(
        {"nodeName": "n", "clusterDns": ["10.0.0.10"], "runtimeHandlers": {"x": "y"},
         "pod_logs_dir": "D:\\logs"}
    )
    assert (node.node_name, node.cluster_dns) == ("n", ("10.0.0.10",))
    assert node.pod_logs_dir == "D:\\logs"
    # An acronym's plural stays whole (it was read as node_i_ps, an unknown key).
    assert kw.NodeContext.from_mapping({"nodeIPs": ["10.0.0.4"]}).node_ips == ("10.0.0.4",)
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.NodeContext.from_mapping({"clusterDNSServers": []})
    assert info.value.argument == "node.clusterDNSServers"
    with pytest.raises(kw.InvalidArgumentError):
        kw.NodeContext.from_mapping([])  # type: ignore[arg-type]


def test_from_mapping_takes_the_kubelet_configuration_spelling() -> None:
    """KubeletConfiguration writes clusterDNS (acronym kept whole)."""
    node = kw.NodeContext.from_mapping({"clusterDNS": ["10.0.0.10"], "clusterDomain": "c.l"})
    assert (node.cluster_dns, node.cluster_domain) == (("10.0.0.10",), "c.l")


@pytest.mark.parametrize("pair", [("nodeName", "node_name"), ("clusterDns", "clusterDNS")])
def test_one_field_given_twice_is_refused(pair: tuple[str, str]) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.NodeContext.from_mapping({pair[0]: ["a"], pair[1]: ["b"]})
    assert info.value.argument == f"node.{pair[1]}"
    assert "given twice" in str(info.value)


def test_lone_surrogates_are_rejected() -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.NodeContext(cluster_domain="a\ud800")
    assert info.value.argument == "cluster_domain"
    with pytest.raises(kw.InvalidArgumentError):
        kw.NodeContext(runtime_handlers={"x": "\udc80"})


def test_kubelet_root_default_and_validation() -> None:
    """--root-dir: C:\\var\\lib\\kubelet by default on Windows; a string, non-empty."""
    assert kw.NodeContext().kubelet_root == "C:\\var\\lib\\kubelet"
    assert kw.NodeContext.from_mapping({"kubeletRoot": "D:\\k"}).kubelet_root == "D:\\k"
    for bad, reason in ((3, "a string"), ("", "a non-empty path"), ("\ud800", "valid Unicode")):
        with pytest.raises(kw.InvalidArgumentError) as info:
            kw.NodeContext(kubelet_root=bad)  # type: ignore[arg-type]
        assert "kubelet_root" in str(info.value) and reason in str(info.value)
