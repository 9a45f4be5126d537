"""Users, their API keys, the web page's sign-in links and sessions, and request windows (in memory): one
role each."""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime, timedelta

from secondbrain.ports import KEY_SCOPES, ApiKeyInfo, KeyScope, Principal, RequestAuth, SigningKey, UserInfo
from secondbrain.stores.memory.base import UNFINISHED, KeyRow, LinkRow, MemoryRole, SessionRow, Tables, key_hash


def _principal(key: KeyRow) -> Principal:
    return Principal(user_id=key.user_id, key_id=key.key_id, scope=key.scope)


def _key_info(key: KeyRow) -> ApiKeyInfo:
    return ApiKeyInfo(key_id=key.key_id, user_id=key.user_id, name=key.name, created_at=key.created_at,
                      last_used_at=key.last_used_at, revoked_at=key.revoked_at, scope=key.scope)


def _well_formed(secret: str) -> bool:
    return secret.startswith("sb_") and len(secret) <= 200


def _live_key(t: Tables, key_hash_: bytes) -> KeyRow | None:
    return next((k for k in t.api_keys.values() if k.secret_hash == key_hash_ and k.revoked_at is None), None)


class MemoryUsers(MemoryRole):
    """Who the users are: created, known, listed."""

    def ensure_user(self, user_id: str, display_name: str | None = None) -> None:
        """Create the user when missing (a display name fills in a missing one, never overwrites); an erased
        user id created again starts empty."""
        with self._tx() as now:
            self._t.erased_users.pop(user_id, None)
            self._t.ensure_user(user_id, display_name, now)

    def user_exists(self, user_id: str) -> bool:
        """Whether the user is known."""
        with self._tx():
            return user_id in self._t.users

    def list_users(self) -> list[UserInfo]:
        """Every user with the number of live keys, oldest first."""
        with self._tx():
            live: dict[str, int] = {}
            for key in self._t.api_keys.values():
                if key.revoked_at is None:
                    live[key.user_id] = live.get(key.user_id, 0) + 1
            users = sorted(self._t.users.values(), key=lambda u: (u.created_at, u.user_id))
            return [UserInfo(user_id=u.user_id, display_name=u.display_name, created_at=u.created_at,
                             active_keys=live.get(u.user_id, 0)) for u in users]


