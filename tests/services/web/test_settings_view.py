"""The page's settings view, in the system Chromium: each model part with its state, and the answer
model an admin connects from the page (the real llama.cpp server, on a port the test picks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.settings import Settings
from tests.serving import serve_in_thread

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def llama() -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    with LocalLlamaServer(n_ctx=512) as server:
        yield server


@pytest.fixture(scope="module")
def site(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("web"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off")  # keys: tests/app/test_auth.py
    rt = build_runtime(settings, vectors=False, models=False)
    rt.metadata.users.ensure_user("local")
    with serve_in_thread(create_app(rt, gateway=True, query=False), access_log=False) as (url, _port):
        yield url
    rt.close()


def test_the_settings_view_shows_each_part_and_connects_a_model(site: str, llama: LocalLlamaServer) -> None:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_default_timeout(20_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(site + "/")
        page.get_by_role("link", name="Settings").click()
        items = page.locator("#status-list li")
        expect(items).to_have_count(4)
        answers = page.locator('#status-list li[data-component="answers"]')
        expect(answers).to_contain_text("Answer model")
        expect(answers).to_contain_text("Not configured")
        expect(answers).to_contain_text("answers quote your sources")
        expect(page.locator('#status-list li[data-component="embeddings"]')).to_contain_text("Working")
        for part in ("transcriber", "ocr"):
            text = page.locator(f'#status-list li[data-component="{part}"] .state').inner_text()
            assert text in ("Working", "Not configured", "Error")

        # An admin connects the model: a wrong address first, then the real one.
        expect(page.locator("#answers-source")).to_have_text("Answer endpoint: none.")
        page.get_by_label("Address of an OpenAI-compatible server").fill("http://127.0.0.1:9/v1")
        page.get_by_role("button", name="Use this model").click()
        expect(page.locator("#answers-error")).to_contain_text("Nothing answers at")
        page.get_by_label("Address of an OpenAI-compatible server").fill(llama.base_url)
        page.get_by_label("API key of the model server").fill("sk-from-the-page")
        page.get_by_role("button", name="Use this model").click()
        expect(answers).to_contain_text("Working")
        expect(answers).to_contain_text(llama.model_id)
        expect(page.locator("#answers-source")).to_have_text("Answer endpoint: set here.")
        key_field = page.get_by_label("API key of the model server")
        expect(key_field).to_have_attribute("placeholder", "a key is set (leave empty to keep it)")
        assert "sk-from-the-page" not in page.content()
        page.get_by_role("button", name="Back to the start-up setting").click()
        expect(answers).to_contain_text("Not configured")
        assert errors == []
        browser.close()
