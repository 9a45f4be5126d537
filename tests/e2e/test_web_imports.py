"""Importing from the web page, in headless Chromium against real stores: "Import from another app" takes an
Evernote export and says what it imported and what it skipped and why; a Google Takeout zip dropped on the
page is imported (not uploaded as one file); a file that is no export gets the server's sentence.  The
captures are checked through the API.  Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import base64
import re
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request
from playwright.sync_api import Page, expect, sync_playwright
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools import gen_exports as gen
from secondbrain.infra.ports import free_port
from secondbrain.settings import Settings
from services.access import request_runtime
from services.deps import relay_of
from services.importers.deps import get_submitter
from services.importers.submit import CaptureSubmitter
from tests.paths import REPO
from tests.serving import serve_in_thread

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"


@pytest.fixture(scope="module")
def site(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("web-imports"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off")
    rt = build_runtime(settings, vectors=True, models=True)
    rt.metadata.users.ensure_user("local")
    with serve_in_thread(create_app(rt, gateway=True, query=True), access_log=False) as (url, _port):
        yield url
    rt.close()


def import_from_page(page: Page, export: Path) -> None:
    """Import ``export`` with the page's own form."""
    page.get_by_text("Import from another app").click()
    page.get_by_label("Export file").set_input_files(str(export))
    page.get_by_role("button", name="Import", exact=True).click()


def drop(page: Page, path: Path, mime: str) -> None:
    """Drag a file from the desktop onto the page: the events a real drop fires."""
    payload = {"name": path.name, "type": mime, "b64": base64.b64encode(path.read_bytes()).decode()}
    transfer = page.evaluate_handle("""(f) => {
        const dt = new DataTransfer();
        const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, {type: f.type}));
        return dt;
    }""", payload)
    for event in ("dragenter", "dragover", "drop"):
        page.dispatch_event("#dropzone", event, {"dataTransfer": transfer})


