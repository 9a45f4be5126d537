"""The shapes of facts (services.query.shapes): the weekday a question asks about among the weekdays the sources
give; the kind of named thing a question counts."""

from __future__ import annotations

import pytest

from services.query.shapes import SHAPES, day_not_there, holds

pytestmark = pytest.mark.fast
HOURS = "CITY PHARMACY\nMon-Fri 8:00 - 19:00\nSat 9:00 - 13:00"


@pytest.mark.parametrize(("question", "texts", "missing"), [
    ("What time does the pharmacy close on Sunday?", [HOURS], "on Sunday"),
    ("What time does the pharmacy close on Wednesday?", [HOURS], None),  # inside "Mon-Fri"
    ("When does the market open on Sundays?", ["Market: Fri to Sun, 8-14"], None),  # a range through the weekend
    ("When does the post office close on Saturdays?", ["Open daily 9:00-17:30"], None),
    ("When is the market on Sunday?", ["Market every Saturday morning"], "on Sunday"),
    ("When does the pharmacy close on Sunday?", ["The pharmacy closes at 18:00."], None),  # no weekday given
    ("When does the pharmacy close?", [HOURS], None),  # none asked
    ("What's the weekday opening time of the tip?", ["The tip opens at 9am on Sundays."], "the weekday"),
    ("What's the weekday opening time of the tip?", ["Tip: Mon to Fri 8-4, Sun 9-1."], None),
    ("When does the market open at the weekend?", ["Market opens 8am on Tuesdays."], "at the weekend"),
    ("When does the market open at the weekend?", [HOURS], None),  # Saturday is given
    ("What do they do on weekends?", ["Last Monday we met.", "We explore parks on the weekends."], None),  # said
])
def test_a_weekday_asked_about_is_looked_for_among_the_ones_given(question: str, texts: list[str],
                                                                  missing: str | None) -> None:
    assert day_not_there(question, texts) == missing


@pytest.mark.parametrize(("statement", "place"), [
    ("The vet is Dr Shah and she is very gentle with the cat.", False),  # a title and a name: a person
    ("Mr. Patel fixed it.", False),
    ("The vet moved to Didsbury.", True),
    ("The vet is at 14 Mill Lane.", True),
])
def test_a_name_after_a_title_is_no_place(statement: str, place: bool) -> None:
    assert bool(SHAPES["place"].search(statement)) is place


@pytest.mark.parametrize(("statement", "person"), [
    ("Osteopath on Mill Road, £55 a session.", False),  # a road's name
    ("Met them at Victoria Station.", False),
    ("Osteopath on Mill Road, Priya recommended her.", True),
    ("Met Priya Shah at Victoria Station.", True),
    ("Went to see Elton John.", True),  # "john" is a thing in WordNet, but no preposition of place leads to it
])
def test_a_place_s_name_after_a_preposition_of_place_is_no_person(statement: str, person: bool) -> None:
    assert holds("person", SHAPES["person"], statement) is person
