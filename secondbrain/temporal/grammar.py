"""The grammar of time words: vocabulary, patterns, anchor rules and the recursive-descent parser.

Each anchor rule matches one way of naming a calendar interval ("last Tuesday", "Q3 2024");
the parser combines anchors with the wrappers around them ("since", "between ... and ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from secondbrain.temporal.calendar import (
    PARTS,
    Conventions,
    Ctx,
    Span,
    add_months,
    feast_days,
    lt,
    pair,
    part_of,
    recurring,
    safe_date,
    season_days,
    spans_new_year,
    sub_period,
)

TimeField = Literal["captured_at", "ingested_at"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open ``[start, end)`` window the question is about, in the user's zone."""

    start: datetime | None  # aware, inclusive; None = open
    end: datetime | None  # aware, exclusive; None = open
    expression: str  # the words that were understood, as written
    span: tuple[int, int]  # character span of those words in the question
    vague: bool  # a soft recency hint ("recently"), not a hard filter
    field: TimeField = "captured_at"
    reading: DateReading | None = None  # a numeric date inside that reads as two days, and the one taken


@dataclass(frozen=True, slots=True)
class DateReading:
    """A numeric date that is a valid day both ways ("3/12": 12 March or 3 December)."""

    text: str  # as written
    chosen: date  # the day read in the locale's order
    other: date  # the day read the other way
    order: Literal["mdy", "dmy"]  # the order ``chosen`` was read in


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

_ParseResult = tuple[int, Span]


class _Parser:
    """Recursive descent over one question: anchors (calendar intervals) and the wrappers around them."""

    def __init__(self, text: str, ctx: Ctx) -> None:
        self.text = text
        self.ctx = ctx
        self.readings: dict[tuple[int, int], DateReading] = {}  # ambiguous numeric dates met, by position
        # Wrappers and ranges ask for the same anchors again: each is resolved once per position.
        self._anchors: dict[tuple[int, bool], _ParseResult | None] = {}

    # -- entry points

    def scan(self) -> list[tuple[int, int, Span]]:
        """Every time expression in the text, left to right, the longest one at each word start."""
        found: list[tuple[int, int, Span]] = []
        pos = 0
        while pos < len(self.text):
            if self.text[pos].isalnum() and (pos == 0 or not (self.text[pos - 1].isalnum()
                                                             or self.text[pos - 1] in "'\u2019")):
                got = self.expr(pos)
                if got is not None:
                    end, span = got
                    if span.start is None or span.end is None or lt(span.start, span.end):  # never an empty window
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
        key = (pos, weak)
        if key not in self._anchors:
            self._anchors[key] = self._anchor(pos, weak)
        return self._anchors[key]

    def _anchor(self, pos: int, weak: bool) -> _ParseResult | None:
        best: _ParseResult | None = None
        word = _first_word(self.text, pos)
        for rx, handler, first in _ANCHOR_RULES:
            if first is not None and word not in first:
                continue
            m = rx.match(self.text, pos)
            if m is None:
                continue
            got = handler(self, m, weak)
            if got is not None and (best is None or got[0] > best[0]):
                best = got
        if best is None:
            return None
        return self._with_part_of_day(*best)

    def _with_part_of_day(self, end: int, span: Span) -> _ParseResult:
        """"Tuesday morning", "yesterday in the evening": narrow a single day to a part of it."""
        if span.grain != "day" or span.first_day is None:
            return end, span
        m = _PART_SUFFIX.match(self.text, end)
        if m is None:
            return end, span
        name = m.group("part").lower()
        out = recurring(span, lambda s: part_of(self.ctx, s, name))
        return (m.end(), out) if out is not None else (end, span)

    # -- wrappers

    def _wrapped(self, pos: int) -> _ParseResult | None:
        m = _WRAPPER.match(self.text, pos)
        if m is None:
            return None
        word = re.sub(r"\s+", " ", m.group("w").lower())
        inner_pos = m.end()
        if word == "between":
            return self._joined(inner_pos, _AND)
        ranged = self._bare_range(inner_pos) if word in ("from", "on", "in", "during", "over", "at") else None
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
            return end, Span(span.start, now if lt(span.start, now) else None, "since")
        if word in ("before", "prior to", "earlier than"):
            return end, Span(None, span.start, "before")
        if word == "after":
            return end, Span(span.end, None, "after")
        if word in ("until", "till", "til", "up to", "up until", "through", "thru", "as of"):
            return end, Span(None, span.end, "until")
        return end, span  # in / during / on / from / at / over / within / throughout

    def _bare_range(self, pos: int) -> _ParseResult | None:
        """"March to May 2024", "Monday-Wednesday", "2019-2021"."""
        return self._joined(pos, _CONNECT_RX)

    def _joined(self, pos: int, connector: re.Pattern[str]) -> _ParseResult | None:
        """Two anchors with ``connector`` between them ("and", "to", "-"), as one range."""
        a = self.anchor(pos, weak=True)
        if a is None:
            return None
        c = connector.match(self.text, a[0])
        if c is None:
            return None
        b = self.anchor(c.end(), weak=True)
        if b is None:
            return None
        joined = pair(self.ctx, a[1], b[1])
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
                six = ctx.wall(datetime.combine(add_months(naive.date(), -6), naive.time()))
                one = ctx.wall(datetime.combine(add_months(naive.date(), -1), naive.time()))
                span = Span(six, one, "vague")
            else:
                span = Span(ctx.wall(naive - timedelta(days=30)), ctx.now, "vague")
            return m.end(), replace(span, vague=True)
        m = _FEW_AGO.match(self.text, pos)
        if m is not None:
            unit = _unit(m.group("u"))
            first = ctx.unit_period(ctx.back(7, unit), unit)
            last = ctx.unit_period(ctx.back(1, unit), unit)
            return m.end(), Span(first.start, last.start, "vague", vague=True)
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
                return m.end(), Span(ctx.now, tomorrow0, "part")
            return (m.end(), Span(today0, ctx.now, "part")) if lt(today0, ctx.now) else None
        period = {"week": ctx.week_of(ctx.today), "month": ctx.month(ctx.today.year, ctx.today.month),
                  "year": ctx.year(ctx.today.year)}[unit]
        assert period.start is not None and period.end is not None
        if kind == "earlier":
            # On the first day of the period "earlier this week" can only mean earlier today.
            end = today0 if lt(period.start, today0) else ctx.now
            return (m.end(), Span(period.start, end, "part")) if lt(period.start, end) else None
        if kind == "later":
            return (m.end(), Span(tomorrow0, period.end, "part")) if lt(tomorrow0, period.end) else None
        return (m.end(), Span(period.start, ctx.now, "part")) if lt(period.start, ctx.now) else None


