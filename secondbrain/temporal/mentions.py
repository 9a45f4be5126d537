"""Times a passage speaks of: "yesterday I ran", "last week we went", "next month", "on 3 May".

A passage has its own time (when it was said or written: the record's ``captured_at``, or the
moment of a recording it was spoken at) and often speaks of another one.  ``mentioned_times``
finds those with the question parser (``grammar``), resolved against the passage's own time
instead of the clock, so a chat line of 8 May 2023 that says "yesterday" speaks of 7 May 2023.

The parser reads a question, and questions look back ("on Friday" is the last Friday).  A
passage also looks ahead: in a sentence about what is still to come ("I'll go on Friday", "we're
going to Spain in June", "can't wait for the weekend") a date that recurs is taken at its next
occurrence instead.  Words that name the future themselves ("tomorrow", "next week") need no
help.

Left out, as they say nothing a search by time could use: vague times ("recently", "a while
ago"), open ranges ("since May", "before the trip"), times that hold the passage's own moment
("today", "this week": the passage's own time already says it) and spans longer than
``MAX_SPAN`` ("last year", "the 90s": matching them would put the passage in every window
inside them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from secondbrain.temporal.calendar import Conventions, Ctx, Span
from secondbrain.temporal.grammar import scan

MAX_SPAN = timedelta(days=62)  # two months: "in May", "last month" count; "last year" does not
MAX_MENTIONS = 8  # per passage: a long list of dates is a table, not a story about them

# A sentence about what is still to come.
_FUTURE = re.compile(
    r"\b(?:will|shall|won['\u2019]t|gonna|going\s+to|plan(?:s|ned|ning)?\s+(?:to|on)|"
    r"can['\u2019]?t\s+wait|cannot\s+wait|looking\s+forward|look\s+forward|hop(?:e|es|ing)\s+to|about\s+to|"
    r"intend(?:s|ing)?\s+to|upcoming|coming\s+up|scheduled|booked|due|starting|moves?\s+to|"
    r"from\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day(?!\s+(?:to|till|until|through)\b))\b|['\u2019]ll\b", re.I)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
# Month names as a regex alternation (English, full or abbreviated); the answerer reads dates with it too.
MONTH_NAMES = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
                r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
# A day with its month and no year: "3 May", "May 3rd", "the 3rd of December", "14/01".
_DAY_AND_MONTH = re.compile(rf"\d(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTH_NAMES})\b(?!,?\s*\d{{4}})|"
                            rf"\b(?:{MONTH_NAMES})\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})|"
                            r"^\d{1,2}/\d{1,2}$", re.I)
# "(for) the weekend" in a sentence about what is to come: the coming one (a question's "the weekend"
# is the last one, and the parser needs a preposition it may not have: "can't wait for the weekend").
_THE_WEEKEND = re.compile(r"\bthe\s+weekend\b", re.I)


@dataclass(frozen=True, slots=True)
class Mention:
    """A time a passage speaks of: ``[start, end)`` and the words that said it."""

    start: datetime
    end: datetime
    expression: str
    span: tuple[int, int]  # character span of the words in the passage


def mentioned_times(text: str, said_at: datetime, tz: ZoneInfo, *, conventions: Conventions | None = None,
                    week_start: int = 0, max_span: timedelta = MAX_SPAN) -> list[Mention]:
    """The times ``text`` speaks of, resolved against ``said_at`` (its own time) in ``tz``; at most
    ``MAX_MENTIONS``, each at most ``max_span`` long, in the order they are written.  (An answer that
    glosses "last year" asks for longer spans than a search filing passages under times does.)"""
    if said_at.tzinfo is None:
        raise ValueError("said_at must be timezone-aware")
    ctx = Ctx(said_at, tz, week_start, conventions)
    out: list[Mention] = []
    seen: set[tuple[datetime, datetime]] = set()
    future = _future_sentences(text)
    found = scan(text, ctx)
    for m in _THE_WEEKEND.finditer(text):
        if any(lo <= m.start() < hi for lo, hi in future) and not any(a <= m.start() < b for a, b, _ in found):
            coming = scan("this weekend", ctx)
            found += [(m.start(), m.end(), coming[0][2])] if coming else []
    for a, b, span in sorted(found, key=lambda f: f[0]):
        if span.vague or span.partial or span.start is None or span.end is None:
            continue  # a vague or partly read time says too little to file the passage under it
        if any(lo <= a < hi for lo, hi in future):
            span = _ahead(span, ctx)
        elif _DAY_AND_MONTH.search(text[a:b]):
            span = _nearest(span, ctx)
        start, end = span.start, span.end
        assert start is not None and end is not None
        if start <= said_at < end or end - start > max_span or (start, end) in seen:
            continue
        seen.add((start, end))
        out.append(Mention(start, end, text[a:b], (a, b)))
        if len(out) >= MAX_MENTIONS:
            break
    return out


def _nearest(span: Span, ctx: Ctx) -> Span:
    """A day and month without a year ("the 3rd of December") in a sentence with no sign of the
    future: the occurrence nearest to the passage's own time.  A note of 24 November about "the 3rd
    of December" means the coming one; a chat of 8 May about "3 May" the one just past."""
    if span.shift is None or span.start is None or span.start > ctx.now:
        return span
    later = span.shift(1)
    if later is None or later.start is None:
        return span
    return later if later.start - ctx.now < ctx.now - span.start else span


def _future_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences that speak of what is still to come."""
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text) if _FUTURE.search(m.group(0))]


def _ahead(span: Span, ctx: Ctx) -> Span:
    """A recurring date ("Friday", "in June", "3 May") moved to its first occurrence that has not
    ended before the passage's day began; anything else as it is."""
    today = ctx.at(ctx.today)
    moved: Span | None = span
    for k in range(1, 10):
        if moved is None or moved.end is None or moved.end > today or span.shift is None:
            break
        moved = span.shift(k)
    return moved if moved is not None and moved.end is not None and moved.end > today else span


def mention_points(spans: list[tuple[datetime, datetime]]) -> list[datetime]:
    """Instants that stand for the times a passage speaks of in a range filter: each span's start,
    every 24 hours after it, and its last microsecond.  A window of a day or more overlaps a span
    exactly when one of its points lies in the window (``widen`` makes shorter windows a day long)."""
    out: set[datetime] = set()
    for start, end in spans:
        at = start
        while at < end:
            out.add(at)
            at += timedelta(days=1)
        out.add(end - timedelta(microseconds=1))
    return sorted(out)


def widen(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """A window shorter than a day, grown to the day around it, for matching ``mention_points``
    ("yesterday evening" matches a passage that speaks of yesterday)."""
    if end - start >= timedelta(days=1):
        return start, end
    grow = (timedelta(days=1) - (end - start)) / 2
    return start - grow, end + grow
