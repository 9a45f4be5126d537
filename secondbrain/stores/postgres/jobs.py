"""The job ledger: each job's stages, their transitions and the event log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from secondbrain.ports import JobGone, JobView, StageOutcome, StageView
from secondbrain.ports.metadata import JobState, job_state_of
from secondbrain.stages import STAGES
from secondbrain.stores.postgres.base import PgRole

_UNFINISHED = "status IN ('queued', 'running')"
# Progress writes move a stage forward only: a stage that has finished (succeeded, failed, skipped) is
# never set back to running or retrying by a write that lands late (a progress task already on its way
# when the stage finished, a retry notice of an attempt that was overtaken).
_STAGE_OPEN = "status IN ('pending', 'running', 'retrying')"

# Finishing a stage of one or several jobs of a user, in one statement (planned once, not once a job), job by
# job: the stage succeeds (unless the job is finished, or the document this work is about was replaced meanwhile),
# the job succeeds once no other stage is left, and a row for each job asked says what became of the work: its
# id, the job's status (none: no such job of the user), and whether the document was superseded.
_FINISH = f"""
WITH item AS (SELECT * FROM unnest(%(jobs)s::text[], %(docs)s::text[], %(attempts)s::int[]) AS i(job_id, doc, attempt)),
job AS (SELECT i.job_id, j.status FROM item i LEFT JOIN jobs j ON j.job_id = i.job_id AND j.user_id = %(user)s),
sup AS (SELECT i.job_id, i.doc IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM documents d WHERE d.document_id = i.doc AND d.user_id = %(user)s
              AND d.superseded_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM documents n WHERE n.user_id = d.user_id AND n.source_id = d.source_id
                                AND n.version > d.version)) AS superseded
        FROM item i),
st AS (UPDATE job_stages s SET status = 'succeeded', finished_at = now(), started_at = coalesce(s.started_at, now()),
              detail = coalesce(%(detail)s::text, s.detail), attempts = greatest(s.attempts, i.attempt)
       FROM item i JOIN job ON job.job_id = i.job_id JOIN sup ON sup.job_id = i.job_id
       WHERE s.job_id = i.job_id AND s.stage = %(stage)s AND s.status <> 'succeeded'
         AND job.{_UNFINISHED} AND NOT sup.superseded
       RETURNING s.job_id, s.attempts),
others AS (SELECT st.job_id, (SELECT count(*) FROM job_stages o WHERE o.job_id = st.job_id AND o.stage <> %(stage)s
                                AND o.status <> 'succeeded') AS n
           FROM st),
j AS (UPDATE jobs SET status = CASE WHEN o.n = 0 THEN 'succeeded' ELSE 'running' END,
                      error = CASE WHEN o.n = 0 THEN NULL ELSE jobs.error END,
                      finished_at = CASE WHEN o.n = 0 THEN now() ELSE jobs.finished_at END,
                      updated_at = now()
      FROM others o WHERE jobs.job_id = o.job_id RETURNING jobs.job_id, jobs.status),
ev AS (INSERT INTO job_events (job_id, stage, status, detail, attempt)
       SELECT job_id, stage, status, detail, attempt FROM (
           SELECT st.job_id, %(stage)s AS stage, 'succeeded' AS status, %(detail)s::text AS detail,
                  st.attempts AS attempt, 1 AS ord FROM st
           UNION ALL
           SELECT j.job_id, 'job', 'succeeded', NULL, NULL, 2 FROM j WHERE j.status = 'succeeded') e
       ORDER BY job_id, ord RETURNING 1)
SELECT job.job_id, job.status, sup.superseded FROM job JOIN sup ON sup.job_id = job.job_id
"""


# Marking a stage of one or several jobs of a user running, unless it has finished (a progress write landing late
# changes nothing).
_STARTED = f"""
WITH live AS (SELECT job_id FROM jobs WHERE job_id = ANY(%(jobs)s) AND user_id = %(user)s AND {_UNFINISHED}),
st AS (UPDATE job_stages SET status = 'running', attempts = %(attempt)s, started_at = coalesce(started_at, now())
       WHERE job_id IN (SELECT job_id FROM live) AND stage = %(stage)s AND {_STAGE_OPEN}
       RETURNING job_id),
