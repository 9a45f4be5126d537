"""``GET /v1/deadletters``: the events the pipeline refused or could not process, and why.

A user sees the letters of events that named them or were signed with one of their keys, so an app's
developer can tell why its events never became searchable; an admin sees every letter.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Query

from secondbrain.ports import DeadLetterRecord
from services.ingest_gateway.deps import CurrentPrincipal, MetadataDep


def letter_json(d: DeadLetterRecord) -> dict[str, Any]:
    """A letter as the API lists it."""
    return {"failed_at": d.failed_at.isoformat() if d.failed_at else None, "topic": d.topic, "stage": d.stage,
            "event_id": d.event_id, "error_kind": d.error_kind, "error": d.error_message, "producer": d.producer,
            "user_id": d.user_id, "key_id": d.key_id, "job_id": d.job_id, "partition": d.partition,
            "offset": d.offset}


router = APIRouter(tags=["dead letters"])


@router.get("/v1/deadletters", summary="Events that were refused or failed, newest first, with the reason")
async def deadletters(principal: CurrentPrincipal, metadata: MetadataDep,
                      limit: int = Query(100, ge=1, le=1000)) -> dict[str, Any]:
    scope = None if principal.scope == "admin" else principal.user_id
    found = await asyncio.to_thread(metadata.dead_letters.list_dead_letters, scope, limit)
    return {"deadletters": [letter_json(d) for d in found]}

