"""What a passage says happens when: the agenda items of one passage (pure, no I/O).

A passage is read as a reader does (``secondbrain.reading``: statements, with the headings they sit under
and who said them).  A statement is an agenda item when it says something happens at a time: an
appointment, a trip, a deadline, a payment, a birthday, a meeting, a plan of the writer's ("I'll drop the
keys off on Friday"), or, in the past tense, something that happened ("we went to Lisbon on 14 March").

Its time is read with the temporal parser against the passage's own time, plus what the parser leaves to
others: clock times and their zones (``services.agenda.clock``), a weekday that names the coming date
("Thursday 10 December" said in November is this year's, a Thursday), the coming occurrence in a sentence
about what is to come and the last one in a sentence about what was ("we went to Lisbon on 14 March" said
in November is last March), the date of a heading over an itinerary's lines, and a time on the line after
a date in a letter ("Tuesday 8 December 2026" / "at 10:30").

Not agenda items: dates of birth, publication and document dates ("Published 3 March", "Invoice date"),
questions, habits ("every Monday", "on Tuesdays"; read as ``Habit`` for a caller that asks for them),
open ranges ("until March"), forecasts and facts without an event ("temperatures will drop on Friday").

A statement that moves an event says so ("moved from 1 December to 4 December", "pushed to Monday"): the
item carries ``change`` and, when the statement names it, the time it moved from; a cancelled one
``change="cancelled"``.  Merging what several sources say about one event is ``services.agenda.agenda``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal, cast
from zoneinfo import ZoneInfo

from secondbrain.reading import Statement, read
from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal.calendar import Conventions, Ctx, Span
from secondbrain.temporal.grammar import scan
from secondbrain.temporal.mentions import MONTH_NAMES
from secondbrain.temporal.tense import Tense, occurrence
from secondbrain.temporal.tense import tense as tense_of
from services.agenda.clock import Clock, clocks, passage_zone

Precision = Literal["time", "day", "days", "week", "month"]
MAX_SPAN = timedelta(days=62)  # longer than two months is a period, not an event ("in 2019", "Q3")

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"

# What things are.  The first that matches names the item's kind.
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.I)) for k, p in (
    ("birthday", r"\b(?:birthday|b-?day|anniversary)\b"),
    ("appointment", r"\b(?:appointments?|appt|dentist|doctor|GP|physio\w*|vet|haircut|hairdresser|barber|"
                    r"check-?up|consultation|clinic|hospital|surgery|scan|x-ray|blood\s+test|vaccin\w*|"
                    r"jab|optician|therapist|therapy|nurse|midwife)\b"),
    ("travel", r"\b(?:flights?|fly|flying|flies|departs?|departure|departing|arriv\w*|lands?|landing|boarding|"
               r"trains?|ferry|coach|check(?:ing)?[\s-]?in|check(?:ing)?[\s-]?out|hotel|trips?|holidays?|"
               r"vacation|journey|cruise|road\s+trip|travel\w*)\b"),
    ("deadline", r"\b(?:deadline|due|submit\w*|submission|hand\s+in|expir\w*|renew\w*|cut-?off|last\s+day|"
                 r"register|apply|rsvp|closes?)\b|\bneeds?\b.*\bby\s+(?:the\s+)?(?:\d|[A-Z]|tomorrow|next|end)"),
    ("payment", r"\b(?:pay|paid|payment|rent|invoice|bills?|fees?|subscription|direct\s+debit|instal+ments?|"
                r"mortgage|salary|payday|refund|tax|premium|charge)\b"),
    ("event", r"\b(?:meeting|meets?|meet\s+up|call|interview|dinner|lunch|breakfast|brunch|drinks|party|wedding|"
              r"funeral|concert|gig|show|theatre|match|game|race|marathon|festival|fair|conference|workshop|"
              r"webinar|seminar|class|lesson|course|exam|test|recital|gala|ceremony|graduation|reunion|"
              r"visit\w*|viewing|deliver\w*|pick(?:ing)?\s+up|collect\w*|drop\w*\s+off|service|MOT|inspection|"
              r"launch\w*|release|opening|kick-?off|review|presentation|demo|standup|retro|talk|offsite|"
              r"parents'?\s+evening|book\s+club|tour|starts?|begins?|finish(?:es)?|ends|opens|school|term|job|"
              r"move|moving|celebrat\w*|club|training|practice|rehearsal|game\s+night|date\s+night|plumber|"
              r"electrician|builder|engineer|boiler|gym|movie|film|cinema|quiz|night\s+out|sleepover|playdate|"
              r"barbecue|bbq|picnic|strike|carol\s+service|nativity|pantomime|panto)\b"),
))
# A first-person plan or an errand: "I'll drop the keys off on Friday", "remind me to call the bank".
_PLAN = re.compile(r"\b(?:I|we)(?:['\u2019]ll|\s+will|\s+(?:am|are|['\u2019]m|['\u2019]re)\s+(?:going\s+to|"
                   r"\w+ing\b)|\s+have\s+to|\s+need\s+to|\s+must|\s+plan\s+to|\s+should)\b|"
                   r"\b(?:remind\s+me|remember\s+to|don['\u2019]t\s+forget|let['\u2019]s|see\s+you)\b|"
                   r"^(?:pay|submit|book|call|renew|send|bring|pick\s+up|collect|return|buy|order|cancel|"
                   r"email|ring|post|drop)\b", re.I)
# Something that happened, in the past tense, done by someone.
_DID = re.compile(r"(?<!\bof\s)(?<!\bthe\s)\b(?:I|we|he|she|they|you|[A-Z][a-z]+)\s+"
                  r"(?:went|had|did|got|came|saw|met|took|gave|ran|flew|"
                  r"left|arrived|visited|celebrated|finished|started|moved|attended|watched|played|won|lost|"
                  r"married|graduated|bought|sold|joined|quit|spent|stayed|drove|walked|hiked|swam|cooked|"
                  r"hosted|threw|organised|organized|signed|passed|failed|(?:\w+ed))\b")
# Dates that are not events: of birth, of publication, of a document.
_NOT_EVENT = re.compile(
    r"\b(?:born|birth|d\.?o\.?b\.?|published|publication|posted|updated|modified|copyright|reprinted|"
    r"released|issued|printed|accessed|statement\s+date|invoice\s+date|dated|written|created|edition|founded|"
    r"established|(?:post|article|blog\s+post|email|e-mail|message|letter|photo|picture|video|episode|issue)"
    r"\s+(?:from|of|on))\b|\u00a9", re.I)
_QUESTION = re.compile(r"^(?:\W*\w+\s?:\s*)?(?:are|is|am|do|does|did|can|could|would|will|shall|should|what|when|"
                       r"where|who|how|why|which|have|has|any|fancy|free)\b", re.I)
_HABIT = re.compile(
    rf"\b(?:every|each)\s+(?:other\s+)?(?:day|morning|evening|night|week|weekday|weekend|month|year|{_WEEKDAY}|"
    rf"\d+(?:st|nd|rd|th)?)\b|\bon\s+{_WEEKDAY}s\b|\b{_WEEKDAY}s\s+at\b|\b(?:daily|weekly|monthly|fortnightly|"
    r"usually|always|normally|generally|often|tends?\s+to|most\s+(?:days|mornings|evenings)|twice\s+a|"
    r"once\s+a|a\s+week\b|per\s+week|of\s+each\s+month|of\s+every\s+month|each\s+month|opening\s+hours|"
    rf"open\s+\d)\b|\b(?:open|closed)\b.*\b{_WEEKDAY}\s+to\s+{_WEEKDAY}\b", re.I)
_MOVE = re.compile(r"\b(?:moved|moves|moving|move|rescheduled|reschedule|postponed|pushed(?:\s+back)?|"
                   r"brought\s+forward|changed|switched|now)\b", re.I)
_CANCEL = re.compile(r"\b(?:cancel+ed|cancel+ing|called\s+off|no\s+longer\s+(?:on|happening))\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}")
_MONTH = re.compile(rf"\b(?:{MONTH_NAMES})\b", re.I)
_FROM_TO = re.compile(r"^(?:from\s+)?(?P<old>.+?)\s+(?:to|until|till|-|\u2013)\s+(?P<new>.+)$", re.I)
_ANAPHORIC = re.compile(r"\b(?:that|the\s+same|the\s+following|the\s+next)\s*$", re.I)
# A holiday before an event's name ("Christmas dinner", "New Year's Eve party"): the parser needs a preposition.
_HOLIDAY_EVENT = re.compile(r"\b(Christmas(?:\s+Eve|\s+Day)?|Boxing\s+Day|New\s+Year['\u2019]s\s+(?:Eve|Day)|"
                            r"Easter(?:\s+Sunday|\s+Monday)?|Thanksgiving|Halloween|Bonfire\s+Night|"
                            r"Valentine['\u2019]s\s+Day)\s+(?:dinner|lunch|party|drinks|service|dance|fair|market|"
                            r"meal|do|concert|play|show)\b", re.I)
_AGREES = re.compile(r"^(?:\W*\w+\s?:\s*)?(?:yes|yeah|yep|sure|ok|okay|sounds\s+good|perfect|great|deal|"
                     r"will\s+do|of\s+course|absolutely|definitely|done|agreed|I['\u2019]ll|I\s+can|we\s+can)\b", re.I)
_TO_NEW = re.compile(r"\b(?:to|until|till|for|now|on)\s*$", re.I)
_FROM_OLD = re.compile(r"\bfrom\s*$", re.I)
# Words that say nothing about which event it is ("the meeting moved to Monday at 10").
_GENERIC = frozenset(Bm25Encoder().tokenize(
    "moved move rescheduled postponed pushed changed now booked scheduled set planned new time date day appointment "
    "meeting call event thing remember don't forget please note also still will shall going get got pm am o'clock "
    "morning afternoon evening night tonight tomorrow today next last week weekend month year instead again"))


@dataclass(frozen=True, slots=True)
class Happening:
    """One thing a passage says happens (or happened) at a time."""

    day: date  # the first day, as written (in the zone it was written in)
    last_day: date  # the day after the last one
    start: datetime | None  # a timed item's instant (None: all day)
    end: datetime | None
    precision: Precision
    kind: str  # appointment, travel, deadline, payment, birthday, event, plan, happened
    quote: str  # the statement(s) that say it, plain words
    markdown: str
    expression: str  # the time words as written
    statement_start: int  # where the quote is in the passage text
    statement_end: int
    headings: tuple[str, ...] = ()
    speaker: str | None = None
    tense: Tense = "present"
    subject: frozenset[str] = frozenset()
    change: Literal["moved", "cancelled"] | None = None
    moved_from: tuple[date, datetime | None] | None = None  # the day (and instant) the statement says it left
    zone_words: str = ""  # "Tokyo time": the zone a time was written in, when it says so
    yearly: bool = False  # a birthday or an anniversary comes back every year

    @property
    def all_day(self) -> bool:
        return self.start is None


@dataclass(frozen=True, slots=True)
class Habit:
    """Something a passage says recurs ("yoga every Tuesday at 6.30pm"): shown only when asked for."""

    weekdays: tuple[int, ...]  # 0 = Monday; empty for a day of the month
    month_day: int | None
    at: time | None
    quote: str
    statement_start: int
    statement_end: int
    headings: tuple[str, ...] = ()
    speaker: str | None = None


@dataclass(slots=True)
class _Reading:
    said_at: datetime
    zone: tzinfo  # relative words and times without a zone are read here
    conventions: Conventions
    passage_zone: tzinfo | None
    heading_days: dict[str, Span | None] = field(default_factory=dict)


def read_passage(text: str, said_at: datetime, zone: tzinfo, *, headings: Sequence[str] = (),
                 speakers: frozenset[str] = frozenset(), conventions: Conventions | None = None) -> list[Happening]:
    """The agenda items ``text`` holds, read against ``said_at`` (its own time) in ``zone`` (where it was
    written: the person's zone unless the source says otherwise); see the module doc."""
    r = _Reading(said_at, zone, conventions or Conventions(), passage_zone(text))
    statements = read(text, tuple(headings), speakers)
    out: list[Happening] = []
    asked: list[Happening] = []  # what the question just before proposes ("Can you pick Ella up at 3:15?")
    agreed: list[Happening] = []  # what the statement just before agreed to
    for i, st in enumerate(statements):
        context = " ".join(s.text for s in statements[max(0, i - 2):i])
        found = _statement(r, st, context)
        if found:
            if agreed:  # "Yes! Saturday at 7.30 at Dishoom.": the answer says when itself
                out = [h for h in out if all(h is not a for a in agreed)]
            out.extend(found)
            asked = agreed = []
            continue
        agreed = []
        if asked and _AGREES.search(st.text):  # "Yes, I'll get her at 3:15": the proposal is agreed
            agreed = [replace(h, quote=f"{h.quote} {st.text}", markdown=f"{h.markdown} {st.markdown}",
                              statement_end=st.end) for h in asked]
            out.extend(agreed)
            asked = []
            continue
        asked = _statement(r, st, context, questions=True) if _asks(st.text) else []
        attached = _time_for_previous(r, st, statements, i, out, context)
        if attached is not None:
            out[-1] = attached
            continue
        out.extend(_under_dated_heading(r, st, context))
    return out


def habits(text: str, *, headings: Sequence[str] = (), speakers: frozenset[str] = frozenset()) -> list[Habit]:
    """The habits ``text`` speaks of: a weekday or a day of the month that recurs, with its time if said."""
    out: list[Habit] = []
    for st in read(text, tuple(headings), speakers):
        if not _HABIT.search(st.text) or (_QUESTION.search(st.text) and st.text.rstrip().endswith("?")):
            continue
        if not (_kind(st.text) or _PLAN.search(st.text) or re.search(r"\b(?:I|we)\b", st.text)):
            continue
        days = tuple(sorted({i for i, name in enumerate(_WEEKDAYS)
                             if re.search(rf"\b{name[:3]}\w*s?\b", st.text, re.I)}))
        if re.search(r"\bevery\s+(?:day|morning|evening|night)\b|\bdaily\b", st.text, re.I):
            days = tuple(range(7))
        elif re.search(r"\bevery\s+weekday\b|\bweekdays\b", st.text, re.I):
            days = tuple(range(5))
        month_day = None
        m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)\s+of\s+(?:each|every|the)\s+month\b", st.text, re.I)
        if m:
            month_day, days = int(m.group(1)), ()
        if not days and month_day is None:
            continue
        found = clocks(st.text)
        at = time(found[0].hour, found[0].minute) if found else None
        out.append(Habit(days, month_day, at, st.text, st.start, st.end, st.headings, st.speaker))
    return out


