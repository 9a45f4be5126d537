"""Conversations and their turns (in memory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from secondbrain.ports import (
    DELETED_ANSWER,
    DELETED_SOURCE_TITLE,
    ConversationInfo,
    ForeignConversation,
    Turn,
    cited_source_ids,
)
from secondbrain.stores.memory.base import ConversationRow, IntegrityError, MemoryRole, Tables, TurnRow, jsonb


def redact_answers(t: Tables, user_id: str, source_id: str) -> None:
    """Answers that quoted the source lose their text (the turn stays and says why); the source's entry
    in what was shown with them keeps only its number."""
    for conv in t.conversations.values():
        if conv.user_id != user_id:
            continue
        for turn in conv.turns:
            shown = turn.meta.get("sources")
            if turn.role != "assistant" or not isinstance(shown, list) or not any(
                    isinstance(s, dict) and s.get("source_id") == source_id for s in shown):
                continue
            turn.content = DELETED_ANSWER
            meta = {k: v for k, v in turn.meta.items()
                    if k not in ("extractive", "standalone", "answer_markdown", "quotes")}
            meta["source_deleted"] = True
            meta["sources"] = [{"n": s.get("n"), "deleted": True, "title": DELETED_SOURCE_TITLE}
                               if isinstance(s, dict) and s.get("source_id") == source_id else s for s in shown]
            turn.meta = meta


class MemoryConversations(MemoryRole):
    """Conversations and their turns."""

    def import_conversation(self, user_id: str, conversation_id: str, title: str | None, created_at: datetime,
                            turns: Sequence[Turn]) -> bool:
        """Keep a conversation from an export with its own times (see the port)."""
        t = self._t
        with self._tx():
            conv = t.conversations.get(conversation_id)
            if conv is not None:
                if conv.user_id != user_id:
                    raise ForeignConversation("this conversation id belongs to someone else; start a new one")
                return False
            if user_id not in t.users:
                raise IntegrityError(f"unknown user {user_id!r}: a conversation needs its user")
            last = max([created_at, *(turn.created_at for turn in turns)])
            conv = t.conversations[conversation_id] = ConversationRow(conversation_id, user_id, created_at, last,
                                                                      title=title)
            for turn in turns:
                conv.turns.append(TurnRow(next(t.turn_ids), turn.role, turn.content, jsonb(turn.meta),
                                          turn.created_at))
        return True

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn, creating the conversation on first use (another user's id is refused)."""
        stored_meta = jsonb(meta)
        t = self._t
        with self._tx() as now:
            conv = t.conversations.get(conversation_id)
            if conv is None and user_id not in t.users:
                raise IntegrityError(f"unknown user {user_id!r}: a conversation needs its user")
            if conv is not None and conv.user_id != user_id:
                raise ForeignConversation("this conversation id belongs to someone else; start a new one")
            if role not in ("user", "assistant"):
                raise IntegrityError(f"a turn's role is user or assistant, not {role!r}")
            if conv is None:
                conv = t.conversations[conversation_id] = ConversationRow(conversation_id, user_id, now, now)
            conv.turns.append(TurnRow(next(t.turn_ids), role, content, stored_meta, self.db._now()))
            conv.updated_at = now
            if role == "assistant":  # written while a source it quotes was deleted: stored as the deletion leaves it
                for source_id in cited_source_ids(meta):
                    if (user_id, source_id) in t.deleted_sources and not t.source_documents(user_id, source_id):
                        redact_answers(t, user_id, source_id)

    def get_turns(self, user_id: str, conversation_id: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns of the user's conversation, oldest first."""
        with self._tx():
            conv = self._t.conversations.get(conversation_id)
            if conv is None or conv.user_id != user_id or limit <= 0:
                return []
            return [Turn(role=r.role, content=r.content, created_at=r.created_at, meta=jsonb(r.meta))
                    for r in conv.turns[-limit:]]

    def list_conversations(self, user_id: str) -> list[ConversationInfo]:
        """The user's conversations with their number of turns, oldest first."""
        with self._tx():
            convs = sorted((c for c in self._t.conversations.values() if c.user_id == user_id),
                           key=lambda c: (c.created_at, c.conversation_id))
            return [_info(c) for c in convs]

    def recent_conversations(self, user_id: str, limit: int = 100, *, matching: str | None = None
                             ) -> list[ConversationInfo]:
        """The user's last ``limit`` conversations, the one with the latest turn first; ``matching``: only
        those whose title or one of whose questions contains it (case-insensitive)."""
        needle = matching.casefold() if matching else None

        def found(c: ConversationRow) -> bool:
            if needle is None:
                return True
            return needle in (c.title or "").casefold() or any(
                t.role == "user" and needle in t.content.casefold() for t in c.turns)

        with self._tx():
            convs = sorted((c for c in self._t.conversations.values() if c.user_id == user_id and found(c)),
                           key=lambda c: c.conversation_id)
            convs.sort(key=lambda c: c.updated_at, reverse=True)
            return [_info(c) for c in convs[:max(0, limit)]]

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationInfo | None:
        """One of the user's conversations (None for another user's, as for a missing one)."""
        with self._tx():
            conv = self._t.conversations.get(conversation_id)
            return _info(conv) if conv is not None and conv.user_id == user_id else None

    def rename_conversation(self, user_id: str, conversation_id: str, title: str | None) -> bool:
        """Set or clear the title of one of the user's conversations."""
        with self._tx():
            conv = self._t.conversations.get(conversation_id)
            if conv is None or conv.user_id != user_id:
                return False
            conv.title = title
            return True

    def delete_conversation(self, user_id: str, conversation_id: str) -> bool:
        """Remove one of the user's conversations with its turns."""
        with self._tx():
            conv = self._t.conversations.get(conversation_id)
            if conv is None or conv.user_id != user_id:
                return False
            del self._t.conversations[conversation_id]
            return True


def _info(c: ConversationRow) -> ConversationInfo:
    # The title stands in as the first question until the person gives one.
    first = next((t.content for t in c.turns if t.role == "user"), "")
    return ConversationInfo(conversation_id=c.conversation_id, created_at=c.created_at, updated_at=c.updated_at,
                            turns=len(c.turns), title=c.title if c.title is not None else first,
                            titled=c.title is not None)
