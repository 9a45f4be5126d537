"""Conversations and their turns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from secondbrain.ports import ConversationInfo, ForeignConversation, Turn
from secondbrain.stores.postgres.base import PgRole


class PostgresConversations(PgRole):
    """Conversations and their turns."""

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn, creating the conversation on first use (another user's id is refused)."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO conversations (conversation_id, user_id) VALUES (%s, %s) "
                "ON CONFLICT (conversation_id) DO NOTHING", (conversation_id, user_id))
            owner = conn.execute("SELECT user_id FROM conversations WHERE conversation_id = %s FOR UPDATE",
                                 (conversation_id,)).fetchone()
            if owner is None or owner[0] != user_id:
                raise ForeignConversation("this conversation id belongs to someone else; start a new one")
            conn.execute("INSERT INTO conversation_turns (conversation_id, role, content, meta) "
                         "VALUES (%s, %s, %s, %s)", (conversation_id, role, content, Jsonb(dict(meta or {}))))
            conn.execute("UPDATE conversations SET updated_at = now() WHERE conversation_id = %s",
                         (conversation_id,))

    def get_turns(self, user_id: str, conversation_id: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns of the user's conversation, oldest first."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                """
                SELECT * FROM (
                    SELECT t.id, t.role, t.content, t.meta, t.created_at FROM conversation_turns t
                    JOIN conversations c ON c.conversation_id = t.conversation_id
                    WHERE t.conversation_id = %s AND c.user_id = %s
                    ORDER BY t.id DESC LIMIT %s
                ) last ORDER BY id
                """,
                (conversation_id, user_id, max(0, limit)),
            ).fetchall()
        return [Turn(role=r["role"], content=r["content"], created_at=r["created_at"], meta=dict(r["meta"] or {}))
                for r in rows]

    def list_conversations(self, user_id: str) -> list[ConversationInfo]:
        """The user's conversations with their number of turns, oldest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT c.conversation_id, c.created_at, c.updated_at, count(t.id) FROM conversations c "
                "LEFT JOIN conversation_turns t ON t.conversation_id = c.conversation_id WHERE c.user_id = %s "
                "GROUP BY c.conversation_id ORDER BY c.created_at, c.conversation_id", (user_id,)).fetchall()
        return [ConversationInfo(conversation_id=r[0], created_at=r[1], updated_at=r[2], turns=int(r[3])) for r in rows]
