"""docs/architecture.md names real code: every `file:function` reference resolves, every
private core module is on the map, and every step id of STEPS is in the step table."""

from __future__ import annotations

import importlib
import pkgutil
import re

import kubelet_winnet
from kubelet_winnet._kubelet.rules import STEPS
from tests.strategies import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "architecture.md").read_text("utf-8")


def test_every_file_function_reference_exists() -> None:
    references = re.findall(r"`?((?:\w+/)*_?\w+)\.py:([\w.]+)`?", DOC)
    assert len(references) >= 15
    for module_file, attribute in references:
        module = importlib.import_module("kubelet_winnet." + module_file.replace("/", "."))
        target: object = module
        for part in attribute.split("."):
            if part == "ERROR_":  # a family of constants
                break
            if part.endswith("_"):
                assert any(name.startswith(part) for name in dir(target)), (module_file, part)
                break
            assert hasattr(target, part), f"{module_file}.py:{attribute}"
            target = getattr(target, part)


def test_every_module_is_on_the_map() -> None:
    """Every module of the package, subpackages included, has a row in the module map."""
    table = DOC[DOC.index("## Module map"):DOC.index("## One pod")]
    prefix = kubelet_winnet.__name__ + "."
    for info in pkgutil.walk_packages(kubelet_winnet.__path__, prefix):
        path = info.name.removeprefix(prefix).replace(".", "/")
        assert f"`{path}/`" in table if info.ispkg else f"`{path}.py`" in table, path


def test_every_step_id_is_in_the_step_table() -> None:
    table = DOC[DOC.index("## Where each kubelet step lives"):DOC.index("## How to add")]
    for step in STEPS:
        assert f"`{step.id}`" in table, step.id
