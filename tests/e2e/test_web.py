"""The web app in a real browser against ``secondbrain up``: what a new user does from the page alone.

Headless Chromium (the system's, driven by Playwright) signs in with the key ``up`` saved (and with
one-time sign-in links),
uploads a PDF through the file picker, drops two more files on the page, adds a web page
served on loopback, and records a voice note through a fake microphone that plays speech
synthesised by espeak-ng, so the transcriber hears real words.  The test then watches the
progress finish in the source list, asks questions, opens the citations (the PDF's page, the
recording's second), meets the honest empty state, edits the understood time range, filters
by time, deletes a source, and checks phone width and keyboard use.  Screenshots go to
``test-artifacts/web/``.
"""

from __future__ import annotations

import base64
import functools
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from devtools import gen_audio, gen_pdf_image, gen_web
from tests.e2e.harness import REPO, Service, Site, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"


def browser_zone(now: datetime | None = None) -> str:
    """The browser's zone: one whose date differs from the server's (UTC) date, so "today" must be the
    user's day, and whose midnight is at least an hour away, so a run cannot straddle it.  At any UTC
    hour one of the two qualifies (UTC+14 from 10:00 UTC on, UTC-11 before)."""
    now = now or datetime.now(UTC)
    for name in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):
        local = now.astimezone(ZoneInfo(name))
        if local.date() != now.date() and local.hour < 23:
            return name
    raise AssertionError(f"no zone fits {now}")  # cannot happen: see above


@functools.cache
def user_zone() -> str:
    """The browser's zone for this run, chosen when the first page opens (see ``browser_zone``)."""
    return browser_zone()
VOICE = (gen_audio.SCRIPT[1], gen_audio.SCRIPT[3])  # the grandmother's cake, then the orchestra
VOICE_LEAD_S = 4.0  # silence before the first word, so the cited second is not simply 0
VOICE_TAIL_S = 6.0  # recorded after the last word
# three weeks from the day the suite runs, written as people write it ("the 3rd of December")
_DENTIST_DAY = datetime.now(UTC).date() + timedelta(days=21)
_ORDINAL = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(_DENTIST_DAY.day, "th")
DENTIST = (f"My dentist appointment with Dr. Adeyemi is on the {_DENTIST_DAY.day}{_ORDINAL} of "
           f"{_DENTIST_DAY:%B} at 9:30.")
PACKING = "# Packing list\n\nTake the green umbrella and the harbour map to the ferry on Saturday.\n"
PROCESSING_TIMEOUT_MS = 150_000


@dataclass
class Server:
    """The running ``secondbrain up`` and the key it saved in its data directory."""

    svc: Service
    key: str

    @property
    def url(self) -> str:
        """Where the page is served."""
        return self.svc.url

    def api(self) -> httpx.Client:
        """An API client with the key, to check what the page did."""
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30)


@dataclass
class Inputs:
    """The files a user has at hand."""

    pdf: Path
    photo: Path
    notes: Path
    speech: gen_audio.Recording


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    assert gen_audio.tools_available(), "espeak-ng and sox are required to synthesise the voice note"
    root = tmp_path_factory.mktemp("web-inputs")
    pdf = root / "harbour-logbook.pdf"
    pdf.write_bytes(gen_pdf_image.text_pdf())
    photo = root / "receipt.png"
    gen_pdf_image.text_image(gen_pdf_image.PHOTO_LINES).save(photo)
    notes = root / "packing-list.md"
    notes.write_text(PACKING)
    speech = gen_audio.build_recording(root / "speech", VOICE, gap_s=1.5, lead_s=VOICE_LEAD_S, name="voice")
    return Inputs(pdf, photo, notes, speech)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with readable_tmp("sb-web-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data")], {"SB_FETCH_ALLOW_PRIVATE": "true"},
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            # Read from the file `up` names (`cat .secondbrain/api-key`): it never prints the key itself.
            yield Server(svc, svc.key)
        finally:
            svc.stop()


