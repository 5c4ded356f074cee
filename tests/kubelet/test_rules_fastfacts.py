"""The fast constructors of :mod:`kubelet_winnet._kubelet.rules` build exactly what the
dataclass constructors build (issue 7 item 6): equal, equally hashable, equally frozen."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet._kubelet.rules import (
    STEPS,
    ContainerFacts,
    PodFacts,
    SandboxDecision,
    WindowsOptions,
    make_container_facts,
    make_pod_facts,
    make_sandbox_decision,
    make_windows_options,
)

texts = st.none() | st.text(max_size=5)
flags = st.none() | st.booleans()
options = st.builds(WindowsOptions, texts, texts, texts, flags)
kinds = st.sampled_from(["initContainers", "containers", "ephemeralContainers"])


def _same(fast: object, slow: object) -> None:
    assert type(fast) is type(slow)
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert repr(fast) == repr(slow)
    for field in dataclasses.fields(slow):  # type: ignore[arg-type]
        assert getattr(fast, field.name) is getattr(slow, field.name) or (
            getattr(fast, field.name) == getattr(slow, field.name)
        )
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.__setattr__(dataclasses.fields(slow)[0].name, None)  # type: ignore[arg-type]


@given(texts, texts, texts, flags)
def test_windows_options(user: str | None, name: str | None, spec: str | None,
                         host_process: bool | None) -> None:
    _same(make_windows_options(user, name, spec, host_process),
          WindowsOptions(user, name, spec, host_process))


@given(st.text(max_size=5), kinds, st.none() | options)
def test_container_facts(name: str, kind: str, windows: WindowsOptions | None) -> None:
    _same(make_container_facts(name, kind, windows),  # type: ignore[arg-type]
          ContainerFacts(name, kind, windows))  # type: ignore[arg-type]


@given(st.booleans(), st.none() | options,
       st.lists(st.builds(ContainerFacts, st.text(max_size=3), kinds, st.none() | options),
                max_size=3))
def test_pod_facts(host_network: bool, windows: WindowsOptions | None,
                   containers: list[ContainerFacts]) -> None:
    _same(make_pod_facts(host_network, windows, tuple(containers)),
          PodFacts(host_network, windows, tuple(containers)))


@given(st.sampled_from([None, "POD", "NODE"]), st.booleans(), st.text(max_size=5),
       st.text(max_size=5), st.lists(st.sampled_from([s.id for s in STEPS]), max_size=5))
def test_sandbox_decision(network: str | None, host_process: bool, user: str, spec: str,
                          steps: list[str]) -> None:
    fast = make_sandbox_decision(network, host_process, user, spec, tuple(steps))  # type: ignore[arg-type]
    slow = SandboxDecision(network, host_process, user, spec, steps=tuple(steps))  # type: ignore[arg-type]
    _same(fast, slow)
    assert fast.steps == slow.steps  # not part of ==, so checked on its own
