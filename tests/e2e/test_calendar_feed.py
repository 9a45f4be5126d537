"""A calendar subscribed to by its secret address, served over HTTP on loopback, kept in step with a running
``secondbrain up`` by the real CLI: each event searchable at its own time, a weekly class one source whose
occurrences the agenda shows; after the calendar changed (one event moved, one cancelled, one deleted, one
occurrence taken out) the moved one is found at its new time only, the others are gone and the class is missing
that week, nothing twice; an unchanged feed sends nothing; a broken feed is reported and changes nothing;
``up`` refreshes SB_CALENDAR_URLS itself, and never prints the secret address."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.e2e.feedserver import Event, Feed, ics, serving
from tests.e2e.harness import Service, run_cli, running_up

pytestmark = pytest.mark.e2e

# Around today, so the weekly class stays inside the window whenever the tests run.  In London's wall time, as
# the calendar (X-WR-TIMEZONE) repeats it: adding weeks to an aware time keeps its wall time across a DST change.
LONDON = ZoneInfo("Europe/London")
BASE = (datetime.now(LONDON) - timedelta(weeks=6)).replace(hour=17, minute=0, second=0, microsecond=0)
DENTIST_AT = BASE + timedelta(days=2, hours=-8)
DENTIST_MOVED = BASE + timedelta(days=9, hours=-6)
DENTIST = Event("dentist-41@example.org", "Dentist check-up with Dr. Hale", DENTIST_AT,
                "Six-monthly check-up and scale at Harbour Dental, Quay Street.")
BOOK_CLUB = Event("bookclub-7@example.org", "Book club: The Overstory", BASE + timedelta(days=4),
                  "Discussing The Overstory at Mira's flat; bring the sourdough.")
PIANO = Event("piano-3@example.org", "Piano tuning", BASE + timedelta(days=5, hours=-7),
              "The tuner comes to tune the upright Bechstein piano in the living room.")
POTTERY = Event("pottery-12@example.org", "Pottery class", BASE + timedelta(days=1), "Wheel throwing at the "
                "Clay Barn studio with Oskar: glazing the stoneware bowls.", weekly=4)
SKIPPED_CLASS = BASE + timedelta(days=1, weeks=2)
GARDEN = Event("garden-1@example.org", "Allotment working party", BASE + timedelta(days=3, hours=-7),
               "Working party at the Hillside allotments: mending the polytunnel and the compost bays.")


@pytest.fixture(scope="module")
def feed() -> Iterator[Feed]:
    with serving(Feed()) as f:
        f.serve(ics([DENTIST, BOOK_CLUB, PIANO, POTTERY]))
        yield f


@pytest.fixture(scope="module")
def background_feed() -> Iterator[Feed]:
    with serving(Feed("/published/2/MTk2-secret-garden")) as f:
        f.serve(ics([GARDEN], name="Allotment"))
        yield f


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, background_feed: Feed) -> Iterator[Service]:
    env = {"SB_TIMEZONE": "Europe/London", "SB_CALENDAR_URLS": background_feed.url, "SB_CALENDAR_INTERVAL_S": "5"}
    with running_up(tmp_path_factory, "sb-cal-", env, "--no-llm") as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("calstate") / "calendars.json"


def refresh(service: Service, feed: Feed, state: Path) -> tuple[int, dict[str, Any], str]:
    done = run_cli(["calendar", feed.url, "--state", str(state), "--json"], {"SB_URL": service.url}, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, dict(json.loads(done.stdout)), done.stdout + done.stderr


@pytest.fixture(scope="module")
def first_run(service: Service, feed: Feed, state: Path) -> dict[str, Any]:
    rc, out, _ = refresh(service, feed, state)
    assert rc == 0, out
    return out


def hits(client: httpx.Client, query: str, title: str) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": query, "k": 20})
    assert r.status_code == 200, r.text
    return [h for h in r.json()["hits"] if h["title"] == title]


def times(client: httpx.Client, query: str, title: str) -> list[datetime]:
    return sorted(datetime.fromisoformat(h["captured_at"].replace("Z", "+00:00")) for h in hits(client, query, title))


def occurrences(client: httpx.Client, title: str) -> list[datetime]:
    """When the agenda has a recurring event, around the feed's weeks."""
    r = client.get("/v1/agenda", params={"from": (BASE - timedelta(days=2)).isoformat(),
                                         "to": (BASE + timedelta(weeks=6)).isoformat(), "tz": "Europe/London"})
    assert r.status_code == 200, r.text
    return [datetime.fromisoformat(e["start"]) for d in r.json()["days"] for e in d["events"] if e["quote"] == title]


def sources(client: httpx.Client) -> int:
    return len(client.get("/v1/sources", params={"limit": 500}).json()["sources"])


def test_each_event_is_searchable_at_its_own_time(client: httpx.Client, first_run: dict[str, Any]) -> None:
    (row,) = first_run["feeds"]
    assert (row["events"], row["added"], row["removed"], first_run["pending"]) == (4, 4, 0, 0), first_run
    assert times(client, "dentist check-up at Harbour Dental", DENTIST.summary) == [DENTIST_AT]
    assert times(client, "book club discussing The Overstory", BOOK_CLUB.summary) == [BOOK_CLUB.start]
    assert times(client, "tuning the Bechstein piano", PIANO.summary) == [PIANO.start]
    assert times(client, "pottery wheel throwing at the Clay Barn", POTTERY.summary) == [POTTERY.start]  # one
    assert occurrences(client, POTTERY.summary) == [POTTERY.start + timedelta(weeks=n) for n in range(4)]


