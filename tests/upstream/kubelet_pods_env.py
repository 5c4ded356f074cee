"""pkg/kubelet/kubelet_pods_test.go TestMakeEnvironmentVariables, as data (the service
links, the downward API, $(VAR) expansion, ConfigMaps and Secrets), read at aba588cd, the
newest stored version. The table's rows after "secret" were not read.

Fakes: the test's service lister holds SERVICES (``nilLister`` rows: no lister ->
``services=None``); the kubelet's master service namespace is ``default``; the fake
ConfigMap and Secret managers return the row's object for any name (-> ``config_maps`` /
``secrets`` under the name the container asks for), or not-found; the test kubelet's host
IPs are testKubeletHostIP and testKubeletHostIPv6 (-> NodeContext(node_ips=("127.0.0.1",
"::1"))); the pod is dapi-test-pod-name on node node-name with service account special.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kubelet_pods_test.go"

V_ABA588C = Source(
    FILE,
    "aba588cd14e0d3654e02402cc9acb114190f7769",
    (38,),
    "the newest stored version (it tests the RelaxedEnvironmentVariableValidation gate and "
    "the restarted-pods metrics); run at the newest kubelet only",
)


def _svc(name: str, namespace: str, ip: str, port: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterIP": ip, "ports": [{"protocol": "TCP", "port": port}]}}


# buildService(name, namespace, clusterIP, protocol, port), in the test's order.
SERVICES = [
    _svc("kubernetes", "default", "1.2.3.1", 8081), _svc("test", "test1", "1.2.3.3", 8083),
    _svc("kubernetes", "test2", "1.2.3.4", 8084), _svc("test", "test2", "1.2.3.5", 8085),
    _svc("test", "test2", "None", 8085), _svc("test", "test2", "", 8085),
    _svc("not-special", "default", "1.2.3.8", 8088),
    _svc("not-special", "default", "None", 8088), _svc("not-special", "default", "", 8088),
]
HOST_IPS = ("127.0.0.1", "::1")  # testKubeletHostIP, testKubeletHostIPv6


def _links(prefix: str, ip: str, port: int) -> dict[str, str]:
    """The seven variables the rows list for one single-port TCP Service."""
    address = f"tcp://{ip}:{port}"
    base = f"{prefix}_PORT_{port}_TCP"
    return {f"{prefix}_SERVICE_HOST": ip, f"{prefix}_SERVICE_PORT": str(port),
            f"{prefix}_PORT": address, base: address, f"{base}_PROTO": "tcp",
            f"{base}_PORT": str(port), f"{base}_ADDR": ip}


KUBE = _links("KUBERNETES", "1.2.3.1", 8081)
TEST1 = _links("TEST", "1.2.3.3", 8083)


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def _lit(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


_IP_ENV = [_field("POD_IP", "status.podIP"), _field("POD_IPS", "status.podIPs"),
           _field("HOST_IP", "status.hostIP"), _field("HOST_IPS", "status.hostIPs")]
_IP_WANT = {"POD_IP": "1.2.3.4", "POD_IPS": "1.2.3.4,fd00::6", "HOST_IP": "127.0.0.1",
            "HOST_IPS": "127.0.0.1,::1"}
_EXPANSION = [
    {"name": "TEST_LITERAL", "value": "test-test-test"}, _field("POD_NAME", "metadata.name"),
    {"name": "OUT_OF_ORDER_TEST", "value": "$(OUT_OF_ORDER_TARGET)"},
    {"name": "OUT_OF_ORDER_TARGET", "value": "FOO"}, {"name": "EMPTY_VAR"},
    {"name": "EMPTY_TEST", "value": "foo-$(EMPTY_VAR)"},
    {"name": "POD_NAME_TEST2", "value": "test2-$(POD_NAME)"},
    {"name": "POD_NAME_TEST3", "value": "$(POD_NAME_TEST2)-3"},
    {"name": "LITERAL_TEST", "value": "literal-$(TEST_LITERAL)"},
]
_EXPANSION_WANT = {
    "TEST_LITERAL": "test-test-test", "POD_NAME": "dapi-test-pod-name",
    "POD_NAME_TEST2": "test2-dapi-test-pod-name", "POD_NAME_TEST3": "test2-dapi-test-pod-name-3",
    "LITERAL_TEST": "literal-test-test-test", "OUT_OF_ORDER_TEST": "$(OUT_OF_ORDER_TARGET)",
    "OUT_OF_ORDER_TARGET": "FOO", "TEST_UNDEFINED": "$(UNDEFINED_VAR)", "EMPTY_VAR": "",
    "EMPTY_TEST": "foo-",
}
_UNDEFINED = {"name": "TEST_UNDEFINED", "value": "$(UNDEFINED_VAR)"}
_CM_ENV = [{"name": "TEST_LITERAL", "value": "test-test-test"},
           {"name": "EXPANSION_TEST", "value": "$(REPLACE_ME)"},
           {"name": "DUPE_TEST", "value": "ENV_VAR"}]


def _from(kind: str, prefix: str = "", optional: bool | None = None,
          name: str = "") -> dict[str, Any]:
    key = "configMapRef" if kind == "configMap" else "secretRef"
    ref: dict[str, Any] = {"name": name or ("test-config-map" if kind == "configMap"
                                            else "test-secret")}
    if optional is not None:
        ref["optional"] = optional
    return {key: ref, **({"prefix": prefix} if prefix else {})}


def _key_ref(kind: str, name: str) -> list[dict[str, Any]]:
    key = "configMapKeyRef" if kind == "configMap" else "secretKeyRef"
    return [{"name": "POD_NAME",
             "valueFrom": {key: {"name": name, "key": "key", "optional": True}}}]


_CM = {"REPLACE_ME": "FROM_CONFIG_MAP", "DUPE_TEST": "CONFIG_MAP"}
_CM_WANT = {"TEST_LITERAL": "test-test-test", "REPLACE_ME": "FROM_CONFIG_MAP",
            "EXPANSION_TEST": "FROM_CONFIG_MAP", "DUPE_TEST": "ENV_VAR",
            "p_REPLACE_ME": "FROM_CONFIG_MAP", "p_DUPE_TEST": "CONFIG_MAP"}
_SECRET = {"REPLACE_ME": "FROM_SECRET", "DUPE_TEST": "SECRET"}

# (name, namespace, enableServiceLinks, env, envFrom, lister?, configMaps, secrets, podIPs,
#  want: env mapping, or {"error": True})
_T = tuple[str, str, bool, list[dict[str, Any]], list[dict[str, Any]], bool,
           dict[str, dict[str, str]] | None, dict[str, dict[str, str]] | None,
           list[str], dict[str, Any]]
_TABLE: tuple[_T, ...] = (
    ("api server = Y, kubelet = Y", "test1", False, _lit({"FOO": "BAR", **TEST1}), [], True,
     {}, {}, [], {"FOO": "BAR", **TEST1, **KUBE}),
    ("api server = Y, kubelet = N", "test1", False, _lit({"FOO": "BAR", **TEST1}), [], False,
     {}, {}, [], {"FOO": "BAR", **TEST1}),
    ("api server = N; kubelet = Y", "test1", False, _lit({"FOO": "BAZ"}), [], True, {}, {},
     [], {"FOO": "BAZ", **KUBE}),
    ("api server = N; kubelet = Y; service env vars", "test1", True, _lit({"FOO": "BAZ"}), [],
     True, {}, {}, [], {"FOO": "BAZ", **TEST1, **KUBE}),
    ("master service in pod ns", "test2", False, _lit({"FOO": "ZAP"}), [], True, {}, {}, [],
     {"FOO": "ZAP", **KUBE}),
    ("master service in pod ns, service env vars", "test2", True, _lit({"FOO": "ZAP"}), [],
     True, {}, {}, [], {"FOO": "ZAP", **_links("TEST", "1.2.3.5", 8085),
                        **_links("KUBERNETES", "1.2.3.4", 8084)}),
    ("pod in master service ns", "default", False, [], [], True, {}, {}, [], dict(KUBE)),
    ("pod in master service ns, service env vars", "default", True, [], [], True, {}, {}, [],
     {**_links("NOT_SPECIAL", "1.2.3.8", 8088), **KUBE}),
    ("downward api pod", "downward-api", False,
     [_field("POD_NAME", "metadata.name"), _field("POD_NAMESPACE", "metadata.namespace"),
      _field("POD_NODE_NAME", "spec.nodeName"),
      _field("POD_SERVICE_ACCOUNT_NAME", "spec.serviceAccountName"), *_IP_ENV],
     [], False, {}, {}, ["1.2.3.4", "fd00::6"],
     {"POD_NAME": "dapi-test-pod-name", "POD_NAMESPACE": "downward-api",
      "POD_NODE_NAME": "node-name", "POD_SERVICE_ACCOUNT_NAME": "special", **_IP_WANT}),
    ("downward api pod ips reverse order", "downward-api", False, _IP_ENV, [], False, {}, {},
     ["fd00::6", "1.2.3.4"], dict(_IP_WANT)),
    ("downward api pod ips multiple ips", "downward-api", False, _IP_ENV, [], False, {}, {},
     ["1.2.3.4", "192.168.1.1.", "fd00::6"], dict(_IP_WANT)),
    ("env expansion", "test1", False, [*_EXPANSION, _UNDEFINED], [], True, {}, {}, [],
     {**_EXPANSION_WANT, **KUBE}),
    ("env expansion, service env vars", "test1", True,
     [*_EXPANSION, {"name": "SERVICE_VAR_TEST",
                    "value": "$(TEST_SERVICE_HOST):$(TEST_SERVICE_PORT)"}, _UNDEFINED],
     [], True, {}, {}, [],
     {**_EXPANSION_WANT, **TEST1, "SERVICE_VAR_TEST": "1.2.3.3:8083", **KUBE}),
    ("configmapkeyref_missing_optional", "test", False,
     _key_ref("configMap", "missing-config-map"), [], True, {}, {}, [], dict(KUBE)),
    ("configmapkeyref_missing_key_optional", "test", False,
     _key_ref("configMap", "test-config-map"), [], False, {"test-config-map": {"a": "b"}},
     {}, [], {}),
    ("secretkeyref_missing_optional", "test", False, _key_ref("secret", "missing-secret"), [],
     True, {}, {}, [], dict(KUBE)),
    ("secretkeyref_missing_key_optional", "test", False, _key_ref("secret", "test-secret"),
     [], False, {}, {"test-secret": {"a": "b"}}, [], {}),
    ("configmap", "test1", False, _CM_ENV,
     [_from("configMap"), _from("configMap", "p_")], True, {"test-config-map": _CM}, {}, [],
     {**_CM_WANT, **KUBE}),
    ("configmap allow prefix to start with a digital", "test1", False, _CM_ENV,
     [_from("configMap"), _from("configMap", "1_")], True, {"test-config-map": _CM}, {}, [],
     {"TEST_LITERAL": "test-test-test", "REPLACE_ME": "FROM_CONFIG_MAP",
      "EXPANSION_TEST": "FROM_CONFIG_MAP", "DUPE_TEST": "ENV_VAR",
      "1_REPLACE_ME": "FROM_CONFIG_MAP", "1_DUPE_TEST": "CONFIG_MAP", **KUBE}),
    ("configmap, service env vars", "test1", True, _CM_ENV,
     [_from("configMap"), _from("configMap", "p_")], True, {"test-config-map": _CM}, {}, [],
     {**_CM_WANT, **TEST1, **KUBE}),
    ("configmap_missing", "test1", False, [], [_from("configMap")], True, {}, {}, [],
     {"error": True}),
    ("configmap_missing_optional", "test", False, [],
     [_from("configMap", optional=True, name="missing-config-map")], True, {}, {}, [],
     dict(KUBE)),
    ("configmap_invalid_keys_valid", "test", False, [], [_from("configMap", "p_")], True,
     {"test-config-map": {"1234": "abc"}}, {}, [], {"p_1234": "abc", **KUBE}),
    ("secret", "test1", False, _CM_ENV, [_from("secret"), _from("secret", "p_")], True, {},
     {"test-secret": _SECRET}, [],
     {"TEST_LITERAL": "test-test-test", "REPLACE_ME": "FROM_SECRET",
      "EXPANSION_TEST": "FROM_SECRET", "DUPE_TEST": "ENV_VAR", "p_REPLACE_ME": "FROM_SECRET",
      "p_DUPE_TEST": "SECRET", **KUBE}),
)

_SYNC = ("the fake lister's sync state (serviceHasSynced): the library takes the Services the "
         "caller has; it has no lister that can be unsynced")

ROWS: tuple[Row, ...] = (
    Row(V_ABA588C, "TestMakeEnvironmentVariables",
        "if services aren't synced, non-static pods should fail", {}, {"error": True},
        out_of_scope=_SYNC),
    Row(V_ABA588C, "TestMakeEnvironmentVariables",
        "if services aren't synced, static pods should succeed", {}, {},
        out_of_scope=_SYNC),
    *(Row(V_ABA588C, "TestMakeEnvironmentVariables", name,
          {"namespace": ns, "enableServiceLinks": links, "env": env, "envFrom": env_from,
           "lister": lister, "configMaps": cms, "secrets": secrets, "podIPs": ips},
          want, fake="SERVICES for the lister, config_maps/secrets for the fake managers, "
          "NodeContext(node_ips=(\"127.0.0.1\", \"::1\"))",
          note="the expected error's text is the fake manager's, so only its kind is "
          "compared" if "error" in want else "")
      for name, ns, links, env, env_from, lister, cms, secrets, ips, want in _TABLE),
)
NOT_TRANSCRIBED = (
    ("TestMakeEnvironmentVariables (rows after \"secret\")",
     "not read before the deadline: the version is longer than the index's text search "
     "reaches, and was paged by hand"),
    ("TestMakeMounts and the volume tests", "the library does not build mounts yet"),
)
SOURCES = (V_ABA588C,)
