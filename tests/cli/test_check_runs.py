"""``check`` runs that must not go green by mistake and reports that must not
break: empty runs, the baseline, ignore comments, SARIF notifications, the
documentation base, and JUnit/SARIF/JSON on any character.

Expected values come from the input and the rules (hostNetwork on a Windows pod that is
not HostProcess: host-network-ignored, a warning; a hostPort that differs from its
containerPort under hostNetwork: host-port-mismatch, an error), never from a run.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.reach import host_network_reach
from kubelet_winnet._lint.report import Notification, Options, report_writer
from kubelet_winnet._lint.rules import Severity
from kubelet_winnet._lint.targeting import Target, pod_object
from tests.strategies import (
    HELM_TEMPLATE,
    REPO_ROOT,
    cli_child,
    error_lines,
    require,
    run_main,
)

SCHEMA = json.loads((REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(
    encoding="utf-8"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_main(capsys, "check", *argv)


def windows_pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"os": {"name": "windows"},
                     "containers": [{"name": "c", "image": "i"}], **spec}}


@pytest.fixture(autouse=True)
def _no_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in its own repository: no settings file of the checkout is found."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)


# --- an empty run is not a pass ----------------------------------------------------------


def test_a_chart_alone_is_exit_2_and_allow_empty_accepts_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A chart alone is not a pass: `check chart/` once gave `0 pods in N files checked` and
    exit 0."""
    templates = tmp_path / "chart" / "templates"
    templates.mkdir(parents=True)
    (templates / "deployment.yaml").write_text(HELM_TEMPLATE, encoding="utf-8")
    (templates / "service.yaml").write_text(HELM_TEMPLATE, encoding="utf-8")
    status, out, err = run(capsys, "chart")
    assert (status, out) == (2, "")
    assert error_lines(err) == [
        "kubelet-winnet: error: nothing was checked: no file of the input (2 files) held "
        "Kubernetes manifests (2 Helm templates or kustomizations left unrendered); an empty "
        "run fails so that CI does not pass unchecked (--allow-empty, or allowEmpty: true in "
        "the settings file, accepts it)"]
    assert run(capsys, "chart", "--allow-empty")[0] == 0
    (tmp_path / ".kubelet-winnet.yaml").write_text("allowEmpty: true\n", encoding="utf-8")
    assert run(capsys, "chart")[0] == 0


def test_yaml_that_is_not_kubernetes_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text("on: push\njobs: {build: {runs-on: ubuntu-latest}}\n", encoding="utf-8")
    status, _, err = run(capsys, str(workflow))
    assert status == 2
    assert "error: nothing was checked: no file of the input (1 file) held Kubernetes " \
        "manifests; an empty run fails" in err


