"""The ``mounts`` of a Windows ``ContainerConfig``, as the kubelet builds them.

Sources (kubernetes/kubernetes): ``makeMounts`` and ``shouldMountHostsFile`` in
pkg/kubelet/kubelet_pods.go (volume mounts, ``subPath`` / ``subPathExpr``, the managed hosts
file), ``translateMountPropagation`` (Windows: always ``PROPAGATION_PRIVATE``),
``GenerateRunContainerOptions`` (the container directory of the termination log) and
``makeMounts`` in pkg/kubelet/kuberuntime/kuberuntime_container.go (the termination-log
mount), ``MakeAbsolutePath`` / ``IsWindowsLocalPath`` / ``IsWindowsUNCPath`` in
pkg/volume/util/util.go, ``IsAbs`` in pkg/util/filesystem/util_windows.go,
``ExpandContainerVolumeMounts`` in pkg/kubelet/container/helpers.go and the volume plugins'
``GetPath`` (``<root>\\pods\\<uid>\\volumes\\kubernetes.io~<plugin>\\<volume>``, via
``GetPodVolumeDir``). Paths are joined as Go's ``filepath.Join`` does on Windows
(``golang.join_windows``).

The volume manager's state is not modelled: the host path of a volume the library cannot
place (a PersistentVolumeClaim, CSI, ...) is an explicit input (``volume_paths``), and the
termination log's random file name (``makeUID``: ``%08x`` of ``rand.Uint32()``) is too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.expansion import (
    ExpansionNotUtf8,
    GoString,
    expand,
    not_utf8_error,
)
from kubelet_winnet._kubelet.golang import join_windows, quote
from kubelet_winnet._kubelet.objectview import is_mapping
from kubelet_winnet._kubelet.pod import (
    PodView,
    get_bool,
    get_object,
    get_objects,
    get_str,
    is_utf8,
    read_field,
)
from kubelet_winnet._kubelet.request_facts import (
    HOSTS_MOUNT_FOR_HOST_NETWORK,
    NEWEST_RULE,
    RECURSIVE_READ_ONLY,
    SLASH_IS_ABSOLUTE,
    ExpansionRule,
)
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError, SandboxConfigError

__all__ = ["PLUGIN_DIRS", "container_mounts", "make_absolute_path"]

_ERROR_RULE = "container"

# The in-tree plugins whose host path GetPath derives from the pod alone: the API field,
# the escaped plugin name (utilstrings.EscapeQualifiedName) and the mounter's
# GetAttributes().ReadOnly (the atomic-writer volumes are always mounted read-only).
PLUGIN_DIRS: Mapping[str, tuple[str, bool]] = {
    "emptyDir": ("kubernetes.io~empty-dir", False),
    "configMap": ("kubernetes.io~configmap", True),
    "secret": ("kubernetes.io~secret", True),
    "projected": ("kubernetes.io~projected", True),
    "downwardAPI": ("kubernetes.io~downward-api", True),
}

# The path in Windows containers where the kubelet mounts the pod's hosts file
# (windowsEtcHostsPath, pkg/kubelet/kubelet.go).
WINDOWS_ETC_HOSTS_PATH = "C:\\Windows\\System32\\drivers\\etc\\hosts"


_HEX8 = re.compile(r"[0-9a-f]{8}")
_MAX_VOLUME_PATHS = 10_000  # far above any pod's volumes; bounds the copy


def make_absolute_path(path: str) -> str:
    """``MakeAbsolutePath("windows", path)``: unchanged with a colon, ``c:`` before a
    leading slash or backslash, ``c:\\`` before anything else."""
    if ":" in path:
        return path
    if path.startswith(("/", "\\")):
        return "c:" + path
    return "c:\\" + path


def is_unc_path(path: str) -> bool:
    return path.startswith("\\\\")


def is_local_path(path: str) -> bool:
    # IsWindowsLocalPath: a slash-rooted path without drive or UNC prefix.
    return not is_unc_path(path) and ":" not in path and path.startswith(("/", "\\"))


def _filepath_is_abs(path: str) -> bool:
    # Go's filepath.IsAbs on Windows: a drive or UNC volume followed by a separator.
    if is_unc_path(path) or path.startswith("//"):
        return True
    return len(path) >= 3 and path[1] == ":" and path[0].isalpha() and path[2] in "\\/"


def is_abs_path(path: str, minor: int) -> bool:
    """``utilfs.IsAbs`` (1.31+ here: slash-rooted paths count) or ``filepath.IsAbs``."""
    if SLASH_IS_ABSOLUTE.holds(minor) and path.startswith(("\\", "/")):
        return True
    return _filepath_is_abs(path)


class _Missing(Mapping[str, GoString]):
    """The mapping ``ExpandContainerVolumeMounts`` expands with: every name resolves,
    to its value, and a name without a non-empty value is recorded as missing."""

    def __init__(self, env: Mapping[str, GoString]) -> None:
        self.env = env
        self.missing: set[str] = set()

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> GoString:
        value = self.env.get(key, "")
        if not value:
            self.missing.add(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.env)

    def __len__(self) -> int:
        return len(self.env)


def expand_sub_path(
    expression: str, env: Mapping[str, GoString], rule: ExpansionRule | None = None,
    field: str = "subPathExpr",
) -> str:
    """``ExpandContainerVolumeMounts``: ``$(NAME)`` by the container's variables; a
    name without a non-empty value fails the container. ``rule``: the kubelet's
    expansion (``expansion_rule(version)``; rune-wise without it); a result that is not
    UTF-8 raises ``InvalidUtf8Error`` at ``field``."""
    lookup = _Missing(env)
    try:
        expanded = expand(expression, lookup, runes=rule is None or rule.rune_wise)
    except ExpansionNotUtf8 as exc:
        assert rule is not None  # only the byte-wise rule makes bytes that are not UTF-8
        secret = type(expand(expression, _Missing(env))) is bytes
        raise not_utf8_error(field, "subPathExpr", exc.value, rule, secret=secret) from None
    if lookup.missing:
        raise SandboxConfigError(
            "missing value for " + ", ".join(sorted(lookup.missing)), _ERROR_RULE
        )
    if type(expanded) is bytes:  # a Secret's bytes: the mount's paths are strings
        raise not_utf8_error(field, "subPathExpr", expanded, rule or NEWEST_RULE, secret=True)
    assert type(expanded) is str
    return expanded


def no_backsteps(path: str) -> bool:
    # volumevalidation.ValidatePathNoBacksteps, after filepath.ToSlash on Windows.
    return ".." not in path.replace("\\", "/").split("/")


def _volumes(view: PodView) -> dict[str, tuple[str, Mapping[str, Any], str]]:
    """name -> (source kind, source, field path) of the pod's volumes."""
    spec_at = view.spec_at
    found: dict[str, tuple[str, Mapping[str, Any], str]] = {}
    for index, volume in enumerate(get_objects(view.spec, "volumes", spec_at)):
        at = f"{spec_at}volumes[{index}]."
        name = get_str(volume, "name", at)
        if type(volume) is dict:  # manifest data: its items need no guarded reads
            kinds = [key for key, value in volume.items()
                     if type(key) is str and key != "name" and value is not None]
        else:  # a key that is not a string names no source
            kinds = [key for key in volume if type(key) is str and key != "name"
                     and read_field(volume, key, at) is not None]
        if len(kinds) != 1:
            raise InvalidPodError(
                f"{spec_at}volumes[{index}]",
                "expected exactly one volume source, got "
                + (", ".join(sorted(str(kind) for kind in kinds)) or "none"),
            )
        kind = str(kinds[0])
        source = get_object(volume, kind, at) or {}
        found.setdefault(name, (kind, source, f"{at}{kind}"))
    # updateStorage: each claim template becomes a persistentVolumeClaim volume of that
    # name, in place of a template volume of the same name.
    for name, where in view.claims:
        found[name] = ("persistentVolumeClaim", {}, where)
    return found


