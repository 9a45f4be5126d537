"""The tests mirror the code: a test module lives under the folder of what it tests."""

from __future__ import annotations

import pytest

from tests.paths import REPO

pytestmark = pytest.mark.fast  # no services: in the fast lane

# Suites that are not about one package: the ports' contract suites, end-to-end runs and whole-product checks.
CROSS_CUTTING = {"contracts", "e2e"}
TOP_LEVEL = {"test_architecture.py", "test_packaging.py", "test_tenancy.py", "test_layout.py", "test_fast_lane.py",
             "test_e2e_dates.py"}


def test_every_test_module_sits_where_its_package_is() -> None:
    misplaced = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        rel = path.relative_to(REPO / "tests")
        if len(rel.parts) == 1:
            if rel.name not in TOP_LEVEL:
                misplaced.append(f"{rel}: flat; move it under the package it tests")
            continue
        if rel.parts[0] in CROSS_CUTTING:
            continue
        package = REPO.joinpath(*rel.parts[:-1])
        if not package.is_dir():
            misplaced.append(f"{rel}: there is no {'/'.join(rel.parts[:-1])}/ in the code")
    assert misplaced == [], "\n".join(misplaced)