def test_manifests_without_pods_are_a_normal_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A ConfigMap and a Service hold no pod: nothing to find, nothing wrong (pre-commit
    stays green on them)."""
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
         "spec": {"ports": [{"port": 80}]}},
    ]), encoding="utf-8")
    status, out, err = run(capsys, str(path))
    assert (status, out) == (0, "")
    assert ": error: " not in err


def test_an_empty_run_in_sarif_is_not_successful(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "values.yaml").write_text("replicaCount: 1\n", encoding="utf-8")
    status, out, _ = run(capsys, "values.yaml", "-o", "sarif")
    assert status == 2
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    levels = [(n["level"], n["message"]["text"][:20])
              for n in invocation["toolExecutionNotifications"]]
    assert levels == [("note", "no Kubernetes object"), ("error", "nothing was checked:")]


# --- SARIF tells the whole run -------------------------------------------------------------


def test_sarif_carries_notes_and_input_errors_with_their_place(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A skipped Helm template and an unreadable file once reached no
    toolExecutionNotifications, so code scanning never showed a file went unchecked."""
    (tmp_path / "template.yaml").write_text(HELM_TEMPLATE, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: [\n",
                                       encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p", hostNetwork=True)),
                                       encoding="utf-8")
    status, out, err = run(capsys, "template.yaml", "bad.yaml", "pod.yaml", "-o", "sarif")
    assert status == 2
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    places = {(n["level"], n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               n["locations"][0]["physicalLocation"].get("region", {}).get("startLine"))
              for n in notes}
    # The template's first "{{" is on line 4; the parser fails at the end of bad.yaml.
    assert ("note", "template.yaml", 4) in places
    assert any(level == "error" and uri == "bad.yaml" for level, uri, _ in places)
    said = [line.split(": ", 2)[2] for line in err.splitlines()
            if line.startswith(("kubelet-winnet: note: ", "kubelet-winnet: error: "))]
    assert [n["message"]["text"] for n in notes] == said  # every line of stderr, in order
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["host-network-ignored"]


def test_a_settings_error_still_writes_a_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The Action redirects stdout to the SARIF file: a bad settings file must leave a
    report saying why, not an empty file."""
    config = tmp_path / ".kubelet-winnet.yaml"
    config.write_text("failOn: eror\n", encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p")), encoding="utf-8")
    status, out, _ = run(capsys, "pod.yaml", "-o", "sarif")
    assert status == 2
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert note["message"]["text"].startswith(f"configuration {config}:1: failOn:")


@pytest.mark.parametrize("where", ["--feature-gates", "featureGates"])
def test_a_feature_gate_the_kubelet_refuses_still_writes_a_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str,
) -> None:
    """A --feature-gates value the kubelet cannot parse stopped the run with a 0-byte
    SARIF file (the Action would upload nothing and code scanning show no error)."""
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p")), encoding="utf-8")
    argv = ["pod.yaml", "-o", "sarif"]
    if where == "featureGates":
        (tmp_path / ".kubelet-winnet.yaml").write_text("featureGates: WindowsHostNetwork=maybe\n",
                                                       encoding="utf-8")
    else:
        argv += ["--feature-gates", "WindowsHostNetwork=maybe"]
    status, out, err = run(capsys, *argv)
    assert status == 2
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    # the kubelet's own words (component-base featuregate: strconv.ParseBool's error)
    assert note["level"] == "error" and note["message"]["text"].endswith(
        'invalid value of WindowsHostNetwork=maybe, err: strconv.ParseBool: parsing "maybe": '
        "invalid syntax")
    assert error_lines(err) == [f"kubelet-winnet: error: {note['message']['text']}"]


def test_help_uri_only_under_a_configured_documentation_base(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p", hostNetwork=True)),
                                       encoding="utf-8")
    _, out, _ = run(capsys, "pod.yaml", "-o", "json")
    assert "helpUri" not in json.loads(out)["findings"][0]
    _, out, _ = run(capsys, "pod.yaml", "-o", "sarif", "--docs-url", "https://docs.example/r")
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[0] == {**rules[0], "id": "host-network-ignored",
                        "helpUri": "https://docs.example/r/host-network-ignored.md"}
    (tmp_path / ".kubelet-winnet.yaml").write_text(
        "docsUrl: https://docs.example/site/rules/{rule}/\n", encoding="utf-8")
    _, out, _ = run(capsys, "pod.yaml", "-o", "json")
    assert json.loads(out)["findings"][0]["helpUri"] == \
        "https://docs.example/site/rules/host-network-ignored/"


@pytest.mark.parametrize(("url", "why"), [
    ('https://x/"><script>', "'\"' is not allowed in an address (RFC 3986); write it as %22"),
    ("https://x/a<b", "'<' is not allowed in an address (RFC 3986); write it as %3C"),
    ("https://x/r\u00e9gles/", "'\u00e9' is not allowed in an address (RFC 3986); write it as "
     "%C3%A9"),
    ("https://x/100%/", "a '%' must start a percent-encoding such as %20 (RFC 3986)"),
])
def test_a_documentation_base_with_characters_no_uri_holds_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str, why: str
) -> None:
    # RFC 3986 section 2: a URI holds unreserved and reserved characters and %HH only; the
    # base goes into every SARIF helpUri, where a quote would end the attribute in a viewer.
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p")), encoding="utf-8")
    status, out, err = run(capsys, "pod.yaml", "--docs-url", url)
    assert (status, out) == (2, "")
    assert err == f"kubelet-winnet: error: --docs-url {url!r}: not a valid URI: {why}\n"
    config = tmp_path / ".kubelet-winnet.yaml"
    config.write_text(f"docsUrl: {json.dumps(url)}\n", encoding="utf-8")
    status, _, err = run(capsys, "pod.yaml")
    assert status == 2
    assert err == (f"kubelet-winnet: error: configuration {config}:1: docsUrl: "
                   f"not a valid URI: {why}\n")


def test_a_documentation_base_with_percent_encodings_and_the_rule_placeholder_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p", hostNetwork=True)),
                                       encoding="utf-8")
    url = "https://docs.example/r%C3%A8gles/{rule}/"
    status, out, _ = run(capsys, "pod.yaml", "-o", "json", "--docs-url", url)
    assert status == 1
    assert json.loads(out)["findings"][0]["helpUri"] == \
        "https://docs.example/r%C3%A8gles/host-network-ignored/"


@pytest.mark.parametrize("url", ["docs/rules/", "ftp://x/", "https://", "javascript:alert(1)"])
def test_a_documentation_base_that_is_no_address_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(windows_pod("p")), encoding="utf-8")
    status, out, err = run(capsys, "pod.yaml", "--docs-url", url)
    assert (status, out) == (2, "")
    assert err == (f"kubelet-winnet: error: --docs-url {url!r}: expected an absolute http or "
                   "https address, such as https://docs.example/kubelet-winnet/rules/\n")
    config = tmp_path / ".kubelet-winnet.yaml"
    config.write_text(f"docsUrl: {json.dumps(url)}\n", encoding="utf-8")
    status, _, err = run(capsys, "pod.yaml")
    assert status == 2
    assert err.startswith(f"kubelet-winnet: error: configuration {config}:1: docsUrl: expected "
                          "an absolute http or https address")


def test_no_guessed_address_is_left_in_the_package() -> None:
    """Nothing in the project confirms a home address: none is written in the code that
    users' reports or clusters would carry."""
    package = REPO_ROOT / "src" / "kubelet_winnet"
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "github.com/kubelet-winnet" not in text, path


# --- the baseline ----------------------------------------------------------------------------


def _repo(tmp_path: Path) -> Path:
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "a.yaml").write_text(yaml.safe_dump_all([
        windows_pod("old", hostNetwork=True),
        windows_pod("ports", hostNetwork=True, containers=[
            {"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 81}]}]),
    ]), encoding="utf-8")
    return deploy


def test_create_baseline_then_only_new_findings_fail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A baseline accepts today's findings by file, object, rule and field, and only new ones
    fail (as checkov's --create-baseline / --baseline)."""
    deploy = _repo(tmp_path)
    baseline = tmp_path / "winnet.baseline.json"
    assert run(capsys, "deploy")[0] == 1
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")
    assert status == 0
    written = json.loads(baseline.read_text(encoding="utf-8"))
    # Keyed by file (relative to the baseline), object, rule and field: no line numbers.
    assert written == {"failed_checks": [{"file": "deploy/a.yaml", "findings": [
        {"object": {"kind": "Pod", "name": "old"}, "rule": "host-network-ignored",
         "field": "spec.hostNetwork"},
        {"object": {"kind": "Pod", "name": "ports"}, "rule": "host-network-ignored",
         "field": "spec.hostNetwork"},
        {"object": {"kind": "Pod", "name": "ports"}, "rule": "host-port-mismatch",
         "field": "spec.containers[0].ports[0].hostPort"},
    ]}]}
    assert f"note: {baseline}: wrote 3 findings to the baseline" in err
    # Lines move (a comment block on top), the findings stay accepted.
    text = (deploy / "a.yaml").read_text(encoding="utf-8")
    (deploy / "a.yaml").write_text("# moved\n# down\n" + text, encoding="utf-8")
    status, out, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert (status, out) == (0, "")
    assert "3 in the baseline" in err
    # A new finding fails; the accepted ones still do not.
    (deploy / "b.yaml").write_text(yaml.safe_dump(windows_pod("new", hostNetwork=True)),
                                   encoding="utf-8")
    status, out, _ = run(capsys, "deploy", "--baseline", str(baseline), "-o", "json")
    assert status == 1
    report = json.loads(out)
    assert [(f["object"]["name"], f["rule"]) for f in report["findings"]] == [
        ("new", "host-network-ignored")]
    assert report["summary"]["baseline"] == 3


def test_a_baseline_entry_that_no_longer_matches_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    deploy = _repo(tmp_path)
    baseline = tmp_path / "b.json"
    run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")
    (deploy / "a.yaml").write_text(yaml.safe_dump(windows_pod("old", hostNetwork=True)),
                                   encoding="utf-8")  # "ports" is gone
    status, out, err = run(capsys, "deploy", "--baseline", str(baseline), "-o", "sarif")
    assert status == 0
    stale = [line for line in err.splitlines() if "matches no finding" in line]
    assert len(stale) == 2
    assert any(line.startswith(f"kubelet-winnet: note: {baseline}:") and
               "the baseline entry host-port-mismatch on Pod/ports "
               "spec.containers[0].ports[0].hostPort in deploy/a.yaml matches no finding any "
               "more; remove it, or write the baseline again with --create-baseline" in line
               for line in stale)
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    uris = [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes
            if "matches no finding" in n["message"]["text"]]
    assert len(uris) == 2 and all(uri.endswith("/b.json") for uri in uris)
    (suppressed,) = log["runs"][0]["results"]
    assert suppressed["suppressions"][0]["kind"] == "external"
    _, out, _ = run(capsys, "deploy", "--baseline", str(baseline), "-o", "json")
    assert sum("matches no finding" in n["message"]
               for n in json.loads(out)["notifications"]) == 2


def test_the_baseline_file_is_not_read_as_a_manifest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    deploy = _repo(tmp_path)
    baseline = deploy / "baseline.json"
    run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert status == 0
    assert "1 pod" not in err and "2 pods in 1 file checked" in err
    assert "baseline.json" not in err


EMPTY_RUN_TAIL = ("; an empty run fails so that CI does not pass unchecked (--allow-empty, or "
                  "allowEmpty: true in the settings file, accepts it)")


@pytest.mark.parametrize("form", ["text", "json", "sarif", "junit"])
@pytest.mark.parametrize("why", ["the baseline alone", "skip patterns", "both"])
def test_an_input_filtered_down_to_nothing_still_reports_and_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, form: str, why: str,
) -> None:
    """With --baseline (or a skip pattern), an input that filtered down to nothing exited
    0 with no summary, and -o sarif wrote a 0-byte report. It is an empty run: exit 2
    saying what was left out, a summary, a whole report; --allow-empty accepts it."""
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    argv = ["deploy", "-o", form]
    left_out = []
    if why != "the baseline alone":
        (deploy / "vendored.yaml").write_text(
            yaml.safe_dump(windows_pod("v", hostNetwork=True)), encoding="utf-8")
        (tmp_path / ".kubelet-winnet.yaml").write_text('skip: ["deploy/vendored.yaml"]\n',
                                                       encoding="utf-8")
        left_out.append(f"1 file matching a skip pattern of {tmp_path / '.kubelet-winnet.yaml'}")
    if why != "skip patterns":
        baseline = deploy / "baseline.json"
        baseline.write_text('{"failed_checks": []}\n', encoding="utf-8")
        argv += ["--baseline", str(baseline)]
        left_out.append("the baseline file, which is never read as a manifest")
    status, out, err = run(capsys, *argv)
    said = ("nothing was checked: every file of the input was left out ("
            + " and ".join(left_out) + ")")
    assert status == 2
    assert error_lines(err) == [f"kubelet-winnet: error: {said}{EMPTY_RUN_TAIL}"]
    assert err.splitlines()[-1].startswith("kubelet-winnet: 0 pods in 0 files checked: ")
    if form == "sarif":
        log = json.loads(out)
        jsonschema.validate(log, SCHEMA)
        (invocation,) = log["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == [
            said + EMPTY_RUN_TAIL]
    elif form == "json":
        report = json.loads(out)
        assert report["findings"] == []
        assert [n["message"] for n in report["notifications"]] == [said + EMPTY_RUN_TAIL]
    elif form == "junit":
        errors = [e.get("message") for e in ElementTree.fromstring(out).iter("error")]
        assert errors == [said + EMPTY_RUN_TAIL]
    else:
        assert out == ""
    status, out, err = run(capsys, *argv, "--allow-empty")
    assert (status, error_lines(err)) == (0, [])
    assert f"kubelet-winnet: note: every file of the input was left out (" \
        f"{' and '.join(left_out)})" in err.splitlines()
    if form == "sarif":
        jsonschema.validate(json.loads(out), SCHEMA)


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('{"failed_checks": {}}\n', 1, "failed_checks: expected a list of files and their "
     "findings (--create-baseline writes one)"),
    ('{"failed_checks": [\n {"file": "a.yaml", "findings": [\n  {"rule": "x"}]}]}\n', 3,
     'failed_checks[0].findings[0]: expected {"object": {"kind", "namespace", "name"}, '
     '"rule": RULE-ID, "field": PATH} with strings'),
])
def test_a_bad_baseline_is_exit_2_naming_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, line: int, reason: str
) -> None:
    _repo(tmp_path)
    baseline = tmp_path / "b.json"
    baseline.write_text(text, encoding="utf-8")
    status, out, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"kubelet-winnet: error: baseline {baseline}:{line}: {reason}"]
    status, _, err = run(capsys, "deploy", "--baseline", str(tmp_path / "missing.json"))
    assert status == 2 and "cannot read: No such file or directory" in err