def volume_host_path(
    kind: str, source: Mapping[str, Any], where: str, name: str, root: str, uid: str,
    volume_paths: Mapping[str, str],
) -> tuple[str, bool]:
    """(``GetPath``, ``GetAttributes().ReadOnly``) of one volume."""
    if kind in PLUGIN_DIRS:
        plugin, read_only = PLUGIN_DIRS[kind]
        if name in volume_paths:
            return volume_paths[name], read_only
        return join_windows(root, "pods", uid, "volumes", plugin, name), read_only
    if kind == "hostPath":
        # hostPath's GetPath is the path as written; an inline volume is not read-only.
        path = get_str(source, "path", f"{where}.")
        return volume_paths.get(name, path), False
    if name in volume_paths:
        # Most plugins report the volume source's readOnly as the mount's attribute.
        return volume_paths[name], get_bool(source, "readOnly", f"{where}.") is True
    raise InvalidPodError(
        where,
        f"the host path of a {kind} volume is chosen by its volume plugin and the volume "
        f"manager, which the library does not model; pass it as volume_paths[{name!r}]",
    )


def _termination_mount(
    container: Mapping[str, Any], at: str, root: str, uid: str, name: str, log_id: str
) -> tuple[str, str, bool]:
    # API defaulting (SetDefaults_Container) replaces an empty path, so the kubelet's
    # `len(container.TerminationMessagePath) != 0` always holds for an API pod.
    path = get_str(container, "terminationMessagePath", at) or "/dev/termination-log"
    # GenerateRunContainerOptions: getPodContainerDir(uid, name) = <pod dir>\containers\<name>
    host = join_windows(root, "pods", uid, "containers", name, log_id)
    return make_absolute_path(path), make_absolute_path(host), False