# --------------------------------------------------------------------------- one statement


def _statement(r: _Reading, st: Statement, context: str, *, questions: bool = False) -> list[Happening]:
    t = st.text
    if (_asks(t) and not questions) or _HABIT.search(t):
        return []
    ctx = Ctx(r.said_at, cast(ZoneInfo, r.zone), 0, r.conventions)
    tense = tense_of(t)
    dated: list[tuple[int, int, Span]] = []
    for a, b, raw in _scan(t, ctx):
        span = _settle(ctx, t[a:b], raw, tense, t)
        if span is None or _NOT_EVENT.search(t[max(0, a - 40):a]) or _NOT_EVENT.search(t[b:b + 12]):
            continue
        if _ANAPHORIC.search(t[max(0, a - 12):a]):
            continue  # "that Saturday": a day reckoned from another the reader knows, not said here
        dated.append((a, b, span))
    if not dated:
        return []
    kind = _kind(t) or _kind(" ".join(st.headings))
    if kind is None and len(t.split()) <= 10:
        kind = _kind(context)  # "Yes! Saturday at 7.30 at Dishoom." answers "dinner on Saturday?"
    if kind is None:
        if _PLAN.search(t) or (tense == "future" and re.search(r"\b(?:I|we|you)\b", t)):
            kind = "plan"
        elif tense == "past" and _DID.search(t):
            kind = "happened"
        else:
            return []
    if _NOT_EVENT.search(t) and not re.search(r"\b(?:due|deadline|pay|payment|appointment)\b", t, re.I):
        return []
    times = [c for c in clocks(t, context) if not any(a <= c.span[0] < b for a, b, _ in dated)]
    new, old = _moved(t, dated)
    change: Literal["moved", "cancelled"] | None = None
    if _CANCEL.search(t):
        change = "cancelled"
    elif old is not None or (_MOVE.search(t) and len(dated) == 1 and re.search(
            r"\b(?:moved|rescheduled|postponed|pushed|brought\s+forward|changed)\b", t, re.I)):
        change = "moved"
    chosen = [new] if new is not None else dated
    out: list[Happening] = []
    for a, b, span in chosen:
        clock = _nearest_clock(times, a, b, len(chosen) == 1)
        moved_from = None
        if old is not None and new is not None:
            old_clock = _nearest_clock(times, old[0], old[1], False)
            moved_from = _from(r, old[2], old_clock)
        h = _make(r, st, t[a:b], span, clock, kind, tense, change, moved_from, context)
        if h is not None:
            out.append(h)
    return out


