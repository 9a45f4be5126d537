"""Retrieval: dense + BM25 candidates fused with reciprocal rank fusion inside Qdrant."""

from __future__ import annotations

import threading
from collections import OrderedDict

from opentelemetry.trace import SpanKind

from secondbrain import telemetry
from secondbrain.passage import IndexedPassage
from secondbrain.ports import Embedder, SearchMode, SparseEncoder, VectorFilter, VectorStore
from secondbrain.search_hits import SearchHit, hit_from_payload
from secondbrain.vector_indexes import ActiveIndexes, SearchTarget

QUERY_VECTOR_CACHE = 64


class Retriever:
    """Searches one user's collection; never another's.

    With ``indexes`` the user's active collection version is searched with its own model;
    without, the store's default version with ``embedder``.
    """

    def __init__(self, vectors: VectorStore, embedder: Embedder, sparse: SparseEncoder, *,
                 candidates: int = 50, indexes: ActiveIndexes | None = None) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.sparse = sparse
        self.candidates = candidates
        self.indexes = indexes
        # One question can need its vector twice (the fused search, then cosines inside a window):
        # the last few query vectors are kept so it is embedded once.
        self._vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _embed(self, target: SearchTarget, query: str) -> list[float]:
        key = (target.embedder.model_id, query)
        with self._lock:
            if key in self._vectors:
                self._vectors.move_to_end(key)
                return self._vectors[key]
        vector = target.embedder.embed_query(query)
        with self._lock:
            self._vectors[key] = vector
            while len(self._vectors) > QUERY_VECTOR_CACHE:
                self._vectors.popitem(last=False)
        return vector

    def target(self, user_id: str) -> SearchTarget:
        """The collection version and query model for ``user_id``."""
        return self.indexes.target(user_id) if self.indexes is not None else SearchTarget(None, self.embedder)

    def search(self, user_id: str, query: str, *, k: int = 10, mode: SearchMode = "hybrid",
               flt: VectorFilter | None = None) -> list[SearchHit]:
        """The ``k`` best chunks of ``user_id`` for ``query``."""
        target = self.target(user_id)
        dense = self._embed(target, query) if mode in ("hybrid", "dense") else None
        sparse = self.sparse.encode_query(query) if mode in ("hybrid", "sparse") else None
        if sparse is not None and not sparse.indices and mode == "sparse":
            return []  # nothing but stopwords: BM25 has nothing to match
        if sparse is not None and not sparse.indices:
            sparse, mode = None, "dense"
        with telemetry.tracer().start_as_current_span("qdrant query", kind=SpanKind.CLIENT, attributes={
                "db.system.name": "qdrant", "db.operation.name": "query", "sb.search.mode": mode,
                "sb.candidates": max(self.candidates, k)}):
            hits = self.vectors.search(user_id, dense=dense, sparse=sparse, limit=k, mode=mode, flt=flt,
                                       candidates=max(self.candidates, k), index=target.index)
        return newest_versions([hit_from_payload(h.id, h.score, h.payload) for h in hits])

    def cosines(self, user_id: str, query: str, flt: VectorFilter | None, *, limit: int) -> dict[str, float]:
        """Dense similarity of ``query`` to the ``limit`` closest chunks under ``flt``, by chunk id."""
        target = self.target(user_id)
        hits = self.vectors.search(user_id, dense=self._embed(target, query), sparse=None, limit=limit,
                                   mode="dense", flt=flt, candidates=max(self.candidates, limit), index=target.index)
        return {IndexedPassage.from_payload(h.payload, h.id).chunk_id: h.score for h in hits}


def newest_versions(hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` without those of a source's older version when its newer one is among them.

    A new version is written before the older ones leave the index (so search never has a gap); in that
    moment both can match, and an edited note would show its old words beside the new."""
    newest: dict[str, str] = {}
    for h in hits:
        if h.ingested_at > newest.get(h.source_id, ""):
            newest[h.source_id] = h.ingested_at
    return [h for h in hits if h.ingested_at == newest[h.source_id]]
