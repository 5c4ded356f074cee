"""The pytest plugin of ``kubelet-winnet[testing]``, loaded through the ``pytest11``
entry point ``kubelet-winnet`` (``-p no:kubelet-winnet`` turns it off).

Fixtures: ``fake_cri_runtime``, a started ``FakeRuntime``
stopped after the test; ``in_memory_hcn``, the runtime half's
``InMemoryHcn``. And ``assert a == b`` of two
``runtime.v1`` messages of one type explains itself field by field, by proto path.

The plugin loads with pytest alone: grpc and hypothesis are imported by the fixture
that needs them, so a project that installs kubelet-winnet without the extra keeps a
working pytest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubelet_winnet.runtime.hcn import InMemoryHcn
    from kubelet_winnet.testing.fake import FakeRuntime

__all__ = ["fake_cri_runtime", "in_memory_hcn", "pytest_assertrepr_compare"]


@pytest.fixture
def fake_cri_runtime() -> Iterator[FakeRuntime]:
    """A started ``FakeRuntime`` (policy ``kep``) on a socket
    of its own; ``fake_cri_runtime.endpoint`` is its ``unix://`` URL."""
    from kubelet_winnet.testing.fake import FakeRuntime

    with FakeRuntime() as runtime:
        yield runtime


@pytest.fixture
def in_memory_hcn() -> InMemoryHcn:
    """A fresh ``InMemoryHcn`` with the host's default
    namespace, for ``SandboxNetworks``."""
    from kubelet_winnet.runtime.hcn import InMemoryHcn

    return InMemoryHcn()


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any,
                              right: Any) -> list[str] | None:
    """``assert left == right`` of two messages of one ``runtime.v1`` type: each field
    that differs, by proto path, presence included."""
    if op != "==":
        return None
    from kubelet_winnet.testing.compare import message_differences

    found = message_differences(left, right)
    if found is None:
        return None
    lines = [f"{type(left).DESCRIPTOR.name} messages differ in {len(found)} field(s):"]
    lines += [f"  {line}" for line in found]
    return lines
