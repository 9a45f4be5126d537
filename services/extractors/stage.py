"""Extractor stage: ``artifacts.submitted`` -> ``documents.extracted``.

Loads the raw bytes (inline or by claim check), ends the job as a duplicate when the same
bytes were already extracted, decides from the bytes which extractor applies, turns the
artifact into a document of typed segments with provenance, decides the document's event
time, records the document (as the next version of its source) and emits it.  No broker
import: the runner does the Kafka part.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from secondbrain import ids, keys
from secondbrain.events.models import ArtifactSubmitted, DocumentExtracted, Segment
from secondbrain.pipeline import admission, claimcheck, topics
from secondbrain.pipeline.errors import PermanentError
from secondbrain.pipeline.stage import Emit, JobRef, require_known_user
from secondbrain.ports import ArtifactRecord, DocumentRecord, MetadataStore, ObjectNotFound, ObjectStore
from services.extractors import sniff
from services.extractors.document import Extracted, ExtractionContext, assemble
from services.extractors.registry import ExtractorSet

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

    def __init__(self, objects: ObjectStore, metadata: MetadataStore, extractors: ExtractorSet, *,
                 max_bytes: int) -> None:
        self.objects = objects
        self.metadata = metadata
        self.extractors = extractors
        self.max_bytes = max_bytes

    def warm_up(self) -> None:
        """Wait until the extractors' models are loaded (raises when they cannot be)."""
        self.extractors.wait_ready()

    def job_of(self, event: ArtifactSubmitted) -> JobRef:
        """Job and user of the event."""
        return JobRef(resolved_job_id(event), event.user_id)

    def left_over(self, ev: ArtifactSubmitted) -> bool:
        """Whether the event is work still in flight for a source deleted since (it is dropped)."""
        source_id = ev.source_id or ids.source_id(ev.user_id, ev.source_uri)
        return self.metadata.source_deleted(ev.user_id, source_id, resolved_job_id(ev), ev.submitted_at)

    def admit(self, event: ArtifactSubmitted, value: bytes, headers: Mapping[str, str]) -> None:
        """Let in events signed by one of the user's keys, or queued by the gateway or the fetcher
        for exactly this artifact (see :mod:`secondbrain.pipeline.admission`)."""
        if self.left_over(event):
            return  # its job was deleted with its source: process() drops it without touching anything
        admission.admit(self.metadata, user_id=event.user_id, job_id=event.job_id, value=value, headers=headers,
                        produced_here=lambda job: job.artifact_id is not None
                        and job.artifact_id == event.artifact_id)

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

    def _register(self, ev: ArtifactSubmitted, raw: bytes, job_id: str) -> tuple[str, str, str] | None:
        """Make sure artifact and job rows exist (events from other apps arrive without them);
        ``None`` when the source was deleted meanwhile (nothing is registered then)."""
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
            if self.left_over(ev):
                return None
            raise PermanentError("the event's job_id belongs to another user", kind="unauthorized")
        return artifact_id, source_id, sha

    def process(self, event: ArtifactSubmitted) -> list[Emit[Any]]:
        """Extract one artifact (or end its job as a duplicate of an earlier one)."""
        ev = event
        require_known_user(self.metadata, ev.user_id)
        job_id = resolved_job_id(ev)
        if self.left_over(ev):  # before reading: the deletion removed the raw bytes too
            log.info("work of a deleted source dropped", extra={"job_id": job_id, "user_id": ev.user_id})
            return []
        raw = self._raw_bytes(ev)
        registered = self._register(ev, raw, job_id)
        if registered is None:
            log.info("work of a deleted source dropped", extra={"job_id": job_id, "user_id": ev.user_id})
            return []
        artifact_id, source_id, _sha = registered

        original = self.metadata.find_original_job(ev.user_id, artifact_id, job_id)
        if original is not None:
            # The same bytes were already extracted for this user: keep one copy, point to it.
            self.metadata.job_duplicate(ev.user_id, job_id, original)
            log.info("duplicate artifact", extra={"job_id": job_id, "duplicate_of": original,
                                                   "artifact_id": artifact_id})
            return []

        is_note = ev.source_uri.startswith("note:") or ev.attributes.get("kind") == "note"
        resolved = sniff.resolve(raw, ev.content_type, ev.filename, is_note=is_note)
        params = ev.content_type.partition(";")[2]  # keep a declared charset for text and HTML
        content_type = resolved.content_type + (f";{params}" if params and resolved.family in ("text", "html")
                                                 else "")
        extractor = self.extractors.get(resolved.family)
        doc = extractor.extract(raw, ExtractionContext(content_type=content_type, filename=ev.filename,
                                                       source_uri=ev.source_uri, is_note=is_note))
        drafts, full_text = assemble(doc.blocks)
        if not drafts or not full_text.strip():
            raise PermanentError("no text could be extracted from the file")
        ingested_at = datetime.now(UTC)
        captured_at, captured_src = self._event_time(ev, doc, ingested_at)
        title = ev.title or doc.title or ev.filename or _title_from_uri(ev.source_uri) or "Untitled"
        document_id = ids.document_id(artifact_id)
        segments = [
            Segment(index=d.index, kind=d.kind, text=d.text, char_start=d.char_start, char_end=d.char_end,
                    heading_path=list(d.heading_path), page=d.page, t_start=d.t_start, t_end=d.t_end,
                    attributes=dict(d.attributes))
            for d in drafts
        ]
        if self.left_over(ev):  # deleted while it was being extracted: write nothing
            log.info("work of a deleted source dropped", extra={"job_id": job_id, "user_id": ev.user_id})
            return []
        # Measure whole records, not only texts: tens of thousands of tiny segments make an event
        # too large for a message with little text (their JSON is larger than their Avro encoding).
        body_ref = claimcheck.offload(self.objects, keys.document_body_key(ev.user_id, document_id),
                                      [s.to_record() for s in segments])
        if body_ref is not None:
            segments = []
        metadata = {**{f"attr.{k}": v for k, v in ev.attributes.items() if k != "kind"}, **doc.metadata,
                    "filename": ev.filename or "", "source_uri": ev.source_uri, "format": resolved.sniffed,
                    "language": doc.language or doc.metadata.get("language", "")}
        recording_start = doc.recording_start
        if recording_start is None and doc.modality == "audio" and captured_src == "user":
            recording_start = captured_at  # the producer said when the recording happened
        if recording_start is not None:
            metadata["recording_start"] = recording_start.astimezone(UTC).isoformat()
        metadata = {k: str(v) for k, v in metadata.items() if v not in (None, "")}
        version = self.metadata.save_document(DocumentRecord(
            document_id=document_id, user_id=ev.user_id, artifact_id=artifact_id, source_id=source_id,
            title=title, modality=doc.modality, content_type=content_type, captured_at=captured_at,
            captured_at_source=captured_src, ingested_at=ingested_at, char_count=len(full_text),
            metadata=metadata,
        ))
        metadata["version"] = str(version)
        out = DocumentExtracted(
            event_id=ids.event_id(job_id, self.name), job_id=job_id, user_id=ev.user_id,
            artifact_id=artifact_id, source_id=source_id, document_id=document_id, title=title,
            modality=doc.modality, content_type=content_type, captured_at=captured_at,
            captured_at_source=captured_src, ingested_at=ingested_at, text_length=len(full_text),
            segments=segments, body_ref=body_ref, metadata=metadata,
        )
        log.info("document extracted", extra={"job_id": job_id, "document_id": document_id,
                                               "segments": len(drafts), "modality": doc.modality,
                                               "captured_at_source": captured_src, "version": version})
        return [Emit(topics.DOCUMENTS_EXTRACTED, ev.user_id, out)]

    @staticmethod
    def _event_time(ev: ArtifactSubmitted, doc: Extracted, ingested_at: datetime) -> tuple[datetime, str]:
        """When the content happened, and who said so: the producer, the file's own metadata
        (EXIF, PDF CreationDate, audio tags), a page's stated publish date, else ingestion."""
        if ev.captured_at is not None:
            return ev.captured_at, "user"
        if doc.stated_time is not None and doc.stated_time_source == "file_metadata":
            return doc.stated_time, "file_metadata"
        if doc.stated_time is not None:
            return doc.stated_time, "published"
        return ev.submitted_at or ingested_at, "ingested"


def _title_from_uri(uri: str) -> str | None:
    """A readable fallback title from a URL (host and last path part)."""
    if not uri.startswith(("http://", "https://")):
        return None
    rest = uri.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0].rstrip("/")
    host, _, path = rest.partition("/")
    last = path.rsplit("/", 1)[-1] if path else ""
    return f"{host}: {last}" if last else host
