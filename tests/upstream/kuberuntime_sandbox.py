"""pkg/kubelet/kuberuntime/kuberuntime_sandbox_test.go, as data: the sandbox config of
newTestPod, seccomp, RuntimeClass handlers and the Windows sandbox tables.

Versions, all reported by the index without a commit: 144166587 (14,640 characters, with
the WindowsHostNetwork table) and 55976164082 (26,089 characters, with checkpoint
restore, without the WindowsHostNetwork table); a third, 55952021978, lies between them.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kuberuntime/kuberuntime_sandbox_test.go"

V_OLD = Source(
    FILE,
    "index-144166587",
    tuple(range(26, 33)),
    "TestGeneratePodSandboxWindowsConfig_HostNetwork tests the WindowsHostNetwork gate "
    "(added in 1.26); kubernetes#130250 removed the code it tests in 1.33",
)
V_NEW = Source(
    FILE,
    "index-55976164082",
    tuple(range(33, 38)),
    "no HostNetwork table (after kubernetes#130250, 1.33) but still sets the "
    "WindowsHostNetwork gate, which kubernetes#142018 removed in 1.38",
)

# newTestPod()
_TEST_POD = {"uid": "12345678", "name": "bar", "namespace": "new",
             "containers": [{"name": "foo", "image": "busybox",
                             "imagePullPolicy": "IfNotPresent", "ports": [{"hostPort": 8080}]}]}

_SECCOMP: tuple[tuple[str, dict[str, Any] | None, dict[str, Any] | None], ...] = (
    ("no seccomp defined at pod level should return runtime/default", None, None),
    ("seccomp field defined at pod level should not be honoured", {"type": "Unconfined"}, None),
    ("seccomp field defined at container level should not be honoured", None,
     {"type": "Unconfined"}),
    # newSeccompPod ignores its annotation arguments: these two pods carry no profile.
    ("seccomp annotation defined at pod level should not be honoured", None, None),
    ("seccomp annotation defined at container level should not be honoured", None, None),
)

# rctest.NewPopulatedClient: RuntimeClass "sandbox" with handler "kata-containers".
_RUNTIME_CLASS_FAKE = ("rctest.NewPopulatedClient -> NodeContext(runtime_handlers="
                       "{\"sandbox\": \"kata-containers\"})")
_RUNTIME_CLASS = (
    ("unspecified RuntimeClass", None, {"handler": ""}),
    ("valid RuntimeClass", "sandbox", {"handler": "kata-containers"}),
    ("missing RuntimeClass", "phantom",
     {"error": 'runtimeclass.node.k8s.io "phantom" not found'}),
)

_GMSA = {"windowsOptions": {"gmsaCredentialSpec": "gmsa-creds"}}
_USER = {"windowsOptions": {"runAsUserName": "SYSTEM"}}
_HP_T = {"windowsOptions": {"hostProcess": True}}
_HP_F = {"windowsOptions": {"hostProcess": False}}
_HOST_PROCESS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    ("Empty PodSecurityContext", {"containers": [{"name": "container"}]}, {"context": {}}),
    ("GMSACredentialSpec in PodSecurityContext",
     {"securityContext": _GMSA, "containers": [{"name": "container"}]},
     {"context": {"credential_spec": "gmsa-creds"}}),
    ("RunAsUserName in PodSecurityContext",
     {"securityContext": _USER, "containers": [{"name": "container"}]},
     {"context": {"run_as_username": "SYSTEM"}}),
    ("Pod with HostProcess containers and non-HostProcess containers",
     {"securityContext": _HP_T, "containers": [
         {"name": "container"}, {"name": "container", "securityContext": _HP_F}]},
     {"error": "pod must not contain both HostProcess and non-HostProcess containers"}),
    ("Pod with HostProcess containers and HostNetwork not set",
     {"securityContext": _HP_T, "containers": [{"name": "container"}]},
     {"error": "hostNetwork is required if Pod contains HostProcess containers"}),
    ("Pod with HostProcess containers and HostNetwork set",
     {"hostNetwork": True, "securityContext": _HP_T, "containers": [{"name": "container"}]},
     {"context": {"host_process": True}}),
    ("Pod's WindowsOptions.HostProcess set to false and pod has HostProcess containers",
     {"hostNetwork": True, "securityContext": _HP_F,
      "containers": [{"name": "container", "securityContext": _HP_T}]},
     {"error": "pod must not contain any HostProcess containers if Pod's "
               "WindowsOptions.HostProcess is set to false"}),
    ("Pod's security context doesn't specify HostProcess containers but Container's "
     "security context does",
     {"hostNetwork": True, "containers": [{"name": "container", "securityContext": _HP_T}]},
     {"context": {"host_process": True}}),
)
_HOST_NETWORK: tuple[tuple[str, bool, bool, dict[str, Any]], ...] = (
    ("feature disabled, hostNetwork=false", False, False, {"context": {}}),
    ("feature disabled, hostNetwork=true", False, True, {"context": {}}),
    ("feature enabled, hostNetwork=false", True, False,
     {"context": {"namespace_options": {"network": "POD"}}}),
    ("feature enabled, hostNetwork=true", True, True,
     {"context": {"namespace_options": {"network": "NODE"}}}),
)

_RESTORE = ("checkpoint restore (RestorePod) is not modelled: the library builds "
            "RunPodSandbox and CreateContainer")


def _rows(source: Source, old: bool) -> list[Row]:
    rows = [
        Row(source, "TestGeneratePodSandboxConfig", "(single case)",
            {"pod": _TEST_POD, "attempt": 1},
            {"labels": {"io.kubernetes.pod.name": "bar", "io.kubernetes.pod.namespace": "new",
                        "io.kubernetes.pod.uid": "12345678"},
             "metadata": {"name": "bar", "namespace": "new", "uid": "12345678", "attempt": 1},
             "port_mappings": [{"host_port": 8080}],
             "log_directory": "/var/log/pods/new_bar_12345678"},
            note="the log directory is not compared: the row expects filepath.Join on the "
            "Linux test host; a Windows kubelet joins with backslashes (docs/requests.md)"),
        Row(source, "TestCreatePodSandbox", "(single case)", {}, {},
            out_of_scope="asserts the fake runtime's sandbox ID and the fake OS's MkdirAll; "
            "the request it sends is TestGeneratePodSandboxConfig's"),
        *(Row(source, "TestGeneratePodSandboxLinuxConfigSeccomp", name,
              {"pod_seccomp": pod, "container_seccomp": container},
              {"seccomp": "RuntimeDefault"})
          for name, pod, container in _SECCOMP),
        *(Row(source, "TestCreatePodSandbox_RuntimeClass", name, {"runtimeClassName": rcn},
              want, fake=_RUNTIME_CLASS_FAKE) for name, rcn, want in _RUNTIME_CLASS),
        *(Row(source, "TestGeneratePodSandboxWindowsConfig_HostProcess", name,
              {"spec": spec, "WindowsHostNetwork": False}, want)
          for name, spec, want in _HOST_PROCESS),
    ]
    if old:
        rows += [Row(source, "TestGeneratePodSandboxWindowsConfig_HostNetwork", name,
                     {"WindowsHostNetwork": gate,
                      "spec": {"hostNetwork": host, "containers": [{"name": "container"}]}},
                     want) for name, gate, host, want in _HOST_NETWORK]
    else:
        rows += [Row(source, test, "(whole test)", {}, {}, out_of_scope=_RESTORE)
                 for test in ("TestRestorePodSandbox_RuntimeClass",
                              "TestRestorePodSandboxPidNamespaceFromSpec",
                              "TestRestorePodSandboxSelectsRestorableContainers",
                              "TestRestorePodSandboxCleansUpWhenPreStartFails",
                              "TestGenerateContainerConfigForRestoreDoesNotInspectImageUser",
                              "TestValidateRestorePodResponse", "TestAcquireReleaseRestore",
                              "TestRestorePodSandboxRejectsConcurrentRestore")]
    return rows


ROWS: tuple[Row, ...] = (*_rows(V_OLD, old=True), *_rows(V_NEW, old=False))
SOURCES = (V_OLD, V_NEW)
