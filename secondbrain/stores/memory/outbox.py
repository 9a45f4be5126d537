"""The transactional outbox the relay publishes to Kafka (in memory)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from secondbrain.ports import OutboxMessage, OutboxRow
from secondbrain.stores.memory.base import UNFINISHED, MemoryDatabase, MemoryRole, OutboxEntry
from secondbrain.topic_names import TopicNames


class MemoryOutbox(MemoryRole):
    """The transactional outbox the relay publishes to Kafka; ``topics``: the deployment's topic names (the
    submission messages requeue_unfinished publishes again are found by them)."""

    def __init__(self, db: MemoryDatabase, topics: TopicNames | None = None) -> None:
        super().__init__(db)
        # The submission topics by their physical names (the deployment's prefix included).
        self._submissions = list((topics or TopicNames()).submissions())

    def claim_outbox(self, limit: int, lease_seconds: float = 30.0, published: Sequence[int] = ()) -> list[OutboxRow]:
        """Mark ``published`` rows published, then lease up to ``limit`` unpublished messages, oldest
        first; rows leased by others are skipped."""
        self.mark_published(published)
        if limit <= 0:
            return []
        with self._tx() as now:
            picked: list[OutboxEntry] = []
            for entry in self._t.outbox.values():  # id order
                if len(picked) == limit:
                    break
                if entry.published_at is None and (entry.lease_until is None or entry.lease_until < now):
                    entry.lease_until = now + timedelta(seconds=float(lease_seconds))
                    picked.append(entry)
            return [OutboxRow(id=e.id, message=OutboxMessage(topic=e.topic, key=e.key, value=e.value,
                                                             headers=e.headers), attempts=e.attempts)
                    for e in picked]

    def mark_published(self, ids: Sequence[int]) -> None:
        """Mark leased outbox rows as published."""
        with self._tx() as now:
            for entry_id in ids:
                entry = self._t.outbox.get(entry_id)
                if entry is not None and entry.published_at is None:
                    entry.published_at, entry.lease_until = now, None

    def release_outbox(self, ids: Sequence[int], error: str) -> None:
        """Give leased rows back after a failed publish (lease cleared, attempts + 1, error kept)."""
        with self._tx():
            for entry_id in set(ids):
                entry = self._t.outbox.get(entry_id)
                if entry is not None and entry.published_at is None:
                    entry.lease_until, entry.attempts, entry.last_error = None, entry.attempts + 1, error

    def requeue_unfinished(self) -> int:
        """Make the submission message of every queued/running job unpublished again; return how many
        jobs were requeued.  Jobs without such a row (external artifacts) are left alone; running or
        retrying stages of requeued jobs go back to pending, job statuses are kept."""
        t = self._t
        with self._tx() as now:
            requeued: set[str] = set()
            for entry in t.outbox.values():
                job = t.jobs.get(entry.job_id) if entry.job_id is not None else None
                if job is not None and job.status in UNFINISHED and entry.topic in self._submissions:
                    entry.published_at, entry.lease_until = None, None
                    requeued.add(job.job_id)
            for job_id in sorted(requeued):
                job = t.jobs[job_id]
                for stage in job.stages.values():
                    if stage.status in ("running", "retrying"):
                        stage.status = "pending"
                job.updated_at = now
                t.event(job, "gateway", "requeued", None, None, self.db._now())
            return len(requeued)
