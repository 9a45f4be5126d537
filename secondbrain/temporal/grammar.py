"""The grammar of time words: vocabulary, patterns, anchor rules and the recursive-descent parser.

Each anchor rule matches one way of naming a calendar interval ("last Tuesday", "Q3 2024");
the parser combines anchors with the wrappers around them ("since", "between ... and ...").
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Literal
from zoneinfo import ZoneInfo

from secondbrain.temporal.calendar import (
    MONTHS_IN,
    PARTS,
    Conventions,
    Ctx,
    Span,
    add_months,
    feast_days,
    lt,
    nth_in,
    occurrence,
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
    # Read only in part: the words hold time words the grammar does not cover ("the last working day of
    # March"), and ``start``/``end`` are what it did read (March).  A preference, never a filter.
    partial: bool = False


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
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
             "fifth": 5, "5th": 5}
# Counting from the end of a period: "the last Friday of March", "the second-to-last Friday".
_FROM_END = {"last": -1, "final": -1, "penultimate": -2}
_ORDINAL_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                  "eighteenth", "nineteenth", "twentieth"]
# Days of a month in words: "the fifth of last month", "the twenty-first of May".
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINAL_WORDS)} | {
    f"twenty{sep}{w}": 20 + i + 1 for sep in ("-", " ") for i, w in enumerate(_ORDINAL_WORDS[:9])} | {
    "thirtieth": 30, "thirty-first": 31, "thirty first": 31}
# Weekday abbreviations that are also ordinary words: only after on/last/this/next.
_WORD_ABBR = frozenset({"sun", "sat", "wed"})
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
_UNIT = r"(?:minute|min|hour|hr|day|week|fortnight|month|year|decade)s?"
# A year number followed by one of these is a quantity ("in 2000 words"), not a year.
_NOT_YEAR = (r"(?!\s*(?:words?|characters?|chars?|pages?|lines?|tokens?|items?|times|rows?|people|users?|files?|"
             r"records?|points?|steps?|euros?|dollars?|usd|eur|gbp|km|kg|mb|gb|%|\$|€))")
_AP = "['\u2019]"
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


# Letters outside ASCII that ``re.IGNORECASE`` takes for ASCII ones ("la\u017ft week", "fr\u0131day"): the
# patterns match them, the word tables would not know them.  Same length, so positions stay.
_LOOKALIKES = str.maketrans({"\u017f": "s", "\u212a": "k", "\u0131": "i", "\u0130": "I", "\u212b": "\u00e5"})


class _Parser:
    """Recursive descent over one question: anchors (calendar intervals) and the wrappers around them."""

    def __init__(self, text: str, ctx: Ctx) -> None:
        self.text = text.translate(_LOOKALIKES)
        self.ctx = ctx
        self.readings: dict[tuple[int, int], DateReading] = {}  # ambiguous numeric dates met, by position
        # Wrappers and ranges ask for the same anchors again: each is resolved once per position.
        self._anchors: dict[tuple[int, bool], _ParseResult | None] = {}
        self._matches: dict[int, list[tuple[_Handler, re.Match[str]]]] = {}

    # -- entry points

    def scan(self) -> list[tuple[int, int, Span]]:
        """Every time expression in the text, left to right, the longest one at each word start; two that
        stand side by side are read together ("Tuesday two weeks ago"), and one that sits among time words
        the grammar does not cover is marked ``partial`` (see ``_unread``)."""
        found: list[tuple[int, int, Span]] = []
        at = _WORD_START.search(self.text)
        while at is not None:
            pos, after = at.start(), at.start() + 1
            got = self.expr(pos) if _may_start(self.text, pos) else None
            if got is not None:
                end, span = got
                if span.start is None or span.end is None or lt(span.start, span.end):  # never an empty window
                    found.append((pos, end, span))
                    after = end
            at = _WORD_START.search(self.text, after)
        return self._unread(self._side_by_side(found))

    def _side_by_side(self, found: list[tuple[int, int, Span]]) -> list[tuple[int, int, Span]]:
        """Two expressions with nothing but a comma, "on", "in", "of" or "at" between them name one time:
        a recurring one placed in the other ("Tuesday two weeks ago", "the Friday of last week", "Monday, 2
        March") is the one occurrence inside it, one inside the other is the inner one ("last month, on 5
        October").  Anything else ("three weeks ago last Tuesday", "a Tuesday in March") is read in part:
        the containing one, else the one that says more, as a preference."""
        out: list[tuple[int, int, Span]] = []
        for a, b, span in found:
            if out and _bounded(span) and _bounded(out[-1][2]) and _BETWEEN.fullmatch(self.text, out[-1][1], a):
                pa, _, first = out[-1]
                out[-1] = (pa, b, _together(first, span))
                continue
            out.append((a, b, span))
        return out

    def _unread(self, found: list[tuple[int, int, Span]]) -> list[tuple[int, int, Span]]:
        """Mark what is read among time words the grammar does not cover, and take those words in.

        * "<time word> of X" where the grammar has no rule for the whole: "the last working day of
          September", "the first half of last quarter", "the 31st of last month" (September has 30 days).
          X is read (even a bare month: "of" makes it a time here) and the whole is a preference for X.
        * "<time words> before/after X" that no rule reads: "two months before Christmas".
        * a hedge: "about three weeks ago", "around 3 March", "the 15th of last month or so".
        """
        text = self.text
        out = list(found)
        for m in _unread_of(text):
            inside = next((i for i, (a, b, _) in enumerate(out) if a < m.end() < b), None)
            if inside is not None:  # read as a whole ("the second Tuesday of March") or side by side
                a, b, span = out[inside]
                if span.partial and m.start() < a:
                    out[inside] = (m.start(), b, span)
                continue
            at = next((f for f in out if f[0] == m.end()), None)
            if at is None:
                got = self.container(m.end())
                if got is None or not (got[1].start is None or got[1].end is None or lt(got[1].start, got[1].end)):
                    continue
                end, span = got
            else:
                _, end, span = at
            # Whatever the unread words swallow (the weekday of "the last working Thursday of ...") goes.
            out = [f for f in out if f[1] <= m.start() or f[0] >= end]
            out.append((m.start(), end, replace(span, partial=True)))
            out.sort(key=lambda f: f[0])
        marked = []
        for a, b, span in out:
            before = text[max(0, a - 80):a]  # the words just before it (a hedge, or "two months" of "... before X")
            hedge = _HEDGE_BEFORE.search(before)
            if hedge and (hedge.group("w").lower() == "about") and not _AGO_RX.match(text, a):
                hedge = None  # "notes about last week": about is "concerning" unless it counts back
            if hedge and hedge.group("w").lower() == "around" and _FEAST_START.match(text, a):
                hedge = None  # "around Christmas" is a period the grammar knows
            lead = _UNREAD_BEFORE.search(before) if _OPEN_WORD.match(text, a) else None
            tail = _HEDGE_AFTER.match(text, b)
            if hedge or lead or tail:
                a = min(x.start() for x in (hedge, lead) if x is not None) if hedge or lead else a
                b = tail.end() if tail else b
                span = replace(span, partial=True)
            marked.append((a, b, span))
        return marked

    def expr(self, pos: int) -> _ParseResult | None:
        """The longest expression (wrapped or bare) starting exactly at ``pos``.  (A pattern tried first
        here is one of ``_EXPR_PATTERNS`` too, else ``scan`` passes over the words that begin it.)"""
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

    def container(self, pos: int) -> _ParseResult | None:
        """A period something is placed in: an anchor ("March", "last month", "Q3 2024") or "the week/month/
        quarter/year" (the current one: "the first Monday of the year")."""
        got = self.anchor(pos, weak=True)
        m = _THE_PERIOD.match(self.text, pos)
        if m is not None and (got is None or got[0] < m.end()):
            return m.end(), _current(self.ctx, m.group("u").lower())
        return got

    def _anchor(self, pos: int, weak: bool) -> _ParseResult | None:
        best: _ParseResult | None = None
        for handler, m in self._rule_matches(pos):
            got = handler(self, m, weak)
            if got is not None and (best is None or got[0] > best[0]):
                best = got
        if best is None:
            return None
        return self._with_part_of_day(*best)

    def _rule_matches(self, pos: int) -> list[tuple[_Handler, re.Match[str]]]:
        """The anchor rules whose patterns match at ``pos``, in order, with their matches (the same whether
        the anchor is ``weak`` or not: only the handlers tell the two apart)."""
        if pos not in self._matches:
            word = _first_word(self.text, pos)
            self._matches[pos] = [(handler, m) for rx, handler, first in _rules_at(_start_key(self.text, pos))
                                  if (first is None or word in first) and (m := rx.match(self.text, pos))]
        return self._matches[pos]

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
        return end, span  # in / during / on / from / at / by / over / within / throughout

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
        fortnight_ahead = unit == "fortnight" and q in ("next", "coming")
        rolls = q == "past" or (bool(m.group("the")) and (q in ("last", "past") or fortnight_ahead))
        if n_word is None and not rolls:
            # "last week"/"the previous week" are calendar weeks; "the last week"/"past week" roll, and so does
            # "the next fortnight" (a fortnight has no calendar)
            return None
        if n_word is None and unit == "minute":
            return None  # "the last minute changes"
        if n_word is None and _OF.match(self.text, m.end()):
            return None  # "the last week of October" is a week of that month, not the past 7 days
        n = _number(n_word) if n_word else 1
        forward = q in ("next", "coming", "following")
        if forward and n_word is None and unit != "fortnight":
            return None  # "next week" is the calendar week (a fortnight has none: "the next fortnight" rolls)
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


def _bounded(span: Span) -> bool:
    """A precise window closed at both ends (not "recently", not "since March", which runs up to now)."""
    return (not span.vague and span.start is not None and span.end is not None
            and span.grain not in ("since", "before", "after", "until"))


def _within(inner: Span, outer: Span) -> bool:
    """``inner`` lies inside ``outer`` (an open end reaches as far as it goes)."""
    if (inner.start is None and outer.start is not None) or (inner.end is None and outer.end is not None):
        return False
    return ((outer.start is None or inner.start is None or not lt(inner.start, outer.start))
            and (outer.end is None or inner.end is None or not lt(outer.end, inner.end)))


def _occurrences_within(span: Span, outer: Span, most: int = 40) -> list[Span]:
    """The occurrences of a recurring ``span`` that lie inside the bounded ``outer`` (up to ``most``)."""
    assert span.shift is not None and span.start is not None and outer.start is not None and outer.end is not None
    period = 0.0
    for k in (1, 2):  # the next occurrence may not exist (29 February): then the one after
        later = span.shift(k)
        if later is not None and later.start is not None:
            period = (later.start.timestamp() - span.start.timestamp()) / k
            break
    if period <= 0:
        return []
    k0 = int((outer.start.timestamp() - span.start.timestamp()) // period) - 1
    out: list[Span] = []
    for k in range(k0, k0 + int((outer.end.timestamp() - outer.start.timestamp()) // period) + 3):
        got = span.shift(k) if k else span
        if got is not None and got.start is not None and got.end is not None and _within(got, outer):
            out.append(replace(got, shift=None))
            if len(out) >= most:
                break
    return out


def _together(first: Span, second: Span) -> Span:
    """One time from two expressions side by side (see ``_Parser._side_by_side``)."""
    for inner, outer in ((first, second), (second, first)):
        if inner.shift is not None and inner.start is not None and outer.start is not None and outer.end is not None:
            inside = _occurrences_within(inner, outer)
            if len(inside) == 1:  # "Tuesday two weeks ago", "on the 5th last month"
                return inside[0]
            if inside:  # "a Tuesday in March": one of several, so the container, as a preference
                return replace(outer, shift=None, partial=True)
    for inner, outer in ((first, second), (second, first)):
        if inner.shift is None and outer.shift is None and _within(inner, outer):
            return inner  # "last month, on 5 October"
    # Unrelated ("three weeks ago last Tuesday", "Monday, 3 March" when 3 March is no Monday): the one that
    # says more (a date over a weekday, a fixed time over a recurring one), else the first, as a preference.
    chosen = second if _recurs_every(second) > _recurs_every(first) else first
    return replace(chosen, shift=None, partial=True)


def _recurs_every(span: Span) -> float:
    """How far apart the occurrences of ``span`` are, in seconds (infinite for a time that does not recur)."""
    if span.shift is None or span.start is None:
        return float("inf")
    for k in (1, 2):
        later = span.shift(k)
        if later is not None and later.start is not None:
            return (later.start.timestamp() - span.start.timestamp()) / k
    return float("inf")


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


_WEEKDAY_WORDS = frozenset(_WEEKDAYS) | frozenset(_WEEKDAY_ABBR)
_NUMBER_WORDS = frozenset({"#", *(w.split()[0] for w in _NUMBERS)})


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
        if token.lower() in _WEEKDAY_ABBR and not _abbreviated_day(p.text, token, m.end()):
            return None  # "sat", "sun", "wed" alone are ordinary words
        before = re.findall(r"[A-Za-z]+", p.text[: m.start()])
        if before and before[-1].lower() in _WEEKDAY_BLOCKERS:
            return None  # "Black Friday"
        after = _NEXT_WORD.match(p.text, m.end())
        if (token[0].isupper() and after and after.group(1)[0].isupper() and after.group(1).lower() not in PARTS
                and after.group(1) != "I"):
            return None  # a title: "the Sunday Times", "Monday Notes" ("Friday I went" is a day)
        if before and before[-1].lower() in ("the", "that") and after and after.group(1).lower() in _UNSAID_AFTER:
            return None  # "the Monday I left", "the Friday before": which one is said elsewhere
    if not q and not m.group("wk") and _names_a_recurring_thing(p.text, m.start(), m.end()):
        return None  # "the Monday standup", "Friday drinks", "every Monday": what recurs, not a day
    if q in ("last", "this past", "past") and _COUNTED_EVENT.match(p.text, m.end()):
        return None  # "the last Friday retro of the year": the year's last, not the most recent
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

    if re.search(r"\ba\s+$", p.text[: m.start()], re.I):
        return m.end(), replace(make(d), partial=True)  # "on a Friday": which one is unsaid
    return m.end(), make(d)


# After a weekday's short name, what makes it a day as written on tickets, slips and in chats ("Sat 10am",
# "Thu 26/11", "SAT 12/12/2026", "Thu!"): a time, a date, or the end of what is said.
_DAY_AFTER_ABBR = re.compile(rf"\.?(?:\s*,?\s*(?:at\s+)?\d|\s*[!?]|\s*$|\s+(?:or|and|to|-)\s+{_WD}\b)", re.I)


def _abbreviated_day(text: str, token: str, end: int) -> bool:
    """Whether a weekday's short name ("Thu", "Weds", "Sat") stands for a day: written with a capital, and, for
    the three that are ordinary words too (sat, sun, wed), followed by a time or a date."""
    if not token[0].isupper():
        return False
    return token.lower() not in _WORD_ABBR or bool(_DAY_AFTER_ABBR.match(text, end))


@_rule(rf"(?P<wd>{_WD})\s*,?\s+(?:the\s+)?(?P<d>{_DAYNUM})(?!\s+(?:of\s+)?{_MON}|\s*[/.:-]?\d)", first=_WEEKDAY_WORDS)
def _weekday_and_day(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"Thursday the 12th", "Friday 13th": the most recent such day of a month that fell on that weekday."""
    if not re.search(r"(?:st|nd|rd|th)$", m.group("d"), re.I) and not re.match(r"the\b", p.text[m.end("wd"):].
                                                                                  lstrip(" ,"), re.I):
        return None  # "Monday 3 people came", "Monday 23 to Sunday 29 November": a day needs "the" or its suffix
    token = m.group("wd").lower()
    if token in _WORD_ABBR and not m.group("wd")[0].isupper():
        return None  # "sat 3rd in the race" ("Sat 12th" is a day)
    wd = _WEEKDAYS.get(token, _WEEKDAY_ABBR.get(token))
    assert wd is not None
    day = _day_number(m.group("d"))
    ctx = p.ctx

    def days_from(month: date, step: int) -> Iterator[date]:
        """The months' ``day``s that fall on ``wd``, from ``month`` on, forwards or backwards."""
        for _ in range(12 * 30):
            d = safe_date(month.year, month.month, day)
            if d is not None and d.weekday() == wd:
                yield d
            month = add_months(month, step)

    def make(d: date) -> Span:
        def shift(k: int) -> Span | None:
            if k == 0:
                return make(d)
            found = list(itertools.islice(days_from(add_months(d.replace(day=1), 1 if k > 0 else -1),
                                                    1 if k > 0 else -1), abs(k)))
            return make(found[-1]) if len(found) == abs(k) else None
        return ctx.day(d, shift)

    latest = next((d for d in days_from(ctx.today.replace(day=1), -1) if d <= ctx.today), None)
    return None if latest is None else (m.end(), make(latest))


@_rule(rf"(?P<wd>{_WD})\s*,?\s+(?=\d|the\s|{_MON})", boundary=False, first=_WEEKDAY_WORDS)
def _weekday_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"Friday, 1 March 2024", "Mon 2 March", "Tuesday the 3rd of March": a date with its weekday.  When the
    weekday is not the date's, the date is read but only in part (one of the two is wrong)."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None or inner[1].grain != "day" or inner[1].first_day is None:
        return None
    token = m.group("wd").lower()
    if token in _WORD_ABBR and not (weak or token[0].isupper()):
        return None
    wd = _WEEKDAYS.get(token, _WEEKDAY_ABBR.get(token))
    end, span = inner
    return end, span if span.first_day is not None and span.first_day.weekday() == wd else replace(span, partial=True)


# Words after a weekday (and perhaps a part of the day) that make it the name of something that recurs:
# "the Monday standup", "Friday drinks", "my Saturday morning run".
_EVENT_NOUNS = _words("""
standup standups stand-up stand-ups retro retros retrospective retrospectives meeting meetings sync syncs call
calls check-in check-ins checkin catch-up catchup huddle briefing review reviews planning demo demos session
sessions class classes lesson lessons lecture lectures seminar workshop club group service mass market markets
drinks drink lunch lunches dinner dinners breakfast brunch roast run runs ride rides walk walks hike swim workout
workouts training practice game games match league quiz shift school show podcast paper newspaper newsletter
digest report update updates roundup recap email mail sermon prayers choir rehearsal gig jam football soccer
tennis golf yoga pilates gym chores cleaning shopping deploy deploys release releases sprint kickoff kick-off
1:1 one-on-one office blues feeling vibes routine ritual tradition habit special specials crossword
""")
_COUNTED_EVENT = re.compile(r"\s+[^\W\d][\w-]*\s+(?:of|in)\s+(?:the\s+)?(?:year|month|quarter|week|season)\b", re.I)
_EVENT_AFTER = re.compile(rf"(?:\s+(?:{_alt(PARTS)}))?\s+(?P<w>\d:\d|[^\W\d][\w-]*)", re.I)
# Before a weekday, words that make it a kind of day rather than one day: "every Monday", "our Tuesday review".
_RECURRING_BEFORE = frozenset({"every", "each", "alternate"})
# After "the Monday", words that place it by something the grammar does not read: "the Monday I left".
_UNSAID_AFTER = frozenset({"i", "we", "you", "he", "she", "they", "before", "after", "when"})
_DETERMINERS = frozenset({"the", "our", "my", "your", "his", "her", "their", "a", "usual", "regular", "weekly",
                          "fortnightly", "monthly", "standing"})
# After "the Monday", words that keep it a day: "the Monday I left", "the Monday after", "the Monday morning".
_DAY_CONTINUES = _words("""
i we you he she they it that when where which who before after of in on at and or but to from for by with
was is were are had has have did do does last this next morning afternoon evening night
""")


def _names_a_recurring_thing(text: str, start: int, end: int) -> bool:
    """Whether the weekday at ``text[start:end]`` names a recurring event or set rather than a day: it comes
    after "every"/"each" or before an event's name ("Friday drinks", "the Monday standup"), or it sits
    between a determiner and another noun ("our Tuesday review")."""
    before = re.findall(r"[A-Za-z]+", text[:start])
    last = before[-1].lower() if before else ""
    if last in _RECURRING_BEFORE or any(w.lower() in ("every", "each") for w in before[-2:]):
        return True  # "every Monday", "every other Friday", "each second Tuesday"
    after = _EVENT_AFTER.match(text, end)
    if after is None:
        return False
    word = after.group("w").lower()
    if word in _EVENT_NOUNS:
        return True
    return last in _DETERMINERS and word.isalpha() and word.islower() and word not in _DAY_CONTINUES \
        and word not in _WEEKDAYS and word not in _MONTHS


@_rule(rf"(?:the\s+)?(?P<wd>{_WD})\s+(?P<ba>before\s+last|after\s+next)", first=_WEEKDAY_WORDS | {"the"})
def _weekday_before_last(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the Saturday before last" (the one before last Saturday), "the Monday after next"."""
    token = m.group("wd").lower()
    wd = _WEEKDAYS.get(token, _WEEKDAY_ABBR.get(token))
    assert wd is not None
    today = p.ctx.today
    if m.group("ba").lower().startswith("before"):
        return m.end(), p.ctx.day(today - timedelta(days=((today.weekday() - wd) % 7 or 7) + 7))
    return m.end(), p.ctx.day(today + timedelta(days=((wd - today.weekday()) % 7 or 7) + 7))


@_rule(r"(?P<q>this|last|next|previous|the\s+previous|the\s+following|the\s+coming)\s+"
       r"(?P<u>week|month|year|quarter|decade)"
       r"|the\s+(?P<u2>week|month|year|quarter|decade)\s+(?P<ba>before\s+last|after\s+next)")
def _relative_period(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if not m.group("u2") and _OF.match(p.text, m.end()):
        return None  # "my last year of university", "the last quarter of the game": not the calendar's
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
    if unit == "decade":  # "last decade" is the 2010s ("the last decade" rolls: the past ten years)
        return m.end(), _decade_span(ctx, today.year // 10 * 10 + 10 * n)
    return m.end(), ctx.year(today.year + n)


def _decade_span(ctx: Ctx, start: int) -> Span:
    return replace(ctx.days(date(start, 1, 1), date(start + 10, 1, 1)), grain="decade")


@_rule(rf"(?:the\s+)?(?P<q>last|past|previous)\s+(?:(?P<n>{_NUM})\s+)?quarters?",
       first=_words("the last past previous"))
def _quarters_back(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the past quarter", "the last two quarters": whole calendar quarters, up to the current one."""
    if _OF.match(p.text, m.end()) or (m.group("n") and _is_fuzzy(m.group("n"))):
        return None  # "the last quarter of the game"; "the past few quarters" is vague
    n = _number(m.group("n")) if m.group("n") else 1
    if not 0 < n <= 40:
        return None
    ctx = p.ctx
    idx = ctx.today.year * 4 + (ctx.today.month - 1) // 3
    first, current = ctx.quarter((idx - n) // 4, (idx - n) % 4 + 1), ctx.quarter(idx // 4, idx % 4 + 1)
    assert first.first_day is not None and current.first_day is not None
    return m.end(), ctx.days(first.first_day, current.first_day, "quarter" if n == 1 else "days")


@_rule(r"last\s+fortnight", first=_words("last"))
def _last_fortnight(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"last fortnight": the two calendar weeks before this one (as "last week" is the one before it)."""
    ctx = p.ctx
    this_week = ctx.week_of(ctx.today)
    assert this_week.first_day is not None
    return m.end(), ctx.days(this_week.first_day - timedelta(weeks=2), this_week.first_day, "days")


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


def _ordinal_day(token: str) -> int:
    """The day of "5th", "fifth", "twenty-first"."""
    return int(re.match(r"\d+", token).group(0)) if token[0].isdigit() else _DAY_WORDS[  # type: ignore[union-attr]
        re.sub(r"\s+", " ", token.lower())]


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


_FOR_THE = re.compile(r"\bfor\s+$", re.I)


@_rule(r"the\s+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)")
def _day_of_month(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    if not weak and not _FOR_THE.search(p.text, 0, m.start()):
        return None  # "the 3rd" alone is usually not a date; "on the 3rd", "for the 15th" are
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


_QUARTER_WORDS = r"(?P<ord>first|second|third|fourth|last|final|1st|2nd|3rd|4th)"


def _possessive_year(name: str) -> str:
    """"last year's " (as in "last year's Q3"), captured as group ``name``."""
    return rf"(?P<{name}>last|this|next)\s+year{_AP}s\s+"


_OF_YEAR = rf"\s+of\s+(?:(?P<yr3>{_YEAR})|(?P<ry3>last|this|next)\s+year|(?P<this3>the\s+year))"


def _named_year(m: re.Match[str], ctx: Ctx) -> tuple[int | None, bool]:
    """The year of "the third quarter of 2024 / of last year / of the year" or "last year's Q3", and whether
    two years were named at once ("last year's Q3 2024": nothing)."""
    gd = m.groupdict()
    years = []
    for name in ("ry0", "ry1"):
        if gd.get(name):
            years.append(ctx.today.year + {"last": -1, "this": 0, "next": 1}[gd[name].lower()])
    if gd.get("yr3"):
        years.append(int(gd["yr3"]))
    if gd.get("ry3"):
        years.append(ctx.today.year + {"last": -1, "this": 0, "next": 1}[gd["ry3"].lower()])
    if gd.get("this3"):
        years.append(ctx.today.year)
    named = _year_from(m, ctx)
    if named is not None:
        years.append(named)
    return (years[0] if len(years) == 1 else None), len(years) > 1


@_rule(rf"(?:{_possessive_year('ry0')})?q(?P<q>[1-4])(?:\s*(?:of\s+)?(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})"
       rf"|\s+(?:of\s+)?{_REL_YEAR})?"
       rf"|(?P<yr_first>{_YEAR})\s*-?\s*q(?P<q2>[1-4])"
       rf"|(?:{_possessive_year('ry1')}|the\s+)?{_QUARTER_WORDS}\s+quarter(?:{_OF_YEAR})?",
       first=_words("q # the first second third fourth last final this next"))
def _quarter(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("q2"):
        return m.end(), ctx.quarter(int(m.group("yr_first")), int(m.group("q2")))
    year, clash = _named_year(m, ctx)
    if clash:
        return None
    if m.group("ord"):
        word = m.group("ord").lower()
        q = 4 if word in _FROM_END else _ORDINALS[word]
        if year is None and word in _FROM_END:
            return None  # "the last quarter" is the one before this (``_quarters_back``), not a Q4
    else:
        q = int(m.group("q"))
    if year is not None:
        return m.end(), ctx.quarter(year, q)
    if not weak:
        return None  # "Q3 roadmap": a bare quarter is a topic unless a preposition makes it time
    cur_q = (ctx.today.month - 1) // 3 + 1

    def make(y: int) -> Span:
        return ctx.quarter(y, q, lambda k: make(y + k))

    return m.end(), make(ctx.today.year if q <= cur_q else ctx.today.year - 1)


@_rule(rf"(?:{_possessive_year('ry0')})?h(?P<h>[12])(?:\s*(?:of\s+)?(?P<yr>{_YEAR})|\s*'(?P<y2>\d{{2}})"
       rf"|\s+(?:of\s+)?{_REL_YEAR})?"
       rf"|(?P<yr_first>{_YEAR})\s*-?\s*h(?P<h2>[12])"
       rf"|(?:the\s+)?(?P<ord>first|second|last|1st|2nd)\s+half{_OF_YEAR}"
       rf"|{_possessive_year('ry1')}(?:the\s+)?(?P<ord1>first|second|last|1st|2nd)\s+half",
       first=_words("h # the first second last this next"))
def _half(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    if m.group("h2"):
        return m.end(), ctx.half(int(m.group("yr_first")), int(m.group("h2")))
    year, clash = _named_year(m, ctx)
    if clash:
        return None
    word = (m.group("ord") or m.group("ord1") or "").lower()
    h = (2 if word == "last" else _ORDINALS[word]) if word else int(m.group("h"))
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


_DECADE_WORDS = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
                 "eighties": 80, "nineties": 90, "noughties": 0, "aughts": 0}
_DECADE_POSITION = r"(?:(?P<pos>early|mid|late)(?:\s+|-|\s*-\s*))?"
_DECADE_TAIL = re.compile(
    rf"\s*(?:-|\u2013|to|and|&|or)\s*(?:the\s+)?{_DECADE_POSITION}(?:{_AP}?(?P<d>\d0){_AP}?s|(?P<full>(?:1[89]|20)\d0)"
    rf"{_AP}?s|(?P<word>{_alt(_DECADE_WORDS)}))(?!\w)", re.I)
# A decade before one of these is a style, not a time: "the 80s playlist", "1990s fashion".
_DECADE_STYLE = re.compile(
    r"\s+(?:music|playlists?|hits|songs?|tunes|albums?|bands?|rock|pop|disco|fashion|style|clothes|outfits?|"
    r"hair(?:styles?)?|looks?|movies?|films?|tv|shows?|sitcoms?|cartoons?|games?|toys?|cars?|party|parties|night|"
    r"theme[d]?|vibes?|nostalgia|aesthetic|revival|kids?|trends?|classics?|icons?|anthems?|remix(?:es)?)\b", re.I)


@_rule(rf"(?:the\s+)?{_DECADE_POSITION}(?P<dec>(?:1[89]|20)\d0){_AP}?s"
       rf"|the\s+{_DECADE_POSITION.replace('pos', 'pos2')}{_AP}?(?P<d2>\d0){_AP}?s"
       rf"|the\s+{_DECADE_POSITION.replace('pos', 'pos3')}(?P<word>{_alt(_DECADE_WORDS)})",
       first=_words("the early mid late #"))
def _decade(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the 1990s", "the 90s", "the '90s", "the nineties", "the late 90s" (years 7-9; early 0-3, mid 4-6);
    "the 1900s" and "the 1800s" are centuries."""
    ctx = p.ctx
    if _DECADE_STYLE.match(p.text, m.end()):
        return None
    if m.group("dec"):
        start = int(m.group("dec"))
    else:
        two = int(m.group("d2")) if m.group("d2") else _DECADE_WORDS[re.sub(r"\s+", " ", m.group("word").lower())]
        start = ctx.today.year // 100 * 100 + two
        if start > ctx.today.year:
            start -= 100
    where = m.group("pos") or m.group("pos2") or m.group("pos3")
    if m.group("dec") and start % 100 == 0 and start < 2000:  # "the 1900s": the twentieth century
        century = replace(ctx.days(date(start, 1, 1), date(start + 100, 1, 1)), grain="century")
        return m.end(), replace(century, partial=bool(where))  # "the early 1900s": which years is unsaid
    span = _decade_at(ctx, start, where)
    if span is None:
        return None
    tail = _DECADE_TAIL.match(p.text, m.end())
    if tail is not None:  # "the 80s and 90s", "the late 70s or early 80s": from the first to the second
        if tail.group("full"):
            second = int(tail.group("full"))
        else:
            two = int(tail.group("d")) if tail.group("d") else _DECADE_WORDS[tail.group("word").lower()]
            second = start // 100 * 100 + two
            second += 100 if second <= start else 0
        last = _decade_at(ctx, second, tail.group("pos"))
        if last is not None and second > start and last.end is not None and not (second % 100 == 0 and second < 2000):
            return tail.end(), Span(span.start, last.end, "range")
    return m.end(), span


def _decade_at(ctx: Ctx, start: int, where: str | None) -> Span | None:
    span = _decade_span(ctx, start)
    return span if not where else sub_period(ctx, span, where.lower())


@_rule(rf"(?P<n>{_NUM})\s+(?P<u>hour|day|weekend|week|fortnight|month|quarter|year)s?\s+(?:ago|back|before\s+today)")
def _ago(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"3 weeks ago" (that calendar week), "a fortnight ago" (the week two weeks back), "two weekends ago"
    (the weekend before last weekend), "two quarters ago"."""
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
    if unit == "weekend":
        return m.end(), ctx.weekend_starting(_weekend_saturdays(ctx)[1] - timedelta(weeks=n - 1))
    return m.end(), ctx.unit_period(ctx.back(n, unit), unit)


@_rule(rf"in\s+(?P<n>{_NUM})\s+(?P<u>day|week|fortnight|month)s?(?:{_AP}?\s+time)?(?!\s+(?:of|ago|before|after)\b)"
       rf"|(?P<n2>{_NUM})\s+(?P<u2>day|week|fortnight|month)s?\s+(?:from\s+(?:now|today)|hence)",
       first=_words("in") | _NUMBER_WORDS)
def _ahead(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"in two weeks", "in 10 days' time", "in a fortnight", "three days from now": the day that many days or
    weeks after today; "in three months": that month."""
    word = m.group("n") or m.group("n2")
    if _is_fuzzy(word):
        return None  # "in a few weeks" is vague
    n = _number(word)
    if n <= 0 or n > 500:
        return None
    unit = (m.group("u") or m.group("u2")).lower()
    ctx = p.ctx
    if unit == "month":
        later = add_months(ctx.today, n)
        return m.end(), ctx.month(later.year, later.month)
    days = n * {"day": 1, "week": 7, "fortnight": 14}[unit]
    return m.end(), ctx.day(ctx.today + timedelta(days=days))


def _weekend_saturdays(ctx: Ctx) -> tuple[date, date, date]:
    """The Saturdays of the latest weekend begun, of the latest one over and of "this weekend" (the current
    one on a Saturday or Sunday, else the coming one)."""
    today = ctx.today
    on_weekend = today.weekday() in (5, 6)
    started = today - timedelta(days=(today.weekday() - 5) % 7)
    ended = started - timedelta(days=7) if on_weekend else started
    coming = started if on_weekend else started + timedelta(days=7)
    return started, ended, coming


@_rule(r"(?P<q>this\s+past|last|past|previous|this|next|the\s+previous)\s+weekend"
       r"|(?P<over>over|on|at|during)\s+the\s+weekend|the\s+weekend\s+(?P<ba>before\s+last|after\s+next)")
def _weekend(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    started, ended, coming = _weekend_saturdays(ctx)
    if m.group("over"):
        return m.end(), ctx.weekend_starting(started)
    if m.group("ba"):
        if m.group("ba").lower().startswith("after"):
            return m.end(), ctx.weekend_starting(coming + timedelta(days=7))
        return m.end(), ctx.weekend_starting(ended - timedelta(days=7))
    q = re.sub(r"\s+", " ", m.group("q").lower())
    if q == "this":
        return m.end(), ctx.weekend_starting(coming)
    if q == "next":
        return m.end(), ctx.weekend_starting(coming + timedelta(days=7))
    return m.end(), ctx.weekend_starting(ended)


_POSITION = {"early": "early", "beginning": "early", "start": "early", "mid": "mid", "middle": "mid",
             "midway": "mid", "halfway": "mid", "half-way": "mid", "late": "late", "end": "late"}


@_rule(r"(?P<pos>early|mid|late)(?:\s+|-)|(?:(?:at|in|by|towards?)\s+)?(?:the\s+)?(?P<pos2>beginning|start|middle|end)\s+of\s+"
       r"|(?P<pos3>midway|halfway|half-way)\s+through\s+", boundary=False)
def _period_position(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    ctx = p.ctx
    inner = p.container(m.end())  # "the beginning of the year": the current one
    if inner is None:
        return None
    end, span = inner
    where = _POSITION[(m.group("pos") or m.group("pos2") or m.group("pos3")).lower()]
    got = recurring(span, lambda s: sub_period(ctx, s, where))
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?:(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+)?week\s+(?P<of>of|in)\s+",
       boundary=False)
def _week_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the week of 3 March" (the week containing that day), "the first/last week of March" (days 1-7 / last 7;
    of a quarter or a year too: "the last week of the year" is 25-31 December)."""
    if m.group("of").lower() == "in" and not m.group("ord"):
        return None  # "the week in Paris"
    inner = p.container(m.end())
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
        if s.grain not in ("month", "quarter", "half", "year", "season"):
            return None
        if ordinal == "last":
            return ctx.days(s.last_day - timedelta(days=7), s.last_day, "days")
        first = s.first_day + timedelta(days=7 * (_ORDINALS[ordinal] - 1))
        return ctx.days(first, first + timedelta(days=7), "days")

    got = recurring(span, week_part) if not ordinal else _latest_begun(ctx, recurring(span, week_part))
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+weekend\s+(?:of|in)\s+",
       boundary=False)
def _weekend_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the first weekend of October 2023": the weekend whose Saturday is the month's (quarter's, year's...)
    first (second, ..., last) Saturday."""
    inner = p.container(m.end())
    if inner is None:
        return None
    end, span = inner
    ordinal = m.group("ord").lower()

    def weekend(s: Span) -> Span | None:
        if s.grain not in ("month", "quarter", "half", "year", "season") or s.first_day is None or s.last_day is None:
            return None
        sat = nth_in(s.first_day, s.last_day, 5, -1 if ordinal == "last" else _ORDINALS[ordinal])
        return None if sat is None else p.ctx.weekend_starting(sat)

    got = _latest_begun(p.ctx, recurring(span, weekend))
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<side>first|last)\s+(?P<n>" + _NUM + r")\s+(?P<u>days|weeks)\s+of\s+", boundary=False)
def _days_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the last two weeks of August 2023", "the first 3 days of May": the start or end of a month or year."""
    inner = p.container(m.end())
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
        return end, ctx.weekend_starting(_weekend_near(d, direction == "after"))
    wd = _WEEKDAYS.get(what, _WEEKDAY_ABBR.get(what))
    if wd is None:
        return None
    if direction == "after":
        return end, ctx.day(d + timedelta(days=(wd - d.weekday()) % 7 or 7))
    return end, ctx.day(d - timedelta(days=(d.weekday() - wd) % 7 or 7))


def _weekend_near(d: date, after: bool) -> date:
    """The Saturday of the first weekend after ``d``, or of the last one over by the start of ``d``."""
    if after:
        return d + timedelta(days=(5 - d.weekday()) % 7 or 7)
    last_sat = d - timedelta(days=2)
    return last_sat - timedelta(days=(last_sat.weekday() - 5) % 7)


def _current(ctx: Ctx, unit: str) -> Span:
    """The week, month, quarter or year under way ("the first Monday of the year")."""
    today = ctx.today
    if unit == "week":
        return ctx.week_of(today)
    if unit == "month":
        return ctx.month(today.year, today.month)
    if unit == "quarter":
        return ctx.quarter(today.year, (today.month - 1) // 3 + 1)
    return ctx.year(today.year)


def _latest_begun(ctx: Ctx, span: Span | None) -> Span | None:
    """A day placed in a recurring period ("the last Friday of September", "three days before Christmas") at
    its most recent occurrence that has begun (today's included), as a date without a year is; a day in a
    named period ("of last month", "of 2024") as it is, even ahead."""
    if span is None or span.shift is None:
        return span
    return occurrence(span, lambda s: s.start is not None and not lt(ctx.now, s.start), "latest")


_NTH = (r"(?P<nth>first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last|final|penultimate"
        r"|(?:second|next)[\s-]+to[\s-]+last)")


@_rule(rf"(?:the\s+)?{_NTH}\s+(?P<what>{_WD}|day)\s+(?:of|in)\s+", boundary=False,
       first=_words("the first second third fourth fifth last final penultimate next #"))
def _nth_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the second Tuesday of March", "the last Friday of last month", "the first Monday of the year",
    "the second-to-last Friday in October", "the first day of last month": a day counted in a period."""
    inner = p.container(m.end())
    if inner is None:
        return None
    end, span = inner
    word = re.sub(r"[\s-]+", " ", m.group("nth").lower())
    n = _FROM_END.get(word) or (-2 if word.endswith("to last") else _ORDINALS[word])
    what = m.group("what").lower()
    if what in _WORD_ABBR:
        return None  # "the first sun of spring"
    wd = None if what == "day" else _WEEKDAYS.get(what, _WEEKDAY_ABBR.get(what))
    ctx = p.ctx

    def nth(s: Span) -> Span | None:
        if s.first_day is None or s.last_day is None or s.grain in ("day", "part"):
            return None
        d = nth_in(s.first_day, s.last_day, wd, n)
        return None if d is None else ctx.day(d)

    got = _latest_begun(ctx, recurring(span, nth))
    return None if got is None else (end, got)


_DAY_ORDINAL = rf"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)|{_alt(_DAY_WORDS)}"


@_rule(rf"(?:the\s+)?(?P<d>{_DAY_ORDINAL})(?:\s*(?:or|and|to|through|-|\u2013)\s*(?:the\s+)?(?P<d2>{_DAY_ORDINAL}))?"
       r"\s+(?P<of>of\s+)?", boundary=False,
       first=frozenset({"the", "#", "twenty", "thirty", *_ORDINAL_WORDS, "thirtieth"}))
def _day_of(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the 5th of last month", "the 20th of this month", "the first of the month", "the fifth of March",
    "the 3rd last month", "the 5th or 6th of last month" (both days): a day of a month, most often one named
    from today."""
    if not m.group("d")[0].isdigit() and not m.group("of"):
        return None  # "the fifth last month" may count months back
    inner = p.container(m.end())
    if inner is None:
        return None
    end, span = inner
    if not m.group("of") and (span.shift is not None or span.grain != "month"):
        return None  # without "of" only after a month named from today: "the 3rd last month"
    day, last = (_ordinal_day(m.group(g)) if m.group(g) else None for g in ("d", "d2"))
    if day is None or (last is not None and last <= day):
        return None
    ctx = p.ctx

    def pick(s: Span) -> Span | None:
        if s.grain != "month" or s.first_day is None:
            return None
        d = safe_date(s.first_day.year, s.first_day.month, day)
        if d is None or last is None:
            return None if d is None else ctx.day(d)
        e = safe_date(s.first_day.year, s.first_day.month, last)
        return None if e is None else ctx.days(d, e + timedelta(days=1))

    got = _latest_begun(ctx, recurring(span, pick))
    return None if got is None else (end, got)


@_rule(rf"(?P<n>{_NUM})\s+(?P<u>day|weekend|week|fortnight|month|year)s?\s+(?P<dir>before|after)\s+", boundary=False,
       first=_NUMBER_WORDS)
def _counted_from_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"three days before Christmas", "two weeks after 3 March" (the calendar week, as "the week after 3
    March" is), "two weekends before Halloween" (counted from the last weekend over by that day), "two
    months before Christmas" (that calendar month)."""
    if _is_fuzzy(m.group("n")):
        return None
    n = _number(m.group("n"))
    if not 0 < n <= 500:
        return None
    inner = p.anchor(m.end(), weak=True)
    if inner is None:
        return None
    end, span = inner
    unit = m.group("u").lower()
    sign = 1 if m.group("dir").lower() == "after" else -1
    ctx = p.ctx

    def move(s: Span) -> Span | None:
        if s.grain != "day" or s.first_day is None:
            return None  # only a day anchors: "two weeks before March" is not one week
        d = s.first_day
        if unit == "day":
            return ctx.day(d + timedelta(days=sign * n))
        if unit in ("week", "fortnight"):
            return ctx.week_of(d + timedelta(weeks=sign * n * (2 if unit == "fortnight" else 1)))
        if unit in ("month", "year"):
            return ctx.unit_period(add_months(d, sign * n * MONTHS_IN[unit]), unit)
        return ctx.weekend_starting(_weekend_near(d, sign > 0) + timedelta(weeks=sign * (n - 1)))

    got = _latest_begun(ctx, recurring(span, move))
    return None if got is None else (end, got)


@_rule(r"(?:the\s+)?(?P<part>morning|afternoon|evening|night)\s+of\s+", boundary=False,
       first=_words("the morning afternoon evening night"))
def _part_of_date(p: _Parser, m: re.Match[str], weak: bool) -> _ParseResult | None:
    """"the morning of 3 March", "the evening of Christmas Day": a part of a day."""
    inner = p.anchor(m.end(), weak=True)
    if inner is None or inner[1].grain != "day":
        return None
    name = m.group("part").lower()
    got = recurring(inner[1], lambda s: part_of(p.ctx, s, name))
    return None if got is None else (inner[0], got)


# --------------------------------------------------------------------------- holidays, seasons, numeric dates

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


# A time of day right after a numeric date ("14/01 07:25", "17/12, 2pm", "26/11 8am-10am"), and a weekday right
# before one ("Thu 26/11"): what makes "14/01" a day without a preposition.
_CLOCK_AFTER = re.compile(r"\s*,?\s*(?:(?:at\s+|@\s*)?(?:[01]?\d|2[0-3])(?:[:.h][0-5]\d|\s*[ap]\.?m\b)|"
                          r"(?:at|@)\s*(?:[01]?\d|2[0-3])\b(?![/.]\d))", re.I)
_WEEKDAY_BEFORE = re.compile(rf"\b{_WD}\.?\s*,?\s*$", re.I)
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
        # of the cases" a fraction; and as tickets and chats write a day: "14/01 07:25", "Thu 26/11".
        written = bool(_CLOCK_AFTER.match(p.text, m.end()) or _WEEKDAY_BEFORE.search(p.text, 0, m.start()))
        if sep != "/" or not ((weak and dated) or written) or (a, b) == (24, 7) \
                or _FRACTION_AFTER.match(p.text, m.end()):
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

_THE_PERIOD = _rx(r"the\s+(?P<u>year|month|quarter|week)")
_PART_SUFFIX = re.compile(r"\s+(?:in\s+the\s+|at\s+)?(?P<part>morning|afternoon|evening|night)(?!\w)", re.I)
_WRAPPER = re.compile(r"(?P<w>between|from|since|ever\s+since|before|prior\s+to|earlier\s+than|after|until|till|til|"
                      r"up\s+to|up\s+until|through|thru|as\s+of|in|during|on|at|by|over|within|throughout)\s+", re.I)
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
_OF = re.compile(r"\s+of\b", re.I)
# What may stand between two expressions that name one time ("Tuesday two weeks ago", "Friday of last week").
_BETWEEN = re.compile(r"\s*,?\s*(?:(?:of|on|in|at|during)\s+)?", re.I)
# Time words the grammar does not read on their own, and the words that qualify them: "the last working day
# of", "the first half of", "two months before", "the 31st of".
_TIME_NOUN = (rf"(?:(?:day|week|weekend|fortnight|month|quarter|year|decade|morning|afternoon|evening|night|"
              rf"weekday|{_alt(_WEEKDAYS)})s?|half|halves|beginning|start|middle|end|rest|remainder)")
_QUALIFIER_WORD = (rf"(?:{_alt(_ORDINAL_WORDS)}|last|final|penultimate|next|previous|following|same|whole|entire|"
                   r"very|early|late|working|business|school|bank|public|calendar|full|to|one|two|three|four|five|"
                   r"six|seven|eight|nine|ten|few|couple|several|\d{1,3}(?:st|nd|rd|th)?)")
_UNREAD_HEAD = (rf"\b(?:(?:the|a|an)\s+)?(?:{_QUALIFIER_WORD}[\s-]+){{0,3}}"
                rf"(?:{_TIME_NOUN}|{_alt(_DAY_WORDS)}|\d{{1,2}}(?:st|nd|rd|th))")
_UNREAD_OF = re.compile(rf"{_UNREAD_HEAD}(?:\s*,?\s*or\s+so\b)?\s+of\s+", re.I)
_UNREAD_BEFORE = re.compile(rf"{_UNREAD_HEAD}\s+$", re.I)
_OPEN_WORD = re.compile(r"(?:before|after|prior\s+to)\b", re.I)
_HEDGE_BEFORE = re.compile(r"\b(?P<w>about|around|roughly|approximately|approx\.|circa|some\s*time\s+around)\s+$",
                           re.I)
_HEDGE_AFTER = re.compile(r"\s*,?\s*or\s+so\b", re.I)
_AGO_RX = re.compile(rf"{_NUM}\s+(?:hour|day|weekend|week|fortnight|month|quarter|year)s?\s+(?:ago|back)\b", re.I)
_FEAST_START = re.compile(rf"(?:{_FEAST_RX})", re.I)
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
    # The earliest precise expression wins, one read in part only when no other is precise, a vague one only
    # when nothing else is there.
    start, end, span = next((f for f in found if not f[2].vague and not f[2].partial),
                            next((f for f in found if not f[2].vague), found[0]))
    reading = next((r for (a, b), r in sorted(parser.readings.items()) if start <= a and b <= end), None)
    window = TimeWindow(start=span.start, end=span.end, expression=text[start:end], span=(start, end),
                        vague=span.vague, field="captured_at", reading=reading, partial=span.partial)
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


# --------------------------------------------------------------------------- where an expression may start
#
# Most words of a passage start no time expression, yet ``_Parser.expr`` would try every rule at each.  The
# words a pattern's matches may begin with are read out of its syntax once (``_StartWords``, with the parser
# of ``re`` itself: no public API gives a pattern's syntax); a word then rules out the rules that cannot
# match there with one cached lookup.  Only what cannot match is passed over, so what is found does not
# change.

# A word start: a letter or digit after anything but a letter, a digit or an apostrophe ("don't").
_WORD_START = re.compile("(?<![^\\W_])(?<!['\u2019])[^\\W_]")
_EXPR_PATTERNS = [_WRAPPER, _ROLLING, _VAGUE, _FEW_AGO, _PERIOD_PART]  # what ``_Parser.expr`` tries besides anchors
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
# A digit, or all the ASCII letters of a word, if no character that case folding might take for one follows.
_KEY = re.compile(r"[0-9]|([A-Za-z]+)(?![A-Za-z]|[^\x00-\x7f])")
_Starts = set[tuple[str, bool]]  # (first word in lower case, or "#" for a digit; whether letters may follow)


def _starts(items: list[tuple[Any, Any]], word: str = "", depth: int = 0) -> _Starts | None:
    """How a match of the parsed pattern ``items`` may begin, or None when it may begin with any word
    (anything not understood below counts as that)."""
    if depth > 60 or len(word) > 30:
        return {(word, True)} if word else None
    if not items:
        return {(word, True)} if word else None  # the match may stop inside a longer word
    (op, av), rest = items[0], items[1:]
    name = op.name
    if name in ("SUBPATTERN", "ATOMIC_GROUP"):
        sub = av[-1] if name == "SUBPATTERN" else av
        return _starts([*sub, *rest], word, depth + 1)
    out: _Starts = set()
    if name == "BRANCH":
        for alt in av[1]:
            got = _starts([*alt, *rest], word, depth + 1)
            if got is None:
                return None
            out |= got
        return out
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        lo, hi, sub = av
        if hi == 0:
            return _starts(rest, word, depth + 1)
        again = (op, (max(lo - 1, 0), hi if hi == sre_constants.MAXREPEAT else hi - 1, sub))
        once = _starts([*sub, again, *rest], word, depth + 1)
        skipped = _starts(rest, word, depth + 1) if lo == 0 else set()
        return None if once is None or skipped is None else once | skipped
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return _starts(rest, word, depth + 1)  # takes no characters: as if it were not there
    chars = _one_char(name, av)
    if chars is None:
        return {(word, True)} if word else None
    letters, digit, other = chars
    if word and (digit or other):
        out.add((word, False))  # the word ends here
    elif digit:
        out.add(("#", False))  # (a mark cannot begin a match: expressions start at a letter or a digit)
    for c in letters:
        got = _starts(rest, word + c, depth + 1)
        if got is None:
            return None
        out |= got
    return out


def _one_char(name: str, av: Any) -> tuple[set[str], bool, bool] | None:
    """What one character of a pattern may be: (which ASCII letters, in lower case; a digit; anything
    else), or None for many letters, or letters outside ASCII (which may match ASCII ones)."""
    if name == "LITERAL":
        return _literal(chr(av))
    if name != "IN":
        return None  # any character, or any but one
    letters: set[str] = set()
    digit = other = False
    for op, arg in av:
        kind = op.name
        if kind == "LITERAL":
            got = _literal(chr(arg))
            if got is None:
                return None
            letters |= got[0]
            digit, other = digit or got[1], other or got[2]
        elif (kind == "RANGE" and ord("0") <= arg[0] and arg[1] <= ord("9")) or (
                kind == "CATEGORY" and arg.name == "CATEGORY_DIGIT"):
            digit = True
        elif kind == "CATEGORY" and arg.name == "CATEGORY_SPACE":
            other = True
        else:
            return None  # a range of letters, a negation, \\w, \\W, \\S ...
    return (letters, digit, other) if len(letters) <= 4 else None


def _literal(c: str) -> tuple[set[str], bool, bool] | None:
    if c in _ASCII_LETTERS:
        return {c.lower()}, False, False
    if c in _DIGITS:
        return set(), True, False
    return None if c.isalpha() else (set(), False, True)


class _StartWords:
    """The first words a pattern's matches may begin with: whole words, and beginnings of longer ones."""

    __slots__ = ("prefixes", "words")

    def __init__(self, rx: re.Pattern[str]) -> None:
        got = _starts(list(sre_parser.parse(rx.pattern, rx.flags)))
        self.words = frozenset(w for w, longer in got or () if not longer)
        self.prefixes = ("",) if got is None else tuple(sorted(w for w, longer in got if longer))

    def admit(self, key: str | None) -> bool:
        return key is None or key in self.words or key.startswith(self.prefixes)


def _start_key(text: str, pos: int) -> str | None:
    """The word at ``text[pos]`` as ``_StartWords`` name it, or None when that cannot be told: letters
    outside ASCII may match ASCII ones (to ``re.IGNORECASE`` "\u017f" is an "s")."""
    m = _KEY.match(text, pos)
    if m is None:
        return None
    return "#" if m.group(1) is None else m.group(1).lower()


@functools.cache
def _starts_of(rx: re.Pattern[str]) -> _StartWords:
    return _StartWords(rx)  # on first use: reading every pattern takes a moment, not every import


@functools.lru_cache(maxsize=4096)
def _rules_at(key: str | None) -> tuple[tuple[re.Pattern[str], _Handler, frozenset[str] | None], ...]:
    """The anchor rules whose patterns may match at a word that starts with ``key``, in order."""
    return tuple(rule for rule in _ANCHOR_RULES if _starts_of(rule[0]).admit(key))


@functools.lru_cache(maxsize=4096)
def _may_start_at(key: str | None) -> bool:
    return bool(_rules_at(key)) or any(_starts_of(rx).admit(key) for rx in _EXPR_PATTERNS)


def _may_start(text: str, pos: int) -> bool:
    """Whether a time expression may start at ``text[pos]``."""
    return _may_start_at(_start_key(text, pos))


_WORD_BEGIN = re.compile(r"\b(?=\w)")  # where ``_UNREAD_OF`` may begin (a boundary, then a letter or digit)
_SPACED_OF = re.compile(r"\sof\s", re.I)  # which every match of it holds


def _unread_of(text: str) -> Iterator[re.Match[str]]:
    """``_UNREAD_OF.finditer(text)``, the pattern tried only where it may begin, and not after the last "of"."""
    end = of = -1
    for begin in _WORD_BEGIN.finditer(text):
        pos = begin.start()
        if pos < end:
            continue
        if of < pos:
            got = _SPACED_OF.search(text, pos)
            if got is None:
                return
            of = got.start()
        if _starts_of(_UNREAD_OF).admit(_start_key(text, pos)) and (m := _UNREAD_OF.match(text, pos)):
            yield m
            end = m.end()
