"""Calendar feed tokens (in memory): one role, on the shared tables (so erasing the user removes their
feeds, as Postgres's cascade does)."""

from __future__ import annotations

from dataclasses import replace

from secondbrain.ports import FeedInfo
from secondbrain.stores.feed_token import new_token, plausible, token_hash
from secondbrain.stores.memory.base import IntegrityError, MemoryRole


class MemoryFeedTokens(MemoryRole):
    """The users' calendar feeds by token hash, and which feed a token opens."""

    def create(self, user_id: str, name: str, timezone: str) -> tuple[FeedInfo, str]:
        """A new feed of an existing user (an unknown one is refused, as Postgres's foreign key does)."""
        feed_id, token = new_token()
        with self._tx() as now:
            if user_id not in self._t.users:
                raise IntegrityError(f"unknown user {user_id!r}")
            feed = self._t.feed_tokens[token_hash(token)] = FeedInfo(feed_id, user_id, name, timezone, now)
        return feed, token

    def list(self, user_id: str) -> list[FeedInfo]:
        """The user's feeds, newest first."""
        with self._tx():
            return sorted((f for f in self._t.feed_tokens.values() if f.user_id == user_id),
                          key=lambda f: (-f.created_at.timestamp(), f.feed_id))

    def revoke(self, user_id: str, feed_id: str) -> bool:
        """Revoke one of the user's feeds (idempotent)."""
        with self._tx() as now:
            for h, f in self._t.feed_tokens.items():
                if f.feed_id == feed_id and f.user_id == user_id:
                    self._t.feed_tokens[h] = replace(f, revoked_at=f.revoked_at or now)
                    return True
        return False

    def authenticate(self, token: str) -> FeedInfo | None:
        """The live feed ``token`` opens (its last use noted), or ``None``."""
        if not plausible(token):
            return None
        with self._tx() as now:
            feed = self._t.feed_tokens.get(token_hash(token))
            if feed is None or feed.revoked_at is not None:
                return None
            feed = self._t.feed_tokens[token_hash(token)] = replace(feed, last_used_at=now)
        return feed
