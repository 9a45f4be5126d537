"""Calendar feed tokens: a read-only capability for one person's agenda as iCalendar, revocable.

A token (``sbf_<feed id>_<secret>``) goes in the feed's address, because calendar apps subscribe to a URL
and send no header; it opens ``GET /v1/agenda.ics`` and nothing else.  Only its SHA-256 is stored, it is
shown once, and a revoked token is refused (401).  Postgres in every deployment; the in-memory twin is for
an app built on the in-memory metadata store.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

PREFIX = "sbf_"


@dataclass(frozen=True, slots=True)
class Feed:
    """A calendar feed as listed (never its token)."""

    feed_id: str
    user_id: str
    name: str
    timezone: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class FeedTokens(Protocol):
    def create(self, user_id: str, name: str, timezone: str) -> tuple[Feed, str]:
        """A new feed and its token (shown once)."""
        ...

    def list(self, user_id: str) -> list[Feed]:
        """The user's feeds, newest first."""
        ...

    def revoke(self, user_id: str, feed_id: str) -> bool:
        """Revoke one of the user's feeds (idempotent); ``False`` for another user's or an unknown one."""
        ...

    def authenticate(self, token: str) -> Feed | None:
        """The live feed a token opens, or ``None``."""
        ...


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _new_token() -> tuple[str, str]:
    feed_id = secrets.token_hex(6)
    return feed_id, f"{PREFIX}{feed_id}_{secrets.token_urlsafe(32)}"


def _plausible(token: str) -> bool:
    return token.startswith(PREFIX) and len(token) <= 200


class PostgresFeedTokens:
    """Feed tokens in the ``feed_tokens`` table (migration 0015)."""

    def __init__(self, database: Any) -> None:
        self.db = database

    def create(self, user_id: str, name: str, timezone: str) -> tuple[Feed, str]:
        feed_id, token = _new_token()
        with self.db._tx() as conn:
            row = conn.execute("INSERT INTO feed_tokens (feed_id, user_id, name, secret_hash, timezone) "
                               "VALUES (%s, %s, %s, %s, %s) RETURNING created_at",
                               (feed_id, user_id, name, _hash(token), timezone)).fetchone()
        return Feed(feed_id, user_id, name, timezone, row[0]), token

    def list(self, user_id: str) -> list[Feed]:
        with self.db._pool.connection() as conn:
            rows = conn.execute("SELECT feed_id, user_id, name, timezone, created_at, last_used_at, revoked_at "
                                "FROM feed_tokens WHERE user_id = %s ORDER BY created_at DESC, feed_id",
                                (user_id,)).fetchall()
        return [Feed(*r) for r in rows]

    def revoke(self, user_id: str, feed_id: str) -> bool:
        with self.db._pool.connection() as conn:
            row = conn.execute("UPDATE feed_tokens SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE feed_id = %s AND user_id = %s RETURNING feed_id", (feed_id, user_id)).fetchone()
        return row is not None

    def authenticate(self, token: str) -> Feed | None:
        if not _plausible(token):
            return None
        with self.db._pool.connection() as conn:
            row = conn.execute(
                "UPDATE feed_tokens SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                "interval '1 minute' THEN now() ELSE last_used_at END WHERE secret_hash = %s AND revoked_at IS NULL "
                "RETURNING feed_id, user_id, name, timezone, created_at, last_used_at, revoked_at",
                (_hash(token),)).fetchone()
        return Feed(*row) if row else None


class MemoryFeedTokens:
    """The same in memory: on the in-memory metadata store's tables when given its database (so erasing
    the user removes their feeds, as Postgres's cascade does), else on a table of its own."""

    def __init__(self, database: Any = None) -> None:
        tables = getattr(database, "tables", None)
        self._rows: dict[bytes, Feed] = tables.feed_tokens if tables is not None else {}
        self._lock = getattr(database, "_lock", None) or threading.RLock()

    def create(self, user_id: str, name: str, timezone: str) -> tuple[Feed, str]:
        feed_id, token = _new_token()
        feed = Feed(feed_id, user_id, name, timezone, datetime.now(UTC))
        with self._lock:
            self._rows[_hash(token)] = feed
        return feed, token

    def list(self, user_id: str) -> list[Feed]:
        with self._lock:
            return sorted((f for f in self._rows.values() if f.user_id == user_id), key=lambda f: f.created_at,
                          reverse=True)

    def revoke(self, user_id: str, feed_id: str) -> bool:
        with self._lock:
            for h, f in self._rows.items():
                if f.feed_id == feed_id and f.user_id == user_id:
                    self._rows[h] = replace(f, revoked_at=f.revoked_at or datetime.now(UTC))
                    return True
        return False

    def authenticate(self, token: str) -> Feed | None:
        if not _plausible(token):
            return None
        with self._lock:
            feed = self._rows.get(_hash(token))
            if feed is None or feed.revoked_at is not None:
                return None
            feed = self._rows[_hash(token)] = replace(feed, last_used_at=datetime.now(UTC))
        return feed


def feed_tokens_for(database: Any) -> FeedTokens:
    """Postgres feeds on a Postgres database, else the in-memory twin."""
    return PostgresFeedTokens(database) if hasattr(database, "_pool") else MemoryFeedTokens(database)
