"""An agenda from what several sources say (pure, no I/O): one line per event, at its newest time.

Each source's items come from ``services.agenda.happenings``, read with the source's own time.  Read in the
order they were said, an item is the same event as one read before when they share what they are about
(a word beyond the scheduling ones: "dentist", "accountant", "BA117") and the newer one moves it ("moved
to", "pushed", "now"), names the time it moved from, or keeps its day with another time.  The event then
stands at the newer time with "moved from" the older; saying it again at the same time only adds a
source; a cancellation takes it off (kept, marked, for a calendar feed to cancel it).  A birthday or an
anniversary without a year comes back every year.  Habits ("yoga every Tuesday at 6.30pm") are shown only
when asked for, each day they fall on.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from secondbrain.events.models import Recurrence
from secondbrain.search_hits import SearchHit
from secondbrain.temporal.mentions import Mention
from secondbrain.temporal.recurrence import between, describe
from secondbrain.temporal.written import written_span
from secondbrain.word_times import quoted_second
from services.agenda.happenings import Habit, Happening

CONVERSATION_GAP = timedelta(days=14)  # a move without a subject moves what its conversation set this recently


@dataclass(frozen=True, slots=True)
class Said:
    """An item as one source says it: the item, the passage it is in and when that passage was said."""

    happening: Happening
    hit: SearchHit
    said_at: datetime

    @property
    def key(self) -> tuple[str, str, date, datetime | None]:
        """Equal for the same statement of the same document read twice (overlapping chunks, chat windows)."""
        return self.hit.document_id, " ".join(self.happening.quote.split()), self.happening.day, self.happening.start


@dataclass(slots=True)
class Event:
    """One line of the agenda: what is said last about an event, and what was said before."""

    now: Said  # the newest source's item: the time shown
    moved_from: list[Said] = field(default_factory=list)  # earlier times, oldest first
    also: list[Said] = field(default_factory=list)  # other sources that say the same
    cancelled: Said | None = None
    occurrence: date | None = None  # a birthday's or a habit's day in the window
    series: Recurrence | None = None  # an occurrence of a recurring event kept as one (a calendar's series)
    series_at: datetime | None = None  # which occurrence: the time it was due (before any move)
    more: bool = False  # the series has more occurrences in the window than the agenda shows

    @property
    def happening(self) -> Happening:
        return self.now.happening


def merge(said: list[Said]) -> list[Event]:
    """One event per thing said, at its newest time (see the module doc)."""
    events: list[Event] = []
    seen: set[tuple[str, str, date, datetime | None]] = set()
    asked: dict[str, list[Said]] = {}  # per conversation, what was proposed and not yet answered
    for s in _answered(sorted(said, key=lambda x: (x.said_at, x.hit.document_id, x.happening.statement_start)),
                       asked):
        if s.key in seen:
            continue
        seen.add(s.key)
        h = s.happening
        match = _same_event(events, s)
        if h.change == "cancelled":
            if match is not None:
                match.cancelled = s
            continue
        if match is not None:
            s = _keeps(match.happening, s)  # a move keeps every part of the time it does not change
            if match.happening.title and (h.change == "moved" or not s.happening.title):
                s = replace(s, happening=replace(s.happening, title=match.happening.title))  # named as first said
            h = s.happening
        elif h.time_only:
            continue  # "now at 11:30" about nothing read before: no day to put it on
        if match is None:
            event = Event(s)
            if h.moved_from is not None:  # the statement names the old time itself
                old_day, old_start = h.moved_from
                event.moved_from.append(replace(s, happening=replace(h, day=old_day, last_day=old_day +
                                                                     timedelta(days=1), start=old_start,
                                                                     end=None, moved_from=None)))
            events.append(event)
            continue
        if _same_time(match.happening, h):
            match.also.append(match.now)
            match.now = s
        else:
            match.moved_from.append(match.now)
            match.now = s
            match.cancelled = None  # moved again after a cancellation: it is on
    return events


def _answered(said: list[Said], asked: dict[str, list[Said]]) -> Iterator[Said]:
    """What was said, with a proposal left unanswered in its message ("are you free for a walk on Sunday
    afternoon?") counted when a later message of the same conversation agrees ("See you there!"), within
    ``CONVERSATION_GAP``; a later proposal there replaces it; one never agreed to is no event."""
    for s in said:
        h, talk = s.happening, conversation(s.hit)
        if h.proposed:
            asked[talk] = [p for p in asked.get(talk, []) if p.said_at == s.said_at] + [s]
            continue
        if h.agrees:
            proposals = asked.pop(talk, [])
            if len(proposals) == 1 and s.said_at - proposals[0].said_at <= CONVERSATION_GAP:
                p = proposals[0]
                yield replace(p, happening=replace(p.happening, proposed=False,
                                                   quote=f"{p.happening.quote} {h.quote}"), said_at=s.said_at)
            continue
        yield s


def _same_event(events: list[Event], s: Said) -> Event | None:
    """The event read before that ``s`` speaks of, if any (the latest such): one it shares what it is about
    with, at the same time or moved; else, in the same conversation (a chat, a mail thread), one at the same
    time, or the one a move without a subject of its own ("can we push to Friday same time?") moves."""
    h = s.happening
    for event in reversed(events):
        e = event.happening
        if not (h.subject & e.subject) or h.yearly != e.yearly:
            continue
        if _same_time(e, h) or h.day == e.day or h.change is not None or h.time_only:
            return event
        if h.moved_from is not None and h.moved_from[0] == e.day:
            return event
    talk = conversation(s.hit)
    for event in reversed(events):
        if conversation(event.now.hit) != talk or event.happening.yearly != h.yearly:
            continue
        if _same_time(event.happening, h) and h.start is not None:
            return event
        if (h.change == "moved" or h.time_only) and s.said_at - event.now.said_at <= CONVERSATION_GAP:
            return event
    return None


def conversation(hit: SearchHit) -> str:
    """What a passage was said in: a chat (its days are records of their own), a mail thread, else its
    document."""
    if hit.kind == "chat" and "#" in hit.source_uri:
        return hit.source_uri.split("#", 1)[0]
    if hit.source_uri.startswith("import:mail:"):
        return "mail:" + " ".join(hit.title.lower().split())
    return hit.document_id


def _keeps(old: Happening, s: Said) -> Said:
    """A newer item about the same event with the parts of the old time it does not say: the time of day of a
    move that names only the day ("moved to Tuesday 1 December, same time"), the day of one that names only
    the time ("now at 11:30")."""
    h = s.happening
    if h.time_only and h.start is not None:
        start = datetime.combine(old.day, h.start.timetz())
        end = datetime.combine(old.day, h.end.timetz()) if h.end is not None else None
        if end is None and old.start is not None and old.end is not None:
            end = start + (old.end - old.start)
        moved = replace(h, day=old.day, last_day=old.last_day, start=start, end=end, time_only=False,
                        title=old.title or h.title, kind=old.kind)
        return replace(s, happening=moved)
    if h.start is None and h.precision == "day" and old.start is not None and h.day != old.day:
        start = datetime.combine(h.day, old.start.timetz())
        end = datetime.combine(h.day, old.end.timetz()) if old.end is not None else None
        return replace(s, happening=replace(h, start=start, end=end, precision="time", title=h.title or old.title))
    return s


def _same_time(a: Happening, b: Happening) -> bool:
    return a.day == b.day and a.start == b.start


def in_window(events: list[Event], start: datetime, end: datetime, tz: tzinfo) -> list[Event]:
    """The events that fall in ``[start, end)`` (a birthday each year it comes back, an arrangement on a rhythm
    each time it falls), earliest first."""
    out: list[Event] = []
    for event in events:
        h = event.happening
        if h.yearly:
            out.extend(_yearly(event, start, end, tz))
            continue
        if h.recurrence is not None:
            out.extend(_recurring(event, start, end, tz))
            continue
        lo, hi = bounds(h, tz)
        if lo < end and hi > start:
            out.append(event)
    return sorted(out, key=lambda e: (bounds_of(e, tz)[0], e.happening.quote))


def bounds(h: Happening, tz: tzinfo, day: date | None = None) -> tuple[datetime, datetime]:
    """When an item starts and ends: its instants, or its days in the person's zone."""
    if h.start is not None and (day is None or day == h.day):
        return h.start, h.end or h.start + timedelta(minutes=1)
    first = day or h.day
    last = first + (h.last_day - h.day)
    return (datetime.combine(first, time(0)).replace(tzinfo=tz), datetime.combine(last, time(0)).replace(tzinfo=tz))


def bounds_of(event: Event, tz: tzinfo) -> tuple[datetime, datetime]:
    return bounds(event.happening, tz, event.occurrence)


def _yearly(event: Event, start: datetime, end: datetime, tz: tzinfo) -> list[Event]:
    h = event.happening
    out = []
    for year in range(start.astimezone(tz).year, end.astimezone(tz).year + 1):
        try:
            day = h.day.replace(year=year)
        except ValueError:  # 29 February in a common year
            day = date(year, 3, 1)
        lo, hi = bounds(h, tz, day)
        if lo < end and hi > start:
            out.append(Event(event.now, event.moved_from, event.also, event.cancelled, day))
    return out


def _recurring(event: Event, start: datetime, end: datetime, tz: tzinfo) -> list[Event]:
    """Each time an arrangement on a rhythm falls in ``[start, end)``: the item on that day, at its time of day."""
    h = event.happening
    assert h.recurrence is not None
    first = (start - timedelta(days=1)).astimezone(tz).date()
    out = []
    for day in h.recurrence.days(first, end.astimezone(tz).date() + timedelta(days=1)):
        shift = day - h.day
        moved = replace(h, day=day, last_day=h.last_day + shift,
                        start=None if h.start is None else datetime.combine(day, h.start.timetz()),
                        end=None if h.end is None else datetime.combine(day + (h.end.date() - h.start.date()
                                                                             if h.start else timedelta(0)),
                                                                      h.end.timetz()))
        lo, hi = bounds(moved, tz)
        if lo < end and hi > start:
            out.append(Event(replace(event.now, happening=moved), event.moved_from, event.also, event.cancelled, day))
    return out


def habit_events(habits: list[tuple[Habit, SearchHit, datetime]], start: datetime, end: datetime,
                 tz: tzinfo) -> list[Event]:
    """Each day in ``[start, end)`` a habit falls on, as an event (only when habits are asked for)."""
    out: list[Event] = []
    first, last = start.astimezone(tz).date(), end.astimezone(tz).date()
    for habit, hit, said_at in habits:
        day = first
        while day <= last:
            if (habit.weekdays and day.weekday() in habit.weekdays) or habit.month_day == day.day:
                at = datetime.combine(day, habit.at).replace(tzinfo=tz) if habit.at else None
                h = Happening(day, day + timedelta(days=1), at, None, "time" if at else "day", "habit", habit.quote,
                              habit.quote, "", habit.statement_start, habit.statement_end, habit.headings,
                              habit.speaker)
                lo, hi = bounds(h, tz)
                if lo < end and hi > start:
                    out.append(Event(Said(h, hit, said_at)))
            day += timedelta(days=1)
    return out


# --------------------------------------------------------------------------- as the person reads it


def written(h: Happening, tz: tzinfo, order: str, day: date | None = None) -> str:
    """When an item is, the person's way: "Thu 10 December 2026, 09:40" (their zone, their date order);
    a stretch of days, a week or a month as such."""
    if h.start is not None and day is None:
        local = h.start.astimezone(tz)
        text = written_span(Mention(local, local + timedelta(minutes=1), "", (0, 0)), _zone(tz), local, order)
        clock = f"{local:%H:%M}"
        if h.end is not None:
            clock += f"\u2013{h.end.astimezone(tz):%H:%M}"
        return f"{text}, {clock}"
    first = day or h.day
    lo = datetime.combine(first, time(0)).replace(tzinfo=tz)
    hi = datetime.combine(first + (h.last_day - h.day), time(0)).replace(tzinfo=tz)
    if h.precision == "week":
        return f"the week of {written_span(Mention(lo, lo + timedelta(days=1), '', (0, 0)), _zone(tz), lo, order)}"
    return written_span(Mention(lo, hi, "", (0, 0)), _zone(tz), lo, order)


def _zone(tz: tzinfo) -> Any:
    return tz  # written_span reads any tzinfo; it is typed for ZoneInfo


def _short(quote: str, words: int = 8) -> str:
    cut = quote.split()
    return " ".join(cut[:words]) + ("\u2026" if len(cut) > words else "")


def event_id(event: Event) -> str:
    """Stable across requests and moves: the first source's statement of it (and a birthday's year)."""
    if event.series_at is not None:  # an occurrence of a series: the series and the time it was due
        raw = f"{event.now.hit.document_id}|series|{event.series_at.astimezone(UTC).isoformat()}"
        return hashlib.sha256(raw.encode()).hexdigest()[:24]
    first = event.moved_from[0] if event.moved_from else (event.also[0] if event.also else event.now)
    raw = f"{first.hit.document_id}|{first.happening.statement_start}|{event.occurrence or ''}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def citation(s: Said, tz: tzinfo) -> dict[str, Any]:
    """Where an item is said: the source, its page, the second of a recording, the section; a link that
    opens the original there, in the shape the web page's citation viewer takes."""
    hit, h = s.hit, s.happening
    second = None
    if hit.t_start is not None:
        second = quoted_second(hit.word_times, hit.t_start, hit.t_end, len(hit.text), h.statement_start)
    link = f"/v1/artifacts/{hit.artifact_id}/raw"
    if hit.page is not None:
        link += f"#page={hit.page}"
    elif second is not None:
        link += f"#t={int(second)}"
    try:
        captured = datetime.fromisoformat(hit.captured_at.replace("Z", "+00:00")).astimezone(tz).isoformat()
    except ValueError:
        captured = hit.captured_at
    out: dict[str, Any] = {
        "title": hit.title, "modality": hit.modality, "source_id": hit.source_id, "document_id": hit.document_id,
        "artifact_id": hit.artifact_id, "source_uri": hit.source_uri, "captured_at": hit.captured_at,
        "captured_at_local": captured, "page": hit.page, "t_start": second, "heading_path": list(h.headings),
        "section": " \u203a ".join(h.headings), "speaker": h.speaker, "link": link, "snippet": h.quote,
        "said_at": s.said_at.astimezone(tz).isoformat(),
    }
    if second is not None:
        out["position"] = f"{int(second) // 60}:{int(second) % 60:02d}"
    return out


# How long an item lasts when its source does not say (the calendar feed shows it so): an hour for what one
# goes to, the whole day for what is due on a day.
DEFAULT_LENGTH = {"appointment": timedelta(hours=1), "event": timedelta(hours=1), "plan": timedelta(hours=1),
                  "travel": timedelta(hours=1), "happened": timedelta(hours=1), "habit": timedelta(hours=1)}
ALL_DAY_KINDS = frozenset({"deadline", "payment", "birthday"})
_PART = re.compile(r"\b(morning|afternoon|evening|night)\b", re.I)


def event_json(event: Event, tz: tzinfo, order: str) -> dict[str, Any]:
    """One agenda line as the API gives it."""
    h = event.happening
    other_day = event.occurrence if event.occurrence is not None and event.occurrence != h.day else None
    lo, hi = bounds(h, tz, other_day)
    timed = h.start is not None and other_day is None
    local_lo, local_hi = lo.astimezone(tz), hi.astimezone(tz)
    stated = h.end is not None or not timed
    if timed and h.end is None:
        local_hi = local_lo + DEFAULT_LENGTH.get(h.kind, timedelta(hours=1))
    out: dict[str, Any] = {
        "id": event_id(event), "date": (other_day or (local_lo.date() if timed else h.day)).isoformat(),
        "start": local_lo.isoformat(), "end": local_hi.isoformat(), "all_day": not timed,
        "time": f"{local_lo:%H:%M}" if timed else None, "end_time": f"{local_hi:%H:%M}" if timed and h.end else None,
        "length": "stated" if stated else "default", "when": written(h, tz, order, other_day),
        "precision": h.precision, "kind": h.kind, "title": h.title or _short(h.quote), "quote": h.quote,
        "words": h.expression, "status": "cancelled" if event.cancelled else "confirmed",
        "source": citation(event.now, tz),
    }
    if h.recurrence is not None:
        out["recurs"] = h.recurrence.words()
    part = _PART.search(h.expression) if not timed else None
    if part is not None and h.precision == "day":
        out["part"] = part.group(1).lower()  # "next Wednesday afternoon"
    if h.zone_words and h.start is not None:
        written_at = h.start.astimezone(h.start.tzinfo)
        out["stated"] = f"{written_at:%H:%M} {h.zone_words}"  # as the source wrote it, before conversion
    if event.moved_from:
        old = event.moved_from[-1]
        out["moved_from"] = {"when": written(old.happening, tz, order), "quote": old.happening.quote,
                             "source": citation(old, tz)}
    if event.also:
        out["also_in"] = [citation(s, tz) for s in event.also]
    if event.cancelled is not None:
        out["cancelled_by"] = {"quote": event.cancelled.happening.quote, "source": citation(event.cancelled, tz)}
    if h.yearly:
        out["recurs"] = "yearly"
    if h.kind == "habit":
        out["recurs"] = "habit"
    if event.series is not None:
        out["recurs"] = "series"
        out["repeats"] = describe(event.series)
        if event.more:
            out["more_occurrences"] = True  # the window holds more of them than are listed
    return out


def series_events(hit: SearchHit, series: Recurrence, start: datetime, end: datetime, tz: tzinfo) -> list[Event]:
    """The occurrences of a recurring event kept as one (its passage ``hit``) that fall in ``[start, end)``, as
    agenda lines: at their own times, a moved one with where it moved from, at most
    :data:`~secondbrain.temporal.recurrence.MAX_PER_WINDOW` (the last one saying there are more)."""
    said_at = _said_at(hit)
    expansion = between(series, start, end)
    out = []
    for occ in expansion.occurrences:
        now = Said(_occurrence_happening(hit, series, occ.start, occ.end), hit, said_at)
        moved = []
        if occ.moved_from is not None:
            length = timedelta(seconds=series.duration_s)
            moved = [Said(_occurrence_happening(hit, series, occ.moved_from, occ.moved_from + length), hit, said_at)]
        out.append(Event(now, moved_from=moved, series=series, series_at=occ.moved_from or occ.start))
    if expansion.more and out:
        out[-1].more = True
    return out


def _occurrence_happening(hit: SearchHit, series: Recurrence, start: datetime, end: datetime) -> Happening:
    title = hit.title or "Untitled event"
    if series.all_day:  # whole days on the series' own wall clock
        first, last = start.date(), max(end.date(), start.date() + timedelta(days=1))
        return Happening(first, last, None, None, "day" if (last - first).days == 1 else "days", "event", title,
                         title, describe(series), 0, len(title))
    return Happening(start.date(), start.date() + timedelta(days=1), start, end if end > start else None, "time",
                     "event", title, title, describe(series), 0, len(title))


def _said_at(hit: SearchHit) -> datetime:
    try:
        return datetime.fromisoformat(hit.captured_at.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)


def days_json(events: list[Event], tz: ZoneInfo, order: str) -> list[dict[str, Any]]:
    """The events grouped by day in the person's zone, each day with its name written their way."""
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        line = event_json(e, tz, order)
        by_day[line["date"]].append(line)
    out = []
    for day in sorted(by_day):
        d = date.fromisoformat(day)
        label = d.strftime("%a %-d %B %Y") if order == "dmy" else d.strftime("%a, %B %-d, %Y") \
            if order == "mdy" else d.strftime("%Y-%m-%d (%a)")
        out.append({"date": day, "label": label, "events": by_day[day]})
    return out
