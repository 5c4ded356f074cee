"""What each containerd release does on a Windows node, as data: the hcsshim its
Windows shim is built from, the configuration schema versions it loads, the CRI options
it no longer reads, its default pause image, and the runtime handler names of its
default Windows configuration.

Pure: no I/O. Each row cites the upstream file it was read from (containerd tags, read
with ``git show TAG:PATH``). The audit, the node planner and the ``node`` command read
release facts from here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import InvalidArgumentError
from kubelet_winnet.runtime._handlers import (
    DEFAULT_ISOLATION,
    DEFAULT_RUNTIME_NAME,
    HYPERV_HANDLERS,
    PROCESS_HANDLERS,
)

__all__ = [
    "CONTAINERD_LINES",
    "CRI_RUNTIME_PLUGIN_IDS",
    "DEFAULT_ISOLATION",
    "DEFAULT_RUNTIME_NAME",
    "HOST_PROCESS_IN_UVM",
    "HYPERV_HANDLERS",
    "PROCESS_HANDLERS",
    "REMOVED_CRI_OPTIONS",
    "RUNTIME_FORM",
    "ContainerdLine",
    "RemovedOption",
    "ShimChange",
    "ShimRow",
    "check_runtime",
    "containerd_line",
    "first_releases",
    "from_release",
    "hcsshim_of",
    "hcsshim_version_key",
    "is_runtime",
    "parse_runtime",
    "removed_option",
    "runtime_name",
    "shim_has_hyperv_host_process",
    "shim_lines",
]

Version = tuple[int, int, int]


class ShimChange(NamedTuple):
    """A change of hcsshim that containerd's Windows shim brings from the first release
    whose shim is ``hcsshim`` or later (:func:`first_releases`)."""

    hcsshim: str  # the first hcsshim tag that has it
    pull_request: int  # microsoft/hcsshim
    commit: str

    @property
    def hcsshim_line(self) -> str:
        """The hcsshim minor line of the first tag: ``v0.15``."""
        return ".".join(self.hcsshim.split(".")[:2])


# hcsshim PR #2531 (commit b07af140d, 2026-05-22, "HostProcess containers with Hypervisor
# Isolation"): first in v0.15.0-rc.2, not in rc.1 or v0.14.1 (git merge-base). Under
# Hyper-V isolation a HostProcess container then runs inside the utility VM, which "will
# not have network access" (the commit message).
HOST_PROCESS_IN_UVM = ShimChange("v0.15.0-rc.2", 2531, "b07af140d")

# Where the CRI plugin's runtime tables live, per configuration schema version, as
# containerd 2.x reads them: version 1 plugin names are migrated from their short form
# (cmd/containerd/server/config/config.go v1MigratePluginName: "cri" ->
# "io.containerd.grpc.v1.cri"; a full id passes through), version 2 files are migrated
# into the version 3 plugin (plugins/cri/runtime/plugin.go migrateConfig), and versions 3
# and 4 name "io.containerd.cri.v1.runtime" (4 only moved the debug server to a plugin,
# containerd commit 06c23567c).
CRI_RUNTIME_PLUGIN_IDS: Mapping[int, tuple[str, ...]] = {
    1: ("cri", "io.containerd.grpc.v1.cri"),
    2: ("io.containerd.grpc.v1.cri",),
    3: ("io.containerd.cri.v1.runtime",),
    4: ("io.containerd.cri.v1.runtime",),
}


class ShimRow(NamedTuple):
    """From containerd ``since`` on (within its line), the Windows shim
    (containerd-shim-runhcs-v1.exe) is built from hcsshim ``hcsshim``."""

    since: Version
    hcsshim: str
    source: str


class RemovedOption(NamedTuple):
    """A CRI configuration key a containerd line no longer reads."""

    table: str  # the version 3 table, as RELEASES.md names it
    key: str
    deprecated_in: str
    removed_in: tuple[int, int]
    instead: str
    effect: str  # what a node that still sets it gets
    source: str


class ContainerdLine(NamedTuple):
    """One containerd minor release line."""

    line: tuple[int, int]
    released: str  # date of x.y.0 (the tag's commit date), or the release-notes date
    config_versions: tuple[int, ...]  # schema versions the loader accepts
    default_sandbox_image: str
    shims: tuple[ShimRow, ...]  # ascending by since
    source: str

    @property
    def name(self) -> str:
        return f"{self.line[0]}.{self.line[1]}"

    @property
    def removed_options(self) -> tuple[RemovedOption, ...]:
        return tuple(o for o in REMOVED_CRI_OPTIONS if o.removed_in <= self.line)

    def shim_at(self, version: Version) -> ShimRow:
        """The shim of release ``version`` of this line (a patch before the first row
        gets the first row)."""
        found = self.shims[0]
        for row in self.shims:
            if row.since <= version:
                found = row
        return found


# containerd builds the shim from script/setup/runhcs-version (script/setup/
# install-runhcs-shim); before that file existed (1.7.0-1.7.18) from the hcsshim
# version in go.mod.
_RUNHCS = "script/setup/runhcs-version at v{}"
_GOMOD = "go.mod at v{} (install-runhcs-shim reads go.mod before runhcs-version)"

REMOVED_CRI_OPTIONS: tuple[RemovedOption, ...] = (
    RemovedOption(
        'plugins."io.containerd.cri.v1.runtime".cni', "bin_dir", "2.1", (2, 4),
        "bin_dirs",
        "ignored with the warning \"Ignoring unknown key in TOML for plugin\": CNI "
        "binaries are looked for only in bin_dirs (default "
        "%ProgramFiles%\\containerd\\cni\\bin), so a node whose plugins live elsewhere "
        "loses pod networking when pods start",
        "containerd RELEASES.md line 638 (main @ 301026e5); PR #14166 \"Deprecations and "
        "removals for 2.4\"",
    ),
    RemovedOption(
        'plugins."io.containerd.cri.v1.runtime"', "enable_cdi", "2.2", (2, 4),
        "nothing (CDI is always enabled)",
        "ignored with the warning \"Ignoring unknown key in TOML for plugin\": "
        "enable_cdi = false no longer turns CDI off",
        "containerd RELEASES.md line 640 (main @ 301026e5); PR #14166",
    ),
)

CONTAINERD_LINES: tuple[ContainerdLine, ...] = (
    ContainerdLine(
        (1, 7), "2023-03-10", (1, 2), "registry.k8s.io/pause:3.8",
        (
            ShimRow((1, 7, 0), "v0.10.0-rc.7", _GOMOD.format("1.7.0")),
            ShimRow((1, 7, 1), "v0.10.0-rc.8", _GOMOD.format("1.7.1")),
            ShimRow((1, 7, 6), "v0.11.0", _GOMOD.format("1.7.6")),
            ShimRow((1, 7, 7), "v0.11.1", _GOMOD.format("1.7.7")),
            ShimRow((1, 7, 9), "v0.11.4", _GOMOD.format("1.7.9")),
            ShimRow((1, 7, 17), "v0.11.5", _GOMOD.format("1.7.17")),
            ShimRow((1, 7, 19), "v0.11.7", _RUNHCS.format("1.7.19")),
        ),
        "services/server/config/config.go ValidateV2 (\"the max version is `2`\"); "
        "pkg/cri/config/config_windows.go SandboxImage",
    ),
    ContainerdLine(
        (2, 0), "2024-11-05", (1, 2, 3), "registry.k8s.io/pause:3.10",
        (ShimRow((2, 0, 0), "v0.12.9", _RUNHCS.format("2.0.0")),),
        "version/version.go ConfigVersion = 3; internal/cri/config/config.go",
    ),
    ContainerdLine(
        (2, 1), "2025-05-08", (1, 2, 3), "registry.k8s.io/pause:3.10",
        (
            ShimRow((2, 1, 0), "v0.13.0-rc.3", _RUNHCS.format("2.1.0")),
            ShimRow((2, 1, 1), "v0.13.0", _RUNHCS.format("2.1.1")),
        ),
        "version/version.go ConfigVersion = 3; internal/cri/config/config.go",
    ),
    ContainerdLine(
        (2, 2), "2025-11-05", (1, 2, 3), "registry.k8s.io/pause:3.10.1",
        (
            ShimRow((2, 2, 0), "v0.14.0-rc.1", _RUNHCS.format("2.2.0")),
            ShimRow((2, 2, 3), "v0.14.1", _RUNHCS.format("2.2.3")),
        ),
        "version/version.go ConfigVersion = 3; internal/cri/config/config.go",
    ),
    ContainerdLine(
        (2, 3), "2026-04-30", (1, 2, 3, 4), "registry.k8s.io/pause:3.10.2",
        (
            ShimRow((2, 3, 0), "v0.15.0-rc.1", _RUNHCS.format("2.3.0")),
            ShimRow((2, 3, 3), "v0.15.0-rc.3", _RUNHCS.format("2.3.3")),
        ),
        "version/version.go ConfigVersion = 4 (commit 06c23567c); internal/cri/config/"
        "config.go (pause 3.10.2 for Windows Server 2025, commit 05d3b3158)",
    ),
    ContainerdLine(
        (2, 4), "2026-09-16", (1, 2, 3, 4), "registry.k8s.io/pause:3.10.2",
        (
            ShimRow(
                (2, 4, 0), "v0.15.0-rc.4",
                "release notes of v2.4.0 (PR #14169, 2026-09-16); runhcs-version on main "
                "@ 301026e5 (2026-08-22) already v0.15.0-rc.4",
            ),
        ),
        "v2.4.0-beta.0 version/version.go ConfigVersion = 4; RELEASES.md removals",
    ),
)

_LINES: Mapping[tuple[int, int], ContainerdLine] = {row.line: row for row in CONTAINERD_LINES}
_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?:[-+][0-9A-Za-z.+-]*)?")


def runtime_name(runtime: str) -> str:
    """``containerd://1.7.20`` -> ``containerd``; ``""`` when the node reports none
    (``status.nodeInfo.containerRuntimeVersion`` is ``NAME://VERSION``)."""
    name, sep, _ = runtime.partition("://")
    return name if sep else ""


# What a runtime is written as: Node.status.nodeInfo.containerRuntimeVersion's form,
# "<name>://<version>" (k8s.io/kubernetes pkg/kubelet/nodestatus/setters.go VersionInfo).
RUNTIME_FORM = "NAME://VERSION, as the Node's containerRuntimeVersion (containerd://2.4.0)"


def is_runtime(runtime: str) -> bool:
    """Whether ``runtime`` is written ``NAME://VERSION``, both parts there."""
    name, sep, version = runtime.partition("://")
    return bool(name and sep and version)


def check_runtime(runtime: str, argument: str = "runtime") -> None:
    """Raise ``InvalidArgumentError`` naming ``argument`` unless ``runtime`` is
    ``NAME://VERSION`` or ``""`` (not known): a runtime in another form was judged as an
    unknown one. ``NodeFacts`` and ``node --runtime`` say it in the same words."""
    if runtime and not is_runtime(runtime):
        shown = cut(runtime, 80)
        raise InvalidArgumentError(argument, RUNTIME_FORM, repr(shown))


def parse_runtime(runtime: str) -> tuple[str, Version | None]:
    """``containerd://2.3.3`` -> ``("containerd", (2, 3, 3))``; a pre-release
    (``2.4.0-beta.0``) counts as its release line's version. ``None`` when the version
    part is not ``[v]X.Y.Z``."""
    name = runtime_name(runtime)
    _, _, version = runtime.partition("://")
    match = _VERSION.fullmatch(version)
    if match is None:
        return name, None
    major, minor, patch = (int(part) for part in match.groups())
    return name, (major, minor, patch)


def containerd_line(version: Version) -> ContainerdLine | None:
    """The table row of a containerd version's minor line; ``None`` outside the table."""
    return _LINES.get((version[0], version[1]))


def hcsshim_of(runtime: str) -> str | None:
    """The hcsshim version of the shim a node's ``containerd://X.Y.Z`` ships; ``None``
    for another runtime or a release outside the table."""
    name, version = parse_runtime(runtime)
    if name != "containerd" or version is None:
        return None
    line = containerd_line(version)
    return line.shim_at(version).hcsshim if line is not None else None


def hcsshim_version_key(version: str) -> tuple[int, int, int, int, int]:
    """Semver order of an hcsshim tag (``v0.15.0-rc.2`` < ``v0.15.0``); raises
    ``ValueError`` for a tag that is not ``vX.Y.Z[-rc.N]``."""
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)(?:-rc\.(\d+))?", version)
    if match is None:
        raise ValueError(f"not an hcsshim release tag: {version!r}")
    major, minor, patch, rc = match.groups()
    # A release sorts after every one of its release candidates.
    final = (1, 0) if rc is None else (0, int(rc))
    return int(major), int(minor), int(patch), *final


