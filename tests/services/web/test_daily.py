"""The page people keep open all day, in the system Chromium at desktop and phone widths in both colour
schemes: sources to browse, failed captures apart with the server's reason (Retry only where trying again
may help, Remove always), the question box docked in the Ask column, dark mode, settings (keys, export,
time zone, version), plain words, and an axe-core check.  Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect, sync_playwright
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.settings import Settings
from tests.paths import REPO
from tests.serving import serve_in_thread

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> str:
    """axe-core from npm, into a folder this test owns."""
    folder = tmp_path_factory.mktemp("axe")
    subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), "axe-core@4"],
                   check=True, timeout=240, capture_output=True)
    return (folder / "node_modules" / "axe-core" / "axe.min.js").read_text()


@pytest.fixture(scope="module")
def site(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("daily"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off", timezone="Europe/Berlin")
    rt = build_runtime(settings, vectors=True, models=False)
    rt.metadata.users.ensure_user("local")
    app = create_app(rt, gateway=True, query=False)
    with TestClient(app, base_url="http://localhost") as api:
        # A PDF whose stored title is "untitled", and a capture that failed.
        good = api.post("/v1/artifacts", files={"file": ("report.pdf", b"%PDF-1.4 a report", "application/pdf")},
                        data={"title": "untitled"}).json()
        bad = api.post("/v1/artifacts", files={"file": ("scan.pdf", b"%PDF-1.4 broken", "application/pdf")}).json()
        rt.metadata.jobs.job_failed("local", bad["job_id"], "extract", "extract failed: not a PDF: no /Root object")
        # A failure of the moment: the embedding service did not answer until retries ran out.
        late = api.post("/v1/notes", json={"text": "Call the plumber on Thursday", "title": "Plumber"}).json()
        rt.metadata.jobs.job_failed("local", late["job_id"], "embed", "embed failed: ConnectError: connection refused",
                                    retryable=True)
        with serve_in_thread(app, access_log=False) as (url, _port):
            yield url, {"good": good["job_id"], "bad": bad["job_id"], "late": late["job_id"]}
    rt.close()


def open_page(pw: Any, url: str, width: int, scheme: str) -> tuple[Any, Page, list[str]]:
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
    context = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 780},
                                  color_scheme=scheme, accept_downloads=True,
                                  bypass_csp=True)  # only so axe-core can be injected
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    return browser, page, errors


def serious(page: Page, axe_source: str) -> list[str]:
    page.add_script_tag(content=axe_source)
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                           ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))")
    return [f"{v['id']} ({v['impact']}): {v['nodes'][:3]}" for v in result if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_at_each_width_and_scheme(site: tuple[str, dict[str, str]], axe: str, width: int,
                                           scheme: str) -> None:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    url, jobs = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = f"{'desktop' if width > 600 else 'phone'}-{scheme}"
    with sync_playwright() as pw:
        browser, page, errors = open_page(pw, url, width, scheme)
        # The system's scheme is followed.
        expect(page.locator("html")).to_have_attribute("data-theme", scheme)
        # Sources: the file's name instead of "untitled", no "file:", the failed one apart with its reason.
        row = page.locator(f'.source[data-job-id="{jobs["good"]}"]')
        expect(row.locator(".title")).to_have_text("report.pdf")
        expect(page.locator("#source-list")).not_to_contain_text("file:")
        expect(page.locator(f'.source[data-job-id="{jobs["bad"]}"]')).to_have_count(0)
        failed = page.locator(f'#failed-list li[data-job-id="{jobs["bad"]}"]')
        expect(failed).to_contain_text("scan.pdf")
        # The server's reason, as it wrote it (the stage's prefix aside): the page does not reword it.
        expect(failed.locator(".reason")).to_have_text("Not a PDF: no /Root object.")
        expect(failed.get_by_role("button", name="Retry scan.pdf")).to_have_count(0)  # it would fail again
        expect(failed.get_by_role("button", name="Remove scan.pdf from this list")).to_be_visible()
        late = page.locator(f'#failed-list li[data-job-id="{jobs["late"]}"]')
        expect(late.locator(".reason")).to_have_text("A service it needs did not answer (ConnectError: connection "
                                                     "refused). Try again in a while.")
        expect(late.get_by_role("button", name="Retry Plumber")).to_be_visible()
        expect(page.locator("#sources-summary")).to_have_text("1 source.")
        # The question box is docked in the Ask column: it covers nothing; on a wide screen it stays in view
        # wherever the other columns are scrolled, and it does not move while an answer grows.
        box = page.locator("#question")
        for column in ("#conversations", ".side"):
            page.evaluate(f"document.querySelector('{column}').scrollTo(0, 1e6)")
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        shown = box.bounding_box()
        assert shown is not None
        if width > 1100:
            assert shown["y"] + shown["height"] <= page.viewport_size["height"]  # type: ignore[index]
        before = box.bounding_box()
        page.evaluate("document.querySelector('#thread').append(Object.assign(document.createElement('p'),"
                      " {textContent: 'A long streamed answer. '.repeat(200)}))")
        if width > 1100:
            assert box.bounding_box() == before  # nothing moves while an answer grows
        else:  # one column: the box follows the conversation, right under it
            # Both boxes in one snapshot: the page may scroll or re-render between two separate reads.
            thread, moved = page.evaluate("['#thread', '#question'].map(s => {"
                                          " const r = document.querySelector(s).getBoundingClientRect();"
                                          " return {y: r.y, height: r.height}; })")
            assert moved["y"] > thread["y"] + thread["height"]
        page.evaluate("document.querySelector('#thread p:last-child').remove()")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        assert serious(page, axe) == []
        # A source's own page.
        row.locator("button.title").click()
        dialog = page.locator("#source-page")
        expect(dialog).to_be_visible()
        expect(page.locator("#source-page-title")).to_have_text("report.pdf")
        expect(dialog).to_contain_text("Versions")
        expect(dialog.locator(".jobs li")).to_contain_text("read: waiting")
        page.screenshot(path=str(SHOTS / f"{name}-source.png"))
        assert serious(page, axe) == []
        page.get_by_role("button", name="Close").first.click()
        # Settings: time zones, keys, version.
        page.evaluate("document.querySelector('#settings').scrollIntoView()")
        expect(page.locator("#zone-server")).to_have_text("Europe/Berlin")
        expect(page.locator("#zone-browser")).not_to_be_empty()
        expect(page.locator("#version")).not_to_be_empty()
        page.locator("#settings").screenshot(path=str(SHOTS / f"{name}-settings.png"))
        assert errors == []
        browser.close()


def test_retry_keys_export_and_a_remembered_theme(site: tuple[str, dict[str, str]]) -> None:
    url, jobs = site
    with sync_playwright() as pw:
        browser, page, errors = open_page(pw, url, 1280, "light")
        # Dark mode by hand, remembered across a reload.
        page.get_by_role("button", name="Dark mode").click()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        expect(page.get_by_role("button", name="Dark mode")).to_have_attribute("aria-pressed", "true")
        # Keys: create one (shown once), then revoke it.
        page.get_by_label("Name of a new key").fill("laptop")
        page.get_by_role("button", name="Create a key").click()
        expect(page.locator("#new-key-value")).to_have_value(__import__("re").compile(r"^sb_"))
        expect(page.locator("#key-list")).to_contain_text("laptop")
        page.get_by_role("button", name="Revoke laptop").click()
        expect(page.locator("#key-list")).not_to_contain_text("laptop")
        # Export: the ZIP arrives with progress shown, then a sentence.
        with page.expect_download() as download:
            page.get_by_role("button", name="Download everything (ZIP)").click()
        assert download.value.suggested_filename.endswith(".zip")
        expect(page.locator("#export-status")).to_contain_text("Your archive is ready")
        # Retry: the failed capture goes back to work, shown where it happened and in the header.
        page.get_by_role("button", name="Retry Plumber").click()
        expect(page.locator(f'#failed-list li[data-job-id="{jobs["late"]}"]')).to_have_count(0)
        expect(page.locator("#captured")).to_contain_text("Plumber")
        expect(page.locator("#busy")).to_contain_text("in progress")
        page.screenshot(path=str(SHOTS / "desktop-dark-retried.png"), full_page=True)
        # Remove: the file that cannot be read leaves the list (and the server).
        page.get_by_role("button", name="Remove scan.pdf from this list").click()
        expect(page.locator(f'#failed-list li[data-job-id="{jobs["bad"]}"]')).to_have_count(0)
        expect(page.locator("#failed")).to_be_hidden()
        assert errors == []
        browser.close()


def test_a_source_deleted_from_its_own_page_leaves_the_list(site: tuple[str, dict[str, str]]) -> None:
    url, jobs = site
    with sync_playwright() as pw:
        browser, page, errors = open_page(pw, url, 1280, "light")
        row = page.locator(f'.source[data-job-id="{jobs["good"]}"]')
        row.locator("button.title").click()
        dialog = page.locator("#source-page")
        expect(page.locator("#source-page-title")).to_have_text("report.pdf")
        dialog.get_by_role("button", name="Delete", exact=True).click()
        page.get_by_role("dialog", name="Delete “report.pdf”?").get_by_role("button", name="Delete").click()
        expect(dialog).to_be_hidden()
        expect(row).to_have_count(0)  # the list was loaded again
        expect(page.locator("#source-list")).not_to_contain_text("report.pdf")
        assert errors == []
        browser.close()
