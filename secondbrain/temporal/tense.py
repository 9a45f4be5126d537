"""Which occurrence a sentence means by a time that recurs, read from its tense: one reading for every reader
of what people wrote (the agenda's items, an answer's glosses), so that they cannot disagree.

The question parser (``grammar``) reads a question, and questions look back: "on Monday" is the last Monday.
A sentence someone wrote says which one it means by its tense:

* about what is still to come ("The electrician can come on Monday", "Lunch with Sara on Thursday", "The
  parcel should arrive on Wednesday"): the coming occurrence, counted from the day it was said; a weekday
  with nothing to say otherwise is the coming one too (a note names the days ahead of it);
* about what was ("Went to the market on Saturday", "we went to Lisbon on 14 March"): the last one;
* neither, a date of the year ("the 3rd of December"): the occurrence nearest to when it was said.

Words that name their time themselves ("tomorrow", "next Tuesday", "in 2027") keep the parser's reading, and a
weekday with its date ("Thursday 10 December", "Thu 26/11") is the year in which that date is that weekday.  A
weekday said on that weekday ("coffee on Tuesday?" asked on a Tuesday) is next week's: today is said "today";
so is a day of the month alone ("ready for collection on the 23rd").
The tense is the clause's that holds the time: "Car service on 9 December, they quoted £240" is a service to come.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from secondbrain.temporal.calendar import Conventions, Ctx, Span
from secondbrain.temporal.grammar import scan
from secondbrain.temporal.mentions import Mention

Tense = Literal["future", "past", "present"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"
_MONTHS = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
           r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
# A sentence about what is still to come: the future, a plan, a schedule, an ability or a duty ahead.
_FUTURE = re.compile(
    r"\b(?:will|shall|won['\u2019]t|gonna|going\s+to|plan(?:s|ned|ning)?\s+(?:to|on)|can['\u2019]?t\s+wait|"
    r"cannot\s+wait|looking\s+forward|look\s+forward|hop(?:e|es|ing)\s+to|about\s+to|intend(?:s|ing)?\s+to|"
    r"upcoming|coming\s+up|scheduled|booked|due|starts?|starting|begins?|opens?|closes?|departs?|leaves|lands|"
    r"arrives|expires?|renews?|goes\s+up|rises|(?:is|are|(?:it|that|this|there|he|she|which|what)['\u2019]s)\s+(?:on|at|set\s+for|planned|"
    r"happening|coming)|meets|moved\s+to|moves?\s+to|moves|rescheduled|postponed|pushed|brought\s+forward|"
    r"need\s+to|have\s+to|must|remind\s+me|remember|don['\u2019]t\s+forget|let['\u2019]s|see\s+you|"
    r"should|can|could|next|tomorrow|tonight|(?:I|we|you|they)['\u2019]re\s+\w+ing|"
    r"(?:I|we|you|they)\s+are\s+\w+ing|(?:I['\u2019]m|I\s+am|he['\u2019]s|she['\u2019]s|is)\s+\w+ing|"
    rf"from\s+{_WEEKDAY}(?!\s+(?:to|till|until|through)\b))\b|['\u2019]ll\b|"
    r"^(?:pay|submit|book|call|renew|send|bring|pick\s+up|collect|return)\b", re.I)
# ...and about what was, with or without its "I" ("Went to the market on Saturday").
_PAST = re.compile(r"\b(?:was|were|went|had|did|ago|yesterday|last\s+night|got|came|saw|met|took|ran|flew|"
                   r"celebrated|visited|attended|finished|happened|used\s+to)\b|"
                   r"\b(?:I|we|he|she|they)\s+\w+ed\b|^\W*(?:\w+\s?:\s*)?(?:just\s+)?\w{3,}ed\b", re.I)
# A sentence's clauses: what commas, semicolons, colons and dashes part, and "but", "so", "because" begin.
_CLAUSE = re.compile(r"[^,;:\u2013\u2014]+?"
                     r"(?=\s*(?:[,;:\u2013\u2014]|\s(?:but|so|because|although|though|whereas)\s)|$)", re.I)
# A clause that reports or books what the sentence is about, not the thing itself: its past is not the event's.
_REPORTS = re.compile(r"\b(?:quoted|said|says|told|mentioned|wrote|texted|emailed|e-mailed|messaged|confirmed|"
                      r"booked|asked|replied|rang|called|phoned|reminded|promised|agreed|paid|ordered)\b", re.I)
_BARE_WEEKDAY = re.compile(rf"^(?:on\s+|this\s+)?{_WEEKDAY}\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}")
_WEEK_OF = re.compile(r"(?:the\s+)?week\s+(?:of|commencing|beginning)\s", re.I)  # "the week of the 11th of January"
# "on the 23rd": like a weekday, a day of the month with nothing to say otherwise is the coming one
_BARE_DAY_OF_MONTH = re.compile(r"(?:(?:on|for|by)\s+)?the\s+\d{1,2}(?:st|nd|rd|th)", re.I)
_NAMED_WEEKDAY = re.compile(rf"(?:on\s+)?{_WEEKDAY}", re.I)
_RELATIVE = re.compile(r"\b(?:today|tonight|tomorrow|yesterday|next|last|this|ago|coming|past|previous|"
                       r"following|weekend|weeks?|days|months|fortnight|from\s+now|hence)\b", re.I)
_MONTH = re.compile(rf"\b(?:{_MONTHS})\b", re.I)
_STARTING = re.compile(r"^(?:from|starting|as\s+of|beginning|effective)\b", re.I)
_WEEKDAY_NUMERIC = re.compile(rf"\b({_WEEKDAY})\W+(\d{{1,2}})/(\d{{1,2}})(?!/\d)", re.I)
_WEEKDAY_DATE = re.compile(rf"\b({_WEEKDAY})\W+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({_MONTHS})\b"
                           rf"|\b({_WEEKDAY})\W+({_MONTHS})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.I)


def tense(sentence: str, at: tuple[int, int] | None = None) -> Tense:
    """Whether ``sentence`` speaks of what is still to come, of what was, or of neither; with ``at`` (where a
    time is written in it), of the clause that holds that time: "Car service on 9 December at 8:00, they quoted
    £240" speaks of a service to come, though the quote was given.  A clause that says neither takes the tense
    of the sentence's other clauses, leaving out those that only report or book it ("they quoted", "Jo said")."""
    if at is None:
        return _tense(sentence)
    clauses = [(m.start(), m.end()) for m in _CLAUSE.finditer(sentence)]
    own = next(((a, b) for a, b in clauses if a <= at[0] < b), (0, len(sentence)))
    said = _tense(sentence[own[0]:own[1]])
    if said != "present":
        return said
    others = " ".join(sentence[a:b] for a, b in clauses if (a, b) != own and not _REPORTS.search(sentence[a:b]))
    return _tense(others) if others else "present"


