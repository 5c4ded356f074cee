"""``kubelet-winnet policy``: what it prints (stdout), says (stderr) and returns.

The objects themselves are tested in tests/lint/test_policy.py (schemas, CEL, the
differential test against check); here: flags, formats, errors and exit statuses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import COMMAND_MODULES, main
from tests.strategies import AdmissionPolicy

PREFIX = "kubelet-winnet: error: "


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["policy", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def documents(out: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(out) if d is not None]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one error line of a refused run (exit 2, nothing on stdout)."""
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(PREFIX) and err.count("\n") == 1, err
    return err[len(PREFIX):].rstrip("\n")


def test_policy_is_a_registered_command() -> None:
    assert COMMAND_MODULES["policy"][0] == "policy"


def test_default_prints_the_policy_and_a_warn_audit_binding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys)
    assert (status, err) == (0, "")
    policy, binding = documents(out)
    assert (policy["kind"], binding["kind"]) == (
        "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
    assert policy["metadata"]["name"] == binding["spec"]["policyName"] == "kubelet-winnet"
    assert binding["spec"]["validationActions"] == ["Warn", "Audit"]
    assert [v["message"].split(":")[0] for v in policy["spec"]["validations"]] == [
        "host-network-ignored", "windows-forbidden-field"]
    # The default kubelet (1.32) still asks for NODE; the message says so.
    assert "kubelet 1.32 sends NODE" in policy["spec"]["validations"][0]["message"]


def test_json_is_a_list_of_the_same_objects(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys)
    status, text, err = run(capsys, "-o", "json")
    assert (status, err) == (0, "")
    listing = json.loads(text)
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert listing["items"] == documents(out)


@pytest.mark.parametrize(("flags", "actions", "failure_policy"), [
    (["--action", "deny"], ["Deny"], "Ignore"),
    (["--action", "Audit"], ["Audit"], "Fail"),
    (["--action", "audit,warn"], ["Warn", "Audit"], "Fail"),
    (["--action", "audit", "--action", "deny"], ["Deny", "Audit"], "Ignore"),
    (["--action", "warn", "--action", "warn"], ["Warn"], "Fail"),
])
def test_actions(capsys: pytest.CaptureFixture[str], flags: list[str], actions: list[str],
                 failure_policy: str) -> None:
    status, out, _ = run(capsys, *flags)
    policy, binding = documents(out)
    assert status == 0
    assert binding["spec"]["validationActions"] == actions
    assert policy["spec"]["failurePolicy"] == failure_policy


@pytest.mark.parametrize("flags", [
    ["--action", "deny,warn"], ["--action", "warn", "--action", "Deny"],
])
def test_deny_with_warn_is_refused(capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    message = refused(capsys, *flags)
    assert message == ("--action: deny and warn cannot be combined (the API server refuses "
                       "such a binding); use deny, or warn with audit")


def test_bad_action_and_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(capsys, "--action", "block") == (
        "--action: 'block' is not an action (use warn, audit or deny)")
    assert refused(capsys, "--action", ",") == "--action: no action given (use warn, audit or deny)"
    assert refused(capsys, "--name", "Kubelet_Winnet").startswith(
        "--name: 'Kubelet_Winnet' is not an object name")
    assert refused(capsys, "--exclude-namespace", "kube.system") == (
        "--exclude-namespace: 'kube.system' is not a namespace name")


def test_rules(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--rules", "host-network-ignored")
    policy, _ = documents(out)
    assert status == 0
    assert [v["message"].split(":")[0] for v in policy["spec"]["validations"]] == [
        "host-network-ignored"]
    assert list(policy["metadata"]["annotations"]) == ["kubelet-winnet.io/host-network-ignored"]
    assert refused(capsys, "--rules", "host-process-mixed") == (
        "--rules: host-process-mixed is not in the policy: the API server already rejects "
        "such objects (\"If pod contains any hostProcess containers then all containers must "
        "be HostProcess containers\")")
    assert refused(capsys, "--rules", "host-network") == (
        "--rules: no rule named 'host-network' (the policy's rules: host-network-ignored, "
        "windows-forbidden-field)")


def test_namespace_selector_and_exclusions(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "--name", "win.policy", "--namespace-selector",
        "env=prod, team in (a, b),tier!=db,!legacy,example.com/windows",
        "--exclude-namespace", "kube-system", "--exclude-namespace", "calico-system",
    )
    policy, binding = documents(out)
    assert status == 0
    assert policy["metadata"]["name"] == binding["metadata"]["name"] == "win.policy"
    assert binding["spec"]["matchResources"] == {"namespaceSelector": {
        "matchLabels": {"env": "prod"},
        "matchExpressions": [
            {"key": "team", "operator": "In", "values": ["a", "b"]},
            {"key": "tier", "operator": "NotIn", "values": ["db"]},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "example.com/windows", "operator": "Exists"},
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
             "values": ["kube-system", "calico-system"]},
        ],
    }}


@pytest.mark.parametrize(("selector", "message"), [
    ("env=prod,,x", "--namespace-selector: cannot read ',x' (use key=value, key!=value, "
     "key in (a,b), key notin (a,b), key or !key)"),
    ("team in (a", "--namespace-selector: cannot read 'team in (a' (use key=value, key!=value, "
     "key in (a,b), key notin (a,b), key or !key)"),
    ("-bad=x", "--namespace-selector: '-bad' is not a label key"),
    ("env=pro d", "--namespace-selector: cannot read 'env=pro d' (use key=value, key!=value, "
     "key in (a,b), key notin (a,b), key or !key)"),
    ("env=" + "x" * 64, "--namespace-selector: '" + "x" * 64 + "' is not a label value"),
])
def test_bad_namespace_selector(capsys: pytest.CaptureFixture[str], selector: str,
                                message: str) -> None:
    assert refused(capsys, f"--namespace-selector={selector}") == message


def test_kubelet_version_changes_what_the_message_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, "--kubelet-version", "1.34")
    policy, _ = documents(out)
    assert policy["spec"]["validations"][0]["message"] == (
        "host-network-ignored: hostNetwork: true is ignored on this Windows pod; kubelet 1.34 "
        "does not send NODE")
    message = refused(capsys, "--kubelet-version", "1.99")
    assert "1.99" in message


def test_the_printed_policy_warns_on_a_windows_pod(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys)
    policy, _ = documents(out)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {
        "nodeSelector": {"kubernetes.io/os": "windows"}, "hostNetwork": True,
        "containers": [{"name": "web", "image": "mcr.microsoft.com/windows/servercore/iis"}]}}
    assert AdmissionPolicy(policy).failures(pod) == [policy["spec"]["validations"][0]["message"]]


def test_unknown_output_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["policy", "-o", "xml"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_console_script_to_a_full_disk_is_exit_2() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "kubelet_winnet.cli", "policy"], stdout=full,
            stderr=subprocess.PIPE, text=True, check=False,
        )
    assert done.returncode == 2
    assert done.stderr == "kubelet-winnet: error: cannot write output: No space left on device\n"
