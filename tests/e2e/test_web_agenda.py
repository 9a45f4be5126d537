"""The agenda on the web page, in headless Chromium against real stores: the Upcoming panel lists an
appointment booked then moved once, at its new time, with "moved from", and opens its citation; a cancelled
meeting and a call at a stated zone's time are shown as such; a trip weeks away is under Later; On this day
shows last year's entry; axe finds nothing serious with all of them on the page (each line's name is the
words it shows); Settings makes a calendar address whose feed holds the event, and revoking it there shuts
the address (401); an end given with "until", an arrangement on a rhythm and a plan agreed in a chat are shown
as such; the chat answers "what's coming up?" with the panel's lines.  Every date is counted from the day the
test runs, so the day decides nothing.
Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import core
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from tests.e2e.axe import axe_source, serious
from tests.paths import REPO
from tests.serving import serve_in_thread

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "web"
TZ = ZoneInfo("Europe/London")


def day_words(d: date) -> str:
    return f"{d:%A} {d.day} {d:%B}"


@pytest.fixture(scope="module")
def site(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    today = datetime.now(TZ).date()
    booked, moved, trip = today + timedelta(days=5), today + timedelta(days=6), today + timedelta(days=40)
    board, call = today + timedelta(days=3), today + timedelta(days=8)
    exam, football, coffee = today + timedelta(days=4), today + timedelta(days=2), today + timedelta(days=3)
    noon = datetime.combine(today, datetime.min.time()).replace(tzinfo=TZ) + timedelta(hours=12)
    try:
        last_year = noon.replace(year=noon.year - 1)
    except ValueError:  # 29 February
        last_year = noon - timedelta(days=365)
    records = [("Dentist booked", f"Dentist appointment on {day_words(booked)} at 10:00.", noon - timedelta(days=7)),
               ("Dentist moved", f"Dentist moved to {day_words(moved)} at 09:40.", noon - timedelta(days=2)),
               ("Rome trip", f"Flight to Rome on {trip.day} {trip:%B} {trip.year} at 07:25.", noon - timedelta(days=1)),
               ("Board meeting", f"Board meeting on {day_words(board)} at 15:00.", noon - timedelta(days=9)),
               ("Board off", f"The board meeting on {day_words(board)} is cancelled.", noon - timedelta(days=1)),
               ("Tokyo call", f"Call with the Tokyo office on {day_words(call)} at 10:00 Tokyo time.",
                noon - timedelta(days=3)),
               ("Bath", "We went to the Christmas fair in Bath today.", last_year),
               ("Mock exam", f"Mock exam on {day_words(exam)}, 09:00 until 11:20, sports hall.",
                noon - timedelta(days=1)),
               ("Football", f"Five-a-side every other {football:%A} at 6pm, starting {day_words(football)}.",
                noon - timedelta(days=1))]
    chats = [("Coffee", f"Dana: Coffee on {coffee:%A}?\nMe: {coffee:%A}'s good. 10:30 at Monmouth?\n"
              "Dana: Great, see you then.\n", noon - timedelta(hours=1)),
             ("Lunch", f"Kate: Are you free for lunch on {coffee:%A}?\nMe: Did you see the match?\n",
              noon - timedelta(hours=1))]
    settings = Settings(data_dir=tmp_path_factory.mktemp("web-agenda"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off", timezone="Europe/London")
    rt = build_runtime(settings, vectors=True, models=True)
    m = rt.metadata
    m.users.ensure_user("local")
    extract = ExtractorStage(rt.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                             fence=m.fence, catalog=m.catalog,
                             lifecycle=m.lifecycle, extractors=ExtractorSet({"text": TextExtractor()}),
                             max_bytes=1 << 20)
    chunk = ChunkerStage(rt.objects, ChunkingConfig(), fence=m.fence, zone=TZ)
    assert rt.vectors and rt.embedder and rt.sparse
    embed = EmbedderStage(rt.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence, vectors=rt.vectors,
                          embedder=rt.embedder, sparse=rt.sparse)
    for title, text, when, content_type in [(*r, "text/markdown") for r in records] + [(*c, "text/x-chat")
                                                                                       for c in chats]:
        raw = text.encode()
        ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id="local", source_uri=f"note:{title}",
                               content_type=content_type, size_bytes=len(raw), submitted_at=datetime.now(UTC),
                               producer="test", content=raw, title=title, captured_at=when.astimezone(UTC),
                               filename=f"{title}.chat" if content_type == "text/x-chat" else None,
                               attributes={} if content_type == "text/x-chat" else {"kind": "note"})
        (doc,) = core.run(extract, ev, m.jobs, trusted=True)
        (chunks,) = core.run(chunk, doc, m.jobs)
        core.run(embed, chunks, m.jobs)
    with serve_in_thread(create_app(rt, gateway=True, query=True), access_log=False) as (url, _port):
        yield url
    rt.close()


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> str:
    return axe_source(tmp_path_factory.mktemp("axe"))


@pytest.mark.parametrize("width", [1366, 390], ids=["desktop", "phone"])
def test_upcoming_on_this_day_and_the_calendar_feed(site: str, axe: str, width: int) -> None:
    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="Europe/London",
                                      bypass_csp=True)  # (axe-core is injected only then)
        page = context.new_page()
        page.set_default_timeout(20_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(site + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        soon = page.locator("#agenda-soon .agenda-line")
        expect(soon).to_have_count(6)
        line = soon.filter(has_text="Dentist")
        expect(line).to_contain_text("09:40")
        expect(line).to_contain_text("Dentist moved to")
        expect(line).to_contain_text("moved from")
        # an end given with "until", a rhythm, a plan agreed in a chat (and not the one left unanswered)
        expect(soon.filter(has_text="Mock exam").locator(".agenda-time")).to_have_text("09:00\u201311:20")
        football = datetime.now(TZ).date() + timedelta(days=2)
        expect(soon.filter(has_text="Five-a-side")).to_contain_text(f"every other {football:%A}")
        expect(soon.filter(has_text="Monmouth").locator(".agenda-time")).to_have_text("10:30")
        expect(soon.filter(has_text="lunch")).to_have_count(0)
        later = page.locator("#agenda-later .agenda-line")
        expect(later.filter(has_text="Flight to Rome")).to_have_count(1)
        expect(later.filter(has_text="Five-a-side")).to_have_count(1)  # listed once, saying how it repeats
        expect(page.locator("#onthisday")).to_contain_text("We went to the Christmas fair in Bath today.")
        board_line = soon.filter(has_text="board meeting")
        expect(board_line).to_have_class(re.compile(r"\bcancelled\b"))
        expect(board_line).to_contain_text("cancelled")
        expect(soon.filter(has_text="Tokyo office")).to_contain_text("Tokyo time")
        # Each line's button is named by what it shows, in order: the time, the quote, the move, the source.
        expect(line.locator(".agenda-open")).to_have_accessible_name(re.compile(
            r"^09:40\s*Dentist appointment\s*“Dentist moved to .*”\s*moved from .*Dentist moved$"))
        assert serious(page, axe) == []
        page.locator("#agenda").scroll_into_view_if_needed()
        page.locator("#agenda").screenshot(path=str(SHOTS / f"agenda-upcoming-{width}.png"))
        line.locator(".agenda-open").click()
        expect(page.locator("#viewer")).to_be_visible()
        expect(page.locator("#viewer-title")).to_contain_text("Dentist moved")
        expect(page.locator("#viewer-body")).to_contain_text("Dentist moved to")
        page.locator("#viewer-close").click()
        # "Remind me" on the line: kept an hour before (an appointment), said, and marked on the line.
        line.get_by_role("button", name="Remind me of Dentist appointment").click()
        expect(page.locator("#agenda-status")).to_contain_text("You will be reminded of Dentist appointment")
        expect(line.locator(".remind")).to_have_text("Reminder set")
        expect(line.locator(".remind")).to_be_disabled()
        (kept,) = httpx.get(f"{site}/v1/reminders", timeout=30).json()["reminders"]
        assert kept["minutes_before"] == 60 and kept["kind"] == "appointment"
        assert httpx.delete(f"{site}/v1/reminders/{kept['reminder_id']}", timeout=30).status_code == 204  # next width

        # The chat answers "what's coming up?" with the lines the panel shows for those 14 days.
        titles = [t.strip() for t in soon.locator(".agenda-title").all_inner_texts()]
        box = page.get_by_label("Your question")
        box.fill("What's coming up?")
        box.press("Enter")
        turn = page.locator("#thread .turn").last
        expect(turn).not_to_have_attribute("data-state", "streaming", timeout=60_000)
        expect(turn).to_contain_text(f"your agenda has {len(titles)} things")
        for title in titles:
            expect(turn).to_contain_text(title)

        page.get_by_label("Name of a new calendar address (e.g. phone)").fill("phone")
        page.get_by_role("button", name="Make a calendar address").click()
        address = page.locator("#new-feed-value")
        expect(page.locator("#new-feed")).to_be_visible()
        url = address.input_value()
        assert "/v1/agenda.ics?token=sbf_" in url
        feed = httpx.get(url, timeout=30)
        assert feed.status_code == 200 and "Dentist moved to" in feed.text and "STATUS:CONFIRMED" in feed.text
        page.locator("#settings").scroll_into_view_if_needed()
        page.locator("#settings").screenshot(path=str(SHOTS / f"agenda-feed-{width}.png"))
        page.get_by_role("button", name="Revoke the calendar feed phone").click()
        expect(page.locator("#feeds-status")).to_contain_text("Revoked phone")
        assert httpx.get(url, timeout=30).status_code == 401
        assert errors == []
        browser.close()


def test_a_device_turns_reminders_on_and_shows_a_pushed_reminder(site: str) -> None:
    """The page's "Turn on reminders on this device", in headless Chromium: asks the browser's permission and says
    how to allow it when refused; given, it subscribes with the server's key.  What `up` pushes for a reminder is
    then delivered to the page's service worker (through the browser's DevTools protocol, as headless Chromium has
    no push service offline) and shown as a notification with the reminder's words."""
    import json

    from secondbrain.ports import Reminder
    from services.agenda.push import reminder_push

    assert CHROMIUM.exists(), "the browser tests need Chromium: scripts/install.sh --dev installs it"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        # Refused: the page says how to allow it, and nothing is kept.
        refused = browser.new_context()
        page = refused.new_page()
        page.set_default_timeout(20_000)
        page.goto(site + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        on = page.get_by_role("button", name="Turn on reminders on this device")
        expect(on).to_be_visible()
        on.click()
        expect(page.locator("#push-status")).to_contain_text("Notifications are blocked for this page")
        assert httpx.get(f"{site}/v1/push/subscriptions", timeout=30).json()["subscriptions"] == []
        refused.close()

        allowed = browser.new_context()
        allowed.grant_permissions(["notifications"], origin=site)
        page = allowed.new_page()
        page.set_default_timeout(20_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        cdp = allowed.new_cdp_session(page)
        registrations: dict[str, str] = {}
        cdp.on("ServiceWorker.workerRegistrationUpdated",
               lambda e: registrations.update({r["scopeURL"]: r["registrationId"] for r in e["registrations"]}))
        activated: set[str] = set()  # registrations with an activated version, to which a push can go
        cdp.on("ServiceWorker.workerVersionUpdated",
               lambda e: activated.update(v["registrationId"] for v in e["versions"] if v["status"] == "activated"))
        cdp.send("ServiceWorker.enable")
        page.goto(site + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        page.get_by_role("button", name="Turn on reminders on this device").click()
        # Permission given, the page subscribes with the server's key; headless Chromium has no push service to
        # register with (it answers "Registration failed"), so the page says reminders cannot come here, and the
        # server keeps no half-made subscription.  (A subscription the page posts is tested in the agenda's API
        # tests; the push to it in tests/services/agenda/test_push.py.)
        expect(page.locator("#push-status")).to_contain_text("This browser could not reach its push service")
        expect(page.locator("#push-status")).to_contain_text("Registration failed")
        assert httpx.get(f"{site}/v1/push/subscriptions", timeout=30).json()["subscriptions"] == []
        # What `up` pushes for a reminder, delivered to the page's service worker.
        page.wait_for_function("navigator.serviceWorker.ready.then(() => true)")
        deadline = datetime.now(UTC) + timedelta(seconds=20)
        while registrations.get(f"{site}/") not in activated:
            assert datetime.now(UTC) < deadline, (registrations, activated)
            page.wait_for_timeout(100)
        starts = datetime.now(UTC) + timedelta(days=1)
        payload = reminder_push(Reminder("r1", "local", "line-1", "Dentist appointment", "appointment", starts,
                                         starts - timedelta(hours=1), "Europe/London", datetime.now(UTC)))
        push = {"origin": site, "registrationId": registrations[f"{site}/"], "data": json.dumps(payload)}
        # The worker shows it when it has handled the push: asked until it has (a promise is awaited each time).
        # The DevTools delivery is fire-and-forget (a worker still starting drops it, seen on a busy machine), so
        # it is sent again every 5 s; the reminder's tag makes a second copy replace the first, as on a phone.
        shown = None
        deadline = datetime.now(UTC) + timedelta(seconds=20)
        sent = datetime.min.replace(tzinfo=UTC)
        while shown is None:
            assert datetime.now(UTC) < deadline, "the pushed reminder was never shown"
            if datetime.now(UTC) - sent > timedelta(seconds=5):
                cdp.send("ServiceWorker.deliverPushMessage", push)
                sent = datetime.now(UTC)
            shown = page.evaluate("navigator.serviceWorker.ready.then((r) => r.getNotifications())"
                                  ".then((ns) => ns.length ? ns.map((n) => [n.title, n.body, n.tag]) : null)")
            if shown is None:
                page.wait_for_timeout(100)
        assert shown == [[payload["title"], payload["body"], payload["tag"]]]
        assert errors == []
        browser.close()
