"""A user's data over its whole life: delete a source, erase a user, expire raw files, export.

Pure functions over the store Protocols (no HTTP, no broker): the gateway's routes, the CLI and
the admin API call them the same way.

* :func:`delete_source` removes every version of a source from every store: its jobs (stages,
  events, outbox rows), documents, artifacts, vector points and objects (raw bytes and claim
  checks).  A tombstone makes the pipeline drop work still in flight for it, so a deleted
  source cannot come back; submitting it again later is new work and runs normally.
* :func:`remove_failed` removes a capture that failed (and the earlier failed tries of the same
  file): its jobs and the raw bytes nothing else uses; a source of which nothing else is left goes
  whole, as :func:`delete_source` removes it.
* :func:`erase_user` removes a user completely: rows, objects, vector collections.
* :func:`purge_expired_raw` applies ``SB_RAW_RETENTION_DAYS``: the raw bytes of finished jobs
  go, the index stays searchable, and the artifact remembers that its raw file expired.
* :func:`export_user` streams a ZIP of everything a user has (raw files, sources, extracted
  documents with their passages and provenance, conversations) without holding it in memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import mimetypes
import re
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from secondbrain import keys
from secondbrain.events import bodies
from secondbrain.passage import IndexedPassage
from secondbrain.ports import (
    ArtifactRecord,
    DocumentRecord,
    FailedRemoval,
    MetadataStore,
    ObjectNotFound,
    ObjectStore,
    SourceView,
    VectorFilter,
    VectorStore,
)
from secondbrain.ports.backup import BackupGate

log = logging.getLogger(__name__)

EXPORT_FORMAT = "secondbrain-export"
EXPORT_FORMAT_VERSION = 1


class SourceNotFound(KeyError):
    """The user has no such source (another user's source is reported the same way)."""


class JobNotFound(KeyError):
    """The user has no such job (another user's job is reported the same way)."""


# --------------------------------------------------------------------------- deleting a source


@dataclass(frozen=True, slots=True)
class DeletionReport:
    """What deleting a source removed."""

    source_id: str
    deleted_at: datetime
    jobs: int
    documents: int
    artifacts: int
    vector_points: int
    objects: int
    kept_artifacts: list[str] = field(default_factory=list)  # bytes another source still uses
    requeued_jobs: list[str] = field(default_factory=list)  # copies indexed again in their own name

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        return {**asdict(self), "deleted_at": self.deleted_at.isoformat()}


def document_prefix(user_id: str, document_id: str) -> str:
    """Where a document's claim-check objects (segments, chunks) live."""
    return keys.document_body_key(user_id, document_id).rsplit("/", 1)[0] + "/"


def delete_source(metadata: MetadataStore, objects: ObjectStore, vectors: VectorStore, user_id: str,
                  source_id: str) -> DeletionReport:
    """Delete every version of the user's source from every store; raise :class:`SourceNotFound`
    for an unknown source or another user's.

    The metadata goes first, in one transaction that leaves a tombstone, so the pipeline drops
    work still in flight for the source from then on; then the vector points (by source, in every
    collection of the user) and the objects.  When those fail, the tombstone keeps what is left
    to remove and calling this again finishes the job.  Duplicates of the content submitted under
    another name are queued again last, so they are indexed in their own name.
    """
    keys.check_user_id(user_id)
    plan = metadata.lifecycle.delete_source(user_id, source_id)
    if plan is None:
        raise SourceNotFound(source_id)
    flt = VectorFilter(source_ids=[source_id])
    points = vectors.count(user_id, flt)
    vectors.delete_where(user_id, flt)
    removed = 0
    for key in plan.object_keys:
        if not keys.owns_key(user_id, key):  # never another user's object, whatever a row says
            log.warning("object key outside the user's prefix left alone", extra={"user_id": user_id, "key": key})
            continue
        if objects.stat(key) is not None:
            objects.delete(key)
            removed += 1
    for document_id in plan.document_ids:
        removed += objects.delete_prefix(document_prefix(user_id, document_id))
    requeued = metadata.lifecycle.source_cleaned(user_id, source_id)
    report = DeletionReport(source_id=source_id, deleted_at=plan.deleted_at, jobs=len(plan.job_ids),
                            documents=len(plan.document_ids), artifacts=len(plan.artifact_ids),
                            vector_points=points, objects=removed, kept_artifacts=list(plan.kept_artifact_ids),
                            requeued_jobs=requeued)
    log.info("source deleted", extra={"user_id": user_id, **report.to_json()})
    return report


# --------------------------------------------------------------------------- removing a failed capture


def remove_failed(metadata: MetadataStore, objects: ObjectStore, vectors: VectorStore, user_id: str,
                  job_id: str) -> FailedRemoval:
    """Remove the user's failed capture: its job and the other failed tries of the same source, the raw
    files nothing else uses, and, when nothing of the source is left but what a failed try read (a
    document, passages), the source itself (:func:`delete_source`).  A version that worked stays.
    Raises :class:`JobNotFound` (unknown, or another user's) or :class:`~secondbrain.ports.JobNotFailed`."""
    keys.check_user_id(user_id)
    removal = metadata.lifecycle.remove_failed(user_id, job_id)
    if removal is None:
        raise JobNotFound(job_id)
    for key in removal.object_keys:
        if keys.owns_key(user_id, key) and objects.stat(key) is not None:
            objects.delete(key)
    source = removal.source_id
    if source is not None and not metadata.catalog.list_sources(user_id, 1, 0, source_id=source):
        with contextlib.suppress(SourceNotFound):
            delete_source(metadata, objects, vectors, user_id, source)
    log.info("failed capture removed", extra={"user_id": user_id, "job_ids": removal.job_ids,
                                              "objects": len(removal.object_keys)})
    return removal


# --------------------------------------------------------------------------- erasing a user


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What erasing a user removed."""

    user_id: str
    found: bool  # whether the user existed (erasing an unknown id still clears leftovers)
    rows: dict[str, int]
    objects: int

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        return asdict(self)


def erase_user(metadata: MetadataStore, objects: ObjectStore, vectors: VectorStore, user_id: str) -> ErasureReport:
    """Remove the user and everything theirs: every row, the object prefix, every vector collection.

    Rows go first (the user's keys stop working at once and the pipeline refuses their work in
    flight), then objects and vectors.  Idempotent: calling it again after a failure finishes it.
    The same user id may be created again afterwards and starts empty.
    """
    keys.check_user_id(user_id)
    rows = metadata.lifecycle.erase_user(user_id)
    removed = objects.delete_prefix(keys.user_prefix(user_id))
    vectors.drop_user(user_id)
    report = ErasureReport(user_id=user_id, found=rows.get("users", 0) > 0, rows=rows, objects=removed)
    log.info("user erased", extra={"user_id": user_id, "found": report.found, "objects": removed,
                                   "rows": sum(rows.values())})
    return report


# --------------------------------------------------------------------------- raw-file retention


@dataclass(frozen=True, slots=True)
class RetentionReport:
    """What one retention run removed."""

    cutoff: datetime
    artifacts: int
    bytes: int

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        return {"cutoff": self.cutoff.isoformat(), "artifacts": self.artifacts, "bytes": self.bytes}


def purge_expired_raw(metadata: MetadataStore, objects: ObjectStore, days: int, *, now: datetime | None = None,
                      batch: int = 500, gate: BackupGate | None) -> RetentionReport:
    """Remove the raw bytes of artifacts whose jobs all finished more than ``days`` days ago.

    Chunks and vectors stay (the text remains searchable); each artifact records when its raw
    file expired.  Bytes are removed before that is recorded, so an interrupted run is finished
    by the next one.  ``gate``: the deployment's backup gate, held over both (the one ``objects``
    holds, for re-entrancy); required, so no caller forgets it (None only where no backup can run).
    """
    if days < 0:
        raise ValueError("retention days must be 0 or more")
    cutoff = (now or datetime.now(UTC)) - timedelta(days=days)
    purged = size = 0
    while True:
        found = metadata.catalog.raw_expired(cutoff, batch)
        by_user: dict[str, list[ArtifactRecord]] = {}
        for art in found:
            by_user.setdefault(art.user_id, []).append(art)
        progress = 0
        for user_id, arts in by_user.items():
            # The bytes go before their removal is recorded: with the backup gate held over both, a backup's
            # dump never says a raw file is kept that its copy of the objects lacks.
            with gate.removing() if gate is not None else contextlib.nullcontext():
                for art in arts:
                    if keys.owns_key(user_id, art.object_key):
                        objects.delete(art.object_key)
                progress += metadata.catalog.mark_raw_purged(user_id, [a.artifact_id for a in arts])
            size += sum(a.size_bytes for a in arts)
        purged += progress
        if len(found) < batch or progress == 0:
            break
    report = RetentionReport(cutoff=cutoff, artifacts=purged, bytes=size)
    if purged:
        log.info("expired raw files removed", extra=report.to_json())
    return report


# --------------------------------------------------------------------------- export


class _Sink(io.RawIOBase):
    """What :mod:`zipfile` writes, collected until the export generator hands it on.

    Not seekable, so zipfile writes sizes after each member (data descriptors) and never goes
    back: the archive can be sent while it is being made.
    """

    def __init__(self) -> None:
        super().__init__()
        self._buf = bytearray()
        self._pos = 0

    def writable(self) -> bool:
        """Always."""
        return True

    def write(self, b: Any) -> int:
        """Keep ``b`` until :meth:`take`."""
        data = bytes(b)
        self._buf += data
        self._pos += len(data)
        return len(data)

    def tell(self) -> int:
        """Bytes written so far (zipfile records member offsets with it)."""
        return self._pos

    def take(self) -> bytes:
        """Everything written since the last call."""
        out = bytes(self._buf)
        self._buf.clear()
        return out


_COMPRESSED_TYPES = ("image/", "audio/", "video/", "application/pdf", "application/zip", "application/gzip",
                     "application/vnd.openxmlformats", "application/epub", "application/vnd.oasis")
_UNSAFE = re.compile(r"[^A-Za-z0-9._ ()+-]+")


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt else None


def _member(name: str, when: datetime, *, compress: bool = True) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=when.astimezone(UTC).timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    return info


def raw_filename(art: ArtifactRecord) -> str:
    """A safe file name for an artifact inside the archive (its own name when it had one)."""
    name = (art.filename or "").replace("\\", "/").split("/")[-1]
    name = _UNSAFE.sub("_", name).strip(" ._")[:150]
    if not name:
        base = "note" if art.source_uri.startswith("note:") else "original"
        kind = art.content_type.split(";", 1)[0].strip()
        ext = ".md" if kind == "text/markdown" else (mimetypes.guess_extension(kind) or "")
        name = base + ext
    return name


def _source_record(s: SourceView) -> dict[str, Any]:
    return {"source_id": s.source_id, "source_uri": s.source_uri, "title": s.title, "version": s.version,
            "superseded": s.superseded, "job_id": s.job_id, "status": s.status, "error": s.error,
            "artifact_id": s.artifact_id, "document_id": s.document_id, "content_type": s.content_type,
            "modality": s.modality, "size_bytes": s.size_bytes, "chunk_count": s.chunk_count,
            "captured_at": _iso(s.captured_at), "ingested_at": _iso(s.ingested_at),
            "raw": raw_state(s.artifact_id, s.raw_purged_at)}


def raw_state(artifact_id: str | None, raw_purged_at: datetime | None) -> str | None:
    """``kept``, ``expired`` (removed by retention) or ``None`` (nothing stored yet)."""
    if artifact_id is None:
        return None
    return "expired" if raw_purged_at else "kept"


def _place(pieces: list[tuple[int, str]]) -> str:
    """Text pieces placed at their character offsets (overlaps written over, gaps as newlines)."""
    out: list[str] = []
    end = 0
    for start, text in sorted(pieces, key=lambda p: p[0]):
        if start >= end:
            out += ["\n" * (start - end), text]
        else:
            placed = "".join(out)
            out = [placed[:start], text, placed[start + len(text):]]
        end = max(end, start + len(text))
    return "".join(out)


def _chunks(vectors: VectorStore, user_id: str, document_id: str) -> list[IndexedPassage]:
    found: list[IndexedPassage] = []
    offset: str | None = None
    while True:
        hits, offset = vectors.scroll(user_id, flt=VectorFilter(document_ids=[document_id]), limit=256, offset=offset)
        found += [IndexedPassage.from_payload(h.payload, h.id) for h in hits]
        if offset is None or not hits:
            break
    return sorted(found, key=lambda p: p.chunk_index)


def passages(vectors: VectorStore, user_id: str, document_id: str) -> list[dict[str, Any]]:
    """A document's indexed passages in reading order, with where each one is (page, second, heading)."""
    return [p.placement() for p in _chunks(vectors, user_id, document_id)]