j AS (UPDATE jobs SET status = 'running', updated_at = now()
      WHERE job_id IN (SELECT job_id FROM st) RETURNING 1)
INSERT INTO job_events (job_id, stage, status, attempt)
SELECT job_id, %(stage)s, 'running', %(attempt)s FROM st ORDER BY job_id"""

# The jobs' rows locked in job id order (as deletions lock them) before a transition of several jobs.
_LOCK_MANY = ("SELECT 1 FROM (SELECT job_id FROM jobs WHERE user_id = %(user)s AND job_id = ANY(%(jobs)s) "
              "ORDER BY job_id FOR UPDATE) locked LIMIT 1")


def _outcome(row: Any) -> StageOutcome:
    """What a :data:`_FINISH` row (the job's status, whether superseded) says became of the work."""
    if row is None or row[0] is None:
        return "gone"  # no such job for this user: deleted with its source (or never theirs)
    status, superseded = row
    if superseded:
        return "superseded"
    return "ended" if status in ("failed", "duplicate", "superseded") else "done"


def _timestamp(value: str | None) -> datetime | None:
    """A timestamptz as json_build_object writes it (ISO 8601 with offset)."""
    return datetime.fromisoformat(value) if value else None


# The earliest other job of a user whose artifact is the same bytes and that got past extraction (its
# document exists and is the current version of its source).  Placeholders: the user, artifact, job.
_ORIGINAL = """SELECT o.job_id FROM jobs o
JOIN documents d ON d.artifact_id = o.artifact_id AND d.user_id = o.user_id
WHERE o.user_id = {user} AND o.artifact_id = {artifact} AND o.job_id <> {job}
  AND o.status IN ('succeeded', 'running') AND d.superseded_at IS NULL{also}
ORDER BY o.created_at, o.job_id LIMIT 1"""


class PostgresJobs(PgRole):
    """The job ledger: each job's stages, their transitions and the event log."""

    # Every transition is one transaction sent in one go (pipeline mode: one round trip): the job row is
    # locked first, so two transitions of one job never interleave, and every later statement runs only
    # while the job is the user's and unfinished (a replayed or late event changes nothing).  In READ
    # COMMITTED each statement sees what committed before it ran, i.e. after the lock was granted.

    def _locked(self, user_id: str, job_id: str, *statements: str, **params: Any) -> list[Any]:
        """Run ``statements`` (SQL with %(job)s/%(user)s... placeholders) after locking the job; the first
        row each returns (None for statements returning nothing)."""
        args = {"job": job_id, "user": user_id, **params}
        lock = "SELECT 1 FROM jobs WHERE job_id = %(job)s AND user_id = %(user)s FOR UPDATE"
        return self._one_trip([(lock, args), *((sql, args) for sql in statements)])[1:]

    def job_state(self, user_id: str, job_id: str) -> JobState:
        """Live, ended or gone (see the port)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT status FROM jobs WHERE job_id = %s AND user_id = %s",
                               (job_id, user_id)).fetchone()
        return job_state_of(None if row is None else row[0])

    def hold(self, user_id: str, job_id: str) -> AbstractContextManager[None]:
        """The job's fence (see :class:`~secondbrain.ports.JobFence`)."""
        return self._hold(user_id, job_id)

    @contextmanager
    def _hold(self, user_id: str, job_id: str) -> Iterator[None]:
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
        """The jobs' rows are share-locked for the block, in one statement: the deletion, erasure or newer
        submission that would change one waits for the block.  They are locked in job id order, as deletions
        and erasures lock them, so two of these never wait on each other in a circle."""
        with self._rows_held("SELECT job_id, status FROM jobs WHERE user_id = %s AND job_id = ANY(%s) "
                             "ORDER BY job_id FOR SHARE", (user_id, job_ids)) as rows:
            found = dict(rows)
            yield {job: job_state_of(found.get(job)) for job in job_ids}

    def finish_stage(self, user_id: str, job_id: str, stage: str, *, document_id: str | None = None,
                     detail: str | None = None, attempt: int = 1) -> StageOutcome:
        """Record ``stage`` done and say whether its work is still wanted (see the port)."""
        return self._finish(user_id, stage, [(job_id, document_id, attempt)], detail)[job_id]

    def job_states(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobState]:
        """Live, ended or gone, of several jobs in one statement (see the port)."""
        wanted = list(dict.fromkeys(job_ids))
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT job_id, status FROM jobs WHERE user_id = %s AND job_id = ANY(%s)",
                                (user_id, wanted)).fetchall()
        found = dict(rows)
        return {job: job_state_of(found.get(job)) for job in wanted}

    def finish_stages(self, user_id: str, stage: str,
                      jobs: Sequence[tuple[str, str | None, int]]) -> dict[str, StageOutcome]:
        """Finish ``stage`` of several jobs in one transaction, one round trip (see the port): their rows are
        locked first in one statement, in job id order (as deletions lock them), then each is finished as
        :meth:`finish_stage` does."""
        return self._finish(user_id, stage, jobs, None)

    def _finish(self, user_id: str, stage: str, jobs: Sequence[tuple[str, str | None, int]],
                detail: str | None) -> dict[str, StageOutcome]:
        self._require_stage(stage)
        items = list({job: (job, doc, attempt) for job, doc, attempt in jobs}.values())
        if not items:
            return {}
        args = {"user": user_id, "stage": stage, "detail": detail, "jobs": [i[0] for i in items],
                "docs": [i[1] for i in items], "attempts": [i[2] for i in items]}
        rows = self._one_trip_rows([(_LOCK_MANY, args), (_FINISH, args)])[1]
        found = {job: (status, superseded) for job, status, superseded in rows}
        return {job: _outcome(found.get(job)) for job, _d, _a in items}

    def stages_started(self, user_id: str, stage: str, job_ids: Sequence[str]) -> None:
        """:meth:`stage_started` (first attempt) for several jobs in one transaction, one round trip."""
        self._start(user_id, stage, job_ids, 1)

    def stage_started(self, user_id: str, job_id: str, stage: str, attempt: int) -> None:
        """Mark ``stage`` running with ``attempt`` (the job becomes running)."""
        self._start(user_id, stage, [job_id], attempt)

    def _start(self, user_id: str, stage: str, job_ids: Sequence[str], attempt: int) -> None:
        self._require_stage(stage)
        jobs = sorted(set(job_ids))
        if jobs:
            args = {"jobs": jobs, "user": user_id, "stage": stage, "attempt": attempt}
            self._one_trip([(_LOCK_MANY, args), (_STARTED, args)])

    def stage_succeeded(self, user_id: str, job_id: str, stage: str, detail: str | None = None) -> None:
        """Mark ``stage`` done; when every stage has succeeded the job succeeds."""
        self.finish_stage(user_id, job_id, stage, detail=detail, attempt=0)

    def stage_retrying(self, user_id: str, job_id: str, stage: str, attempt: int, reason: str) -> None:
        """Record a retryable failure of ``stage`` at ``attempt`` (kept as the stage detail)."""
        self._require_stage(stage)
        self._locked(user_id, job_id, f"""
            WITH live AS (SELECT 1 FROM jobs WHERE job_id = %(job)s AND user_id = %(user)s AND {_UNFINISHED}),
            st AS (UPDATE job_stages SET status = 'retrying', attempts = %(attempt)s, detail = %(reason)s,
                          started_at = coalesce(started_at, now())
                   WHERE job_id = %(job)s AND stage = %(stage)s AND {_STAGE_OPEN} AND EXISTS (SELECT 1 FROM live)
                   RETURNING 1),
            j AS (UPDATE jobs SET status = 'running', updated_at = now()
                  WHERE job_id = %(job)s AND EXISTS (SELECT 1 FROM st) RETURNING 1)
            INSERT INTO job_events (job_id, stage, status, detail, attempt)
            SELECT %(job)s, %(stage)s, 'retrying', %(reason)s, %(attempt)s FROM st""",
                     stage=stage, attempt=attempt, reason=reason)

    def job_failed(self, user_id: str, job_id: str, stage: str, reason: str, attempt: int | None = None, *,
                   retryable: bool = False) -> None:
        """Mark the stage and the job failed with ``reason``; stages not yet run become skipped.
        ``retryable``: trying the capture again may succeed.

        ``stage`` may also name a step outside :data:`STAGES` (e.g. the gateway); then only
        the job and the event log record it.
        """
        self._locked(user_id, job_id, f"""
            WITH live AS (SELECT 1 FROM jobs WHERE job_id = %(job)s AND user_id = %(user)s AND {_UNFINISHED}),
            st AS (UPDATE job_stages SET status = 'failed', finished_at = now(), detail = %(reason)s,
                          attempts = greatest(attempts, coalesce(%(attempt)s, attempts))
                   WHERE job_id = %(job)s AND stage = %(stage)s AND EXISTS (SELECT 1 FROM live) RETURNING attempts),
            skip AS (UPDATE job_stages SET status = 'skipped'
                     WHERE job_id = %(job)s AND status = 'pending' AND EXISTS (SELECT 1 FROM live) RETURNING 1),
            j AS (UPDATE jobs SET status = 'failed', error = %(reason)s, error_retryable = %(retryable)s,
                                  finished_at = now(), updated_at = now()
                  WHERE job_id = %(job)s AND EXISTS (SELECT 1 FROM live) RETURNING 1)
            INSERT INTO job_events (job_id, stage, status, detail, attempt)
            SELECT %(job)s, %(stage)s, 'failed', %(reason)s, (SELECT attempts FROM st) FROM live""",
                     stage=stage, reason=reason, attempt=attempt, retryable=retryable)

    def job_duplicate(self, user_id: str, job_id: str, original_job_id: str) -> None:
        """End the job as a duplicate of ``original_job_id``.

        The stage that found the duplicate (the running one) is marked succeeded, stages that
        had not run are skipped.
        """
        self._locked(user_id, job_id, f"""
            WITH live AS (SELECT 1 FROM jobs WHERE job_id = %(job)s AND user_id = %(user)s AND {_UNFINISHED}),
            done AS (UPDATE job_stages SET status = 'succeeded', finished_at = now()
                     WHERE job_id = %(job)s AND status = 'running' AND EXISTS (SELECT 1 FROM live) RETURNING 1),
            skip AS (UPDATE job_stages SET status = 'skipped', detail = %(detail)s
                     WHERE job_id = %(job)s AND status IN ('pending', 'retrying') AND EXISTS (SELECT 1 FROM live)
                     RETURNING 1),
            j AS (UPDATE jobs SET status = 'duplicate', duplicate_of = %(original)s, finished_at = now(),
                                  updated_at = now()
                  WHERE job_id = %(job)s AND EXISTS (SELECT 1 FROM live) RETURNING 1)
            INSERT INTO job_events (job_id, stage, status, detail)
            SELECT %(job)s, 'job', 'duplicate', %(detail)s FROM live""",
                     original=original_job_id, detail=f"duplicate of {original_job_id}")

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        """The user's job with its stages in :data:`STAGES` order, or ``None`` (also for others' jobs)."""
        return self.get_jobs(user_id, [job_id]).get(job_id)

    def get_jobs(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobView]:
        """:meth:`get_job` of several jobs in one statement: those found, by id."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            # One round trip: the stages come along as a JSON array in STAGES order.
            rows = cur.execute(
                # The extracted title once there is one (as the source list shows), else the submitted one.
                "SELECT j.*, COALESCE(d.title, a.title, j.title) AS title, "
                "COALESCE(a.source_uri, j.source_uri) AS source_uri, "
                "(SELECT coalesce(json_agg(json_build_object('stage', s.stage, 'status', s.status, "
                "'attempts', s.attempts, 'started_at', s.started_at, 'finished_at', s.finished_at, "
                "'detail', s.detail) ORDER BY array_position(%s::text[], s.stage), s.stage), '[]') "
                " FROM job_stages s WHERE s.job_id = j.job_id) AS stage_rows, "
                f"({_ORIGINAL.format(job='j.job_id', user='j.user_id', artifact='j.artifact_id', also='')}) "
                "AS extracted_before "
                "FROM jobs j "
                "LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id "
                "LEFT JOIN documents d ON d.artifact_id = j.artifact_id AND d.user_id = j.user_id "
                "WHERE j.job_id = ANY(%s) AND j.user_id = %s",
                (list(STAGES), list(job_ids), user_id),
            ).fetchall()
        found: dict[str, JobView] = {}
        for job in rows:
            if job["job_id"] not in found:
                found[job["job_id"]] = self._view(job)
        return found

    @staticmethod
    def _view(job: dict[str, Any]) -> JobView:
        stages = [StageView(stage=s["stage"], status=s["status"], attempts=s["attempts"],
                            started_at=_timestamp(s["started_at"]), finished_at=_timestamp(s["finished_at"]),
                            detail=s["detail"]) for s in job["stage_rows"]]
        return JobView(
            job_id=job["job_id"], user_id=job["user_id"], artifact_id=job["artifact_id"],
            status=job["status"], error=job["error"], created_at=job["created_at"],
            updated_at=job["updated_at"], finished_at=job["finished_at"],
            stages=stages,
            title=job["title"], source_uri=job["source_uri"], duplicate_of=job["duplicate_of"],
            superseded_by=job["superseded_by"],
            extracted_before=job["extracted_before"],
            retryable=job["status"] == "failed" and bool(job["error_retryable"]),
        )

    def job_events(self, user_id: str, job_id: str) -> list[dict[str, Any]]:
        """The job's event log oldest first: dicts with stage, status, detail, attempt, at
        (empty for an unknown job or another user's job)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(
                "SELECT e.stage, e.status, e.detail, e.attempt, e.at FROM job_events e "
                "JOIN jobs j ON j.job_id = e.job_id WHERE e.job_id = %s AND j.user_id = %s ORDER BY e.id",
                (job_id, user_id),
            ).fetchall()

    def pending_jobs(self, user_id: str) -> int:
        """Queued or running jobs of the user (served by the partial index on unfinished jobs)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT count(*) FROM jobs WHERE user_id = %s AND status IN ('queued', 'running')",
                               (user_id,)).fetchone()
        assert row is not None
        return int(row[0])

    def note_key_job(self, user_id: str, key_id: str, job_id: str) -> None:
        """One row in ``key_jobs``, when both the job and the key are the user's."""
        with self._pool.connection() as conn:
            conn.execute("INSERT INTO key_jobs (key_id, job_id) SELECT k.key_id, j.job_id FROM api_keys k, jobs j "
                         "WHERE k.key_id = %s AND k.user_id = %s AND j.job_id = %s AND j.user_id = %s "
                         "ON CONFLICT DO NOTHING", (key_id, user_id, job_id, user_id))

    def made_by_key(self, user_id: str, key_id: str, job_id: str) -> bool:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT 1 FROM key_jobs kj JOIN jobs j ON j.job_id = kj.job_id "
                               "WHERE kj.key_id = %s AND kj.job_id = %s AND j.user_id = %s",
                               (key_id, job_id, user_id)).fetchone()
        return row is not None

    def find_original_job(self, user_id: str, artifact_id: str, job_id: str) -> str | None:
        """The earliest other job of the user whose artifact is the same bytes, that got past
        extraction (its document exists and is the current version of its source)."""
        with self._pool.connection() as conn:
            row = conn.execute(_ORIGINAL.format(job="%s", user="%s", artifact="%s", also=""),
                               (user_id, artifact_id, job_id)).fetchone()
        return row[0] if row else None
