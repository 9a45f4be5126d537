"""Deleting sources (with tombstones) and erasing users (in memory)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from secondbrain import ids
from secondbrain.ports import FailedRemoval, JobNotFailed, SourceDeletion
from secondbrain.stores.memory.base import (
    JobRow,
    MemoryDatabase,
    MemoryRole,
    Tombstone,
    uniq,
    utc,
)
from secondbrain.stores.memory.conversations import redact_answers
from secondbrain.topic_names import TopicNames

_REQUEUED = "the original was deleted: indexing this copy in its own name"


class MemoryLifecycle(MemoryRole):
    """Deleting sources (with tombstones) and erasing users; ``topics``: the deployment's topic names (a
    copy's artifact submission is found by them)."""

    def __init__(self, db: MemoryDatabase, topics: TopicNames | None = None) -> None:
        super().__init__(db)
        # The submission topics by their physical names (the deployment's prefix included).
        self._submissions = list((topics or TopicNames()).submissions())

    def delete_source(self, user_id: str, source_id: str) -> SourceDeletion | None:
        """Remove the source's jobs (with stages, events and every outbox row), documents and the
        artifacts no other source uses, and leave a tombstone, in one step.

        A job belongs to the source it was submitted as; a document to the source it was extracted
        for.  An artifact is kept when a job of another source uses it or its document now belongs to
        another source; a kept artifact that named this source is renamed to one that still uses it.
        Jobs of other sources that ended as duplicates of this content are queued again by
        :meth:`source_cleaned`.
        """
        t = self._t
        with self._tx():
            def job_source(j: JobRow) -> str | None:
                if j.source_id is not None:
                    return j.source_id
                art = t.artifact_of(user_id, j.artifact_id)
                return art.source_id if art else None

            jobs = [j for j in t.jobs.values() if j.user_id == user_id and job_source(j) == source_id]
            docs = t.source_documents(user_id, source_id)
            named = [a for a in t.artifacts.values() if a.user_id == user_id and a.source_id == source_id]
            job_ids = sorted(j.job_id for j in jobs)
            doc_ids = sorted(d.document_id for d in docs)
            candidates = sorted({j.artifact_id for j in jobs if j.artifact_id} | {d.artifact_id for d in docs}
                                | {a.artifact_id for a in named})
            if not (job_ids or doc_ids or candidates):
                return self._pending_deletion(user_id, source_id)
            wanted, gone_jobs = set(candidates), set(job_ids)
            kept = sorted({j.artifact_id for j in t.jobs.values()
                           if j.user_id == user_id and j.artifact_id in wanted and j.job_id not in gone_jobs}
                          | {d.artifact_id for aid in wanted for d in t.artifact_documents(aid)
                             if d.user_id == user_id and d.source_id != source_id})
            removed = [a for a in candidates if a not in set(kept)]
            object_keys = sorted(art.object_key for aid in removed if (art := t.artifact_of(user_id, aid)))
            # Copies of this source's content submitted under another name ended as duplicates of it;
            # once it is gone they are indexed in their own name (while their bytes are kept).
            copies = set(kept) & {d.artifact_id for d in docs}
            requeue = sorted(
                j.job_id for j in t.jobs.values()
                if j.user_id == user_id and j.artifact_id in copies and j.job_id not in gone_jobs
                and j.status == "duplicate" and (art := t.artifacts.get(j.artifact_id)) is not None
                and art.raw_purged_at is None
                and any(o.job_id == j.job_id and o.topic == self._submissions[0]
                        for o in t.outbox.values()))
            for entry_id in [o.id for o in t.outbox.values() if o.job_id in gone_jobs]:
                del t.outbox[entry_id]
            t.drop_jobs(job_ids)
            t.drop_documents(doc_ids)
            t.drop_artifacts([a for a in removed if t.artifact_of(user_id, a)])
            self._rename_kept(user_id, source_id, kept)
            redact_answers(self._t, user_id, source_id)
            self._t.source_tags.pop((user_id, source_id), None)
            # Claim checks of documents not recorded yet (work in flight) live under the same ids.
            cleanup_docs = sorted(set(doc_ids) | {ids.document_id(a) for a in removed})
            tomb = t.deleted_sources.get((user_id, source_id))
            if tomb is None or tomb.cleaned_at is not None:
                tomb = Tombstone(user_id, source_id, self.db._now())
                t.deleted_sources[(user_id, source_id)] = tomb
            else:
                tomb.deleted_at = self.db._now()
            tomb.job_ids += job_ids
            tomb.document_ids += cleanup_docs
            tomb.object_keys += object_keys
            tomb.requeue_job_ids += requeue
            return SourceDeletion(user_id=user_id, source_id=source_id, deleted_at=tomb.deleted_at,
                                  job_ids=uniq(tomb.job_ids), document_ids=uniq(tomb.document_ids),
                                  artifact_ids=removed, object_keys=uniq(tomb.object_keys), kept_artifact_ids=kept,
                                  requeue_job_ids=uniq(tomb.requeue_job_ids))

    def remove_failed(self, user_id: str, job_id: str) -> FailedRemoval | None:
        """Remove the user's failed job and the other failed jobs of its source, with the artifacts of
        theirs that no other job and no document uses; ``None`` for an unknown job (or another user's),
        :class:`JobNotFailed` for a job that has not failed."""
        t = self._t
        with self._tx():
            job = t.job_of(user_id, job_id)
            if job is None:
                return None
            if job.status != "failed":
                raise JobNotFailed(job_id, job.status)

            def job_source(j: JobRow) -> str | None:
                if j.source_id is not None:
                    return j.source_id
                art = t.artifact_of(user_id, j.artifact_id)
                return art.source_id if art else None

            source_id = job_source(job)
            jobs = [job] if source_id is None else [
                j for j in t.jobs.values()
                if j.user_id == user_id and j.status == "failed" and job_source(j) == source_id]
            job_ids = sorted(j.job_id for j in jobs)
            gone = set(job_ids)
            candidates = sorted({j.artifact_id for j in jobs if j.artifact_id})
            used = {j.artifact_id for j in t.jobs.values() if j.user_id == user_id and j.job_id not in gone} \
                | {aid for aid in candidates if any(d.user_id == user_id for d in t.artifact_documents(aid))}
            unused = [a for a in candidates if a not in used]
            keys = sorted(art.object_key for aid in unused if (art := t.artifact_of(user_id, aid)))
            for entry_id in [o.id for o in t.outbox.values() if o.job_id in gone]:
                del t.outbox[entry_id]
            t.drop_jobs(job_ids)
            t.drop_artifacts([a for a in unused if t.artifact_of(user_id, a)])
            return FailedRemoval(user_id=user_id, source_id=source_id, job_ids=job_ids, artifact_ids=unused,
                                 object_keys=keys)

    def _rename_kept(self, user_id: str, source_id: str, kept: list[str]) -> None:
        """A kept artifact named after the deleted source takes the name of a job still using it: the one
        whose source holds the artifact's document first, else the oldest."""
        t = self._t
        for aid in kept:
            art = t.artifact_of(user_id, aid)
            if art is None or art.source_id != source_id:
                continue
            choices: list[tuple[int, datetime, str, JobRow]] = []
            for j in t.jobs.values():
                if j.artifact_id != aid or j.source_id is None:
                    continue
                docs = [d for d in t.artifact_documents(aid) if d.user_id == j.user_id]
                for rank in [0 if d.source_id == j.source_id else 1 for d in docs] or [2]:  # true, false, null
                    choices.append((rank, j.created_at, j.job_id, j))
            if choices:
                best = min(choices, key=lambda c: c[:3])[3]
                assert best.source_id is not None
                t.artifacts[aid] = replace(art, source_id=best.source_id, source_uri=best.source_uri
                                           if best.source_uri is not None else art.source_uri)

    def _pending_deletion(self, user_id: str, source_id: str) -> SourceDeletion | None:
        """A deletion whose cleanup outside the store was not confirmed, to be finished now."""
        tomb = self._t.deleted_sources.get((user_id, source_id))
        if tomb is None or tomb.cleaned_at is not None:
            return None
        return SourceDeletion(user_id=user_id, source_id=source_id, deleted_at=tomb.deleted_at,
                              job_ids=uniq(tomb.job_ids), document_ids=uniq(tomb.document_ids), artifact_ids=[],
                              object_keys=uniq(tomb.object_keys), requeue_job_ids=uniq(tomb.requeue_job_ids))

    def source_cleaned(self, user_id: str, source_id: str) -> list[str]:
        """Mark the deletion finished (the tombstone keeps only when it happened) and queue again the
        duplicates of the deleted content: their submission message is published again."""
        t = self._t
        with self._tx() as now:
            tomb = t.deleted_sources.get((user_id, source_id))
            if tomb is None or tomb.cleaned_at is not None:
                return []
            wanted = uniq(tomb.requeue_job_ids)
            tomb.cleaned_at = now
            tomb.job_ids, tomb.document_ids, tomb.object_keys, tomb.requeue_job_ids = [], [], [], []
            requeued = [job for job_id in wanted
                        if (job := t.job_of(user_id, job_id)) is not None and job.status == "duplicate"]
            for job in requeued:
                job.status, job.duplicate_of, job.error, job.finished_at, job.updated_at = \
                    "queued", None, None, None, now
                for stage in job.stages.values():
                    stage.status, stage.attempts, stage.started_at, stage.finished_at, stage.detail = \
                        "pending", 0, None, None, None
            again = {job.job_id for job in requeued}
            for entry in t.outbox.values():
                if entry.job_id in again and entry.topic == self._submissions[0]:
                    entry.published_at, entry.lease_until = None, None
            for job in requeued:
                t.event(job, "gateway", "requeued", _REQUEUED, None, self.db._now())
            return [job.job_id for job in requeued]

    def source_deleted(self, user_id: str, source_id: str, job_id: str | None,
                       submitted_at: datetime | None = None) -> bool:
        """Whether the source has a tombstone newer than ``submitted_at`` and ``job_id`` is gone."""
        at = utc(submitted_at)
        with self._tx():
            tomb = self._t.deleted_sources.get((user_id, source_id))
            if tomb is None or (at is not None and not at < tomb.deleted_at):
                return False
            return job_id is None or self._t.job_of(user_id, job_id) is None

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Delete every row of the user, in one step; return the rows removed per table (the same
        tables as Postgres reports, each counted before anything cascades)."""
        t = self._t
        with self._tx() as now:
            t.erased_users[user_id] = now  # nothing is created for this id again until it is created anew
            jobs = [j for j in t.jobs.values() if j.user_id == user_id]
            job_ids = {j.job_id for j in jobs}
            convs = [c for c in t.conversations.values() if c.user_id == user_id]
            keys = [k.key_id for k in t.api_keys.values() if k.user_id == user_id]
            removed = {
                "outbox": sum(1 for o in t.outbox.values() if o.job_id in job_ids),
                "job_events": sum(len(j.events) for j in jobs),
                "job_stages": sum(len(j.stages) for j in jobs),
                "conversation_turns": sum(len(c.turns) for c in convs),
                "api_keys": len(keys),
                "artifacts": sum(1 for a in t.artifacts.values() if a.user_id == user_id),
                "conversations": len(convs),
                "dead_letters": sum(1 for d in t.dead_letters.values() if d.user_id == user_id),
                "deleted_sources": sum(1 for u, _ in t.deleted_sources if u == user_id),
                "documents": sum(1 for d in t.documents.values() if d.user_id == user_id),
                "feed_tokens": sum(1 for f in t.feed_tokens.values() if f.user_id == user_id),
                "reminders": sum(1 for r in t.reminders.values() if r.user_id == user_id),
                "push_subscriptions": sum(1 for s in t.push_subscriptions.values() if s.user_id == user_id),
                "jobs": len(jobs),
                "request_windows": sum(1 for u, _, _ in t.request_windows if u == user_id),
                "source_tags": sum(len(tags) for (u, _), tags in t.source_tags.items() if u == user_id),
                "vector_indexes": sum(1 for u, _ in t.vector_indexes if u == user_id),
                "users": 1 if user_id in t.users else 0,
            }
            for entry_id in [o.id for o in t.outbox.values() if o.job_id in job_ids]:
                del t.outbox[entry_id]
            t.drop_jobs(sorted(job_ids))
            t.drop_artifacts([a.artifact_id for a in t.artifacts.values() if a.user_id == user_id])
            t.drop_documents([d.document_id for d in t.documents.values() if d.user_id == user_id])
            for conv in convs:
                del t.conversations[conv.conversation_id]
            for letter_id in [d.letter_id for d in t.dead_letters.values() if d.user_id == user_id]:
                del t.dead_letters[letter_id]
            t.drop_keys(keys)
            for tomb_key in [k for k in t.deleted_sources if k[0] == user_id]:
                del t.deleted_sources[tomb_key]
            for index_key in [k for k in t.vector_indexes if k[0] == user_id]:
                del t.vector_indexes[index_key]
            for feed_key in [k for k, f in t.feed_tokens.items() if f.user_id == user_id]:
                del t.feed_tokens[feed_key]
            for reminder_id in [k for k, r in t.reminders.items() if r.user_id == user_id]:
                del t.reminders[reminder_id]
            for subscription_id in [k for k, s in t.push_subscriptions.items() if s.user_id == user_id]:
                del t.push_subscriptions[subscription_id]
            for tag_key in [k for k in t.source_tags if k[0] == user_id]:
                del t.source_tags[tag_key]
            for window_key in [k for k in t.request_windows if k[0] == user_id]:
                del t.request_windows[window_key]
            t.users.pop(user_id, None)
            return dict(sorted(removed.items()))