def _tense(text: str) -> Tense:
    if _FUTURE.search(text):
        return "future"
    return "past" if _PAST.search(text) else "present"


def occurrence(ctx: Ctx, expression: str, span: Span, said: Tense, *, max_span: timedelta) -> Span | None:
    """The occurrence ``expression`` (read by the parser as ``span``) means in a sentence of tense ``said``, read
    against ``ctx`` (when and where it was said); ``None`` for a time that is no point on the calendar (vague,
    open, longer than ``max_span``)."""
    if span.vague or span.start is None or span.end is None:
        return None
    if span.partial:
        fixed = _weekday_date(ctx, expression, said)
        if fixed is None:
            return None
        span = fixed
    if span.start is None or span.end is None or span.end - span.start > max_span:
        return None
    if _YEAR.search(expression) or (_RELATIVE.search(expression) and not _WEEK_OF.match(expression)):
        return _from_start(ctx, expression, span)
    occurrences = _occurrences(ctx, expression, span)
    day_start = ctx.at(ctx.today)
    if said == "past":
        before = [o for o in occurrences if o.start is not None and o.start <= ctx.now]
        chosen = max(before, key=_start) if before else span
    elif said == "future" or _BARE_WEEKDAY.search(expression) or _BARE_DAY_OF_MONTH.fullmatch(expression.strip()):
        ahead = [o for o in occurrences if o.end is not None and o.end > day_start]
        if _NAMED_WEEKDAY.fullmatch(expression.strip()):
            # "on Tuesday" said on a Tuesday: today is said "today"; the weekday is next week's
            ahead = [o for o in ahead if o.start is not None and o.start >= ctx.at(ctx.today + timedelta(days=1))]
        elif span.grain == "range" and not _MONTH.search(expression):
            # "from Monday until Wednesday" said on a Tuesday: next week's, not the one half gone
            ahead = [o for o in ahead if o.start is not None and o.start >= day_start] or ahead
        chosen = min(ahead, key=_start) if ahead else span
    else:  # a date with no sign of either: the occurrence nearest the sentence's own time
        chosen = min(occurrences, key=lambda o: (abs((_start(o) - ctx.now).total_seconds()), _start(o) < ctx.now))
    return _from_start(ctx, expression, chosen)


