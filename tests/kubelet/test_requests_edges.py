"""Edges of the request builders and the pod reader, each with the input that once broke
it. Expected values come from the kubelet rules named in each
test (Go ``len`` counts bytes; ``memory_limit_in_bytes`` is an int64; the library's own
expansion bounds in docs/requests.md), never from running the builders.
"""

from __future__ import annotations

import enum
import types
from typing import Any

import pytest

import kubelet_winnet as kw
from kubelet_winnet._kubelet.kubelet_pods import (
    MAX_EXPANDED_CONTAINER,
    MAX_EXPANDED_VALUE,
)
from tests.strategies import PlainMapping, deep_list


def _pod(container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "web", "namespace": "ns", "uid": "u"},
            "spec": {"containers": [container or {"name": "c", "image": "i"}], **spec}}


# --- memory limits past int64 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "bytes_"),
    [("8Ei", 8 * 2**60), ("999E", 999 * 10**18), ("1e30", 10**30)],
)
def test_memory_limit_past_int64_is_a_typed_error(limit: str, bytes_: int) -> None:
    """memory_limit_in_bytes is an int64: 2**63 bytes and more cannot be sent."""
    assert bytes_ > 2**63 - 1
    pod = _pod({"name": "c", "image": "i", "resources": {"limits": {"memory": limit}}})
    for build in (
        lambda: kw.container_config(pod, "c"),
        lambda: kw.create_container_request(pod, "c", pod_sandbox_id="x"),
    ):
        with pytest.raises(kw.InvalidPodError) as caught:
            build()
        assert caught.value.field == "spec.containers[0].resources.limits.memory"
        assert f"a limit of {bytes_} bytes does not fit" in str(caught.value)
        assert str(2**63 - 1) in str(caught.value)


def test_largest_int64_memory_limit_is_sent() -> None:
    limit = str(2**63 - 1)
    pod = _pod({"name": "c", "image": "i", "resources": {"limits": {"memory": limit}}})
    config = kw.container_config(pod, "c")
    assert config.windows.resources.memory_limit_in_bytes == 2**63 - 1


# --- Mappings that are not dicts ---------------------------------------------------------


def test_plain_mapping_metadata_limits_and_template() -> None:
    """A collections.abc.Mapping reads like the dict it wraps (no RecursionError)."""
    pod = _pod({"name": "c", "image": "i",
                "resources": {"limits": PlainMapping({"memory": "1Gi"})}})
    pod["metadata"] = PlainMapping({"name": "web", "namespace": "ns", "uid": "u",
                                    "labels": PlainMapping({"app": "web"})})
    config = kw.pod_sandbox_config(pod)
    assert config.metadata.name == "web"
    assert dict(config.labels)["app"] == "web"
    assert kw.container_config(pod, "c").windows.resources.memory_limit_in_bytes == 2**30
    deployment = {"kind": "Deployment", "metadata": {"name": "d", "namespace": "shop"},
                  "spec": {"template": {"metadata": PlainMapping({"labels": {"x": "y"}}),
                                        "spec": _pod()["spec"]}}}
    sandbox = kw.pod_sandbox_config(deployment)
    # A template takes the workload's name and namespace (pod.view_pod).
    assert (sandbox.metadata.name, sandbox.metadata.namespace) == ("d", "shop")
    assert dict(sandbox.labels)["x"] == "y"


# --- $(VAR) expansion bounds --------------------------------------------------------------


def _doubling(count: int, base: str = "ab") -> list[dict[str, str]]:
    env = [{"name": "V0", "value": base}]
    env += [{"name": f"V{i}", "value": f"$(V{i - 1})$(V{i - 1})"} for i in range(1, count)]
    return env


