"""The pinned field lists of ``unknown-field`` (kubelet_winnet/_lint/fields.py) against
the real OpenAPI schemas of every Kubernetes release that kubernetes-validate ships in the
range the project models (kubelet 1.26 to 1.38): no field of any such release is missing
(no false finding), and no pinned name is a field of no release (no invented name).

Needs the ``ci`` extra (kubernetes-validate); skips without it outside the project's CI.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR
from kubelet_winnet._lint.fields import FIELDS, FIELDS_RELEASES
from tests.strategies import require


def schema_releases() -> dict[int, Path]:
    """minor -> the ``-local-strict`` schema folder of each release in the range."""
    require("kubernetes_validate")
    root = Path(str(resources.files("kubernetes_validate") / "kubernetes-json-schema"))
    found = {}
    for folder in root.iterdir():
        match = re.fullmatch(r"v1\.(\d+)\.\d+-local-strict", folder.name)
        if match and MIN_MINOR <= int(match[1]) <= MAX_MINOR:
            found[int(match[1])] = folder
    return found


def properties(folder: Path) -> dict[str, set[str]]:
    document: dict[str, Any] = json.loads((folder / "_definitions.json").read_text("utf-8"))
    definitions = document.get("definitions") or document["$defs"]
    return {kind: set(definitions[f"io.k8s.api.core.v1.{kind}"]["properties"])
            for kind in FIELDS}


@pytest.fixture(scope="module")
def schemas() -> dict[int, dict[str, set[str]]]:
    releases = schema_releases()
    assert releases, "kubernetes-validate ships no schema of 1.26-1.38"
    return {minor: properties(folder) for minor, folder in sorted(releases.items())}


def test_every_field_of_every_release_is_known(schemas: dict[int, dict[str, set[str]]]) -> None:
    for minor, fields in schemas.items():
        for kind, names in fields.items():
            missing = names - FIELDS[kind]
            assert not missing, f"{kind} of 1.{minor} has fields the list lacks: {missing}"


def test_every_known_name_is_a_field_of_some_release(
    schemas: dict[int, dict[str, set[str]]],
) -> None:
    for kind, names in FIELDS.items():
        union = set().union(*(fields[kind] for fields in schemas.values()))
        assert names <= union, f"{kind}: in no release: {names - union}"


def test_the_releases_named_are_the_schemas_read(
    schemas: dict[int, dict[str, set[str]]],
) -> None:
    """The finding says "in Kubernetes 1.26-1.37": the first and last release read here."""
    first, last = FIELDS_RELEASES
    assert (f"1.{min(schemas)}", f"1.{max(schemas)}") == (first, last)