def _scan(text: str, ctx: Ctx) -> list[tuple[int, int, Span]]:
    """The time expressions of a statement; a range that a move names ("moved from 1 December to 4
    December") is its two ends, the old time and the new."""
    out: list[tuple[int, int, Span]] = []
    found = scan(text, ctx)
    for holiday in _HOLIDAY_EVENT.finditer(text):
        if not any(a < holiday.end(1) and holiday.start(1) < b for a, b, _ in found):
            day = [sp for _a, _b, sp in scan(f"on {holiday.group(1)}", ctx)]
            if day:
                found.append((holiday.start(1), holiday.end(1), day[0]))
    for a, b, span in sorted(found, key=lambda f: f[0]):
        m = _FROM_TO.match(text[a:b])
        if m and _MOVE.search(text):
            ends = [(a + m.start(g), a + m.end(g)) for g in ("old", "new")]
            parts = [[s for x, y, s in scan(text[lo:hi], ctx) if y - x == hi - lo] for lo, hi in ends]
            if all(parts):
                out += [(lo, hi, found[0]) for (lo, hi), found in zip(ends, parts, strict=True)]
                continue
        out.append((a, b, span))
    return out


def _asks(text: str) -> bool:
    """A question states nothing ("Are you free on Friday?"); a proposal without a question word does
    ("Dinner Saturday at 7?" is read as the plan it puts forward)."""
    return text.rstrip(" \"')]").endswith("?") and bool(_QUESTION.search(text))