def test_a_baseline_over_the_size_bound_is_refused_before_it_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 60 MB baseline took 16.7 s and 967 MB: a baseline larger than 32 MiB (the
    bound --create-baseline also keeps) is one error line, naming its size, and no more
    of it is read."""
    from kubelet_winnet.cli.suppressions import BASELINE_MAX_BYTES

    assert BASELINE_MAX_BYTES == 32 * 1024 * 1024  # the bound the error states
    _repo(tmp_path)
    baseline = tmp_path / "b.json"
    with baseline.open("w", encoding="utf-8") as padded:
        padded.write('{"failed_checks": []}')
        padded.write(" " * BASELINE_MAX_BYTES)  # valid JSON all the same
    size = baseline.stat().st_size
    status, out, err = run(capsys, "deploy", "--baseline", str(baseline), "-o", "sarif")
    assert status == 2
    assert error_lines(err) == [
        f"kubelet-winnet: error: baseline {baseline}: {size:,} bytes, more than the 32 MiB a "
        "baseline may be (it holds at most 100,000 findings); fix or exclude findings, then "
        "write it again with --create-baseline"]
    jsonschema.validate(json.loads(out), SCHEMA)
    # --create-baseline may still replace it: it starts as a baseline does
    status, _, _ = run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")
    assert status == 0
    assert len(json.loads(baseline.read_text(encoding="utf-8"))["failed_checks"][0][
        "findings"]) == 3


@pytest.mark.slow
def test_a_baseline_at_its_bounds_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """The bound for any input, under 10 s and 1 GB, met with room at the
    bound: 100,000 entries as --create-baseline writes them (indented), against the same
    run with a baseline of one entry; a bound on memory and a generous one on time."""
    from kubelet_winnet.cli.suppressions import BASELINE_MAX_BYTES, BASELINE_MAX_FINDINGS

    _repo(tmp_path)
    runs = []
    for count in (1, BASELINE_MAX_FINDINGS):
        baseline = tmp_path / f"b{count}.json"
        entries = [{"object": {"kind": "Deployment", "namespace": f"team-{i // 10}",
                               "name": f"workload-{i}"}, "rule": "host-network-ignored",
                    "field": "spec.template.spec.hostNetwork"} for i in range(count)]
        baseline.write_text(json.dumps({"failed_checks": [
            {"file": f"deploy/app-{i // 10}.yaml", "findings": entries[i:i + 10]}
            for i in range(0, count, 10)]}, indent=2), encoding="utf-8")
        assert baseline.stat().st_size < BASELINE_MAX_BYTES
        runs.append(cli_child(["check", "-q", "deploy", "--baseline", str(baseline)],
                              cwd=tmp_path))
    small, big = runs
    assert (big.status, big.err_lines) == (small.status, small.err_lines) == (1, [])
    assert big.peak_mb < small.peak_mb + 400, (big.peak_mb, small.peak_mb)
    assert big.seconds < 60, big.seconds


def test_a_baseline_fifo_over_the_size_bound_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO has no size to look at: it is read up to the bound, and past it the error
    is the baseline's bound, not --max-bytes (which cannot raise it)."""
    import threading

    from kubelet_winnet.cli import suppressions as check

    monkeypatch.setattr(check, "BASELINE_MAX_BYTES", 1 << 20)
    _repo(tmp_path)
    fifo = tmp_path / "b.json"
    os.mkfifo(fifo)

    def feed() -> None:
        try:
            with fifo.open("w", encoding="utf-8") as out:
                out.write('{"failed_checks": []}' + " " * (2 << 20))
        except BrokenPipeError:  # the reader stopped at the bound
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    status, _, err = run(capsys, "deploy", "--baseline", str(fifo))
    writer.join(10)
    assert status == 2
    assert error_lines(err) == [
        f"kubelet-winnet: error: baseline {fifo}: more than the 1 MiB a baseline may be; fix "
        "or exclude findings, then write it again with --create-baseline"]


