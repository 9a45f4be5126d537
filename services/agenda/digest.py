"""The week's digest: what was saved, by kind, and what is coming; and mailing it once a week when asked
(``SB_DIGEST_DAY`` and ``SB_DIGEST_TIME``, through the SMTP server of the reminders)."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from secondbrain.settings import Settings
from secondbrain.temporal import Conventions
from services.agenda.agenda import days_json
from services.agenda.reminders import mail_configured, smtp_connection
from services.agenda.service import Agenda, Window, day_bounds

log = logging.getLogger(__name__)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SENT_FILE = "digest-sent"  # in the data dir: the local date of the last digest mailed (once a day at most)


def week_digest(agenda: Agenda, user: str, at: datetime, z: ZoneInfo, cal: Conventions,
                days: int = 7) -> dict[str, Any]:
    """What ``user`` saved in the ``days`` before ``at``, by kind, and their agenda for the ``days`` after."""
    since = at - timedelta(days=days)
    saved = agenda.saved_between(user, since, at, field="ingested_at", limit=1000)
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in saved:
        kinds[item["modality"]].append(item)
    today = day_bounds(at.astimezone(z).date(), z)[0]
    coming = agenda.events(user, Window(today, today + timedelta(days=days + 1), z, cal))
    return {"from": since.isoformat(), "to": at.isoformat(), "timezone": str(z),
            "saved": {"total": len(saved), "kinds": [{"modality": k, "count": len(v), "items": v[:20]}
                                                      for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1]))]},
            "coming": {"from": today.isoformat(), "to": (today + timedelta(days=days + 1)).isoformat(),
                       "total": len(coming), "days": days_json(coming, z, cal.date_order)}}


def digest_mail(d: dict[str, Any], settings: Settings, on: date) -> EmailMessage:
    """The digest as a plain-text e-mail: the coming days' lines, then what was saved, by kind."""
    out = ["Coming up:"]
    for day in d["coming"]["days"]:
        out.append(f"  {day['label']}")
        out += [f"    {e.get('time') or 'all day'}  {e.get('title') or e['quote']}" for e in day["events"]]
    if not d["coming"]["days"]:
        out.append("  nothing on your agenda")
    out += ["", f"Saved this week: {d['saved']['total']}"]
    for kind in d["saved"]["kinds"]:
        out.append(f"  {kind['modality']}: {kind['count']}")
        out += [f"    {item.get('title') or item.get('source_uri', '')}" for item in kind["items"][:5]]
    msg = EmailMessage()
    msg["Subject"] = f"Your week, {on.day} {on:%b}: {d['coming']['total']} coming, {d['saved']['total']} saved"
    msg["From"] = settings.smtp_from or settings.smtp_to
    msg["To"] = settings.smtp_to
    msg.set_content("\n".join(out) + "\n")
    return msg


def digest_due(settings: Settings, now: datetime, last_sent: date | None) -> bool:
    """Whether the weekly digest is to go at ``now``: its day, at or after its time, not sent yet that day."""
    if not settings.digest_day or not mail_configured(settings):
        return False
    local = now.astimezone(ZoneInfo(settings.timezone))
    hour, minute = (int(x) for x in settings.digest_time.split(":"))
    return (WEEKDAYS[local.weekday()] == settings.digest_day and local.time() >= time(hour, minute)
            and last_sent != local.date())


def send_digest_if_due(agenda: Agenda, settings: Settings, now: datetime, cal: Conventions) -> bool:
    """Mail the default user's weekly digest to ``SB_SMTP_TO`` when it is due (see :func:`digest_due`); the day it
    went is kept in the data dir, so a restart the same day does not send it twice."""
    marker = Path(settings.data_dir) / SENT_FILE
    try:
        last = date.fromisoformat(marker.read_text().strip())
    except (OSError, ValueError):
        last = None
    if not digest_due(settings, now, last):
        return False
    z = ZoneInfo(settings.timezone)
    local = now.astimezone(z)
    d = week_digest(agenda, settings.default_user, local, z, cal)
    with smtp_connection(settings) as server:
        server.send_message(digest_mail(d, settings, local.date()))
    marker.write_text(local.date().isoformat() + "\n")
    log.info("weekly digest mailed", extra={"coming": d["coming"]["total"], "saved": d["saved"]["total"]})
    return True
