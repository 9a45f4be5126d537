"""The pipeline stages run by hand (extract -> chunk -> embed) on their ports, without Kafka.

Each test runs on the in-memory twins (the fast lane: metadata, vectors and the hash embedder) and on
PostgreSQL (a fresh database) with a qdrant-edge vector store and the int8 MiniLM embedder; the rest is
real throughout: files for objects and the BM25 encoder.  Every test uses its own user
so tests do not see each other's vectors.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from secondbrain import ids, keys, topic_names
from secondbrain.embedding import load_embedder
from secondbrain.errors import PermanentError, RetryableError
from secondbrain.events import bodies
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import (
    ArtifactSubmitted,
    Chunk,
    ChunksCreated,
    ChunksIndexed,
    DocumentExtracted,
    Segment,
    UrlRequested,
)
from secondbrain.pipeline import claimcheck, core, topology
from secondbrain.ports import ArtifactRecord, Embedder, JobGone, MetadataStore, OutboxMessage, VectorFilter, VectorStore
from secondbrain.sparse import Bm25Encoder
from secondbrain.stores.memory import HashEmbedder, MemoryMetadataStore
from secondbrain.stores.memory.vectors import MemoryVectorStore
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.objects_fs import FileObjectStore
from secondbrain.stores.vectors_edge import EdgeVectorStore
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.html import HtmlExtractor
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage, resolved_job_id
from services.extractors.text import TextExtractor
from services.fetcher.fetch import FetchPolicy
from services.fetcher.stage import FetcherStage
from services.query.retrieval import Retriever
from tests.pg import base_dsn, fresh_database

MAX_BYTES = 5 * 1024 * 1024
CODEC = EventCodec()

# --------------------------------------------------------------------------- fixtures

# Size limits, not store logic: tens of thousands of segments take seconds to extract, so these tests run
# once, on PostgreSQL, in the whole suite rather than in the fast lane.
SIZE_LIMITS = pytest.mark.parametrize("metadata", ["postgres"], indirect=True)


@pytest.fixture(scope="module", params=[pytest.param("memory", marks=pytest.mark.fast), "postgres"])
def metadata(request: pytest.FixtureRequest) -> Iterator[MetadataStore]:
    """The stages' stores: the in-memory twin (the fast lane) and a real PostgreSQL database."""
    if request.param == "memory":
        with MemoryMetadataStore() as memory:
            yield memory
        return
    with base_dsn() as base, fresh_database(base) as dsn:
        store = PostgresMetadataStore(dsn, min_size=1, max_size=4)
        try:
            store.database.migrate()
            yield store
        finally:
            store.database.close()


@pytest.fixture(scope="module")
def embedder(metadata: MetadataStore) -> Embedder:
    """The hash twin with the in-memory metadata (the fast lane loads no model), the real model with PostgreSQL."""
    return HashEmbedder() if isinstance(metadata, MemoryMetadataStore) else load_embedder()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, metadata: MetadataStore) -> Path:
    return tmp_path_factory.mktemp("stages")  # one per metadata store: their vectors never mix


@pytest.fixture(scope="module")
def objects(workdir: Path) -> FileObjectStore:
    return FileObjectStore(workdir / "objects")


@pytest.fixture(scope="module")
def vectors(workdir: Path, metadata: MetadataStore) -> Iterator[VectorStore]:
    """The in-memory twin with the in-memory metadata (the fast lane writes no shards), the edge engine with
    PostgreSQL."""
    store = MemoryVectorStore() if isinstance(metadata, MemoryMetadataStore) else EdgeVectorStore(workdir / "vectors")
    yield store
    store.close()


# Text and HTML only: these tests are about the stages' contract, not the formats.
TEXT_ONLY = ExtractorSet({"text": TextExtractor(), "html": HtmlExtractor()})


class Pipeline:
    """The three stages wired to the same stores, called directly."""

    def __init__(self, metadata: MetadataStore, objects: FileObjectStore, vectors: VectorStore,
                 embedder: Embedder) -> None:
        self.metadata = metadata
        self.objects = objects
        self.vectors = vectors
        self.extract = ExtractorStage(objects, **roles(metadata), extractors=TEXT_ONLY, max_bytes=MAX_BYTES)
        self.chunk = ChunkerStage(objects, ChunkingConfig(), fence=metadata.fence)
        self.embed = EmbedderStage(objects, catalog=metadata.catalog, indexes=metadata.indexes, fence=metadata.fence,
                                   vectors=vectors, embedder=embedder, sparse=Bm25Encoder())
        self.retriever = Retriever(vectors, embedder, Bm25Encoder())

    def run(self, event: ArtifactSubmitted) -> tuple[DocumentExtracted, ChunksCreated, ChunksIndexed]:
        """The three stages as the runner drives them (the bookkeeping and "still wanted?" included)."""
        jobs = self.metadata.jobs
        doc = only(core.run(self.extract, event, jobs, trusted=True), topic_names.DOCUMENTS_EXTRACTED,
                   DocumentExtracted)
        chunks = only(core.run(self.chunk, doc, jobs), topic_names.CHUNKS_CREATED, ChunksCreated)
        indexed = only(core.run(self.embed, chunks, jobs), topic_names.CHUNKS_INDEXED, ChunksIndexed)
        return doc, chunks, indexed


def roles(m: MetadataStore) -> dict[str, Any]:
    """The metadata roles the fetcher and the extractor take (and the job fence)."""
    return {"users": m.users, "api_keys": m.api_keys, "intake": m.intake, "jobs": m.jobs, "fence": m.fence,
            "catalog": m.catalog,
            "lifecycle": m.lifecycle}


@pytest.fixture(scope="module")
def pipeline(metadata: MetadataStore, objects: FileObjectStore, vectors: VectorStore,
             embedder: Embedder) -> Pipeline:
    return Pipeline(metadata, objects, vectors, embedder)


@pytest.fixture
def user(metadata: MetadataStore) -> str:
    """A fresh, known user."""
    user_id = f"u{uuid.uuid4().hex[:12]}"
    metadata.users.ensure_user(user_id)
    return user_id


# --------------------------------------------------------------------------- helpers


def only(outputs: list[Any], topic: str, cls: type[Any]) -> Any:
    """The one event a stage emitted, of type ``cls`` (the runner publishes it to ``topic``)."""
    assert len(outputs) == 1
    (event,) = outputs
    assert isinstance(event, cls)
    assert topology.PIPELINE[[s.output_type for s in topology.PIPELINE].index(cls)].output == topic
    return event


def submit_like_gateway(p: Pipeline, user: str, raw: bytes, *, content_type: str = "text/markdown",
                        filename: str | None = "notes.md", title: str | None = None,
                        captured_at: datetime | None = None, source_uri: str | None = None,
                        attributes: dict[str, str] | None = None,
                        submitted_at: datetime | None = None) -> ArtifactSubmitted:
    """What the ingest gateway does: bytes to the object store, artifact + job + outbox in one transaction."""
    sha = ids.sha256_hex(raw)
    artifact_id = ids.artifact_id(user, sha)
    object_key = keys.artifact_key(user, artifact_id)
    if p.objects.stat(object_key) is None:
        p.objects.put(object_key, raw, size=len(raw), content_type=content_type)
    job_id = ids.job_id(user, str(uuid.uuid4()))
    now = submitted_at or datetime.now(UTC)
    source_uri = source_uri or f"file:{filename or sha[:16]}"
    attributes = attributes or {}
    event = ArtifactSubmitted(
        event_id=ids.event_id(job_id, "submitted"), job_id=job_id, user_id=user, source_uri=source_uri,
        source_id=ids.source_id(user, source_uri), artifact_id=artifact_id, content_type=content_type,
        filename=filename, title=title, object_key=object_key, content=None, size_bytes=len(raw),
        sha256=sha, captured_at=captured_at, submitted_at=now, producer="gateway", attributes=attributes,
    )
    record = ArtifactRecord(
        artifact_id=artifact_id, user_id=user, source_id=event.source_id or "", source_uri=source_uri,
        object_key=object_key, content_type=content_type, size_bytes=len(raw), sha256=sha, filename=filename,
        title=title, captured_at=captured_at, submitted_at=now, producer="gateway", attributes=attributes,
    )
    message = OutboxMessage(topic=topic_names.ARTIFACTS_SUBMITTED, key=user.encode(), value=CODEC.encode(event),
                            headers=CODEC.headers(event))
    result = p.metadata.intake.submit(record, job_id, [message])
    assert result.created
    return event


