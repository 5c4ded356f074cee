"""The docs site's API reference as a reader sees it: built with the
real mkdocs and mkdocstrings, the page has no Sphinx roles left as text, every public
dataclass lists its fields, and cross-references are links. mkdocs is the ``docs`` extra
(in the ``ci`` extra): a skip outside CI without it, a failure under CI.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kubelet_winnet
from tests.strategies import MUST_RUN

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def api_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec(
            "mkdocstrings_handlers") is None:
        if MUST_RUN:
            pytest.fail("mkdocs/mkdocstrings missing under CI: the ci extra installs docs")
        pytest.skip("mkdocs and mkdocstrings (the docs extra) are not installed: "
                    "pip install -e '.[docs]' to run these")
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr
    return (site / "api" / "index.html").read_text(encoding="utf-8")


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_no_sphinx_roles_or_raw_crossrefs_left(api_page: str) -> None:
    text = text_of(api_page)
    assert not re.findall(r":(func|class|data|meth|attr|exc|mod):", text)
    assert "][kubelet_winnet" not in text  # an unresolved markdown cross-reference


def test_every_documented_dataclass_lists_its_fields(api_page: str) -> None:
    documented = re.findall(r"^::: kubelet_winnet\.(\w+)$",
                            (REPO / "docs" / "api.md").read_text(encoding="utf-8"), re.M)
    checked = 0
    for name in documented:
        obj = getattr(kubelet_winnet, name, None)
        if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
            continue
        for field in dataclasses.fields(obj):
            anchor = f'id="kubelet_winnet.{name}.{field.name}"'
            assert anchor in api_page, f"{name}.{field.name} is not shown"
        checked += 1
    assert checked >= 4  # KubeletVersion, GateResolution, ExplainStep, Finding, ...


def test_cross_references_are_links(api_page: str) -> None:
    for target in ("kubelet_winnet.parse_feature_gates", "kubelet_winnet.windows_sandbox_config",
                   "kubelet_winnet.parse_kubelet_version"):
        assert re.search(rf'<a[^>]+href="[^"]*#{re.escape(target)}"', api_page), target
