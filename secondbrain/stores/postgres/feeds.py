"""Calendar feed tokens in the ``feed_tokens`` table (migration 0015): one role."""

from __future__ import annotations

from secondbrain.ports import FeedInfo
from secondbrain.stores.feed_token import new_token, plausible, token_hash
from secondbrain.stores.postgres.base import PgRole

_COLUMNS = "feed_id, user_id, name, timezone, created_at, last_used_at, revoked_at"


class PostgresFeedTokens(PgRole):
    """The users' calendar feeds (only their tokens' hashes are kept) and which feed a token opens."""

    def create(self, user_id: str, name: str, timezone: str) -> tuple[FeedInfo, str]:
        """A new feed of an existing user (the foreign key refuses an unknown one) and its token."""
        feed_id, token = new_token()
        with self._tx() as conn:
            row = conn.execute("INSERT INTO feed_tokens (feed_id, user_id, name, secret_hash, timezone) "
                               "VALUES (%s, %s, %s, %s, %s) RETURNING created_at",
                               (feed_id, user_id, name, token_hash(token), timezone)).fetchone()
        assert row is not None
        return FeedInfo(feed_id, user_id, name, timezone, row[0]), token

    def list(self, user_id: str) -> list[FeedInfo]:
        """The user's feeds, newest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM feed_tokens WHERE user_id = %s "
                                "ORDER BY created_at DESC, feed_id", (user_id,)).fetchall()
        return [FeedInfo(*r) for r in rows]

    def revoke(self, user_id: str, feed_id: str) -> bool:
        """Revoke one of the user's feeds (idempotent)."""
        with self._pool.connection() as conn:
            row = conn.execute("UPDATE feed_tokens SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE feed_id = %s AND user_id = %s RETURNING feed_id", (feed_id, user_id)).fetchone()
        return row is not None

    def authenticate(self, token: str) -> FeedInfo | None:
        """The live feed ``token`` opens (its last use noted at most once a minute), or ``None``."""
        if not plausible(token):
            return None
        with self._pool.connection() as conn:
            row = conn.execute(
                "UPDATE feed_tokens SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                "interval '1 minute' THEN now() ELSE last_used_at END WHERE secret_hash = %s AND revoked_at IS NULL "
                f"RETURNING {_COLUMNS}", (token_hash(token),)).fetchone()
        return FeedInfo(*row) if row else None
