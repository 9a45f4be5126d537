"""Temporal understanding of questions: which time window a question is about.

``understand("what did I save about the budget last week?", now, tz)`` finds the time
words ("last week"), turns them into a half-open ``[start, end)`` window of aware
datetimes in the user's zone, says which payload field the window applies to
(``ingested_at`` for "saved/uploaded/added/imported", ``captured_at`` otherwise) and
what is left to search for semantically ("budget").

Everything here is pure and deterministic: no I/O, no clock reads (``now`` is an
argument), stdlib only.  Calendar boundaries are built from local wall-clock dates and
then localised, so a "day" on a DST change is 23 or 25 hours long.

Supported (English, case-insensitive, whole words only):

* days: today, tonight, this morning/afternoon/evening, last night, yesterday, the day
  before yesterday, tomorrow, the day after tomorrow; any single-day expression followed
  by morning/afternoon/evening/night ("yesterday evening", "Tuesday morning").
  Parts of day: morning 05-12, afternoon 12-18, evening 18-24, night 18-05 (next day).
* weekdays: "on Tuesday"/"Tuesday"/"last Tuesday"/"past Tuesday" = the most recent Tuesday
  strictly before today (never today); "this Tuesday" = Tuesday of the current week;
  "next/coming Tuesday" = the first Tuesday strictly after today; "Tuesday last/this/next
  week".  Abbreviations (Tue, Sat...) only after on/last/this/next; a bare capitalised
  weekday before another capitalised word is a title ("the Sunday Times"), and "Black
  Friday"/"Good Friday" are not days.
* weeks (first day is the ``week_start`` parameter, Monday by default): this/last/next/
  previous/the coming week, the week before last, the week after next, "the week of
  3 March", "the first/second/third/fourth/last week of March" (days 1-7 ... / last 7).
* weekends (Sat 00:00 - Mon 00:00): this weekend (the current one on Sat/Sun, else the
  coming one), last/this past weekend (the most recent one that has ended), next
  weekend, over/on/at/during the weekend (the most recent one that has started),
  the weekend before last.
* months: this/last/next month, the month before last, "in November"/"since Nov"
  (the most recent November that has started), "November 2024", "Nov 2024",
  "last/this/next November", "November of last year", ISO "2024-11".
* dates: "3 March", "3rd of March", "March 3rd", "March 3, 2024", ISO "2024-03-03" and
  "2024/03/03", "on the 3rd" (the most recent 3rd of a month); without a year, the most
  recent such date that is not in the future.  Day ranges "3-5 March", "March 3 to 5",
  "between 3 and 5 March".
* relative to a date: "the Monday before 24 July", "the Saturday after 28 October", "the
  weekend before/after 4 October" (the last one over by that day / the first one after it),
  "the week before/after 3 March" (the calendar week), "the day before/after 5 May", and
  "last Friday on 23 January" / "last week, as mentioned on 6 November" (as said that day).
  "The first/last N days/weeks of August 2023" (of a month, quarter or year); "the first/
  second/last weekend of October" (counted by its Saturday).
* quarters and halves: "Q3 2024", "2024 Q3", "Q3 of last year", "the third quarter of
  2024", this/last/next quarter; H1/H2 2024, "the first/second half of 2024/last year".
  A bare "Q3"/"H2"/"the third quarter" counts only after a preposition ("in Q3",
  "during Q3", "since Q2"): "Q3 roadmap" is a topic, not a time.  Without a year it is
  the most recent one that has started (the current one included).
* years and decades: this/last/next year, the year before last, "in 2023", "the year
  2023", "the 1990s", "the 90s", "the '90s".  A bare year needs a preposition ("in",
  "since", "from"...) and is not a year before a unit ("in 2000 words").
* N ago: "N hours/days/weeks/months/years ago" (N in digits or words up to twenty, "a",
  "a couple of") = that clock hour / calendar day / week / month / year.
* rolling windows: "in the last/past N minutes/hours/days/weeks/months/years", "the past
  week", "the last week", "last 3 days" = [now - N, now); "the next 3 days" = [now,
  now + N).  Days and longer move the wall clock (same time of day); hours and minutes
  are real elapsed time.  "last week" without "the"/a number is the calendar week.
* parts of periods: earlier today ([start of today, now)), earlier this week/month/year
  ([start of period, start of today); on the period's first day, up to now), later
  today, later this week/month/year, so far this week/month/year, early/mid/late March /
  2024 / last month, "(at) the beginning/start/middle/end of last month / the year"
  (month: days 1-10 / 11-20 / 21-end; year: Jan-Apr / May-Aug / Sep-Dec).
* ranges: since X ([X.start, now)), before/prior to X ([open, X.start)), after X
  ([X.end, open)), until/till/through/up to/as of X ([open, X.end)), between X and Y, from X
  to/until/through Y, "X to Y", "X-Y" ([X.start, Y.end)).  A recurring end (a month
  or weekday without year) is moved to the first occurrence ending after X, and a
  recurring start takes the latest occurrence that starts before Y ("between March and
  May 2024" is March-May 2024); when both recur and the end would be in the future the
  pair moves back one cycle ("from November to February" in November 2026 is Nov 2025 -
  Feb 2026).
* vague (``vague=True``, a soft recency boost rather than a filter): recently, lately,
  recent, not long ago (the last 30 days); a while ago/back, some time ago
  (1-6 months ago); the other day, a few days ago (2-7 days ago); the other week (1-3
  weeks ago); a few/several weeks/months/years ago (2-7 units ago); the past/next
  few (3) or several (5) days/weeks/....

When a question holds several time expressions the earliest non-vague one is the window;
all of them are removed from the semantic query.

The time field is ``ingested_at`` when the verb closest to the time words is about
putting things into the engine (save, upload, add, import, ingest, store, bookmark, clip,
put in, drop into, capture into/in/to; "store", "save", "add"... only as verbs, not in "her clothing
store") and ``captured_at`` otherwise, including when a
verb about the content itself is at least as close ("the photo I took last week", "the
meeting I had last week").

``query_class`` is "temporal" when nothing but question scaffolding is left once the
time words are removed ("what did I save yesterday?", "show me everything from last
week"), "temporal+semantic" when topic words remain (``semantic_query`` holds them,
stop words removed: "what did I save about the budget last week?" -> "budget"), and
"semantic" without a time expression.  Generic words for stored things (files,
documents, items, stuff) count as scaffolding; notes, photos, emails are topics.

Unsupported on purpose (left out of the gold suite): numeric dates other than ISO
("3/3", "03.04.2024" are ambiguous between day-first and month-first); clock times
("at 3pm", "from 10am to 2pm"); seasons and holidays ("last summer", "over the
holidays", "at Christmas"); recurring sets ("on Mondays", "every week"); "in 3 days" /
"in two weeks" as future points; "N minutes ago"; "of late" (too often "a list of late
payments"); bare years or quarters without a
preposition ("the 2024 budget", "Q3 roadmap"); "end of" for weeks and quarters (falls
back to the whole period); "latest" as a recency cue; languages other than English.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

TimeField = Literal["captured_at", "ingested_at"]
QueryClass = Literal["semantic", "temporal", "temporal+semantic"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open ``[start, end)`` window the question is about, in the user's zone."""

    start: datetime | None  # aware, inclusive; None = open
    end: datetime | None  # aware, exclusive; None = open
    expression: str  # the words that were understood, as written
    span: tuple[int, int]  # character span of those words in the question
    vague: bool  # a soft recency hint ("recently"), not a hard filter
    field: TimeField = "captured_at"


