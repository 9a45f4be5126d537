"""Claim check: payloads too large for a Kafka message travel by reference.

The stage stores the payload as JSON in the object store under the user's prefix and
puts only the key in the event; the next stage loads it back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from secondbrain.errors import PermanentError
from secondbrain.ports import ObjectNotFound, ObjectStore

# Well under Kafka's default 1 MB message limit, leaving room for the envelope and headers.
INLINE_LIMIT_BYTES = 700_000


def offload(objects: ObjectStore, key: str, records: Any, limit: int = INLINE_LIMIT_BYTES) -> str | None:
    """Write ``records`` (JSON-able; datetimes as ISO 8601) at ``key`` when their JSON is over ``limit``
    bytes and return the key; return ``None`` (nothing written) when they are small enough to travel inline.

    The JSON size is a safe upper bound of the Avro size, so everything kept inline fits a message.
    """
    data = oversized(records, limit)
    if data is None:
        return None
    objects.put(key, data, content_type="application/json")
    return key


def oversized(records: Any, limit: int = INLINE_LIMIT_BYTES) -> bytes | None:
    """The JSON :func:`offload` would write for ``records``, or ``None`` when they travel inline."""
    data = json.dumps(records, ensure_ascii=False, default=_iso).encode("utf-8")
    return data if len(data) > limit else None


def load(objects: ObjectStore, key: str) -> Any:
    """Read a claim-checked payload; a missing one is a permanent error (nothing to retry)."""
    try:
        return json.loads(objects.get(key))
    except ObjectNotFound as exc:
        raise PermanentError(f"the claim-checked payload {key} is missing from object storage") from exc


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
