"""runtime/_releases.py: the containerd/hcsshim release table.

Expected values are upstream facts pinned as data: the hcsshim tag in containerd's
``script/setup/runhcs-version`` (or ``go.mod`` before that file existed) at each tag, read
with ``git show vX.Y.Z:script/setup/runhcs-version``, and hcsshim's own tags holding PR #2531
(``git merge-base --is-ancestor b07af140d <tag>``).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet_winnet.runtime import _releases as rel

# (containerd tag, hcsshim tag of its Windows shim), from the containerd repository.
RUNHCS_AT_TAG = [
    ("1.7.0", "v0.10.0-rc.7"),  # go.mod
    ("1.7.18", "v0.11.5"),  # go.mod
    ("1.7.19", "v0.11.7"),  # first runhcs-version file in 1.7
    ("1.7.30", "v0.11.7"),
    ("2.0.0", "v0.12.9"),
    ("2.0.11", "v0.12.9"),
    ("2.1.0", "v0.13.0-rc.3"),
    ("2.1.9", "v0.13.0"),
    ("2.2.0", "v0.14.0-rc.1"),
    ("2.2.2", "v0.14.0-rc.1"),
    ("2.2.3", "v0.14.1"),
    ("2.2.7", "v0.14.1"),
    ("2.3.0", "v0.15.0-rc.1"),
    ("2.3.2", "v0.15.0-rc.1"),
    ("2.3.3", "v0.15.0-rc.3"),  # go.mod still says rc.1: the shim is built from runhcs-version
    ("2.3.4", "v0.15.0-rc.3"),
    ("2.4.0-beta.0", "v0.15.0-rc.3"),
    ("2.4.0", "v0.15.0-rc.4"),  # v2.4.0 release notes (PR #14169, 2026-09-16): rc.4
]
# hcsshim tags and whether they carry PR #2531 (commit b07af140d).
HAS_2531 = [("v0.14.1", False), ("v0.15.0-rc.1", False), ("v0.15.0-rc.2", True),
            ("v0.15.0-rc.3", True), ("v0.15.0-rc.4", True)]


@pytest.mark.parametrize(("containerd", "hcsshim"), RUNHCS_AT_TAG)
def test_shim_of_each_tag(containerd: str, hcsshim: str) -> None:
    if containerd.startswith("2.4.0-beta"):
        # A pre-release counts as its line's x.y.z; 2.4.0-beta.0's own rc.3 is not rc.4,
        # but both carry PR #2531, which is what the table is asked.
        assert rel.shim_has_hyperv_host_process(f"containerd://{containerd}")
        return
    assert rel.hcsshim_of(f"containerd://{containerd}") == hcsshim
    assert rel.hcsshim_of(f"containerd://v{containerd}") == hcsshim


@pytest.mark.parametrize(("containerd", "hcsshim"), RUNHCS_AT_TAG)
def test_no_network_follows_pr_2531(containerd: str, hcsshim: str) -> None:
    # Every tag of RUNHCS_AT_TAG not in HAS_2531 is older than v0.14.1.
    expected = dict(HAS_2531).get(hcsshim, False)
    assert rel.shim_has_hyperv_host_process(f"containerd://{containerd}") is expected


@pytest.mark.parametrize(("tag", "has"), HAS_2531)
def test_hcsshim_order_places_2531(tag: str, has: bool) -> None:
    since = rel.hcsshim_version_key(rel.HOST_PROCESS_IN_UVM.hcsshim)
    assert (rel.hcsshim_version_key(tag) >= since) is has


def test_other_runtimes_and_unparsable_versions() -> None:
    for runtime in ("docker://20.10.7", "cri-o://1.30.0", "", "containerd", "containerd://",
                    "containerd://2.3", "containerd://two", "containerd://1.6.36"):
        assert rel.shim_has_hyperv_host_process(runtime) is False
        assert rel.hcsshim_of(runtime) is None
    # A containerd newer than the table keeps hcsshim's change.
    assert rel.shim_has_hyperv_host_process("containerd://2.5.0")
    assert rel.hcsshim_of("containerd://2.5.0") is None


def test_runtime_name() -> None:
    assert rel.runtime_name("containerd://1.7.20") == "containerd"
    assert rel.runtime_name("docker://20.10") == "docker"
    assert rel.runtime_name("containerd") == ""
    assert rel.parse_runtime("containerd://2.4.0-rc.1") == ("containerd", (2, 4, 0))
    assert rel.parse_runtime("containerd://2.4.0+azure") == ("containerd", (2, 4, 0))


def test_removed_options_and_schema_versions() -> None:
    """RELEASES.md (containerd main @ 301026e5) lines 638 and 640: bin_dir and enable_cdi
    removed in 2.4; version.go: ConfigVersion 3 in 2.0-2.2, 4 from 2.3 (commit 06c23567c);
    1.7's ValidateV2 refuses anything above 2."""
    by_line = {line.name: line for line in rel.CONTAINERD_LINES}
    assert {o.key for o in by_line["2.4"].removed_options} == {"bin_dir", "enable_cdi"}
    assert by_line["2.3"].removed_options == ()
    assert max(by_line["1.7"].config_versions) == 2
    assert max(by_line["2.2"].config_versions) == 3
    assert max(by_line["2.3"].config_versions) == 4
    assert by_line["2.4"].released == "2026-09-16"


