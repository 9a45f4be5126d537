"""The agenda as an iCalendar feed (RFC 5545) any calendar app can subscribe to.

Each line is an event named as a calendar shows it ("Dentist, Dr. Osei"), with the sentence that says it in
its description.  A timed event is written in UTC (the app shows it in its own zone) and lasts as long as its
source says ("09:00 until 11:20"), else an hour; what is due on a day (a deadline, a payment, a birthday) and
an untimed item are all-day events.  A cancelled one keeps its UID with ``STATUS:CANCELLED`` so a subscribed
calendar takes it off; one that moved keeps its UID at the new time.

The description links to the source on the address the person reaches this server at (``SB_PUBLIC_URL``, else
the LAN address of ``up --lan``): a phone's calendar cannot open 127.0.0.1, so on loopback alone the event
says where the source is and carries no link.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from icalendar import Calendar
from icalendar import Event as VEvent

from secondbrain import __version__
from services.agenda.agenda import ALL_DAY_KINDS

SUMMARY_CHARS = 80


def calendar(lines: list[dict[str, Any]], *, name: str, base_url: str | None, now: datetime) -> bytes:
    """``lines`` (the agenda API's events) as an iCalendar file; ``base_url``: where links to sources point
    (``None``: no address a calendar app can open is known)."""
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


def summary(line: dict[str, Any]) -> str:
    """The event's name, short; a deadline's time said in it ("Expense report, by 17:00")."""
    title = line.get("title") or line["quote"]
    if len(title) > SUMMARY_CHARS:
        title = title[:SUMMARY_CHARS - 1].rstrip() + "\u2026"
    if _all_day(line) and line.get("time"):
        title += f", by {line['time']}" if line["kind"] == "deadline" else f", {line['time']}"
    return title


def _all_day(line: dict[str, Any]) -> bool:
    return bool(line["all_day"]) or line["kind"] in ALL_DAY_KINDS


def _event(line: dict[str, Any], base_url: str | None, now: datetime) -> VEvent:
    ev = VEvent()
    ev.add("uid", f"{line['id']}@secondbrain")
    ev.add("dtstamp", now.astimezone(UTC))
    start, end = datetime.fromisoformat(line["start"]), datetime.fromisoformat(line["end"])
    if _all_day(line):
        ev.add("dtstart", start.date())
        last = end.date() if line["all_day"] else start.date()  # the day after an all-day item's last
        ev.add("dtend", max(last, start.date() + timedelta(days=1)))
    else:
        ev.add("dtstart", start.astimezone(UTC))
        ev.add("dtend", (end if end > start else start + timedelta(hours=1)).astimezone(UTC))
    ev.add("summary", summary(line))
    source = line["source"]
    where = [source["title"] or "untitled"]
    if source.get("page") is not None:
        where.append(f"page {source['page']}")
    if source.get("position"):
        where.append(f"at {source['position']}")
    if source.get("section"):
        where.append(source["section"])
    text = [f"\u201c{line['quote']}\u201d", "", f"From: {', '.join(where)}"]
    if line.get("moved_from"):
        text.insert(1, f"(moved from {line['moved_from']['when']})")
    if line.get("recurs") and line["recurs"] not in ("yearly", "habit"):
        text.insert(1, f"(repeats {line['recurs']})")
    if base_url:
        link = base_url.rstrip("/") + source["link"]
        text.append(link)
        ev.add("url", link)
    else:
        text.append("Open it in secondbrain (set SB_PUBLIC_URL, or run `secondbrain up --lan`, for a link here).")
    ev.add("description", "\n".join(text))
    ev.add("categories", [line["kind"]])
    ev.add("status", "CANCELLED" if line["status"] == "cancelled" else "CONFIRMED")
    ev.add("transp", "TRANSPARENT" if _all_day(line) else "OPAQUE")
    return ev
