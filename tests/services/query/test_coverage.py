"""What a statement speaks of (services.query.coverage): the weekday a question asks about among the weekdays the
sources give, and a thing picked out by the opposite adjective."""

from __future__ import annotations

import pytest

from services.query.coverage import covers, day_not_there, least_not_there, opposed, words

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
])
def test_a_weekday_asked_about_is_looked_for_among_the_ones_given(question: str, texts: list[str],
                                                                  missing: str | None) -> None:
    assert day_not_there(question, texts) == missing


def test_only_the_opposite_adjective_or_another_ordinal_picks_out_another_thing() -> None:
    assert opposed("back", ["back door code"], ["Front door code: 4812."])
    assert opposed("second", ["second vaccine"], ["First vaccine dose given on 3 March."])
    assert opposed("indoor", ["indoor activities"], ["More outdoor activities like this!"])
    assert not opposed("prominent", ["prominent charity organization"], ["A local charity helps kids."])
    assert not opposed("back", ["back door code"], ["Back door code: 1234."])


def test_a_hyphenated_word_covers_only_itself() -> None:
    assert covers("check-in", words("Check-in: 15:00"))
    assert not covers("checkout", words("Early check-in fee: 25 euros."))


def test_a_least_favourite_is_not_the_favourite() -> None:
    mine = ["Kira: My favourite food is Thai green curry."]
    assert least_not_there("What is Kira's least favourite food?", mine) == "least favourite"
    assert least_not_there("What is Kira's least favourite food?", ["Kira: My least favourite is okra."]) is None
    assert least_not_there("What is Kira's favourite food?", mine) is None
    assert least_not_there("What is Kira's least favourite film?", ["Kira: Films bore me."]) is None  # not named
