"""The page as an app on a phone, in headless Chromium against a running ``secondbrain up``: the manifest is
served and valid (its icons load), the service worker takes over the page and keeps only the page's own files,
a share (multipart, with the session cookie, as the share sheet posts it) is captured, shown on the page and
becomes searchable, and the same share posted from another site, or without a session, is refused.
Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect, sync_playwright

from devtools import gen_office, gen_pdf_image
from tests.e2e.harness import Service, Site, readable_tmp, wait_jobs
from tests.paths import REPO

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"
NOTE = "The plumber Dmitri quoted 340 euros to replace the boiler's pressure valve"
ATTACKER = "http://attacker.example"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with readable_tmp("sb-share-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data")], {"SB_FETCH_ALLOW_PRIVATE": "true"},
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        yield svc
        svc.stop()


@pytest.fixture(scope="module")
def api(server: Service) -> Iterator[httpx.Client]:
    with server.client(timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def phone(browser: Browser) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors


def sign_in(page: Page, server: Service, api: httpx.Client) -> None:
    link = api.post("/v1/login-links")
    assert link.status_code == 201, link.text
    page.goto(server.url + link.json()["path"])
    expect(page.locator("#who")).to_contain_text("Signed in as local")


SHARE_FORM = """(share) => {
    // What the share sheet posts to the manifest's share_target: a multipart form, navigated to.
    const form = document.createElement("form");
    form.method = "POST";
    form.action = share.action;
    form.enctype = "multipart/form-data";
    for (const [name, value] of Object.entries(share.fields)) {
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = name;
        input.value = value;
        form.append(input);
    }
    const files = document.createElement("input");
    files.type = "file";
    files.name = "files";
    files.multiple = true;
    const dt = new DataTransfer();
    for (const f of share.files) {
        const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, {type: f.type}));
    }
    files.files = dt.files;
    form.append(files);
    document.body.append(form);
    form.submit();
}"""


def shared(action: str, fields: dict[str, str], files: list[tuple[str, bytes, str]]) -> dict[str, Any]:
    return {"action": action, "fields": fields,
            "files": [{"name": n, "type": t, "b64": base64.b64encode(b).decode()} for n, b, t in files]}


def test_the_app_installs_from_its_manifest_and_its_worker_keeps_only_the_page(
        server: Service, api: httpx.Client, browser: Browser) -> None:
    page, errors = phone(browser)
    sign_in(page, server, api)
    href = page.locator('link[rel="manifest"]').get_attribute("href")
    assert href
    manifest = page.request.get(server.url + href)
    assert manifest.ok and manifest.headers["content-type"].startswith("application/manifest+json")
    m = manifest.json()
    assert (m["name"], m["start_url"], m["display"], m["share_target"]["action"]) == (
        "secondbrain", "/", "standalone", "/share")  # no SB_PUBLIC_URL here: the address it was opened at
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == m["theme_color"]
    for icon in m["icons"]:
        got = page.request.get(server.url + icon["src"])
        assert got.ok and got.headers["content-type"] == icon["type"], icon
        if icon["type"] == "image/png":
            with Image.open(io.BytesIO(got.body())) as im:
                assert f"{im.width}x{im.height}" == icon["sizes"]
    # The worker registers, and after a reload it serves the page.
    script = page.evaluate("navigator.serviceWorker.ready.then((r) => r.active.scriptURL)")
    assert script == server.url + "/sw.js"
    page.reload()
    expect(page.locator("#who")).to_contain_text("Signed in as local")
    assert page.evaluate("navigator.serviceWorker.controller !== null")
    # Using the page (its API calls, the source list) leaves nothing of the API in the worker's cache.
    page.wait_for_load_state("networkidle")
    kept = page.evaluate("""async () => {
        const out = [];
        for (const name of await caches.keys())
            for (const request of await (await caches.open(name)).keys()) out.push(new URL(request.url).pathname);
        return out;
    }""")
    assert "/" in kept and "/web/app.js" in kept and "/web/manifest.webmanifest" in kept
    assert all(p == "/" or p.startswith("/web/") for p in kept), kept
    # The security headers still hold on the page the worker serves.
    again = page.request.get(server.url + "/")
    assert "script-src 'self'" in again.headers["content-security-policy"] and "unsafe" not in \
        again.headers["content-security-policy"]
    assert errors == []


def test_a_share_is_captured_shown_and_searchable(server: Service, api: httpx.Client, browser: Browser,
                                                  site: Site) -> None:
    page, errors = phone(browser)
    sign_in(page, server, api)
    photo = gen_pdf_image.encode(gen_pdf_image.text_image(gen_pdf_image.PHOTO_LINES), "PNG")
    share = shared("/share", {"title": "Boiler", "text": NOTE, "url": site.base + "/article"},
                   [("IMG_20261126_0930.png", photo, "image/png")])
    with page.expect_response(lambda r: r.url.endswith("/share")) as posted:
        page.evaluate(SHARE_FORM, share)
    answer = posted.value
    assert answer.status == 303 and answer.headers["location"].startswith("/?shared=")
    jobs = answer.headers["location"].removeprefix("/?shared=").split(",")
    assert len(jobs) == 3  # the page, the words, the picture
    status = page.locator("#shared-status")
    expect(status).to_have_text("Kept 3 captures: each can be found once it shows Ready.")
    assert "shared=" not in page.url  # taken out of the address bar: a reload does not show it again
    expect(page.locator("#shared-list li")).to_have_count(3)
    # The confirmation opens at the top, on screen, where the phone shows the app (not below the Add card).
    assert page.evaluate("window.scrollY") == 0
    box = page.locator("#shared").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    expect(page.locator("#shared")).to_be_focused()
    expect(page.locator("#shared-list li").first).to_contain_text("Ready", timeout=180_000)
    page.screenshot(path=str(SHOTS / "share-390.png"))
    finished = wait_jobs(api, jobs, timeout=180)
    assert {j["status"] for j in finished.values()} == {"succeeded"}, finished
    hit = api.get("/v1/search", params={"q": "how much did the plumber quote for the boiler valve"}).json()["hits"][0]
    assert "Dmitri quoted 340 euros" in hit["text"]
    page_hit = api.get("/v1/search", params={"q": "keeper wound the clockwork of the lens"}).json()["hits"][0]
    assert page_hit["modality"] == "web"
    picture = api.get("/v1/search", params={"q": "invoice number 4471 Blue Heron Paper"}).json()["hits"][0]
    assert picture["modality"] == "image" and picture["title"] == "IMG_20261126_0930.png"
    assert errors == []


def test_text_markdown_and_office_files_can_be_shared(server: Service, api: httpx.Client, browser: Browser) -> None:
    page, errors = phone(browser)
    sign_in(page, server, api)
    manifest = page.request.get(server.url + "/web/manifest.webmanifest").json()
    accepted = set(manifest["share_target"]["params"]["files"][0]["accept"])
    files = [("allotment.md", b"# Allotment\n\nThe water butt by plot 14 leaks at the tap.\n", "text/markdown"),
             ("ferry.txt", b"The winter ferry to the island leaves at 07:40 from pier three.\n", "text/plain"),
             ("report.docx", gen_office.make_docx(),
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document")]
    assert {t for _n, _b, t in files} <= accepted
    with page.expect_response(lambda r: r.url.endswith("/share")) as posted:
        page.evaluate(SHARE_FORM, shared("/share", {}, files))
    jobs = posted.value.headers["location"].removeprefix("/?shared=").split(",")
    assert len(jobs) == 3
    expect(page.locator("#shared-list li")).to_have_count(3)
    finished = wait_jobs(api, jobs, timeout=180)
    assert [finished[j]["status"] for j in jobs] == ["succeeded"] * 3, finished
    for question, words in (("which plot has the leaking water butt", "plot 14 leaks"),
                            ("when does the winter ferry leave", "07:40 from pier three"),
                            ("what replaced the cracked hydrophone", gen_office.DOC_SECTION_1_TEXT[:40])):
        hits = api.get("/v1/search", params={"q": question}).json()["hits"]
        assert hits and words in hits[0]["text"], (question, hits[:1])
    page.locator("#shared-done").click()
    expect(page.locator("#shared")).to_be_hidden()
    assert errors == []


def test_a_share_from_another_site_or_without_a_session_is_refused(server: Service, api: httpx.Client,
                                                                   browser: Browser) -> None:
    page, _errors = phone(browser)
    sign_in(page, server, api)  # signed in here: another site's page still gets nothing in
    page.route(ATTACKER + "/**", lambda route: route.fulfill(
        status=200, content_type="text/html", body="<!doctype html><title>Win a prize</title><p>Loading"))
    page.goto(ATTACKER + "/prize")
    planted = "Planted by another site: transfer the savings"
    share = shared(server.url + "/share", {"text": planted}, [("x.pdf", gen_pdf_image.text_pdf(), "application/pdf")])
    with page.expect_response(lambda r: r.url.endswith("/share")) as posted:
        page.evaluate(SHARE_FORM, share)
    refused = posted.value
    assert refused.status == 403 and "cross-site request refused" in refused.text()
    # Signed out (a fresh phone): nothing is kept, and the app opens on the sign-in form saying so.
    stranger, errors = phone(browser)
    stranger.goto(server.url + "/")
    with stranger.expect_response(lambda r: r.url.endswith("/share")) as posted:
        stranger.evaluate(SHARE_FORM, shared("/share", {"text": planted}, []))
    assert posted.value.status == 303 and posted.value.headers["location"] == "/?share=signed-out"
    expect(stranger.locator("#signin-error")).to_have_text(
        "Sign in, then share again: what you shared was not kept, as this phone was not signed in.")
    assert stranger.url == server.url + "/" and errors == []
    # Outside a browser's navigation (a script), the same request is a plain 401.
    assert httpx.post(server.url + "/share", data={"text": planted}).status_code == 401
    sources = api.get("/v1/sources", params={"limit": 500}).json()["sources"]
    texts = [h["text"] for h in api.get("/v1/search", params={"q": planted}).json()["hits"]]
    assert not any("Planted by another site" in t for t in texts)
    assert not any(s["title"] == "x.pdf" for s in sources)