def _document_json(objects: ObjectStore, vectors: VectorStore, doc: DocumentRecord) -> tuple[bytes, int]:
    """One document: its facts, the segments when the extractor stored them, the indexed passages
    with their provenance, and the text rebuilt from them."""
    chunks = _chunks(vectors, doc.user_id, doc.document_id)
    segments = None
    stored_text: str | None = None
    with contextlib.suppress(ObjectNotFound):  # stored only when too large to travel in an event
        body_text, found = bodies.unpack(json.loads(objects.get(keys.document_body_key(doc.user_id, doc.document_id))))
        if body_text:  # the full text, once, with segments pointing into it
            stored_text, segments = body_text, [s.to_record() for s in bodies.with_texts(body_text, found)]
        else:  # an older body: each segment carried its own text
            segments = [s.to_record() for s in found]
    if stored_text is not None:
        text: str | None = stored_text
        text_from = "document"
    elif segments:
        text = _place([(int(s["char_start"]), str(s["text"])) for s in segments])
        text_from = "segments"
    elif chunks:
        text = _place([(c.char_start, c.text) for c in chunks])
        text_from = "chunks"
    else:
        text, text_from = None, None
    body = {
        "document_id": doc.document_id, "source_id": doc.source_id, "artifact_id": doc.artifact_id,
        "version": doc.version, "superseded_at": _iso(doc.superseded_at), "title": doc.title,
        "modality": doc.modality, "content_type": doc.content_type, "captured_at": _iso(doc.captured_at),
        "captured_at_source": doc.captured_at_source, "ingested_at": _iso(doc.ingested_at),
        "char_count": doc.char_count, "chunk_count": doc.chunk_count, "metadata": dict(doc.metadata),
        "text": text, "text_from": text_from,
        "note": None if text is not None else "an older version: its passages left the index when a newer version "
                                              "was indexed (its raw file is under raw/ while it is kept)",
        "segments": segments, "chunks": [c.placement() for c in chunks],
    }
    return json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"), len(chunks)


