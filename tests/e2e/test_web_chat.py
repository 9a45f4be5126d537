"""The chat basics people expect, tried in headless Chromium against a real ``secondbrain up`` (no
model connected: answers quote the sources), at 1366x850 and 390x844 in both colour schemes.

Markdown in answers, passages and previews shown (and nothing a source holds ever runs); copy on an
answer and on a citation; regenerate; edit and resend (both turns kept, marked); ``/`` and Ctrl+K to
the question box, Escape out of it; a picture, a file or a link pasted or dropped anywhere is added;
sources and conversations searched as you type; every control reached with Tab is in view (nothing
under the question box); the failed request that keeps its question and offers Retry; time lists that
say what they show; failed captures with the server's own reason, Retry only where it can help, and
Remove; and the small wording bugs, each.  axe-core finds nothing serious; screenshots of the new
controls go to ``test-artifacts/web/``.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from fpdf import FPDF
from playwright.sync_api import Browser, Page, expect, sync_playwright

from devtools import gen_audio, gen_pdf_image, gen_web
from tests.e2e.axe import axe_source, serious
from tests.e2e.harness import REPO, Service, Site, readable_tmp, run_cli, wait_jobs

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"
ZONE = "Europe/Berlin"
# Dates are counted from the day the suite runs, so that what the page shows does not depend on it: the train
# always leaves inside the Upcoming panel's 14 days (its line is on the page when axe looks), and the island
# trip is always in an earlier year and never on this day.
TODAY = datetime.now(ZoneInfo(ZONE)).date()
TRAIN_DAY = f"{(TODAY + timedelta(days=10)).day} {(TODAY + timedelta(days=10)):%B}"
ISLAND = datetime.combine(TODAY - timedelta(days=380), datetime.min.time()).replace(hour=9, tzinfo=ZoneInfo(ZONE))
SIZES = {"desktop": (1366, 850), "phone": (390, 844)}
LOOKS = [(size, scheme) for size in SIZES for scheme in ("light", "dark")]
TRIP = (f"# Trip\n\nThe night train to Lyon leaves on **{TRAIN_DAY}** at *7:40*; bring the `rail pass`.\n\n"
        "- pack the green umbrella\n- book the [station café](https://example.org/cafe)\n")
HOSTILE = ('The attic safe code is 4411. <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> '
           "[open me](javascript:window.pwned=3) <b onmouseover=\"window.pwned=4\">bold</b>")
TIMETABLE = "The evening ferry to Lindholm leaves at 18:45 from pier 3."
VOICE = (gen_audio.SCRIPT[0], gen_audio.SCRIPT[3])  # the lighthouse keeper, then the orchestra
# "Is the focused control in view" (WCAG 2.4.11, focus not obscured): part of it is on screen (a text box
# is scrolled to its caret, so its last lines may be below the fold), and what is drawn in the middle of that
# part is the control itself, not the question box or anything else on top of it.
IN_VIEW = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const r = el.getBoundingClientRect();
  const label = el.labels && el.labels.length ? el.labels[0].textContent : '';
  const name = (el.getAttribute('aria-label') || label || el.textContent || el.id || el.tagName).trim()
    .replace(/\\s+/g, ' ');
  const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
  const left = Math.max(r.left, 0), right = Math.min(r.right, innerWidth);
  const seen = r.width > 0 && r.height > 0 && bottom - top >= Math.min(r.height, 16)
    && right - left >= Math.min(r.width, 16);
  const x = (left + right) / 2, y = top + Math.min((bottom - top) / 2, 12);
  const hit = seen ? document.elementFromPoint(x, y) : null;
  const mine = !!hit && (hit === el || el.contains(hit) || hit.contains(el)
    || [...(el.labels || [])].some((l) => l.contains(hit)));
  return {key: el.tagName + ':' + (el.id || '') + ':' + name.slice(0, 80), name: name.slice(0, 60), ok: seen && mine,
          hit: hit ? `${hit.tagName}#${hit.id}.${hit.className}` : null, top: Math.round(r.top),
          bottom: Math.round(r.bottom)};
}"""