def test_an_unchanged_feed_sends_nothing(service: Service, client: httpx.Client, feed: Feed, state: Path,
                                         first_run: dict[str, Any]) -> None:
    before, asked = sources(client), feed.not_modified
    rc, out, _ = refresh(service, feed, state)
    assert rc == 0 and out["feeds"][0]["unchanged"] and feed.not_modified == asked + 1, out
    assert sources(client) == before


def test_a_broken_feed_is_reported_and_changes_nothing(service: Service, client: httpx.Client, feed: Feed,
                                                      state: Path, first_run: dict[str, Any]) -> None:
    before, body = sources(client), feed.body
    feed.status = 404
    rc, out, printed = refresh(service, feed, state)
    assert rc == 1 and "answered HTTP 404" in out["feeds"][0]["error"], out
    feed.serve(b"<!doctype html><p>Sign in to see this calendar</p>")
    rc, out, printed2 = refresh(service, feed, state)
    assert rc == 1 and "did not send a calendar" in out["feeds"][0]["error"], out
    assert "secret-8c1f" not in printed + printed2  # the address's secret part is never printed
    assert sources(client) == before
    assert times(client, "tuning the Bechstein piano", PIANO.summary) == [PIANO.start]
    feed.serve(body)


def test_a_changed_calendar_is_followed(service: Service, client: httpx.Client, feed: Feed, state: Path,
                                        first_run: dict[str, Any]) -> None:
    moved = Event(DENTIST.uid, DENTIST.summary, DENTIST_MOVED, DENTIST.description)
    cancelled = Event(BOOK_CLUB.uid, BOOK_CLUB.summary, BOOK_CLUB.start, BOOK_CLUB.description, status="CANCELLED")
    taken_out = Event(POTTERY.uid, POTTERY.summary, POTTERY.start, POTTERY.description, weekly=4,
                      exdates=(SKIPPED_CLASS,))
    feed.serve(ics([moved, cancelled, taken_out]))  # the piano tuning deleted
    rc, out, _ = refresh(service, feed, state)
    (row,) = out["feeds"]
    assert (rc, row["events"], row["added"], row["removed"]) == (0, 2, 2, 2), out
    deadline = time.monotonic() + 30  # a deleted source leaves the index at once, or nearly
    while time.monotonic() < deadline and (hits(client, "book club discussing The Overstory", BOOK_CLUB.summary)
                                           or hits(client, "tuning the Bechstein piano", PIANO.summary)):
        time.sleep(1)
    assert times(client, "dentist check-up at Harbour Dental", DENTIST.summary) == [DENTIST_MOVED]
    assert not hits(client, "book club discussing The Overstory", BOOK_CLUB.summary)
    assert not hits(client, "tuning the Bechstein piano", PIANO.summary)
    deadline = time.monotonic() + 60  # the series' next version (the class taken out) is searchable soon
    while time.monotonic() < deadline and SKIPPED_CLASS in occurrences(client, POTTERY.summary):
        time.sleep(1)
    assert occurrences(client, POTTERY.summary) == [
        t for t in (POTTERY.start + timedelta(weeks=n) for n in range(4)) if t != SKIPPED_CLASS]
    rc, again, _ = refresh(service, feed, state)  # and the next refresh is a 304
    assert again["feeds"][0]["unchanged"], again


def test_an_event_cancelled_then_restored_comes_back(service: Service, client: httpx.Client, feed: Feed,
                                                    state: Path, first_run: dict[str, Any]) -> None:
    moved = Event(DENTIST.uid, DENTIST.summary, DENTIST_MOVED, DENTIST.description)
    feed.serve(ics([moved, BOOK_CLUB, POTTERY]))  # the book club on again, the class back, as they were first
    rc, out, _ = refresh(service, feed, state)
    (row,) = out["feeds"]
    assert (rc, row["added"], row["removed"]) == (0, 2, 0), out
    assert times(client, "book club discussing The Overstory", BOOK_CLUB.summary) == [BOOK_CLUB.start]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and SKIPPED_CLASS not in occurrences(client, POTTERY.summary):
        time.sleep(1)
    assert occurrences(client, POTTERY.summary) == [POTTERY.start + timedelta(weeks=n) for n in range(4)]
    assert times(client, "dentist check-up at Harbour Dental", DENTIST.summary) == [DENTIST_MOVED]


def test_a_calendar_at_a_link_local_address_or_redirected_there_is_refused(service: Service, client: httpx.Client,
                                                                         state: Path) -> None:
    before = sources(client)
    done = run_cli(["calendar", "http://169.254.169.254/latest/meta-data/cal.ics", "--state", str(state), "--json"],
                   {"SB_URL": service.url}, timeout=120)
    assert done.returncode == 2 and "link-local" in done.stderr and "meta-data" not in done.stderr, done.stderr
    with serving(Feed("/calendar/ical/secret-hop/basic.ics")) as hop:
        hop.redirect = "http://0.0.0.0:9/cal.ics"  # its every answer sends the request on to 0.0.0.0
        rc, out, printed = refresh(service, hop, state)
    assert rc == 1 and "0.0.0.0" in out["feeds"][0]["error"] and "unspecified" in out["feeds"][0]["error"], out
    assert "secret-hop" not in printed
    assert sources(client) == before


def test_up_refreshes_its_calendars_in_the_background(service: Service, client: httpx.Client,
                                                       background_feed: Feed) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not hits(client, "mending the polytunnel", GARDEN.summary):
        time.sleep(1)
    assert times(client, "mending the polytunnel at the allotments", GARDEN.summary) == [GARDEN.start]
    log = service.log_path.read_text(errors="replace")
    assert "refreshing 1 calendar (http://127.0.0.1/…)" in log
    assert "secret-garden" not in log
