"""Deleting sources (with tombstones) and erasing users."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from secondbrain import ids
from secondbrain.ports import FailedRemoval, JobNotFailed, SourceDeletion
from secondbrain.stores.postgres.base import PgRole, PostgresDatabase, _uniq
from secondbrain.stores.postgres.conversations import redact_answers
from secondbrain.topic_names import TopicNames


class PostgresLifecycle(PgRole):
    """Deleting sources (with tombstones) and erasing users; ``topics``: the deployment's topic names (a
    copy's artifact submission is found by them)."""

    def __init__(self, db: PostgresDatabase, topics: TopicNames | None = None) -> None:
        super().__init__(db)
        # The submission topics by their physical names (the deployment's prefix included).
        self._submissions = list((topics or TopicNames()).submissions())

    def delete_source(self, user_id: str, source_id: str) -> SourceDeletion | None:
        """Remove the source's jobs (with stages, events and every outbox row), documents and the
        artifacts no other source uses, and leave a tombstone, all in one transaction.

        A job belongs to the source it was submitted as; a document to the source it was extracted
        for.  An artifact is kept when a job of another source uses it (the same bytes submitted
        under another name) or its document now belongs to another source; a kept artifact that
        named this source is renamed to one that still uses it.  Jobs of other sources that ended
        as duplicates of this source's content are queued again by :meth:`source_cleaned`.
        """
        with self._tx() as conn:
            # The lock save_document and guarded registrations take: no version of this source
            # is written while it is being deleted.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (user_id, source_id))
            jobs = conn.execute(
                "SELECT j.job_id, j.artifact_id FROM jobs j "
                "LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id "
                "WHERE j.user_id = %s AND coalesce(j.source_id, a.source_id) = %s ORDER BY j.job_id FOR UPDATE OF j",
                (user_id, source_id)).fetchall()
            docs = conn.execute("SELECT document_id, artifact_id FROM documents WHERE user_id = %s AND source_id = %s",
                                (user_id, source_id)).fetchall()
            named = conn.execute("SELECT artifact_id FROM artifacts WHERE user_id = %s AND source_id = %s",
                                 (user_id, source_id)).fetchall()
            job_ids = sorted(r[0] for r in jobs)
            doc_ids = sorted(r[0] for r in docs)
            candidates = sorted({r[1] for r in jobs if r[1]} | {r[1] for r in docs} | {r[0] for r in named})
            if not (job_ids or doc_ids or candidates):
                return self._pending_deletion(conn, user_id, source_id)
            kept = sorted(r[0] for r in conn.execute(
                """
                SELECT artifact_id FROM jobs
                WHERE user_id = %(user)s AND artifact_id = ANY(%(arts)s) AND job_id <> ALL(%(jobs)s)
                UNION
                SELECT artifact_id FROM documents
                WHERE user_id = %(user)s AND artifact_id = ANY(%(arts)s) AND source_id <> %(source)s
                """, {"user": user_id, "arts": candidates, "jobs": job_ids, "source": source_id}).fetchall())
            removed = [a for a in candidates if a not in set(kept)]
            raw = conn.execute("SELECT artifact_id, object_key FROM artifacts "
                               "WHERE user_id = %s AND artifact_id = ANY(%s)", (user_id, removed)).fetchall()
            requeue = _duplicates_to_requeue(conn, user_id, sorted(set(kept) & {r[1] for r in docs}), job_ids,
                                             self._submissions[0])
            _remove_rows(conn, user_id, source_id, job_ids, doc_ids, removed, kept)
            # Claim checks of documents not recorded yet (work in flight) live under the same ids.
            cleanup_docs = sorted(set(doc_ids) | {ids.document_id(a) for a in removed})
            row = _tombstone(conn, user_id, source_id, job_ids, cleanup_docs, sorted(r[1] for r in raw), requeue)
            assert row is not None
        return SourceDeletion(user_id=user_id, source_id=source_id, deleted_at=row[0], job_ids=_uniq(row[1]),
                              document_ids=_uniq(row[2]), artifact_ids=removed, object_keys=_uniq(row[3]),
                              kept_artifact_ids=kept, requeue_job_ids=_uniq(row[4]))

    def remove_failed(self, user_id: str, job_id: str) -> FailedRemoval | None:
        """Remove the user's failed job and the other failed jobs of its source, with the artifacts of
        theirs that no other job and no document uses; ``None`` for an unknown job (or another user's),
        :class:`JobNotFailed` for a job that has not failed."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT j.job_id, coalesce(j.source_id, a.source_id) FROM jobs j "
                "LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id "
                "WHERE j.job_id = %s AND j.user_id = %s", (job_id, user_id)).fetchone()
            if row is None:
                return None
            source_id = row[1]
            if source_id is not None:  # the lock delete_source and registrations of the source take
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (user_id, source_id))
            # Read again under the lock: a retry may have started meanwhile (a new job; this one stays failed).
            jobs = conn.execute(
                "SELECT j.job_id, j.artifact_id, j.status FROM jobs j "
                "LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id "
                "WHERE j.user_id = %(user)s AND (j.job_id = %(job)s OR (%(source)s::text IS NOT NULL "
                "AND j.status = 'failed' AND coalesce(j.source_id, a.source_id) = %(source)s)) "
                "ORDER BY j.job_id FOR UPDATE OF j",
                {"user": user_id, "job": job_id, "source": source_id}).fetchall()
            mine = next((r for r in jobs if r[0] == job_id), None)
            if mine is None:
                return None
            if mine[2] != "failed":
                raise JobNotFailed(job_id, mine[2])
            job_ids = sorted(r[0] for r in jobs)
            candidates = sorted({r[1] for r in jobs if r[1]})
            used = {r[0] for r in conn.execute(
                """
                SELECT artifact_id FROM jobs WHERE user_id = %(user)s AND artifact_id = ANY(%(arts)s)
                                                  AND job_id <> ALL(%(jobs)s)
                UNION
                SELECT artifact_id FROM documents WHERE user_id = %(user)s AND artifact_id = ANY(%(arts)s)
                """, {"user": user_id, "arts": candidates, "jobs": job_ids}).fetchall()}
            unused = [a for a in candidates if a not in used]
            keys = [r[0] for r in conn.execute(
                "SELECT object_key FROM artifacts WHERE user_id = %s AND artifact_id = ANY(%s)",
                (user_id, unused)).fetchall()]
            conn.execute("DELETE FROM outbox WHERE job_id = ANY(%s)", (job_ids,))
            conn.execute("DELETE FROM jobs WHERE user_id = %s AND job_id = ANY(%s)", (user_id, job_ids))
            conn.execute("DELETE FROM artifacts WHERE user_id = %s AND artifact_id = ANY(%s)", (user_id, unused))
        return FailedRemoval(user_id=user_id, source_id=source_id, job_ids=job_ids, artifact_ids=unused,
                             object_keys=sorted(keys))

    @staticmethod
    def _pending_deletion(conn: psycopg.Connection[Any], user_id: str, source_id: str) -> SourceDeletion | None:
        """A deletion whose cleanup outside Postgres was not confirmed, to be finished now."""
        row = conn.execute(
            "SELECT deleted_at, job_ids, document_ids, object_keys, requeue_job_ids FROM deleted_sources "
            "WHERE user_id = %s AND source_id = %s AND cleaned_at IS NULL", (user_id, source_id)).fetchone()
        if row is None:
            return None
        return SourceDeletion(user_id=user_id, source_id=source_id, deleted_at=row[0], job_ids=_uniq(row[1]),
                              document_ids=_uniq(row[2]), artifact_ids=[], object_keys=_uniq(row[3]),
                              requeue_job_ids=_uniq(row[4]))

    def source_cleaned(self, user_id: str, source_id: str) -> list[str]:
        """Mark the deletion finished (the tombstone keeps only when it happened) and queue again the
        duplicates of the deleted content: their submission message is published again."""
        with self._tx() as conn:
            row = conn.execute("SELECT requeue_job_ids FROM deleted_sources WHERE user_id = %s AND source_id = %s "
                               "AND cleaned_at IS NULL FOR UPDATE", (user_id, source_id)).fetchone()
            conn.execute("UPDATE deleted_sources SET cleaned_at = now(), job_ids = '{}', document_ids = '{}', "
                         "object_keys = '{}', requeue_job_ids = '{}' "
                         "WHERE user_id = %s AND source_id = %s AND cleaned_at IS NULL", (user_id, source_id))
            wanted = _uniq(row[0]) if row else []
            if not wanted:
                return []
            requeued = sorted(r[0] for r in conn.execute(
                "UPDATE jobs SET status = 'queued', duplicate_of = NULL, error = NULL, finished_at = NULL, "
                "updated_at = now() WHERE user_id = %s AND job_id = ANY(%s) AND status = 'duplicate' "
                "RETURNING job_id", (user_id, wanted)).fetchall())
            if not requeued:
                return []
            conn.execute("UPDATE job_stages SET status = 'pending', attempts = 0, started_at = NULL, "
                         "finished_at = NULL, detail = NULL WHERE job_id = ANY(%s)", (requeued,))
            conn.execute("UPDATE outbox SET published_at = NULL, lease_until = NULL "
                         "WHERE job_id = ANY(%s) AND topic = %s", (requeued, self._submissions[0]))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO job_events (job_id, stage, status, detail) VALUES (%s, 'gateway', 'requeued', %s)",
                    [(j, "the original was deleted: indexing this copy in its own name") for j in requeued])
        return requeued

    def source_deleted(self, user_id: str, source_id: str, job_id: str | None,
                       submitted_at: datetime | None = None) -> bool:
        """Whether the source has a tombstone newer than ``submitted_at`` and ``job_id`` is gone."""
        with self._pool.connection() as conn:
            row = conn.execute(
                """
                SELECT EXISTS (SELECT 1 FROM deleted_sources ds
                               WHERE ds.user_id = %(user)s AND ds.source_id = %(source)s
                                 AND (%(at)s::timestamptz IS NULL OR %(at)s < ds.deleted_at))
                   AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = %(job)s AND j.user_id = %(user)s)
                """, {"user": user_id, "source": source_id, "job": job_id, "at": submitted_at}).fetchone()
        return bool(row and row[0])

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Delete every row of the user in one transaction: rows reached through their jobs and
        conversations first, then every table with a ``user_id`` column (tables added later
        included), the user last."""
        removed: dict[str, int] = {}
        with self._tx() as conn:
            # The jobs first: a stage writing for one of them (holding its fence) finishes before the rows go,
            # and none starts afterwards; the tombstone keeps work in flight from creating anything again.
            job_ids = [r[0] for r in conn.execute(
                "SELECT job_id FROM jobs WHERE user_id = %s ORDER BY job_id FOR UPDATE", (user_id,))]
            conn.execute("INSERT INTO erased_users (user_id) VALUES (%s) ON CONFLICT (user_id) "
                         "DO UPDATE SET erased_at = clock_timestamp()", (user_id,))
            for table, sql in (
                ("outbox", "DELETE FROM outbox WHERE job_id = ANY(%s)"),
                ("job_events", "DELETE FROM job_events WHERE job_id = ANY(%s)"),
                ("job_stages", "DELETE FROM job_stages WHERE job_id = ANY(%s)"),
            ):
                removed[table] = conn.execute(sql, (job_ids,)).rowcount
            removed["conversation_turns"] = conn.execute(
                "DELETE FROM conversation_turns t USING conversations c "
                "WHERE c.conversation_id = t.conversation_id AND c.user_id = %s", (user_id,)).rowcount
            tables = [r[0] for r in conn.execute(
                "SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t "
                "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
                "WHERE c.column_name = 'user_id' AND c.table_schema = current_schema() "
                "AND t.table_type = 'BASE TABLE' AND c.table_name NOT IN ('users', 'erased_users') "
                "ORDER BY c.table_name")]
            for table in tables:  # counted first: cascades would hide rows from the per-table report
                row = conn.execute(f'SELECT count(*) FROM "{table}" WHERE user_id = %s', (user_id,)).fetchone()
                removed[table] = int(row[0]) if row else 0
            # Referencing rows first; the order the tables must go in is found by trying.
            for _ in range(len(tables) + 1):
                left = []
                for table in tables:
                    try:
                        with conn.transaction():
                            conn.execute(f'DELETE FROM "{table}" WHERE user_id = %s', (user_id,))
                    except psycopg.errors.ForeignKeyViolation:
                        left.append(table)
                if not left:
                    break
                tables = left
            removed["users"] = conn.execute("DELETE FROM users WHERE user_id = %s", (user_id,)).rowcount
        return {k: v for k, v in sorted(removed.items())}