def export_user(metadata: MetadataStore, objects: ObjectStore, vectors: VectorStore, user_id: str, *,
                now: datetime | None = None, page: int = 500) -> Iterator[bytes]:
    """The user's data as a ZIP archive, produced piece by piece (memory stays small whatever the
    account's size; raw files are copied in 1 MiB blocks).

    Layout: ``raw/<artifact_id>/<file name>`` (originals still kept), ``sources.jsonl`` (one line
    per source version with its job's status), ``documents/<document_id>.json`` (extracted text,
    segments and passages with provenance), ``conversations.jsonl`` and ``manifest.json`` (user,
    time, counts, format version), written last once the counts are known.
    """
    keys.check_user_id(user_id)
    when = now or datetime.now(UTC)
    sink = _Sink()
    counts = {"sources": 0, "documents": 0, "chunks": 0, "raw_files": 0, "raw_bytes": 0, "raw_expired": 0,
              "raw_missing": 0, "conversations": 0, "turns": 0}
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_member("README.txt", when), _README)
        yield sink.take()

        yield from _export_raw(zf, sink, metadata, objects, user_id, counts, page)
        yield from _export_sources(zf, sink, metadata, user_id, counts, page, when)
        yield from _export_documents(zf, sink, metadata, objects, vectors, user_id, counts, page)
        yield from _export_conversations(zf, sink, metadata, user_id, counts, when)

        manifest = {"format": EXPORT_FORMAT, "format_version": EXPORT_FORMAT_VERSION, "user_id": user_id,
                    "created_at": when.isoformat(), "counts": counts}
        zf.writestr(_member("manifest.json", when), json.dumps(manifest, indent=1))
    log.info("export written", extra={"user_id": user_id, **counts})
    yield sink.take()


