"""A calendar feed served over HTTP on loopback (a thread of ``http.server``), as Google or iCloud serve one:
an ETag and Last-Modified with each calendar, 304 when the client already has it.  The test changes what it
serves, or makes it fail."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import format_datetime

from devtools.loopback import LoopbackSite, QuietHandler


@dataclass(frozen=True)
class Event:
    uid: str
    summary: str
    start: datetime | date  # aware, or a day
    description: str = ""
    weekly: int = 0  # this many weekly occurrences
    exdates: tuple[datetime, ...] = ()
    status: str = ""


def ics(events: list[Event], name: str = "Sam") -> bytes:
    def stamp(d: datetime | date) -> str:
        if isinstance(d, datetime):
            return "DTSTART:" + d.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return f"DTSTART;VALUE=DATE:{d:%Y%m%d}"

    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//secondbrain tests//EN", f"X-WR-CALNAME:{name}",
             "X-WR-TIMEZONE:Europe/London"]
    for e in events:
        lines += ["BEGIN:VEVENT", f"UID:{e.uid}", "DTSTAMP:20240101T000000Z", stamp(e.start),
                  f"SUMMARY:{e.summary}"]
        if e.description:
            lines.append(f"DESCRIPTION:{e.description}")
        if e.weekly:
            lines.append(f"RRULE:FREQ=WEEKLY;COUNT={e.weekly}")
        for x in e.exdates:
            lines.append("EXDATE:" + x.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ"))
        if e.status:
            lines.append(f"STATUS:{e.status}")
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return ("\r\n".join(lines) + "\r\n").encode()


class Feed:
    """What the server serves at ``path``; ``status`` other than 200 makes it fail; ``requests`` counts
    the GETs and ``not_modified`` the 304s."""

    def __init__(self, path: str = "/calendar/ical/secret-8c1f/basic.ics") -> None:
        # fixed date: the feed's Last-Modified stamp; nothing reads it against today
        self.path = path
        self.body = b""
        self.status = 200
        self.modified = datetime(2024, 1, 1, tzinfo=UTC)
        self.requests = 0
        self.not_modified = 0
        self.url = ""
        self.redirect: str | None = None  # every answer sends the request on there instead

    def serve(self, body: bytes) -> None:
        self.body, self.status = body, 200
        self.modified = datetime.now(UTC).replace(microsecond=0)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


@contextmanager
def serving(feed: Feed) -> Iterator[Feed]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            feed.requests += 1
            if feed.redirect is not None:
                self.reply(302, "text/plain", b"", {"Location": feed.redirect})
                return
            if self.path != feed.path or feed.status == 404:
                self.send_error(404)
                return
            if feed.status != 200:
                self.send_error(feed.status)
                return
            if self.headers.get("If-None-Match") == feed.etag:
                feed.not_modified += 1
                self.send_response(304)
                self.end_headers()
                return
            self.reply(200, "text/calendar; charset=utf-8", feed.body,
                       {"ETag": feed.etag, "Last-Modified": format_datetime(feed.modified, usegmt=True)})

    site = LoopbackSite(Handler)
    feed.url = f"{site.base}{feed.path}"
    try:
        yield feed
    finally:
        site.close()