def _start(span: Span) -> datetime:
    assert span.start is not None
    return span.start


def _from_start(ctx: Ctx, expression: str, span: Span) -> Span:
    """"From January", "starting March": the first day of it, when the change takes effect."""
    if _STARTING.search(expression) and span.grain == "month" and span.start is not None:
        return ctx.day(span.start.astimezone(ctx.tz).date())
    return span


def _occurrences(ctx: Ctx, expression: str, span: Span) -> list[Span]:
    """The occurrences of a recurring time around the sentence's own: earlier and later ones."""
    out = [span]
    if span.shift is not None:
        for k in (-2, -1, 1, 2, 3):
            moved = span.shift(k)
            if moved is not None and moved.start is not None and moved.end is not None:
                out.append(moved)
    else:
        # A range of days in a month has no shift: read it a year on and back; a range of weekdays ("from
        # Monday until Wednesday") a week on and back.
        for later in _moved_contexts(ctx, expression):
            found = [s for a, b, s in scan(expression, later) if b - a == len(expression)]
            if found and found[0].start is not None and found[0].end is not None and not found[0].partial:
                out.append(found[0])
    return out


def _moved_contexts(ctx: Ctx, expression: str) -> list[Ctx]:
    """The sentence's own time a year (for a range in a month) or a week (for a range of weekdays) on and back."""
    times: list[datetime] = []
    if _MONTH.search(expression):
        for years in (-1, 1):
            try:
                times.append(ctx.now.replace(year=ctx.now.year + years))
            except ValueError:  # 29 February
                continue
    elif re.search(rf"\b{_WEEKDAY}\b", expression, re.I):
        times = [ctx.now + timedelta(weeks=k) for k in (-1, 1, 2)]
    return [Ctx(t, ctx.tz, ctx.week_start, ctx.conventions) for t in times]


def _weekday_date(ctx: Ctx, expression: str, said: Tense) -> Span | None:
    """"Thursday 10 December" read in part because the last 10 December was a Wednesday: the year in which
    that date is a Thursday, nearest the sentence's own time (ahead in a sentence about what is to come)."""
    m = _WEEKDAY_DATE.search(expression)
    numeric = _WEEKDAY_NUMERIC.search(expression) if not m else None
    if numeric is not None:  # "Thu 26/11": day and month in the person's order
        a, b = numeric.group(2), numeric.group(3)
        weekday, (day, month) = numeric.group(1), ((b, a) if ctx.conventions.date_order == "mdy" else (a, b))
        number: int | None = int(month) if 1 <= int(month) <= 12 else None
    elif m:
        weekday, day, month = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(6),
                                                                                         m.group(5))
        number = _month_number(month)
    else:
        return None
    wanted = next((i for i, name in enumerate(_WEEKDAYS) if name.startswith(weekday[:3].lower())), None)
    if number is None or wanted is None:
        return None
    candidates = []
    for year in range(ctx.today.year - 1, ctx.today.year + 3):
        try:
            d = date(year, number, int(day))
        except ValueError:
            continue
        if d.weekday() == wanted:
            candidates.append(d)
    if said != "past":
        candidates = [d for d in candidates if d >= ctx.today] or candidates
    if not candidates:
        return None
    return ctx.day(min(candidates, key=lambda d: abs((d - ctx.today).days)))


def _month_number(name: str) -> int | None:
    key = name[:3].lower()
    months = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    return months.index(key) + 1 if key in months else None


def said_times(sentence: str, said_at: datetime, tz: ZoneInfo, *, conventions: Conventions | None = None,
               max_span: timedelta) -> list[Mention]:
    """The times ``sentence`` speaks of, each the occurrence it means when said at ``said_at`` (see the module
    doc), in the order written; left out: vague or open times, spans longer than ``max_span`` and the time the
    sentence was said in ("today")."""
    ctx = Ctx(said_at, tz, 0, conventions)
    out: list[Mention] = []
    for a, b, span in scan(sentence, ctx):
        chosen = occurrence(ctx, sentence[a:b], span, tense(sentence, (a, b)), max_span=max_span)
        if chosen is None or chosen.start is None or chosen.end is None or chosen.start <= ctx.now < chosen.end:
            continue
        out.append(Mention(chosen.start, chosen.end, sentence[a:b], (a, b)))
    return out
