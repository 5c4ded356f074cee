"""``kubelet-winnet check``: the rules on the project's manifests (tests/data/manifests),
on the published corpus (marked ``corpus``: skipped where it is absent) and on small pods,
the ignore annotation, every input encoding, the three output formats (SARIF validated
against the SARIF 2.1.0 schema).

Expected findings are derived here from the YAML and the rules as kubelet-rules.md states
them (an independent reading with PyYAML, not our input layer), never recorded from a run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given

import kubelet_winnet as api
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.fields import FIELDS
from kubelet_winnet._lint.reach import host_network_reach
from kubelet_winnet._lint.rules import RULES
from kubelet_winnet._lint.targeting import Target, pod_object
from kubelet_winnet.cli import main
from kubelet_winnet.errors import InvalidPodError, SandboxConfigError
from tests.strategies import (
    CORPUS,
    FIXTURES,
    REPO_ROOT,
    WINDOWS_POD,
    fixture_files,
    pod_manifests,
    run_main,
)

REPO = REPO_ROOT
SCHEMA = REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"

TEMPLATES = {
    "Pod": (), "Deployment": ("spec", "template"), "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"), "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"), "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"), "PodTemplate": ("template",),
}
# API server validateWindows (reference: kubelet-rules.md, "spec.os.name: windows forbids").
LINUX_ONLY_POD_CONTEXT = {"seLinuxOptions", "seccompProfile", "appArmorProfile", "fsGroup",
                          "fsGroupChangePolicy", "sysctls", "runAsUser", "runAsGroup",
                          "supplementalGroups", "supplementalGroupsPolicy"}
LINUX_ONLY_CONTAINER_CONTEXT = {"seLinuxOptions", "seccompProfile", "appArmorProfile",
                                "capabilities", "privileged", "allowPrivilegeEscalation",
                                "procMount", "readOnlyRootFilesystem", "runAsUser",
                                "runAsGroup"}


def dig(node: Any, *keys: Any) -> Any:
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def os_of(spec: dict[str, Any]) -> str:
    if dig(spec, "os", "name") in ("windows", "linux"):
        return str(spec["os"]["name"])
    selector = spec.get("nodeSelector") or {}
    for label in ("kubernetes.io/os", "beta.kubernetes.io/os"):
        if selector.get(label) in ("windows", "linux"):
            return str(selector[label])
    terms = dig(spec, "affinity", "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms") or []
    pinned = set()
    for term in terms:
        values = [tuple(e.get("values", ())) for e in term.get("matchExpressions", [])
                  if e.get("key") in ("kubernetes.io/os", "beta.kubernetes.io/os")
                  and e.get("operator") == "In"]
        pinned |= {v[0] for v in values if len(set(v)) == 1}
        if not values:
            return ""
    return pinned.pop() if len(pinned) == 1 else ""


def oracle(path: Path) -> Counter[tuple[str, str, str]]:
    """(file, object name, rule) for every finding the rules predict in ``path``."""
    expected: Counter[tuple[str, str, str]] = Counter()
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    handlers = {d["metadata"]["name"]: d.get("handler") for d in docs
                if isinstance(d, dict) and d.get("kind") == "RuntimeClass"}
    for doc in [i for d in docs
                for i in (d["items"] if isinstance(d, dict) and d.get("kind") == "List" else [d])]:
        if not isinstance(doc, dict) or doc.get("kind") not in TEMPLATES:
            continue
        spec = dig(doc, *TEMPLATES[doc["kind"]], "spec")
        target = os_of(spec)
        if target == "linux":
            continue
        name = doc["metadata"]["name"]
        # README: ignore-check.kubelet-winnet.io/<rule-id> on the object or its pod template.
        template = dig(doc, *TEMPLATES[doc["kind"]]) if TEMPLATES[doc["kind"]] else doc
        ignored = {key.removeprefix("ignore-check.kubelet-winnet.io/")
                   for meta in (doc.get("metadata"), dig(template, "metadata"))
                   for key in dig(meta, "annotations") or {}}

        def add(rule: str, count: int = 1, name: str = name,
                ignored: set[str] = ignored) -> None:
            if rule not in ignored:
                expected[(path.name, name, rule)] += count

        pod_hp = dig(spec, "securityContext", "windowsOptions", "hostProcess")
        containers = [c for kind in ("initContainers", "containers", "ephemeralContainers")
                      for c in spec.get(kind) or []]
        own = [dig(c, "securityContext", "windowsOptions", "hostProcess") for c in containers]
        effective = [bool(pod_hp) if v is None else v for v in own]
        host_network = spec.get("hostNetwork") is True
        if any(effective) and not all(effective):
            add("host-process-mixed")
        if any(effective) and not host_network:
            add("host-process-needs-host-network")
        if pod_hp is False:
            add("host-process-pod-false", own.count(True))
        if pod_hp is True:  # validation.go: a container's value must equal the pod's
            add("host-process-override", own.count(False))
        if host_network and not any(effective):
            add("host-network-ignored")
        # hcsshim PR #2531: a HostProcess pod on a Hyper-V handler gets no network; only the
        # process-isolated default handler is known to be safe (docs/rules page).
        runtime_class = spec.get("runtimeClassName")
        if runtime_class and containers and all(effective) and (
            handlers.get(runtime_class) != "runhcs-wcow-process"
        ):
            add("host-process-hyperv-no-network")
        # dns.go getPodDNSType: dnsPolicy None or Default, or a dnsConfig, is the pod's own
        # DNS, which reaches a Windows pod only through a CNI plugin declaring the dns
        # capability (the rule's page): a node fact check does not know, unless the kubelet
        # refuses the pod.
        # A HostProcess pod resolves as the node does: dnsPolicy Default alone is what it gets.
        refused = any(effective) and (not all(effective) or not host_network)
        own_dns = spec.get("dnsPolicy") == "None" or isinstance(spec.get("dnsConfig"), dict)
        if not refused and (own_dns or (spec.get("dnsPolicy") == "Default"
                                        and not all(effective))):
            add("dns-needs-cni-capability")
        if host_network:
            for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
                for port in c.get("ports") or []:
                    if port.get("hostPort") and port["hostPort"] != port.get("containerPort"):
                        add("host-port-mismatch")
        if target == "windows" or dig(spec, "os", "name") == "windows":
            forbidden = sum(spec.get(k) is True for k in
                            ("hostPID", "hostIPC", "shareProcessNamespace"))
            forbidden += "hostUsers" in spec
            forbidden += len(LINUX_ONLY_POD_CONTEXT & set(spec.get("securityContext") or {}))
            for c in containers:
                forbidden += len(LINUX_ONLY_CONTAINER_CONTEXT & set(c.get("securityContext")
                                                                    or {}))
            add("windows-forbidden-field", forbidden)
        options = [dig(spec, "securityContext", "windowsOptions")]
        options += [dig(c, "securityContext", "windowsOptions") for c in containers]
        add("gmsa-spec-missing", sum(
            1 for o in options if o and o.get("gmsaCredentialSpecName")
            and o.get("gmsaCredentialSpec") is None
        ))
        # Keys that are no field of their core/v1 type (the pinned upstream field lists).
        levels = [("PodSpec", spec), ("PodSecurityContext", spec.get("securityContext")),
                  ("WindowsSecurityContextOptions", options[0])]
        if TEMPLATES[doc["kind"]]:
            levels.append(("PodTemplateSpec", template))
        for kind in ("initContainers", "containers", "ephemeralContainers"):
            for c in spec.get(kind) or []:
                levels += [
                    ("EphemeralContainer" if kind == "ephemeralContainers" else "Container", c),
                    ("SecurityContext", c.get("securityContext")),
                    ("WindowsSecurityContextOptions", dig(c, "securityContext", "windowsOptions")),
                ]
        add("unknown-field", sum(len(set(node) - FIELDS[type_]) for type_, node in levels
                                 if isinstance(node, dict)))
    return +expected


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def corpus_files() -> list[Path]:
    files = sorted(CORPUS.glob("*.yaml"))
    assert len(files) == 40, f"shared corpus missing at {CORPUS}"
    return files


def check_directory(directory: Path) -> dict[str, Any]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(["check", str(directory), "-o", "json"])
    result: dict[str, Any] = json.loads(out.getvalue())
    result["status"] = status
    return result


@pytest.fixture(scope="module")
def corpus_json() -> dict[str, Any]:
    return check_directory(CORPUS)


@pytest.fixture(scope="module")
def fixtures_json() -> dict[str, Any]:
    return check_directory(FIXTURES)


RULE_FIXTURES = REPO_ROOT / "tests" / "data" / "rules"  # pods that need a RuntimeClass


def test_every_rule_on_the_fixtures(fixtures_json: dict[str, Any]) -> None:
    """The project's own manifests set off every rule (tests/data/manifests/README.md)."""
    expected: Counter[tuple[str, str, str]] = Counter()
    for path in fixture_files():
        expected += oracle(path)
    got = Counter(
        (Path(f["file"]).name, f["object"]["name"], f["rule"])
        for f in fixtures_json["findings"]
    )
    assert got == expected
    rule_files = sorted(RULE_FIXTURES.glob("*.yaml"))
    extra = check_directory(RULE_FIXTURES)
    expected_extra: Counter[tuple[str, str, str]] = Counter()
    for path in rule_files:
        expected_extra += oracle(path)
    assert Counter((Path(f["file"]).name, f["object"]["name"], f["rule"])
                   for f in extra["findings"]) == expected_extra
    covered = {rule for _, _, rule in expected} | {rule for _, _, rule in expected_extra}
    assert covered == {rule.id for rule in RULES}
    # windows-forbidden-field at both severities: with and without spec.os.name.
    assert {(f["rule"], f["severity"]) for f in fixtures_json["findings"]} >= {
        ("windows-forbidden-field", "error"), ("windows-forbidden-field", "info"),
    }
    assert fixtures_json["status"] == 1
    summary = fixtures_json["summary"]
    assert summary["linuxPodsSkipped"] == 1  # node-agent, pinned to Linux
    assert summary["ignored"] == 1  # node-agent-windows-hostnet's annotation
    assert summary["inputErrors"] == 0


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16-le", "utf-16-be"])
def test_every_encoding_gives_the_same_findings(
    tmp_path: Path, encoding: str, fixtures_json: dict[str, Any]
) -> None:
    """README, input: UTF-8 with or without BOM, UTF-16 LE/BE with BOM. Each fixture is
    re-encoded here (with its BOM), and check finds what the rules predict, on the same
    lines as in the UTF-8 files."""
    bom = {"utf-8-sig": b"", "utf-16-le": "\ufeff".encode("utf-16-le"),
           "utf-16-be": "\ufeff".encode("utf-16-be")}[encoding]
    expected: Counter[tuple[str, str, str]] = Counter()
    for path in fixture_files():
        (tmp_path / path.name).write_bytes(bom + path.read_text(encoding="utf-8").encode(encoding))
        expected += oracle(path)
    assert (tmp_path / "run-as-username-flow.yaml").read_bytes()[:2] in (
        b"\xef\xbb", b"\xff\xfe", b"\xfe\xff")
    result = check_directory(tmp_path)
    got = Counter((Path(f["file"]).name, f["object"]["name"], f["rule"])
                  for f in result["findings"])
    assert got == expected
    assert [(Path(f["file"]).name, f["line"]) for f in result["findings"]] == [
        (Path(f["file"]).name, f["line"]) for f in fixtures_json["findings"]
    ]
    assert result["summary"] == fixtures_json["summary"]