def _export_raw(zf: zipfile.ZipFile, sink: _Sink, metadata: MetadataStore, objects: ObjectStore, user_id: str,
                counts: dict[str, int], page: int) -> Iterator[bytes]:
    """The originals still kept, under ``raw/``, copied block by block (expired and missing ones counted)."""
    after: str | None = None
    while True:
        arts = metadata.catalog.list_artifacts(user_id, after=after, limit=page)
        for art in arts:
            if art.raw_purged_at is not None:
                counts["raw_expired"] += 1
                continue
            info = objects.stat(art.object_key) if keys.owns_key(user_id, art.object_key) else None
            if info is None:
                counts["raw_missing"] += 1
                continue
            kind = art.content_type.split(";", 1)[0].strip().lower()
            member = _member(f"raw/{art.artifact_id}/{raw_filename(art)}", art.submitted_at,
                             compress=not kind.startswith(_COMPRESSED_TYPES))
            member.file_size = info.size  # decides zip64 up front (sizes follow each member)
            with zf.open(member, "w", force_zip64=info.size > 2**30) as fh:
                for block in objects.open(art.object_key):
                    fh.write(block)
                    yield sink.take()
            counts["raw_files"] += 1
            counts["raw_bytes"] += info.size
            yield sink.take()
        if len(arts) < page:
            break
        after = arts[-1].artifact_id


