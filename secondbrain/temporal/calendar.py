"""Calendar arithmetic for the time parser: local dates to aware instants, periods, recurrences,
and the person's conventions: holiday calendar, seasons, numeric date order.

Calendar boundaries are built from local wall-clock dates and then localised, so a "day" on a
DST change is 23 or 25 hours long.  Pure: no I/O, no clock reads.  Country holiday calendars
come from the ``holidays`` package (memoised per country and year).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Literal, get_args
from zoneinfo import ZoneInfo

from dateutil.easter import EASTER_ORTHODOX, EASTER_WESTERN
from dateutil.easter import easter as dateutil_easter

Hemisphere = Literal["north", "south"]
DateOrder = Literal["mdy", "dmy", "ymd"]

PARTS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 29)}
MONTHS_IN = {"month": 1, "quarter": 3, "year": 12, "decade": 120}


def lt(a: datetime, b: datetime) -> bool:
    """``a`` is an earlier instant than ``b``.  Plain ``<`` between datetimes sharing a tzinfo compares wall
    clocks and ignores ``fold``, which is wrong inside the repeated hour when DST ends."""
    return a.timestamp() < b.timestamp()


def add_months(d: date, n: int) -> date:
    """``d`` moved by ``n`` calendar months, the day clamped to the month's length."""
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    m += 1
    last = (date(y + (m == 12), m % 12 + 1, 1) - timedelta(days=1)).day
    return date(y, m, min(d.day, last))


def _month_start(y: int, m: int) -> date:
    return date(y, m, 1)


def _next_month_start(y: int, m: int) -> date:
    return date(y + 1, 1, 1) if m == 12 else date(y, m + 1, 1)


def safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Span:
    """A resolved interval plus what is needed to combine it with others."""

    start: datetime | None
    end: datetime | None
    grain: str  # "part", "day", "days", "week", "month", "quarter", "year", "decade", "rolling", "range", ...
    vague: bool = False
    # Another occurrence of a recurring expression ("Tuesday", "March" without a year): k periods later.
    shift: Callable[[int], Span | None] | None = dc_field(default=None, compare=False)
    first_day: date | None = None  # for calendar spans: the first local date covered
    last_day: date | None = None  # for calendar spans: the day after the last one covered
    # Read only in part: time words next to it were not understood ("the last working day of March" gives
    # March), so it may guide a search but must not filter one.
    partial: bool = False


