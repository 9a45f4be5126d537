"""Reading what people write (pure, no stores): each example the agenda used to miss, once, at its time; proposals
that count only once agreed; a move that keeps what it does not change; rhythms; names as a calendar shows them."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from secondbrain.search_hits import SearchHit
from secondbrain.temporal.calendar import Conventions
from services.agenda.agenda import Said, in_window, merge
from services.agenda.happenings import Happening, read_passage
from services.agenda.names import name
from services.agenda.rhythm import rhythm_from, said_rhythm

pytestmark = pytest.mark.fast

TZ = ZoneInfo("Europe/London")
THURSDAY = datetime(2026, 11, 26, 9, 0, tzinfo=TZ)
GB = Conventions.for_locale("en_GB")


def read(text: str, said: datetime = THURSDAY, speakers: tuple[str, ...] = ()) -> list[Happening]:
    """The items a passage puts on the agenda by itself (without what it proposes and leaves unanswered)."""
    return [h for h in read_passage(text, said, TZ, speakers=frozenset(speakers), conventions=GB) if not h.proposed]


def when(h: Happening) -> str:
    return h.start.astimezone(TZ).strftime("%Y-%m-%d %H:%M") if h.start else h.day.isoformat()


@pytest.mark.parametrize(("text", "expected"), [
    ("Voice memo. Note to self: the gas safety check is booked for next Wednesday afternoon.", "2026-12-02"),
    ("Flight out 14/01 07:25 from Gatwick.", "2027-01-14 07:25"),
    ("Dentist in two weeks at 3pm.", "2026-12-10 15:00"),
    ("Exam on Thursday 10 December, 09:00 until 11:20.", "2026-12-10 09:00"),
    ("Car service at Kwik Fit on 9 December at 8:00, they quoted \u00a3240", "2026-12-09 08:00"),
    ("Delivery slot: Thu 3/12 8am-10am", "2026-12-03 08:00"),
])
def test_each_example_is_read_once_at_its_time(text: str, expected: str) -> None:
    (h,) = read(text)
    assert when(h) == expected


def test_an_end_given_with_until_is_the_items_end() -> None:
    (h,) = read("Exam on Thursday 10 December, 09:00 until 11:20.")
    assert h.end == datetime(2026, 12, 10, 11, 20, tzinfo=TZ)


def test_a_plan_proposed_as_a_question_counts_once_agreed() -> None:
    speakers = ("Dana", "Me")
    (h,) = read("Dana: Coffee on Tuesday?\n\nMe: Tuesday's good. 10:30 at Monmouth?\n\nDana: Great, see you then.",
                speakers=speakers)
    assert when(h) == "2026-12-01 10:30" and "see you then" in h.quote
    assert read("Dana: Coffee on Tuesday?\n\nMe: Tuesday's good. 10:30 at Monmouth?", speakers=speakers) == []


@pytest.mark.parametrize(("chat", "expected"), [
    ("Ben: Drinks Thursday at 7?\n\nMe: Can't do Thursday, how about Friday?\n\nBen: Friday works. 7:30 at the "
     "Lamb?\n\nMe: \U0001f44d", ["2026-11-27 19:30"]),  # counter-proposals keep what they do not change
    ("Omar: Squash on Saturday morning?\n\nMe: Sorry, I'm away this weekend.", []),  # declined
    ("Kate: Are you free for lunch on Wednesday?\n\nMe: Did you see the match last night?", []),  # unanswered
    ("Tom: I can do Tues 1st or Weds 2nd for the handover\n\nMe: Weds works better\n\nTom: Great, 2pm then",
     ["2026-12-02 14:00"]),  # a choice of days, settled by the answer
])
def test_proposals_and_their_answers(chat: str, expected: list[str]) -> None:
    assert [when(h) for h in read(chat, speakers=("Ben", "Me", "Omar", "Kate", "Tom"))] == expected


def _said(text: str, at: datetime, doc: str) -> list[Said]:
    hit = SearchHit(doc, 0.0, text, doc, doc, doc, doc, "text", at.isoformat(), at.isoformat(), 0, len(text), [],
                    None, None, None)
    return [Said(h, hit, at) for h in read(text, at)]


def test_a_move_keeps_every_part_of_its_time_it_does_not_change() -> None:
    said = _said("Physio with Anna on Friday 27 November at 16:00.", datetime(2026, 11, 20, 18, tzinfo=TZ), "a") + \
        _said("Anna moved my physio to Tuesday 1 December, same time.", datetime(2026, 11, 25, 18, tzinfo=TZ), "b")
    (event,) = merge(said)
    assert when(event.happening) == "2026-12-01 16:00" and when(event.moved_from[0].happening) == "2026-11-27 16:00"
    assert event.happening.title == "Physio with Anna"
    said = _said("Haircut with Jo on Saturday 5 December at 10:00.", datetime(2026, 11, 20, 18, tzinfo=TZ), "c") + \
        _said("Jo texted: haircut now at 11:30 instead, same day.", datetime(2026, 11, 25, 9, tzinfo=TZ), "d")
    (event,) = merge(said)
    assert when(event.happening) == "2026-12-05 11:30"


@pytest.mark.parametrize(("text", "days"), [
    ("Five-a-side every other Friday at 6pm, starting this Friday.", ["2026-11-27", "2026-12-11", "2026-12-25"]),
    ("Book club is the first Monday of each month at 7.30pm.", ["2026-12-07", "2027-01-04", "2027-02-01"]),
    ("Team drinks on the last Friday of every month, 5pm.", ["2026-11-27", "2026-12-25", "2027-01-29"]),
])
def test_rhythms_come_back_on_the_agenda(text: str, days: list[str]) -> None:
    said = _said(text, THURSDAY, "r")
    start = datetime(2026, 11, 26, tzinfo=TZ)
    found = in_window(merge(said), start, start + timedelta(days=70), TZ)
    assert [e.happening.day.isoformat() for e in found][:3] == days


def test_weekly_routines_stay_habits_and_rhythms_say_how_they_repeat() -> None:
    assert read("Swimming lessons are every Saturday at 9.") == []
    said = said_rhythm("every other Friday")
    assert said is not None
    rhythm = rhythm_from(said, None, date(2026, 11, 26))
    assert rhythm is not None and rhythm.words() == "every other Friday"


@pytest.mark.parametrize(("text", "off"), [
    ("My brother is flying to Toronto on 3 December for work.", "someone else's plan"),
    ("If I got the job, I'd start on 4 January.", "a hypothetical"),
    ("According to the BBC, the new footbridge opens to the public on 14 December.", "news"),
    ("Analysts expect the Fed to cut rates on 16 December.", "a forecast"),
    ("Date: Fri, 20 Nov 2026 16:02:00 +0000", "a message's own date"),
])
def test_what_stays_off(text: str, off: str) -> None:
    assert read(text) == [], off


@pytest.mark.parametrize(("statement", "words", "expected"), [
    ("Dentist appointment with Dr. Osei on Wednesday 9 December at 14:20.", ["on Wednesday 9 December", "at 14:20"],
     "Dentist, Dr. Osei"),
    ("Car service at Kwik Fit on 9 December at 8:00, they quoted \u00a3240", ["on 9 December", "at 8:00"],
     "Car service at Kwik Fit"),
    ("Flight BA117 departs at 07:25 on 14 January.", ["at 07:25", "on 14 January"], "Flight BA117"),
    ("Remember to pay the council tax by 1 December.", ["by 1 December"], "Pay the council tax"),
])
def test_an_item_is_named_as_a_calendar_shows_it(statement: str, words: list[str], expected: str) -> None:
    assert name(statement, words) == expected