@pytest.mark.corpus
def test_every_rule_on_the_corpus(corpus_json: dict[str, Any]) -> None:
    expected: Counter[tuple[str, str, str]] = Counter()
    for path in corpus_files():
        expected += oracle(path)
    got = Counter(
        (Path(f["file"]).name, f["object"]["name"], f["rule"]) for f in corpus_json["findings"]
    )
    assert got == expected
    assert {rule for _, _, rule in expected} >= {
        "host-network-ignored", "host-process-mixed", "host-process-needs-host-network",
        "windows-forbidden-field", "gmsa-spec-missing",
    }
    assert corpus_json["status"] == 1
    assert corpus_json["summary"]["linuxPodsSkipped"] == 1  # 15's Linux DaemonSet


@pytest.mark.corpus
def test_corpus_rows_from_sources_md(corpus_json: dict[str, Any]) -> None:
    """Pinned from SOURCES.md: 06 is the one pre-HostProcess hostNetwork DaemonSet whose
    hostNetwork is lost; 28's badpod01-new mixes an init HostProcess container with
    non-HostProcess ones and has no hostNetwork."""
    by_file: dict[str, set[tuple[str, str]]] = {}
    for f in corpus_json["findings"]:
        by_file.setdefault(Path(f["file"]).name, set()).add((f["object"]["name"], f["rule"]))
    assert by_file["06-swt-kubeadm-flannel-overlay-wins-legacy.yaml"] == {
        ("kube-flannel-ds-windows-amd64", "host-network-ignored")
    }
    assert {
        ("badpod01-new", "host-process-mixed"),
        ("badpod01-new", "host-process-needs-host-network"),
    } <= by_file["28-kyverno-disallow-host-process-pod-bad.yaml"]
    assert "15-cloud-provider-azure-cloud-node-manager-linux-and-windows.yaml" not in by_file