def test_a_baseline_over_the_findings_bound_is_refused_on_reading_and_writing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound in findings (100,000; lowered here to 2) holds both ways: a baseline with
    more is refused at the first entry past it, and --create-baseline writes none rather
    than one it would refuse (the earlier version kept the first 1,000,000 silently)."""
    from kubelet_winnet.cli import suppressions as check

    monkeypatch.setattr(check, "BASELINE_MAX_FINDINGS", 2)
    _repo(tmp_path)  # three findings
    baseline = tmp_path / "b.json"
    entries = [{"object": {"kind": "Pod", "name": f"p{i}"}, "rule": "host-network-ignored",
                "field": "spec.hostNetwork"} for i in range(3)]
    text = json.dumps({"failed_checks": [{"file": "deploy/a.yaml", "findings": entries}]},
                      indent=2)
    baseline.write_text(text, encoding="utf-8")
    # the line of the third entry's "{", as json.dumps(indent=2) writes an entry
    third = [n for n, line in enumerate(text.splitlines(), 1) if line == " " * 8 + "{"][2]
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert status == 2
    assert error_lines(err) == [
        f"kubelet-winnet: error: baseline {baseline}:{third}: more than 2 findings, the most a "
        "baseline holds; fix or exclude findings, then write it again with --create-baseline"]
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")
    assert status == 2
    assert error_lines(err) == [
        f"kubelet-winnet: error: baseline {baseline} not written: this run has more findings "
        "to accept than the 2 a baseline holds; fix or exclude findings (rules.exclude, skip) "
        "first"]
    assert baseline.read_text(encoding="utf-8") == text


def test_many_malformed_baseline_entries_are_summarised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _repo(tmp_path)
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({"failed_checks": [
        {"file": "deploy/a.yaml", "findings": [{"rule": 1}] * 25}]}), encoding="utf-8")
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert status == 2
    lines = error_lines(err)
    assert len(lines) == 21
    assert all("expected {\"object\"" in line for line in lines[:20])
    assert lines[20] == (f"kubelet-winnet: error: baseline {baseline}: 5 more entries are "
                         "malformed (the first ones are named above)")


# --- ignore comments -----------------------------------------------------------------------

VENDORED = """\
apiVersion: v1
kind: Pod  # kubelet-winnet:ignore host-port-mismatch vendored; the port is remapped
metadata:
  name: vendored
