"""Chunker stage: ``documents.extracted`` -> ``chunks.created``.

Inputs: a document's full text and its segments (inline, or by claim check in the object store).
Outputs: chunks with provenance (inline, or by claim check).  Ports: the object store and the job fence
(a chunk list is stored only while the job is live).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar
from zoneinfo import ZoneInfo

from secondbrain import ids, keys
from secondbrain.errors import PermanentError
from secondbrain.events import bodies
from secondbrain.events.models import Chunk, ChunksCreated, DocumentExtracted, Segment, TimeMention
from secondbrain.pipeline import claimcheck, topology
from secondbrain.pipeline.stage import JobRef
from secondbrain.ports import JobFence, JobGone, ObjectStore
from secondbrain.temporal import Conventions
from secondbrain.temporal.mentions import mentioned_times
from services.chunker.logic import ChunkDraft, ChunkingConfig, chunk_segments

_WIKILINK = re.compile(r"\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")
_MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")



def markdown_links(text: str) -> list[str]:
    """What a Markdown passage links to: ``[[wikilink]]`` targets and ``[text](target)`` targets, each once."""
    out: list[str] = []
    for m in (*_WIKILINK.finditer(text), *_MD_LINK.finditer(text)):
        target = m.group(1).strip()
        if target and target not in out:
            out.append(target)
    return out


LINKS_MAX_CHARS = 2000  # a passage full of links keeps the first ones (about as many as ever were shown)


def passage_links(text: str, *, markdown: bool) -> list[str]:
    """The links in a Markdown passage itself (``[[wikilinks]]`` and ``[text](target)``), whole, as many as
    fit in ``LINKS_MAX_CHARS`` (separators counted as before)."""
    out: list[str] = []
    used = 0
    for link in markdown_links(text) if markdown else []:
        used += len(link) + (3 if out else 0)
        if used > LINKS_MAX_CHARS:
            break
        out.append(link)
    return out


def too_many_chunks(count: int, limit: int) -> str:
    """Why a document is refused for its number of passages, and what the person can do."""
    return (f"the document would make {count} passages, over the limit of {limit} for one document: split it "
            "into smaller files, or ask the operator to raise SB_MAX_CHUNKS_PER_DOCUMENT")


class ChunkerStage:
    """Cuts a document into retrieval-sized chunks that respect its structure."""

    step: ClassVar[topology.Step] = topology.CHUNK

    def __init__(self, objects: ObjectStore, config: ChunkingConfig, *, fence: JobFence, zone: ZoneInfo | None = None,
                 conventions: Conventions | None = None, max_chunks: int = 0) -> None:
        self.objects = objects
        self.fence = fence
        self.config = config
        # Time words inside a passage ("yesterday", "on Friday") are read in the person's zone and calendar.
        self.zone = zone or ZoneInfo("UTC")
        self.conventions = conventions or Conventions()
        # Every passage costs an embedding (2,622 passages took 16 minutes to embed on 2 cores): a document
        # over the budget fails with a sentence before its passages are read for times or stored.  Processes
        # set it from SB_MAX_CHUNKS_PER_DOCUMENT (app/serve.py); 0: no budget.
        self.max_chunks = max_chunks

    def job_of(self, event: DocumentExtracted) -> JobRef:
        """Job, user, source and document of the event."""
        return JobRef(event.job_id, event.user_id, event.source_id, event.document_id)

    def _body(self, ev: DocumentExtracted) -> tuple[str, list[Segment]]:
        """The full text and the segments with their texts."""
        text: str | None = ev.text
        segments = list(ev.segments)
        if ev.body_ref is not None:
            if not keys.owns_key(ev.user_id, ev.body_ref):
                raise PermanentError("the document body reference is outside the user's storage",
                                     kind="unauthorized")
            text, segments = bodies.unpack(claimcheck.load(self.objects, ev.body_ref))
        if not segments:
            raise PermanentError("the document has no segments to chunk")
        if text:
            return text, bodies.with_texts(text, segments)
        return bodies.reconstruct(segments), segments  # a version-1 producer sent the texts in the segments

    def _mentions(self, draft: ChunkDraft, ev: DocumentExtracted) -> list[TimeMention]:
        """The times a passage speaks of, read against its own time: when it was said in a recording
        whose start is known, else the record's time."""
        said_at: datetime = ev.captured_at
        if ev.recording_start is not None and draft.t_start is not None:
            said_at = ev.recording_start + timedelta(seconds=draft.t_start)
        return [TimeMention(start=m.start, end=m.end, expression=m.expression)
                for m in mentioned_times(draft.text, said_at, self.zone, conventions=self.conventions)]

    def process(self, event: DocumentExtracted) -> list[ChunksCreated]:
        """Chunk one document."""
        (result,) = self.process_batch([event])
        if isinstance(result, Exception):
            raise result
        return result

    def process_batch(self, events: Sequence[DocumentExtracted],
                      admitted: Sequence[object] | None = None) -> list[list[ChunksCreated] | Exception]:
        """Chunk several documents: each is cut on its own (a bad one fails alone), and the chunk lists that go by
        claim check are stored under one fence of all their jobs per user."""
        results: list[list[ChunksCreated] | Exception] = []
        pending: list[tuple[int, DocumentExtracted, bytes | None, list[Chunk]]] = []
        for i, ev in enumerate(events):
            try:
                chunks = self._chunks(ev)
            except Exception as exc:
                results.append(exc)
                continue
            results.append([])
            # Whole records, not only texts: thousands of tiny chunks (one per code block) add up.
            pending.append((i, ev, claimcheck.oversized([c.to_record() for c in chunks]), chunks))
        for user_id in dict.fromkeys(ev.user_id for _i, ev, _r, _c in pending):
            mine = [p for p in pending if p[1].user_id == user_id]
            needs_fence = [p for p in mine if p[2] is not None]
            refs: dict[int, str | None] = {p[0]: None for p in mine}
            if needs_fence:
                with self.fence.hold_live(user_id, [p[1].job_id for p in needs_fence]) as states:
                    for i, ev, data, _chunks in needs_fence:
                        state = states[ev.job_id]
                        if state != "live":
                            results[i] = JobGone(ev.job_id, state)
                            continue
                        key = keys.chunks_key(ev.user_id, ev.document_id)
                        try:
                            assert data is not None
                            self.objects.put(key, data, content_type="application/json")
                            refs[i] = key
                        except Exception as exc:
                            results[i] = exc
            for i, ev, _records, chunks in mine:
                if not isinstance(results[i], Exception):
                    results[i] = [self._created(ev, chunks, refs[i])]
        return results

    def _chunks(self, ev: DocumentExtracted) -> list[Chunk]:
        """The document's passages (raises for a document that cannot be chunked)."""
        full_text, segments = self._body(ev)
        drafts = chunk_segments(sorted(segments, key=lambda s: s.char_start), full_text, self.config)
        if 0 < self.max_chunks < len(drafts):
            raise PermanentError(too_many_chunks(len(drafts), self.max_chunks))
        chunks = [
            Chunk(chunk_id=ids.chunk_id(ev.document_id, d.index), index=d.index, text=d.text,
                  char_start=d.char_start, char_end=d.char_end, token_count=d.token_count,
                  heading_path=list(d.heading_path), kind=d.kind, page=d.page, t_start=d.t_start, t_end=d.t_end,
                  tags=list(ev.tags),  # a note's front-matter tags, shown with every search hit
                  mentions=self._mentions(d, ev), speakers=list(d.speakers), turn_ids=list(d.turn_ids),
                  links=passage_links(d.text, markdown=ev.modality in ("markdown", "note")),
                  word_times=list(d.word_times))
            for d in drafts
        ]
        return chunks

    def _created(self, ev: DocumentExtracted, chunks: list[Chunk], chunks_ref: str | None) -> ChunksCreated:
        return ChunksCreated(
            event_id=ids.event_id(ev.job_id, self.step.name), job_id=ev.job_id, user_id=ev.user_id,
            artifact_id=ev.artifact_id, source_id=ev.source_id, document_id=ev.document_id, title=ev.title,
            modality=ev.modality, content_type=ev.content_type, captured_at=ev.captured_at,
            ingested_at=ev.ingested_at, chunks=[] if chunks_ref else chunks, chunks_ref=chunks_ref,
            chunk_count=len(chunks), source_uri=ev.source_uri or ev.metadata.get("source_uri", ""),
            captured_at_source=ev.captured_at_source, recording_start=ev.recording_start, version=ev.version,
            recurrence=ev.recurrence,
        )