def _longest(candidates: list[_ParseResult | None]) -> _ParseResult | None:
    best: _ParseResult | None = None
    for c in candidates:
        if c is not None and (best is None or c[0] > best[0]):
            best = c
    return best


# --------------------------------------------------------------------------- anchor rules

_Handler = Callable[[_Parser, re.Match[str], bool], "_ParseResult | None"]
_ANCHOR_RULES: list[tuple[re.Pattern[str], _Handler, frozenset[str] | None]] = []


def _rule(pattern: str, *, boundary: bool = True, first: frozenset[str] | None = None
          ) -> Callable[[_Handler], _Handler]:
    """Register an anchor rule; ``first`` (the lower-case words it can start with, "#" for a digit) lets the
    parser skip a long pattern at words that cannot begin it."""
    def register(fn: _Handler) -> _Handler:
        _ANCHOR_RULES.append((_rx(pattern) if boundary else re.compile(pattern, re.IGNORECASE), fn, first))
        return fn
    return register


_FIRST_WORD = re.compile(r"[A-Za-z]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _first_word(text: str, pos: int) -> str:
    if text[pos:pos + 1].isdigit():
        return "#"
    m = _FIRST_WORD.match(text, pos)
    return m.group(0).lower() if m else ""


def _year_from(m: re.Match[str], ctx: Ctx) -> int | None:
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
        if token[0].isupper() and after and after.group(1)[0].isupper() and after.group(1).lower() not in PARTS:
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

    def make(day: date) -> Span:
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
        d = add_months(today, n)
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
    def make(y: int) -> Span:
        return ctx.month(y, mon, lambda k: make(y + k))

    return m.end(), make(cur_y if mon <= cur_m else cur_y - 1)


def _date_span(p: _Parser, m: re.Match[str], mon: int, day: int) -> _ParseResult | None:
    span = _day_span(p.ctx, _year_from(m, p.ctx), mon, day)
    return None if span is None else (m.end(), span)


def _day_span(ctx: Ctx, year: int | None, mon: int, day: int) -> Span | None:
    """That day of ``year``; without a year the most recent such day that is not in the future (recurring)."""
    if year is not None:
        d = safe_date(year, mon, day)
        return None if d is None else ctx.day(d)
    y = ctx.today.year
    for back in range(9):  # most recent occurrence not in the future; 29 Feb may need a few years
        d = safe_date(y - back, mon, day)
        if d is not None and d <= ctx.today:
            break
    else:
        return None
    if safe_date(2000, mon, day) is None:
        return None

    def make(y: int) -> Span | None:
        moved = safe_date(y, mon, day)
        return None if moved is None else ctx.day(moved, lambda k: make(y + k))

    return ctx.day(d, lambda k: make(d.year + k))


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
    d = safe_date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    return None if d is None else (m.end(), p.ctx.day(d))


@_rule(rf"(?P<y>{_YEAR})\.(?P<m>\d\d)\.(?P<d>\d\d)(?!\.\d)", first=frozenset("#"))
def _dotted_iso_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"2025.03.12" (two-digit month and day: "2024.1.2" reads like a version)."""
    return _iso_date(p, m, weak)


@_rule(rf"(?P<y>{_YEAR})-(?P<m>0[1-9]|1[0-2])(?![-/\d])")
def _iso_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    return m.end(), p.ctx.month(int(m.group("y")), int(m.group("m")))


@_rule(r"the\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)")
def _day_of_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if not weak:
        return None  # "the 3rd" alone is usually not a date; "on the 3rd" is
    ctx = p.ctx
    day = int(m.group("d"))

    def make(first: date) -> Span | None:
        d = safe_date(first.year, first.month, day)
        return None if d is None else ctx.day(d, lambda k: make(add_months(first, k)))

    this_month = date(ctx.today.year, ctx.today.month, 1)
    for back in range(0, -3, -1):  # the most recent such day that is not in the future
        got = make(add_months(this_month, back))
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
        start = safe_date(year, month, first)
        if start is None or start > ctx.today:
            year -= 1
    a, b = safe_date(year, month, first), safe_date(year, month, last)
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

    def make(y: int) -> Span:
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
    def make(y: int) -> Span:
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
        return m.end(), Span(start, (start.astimezone(UTC) + timedelta(hours=1)).astimezone(ctx.tz), "hour")
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
    got = recurring(span, lambda s: sub_period(ctx, s, where))
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

    def week_part(s: Span) -> Span | None:
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

    got = recurring(span, week_part)
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

    def weekend(s: Span) -> Span | None:
        if s.grain != "month" or s.first_day is None or s.last_day is None:
            return None
        first_sat = s.first_day + timedelta(days=(5 - s.first_day.weekday()) % 7)
        if ordinal == "last":
            last = s.last_day - timedelta(days=1)
            return p.ctx.weekend_starting(last - timedelta(days=(last.weekday() - 5) % 7))
        return p.ctx.weekend_starting(first_sat + timedelta(days=7 * (_ORDINALS[ordinal] - 1)))

    got = recurring(span, weekend)
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<side>first|last)\s+(?P<n>" + _NUM + r")\s+(?P<u>days|weeks)\s+of\s+", boundary=False)
def _days_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the last two weeks of August 2023", "the first 3 days of May": the start or end of a month or year."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    days = _number(m.group("n")) * (7 if m.group("u").lower() == "weeks" else 1)

    def part(s: Span) -> Span | None:
        if s.first_day is None or s.last_day is None or s.grain not in ("month", "quarter", "half", "year"):
            return None
        if days >= (s.last_day - s.first_day).days:
            return None
        if m.group("side").lower() == "first":
            return p.ctx.days(s.first_day, s.first_day + timedelta(days=days), "days")
        return p.ctx.days(s.last_day - timedelta(days=days), s.last_day, "days")

    got = recurring(span, part)
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


# --------------------------------------------------------------------------- holidays, seasons, numeric dates

_AP = "['\u2019]"
# The names of every feast in ``FEASTS``; within a family the longer names first ("Christmas Eve" before
# "Christmas").  The plain names ("christmas", "easter", "thanksgiving", "new_year") stand for one day and,
# after "over"/"during"/"around", for the few days around it (_AROUND).
_FEAST_NAMES: list[tuple[str, str]] = [
    ("christmas_eve", r"(?:christmas|xmas)\s+eve"),
    ("christmas_day", r"(?:christmas|xmas)\s+day"),
    ("christmas_holidays", r"(?:the\s+)?(?:christmas|xmas)\s+(?:holidays|holiday\s+season|break|period|season"
                           r"|vacation|time)|christmastime|(?:the\s+)?holiday\s+season|(?:the\s+)?festive\s+(?:season|period)"
                           r"|the\s+holidays"),
    ("christmas", r"christmas|xmas"),
    ("boxing_day", rf"boxing\s+day|(?:st\.?|saint)\s+stephen{_AP}?s\s+day"),
    ("new_years_eve", rf"new\s+year(?:{_AP}?s)?\s+eve"),
    ("new_years_day", rf"new\s+year(?:{_AP}?s)?\s+day"),
    ("lunar_new_year", rf"(?:chinese|lunar)\s+new\s+year(?:{_AP}?s)?(?:\s+day)?"),
    ("new_year", rf"(?:the\s+)?new\s+year(?:{_AP}?s)?"),
    ("valentines_day", rf"(?:(?:st\.?|saint)\s+)?valentine(?:{_AP}?s|s{_AP})(?:\s+day)?"),
    ("st_patricks_day", rf"(?:st\.?|saint)\s+patrick{_AP}?s(?:\s+day)?|(?:st\.?\s+)?paddy{_AP}?s\s+day"),
    ("halloween", rf"hall?owe{_AP}?en"),
    ("bonfire_night", r"bonfire\s+night|guy\s+fawkes\s+(?:night|day)"),
    ("ash_wednesday", r"ash\s+wednesday"),
    ("palm_sunday", r"palm\s+sunday"),
    ("maundy_thursday", r"(?:maundy|holy)\s+thursday"),
    ("good_friday", r"good\s+friday"),
    ("easter_weekend", r"(?:the\s+)?easter\s+(?:weekend|holidays|break|vacation)"),
    ("easter_sunday", r"easter\s+(?:sunday|day)"),
    ("easter_monday", r"easter\s+monday"),
    ("easter", r"easter"),
    ("ascension_day", r"ascension\s+day"),
    ("whit_monday", r"whit\s*monday|pentecost\s+monday"),
    ("pentecost", r"pentecost(?:\s+sunday)?|whit\s*sunday"),
    ("thanksgiving_weekend", r"(?:the\s+)?thanksgiving\s+(?:weekend|break|holidays?)"),
    ("thanksgiving_day", r"thanksgiving\s+day"),
    ("thanksgiving", r"thanksgiving"),
    ("black_friday", r"black\s+friday"),
    ("cyber_monday", r"cyber\s+monday"),
    ("mothering_sunday", r"mothering\s+sunday"),
    ("mothers_day", rf"mother(?:{_AP}?s|s{_AP})\s+day"),
    ("fathers_day", rf"father(?:{_AP}?s|s{_AP})\s+day"),
    ("mlk_day", r"(?:martin\s+luther\s+king(?:\s+jr\.?)?|mlk)\s+day"),
    ("presidents_day", rf"president(?:s{_AP}?|{_AP}s)\s+day"),
    ("memorial_day_weekend", r"(?:the\s+)?memorial\s+day\s+weekend"),
    ("memorial_day", r"memorial\s+day"),
    ("juneteenth", r"juneteenth"),
    ("fourth_of_july", r"(?:the\s+)?fourth\s+of\s+july|july\s+(?:the\s+)?fourth"),
    ("independence_day", r"independence\s+day"),
    ("labor_day_weekend", r"(?:the\s+)?labou?r\s+day\s+weekend"),
    ("labor_day", r"labou?r\s+day"),
    ("columbus_day", rf"columbus\s+day|indigenous\s+peoples{_AP}?\s+day"),
    ("veterans_day", rf"veterans{_AP}?\s+day|remembrance\s+day|armistice\s+day"),
    ("canada_day", r"canada\s+day"),
    ("australia_day", r"australia\s+day"),
    ("bastille_day", r"bastille\s+day"),
    ("diwali", r"diwali|deepavali"),
    ("hanukkah", r"c?hanukk?ah|hanuka"),
    ("passover", r"passover|pesach"),
    ("rosh_hashanah", r"rosh\s+hashanah?"),
    ("yom_kippur", r"yom\s+kippur"),
    ("eid_al_adha", r"eid\s+(?:al|ul)[-\s]?adha"),
    ("eid_al_fitr", r"eid(?:\s+(?:al|ul)[-\s]?fitr)?"),
]
_AROUND = {"christmas": "christmas_holidays", "easter": "easter_weekend", "thanksgiving": "thanksgiving_weekend",
           "new_year": "new_year"}
_PLAIN_DAY = {"christmas": "christmas_day", "easter": "easter_sunday", "thanksgiving": "thanksgiving_day",
              "new_year": "new_years_day"}
_AROUND_BEFORE = re.compile(r"(?:^|\W)(?:over|during|throughout|across|around)\s+$", re.I)
# A name followed by one of these is a modifier ("Christmas presents", "Easter eggs", "Spring Boot"), not a time.
_NOT_TIME_AFTER = re.compile(
    r"\s+(?:presents?|gifts?|cards?|party|parties|dinners?|lunch|trees?|lights|lists?|eggs?|hunt|costumes?|movies?|"
    r"films?|songs?|carols?|markets?|sales?|deals?|shopping|decorations?|menus?|recipes?|specials?|jumpers?|"
    r"sweaters?|island|bonus|parade|card|cake|candy|pumpkins?|story|stories|spirit|miracle|special|"
    r"framework|boot|camp|school|job|internship|cleaning|collection|fashion|olympics|games|solstice|equinox|"
    r"rolls?|onions?|water|tyres?|tires?|coats?|jackets?|clothes|wardrobe|squash|wheat|storms?|"
    r"resolutions?|greetings?|wishes|message|honours|honors|concert|sermon|service|mass|"
    r"of(?!\s+(?:(?:19|20)\d\d|last|this|next)\b))\b", re.I)
_FEAST_RX = "|".join(f"(?P<f_{key}>{pattern})" for key, pattern in _FEAST_NAMES)
# The words a feast's name (or its qualifier) can start with: the rule is only tried there.
_FEAST_FIRST = _words("""
this last past previous next coming the christmas xmas christmastime holiday festive boxing st saint new chinese
lunar valentine valentines paddy paddys halloween haloween hallowe bonfire guy ash palm maundy holy good easter
ascension whit whitsunday whitmonday pentecost thanksgiving black cyber mothering mother mothers father fathers
martin mlk president presidents memorial juneteenth fourth july independence labor labour columbus indigenous
veterans veteran remembrance armistice canada australia bastille diwali deepavali hanukkah hanukah hanuka
chanukah chanukkah passover pesach rosh yom eid
""")
_QUALIFIER = {"last": "last", "this past": "last", "past": "last", "previous": "last", "this": "this", "next": "next",
              "coming": "next", "the coming": "next"}


def _qualifier(word: str | None) -> str:
    return _QUALIFIER[re.sub(r"\s+", " ", word.lower())] if word else ""


_Days = tuple[date, date]  # [first day, day after the last)


def _pick(ctx: Ctx, q: str, days: Callable[[int], _Days | None], grain: str) -> Span | None:
    """Which occurrence of a yearly period is meant: ``last`` = the most recent one that has ended, ``next``
    = the first one that starts after today, ``this`` = the one under way, else this calendar year's (for
    a period across the new year, the nearer of the last and the next one); no word = the most recent one
    that has started (today's included), keeping the others reachable by shifting."""
    today, y = ctx.today, ctx.today.year
    found = [(k, d) for k in range(y - 3, y + 4) if (d := days(k)) is not None]
    ended = next(((k, d) for k, d in reversed(found) if d[1] <= today), None)
    coming = next(((k, d) for k, d in found if d[0] > today), None)
    chosen: tuple[int, _Days] | None
    if q == "last":
        chosen = ended
    elif q == "next":
        chosen = coming
    elif q == "this":
        going = [(k, d) for k, d in found if d[0] <= today < d[1]]
        current = days(y)
        if going:
            chosen = going[-1]
        elif current is None or current[0].year == (current[1] - timedelta(days=1)).year:
            chosen = None if current is None else (y, current)
        elif ended is None or coming is None:
            chosen = ended or coming
        else:
            chosen = ended if (today - ended[1][1]) <= (coming[1][0] - today) else coming
    else:
        started = [(k, d) for k, d in found if d[0] <= today]
        if not started:
            return None
        k0 = started[-1][0]

        def shifted(k: int) -> Span | None:
            got = days(k)
            return None if got is None else ctx.days(*got, grain=_grain(got, grain),
                                                     shift=lambda j: shifted(k + j))

        return shifted(k0)
    return None if chosen is None else ctx.days(*chosen[1], grain=_grain(chosen[1], grain))


def _grain(days: _Days, grain: str) -> str:
    """A one-day feast is a "day" (so "Christmas morning" and "the day after Thanksgiving" work)."""
    return "day" if grain == "feast" and days[1] - days[0] == timedelta(days=1) else (
        "days" if grain == "feast" else grain)


@_rule(rf"(?:(?P<q>this\s+past|last|past|previous|this|next|coming|the\s+coming)\s+"
       rf"|(?P<ry0>last|this|next)\s+year{_AP}s\s+)?(?:{_FEAST_RX})"
       rf"(?:\s*,?\s*(?:of\s+)?(?P<yr>{_YEAR})(?!\d)|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?",
       first=_FEAST_FIRST)
def _feast(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"on Christmas Eve", "last Easter", "Thanksgiving 2024", "over the holidays": a named day or holiday
    period (``FEASTS``) in the user's country."""
    ctx = p.ctx
    key = next(k[2:] for k, v in m.groupdict().items() if k.startswith("f_") and v is not None)
    q = _qualifier(m.group("q"))
    year = _year_from(m, ctx)
    if m.group("ry0"):
        year = ctx.today.year + {"last": -1, "this": 0, "next": 1}[m.group("ry0").lower()]
    if not (q or year is not None or weak):
        return None  # "Christmas cards", "Halloween costume ideas": a bare name is a topic
    if not q and year is None:
        if _NOT_TIME_AFTER.match(p.text, m.end()):
            return None
        if key == "new_year" and re.search(r"\bin\s+$", p.text[:m.start()], re.I):
            return None  # "in the new year" is some time after the next 1 January
    if m.group(f"f_{key}") == "eid":
        return None  # lower-case "eid" is as often an identifier as the feast
    if key in _AROUND:
        key = _AROUND[key] if _AROUND_BEFORE.search(p.text[:m.start()]) else _PLAIN_DAY[key]
    country = ctx.conventions.country

    def days(y: int) -> _Days | None:
        return feast_days(key, y, country)

    if year is not None:
        named = days(year)
        return None if named is None else (m.end(), ctx.days(*named, grain=_grain(named, "feast")))
    span = _pick(ctx, q, days, "feast")
    return None if span is None else (m.end(), span)


# The bare word needs a preposition ("in summer", "since the spring", "the end of winter"), not just any
# word before it: "on fall" or "the price fall" are not seasons.
_SEASON_BEFORE = re.compile(r"(?:^|\W)(?:in|during|since|over|throughout|through|until|till|before|after|from|"
                            r"between|and|to|of|early|mid|late|around|across)\W*$", re.I)


@_rule(rf"(?:(?P<q>this\s+past|last|past|previous|this|next|coming|the\s+coming)\s+|(?P<the>the\s+)"
       rf"|(?P<ry0>last|this|next)\s+year{_AP}s\s+)?(?P<season>spring|summer|autumn|fall|winter)(?:time)?"
       rf"(?:\s*,?\s*(?:of\s+)?(?P<yr>{_YEAR})(?:\s*[-/\u2013]\s*(?P<yr2>(?:19|20)?\d\d))?(?!\d)"
       rf"|\s*'(?P<y2>\d{{2}})|\s+(?:of\s+)?{_REL_YEAR})?",
       first=_words("this last past previous next coming the spring summer autumn fall winter springtime summertime "
                    "autumntime falltime wintertime"))
def _season(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"last summer", "this winter", "in spring 2024", "the summer of 2023", "winter 2023-24": a meteorological
    season in the user's hemisphere."""
    ctx = p.ctx
    word = m.group("season")
    name = word.lower()
    hemisphere = ctx.conventions.hemisphere
    q = _qualifier(m.group("q"))
    year = _year_from(m, ctx)
    if m.group("ry0"):
        year = ctx.today.year + {"last": -1, "this": 0, "next": 1}[m.group("ry0").lower()]
    after = _NEXT_WORD.match(p.text, m.end())
    if word[0].isupper() and after and after.group(1)[0].isupper() and after.group(1) != "I" and year is None:
        return None  # a name or a title: "Summer Smith", "Spring Boot", "Winter Olympics"
    if not q and year is None:
        if not weak or not _SEASON_BEFORE.search(p.text[:m.start()]) or _NOT_TIME_AFTER.match(p.text, m.end()):
            return None
        if _POSSESSIVE.match(p.text, m.end()):
            return None  # "at Summer's house"
    if m.group("yr2"):
        first_year, second = int(m.group("yr")), m.group("yr2")
        second_year = int(second) if len(second) == 4 else first_year // 100 * 100 + int(second)
        if second_year != first_year + 1 or not spans_new_year(name, hemisphere):
            return None  # only the season across the new year is named by two years
        year = second_year

    def days(y: int) -> _Days:
        return season_days(name, y, hemisphere)

    if year is not None:
        return m.end(), ctx.days(*days(year), grain="season")
    span = _pick(ctx, q, days, "season")
    return None if span is None else (m.end(), span)


# Units and words after which a number pair is a fraction or a quantity: "3/4 of the budget", "1/2 cup".
_FRACTION_AFTER = re.compile(r"\s*(?:of|cups?|tbsp|tsp|teaspoons?|tablespoons?|inch(?:es)?|in\.|ft|feet|foot|miles?|"
                             r"mi|km|kg|lbs?|pounds?|oz|ounces?|hours?|hrs?|minutes?|mins?|pages?|points?|stars?)\b",
                             re.I)


# The prepositions that put a bare number pair on the calendar ("on 3/12", "the week of 3/12"; a range's end
# after "-"); "in" is left out ("in 3/4 of the cases", "fixed in 3.11.12").
_NUMERIC_BEFORE = re.compile(r"(?:(?:^|\W)(?:on|since|until|till|til|before|after|between|and|from|to|through|thru|"
                             r"of|by)\s+|\s*[-\u2013]\s*)$", re.I)


_NUMBER_PAIR = r"(?P<a>\d{1,2})[/.-](?P<b>\d{1,2})"
_PARTNER_AFTER = re.compile(rf"(?:{_CONNECT}|\s+and\s+){_NUMBER_PAIR}", re.I)
_PARTNER_BEFORE = re.compile(rf"{_NUMBER_PAIR}(?:[/.-]\d{{2,4}})?(?:{_CONNECT}|\s+and\s+)$", re.I)


def _partner_order(p: _Parser, m: re.Match[str]) -> str | None:
    """The only order in which the other end of a numeric range reads as a date, if just one does."""
    partner = _PARTNER_AFTER.match(p.text, m.end()) or _PARTNER_BEFORE.search(p.text, 0, m.start())
    if partner is None:
        return None
    a, b = int(partner.group("a")), int(partner.group("b"))
    orders = [order for order, (month, day) in (("mdy", (a, b)), ("dmy", (b, a)))
              if safe_date(2000, month, day) is not None]
    return orders[0] if len(orders) == 1 else None


def _numeric_year(token: str, ctx: Ctx) -> int:
    """A 2-digit year in this century unless that is more than ten years ahead ("3/12/98" is 1998)."""
    if len(token) == 4:
        return int(token)
    year = ctx.today.year // 100 * 100 + int(token)
    return year - 100 if year > ctx.today.year + 10 else year


@_rule(r"(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?:(?P=sep)(?P<y>\d{4}|\d{2}))?(?![\d%]|[./]\d)",
       first=frozenset("#"))
def _numeric_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"on 3/12", "12/03/2025", "12.03.2025", "3-12-25": day and month in the order of the user's locale when
    both readings are valid dates (the other reading is kept on the parser), else the only valid one."""
    ctx = p.ctx
    if m.start() and p.text[m.start() - 1] in "./:,":
        return None  # inside a longer number: "1.2.3.4", "10:3/4"
    sep, ys = m.group("sep"), m.group("y")
    a, b = int(m.group("a")), int(m.group("b"))
    dated = bool(_NUMERIC_BEFORE.search(p.text[:m.start()]))
    if ys is None:
        # Without a year only "on 3/12", "since 3/12" (slashes): "12.5" is a number, "3-1" a score, "in 3/4
        # of the cases" a fraction.
        if sep != "/" or not (weak and dated) or (a, b) == (24, 7) or _FRACTION_AFTER.match(p.text, m.end()):
            return None
    elif len(ys) == 2 and sep != "/" and not (weak and dated):
        return None  # "1.2.25", "in 3.11.12" read like versions
    year = None if ys is None else _numeric_year(ys, ctx)
    # Year-first locales write "3/12" month first.
    order: Literal["mdy", "dmy"] = "dmy" if ctx.conventions.date_order == "dmy" else "mdy"
    readings = {"mdy": (a, b), "dmy": (b, a)}  # (month, day)

    def resolve(month: int, day: int) -> Span | None:
        return _day_span(ctx, year, month, day)

    chosen = resolve(*readings[order])
    other = resolve(*readings["dmy" if order == "mdy" else "mdy"]) if a != b else None
    partner = _partner_order(p, m) if chosen is not None and other is not None else None
    if partner is not None and partner != order and other is not None:
        return m.end(), other  # "3/12-3/14": the range's other end is only a date read the other way
    if chosen is None:
        if other is None:
            return None
        return m.end(), other  # only one reading is a date: "13/03/2025" whatever the locale
    if other is not None and partner is None and chosen.first_day is not None and other.first_day is not None:
        p.readings[(m.start(), m.end())] = DateReading(m.group(0), chosen.first_day, other.first_day, order)
    return m.end(), chosen


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


def parse_time(text: str, now: datetime, tz: ZoneInfo, *, week_start: int = 0,
               conventions: Conventions | None = None) -> TimeWindow | None:
    """The time window ``text`` talks about, or ``None`` when it names no time.

    ``now`` is the reference instant (a naive value is read as wall-clock time in ``tz``);
    ``week_start`` is the first day of a week (0 = Monday ... 6 = Sunday); ``conventions`` give the
    holiday country, the hemisphere and the numeric date order (default: US, north, month first).
    The field is always ``captured_at`` here; :func:`understand` decides between the two fields.
    """
    return parse_all(text, now, tz, week_start, conventions)[0]


def parse_all(text: str, now: datetime, tz: ZoneInfo, week_start: int,
              conventions: Conventions | None = None) -> tuple[TimeWindow | None, str]:
    """The chosen window and the text with every time expression blanked out."""
    if not 0 <= week_start <= 6:
        raise ValueError("week_start must be 0 (Monday) to 6 (Sunday)")
    parser = _Parser(text, Ctx(now, tz, week_start, conventions))
    found = parser.scan()
    if not found:
        return None, text
    # The earliest precise expression wins; a vague one only when nothing else is there.
    start, end, span = next((f for f in found if not f[2].vague), found[0])
    reading = next((r for (a, b), r in sorted(parser.readings.items()) if start <= a and b <= end), None)
    window = TimeWindow(start=span.start, end=span.end, expression=text[start:end], span=(start, end),
                        vague=span.vague, field="captured_at", reading=reading)
    rest, last = [], 0
    for a, b, _ in found:
        rest.append(text[last:a])
        possessive = _POSSESSIVE.match(text, b)  # "last week's notes"
        last = possessive.end() if possessive else b
        rest.append(" ")
    rest.append(text[last:])
    return window, "".join(rest)


def scan(text: str, ctx: Ctx) -> list[tuple[int, int, Span]]:
    """Every time expression in ``text`` as ``(start, end, span)``, left to right, resolved against
    ``ctx`` (a passage's own time, for :mod:`secondbrain.temporal.mentions`)."""
    return _Parser(text, ctx).scan()


_POSSESSIVE = re.compile("['\u2019]s\\b", re.I)