spec:
  os: {name: windows}
  hostNetwork: true  # kubelet-winnet:ignore host-network-ignored upstream chart, issue 12
  containers:
  - name: c
    image: i
    ports: [{containerPort: 80, hostPort: 81}]
---
# kubelet-winnet:ignore host-network-ignored legacy agent, replaced in Q3
apiVersion: v1
kind: Pod
metadata:
  name: above
spec:
  os: {name: windows}
  hostNetwork: true
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata:
  name: unsilenced
spec:
  os: {name: windows}
  hostNetwork: true  # kubelet-winnet:ignore host-network-ignored
  containers:  # kubelet-winnet:ignore host-netwrk-ignored typo
  - {name: c, image: i}
"""


def test_ignore_comments_silence_like_the_annotation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Beside the field, on the object's kind: line, or on the line above the document's
    first key; a comment without reason or with an unknown rule silences nothing."""
    path = tmp_path / "vendored.yaml"
    path.write_text(VENDORED, encoding="utf-8")
    status, out, err = run(capsys, str(path), "-o", "json")
    assert status == 1
    report = json.loads(out)
    assert [(f["object"]["name"], f["rule"], f["line"]) for f in report["findings"]] == [
        ("unsilenced", "host-network-ignored", 29)]
    assert report["summary"]["ignoredByComment"] == 3
    notes = [line for line in err.splitlines() if ": note: " in line]
    assert notes == [
        f"kubelet-winnet: note: {path}:29: # kubelet-winnet:ignore host-network-ignored gives "
        "no reason, so it silences nothing; write the reason after the rule id",
        f"kubelet-winnet: note: {path}:30: # kubelet-winnet:ignore host-netwrk-ignored names "
        "no rule, so it silences nothing (did you mean host-network-ignored?)",
    ]
    assert "3 ignored by annotation or comment" in err
    status, out, _ = run(capsys, str(path), "-o", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    reasons = sorted(r["suppressions"][0]["justification"] for r in log["runs"][0]["results"]
                     if r.get("suppressions"))
    assert reasons == ["legacy agent, replaced in Q3", "upstream chart, issue 12",
                       "vendored; the port is remapped"]


def test_an_ignore_comment_in_a_utf16_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "wide.yaml"
    path.write_bytes(VENDORED.split("---\n")[0].encode("utf-16"))
    status, out, _ = run(capsys, str(path), "-o", "json")
    assert (status, json.loads(out)["findings"]) == (0, [])


def test_the_ignore_marker_inside_a_string_silences_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """JSON has no comments: one pod's annotation value that reads like the comment, in a
    one-line List, silences no pod. In YAML a block scalar or a quoted value is text too;
    only a real comment counts, for its own object."""
    marker = "# kubelet-winnet:ignore host-network-ignored planted in a value"
    planted = windows_pod("planted", hostNetwork=True)
    planted["metadata"]["annotations"] = {"note": marker}
    listed = tmp_path / "pods.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        planted, windows_pod("other", hostNetwork=True)]}, separators=(",", ":")),
        encoding="utf-8")
    status, out, _ = run(capsys, str(listed), "-o", "json")
    assert status == 1
    assert sorted(f["object"]["name"] for f in json.loads(out)["findings"]) == [
        "other", "planted"]
    text = tmp_path / "text.yaml"
    text.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: block\n  annotations:\n"
        f"    note: |\n      {marker}\n    quoted: 'x {marker}'\n"
        "spec:\n  os: {name: windows}\n  hostNetwork: true\n"
        "  containers: [{name: c, image: i}]\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: commented}\n"
        "spec:\n  os: {name: windows}\n"
        "  hostNetwork: true  # kubelet-winnet:ignore host-network-ignored a real comment\n"
        "  containers: [{name: c, image: i}]\n", encoding="utf-8")
    status, out, _ = run(capsys, str(text), "-o", "json")
    report = json.loads(out)
    assert status == 1
    assert [f["object"]["name"] for f in report["findings"]] == ["block"]
    assert report["summary"]["ignoredByComment"] == 1
    # A real comment on a line where two objects start belongs to neither of them.
    flow = tmp_path / "flow.yaml"
    flow.write_text(
        "apiVersion: v1\nkind: List\nitems: ["
        + ", ".join(json.dumps(windows_pod(name, hostNetwork=True)) for name in "ab")
        + "]  # kubelet-winnet:ignore host-network-ignored which pod?\n", encoding="utf-8")
    status, out, err = run(capsys, str(flow), "-o", "json")
    assert status == 1
    assert [f["object"]["name"] for f in json.loads(out)["findings"]] == ["a", "b"]
    assert (f"kubelet-winnet: note: {flow}:3: # kubelet-winnet:ignore host-network-ignored: "
            "more than one object starts on this line, so the comment silences nothing; "
            "write it on a line of its object's own") in err.splitlines()