def line_of(path: Path, pattern: str, after: int = 0) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines[after:], start=after + 1):
        if re.search(pattern, text):
            return number
    raise AssertionError(f"{pattern} not in {path}")


def test_lines_point_at_the_field(fixtures_json: dict[str, Any]) -> None:
    path = FIXTURES / "cni-wins-legacy.yaml"
    (finding,) = [f for f in fixtures_json["findings"] if f["file"] == str(path)]
    assert finding["line"] == line_of(path, r"^\s+hostNetwork: true")
    assert finding["field"] == "spec.template.spec.hostNetwork"
    assert finding["object"] == {"kind": "DaemonSet", "namespace": "kube-system",
                                 "name": "flannel-wins"}


@pytest.mark.parametrize("name", ["cni-wins-legacy.yaml", "legacy-controllers.yaml"])
def test_host_network_message_names_the_versions(
    fixtures_json: dict[str, Any], name: str
) -> None:
    """kubelet-rules.md timeline: 1.26-1.32 send NODE while the gate (default on) is on;
    1.33-1.37 never; 1.38 has no gate and never does."""
    (finding,) = [f for f in fixtures_json["findings"]
                  if f["rule"] == "host-network-ignored" and f["file"] == str(FIXTURES / name)]
    message = finding["message"]
    assert "1.26-1.32 unless WindowsHostNetwork=false" in message
    assert "never on 1.33-1.38" in message
    assert "containerd" in message
    assert "HostProcess" in message
    assert "hostPort" in message


