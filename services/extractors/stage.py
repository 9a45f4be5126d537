"""Extractor stage: ``artifacts.submitted`` -> ``documents.extracted``.

Loads the raw bytes (inline or by claim check), turns them into a structured document,
decides the document's event time, records the document in the metadata store and emits
it.  No broker import: the runner does the Kafka part.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, ClassVar

from secondbrain import ids, keys
from secondbrain.events.models import ArtifactSubmitted, DocumentExtracted, Segment
from secondbrain.pipeline import claimcheck, topics
from secondbrain.pipeline.errors import PermanentError
from secondbrain.pipeline.stage import Emit, JobRef
from secondbrain.ports import ArtifactRecord, DocumentRecord, MetadataStore, ObjectNotFound, ObjectStore
from services.extractors import text as text_extractor

log = logging.getLogger(__name__)


def resolved_job_id(ev: ArtifactSubmitted) -> str:
    """The event's job id, or one derived from its event id (producers may leave it out)."""
    return ev.job_id or ids.job_id(ev.user_id, f"event:{ev.event_id}")


class ExtractorStage:
    """Turns an artifact into a document made of typed segments with offsets."""

    name: ClassVar[str] = "extract"
    input_topic: ClassVar[str] = topics.ARTIFACTS_SUBMITTED
    input_type: ClassVar[type[Any]] = ArtifactSubmitted
    completes_stage: ClassVar[bool] = True

    def __init__(self, objects: ObjectStore, metadata: MetadataStore, *, max_bytes: int) -> None:
        self.objects = objects
        self.metadata = metadata
        self.max_bytes = max_bytes

    def job_of(self, event: ArtifactSubmitted) -> JobRef:
        """Job and user of the event."""
        return JobRef(resolved_job_id(event), event.user_id)

    def _raw_bytes(self, ev: ArtifactSubmitted) -> bytes:
        if ev.content is not None:
            return ev.content
        assert ev.object_key is not None  # validate() guarantees one of the two
        if not keys.owns_key(ev.user_id, ev.object_key):
            # An event must never make the pipeline read another user's object.
            raise PermanentError(f"object key {ev.object_key!r} is outside the user's storage",
                                 kind="unauthorized")
        info = self.objects.stat(ev.object_key)
        if info is None:
            raise PermanentError(f"the raw artifact {ev.object_key} is missing from object storage")
        if info.size > self.max_bytes:
            raise PermanentError(f"the artifact is {info.size} bytes, over the {self.max_bytes}-byte limit")
        try:
            return self.objects.get(ev.object_key)
        except ObjectNotFound as exc:
            raise PermanentError(f"the raw artifact {ev.object_key} is missing from object storage") from exc

    def _register(self, ev: ArtifactSubmitted, raw: bytes, job_id: str) -> tuple[str, str, str]:
        """Make sure artifact and job rows exist (events from other apps arrive without them)."""
        sha = ev.sha256 or ids.sha256_hex(raw)
        if ev.sha256 and ev.sha256 != ids.sha256_hex(raw):
            raise PermanentError("the artifact's bytes do not match its sha256: it was corrupted on the way")
        artifact_id = ids.artifact_id(ev.user_id, sha)
        if ev.artifact_id and ev.artifact_id != artifact_id:
            # Artifact ids are derived from the user and the bytes; any other id could name
            # another user's artifact.
            raise PermanentError("the event's artifact_id does not match its user and content", kind="unauthorized")
        source_id = ev.source_id or ids.source_id(ev.user_id, ev.source_uri)
        object_key = ev.object_key
        if object_key is None:  # inline content: keep the raw bytes like any upload
            object_key = keys.artifact_key(ev.user_id, artifact_id)
            if self.objects.stat(object_key) is None:
                self.objects.put(object_key, raw, size=len(raw), content_type=ev.content_type)
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=ev.user_id, source_id=source_id, source_uri=ev.source_uri,
            object_key=object_key, content_type=ev.content_type, size_bytes=len(raw), sha256=sha,
            filename=ev.filename, title=ev.title, captured_at=ev.captured_at, submitted_at=ev.submitted_at,
            producer=ev.producer, attributes=dict(ev.attributes),
        )
        result = self.metadata.register_external(record, job_id)
        if result.created:
            self.metadata.stage_started(ev.user_id, job_id, self.name, 1)
        elif self.metadata.get_job(ev.user_id, job_id) is None:
            raise PermanentError("the event's job_id belongs to another user", kind="unauthorized")
        return artifact_id, source_id, sha

    def process(self, event: ArtifactSubmitted) -> list[Emit[Any]]:
        """Extract one artifact."""
        ev = event
        try:
            keys.check_user_id(ev.user_id)
        except ValueError as exc:
            raise PermanentError(str(exc), kind="malformed") from exc
        if not self.metadata.user_exists(ev.user_id):
            raise PermanentError(f"unknown user {ev.user_id!r}: create the user before publishing for it",
                                 kind="unauthorized")
        job_id = resolved_job_id(ev)
        raw = self._raw_bytes(ev)
        artifact_id, source_id, _sha = self._register(ev, raw, job_id)

        is_note = ev.source_uri.startswith("note:") or ev.attributes.get("kind") == "note"
        if not (is_note or text_extractor.supports(ev.content_type, ev.filename)):
            raise PermanentError(
                f"unsupported content type {ev.content_type!r}"
                f"{f' ({ev.filename})' if ev.filename else ''}: text and Markdown are supported"
            )
        doc = text_extractor.extract_text(raw, content_type=ev.content_type, filename=ev.filename,
                                          is_note=is_note)
        ingested_at = datetime.now(UTC)
        if ev.captured_at is not None:
            captured_at, captured_src = ev.captured_at, "user"
        elif doc.stated_time is not None:
            captured_at, captured_src = doc.stated_time, "file_metadata"
        else:
            captured_at, captured_src = ev.submitted_at or ingested_at, "ingested"
        title = ev.title or doc.title or ev.filename or "Untitled"
        document_id = ids.document_id(artifact_id)
        segments = [
            Segment(index=s.index, kind=s.kind, text=s.text, char_start=s.char_start, char_end=s.char_end,
                    heading_path=list(s.heading_path), page=None, t_start=None, t_end=None,
                    attributes=dict(s.attributes))
            for s in doc.segments
        ]
        # Measure whole records, not only texts: tens of thousands of tiny segments make an event
        # too large for a message with little text (their JSON is larger than their Avro encoding).
        body_ref = claimcheck.offload(self.objects, keys.document_body_key(ev.user_id, document_id),
                                      [s.to_record() for s in segments])
        if body_ref is not None:
            segments = []
        metadata = {**doc.metadata, "filename": ev.filename or "", "source_uri": ev.source_uri}
        self.metadata.save_document(DocumentRecord(
            document_id=document_id, user_id=ev.user_id, artifact_id=artifact_id, source_id=source_id,
            title=title, modality=doc.modality, content_type=ev.content_type, captured_at=captured_at,
            captured_at_source=captured_src, ingested_at=ingested_at, char_count=len(doc.full_text),
            metadata={k: v for k, v in metadata.items() if v},
        ))
        out = DocumentExtracted(
            event_id=ids.event_id(job_id, self.name), job_id=job_id, user_id=ev.user_id,
            artifact_id=artifact_id, source_id=source_id, document_id=document_id, title=title,
            modality=doc.modality, content_type=ev.content_type, captured_at=captured_at,
            captured_at_source=captured_src, ingested_at=ingested_at, text_length=len(doc.full_text),
            segments=segments, body_ref=body_ref, metadata={k: v for k, v in metadata.items() if v},
        )
        log.info("document extracted", extra={"job_id": job_id, "document_id": document_id,
                                               "segments": len(doc.segments), "modality": doc.modality})
        return [Emit(topics.DOCUMENTS_EXTRACTED, ev.user_id, out)]
