"""``sources/charts/render.py``: charts and kustomizations given to check, translate, explain
and run
are rendered with the real tools: ``kubectl kustomize`` (Debian's
kubectl; .ci/install-system-packages puts it on CI's PATH) and Helm's own engine as the
PyPI package ``helm-python-sdk`` ships it (the ``ci`` extra), as no ``helm`` binary is
installable here. Expected names and lines come from the fixture files
(tests/data/render/) and from the tool's own output, never from our reader.
"""

from __future__ import annotations

import codecs
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main
from kubelet_winnet.sources.charts.render import _split_helm, render_root
from kubelet_winnet.sources.manifests import expand_paths
from tests.strategies import REPO_ROOT, require, require_tool

DATA = REPO_ROOT / "tests" / "data" / "render"
KUSTOMIZATION = DATA / "kustomization"
CHART = DATA / "chart"
TEMPLATE = CHART / "templates" / "daemonset.yaml"
KUBECTL_INSTALL = "apt-get install kubernetes-client (Debian's kubectl)"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("kubelet-winnet: error: ")]


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the one line of ``text`` that holds ``needle``."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def without_helm_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without a ``helm``: the engine package renders (the binary, where a user has
    one, comes first)."""
    helm = shutil.which("helm")
    if helm is not None:
        path = [p for p in os.environ["PATH"].split(os.pathsep)
                if os.path.realpath(p) != os.path.realpath(os.path.dirname(helm))]
        monkeypatch.setenv("PATH", os.pathsep.join(path))


# --- where a render starts --------------------------------------------------------------


def test_a_file_stands_for_its_chart_and_a_kustomization_file_for_its_build(
    tmp_path: Path,
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    sub = chart / "charts" / "sub"
    (sub / "templates").mkdir(parents=True)
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 1.0.0\n")
    overlay = tmp_path / "overlay"
    (overlay / "patches").mkdir(parents=True)
    (overlay / "Kustomization").write_text("resources: []\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    cache: dict[str, str | None] = {}  # one per run: a second file asks it first
    found = {name: render_root(str(path), cache) for name, path in {
        "template": chart / "templates" / "ds.yaml", "chart": chart,
        "nested template": chart / "templates" / "jobs" / "job.yaml",
        "values": chart / "values.yaml",
        "subchart template": sub / "templates" / "x.yaml",  # rendered through its parent
        "kustomization directory": overlay, "kustomization file": overlay / "Kustomization",
        "resource or patch": overlay / "patches" / "p.yaml",  # read as it is
        "plain": plain / "pod.yaml",
    }.items()}
    assert {name: root and (root.kind, root.path, root.manifest)
            for name, root in found.items()} == {
        "template": ("helm", str(chart), "Chart.yaml"),
        "chart": ("helm", str(chart), "Chart.yaml"),
        "nested template": ("helm", str(chart), "Chart.yaml"),
        "values": ("helm", str(chart), "Chart.yaml"),
        "subchart template": ("helm", str(chart), "Chart.yaml"),
        "kustomization directory": ("kustomize", str(overlay), "Kustomization"),
        "kustomization file": ("kustomize", str(overlay), "Kustomization"),
        "resource or patch": None,
        "plain": None,
    }


def test_a_directory_search_finds_a_kustomization_file_named_Kustomization(
    tmp_path: Path,
) -> None:
    """kustomize recognises ``kustomization.yaml``, ``kustomization.yml`` and
    ``Kustomization`` (sigs.k8s.io/kustomize/api/konfig); the search found only the first
    two, so a ``Kustomization`` below the directory given, or in one given when the
    input was filtered file by file (a baseline, a skip pattern), was never built."""
    overlay = tmp_path / "deploy" / "overlay"
    overlay.mkdir(parents=True)
    for name in ("Kustomization", "patch.yaml", "README", "kustomization.txt"):
        (overlay / name).write_text("resources: []\n")
    assert list(expand_paths([str(tmp_path)])) == [
        str(overlay / "Kustomization"), str(overlay / "patch.yaml")]


def test_helm_template_output_is_split_per_template(tmp_path: Path) -> None:
    """``helm template`` prints each manifest after ``---`` and ``# Source: CHART/path``
    (helm's cmd/helm/template.go), sorted by kind, so one template's documents can be
    apart; each template's part is read under its path in the chart directory, its
    documents joined as the template separates them."""
    stream = tmp_path / "out"
    stream.write_text(
        "---\n# Source: win/templates/sa.yaml\napiVersion: v1\nkind: ServiceAccount\n"
        "---\n# Source: win/templates/ds.yaml\napiVersion: v1\nkind: ConfigMap\n"
        "---\n# Source: win/templates/sa.yaml\napiVersion: v1\nkind: Secret\n"
        "---\n# Source: win/charts/db/templates/ds.yaml\nkind: DaemonSet\n---\nkind: Pod\n",
        encoding="utf-8")
    parts = {name: Path(path).read_text(encoding="utf-8")
             for name, path in _split_helm(str(stream), "charts/win", str(tmp_path / "x"))}
    assert parts == {
        os.path.join("charts/win", "templates", "sa.yaml"):
            "apiVersion: v1\nkind: ServiceAccount\n---\napiVersion: v1\nkind: Secret\n",
        os.path.join("charts/win", "templates", "ds.yaml"): "apiVersion: v1\nkind: ConfigMap\n",
        os.path.join("charts/win", "charts", "db", "templates", "ds.yaml"):
            "kind: DaemonSet\n---\nkind: Pod\n",
    }


# --- kustomizations: kubectl kustomize ----------------------------------------------------


def test_a_kustomization_is_checked_as_kubectl_builds_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    kubectl = require_tool("kubectl", KUBECTL_INSTALL)
    built = subprocess.run([kubectl, "kustomize", str(KUSTOMIZATION)], capture_output=True,
                           text=True, timeout=120, check=True).stdout
    settings = yaml.safe_load((KUSTOMIZATION / "kustomization.yaml").read_text())
    resource_text = (KUSTOMIZATION / "daemonset.yaml").read_text()
    resource = yaml.safe_load(resource_text)["metadata"]["name"]
    name = settings["namePrefix"] + resource  # the kustomization's doing

    def finding(where: str, line: int, name: str) -> str:
        return (f"{where}:{line}: warning host-network-ignored: DaemonSet/{name}: "
                "hostNetwork: true is ignored: the pod gets its own network namespace; for "
                "the node's network make it HostProcess. [spec.template.spec.hostNetwork]")

    # The build's object, named by its prefixed name, at the line of its resource file
    # that writes the field: once, though the directory holds the resource file too.
    from_build = finding(str(KUSTOMIZATION / "daemonset.yaml"),
                         line_of(resource_text, "hostNetwork: true"), name)
    assert name in built and "hostNetwork: true" in built
    status, out, err = run(capsys, "check", "-o", "text", str(KUSTOMIZATION))
    assert (status, out.splitlines(), errors(err)) == (1, [from_build], [])
    # the kustomization file alone (as pre-commit gives it): the build
    status, out, err = run(capsys, "check", "-o", "text",
                           str(KUSTOMIZATION / "kustomization.yaml"))
    assert (status, out.splitlines(), errors(err)) == (1, [from_build], [])
    # the resource file alone: read as it is, under its own name
    status, out, err = run(capsys, "check", "-o", "text", str(KUSTOMIZATION / "daemonset.yaml"))
    assert (status, out.splitlines(), errors(err)) == (
        1, [finding(str(KUSTOMIZATION / "daemonset.yaml"),
                    line_of(resource_text, "hostNetwork: true"), resource)], [])
    # -v says which tool built it
    status, _, err = run(capsys, "check", "-v", str(KUSTOMIZATION / "kustomization.yaml"))
    assert f"kubelet-winnet: note: {KUSTOMIZATION}: rendered with kubectl kustomize " \
        f"{KUSTOMIZATION}; findings name the file each object came from" in err.splitlines(), err
    # translate reads the same build: the prefixed name is the kustomization's
    status, out, _ = run(capsys, "translate", "-o", "json",
                         str(KUSTOMIZATION / "kustomization.yaml"))
    assert status == 0
    assert [pod["pod"] for pod in json.loads(out)] == [f"DaemonSet/{name}"]
    # run reads its input twice (ConfigMaps first, then pods): the one build serves both
    status, out, _ = run(capsys, "run", "--dry-run", str(KUSTOMIZATION / "kustomization.yaml"))
    assert status == 0
    assert [pod["pod"] for pod in json.loads(out)] == [f"DaemonSet/{name}"]


def _patched_overlay(root: Path) -> Path:
    """A kustomization named ``Kustomization`` whose patch alone sets hostNetwork on a
    Windows DaemonSet: the finding exists only in the build."""
    overlay = root / "deploy" / "overlay"
    overlay.mkdir(parents=True)
    (overlay / "Kustomization").write_text(
        "resources:\n- ds.yaml\npatches:\n- path: patch.yaml\n", encoding="utf-8")
    (overlay / "ds.yaml").write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "win"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                     "containers": [{"name": "c", "image": "i"}]}}}}), encoding="utf-8")
    # a patch is no workload of its own: no selector, so no second finding of its own
    (overlay / "patch.yaml").write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "win"},
        "spec": {"template": {"spec": {"hostNetwork": True,
                                       "nodeSelector": {"kubernetes.io/os": "windows"}}}}}),
        encoding="utf-8")
    return overlay


@pytest.mark.parametrize("how", ["baseline", "skip pattern", "directory above"])
def test_a_Kustomization_file_is_built_whatever_filters_the_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    """With --baseline or a skip: pattern in effect (the input then goes file by file), a
    directory whose kustomization file is named ``Kustomization`` was not built: its
    finding was lost, exit 0. Likewise for one below the directory given."""
    kubectl = require_tool("kubectl", KUBECTL_INSTALL)
    overlay = _patched_overlay(tmp_path)
    built = subprocess.run([kubectl, "kustomize", str(overlay)], capture_output=True,
                           text=True, timeout=120, check=True).stdout
    monkeypatch.chdir(tmp_path)
    argv = ["check", "-o", "sarif", "deploy/overlay"]
    if how == "baseline":
        (tmp_path / "baseline.json").write_text('{"failed_checks": []}\n', encoding="utf-8")
        argv += ["--baseline", "baseline.json"]
    elif how == "skip pattern":
        (tmp_path / ".kubelet-winnet.yaml").write_text('skip: ["vendor/*"]\n',
                                                       encoding="utf-8")
    else:
        argv[-1] = "deploy"
    status, out, err = run(capsys, *argv)
    assert (status, errors(err)) == (1, [])
    results = json.loads(out)["runs"][0]["results"]
    located = [(r["ruleId"], r["level"],
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"])
               for r in results]
    assert "hostNetwork: true" in built  # the build has the field, set by the patch alone
    # The finding lies in the resource file the object came from, at the nearest parent of
    # the field that file writes (spec.template.spec), and names the patch that set it.
    resource = (overlay / "ds.yaml").read_text(encoding="utf-8").splitlines()
    template_spec = [n for n, line in enumerate(resource, 1) if line.strip() == "spec:"][1]
    assert ("host-network-ignored", "warning", "deploy/overlay/ds.yaml",
            template_spec) in located
    finding = next(r for r in results if r["ruleId"] == "host-network-ignored")
    patch = (overlay / "patch.yaml").read_text(encoding="utf-8")
    assert [(x["physicalLocation"]["artifactLocation"]["uri"],
             x["physicalLocation"]["region"]["startLine"])
            for x in finding["relatedLocations"]] == [
        ("deploy/overlay/patch.yaml", line_of(patch, "hostNetwork: true"))]


def test_kustomize_failures_are_one_line_with_the_tools_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    require_tool("kubectl", KUBECTL_INSTALL)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n- missing-deployment.yaml\n")
    status, out, err = run(capsys, "check", str(overlay))
    assert (status, out) == (2, "")
    [line] = errors(err)
    assert line.startswith(f"kubelet-winnet: error: {overlay / 'kustomization.yaml'}: "
                           f"kubectl kustomize {overlay} failed (exit status 1): ")
    assert "missing-deployment.yaml" in line  # kubectl's own reason, on the same line
    # over --max-bytes and past --render-timeout: stopped, said, exit 2
    kustomization = str(KUSTOMIZATION / "kustomization.yaml")
    # (300: over the kustomization file, which the remote check reads first, under the build)
    status, _, err = run(capsys, "check", "--max-bytes", "300", kustomization)
    assert status == 2
    assert errors(err) == [
        f"kubelet-winnet: error: {KUSTOMIZATION / 'kustomization.yaml'}: the output of "
        f"kubectl kustomize {KUSTOMIZATION} is larger than 300 bytes (raise the limit with "
        "--max-bytes)"]
    status, _, err = run(capsys, "check", "--render-timeout", "0.001", kustomization)
    assert status == 2
    assert errors(err) == [
        f"kubelet-winnet: error: {KUSTOMIZATION / 'kustomization.yaml'}: kubectl kustomize "
        f"{KUSTOMIZATION} did not finish in 0.001 seconds (raise --render-timeout)"]


def test_a_missing_renderer_is_exit_2_saying_what_to_install(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl, kustomize nor helm
    monkeypatch.setitem(sys.modules, "helm_python", None)  # nor the engine package
    status, _, err = run(capsys, "check", str(KUSTOMIZATION / "kustomization.yaml"),
                         str(TEMPLATE))
    assert status == 2
    assert errors(err) == [
        f"kubelet-winnet: error: {KUSTOMIZATION / 'kustomization.yaml'}: {KUSTOMIZATION} is "
        "a kustomization, and building it needs kubectl or kustomize on PATH (Debian: apt "
        "install kubernetes-client); or give --no-render to read its files as they are",
        f"kubelet-winnet: error: {CHART / 'Chart.yaml'}: {CHART} is a Helm chart, and "
        "rendering it needs helm on PATH or the Python package helm-python-sdk (pip install "
        "helm-python-sdk); or give --no-render to read its files as they are",
    ]
    # --no-render: read as files, with the notes of before
    status, _, err = run(capsys, "check", "--no-render", str(KUSTOMIZATION))
    assert status == 1  # daemonset.yaml read as it is
    assert f"{KUSTOMIZATION / 'kustomization.yaml'} is a kustomization: check what it " \
        "builds with kubectl kustomize" in err


# --- Helm charts: Helm's engine ---------------------------------------------------------


def test_a_chart_is_checked_as_helm_renders_it_under_each_templates_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    require("helm_python")
    without_helm_binary(monkeypatch)
    template = TEMPLATE.read_text(encoding="utf-8")
    line = line_of(template, "hostNetwork: {{ .Values.hostNetwork }}")  # no lines above vary
    name = "release-name-agent"  # helm template's release name, and the helper's suffix
    expected = (f"{TEMPLATE}:{line}: warning host-network-ignored: DaemonSet/{name}: "
                "hostNetwork: true is ignored: the pod gets its own network namespace; for "
                "the node's network make it HostProcess. [spec.template.spec.hostNetwork]")
    # the chart, a template alone (pre-commit), and both: rendered once each run
    for given in ([CHART], [TEMPLATE], [TEMPLATE, CHART, CHART / "values.yaml"]):
        status, out, err = run(capsys, "check", "-o", "text", *map(str, given))
        assert (status, out.splitlines(), errors(err)) == (1, [expected], []), err
        assert "pod in 2 files checked" in err  # the DaemonSet's and the ServiceAccount's
    status, _, err = run(capsys, "check", "-v", str(CHART))
    assert f"kubelet-winnet: note: {CHART}: rendered with helm template {CHART} " \
        "(helm-python-sdk); findings name each template and its lines" in err.splitlines()
    status, out, _ = run(capsys, "check", "-o", "sarif", str(CHART))
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"] == {  # the template, in the repository
        "artifactLocation": {"uri": f"file://{TEMPLATE.as_posix()}"},  # (absolute: as given)
        "region": {"startLine": line}}


def test_helm_values_and_set_reach_the_chart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    require("helm_python")
    without_helm_binary(monkeypatch)
    values = tmp_path / "host-process.yaml"
    values.write_text("hostProcess: true\n", encoding="utf-8")
    # HostProcess with hostNetwork: what the chart's author meant; nothing to say
    status, out, err = run(capsys, "check", "-o", "json", "--helm-values", str(values),
                           str(CHART))
    assert (status, json.loads(out)["findings"]) == (0, []), err
    status, out, _ = run(capsys, "check", "-o", "json", "--helm-set", "hostProcess=true",
                         str(CHART))
    assert (status, json.loads(out)["findings"]) == (0, [])
    # later values win, as with helm template -f A -f B
    off = tmp_path / "off.yaml"
    off.write_text("hostProcess: false\n", encoding="utf-8")
    status, out, _ = run(capsys, "check", "-o", "json", "--helm-values", str(values),
                         "--helm-values", str(off), str(CHART))
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["host-network-ignored"]
    # explain reads the rendered pod: HostProcess, so the node's network
    status, out, _ = run(capsys, "explain", "-o", "json", "--helm-set", "hostProcess=true",
                         str(CHART))
    assert status == 0
    [pod] = json.loads(out)
    assert (pod["pod"], pod["source"]) == ("DaemonSet/release-name-agent", f"{TEMPLATE}#1")


def test_helm_values_and_settings_that_start_with_a_dash_are_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A values file or a --set value starting with "-" was refused with the internal
    renderer's usage text ("usage: kubelet-winnet-helm-engine ... expected one
    argument"): it is a value, handed to the renderer as --values=X / --set=X."""
    require("helm_python")
    without_helm_binary(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-host-process.yaml").write_text("hostProcess: true\n", encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "json", "--helm-values=-host-process.yaml",
                           str(CHART))
    assert (status, json.loads(out)["findings"], errors(err)) == (0, [], [])
    status, out, err = run(capsys, "check", "-o", "json", "--helm-set=-unused=1",
                           "--helm-set=hostProcess=true", str(CHART))
    assert (status, json.loads(out)["findings"], errors(err)) == (0, [], [])
    # without "=", argparse reads such a value as a flag: our sentence says how to write it
    with pytest.raises(SystemExit) as exited:
        main(["check", "--helm-values", "-host-process.yaml", str(CHART)])
    out, err = capsys.readouterr()
    assert (exited.value.code, out) == (2, "")
    assert errors(err) == [
        "kubelet-winnet: error: check: argument --helm-values: expected one argument (a "
        "value that starts with '-' is written --helm-values=VALUE); see kubelet-winnet "
        "check --help"]


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for helm")
def test_the_helm_binary_gets_each_value_in_one_word(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """helm's own parser (pflag) takes --values=X whatever X starts with; so does the
    engine, and both get the same words."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    said = tmp_path / "argv"
    helm = bin_dir / "helm"
    helm.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {said}\n', encoding="utf-8")
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run(capsys, "check", "--allow-empty", "--helm-values=-a.yaml", "--helm-set=-b=1",
        "--helm-set", "c=-d", str(CHART))
    assert said.read_text(encoding="utf-8").splitlines() == [
        "template", str(CHART), "--values=-a.yaml", "--set=-b=1", "--set=c=-d"]


def test_a_template_helm_cannot_render_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    require("helm_python")
    without_helm_binary(monkeypatch)
    chart = tmp_path / "broken"
    shutil.copytree(CHART, chart)
    (chart / "templates" / "bad.yaml").write_text("kind: Pod\nname: {{ .Values.name \n")
    status, out, err = run(capsys, "check", str(chart / "templates" / "bad.yaml"))
    assert (status, out) == (2, "")
    [line] = errors(err)
    assert line.startswith(f"kubelet-winnet: error: {chart / 'Chart.yaml'}: helm template "
                           f"{chart} (helm-python-sdk) failed (exit status 1): Error: ")
    assert "bad.yaml" in line  # Helm's parse error names the template



# --- the renderer's memory ----------------------------------------------------------------


def _fake_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """A ``helm`` first on PATH that runs ``script`` (POSIX sh)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    helm = tools / "helm"
    helm.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.skipif(sys.platform == "win32", reason="address-space limits are POSIX rlimits")
def test_the_renderer_runs_with_bounded_memory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`{{ range until 1000000000 }}` made Helm's engine hold 14 GB before the render
    timeout fired: --max-bytes bounded only the output it had written. The child's
    address space is bounded: 2 GiB and 8 times --max-bytes."""
    _fake_helm(tmp_path, monkeypatch, 'echo "limit $(ulimit -v)" >&2; exit 1')
    max_bytes = 1 << 20
    status, _, err = run(capsys, "check", str(CHART), "--max-bytes", str(max_bytes))
    assert status == 2
    [line] = errors(err)
    said = line.rsplit("limit ", 1)[1].split()[0]
    assert said.isdigit(), line  # "unlimited" before the bound
    assert int(said) * 1024 == 2 * 1024**3 + 8 * max_bytes


@pytest.mark.skipif(sys.platform == "win32", reason="address-space limits are POSIX rlimits")
def test_a_renderer_out_of_memory_says_which_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What Go's runtime prints when an allocation fails under the limit.
    _fake_helm(tmp_path, monkeypatch, "echo 'fatal error: out of memory' >&2; exit 2")
    status, _, err = run(capsys, "check", str(CHART), "--max-bytes", str(1 << 20))
    assert status == 2
    [line] = errors(err)
    assert line == (
        f"kubelet-winnet: error: {CHART / 'Chart.yaml'}: helm template {CHART} ran out of "
        "memory: a renderer may use 2056 MiB here (2 GiB and 8 times --max-bytes); raise "
        "--max-bytes for a chart this large")


def test_the_renderer_runs_no_python_between_fork_and_exec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A preexec_fn set the limit, so Python forked and ran its at-fork handlers in the
    child; with a gRPC channel in the process (the CRI tests' worker) gRPC's handler
    aborted the child before exec, and a kubectl render failed in CI. The shell sets the
    limit now, and Popen gets no preexec_fn."""
    _fake_helm(tmp_path, monkeypatch, 'echo "kind: Pod"')
    seen: list[dict[str, object]] = []
    real = subprocess.Popen

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    status, _, err = run(capsys, "check", "--allow-empty", str(CHART))
    assert (status, errors(err)) == (0, [])
    assert seen and all(kwargs.get("preexec_fn") is None for kwargs in seen)


@pytest.mark.skipif(sys.platform == "win32", reason="the limit is set by /bin/sh")
def test_a_renderer_that_cannot_be_executed_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    helm = tools / "helm"
    helm.write_text("#!/no/such/interpreter\n", encoding="utf-8")
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    status, _, err = run(capsys, "check", str(CHART))
    assert status == 2
    [line] = errors(err)
    assert line.startswith(f"kubelet-winnet: error: {CHART / 'Chart.yaml'}: cannot run "
                           f"{helm.name} template {CHART}: "), line
    assert str(helm) in line and "not found" in line, line


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_renderer_killed_by_a_signal_names_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_helm(tmp_path, monkeypatch, "echo 'about to abort' >&2; kill -ABRT $$")
    status, _, err = run(capsys, "check", str(CHART))
    assert status == 2
    assert errors(err) == [f"kubelet-winnet: error: {CHART / 'Chart.yaml'}: helm template "
                           f"{CHART} was killed by SIGABRT: about to abort"]


def test_helm_values_files_are_read_by_the_input_layer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's values files went through yaml.safe_load: a 600-byte alias bomb ran
    43 s to 2.5 GB, UTF-16 (what PowerShell writes; Helm's YAML reads it) was a Python
    traceback squeezed onto the error line, a missing file "[Errno 2]"."""
    require("helm_python")
    without_helm_binary(monkeypatch)
    values = tmp_path / "host-process.yaml"
    values.write_bytes(codecs.BOM_UTF16_LE + "hostProcess: true\n".encode("utf-16-le"))
    status, out, err = run(capsys, "check", "-o", "json", "--helm-values", str(values),
                           str(CHART))
    assert (status, json.loads(out)["findings"]) == (0, []), err

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)),
        encoding="utf-8")
    status, _, err = run(capsys, "check", "--helm-values", str(bomb), str(CHART))
    assert status == 2
    [line] = errors(err)
    assert f"failed (exit status 1): Error: {bomb}:" in line
    assert "aliases expand to more than" in line

    missing = tmp_path / "nope.yaml"
    status, _, err = run(capsys, "check", "--helm-values", str(missing), str(CHART))
    [line] = errors(err)
    assert line.endswith(f"failed (exit status 1): Error: {missing}: cannot read: "
                         "No such file or directory")


def test_the_engine_reads_values_under_the_callers_limits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The error says "raise the limit with --max-alias-nodes": the flag must reach it.
    require("helm_python")
    without_helm_binary(monkeypatch)
    values = tmp_path / "aliases.yaml"
    values.write_text("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: [*a, *a, *a]\n",
                      encoding="utf-8")
    status, _, err = run(capsys, "check", "--max-alias-nodes", "20", "--helm-values",
                         str(values), str(CHART))
    assert status == 2 and "aliases expand to more than 20 nodes" in err
    status, _, err = run(capsys, "check", "--helm-values", str(values), str(CHART))
    assert status == 1 and not errors(err)


def test_a_renderers_log_header_is_not_part_of_its_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """kubectl logs through klog: `E1204 17:06:12.150831   10070 run.go:72] "command
    failed" err="..."`. The time and process id made every failure line differ from run
    to run (a CI log diff, a baseline of errors); keep the message."""
    require_tool("kubectl", KUBECTL_INSTALL)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n- missing-deployment.yaml\n")
    status, _, err = run(capsys, "check", str(overlay))
    assert status == 2
    [line] = errors(err)
    said = line.split("failed (exit status 1): ", 1)[1]
    assert said.startswith('"command failed" err='), said


# --- hostile charts: headers, names, links, the environment -------------------------------

HOST_NETWORK_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec:
  hostNetwork: true
  nodeSelector: {kubernetes.io/os: windows}
  containers: [{name: c, image: i}]
"""
PLAIN_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers: [{name: c, image: i}]
"""


def _chart(at: Path, templates: dict[str, str], name: str = "chart") -> Path:
    (at / "templates").mkdir(parents=True)
    (at / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n",
                                   encoding="utf-8")
    for template, text in templates.items():
        (at / "templates" / template).write_text(text, encoding="utf-8")
    return at


def _victim_finding(victim: Path) -> str:
    line = line_of(victim.read_text(encoding="utf-8"), "hostNetwork: true")
    return (f"{victim}:{line}: warning host-network-ignored: Pod/victim: hostNetwork: true "
            "is ignored: the pod gets its own network namespace; for the node's network "
            "make it HostProcess. [spec.hostNetwork]")


def test_a_source_line_a_template_prints_never_replaces_another_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A template printing `---` and `# Source: chart/../victim.yaml` made its output
    stand for deploy/victim.yaml, which was never read: exit 0 over a hostNetwork pod.
    Helm writes its header after every `---` it splits at, so the template's own line
    is a comment of that template."""
    require("helm_python")
    without_helm_binary(monkeypatch)
    deploy = tmp_path / "deploy"
    evil = PLAIN_POD.replace("NAME", "a") + "---\n# Source: chart/../victim.yaml\n" \
        + PLAIN_POD.replace("NAME", "b")
    _chart(deploy / "chart", {"evil.yaml": evil})
    victim = deploy / "victim.yaml"
    victim.write_text(HOST_NETWORK_POD, encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "text", str(deploy))
    assert (status, out.splitlines(), errors(err)) == (1, [_victim_finding(victim)], [])
    assert "3 pods in 2 files checked" in err  # both of the template's pods, under its name
    status, out, _ = run(capsys, "translate", "-o", "json", str(deploy))
    assert sorted((pod["pod"], pod["source"]) for pod in json.loads(out)) == [
        ("Pod/a", f"{deploy / 'chart' / 'templates' / 'evil.yaml'}#1"),
        ("Pod/b", f"{deploy / 'chart' / 'templates' / 'evil.yaml'}#2"),
        ("Pod/victim", f"{victim}#1"),
    ]


def test_a_renderer_naming_a_template_outside_the_chart_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    deploy = tmp_path / "deploy"
    _chart(deploy / "chart", {})
    victim = deploy / "victim.yaml"
    victim.write_text(HOST_NETWORK_POD, encoding="utf-8")
    _fake_helm(tmp_path, monkeypatch, "printf -- '---\\n# Source: chart/../victim.yaml\\n"
               "kind: ConfigMap\\n'")
    status, out, err = run(capsys, "check", "-o", "text", str(deploy))
    assert status == 2
    assert out.splitlines() == [_victim_finding(victim)]  # read from disk all the same
    assert errors(err) == [
        f"kubelet-winnet: error: {deploy / 'chart' / 'Chart.yaml'}: the render names a "
        'template "chart/../victim.yaml", which is no file under the chart\'s templates/ '
        "(Helm writes CHART/templates/... or CHART/charts/SUB/templates/...), so none of it "
        "is read"]


@pytest.mark.parametrize("name", [
    "win/../victim.yaml", "win/templates/../../victim.yaml", "win/values.yaml",
    "win/charts/db/values.yaml", "win//templates/x.yaml", "win/templates/./x.yaml",
    "win/templates", "victim.yaml",
])
def test_only_names_under_a_charts_templates_are_template_names(
    tmp_path: Path, name: str,
) -> None:
    from kubelet_winnet.sources.charts.render import RenderError

    stream = tmp_path / "out"
    stream.write_text(f"---\n# Source: {name}\nkind: Pod\n", encoding="utf-8")
    with pytest.raises(RenderError, match="which is no file under the chart's templates/"):
        list(_split_helm(str(stream), "charts/win", str(tmp_path / "x")))


def test_two_renders_never_share_a_templates_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chart inside another chart's templates/ (not a subchart): the outer chart's
    render may name the inner chart's template; one copy must not stand for both."""
    outer = _chart(tmp_path / "a", {})
    inner = _chart(outer / "templates" / "b", {}, name="b")
    _fake_helm(tmp_path, monkeypatch, 'case "$2" in *b) n=b/templates/x.yaml;; '
               '*) n=a/templates/b/templates/x.yaml;; esac; '
               'printf -- "---\\n# Source: $n\\nkind: ConfigMap\\n"')
    status, _, err = run(capsys, "check", str(outer), str(inner))
    assert status == 2
    assert errors(err) == [
        f"kubelet-winnet: error: {inner / 'Chart.yaml'}: the render names a template "
        f'"{inner / "templates" / "x.yaml"}", which is also a template of another render, '
        "so none of it is read"]


@pytest.mark.slow  # a bound checked at scale: renders past the limits
def test_a_render_has_bounded_documents_and_templates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """150,000 `# Source:` headers made 150,000 temporary files in 27 s."""
    from kubelet_winnet.sources.charts.render import MAX_DOCUMENTS, MAX_TEMPLATES

    chart = _chart(tmp_path / "chart", {})
    _fake_helm(tmp_path, monkeypatch, f"awk 'BEGIN {{ for (i = 0; i <= {MAX_TEMPLATES}; "
               "i++) printf \"---\\n# Source: chart/templates/t%d.yaml\\nkind: ConfigMap\\n\", "
               "i }'")
    status, _, err = run(capsys, "check", str(chart))
    assert status == 2
    assert errors(err) == [
        f"kubelet-winnet: error: {chart / 'Chart.yaml'}: the render holds more than "
        f"{MAX_TEMPLATES:,} templates, the most one chart may render here, so none of it is "
        "read"]
    stream = tmp_path / "many"
    stream.write_text("---\n# Source: c/templates/t.yaml\nkind: ConfigMap\n"
                      * (MAX_DOCUMENTS + 1), encoding="utf-8")
    from kubelet_winnet.sources.charts.render import RenderError

    with pytest.raises(RenderError, match=f"more than {MAX_DOCUMENTS:,} documents"):
        list(_split_helm(str(stream), "c", str(tmp_path / "x")))
    stream.write_text("---\n# Source: c/templates/t.yaml\nkind: ConfigMap\n"
                      * MAX_DOCUMENTS, encoding="utf-8")  # at the bound: read
    [(name, _)] = _split_helm(str(stream), "c", str(tmp_path / "y"))
    assert name == os.path.join("c", "templates", "t.yaml")


SECRET = "kw-test-secret-3f9a1c"


def test_a_link_leaving_the_chart_is_refused_and_no_secret_reaches_a_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`files/env -> /proc/self/environ` and `.Files.Get` put every environment variable
    (CI tokens) into a pod name, the text finding and the SARIF."""
    require("helm_python")
    without_helm_binary(monkeypatch)
    monkeypatch.setenv("KW_CI_TOKEN", SECRET)
    chart = _chart(tmp_path / "chart", {"pod.yaml": HOST_NETWORK_POD.replace(
        "name: victim", 'name: {{ .Files.Get "files/env" | quote }}')})
    (chart / "files").mkdir()
    (chart / "files" / "env").symlink_to("/proc/self/environ")
    for output in ("text", "sarif"):
        status, out, err = run(capsys, "check", "-o", output, str(chart))
        assert status == 2
        assert SECRET not in out and SECRET not in err
        assert errors(err) == [
            f"kubelet-winnet: error: {chart / 'files' / 'env'}: a symbolic link to "
            f"/proc/self/environ, outside the chart {chart}; Helm would read that file into "
            "the render, so the chart is not rendered (put a copy of the file inside the "
            "chart)"]
    (chart / "files" / "env").unlink()
    (chart / "files" / "env").symlink_to(chart / "templates" / "pod.yaml")  # inside: read
    status, _, err = run(capsys, "check", "-o", "text", str(chart))
    assert (status, errors(err)) == (1, [])


def test_renderers_run_without_the_callers_environment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KW_CI_TOKEN", SECRET)
    chart = _chart(tmp_path / "chart", {})
    # the pod's name is what the renderer saw: the token, if it had it
    _fake_helm(tmp_path, monkeypatch, "printf -- '---\\n# Source: chart/templates/p.yaml\\n"
               "kind: Pod\\nmetadata: {name: \"x%s\"}\\nspec: {hostNetwork: true, "
               "nodeSelector: {kubernetes.io/os: windows}, containers: [{name: c}]}\\n' "
               '"$KW_CI_TOKEN"')
    status, out, err = run(capsys, "check", "-o", "sarif", str(chart))
    assert status == 1, err
    assert SECRET not in out
    [result] = json.loads(out)["runs"][0]["results"]
    assert "Pod/x:" in result["message"]["text"]


def test_a_kustomization_reading_a_file_outside_it_is_refused_in_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kustomize's load restrictor refuses a file whose links leave the kustomization's
    root ("security; file ... is not in or below ..."); said as a sentence."""
    require_tool("kubectl", KUBECTL_INSTALL)
    monkeypatch.setenv("KW_CI_TOKEN", SECRET)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "env").symlink_to("/proc/self/environ")
    (overlay / "kustomization.yaml").write_text(
        "configMapGenerator:\n- name: x\n  files:\n  - env\n", encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "sarif", str(overlay))
    assert status == 2
    assert SECRET not in out and SECRET not in err
    assert errors(err) == [
        f"kubelet-winnet: error: {overlay / 'kustomization.yaml'}: kubectl kustomize "
        f"{overlay} refused to read {overlay / 'env'}: with its links followed, that file "
        f"lies outside the kustomization's directory {overlay}, and kustomize reads only "
        "files inside it"]


# --- the renderer's process group and the run's signals -----------------------------------


def _gone(pid: int, wait: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for its reaper counts)."""
    import time

    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_render_timeout_kills_the_renderers_helpers_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--render-timeout 1` returned after 25 s when a helper of the renderer kept its
    stdout open: only the direct child was killed."""
    import time

    pid_file = tmp_path / "helper.pid"
    _fake_helm(tmp_path, monkeypatch, f"sleep 300 & echo $! > {pid_file}; exit 0")
    started = time.monotonic()
    status, _, err = run(capsys, "check", "--render-timeout", "1", str(CHART))
    took = time.monotonic() - started
    assert status == 2
    assert errors(err) == [f"kubelet-winnet: error: {CHART / 'Chart.yaml'}: helm template "
                           f"{CHART} did not finish in 1 seconds (raise --render-timeout)"]
    assert _gone(int(pid_file.read_text()))
    assert took < 60, took  # the helper sleeps 300 s: waiting for it would be a hang


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, /proc")
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_render_leaves_nothing_in_tmpdir(
    tmp_path: Path, signal_name: str,
) -> None:
    """A run ended by SIGTERM or SIGHUP while its renderer ran left the rendered output
    (a rendered Secret's value among it) in $TMPDIR."""
    import signal
    import time

    tools = tmp_path / "bin"
    tools.mkdir()
    started = tmp_path / "started"
    pid_file = tmp_path / "helm.pid"
    (tools / "helm").write_text(
        "#!/bin/sh\nprintf -- '---\\n# Source: c/templates/s.yaml\\nkind: Secret\\n"
        f"stringData: {{token: {SECRET}}}\\n'\necho $$ > {pid_file}\ntouch {started}\n"
        "exec sleep 300\n", encoding="utf-8")
    (tools / "helm").chmod(0o755)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
           "TMPDIR": str(tmpdir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "kubelet_winnet.cli", "check", str(CHART)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 60
        while not started.exists() and time.monotonic() < end and child.poll() is None:
            time.sleep(0.05)
        assert started.exists(), child.communicate(timeout=5)
        # the render's directory is there while it runs (its output file, soon after)
        assert [path.name[:22] for path in tmpdir.iterdir()] == ["kubelet-winnet-render-"]
        child.send_signal(getattr(signal, signal_name))
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -getattr(signal, signal_name), err  # ended by it, as before
    assert b"Traceback" not in err
    assert list(tmpdir.iterdir()) == []
    assert _gone(int(pid_file.read_text()))


# --- where the chart search stops ---------------------------------------------------------


def _planted(shared: Path) -> Path:
    """A chart in ``shared`` whose template renders nothing a check would flag."""
    _chart(shared, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
    return shared / "Chart.yaml"


def test_a_chart_above_the_repository_root_does_not_capture_its_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Chart.yaml in a parent made `check pod.yaml` render that chart instead: exit 0
    and a false "no Kubernetes objects in pod.yaml". The search stops where git's (and
    the settings file's) does: at the directory holding .git, at a file system
    boundary."""
    shared = tmp_path / "shared"
    _planted(shared)
    repo = shared / "repo"
    (repo / ".git").mkdir(parents=True)
    pod = repo / "pod.yaml"
    pod.write_text(HOST_NETWORK_POD, encoding="utf-8")
    assert render_root(str(pod)) is None
    status, out, err = run(capsys, "check", "-o", "text", str(pod))
    assert (status, out.splitlines(), errors(err)) == (1, [_victim_finding(pod)], [])
    assert "no Kubernetes objects" not in err
    # a parent on another file system (simulated: repo is a mount point)
    (repo / ".git").rmdir()
    from kubelet_winnet.sources.manifests import paths

    real = paths._device
    monkeypatch.setattr(paths, "_device", lambda path: -1 if path == str(repo) else real(path))
    assert render_root(str(pod)) is None
    monkeypatch.setattr(paths, "_device", real)
    # no boundary between them: the chart above stands for the file, as before
    root = render_root(str(pod))
    assert root is not None and (root.kind, root.path) == ("helm", str(shared))


def test_a_chart_of_another_user_does_not_capture_files_below_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Simulated owner: the planted Chart.yaml's lstat says another uid."""
    shared = tmp_path / "shared"
    planted = _planted(shared)
    victim = shared / "victim"
    victim.mkdir()
    pod = victim / "pod.yaml"
    pod.write_text(HOST_NETWORK_POD, encoding="utf-8")
    other = 2_000_000_007  # no user of the passwd file: named by its uid
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        status = real_lstat(path, *args, **kwargs)
        if os.fspath(path) != str(planted):
            return status
        return os.stat_result((*status[:4], other, *status[5:]))

    monkeypatch.setattr(os, "lstat", lstat)
    status, out, err = run(capsys, "check", "-o", "text", str(pod))
    assert (status, out.splitlines(), errors(err)) == (1, [_victim_finding(pod)], [])
    assert f"kubelet-winnet: note: {planted}: not rendered: it belongs to uid {other}, not " \
        "to you, so the files below it are read as they are (another user could have " \
        "planted it); a chart must be yours to stand for its files" in err.splitlines()


@pytest.mark.skipif(os.name != "posix" or not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="chown to another user needs root (CI runs as root)")
def test_a_planted_chart_is_read_around_for_real_as_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """The attack as reported: nobody's Chart.yaml in a world-writable parent."""
    shared = tmp_path / "x"
    planted = _planted(shared)
    shared.chmod(0o1777)
    os.chown(planted, 65534, 65534)
    victim = shared / "victim"
    victim.mkdir()
    pod = victim / "pod.yaml"
    pod.write_text(HOST_NETWORK_POD, encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "text", str(pod))
    assert (status, out.splitlines(), errors(err)) == (1, [_victim_finding(pod)], [])
    assert f"kubelet-winnet: note: {planted}: not rendered: it belongs to " in err
    assert "(uid 65534), not to you" in err
