"""``sources/charts/origins.py``: a rendered object's findings name the file and line a person
edits,
and its ignore comments are read there. A chart is rendered with Helm's own engine (the
``helm-python-sdk`` package of the ``ci`` extra), a kustomization with ``kubectl
kustomize``; both skip with the reason outside CI, as tests/sources/charts/test_render.py does.

Every expected line is found in the fixture's own text (the line that writes the field),
never taken from a run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.sources.charts.test_render import KUBECTL_INSTALL, line_of, without_helm_binary
from tests.strategies import REPO_ROOT, require, require_tool, run_main

SCHEMA = json.loads((REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(
    encoding="utf-8"))
HOST_NETWORK = ("hostNetwork: true is ignored: the pod gets its own network namespace; "
                "for the node's network make it HostProcess.")

CHART_YAML = "apiVersion: v2\nname: win\nversion: 1.0.0\n"
HELPERS = """\
{{- define "win.labels" -}}
app: win
tier: {{ .part }}
team: platform
{{- end }}
"""
VALUES = """\
enabled: true
hostNetwork: true
ports:
- containerPort: 80
  hostPort: 8080
"""
# The field's line moves: a `{{- if }}` above it, a multi-line include whose output is
# three lines, one action written over three lines of the template.
SHIFTED = """\
{{- if .Values.enabled }}
# A Windows agent.
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .Release.Name }}-win
  labels:
    {{- include "win.labels" (dict
        "top" .
        "part" "agent") | nindent 4 }}
spec:
  selector:
    matchLabels:
      app: win
  template:
    metadata:
      labels:
        {{- include "win.labels" (dict "part" "agent") | nindent 8 }}
    spec:
      nodeSelector:
        kubernetes.io/os: windows
      hostNetwork: {{ .Values.hostNetwork }}
      containers:
      - name: agent
        image: example.com/win-agent:1.0
        ports:
        {{- toYaml .Values.ports | nindent 8 }}
{{- end }}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_main(capsys, "check", *argv)


@pytest.fixture(autouse=True)
def _in_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in its own repository, its paths relative as a user's CI gives them."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)


def chart(root: Path, template: str, values: str = VALUES, name: str = "chart") -> Path:
    directory = root / name
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(CHART_YAML, encoding="utf-8")
    (directory / "values.yaml").write_text(values, encoding="utf-8")
    (directory / "templates" / "_helpers.tpl").write_text(HELPERS, encoding="utf-8")
    (directory / "templates" / "ds.yaml").write_text(template, encoding="utf-8")
    return directory


def helm_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    require("helm_python")
    without_helm_binary(monkeypatch)


def sarif(out: str) -> list[dict[str, Any]]:
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    results: list[dict[str, Any]] = log["runs"][0]["results"]
    return results


def located(result: dict[str, Any]) -> tuple[str, int]:
    physical = result["locations"][0]["physicalLocation"]
    return physical["artifactLocation"]["uri"], physical["region"]["startLine"]


# --- Helm templates ------------------------------------------------------------------------


def test_a_template_finding_names_the_templates_own_line_of_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The line the template writes hostNetwork on, though the `{{- if }}` and the
    includes above it move it in the rendered text; a hostPort that `toYaml` writes is
    the line of that action."""
    helm_engine(monkeypatch)
    chart(tmp_path, SHIFTED)
    template = "chart/templates/ds.yaml"
    host_network = line_of(SHIFTED, "hostNetwork: {{")
    host_port = line_of(SHIFTED, "toYaml .Values.ports")
    status, out, err = run(capsys, "chart")
    assert status == 1, err
    assert out.splitlines()[0] == (
        f"{template}:{host_network}: warning host-network-ignored: "
        f"DaemonSet/release-name-win: {HOST_NETWORK} [spec.template.spec.hostNetwork]")
    assert out.splitlines()[1].startswith(f"{template}:{host_port}: error host-port-mismatch")
    status, out, _ = run(capsys, "chart", "-o", "sarif")
    assert status == 1
    assert [(r["ruleId"], *located(r)) for r in sarif(out)] == [
        ("host-network-ignored", template, host_network),
        ("host-port-mismatch", template, host_port)]


def test_a_template_written_with_bare_cr_breaks_is_placed_at_the_line_editors_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A template saved with classic Mac line breaks (CR) was one line to the alignment,
    which split at LF: every finding fell back to the rendered line. Editors break at CR."""
    helm_engine(monkeypatch)
    chart(tmp_path, SHIFTED.replace("\n", "\r"))
    host_network = line_of(SHIFTED, "hostNetwork: {{")  # the same line in either form
    status, out, err = run(capsys, "chart", "-o", "json")
    assert status == 1, err
    [finding] = [f for f in json.loads(out)["findings"]
                 if f["rule"] == "host-network-ignored"]
    assert (finding["file"], finding["line"]) == ("chart/templates/ds.yaml", host_network)
    assert not finding.get("remark"), finding


