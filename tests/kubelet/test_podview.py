"""The request builders' view of a pod (``view_pod``, in ``_kubelet/pod.py``), imported
through ``_kubelet/podview.py``, the older path other modules still use."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import kubelet_winnet as kw
from kubelet_winnet._kubelet.podview import get_objects, get_str, not_utf8_error, view_pod


def test_pod_workload_and_cronjob_views() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    view = view_pod(pod)
    assert (view.prefix, view.metadata["name"]) == ("", "p")
    cron = {"kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ops"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}}
    view = view_pod(cron)
    assert view.prefix == "spec.jobTemplate.spec.template."
    assert (view.metadata["name"], view.metadata["namespace"]) == ("nightly", "ops")
    assert view.at("spec.hostNetwork") == "spec.jobTemplate.spec.template.spec.hostNetwork"


def test_template_metadata_wins_over_the_workload() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "d", "namespace": "a"},
                  "spec": {"template": {"metadata": {"name": "t"}, "spec": {}}}}
    view = view_pod(deployment)
    assert (view.metadata["name"], view.metadata["namespace"]) == ("t", "a")


def test_attribute_objects_are_read_in_camel_case() -> None:
    obj = SimpleNamespace(
        metadata=SimpleNamespace(name="o", namespace=None),
        spec=SimpleNamespace(host_network=True, containers=[SimpleNamespace(name="c")]),
    )
    view = view_pod(obj)
    assert view.spec.get("hostNetwork") is True
    assert [get_str(c, "name", "") for c in get_objects(view.spec, "containers", "spec.")] == ["c"]
    assert kw.pod_sandbox_config(obj).hostname == ""


def test_missing_spec_and_not_utf8_paths() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        view_pod({"kind": "Deployment", "spec": {"template": {"metadata": {}}}})
    assert info.value.field == "spec.template.spec"
    view = view_pod({"metadata": {"labels": {"ok": "1", "bad": "\udc80"}}, "spec": {}})
    assert not_utf8_error(view).field == "metadata.labels.bad"


def test_the_older_import_path_gives_the_reading_layers_own_functions() -> None:
    from kubelet_winnet._kubelet import pod, podview

    for name in podview.__all__:
        assert getattr(podview, name) is getattr(pod, name), name
