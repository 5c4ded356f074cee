"""``cli/notes.py``: every command that reads manifests (check, translate, explain) says so
when it was pointed at a Helm template, a kustomization or files without Kubernetes
objects, instead of passing quietly with exit 0 (a CI step aimed at the wrong
directory must not go green unnoticed)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from kubelet_winnet.cli import main
from tests.strategies import HELM_TEMPLATE, WINDOWS_POD, run_main

# check fails a run in which nothing held manifests (tests/cli/test_check.py); these
# tests are about the notes, so check is told an empty run is expected.
ALLOW_EMPTY = {"check": ["--allow-empty"]}


def _inputs(tmp_path: Path) -> tuple[Path, Path, Path, Path, Path]:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    template = chart / "templates" / "pod.yaml"
    template.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n",
                        encoding="utf-8")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text("resources:\n- deployment.yaml\n", encoding="utf-8")
    values = tmp_path / "values.yaml"
    values.write_text("replicaCount: 1\n", encoding="utf-8")
    return chart, template, overlay, kustomization, values


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_templates_kustomizations_and_empty_paths_get_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    chart, template, overlay, kustomization, values = _inputs(tmp_path)
    status = main([command, "--no-render", *ALLOW_EMPTY.get(command, []), str(chart),
                   str(overlay), str(values)])
    out, err = capsys.readouterr()
    assert (status, out.strip("[]\n")) == (0, "")  # nothing to print, nothing wrong
    lines = err.splitlines()
    assert f"kubelet-winnet: note: {template}:4: a Helm template ({{{{ ... }}}}), not a " \
        f"manifest: check what it renders with helm template CHART | kubelet-winnet " \
        f"{command} -" in lines
    assert f"kubelet-winnet: note: {kustomization} is a kustomization: check what it builds " \
        f"with kubectl kustomize {overlay} | kubelet-winnet {command} -" in lines
    assert f"kubelet-winnet: note: no Kubernetes objects in {values}" in lines
    assert "kubelet-winnet: error" not in err  # no YAML-parser error for the template


@pytest.mark.parametrize("command", ["translate", "explain"])
def test_quiet_silences_the_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    _, _, overlay, _, values = _inputs(tmp_path)
    assert main([command, "-q", "--no-render", str(overlay), str(values)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_every_bad_input_of_a_file_that_is_no_template_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """Only a Helm template's errors are folded into its one note; a plain file with
    three bad items gets three errors, each in document 1 (the List), and no note that
    the path holds no objects."""
    items = [
        '{\n    "kind": "Pod",\n    "a": 1,\n    "a": 2\n}',
        '{\n    "kind": "Pod",\n    "spec": {\n        "hostNetwork": "yes"\n    }\n}',
        '{\n    "kind": "Pod",\n    "x": 1e999\n}',
    ]
    body = ",\n".join(items)
    path = tmp_path / "bad.json"
    path.write_text('{\n"kind": "List",\n"items": [\n' + body + "\n]\n}\n", encoding="utf-8")
    status = main([command, str(path)])
    _, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("kubelet-winnet: error:")]
    assert status == 2
    # Lines: the repeated key (7), the field (12), the item (15).
    assert errors == [
        f'kubelet-winnet: error: {path}:7: document 1: items[0]: duplicate key "a"',
        f'kubelet-winnet: error: {path}:12: document 1: spec.hostNetwork: expected a '
        'boolean, got string "yes"',
        f'kubelet-winnet: error: {path}:15: document 1: items[2]: number "1e999" is out of '
        "range",
    ]
    assert "no Kubernetes objects" not in err and "no objects" not in err


# --- kinds that hold no pod -----------------------------------------------------------------

KINDS = """\
apiVersion: apps/v1
kind: Deploymnet
metadata: {name: web}
spec:
  template:
    spec:
      containers: [{name: c, image: i}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary}
spec:
  template:
    spec:
      containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: pod
metadata: {name: p}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: batch/v1
kind: CronJobs
metadata: {name: nightly}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_a_misspelt_kind_is_named_with_the_kind_it_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """A kind that holds no pod is skipped (issue: `kind: Deploymnet` gave "0 pods checked",
    exit 0, nothing else); one a typo or a case away from Pod or a built-in workload gets a
    note naming the kind meant."""
    path = tmp_path / "kinds.yaml"
    path.write_text(KINDS, encoding="utf-8")
    lines = KINDS.splitlines()
    main([command, str(path)])
    _, err = capsys.readouterr()

    def at(kind: str) -> str:
        return f"{path}:{lines.index(f'kind: {kind}')}"  # the document's first line

    notes = [line for line in err.splitlines() if "no kind that holds a pod" in line]
    assert notes == [
        f"kubelet-winnet: note: {at('Deploymnet')}: kind Deploymnet is no kind that holds a "
        "pod, so it was not checked; did you mean Deployment?",
        f"kubelet-winnet: note: {at('pod')}: kind pod is no kind that holds a pod, so it was "
        "not checked; did you mean Pod?",
        f"kubelet-winnet: note: {at('CronJobs')}: kind CronJobs is no kind that holds a pod, "
        "so it was not checked; did you mean CronJob?",
    ]
    # Node is two edits from Pod but a kind of its own; Rollout is said under -v only.
    assert "Node" not in err and "Rollout" not in err and "ConfigMap" not in err


