"""A calendar invitation in a mail message (an ``.ics`` attachment, ``text/calendar``; also inside a message
forwarded as an attachment) as the calendar import makes its events: each event a record dated by its own
start, with its title, when and where (:mod:`services.importers.ics`), so it lands on the agenda at its time and
is the same source as the same event in an imported calendar (``import:ics:<UID>``).

An update of the invitation (the same UID, a new time) is a new version of that source: the agenda shows the new
time.  A cancellation (``METHOD:CANCEL`` or ``STATUS:CANCELLED``), which a calendar import leaves out, is
recorded over it as "Cancelled: <title>", so the event leaves the agenda.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import cast

from services.importers import ics, render
from services.importers.archive import Export
from services.importers.model import Capture, ExportError, Options, Result, Skipped

_CALENDAR_TYPES = ("text/calendar", "application/ics", "application/x-ics")
_CANCELLED = re.compile(rb"^(?:METHOD:CANCEL|STATUS:CANCELLED)\s*$", re.M | re.I)


def is_calendar(part: EmailMessage, filename: str) -> bool:
    """Whether an attachment is a calendar: its type, its name, or its first bytes."""
    if part.get_content_type() in _CALENDAR_TYPES or filename.lower().endswith((".ics", ".ical", ".vcs")):
        return True
    try:
        head = part.get_payload(decode=True) or b""
    except (ValueError, TypeError, LookupError):
        return False
    return isinstance(head, bytes) and head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(
        b"BEGIN:VCALENDAR")


def inside(message: EmailMessage) -> Iterator[EmailMessage]:
    """The calendar parts of a message forwarded as an attachment (``message/rfc822``), however deep."""
    for part in message.walk():
        if part.get_content_type() == "message/rfc822":
            for inner in part.iter_parts():
                yield from _calendar_parts(cast(EmailMessage, inner))


def _calendar_parts(message: EmailMessage) -> Iterator[EmailMessage]:
    for part in message.walk():
        part = cast(EmailMessage, part)
        if not part.is_multipart() and is_calendar(part, part.get_filename() or ""):
            yield part


def events(data: bytes, *, origin: str, received: datetime | None) -> list[Result]:
    """The events of an invitation's calendar file as records (a cancelled one as its cancellation)."""
    options = Options(tz=UTC, now=received)
    try:
        with Export.from_file("invitation.ics", io.BytesIO(data)) as export:
            results = list(ics.read(export, options))
            if not _CANCELLED.search(data):
                return results
            # Read again as confirmed, to record each cancelled event over the record of its invitation.
            confirmed = _CANCELLED.sub(b"", data)
        with Export.from_file("invitation.ics", io.BytesIO(confirmed)) as export:
            return [_cancelled(r, origin) if isinstance(r, Capture) else r for r in ics.read(export, options)]
    except ExportError as exc:
        return [Skipped("a calendar invitation", str(exc), origin)]


def _cancelled(capture: Capture, origin: str) -> Capture:
    """The record of a cancelled event: its invitation's, titled "Cancelled: ..." and saying so."""
    title = f"Cancelled: {capture.title or 'an event'}"[:300]
    text = capture.content.decode("utf-8") if isinstance(capture.content, bytes) else ""
    when = re.search(r"^When: .*$", text, re.M)
    body = f"This event was cancelled.\n\n{when.group(0) if when else ''}\nStatus: cancelled"
    item = capture.source_uri.removeprefix("import:ics:")
    return render.note(ics.NAME, item, origin=origin, title=title, body=f"# {title}\n\n{body}",
                       created=capture.captured_at, tags=["calendar", "cancelled"],
                       label=f"{capture.label} (cancelled)")
