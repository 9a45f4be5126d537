"""The agenda through the real stages (extract, chunk, embed) and stores (Postgres, the vector engine), over
HTTP: an appointment booked then moved is one line at its new time with "moved from"; notes written in
another zone land at the right local time; dates of birth and publication stay off; a past window tells
what happened; "on this day" shows last year's; the calendar feed carries the events at their instants and
a revoked feed gets 401; another user sees none of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from icalendar import Calendar
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import core
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread

TZ = ZoneInfo("Europe/London")
NOW = "2026-12-01T12:00:00+00:00"  # a Tuesday


def at(day: str, clock: str = "18:00", tz: ZoneInfo = TZ) -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=tz)


# (user, key, title, file name, text, written at)
RECORDS = [
    ("alice", "booked", "Dentist booked", "booked.md", "Dentist appointment on Tuesday 8 December at 10:00.",
     at("2026-11-20")),
    ("alice", "moved", "Dentist moved", "moved.md", "# Errands\n\nDentist moved to Thursday 10 December at 09:40.",
     at("2026-11-30")),
    # Written in New York on the evening of 20 November (already the 21st in London): "tomorrow" is the 21st.
    ("alice", "dana", "Lunch", "dana.md", "---\ndate: 2026-11-20T18:00:00-05:00\n---\nLunch with Dana tomorrow "
     "at 12:30.\n", None),
    ("alice", "tokyo", "Tokyo call", "tokyo.md", "Call with the Tokyo office on Thursday 3 December at 10:00 "
     "Tokyo time.", at("2026-11-25")),
    ("alice", "facts", "Family facts", "facts.md", "I was born on 4 December 1990. Published 5 December 2024. "
     "Every Monday I go swimming at 7am.", at("2026-11-26")),
    ("alice", "trip", "Trip notes", "trip.md", "Last Saturday we celebrated Dad's 70th at the Swan.",
     at("2026-11-23")),
    ("alice", "fair", "Bath", "fair.md", "We went to the Christmas fair in Bath today.", at("2025-12-01", "20:00")),
    ("bob", "bob", "Bob's dentist", "bob.md", "Bob's dentist appointment is on 9 December at 08:00.",
     at("2026-11-29")),
]


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("agenda"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/London", kafka_bootstrap="127.0.0.1:9", default_user="alice",
                            auth="required")
        runtime = build_runtime(settings, vectors=True, models=True)
        m = runtime.metadata
        extract = ExtractorStage(runtime.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                 fence=m.fence,
                                 catalog=m.catalog, lifecycle=m.lifecycle,
                                 extractors=ExtractorSet({"text": TextExtractor()}), max_bytes=1 << 20)
        chunk = ChunkerStage(runtime.objects, ChunkingConfig(), fence=m.fence, zone=TZ)
        assert runtime.vectors and runtime.embedder and runtime.sparse
        embed = EmbedderStage(runtime.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                              vectors=runtime.vectors, embedder=runtime.embedder, sparse=runtime.sparse)
        for user in ("alice", "bob"):
            m.users.ensure_user(user)
        for user, key, title, name, text, when in RECORDS:
            raw = text.encode()
            ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=f"file:{key}",
                                   content_type="text/markdown", size_bytes=len(raw), submitted_at=datetime.now(UTC),
                                   producer="test", content=raw, title=title,
                                   captured_at=when.astimezone(UTC) if when else None, filename=name)
            (doc,) = core.run(extract, ev, m.jobs, trusted=True)
            (chunks,) = core.run(chunk, doc, m.jobs)
            core.run(embed, chunks, m.jobs)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def api(rt: Runtime) -> Iterator[dict[str, httpx.Client]]:
    keys = {u: rt.metadata.api_keys.create_api_key(u, "test")[1] for u in ("alice", "bob")}
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
        clients = {u: httpx.Client(base_url=url, headers={"Authorization": f"Bearer {k}"}, timeout=60)
                   for u, k in keys.items()}
        clients["nobody"] = httpx.Client(base_url=url, timeout=60)
        yield clients
        for c in clients.values():
            c.close()


def lines(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for d in body["days"] for e in d["events"]]


def agenda(client: httpx.Client, **params: str) -> dict[str, Any]:
    r = client.get("/v1/agenda", params={"tz": "Europe/London", "now": NOW, **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_moved_appointment_is_one_line_at_its_new_time(api: dict[str, httpx.Client]) -> None:
    body = agenda(api["alice"], **{"from": "2026-12-01T00:00:00+00:00", "to": "2026-12-15T00:00:00+00:00"})
    dentist = [e for e in lines(body) if "Dentist" in e["quote"]]
    assert len(dentist) == 1, dentist
    (line,) = dentist
    assert line["start"] == "2026-12-10T09:40:00+00:00" and line["date"] == "2026-12-10"
    assert line["quote"] == "Dentist moved to Thursday 10 December at 09:40."  # plain, no Markdown
    assert line["source"]["title"] == "Dentist moved" and line["source"]["section"] == "Errands"
    assert line["moved_from"]["when"].startswith("Tue, December 8, 2026, 10:00")
    assert line["moved_from"]["source"]["title"] == "Dentist booked"
    assert not any(d["date"] == "2026-12-08" for d in body["days"])
    # The reader's date order is how dates are written (and is not read as anything else).
    dmy = agenda(api["alice"], date_order="dmy",
                 **{"from": "2026-12-01T00:00:00+00:00", "to": "2026-12-15T00:00:00+00:00"})
    (moved,) = [e for e in lines(dmy) if "Dentist" in e["quote"]]
    assert moved["moved_from"]["when"] == "Tue 8 December 2026, 10:00", moved["moved_from"]


def test_notes_written_in_another_zone_land_at_the_right_local_time(api: dict[str, httpx.Client]) -> None:
    body = agenda(api["alice"], **{"from": "2026-11-20T00:00:00+00:00", "to": "2026-12-05T00:00:00+00:00"})
    by_quote = {e["quote"]: e for e in lines(body)}
    lunch = by_quote["Lunch with Dana tomorrow at 12:30."]
    assert lunch["start"] == "2026-11-21T17:30:00+00:00"  # 12:30 in New York on the 21st
    tokyo = next(e for q, e in by_quote.items() if "Tokyo office" in q)
    assert tokyo["start"] == "2026-12-03T01:00:00+00:00" and tokyo["stated"] == "10:00 Tokyo time"
    # The same agenda read in Tokyo: the person's own zone moves every line with it.
    there = agenda(api["alice"], tz="Asia/Tokyo", **{"from": "2026-12-03T00:00:00+09:00",
                                                      "to": "2026-12-04T00:00:00+09:00"})
    assert [e["time"] for e in lines(there) if "Tokyo office" in e["quote"]] == ["10:00"]


def test_births_publications_and_habits_stay_off(api: dict[str, httpx.Client]) -> None:
    body = agenda(api["alice"], **{"from": "2026-11-30T00:00:00+00:00", "to": "2026-12-08T00:00:00+00:00"})
    assert not any(e["source"]["title"] == "Family facts" for e in lines(body))
    asked = agenda(api["alice"], habits="true", **{"from": "2026-11-30T00:00:00+00:00",
                                                    "to": "2026-12-08T00:00:00+00:00"})
    swims = [e for e in lines(asked) if "swimming" in e["quote"]]
    assert [e["date"] for e in swims] == ["2026-11-30", "2026-12-07"] and swims[0]["time"] == "07:00"


def test_a_past_window_tells_what_happened(api: dict[str, httpx.Client]) -> None:
    body = agenda(api["alice"], **{"from": "2026-11-16T00:00:00+00:00", "to": "2026-11-23T00:00:00+00:00"})
    assert body["view"] == "what happened"
    assert [(e["date"], e["source"]["title"]) for e in lines(body)] == [("2026-11-21", "Trip notes"),
                                                                        ("2026-11-21", "Lunch")]


def test_on_this_day_shows_last_years_entries(api: dict[str, httpx.Client]) -> None:
    r = api["alice"].get("/v1/agenda/on-this-day", params={"date": "2026-12-01", "tz": "Europe/London"})
    assert r.status_code == 200, r.text
    (year,) = r.json()["years"]
    assert year["year"] == 2025 and [s["title"] for s in year["saved"]] == ["Bath"]
    assert [e["quote"] for e in year["happened"]] == ["We went to the Christmas fair in Bath today."]


def test_the_digest_lists_the_week(api: dict[str, httpx.Client]) -> None:
    r = api["alice"].get("/v1/digest", params={"tz": "Europe/London", "now": NOW, "days": 7})
    assert r.status_code == 200, r.text
    body = r.json()
    assert any("Tokyo office" in e["quote"] for d in body["coming"]["days"] for e in d["events"])


def test_the_calendar_feed_carries_the_agenda_and_a_revoked_feed_is_refused(
        api: dict[str, httpx.Client]) -> None:
    alice, nobody = api["alice"], api["nobody"]
    made = alice.post("/v1/feeds", json={"name": "phone", "tz": "Europe/London"})
    assert made.status_code == 201, made.text
    feed = made.json()
    assert feed["token"] not in str(alice.get("/v1/feeds").json())  # listed without its token
    r = nobody.get(feed["path"])  # a calendar app sends no key: the address alone opens it
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/calendar"), r.text
    cal = Calendar.from_ical(r.content)
    events = {str(e.get("summary")): e for e in cal.walk("VEVENT")}
    # named as a calendar shows it, the sentence in the description, an hour long (an appointment)
    dentist = events["Dentist appointment"]  # as the booking named it; the move kept the name
    assert "Dentist moved to Thursday 10 December at 09:40." in str(dentist.get("description"))
    assert dentist.decoded("dtstart") == datetime(2026, 12, 10, 9, 40, tzinfo=UTC)
    assert dentist.decoded("dtend") - dentist.decoded("dtstart") == timedelta(hours=1)
    assert "moved from" in str(dentist.get("description"))
    # served on loopback only: no link a phone's calendar could not open, and it says how to get one
    assert dentist.get("url") is None and "127.0.0.1" not in r.text and "localhost" not in r.text
    assert "SB_PUBLIC_URL" in str(dentist.get("description"))
    assert not any("Bob" in s for s in events)
    # Bob can neither see nor revoke it; Alice revokes it and the address stops working.
    assert api["bob"].delete(f"/v1/feeds/{feed['feed_id']}").status_code == 404
    assert api["bob"].get("/v1/feeds").json() == {"feeds": []}
    assert alice.delete(f"/v1/feeds/{feed['feed_id']}").status_code == 204
    assert nobody.get(feed["path"]).status_code == 401
    assert nobody.get("/v1/agenda.ics").status_code == 401
    assert nobody.get("/v1/agenda.ics", params={"token": "sbf_nope_nope"}).status_code == 401


def test_another_user_sees_none_of_it(api: dict[str, httpx.Client]) -> None:
    bob = agenda(api["bob"], **{"from": "2026-11-01T00:00:00+00:00", "to": "2027-01-01T00:00:00+00:00"})
    assert [e["quote"] for e in lines(bob)] == ["Bob's dentist appointment is on 9 December at 08:00."]
    for path in ("/v1/agenda", "/v1/agenda/on-this-day", "/v1/digest", "/v1/feeds"):
        assert api["nobody"].get(path).status_code == 401


class Inbox:
    """What a real SMTP server on loopback (aiosmtpd) received."""

    def __init__(self) -> None:
        self.mail: list[tuple[list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.mail.append((list(envelope.rcpt_tos), bytes(envelope.content)))
        return "250 OK"


def test_a_reminder_of_an_agenda_line_is_mailed_once_when_due(api: dict[str, httpx.Client], rt: Runtime) -> None:
    from email import message_from_bytes

    from aiosmtpd.controller import Controller

    from secondbrain.infra.ports import free_port
    from services.agenda.reminders import send_due

    alice, bob = api["alice"], api["bob"]
    body = agenda(alice, **{"from": "2026-12-01T00:00:00+00:00", "to": "2026-12-15T00:00:00+00:00"})
    (dentist,) = [e for e in lines(body) if "Dentist" in e["quote"]]
    ask = {"event_id": dentist["id"], "tz": "Europe/London", "now": NOW}
    made = alice.post("/v1/reminders", json=ask)
    assert made.status_code == 201, made.text
    kept = made.json()
    # an appointment: an hour before, by default; nothing set up to send it yet, and it says so
    assert (kept["remind_at"], kept["minutes_before"], kept["kind"]) == ("2026-12-10T08:40:00+00:00", 60, "appointment")
    assert kept["sends"] is None
    moved = alice.post("/v1/reminders", json={**ask, "minutes_before": 24 * 60}).json()  # asked again: moved
    assert moved["reminder_id"] == kept["reminder_id"] and moved["remind_at"] == "2026-12-09T09:40:00+00:00"
    assert [r["reminder_id"] for r in alice.get("/v1/reminders").json()["reminders"]] == [kept["reminder_id"]]
    # Bob: not a line of his agenda, none of Alice's reminders, nothing of hers to remove; nobody: refused.
    assert bob.post("/v1/reminders", json=ask).status_code == 404
    assert bob.get("/v1/reminders").json()["reminders"] == []
    assert bob.delete(f"/v1/reminders/{kept['reminder_id']}").status_code == 404
    assert api["nobody"].post("/v1/reminders", json=ask).status_code == 401
    assert alice.post("/v1/reminders", json={**ask, "event_id": "no-such-line"}).status_code == 404

    inbox = Inbox()
    port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        settings = rt.settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": port,
                                                  "smtp_security": "none", "smtp_to": "alice@example.org"})
        store = rt.metadata.reminders
        due_at = datetime.fromisoformat(moved["remind_at"])
        assert send_due(store, settings, now=due_at - timedelta(minutes=1)) == 0  # not yet
        assert send_due(store, settings, now=due_at + timedelta(minutes=1)) == 1
        assert send_due(store, settings, now=due_at + timedelta(minutes=2)) == 0  # once
    finally:
        smtp.stop()
    ((to, raw),) = inbox.mail
    mail = message_from_bytes(raw)
    assert to == ["alice@example.org"]
    assert mail["Subject"] == f"Reminder: {dentist['title']}, Thu 10 Dec at 09:40"
    (listed,) = alice.get("/v1/reminders").json()["reminders"]
    assert listed["sent_at"] is not None
    assert alice.delete(f"/v1/reminders/{kept['reminder_id']}").status_code == 204
    assert alice.get("/v1/reminders").json()["reminders"] == []


def test_a_browser_turns_reminders_on_and_off(api: dict[str, httpx.Client], rt: Runtime) -> None:
    from services.agenda.push import public_key, vapid_key

    alice, bob = api["alice"], api["bob"]
    key = alice.get("/v1/push/key")
    assert key.status_code == 200, key.text
    # The key the browser subscribes with: the server's own, kept in its data dir.
    assert key.json() == {"public_key": public_key(vapid_key(rt.settings.data_dir)), "enabled": True}
    browser = {"endpoint": "https://push.example.invalid/send/alice-phone", "expirationTime": None,
               "keys": {"p256dh": "B" + "A" * 86, "auth": "c2VjcmV0LWF1dGgtMTIz"}}
    made = alice.post("/v1/push/subscriptions", json=browser)
    assert made.status_code == 201, made.text
    sub = made.json()
    assert sub["endpoint"] == browser["endpoint"]
    again = alice.post("/v1/push/subscriptions", json={**browser, "keys": {**browser["keys"], "auth": "bmV3LWF1dGg"}})
    assert again.json()["subscription_id"] == sub["subscription_id"]  # the same browser: one subscription
    assert [s["subscription_id"] for s in alice.get("/v1/push/subscriptions").json()["subscriptions"]] == [
        sub["subscription_id"]]
    # A push goes only to a push service over https, and only with the browser's keys.
    for wrong in ({**browser, "endpoint": "http://push.example.invalid/send/x"}, {**browser, "keys": {"p256dh": "x y"}},
                  {"endpoint": browser["endpoint"]}):
        assert alice.post("/v1/push/subscriptions", json=wrong).status_code == 422, wrong
    # Nor to an address inside this server's network (the fetcher's guard against request forgery).
    inside = alice.post("/v1/push/subscriptions", json={**browser, "endpoint": "https://127.0.0.1:5432/x"})
    assert inside.status_code == 422 and "loopback" in inside.text
    # Alice's reminders now go by push; Bob's do not (he has no browser), and hers are not his to see or remove.
    assert alice.get("/v1/reminders").json()["sends"] == "push"
    assert bob.get("/v1/reminders").json()["sends"] is None
    assert bob.get("/v1/push/subscriptions").json()["subscriptions"] == []
    assert bob.delete(f"/v1/push/subscriptions/{sub['subscription_id']}").status_code == 404
    assert api["nobody"].get("/v1/push/key").status_code == 401
    assert api["nobody"].post("/v1/push/subscriptions", json=browser).status_code == 401
    assert alice.delete(f"/v1/push/subscriptions/{sub['subscription_id']}").status_code == 204
    assert alice.get("/v1/push/subscriptions").json()["subscriptions"] == []
    assert alice.get("/v1/reminders").json()["sends"] is None


def test_the_weekly_digest_is_mailed_once_on_its_day(rt: Runtime, tmp_path: Path) -> None:
    from email import message_from_bytes

    from aiosmtpd.controller import Controller

    from secondbrain.infra.ports import free_port
    from services.agenda.digest import send_digest_if_due
    from services.agenda.service import Agenda
    from services.http_helpers import calendar_conventions

    inbox = Inbox()
    port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()
    agenda_ = Agenda(rt.vectors, rt.metadata)  # type: ignore[arg-type]
    monday = datetime(2026, 11, 30, 8, 5, tzinfo=TZ)  # Alice's digest day, five minutes after its time
    try:
        settings = rt.settings.model_copy(update={
            "smtp_host": "127.0.0.1", "smtp_port": port, "smtp_security": "none", "smtp_to": "alice@example.org",
            "digest_day": "monday", "digest_time": "08:00", "data_dir": tmp_path})
        cal = calendar_conventions(settings)
        assert not send_digest_if_due(agenda_, settings, monday - timedelta(minutes=10), cal)  # before its time
        assert not send_digest_if_due(agenda_, settings, monday - timedelta(days=1), cal)  # another day
        assert not send_digest_if_due(agenda_, settings.model_copy(update={"digest_day": ""}), monday, cal)  # off
        assert inbox.mail == []
        assert send_digest_if_due(agenda_, settings, monday, cal)
        assert not send_digest_if_due(agenda_, settings, monday + timedelta(hours=3), cal)  # once that day
        assert send_digest_if_due(agenda_, settings, monday + timedelta(days=7), cal)  # and again the next week
    finally:
        smtp.stop()
    assert len(inbox.mail) == 2
    to, raw = inbox.mail[0]
    mail = message_from_bytes(raw)
    body = mail.get_payload(decode=True).decode()
    assert to == ["alice@example.org"] and mail["Subject"].startswith("Your week, 30 Nov: ")
    # Alice's coming week (the Tokyo call on Thursday), never Bob's dentist.
    assert "Coming up:" in body and "Tokyo" in body and "Bob" not in body, body
    assert "Saved this week:" in body
