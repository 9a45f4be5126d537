"""Recurring events through a running ``secondbrain up``: the 200-byte calendar with an endless hourly rule (the
one that made 20,000 jobs) imports as one event in under a second and the agenda shows its hours; a weekly series
with a moved and two cancelled occurrences is one source whose moved occurrence the agenda shows moved; a yearly
birthday comes back On this day; a search in a window finds a series when one of its occurrences falls there,
and says which."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from devtools import gen_exports as gen
from tests.e2e.harness import Service, running_up, wait_jobs

pytestmark = pytest.mark.e2e

LONDON = ZoneInfo("Europe/London")
NOW = datetime.now(UTC)  # the calendars are written around today: the agenda looks at today
ENDLESS = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:endless-hourly@example.org\r\n"
           b"DTSTART:20240101T000000Z\r\nDTEND:20240101T001500Z\r\nSUMMARY:Hourly pump check\r\n"
           b"RRULE:FREQ=HOURLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_up(tmp_path_factory, "sb-rec-", {"SB_TIMEZONE": "Europe/London"}, "--no-llm") as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=120) as c:
        yield c


def upload(client: httpx.Client, name: str, data: bytes) -> tuple[dict[str, Any], float]:
    began = time.perf_counter()
    r = client.post("/v1/imports", files={"file": (name, data, "text/calendar")}, data={"tz": "Europe/London"})
    took = time.perf_counter() - began
    assert r.status_code == 202, r.text
    body = r.json()
    wait_jobs(client, [j["job_id"] for j in body["jobs"]], timeout=180)
    return body, took


@pytest.fixture(scope="module")
def endless(client: httpx.Client) -> tuple[dict[str, Any], float]:
    return upload(client, "pump.ics", ENDLESS)


@pytest.fixture(scope="module")
def google(client: httpx.Client) -> dict[str, Any]:
    body, _ = upload(client, "sam.ics", gen.calendar_ics(gen.calendar_anchor(NOW)).encode())
    return body


def agenda(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/agenda", params={"tz": "Europe/London", **params})
    assert r.status_code == 200, r.text
    return [e for d in r.json()["days"] for e in d["events"]]


def test_the_endless_hourly_rule_imports_as_one_event_in_under_a_second(client: httpx.Client,
                                                                       endless: tuple[dict[str, Any], float]) -> None:
    body, took = endless
    assert (body["imported"], body["items"], len(body["jobs"])) == (1, 1, 1), body
    assert took < 1.0, f"the import took {took:.2f} s"
    sources = [s for s in client.get("/v1/sources", params={"limit": 500}).json()["sources"]
               if s["title"] == "Hourly pump check"]
    assert len(sources) == 1 and sources[0]["status"] == "succeeded"


def test_the_agenda_shows_its_hours_in_the_window_and_no_more_than_its_cap(client: httpx.Client,
                                                                        endless: tuple[dict[str, Any], float]) -> None:
    today = datetime.now(LONDON).date()
    day = [e for e in agenda(client, **{"from": f"{today}T00:00:00", "to": f"{today + timedelta(days=1)}T00:00:00"})
           if e["quote"] == "Hourly pump check"]
    assert len(day) in (23, 24, 25)  # a day of hours (23 or 25 on the days the clocks change)
    assert {e["recurs"] for e in day} == {"series"} and "every hour" in day[0]["repeats"]
    assert len({e["id"] for e in day}) == len(day)  # each occurrence its own line (and feed UID)
    month = [e for e in agenda(client, days=30) if e["quote"] == "Hourly pump check"]  # 720 hours
    assert len(month) == 500 and month[-1]["more_occurrences"] is True


def test_a_weekly_series_is_one_source_and_its_moved_occurrence_is_shown_moved(client: httpx.Client,
                                                                             google: dict[str, Any]) -> None:
    t = gen.calendar_times(gen.calendar_anchor(NOW))
    assert google["imported"] == 6 and not google["skipped"][1:], google  # the cancelled dinner is the skip
    physio = [e for e in agenda(client, **{"from": (t["physio"] - timedelta(days=1)).isoformat(),
                                           "to": (t["physio"] + timedelta(weeks=9)).isoformat()})
              if e["quote"] == "Physio with Marta"]
    assert [datetime.fromisoformat(e["start"]) for e in physio] == [
        t["physio"], t["physio"] + timedelta(weeks=1), t["physio_moved"], t["physio"] + timedelta(weeks=3),
        t["physio"] + timedelta(weeks=6), t["physio"] + timedelta(weeks=7)]
    moved = physio[2]
    assert "moved_from" in moved and "18:00" in moved["moved_from"]["when"]
    assert len({e["id"] for e in physio}) == 6


def test_a_yearly_birthday_comes_back_on_this_day(client: httpx.Client, google: dict[str, Any]) -> None:
    r = client.get("/v1/agenda/on-this-day", params={"date": f"{NOW.year}-04-17", "years": 3,
                                                     "tz": "Europe/London"})
    assert r.status_code == 200, r.text
    years = {y["year"]: [e["quote"] for e in y["happened"]] for y in r.json()["years"]}
    assert all("Mum's birthday" in years.get(NOW.year - n, []) for n in (1, 2, 3)), years


def test_a_search_in_a_window_finds_a_series_when_it_occurs_there(client: httpx.Client,
                                                                  google: dict[str, Any]) -> None:
    t = gen.calendar_times(gen.calendar_anchor(NOW))
    moved_day: date = t["physio_moved"].date()

    def hits(lo: datetime, hi: datetime) -> list[dict[str, Any]]:
        r = client.get("/v1/search", params={"q": "physio knee exercises", "from": lo.isoformat(),
                                             "to": hi.isoformat(), "k": 20})
        assert r.status_code == 200, r.text
        return [h for h in r.json()["hits"] if h["title"] == "Physio with Marta"]

    on_the_day = hits(datetime.combine(moved_day, datetime.min.time(), LONDON),
                      datetime.combine(moved_day + timedelta(days=1), datetime.min.time(), LONDON))
    assert on_the_day and on_the_day[0]["occurrence"] == t["physio_moved"].astimezone(UTC).isoformat()
    assert "every week on Tuesday" in on_the_day[0]["repeats"]
    # The Tuesday it moved away from, and a Tuesday it was cancelled: no occurrence, no hit.
    for day in (t["physio"] + timedelta(weeks=2), t["physio"] + timedelta(weeks=5)):
        start = datetime.combine(day.date(), datetime.min.time(), LONDON)
        assert hits(start, start + timedelta(days=1)) == [], day


def test_the_records_an_earlier_version_made_per_occurrence_give_way_to_the_series(client: httpx.Client) -> None:
    """What an earlier version left: one note per occurrence of a weekly choir practice (import:ics:<uid>/<when>).
    Importing the calendar again makes the series, deletes those, and the agenda has each occurrence once."""
    first = datetime.combine(datetime.now(LONDON).date() - timedelta(weeks=2), datetime.min.time(), LONDON) \
        + timedelta(hours=19)
    old = [first + timedelta(weeks=n) for n in range(3)]
    captures, parts = [], {}
    for n, at in enumerate(old):
        iso = at.astimezone(UTC).isoformat()
        captures.append({"source_uri": f"import:ics:choir-7@example.org/{iso}", "kind": "note", "part": f"p{n}",
                         "title": "Choir practice", "captured_at": iso, "content_type": "text/markdown",
                         "attributes": {"kind": "note", "import.format": "ics", "import.occurrence": iso}})
        parts[f"p{n}"] = (f"{n}.md", f"# Choir practice\n\nWhen: {at:%A %d %B %Y, %H:%M}\nRepeats: this is one "
                                     "occurrence of a recurring event\n".encode(), "text/markdown")
    r = client.post("/v1/imports/batch", files=[("manifest", (None, json.dumps({"format": "ics", "captures": captures}),
                                                             "application/json")), *parts.items()])
    assert r.status_code == 200, r.text
    wait_jobs(client, [x["job_id"] for x in r.json()["results"]], timeout=180)
    ics = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nX-WR-TIMEZONE:Europe/London\r\nBEGIN:VEVENT\r\n"
           "UID:choir-7@example.org\r\n"
           f"DTSTART;TZID=Europe/London:{first:%Y%m%dT%H%M%S}\r\nDURATION:PT90M\r\nSUMMARY:Choir practice\r\n"
           "RRULE:FREQ=WEEKLY;COUNT=5\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()
    body, _ = upload(client, "choir.ics", ics)
    assert (body["imported"], body["replaced_occurrences"]) == (1, 3), body
    left = [s for s in client.get("/v1/sources", params={"limit": 500}).json()["sources"]
            if s["source_uri"].startswith("import:ics:choir-7@example.org")]
    assert [s["source_uri"] for s in left] == ["import:ics:choir-7@example.org"]
    lines = [e for e in agenda(client, **{"from": (first - timedelta(days=1)).isoformat(),
                                          "to": (first + timedelta(weeks=6)).isoformat()})
             if "Choir practice" in e["quote"]]
    assert [datetime.fromisoformat(e["start"]) for e in lines] == [first + timedelta(weeks=n) for n in range(5)]


def test_a_question_about_a_day_alone_lists_the_series_occurring_then(client: httpx.Client,
                                                                      google: dict[str, Any]) -> None:
    t = gen.calendar_times(gen.calendar_anchor(NOW))
    day = (t["physio"] + timedelta(weeks=3)).astimezone(LONDON)
    r = client.get("/v1/search", params={"q": f"{day:%A} {day.day} {day:%B %Y}", "tz": "Europe/London"})
    assert r.status_code == 200, r.text
    assert r.json()["query_class"] == "temporal", r.json()
    listed = [h for h in r.json()["hits"] if h["title"] == "Physio with Marta"]
    assert listed and listed[0]["occurrence"] == day.astimezone(UTC).isoformat(), r.json()["hits"]
