"""The query service's HTTP API."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query

from secondbrain.runtime import Runtime
from services.query.retrieval import Retriever


def create_router(rt: Runtime, current_user: Any) -> APIRouter:
    """Search routes bound to a runtime."""
    if rt.vectors is None or rt.embedder is None or rt.sparse is None:
        raise RuntimeError("the query service needs a vector store and models")
    retriever = Retriever(rt.vectors, rt.embedder, rt.sparse)
    router = APIRouter(tags=["query"])
    auth = Depends(current_user)

    @router.get("/v1/search", summary="Hybrid search over your data")
    async def search(
        q: Annotated[str, Query(min_length=1, max_length=2000, description="What to look for.")],
        user: str = auth,
        k: Annotated[int, Query(ge=1, le=100)] = 10,
        mode: Literal["hybrid", "dense", "sparse"] = "hybrid",
    ) -> dict[str, Any]:
        if not q.strip():
            raise HTTPException(422, "the query is empty")
        t0 = time.perf_counter()
        hits = await asyncio.to_thread(retriever.search, user, q, k=k, mode=mode)
        return {"query": q, "mode": mode, "hits": [h.to_json() for h in hits],
                "took_ms": round((time.perf_counter() - t0) * 1000, 1)}

    return router
