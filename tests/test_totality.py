"""Total over every input: no exception outside the ``WinnetError``
family escapes a public function or method, whatever the arguments, and every message
stays small.

The arguments include huge ints, deep nesting, values whose __eq__/__hash__/__repr__/
__getattr__ raise, Mappings that raise, numpy values and bytes where strings belong.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kubelet_winnet as kw
from kubelet_winnet import (
    FeatureGates,
    InvalidArgumentError,
    WinnetError,
    explain,
    kubelet_profile,
    parse_feature_gates,
    parse_kubelet_version,
    windows_container_security_context,
    windows_sandbox_config,
)
from tests.strategies import HOSTILE, MUST_RUN, pod_manifests

MAX_MESSAGE = 1000
_BYTES: Any = b"c"
VALID_POD = {"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}}


def test_numpy_is_installed_under_ci() -> None:
    if not any(name.startswith("numpy") for name in HOSTILE):
        if MUST_RUN:
            pytest.fail("numpy (test extra) is missing under CI")
        pytest.skip("numpy not installed: numpy cases not run")


def _check(call: Callable[[], object]) -> None:
    """The call returns, or raises a WinnetError whose str() is bounded."""
    message = ""
    try:
        call()
    except WinnetError as exc:
        message = str(exc)
    assert len(message) < MAX_MESSAGE, message[:200]


# Where a hostile value can go: the pod itself, or one field of an otherwise valid pod.
PLACES: dict[str, Callable[[Any], Any]] = {
    "pod": lambda v: v,
    "kind": lambda v: {"kind": v, "spec": {}},
    "spec": lambda v: {"spec": v},
    "hostNetwork": lambda v: {"spec": {"hostNetwork": v}},
    "securityContext": lambda v: {"spec": {"securityContext": v}},
    "windowsOptions": lambda v: {"spec": {"securityContext": {"windowsOptions": v}}},
    "runAsUserName": lambda v: {"spec": {"securityContext": {"windowsOptions": {
        "runAsUserName": v}}}},
    "hostProcess": lambda v: {"spec": {"securityContext": {"windowsOptions": {
        "hostProcess": v}}}},
    "containers": lambda v: {"spec": {"containers": v}},
    "container": lambda v: {"spec": {"containers": [v]}},
    "container name": lambda v: {"spec": {"containers": [{"name": v}]}},
    "template": lambda v: {"kind": "Deployment", "spec": {"template": v}},
}


def _calls(pod: Any) -> list[Callable[[], object]]:
    return [
        lambda: windows_sandbox_config(pod),
        lambda: windows_container_security_context(pod, "c"),
        lambda: explain(pod).to_dict(),
        lambda: kw.Pod.from_manifest(pod),
    ]


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_value_in_the_pod(name: str, place: str) -> None:
    pod = PLACES[place](HOSTILE[name])
    for call in _calls(pod):
        _check(call)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_value_as_any_other_argument(name: str) -> None:
    value = HOSTILE[name]
    calls: list[Callable[[], object]] = [
        lambda: parse_kubelet_version(value),
        lambda: parse_feature_gates(value),
        lambda: FeatureGates(value),
        lambda: FeatureGates.from_flag(value),
        lambda: FeatureGates({"WindowsHostNetwork": value}),
        lambda: FeatureGates(_OneKey(value)),
        lambda: kubelet_profile(value),
        lambda: kubelet_profile("1.32", value),
        lambda: windows_sandbox_config(VALID_POD, kubelet_version=value),
        lambda: windows_sandbox_config(VALID_POD, feature_gates=value),
        lambda: windows_container_security_context(VALID_POD, value),
        lambda: windows_container_security_context(VALID_POD, "c", image_username=value),
        lambda: explain(VALID_POD, kubelet_version=value, feature_gates=value),
    ]
    for call in calls:
        _check(call)


class _OneKey(Mapping[Any, bool]):
    """A mapping whose only key is any value (a dict would need it hashable)."""

    def __init__(self, key: Any) -> None:
        self._key = key

    def __getitem__(self, key: Any) -> bool:
        return True

    def __iter__(self) -> Iterator[Any]:
        return iter([self._key])

    def __len__(self) -> int:
        return 1


# Inputs a fuzzing run once found escaping, named.


def test_huge_int_error_message_is_bounded() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config({"spec": {"hostNetwork": 10**5000}})
    assert info.value.field == "spec.hostNetwork"
    assert "digits" in str(info.value)
    assert len(str(info.value)) < 200


def test_ten_thousand_deep_list_is_rejected_without_recursion_error() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config(PLACES["hostNetwork"](HOSTILE["deep list"]))
    assert info.value.field == "spec.hostNetwork"


def test_raising_eq_as_kind() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config(PLACES["kind"](HOSTILE["raising __eq__/__hash__"]))
    assert info.value.field == "kind"


def test_raising_repr_in_a_message() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config(PLACES["container name"](HOSTILE["raising __repr__"]))
    assert info.value.field == "spec.containers[0].name"
    assert "RaisingRepr" in str(info.value)


def test_mapping_that_raises_on_access() -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config(PLACES["securityContext"](HOSTILE["raising Mapping"]))
    assert info.value.field == "spec.securityContext.windowsOptions"
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config(HOSTILE["raising Mapping"])
    assert info.value.field == "kind"


def test_numpy_array_as_kind() -> None:
    numpy = pytest.importorskip("numpy") if not MUST_RUN else __import__("numpy")
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config({"kind": numpy.array(["Pod"]), "spec": {}})
    assert info.value.field == "kind"
    with pytest.raises(kw.InvalidPodError) as info:
        windows_sandbox_config({"spec": {"hostNetwork": numpy.bool_(True)}})
    assert info.value.field == "spec.hostNetwork"  # not coerced: numpy.bool_ is not bool


def test_getattr_raising_key_error_as_the_pod() -> None:
    with pytest.raises(kw.InvalidPodError):
        windows_sandbox_config(HOSTILE["raising __getattr__"])


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: windows_container_security_context(VALID_POD, _BYTES), "container_name"),
        (lambda: windows_container_security_context(VALID_POD, "c", image_username=_BYTES),
         "image_username"),
        (lambda: windows_sandbox_config(VALID_POD, kubelet_version=b"1.32"), "kubelet_version"),  # type: ignore[arg-type]
        (lambda: windows_sandbox_config(VALID_POD, feature_gates=b"A=true"), "feature_gates"),  # type: ignore[arg-type]
        (lambda: windows_sandbox_config(b"{}"), "pod"),  # type: ignore[arg-type]
    ],
)
def test_bytes_where_strings_belong_are_invalid_arguments(
    call: Callable[[], object], argument: str
) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert info.value.argument == argument


@given(manifest=pod_manifests(), name=st.sampled_from(sorted(HOSTILE)), data=st.data())
def test_hostile_value_anywhere_in_a_generated_pod(
    manifest: dict[str, Any], name: str, data: st.DataObject
) -> None:
    """Replace one node of a generated pod (any depth) with a hostile value (drawn by
    name: hypothesis cannot print a 5,000-digit int)."""
    value = HOSTILE[name]
    manifest = copy.deepcopy(manifest)  # strategies share constant sub-objects
    paths: list[tuple[Any, Any]] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key in node:
                paths.append((node, key))
                collect(node[key])
        elif isinstance(node, list):
            for index in range(len(node)):
                paths.append((node, index))
                collect(node[index])

    collect(manifest)
    parent, key = data.draw(st.sampled_from(paths))
    parent[key] = value
    for call in _calls(manifest):
        with contextlib.suppress(WinnetError):
            call()
