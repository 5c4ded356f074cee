"""The request builders are total: a hostile value in any field they read, or as any
argument, gives a ``WinnetError`` with a bounded message (or a result), never another
exception. Values from ``tests.strategies.HOSTILE`` (huge ints, deep nesting, raising
``__eq__``/``__repr__``/``__getattr__``, raising Mappings, bytes, lone surrogates, numpy)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kubelet_winnet as kw
from tests.strategies import HOSTILE, FlakyMapping, PlainMapping

MAX_MESSAGE = 1000

BASE: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "ns", "uid": "u", "labels": {"a": "b"},
                 "annotations": {"c": "d"}},
    "spec": {
        "hostname": "web", "subdomain": "s", "setHostnameAsFQDN": False,
        "dnsPolicy": "ClusterFirst", "runtimeClassName": "",
        "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["x"],
                      "options": [{"name": "ndots", "value": "2"}]},
        "securityContext": {"sysctls": [{"name": "k", "value": "v"}],
                            "supplementalGroups": [1], "supplementalGroupsPolicy": "Merge"},
        "terminationGracePeriodSeconds": 30,
        "containers": [{
            "name": "c", "image": "i", "command": ["a"], "args": ["b"], "workingDir": "w",
            "ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP",
                       "hostIP": "1.2.3.4", "name": "p"}],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
            "env": [{"name": "E", "value": "v"},
                    {"name": "F", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "G", "valueFrom": {"resourceFieldRef": {
                        "resource": "limits.cpu", "divisor": "1m"}}},
                    {"name": "H", "valueFrom": {"configMapKeyRef": {"name": "m", "key": "k"}}}],
            "envFrom": [{"secretRef": {"name": "s"}, "prefix": "P_"}],
            "securityContext": {"privileged": False},
            "stdin": False, "tty": False,
        }],
    },
}

# Paths into BASE where a hostile value replaces what is there.
PLACES: list[tuple[str | int, ...]] = [
    ("metadata",), ("metadata", "name"), ("metadata", "namespace"), ("metadata", "uid"),
    ("metadata", "labels"), ("metadata", "labels", "a"), ("metadata", "annotations"),
    ("spec", "hostname"), ("spec", "subdomain"), ("spec", "setHostnameAsFQDN"),
    ("spec", "dnsPolicy"), ("spec", "runtimeClassName"), ("spec", "dnsConfig"),
    ("spec", "dnsConfig", "nameservers"), ("spec", "dnsConfig", "searches", 0),
    ("spec", "dnsConfig", "options", 0), ("spec", "dnsConfig", "options", 0, "value"),
    ("spec", "securityContext"), ("spec", "securityContext", "sysctls", 0),
    ("spec", "securityContext", "supplementalGroups"),
    ("spec", "securityContext", "supplementalGroupsPolicy"),
    ("spec", "terminationGracePeriodSeconds"), ("spec", "containers", 0),
    ("spec", "containers", 0, "image"), ("spec", "containers", 0, "command"),
    ("spec", "containers", 0, "args", 0), ("spec", "containers", 0, "ports", 0),
    ("spec", "containers", 0, "ports", 0, "containerPort"),
    ("spec", "containers", 0, "ports", 0, "hostIP"),
    ("spec", "containers", 0, "ports", 0, "protocol"),
    ("spec", "containers", 0, "resources"), ("spec", "containers", 0, "resources", "limits"),
    ("spec", "containers", 0, "resources", "limits", "cpu"),
    ("spec", "containers", 0, "env", 0, "value"), ("spec", "containers", 0, "env", 1),
    ("spec", "containers", 0, "env", 2, "valueFrom", "resourceFieldRef", "divisor"),
    ("spec", "containers", 0, "env", 3, "valueFrom", "configMapKeyRef", "key"),
    ("spec", "containers", 0, "envFrom", 0, "prefix"),
    ("spec", "containers", 0, "securityContext", "privileged"),
    ("spec", "containers", 0, "tty"),
]


def _check(call: Callable[[], object]) -> None:
    message = ""
    try:
        call()
    except kw.WinnetError as exc:
        message = str(exc)
    assert len(message) < MAX_MESSAGE, message[:200]


def _with(value: Any, path: tuple[str | int, ...]) -> dict[str, Any]:
    pod = copy.deepcopy(BASE)
    node: Any = pod
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return pod


STORES: dict[str, Any] = {"config_maps": {"m": {"k": "v"}}, "secrets": {"s": {"x": "y"}}}


def test_base_pod_is_accepted() -> None:
    request = kw.create_container_request(BASE, "c", pod_sandbox_id="x", **STORES)
    assert {kv.key for kv in request.config.envs} == {"P_x", "E", "F", "G", "H"}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_value_in_every_field(name: str) -> None:
    for path in PLACES:
        pod = _with(HOSTILE[name], path)
        _check(functools.partial(kw.pod_sandbox_config, pod))
        _check(functools.partial(kw.run_pod_sandbox_request, pod))
        _check(functools.partial(kw.container_config, pod, "c", **STORES))
        _check(functools.partial(kw.create_container_request, pod, "c", pod_sandbox_id="x",
                                 **STORES))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_value_as_every_argument(name: str) -> None:
    value = HOSTILE[name]
    calls: list[Callable[[], object]] = [
        lambda: kw.pod_sandbox_config(value),
        lambda: kw.pod_sandbox_config(BASE, node=value),
        lambda: kw.pod_sandbox_config(BASE, attempt=value),
        lambda: kw.pod_sandbox_config(BASE, kubelet_version=value),
        lambda: kw.pod_sandbox_config(BASE, feature_gates=value),
        lambda: kw.run_pod_sandbox_request(BASE, node=value),
        lambda: kw.container_config(BASE, value),
        lambda: kw.container_config(BASE, "c", image_ref=value, **STORES),
        lambda: kw.container_config(BASE, "c", image_username=value, **STORES),
        lambda: kw.container_config(BASE, "c", pod_ips=value, **STORES),
        lambda: kw.container_config(BASE, "c", config_maps=value, secrets={"s": {}}),
        lambda: kw.container_config(BASE, "c", config_maps={"m": value}, secrets={"s": {}}),
        lambda: kw.container_config(BASE, "c", config_maps={"m": {"k": value}},
                                    secrets={"s": {}}),
        lambda: kw.container_config(BASE, "c", secrets={"s": {"x": value}},
                                    config_maps={"m": {"k": "v"}}),
        lambda: kw.create_container_request(BASE, "c", pod_sandbox_id=value, **STORES),
        lambda: kw.create_container_request(BASE, "c", pod_sandbox_id="x",
                                            sandbox_attempt=value, **STORES),
        lambda: kw.NodeContext(node_name=value),
        lambda: kw.NodeContext(cluster_dns=value),
        lambda: kw.NodeContext(cluster_dns=(value,)),
        lambda: kw.NodeContext(processor_count=value),
        lambda: kw.NodeContext(runtime_handlers=value),
        lambda: kw.NodeContext(allocatable_cpu=value),
        lambda: kw.NodeContext.from_mapping(value),
        lambda: kw.NodeContext.from_mapping({"nodeName": value}),
    ]
    for call in calls:
        _check(call)


# --- non-dict and raising Mappings anywhere -------------------------------------------------


def _object_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in ``value`` that holds an object (the root included)."""
    found: list[tuple[str | int, ...]] = []
    if type(value) is dict:
        found.append(path)
        for key, item in value.items():
            found += _object_paths(item, (*path, key))
    elif type(value) is list:
        for index, item in enumerate(value):
            found += _object_paths(item, (*path, index))
    return found


