"""Saving from the browser against a real ``secondbrain up``: the extension as ``make extension`` packages it
(the zip, unpacked) loaded into headless Chromium, and the bookmarklet from the settings page.

A small site on loopback has a wiki page that shows its text only to a signed-in browser (the server's
fetcher gets the sign-in page) and writes it with a script, and an article that anyone may fetch.  The
extension opens its options on install, with its icon; there the person gives the server's address and
presses Sign in: secondbrain's page opens in a tab, signed out at first (the person signs in there), then
asks to connect the extension and makes it a capture key (which reads nothing back), handed to the extension
without being shown or pasted.  Then the page, a selection and a link are saved through the functions its
toolbar button and right-click menu call (native menus cannot be clicked headless); its requests come from
its chrome-extension:// origin, with the key in a header.  Each is found by search with the page's address
kept.  Once its key is revoked, a save says the capture key was refused and to sign in again.  The
bookmarklet is taken from the settings page and run on the wiki page: its window saves nothing until Save is
pressed, then the quote and the page are searchable too.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Worker, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.harness import REPO, LoopbackSite, QuietHandler, Service, running_up, wait_jobs

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"

# Written into the wiki page by its script, for a signed-in reader only.
WIKI_TEXT = "The pottery kiln in the east shed is fired every second Sunday by Marisol Okonkwo."
QUOTE = "Glaze buckets must be stirred for three minutes before dipping the bisqueware."
BOOKMARKLET_QUOTE = "Cones nine and ten are kept in the blue tin above the wedging table."
ARTICLE_TEXT = "The lighthouse keeper logged seventeen herring boats returning before the squall."

WIKI = f"""<!doctype html><html><head><meta charset="utf-8"><title>Studio wiki: kiln</title></head>
<body><h1>Kiln schedule</h1><div id="app">Loading…</div>
<p id="glaze">{QUOTE}</p><p id="cones">{BOOKMARKLET_QUOTE}</p>
<script src="/app.js"></script></body></html>"""
WIKI_SCRIPT = f"document.getElementById('app').textContent = {WIKI_TEXT!r};"
SIGN_IN_PAGE = """<!doctype html><html><head><title>Sign in</title></head><body><h1>Sign in</h1>
<form><input name="user"><input name="password" type="password"></form></body></html>"""
ARTICLE = f"""<!doctype html><html><head><meta charset="utf-8"><title>Harbour log</title></head>
<body><article><h1>Harbour log</h1><p>{ARTICLE_TEXT}</p><p>The wind turned north at dusk and the
harbour master closed the outer gate.</p></article></body></html>"""


class Wiki(LoopbackSite):
    """The site: ``/wiki/kiln`` needs the ``wiki`` cookie (otherwise it is a sign-in page), ``/article``
    does not."""

    def __init__(self) -> None:
        pages = {"/app.js": ("text/javascript", WIKI_SCRIPT), "/article": ("text/html", ARTICLE),
                 "/robots.txt": ("text/plain", "User-agent: *\nAllow: /\n")}

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path == "/wiki/kiln":
                    signed_in = "wiki=signed-in" in (self.headers.get("Cookie") or "")
                    ctype, body = "text/html", WIKI if signed_in else SIGN_IN_PAGE
                else:
                    ctype, body = pages.get(self.path, ("text/plain", "not found"))
                self.reply(200 if self.path in pages or self.path == "/wiki/kiln" else 404, f"{ctype}; charset=utf-8",
                           body.encode())

        super().__init__(Handler)


@dataclass
class Browser:
    """Chromium with the extension loaded, and the extension's service worker."""

    context: BrowserContext
    worker: Worker

    @property
    def extension_id(self) -> str:
        return self.worker.url.split("/")[2]

    def call(self, script: str, *args: Any) -> Any:
        """Run ``script`` (an async function's body, arguments in ``args``) in the extension's worker."""
        return self.worker.evaluate(f"async (args) => {{ {script} }}", list(args))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    # The article is on loopback, which the fetcher only reaches when told to.
    with running_up(tmp_path_factory, "sb-browser-", {"SB_FETCH_ALLOW_PRIVATE": "true"}) as svc:
        yield svc


