"""Artifacts, documents and their versions: what the user has and where it stands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from secondbrain.ports import (
    LIVE_JOB_STATUSES,
    ArtifactGone,
    ArtifactRecord,
    DocumentRecord,
    JobGone,
    JobStatus,
    SourceView,
)
from secondbrain.stores import save_each
from secondbrain.stores.postgres.base import _DOCUMENT_COLUMNS, PgRole, _artifact, _document

# Documents searchable: each one's chunk count recorded (only while its job, if named, is live), and the older
# versions of its source superseded; a row for each document, in order, lists them.  Several documents in one
# statement only when their sources are distinct (every part of a statement sees the tables as before it, so two
# versions of one source could not see each other: those go one statement each).
_INDEXED = """
WITH item AS (SELECT * FROM unnest(%(doc)s::text[], %(source)s::text[], %(count)s::int[], %(job)s::text[])
              WITH ORDINALITY AS i(doc, source, count, job, n)),
cur AS (UPDATE documents d SET chunk_count = i.count FROM item i
        WHERE d.document_id = i.doc AND d.user_id = %(user)s
          AND (i.job IS NULL OR EXISTS (SELECT 1 FROM jobs WHERE job_id = i.job AND user_id = %(user)s
                                        AND status IN ('queued', 'running')))
        RETURNING i.n, d.version),
older AS (UPDATE documents o SET superseded_at = coalesce(o.superseded_at, now())
          FROM cur JOIN item i ON i.n = cur.n
          WHERE o.user_id = %(user)s AND o.source_id = i.source AND o.document_id <> i.doc
            AND o.version < cur.version
          RETURNING o.document_id, i.n)
SELECT coalesce((SELECT array_agg(document_id ORDER BY document_id) FROM older WHERE older.n = i.n), '{}')
FROM item i ORDER BY i.n
"""

# A document saved again: the same row, its version kept unless it was replaced (then it is the newest again).
_ON_CONFLICT = """
ON CONFLICT (document_id) DO UPDATE SET
    artifact_id = EXCLUDED.artifact_id, source_id = EXCLUDED.source_id,
    title = EXCLUDED.title, modality = EXCLUDED.modality,
    content_type = EXCLUDED.content_type, captured_at = EXCLUDED.captured_at,
    captured_at_source = EXCLUDED.captured_at_source, ingested_at = EXCLUDED.ingested_at,
    char_count = EXCLUDED.char_count,
    chunk_count = coalesce(EXCLUDED.chunk_count, documents.chunk_count),
    metadata = EXCLUDED.metadata,
    version = CASE WHEN documents.superseded_at IS NULL AND documents.source_id = EXCLUDED.source_id
                   THEN documents.version ELSE EXCLUDED.version END,
    superseded_at = NULL
WHERE documents.user_id = EXCLUDED.user_id
"""

# Saving a document as the next version of its source (or keeping its version on a replay), unless its job,
# when named, is no longer queued or running.
_UPSERT_DOCUMENT = """
INSERT INTO documents (document_id, user_id, artifact_id, source_id, title, modality,
                       content_type, captured_at, captured_at_source, ingested_at,
                       char_count, chunk_count, metadata, version)
SELECT %(document_id)s, %(user_id)s, %(artifact_id)s, %(source_id)s, %(title)s,
        %(modality)s, %(content_type)s, %(captured_at)s, %(captured_at_source)s,
        %(ingested_at)s, %(char_count)s, %(chunk_count)s, %(metadata)s,
        (SELECT coalesce(max(version), 0) + 1 FROM documents
         WHERE user_id = %(user_id)s AND source_id = %(source_id)s)
WHERE %(job_id)s::text IS NULL OR EXISTS (
    SELECT 1 FROM jobs WHERE job_id = %(job_id)s AND user_id = %(user_id)s
      AND status IN ('queued', 'running'))
