"""helpers_test.go's TestExtractResourceValue rows through container_config's
environment (resourceFieldRef with containerName)."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.resource_helpers import ROWS
from tests.upstream.rows import Row, cases


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestExtractResourceValue"))
def test_extract_resource_value(row: Row, minor: int) -> None:
    ref: dict[str, Any] = {"resource": row.given["resource"],
                           "containerName": row.given["containerName"]}
    if row.given["divisor"] is not None:
        ref["divisor"] = row.given["divisor"]
    resources = row.given["resources"]
    env = [{"name": "V", "valueFrom": {"resourceFieldRef": ref}}]
    manifest = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "foo", "resources": resources, "env": env}],
                         "initContainers": [{"name": "init-foo", "resources": resources}]}}
    config = kw.container_config(manifest, "foo", kubelet_version=f"1.{minor}")
    assert {pair.key: pair.value.decode() for pair in config.envs}["V"] == row.want["value"]