# --- line breaks ----------------------------------------------------------------------------

# Editors and code scanning end a line at LF, CRLF or a bare CR; YAML 1.1 (libyaml, go-yaml)
# also at NEL, LS and PS, which editors show inside a line.
_EDITOR_BREAK = re.compile("\r\n|\r|\n")


def _editor_lines(text: str, needle: str) -> list[int]:
    """The editors' lines of ``text`` holding ``needle``, counted without the reader."""
    return [n for n, line in enumerate(_EDITOR_BREAK.split(text), 1) if needle in line]


def _two_pods(break_: str, comment: str = "") -> str:
    """Pod/a after "# generated" and 12 breaks of one kind, then Pod/b, whose hostNetwork
    line carries ``comment``; each pod is 11 lines, so Pod/b's comment is 12 LF-lines
    below Pod/a's hostNetwork line."""
    def pod(name: str, extra: str = "") -> str:
        return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels:\n"
                f"    app: {name}\nspec:\n  os: {{name: windows}}\n  hostNetwork: true{extra}\n"
                "  containers:\n  - {name: c, image: i}\n")
    return "# generated" + break_ * 12 + pod("a") + "---\n" + pod("b", comment)


def test_bare_cr_line_breaks_keep_an_ignore_comment_on_its_own_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Twelve bare CRs before Pod/a: the comment on Pod/b's line silences Pod/b, and
    Pod/a is reported at the line an editor shows."""
    text = _two_pods("\r", "  # kubelet-winnet:ignore host-network-ignored vendored agent")
    path = tmp_path / "cr.yaml"
    path.write_bytes(text.encode("utf-8"))
    status, out, _ = run(capsys, str(path), "-o", "json")
    report = json.loads(out)
    assert status == 1
    assert [(f["object"]["name"], f["line"]) for f in report["findings"]] == [
        ("a", _editor_lines(text, "hostNetwork")[0])]
    assert report["summary"]["ignoredByComment"] == 1


_BREAKS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r", "NEL": "\x85", "LS": "\u2028",
           "PS": "\u2029"}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
@pytest.mark.parametrize("kind", list(_BREAKS))
def test_every_report_gives_the_line_an_editor_shows_for_every_line_break(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, encoding: str
) -> None:
    """Text, JSON, SARIF and JUnit give each finding the editors' line, in UTF-8 with or
    without a BOM and in UTF-16; a SARIF region never lies past the file's last line."""
    junitparser = require("junitparser", "test")
    text = _two_pods(_BREAKS[kind]).replace("\n", _BREAKS[kind] if kind == "CRLF" else "\n")
    path = tmp_path / "pods.yaml"
    path.write_bytes(text.encode(encoding))
    want = _editor_lines(text, "hostNetwork")
    assert len(want) == 2
    last = len(_EDITOR_BREAK.split(text.removesuffix("\n").removesuffix("\r")))
    status, out, _ = run(capsys, str(path), "-o", "json")
    assert status == 1
    assert [f["line"] for f in json.loads(out)["findings"]] == want
    status, out, _ = run(capsys, str(path))
    assert [int(line.split(":")[1]) for line in out.splitlines()
            if "host-network-ignored" in line] == want
    status, out, _ = run(capsys, str(path), "-o", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    run_ = log["runs"][0]
    assert run_["newlineSequences"] == ["\r\n", "\n", "\r"]
    regions = [r["locations"][0]["physicalLocation"]["region"]["startLine"]
               for r in run_["results"]]
    assert regions == want
    assert all(1 <= line <= last for line in regions)
    status, out, _ = run(capsys, str(path), "-o", "junit")
    junit = junitparser.JUnitXml.fromstring(out)
    cases = [case for suite in junit for case in suite]
    lines = sorted(int(case._elem.get("line")) for case in cases
                   if case._elem.get("line") is not None)
    assert lines == want


def test_json_lines_count_a_bare_cr_and_not_a_line_separator_in_a_string(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """JSON's whitespace takes CR; U+2028 is only ever inside a JSON string."""
    pod = windows_pod("j", hostNetwork=True)
    pod["metadata"]["annotations"] = {"note": "one\u2028two\x85three"}
    text = json.dumps(pod, indent=1, ensure_ascii=False).replace("\n", "\r")
    path = tmp_path / "pod.json"
    path.write_bytes(text.encode("utf-8"))
    status, out, _ = run(capsys, str(path), "-o", "json")
    assert status == 1
    assert [f["line"] for f in json.loads(out)["findings"]] == _editor_lines(
        text, '"hostNetwork"')


@pytest.mark.parametrize("kind", ["NEL", "LS", "PS"])
def test_an_ignore_comment_beside_a_line_break_only_yaml_reads_silences_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    """On the comment's line or, for a comment line, the line after it: the note says
    why in one sentence, and the finding is reported."""
    names = {"NEL": "U+0085 (NEXT LINE)", "LS": "U+2028 (LINE SEPARATOR)",
             "PS": "U+2029 (PARAGRAPH SEPARATOR)"}
    odd = _BREAKS[kind]
    marker = "# kubelet-winnet:ignore host-network-ignored legacy agent"
    beside = ("apiVersion: v1\nkind: Pod\nmetadata: {name: beside}\nspec:\n"
              f"  os: {{name: windows}}\n  hostNetwork: true  {marker}{odd}  dnsPolicy: "
              "Default\n  containers: [{name: c, image: i}]\n")
    above = (f"{marker}\n{odd}apiVersion: v1\nkind: Pod\nmetadata: {{name: above}}\nspec:\n"
             "  os: {name: windows}\n  hostNetwork: true\n  containers: [{name: c, image: i}]\n")
    for name, text, where, which in (("beside", beside, 6, "this line"),
                                     ("above", above, 1, "the next line")):
        path = tmp_path / f"{name}.yaml"
        path.write_bytes(text.encode("utf-8"))
        status, out, err = run(capsys, str(path), "-o", "json")
        assert status == 1
        found = json.loads(out)["findings"]
        assert [f["object"]["name"] for f in found if f["rule"] == "host-network-ignored"] == [
            name]
        if name == "beside":  # the key after the odd break is read: dnsPolicy: Default
            assert "dns-needs-cni-capability" in {f["rule"] for f in found}
        notes = [line for line in err.splitlines() if ": note: " in line]
        assert notes == [
            f"kubelet-winnet: note: {path}:{where}: # kubelet-winnet:ignore "
            f"host-network-ignored: {which} holds {names[kind]}, a line break for YAML "
            "but not for editors, so the comment silences nothing; break lines with LF "
            "or CRLF"]


# --- reports on any character ----------------------------------------------------------------

class _Doc:
    def __init__(self, source: str) -> None:
        self.source = source
        self.document = 1
        self.item: int | None = None


class _Session:
    def __init__(self) -> None:
        self.pods = 1
        self.skipped_linux = 0
        self.skipped_untargeted = 0
        self.errors = 1
        self.status = 2
        self.diagnostics: list[str] = []


_REACH = host_network_reach("1.32", None)


@given(name=st.text(st.characters(), min_size=1, max_size=12),
       namespace=st.text(st.characters(), max_size=6),
       source=st.text(st.characters(), min_size=1, max_size=12),
       message=st.text(st.characters(), max_size=12))
def test_every_code_point_keeps_junit_sarif_and_json_parseable(
    name: str, namespace: str, source: str, message: str
) -> None:
    """C0 controls, U+FFFE/U+FFFF and lone surrogates in pod names,
    namespaces, file names or messages once made the whole JUnit report unparseable. XML 1.0
    (section 2.2, Char) allows tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and above."""
    junitparser = require("junitparser", "test")
    manifest = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"os": {"name": "windows"}, "hostNetwork": True,
                         "containers": [{"name": name, "image": "i",
                                         "ports": [{"containerPort": 1, "hostPort": 2}]}]}}
    pod = pod_object(manifest)
    assert pod is not None
    findings = check_pod(pod, Target.WINDOWS, _REACH)
    assert findings
    notes = [Notification("error", message, source, 3), Notification("note", message)]
    for output in ("junit", "sarif", "json"):
        stream = io.StringIO()
        writer = report_writer(output, stream, Options(Severity.WARNING))
        writer.pod(_Doc(source), pod)
        for number, finding in enumerate(findings):
            writer.finding(_Doc(source), pod, finding, message if number else None, 5)
        writer.close(_Session(), notes)
        text = stream.getvalue()
        text.encode("utf-8")  # what reaches the file: no lone surrogate
        if output == "junit":
            ElementTree.fromstring(text.encode("utf-8"))
            suites = junitparser.JUnitXml.fromstring(text.encode("utf-8"))
            assert sum(1 for suite in suites for _ in suite) == len(findings) + 1
        else:
            json.loads(text)


