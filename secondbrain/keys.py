"""Object-store key layout: everything a user owns lives under ``users/<user_id>/``.

Keeping one prefix per user makes isolation checkable (a key outside the prefix is
refused) and erasing a user one prefix delete.
"""

from __future__ import annotations

import re

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")


def check_user_id(user_id: str) -> str:
    """Return ``user_id`` if it is safe to embed in keys, collection and topic names."""
    # fullmatch, not match with "$": "$" also matches before a trailing newline.
    if not isinstance(user_id, str) or not _SAFE_ID.fullmatch(user_id) or ".." in user_id:
        raise ValueError(f"invalid user id {user_id!r}: use letters, digits, '_', '.', '@' or '-'")
    return user_id


def user_prefix(user_id: str) -> str:
    """The prefix of every object of ``user_id``."""
    return f"users/{check_user_id(user_id)}/"


def artifact_key(user_id: str, artifact_id: str) -> str:
    """Where the raw bytes of an artifact live (content-addressed: same bytes, same key)."""
    return f"{user_prefix(user_id)}artifacts/{artifact_id}"


def document_body_key(user_id: str, document_id: str) -> str:
    """Claim check for an extracted document too large for a Kafka message."""
    return f"{user_prefix(user_id)}documents/{document_id}/segments.json"


def chunks_key(user_id: str, document_id: str) -> str:
    """Claim check for a chunk list too large for a Kafka message."""
    return f"{user_prefix(user_id)}documents/{document_id}/chunks.json"


def owns_key(user_id: str, key: str) -> bool:
    """Whether ``key`` is inside the user's prefix (and does not try to escape it)."""
    return key.startswith(user_prefix(user_id)) and ".." not in key.split("/")
