"""Embedder stage: ``chunks.created`` -> vectors in the user's collection -> ``chunks.indexed``.

Ports: the object store (large chunk lists), the catalog (chunk counts, older versions), the
index versions (which collection and model a user's chunks go to), the vector store, the models, and
the job fence (vectors are written only while the job is live: a deletion or erasure waits for the
write and then removes it, and none starts after it).

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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import ClassVar

from opentelemetry.trace import SpanKind

from secondbrain import ids, keys, telemetry
from secondbrain.embedding import EmbedderPool
from secondbrain.errors import PermanentError
from secondbrain.events.models import Chunk, ChunksCreated, ChunksIndexed
from secondbrain.passage import IndexedPassage, embedding_text
from secondbrain.pipeline import claimcheck, topology
from secondbrain.pipeline.stage import JobRef
from secondbrain.ports import (
    Catalog,
    Embedder,
    IndexVersions,
    JobFence,
    JobGone,
    ObjectStore,
    SparseEncoder,
    SparseVector,
    VectorFilter,
    VectorIndex,
    VectorPoint,
    VectorStore,
)
from secondbrain.sparse import tie_broken
from secondbrain.time_formats import rfc3339
from secondbrain.vector_indexes import ACTIVE_INDEX_TTL_S, ActiveIndexes, embedder_for

log = logging.getLogger(__name__)


def embedding_input(title: str, chunk: Chunk) -> str:
    """The text the models see for a chunk: title and section path give it context."""
    return embedding_text(title, chunk.heading_path, chunk.text)


def indexed_passage(ev: ChunksCreated, chunk: Chunk, model_id: str) -> IndexedPassage:
    """The passage stored for ``chunk``: everything search needs to show and cite it without another lookup."""
    at_start = at_end = None
    if ev.recording_start is not None and chunk.t_start is not None:
        # Wall-clock start and end of a stretch of a recording whose start time is known.
        at_start = rfc3339(ev.recording_start + timedelta(seconds=chunk.t_start))
        if chunk.t_end is not None:
            at_end = rfc3339(ev.recording_start + timedelta(seconds=chunk.t_end))
    return IndexedPassage(
        user_id=ev.user_id, document_id=ev.document_id, artifact_id=ev.artifact_id, source_id=ev.source_id,
        job_id=ev.job_id, chunk_id=chunk.chunk_id, chunk_index=chunk.index, title=ev.title, modality=ev.modality,
        content_type=ev.content_type, captured_at=rfc3339(ev.captured_at), ingested_at=rfc3339(ev.ingested_at),
        text=chunk.text, char_start=chunk.char_start, char_end=chunk.char_end, heading_path=tuple(chunk.heading_path),
        kind=chunk.kind, page=chunk.page, t_start=chunk.t_start, t_end=chunk.t_end, token_count=chunk.token_count,
        embedding_model=model_id, source_uri=ev.source_uri, captured_at_source=ev.captured_at_source,
        version=ev.version, at_start=at_start, at_end=at_end, speakers=tuple(chunk.speakers),
        turn_ids=tuple(chunk.turn_ids), links=tuple(chunk.links), tags=tuple(chunk.tags),
        attributes=dict(chunk.attributes),
        mentions=tuple(chunk.mentions), word_times=tuple(chunk.word_times), recurrence=ev.recurrence,
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """The shared part of one event's work: its chunks, what the models saw, their vectors, and what became of
    them in the user's active index (``written``: the collection and points; ``refused``: the job had ended or
    gone, nothing was written)."""

    chunks: list[Chunk]
    inputs: list[str]
    sparse: list[SparseVector]
    index: VectorIndex
    model: Embedder
    dense: list[list[float]]
    written: tuple[str, list[VectorPoint]] | None = None
    refused: JobGone | None = None


class EmbedderStage:
    """Embeds chunks and writes them to the vector store."""

    step: ClassVar[topology.Step] = topology.EMBED

    def __init__(self, objects: ObjectStore, *, catalog: Catalog, indexes: IndexVersions, fence: JobFence,
                 vectors: VectorStore, embedder: Embedder, sparse: SparseEncoder,
                 embedders: EmbedderPool | None = None, index_ttl_s: float = ACTIVE_INDEX_TTL_S) -> None:
        """``embedder`` is the configured model (a new user's first index gets it); ``embedders`` gives the
        models of other index versions (by default only ``embedder`` is known).  A user's index versions
        are trusted for ``index_ttl_s``, as searches trust them: a re-index drops the old collection only
        after that long, and reconciles what it missed before switching."""
        self.objects = objects
        self.catalog = catalog
        self.indexes = indexes
        self.fence = fence
        self.vectors = vectors
        self.embedder = embedder
        self.sparse = sparse
        self.embedders = embedders or EmbedderPool(embedder)
        self.active_indexes = ActiveIndexes(indexes, self.embedders, embedder, ttl_s=index_ttl_s)

    def job_of(self, event: ChunksCreated) -> JobRef:
        """Job, user, source and document of the event."""
        return JobRef(event.job_id, event.user_id, event.source_id, event.document_id)

    def _chunks(self, ev: ChunksCreated) -> list[Chunk]:
        if ev.chunks_ref is None:
            chunks = list(ev.chunks)
        elif not keys.owns_key(ev.user_id, ev.chunks_ref):
            raise PermanentError("the chunk list reference is outside the user's storage", kind="unauthorized")
        else:
            chunks = [Chunk.from_record(r) for r in claimcheck.load(self.objects, ev.chunks_ref)]
        if len(chunks) != ev.chunk_count:
            raise PermanentError(f"expected {ev.chunk_count} chunks, found {len(chunks)}")
        return chunks

    def prepare(self, events: Sequence[ChunksCreated],
                chunk_lists: Sequence[list[Chunk]] | None = None) -> list[Prepared]:
        """Every event's chunks embedded with as few model calls as there are models in use (one, usually),
        and written to the active index with one update per user (one flush instead of one per event), under
        the fences of all their jobs: the chunks of all the events waiting in a lane go together."""
        work = []
        for n, ev in enumerate(events):
            chunks = chunk_lists[n] if chunk_lists is not None else self._chunks(ev)
            inputs = [embedding_input(ev.title, c) for c in chunks]
            active = self._live_indexes(ev.user_id)[0]
            work.append((chunks, inputs, active, embedder_for(self.embedders, active)))
        dense_by_model: dict[str, list[list[float]]] = {}
        for model in {id(w[3]): w[3] for w in work}.values():
            texts = [t for w in work if w[3] is model for t in w[1]]
            dense_by_model[model.model_id] = model.embed_documents(texts) if texts else []
        out, taken = [], dict.fromkeys(dense_by_model, 0)
        for chunks, inputs, active, model in work:
            start = taken[model.model_id]
            taken[model.model_id] = start + len(inputs)
            out.append(Prepared(chunks, inputs, self.sparse.encode_documents(inputs), active, model,
                                dense_by_model[model.model_id][start:start + len(inputs)]))
        return self._write_all(events, out)

    def _write_all(self, events: Sequence[ChunksCreated], prepared: list[Prepared]) -> list[Prepared]:
        """Write each user's embedded events to their active index at once (see :meth:`prepare`)."""
        out = list(prepared)
        for user_id in dict.fromkeys(ev.user_id for ev in events):
            mine = [i for i, ev in enumerate(events) if ev.user_id == user_id]
            with self.fence.hold_live(user_id, [events[i].job_id for i in mine]) as states:
                live = []
                for i in mine:
                    state = states[events[i].job_id]
                    if state == "live":
                        live.append(i)
                    else:
                        out[i] = replace(out[i], refused=JobGone(events[i].job_id, state))
                by_index: dict[str, list[int]] = {}
                for i in live:
                    by_index.setdefault(out[i].index.name, []).append(i)
                for same in by_index.values():
                    index = out[same[0]].index
                    points = {i: self._points(events[i], out[i].chunks, out[i].sparse, out[i].model, out[i].dense)
                              for i in same}
                    collection = self._upsert(user_id, index, [pt for i in same for pt in points[i]])
                    for i in same:
                        out[i] = replace(out[i], written=(collection, points[i]))
        return out

    def process(self, event: ChunksCreated) -> list[ChunksIndexed]:
        """Embed and index one document's chunks."""
        return self.process_prepared(event, self.prepare([event])[0])

    def process_batch(self, events: Sequence[ChunksCreated],
                      admitted: Sequence[object] | None = None) -> list[list[ChunksIndexed] | Exception]:
        """Embed and index the chunks of several documents: one model call and one write per user's index
        (:meth:`prepare`), then each document finished on its own (a bad one fails alone).  A chunk list that
        cannot be read fails its event alone, before anything is embedded."""
        results: list[list[ChunksIndexed] | Exception] = [[] for _ in events]
        readable, chunk_lists = [], []
        for i, ev in enumerate(events):
            try:
                chunk_lists.append(self._chunks(ev))
                readable.append(i)
            except Exception as exc:
                results[i] = exc
        prepared = self.prepare([events[i] for i in readable], chunk_lists) if readable else []
        built: list[tuple[int, Prepared]] = []
        for i, p in zip(readable, prepared, strict=True):
            try:
                self._build(events[i], p)
                built.append((i, p))
            except Exception as exc:
                results[i] = exc
        # Every document searchable with one write per user (not one per document).
        for user_id in dict.fromkeys(events[i].user_id for i, _p in built):
            mine = [(i, p) for i, p in built if events[i].user_id == user_id]
            assert all(p.written is not None for _i, p in mine)
            recorded = self.catalog.documents_indexed(user_id, [
                (events[i].document_id, events[i].source_id, len(p.written[1]) if p.written else 0, events[i].job_id)
                for i, p in mine])
            for (i, p), older in zip(mine, recorded, strict=True):
                try:
                    if isinstance(older, JobGone):
                        self._undo(events[i], older)
                        raise older
                    results[i] = self._indexed(events[i], p, older)
                except Exception as exc:
                    results[i] = exc
        return results

    def process_prepared(self, event: ChunksCreated, prepared: Prepared) -> list[ChunksIndexed]:
        """Finish indexing one document's chunks, embedded and written to the active index by :meth:`prepare`."""
        ev, p = event, prepared
        self._build(ev, p)
        assert p.written is not None
        # The new version is searchable now: only then do older versions of the source leave the index.
        try:
            older = self.catalog.document_indexed(ev.user_id, ev.document_id, ev.source_id, len(p.written[1]),
                                                  job_id=ev.job_id)
        except JobGone as gone:
            self._undo(ev, gone)
            raise
        return self._indexed(ev, p, older)

    def _build(self, ev: ChunksCreated, p: Prepared) -> None:
        """Raise what :meth:`prepare` found of the event's job; write its chunks to an index being built too."""
        if p.refused is not None:
            raise p.refused
        if p.written is None:  # prepare() writes every event whose job is live, or refuses it
            raise RuntimeError("process_prepared needs what prepare() returned")
        # A re-index in progress: the new version gets the chunks too, so nothing written during the backfill
        # is missing after the switch.  Its model failing must not fail the user's ingestion: the re-index
        # compares both versions before switching and fills any gap.  Embedded before the fence is taken.
        building = []
        for index in self._live_indexes(ev.user_id)[1:]:
            try:
                model = embedder_for(self.embedders, index)
                building.append((index, model, model.embed_documents(p.inputs)))
            except Exception as exc:
                log.warning("chunks not written to the index being built", extra={
                    "job_id": ev.job_id, "user_id": ev.user_id, "version": index.version, "error": str(exc)})
        if building:
            with self.fence.hold(ev.user_id, ev.job_id):
                for index, model, dense in building:
                    try:
                        self._write(ev, p.chunks, p.sparse, index, model, dense)
                    except Exception as exc:
                        log.warning("chunks not written to the index being built", extra={
                            "job_id": ev.job_id, "user_id": ev.user_id, "version": index.version, "error": str(exc)})

    def _undo(self, ev: ChunksCreated, gone: JobGone) -> None:
        """The job ended or went just after the write: this job's passages go again (only this job's: a newer job
        of the same bytes writes the same points under its own id).  Not when the job succeeded: this was a second
        copy of its event (delivery is at least once), which wrote the very points it finished with."""
        if gone.status != "succeeded":
            self.vectors.delete_where(ev.user_id, VectorFilter(document_ids=[ev.document_id], job_ids=[ev.job_id]))

    def _indexed(self, ev: ChunksCreated, p: Prepared, older: list[str]) -> list[ChunksIndexed]:
        """The older versions leave the index; the event saying the document is searchable."""
        assert p.written is not None
        collection, points = p.written
        if older:
            self.vectors.delete_where(ev.user_id, VectorFilter(document_ids=older))
            log.info("older versions replaced", extra={"job_id": ev.job_id, "document_id": ev.document_id,
                                                        "replaced": len(older)})
        return [ChunksIndexed(
            event_id=ids.event_id(ev.job_id, self.step.name), job_id=ev.job_id, user_id=ev.user_id,
            document_id=ev.document_id, collection=collection, chunk_count=len(points),
            point_ids=[pt.id for pt in points], embedding_model=p.model.model_id, indexed_at=datetime.now(UTC),
        )]

    def discard(self, event: ChunksCreated, outputs: list[ChunksIndexed]) -> None:
        """The source was deleted (or this version replaced) while it was embedded: its passages go again
        (the deletion may have cleared the index before they arrived), and so does the chunk list."""
        ev = event
        self.vectors.delete_where(ev.user_id, VectorFilter(document_ids=[ev.document_id]))
        if ev.chunks_ref is not None and keys.owns_key(ev.user_id, ev.chunks_ref):
            self.objects.delete(ev.chunks_ref)

    # -- index versions (see secondbrain.vector_indexes)

    def _live_indexes(self, user_id: str) -> list[VectorIndex]:
        """The user's active index first, then the one being built (if any); a user's first chunks
        create their first index, with the configured model.  Remembered for a moment only: a re-index
        that starts must see the next chunks (and fills any it missed before switching)."""
        found = self.active_indexes.live(user_id)
        if not found or found[0].status != "active":
            model = self.embedders.default
            found = [self.indexes.ensure_active_index(user_id, self.embedders.default_spec, model.model_id,
                                                      model.dimension), *found]
            self.active_indexes.remember(user_id, found)
        return found

    def _points(self, ev: ChunksCreated, chunks: list[Chunk], sparse: list[SparseVector], model: Embedder,
                dense: list[list[float]]) -> list[VectorPoint]:
        return [
            VectorPoint(id=c.chunk_id, dense=d, sparse=tie_broken(s, c.chunk_id),
                        payload=indexed_passage(ev, c, model.model_id).to_payload())
            for c, d, s in zip(chunks, dense, sparse, strict=True)
        ]

    def _upsert(self, user_id: str, index: VectorIndex, points: list[VectorPoint]) -> str:
        """Upsert ``points`` into ``index`` (one update and one flush); the collection name."""
        collection = self.vectors.ensure_collection(user_id, index.dense_size, index=index.name)
        # The collection name holds the user id: the span names the index version instead.
        with telemetry.tracer().start_as_current_span("qdrant upsert", kind=SpanKind.CLIENT, attributes={
                "db.system.name": "qdrant", "db.operation.name": "upsert", "sb.index.version": index.version,
                "sb.index.model": index.model_id, "sb.points": len(points)}):
            self.vectors.upsert(user_id, points, index=index.name)
        return collection

    def _write(self, ev: ChunksCreated, chunks: list[Chunk], sparse: list[SparseVector], index: VectorIndex,
               model: Embedder, dense: list[list[float]]) -> tuple[str, list[VectorPoint]]:
        """Upsert one event's embedded chunks into ``index``; the collection name and the points written."""
        points = self._points(ev, chunks, sparse, model, dense)
        return self._upsert(ev.user_id, index, points), points
