"""Written answers in one click, in the system Chromium against the real local OpenAI-compatible server
(llama-cpp-python with the SmolLM2 GGUF): with no model connected, the empty Ask page and Settings show
"Answers quote your notes. For written answers, connect a local model"; the card finds no server, then,
once one runs on a usual address (SB_LLM_DISCOVER), finds it, connects it with one press and shows its
reply to a test question; Settings then shows the answer model working.  A user who is not an administrator
is told to ask one.  The routes behind it (found servers, the test question) are admin-only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.infra.ports import free_port
from secondbrain.llm_discovery import server_name
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from tests.serving import serve_in_thread

CHROMIUM = Path("/usr/bin/chromium")
LEAD = "Answers quote your notes. For written answers, connect a local model."


@pytest.fixture(scope="module")
def model_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def site(dsn: str, tmp_path_factory: pytest.TempPathFactory, model_port: int) -> Iterator[tuple[str, Runtime]]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("written"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", llm_discover=f"http://127.0.0.1:{model_port}/v1")
    rt = build_runtime(settings, vectors=True, models=True)
    rt.metadata.users.ensure_user("local")
    with serve_in_thread(create_app(rt, gateway=True, query=True), access_log=False) as (url, _port):
        yield url, rt
    rt.close()


def signed_in(page: Page, url: str, rt: Runtime, scope: str = "admin") -> str:
    _info, key = rt.metadata.api_keys.create_api_key("local", f"test {scope}", scope)
    token = rt.metadata.sessions.create_login_link(_info.key_id, 600)
    page.goto(f"{url}/?token={token}")
    expect(page.locator("#who")).to_contain_text("Signed in as local")
    return key


def test_the_card_finds_a_local_model_and_connects_it_with_a_test_question(site: tuple[str, Runtime],
                                                                           model_port: int) -> None:
    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    url, rt = site
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        key = signed_in(page, url, rt)
        card = page.locator("#written-ask")
        expect(card).to_contain_text(LEAD)
        expect(card).to_contain_text("None is running on this computer now.")
        page.screenshot(path=str(shots() / "written-none.png"))
        with LocalLlamaServer(n_ctx=1024, port=model_port) as llama:
            card.get_by_role("button", name="Look again").click()
            name = server_name(llama.base_url)  # by its port: llama.cpp on 8080, here any free port
            expect(card).to_contain_text(f"Found {name} running at {llama.base_url}.")
            expect(card.get_by_label("Model")).to_have_value(llama.model_id)
            # Settings shows the same card.
            page.get_by_role("link", name="Settings").click()
            expect(page.locator("#written-settings")).to_contain_text(LEAD)
            page.get_by_role("link", name="Ask").click()
            card.get_by_role("button", name="Use it for written answers").click()
            expect(card).to_contain_text(f"Written answers are on: {llama.model_id} at {llama.base_url}.",
                                         timeout=120_000)
            expect(card.locator(".written-reply")).not_to_be_empty()
            page.screenshot(path=str(shots() / "written-connected.png"))
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as api:
                answers = api.get("/v1/settings/answers").json()
                assert (answers["source"], answers["base_url"], answers["state"]) == (
                    "set here", llama.base_url, "working")
            page.get_by_role("link", name="Settings").click()
            expect(page.locator('#status-list li[data-component="answers"]')).to_contain_text("Working")
        assert errors == []
        browser.close()


def test_someone_who_is_not_an_administrator_is_told_to_ask_one(site: tuple[str, Runtime]) -> None:
    url, rt = site
    with httpx.Client(base_url=url, timeout=30) as api:
        admin_key = rt.metadata.api_keys.create_api_key("local", "reset", "admin")[1]
        api.delete("/v1/settings/answers", headers={"Authorization": f"Bearer {admin_key}"})
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        key = signed_in(page, url, rt, scope="user")
        expect(page.locator("#written-ask")).to_contain_text("Ask whoever runs this secondbrain to connect one.")
        expect(page.locator("#written-ask button")).to_have_count(0)
        browser.close()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as user:
        assert user.get("/v1/settings/answers/found").status_code == 403
        assert user.post("/v1/settings/answers/test", json={}).status_code == 403
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30) as admin:
        none = admin.post("/v1/settings/answers/test", json={})
        assert none.status_code == 409 and "no model is connected" in none.json()["detail"]


def shots() -> Path:
    from tests.paths import REPO

    out = REPO / "test-artifacts" / "web"
    out.mkdir(parents=True, exist_ok=True)
    return out
