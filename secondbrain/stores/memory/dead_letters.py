"""Refused and failed events, for their producers to read (in memory)."""

from __future__ import annotations

from dataclasses import replace

from secondbrain.ports import DeadLetterRecord
from secondbrain.stores.memory.base import MemoryRole


class MemoryDeadLetters(MemoryRole):
    """Refused and failed events, for their producers to read."""

    def record_dead_letter(self, letter: DeadLetterRecord) -> bool:
        """Keep the letter; a letter already kept (a redelivered event) changes nothing.  ``False`` when
        the letter names an erased user: nothing is kept for them."""
        with self._tx() as now:
            t = self._t
            if letter.letter_id in t.dead_letters:
                return True
            if letter.user_id is not None and letter.user_id in t.erased_users and letter.user_id not in t.users:
                return False
            t.dead_letters[letter.letter_id] = replace(letter, failed_at=now)
            return True

    def list_dead_letters(self, user_id: str | None, limit: int = 100) -> list[DeadLetterRecord]:
        """Newest first: the user's (the events naming them or signed with one of their keys), or all."""
        with self._tx():
            t = self._t
            own_keys = {k.key_id for k in t.api_keys.values() if k.user_id == user_id}
            letters = [d for d in t.dead_letters.values()
                       if user_id is None or d.user_id == user_id or d.key_id in own_keys]
            return list(reversed(letters))[:max(0, limit)]
