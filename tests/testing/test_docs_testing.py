"""docs/testing.md: its walk-throughs are the files it includes, and the failures it
shows are what those files print.

The page includes ``tests/testing/example_harness/*.py`` as they are (pymdownx.snippets),
and those files run in this suite. Here they run again through ``pytester`` in the two
failing situations the page describes: a runtime that ignores ``namespace_options``
(``FakeRuntime(policy="containerd")``) and a shim that drops it. The lines in each of the
page's ``<!-- failure: NAME -->`` blocks must appear in that run's output, and the cells
that fail are the ones the KEP's rule and containerd's rule disagree on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubelet_winnet.testing import FakeRuntime, decision_table

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "testing.md"
HARNESS = Path(__file__).resolve().parent / "example_harness"
NETWORK = HARNESS / "test_sandbox_network.py"
SHIM = HARNESS / "test_shim_forwards_requests.py"

# A shim that decoded requests with a CRI API older than WindowsNamespaceOption.
OLD_SHIM = '''
import pytest
from cri_api.runtime.v1 import api_pb2


@pytest.fixture(autouse=True)
def _shim_on_an_old_cri_api(request, monkeypatch):
    shim = request.module.Shim
    forward = shim.run_pod_sandbox

    def run_pod_sandbox(self, data):
        message = api_pb2.RunPodSandboxRequest.FromString(data)
        message.config.windows.security_context.ClearField("namespace_options")
        return forward(self, message.SerializeToString())

    monkeypatch.setattr(shim, "run_pod_sandbox", run_pod_sandbox)
'''


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _shows(output: list[str], line: str) -> bool:
    """Whether pytest's output has the page's ``line``: a summary line as the page shows
    it, or followed by its message (pytest writes it where the terminal is wide enough,
    and always when it runs under CI)."""
    return any(out == line or out.startswith(f"{line} - ") for out in output)


def _failure_lines(name: str) -> list[str]:
    found = re.search(rf"<!-- failure: {name} -->\n```text\n(.*?)```\n<!-- end failure -->",
                      _page(), re.S)
    assert found, f"docs/testing.md has no failure block {name!r}"
    return found.group(1).splitlines()


def test_the_page_includes_every_example_file_and_nothing_else() -> None:
    included = re.findall(r'^--8<-- "([^"]+)"$', _page(), re.M)
    files = sorted(str(p.relative_to(REPO)) for p in HARNESS.glob("test_*.py"))
    assert sorted(included) == files == [
        "tests/testing/example_harness/test_sandbox_network.py",
        "tests/testing/example_harness/test_shim_forwards_requests.py",
    ]


@pytest.mark.slow  # a child pytest run of the page's 148 cases
def test_a_runtime_that_ignores_namespace_options_fails_where_the_page_says(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_sandbox_network=NETWORK.read_text(encoding="utf-8"))
    monkeypatch.setenv("COLUMNS", "80")  # the page shows an 80-column terminal
    with FakeRuntime(policy="containerd") as runtime:
        monkeypatch.setenv("CRI_ENDPOINT", runtime.endpoint)
        monkeypatch.setenv("NODE_IP", runtime.node_ip)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", "-q")
    output = result.stdout.str()
    failed = set(re.findall(r"^FAILED \S+\[([^\]]+)\]", output, re.M))
    # The KEP puts the sandbox on the node's network when NODE is sent or the pod is
    # HostProcess; containerd (sandbox_run_windows.go) only for HostProcess. They differ
    # exactly where NODE is sent for a pod that is not HostProcess.
    disagree = {row.id for row in decision_table() if row.cell.outcome == "sent"
                and row.cell.network == "NODE" and not row.cell.host_process}
    assert failed == disagree
    # The page: kubelet 1.26 to 1.32, the gate at its default or on.
    assert {tuple(i.rsplit("-", 2)[1:]) for i in failed} == {
        (f"1.{minor}", gates) for minor in range(26, 33) for gates in ("default", "on")}
    result.assert_outcomes(passed=148 - len(disagree), failed=len(disagree))
    for line in _failure_lines("sandbox-network"):
        assert _shows(output.splitlines(), line), line


@pytest.mark.slow  # a child pytest run that shrinks a failing example (about 10 s)
def test_a_shim_that_drops_namespace_options_gets_the_message_the_page_shows(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_shim_forwards_requests=SHIM.read_text(encoding="utf-8"))
    pytester.makeconftest(OLD_SHIM)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", "-q",
                                "--hypothesis-seed=0")
    result.assert_outcomes(failed=1)
    output = result.stdout.str().splitlines()
    for line in _failure_lines("shim"):
        assert _shows(output, line), line
