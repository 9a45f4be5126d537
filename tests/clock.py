"""Time for tests: a fixed "now", and the moments the every-day check runs time-sensitive tests at.

A test never asks the real clock what "yesterday" or "last week" means: it takes a ``now`` (the
engine, ``/v1/search``, ``/v1/ask`` and the CLI's ``--as-of`` accept one) and places its data
relative to it.  Where only the real clock will do (ingestion time, which the pipeline stamps),
the test asks "as of" the moment its data was saved.

``MOMENTS`` is the every-day check: seven consecutive days (Monday to Sunday, each at another hour,
midnight's neighbours included), both daylight-saving changes of Europe/Paris and of a southern
zone, and zones on either side of UTC.  Tests that take the ``moment`` fixture run at each of
them, with the process's own time zone (``TZ``) set to another zone than the user's, so neither
the weekday nor the hour nor the zone of the machine that runs the suite can decide the outcome.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

PARIS = ZoneInfo("Europe/Paris")
#: The reference "now" of tests that do not sweep: a Tuesday morning in Paris.
REFERENCE = datetime(2026, 11, 24, 10, 30, tzinfo=PARIS)


@dataclass(frozen=True, slots=True)
class Moment:
    """A "now" for a test: an aware time in the user's zone, and the zone the process runs in."""

    id: str
    now: datetime
    process_tz: str = "UTC"

    @property
    def tz(self) -> ZoneInfo:
        """The user's time zone."""
        assert isinstance(self.now.tzinfo, ZoneInfo)
        return self.now.tzinfo

    def local(self, days_ago: int, hour: int = 10, minute: int = 0) -> datetime:
        """``hour:minute`` local time, ``days_ago`` calendar days before ``now``'s date."""
        day = self.now.date() - timedelta(days=days_ago)
        return datetime(day.year, day.month, day.day, hour, minute, tzinfo=self.tz)

    def last_week(self, weekday: int, hour: int = 11) -> datetime:
        """``weekday`` (0 = Monday) of the calendar week before ``now``'s, at ``hour`` local time."""
        monday = self.now.date() - timedelta(days=self.now.weekday() + 7)
        day = monday + timedelta(days=weekday)
        return datetime(day.year, day.month, day.day, hour, tzinfo=self.tz)


def _at(day: date, hour: int, minute: int, tz: ZoneInfo) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)


def _week() -> list[Moment]:
    """Monday 23 to Sunday 29 November 2026 in Paris, at hours from just after midnight to just before."""
    hours = [(0, 5), (10, 30), (23, 55), (6, 0), (12, 0), (18, 0), (21, 30)]
    out = []
    for i, (h, m) in enumerate(hours):
        day = date(2026, 11, 23) + timedelta(days=i)
        out.append(Moment(f"{day:%a}-{h:02d}{m:02d}-paris".lower(), _at(day, h, m, PARIS),
                          process_tz="America/New_York" if i % 2 else "Asia/Tokyo"))
    return out


MOMENTS: list[Moment] = [
    *_week(),
    # Daylight-saving changes: the 23-hour day itself and the morning after it (whose "yesterday" is
    # 23 hours long), the 25-hour autumn day, and a "last week" holding the autumn change.
    Moment("dst-spring-day-paris", _at(date(2026, 3, 29), 12, 0, PARIS)),
    Moment("dst-spring-after-paris", _at(date(2026, 3, 30), 0, 30, PARIS), process_tz="Europe/London"),
    Moment("dst-autumn-day-paris", _at(date(2026, 10, 25), 23, 30, PARIS)),
    Moment("dst-autumn-last-week-paris", _at(date(2026, 10, 28), 9, 0, PARIS), process_tz="Pacific/Auckland"),
    # The southern hemisphere changes the other way, and zones far from UTC turn the UTC date over.
    Moment("dst-spring-auckland", _at(date(2026, 9, 28), 7, 0, ZoneInfo("Pacific/Auckland"))),
    Moment("evening-los-angeles", _at(date(2026, 11, 25), 22, 45, ZoneInfo("America/Los_Angeles"))),
    Moment("morning-kolkata", _at(date(2026, 11, 26), 1, 15, ZoneInfo("Asia/Kolkata")),
           process_tz="America/Los_Angeles"),
]


@contextmanager
def process_zone(name: str) -> Iterator[None]:
    """Run with the process's local time zone set to ``name`` (what a machine elsewhere would have)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()