# --- one pod per rule, and its ignore annotation ----------------------------------------

WINDOWS = {"nodeSelector": {"kubernetes.io/os": "windows"}}
CASES: dict[str, dict[str, Any]] = {
    "host-network-ignored": {**WINDOWS, "hostNetwork": True},
    "host-process-mixed": {  # HostProcess set on one container only: no override
        **WINDOWS, "hostNetwork": True,
        "containers": [{"name": "c", "image": "i",
                        "securityContext": {"windowsOptions": {"hostProcess": True}}}],
        "initContainers": [{"name": "plain", "image": "i"}],
    },
    "host-process-needs-host-network": {
        **WINDOWS, "securityContext": {"windowsOptions": {"hostProcess": True}},
    },
    "host-process-pod-false": {
        **WINDOWS, "hostNetwork": True,
        "securityContext": {"windowsOptions": {"hostProcess": False}},
        "containers": [{"name": "c", "image": "i",
                        "securityContext": {"windowsOptions": {"hostProcess": True}}}],
    },
    "host-process-override": {
        **WINDOWS, "securityContext": {"windowsOptions": {"hostProcess": True}},
        "containers": [{"name": "c", "image": "i",
                        "securityContext": {"windowsOptions": {"hostProcess": False}}}],
    },
    "host-port-mismatch": {
        **WINDOWS, "hostNetwork": True,
        "securityContext": {"windowsOptions": {"hostProcess": True}},
        "containers": [{"name": "c", "image": "i",
                        "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    },
    "windows-forbidden-field": {"os": {"name": "windows"}, "hostPID": True},
    "gmsa-spec-missing": {
        **WINDOWS,
        "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "webapp1"}},
    },
    "host-process-hyperv-no-network": {  # containerd's default Hyper-V handler's name
        **WINDOWS, "hostNetwork": True, "runtimeClassName": "runhcs-wcow-hypervisor",
        "securityContext": {"windowsOptions": {"hostProcess": True}},
    },
    "dns-needs-cni-capability": {**WINDOWS, "dnsPolicy": "Default"},
    "unknown-field": {**WINDOWS, "hostNetwrok": True},
}


def manifest(spec: dict[str, Any], kind: str = "Pod",
             annotations: dict[str, str] | None = None,
             template_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    body = {"containers": [{"name": "c", "image": "i"}], **spec}
    if kind == "Pod":
        meta: dict[str, Any] = {"name": "x"}
        if annotations:
            meta["annotations"] = annotations
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}
    template: dict[str, Any] = {"metadata": {}, "spec": body}
    if template_annotations:
        template["metadata"]["annotations"] = template_annotations
    meta = {"name": "x", "namespace": "n"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"template": template}}


def check_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, doc: dict[str, Any],
               *flags: str) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    status, out, _ = run(capsys, "check", str(path), "-o", "json", *flags)
    return status, json.loads(out)["findings"]


def test_cases_cover_every_rule() -> None:
    assert set(CASES) == {rule.id for rule in RULES}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_and_its_annotation_ignores_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rule: str
) -> None:
    status, findings = check_json(capsys, tmp_path, manifest(CASES[rule]), "--fail-on", "info")
    assert rule in {f["rule"] for f in findings}
    assert status == 1
    key = f"ignore-check.kubelet-winnet.io/{rule}"
    for doc in (manifest(CASES[rule], annotations={key: "known"}),
                manifest(CASES[rule], "Deployment", template_annotations={key: "known"}),
                manifest(CASES[rule], "Deployment", annotations={key: "known"})):
        status, findings = check_json(capsys, tmp_path, doc, "--fail-on", "info")
        assert rule not in {f["rule"] for f in findings}
    other = manifest(CASES[rule], annotations={"ignore-check.kubelet-winnet.io/other": "x"})
    status, findings = check_json(capsys, tmp_path, other)
    assert rule in {f["rule"] for f in findings}