@dataclass(frozen=True, slots=True)
class Understanding:
    """What a question asks for: a time window, content words, or both."""

    query_class: QueryClass
    time: TimeWindow | None
    semantic_query: str


# --------------------------------------------------------------------------- vocabulary

_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3,
                 "fri": 4, "sat": 5, "sun": 6}
_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
           "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
           "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
           "oct": 10, "nov": 11, "dec": 12}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
            "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
            "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 5}
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_PARTS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 29)}
# Words that turn a weekday name into something else ("Black Friday", "Girl Friday").
_WEEKDAY_BLOCKERS = {"black", "good", "cyber", "holy", "ash", "palm", "easter", "super", "giving", "maundy",
                     "shrove", "fat", "girl", "man", "tgi", "bloody"}


def _alt(words: Iterable[str]) -> str:
    """A regex alternation, longest first so "sept" wins over "sep"."""
    return "|".join(sorted((re.escape(str(w)).replace(r"\ ", r"\s+") for w in words), key=len, reverse=True))


_WD = f"(?:{_alt(_WEEKDAYS)}|{_alt(_WEEKDAY_ABBR)})"
_MON = (rf"(?:{_alt(k for k in _MONTHS if len(k) > 4 or k in ('june', 'july'))}"
        rf"|(?:{_alt(k for k in _MONTHS if len(k) <= 4 and k not in ('june', 'july'))})(?:\.(?=\s*\d))?)")
_NUM = rf"(?:\d{{1,3}}|{_alt(_NUMBERS)})"
_YEAR = r"(?:19|20)\d{2}"
_DAYNUM = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_UNIT = r"(?:minute|min|hour|hr|day|week|month|year)s?"
# A year number followed by one of these is a quantity ("in 2000 words"), not a year.
_NOT_YEAR = (r"(?!\s*(?:words?|characters?|chars?|pages?|lines?|tokens?|items?|times|rows?|people|users?|files?|"
             r"records?|points?|steps?|euros?|dollars?|usd|eur|gbp|km|kg|mb|gb|%|\$|€))")
_CONNECT = "\\s*(?:to|until|till|til|through|thru|-|\u2013|\u2014)\\s*"


def _rx(pattern: str) -> re.Pattern[str]:
    # Every expression must end on a word boundary: "todays", "2024x", "march-like" are not time words
    # (a hyphen before a digit is fine: "2019-2021").
    return re.compile(f"(?:{pattern})(?!\\w|-[^\\W\\d])", re.IGNORECASE)


# --------------------------------------------------------------------------- calendar helpers


def _lt(a: datetime, b: datetime) -> bool:
    """``a`` is an earlier instant than ``b``.  Plain ``<`` between datetimes sharing a tzinfo compares wall
    clocks and ignores ``fold``, which is wrong inside the repeated hour when DST ends."""
    return a.timestamp() < b.timestamp()


def _add_months(d: date, n: int) -> date:
    """``d`` moved by ``n`` calendar months, the day clamped to the month's length."""
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    m += 1
    last = (date(y + (m == 12), m % 12 + 1, 1) - timedelta(days=1)).day
    return date(y, m, min(d.day, last))


def _month_start(y: int, m: int) -> date:
    return date(y, m, 1)


def _next_month_start(y: int, m: int) -> date:
    return date(y + 1, 1, 1) if m == 12 else date(y, m + 1, 1)


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class _Span:
    """A resolved interval plus what is needed to combine it with others."""

    start: datetime | None
    end: datetime | None
    grain: str  # "part", "day", "days", "week", "month", "quarter", "year", "decade", "rolling", "range", ...
    vague: bool = False
    # Another occurrence of a recurring expression ("Tuesday", "March" without a year): k periods later.
    shift: Callable[[int], _Span | None] | None = dc_field(default=None, compare=False)
    first_day: date | None = None  # for calendar spans: the first local date covered
    last_day: date | None = None  # for calendar spans: the day after the last one covered


class _Ctx:
    """The reference time and zone every expression is resolved against."""

    def __init__(self, now: datetime, tz: ZoneInfo, week_start: int) -> None:
        if now.tzinfo is None:
            now = now.replace(tzinfo=tz)  # a naive "now" is taken as the user's wall clock
        self.tz = tz
        self.now = now.astimezone(tz)
        self.today = self.now.date()
        self.week_start = week_start

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
             shift: Callable[[int], _Span | None] | None = None) -> _Span:
        return _Span(self.at(first), self.at(after), grain, shift=shift, first_day=first, last_day=after)

    def day(self, d: date, shift: Callable[[int], _Span | None] | None = None) -> _Span:
        return self.days(d, d + timedelta(days=1), "day", shift)

    def week_of(self, d: date) -> _Span:
        start = d - timedelta(days=(d.weekday() - self.week_start) % 7)
        return self.days(start, start + timedelta(days=7), "week")

    def month(self, y: int, m: int, shift: Callable[[int], _Span | None] | None = None) -> _Span:
        return self.days(_month_start(y, m), _next_month_start(y, m), "month", shift)

    def year(self, y: int) -> _Span:
        return self.days(date(y, 1, 1), date(y + 1, 1, 1), "year")

    def quarter(self, y: int, q: int, shift: Callable[[int], _Span | None] | None = None) -> _Span:
        first = date(y, 3 * q - 2, 1)
        return self.days(first, _add_months(first, 3), "quarter", shift)

    def half(self, y: int, h: int, shift: Callable[[int], _Span | None] | None = None) -> _Span:
        first = date(y, 6 * h - 5, 1)
        return self.days(first, _add_months(first, 6), "half", shift)

    def part(self, d: date, name: str) -> _Span:
        lo, hi = _PARTS[name]
        return _Span(self.at(d, lo), self.at(d, hi), "part")

    def rolling(self, n: int, unit: str, vague: bool = False, forward: bool = False) -> _Span | None:
        """[now - n units, now) (or [now, now + n units) ``forward``): wall-clock for calendar units, so
        "the past 3 days" starts at this time of day; absolute for hours and minutes."""
        if n <= 0:
            return None
        sign = 1 if forward else -1
        naive = self.now.replace(tzinfo=None)
        if unit in ("minute", "hour"):
            step = timedelta(minutes=n) if unit == "minute" else timedelta(hours=n)
            other = (self.now.astimezone(UTC) + sign * step).astimezone(self.tz)
        elif unit in ("day", "week"):
            other = self.wall(naive + sign * timedelta(days=n * (7 if unit == "week" else 1)))
        else:
            moved = _add_months(naive.date(), sign * n * (12 if unit == "year" else 1))
            other = self.wall(datetime.combine(moved, naive.time()))
        if forward:
            return _Span(self.now, other, "rolling", vague=vague)
        return _Span(other, self.now, "rolling", vague=vague)

    def unit_period(self, d: date, unit: str) -> _Span:
        """The calendar day/week/month/year containing ``d``."""
        if unit == "day":
            return self.day(d)
        if unit == "week":
            return self.week_of(d)
        if unit == "month":
            return self.month(d.year, d.month)
        return self.year(d.year)

    def back(self, n: int, unit: str) -> date:
        """Today moved back ``n`` calendar units."""
        if unit == "day":
            return self.today - timedelta(days=n)
        if unit == "week":
            return self.today - timedelta(weeks=n)
        return _add_months(self.today, -n * (12 if unit == "year" else 1))

    def weekend_starting(self, sat: date) -> _Span:
        return self.days(sat, sat + timedelta(days=2), "weekend")


