"""The Postgres implementation of :class:`secondbrain.ports.MetadataStore`.

Conventions of the event log (``job_events``): stage transitions are recorded with the
stage name and the new stage status; the gateway records ``("gateway", "queued")`` when
a job is created and ``("gateway", "requeued")`` when :meth:`requeue_unfinished` queues
it again; job-level endings are recorded with the stage ``"job"``.

Jobs that have finished (succeeded, failed, duplicate) never change again: a replayed
or late stage event for them is ignored and leaves no event behind.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from secondbrain.ports import (
    FILE_STAGES,
    STAGES,
    URL_STAGES,
    ApiKeyInfo,
    ArtifactRecord,
    DocumentRecord,
    ForeignConversation,
    JobView,
    OutboxMessage,
    OutboxRow,
    SourceView,
    StageView,
    SubmitResult,
    Turn,
)
from secondbrain.stores.migrations import load_migrations

__all__ = ["SUBMITTED_TOPIC_SUFFIXES", "PostgresMetadataStore"]

# Outbox rows whose topic ends with one of these carry a job's original submission (an
# artifact or a URL request); they are what requeue_unfinished publishes again.
SUBMITTED_TOPIC_SUFFIXES = ("artifacts.submitted", "urls.requested")

# Arbitrary but fixed key of the advisory lock serialising migrations across processes.
_MIGRATION_LOCK_KEY = 0x5EC0_B7A1_0001

_FINISHED = ("succeeded", "failed", "duplicate")

T = TypeVar("T")

_ARTIFACT_INSERT = """
    INSERT INTO artifacts (artifact_id, user_id, source_id, source_uri, object_key, content_type,
                           size_bytes, sha256, filename, title, captured_at, submitted_at, producer,
                           attributes)
    VALUES (%(artifact_id)s, %(user_id)s, %(source_id)s, %(source_uri)s, %(object_key)s,
            %(content_type)s, %(size_bytes)s, %(sha256)s, %(filename)s, %(title)s, %(captured_at)s,
            %(submitted_at)s, %(producer)s, %(attributes)s)
    ON CONFLICT (artifact_id) DO NOTHING
"""

_DOCUMENT_COLUMNS = """
    d.document_id, d.user_id, d.artifact_id, d.source_id, d.title, d.modality, d.content_type,
    d.captured_at, d.captured_at_source, d.ingested_at, d.char_count, d.chunk_count, d.metadata,
    d.version, d.superseded_at
