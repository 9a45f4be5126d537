"""Calendars in iCalendar (RFC 5545, ``.ics``): Google Calendar's export (Settings > Import & export > Export: a
zip with one ``.ics`` per calendar), Apple Calendar (File > Export), Outlook (Save calendar), Proton, Fastmail,
Thunderbird, a subscribed feed saved to a file.

Every event becomes a record dated by its own start: a time with a zone (``TZID``, or UTC) is that instant; an
all-day event and a floating time (no zone) are read in the calendar's zone (``X-WR-TIMEZONE``, which Google and
Apple write) or else the import's.  A recurring event becomes one record per occurrence from
:data:`YEARS_BACK` years before the import to :data:`YEARS_AHEAD` ahead (an endless weekly meeting would
otherwise never end): a moved occurrence (``RECURRENCE-ID``) is taken as moved, and an ``EXDATE`` or an
occurrence marked ``STATUS:CANCELLED`` leaves it out.  A one-off event is imported whenever it was.  The record
holds the title (``SUMMARY``), when and where, the organizer and the attendees by name, the description (Google
writes it as HTML) and the categories as tags; its provenance is the file, the ``UID`` and the occurrence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
import recurring_ical_events

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.html_markdown import html_to_markdown
from services.importers.model import Capture, ExportError, Options, Result, Skipped, failure, guarded

NAME = "ics"
YEARS_BACK = 2
YEARS_AHEAD = 1
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
    info = _Calendar(str(cal.get("X-WR-CALNAME") or "").strip() or None, _zone(cal, options))
    events = list(cal.walk("VEVENT"))
    # A UID with a rule, extra dates or a changed occurrence is a series: its occurrences come from the rule,
    # within the window; any other event is taken as it is, however long ago it was.
    series = {str(e.get("UID")) for e in events
              if e.get("RRULE") is not None or e.get("RDATE") is not None or e.get("RECURRENCE-ID") is not None}
    for event in events:
        if str(event.get("UID")) not in series:
            yield _guard(event, entry, info, seen, recurring=False)
    if not series:
        return
    now = (options.now or datetime.now(UTC)).astimezone(info.zone)
    start, end = _years(now, -YEARS_BACK), _years(now, YEARS_AHEAD)
    query = recurring_ical_events.of(cal, skip_bad_series=True)
    for occurrence in query.between(start, end):
        if str(occurrence.get("UID")) in series:
            yield _guard(occurrence, entry, info, seen, recurring=True)


def _years(when: datetime, years: int) -> datetime:
    """The same moment ``years`` later (29 February: the 28th)."""
    try:
        return when.replace(year=when.year + years)
    except ValueError:
        return when.replace(year=when.year + years, day=28)


def _guard(event: Any, entry: Entry, info: _Calendar, seen: set[str], *, recurring: bool) -> Result:
    label = str(event.get("SUMMARY") or "an event without a title")
    try:
        return _event(event, entry, info, seen, recurring=recurring)
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


def _event(event: Any, entry: Entry, info: _Calendar, seen: set[str], *, recurring: bool) -> Result:
    summary = str(event.get("SUMMARY") or "").strip() or None
    uid = str(event.get("UID") or "").strip()
    if event.get("DTSTART") is None:
        return Skipped(summary or uid or "an event", "the event has no start time", entry.path)
    start = event.decoded("DTSTART")
    end = event.decoded("DTEND") if event.get("DTEND") is not None else None
    if end is None and event.get("DURATION") is not None:
        end = start + event.decoded("DURATION")
    at = _aware(start, info.zone)
    local = at.astimezone(info.zone)
    label = f"{summary or 'Untitled event'}, {local:%a} {local.day} {local:%b %Y}" + (
        f" {local:%H:%M}" if isinstance(start, datetime) else "")
    status = str(event.get("STATUS") or "").upper()
    if status == "CANCELLED":
        return Skipped(label, "cancelled in the calendar", entry.path)
    occurrence = None
    if recurring:
        rid = event.decoded("RECURRENCE-ID") if event.get("RECURRENCE-ID") is not None else start
        occurrence = _aware(rid, info.zone).astimezone(UTC).isoformat() if isinstance(rid, datetime) \
            else rid.isoformat()
    if not uid:  # RFC 5545 requires one; an event without it is named by its start and title
        uid = f"{at.astimezone(UTC).isoformat()}/{summary or ''}"
    item = f"{uid}/{occurrence}" if occurrence else uid
    if item in seen:
        return Skipped(label, "the same event is in the export again", entry.path, duplicate=True)
    seen.add(item)
    organizer = _people(event, "ORGANIZER")
    attendees = [_person(a) for a in _people(event, "ATTENDEE")]
    organizer_name = _person(organizer[0]) if organizer else ""
    others = [a for a in attendees if a != organizer_name]
    description = str(event.get("DESCRIPTION") or "").strip()
    if _HTML.search(description):
        description = html_to_markdown(description)
    location = " ".join(str(event.get("LOCATION") or "").split())
    categories: list[str] = []
    for cat in _people(event, "CATEGORIES"):
        categories.extend(str(c) for c in getattr(cat, "cats", [cat]))
    details = [("When", _when(start, end, info.zone)), ("Where", location), ("Organizer", organizer_name),
               ("Attendees", ", ".join(others)), ("Link", str(event.get("URL") or "")),
               ("Status", status.lower() if status in ("TENTATIVE",) else ""), ("Calendar", info.name or "")]
    if recurring:
        details.append(("Repeats", "this is one occurrence of a recurring event"))
    return _note(item, entry, summary, description, at, categories, details, label, uid, occurrence)


def _note(item: str, entry: Entry, title: str | None, body: str, at: datetime, categories: list[str],
          details: list[tuple[str, str]], label: str, uid: str, occurrence: str | None) -> Capture:
    return render.note(NAME, item, origin=entry.path, title=title, body=body, created=at,
                       tags=["calendar", *categories], details=details, label=label, uid=uid,
                       occurrence=occurrence)


FORMAT = Format(NAME, "Calendar (iCalendar .ics)",
                "an .ics file or Google Calendar's export zip (Settings > Import & export > Export)",
                detect, count, read, aliases=("ical", "icalendar", "calendar", "google-calendar"))