def external_event(user: str, raw: bytes, *, content_type: str = "text/plain", filename: str | None = None,
                   source_uri: str = "app:clipper/1", **kw: Any) -> ArtifactSubmitted:
    """What another application publishes straight to Kafka: inline bytes, no job row, no ids."""
    event = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=source_uri,
                              content_type=content_type, size_bytes=len(raw), submitted_at=datetime.now(UTC),
                              producer="clipper", content=raw, filename=filename, **kw)
    CODEC.encode(event)  # a valid public event
    return event


def roundtrip(event: Any) -> Any:
    """Encode with the schema registry (schema-valid) and decode again."""
    data = CODEC.encode(event)
    back = CODEC.decode(data, type(event))
    assert type(back) is type(event)
    return back


def points_of(p: Pipeline, user: str, document_id: str) -> list[dict[str, Any]]:
    hits, _ = p.vectors.scroll(user, flt=VectorFilter(document_ids=[document_id]), limit=1000)
    return [h.payload for h in hits]


def full_text_of(doc: DocumentExtracted) -> str:
    return doc.text


def segments_of(doc: DocumentExtracted) -> list[Segment]:
    """The document's segments with their texts (they travel as offsets into ``doc.text``)."""
    return bodies.with_texts(doc.text, doc.segments)


INVOICE = """\
# Invoice 8391

ACME Hosting GmbH billed us 129.00 EUR for the dedicated server in March 2024.
Payment is due on 30 March 2024 by bank transfer, reference INV-8391.
"""

INVOICE_OTHER = """\
# Invoice 7710

ACME Hosting GmbH billed us 129.00 EUR for the dedicated server in February 2024.
Payment is due on 29 February 2024 by bank transfer, reference INV-7710.
"""

TRIP = """\
---
title: Lisbon trip
date: 2023-09-14
---
# Lisbon

## Travel

We take the night train to Lisbon and stay four nights near the river.
The hotel has a rooftop pool.

## Food

Pastel de nata at the bakery in Belém, grilled sardines by the harbour.
"""

RECIPE = """\
# Sourdough bread

Feed the starter the evening before. Mix flour, water and salt, then fold the dough every
half hour. Bake in a hot cast-iron pot for forty minutes.
"""


# --------------------------------------------------------------------------- the happy path


def test_gateway_submission_flows_through_all_stages(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, TRIP.encode(), filename="lisbon.md")
    doc, chunks, indexed = pipeline.run(ev)

    # ids are consistent from stage to stage and derived deterministically
    assert ev.job_id and ev.artifact_id and ev.source_id
    assert (doc.job_id, doc.user_id, doc.artifact_id, doc.source_id) == (ev.job_id, user, ev.artifact_id,
                                                                          ev.source_id)
    assert doc.document_id == ids.document_id(ev.artifact_id)
    assert doc.event_id == ids.event_id(ev.job_id, "extract")
    assert (chunks.job_id, chunks.document_id, chunks.artifact_id, chunks.source_id) == (
        doc.job_id, doc.document_id, doc.artifact_id, doc.source_id)
    assert chunks.event_id == ids.event_id(ev.job_id, "chunk")
    assert chunks.title == doc.title == "Lisbon trip"
    assert chunks.captured_at == doc.captured_at
    assert chunks.chunk_count == len(chunks.chunks) >= 1
    assert [c.chunk_id for c in chunks.chunks] == [ids.chunk_id(doc.document_id, i)
                                                   for i in range(chunks.chunk_count)]
    assert (indexed.job_id, indexed.document_id, indexed.user_id) == (ev.job_id, doc.document_id, user)
    assert indexed.event_id == ids.event_id(ev.job_id, "embed")
    assert indexed.point_ids == [c.chunk_id for c in chunks.chunks]
    assert indexed.chunk_count == chunks.chunk_count
    assert indexed.embedding_model == pipeline.embed.embedder.model_id
    assert indexed.collection == f"u_{user}_v1"

    # the document's structure survived
    assert doc.modality == "markdown"
    assert [s.kind for s in doc.segments] == ["heading", "heading", "paragraph", "heading", "paragraph"]
    assert doc.segments[2].heading_path == ["Lisbon", "Travel"]
    text = full_text_of(doc)
    assert doc.text_length == len(text)
    for c in chunks.chunks:
        assert text[c.char_start:c.char_end] == c.text

    # every event is schema-valid and survives the wire
    for event in (doc, chunks, indexed):
        back = roundtrip(event)
        assert back.event_id == event.event_id and back.job_id == event.job_id
    assert roundtrip(doc).segments == doc.segments
    assert roundtrip(chunks).chunks == chunks.chunks
    assert roundtrip(doc).captured_at == doc.captured_at

    # the gateway's outbox message decodes to the submitted event
    assert CODEC.decode(CODEC.encode(ev), ArtifactSubmitted) == ev


def test_document_row_is_saved(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, TRIP.encode(), filename="lisbon.md")
    doc, chunks, _ = pipeline.run(ev)
    row = pipeline.metadata.catalog.get_document(user, doc.document_id)
    assert row is not None
    assert (row.user_id, row.artifact_id, row.source_id) == (user, ev.artifact_id, ev.source_id)
    assert row.title == "Lisbon trip"
    assert row.modality == "markdown"
    assert row.content_type == "text/markdown"
    assert row.char_count == doc.text_length
    assert row.chunk_count == chunks.chunk_count  # set by the embedder
    assert row.metadata["filename"] == "lisbon.md"
    assert row.metadata["front_matter.date"] == "2023-09-14"
    # another user cannot read it
    assert pipeline.metadata.catalog.get_document("someone-else", doc.document_id) is None


def test_captured_at_precedence(pipeline: Pipeline, user: str) -> None:
    submitted = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    user_time = datetime(2020, 2, 2, 8, 30, tzinfo=timezone(timedelta(hours=2)))
    with_date = b"---\ndate: 2019-07-04T10:00:00+00:00\n---\n# Fireworks\n\nWe watched fireworks."
    without_date = b"# Plain\n\nNo date in here."

    cases = [
        (with_date, user_time, user_time, "user"),  # user-supplied beats the file's date
        (with_date, None, datetime(2019, 7, 4, 10, tzinfo=UTC), "file_metadata"),
        (without_date, None, submitted, "ingested"),  # nothing stated: the submission time
    ]
    for raw, captured, expected, source in cases:
        ev = submit_like_gateway(pipeline, user, raw + source.encode(), filename=None, captured_at=captured,
                                 submitted_at=submitted)
        doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
        assert doc.captured_at == expected and doc.captured_at_source == source
        row = pipeline.metadata.catalog.get_document(user, doc.document_id)
        assert row is not None
        assert row.captured_at == expected, source
        assert row.captured_at_source == source
        assert row.ingested_at >= submitted


