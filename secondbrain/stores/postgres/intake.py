"""What comes in: an artifact or URL with its job and outgoing messages, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from secondbrain import ids
from secondbrain.ports import (
    SUPERSEDED_DETAIL,
    ArtifactRecord,
    IdempotencyConflict,
    OutboxMessage,
    SubmitResult,
    UnknownUser,
)
from secondbrain.stages import FILE_STAGES, URL_STAGES
from secondbrain.stores.postgres.base import PgRole, _encode_headers
from secondbrain.stores.postgres.jobs import _ORIGINAL

# A submission as one statement.  Every insert runs only when the job does not exist yet (a retry with the
# same Idempotency-Key writes nothing); the artifact is kept once per bytes (and registered again after
# retention removed its bytes); foreign keys are checked at the end of the statement, after every insert
# (an erased user is not created again: their late submission writes nothing and is refused).  The source's older jobs
# still unfinished end as superseded: the newest submission is what the source becomes (jobs of the very
# same bytes are left to run: the new job ends as their duplicate or shares their document).
# Several submissions in one statement: each item written as it would be alone.  Only when their jobs and
# sources are all distinct: every part of one statement sees the tables as they were before it, so an item could
# not see (nor supersede) what another item of the same statement writes.  One artifact's bytes named by two items
# are inserted once (the first item's row, as one by one).
# An earlier copy of an item's bytes counts only while no item before it has superseded that copy's job.
_NOT_SUPERSEDED_BEFORE = """
  AND NOT EXISTS (SELECT 1 FROM sup JOIN item x ON x.job = sup.superseder WHERE sup.job_id = o.job_id AND x.n < k.n)"""
_SUBMIT = """
WITH item AS (SELECT * FROM unnest(%(job)s::text[], %(user)s::text[], %(source_id)s::text[], %(artifact_id)s::text[],
                                   %(source_uri)s::text[], %(object_key)s::text[], %(content_type)s::text[],
                                   %(size_bytes)s::bigint[], %(sha256)s::text[], %(filename)s::text[],
                                   %(title)s::text[], %(captured_at)s::timestamptz[], %(submitted_at)s::timestamptz[],
                                   %(producer)s::text[], %(attributes)s::jsonb[], %(request_hash)s::text[])
              WITH ORDINALITY AS i(job, usr, source_id, artifact_id, source_uri, object_key, content_type, size_bytes,
                                   sha256, filename, title, captured_at, submitted_at, producer, attributes,
                                   request_hash, n)),
known AS (SELECT i.*, NOT EXISTS (SELECT 1 FROM jobs WHERE job_id = i.job) AS new_job,
                 EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = i.usr
                         AND NOT EXISTS (SELECT 1 FROM users u WHERE u.user_id = e.user_id)) AS erased
          FROM item i),
fresh AS (SELECT * FROM known WHERE new_job AND NOT erased),
u AS (INSERT INTO users (user_id) SELECT DISTINCT usr FROM fresh ON CONFLICT (user_id) DO NOTHING),
a AS (INSERT INTO artifacts (artifact_id, user_id, source_id, source_uri, object_key, content_type, size_bytes,
                             sha256, filename, title, captured_at, submitted_at, producer, attributes)
      SELECT DISTINCT ON (artifact_id) artifact_id, usr, source_id, source_uri, object_key, content_type, size_bytes,
             sha256, filename, title, captured_at, submitted_at, producer, attributes
      FROM fresh WHERE artifact_id IS NOT NULL ORDER BY artifact_id, n
      ON CONFLICT (artifact_id) DO UPDATE SET raw_purged_at = NULL
      WHERE artifacts.raw_purged_at IS NOT NULL AND artifacts.user_id = EXCLUDED.user_id),
j AS (INSERT INTO jobs (job_id, user_id, artifact_id, status, source_uri, title, source_id, request_hash)
      SELECT job, usr, artifact_id, 'queued', source_uri, title, source_id, request_hash FROM fresh ORDER BY n
      ON CONFLICT (job_id) DO NOTHING RETURNING job_id, user_id, source_id, artifact_id),