def _kind(text: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return None


def _settle(ctx: Ctx, expression: str, span: Span, said: Tense, _sentence: str) -> Span | None:
    """The occurrence a statement means (the reading every reader shares: ``secondbrain.temporal.tense``), or
    ``None`` when the time is no event's: vague, open, too long."""
    return occurrence(ctx, expression, span, said, max_span=MAX_SPAN)


def _moved(text: str, dated: list[tuple[int, int, Span]]) -> tuple[tuple[int, int, Span] | None,
                                                                  tuple[int, int, Span] | None]:
    """With two times and words of a move: which is the new one and which the old ("moved from 1 December to
    4 December", "pushed from Friday to Monday", "now on Tuesday 8 December, not Monday")."""
    if len(dated) < 2 or not _MOVE.search(text):
        return None, None
    first, second = dated[0], dated[1]
    if _FROM_OLD.search(text[:first[0]]) or _TO_NEW.search(text[:second[0]]):
        return second, first
    if _TO_NEW.search(text[:first[0]]):
        return first, second
    return second, first


def _nearest_clock(times: list[Clock], a: int, b: int, only: bool) -> Clock | None:
    """The time of day that goes with a date at ``[a, b)``: the nearest one written (any, when it is the only
    date of the statement)."""
    if not times:
        return None
    best = min(times, key=lambda c: min(abs(c.span[0] - b), abs(a - c.span[1])))
    near = min(abs(best.span[0] - b), abs(a - best.span[1]))
    return best if only or near <= 24 else None


def _from(r: _Reading, span: Span, clock: Clock | None) -> tuple[date, datetime | None]:
    day = _first_day(r, span)
    return day, _instant(r, day, clock) if clock is not None else None


def _first_day(r: _Reading, span: Span) -> date:
    if span.first_day is not None:
        return span.first_day
    assert span.start is not None
    return span.start.astimezone(r.zone).date()


def _instant(r: _Reading, day: date, clock: Clock) -> datetime:
    """The day as written, at the clock time in the zone it names (else the passage's, else the writer's)."""
    zone = clock.zone or r.passage_zone or r.zone
    return datetime.combine(day, time(clock.hour, clock.minute)).replace(tzinfo=zone)


def _make(r: _Reading, st: Statement, expression: str, span: Span, clock: Clock | None, kind: str, tense: Tense,
          change: Literal["moved", "cancelled"] | None, moved_from: tuple[date, datetime | None] | None,
          context: str, *, quote: str | None = None, end_offset: int | None = None) -> Happening | None:
    assert span.start is not None and span.end is not None
    first = _first_day(r, span)
    last = span.last_day if span.last_day is not None else (span.end - timedelta(microseconds=1)).astimezone(
        r.zone).date() + timedelta(days=1)
    days = (last - first).days
    precision: Precision = "day" if days <= 1 else "week" if span.grain in ("week", "weekend") or (
        days == 7 and first.weekday() == 0) else "month" if span.grain == "month" else "days"
    start = end = None
    if clock is not None and days <= 1:
        start = _instant(r, first, clock)
        end = (datetime.combine(first, time(*clock.end)).replace(tzinfo=start.tzinfo) if clock.end
               else None)
        precision = "time"
    words = f"{expression} {_clock_words(st.text, clock)}".strip()
    subject = _subject(quote or st.text, expression, clock)
    yearly = kind == "birthday" and not _YEAR.search(expression)
    return Happening(first, max(last, first + timedelta(days=1)), start, end, precision, kind, quote or st.text,
                     st.markdown if quote is None else quote, words, st.start,
                     end_offset if end_offset is not None else st.end, st.headings, st.speaker, tense, subject,
                     change, moved_from, clock.zone_words if clock is not None else "", yearly)


def _clock_words(text: str, clock: Clock | None) -> str:
    return text[clock.span[0]:clock.span[1]].strip() if clock is not None else ""


def _subject(text: str, expression: str, clock: Clock | None) -> frozenset[str]:
    """What the item is about, as search terms: its words without the time words and words of scheduling."""
    words = text.replace(expression, " ")
    if clock is not None:
        words = words.replace(text[clock.span[0]:clock.span[1]], " ")
    words = _MONTH.sub(" ", words)
    words = re.sub(rf"\b{_WEEKDAY}\b|\d+(?:st|nd|rd|th)?", " ", words, flags=re.I)
    return frozenset(t for t in Bm25Encoder().tokenize(words) if t not in _GENERIC and len(t) > 1)


# --------------------------------------------------------------------------- statements that need another


def _time_for_previous(r: _Reading, st: Statement, statements: list[Statement], i: int, out: list[Happening],
                       context: str) -> Happening | None:
    """A line that only gives a time ("at 10:30", "Time: 10:30", "12 noon - 5pm") after the line with the
    date, as letters, tickets and posters put them: the time of the item just read."""
    if not out or out[-1].start is not None or out[-1].precision != "day" or i == 0:
        return None
    before = out[-1]
    if statements[i - 1].start > before.statement_end or st.start - before.statement_end > 80:
        return None
    times = clocks(st.text, context)
    if len(times) != 1 or len(st.text.split()) > 8:
        return None
    clock = times[0]
    start = _instant(r, before.day, clock)
    end = datetime.combine(before.day, time(*clock.end)).replace(tzinfo=start.tzinfo) if clock.end else None
    return replace(before, start=start, end=end, precision="time",
                   quote=f"{before.quote} {st.text}", markdown=f"{before.markdown} {st.markdown}",
                   expression=f"{before.expression} {_clock_words(st.text, clock)}", statement_end=st.end,
                   zone_words=clock.zone_words)


def _under_dated_heading(r: _Reading, st: Statement, context: str) -> list[Happening]:
    """An itinerary's line ("07:25 flight TP1351 from Gatwick") under a heading that gives the day
    ("Thursday 14 January")."""
    times = clocks(st.text, context)
    if not times or not st.headings or _asks(st.text) or _HABIT.search(st.text):
        return []
    span = None
    for heading in reversed(st.headings):
        if heading not in r.heading_days:
            ctx = Ctx(r.said_at, cast(ZoneInfo, r.zone), 0, r.conventions)
            found = [_settle(ctx, heading[a:b], s, "future", heading) for a, b, s in scan(heading, ctx)]
            r.heading_days[heading] = next((s for s in found if s is not None and s.grain == "day"), None)
        span = r.heading_days[heading]
        if span is not None:
            break
    if span is None:
        return []
    kind = _kind(st.text) or _kind(" ".join(st.headings)) or "event"
    h = _make(r, st, "", span, times[0], kind, "future", None, None, context)
    return [h] if h is not None else []
