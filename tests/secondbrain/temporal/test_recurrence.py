"""A recurring event kept as one: its occurrences in a window are the ones dateutil walks from the start (the
rule's start moved on by whole periods changes nothing), an endless rule of every second costs what its window
holds, a rule that never gives a date is refused when the series is made, a COUNT past the cap is kept and
says so, exceptions and moved occurrences are honoured, across a change of the clocks too."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr
from hypothesis import given, settings
from hypothesis import strategies as st

from secondbrain.events.models import Moved
from secondbrain.temporal import recurrence as rec
from tests.examples import examples

pytestmark = pytest.mark.fast

LONDON = ZoneInfo("Europe/London")

RULES = [
    "FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=WEEKLY", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE",
    "FREQ=WEEKLY;BYDAY=SU;WKST=SU;INTERVAL=3", "FREQ=MONTHLY", "FREQ=MONTHLY;BYDAY=2TU",
    "FREQ=MONTHLY;BYDAY=-1FR;INTERVAL=2", "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
    "FREQ=YEARLY", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
    "FREQ=HOURLY;INTERVAL=5", "FREQ=HOURLY;BYHOUR=9,13,17", "FREQ=MINUTELY;INTERVAL=17;BYHOUR=8",
    "FREQ=SECONDLY;INTERVAL=3601;BYMINUTE=0,30", "FREQ=DAILY;BYMONTH=3,10;BYDAY=SU",
]


def brute(rule: str, start: datetime, lo: datetime, hi: datetime) -> list[datetime]:
    """What dateutil gives walking from the very start (small spans only), with DTSTART as the first."""
    wall = start.astimezone(LONDON).replace(tzinfo=None)
    until = hi.astimezone(LONDON).replace(tzinfo=None) + timedelta(hours=3)
    walls = {wall, *rrulestr("RRULE:" + rule, dtstart=wall).replace(until=until)}
    out = sorted(w.replace(tzinfo=LONDON) for w in walls)
    return [w for w in out if lo <= w < hi]


@settings(max_examples=examples(120), deadline=None)
@given(rule=st.sampled_from(RULES), began=st.integers(0, 3 * 365 * 24), offset=st.integers(0, 2 * 365 * 24),
       hours=st.integers(1, 24 * 40))
def test_a_window_holds_the_occurrences_dateutil_walks_to_from_the_start(rule: str, began: int, offset: int,
                                                                       hours: int) -> None:
    start = datetime(2022, 1, 1, 7, 45, tzinfo=LONDON) + timedelta(hours=began, minutes=began % 60)
    lo = start + timedelta(hours=offset)
    hi = lo + timedelta(hours=hours)
    series = rec.series(start, zone="Europe/London", rules=[rule])
    got = [o.start for o in rec.between(series, lo, hi, limit=100_000).occurrences]
    assert got == brute(series.rules[0], start, lo, hi), (rule, start, lo, hi)


def test_an_endless_rule_of_every_second_costs_what_the_window_holds() -> None:
    began = time.perf_counter()
    series = rec.series(datetime(2016, 1, 1, 0, 0, 5, tzinfo=UTC), zone="UTC", rules=["FREQ=SECONDLY"])
    made = time.perf_counter() - began
    assert series.until is None and series.rules == ["FREQ=SECONDLY"]
    began = time.perf_counter()
    day = rec.between(series, datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC))
    spent = time.perf_counter() - began
    assert len(day.occurrences) == rec.MAX_PER_WINDOW and day.more
    assert day.occurrences[0].start == datetime(2026, 3, 2, 0, 0, 0, tzinfo=UTC)
    # Not ten years of seconds walked: a fraction of a second (the full figures are in bench/recurrence.py).
    assert made < 0.5 and spent < 1.0, (made, spent)


def test_a_rule_that_never_gives_a_date_is_refused_when_the_series_is_made() -> None:
    for rule in ("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31",
                 "FREQ=YEARLY;BYMONTH=11;BYMONTHDAY=31;BYDAY=MO"):
        began = time.perf_counter()
        with pytest.raises(rec.RuleError, match="never gives a date"):
            rec.series(datetime(2024, 1, 1, 9, tzinfo=UTC), zone="UTC", rules=[rule])
        assert time.perf_counter() - began < 1.0
    for rule, says in (("FREQ=FORTNIGHTLY", "no frequency"), ("FREQ=DAILY;BYEASTER=0", "does not read"),
                       ("FREQ=DAILY;COUNT=3;UNTIL=20250101", "both COUNT and UNTIL"),
                       ("FREQ=DAILY;BYDAY=1MO", "numbers weekdays")):
        with pytest.raises(rec.RuleError, match=says):
            rec.series(datetime(2024, 1, 1, 9, tzinfo=UTC), zone="UTC", rules=[rule])


def test_a_count_past_the_cap_is_kept_up_to_the_cap_and_says_so() -> None:
    series = rec.series(datetime(2024, 1, 1, 9, tzinfo=UTC), zone="UTC", rules=["FREQ=DAILY;COUNT=1000000000"])
    assert series.capped and series.count == 1_000_000_000
    assert series.until == datetime(2024, 1, 1, 9, tzinfo=UTC) + timedelta(days=rec.MAX_COUNT - 1)
    assert "1,000,000,000 times; secondbrain keeps it until" in rec.describe(series)
    small = rec.series(datetime(2024, 1, 1, 9, tzinfo=UTC), zone="UTC", rules=["FREQ=WEEKLY;COUNT=4"])
    assert not small.capped and [o.start.day for o in rec.between(
        small, datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)).occurrences] == [1, 8, 15, 22]


def test_exceptions_and_moved_occurrences_across_the_change_of_the_clocks() -> None:
    series = rec.series(datetime(2026, 3, 3, 17, tzinfo=LONDON), zone="Europe/London",
                        duration=timedelta(minutes=45), rules=["FREQ=WEEKLY;UNTIL=20260414T160000Z"],
                        exceptions=[datetime(2026, 3, 17, 17, tzinfo=LONDON)],
                        moved=[Moved(original=datetime(2026, 3, 24, 17, tzinfo=LONDON),
                                     start=datetime(2026, 3, 25, 14, tzinfo=LONDON),
                                     end=datetime(2026, 3, 25, 15, tzinfo=LONDON))])
    got = rec.between(series, datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)).occurrences
    assert [(o.start.astimezone(LONDON).strftime("%d %H:%M"), o.moved_from is not None) for o in got] == [
        ("03 17:00", False), ("10 17:00", False), ("25 14:00", True), ("31 17:00", False), ("07 17:00", False),
        ("14 17:00", False)]  # 17:00 on the wall clock before and after the clocks went forward on 29 March
    assert got[2].moved_from == datetime(2026, 3, 24, 17, tzinfo=LONDON)
    assert all(o.end - o.start == timedelta(minutes=45) for o in got if o.moved_from is None)
    assert "until Tuesday 14 April 2026" in rec.describe(series)


def test_a_series_survives_its_json_and_a_crafted_one_is_checked() -> None:
    series = rec.series(datetime(2019, 6, 12, tzinfo=LONDON), zone="Europe/London", all_day=True,
                        duration=timedelta(days=1), rules=["FREQ=YEARLY"])
    assert rec.from_json(rec.to_json(series)) == series == rec.loaded(rec.to_json(series))
    (birthday,) = rec.between(series, datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)).occurrences
    assert (birthday.start, birthday.end) == (datetime(2026, 6, 12, tzinfo=LONDON),
                                              datetime(2026, 6, 13, tzinfo=LONDON))
    crafted = {**rec.to_json(series), "rules": ["FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=31"]}
    with pytest.raises(rec.RuleError):
        rec.from_json(crafted)
    with pytest.raises(rec.RuleError):
        rec.from_json({**rec.to_json(series), "zone": "Mars/Olympus"})
    with pytest.raises(rec.RuleError):
        rec.from_json({"zone": "UTC"})