st AS (INSERT INTO job_stages (job_id, stage, status) SELECT j.job_id, s, 'pending' FROM j,
       unnest(%(stages)s::text[]) AS s),
ob AS (INSERT INTO outbox (topic, key, value, headers, job_id, lease_until)
       SELECT m.topic, m.key, m.value, m.headers, j.job_id, now() + make_interval(secs => %(lease)s::float8)
       FROM unnest(%(ob_job)s::text[], %(topics)s::text[], %(keys)s::bytea[], %(values)s::bytea[],
                   %(headers)s::jsonb[]) WITH ORDINALITY AS m(job, topic, key, value, headers, n)
       JOIN j ON j.job_id = m.job ORDER BY m.n RETURNING id, job_id),
ev AS (INSERT INTO job_events (job_id, stage, status) SELECT j.job_id, 'gateway', 'queued' FROM j),
sup AS (UPDATE jobs o SET status = 'superseded', superseded_by = j.job_id, finished_at = now(), updated_at = now()
        FROM j WHERE o.user_id = j.user_id AND o.source_id = j.source_id AND o.job_id <> j.job_id
          AND o.status IN ('queued', 'running')
          AND (j.artifact_id IS NULL OR o.artifact_id IS DISTINCT FROM j.artifact_id)
        RETURNING o.job_id, j.job_id AS superseder),
sup_st AS (UPDATE job_stages s SET status = 'skipped', detail = %(superseded)s FROM sup
           WHERE s.job_id = sup.job_id AND s.status IN ('pending', 'running', 'retrying') RETURNING 1),
sup_ev AS (INSERT INTO job_events (job_id, stage, status, detail)
           SELECT sup.job_id, 'job', 'superseded', %(superseded)s FROM sup)
SELECT EXISTS (SELECT 1 FROM j WHERE j.job_id = k.job), k.new_job AND k.erased,
       (SELECT artifact_id FROM jobs WHERE job_id = k.job), (SELECT request_hash FROM jobs WHERE job_id = k.job),
       (SELECT array_agg(id ORDER BY id) FROM ob WHERE ob.job_id = k.job),
       (""" + _ORIGINAL.format(user="k.usr", artifact="k.artifact_id", job="k.job", also=_NOT_SUPERSEDED_BEFORE) + """)
