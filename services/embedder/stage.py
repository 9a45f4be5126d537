"""Embedder stage: ``chunks.created`` -> vectors in the user's collection -> ``chunks.indexed``.

Each chunk gets a dense vector (all-MiniLM-L6-v2) and a BM25 sparse vector, computed on
the chunk text with its title and section path in front (so a chunk deep inside
"Budget > Travel" still matches "travel budget").  Point ids are the deterministic chunk
ids, so a replay overwrites instead of duplicating.  Once a new version of a source is
indexed, the chunks of its older versions are deleted (never before: search has no gap).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from secondbrain import ids, keys
from secondbrain.events.models import Chunk, ChunksCreated, ChunksIndexed
from secondbrain.pipeline import claimcheck, topics
from secondbrain.pipeline.errors import PermanentError
from secondbrain.pipeline.stage import Emit, JobRef
from secondbrain.ports import (
    Embedder,
    MetadataStore,
    ObjectStore,
    SparseEncoder,
    VectorFilter,
    VectorPoint,
    VectorStore,
)
from secondbrain.stores.vector_payload import rfc3339

log = logging.getLogger(__name__)


def embedding_input(title: str, chunk: Chunk) -> str:
    """The text the models see for a chunk: title and section path give it context."""
    path = " > ".join(p for p in chunk.heading_path if p and p != title)
    head = f"{title}\n{path}" if path else title
    return f"{head}\n\n{chunk.text}"


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
                 embedder: Embedder, sparse: SparseEncoder) -> None:
        self.objects = objects
        self.metadata = metadata
        self.vectors = vectors
        self.embedder = embedder
        self.sparse = sparse

    def job_of(self, event: ChunksCreated) -> JobRef:
        """Job and user of the event."""
        return JobRef(event.job_id, event.user_id)

    def _chunks(self, ev: ChunksCreated) -> list[Chunk]:
        if ev.chunks_ref is None:
            return list(ev.chunks)
        if not keys.owns_key(ev.user_id, ev.chunks_ref):
            raise PermanentError("the chunk list reference is outside the user's storage", kind="unauthorized")
        return [Chunk.from_record(r) for r in claimcheck.load(self.objects, ev.chunks_ref)]

    def process(self, event: ChunksCreated) -> list[Emit[Any]]:
        """Embed and index one document's chunks."""
        ev = event
        if self.metadata.is_superseded(ev.user_id, ev.document_id):
            # A newer version of this source was extracted meanwhile: indexing this one would
            # bring back content the user replaced.
            log.info("superseded document not indexed", extra={"job_id": ev.job_id, "document_id": ev.document_id})
            return []
        chunks = self._chunks(ev)
        if len(chunks) != ev.chunk_count:
            raise PermanentError(f"expected {ev.chunk_count} chunks, found {len(chunks)}")
        inputs = [embedding_input(ev.title, c) for c in chunks]
        dense = self.embedder.embed_documents(inputs)
        sparse = self.sparse.encode_documents(inputs)
        points = [
            VectorPoint(id=c.chunk_id, dense=d, sparse=s, payload=chunk_payload(ev, c, self.embedder.model_id))
            for c, d, s in zip(chunks, dense, sparse, strict=True)
        ]
        collection = self.vectors.ensure_collection(ev.user_id, self.embedder.dimension)
        self.vectors.upsert(ev.user_id, points)
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
            point_ids=[p.id for p in points], embedding_model=self.embedder.model_id,
            indexed_at=datetime.now(UTC),
        )
        return [Emit(topics.CHUNKS_INDEXED, ev.user_id, out)]
