"""Times a passage speaks of: the passage gold suite at 100 %, and the points a range filter matches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from devtools.temporal_suite import MENTION_CASES, mention_errors
from secondbrain.temporal.mentions import MAX_MENTIONS, mention_points, mentioned_times, widen

pytestmark = pytest.mark.fast  # no services: in the fast lane


@pytest.mark.parametrize("case", MENTION_CASES, ids=[f"{c.family}:{c.text[:40]}" for c in MENTION_CASES])
def test_passage_gold_case(case):
    assert mention_errors(case) == []


def test_the_passage_suite_covers_every_kind_of_record():
    assert {c.family for c in MENTION_CASES} == {"note", "chat", "transcript", "future", "nearest", "skipped"}
    assert sum(not c.expected for c in MENTION_CASES) >= 5


def test_a_time_is_read_against_the_passage_own_time_not_the_clock():
    old = datetime(2019, 3, 6, 12, tzinfo=UTC)
    (m,) = mentioned_times("yesterday the roof leaked", old, ZoneInfo("UTC"))
    assert (m.start, m.end) == (datetime(2019, 3, 5, tzinfo=UTC), datetime(2019, 3, 6, tzinfo=UTC))


def test_a_naive_time_is_refused():
    with pytest.raises(ValueError, match="aware"):
        mentioned_times("yesterday", datetime(2023, 5, 8), ZoneInfo("UTC"))


def test_a_list_of_dates_is_cut_short():
    text = " ".join(f"On {d} March we met." for d in range(1, 20))
    assert len(mentioned_times(text, datetime(2023, 5, 8, tzinfo=UTC), ZoneInfo("UTC"))) == MAX_MENTIONS


def windows_overlap(points: list[datetime], start: datetime, end: datetime) -> bool:
    return any(start <= p < end for p in points)


@pytest.mark.parametrize("days", [1, 2, 7, 31])
def test_points_match_exactly_the_windows_of_a_day_or_more_that_overlap(days):
    """A window [ws, we) of a day or more holds a point iff it overlaps the span (checked hour by hour)."""
    s = datetime(2023, 5, 3, tzinfo=UTC)
    e = s + timedelta(days=days)
    points = mention_points([(s, e)])
    for offset in range(-72, 24 * days + 72, 5):
        for length in (24, 36, 24 * 7):
            ws = s + timedelta(hours=offset)
            we = ws + timedelta(hours=length)
            assert windows_overlap(points, ws, we) == (ws < e and we > s), (ws, we)


def test_a_short_window_is_widened_to_a_day():
    start = datetime(2023, 5, 7, 18, tzinfo=UTC)
    a, b = widen(start, start + timedelta(hours=6))
    assert b - a == timedelta(days=1) and a < start and b > start + timedelta(hours=6)
    long = (start, start + timedelta(days=3))
    assert widen(*long) == long


@pytest.mark.parametrize("odd, plain", [("la\u017ft week", "last week"), ("On \u017funday", "On sunday"),
                                        ("\u017feptember 3", "september 3"), ("last fr\u0131day", "last friday"),
                                        ("on \u017fat", "on sat")])
def test_letters_case_folding_takes_for_ascii_ones_are_read_as_them(odd: str, plain: str) -> None:
    """A passage with a long s or a dotless i (old prints, OCR, Turkish keyboards) is read, not a failed
    capture: the patterns matched such letters while the word tables did not know them."""
    said_at = datetime(2026, 11, 26, 12, tzinfo=UTC)
    got = mentioned_times(f"We met {odd} at the cafe.", said_at, ZoneInfo("UTC"))
    want = mentioned_times(f"We met {plain} at the cafe.", said_at, ZoneInfo("UTC"))
    assert got and [(m.start, m.end, m.span) for m in got] == [(m.start, m.end, m.span) for m in want]


@pytest.mark.parametrize(("text", "day"), [
    ("Parents' evening in two weeks.", datetime(2026, 12, 8, tzinfo=UTC)),
    ("Stitches out in 10 days.", datetime(2026, 12, 4, tzinfo=UTC)),
    ("Boarding pass: 14/01 07:25, gate closes 06:55.", datetime(2027, 1, 14, tzinfo=UTC)),
])
def test_times_tickets_and_notes_write_are_read(text: str, day: datetime) -> None:
    """Days after "in" and numeric dates without a preposition (the nearest such day) as notes and tickets
    write them: the chunker stores them, so search and the agenda find the passage by them."""
    said = datetime(2026, 11, 24, 10, tzinfo=UTC)  # a Tuesday
    found = mentioned_times(text, said, ZoneInfo("UTC"))
    assert [m.start for m in found] == [day], found