@pytest.fixture(scope="module")
def wiki() -> Iterator[Wiki]:
    site = Wiki()
    yield site
    site.close()


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension as `make extension` packages it, unpacked (what Load unpacked, or a store, takes)."""
    made = subprocess.run(["make", "-s", "extension"], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)
    assert made.returncode == 0, made.stderr
    zipped = REPO / made.stdout.strip().splitlines()[-1]
    assert zipped.name.startswith("secondbrain-extension-") and zipped.suffix == ".zip"
    out = tmp_path_factory.mktemp("extension")
    with zipfile.ZipFile(zipped) as zf:
        assert "manifest.json" in zf.namelist() and "README.md" not in zf.namelist()
        zf.extractall(out)
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, wiki: Wiki, packaged: Path) -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        # Extensions need a persistent profile; Playwright's headless Chromium (the new headless) loads them.
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", f"--disable-extensions-except={packaged}",
                  f"--load-extension={packaged}"])
        context.set_default_timeout(30_000)
        worker = context.service_workers[0] if context.service_workers else context.wait_for_event("serviceworker")
        # The wiki's own sign-in, as the person would have it in their browser.
        context.add_cookies([{"name": "wiki", "value": "signed-in", "url": wiki.base}])
        try:
            yield Browser(context, worker)
        finally:
            context.close()


def api(server: Service) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.key}"}, timeout=60)


def hits_for(server: Service, query: str) -> list[dict[str, Any]]:
    with api(server) as client:
        r = client.get("/v1/search", params={"q": query, "k": 5})
        assert r.status_code == 200, r.text
        hits: list[dict[str, Any]] = r.json()["hits"]
        return hits


def open_tab(browser: Browser, url: str) -> Page:
    page = browser.context.new_page()
    page.goto(url)
    return page


def select(page: Page, element_id: str) -> None:
    """Select an element's text, as a person dragging over it does."""
    page.evaluate("""(id) => { const range = document.createRange();
        range.selectNodeContents(document.getElementById(id));
        getSelection().removeAllRanges(); getSelection().addRange(range); }""", element_id)


def options_opened_on_install(browser: Browser) -> Page:
    """The options tab the extension opened itself when it was installed."""
    url = f"chrome-extension://{browser.extension_id}/options.html"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [p for p in browser.context.pages if p.url == url]
        if found:
            return found[0]
        with contextlib.suppress(PlaywrightTimeout):  # lets Playwright take in the browser's events meanwhile
            browser.context.wait_for_event("page", timeout=500)
    raise AssertionError(f"the options did not open on install: {[p.url for p in browser.context.pages]}")


def sign_in_through_the_page(browser: Browser, server: Service) -> str:
    """The extension's options, opened on install, signed in through secondbrain's page (the options tab
    stays open); the capture key the extension stored."""
    options = options_opened_on_install(browser)
    expect(options.locator("body")).to_have_attribute("data-ready", "true")
    # Its icon is there, at the sizes the manifest names.
    icon = options.locator("h1 img")
    expect(icon).to_have_attribute("src", "icons/icon-48.png")
    assert options.evaluate("async () => { const i = new Image(); i.src = 'icons/icon-128.png'; await i.decode(); "
                            "return [i.naturalWidth, i.naturalHeight]; }") == [128, 128]
    # Signing in: secondbrain's page opens in a tab; this browser is not signed in there yet.
    options.get_by_label("Address of your secondbrain").fill(server.url + "/#settings")
    with browser.context.expect_page() as opened:
        options.get_by_role("button", name="Sign in").click()
    signin_tab = opened.value
    expect(options.locator("#status")).to_contain_text(f"Opened {server.url} in a new tab")
    expect(signin_tab.locator("#signin")).to_be_visible()
    # The person signs in there (a link from `secondbrain open`, opened in that tab): the page then asks to
    # connect the extension, which has said hello to it.
    with api(server) as client:
        signin_tab.goto(server.url + client.post("/v1/login-links").json()["path"])
    card = signin_tab.locator("#connect-extension")
    expect(card).to_be_visible()
    button = signin_tab.get_by_role("button", name="Connect the extension")
    expect(button).to_be_enabled()
    signin_tab.screenshot(path=str(SHOTS / "extension-connect.png"))
    button.click()
    expect(signin_tab.locator("#connect-extension-status")).to_have_text(
        "Connected: the extension saves to your memory now. You can close this tab.")
    expect(options.locator("#status")).to_have_text(
        f"Connected to {server.url} as local. This extension's key can only add to your memory.")
    options.screenshot(path=str(SHOTS / "extension-options.png"))
    stored = browser.call("return await chrome.storage.local.get(['server', 'key']);")
    assert stored["server"] == server.url and stored["key"].startswith("sb_")
    key = stored["key"]
    assert key not in signin_tab.content() and key not in options.content()  # never shown
    expect(signin_tab.locator("#key-list")).to_contain_text("browser extension")
    signin_tab.close()
    return key


