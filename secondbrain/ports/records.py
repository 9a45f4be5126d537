"""The records the metadata roles read and write (artifacts, documents, jobs, users, keys...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

JobStatus = Literal["queued", "running", "succeeded", "failed", "duplicate", "superseded"]
# A job in one of these never changes again (a late or replayed write leaves it as it is).
FINISHED_JOB_STATUSES: tuple[JobStatus, ...] = ("succeeded", "failed", "duplicate", "superseded")
LIVE_JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running")
SUPERSEDED_DETAIL = "replaced by a newer submission of the same source"  # why a superseded job's stages skipped

# What an answer that quoted a deleted source keeps (its text went with the source), and the source's
# entry among those shown with it.
DELETED_ANSWER = "This answer quoted a source that has since been deleted, so its text was removed."


def cited_source_ids(meta: Mapping[str, Any] | None) -> list[str]:
    """The source ids an answer turn's meta shows with it (its ``sources``), sorted, once each."""
    shown = (meta or {}).get("sources")
    if not isinstance(shown, list):
        return []
    return sorted({s["source_id"] for s in shown if isinstance(s, dict) and isinstance(s.get("source_id"), str)})
DELETED_SOURCE_TITLE = "a deleted source"
StageStatus = Literal["pending", "running", "succeeded", "failed", "retrying", "skipped"]


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    """A raw artifact as submitted (bytes live in the object store under ``object_key``)."""

    artifact_id: str
    user_id: str
    source_id: str
    source_uri: str
    object_key: str
    content_type: str
    size_bytes: int
    sha256: str
    filename: str | None
    title: str | None
    captured_at: datetime | None
    submitted_at: datetime
    producer: str
    attributes: Mapping[str, str] = field(default_factory=dict)
    raw_purged_at: datetime | None = None  # when retention removed the bytes (the index stays)


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """A Kafka message waiting in Postgres to be published by the relay."""

    topic: str
    key: bytes
    value: bytes
    headers: Sequence[tuple[str, bytes]] = ()


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """An outbox message claimed by a relay."""

    id: int
    message: OutboxMessage
    attempts: int


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """Outcome of registering an artifact: the job that tracks it and whether it was new."""

    job_id: str
    artifact_id: str
    created: bool  # False when the same job id already existed (idempotent resubmission)
    # The outbox rows this call queued, in order, when it leased them to the caller (``lease_s``).
    leased: tuple[int, ...] = ()
    # A new job's earlier copy: the user's earliest other job of the same bytes that got past extraction (read in
    # the same statement, so saying "already in your memory" costs no round trip).
    original_job: str | None = None


@dataclass(frozen=True, slots=True)
class StageView:
    """Progress of one pipeline stage of a job."""

    stage: str
    status: StageStatus
    attempts: int
    started_at: datetime | None
    finished_at: datetime | None
    detail: str | None


@dataclass(frozen=True, slots=True)
class JobView:
    """A job as shown to its owner."""

    job_id: str
    user_id: str
    artifact_id: str | None  # None while a URL has not been fetched yet
    status: JobStatus
    error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    stages: list[StageView]
    title: str | None = None
    source_uri: str | None = None
    duplicate_of: str | None = None
    superseded_by: str | None = None  # the newer submission of the same source that replaced this one
    # Another job of the user that already extracted the same bytes (what ``find_original_job``
    # answers), read with the job so the extractor's admission lookup answers both.
    extracted_before: str | None = None
    retryable: bool = False  # failed: trying again may succeed (the failure was of the moment or the set-up)


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """An extracted document (one per artifact) and the facts the query side needs."""

    document_id: str
    user_id: str
    artifact_id: str
    source_id: str
    title: str
    modality: str
    content_type: str
    captured_at: datetime
    captured_at_source: str
    ingested_at: datetime
    char_count: int
    chunk_count: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    version: int = 1  # assigned by the store: 1 + the highest version of the same source
    superseded_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SourceView:
    """One ingested item as listed by ``GET /v1/sources``."""

    source_id: str | None
    artifact_id: str | None
    document_id: str | None
    job_id: str | None
    title: str | None
    source_uri: str
    content_type: str
    modality: str | None
    size_bytes: int
    status: JobStatus | None
    captured_at: datetime | None
    ingested_at: datetime
    chunk_count: int | None
    version: int | None = None
    superseded: bool = False
    error: str | None = None
    raw_purged_at: datetime | None = None  # the raw file expired (retention); the index stays
    retryable: bool = False  # failed: trying again may succeed (the failure was of the moment or the set-up)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation."""

    role: Literal["user", "assistant"]
    content: str
    created_at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)


