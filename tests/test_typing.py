"""Types for the people who import the package : ``mypy --strict``, run
from a user's own directory on a small program, finds the installed package (README's
``pip install -e .``: pyproject's ``[tool.distutils.editable_wheel]`` makes it a link tree
named by a plain ``.pth`` file, which mypy follows), accepts what the functions take
(version strings or ``KubeletVersion``, gate strings or mappings, manifests, the
kubernetes client's ``V1Pod``) and reports a wrong type at the argument. At run time
the same wrong type is still a typed ``InvalidArgumentError``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kubelet_winnet as kw
from tests.strategies import MUST_RUN, REPO_ROOT, require

GOOD = """\
from typing import Any

import kubelet_winnet as kw
from kubelet_winnet.runtime import plan_sandbox_network

pod: dict[str, Any] = {
    "spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "i"}]},
}
config = kw.windows_sandbox_config(pod, kubelet_version="1.32",
                                   feature_gates="WindowsHostNetwork=false")
network: int = config.security_context.namespace_options.network
version = kw.parse_kubelet_version("v1.31.2")
kw.windows_sandbox_config(pod, kubelet_version=version,
                          feature_gates={"WindowsHostNetwork": True})
steps: tuple[kw.ExplainStep, ...] = kw.explain(pod, feature_gates=None).steps
plan = plan_sandbox_network(kw.run_pod_sandbox_request(pod, node=kw.NodeContext()))
kw.container_config(pod, "c", services=[{"metadata": {"name": "db"}}])
kw.kubelet_profile(kw.parse_kubelet_version("1.30"), kw.parse_feature_gates(None))
"""
CLIENT = """\
import kubelet_winnet as kw
from kubernetes.client.models.v1_container import V1Container
from kubernetes.client.models.v1_pod import V1Pod
from kubernetes.client.models.v1_pod_spec import V1PodSpec

pod = V1Pod(spec=V1PodSpec(containers=[V1Container(name="c", image="i")]))
kw.windows_sandbox_config(pod, kubelet_version="1.32")
kw.explain(pod)
"""
BAD = """\
import kubelet_winnet as kw

kw.windows_sandbox_config({"spec": {}}, kubelet_version=1.32)
kw.explain({"spec": {}}, feature_gates=["WindowsHostNetwork=true"])
kw.pod_sandbox_config(b"{}")
"""


def test_mypy_strict_from_a_users_directory(tmp_path: Path) -> None:
    require("mypy")
    programs = {"good.py": GOOD, "bad.py": BAD}
    if MUST_RUN or _installed("kubernetes"):  # client 37 ships types (py.typed)
        programs["client.py"] = CLIENT
    for name, text in programs.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    # The user's directory holds no configuration and is not the checkout; the cache
    # (about 10 s of work when cold, the kubernetes client's models most of it) is kept
    # beside the project's own.
    cache = REPO_ROOT / ".mypy_cache" / "user-program"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache),
         "--no-error-summary", *programs],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert "Cannot find implementation or library stub" not in done.stdout, done.stdout
    assert not [line for line in errors if not line.startswith("bad.py:")], done.stdout
    by_line = {int(m[1]): m[2] for m in (re.match(r"bad\.py:(\d+): error: (.*)", line)
                                          for line in errors) if m}
    assert set(by_line) == {3, 4, 5}, done.stdout
    assert by_line[3].startswith(
        'Argument "kubelet_version" to "windows_sandbox_config" has incompatible type '
        '"float"; expected "str | KubeletVersion"'), by_line[3]
    assert '"feature_gates"' in by_line[4] and '"list[str]"' in by_line[4], by_line[4]
    assert '"pod_sandbox_config"' in by_line[5] and '"bytes"' in by_line[5], by_line[5]
    assert done.returncode == 1


def test_the_wrong_types_are_still_typed_errors_at_run_time() -> None:
    for call, parameter in (
        (lambda: kw.windows_sandbox_config({"spec": {}}, kubelet_version=1.32),  # type: ignore[arg-type]
         "kubelet_version"),
        (lambda: kw.explain({"spec": {}}, feature_gates=["WindowsHostNetwork=true"]),  # type: ignore[arg-type]
         "feature_gates"),
        (lambda: kw.pod_sandbox_config(b"{}"), "pod"),  # type: ignore[arg-type]
    ):
        with pytest.raises(kw.InvalidArgumentError) as caught:
            call()
        assert isinstance(caught.value, TypeError)
        assert parameter in str(caught.value)


def test_the_package_ships_its_type_markers_and_declares_its_stubs() -> None:
    import importlib.metadata
    import importlib.resources

    for package in ("kubelet_winnet", "cri_api"):
        assert importlib.resources.files(package).joinpath("py.typed").is_file(), package
    requires = importlib.metadata.requires("kubelet-winnet") or []
    assert any(r.startswith("types-protobuf") and 'extra == "typing"' in r
               for r in requires), requires


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