@pytest.fixture(scope="module")
def browser(inputs: Inputs) -> Iterator[Browser]:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=[
            "--no-sandbox", "--disable-gpu",
            # A microphone that plays the synthesised speech once, with no permission prompt.
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={inputs.speech.path}%noloop"])
        yield b
        b.close()


@pytest.fixture(autouse=True, scope="module")
def shots_dir() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def new_page(browser: Browser, width: int = 1280, height: int = 900) -> tuple[Page, list[str]]:
    """A fresh browser profile (nothing remembered) in the user's time zone, and its script errors."""
    context = browser.new_context(viewport={"width": width, "height": height}, timezone_id=user_zone(),
                                  permissions=["microphone"])
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors


def shot(page: Page, name: str, *, full: bool = False) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full)


def sign_in(page: Page, server: Server) -> None:
    """Open a one-time sign-in link, as `secondbrain open` makes one."""
    with server.api() as api:
        link = api.post("/v1/login-links")
        assert link.status_code == 201, link.text
    page.goto(server.url + link.json()["path"])
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    assert "token" not in page.url  # taken out of the address bar (and the history)


def drop_files(page: Page, selector: str, files: list[tuple[Path, str]]) -> None:
    """Drag files from the desktop onto an element: the same events a real drop fires."""
    payload = [{"name": p.name, "type": mime, "b64": base64.b64encode(p.read_bytes()).decode()} for p, mime in files]
    transfer = page.evaluate_handle("""(files) => {
        const dt = new DataTransfer();
        for (const f of files) {
            const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
            dt.items.add(new File([bytes], f.name, {type: f.type}));
        }
        return dt;
    }""", payload)
    for event in ("dragenter", "dragover", "drop"):
        page.dispatch_event(selector, event, {"dataTransfer": transfer})


def ask(page: Page, question: str) -> None:
    """Type a question and press Enter; wait for the answer to finish (whatever it says)."""
    turns = page.locator("#thread .turn")
    before = turns.count()
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    expect(turns).to_have_count(before + 1)
    expect(turns.last).not_to_have_attribute("data-state", "streaming", timeout=60_000)


def row(page: Page, title: str) -> Locator:
    """The source list's row with this title."""
    return page.locator("#source-list .source").filter(has=page.locator(".title", has_text=title))


def tab_to(page: Page, is_target: str, *, key: str = "Tab", limit: int = 60) -> None:
    """Press Tab (or Shift+Tab) until ``is_target(document.activeElement)`` holds."""
    for _ in range(limit):
        page.keyboard.press(key)
        if page.evaluate(f"(() => {{ const el = document.activeElement; return Boolean({is_target}); }})()"):
            return
    raise AssertionError(f"{key} never reached {is_target}")


