"""Extractor stage: ``artifacts.submitted`` -> ``documents.extracted``.

Loads the raw bytes (inline or by claim check), ends the job as a duplicate when the same
bytes were already extracted, decides from the bytes which extractor applies, turns the
artifact into a document of typed segments with provenance, decides the document's event
time, records the document (as the next version of its source) and emits its full text once,
with the segments pointing into it.  No broker import: the runner does the Kafka part.

Ports: the object store (raw bytes, large bodies), users (admission), intake (artifacts other
apps publish arrive without rows), the job ledger (admission, duplicates), the catalog
(documents and their versions) and the job fence (objects are written, and the document saved, only
while the job is live: not after its source was deleted, its user erased or a newer submission
replaced it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

from secondbrain import ids, keys, sniff
from secondbrain.errors import PermanentError, SourceGone, classify
from secondbrain.events import bodies, signing
from secondbrain.events.models import ArtifactSubmitted, DocumentExtracted, Segment
from secondbrain.pipeline import admission, claimcheck, topology
from secondbrain.pipeline.stage import JobRef, require_known_user
from secondbrain.ports import (
    ApiKeys,
    ArtifactGone,
    ArtifactRecord,
    Catalog,
    DocumentRecord,
    Intake,
    JobFence,
    JobLedger,
    JobView,
    Lifecycle,
    ObjectNotFound,
    ObjectStore,
    Users,
)
from secondbrain.tags import MAX_TAGS_PER_SOURCE, normalise_tags
from secondbrain.titles import meaningful
from services.extractors.document import Extracted, ExtractionContext, assemble
from services.extractors.registry import ExtractorSet

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueuedHere:
    """What admission learned of an event secondbrain queued itself: its artifact and job rows exist (the
    work need not register them), and whether the same bytes were extracted before (by which job)."""

    artifact_id: str
    extracted_before: str | None


def resolved_job_id(ev: ArtifactSubmitted) -> str:
    """The event's job id, or one derived from its event id (producers may leave it out)."""
    return ev.job_id or ids.job_id(ev.user_id, f"event:{ev.event_id}")