def test_title_precedence(pipeline: Pipeline, user: str) -> None:
    cases = [
        (b"---\ntitle: FM title\n---\n# H1\n\ntext", "User title", "notes.md", "User title"),
        (b"---\ntitle: FM title\n---\n# H1\n\ntext", None, "notes.md", "FM title"),
        (b"# H1 title\n\ntext", None, "notes.md", "H1 title"),
        (b"## Sub\n\ntext", None, "notes.md", "notes.md"),
        (b"## Sub heading\n\ntext", None, None, "Sub heading"),
    ]
    for i, (raw, title, filename, expected) in enumerate(cases):
        ev = submit_like_gateway(pipeline, user, raw + f"\n\ncase {i}".encode(), title=title,
                                 filename=filename)
        doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
        assert doc.title == expected


def test_note_submission(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"remember to water the ficus on Thursdays", filename=None,
                             source_uri=f"note:{uuid.uuid4()}", attributes={"kind": "note"})
    doc, chunks, _ = pipeline.run(ev)
    assert doc.modality == "note"
    assert doc.title == "remember to water the ficus on Thursdays"
    assert chunks.chunks[0].text == "remember to water the ficus on Thursdays"


def test_a_notes_front_matter_tags_travel_as_a_list_to_its_passages(pipeline: Pipeline, user: str) -> None:
    from secondbrain.search_hits import hit_from_payload

    raw = b"---\ntags: [Garden, '#work/plans']\n---\n# Beds\n\nDig the raised beds in March.\n"
    doc, chunks, _ = pipeline.run(submit_like_gateway(pipeline, user, raw, filename="beds.md"))
    assert doc.tags == ["garden", "work/plans"]
    assert chunks.chunks and all(c.tags == ["garden", "work/plans"] and not c.attributes for c in chunks.chunks)
    payloads = points_of(pipeline, user, doc.document_id)
    assert payloads and all(p["tags"] == ["garden", "work/plans"] for p in payloads)
    hit = hit_from_payload(payloads[0]["chunk_id"], 1.0, payloads[0])
    # a list in the hit; shown space-joined in its attributes, as clients have always read them
    assert hit.tags == ("garden", "work/plans") and hit.to_json()["attributes"] == {"tags": "garden work/plans"}


def test_external_producer_event_is_registered(pipeline: Pipeline, user: str) -> None:
    raw = b"Clipped from the web: the museum opens at 10 am on Sundays.\n\nTickets cost 12 EUR."
    ev = external_event(user, raw, filename="museum.txt")
    job_id = resolved_job_id(ev)
    assert pipeline.metadata.jobs.get_job(user, job_id) is None  # nothing registered before the extractor

    doc, chunks, indexed = pipeline.run(ev)

    sha = ids.sha256_hex(raw)
    assert doc.job_id == chunks.job_id == indexed.job_id == job_id
    assert doc.artifact_id == ids.artifact_id(user, sha)
    assert doc.source_id == ids.source_id(user, "app:clipper/1")
    assert doc.modality == "text" and doc.title == "museum.txt"
    job = pipeline.metadata.jobs.get_job(user, job_id)
    assert job is not None and job.artifact_id == doc.artifact_id
    assert job.status == "succeeded" and {s.status for s in job.stages} == {"succeeded"}
    # the inline bytes were kept like an upload
    assert pipeline.objects.get(keys.artifact_key(user, doc.artifact_id)) == raw
    assert pipeline.vectors.count(user, VectorFilter(document_ids=[doc.document_id])) == chunks.chunk_count

    # a redelivery of the finished job's event is dropped: nothing is written again, nothing changes
    assert core.run(pipeline.extract, ev, pipeline.metadata.jobs, trusted=True) == []
    assert pipeline.vectors.count(user, VectorFilter(document_ids=[doc.document_id])) == chunks.chunk_count
    assert pipeline.metadata.jobs.get_job(user, job_id).status == "succeeded"  # type: ignore[union-attr]


def test_external_event_with_its_own_ids_and_sha(pipeline: Pipeline, user: str) -> None:
    raw = b"Meeting notes: the roadmap review moved to Tuesday."
    job_id = ids.job_id(user, "clipper-42")
    ev = external_event(user, raw, job_id=job_id, sha256=ids.sha256_hex(raw), title="Roadmap",
                        captured_at=datetime(2022, 1, 3, tzinfo=UTC))
    doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    assert doc.job_id == job_id and doc.title == "Roadmap"
    assert doc.captured_at_source == "user"
    assert pipeline.metadata.jobs.get_job(user, job_id) is not None


# --------------------------------------------------------------------------- the vector points


def test_embedder_writes_one_point_per_chunk_with_full_payload(pipeline: Pipeline, user: str) -> None:
    body = "\n\n".join(f"## Section {k}\n\n" + " ".join(
        f"Paragraph {k} sentence {i} talks about topic {k * 10 + i} in some detail." for i in range(40))
        for k in range(3))
    ev = submit_like_gateway(pipeline, user, f"# Long report\n\n{body}".encode(), filename="report.md",
                             captured_at=datetime(2021, 6, 1, 9, 0, tzinfo=UTC))
    doc, chunks, indexed = pipeline.run(ev)
    assert chunks.chunk_count > 3
    payloads = points_of(pipeline, user, doc.document_id)
    assert len(payloads) == chunks.chunk_count == indexed.chunk_count
    assert pipeline.vectors.count(user) == chunks.chunk_count
    by_id = {p["chunk_id"]: p for p in payloads}
    assert set(by_id) == set(indexed.point_ids)
    text = full_text_of(doc)
    for c in chunks.chunks:
        p = by_id[c.chunk_id]
        assert p["text"] == c.text == text[p["char_start"]:p["char_end"]]
        assert (p["char_start"], p["char_end"]) == (c.char_start, c.char_end)
        assert p["title"] == "Long report"
        assert p["heading_path"] == c.heading_path
        assert p["heading_path"][0] == "Long report"
        assert p["captured_at"] == "2021-06-01T09:00:00.000000Z"
        assert p["document_id"] == doc.document_id and p["user_id"] == user
        assert p["job_id"] == ev.job_id and p["source_id"] == ev.source_id
        assert p["chunk_index"] == c.index and p["kind"] == c.kind
        assert p["modality"] == "markdown" and p["embedding_model"] == pipeline.embed.embedder.model_id
        datetime.fromisoformat(p["ingested_at"].replace("Z", "+00:00"))
    assert {tuple(p["heading_path"]) for p in payloads} >= {("Long report", f"Section {k}") for k in range(3)}


