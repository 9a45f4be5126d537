"""Refused and failed events, for their producers to read (in memory)."""

from __future__ import annotations

from dataclasses import replace

from secondbrain.ports import DeadLetterRecord
from secondbrain.stores.memory.base import MemoryRole


class MemoryDeadLetters(MemoryRole):
    """Refused and failed events, for their producers to read."""

    def record_dead_letter(self, letter: DeadLetterRecord) -> None:
        """Keep the letter; a letter already kept (a redelivered event) changes nothing."""
        with self._tx() as now:
            if letter.letter_id not in self._t.dead_letters:
                self._t.dead_letters[letter.letter_id] = replace(letter, failed_at=now)

    def list_dead_letters(self, user_id: str | None, limit: int = 100) -> list[DeadLetterRecord]:
        """Newest first: the user's (the events naming them or signed with one of their keys), or all."""
        with self._tx():
            t = self._t
            own_keys = {k.key_id for k in t.api_keys.values() if k.user_id == user_id}
            letters = [d for d in t.dead_letters.values()
                       if user_id is None or d.user_id == user_id or d.key_id in own_keys]
            return list(reversed(letters))[:max(0, limit)]
