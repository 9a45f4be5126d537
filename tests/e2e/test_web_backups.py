"""The web page's Settings show the last backup and its size, warn when it is overdue (older than twice the
interval), and back up now, in headless Chromium against ``secondbrain up``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from secondbrain.backup import folder as backup_folder
from secondbrain.backup.restore import check_only
from tests.e2e.harness import REPO, Service, readable_tmp

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"
OLD = "secondbrain-20200101T020000Z.sbk"  # fixed date: a backup from long ago, so the last one is overdue


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Path]]:
    with readable_tmp("sb-web-backups-") as root:
        kept = root / "backups"
        kept.mkdir()
        (kept / OLD).write_bytes(b"\0" * 2_000_000)
        svc = Service("up", ["up", "--data-dir", str(root / "data")],
                      {"SB_BACKUP_DIR": str(kept), "SB_BACKUP_INTERVAL": "1h"}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            yield svc, kept
        finally:
            svc.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def test_settings_show_the_last_backup_warn_when_overdue_and_back_up_now(browser: Browser,
                                                                         server: tuple[Service, Path]) -> None:
    svc, kept = server
    with svc.client() as api:
        svc_link = api.post("/v1/login-links").json()["path"]
        api.post("/v1/notes", json={"text": "The spare key hangs behind the kitchen door.", "title": "Key"})
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(svc.url + svc_link)
    page.get_by_role("link", name="Settings").first.click()
    section = page.locator("#backups")
    expect(section).to_be_visible()
    expect(page.locator("#backup-last")).to_contain_text("2.0 MB")
    expect(page.locator("#backup-last")).to_contain_text("2020")
    warning = page.locator("#backup-warning")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("older than twice the interval (every hour)")
    expect(page.locator("#backup-schedule")).to_contain_text("every hour")
    SHOTS.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(SHOTS / "backups-overdue.png"))

    page.get_by_role("button", name="Back up now").click()
    expect(page.locator("#backup-status")).to_contain_text("Backed up:", timeout=180_000)
    expect(warning).to_be_hidden()
    expect(page.locator("#backup-last")).not_to_contain_text("2020")
    expect(page.locator("#backup-last")).to_contain_text(re.compile(r"\d+\.\d MB"))
    section.screenshot(path=str(SHOTS / "backups-done.png"))
    assert errors == []

    newest = backup_folder.latest(kept)
    assert newest is not None and newest.name != OLD
    manifest = check_only(newest.path, None)
    assert "local" in manifest.fields["users"]
