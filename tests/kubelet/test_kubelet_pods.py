"""The container environment (_kubelet/kubelet_pods.py) against kubelet_pods.go
makeEnvironmentVariables and the $(VAR) expansion it applies. Expected values come from
those rules."""

from __future__ import annotations

import base64
import platform
import subprocess
import sys
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet as kw
from kubelet_winnet._kubelet import quantity
from kubelet_winnet._kubelet.expansion import expand
from tests.go_oracle import GoOracle
from tests.strategies import require


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1",
                         "labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"containers": containers, **spec}}


# --- environment -------------------------------------------------------------------------


@given(text=st.text(alphabet="$()AB x", max_size=12))
@example(text="$(A)").via("defined")
@example(text="$$(A)").via("escaped")
@example(text="$(C)").via("undefined stays")
@example(text="$(A").via("unterminated")
def test_expansion_rules(text: str) -> None:
    """expansion.Expand: `$$` -> `$`; `$(NAME)` -> value or itself; lone `$x` kept."""
    env = {"A": "1", "B": "2"}
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                close = text.find(")", i + 2)
                if close != -1:
                    name = text[i + 2:close]
                    out.append(env.get(name, f"$({name})"))
                    i = close + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(text[i])
        i += 1
    assert expand(text, env) == "".join(out)


@pytest.mark.slow  # a bound checked at scale: time over a large generated value
def test_expansion_of_many_unterminated_references_is_linear() -> None:
    """A million unterminated `$(` (2 MB, within MAX_EXPANDED_CONTAINER) stay as they
    are, in a child given 60 s: a search for the closing `)` from each one would take
    hours (10^12 steps)."""
    code = (
        "from kubelet_winnet._kubelet.expansion import expand\n"
        "text = '$(' * 1_000_000 + '$$'\n"
        "assert expand(text, {}, limit=1 << 24) == '$(' * 1_000_000 + '$'\n"
    )
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True)


def test_env_sources() -> None:
    manifest = pod([{
        "name": "app", "image": "i",
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "250m"}},
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"},
                    {"secretRef": {"name": "missing", "optional": True}}],
        "env": [
            {"name": "LIT", "value": "a-$(CM_K)"},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "HOSTIP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            {"name": "PODIP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                               "divisor": "1Mi"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                               "divisor": "1m"}}},
            {"name": "SEC", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "no",
                                                              "optional": True}}},
        ],
    }])
    node = kw.NodeContext(node_name="n1", node_ips=("10.1.0.5",), allocatable_cpu="8")
    config = kw.container_config(manifest, "app", node=node, pod_ips=("10.244.0.9",),
                                 config_maps={"cm": {"K": "v"}}, secrets={"s": {"k": b"pw"}})
    assert {kv.key: kv.value.decode() for kv in config.envs} == {
        "CM_K": "v", "LIT": "a-v", "POD": "web", "NS": "shop", "APP": "web",
        "NODE": "n1", "HOSTIP": "10.1.0.5", "PODIP": "10.244.0.9",
        "MEM": "1024",  # ceil(1Gi / 1Mi)
        "CPU": "8",  # no cpu limit: node allocatable (defaultPodLimitsForDownwardAPI)
        "REQ": "250", "SEC": "pw",
    }


