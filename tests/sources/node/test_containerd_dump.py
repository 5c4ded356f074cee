"""Our reading of containerd's ``config.toml`` proved against containerd itself:
``containerd -c FILE config dump`` prints the configuration containerd loaded, with a
version 1 file already migrated (``plugins.cri`` -> ``io.containerd.grpc.v1.cri``).

Debian's containerd (1.6) loads schema versions 1 and 2, so the version 1 and 2 files are
checked here; the runtime tables it keeps must be exactly the ones our reader marks as
read, with the same isolation, and the CNI and sandbox settings must be the values it
dumps. Skips with the reason when containerd is not installed; under CI
(``KUBELET_WINNET_CI=1``) it must run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet.sources.node.containerd import read_containerd
from tests.strategies import MUST_RUN

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NODES = Path(__file__).resolve().parents[2] / "data" / "node" / "nodes"
CONTAINERD = shutil.which("containerd")
if CONTAINERD is None and not MUST_RUN:
    pytest.skip("containerd is not installed (Debian: apt-get install containerd); its "
                "`config dump` checks the config.toml reader", allow_module_level=True)

VERSION_2 = """\
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runhcs-wcow-process"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runhcs-wcow-process]
      runtime_type = "io.containerd.runhcs.v1"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.hv-26100]
      runtime_type = "io.containerd.runhcs.v1"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.hv-26100.options]
        SandboxIsolation = 1
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "C:\\\\k\\\\cni"
# A version 3 path in a version 2 file: no plugin of version 2 reads it.
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.hv-v3]
  runtime_type = "io.containerd.runhcs.v1"
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.hv-v3.options]
    SandboxIsolation = 1
"""
# A version 1 path in a version 2 file.
SHORT_KEY = """\
version = 2
[plugins.cri.containerd.runtimes.hv-legacy]
  runtime_type = "io.containerd.runhcs.v1"
"""


def dump(path: Path) -> dict[str, Any]:
    assert CONTAINERD is not None
    done = subprocess.run([CONTAINERD, "-c", str(path), "config", "dump"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = tomllib.loads(done.stdout)
    return loaded


def isolation(body: dict[str, Any]) -> str:
    options = body.get("options") or {}
    return "hyperv" if options.get("SandboxIsolation") == 1 else "process"


@pytest.mark.parametrize("name", ["akswin000001/containerd.toml", "version-2"])
def test_reader_agrees_with_containerd(name: str, tmp_path: Path) -> None:
    path = NODES / name
    if name == "version-2":
        path = tmp_path / "config.toml"
        path.write_text(VERSION_2, encoding="utf-8")
    ours = read_containerd(str(path))
    theirs = dump(path)["plugins"]["io.containerd.grpc.v1.cri"]
    loaded = {n: isolation(b) for n, b in theirs["containerd"]["runtimes"].items()}
    read = {t.name: t.isolation for t in ours.runtimes if t.read}
    unread = {t.name for t in ours.runtimes if not t.read}
    # Every table we call read is loaded as we read it; none we call unread is.
    assert {n: loaded.get(n) for n in read} == read
    assert unread.isdisjoint(loaded)
    assert ours.bin_dir is not None and theirs["cni"]["bin_dir"] == ours.bin_dir.value
    assert ours.sandbox_image is not None
    assert theirs["sandbox_image"] == ours.sandbox_image.value
    if name == "version-2":
        assert unread == {"hv-v3"}


def test_containerd_1x_refuses_a_short_plugin_key(tmp_path: Path) -> None:
    """ValidateV2 (containerd 1.x services/server/config/config.go): what the
    node-config-version rule says for 1.x nodes."""
    assert CONTAINERD is not None
    path = tmp_path / "config.toml"
    path.write_text(SHORT_KEY, encoding="utf-8")
    done = subprocess.run([CONTAINERD, "-c", str(path), "config", "dump"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert 'invalid plugin key URI "cri" expect io.containerd.x.vx' in done.stderr
    (key,) = read_containerd(str(path)).short_plugin_keys
    assert (key.value, key.line) == ("cri", 2)