def _unit(word: str) -> str:
    """Singular canonical unit: "mins" -> "minute", "hrs" -> "hour", "days" -> "day"."""
    w = word.lower().rstrip("s")
    return {"min": "minute", "hr": "hour"}.get(w, w)


def _number(word: str) -> int:
    w = re.sub(r"\s+", " ", word.lower())
    return int(w) if w.isdigit() else _NUMBERS[w]


def _is_fuzzy(word: str) -> bool:
    return re.sub(r"\s+", " ", word.lower()) in ("a few", "few", "several")


def _month_ok(token: str, weak: bool) -> bool:
    """Lower-case month words that are also ordinary words ("may", "mar", "jan") need a preposition."""
    bare = token.rstrip(".")
    if bare.lower() in ("may", "mar", "jan", "dec") and bare[0].islower():
        return weak
    return True


# --------------------------------------------------------------------------- the parser

_ParseResult = tuple[int, _Span]


class _Parser:
    """Recursive descent over one question: anchors (calendar intervals) and the wrappers around them."""

    def __init__(self, text: str, ctx: _Ctx) -> None:
        self.text = text
        self.ctx = ctx

    # -- entry points

    def scan(self) -> list[tuple[int, int, _Span]]:
        """Every time expression in the text, left to right, the longest one at each word start."""
        found: list[tuple[int, int, _Span]] = []
        pos = 0
        while pos < len(self.text):
            if self.text[pos].isalnum() and (pos == 0 or not (self.text[pos - 1].isalnum()
                                                             or self.text[pos - 1] in "'\u2019")):
                got = self.expr(pos)
                if got is not None:
                    end, span = got
                    if span.start is None or span.end is None or _lt(span.start, span.end):  # never an empty window
                        found.append((pos, end, span))
                        pos = end
                        continue
            pos += 1
        return found

    def expr(self, pos: int) -> _ParseResult | None:
        """The longest expression (wrapped or bare) starting exactly at ``pos``."""
        candidates: list[_ParseResult | None] = [
            self._wrapped(pos), self._rolling(pos), self._vague(pos), self._relative_part(pos),
            self._bare_range(pos), self.anchor(pos, weak=False),
        ]
        return _longest(candidates)

    # -- anchors: expressions that name one calendar interval

    def anchor(self, pos: int, weak: bool) -> _ParseResult | None:
        """The longest anchor at ``pos``; ``weak`` allows forms that need a preposition ("in March")."""
        best: _ParseResult | None = None
        for rx, handler in _ANCHOR_RULES:
            m = rx.match(self.text, pos)
            if m is None:
                continue
            got = handler(self, m, weak)
            if got is not None and (best is None or got[0] > best[0]):
                best = got
        if best is None:
            return None
        return self._with_part_of_day(*best)

    def _with_part_of_day(self, end: int, span: _Span) -> _ParseResult:
        """"Tuesday morning", "yesterday in the evening": narrow a single day to a part of it."""
        if span.grain != "day" or span.first_day is None:
            return end, span
        m = _PART_SUFFIX.match(self.text, end)
        if m is None:
            return end, span
        name = m.group("part").lower()
        out = _recurring(span, lambda s: _part_of(self.ctx, s, name))
        return (m.end(), out) if out is not None else (end, span)

    # -- wrappers

    def _wrapped(self, pos: int) -> _ParseResult | None:
        m = _WRAPPER.match(self.text, pos)
        if m is None:
            return None
        word = re.sub(r"\s+", " ", m.group("w").lower())
        inner_pos = m.end()
        if word == "between":
            a = self.anchor(inner_pos, weak=True)
            if a is None:
                return None
            c = _AND.match(self.text, a[0])
            if c is None:
                return None
            b = self.anchor(c.end(), weak=True)
            if b is None:
                return None
            joined = _pair(self.ctx, a[1], b[1])
            return None if joined is None else (b[0], joined)
        ranged = self._bare_range(inner_pos) if word == "from" else None
        if ranged is not None:
            return ranged
        a = self.anchor(inner_pos, weak=True)
        if a is None:
            # "since the last 3 days" is rare; "in the last 3 days" is handled by _rolling.
            return None
        end, span = a
        now = self.ctx.now
        if word in ("since", "ever since"):
            if span.start is None:
                return None
            return end, _Span(span.start, now if _lt(span.start, now) else None, "since")
        if word in ("before", "prior to", "earlier than"):
            return end, _Span(None, span.start, "before")
        if word == "after":
            return end, _Span(span.end, None, "after")
        if word in ("until", "till", "til", "up to", "up until", "through", "thru", "as of"):
            return end, _Span(None, span.end, "until")
        return end, span  # in / during / on / from / at / over / within / throughout

    def _bare_range(self, pos: int) -> _ParseResult | None:
        """"March to May 2024", "Monday-Wednesday", "2019-2021"."""
        a = self.anchor(pos, weak=True)
        if a is None:
            return None
        c = _CONNECT_RX.match(self.text, a[0])
        if c is None:
            return None
        b = self.anchor(c.end(), weak=True)
        if b is None:
            return None
        joined = _pair(self.ctx, a[1], b[1])
        return None if joined is None else (b[0], joined)

    def _rolling(self, pos: int) -> _ParseResult | None:
        m = _ROLLING.match(self.text, pos)
        if m is None:
            return None
        n_word = m.group("n")
        q, unit = m.group("q").lower(), _unit(m.group("u"))
        if n_word is None and not ((m.group("the") and q in ("last", "past")) or q == "past"):
            return None  # "last week"/"the previous week" are calendar weeks; "the last week"/"past week" roll
        if n_word is None and unit == "minute":
            return None  # "the last minute changes"
        if n_word is None and _OF.match(self.text, m.end()):
            return None  # "the last week of October" is a week of that month, not the past 7 days
        n = _number(n_word) if n_word else 1
        forward = q in ("next", "coming", "following")
        if forward and n_word is None:
            return None  # "next week" is the calendar week
        span = self.ctx.rolling(n, unit, vague=bool(n_word and _is_fuzzy(n_word)), forward=forward)
        return None if span is None else (m.end(), span)

    def _vague(self, pos: int) -> _ParseResult | None:
        m = _VAGUE.match(self.text, pos)
        ctx = self.ctx
        if m is not None:
            word = re.sub(r"\s+", " ", m.group(0).lower())
            naive = ctx.now.replace(tzinfo=None)
            if word.startswith("the other day"):
                span = ctx.days(ctx.today - timedelta(days=7), ctx.today - timedelta(days=1))
            elif word.startswith("the other week"):
                span = ctx.days(ctx.today - timedelta(days=21), ctx.today - timedelta(days=7))
            elif "while" in word or "some time" in word:
                six = ctx.wall(datetime.combine(_add_months(naive.date(), -6), naive.time()))
                one = ctx.wall(datetime.combine(_add_months(naive.date(), -1), naive.time()))
                span = _Span(six, one, "vague")
            else:
                span = _Span(ctx.wall(naive - timedelta(days=30)), ctx.now, "vague")
            return m.end(), replace(span, vague=True)
        m = _FEW_AGO.match(self.text, pos)
        if m is not None:
            unit = _unit(m.group("u"))
            first = ctx.unit_period(ctx.back(7, unit), unit)
            last = ctx.unit_period(ctx.back(1, unit), unit)
            return m.end(), _Span(first.start, last.start, "vague", vague=True)
        return None

    def _relative_part(self, pos: int) -> _ParseResult | None:
        """earlier today, earlier this week, later this month, so far this year."""
        m = _PERIOD_PART.match(self.text, pos)
        if m is None:
            return None
        ctx = self.ctx
        kind = (m.group("k1") or m.group("k2") or m.group("k3") or "").lower()
        unit = (m.group("u1") or m.group("u2") or m.group("u3") or "").lower()
        today0 = ctx.at(ctx.today)
        tomorrow0 = ctx.at(ctx.today + timedelta(days=1))
        if unit == "today":
            if kind == "later":
                return m.end(), _Span(ctx.now, tomorrow0, "part")
            return (m.end(), _Span(today0, ctx.now, "part")) if _lt(today0, ctx.now) else None
        period = {"week": ctx.week_of(ctx.today), "month": ctx.month(ctx.today.year, ctx.today.month),
                  "year": ctx.year(ctx.today.year)}[unit]
        assert period.start is not None and period.end is not None
        if kind == "earlier":
            # On the first day of the period "earlier this week" can only mean earlier today.
            end = today0 if _lt(period.start, today0) else ctx.now
            return (m.end(), _Span(period.start, end, "part")) if _lt(period.start, end) else None
        if kind == "later":
            return (m.end(), _Span(tomorrow0, period.end, "part")) if _lt(tomorrow0, period.end) else None
        return (m.end(), _Span(period.start, ctx.now, "part")) if _lt(period.start, ctx.now) else None