def test_env_errors_are_the_kubelets() -> None:
    def one(env: dict[str, Any], **kwargs: Any) -> None:
        kw.container_config(pod([{"name": "c", "env": [env]}]), "c", **kwargs)

    cm_ref = {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref)
    assert str(info.value) == "couldn't get configMap shop/cm, no kubeClient defined"
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref, config_maps={})
    assert str(info.value) == 'configmap "cm" not found'
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref, config_maps={"cm": {}})
    assert str(info.value) == "couldn't find key k in ConfigMap shop/cm"
    secret_ref = {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    with pytest.raises(kw.SandboxConfigError) as info:
        one(secret_ref, secrets={"s": {}})
    assert str(info.value) == "couldn't find key k in Secret shop/s"
    with pytest.raises(kw.SandboxConfigError) as info:
        one({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}})
    assert str(info.value) == "field label not supported: spec.bogus"
    with pytest.raises(kw.SandboxConfigError) as info:
        one({"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}})
    assert str(info.value) == "unsupported container resource : limits.gpu"
    with pytest.raises(kw.InvalidArgumentError):  # a ConfigMap's data is text
        one(cm_ref, config_maps={"cm": {"k": b"\xff"}})

env_names = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True)


@given(env=st.lists(st.tuples(env_names, st.text(alphabet="ab c-/", max_size=8)), max_size=6))
def test_literal_env_property(env: list[tuple[str, str]]) -> None:
    """makeEnvironmentVariables: env in declaration order, a later entry of the same name
    overriding an earlier one; literal values without `$` are kept as written."""
    manifest = pod([{"name": "c", "env": [{"name": k, "value": v} for k, v in env]}])
    got = [(kv.key, kv.value.decode()) for kv in kw.container_config(manifest, "c").envs]
    expected: dict[str, str] = {}
    for key, text in env:
        expected[key] = text
    assert got == list(expected.items())


# --- Go's semantics through the builder: FormatMap's %q, $ before a multibyte rune ---------


def _downward(field_path: str, metadata: dict[str, Any], version: str = "1.36") -> str:
    manifest = {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop", **metadata},
                "spec": {"containers": [{"name": "app", "image": "img", "env": [
                    {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": field_path}}}]}]}}
    config = kw.container_config(manifest, "app", kubelet_version=version)
    return {e.key: e.value.decode() for e in config.envs}["D"]


@pytest.mark.parametrize("field", ["annotations", "labels"])
def test_downward_api_map_is_go_format_map(field: str) -> None:
    """fieldpath.FormatMap: `%v=%q` per key, keys sorted; Go's %q keeps printable runes
    (é), writes \\a for BEL and \\x7f for DEL, and escapes what unicode.IsPrint refuses
    (U+2028, U+00AD): the value Go prints for this map."""
    value = _downward(f"metadata.{field}", {field: {"a": "x\x07y\x7fz\u2028\u00ad", "B": "é"}})
    assert value == 'B="é"\na="x\\ay\\x7fz\\u2028\\u00ad"'


# Any code point a manifest's UTF-8 can hold (no lone surrogates: protobuf refuses them).
_CHARACTERS = st.characters(exclude_categories=["Cs"])
_ANNOTATIONS = st.dictionaries(
    st.text(_CHARACTERS, min_size=1, max_size=8), st.text(_CHARACTERS, max_size=12),
    max_size=5,
)


@given(st.lists(_ANNOTATIONS, min_size=1, max_size=8))
def test_downward_api_annotations_match_go_format_map(
    go: GoOracle, maps: list[dict[str, str]]
) -> None:
    """`metadata.annotations` through fieldRef is FormatMap(pod.Annotations)
    (kubelet_pods.go podFieldSelectorRuntimeValue): the builder's env value and the Go
    oracle's fieldpath-style FormatMap, byte for byte."""
    sent = [{base64.b64encode(k.encode()).decode(): base64.b64encode(v.encode()).decode()
             for k, v in m.items()} for m in maps]
    want = [base64.b64decode(text) for text in go.ask("format_map", sent)]
    got = [_downward("metadata.annotations", {"annotations": m}).encode() for m in maps]
    assert got == want


# Kubelets before kubernetes#136325 read the character after a lone "$" as one byte and
# write string(byte): "$é" (24 c3 a9) becomes "$" + "Ã" (c3 83) + the stray byte a9.
_BYTE_WISE_DOLLAR_E = "24 c3 83 a9"


def _expanding(**container: Any) -> dict[str, Any]:
    return pod([{"name": "app", "image": "img", **container}])


@pytest.mark.parametrize(("version", "container", "field", "what"), [
    *[(version, {"command": ["run", "$é"]}, "spec.containers[0].command[1]", "command[1]")
      for version in ("1.26", "1.33", "1.34.0", "1.34.3", "1.35.0")],
    *[(version, {"args": ["$é"]}, "spec.containers[0].args[0]", "args[0]")
      for version in ("1.26", "1.33", "1.34.0", "1.34.3", "1.35.0")],
    # An environment value: refused where the kubelet marshals strings it checks.
    *[(version, {"env": [{"name": "GREETING", "value": "$é"}]},
       "spec.containers[0].env[0].value", 'variable "GREETING"')
      for version in ("1.34.0", "1.34.3", "1.35.0")],
])
def test_byte_wise_kubelets_refuse_a_dollar_before_a_multibyte_character(
    version: str, container: dict[str, Any], field: str, what: str
) -> None:
    with pytest.raises(kw.InvalidUtf8Error) as info:
        kw.container_config(_expanding(**container), "app", kubelet_version=version)
    assert info.value.field == field
    assert f"kubelet {version} expands {what} to " in str(info.value)
    assert f"(bytes {_BYTE_WISE_DOLLAR_E})" in str(info.value)
    assert info.value.value == bytes.fromhex(_BYTE_WISE_DOLLAR_E)


@pytest.mark.parametrize("version", ["1.34.4", "1.34", "1.35.1", "1.36", "1.38"])
def test_rune_wise_kubelets_keep_a_dollar_before_a_multibyte_character(version: str) -> None:
    """expand.go after #136325: "$" and the rune after it stay as written."""
    config = kw.container_config(
        _expanding(env=[{"name": "GREETING", "value": "x$é"}], command=["$é"],
                   args=["$(GREETING)"]),
        "app", kubelet_version=version,
    )
    assert [(e.key, e.value.decode()) for e in config.envs] == [("GREETING", "x$é")]
    assert list(config.command) == ["$é"]
    assert list(config.args) == ["x$é"]


@pytest.mark.parametrize("version", ["1.26", "1.33"])
def test_a_gogo_kubelet_sends_the_byte_wise_environment_value(version: str) -> None:
    """Before 1.34 gogo protobuf marshals a string without checking it: the mangled bytes
    of "$é" reach the runtime, which the bytes field of KeyValue carries."""
    config = kw.container_config(
        _expanding(env=[{"name": "GREETING", "value": "$é"}]), "app", kubelet_version=version
    )
    assert [(e.key, e.value) for e in config.envs] == [
        ("GREETING", bytes.fromhex(_BYTE_WISE_DOLLAR_E))
    ]


def test_byte_wise_expansion_of_ascii_is_unchanged() -> None:
    """Only a multi-byte character after a lone "$" differs between the two rules."""
    config = kw.container_config(
        _expanding(env=[{"name": "A", "value": "é$x"}, {"name": "B", "value": "$(A)$$é"}]),
        "app", kubelet_version="1.33",
    )
    assert [(e.key, e.value.decode()) for e in config.envs] == [("A", "é$x"), ("B", "é$x$é")]


def test_sub_path_expr_follows_the_kubelet_version() -> None:
    manifest = _expanding(
        env=[{"name": "DIR", "value": "logs"}],
        volumeMounts=[{"name": "data", "mountPath": "C:\\data", "subPathExpr": "$(DIR)$é"}],
    )
    manifest["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    with pytest.raises(kw.InvalidUtf8Error) as info:
        kw.container_config(manifest, "app", kubelet_version="1.32")
    assert info.value.field == "spec.containers[0].volumeMounts[0].subPathExpr"
    assert info.value.value == b"logs" + bytes.fromhex(_BYTE_WISE_DOLLAR_E)
    config = kw.container_config(manifest, "app", kubelet_version="1.36")
    assert any(m.host_path.endswith("\\logs$é") for m in config.mounts)


# --- downward API values and refusals (kubelet_pods.go, pkg/api/v1/resource/helpers.go) --


def _env_of(manifest: dict[str, Any], name: str = "c", **kwargs: Any) -> dict[str, str]:
    config = kw.container_config(manifest, name, **kwargs)
    return {pair.key: pair.value.decode() for pair in config.envs}


def _resource_env(resource: str, **ref: Any) -> dict[str, Any]:
    return {"name": "V", "valueFrom": {"resourceFieldRef": {"resource": resource, **ref}}}


# The node of these tests: allocatable 4 CPUs, 16Gi (17179869184 bytes) of memory and
# 100Gi (107374182400 bytes) of ephemeral storage.
_NODE = kw.NodeContext(allocatable_cpu="4", allocatable_memory="16Gi",
                       allocatable_ephemeral_storage="100Gi")


@pytest.mark.parametrize(
    ("limits", "resource", "want"),
    [
        # MergeContainerResourceLimits: "!exists || quantity.IsZero()" -> allocatable
        ({"cpu": "0"}, "limits.cpu", "4"),
        ({"memory": "0"}, "limits.memory", "17179869184"),
        ({"cpu": "0m", "memory": "0Gi"}, "limits.memory", "17179869184"),
        ({"cpu": "500m"}, "limits.cpu", "1"),
        # ... for ephemeral-storage too ("ResourceCPU, ResourceMemory,
        # ResourceEphemeralStorage"), missing or zero; a request is never defaulted.
        ({}, "limits.ephemeral-storage", "107374182400"),
        ({"ephemeral-storage": "0"}, "limits.ephemeral-storage", "107374182400"),
        ({"ephemeral-storage": "1Gi"}, "limits.ephemeral-storage", "1073741824"),
        ({}, "requests.ephemeral-storage", "0"),
    ],
)
def test_a_zero_limit_reads_node_allocatable(
    limits: dict[str, str], resource: str, want: str
) -> None:
    container = {"name": "c", "resources": {"limits": limits}, "env": [_resource_env(resource)]}
    assert _env_of(pod([container]), node=_NODE)["V"] == want


def test_an_init_container_named_by_container_name_keeps_no_limit() -> None:
    """defaultPodLimitsForDownwardAPI merges allocatable into spec.containers and the
    container being started; findContainerInPod also finds init containers, unmerged."""
    env = [_resource_env("limits.memory", containerName="setup"),
           _resource_env("limits.memory", containerName="side") | {"name": "W"}]
    manifest = pod([{"name": "c", "env": env}, {"name": "side"}],
                   initContainers=[{"name": "setup"}])
    values = _env_of(manifest, node=_NODE)
    assert values["V"] == "0" and values["W"] == "17179869184"


def test_an_init_container_reading_itself_gets_allocatable() -> None:
    manifest = pod([{"name": "c"}], initContainers=[
        {"name": "setup", "env": [_resource_env("limits.cpu")]}])
    assert _env_of(manifest, "setup", node=_NODE)["V"] == "4"


@pytest.mark.parametrize(
    ("resources", "resource", "divisor", "want"),
    [
        # ExtractContainerResourceValue: requests./limits.hugepages-<size> are answered,
        # Value() of a missing one is 0; hugepages get no allocatable default.
        ({"limits": {"hugepages-2Mi": "4Mi"}}, "limits.hugepages-2Mi", None, "4194304"),
        ({"limits": {"hugepages-2Mi": "4Mi"}}, "requests.hugepages-2Mi", "1Mi", "4"),
        ({}, "limits.hugepages-1Gi", None, "0"),
        # A zero divisor means 1 ("if divisor.Cmp(fs.Divisor) == 0 { divisor = 1 }").
        ({"limits": {"memory": "1Gi"}}, "limits.memory", "0", "1073741824"),
        ({"limits": {"cpu": "1500m"}}, "limits.cpu", "0", "2"),
    ],
)
def test_resource_field_ref_values(
    resources: dict[str, Any], resource: str, divisor: str | None, want: str
) -> None:
    ref = {} if divisor is None else {"divisor": divisor}
    container = {"name": "c", "resources": resources, "env": [_resource_env(resource, **ref)]}
    assert _env_of(pod([container]), node=_NODE)["V"] == want


def test_pod_level_limits_replace_allocatable_from_1_34() -> None:
    """defaultPodLimitsForDownwardAPI: with PodLevelResources (beta, on from 1.34) the
    pod's non-zero spec.resources.limits replace allocatable."""
    container = {"name": "c", "env": [_resource_env("limits.cpu"),
                                      _resource_env("limits.memory") | {"name": "M"}]}
    manifest = pod([container], resources={"limits": {"cpu": "2", "memory": "0"}})
    assert _env_of(manifest, node=_NODE, kubelet_version="1.34") == {
        "V": "2", "M": "17179869184"}
    assert _env_of(manifest, node=_NODE, kubelet_version="1.33")["V"] == "4"


def test_a_pod_level_storage_limit_leaves_the_node_allocatable() -> None:
    """Pod-level resources are cpu and memory (SupportedPodLevelResources): a missing
    ephemeral-storage limit reads node allocatable whatever the pod sets."""
    container = {"name": "c", "env": [_resource_env("limits.ephemeral-storage")]}
    manifest = pod([container], resources={"limits": {"ephemeral-storage": "5Gi"}})
    assert _env_of(manifest, node=_NODE, kubelet_version="1.34")["V"] == "107374182400"


@pytest.mark.parametrize(
    ("memory", "version", "want"),
    [
        # Up to 1.37: int64(math.Ceil(float64(Value()) / float64(divisor.Value()))).
        # 2^53 + 1 is no float64: it rounds to 2^53.
        ("9007199254740993", "1.37", "9007199254740992"),
        # MaxInt64 rounds up to 2^63 as a float64, which converts to MinInt64 on amd64.
        ("9223372036854775807", "1.32", "-9223372036854775808"),
        # 1.38 (convertQuantityToString): exact, and saturating at MaxInt64.
        ("9007199254740993", "1.38", "9007199254740993"),
        ("9223372036854775807", "1.38", "9223372036854775807"),
    ],
)
def test_resource_division_follows_the_release(memory: str, version: str, want: str) -> None:
    container = {"name": "c", "resources": {"limits": {"memory": memory}},
                 "env": [_resource_env("limits.memory")]}
    assert _env_of(pod([container]), kubelet_version=version)["V"] == want


@pytest.mark.parametrize(
    ("memory", "divisor", "version", "want"),
    [
        # Up to 1.37 the divisor's Value() is int64 arithmetic on int64Amount{1, 19}:
        # positiveScaleInt64's loop overflows to 0, so 1Gi / 0.0 is +Inf and 0 / 0.0 is
        # NaN, both MinInt64 on amd64 (not the exact 10^19 wrapped).
        ("1Gi", "1e19", "1.32", "-9223372036854775808"),
        ("1e19", "1e19", "1.32", "-9223372036854775808"),
        # A 20-digit quantity is an inf.Dec: Value() is its low 64 bits, 10^19 - 2^64.
        ("10000000000000000000", "1", "1.37", "-8446744073709551616"),
        # 1.38 divides the exact values.
        ("1Gi", "1e19", "1.38", "1"),
        ("1e19", "1e19", "1.38", "1"),
    ],
)
def test_resource_values_past_int64_follow_the_release(
    memory: str, divisor: str, version: str, want: str
) -> None:
    # read from a second container: the one started would refuse a memory limit past
    # the int64 memory_limit_in_bytes before its environment is made
    env = [_resource_env("limits.memory", divisor=divisor, containerName="k")]
    manifest = pod([{"name": "c", "env": env},
                    {"name": "k", "resources": {"limits": {"memory": memory}}}])
    assert _env_of(manifest, kubelet_version=version)["V"] == want


@pytest.mark.parametrize(
    ("divisor", "version", "want"),
    [
        # No memory limit: node allocatable (1Gi here) through MergeContainerResourceLimits
        # (kubelet_resources.go), divided by divisor.Value(); Value() of 1m rounds up to 1.
        ("1", "1.37", "1073741824"),
        ("1m", "1.37", "1073741824"),
        ("1m", "1.36", "1073741824"),
        # 1.38 divides the exact quantities: 1Gi / 0.001.
        ("1m", "1.38", "1073741824000"),
    ],
)
def test_a_container_without_a_memory_limit_reads_allocatable_bytes(
    divisor: str, version: str, want: str
) -> None:
    container = {"name": "c", "env": [_resource_env("limits.memory", divisor=divisor)]}
    node = kw.NodeContext(allocatable_cpu="4", allocatable_memory="1Gi")
    assert _env_of(pod([container]), node=node, kubelet_version=version)["V"] == want


# Divisors below one byte, each with its exact value.
_SUB_UNIT_DIVISORS = {"1m": Fraction(1, 1000), "500m": Fraction(1, 2), "0.5": Fraction(1, 2),
                      "999m": Fraction(999, 1000), "1u": Fraction(1, 10**6),
                      "250n": Fraction(1, 4 * 10**6)}


@pytest.mark.parametrize("divisor", sorted(_SUB_UNIT_DIVISORS))
@pytest.mark.parametrize("allocatable", ["1Gi", "3Gi", "1500M", "7"])
def test_a_divisor_below_one_byte_follows_the_release(
    go: GoOracle, divisor: str, allocatable: str
) -> None:
    """A container without a memory limit reads node allocatable (MergeContainerResourceLimits,
    kubelet_resources.go). Through 1.37, convertResourceMemoryToString (helpers.go) divides
    Value() by Value(): Value() rounds a divisor below one up to 1, so the bytes come out
    whole (Go decides that rounding and the float division here); 1.38 divides the exact
    quantities (convertQuantityToString), a thousand times more for 1m."""
    forms = [["int64" if fast else "dec", str(number), str(scale), "0"]
             for text in (allocatable, divisor)
             for fast, number, scale in [quantity.go_amount(text)]]
    amount, by = go.ask("scaled_value", forms)
    [float_ratio] = go.ask("int64", [["ceil_div_float", amount, by]])
    exact = Fraction(int(amount)) / _SUB_UNIT_DIVISORS[divisor]
    exact_ratio = str(-(-exact.numerator // exact.denominator))
    container = {"name": "c", "env": [_resource_env("limits.memory", divisor=divisor)]}
    node = kw.NodeContext(allocatable_cpu="4", allocatable_memory=allocatable)
    got = {version: _env_of(pod([container]), node=node, kubelet_version=version)["V"]
           for version in ("1.36", "1.37", "1.38")}
    assert got == {"1.36": float_ratio, "1.37": float_ratio, "1.38": exact_ratio}
    assert by == "1"  # Value() of every divisor here rounds up to one byte


_BIG = st.sampled_from(["1Gi", "1e19", "10E", "1e20", "16Ei", "9223372036854775807",
                        "12345678901234567890", "10000000000G", "1", "1m", "1k", "500m",
                        "1.5Ei", "0.5"])


@given(st.lists(st.tuples(st.sampled_from(["cpu", "memory"]), _BIG, _BIG), min_size=1,
                max_size=12))
def test_float_resource_division_is_gos(
    go: GoOracle, cases: list[tuple[str, str, str]]
) -> None:
    """Up to 1.37 (pkg/api/v1/resource/helpers.go): int64(math.Ceil(float64(q.X()) /
    float64(divisor.X()))), X MilliValue for cpu and Value otherwise; each X from Go's
    int64 arithmetic on the stored form, and the division and conversion Go's own."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip(f"the out-of-range conversion is amd64's; this is {platform.machine()}")
    forms = [[("int64" if fast else "dec"), str(number), str(scale),
              "-3" if name == "cpu" else "0"]
             for name, amount, divisor in cases for text in (amount, divisor)
             for fast, number, scale in [quantity.go_amount(text)]]
    values = go.ask("scaled_value", forms)
    want = go.ask("int64", [["ceil_div_float", values[i], values[i + 1]]
                            for i in range(0, len(values), 2)])
    # one container per case, read by containerName from the container "c"
    env = [_resource_env(f"limits.{name}", divisor=divisor, containerName=f"k{i}")
           | {"name": f"V{i}"} for i, (name, _, divisor) in enumerate(cases)]
    others = [{"name": f"k{i}", "resources": {"limits": {name: amount}}}
              for i, (name, amount, _) in enumerate(cases)]
    got = _env_of(pod([{"name": "c", "env": env}, *others]), kubelet_version="1.32")
    assert [got[f"V{i}"] for i in range(len(cases))] == want


@pytest.mark.parametrize(
    ("node_ips", "hostIP", "hostIPs"),
    [
        # GetNodeHostIPs: the first IP and the first of the other family; net.IP.String
        # prints an IPv4-mapped address as IPv4 (it is IPv4 to To4()).
        (("::ffff:10.0.0.5",), "10.0.0.5", "10.0.0.5"),
        (("10.0.0.5", "10.0.0.6", "fd00::5", "fd00::6"), "10.0.0.5", "10.0.0.5,fd00::5"),
        (("fd00::5", "::ffff:10.0.0.7", "10.0.0.8"), "fd00::5", "fd00::5,10.0.0.7"),
        (("FD00:0:0::5",), "fd00::5", "fd00::5"),
    ],
)
def test_host_ips_are_one_per_family_as_go_prints_them(
    node_ips: tuple[str, ...], hostIP: str, hostIPs: str
) -> None:
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
           {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}}]
    values = _env_of(pod([{"name": "c", "env": env}]), node=kw.NodeContext(node_ips=node_ips))
    assert values == {"A": hostIP, "B": hostIPs}


def test_a_node_without_addresses_has_no_host_ip() -> None:
    """GetNodeHostIPs: "host IP unknown; known addresses: %v" of an empty list."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}]
    with pytest.raises(kw.SandboxConfigError, match=r"^host IP unknown; known addresses: \[\]$"):
        _env_of(pod([{"name": "c", "env": env}]), node=kw.NodeContext(node_ips=()))


def test_spec_host_is_spec_node_name() -> None:
    """ConvertDownwardAPIFieldLabel: spec.host -> spec.nodeName (old v1 clients)."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.host"}}}]
    assert _env_of(pod([{"name": "c", "env": env}], nodeName="n7"))["A"] == "n7"


_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("path", "version", "message"),
    [
        # ExtractFieldPathAsString: the key must pass IsQualifiedName.
        ("metadata.labels['-x']", "1.32", f"invalid key subscript in metadata.labels['-x']: "
         f"{_NAME_PART}"),
        ("metadata.annotations['a/b/c']", "1.32",
         "invalid key subscript in metadata.annotations['a/b/c']: a qualified name must "
         "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
         "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
         "subdomain prefix and '/' (e.g. 'example.com/MyName')"),
        # apimachinery v0.35: content.IsLabelKey ("a valid label key", lengths in bytes)
        ("metadata.annotations['a/b/c']", "1.35",
         "invalid key subscript in metadata.annotations['a/b/c']: a valid label key must "
         "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
         "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
         "subdomain prefix and '/' (e.g. 'example.com/MyName')"),
        (f"metadata.labels['{'k' * 64}']", "1.34",
         f"invalid key subscript in metadata.labels['{'k' * 64}']: name part must be no "
         "more than 63 characters"),
        (f"metadata.labels['{'k' * 64}']", "1.35",
         f"invalid key subscript in metadata.labels['{'k' * 64}']: name part must be no "
         "more than 63 bytes"),
        # SplitMaybeSubscriptedPath needs the closing "']": without it, no subscript.
        ("metadata.labels['app", "1.32", "field label not supported: metadata.labels['app"),
        # ConvertDownwardAPIFieldLabel: a subscript on any other field
        ("spec.nodeName['x']", "1.32",
         "field label does not support subscript: spec.nodeName['x']"),
    ],
)
def test_field_path_refusals_are_the_kubelets(path: str, version: str, message: str) -> None:
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": path}}}]
    with pytest.raises(kw.SandboxConfigError) as info:
        _env_of(pod([{"name": "c", "env": env}]), kubelet_version=version)
    assert str(info.value) == message


def test_annotation_subscript_keys_are_checked_lowercased() -> None:
    """ExtractFieldPathAsString lowercases an annotation key before IsQualifiedName and
    looks the key up as written."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.annotations['Example.COM/Note']"}}}]
    manifest = pod([{"name": "c", "env": env}])
    manifest["metadata"]["annotations"] = {"Example.COM/Note": "yes"}
    assert _env_of(manifest)["A"] == "yes"


def test_container_name_of_an_ephemeral_container_is_not_found() -> None:
    """findContainerInPod searches containers and init containers only."""
    manifest = pod([{"name": "c", "env": [_resource_env("limits.cpu", containerName="dbg")]}],
                   ephemeralContainers=[{"name": "dbg"}])
    with pytest.raises(kw.SandboxConfigError, match=r"^container dbg not found$"):
        _env_of(manifest)


def test_a_node_whose_addresses_go_cannot_parse_has_no_host_ip() -> None:
    """ParseIPSloppy refuses an IPv6 zone, so GetNodeHostIPs finds no address and prints
    the node's addresses (here its InternalIPs) with %v."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}]
    node = kw.NodeContext(node_ips=("fe80::1%eth0",))
    with pytest.raises(kw.SandboxConfigError) as info:
        _env_of(pod([{"name": "c", "env": env}]), node=node)
    assert str(info.value) == "host IP unknown; known addresses: [{InternalIP fe80::1%eth0}]"


# --- a Secret's bytes as environment values (cri-api KeyValue.value: string, then bytes) --

# kubernetes#139132 / #139168 and the cri-api commits that made `bytes value = 2`:
# d3d9c71 on master (kubernetes-1.37.0-alpha.1), a544ba3 (tag kubernetes-1.34.9), 48b4f42
# (kubernetes-1.35.6), 5f84746 (kubernetes-1.36.2). Before 1.34 gogo protobuf marshalled
# any Go string; from 1.34.0 protobuf-go refuses a string that is not UTF-8 at marshal
# ("string field contains invalid UTF-8"), until the patch release of each branch above.
_SENDS = ["1.26", "1.33", "1.33.9", "1.34.9", "1.34.12", "1.35.6", "1.36.2", "1.36",
          "1.37.0", "1.38"]
_REFUSES = ["1.34.0", "1.34.8", "1.35.0", "1.35.5", "1.36.0", "1.36.1"]
_NOT_UTF8 = b"\xff\xfe\x00\xc3"  # ff and fe never start UTF-8; c3 ends without its byte
_SECRET = {  # as `kubectl get secret s -o json` prints it (data in base64)
    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
    "metadata": {"name": "s", "namespace": "shop"},
    "data": {"bin": "//4Aww==", "text": "aGk="},  # ff fe 00 c3; "hi"
}


def _secret_env(**container: Any) -> dict[str, Any]:
    return pod([{"name": "c", "image": "i", **container}])


_BY_KEY_REF = {"env": [{"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "bin"}}}]}


@pytest.mark.parametrize("version", _SENDS)
def test_a_secrets_bytes_are_sent_where_the_release_sends_them(version: str) -> None:
    config = kw.container_config(_secret_env(**_BY_KEY_REF), "c", kubelet_version=version,
                                 secrets={"s": _SECRET})
    assert [(e.key, e.value) for e in config.envs] == [("B", _NOT_UTF8)]
    # The wire encoding of bytes and string is one: tag 0x12 (field 2, length-delimited).
    assert b"\x12\x04" + _NOT_UTF8 in config.envs[0].SerializeToString()


@pytest.mark.parametrize("version", _REFUSES)
def test_a_secrets_bytes_are_refused_where_the_release_marshals_a_checked_string(
    version: str,
) -> None:
    with pytest.raises(kw.InvalidUtf8Error) as info:
        kw.container_config(_secret_env(**_BY_KEY_REF), "c", kubelet_version=version,
                            secrets={"s": _SECRET})
    assert info.value.field == "spec.containers[0].env[0].value"
    assert info.value.value == _NOT_UTF8
    message = str(info.value)
    assert message.startswith(
        f'spec.containers[0].env[0].value: kubelet {version} cannot send variable "B": its '
        "value, 4 bytes from a Secret (not shown), is not UTF-8"
    )
    assert ('fails with "grpc: error while marshaling: string field contains invalid UTF-8" '
            "and the container waits in CreateContainerError") in message
    assert "bytes again from 1.34.9, 1.35.6, 1.36.2 and 1.37.0" in message
    assert "\\xff" not in message and "ff fe" not in message  # the Secret is not echoed


@pytest.mark.parametrize(("version", "sent"), [
    ("1.34.8", False), ("1.34.9", True), ("1.35.5", False), ("1.35.6", True),
    ("1.36.1", False), ("1.36.2", True), ("1.36", True), ("1.37.0", True),
])
def test_env_from_and_references_carry_the_bytes(version: str, sent: bool) -> None:
    """envFrom copies `string(v)` of each key; `$(VAR)` appends a variable's value as it is."""
    manifest = _secret_env(
        envFrom=[{"secretRef": {"name": "s"}, "prefix": "S_"}],
        env=[{"name": "R", "value": "<$(S_bin)>"}],
    )
    def build() -> Any:
        return kw.container_config(manifest, "c", kubelet_version=version,
                                   secrets={"s": _SECRET})

    if not sent:
        with pytest.raises(kw.InvalidUtf8Error) as info:
            build()
        assert info.value.field == "spec.containers[0].envFrom[0].secretRef"
        assert f'kubelet {version} cannot send variable "S_bin"' in str(info.value)
        return
    assert [(e.key, e.value) for e in build().envs] == [
        ("S_bin", _NOT_UTF8), ("S_text", b"hi"), ("R", b"<" + _NOT_UTF8 + b">"),
    ]


@pytest.mark.parametrize("version", ["1.33", "1.36.2", "1.37.0", "1.38"])
@pytest.mark.parametrize(("container", "field", "what"), [
    ({"command": ["run", "$(B)"]}, "spec.containers[0].command[1]", "command[1]"),
    ({"args": ["x$(B)"]}, "spec.containers[0].args[0]", "args[0]"),
])
def test_command_and_args_stay_strings(
    version: str, container: dict[str, Any], field: str, what: str
) -> None:
    """Only KeyValue.value became bytes: command and args holding a Secret's bytes are
    strings in every cri-api (a 1.33 kubelet sends them, but no string here holds them)."""
    with pytest.raises(kw.InvalidUtf8Error) as info:
        kw.container_config(_secret_env(**_BY_KEY_REF, **container), "c",
                            kubelet_version=version, secrets={"s": _SECRET})
    assert info.value.field == field
    message = str(info.value)
    assert message.startswith(
        f"{field}: kubelet {version} expands {what} to a value that is not UTF-8 "
        f"({len(info.value.value)} bytes, not shown) because a variable it references holds "
        f"a Secret's bytes, and {what} is a string in every release's cri-api"
    )
    assert "\\xff" not in message


def test_a_secret_object_is_read_as_the_api_holds_it() -> None:
    """data is base64 (line breaks skipped, as Go's StdEncoding does), null is empty, and
    stringData is laid over data by key, as the API server merges it on write."""
    secret = {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
        "data": {"a": "aGVs\nbG8=", "b": None, "c": "b2xk"},  # "hello", -, "old"
        "stringData": {"c": "new", "d": "ü"},
    }
    manifest = _secret_env(envFrom=[{"secretRef": {"name": "s"}}])
    config = kw.container_config(manifest, "c", secrets={"s": secret})
    assert [(e.key, e.value) for e in config.envs] == [
        ("a", b"hello"), ("b", b""), ("c", b"new"), ("d", "ü".encode()),
    ]


def test_a_kubernetes_client_secret_is_read_like_its_json() -> None:
    client = require("kubernetes.client")
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="s"), data={"bin": "//4Aww=="})
    # The signature names mappings; a V1Secret is read through its attributes.
    config = kw.container_config(_secret_env(**_BY_KEY_REF), "c",
                                 secrets={"s": secret})
    assert config.envs[0].value == _NOT_UTF8


def test_a_plain_mapping_takes_bytes_as_they_are_and_text_as_text() -> None:
    config = kw.container_config(
        _secret_env(envFrom=[{"secretRef": {"name": "s"}}]), "c",
        secrets={"s": {"bin": _NOT_UTF8, "text": "aGk="}},  # a plain value is not base64
    )
    assert [(e.key, e.value) for e in config.envs] == [("bin", _NOT_UTF8), ("text", b"aGk=")]


@pytest.mark.parametrize(("secret", "argument", "expected", "got"), [
    ({**_SECRET, "data": {"k": "a"}}, 'secrets["s"].data["k"]',
     "base64 text (a Secret's data as the API holds it)", "other text (1 character, not shown)"),
    ({**_SECRET, "data": {"k": "aGk"}}, 'secrets["s"].data["k"]',  # padding is required
     "base64 text (a Secret's data as the API holds it)", "other text (3 characters, not shown)"),
    ({**_SECRET, "data": {"k": "aG é="}}, 'secrets["s"].data["k"]',
     "base64 text (a Secret's data as the API holds it)", "other text (5 characters, not shown)"),
    ({**_SECRET, "data": {"k": 7}}, 'secrets["s"].data["k"]', "base64 text", "int"),
    ({**_SECRET, "data": ["k"]}, 'secrets["s"].data', "a mapping", "list"),
    ({**_SECRET, "stringData": {"k": b"x"}}, 'secrets["s"].stringData["k"]', "text", "bytes"),
    ({**_SECRET, "metadata": {"name": "s", "namespace": "other"}}, 'secrets["s"]',
     "a Secret of the pod's namespace \"shop\"", 'one of namespace "other"'),
])
def test_bad_secret_objects_name_the_key_and_never_the_value(
    secret: dict[str, Any], argument: str, expected: str, got: str
) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.container_config(_secret_env(**_BY_KEY_REF), "c", secrets={"s": secret})
    assert (info.value.argument, info.value.expected) == (argument, expected)
    assert info.value.got.startswith(got)
    assert "aG" not in str(info.value)


@pytest.mark.parametrize(("value", "expected", "got"), [
    ("x\ud800", "str values that are valid Unicode", "a str with a lone surrogate"),
    (bytearray(b"x"), "str or bytes values", "bytearray"),
    (7, "str or bytes values", "int"),
])
def test_a_plain_secret_value_of_another_kind_is_refused(
    value: object, expected: str, got: str
) -> None:
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.container_config(_secret_env(envFrom=[{"secretRef": {"name": "s"}}]), "c",
                            secrets={"s": {"k": value}})
    assert (info.value.argument, info.value.expected, info.value.got) == ("secrets", expected, got)


@pytest.mark.slow  # a bound checked at scale: a secret of many megabytes
def test_a_huge_secret_is_bounded_like_any_environment() -> None:
    """24 MiB of base64 (18 MiB decoded) passes the container's 16 MiB budget."""
    secret = {**_SECRET, "data": {"k": "QUFB" * (6 << 20)}}
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(_secret_env(envFrom=[{"secretRef": {"name": "s"}}]), "c",
                            secrets={"s": secret})
    assert info.value.field == "spec.containers[0].envFrom[0].secretRef"
    assert "would pass 16777216 bytes" in str(info.value)


@pytest.mark.parametrize("version", ["1.33", "1.37.0"])
def test_a_secrets_bytes_in_a_sub_path_are_refused_in_every_release(version: str) -> None:
    """Mount paths are strings in every cri-api; the value is not shown."""
    manifest = _secret_env(
        **_BY_KEY_REF,
        volumeMounts=[{"name": "data", "mountPath": "C:\\data", "subPathExpr": "$(B)"}],
    )
    manifest["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    with pytest.raises(kw.InvalidUtf8Error) as info:
        kw.container_config(manifest, "c", kubelet_version=version, secrets={"s": _SECRET})
    assert info.value.field == "spec.containers[0].volumeMounts[0].subPathExpr"
    assert "because a variable it references holds a Secret's bytes" in str(info.value)
    assert "\\xff" not in str(info.value)