"""


def _encode_headers(headers: Sequence[tuple[str, bytes]]) -> Jsonb:
    return Jsonb([[name, base64.b64encode(value).decode("ascii")] for name, value in headers])


def _decode_headers(raw: list[list[str]] | None) -> tuple[tuple[str, bytes], ...]:
    return tuple((name, base64.b64decode(value)) for name, value in raw or ())


def _key_hash(secret: str) -> bytes:
    """API keys are long random strings: a plain SHA-256 is enough (no password stretching needed)."""
    return hashlib.sha256(secret.encode()).digest()


def _document(row: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord(
        document_id=row["document_id"], user_id=row["user_id"], artifact_id=row["artifact_id"],
        source_id=row["source_id"], title=row["title"], modality=row["modality"],
        content_type=row["content_type"], captured_at=row["captured_at"],
        captured_at_source=row["captured_at_source"], ingested_at=row["ingested_at"],
        char_count=row["char_count"], chunk_count=row["chunk_count"], metadata=dict(row["metadata"] or {}),
        version=row["version"], superseded_at=row["superseded_at"],
    )


def _configure(conn: psycopg.Connection[Any]) -> None:
    # One time zone for every session so timestamps read back identically everywhere.
    conn.execute("SET TIME ZONE 'UTC'")


class PostgresMetadataStore:
    """Users, artifacts, jobs, documents and the outbox in PostgreSQL (psycopg 3 pool).

    ``dsn`` is any libpq connection string or URI.  The pool is opened on construction;
    connections are made in the background, so a database that is not up yet only makes
    calls (and :meth:`check`) fail until it is.  Call :meth:`migrate` once at start-up.
    """

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 8) -> None:
        """Create and open the connection pool (autocommit connections; transactions are explicit)."""
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=_configure,
            # A database restart must not hand out dead connections.
            check=ConnectionPool.check_connection,
            open=False,
            name="secondbrain-metadata",
        )
        self._pool.open()

    # ------------------------------------------------------------------ lifecycle

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

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn, creating the conversation on first use (another user's id is refused)."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO conversations (conversation_id, user_id) VALUES (%s, %s) "
                "ON CONFLICT (conversation_id) DO NOTHING", (conversation_id, user_id))
            owner = conn.execute("SELECT user_id FROM conversations WHERE conversation_id = %s FOR UPDATE",
                                 (conversation_id,)).fetchone()
            if owner is None or owner[0] != user_id:
                raise ForeignConversation("this conversation id belongs to someone else; start a new one")
            conn.execute("INSERT INTO conversation_turns (conversation_id, role, content, meta) "
                         "VALUES (%s, %s, %s, %s)", (conversation_id, role, content, Jsonb(dict(meta or {}))))
            conn.execute("UPDATE conversations SET updated_at = now() WHERE conversation_id = %s",
                         (conversation_id,))

    def get_turns(self, user_id: str, conversation_id: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns of the user's conversation, oldest first."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                """
                SELECT * FROM (
                    SELECT t.id, t.role, t.content, t.meta, t.created_at FROM conversation_turns t
                    JOIN conversations c ON c.conversation_id = t.conversation_id
                    WHERE t.conversation_id = %s AND c.user_id = %s
                    ORDER BY t.id DESC LIMIT %s
                ) last ORDER BY id
                """,
                (conversation_id, user_id, max(0, limit)),
            ).fetchall()
        return [Turn(role=r["role"], content=r["content"], created_at=r["created_at"], meta=dict(r["meta"] or {}))
                for r in rows]

    # ------------------------------------------------------------------ API keys

    def create_api_key(self, user_id: str, name: str) -> tuple[ApiKeyInfo, str]:
        """A new key ``sb_<id>_<secret>`` for an existing user; only its SHA-256 is stored."""
        key_id = secrets.token_hex(6)
        secret = f"sb_{key_id}_{secrets.token_urlsafe(32)}"
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is None:
                raise KeyError(f"unknown user {user_id!r}: create it first")
            row = conn.execute(
                "INSERT INTO api_keys (key_id, user_id, name, secret_hash) VALUES (%s, %s, %s, %s) "
                "RETURNING created_at", (key_id, user_id, name, _key_hash(secret))).fetchone()
        assert row is not None
        return ApiKeyInfo(key_id=key_id, user_id=user_id, name=name, created_at=row[0]), secret

    def list_api_keys(self, user_id: str) -> list[ApiKeyInfo]:
        """The user's keys, newest first."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("SELECT key_id, user_id, name, created_at, last_used_at, revoked_at FROM api_keys "
                               "WHERE user_id = %s ORDER BY created_at DESC, key_id", (user_id,)).fetchall()
        return [ApiKeyInfo(**r) for r in rows]

    def revoke_api_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's keys (idempotent); ``False`` for another user's or unknown key."""
        with self._pool.connection() as conn:
            row = conn.execute("UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE key_id = %s AND user_id = %s RETURNING key_id", (key_id, user_id)).fetchone()
        return row is not None

    def authenticate(self, secret: str) -> str | None:
        """The owner of a live key, or ``None``; records when it was last used (at most once a minute)."""
        if not secret.startswith("sb_") or len(secret) > 200:
            return None
        with self._pool.connection() as conn:
            row = conn.execute(
                "UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                "interval '1 minute' THEN now() ELSE last_used_at END "
                "WHERE secret_hash = %s AND revoked_at IS NULL RETURNING user_id", (_key_hash(secret),)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()

    def __enter__(self) -> PostgresMetadataStore:
        """Use the store as a context manager that closes the pool on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the pool."""
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def migrate(self) -> list[int]:
        """Apply pending versioned migrations; return the versions applied now.

        Each migration runs in its own transaction that first takes a transaction-scoped
        advisory lock, so concurrent starters wait for each other and then see the
        version as applied instead of racing.
        """
        applied_now: list[int] = []
        for migration in load_migrations():
            with self._tx() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version integer PRIMARY KEY, name text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())"
                )
                done = conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)
                ).fetchone()
                if done is not None:
                    continue
                # No parameters: psycopg sends the file as one simple query, several statements allowed.
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
                applied_now.append(migration.version)
        return applied_now

    def check(self) -> None:
        """Raise if the database does not answer within a few seconds (readiness probe)."""
        with self._pool.connection(timeout=5.0) as conn, conn.transaction():
            conn.execute("SELECT set_config('statement_timeout', '2000', true)")
            conn.execute("SELECT 1").fetchone()

    # ------------------------------------------------------------------ users

    def ensure_user(self, user_id: str, display_name: str | None = None) -> None:
        """Create the user when missing (a display name fills in a missing one, never overwrites)."""
        with self._pool.connection() as conn:
            self._ensure_user(conn, user_id, display_name)

    @staticmethod
    def _ensure_user(conn: psycopg.Connection[Any], user_id: str, display_name: str | None) -> None:
        conn.execute(
            "INSERT INTO users (user_id, display_name) VALUES (%s, %s) "
            "ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name "
            "WHERE users.display_name IS NULL AND EXCLUDED.display_name IS NOT NULL",
            (user_id, display_name),
        )

    def user_exists(self, user_id: str) -> bool:
        """Whether the user is known."""
        with self._pool.connection() as conn:
            return conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is not None

    # ------------------------------------------------------------------ submission

    def submit(self, artifact: ArtifactRecord, job_id: str, outbox: Sequence[OutboxMessage]) -> SubmitResult:
        """In ONE transaction: create the user when missing, insert the artifact (kept once when the
        same bytes come again), create the job with its stages pending, queue ``outbox`` and log
        ``("gateway", "queued")``.  An existing ``job_id`` changes nothing and gives ``created=False``."""
        return self._register(artifact, job_id, outbox)

    def register_external(self, artifact: ArtifactRecord, job_id: str) -> SubmitResult:
        """Same as :meth:`submit` without outbox rows: for artifacts published straight to Kafka."""
        return self._register(artifact, job_id, ())

    def request_url(self, user_id: str, job_id: str, url: str, title: str | None,
                    outbox: Sequence[OutboxMessage]) -> SubmitResult:
        """In ONE transaction: create a URL job (no artifact until the fetcher stores the page, stages
        fetch, extract, chunk and embed pending), queue ``outbox`` and log ``("gateway", "queued")``."""
        return self._register(None, job_id, outbox, user_id=user_id, source_uri=url, title=title,
                              stages=URL_STAGES)

    @staticmethod
    def _insert_artifact(conn: psycopg.Connection[Any], artifact: ArtifactRecord) -> None:
        conn.execute(_ARTIFACT_INSERT, {
            "artifact_id": artifact.artifact_id, "user_id": artifact.user_id,
            "source_id": artifact.source_id, "source_uri": artifact.source_uri,
            "object_key": artifact.object_key, "content_type": artifact.content_type,
            "size_bytes": artifact.size_bytes, "sha256": artifact.sha256,
            "filename": artifact.filename, "title": artifact.title,
            "captured_at": artifact.captured_at, "submitted_at": artifact.submitted_at,
            "producer": artifact.producer, "attributes": Jsonb(dict(artifact.attributes)),
        })

    def _register(self, artifact: ArtifactRecord | None, job_id: str, outbox: Sequence[OutboxMessage], *,
                  user_id: str | None = None, source_uri: str | None = None, title: str | None = None,
                  stages: Sequence[str] = FILE_STAGES) -> SubmitResult:
        owner = artifact.user_id if artifact is not None else user_id
        assert owner is not None
        with self._pool.connection() as conn:
            with conn.transaction() as tx:
                self._ensure_user(conn, owner, None)
                if artifact is not None:
                    self._insert_artifact(conn, artifact)
                created = conn.execute(
                    "INSERT INTO jobs (job_id, user_id, artifact_id, status, source_uri, title) "
                    "VALUES (%s, %s, %s, 'queued', %s, %s) "
                    "ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
                    (job_id, owner, artifact.artifact_id if artifact else None,
                     artifact.source_uri if artifact else source_uri, artifact.title if artifact else title),
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
                return SubmitResult(job_id=job_id, artifact_id=artifact.artifact_id if artifact else "",
                                    created=True)
            existing = conn.execute("SELECT artifact_id FROM jobs WHERE job_id = %s", (job_id,)).fetchone()
        fallback = artifact.artifact_id if artifact else ""
        return SubmitResult(job_id=job_id, artifact_id=(existing[0] if existing else None) or fallback,
                            created=False)

    def attach_artifact(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Record the artifact a URL job fetched and point the job at it (same user only)."""
        with self._tx() as conn:
            row = conn.execute("SELECT 1 FROM jobs WHERE job_id = %s AND user_id = %s FOR UPDATE",
                               (job_id, artifact.user_id)).fetchone()
            if row is None:
                return False
            self._insert_artifact(conn, artifact)
            conn.execute("UPDATE jobs SET artifact_id = %s, updated_at = now() WHERE job_id = %s",
                         (artifact.artifact_id, job_id))
        return True

    def find_original_job(self, user_id: str, artifact_id: str, job_id: str) -> str | None:
        """The earliest other job of the user whose artifact is the same bytes, that got past
        extraction (its document exists and is the current version of its source)."""
        with self._pool.connection() as conn:
            row = conn.execute(
                """
                SELECT j.job_id FROM jobs j
                JOIN documents d ON d.artifact_id = j.artifact_id AND d.user_id = j.user_id
                WHERE j.user_id = %s AND j.artifact_id = %s AND j.job_id <> %s
                  AND j.status IN ('succeeded', 'running') AND d.superseded_at IS NULL
                ORDER BY j.created_at, j.job_id LIMIT 1
                """,
                (user_id, artifact_id, job_id),
            ).fetchone()
        return row[0] if row else None

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

    def is_superseded(self, user_id: str, document_id: str) -> bool:
        """Whether the document is gone or a newer version of its source exists."""
        with self._pool.connection() as conn:
            row = conn.execute(
                """
                SELECT d.superseded_at IS NOT NULL OR EXISTS (
                    SELECT 1 FROM documents n WHERE n.user_id = d.user_id AND n.source_id = d.source_id
                      AND n.version > d.version)
                FROM documents d WHERE d.document_id = %s AND d.user_id = %s
                """,
                (document_id, user_id),
            ).fetchone()
        return True if row is None else bool(row[0])

    # ------------------------------------------------------------------ outbox

    def claim_outbox(self, limit: int, lease_seconds: float = 30.0) -> list[OutboxRow]:
        """Lease up to ``limit`` unpublished messages, oldest first; rows leased by others are skipped."""
        if limit <= 0:
            return []
        with self._pool.connection() as conn:
            # The CTE runs once; SKIP LOCKED plus the re-checked lease condition keeps two
            # concurrent claimers from ever leasing the same row.
            rows = conn.execute(
                """
                WITH picked AS (
                    SELECT id FROM outbox
                    WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY id LIMIT %s
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE outbox o SET lease_until = now() + make_interval(secs => %s)
                FROM picked WHERE o.id = picked.id
                RETURNING o.id, o.topic, o.key, o.value, o.headers, o.attempts
                """,
                (limit, float(lease_seconds)),
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
                  AND (right(o.topic, %s) = %s OR right(o.topic, %s) = %s)
                RETURNING o.job_id
                """,
                (len(SUBMITTED_TOPIC_SUFFIXES[0]), SUBMITTED_TOPIC_SUFFIXES[0],
                 len(SUBMITTED_TOPIC_SUFFIXES[1]), SUBMITTED_TOPIC_SUFFIXES[1]),
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

    # ------------------------------------------------------------------ stage transitions

    @staticmethod
    def _event(conn: psycopg.Connection[Any], job_id: str, stage: str | None, status: str,
               detail: str | None, attempt: int | None) -> None:
        conn.execute(
            "INSERT INTO job_events (job_id, stage, status, detail, attempt) VALUES (%s, %s, %s, %s, %s)",
            (job_id, stage, status, detail, attempt),
        )

    def _transition(self, user_id: str, job_id: str, apply: Callable[[psycopg.Connection[Any]], T]) -> T | None:
        """Run ``apply`` with the job row locked, unless the job is unknown, another user's, or finished.

        The row lock serialises transitions of one job, so two stages finishing at once
        cannot both miss that the other succeeded.
        """
        with self._tx() as conn:
            row = conn.execute("SELECT status FROM jobs WHERE job_id = %s AND user_id = %s FOR UPDATE",
                               (job_id, user_id)).fetchone()
            if row is None or row[0] in _FINISHED:
                return None
            return apply(conn)

    @staticmethod
    def _mark_running(conn: psycopg.Connection[Any], job_id: str) -> None:
        conn.execute("UPDATE jobs SET status = 'running', updated_at = now() WHERE job_id = %s", (job_id,))

    @staticmethod
    def _require_stage(stage: str) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {STAGES}")

    def stage_started(self, user_id: str, job_id: str, stage: str, attempt: int) -> None:
        """Mark ``stage`` running with ``attempt`` (the job becomes running)."""
        self._require_stage(stage)

        def apply(conn: psycopg.Connection[Any]) -> None:
            conn.execute(
                "UPDATE job_stages SET status = 'running', attempts = %s, "
                "started_at = coalesce(started_at, now()), finished_at = NULL "
                "WHERE job_id = %s AND stage = %s",
                (attempt, job_id, stage),
            )
            self._mark_running(conn, job_id)
            self._event(conn, job_id, stage, "running", None, attempt)

        self._transition(user_id, job_id, apply)

    def stage_succeeded(self, user_id: str, job_id: str, stage: str, detail: str | None = None) -> None:
        """Mark ``stage`` done; when every stage has succeeded the job succeeds."""
        self._require_stage(stage)

        def apply(conn: psycopg.Connection[Any]) -> None:
            row = conn.execute(
                "UPDATE job_stages SET status = 'succeeded', finished_at = now(), "
                "started_at = coalesce(started_at, now()), detail = coalesce(%s, detail) "
                "WHERE job_id = %s AND stage = %s RETURNING attempts",
                (detail, job_id, stage),
            ).fetchone()
            self._event(conn, job_id, stage, "succeeded", detail, row[0] if row else None)
            left = conn.execute(
                "SELECT count(*) FROM job_stages WHERE job_id = %s AND status <> 'succeeded'", (job_id,),
            ).fetchone()
            if left is not None and left[0] == 0:  # every stage this job has (URL jobs have one more)
                conn.execute(
                    "UPDATE jobs SET status = 'succeeded', error = NULL, finished_at = now(), "
                    "updated_at = now() WHERE job_id = %s",
                    (job_id,),
                )
                self._event(conn, job_id, "job", "succeeded", None, None)
            else:
                self._mark_running(conn, job_id)

        self._transition(user_id, job_id, apply)

    def stage_retrying(self, user_id: str, job_id: str, stage: str, attempt: int, reason: str) -> None:
        """Record a retryable failure of ``stage`` at ``attempt`` (kept as the stage detail)."""
        self._require_stage(stage)

        def apply(conn: psycopg.Connection[Any]) -> None:
            conn.execute(
                "UPDATE job_stages SET status = 'retrying', attempts = %s, detail = %s, "
                "started_at = coalesce(started_at, now()) WHERE job_id = %s AND stage = %s",
                (attempt, reason, job_id, stage),
            )
            self._mark_running(conn, job_id)
            self._event(conn, job_id, stage, "retrying", reason, attempt)

        self._transition(user_id, job_id, apply)

    def job_failed(self, user_id: str, job_id: str, stage: str, reason: str) -> None:
        """Mark the stage and the job failed with ``reason``; stages not yet run become skipped.

        ``stage`` may also name a step outside :data:`STAGES` (e.g. the gateway); then only
        the job and the event log record it.
        """

        def apply(conn: psycopg.Connection[Any]) -> None:
            row = conn.execute(
                "UPDATE job_stages SET status = 'failed', finished_at = now(), detail = %s "
                "WHERE job_id = %s AND stage = %s RETURNING attempts",
                (reason, job_id, stage),
            ).fetchone()
            conn.execute(
                "UPDATE job_stages SET status = 'skipped' WHERE job_id = %s AND status = 'pending'", (job_id,)
            )
            conn.execute(
                "UPDATE jobs SET status = 'failed', error = %s, finished_at = now(), updated_at = now() "
                "WHERE job_id = %s",
                (reason, job_id),
            )
            self._event(conn, job_id, stage, "failed", reason, row[0] if row else None)

        self._transition(user_id, job_id, apply)

    def job_duplicate(self, user_id: str, job_id: str, original_job_id: str) -> None:
        """End the job as a duplicate of ``original_job_id``.

        The stage that found the duplicate (the running one) is marked succeeded, stages that
        had not run are skipped.
        """

        def apply(conn: psycopg.Connection[Any]) -> None:
            detail = f"duplicate of {original_job_id}"
            conn.execute(
                "UPDATE job_stages SET status = 'succeeded', finished_at = now() "
                "WHERE job_id = %s AND status = 'running'",
                (job_id,),
            )
            conn.execute(
                "UPDATE job_stages SET status = 'skipped', detail = %s "
                "WHERE job_id = %s AND status IN ('pending', 'retrying')",
                (detail, job_id),
            )
            conn.execute(
                "UPDATE jobs SET status = 'duplicate', duplicate_of = %s, finished_at = now(), "
                "updated_at = now() WHERE job_id = %s",
                (original_job_id, job_id),
            )
            self._event(conn, job_id, "job", "duplicate", detail, None)

        self._transition(user_id, job_id, apply)

    # ------------------------------------------------------------------ job reads

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        """The user's job with its stages in :data:`STAGES` order, or ``None`` (also for others' jobs)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            job = cur.execute(
                # The extracted title once there is one (as the source list shows), else the submitted one.
                "SELECT j.*, COALESCE(d.title, a.title, j.title) AS title, "
                "COALESCE(a.source_uri, j.source_uri) AS source_uri FROM jobs j "
                "LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id "
                "LEFT JOIN documents d ON d.artifact_id = j.artifact_id AND d.user_id = j.user_id "
                "WHERE j.job_id = %s AND j.user_id = %s",
                (job_id, user_id),
            ).fetchone()
            if job is None:
                return None
            stages = cur.execute(
                "SELECT stage, status, attempts, started_at, finished_at, detail FROM job_stages "
                "WHERE job_id = %s ORDER BY array_position(%s::text[], stage), stage",
                (job_id, list(STAGES)),
            ).fetchall()
        return JobView(
            job_id=job["job_id"], user_id=job["user_id"], artifact_id=job["artifact_id"],
            status=job["status"], error=job["error"], created_at=job["created_at"],
            updated_at=job["updated_at"], finished_at=job["finished_at"],
            stages=[StageView(**s) for s in stages],
            title=job["title"], source_uri=job["source_uri"], duplicate_of=job["duplicate_of"],
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

    # ------------------------------------------------------------------ documents

    def save_document(self, doc: DocumentRecord) -> int:
        """Insert or replace a document (idempotent on ``document_id``); return its version.

        A new document becomes the next version of its source (1 + the highest version there).
        A replay keeps its version and the recorded chunk count (same artifact, same chunks);
        a superseded document saved again (old content uploaded again) becomes the newest
        version.  A row of another user is never overwritten (its version is returned as 0).
        """
        with self._tx() as conn:
            # Serialise versioning per source: two versions of one source never get one number.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (doc.user_id, doc.source_id))
            row = conn.execute(
                """
                INSERT INTO documents (document_id, user_id, artifact_id, source_id, title, modality,
                                       content_type, captured_at, captured_at_source, ingested_at,
                                       char_count, chunk_count, metadata, version)
                VALUES (%(document_id)s, %(user_id)s, %(artifact_id)s, %(source_id)s, %(title)s,
                        %(modality)s, %(content_type)s, %(captured_at)s, %(captured_at_source)s,
                        %(ingested_at)s, %(char_count)s, %(chunk_count)s, %(metadata)s,
                        (SELECT coalesce(max(version), 0) + 1 FROM documents
                         WHERE user_id = %(user_id)s AND source_id = %(source_id)s))
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
                RETURNING version
                """,
                {
                    "document_id": doc.document_id, "user_id": doc.user_id, "artifact_id": doc.artifact_id,
                    "source_id": doc.source_id, "title": doc.title, "modality": doc.modality,
                    "content_type": doc.content_type, "captured_at": doc.captured_at,
                    "captured_at_source": doc.captured_at_source, "ingested_at": doc.ingested_at,
                    "char_count": doc.char_count, "chunk_count": doc.chunk_count,
                    "metadata": Jsonb(dict(doc.metadata)),
                },
            ).fetchone()
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

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0) -> list[SourceView]:
        """One row per job of the user, newest first, with its artifact and (when extracted) document.

        ``captured_at``/``title`` prefer the document's values, ``ingested_at`` is the document's or
        else the job's creation time, ``status`` is the job's.  A URL job not fetched yet has no
        artifact; its ``source_uri`` is the requested URL.
        """
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                """
                SELECT a.source_id, j.artifact_id, d.document_id, j.job_id,
                       coalesce(d.title, a.title, j.title) AS title,
                       coalesce(a.source_uri, j.source_uri, '') AS source_uri,
                       coalesce(a.content_type, '') AS content_type, d.modality,
                       coalesce(a.size_bytes, 0) AS size_bytes, j.status,
                       coalesce(d.captured_at, a.captured_at) AS captured_at,
                       coalesce(d.ingested_at, j.created_at) AS ingested_at, d.chunk_count,
                       d.version, d.superseded_at IS NOT NULL AS superseded, j.error
                FROM jobs j
                LEFT JOIN artifacts a ON a.artifact_id = j.artifact_id AND a.user_id = j.user_id
                LEFT JOIN LATERAL (
                    SELECT * FROM documents d
                    WHERE d.artifact_id = j.artifact_id AND d.user_id = j.user_id
                    ORDER BY d.ingested_at DESC LIMIT 1
                ) d ON true
                WHERE j.user_id = %s
                ORDER BY j.created_at DESC, j.job_id DESC
                LIMIT %s OFFSET %s
                """,
                (user_id, limit, offset),
            ).fetchall()
        for r in rows:
            r["superseded"] = bool(r["superseded"])
        return [SourceView(**r) for r in rows]