def test_a_field_that_several_actions_may_write_names_the_objects_first_line_saying_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    helm_engine(monkeypatch)
    template = SHIFTED.replace(
        "      hostNetwork: {{ .Values.hostNetwork }}\n",
        "      {{- toYaml .Values.network | nindent 6 }}\n"
        "      {{- toYaml .Values.dns | nindent 6 }}\n")
    values = VALUES + "network:\n  hostNetwork: true\ndns:\n  dnsPolicy: Default\n"
    chart(tmp_path, template, values)
    first = line_of(template, "apiVersion: apps/v1")
    status, out, _ = run(capsys, "chart", "-o", "json")
    assert status == 1
    [finding] = [f for f in json.loads(out)["findings"]
                 if f["rule"] == "host-network-ignored"]
    assert (finding["file"], finding["line"]) == ("chart/templates/ds.yaml", first)
    assert finding["remark"] == (
        "the template writes spec.template.spec.hostNetwork through its actions, not on a "
        "line of its own, so the line is the object's first in the template")
    status, out, _ = run(capsys, "chart")
    assert f"[spec.template.spec.hostNetwork] ({finding['remark']})" in out


def test_an_ignore_comment_in_a_template_silences_its_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Helm keeps a template's comments in what it renders: the comment on the field's
    line, or on the object's kind: line, silences the finding; a misspelt one is a note
    naming the template's line."""
    helm_engine(monkeypatch)
    beside = SHIFTED.replace(
        "hostNetwork: {{ .Values.hostNetwork }}",
        "hostNetwork: {{ .Values.hostNetwork }}  # kubelet-winnet:ignore "
        "host-network-ignored the agent reads the node's interfaces")
    chart(tmp_path, beside, name="beside")
    status, out, err = run(capsys, "beside", "-o", "sarif")
    assert status == 1  # the hostPort error stays
    results = {r["ruleId"]: r for r in sarif(out)}
    assert results["host-network-ignored"]["suppressions"][0]["justification"] == \
        "the agent reads the node's interfaces"
    assert "suppressions" not in results["host-port-mismatch"]
    on_kind = SHIFTED.replace(
        "kind: DaemonSet", "kind: DaemonSet  # kubelet-winnet:ignore host-netwrk-ignored x")
    chart(tmp_path, on_kind, name="typo")
    status, out, err = run(capsys, "typo")
    assert "host-network-ignored" in out
    assert (f"kubelet-winnet: note: typo/templates/ds.yaml:{line_of(on_kind, 'netwrk')}: "
            "# kubelet-winnet:ignore host-netwrk-ignored names no rule, so it silences "
            "nothing (did you mean host-network-ignored?)") in err.splitlines()


def test_a_baseline_run_over_a_chart_says_nothing_of_its_other_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chart.yaml and values.yaml are the chart's, not empty inputs: no "no Kubernetes
    objects" note on stderr or in SARIF, when the baseline is written or used."""
    helm_engine(monkeypatch)
    chart(tmp_path, SHIFTED)
    status, _, err = run(capsys, "chart", "--baseline", "base.json", "--create-baseline")
    assert status == 0
    assert "no Kubernetes objects" not in err
    status, out, err = run(capsys, "chart", "--baseline", "base.json", "-o", "sarif")
    assert status == 0
    assert "no Kubernetes objects" not in err
    notes = json.loads(out)["runs"][0]["invocations"][0].get("toolExecutionNotifications", [])
    assert notes == []
    assert len(sarif(out)) == 2  # both findings, accepted


# --- kustomizations ------------------------------------------------------------------------

RESOURCE = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeSelector:
        kubernetes.io/os: windows
      containers:
      - name: agent
        image: example.com/win-agent:1.0
"""
PATCH = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  template:
    spec:
      hostNetwork: true
"""
JSON6902 = """\
- op: add
  path: /spec/template/spec/hostNetwork
  value: true
"""