FROM known k ORDER BY k.n
"""


class PostgresIntake(PgRole):
    """What comes in: an artifact or URL with its job and outgoing messages, in one transaction."""

    def submit(self, artifact: ArtifactRecord, job_id: str, outbox: Sequence[OutboxMessage], *,
               request_hash: str | None = None, lease_s: float | None = None) -> SubmitResult:
        """In ONE transaction: create the user when missing, insert the artifact (kept once when the
        same bytes come again), create the job with its stages pending, queue ``outbox`` (leased to the
        caller for ``lease_s`` when given) and log ``("gateway", "queued")``.  An existing ``job_id``
        changes nothing and gives ``created=False`` (:class:`IdempotencyConflict` when it was created
        for another ``request_hash``)."""
        return self._submit(artifact.user_id, job_id, outbox, artifact=artifact, stages=FILE_STAGES,
                            request_hash=request_hash, lease_s=lease_s)

    def register_external(self, artifact: ArtifactRecord, job_id: str) -> SubmitResult:
        """Same as :meth:`submit` without outbox rows: for artifacts published straight to Kafka.
        A job of a source deleted after ``artifact.submitted_at`` is not created again
        (``created=False`` and no job): the event is left over from the deletion."""
        return self._register(artifact, job_id, (), guard_deleted=True)

    def request_url(self, user_id: str, job_id: str, url: str, title: str | None,
                    outbox: Sequence[OutboxMessage], *, request_hash: str | None = None,
                    lease_s: float | None = None) -> SubmitResult:
        """In ONE transaction: create a URL job (no artifact until the fetcher stores the page, stages
        fetch, extract, chunk and embed pending), queue ``outbox`` and log ``("gateway", "queued")``."""
        return self._submit(user_id, job_id, outbox, source_uri=url, title=title, stages=URL_STAGES,
                            request_hash=request_hash, lease_s=lease_s)

    def submit_many(self, submissions: Sequence[tuple[ArtifactRecord, str, Sequence[OutboxMessage], str | None]], *,
                    lease_s: float | None = None) -> list[SubmitResult | Exception]:
        """:meth:`submit` of several ``(artifact, job_id, outbox, request_hash)`` in one transaction, in source
        order (two batches touching the same sources never wait on each other in a circle): one statement for
        the whole batch when its jobs and sources are distinct (an import's), else one each, sent at once.  When
        one cannot be written (its user erased meanwhile) each is submitted on its own."""
        if not submissions:
            return []
        order = sorted(range(len(submissions)), key=lambda i: (submissions[i][0].source_id, i))
        params = [self._params(a.user_id, job, outbox, artifact=a, stages=FILE_STAGES, request_hash=rh,
                               lease_s=lease_s) for a, job, outbox, rh in (submissions[i] for i in order)]
        out: list[SubmitResult | Exception] = [IdempotencyConflict("unreachable")] * len(submissions)
        distinct = len({p["job"] for p in params}) == len({p["source_id"] for p in params}) == len(params)
        try:
            if distinct:
                with self._pool.connection() as conn:
                    rows = conn.execute(_SUBMIT, self._many(params)).fetchall()
            else:  # the later of two items of one source supersedes the earlier: one statement each, in order
                rows = self._one_trip([(_SUBMIT, self._many([p])) for p in params])
        except psycopg.errors.ForeignKeyViolation:
            for i, (a, job, outbox, rh) in enumerate(submissions):
                try:
                    out[i] = self.submit(a, job, outbox, request_hash=rh, lease_s=lease_s)
                except (UnknownUser, IdempotencyConflict) as exc:
                    out[i] = exc
            return out
        for i, row in zip(order, rows, strict=True):
            a, job, _outbox, rh = submissions[i]
            try:
                out[i] = self._result(row, a.user_id, job, a, rh, lease_s)
            except (UnknownUser, IdempotencyConflict) as exc:
                out[i] = exc
        return out

    def _submit(self, user_id: str, job_id: str, outbox: Sequence[OutboxMessage], *,
                artifact: ArtifactRecord | None = None, source_uri: str | None = None, title: str | None = None,
                stages: Sequence[str], request_hash: str | None, lease_s: float | None = None) -> SubmitResult:
        """The whole submission in one statement (one round trip): nothing is written when the job exists
        already (an idempotent retry), and the row returned says which case it was."""
        params = self._params(user_id, job_id, outbox, artifact=artifact, source_uri=source_uri, title=title,
                              stages=stages, request_hash=request_hash, lease_s=lease_s)
        try:
            with self._pool.connection() as conn:
                row = conn.execute(_SUBMIT, self._many([params])).fetchone()
        except psycopg.errors.ForeignKeyViolation as exc:  # the user was erased meanwhile
            raise UnknownUser(f"user {user_id!r} does not exist (erased?)") from exc
        return self._result(row, user_id, job_id, artifact, request_hash, lease_s)

    @staticmethod
    def _result(row: Any, user_id: str, job_id: str, a: ArtifactRecord | None, request_hash: str | None,
                lease_s: float | None) -> SubmitResult:
        """What the row of :data:`_SUBMIT` says became of the submission."""
        assert row is not None
        created, erased, existing_artifact, existing_hash, queued, original = row
        if erased:
            raise UnknownUser(f"user {user_id!r} was erased")
        if created:
            return SubmitResult(job_id=job_id, artifact_id=a.artifact_id if a else "", created=True,
                                leased=tuple(queued or ()) if lease_s is not None else (), original_job=original)
        if request_hash is not None and existing_hash is not None and existing_hash != request_hash:
            raise IdempotencyConflict("this Idempotency-Key was already used for a request with other content; "
                                      "send new content with a new key")
        return SubmitResult(job_id=job_id, artifact_id=existing_artifact or (a.artifact_id if a else ""),
                            created=False)

    @staticmethod
    def _many(params: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The parameters of :data:`_SUBMIT`: each item's :meth:`_params` as columns, their messages flattened."""
        columns = ("job", "user", "source_id", "artifact_id", "source_uri", "object_key", "content_type", "size_bytes",
                   "sha256", "filename", "title", "captured_at", "submitted_at", "producer", "attributes",
                   "request_hash")
        many: dict[str, Any] = {c: [p[c] for p in params] for c in columns}
        for c in ("topics", "keys", "values", "headers"):
            many[c] = [v for p in params for v in p[c]]
        many["ob_job"] = [p["job"] for p in params for _ in p["topics"]]
        first = params[0]
        many.update(stages=first["stages"], lease=first["lease"], superseded=first["superseded"])
        return many

    @staticmethod
    def _params(user_id: str, job_id: str, outbox: Sequence[OutboxMessage], *,
                artifact: ArtifactRecord | None = None, source_uri: str | None = None, title: str | None = None,
                stages: Sequence[str], request_hash: str | None, lease_s: float | None = None) -> dict[str, Any]:
        source_id = artifact.source_id if artifact is not None else \
            ids.source_id(user_id, (source_uri or "").split("#", 1)[0].strip())  # a URL without its fragment
        a = artifact
        params = {
            "job": job_id, "user": user_id, "source_id": source_id, "stages": list(stages),
            "source_uri": a.source_uri if a else source_uri, "title": a.title if a else title,
            "request_hash": request_hash, "artifact_id": a.artifact_id if a else None,
            "lease": None if lease_s is None else float(lease_s),
            "object_key": a.object_key if a else None, "content_type": a.content_type if a else None,
            "size_bytes": a.size_bytes if a else None, "sha256": a.sha256 if a else None,
            "filename": a.filename if a else None, "captured_at": a.captured_at if a else None,
            "submitted_at": a.submitted_at if a else None, "producer": a.producer if a else None,
            "attributes": Jsonb(dict(a.attributes)) if a else None,
            "topics": [m.topic for m in outbox], "keys": [m.key for m in outbox],
            "values": [m.value for m in outbox], "headers": [_encode_headers(m.headers) for m in outbox],
            "superseded": SUPERSEDED_DETAIL,
        }
        return params

    @staticmethod
    def _supersede_older(conn: psycopg.Connection[Any], user_id: str, source_id: str, job_id: str,
                         artifact_id: str | None) -> None:
        """End the source's older unfinished jobs (of other bytes) as superseded by ``job_id`` (see _SUBMIT)."""
        conn.execute(
            """
            WITH sup AS (UPDATE jobs o SET status = 'superseded', superseded_by = %(job)s, finished_at = now(),
                                           updated_at = now()
                         WHERE o.user_id = %(user)s AND o.source_id = %(source)s AND o.job_id <> %(job)s
                           AND o.status IN ('queued', 'running')
                           AND (%(artifact)s::text IS NULL OR o.artifact_id IS DISTINCT FROM %(artifact)s)
                         RETURNING o.job_id),
            st AS (UPDATE job_stages s SET status = 'skipped', detail = %(detail)s FROM sup
                   WHERE s.job_id = sup.job_id AND s.status IN ('pending', 'running', 'retrying') RETURNING 1)
            INSERT INTO job_events (job_id, stage, status, detail) SELECT job_id, 'job', 'superseded', %(detail)s
            FROM sup
            """, {"user": user_id, "source": source_id, "job": job_id, "artifact": artifact_id,
                  "detail": SUPERSEDED_DETAIL})

    def attach_artifact(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Record the artifact a URL job fetched and point the job at it (same user only)."""
        with self._tx() as conn:
            row = conn.execute("SELECT 1 FROM jobs WHERE job_id = %s AND user_id = %s FOR UPDATE",
                               (job_id, artifact.user_id)).fetchone()
            if row is None:
                return False
            self._insert_artifact(conn, artifact)
            conn.execute("UPDATE jobs SET artifact_id = %s, source_id = %s, updated_at = now() WHERE job_id = %s",
                         (artifact.artifact_id, artifact.source_id, job_id))
        return True

    def _register(self, artifact: ArtifactRecord | None, job_id: str, outbox: Sequence[OutboxMessage], *,
                  user_id: str | None = None, source_uri: str | None = None, title: str | None = None,
                  stages: Sequence[str] = FILE_STAGES, guard_deleted: bool = False,
                  request_hash: str | None = None) -> SubmitResult:
        owner = artifact.user_id if artifact is not None else user_id
        assert owner is not None
        # A URL's source is the URL without its fragment (as the fetcher names the page it stores).
        job_source = artifact.source_id if artifact is not None else \
            ids.source_id(owner, (source_uri or "").split("#", 1)[0].strip())
        with self._pool.connection() as conn:
            with conn.transaction() as tx:
                if guard_deleted and artifact is not None and self._left_over(conn, artifact, job_id):
                    raise psycopg.Rollback(tx)
                if conn.execute("SELECT 1 FROM erased_users e WHERE e.user_id = %s AND NOT EXISTS "
                                "(SELECT 1 FROM users u WHERE u.user_id = e.user_id) AND NOT EXISTS "
                                "(SELECT 1 FROM jobs WHERE job_id = %s)", (owner, job_id)).fetchone():
                    raise UnknownUser(f"user {owner!r} was erased")
                self._ensure_user(conn, owner, None)
                if artifact is not None:
                    self._insert_artifact(conn, artifact)
                created = conn.execute(
                    "INSERT INTO jobs (job_id, user_id, artifact_id, status, source_uri, title, source_id, "
                    "request_hash) VALUES (%s, %s, %s, 'queued', %s, %s, %s, %s) "
                    "ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
                    (job_id, owner, artifact.artifact_id if artifact else None,
                     artifact.source_uri if artifact else source_uri, artifact.title if artifact else title,
                     job_source, request_hash),
                ).fetchone()
                if created is None:
                    # Idempotent resubmission: undo the user/artifact inserts too, nothing changes.
                    raise psycopg.Rollback(tx)
                conn.execute(
                    "INSERT INTO job_stages (job_id, stage, status) "
                    "SELECT %s, s, 'pending' FROM unnest(%s::text[]) AS s",
                    (job_id, list(stages)),
                )
                if outbox:
                    with conn.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO outbox (topic, key, value, headers, job_id) "
                            "VALUES (%s, %s, %s, %s, %s)",
                            [(m.topic, m.key, m.value, _encode_headers(m.headers), job_id) for m in outbox],
                        )
                self._event(conn, job_id, "gateway", "queued", None, None)
                self._supersede_older(conn, owner, job_source, job_id, artifact.artifact_id if artifact else None)
                return SubmitResult(job_id=job_id, artifact_id=artifact.artifact_id if artifact else "",
                                    created=True)
            existing = conn.execute("SELECT artifact_id, request_hash FROM jobs WHERE job_id = %s",
                                    (job_id,)).fetchone()
        if existing is not None and request_hash is not None and existing[1] is not None \
                and existing[1] != request_hash:
            raise IdempotencyConflict("this Idempotency-Key was already used for a request with other content; "
                                      "send new content with a new key")
        fallback = artifact.artifact_id if artifact else ""
        return SubmitResult(job_id=job_id, artifact_id=(existing[0] if existing else None) or fallback,
                            created=False)