# capture: only adds to its user's memory (notes, files, pages, links) and follows those jobs; it reads
# nothing else, so a key kept in a browser extension gives away nothing if it leaks.
KeyScope = Literal["user", "admin", "producer", "capture"]
KEY_SCOPES: tuple[str, ...] = ("user", "admin", "producer", "capture")


@dataclass(frozen=True, slots=True)
class FeedInfo:
    """A calendar feed as listed to its owner (never its token): ``timezone`` is the zone its times are
    read in."""

    feed_id: str
    user_id: str
    name: str
    timezone: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Reminder:
    """A reminder of one agenda line as kept: when the event starts and when to remind, in the zone it was
    asked in."""

    reminder_id: str
    user_id: str
    event_id: str
    title: str
    kind: str
    starts_at: datetime
    remind_at: datetime
    timezone: str
    created_at: datetime
    sent_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class PushSubscription:
    """A browser's web push subscription as kept for its user: the push service's ``endpoint`` and the
    browser's keys the payload is encrypted to (``p256dh``, ``auth``; base64url, as the browser gives them)."""

    subscription_id: str
    user_id: str
    endpoint: str
    p256dh: str
    auth: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKeyInfo:
    """An API key as listed to its owner (never the secret itself).

    ``scope``: ``user`` keys act as their user over HTTP; ``admin`` keys may also manage users
    and keys; ``producer`` keys only sign events other apps publish to Kafka."""

    key_id: str
    user_id: str
    name: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    scope: KeyScope = "user"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request or event acts for: the key's owner, the key and what it may do."""

    user_id: str
    key_id: str | None
    scope: KeyScope


@dataclass(frozen=True, slots=True)
class RequestAuth:
    """Who an HTTP request acts for, and where that user stands: requests in the current window of their
    ``bucket``, and captures still in the pipeline (both read in the same round trip)."""

    principal: Principal
    hits: int
    pending: int


