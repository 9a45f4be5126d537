"""What comes in: an artifact or URL with its job and outgoing messages, in one step (in memory)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from secondbrain import ids
from secondbrain.ports import ArtifactRecord, IdempotencyConflict, OutboxMessage, SubmitResult, UnknownUser
from secondbrain.stages import FILE_STAGES, URL_STAGES
from secondbrain.stores.memory.base import IntegrityError, JobRow, MemoryRole, StageRow, stored_artifact


class MemoryIntake(MemoryRole):
    """What comes in: an artifact or URL with its job and outgoing messages, in one step."""

    def submit_many(self, submissions: Sequence[tuple[ArtifactRecord, str, Sequence[OutboxMessage], str | None]], *,
                    lease_s: float | None = None) -> list[SubmitResult | Exception]:
        """:meth:`submit` of several at once (see the port)."""
        out: list[SubmitResult | Exception] = [IdempotencyConflict("unreachable")] * len(submissions)
        with self.db._one_transaction():
            for i in sorted(range(len(submissions)), key=lambda i: (submissions[i][0].source_id, i)):  # source order
                artifact, job_id, outbox, request_hash = submissions[i]
                try:
                    out[i] = self.submit(artifact, job_id, outbox, request_hash=request_hash, lease_s=lease_s)
                except (UnknownUser, IdempotencyConflict) as exc:
                    out[i] = exc
        return out

    def submit(self, artifact: ArtifactRecord, job_id: str, outbox: Sequence[OutboxMessage], *,
               request_hash: str | None = None, lease_s: float | None = None) -> SubmitResult:
        """Create the user when missing (not an erased one: :class:`UnknownUser`), insert the artifact (kept
        once when the same bytes come again), create the job with its stages pending, queue ``outbox``, log
        ``("gateway", "queued")`` and end the source's older unfinished jobs of other bytes as superseded.  An
        existing ``job_id`` changes nothing and gives ``created=False`` (:class:`IdempotencyConflict`
        when it was created for another ``request_hash``)."""
        return self._register(artifact, job_id, outbox, request_hash=request_hash, lease_s=lease_s)

    def register_external(self, artifact: ArtifactRecord, job_id: str) -> SubmitResult:
        """Same as :meth:`submit` without outbox rows; a job of a source deleted after
        ``artifact.submitted_at`` is not created again (``created=False`` and no job)."""
        return self._register(artifact, job_id, (), guard_deleted=True)

    def request_url(self, user_id: str, job_id: str, url: str, title: str | None,
                    outbox: Sequence[OutboxMessage], *, request_hash: str | None = None,
                    lease_s: float | None = None) -> SubmitResult:
        """Create a URL job (no artifact until the fetcher stores the page, stages fetch, extract, chunk
        and embed pending), queue ``outbox`` and log ``("gateway", "queued")``."""
        return self._register(None, job_id, outbox, user_id=user_id, source_uri=url, title=title,
                              stages=URL_STAGES, request_hash=request_hash, lease_s=lease_s)

    def attach_artifact(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Record the artifact a URL job fetched and point the job at it (same user only)."""
        stored_artifact(artifact)  # refused before anything changes
        with self._tx() as now:
            job = self._t.job_of(artifact.user_id, job_id)
            if job is None:
                return False
            self._t.insert_artifact(artifact)
            job.artifact_id, job.source_id, job.updated_at = artifact.artifact_id, artifact.source_id, now
            return True

    def _register(self, artifact: ArtifactRecord | None, job_id: str, outbox: Sequence[OutboxMessage], *,
                  user_id: str | None = None, source_uri: str | None = None, title: str | None = None,
                  stages: Sequence[str] = FILE_STAGES, guard_deleted: bool = False,
                  request_hash: str | None = None, lease_s: float | None = None) -> SubmitResult:
        owner = artifact.user_id if artifact is not None else user_id
        assert owner is not None
        # A URL's source is the URL without its fragment (as the fetcher names the page it stores).
        job_source = artifact.source_id if artifact is not None else \
            ids.source_id(owner, (source_uri or "").split("#", 1)[0].strip())
        if artifact is not None:
            stored_artifact(artifact)
        if any(not m.topic for m in outbox):
            raise IntegrityError("outbox.topic must not be empty")
        t = self._t
        with self._tx() as now:
            if not (guard_deleted and artifact is not None and t.left_over(artifact, job_id)) \
                    and job_id not in t.jobs:
                t.ensure_user(owner, None, now)
                # As Postgres: a capture's earlier copy is read for submissions, not for external registrations.
                original = None if guard_deleted else t.original_job(owner, artifact.artifact_id if artifact else None,
                                                                     job_id)
                if artifact is not None:
                    t.insert_artifact(artifact)
                job = JobRow(job_id=job_id, user_id=owner, artifact_id=artifact.artifact_id if artifact else None,
                             source_id=job_source, source_uri=artifact.source_uri if artifact else source_uri,
                             title=artifact.title if artifact else title, request_hash=request_hash,
                             created_at=now, updated_at=now, stages={s: StageRow(s) for s in stages})
                t.jobs[job_id] = job
                lease = None if lease_s is None else now + timedelta(seconds=float(lease_s))
                leased = tuple(t.add_outbox(m.topic, m.key, m.value, m.headers, job_id, now, lease) for m in outbox)
                t.event(job, "gateway", "queued", None, None, self.db._now())
                t.supersede_older(job, now)
                return SubmitResult(job_id=job_id, artifact_id=artifact.artifact_id if artifact else "", created=True,
                                    leased=leased if lease_s is not None else (), original_job=original)
            existing = t.jobs.get(job_id)
            known = (existing.artifact_id, existing.request_hash) if existing is not None else None
        if known is not None and request_hash is not None and known[1] is not None and known[1] != request_hash:
            raise IdempotencyConflict("this Idempotency-Key was already used for a request with other content; "
                                      "send new content with a new key")
        fallback = artifact.artifact_id if artifact else ""
        return SubmitResult(job_id=job_id, artifact_id=(known[0] if known else None) or fallback, created=False)
