"""Dependencies point one way: the core (``secondbrain``) imports neither the services nor the wiring,
and the services do not import the wiring (``app``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.paths import REPO as ROOT

pytestmark = pytest.mark.fast  # no services: in the fast lane



def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize(("package", "forbidden"), [
    ("secondbrain", ("services", "app")),
    ("services", ("app",)),
])
def test_dependencies_point_one_way(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for module in imported_modules(path):
            if module.split(".")[0] in forbidden:
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert offenders == [], "\n".join(offenders)


STAGE_CLASSES = {
    "fetch": "services.fetcher.stage:FetcherStage",
    "extract": "services.extractors.stage:ExtractorStage",
    "chunk": "services.chunker.stage:ChunkerStage",
    "embed": "services.embedder.stage:EmbedderStage",
}


def readme_rows(path: Path) -> dict[str, str]:
    """The two-column table at the top of a stage folder's README: row name -> cell."""
    rows = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells[1]
    return rows


def test_every_stage_in_the_topology_has_a_stage_class_and_a_readme() -> None:
    from secondbrain.pipeline.topology import STAGES

    assert set(STAGE_CLASSES) == set(STAGES)


@pytest.mark.parametrize("name", sorted(STAGE_CLASSES))
def test_a_stage_folder_says_what_the_stage_reads_writes_and_uses(name: str) -> None:
    """A newcomer reads a stage's inputs, outputs and ports in its folder's README; they must be the
    topology's and the constructor's, not what they were when the README was written."""
    import importlib
    import inspect
    import re

    from secondbrain import ports
    from secondbrain.pipeline.topology import step

    module_name, class_name = STAGE_CLASSES[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    s = step(name)
    assert cls.step is s
    rows = readme_rows(ROOT / module_name.rsplit(".", 1)[0].replace(".", "/") / "README.md")

    def named(cell: str) -> list[str]:
        return re.findall(r"`([^`]+)`", cell)

    assert named(rows["Reads"])[:2] == [s.input, s.input_type.__name__]
    assert named(rows["Writes"])[:2] == [s.output, s.output_type.__name__]
    assert named(rows["Job stage"]) == [s.name]
    assert (("searchable" in rows["Writes"]) == s.final) and (("admitted" in rows["Reads"]) == s.open_input)
    schema = next(n for n in named(rows["Reads"]) if n.endswith(".avsc"))
    assert (ROOT / schema).is_file()
    # The ports: every constructor parameter typed with one of secondbrain.ports' Protocols.
    hints = inspect.get_annotations(cls.__init__, eval_str=True)
    used = [t.__name__ for p, t in hints.items() if p != "return" and getattr(ports, getattr(t, "__name__", ""), None)
            is t and getattr(t, "_is_protocol", False)]
    assert sorted(named(rows["Ports"])) == sorted(used)
    assert f"secondbrain worker {name}" in rows["Runs as"]


def test_the_readme_shows_the_topology_as_declared() -> None:
    from secondbrain.pipeline.topology import diagram

    assert diagram() in (ROOT / "README.md").read_text()
