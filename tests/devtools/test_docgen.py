"""The documentation's reference pages come from the code: every setting with its default and meaning, every
route of the OpenAPI document, every event schema, the pipeline's topology and the benchmarks' own figures; the
README stays short and its figures are the benchmarks'.  The site itself builds with ``mkdocs build --strict``
(a broken link, a missing anchor or a page missing from the navigation fails), and every section of the README
it replaced is a page of the navigation or a section in a page's table of contents."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml

from devtools import docgen
from secondbrain.settings import Settings
from tests.paths import REPO

fast = pytest.mark.fast


@fast
def test_every_setting_is_on_the_configuration_page_with_its_default_and_meaning() -> None:
    page = docgen.settings()
    listed = set(re.findall(r"^\| `(SB_[A-Z0-9_]+)` \|", page, re.M))
    assert listed == {f"SB_{name.upper()}" for name in Settings.model_fields}
    undescribed = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert undescribed == [], f"give these settings a description (the configuration page shows it): {undescribed}"
    assert "| `SB_PORT` | `8000` | integer | " in page
    assert "| `SB_VECTOR_STORE` | `edge` | one of `edge`, `qdrant` | " in page
    assert "(a secret: never printed or logged)" in page.split("`SB_POSTGRES_DSN`")[1].split("\n")[0]
    sections = [title for title, _names in docgen.settings_sections()]
    assert sections[:3] == ["General", "HTTP", "Mail"] and "Kafka" in sections and "Backups" in sections
    assert "<!-- generated: settings -->" in (REPO / "docs" / "configuration.md").read_text()


@fast
def test_the_event_contract_lists_every_schema_and_every_field_of_its_newest_version() -> None:
    page = docgen.events()
    assert "<!-- generated: events -->" in (REPO / "docs" / "events.md").read_text()
    newest: dict[str, int] = {}
    for path in (REPO / "schemas").glob("*.avsc"):
        name, version = re.fullmatch(r"(\w+)\.v(\d+)\.avsc", path.name).groups()  # type: ignore[union-attr]
        newest[name] = max(newest.get(name, 0), int(version))
    for name, version in newest.items():
        section = page.split(f"### `{name}`")[1].split("\n### ")[0]
        assert f"`{name}.v{version}.avsc`" in section
        schema = json.loads((REPO / "schemas" / f"{name}.v{version}.avsc").read_text())
        for record in docgen._records(schema):
            for field in record["fields"]:
                assert f"| `{field['name']}` |" in section, (name, record["name"], field["name"])
    assert "`artifacts.submitted` (other apps publish here)" in page


@fast
def test_the_architecture_diagram_is_drawn_from_the_topology() -> None:
    from secondbrain.pipeline.topology import PIPELINE, diagram

    drawn = docgen.topology()
    assert "<!-- generated: topology -->" in (REPO / "docs" / "architecture.md").read_text()
    assert drawn.startswith('<div class="pipeline-diagram">\n<svg ') and diagram() in drawn
    boxes = re.findall(r"<text [^>]*>([^<]+)</text>", docgen.topology_svg())
    chain = [name for step in PIPELINE for name in (step.input, f"stage: {step.name}", step.output)]
    assert [b for b in boxes if b in chain] == list(dict.fromkeys(chain))  # every topic and stage, in order


@fast
def test_an_included_operator_guide_keeps_its_text_and_names_the_files_it_links() -> None:
    text = docgen.include("deploy/README.md")
    assert text.startswith("Two ways to run every secondbrain process")
    assert "\n### Docker Compose\n" in text and "\n## " not in text  # one level down, under the page's own
    assert "`deploy/k8s/SIZING.md`" in text and "](" not in text.replace("](http", "")


@fast
def test_every_benchmark_file_holds_its_figures_with_the_machine_and_the_date() -> None:
    files = sorted(docgen.BENCHMARKS.glob("*.json"))
    assert {p.stem for p in files} >= {"locomo", "answers", "temporal", "modalities", "query", "scale", "bulk",
                                       "imports", "backbone", "folder_sync", "transcribers", "agenda"}
    for path in files:
        data = json.loads(path.read_text())
        assert (REPO / "bench" / f"{data['bench']}.py").is_file(), path.name
        date.fromisoformat(data["measured_at"][:10])
        assert re.search(r"\d+ CPUs", data["machine"]), path.name
        assert data["tables"] and all(len(row) == len(t["columns"]) for t in data["tables"] for row in t["rows"])
        assert all((docgen.BENCHMARKS / chart).is_file() for chart in data["charts"]), path.name
        section = docgen.benchmark(path.stem)
        assert f"*Measured {data['measured_at'][:10]} on {data['machine']}" in section


@fast
def test_the_readme_is_short_starts_with_the_two_commands_and_shows_the_benchmarks_headline_figures() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    commands = re.findall(r"^(make \w+)", readme, re.M)
    assert commands[:2] == ["make up", "make test"]
    shown = re.search(r"<!-- figures: [^\n]*-->\n(.*?)\n<!-- /figures -->", readme, re.S)
    assert shown is not None, "the README's headline figures are between <!-- figures ... --> and <!-- /figures -->"
    assert shown.group(1) == docgen.readme_figures(), \
        "the README's figures differ from docs/benchmarks/*.json: paste `python -m devtools.docgen readme-figures`"
    assert "images/answer.png" in readme.split("```")[0]  # the page answering with citations, before all else
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme):  # every link of the README leads somewhere
        assert target.startswith("http") or (REPO / target).exists(), target


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict``, as a contributor runs it."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "-d", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strict_and_a_page_left_out_of_the_navigation_fails_it(site: Path, tmp_path: Path) -> None:
    assert (site / "configuration" / "index.html").is_file() and (site / "images" / "answer.png").is_file()
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python/name:", ""))
    assert config["validation"] == {"omitted_files": "warn", "not_found": "warn", "absolute_links": "warn",
                                    "unrecognized_links": "warn", "anchors": "warn"} and config["strict"] is True
    # A page nobody added to the navigation is an error, not a quiet orphan (tried on a copy of docs/).
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    (tmp_path / "docs" / "stray-page.md").write_text("# Stray\n")
    (tmp_path / "mkdocs.yml").write_text((REPO / "mkdocs.yml").read_text().replace(
        "docs_dir: docs", f"docs_dir: {tmp_path / 'docs'}").replace(
        "- devtools/mkdocs_hooks.py", f"- {REPO / 'devtools' / 'mkdocs_hooks.py'}"))
    done = subprocess.run([str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "-d",
                           str(tmp_path / "site")], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    said = done.stdout + done.stderr
    assert done.returncode != 0 and 'not included in the "nav" configuration:\n  - stray-page.md' in said, said


# The sections of the README the site replaced, and where each is now: a page of the navigation (one click), or
# a section in a page's table of contents (two).
README_SECTIONS = {
    "Bring your notes": "bring-your-notes/", "From your inbox": "mail/",
    "Calendars you subscribe to": "calendars/", "How it works": "architecture/",
    "Guarantees": "architecture/#guarantees",
    "Two ways to run, one code path": "operations/#two-ways-to-run-one-code-path",
    "Observability": "operations/#observability", "What each format gives": "capturing/#what-each-format-gives",
    "Web app": "web-page/", "On your phone": "phone/", "HTTP API": "api/", "Asking": "asking/",
    "The agenda": "agenda/", "Users and API keys": "security/#users-and-api-keys", "Security": "security/#security",
    "Your data": "security/#your-data", "Changing the embedding model": "operations/#changing-the-embedding-model",
    "Folders and AI assistants": "folders/", "Keep a folder (an Obsidian vault, Documents) in sync": "folders/",
    "In the browser": "browser/", "Your memory in AI assistants (MCP)": "mcp/", "Configuration": "configuration/",
    "Event contract for other apps": "events/", "Node.js": "events/#nodejs", "Tests": "development/#tests",
    "Results": "benchmarks/",
    "Long-term conversational memory (LoCoMo)": "benchmarks/#long-term-conversational-memory-locomo",
    "Answers on LoCoMo (what a person reads)": "benchmarks/#answers-on-locomo-without-a-model",
    "Temporal parser": "benchmarks/#temporal-parser",
    "Ingestion per modality, next to the embedder alone":
        "benchmarks/#ingestion-per-modality-next-to-the-embedder-alone",
    "Speech to text: faster-whisper or WhisperX": "benchmarks/#speech-to-text-faster-whisper-or-whisperx",
    "Query latency": "benchmarks/#query-latency",
    "Scale: worker processes per stage": "benchmarks/#scale-worker-processes-per-stage",
    "Imports per format": "benchmarks/#imports-per-format",
    "The pipeline's weight": "benchmarks/#bulk-import-the-pipeline-next-to-the-embedder-alone",
    "Start-up and note-to-searchable": "benchmarks/#start-up-and-note-to-searchable", "Status": "#status",
}


def nav_pages(nav: list[object]) -> set[str]:
    pages: set[str] = set()
    for item in nav:
        for value in (item.values() if isinstance(item, dict) else [item]):
            pages |= nav_pages(value) if isinstance(value, list) else {str(value)}
    return pages


def test_every_section_of_the_old_readme_is_two_clicks_from_the_navigation(site: Path) -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python/name:", ""))
    in_nav = nav_pages(config["nav"])
    theme = config["theme"]["features"]
    assert "navigation.sections" in theme and "navigation.expand" in theme  # every page shown: one click
    missing = []
    for section, where in README_SECTIONS.items():
        page, _, anchor = where.partition("#")
        source = f"{page.rstrip('/') or 'index'}.md"
        html = (site / page / "index.html").read_text()
        if source not in in_nav:
            missing.append(f"{section}: {source} is not in the navigation")
        elif anchor and f'href="#{anchor}"' not in html.split('data-md-component="toc"')[1]:
            missing.append(f"{section}: no #{anchor} in the table of contents of {source}")
    assert missing == []


def test_the_api_page_lists_every_route_of_the_openapi_document() -> None:
    doc = docgen.openapi_document()
    page = docgen.api(doc)
    assert len(doc["paths"]) > 40
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert f"#### {method.upper()} `{path}`" in page and op["summary"] in page, (method, path)
    assert "<!-- generated: api -->" in (REPO / "docs" / "api.md").read_text()
