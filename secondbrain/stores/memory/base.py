"""The state behind the in-memory role stores: one table per Postgres table, one lock, one clock.

Every role store of one :class:`MemoryDatabase` works on the same :class:`Tables` under the same
re-entrant lock, so an operation spanning several roles (a submission writes the artifact, the job,
its stages, its outbox rows and an event) is one indivisible step, as one Postgres transaction is.
Operations check everything Postgres would refuse (constraints, foreign keys) before they change
anything, so a refused call leaves no trace, as a rolled-back transaction does.

Time: ``now`` is read once per operation (as Postgres's ``now()`` is once per transaction) from the
real clock by default; the event log and conversation turns take a fresh reading per row (as
``clock_timestamp()`` does).  The real clock is made strictly increasing so two operations never
share a timestamp (their order is what the listings sort by).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from secondbrain.ports import (
    FINISHED_JOB_STATUSES,
    LIVE_JOB_STATUSES,
    SUPERSEDED_DETAIL,
    AnswerEndpoint,
    ArtifactRecord,
    DeadLetterRecord,
    DocumentRecord,
    FeedInfo,
    JobStatus,
    KeyScope,
    PushSubscription,
    Reminder,
    StageStatus,
    UnknownUser,
    VectorIndex,
)
from secondbrain.stages import STAGES
from secondbrain.stores.migrations import Migration, load_migrations

FINISHED = FINISHED_JOB_STATUSES
UNFINISHED = LIVE_JOB_STATUSES
STAGE_OPEN = ("pending", "running", "retrying")  # a stage still to finish (progress writes apply to these only)


class IntegrityError(ValueError):
    """A write Postgres would refuse with a constraint or a foreign key (nothing was changed)."""


# --------------------------------------------------------------------------- rows (mutable; records are copied out)


@dataclass
class UserRow:
    user_id: str
    display_name: str | None
    created_at: datetime


@dataclass
class KeyRow:
    key_id: str
    user_id: str
    name: str
    secret_hash: bytes
    created_at: datetime
    scope: KeyScope
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


@dataclass
class LinkRow:
    key_id: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None


@dataclass
class SessionRow:
    key_id: str
    created_at: datetime
    expires_at: datetime


@dataclass
class StageRow:
    stage: str
    status: StageStatus = "pending"
    attempts: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    detail: str | None = None


@dataclass
class EventRow:
    id: int
    stage: str | None
    status: str
    detail: str | None
    attempt: int | None
    at: datetime


@dataclass
class JobRow:
    """A job with its stages and event log (the ``job_stages``/``job_events`` rows go with it)."""

    job_id: str
    user_id: str
    artifact_id: str | None
    source_id: str | None
    source_uri: str | None
    title: str | None
    request_hash: str | None
    created_at: datetime
    updated_at: datetime
    status: JobStatus = "queued"
    error: str | None = None
    duplicate_of: str | None = None
    superseded_by: str | None = None
    finished_at: datetime | None = None
    error_retryable: bool = False
    stages: dict[str, StageRow] = field(default_factory=dict)
    events: list[EventRow] = field(default_factory=list)


@dataclass
class OutboxEntry:
    id: int
    topic: str
    key: bytes
    value: bytes
    headers: tuple[tuple[str, bytes], ...]
    job_id: str | None
    created_at: datetime
    published_at: datetime | None = None
    lease_until: datetime | None = None
    attempts: int = 0
    last_error: str | None = None


@dataclass
class TurnRow:
    id: int
    role: Literal["user", "assistant"]
    content: str
    meta: dict[str, Any]
    created_at: datetime


@dataclass
class ConversationRow:
    """A conversation with its turns (the ``conversation_turns`` rows go with it)."""

    conversation_id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    turns: list[TurnRow] = field(default_factory=list)
    title: str | None = None


@dataclass
class Tombstone:
    user_id: str
    source_id: str
    deleted_at: datetime
    job_ids: list[str] = field(default_factory=list)
    document_ids: list[str] = field(default_factory=list)
    object_keys: list[str] = field(default_factory=list)
    requeue_job_ids: list[str] = field(default_factory=list)
    cleaned_at: datetime | None = None


# --------------------------------------------------------------------------- value helpers


def utc(value: datetime | None) -> datetime | None:
    """A timestamp as Postgres gives it back: aware, in UTC (a naive one is read as UTC, the session zone)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_now(value: datetime) -> datetime:
    """:func:`utc` for a timestamp that is never ``None``."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def jsonb(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """A mapping as a ``jsonb`` column stores it: JSON only (tuples become lists, keys strings)."""
    result: dict[str, Any] = json.loads(json.dumps(dict(value or {}), allow_nan=False))
    return result


def key_hash(secret: str) -> bytes:
    """What is kept of a key or token: its SHA-256 (as the Postgres store keeps it)."""
    return hashlib.sha256(secret.encode()).digest()


def uniq(values: Sequence[str] | None) -> list[str]:
    return sorted(set(values or ()))


def require_stage(stage: str) -> None:
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {STAGES}")


def artifact_out(art: ArtifactRecord) -> ArtifactRecord:
    """A copy a caller may keep (its attributes are not the stored dict)."""
    return replace(art, attributes=dict(art.attributes))


def document_out(doc: DocumentRecord) -> DocumentRecord:
    return replace(doc, metadata=dict(doc.metadata))


# --------------------------------------------------------------------------- tables


class Tables:
    """Every table of the metadata store, keyed like its primary key, and the helpers that change
    rows several roles touch (with the cascades Postgres's foreign keys perform)."""

    def __init__(self) -> None:
        self.users: dict[str, UserRow] = {}
        self.api_keys: dict[str, KeyRow] = {}
        self.login_links: dict[bytes, LinkRow] = {}  # by token hash
        self.web_sessions: dict[bytes, SessionRow] = {}  # by session hash
        self.request_windows: dict[tuple[str, str, datetime], int] = {}  # (user, bucket, window start) -> hits
        self.artifacts: dict[str, ArtifactRecord] = {}
        self.jobs: dict[str, JobRow] = {}
        self.key_jobs: set[tuple[str, str]] = set()  # (key id, job id): which capture key made which job
        # Written only through put_document/drop_documents, which keep the two lookups beside it.
        self.documents: dict[str, DocumentRecord] = {}
        self._docs_by_source: dict[tuple[str, str], set[str]] = {}  # (user, source) -> document ids
        self._docs_by_artifact: dict[str, set[str]] = {}  # artifact id -> document ids (any user)
        self.outbox: dict[int, OutboxEntry] = {}  # insertion order is id order
        self.conversations: dict[str, ConversationRow] = {}
        self.vector_indexes: dict[tuple[str, int], VectorIndex] = {}
        self.deleted_sources: dict[tuple[str, str], Tombstone] = {}
        self.source_tags: dict[tuple[str, str], set[str]] = {}  # (user, source) -> its tags, never empty
        self.erased_users: dict[str, datetime] = {}  # erased and not created again
        self.answer_endpoint: AnswerEndpoint | None = None  # one row, server-wide
        self.dead_letters: dict[str, DeadLetterRecord] = {}  # by letter id; insertion order is id order
        self.feed_tokens: dict[bytes, FeedInfo] = {}  # calendar feeds by token hash
        self.reminders: dict[str, Reminder] = {}  # agenda reminders by id
        self.push_subscriptions: dict[str, PushSubscription] = {}  # browsers' web push subscriptions by id
        # bigserial sequences: never reused, as in Postgres
        self.outbox_ids = itertools.count(1)
        self.event_ids = itertools.count(1)
        self.turn_ids = itertools.count(1)

    # -- lookups

    def job_of(self, user_id: str, job_id: str) -> JobRow | None:
        job = self.jobs.get(job_id)
        return job if job is not None and job.user_id == user_id else None

    def artifact_of(self, user_id: str, artifact_id: str | None) -> ArtifactRecord | None:
        art = self.artifacts.get(artifact_id) if artifact_id is not None else None
        return art if art is not None and art.user_id == user_id else None

    def document_of(self, user_id: str, document_id: str) -> DocumentRecord | None:
        doc = self.documents.get(document_id)
        return doc if doc is not None and doc.user_id == user_id else None

    def source_documents(self, user_id: str, source_id: str) -> list[DocumentRecord]:
        """Every version of the user's source."""
        return [self.documents[d] for d in self._docs_by_source.get((user_id, source_id), ())]

    def original_job(self, user_id: str, artifact_id: str | None, job_id: str) -> str | None:
        """The earliest other job of the user whose artifact is the same bytes and that got past extraction (its
        document exists and is the current version of its source)."""
        if artifact_id is None:
            return None
        current = any(d.user_id == user_id and d.superseded_at is None for d in self.artifact_documents(artifact_id))
        if not current:
            return None
        found = [j for j in self.jobs.values()
                 if j.user_id == user_id and j.artifact_id == artifact_id and j.job_id != job_id
                 and j.status in ("succeeded", "running")]
        return min(found, key=lambda j: (j.created_at, j.job_id)).job_id if found else None

    def artifact_documents(self, artifact_id: str | None) -> list[DocumentRecord]:
        """The documents extracted from an artifact (whoever's: callers filter by user)."""
        return [self.documents[d] for d in self._docs_by_artifact.get(artifact_id or "", ())]

    def latest_document(self, user_id: str, artifact_id: str | None) -> DocumentRecord | None:
        """The user's most recently ingested document of the artifact (what a job of it shows)."""
        docs = [d for d in self.artifact_documents(artifact_id) if d.user_id == user_id]
        return max(docs, key=lambda d: d.ingested_at) if docs else None

    def latest_documents(self, user_id: str) -> dict[str, DocumentRecord]:
        """The user's most recently ingested document per artifact id (what a job of that artifact shows)."""
        best: dict[str, DocumentRecord] = {}
        for doc in self.documents.values():
            if doc.user_id == user_id:
                seen = best.get(doc.artifact_id)
                if seen is None or doc.ingested_at > seen.ingested_at:
                    best[doc.artifact_id] = doc
        return best

    # -- writes shared by several roles

    def put_document(self, doc: DocumentRecord) -> None:
        """Insert or replace a document row."""
        self.drop_documents([doc.document_id])
        self.documents[doc.document_id] = doc
        self._docs_by_source.setdefault((doc.user_id, doc.source_id), set()).add(doc.document_id)
        self._docs_by_artifact.setdefault(doc.artifact_id, set()).add(doc.document_id)

    def drop_documents(self, document_ids: Sequence[str]) -> None:
        for doc_id in document_ids:
            doc = self.documents.pop(doc_id, None)
            if doc is not None:
                self._docs_by_source[(doc.user_id, doc.source_id)].discard(doc_id)
                self._docs_by_artifact[doc.artifact_id].discard(doc_id)

    def ensure_user(self, user_id: str, display_name: str | None, now: datetime) -> None:
        """Create the user when missing, unless it was erased (that takes :meth:`recreate_user`)."""
        if user_id in self.erased_users and user_id not in self.users:
            raise UnknownUser(f"user {user_id!r} was erased")
        row = self.users.get(user_id)
        if row is None:
            self.users[user_id] = UserRow(user_id, display_name, now)
        elif row.display_name is None and display_name is not None:
            row.display_name = display_name  # fills in a missing name, never overwrites one

    def supersede_older(self, job: JobRow, now: datetime) -> None:
        """End the source's older unfinished jobs of other bytes as superseded by ``job`` (see the intake)."""
        for old in self.jobs.values():
            if (old.user_id == job.user_id and old.source_id == job.source_id and old.job_id != job.job_id
                    and old.status in LIVE_JOB_STATUSES
                    and (job.artifact_id is None or old.artifact_id != job.artifact_id)):
                old.status, old.superseded_by, old.finished_at, old.updated_at = "superseded", job.job_id, now, now
                for row in old.stages.values():
                    if row.status in STAGE_OPEN:
                        row.status, row.detail = "skipped", SUPERSEDED_DETAIL
                self.event(old, "job", "superseded", SUPERSEDED_DETAIL, None, now)

    def insert_artifact(self, artifact: ArtifactRecord) -> None:
        """Insert the artifact unless its id exists; an existing one of the same user whose raw bytes
        retention removed is marked kept again (whoever registers it stored the bytes again)."""
        existing = self.artifacts.get(artifact.artifact_id)
        if existing is None:
            self.artifacts[artifact.artifact_id] = stored_artifact(artifact)
        elif existing.raw_purged_at is not None and existing.user_id == artifact.user_id:
            self.artifacts[artifact.artifact_id] = replace(existing, raw_purged_at=None)

    def event(self, job: JobRow, stage: str | None, status: str, detail: str | None, attempt: int | None,
              at: datetime) -> None:
        job.events.append(EventRow(next(self.event_ids), stage, status, detail, attempt, at))

    def add_outbox(self, topic: str, key: bytes, value: bytes, headers: Sequence[tuple[str, bytes]],
                   job_id: str | None, now: datetime, lease_until: datetime | None = None) -> int:
        entry_id = next(self.outbox_ids)
        self.outbox[entry_id] = OutboxEntry(entry_id, topic, bytes(key), bytes(value),
                                            tuple((str(n), bytes(v)) for n, v in headers), job_id, now,
                                            lease_until=lease_until)
        return entry_id

    def left_over(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Whether registering ``job_id`` would bring back a source deleted after the artifact was submitted."""
        tomb = self.deleted_sources.get((artifact.user_id, artifact.source_id))
        return (tomb is not None and tomb.deleted_at > utc_now(artifact.submitted_at)
                and job_id not in self.jobs)

    # -- deletes, with the cascades of the foreign keys (ON DELETE CASCADE)

    def drop_jobs(self, job_ids: Sequence[str]) -> None:
        gone = set(job_ids)
        for job_id in gone:
            self.jobs.pop(job_id, None)  # stages and events go with the job; outbox rows have no key
        self.key_jobs = {kj for kj in self.key_jobs if kj[1] not in gone}

    def drop_artifacts(self, artifact_ids: Sequence[str]) -> None:
        gone = set(artifact_ids)
        for aid in gone:
            self.artifacts.pop(aid, None)
        # jobs.artifact_id and documents.artifact_id reference artifacts whoever's they are
        self.drop_jobs([j.job_id for j in self.jobs.values() if j.artifact_id in gone])
        self.drop_documents([d.document_id for aid in gone for d in self.artifact_documents(aid)])

    def drop_keys(self, key_ids: Sequence[str]) -> None:
        gone = set(key_ids)
        for key_id in gone:
            self.api_keys.pop(key_id, None)
        for token in [h for h, link in self.login_links.items() if link.key_id in gone]:
            del self.login_links[token]
        for session in [h for h, s in self.web_sessions.items() if s.key_id in gone]:
            del self.web_sessions[session]


def stored_artifact(artifact: ArtifactRecord) -> ArtifactRecord:
    """The row an artifact insert writes: timestamps in UTC, attributes as JSON, bytes not purged."""
    if artifact.size_bytes < 0:
        raise IntegrityError("artifacts.size_bytes must be >= 0")
    return replace(artifact, captured_at=utc(artifact.captured_at), submitted_at=utc_now(artifact.submitted_at),
                   attributes=jsonb(artifact.attributes), raw_purged_at=None)


# --------------------------------------------------------------------------- the database


class MemoryDatabase:
    """The tables every in-memory role store of one process shares, their lock and their clock.

    ``clock`` (aware datetimes) replaces the real clock, for tests that move time; by default the
    real clock is read, made strictly increasing.
    """

    def __init__(self, *, clock: Callable[[], datetime] | None = None) -> None:
        self.tables = Tables()
        self._lock = threading.RLock()
        self._clock = clock
        self._last = datetime.min.replace(tzinfo=UTC)
        self._closed = False
        self._pinned: datetime | None = None

    def _now(self) -> datetime:
        """The current time in UTC (strictly after the previous reading of the real clock)."""
        with self._lock:
            if self._clock is not None:
                return utc_now(self._clock())
            now = datetime.now(UTC)
            if now <= self._last:
                now = self._last + timedelta(microseconds=1)
            self._last = now
            return now

    @contextmanager
    def _tx(self) -> Iterator[datetime]:
        """Hold the lock for one operation and give its ``now``."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the in-memory metadata store is closed")
            yield self._pinned or self._now()

    @contextmanager
    def _one_transaction(self) -> Iterator[None]:
        """Several operations as one transaction: they share its ``now``, as Postgres's ``now()`` is one
        transaction's start (a batch's jobs are created at one time, ordered by their ids)."""
        with self._lock:
            self._pinned = self._now()
            try:
                yield
            finally:
                self._pinned = None

    def migrate(self) -> list[int]:
        """Nothing to migrate: the tables are the current schema (no version is ever applied)."""
        with self._tx():
            return []

    def applied_migrations(self) -> dict[int, str]:
        """Every shipped migration: the tables are the current schema from the start."""
        with self._tx():
            return {m.version: m.name for m in load_migrations()}

    def pending_migrations(self) -> list[Migration]:
        """None: the tables are the current schema."""
        with self._tx():
            return []

    def check(self) -> None:
        """Raise once the store is closed (readiness)."""
        with self._tx():
            return

    def close(self) -> None:
        """Refuse every later call (the data is dropped with the object)."""
        with self._lock:
            self._closed = True

    def __enter__(self) -> MemoryDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryRole:
    """What every in-memory role store shares: the database, its tables and its lock."""

    def __init__(self, db: MemoryDatabase) -> None:
        self.db = db
        self._t = db.tables

    def _tx(self) -> AbstractContextManager[datetime]:
        return self.db._tx()
