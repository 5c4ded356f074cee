"""kubelet_pods_test.go's TestSortPodIPs through the downward API of ``container_config``
(``status.podIP`` / ``status.podIPs`` go through sortPodIPs in
podFieldSelectorRuntimeValue), at 1.26-1.38, plus regression tests for where the
library used to pass the sandbox IPs through as given."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.kubelet_pods import ROWS
from tests.upstream.rows import Row, cases


def _env(pod_ips: tuple[str, ...], node_ips: tuple[str, ...], minor: int = 38) -> dict[str, str]:
    manifest: dict[str, Any] = {
        "kind": "Pod", "metadata": {"name": "test-pod", "namespace": "test-namespace"},
        "spec": {"containers": [{"name": "c", "env": [
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "POD_IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.podIPs"}}},
        ]}]},
    }
    config = kw.container_config(manifest, "c", pod_ips=pod_ips,
                                 node=kw.NodeContext(node_ips=node_ips),
                                 kubelet_version=f"1.{minor}")
    return {env.key: env.value.decode() for env in config.envs}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestSortPodIPs"))
def test_sort_pod_ips(row: Row, minor: int) -> None:
    node_ips = (row.given["nodeIP"],) if row.given["nodeIP"] else ()
    env = _env(tuple(row.given["podIPs"]), node_ips, minor)
    expected = row.want["expectedIPs"]
    assert env["POD_IPS"] == ",".join(expected)
    assert env["POD_IP"] == expected[0]


# --- sortPodIPs on what the table leaves out: bad entries, mapped IPv4, an IPv6 node ----


def test_invalid_entries_are_dropped() -> None:
    """sortPodIPs keeps only IPs that parse (ParseIPSloppy: IPv4 octets may carry leading
    zeros; an IPv6 zone does not parse)."""
    env = _env(("not-an-ip", "fe80::1%eth0", "010.0.0.1", "fd01::1"), ("10.240.0.4",))
    assert env["POD_IPS"] == "010.0.0.1,fd01::1"
    assert env["POD_IP"] == "010.0.0.1"


def test_ipv4_mapped_ipv6_counts_as_ipv4() -> None:
    """utilnet.IsIPv4String is `ParseIPSloppy(ip).To4() != nil`: true for ::ffff:a.b.c.d."""
    env = _env(("fd01::1", "::ffff:10.0.0.9"), ("10.240.0.4",))
    assert env["POD_IPS"] == "::ffff:10.0.0.9,fd01::1"


def test_no_valid_ip_keeps_the_first_for_pod_ip() -> None:
    """`if len(podIPs) > 0 { podIP = podIPs[0] }` after sorting: with nothing valid,
    status.podIP keeps the runtime's first IP and status.podIPs is empty."""
    env = _env(("garbage",), ("10.240.0.4",))
    assert env["POD_IP"] == "garbage"
    assert env["POD_IPS"] == ""


def test_ipv6_primary_node() -> None:
    env = _env(("10.0.0.1", "10.0.0.2", "fd01::1", "fd01::2"), ("fd00::5",))
    assert env["POD_IPS"] == "fd01::1,10.0.0.1"
