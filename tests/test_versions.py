"""The kubelet-version axis (issue 2 item 4; kubelet-rules.md "Timeline").

Accepted spellings: ``"1.32"``, ``"v1.32.4"``, ``"1.32.0"`` (issue 2), plus what
:mod:`kubelet_winnet._versions` documents: a ``kubelet --version`` build suffix
(``"v1.32.4-eks-1"``) and an already parsed :class:`KubeletVersion`. Supported: 1.26 to
1.38 inclusive; everything else is ``UnsupportedVersionError``. Default: ``"1.32"``, the
last release that implements KEP-3503.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet
from kubelet_winnet import (
    DEFAULT_KUBELET_VERSION,
    KubeletVersion,
    UnsupportedVersionError,
    WinnetError,
    kubelet_profile,
    parse_kubelet_version,
)
from kubelet_winnet._versions import GATE_TIMELINE, GateStage, gate_status

SUPPORTED_MINORS = range(26, 39)  # 1.26 .. 1.38 inclusive


# --- accepted forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "minor", "patch"),
    [
        ("1.32", 32, None),
        ("v1.32", 32, None),
        ("v1.32.4", 32, 4),
        ("1.32.0", 32, 0),
        ("1.32.4", 32, 4),
        ("v1.26.0", 26, 0),
        ("1.38", 38, None),
        ("v1.38.12", 38, 12),
        # versions.py: a `kubelet --version` build suffix is accepted and dropped.
        ("v1.32.4-eks-1", 32, 4),
    ],
)
def test_accepted_forms(text: str, minor: int, patch: int | None) -> None:
    version = parse_kubelet_version(text)
    assert version.minor == minor
    assert version.patch == patch
    assert version == KubeletVersion(minor, patch)


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_every_supported_minor_in_every_spelling(minor: int) -> None:
    for text in (f"1.{minor}", f"v1.{minor}", f"1.{minor}.0", f"v1.{minor}.7"):
        assert parse_kubelet_version(text).minor == minor


def test_str_round_trips() -> None:
    for text in ("1.32", "1.32.0", "1.38.12"):
        assert str(parse_kubelet_version(text)) == text
    assert str(parse_kubelet_version("v1.32.4")) == "1.32.4"


def test_kubelet_version_object_is_accepted_as_is() -> None:
    version = KubeletVersion(30, 2)
    assert parse_kubelet_version(version) is version
    assert kubelet_profile(version).version == version


def test_patch_does_not_matter_for_the_band() -> None:
    assert parse_kubelet_version("1.32.0") != parse_kubelet_version("1.32")
    assert kubelet_profile("1.32.0").sets_namespace_options == kubelet_profile(
        "1.32"
    ).sets_namespace_options
    assert kubelet_profile("v1.33.9").stage is kubelet_profile("1.33").stage


# --- rejected -------------------------------------------------------------------------


REJECTED: list[object] = [
    "1.25",
    "v1.25.16",
    "1.0",
    "1.39",
    "v1.39.0",
    "1.100",
    "2.0",
    "2.32",
    "0.32",
    "",
    "latest",
    "stable",
    "v",
    "1",
    "32",
    "1.",
    ".32",
    "1.32.",
    "1.32.4.5",
    "1,32",
    "1.x",
    "V1.32",
    "vv1.32",
    # Digits other than ASCII 0-9 are not a version (re's \d would match them).
    "\uff11.\uff13\uff12",  # fullwidth "1.32"
    "\u0661.\u0663\u0662",  # Arabic-Indic "1.32"
    None,
    1.32,
    132,
    True,
    b"1.32",
    bytearray(b"1.32"),
    ["1.32"],
    (1, 32),
    {"minor": 32},
]


@pytest.mark.parametrize("value", REJECTED, ids=repr)
def test_rejected(value: object) -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        parse_kubelet_version(value)
    assert info.value.version == value
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, WinnetError)


@pytest.mark.parametrize("value", REJECTED, ids=repr)
def test_rejected_by_every_public_entry_point(value: object) -> None:
    pod = {"spec": {"containers": [{"name": "c"}]}}
    calls: list[Callable[[], object]] = [
        lambda: kubelet_profile(value),
        lambda: kubelet_winnet.windows_sandbox_config(pod, kubelet_version=value),
        lambda: kubelet_winnet.windows_container_security_context(
            pod, "c", kubelet_version=value
        ),
        lambda: kubelet_winnet.explain(pod, kubelet_version=value),
    ]
    for call in calls:
        with pytest.raises(UnsupportedVersionError):
            call()


@pytest.mark.parametrize("minor", [0, 20, 25, 39, 40, 99])
def test_out_of_range_kubelet_version_object_is_rejected_by_the_profile(minor: int) -> None:
    with pytest.raises(UnsupportedVersionError):
        kubelet_profile(KubeletVersion(minor))


@given(major=st.integers(0, 10**6), minor=st.integers(0, 10**6), patch=st.integers(0, 10**6))
@example(major=1, minor=25, patch=0)
@example(major=1, minor=26, patch=0)
@example(major=1, minor=38, patch=99)
@example(major=1, minor=39, patch=0)
def test_range_property(major: int, minor: int, patch: int) -> None:
    """Timeline: ≤ 1.25 rejected, 1.26 – 1.38 modelled, nothing after 1.38."""
    supported = major == 1 and 26 <= minor <= 38
    for text in (f"{major}.{minor}", f"v{major}.{minor}.{patch}"):
        if supported:
            assert parse_kubelet_version(text).minor == minor
        else:
            with pytest.raises(UnsupportedVersionError):
                parse_kubelet_version(text)


@given(st.text(max_size=12))
def test_any_text_is_a_version_or_unsupported(text: str) -> None:
    try:
        version = parse_kubelet_version(text)
    except UnsupportedVersionError:
        return
    assert 26 <= version.minor <= 38


# --- default --------------------------------------------------------------------------


def test_default_is_1_32() -> None:
    assert DEFAULT_KUBELET_VERSION == "1.32"
    assert kubelet_profile().version == KubeletVersion(32)


@pytest.mark.parametrize(
    "function",
    [
        kubelet_winnet.windows_sandbox_config,
        kubelet_winnet.windows_container_security_context,
        kubelet_winnet.explain,
        kubelet_profile,
    ],
)
def test_public_functions_default_to_1_32(function: Callable[..., object]) -> None:
    assert inspect.signature(function).parameters["kubelet_version"].default == "1.32"


# --- the gate timeline ----------------------------------------------------------------


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_gate_timeline(minor: int) -> None:
    status = gate_status(minor)
    if minor <= 32:
        assert (status.stage, status.default, status.sets_namespace_options) == (
            GateStage.ALPHA, True, True,
        )
    elif minor <= 37:
        assert (status.stage, status.default, status.sets_namespace_options) == (
            GateStage.DEPRECATED, False, False,
        )
    else:
        assert status.stage is GateStage.REMOVED
        assert status.sets_namespace_options is False


def test_gate_timeline_bands_are_contiguous() -> None:
    assert GATE_TIMELINE[0].first_minor == 26
    assert GATE_TIMELINE[-1].last_minor == 38
    for before, after in itertools.pairwise(GATE_TIMELINE):
        assert after.first_minor == before.last_minor + 1


@pytest.mark.parametrize("minor", [0, 25, 39])
def test_gate_status_outside_the_range(minor: int) -> None:
    with pytest.raises(UnsupportedVersionError):
        gate_status(minor)