def test_table_is_ordered_and_cited() -> None:
    lines = [line.line for line in rel.CONTAINERD_LINES]
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    for line in rel.CONTAINERD_LINES:
        assert line.source
        sinces = [row.since for row in line.shims]
        assert sinces == sorted(sinces) and all(s[:2] == line.line for s in sinces)
        for row in line.shims:
            assert row.source
            rel.hcsshim_version_key(row.hcsshim)  # every tag parses


@given(st.text(max_size=40))
def test_any_runtime_text_is_answered(text: str) -> None:
    """status.nodeInfo.containerRuntimeVersion is free text from the node: never raises."""
    assert isinstance(rel.shim_has_hyperv_host_process(text), bool)
    assert rel.hcsshim_of(text) is None or rel.runtime_name(text) == "containerd"


def test_bad_hcsshim_tag() -> None:
    with pytest.raises(ValueError, match="not an hcsshim release tag"):
        rel.hcsshim_version_key("0.15")


def test_first_releases_with_pr_2531_are_read_from_the_table() -> None:
    """The first containerd tag of each line whose shim carries PR #2531 (RUNHCS_AT_TAG and
    HAS_2531, read upstream): 2.3.3 (rc.3; 2.3.0-2.3.2 ship rc.1) and 2.4.0."""
    has = dict(HAS_2531)
    first: dict[str, str] = {}
    for tag, hcsshim in RUNHCS_AT_TAG:
        if has.get(hcsshim) and "-" not in tag:
            first.setdefault(tag.rsplit(".", 1)[0], tag)
    expected = tuple(tuple(int(p) for p in tag.split(".")) for tag in first.values())
    assert expected == ((2, 3, 3), (2, 4, 0))
    change = rel.HOST_PROCESS_IN_UVM
    assert rel.first_releases(change) == expected
    assert rel.from_release(change) == "containerd 2.3.3 or later"
    assert rel.shim_lines(change) == "2.3.3+ and 2.4"
    assert change.hcsshim_line == "v0.15"


def test_a_change_from_an_older_shim_names_each_line() -> None:
    """A change first in v0.13.0 (containerd 2.1.1's shim) is in 2.1.1+, 2.2, 2.3 and 2.4."""
    change = rel.ShimChange("v0.13.0", 1, "0")
    assert rel.first_releases(change) == ((2, 1, 1), (2, 2, 0), (2, 3, 0), (2, 4, 0))
    assert rel.shim_lines(change) == "2.1.1+, 2.2, 2.3 and 2.4"
    assert rel.from_release(change) == "containerd 2.1.1 or later"


def test_removed_options_name_the_line_that_drops_them() -> None:
    """RELEASES.md (PR #14166): bin_dir and enable_cdi are removed in 2.4."""
    for key in ("bin_dir", "enable_cdi"):
        assert rel.removed_in(rel.removed_option(key)) == "2.4"


@pytest.mark.parametrize("page", ["host-process-hyperv-no-network", "node-hyperv-host-process"])
def test_the_hyperv_pages_name_the_releases_of_the_rows(page: str) -> None:
    """The rule pages are prose beside the rows: each names the hcsshim tag and the first
    containerd release the rows give for PR #2531, so a changed row fails here."""
    from kubelet_winnet._lint.node_rules import node_rule_page
    from kubelet_winnet._lint.rules import rule_page

    read = node_rule_page if page.startswith("node-") else rule_page
    text = " ".join(read(page).split())
    change = rel.HOST_PROCESS_IN_UVM
    assert f"PR #{change.pull_request}" in text and change.commit in text
    assert f"{change.hcsshim} and later" in text or f"{change.hcsshim} or later" in text
    first = ".".join(map(str, rel.first_releases(change)[0]))
    assert f"from {first}" in text or f"from containerd {first}" in text or (
        rel.from_release(change) in text)


def test_the_removed_options_page_names_the_line_of_the_rows() -> None:
    from kubelet_winnet._lint.node_rules import node_rule_page

    text = " ".join(node_rule_page("node-option-removed").split())
    for option in rel.REMOVED_CRI_OPTIONS:
        assert option.key in text
        assert f"containerd {rel.removed_in(option)} removed" in text