def _longest(candidates: list[_ParseResult | None]) -> _ParseResult | None:
    best: _ParseResult | None = None
    for c in candidates:
        if c is not None and (best is None or c[0] > best[0]):
            best = c
    return best


def _part_of(ctx: _Ctx, day_span: _Span, name: str) -> _Span | None:
    return None if day_span.first_day is None else ctx.part(day_span.first_day, name)


def _occurrence(span: _Span, ok: Callable[[_Span], bool], prefer: Literal["latest", "earliest"]) -> _Span | None:
    """Among a recurring span's occurrences, the latest (or earliest) one satisfying ``ok``."""
    if span.shift is None:
        return span if ok(span) else None
    step = 1 if prefer == "latest" else -1
    # Walk away from the wanted side until ``ok`` holds, then as far towards it as ``ok`` still holds.
    k = 0
    cur: _Span | None = span
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


def _starts_before(t: datetime) -> Callable[[_Span], bool]:
    return lambda s: s.start is not None and _lt(s.start, t)


def _ends_after(t: datetime) -> Callable[[_Span], bool]:
    return lambda s: s.end is not None and _lt(t, s.end)


def _pair(ctx: _Ctx, a: _Span, b: _Span) -> _Span | None:
    """[a.start, b.end), moving recurring ends so the range is ordered and as recent as possible."""
    if a.start is None or b.end is None:
        return None
    first: _Span | None = a
    last: _Span | None = b
    if a.shift is not None and b.shift is None:
        first = _occurrence(a, _starts_before(b.end), "latest")
    elif b.shift is not None:
        last = _occurrence(b, _ends_after(a.start), "earliest")
        if a.shift is not None and last is not None and last.start is not None and _lt(ctx.now, last.start):
            # Both recur and the end lies in the future: take the previous, fully past occurrence.
            earlier = a.shift(-1)
            if earlier is not None and earlier.start is not None:
                again = _occurrence(b, _ends_after(earlier.start), "earliest")
                if again is not None:
                    first, last = earlier, again
    if first is None or last is None or first.start is None or last.end is None or not _lt(first.start, last.end):
        return None
    return _Span(first.start, last.end, "range")


def _recurring(span: _Span, f: Callable[[_Span], _Span | None]) -> _Span | None:
    """``f(span)``, keeping the ability to move to the other occurrences of ``span``."""
    out = f(span)
    if out is None or span.shift is None:
        return out
    shift = span.shift

    def other(k: int) -> _Span | None:
        moved = shift(k)
        return None if moved is None else _recurring(moved, f)

    return replace(out, shift=other)


# --------------------------------------------------------------------------- anchor rules

_Handler = Callable[[_Parser, re.Match[str], bool], "_ParseResult | None"]
_ANCHOR_RULES: list[tuple[re.Pattern[str], _Handler]] = []


def _rule(pattern: str, *, boundary: bool = True) -> Callable[[_Handler], _Handler]:
    def register(fn: _Handler) -> _Handler:
        _ANCHOR_RULES.append((_rx(pattern) if boundary else re.compile(pattern, re.IGNORECASE), fn))
        return fn
    return register


def _year_from(m: re.Match[str], ctx: _Ctx) -> int | None:
    """The year named by groups ``yr`` (2024), ``y2`` ('24) or ``ry`` (last/this/next year)."""
    gd = m.groupdict()
    if gd.get("yr"):
        return int(gd["yr"])
    if gd.get("y2"):
        return 2000 + int(gd["y2"])
    if gd.get("ry"):
        return ctx.today.year + {"last": -1, "previous": -1, "this": 0, "next": 1}[gd["ry"].lower()]
    return None


_REL_YEAR = r"(?P<ry>last|this|next|previous)\s+year"


