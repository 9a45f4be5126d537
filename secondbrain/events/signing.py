"""Signatures on events that other apps publish straight to Kafka.

Anyone who can write to ``artifacts.submitted`` or ``urls.requested`` could otherwise add
data to any user's memory.  So an event from outside secondbrain carries two headers:

``sb-key-id``
    the id of one of the user's API keys (the ``<id>`` in ``sb_<id>_<secret>``);
``sb-signature``
    ``v1=`` + hex HMAC-SHA256 of the message value (the Avro bytes as sent), keyed with the
    SHA-256 of the whole API key string.

Keying with the key's SHA-256 lets secondbrain check the signature against the hash it
already stores, so no secret is kept in clear anywhere.  The stage that reads the event
checks that the key is live and belongs to the event's user before anything else happens;
a failed check dead-letters the event with the reason and touches no job.  Events that
secondbrain itself produced (the gateway's outbox, the fetcher) are recognised without a
signature: their job was recorded in Postgres in the same transaction that queued them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

KEY_ID_HEADER = "sb-key-id"
SIGNATURE_HEADER = "sb-signature"
_VERSION = "v1="


def key_id_of(api_key: str) -> str:
    """The id part of an API key ``sb_<id>_<secret>`` (raises ``ValueError`` on another shape)."""
    prefix, _, rest = api_key.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != "sb" or not key_id or not secret:
        raise ValueError("not a secondbrain API key (they look like sb_<id>_<secret>)")
    return key_id


def signing_secret(api_key: str) -> bytes:
    """The HMAC key a producer derives from its API key (what the server stores)."""
    return hashlib.sha256(api_key.encode()).digest()


def signature(value: bytes, secret_hash: bytes) -> str:
    """The ``sb-signature`` header value for ``value``."""
    return _VERSION + hmac.new(secret_hash, value, hashlib.sha256).hexdigest()


def sign(value: bytes, api_key: str) -> list[tuple[str, bytes]]:
    """Headers to add to a Kafka message whose value is ``value`` (for producers in Python)."""
    return [(KEY_ID_HEADER, key_id_of(api_key).encode()),
            (SIGNATURE_HEADER, signature(value, signing_secret(api_key)).encode())]


def signed_key_id(headers: Mapping[str, str]) -> str | None:
    """The key id an event claims to be signed with, if any."""
    return (headers.get(KEY_ID_HEADER) or "").strip() or None


def verify(value: bytes, headers: Mapping[str, str], secret_hash: bytes) -> bool:
    """Whether the event's signature header matches ``value`` under ``secret_hash`` (constant time)."""
    given = (headers.get(SIGNATURE_HEADER) or "").strip()
    return bool(given) and hmac.compare_digest(given.encode(), signature(value, secret_hash).encode())