def test_under_v_a_custom_kind_with_a_pod_template_is_said_to_be_unchecked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(KINDS, encoding="utf-8")
    status = main(["check", str(path), "-v"])
    _, err = capsys.readouterr()
    assert status == 0
    line = KINDS.splitlines().index("kind: Rollout")
    assert (
        f"kubelet-winnet: note: {path}:{line}: Rollout/canary has a pod template "
        "(spec.template.spec) but was not checked: it is not a built-in kind, and only Pods "
        "and the built-in workloads are read"
    ) in err.splitlines()
    assert err.count("has a pod template") == 1  # not the Deploymnet: its note says more
    main(["check", str(path), "-q"])
    assert capsys.readouterr().err == ""
# --- files without objects ------------------------------------------------------------

EMPTY_FILES = {"empty.yaml": "", "comment.yaml": "# nothing here yet\n",
               "dashes.yaml": "---\n---\n", "blank.yml": "\n\n  \n"}


@pytest.mark.parametrize("fail_on", ["never", "warning"])
def test_empty_files_in_a_directory_are_skipped_not_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fail_on: str
) -> None:
    """kubectl apply -f DIR and kube-linter skip empty documents: a directory with a
    placeholder file is no input error (exit 2 would fail even --fail-on never)."""
    for name, text in EMPTY_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(WINDOWS_POD, encoding="utf-8")
    status, out, err = run_main(capsys, "check", str(tmp_path), "--fail-on", fail_on)
    assert status == 0
    assert out == ""
    assert err.splitlines() == [
        "kubelet-winnet: 1 pod in 5 files checked: 0 errors, 0 warnings, 0 info, 0 ignored "
        "by annotation; 0 Linux-targeted and 0 untargeted pods skipped; 0 input errors"
    ]


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
@pytest.mark.parametrize("name", sorted(EMPTY_FILES))
def test_a_file_without_objects_gets_a_note_and_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str
) -> None:
    path = tmp_path / name
    path.write_text(EMPTY_FILES[name], encoding="utf-8")
    status, _, err = run_main(capsys, command, *ALLOW_EMPTY.get(command, []), str(path))
    assert status == 0
    assert "kubelet-winnet: error:" not in err
    assert f"kubelet-winnet: note: no Kubernetes objects in {path}\n" in err


@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_a_pod_without_api_version_is_not_said_to_be_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """A Pod the command read and acted on is an object of the file, apiVersion or not:
    no "no Kubernetes objects" note beside its output."""
    path = tmp_path / "pod.json"
    path.write_text('{"kind": "Pod", "metadata": {"name": "web"}, "spec": '
                    '{"nodeSelector": {"kubernetes.io/os": "windows"}, '
                    '"containers": [{"name": "c", "image": "i"}]}}', encoding="utf-8")
    _, out, err = run_main(capsys, command, str(path))
    acted = "1 pod in 1 file checked" if command == "check" else "Pod/web"
    assert acted in out + err
    assert "no Kubernetes objects" not in err


# --- a Helm template on stdin gets the same note as from a file ------------------------



@pytest.mark.parametrize("command", ["check", "translate", "explain"])
def test_helm_template_on_stdin_is_noted_like_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text(HELM_TEMPLATE, encoding="utf-8")
    note = ("a Helm template ({{ ... }}), not a manifest: check what it renders with "
            f"helm template CHART | kubelet-winnet {command} -")
    status, _, err = run_main(capsys, command, *ALLOW_EMPTY.get(command, []), str(path))
    assert (status, err.splitlines()[0]) == (0, f"kubelet-winnet: note: {path}:4: {note}")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HELM_TEMPLATE.encode())))
    status, _, err = run_main(capsys, command, *ALLOW_EMPTY.get(command, []), "-")
    assert (status, err.splitlines()[0]) == (0, f"kubelet-winnet: note: <stdin>:4: {note}")
    assert "kubelet-winnet: error:" not in err
