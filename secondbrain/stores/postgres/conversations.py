"""Conversations and their turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from secondbrain.ports import (
    DELETED_ANSWER,
    DELETED_SOURCE_TITLE,
    ConversationInfo,
    ForeignConversation,
    Turn,
    cited_source_ids,
)
from secondbrain.stores.postgres.base import PgRole


def redact_answers(conn: psycopg.Connection[Any], user_id: str, source_id: str) -> None:
    """Answers that quoted the source lose their text (the turn stays and says why); the source's entry
    in what was shown with them keeps only its number."""
    conn.execute(
        """
        UPDATE conversation_turns t SET content = %(notice)s,
            meta = (t.meta - 'extractive' - 'standalone' - 'answer_markdown' - 'quotes') || jsonb_build_object(
                'source_deleted', true,
                'sources', (SELECT coalesce(jsonb_agg(CASE WHEN x.s->>'source_id' = %(source)s::text
                                                           THEN jsonb_build_object('n', x.s->'n', 'deleted', true,
                                                                                   'title', %(gone)s::text)
                                                           ELSE x.s END ORDER BY x.ord), '[]'::jsonb)
                            FROM jsonb_array_elements(t.meta->'sources') WITH ORDINALITY AS x(s, ord)))
        FROM conversations c
        WHERE c.conversation_id = t.conversation_id AND c.user_id = %(user)s AND t.role = 'assistant'
          AND jsonb_typeof(t.meta->'sources') = 'array'
          AND t.meta->'sources' @> jsonb_build_array(jsonb_build_object('source_id', %(source)s::text))
        """, {"user": user_id, "source": source_id, "notice": DELETED_ANSWER, "gone": DELETED_SOURCE_TITLE})


class PostgresConversations(PgRole):
    """Conversations and their turns."""

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn, creating the conversation on first use (another user's id is refused)."""
        cited = cited_source_ids(meta) if role == "assistant" else []
        with self._tx() as conn:
            # The sources' locks (a deletion's) before any row lock: a deletion waiting for an erasure that
            # waits for this conversation would otherwise close a circle.  Taken in order, each once.
            for source_id in cited:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (user_id, source_id))
            conn.execute(
                "INSERT INTO conversations (conversation_id, user_id) VALUES (%s, %s) "
                "ON CONFLICT (conversation_id) DO NOTHING", (conversation_id, user_id))
            owner = conn.execute("SELECT user_id FROM conversations WHERE conversation_id = %s FOR UPDATE",
                                 (conversation_id,)).fetchone()
            if owner is None or owner[0] != user_id:
                raise ForeignConversation("this conversation id belongs to someone else; start a new one")
            conn.execute("INSERT INTO conversation_turns (conversation_id, role, content, meta) "
                         "VALUES (%s, %s, %s, %s)", (conversation_id, role, content, Jsonb(dict(meta or {}))))
            if cited:
                self._redact_deleted(conn, user_id, cited)
            conn.execute("UPDATE conversations SET updated_at = now() WHERE conversation_id = %s",
                         (conversation_id,))

    @staticmethod
    def _redact_deleted(conn: psycopg.Connection[Any], user_id: str, sources: list[str]) -> None:
        """An answer written while a source it quotes was being deleted is stored as the deletion leaves
        such answers.  With each source's lock held (the deletion's), a deletion either committed before
        (and is seen here) or starts after this turn is stored (and redacts it)."""
        gone = conn.execute(
            "SELECT s FROM unnest(%(sources)s::text[]) s WHERE EXISTS (SELECT 1 FROM deleted_sources ds "
            "WHERE ds.user_id = %(user)s AND ds.source_id = s) AND NOT EXISTS (SELECT 1 FROM documents d "
            "WHERE d.user_id = %(user)s AND d.source_id = s)", {"user": user_id, "sources": sources}).fetchall()
        for (source_id,) in gone:  # deleted, and not captured again since
            redact_answers(conn, user_id, source_id)

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
        return self._listed("WHERE c.user_id = %s ORDER BY c.created_at, c.conversation_id", (user_id,))

    def recent_conversations(self, user_id: str, limit: int = 100, *, matching: str | None = None
                             ) -> list[ConversationInfo]:
        """The user's last ``limit`` conversations, the one with the latest turn first; ``matching``: only
        those whose title or one of whose questions contains it (case-insensitive, as typed)."""
        if not matching:
            return self._listed("WHERE c.user_id = %s ORDER BY c.updated_at DESC, c.conversation_id LIMIT %s",
                                (user_id, max(0, limit)))
        pattern = "%" + matching.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return self._listed(
            "WHERE c.user_id = %s AND (c.title ILIKE %s OR EXISTS (SELECT 1 FROM conversation_turns t "
            "WHERE t.conversation_id = c.conversation_id AND t.role = 'user' AND t.content ILIKE %s)) "
            "ORDER BY c.updated_at DESC, c.conversation_id LIMIT %s", (user_id, pattern, pattern, max(0, limit)))

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationInfo | None:
        """One of the user's conversations (None for another user's, as for a missing one)."""
        found = self._listed("WHERE c.user_id = %s AND c.conversation_id = %s", (user_id, conversation_id))
        return found[0] if found else None

    def rename_conversation(self, user_id: str, conversation_id: str, title: str | None) -> bool:
        """Set or clear the title of one of the user's conversations."""
        with self._tx() as conn:
            cur = conn.execute("UPDATE conversations SET title = %s WHERE conversation_id = %s AND user_id = %s",
                               (title, conversation_id, user_id))
            return cur.rowcount == 1

    def delete_conversation(self, user_id: str, conversation_id: str) -> bool:
        """Remove one of the user's conversations; its turns go with it (ON DELETE CASCADE)."""
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM conversations WHERE conversation_id = %s AND user_id = %s",
                               (conversation_id, user_id))
            return cur.rowcount == 1

    def import_conversation(self, user_id: str, conversation_id: str, title: str | None, created_at: datetime,
                            turns: Sequence[Turn]) -> bool:
        """Keep a conversation from an export with its own times (see the port)."""
        last = max([created_at, *(t.created_at for t in turns)])
        with self._tx() as conn:
            made = conn.execute(
                "INSERT INTO conversations (conversation_id, user_id, created_at, updated_at, title) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (conversation_id) DO NOTHING RETURNING user_id",
                (conversation_id, user_id, created_at, last, title)).fetchone()
            if made is None:
                owner = conn.execute("SELECT user_id FROM conversations WHERE conversation_id = %s",
                                     (conversation_id,)).fetchone()
                if owner is None or owner[0] != user_id:
                    raise ForeignConversation("this conversation id belongs to someone else; start a new one")
                return False
            for turn in turns:
                conn.execute("INSERT INTO conversation_turns (conversation_id, role, content, meta, created_at) "
                             "VALUES (%s, %s, %s, %s, %s)",
                             (conversation_id, turn.role, turn.content, Jsonb(dict(turn.meta)), turn.created_at))
        return True

    def _listed(self, where: str, params: tuple[Any, ...]) -> list[ConversationInfo]:
        # The title stands in as the first question until the person gives one.
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT c.conversation_id, c.created_at, c.updated_at, "
                "(SELECT count(*) FROM conversation_turns t WHERE t.conversation_id = c.conversation_id), "
                "c.title, (SELECT t.content FROM conversation_turns t WHERE t.conversation_id = c.conversation_id "
                "AND t.role = 'user' ORDER BY t.id LIMIT 1) "
                f"FROM conversations c {where}", params).fetchall()
        return [ConversationInfo(conversation_id=r[0], created_at=r[1], updated_at=r[2], turns=int(r[3]),
                                 title=r[4] if r[4] is not None else (r[5] or ""), titled=r[4] is not None)
                for r in rows]