""" + _ON_CONFLICT + """RETURNING version
"""


# :data:`_UPSERT_DOCUMENT` for several documents of distinct sources in one statement (planned once, its values
# adapted as a few arrays rather than a statement each): a version, or no row, per document asked.
_UPSERT_DOCUMENTS = """
WITH d AS (SELECT * FROM unnest(%(document_id)s::text[], %(user_id)s::text[], %(artifact_id)s::text[],
                                %(source_id)s::text[], %(title)s::text[], %(modality)s::text[],
                                %(content_type)s::text[], %(captured_at)s::timestamptz[],
                                %(captured_at_source)s::text[], %(ingested_at)s::timestamptz[],
                                %(char_count)s::int[], %(chunk_count)s::int[], %(metadata)s::jsonb[],
                                %(job_id)s::text[])
                  WITH ORDINALITY AS d(document_id, user_id, artifact_id, source_id, title, modality, content_type,
                                       captured_at, captured_at_source, ingested_at, char_count, chunk_count,
                                       metadata, job_id, n))
INSERT INTO documents (document_id, user_id, artifact_id, source_id, title, modality,
                       content_type, captured_at, captured_at_source, ingested_at,
                       char_count, chunk_count, metadata, version)
SELECT d.document_id, d.user_id, d.artifact_id, d.source_id, d.title, d.modality, d.content_type, d.captured_at,
       d.captured_at_source, d.ingested_at, d.char_count, d.chunk_count, d.metadata,
       (SELECT coalesce(max(version), 0) + 1 FROM documents x WHERE x.user_id = d.user_id AND x.source_id = d.source_id)
FROM d
WHERE d.job_id IS NULL OR EXISTS (
    SELECT 1 FROM jobs WHERE job_id = d.job_id AND user_id = d.user_id AND status IN ('queued', 'running'))
