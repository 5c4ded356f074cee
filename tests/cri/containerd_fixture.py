"""A private, real containerd for the CRI tests and the CRI benchmark.

:func:`start` runs the Debian ``containerd`` (1.6.x) with its own config, root and state
under a temporary directory, CRI on a unix socket there, a bridge + host-local CNI
network on a private subnet (no gateway, no masquerade: traffic stays on the bridge), the
``native`` snapshotter (works on any backing filesystem), and ``restrict_oom_score_adj``
(this machine's root lacks CAP_SYS_RESOURCE). There is no registry: :func:`build_image`
compiles a static C program that waits in ``pause()`` and packs it as an OCI image
archive, which :meth:`Containerd.import_image` loads with ``ctr`` into the ``k8s.io``
namespace; the same image is containerd's sandbox ("pause") image.

:meth:`Containerd.stop` stops and removes every sandbox before stopping containerd
(otherwise shims and mounts stay behind), then reports anything left over.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "IMAGE",
    "Containerd",
    "build_image",
    "leftovers",
    "start",
    "unavailable_reason",
]

IMAGE = "localhost/kubelet-winnet/pause:1"
SUBNET = "10.88.213.0/24"
NETWORK = "kubelet-winnet-test"
BINARIES = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "gcc", "ip")
CNI_PLUGINS = ("bridge", "host-local", "loopback")
CNI_BIN_DIRS = (Path("/usr/lib/cni"), Path("/opt/cni/bin"))
STATIC_LIBC = (
    Path("/usr/lib/x86_64-linux-gnu/libc.a"),
    Path("/usr/lib/aarch64-linux-gnu/libc.a"),
    Path("/usr/lib/libc.a"),
)
STARTUP_SECONDS = 30.0

# The container's only process: PID 1 waits for signals and exits on TERM/INT (PID 1
# ignores signals without a handler), so StopContainer/StopPodSandbox end it at once.
PAUSE_C = r"""
#include <signal.h>
#include <unistd.h>

static void quit(int sig) { (void)sig; _exit(0); }

