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
import dataclasses
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

from secondbrain import ids
from secondbrain.ports import (
    FILE_STAGES,
    KEY_SCOPES,
    STAGES,
    URL_STAGES,
    ApiKeyInfo,
    ArtifactRecord,
    ConversationInfo,
    DocumentRecord,
    ForeignConversation,
    IndexStatus,
    JobView,
    KeyScope,
    OutboxMessage,
    OutboxRow,
    Principal,
    SigningKey,
    SourceDeletion,
    SourceView,
    StageView,
    SubmitResult,
    Turn,
    UserInfo,
    VectorIndex,
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
    ON CONFLICT (artifact_id) DO UPDATE SET raw_purged_at = NULL
    -- Registered again after retention removed its bytes: whoever registers it stored them again.
    WHERE artifacts.raw_purged_at IS NOT NULL AND artifacts.user_id = EXCLUDED.user_id
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

    def create_api_key(self, user_id: str, name: str, scope: KeyScope = "user") -> tuple[ApiKeyInfo, str]:
        """A new key ``sb_<id>_<secret>`` for an existing user; only its SHA-256 is stored."""
        if scope not in KEY_SCOPES:
            raise ValueError(f"unknown key scope {scope!r}; use one of {', '.join(KEY_SCOPES)}")
        key_id = secrets.token_hex(6)
        secret = f"sb_{key_id}_{secrets.token_urlsafe(32)}"
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is None:
                raise KeyError(f"unknown user {user_id!r}: create it first")
            row = conn.execute(
                "INSERT INTO api_keys (key_id, user_id, name, secret_hash, scope) VALUES (%s, %s, %s, %s, %s) "
                "RETURNING created_at", (key_id, user_id, name, _key_hash(secret), scope)).fetchone()
        assert row is not None
        return ApiKeyInfo(key_id=key_id, user_id=user_id, name=name, created_at=row[0], scope=scope), secret

    def list_api_keys(self, user_id: str) -> list[ApiKeyInfo]:
        """The user's keys, newest first."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("SELECT key_id, user_id, name, created_at, last_used_at, revoked_at, scope "
                               "FROM api_keys WHERE user_id = %s ORDER BY created_at DESC, key_id",
                               (user_id,)).fetchall()
        return [ApiKeyInfo(**r) for r in rows]

    def revoke_api_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's keys (idempotent); ``False`` for another user's or unknown key."""
        with self._pool.connection() as conn:
            row = conn.execute("UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE key_id = %s AND user_id = %s RETURNING key_id", (key_id, user_id)).fetchone()
        return row is not None

    def authenticate(self, secret: str) -> Principal | None:
        """Who a live key acts for, or ``None``; records when it was last used (at most once a minute)."""
        if not secret.startswith("sb_") or len(secret) > 200:
            return None
        with self._pool.connection() as conn:
            row = conn.execute(
                "UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - "
                "interval '1 minute' THEN now() ELSE last_used_at END "
                "WHERE secret_hash = %s AND revoked_at IS NULL RETURNING user_id, key_id, scope",
                (_key_hash(secret),)).fetchone()
        return Principal(user_id=row[0], key_id=row[1], scope=row[2]) if row else None

    def signing_key(self, key_id: str) -> SigningKey | None:
        """A live key by id with its stored hash (the HMAC key of event signatures)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT key_id, user_id, scope, secret_hash FROM api_keys "
                               "WHERE key_id = %s AND revoked_at IS NULL", (key_id,)).fetchone()
        return SigningKey(key_id=row[0], user_id=row[1], scope=row[2], secret_hash=bytes(row[3])) if row else None

    def list_users(self) -> list[UserInfo]:
        """Every user with the number of live keys, oldest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT u.user_id, u.display_name, u.created_at, "
                "count(k.key_id) FILTER (WHERE k.revoked_at IS NULL) "
                "FROM users u LEFT JOIN api_keys k ON k.user_id = u.user_id "
                "GROUP BY u.user_id ORDER BY u.created_at, u.user_id").fetchall()
        return [UserInfo(user_id=r[0], display_name=r[1], created_at=r[2], active_keys=int(r[3])) for r in rows]

    def count_request(self, user_id: str, bucket: str, window_s: int) -> int:
        """One upsert per request: fixed windows aligned to ``window_s``; old windows are pruned
        now and then (1 in 64 calls) so the table stays a few rows per active user."""
        window_s = max(1, int(window_s))
        with self._pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO request_windows (user_id, bucket, window_start, hits) "
                "VALUES (%s, %s, to_timestamp(floor(extract(epoch FROM now()) / %s) * %s), 1) "
                "ON CONFLICT (user_id, bucket, window_start) DO UPDATE SET hits = request_windows.hits + 1 "
                "RETURNING hits", (user_id, bucket, window_s, window_s)).fetchone()
            if secrets.randbelow(64) == 0:
                conn.execute("DELETE FROM request_windows WHERE window_start < now() - make_interval(secs => %s)",
                             (window_s * 2,))
        assert row is not None
        return int(row[0])

    def pending_jobs(self, user_id: str) -> int:
        """Queued or running jobs of the user (served by the partial index on unfinished jobs)."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT count(*) FROM jobs WHERE user_id = %s AND status IN ('queued', 'running')",
                               (user_id,)).fetchone()
        assert row is not None
        return int(row[0])

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
        """Same as :meth:`submit` without outbox rows: for artifacts published straight to Kafka.
        A job of a source deleted after ``artifact.submitted_at`` is not created again
        (``created=False`` and no job): the event is left over from the deletion."""
        return self._register(artifact, job_id, (), guard_deleted=True)

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
                  stages: Sequence[str] = FILE_STAGES, guard_deleted: bool = False) -> SubmitResult:
        owner = artifact.user_id if artifact is not None else user_id
        assert owner is not None
        # A URL's source is the URL without its fragment (as the fetcher names the page it stores).
        job_source = artifact.source_id if artifact is not None else \
            ids.source_id(owner, (source_uri or "").split("#", 1)[0].strip())
        with self._pool.connection() as conn:
            with conn.transaction() as tx:
                if guard_deleted and artifact is not None and self._left_over(conn, artifact, job_id):
                    raise psycopg.Rollback(tx)
                self._ensure_user(conn, owner, None)
                if artifact is not None:
                    self._insert_artifact(conn, artifact)
                created = conn.execute(
                    "INSERT INTO jobs (job_id, user_id, artifact_id, status, source_uri, title, source_id) "
                    "VALUES (%s, %s, %s, 'queued', %s, %s, %s) "
                    "ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
                    (job_id, owner, artifact.artifact_id if artifact else None,
                     artifact.source_uri if artifact else source_uri, artifact.title if artifact else title,
                     job_source),
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
            conn.execute("UPDATE jobs SET artifact_id = %s, source_id = %s, updated_at = now() WHERE job_id = %s",
                         (artifact.artifact_id, artifact.source_id, job_id))
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

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0, *, source_id: str | None = None,
                     modality: str | None = None, status: str | None = None, start: datetime | None = None,
                     end: datetime | None = None) -> list[SourceView]:
        """One row per job of the user, newest first, with its artifact and (when extracted) document.

        ``captured_at``/``title`` prefer the document's values, ``ingested_at`` is the document's or
        else the job's creation time, ``status`` is the job's.  A URL job not fetched yet has no
        artifact; its ``source_uri`` is the requested URL.  ``source_id`` is the source the job was
        submitted as (a copy of another source's bytes keeps its own name); the filters restrict
        to one source (all its versions), one modality, one job status or a captured time in
        [start, end); until extraction tells the captured time, the job's creation time stands in.
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
                       d.version, d.superseded_at IS NOT NULL AS superseded, j.error, a.raw_purged_at
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
                  AND (%(start)s::timestamptz IS NULL
                       OR coalesce(d.captured_at, a.captured_at, j.created_at) >= %(start)s)
                  AND (%(end)s::timestamptz IS NULL
                       OR coalesce(d.captured_at, a.captured_at, j.created_at) < %(end)s)
                ORDER BY j.created_at DESC, j.job_id DESC
                LIMIT %(limit)s OFFSET %(offset)s
                """,
                {"user": user_id, "source": source_id, "modality": modality, "status": status,
                 "start": start, "end": end, "limit": limit, "offset": offset},
            ).fetchall()
        for r in rows:
            r["superseded"] = bool(r["superseded"])
        return [SourceView(**r) for r in rows]

    # ------------------------------------------------------------------ vector indexes

    _INDEX_COLUMNS = ("user_id, version, model, model_id, dense_size, status, created_at, activated_at, retired_at, "
                      "dropped_at, keep_old, points_total, points_done, resume_from, lease_owner, lease_expires_at")

    @staticmethod
    def _lock_indexes(conn: psycopg.Connection[Any], user_id: str) -> None:
        # One writer of a user's index set at a time: "next version" and "the active one" stay unique.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('vector_indexes'), hashtext(%s))", (user_id,))

    def _index_where(self, conn: psycopg.Connection[Any], where: str, params: Sequence[Any]) -> VectorIndex | None:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(f"SELECT {self._INDEX_COLUMNS} FROM vector_indexes WHERE {where}", params).fetchone()
        return VectorIndex(**row) if row else None

    def _insert_index(self, conn: psycopg.Connection[Any], user_id: str, model: str, model_id: str,
                      dense_size: int, status: str, keep_old: bool) -> VectorIndex:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"""
                INSERT INTO vector_indexes (user_id, version, model, model_id, dense_size, status, keep_old,
                                            activated_at)
                VALUES (%(user)s, (SELECT coalesce(max(version), 0) + 1 FROM vector_indexes WHERE user_id = %(user)s),
                        %(model)s, %(model_id)s, %(size)s, %(status)s, %(keep)s,
                        CASE WHEN %(status)s = 'active' THEN now() END)
                RETURNING {self._INDEX_COLUMNS}
                """,
                {"user": user_id, "model": model, "model_id": model_id, "size": dense_size, "status": status,
                 "keep": keep_old}).fetchone()
        assert row is not None
        return VectorIndex(**row)

    def vector_indexes(self, user_id: str | None = None, *, status: IndexStatus | None = None) -> list[VectorIndex]:
        """The user's index versions, oldest first (every user's, by user, when ``None``), optionally one status."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(f"SELECT {self._INDEX_COLUMNS} FROM vector_indexes "
                               "WHERE (%(user)s::text IS NULL OR user_id = %(user)s) "
                               "AND (%(status)s::text IS NULL OR status = %(status)s) ORDER BY user_id, version",
                               {"user": user_id, "status": status}).fetchall()
        return [VectorIndex(**r) for r in rows]

    def ensure_active_index(self, user_id: str, model: str, model_id: str, dense_size: int) -> VectorIndex:
        """The user's active index, created (the next version, normally 1) when the user has none;
        :class:`LookupError` for an unknown user."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as conn:
            found = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if found is not None:
                return found
            self._lock_indexes(conn, user_id)
            found = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if found is not None:
                return found
            if conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is None:
                raise LookupError(f"unknown user {user_id!r}")
            return self._insert_index(conn, user_id, model, model_id, dense_size, "active", False)

    def begin_reindex(self, user_id: str, model: str, model_id: str, dense_size: int, *,
                      keep_old: bool = False) -> VectorIndex:
        """The building index for ``model_id`` (resumed, with ``keep_old`` updated) or a new version."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as conn:
            self._lock_indexes(conn, user_id)
            active = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if active is None:
                raise LookupError(f"user {user_id!r} has no active vector index")
            if active.model_id == model_id:
                raise ValueError(f"{user_id}'s active index v{active.version} already uses {model_id}")
            building = self._index_where(conn, "user_id = %s AND status = 'building'", (user_id,))
            if building is not None:
                if building.model_id != model_id:
                    raise ValueError(f"a re-index of {user_id} to {building.model_id} (v{building.version}) is "
                                     "in progress: let it finish, or cancel it first")
                conn.execute("UPDATE vector_indexes SET keep_old = %s WHERE user_id = %s AND version = %s",
                             (keep_old, user_id, building.version))
                return dataclasses.replace(building, keep_old=keep_old)
            return self._insert_index(conn, user_id, model, model_id, dense_size, "building", keep_old)

    def claim_reindex(self, user_id: str, version: int, owner: str, lease_s: float) -> VectorIndex | None:
        """Lease a building index to ``owner`` (free, expired, or already theirs)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"""
                UPDATE vector_indexes SET lease_owner = %(owner)s,
                       lease_expires_at = now() + make_interval(secs => %(lease)s)
                WHERE user_id = %(user)s AND version = %(version)s AND status = 'building'
                  AND (lease_owner IS NULL OR lease_owner = %(owner)s OR lease_expires_at < now())
                RETURNING {self._INDEX_COLUMNS}
                """, {"owner": owner, "lease": float(lease_s), "user": user_id, "version": version}).fetchone()
        return VectorIndex(**row) if row else None

    def reindex_progress(self, user_id: str, version: int, owner: str, *, done: int, total: int,
                         resume_from: str | None, lease_s: float) -> bool:
        """Record progress and renew ``owner``'s lease; ``False`` when the lease is someone else's now."""
        with self._pool.connection() as conn:
            row = conn.execute(
                """
                UPDATE vector_indexes SET points_done = %(done)s, points_total = %(total)s,
                       resume_from = %(resume)s, lease_expires_at = now() + make_interval(secs => %(lease)s)
                WHERE user_id = %(user)s AND version = %(version)s AND status = 'building'
                  AND lease_owner = %(owner)s
                RETURNING 1
                """, {"done": done, "total": total, "resume": resume_from, "lease": float(lease_s),
                      "user": user_id, "version": version, "owner": owner}).fetchone()
        return row is not None

    def release_reindex(self, user_id: str, version: int, owner: str) -> None:
        """Clear ``owner``'s lease (someone else's is left alone)."""
        with self._pool.connection() as conn:
            conn.execute("UPDATE vector_indexes SET lease_owner = NULL, lease_expires_at = NULL "
                         "WHERE user_id = %s AND version = %s AND lease_owner = %s", (user_id, version, owner))

    def activate_index(self, user_id: str, version: int) -> VectorIndex | None:
        """Switch the user's searched index to the building ``version`` in one transaction."""
        with self._tx() as conn:
            self._lock_indexes(conn, user_id)
            if self._index_where(conn, "user_id = %s AND version = %s AND status = 'building'",
                                 (user_id, version)) is None:
                raise LookupError(f"v{version} is not a building vector index of {user_id!r}")
            with conn.cursor(row_factory=dict_row) as cur:
                old = cur.execute(
                    f"UPDATE vector_indexes SET status = 'retired', retired_at = now() "
                    f"WHERE user_id = %s AND status = 'active' RETURNING {self._INDEX_COLUMNS}", (user_id,)).fetchone()
            conn.execute("UPDATE vector_indexes SET status = 'active', activated_at = now(), lease_owner = NULL, "
                         "lease_expires_at = NULL WHERE user_id = %s AND version = %s", (user_id, version))
        return VectorIndex(**old) if old else None

    def cancel_reindex(self, user_id: str) -> VectorIndex | None:
        """Retire the user's building index unfinished."""
        with self._tx() as conn, conn.cursor(row_factory=dict_row) as cur:
            self._lock_indexes(conn, user_id)
            row = cur.execute(
                f"UPDATE vector_indexes SET status = 'retired', retired_at = now(), lease_owner = NULL, "
                f"lease_expires_at = NULL WHERE user_id = %s AND status = 'building' "
                f"RETURNING {self._INDEX_COLUMNS}", (user_id,)).fetchone()
        return VectorIndex(**row) if row else None

    def index_dropped(self, user_id: str, version: int) -> None:
        """Set ``dropped_at`` on a retired index (idempotent)."""
        with self._pool.connection() as conn:
            conn.execute("UPDATE vector_indexes SET dropped_at = coalesce(dropped_at, now()) "
                         "WHERE user_id = %s AND version = %s AND status = 'retired'", (user_id, version))

    # ------------------------------------------------------------------ data lifecycle

    @staticmethod
    def _left_over(conn: psycopg.Connection[Any], artifact: ArtifactRecord, job_id: str) -> bool:
        """Whether registering ``job_id`` would bring back a source deleted after the artifact was
        submitted.  Takes the source's lock, so a deletion running now either finishes first (and
        is seen here) or starts after this registration commits (and removes it)."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
                     (artifact.user_id, artifact.source_id))
        row = conn.execute(
            "SELECT 1 FROM deleted_sources ds WHERE ds.user_id = %s AND ds.source_id = %s AND ds.deleted_at > %s "
            "AND NOT EXISTS (SELECT 1 FROM jobs WHERE job_id = %s)",
            (artifact.user_id, artifact.source_id, artifact.submitted_at, job_id)).fetchone()
        return row is not None

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
                "WHERE j.user_id = %s AND coalesce(j.source_id, a.source_id) = %s FOR UPDATE OF j",
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
            # Copies of this source's content submitted under another name ended as duplicates of
            # it; once it is gone they are indexed in their own name (while their bytes are kept).
            requeue = sorted(r[0] for r in conn.execute(
                """
                SELECT j.job_id FROM jobs j JOIN artifacts a ON a.artifact_id = j.artifact_id
                WHERE j.user_id = %(user)s AND j.artifact_id = ANY(%(arts)s) AND j.job_id <> ALL(%(jobs)s)
                  AND j.status = 'duplicate' AND a.raw_purged_at IS NULL
                  AND EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = j.job_id
                              AND (right(o.topic, %(n)s) = %(topic)s))
                """, {"user": user_id, "arts": sorted(set(kept) & {r[1] for r in docs}), "jobs": job_ids,
                      "n": len(SUBMITTED_TOPIC_SUFFIXES[0]), "topic": SUBMITTED_TOPIC_SUFFIXES[0]}).fetchall())
            conn.execute("DELETE FROM outbox WHERE job_id = ANY(%s)", (job_ids,))
            conn.execute("DELETE FROM jobs WHERE user_id = %s AND job_id = ANY(%s)", (user_id, job_ids))
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
            # Claim checks of documents not recorded yet (work in flight) live under the same ids.
            cleanup_docs = sorted(set(doc_ids) | {ids.document_id(a) for a in removed})
            row = conn.execute(
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
                {"user": user_id, "source": source_id, "jobs": job_ids, "docs": cleanup_docs,
                 "keys": sorted(r[1] for r in raw), "requeue": requeue}).fetchone()
            assert row is not None
        return SourceDeletion(user_id=user_id, source_id=source_id, deleted_at=row[0], job_ids=_uniq(row[1]),
                              document_ids=_uniq(row[2]), artifact_ids=removed, object_keys=_uniq(row[3]),
                              kept_artifact_ids=kept, requeue_job_ids=_uniq(row[4]))

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
                         "WHERE job_id = ANY(%s) AND right(topic, %s) = %s",
                         (requeued, len(SUBMITTED_TOPIC_SUFFIXES[0]), SUBMITTED_TOPIC_SUFFIXES[0]))
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
            job_ids = [r[0] for r in conn.execute("SELECT job_id FROM jobs WHERE user_id = %s", (user_id,))]
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
                "AND t.table_type = 'BASE TABLE' AND c.table_name <> 'users' ORDER BY c.table_name")]
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

    def list_conversations(self, user_id: str) -> list[ConversationInfo]:
        """The user's conversations with their number of turns, oldest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT c.conversation_id, c.created_at, c.updated_at, count(t.id) FROM conversations c "
                "LEFT JOIN conversation_turns t ON t.conversation_id = c.conversation_id WHERE c.user_id = %s "
                "GROUP BY c.conversation_id ORDER BY c.created_at, c.conversation_id", (user_id,)).fetchall()
        return [ConversationInfo(conversation_id=r[0], created_at=r[1], updated_at=r[2], turns=int(r[3])) for r in rows]

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
                                       OR j.status NOT IN ('succeeded', 'failed', 'duplicate')))
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


def _artifact(row: dict[str, Any]) -> ArtifactRecord:
    return ArtifactRecord(**{**row, "attributes": dict(row["attributes"] or {})})


def _uniq(values: Sequence[str] | None) -> list[str]:
    return sorted(set(values or ()))