def container_mounts(
    view: PodView, container: Mapping[str, Any], at: str, *, root: str, uid: str,
    container_name: str, env: Mapping[str, GoString], pod_ips: tuple[str, ...], minor: int,
    volume_paths: Mapping[str, str], termination_log_id: str, host_network: bool,
    host_process: Callable[[], bool], expansion: ExpansionRule | None = None,
) -> list[tuple[str, str, bool]]:
    """``ContainerConfig.mounts`` as (container path, host path, read-only): the volume
    mounts in order, the managed hosts file, then the termination log. Every one has
    ``propagation`` ``PROPAGATION_PRIVATE`` (0): ``translateMountPropagation`` returns it on
    Windows, whatever ``mountPropagation`` says; ``selinux.GetEnabled()`` is false there.
    ``host_network``: the pod's ``hostNetwork``, as the caller read it.
    ``host_process``: ``HasWindowsHostProcessContainer`` of the pod
    (:func:`~kubelet_winnet._kubelet.rules.has_host_process_container` on facts the
    caller has read; asked only when the hosts file would be mounted). ``expansion``: the
    kubelet's ``$(VAR)`` rule for ``subPathExpr`` (rune-wise without it)."""
    should_mount = bool(pod_ips) or (HOSTS_MOUNT_FOR_HOST_NETWORK.holds(minor) and host_network)
    if should_mount:
        should_mount = not host_process()
    mount_hosts = should_mount
    volumes = _volumes(view)
    mounts: list[tuple[str, str, bool]] = []
    for index, mount in enumerate(get_objects(container, "volumeMounts", at)):
        where = f"{at}volumeMounts[{index}]."
        name = get_str(mount, "name", where)
        mount_path = get_str(mount, "mountPath", where)
        mount_hosts = mount_hosts and mount_path != WINDOWS_ETC_HOSTS_PATH
        if name not in volumes:
            raise SandboxConfigError(
                f"cannot find volume {quote(name)} to mount into container "
                f"{quote(container_name)}",
                _ERROR_RULE,
            )
        kind, source, volume_at = volumes[name]
        host_path, must_read_only = volume_host_path(
            kind, source, volume_at, name, root, uid, volume_paths
        )
        sub_path = get_str(mount, "subPath", where)
        expression = get_str(mount, "subPathExpr", where)
        if expression:
            sub_path = expand_sub_path(expression, env, expansion, f"{where}subPathExpr")
        if sub_path:
            if is_abs_path(sub_path, minor):
                raise SandboxConfigError(
                    f"error SubPath `{sub_path}` must not be an absolute path", _ERROR_RULE
                )
            if not no_backsteps(sub_path):
                raise SandboxConfigError(
                    f"unable to provision SubPath `{sub_path}`: must not contain '..'",
                    _ERROR_RULE,
                )
            host_path = join_windows(host_path, sub_path)
        if host_path and is_local_path(host_path):
            host_path = make_absolute_path(host_path)
        container_path = mount_path
        if not is_unc_path(container_path) and not is_abs_path(container_path, minor):
            container_path = make_absolute_path(container_path)
        rro = get_str(mount, "recursiveReadOnly", where)
        if RECURSIVE_READ_ONLY.holds(minor) and rro not in ("", "Disabled"):
            raise InvalidPodError(
                f"{where}recursiveReadOnly",
                "recursive read-only mounts depend on the runtime handler's reported "
                "features, which the library does not model",
            )
        read_only = get_bool(mount, "readOnly", where) is True
        mounts.append((container_path, host_path, read_only or must_read_only))
    if mount_hosts:
        # makeHostsMount: getEtcHostsPath(podDir) = <pod dir>\etc-hosts
        hosts = join_windows(root, "pods", uid, "etc-hosts")
        mounts.append((WINDOWS_ETC_HOSTS_PATH, make_absolute_path(hosts), False))
    mounts.append(_termination_mount(container, at, root, uid, container_name,
                                     termination_log_id))
    return mounts


def check_termination_log_id(value: object) -> str:
    """The termination log's file name: eight lowercase hex digits, as ``makeUID``."""
    if type(value) is not str:
        raise InvalidArgumentError("termination_log_id", "a string", type_name(value))
    if not _HEX8.fullmatch(value):
        raise InvalidArgumentError(
            "termination_log_id", "eight lowercase hex digits (makeUID's %08x)",
            f"{len(value)} characters" if len(value) != 8 else "other characters",
        )
    return value


def check_volume_paths(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not is_mapping(value):
        raise InvalidArgumentError("volume_paths", "a mapping or None", type_name(value))
    assert isinstance(value, Mapping)
    if len(value) > _MAX_VOLUME_PATHS:
        raise InvalidArgumentError(
            "volume_paths", f"at most {_MAX_VOLUME_PATHS} entries", f"{len(value)} entries"
        )
    out: dict[str, str] = {}
    for key, path in value.items():
        if type(key) is not str or type(path) is not str:
            raise InvalidArgumentError(
                "volume_paths", "a mapping of str to str",
                f"{type_name(key)} -> {type_name(path)}",
            )
        if not is_utf8(key) or not is_utf8(path):
            raise InvalidArgumentError("volume_paths", "valid Unicode", "a lone surrogate")
        out[key] = path
    return out