PAGES = {"/desktop-pasted": gen_web.page_meta_published, "/desktop-dropped": gen_web.page_jsonld_graph,
         "/phone-pasted": gen_web.page_time_itemprop, "/phone-dropped": gen_web.page_no_date}


class Pages:
    """Web pages on loopback for links to be pasted and dropped (each its own bytes, so none is a duplicate)."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                make = PAGES.get(self.path)
                body = make() if make else b""
                self.send_response(200 if make else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Server:
    svc: Service
    key: str
    site: Site
    ids: dict[str, str]
    pages: Pages

    @property
    def url(self) -> str:
        return self.svc.url

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=60)


def untitled_pdf() -> bytes:
    """A PDF without a title in its metadata (as most scans and exports are): a viewer names it by its file."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=13)
    for text in ("Ferry timetable, winter.", TIMETABLE):
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def png(lines: tuple[str, ...]) -> bytes:
    out = io.BytesIO()
    gen_pdf_image.text_image(lines).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    assert gen_audio.tools_available(), "espeak-ng and sox are required to synthesise the voice note"
    site = Site()
    pages = Pages()
    with readable_tmp("sb-chat-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {"SB_FETCH_ALLOW_PRIVATE": "true"},
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        speech = gen_audio.build_recording(root / "speech", VOICE, gap_s=1.5, name="voice")
        ids: dict[str, str] = {}
        try:
            with svc.client(timeout=60) as api:
                def note(key: str, title: str, text: str, **extra: Any) -> None:
                    ids[key] = api.post("/v1/notes", json={"title": title, "text": text, **extra}).json()["job_id"]

                note("trip", "Trip plan", TRIP)
                note("hostile", "Hostile note", HOSTILE)
                note("lock", "Bike lock", "The combination of the blue bike lock is 4-7-1-9.")
                note("island", "Island trip", "We walked round the island and ate saffron buns at the harbour.",
                     captured_at=ISLAND.isoformat())
                note("doomed", "Doomed note", "The spare key to the boathouse is under the blue flowerpot.")
                for key, name, data, mime in (
                        ("timetable", "ferry-timetable.pdf", untitled_pdf(), "application/pdf"),
                        ("broken", "broken.pdf", png(("NOT A PDF",)), "application/pdf"),
                        ("voice", "voice-memo.wav", speech.path.read_bytes(), "audio/wav")):
                    ids[key] = api.post("/v1/artifacts", files={"file": (name, data, mime)}).json()["job_id"]
                final = wait_jobs(api, list(ids.values()), timeout=300)
                assert final[ids["broken"]]["status"] == "failed"
                unfinished = {k: (j["status"], j["error"]) for k, j in final.items()
                              if k != ids["broken"] and j["status"] != "succeeded"}
                assert not unfinished, unfinished
            yield Server(svc, svc.key, site, ids, pages)
        finally:
            svc.stop()
            site.close()
            pages.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> str:
    return axe_source(tmp_path_factory.mktemp("axe"))


def open_page(browser: Browser, server: Server, size: str = "desktop", scheme: str = "light",
              *, bypass_csp: bool = False) -> tuple[Page, list[str]]:
    """A fresh profile signed in with a one-time link, at that size and colour scheme; its script errors."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                  timezone_id=ZONE, bypass_csp=bypass_csp)  # (axe-core is injected only then)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with server.api() as api:
        link = api.post("/v1/login-links").json()["path"]
    page.goto(server.url + link)
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    return page, errors


def ask(page: Page, question: str) -> Any:
    turns = page.locator("#thread .turn")
    before = turns.count()
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    expect(turns).to_have_count(before + 1)
    expect(turns.last).not_to_have_attribute("data-state", "streaming", timeout=60_000)
    return turns.last


def clipboard(page: Page) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def paste(page: Page, selector: str, *, files: list[tuple[str, str, bytes]] = (), text: str | None = None) -> None:  # type: ignore[assignment]
    """What the browser fires when the person pastes: a paste event whose clipboard holds these."""
    page.evaluate("""([selector, files, text]) => {
        const dt = new DataTransfer();
        for (const f of files) {
            const bytes = Uint8Array.from(atob(f[2]), (c) => c.charCodeAt(0));
            dt.items.add(new File([bytes], f[0], {type: f[1]}));
        }
        if (text !== null) dt.setData('text/plain', text);
        document.querySelector(selector).dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true,
                                                                                   cancelable: true}));
    }""", [selector, [[n, m, base64.b64encode(b).decode()] for n, m, b in files], text])


def open_conversations(page: Page) -> None:
    if page.locator("#conversations-box").get_attribute("open") is None:
        page.locator("#conversations-box summary").click()


# --------------------------------------------------------------------------- the chat basics


@pytest.mark.parametrize(("size", "scheme"), LOOKS, ids=[f"{s}-{c}" for s, c in LOOKS])
def test_the_chat_basics(browser: Browser, server: Server, axe: str, size: str, scheme: str) -> None:
    page, errors = open_page(browser, server, size, scheme, bypass_csp=True)
    name = f"{size}-{scheme}"
    box = page.get_by_label("Your question")
    page.get_by_role("button", name="New conversation").click()

    # "/" from anywhere outside a text box, and Ctrl+K from anywhere, reach the question box; Escape leaves.
    page.locator("#sources-title").click()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    expect(box).to_have_value("")  # the "/" was not typed into it
    page.keyboard.press("Escape")
    expect(box).not_to_be_focused()
    page.get_by_label("Search your sources").focus()
    page.keyboard.press("Control+k")
    expect(box).to_be_focused()
    page.get_by_label("Web page address").focus()
    page.keyboard.type("/")  # in a text box "/" is a character
    expect(page.get_by_label("Web page address")).to_have_value("/")
    page.get_by_label("Web page address").fill("")

    # Markdown in an answer and in its passages is shown, not its markers.
    turn = ask(page, "When does the night train to Lyon leave?")
    answer = turn.locator(".answer")
    expect(answer.locator("strong")).to_have_text(TRAIN_DAY)
    expect(answer.locator("em")).to_have_text("7:40")
    expect(answer.locator("code")).to_have_text("rail pass")
    expect(answer).not_to_contain_text("**")
    card = turn.locator(".turn-sources .source-card").first
    expect(card.locator(".src-snippet strong")).to_have_text(TRAIN_DAY)
    expect(card.locator(".src-snippet")).to_contain_text("book the station café")  # (no link inside a button)
    expect(card.locator(".src-snippet a")).to_have_count(0)
    expect(answer.locator("a")).to_have_count(0)

    # Copy: the answer as plain text, a citation with its source and where.
    turn.get_by_role("button", name="Copy the answer to “When does the night train to Lyon leave?”").click()
    expect(turn.get_by_role("button", name=re.compile("^Copied: Copy the answer"))).to_have_text("Copied")
    copied = clipboard(page)
    assert TRAIN_DAY in copied and "**" not in copied, copied
    card.get_by_role("button", name="Copy source 1: Trip plan").click()
    copied = clipboard(page)
    assert copied.startswith("[1] Trip plan (Note") and TRAIN_DAY in copied, copied

    # Nothing a source holds runs: its HTML is shown as text, its javascript: link is not a link.
    turn = ask(page, "What is the attic safe code?")
    expect(turn.locator(".answer")).to_contain_text("4411")
    expect(page.locator("#thread")).to_contain_text("<script>window.pwned=2</script>")
    assert page.evaluate("window.pwned") is None
    assert page.locator("#thread img, #thread script, #thread [onerror], #thread [onmouseover]").count() == 0
    assert page.locator("#thread a[href^='javascript' i]").count() == 0

    # Regenerate, and edit and resend: the conversation keeps both, each marked.
    first = page.locator("#thread .turn").first
    first.get_by_role("button", name="Regenerate the answer to “When does the night train to Lyon leave?”").click()
    turns = page.locator("#thread .turn")
    expect(turns).to_have_count(3)
    expect(turns.last).to_have_attribute("data-state", "done", timeout=60_000)
    expect(turns.last.locator(".revision-note")).to_contain_text("Regenerated")
    expect(first.locator(".revision-note")).to_have_text("Answered again below.")
    turns.nth(1).get_by_role("button", name="Edit question “What is the attic safe code?” and send it again"
                             ).click()
    edit = page.get_by_label("Edit your question")
    expect(edit).to_be_focused()
    expect(edit).to_have_value("What is the attic safe code?")
    page.screenshot(path=str(SHOTS / f"chat-edit-{name}.png"))
    # the train's line is in the Upcoming panel when axe looks (its name must be the words it shows)
    expect(page.locator("#agenda-soon .agenda-line").filter(has_text="night train to Lyon")).to_have_count(1)
    assert serious(page, axe) == []
    edit.fill("What is the combination of the bike lock?")
    edit.press("Enter")
    expect(turns).to_have_count(4)
    expect(turns.last).to_have_attribute("data-state", "done", timeout=60_000)
    expect(turns.last.locator(".answer")).to_contain_text("4-7-1-9")
    expect(turns.last.locator(".revision-note")).to_have_text("Edited from “What is the attic safe code?”")
    expect(turns.nth(1).locator(".revision-note")).to_have_text("Edited and sent again below.")
    with server.api() as api:
        conversation = api.get("/v1/conversations").json()["conversations"][0]
        kept = api.get(f"/v1/conversations/{conversation['conversation_id']}").json()["turns"]
    train = "When does the night train to Lyon leave?"
    assert [(t["question"], (t["meta"] or {}).get("revises")) for t in kept] == [
        (train, None), ("What is the attic safe code?", None), (train, {"question": train, "how": "regenerate"}),
        ("What is the combination of the bike lock?", {"question": "What is the attic safe code?", "how": "edit"})]
    turns.last.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"chat-answer-{name}.png"))
    # Opened again, the marks are still there.
    page.reload()
    expect(page.locator("#thread .turn")).to_have_count(4)
    expect(page.locator("#thread .turn").nth(3).locator(".revision-note")).to_contain_text("Edited from")
    expect(page.locator("#thread .turn").first.locator(".revision-note")).to_have_text("Answered again below.")

    # Search as you type: the sources by what they say, the conversations by title and question.
    searches: list[str] = []
    page.on("request", lambda r: searches.append(r.url) if "/v1/search?" in r.url else None)
    search = page.get_by_label("Search your sources")
    search.press_sequentially("lindholm ferry", delay=40)
    results = page.locator("#source-results")
    expect(results).to_be_visible()
    expect(results.locator(".source-result").first.locator(".title")).to_have_text("ferry-timetable.pdf")
    expect(page.locator("#sources-summary")).to_contain_text("“lindholm ferry”")
    expect(page.locator("#source-list")).to_be_hidden()
    assert len(searches) <= 2, searches  # debounced: not one search per key
    page.screenshot(path=str(SHOTS / f"search-sources-{name}.png"))
    # Words nothing is about: said, with the closest few below it, labelled as such.
    search.fill("quantum chromodynamics lecture")
    expect(page.locator("#sources-summary")).to_have_text(re.compile(
        r"^Nothing matches “quantum chromodynamics lecture”\. The closest sources? (are|is) below\.$"))
    expect(results).to_have_attribute("aria-label", "Closest sources (none matches)")
    expect(results.locator(".source-result").first).to_be_visible()
    search.press("Escape")
    expect(results).to_be_hidden()
    expect(page.locator("#source-list")).to_be_visible()
    open_conversations(page)
    find = page.get_by_label("Search conversations")
    find.press_sequentially("bike lock", delay=40)
    expect(page.locator("#conversations-summary")).to_contain_text("with “bike lock”")
    listed = page.locator("#conversation-list .conversation")
    # found by a question asked in it (its title is the first one)
    expect(listed.first.locator(".conversation-title")).to_have_text("When does the night train to Lyon leave?")
    find.fill("no such words anywhere")
    expect(page.locator("#conversations-summary")).to_have_text(
        "No conversation has “no such words anywhere” in its title or questions.")
    expect(listed).to_have_count(0)
    find.fill("")
    find.press("Escape")

    # A capture that failed: the server's reason as it wrote it, no Retry (it would fail again), Remove.
    failed = page.locator("#failed-list .failed-item").filter(has_text="broken.pdf")
    expect(failed.locator(".reason")).to_have_text(
        "The file is named 'broken.pdf' but its content is a PNG image; upload it with its real type or extension.")
    expect(failed).not_to_contain_text("damaged")
    expect(failed.get_by_role("button", name="Retry broken.pdf")).to_have_count(0)
    expect(failed.get_by_role("button", name="Remove broken.pdf from this list")).to_be_visible()
    assert serious(page, axe) == []
    assert errors == []
    page.context.close()


@pytest.mark.parametrize(("size", "scheme"), LOOKS, ids=[f"{s}-{c}" for s, c in LOOKS])
def test_every_control_reached_with_tab_is_in_view(browser: Browser, server: Server, size: str, scheme: str) -> None:
    page, errors = open_page(browser, server, size, scheme)
    open_conversations(page)
    page.get_by_role("button", name="New conversation").click()
    ask(page, "When does the night train to Lyon leave?")  # an answer with its citations, cards and actions on the page
    page.get_by_role("button", name="Custom range").click()  # and every form field there is
    page.locator("summary", has_text="Paste a note").click()
    page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
    stops: list[dict[str, Any]] = []
    for _ in range(600):
        page.keyboard.press("Tab")
        focused = page.evaluate(IN_VIEW)
        if focused is None:
            continue  # the browser's own UI between two rounds
        if stops and focused["key"] == stops[0]["key"]:
            break
        stops.append(focused)
    else:
        raise AssertionError("Tab never came back to the first control")
    hidden = [s for s in stops if not s["ok"]]
    assert not hidden, f"{len(hidden)} of {len(stops)} focused controls not in view: {hidden[:5]}"
    names = " | ".join(s["name"] for s in stops)
    for wanted in ("Refresh", "Search your sources", "Create a key", "Copy the answer", "Regenerate", "Copy source 1",
                   "Remove broken.pdf", "Delete"):
        assert wanted in names, f"{wanted!r} not reached: {names}"
    print(f"{size}-{scheme}: {len(stops)} tab stops, all in view")  # the measure, in the log
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_picture_a_file_or_a_link_pasted_or_dropped_anywhere_is_added(browser: Browser, server: Server,
                                                                         size: str) -> None:
    page, errors = open_page(browser, server, size)
    captured = page.locator("#captured")
    # A picture pasted into the question box (a text box cannot hold it): added, named by when it was pasted.
    paste(page, "#question", files=[("image.png", "image/png", png(("PARCEL LOCKER 2291", f"opened {size}")))])
    expect(captured).to_contain_text("Pasted picture")
    expect(page.get_by_label("Your question")).to_have_value("")
    # A file pasted anywhere else.
    paste(page, "#ask-title", files=[(f"recipe-{size}.md", "text/markdown",
                                      f"# Recipe {size}\n\nTwo eggs and flour.\n".encode())])
    expect(captured).to_contain_text(f"recipe-{size}.md")
    # A link pasted outside a text box is fetched as a web page; in the question box it is just text.
    pasted, dropped = f"{server.pages.base}/{size}-pasted", f"{server.pages.base}/{size}-dropped"
    paste(page, "#question", text=pasted)
    expect(captured).not_to_contain_text(pasted)  # (a script's paste event types nothing: the box stays empty)
    paste(page, "#ask-title", text=pasted)
    expect(captured).to_contain_text(pasted)
    # A link dragged from another window and dropped on the page.
    transfer = page.evaluate_handle("""(url) => { const dt = new DataTransfer(); dt.setData('text/uri-list', url);
        dt.setData('text/plain', url); return dt; }""", dropped)
    for event in ("dragenter", "dragover", "drop"):
        page.dispatch_event("#sources", event, {"dataTransfer": transfer})
    expect(captured).to_contain_text(dropped)
    # Text pasted outside a text box goes to "Paste a note", to be saved by the person.
    paste(page, "#ask-title", text="Remember to water the basil.")
    expect(page.get_by_label("Note", exact=True)).to_have_value("Remember to water the basil.")
    expect(page.get_by_label("Note", exact=True)).to_be_focused()
    page.screenshot(path=str(SHOTS / f"paste-{size}.png"))
    # Each was added, and is searchable once read.
    with server.api() as api:
        deadline = time.monotonic() + 150
        while True:
            rows = api.get("/v1/sources", params={"limit": 500}).json()["sources"]
            mine = {r["source_uri"]: r["status"] for r in rows
                    if r["source_uri"] in (pasted, dropped) or (r["title"] or "") in (f"Recipe {size}",)}
            pictures = [r for r in rows if (r["title"] or "").startswith("Pasted picture")]
            if len(mine) == 3 and set(mine.values()) == {"succeeded"} and pictures \
                    and all(p["status"] == "succeeded" for p in pictures):
                break
            assert time.monotonic() < deadline, (mine, [(p["title"], p["status"]) for p in pictures])
            time.sleep(0.5)
        hits = api.get("/v1/search", params={"q": f"parcel locker 2291 opened {size}", "modality": "image"}).json()
    assert any(f"opened {size}" in h["text"] for h in hits["hits"]), hits["hits"][:2]
    expect(page.locator("#source-list .source").filter(has_text=f"Recipe {size}")).to_have_attribute(
        "data-status", "succeeded")
    assert errors == []
    page.context.close()


# --------------------------------------------------------------------------- time lists, failed captures


def test_what_was_saved_today_is_listed_by_when_it_was_saved(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server)
    page.get_by_role("button", name="New conversation").click()
    turn = ask(page, "What did I save today?")
    answer = turn.locator(".answer")
    expect(answer).to_contain_text("the latest first:")
    lines = [li.strip() for li in answer.locator("li").all_inner_texts()]
    today = datetime.now(ZoneInfo(ZONE)).date()
    with server.api() as api:
        rows = api.get("/v1/sources", params={"status": "succeeded", "limit": 500}).json()["sources"]
    rows = [r for r in rows if not r["superseded"]
            and datetime.fromisoformat(r["ingested_at"]).astimezone(ZoneInfo(ZONE)).date() == today]
    saved = [r["title"] for r in sorted(rows, key=lambda r: r["ingested_at"], reverse=True)]
    shown = [re.sub(r" \((\w[\w ]*), saved .*$", "", line) for line in lines]
    assert shown == saved, (shown, saved)  # everything saved today, the latest save first
    assert all(", saved " in line for line in lines), lines
    island = next(line for line in lines if line.startswith("Island trip"))
    dated = rf", dated {ISLAND:%a} 0?{ISLAND.day} {ISLAND:%b} {ISLAND.year}\) \[\d+\]$"
    assert re.search(dated, island), island  # another year: said
    assert str(datetime.now(ZoneInfo(ZONE)).year) not in island.split(", dated")[0]  # this year's: not
    expect(turn.locator(".turn-sources .src-where").first).to_contain_text("saved ")
    answer.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "saved-today.png"))
    assert errors == []
    page.context.close()


def test_each_failed_file_is_listed_once_and_can_be_removed(browser: Browser, server: Server) -> None:
    broken = server.ids["broken"]
    with server.api() as api:
        tries = [broken]
        # tried again twice, from the CLI and the API (both still allow it): it fails the same way each time
        again = run_cli(["jobs", broken, "--retry", "--json", "--url", server.url,
                         "--data-dir", str(server.svc.data_dir)], {})
        assert again.returncode == 0, again.stderr
        tries.append(json.loads(again.stdout)["job_id"])
        wait_jobs(api, tries[-1:])
        r = api.post(f"/v1/jobs/{tries[-1]}/retry")
        assert r.status_code == 202, r.text
        tries.append(r.json()["job_id"])
        wait_jobs(api, tries[-1:])
    listed = run_cli(["sources", "--url", server.url, "--data-dir", str(server.svc.data_dir)], {})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    rows = [i for i, line in enumerate(lines) if line.rstrip().endswith("broken.pdf")]
    assert len(rows) == 1, listed.stdout
    why = lines[rows[0] + 1]  # the line under it says why and what to do
    assert "its content is a PNG image" in why and why.rstrip().endswith("Fix the file and add it again."), why
    job = run_cli(["jobs", tries[-1], "--url", server.url, "--data-dir", str(server.svc.data_dir)], {})
    assert "error: The file is named 'broken.pdf' but its content is a PNG image" in job.stdout, job.stdout
    assert "trying again would fail the same way" in job.stdout
    page, errors = open_page(browser, server)
    failed = page.locator("#failed-list .failed-item")
    expect(failed.filter(has_text="broken.pdf")).to_have_count(1)
    page.get_by_role("button", name="Remove broken.pdf from this list").click()
    expect(failed.filter(has_text="broken.pdf")).to_have_count(0)
    expect(page.locator("#job-status")).to_have_text("Removed broken.pdf.")
    listed = run_cli(["sources", "--url", server.url, "--data-dir", str(server.svc.data_dir)], {})
    assert "broken.pdf" not in listed.stdout
    with server.api() as api:
        assert all(api.get(f"/v1/jobs/{j}").status_code == 404 for j in tries)
    assert errors == []
    page.context.close()


# --------------------------------------------------------------------------- the wording bugs


@pytest.mark.parametrize("size", list(SIZES))
def test_the_small_wording_bugs_are_gone(browser: Browser, server: Server, size: str) -> None:
    # A key that is not accepted is said once, with where a good one is (not a command that needs --user).
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, timezone_id=ZONE)
    page = context.new_page()
    page.goto(server.url + "/")
    page.get_by_label("API key", exact=True).fill("sb_not_a_real_key")
    page.get_by_role("button", name="Sign in", exact=True).click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("not accepted")
    said = alert.inner_text()
    assert said.lower().count("not accepted") == 1, said
    assert str(server.svc.data_dir / "api-key") in said and "keys create" not in said, said
    expect(page.locator("#key-path")).to_have_text(str(server.svc.data_dir / "api-key"))
    context.close()

    page, errors = open_page(browser, server, size)
    # A note's own page has no stray "null" line, and its Markdown is shown.
    trip = page.locator("#source-list .source").filter(has_text="Trip plan")
    trip.get_by_role("button", name="Open Trip plan").click()
    dialog = page.locator("#source-page")
    expect(dialog.locator(".page-text strong")).to_have_text(TRAIN_DAY)
    expect(dialog.locator(".page-text li")).to_have_count(2)
    expect(dialog.locator(".page-text a")).to_have_attribute("target", "_blank")
    assert "null" not in dialog.inner_text()
    page.screenshot(path=str(SHOTS / f"source-markdown-{size}.png"))
    page.keyboard.press("Escape")

    # A recording's transcript reads as one paragraph, not one line per pause with blank lines between.
    memo = page.locator("#source-list .source").filter(has_text="voice-memo")
    memo.get_by_role("button", name=re.compile("^Open")).click()
    passage = dialog.locator(".passage-item .passage-text").first
    expect(passage).to_contain_text("cathedral")  # the second sentence, said after a pause
    assert passage.locator("p").count() == 1 and passage.locator("br").count() == 0, passage.inner_html()
    assert "\n\n" not in passage.inner_text()
    page.keyboard.press("Escape")

    # A PDF opened from a citation is named by its file in Chromium's viewer, not by a blob's number.
    page.get_by_role("button", name="New conversation").click()
    turn = ask(page, "When does the evening ferry to Lindholm leave?")
    turn.locator(".answer .cite").first.click()
    viewer = page.locator("#viewer")
    frame = viewer.locator("iframe")
    expect(frame).to_have_attribute("src", re.compile(r"^/v1/artifacts/[^/]+/raw#page=2$"))
    title = pdf_viewer_title(page)
    assert title == "ferry-timetable.pdf", title
    page.keyboard.press("Escape")

    # A citation of a source deleted since the answer says so, in words.
    if size == "desktop":
        turn = ask(page, "Where is the spare key to the boathouse?")
        with server.api() as api:
            doomed = next(s for s in api.get("/v1/sources").json()["sources"] if s["title"] == "Doomed note")
            assert api.delete(f"/v1/sources/{doomed['source_id']}").status_code == 204
        turn.locator(".answer .cite").first.click()
        expect(viewer.locator(".error")).to_have_text(
            "This source has been deleted since this answer was given: the passage above is what was quoted "
            "from it then.")
        expect(viewer).not_to_contain_text("no such artifact")
        page.keyboard.press("Escape")

    # A model server's address keeps its own spelling at the start of a sentence ("http://", not "Http://").
    page.get_by_label("Address of an OpenAI-compatible server").fill(f"{server.site.base}/v1")
    page.get_by_role("button", name="Use this model").click()
    error = page.locator("#answers-error")
    expect(error).to_contain_text("answers, but not as an OpenAI-compatible server")
    assert error.inner_text().startswith(f"{server.site.base}/v1"), error.inner_text()
    assert errors == []
    page.context.close()


def pdf_viewer_title(page: Page) -> str:
    """The title Chromium's PDF viewer shows (an extension frame inside the PDF's frame)."""
    for _ in range(100):
        frames = [f for f in page.frames if f.url.startswith("chrome-extension://")]
        if frames:
            title = frames[-1].evaluate("() => document.title")
            if title:
                return str(title)
        page.wait_for_timeout(200)
    raise AssertionError("Chromium's PDF viewer did not open")


# --------------------------------------------------------------------------- last: the server stops


def test_a_failed_request_keeps_the_question_and_offers_retry(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server)
    page.get_by_role("button", name="New conversation").click()
    assert server.svc.stop() == 0  # secondbrain stops while the page stays open
    box = page.get_by_label("Your question")
    box.fill("What is the combination of the bike lock?")
    box.press("Enter")
    turn = page.locator("#thread .turn").last
    expect(turn).to_have_attribute("data-state", "error")
    expect(turn.get_by_role("alert")).to_have_text(
        "Could not reach secondbrain: it may have stopped, or the connection is down. Your question is kept; "
        "Retry when it is running again.")
    expect(turn).not_to_contain_text("Failed to fetch")
    expect(box).to_have_value("What is the combination of the bike lock?")  # the question is not lost
    page.screenshot(path=str(SHOTS / "failed-request-retry.png"))
    server.svc.start().wait_ready(timeout=180)  # back, with the same data and the same sign-in
    turn.get_by_role("button", name="Retry “What is the combination of the bike lock?”").click()
    turns = page.locator("#thread .turn")
    expect(turns).to_have_count(1)  # the failed try made way for the answer
    expect(turns.last).to_have_attribute("data-state", "done", timeout=60_000)
    expect(turns.last.locator(".answer")).to_contain_text("4-7-1-9")
    assert errors == []
    page.context.close()
