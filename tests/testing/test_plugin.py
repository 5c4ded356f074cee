"""The pytest plugin, through pytest itself (``pytester``): its entry point loads it, the
fixtures are there, and a failing comparison shows the proto paths."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

HARNESS = '''
import kubelet_winnet as kw
from kubelet_winnet.cri import RuntimeClient
from kubelet_winnet.testing import assert_kubelet_request

POD = {"metadata": {"name": "web", "namespace": "default", "uid": "u"},
       "spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "i"}]}}

def test_fixture(fake_cri_runtime, in_memory_hcn):
    with RuntimeClient(fake_cri_runtime.endpoint) as client:
        client.run_pod_sandbox(kw.run_pod_sandbox_request(POD))
    fake_cri_runtime.assert_calls(["RunPodSandbox"])
    from kubelet_winnet.runtime.hcn import InMemoryHcn
    assert type(in_memory_hcn) is InMemoryHcn

def test_comparison_fails():
    sent = kw.run_pod_sandbox_request(POD, kubelet_version="1.32")
    sent.config.windows.security_context.ClearField("namespace_options")
    assert_kubelet_request(sent, POD, kubelet_version="1.32")

def test_messages_compare_by_path():
    sent = kw.run_pod_sandbox_request(POD, kubelet_version="1.32")
    other = kw.run_pod_sandbox_request(POD, kubelet_version="1.33")
    assert sent == other
'''


def test_the_entry_point_names_the_plugin() -> None:
    found = [ep for ep in importlib.metadata.entry_points(group="pytest11")
             if ep.name == "kubelet-winnet"]
    assert [ep.value for ep in found] == ["kubelet_winnet.testing.plugin"]


def test_fixtures_and_failure_messages(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_harness=HARNESS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*config.windows.security_context.namespace_options: kubelet 1.32 sends network "
        "NODE, received <unset>*",
        "*RunPodSandboxRequest messages differ in 1 field(s):*",
        "*config.windows.security_context.namespace_options: left network NODE, right <unset>*",
    ])
    # __tracebackhide__: the failure points at the user's line, not the library's.
    assert "compare.py" not in result.stdout.str()


def test_fixtures_are_listed(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--fixtures", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*fake_cri_runtime*", "*in_memory_hcn*"])


def test_the_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_off="def test_x(fake_cri_runtime):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:kubelet-winnet", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*fixture 'fake_cri_runtime' not found*"])


def test_the_plugin_loads_without_grpc_or_hypothesis() -> None:
    """A project with kubelet-winnet but not its testing extra keeps a working pytest."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('grpc', 'hypothesis'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import kubelet_winnet.testing.plugin\n"
        "import kubelet_winnet.testing\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'hypothesis')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