def kustomization(root: Path, patch: str, entry: str) -> Path:
    directory = root / "overlay"
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        f"namePrefix: prod-\nnamespace: win\nresources:\n- ds.yaml\npatches:\n{entry}",
        encoding="utf-8")
    (directory / "ds.yaml").write_text(RESOURCE, encoding="utf-8")
    (directory / "hostnet.yaml").write_text(patch, encoding="utf-8")
    return directory


@pytest.mark.parametrize(("patch", "entry"), [
    (PATCH, "- path: hostnet.yaml\n"),
    (JSON6902, "- path: hostnet.yaml\n  target:\n    kind: DaemonSet\n    name: agent\n"),
], ids=["strategic-merge", "json6902"])
def test_a_kustomize_finding_names_its_resource_file_and_the_patch_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, patch: str, entry: str,
) -> None:
    """The built DaemonSet (prefixed, in its namespace) is found in ds.yaml; hostNetwork,
    which ds.yaml does not write, is placed at its nearest line there (the pod spec) and
    the patch that sets it is named; neither file is read again as it is."""
    require_tool("kubectl", KUBECTL_INSTALL)
    kustomization(tmp_path, patch, entry)
    spec = line_of(RESOURCE, "    spec:")
    set_at = line_of(patch, "hostNetwork")
    said = f"set by the patch overlay/hostnet.yaml:{set_at}"
    status, out, err = run(capsys, "overlay")
    assert (status, out.splitlines()) == (1, [
        f"overlay/ds.yaml:{spec}: warning host-network-ignored: DaemonSet/win/prod-agent: "
        f"{HOST_NETWORK} [spec.template.spec.hostNetwork] ({said})"]), err
    status, out, _ = run(capsys, "overlay", "-o", "sarif")
    [result] = sarif(out)
    assert located(result) == ("overlay/ds.yaml", spec)
    assert result["relatedLocations"] == [{
        "id": 0, "message": {"text": said}, "physicalLocation": {
            "artifactLocation": {"uri": "overlay/hostnet.yaml"},
            "region": {"startLine": set_at}}}]


def test_a_patch_line_after_a_break_only_yaml_reads_is_the_line_editors_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A LINE SEPARATOR in a patch's comment is a line break to libyaml, whose line the
    patch's place was: one past the line an editor (and code scanning) shows."""
    require_tool("kubectl", KUBECTL_INSTALL)
    patch = PATCH.replace("spec:\n", "spec:\n  # set by the platform team\u2028# for now\n", 1)
    kustomization(tmp_path, patch, "- path: hostnet.yaml\n")
    # editors' lines: LF only in this text (str.splitlines would also split at U+2028)
    set_at = next(n for n, line in enumerate(patch.split("\n"), 1) if "hostNetwork" in line)
    status, out, err = run(capsys, "overlay", "-o", "json")
    assert status == 1, err
    [finding] = [f for f in json.loads(out)["findings"]
                 if f["rule"] == "host-network-ignored"]
    assert finding["remark"] == f"set by the patch overlay/hostnet.yaml:{set_at}", err


