"""Calendars in iCalendar (RFC 5545, ``.ics``): Google Calendar's export (Settings > Import & export > Export: a
zip with one ``.ics`` per calendar), Apple Calendar (File > Export), Outlook (Save calendar), Proton, Fastmail,
Thunderbird, a subscribed feed saved to a file.

Every event becomes one record dated by its start: a time with a zone (``TZID``, or UTC) is that instant; an
all-day event and a floating time (no zone) are read in the calendar's zone (``X-WR-TIMEZONE``, which Google and
Apple write) or else the import's.  A recurring event is one record too, however often it repeats: its rule, its
extra and left-out dates (``RDATE``, ``EXDATE``, an occurrence marked ``STATUS:CANCELLED``) and its moved
occurrences (``RECURRENCE-ID``) are kept with it (:mod:`secondbrain.temporal.recurrence`, in the note's front
matter), and the agenda, search by time and "On this day" work out its occurrences for the window they look at.
Reading a calendar costs what the file holds, never what its rules would make.  A rule this does not keep (one
that never gives a date) leaves the event at its first date, saying why.  The record holds the title
(``SUMMARY``), when and how it repeats, where, the organizer and the attendees by name, the description (Google
writes it as HTML), what moved and what was left out, and the categories as tags; its provenance is the file
and the ``UID``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
from icalendar.timezone import tzid_from_dt

from secondbrain.events.models import Moved, Recurrence
from secondbrain.temporal import recurrence
from secondbrain.temporal.recurrence import to_json
from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.html_markdown import html_to_markdown
from services.importers.model import ExportError, Options, Result, Skipped, failure, guarded

NAME = "ics"
SHOWN_DATES = 20  # dates left out, occurrences moved: listed in the record up to this many
_HTML = re.compile(r"<(?:br|p|div|a|b|i|u|ul|ol|li|span)\b[^>]*>", re.I)


def _is_calendar(export: Export, entry: Entry) -> bool:
    try:
        with export.open_entry(entry) as fh:
            head = fh.read(1024)
    except (OSError, ExportError):
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(b"BEGIN:VCALENDAR")


def _files(export: Export) -> list[Entry]:
    return [e for e in export.candidates(".ics", ".ical", ".icalendar", ".ifb", "") if _is_calendar(export, e)]


def detect(export: Export) -> str | None:
    files = _files(export)
    if not files:
        return None
    events = count(export, Options())
    return f"{events} events in {len(files)} calendar{'s' if len(files) > 1 else ''}"


def count(export: Export, options: Options) -> int:
    return sum(1 for _ in read(export, options))


def read(export: Export, options: Options) -> Iterator[Result]:
    seen: set[str] = set()  # the same event in two calendars of one export is imported once
    for entry in _files(export):
        yield from guarded(entry.name, entry.path, _read, export, entry, options, seen)


@dataclass(frozen=True, slots=True)
class _Calendar:
    name: str | None
    zone: tzinfo  # where all-day events and floating times are read
    stated: bool = False  # the calendar names its zone (X-WR-TIMEZONE): its series written in UTC repeat there


def _zone(cal: icalendar.Calendar, options: Options) -> tzinfo:
    name = str(cal.get("X-WR-TIMEZONE") or "").strip()
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return options.tz


def _read(export: Export, entry: Entry, options: Options, seen: set[str]) -> Iterator[Result]:
    try:
        cal = icalendar.Calendar.from_ical(export.read(entry))
    except ValueError as exc:
        yield Skipped(entry.name, f"not a readable calendar file: {str(exc)[:200]}", entry.path)
        return
    # Several VCALENDARs concatenated in one file come as a list.
    for one in cal if isinstance(cal, list) else [cal]:
        yield from _calendar(one, entry, options, seen)


def _calendar(cal: icalendar.Calendar, entry: Entry, options: Options, seen: set[str]) -> Iterator[Result]:
    info = _Calendar(str(cal.get("X-WR-CALNAME") or "").strip() or None, _zone(cal, options),
                     bool(str(cal.get("X-WR-TIMEZONE") or "").strip()))
    groups: dict[str, list[Any]] = {}
    for n, event in enumerate(cal.walk("VEVENT")):
        uid = str(event.get("UID") or "").strip() or f"#{n}"  # without a UID, an event is its own
        groups.setdefault(uid, []).append(event)
    for events in groups.values():
        master = next((e for e in events if e.get("RECURRENCE-ID") is None), None)
        overrides = [e for e in events if e.get("RECURRENCE-ID") is not None]
        if master is not None and (master.get("RRULE") is not None or master.get("RDATE") is not None):
            yield _guard(master, entry, info, seen, overrides=overrides)
            continue
        # A one-off event, or occurrences of a series whose rule is not in this file: each as it is.
        for event in events:
            yield _guard(event, entry, info, seen, overrides=None)


def _guard(event: Any, entry: Entry, info: _Calendar, seen: set[str], *, overrides: list[Any] | None) -> Result:
    label = str(event.get("SUMMARY") or "an event without a title")
    try:
        return _event(event, entry, info, seen, overrides=overrides)
    except Exception as exc:  # one damaged event never stops the rest of the calendar
        return Skipped(label, failure(exc), entry.path)


def _aware(value: date | datetime, zone: tzinfo) -> datetime:
    """A start as an instant: a date is the start of that day, a floating time is local, in ``zone``."""
    if not isinstance(value, datetime):
        return datetime.combine(value, time(0), zone)
    return value if value.tzinfo else value.replace(tzinfo=zone)


def _when(start: date | datetime, end: date | datetime | None, zone: tzinfo) -> str:
    """How a calendar shows it: ``Thursday 12 June 2025, 09:30-10:15 (Europe/London)``, ``All day, ...``."""
    def day(d: date) -> str:
        return f"{d:%A} {d.day} {d:%B %Y}"

    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if isinstance(end, date) and not isinstance(end, datetime) else start
        if last > start:
            return f"All day, {day(start)} to {day(last)}"
        return f"All day, {day(start)}"
    # An event written in UTC (as Google writes one-off events) is shown in the calendar's zone.
    own = start.tzinfo if start.tzinfo and _zone_name(start.tzinfo) not in ("UTC", "") else zone
    shown = start.astimezone(own) if start.tzinfo else start
    text = f"{day(shown.date())}, {shown:%H:%M}"
    if isinstance(end, datetime):
        finish = end.astimezone(own) if end.tzinfo else end
        text += f"-{finish:%H:%M}" if finish.date() == shown.date() else f" to {day(finish.date())}, {finish:%H:%M}"
    name = _zone_name(own)
    return text + (f" ({name})" if name else "")


def _zone_name(zone: tzinfo) -> str:
    key = getattr(zone, "key", None) or getattr(zone, "zone", None)
    return str(key) if key else (zone.tzname(None) or "")


def _person(prop: Any) -> str:
    """A CN when there is one, else the address without ``mailto:``."""
    name = str(prop.params.get("CN") or "").strip().strip('"')
    return name or str(prop).removeprefix("mailto:").removeprefix("MAILTO:")


def _people(event: Any, key: str) -> list[Any]:
    value = event.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _event(event: Any, entry: Entry, info: _Calendar, seen: set[str], *, overrides: list[Any] | None) -> Result:
    """A one-off event (``overrides`` None: an occurrence of a series whose rule is elsewhere is one too), or a
    series (its master event with the occurrences it overrides): one record either way."""
    summary = str(event.get("SUMMARY") or "").strip() or None
    uid = str(event.get("UID") or "").strip()
    if event.get("DTSTART") is None:
        return Skipped(summary or uid or "an event", "the event has no start time", entry.path)
    start = event.decoded("DTSTART")
    end = _end_of(event, start)
    at = _aware(start, info.zone)
    local = at.astimezone(info.zone)
    label = f"{summary or 'Untitled event'}, {local:%a} {local.day} {local:%b %Y}" + (
        f" {local:%H:%M}" if isinstance(start, datetime) else "")
    status = str(event.get("STATUS") or "").upper()
    if status == "CANCELLED":
        return Skipped(label, "cancelled in the calendar", entry.path)
    occurrence = None
    if event.get("RECURRENCE-ID") is not None:  # an occurrence on its own: named by the one it stands for
        rid = event.decoded("RECURRENCE-ID")
        occurrence = _aware(rid, info.zone).astimezone(UTC).isoformat() if isinstance(rid, datetime) \
            else rid.isoformat()
    if not uid:  # RFC 5545 requires one; an event without it is named by its start and title
        uid = f"{at.astimezone(UTC).isoformat()}/{summary or ''}"
    item = f"{uid}/{occurrence}" if occurrence else uid
    if item in seen:
        return Skipped(label, "the same event is in the export again", entry.path, duplicate=True)
    seen.add(item)
    series, repeats = (None, []) if overrides is None else _series(event, overrides, start, end, info)
    details = [("When", _when(start, end, info.zone)), *repeats, *_about(event, info)]
    if occurrence:
        details.append(("Repeats", "this is one occurrence of a recurring event"))
    description = str(event.get("DESCRIPTION") or "").strip()
    if _HTML.search(description):
        description = html_to_markdown(description)
    categories: list[str] = []
    for cat in _people(event, "CATEGORIES"):
        categories.extend(str(c) for c in getattr(cat, "cats", [cat]))
    front = [("recurrence", json.dumps(to_json(series)))] if series is not None else []
    return render.note(NAME, item, origin=entry.path, title=summary, body=description, created=at,
                       tags=["calendar", *categories], details=details, label=label, front=front, uid=uid,
                       occurrence=occurrence, series="yes" if series is not None else None)


def _end_of(event: Any, start: date | datetime) -> date | datetime | None:
    if event.get("DTEND") is not None:
        end: date | datetime = event.decoded("DTEND")
        return end
    if event.get("DURATION") is not None:
        return start + event.decoded("DURATION")
    return None


def _about(event: Any, info: _Calendar) -> list[tuple[str, str]]:
    """Where, who and the rest, as detail lines."""
    organizer = _people(event, "ORGANIZER")
    attendees = [_person(a) for a in _people(event, "ATTENDEE")]
    organizer_name = _person(organizer[0]) if organizer else ""
    others = [a for a in attendees if a != organizer_name]
    status = str(event.get("STATUS") or "").upper()
    return [("Where", " ".join(str(event.get("LOCATION") or "").split())), ("Organizer", organizer_name),
            ("Attendees", ", ".join(others)), ("Link", str(event.get("URL") or "")),
            ("Status", status.lower() if status in ("TENTATIVE",) else ""), ("Calendar", info.name or "")]


def _series(event: Any, overrides: list[Any], start: date | datetime, end: date | datetime | None,
            info: _Calendar) -> tuple[Recurrence | None, list[tuple[str, str]]]:
    """The event's series (its rule, extra and left-out dates, the occurrences it moves or cancels) and the lines
    that say so; (None, a line saying why) when the rule is not one this keeps: the event stays, at its first
    date."""
    all_day = not isinstance(start, datetime)
    zone = _zone_of(start, info)
    tz = ZoneInfo(zone)
    first = _aware(start, tz)
    length = (_aware(end, tz) - first) if end is not None else (timedelta(days=1) if all_day else timedelta(0))
    moved, cancelled, lines = [], [], []
    for o in overrides:
        rid = _aware(o.decoded("RECURRENCE-ID"), tz)
        if str(o.get("STATUS") or "").upper() == "CANCELLED":
            cancelled.append(rid)
            continue
        o_start = o.decoded("DTSTART") if o.get("DTSTART") is not None else rid
        o_end = _end_of(o, o_start)
        moved.append(Moved(original=rid, start=_aware(o_start, tz), end=_aware(o_end, tz) if o_end else None))
        lines.append(_moved_line(o, rid, o_start, o_end, info, event.get("SUMMARY")))
    try:
        rec = recurrence.series(first, zone=zone, duration=length, all_day=all_day,
                                rules=[r.to_ical().decode() for r in _listed(event, "RRULE")],
                                dates=[_aware(d, tz) for d in _dates(event, "RDATE")],
                                exceptions=[*(_aware(d, tz) for d in _dates(event, "EXDATE")), *cancelled],
                                moved=moved)
    except recurrence.RuleError as exc:
        return None, [("Repeats", f"kept at its first date only: {exc}")]
    out = [("Repeats", recurrence.describe(rec))]
    if rec.exceptions:
        shown = [_short(d, tz, all_day) for d in rec.exceptions[:SHOWN_DATES]]
        more = f" and {len(rec.exceptions) - SHOWN_DATES} more" if len(rec.exceptions) > SHOWN_DATES else ""
        out.append(("Not on", ", ".join(shown) + more))
    out += [("Moved", line) for line in lines[:SHOWN_DATES]]
    return rec, out


def _zone_of(start: date | datetime, info: _Calendar) -> str:
    """The IANA zone a series repeats in: its start's own zone, else the calendar's.  A series written in UTC in a
    calendar that names its zone repeats on that zone's clock (as Google and the X-WR-TIMEZONE convention read
    it: the weekly 18:00 stays at 18:00 when the clocks change)."""
    if isinstance(start, datetime) and start.tzinfo is not None:
        utc = start.utcoffset() == timedelta(0) and str(tzid_from_dt(start) or "UTC").upper() in ("UTC", "Z", "GMT")
        if utc:
            key = getattr(info.zone, "key", None)
            return str(key) if info.stated and key and _known_zone(str(key)) else "UTC"
        for name in (getattr(start.tzinfo, "key", None), tzid_from_dt(start)):
            if name and _known_zone(str(name)):
                return str(name)
    key = getattr(info.zone, "key", None)
    return str(key) if key and _known_zone(str(key)) else "UTC"


def _known_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _listed(event: Any, key: str) -> list[Any]:
    value = event.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _dates(event: Any, key: str) -> list[date | datetime]:
    """RDATE or EXDATE values (a PERIOD's start)."""
    out: list[date | datetime] = []
    for group in _listed(event, key):
        for d in getattr(group, "dts", [group]):
            value = getattr(d, "dt", d)
            out.append(value[0] if isinstance(value, tuple) else value)
    return out


def _moved_line(o: Any, rid: datetime, start: date | datetime, end: date | datetime | None, info: _Calendar,
                master_summary: object) -> str:
    """"Tuesday 17 March 2026, 18:00 to Wednesday 18 March 2026, 19:00-19:45, at Camden Physio Hub: why"."""
    text = f"{_short(rid, info.zone, not isinstance(start, datetime))} to {_when(start, end, info.zone)}"
    where = " ".join(str(o.get("LOCATION") or "").split())
    if where:
        text += f", at {where}"
    summary = str(o.get("SUMMARY") or "").strip()
    if summary and summary != str(master_summary or "").strip():
        text += f" ({summary})"
    note = str(o.get("DESCRIPTION") or "").strip()
    if _HTML.search(note):
        note = html_to_markdown(note)
    return text + (f": {' '.join(note.split())}" if note else "")


def _short(moment: datetime, zone: tzinfo, all_day: bool) -> str:
    local = moment.astimezone(zone)
    return f"{local:%A} {local.day} {local:%B %Y}" + ("" if all_day else f", {local:%H:%M}")


FORMAT = Format(NAME, "Calendar (iCalendar .ics)",
                "an .ics file or Google Calendar's export zip (Settings > Import & export > Export)",
                detect, count, read, aliases=("ical", "icalendar", "calendar", "google-calendar"))
