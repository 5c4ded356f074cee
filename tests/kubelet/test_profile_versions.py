"""The kubelet-version axis (kubelet-rules.md "Timeline").

Accepted spellings: ``"1.32"``, ``"v1.32.4"``, ``"1.32.0"``, plus what
:mod:`kubelet_winnet._kubelet.profile` documents (the grammar
``v?MAJOR.MINOR[.PATCH][-pre][+build]``):
a ``kubelet --version`` suffix (``"v1.32.4-eks-1"``) and an already parsed
:class:`KubeletVersion`. Supported: 1.26 to
1.38 inclusive; everything else is ``UnsupportedVersionError``. Default: ``"1.32"``, the
last release that implements KEP-3503.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet
from kubelet_winnet import (
    DEFAULT_KUBELET_VERSION,
    InvalidArgumentError,
    KubeletVersion,
    UnsupportedVersionError,
    WinnetError,
    kubelet_profile,
    parse_kubelet_version,
)
from kubelet_winnet._kubelet.rules import STEPS
from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR, TIMELINE, GateStage, release

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
]

# The grammar is exactly v?MAJOR.MINOR[.PATCH][-pre][+build]; each of
# these was once accepted.
REGRESSIONS: dict[str, str] = {
    "surrounding whitespace": " 1.32\n",
    "trailing newline": "1.32\n",
    "leading space": " v1.32.4",
    "leading zero minor": "01.032",
    "leading zero major": "01.32",
    "leading zero patch": "v1.32.0004",
    "zero-padded minor": "1.032",
    "control character inside": "1.3\x002",
    "control character after": "1.32\x1f",
    "tab before": "\t1.32",
    "empty pre-release": "1.32-",
    "empty build": "1.32+",
    "empty identifier": "1.32-rc..1",
    "huge minor": "1." + "9" * 5000,
    "huge patch": "1.32." + "9" * 5000,
    "over-long text": "1.32-" + "a" * 500,
}

WRONG_TYPES: list[object] = [
    None,
    1.32,
    132,
    10**5000,
    True,
    b"1.32",
    bytearray(b"1.32"),
    ["1.32"],
    (1, 32),
    {"minor": 32},
]


@pytest.mark.parametrize("value", REJECTED, ids=repr)
def test_rejected(value: str) -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        parse_kubelet_version(value)
    assert info.value.version == value
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, WinnetError)


@pytest.mark.parametrize("value", list(REGRESSIONS.values()), ids=list(REGRESSIONS))
def test_grammar_regressions(value: str) -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        parse_kubelet_version(value)
    assert len(str(info.value)) < 300  # the value is shown cut, never whole


@pytest.mark.parametrize(
    ("text", "minor", "patch"),
    [("v1.32.4-eks-1", 32, 4), ("1.32.4+k3s1", 32, 4), ("v1.30.0-rc.1+build.7", 30, 0),
     ("1.32.0", 32, 0), ("1.26-alpha", 26, None)],
)
def test_pre_release_and_build_are_accepted_and_ignored(
    text: str, minor: int, patch: int | None
) -> None:
    assert parse_kubelet_version(text) == KubeletVersion(minor, patch)


@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda v: type(v).__name__)
def test_wrong_types_are_invalid_arguments(value: object) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        parse_kubelet_version(value)  # type: ignore[arg-type]
    assert info.value.argument == "kubelet_version"
    assert isinstance(info.value, TypeError)
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda v: type(v).__name__)
def test_wrong_types_by_every_public_entry_point(value: object) -> None:
    pod = {"spec": {"containers": [{"name": "c"}]}}
    for call in _entry_points(pod, value):
        with pytest.raises(InvalidArgumentError):
            call()


def _entry_points(pod: object, value: object) -> list[Callable[[], object]]:
    return [
        lambda: kubelet_profile(value),  # type: ignore[arg-type]
        lambda: kubelet_winnet.windows_sandbox_config(pod, kubelet_version=value),  # type: ignore[arg-type]
        lambda: kubelet_winnet.windows_container_security_context(
            pod, "c", kubelet_version=value  # type: ignore[arg-type]
        ),
        lambda: kubelet_winnet.explain(pod, kubelet_version=value),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize("value", REJECTED, ids=repr)
def test_rejected_by_every_public_entry_point(value: object) -> None:
    pod = {"spec": {"containers": [{"name": "c"}]}}
    calls: list[Callable[[], object]] = [
        lambda: kubelet_profile(value),  # type: ignore[arg-type]
        lambda: kubelet_winnet.windows_sandbox_config(pod, kubelet_version=value),  # type: ignore[arg-type]
        lambda: kubelet_winnet.windows_container_security_context(
            pod, "c", kubelet_version=value  # type: ignore[arg-type]
        ),
        lambda: kubelet_winnet.explain(pod, kubelet_version=value),  # type: ignore[arg-type]
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
@example("1.32\n")
@example(" 1.32")
def test_any_text_is_a_version_or_unsupported(text: str) -> None:
    """Anything the grammar accepts is a supported version; the grammar admits no
    whitespace or control character anywhere."""
    try:
        version = parse_kubelet_version(text)
    except UnsupportedVersionError:
        return
    assert 26 <= version.minor <= 38
    assert text.isascii() and text.isprintable() and " " not in text


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
    """kubelet-rules.md "Timeline", row by row."""
    row = release(minor)
    if minor <= 32:
        assert (row.stage, row.default, row.reads_gate) == (GateStage.ALPHA, True, True)
    elif minor <= 37:
        assert (row.stage, row.default, row.reads_gate) == (GateStage.DEPRECATED, False, False)
    else:
        assert (row.stage, row.default, row.reads_gate) == (GateStage.REMOVED, None, False)


# Release status as of 2026-12-04 (admission-and-distribution.md, "Updates, 2026-12-04":
# 1.35 on 2025-12-17, 1.36 on 2026-04-22, 1.37 on 2026-08-26, 1.38 due 2026-12-16; the
# earlier .0 dates are the kubernetes.io release announcements).
RELEASE_DATES = {
    26: "2022-12-08", 27: "2023-04-11", 28: "2023-08-15", 29: "2023-12-13",
    30: "2024-04-17", 31: "2024-08-13", 32: "2024-12-11", 33: "2025-04-23",
    34: "2025-08-27", 35: "2025-12-17", 36: "2026-04-22", 37: "2026-08-26",
}


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_timeline_release_status_as_of_2026_12_04(minor: int) -> None:
    from kubelet_winnet._kubelet.timeline import STATUS_AS_OF

    assert STATUS_AS_OF == "2026-12-04"
    row = release(minor)
    if minor in RELEASE_DATES:
        assert (row.status, row.date) == ("released", RELEASE_DATES[minor])
        assert row.status_text == f"released {RELEASE_DATES[minor]}"
        assert (row.rc0_date, row.newest_seen) == ("", "")  # nothing scheduled or pending
        assert row.date <= STATUS_AS_OF  # ISO dates order as text
    else:
        # the 1.38 schedule: rc.0 on 2026-12-02, .0 on 2026-12-16 (by the schedule, not
        # seen); observed: CHANGELOG-1.38.md (0411cc704533) reaches v1.38.0-alpha.2
        assert (row.status, row.date, row.rc0_date) == ("rc", "2026-12-16", "2026-12-02")
        assert row.newest_seen == "v1.38.0-alpha.2"
        assert row.status_text == (
            "a release candidate by the schedule (rc.0 2026-12-02), due 2026-12-16; the "
            "newest pre-release seen is v1.38.0-alpha.2")
        assert row.rc0_date <= STATUS_AS_OF < row.date


def test_timeline_has_one_row_per_minor() -> None:
    assert [row.minor for row in TIMELINE] == list(SUPPORTED_MINORS)


def test_derived_constants_follow_the_timeline() -> None:
    assert (MIN_MINOR, MAX_MINOR) == (26, 38)
    assert DEFAULT_KUBELET_VERSION == "1.32"  # the last release implementing KEP-3503
    assert next(s for s in STEPS if s.id == "2").until == 32


@pytest.mark.parametrize("minor", [0, 25, 39, -1])
def test_release_outside_the_range(minor: int) -> None:
    with pytest.raises(UnsupportedVersionError):
        release(minor)


@pytest.mark.parametrize(
    "version",
    [KubeletVersion(10**5000), KubeletVersion(-(10**5000)), KubeletVersion("32"),  # type: ignore[arg-type]
     KubeletVersion(32, 10**5000), KubeletVersion(32, -1), KubeletVersion(32, "4")],  # type: ignore[arg-type]
    ids=["huge minor", "huge negative minor", "str minor", "huge patch", "negative patch",
         "str patch"],
)
def test_kubelet_version_objects_with_bad_fields(version: KubeletVersion) -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        kubelet_profile(version)
    assert len(str(info.value)) < 200


# --- the request builders' version facts -----------------------------------------------

# Restated from docs/requests.md "Versions" (each row's upstream source is on the fact):
# the first kubelet minor that sends the new way.
EXPECTED_FACTS = {
    "label-dots-message": 27,  # apimachinery cf894f11 (v0.27.0)
    "cpu-maximum-helper": 27,  # kubernetes#114231
    "expanded-dns-locked": 28,  # ExpandedDNSConfig GA
    "host-ips-field": 28,  # KEP-2681: status.hostIPs known
    "host-ips-value": 29,  # KEP-2681: PodHostIPs on by default
    "user-specified-image": 30,
    "recursive-read-only": 30,  # KEP-3857
    "container-hash": 31,  # kubernetes#124220
    "slash-is-absolute": 31,
    "supplemental-groups-policy": 31,  # KEP-3619
    "hosts-mount-host-network": 32,  # kubernetes#126460
    # 1.33 at the latest: kuberuntime_container.go fbba6b47 (1.33 cycle) reads no
    # HashWithoutResources back; labels.go f6b65043 (1.31 cycle) still writes it.
    "hash-without-resources-dropped": 33,
    "marshal-checks-utf8": 34,  # cri-api without gogo protobuf (kubernetes#136323)
    "pod-level-limits-default": 34,  # PodLevelResources beta
    "label-key-messages": 35,  # apimachinery da7b67ed (v0.35.0)
    "rune-wise-expansion": 36,  # kubernetes#136325, backported to 1.34.4 and 1.35.1
    # cri-api d3d9c71 (kubernetes-1.37.0-alpha.1): KeyValue.value is bytes; backported
    # as a544ba3 (kubernetes-1.34.9), 48b4f42 (1.35.6), 5f84746 (1.36.2).
    "env-values-are-bytes": 37,
    "signal-names-prefixed": 37,  # cri-api 044b7de, on master only (no release-1.36 copy)
    "exact-downward-division": 38,  # helpers.go convertQuantityToString
    "saturating-milli-value": 38,
}
# Patch releases that got a change before its minor: CHANGELOG-1.34.md and
# CHANGELOG-1.35.md ("Fixes a 1.34 regression starting pods with environment variables
# with a value containing `$` followed by a multi-byte character").
EXPECTED_BACKPORTS = {
    "rune-wise-expansion": {34: 4, 35: 1},
    "env-values-are-bytes": {34: 9, 35: 6, 36: 2},
}


def test_request_facts_are_the_versions_table() -> None:
    from kubelet_winnet._kubelet.request_facts import REQUEST_FACTS

    assert {fact.name: fact.since for fact in REQUEST_FACTS} == EXPECTED_FACTS
    assert {f.name: dict(f.backports) for f in REQUEST_FACTS if f.backports} == EXPECTED_BACKPORTS
    assert all(fact.source and fact.change for fact in REQUEST_FACTS)


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_a_profile_holds_the_facts_of_its_minor(minor: int) -> None:
    # A minor without a patch is its newest patch release, which has every backport.
    held = {fact.name for fact in kubelet_profile(f"1.{minor}").request_facts}
    assert held == {name for name, since in EXPECTED_FACTS.items()
                    if minor >= since or minor in EXPECTED_BACKPORTS.get(name, {})}


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
@pytest.mark.parametrize("patch", [0, 1, 2, 3, 4, 5, 6, 8, 9, 12])  # every backport boundary
def test_a_patch_release_holds_a_backport_from_its_first_patch_on(minor: int, patch: int) -> None:
    held = {fact.name for fact in kubelet_profile(f"1.{minor}.{patch}").request_facts}
    assert held == {name for name, since in EXPECTED_FACTS.items()
                    if minor >= since or patch >= EXPECTED_BACKPORTS.get(name, {}).get(minor, 99)}


def test_no_request_builder_compares_kubelet_minors_itself() -> None:
    """Version facts live in profile.REQUEST_FACTS (adding a kubelet minor is one TIMELINE
    row): a builder asks ``FACT.holds(minor)`` and never writes ``minor >= 31``."""
    import re
    from pathlib import Path

    import kubelet_winnet._kubelet as package

    pattern = re.compile(r"\bminor\s*(?:[<>]=?|==|!=)\s*\d|\d\s*(?:[<>]=?|==|!=)\s*minor\b")
    folder = Path(package.__file__).parent
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(folder.glob("*.py")) if path.name != "profile.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
