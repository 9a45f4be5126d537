"""Claim check: payloads too large for a Kafka message travel by reference.

The stage stores the payload as JSON in the object store under the user's prefix and
puts only the key in the event; the next stage loads it back.
"""

from __future__ import annotations

import json
from typing import Any

from secondbrain.pipeline.errors import PermanentError
from secondbrain.ports import ObjectNotFound, ObjectStore

# Well under Kafka's default 1 MB message limit, leaving room for the envelope and headers.
INLINE_LIMIT_BYTES = 700_000


def too_large(payload: Any, limit: int = INLINE_LIMIT_BYTES) -> bool:
    """Whether ``payload`` (JSON-able records) should travel by reference: its JSON size is over ``limit``.

    The JSON size is a safe upper bound of the Avro size, so everything kept inline fits a message.
    """
    return len(json.dumps(payload, ensure_ascii=False).encode("utf-8")) > limit


def store(objects: ObjectStore, key: str, payload: Any) -> str:
    """Write ``payload`` as JSON at ``key`` and return the key."""
    objects.put(key, json.dumps(payload, ensure_ascii=False).encode("utf-8"), content_type="application/json")
    return key


def load(objects: ObjectStore, key: str) -> Any:
    """Read a claim-checked payload; a missing one is a permanent error (nothing to retry)."""
    try:
        return json.loads(objects.get(key))
    except ObjectNotFound as exc:
        raise PermanentError(f"the claim-checked payload {key} is missing from object storage") from exc
