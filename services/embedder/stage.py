"""Embedder stage: ``chunks.created`` -> vectors in the user's collection -> ``chunks.indexed``.

Each chunk gets a dense vector (the model of the user's index: all-MiniLM-L6-v2 unless
configured or re-indexed otherwise) and a BM25 sparse vector, computed on the chunk text with
its title and section path in front (so a chunk deep inside "Budget > Travel" still matches
"travel budget").  Point ids are the deterministic chunk ids, so a replay overwrites instead of
duplicating.  While a re-index builds a new collection version, chunks go into both, each
embedded with its version's model.  Once a new version of a source is indexed, the chunks of
its older versions are deleted (never before: search has no gap).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from opentelemetry.trace import SpanKind

from secondbrain import ids, keys, telemetry
from secondbrain.embedding import EmbedderPool
from secondbrain.events.models import Chunk, ChunksCreated, ChunksIndexed
from secondbrain.pipeline import claimcheck, topics
from secondbrain.pipeline.errors import PermanentError
from secondbrain.pipeline.stage import Emit, JobRef
from secondbrain.ports import (
    Embedder,
    MetadataStore,
    ObjectStore,
    SparseEncoder,
    SparseVector,
    VectorFilter,
    VectorIndex,
    VectorPoint,
    VectorStore,
)
from secondbrain.stores.vector_payload import rfc3339
from secondbrain.vector_indexes import embedder_for

log = logging.getLogger(__name__)


def embedding_input(title: str, chunk: Chunk) -> str:
    """The text the models see for a chunk: title and section path give it context."""
    return _input(title, chunk.heading_path, chunk.text)


def payload_embedding_input(payload: dict[str, Any]) -> str:
    """The same text, rebuilt from a stored point's payload (a re-index embeds exactly what the stage did)."""
    return _input(str(payload.get("title") or ""), payload.get("heading_path") or (), str(payload.get("text") or ""))


def _input(title: str, heading_path: Any, text: str) -> str:
    path = " > ".join(p for p in heading_path if p and p != title)
    head = f"{title}\n{path}" if path else title
    return f"{head}\n\n{text}"


def chunk_payload(ev: ChunksCreated, chunk: Chunk, model_id: str) -> dict[str, Any]:
    """Everything search needs to show and cite a chunk without another lookup."""
    return {
        "user_id": ev.user_id, "document_id": ev.document_id, "artifact_id": ev.artifact_id,
        "source_id": ev.source_id, "job_id": ev.job_id, "chunk_id": chunk.chunk_id,
        "chunk_index": chunk.index, "title": ev.title, "modality": ev.modality,
        "content_type": ev.content_type, "captured_at": rfc3339(ev.captured_at), "ingested_at": rfc3339(ev.ingested_at),
        "text": chunk.text, "char_start": chunk.char_start, "char_end": chunk.char_end,
        "heading_path": list(chunk.heading_path), "kind": chunk.kind, "page": chunk.page,
        "t_start": chunk.t_start, "t_end": chunk.t_end, "token_count": chunk.token_count,
        "embedding_model": model_id, "source_uri": ev.source_uri, "captured_at_source": ev.captured_at_source,
        "version": ev.version, **_absolute_times(ev, chunk),
        **({"attributes": dict(chunk.attributes)} if chunk.attributes else {}),
    }


def _absolute_times(ev: ChunksCreated, chunk: Chunk) -> dict[str, str]:
    """Wall-clock start and end of a stretch of a recording whose start time is known."""
    if ev.recording_start is None or chunk.t_start is None:
        return {}
    out = {"at_start": rfc3339(ev.recording_start + timedelta(seconds=chunk.t_start))}
    if chunk.t_end is not None:
        out["at_end"] = rfc3339(ev.recording_start + timedelta(seconds=chunk.t_end))
    return out


