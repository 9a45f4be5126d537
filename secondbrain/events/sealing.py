"""Sealed events: what travels on the pipeline's internal topics can be read and written by the pipeline only.

``documents.extracted``, ``chunks.created`` and ``chunks.indexed`` carry a person's extracted text and
what became of it.  No other app publishes to them, so each event there is *sealed*: its Avro bytes are
encrypted and authenticated with AES-256-GCM under the deployment's pipeline key (``SB_PIPELINE_KEY``;
embedded mode keeps one in the data directory).  The associated data is the topic and the message key
(the user id), so a sealed event cannot be moved to another topic or another user.  A stage reading an
internal topic opens every event and refuses (dead-letters as ``unauthorized``) anything that does not
open: an event from anyone without the key, however well-formed.

Why not broker authentication alone: the embedded broker (Tansu 0.6) cannot refuse clients that lack
credentials (its ``--authentication`` stores no credentials in memory storage and accepts any completed
SASL exchange), so on one machine anyone who can reach its port can read and write every topic.  With
Apache Kafka, SASL and ACLs still belong in front of it (see ``schemas/README.md``); sealing holds either
way.

Wire format: the value is ``nonce (12 bytes) || ciphertext || tag (16 bytes)``; the header ``sb-seal``
says ``v1.<key id>`` (the first 8 bytes of the key's SHA-256, hex, so a key rotation is visible).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SEAL_HEADER = "sb-seal"
_VERSION = "v1"
KEY_BYTES = 32
_NONCE = 12


class SealError(ValueError):
    """The event is not sealed with this deployment's pipeline key (or was changed on the way)."""


def new_key() -> str:
    """A fresh pipeline key, as ``SB_PIPELINE_KEY`` takes it (32 random bytes, base64)."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def parse_key(text: str) -> bytes:
    """The 32 bytes of a pipeline key given as base64 (``ValueError`` with what to do otherwise)."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ValueError("SB_PIPELINE_KEY must be 32 random bytes in base64 (make one with "
                         "`python -c \"import base64,os; print(base64.b64encode(os.urandom(32)).decode())\"`) "
                         "and be the same for every pipeline process")
    return raw


class Sealer:
    """Seals and opens events of internal topics with one pipeline key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"a pipeline key is {KEY_BYTES} bytes")
        self._aead = AESGCM(key)
        self.key_id = hashlib.sha256(key).hexdigest()[:16]
        self._header = f"{_VERSION}.{self.key_id}".encode()

    @classmethod
    def from_text(cls, text: str) -> Sealer:
        """A sealer for a base64 key (``SB_PIPELINE_KEY``)."""
        return cls(parse_key(text))

    @staticmethod
    def _aad(topic: str, key: bytes | None) -> bytes:
        return topic.encode() + b"\x00" + (key or b"")

    def seal(self, topic: str, key: bytes | None, value: bytes) -> tuple[bytes, tuple[str, bytes]]:
        """The sealed value for ``topic`` and message ``key``, and the header that marks it."""
        nonce = os.urandom(_NONCE)
        return nonce + self._aead.encrypt(nonce, value, self._aad(topic, key)), (SEAL_HEADER, self._header)

    def open(self, topic: str, key: bytes | None, value: bytes, headers: Mapping[str, str]) -> bytes:
        """The Avro bytes inside a sealed event; :class:`SealError` saying why when it does not open."""
        mark = headers.get(SEAL_HEADER)
        if not mark:
            raise SealError("the event is not sealed: only secondbrain's own stages publish to this topic "
                            "(other apps publish to artifacts.submitted or urls.requested)")
        if mark != self._header.decode():
            raise SealError(f"the event is sealed with another pipeline key ({mark[:40]!r}): every pipeline "
                            "process must share one SB_PIPELINE_KEY")
        if len(value) < _NONCE + 16:
            raise SealError("the sealed event is truncated")
        try:
            return self._aead.decrypt(value[:_NONCE], value[_NONCE:], self._aad(topic, key))
        except InvalidTag:
            raise SealError("the sealed event does not open: it was changed, moved to another topic or "
                            "user, or sealed with another key") from None