ORDER BY d.n
""" + _ON_CONFLICT + "RETURNING document_id, version\n"


def _indexed(user_id: str, documents: Sequence[tuple[str, str, int, str | None]]) -> dict[str, Any]:
    """The parameters of :data:`_INDEXED`: the ``(document, source, chunk count, job)`` items as columns."""
    return {"user": user_id, "doc": [d[0] for d in documents], "source": [d[1] for d in documents],
            "count": [d[2] for d in documents], "job": [d[3] for d in documents]}


def _document_params(doc: DocumentRecord, job_id: str | None) -> dict[str, Any]:
    return {
        "document_id": doc.document_id, "user_id": doc.user_id, "artifact_id": doc.artifact_id,
        "source_id": doc.source_id, "title": doc.title, "modality": doc.modality,
        "content_type": doc.content_type, "captured_at": doc.captured_at,
        "captured_at_source": doc.captured_at_source, "ingested_at": doc.ingested_at,
        "char_count": doc.char_count, "chunk_count": doc.chunk_count,
        "metadata": Jsonb(dict(doc.metadata)), "job_id": job_id,
    }


class PostgresCatalog(PgRole):
    """Artifacts, documents and their versions: what the user has and where it stands."""

    def save_document(self, doc: DocumentRecord, *, job_id: str | None = None) -> int:
        """Insert or replace a document (idempotent on ``document_id``); return its version.

        A new document becomes the next version of its source (1 + the highest version there).
        A replay keeps its version and the recorded chunk count (same artifact, same chunks);
        a superseded document saved again (old content uploaded again) becomes the newest
        version.  A row of another user is never overwritten (its version is returned as 0).
        With ``job_id`` the document is saved only while that job is queued or running (its row is
        share-locked for the write: a newer submission of the source that supersedes the job comes
        wholly before, and the document is not saved, or wholly after); :class:`JobGone` otherwise.
        """
        try:
            return self._save_document(doc, job_id)
        except psycopg.errors.ForeignKeyViolation as exc:  # the artifact (or user) went meanwhile
            raise ArtifactGone(f"artifact {doc.artifact_id} is gone (deleted with its source)") from exc

    def save_documents(self, documents: Sequence[tuple[DocumentRecord, str | None]]) -> list[int | Exception]:
        """:meth:`save_document` of several ``(document, job_id)`` in one transaction sent at once: each one's
        version, or the :class:`JobGone` or :class:`ArtifactGone` that stopped it (nothing saved for it).  The
        sources' advisory locks are taken first, in order, then the jobs' share locks, then the upserts."""
        if not documents:
            return []
        sources = sorted({(doc.user_id, doc.source_id) for doc, _job in documents})
        jobs = sorted({(doc.user_id, job) for doc, job in documents if job is not None})
        statements: list[tuple[str, Any]] = [
            # In the order given (a function scan keeps it): sorted, as a deletion of a source takes them.
            ("SELECT count(pg_advisory_xact_lock(hashtext(u), hashtext(s))) FROM unnest(%s::text[], %s::text[]) "
             "AS t(u, s)", ([u for u, _s in sources], [s for _u, s in sources])),
            ("SELECT j.job_id, j.status FROM jobs j JOIN unnest(%s::text[], %s::text[]) AS t(u, job) "
             "ON j.user_id = t.u AND j.job_id = t.job ORDER BY j.job_id FOR SHARE OF j",
             ([u for u, _j in jobs], [j for _u, j in jobs]))]
        # Distinct sources and documents: one statement for all of them; else one each, in order, as a later
        # version of a source is numbered after the earlier one it follows in the batch.
        together = len(sources) == len(documents) == len({doc.document_id for doc, _job in documents})
        if together:
            params = [_document_params(doc, job) for doc, job in documents]
            statements.append((_UPSERT_DOCUMENTS, {k: [p[k] for p in params] for k in params[0]}))
        else:
            statements += [(_UPSERT_DOCUMENT, _document_params(doc, job)) for doc, job in documents]
        try:
            rows = self._one_trip_rows(statements)
        except psycopg.errors.ForeignKeyViolation:  # an artifact (or user) went meanwhile: each on its own
            return save_each(self.save_document, documents)
        status: dict[str, JobStatus] = dict(rows[1])
        if together:
            versions: dict[str, int] = dict(rows[2])
            written = [versions.get(doc.document_id) for doc, _job in documents]
        else:
            written = [found[0][0] if found else None for found in rows[2:]]
        result: list[int | Exception] = []
        for (_doc, job), version in zip(documents, written, strict=True):
            held = status.get(job) if job is not None else None
            if job is not None and (held is None or held not in LIVE_JOB_STATUSES):
                result.append(JobGone.of_status(job, held))
            else:
                result.append(int(version) if version is not None else 0)
        return result

    def _save_document(self, doc: DocumentRecord, job_id: str | None) -> int:
        # One round trip: the advisory lock (versions of one source never get one number; taken first, as a
        # deletion of the source does), the job's share lock and the upsert, which writes nothing unless the
        # job is live.
        lock = ("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (doc.user_id, doc.source_id))
        job = ("SELECT status FROM jobs WHERE job_id = %s AND user_id = %s FOR SHARE", (job_id, doc.user_id))
        (_locked, status, row) = self._one_trip([lock, job, (_UPSERT_DOCUMENT, _document_params(doc, job_id))])
        if job_id is not None and (status is None or status[0] not in LIVE_JOB_STATUSES):
            raise JobGone.of_status(job_id, None if status is None else status[0])
        return int(row[0]) if row else 0

    def set_chunk_count(self, user_id: str, document_id: str, chunk_count: int) -> None:
        """Record how many chunks a document was indexed as (unknown or other users' documents: no-op)."""
        with self._pool.connection() as conn:
            conn.execute("UPDATE documents SET chunk_count = %s WHERE document_id = %s AND user_id = %s",
                         (chunk_count, document_id, user_id))

    def get_document(self, user_id: str, document_id: str) -> DocumentRecord | None:
        """A document of the user, or ``None`` (also for another user's document)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"SELECT {_DOCUMENT_COLUMNS} FROM documents d WHERE d.document_id = %s AND d.user_id = %s",
                (document_id, user_id),
            ).fetchone()
        return _document(row) if row else None

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0, *, source_id: str | None = None,
                     modality: str | None = None, status: str | None = None, start: datetime | None = None,
                     end: datetime | None = None, failed_once: bool = False,
                     duplicates: bool = True, tags: Sequence[str] | None = None) -> list[SourceView]:
        """One row per job of the user, newest first, with its artifact and (when extracted) document.

        ``captured_at``/``title`` prefer the document's values, ``ingested_at`` is the document's or
        else the job's creation time, ``status`` is the job's.  A URL job not fetched yet has no
        artifact; its ``source_uri`` is the requested URL.  ``source_id`` is the source the job was
        submitted as (a copy of another source's bytes keeps its own name); the filters restrict
        to one source (all its versions), one modality, one job status or a captured time in
        [start, end); until extraction tells the captured time, the job's creation time stands in.
        ``failed_once``: a failed job with a newer job of the same source (its retry, a later upload)
        is left out, so each failed file is listed once.  ``duplicates=False`` leaves out the jobs that ended as
        copies of bytes already kept.  ``tags``: only sources tagged with every one.
        """
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                """
                SELECT coalesce(j.source_id, a.source_id) AS source_id, j.artifact_id, d.document_id, j.job_id,
                       coalesce(d.title, a.title, j.title) AS title,
                       CASE WHEN j.source_id IS DISTINCT FROM a.source_id AND j.source_uri IS NOT NULL
                            AND a.source_id IS NOT NULL THEN j.source_uri
                            ELSE coalesce(a.source_uri, j.source_uri, '') END AS source_uri,
                       coalesce(a.content_type, '') AS content_type, d.modality,
                       coalesce(a.size_bytes, 0) AS size_bytes, j.status,
                       coalesce(d.captured_at, a.captured_at) AS captured_at,
                       coalesce(d.ingested_at, j.created_at) AS ingested_at, d.chunk_count,
                       d.version, d.superseded_at IS NOT NULL AS superseded, j.error, a.raw_purged_at,
                       j.status = 'failed' AND j.error_retryable AS retryable
                FROM jobs j
                LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id
                LEFT JOIN LATERAL (
                    SELECT * FROM documents d
                    WHERE d.artifact_id = j.artifact_id AND d.user_id = j.user_id
                    ORDER BY d.ingested_at DESC LIMIT 1
                ) d ON true
                WHERE j.user_id = %(user)s
                  AND (%(source)s::text IS NULL OR coalesce(j.source_id, a.source_id) = %(source)s)
                  AND (%(modality)s::text IS NULL OR d.modality = %(modality)s)
                  AND (%(status)s::text IS NULL OR j.status = %(status)s)
                  AND (%(duplicates)s OR j.status <> 'duplicate')
                  AND (%(start)s::timestamptz IS NULL
                       OR coalesce(d.captured_at, a.captured_at, j.created_at) >= %(start)s)
                  AND (%(end)s::timestamptz IS NULL
                       OR coalesce(d.captured_at, a.captured_at, j.created_at) < %(end)s)
                  AND NOT (%(failed_once)s AND j.status = 'failed' AND EXISTS (
                      SELECT 1 FROM jobs n
                      LEFT JOIN artifacts na ON na.artifact_id = n.artifact_id AND na.user_id = n.user_id
                      WHERE n.user_id = j.user_id
                        AND coalesce(n.source_id, na.source_id) = coalesce(j.source_id, a.source_id)
                        AND (n.created_at, n.job_id) > (j.created_at, j.job_id)))
                  AND (%(tags)s::text[] IS NULL OR (
                      SELECT count(*) FROM source_tags t WHERE t.user_id = j.user_id
                        AND t.source_id = coalesce(j.source_id, a.source_id) AND t.tag = ANY(%(tags)s)
                      ) = cardinality(%(tags)s))
                ORDER BY j.created_at DESC, j.job_id DESC
                LIMIT %(limit)s OFFSET %(offset)s
                """,
                {"user": user_id, "source": source_id, "modality": modality, "status": status,
                 "start": start, "end": end, "limit": limit, "offset": offset, "failed_once": failed_once,
                 "duplicates": duplicates, "tags": sorted(set(tags)) if tags is not None else None},
            ).fetchall()
        for r in rows:
            r["superseded"] = bool(r["superseded"])
        return [SourceView(**r) for r in rows]

    # -- tags

    def known_sources(self, user_id: str, source_ids: Sequence[str]) -> list[str]:
        """Which of ``source_ids`` are sources of the user (each once, sorted)."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT source_id FROM jobs WHERE user_id = %(user)s AND source_id = ANY(%(ids)s) "
                "UNION SELECT source_id FROM artifacts WHERE user_id = %(user)s AND source_id = ANY(%(ids)s) "
                "ORDER BY 1", {"user": user_id, "ids": list(source_ids)}).fetchall()
        return [r[0] for r in rows]

    def source_tags(self, user_id: str, source_ids: Sequence[str]) -> dict[str, list[str]]:
        """The tags of each of these sources of the user (sorted; a source without tags is left out)."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT source_id, array_agg(tag ORDER BY tag) FROM source_tags WHERE user_id = %s "
                "AND source_id = ANY(%s) GROUP BY source_id", (user_id, list(source_ids))).fetchall()
        return {r[0]: list(r[1]) for r in rows}

    def add_source_tags(self, user_id: str, tags: Mapping[str, Sequence[str]]) -> None:
        """Each source gets these tags besides those it has, in one statement."""
        pairs = [(source, tag) for source, more in tags.items() for tag in more]
        if not pairs:
            return
        with self._pool.connection() as conn:
            conn.execute("INSERT INTO source_tags (user_id, source_id, tag) SELECT %s, s, t "
                         "FROM unnest(%s::text[], %s::text[]) AS p(s, t) ON CONFLICT DO NOTHING",
                         (user_id, [p[0] for p in pairs], [p[1] for p in pairs]))

    def set_source_tags(self, user_id: str, source_id: str, tags: Sequence[str]) -> None:
        """The source's tags become exactly ``tags`` (normalised already)."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM source_tags WHERE user_id = %s AND source_id = %s AND NOT tag = ANY(%s)",
                         (user_id, source_id, list(tags)))
            conn.execute("INSERT INTO source_tags (user_id, source_id, tag) SELECT %s, %s, t FROM unnest(%s::text[]) t "
                         "ON CONFLICT DO NOTHING", (user_id, source_id, list(tags)))

    def tag_sources(self, user_id: str, tag: str, source_ids: Sequence[str], *, add: bool) -> int:
        """Add ``tag`` to (or remove it from) each of these sources of the user; how many changed."""
        mine = self.known_sources(user_id, source_ids)
        with self._pool.connection() as conn:
            if add:
                return conn.execute(
                    "INSERT INTO source_tags (user_id, source_id, tag) SELECT %s, s, %s FROM unnest(%s::text[]) s "
                    "ON CONFLICT DO NOTHING", (user_id, tag, mine)).rowcount
            return conn.execute("DELETE FROM source_tags WHERE user_id = %s AND tag = %s AND source_id = ANY(%s)",
                                (user_id, tag, mine)).rowcount

    def tag_counts(self, user_id: str) -> list[tuple[str, int]]:
        """Every tag of the user with how many sources have it, most used first, then by name."""
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT tag, count(*) FROM source_tags WHERE user_id = %s GROUP BY tag "
                                "ORDER BY count(*) DESC, tag", (user_id,)).fetchall()
        return [(r[0], int(r[1])) for r in rows]

    def sources_tagged(self, user_id: str, tags: Sequence[str]) -> list[str]:
        """The ids of the user's sources tagged with every one of ``tags`` (sorted)."""
        wanted = sorted(set(tags))
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT source_id FROM source_tags WHERE user_id = %s AND tag = ANY(%s) "
                                "GROUP BY source_id HAVING count(*) = %s ORDER BY source_id",
                                (user_id, wanted, len(wanted))).fetchall()
        return [r[0] for r in rows]

    def retitle_source(self, user_id: str, source_id: str, title: str) -> bool:
        """Give the source's current version (its document, its file and the jobs that made it) a new title."""
        with self._pool.connection() as conn, conn.transaction():
            row = conn.execute(
                "UPDATE documents SET title = %s WHERE user_id = %s AND source_id = %s AND superseded_at IS NULL "
                "RETURNING artifact_id", (title, user_id, source_id)).fetchone()
            if row is None:
                return False
            conn.execute("UPDATE jobs SET title = %s WHERE user_id = %s AND source_id = %s AND artifact_id = %s",
                         (title, user_id, source_id, row[0]))
            # The file's own title too: the next version made from it (an edit of its words) keeps this one.
            conn.execute("UPDATE artifacts SET title = %s WHERE user_id = %s AND artifact_id = %s",
                         (title, user_id, row[0]))
        return True


    _INDEX_COLUMNS = ("user_id, version, model, model_id, dense_size, status, created_at, activated_at, retired_at, "
                      "dropped_at, keep_old, points_total, points_done, resume_from, lease_owner, lease_expires_at")

    def documents_between(self, user_id: str, start: datetime | None, end: datetime | None, *,
                          field: Literal["captured_at", "ingested_at"] = "captured_at", limit: int = 500,
                          modalities: Sequence[str] | None = None) -> list[DocumentRecord]:
        """The user's current (not superseded) documents with ``field`` in [start, end), newest first."""
        if field not in ("captured_at", "ingested_at"):
            raise ValueError(f"field must be captured_at or ingested_at, not {field!r}")
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"""
                SELECT {_DOCUMENT_COLUMNS} FROM documents d
                WHERE d.user_id = %(user)s AND d.superseded_at IS NULL
                  AND (%(start)s::timestamptz IS NULL OR d.{field} >= %(start)s)
                  AND (%(end)s::timestamptz IS NULL OR d.{field} < %(end)s)
                  AND (%(mods)s::text[] IS NULL OR d.modality = ANY(%(mods)s))
                ORDER BY d.{field} DESC, d.document_id
                LIMIT %(limit)s
                """,
                {"user": user_id, "start": start, "end": end, "limit": max(0, limit),
                 "mods": list(modalities) if modalities is not None else None},
            ).fetchall()
        return [_document(r) for r in rows]

    def documents_indexed(self, user_id: str,
                          documents: Sequence[tuple[str, str, int, str | None]]) -> list[list[str] | JobGone]:
        """Several documents searchable in one transaction, one round trip (see the port): their jobs are
        share-locked in one statement, in job id order, then each document is recorded as
        :meth:`document_indexed` does (all in one statement when their sources are distinct)."""
        if not documents:
            return []
        jobs = sorted({job for *_rest, job in documents if job is not None})
        lock = ("SELECT coalesce(json_object_agg(job_id, status), '{}') FROM (SELECT job_id, status FROM jobs "
                "WHERE user_id = %s AND job_id = ANY(%s) ORDER BY job_id FOR SHARE) held", (user_id, jobs))
        if len({doc for doc, *_ in documents}) == len({source for _d, source, *_ in documents}) == len(documents):
            held, indexed = self._one_trip_rows([lock, (_INDEXED, _indexed(user_id, documents))])
            rows = [held[0] if held else None, *indexed]
        else:
            rows = self._one_trip([lock, *((_INDEXED, _indexed(user_id, [d])) for d in documents)])
        statuses: dict[str, JobStatus] = rows[0][0] if rows[0] else {}
        out: list[list[str] | JobGone] = []
        for (_doc, _source, _count, job), row in zip(documents, rows[1:], strict=True):
            if job is not None and statuses.get(job) not in LIVE_JOB_STATUSES:
                out.append(JobGone.of_status(job, statuses.get(job)))
            else:
                out.append(list(row[0]) if row else [])
        return out

    def document_indexed(self, user_id: str, document_id: str, source_id: str, chunk_count: int, *,
                         job_id: str | None = None) -> list[str]:
        """Record the document's chunk count and mark older versions of its source superseded (it is
        searchable now); return every older version's id.  One round trip.  With ``job_id`` nothing is
        recorded unless that job is queued or running (:class:`JobGone` then)."""
        job = ("SELECT status FROM jobs WHERE job_id = %s AND user_id = %s FOR SHARE", (job_id, user_id))
        (status, row) = self._one_trip([job, (_INDEXED, _indexed(user_id, [(document_id, source_id, chunk_count,
                                                                            job_id)]))])
        if job_id is not None and (status is None or status[0] not in LIVE_JOB_STATUSES):
            raise JobGone.of_status(job_id, None if status is None else status[0])
        return list(row[0]) if row else []

    def supersede_older(self, user_id: str, source_id: str, document_id: str) -> list[str]:
        """Mark older versions of the source superseded; return every older version's id."""
        with self._tx() as conn:
            rows = conn.execute(
                """
                UPDATE documents o SET superseded_at = coalesce(o.superseded_at, now())
                FROM documents cur
                WHERE cur.document_id = %(doc)s AND cur.user_id = %(user)s
                  AND o.user_id = %(user)s AND o.source_id = %(source)s
                  AND o.document_id <> cur.document_id AND o.version < cur.version
                RETURNING o.document_id
                """,
                {"doc": document_id, "user": user_id, "source": source_id},
            ).fetchall()
        return sorted(r[0] for r in rows)

    def sources_under(self, user_id: str, uri_prefix: str, limit: int = 10_000) -> list[str]:
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT DISTINCT source_id FROM artifacts WHERE user_id = %s "
                                "AND starts_with(source_uri, %s) ORDER BY source_id LIMIT %s",
                                (user_id, uri_prefix, limit)).fetchall()
        return [r[0] for r in rows]

    def is_superseded(self, user_id: str, document_id: str) -> bool:
        """Whether the document is gone or a newer version of its source exists."""
        return document_id in self.superseded(user_id, [document_id])

    def superseded(self, user_id: str, document_ids: Sequence[str]) -> set[str]:
        """Those of ``document_ids`` that are gone or have a newer version of their source, in one statement."""
        wanted = list(dict.fromkeys(document_ids))
        if not wanted:
            return set()
        with self._pool.connection() as conn:
            current = conn.execute(
                """
                SELECT d.document_id FROM documents d
                WHERE d.user_id = %s AND d.document_id = ANY(%s) AND d.superseded_at IS NULL AND NOT EXISTS (
                    SELECT 1 FROM documents n WHERE n.user_id = d.user_id AND n.source_id = d.source_id
                      AND n.version > d.version)
                """,
                (user_id, wanted),
            ).fetchall()
        return set(wanted) - {r[0] for r in current}

    def get_artifact(self, user_id: str, artifact_id: str) -> ArtifactRecord | None:
        """The user's artifact, or ``None`` (also for another user's)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(f"SELECT {_ARTIFACT_COLUMNS} FROM artifacts WHERE artifact_id = %s AND user_id = %s",
                              (artifact_id, user_id)).fetchone()
        return _artifact(row) if row else None

    def list_artifacts(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[ArtifactRecord]:
        """The user's artifacts by id after ``after``."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"SELECT {_ARTIFACT_COLUMNS} FROM artifacts WHERE user_id = %s AND artifact_id > %s "
                "ORDER BY artifact_id LIMIT %s", (user_id, after or "", max(0, limit))).fetchall()
        return [_artifact(r) for r in rows]

    def list_documents(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[DocumentRecord]:
        """The user's documents (every version) by id after ``after``."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"SELECT {_DOCUMENT_COLUMNS} FROM documents d WHERE d.user_id = %s AND d.document_id > %s "
                "ORDER BY d.document_id LIMIT %s", (user_id, after or "", max(0, limit))).fetchall()
        return [_document(r) for r in rows]

    def raw_expired(self, before: datetime, limit: int = 500) -> list[ArtifactRecord]:
        """Kept raw artifacts submitted before ``before`` whose jobs all finished before it."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"""
                SELECT {_ARTIFACT_COLUMNS} FROM artifacts a
                WHERE a.raw_purged_at IS NULL AND a.submitted_at < %(before)s
                  AND EXISTS (SELECT 1 FROM jobs j WHERE j.artifact_id = a.artifact_id)
                  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.artifact_id = a.artifact_id
                                  AND (j.finished_at IS NULL OR j.finished_at >= %(before)s
                                       OR j.status IN ('queued', 'running')))
                ORDER BY a.submitted_at, a.artifact_id LIMIT %(limit)s
                """, {"before": before, "limit": max(0, limit)}).fetchall()
        return [_artifact(r) for r in rows]

    def mark_raw_purged(self, user_id: str, artifact_ids: Sequence[str]) -> int:
        """Set ``raw_purged_at`` on the user's artifacts that do not have it yet."""
        if not artifact_ids:
            return 0
        with self._pool.connection() as conn:
            return conn.execute("UPDATE artifacts SET raw_purged_at = now() WHERE user_id = %s "
                                "AND artifact_id = ANY(%s) AND raw_purged_at IS NULL",
                                (user_id, list(artifact_ids))).rowcount


_ARTIFACT_COLUMNS = """
    artifact_id, user_id, source_id, source_uri, object_key, content_type, size_bytes, sha256, filename,
    title, captured_at, submitted_at, producer, attributes, raw_purged_at
"""
