"""The transactional outbox the relay publishes to Kafka."""

from __future__ import annotations

from collections.abc import Sequence

from secondbrain.ports import OutboxMessage, OutboxRow
from secondbrain.stores.postgres.base import PgRole, PostgresDatabase, _decode_headers
from secondbrain.topic_names import TopicNames


class PostgresOutbox(PgRole):
    """The transactional outbox the relay publishes to Kafka; ``topics``: the deployment's topic names (the
    submission messages requeue_unfinished publishes again are found by them)."""

    def __init__(self, db: PostgresDatabase, topics: TopicNames | None = None) -> None:
        super().__init__(db)
        # The submission topics by their physical names (the deployment's prefix included).
        self._submissions = list((topics or TopicNames()).submissions())

    def claim_outbox(self, limit: int, lease_seconds: float = 30.0, published: Sequence[int] = ()) -> list[OutboxRow]:
        """Mark ``published`` rows published, then lease up to ``limit`` unpublished messages, oldest
        first; rows leased by others are skipped.  One statement: the relay's marks ride on its next claim."""
        done = list(published)
        if limit <= 0:
            self.mark_published(done)
            return []
        with self._pool.connection() as conn:
            # The CTEs run once; SKIP LOCKED plus the re-checked lease condition keeps two
            # concurrent claimers from ever leasing the same row.
            rows = conn.execute(
                """
                WITH done AS (
                    UPDATE outbox SET published_at = now(), lease_until = NULL
                    WHERE id = ANY(%(done)s) AND published_at IS NULL RETURNING id
                ), picked AS (
                    SELECT id FROM outbox
                    WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                      AND id <> ALL(%(done)s)
                    ORDER BY id LIMIT %(limit)s
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE outbox o SET lease_until = now() + make_interval(secs => %(lease)s)
                FROM picked WHERE o.id = picked.id
                RETURNING o.id, o.topic, o.key, o.value, o.headers, o.attempts, (SELECT count(*) FROM done)
                """,
                {"done": done, "limit": limit, "lease": float(lease_seconds)},
            ).fetchall()
        rows.sort(key=lambda r: r[0])
        return [
            OutboxRow(id=r[0], message=OutboxMessage(topic=r[1], key=bytes(r[2]), value=bytes(r[3]),
                                                     headers=_decode_headers(r[4])), attempts=r[5])
            for r in rows
        ]

    def mark_published(self, ids: Sequence[int]) -> None:
        """Mark leased outbox rows as published."""
        if not ids:
            return
        with self._pool.connection() as conn:
            conn.execute(
                "UPDATE outbox SET published_at = now(), lease_until = NULL "
                "WHERE id = ANY(%s) AND published_at IS NULL",
                (list(ids),),
            )

    def release_outbox(self, ids: Sequence[int], error: str) -> None:
        """Give leased rows back after a failed publish (lease cleared, attempts + 1, error kept)."""
        if not ids:
            return
        with self._pool.connection() as conn:
            conn.execute(
                "UPDATE outbox SET lease_until = NULL, attempts = attempts + 1, last_error = %s "
                "WHERE id = ANY(%s) AND published_at IS NULL",
                (error, list(ids)),
            )

    def requeue_unfinished(self) -> int:
        """Make the submission message of every queued/running job unpublished again; return how many
        jobs were requeued.  Jobs without such a row (external artifacts) are left alone; running or
        retrying stages of requeued jobs go back to pending, job statuses are kept."""
        with self._tx() as conn:
            rows = conn.execute(
                """
                UPDATE outbox o SET published_at = NULL, lease_until = NULL
                FROM jobs j
                WHERE o.job_id = j.job_id AND j.status IN ('queued', 'running')
                  AND o.topic = ANY(%s)
                RETURNING o.job_id
                """,
                (self._submissions,),
            ).fetchall()
            job_ids = sorted({r[0] for r in rows})
            if not job_ids:
                return 0
            conn.execute(
                "UPDATE job_stages SET status = 'pending' "
                "WHERE job_id = ANY(%s) AND status IN ('running', 'retrying')",
                (job_ids,),
            )
            conn.execute("UPDATE jobs SET updated_at = now() WHERE job_id = ANY(%s)", (job_ids,))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO job_events (job_id, stage, status) VALUES (%s, 'gateway', 'requeued')",
                    [(j,) for j in job_ids],
                )
        return len(job_ids)