class ExtractorStage:
    """Turns an artifact into a document made of typed segments with offsets."""

    step: ClassVar[topology.Step] = topology.EXTRACT

    def __init__(self, objects: ObjectStore, *, users: Users, api_keys: ApiKeys, intake: Intake, jobs: JobLedger,
                 fence: JobFence, catalog: Catalog, lifecycle: Lifecycle, extractors: ExtractorSet,
                 max_bytes: int) -> None:
        self.objects = objects
        self.fence = fence
        self.users = users
        self.api_keys = api_keys
        self.intake = intake
        self.jobs = jobs
        self.catalog = catalog
        self.lifecycle = lifecycle
        self.extractors = extractors
        self.max_bytes = max_bytes

    def warm_up(self) -> None:
        """Wait until the extractors' models are loaded (raises when they cannot be)."""
        self.extractors.wait_ready()

    def job_of(self, event: ArtifactSubmitted) -> JobRef:
        """Job, user and source of the event."""
        return JobRef(resolved_job_id(event), event.user_id,
                      event.source_id or ids.source_id(event.user_id, event.source_uri))

    def admit_many(self, items: Sequence[tuple[ArtifactSubmitted, bytes, Mapping[str, str]]]) -> list[object]:
        """:meth:`admit` of each event, with the jobs of the unsigned ones read in one statement per user: what
        each check found, or the exception refusing or dropping it.  An error a retry may mend fails the whole
        call (the runner retries it)."""
        wanted: dict[str, list[str]] = {}
        for ev, _value, headers in items:
            if signing.signed_key_id(headers) is None and ev.job_id and _valid_user(ev.user_id):
                wanted.setdefault(ev.user_id, []).append(ev.job_id)
        known = {user: self.jobs.get_jobs(user, job_ids) for user, job_ids in wanted.items()}
        out: list[object] = []
        for ev, value, headers in items:
            try:
                out.append(self.admit(ev, value, headers, known=known.get(ev.user_id)))
            except Exception as exc:
                if classify(exc) == "retryable" and not isinstance(exc, SourceGone):
                    raise
                out.append(exc)
        return out

    def admit(self, event: ArtifactSubmitted, value: bytes, headers: Mapping[str, str],
              known: Mapping[str, JobView] | None = None) -> QueuedHere | None:
        """Let in events signed by one of the user's keys, or queued by the gateway or the fetcher
        for exactly this artifact (see :mod:`secondbrain.pipeline.admission`); work left over from a
        source deleted since is dropped here, before anything is read.  What the check found of an event
        queued here is handed to :meth:`process`."""
        source_id = event.source_id or ids.source_id(event.user_id, event.source_uri)
        job_id = resolved_job_id(event)
        seen: list[JobView] = []

        def produced_here(job: JobView) -> bool:
            seen.append(job)
            return job.artifact_id is not None and job.artifact_id == event.artifact_id

        signed = admission.admit(
            self.users, self.api_keys, self.jobs if known is None else cast(JobLedger, _Known(self.jobs, known)),
            user_id=event.user_id, job_id=event.job_id, value=value,
            headers=headers, produced_here=produced_here,
            gone=lambda: self.lifecycle.source_deleted(event.user_id, source_id, job_id, event.submitted_at))
        if signed is None and event.artifact_id and seen:
            # Queued here: its artifact and job rows exist already (process() need not register them), and
            # the lookup said whether the same bytes were extracted before (process() need not ask again).
            return QueuedHere(event.artifact_id, seen[0].extracted_before)
        return None

    def discard(self, event: ArtifactSubmitted, outputs: list[DocumentExtracted]) -> None:
        """The source was deleted while this ran: remove the document body written for it (the rows went
        with the source)."""
        for out in outputs:
            if out.body_ref is not None and keys.owns_key(out.user_id, out.body_ref):
                self.objects.delete(out.body_ref)

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

    def _register(self, ev: ArtifactSubmitted, raw: bytes, job_id: str,
                  admitted: QueuedHere | None) -> tuple[str, str, str] | None:
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
        object_key = ev.object_key or keys.artifact_key(ev.user_id, artifact_id)
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=ev.user_id, source_id=source_id, source_uri=ev.source_uri,
            object_key=object_key, content_type=ev.content_type, size_bytes=len(raw), sha256=sha,
            filename=ev.filename, title=ev.title, captured_at=ev.captured_at, submitted_at=ev.submitted_at,
            producer=ev.producer, attributes=dict(ev.attributes),
        )
        if admitted is not None and admitted.artifact_id == artifact_id:
            # The gateway or the fetcher registered both rows with the job (admission saw them).
            return artifact_id, source_id, sha
        result = self.intake.register_external(record, job_id)
        if not result.created and self.jobs.get_job(ev.user_id, job_id) is None:
            if self.lifecycle.source_deleted(ev.user_id, source_id, job_id, ev.submitted_at):
                return None
            raise PermanentError("the event's job_id belongs to another user", kind="unauthorized")
        if ev.object_key is None:  # inline content: keep the raw bytes like any upload, once the job holds them
            with self.fence.hold(ev.user_id, job_id):
                if self.objects.stat(object_key) is None:
                    self.objects.put(object_key, raw, size=len(raw), content_type=ev.content_type)
        return artifact_id, source_id, sha

    def process(self, event: ArtifactSubmitted, admitted: QueuedHere | None = None) -> list[DocumentExtracted]:
        """Extract one artifact (or end its job as a duplicate of an earlier one); ``admitted``: what
        :meth:`admit` found of it."""
        (result,) = self.process_batch([event], [admitted])
        if isinstance(result, Exception):
            raise result
        return result

    def process_batch(self, events: Sequence[ArtifactSubmitted], admitted: Sequence[QueuedHere | None] | None = None
                      ) -> list[list[DocumentExtracted] | Exception]:
        """Extract several artifacts: each on its own (a bad one fails alone), then their documents saved with
        one write (:meth:`~secondbrain.ports.Catalog.save_documents`)."""
        found = list(admitted) if admitted is not None else [None] * len(events)
        results: list[list[DocumentExtracted] | Exception] = []
        drafts: list[tuple[int, _Draft]] = []
        for i, ev in enumerate(events):
            try:
                draft = self._extract(ev, found[i])
            except Exception as exc:
                results.append(exc)
                continue
            results.append([])
            if draft is not None:
                drafts.append((i, draft))
        saved = self.catalog.save_documents([(d.record, d.job_id) for _i, d in drafts])
        adopting: dict[str, dict[str, list[str]]] = {}  # user -> source -> tags its first version brings
        for (i, draft), version in zip(drafts, saved, strict=True):
            try:
                results[i] = [self._extracted(events[i], draft, version)]
            except Exception as exc:
                results[i] = exc
                continue
            brought = [t for key in ("tags", "attr.tags", "attr.import.tags")
                       for t in draft.metadata.get(key, "").split()]
            if version == 1 and brought:
                # A source's first version brings its own tags (a note's front matter, an import's labels or its
                # ``import.tags`` attribute, a producer's ``tags`` attribute); after that its tags are the
                # person's to change, and an edited text does not bring removed ones back.
                adopting.setdefault(events[i].user_id, {})[draft.record.source_id] = brought
        for user_id, brought_by_source in adopting.items():
            self._adopt_tags(user_id, brought_by_source)
        return results

    def _extract(self, ev: ArtifactSubmitted, admitted: QueuedHere | None) -> _Draft | None:
        """The artifact extracted (its body stored when it does not travel inline), ready to be saved; ``None``
        when the job ended as a duplicate of an earlier one."""
        job_id = resolved_job_id(ev)
        if admitted is None:  # not admitted as secondbrain's own (signed, or not checked: a tool): check the user
            require_known_user(self.users, ev.user_id)
        raw = self._raw_bytes(ev)
        registered = self._register(ev, raw, job_id, admitted)
        if registered is None:
            raise SourceGone(ev.source_uri)
        artifact_id, source_id, _sha = registered

        if admitted is not None and admitted.artifact_id == artifact_id:
            original = admitted.extracted_before  # read with the job at admission
        else:
            original = self.jobs.find_original_job(ev.user_id, artifact_id, job_id)
        if original is not None:
            # The same bytes were already extracted for this user: keep one copy, point to it.
            self.jobs.job_duplicate(ev.user_id, job_id, original)
            log.info("duplicate artifact", extra={"job_id": job_id, "duplicate_of": original,
                                                   "artifact_id": artifact_id})
            return None

        is_note = ev.capture == "note"
        resolved = sniff.resolve(raw, ev.content_type, ev.filename, is_note=is_note)
        params = ev.content_type.partition(";")[2]  # keep a declared charset for text and HTML
        content_type = resolved.content_type + (f";{params}" if params and resolved.family in ("text", "html")
                                                 else "")
        extractor = self.extractors.get(resolved.family)
        doc = extractor.extract(raw, ExtractionContext(content_type=content_type, filename=ev.filename,
                                                       source_uri=ev.source_uri, is_note=is_note))
        segments, full_text = assemble(doc.blocks)
        if not segments or not full_text.strip():
            raise PermanentError("no text could be extracted from the file")
        ingested_at = datetime.now(UTC)
        captured_at, captured_src = self._event_time(ev, doc, ingested_at)
        title = ev.title or meaningful(doc.title) or ev.filename or _title_from_uri(ev.source_uri) or "Untitled"
        document_id = ids.document_id(artifact_id)
        # The text travels once: inline with offsets-only segments, or as one claim-check object.  Measure
        # whole records: tens of thousands of tiny segments outweigh little text.
        body = bodies.pack(full_text, segments)
        body_ref: str | None = None
        data = claimcheck.oversized(body)
        if data is not None:  # nothing is written for a body that travels inline: no fence to hold then
            with self.fence.hold(ev.user_id, job_id):  # written only while the job is live
                body_ref = keys.document_body_key(ev.user_id, document_id)
                self.objects.put(body_ref, data, content_type="application/json")
        metadata = {**{f"attr.{k}": v for k, v in ev.attributes.items() if k != "kind"}, **doc.metadata,
                    "filename": ev.filename or "", "format": resolved.sniffed,
                    "language": doc.language or doc.metadata.get("language", "")}
        recording_start = doc.recording_start
        if recording_start is None and doc.modality == "audio" and captured_src == "user":
            recording_start = captured_at  # the producer said when the recording happened
        metadata = {k: str(v) for k, v in metadata.items() if v not in (None, "")}
        record = DocumentRecord(
            document_id=document_id, user_id=ev.user_id, artifact_id=artifact_id, source_id=source_id,
            title=title, modality=doc.modality, content_type=content_type, captured_at=captured_at,
            captured_at_source=captured_src, ingested_at=ingested_at, char_count=len(full_text),
            metadata={**metadata, "source_uri": ev.source_uri})
        return _Draft(job_id, record, metadata, segments, full_text, body_ref, recording_start, doc.recurrence,
                      len(segments), list(doc.tags))

    def _extracted(self, ev: ArtifactSubmitted, draft: _Draft, version: int | Exception) -> DocumentExtracted:
        """The event saying the document was saved as ``version`` (or what kept it from being saved)."""
        record, metadata, body_ref = draft.record, draft.metadata, draft.body_ref
        if isinstance(version, Exception):
            # Deleted, erased or replaced meanwhile: nothing of it stays.
            if body_ref is not None:
                self.objects.delete(body_ref)
            if isinstance(version, ArtifactGone):
                raise SourceGone(record.source_id) from None
            raise version
        out = DocumentExtracted(
            event_id=ids.event_id(draft.job_id, self.step.name), job_id=draft.job_id, user_id=ev.user_id,
            artifact_id=record.artifact_id, source_id=record.source_id, document_id=record.document_id,
            title=record.title, modality=record.modality, content_type=record.content_type,
            captured_at=record.captured_at, captured_at_source=record.captured_at_source,
            ingested_at=record.ingested_at, text_length=len(draft.full_text),
            segments=[] if body_ref else bodies.without_texts(draft.segments), body_ref=body_ref,
            text="" if body_ref else draft.full_text, metadata=metadata, source_uri=ev.source_uri, version=version,
            recording_start=draft.recording_start.astimezone(UTC) if draft.recording_start else None,
            recurrence=draft.recurrence, tags=list(draft.tags),
        )
        log.info("document extracted", extra={"job_id": draft.job_id, "document_id": record.document_id,
                                               "segments": draft.segment_count, "modality": record.modality,
                                               "captured_at_source": record.captured_at_source,
                                               "version": version})
        return out

    def _adopt_tags(self, user_id: str, found: Mapping[str, list[str]]) -> None:
        """Each source (key) takes the tags its first version brought, besides those it has (read for all at once,
        written with one statement; a source over the limit keeps the first tags, as one tag list)."""
        have = self.catalog.source_tags(user_id, list(found))
        adding: dict[str, list[str]] = {}
        for source_id, brought in found.items():
            tags, had = normalise_tags(brought), have.get(source_id, [])
            if not tags or set(tags) <= set(had):
                continue
            merged = normalise_tags([*had, *tags])[:MAX_TAGS_PER_SOURCE]
            if set(had) <= set(merged):
                adding[source_id] = [t for t in merged if t not in had]
            else:  # the limit drops some it had: the list as a whole
                self.catalog.set_source_tags(user_id, source_id, merged)
        self.catalog.add_source_tags(user_id, adding)

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


@dataclass(frozen=True, slots=True)
class _Draft:
    """An artifact extracted, its document not saved yet."""

    job_id: str
    record: DocumentRecord
    metadata: dict[str, str]
    segments: list[Segment]
    full_text: str
    body_ref: str | None
    recording_start: datetime | None
    recurrence: Any
    segment_count: int
    tags: list[str]


def _valid_user(user_id: str) -> bool:
    try:
        keys.check_user_id(user_id)
    except ValueError:
        return False
    return True


class _Known:
    """The job ledger, with some of a user's jobs already read (absent from ``known``: no such job)."""

    def __init__(self, jobs: JobLedger, known: Mapping[str, JobView]) -> None:
        self._jobs, self._known = jobs, known

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        return self._known.get(job_id)

    def __getattr__(self, name: str) -> object:
        return getattr(self._jobs, name)


def _title_from_uri(uri: str) -> str | None:
    """A readable fallback title from a URL (host and last path part)."""
    if not uri.startswith(("http://", "https://")):
        return None
    rest = uri.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0].rstrip("/")
    host, _, path = rest.partition("/")
    last = path.rsplit("/", 1)[-1] if path else ""
    return f"{host}: {last}" if last else host