def test_a_patch_of_a_component_is_named_on_its_parents_resource(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """kustomize applies a Component's patches to the resources of the kustomization that
    names it: the finding lies in the parent's resource file and names the component's
    patch."""
    require_tool("kubectl", KUBECTL_INSTALL)
    overlay = tmp_path / "overlay"
    component = tmp_path / "hostnet"
    overlay.mkdir()
    component.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n- ds.yaml\ncomponents:\n- ../hostnet\n", encoding="utf-8")
    (overlay / "ds.yaml").write_text(RESOURCE, encoding="utf-8")
    (component / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
        "patches:\n- path: hostnet.yaml\n", encoding="utf-8")
    (component / "hostnet.yaml").write_text(PATCH, encoding="utf-8")
    said = f"set by the patch hostnet/hostnet.yaml:{line_of(PATCH, 'hostNetwork')}"
    status, out, err = run(capsys, "overlay")
    assert (status, out.splitlines()) == (1, [
        f"overlay/ds.yaml:{line_of(RESOURCE, '    spec:')}: warning host-network-ignored: "
        f"DaemonSet/agent: {HOST_NETWORK} [spec.template.spec.hostNetwork] ({said})"]), err


def test_an_ignore_comment_in_a_kustomize_resource_file_silences_the_built_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """kustomize drops comments from what it builds: they are read in the resource file."""
    require_tool("kubectl", KUBECTL_INSTALL)
    directory = kustomization(tmp_path, PATCH, "- path: hostnet.yaml\n")
    (directory / "ds.yaml").write_text(RESOURCE.replace(
        "kind: DaemonSet", "kind: DaemonSet  # kubelet-winnet:ignore host-network-ignored "
        "the agent needs the node's network"), encoding="utf-8")
    status, out, err = run(capsys, "overlay", "-o", "json")
    assert status == 0, err
    report = json.loads(out)
    assert (report["findings"], report["summary"]["ignoredByComment"]) == ([], 1)


# --- the alignment's limits ------------------------------------------------------------------


def test_a_template_that_is_not_a_file_keeps_the_rendered_line_saying_so(
    tmp_path: Path,
) -> None:
    """A packaged subchart (charts/db-1.0.tgz) names templates that are no file here."""
    from kubelet_winnet.sources.charts.origins import HelmTemplate

    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("apiVersion: v1\nkind: Pod\nspec:\n  hostNetwork: true\n")
    template = HelmTemplate(str(tmp_path / "charts" / "db" / "templates" / "pod.yaml"),
                            str(rendered), 1 << 20)
    place = template.place(("spec", "hostNetwork"), 4)
    assert place.line == 4
    assert place.remark == (f"{tmp_path / 'charts' / 'db' / 'templates' / 'pod.yaml'} "
                            "cannot be read here (a packaged subchart?), so the line is the "
                            "line of its rendered text")


def test_alignment_stops_at_the_runs_budget(tmp_path: Path) -> None:
    """Aligning is quadratic at worst: past the run's budget of lines times lines, a
    finding keeps the rendered line, saying so, instead of taking unbounded time."""
    from kubelet_winnet.sources.charts.origins import HelmTemplate

    text = "{{- if .Values.on }}\n" + "".join(
        f"key{n}: {{{{ .Values.v{n} }}}}\n" for n in range(100)) + "{{- end }}\n"
    (tmp_path / "t.yaml").write_text(text)
    (tmp_path / "r.yaml").write_text("".join(f"key{n}: {n}\n" for n in range(100)))
    budget = [100 * 100]  # one document's worth
    first = HelmTemplate(str(tmp_path / "t.yaml"), str(tmp_path / "r.yaml"), 1 << 20, budget)
    assert first.place(("key42",), 43).line == line_of(text, "key42:")
    second = HelmTemplate(str(tmp_path / "t.yaml"), str(tmp_path / "r.yaml"), 1 << 20, budget)
    place = second.place(("key42",), 43)
    assert place.line == 43
    assert "could not be matched with the template's lines" in place.remark


def test_a_base_and_its_overlay_in_one_run_report_each_object_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A directory search finds both kustomizations: the overlay's build holds the
    base's objects, so the base is read through it alone, not built again nor read as
    it is."""
    require_tool("kubectl", KUBECTL_INSTALL)
    base, overlay = tmp_path / "deploy" / "base", tmp_path / "deploy" / "overlay"
    base.mkdir(parents=True)
    overlay.mkdir()
    written = RESOURCE.replace("    spec:\n", "    spec:\n      hostNetwork: true\n")
    (base / "ds.yaml").write_text(written, encoding="utf-8")
    (base / "kustomization.yaml").write_text("resources:\n- ds.yaml\n", encoding="utf-8")
    (overlay / "kustomization.yaml").write_text(
        "namePrefix: prod-\nresources:\n- ../base\n", encoding="utf-8")
    status, out, err = run(capsys, "deploy")
    assert (status, out.splitlines()) == (1, [
        f"deploy/base/ds.yaml:{line_of(written, 'hostNetwork')}: warning "
        f"host-network-ignored: DaemonSet/prod-agent: {HOST_NETWORK} "
        "[spec.template.spec.hostNetwork]"]), err


def test_each_rendered_line_finds_the_template_line_that_wrote_it(tmp_path: Path) -> None:
    """Without a renderer: SHIFTED as Helm renders it with VALUES (the `{{- if }}` and
    `{{- include }}` trim the line before them; the include writes three lines, toYaml
    two), each rendered line placed on the template's own."""
    from kubelet_winnet.sources.charts.origins import HelmTemplate

    rendered = (
        "# A Windows agent.\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n"
        "  name: release-name-win\n  labels:\n    app: win\n    tier: agent\n"
        "    team: platform\nspec:\n  selector:\n    matchLabels:\n      app: win\n"
        "  template:\n    metadata:\n      labels:\n        app: win\n        tier: agent\n"
        "        team: platform\n    spec:\n      nodeSelector:\n"
        "        kubernetes.io/os: windows\n      hostNetwork: true\n      containers:\n"
        "      - name: agent\n        image: example.com/win-agent:1.0\n        ports:\n"
        "        - containerPort: 80\n          hostPort: 8080\n")
    (tmp_path / "ds.yaml").write_text(SHIFTED, encoding="utf-8")
    (tmp_path / "out.yaml").write_text("---\n" + rendered, encoding="utf-8")  # a header
    template = HelmTemplate(str(tmp_path / "ds.yaml"), str(tmp_path / "out.yaml"), 1 << 20)

    def placed(whole: str) -> int:  # the rendered line that is ``whole``, after "---"
        return template.place(("x",), rendered.splitlines().index(whole) + 2, 2).line

    def written(whole: str) -> int:
        return SHIFTED.splitlines().index(whole) + 1

    assert placed("      hostNetwork: true") == written(
        "      hostNetwork: {{ .Values.hostNetwork }}")
    assert placed("kind: DaemonSet") == written("kind: DaemonSet")
    assert placed("        image: example.com/win-agent:1.0") == written(
        "        image: example.com/win-agent:1.0")
    # written by an action: the action's first line
    assert placed("    tier: agent") == written('    {{- include "win.labels" (dict')
    assert placed("        team: platform") == written(
        '        {{- include "win.labels" (dict "part" "agent") | nindent 8 }}')
    assert placed("          hostPort: 8080") == written(
        "        {{- toYaml .Values.ports | nindent 8 }}")


def test_a_built_object_is_found_through_its_bases_prefixes_and_an_inline_patch(
    tmp_path: Path,
) -> None:
    """Without kubectl: an overlay over a base, each with a prefix, the overlay setting
    the namespace and patching inline; the object kustomize would build (written here
    by hand) is found in the base's file, and the inline patch named at its entry."""
    from kubelet_winnet.sources.charts.origins import Kustomization
    from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, Document, read_source

    base, overlay = tmp_path / "base", tmp_path / "overlay"
    base.mkdir()
    overlay.mkdir()
    (base / "ds.yaml").write_text(RESOURCE, encoding="utf-8")
    (base / "kustomization.yaml").write_text("namePrefix: base-\nresources:\n- ds.yaml\n")
    settings = ("namePrefix: prod-\nnamespace: win\nresources:\n- ../base\npatches:\n"
                "- target: {kind: DaemonSet, name: agent}\n  patch: |-\n"
                "    - op: add\n      path: /spec/template/spec/hostNetwork\n"
                "      value: true\n")
    (overlay / "kustomization.yaml").write_text(settings)
    built = tmp_path / "built.yaml"
    built.write_text(RESOURCE.replace("  name: agent", "  name: prod-base-agent\n"
                                      "  namespace: win").replace(
        "    spec:\n", "    spec:\n      hostNetwork: true\n"))
    [document] = [d for d in read_source(str(built)) if isinstance(d, Document)]
    build = Kustomization(str(overlay), "kustomization.yaml", DEFAULT_LIMITS)
    found = build.locate(document)
    assert (found.source, found.line) == (str(base / "ds.yaml"), 1)
    field = ("spec", "template", "spec", "hostNetwork")
    place = found.place(field, found.line_of(field))
    entry = line_of(settings, "- target:")
    assert place == type(place)(line_of(RESOURCE, "    spec:"),
                                f"set by the patch {overlay / 'kustomization.yaml'}:{entry}",
                                (str(overlay / "kustomization.yaml"), entry))
    assert build.listed == {str(p) for p in (base / "ds.yaml", base / "kustomization.yaml",
                                             overlay / "kustomization.yaml")}


# --- what is read again is a regular file -----------------------------------------------


def test_a_template_that_is_a_fifo_when_read_again_keeps_the_rendered_line(
        tmp_path: Path) -> None:
    """The template is read again to place a finding; a FIFO in its place waited for a
    writer for ever. It is not read: the line is the rendered one, saying so."""
    import os

    from kubelet_winnet.sources.charts.origins import HelmTemplate
    from tests.strategies import without_waiting_on

    if not hasattr(os, "mkfifo"):
        pytest.skip("POSIX FIFOs")
    template = tmp_path / "ds.yaml"
    os.mkfifo(template)
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("kind: Pod\nspec:\n  hostNetwork: true\n", encoding="utf-8")
    placed = HelmTemplate(str(template), str(rendered), 1 << 20)
    place = without_waiting_on([template], lambda: placed.place(("spec", "hostNetwork"), 3))
    assert place.line == 3
    assert place.remark == (f"{template} cannot be read here (a packaged subchart?), so the "
                            "line is the line of its rendered text")