def test_an_export_imported_from_the_page(site: str, tmp_path: Path) -> None:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    SHOTS.mkdir(parents=True, exist_ok=True)
    enex = gen.write_evernote(tmp_path / "evernote")
    takeout = tmp_path / "takeout-20240601T101500Z-001.zip"
    folder = gen.write_keep(tmp_path / "keep")
    with zipfile.ZipFile(takeout, "w") as z:
        for f in folder.rglob("*"):
            z.write(f, f.relative_to(folder.parent).as_posix())
    stray = tmp_path / "holiday.zip"
    with zipfile.ZipFile(stray, "w") as z:
        z.writestr("photo.bin", bytes(range(256)))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1366, "height": 900}, timezone_id="Europe/Lisbon")
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(site + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")

        import_from_page(page, enex)
        result = page.locator("#import-result")
        expect(result).to_contain_text("Travel.enex: Evernote, 4 notes in 1 notebook: 6 items imported, 1 skipped.")
        expect(result).to_contain_text("secondbrain cannot read this attachment: unsupported content type "
                                       "application/zip (photos.zip)")
        page.locator("#add").scroll_into_view_if_needed()
        page.locator("#add").screenshot(path=str(SHOTS / "import-evernote-1366.png"))

        drop(page, takeout, "application/zip")  # dropped anywhere: an export is imported, not uploaded
        expect(result).to_contain_text(f"{takeout.name}: Google Keep, 6 notes in Takeout/Keep: 5 items imported")
        expect(result).to_contain_text("in Keep's trash: Old idea")

        drop(page, stray, "application/zip")
        expect(result).to_contain_text("holiday.zip was not imported. holiday.zip is not an export secondbrain "
                                       "recognises")
        # On a phone, the same export again: nothing is added, and the page says so.
        page.set_viewport_size({"width": 390, "height": 844})
        page.get_by_label("Export file").set_input_files(str(enex))
        page.get_by_role("button", name="Import", exact=True).click()
        expect(result).to_contain_text("Travel.enex: Evernote, 4 notes in 1 notebook: 0 items imported, 6 already "
                                       "imported before, 1 skipped.")
        page.locator("#add").screenshot(path=str(SHOTS / "import-evernote-390.png"))
        assert errors == []
        browser.close()
    sources = httpx.get(site + "/v1/sources", params={"limit": 100}, timeout=30).json()["sources"]
    titles = {s["title"]: s for s in sources}
    # fixed date: the export's own past time, read back as written
    assert {"Lisbon trip", "Pastry receipt", "Bike lock", "Groceries"} <= set(titles)
    assert titles["Lisbon trip"]["captured_at"].startswith("2023-05-14T08:30:00")
    assert titles["Bike lock"]["source_uri"] == "import:keep:Keep/Bike%20lock.json"  # its file: Keep has no id


def test_an_import_the_backlog_pauses_goes_on_by_itself_on_the_page(dsn: str,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """A backlog of 3 (SB_MAX_PENDING_JOBS): the upload pauses after 3 notes; the page waits as the answer asks
    and sends the export again from where it paused until all 8 are in, then says it paused."""
    tmp = tmp_path_factory.mktemp("web-pause")
    settings = Settings(data_dir=tmp / "data", postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                        auth="off", max_pending_jobs=3, default_user="pager", topic_prefix="pager.")
    rt = build_runtime(settings, vectors=False, models=False)
    rt.metadata.users.ensure_user("pager")
    takeout = tmp / "takeout.zip"
    folder = gen.write_many_keep_notes(tmp / "keep", 8)
    with zipfile.ZipFile(takeout, "w") as z:
        for f in folder.rglob("*"):
            z.write(f, f.relative_to(folder.parent).as_posix())
    stop = threading.Event()

    def pipeline() -> None:  # no pipeline runs here: this takes the queued jobs, as it would
        while not stop.wait(0.5):
            for row in rt.metadata.catalog.list_sources("pager", 100, status="queued"):
                if row.job_id:
                    rt.metadata.jobs.job_failed("pager", row.job_id, "extract", "taken by the test")

    taker = threading.Thread(target=pipeline, daemon=True)
    taker.start()
    try:
        with serve_in_thread(create_app(rt, gateway=True, query=False), access_log=False) as (url, _port), \
                sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.set_default_timeout(90_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url + "/")
            expect(page.locator("body")).to_have_attribute("data-ready", "true")
            import_from_page(page, takeout)
            result = page.locator("#import-result")
            expect(result).to_contain_text("takeout.zip: Google Keep, 8 notes in Takeout/Keep: 8 items imported",
                                           timeout=120_000)  # three rounds, each after the 10 s the answer asks
            expect(result).to_contain_text("to let the pipeline catch up")
            assert errors == []
            browser.close()
    finally:
        stop.set()
        taker.join(10)
        rt.close()


LONG_NOTES = 800
PACE_S = 0.2  # each filing of 50 items waits this long: about 250 items a second however fast the machine is
STANDING = re.compile(r"\d+ of 800 items · [\d.]+ items/s · \d+ (s|min \d+ s|h \d+ min) left")


def test_a_long_import_on_the_page_says_how_long_and_goes_on_across_a_restart(
        dsn: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The page shows how many items are in of how many, the items per second and the time left while the
    server files them; the serving process stops in the middle (its open requests cut, as a restart of `up`
    does) and starts again on the same address: the page says so, waits, goes on from the last item the server
    said was in, and the report adds up to the export with no source twice."""
    tmp = tmp_path_factory.mktemp("web-long")
    settings = Settings(data_dir=tmp / "data", postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                        auth="off", default_user="longer", topic_prefix="longer.", max_pending_jobs=0)
    rt = build_runtime(settings, vectors=False, models=False)
    rt.metadata.users.ensure_user("longer")
    takeout = tmp / "takeout.zip"
    folder = gen.write_many_keep_notes(tmp / "keep", LONG_NOTES)
    with zipfile.ZipFile(takeout, "w") as z:
        for f in folder.rglob("*"):
            z.write(f, f.relative_to(folder.parent).as_posix())
    port = free_port()

    class Paced(CaptureSubmitter):
        """Files as the real one does, at a pace a slow disk would set: the import is still going in when the
        server stops, and again after it is back, on a machine of any speed (filed at once, 800 notes go in
        within a second, before a second progress line)."""

        def submit_many(self, user: str, items: Any) -> Any:
            threading.Event().wait(PACE_S)
            return super().submit_many(user, items)

    async def paced(request: Request) -> CaptureSubmitter:
        return Paced(request_runtime(request), relay_of(request))

    def serving() -> Any:  # the serving process: a stop cancels what is still open after 0.2 s
        app = create_app(rt, gateway=True, query=False)
        app.dependency_overrides[get_submitter] = paced
        return serve_in_thread(app, access_log=False, port=port, graceful_s=0.2)

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            with serving() as (url, _port):
                page.goto(url + "/")
                expect(page.locator("body")).to_have_attribute("data-ready", "true")
                import_from_page(page, takeout)
                row = page.locator("#uploads li")
                # How far, how fast, how long; then the server stops.
                expect(row).to_contain_text(STANDING, timeout=120_000)
                said = row.inner_text()
            # Stopped in the middle: the page was told some of the items, not all.
            done = int(said.split(": ", 1)[1].split(" of ", 1)[0])
            assert 0 < done < LONG_NOTES, said
            expect(row).to_contain_text("secondbrain restarted; going on from item", timeout=30_000)
            with serving():
                expect(row).to_contain_text(STANDING, timeout=60_000)  # going on: how far, how fast, how long
                result = page.locator("#import-result")
                expect(result).to_contain_text(f"takeout.zip: Google Keep, {LONG_NOTES} notes in Takeout/Keep: ",
                                               timeout=180_000)
                expect(result).to_contain_text("The connection dropped 1 time (secondbrain restarted)")
                report = result.inner_text()
                uris = [s["source_uri"] for offset in range(0, LONG_NOTES + 500, 500)
                        for s in httpx.get(url + "/v1/sources", params={"limit": 500, "offset": offset},
                                           timeout=30).json()["sources"]]
            browser.close()
        assert errors == []
        found = re.search(r": (\d+) items? imported(?:, (\d+) already imported before)?", report)
        assert found, report
        imported, before = (int(g or "0") for g in found.groups())
        # Every item once: filed by this import, or found in already (it went in after the last line the page
        # heard, before the stop), and nothing left out or skipped.
        assert imported + before == LONG_NOTES and imported >= done, report
        assert "skipped" not in report and "duplicate" not in report, report
        assert len(uris) == len(set(uris)) == LONG_NOTES
    finally:
        rt.close()
