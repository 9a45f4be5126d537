"""Users, their API keys, the web page's sign-in links and sessions, and request windows: one role each."""

from __future__ import annotations

import secrets

from psycopg.rows import dict_row

from secondbrain.ports import KEY_SCOPES, ApiKeyInfo, KeyScope, Principal, RequestAuth, SigningKey, UserInfo
from secondbrain.stores.postgres.base import PgRole, _key_hash


class PostgresUsers(PgRole):
    """Who the users are: created, known, listed."""

    def ensure_user(self, user_id: str, display_name: str | None = None) -> None:
        """Create the user when missing (a display name fills in a missing one, never overwrites); an erased
        user id created again starts empty."""
        with self._tx() as conn:
            self._ensure_user(conn, user_id, display_name)
            conn.execute("DELETE FROM erased_users WHERE user_id = %s", (user_id,))

    def user_exists(self, user_id: str) -> bool:
        """Whether the user is known."""
        with self._pool.connection() as conn:
            return conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is not None

    def list_users(self) -> list[UserInfo]:
        """Every user with the number of live keys, oldest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT u.user_id, u.display_name, u.created_at, "
                "count(k.key_id) FILTER (WHERE k.revoked_at IS NULL) "
                "FROM users u LEFT JOIN api_keys k ON k.user_id = u.user_id "
                "GROUP BY u.user_id ORDER BY u.created_at, u.user_id").fetchall()
        return [UserInfo(user_id=r[0], display_name=r[1], created_at=r[2], active_keys=int(r[3])) for r in rows]


class PostgresApiKeys(PgRole):
    """The users' API keys (only their hashes are kept) and who a presented key acts for."""

    def create_api_key(self, user_id: str, name: str, scope: KeyScope = "user") -> tuple[ApiKeyInfo, str]:
        """A new key ``sb_<id>_<secret>`` for an existing user; only its SHA-256 is stored."""
        if scope not in KEY_SCOPES:
            raise ValueError(f"unknown key scope {scope!r}; use one of {', '.join(KEY_SCOPES)}")
        key_id = secrets.token_hex(6)
        secret = f"sb_{key_id}_{secrets.token_urlsafe(32)}"
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is None:
                raise KeyError(f"unknown user {user_id!r}: create it first")
            row = conn.execute(
                "INSERT INTO api_keys (key_id, user_id, name, secret_hash, scope) VALUES (%s, %s, %s, %s, %s) "
                "RETURNING created_at", (key_id, user_id, name, _key_hash(secret), scope)).fetchone()
        assert row is not None
        return ApiKeyInfo(key_id=key_id, user_id=user_id, name=name, created_at=row[0], scope=scope), secret

    def list_api_keys(self, user_id: str) -> list[ApiKeyInfo]:
        """The user's keys, newest first."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("SELECT key_id, user_id, name, created_at, last_used_at, revoked_at, scope "
                               "FROM api_keys WHERE user_id = %s ORDER BY created_at DESC, key_id",
                               (user_id,)).fetchall()
        return [ApiKeyInfo(**r) for r in rows]

    def revoke_api_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's keys (idempotent); ``False`` for another user's or unknown key."""
        with self._pool.connection() as conn:
            row = conn.execute("UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE key_id = %s AND user_id = %s RETURNING key_id", (key_id, user_id)).fetchone()
        return row is not None

    def authenticate(self, secret: str) -> Principal | None:
        """Who a live key acts for, or ``None``; records when it was last used (at most once a minute)."""
        if not secret.startswith("sb_") or len(secret) > 200:
            return None
        with self._pool.connection() as conn:
            row = conn.execute(
                "UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                "interval '1 minute' THEN now() ELSE last_used_at END "
                "WHERE secret_hash = %s AND revoked_at IS NULL RETURNING user_id, key_id, scope",
                (_key_hash(secret),)).fetchone()
        return Principal(user_id=row[0], key_id=row[1], scope=row[2]) if row else None

    def signing_key(self, key_id: str) -> SigningKey | None:
        """A live key by id with its stored hash (the HMAC key of event signatures)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT key_id, user_id, scope, secret_hash FROM api_keys "
                               "WHERE key_id = %s AND revoked_at IS NULL", (key_id,)).fetchone()
        return SigningKey(key_id=row[0], user_id=row[1], scope=row[2], secret_hash=bytes(row[3])) if row else None


class PostgresSessions(PgRole):
    """The web page's one-time sign-in links and sessions."""

    def create_login_link(self, key_id: str, ttl_s: int) -> str:
        """A one-time sign-in token acting as the live key ``key_id``; only its hash is stored."""
        token = secrets.token_urlsafe(32)
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM api_keys WHERE key_id = %s AND revoked_at IS NULL",
                            (key_id,)).fetchone() is None:
                raise KeyError(f"no live key {key_id!r}")
            conn.execute("DELETE FROM login_links WHERE expires_at < now()")
            conn.execute("INSERT INTO login_links (token_hash, key_id, expires_at) "
                         "VALUES (%s, %s, now() + make_interval(secs => %s))", (_key_hash(token), key_id, ttl_s))
        return token

    def open_session(self, *, key_secret: str | None = None, link_token: str | None = None,
                     ttl_s: int) -> tuple[str, Principal] | None:
        """A new web session from a live key, or from an unused login token (which this uses up)."""
        with self._tx() as conn:
            if key_secret is not None:
                if not key_secret.startswith("sb_") or len(key_secret) > 200:
                    return None
                row = conn.execute("SELECT key_id, user_id, scope FROM api_keys "
                                   "WHERE secret_hash = %s AND revoked_at IS NULL",
                                   (_key_hash(key_secret),)).fetchone()
            elif link_token is not None and len(link_token) <= 200:
                row = conn.execute(
                    "UPDATE login_links l SET used_at = now() FROM api_keys k "
                    "WHERE l.token_hash = %s AND l.used_at IS NULL AND l.expires_at > now() "
                    "AND k.key_id = l.key_id AND k.revoked_at IS NULL RETURNING k.key_id, k.user_id, k.scope",
                    (_key_hash(link_token),)).fetchone()
            else:
                return None
            if row is None or row[2] in ("producer", "capture"):  # keys for other programs, not for the page
                return None
            secret = secrets.token_urlsafe(32)
            conn.execute("DELETE FROM web_sessions WHERE expires_at < now()")
            conn.execute("INSERT INTO web_sessions (session_hash, key_id, expires_at) "
                         "VALUES (%s, %s, now() + make_interval(secs => %s))", (_key_hash(secret), row[0], ttl_s))
        return secret, Principal(user_id=row[1], key_id=row[0], scope=row[2])

    def authenticate_session(self, secret: str) -> Principal | None:
        """Who a live session acts for (its key still live), or ``None``."""
        if len(secret) > 200:
            return None
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT k.user_id, k.key_id, k.scope FROM web_sessions s JOIN api_keys k ON k.key_id = s.key_id "
                "WHERE s.session_hash = %s AND s.expires_at > now() AND k.revoked_at IS NULL",
                (_key_hash(secret),)).fetchone()
        return Principal(user_id=row[0], key_id=row[1], scope=row[2]) if row else None

    def close_session(self, secret: str) -> None:
        """End a session (idempotent)."""
        with self._pool.connection() as conn:
            conn.execute("DELETE FROM web_sessions WHERE session_hash = %s", (_key_hash(secret),))