def test_embed_replay_keeps_the_count(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, (RECIPE + "\n\n" + INVOICE).encode(), filename="mixed.md")
    jobs = pipeline.metadata.jobs
    doc = only(core.run(pipeline.extract, ev, jobs, trusted=True), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    chunks = only(core.run(pipeline.chunk, doc, jobs), topic_names.CHUNKS_CREATED, ChunksCreated)
    # the embedder runs twice before the stage is recorded done (a crash between write and commit)
    first = only(pipeline.embed.process(chunks), topic_names.CHUNKS_INDEXED, ChunksIndexed)
    before = pipeline.vectors.count(user)
    assert before == chunks.chunk_count
    again = only(core.run(pipeline.embed, chunks, jobs), topic_names.CHUNKS_INDEXED, ChunksIndexed)
    assert again.point_ids == first.point_ids
    assert pipeline.vectors.count(user) == before
    # a full replay from the submission once the job finished is dropped at each stage: nothing changes
    assert core.run(pipeline.extract, ev, jobs, trusted=True) == []
    assert core.run(pipeline.embed, chunks, jobs) == []
    assert pipeline.vectors.count(user) == before
    row = pipeline.metadata.catalog.get_document(user, doc.document_id)
    assert row is not None and row.chunk_count == before


def test_a_second_copy_of_a_finished_jobs_event_leaves_its_passages(pipeline: Pipeline, user: str) -> None:
    # Delivery is at least once: two copies of one event can be embedded side by side.  Both write while the
    # job runs; the first finishes it.  The second then finds the job ended, and must not take back the
    # passages: they are the very points the job finished with.
    ev = submit_like_gateway(pipeline, user, TRIP.encode(), filename="twice.md")
    jobs = pipeline.metadata.jobs
    doc = only(core.run(pipeline.extract, ev, jobs, trusted=True), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    chunks = only(core.run(pipeline.chunk, doc, jobs), topic_names.CHUNKS_CREATED, ChunksCreated)
    copy = roundtrip(chunks)
    written = pipeline.embed.prepare([copy])[0]  # the copy writes while the job is still running
    indexed = only(core.run(pipeline.embed, chunks, jobs), topic_names.CHUNKS_INDEXED, ChunksIndexed)
    assert jobs.get_job(user, chunks.job_id).status == "succeeded"  # type: ignore[union-attr]
    with pytest.raises(JobGone) as info:
        pipeline.embed.process_prepared(copy, written)
    assert (info.value.state, info.value.status) == ("ended", "succeeded")
    assert sorted(pt["chunk_id"] for pt in points_of(pipeline, user, chunks.document_id)) == sorted(indexed.point_ids)
    hits = pipeline.retriever.search(user, "night train to Lisbon", k=1)
    assert hits and hits[0].document_id == chunks.document_id


class CountingVectors:
    """The vector store, counting the updates the stage sends it."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.upserts: list[int] = []

    def upsert(self, user_id: str, points: Any, *, index: str | None = None) -> None:
        self.upserts.append(len(points))
        self.inner.upsert(user_id, points, index=index)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_events_embedded_together_are_written_in_one_update_and_a_gone_job_gets_nothing(
        pipeline: Pipeline, user: str) -> None:
    jobs = pipeline.metadata.jobs
    created = []
    for n, text in enumerate([RECIPE, INVOICE, TRIP, INVOICE_OTHER]):
        ev = submit_like_gateway(pipeline, user, text.encode(), filename=f"batch-{n}.md")
        doc = only(core.run(pipeline.extract, ev, jobs, trusted=True), topic_names.DOCUMENTS_EXTRACTED,
                   DocumentExtracted)
        created.append((ev, only(core.run(pipeline.chunk, doc, jobs), topic_names.CHUNKS_CREATED, ChunksCreated)))
    gone_ev, gone = created[2]
    pipeline.metadata.lifecycle.delete_source(user, gone_ev.source_id or "")
    counting = CountingVectors(pipeline.vectors)
    stage = EmbedderStage(pipeline.objects, catalog=pipeline.metadata.catalog, indexes=pipeline.metadata.indexes,
                          fence=pipeline.metadata.fence, vectors=counting,  # type: ignore[arg-type]
                          embedder=pipeline.embed.embedder, sparse=Bm25Encoder())
    events = [c for _, c in created]
    prepared = stage.prepare(events)
    live = [c for c in events if c is not gone]
    assert counting.upserts == [sum(c.chunk_count for c in live)]  # one update for the whole batch
    for chunks, p in zip(events, prepared, strict=True):
        if chunks is gone:
            with pytest.raises(JobGone) as info:
                stage.process_prepared(chunks, p)
            assert info.value.state == "gone"
            assert points_of(pipeline, user, chunks.document_id) == []
            continue
        (indexed,) = stage.process_prepared(chunks, p)
        payloads = points_of(pipeline, user, chunks.document_id)
        assert sorted(pt["chunk_id"] for pt in payloads) == sorted(indexed.point_ids)
        assert {pt["job_id"] for pt in payloads} == {chunks.job_id}
        assert [pt["text"] for pt in sorted(payloads, key=lambda pt: pt["chunk_index"])] == [
            c.text for c in chunks.chunks]
        assert indexed.chunk_count == chunks.chunk_count > 0
    assert len(counting.upserts) == 1  # finishing the events wrote nothing more
    # what the search sees: each live document found by its own words, with the vectors of its own chunks
    hits = pipeline.retriever.search(user, "invoice 8391", k=1)
    assert hits and hits[0].document_id == created[1][1].document_id


# --------------------------------------------------------------------------- search


@pytest.fixture(scope="module")
def library(pipeline: Pipeline, metadata: MetadataStore) -> dict[str, str]:
    """One user with a small library; maps a name to its document id."""
    user = "alice-lib"
    metadata.users.ensure_user(user)
    docs = {}
    for name, text in [("invoice", INVOICE), ("invoice_other", INVOICE_OTHER), ("trip", TRIP),
                       ("recipe", RECIPE)]:
        ev = submit_like_gateway(pipeline, user, text.encode(), filename=f"{name}.md")
        doc, _, _ = pipeline.run(ev)
        docs[name] = doc.document_id
    return docs


# Queries that share no word with what they should find ("pastel de nata" for custard tarts): only a
# real model places them, so they are asked where the stages embed with it (the PostgreSQL lane).
PARAPHRASES = {"portuguese custard tarts"}


@pytest.mark.parametrize("query, expected", [
    ("how do I make bread with a starter", "recipe"),
    ("holiday in Portugal, where do we sleep", "trip"),
    ("portuguese custard tarts", "trip"),
    ("invoice 8391", "invoice"),
    ("INV-8391", "invoice"),
    ("invoice 7710", "invoice_other"),
])
def test_search_finds_the_right_chunk(pipeline: Pipeline, library: dict[str, str], query: str,
                                      expected: str) -> None:
    if query in PARAPHRASES and isinstance(pipeline.embed.embedder, HashEmbedder):
        return
    hits = pipeline.retriever.search("alice-lib", query, k=3)
    assert hits, query
    assert hits[0].document_id == library[expected], [h.title for h in hits]
    assert hits[0].text and hits[0].title


def test_search_hit_carries_a_citable_span(pipeline: Pipeline, library: dict[str, str]) -> None:
    (hit,) = pipeline.retriever.search("alice-lib", "grilled sardines by the harbour", k=1)
    assert hit.document_id == library["trip"]
    assert "sardines" in hit.text
    assert hit.heading_path[:1] == ["Lisbon"]
    assert hit.captured_at.startswith("2023-09-14")
    assert hit.char_end - hit.char_start == len(hit.text)


@pytest.mark.parametrize("mode", ["dense", "sparse"])
def test_single_mode_search(pipeline: Pipeline, library: dict[str, str], mode: Any) -> None:
    hits = pipeline.retriever.search("alice-lib", "sourdough starter", k=2, mode=mode)
    assert hits[0].document_id == library["recipe"]


def test_users_do_not_see_each_others_chunks(pipeline: Pipeline, library: dict[str, str], user: str) -> None:
    # a user without documents finds nothing at all
    assert pipeline.retriever.search(user, "invoice 8391", k=5) == []
    ev = submit_like_gateway(pipeline, user, b"# Garden\n\nPlant tomatoes in May.", filename="garden.md")
    doc, _, _ = pipeline.run(ev)
    for query in ("invoice 8391", "sourdough bread", "Lisbon hotel", "tomatoes"):
        hits = pipeline.retriever.search(user, query, k=10)
        assert {h.document_id for h in hits} == {doc.document_id}
    alice = pipeline.retriever.search("alice-lib", "plant tomatoes in May", k=10)
    assert doc.document_id not in {h.document_id for h in alice}
    assert set(library.values()) >= {h.document_id for h in alice}


# --------------------------------------------------------------------------- permanent errors


def test_unknown_user_is_unauthorized(pipeline: Pipeline) -> None:
    ev = external_event("mallory", b"hello there")
    with pytest.raises(PermanentError, match="unknown user") as info:
        pipeline.extract.process(ev)
    assert info.value.kind == "unauthorized"
    assert not pipeline.metadata.users.user_exists("mallory")


def test_unsafe_user_id_is_malformed(pipeline: Pipeline) -> None:
    ev = external_event("../etc", b"hello there")
    with pytest.raises(PermanentError) as info:
        pipeline.extract.process(ev)
    assert info.value.kind == "malformed"


@pytest.mark.parametrize("key_of", [
    lambda victim, me: keys.artifact_key(victim, "a" * 8),
    lambda victim, me: f"users/{me}/../{victim}/artifacts/x",
    lambda victim, me: "secrets/config.json",
], ids=["other-user", "dotdot", "outside"])
def test_object_key_outside_the_users_prefix_is_unauthorized(pipeline: Pipeline, user: str, key_of: Any,
                                                             metadata: MetadataStore) -> None:
    victim = f"v{uuid.uuid4().hex[:8]}"
    key = key_of(victim, user)
    if key.startswith("users/") and ".." not in key:
        pipeline.objects.put(key, b"the victim's private diary")
    ev = replace(submit_like_gateway(pipeline, user, b"mine"), object_key=key, sha256=None)
    with pytest.raises(PermanentError, match="outside the user's storage") as info:
        pipeline.extract.process(ev)
    assert info.value.kind == "unauthorized"


def test_unsupported_content_type(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"MZ\x90\x00\x03\x00\x00\x00\x04\x00program",
                             content_type="application/x-msdownload", filename="setup.exe")
    with pytest.raises(PermanentError, match="unsupported content type application/x-msdownload") as info:
        pipeline.extract.process(ev)
    assert info.value.kind == "permanent"
    assert "setup.exe" in info.value.reason


def test_family_without_extractor_says_what_is_missing(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"%PDF-1.7 fake", content_type="application/pdf",
                             filename="scan.pdf")
    with pytest.raises(PermanentError, match="pdf files cannot be processed by this deployment"):
        pipeline.extract.process(ev)


def test_missing_raw_object(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"soon to vanish")
    assert ev.object_key
    pipeline.objects.delete(ev.object_key)
    with pytest.raises(PermanentError, match="missing from object storage"):
        pipeline.extract.process(ev)


def test_sha256_mismatch(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"original bytes")
    assert ev.object_key
    pipeline.objects.put(ev.object_key, b"tampered bytes")
    with pytest.raises(PermanentError, match="sha256"):
        pipeline.extract.process(ev)
    inline = external_event(user, b"inline bytes", sha256=ids.sha256_hex(b"other bytes"))
    with pytest.raises(PermanentError, match="sha256"):
        pipeline.extract.process(inline)


@pytest.mark.parametrize("raw", [b"", b"  \n\n\t "])
def test_empty_file(pipeline: Pipeline, user: str, raw: bytes) -> None:
    with pytest.raises(PermanentError, match="empty"):
        pipeline.extract.process(external_event(user, raw, filename="empty.txt"))
    if raw:
        with pytest.raises(PermanentError, match="empty"):
            pipeline.extract.process(submit_like_gateway(pipeline, user, raw, filename="blank.md"))


def test_binary_file_declared_as_text(pipeline: Pipeline, user: str) -> None:
    raw = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    with pytest.raises(PermanentError, match=r"named 'photo.txt' but its content is a PNG image"):
        pipeline.extract.process(submit_like_gateway(pipeline, user, raw, content_type="text/plain",
                                                     filename="photo.txt"))
    unknown = b"\x00\x01\x02 some binary \x00\x00" * 100
    with pytest.raises(PermanentError, match=r"named 'data.txt' but its content is binary data"):
        pipeline.extract.process(submit_like_gateway(pipeline, user, unknown, content_type="text/plain",
                                                     filename="data.txt"))


def test_artifact_over_the_size_limit(pipeline: Pipeline, user: str) -> None:
    small = ExtractorStage(pipeline.objects, **roles(pipeline.metadata), extractors=TEXT_ONLY, max_bytes=10)
    ev = submit_like_gateway(pipeline, user, b"more than ten bytes of text")
    with pytest.raises(PermanentError, match="over the 10-byte limit"):
        small.process(ev)


def test_references_outside_the_users_prefix_are_refused_downstream(pipeline: Pipeline, user: str) -> None:
    ev = submit_like_gateway(pipeline, user, b"# A\n\nSome text.")
    doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    forged_doc = replace(doc, segments=[], body_ref=keys.document_body_key("victim", doc.document_id))
    with pytest.raises(PermanentError) as info:
        pipeline.chunk.process(forged_doc)
    assert info.value.kind == "unauthorized"
    chunks = only(pipeline.chunk.process(doc), topic_names.CHUNKS_CREATED, ChunksCreated)
    forged_chunks = replace(chunks, chunks=[], chunks_ref=keys.chunks_key("victim", doc.document_id))
    with pytest.raises(PermanentError) as info:
        pipeline.embed.process(forged_chunks)
    assert info.value.kind == "unauthorized"
    missing = replace(chunks, chunks=[], chunks_ref=keys.chunks_key(user, "no-such-document"))
    with pytest.raises(PermanentError, match="missing"):
        pipeline.embed.process(missing)


# --------------------------------------------------------------------------- text reconstruction


def _reconstruct_reference(segments: list[Segment]) -> str:
    """The former character-buffer implementation, kept as the specification of the result."""
    if not segments:
        return ""
    buf = ["\n"] * max(s.char_end for s in segments)
    for s in segments:
        buf[s.char_start:s.char_end] = list(s.text)
    return "".join(buf)


def _seg(index: int, start: int, text: str) -> Segment:
    return Segment(index=index, kind="paragraph", text=text, char_start=start, char_end=start + len(text))


def test_reconstruct_text_places_segments_at_their_offsets() -> None:
    segments = [_seg(0, 0, "# Title"), _seg(1, 9, "Body é 東京."), _seg(2, 25, ""), _seg(3, 30, "end")]
    assert bodies.reconstruct(segments) == "# Title\n\nBody é 東京.\n\n\n\n\n\n\n\n\n\n\nend"
    assert bodies.reconstruct(segments) == _reconstruct_reference(segments)
    assert bodies.reconstruct([]) == ""
    assert bodies.reconstruct([_seg(0, 4, "x")]) == "\n\n\n\nx"


def test_reconstruct_text_matches_the_buffer_version_with_overlaps() -> None:
    rng = random.Random(7)
    for _ in range(500):
        segments = sorted((_seg(i, rng.randrange(40), "".join(rng.choice("ab c") for _ in range(rng.randrange(12))))
                           for i in range(rng.randrange(1, 8))), key=lambda s: s.char_start)
        assert bodies.reconstruct(segments) == _reconstruct_reference(segments), segments


def test_reconstruct_text_memory_stays_near_the_text_size() -> None:
    paragraph = "A line of ordinary text. " * 40
    segments = [_seg(i, i * (len(paragraph) + 2), paragraph) for i in range(2000)]  # ~2 MB of text
    size = segments[-1].char_end
    tracemalloc.start()
    try:
        text = bodies.reconstruct(segments)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(text) == size
    assert peak < 3 * size, f"peak {peak} bytes for {size} characters"


def test_reconstruct_text_refuses_offsets_that_do_not_match_the_text() -> None:
    bad = Segment(index=3, kind="paragraph", text="four", char_start=2, char_end=5)
    with pytest.raises(PermanentError, match="segment 3 has offsets that do not match its text"):
        bodies.reconstruct([_seg(0, 0, "ok"), bad])


# --------------------------------------------------------------------------- claim check


PARTS = 210  # ~740 KB of text


@SIZE_LIMITS
def test_large_document_goes_by_claim_check(pipeline: Pipeline, user: str) -> None:
    paragraphs = [f"## Part {k}\n\n" + " ".join(
        f"Entry {k}-{i} records measurement {k * 1000 + i} taken at station {i % 17}." for i in range(60))
        for k in range(PARTS)]
    raw = ("# Field log\n\n" + "\n\n".join(paragraphs)).encode()
    assert len(raw) > 700_000
    ev = submit_like_gateway(pipeline, user, raw, filename="log.md")
    doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    assert doc.body_ref == keys.document_body_key(user, doc.document_id)
    assert doc.segments == []
    assert doc.text_length > 700_000
    assert len(CODEC.encode(doc)) < 10_000  # the event stays small
    stored = json.loads(pipeline.objects.get(doc.body_ref))
    # The body holds the text once and the segments as offsets into it.
    assert len(stored["segments"]) == 1 + 2 * PARTS and len(stored["text"]) == doc.text_length
    assert all(s["text"] == "" for s in stored["segments"])

    chunks = only(pipeline.chunk.process(doc), topic_names.CHUNKS_CREATED, ChunksCreated)
    assert chunks.chunk_count > 100
    # the chunks (with their overlap) are over the limit too: they travel by reference as well
    assert chunks.chunks_ref == keys.chunks_key(user, doc.document_id)
    assert chunks.chunks == []
    assert len(CODEC.encode(chunks)) < 10_000
    listed = [Chunk.from_record(r) for r in claimcheck.load(pipeline.objects, chunks.chunks_ref)]
    assert len(listed) == chunks.chunk_count
    assert [c.chunk_id for c in listed] == [ids.chunk_id(doc.document_id, i) for i in range(len(listed))]
    joined = " ".join(c.text for c in listed)
    for k in (0, 97, PARTS - 1):
        assert f"Entry {k}-0 records measurement {k * 1000} " in joined
        assert f"Entry {k}-59 records measurement {k * 1000 + 59} " in joined
    assert listed[0].heading_path == ["Field log", "Part 0"]
    assert listed[-1].heading_path == ["Field log", f"Part {PARTS - 1}"]


def test_offload_keeps_small_payloads_inline_and_stores_large_ones(objects: FileObjectStore, user: str) -> None:
    records = [{"text": "é" * 10, "n": i} for i in range(3)]
    size = len(json.dumps(records, ensure_ascii=False).encode("utf-8"))
    key = keys.chunks_key(user, "offload-doc")
    assert claimcheck.offload(objects, key, records, limit=size) is None  # at the limit: inline
    assert objects.stat(key) is None  # nothing written
    assert claimcheck.offload(objects, key, records, limit=size - 1) == key
    assert objects.get(key) == json.dumps(records, ensure_ascii=False).encode("utf-8")
    assert claimcheck.load(objects, key) == records


def test_claim_checked_chunks_are_embedded(pipeline: Pipeline, user: str) -> None:
    """The embedder loads a chunk list passed by reference (kept small here: embedding is slow)."""
    ev = submit_like_gateway(pipeline, user, INVOICE.encode(), filename="invoice.md")
    doc = only(pipeline.extract.process(ev), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    chunks = only(pipeline.chunk.process(doc), topic_names.CHUNKS_CREATED, ChunksCreated)
    ref = claimcheck.offload(pipeline.objects, keys.chunks_key(user, doc.document_id),
                             [c.to_record() for c in chunks.chunks], limit=0)
    assert ref is not None
    by_ref = replace(chunks, chunks=[], chunks_ref=ref)
    CODEC.encode(by_ref)
    indexed = only(pipeline.embed.process(by_ref), topic_names.CHUNKS_INDEXED, ChunksIndexed)
    assert indexed.point_ids == [c.chunk_id for c in chunks.chunks]
    assert pipeline.vectors.count(user) == chunks.chunk_count
    (hit,) = pipeline.retriever.search(user, "invoice 8391", k=1)
    assert "INV-8391" in hit.text
    wrong_count = replace(by_ref, chunk_count=chunks.chunk_count + 1)
    with pytest.raises(PermanentError, match="expected"):
        pipeline.embed.process(wrong_count)


@SIZE_LIMITS
def test_many_small_segments_still_fit_in_a_message(pipeline: Pipeline, user: str) -> None:
    """Well under 700 KB of text, but tens of thousands of segments: the event must still be publishable."""
    raw = ("# Inventory\n\n" + "\n\n".join(f"Item {i}." for i in range(30_000))).encode()
    assert len(raw) < 1_000_000
    doc = only(pipeline.extract.process(submit_like_gateway(pipeline, user, raw, filename="inv.md")),
               topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    CODEC.encode(doc)  # raises EventTooLarge when the segments are sent inline
    chunks = only(pipeline.chunk.process(doc), topic_names.CHUNKS_CREATED, ChunksCreated)
    CODEC.encode(chunks)


@SIZE_LIMITS
def test_many_tiny_code_blocks_still_fit_in_a_message(pipeline: Pipeline, user: str) -> None:
    """Every code block is a chunk of its own: thousands of one-line blocks make a long chunk list."""
    raw = ("# Snippets\n\n" + "\n\n".join(f"```\nx{i}\n```" for i in range(15_000))).encode()
    doc = only(pipeline.extract.process(submit_like_gateway(pipeline, user, raw, filename="snips.md")),
               topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    CODEC.encode(doc)
    chunks = only(pipeline.chunk.process(doc), topic_names.CHUNKS_CREATED, ChunksCreated)
    assert chunks.chunk_count == 15_000
    CODEC.encode(chunks)


# --------------------------------------------------------------------------- duplicates and versions


def test_same_bytes_again_is_a_duplicate(pipeline: Pipeline, user: str) -> None:
    raw = b"# Packing list\n\nPassport, charger and the blue notebook."
    first = submit_like_gateway(pipeline, user, raw, filename="packing.md")
    pipeline.metadata.jobs.stage_started(user, first.job_id or "", "extract", 1)
    doc, _, indexed = pipeline.run(first)
    again = submit_like_gateway(pipeline, user, raw, filename="packing-copy.md")
    pipeline.metadata.jobs.stage_started(user, again.job_id or "", "extract", 1)
    assert core.run(pipeline.extract, again, pipeline.metadata.jobs) == []  # nothing more to extract or index
    job = pipeline.metadata.jobs.get_job(user, again.job_id or "")
    assert job is not None and (job.status, job.duplicate_of) == ("duplicate", first.job_id)
    assert [s.status for s in job.stages] == ["succeeded", "skipped", "skipped"]
    assert len(points_of(pipeline, user, doc.document_id)) == indexed.chunk_count
    assert len(pipeline.objects.list(f"users/{user}/artifacts/")) == 1  # stored once


def test_new_content_for_a_source_replaces_its_chunks(pipeline: Pipeline, user: str) -> None:
    v1 = submit_like_gateway(pipeline, user, b"# Budget\n\nThe travel budget is 4000 euros for the offsite.",
                             filename="budget.md")
    d1, _, _ = pipeline.run(v1)
    assert d1.version == 1
    v2 = submit_like_gateway(pipeline, user, b"# Budget\n\nThe travel budget was cut to 2500 euros in review.",
                             filename="budget.md")
    d2, c2, _ = pipeline.run(v2)
    assert (d2.source_id, d2.version, c2.version) == (d1.source_id, 2, 2)
    assert points_of(pipeline, user, d1.document_id) == []  # the old version left the index
    hits = pipeline.retriever.search(user, "travel budget euros", k=5)
    assert [h.document_id for h in hits] == [d2.document_id]
    old = pipeline.metadata.catalog.get_document(user, d1.document_id)
    assert old is not None and old.superseded_at is not None  # kept as history in Postgres
    [latest, previous] = [s for s in pipeline.metadata.catalog.list_sources(user) if s.source_uri == "file:budget.md"]
    assert (latest.version, latest.superseded, previous.version, previous.superseded) == (2, False, 1, True)


def test_a_late_old_version_is_not_indexed(pipeline: Pipeline, user: str) -> None:
    v1 = submit_like_gateway(pipeline, user, b"Version one of the roadmap: ship search.", filename="roadmap.txt",
                             content_type="text/plain")
    d1 = only(pipeline.extract.process(v1), topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    c1 = only(pipeline.chunk.process(d1), topic_names.CHUNKS_CREATED, ChunksCreated)
    v2 = submit_like_gateway(pipeline, user, b"Version two of the roadmap: ship answers.", filename="roadmap.txt",
                             content_type="text/plain")
    d2, _, _ = pipeline.run(v2)
    # v1 arrives after v2 was indexed: the runner finds it replaced and the embedder takes it out again.
    assert core.run(pipeline.embed, c1, pipeline.metadata.jobs) == []
    assert points_of(pipeline, user, d1.document_id) == []
    assert points_of(pipeline, user, d2.document_id)


def test_event_time_precedence(pipeline: Pipeline, user: str) -> None:
    """User-given time beats the file's own date, which beats ingestion time."""
    raw = b"---\ndate: 2023-06-01T10:00:00Z\n---\n# Retro\n\nWhat went well in June."
    given = datetime(2023, 5, 20, 8, 30, tzinfo=UTC)
    d_user = only(pipeline.extract.process(submit_like_gateway(pipeline, user, raw, captured_at=given,
                                                               filename="retro.md")),
                  topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    assert (d_user.captured_at, d_user.captured_at_source) == (given, "user")
    d_file = only(pipeline.extract.process(submit_like_gateway(pipeline, user, raw + b" ", filename="retro2.md")),
                  topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    assert (d_file.captured_at, d_file.captured_at_source) == (datetime(2023, 6, 1, 10, tzinfo=UTC),
                                                               "file_metadata")
    sent = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    d_none = only(pipeline.extract.process(submit_like_gateway(pipeline, user, b"no date here", filename="x.txt",
                                                               content_type="text/plain", submitted_at=sent)),
                  topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted)
    assert (d_none.captured_at, d_none.captured_at_source) == (sent, "ingested")


# --------------------------------------------------------------------------- fetcher stage


class _Site:
    """A local web site whose pages the test changes between fetches."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str, bytes]] = {}
        self.delay_s = 0.0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/slow"):
                    time.sleep(site.delay_s)
                status, ctype, body = site.pages.get(self.path, (404, "text/plain", b"not found"))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# The test site listens on loopback, which the SSRF guard refuses unless allowed.
LOCAL_SITE_POLICY = FetchPolicy(timeout_s=2, respect_robots=False, allow_private=True)


@pytest.fixture(scope="module")
def site() -> Iterator[_Site]:
    s = _Site()
    yield s
    s.close()


def request_url(p: Pipeline, user: str, url: str, title: str | None = None) -> UrlRequested:
    """What the gateway does for POST /v1/urls."""
    job_id = ids.job_id(user, str(uuid.uuid4()))
    event = UrlRequested(event_id=ids.event_id(job_id, "requested"), job_id=job_id, user_id=user, url=url,
                         title=title, requested_at=datetime.now(UTC), producer="gateway")
    msg = OutboxMessage(topic=topic_names.URLS_REQUESTED, key=user.encode(), value=CODEC.encode(event),
                        headers=CODEC.headers(event))
    assert p.metadata.intake.request_url(user, job_id, url, title, [msg]).created
    return event


def test_fetched_page_becomes_a_versioned_web_document(pipeline: Pipeline, user: str, site: _Site) -> None:
    from devtools import gen_web

    fetcher = FetcherStage(pipeline.objects, **roles(pipeline.metadata), policy=LOCAL_SITE_POLICY)
    site.pages["/post#intro"] = site.pages["/post"] = (200, "text/html; charset=utf-8", gen_web.page_meta_published())
    req = request_url(pipeline, user, f"{site.base}/post#intro")
    submitted = only(fetcher.process(roundtrip(req)), topic_names.ARTIFACTS_SUBMITTED, ArtifactSubmitted)
    assert submitted.source_uri == f"{site.base}/post"  # the fragment is not part of the source
    assert submitted.object_key and pipeline.objects.get(submitted.object_key) == gen_web.page_meta_published()
    assert submitted.attributes["final_url"] == f"{site.base}/post"
    doc, chunks, _ = pipeline.run(roundtrip(submitted))
    assert (doc.modality, doc.job_id, doc.captured_at_source) == ("web", req.job_id, "published")
    assert chunks.source_uri == f"{site.base}/post"
    text = full_text_of(doc)
    assert gen_web.HISTORY_TEXT[:60] in text and gen_web.NAV_WORDS not in text
    view = pipeline.metadata.jobs.get_job(user, req.job_id)
    assert view is not None and view.artifact_id == submitted.artifact_id
    hits = pipeline.retriever.search(user, "concentric rings of glass prisms", k=1)
    assert hits and hits[0].source_uri == f"{site.base}/post"

    # Fetched again with new content: a new version replaces the old chunks.
    site.pages["/post"] = (200, "text/html", gen_web.page().replace(
        "Augustin Fresnel", "Augustin-Jean Fresnel").encode())
    again = only(fetcher.process(request_url(pipeline, user, f"{site.base}/post")), topic_names.ARTIFACTS_SUBMITTED,
                 ArtifactSubmitted)
    doc2, _, _ = pipeline.run(again)
    assert (doc2.source_id, doc2.version) == (doc.source_id, 2)
    assert points_of(pipeline, user, doc.document_id) == []


def test_fetch_failures_are_readable(pipeline: Pipeline, user: str, site: _Site) -> None:
    fetcher = FetcherStage(pipeline.objects, **roles(pipeline.metadata),
                           policy=replace(LOCAL_SITE_POLICY, timeout_s=0.5))
    site.delay_s = 2.0
    site.pages["/slow"] = (200, "text/html", b"<html><body><p>late</p></body></html>")
    with pytest.raises(RetryableError, match="timed out"):
        fetcher.process(request_url(pipeline, user, f"{site.base}/slow"))
    with pytest.raises(PermanentError, match="404"):
        fetcher.process(request_url(pipeline, user, f"{site.base}/missing"))
    site.pages["/logo.png"] = (200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    with pytest.raises(PermanentError, match="image/png"):
        fetcher.process(request_url(pipeline, user, f"{site.base}/logo.png"))


def test_fetcher_refuses_foreign_jobs(pipeline: Pipeline, user: str, site: _Site) -> None:
    fetcher = FetcherStage(pipeline.objects, **roles(pipeline.metadata), policy=LOCAL_SITE_POLICY)
    alice_req = request_url(pipeline, user, f"{site.base}/post")
    mallory = f"u{uuid.uuid4().hex[:12]}"
    pipeline.metadata.users.ensure_user(mallory)
    forged = replace(alice_req, user_id=mallory, event_id="forged")
    with pytest.raises(PermanentError) as info:
        fetcher.process(forged)
    assert info.value.kind == "unauthorized"


def test_by_default_a_url_inside_the_network_is_refused(pipeline: Pipeline, user: str, site: _Site) -> None:
    """The SSRF guard: loopback, private and link-local targets need SB_FETCH_ALLOW_PRIVATE (or the
    networks in SB_FETCH_ALLOW_NETWORKS)."""
    fetcher = FetcherStage(pipeline.objects, **roles(pipeline.metadata),
                           policy=FetchPolicy(timeout_s=2, respect_robots=False))
    for url in (f"{site.base}/post", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.7/admin"):
        with pytest.raises(PermanentError, match=r"not allowed.*only fetches public web pages"):
            fetcher.process(request_url(pipeline, user, url))


# --------------------------------------------------------------------------- the step core


def step(stage: Any, event: Any, p: Pipeline, *, trusted: bool = False) -> core.Outcome:
    """What the runner makes of ``event`` at ``stage``: the step core without a broker, on the stage's
    encoded event as it would arrive."""
    return core.outcome(stage, event, p.metadata.jobs, value=CODEC.encode(event),
                        headers={k: v.decode() for k, v in CODEC.headers(event)}, trusted=trusted)


def published(outcome: core.Outcome, cls: type[Any]) -> Any:
    assert isinstance(outcome, core.Publish), outcome
    (out,) = outcome.outputs
    assert isinstance(out, cls) and outcome.attempts == 1
    return out


def test_the_step_core_publishes_drops_and_dead_letters_at_every_stage(pipeline: Pipeline, user: str,
                                                                       site: _Site) -> None:
    fetcher = FetcherStage(pipeline.objects, **roles(pipeline.metadata), policy=LOCAL_SITE_POLICY)
    page = (200, "text/html; charset=utf-8", b"<html><head><title>Core</title></head><body><p>"
            + b"The step core decides once what becomes of an event. " * 5 + b"</p></body></html>")
    site.pages["/core"] = site.pages["/core-deleted"] = page
    jobs = pipeline.metadata.jobs

    # Publish: a URL the gateway queued is fetched, extracted, chunked and indexed, the job done at each stage.
    req = request_url(pipeline, user, f"{site.base}/core")
    submitted = published(step(fetcher, req, pipeline), ArtifactSubmitted)
    doc = published(step(pipeline.extract, submitted, pipeline), DocumentExtracted)
    chunks = published(step(pipeline.chunk, doc, pipeline), ChunksCreated)
    indexed = published(step(pipeline.embed, chunks, pipeline), ChunksIndexed)
    assert indexed.chunk_count == chunks.chunk_count == pipeline.vectors.count(
        user, VectorFilter(document_ids=[doc.document_id]))
    assert jobs.get_job(user, req.job_id).status == "succeeded"  # type: ignore[union-attr]

    # Dropped: the job ended, so a redelivery at any stage costs nothing and changes nothing.
    for stage, event in ((fetcher, req), (pipeline.extract, submitted), (pipeline.chunk, doc),
                         (pipeline.embed, chunks)):
        assert step(stage, event, pipeline) == core.Dropped("admission", "ended")
    # ... and the source deleted while its work was in flight: dropped at admission (open topics) or when the
    # job is looked up (internal ones), nothing written.
    again = request_url(pipeline, user, f"{site.base}/core-deleted")
    fetched = published(step(fetcher, again, pipeline), ArtifactSubmitted)
    assert pipeline.metadata.lifecycle.delete_source(user, fetched.source_id) is not None  # type: ignore[arg-type]
    assert step(fetcher, again, pipeline) == core.Dropped("check", "gone")
    assert step(pipeline.extract, fetched, pipeline) == core.Dropped("check", "gone")
    late_doc = replace(doc, job_id=again.job_id, source_id=fetched.source_id)
    assert step(pipeline.chunk, late_doc, pipeline) == core.Dropped("admission", "gone")
    assert step(pipeline.embed, replace(chunks, job_id=again.job_id), pipeline) == core.Dropped("admission", "gone")

    # Dead letter: an event no app of the user signed or queued is refused before any job is touched ...
    forged = replace(req, event_id="forged", job_id=ids.job_id(user, "forged"), url=f"{site.base}/other")
    refused = step(fetcher, forged, pipeline)
    assert isinstance(refused, core.DeadLetter) and refused.kind == "unauthorized" and not refused.of_job
    outsider = external_event(user, b"Bytes nobody queued.", filename="x.txt")
    refused = step(pipeline.extract, outsider, pipeline)
    assert isinstance(refused, core.DeadLetter) and refused.kind == "unauthorized" and not refused.of_job
    assert jobs.get_job(user, resolved_job_id(outsider)) is None
    # ... and work that fails for good fails its job.
    empty = submit_like_gateway(pipeline, user, b"   ", filename="blank.md")
    failed = step(pipeline.extract, empty, pipeline)
    assert isinstance(failed, core.DeadLetter) and failed.of_job and failed.kind == "permanent"
    assert "nothing to index" in str(failed.error)
    live = submit_like_gateway(pipeline, user, b"# Live\n\nA job that is still running.", filename="live.md")
    live_doc = published(step(pipeline.extract, live, pipeline), DocumentExtracted)
    victims = keys.document_body_key("victim", live_doc.document_id)
    forged_doc = replace(live_doc, segments=[], text="", body_ref=victims)
    refused = step(pipeline.chunk, forged_doc, pipeline)
    assert isinstance(refused, core.DeadLetter) and refused.kind == "unauthorized" and refused.of_job
    live_chunks = published(step(pipeline.chunk, live_doc, pipeline), ChunksCreated)
    ref = claimcheck.offload(pipeline.objects, keys.chunks_key(user, live_doc.document_id),
                             [c.to_record() for c in live_chunks.chunks], limit=0)
    miscounted = replace(live_chunks, chunks=[], chunks_ref=ref, chunk_count=live_chunks.chunk_count + 1)
    wrong = step(pipeline.embed, miscounted, pipeline)
    assert isinstance(wrong, core.DeadLetter) and wrong.kind == "permanent" and "expected" in str(wrong.error)
    with pytest.raises(PermanentError, match="expected"):  # in process, the error is raised to the caller
        core.run(pipeline.embed, miscounted, jobs)


def test_a_batch_goes_through_every_stage_and_a_bad_event_fails_alone(pipeline: Pipeline, user: str) -> None:
    """Three notes and a file with no text taken as one batch at each stage: the notes are extracted, chunked
    and embedded together and become searchable; the empty file is dead-lettered alone; a note whose source is
    deleted before the chunker is dropped there without holding up the others."""
    jobs = pipeline.metadata.jobs
    notes = [submit_like_gateway(pipeline, user, f"# Crate {i}\n\nCrate {i} holds plum jam, marked qx{i}z.".encode(),
                                 filename=f"crate-{i}.md") for i in range(3)]
    empty = submit_like_gateway(pipeline, user, b"   \n", filename="empty.md")
    extracted = core.outcomes(pipeline.extract, [*notes, empty], jobs, trusted=True)
    assert [type(o).__name__ for o in extracted] == ["Publish", "Publish", "Publish", "DeadLetter"]
    assert isinstance(extracted[3], core.DeadLetter) and "the file is empty" in str(extracted[3].error)
    docs = [o.outputs[0] for o in extracted if isinstance(o, core.Publish)]
    assert pipeline.metadata.lifecycle.delete_source(user, docs[2].source_id) is not None
    chunked = core.outcomes(pipeline.chunk, docs, jobs)
    assert [type(o).__name__ for o in chunked] == ["Publish", "Publish", "Dropped"]
    created = [o.outputs[0] for o in chunked if isinstance(o, core.Publish)]
    indexed = core.outcomes(pipeline.embed, created, jobs)
    assert all(isinstance(o, core.Publish) for o in indexed)
    for i in range(2):
        view = jobs.get_job(user, notes[i].job_id or "")
        assert view is not None and view.status == "succeeded"
        hits = pipeline.retriever.search(user, f"qx{i}z", k=3, mode="sparse")
        assert any(f"marked qx{i}z" in h.text for h in hits)
    assert not any("qx2z" in h.text for h in pipeline.retriever.search(user, "qx2z", k=3, mode="sparse"))
