"""What both feed-token stores make and check a calendar feed token by (``sbf_<feed id>_<secret>``), so that
a token made by one is read the same by the other."""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "sbf_"


def token_hash(token: str) -> bytes:
    """What is kept of a token: its SHA-256 (it is long and random: no stretching needed)."""
    return hashlib.sha256(token.encode()).digest()


def new_token() -> tuple[str, str]:
    """A new feed id and its token."""
    feed_id = secrets.token_hex(6)
    return feed_id, f"{PREFIX}{feed_id}_{secrets.token_urlsafe(32)}"


def plausible(token: str) -> bool:
    """Whether ``token`` is worth looking up (a malformed one is refused without a query)."""
    return token.startswith(PREFIX) and len(token) <= 200