OBJECT_PATHS = _object_paths(BASE)


def _json_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if type(part) is int else (f".{part}" if out else str(part))
    return out


def _wrapped(paths: set[tuple[str | int, ...]], make: Callable[[Any], Any]) -> Any:
    """BASE with the object at each of ``paths`` replaced by ``make(object)``, deepest
    first so a wrapped object can hold wrapped children."""
    pod: Any = copy.deepcopy(BASE)
    for path in sorted(paths, key=len, reverse=True):
        if not path:
            pod = make(pod)
            continue
        parent: Any = pod
        for key in path[:-1]:
            parent = _unwrap(parent)[key]
        target: Any = _unwrap(parent)
        target[path[-1]] = make(target[path[-1]])
    return pod


def _unwrap(value: Any) -> Any:
    return value._data if isinstance(value, PlainMapping) else value


def _requests(pod: Any, stores: dict[str, Any]) -> list[bytes]:
    return [
        kw.pod_sandbox_config(pod).SerializeToString(deterministic=True),
        kw.run_pod_sandbox_request(pod).SerializeToString(deterministic=True),
        kw.container_config(pod, "c", **stores).SerializeToString(deterministic=True),
        kw.create_container_request(pod, "c", pod_sandbox_id="x", **stores).SerializeToString(
            deterministic=True
        ),
    ]


@given(paths=st.sets(st.sampled_from(OBJECT_PATHS), min_size=1, max_size=6),
       stores_plain=st.booleans())
def test_plain_mappings_anywhere_build_the_same_requests(
    paths: set[tuple[str | int, ...]], stores_plain: bool
) -> None:
    """The pod reader: "the same value gives the same result ... in every form". A
    caller's Mapping in place of any object (metadata, limits, a template's metadata,
    an env entry, the ConfigMap store) builds the requests the dict builds."""
    stores = ({name: PlainMapping({k: PlainMapping(v) for k, v in store.items()})
               for name, store in STORES.items()} if stores_plain else STORES)
    assert _requests(_wrapped(paths, PlainMapping), stores) == _requests(BASE, STORES)


@given(paths=st.sets(st.sampled_from(OBJECT_PATHS), min_size=1, max_size=4),
       method=st.sampled_from(["getitem", "iter", "len"]), after=st.integers(0, 3))
def test_raising_mappings_anywhere_give_a_result_or_a_typed_error(
    paths: set[tuple[str | int, ...]], method: str, after: int
) -> None:
    """A Mapping that raises part way: a request, or a WinnetError whose field, when a
    read failed, is at or under one of the raising objects."""
    pod = _wrapped(paths, lambda value: FlakyMapping(value, method, after))
    places = [_json_path(path) for path in paths]
    for build in (
        functools.partial(kw.pod_sandbox_config, pod),
        functools.partial(kw.container_config, pod, "c", **STORES),
        functools.partial(kw.create_container_request, pod, "c", pod_sandbox_id="x", **STORES),
        functools.partial(kw.windows_sandbox_config, pod),
        functools.partial(kw.explain, pod),
    ):
        error: kw.WinnetError | None = None
        try:
            build()
        except kw.WinnetError as exc:
            error = exc
        if error is None:
            continue
        assert len(str(error)) < MAX_MESSAGE
        if isinstance(error, kw.InvalidPodError) and "could not be read" in error.reason:
            assert any(error.field.startswith(place) for place in places), (error, places)
