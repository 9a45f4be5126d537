"""A small corpus with known answers, ingested through the real stages into real stores.

Every item is placed relative to a :class:`tests.clock.Moment`, so "yesterday" and "last week"
mean what they say whatever day the tests run on.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from httpx_sse import connect_sse

from secondbrain import ids, keys
from secondbrain.events.models import ArtifactSubmitted, Chunk, ChunksCreated
from secondbrain.pipeline import core
from secondbrain.ports import ArtifactRecord, DocumentRecord
from secondbrain.runtime import Runtime
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from tests.clock import Moment

GARDEN = "\n\n".join(
    f"## Bed {i}\n\nGardening tip {i}: water the tomato bed {i} at dawn, mulch it with straw, and pinch the "
    f"side shoots every week so the plants put their strength into the fruit. " * 3 for i in range(1, 9))


@dataclass(frozen=True, slots=True)
class Item:
    key: str
    title: str
    at: Callable[[Moment], datetime]
    text: str


CORPUS: list[Item] = [
    Item("invoice", "Acme invoice", lambda m: m.local(3),
         "Invoice 8391 from Acme Ltd: 1,240 euros for the warehouse shelving, due on 15 December."),
    Item("plumber", "Plumber visit", lambda m: m.local(20),
         "The plumber fixed the leaking kitchen pipe under the sink; the repair bill came to 240 euros."),
    Item("zbigniew", "Call notes", lambda m: m.local(40),
         "Spoke with Zbigniew Brzezinski-Nowak about renewing the Krakow office lease for two years."),
    Item("budget-new", "Budget review", lambda m: m.last_week(4),
         "Budget meeting: the marketing budget for the first quarter is cut to 30,000 euros."),
    # Inside last week whatever the day, and about something else: a question about the budget last
    # week must not list it, a question about last week alone must.
    Item("dentist", "Dentist", lambda m: m.last_week(2, 15),
         "Dentist appointment: the crown was fitted and the next check-up is in six months."),
    Item("budget-old", "Budget review (autumn)", lambda m: m.local(60),
         "Budget meeting: the marketing budget for the first quarter stays at 45,000 euros."),
    Item("errands", "Errands", lambda m: m.local(1, 9),
         "Picked up the dry cleaning and booked the car service for Thursday."),
    Item("book", "Reading", lambda m: m.local(1, 18),
         "Started reading The Overstory by Richard Powers; the chapter about the chestnut tree is moving."),
    Item("garden", "Garden plan", lambda m: m.local(90), "# Garden plan\n\n" + GARDEN),
]

SPEECH = [
    "Good morning everyone, this is the weekly engineering sync, let us go around the room.",
    "The database migration finished on Tuesday night without downtime.",
    "Maria asked who owns the rollback plan if the billing service misbehaves.",
    "We agreed that Tomasz writes the rollback runbook by Friday.",
    "Any other business? No. Thanks everyone, see you next week.",
]
BOB_TEXT = "Invoice 8391 is Bob's private hardware order, 99 euros."


class Corpus:
    """Alice's and Bob's data placed relative to ``moment``; document ids by key."""

    def __init__(self, rt: Runtime, moment: Moment, *, user: str = "alice", other: str = "bob") -> None:
        self.rt = rt
        self.moment = moment
        self.user = user
        self.other = other
        self.doc: dict[str, str] = {}
        m = rt.metadata
        self.extract = ExtractorStage(rt.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                      fence=m.fence,
                                      catalog=m.catalog,
                                      lifecycle=m.lifecycle, extractors=ExtractorSet({"text": TextExtractor()}),
                                      max_bytes=1 << 20)
        self.chunk = ChunkerStage(rt.objects, ChunkingConfig(), fence=m.fence)
        assert rt.vectors and rt.embedder and rt.sparse
        self.embed = EmbedderStage(rt.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                                   vectors=rt.vectors, embedder=rt.embedder, sparse=rt.sparse)
        self.saved_at = datetime.now(UTC)

    def build(self) -> Corpus:
        """Ingest everything; ``saved_at`` is then the moment just after the last item was saved."""
        for u in (self.user, self.other):
            self.rt.metadata.users.ensure_user(u)
        for item in CORPUS:
            self.add(self.user, item.key, item.title, item.text, item.at(self.moment))
        self.add(self.other, "bob-invoice", "Bob's invoice", BOB_TEXT, self.moment.local(2))
        self.add_speech(self.user, "sync", "Engineering sync", SPEECH, self.moment.local(2, 9))
        self.saved_at = datetime.now(UTC)
        return self

    def add(self, user: str, key: str, title: str, text: str, at: datetime) -> None:
        raw = text.encode()
        ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=f"note:{key}",
                               content_type="text/markdown", size_bytes=len(raw), submitted_at=datetime.now(UTC),
                               producer="test", content=raw, title=title, captured_at=at.astimezone(UTC),
                               attributes={"kind": "note"})
        jobs = self.rt.metadata.jobs
        (doc,) = core.run(self.extract, ev, jobs, trusted=True)
        (chunks,) = core.run(self.chunk, doc, jobs)
        core.run(self.embed, chunks, jobs)
        self.doc[f"{user}:{key}"] = doc.document_id

    def add_speech(self, user: str, key: str, title: str, windows: list[str], at: datetime) -> None:
        """A recording as the chunker would cut it: one chunk per ~60 s window."""
        doc_id = ids.document_id(ids.artifact_id(user, ids.sha256_hex(key.encode())))
        chunks, pos = [], 0
        for i, text in enumerate(windows):
            chunks.append(Chunk(chunk_id=ids.chunk_id(doc_id, i), index=i, text=text, char_start=pos,
                                char_end=pos + len(text), token_count=len(text.split()), heading_path=[],
                                kind="speech", t_start=60.0 * i, t_end=60.0 * i + 58))
            pos += len(text) + 2
        ev = ChunksCreated(event_id=str(uuid.uuid4()), job_id=str(uuid.uuid4()), user_id=user,
                           artifact_id=ids.artifact_id(user, ids.sha256_hex(key.encode())), source_id=key,
                           document_id=doc_id, title=title, modality="audio", content_type="audio/mpeg",
                           captured_at=at.astimezone(UTC), ingested_at=datetime.now(UTC), chunks=chunks,
                           chunk_count=len(chunks), recording_start=at.astimezone(UTC))
        # The rows the extractor would have written (the embedder indexes only current documents).
        art = ArtifactRecord(artifact_id=ev.artifact_id, user_id=user, source_id=key, source_uri=f"file:{key}.mp3",
                             object_key=keys.artifact_key(user, ev.artifact_id), content_type="audio/mpeg",
                             size_bytes=1, sha256=ids.sha256_hex(key.encode()), filename=f"{key}.mp3", title=title,
                             captured_at=ev.captured_at, submitted_at=ev.ingested_at, producer="test")
        self.rt.metadata.intake.register_external(art, ev.job_id)
        self.rt.metadata.catalog.save_document(DocumentRecord(
            document_id=doc_id, user_id=user, artifact_id=ev.artifact_id, source_id=key, title=title,
            modality="audio", content_type="audio/mpeg", captured_at=ev.captured_at, captured_at_source="user",
            ingested_at=ev.ingested_at, char_count=pos))
        assert self.rt.vectors and self.rt.embedder and self.rt.sparse
        self.rt.vectors.ensure_collection(user, self.rt.embedder.dimension)
        assert self.embed.process(ev), "the recording was not indexed"
        self.doc[f"{user}:{key}"] = doc_id

    def saved_on_the_day_of(self, user: str, when: datetime) -> list[str]:
        """Titles of ``user``'s documents ingested on ``when``'s local day (what "saved today" means then)."""
        docs = self.rt.metadata.catalog.documents_between(user, None, None, field="ingested_at", limit=1000)
        return [d.title for d in docs if d.ingested_at.astimezone(when.tzinfo).date() == when.date()]


def ask(base: str, question: str, *, headers: dict[str, str] | None = None,
        **extra: Any) -> list[tuple[str, Any]]:
    """POST /v1/ask and read the event stream as it arrives."""
    events: list[tuple[str, Any]] = []
    with httpx.Client(timeout=60) as client, connect_sse(client, "POST", f"{base}/v1/ask", headers=dict(headers or {}),
                                                         json={"question": question, "tz": "Europe/Paris",
                                                               **extra}) as stream:
        r = stream.response
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        events.extend((sse.event, sse.json()) for sse in stream.iter_sse())
    return events
