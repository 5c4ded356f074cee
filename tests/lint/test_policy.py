"""The admission policy against real tools: the Kubernetes schemas of 1.30 and
the newest release (kubernetes-validate, strict), and a real CEL implementation
(cel-expr-python) whose verdict must equal ``check``'s on every fixture manifest and on
generated Pods and workloads.

The expected verdict is ``check``'s rules on the same object: the policy warns about a
rule exactly when ``check`` (with ``--windows-only``: admission sees no node, and warning
on every untargeted pod would flood Linux clusters) reports it and no ignore annotation
opts out.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.ignores import ignored_rules
from kubelet_winnet._lint.policy import (
    ACTIONS,
    MESSAGE_LIMIT,
    NOT_IN_POLICY,
    POLICY_RULES,
    RESOURCES,
    PolicyOptions,
    policy_objects,
)
from kubelet_winnet._lint.reach import GATE_STATES, host_network_reach
from kubelet_winnet._lint.rules import RULES, RULES_BY_ID
from kubelet_winnet._lint.targeting import Target, pod_object, target_of
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError
from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, Document, read_source
from tests.strategies import (
    ADMISSION_ROUTES,
    CONTAINER_LINUX_FIELDS,
    CORPUS,
    POD_LINUX_FIELDS,
    REPO_ROOT,
    AdmissionPolicy,
    admitted_objects,
    require,
    without_nulls,
)

REACH = host_network_reach("1.32", None)
# The schemas kubernetes-validate ships: 1.30 (VAP GA) and the newest it knows.
OLDEST_SCHEMA = "1.30"
# The API server's warning text (staging/src/k8s.io/apiserver/pkg/admission/plugin/
# policy/validating/dispatcher.go): the prefix it puts before a validation's message.
WARNING_PREFIX = "Validation failed for ValidatingAdmissionPolicy '{0}' with binding '{0}': "


def objects(options: PolicyOptions | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    return policy_objects(options or PolicyOptions(), REACH)


VARIANTS = (
    PolicyOptions(),
    PolicyOptions(actions=("Deny",), rules=("host-network-ignored",)),
    PolicyOptions(name="windows.hostnetwork", actions=("Audit",),
                  namespace_selector={"matchLabels": {"env": "prod"}},
                  exclude_namespaces=("kube-system", "calico-system")),
)


# --- the rule data --------------------------------------------------------------------------


def test_every_check_rule_is_in_the_policy_or_says_why_not() -> None:
    ids = [rule.id for rule in RULES]
    assert set(POLICY_RULES).isdisjoint(NOT_IN_POLICY)
    assert sorted([*POLICY_RULES, *NOT_IN_POLICY]) == sorted(ids)
    for reason in NOT_IN_POLICY.values():
        assert reason.startswith("the ") and not reason.endswith(".")


def test_the_policy_matches_pods_and_every_workload_with_a_pod_template() -> None:
    assert set(RESOURCES) == {"Pod", *WORKLOAD_TEMPLATE_PATHS}
    policy, _ = objects()
    assert AdmissionPolicy.kinds_of(policy) == set(RESOURCES)  # CREATE and UPDATE, v1


def test_each_validation_names_its_rule_and_the_docs_url_is_checks() -> None:
    policy, _ = objects()
    messages = [v["message"] for v in policy["spec"]["validations"]]
    assert [m.split(":")[0] for m in messages] == list(POLICY_RULES)
    assert policy["metadata"]["annotations"] == {
        f"kubelet-winnet.io/{rule}": RULES_BY_ID[rule].help_uri for rule in POLICY_RULES
    }


@pytest.mark.parametrize("minor", range(MIN_MINOR, MAX_MINOR + 1))
def test_messages_stay_within_the_limit_for_every_kubelet(minor: int) -> None:
    for label, gates in GATE_STATES:
        try:
            reach = host_network_reach(f"1.{minor}", gates)
        except ValueError:  # a gate this release does not accept
            continue
        policy, _ = policy_objects(PolicyOptions(), reach)
        for validation in policy["spec"]["validations"]:
            message = validation["message"]
            assert len(message) <= MESSAGE_LIMIT, message
            assert "\n" not in message
            # What the user reads on `kubectl apply`: past 256 it may be truncated.
            assert len(WARNING_PREFIX.format("kubelet-winnet") + message) <= 256
        message = policy["spec"]["validations"][0]["message"]
        assert "hostNetwork: true is ignored on this Windows pod" in message
        if gates is None:  # the kubelet is named, and whether it sends NODE
            sends = "sends NODE" if reach.selected_carries_node else "does not send NODE"
            assert f"kubelet 1.{minor} {sends}" in message, (label, message)


def test_deny_and_warn_are_refused_together_by_the_cli_and_the_binding_orders_actions() -> None:
    _, binding = objects(PolicyOptions(actions=("Audit", "Deny")))
    assert binding["spec"]["validationActions"] == ["Deny", "Audit"]
    assert ACTIONS == ("Deny", "Warn", "Audit")


def test_an_evaluation_error_never_rejects_a_request() -> None:
    for actions, expected in ((("Warn", "Audit"), "Fail"), (("Deny",), "Ignore"),
                              (("Audit",), "Fail")):
        policy, _ = objects(PolicyOptions(actions=actions))
        assert policy["spec"]["failurePolicy"] == expected


def test_a_rule_outside_the_policy_is_refused() -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        objects(PolicyOptions(rules=("host-process-mixed",)))
    assert str(raised.value) == ("rules: expected rules of the policy (host-network-ignored, "
                                 "windows-forbidden-field), got host-process-mixed")


def test_binding_scope() -> None:
    _, binding = objects(VARIANTS[2])
    assert binding["spec"]["policyName"] == "windows.hostnetwork"
    assert binding["spec"]["matchResources"] == {"namespaceSelector": {
        "matchLabels": {"env": "prod"},
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                              "values": ["kube-system", "calico-system"]}],
    }}
    _, binding = objects()
    assert "matchResources" not in binding["spec"]


# --- the schemas ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kubernetes_validate() -> Any:
    return require("kubernetes_validate", "ci")


@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_objects_validate_against_the_schemas_strictly(kubernetes_validate: Any,
                                                       variant: int) -> None:
    newest = kubernetes_validate.latest_version()
    assert newest >= "1.30"
    for version, document in itertools.product((OLDEST_SCHEMA, newest), objects(VARIANTS[variant])):
        kubernetes_validate.validate(document, version, strict=True)


def test_strict_schema_validation_fails_on_a_misspelt_field(kubernetes_validate: Any) -> None:
    policy, _ = objects()
    policy["spec"]["validations"][0]["mesage"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError, match="mesage"):
        kubernetes_validate.validate(policy, OLDEST_SCHEMA, strict=True)


# --- the differential test: the generated CEL against check -----------------------------------


def check_verdict(obj: dict[str, Any], rules: tuple[str, ...]) -> list[str]:
    """The policy rules ``check`` reports for ``obj`` and no annotation ignores, in
    policy order; nothing for an object that is not a Windows-targeted pod."""
    try:
        pod = pod_object(obj)
    except InvalidPodError:  # no pod template: the API server rejects the object
        return []
    if pod is None:
        return []
    target, _ = target_of(pod)
    if target is not Target.WINDOWS:
        return []
    ignored = ignored_rules(pod)
    found = {f.rule.id for f in check_pod(pod, target, REACH)} - set(ignored)
    return [rule for rule in POLICY_RULES if rule in found and rule in rules]


def policy_verdict(evaluator: AdmissionPolicy, obj: dict[str, Any]) -> list[str]:
    return [message.split(":")[0] for message in evaluator.failures(obj)]


@pytest.fixture(scope="module")
def evaluator() -> AdmissionPolicy:
    return AdmissionPolicy(objects()[0])


def fixture_objects() -> list[tuple[str, dict[str, Any]]]:
    """Every object of every manifest in tests/data, examples and the shared corpus."""
    files = sorted(
        path for folder in (REPO_ROOT / "tests" / "data", REPO_ROOT / "examples", CORPUS)
        for path in folder.rglob("*") if path.suffix in (".yaml", ".yml", ".json")
        and "schema" not in path.name
    )
    found = []
    for path in files:
        for document in read_source(str(path), DEFAULT_LIMITS):
            if isinstance(document, Document) and isinstance(document.value, dict):
                found.append((f"{path.name}:{document.line}", without_nulls(document.value)))
    return found


def test_the_policy_agrees_with_check_on_every_fixture_manifest(
    evaluator: AdmissionPolicy,
) -> None:
    found = fixture_objects()
    assert len({where.split(":")[0] for where, _ in found}) >= 3  # examples/ at least
    warned = 0
    for where, obj in found:
        expected = check_verdict(obj, tuple(POLICY_RULES))
        assert policy_verdict(evaluator, obj) == expected, where
        warned += bool(expected)
    assert warned  # the examples hold a Windows pod whose hostNetwork is ignored


@pytest.mark.parametrize("route", ADMISSION_ROUTES)
@given(data=st.data())
def test_the_policy_agrees_with_check_on_generated_objects(
    evaluator: AdmissionPolicy, route: str, data: st.DataObject,
) -> None:
    # Several objects per example: the bounded profiles' examples go further.
    for obj in data.draw(st.lists(admitted_objects(route), min_size=1, max_size=10)):
        assert policy_verdict(evaluator, obj) == check_verdict(obj, tuple(POLICY_RULES)), obj


@given(data=st.data())
def test_a_policy_of_some_rules_warns_about_those_alone(data: st.DataObject) -> None:
    rules = data.draw(st.sampled_from([(rule,) for rule in POLICY_RULES]))
    evaluator = _evaluators(rules)
    for obj in data.draw(st.lists(admitted_objects(), min_size=1, max_size=10)):
        assert policy_verdict(evaluator, obj) == check_verdict(obj, rules), obj


_CACHE: dict[tuple[str, ...], AdmissionPolicy] = {}


def _evaluators(rules: tuple[str, ...]) -> AdmissionPolicy:
    if rules not in _CACHE:
        _CACHE[rules] = AdmissionPolicy(objects(PolicyOptions(rules=rules))[0])
    return _CACHE[rules]


# Targeting cases by route, with the target the targeting rules give (targeting.py's
# docstring: os.name first, then each OS label of the nodeSelector, then required node
# affinity when every term pins the same OS; in a term, In with only one OS pins it,
# NotIn with an OS pins the other, and the last expression that pins decides).
def _terms(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": k, "operator": o, "values": v} for k, o, v in term]}
            for term in terms
        ]}}}}


OS = "kubernetes.io/os"
BETA = "beta.kubernetes.io/os"
TARGETING = [
    ({"os": {"name": "windows"}}, True),
    ({"os": {"name": "linux"}, "nodeSelector": {OS: "windows"}}, False),
    ({"os": {"name": "plan9"}, "nodeSelector": {OS: "windows"}}, True),
    ({"os": {}}, False),
    ({"nodeSelector": {OS: "windows"}}, True),
    ({"nodeSelector": {BETA: "windows"}}, True),
    ({"nodeSelector": {OS: "Windows", BETA: "windows"}}, True),
    ({"nodeSelector": {OS: "linux", BETA: "windows"}}, False),
    ({"nodeSelector": {"pool": "windows"}}, False),
    (_terms([(OS, "In", ["windows"])]), True),
    (_terms([(BETA, "In", ["windows"])], [(OS, "NotIn", ["linux"])]), True),
    (_terms([(OS, "In", ["windows"])], [(OS, "In", ["linux"])]), False),
    (_terms([(OS, "In", ["windows"])], [("kubernetes.io/arch", "In", ["amd64"])]), False),
    (_terms([(OS, "In", ["windows", "linux"])]), False),
    (_terms([(OS, "NotIn", ["windows"])]), False),
    (_terms([(OS, "In", ["linux"]), (OS, "NotIn", ["linux"])]), True),  # the last decides
    (_terms([(OS, "In", ["windows"]), (OS, "In", ["linux"])]), False),
    (_terms([(OS, "Exists", [])]), False),
    (_terms([(OS, "In", [])]), False),  # In nothing pins nothing
    (_terms(), False),
]


@pytest.mark.parametrize(("targeting", "windows"), TARGETING)
@pytest.mark.parametrize("kind", ["Pod", "CronJob"])
def test_targeting_routes(evaluator: AdmissionPolicy, targeting: dict[str, Any],
                          windows: bool, kind: str) -> None:
    spec = {**targeting, "hostNetwork": True, "containers": [{"name": "c"}]}
    obj = _object(kind, spec)
    expected = ["host-network-ignored"] if windows else []
    assert check_verdict(obj, tuple(POLICY_RULES)) == expected
    assert policy_verdict(evaluator, obj) == expected


def _object(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    node: dict[str, Any] = {"spec": spec}
    for key in reversed(WORKLOAD_TEMPLATE_PATHS[kind]):
        node = {key: node}
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "w"}, **node}


LINUX_FIELDS = [("pod", name) for name in POD_LINUX_FIELDS] + [
    (where, name) for name in CONTAINER_LINUX_FIELDS
    for where in ("initContainers", "containers", "ephemeralContainers")
] + [("spec", name) for name in ("hostPID", "hostIPC", "shareProcessNamespace", "hostUsers")]


@pytest.mark.parametrize(("where", "name"), LINUX_FIELDS)
def test_each_linux_only_field_alone_is_reported(evaluator: AdmissionPolicy, where: str,
                                                 name: str) -> None:
    spec: dict[str, Any] = {"nodeSelector": {OS: "windows"}, "containers": [{"name": "c"}]}
    if where == "pod":
        spec["securityContext"] = {name: POD_LINUX_FIELDS[name]}
    elif where == "spec":
        spec[name] = True
    else:
        spec.setdefault(where, [{"name": "c"}])[0]["securityContext"] = {
            name: CONTAINER_LINUX_FIELDS[name]}
    obj = _object("Deployment", spec)
    assert check_verdict(obj, tuple(POLICY_RULES)) == ["windows-forbidden-field"]
    assert policy_verdict(evaluator, obj) == ["windows-forbidden-field"]


@pytest.mark.parametrize("where", ["annotations", "template"])
@pytest.mark.parametrize("rule", list(POLICY_RULES))
def test_the_ignore_annotation_silences_its_rule_alone(evaluator: AdmissionPolicy, where: str,
                                                      rule: str) -> None:
    spec = {"os": {"name": "windows"}, "hostNetwork": True, "hostPID": True,
            "containers": [{"name": "c"}]}
    obj = _object("Deployment", spec)
    annotations = {f"ignore-check.kubelet-winnet.io/{rule}": "reviewed"}
    if where == "annotations":
        obj["metadata"]["annotations"] = annotations
    else:
        obj["spec"]["template"]["metadata"] = {"annotations": annotations}
    others = [r for r in POLICY_RULES if r != rule]
    assert check_verdict(obj, tuple(POLICY_RULES)) == others
    assert policy_verdict(evaluator, obj) == others
