"""pkg/kubelet/kuberuntime/labels_test.go, as data. The tests round-trip labels and
annotations through the kubelet's own parsers (getContainerInfoFromLabels, ...); the
facts they pin are which values the request carries, under which keys.
"""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kuberuntime/labels_test.go"

V_0411CC7 = Source(
    FILE,
    "0411cc704533ed25a1bfc6e21a3195d9c6a2f0f2",
    (38,),
    "the only version the index returns; it imports k8s.io/ktesting, as the 1.38 "
    "kuberuntime_container_windows_test.go of the same commit does",
)

_PRE_STOP = {"exec": {"command": ["action1", "action2"]},
             "httpGet": {"path": "path", "host": "host", "port": 8080, "scheme": "scheme"},
             "tcpSocket": {"port": "80"}}
_CONTAINER = {"name": "test_container", "terminationMessagePath": "/somepath",
              "lifecycle": {"preStop": _PRE_STOP}}
_POD = {"name": "test_pod", "namespace": "test_pod_namespace", "uid": "test_pod_uid",
        "deletionGracePeriodSeconds": 10, "terminationGracePeriodSeconds": 10}
_PORTS = [{"name": "http", "hostPort": 80, "containerPort": 8080, "protocol": "TCP"},
          {"name": "https", "hostPort": 443, "containerPort": 6443, "protocol": "TCP"}]

ROWS: tuple[Row, ...] = (
    Row(V_0411CC7, "TestContainerLabels", "Regular containers",
        {"pod": _POD, "container": _CONTAINER},
        {"labels": {"io.kubernetes.pod.name": "test_pod",
                    "io.kubernetes.pod.namespace": "test_pod_namespace",
                    "io.kubernetes.pod.uid": "test_pod_uid",
                    "io.kubernetes.container.name": "test_container"}}),
    Row(V_0411CC7, "TestContainerAnnotations", "(first case: everything set)",
        {"pod": _POD, "container": {**_CONTAINER, "ports": _PORTS}, "restartCount": 5},
        {"ports": _PORTS, "deletionGracePeriod": "10", "terminationGracePeriod": "10",
         "restartCount": "5", "terminationMessagePath": "/somepath", "preStop": _PRE_STOP,
         "hash": "HashContainer(container)"},
        note="the annotation Foo=bar comes from RunContainerOptions (device plugins), which "
        "the library does not model; the hash's value is pinned by helpers_test.go's "
        "TestHashContainer, here only its form (lowercase hex) is checked"),
    Row(V_0411CC7, "TestContainerAnnotations",
        "(second case: no lifecycle, grace periods nil)",
        {"pod": {**_POD, "deletionGracePeriodSeconds": None,
                 "terminationGracePeriodSeconds": None},
         "container": {"name": "test_container", "terminationMessagePath": "/somepath",
                       "ports": _PORTS}, "restartCount": 5},
        {"absent": ["io.kubernetes.pod.deletionGracePeriod",
                    "io.kubernetes.pod.terminationGracePeriod",
                    "io.kubernetes.container.preStopHandler"]},
        out_of_scope="a pod the API server never hands a kubelet: defaults.go sets "
        "terminationGracePeriodSeconds (30), and the library applies that default, so its "
        "request carries io.kubernetes.pod.terminationGracePeriod=30"),
    Row(V_0411CC7, "TestPodLabels", "(single case)",
        {"pod": {"name": "test_pod", "namespace": "test_pod_namespace", "uid": "test_pod_uid",
                 "labels": {"foo": "bar"}}},
        {"labels": {"foo": "bar", "io.kubernetes.pod.name": "test_pod",
                    "io.kubernetes.pod.namespace": "test_pod_namespace",
                    "io.kubernetes.pod.uid": "test_pod_uid"}}),
    Row(V_0411CC7, "TestPodAnnotations", "(single case)",
        {"pod": {"name": "test_pod", "namespace": "test_pod_namespace", "uid": "test_pod_uid",
                 "annotations": {"foo": "bar"}}},
        {"annotations": {"foo": "bar"}}),
)
SOURCES = (V_0411CC7,)