@_rule(r"(?:the\s+)?day\s+(?P<w>before\s+yesterday|after\s+tomorrow)")
def _day_around(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    delta = -2 if m.group("w").lower().startswith("before") else 2
    return m.end(), p.ctx.day(p.ctx.today + timedelta(days=delta))


@_rule(r"(?P<w>yesterday|today|tomorrow|tonight)")
def _named_day(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    w = m.group("w").lower()
    if w == "tonight":
        return m.end(), p.ctx.part(p.ctx.today, "night")
    delta = {"yesterday": -1, "today": 0, "tomorrow": 1}[w]
    return m.end(), p.ctx.day(p.ctx.today + timedelta(days=delta))


@_rule(r"this\s+(?P<part>morning|afternoon|evening)|last\s+(?P<night>night)")
def _this_part(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if m.group("night"):
        return m.end(), p.ctx.part(p.ctx.today - timedelta(days=1), "night")
    return m.end(), p.ctx.part(p.ctx.today, m.group("part").lower())


@_rule(rf"(?:(?P<q>this\s+past|last|past|this|next|coming|the\s+coming)\s+)?(?P<wd>{_WD})"
       r"(?:\s*,?\s+(?P<wk>last|this|next|previous)\s+week)?")
def _weekday(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    token = m.group("wd")
    wd = _WEEKDAYS.get(token.lower(), _WEEKDAY_ABBR.get(token.lower()))
    assert wd is not None
    q = re.sub(r"\s+", " ", (m.group("q") or "").lower())
    if not q and not weak:
        if token.lower() in _WEEKDAY_ABBR:
            return None  # "sat", "sun", "wed" alone are ordinary words
        before = re.findall(r"[A-Za-z]+", p.text[: m.start()])
        if before and before[-1].lower() in _WEEKDAY_BLOCKERS:
            return None  # "Black Friday"
        after = _NEXT_WORD.match(p.text, m.end())
        if token[0].isupper() and after and after.group(1)[0].isupper() and after.group(1).lower() not in _PARTS:
            return None  # a title: "the Sunday Times", "Monday Notes"
    if m.group("wk"):
        if q:
            return None
        offset = {"last": -7, "previous": -7, "this": 0, "next": 7}[m.group("wk").lower()]
        week = ctx.week_of(ctx.today + timedelta(days=offset))
        assert week.first_day is not None
        return m.end(), ctx.day(week.first_day + timedelta(days=(wd - ctx.week_start) % 7))
    today = ctx.today
    if q == "this":
        week = ctx.week_of(today)
        assert week.first_day is not None
        return m.end(), ctx.day(week.first_day + timedelta(days=(wd - ctx.week_start) % 7))
    if q in ("next", "coming", "the coming"):
        return m.end(), ctx.day(today + timedelta(days=(wd - today.weekday()) % 7 or 7))
    d = today - timedelta(days=(today.weekday() - wd) % 7 or 7)
    if q:
        return m.end(), ctx.day(d)  # "last Tuesday" names one day; it does not recur

    def make(day: date) -> _Span:
        return ctx.day(day, lambda k: make(day + timedelta(weeks=k)))

    return m.end(), make(d)


@_rule(r"(?P<q>this|last|next|previous|the\s+previous|the\s+following|the\s+coming)\s+(?P<u>week|month|year|quarter)"
       r"|the\s+(?P<u2>week|month|year)\s+(?P<ba>before\s+last|after\s+next)")
def _relative_period(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("u2"):
        unit = m.group("u2").lower()
        n = -2 if m.group("ba").lower().startswith("before") else 2
    else:
        unit = m.group("u").lower()
        q = m.group("q").lower().split()[-1]
        n = {"this": 0, "last": -1, "previous": -1, "next": 1, "following": 1, "coming": 1}[q]
    today = ctx.today
    if unit == "week":
        return m.end(), ctx.week_of(today + timedelta(weeks=n))
    if unit == "month":
        d = _add_months(today, n)
        return m.end(), ctx.month(d.year, d.month)
    if unit == "quarter":
        idx = today.year * 4 + (today.month - 1) // 3 + n
        return m.end(), ctx.quarter(idx // 4, idx % 4 + 1)
    return m.end(), ctx.year(today.year + n)


@_rule(rf"(?:(?P<q>last|this|next)\s+)?(?P<mon>{_MON})"
       rf"(?:\s*,?\s*(?:of\s+)?(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?")
def _month_name(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    token = m.group("mon")
    mon = _MONTHS[token.rstrip(".").lower()]
    year = _year_from(m, ctx)
    q = (m.group("q") or "").lower()
    if year is not None:
        if q:
            return None
        return m.end(), ctx.month(year, mon)
    cur_y, cur_m = ctx.today.year, ctx.today.month
    if q == "last":
        return m.end(), ctx.month(cur_y if mon < cur_m else cur_y - 1, mon)
    if q == "next":
        return m.end(), ctx.month(cur_y if mon > cur_m else cur_y + 1, mon)
    if q == "this":
        return m.end(), ctx.month(cur_y, mon)
    if not weak:
        return None  # a bare month name needs "in"/"since"/…: "Ides of March", "may" the verb
    def make(y: int) -> _Span:
        return ctx.month(y, mon, lambda k: make(y + k))

    return m.end(), make(cur_y if mon <= cur_m else cur_y - 1)


def _date_span(p: _Parser, m: re.Match[str], mon: int, day: int) -> _ParseResult | None:
    ctx = p.ctx
    year = _year_from(m, ctx)
    if year is not None:
        d = _safe_date(year, mon, day)
        return None if d is None else (m.end(), ctx.day(d))
    y = ctx.today.year
    for back in range(9):  # most recent occurrence not in the future; 29 Feb may need a few years
        d = _safe_date(y - back, mon, day)
        if d is not None and d <= ctx.today:
            break
    else:
        return None
    if _safe_date(2000, mon, day) is None:
        return None

    def make(y: int) -> _Span | None:
        moved = _safe_date(y, mon, day)
        return None if moved is None else ctx.day(moved, lambda k: make(y + k))

    return m.end(), ctx.day(d, lambda k: make(d.year + k))


def _day_number(token: str) -> int:
    return int(re.match(r"\d+", token).group(0))  # type: ignore[union-attr]


_YEAR_TAIL = rf"(?:\s*,?\s*(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?"


@_rule(rf"(?:the\s+)?(?P<d>{_DAYNUM})\s+(?:of\s+)?(?P<mon>{_MON}){_YEAR_TAIL}")
def _day_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    clear = weak or re.search(r"st|nd|rd|th|of|the", m.group(0)[: m.start("mon") - m.start()], re.I)
    if not clear and m.group("yr") is None and not _month_ok(m.group("mon"), weak):
        return None  # "chapter 2 may help"
    return _date_span(p, m, _MONTHS[m.group("mon").rstrip(".").lower()], _day_number(m.group("d")))


@_rule(rf"(?P<mon>{_MON})\s+(?:the\s+)?(?P<d>{_DAYNUM})(?!\d){_YEAR_TAIL}")
def _month_day(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if not _month_ok(m.group("mon"), weak):
        return None
    return _date_span(p, m, _MONTHS[m.group("mon").rstrip(".").lower()], _day_number(m.group("d")))


@_rule(rf"(?P<y>{_YEAR})(?P<sep>[-/])(?P<m>\d{{1,2}})(?P=sep)(?P<d>\d{{1,2}})(?:T[\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?")
def _iso_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    d = _safe_date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    return None if d is None else (m.end(), p.ctx.day(d))


@_rule(rf"(?P<y>{_YEAR})-(?P<m>0[1-9]|1[0-2])(?![-/\d])")
def _iso_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    return m.end(), p.ctx.month(int(m.group("y")), int(m.group("m")))


@_rule(r"the\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)")
def _day_of_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if not weak:
        return None  # "the 3rd" alone is usually not a date; "on the 3rd" is
    ctx = p.ctx
    day = int(m.group("d"))

    def make(first: date) -> _Span | None:
        d = _safe_date(first.year, first.month, day)
        return None if d is None else ctx.day(d, lambda k: make(_add_months(first, k)))

    this_month = date(ctx.today.year, ctx.today.month, 1)
    for back in range(0, -3, -1):  # the most recent such day that is not in the future
        got = make(_add_months(this_month, back))
        if got is not None and got.first_day is not None and got.first_day <= ctx.today:
            return m.end(), got
    return None


@_rule(rf"(?:between\s+)?(?P<d1>{_DAYNUM})(?:{_CONNECT}|\s+and\s+)(?P<d2>{_DAYNUM})\s+(?:of\s+)?(?P<mon>{_MON})"
       rf"{_YEAR_TAIL}"
       rf"|(?P<mon2>{_MON})\s+(?P<e1>{_DAYNUM}){_CONNECT}(?P<e2>{_DAYNUM})(?!\d)"
       rf"(?:\s*,?\s*(?P<yr2>{_YEAR}))?")
def _day_range(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("mon"):
        if " and " in re.sub(r"\s+", " ", m.group(0).lower()) and not m.group(0).lower().startswith("between"):
            return None  # "3 and 5 March" only as "between 3 and 5 March"
        mon, d1, d2 = m.group("mon"), m.group("d1"), m.group("d2")
        year = _year_from(m, ctx)
    else:
        mon, d1, d2 = m.group("mon2"), m.group("e1"), m.group("e2")
        year = int(m.group("yr2")) if m.group("yr2") else None
        if not _month_ok(mon, weak):
            return None
    month = _MONTHS[mon.rstrip(".").lower()]
    first, last = _day_number(d1), _day_number(d2)
    if first >= last:
        return None
    if year is None:
        year = ctx.today.year
        start = _safe_date(year, month, first)
        if start is None or start > ctx.today:
            year -= 1
    a, b = _safe_date(year, month, first), _safe_date(year, month, last)
    if a is None or b is None:
        return None
    return m.end(), ctx.days(a, b + timedelta(days=1))


_QUARTER_WORDS = r"(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)"


@_rule(rf"q(?P<q>[1-4])(?:\s*(?:of\s+)?(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?"
       rf"|(?P<yr_first>{_YEAR})\s*-?\s*q(?P<q2>[1-4])"
       rf"|(?:the\s+)?{_QUARTER_WORDS}\s+quarter(?:\s+of\s+(?:(?P<yr3>{_YEAR})|(?P<ry3>last|this|next)\s+year))?")
def _quarter(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("q2"):
        return m.end(), ctx.quarter(int(m.group("yr_first")), int(m.group("q2")))
    if m.group("ord"):
        q = _ORDINALS[m.group("ord").lower()]
        if m.group("yr3"):
            return m.end(), ctx.quarter(int(m.group("yr3")), q)
        if m.group("ry3"):
            return m.end(), ctx.quarter(ctx.today.year + {"last": -1, "this": 0, "next": 1}[m.group("ry3").lower()], q)
    else:
        q = int(m.group("q"))
        year = _year_from(m, ctx)
        if year is not None:
            return m.end(), ctx.quarter(year, q)
    if not weak:
        return None  # "Q3 roadmap": a bare quarter is a topic unless a preposition makes it time
    cur_q = (ctx.today.month - 1) // 3 + 1

    def make(y: int) -> _Span:
        return ctx.quarter(y, q, lambda k: make(y + k))

    return m.end(), make(ctx.today.year if q <= cur_q else ctx.today.year - 1)


@_rule(rf"h(?P<h>[12])(?:\s*(?:of\s+)?(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?"
       rf"|(?P<yr_first>{_YEAR})\s*-?\s*h(?P<h2>[12])"
       rf"|(?:the\s+)?(?P<ord>first|second|1st|2nd)\s+half\s+of\s+(?:(?P<yr3>{_YEAR})|(?P<ry3>last|this|next)\s+year)")
def _half(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("h2"):
        return m.end(), ctx.half(int(m.group("yr_first")), int(m.group("h2")))
    if m.group("ord"):
        h = _ORDINALS[m.group("ord").lower()]
        if m.group("yr3"):
            return m.end(), ctx.half(int(m.group("yr3")), h)
        return m.end(), ctx.half(ctx.today.year + {"last": -1, "this": 0, "next": 1}[m.group("ry3").lower()], h)
    h = int(m.group("h"))
    year = _year_from(m, ctx)
    if year is not None:
        return m.end(), ctx.half(year, h)
    if not weak:
        return None
    def make(y: int) -> _Span:
        return ctx.half(y, h, lambda k: make(y + k))

    return m.end(), make(ctx.today.year if h <= (ctx.today.month - 1) // 6 + 1 else ctx.today.year - 1)


@_rule(rf"(?P<the>the\s+year\s+)?(?P<yr>{_YEAR}){_NOT_YEAR}")
def _year_number(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if not weak and not m.group("the"):
        return None  # "invoice 2023", "the 2024 budget": a bare number is not a year
    return m.end(), p.ctx.year(int(m.group("yr")))


@_rule(r"(?:the\s+)?(?P<dec>(?:19|20)\d0)'?s|the\s+'?(?P<d2>\d0)'?s")
def _decade(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("dec"):
        start = int(m.group("dec"))
    else:
        start = ctx.today.year // 100 * 100 + int(m.group("d2"))
        if start > ctx.today.year:
            start -= 100
    return m.end(), replace(ctx.days(date(start, 1, 1), date(start + 10, 1, 1)), grain="decade")


@_rule(rf"(?P<n>{_NUM})\s+(?P<u>hour|day|week|month|year)s?\s+(?:ago|back|before\s+today)")
def _ago(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if _is_fuzzy(m.group("n")):
        return None  # "a few days ago" is vague: handled with the vague expressions
    n = _number(m.group("n"))
    if n <= 0 or n > 500:
        return None
    unit = m.group("u").lower()
    ctx = p.ctx
    if unit == "hour":  # the clock hour that was n hours ago
        then = (ctx.now.astimezone(UTC) - timedelta(hours=n)).astimezone(ctx.tz)
        start = then.replace(minute=0, second=0, microsecond=0)
        return m.end(), _Span(start, (start.astimezone(UTC) + timedelta(hours=1)).astimezone(ctx.tz), "hour")
    return m.end(), ctx.unit_period(ctx.back(n, unit), unit)


@_rule(r"(?P<q>this\s+past|last|past|previous|this|next|the\s+previous)\s+weekend"
       r"|(?P<over>over|on|at|during)\s+the\s+weekend|the\s+weekend\s+(?P<ba>before\s+last)")
def _weekend(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    today = ctx.today
    on_weekend = today.weekday() in (5, 6)
    started = today - timedelta(days=(today.weekday() - 5) % 7)  # Saturday of the latest weekend begun
    ended = started - timedelta(days=7) if on_weekend else started  # Saturday of the latest weekend over
    coming = started if on_weekend else started + timedelta(days=7)  # "this weekend"
    if m.group("over"):
        return m.end(), ctx.weekend_starting(started)
    if m.group("ba"):
        return m.end(), ctx.weekend_starting(ended - timedelta(days=7))
    q = re.sub(r"\s+", " ", m.group("q").lower())
    if q == "this":
        return m.end(), ctx.weekend_starting(coming)
    if q == "next":
        return m.end(), ctx.weekend_starting(coming + timedelta(days=7))
    return m.end(), ctx.weekend_starting(ended)


_POSITION = {"early": "early", "beginning": "early", "start": "early", "mid": "mid", "middle": "mid",
             "late": "late", "end": "late"}


@_rule(r"(?P<pos>early|mid|late)(?:\s+|-)|(?:(?:at|in|by|towards?)\s+)?(?:the\s+)?(?P<pos2>beginning|start|middle|end)\s+of\s+",
       boundary=False)
def _period_position(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    current = _THE_PERIOD.match(p.text, m.end())
    inner: _ParseResult | None
    if current is not None:  # "the beginning of the year": the current one
        unit = current.group("u").lower()
        inner = current.end(), (ctx.year(ctx.today.year) if unit == "year"
                                else ctx.month(ctx.today.year, ctx.today.month))
    else:
        inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    where = _POSITION[(m.group("pos") or m.group("pos2")).lower()]
    got = _recurring(span, lambda s: _sub_period(ctx, s, where))
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?:(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+)?week\s+of\s+", boundary=False)
def _week_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the week of 3 March" (the week containing that day), "the first/last week of March" (days 1-7 / last 7)."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    ctx = p.ctx
    ordinal = (m.group("ord") or "").lower()

    def week_part(s: _Span) -> _Span | None:
        if s.first_day is None or s.last_day is None:
            return None
        if not ordinal:
            return ctx.week_of(s.first_day) if s.grain == "day" else None
        if s.grain != "month":
            return None
        if ordinal == "last":
            return ctx.days(s.last_day - timedelta(days=7), s.last_day, "days")
        first = s.first_day + timedelta(days=7 * (_ORDINALS[ordinal] - 1))
        return ctx.days(first, first + timedelta(days=7), "days")

    got = _recurring(span, week_part)
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+weekend\s+of\s+", boundary=False)
def _weekend_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the first weekend of October 2023": the weekend whose Saturday is the month's first (second,
    ..., last) Saturday."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    ordinal = m.group("ord").lower()

    def weekend(s: _Span) -> _Span | None:
        if s.grain != "month" or s.first_day is None or s.last_day is None:
            return None
        first_sat = s.first_day + timedelta(days=(5 - s.first_day.weekday()) % 7)
        if ordinal == "last":
            last = s.last_day - timedelta(days=1)
            return p.ctx.weekend_starting(last - timedelta(days=(last.weekday() - 5) % 7))
        return p.ctx.weekend_starting(first_sat + timedelta(days=7 * (_ORDINALS[ordinal] - 1)))

    got = _recurring(span, weekend)
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<side>first|last)\s+(?P<n>" + _NUM + r")\s+(?P<u>days|weeks)\s+of\s+", boundary=False)
def _days_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the last two weeks of August 2023", "the first 3 days of May": the start or end of a month or year."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    days = _number(m.group("n")) * (7 if m.group("u").lower() == "weeks" else 1)

    def part(s: _Span) -> _Span | None:
        if s.first_day is None or s.last_day is None or s.grain not in ("month", "quarter", "half", "year"):
            return None
        if days >= (s.last_day - s.first_day).days:
            return None
        if m.group("side").lower() == "first":
            return p.ctx.days(s.first_day, s.first_day + timedelta(days=days), "days")
        return p.ctx.days(s.last_day - timedelta(days=days), s.last_day, "days")

    got = _recurring(span, part)
    return None if got is None else (end, got)


@_rule(rf"(?:(?P<q>the|last|this\s+past|past|previous)\s+)?(?P<what>{_WD}|weekend|week|day)(?:\s*,\s*|\s+)"
       r"(?:(?P<dir>before|prior\s+to|preceding|after|following)|(?P<on>(?:as\s+)?(?:mentioned|said)\s+on|on|as\s+of))"
       r"\s+", boundary=False)
def _relative_to_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """A day, weekend or week placed relative to a date instead of today: "the Monday before 24 July
    2023", "the weekend after 28 October", "the week before 3 March", "the day after 5 May", and
    "last Friday on 23 January 2022" / "last week, as mentioned on 6 November" (as said that day)."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    if span.grain != "day" or span.first_day is None:
        return None  # only a day anchors: "the Monday before March" is not one day
    q = (m.group("q") or "").lower()
    what = m.group("what").lower()
    if m.group("on"):
        if q not in ("last", "this past", "past", "previous"):
            return None  # "Monday on 3 May" names no relation
        direction = "before"
    else:
        direction = "after" if m.group("dir").lower() in ("after", "following") else "before"
    ctx, d = p.ctx, span.first_day
    step = 1 if direction == "after" else -1
    if what == "day":
        return None if m.group("on") else (end, ctx.day(d + timedelta(days=step)))
    if what == "week":
        return end, ctx.week_of(d + timedelta(days=7 * step))
    if what == "weekend":
        if direction == "after":
            return end, ctx.weekend_starting(d + timedelta(days=(5 - d.weekday()) % 7 or 7))
        last_sat = d - timedelta(days=2)  # the weekend must be over by the start of ``d``
        return end, ctx.weekend_starting(last_sat - timedelta(days=(last_sat.weekday() - 5) % 7))
    wd = _WEEKDAYS.get(what, _WEEKDAY_ABBR.get(what))
    if wd is None:
        return None
    if direction == "after":
        return end, ctx.day(d + timedelta(days=(wd - d.weekday()) % 7 or 7))
    return end, ctx.day(d - timedelta(days=(d.weekday() - wd) % 7 or 7))


def _sub_period(ctx: _Ctx, span: _Span, where: str) -> _Span | None:
    """The early/mid/late third of a month (days 1-10/11-20/21-end) or a year (4 months each)."""
    first = span.first_day
    if first is None or span.last_day is None:
        return None
    if span.grain == "month":
        cuts = [first, first.replace(day=11), first.replace(day=21), span.last_day]
    elif span.grain == "year":
        cuts = [first, first.replace(month=5), first.replace(month=9), span.last_day]
    else:
        return None
    i = {"early": 0, "mid": 1, "late": 2}[where]
    return ctx.days(cuts[i], cuts[i + 1], span.grain + "-part")


# --------------------------------------------------------------------------- wrapper patterns

_THE_PERIOD = _rx(r"the\s+(?P<u>year|month)")
_PART_SUFFIX = re.compile(r"\s+(?:in\s+the\s+|at\s+)?(?P<part>morning|afternoon|evening|night)(?!\w)", re.I)
_WRAPPER = re.compile(r"(?P<w>between|from|since|ever\s+since|before|prior\s+to|earlier\s+than|after|until|till|til|"
                      r"up\s+to|up\s+until|through|thru|as\s+of|in|during|on|at|over|within|throughout)\s+", re.I)
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
_OF = re.compile(r"\s+of\b", re.I)
_AND = re.compile(r"\s+(?:and|&)\s+", re.I)
_CONNECT_RX = re.compile(_CONNECT, re.I)
_ROLLING = _rx(r"(?:(?:in|over|during|within|for|from)\s+)?(?P<the>the\s+)?"
               rf"(?P<q>last|past|previous|next|coming|following)\s+(?:(?P<n>{_NUM})\s+)?(?P<u>{_UNIT})")
_VAGUE = _rx(r"recently|lately|recent|not\s+(?:so\s+)?long\s+ago|a\s+(?:little\s+)?while\s+(?:ago|back)"
             r"|some\s+time\s+ago|(?:on\s+)?the\s+other\s+(?:day|week)")
_FEW_AGO = _rx(r"(?:a\s+few|few|several)\s+(?P<u>day|week|month|year)s\s+(?:ago|back)")
_PERIOD_PART = _rx(r"(?P<k1>earlier|later)\s+(?P<u1>today)"
                   r"|(?P<k2>earlier|later|so\s+far)\s+this\s+(?P<u2>week|month|year)"
                   r"|(?P<k3>)this\s+(?P<u3>week|month|year)\s+so\s+far")


# --------------------------------------------------------------------------- field and class

# Verbs about putting things into the memory engine: the window applies to ``ingested_at``.
_INGEST_RX = re.compile(
    r"\b(?:sav(?:e|ed|es|ing)|upload(?:ed|s|ing)?|add(?:ed|s|ing)?|import(?:ed|s|ing)?|ingest(?:ed|s|ing)?|"
    r"stor(?:e|ed|es|ing)|bookmark(?:ed|s|ing)?|clip(?:ped|s)?|put\s+(?:in|into)|dropp?(?:ed)?\s+(?:in|into)|"
    r"captur(?:e|ed|es|ing)\s+(?:in|into|to)|sen[dt]\s+(?:in|into|to)\s+(?:secondbrain|my\s+second\s+brain))\b", re.I)
# Verbs about the content's own time ("the photo I took", "the meeting I had"): ``captured_at``.
_CONTENT_RX = re.compile(
    r"\b(?:took|take|taken|taking|shot|snapped|photographed|filmed|recorded|record|wrote|written|write|"
    r"happen(?:ed|s)?|had|met|meet|attend(?:ed)?|visit(?:ed)?|said|discuss(?:ed)?|talk(?:ed)?|call(?:ed)?|"
    r"sent|received|went|made|created|captured|signed|listened|watched|read)\b", re.I)

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Question scaffolding that carries no topic: removed before deciding temporal vs temporal+semantic.
_FILLER = _wordset("""
a an the and or but of to in on at for from about with by into onto regarding re as than then
between since until till before after during over within throughout what
whats what's which who whom whose when where how why do did does done doing i i'm me my mine myself
we us our ours you your yours it its is are was were be been being am have has had having can could
would will should shall might must may please any anything something everything all some stuff
things thing items item entries entry content show list give tell find get got see look search fetch
pull bring display remind recall up out that this these those there here just again more else new
save saved saves saving upload uploaded uploads uploading add added adding import imported imports
importing ingest ingested store stored storing put putting capture captured bookmark bookmarked clip
clipped drop dropped happen happened happens happening go going went take took taken write wrote
written make made create created file files document documents doc docs secondbrain brain
second-brain
""")


# Base forms that are also nouns ("her clothing store", "an add", "a clip"): a verb only after a
# subject, an auxiliary or "to", or at the start.
_NOUN_LIKE = frozenset({"store", "stores", "save", "saves", "add", "adds", "import", "imports", "upload",
                        "uploads", "bookmark", "bookmarks", "clip", "clips", "capture", "captures"})
_VERB_BEFORE = frozenset({"i", "we", "you", "they", "he", "she", "it", "did", "do", "does", "didn't", "don't",
                          "to", "will", "would", "can", "could", "should", "might", "must", "just", "also", "ever",
                          "never", "not", "please", "and", "or", "then", "recently", "who", "that", "which"})


def _is_noun(question: str, m: re.Match[str]) -> bool:
    """Whether an ingest-verb match is really a noun ("the store", "my clothing store")."""
    first = m.group(0).split()[0].lower()
    if first not in _NOUN_LIKE:
        return False
    before = re.findall(r"[\w']+", question[: m.start()].lower())
    return bool(before) and before[-1] not in _VERB_BEFORE


def _field_for(question: str, span: tuple[int, int]) -> TimeField:
    """ingested_at when the verb nearest to the time words is about saving into the engine."""
    def distance(m: re.Match[str]) -> int:
        if m.end() <= span[0]:
            return span[0] - m.end()
        if m.start() >= span[1]:
            return m.start() - span[1]
        return 0

    ingest = [distance(m) for m in _INGEST_RX.finditer(question) if not _is_noun(question, m)]
    if not ingest:
        return "captured_at"
    content = [distance(m) for m in _CONTENT_RX.finditer(question)
               if not _INGEST_RX.match(question, m.start())]
    if content and min(content) <= min(ingest):
        return "captured_at"
    return "ingested_at"


def _content_words(text: str) -> list[str]:
    words = re.findall("[\\w][\\w'\u2019&.+-]*[\\w+#]|[\\w]", text)
    out = []
    for w in words:
        key = w.lower().replace("\u2019", "'")
        key = key[:-2] if key.endswith("'s") else key
        if key in _FILLER:
            continue
        out.append(w)
    return out


# --------------------------------------------------------------------------- public API


def parse_time(text: str, now: datetime, tz: ZoneInfo, *, week_start: int = 0) -> TimeWindow | None:
    """The time window ``text`` talks about, or ``None`` when it names no time.

    ``now`` is the reference instant (a naive value is read as wall-clock time in ``tz``);
    ``week_start`` is the first day of a week (0 = Monday ... 6 = Sunday).  The field is
    always ``captured_at`` here; :func:`understand` decides between the two fields.
    """
    return _parse_all(text, now, tz, week_start)[0]


def _parse_all(text: str, now: datetime, tz: ZoneInfo, week_start: int) -> tuple[TimeWindow | None, str]:
    """The chosen window and the text with every time expression blanked out."""
    if not 0 <= week_start <= 6:
        raise ValueError("week_start must be 0 (Monday) to 6 (Sunday)")
    found = _Parser(text, _Ctx(now, tz, week_start)).scan()
    if not found:
        return None, text
    # The earliest precise expression wins; a vague one only when nothing else is there.
    start, end, span = next((f for f in found if not f[2].vague), found[0])
    window = TimeWindow(start=span.start, end=span.end, expression=text[start:end], span=(start, end),
                        vague=span.vague, field="captured_at")
    rest, last = [], 0
    for a, b, _ in found:
        rest.append(text[last:a])
        possessive = _POSSESSIVE.match(text, b)  # "last week's notes"
        last = possessive.end() if possessive else b
        rest.append(" ")
    rest.append(text[last:])
    return window, "".join(rest)


_POSSESSIVE = re.compile("['\u2019]s\\b", re.I)


def understand(question: str, now: datetime, tz: ZoneInfo, *, week_start: int = 0) -> Understanding:
    """Split a question into its time window (if any) and the words to search for semantically."""
    window, rest = _parse_all(question, now, tz, week_start)
    if window is None:
        words = _content_words(question)
        return Understanding("semantic", None, " ".join(words) if words else question.strip())
    window = replace(window, field=_field_for(question, window.span))
    words = _content_words(rest)
    if not words:
        return Understanding("temporal", window, "")
    return Understanding("temporal+semantic", window, " ".join(words))


_DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _fmt(dt: datetime, tz: ZoneInfo) -> str:
    local = dt.astimezone(tz)
    return (f"{_DAY_NAMES[local.weekday()]} {local.day} {_MONTH_NAMES[local.month - 1]} {local.year}, "
            f"{local.hour:02d}:{local.minute:02d}")


def describe(window: TimeWindow, tz: ZoneInfo) -> str:
    """Human text for a window, e.g. ``Tue 17 Nov 2026, 00:00 \u2013 Wed 18 Nov 2026, 00:00 (Europe/Paris)``."""
    zone = f"({tz.key})"
    if window.start is not None and window.end is not None:
        text = f"{_fmt(window.start, tz)} \u2013 {_fmt(window.end, tz)} {zone}"
    elif window.start is not None:
        text = f"from {_fmt(window.start, tz)} on {zone}"
    elif window.end is not None:
        text = f"before {_fmt(window.end, tz)} {zone}"
    else:
        text = f"any time {zone}"
    return f"roughly {text}" if window.vague else text
