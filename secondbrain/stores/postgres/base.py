"""The Postgres implementation of the metadata ports: the shared pool, migrations and row helpers.

Conventions of the event log (``job_events``): stage transitions are recorded with the
stage name and the new stage status; the gateway records ``("gateway", "queued")`` when
a job is created and ``("gateway", "requeued")`` when :meth:`requeue_unfinished` queues
it again; job-level endings are recorded with the stage ``"job"``.

Jobs that have finished (succeeded, failed, duplicate, superseded) never change again: a replayed
or late stage event for them is ignored and leaves no event behind.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from secondbrain.ports import ArtifactRecord, DocumentRecord
from secondbrain.stages import STAGES
from secondbrain.stores.migrations import Migration, check_known, load_migrations

# Arbitrary but fixed key of the advisory lock serialising migrations across processes.
_MIGRATION_LOCK_KEY = 0x5EC0_B7A1_0001

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


def _artifact(row: dict[str, Any]) -> ArtifactRecord:
    return ArtifactRecord(**{**row, "attributes": dict(row["attributes"] or {})})


def _uniq(values: Sequence[str] | None) -> list[str]:
    return sorted(set(values or ()))


class PostgresDatabase:
    """The connection pool every role store of one process shares, and the schema's migrations.

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
            # Never server-side prepared: psycopg would spend an extra round trip preparing each statement
            # on each pooled connection, and every statement here is one trip unprepared.
            kwargs={"autocommit": True, "prepare_threshold": None},
            configure=_configure,
            # No test query on every checkout (it would double the round trips): a connection broken by a
            # database restart fails its next statement, is discarded on return, and the caller retries.
            open=False,
            name="secondbrain-metadata",
        )
        self._pool.open()

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()

    def __enter__(self) -> PostgresDatabase:
        """Use the store as a context manager that closes the pool on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the pool."""
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def applied_migrations(self) -> dict[int, str]:
        """The migrations this database has (version -> name); empty for a new database."""
        with self._pool.connection() as conn:
            exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
            if not exists or not exists[0]:
                return {}
            rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        return {int(v): str(name) for v, name in rows}

    def pending_migrations(self) -> list[Migration]:
        """The migrations :meth:`migrate` would apply now, in order.

        :raises NewerSchema: the database has a migration this version does not ship (a newer one wrote it).
        """
        applied = self.applied_migrations()
        check_known(applied)
        return [m for m in load_migrations() if m.version not in applied]

    def migrate(self) -> list[int]:
        """Apply pending versioned migrations; return the versions applied now.

        Each migration runs in its own transaction that first takes a transaction-scoped
        advisory lock, so concurrent starters wait for each other and then see the
        version as applied instead of racing.

        :raises NewerSchema: the database has a migration this version does not ship; nothing is applied.
        """
        check_known(self.applied_migrations())
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


class PgRole:
    """What every role store shares: the database's pool and the helpers that write rows several
    roles touch inside one transaction."""

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        self._pool = db._pool

    def _tx(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self.db._tx()

    @contextmanager
    def _rows_held(self, sql: str, params: Sequence[Any]) -> Iterator[list[Any]]:
        """A fence: ``sql`` (a ``SELECT ... FOR SHARE``) locks rows for the block, which gets them; changes
        to those rows from elsewhere wait until the block ends.  BEGIN and the lock go in one round trip
        (pipeline mode, as :meth:`_one_trip`); the COMMIT is the second.  The block must not write the held
        rows (from another connection it would wait for itself)."""
        with self._pool.connection() as conn:
            try:
                with conn.pipeline():
                    conn.execute("BEGIN", prepare=False)
                    cur = conn.execute(sql, params, prepare=False)
                yield cur.fetchall()
            except BaseException:
                with contextlib.suppress(Exception):  # leave the connection usable for the pool
                    conn.execute("ROLLBACK", prepare=False)
                raise
            conn.execute("COMMIT", prepare=False)

    def _one_trip(self, statements: Sequence[tuple[str, Mapping[str, Any] | Sequence[Any]]]) -> list[Any]:
        """Run ``statements`` as one transaction sent in one go (pipeline mode, BEGIN and COMMIT written
        out so psycopg does not sync around them): one network round trip.  The first row each statement
        returns (None for those returning nothing)."""
        return [rows[0] if rows else None for rows in self._one_trip_rows(statements)]

    def _one_trip_rows(self, statements: Sequence[tuple[str, Mapping[str, Any] | Sequence[Any]]]) -> list[list[Any]]:
        """:meth:`_one_trip`, with every row each statement returns (none for those returning nothing)."""
        with self._pool.connection() as conn:
            try:
                with conn.pipeline():
                    conn.execute("BEGIN", prepare=False)
                    # Not prepared: a statement psycopg meant to prepare in a pipeline that a failing
                    # statement aborted is remembered as prepared although the server skipped it.
                    cursors = [conn.execute(sql, params, prepare=False) for sql, params in statements]
                    conn.execute("COMMIT", prepare=False)
            except BaseException:
                with contextlib.suppress(Exception):  # leave the connection usable for the pool
                    conn.execute("ROLLBACK", prepare=False)
                raise
            return [cur.fetchall() if cur.description else [] for cur in cursors]

    @staticmethod
    def _ensure_user(conn: psycopg.Connection[Any], user_id: str, display_name: str | None) -> None:
        conn.execute(
            "INSERT INTO users (user_id, display_name) VALUES (%s, %s) "
            "ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name "
            "WHERE users.display_name IS NULL AND EXCLUDED.display_name IS NOT NULL",
            (user_id, display_name),
        )

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

    @staticmethod
    def _event(conn: psycopg.Connection[Any], job_id: str, stage: str | None, status: str,
               detail: str | None, attempt: int | None) -> None:
        conn.execute(
            "INSERT INTO job_events (job_id, stage, status, detail, attempt) VALUES (%s, %s, %s, %s, %s)",
            (job_id, stage, status, detail, attempt),
        )

    @staticmethod
    def _mark_running(conn: psycopg.Connection[Any], job_id: str) -> None:
        conn.execute("UPDATE jobs SET status = 'running', updated_at = now() WHERE job_id = %s", (job_id,))

    @staticmethod
    def _require_stage(stage: str) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {STAGES}")

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
