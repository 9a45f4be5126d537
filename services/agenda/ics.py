"""The agenda as an iCalendar feed (RFC 5545) any calendar app can subscribe to.

A timed event is written in UTC (the app shows it in its own zone), an all-day one as dates; a cancelled
one keeps its UID with ``STATUS:CANCELLED`` so a subscribed calendar takes it off; one that moved keeps its
UID at the new time.  The description quotes the sentence that says it and links to the source.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from icalendar import Calendar
from icalendar import Event as VEvent

from secondbrain import __version__

SUMMARY_CHARS = 80


def calendar(lines: list[dict[str, Any]], *, name: str, base_url: str, now: datetime) -> bytes:
    """``lines`` (the agenda API's events) as an iCalendar file."""
    cal = Calendar()
    cal.add("prodid", f"-//secondbrain//agenda {__version__}//EN")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", name)
    cal.add("refresh-interval", timedelta(hours=1), parameters={"VALUE": "DURATION"})
    cal.add("x-published-ttl", "PT1H")
    for line in lines:
        cal.add_component(_event(line, base_url, now))
    return cal.to_ical()


def _event(line: dict[str, Any], base_url: str, now: datetime) -> VEvent:
    ev = VEvent()
    ev.add("uid", f"{line['id']}@secondbrain")
    ev.add("dtstamp", now.astimezone(UTC))
    start, end = datetime.fromisoformat(line["start"]), datetime.fromisoformat(line["end"])
    if line["all_day"]:
        ev.add("dtstart", start.date())
        ev.add("dtend", max(end.date(), start.date() + timedelta(days=1)))
    else:
        ev.add("dtstart", start.astimezone(UTC))
        ev.add("dtend", (end if end > start else start + timedelta(minutes=30)).astimezone(UTC))
    quote = line["quote"]
    ev.add("summary", quote if len(quote) <= SUMMARY_CHARS else quote[:SUMMARY_CHARS - 1].rstrip() + "\u2026")
    source = line["source"]
    link = base_url.rstrip("/") + source["link"]
    where = [source["title"] or "untitled"]
    if source.get("page") is not None:
        where.append(f"page {source['page']}")
    if source.get("position"):
        where.append(f"at {source['position']}")
    if source.get("section"):
        where.append(source["section"])
    text = [f"\u201c{quote}\u201d", "", f"From: {', '.join(where)}", link]
    if line.get("moved_from"):
        text.insert(1, f"(moved from {line['moved_from']['when']})")
    ev.add("description", "\n".join(text))
    ev.add("url", link)
    ev.add("categories", [line["kind"]])
    ev.add("status", "CANCELLED" if line["status"] == "cancelled" else "CONFIRMED")
    ev.add("transp", "TRANSPARENT" if line["all_day"] else "OPAQUE")
    return ev
