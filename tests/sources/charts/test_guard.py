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
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    stop = threading.Timer(120, server.shutdown)  # stops by itself should a test hang
    stop.daemon = True
    stop.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        stop.cancel()
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
    # the same, as other kustomize versions and go-getter take them
    ("HTTPS://example.com/pod.yaml", True),
    ("  http://127.0.0.1:8080/pod.yaml", True),  # a quoted value keeps its spaces
    ("https:\\/\\/127.0.0.1/pod.yaml", True),  # a plain scalar's escapes stay as written
    ("127.0.0.1:8080/org/repo", True),
    ("example.com:8080/org/repo", True),
    ("deploy@example.com/org/repo", True),
    ("ssh:example.com/org/repo", True),
    ("file:/etc/passwd", True),
    ("s3::https://bucket.s3.amazonaws.com/x", True),
    ("example.com/org/repo?ref=v1.0.0", True),
    ("gitlab.com/org/repo", True),
    # local files and directories
    ("../base", False), ("deployment.yaml", False), ("overlays/prod", False),
    ("github.company.internal.yaml", False),
])
def test_remote_forms_are_those_kustomize_fetches(entry: str, remote: bool) -> None:
    assert _is_remote(entry) is remote


# --- a kustomization read as kustomize reads it -------------------------------------------
# kustomize reads a kustomization with sigs.k8s.io/yaml (go-yaml v2: a repeated key's last
# value, a merge key over the keys written before it) and encoding/json, whose struct
# fields match keys case-insensitively (bytes.EqualFold: "ſ" folds to "s")
# (api/types/kustomization.go, Unmarshal). Every case below fetched from the loopback
# server, or named what it fetches where the guard did not look, before the guard read
# kustomizations so.

REMOTE = ("is a remote resource, which the build would fetch over the network; remote "
          "resources are refused unless --allow-remote or allowRemote: true in the "
          "settings allows them")
NOT_AS_KUSTOMIZE = ("the check for remote resources reads the file before kustomize does and "
                    "cannot read it as kustomize would, so it is not built")
QUIET_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: local}\nspec: {containers: []}\n"
PATCH_TRANSFORMER = "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: p}}\n"