def test_junit_of_a_pod_named_with_control_characters_parses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """End to end: one pod name with U+0001 and U+FFFF (YAML escapes, as a
    generator may write them) once broke the whole report."""
    junitparser = require("junitparser", "test")
    path = tmp_path / "odd.yaml"
    path.write_text('apiVersion: v1\nkind: Pod\nmetadata:\n  name: "a\\x01b\\uffff"\n'
                    "  namespace: \"n\\x1b\"\nspec:\n  os: {name: windows}\n"
                    "  hostNetwork: true\n  containers: [{name: c, image: i}]\n",
                    encoding="utf-8")
    status, out, _ = run(capsys, str(path), "-o", "junit")
    assert status == 1
    root = ElementTree.fromstring(out.encode("utf-8"))
    (case,) = root.iter("testcase")
    assert case.get("name") == "host-network-ignored Pod/n\\x1b/a\\x01b\\uffff spec.hostNetwork"
    (suite,) = list(junitparser.JUnitXml.fromstring(out.encode("utf-8")))
    assert suite.failures == 1


@pytest.mark.parametrize("create", [True, False])
def test_a_baseline_that_is_also_a_named_input_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, create: bool
) -> None:
    """The baseline file is left out of the input (so a directory search does not read
    it as manifests). Named as an input too, `check pod.yaml --baseline pod.yaml
    --create-baseline` checked nothing and said nothing, exit 0; with a second manifest
    it overwrote pod.yaml with the baseline."""
    deploy = _repo(tmp_path)
    manifest = deploy / "a.yaml"
    before = manifest.read_bytes()
    for inputs in (["deploy/a.yaml"], ["deploy", "deploy/a.yaml"]):
        status, _, err = run(capsys, *inputs, "--baseline", "deploy/a.yaml",
                             *(["--create-baseline"] if create else []))
        assert status == 2
        assert ("kubelet-winnet: error: --baseline deploy/a.yaml is also an input: name "
                "another file for the baseline") in err
        assert manifest.read_bytes() == before