def _export_sources(zf: zipfile.ZipFile, sink: _Sink, metadata: MetadataStore, user_id: str,
                    counts: dict[str, int], page: int, when: datetime) -> Iterator[bytes]:
    """``sources.jsonl``: one line per source version, with its tags."""
    with zf.open(_member("sources.jsonl", when), "w") as fh:
        offset = 0
        while True:
            rows = metadata.catalog.list_sources(user_id, page, offset)
            tagged = metadata.catalog.source_tags(user_id, sorted({s.source_id for s in rows if s.source_id}))
            for s in rows:
                record = {**_source_record(s), "tags": tagged.get(s.source_id or "", [])}
                fh.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
            counts["sources"] += len(rows)
            yield sink.take()
            if len(rows) < page:
                break
            offset += page
    yield sink.take()


def _export_documents(zf: zipfile.ZipFile, sink: _Sink, metadata: MetadataStore, objects: ObjectStore,
                      vectors: VectorStore, user_id: str, counts: dict[str, int], page: int) -> Iterator[bytes]:
    """``documents/<id>.json``: each extracted document with its passages."""
    after = None
    while True:
        docs = metadata.catalog.list_documents(user_id, after=after, limit=page)
        for doc in docs:
            body, n = _document_json(objects, vectors, doc)
            zf.writestr(_member(f"documents/{doc.document_id}.json", doc.ingested_at), body)
            counts["documents"] += 1
            counts["chunks"] += n
            yield sink.take()
        if len(docs) < page:
            break
        after = docs[-1].document_id


def _export_conversations(zf: zipfile.ZipFile, sink: _Sink, metadata: MetadataStore, user_id: str,
                          counts: dict[str, int], when: datetime) -> Iterator[bytes]:
    """``conversations.jsonl``: the questions and answers, one conversation per line."""
    with zf.open(_member("conversations.jsonl", when), "w") as fh:
        for conv in metadata.conversations.list_conversations(user_id):
            turns = metadata.conversations.get_turns(user_id, conv.conversation_id, conv.turns + 1)
            line = {"conversation_id": conv.conversation_id, "title": conv.title if conv.titled else None,
                    "created_at": _iso(conv.created_at),
                    "updated_at": _iso(conv.updated_at),
                    "turns": [{"role": t.role, "content": t.content, "created_at": _iso(t.created_at),
                               "meta": dict(t.meta)} for t in turns]}
            fh.write(json.dumps(line, ensure_ascii=False, default=str).encode("utf-8") + b"\n")
            counts["conversations"] += 1
            counts["turns"] += len(turns)
            yield sink.take()
    yield sink.take()


_README = """\
A copy of your secondbrain data.

manifest.json          who, when, how many of each thing, and the format version
sources.jsonl          one line per source version: title, where it came from, its job's status,
                       whether its original file is kept ("raw": "kept") or expired under the
                       retention setting ("raw": "expired"), and the source's tags
raw/<artifact id>/     the original files, byte for byte, while they are kept
documents/<id>.json    each extracted document: its text, the segments with page, section or time
                       span when they were stored, and the passages that were indexed, with their
                       provenance
conversations.jsonl    your questions and the answers, one conversation per line
"""
