"""Reminders of agenda lines in the ``reminders`` table (migration 0019): one role."""

from __future__ import annotations

import secrets
from datetime import datetime

from secondbrain.ports import Reminder
from secondbrain.stores.postgres.base import PgRole

_COLUMNS = "reminder_id, user_id, event_id, title, kind, starts_at, remind_at, timezone, created_at, sent_at"


class PostgresReminders(PgRole):
    """One reminder per user and agenda line; the user's erasure removes them (the foreign key cascades)."""

    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        with self._tx() as conn:
            row = conn.execute(
                f"INSERT INTO reminders (reminder_id, user_id, event_id, title, kind, starts_at, remind_at, timezone) "
                f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (user_id, event_id) DO UPDATE SET "
                f"title = excluded.title, kind = excluded.kind, starts_at = excluded.starts_at, "
                f"remind_at = excluded.remind_at, timezone = excluded.timezone, sent_at = NULL "
                f"RETURNING {_COLUMNS}",
                (secrets.token_hex(8), user_id, event_id, title, kind, starts_at, remind_at, timezone)).fetchone()
        assert row is not None
        return Reminder(*row)

    def listed(self, user_id: str) -> list[Reminder]:
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM reminders WHERE user_id = %s ORDER BY remind_at, reminder_id",
                                (user_id,)).fetchall()
        return [Reminder(*r) for r in rows]

    def delete(self, user_id: str, reminder_id: str) -> bool:
        with self._pool.connection() as conn:
            row = conn.execute("DELETE FROM reminders WHERE reminder_id = %s AND user_id = %s RETURNING reminder_id",
                               (reminder_id, user_id)).fetchone()
        return row is not None

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM reminders WHERE sent_at IS NULL AND remind_at <= %s "
                                "ORDER BY remind_at, reminder_id LIMIT %s", (now, limit)).fetchall()
        return [Reminder(*r) for r in rows]

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        with self._pool.connection() as conn:
            conn.execute("UPDATE reminders SET sent_at = %s WHERE reminder_id = %s", (at, reminder_id))
