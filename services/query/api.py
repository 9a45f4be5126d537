"""The query service's HTTP API."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from secondbrain.runtime import Runtime
from services.query.answer import extractive_answer
from services.query.retrieval import Retriever, SearchHit

log = logging.getLogger(__name__)


class AskIn(BaseModel):
    """A question about the user's data."""

    question: str = Field(min_length=1, max_length=2000)
    k: int = Field(6, ge=1, le=20, description="How many sources to ground the answer in.")


def source_json(n: int, h: SearchHit) -> dict[str, Any]:
    """A numbered source as sent to the client."""
    snippet = " ".join(h.text.split())
    fields = {k: v for k, v in h.to_json().items() if k not in ("text", "score")}  # the snippet stands for the text
    return {"n": n, **fields, "snippet": snippet[:300] + ("…" if len(snippet) > 300 else "")}


def create_router(rt: Runtime, current_user: Any) -> APIRouter:
    """Search routes bound to a runtime."""
    if rt.vectors is None or rt.embedder is None or rt.sparse is None:
        raise RuntimeError("the query service needs a vector store and models")
    retriever = Retriever(rt.vectors, rt.embedder, rt.sparse)
    # The answer picks sentences by the terms the search indexes: reuse the runtime's encoder.
    terms = rt.sparse
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

    @router.post("/v1/ask", summary="Ask a question; the answer streams as server-sent events")
    async def ask(body: AskIn, user: str = auth) -> EventSourceResponse:
        question = body.question.strip()
        if not question:
            raise HTTPException(422, "the question is empty")

        async def events() -> AsyncIterator[dict[str, str]]:
            t0 = time.perf_counter()
            try:
                yield {"event": "meta", "data": json.dumps({
                    "query_class": "semantic", "time_range": None, "answer_mode": "extractive",
                    "note": "No language model is configured: the answer quotes your sources."})}
                hits = await asyncio.to_thread(retriever.search, user, question, k=body.k)
                t_retrieval = time.perf_counter()
                yield {"event": "sources", "data": json.dumps([source_json(n, h) for n, h in enumerate(hits, 1)])}
                answer = extractive_answer(question, hits, encoder=terms)
                for word in answer.text.split(" "):
                    yield {"event": "token", "data": json.dumps({"text": word + " "})}
                yield {"event": "done", "data": json.dumps({
                    "answer": answer.text, "citations": answer.citations, "grounded": answer.grounded,
                    "answer_mode": "extractive",
                    "timings_ms": {"retrieval": round((t_retrieval - t0) * 1000, 1),
                                   "total": round((time.perf_counter() - t0) * 1000, 1)}})}
            except Exception:  # the stream has started: report the error in-band, without its details
                error_id = uuid.uuid4().hex[:12]
                log.exception("answering failed", extra={"error_id": error_id})
                yield {"event": "error", "data": json.dumps({
                    "message": f"the answer failed; try again (error id {error_id})", "error_id": error_id})}

        return EventSourceResponse(events())

    return router