def test_host_port_equal_to_container_port_is_fine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = json.loads(json.dumps(CASES["host-port-mismatch"]))
    spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80},
                                      {"containerPort": 81}]
    status, findings = check_json(capsys, tmp_path, manifest(spec))
    assert (status, findings) == (0, [])


def test_untargeted_pods_are_checked_unless_windows_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = manifest({"hostNetwork": True})
    status, findings = check_json(capsys, tmp_path, doc)
    assert [f["rule"] for f in findings] == ["host-network-ignored"]
    status, findings = check_json(capsys, tmp_path, doc, "--windows-only")
    assert (status, findings) == (0, [])
    linux = manifest({"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "linux"}})
    assert check_json(capsys, tmp_path, linux) == (0, [])


@pytest.mark.parametrize(("fail_on", "status"), [("error", 0), ("warning", 0), ("info", 1)])
def test_fail_on(capsys: pytest.CaptureFixture[str], tmp_path: Path, fail_on: str,
                 status: int) -> None:
    doc = manifest(CASES["gmsa-spec-missing"])  # an info finding only
    got, findings = check_json(capsys, tmp_path, doc, "--fail-on", fail_on)
    assert [f["severity"] for f in findings] == ["info"]
    assert got == status


def test_refusal_rules_follow_the_kubelet_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Step 3a-3b and 6 exist on every modelled kubelet: the refusals do not depend on the
    version, only host-network-ignored's wording does."""
    doc = manifest(CASES["host-process-mixed"])
    for version in ("1.26", "1.33", "1.38"):
        status, findings = check_json(capsys, tmp_path, doc, "--kubelet-version", version)
        assert [f["rule"] for f in findings] == ["host-process-mixed"]
        assert status == 1


# --- output formats ----------------------------------------------------------------------


def test_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "check", str(FIXTURES), "-q")
    assert status == 1
    pattern = re.compile(
        r"^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning|info) "
        r"(?P<rule>[a-z-]+): .+ \[(?P<field>[\w.\[\]]+)\]$"
    )
    lines = out.splitlines()
    assert lines
    for line in lines:
        match = pattern.match(line)
        assert match, line
        assert Path(match["file"]).is_file()
        assert int(match["line"]) >= 1


def test_sarif_is_valid_sarif_2_1_0(capsys: pytest.CaptureFixture[str],
                                    fixtures_json: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    status, out, _ = run(capsys, "check", str(FIXTURES), "-o", "sarif")
    assert status == 1
    log = json.loads(out)
    jsonschema.validate(log, schema)
    (run_,) = log["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [rule.id for rule in RULES]
    for rule in rules:
        assert "helpUri" not in rule  # no documentation base configured: no address guessed
        assert (REPO / "docs" / "rules" / f"{rule['id']}.md").is_file()
    assert "informationUri" not in run_["tool"]["driver"]
    assert run_["invocations"][0]["executionSuccessful"] is True
    results = run_["results"]
    # An ignored finding stays in SARIF, suppressed (test_sarif_marks_ignored_...).
    suppressed = [r for r in results if r.get("suppressions")]
    assert len(suppressed) == fixtures_json["summary"]["ignored"] == 1
    results = [r for r in results if not r.get("suppressions")]
    assert len(results) == len(fixtures_json["findings"])
    for result, finding in zip(results, fixtures_json["findings"], strict=True):
        assert result["ruleId"] == finding["rule"]
        assert rules[result["ruleIndex"]]["id"] == finding["rule"]
        assert result["level"] == {"error": "error", "warning": "warning",
                                   "info": "note"}[finding["severity"]]
        location = result["locations"][0]["physicalLocation"]
        assert location["region"]["startLine"] == finding["line"]
        assert location["artifactLocation"]["uri"].endswith(Path(finding["file"]).name)


def test_sarif_marks_ignored_findings_as_suppressed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key = "ignore-check.kubelet-winnet.io/host-network-ignored"
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(manifest(CASES["host-network-ignored"],
                                            annotations={key: "wins pipe, legacy"})))
    status, out, _ = run(capsys, "check", str(path), "-o", "sarif")
    assert status == 0
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (result,) = log["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource", "justification": "wins pipe, legacy",
                                       "properties": {"by": "annotation"}}]


def test_json_from_a_streamed_list_has_item_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    items = [json.dumps(manifest(CASES["host-network-ignored"]), indent=1) for _ in range(3)]
    path = tmp_path / "list.json"
    path.write_text('{"kind": "List", "items": [\n' + ",\n".join(items) + "]}\n")
    _status, out, _ = run(capsys, "check", str(path), "-o", "json")
    findings = json.loads(out)["findings"]
    assert [f["item"] for f in findings] == [0, 1, 2]
    text_lines = path.read_text().splitlines()
    for finding in findings:
        assert '"hostNetwork": true' in text_lines[finding["line"] - 1]


# --- the refusal rules agree with the library's kubelet ----------------------------------

_REFUSAL_RULE = {
    "pod must not contain both HostProcess and non-HostProcess containers":
        "host-process-mixed",
    "hostNetwork is required if Pod contains HostProcess containers":
        "host-process-needs-host-network",
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false": "host-process-pod-false",
}


REACH = host_network_reach("1.32", None)


@given(pod_manifests())
def test_every_kubelet_refusal_has_its_finding(manifest: dict[str, Any]) -> None:
    """kubelet-rules.md steps 3a, 3b and 6: whenever the kubelet refuses the pod, check
    reports the refusal's rule; when it accepts, no refusal rule fires."""
    manifest = {"kind": "Pod", **manifest}
    try:
        api.windows_sandbox_config(manifest)
        refused = None
    except SandboxConfigError as exc:
        refused = _REFUSAL_RULE[str(exc)]
    except InvalidPodError:
        return
    pod = pod_object(manifest)
    assert pod is not None
    rules = {f.rule.id for f in check_pod(pod, Target.WINDOWS, REACH)}
    if refused is None:
        assert not rules & set(_REFUSAL_RULE.values())
    else:
        assert refused in rules


def test_findings_of_an_object_come_in_line_order(capsys: pytest.CaptureFixture[str]) -> None:
    """A reader going down the file meets the findings in the order they are printed."""
    _, out, _ = run(capsys, "check", "-o", "json", str(FIXTURES))
    findings = json.loads(out)["findings"]
    assert findings
    per_object: dict[tuple[str, int, object], list[int]] = {}
    for finding in findings:
        key = (finding["file"], finding["document"], finding["item"])
        per_object.setdefault(key, []).append(finding["line"])
    assert any(len(lines) > 1 for lines in per_object.values())
    for lines in per_object.values():
        assert lines == sorted(lines)


def test_summary_counts_bad_input_apart_from_checked_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A pod whose field is bad input is read but not checked: the summary says so."""
    good = {"kind": "Pod", "metadata": {"name": "good"}, "spec": {"containers": [{"name": "c"}]}}
    bad_field = {"kind": "Pod", "metadata": {"name": "bad"},
                 "spec": {"hostNetwork": "yes", "containers": [{"name": "c"}]}}
    path = tmp_path / "l.json"
    items = json.dumps([good, bad_field, good])
    path.write_text('{"kind": "List", "items": ' + items[:-1] +
                    ', {"kind": "Pod", "kind": "Pod"}]}', encoding="utf-8")
    status, out, err = run(capsys, "check", "-o", "json", "-v", str(path))
    assert status == 2
    summary = json.loads(out)["summary"]
    assert (summary["podsChecked"], summary["inputErrors"]) == (2, 2)
    assert "2 pods in 1 file checked:" in err and "2 input errors" in err


# --- JSON records: where first, then what ---------------------------------------------


def test_json_records_of_every_command_start_with_where_then_what(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(WINDOWS_POD.replace("spec:\n", "spec:\n  hostNetwork: true\n"),
                    encoding="utf-8")
    _, out, _ = run_main(capsys, "check", str(path), "-o", "json")
    (finding,) = json.loads(out)["findings"]
    assert list(finding)[:7] == ["file", "line", "document", "item", "object", "container",
                                 "field"]
    assert finding["file"] == str(path) and finding["object"] == {"kind": "Pod", "name": "web"}
    for argv in (["translate", "-o", "json"], ["explain", "-o", "json"], ["run", "--dry-run"]):
        _, out, _ = run_main(capsys, *argv, str(path))
        (record,) = json.loads(out)
        assert list(record)[:3] == ["source", "line", "pod"], argv
        assert (record["source"], record["pod"]) == (f"{path}#1", "Pod/web")