@dataclass(frozen=True, slots=True)
class SigningKey:
    """What checking an event signature needs: the key's owner, scope and stored hash
    (the HMAC key producers derive from their secret, see :mod:`secondbrain.events.signing`)."""

    key_id: str
    user_id: str
    scope: KeyScope
    secret_hash: bytes


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A user as an administrator sees it."""

    user_id: str
    display_name: str | None
    created_at: datetime
    active_keys: int


@dataclass(frozen=True, slots=True)
class DeadLetterRecord:
    """An event a stage refused or could not process, as its producer reads it.

    ``letter_id`` identifies the letter (the same event dead-lettered again after a redelivery is
    recorded once); ``user_id`` is the user the event named, ``key_id`` the key it claimed to be signed
    with; either may be missing (a malformed event names nobody reliably)."""

    letter_id: str
    stage: str
    topic: str
    partition: int
    offset: int
    error_kind: str
    error_message: str
    event_id: str | None = None
    user_id: str | None = None
    key_id: str | None = None
    job_id: str | None = None
    producer: str | None = None
    failed_at: datetime | None = None  # set by the store when recorded


class ForeignConversation(PermissionError):
    """The conversation id belongs to another user."""


class JobNotFailed(ValueError):
    """Only a failed job can be removed on its own (a source is deleted whole)."""

    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(f"job {job_id} is {status}, not failed")
        self.status = status


class ArtifactGone(LookupError):
    """The artifact a document belongs to no longer exists (deleted with its source meanwhile)."""


class JobGone(LookupError):
    """The work of a job is no longer wanted: the job was deleted with its source, its user was erased
    (``state == "gone"``), or it ended meanwhile, e.g. replaced by a newer submission (``"ended"``)."""

    def __init__(self, job_id: str, state: Literal["gone", "ended"], status: JobStatus | None = None) -> None:
        super().__init__(f"job {job_id} is {'gone' if state == 'gone' else 'no longer running'}")
        self.job_id = job_id
        self.state = state
        self.status = status  # how it ended, where known ("succeeded": this work was a second copy of done work)

    @classmethod
    def of_status(cls, job_id: str, status: JobStatus | None) -> JobGone:
        """A job no longer queued or running, by its status (``None``: no such job of the user)."""
        return cls(job_id, "gone" if status is None else "ended", status)


class LeaseLost(LookupError):
    """A re-index's lease is no longer the caller's: the re-index was cancelled or switched, its user
    erased, or another process took the lease over after a stall; nothing may be written for it."""

    def __init__(self, user_id: str, version: int) -> None:
        super().__init__(f"the re-index of {user_id} v{version} is no longer this process's to fill")
        self.user_id = user_id
        self.version = version


class UnknownUser(LookupError):
    """The user does not exist: erased, so nothing is created for them again until an administrator
    creates the user anew."""


class IdempotencyConflict(ValueError):
    """An Idempotency-Key already used for a request with other content."""


@dataclass(frozen=True, slots=True)
class SourceDeletion:
    """What deleting a source removed from the metadata store, and what is left to remove elsewhere.

    ``document_ids`` name the documents whose claim-check objects must go (their vector points are
    found by the source id); ``object_keys`` are raw artifacts no remaining source references;
    ``kept_artifact_ids`` are artifacts whose bytes another source of the user still uses.
    """

    user_id: str
    source_id: str
    deleted_at: datetime
    job_ids: list[str]
    document_ids: list[str]
    artifact_ids: list[str]
    object_keys: list[str]
    kept_artifact_ids: list[str] = field(default_factory=list)
    requeue_job_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FailedRemoval:
    """What removing a failed capture took from the metadata store: its job and the other failed jobs
    of the same source, and the raw files nothing uses any more (``object_keys``, left to remove)."""

    user_id: str
    source_id: str | None
    job_ids: list[str]
    artifact_ids: list[str]
    object_keys: list[str]


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A conversation as listed: its title (the one given, else its first question) and its turns."""

    conversation_id: str
    created_at: datetime
    updated_at: datetime
    turns: int
    title: str = ""
    titled: bool = False  # the person gave it this title (not the first question standing in)


IndexStatus = Literal["building", "active", "retired"]


@dataclass(frozen=True, slots=True)
class VectorIndex:
    """One collection version of a user's vectors and the embedding model they come from.

    ``active``: searched, and written by the embedder; ``building``: written by the embedder too
    while a re-index fills it from the active one; ``retired``: replaced by a newer version (its
    collection is dropped, ``dropped_at``, unless the re-index was asked to keep it).
    """

    user_id: str
    version: int
    model: str  # how to load the model: "minilm-int8", "openai:<name>"
    model_id: str  # which model it is (also in every point's payload)
    dense_size: int
    status: IndexStatus
    created_at: datetime
    activated_at: datetime | None = None
    retired_at: datetime | None = None
    dropped_at: datetime | None = None
    keep_old: bool = False  # when this index becomes active, keep the collection it replaces
    points_total: int | None = None  # re-index progress: points in the active index when last counted
    points_done: int = 0
    resume_from: str | None = None  # the point id the re-index continues from
    lease_owner: str | None = None  # who is filling it, until lease_expires_at
    lease_expires_at: datetime | None = None

    @property
    def name(self) -> str:
        """The collection version (``v<version>``) the vector store files it under."""
        return f"v{self.version}"


@dataclass(frozen=True, slots=True)
class AnswerEndpoint:
    """The OpenAI-compatible endpoint an administrator chose for answers at run time (it overrides
    the start-up one until cleared).  ``api_key`` is kept for the query service only: never send it
    back to a client (``repr`` hides it)."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    updated_at: datetime | None = None