def test_the_extension_saves_the_page_a_selection_and_a_link(server: Service, wiki: Wiki,
                                                              browser: Browser) -> None:
    key = sign_in_through_the_page(browser, server)

    page = open_tab(browser, f"{wiki.base}/wiki/kiln")
    expect(page.locator("#app")).to_have_text(WIKI_TEXT)
    tab = browser.call("const [url] = args; return (await chrome.tabs.query({})).find((t) => t.url === url);",
                       f"{wiki.base}/wiki/kiln")
    assert tab, "the wiki's tab is not known to the extension"
    menu = ("const [info, tab] = args; return await handleMenu(info, tab);")
    # The toolbar button and the menu's "Save this page" both end in savePage.
    saved_page = browser.call("const [tab] = args; return await savePage(tab);", tab)
    select(page, "glaze")
    saved_quote = browser.call(menu, {"menuItemId": "sb-save-selection", "selectionText": QUOTE}, tab)
    saved_link = browser.call(menu, {"menuItemId": "sb-save-link", "linkUrl": f"{wiki.base}/article"}, tab)
    # The same page with the same text again: nothing new.
    again = browser.call("const [tab] = args; return await savePage(tab);", tab)
    with api(server) as client:
        done = wait_jobs(client, [saved_page["job_id"], saved_quote["job_id"], saved_link["job_id"],
                                  again["job_id"]], timeout=180)
        assert [done[j["job_id"]]["status"] for j in (saved_page, saved_quote, saved_link)] == ["succeeded"] * 3, done
        assert done[again["job_id"]]["status"] == "duplicate"

    # The extension's key reads nothing back.
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as extension:
        assert extension.get("/v1/search", params={"q": "kiln"}).status_code == 403

    # The page as the signed-in browser showed it (the fetcher would have had the sign-in page), under its URL.
    hit = hits_for(server, "who fires the pottery kiln in the east shed")[0]
    assert WIKI_TEXT in hit["text"] and hit["source_uri"] == f"{wiki.base}/wiki/kiln"
    assert hit["modality"] == "web" and hit["title"] == "Studio wiki: kiln"
    # The selection, quoted, with the page's title and address.
    hit = hits_for(server, "how long to stir glaze buckets before dipping")[0]
    assert QUOTE in hit["text"] and f"[Studio wiki: kiln]({wiki.base}/wiki/kiln)" in hit["text"]
    assert hit["title"] == "Quote from Studio wiki: kiln"
    # The link, fetched by the server.
    hit = hits_for(server, "herring boats returning before the squall")[0]
    assert ARTICLE_TEXT in hit["text"] and hit["source_uri"] == f"{wiki.base}/article"

    # A save the server refuses shows its sentence on the toolbar button.
    browser.call("const [tab] = args; await report(tab, saveLink('ftp://example.org/x', ''));", tab)
    title = browser.call("const [tab] = args; return await chrome.action.getTitle({tabId: tab.id});", tab)
    assert title == "Not saved: Only http and https addresses can be saved."
    # Its key revoked: the button says the capture key was refused and to sign in again (not the CLI's key).
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as extension:
        key_id = extension.get("/v1/me").json()["key_id"]
    with api(server) as client:
        assert client.delete(f"/v1/keys/{key_id}").status_code == 204
    browser.call("const [tab] = args; await report(tab, savePage(tab));", tab)
    title = browser.call("const [tab] = args; return await chrome.action.getTitle({tabId: tab.id});", tab)
    assert title == ("Not saved: secondbrain did not accept this extension's capture key (it was revoked, or it "
                     "belongs to another secondbrain): open the extension's options and sign in again.")
    # Another site that opens the page to connect "the extension" gets nothing: its hello comes from its own
    # window, not from a script of the extension in the page's, so Connect stays off.
    with browser.context.expect_page() as opened:
        page.evaluate("""(u) => { const w = window.open(u);
            setInterval(() => w.postMessage({type: 'secondbrain:extension-hello', nonce: 'forged'}, '*'), 300); }""",
                      f"{server.url}/#connect-extension")
    forged = opened.value
    expect(forged.locator("#connect-extension")).to_be_visible()
    forged.wait_for_timeout(2000)
    expect(forged.get_by_role("button", name="Connect the extension")).to_be_disabled()
    expect(forged.locator("#connect-extension-status")).to_contain_text("Waiting for the extension")
    forged.close()
    page.close()  # the options tab stays: closing the last tab would end the browser's session (its cookies)


