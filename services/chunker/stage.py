"""Chunker stage: ``documents.extracted`` -> ``chunks.created``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from secondbrain import ids, keys
from secondbrain.events.models import Chunk, ChunksCreated, DocumentExtracted, Segment
from secondbrain.pipeline import claimcheck, topics
from secondbrain.pipeline.errors import PermanentError
from secondbrain.pipeline.stage import Emit, JobRef
from secondbrain.ports import ObjectStore
from services.chunker.logic import ChunkingConfig, SegmentIn, chunk_segments


def reconstruct_text(segments: list[Segment]) -> str:
    """Rebuild the document's full text from segments placed at their offsets (gaps become newlines).

    Segments that overlap (the extractor makes none) are written in order of their start, each over
    the text placed before it.
    """
    parts: list[str] = []
    end = 0  # length of the text placed so far
    for s in sorted(segments, key=lambda seg: seg.char_start):
        if s.char_start < 0 or s.char_end - s.char_start != len(s.text):
            raise PermanentError(f"segment {s.index} has offsets that do not match its text")
        if s.char_start >= end:
            parts += ["\n" * (s.char_start - end), s.text]
        else:
            placed = "".join(parts)
            parts = [placed[:s.char_start], s.text, placed[s.char_end:]]
        end = max(end, s.char_end)
    return "".join(parts)


class ChunkerStage:
    """Cuts a document into retrieval-sized chunks that respect its structure."""

    name: ClassVar[str] = "chunk"
    input_topic: ClassVar[str] = topics.DOCUMENTS_EXTRACTED
    input_type: ClassVar[type[Any]] = DocumentExtracted
    completes_stage: ClassVar[bool] = True

    def __init__(self, objects: ObjectStore, config: ChunkingConfig) -> None:
        self.objects = objects
        self.config = config

    def job_of(self, event: DocumentExtracted) -> JobRef:
        """Job and user of the event."""
        return JobRef(event.job_id, event.user_id)

    def _segments(self, ev: DocumentExtracted) -> list[Segment]:
        if ev.body_ref is None:
            return list(ev.segments)
        if not keys.owns_key(ev.user_id, ev.body_ref):
            raise PermanentError("the document body reference is outside the user's storage",
                                 kind="unauthorized")
        return [Segment.from_record(r) for r in claimcheck.load(self.objects, ev.body_ref)]

    def process(self, event: DocumentExtracted) -> list[Emit[Any]]:
        """Chunk one document."""
        ev = event
        segments = sorted(self._segments(ev), key=lambda s: s.char_start)
        if not segments:
            raise PermanentError("the document has no segments to chunk")
        full_text = reconstruct_text(segments)
        drafts = chunk_segments(
            [SegmentIn(s.index, s.kind, s.text, s.char_start, s.char_end, tuple(s.heading_path), s.page,
                       s.t_start, s.t_end, dict(s.attributes)) for s in segments],
            full_text, self.config,
        )
        chunks = [
            Chunk(chunk_id=ids.chunk_id(ev.document_id, d.index), index=d.index, text=d.text,
                  char_start=d.char_start, char_end=d.char_end, token_count=d.token_count,
                  heading_path=list(d.heading_path), kind=d.kind, page=d.page, t_start=d.t_start, t_end=d.t_end,
                  attributes=dict(d.attributes))
            for d in drafts
        ]
        # Whole records, not only texts: thousands of tiny chunks (one per code block) add up.
        chunks_ref = claimcheck.offload(self.objects, keys.chunks_key(ev.user_id, ev.document_id),
                                        [c.to_record() for c in chunks])
        out = ChunksCreated(
            event_id=ids.event_id(ev.job_id, self.name), job_id=ev.job_id, user_id=ev.user_id,
            artifact_id=ev.artifact_id, source_id=ev.source_id, document_id=ev.document_id, title=ev.title,
            modality=ev.modality, content_type=ev.content_type, captured_at=ev.captured_at,
            ingested_at=ev.ingested_at, chunks=[] if chunks_ref else chunks, chunks_ref=chunks_ref,
            chunk_count=len(chunks), source_uri=ev.metadata.get("source_uri", ""),
            captured_at_source=ev.captured_at_source, recording_start=_recording_start(ev),
            version=int(ev.metadata.get("version", "1") or 1),
        )
        return [Emit(topics.CHUNKS_CREATED, ev.user_id, out)]


def _recording_start(ev: DocumentExtracted) -> datetime | None:
    """Second 0 of a recording as a time, when the extractor knew it."""
    raw = ev.metadata.get("recording_start")
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
