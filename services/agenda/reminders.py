"""Reminders of agenda lines: "remind me" on a line keeps what it is about and when to remind, and `up` sends each
one when it is due, by e-mail through the SMTP server the person configures (``SB_SMTP_*``).

A reminder is kept per user and agenda line (the line's stable id): asking again for the same line moves it.  The
time before the event defaults by the line's kind (:data:`DEFAULT_MINUTES`).  Postgres in every deployment; the
in-memory twin is for an app built on the in-memory metadata store.
"""

from __future__ import annotations

import secrets
import smtplib
import ssl
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from secondbrain.settings import Settings

# Minutes before the start of the event a reminder goes, by the agenda line's kind.  A day-long line (a deadline, a
# payment, a birthday) starts at midnight: 900 minutes before is 09:00 the day before.
DEFAULT_MINUTES = {"appointment": 60, "event": 60, "plan": 60, "travel": 180, "habit": 15,
                   "deadline": 900, "payment": 900, "birthday": 900}
OTHER_KIND_MINUTES = 60


def default_minutes(kind: str) -> int:
    """How long before an event of ``kind`` its reminder goes unless asked otherwise."""
    return DEFAULT_MINUTES.get(kind, OTHER_KIND_MINUTES)


@dataclass(frozen=True, slots=True)
class Reminder:
    """A reminder as kept."""

    reminder_id: str
    user_id: str
    event_id: str
    title: str
    kind: str
    starts_at: datetime
    remind_at: datetime
    timezone: str
    created_at: datetime
    sent_at: datetime | None = None


def reminder_json(r: Reminder) -> dict[str, Any]:
    """A reminder as the API gives it, its times in its zone."""
    z = ZoneInfo(r.timezone)
    return {"reminder_id": r.reminder_id, "event_id": r.event_id, "title": r.title, "kind": r.kind,
            "starts_at": r.starts_at.astimezone(z).isoformat(), "remind_at": r.remind_at.astimezone(z).isoformat(),
            "minutes_before": round((r.starts_at - r.remind_at).total_seconds() / 60),
            "sent_at": r.sent_at.astimezone(z).isoformat() if r.sent_at else None}


class Reminders(Protocol):
    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        """Keep a reminder of one agenda line (the same line again: moved, and to be sent again)."""
        ...

    def listed(self, user_id: str) -> list[Reminder]:
        """The user's reminders, the next first."""
        ...

    def delete(self, user_id: str, reminder_id: str) -> bool:
        """Remove one of the user's reminders; ``False`` for another user's or an unknown one."""
        ...

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        """Reminders of every user due by ``now`` and not sent yet, the oldest first."""
        ...

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        """Note that a reminder went."""
        ...


_COLUMNS = "reminder_id, user_id, event_id, title, kind, starts_at, remind_at, timezone, created_at, sent_at"


class PostgresReminders:
    """Reminders in the ``reminders`` table (migration 0020)."""

    def __init__(self, database: Any) -> None:
        self.db = database

    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        with self.db._tx() as conn:
            row = conn.execute(
                f"INSERT INTO reminders (reminder_id, user_id, event_id, title, kind, starts_at, remind_at, timezone) "
                f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (user_id, event_id) DO UPDATE SET "
                f"title = excluded.title, kind = excluded.kind, starts_at = excluded.starts_at, "
                f"remind_at = excluded.remind_at, timezone = excluded.timezone, sent_at = NULL "
                f"RETURNING {_COLUMNS}",
                (secrets.token_hex(8), user_id, event_id, title, kind, starts_at, remind_at, timezone)).fetchone()
        return Reminder(*row)

    def listed(self, user_id: str) -> list[Reminder]:
        with self.db._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM reminders WHERE user_id = %s ORDER BY remind_at, reminder_id",
                                (user_id,)).fetchall()
        return [Reminder(*r) for r in rows]

    def delete(self, user_id: str, reminder_id: str) -> bool:
        with self.db._pool.connection() as conn:
            row = conn.execute("DELETE FROM reminders WHERE reminder_id = %s AND user_id = %s RETURNING reminder_id",
                               (reminder_id, user_id)).fetchone()
        return row is not None

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        with self.db._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM reminders WHERE sent_at IS NULL AND remind_at <= %s "
                                "ORDER BY remind_at, reminder_id LIMIT %s", (now, limit)).fetchall()
        return [Reminder(*r) for r in rows]

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        with self.db._pool.connection() as conn:
            conn.execute("UPDATE reminders SET sent_at = %s WHERE reminder_id = %s", (at, reminder_id))


