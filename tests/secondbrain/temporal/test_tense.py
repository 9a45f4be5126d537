"""One reading of a sentence's time for every reader: the agenda's item and the answer's gloss of the same
sentence name the same day (a weekday still to come is the coming one, a weekday gone the last one)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal.tense import said_times, tense
from services.agenda.happenings import read_passage
from services.query.extractive import extractive_answer
from tests.services.query.gold_answers import Gold
from tests.services.query.test_answer_gold import hits

pytestmark = pytest.mark.fast

ZONE = ZoneInfo("Europe/London")
THURSDAY = datetime(2026, 11, 19, 10, tzinfo=UTC)  # Thursday 19 November 2026
# (sentence, the day it means, said on Thursday 19 November 2026)
SENTENCES = [
    ("The electrician can come on Monday to fix the kitchen lights.", date(2026, 11, 23)),
    ("The piano tuner visit is on Friday morning.", date(2026, 11, 20)),
    ("Lunch with Sara on Tuesday at Dishoom.", date(2026, 11, 24)),
    ("The parcel should arrive on Wednesday.", date(2026, 11, 25)),
    ("Dentist appointment on Monday at 9:40.", date(2026, 11, 23)),
    ("We went to the market on Saturday and bought plums.", date(2026, 11, 14)),
    ("Went to the dentist on Monday, all fine.", date(2026, 11, 16)),
    ("Tom flies back next Tuesday.", date(2026, 11, 24)),
    ("The school concert is on Tuesday 1 December at 18:00.", date(2026, 12, 1)),
    ("The plumber comes tomorrow at 8 to fix the boiler.", date(2026, 11, 20)),
    # a time's tense is its clause's ("they quoted" does not make the service past); numeric dates without a
    # preposition; "in two weeks"; a weekday said on that weekday is next week's
    ("Car service at Kwik Fit on 9 December at 8:00, they quoted \u00a3240", date(2026, 12, 9)),
    ("Flight out 14/01 07:25 from Gatwick.", date(2027, 1, 14)),
    ("GP review in two weeks at 3pm.", date(2026, 12, 3)),
    ("Coffee with Dana on Thursday at 10:30.", date(2026, 11, 26)),
]


@pytest.mark.parametrize(("sentence", "day"), SENTENCES)
def test_the_agenda_and_the_answer_read_one_day(sentence: str, day: date) -> None:
    (item,) = read_passage(sentence, THURSDAY, ZONE)
    (said,) = said_times(sentence, THURSDAY, ZONE, max_span=timedelta(days=62))
    assert item.day == said.start.astimezone(ZONE).date() == day
    # ...and the answer glosses it with that day
    case = Gold("note", (sentence,), "When is it?", "", times=(THURSDAY.isoformat(),))
    text = extractive_answer(f"When is {sentence.split()[1]}?", hits(case), tz=ZONE).text
    assert f"{day:%B} {day.day}, {day.year}" in text or "=" not in text, text


@pytest.mark.parametrize(("sentence", "expected"), [
    ("The electrician can come on Monday.", "future"),
    ("I'll drop the keys off on Friday.", "future"),
    ("Went to the farmers' market on Saturday.", "past"),
    ("We went to Lisbon on 14 March.", "past"),
    ("The budget is 40,000.", "present"),
])
def test_the_tense_of_a_sentence(sentence: str, expected: str) -> None:
    assert tense(sentence) == expected


def test_the_reproduction_glosses_the_coming_monday() -> None:
    """Said on Thursday 19 November: "on Monday" is Monday 23 November, not the 16th, which had gone."""
    case = Gold("note", ("The electrician can come on Monday to fix the kitchen lights.",), "", "",
                times=(THURSDAY.isoformat(),))
    text = extractive_answer("When can the electrician come?", hits(case), tz=ZoneInfo("UTC"),
                             encoder=Bm25Encoder()).text
    assert text.endswith("(\u201con Monday\u201d = Mon, November 23, 2026)"), text