def _duplicates_to_requeue(conn: Any, user_id: str, arts: list[str], job_ids: list[str], topic: str) -> list[str]:
    """The jobs of other sources that ended as duplicates of the deleted source's content (``arts``, kept):
    indexed in their own name once it is gone (while their bytes are kept)."""
    # Copies of this source's content submitted under another name ended as duplicates of
    # it; once it is gone they are indexed in their own name (while their bytes are kept).
    return sorted(r[0] for r in conn.execute(
        """
        SELECT j.job_id FROM jobs j JOIN artifacts a ON a.artifact_id = j.artifact_id
        WHERE j.user_id = %(user)s AND j.artifact_id = ANY(%(arts)s) AND j.job_id <> ALL(%(jobs)s)
          AND j.status = 'duplicate' AND a.raw_purged_at IS NULL
          AND EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = j.job_id
                      AND o.topic = %(topic)s)
        """, {"user": user_id, "arts": arts, "jobs": job_ids, "topic": topic}).fetchall())


def _remove_rows(conn: Any, user_id: str, source_id: str, job_ids: list[str], doc_ids: list[str],
                 removed: list[str], kept: list[str]) -> None:
    """Delete the source's jobs (and outbox rows), answers' quotes, tags, documents and the artifacts no other
    source uses; a kept artifact that named the source is renamed to one that still uses it."""
    conn.execute("DELETE FROM outbox WHERE job_id = ANY(%s)", (job_ids,))
    conn.execute("DELETE FROM jobs WHERE user_id = %s AND job_id = ANY(%s)", (user_id, job_ids))
    redact_answers(conn, user_id, source_id)
    conn.execute("DELETE FROM source_tags WHERE user_id = %s AND source_id = %s", (user_id, source_id))
    conn.execute("DELETE FROM documents WHERE user_id = %s AND document_id = ANY(%s)", (user_id, doc_ids))
    conn.execute("DELETE FROM artifacts WHERE user_id = %s AND artifact_id = ANY(%s)", (user_id, removed))
    conn.execute(  # the job whose source holds the artifact's document first, else the oldest
        """
        UPDATE artifacts a SET (source_id, source_uri) = (
            SELECT j.source_id, coalesce(j.source_uri, a.source_uri) FROM jobs j
            LEFT JOIN documents d ON d.artifact_id = j.artifact_id AND d.user_id = j.user_id
            WHERE j.artifact_id = a.artifact_id AND j.source_id IS NOT NULL
            ORDER BY (j.source_id = d.source_id) DESC NULLS LAST, j.created_at, j.job_id LIMIT 1)
        WHERE a.user_id = %(user)s AND a.artifact_id = ANY(%(kept)s) AND a.source_id = %(source)s
          AND EXISTS (SELECT 1 FROM jobs j WHERE j.artifact_id = a.artifact_id AND j.source_id IS NOT NULL)
        """, {"user": user_id, "kept": kept, "source": source_id})


