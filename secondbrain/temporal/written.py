"""Times written as a person says them, in the person's date order: a day, "the week before June 9, 2023", a
month, a year (an answer's glosses, the agenda's headings)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from secondbrain.temporal.mentions import Mention


@dataclass(frozen=True, slots=True)
class Calendar:
    """Dates written the person's way: "Fri, July 28, 2023" (month first), "Fri 28 July 2023" (day first)."""

    order: str = "mdy"

    def date(self, d: datetime) -> str:
        if self.order == "ymd":
            return d.strftime("%Y-%m-%d")
        return d.strftime("%B %-d, %Y") if self.order == "mdy" else d.strftime("%-d %B %Y")

    def day(self, d: datetime) -> str:
        if self.order == "ymd":
            return d.strftime("%Y-%m-%d (%a)")
        return d.strftime("%a, %B %-d, %Y") if self.order == "mdy" else d.strftime("%a %-d %B %Y")

    def days(self, first: datetime, last: datetime, *, year: bool = True) -> str:
        """A stretch of days: "July 24\u201330, 2023", "24\u201330 July 2023" (the year left out on request)."""
        if self.order == "ymd":
            return f"{first.strftime('%Y-%m-%d')} \u2013 {last.strftime('%Y-%m-%d')}"
        tail = f", {last.year}" if self.order == "mdy" and year else f" {last.year}" if year else ""
        if (first.year, first.month) == (last.year, last.month):
            return (f"{first.strftime('%B')} {first.day}\u2013{last.day}{tail}" if self.order == "mdy"
                    else f"{first.day}\u2013{last.day} {last.strftime('%B')}{tail}")
        if first.year == last.year:
            return (f"{first.strftime('%B %-d')} \u2013 {last.strftime('%B %-d')}{tail}" if self.order == "mdy"
                    else f"{first.strftime('%-d %B')} \u2013 {last.strftime('%-d %B')}{tail}")
        return f"{self.date(first)} \u2013 {self.date(last)}"


def written_span(m: Mention, tz: ZoneInfo, said_at: datetime, order: str = "mdy") -> str:
    """A time a passage speaks of, written as a person says it (in the date ``order`` given)."""
    return span_words(m, tz, said_at, Calendar(order))


_SEASON = re.compile(r"\b(?:spring|summer|autumn|fall|winter)\b", re.I)


def span_words(m: Mention, tz: ZoneInfo, said_at: datetime, cal: Calendar) -> str:
    """A span of time as a person says it: a day, "the week before June 9, 2023", a month, a year."""
    first = m.start.astimezone(tz)
    last = (m.end - timedelta(microseconds=1)).astimezone(tz)
    said = said_at.astimezone(tz)
    if first.date() == last.date() or last - first < timedelta(days=1):
        return cal.day(first)  # a day, or a night ("last night": the evening it began)
    if first.day == 1 and (last + timedelta(days=1)).day == 1 and first.month == last.month:
        return first.strftime("%B %Y")
    if first.month == 1 and first.day == 1 and last.month == 12 and last.day == 31 and first.year == last.year:
        return str(first.year)
    days = (last.date() - first.date()).days + 1
    season = _SEASON.search(m.expression)
    if season is not None and first.day == 1 and (last + timedelta(days=1)).day == 1 and 80 <= days <= 93:
        # "last summer" = "summer 2023": the season as a person names it, then its months
        year = str(first.year) if first.year == last.year else f"{first.year}-{last.year % 100:02d}"
        return f"{season.group(0).lower()} {year}, {cal.days(first, last, year=first.year != last.year)}"
    if last < said and days in (7, 2, 3) and (said.date() - last.date()).days <= 7:
        what = "week" if days == 7 else "weekend"  # how a person would put it, then the days themselves
        return f"the {what} before {cal.date(said)}, {cal.days(first, last, year=False)}"
    return cal.days(first, last)
