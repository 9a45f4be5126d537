"""Refused and failed events, for their producers to read."""

from __future__ import annotations

from psycopg.rows import dict_row

from secondbrain.ports import DeadLetterRecord
from secondbrain.stores.postgres.base import PgRole

_COLUMNS = ("letter_id", "stage", "topic", "partition", "offset", "error_kind", "error_message", "event_id",
            "user_id", "key_id", "job_id", "producer")


class PostgresDeadLetters(PgRole):
    """Refused and failed events, for their producers to read."""

    def record_dead_letter(self, letter: DeadLetterRecord) -> bool:
        """Keep the letter; a letter already kept (a redelivered event) changes nothing.  ``False`` when
        the letter names an erased user: nothing is kept for them."""
        cols = ", ".join(f'"{c}"' for c in _COLUMNS)
        with self._pool.connection() as conn:
            row = conn.execute(
                f"WITH ins AS (INSERT INTO dead_letters ({cols}) SELECT {', '.join(['%s'] * len(_COLUMNS))} "
                "WHERE NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = %s "
                "AND NOT EXISTS (SELECT 1 FROM users u WHERE u.user_id = e.user_id)) "
                "ON CONFLICT (letter_id) DO NOTHING RETURNING 1) "
                "SELECT EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM dead_letters WHERE letter_id = %s)",
                [*(getattr(letter, c) for c in _COLUMNS), letter.user_id, letter.letter_id]).fetchone()
        return bool(row and row[0])

    def list_dead_letters(self, user_id: str | None, limit: int = 100) -> list[DeadLetterRecord]:
        """Newest first: the user's (the events naming them or signed with one of their keys), or all."""
        where = ""
        params: list[object] = [max(0, limit)]
        if user_id is not None:
            where = "WHERE d.user_id = %s OR d.key_id IN (SELECT key_id FROM api_keys WHERE user_id = %s)"
            params = [user_id, user_id, *params]
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(f"SELECT d.* FROM dead_letters d {where} ORDER BY d.id DESC LIMIT %s",
                               params).fetchall()
        return [DeadLetterRecord(**{c: r[c] for c in _COLUMNS}, failed_at=r["failed_at"]) for r in rows]