class MemoryReminders:
    """The same in memory: on the in-memory metadata store's tables when given its database (so erasing the user
    removes their reminders, as Postgres's cascade does), else on a table of its own."""

    def __init__(self, database: Any = None) -> None:
        tables = getattr(database, "tables", None)
        self._rows: dict[str, Reminder] = tables.reminders if tables is not None else {}
        self._lock = getattr(database, "_lock", None) or threading.RLock()

    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        with self._lock:
            old = next((r for r in self._rows.values() if r.user_id == user_id and r.event_id == event_id), None)
            kept = replace(old, title=title, kind=kind, starts_at=starts_at, remind_at=remind_at, timezone=timezone,
                           sent_at=None) if old is not None else Reminder(
                secrets.token_hex(8), user_id, event_id, title, kind, starts_at, remind_at, timezone, datetime.now(UTC))
            self._rows[kept.reminder_id] = kept
            return kept

    def listed(self, user_id: str) -> list[Reminder]:
        with self._lock:
            return sorted((r for r in self._rows.values() if r.user_id == user_id),
                          key=lambda r: (r.remind_at, r.reminder_id))

    def delete(self, user_id: str, reminder_id: str) -> bool:
        with self._lock:
            found = self._rows.get(reminder_id)
            if found is None or found.user_id != user_id:
                return False
            del self._rows[reminder_id]
            return True

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        with self._lock:
            return sorted((r for r in self._rows.values() if r.sent_at is None and r.remind_at <= now),
                          key=lambda r: (r.remind_at, r.reminder_id))[:limit]

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        with self._lock:
            if reminder_id in self._rows:
                self._rows[reminder_id] = replace(self._rows[reminder_id], sent_at=at)


def reminders_for(database: Any) -> Reminders:
    """Postgres reminders on a Postgres database, else the in-memory twin."""
    return PostgresReminders(database) if hasattr(database, "_pool") else MemoryReminders(database)


# ---------------------------------------------------------------------------------------------- sending by e-mail


def mail_configured(settings: Settings) -> bool:
    """Whether reminders can go by e-mail: a server and someone to write to."""
    return bool(settings.smtp_host and settings.smtp_to)


def reminder_mail(r: Reminder, settings: Settings) -> EmailMessage:
    """The e-mail of one reminder: what, when, in the reminder's zone."""
    z = ZoneInfo(r.timezone)
    at = r.starts_at.astimezone(z)
    day_long = r.kind in ("deadline", "payment", "birthday")
    when = f"{at:%a} {at.day} {at:%b}" + ("" if day_long else f" at {at:%H:%M}")
    msg = EmailMessage()
    msg["Subject"] = f"Reminder: {r.title}, {when}"
    msg["From"] = settings.smtp_from or settings.smtp_to
    msg["To"] = settings.smtp_to
    msg.set_content(f"{r.title}\n{when} ({r.timezone})\n\nYou asked secondbrain to remind you of this line of your "
                    "agenda.\n")
    return msg


def send_due(store: Reminders, settings: Settings, now: datetime | None = None) -> int:
    """Send every reminder due by ``now`` (one SMTP connection) and note each as sent; how many went.  A reminder whose
    event is already over goes too (late, rather than never): `up` may have been stopped at its time."""
    due = store.due(now or datetime.now(UTC))
    if not due or not mail_configured(settings):
        return 0
    password = settings.smtp_password.get_secret_value() if settings.smtp_password is not None else ""
    if settings.smtp_security == "tls":
        server: smtplib.SMTP = smtplib.SMTP_SSL(settings.smtp_host, settings.smtp_port or 465, timeout=30,
                                                context=ssl.create_default_context())
    else:
        server = smtplib.SMTP(settings.smtp_host, settings.smtp_port or (587 if settings.smtp_security == "starttls"
                                                                         else 25), timeout=30)
    sent = 0
    with server:
        if settings.smtp_security == "starttls":
            server.starttls(context=ssl.create_default_context())
        if settings.smtp_user:
            server.login(settings.smtp_user, password)
        for r in due:
            server.send_message(reminder_mail(r, settings))
            store.mark_sent(r.reminder_id, datetime.now(UTC))
            sent += 1
    return sent
