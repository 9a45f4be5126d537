"""Deterministic identifiers.

Every id is derived from what it identifies, so a replayed or retried event produces
the same artifact, document, chunk and vector point ids and never a duplicate.
"""

from __future__ import annotations

import hashlib
import uuid

# A fixed namespace so ids are stable across processes, machines and versions.
NAMESPACE = uuid.UUID("5b1d3c52-8f0e-4a5e-9a57-2f5c0de0b7a1")


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def source_id(user_id: str, source_uri: str) -> str:
    """The logical source (a file name, a URL, a note) that may get several versions."""
    return _uuid("source", user_id, source_uri)


def normalise_url(url: str) -> str:
    """The source URI of a page: the URL without its fragment (``#section`` is the same page)."""
    return url.split("#", 1)[0].strip()


def artifact_id(user_id: str, content_sha256: str) -> str:
    """The same bytes from the same user are one artifact."""
    return _uuid("artifact", user_id, content_sha256)


def job_id(user_id: str, submission_key: str) -> str:
    """A job per submission; ``submission_key`` is unique per request (or an idempotency key)."""
    return _uuid("job", user_id, submission_key)


def document_id(artifact_id: str) -> str:
    """One extracted document per artifact."""
    return _uuid("document", artifact_id)


def chunk_id(document_id: str, index: int) -> str:
    """Chunk ``index`` of a document; also used as the vector point id."""
    return _uuid("chunk", document_id, str(index))


def event_id(*parts: str) -> str:
    """An id for an event derived from its causes (job, stage, attempt...)."""
    return _uuid("event", *parts)
