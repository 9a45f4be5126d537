"""Gold cases for the temporal understanding of questions (secondbrain/temporal/).

Most cases are resolved at one fixed reference instant, Wednesday 18 November 2026,
15:30 in Europe/Paris (UTC+01:00; the week runs Mon 16 to Mon 23 Nov).  A handful use
other instants and zones to pin down DST days (Paris 29 Mar and 25 Oct 2026, New York
8 Mar and 1 Nov 2026), a reference given in UTC, and a Sunday week start.

The holiday, season and numeric-date families add references just before and just after each
holiday (New York, London, Toronto, Sydney, Paris, Athens), locales that read "3/12" either way
and a southern-hemisphere calendar; ``locale`` (with ``country``/``hemisphere`` overrides) gives
the person's conventions, and ``ambiguous`` pins the two readings of a numeric date.

The families of counted weeks and weekends, weekdays and days of a month, quarters and halves, decades
and recurring events add references just before and just after month, quarter and year ends (Monday 23
November, 30 September and 1 October 2026 in Paris, 31 December 2026 in New York, 2 January 2027 in
London, 1 March 2027 in Sydney).  ``partial`` marks a question whose time words the grammar reads only in
part ("the last working day of September"): the expected range is what it did read, and it must come out
as a preference (``TimeWindow.partial``), never a filter.  Each of those families has such cases, and
cases where the words are no time at all ("the Monday standup").

Each case is the spec for one question: the expected ``[start, end)`` as ISO 8601 with
the zone's offset (``None`` = open end; both ``None`` = no time expression at all), and
the expected ``vague`` flag, time ``field`` and ``query_class``.  ``semantic`` optionally
pins the exact semantic query.  Expected values were worked out by hand from the rules in
the module docstring, not copied from the parser's output.

:func:`case_errors` judges one case against the parser: the tests require every case to pass,
``bench/temporal.py`` reports the accuracy per family and the speed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypedDict
from zoneinfo import ZoneInfo

from secondbrain.temporal import Conventions, Understanding, understand

REF = "2026-11-18T15:30:00+01:00"  # a Wednesday
TZ = "Europe/Paris"
NOW = REF  # shorthand for "ends now" in expectations at the reference instant


@dataclass(frozen=True, slots=True)
class Case:
    """One question and what it must be understood as."""

    question: str
    start: str | None
    end: str | None
    family: str
    vague: bool = False
    field: str = "captured_at"
    query_class: str = "temporal"
    semantic: str | None = None  # exact semantic_query, when the case pins it
    now: str = REF
    tz: str = TZ
    week_start: int = 0
    locale: str = "en_US"  # the person's locale: numeric date order, and the country and hemisphere...
    country: str | None = None  # ...unless these say otherwise
    hemisphere: str | None = None
    ambiguous: tuple[str, str] | None = None  # a numeric date read both ways: (the day chosen, the other day)
    partial: bool = False  # read only in part: the window is a preference, never a filter

    @property
    def has_time(self) -> bool:
        return self.start is not None or self.end is not None


def _d(day: str, offset: str = "+01:00", clock: str = "00:00") -> str:
    """ISO timestamp of a local wall-clock time: _d("2026-11-17") -> 2026-11-17T00:00:00+01:00."""
    return f"{day}T{clock}:00{offset}"


S = "+02:00"  # Paris summer time (CEST), last Sunday of March to last Sunday of October
TS = "temporal+semantic"
NY = "America/New_York"
E, D = "-05:00", "-04:00"  # New York: EST; EDT from the 2nd Sunday of March to the 1st Sunday of November
G, B = "+00:00", "+01:00"  # London: GMT; BST on the same days as Paris summer time
NYC_NOW = "2026-11-18T15:30:00-05:00"  # the reference Wednesday, in New York


class _Asker(TypedDict, total=False):
    """When, where and with which locale a person asks (spread into a :class:`Case`)."""

    now: str
    tz: str
    locale: str


NYC: _Asker = {"now": NYC_NOW, "tz": NY}  # en_US: month first, US holidays, north
LDN: _Asker = {"now": "2026-11-18T15:30:00+00:00", "tz": "Europe/London", "locale": "en_GB"}  # day first, UK holidays
# south (AEDT from 4 Oct)
SYD: _Asker = {"now": "2026-11-18T15:30:00+11:00", "tz": "Australia/Sydney", "locale": "en_AU"}
# Just before and after month, quarter and year ends (the families of counted weeks, days and weekdays of a
# month, quarters and halves, decades and recurring events).
MON_NOW = "2026-11-23T10:00:00+01:00"  # Monday 23 November 2026, Paris
AT_MON: _Asker = {"now": MON_NOW}
AT_SEP30: _Asker = {"now": "2026-09-30T18:00:00+02:00"}  # a Wednesday: the last day of September and of Q3
AT_OCT1: _Asker = {"now": "2026-10-01T09:00:00+02:00"}  # a Thursday: the first day of October and of Q4
AT_DEC31: _Asker = {"now": "2026-12-31T20:00:00-05:00", "tz": NY}  # a Thursday: the last day of the year
AT_JAN2: _Asker = {"now": "2027-01-02T11:00:00+00:00", "tz": "Europe/London", "locale": "en_GB"}  # a Saturday
AT_SYD: _Asker = {"now": "2027-03-01T09:00:00+11:00", "tz": "Australia/Sydney", "locale": "en_AU"}  # a Monday
AEDT = "+11:00"  # Sydney's summer time, 4 October 2026 to 4 April 2027 (and to 5 April 2026)

CASES: list[Case] = [
    # ------------------------------------------------------------------ named days and parts of days
    Case("what did I save yesterday?", _d("2026-11-17"), _d("2026-11-18"), "day", field="ingested_at", semantic=""),
    Case("What happened today", _d("2026-11-18"), _d("2026-11-19"), "day"),
    Case("TODAY", _d("2026-11-18"), _d("2026-11-19"), "day"),
    Case("notes from this morning", _d("2026-11-18", clock="05:00"), _d("2026-11-18", clock="12:00"), "day",
         query_class=TS, semantic="notes"),
    Case("anything from this afternoon?", _d("2026-11-18", clock="12:00"), _d("2026-11-18", clock="18:00"), "day"),
    Case("plans for tonight", _d("2026-11-18", clock="18:00"), _d("2026-11-19", clock="05:00"), "day",
         query_class=TS, semantic="plans"),
    Case("what did I do yesterday morning", _d("2026-11-17", clock="05:00"), _d("2026-11-17", clock="12:00"), "day"),
    Case("Yesterday evening's call with Marc", _d("2026-11-17", clock="18:00"), _d("2026-11-18"), "day",
         query_class=TS, semantic="call Marc"),
    Case("what did I write the day before yesterday", _d("2026-11-16"), _d("2026-11-17"), "day"),
    Case("reminders for tomorrow", _d("2026-11-19"), _d("2026-11-20"), "day", query_class=TS),
    Case("show me last night's notes", _d("2026-11-17", clock="18:00"), _d("2026-11-18", clock="05:00"), "day",
         query_class=TS, semantic="notes"),
    Case("the day after tomorrow", _d("2026-11-20"), _d("2026-11-21"), "day"),
    Case("earlier today", _d("2026-11-18"), NOW, "period-part"),
    # ------------------------------------------------------------------ weekdays
    Case("what happened on Tuesday?", _d("2026-11-17"), _d("2026-11-18"), "weekday", semantic=""),
    Case("meeting last Tuesday", _d("2026-11-17"), _d("2026-11-18"), "weekday", query_class=TS, semantic="meeting"),
    Case("on Wednesday", _d("2026-11-11"), _d("2026-11-12"), "weekday"),  # today is Wednesday: not today
    Case("last Wednesday", _d("2026-11-11"), _d("2026-11-12"), "weekday"),
    Case("this Monday", _d("2026-11-16"), _d("2026-11-17"), "weekday"),
    Case("this Friday", _d("2026-11-20"), _d("2026-11-21"), "weekday"),
    Case("next Monday", _d("2026-11-23"), _d("2026-11-24"), "weekday"),
    Case("next Wednesday", _d("2026-11-25"), _d("2026-11-26"), "weekday"),
    Case("notes from Thursday", _d("2026-11-12"), _d("2026-11-13"), "weekday", query_class=TS),
    Case("Friday's standup notes", _d("2026-11-13"), _d("2026-11-14"), "weekday", query_class=TS,
         semantic="standup notes"),
    Case("what did I save on Sat", _d("2026-11-14"), _d("2026-11-15"), "weekday", field="ingested_at"),
    Case("Tuesday last week", _d("2026-11-10"), _d("2026-11-11"), "weekday"),
    Case("Saturday next week", _d("2026-11-28"), _d("2026-11-29"), "weekday"),
    Case("Monday morning", _d("2026-11-16", clock="05:00"), _d("2026-11-16", clock="12:00"), "weekday"),
    Case("what did I do last Friday evening", _d("2026-11-13", clock="18:00"), _d("2026-11-14"), "weekday"),
    Case("on Sunday", _d("2026-11-15"), _d("2026-11-16"), "weekday"),
    Case("this past Saturday", _d("2026-11-14"), _d("2026-11-15"), "weekday"),
    Case("on tue", _d("2026-11-17"), _d("2026-11-18"), "weekday"),
    # ------------------------------------------------------------------ weeks
    Case("show me everything from last week", _d("2026-11-09"), _d("2026-11-16"), "week", semantic=""),
    Case("this week", _d("2026-11-16"), _d("2026-11-23"), "week"),
    Case("next week's agenda", _d("2026-11-23"), _d("2026-11-30"), "week", query_class=TS, semantic="agenda"),
    Case("the week before last", _d("2026-11-02"), _d("2026-11-09"), "week"),
    Case("what did I save about the budget last week?", _d("2026-11-09"), _d("2026-11-16"), "week",
         field="ingested_at", query_class=TS, semantic="budget"),
    Case("the previous week", _d("2026-11-09"), _d("2026-11-16"), "week"),
    Case("the coming week", _d("2026-11-23"), _d("2026-11-30"), "week"),
    Case("the week of March 3", _d("2026-03-02"), _d("2026-03-09"), "week"),
    Case("the last week of October", _d("2026-10-25", S), _d("2026-11-01"), "week"),
    Case("the first week of March 2024", _d("2024-03-01"), _d("2024-03-08"), "week"),
    # ------------------------------------------------------------------ weekends
    Case("last weekend", _d("2026-11-14"), _d("2026-11-16"), "weekend"),
    Case("this weekend", _d("2026-11-21"), _d("2026-11-23"), "weekend"),
    Case("photos over the weekend", _d("2026-11-14"), _d("2026-11-16"), "weekend", query_class=TS, semantic="photos"),
    Case("next weekend", _d("2026-11-28"), _d("2026-11-30"), "weekend"),
    Case("the weekend before last", _d("2026-11-07"), _d("2026-11-09"), "weekend"),
    # ------------------------------------------------------------------ months
    Case("this month", _d("2026-11-01"), _d("2026-12-01"), "month"),
    Case("last month", _d("2026-10-01", S), _d("2026-11-01"), "month"),
    Case("in November", _d("2026-11-01"), _d("2026-12-01"), "month"),
    Case("in Nov", _d("2026-11-01"), _d("2026-12-01"), "month"),
    Case("in December", _d("2025-12-01"), _d("2026-01-01"), "month"),  # December 2026 has not started
    Case("in May", _d("2026-05-01", S), _d("2026-06-01", S), "month"),
    Case("in may", _d("2026-05-01", S), _d("2026-06-01", S), "month"),
    Case("in November 2024", _d("2024-11-01"), _d("2024-12-01"), "month"),
    Case("Nov 2024 invoices", _d("2024-11-01"), _d("2024-12-01"), "month", query_class=TS, semantic="invoices"),
    Case("last March", _d("2026-03-01"), _d("2026-04-01", S), "month"),
    Case("next month", _d("2026-12-01"), _d("2027-01-01"), "month"),
    Case("the month before last", _d("2026-09-01", S), _d("2026-10-01", S), "month"),
    Case("during October", _d("2026-10-01", S), _d("2026-11-01"), "month"),
    Case("2024-11 expenses", _d("2024-11-01"), _d("2024-12-01"), "month", query_class=TS, semantic="expenses"),
    Case("March of last year", _d("2025-03-01"), _d("2025-04-01", S), "month"),
    Case("May 2024 trip", _d("2024-05-01", S), _d("2024-06-01", S), "month", query_class=TS, semantic="trip"),
    Case("ideas from last May", _d("2026-05-01", S), _d("2026-06-01", S), "month", query_class=TS, semantic="ideas"),
    # ------------------------------------------------------------------ calendar dates
    Case("on 3 March", _d("2026-03-03"), _d("2026-03-04"), "date"),
    Case("March 3rd", _d("2026-03-03"), _d("2026-03-04"), "date"),
    Case("on 3 March 2024", _d("2024-03-03"), _d("2024-03-04"), "date"),
    Case("2024-03-03", _d("2024-03-03"), _d("2024-03-04"), "date"),
    Case("2024/03/03", _d("2024-03-03"), _d("2024-03-04"), "date"),
    Case("the 3rd of March", _d("2026-03-03"), _d("2026-03-04"), "date"),
    Case("March 3, 2024", _d("2024-03-03"), _d("2024-03-04"), "date"),
    Case("on 25 December", _d("2025-12-25"), _d("2025-12-26"), "date"),  # not in the future
    Case("on the 3rd", _d("2026-11-03"), _d("2026-11-04"), "date"),
    Case("on the 20th", _d("2026-10-20", S), _d("2026-10-21", S), "date"),  # 20 Nov is still to come
    Case("3-5 March", _d("2026-03-03"), _d("2026-03-06"), "date"),
    Case("March 3-5, 2024", _d("2024-03-03"), _d("2024-03-06"), "date"),
    Case("on 29 Feb", _d("2024-02-29"), _d("2024-03-01"), "date"),  # the most recent leap day
    Case("notes from 18 November", _d("2026-11-18"), _d("2026-11-19"), "date", query_class=TS),
    Case("on 3 may", _d("2026-05-03", S), _d("2026-05-04", S), "date"),
    # ------------------------------------------------------------------ quarters and halves
    Case("Q1 2024", _d("2024-01-01"), _d("2024-04-01", S), "quarter"),
    Case("in Q3", _d("2026-07-01", S), _d("2026-10-01", S), "quarter"),
    Case("during Q2", _d("2026-04-01", S), _d("2026-07-01", S), "quarter"),
    Case("in Q4", _d("2026-10-01", S), _d("2027-01-01"), "quarter"),  # the current, started quarter
    Case("2025 Q4 revenue", _d("2025-10-01", S), _d("2026-01-01"), "quarter", query_class=TS, semantic="revenue"),
    Case("last quarter", _d("2026-07-01", S), _d("2026-10-01", S), "quarter"),
    Case("this quarter", _d("2026-10-01", S), _d("2027-01-01"), "quarter"),
    Case("the third quarter of last year", _d("2025-07-01", S), _d("2025-10-01", S), "quarter"),
    Case("Q3 of last year", _d("2025-07-01", S), _d("2025-10-01", S), "quarter"),
    Case("H1 2024", _d("2024-01-01"), _d("2024-07-01", S), "quarter"),
    Case("the second half of last year", _d("2025-07-01", S), _d("2026-01-01"), "quarter"),
    Case("in H2", _d("2026-07-01", S), _d("2027-01-01"), "quarter"),
    # ------------------------------------------------------------------ years and decades
    Case("in 2023", _d("2023-01-01"), _d("2024-01-01"), "year"),
    Case("this year", _d("2026-01-01"), _d("2027-01-01"), "year"),
    Case("last year's tax documents", _d("2025-01-01"), _d("2026-01-01"), "year", query_class=TS, semantic="tax"),
    Case("next year", _d("2027-01-01"), _d("2028-01-01"), "year"),
    Case("the year before last", _d("2024-01-01"), _d("2025-01-01"), "year"),
    Case("the year 2019", _d("2019-01-01"), _d("2020-01-01"), "year"),
    Case("in the 1990s", _d("1990-01-01"), _d("2000-01-01"), "year"),
    Case("music from the 90s", _d("1990-01-01"), _d("2000-01-01"), "year", query_class=TS, semantic="music"),
    Case("early 2024", _d("2024-01-01"), _d("2024-05-01", S), "year"),
    Case("late 2025", _d("2025-09-01", S), _d("2026-01-01"), "year"),
    # ------------------------------------------------------------------ N units ago (calendar units)
    Case("two days ago", _d("2026-11-16"), _d("2026-11-17"), "ago"),
    Case("3 weeks ago", _d("2026-10-26"), _d("2026-11-02"), "ago"),  # the week of Wed 28 Oct
    Case("a month ago", _d("2026-10-01", S), _d("2026-11-01"), "ago"),
    Case("a year ago", _d("2025-01-01"), _d("2026-01-01"), "ago"),
    Case("twelve days ago", _d("2026-11-06"), _d("2026-11-07"), "ago"),
    Case("a couple of weeks ago", _d("2026-11-02"), _d("2026-11-09"), "ago"),
    Case("5 years ago", _d("2021-01-01"), _d("2022-01-01"), "ago"),
    Case("a week ago", _d("2026-11-09"), _d("2026-11-16"), "ago"),
    Case("eleven months ago", _d("2025-12-01"), _d("2026-01-01"), "ago"),
    Case("2 hours ago", _d("2026-11-18", clock="13:00"), _d("2026-11-18", clock="14:00"), "ago"),  # that clock hour
    Case("what did I import twenty days ago", _d("2026-10-29"), _d("2026-10-30"), "ago", field="ingested_at"),
    # ------------------------------------------------------------------ rolling windows ending now
    Case("in the last 3 days", _d("2026-11-15", clock="15:30"), NOW, "rolling"),
    Case("past 3 days", _d("2026-11-15", clock="15:30"), NOW, "rolling"),
    Case("in the past month", _d("2026-10-18", S, "15:30"), NOW, "rolling"),  # before the clocks went back
    Case("the past 24 hours", _d("2026-11-17", clock="15:30"), NOW, "rolling"),
    Case("over the last two weeks", _d("2026-11-04", clock="15:30"), NOW, "rolling"),
    Case("the last 6 months", _d("2026-05-18", S, "15:30"), NOW, "rolling"),
    Case("within the past hour", _d("2026-11-18", clock="14:30"), NOW, "rolling"),
    Case("in the past week", _d("2026-11-11", clock="15:30"), NOW, "rolling"),
    Case("last 10 days", _d("2026-11-08", clock="15:30"), NOW, "rolling"),
    Case("in the past few days", _d("2026-11-15", clock="15:30"), NOW, "rolling", vague=True),
    Case("in the next 3 days", NOW, _d("2026-11-21", clock="15:30"), "rolling"),
    Case("what did I upload in the last 2 hours", _d("2026-11-18", clock="13:30"), NOW, "rolling",
         field="ingested_at"),
    # ------------------------------------------------------------------ parts of periods
    Case("earlier this year", _d("2026-01-01"), _d("2026-11-18"), "period-part"),
    Case("earlier this month", _d("2026-11-01"), _d("2026-11-18"), "period-part"),
    Case("earlier this week", _d("2026-11-16"), _d("2026-11-18"), "period-part"),
    Case("so far this year", _d("2026-01-01"), NOW, "period-part"),
    Case("later this week", _d("2026-11-19"), _d("2026-11-23"), "period-part"),
    Case("at the beginning of last month", _d("2026-10-01", S), _d("2026-10-11", S), "period-part"),
    Case("at the end of last month", _d("2026-10-21", S), _d("2026-11-01"), "period-part"),
    Case("early March", _d("2026-03-01"), _d("2026-03-11"), "period-part"),
    Case("end of March", _d("2026-03-21"), _d("2026-04-01", S), "period-part"),
    Case("mid-November", _d("2026-11-11"), _d("2026-11-21"), "period-part"),
    Case("at the beginning of the year", _d("2026-01-01"), _d("2026-05-01", S), "period-part"),
    # ------------------------------------------------------------------ open-ended: since / before / after / until
    Case("since March", _d("2026-03-01"), NOW, "open"),
    Case("since last week", _d("2026-11-09"), NOW, "open"),
    Case("since 2024-01-10", _d("2024-01-10"), NOW, "open"),
    Case("since Monday", _d("2026-11-16"), NOW, "open"),
    Case("what did I save since Tuesday", _d("2026-11-17"), NOW, "open", field="ingested_at"),
    Case("before March 2024", None, _d("2024-03-01"), "open"),
    Case("until yesterday", None, _d("2026-11-18"), "open"),
    Case("prior to 2020", None, _d("2020-01-01"), "open"),
    Case("up to last month", None, _d("2026-11-01"), "open"),
    Case("after 2024-06-30", _d("2024-07-01", S), None, "open"),
    # ------------------------------------------------------------------ closed ranges
    Case("between March and May 2024", _d("2024-03-01"), _d("2024-06-01", S), "range"),
    Case("from Monday to Wednesday", _d("2026-11-16"), _d("2026-11-19"), "range"),
    Case("from November to February", _d("2025-11-01"), _d("2026-03-01"), "range"),
    Case("between 2024-01-10 and 2024-01-20", _d("2024-01-10"), _d("2024-01-21"), "range"),
    Case("notes from 2019 to 2021", _d("2019-01-01"), _d("2022-01-01"), "range", query_class=TS, semantic="notes"),
    Case("from last Monday to yesterday", _d("2026-11-16"), _d("2026-11-18"), "range"),
    Case("March to May 2024", _d("2024-03-01"), _d("2024-06-01", S), "range"),
    Case("between 3 and 5 March", _d("2026-03-03"), _d("2026-03-06"), "range"),
    Case("from 1 to 15 October", _d("2026-10-01", S), _d("2026-10-16", S), "range"),
    Case("from January until March", _d("2026-01-01"), _d("2026-04-01", S), "range"),
    Case("between last Friday and today", _d("2026-11-13"), _d("2026-11-19"), "range"),
    # ------------------------------------------------------------------ vague: a soft recency boost
    Case("recently", _d("2026-10-19", S, "15:30"), NOW, "vague", vague=True),
    Case("what have I been reading lately", _d("2026-10-19", S, "15:30"), NOW, "vague", vague=True,
         query_class=TS, semantic="reading"),
    Case("a while ago", _d("2026-05-18", S, "15:30"), _d("2026-10-18", S, "15:30"), "vague", vague=True),
    Case("the other day", _d("2026-11-11"), _d("2026-11-17"), "vague", vague=True),
    Case("a few days ago", _d("2026-11-11"), _d("2026-11-17"), "vague", vague=True),
    Case("recent notes about Rust", _d("2026-10-19", S, "15:30"), NOW, "vague", vague=True, query_class=TS,
         semantic="notes Rust"),
    Case("the other week", _d("2026-10-28"), _d("2026-11-11"), "vague", vague=True),
    Case("a few weeks ago", _d("2026-09-28", S), _d("2026-11-09"), "vague", vague=True),
    Case("recently saved stuff from last week", _d("2026-11-09"), _d("2026-11-16"), "vague", field="ingested_at"),
    # ------------------------------------------------------------------ which time field
    Case("what did I upload last week", _d("2026-11-09"), _d("2026-11-16"), "field", field="ingested_at"),
    Case("the photo I took last week", _d("2026-11-09"), _d("2026-11-16"), "field", query_class=TS,
         semantic="photo"),
    Case("documents I imported in March", _d("2026-03-01"), _d("2026-04-01", S), "field", field="ingested_at"),
    Case("what did I add on Monday", _d("2026-11-16"), _d("2026-11-17"), "field", field="ingested_at"),
    Case("what was ingested yesterday", _d("2026-11-17"), _d("2026-11-18"), "field", field="ingested_at"),
    Case("what did I save about the meeting I had last week", _d("2026-11-09"), _d("2026-11-16"), "field",
         query_class=TS, semantic="meeting"),
    Case("files I put into secondbrain yesterday", _d("2026-11-17"), _d("2026-11-18"), "field", field="ingested_at"),
    Case("emails I received yesterday", _d("2026-11-17"), _d("2026-11-18"), "field", query_class=TS,
         semantic="emails received"),
    Case("what did I store last month", _d("2026-10-01", S), _d("2026-11-01"), "field", field="ingested_at"),
    Case("recordings I uploaded yesterday of the talk I gave in March", _d("2026-11-17"), _d("2026-11-18"), "field",
         field="ingested_at", query_class=TS),
    # ------------------------------------------------------------------ no time at all
    Case("Q3 roadmap", None, None, "negative", query_class="semantic", semantic="Q3 roadmap"),
    Case("Ides of March analysis", None, None, "negative", query_class="semantic"),
    Case("the second version of the contract", None, None, "negative", query_class="semantic"),
    Case("I sat down with Bob to discuss the merger", None, None, "negative", query_class="semantic"),
    Case("invoice 8391", None, None, "negative", query_class="semantic"),
    Case("summarize the report in 2000 words", None, None, "negative", query_class="semantic"),
    Case("what may cause a memory leak", None, None, "negative", query_class="semantic"),
    Case("Black Friday deals", None, None, "negative", query_class="semantic"),
    Case("show me the Sunday Times article", None, None, "negative", query_class="semantic"),
    Case("the 2024 budget", None, None, "negative", query_class="semantic"),
    Case("how do soldiers march in step", None, None, "negative", query_class="semantic"),
    Case("explain the last step of the pipeline", None, None, "negative", query_class="semantic"),
    Case("what is the capital of France?", None, None, "negative", query_class="semantic"),
    Case("notes about the Weekend Update sketch", None, None, "negative", query_class="semantic"),
    Case("Sun Microsystems history", None, None, "negative", query_class="semantic"),
    Case("one day I will learn Rust", None, None, "negative", query_class="semantic"),
    Case("chapter 2 may help", None, None, "negative", query_class="semantic"),
    Case("dec 2 specification", None, None, "negative", query_class="semantic"),
    Case("H2O molecule structure", None, None, "negative", query_class="semantic"),
    Case("mid-level managers and early adopters", None, None, "negative", query_class="semantic"),
    Case("last minute changes to the deck", None, None, "negative", query_class="semantic"),
    Case("Jan's notes on the migration", None, None, "negative", query_class="semantic"),
    Case("the end of the world", None, None, "negative", query_class="semantic"),
    Case("todays special", None, None, "negative", query_class="semantic"),
    # ------------------------------------------------------------------ relative to a date, not to today
    Case("the Monday before 24 July 2026", _d("2026-07-20", S), _d("2026-07-21", S), "relative"),  # 24th: Friday
    Case("what did we plan on the Saturday after October 28?", _d("2026-10-31"), _d("2026-11-01"), "relative",
         query_class=TS, semantic="plan"),
    Case("the weekend before 4 October 2026", _d("2026-09-26", S), _d("2026-09-28", S), "relative"),  # 4th: Sunday
    Case("last Friday on 23 January 2026", _d("2026-01-16"), _d("2026-01-17"), "relative"),  # 23rd: Friday
    Case("the week before 3 March 2026", _d("2026-02-23"), _d("2026-03-02"), "relative"),
    Case("the day after 5 May 2026", _d("2026-05-06", S), _d("2026-05-07", S), "relative"),
    Case("the last two weeks of August 2026", _d("2026-08-18", S), _d("2026-09-01", S), "relative"),
    Case("the first weekend of October 2023", _d("2023-10-07", S), _d("2023-10-09", S), "relative"),  # 1st: Sunday
    Case("the last weekend of October", _d("2026-10-31"), _d("2026-11-02"), "relative"),
    Case("how many plants did I have as of March 2026", None, _d("2026-04-01", S), "relative", query_class=TS),
    Case("what did Gina find for her clothing store yesterday", _d("2026-11-17"), _d("2026-11-18"), "relative",
         query_class=TS),  # "store" is a noun here: event time, not ingestion time
    # ------------------------------------------------------------------ DST days, other zones, other instants
    Case("today", _d("2026-03-29"), _d("2026-03-30", S), "dst", now="2026-03-29T12:00:00+02:00"),  # 23 h
    Case("yesterday", _d("2026-03-29"), _d("2026-03-30", S), "dst", now="2026-03-30T10:00:00+02:00"),
    Case("today", _d("2026-10-25", S), _d("2026-10-26"), "dst", now="2026-10-25T12:00:00+01:00"),  # 25 h
    Case("in the past 2 days", _d("2026-03-27", clock="12:00"), "2026-03-29T12:00:00+02:00", "dst",
         now="2026-03-29T12:00:00+02:00"),  # wall clock: same time of day
    Case("the past 24 hours", _d("2026-03-28", clock="11:00"), "2026-03-29T12:00:00+02:00", "dst",
         now="2026-03-29T12:00:00+02:00"),  # absolute: 24 real hours
    Case("on Sunday", _d("2026-03-22"), _d("2026-03-23"), "dst", now="2026-03-29T12:00:00+02:00"),
    Case("this weekend", _d("2026-03-28"), _d("2026-03-30", S), "dst", now="2026-03-29T12:00:00+02:00"),
    Case("last weekend", _d("2026-03-21"), _d("2026-03-23"), "dst", now="2026-03-29T12:00:00+02:00"),
    Case("today", "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", "dst",
         now="2026-03-08T12:00:00-04:00", tz="America/New_York"),
    Case("yesterday", "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00", "dst",
         now="2026-11-02T09:00:00-05:00", tz="America/New_York"),
    Case("last weekend", "2026-10-31T00:00:00-04:00", "2026-11-02T00:00:00-05:00", "dst",
         now="2026-11-02T09:00:00-05:00", tz="America/New_York"),
    Case("this week", "2026-11-02T00:00:00-05:00", "2026-11-09T00:00:00-05:00", "dst",
         now="2026-11-02T09:00:00-05:00", tz="America/New_York"),
    Case("yesterday", "2025-12-31T00:00:00+09:00", "2026-01-01T00:00:00+09:00", "zone",
         now="2025-12-31T23:30:00+00:00", tz="Asia/Tokyo"),  # already 1 Jan 08:30 in Tokyo
    Case("last year", "2025-01-01T00:00:00+09:00", "2026-01-01T00:00:00+09:00", "zone",
         now="2025-12-31T23:30:00+00:00", tz="Asia/Tokyo"),
    Case("this week", _d("2026-11-15"), _d("2026-11-22"), "zone", week_start=6),  # weeks starting on Sunday
    Case("last week", _d("2026-11-08"), _d("2026-11-15"), "zone", week_start=6),
    # ------------------------------------------------------------------ holidays (US calendar, New York)
    # Easter 2025: 20 Apr, 2026: 5 Apr.  Thanksgiving 2025: 27 Nov, 2026: 26 Nov.  Without a word a holiday is
    # the most recent one that has started; "last" the most recent one over; "next" the first one to come.
    Case("What did I note on Christmas Eve?", _d("2025-12-24", E), _d("2025-12-25", E), "holiday", **NYC),
    Case("on Halloween", _d("2026-10-31", D), _d("2026-11-01", D), "holiday", **NYC),  # DST ends 1 Nov at 02:00
    Case("photos from Valentine's Day", _d("2026-02-14", E), _d("2026-02-15", E), "holiday", query_class=TS,
         semantic="photos", **NYC),
    Case("on New Year's Day", _d("2026-01-01", E), _d("2026-01-02", E), "holiday", **NYC),
    Case("on New Year's Eve", _d("2025-12-31", E), _d("2026-01-01", E), "holiday", **NYC),
    Case("last Christmas", _d("2025-12-25", E), _d("2025-12-26", E), "holiday", **NYC),
    Case("next Christmas", _d("2026-12-25", E), _d("2026-12-26", E), "holiday", **NYC),
    Case("this Thanksgiving", _d("2026-11-26", E), _d("2026-11-27", E), "holiday", **NYC),
    Case("Christmas 2024", _d("2024-12-25", E), _d("2024-12-26", E), "holiday", **NYC),
    Case("what did I save over the holidays?", _d("2025-12-24", E), _d("2026-01-02", E), "holiday",
         field="ingested_at", **NYC),  # 24 Dec to 1 Jan
    Case("over Christmas", _d("2025-12-24", E), _d("2026-01-02", E), "holiday", **NYC),
    Case("over Easter", _d("2026-04-03", D), _d("2026-04-07", D), "holiday", **NYC),  # Good Friday to Easter Monday
    Case("on Good Friday", _d("2026-04-03", D), _d("2026-04-04", D), "holiday", **NYC),
    Case("Easter 2025", _d("2025-04-20", D), _d("2025-04-21", D), "holiday", **NYC),
    Case("at Thanksgiving", _d("2025-11-27", E), _d("2025-11-28", E), "holiday", **NYC),  # 2026's is next week
    Case("over Thanksgiving", _d("2025-11-27", E), _d("2025-12-01", E), "holiday", **NYC),  # Thursday to Sunday
    Case("on Mother's Day", _d("2026-05-10", D), _d("2026-05-11", D), "holiday", **NYC),  # 2nd Sunday of May
    Case("on Father's Day", _d("2026-06-21", D), _d("2026-06-22", D), "holiday", **NYC),  # 3rd Sunday of June
    Case("on Memorial Day", _d("2026-05-25", D), _d("2026-05-26", D), "holiday", **NYC),  # last Monday of May
    Case("over Labor Day weekend", _d("2026-09-05", D), _d("2026-09-08", D), "holiday", **NYC),
    Case("the day after Thanksgiving", _d("2025-11-28", E), _d("2025-11-29", E), "holiday", **NYC),
    Case("between Christmas and New Year", _d("2025-12-25", E), _d("2026-01-02", E), "holiday", **NYC),
    Case("since Easter", _d("2026-04-05", D), NYC_NOW, "holiday", **NYC),
    Case("on Christmas morning", _d("2025-12-25", E, "05:00"), _d("2025-12-25", E, "12:00"), "holiday", **NYC),
    Case("the weekend before Christmas", _d("2025-12-20", E), _d("2025-12-22", E), "holiday", **NYC),  # a Thursday
    Case("last year's Christmas party", _d("2025-12-25", E), _d("2025-12-26", E), "holiday", query_class=TS,
         semantic="party", **NYC),
    Case("on Boxing Day", _d("2025-12-26", E), _d("2025-12-27", E), "holiday", **NYC),
    Case("on St. Patrick's Day", _d("2026-03-17", D), _d("2026-03-18", D), "holiday", **NYC),
    Case("on the Fourth of July", _d("2026-07-04", D), _d("2026-07-05", D), "holiday", **NYC),
    Case("on Juneteenth", _d("2026-06-19", D), _d("2026-06-20", D), "holiday", **NYC),
    Case("during Hanukkah", _d("2025-12-15", E), _d("2025-12-23", E), "holiday", **NYC),  # lit on the 14th's eve
    Case("on Diwali", _d("2026-11-08", E), _d("2026-11-09", E), "holiday", **NYC),
    Case("on Chinese New Year", _d("2026-02-17", E), _d("2026-02-18", E), "holiday", **NYC),
    # just before and just after Christmas 2026
    Case("on Christmas Eve", _d("2025-12-24", E), _d("2025-12-25", E), "holiday", now="2026-12-23T12:00:00-05:00",
         tz=NY),
    Case("over the holidays", _d("2025-12-24", E), _d("2026-01-02", E), "holiday", now="2026-12-23T12:00:00-05:00",
         tz=NY),
    Case("what did I note on Christmas Eve?", _d("2026-12-24", E), _d("2026-12-25", E), "holiday",
         now="2026-12-24T20:00:00-05:00", tz=NY),  # today: it has started
    Case("last Christmas Eve", _d("2025-12-24", E), _d("2025-12-25", E), "holiday", now="2026-12-24T20:00:00-05:00",
         tz=NY),  # today's is not over
    Case("over the holidays", _d("2026-12-24", E), _d("2027-01-02", E), "holiday", now="2026-12-24T20:00:00-05:00",
         tz=NY),
    Case("last Christmas", _d("2026-12-25", E), _d("2026-12-26", E), "holiday", now="2026-12-27T10:00:00-05:00",
         tz=NY),
    Case("what did I write on Christmas Day?", _d("2026-12-25", E), _d("2026-12-26", E), "holiday",
         now="2026-12-27T10:00:00-05:00", tz=NY),
    Case("next Christmas", _d("2027-12-25", E), _d("2027-12-26", E), "holiday", now="2026-12-27T10:00:00-05:00",
         tz=NY),
    Case("this holiday season", _d("2026-12-24", E), _d("2027-01-02", E), "holiday",
         now="2026-12-27T10:00:00-05:00", tz=NY),
    Case("since Boxing Day", _d("2026-12-26", E), "2026-12-27T10:00:00-05:00", "holiday",
         now="2026-12-27T10:00:00-05:00", tz=NY),
    Case("over New Year", _d("2026-12-31", E), _d("2027-01-02", E), "holiday", now="2027-01-01T11:00:00-05:00",
         tz=NY),
    Case("on New Year's Eve", _d("2026-12-31", E), _d("2027-01-01", E), "holiday", now="2027-01-01T11:00:00-05:00",
         tz=NY),
    Case("since the new year", _d("2027-01-01", E), "2027-01-01T11:00:00-05:00", "holiday",
         now="2027-01-01T11:00:00-05:00", tz=NY),
    # just before and just after Easter 2026 (Good Friday 3 Apr)
    Case("on Easter", _d("2025-04-20", D), _d("2025-04-21", D), "holiday", now="2026-04-02T12:00:00-04:00", tz=NY),
    Case("on Good Friday", _d("2025-04-18", D), _d("2025-04-19", D), "holiday", now="2026-04-02T12:00:00-04:00",
         tz=NY),
    Case("next Easter", _d("2026-04-05", D), _d("2026-04-06", D), "holiday", now="2026-04-02T12:00:00-04:00", tz=NY),
    Case("over Easter", _d("2026-04-03", D), _d("2026-04-07", D), "holiday", now="2026-04-07T12:00:00-04:00", tz=NY),
    Case("last Easter", _d("2026-04-05", D), _d("2026-04-06", D), "holiday", now="2026-04-07T12:00:00-04:00", tz=NY),
    Case("on Easter Monday", _d("2026-04-06", D), _d("2026-04-07", D), "holiday", now="2026-04-07T12:00:00-04:00",
         tz=NY),
    # just before and just after Thanksgiving 2026
    Case("at Thanksgiving", _d("2025-11-27", E), _d("2025-11-28", E), "holiday", now="2026-11-25T12:00:00-05:00",
         tz=NY),
    Case("next Thanksgiving", _d("2026-11-26", E), _d("2026-11-27", E), "holiday", now="2026-11-25T12:00:00-05:00",
         tz=NY),
    Case("over Thanksgiving", _d("2026-11-26", E), _d("2026-11-30", E), "holiday", now="2026-11-30T09:00:00-05:00",
         tz=NY),
    Case("on Black Friday", _d("2026-11-27", E), _d("2026-11-28", E), "holiday", now="2026-11-30T09:00:00-05:00",
         tz=NY),
    Case("last Thanksgiving", _d("2026-11-26", E), _d("2026-11-27", E), "holiday", now="2026-11-30T09:00:00-05:00",
         tz=NY),
    # other countries' calendars
    Case("on Mother's Day", _d("2026-03-15", G), _d("2026-03-16", G), "holiday", **LDN),  # Mothering Sunday
    Case("on Boxing Day", _d("2025-12-26", G), _d("2025-12-27", G), "holiday", **LDN),
    Case("Easter Monday 2025", _d("2025-04-21", B), _d("2025-04-22", B), "holiday", **LDN),
    Case("at Thanksgiving", _d("2026-10-12", D), _d("2026-10-13", D), "holiday", now="2026-11-18T15:30:00-05:00",
         tz="America/Toronto", locale="en_CA"),  # Canada: 2nd Monday of October
    Case("over Thanksgiving", _d("2026-10-10", D), _d("2026-10-13", D), "holiday", now="2026-11-18T15:30:00-05:00",
         tz="America/Toronto", locale="en_CA"),  # the long weekend before it
    Case("on Father's Day", _d("2026-09-06", "+10:00"), _d("2026-09-07", "+10:00"), "holiday",
         **SYD),  # Australia: 1st Sunday of September
    Case("on Christmas Day", _d("2025-12-25", "+11:00"), _d("2025-12-26", "+11:00"), "holiday", **SYD),
    Case("Easter 2024", _d("2024-05-05", "+03:00"), _d("2024-05-06", "+03:00"), "holiday",
         now="2026-11-18T15:30:00+02:00", tz="Europe/Athens", locale="el_GR"),  # Orthodox Easter
    Case("on Labour Day", _d("2026-05-01", S), _d("2026-05-02", S), "holiday", locale="fr_FR"),  # 1 May
    Case("on Father's Day", _d("2026-05-14", S), _d("2026-05-15", S), "holiday", locale="de_DE"),  # Ascension Day
    Case("on Labor Day", _d("2026-09-07", S), _d("2026-09-08", S), "holiday", country="US"),  # the US one in Paris
    # names used as topics, not times
    Case("notes on Christmas presents", None, None, "holiday", query_class="semantic"),
    Case("Halloween costume ideas", None, None, "holiday", query_class="semantic"),
    Case("Easter egg hunt plan", None, None, "holiday", query_class="semantic"),
    Case("Thanksgiving recipes", None, None, "holiday", query_class="semantic"),
    Case("my New Year's resolutions", None, None, "holiday", query_class="semantic"),
    Case("what will I do in the new year", None, None, "holiday", query_class="semantic"),
    Case("Mother's Day gift ideas", None, None, "holiday", query_class="semantic"),
    Case("watch the Independence Day movie", None, None, "holiday", query_class="semantic"),
    Case("at the Christmas market", None, None, "holiday", query_class="semantic"),
    # ------------------------------------------------------------------ seasons (meteorological)
    # North: spring Mar-May, summer Jun-Aug, autumn/fall Sep-Nov, winter Dec-Feb (named by its January).
    Case("what did I write last summer?", _d("2026-06-01", D), _d("2026-09-01", D), "season", **NYC),
    Case("this winter", _d("2026-12-01", E), _d("2027-03-01", E), "season", **NYC),  # the nearer one
    Case("in spring 2024", _d("2024-03-01", E), _d("2024-06-01", D), "season", **NYC),
    Case("the summer of 2023", _d("2023-06-01", D), _d("2023-09-01", D), "season", **NYC),
    Case("winter 2024", _d("2023-12-01", E), _d("2024-03-01", E), "season", **NYC),
    Case("winter 2023-24", _d("2023-12-01", E), _d("2024-03-01", E), "season", **NYC),
    Case("next spring", _d("2027-03-01", E), _d("2027-06-01", D), "season", **NYC),
    Case("over the summer", _d("2026-06-01", D), _d("2026-09-01", D), "season", **NYC),
    Case("in the fall", _d("2026-09-01", D), _d("2026-12-01", E), "season", **NYC),  # under way: it has started
    Case("last fall", _d("2025-09-01", D), _d("2025-12-01", E), "season", **NYC),
    Case("early summer", _d("2026-06-01", D), _d("2026-07-01", D), "season", **NYC),
    Case("late summer 2024", _d("2024-08-01", D), _d("2024-09-01", D), "season", **NYC),
    Case("since last spring", _d("2026-03-01", E), NYC_NOW, "season", **NYC),
    Case("notes from this past summer", _d("2026-06-01", D), _d("2026-09-01", D), "season", query_class=TS,
         semantic="notes", **NYC),
    Case("during the winter", _d("2025-12-01", E), _d("2026-03-01", E), "season", **NYC),
    Case("summer last year", _d("2025-06-01", D), _d("2025-09-01", D), "season", **NYC),
    Case("in autumn 2025", _d("2025-09-01", D), _d("2025-12-01", E), "season", **NYC),
    Case("this winter", _d("2026-12-01", E), _d("2027-03-01", E), "season", now="2027-01-15T10:00:00-05:00", tz=NY),
    Case("last winter", _d("2025-12-01", E), _d("2026-03-01", E), "season", now="2027-01-15T10:00:00-05:00", tz=NY),
    Case("last summer", _d("2025-06-01", D), _d("2025-09-01", D), "season", now="2026-07-10T12:00:00-04:00", tz=NY),
    Case("this summer", _d("2026-06-01", D), _d("2026-09-01", D), "season", now="2026-07-10T12:00:00-04:00", tz=NY),
    # south: summer Dec-Feb, autumn Mar-May, winter Jun-Aug, spring Sep-Nov
    Case("what did I write last summer?", _d("2025-12-01", "+11:00"), _d("2026-03-01", "+11:00"), "season", **SYD),
    Case("this winter", _d("2026-06-01", "+10:00"), _d("2026-09-01", "+10:00"), "season", **SYD),
    Case("in spring", _d("2026-09-01", "+10:00"), _d("2026-12-01", "+11:00"), "season", **SYD),
    Case("this summer", _d("2026-12-01", "+11:00"), _d("2027-03-01", "+11:00"), "season", **SYD),
    Case("summer 2025-26", _d("2025-12-01", "+11:00"), _d("2026-03-01", "+11:00"), "season", **SYD),
    Case("last winter", _d("2026-06-01", "-03:00"), _d("2026-09-01", "-03:00"), "season",
         now="2026-11-18T15:30:00-03:00", tz="America/Argentina/Buenos_Aires", locale="es_AR"),
    Case("last summer", _d("2025-12-01", E), _d("2026-03-01", E), "season", hemisphere="south",
         **NYC),  # a person's own setting wins over the country's
    # seasons' words that are not times
    Case("the Spring framework docs", None, None, "season", query_class="semantic"),
    Case("meeting at Summer Smith's office", None, None, "season", query_class="semantic"),
    Case("did the price fall last week?", _d("2026-11-09", E), _d("2026-11-16", E), "season", query_class=TS,
         semantic="price fall", **NYC),  # "fall" the verb
    Case("spring cleaning checklist", None, None, "season", query_class="semantic"),
    Case("bugs in Spring Boot apps", None, None, "season", query_class="semantic"),
    Case("the fall of Rome", None, None, "season", query_class="semantic"),
    Case("kids in summer school", None, None, "season", query_class="semantic"),
    Case("summer camp in 2024", _d("2024-01-01", E), _d("2025-01-01", E), "season", query_class=TS,
         semantic="summer camp", **NYC),
    # ------------------------------------------------------------------ numeric dates
    # en_US reads month first; en_GB/de_DE day first; the only valid reading wins whatever the locale.
    Case("what did I save on 3/12?", _d("2026-03-12", D), _d("2026-03-13", D), "numeric", field="ingested_at",
         ambiguous=("2026-03-12", "2025-12-03"), **NYC),
    Case("on 12/03/2025", _d("2025-12-03", E), _d("2025-12-04", E), "numeric", ambiguous=("2025-12-03", "2025-03-12"),
         **NYC),
    Case("on 12.03.2025", _d("2025-12-03", E), _d("2025-12-04", E), "numeric", ambiguous=("2025-12-03", "2025-03-12"),
         **NYC),
    Case("on 2025.03.12", _d("2025-03-12", D), _d("2025-03-13", D), "numeric", **NYC),
    Case("on 13/03/2025", _d("2025-03-13", D), _d("2025-03-14", D), "numeric", **NYC),  # only day-first works
    Case("on 3/13", _d("2026-03-13", D), _d("2026-03-14", D), "numeric", **NYC),
    Case("on 3/12/25", _d("2025-03-12", D), _d("2025-03-13", D), "numeric", ambiguous=("2025-03-12", "2025-12-03"),
         **NYC),
    Case("since 11/1", _d("2026-11-01", D), NYC_NOW, "numeric", ambiguous=("2026-11-01", "2026-01-11"), **NYC),
    Case("from 3/12 to 3/14", _d("2026-03-12", D), _d("2026-03-15", D), "numeric",
         **NYC),  # not ambiguous: "3/14" can only be month first, so "3/12" is too
    Case("on 2/29", _d("2024-02-29", E), _d("2024-03-01", E), "numeric", **NYC),
    Case("on 12/25", _d("2025-12-25", E), _d("2025-12-26", E), "numeric", **NYC),
    Case("before 1/15/2026", None, _d("2026-01-15", E), "numeric", **NYC),
    Case("the week of 3/12/2026", _d("2026-03-09", D), _d("2026-03-16", D), "numeric",
         ambiguous=("2026-03-12", "2026-12-03"), **NYC),
    Case("on 12-03-2025", _d("2025-12-03", E), _d("2025-12-04", E), "numeric", ambiguous=("2025-12-03", "2025-03-12"),
         **NYC),
    Case("3/12/2025 standup notes", _d("2025-03-12", D), _d("2025-03-13", D), "numeric", query_class=TS,
         semantic="standup notes", ambiguous=("2025-03-12", "2025-12-03"), **NYC),  # a full date needs no "on"
    Case("what did I save on 3/12?", _d("2025-12-03", G), _d("2025-12-04", G), "numeric", field="ingested_at",
         ambiguous=("2025-12-03", "2026-03-12"), **LDN),
    Case("on 12/03/2025", _d("2025-03-12", G), _d("2025-03-13", G), "numeric", ambiguous=("2025-03-12", "2025-12-03"),
         **LDN),
    Case("on 3/13", _d("2026-03-13", G), _d("2026-03-14", G), "numeric", **LDN),  # only month-first works
    Case("on 25.12.2024", _d("2024-12-25", G), _d("2024-12-26", G), "numeric", **LDN),
    Case("from 3/12 to 14/12", _d("2025-12-03", G), _d("2025-12-15", G), "numeric", **LDN),  # the end decides
    Case("on 3/12-3/14", _d("2026-03-12", G), _d("2026-03-15", G), "numeric", **LDN),  # "3/14" is only month-first
    Case("on 1/2", _d("2026-02-01", G), _d("2026-02-02", G), "numeric", ambiguous=("2026-02-01", "2026-01-02"),
         **LDN),
    Case("on 12.03.2025", _d("2025-03-12"), _d("2025-03-13"), "numeric", ambiguous=("2025-03-12", "2025-12-03"),
         locale="de_DE"),
    Case("since 01.09.2026", _d("2026-09-01", S), NOW, "numeric", ambiguous=("2026-09-01", "2026-01-09"),
         locale="de_DE"),
    # numbers that are not dates
    Case("spend 3/4 of the budget", None, None, "numeric", query_class="semantic"),
    Case("we won 3-1", None, None, "numeric", query_class="semantic"),
    Case("upgrade to version 1.2.3", None, None, "numeric", query_class="semantic"),
    Case("the rate is 12.5 percent", None, None, "numeric", query_class="semantic"),
    Case("meet at 12.30", None, None, "numeric", query_class="semantic"),
    Case("call 555-12-34", None, None, "numeric", query_class="semantic"),
    Case("we are on 24/7 support", None, None, "numeric", query_class="semantic"),
    Case("what changed in 3.11.12", None, None, "numeric", query_class="semantic"),
    Case("in 3/4 of the cases", None, None, "numeric", query_class="semantic"),
    Case("the server at 10.0.0.12", None, None, "numeric", query_class="semantic"),
    Case("add 1/2 cup of sugar", None, None, "numeric", query_class="semantic"),
    *[replace(c, family=f) for f, cases in (
        ("weeks-back", [
            # Monday 23 November 2026 (the week runs 23-30 Nov; the last weekend was 21-22 Nov)
            Case("three weeks ago", _d("2026-11-02"), _d("2026-11-09"), "", **AT_MON),  # the week of Mon 2 Nov
            Case("a fortnight ago", _d("2026-11-09"), _d("2026-11-16"), "", **AT_MON),
            Case("two weekends ago", _d("2026-11-14"), _d("2026-11-16"), "", **AT_MON),
            Case("the weekend before last", _d("2026-11-14"), _d("2026-11-16"), "", **AT_MON),
            Case("what did I save two fortnights ago?", _d("2026-10-26"), _d("2026-11-02"), "", field="ingested_at",
                 semantic="", **AT_MON),
            Case("photos from three weekends ago", _d("2026-11-07"), _d("2026-11-09"), "", query_class=TS,
                 semantic="photos", **AT_MON),
            Case("in the past fortnight", _d("2026-11-09", clock="10:00"), MON_NOW, "", **AT_MON),
            Case("last fortnight", _d("2026-11-09"), _d("2026-11-23"), "", **AT_MON),  # two calendar weeks
            Case("Tuesday two weeks ago", _d("2026-11-10"), _d("2026-11-11"), "", **AT_MON),
            Case("two weeks ago on Friday", _d("2026-11-13"), _d("2026-11-14"), "", **AT_MON),
            Case("the Saturday before last", _d("2026-11-14"), _d("2026-11-15"), "", **AT_MON),
            Case("three days before Christmas", _d("2025-12-22"), _d("2025-12-23"), "", **AT_MON),  # 2026's is ahead
            Case("two weekends before Christmas", _d("2025-12-13"), _d("2025-12-15"), "", **AT_MON),
            Case("two weeks after 3 March", _d("2026-03-16"), _d("2026-03-23"), "", **AT_MON),
            Case("about three weeks ago", _d("2026-11-02"), _d("2026-11-09"), "", partial=True, **AT_MON),
            Case("three weeks ago last Tuesday", _d("2026-11-02"), _d("2026-11-09"), "", partial=True, **AT_MON),
            Case("I gave two weeks' notice", None, None, "", query_class="semantic", **AT_MON),
            Case("a fortnight's holiday in Spain", None, None, "", query_class="semantic", **AT_MON),
            # the last day of September and of Q3 (a Wednesday); the first of October
            Case("a fortnight ago", _d("2026-09-14", S), _d("2026-09-21", S), "", **AT_SEP30),
            Case("two weekends ago", _d("2026-09-19", S), _d("2026-09-21", S), "", **AT_SEP30),
            Case("three weeks ago", _d("2026-09-07", S), _d("2026-09-14", S), "", **AT_SEP30),
            Case("a fortnight ago on Monday", _d("2026-09-14", S), _d("2026-09-15", S), "", **AT_OCT1),
            # Saturday 2 January 2027 in London (a weekend under way: the last one over is 26-27 Dec)
            Case("two weekends ago", _d("2026-12-19", G), _d("2026-12-21", G), "", **AT_JAN2),
            Case("three weeks ago", _d("2026-12-07", G), _d("2026-12-14", G), "", **AT_JAN2),
            Case("a fortnight ago", _d("2026-12-13", G), _d("2026-12-20", G), "", week_start=6, **AT_JAN2),
            Case("the weekend before last", _d("2026-12-19", G), _d("2026-12-21", G), "", **AT_JAN2),
            # Thursday 31 December 2026 in New York
            Case("the weekend before last", _d("2026-12-19", E), _d("2026-12-21", E), "", **AT_DEC31),
            Case("a fortnight ago", _d("2026-12-14", E), _d("2026-12-21", E), "", **AT_DEC31),
            Case("two weekends ago", _d("2026-12-19", E), _d("2026-12-21", E), "", **AT_DEC31),
        ]),
        ("weekday-of", [
            Case("notes from the last Thursday of September", _d("2026-09-24", S), _d("2026-09-25", S), "",
                 query_class=TS, semantic="notes", **AT_MON),
            Case("the second Tuesday of March", _d("2026-03-10"), _d("2026-03-11"), "", **AT_MON),
            Case("the last Friday of last month", _d("2026-10-30"), _d("2026-10-31"), "", **AT_MON),
            Case("the first Monday of the year", _d("2026-01-05"), _d("2026-01-06"), "", **AT_MON),
            Case("the third Wednesday of October 2025", _d("2025-10-15", S), _d("2025-10-16", S), "", **AT_MON),
            Case("the first Monday in March", _d("2026-03-02"), _d("2026-03-03"), "", **AT_MON),
            Case("the Friday of last week", _d("2026-11-20"), _d("2026-11-21"), "", **AT_MON),
            Case("the second-to-last Friday of October", _d("2026-10-23", S), _d("2026-10-24", S), "", **AT_MON),
            Case("the first day of last month", _d("2026-10-01", S), _d("2026-10-02", S), "", **AT_MON),
            Case("the first Sunday of summer", _d("2026-06-07", S), _d("2026-06-08", S), "", **AT_MON),
            Case("the last working day of September", _d("2026-09-01", S), _d("2026-10-01", S), "", partial=True,
                 **AT_MON),
            Case("on a Tuesday in March", _d("2026-03-01"), _d("2026-04-01", S), "", partial=True, **AT_MON),
            Case("the fifth Friday of October", _d("2026-10-30"), _d("2026-10-31"), "", **AT_MON),
            Case("Thursday the 12th", _d("2026-11-12"), _d("2026-11-13"), "", **AT_MON),  # the latest that was one
            Case("the first sun of spring", None, None, "", query_class="semantic", **AT_MON),
            Case("the last Friday of September", _d("2026-09-25", S), _d("2026-09-26", S), "", **AT_SEP30),
            Case("the last Sunday of the month", _d("2026-09-27", S), _d("2026-09-28", S), "", **AT_SEP30),
            Case("the first Monday of last month", _d("2026-09-07", S), _d("2026-09-08", S), "", **AT_OCT1),
            Case("the last Friday of last quarter", _d("2026-09-25", S), _d("2026-09-26", S), "", **AT_OCT1),
            Case("the last business day of last quarter", _d("2026-07-01", S), _d("2026-10-01", S), "",
                 partial=True, **AT_OCT1),
            Case("the last Monday of the year", _d("2026-12-28", E), _d("2026-12-29", E), "", **AT_DEC31),
            Case("the first Friday of the year", _d("2027-01-01", G), _d("2027-01-02", G), "", **AT_JAN2),
            Case("the second Tuesday of last month", _d("2026-12-08", G), _d("2026-12-09", G), "", **AT_JAN2),
            Case("the last Thursday of November", _d("2026-11-26", G), _d("2026-11-27", G), "", **AT_JAN2),
            # south: summer is December to February; a day still to come is last year's
            Case("the first Sunday of summer", _d("2026-12-06", AEDT), _d("2026-12-07", AEDT), "", **AT_SYD),
            Case("the first Monday in March", _d("2027-03-01", AEDT), _d("2027-03-02", AEDT), "", **AT_SYD),  # today
            Case("the second Monday in March", _d("2026-03-09", AEDT), _d("2026-03-10", AEDT), "", **AT_SYD),
        ]),
        ("day-of-month", [
            Case("what did I save on the 5th of last month?", _d("2026-10-05", S), _d("2026-10-06", S), "",
                 field="ingested_at", semantic="", **AT_MON),
            Case("the 20th of this month", _d("2026-11-20"), _d("2026-11-21"), "", **AT_MON),
            Case("the 1st of next month", _d("2026-12-01"), _d("2026-12-02"), "", **AT_MON),
            Case("the fifth of last month", _d("2026-10-05", S), _d("2026-10-06", S), "", **AT_MON),
            Case("the 10th of the month before last", _d("2026-09-10", S), _d("2026-09-11", S), "", **AT_MON),
            Case("the first of the month", _d("2026-11-01"), _d("2026-11-02"), "", **AT_MON),
            Case("on the 3rd last month", _d("2026-10-03", S), _d("2026-10-04", S), "", **AT_MON),
            Case("around the 15th of last month", _d("2026-10-15", S), _d("2026-10-16", S), "", partial=True,
                 **AT_MON),
            Case("the 15th or so of last month", _d("2026-10-01", S), _d("2026-11-01"), "", partial=True, **AT_MON),
            Case("the 5th or 6th of last month", _d("2026-10-05", S), _d("2026-10-07", S), "", **AT_MON),  # both
            Case("the third of the five books", None, None, "", query_class="semantic", **AT_MON),
            Case("the 5th of last month", _d("2026-09-05", S), _d("2026-09-06", S), "", **AT_OCT1),
            Case("the 31st of last month", _d("2026-09-01", S), _d("2026-10-01", S), "", partial=True,
                 **AT_OCT1),  # September has 30 days
            Case("the 30th of last month", _d("2026-09-30", S), _d("2026-10-01", S), "", **AT_OCT1),
            Case("the 15th of this month", _d("2026-12-15", E), _d("2026-12-16", E), "", **AT_DEC31),
            Case("the 3rd of next month", _d("2027-01-03", E), _d("2027-01-04", E), "", **AT_DEC31),
            Case("the 20th of last month", _d("2026-12-20", G), _d("2026-12-21", G), "", **AT_JAN2),
            Case("what did I write on the 24th of last month?", _d("2026-12-24", G), _d("2026-12-25", G), "",
                 **AT_JAN2),
            Case("the 30th of this month", _d("2026-09-30", S), _d("2026-10-01", S), "", **AT_SEP30),  # today
            Case("the twenty-first of last month", _d("2026-08-21", S), _d("2026-08-22", S), "", **AT_SEP30),
        ]),
        ("quarter-half", [
            Case("last quarter", _d("2026-04-01", S), _d("2026-07-01", S), "", **AT_SEP30),
            Case("this quarter", _d("2026-07-01", S), _d("2026-10-01", S), "", **AT_SEP30),
            Case("the end of the quarter", _d("2026-09-01", S), _d("2026-10-01", S), "", **AT_SEP30),  # its last month
            Case("last quarter", _d("2026-07-01", S), _d("2026-10-01", S), "", **AT_OCT1),
            Case("the quarter before last", _d("2026-04-01", S), _d("2026-07-01", S), "", **AT_OCT1),
            Case("at the end of last quarter", _d("2026-09-01", S), _d("2026-10-01", S), "", **AT_OCT1),
            Case("two quarters ago", _d("2026-04-01", S), _d("2026-07-01", S), "", **AT_MON),  # 23 May's quarter
            Case("the first half of last year", _d("2025-01-01"), _d("2025-07-01", S), "", **AT_MON),
            Case("H2 2024", _d("2024-07-01", S), _d("2025-01-01"), "", **AT_MON),
            Case("the first half of the year", _d("2026-01-01"), _d("2026-07-01", S), "", **AT_MON),
            Case("the last quarter of last year", _d("2025-10-01", S), _d("2026-01-01"), "", **AT_MON),
            Case("last year's Q3", _d("2025-07-01", S), _d("2025-10-01", S), "", **AT_MON),
            Case("early last quarter", _d("2026-07-01", S), _d("2026-08-01", S), "", **AT_MON),
            Case("in the past quarter", _d("2026-07-01", S), _d("2026-10-01", S), "", **AT_MON),
            Case("the last two quarters", _d("2026-04-01", S), _d("2026-10-01", S), "", **AT_MON),
            Case("the first half of last quarter", _d("2026-07-01", S), _d("2026-10-01", S), "", partial=True,
                 **AT_MON),
            Case("the last quarter of the pizza", None, None, "", query_class="semantic", **AT_MON),
            Case("the first half of the match", None, None, "", query_class="semantic", **AT_MON),
            Case("last quarter", _d("2026-10-01", B), _d("2027-01-01", G), "", **AT_JAN2),
            Case("the second half of last year", _d("2026-07-01", B), _d("2027-01-01", G), "", **AT_JAN2),
            Case("this quarter", _d("2027-01-01", G), _d("2027-04-01", B), "", **AT_JAN2),
            Case("the first half of last year", _d("2025-01-01", E), _d("2025-07-01", D), "", **AT_DEC31),
            Case("the last half of the year", _d("2026-07-01", D), _d("2027-01-01", E), "", **AT_DEC31),
        ]),
        ("decade", [
            Case("the 80s", _d("1980-01-01"), _d("1990-01-01"), "", **AT_MON),
            Case("the 2010s", _d("2010-01-01"), _d("2020-01-01"), "", **AT_MON),
            Case("photos from the eighties", _d("1980-01-01"), _d("1990-01-01"), "", query_class=TS,
                 semantic="photos", **AT_MON),
            Case("the late 90s", _d("1997-01-01"), _d("2000-01-01"), "", **AT_MON),  # years 7-9
            Case("the early 2000s", _d("2000-01-01"), _d("2004-01-01"), "", **AT_MON),  # years 0-3
            Case("in the mid-80s", _d("1984-01-01"), _d("1987-01-01"), "", **AT_MON),  # years 4-6
            Case("the 1980's", _d("1980-01-01"), _d("1990-01-01"), "", **AT_MON),
            Case("last decade", _d("2010-01-01"), _d("2020-01-01"), "", **AT_MON),
            Case("this decade", _d("2020-01-01"), _d("2030-01-01"), "", **AT_MON),
            Case("over the past decade", _d("2016-11-23", clock="10:00"), MON_NOW, "", **AT_MON),
            Case("the first half of the 90s", _d("1990-01-01"), _d("2000-01-01"), "", partial=True, **AT_MON),
            Case("the 80s playlist", None, None, "", query_class="semantic", **AT_MON),
            Case("1990s fashion trends", None, None, "", query_class="semantic", **AT_MON),
            Case("photos from my twenties", None, None, "", query_class="semantic", **AT_MON),
            Case("a woman in her 40s", None, None, "", query_class="semantic", **AT_MON),
            Case("the 20s", _d("2020-01-01", G), _d("2030-01-01", G), "", **AT_JAN2),
            Case("last decade", _d("2010-01-01", G), _d("2020-01-01", G), "", **AT_JAN2),
            Case("the nineties", _d("1990-01-01", E), _d("2000-01-01", E), "", **AT_DEC31),
            Case("the 1900s", _d("1900-01-01", G), _d("2000-01-01", G), "", tz="UTC"),  # a century
            Case("in the early 1900s", _d("1900-01-01", G), _d("2000-01-01", G), "", partial=True, tz="UTC"),
        ]),
        ("recurring-event", [
            # a weekday or a time of day that names what recurs is a subject, not a window...
            Case("what's the usual agenda of the Friday retro?", None, None, "", query_class="semantic",
                 semantic="usual agenda Friday retro", **AT_MON),
            Case("the Monday standup", None, None, "", query_class="semantic", semantic="Monday standup", **AT_MON),
            Case("Friday drinks", None, None, "", query_class="semantic", **AT_MON),
            Case("the morning run", None, None, "", query_class="semantic", **AT_MON),
            Case("notes from the Monday standup", None, None, "", query_class="semantic", **AT_MON),
            Case("what did I eat at Sunday lunch?", None, None, "", query_class="semantic", **AT_MON),
            Case("my Saturday morning run", None, None, "", query_class="semantic", **AT_MON),
            Case("Friday night drinks with the team", None, None, "", query_class="semantic", **AT_MON),
            Case("what do I do every Monday?", None, None, "", query_class="semantic", **AT_MON),
            Case("every other Friday", None, None, "", query_class="semantic", **AT_MON),
            Case("the last Friday retro of the year", None, None, "", query_class="semantic", **AT_MON),
            Case("the weekly Tuesday sync", None, None, "", query_class="semantic", **AT_MON),
            Case("what did we decide at the Thursday meeting?", None, None, "", query_class="semantic",
                 semantic="decide Thursday meeting", **AT_MON),
            # ...unless the question dates it
            Case("at last Monday's standup", _d("2026-11-16"), _d("2026-11-17"), "", query_class=TS,
                 semantic="standup", **AT_MON),
            Case("the standup last Monday", _d("2026-11-16"), _d("2026-11-17"), "", query_class=TS,
                 semantic="standup", **AT_MON),
            Case("the Monday standup last week", _d("2026-11-16"), _d("2026-11-23"), "", query_class=TS,
                 semantic="Monday standup", **AT_MON),
            Case("Friday's retro", _d("2026-11-20"), _d("2026-11-21"), "", query_class=TS, semantic="retro",
                 **AT_MON),
            Case("this morning's run", _d("2026-11-23", clock="05:00"), _d("2026-11-23", clock="12:00"), "",
                 query_class=TS, semantic="run", **AT_MON),
            Case("the Friday retro on 3 March", _d("2026-03-03"), _d("2026-03-04"), "", query_class=TS,
                 semantic="Friday retro", **AT_MON),
            Case("the Friday retro around 3 March", _d("2026-03-03"), _d("2026-03-04"), "", query_class=TS,
                 semantic="Friday retro", partial=True, **AT_MON),
            Case("on Friday at the retro", _d("2026-11-20"), _d("2026-11-21"), "", query_class=TS, semantic="retro",
                 **AT_MON),
            Case("Tuesday morning", _d("2026-11-17", clock="05:00"), _d("2026-11-17", clock="12:00"), "", **AT_MON),
            Case("the Monday standup two weeks ago", _d("2026-09-14", S), _d("2026-09-21", S), "", query_class=TS,
                 semantic="Monday standup", **AT_SEP30),
            Case("Sunday lunch last weekend", _d("2026-12-26", G), _d("2026-12-28", G), "", query_class=TS,
                 semantic="Sunday lunch", **AT_JAN2),
        ]),
    ) for c in cases],
]


# --------------------------------------------------------------------------- times inside a passage


@dataclass(frozen=True, slots=True)
class MentionCase:
    """A passage, when it was said, and the times it speaks of: ``(expression, start, end)`` each, in
    the order written (``secondbrain.temporal.mentions``; an empty tuple: it speaks of no other time)."""

    text: str
    said_at: str
    expected: tuple[tuple[str, str, str], ...]
    family: str  # note, chat, transcript, future, skipped
    tz: str = "UTC"


MAY8 = "2023-05-08T13:56:00+00:00"  # a Monday, as in the chat records of LoCoMo
FRI = "2023-08-04T19:00:00+00:00"  # a Friday evening


def _u(day: str) -> str:
    return f"{day}T00:00:00+00:00"


MENTION_CASES: list[MentionCase] = [
    # notes: the past, relative to when they were written
    MentionCase("Yesterday I ran 10 km along the river.", MAY8, (("Yesterday", _u("2023-05-07"), _u("2023-05-08")),),
                "note"),
    MentionCase("Last week we went to the coast.", MAY8, (("Last week", _u("2023-05-01"), _u("2023-05-08")),), "note"),
    MentionCase("On 3 May I lost my job; two weeks ago I read Avalanche.", MAY8,
                (("On 3 May", _u("2023-05-03"), _u("2023-05-04")),
                 ("two weeks ago", _u("2023-04-24"), _u("2023-05-01"))), "note"),
    MentionCase("Notes from the meeting last Friday: the budget is final.", MAY8,
                (("last Friday", _u("2023-05-05"), _u("2023-05-06")),), "note"),
    MentionCase("We moved here in March.", MAY8, (("in March", _u("2023-03-01"), _u("2023-04-01")),), "note"),
    MentionCase("The day before yesterday the boiler broke.", MAY8,
                (("The day before yesterday", _u("2023-05-06"), _u("2023-05-07")),), "note"),
    MentionCase("Hier soir, rien. Last night the storm took the fence.", "2023-05-08T09:00:00+02:00",
                (("Last night", "2023-05-07T18:00:00+02:00", "2023-05-08T05:00:00+02:00"),), "note",
                tz="Europe/Paris"),
    MentionCase("Two weekends ago we hiked the ridge.", MAY8,
                (("Two weekends ago", _u("2023-04-29"), _u("2023-05-01")),), "note"),
    MentionCase("A fortnight ago I started the pottery course.", MAY8,
                (("A fortnight ago", _u("2023-04-24"), _u("2023-05-01")),), "note"),
    MentionCase("On the 5th of last month we signed the lease.", MAY8,
                (("On the 5th of last month", _u("2023-04-05"), _u("2023-04-06")),), "note"),
    # chat records: one turn a line, speaker first
    MentionCase("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", MAY8,
                (("yesterday", _u("2023-05-07"), _u("2023-05-08")),), "chat"),
    MentionCase("Melanie: We went camping last weekend!\nCaroline: Lovely, where?", MAY8,
                (("last weekend", _u("2023-05-06"), _u("2023-05-08")),), "chat"),
    MentionCase("Jon: A few days back I lost my job.\nGina: Oh no! When exactly?\nJon: On Thursday.", MAY8,
                (("On Thursday", _u("2023-05-04"), _u("2023-05-05")),), "chat"),
    # transcripts: said at the moment of the recording (the chunker passes recording start + offset)
    MentionCase("so as I said this morning we shipped the release on Tuesday and it went fine",
                "2023-05-11T10:15:00+00:00", (("on Tuesday", _u("2023-05-09"), _u("2023-05-10")),), "transcript"),
    MentionCase("right, three days ago the supplier called about the invoice", "2023-05-11T10:15:00+00:00",
                (("three days ago", _u("2023-05-08"), _u("2023-05-09")),), "transcript"),
    # the future side: a sentence about what is to come takes the next occurrence
    MentionCase("I can't wait for the weekend!", FRI, (("the weekend", _u("2023-08-05"), _u("2023-08-07")),),
                "future"),
    MentionCase("We'll go to the beach on Sunday.", FRI, (("on Sunday", _u("2023-08-06"), _u("2023-08-07")),),
                "future"),
    MentionCase("I'm going to Spain in June.", MAY8, (("in June", _u("2023-06-01"), _u("2023-07-01")),), "future"),
    MentionCase("Next month I'm taking a pottery class.", MAY8,
                (("Next month", _u("2023-06-01"), _u("2023-07-01")),), "future"),
    MentionCase("The concert is scheduled for 20 May.", MAY8, (("20 May", _u("2023-05-20"), _u("2023-05-21")),),
                "future"),
    MentionCase("We'll meet again on the first Monday of June.", MAY8,
                (("on the first Monday of June", _u("2023-06-05"), _u("2023-06-06")),), "future"),
    MentionCase("See you tomorrow. We met on Sunday though.", MAY8,
                (("tomorrow", _u("2023-05-09"), _u("2023-05-10")), ("on Sunday", _u("2023-05-07"), _u("2023-05-08"))),
                "future"),
    # a day and month without a year, no sign of the future: the nearest occurrence
    MentionCase("My dentist appointment is on the 3rd of December at 9:30.", "2026-11-24T09:00:00+00:00",
                (("on the 3rd of December", _u("2026-12-03"), _u("2026-12-04")),), "nearest"),
    MentionCase("We met on 20 December.", "2023-01-05T12:00:00+00:00",
                (("on 20 December", _u("2022-12-20"), _u("2022-12-21")),), "nearest"),
    MentionCase("On May 3rd, 2022 we met.", MAY8, (("On May 3rd, 2022", _u("2022-05-03"), _u("2022-05-04")),),
                "nearest"),
    # what is left out: vague, open, the passage's own time, too long, not a time
    MentionCase("Lately I've been reading a lot.", MAY8, (), "skipped"),
    MentionCase("Today I feel great and this week is busy.", MAY8, (), "skipped"),
    MentionCase("Since March I've been running.", MAY8, (), "skipped"),
    MentionCase("Last year was hard; in the 90s it was easier.", MAY8, (), "skipped"),
    MentionCase("[D3:7] Caroline: the score was 3-1 and I read 1/2 of it.", MAY8, (), "skipped"),
    MentionCase("We went away for the weekend.", MAY8, (), "skipped"),
    # a weekday that names what recurs, and times read only in part
    MentionCase("Notes from the Monday standup: the budget is final.", MAY8, (), "skipped"),
    MentionCase("Caroline: Friday drinks were fun, and my Saturday morning run too!", MAY8, (), "skipped"),
    MentionCase("The last working day of March we closed the books.", MAY8, (), "skipped"),
    MentionCase("About three weeks ago the boiler broke.", MAY8, (), "skipped"),
]


def mention_errors(case: MentionCase) -> list[str]:
    """Differences between the times found in a passage and the gold ones (empty when exact)."""
    from secondbrain.temporal.mentions import mentioned_times

    got = [(m.expression, m.start, m.end) for m in mentioned_times(case.text, datetime.fromisoformat(case.said_at),
                                                                  ZoneInfo(case.tz))]
    want = [(e, datetime.fromisoformat(a), datetime.fromisoformat(b)) for e, a, b in case.expected]
    if got == want:
        return []
    return [f"got {[(e, a.isoformat(), b.isoformat()) for e, a, b in got]}, expected "
            f"{[(e, a.isoformat(), b.isoformat()) for e, a, b in want]}"]


# --------------------------------------------------------------------------- judging a case


def _same_instant(got: datetime | None, want: str | None, tz: ZoneInfo) -> bool:
    if got is None or want is None:
        return got is None and want is None
    expected = datetime.fromisoformat(want)
    # Equal instant, expressed in the user's zone with the offset the gold case states.
    return got == expected and got.tzinfo == tz and got.utcoffset() == expected.utcoffset()


def conventions(case: Case) -> Conventions:
    """The date order, country and hemisphere the case's person uses."""
    return Conventions.for_locale(case.locale, country=case.country, hemisphere=case.hemisphere)