class EmbedderStage:
    """Embeds chunks and writes them to the vector store."""

    name: ClassVar[str] = "embed"
    input_topic: ClassVar[str] = topics.CHUNKS_CREATED
    input_type: ClassVar[type[Any]] = ChunksCreated
    completes_stage: ClassVar[bool] = True

    def __init__(self, objects: ObjectStore, metadata: MetadataStore, vectors: VectorStore,
                 embedder: Embedder, sparse: SparseEncoder, *, embedders: EmbedderPool | None = None) -> None:
        """``embedder`` is the configured model (a new user's first index gets it); ``embedders`` gives the
        models of other index versions (by default only ``embedder`` is known)."""
        self.objects = objects
        self.metadata = metadata
        self.vectors = vectors
        self.embedder = embedder
        self.sparse = sparse
        self.embedders = embedders or EmbedderPool(embedder)

    def job_of(self, event: ChunksCreated) -> JobRef:
        """Job and user of the event."""
        return JobRef(event.job_id, event.user_id)

    def _chunks(self, ev: ChunksCreated) -> list[Chunk]:
        if ev.chunks_ref is None:
            return list(ev.chunks)
        if not keys.owns_key(ev.user_id, ev.chunks_ref):
            raise PermanentError("the chunk list reference is outside the user's storage", kind="unauthorized")
        return [Chunk.from_record(r) for r in claimcheck.load(self.objects, ev.chunks_ref)]

    def _gone(self, ev: ChunksCreated) -> bool:
        """Whether the document was deleted (its source deleted or its user erased) since."""
        return self.metadata.get_document(ev.user_id, ev.document_id) is None \
            or self.metadata.source_deleted(ev.user_id, ev.source_id, ev.job_id)

    def _drop_deleted(self, ev: ChunksCreated) -> None:
        """Remove what this event could still have left behind for a deleted document."""
        if ev.chunks_ref is not None and keys.owns_key(ev.user_id, ev.chunks_ref):
            self.objects.delete(ev.chunks_ref)  # written by the chunker after the deletion
        log.info("work of a deleted source dropped", extra={"job_id": ev.job_id, "document_id": ev.document_id})

    def process(self, event: ChunksCreated) -> list[Emit[Any]]:
        """Embed and index one document's chunks."""
        ev = event
        if self._gone(ev):
            self._drop_deleted(ev)
            return []
        if self.metadata.is_superseded(ev.user_id, ev.document_id):
            # A newer version of this source was extracted meanwhile: indexing this one would
            # bring back content the user replaced.
            log.info("superseded document not indexed", extra={"job_id": ev.job_id, "document_id": ev.document_id})
            return []
        chunks = self._chunks(ev)
        if len(chunks) != ev.chunk_count:
            raise PermanentError(f"expected {ev.chunk_count} chunks, found {len(chunks)}")
        inputs = [embedding_input(ev.title, c) for c in chunks]
        sparse = self.sparse.encode_documents(inputs)
        active, *building = self._live_indexes(ev.user_id)
        model = embedder_for(self.embedders, active)
        collection, points = self._write(ev, chunks, inputs, sparse, active, model)
        for index in building:
            # A re-index in progress: the new version gets the chunks too, so nothing written during
            # the backfill is missing after the switch.  Its model failing must not fail the user's
            # ingestion: the re-index compares both versions before switching and fills any gap.
            try:
                self._write(ev, chunks, inputs, sparse, index, embedder_for(self.embedders, index))
            except Exception as exc:
                log.warning("chunks not written to the index being built", extra={
                    "job_id": ev.job_id, "user_id": ev.user_id, "version": index.version, "error": str(exc)})
        if self._gone(ev):
            # Deleted while it was being embedded: the deletion may have cleared the index before
            # these points arrived, so they go again here.
            self.vectors.delete_where(ev.user_id, VectorFilter(document_ids=[ev.document_id]))
            if not self.metadata.user_exists(ev.user_id):
                self.vectors.drop_user(ev.user_id)  # erased: no collection may stay behind
            self._drop_deleted(ev)
            return []
        self.metadata.set_chunk_count(ev.user_id, ev.document_id, len(points))
        # The new version is searchable now: only then do older versions of the source leave the index.
        older = self.metadata.supersede_older(ev.user_id, ev.source_id, ev.document_id)
        if older:
            self.vectors.delete_where(ev.user_id, VectorFilter(document_ids=older))
            log.info("older versions replaced", extra={"job_id": ev.job_id, "document_id": ev.document_id,
                                                        "replaced": len(older)})
        out = ChunksIndexed(
            event_id=ids.event_id(ev.job_id, self.name), job_id=ev.job_id, user_id=ev.user_id,
            document_id=ev.document_id, collection=collection, chunk_count=len(points),
            point_ids=[p.id for p in points], embedding_model=model.model_id,
            indexed_at=datetime.now(UTC),
        )
        return [Emit(topics.CHUNKS_INDEXED, ev.user_id, out)]

    # -- index versions (see secondbrain.vector_indexes)

    def _live_indexes(self, user_id: str) -> list[VectorIndex]:
        """The user's active index first, then the one being built (if any); a user's first chunks
        create their first index, with the configured model.  Read on every event: a re-index that
        starts must see the next chunks."""
        live = [i for i in self.metadata.vector_indexes(user_id) if i.status != "retired"]
        active = [i for i in live if i.status == "active"]
        if not active:
            model = self.embedders.default
            active = [self.metadata.ensure_active_index(user_id, self.embedders.default_spec, model.model_id,
                                                        model.dimension)]
        return [*active, *(i for i in live if i.status == "building")]

    def _write(self, ev: ChunksCreated, chunks: list[Chunk], inputs: list[str], sparse: list[SparseVector],
               index: VectorIndex, model: Embedder) -> tuple[str, list[VectorPoint]]:
        """Embed with ``model`` and upsert into ``index``; the collection name and the points written."""
        dense = model.embed_documents(inputs)
        points = [
            VectorPoint(id=c.chunk_id, dense=d, sparse=s, payload=chunk_payload(ev, c, model.model_id))
            for c, d, s in zip(chunks, dense, sparse, strict=True)
        ]
        collection = self.vectors.ensure_collection(ev.user_id, index.dense_size, index=index.name)
        # The collection name holds the user id: the span names the index version instead.
        with telemetry.tracer().start_as_current_span("qdrant upsert", kind=SpanKind.CLIENT, attributes={
                "db.system.name": "qdrant", "db.operation.name": "upsert", "sb.index.version": index.version,
                "sb.index.model": index.model_id, "sb.points": len(points)}):
            self.vectors.upsert(ev.user_id, points, index=index.name)
        return collection, points