class Ctx:
    """The reference time and zone every expression is resolved against."""

    def __init__(self, now: datetime, tz: ZoneInfo, week_start: int, conventions: Conventions | None = None) -> None:
        if now.tzinfo is None:
            now = now.replace(tzinfo=tz)  # a naive "now" is taken as the user's wall clock
        self.tz = tz
        self.now = now.astimezone(tz)
        self.today = self.now.date()
        self.week_start = week_start
        self.conventions = conventions or Conventions()

    # -- building aware datetimes from local wall-clock values

    def at(self, d: date, hour: int = 0) -> datetime:
        """Local wall-clock ``d`` at ``hour`` (may exceed 23), as an aware datetime that exists."""
        d = d + timedelta(days=hour // 24)
        naive = datetime.combine(d, time(hour % 24))
        return self.wall(naive)

    def wall(self, naive: datetime) -> datetime:
        # Round-trip through UTC so a wall time inside a DST gap becomes the real instant after it.
        return naive.replace(tzinfo=self.tz).astimezone(UTC).astimezone(self.tz)

    def days(self, first: date, after: date, grain: str = "days",
             shift: Callable[[int], Span | None] | None = None) -> Span:
        return Span(self.at(first), self.at(after), grain, shift=shift, first_day=first, last_day=after)

    def day(self, d: date, shift: Callable[[int], Span | None] | None = None) -> Span:
        return self.days(d, d + timedelta(days=1), "day", shift)

    def week_of(self, d: date) -> Span:
        start = d - timedelta(days=(d.weekday() - self.week_start) % 7)
        return self.days(start, start + timedelta(days=7), "week")

    def month(self, y: int, m: int, shift: Callable[[int], Span | None] | None = None) -> Span:
        return self.days(_month_start(y, m), _next_month_start(y, m), "month", shift)

    def year(self, y: int) -> Span:
        return self.days(date(y, 1, 1), date(y + 1, 1, 1), "year")

    def quarter(self, y: int, q: int, shift: Callable[[int], Span | None] | None = None) -> Span:
        first = date(y, 3 * q - 2, 1)
        return self.days(first, add_months(first, 3), "quarter", shift)

    def half(self, y: int, h: int, shift: Callable[[int], Span | None] | None = None) -> Span:
        first = date(y, 6 * h - 5, 1)
        return self.days(first, add_months(first, 6), "half", shift)

    def part(self, d: date, name: str) -> Span:
        lo, hi = PARTS[name]
        return Span(self.at(d, lo), self.at(d, hi), "part")

    def rolling(self, n: int, unit: str, vague: bool = False, forward: bool = False) -> Span | None:
        """[now - n units, now) (or [now, now + n units) ``forward``): wall-clock for calendar units, so
        "the past 3 days" starts at this time of day; absolute for hours and minutes."""
        if n <= 0:
            return None
        sign = 1 if forward else -1
        naive = self.now.replace(tzinfo=None)
        if unit in ("minute", "hour"):
            step = timedelta(minutes=n) if unit == "minute" else timedelta(hours=n)
            other = (self.now.astimezone(UTC) + sign * step).astimezone(self.tz)
        elif unit in ("day", "week", "fortnight"):
            other = self.wall(naive + sign * timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit]))
        else:
            moved = add_months(naive.date(), sign * n * MONTHS_IN[unit])
            other = self.wall(datetime.combine(moved, naive.time()))
        if forward:
            return Span(self.now, other, "rolling", vague=vague)
        return Span(other, self.now, "rolling", vague=vague)

    def unit_period(self, d: date, unit: str) -> Span:
        """The calendar day/week/month/quarter/year containing ``d`` (a fortnight's is its week)."""
        if unit == "day":
            return self.day(d)
        if unit in ("week", "fortnight"):
            return self.week_of(d)
        if unit == "month":
            return self.month(d.year, d.month)
        if unit == "quarter":
            return self.quarter(d.year, (d.month - 1) // 3 + 1)
        return self.year(d.year)

    def back(self, n: int, unit: str) -> date:
        """Today moved back ``n`` calendar units."""
        if unit == "day":
            return self.today - timedelta(days=n)
        if unit in ("week", "fortnight"):
            return self.today - timedelta(weeks=n * (2 if unit == "fortnight" else 1))
        return add_months(self.today, -n * MONTHS_IN[unit])

    def weekend_starting(self, sat: date) -> Span:
        return self.days(sat, sat + timedelta(days=2), "weekend")


def part_of(ctx: Ctx, day_span: Span, name: str) -> Span | None:
    return None if day_span.first_day is None else ctx.part(day_span.first_day, name)


def occurrence(span: Span, ok: Callable[[Span], bool], prefer: Literal["latest", "earliest"]) -> Span | None:
    """Among a recurring span's occurrences, the latest (or earliest) one satisfying ``ok``."""
    if span.shift is None:
        return span if ok(span) else None
    step = 1 if prefer == "latest" else -1
    # Walk away from the wanted side until ``ok`` holds, then as far towards it as ``ok`` still holds.
    k = 0
    cur: Span | None = span
    for _ in range(400):
        if cur is not None and ok(cur):
            break
        k -= step
        cur = span.shift(k)
    else:
        return None
    assert cur is not None
    for _ in range(400):
        nxt = span.shift(k + step)
        if nxt is None:
            nxt2 = span.shift(k + 2 * step)  # skip an occurrence that does not exist (29 Feb)
            if nxt2 is None or not ok(nxt2):
                break
            k, cur = k + 2 * step, nxt2
            continue
        if not ok(nxt):
            break
        k, cur = k + step, nxt
    return cur


def _starts_before(t: datetime) -> Callable[[Span], bool]:
    return lambda s: s.start is not None and lt(s.start, t)


def _ends_after(t: datetime) -> Callable[[Span], bool]:
    return lambda s: s.end is not None and lt(t, s.end)


def pair(ctx: Ctx, a: Span, b: Span) -> Span | None:
    """[a.start, b.end), moving recurring ends so the range is ordered and as recent as possible."""
    if a.start is None or b.end is None:
        return None
    first: Span | None = a
    last: Span | None = b
    if a.shift is not None and b.shift is None:
        first = occurrence(a, _starts_before(b.end), "latest")
    elif b.shift is not None:
        last = occurrence(b, _ends_after(a.start), "earliest")
        if a.shift is not None and last is not None and last.start is not None and lt(ctx.now, last.start):
            # Both recur and the end lies in the future: take the previous, fully past occurrence.
            earlier = a.shift(-1)
            if earlier is not None and earlier.start is not None:
                again = occurrence(b, _ends_after(earlier.start), "earliest")
                if again is not None:
                    first, last = earlier, again
    if first is None or last is None or first.start is None or last.end is None or not lt(first.start, last.end):
        return None
    return Span(first.start, last.end, "range")


def recurring(span: Span, f: Callable[[Span], Span | None]) -> Span | None:
    """``f(span)``, keeping the ability to move to the other occurrences of ``span``."""
    out = f(span)
    if out is None or span.shift is None:
        return out
    shift = span.shift

    def other(k: int) -> Span | None:
        moved = shift(k)
        return None if moved is None else recurring(moved, f)

    return replace(out, shift=other)


def sub_period(ctx: Ctx, span: Span, where: str) -> Span | None:
    """The early/mid/late third of a month (days 1-10/11-20/21-end), a year (4 months each), a quarter
    or a season (a month each) or a decade (years 0-3/4-6/7-9: "the late 90s" is 1997-1999)."""
    first = span.first_day
    if first is None or span.last_day is None:
        return None
    if span.grain == "month":
        cuts = [first, first.replace(day=11), first.replace(day=21), span.last_day]
    elif span.grain == "year":
        cuts = [first, first.replace(month=5), first.replace(month=9), span.last_day]
    elif span.grain in ("season", "quarter"):  # a month each: "early summer" is June in the north
        cuts = [first, add_months(first, 1), add_months(first, 2), span.last_day]
    elif span.grain == "decade":
        cuts = [first, first.replace(year=first.year + 4), first.replace(year=first.year + 7), span.last_day]
    else:
        return None
    i = {"early": 0, "mid": 1, "late": 2}[where]
    return ctx.days(cuts[i], cuts[i + 1], span.grain + "-part")



# --------------------------------------------------------------------------- conventions

# Where numeric dates are written month first; everywhere else day first, except the year-first
# countries (whose "3/12" is still month first, like the US).
_MDY = frozenset({"US", "PH", "FM", "MH", "PW", "GU", "PR", "AS", "MP", "VI", "UM"})
_YMD = frozenset({"CN", "JP", "KR", "TW", "HU", "MN", "LT"})
# Where the seasons are the other way round (mostly south of the equator).
_SOUTH = frozenset({"AR", "AU", "BO", "BR", "BW", "CL", "FJ", "LS", "MG", "MU", "MW", "MZ", "NA", "NZ", "PE",
                    "PY", "SZ", "UY", "ZA", "ZM", "ZW"})
# A locale without a territory ("fr", "de"): the country most people who write it live in.
_LANGUAGE_COUNTRY = {"en": "US", "fr": "FR", "de": "DE", "es": "ES", "it": "IT", "nl": "NL", "pt": "PT", "sv": "SE",
                     "da": "DK", "nb": "NO", "nn": "NO", "no": "NO", "fi": "FI", "pl": "PL", "cs": "CZ", "ja": "JP",
                     "zh": "CN", "ko": "KR", "hu": "HU", "el": "GR", "he": "IL", "hi": "IN", "ru": "RU", "uk": "UA",
                     "tr": "TR"}
_LOCALE = re.compile(r"(?P<lang>[A-Za-z]{2,3})(?:[_-](?P<script>[A-Za-z]{4}))?(?:[_-](?P<terr>[A-Za-z]{2}|\d{3}))?"
                     r"(?:[.@].*)?")


@dataclass(frozen=True, slots=True)
class Conventions:
    """How a person's calendar reads: the country whose holidays count ("Thanksgiving", "Mother's Day"),
    the hemisphere for seasons, and the order of day and month in numeric dates ("3/12")."""

    country: str = "US"  # ISO 3166-1 alpha-2
    hemisphere: Hemisphere = "north"
    date_order: DateOrder = "mdy"

    @classmethod
    def for_locale(cls, locale: str | None, *, country: str | None = None, hemisphere: str | None = None,
                   date_order: str | None = None) -> Conventions:
        """Conventions from a locale such as ``en_US``, ``en-GB`` or ``de_DE.UTF-8``: the country is its
        territory, the hemisphere follows the country, the date order follows the territory (month first
        in the US, day first in most of the world).  Explicit values win; ``C``/``POSIX`` or an unreadable
        locale count as ``en_US``."""
        m = _LOCALE.fullmatch(locale.strip()) if locale else None
        lang = m.group("lang").lower() if m else "en"
        terr = (m.group("terr") or "").upper() if m else "US"
        if lang in ("c", "posix"):
            lang, terr = "en", "US"
        if not terr.isalpha():
            terr = ""
        place = (country or terr or _LANGUAGE_COUNTRY.get(lang, "US")).upper()
        if hemisphere not in (None, *get_args(Hemisphere)):
            raise ValueError(f"hemisphere must be north or south, not {hemisphere!r}")
        if date_order not in (None, *get_args(DateOrder)):
            raise ValueError(f"date_order must be mdy, dmy or ymd, not {date_order!r}")
        if not re.fullmatch(r"[A-Z]{2}", place):
            raise ValueError(f"country must be an ISO 3166 two-letter code, not {place!r}")
        order_of = terr or place
        order = date_order or ("mdy" if order_of in _MDY or (lang == "en" and order_of == "CA")
                               else "ymd" if order_of in _YMD else "dmy")
        half = hemisphere or ("south" if place in _SOUTH else "north")
        return cls(place, half, order)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- holidays

def easter(y: int) -> date:
    """Western Easter Sunday of ``y`` (the Gregorian computus, as dateutil computes it)."""
    return dateutil_easter(y, EASTER_WESTERN)


def nth_in(first: date, after: date, weekday: int | None, n: int) -> date | None:
    """The ``n``-th ``weekday`` (0 = Monday; None = any day) in ``[first, after)``; ``n < 0`` counts from the
    end (-1 the last, -2 the one before it); None when the period has fewer."""
    if n > 0:
        d = first + timedelta(days=0 if weekday is None else (weekday - first.weekday()) % 7)
        d += timedelta(days=(n - 1) * (1 if weekday is None else 7))
    else:
        last = after - timedelta(days=1)
        d = last - timedelta(days=0 if weekday is None else (last.weekday() - weekday) % 7)
        d -= timedelta(days=(-n - 1) * (1 if weekday is None else 7))
    return d if first <= d < after else None


def nth_weekday(y: int, month: int, weekday: int, n: int) -> date:
    """The ``n``-th ``weekday`` (0 = Monday) of a month; ``n = -1`` is the last one."""
    if n > 0:
        first = date(y, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = _next_month_start(y, month) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


@lru_cache(maxsize=512)
def _listed(country: str, year: int) -> tuple[tuple[date, str], ...]:
    """What the ``holidays`` package lists for ``country`` in ``year``, every category, English names where
    it has them, observed-on-another-day entries left out."""
    try:
        import holidays

        base = holidays.country_holidays(country)
        language = "en_US" if "en_US" in (getattr(base, "supported_languages", ()) or ()) else None
        with warnings.catch_warnings():  # a year outside a calendar's range lists nothing: the rules apply
            warnings.simplefilter("ignore")
            cal = holidays.country_holidays(country, years=year, categories=base.supported_categories,
                                            language=language, observed=False)
            listed = tuple(sorted((d, name.strip()) for d, names in cal.items() for name in names.split(";")))
    except (NotImplementedError, KeyError, ValueError, AttributeError):
        return ()  # a country the package does not know: the rules below still apply
    return listed


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def _listed_days(pattern: str, countries: tuple[str, ...], year: int) -> list[date]:
    """The days in ``year`` listed under a name matching ``pattern``, in the first of ``countries`` that lists
    any (the user's own first, then the reference for feasts it does not keep)."""
    rx = _compiled(pattern)
    for country in countries:
        days = [d for d, name in _listed(country, year) if rx.fullmatch(name)]
        if days:
            return days
    return []


def _listed_day(pattern: str, countries: tuple[str, ...], year: int) -> date | None:
    days = _listed_days(pattern, countries, year)
    return days[0] if days else None


def _listed_block(pattern: str, countries: tuple[str, ...], year: int) -> tuple[date, date] | None:
    """The run of consecutive listed days that starts in ``year`` (Hanukkah may run into January)."""
    days = [d for y in (year - 1, year, year + 1) for d in _listed_days(pattern, countries, y)]
    starts = [d for d in days if d.year == year and d - timedelta(days=1) not in days]
    if not starts:
        return None
    end = starts[0]
    while end + timedelta(days=1) in days:
        end += timedelta(days=1)
    return starts[0], end + timedelta(days=1)


def orthodox_easter(y: int) -> date:
    """Orthodox Easter Sunday of ``y``: the Julian computus, moved to the Gregorian calendar (dateutil)."""
    return dateutil_easter(y, EASTER_ORTHODOX)


# Where Easter is kept by the Julian computus even when the package lists no Easter holiday there.
_ORTHODOX = frozenset({"BG", "BY", "CY", "GE", "GR", "MD", "ME", "MK", "RO", "RS", "RU", "UA"})


def _country_easter(y: int, country: str) -> date:
    """Easter Sunday as the country keeps it: its own Good Friday or Easter Monday where the package lists
    one (Orthodox countries list theirs), else the Orthodox or the Gregorian computus."""
    computed = orthodox_easter(y) if country in _ORTHODOX else easter(y)
    for pattern, offset in (("easter(?: sunday)?", 0), ("good friday", 2), ("easter monday", -1)):
        d = _listed_day(pattern, (country,), y)
        if d is not None and abs((d + timedelta(days=offset) - computed).days) <= 40:
            return d + timedelta(days=offset)
    return computed


def _one(d: date | None) -> tuple[date, date] | None:
    return None if d is None else (d, d + timedelta(days=1))


def _fixed(month: int, day: int) -> Callable[[int, str], tuple[date, date] | None]:
    return lambda y, country: _one(date(y, month, day))


def _after_easter(offset: int, length: int = 1) -> Callable[[int, str], tuple[date, date] | None]:
    def days(y: int, country: str) -> tuple[date, date]:
        first = _country_easter(y, country) + timedelta(days=offset)
        return first, first + timedelta(days=length)
    return days


def _us_thanksgiving(y: int) -> date:
    return nth_weekday(y, 11, 3, 4)


def _thanksgiving(y: int, country: str) -> date:
    """The country's Thanksgiving where the package lists one (Canada: 2nd Monday of October), else the US
    one (4th Thursday of November): the word is mostly American."""
    return _listed_day("thanksgiving(?: day)?", (country,), y) or _us_thanksgiving(y)


def _thanksgiving_weekend(y: int, country: str) -> tuple[date, date]:
    day = _thanksgiving(y, country)
    if day.weekday() == 0:  # a Monday holiday: the long weekend before it
        return day - timedelta(days=2), day + timedelta(days=1)
    return day, day + timedelta(days=4)  # Thursday to Sunday


def _mothers_day(y: int, country: str) -> date:
    listed = _listed_day("mother'?s day", (country,), y)
    if listed is not None:
        return listed
    if country in ("GB", "IE", "NG"):
        return easter(y) - timedelta(days=21)  # Mothering Sunday: the fourth Sunday of Lent
    if country in ("FR", "MA", "TN", "DZ"):
        last = nth_weekday(y, 5, 6, -1)  # last Sunday of May, unless it is Pentecost
        return last + timedelta(days=7) if last == easter(y) + timedelta(days=49) else last
    if country in ("ES", "PT", "LT", "HU", "RO"):
        return nth_weekday(y, 5, 6, 1)
    if country in ("MX", "GT", "SV"):
        return date(y, 5, 10)
    return nth_weekday(y, 5, 6, 2)  # second Sunday of May: the US, Canada, Australia, Germany, Italy, Japan...


def _fathers_day(y: int, country: str) -> date:
    listed = _listed_day("father'?s day", (country,), y)
    if listed is not None:
        return listed
    if country in ("AU", "NZ", "FJ", "PG"):
        return nth_weekday(y, 9, 6, 1)
    if country in ("DE",):
        return easter(y) + timedelta(days=39)  # Vatertag is Ascension Day
    if country in ("IT", "ES", "PT"):
        return date(y, 3, 19)  # Saint Joseph's day
    if country == "BR":
        return nth_weekday(y, 8, 6, 2)
    return nth_weekday(y, 6, 6, 3)  # third Sunday of June: the US, the UK, Canada, France...


def _listed_or(pattern: str, fallback: Callable[[int], date], *reference: str
               ) -> Callable[[int, str], tuple[date, date] | None]:
    """A day the package lists for the user's country (or a reference country), else ``fallback``."""
    return lambda y, country: _one(_listed_day(pattern, (country, *reference), y) or fallback(y))


def _listed_only(pattern: str, *reference: str, block: bool = False
                 ) -> Callable[[int, str], tuple[date, date] | None]:
    """A feast on a lunar or lunisolar calendar: only the package knows its dates (None outside its years)."""
    if block:
        return lambda y, country: _listed_block(pattern, (country, *reference), y)
    return lambda y, country: _one(_listed_day(pattern, (country, *reference), y))


def _long_weekend(monday: Callable[[int], date]) -> Callable[[int, str], tuple[date, date] | None]:
    return lambda y, country: (monday(y) - timedelta(days=2), monday(y) + timedelta(days=1))


def _labor_day(y: int) -> date:
    return nth_weekday(y, 9, 0, 1)


def _memorial_day(y: int) -> date:
    return nth_weekday(y, 5, 0, -1)


# Every named day or holiday period: key -> (year, country) -> [first day, day after the last).  The year is
# the one the feast is named by: "Christmas holidays 2024" start on 24 Dec 2024, "New Year 2025" is
# 31 Dec 2024 - 1 Jan 2025.
FEASTS: dict[str, Callable[[int, str], tuple[date, date] | None]] = {
    "new_years_day": _fixed(1, 1),
    "new_years_eve": _fixed(12, 31),
    "new_year": lambda y, country: (date(y - 1, 12, 31), date(y, 1, 2)),
    "valentines_day": _fixed(2, 14),
    "st_patricks_day": _fixed(3, 17),
    "halloween": _fixed(10, 31),
    "bonfire_night": _fixed(11, 5),
    "christmas_eve": _fixed(12, 24),
    "christmas_day": _fixed(12, 25),
    "boxing_day": _fixed(12, 26),
    "christmas_holidays": lambda y, country: (date(y, 12, 24), date(y + 1, 1, 2)),
    "ash_wednesday": _after_easter(-46),
    "palm_sunday": _after_easter(-7),
    "maundy_thursday": _after_easter(-3),
    "good_friday": _after_easter(-2),
    "easter_sunday": _after_easter(0),
    "easter_monday": _after_easter(1),
    "easter_weekend": _after_easter(-2, 4),  # Good Friday to Easter Monday
    "ascension_day": _after_easter(39),
    "pentecost": _after_easter(49),
    "whit_monday": _after_easter(50),
    "thanksgiving_day": lambda y, country: _one(_thanksgiving(y, country)),
    "thanksgiving_weekend": _thanksgiving_weekend,
    "black_friday": lambda y, country: _one(_us_thanksgiving(y) + timedelta(days=1)),
    "cyber_monday": lambda y, country: _one(_us_thanksgiving(y) + timedelta(days=4)),
    "mothering_sunday": lambda y, country: _one(easter(y) - timedelta(days=21)),
    "mothers_day": lambda y, country: _one(_mothers_day(y, country)),
    "fathers_day": lambda y, country: _one(_fathers_day(y, country)),
    "mlk_day": _listed_or("martin luther king,? jr\\.? day", lambda y: nth_weekday(y, 1, 0, 3)),
    "presidents_day": _listed_or("washington's birthday|presidents'? day", lambda y: nth_weekday(y, 2, 0, 3)),
    "memorial_day": _listed_or("memorial day", _memorial_day),
    "memorial_day_weekend": _long_weekend(_memorial_day),
    "juneteenth": _fixed(6, 19),
    "independence_day": _listed_or("independence day", lambda y: date(y, 7, 4)),
    "fourth_of_july": _fixed(7, 4),
    "labor_day": _listed_or("labou?r day", _labor_day),
    "labor_day_weekend": _long_weekend(_labor_day),
    "columbus_day": _listed_or("columbus day", lambda y: nth_weekday(y, 10, 0, 2)),
    "veterans_day": _fixed(11, 11),
    "canada_day": _fixed(7, 1),
    "australia_day": _fixed(1, 26),
    "bastille_day": _fixed(7, 14),
    "lunar_new_year": _listed_only("(?:chinese|lunar) new year(?: \\(spring festival\\))?|spring festival", "CN"),
    "diwali": _listed_only("diwali|deepavali", "IN"),
    "eid_al_fitr": _listed_only("eid al-fitr(?: \\(estimated\\))?", "AE"),
    "eid_al_adha": _listed_only("eid al-adha(?: \\(estimated\\))?", "AE"),
    "hanukkah": _listed_only("hanukkah", "IL", block=True),
    "passover": _listed_only("(?:seventh day of )?pesach(?: holiday)?", "IL", block=True),
    "rosh_hashanah": _listed_only("rosh hashanah", "IL", block=True),
    "yom_kippur": _listed_only("yom kippur", "IL"),
}


def feast_days(key: str, year: int, country: str) -> tuple[date, date] | None:
    """[first day, day after the last) of the feast ``key`` named by ``year``, as kept in ``country``."""
    try:
        return FEASTS[key](year, country.upper())
    except (ValueError, OverflowError):
        return None


# --------------------------------------------------------------------------- seasons

# The first month of each meteorological season in the northern hemisphere; the south is six months on.
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def season_days(name: str, year: int, hemisphere: str) -> tuple[date, date]:
    """[first day, day after the last) of a meteorological season named by ``year``.  The season that spans
    the new year (northern winter, southern summer) is named by the year of its January: "winter 2024" in
    the north is December 2023 - February 2024."""
    first_month = _SEASON_START[name]
    if hemisphere == "south":
        first_month = (first_month + 5) % 12 + 1
    first = date(year - 1, 12, 1) if first_month == 12 else date(year, first_month, 1)
    return first, add_months(first, 3)


def spans_new_year(name: str, hemisphere: str) -> bool:
    return season_days(name, 2001, hemisphere)[0].year == 2000