def _tombstone(conn: Any, user_id: str, source_id: str, job_ids: list[str], document_ids: list[str],
               object_keys: list[str], requeue: list[str]) -> Any:
    """Record the deletion (what the cleanup removes after the commit), merged into a tombstone not cleaned yet."""
    return conn.execute(
        """
        INSERT INTO deleted_sources AS t (user_id, source_id, job_ids, document_ids, object_keys,
                                          requeue_job_ids)
        VALUES (%(user)s, %(source)s, %(jobs)s, %(docs)s, %(keys)s, %(requeue)s)
        ON CONFLICT (user_id, source_id) DO UPDATE SET
            deleted_at = clock_timestamp(), cleaned_at = NULL,
            job_ids = CASE WHEN t.cleaned_at IS NULL THEN t.job_ids ELSE '{}' END || EXCLUDED.job_ids,
            document_ids = CASE WHEN t.cleaned_at IS NULL THEN t.document_ids ELSE '{}' END
                           || EXCLUDED.document_ids,
            object_keys = CASE WHEN t.cleaned_at IS NULL THEN t.object_keys ELSE '{}' END
                          || EXCLUDED.object_keys,
            requeue_job_ids = CASE WHEN t.cleaned_at IS NULL THEN t.requeue_job_ids ELSE '{}' END
                              || EXCLUDED.requeue_job_ids
        RETURNING deleted_at, job_ids, document_ids, object_keys, requeue_job_ids
        """,
        {"user": user_id, "source": source_id, "jobs": job_ids, "docs": document_ids,
         "keys": object_keys, "requeue": requeue}).fetchone()
