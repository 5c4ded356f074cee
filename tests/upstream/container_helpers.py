"""pkg/kubelet/container/helpers_test.go, as data: command/args expansion, container
lookup, privileged sandboxes, port mappings, the container hash and HostProcess
detection. Upstream calls the helpers directly; here each goes through the request that
carries its result.

Two versions: the index's 27,586-character version (index id 76302740, reported without a
commit; it pins HashContainer's 1.31 value) and 36a4ee45, which predates kubelet 1.20.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/container/helpers_test.go"

V_NEW = Source(
    FILE,
    "index-76302740",
    tuple(range(31, 39)),
    "TestHashContainer pins 0x8e45cbd0, the name-and-image hash of kubernetes#124220 "
    "(kubelet 1.31+); MakePortMappings keeps the same container port on different host "
    "ports and IPs (kubernetes#94494, 1.20)",
)
V_OLD = Source(
    FILE,
    "36a4ee4533e4aebb597b96e480f91a3e0eaf43d3",
    (),
    "sets the EphemeralContainers gate and drops a port mapping by containerPort and "
    "hostIP alone, which kubernetes#94494 changed in 1.20: older than any kubelet modelled",
)

_EXPAND: tuple[tuple[str, dict[str, Any], dict[str, str], dict[str, list[str]]], ...] = (
    ("none", {}, {}, {"command": [], "args": []}),
    ("command expanded", {"command": ["foo", "$(VAR_TEST)", "$(VAR_TEST2)"]},
     {"VAR_TEST": "zoo", "VAR_TEST2": "boo"}, {"command": ["foo", "zoo", "boo"], "args": []}),
    ("args expanded", {"args": ["zap", "$(VAR_TEST)", "$(VAR_TEST2)"]},
     {"VAR_TEST": "hap", "VAR_TEST2": "trap"}, {"command": [], "args": ["zap", "hap", "trap"]}),
    ("both expanded", {"command": ["$(VAR_TEST2)--$(VAR_TEST)", "foo", "$(VAR_TEST3)"],
                       "args": ["foo", "$(VAR_TEST)", "$(VAR_TEST2)"]},
     {"VAR_TEST": "zoo", "VAR_TEST2": "boo", "VAR_TEST3": "roo"},
     {"command": ["boo--zoo", "foo", "roo"], "args": ["foo", "zoo", "boo"]}),
)
_SPEC_LOOKUP = {"containers": [{"name": "plain-ole-container"}],
                "initContainers": [{"name": "init-container"}],
                "ephemeralContainers": [{"name": "debug-container"}]}
_GET_SPEC = (
    ("regular container", "plain-ole-container"),
    ("init container", "init-container"),
    ("ephemeral container", "debug-container"),
)
_PRIVILEGED: tuple[tuple[str, dict[str, Any] | None, bool], ...] = (
    ("nil security context", None, False),
    ("nil privileged", {}, False),
    ("false privileged", {"privileged": False}, False),
    ("true privileged", {"privileged": True}, True),
)


def _port(name: str, protocol: str, container: int, host: int, ip: str) -> dict[str, Any]:
    port: dict[str, Any] = {"protocol": protocol, "containerPort": container, "hostPort": host}
    if name:
        port["name"] = name
    if ip:
        port["hostIP"] = ip
    return port


def _mapping(protocol: str, container: int, host: int, ip: str) -> dict[str, Any]:
    return {"protocol": protocol, "container_port": container, "host_port": host, "host_ip": ip}


_PORTS = (
    ("(first case: duplicates by name dropped, families kept)",
     [_port("", "TCP", 80, 8080, "127.0.0.1"), _port("", "TCP", 443, 4343, "192.168.0.1"),
      _port("foo", "UDP", 555, 5555, ""), _port("foo", "UDP", 888, 8888, ""),
      _port("", "TCP", 80, 8080, "::"), _port("", "TCP", 1234, 5678, "")],
     [_mapping("TCP", 80, 8080, "127.0.0.1"), _mapping("TCP", 443, 4343, "192.168.0.1"),
      _mapping("UDP", 555, 5555, ""), _mapping("TCP", 80, 8080, "::"),
      _mapping("TCP", 1234, 5678, "")]),
    ("The same container port can be mapped to different host ports",
     [_port("", "TCP", 443, 4343, "192.168.0.1"), _port("", "TCP", 4343, 4343, "192.168.0.1")],
     [_mapping("TCP", 443, 4343, "192.168.0.1"), _mapping("TCP", 4343, 4343, "192.168.0.1")]),
    ("The same container port AND same container host is not OK",
     [_port("", "TCP", 443, 4343, ""), _port("", "TCP", 443, 4343, "")],
     [_mapping("TCP", 443, 4343, "")]),
    ("multihomed nodes - multiple IP scenario",
     [_port("", "TCP", 443, 4343, "192.168.0.1"), _port("", "TCP", 443, 4343, "172.16.0.1")],
     [_mapping("TCP", 443, 4343, "192.168.0.1"), _mapping("TCP", 443, 4343, "172.16.0.1")]),
)

_HP_TRUE = {"windowsOptions": {"hostProcess": True}}
_HP_FALSE = {"windowsOptions": {"hostProcess": False}}


def _c(sc: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": "container", **({"securityContext": sc} if sc else {})}


_MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
_POD_FALSE = ("pod must not contain any HostProcess containers if Pod's "
              "WindowsOptions.HostProcess is set to false")
_REFUSED = ("the kubelet refuses this pod in generatePodSandboxWindowsConfig ({}), so "
            "HasWindowsHostProcessContainer's answer reaches no request (the refusal is "
            "tested in tests/kubelet/test_rules.py)")
_HOST_PROCESS: tuple[tuple[str, dict[str, Any], bool, str], ...] = (
    ("hostprocess not set anywhere", {"containers": [_c()]}, False, ""),
    ("pod with hostprocess=false", {"hostNetwork": True, "securityContext": _HP_FALSE,
                                    "containers": [_c()]}, False, ""),
    ("pod with hostprocess=true", {"hostNetwork": True, "securityContext": _HP_TRUE,
                                   "containers": [_c()]}, True, ""),
    ("container with hostprocess=false", {"hostNetwork": True, "containers": [_c(_HP_FALSE)]},
     False, ""),
    ("container with hostprocess=true", {"hostNetwork": True, "containers": [_c(_HP_TRUE)]},
     True, ""),
    ("pod with hostprocess=false, container with hostprocess=true",
     {"hostNetwork": True, "securityContext": _HP_FALSE, "containers": [_c(_HP_TRUE)]}, True,
     _REFUSED.format(_POD_FALSE)),
    ("pod with hostprocess=true, container with hostprocess=flase",
     {"hostNetwork": True, "securityContext": _HP_TRUE, "containers": [_c(_HP_FALSE)]}, False,
     ""),
    ("containers with hostproces=mixed", {"containers": [_c(_HP_FALSE), _c(_HP_TRUE)]}, True,
     _REFUSED.format(_MIXED)),
    ("pod with hostProcess=false, containers with hostproces=mixed",
     {"securityContext": _HP_FALSE, "containers": [_c(_HP_FALSE), _c(_HP_TRUE)]}, True,
     _REFUSED.format(_POD_FALSE)),
    ("pod with hostProcess=true, containers with hostproces=mixed",
     {"securityContext": _HP_TRUE, "containers": [_c(_HP_FALSE), _c(_HP_TRUE)]}, True,
     _REFUSED.format(_MIXED)),
)

# TestExpandVolumeMountsWithSubpath: (name, mountPath, subPathExpr, envs, expected
# subPath, expected mountPath, ok). The mountPath column is ExpandContainerVolumeMountPath's,
# which makeMounts does not call (it mounts at mountPath as written): not checked.
_SUBPATH: tuple[tuple[str, str, str, dict[str, str], str, str, bool], ...] = (
    ("subpath with no expansion", "", "foo", {}, "foo", "", True),
    ("volumes with expanded subpath", "", "foo/$(POD_NAME)", {"POD_NAME": "bar"},
     "foo/bar", "", True),
    ("volumes expanded with empty subpath", "", "", {"POD_NAME": "bar"}, "", "", True),
    ("volumes expanded with no envs subpath", "", "/foo/$(POD_NAME)", {},
     "/foo/$(POD_NAME)", "", False),
    ("volumes expanded with leading environment variable", "", "$(POD_NAME)/bar",
     {"POD_NAME": "foo"}, "foo/bar", "", True),
    ("volumes with volume and subpath", "/foo", "$(POD_NAME)/bar", {"POD_NAME": "foo"},
     "foo/bar", "/foo", True),
    ("volumes with volume and no subpath", "/foo", "", {"POD_NAME": "foo"}, "", "/foo", True),
    ("subpaths with empty environment variable", "", "foo/$(POD_NAME)/$(ANNOTATION)",
     {"ANNOTATION": ""}, "foo/$(POD_NAME)/$(ANNOTATION)", "", False),
    ("subpaths with missing env variables", "", "foo/$(ODD_NAME)/$(POD_NAME)",
     {"ODD_NAME": "bar"}, "foo/$(ODD_NAME)/$(POD_NAME)", "", False),
    ("subpaths with empty expansion", "", "$()", {}, "$()", "", False),
    ("subpaths with nested expandable envs", "", "$(POD_NAME$(ANNOTATION))",
     {"POD_NAME": "foo", "ANNOTATION": "bar"}, "$(POD_NAME$(ANNOTATION))", "", False),
    ("mountPath with nested expandable envs", "$(POD_NAME$(ANNOTATION))",
     "$(POD_NAME$(ANNOTATION))", {"POD_NAME": "foo", "ANNOTATION": "bar"},
     "$(POD_NAME$(ANNOTATION))", "$(POD_NAME$(ANNOTATION))", False),
    ("mountpath and subpath with no expansion", "bar", "bar", {"POD_NAME": "foo"}, "bar",
     "bar", True),
    ("volumes with volume and mountpath", "$(POD_NAME)/bar", "$(POD_NAME)/bar",
     {"POD_NAME": "foo"}, "foo/bar", "foo/bar", True),
    ("mouthpath with missing env variables", "foo/$(ODD_NAME)/$(POD_NAME)", "$(POD_NAME)",
     {"ODD_NAME": "bar"}, "$(POD_NAME)", "foo/$(ODD_NAME)/$(POD_NAME)", False),
    # The table repeats this row, name included; kept once more under a marked name.
    ("mountPath with nested expandable envs (repeated)", "$(POD_NAME$(ANNOTATION))",
     "$(POD_NAME$(ANNOTATION))", {"POD_NAME": "foo", "ANNOTATION": "bar"},
     "$(POD_NAME$(ANNOTATION))", "$(POD_NAME$(ANNOTATION))", False),
)

_BURSTABLE = {"limits": {"cpu": "200m", "memory": "200Mi"},
              "requests": {"cpu": "100m", "memory": "100Mi"}}
_GUARANTEED = {"limits": {"cpu": "100m", "memory": "100Mi"},
               "requests": {"cpu": "100m", "memory": "100Mi"}}
_CPU_RESTART = [{"resourceName": "cpu", "restartPolicy": "RestartContainer"},
                {"resourceName": "memory", "restartPolicy": "NotRequired"}]
_MEMORY_RESTART = [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                   {"resourceName": "memory", "restartPolicy": "RestartContainer"}]
_WITHOUT_RESOURCES = (
    ("Burstable pod with CPU policy restart required", _BURSTABLE, _CPU_RESTART),
    ("Burstable pod with memory policy restart required", _BURSTABLE, _MEMORY_RESTART),
    ("Guaranteed pod with CPU policy restart required", _GUARANTEED, _CPU_RESTART),
    ("Guaranteed pod with memory policy restart required", _GUARANTEED, _MEMORY_RESTART),
)

ROWS: tuple[Row, ...] = (
    *(Row(V_NEW, "TestExpandCommandAndArgs", name, {"container": container, "envs": envs}, want)
      for name, container, envs, want in _EXPAND),
    *(Row(V_NEW, "TestGetContainerSpec", name, {"spec": _SPEC_LOOKUP, "name": wanted},
          {"container": wanted}) for name, wanted in _GET_SPEC),
    *(Row(V_NEW, "TestHasPrivilegedContainer", f"{name} ({kind})",
          {"kind": kind, "securityContext": sc}, {"privileged": want})
      for kind in ("containers", "initContainers") for name, sc, want in _PRIVILEGED),
    *(Row(V_NEW, "TestMakePortMappings", name, {"ports": ports}, {"port_mappings": want})
      for name, ports, want in _PORTS),
    Row(V_NEW, "TestHashContainer", "test_container",
        {"name": "test_container", "image": "foo/image:v1",
         "args": ["/bin/sh", "-c", "echo abc"], "ports": [{"containerPort": 8001}]},
        {"hash": 0x8E45CBD0}),
    *(Row(V_NEW, "TestHasWindowsHostProcessContainer", name, {"spec": spec},
          {"host_process": want}, out_of_scope=reason)
      for name, spec, want, reason in _HOST_PROCESS),
    *(Row(V_NEW, "TestExpandVolumeMountsWithSubpath", name,
          {"mountPath": mount_path, "subPathExpr": expression, "envs": envs},
          {"subPath": sub_path, "ok": ok}, note=f"expected mountPath {mount_path_want!r}: "
          "ExpandContainerVolumeMountPath, not called by makeMounts; not checked")
      for name, mount_path, expression, envs, sub_path, mount_path_want, ok in _SUBPATH),
    Row(V_NEW, "TestShouldContainerBeRestarted", "(whole table)", {}, {},
        out_of_scope="restart decisions from the runtime's container statuses: no request"),
    Row(V_NEW, "TestShouldRecordEvent", "(whole test)", {}, {},
        out_of_scope="event recording: no request"),
    Row(V_NEW, "TestEnvVarsToMap", "(single case)", {}, {},
        out_of_scope="an internal conversion with no request of its own; the environment "
        "is checked by TestExpandCommandAndArgs's rows"),
    *(Row(V_NEW, "TestHashContainerWithoutResources", name,
          {"name": "foo", "image": "bar", "resources": resources, "resizePolicy": policy},
          {"hash": 0x11A6D6D6},
          note="upstream calls HashContainer (name and image) here; run with "
          "InPlacePodVerticalScaling=true, hashWithoutResources carries the same value "
          "through 1.32 (labels.go f6b65043) and is absent from 1.33 (kuberuntime_container.go "
          "fbba6b47, labels_test.go 0411cc70)")
      for name, resources, policy in _WITHOUT_RESOURCES),
    *(Row(V_OLD, test, "(whole table)", {}, {}, out_of_scope=V_OLD.evidence)
      for test in ("TestEnvVarsToMap", "TestExpandCommandAndArgs",
                   "TestExpandVolumeMountsWithSubpath", "TestGetContainerSpec",
                   "TestShouldContainerBeRestarted", "TestHasPrivilegedContainer",
                   "TestMakePortMappings", "TestHashContainer")),
)
SOURCES = (V_NEW, V_OLD)
