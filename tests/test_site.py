"""The documentation site (mkdocs.yml, docs/): complete, self-contained, no internal refs.

The strict build itself runs in CI (`.ci/run`, `tox -e site`); these checks need no
mkdocs and fail fast when a page is missing from the site or leaks project-internal
references (issue numbers, commit hashes) to users.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kubelet_winnet._lint.rules import RULES

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"


def _config() -> dict[str, Any]:
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert isinstance(config, dict)
    return config


def _nav_files(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [f for value in node.values() for f in _nav_files(value)]
    if isinstance(node, list):
        return [f for value in node for f in _nav_files(value)]
    return []


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    nav = _nav_files(_config()["nav"])
    for page in nav:
        assert (DOCS / page).is_file(), page
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages <= set(nav), pages - set(nav)


def test_every_check_rule_has_a_page_in_the_site() -> None:
    nav = set(_nav_files(_config()["nav"]))
    for rule in RULES:
        assert f"rules/{rule.id}.md" in nav, rule.id
        assert rule.help_uri.endswith(f"docs/rules/{rule.id}.md")


def test_site_builds_offline() -> None:
    """Material loads Google Fonts unless ``theme.font`` is false; the build is strict."""
    config = _config()
    assert config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False
    assert config["strict"] is True


def test_upstream_page_links_the_sources() -> None:
    text = (DOCS / "upstream.md").read_text(encoding="utf-8")
    for link in (
        "https://github.com/kubernetes/kubernetes/pull/130250",
        "https://github.com/kubernetes/kubernetes/pull/142018",
        "https://github.com/containerd/containerd/issues/4856",
        "keps/sig-windows/3503-host-network-support-for-windows-pods",
        "https://github.com/kubernetes/kubernetes/tree/master/pkg/kubelet/kuberuntime",
    ):
        assert link in text, link


# Ours: "issue" or "item" with a number, or "#" and a number alone. Upstream references
# name their project ("PR #130250", "containerd issue #4856") and stay.
_INTERNAL = re.compile(
    r"(?<!containerd )\bissue[ -]?#?\d+\b|(?<![\w/])(?<!PR )(?<!issue )#\d{1,4}\b"
    r"|\bcommit `?[0-9a-f]{7,40}\b|\bitem \d+\b",
    re.IGNORECASE,
)


def test_no_internal_references_in_user_facing_docs() -> None:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in _INTERNAL.finditer(line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{number}: {match.group()}")
    assert not found, "\n".join(found)


def test_the_internal_reference_pattern_catches_what_it_should() -> None:
    assert _INTERNAL.search("as asked in issue 2, item 10")
    assert _INTERNAL.search("see #12")
    assert _INTERNAL.search("measured at commit `a0d7c52`")
    assert not _INTERNAL.search("containerd issue #4856 is still open")
    assert not _INTERNAL.search("kubernetes PR #130250")
    assert not _INTERNAL.search("[anchor](#host-network)")


def test_every_public_name_is_in_the_api_reference() -> None:
    import kubelet_winnet
    import kubelet_winnet.errors
    import kubelet_winnet.runtime
    import kubelet_winnet.testing
    import kubelet_winnet.testing.strategies

    pages = (DOCS / "api.md").read_text(encoding="utf-8")
    errors = set(kubelet_winnet.errors.__all__)
    missing = [
        f"{module.__name__}.{name}"
        for module in (kubelet_winnet, kubelet_winnet.runtime, kubelet_winnet.testing,
                       kubelet_winnet.testing.strategies)
        for name in module.__all__
        if name not in errors
        and not name.isupper()  # constants are documented with the function using them
        and not name.startswith("__")
        and f"::: {module.__name__}.{name}\n" not in pages
    ]
    assert not missing, missing
