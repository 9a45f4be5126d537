"""Artifacts, documents and their versions: what the user has and where it stands (in memory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Literal

from secondbrain.ports import ArtifactGone, ArtifactRecord, DocumentRecord, JobGone, SourceView
from secondbrain.stores import save_each
from secondbrain.stores.memory.base import (
    FINISHED,
    IntegrityError,
    MemoryRole,
    artifact_out,
    document_out,
    jsonb,
    utc,
    utc_now,
)


def _window(limit: int, offset: int) -> slice:
    if limit < 0 or offset < 0:
        raise ValueError("LIMIT and OFFSET must not be negative")
    return slice(offset, offset + limit)


class MemoryCatalog(MemoryRole):
    """Artifacts, documents and their versions: what the user has and where it stands."""

    def save_documents(self, documents: Sequence[tuple[DocumentRecord, str | None]]) -> list[int | Exception]:
        """Several documents saved at once (see the port)."""
        with self._tx():
            return save_each(self.save_document, documents)

    def save_document(self, doc: DocumentRecord, *, job_id: str | None = None) -> int:
        """Insert or replace a document (idempotent on ``document_id``); return its version.

        A new document becomes the next version of its source (1 + the highest version there).
        A replay keeps its version and the recorded chunk count; a superseded document saved again
        becomes the newest version.  A row of another user is never overwritten (0 is returned).
        With ``job_id``, only while that job is queued or running (:class:`JobGone` otherwise).
        """
        if doc.char_count < 0 or (doc.chunk_count is not None and doc.chunk_count < 0):
            raise IntegrityError("documents.char_count and chunk_count must be >= 0")
        t = self._t
        with self._tx():
            self._require_live(doc.user_id, job_id)
            existing = t.documents.get(doc.document_id)
            if existing is not None and existing.user_id != doc.user_id:
                return 0
            if doc.user_id not in t.users or doc.artifact_id not in t.artifacts:
                raise ArtifactGone(f"artifact {doc.artifact_id} is gone (deleted with its source)")
            next_version = 1 + max((d.version for d in t.source_documents(doc.user_id, doc.source_id)), default=0)
            version, chunks = next_version, doc.chunk_count
            if existing is not None:
                if existing.superseded_at is None and existing.source_id == doc.source_id:
                    version = existing.version
                chunks = doc.chunk_count if doc.chunk_count is not None else existing.chunk_count
            t.put_document(replace(
                doc, captured_at=utc_now(doc.captured_at), ingested_at=utc_now(doc.ingested_at),
                metadata=jsonb(doc.metadata), chunk_count=chunks, version=version, superseded_at=None))
            return version

    def _require_live(self, user_id: str, job_id: str | None) -> None:
        if job_id is None:
            return
        job = self._t.job_of(user_id, job_id)
        if job is None or job.status in FINISHED:
            raise JobGone.of_status(job_id, None if job is None else job.status)

    def set_chunk_count(self, user_id: str, document_id: str, chunk_count: int) -> None:
        """Record how many chunks a document was indexed as (unknown or other users' documents: no-op)."""
        with self._tx():
            doc = self._t.document_of(user_id, document_id)
            if doc is None:
                return
            if chunk_count < 0:
                raise IntegrityError("documents.chunk_count must be >= 0")
            self._t.put_document(replace(doc, chunk_count=chunk_count))

    def get_document(self, user_id: str, document_id: str) -> DocumentRecord | None:
        """A document of the user, or ``None`` (also for another user's document)."""
        with self._tx():
            doc = self._t.document_of(user_id, document_id)
            return document_out(doc) if doc else None

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0, *, source_id: str | None = None,
                     modality: str | None = None, status: str | None = None, start: datetime | None = None,
                     end: datetime | None = None, failed_once: bool = False,
                     duplicates: bool = True, tags: Sequence[str] | None = None) -> list[SourceView]:
        """One row per job of the user, newest first, with its artifact and (when extracted) document;
        see :meth:`secondbrain.stores.postgres.catalog.PostgresCatalog.list_sources` for each field."""
        window = _window(limit, offset)
        start, end = utc(start), utc(end)
        t = self._t
        with self._tx():
            tagged = None if tags is None else set(self._tagged(user_id, tags))
            docs = t.latest_documents(user_id)
            jobs = sorted((j for j in t.jobs.values() if j.user_id == user_id),
                          key=lambda j: (j.created_at, j.job_id), reverse=True)
            views = []
            newer: set[str] = set()  # sources with a job newer than the one at hand (jobs go newest first)
            for j in jobs:
                a = t.artifact_of(user_id, j.artifact_id)
                d = docs.get(j.artifact_id) if j.artifact_id is not None else None
                source = j.source_id if j.source_id is not None else a.source_id if a else None
                had_newer = source is not None and source in newer
                if source is not None:
                    newer.add(source)
                if failed_once and j.status == "failed" and had_newer:
                    continue
                if not duplicates and j.status == "duplicate":
                    continue
                captured = d.captured_at if d else a.captured_at if a else None
                when = captured or j.created_at
                if (source_id is not None and source != source_id) \
                        or (modality is not None and (d is None or d.modality != modality)) \
                        or (status is not None and j.status != status) \
                        or (start is not None and when < start) or (end is not None and when >= end) \
                        or (tagged is not None and source not in tagged):
                    continue
                # A copy of another source's bytes is listed under the name it was submitted as.
                renamed = a is not None and j.source_id != a.source_id and j.source_uri is not None
                views.append(SourceView(
                    source_id=source, artifact_id=j.artifact_id, document_id=d.document_id if d else None,
                    job_id=j.job_id, title=d.title if d else a.title if a and a.title is not None else j.title,
                    source_uri=(j.source_uri or "") if renamed else a.source_uri if a else j.source_uri or "",
                    content_type=a.content_type if a else "", modality=d.modality if d else None,
                    size_bytes=a.size_bytes if a else 0, status=j.status, captured_at=captured,
                    ingested_at=d.ingested_at if d else j.created_at, chunk_count=d.chunk_count if d else None,
                    version=d.version if d else None, superseded=d is not None and d.superseded_at is not None,
                    error=j.error, raw_purged_at=a.raw_purged_at if a else None,
                    retryable=j.status == "failed" and j.error_retryable,
                ))
            return views[window]

    # -- tags

    def _known(self, user_id: str, source_ids: Sequence[str]) -> set[str]:
        wanted = set(source_ids)
        t = self._t
        return ({j.source_id for j in t.jobs.values() if j.user_id == user_id and j.source_id in wanted}
                | {a.source_id for a in t.artifacts.values() if a.user_id == user_id and a.source_id in wanted})

    def _tagged(self, user_id: str, tags: Sequence[str]) -> list[str]:
        wanted = set(tags)
        return sorted(s for (u, s), have in self._t.source_tags.items() if u == user_id and wanted <= have)

    def known_sources(self, user_id: str, source_ids: Sequence[str]) -> list[str]:
        """Which of ``source_ids`` are sources of the user (each once, sorted)."""
        with self._tx():
            return sorted(self._known(user_id, source_ids))

    def source_tags(self, user_id: str, source_ids: Sequence[str]) -> dict[str, list[str]]:
        """The tags of each of these sources of the user (sorted; a source without tags is left out)."""
        with self._tx():
            found = {s: self._t.source_tags.get((user_id, s)) for s in set(source_ids)}
            return {s: sorted(have) for s, have in found.items() if have}

    def add_source_tags(self, user_id: str, tags: Mapping[str, Sequence[str]]) -> None:
        """Each source gets these tags besides those it has."""
        with self._tx():
            for source_id, more in tags.items():
                have = self._t.source_tags.get((user_id, source_id), set())
                self.set_source_tags(user_id, source_id, sorted(have | set(more)))

    def set_source_tags(self, user_id: str, source_id: str, tags: Sequence[str]) -> None:
        """The source's tags become exactly ``tags``."""
        with self._tx():
            if user_id not in self._t.users:
                raise IntegrityError("source_tags.user_id must name a user")
            if tags:
                self._t.source_tags[(user_id, source_id)] = set(tags)
            else:
                self._t.source_tags.pop((user_id, source_id), None)

    def tag_sources(self, user_id: str, tag: str, source_ids: Sequence[str], *, add: bool) -> int:
        """Add ``tag`` to (or remove it from) each of these sources of the user; how many changed."""
        t = self._t
        changed = 0
        with self._tx():
            for source in sorted(self._known(user_id, source_ids)):
                have = t.source_tags.setdefault((user_id, source), set())
                if (tag in have) != add:
                    changed += 1
                    (have.add if add else have.discard)(tag)
                if not have:
                    del t.source_tags[(user_id, source)]
        return changed

    def tag_counts(self, user_id: str) -> list[tuple[str, int]]:
        """Every tag of the user with how many sources have it, most used first, then by name."""
        counts: dict[str, int] = {}
        with self._tx():
            for (u, _), have in self._t.source_tags.items():
                if u == user_id:
                    for tag in have:
                        counts[tag] = counts.get(tag, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def sources_tagged(self, user_id: str, tags: Sequence[str]) -> list[str]:
        """The ids of the user's sources tagged with every one of ``tags`` (sorted)."""
        with self._tx():
            return self._tagged(user_id, tags)

    def retitle_source(self, user_id: str, source_id: str, title: str) -> bool:
        """Give the source's current version (its document, and the jobs that made it) a new title."""
        t = self._t
        with self._tx():
            current = [d for d in t.source_documents(user_id, source_id) if d.superseded_at is None]
            if not current:
                return False
            for d in current:
                t.put_document(replace(d, title=title))
                art = t.artifact_of(user_id, d.artifact_id)
                if art is not None:
                    t.artifacts[art.artifact_id] = replace(art, title=title)
                for j in t.jobs.values():
                    if j.user_id == user_id and j.source_id == source_id and j.artifact_id == d.artifact_id:
                        j.title = title
            return True

    def documents_between(self, user_id: str, start: datetime | None, end: datetime | None, *,
                          field: Literal["captured_at", "ingested_at"] = "captured_at", limit: int = 500,
                          modalities: Sequence[str] | None = None) -> list[DocumentRecord]:
        """The user's current (not superseded) documents with ``field`` in [start, end), newest first."""
        if field not in ("captured_at", "ingested_at"):
            raise ValueError(f"field must be captured_at or ingested_at, not {field!r}")
        start, end = utc(start), utc(end)
        wanted = set(modalities) if modalities is not None else None
        with self._tx():
            found = [d for d in self._t.documents.values()
                     if d.user_id == user_id and d.superseded_at is None
                     and (start is None or getattr(d, field) >= start) and (end is None or getattr(d, field) < end)
                     and (wanted is None or d.modality in wanted)]
            found.sort(key=lambda d: d.document_id)
            found.sort(key=lambda d: getattr(d, field), reverse=True)
            return [document_out(d) for d in found[:max(0, limit)]]

    def document_indexed(self, user_id: str, document_id: str, source_id: str, chunk_count: int, *,
                         job_id: str | None = None) -> list[str]:
        """Record the document's chunk count and mark older versions of its source superseded; return
        every older version's id.  With ``job_id``, only while that job is queued or running."""
        if chunk_count < 0:
            raise IntegrityError("documents.chunk_count must be >= 0")
        t = self._t
        with self._tx() as now:
            self._require_live(user_id, job_id)
            current = t.document_of(user_id, document_id)
            if current is None:
                return []
            t.put_document(replace(current, chunk_count=chunk_count))
            older = [d for d in t.source_documents(user_id, source_id)
                     if d.document_id != document_id and d.version < current.version]
            for d in older:
                t.put_document(replace(d, superseded_at=d.superseded_at or now))
            return sorted(d.document_id for d in older)

    def documents_indexed(self, user_id: str,
                          documents: Sequence[tuple[str, str, int, str | None]]) -> list[list[str] | JobGone]:
        """Several documents searchable at once (see the port)."""
        out: list[list[str] | JobGone] = []
        with self._tx():
            for doc, source, count, job in documents:
                try:
                    out.append(self.document_indexed(user_id, doc, source, count, job_id=job))
                except JobGone as gone:
                    out.append(gone)
        return out

    def supersede_older(self, user_id: str, source_id: str, document_id: str) -> list[str]:
        """Mark older versions of the source superseded; return every older version's id."""
        t = self._t
        with self._tx() as now:
            current = t.document_of(user_id, document_id)
            if current is None:
                return []
            older = [d for d in t.source_documents(user_id, source_id)
                     if d.document_id != document_id and d.version < current.version]
            for d in older:
                t.put_document(replace(d, superseded_at=d.superseded_at or now))
            return sorted(d.document_id for d in older)

    def sources_under(self, user_id: str, uri_prefix: str, limit: int = 10_000) -> list[str]:
        with self._tx():
            found = {a.source_id for a in self._t.artifacts.values()
                     if a.user_id == user_id and a.source_uri.startswith(uri_prefix)}
        return sorted(found)[:limit]

    def is_superseded(self, user_id: str, document_id: str) -> bool:
        """Whether the document is gone or a newer version of its source exists."""
        return document_id in self.superseded(user_id, [document_id])

    def superseded(self, user_id: str, document_ids: Sequence[str]) -> set[str]:
        """Those of ``document_ids`` that are gone or have a newer version of their source."""
        out = set()
        with self._tx():
            for document_id in document_ids:
                doc = self._t.document_of(user_id, document_id)
                if doc is None or doc.superseded_at is not None or any(
                        n.version > doc.version for n in self._t.source_documents(user_id, doc.source_id)):
                    out.add(document_id)
        return out

    def get_artifact(self, user_id: str, artifact_id: str) -> ArtifactRecord | None:
        """The user's artifact, or ``None`` (also for another user's)."""
        with self._tx():
            art = self._t.artifact_of(user_id, artifact_id)
            return artifact_out(art) if art else None

    def list_artifacts(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[ArtifactRecord]:
        """The user's artifacts by id after ``after``."""
        with self._tx():
            found = sorted((a for a in self._t.artifacts.values()
                            if a.user_id == user_id and a.artifact_id > (after or "")), key=lambda a: a.artifact_id)
            return [artifact_out(a) for a in found[:max(0, limit)]]

    def list_documents(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[DocumentRecord]:
        """The user's documents (every version) by id after ``after``."""
        with self._tx():
            found = sorted((d for d in self._t.documents.values()
                            if d.user_id == user_id and d.document_id > (after or "")), key=lambda d: d.document_id)
            return [document_out(d) for d in found[:max(0, limit)]]

    def raw_expired(self, before: datetime, limit: int = 500) -> list[ArtifactRecord]:
        """Kept raw artifacts submitted before ``before`` whose jobs all finished before it."""
        cutoff = utc_now(before)
        t = self._t
        with self._tx():
            done: dict[str, bool] = {}  # artifact id -> every job using it finished before the cut-off
            for j in t.jobs.values():
                if j.artifact_id is not None:
                    finished = j.status in FINISHED and j.finished_at is not None and j.finished_at < cutoff
                    done[j.artifact_id] = done.get(j.artifact_id, True) and finished
            found = sorted((a for a in t.artifacts.values()
                            if a.raw_purged_at is None and a.submitted_at < cutoff and done.get(a.artifact_id)),
                           key=lambda a: (a.submitted_at, a.artifact_id))
            return [artifact_out(a) for a in found[:max(0, limit)]]

    def mark_raw_purged(self, user_id: str, artifact_ids: Sequence[str]) -> int:
        """Set ``raw_purged_at`` on the user's artifacts that do not have it yet."""
        t = self._t
        with self._tx() as now:
            changed = 0
            for aid in set(artifact_ids):
                art = t.artifact_of(user_id, aid)
                if art is not None and art.raw_purged_at is None:
                    t.artifacts[aid] = replace(art, raw_purged_at=now)
                    changed += 1
            return changed
