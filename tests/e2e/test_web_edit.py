"""Editing a note and filtering Sources by tag on the web page, in headless Chromium against ``secondbrain
up``: the source's page edits its words, title and tags (a new version, the earlier one kept under
Versions), an answer given before says its source was edited since, the Sources list keeps to one tag, and
the sources shown are tagged at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.e2e.harness import REPO, Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"
MEMO = "The new sofa weighs him outdated pounds, so two people can carry it up the stairs."
FIXED = "The new sofa weighs about eighty pounds, so two people can carry it up the stairs."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with readable_tmp("sb-web-edit-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data")], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            yield svc
        finally:
            svc.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def test_a_note_is_edited_on_its_page_and_sources_filter_by_tag(browser: Browser, server: Service) -> None:
    with server.client() as api:
        link = api.post("/v1/login-links").json()["path"]
        sofa = api.post("/v1/notes", json={"text": MEMO, "title": "Sofa"}).json()["job_id"]
        shed = api.post("/v1/notes", json={"text": "The shed key hangs by the back door.",
                                           "title": "Shed key"}).json()["job_id"]
        wait_jobs(api, [sofa, shed])
        sofa_id = next(s["source_id"] for s in api.get("/v1/sources").json()["sources"] if s["job_id"] == sofa)
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.url + link)
    rows = page.locator("#source-list .source")
    expect(rows).to_have_count(2)
    # A question answered from the words as they were (kept as a conversation).
    turns = page.locator("#thread .turn")
    page.get_by_label("Your question").fill("How heavy is the new sofa?")
    page.get_by_label("Your question").press("Enter")
    expect(turns).to_have_count(1)
    expect(turns.last).not_to_have_attribute("data-state", "streaming", timeout=60_000)
    expect(turns.last.locator(".edited-since")).to_have_count(0)

    page.get_by_role("button", name="Open Sofa").click()
    dialog = page.locator("#source-page")
    expect(dialog.get_by_role("button", name="Edit")).to_be_visible()
    dialog.get_by_role("button", name="Edit").click()
    expect(page.get_by_label("Text", exact=True)).to_have_value(MEMO)
    page.get_by_label("Text", exact=True).fill(FIXED)
    page.get_by_label("Tags (separated by commas)").fill("Home, furniture")
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialog.screenshot(path=str(SHOTS / "edit-source.png"))
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-status")).to_have_text("Saved: the new version is being indexed.")

    with server.client() as api:
        newest = api.get(f"/v1/sources/{sofa_id}").json()["versions"][0]["jobs"][0]["job_id"]
        assert wait_jobs(api, [newest])[newest]["status"] == "succeeded"
        shown = api.get(f"/v1/sources/{sofa_id}").json()
        assert (shown["current_version"], shown["tags"]) == (2, ["furniture", "home"])
        hits = api.get("/v1/search", params={"q": "sofa pounds"}).json()["hits"]
        assert any("about eighty pounds" in h["text"] for h in hits)
        assert not any("outdated" in h["text"] for h in hits)

    # Its page shows the new words, its tags and both versions.
    page.locator("#source-page-close").click()
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Open Sofa").click()
    expect(dialog.locator(".versions > li")).to_have_count(2)
    expect(dialog.locator(".versions > li").first).to_contain_text("Version 2 (current)")
    expect(dialog.locator(".tags-line")).to_contain_text("#home")
    expect(dialog.locator(".page-text")).to_contain_text("about eighty pounds")
    page.locator("#source-page-close").click()
    expect(dialog).to_be_hidden()

    # The answer given before the edit says its source was edited since, and links to the words it quoted.
    page.reload()
    expect(turns).to_have_count(1)
    mark = turns.first.locator(".edited-since").first
    expect(mark).to_contain_text("Edited since this answer, which quoted version 1 (it is at version 2 now).")
    quoted = mark.get_by_role("link", name="Version 1 as quoted").get_attribute("href")
    with server.client() as api:
        assert quoted is not None and api.get(quoted).text == MEMO
    turns.first.screenshot(path=str(SHOTS / "answer-edited-since.png"))

    # Sources kept to one tag.
    page.get_by_label("Tag", exact=True).select_option("home")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Sofa")
    expect(rows.first).to_contain_text("#home")
    # Every source shown gets a tag at once, and loses it again.
    page.get_by_label("Tag the sources shown").fill("Living room")
    page.get_by_role("button", name="Add to all shown").click()
    expect(rows.first).to_contain_text("#living-room")
    page.locator("#sources").screenshot(path=str(SHOTS / "sources-by-tag.png"))
    with server.client() as api:
        assert api.get("/v1/tags").json()["tags"] == [
            {"tag": "furniture", "sources": 1}, {"tag": "home", "sources": 1}, {"tag": "living-room", "sources": 1}]
    page.get_by_role("button", name="Take off all shown").click()
    expect(rows.first).not_to_contain_text("#living-room")
    page.get_by_label("Tag", exact=True).select_option("")
    expect(rows).to_have_count(2)
    assert errors == []
