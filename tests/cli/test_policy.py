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


# The texts are apimachinery's: pkg/labels/selector.go (the parser's "found ..., expected
# ..." and NewRequirement), pkg/api/validate/content (IsLabelKey, IsLabelValue) and
# pkg/util/validation (RegexError: its examples really are joined by ",  or "); content's
# MaxLenError counts "bytes" (content/errors.go), where pkg/util/validation said "characters".
HINT = "; use key=value, key!=value, key in (a,b), key notin (a,b), key or !key"
PARSE = "--namespace-selector: unable to parse requirement: "
KEY_NAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', "
         "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
         "or 'my_value',  or '12345', regex used for validation is "
         "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PREFIX_DNS = ("prefix part a lowercase RFC 1123 subdomain must consist of lower case "
              "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
              "character (e.g. 'example.com', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize(("selector", "message"), [
    ("env=prod,,x", "--namespace-selector: found ',', expected: identifier after ','" + HINT),
    ("team in (a", PARSE + "found '', expected: ',' or ')'" + HINT),
    ("-bad=x", PARSE + 'Invalid value: "-bad": ' + KEY_NAME),
    ("env=pro d", "--namespace-selector: found 'd', expected: ',' or 'end of string'" + HINT),
    ("env=" + "x" * 64,
     PARSE + f'Invalid value: "{"x" * 64}": must be no more than 63 bytes'),
    # An empty prefix is refused, as the API server refuses it.
    ("/x=1", PARSE + 'Invalid value: "/x": prefix part must be non-empty'),
    ("!/y", PARSE + 'Invalid value: "/y": prefix part must be non-empty'),
    ("a/", PARSE + 'Invalid value: "a/": name part must be non-empty; ' + KEY_NAME),
    ("x" * 64, PARSE + f'Invalid value: "{"x" * 64}": name part must be no more than 63 '
     "bytes"),
    ("Example.com/x", PARSE + 'Invalid value: "Example.com/x": ' + PREFIX_DNS),
    ("a" * 254 + "/x", PARSE + 'Invalid value: "' + "a" * 76 + "...: prefix part must be no "
     "more than 253 bytes"),
    ("a/b/c", PARSE + 'Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
     "'/' (e.g. 'example.com/MyName')"),
    ("env in (prod,-x)", PARSE + 'Invalid value: "-x": ' + VALUE),
    ("env!=_", PARSE + 'Invalid value: "_": ' + VALUE),
    ("a b", PARSE + "found 'b', expected: in, notin, =, ==, !=, gt, lt" + HINT),
    ("a in b", PARSE + "found 'b' expected: '('" + HINT),
    (",a", "--namespace-selector: found ',', expected: !, identifier, or 'end of string'"
     + HINT),
    ("!a=b", "--namespace-selector: found '=', expected: ',' or 'end of string'" + HINT),
    # labels.Parse reads these; a LabelSelector cannot hold them (ParseToLabelSelector).
    ("replicas>1", "--namespace-selector: \"gt\" isn't supported in label selectors" + HINT),
    ("replicas<1", "--namespace-selector: \"lt\" isn't supported in label selectors" + HINT),
])
def test_bad_namespace_selector(capsys: pytest.CaptureFixture[str], selector: str,
                                message: str) -> None:
    assert refused(capsys, f"--namespace-selector={selector}") == message


@pytest.mark.parametrize(("key", "quoted"), [
    # field.Error prints the value with %q (strconv.Quote): "\a" for BEL, and "\u00ad"
    # for the soft hyphen, which is format character Cf and so not printable to Go's IsPrint
    # ("letters, marks, numbers, punctuation, symbols, and the ASCII space character").
    ("a\x07b", '"a\\ab"'),
    ("a\u00adb", '"a\\u00adb"'),
    ("\u00e9t\u00e9", '"\u00e9t\u00e9"'),
])
def test_invalid_selector_value_is_quoted_as_go_quotes_it(
        capsys: pytest.CaptureFixture[str], key: str, quoted: str) -> None:
    assert refused(capsys, f"--namespace-selector={key}=x").startswith(
        PARSE + f"Invalid value: {quoted}: name part ")


def _selector_of(capsys: pytest.CaptureFixture[str], selector: str) -> Any:
    status, out, err = run(capsys, "--namespace-selector", selector)
    assert (status, err) == (0, "")
    return documents(out)[1]["spec"].get("matchResources", {}).get("namespaceSelector")


