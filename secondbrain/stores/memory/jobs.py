"""The job ledger: each job's stages, their transitions and the event log (in memory)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from secondbrain.ports import JobGone, JobView, StageOutcome, StageView
from secondbrain.ports.metadata import JobState, job_state_of
from secondbrain.stages import STAGES
from secondbrain.stores.memory.base import FINISHED, STAGE_OPEN, UNFINISHED, JobRow, MemoryRole, require_stage


def _stage_order(stage: str) -> tuple[int, str]:
    return (STAGES.index(stage) if stage in STAGES else len(STAGES), stage)


class MemoryJobs(MemoryRole):
    """The job ledger: each job's stages, their transitions and the event log.

    Jobs that have finished (succeeded, failed, duplicate, superseded) never change again: a replayed or
    late stage event for them is ignored and leaves no event behind; nor does a progress write change a
    stage that has finished.
    """

    def _transition(self, user_id: str, job_id: str, apply: Callable[[JobRow, datetime], None]) -> None:
        """Run ``apply`` on the job unless it is unknown, another user's, or finished."""
        with self._tx() as now:
            job = self._t.job_of(user_id, job_id)
            if job is not None and job.status not in FINISHED:
                apply(job, now)

    def _event(self, job: JobRow, stage: str | None, status: str, detail: str | None, attempt: int | None) -> None:
        self._t.event(job, stage, status, detail, attempt, self.db._now())

    @staticmethod
    def _mark_running(job: JobRow, now: datetime) -> None:
        job.status, job.updated_at = "running", now

    def stage_started(self, user_id: str, job_id: str, stage: str, attempt: int) -> None:
        """Mark ``stage`` running with ``attempt`` (the job becomes running)."""
        require_stage(stage)

        def apply(job: JobRow, now: datetime) -> None:
            row = job.stages.get(stage)
            if row is None or row.status not in STAGE_OPEN:
                return
            row.status, row.attempts = "running", attempt
            row.started_at = row.started_at or now
            self._mark_running(job, now)
            self._event(job, stage, "running", None, attempt)

        self._transition(user_id, job_id, apply)

    def job_state(self, user_id: str, job_id: str) -> JobState:
        """Live, ended or gone (see the port)."""
        with self._tx():
            job = self._t.job_of(user_id, job_id)
            return job_state_of(None if job is None else job.status)

    def hold(self, user_id: str, job_id: str) -> AbstractContextManager[None]:
        """The job's fence (see :class:`~secondbrain.ports.JobFence`)."""
        return self._hold(user_id, job_id)

    @contextmanager
    def _hold(self, user_id: str, job_id: str) -> Iterator[None]:
        """The job's fence: the store's lock is held for the block (stronger than Postgres's row lock, and
        re-entrant, so the block may still read the store)."""
        with self._hold_live(user_id, [job_id]) as states:
            state = states[job_id]
            if state != "live":
                raise JobGone(job_id, state)
            yield

    def hold_live(self, user_id: str, job_ids: Sequence[str]) -> AbstractContextManager[dict[str, JobState]]:
        """The fences of several jobs of the user (see :class:`~secondbrain.ports.JobFence`)."""
        return self._hold_live(user_id, list(dict.fromkeys(job_ids)))

    @contextmanager
    def _hold_live(self, user_id: str, job_ids: list[str]) -> Iterator[dict[str, JobState]]:
        with self._tx():
            jobs = {job_id: self._t.job_of(user_id, job_id) for job_id in job_ids}
            yield {job_id: job_state_of(None if job is None else job.status) for job_id, job in jobs.items()}

    def stages_started(self, user_id: str, stage: str, job_ids: Sequence[str]) -> None:
        """Mark ``stage`` running (first attempt) for several jobs at once (see the port)."""
        with self._tx():
            for job_id in dict.fromkeys(job_ids):
                self.stage_started(user_id, job_id, stage, 1)

    def job_states(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobState]:
        """Live, ended or gone, of several jobs at once (see the port)."""
        with self._tx():
            return {job_id: self.job_state(user_id, job_id) for job_id in dict.fromkeys(job_ids)}

    def finish_stages(self, user_id: str, stage: str,
                      jobs: Sequence[tuple[str, str | None, int]]) -> dict[str, StageOutcome]:
        """Finish ``stage`` of several jobs in one transaction (see the port)."""
        require_stage(stage)
        with self._tx():
            return {job: self.finish_stage(user_id, job, stage, document_id=doc, attempt=attempt)
                    for job, doc, attempt in jobs}

    def finish_stage(self, user_id: str, job_id: str, stage: str, *, document_id: str | None = None,
                     detail: str | None = None, attempt: int = 1) -> StageOutcome:
        """Record ``stage`` done and say whether its work is still wanted (see the port)."""
        require_stage(stage)
        with self._tx() as now:
            job = self._t.job_of(user_id, job_id)
            if job is None:
                return "gone"
            if document_id is not None and self._superseded(user_id, document_id):
                return "superseded"
            if job.status in FINISHED:
                return "ended" if job.status in ("failed", "duplicate", "superseded") else "done"
            row = job.stages.get(stage)
            if row is None or row.status == "succeeded":
                return "done"
            row.status, row.finished_at = "succeeded", now
            row.started_at = row.started_at or now
            row.detail = detail if detail is not None else row.detail
            row.attempts = max(row.attempts, attempt)
            self._event(job, stage, "succeeded", detail, row.attempts)
            if all(s.status == "succeeded" for s in job.stages.values()):  # URL jobs have one stage more
                job.status, job.error, job.finished_at, job.updated_at = "succeeded", None, now, now
                self._event(job, "job", "succeeded", None, None)
            else:
                self._mark_running(job, now)
            return "done"

    def _superseded(self, user_id: str, document_id: str) -> bool:
        doc = self._t.document_of(user_id, document_id)
        return doc is None or doc.superseded_at is not None or any(
            n.version > doc.version for n in self._t.source_documents(user_id, doc.source_id))

    def stage_succeeded(self, user_id: str, job_id: str, stage: str, detail: str | None = None) -> None:
        """Mark ``stage`` done; when every stage has succeeded the job succeeds."""
        self.finish_stage(user_id, job_id, stage, detail=detail, attempt=0)

    def stage_retrying(self, user_id: str, job_id: str, stage: str, attempt: int, reason: str) -> None:
        """Record a retryable failure of ``stage`` at ``attempt`` (kept as the stage detail)."""
        require_stage(stage)

        def apply(job: JobRow, now: datetime) -> None:
            row = job.stages.get(stage)
            if row is None or row.status not in STAGE_OPEN:
                return
            row.status, row.attempts, row.detail = "retrying", attempt, reason
            row.started_at = row.started_at or now
            self._mark_running(job, now)
            self._event(job, stage, "retrying", reason, attempt)

        self._transition(user_id, job_id, apply)

    def job_failed(self, user_id: str, job_id: str, stage: str, reason: str, attempt: int | None = None, *,
                   retryable: bool = False) -> None:
        """Mark the stage and the job failed with ``reason``; stages not yet run become skipped.
        ``stage`` may also name a step outside :data:`STAGES` (then only the job and its log record it).
        ``retryable``: trying the capture again may succeed."""

        def apply(job: JobRow, now: datetime) -> None:
            row = job.stages.get(stage)
            if row is not None:
                row.status, row.finished_at, row.detail = "failed", now, reason
                row.attempts = max(row.attempts, attempt if attempt is not None else row.attempts)
            for other in job.stages.values():
                if other.status == "pending":
                    other.status = "skipped"
            job.status, job.error, job.finished_at, job.updated_at = "failed", reason, now, now
            job.error_retryable = retryable
            self._event(job, stage, "failed", reason, row.attempts if row else None)

        self._transition(user_id, job_id, apply)

    def job_duplicate(self, user_id: str, job_id: str, original_job_id: str) -> None:
        """End the job as a duplicate of ``original_job_id``: the running stage (the one that found it)
        succeeds, stages that had not run are skipped."""

        def apply(job: JobRow, now: datetime) -> None:
            detail = f"duplicate of {original_job_id}"
            for row in job.stages.values():
                if row.status == "running":
                    row.status, row.finished_at = "succeeded", now
                elif row.status in ("pending", "retrying"):
                    row.status, row.detail = "skipped", detail
            job.status, job.duplicate_of, job.finished_at, job.updated_at = "duplicate", original_job_id, now, now
            self._event(job, "job", "duplicate", detail, None)

        self._transition(user_id, job_id, apply)

    def get_jobs(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobView]:
        """:meth:`get_job` of several jobs: those found, by id."""
        with self._tx():
            views = {job_id: self.get_job(user_id, job_id) for job_id in dict.fromkeys(job_ids)}
        return {job_id: view for job_id, view in views.items() if view is not None}

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        """The user's job with its stages in :data:`STAGES` order, or ``None`` (also for others' jobs)."""
        with self._tx():
            job = self._t.job_of(user_id, job_id)
            if job is None:
                return None
            art = self._t.artifact_of(user_id, job.artifact_id)
            doc = self._t.latest_document(user_id, job.artifact_id)
            stages = sorted(job.stages.values(), key=lambda s: _stage_order(s.stage))
            return JobView(
                job_id=job.job_id, user_id=job.user_id, artifact_id=job.artifact_id,
                status=job.status, error=job.error, created_at=job.created_at, updated_at=job.updated_at,
                finished_at=job.finished_at,
                stages=[StageView(stage=s.stage, status=s.status, attempts=s.attempts, started_at=s.started_at,
                                  finished_at=s.finished_at, detail=s.detail) for s in stages],
                # The extracted title once there is one (as the source list shows), else the submitted one.
                title=doc.title if doc else art.title if art and art.title is not None else job.title,
                source_uri=art.source_uri if art else job.source_uri, duplicate_of=job.duplicate_of,
                superseded_by=job.superseded_by,
                extracted_before=self._original(user_id, job.artifact_id, job.job_id),
                retryable=job.status == "failed" and job.error_retryable,
            )

    def job_events(self, user_id: str, job_id: str) -> list[dict[str, Any]]:
        """The job's event log oldest first: dicts with stage, status, detail, attempt, at
        (empty for an unknown job or another user's job)."""
        with self._tx():
            job = self._t.job_of(user_id, job_id)
            if job is None:
                return []
            return [{"stage": e.stage, "status": e.status, "detail": e.detail, "attempt": e.attempt, "at": e.at}
                    for e in job.events]

    def pending_jobs(self, user_id: str) -> int:
        """Queued or running jobs of the user."""
        with self._tx():
            return sum(1 for j in self._t.jobs.values() if j.user_id == user_id and j.status in UNFINISHED)

    def note_key_job(self, user_id: str, key_id: str, job_id: str) -> None:
        """Remembered beside the job (it goes with the job, as the row of ``key_jobs`` does)."""
        with self._tx():
            key = self._t.api_keys.get(key_id)
            if key is not None and key.user_id == user_id and self._t.job_of(user_id, job_id) is not None:
                self._t.key_jobs.add((key_id, job_id))

    def made_by_key(self, user_id: str, key_id: str, job_id: str) -> bool:
        with self._tx():
            return (key_id, job_id) in self._t.key_jobs and self._t.job_of(user_id, job_id) is not None

    def find_original_job(self, user_id: str, artifact_id: str, job_id: str) -> str | None:
        """The earliest other job of the user whose artifact is the same bytes, that got past
        extraction (its document exists and is the current version of its source)."""
        with self._tx():
            return self._original(user_id, artifact_id, job_id)

    def _original(self, user_id: str, artifact_id: str | None, job_id: str) -> str | None:
        return self._t.original_job(user_id, artifact_id, job_id)
