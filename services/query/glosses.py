"""What a "when" answer adds after a quote: the date a relative time word stood for, read against when its source
was said and in the sentence's tense (``secondbrain.temporal.tense``, the agenda's reading), a weekday that
disagrees with its date, or when a dated fact with no time words was recorded."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from secondbrain.search_hits import SearchHit
from secondbrain.search_hits import said_at as _moment
from secondbrain.temporal import Conventions
from secondbrain.temporal.mentions import MONTH_NAMES, Mention
from secondbrain.temporal.tense import said_times
from secondbrain.temporal.written import Calendar, span_words
from services.query.shapes import SHAPES

GLOSS_SPAN = timedelta(days=3700)  # "last year", "the 90s": an answer glosses them (a search filter does not)
_NAMED_DATE = re.compile(rf"\b(?:{MONTH_NAMES})\b|\b\d{{4}}\b|\d[/.-]\d", re.I)


def glosses(sentence: str, quoted: str, hit: SearchHit, tz: ZoneInfo | None, conventions: Conventions | None,
            cal: Calendar) -> str:
    """What a "when" answer adds after a quote: the dates its relative time words stood for (read against when
    its source was said), a weekday that disagrees with its date, or, with no time words at all, when it was
    recorded."""
    said_at = _moment(hit)
    if said_at is None or tz is None:
        return ""
    mentions = said_times(sentence, said_at, tz, conventions=conventions, max_span=GLOSS_SPAN)
    shown = []
    for m in mentions:
        if m.expression not in quoted or not relative(m.expression) or _pinned(sentence, m):
            continue
        shown.append(f"\u201c{m.expression}\u201d = {span_words(m, tz, said_at, cal)}")
    if not shown and (vague := _VAGUE_AGO.search(quoted)) is not None:
        # "a few days ago" is no date, but it is a few days before when it was said
        shown.append(f"\u201c{vague.group(0)}\u201d = {vague.group(1)} before {cal.date(said_at.astimezone(tz))}")
    if not shown and (today := _TODAY.search(quoted)) is not None:
        # the parser leaves the present day unmentioned; a "when" answer still needs its date
        shown.append(f"\u201c{today.group(0)}\u201d = {cal.day(said_at.astimezone(tz))}")
    if not shown and (this := _THIS_MONTH.search(quoted)) is not None:  # and the present month and year
        at = said_at.astimezone(tz)
        when = at.strftime("%B %Y") if this.group(1).lower() == "month" else str(at.year)
        shown.append(f"\u201c{this.group(0)}\u201d = {when}")
    clash = _weekday_clash(sentence, said_at.astimezone(tz), cal)
    if clash:
        shown.append(clash)
    if shown:
        return f" ({'; '.join(shown)})"
    if not mentions and not SHAPES["when"].search(sentence):
        return f" (recorded {cal.date(said_at.astimezone(tz))})"
    return ""


_VAGUE_AGO = re.compile(r"\b((?:a\s+)?(?:few|couple(?:\s+of)?|several)\s+(?:days|weeks|months|years))\s+ago\b", re.I)
_THIS_MONTH = re.compile(r"\bthis (month|year)\b", re.I)
_TODAY = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I)


def relative(expression: str) -> bool:
    """Whether time words depend on when they were said ("yesterday", "last week", "on Friday"); a date that
    names its month or year ("on 3 May") is the user's own words and needs no arithmetic."""
    if _YEAR_LEFT_OUT.search(expression):  # "last August", "August last year": a month, but which year?
        return True
    return not _NAMED_DATE.search(expression)


_YEAR_LEFT_OUT = re.compile(rf"^(?=.*\b(?:{MONTH_NAMES})\b)(?!.*\d)"
                            r".*\b(?:last|next|this|coming|past|previous|ago)\b", re.I)


def _pinned(sentence: str, m: Mention) -> bool:
    """A weekday or day word right next to an explicit date ("on Tuesday 2 December"): the date says it."""
    after = sentence[m.span[1]:m.span[1] + 24] if m.span else ""
    before = sentence[max(0, m.span[0] - 24):m.span[0]] if m.span else ""
    near = re.compile(rf"^\W{{0,3}}(?:the\s)?\d{{1,2}}(?:st|nd|rd|th)?\b(?:\s(?:of\s)?(?:{MONTH_NAMES}))?|"
                      rf"^\W{{0,3}}(?:{MONTH_NAMES})\s\d", re.I)
    return bool(near.search(after)) or bool(re.search(rf"\b\d{{1,2}}\s(?:{MONTH_NAMES})\W{{0,3}}$", before, re.I))


_WEEKDAY_DATE = re.compile(
    rf"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\W+(?:the\s)?(\d{{1,2}})(?:st|nd|rd|th)?"
    rf"(?:\s(?:of\s)?)?\s?({MONTH_NAMES})\w*(?:\s(\d{{4}}))?", re.I)
_MONTH_NUMBER = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _weekday_clash(sentence: str, said_at: datetime, cal: Calendar) -> str:
    """"Tuesday 2 December" when 2 December (the nearest one, or the year given) is not a Tuesday: flagged."""
    for m in _WEEKDAY_DATE.finditer(sentence):
        day, month = int(m.group(2)), _MONTH_NUMBER.get(m.group(3)[:3].lower())
        if month is None:
            continue
        years = [int(m.group(4))] if m.group(4) else [said_at.year, said_at.year + 1, said_at.year - 1]
        dates = []
        for year in years:
            try:
                dates.append(datetime(year, month, day, tzinfo=said_at.tzinfo))
            except ValueError:
                continue
        if not dates:
            continue
        nearest = min(dates, key=lambda d: abs((d - said_at).total_seconds()))
        if _WEEKDAYS[nearest.weekday()] != m.group(1).lower():
            return (f"{m.group(1).capitalize()} {day} {m.group(3).capitalize()}: "
                    f"{cal.date(nearest)} is a {nearest.strftime('%A')}")
    return ""