@pytest.mark.parametrize(("selector", "want"), [
    # labels.Parse ANDs every requirement; the LabelSelector keeps both.
    ("env=prod,env=dev", {"matchLabels": {"env": "prod"},
                          "matchExpressions": [{"key": "env", "operator": "In",
                                                "values": ["dev"]}]}),
    ("env=prod,env==prod", {"matchLabels": {"env": "prod"}}),
    ("a!=b,a!=c", {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["b"]},
                                        {"key": "a", "operator": "NotIn", "values": ["c"]}]}),
    # selector.go's own example: "x in (foo,,baz),y,z notin ()"; a value set is a set,
    # listed sorted, and "()" / ",," stand for the empty value.
    ("x in (foo,,baz),y,z notin ()", {"matchExpressions": [
        {"key": "x", "operator": "In", "values": ["", "baz", "foo"]},
        {"key": "y", "operator": "Exists"},
        {"key": "z", "operator": "NotIn", "values": [""]},
    ]}),
    ("x in (in, notin)", {"matchExpressions": [{"key": "x", "operator": "In",
                                                "values": ["in", "notin"]}]}),
    ("\tenv = prod\r\n", {"matchLabels": {"env": "prod"}}),
    ("env=", {"matchLabels": {"env": ""}}),
    ("", None),
])
def test_namespace_selector_keeps_every_requirement(
    capsys: pytest.CaptureFixture[str], selector: str, want: Any
) -> None:
    assert _selector_of(capsys, selector) == want


WHITESPACE_SHAPES = ["{s}", "a{s}b", "a{s}={s}b", "a{s}in{s}({s}b{s},{s}c{s})",
                     "!{s}a{s},{s}b", "a{s}=={s}"]


@pytest.mark.parametrize("shape", ["a{s}b", "a{s}in{s}({s}b{s},{s}c{s})"])
def test_namespace_selector_is_linear_in_whitespace(shape: str) -> None:
    """32,000 characters of whitespace once took 18 s (a backtracking
    expression). 120,000, about the most one argument of a command line may hold (Linux's
    MAX_ARG_STRLEN is 128 KiB), now parse or are refused at once; the timeout is only
    there so that a quadratic parser fails instead of running for many minutes."""
    selector = shape.format(s=" \t" * (60_000 // shape.count("{s}")))
    done = subprocess.run(
        [sys.executable, "-m", "kubelet_winnet.cli", "policy", "--namespace-selector",
         selector, "-o", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode in (0, 2), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("shape", WHITESPACE_SHAPES)
def test_a_million_characters_of_whitespace_in_every_place(shape: str) -> None:
    """selector.go's whitespace is space, tab, CR and LF, and a run of it is one gap: a
    million characters of it read as one space does, at once."""
    from kubelet_winnet.cli.commands.policy import _FlagError, _selector

    def read(text: str) -> object:
        try:
            return _selector(text)
        except _FlagError as exc:
            return str(exc)

    text = shape.format(s=" \t\r\n" * (250_000 // shape.count("{s}")))
    assert read(text) == read(shape.format(s=" "))


@pytest.mark.slow  # counts the lexer's expression matches: machinery
def test_namespace_selector_lexer_scans_each_character_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The linear design: one expression match per token, each consuming its whole run, so
    the work does not grow with the gaps between tokens."""
    from kubelet_winnet.cli.commands import policy

    calls = []

    class Counting:
        def __init__(self, pattern: Any) -> None:
            self._pattern = pattern

        def match(self, text: str, position: int) -> Any:
            found = self._pattern.match(text, position)
            calls.append(found.end() - position)
            return found

    monkeypatch.setattr(policy, "_SPACE", Counting(policy._SPACE))
    monkeypatch.setattr(policy, "_IDENTIFIER", Counting(policy._IDENTIFIER))
    for gap in (1, 1000, 100_000):
        calls.clear()
        text = f"a{' ' * gap}in{' ' * gap}(b,{' ' * gap}c)"
        policy._selector(text)
        assert len(calls) == 12  # 4 words, and the gap before each of 7 tokens and the end
        assert sum(calls) == len(text) - 3  # every character but ( , ) once


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