class MemoryApiKeys(MemoryRole):
    """The users' API keys (only their hashes are kept) and who a presented key acts for."""

    def create_api_key(self, user_id: str, name: str, scope: KeyScope = "user") -> tuple[ApiKeyInfo, str]:
        """A new key ``sb_<id>_<secret>`` for an existing user; only its SHA-256 is kept."""
        if scope not in KEY_SCOPES:
            raise ValueError(f"unknown key scope {scope!r}; use one of {', '.join(KEY_SCOPES)}")
        key_id = secrets.token_hex(6)
        secret = f"sb_{key_id}_{secrets.token_urlsafe(32)}"
        with self._tx() as now:
            if user_id not in self._t.users:
                raise KeyError(f"unknown user {user_id!r}: create it first")
            key = KeyRow(key_id=key_id, user_id=user_id, name=name, secret_hash=key_hash(secret), created_at=now,
                         scope=scope)
            self._t.api_keys[key_id] = key
            return _key_info(key), secret

    def list_api_keys(self, user_id: str) -> list[ApiKeyInfo]:
        """The user's keys, newest first."""
        with self._tx():
            keys = [k for k in self._t.api_keys.values() if k.user_id == user_id]
            keys.sort(key=lambda k: k.key_id)
            keys.sort(key=lambda k: k.created_at, reverse=True)
            return [_key_info(k) for k in keys]

    def revoke_api_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's keys (idempotent); ``False`` for another user's or unknown key."""
        with self._tx() as now:
            key = self._t.api_keys.get(key_id)
            if key is None or key.user_id != user_id:
                return False
            key.revoked_at = key.revoked_at or now
            return True

    def authenticate(self, secret: str) -> Principal | None:
        """Who a live key acts for, or ``None``; records when it was last used (at most once a minute)."""
        if not _well_formed(secret):
            return None
        with self._tx() as now:
            key = _live_key(self._t, key_hash(secret))
            if key is None:
                return None
            if key.last_used_at is None or key.last_used_at < now - timedelta(minutes=1):
                key.last_used_at = now
            return _principal(key)

    def signing_key(self, key_id: str) -> SigningKey | None:
        """A live key by id with its stored hash (the HMAC key of event signatures)."""
        with self._tx():
            key = self._t.api_keys.get(key_id)
            if key is None or key.revoked_at is not None:
                return None
            return SigningKey(key_id=key.key_id, user_id=key.user_id, scope=key.scope,
                              secret_hash=key.secret_hash)


class MemorySessions(MemoryRole):
    """The web page's one-time sign-in links and sessions."""

    def create_login_link(self, key_id: str, ttl_s: int) -> str:
        """A one-time sign-in token acting as the live key ``key_id``; only its hash is kept."""
        token = secrets.token_urlsafe(32)
        with self._tx() as now:
            key = self._t.api_keys.get(key_id)
            if key is None or key.revoked_at is not None:
                raise KeyError(f"no live key {key_id!r}")
            for expired in [h for h, link in self._t.login_links.items() if link.expires_at < now]:
                del self._t.login_links[expired]
            self._t.login_links[key_hash(token)] = LinkRow(key_id=key_id, created_at=now,
                                                           expires_at=now + timedelta(seconds=ttl_s))
        return token

    def open_session(self, *, key_secret: str | None = None, link_token: str | None = None,
                     ttl_s: int) -> tuple[str, Principal] | None:
        """A new web session from a live key, or from an unused login token (which this uses up)."""
        with self._tx() as now:
            if key_secret is not None:
                if not _well_formed(key_secret):
                    return None
                key = _live_key(self._t, key_hash(key_secret))
            elif link_token is not None and len(link_token) <= 200:
                key = None
                link = self._t.login_links.get(key_hash(link_token))
                if link is not None and link.used_at is None and link.expires_at > now:
                    found = self._t.api_keys.get(link.key_id)
                    if found is not None and found.revoked_at is None:
                        link.used_at = now  # used up even when its key may not open a session (below)
                        key = found
            else:
                return None
            if key is None or key.scope in ("producer", "capture"):  # keys for other programs, not for the page
                return None
            secret = secrets.token_urlsafe(32)
            for expired in [h for h, s in self._t.web_sessions.items() if s.expires_at < now]:
                del self._t.web_sessions[expired]
            self._t.web_sessions[key_hash(secret)] = SessionRow(key_id=key.key_id, created_at=now,
                                                                expires_at=now + timedelta(seconds=ttl_s))
            return secret, _principal(key)

    def authenticate_session(self, secret: str) -> Principal | None:
        """Who a live session acts for (its key still live), or ``None``."""
        if len(secret) > 200:
            return None
        with self._tx() as now:
            session = self._t.web_sessions.get(key_hash(secret))
            if session is None or session.expires_at <= now:
                return None
            key = self._t.api_keys.get(session.key_id)
            return _principal(key) if key is not None and key.revoked_at is None else None

    def close_session(self, secret: str) -> None:
        """End a session (idempotent)."""
        with self._tx():
            self._t.web_sessions.pop(key_hash(secret), None)


class MemoryRateCounts(MemoryRole):
    """Per-user request windows, and a request's check counted in them."""

    def count_request(self, user_id: str, bucket: str, window_s: int) -> int:
        """Fixed windows aligned to ``window_s``; the bucket's windows that ended before the previous one
        are dropped on the way."""
        window_s = max(1, int(window_s))
        with self._tx() as now:
            start = datetime.fromtimestamp(math.floor(now.timestamp() / window_s) * window_s, UTC)
            key = (user_id, bucket, start)
            hits = self._t.request_windows.get(key, 0) + 1
            self._t.request_windows[key] = hits
            stale = now - timedelta(seconds=window_s * 2)
            for old in [k for k in self._t.request_windows if k[1] == bucket and k[2] < stale]:
                del self._t.request_windows[old]
            return hits

    def authenticate_request(self, *, key: str | None = None, session: str | None = None, bucket: str,
                             window_s: int) -> RequestAuth | None:
        """Who the request acts for, counted in its window, with the user's backlog."""
        if key is not None:
            principal = MemoryApiKeys(self.db).authenticate(key)
        elif session is not None:
            principal = MemorySessions(self.db).authenticate_session(session)
        else:
            return None
        if principal is None:
            return None
        hits = self.count_request(principal.user_id, bucket, window_s)
        with self._tx():
            pending = sum(1 for j in self._t.jobs.values()
                          if j.user_id == principal.user_id and j.status in UNFINISHED)
        return RequestAuth(principal, hits, pending)
