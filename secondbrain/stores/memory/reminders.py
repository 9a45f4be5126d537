"""Reminders of agenda lines (in memory): one role, on the shared tables (so erasing the user removes their
reminders, as Postgres's cascade does)."""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import datetime

from secondbrain.ports import Reminder
from secondbrain.stores.memory.base import IntegrityError, MemoryRole


class MemoryReminders(MemoryRole):
    """One reminder per user and agenda line."""

    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        with self._tx() as now:
            if user_id not in self._t.users:
                raise IntegrityError(f"unknown user {user_id!r}")
            rows = self._t.reminders
            old = next((r for r in rows.values() if r.user_id == user_id and r.event_id == event_id), None)
            kept = replace(old, title=title, kind=kind, starts_at=starts_at, remind_at=remind_at, timezone=timezone,
                           sent_at=None) if old is not None else Reminder(
                secrets.token_hex(8), user_id, event_id, title, kind, starts_at, remind_at, timezone, now)
            rows[kept.reminder_id] = kept
            return kept

    def listed(self, user_id: str) -> list[Reminder]:
        with self._tx():
            return sorted((r for r in self._t.reminders.values() if r.user_id == user_id),
                          key=lambda r: (r.remind_at, r.reminder_id))

    def delete(self, user_id: str, reminder_id: str) -> bool:
        with self._tx():
            found = self._t.reminders.get(reminder_id)
            if found is None or found.user_id != user_id:
                return False
            del self._t.reminders[reminder_id]
            return True

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        with self._tx():
            return sorted((r for r in self._t.reminders.values() if r.sent_at is None and r.remind_at <= now),
                          key=lambda r: (r.remind_at, r.reminder_id))[:limit]

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        with self._tx():
            if reminder_id in self._t.reminders:
                self._t.reminders[reminder_id] = replace(self._t.reminders[reminder_id], sent_at=at)