# (kustomization, other files, (file, line) of the refusal, its text); "{url}" is the
# loopback server, "{port}" its port.
ATTACKS = {
    "a repeated resources key, whose last value kustomize builds": (
        "resources: [pod.yaml]\nresources: [{url}/x.yaml]\n", {},
        ("kustomization.yaml", 2), f"duplicate key \"resources\"; {NOT_AS_KUSTOMIZE}"),
    "a repeated key in a nested mapping": (
        "resources: [pod.yaml]\npatches:\n- path: p.yaml\n  path: {url}/p.yaml\n", {},
        ("kustomization.yaml", 4), f"duplicate key \"path\"; {NOT_AS_KUSTOMIZE}"),
    "a capitalised field name, which kustomize matches as resources": (
        "Resources: [{url}/x.yaml]\n", {},
        ("kustomization.yaml", 1), f'Resources[0]: "{{url}}/x.yaml" {REMOTE}'),
    "a long s, which Go's case folding makes an s": (
        "resources: [pod.yaml]\nreſources: [{url}/x.yaml]\n", {},
        ("kustomization.yaml", 2),
        "reſources and resources are one field to kustomize, which matches keys without "
        "regard to case and keeps only one of them, so the kustomization is not built: "
        "write the field once"),
    "a merge key, which go-yaml applies over the keys before it": (
        "resources: [pod.yaml]\n<<: {{resources: [{url}/x.yaml]}}\n", {},
        ("kustomization.yaml", 2),
        f"a merge key (<<), which kustomize applies over the keys before it; "
        f"{NOT_AS_KUSTOMIZE}"),
    "a merge key after a line break only YAML reads, at the line editors show": (
        "resources: [pod.yaml]\n# a\u2028# b\n<<: {{resources: [{url}/x.yaml]}}\n", {},
        ("kustomization.yaml", 3),
        f"a merge key (<<), which kustomize applies over the keys before it; "
        f"{NOT_AS_KUSTOMIZE}"),
    "a merge key after bare CR line breaks": (
        "resources: [pod.yaml]\r\r<<: {{resources: [{url}/x.yaml]}}\r", {},
        ("kustomization.yaml", 3),
        f"a merge key (<<), which kustomize applies over the keys before it; "
        f"{NOT_AS_KUSTOMIZE}"),
    "a local tag, which go-yaml ignores and our reader refuses": (
        "resources: !remote [{url}/x.yaml]\n", {},
        ("kustomization.yaml", 1), f"unsupported tag \"!remote\"; {NOT_AS_KUSTOMIZE}"),
    "a component's git URL under a capitalised key": (
        "resources: [pod.yaml]\nComponents: [{url}/org/repo]\n", {},
        ("kustomization.yaml", 2), f'Components[0]: "{{url}}/org/repo" {REMOTE}'),
    "an openapi schema under a capitalised key": (
        "resources: [pod.yaml]\nOpenAPI: {{path: {url}/schema.json}}\n", {},
        ("kustomization.yaml", 2), f'OpenAPI.path: "{{url}}/schema.json" {REMOTE}'),
    "a patch's capitalised Path": (
        "resources: [pod.yaml]\npatches:\n- Path: {url}/p.yaml\n", {},
        ("kustomization.yaml", 3), f'patches[0].Path: "{{url}}/p.yaml" {REMOTE}'),
    "a generator's capitalised Files": (
        "resources: [pod.yaml]\nconfigMapGenerator:\n- name: c\n  Files: [k={url}/f]\n", {},
        ("kustomization.yaml", 4),
        f'configMapGenerator[0].Files[0]: "k={{url}}/f" {REMOTE}'),
    "a Helm chart's repository": (
        "resources: [pod.yaml]\nhelmCharts:\n- name: x\n  repo: charts.example\n", {},
        ("kustomization.yaml", 4), f'helmCharts[0].repo: "charts.example" {REMOTE}'),
    "a transformer written inline, its URL in YAML escapes": (
        'resources: [pod.yaml]\ntransformers:\n- "' + PATCH_TRANSFORMER.replace("\n", "\\n")
        + 'path: \\"http:\\\\x2f\\\\x2f127.0.0.1:{port}/p.yaml\\""\n', {},
        ("kustomization.yaml", 3),
        f'transformers[0].path: "http://127.0.0.1:{{port}}/p.yaml" {REMOTE}'),
    "a transformer's config file": (
        "resources: [pod.yaml]\ntransformers: [t.yaml]\n",
        {"t.yaml": PATCH_TRANSFORMER + "path: {url}/p.yaml\n"},
        ("t.yaml", 4), f'path: "{{url}}/p.yaml" {REMOTE}'),
    "a validator's config file": (
        "resources: [pod.yaml]\nvalidators: [t.yaml]\n",
        {"t.yaml": PATCH_TRANSFORMER + "path: {url}/p.yaml\n"},
        ("t.yaml", 4), f'path: "{{url}}/p.yaml" {REMOTE}'),
    "a generator's config file": (
        "resources: [pod.yaml]\ngenerators: [g.yaml]\n",
        {"g.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {{name: g}}\n"
                   "files: [{url}/f]\n"},
        ("g.yaml", 4), f'files[0]: "{{url}}/f" {REMOTE}'),
    "the configs of a kustomization that transformers names": (
        "resources: [pod.yaml]\ntransformers: [configs]\n",
        {"configs/kustomization.yaml": "resources: [t.yaml]\n",
         "configs/t.yaml": PATCH_TRANSFORMER + "Path: {url}/p.yaml\n"},
        ("configs/t.yaml", 4), f'Path: "{{url}}/p.yaml" {REMOTE}'),
    "a config file a transformer reads as kustomize does not": (
        "resources: [pod.yaml]\ntransformers: [t.yaml]\n",
        {"t.yaml": PATCH_TRANSFORMER + "path: p.yaml\npath: {url}/p.yaml\n"},
        ("t.yaml", 5), f"duplicate key \"path\"; {NOT_AS_KUSTOMIZE}"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_kustomization_is_refused_before_any_build_where_kustomize_would_fetch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, loopback: tuple[str, list[str]],
    attack: str,
) -> None:
    require_tool("kubectl", KUBECTL_INSTALL)
    url, requests = loopback
    port = url.rsplit(":", 1)[1]
    text, files, (file, line), reason = ATTACKS[attack]
    (tmp_path / "pod.yaml").write_text(QUIET_POD, encoding="utf-8")
    (tmp_path / "kustomization.yaml").write_text(text.format(url=url, port=port),
                                                 encoding="utf-8")
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(content.format(url=url, port=port), encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "text", str(tmp_path))
    assert (status, out, requests) == (2, "", []), err
    # the first error; a config file is read as itself too, with its own errors
    assert errors(err)[0] == (f"kubelet-winnet: error: {tmp_path / file}:{line}: "
                              + reason.format(url=url, port=port))


def test_kustomizations_kustomize_reads_alike_still_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """Anchors, quoted keys and transformer configs whose paths stay local are read
    alike by both, so the build runs and its pod is judged."""
    require_tool("kubectl", KUBECTL_INSTALL)
    (tmp_path / "pod.yaml").write_text(HOST_NETWORK_POD, encoding="utf-8")
    (tmp_path / "t.yaml").write_text(
        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\n"
        "labels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
        encoding="utf-8")
    (tmp_path / "kustomization.yaml").write_text(
        "labels: &labels\n- pairs: {app: a}\n\"resources\": [pod.yaml]\n"
        "transformers: [t.yaml]\ncommonAnnotations: {docs: 'https://example.com/x'}\n",
        encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "text", str(tmp_path))
    assert (status, errors(err)) == (1, []), err
    assert "hostNetwork: true is ignored" in out


def test_a_config_file_outside_the_kustomization_is_left_to_kustomize_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """kustomize refuses a file that a link or a path puts outside the kustomization's
    directory ("is not in or below"); the guard does not read it either, so none of it
    reaches a message."""
    require_tool("kubectl", KUBECTL_INSTALL)
    secret = tmp_path / "secret.yaml"
    secret.write_text("token-abc123: 1\ntoken-abc123: 2\n", encoding="utf-8")
    root = tmp_path / "k"
    root.mkdir()
    (root / "pod.yaml").write_text(QUIET_POD, encoding="utf-8")
    (root / "t.yaml").symlink_to(secret)
    for entry in ("t.yaml", "../secret.yaml", str(secret)):
        (root / "kustomization.yaml").write_text(
            f"resources: [pod.yaml]\ntransformers: [{entry}]\n", encoding="utf-8")
        status, _, err = run(capsys, "check", "-o", "text", str(root / "kustomization.yaml"))
        [line] = errors(err)
        assert status == 2
        assert "token-abc123" not in line
        assert line.endswith("kustomize reads only files inside it"), line  # its refusal


def test_a_packaged_subchart_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    """charts/*.tgz is opened to read its Chart.yaml; a FIFO so named waited for a writer
    for ever. It cannot be read as an archive: the renderer then says why."""
    import os

    from kubelet_winnet.sources.charts.guard import _vendored
    from kubelet_winnet.sources.manifests import DEFAULT_LIMITS
    from tests.strategies import without_waiting_on

    if not hasattr(os, "mkfifo"):
        pytest.skip("POSIX FIFOs")
    (tmp_path / "charts").mkdir()
    fifo = tmp_path / "charts" / "sub-1.0.0.tgz"
    os.mkfifo(fifo)
    assert without_waiting_on([fifo], lambda: _vendored(str(tmp_path), DEFAULT_LIMITS)) is None


def test_the_merge_key_scan_of_a_file_that_became_a_fifo_is_not_waited_on(
        tmp_path: Path) -> None:
    # the scan reads the kustomization again after our reader did: a FIFO in its place
    # is not waited on (our reader's own read says what changed)
    import os

    from kubelet_winnet.sources.charts.guard import _merge_key
    from kubelet_winnet.sources.manifests import DEFAULT_LIMITS
    from tests.strategies import without_waiting_on

    if not hasattr(os, "mkfifo"):
        pytest.skip("POSIX FIFOs")
    fifo = tmp_path / "kustomization.yaml"
    os.mkfifo(fifo)
    assert without_waiting_on([fifo], lambda: _merge_key(str(fifo), DEFAULT_LIMITS)) == 0
