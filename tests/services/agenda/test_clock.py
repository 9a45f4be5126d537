"""Clock times and zones as people write them; amounts, scores and durations are not times."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.agenda.clock import clocks, passage_zone

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(("text", "expected"), [
    ("Dentist moved to Thursday 10 December at 09:40.", (9, 40)),
    ("Parents' evening on 3rd December, 6-8pm.", (18, 0)),
    ("Dinner with Sam next Friday at 7.", (19, 0)),
    ("Standup 9.30am", (9, 30)),
    ("Meet at half past nine", (9, 30)),
    ("The design review is on Wednesday at half past three.", (15, 30)),
    ("Kick-off is next Tuesday at ten o'clock", (10, 0)),
    ("Train 15h30 to Lyon", (15, 30)),
    ("at noon on Friday", (12, 0)),
    ("the board meeting is on Thursday at two p.m.", (14, 0)),
])
def test_a_time_of_day_is_read(text: str, expected: tuple[int, int]) -> None:
    found = clocks(text)
    assert found and (found[0].hour, found[0].minute) == expected


@pytest.mark.parametrize("text", ["It costs 3.50 euros", "We won 3-1 on Saturday", "a 4h drive",
                                  "version 2.10 released", "I ran it in 1:52", "Rent \u00a31,450 from January"])
def test_amounts_scores_durations_are_not_times(text: str) -> None:
    assert clocks(text) == []


def test_a_time_says_its_zone() -> None:
    (tokyo,) = clocks("Call at 10:00 Tokyo time tomorrow")
    assert str(tokyo.zone) == "Asia/Tokyo" and tokyo.zone_words == "Tokyo time"
    (eastern,) = clocks("Webinar on 9 December at 3pm ET.")
    assert str(eastern.zone) == "America/New_York" and eastern.hour == 15
    (local,) = clocks("Flight lands in New York on 14 January at 11:05 local time.")
    assert str(local.zone) == "America/New_York"
    (offset,) = clocks("webinar 14:00 (UTC+2)")
    assert offset.zone is not None and offset.zone.utcoffset(None) == timedelta(hours=2)
    (span,) = clocks("between 2 and 4pm")
    assert (span.hour, span.end) == (14, (16, 0))


def test_a_passage_says_the_zone_of_all_its_times() -> None:
    assert str(passage_zone("Itinerary (all times are Tokyo time)")) == "Asia/Tokyo"
    assert str(passage_zone("Time zone: America/New_York")) == "America/New_York"
    assert passage_zone("A note about lunch.") is None
