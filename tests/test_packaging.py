"""What an install of secondbrain contains: the product, never the tooling of its tests and benchmarks.

The packages are found the way setuptools finds them when a wheel is built (the include/exclude
of ``[tool.setuptools.packages.find]`` in pyproject.toml), without building one: a build needs
a build environment from the network and takes most of a minute.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from functools import cache
from pathlib import Path

import pytest
from setuptools import find_namespace_packages, find_packages

from tests.paths import REPO as ROOT

# Imports only the tests, the benchmarks or their stand-ins may make: none of these is a runtime
# dependency, so shipped code importing one fails on an ordinary install.
TEST_ONLY_IMPORTS = ("devtools", "tests", "bench", "moto", "testcontainers", "llama_cpp", "pytest", "hypothesis",
                     "fpdf", "playwright", "matplotlib")
# The stand-ins that used to be shipped, and where they live now.
STAND_INS = ("devtools.s3", "devtools.llm_server", "devtools.qdrant_edge_server")


@cache
def shipped_packages() -> tuple[str, ...]:
    """The packages a wheel built from pyproject.toml holds."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    find = pyproject["tool"]["setuptools"]["packages"]["find"]
    # setuptools' default for pyproject.toml is namespaces = true: folders without __init__.py count too.
    finder = find_namespace_packages if find.get("namespaces", True) else find_packages
    where = ROOT.joinpath(*find.get("where", ["."]))
    return tuple(sorted(finder(where=str(where), include=find.get("include", ["*"]), exclude=find.get("exclude", []))))


def shipped_modules() -> dict[str, Path]:
    """Every Python module of the shipped packages, by dotted name."""
    modules = {}
    for package in shipped_packages():
        for path in sorted(ROOT.joinpath(*package.split(".")).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def test_only_the_product_is_shipped() -> None:
    tops = {package.split(".")[0] for package in shipped_packages()}
    # The core, the stages, the connectors (clients of the API), and the process wiring they run in.
    assert tops == {"secondbrain", "services", "connectors", "app"}, (
        f"pyproject.toml's [tool.setuptools.packages.find] ships {sorted(tops)}; test and benchmark "
        "tooling (devtools/, tests/, bench/) must stay out of the wheel")
    # The discovery really walked the tree.
    assert {"secondbrain.infra", "secondbrain.stores", "services.query", "app"} <= set(shipped_packages())


@pytest.mark.parametrize("module", STAND_INS)
def test_the_test_only_stand_ins_live_outside_the_package(module: str) -> None:
    assert importlib.util.find_spec(module) is not None, f"{module} is gone: update STAND_INS"
    stem = module.rsplit(".", 1)[1]
    shipped = [name for name in shipped_modules() if name.rsplit(".", 1)[-1] == stem]
    assert shipped == [], f"{shipped} would ship a test-only stand-in; it belongs in {module}"


def test_shipped_code_imports_nothing_only_the_tests_have() -> None:
    offenders = []
    for name, path in shipped_modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
            else:
                continue
            offenders += [f"{name} imports {target} (line {node.lineno})" for target in targets
                          if target.split(".")[0] in TEST_ONLY_IMPORTS]
    assert offenders == [], ("shipped modules import test-only code; move the code that needs it to devtools/:\n"
                             + "\n".join(offenders))


def test_the_image_leaves_the_tooling_out() -> None:
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    assert {"devtools", "tests", "bench"} <= ignored
