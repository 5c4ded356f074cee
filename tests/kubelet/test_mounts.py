"""``ContainerConfig.mounts`` (``_kubelet/mounts.py``): expected values restated from
pkg/kubelet/kubelet_pods.go ``makeMounts`` / ``shouldMountHostsFile``,
kuberuntime_container.go ``makeMounts`` (termination log), pkg/volume/util
``MakeAbsolutePath`` and the plugins' ``GetPath`` (``GetPodVolumeDir``: ``<root>\\pods\\<uid>
\\volumes\\kubernetes.io~<plugin>\\<volume>``), computed here from the input."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2

UID = "6d3c9a4e-0000-4000-8000-000000000001"
ROOT = "C:\\var\\lib\\kubelet"
POD_DIR = f"{ROOT}\\pods\\{UID}"
HOSTS = "C:\\Windows\\System32\\drivers\\etc\\hosts"  # windowsEtcHostsPath, kubelet.go


def _pod(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]], **spec: Any
         ) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "img", "volumeMounts": mounts}
    container.update(spec.pop("container", {}))
    return {"kind": "Pod", "metadata": {"name": "web", "namespace": "ns", "uid": UID},
            "spec": {"volumes": volumes, "containers": [container], **spec}}


def _mounts(pod: dict[str, Any], **kwargs: Any) -> list[api_pb2.Mount]:
    return list(kw.container_config(pod, "app", **kwargs).mounts)


def _plugin_path(plugin: str, name: str) -> str:
    return f"{POD_DIR}\\volumes\\kubernetes.io~{plugin}\\{name}"


@pytest.mark.parametrize(("kind", "source", "plugin", "read_only"), [
    ("emptyDir", {}, "empty-dir", False),
    ("configMap", {"name": "settings"}, "configmap", True),
    ("secret", {"secretName": "creds"}, "secret", True),
    ("downwardAPI", {"items": []}, "downward-api", True),
    ("projected", {"sources": [{"serviceAccountToken": {"path": "token"}}]}, "projected", True),
])
def test_plugin_volume_host_paths(kind: str, source: dict[str, Any], plugin: str,
                                  read_only: bool) -> None:
    """GetPath of the in-tree plugins; configMap, secret, downwardAPI and projected report
    GetAttributes().ReadOnly, so ReadOnly is `mount.ReadOnly || mustMountRO`."""
    pod = _pod([{"name": "vol", kind: source}], [{"name": "vol", "mountPath": "C:\\data"}])
    mount = _mounts(pod)[0]
    assert mount.host_path == _plugin_path(plugin, "vol")
    assert mount.container_path == "C:\\data"
    assert mount.readonly is read_only
    assert mount.propagation == api_pb2.PROPAGATION_PRIVATE and not mount.selinux_relabel


def test_service_account_token_volume() -> None:
    """The kube-api-access projected volume the ServiceAccount admission plugin adds is a
    projected volume like any other: read-only, under kubernetes.io~projected."""
    volume = {"name": "kube-api-access-x2b7q", "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt",
                                                               "path": "ca.crt"}]}}]}}
    pod = _pod([volume], [{"name": "kube-api-access-x2b7q", "readOnly": True,
                           "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    mount = _mounts(pod)[0]
    assert mount.host_path == _plugin_path("projected", "kube-api-access-x2b7q")
    # utilfs.IsAbs (1.31+ on Windows) takes a slash-rooted path as absolute: unchanged.
    assert mount.container_path == "/var/run/secrets/kubernetes.io/serviceaccount"
    assert mount.readonly


def test_host_path_volume() -> None:
    """hostPath's GetPath is the path as written; a slash-rooted one gets `c:`
    (IsWindowsLocalPath -> MakeAbsolutePath); an inline hostPath is not read-only."""
    pod = _pod([{"name": "h", "hostPath": {"path": "/var/log"}},
                {"name": "d", "hostPath": {"path": "D:\\logs", "type": "Directory"}}],
               [{"name": "h", "mountPath": "C:\\h"}, {"name": "d", "mountPath": "C:\\d"}])
    first, second = _mounts(pod)[:2]
    assert first.host_path == "c:/var/log" and not first.readonly
    assert second.host_path == "D:\\logs"


def test_named_pipe_host_path_is_kept() -> None:
    """IsWindowsUNCPath: a `\\\\.\\pipe\\...` path is neither made absolute nor changed."""
    pipe = "\\\\.\\pipe\\containerd-containerd"
    pod = _pod([{"name": "p", "hostPath": {"path": pipe}}], [{"name": "p", "mountPath": pipe}])
    mount = _mounts(pod)[0]
    assert (mount.host_path, mount.container_path) == (pipe, pipe)


@pytest.mark.parametrize(("minor", "expected"), [(30, "c:\\data"), (31, "\\data"),
                                                  (38, "\\data")])
def test_slash_rooted_container_path_per_release(minor: int, expected: str) -> None:
    """1.30's TestMakeMountsWindows pins `\\mnt\\path6` -> `c:\\mnt\\path6`; newer
    kubelets test with utilfs.IsAbs, which takes a leading backslash as absolute."""
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "\\data"}])
    assert _mounts(pod, kubelet_version=f"1.{minor}")[0].container_path == expected


def test_relative_container_path_gets_drive() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "data"}])
    assert _mounts(pod)[0].container_path == "c:\\data"


def test_read_only_mount_of_a_writable_volume() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "readOnly": True},
                {"name": "v", "mountPath": "C:\\b", "readOnly": False}])
    first, second = _mounts(pod)[:2]
    assert first.readonly and not second.readonly
    assert first.host_path == second.host_path == _plugin_path("empty-dir", "v")


@pytest.mark.parametrize("mode", ["HostToContainer", "Bidirectional", "None", "Sideways"])
def test_mount_propagation_is_private_on_windows(mode: str) -> None:
    """translateMountPropagation returns PROPAGATION_PRIVATE when GOOS is windows, before
    it looks at the mode (so not even an unknown mode fails)."""
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "mountPropagation": mode}])
    assert _mounts(pod)[0].propagation == api_pb2.PROPAGATION_PRIVATE


def test_sub_path_joins_the_volume_path() -> None:
    """filepath.Join(volumePath, subPath) on Windows: slashes become backslashes."""
    pod = _pod([{"name": "c", "configMap": {"name": "x"}}],
               [{"name": "c", "mountPath": "C:\\app\\config.yaml", "subPath": "conf/app.yaml"}])
    assert _mounts(pod)[0].host_path == _plugin_path("configmap", "c") + "\\conf\\app.yaml"


def test_sub_path_expr_uses_the_container_environment() -> None:
    """ExpandContainerVolumeMounts expands with opts.Envs, downward API values included."""
    container = {"env": [{"name": "POD", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.name"}}}]}
    pod = _pod([{"name": "logs", "hostPath": {"path": "C:\\logs"}}],
               [{"name": "logs", "mountPath": "C:\\out", "subPathExpr": "$(POD)"}],
               container=container)
    assert _mounts(pod)[0].host_path == "C:\\logs\\web"


def test_sub_path_expr_missing_values_are_listed_sorted() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "subPathExpr": "$(ZED)/$(ALPHA)/$(ZED)"}],
               container={"env": [{"name": "ALPHA", "value": ""}]})
    with pytest.raises(kw.SandboxConfigError) as info:
        _mounts(pod)
    assert str(info.value) == "missing value for ALPHA, ZED"


@pytest.mark.parametrize("sub_path", ["C:\\etc", "\\etc", "/etc"])
def test_absolute_sub_path_is_refused(sub_path: str) -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "subPath": sub_path}])
    with pytest.raises(kw.SandboxConfigError) as info:
        _mounts(pod)
    assert str(info.value) == f"error SubPath `{sub_path}` must not be an absolute path"


@pytest.mark.parametrize("sub_path", ["..", "a/../../b", "a\\..\\b"])
def test_sub_path_backsteps_are_refused(sub_path: str) -> None:
    """ValidatePathNoBacksteps splits filepath.ToSlash(path): a backslash separates too."""
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "subPath": sub_path}])
    with pytest.raises(kw.SandboxConfigError) as info:
        _mounts(pod)
    assert str(info.value) == f"unable to provision SubPath `{sub_path}`: must not contain '..'"


def test_dots_inside_a_name_are_not_backsteps() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "subPath": "a..b"}])
    assert _mounts(pod)[0].host_path.endswith("\\v\\a..b")


def test_unknown_volume_is_the_kubelets_error() -> None:
    """makeMounts: `cannot find volume %q to mount into container %q`."""
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "missing", "mountPath": "C:\\a"}])
    with pytest.raises(kw.SandboxConfigError) as info:
        _mounts(pod)
    assert str(info.value) == 'cannot find volume "missing" to mount into container "app"'


def test_volume_the_library_cannot_place_needs_volume_paths() -> None:
    pod = _pod([{"name": "data", "persistentVolumeClaim": {"claimName": "c", "readOnly": True}}],
               [{"name": "data", "mountPath": "C:\\data"}])
    with pytest.raises(kw.InvalidPodError) as info:
        _mounts(pod)
    assert info.value.field == "spec.volumes[0].persistentVolumeClaim"
    assert "volume_paths['data']" in str(info.value)
    path = f"{POD_DIR}\\volumes\\kubernetes.io~csi\\pv-1\\mount"
    mount = _mounts(pod, volume_paths={"data": path})[0]
    assert mount.host_path == path and mount.readonly  # the claim's readOnly


def test_volume_with_two_sources_is_invalid() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}, "hostPath": {"path": "C:\\x"}}],
               [{"name": "v", "mountPath": "C:\\a"}])
    with pytest.raises(kw.InvalidPodError) as info:
        _mounts(pod)
    assert info.value.field == "spec.volumes[0]"
    assert str(info.value).endswith("expected exactly one volume source, got emptyDir, hostPath")


def test_bad_mount_fields_name_their_path() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}],
               [{"name": "v", "mountPath": "C:\\a", "readOnly": "yes"}])
    with pytest.raises(kw.InvalidPodError) as info:
        _mounts(pod)
    assert info.value.field == "spec.containers[0].volumeMounts[0].readOnly"


def test_termination_message_mount() -> None:
    """kuberuntime makeMounts: <pod dir>\\containers\\<name>\\<makeUID()> mounted at
    MakeAbsolutePath(terminationMessagePath), last, writable."""
    pod = _pod([], [])
    (mount,) = _mounts(pod, termination_log_id="0a1b2c3d")
    assert mount.host_path == f"{POD_DIR}\\containers\\app\\0a1b2c3d"
    assert mount.container_path == "c:/dev/termination-log"
    assert not mount.readonly
    custom = _pod([], [], container={"terminationMessagePath": "C:\\logs\\end.txt"})
    assert _mounts(custom)[-1].container_path == "C:\\logs\\end.txt"


@pytest.mark.parametrize("bad", ["0A1B2C3D", "123", "xyzxyzxy", 7])
def test_termination_log_id_is_checked(bad: object) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        _mounts(_pod([], []), termination_log_id=bad)
    assert "termination_log_id" in str(info.value)


def test_hosts_file_mount_with_pod_ips() -> None:
    """shouldMountHostsFile: pod IPs known and no HostProcess container; after the volume
    mounts, before the termination log."""
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "C:\\a"}])
    mounts = _mounts(pod, pod_ips=("10.244.1.7",))
    assert [m.container_path for m in mounts] == ["C:\\a", HOSTS, "c:/dev/termination-log"]
    assert mounts[1].host_path == f"{POD_DIR}\\etc-hosts" and not mounts[1].readonly
    assert [m.container_path for m in _mounts(pod)] == ["C:\\a", "c:/dev/termination-log"]


def test_no_hosts_file_when_the_container_mounts_it() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": HOSTS}])
    assert [m.container_path for m in _mounts(pod, pod_ips=("10.244.1.7",))] == [
        HOSTS, "c:/dev/termination-log"]


def test_no_hosts_file_for_host_process_pods() -> None:
    sc = {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    pod = _pod([], [], hostNetwork=True, securityContext=sc)
    mounts = _mounts(pod, pod_ips=("10.240.0.4",))
    assert [m.container_path for m in mounts] == ["c:/dev/termination-log"]


@pytest.mark.parametrize(("minor", "mounted"), [(26, False), (31, False), (32, True), (38, True)])
def test_host_network_hosts_file_without_pod_ips_per_release(minor: int, mounted: bool) -> None:
    """kubernetes#126460 (1.32 here): hostNetwork pods get the hosts mount before pod IPs."""
    pod = _pod([], [], hostNetwork=True)
    paths = [m.container_path for m in _mounts(pod, kubelet_version=f"1.{minor}")]
    assert (HOSTS in paths) is mounted


