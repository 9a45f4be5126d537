"""``GET /v1/status``: what another app on this machine needs to publish to secondbrain.

Its own small router, so other status sections can join it without touching the rest of the app.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from secondbrain.pipeline import topics
from secondbrain.runtime import Runtime


def create_router(rt: Runtime, current_user: Any) -> APIRouter:
    """The status route (any signed-in user: the broker address is no secret, but the API is keyed)."""
    router = APIRouter(tags=["status"])
    auth = Depends(current_user)

    @router.get("/v1/status", summary="Where other apps publish events: the Kafka broker and topics")
    async def status(_user: str = auth) -> dict[str, Any]:
        s = rt.settings
        return {
            "mode": s.mode,
            "kafka": {
                "bootstrap": s.kafka_bootstrap,
                "security_protocol": s.kafka_security_protocol,
                # In embedded mode the broker listens on loopback only: apps on this machine reach it.
                "loopback_only": s.mode == "embedded",
                "topics": {"artifacts": rt.names(topics.ARTIFACTS_SUBMITTED),
                           "urls": rt.names(topics.URLS_REQUESTED),
                           "deadletter": rt.names(topics.DEAD_LETTER)},
            },
        }

    return router
