"""What people actually write, read through the real stages (extract, chunk, embed) and stores, over HTTP: each
family the agenda used to miss is on ``GET /v1/agenda`` once, at its time (a plan agreed in a chat and not the
one left unanswered, a reminder in a voice memo, a move that keeps the time, numeric dates without a
preposition, "in two weeks", an end given with "until", "every other Friday" and "the first Monday of each
month", a dated arrangement without a keyword, a mail's calendar invitation); the calendar feed names each
event, gives it its length and links to the source on the address the person set; and questions about what is
coming ("What do I have next week?", "Anything on tomorrow?", "When is my next dentist appointment?") are
answered with the very lines the agenda gives for that time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
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
from services.importers import mail
from services.importers.model import Capture
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread
from tests.sse import sse_events

TZ = ZoneInfo("Europe/London")
NOW = "2026-11-26T12:00:00+00:00"  # a Thursday
PUBLIC = "https://brain.example.org"


def at(day: str, clock: str = "18:00") -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=TZ)


def invitation() -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"] = "Priya Shah <priya@acme.example>", "Anna Hart <anna@hart.example>"
    msg["Subject"], msg["Date"] = "Quarterly planning", "Wed, 25 Nov 2026 14:30:00 +0000"
    msg["Message-ID"] = "<planning-1@acme.example>"
    msg.set_content("Hi all, let's use this slot for quarterly planning.")
    ics = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Acme//EN\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\n"
           "UID:planning-q1@acme.example\r\nDTSTAMP:20261125T143000Z\r\nDTSTART:20261215T140000Z\r\n"
           "DTEND:20261215T153000Z\r\nSUMMARY:Quarterly planning\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    msg.add_attachment(ics.encode(), maintype="text", subtype="calendar", filename="invite.ics")
    return msg.as_bytes()


# (key, file name, content type, text, written at)
NOTES = [
    ("coffee", "dana.chat", "text/x-chat", "Dana: Coffee on Tuesday?\nMe: Tuesday's good. 10:30 at Monmouth?\n"
     "Dana: Great, see you then.\n", at("2026-11-26", "09:00")),
    ("lunch", "kate.chat", "text/x-chat", "Kate: Are you free for lunch on Wednesday?\nMe: Did you see the match?\n",
     at("2026-11-26", "09:30")),
    ("memo", "memo.md", "text/markdown", "Voice memo. Note to self: the gas safety check is booked for next "
     "Wednesday afternoon.", at("2026-11-26", "08:00")),
    ("physio", "physio.md", "text/markdown", "Physio with Anna on Friday 27 November at 16:00.", at("2026-11-20")),
    ("physio-moved", "physio-moved.md", "text/markdown", "Anna moved my physio to Tuesday 1 December, same time.",
     at("2026-11-25")),
    ("flight", "flight.md", "text/markdown", "Flight out 14/01 07:25 from Gatwick.", at("2026-11-26", "07:00")),
    ("two-weeks", "gp.md", "text/markdown", "GP review in two weeks at 3pm.", at("2026-11-26", "07:10")),
    ("exam", "exam.md", "text/markdown", "Exam on Thursday 10 December, 09:00 until 11:20, sports hall.",
     at("2026-11-26", "07:20")),
    ("football", "football.md", "text/markdown", "Five-a-side every other Friday at 6pm, starting this Friday.",
     at("2026-11-26", "07:30")),
    ("book-club", "book.md", "text/markdown", "Book club is the first Monday of each month at 7.30pm at Nina's.",
     at("2026-11-26", "07:40")),
    ("kwik-fit", "car.md", "text/markdown", "Car service at Kwik Fit on 9 December at 8:00, they quoted \u00a3240",
     at("2026-11-26", "07:50")),
    ("dentist", "dentist.md", "text/markdown", "Dentist appointment with Dr. Osei on Wednesday 9 December at 14:20.",
     at("2026-11-26", "08:10")),
    ("deadline", "tax.md", "text/markdown", "Tax return deadline: 31 January.", at("2026-11-26", "08:20")),
]
# The calendar feed reads the agenda around the real day it is asked on: its notes are written around today.
TODAY = datetime.now(TZ).date()
FEED_DAY = TODAY + timedelta(days=40)
FEED_NOTES = [
    ("feed-dentist", "feed-dentist.md", "text/markdown",
     f"Dentist appointment with Dr. Osei on {FEED_DAY:%A} {FEED_DAY.day} {FEED_DAY:%B %Y} at 14:20.",
     datetime.combine(TODAY, datetime.min.time()).replace(tzinfo=TZ)),
    ("feed-exam", "feed-exam.md", "text/markdown",
     f"Mock exam on {FEED_DAY:%A} {FEED_DAY.day} {FEED_DAY:%B %Y}, 09:00 until 11:20, sports hall.",
     datetime.combine(TODAY, datetime.min.time()).replace(tzinfo=TZ)),
    ("feed-deadline", "feed-tax.md", "text/markdown",
     f"Grant report deadline: {FEED_DAY.day} {FEED_DAY:%B %Y}.",
     datetime.combine(TODAY, datetime.min.time()).replace(tzinfo=TZ)),
]


def _submit(rt: Runtime, stages: tuple[Any, Any, Any], *, user: str, source_uri: str, content: bytes,
            content_type: str, when: datetime, title: str, filename: str | None, capture: str = "",
            attributes: dict[str, str] | None = None) -> None:
    extract, chunk, embed = stages
    ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=source_uri, content_type=content_type,
                           size_bytes=len(content), submitted_at=datetime.now(UTC), producer="test", content=content,
                           title=title, captured_at=when.astimezone(UTC), filename=filename,
                           attributes=attributes or {}, capture=capture)  # type: ignore[arg-type]
    (doc,) = core.run(extract, ev, rt.metadata.jobs, trusted=True)
    (chunks,) = core.run(chunk, doc, rt.metadata.jobs)
    core.run(embed, chunks, rt.metadata.jobs)


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("agenda-reads"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/London", locale="en_GB", kafka_bootstrap="127.0.0.1:9",
                            default_user="alice", auth="required", public_url=PUBLIC)
        runtime = build_runtime(settings, vectors=True, models=True)
        m = runtime.metadata
        extract = ExtractorStage(runtime.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                 fence=m.fence, catalog=m.catalog, lifecycle=m.lifecycle,
                                 extractors=ExtractorSet({"text": TextExtractor()}), max_bytes=1 << 20)
        chunk = ChunkerStage(runtime.objects, ChunkingConfig(), fence=m.fence, zone=TZ)
        assert runtime.vectors and runtime.embedder and runtime.sparse
        embed = EmbedderStage(runtime.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                              vectors=runtime.vectors, embedder=runtime.embedder, sparse=runtime.sparse)
        stages = (extract, chunk, embed)
        m.users.ensure_user("alice")
        for key, name, content_type, text, when in NOTES + FEED_NOTES:
            _submit(runtime, stages, user="alice", source_uri=f"file:{key}", content=text.encode(),
                    content_type=content_type, when=when, title=key, filename=name)
        # A mail with a calendar invitation, filed as the mail import files it.
        for capture in mail.parse(invitation(), origin="maildir:inbox").results:
            assert isinstance(capture, Capture) and isinstance(capture.content, bytes)
            assert capture.captured_at is not None
            _submit(runtime, stages, user="alice", source_uri=capture.source_uri, content=capture.content,
                    content_type=capture.content_type or "text/markdown", when=capture.captured_at,
                    title=capture.title or "", filename=capture.filename, capture=capture.kind,
                    attributes=dict(capture.attributes))
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def alice(rt: Runtime) -> Iterator[httpx.Client]:
    key = rt.metadata.api_keys.create_api_key("alice", "test")[1]
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port), \
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        yield client


def lines(client: httpx.Client, start: str, end: str) -> list[dict[str, Any]]:
    r = client.get("/v1/agenda", params={"tz": "Europe/London", "now": NOW, "from": start, "to": end})
    assert r.status_code == 200, r.text
    return [e for d in r.json()["days"] for e in d["events"]]


@pytest.fixture(scope="module")
def coming(alice: httpx.Client) -> list[dict[str, Any]]:
    return lines(alice, "2026-11-26T00:00:00+00:00", "2027-02-15T00:00:00+00:00")


def found(coming: list[dict[str, Any]], words: str) -> list[dict[str, Any]]:
    return [e for e in coming if words.lower() in e["quote"].lower()]


@pytest.mark.parametrize(("words", "start", "end"), [
    ("Monmouth", "2026-12-01T10:30:00+00:00", None),  # agreed in the chat: Tuesday from Dana, 10:30 from the reply
    ("gas safety check", None, None),  # next Wednesday afternoon: checked below
    ("physio", "2026-12-01T16:00:00+00:00", None),  # moved, same time
    ("14/01 07:25", "2027-01-14T07:25:00+00:00", None),
    ("in two weeks", "2026-12-10T15:00:00+00:00", None),
    ("Exam on Thursday 10 December, 09:00 until 11:20", "2026-12-10T09:00:00+00:00", "2026-12-10T11:20:00+00:00"),
    ("Kwik Fit", "2026-12-09T08:00:00+00:00", None),
    ("Dr. Osei on Wednesday 9 December", "2026-12-09T14:20:00+00:00", None),
    ("Quarterly planning", "2026-12-15T14:00:00+00:00", "2026-12-15T15:30:00+00:00"),  # the invitation
])
def test_each_family_is_on_the_agenda_once_at_its_time(coming: list[dict[str, Any]], words: str,
                                                      start: str | None, end: str | None) -> None:
    (line,) = found(coming, words)
    if start is not None:
        assert datetime.fromisoformat(line["start"]) == datetime.fromisoformat(start), line
    if end is not None:
        assert datetime.fromisoformat(line["end"]) == datetime.fromisoformat(end) and line["length"] == "stated"


def test_a_reminder_in_a_voice_memo_is_next_wednesday_afternoon(coming: list[dict[str, Any]]) -> None:
    (line,) = found(coming, "gas safety check")
    assert line["date"] == "2026-12-02" and line["kind"] == "appointment"


def test_a_move_keeps_the_time_it_does_not_change(coming: list[dict[str, Any]]) -> None:
    (line,) = found(coming, "physio")
    assert line["time"] == "16:00" and line["moved_from"]["when"].startswith("Fri 27 November 2026")


def test_a_proposal_counts_once_agreed_and_not_before(coming: list[dict[str, Any]]) -> None:
    (coffee,) = [e for e in coming if "Coffee" in e["quote"]]
    assert "see you then" in coffee["quote"]
    assert not [e for e in coming if "lunch" in e["quote"].lower()]  # asked, never agreed


def test_arrangements_on_a_rhythm_come_back(coming: list[dict[str, Any]]) -> None:
    football = [e["date"] for e in found(coming, "Five-a-side")]
    assert football[:4] == ["2026-11-27", "2026-12-11", "2026-12-25", "2027-01-08"]
    assert {e["recurs"] for e in found(coming, "Five-a-side")} == {"every other Friday"}
    assert [e["date"] for e in found(coming, "Book club")][:3] == ["2026-12-07", "2027-01-04", "2027-02-01"]
    assert {e["time"] for e in found(coming, "Book club")} == {"19:30"}


def test_the_feed_names_each_event_gives_it_its_length_and_links_to_the_public_address(
        alice: httpx.Client) -> None:
    feed = alice.post("/v1/feeds", json={"name": "phone", "tz": "Europe/London"}).json()
    r = httpx.get(str(alice.base_url).rstrip("/") + feed["path"], timeout=60)
    assert r.status_code == 200, r.text
    events = [e for e in Calendar.from_ical(r.content).walk("VEVENT")
              if str(FEED_DAY.year) in str(e.get("description")) or "deadline" in str(e.get("categories"))]
    by_name = {str(e.get("summary")): e for e in events}
    dentist = by_name["Dentist, Dr. Osei"]
    assert "Dentist appointment with Dr. Osei on" in str(dentist.get("description"))
    assert dentist.decoded("dtstart").astimezone(TZ).date() == FEED_DAY
    assert dentist.decoded("dtend") - dentist.decoded("dtstart") == timedelta(hours=1)  # an appointment: an hour
    exam = by_name["Mock exam"]
    assert exam.decoded("dtend") - exam.decoded("dtstart") == timedelta(hours=2, minutes=20)  # "until 11:20"
    report = by_name["Grant report deadline"]  # what is due on a day: all that day
    assert report.decoded("dtstart") == FEED_DAY and report.decoded("dtend") == FEED_DAY + timedelta(days=1)
    assert str(dentist.get("url")).startswith(PUBLIC + "/v1/artifacts/")
    assert "127.0.0.1" not in r.text and all(len(str(e.get("summary"))) <= 80 for e in events)


def ask(client: httpx.Client, question: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    events = sse_events(client, "POST", "/v1/ask", json={"question": question, "tz": "Europe/London", "now": NOW,
                                                         "keep": False})
    named = dict(events)
    return named["meta"], named["sources"], named["done"]


@pytest.mark.parametrize("question", ["What do I have next week?", "Anything on tomorrow?",
                                      "What do I have coming up next week?"])
def test_the_chat_answers_with_the_agendas_lines(alice: httpx.Client, question: str) -> None:
    meta, sources, done = ask(alice, question)
    assert meta["answer_mode"] == "agenda" and done["answer_mode"] == "agenda"
    window = meta["agenda"]
    panel = lines(alice, window["from"], window["to"])
    assert panel, "the window has lines"
    # the same lines, in the same order, each cited: what the Upcoming panel shows for that time
    assert [i for s in sources for i in s["agenda"]] == [e["id"] for e in panel]
    answer = done["answer"]
    for e in panel:
        assert e["title"] in answer and e["when"] in answer and e["quote"] in answer
    assert done["citations"] == list(range(1, len(sources) + 1))


def test_next_week_holds_the_moved_physio_with_its_move(alice: httpx.Client) -> None:
    _meta, _sources, done = ask(alice, "What do I have next week?")
    assert "Physio" in done["answer"] and "moved from Fri 27 November 2026" in done["answer"]
    assert "Coffee" in done["answer"] or "Monmouth" in done["answer"]


def test_when_is_my_next_dentist_appointment(alice: httpx.Client) -> None:
    meta, sources, done = ask(alice, "When is my next dentist appointment?")
    assert meta["answer_mode"] == "agenda"
    assert done["answer"].startswith("Your next dentist: Wed 9 December 2026, 14:20: Dentist, Dr. Osei")
    assert len(sources) == 1 and done["citations"] == [1]