def test_create_baseline_never_replaces_a_file_that_is_no_baseline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A manifest inside a directory input, named as the baseline, was left out of the
    input and then overwritten by --create-baseline. A file that is not a baseline is
    refused before anything runs; a baseline or an empty file is replaced."""
    deploy = _repo(tmp_path)
    manifest = deploy / "a.yaml"
    before = manifest.read_bytes()
    status, out, err = run(capsys, "deploy", "--baseline", "deploy/a.yaml",
                           "--create-baseline")
    assert (status, out) == (2, "")
    assert error_lines(err) == [
        "kubelet-winnet: error: --create-baseline would replace deploy/a.yaml, which is not "
        "a baseline (it holds no failed_checks list); remove it or name another file"]
    assert manifest.read_bytes() == before
    # an empty file (touched beforehand) and an earlier baseline are written over
    baseline = tmp_path / "winnet.baseline.json"
    baseline.write_bytes(b"")
    assert run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")[0] == 0
    first = json.loads(baseline.read_text(encoding="utf-8"))
    assert len(first["failed_checks"][0]["findings"]) == 3
    (deploy / "b.yaml").write_text(yaml.safe_dump(windows_pod("new", hostNetwork=True)),
                                   encoding="utf-8")
    assert run(capsys, "deploy", "--baseline", str(baseline), "--create-baseline")[0] == 0
    second = json.loads(baseline.read_text(encoding="utf-8"))
    assert [group["file"] for group in second["failed_checks"]] == [
        "deploy/a.yaml", "deploy/b.yaml"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_create_baseline_never_replaces_what_is_not_a_regular_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """os.replace put the baseline in place of whatever the path named: a FIFO, or, for
    root, a device such as /dev/null. Only a regular file (or a link, itself) is
    replaced."""
    _repo(tmp_path)
    fifo = tmp_path / "baseline.fifo"
    os.mkfifo(fifo)
    status, _, err = run(capsys, "deploy", "--baseline", str(fifo), "--create-baseline")
    assert status == 2
    assert error_lines(err) == [
        f"kubelet-winnet: error: --create-baseline would replace {fifo}, which is not a "
        "regular file; name a file for the baseline"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # a link is replaced by the baseline; what it pointed to is left alone
    target = tmp_path / "elsewhere.json"
    target.write_text("{}", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, "deploy", "--baseline", str(link), "--create-baseline")[0] == 0
    assert not link.is_symlink()
    assert target.read_text(encoding="utf-8") == "{}"
    assert "failed_checks" in json.loads(link.read_text(encoding="utf-8"))


def test_many_stale_baseline_entries_are_summarised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A baseline of 1,000,000 entries that no longer match printed 1,000,000 notes (and
    as many SARIF notifications): the first 20, then how many more."""
    _repo(tmp_path)
    entries = [{"object": {"kind": "Pod", "name": f"gone{i}"}, "rule": "host-network-ignored",
                "field": "spec.hostNetwork"} for i in range(25)]
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({"failed_checks": [
        {"file": "deploy/a.yaml", "findings": entries}]}), encoding="utf-8")
    status, _, err = run(capsys, "deploy", "--baseline", str(baseline))
    assert status == 1
    stale = [line for line in err.splitlines() if "matches no finding" in line]
    assert len(stale) == 20
    assert (f"kubelet-winnet: note: {baseline}: 5 more baseline entries match no finding any "
            "more; write the baseline again with --create-baseline") in err.splitlines()


@pytest.mark.parametrize(("port", "field", "said"), [
    ({"containerPort": 80, "hostPort": "80"}, "hostPort", 'expected an integer, got string "80"'),
    ({"containerPort": 80.5}, "containerPort", "expected an integer"),
    ({"containerPort": 80, "protocol": 6}, "protocol", "expected a string"),
    ({"containerPort": 80, "hostPort": 70000}, "hostPort",
     "number 70000 outside the range 0 to 65535"),
])
def test_a_port_field_of_the_wrong_type_is_an_input_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], port: dict[str, Any], field: str,
    said: str,
) -> None:
    """The API server refuses a pod whose port field does not decode (hostPort: "80"),
    as run and judge do: check says so at the field's line, not a pod checked clean."""
    pod = windows_pod("web", hostNetwork=True)
    pod["spec"]["containers"][0]["ports"] = [port]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod, sort_keys=False))
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1)
                if text.strip().lstrip("- ").startswith(f"{field}:"))
    status, _, err = run(capsys, str(path))
    assert status == 2
    assert (f"{path}:{line}: document 1: spec.containers[0].ports[0].{field}: {said}"
            in err)
    assert "0 pods in 1 file checked" in err and "1 input error" in err