def test_kubelet_root_from_node_context() -> None:
    node = kw.NodeContext(kubelet_root="D:\\k")
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "C:\\a"}])
    mounts = _mounts(pod, node=node)
    assert mounts[0].host_path == f"D:\\k\\pods\\{UID}\\volumes\\kubernetes.io~empty-dir\\v"
    assert mounts[-1].host_path == f"D:\\k\\pods\\{UID}\\containers\\app\\00000000"


def test_missing_uid_is_dropped_from_the_path() -> None:
    """metadata.uid absent reads as "" (as in the labels and the log directory), and
    filepath.Join drops an empty element."""
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "C:\\a"}])
    del pod["metadata"]["uid"]
    assert _mounts(pod)[0].host_path == f"{ROOT}\\pods\\volumes\\kubernetes.io~empty-dir\\v"


@pytest.mark.parametrize("mode", ["Enabled", "IfPossible"])
def test_recursive_read_only_is_not_modelled(mode: str) -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "C:\\a",
                                                  "readOnly": True, "recursiveReadOnly": mode}])
    with pytest.raises(kw.InvalidPodError) as info:
        _mounts(pod)
    assert info.value.field == "spec.containers[0].volumeMounts[0].recursiveReadOnly"
    assert "runtime handler" in str(info.value)


def test_create_container_request_carries_the_mounts() -> None:
    pod = _pod([{"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "C:\\a"}])
    request = kw.create_container_request(pod, "app", pod_sandbox_id="sb",
                                          volume_paths={"v": "C:\\elsewhere"},
                                          termination_log_id="ffffffff")
    assert [m.host_path for m in request.config.mounts] == [
        "C:\\elsewhere", f"{POD_DIR}\\containers\\app\\ffffffff"]


@pytest.mark.parametrize("bad", [["v"], {"v": 3}, {1: "C:\\x"}])
def test_volume_paths_are_checked(bad: object) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        _mounts(_pod([], []), volume_paths=bad)
    assert "volume_paths" in str(info.value)


def test_volume_paths_are_bounded() -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        _mounts(_pod([], []), volume_paths={f"v{i}": "C:\\x" for i in range(10_001)})
    assert "at most 10000 entries" in str(info.value)


def test_empty_termination_message_path_is_defaulted() -> None:
    """SetDefaults_Container turns an empty terminationMessagePath into
    /dev/termination-log before the kubelet sees the pod."""
    pod = _pod([], [], container={"terminationMessagePath": ""})
    assert [m.container_path for m in _mounts(pod)] == ["c:/dev/termination-log"]
