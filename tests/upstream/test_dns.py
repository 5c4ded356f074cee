"""dns_test.go's rows through ``pod_sandbox_config``'s ``dns_config``."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.dns import ROWS
from tests.upstream.rows import Row, cases


def _dns(spec: dict[str, Any], node: kw.NodeContext, minor: int, gates: Any = None) -> Any:
    manifest = {"kind": "Pod", "metadata": {"name": "test_pod", "namespace": "testNS"},
                "spec": {**spec, "containers": [{"name": "c"}]}}
    return kw.pod_sandbox_config(manifest, node=node, kubelet_version=f"1.{minor}",
                                 feature_gates=gates).dns_config


def _spec(policy: str, host: bool = False, config: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"dnsPolicy": policy, "hostNetwork": host}
    if config is not None:
        spec["dnsConfig"] = config
    return spec


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestGetPodDNSCustom"))
def test_get_pod_dns_custom(row: Row, minor: int) -> None:
    node = kw.NodeContext(cluster_dns=("10.0.0.10",), cluster_domain="kubernetes.io",
                          resolver_servers=("8.8.8.8",), resolver_searches=("host.domain",))
    given = row.given
    got = _dns(_spec(given["dnsPolicy"], given["hostNetwork"], given["dnsConfig"]), node, minor)
    assert list(got.servers) == row.want["servers"]
    assert list(got.searches) == row.want["searches"]
    assert set(got.options) == set(row.want["options"])  # upstream compares them as sets


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestGetPodDNSType"))
def test_get_pod_dns_type(row: Row, minor: int) -> None:
    cluster = ("203.0.113.1",) if row.given["hasClusterDNS"] else ()
    node = kw.NodeContext(cluster_dns=cluster, cluster_domain="TEST",
                          resolver_servers=("8.8.8.8",))
    got = _dns(_spec(row.given["dnsPolicy"], row.given["hostNetwork"]), node, minor)
    servers = {"cluster": ["203.0.113.1"], "host": ["8.8.8.8"], "none": []}[row.want["type"]]
    assert list(got.servers) == servers


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestFormDNSNameserversFitsLimits"))
def test_form_dns_nameservers_fits_limits(row: Row, minor: int) -> None:
    got = _dns(_spec("None", config={"nameservers": row.given["nameservers"]}),
               kw.NodeContext(), minor)
    assert list(got.servers) == row.want["servers"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestMergeDNSOptions"))
def test_merge_dns_options(row: Row, minor: int) -> None:
    config = None if row.given["options"] is None else {"options": row.given["options"]}
    got = _dns(_spec("Default", config=config),
               kw.NodeContext(resolver_options=("ndots:5", "debug")), minor)
    assert set(got.options) == set(row.want["options"])  # "order may be changed"


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestFormDNSSearchFitsLimits"))
def test_form_dns_search_fits_limits(row: Row, minor: int) -> None:
    got = _dns(_spec("None", config={"searches": row.given["searches"]}), kw.NodeContext(),
               minor, {"ExpandedDNSConfig": False})
    assert list(got.searches) == row.want["searches"]