class PostgresRateCounts(PgRole):
    """Per-user request windows, and a request's check counted in them."""

    def count_request(self, user_id: str, bucket: str, window_s: int) -> int:
        """One upsert per request: fixed windows aligned to ``window_s``; old windows of the bucket are
        pruned now and then (1 in 64 calls) so the table stays a few rows per active user (only the
        bucket's: another bucket's windows may be longer and still current)."""
        window_s = max(1, int(window_s))
        with self._pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO request_windows (user_id, bucket, window_start, hits) "
                "VALUES (%s, %s, to_timestamp(floor(extract(epoch FROM now()) / %s) * %s), 1) "
                "ON CONFLICT (user_id, bucket, window_start) DO UPDATE SET hits = request_windows.hits + 1 "
                "RETURNING hits", (user_id, bucket, window_s, window_s)).fetchone()
            if secrets.randbelow(64) == 0:
                conn.execute("DELETE FROM request_windows WHERE bucket = %s "
                             "AND window_start < now() - make_interval(secs => %s)", (bucket, window_s * 2))
        assert row is not None
        return int(row[0])

    def authenticate_request(self, *, key: str | None = None, session: str | None = None, bucket: str,
                             window_s: int) -> RequestAuth | None:
        """Who the request acts for, counted in its window, with the user's backlog: one statement."""
        if key is not None:
            if not key.startswith("sb_") or len(key) > 200:
                return None
            who = ("UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                   "interval '1 minute' THEN now() ELSE last_used_at END "
                   "WHERE secret_hash = %(hash)s AND revoked_at IS NULL RETURNING user_id, key_id, scope")
            secret = key
        elif session is not None and len(session) <= 200:
            who = ("SELECT k.user_id, k.key_id, k.scope FROM web_sessions s JOIN api_keys k ON k.key_id = s.key_id "
                   "WHERE s.session_hash = %(hash)s AND s.expires_at > now() AND k.revoked_at IS NULL")
            secret = session
        else:
            return None
        window_s = max(1, int(window_s))
        with self._pool.connection() as conn:
            row = conn.execute(
                f"""
                WITH who AS ({who}),
                hit AS (INSERT INTO request_windows (user_id, bucket, window_start, hits)
                        SELECT user_id, %(bucket)s, to_timestamp(floor(extract(epoch FROM now()) / %(w)s) * %(w)s), 1
                        FROM who
                        ON CONFLICT (user_id, bucket, window_start)
                        DO UPDATE SET hits = request_windows.hits + 1 RETURNING hits)
                SELECT who.user_id, who.key_id, who.scope, (SELECT hits FROM hit),
                       (SELECT count(*) FROM jobs j WHERE j.user_id = who.user_id AND j.status IN ('queued', 'running'))
                FROM who
                """, {"hash": _key_hash(secret), "bucket": bucket, "w": window_s}).fetchone()
            if secrets.randbelow(64) == 0:  # old windows are pruned now and then: a few rows per active user
                conn.execute("DELETE FROM request_windows WHERE window_start < now() - make_interval(secs => %s)",
                             (window_s * 2,))
        if row is None:
            return None
        return RequestAuth(Principal(user_id=row[0], key_id=row[1], scope=row[2]), int(row[3] or 0), int(row[4]))