def run_case(case: Case) -> Understanding:
    """Understand one gold question at its reference instant and zone, with the person's conventions."""
    return understand(case.question, datetime.fromisoformat(case.now), ZoneInfo(case.tz), week_start=case.week_start,
                      conventions=conventions(case))


def range_errors(case: Case, got: Understanding) -> list[str]:
    """Why the window differs from the gold range (empty when it is exact)."""
    tz = ZoneInfo(case.tz)
    window = got.time
    if not case.has_time:
        return [] if window is None else [f"expected no time, got {window.expression!r}"]
    if window is None:
        return ["expected a time window, found none"]
    errors = []
    if not _same_instant(window.start, case.start, tz):
        errors.append(f"start {window.start.isoformat() if window.start else None} != {case.start}")
    if not _same_instant(window.end, case.end, tz):
        errors.append(f"end {window.end.isoformat() if window.end else None} != {case.end}")
    return errors


def other_errors(case: Case, got: Understanding) -> list[str]:
    """Differences in vague / field / query_class / semantic query."""
    errors = []
    window = got.time
    if window is not None and case.has_time:
        if window.vague != case.vague:
            errors.append(f"vague {window.vague} != {case.vague}")
        if window.field != case.field:
            errors.append(f"field {window.field} != {case.field}")
    if got.query_class != case.query_class:
        errors.append(f"query_class {got.query_class} != {case.query_class}")
    if case.semantic is not None and got.semantic_query != case.semantic:
        errors.append(f"semantic_query {got.semantic_query!r} != {case.semantic!r}")
    reading = window.reading if window is not None else None
    readings = None if reading is None else (reading.chosen.isoformat(), reading.other.isoformat())
    if readings != case.ambiguous:
        errors.append(f"ambiguous {readings} != {case.ambiguous}")
    if window is not None and window.partial != case.partial:
        errors.append(f"partial {window.partial} != {case.partial}")
    return errors


def case_errors(case: Case) -> list[str]:
    """Everything wrong with one case; empty when the case passes."""
    got = run_case(case)
    return range_errors(case, got) + other_errors(case, got)