def test_the_bookmarklet_saves_after_the_person_presses_save(server: Service, wiki: Wiki,
                                                             browser: Browser) -> None:
    page = browser.context.new_page()
    with api(server) as client:
        link = client.post("/v1/login-links").json()["path"]
    page.goto(server.url + link)
    page.get_by_role("link", name="Settings").click()
    bookmarklet = page.get_by_role("link", name="Save to secondbrain")
    expect(bookmarklet).to_have_attribute("href", re.compile("^javascript:"))
    href = bookmarklet.get_attribute("href") or ""
    assert server.key not in href  # it carries no key: the window it opens uses the session
    code = unquote(href.removeprefix("javascript:"))
    assert f"{server.url}/save#" in code and "noopener" in code
    expect(page.locator("#server-address")).to_have_text(server.url)
    bookmarklet.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "settings-browser.png"))

    def sources() -> int:
        with api(server) as client:
            return len(client.get("/v1/sources", params={"limit": 500}).json()["sources"])

    wiki_page = browser.context.new_page()
    wiki_page.goto(f"{wiki.base}/wiki/kiln")
    expect(wiki_page.locator("#app")).to_have_text(WIKI_TEXT)
    select(wiki_page, "cones")
    before = sources()
    with browser.context.expect_page() as opened:
        wiki_page.evaluate(code)  # what pressing the bookmark does on this page
    window = opened.value
    expect(window.locator("body")).to_have_attribute("data-ready", "true")
    assert window.url.startswith(f"{server.url}/save#")
    expect(window.get_by_label("Title")).to_have_value("Studio wiki: kiln")
    expect(window.locator("#save-url")).to_have_text(f"{wiki.base}/wiki/kiln")
    expect(window.locator("#save-quote")).to_have_text(BOOKMARKLET_QUOTE)
    expect(window.get_by_label("The selected text, as a quote with this page's address")).to_be_checked()
    expect(window.locator("#save-signin")).to_be_hidden()  # the session cookie reached /v1/me
    window.screenshot(path=str(SHOTS / "bookmarklet-window.png"))
    time.sleep(1)
    assert sources() == before  # opening the window saved nothing
    window.get_by_role("button", name="Save").click()
    expect(window.locator("#save-status")).to_have_text("Saved. It will be searchable in a moment.")
    quote_job = window.locator("#save-status").get_attribute("data-job")

    # Without a selection, the whole page as shown.
    wiki_page.evaluate("getSelection().removeAllRanges()")
    with browser.context.expect_page() as opened:
        wiki_page.evaluate(code)
    window2 = opened.value
    expect(window2.locator("body")).to_have_attribute("data-ready", "true")
    expect(window2.locator("#save-quote-choice")).to_be_hidden()
    expect(window2.get_by_label("The whole page")).to_be_checked()
    window2.get_by_role("button", name="Save").click()
    expect(window2.locator("#save-status")).to_have_text("Saved. It will be searchable in a moment.")
    page_job = window2.locator("#save-status").get_attribute("data-job")
    assert quote_job and page_job
    with api(server) as client:
        done = wait_jobs(client, [quote_job, page_job], timeout=180)
    assert done[quote_job]["status"] == "succeeded"
    # The extension's test may have saved this page's text already: then it is the same source.
    assert done[page_job]["status"] in ("succeeded", "duplicate")
    assert done[page_job]["source_uri"] == f"{wiki.base}/wiki/kiln"
    hit = hits_for(server, "where are cones nine and ten kept")[0]
    assert BOOKMARKLET_QUOTE in hit["text"] and f"[Studio wiki: kiln]({wiki.base}/wiki/kiln)" in hit["text"]

    # A page that tampers with the bookmarklet to claim another site's address is pointed out.
    with browser.context.expect_page() as opened:
        wiki_page.evaluate("(u) => window.open(u, '_blank', 'popup,noopener')",
                           f"{server.url}/save#url=https%3A%2F%2Fbank.example%2Fstatement&title=Bank&text=Paid")
    forged = opened.value
    expect(forged.locator("#save-elsewhere")).to_have_text(
        f"This window was opened from {wiki.base}, not from the address above. Save only if you trust that page.")
    expect(forged.locator("#save-url")).to_have_text("https://bank.example/statement")
    forged.close()
    expect(window2.locator("#save-elsewhere")).to_be_hidden()  # the real bookmarklet: same site

    # The window cannot be framed by the site, and a GET of it saves nothing by itself.
    r = httpx.get(f"{server.url}/save")
    assert r.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    # Signed out, the window says so and saves nothing.
    browser.context.clear_cookies()
    wiki_page.evaluate("getSelection().removeAllRanges()")
    with browser.context.expect_page() as opened:
        wiki_page.evaluate(code)
    window3 = opened.value
    expect(window3.locator("#save-signin")).to_be_visible()
    window3.get_by_role("button", name="Save").click()
    expect(window3.locator("#save-status")).to_contain_text("Not saved.")
