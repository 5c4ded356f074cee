"""labels_test.go's rows through ``container_config`` and ``pod_sandbox_config``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import kubelet_winnet as kw
from tests.upstream.labels import ROWS
from tests.upstream.rows import Row, cases


def _manifest(pod: dict[str, Any], containers: list[dict[str, Any]]) -> dict[str, Any]:
    meta = {key: pod[key] for key in ("name", "namespace", "uid", "labels", "annotations",
                                       "deletionGracePeriodSeconds") if pod.get(key) is not None}
    spec: dict[str, Any] = {"containers": containers}
    if pod.get("terminationGracePeriodSeconds") is not None:
        spec["terminationGracePeriodSeconds"] = pod["terminationGracePeriodSeconds"]
    return {"kind": "Pod", "metadata": meta, "spec": spec}


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestContainerLabels"))
def test_container_labels(row: Row, minor: int) -> None:
    manifest = _manifest(row.given["pod"], [row.given["container"]])
    config = kw.container_config(manifest, "test_container", kubelet_version=f"1.{minor}")
    assert dict(config.labels) == row.want["labels"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestContainerAnnotations"))
def test_container_annotations(row: Row, minor: int) -> None:
    given, want = row.given, row.want
    manifest = _manifest(given["pod"], [given["container"]])
    config = kw.container_config(manifest, "test_container", attempt=given["restartCount"],
                                 kubelet_version=f"1.{minor}")
    annotations = dict(config.annotations)
    assert json.loads(annotations["io.kubernetes.container.ports"]) == want["ports"]
    assert annotations["io.kubernetes.pod.deletionGracePeriod"] == want["deletionGracePeriod"]
    assert (annotations["io.kubernetes.pod.terminationGracePeriod"]
            == want["terminationGracePeriod"])
    assert annotations["io.kubernetes.container.restartCount"] == want["restartCount"]
    assert (annotations["io.kubernetes.container.terminationMessagePath"]
            == want["terminationMessagePath"])
    assert json.loads(annotations["io.kubernetes.container.preStopHandler"]) == want["preStop"]
    assert re.fullmatch(r"[0-9a-f]{1,16}", annotations["io.kubernetes.container.hash"])


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestPodLabels"))
def test_pod_labels(row: Row, minor: int) -> None:
    config = kw.pod_sandbox_config(_manifest(row.given["pod"], []), kubelet_version=f"1.{minor}")
    assert dict(config.labels) == row.want["labels"]


@pytest.mark.parametrize(("row", "minor"), cases(ROWS, "TestPodAnnotations"))
def test_pod_annotations(row: Row, minor: int) -> None:
    config = kw.pod_sandbox_config(_manifest(row.given["pod"], []), kubelet_version=f"1.{minor}")
    assert dict(config.annotations) == row.want["annotations"]
