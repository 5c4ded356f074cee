"""``sources/charts/guard.py``: what a chart or kustomization must be before a renderer runs
over it. Expected texts restate the rules (Helm's CheckDependencies, kustomize's remote
forms in api/internal/git/repospec.go) and the fixtures, never our own output."""

from __future__ import annotations

import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from kubelet_winnet.sources.charts.guard import _is_remote
from tests.sources.charts.test_render import (
    HOST_NETWORK_POD,
    KUBECTL_INSTALL,
    _chart,
    _fake_helm,
    errors,
    line_of,
    run,
)
from tests.strategies import require_tool

CONFIG_MAP = "printf -- '---\\n# Source: c/templates/cm.yaml\\nkind: ConfigMap\\n'"


# --- a chart's dependencies ---------------------------------------------------------------


def _declaring(chart: Path, file: str, *names: str) -> Path:
    listed = "".join(f"- name: {name}\n  version: 1.0.0\n  repository: https://charts.example\n"
                     for name in names)
    with (chart / file).open("a", encoding="utf-8") as out:
        out.write(f"dependencies:\n{listed}")
    return chart / file


def test_a_declared_dependency_missing_from_charts_is_exit_2_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Helm template refuses it ("found in Chart.yaml, but missing in charts/
    directory"); rendered without it, the subchart's DaemonSet went unchecked, exit 0."""
    _fake_helm(tmp_path, monkeypatch, CONFIG_MAP)
    chart = _chart(tmp_path / "c", {}, name="c")
    manifest = _declaring(chart, "Chart.yaml", "windows-agent")
    status, _, err = run(capsys, "check", str(chart))
    assert status == 2
    line = line_of(manifest.read_text(encoding="utf-8"), "name: windows-agent")
    assert errors(err) == [
        f"kubelet-winnet: error: {manifest}:{line}: the chart depends on windows-agent, "
        f"which is not in {chart / 'charts'}; helm template refuses such a chart (\"missing "
        f"in charts/ directory\"), so it is not rendered: run helm dependency build {chart} "
        "to vendor it"]
    # vendored as a directory whose Chart.yaml names it (the directory's name is not it)
    _chart(chart / "charts" / "agent-dir", {}, name="windows-agent")
    status, _, err = run(capsys, "check", "--allow-empty", str(chart))
    assert (status, errors(err)) == (0, [])


def test_requirements_yaml_and_packaged_subcharts_count_as_helm_counts_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_helm(tmp_path, monkeypatch, CONFIG_MAP)
    chart = _chart(tmp_path / "c", {}, name="c")
    requirements = _declaring(chart, "requirements.yaml", "db", "cache", "queue")
    (chart / "charts").mkdir()
    text = b"apiVersion: v2\nname: db\nversion: 1.0.0\n"
    with tarfile.open(chart / "charts" / "db-1.0.0.tgz", "w:gz") as archive:
        member = tarfile.TarInfo("db/Chart.yaml")
        member.size = len(text)
        archive.addfile(member, io.BytesIO(text))
    status, _, err = run(capsys, "check", str(chart))
    assert status == 2
    line = line_of(requirements.read_text(encoding="utf-8"), "name: cache")
    assert errors(err) == [
        f"kubelet-winnet: error: {requirements}:{line}: the chart depends on cache and "
        f"queue, which are not in {chart / 'charts'}; helm template refuses such a chart "
        f"(\"missing in charts/ directory\"), so it is not rendered: run helm dependency "
        f"build {chart} to vendor them"]


def test_a_vendored_subcharts_own_missing_dependency_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_helm(tmp_path, monkeypatch, CONFIG_MAP)
    chart = _chart(tmp_path / "c", {}, name="c")
    _declaring(chart, "Chart.yaml", "sub")
    sub = _chart(chart / "charts" / "sub", {}, name="sub")
    manifest = _declaring(sub, "Chart.yaml", "common")
    status, _, err = run(capsys, "check", str(chart))
    assert status == 2
    [said] = errors(err)
    line = line_of(manifest.read_text(encoding="utf-8"), "name: common")
    assert said.startswith(f"kubelet-winnet: error: {manifest}:{line}: the chart depends on "
                           f"common, which is not in {sub / 'charts'}; ")


# --- remote resources in kustomizations ---------------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:  # the name http.server calls
        type(self).requests.append(self.path)
        body = HOST_NETWORK_POD.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server serving a hostNetwork pod, and the paths asked of it."""
    requests: list[str] = []
    handler = type("Handler", (_Recorder,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def test_a_remote_resource_is_refused_unless_allowed_and_no_request_is_made(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    loopback: tuple[str, list[str]],
) -> None:
    require_tool("kubectl", KUBECTL_INSTALL)
    url, requests = loopback
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text(f"resources:\n- {url}/pod.yaml\n", encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "text", str(overlay))
    assert (status, out, requests) == (2, "", [])
    assert errors(err) == [
        f'kubelet-winnet: error: {kustomization}:2: resources[0]: "{url}/pod.yaml" is a '
        "remote resource, which the build would fetch over the network; remote resources "
        "are refused unless --allow-remote or allowRemote: true in the settings allows them"]
    # opted in, the build fetches it (so the refusal above is what kept the request away)
    status, out, err = run(capsys, "check", "-o", "text", "--allow-remote", str(overlay))
    assert (status, errors(err), requests) == (1, [], ["/pod.yaml"]), err
    assert "hostNetwork: true is ignored" in out
    # the settings key does the same
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".kubelet-winnet.yaml").write_text("allowRemote: true\n", encoding="utf-8")
    status, _, err = run(capsys, "check", "-o", "text", str(overlay))
    assert (status, errors(err), requests) == (1, [], ["/pod.yaml"] * 2), err


def test_a_remote_resource_in_a_local_base_is_refused_where_it_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, loopback: tuple[str, list[str]],
) -> None:
    require_tool("kubectl", KUBECTL_INSTALL)
    url, requests = loopback
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text(
        f"namePrefix: x-\nbases:\n- ../other\n- {url}/base.yaml\n", encoding="utf-8")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n- ../base\n", encoding="utf-8")
    status, _, err = run(capsys, "check", str(overlay))
    assert (status, requests) == (2, [])
    [line] = errors(err)
    assert line.startswith(f"kubelet-winnet: error: {base / 'kustomization.yaml'}:4: "
                           f'bases[1]: "{url}/base.yaml" is a remote resource, '), line


@pytest.mark.parametrize(("entry", "remote"), [
    # kustomize's git forms (parseHostSpec's prefixes, "_git/") and http(s) files
    ("github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6", True),
    ("https://github.com/org/repo//path", True),
    ("http://127.0.0.1:8080/pod.yaml", True),
    ("git@github.com:org/repo.git", True),
    ("git::https://example.com/org/repo", True),
    ("gh:org/repo", True),
    ("ssh://git@example.com/org/repo", True),
    ("file:///etc/passwd", True),
    ("dev.azure.com/org/project/_git/repo", True),
    ("GitHub.com/org/repo", True),
    # local files and directories
    ("../base", False), ("deployment.yaml", False), ("overlays/prod", False),
    ("github.company.internal.yaml", False),
])
def test_remote_forms_are_those_kustomize_fetches(entry: str, remote: bool) -> None:
    assert _is_remote(entry) is remote