def pdf_viewer_page(page: Page) -> Locator:
    """The page number shown by Chromium's PDF viewer (an extension frame inside the PDF's frame)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        frames = [f for f in page.frames if f.url.startswith("chrome-extension://")]
        if frames:
            return frames[-1].locator("#pageSelector")
        page.wait_for_timeout(200)
    raise AssertionError("Chromium's PDF viewer did not open")


def test_sign_in_needs_a_valid_key(browser: Browser, server: Server) -> None:
    page, errors = new_page(browser)
    page.goto(server.url + "/")
    # Nothing without a key, on this machine too: the sign-in form, and what to do.
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator("#signin")).to_contain_text("secondbrain open")
    expect(page.locator("#main")).to_be_hidden()
    shot(page, "01-sign-in")
    page.get_by_label("API key", exact=True).fill("sb_not_a_real_key")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("not accepted")
    expect(page.locator("#main")).to_be_hidden()
    page.get_by_label("API key", exact=True).fill(server.key)
    page.get_by_label("Remember me on this device").check()
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    expect(page.get_by_label("Your question")).to_be_focused()
    # The key is not kept by the page: only an HttpOnly cookie the page's script cannot read.
    stored = page.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}, document.cookie])")
    assert server.key not in stored and "sb_session" not in stored
    cookie = next(c for c in page.context.cookies() if c["name"] == "sb_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    page.reload()  # remembered on this device
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.reload()  # forgotten
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    # A one-time link signs in once; opened again it says what to do.
    with server.api() as api:
        path = api.post("/v1/login-links").json()["path"]
    page.goto(server.url + path)
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    page.get_by_role("button", name="Sign out").click()
    page.goto(server.url + path)
    expect(page.get_by_role("alert")).to_contain_text("This sign-in link did not work")
    expect(page.get_by_role("alert")).to_contain_text("secondbrain open")
    assert errors == []
    page.context.close()


def test_a_new_user_adds_a_pdf_a_page_and_a_voice_memo_and_lands_on_the_cited_page_and_second(
        browser: Browser, server: Server, inputs: Inputs, site: Site) -> None:
    page, errors = new_page(browser)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if "/stream" in r.url else None)
    sign_in(page, server)
    # Every status a source row shows, as it changes (the rows update from the job streams).
    page.evaluate("""() => {
        window.seenStatuses = new Set();
        const list = document.querySelector('#source-list');
        const note = () => list.querySelectorAll('.source').forEach((r) => window.seenStatuses.add(r.dataset.status));
        new MutationObserver(note).observe(list, {subtree: true, childList: true, attributes: true});
    }""")

    # A voice note, then a PDF through the file picker, two files dropped at once and a web page.
    # The voice note first, while nothing else is processed: the fake microphone's audio thread, starved of CPU by
    # the other captures' extraction, garbled words ("Theorcast river's time you before symphony").
    page.get_by_role("button", name="Record a voice note").click()
    expect(page.get_by_role("button", name="Stop recording")).to_have_attribute("aria-pressed", "true")
    # The page's clock is the wall's; the fake microphone reads its file as the audio thread asks, which falls
    # seconds behind on a busy machine: record well past the end (after it, the file gives silence).
    page.wait_for_function("s => Number(document.querySelector('#record-time').dataset.seconds) >= s",
                           arg=inputs.speech.duration_s + VOICE_TAIL_S, timeout=60_000)
    shot(page, "02-recording")
    page.get_by_role("button", name="Stop recording").click()
    expect(page.locator("#capture-status")).to_contain_text("Voice note added")
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Choose files…").click()
    chooser.value.set_files(str(inputs.pdf))
    drop_files(page, "#dropzone", [(inputs.photo, "image/png"), (inputs.notes, "text/markdown")])
    page.get_by_label("Web page address").fill(f"{site.base}/article")
    page.get_by_role("button", name="Add page").click()

    rows = page.locator("#source-list .source")
    expect(rows).to_have_count(5)
    shot(page, "03-progress", full=True)
    try:
        expect(page.locator('#source-list .source[data-status="succeeded"]')).to_have_count(
            5, timeout=PROCESSING_TIMEOUT_MS)
    except AssertionError:
        raise AssertionError(f"sources not ready: {page.locator('#source-list').inner_text()}\n"
                             f"{server.svc.tail()}") from None
    seen = set(page.evaluate("[...window.seenStatuses]"))
    assert "succeeded" in seen and seen & {"queued", "running"}, seen  # the progress was watched, live
    assert any("/v1/jobs/" in u for u in streams)
    expect(row(page, "Harbour Logbook").locator(".badge")).to_have_text("PDF")
    expect(row(page, gen_web.TITLE).locator(".badge")).to_have_text("Web page")
    expect(row(page, "Voice note").locator(".badge")).to_have_text("Recording")
    expect(row(page, "receipt.png").locator(".badge")).to_have_text("Image")
    expect(row(page, "Harbour Logbook")).to_contain_text("Ready")
    shot(page, "04-sources-ready", full=True)

    # A question answered on page 2 of the PDF: tokens stream in, the citation opens page 2.
    ask(page, "What was served at the beekeeping conference?")
    turn = page.locator("#thread .turn").last
    expect(turn).to_have_attribute("data-state", "done")
    assert int(turn.get_attribute("data-tokens") or 0) > 1  # the answer arrived in pieces
    expect(turn.locator(".answer")).to_contain_text("Marmalade sandwiches")
    cite = turn.locator(".answer .cite[aria-label*='page 2']").first
    expect(cite).to_be_visible()
    shot(page, "05-answer")
    cite.click()
    viewer = page.get_by_role("dialog")
    expect(viewer.locator(".where")).to_have_text("Page 2")
    expect(viewer.locator("blockquote")).to_contain_text("Marmalade sandwiches")
    frame = viewer.locator("iframe")
    # from its own address (a sandboxed document), so the viewer names it by its file, not a blob's number
    expect(frame).to_have_attribute("src", re.compile(r"^/v1/artifacts/[^/]+/raw#page=2$"))
    expect(pdf_viewer_page(page)).to_have_value("2")  # Chromium's own PDF viewer is at page 2
    shot(page, "06-citation-pdf")
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(cite).to_be_focused()  # focus goes back where it was

    # A question about the voice note: its citation opens a player at the cited second.
    with server.api() as api:
        hits = api.get("/v1/search", params={"q": "orchestra rehearsed symphony cathedral", "modality": "audio"}
                       ).json()["hits"]
        heard = [h["text"] for h in api.get("/v1/search", params={"q": "cake", "modality": "audio"}).json()["hits"]]
    # what the recogniser heard, so a recording cut short is told from a passage lost
    assert hits, f"no passage of the voice note names the orchestra; heard: {heard}"
    # the citation opens where the quoted sentence is said: its first word's time, from the words' times the
    # passage keeps (the passage itself starts seconds earlier, with the sentences before it)
    text, marks = hits[0]["text"], hits[0]["word_times"]
    said = text.index("orchestra") - len("The ")
    cited_second = int(max(m["second"] for m in marks if m["offset"] <= said))
    assert cited_second > int(hits[0]["t_start"]) + 3  # three sentences are said before it
    page.get_by_role("button", name="New conversation").click()
    ask(page, "Where did the orchestra rehearse the symphony?")
    turn = page.locator("#thread .turn").last
    expect(turn).to_have_attribute("data-state", "done")
    # The transcript may write it "Cathedral" (the recogniser's capitals vary between runs).
    expect(turn.locator(".answer")).to_contain_text(re.compile("cathedral", re.IGNORECASE))
    cite = turn.locator(".answer .cite[aria-label*='Recording']").first
    cite.click()
    expect(viewer.locator(".where")).to_contain_text(f"At 0:{cited_second:02d}")
    audio = viewer.locator("audio")
    page.wait_for_function("""(t) => { const a = document.querySelector('#viewer audio');
        return a && a.readyState >= 1 && Math.abs(a.currentTime - t) <= 1; }""", arg=cited_second)
    position = audio.evaluate("a => a.currentTime")
    assert abs(position - cited_second) <= 1, position
    expect(viewer.locator("blockquote")).to_contain_text("orchestra")
    shot(page, "07-citation-audio")
    viewer.get_by_role("button", name="Close").click()

    # A follow-up continues the conversation.
    ask(page, "What about the chocolate cake?")
    turn = page.locator("#thread .turn").last
    expect(turn.locator(".meta")).to_contain_text("Understood as")
    expect(turn.locator(".answer")).to_contain_text("chocolate cake")

    # Something that is not there: an honest empty state, not an empty answer.
    page.get_by_role("button", name="New conversation").click()
    ask(page, "What is the capital of Mongolia?")
    turn = page.locator("#thread .turn").last
    expect(turn).to_have_attribute("data-state", "empty")
    expect(turn.locator(".empty-state")).to_contain_text("Nothing found")
    expect(turn.locator(".empty-state")).to_contain_text("could not find anything about that in your data")
    shot(page, "08-empty-state")

    # Time words read only in part rank what they name first and hide nothing: the page says so.
    page.get_by_role("button", name="New conversation").click()
    ask(page, "What did I note on the last working day of March about the lighthouse?")
    turn = page.locator("#thread .turn").last
    expect(turn.locator(".understood-range")).to_contain_text("Time read in part")
    expect(turn.locator(".understood-range")).to_contain_text("nothing else is left out")

    # The time range the question was understood with, shown and editable.
    page.get_by_role("button", name="New conversation").click()
    ask(page, "What did I add today?")
    turn = page.locator("#thread .turn").last
    expect(turn.locator(".understood-range")).to_contain_text("today")
    expect(turn.locator(".answer")).to_contain_text("Harbour Logbook")
    turn.get_by_role("button", name=re.compile("^Change range")).click()
    today = datetime.now(ZoneInfo(user_zone())).date().isoformat()
    expect(page.get_by_label("From")).to_have_value(today)
    expect(page.get_by_label("To (included)")).to_have_value(today)
    expect(page.get_by_role("button", name="Custom range")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_label("Your question")).to_have_value("What did I add today?")
    shot(page, "09-time-range")

    # Time chips scope the source list: today's captures only (the PDF says 2024, the page 2021).
    page.get_by_role("button", name="Today", exact=True).click()
    expect(rows).to_have_count(3)
    expect(row(page, "Harbour Logbook")).to_have_count(0)
    expect(row(page, gen_web.TITLE)).to_have_count(0)
    page.get_by_label("Type").select_option("audio")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Voice note")
    page.get_by_label("Type").select_option("")
    page.get_by_role("button", name="All time", exact=True).click()
    expect(rows).to_have_count(5)

    # A web page's citation leads to the original page; a photo's shows the picture and its text.
    page.get_by_role("button", name="New conversation").click()
    ask(page, "How often does a technician visit the lighthouses?")
    turn = page.locator("#thread .turn").last
    expect(turn.locator(".answer")).to_contain_text("twice a year")
    turn.locator(".answer .cite[aria-label*='Web page']").first.click()
    original = viewer.get_by_role("link", name=re.compile("Open the original page"))
    expect(original).to_have_attribute("href", re.compile(re.escape(f"{site.base}/article") + "#:~:text="))
    with page.context.expect_page() as opened:
        original.click()
    expect(opened.value).to_have_title(re.compile(gen_web.TITLE))
    opened.value.close()
    viewer.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="New conversation").click()
    ask(page, "What is the invoice number from the Blue Heron Paper Company?")
    turn = page.locator("#thread .turn").last
    turn.locator(".answer .cite[aria-label*='Image']").first.click()
    expect(viewer.get_by_role("img")).to_be_visible()
    assert viewer.get_by_role("img").evaluate("img => img.complete && img.naturalWidth") > 0
    expect(viewer.locator("blockquote")).to_contain_text("4471")
    shot(page, "10-citation-image")
    viewer.get_by_role("button", name="Close").click()

    # Delete with confirmation: cancelling keeps it, confirming removes it everywhere.
    photo = row(page, "receipt.png")
    source_id = photo.get_attribute("data-source-id")
    photo.get_by_role("button", name="Delete receipt.png").click()
    confirm = page.get_by_role("dialog", name="Delete “receipt.png”?")
    expect(confirm).to_be_visible()
    shot(page, "11-delete-confirm")
    confirm.get_by_role("button", name="Cancel").click()
    expect(rows).to_have_count(5)
    photo.get_by_role("button", name="Delete receipt.png").click()
    confirm.get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(4)
    expect(row(page, "receipt.png")).to_have_count(0)
    with server.api() as api:
        assert api.get(f"/v1/sources/{source_id}").status_code == 404
    assert errors == []
    page.context.close()


def test_phone_width_and_keyboard_only(browser: Browser, server: Server) -> None:
    # Another user, with a key made by the admin: their own empty account, signed in by keyboard.
    with server.api() as api:
        made = api.post("/v1/admin/users", json={"user_id": "bob"})
        assert made.status_code == 201, made.text
        bob_key = made.json()["key"]["api_key"]
    page, errors = new_page(browser, width=375, height=812)
    page.goto(server.url + "/")
    expect(page.get_by_label("API key", exact=True)).to_be_focused()
    page.keyboard.type(bob_key)
    page.keyboard.press("Enter")
    expect(page.locator("#who")).to_have_text("Signed in as bob")
    expect(page.locator("#sources-summary")).to_contain_text("Nothing yet")

    # A note typed and saved, a question asked, a citation opened and closed: keyboard only.
    tab_to(page, "el.tagName === 'SUMMARY' && el.textContent.includes('Paste a note')")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Title (optional)")).to_be_focused()
    page.keyboard.type("Bike lock")
    page.keyboard.press("Tab")
    page.keyboard.type("The combination of the blue bike lock is 4-7-1-9.")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save note")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#capture-status")).to_contain_text("Note saved")
    expect(row(page, "Bike lock")).to_have_attribute("data-status", "succeeded", timeout=60_000)
    # The same note again: said at once, and Sources keeps one row for it.
    page.get_by_label("Title (optional)").fill("Bike lock")
    page.get_by_label("Note", exact=True).fill("The combination of the blue bike lock is 4-7-1-9.")
    page.get_by_role("button", name="Save note").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#capture-status")).to_contain_text("Already in your memory as Bike lock, ")
    expect(page.locator("#captured")).to_contain_text("Already in your memory as Bike lock, ")
    page.wait_for_timeout(1500)  # the copy's job ends meanwhile, and the list is loaded again
    expect(page.locator("#source-list .source").filter(has_text="Bike lock")).to_have_count(1, timeout=30_000)

    tab_to(page, "el.classList.contains('skip')", key="Shift+Tab")
    page.keyboard.press("Enter")  # "Skip to the question"
    expect(page.get_by_label("Your question")).to_be_focused()
    page.keyboard.type("What is the combination of the bike lock?")
    page.keyboard.press("Enter")
    turn = page.locator("#thread .turn").last
    expect(turn).to_have_attribute("data-state", "done", timeout=60_000)
    tab_to(page, "el.classList.contains('cite')", key="Shift+Tab")
    cite = page.locator("#thread .cite").first
    expect(cite).to_be_focused()
    page.keyboard.press("Enter")
    viewer = page.get_by_role("dialog")
    expect(viewer.locator("blockquote")).to_contain_text("4-7-1-9")
    shot(page, "12-phone-citation")
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(cite).to_be_focused()

    # Usable at phone width: nothing is wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    shot(page, "13-phone", full=True)
    assert errors == []
    page.context.close()


def test_conversations_last_across_a_reload_and_can_be_renamed_and_deleted(browser: Browser, server: Server) -> None:
    with server.api() as api:
        job = api.post("/v1/notes", json={"title": "Dentist", "text": DENTIST}).json()["job_id"]
        wait_jobs(api, [job])
    page, errors = new_page(browser)
    sign_in(page, server)
    panel = page.locator("#conversation-list")
    turns = page.locator("#thread .turn")

    ask(page, "When is my dentist appointment?")
    expect(turns.last.locator(".answer")).to_contain_text("9:30")
    # A follow-up says what it took from the question before, and can be asked without it.
    ask(page, "And who is it with?")
    carried = turns.last.locator(".meta .carried")
    expect(carried).to_have_text("Took “my dentist appointment” from your last question")
    shot(page, "14-carried-over")
    turns.last.get_by_role("button", name="Ask without it").click()
    expect(turns).to_have_count(3)
    expect(turns.last).not_to_have_attribute("data-state", "streaming", timeout=60_000)
    expect(turns.last.locator(".meta .carried")).to_have_count(0)
    expect(turns.last.locator(".q")).to_have_text("And who is it with?")

    # Listed, the latest first, and open.
    mine = panel.locator(".conversation").first
    expect(mine.locator(".conversation-title")).to_have_text("When is my dentist appointment?")
    expect(mine.locator(".conversation-open")).to_have_attribute("aria-current", "true")

    # A reload opens it again, from the server: the questions, the answers with their citations.
    page.reload()
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    expect(turns).to_have_count(3)
    expect(turns.first.locator(".q")).to_have_text("When is my dentist appointment?")
    expect(turns.first.locator(".answer")).to_contain_text("9:30")
    expect(turns.nth(1).locator(".meta .carried")).to_contain_text("my dentist appointment")
    turns.first.locator(".answer .cite").first.click()
    expect(page.get_by_role("dialog").locator("blockquote")).to_contain_text("Dr. Adeyemi")
    page.keyboard.press("Escape")
    expect(mine.locator(".conversation-open")).to_have_attribute("aria-current", "true")
    # a question after the reload continues it
    ask(page, "What time is the appointment with Dr. Adeyemi?")
    expect(turns.last.locator(".answer")).to_contain_text("9:30")
    shot(page, "15-conversation-reopened")
    with server.api() as api:
        latest = api.get("/v1/conversations").json()["conversations"][0]
        assert latest["title"] == "When is my dentist appointment?" and latest["messages"] == 8

    # Renamed: the new title is kept.
    page.get_by_role("button", name="Rename conversation “When is my dentist appointment?”").click()
    page.get_by_label("New title").fill("Dentist visit")
    page.get_by_role("button", name="Save title").click()
    expect(mine.locator(".conversation-title")).to_have_text("Dentist visit")
    page.reload()
    expect(panel.locator(".conversation").first.locator(".conversation-title")).to_have_text("Dentist visit")

    # A new conversation leaves the list as it is; the old one opens from the list.
    page.get_by_role("button", name="New conversation").click()
    expect(turns).to_have_count(0)
    expect(panel.locator("[aria-current]")).to_have_count(0)
    panel.get_by_role("button", name=re.compile("^Dentist visit")).click()
    expect(turns).to_have_count(4)

    # Deleted after a confirmation: gone from the list, the page and the server.
    with server.api() as api:
        conversation = api.get("/v1/conversations").json()["conversations"][0]["conversation_id"]
    page.get_by_role("button", name="Delete conversation “Dentist visit”").click()
    confirm = page.get_by_role("dialog", name="Delete conversation “Dentist visit”?")
    confirm.get_by_role("button", name="Cancel").click()
    expect(panel.get_by_role("button", name=re.compile("^Dentist visit"))).to_have_count(1)
    page.get_by_role("button", name="Delete conversation “Dentist visit”").click()
    confirm.get_by_role("button", name="Delete").click()
    expect(panel.get_by_role("button", name=re.compile("^Dentist visit"))).to_have_count(0)
    expect(turns).to_have_count(0)
    with server.api() as api:
        assert api.get(f"/v1/conversations/{conversation}").status_code == 404
    page.reload()
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    expect(panel.get_by_role("button", name=re.compile("^Dentist visit"))).to_have_count(0)
    expect(turns).to_have_count(0)

    # At phone width the list is folded away above the question, and opens.
    page.set_viewport_size({"width": 375, "height": 812})
    page.reload()
    expect(page.locator("#who")).to_have_text("Signed in as local, admin")
    expect(page.locator("#conversations-box")).not_to_have_attribute("open", "")
    page.get_by_text("Conversations", exact=True).click()
    expect(page.locator("#conversations-box")).to_have_attribute("open", "")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert errors == []
    page.context.close()