def test_doubling_variables_stop_at_the_value_bound() -> None:
    """V_i holds 2 * 2**i bytes: the first past MAX_EXPANDED_VALUE (2**20) is V20."""
    first = next(i for i in range(64) if 2 * 2**i > MAX_EXPANDED_VALUE)
    assert first == 20
    pod = _pod({"name": "c", "image": "i", "env": _doubling(29)})
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(pod, "c")
    assert caught.value.field == f"spec.containers[0].env[{first}].value"
    assert f'variable "V{first}" expands to more than {MAX_EXPANDED_VALUE} bytes' in str(
        caught.value
    )
    assert "docs/requests.md" in str(caught.value)


def test_variables_below_the_bound_expand_as_the_kubelet_does() -> None:
    pod = _pod({"name": "c", "image": "i", "env": _doubling(20)})  # V19: 2**20 bytes
    envs = {kv.key: kv.value.decode() for kv in kw.container_config(pod, "c").envs}
    assert envs["V19"] == "ab" * 2**19
    assert len(envs["V19"].encode()) == MAX_EXPANDED_VALUE


def test_bytes_not_characters_are_counted() -> None:
    """'é' is two UTF-8 bytes: 2**19 + 1 of them pass 2**20 bytes."""
    count = MAX_EXPANDED_VALUE // 2 + 1
    env = [{"name": "A", "value": "é" * (count // 2)},
           {"name": "B", "value": "$(A)$(A)é"}]
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(_pod({"name": "c", "image": "i", "env": env}), "c")
    assert caught.value.field == "spec.containers[0].env[1].value"


def test_container_bound_over_many_variables() -> None:
    """Each V_i is a 900,000-byte copy of V0: the container passes 16 MiB at the
    variable that makes its (i + 1) values exceed MAX_EXPANDED_CONTAINER."""
    size = 900_000
    env = [{"name": "V0", "value": "x" * size}]
    env += [{"name": f"V{i}", "value": "$(V0)"} for i in range(1, 40)]
    first = next(i for i in range(40) if size * (i + 1) > MAX_EXPANDED_CONTAINER)
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(_pod({"name": "c", "image": "i", "env": env}), "c")
    assert caught.value.field == f"spec.containers[0].env[{first}].value"
    message = str(caught.value)
    assert f'variable "V{first}"' in message
    assert f'container "c" would pass {MAX_EXPANDED_CONTAINER} bytes' in message


def test_args_count_against_the_container_bound() -> None:
    size = 900_000
    container = {"name": "c", "image": "i", "env": [{"name": "V", "value": "x" * size}],
                 "args": ["$(V)"] * 40}
    left = MAX_EXPANDED_CONTAINER - size
    first = next(k for k in range(40) if left - size * k < size)
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(_pod(container), "c")
    assert caught.value.field == f"spec.containers[0].args[{first}]"


def test_each_container_has_its_own_bound() -> None:
    """The bound is per container: two containers of 10 MB each are both built."""
    env = [{"name": "V", "value": "x" * 1_000_000}]
    env += [{"name": f"W{i}", "value": "$(V)"} for i in range(9)]
    pod = _pod({"name": "a", "image": "i", "env": env})
    pod["spec"]["containers"].append({"name": "b", "image": "i", "env": env})
    for name in ("a", "b"):
        assert len(kw.container_config(pod, name).envs) == 10


# --- value subclasses and enum members on the attribute path ------------------------------


class StrSub(str):
    pass


class IntSub(int):
    pass


class Colour(enum.Enum):
    RED = 1


@pytest.mark.parametrize("value", [StrSub("true"), IntSub(1), Colour.RED],
                         ids=["str subclass", "int subclass", "enum member"])
def test_values_with_a_dict_are_refused_like_the_dict_path(value: Any) -> None:
    with pytest.raises(kw.InvalidPodError) as from_dict:
        kw.windows_sandbox_config({"spec": "true"})
    assert from_dict.value.field == "spec"
    for build in (kw.windows_sandbox_config, kw.pod_sandbox_config, kw.explain):
        with pytest.raises(kw.InvalidPodError) as caught:
            build(types.SimpleNamespace(spec=value))
        assert caught.value.field == "spec"
        assert caught.value.reason.startswith("expected an object, got ")


def test_str_subclass_in_a_string_field_is_refused() -> None:
    spec = types.SimpleNamespace(host_network=StrSub("true"), containers=[])
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.windows_sandbox_config(types.SimpleNamespace(spec=spec))
    assert caught.value.field == "spec.hostNetwork"


# --- Go len() counts bytes ----------------------------------------------------------------


def test_search_paths_are_measured_in_bytes() -> None:
    """formDNSSearchFitsLimits drops a search longer than 253 (DNS1123SubdomainMaxLength)
    bytes: 200 'é' are 400 bytes (dropped), 126 are 252 bytes (kept)."""
    long, fits = "é" * 200, "é" * 126
    pod = _pod(dnsConfig={"searches": [long, fits]})
    searches = list(kw.pod_sandbox_config(pod).dns_config.searches)
    assert long not in searches
    assert fits in searches


def test_search_line_limit_counts_bytes() -> None:
    """Legacy limit (ExpandedDNSConfig off, 1.26): a 256-byte search line. Cluster
    searches for namespace ns + cluster.local take 47 bytes with their spaces; two
    100-byte searches of 'é' (50 characters each) bring the line to 249 bytes, a third
    passes 256 and is cut."""
    cluster = ["ns.svc.cluster.local", "svc.cluster.local", "cluster.local"]
    extra = ["é" * 49 + str(i) * 2 for i in range(3)]  # 100 bytes each
    assert all(len(s.encode()) == 100 for s in extra)
    line = len(" ".join(cluster + extra[:2]).encode())
    assert line <= 256 < line + 101
    pod = _pod(dnsConfig={"searches": extra})
    config = kw.pod_sandbox_config(pod, kubelet_version="1.26",
                                   feature_gates="ExpandedDNSConfig=false")
    assert list(config.dns_config.searches) == cluster + extra[:2]


def test_hostname_is_cut_at_63_bytes() -> None:
    """truncatePodHostnameIfNeeded: hostname[:63] counts bytes; 'a' + 40 'é' is 81
    bytes, cut to 'a' + 31 'é' (63 bytes)."""
    pod = _pod()
    pod["metadata"]["name"] = "a" + "é" * 40
    hostname = kw.pod_sandbox_config(pod).hostname
    assert hostname == "a" + "é" * 31
    assert len(hostname.encode()) == 63


def test_cut_inside_a_character_is_a_typed_error() -> None:
    """40 'é' are 80 bytes; byte 63 ends inside the 32nd 'é': Go would send invalid
    UTF-8, which a runtime.v1 string cannot carry."""
    pod = _pod()
    pod["metadata"]["name"] = "é" * 40
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.pod_sandbox_config(pod)
    assert caught.value.field == "metadata.name"
    assert "63 bytes" in caught.value.reason and "UTF-8" in caught.value.reason


def test_fqdn_length_counts_bytes() -> None:
    """setHostnameAsFQDN: the FQDN may hold 64 bytes (Go len). 'é' * 21 +
    '.s.ns.svc.cluster.local' is 44 characters but 65 bytes: refused, with the bytes."""
    pod = _pod(hostname="h", subdomain="s", setHostnameAsFQDN=True)
    pod["spec"].pop("hostname")
    pod["metadata"]["name"] = "é" * 21
    with pytest.raises(kw.SandboxConfigError) as caught:
        kw.pod_sandbox_config(pod)
    fqdn = "é" * 21 + ".s.ns.svc.cluster.local"
    assert len(fqdn) <= 64 < len(fqdn.encode())
    assert f", {len(fqdn.encode())} characters requested)" in str(caught.value)


# --- deep lists on the object path ----------------------------------------------------------


def test_deep_lists_are_typed_errors_in_every_form() -> None:
    deep = deep_list(10_000)
    forms: list[Any] = [
        types.SimpleNamespace(spec=types.SimpleNamespace(containers=deep)),
        kw.Pod.model_construct(spec=types.SimpleNamespace(containers=deep)),
    ]
    try:
        from kubernetes.client import V1Pod, V1PodSpec
    except ImportError:  # the test extra installs kubernetes
        pass
    else:
        # Client 37 validates in __init__: model_construct is how such values get in.
        construct = getattr(V1PodSpec, "model_construct", V1PodSpec)
        forms.append(V1Pod(spec=construct(containers=deep)))
    for pod in forms:
        for build in (kw.windows_sandbox_config, kw.explain, kw.pod_sandbox_config,
                      kw.run_pod_sandbox_request):
            with pytest.raises(kw.InvalidPodError) as caught:
                build(pod)
            assert caught.value.field == "spec.containers[0]"
            assert caught.value.reason == "expected an object, got array"


# --- label and annotation keys that are not strings -----------------------------------------


class RaisingStr:
    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __hash__(self) -> int:
        return 1


@pytest.mark.parametrize(
    ("key", "shown"),
    [(10**5000, "number with about 5001 digits"), (RaisingStr(), "RaisingStr"),
     (5, "number 5")],
    ids=["huge int", "raising __str__", "int"],
)
@pytest.mark.parametrize("where", ["labels", "annotations"])
def test_non_string_keys_name_the_key(key: object, shown: str, where: str) -> None:
    pod = _pod()
    pod["metadata"][where] = {key: "v"}
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.pod_sandbox_config(pod)
    assert caught.value.field == f"metadata.{where}"
    assert caught.value.reason == f"expected string keys, got a key that is {shown}"
    assert "string \"v\"" not in str(caught.value)  # the value is not what is wrong


# --- NodeContext is frozen, so hashable ---------------------------------------------------


def test_node_context_hashes_like_it_compares() -> None:
    a = kw.NodeContext(runtime_handlers={"win": "runhcs-wcow-process"})
    b = kw.NodeContext(runtime_handlers={"win": "runhcs-wcow-process"})
    c = kw.NodeContext(runtime_handlers={"win": "other"})
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert len({a, b, c, kw.NodeContext()}) == 3


def test_long_literal_values_are_bounded_by_the_container_only() -> None:
    """The value bound limits growth through $(VAR): a 2 MB literal (or a 2 MB literal
    with a short reference) is the manifest's own size and is sent, as the kubelet does."""
    literal = "x" * 2_000_000
    env = [{"name": "A", "value": "y"}, {"name": "B", "value": literal},
           {"name": "C", "value": literal + "$(A)"}]
    envs = {kv.key: kv.value.decode() for kv in kw.container_config(
        _pod({"name": "c", "image": "i", "env": env}), "c").envs}
    assert envs["B"] == literal
    assert envs["C"] == literal + "y"


def test_one_literal_past_the_container_bound_is_refused() -> None:
    env = [{"name": "BIG", "value": "x" * (MAX_EXPANDED_CONTAINER + 1)}]
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(_pod({"name": "c", "image": "i", "env": env}), "c")
    assert caught.value.field == "spec.containers[0].env[0].value"
    assert f'container "c" would pass {MAX_EXPANDED_CONTAINER} bytes' in str(caught.value)


def test_a_literal_is_bounded_by_what_the_container_has_left_before_its_redefinition() -> None:
    """A value without $(VAR) is bounded as an expanded one: against the bytes the
    container has left, before an earlier value of the same name is given back."""
    env = [{"name": "A", "value": "x" * (MAX_EXPANDED_CONTAINER - 10)},
           {"name": "A", "value": "y" * (MAX_EXPANDED_CONTAINER - 5)}]
    with pytest.raises(kw.InvalidPodError) as caught:
        kw.container_config(_pod({"name": "c", "image": "i", "env": env}), "c")
    assert caught.value.field == "spec.containers[0].env[1].value"
    assert 'variable "A"' in str(caught.value)
    assert f'container "c" would pass {MAX_EXPANDED_CONTAINER} bytes' in str(caught.value)