def shim_has_hyperv_host_process(runtime: str) -> bool:
    """Whether a node's runtime ships a shim with hcsshim PR #2531, so that a HostProcess
    pod under Hyper-V isolation runs in the utility VM with no network. A containerd newer
    than the table counts as having it (hcsshim keeps the change)."""
    name, version = parse_runtime(runtime)
    if name != "containerd" or version is None:
        return False
    shim = hcsshim_of(runtime)
    if shim is None:
        return version[:2] > CONTAINERD_LINES[-1].line
    return hcsshim_version_key(shim) >= hcsshim_version_key(HOST_PROCESS_IN_UVM.hcsshim)


def _release_text(version: Version) -> str:
    return ".".join(map(str, version))


def first_releases(change: ShimChange) -> tuple[Version, ...]:
    """The first release of each containerd line whose Windows shim has ``change``, oldest
    first (a line whose first shim has it gives its x.y.0)."""
    since = hcsshim_version_key(change.hcsshim)
    return tuple(
        next(row.since for row in line.shims if hcsshim_version_key(row.hcsshim) >= since)
        for line in CONTAINERD_LINES
        if any(hcsshim_version_key(row.hcsshim) >= since for row in line.shims)
    )


def from_release(change: ShimChange) -> str:
    """``containerd 2.3.3 or later``: where a user finds ``change`` on a node."""
    return f"containerd {_release_text(first_releases(change)[0])} or later"


def shim_lines(change: ShimChange) -> str:
    """``2.3.3+ and 2.4``: the containerd lines whose shim has ``change``, a line that has it
    from a patch release on named with that release."""
    names = [f"{v[0]}.{v[1]}" if v[2] == 0 else f"{_release_text(v)}+"
             for v in first_releases(change)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def removed_in(option: RemovedOption) -> str:
    """``2.4``: the containerd line that no longer reads ``option``."""
    return f"{option.removed_in[0]}.{option.removed_in[1]}"


def removed_option(key: str) -> RemovedOption:
    """The row of the CRI option ``key`` (``bin_dir``, ``enable_cdi``)."""
    return next(option for option in REMOVED_CRI_OPTIONS if option.key == key)