int main(void) {
    signal(SIGTERM, quit);
    signal(SIGINT, quit);
    for (;;) pause();
}
"""


def unavailable_reason() -> str | None:
    """Why a real containerd cannot run here, or ``None`` when it can."""
    if not sys.platform.startswith("linux"):
        return f"containerd tests need Linux, not {sys.platform}"
    if os.geteuid() != 0:
        return "containerd tests need root (runc creates namespaces and cgroups)"
    missing = [name for name in BINARIES if shutil.which(name) is None]
    if missing:
        return (
            f"not installed: {', '.join(missing)} (Debian: apt-get install containerd runc "
            "containernetworking-plugins gcc libc6-dev iproute2; .ci/install-system-packages)"
        )
    if cni_bin_dir() is None:
        return f"CNI plugins {', '.join(CNI_PLUGINS)} not found in " + ", ".join(
            str(d) for d in CNI_BIN_DIRS
        )
    if not any(path.exists() for path in STATIC_LIBC):
        return "no static libc (libc.a) for the test image: apt-get install libc6-dev"
    return None


def cni_bin_dir() -> Path | None:
    for directory in CNI_BIN_DIRS:
        if all((directory / plugin).is_file() for plugin in CNI_PLUGINS):
            return directory
    return None


# --- the test image ------------------------------------------------------------------


def _blob(blobs: dict[str, bytes], data: bytes) -> dict[str, object]:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blobs[digest] = data
    return {"digest": digest, "size": len(data)}


def _tar(entries: Iterator[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in entries:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _file(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    return info, data


def _directory(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
    return info, None


def oci_archive(binary: bytes, name: str, architecture: str) -> bytes:
    """An OCI image layout archive (oci-layout, index.json, blobs/sha256/*) holding one
    image: a single gzip layer with ``/pause`` and ``/etc/passwd``, entrypoint
    ``/pause``."""
    blobs: dict[str, bytes] = {}
    layer = _tar(
        iter(
            [
                _directory("etc/"),
                _file("etc/passwd", b"root:x:0:0:root:/:/pause\n"),
                _file("etc/group", b"root:x:0:\n"),
                _file("pause", binary, 0o755),
            ]
        )
    )
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    layer_descriptor = {
        "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
        **_blob(blobs, gzip.compress(layer, mtime=0)),
    }
    config = {
        "architecture": architecture,
        "os": "linux",
        "config": {"Entrypoint": ["/pause"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }
    config_descriptor = {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        **_blob(blobs, json.dumps(config, sort_keys=True).encode()),
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_descriptor,
        "layers": [layer_descriptor],
    }
    manifest_descriptor = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        **_blob(blobs, json.dumps(manifest, sort_keys=True).encode()),
        "platform": {"architecture": architecture, "os": "linux"},
        "annotations": {
            # ctr names the image after this annotation (else after ref.name + --base-name).
            "io.containerd.image.name": name,
            "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1],
        },
    }
    index = {"schemaVersion": 2, "manifests": [manifest_descriptor]}
    files = [
        _file("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
        _file("index.json", json.dumps(index, sort_keys=True).encode()),
        _directory("blobs/"),
        _directory("blobs/sha256/"),
    ]
    files += [_file(f"blobs/sha256/{d.split(':', 1)[1]}", data) for d, data in blobs.items()]
    return _tar(iter(files))


def _architecture() -> str:
    machine = os.uname().machine
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def build_image(directory: Path, name: str = IMAGE) -> Path:
    """Compile the pause program statically and write its OCI archive; returns the path."""
    source = directory / "pause.c"
    source.write_text(PAUSE_C, encoding="utf-8")
    binary = directory / "pause"
    subprocess.run(
        ["gcc", "-static", "-Os", "-s", "-o", str(binary), str(source)],
        check=True, capture_output=True, timeout=120,
    )
    archive = directory / "pause-image.tar"
    archive.write_bytes(oci_archive(binary.read_bytes(), name, _architecture()))
    return archive


# --- containerd ------------------------------------------------------------------------


def _config(directory: Path, cni_bin: Path, sandbox_image: str) -> str:
    # containerd 1.6 config version 2; only what differs from the defaults, plus paths.
    return f"""version = 2
root = "{directory}/root"
state = "{directory}/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "{directory}/containerd.sock"

[ttrpc]
  address = "{directory}/containerd.sock.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox_image}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "{directory}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni_bin}"
    conf_dir = "{directory}/cni"
    max_conf_num = 1
"""


def _cni_config(directory: Path, bridge: str) -> str:
    return json.dumps(
        {
            "cniVersion": "0.4.0",
            "name": NETWORK,
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": bridge,
                    "isGateway": False,
                    "ipMasq": False,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": SUBNET}]],
                        "dataDir": str(directory / "ipam"),
                    },
                }
            ],
        },
        indent=2,
    )


@dataclass
class Containerd:
    """A running private containerd; ``endpoint`` is its CRI endpoint."""

    directory: Path
    process: subprocess.Popen[bytes]
    bridge: str
    log: Path
    stopped: bool = field(default=False)

    @property
    def socket(self) -> Path:
        return self.directory / "containerd.sock"

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket}"

    def ctr(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ctr", "--address", str(self.socket), "--namespace", "k8s.io", *args],
            capture_output=True, text=True, timeout=timeout, check=False,
        )

    def import_image(self, archive: Path) -> None:
        done = self.ctr("images", "import", "--snapshotter", "native", str(archive))
        if done.returncode != 0:
            raise RuntimeError(f"ctr images import failed: {done.stderr.strip()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def remove_all_sandboxes(self) -> list[str]:
        """Stop and remove every sandbox (and so its containers); the IDs it found."""
        from kubelet_winnet.cri import RuntimeClient

        with RuntimeClient(self.endpoint, timeout=60) as runtime:
            ids = [item.id for item in runtime.list_pod_sandbox().items]
            for sandbox_id in ids:
                runtime.stop_pod_sandbox(sandbox_id)
                runtime.remove_pod_sandbox(sandbox_id)
        return ids

    def stop(self) -> list[str]:
        """Remove every sandbox, stop containerd, delete the bridge; return leftovers
        (mounts, shim processes) found before the last-resort cleanup."""
        if self.stopped:
            return []
        self.stopped = True
        problems: list[str] = []
        if self.process.poll() is None:
            try:
                self.remove_all_sandboxes()
            except Exception as exc:
                problems.append(f"removing sandboxes failed: {exc}")
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
                problems.append("containerd did not stop on SIGTERM")
        problems += leftovers(self)
        _force_cleanup(self)
        return problems


def _mounts_under(directory: Path) -> list[str]:
    prefix = str(directory) + "/"
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            mount_point = line.split()[4].replace("\\040", " ")
            if mount_point.startswith(prefix):
                found.append(mount_point)
    return found


def _shims(socket: Path) -> list[int]:
    """PIDs of containerd shims serving our containerd (their command line names its
    address)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"containerd-shim-runc-v2") and os.fsencode(
            socket
        ) in argv:
            pids.append(int(entry.name))
    return pids


def leftovers(daemon: Containerd) -> list[str]:
    """Mounts under the daemon's directory and shim processes still serving it."""
    found = [f"mount {m}" for m in _mounts_under(daemon.directory)]
    found += [f"shim process {pid}" for pid in _shims(daemon.socket)]
    return found


def _force_cleanup(daemon: Containerd) -> None:
    for pid in _shims(daemon.socket):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for mount_point in sorted(_mounts_under(daemon.directory), key=len, reverse=True):
        subprocess.run(["umount", "-l", mount_point], capture_output=True, check=False)
    subprocess.run(["ip", "link", "delete", daemon.bridge], capture_output=True, check=False)


def start(directory: Path, *, image_archive: Path | None = None) -> Containerd:
    """Start containerd under ``directory`` (short path: the socket path must fit in 107
    bytes), wait for its CRI socket, import ``image_archive`` if given."""
    cni_bin = cni_bin_dir()
    assert cni_bin is not None
    bridge = f"kwt{os.getpid() % 100000}"
    (directory / "cni").mkdir(parents=True, exist_ok=True)
    (directory / "cni" / "10-kubelet-winnet-test.conflist").write_text(
        _cni_config(directory, bridge), encoding="utf-8"
    )
    config = directory / "config.toml"
    config.write_text(_config(directory, cni_bin, IMAGE), encoding="utf-8")
    log = directory / "containerd.log"
    with open(log, "wb") as log_file:
        process = subprocess.Popen(
            ["containerd", "--config", str(config), "--log-level", "info"],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            # Windows log paths (C:\\var\\log\\pods\\...) are relative on Linux: keep the
            # files containerd creates for them inside the directory.
            cwd=directory, start_new_session=True,
        )
    daemon = Containerd(directory=directory, process=process, bridge=bridge, log=log)
    try:
        _wait_ready(daemon)
        if image_archive is not None:
            daemon.import_image(image_archive)
    except BaseException:
        daemon.stop()
        raise
    return daemon


def _wait_ready(daemon: Containerd) -> None:
    from kubelet_winnet.cri import RuntimeClient
    from kubelet_winnet.errors import CriError

    deadline = time.monotonic() + STARTUP_SECONDS
    last = "no socket yet"
    while time.monotonic() < deadline:
        if daemon.process.poll() is not None:
            raise RuntimeError(
                f"containerd exited with {daemon.process.returncode}:\n{daemon.log_tail()}"
            )
        if daemon.socket.exists():
            try:
                with RuntimeClient(daemon.endpoint, timeout=5) as runtime:
                    runtime.version()
                    return
            except CriError as exc:
                last = str(exc)
        time.sleep(0.1)
    raise RuntimeError(f"containerd not ready after {STARTUP_SECONDS} s ({last}):\n"
                       f"{daemon.log_tail()}")


def short_temporary_directory() -> Path:
    """A fresh directory under /tmp with a short name (socket paths are limited)."""
    return Path(tempfile.mkdtemp(prefix="kw-ctrd-", dir="/tmp"))
