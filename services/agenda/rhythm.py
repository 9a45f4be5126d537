"""Arrangements that come back on a rhythm a person does not keep in their head, read from what they wrote
(pure, no I/O): "every other Friday", "fortnightly on Wednesdays", "every three weeks from Thursday 3
December", "the first Monday of each month", "the last Friday of every month", "every 8 weeks, next visit
Monday 14 December".  Each is on the agenda every time it falls.

What recurs every day or every week ("every Monday", "on Tuesdays", "every weekday") and on a day of the month
("the 1st of every month") stays a habit (``services.agenda.happenings.Habit``): a routine the person knows,
shown only when asked for.  A calendar's own repeat rules are the calendar import's.

The occurrences are worked out with python-dateutil's ``rrule``: from the first one, in steps of the rhythm.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal

from dateutil.rrule import MONTHLY, WEEKLY, rrule, weekday

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
            "twelve": 12, "other": 2, "second": 2, "alternate": 2, "third": 3, "fourth": 4}
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1,
        "final": -1}
_COUNT = rf"(?P<n>\d{{1,2}}|{'|'.join(_NUMBERS)})"
# "every other Friday", "every second Tuesday", "every 3 weeks", "every two weeks on Mondays", "fortnightly"
_EVERY_WEEKS = re.compile(
    rf"\b(?:every|each)\s+(?:{_COUNT}\s+(?:(?P<wd>{_WEEKDAY})\b|weeks?\b)|fortnight\b)|\bfortnightly\b|\bbi-?weekly\b",
    re.I)
# "the first Monday of each month", "on the last Friday of every month", "second Tuesday of the month"
_NTH_OF_MONTH = re.compile(
    rf"\b(?:the\s+)?(?P<nth>{'|'.join(_NTH)})\s+(?P<wd>{_WEEKDAY})\s+(?:of|in)\s+(?:each|every|the)\s+month\b", re.I)
# "every 3 months", "every other month", "quarterly" (on the day it starts)
_EVERY_MONTHS = re.compile(rf"\b(?:every|each)\s+{_COUNT}\s+months?\b|\b(?P<q>quarterly)\b", re.I)
_ANY_WEEKDAY = re.compile(rf"\b(?P<wd>{_WEEKDAY})\b", re.I)


@dataclass(frozen=True, slots=True)
class Rhythm:
    """How an arrangement comes back: every ``interval`` weeks on ``weekday``, or every ``interval`` months on
    the ``nth`` ``weekday`` (``-1``: the last) or on the first occurrence's day of the month; from ``first``."""

    freq: Literal["weekly", "monthly"]
    interval: int
    first: date
    weekday: int | None = None  # 0 = Monday
    nth: int | None = None

    def days(self, start: date, end: date) -> Iterator[date]:
        """The days it falls on in ``[start, end)``, earliest first."""
        begin = max(start, self.first)
        if begin >= end:
            return
        if self.freq == "weekly":
            rule = rrule(WEEKLY, interval=self.interval, dtstart=_midnight(self.first), until=_midnight(end))
        elif self.weekday is not None and self.nth is not None:
            rule = rrule(MONTHLY, interval=self.interval, dtstart=_midnight(self.first), until=_midnight(end),
                         byweekday=weekday(self.weekday, self.nth))
        else:
            rule = rrule(MONTHLY, interval=self.interval, dtstart=_midnight(self.first), until=_midnight(end),
                         bymonthday=self.first.day)
        for moment in rule.xafter(_midnight(begin), inc=True):
            if moment.date() >= end:
                return
            yield moment.date()

    def words(self) -> str:
        """The rhythm as a person says it: "every other Friday", "the first Monday of each month"."""
        day = WEEKDAYS[self.weekday].capitalize() if self.weekday is not None else None
        if self.freq == "weekly":
            every = {1: "every", 2: "every other"}.get(self.interval, f"every {self.interval} weeks on")
            return f"{every} {day or WEEKDAYS[self.first.weekday()].capitalize()}"
        if self.nth is not None and day is not None:
            nth = {1: "first", 2: "second", 3: "third", 4: "fourth", -1: "last"}[self.nth]
            months = "each month" if self.interval == 1 else f"every {self.interval} months"
            return f"the {nth} {day} of {months}"
        return f"every {self.interval} months on the {_ordinal(self.first.day)}" if self.interval > 1 \
            else f"every month on the {_ordinal(self.first.day)}"


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(0))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _weekday_number(word: str) -> int:
    key = word.lower()[:3]
    return next(i for i, name in enumerate(WEEKDAYS) if name.startswith(key))


def said_rhythm(text: str) -> tuple[str, int | None, int | None, int] | None:
    """What rhythm ``text`` says, if any: ``(freq, weekday, nth, interval)``; ``None`` for none or for a habit
    (every day, every week, a day of the month)."""
    m = _NTH_OF_MONTH.search(text)
    if m:
        return "monthly", _weekday_number(m.group("wd")), _NTH[m.group("nth").lower()], 1
    m = _EVERY_WEEKS.search(text)
    if m:
        count = (m.group("n") or "").lower()
        interval = 2 if not count else int(count) if count.isdigit() else _NUMBERS.get(count, 0)
        if interval < 2 or interval > 26:
            return None  # "every week" is a habit; "every 40 weeks" is no rhythm anyone keeps
        named = m.group("wd") or (found.group("wd") if (found := _ANY_WEEKDAY.search(text)) else None)
        return "weekly", _weekday_number(named) if named else None, None, interval
    m = _EVERY_MONTHS.search(text)
    if m:
        count = (m.group("n") or "").lower()
        interval = 3 if m.group("q") else int(count) if count.isdigit() else _NUMBERS.get(count, 0)
        return ("monthly", None, None, interval) if 2 <= interval <= 12 else None
    return None


def rhythm_from(said: tuple[str, int | None, int | None, int], anchor: date | None, today: date) -> Rhythm | None:
    """The rhythm ``said`` from its first time: the ``anchor`` date the text gives ("from 30 November", "the
    next one is on 2 December") when it falls on the rhythm's weekday, else the first day on or after it (or
    on or after ``today``) that does."""
    freq, wd, nth, interval = said
    start = anchor or today
    if freq == "weekly":
        if wd is None:
            if anchor is None:
                return None  # "every three weeks" from when?
            wd = anchor.weekday()
        first = start + timedelta(days=(wd - start.weekday()) % 7)
        return Rhythm("weekly", interval, first, wd)
    if wd is not None and nth is not None:
        found = next(Rhythm("monthly", 1, start.replace(day=1), wd, nth).days(start, start + timedelta(days=70)),
                     None)
        return Rhythm("monthly", interval, found, wd, nth) if found is not None else None
    if anchor is None:
        return None  # "every 3 months" from when?
    return Rhythm("monthly", interval, anchor)


def without_rhythm(text: str) -> str:
    """``text`` with its words of rhythm blanked out (same length), so that what is left is read for a date."""
    for pattern in (_NTH_OF_MONTH, _EVERY_WEEKS, _EVERY_MONTHS):
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text
