"""The small interfaces every external dependency hides behind.

Each Protocol here has real implementations under ``secondbrain/stores`` (or the
service that owns it) and one contract test suite in ``tests/contracts`` that runs
against every implementation.  Stage logic depends only on these Protocols, never on
a concrete client, so the same code runs in embedded and distributed mode.

All methods are synchronous on purpose: the clients underneath (psycopg pools, the
minio SDK, the Qdrant engine, onnxruntime) are blocking, and the Kafka runner moves
each stage call onto a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Literal, Protocol, runtime_checkable

# --------------------------------------------------------------------------- objects


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What an object store knows about one stored object."""

    key: str
    size: int
    content_type: str
    etag: str | None = None
    last_modified: datetime | None = None


class ObjectNotFound(KeyError):
    """Raised when a key does not exist in the object store."""


@runtime_checkable
class ObjectStore(Protocol):
    """Raw artifact bytes, addressed by key (``users/<user_id>/...``)."""

    def put(self, key: str, data: bytes | IO[bytes], *, size: int | None = None,
            content_type: str = "application/octet-stream") -> ObjectInfo:
        """Store ``data`` under ``key`` (overwriting). A stream is read to its end; ``size`` may be -1/None
        when unknown."""
        ...

    def get(self, key: str) -> bytes:
        """Return the whole object; raise :class:`ObjectNotFound` when absent."""
        ...

    def open(self, key: str) -> Iterator[bytes]:
        """Stream the object in chunks; raise :class:`ObjectNotFound` when absent."""
        ...

    def stat(self, key: str) -> ObjectInfo | None:
        """Metadata of ``key`` or ``None`` when absent."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error."""
        ...

    def list(self, prefix: str) -> list[ObjectInfo]:
        """All objects whose key starts with ``prefix``, sorted by key."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Remove every object under ``prefix``; return how many were removed."""
        ...

    def check(self) -> None:
        """Raise if the store cannot serve requests (readiness probe)."""
        ...


# --------------------------------------------------------------------------- vectors


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector as parallel index/value lists (indices unique, ascending)."""

    indices: list[int]
    values: list[float]


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """One chunk as stored in a user's collection."""

    id: str  # a UUID string, deterministic per chunk (see secondbrain.ids)
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open [start, end) interval; either end may be open."""

    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True, slots=True)
class VectorFilter:
    """Restrictions applied inside the vector store (all conditions AND-ed).

    ``time_field`` names the payload field the time range applies to
    (``captured_at`` or ``ingested_at``; both are RFC 3339 strings in the payload).
    """

    document_ids: Sequence[str] | None = None
    source_ids: Sequence[str] | None = None
    modalities: Sequence[str] | None = None
    time_range: TimeRange | None = None
    time_field: Literal["captured_at", "ingested_at"] = "captured_at"
    chunk_index_range: tuple[int, int] | None = None  # inclusive [first, last] positions within a document


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A scored point returned by a search."""

    id: str
    score: float
    payload: dict[str, Any]


SearchMode = Literal["hybrid", "dense", "sparse"]


@runtime_checkable
class VectorStore(Protocol):
    """Per-user collections holding a dense and a sparse (BM25) vector per chunk.

    A user may have several collection *versions* (``index``: ``v1``, ``v2``...), one per
    embedding model, so a re-embedding builds a new one next to the one being searched.
    Methods taking ``index`` address that version; ``None`` means the store's default (``v1``).
    :meth:`delete_where` and :meth:`drop_user` always act on every version of the user.
    """

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        """Create the user's collection (version ``index``) when missing (idempotent); return its name."""
        ...

    def upsert(self, user_id: str, points: Sequence[VectorPoint], *, index: str | None = None) -> None:
        """Insert or replace points by id (a replay never duplicates)."""
        ...

    def search(self, user_id: str, *, dense: Sequence[float] | None, sparse: SparseVector | None,
               limit: int, mode: SearchMode = "hybrid", flt: VectorFilter | None = None,
               candidates: int = 50, index: str | None = None) -> list[VectorHit]:
        """Rank the user's points.  ``hybrid`` takes ``candidates`` from each of dense and sparse and fuses them
        with reciprocal rank fusion inside the engine.  A user without a collection gets ``[]``."""
        ...

    def scroll(self, user_id: str, *, flt: VectorFilter | None = None, limit: int = 100,
               offset: str | None = None, index: str | None = None) -> tuple[list[VectorHit], str | None]:
        """Page through points matching ``flt`` in id order (score 0); returns the next offset (the id
        the next page starts at) or ``None``."""
        ...

    def count(self, user_id: str, flt: VectorFilter | None = None, *, index: str | None = None) -> int:
        """Number of the user's points matching ``flt`` (0 when there is no collection)."""
        ...

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        """Delete the user's points matching ``flt`` from every version (used to drop a document's chunks)."""
        ...

    def drop_user(self, user_id: str) -> None:
        """Delete every collection version of the user (no error when absent)."""
        ...

    def list_indexes(self, user_id: str) -> list[str]:
        """The versions the user has a collection for, oldest first (``["v1", "v2"]``)."""
        ...

    def drop_index(self, user_id: str, index: str) -> None:
        """Delete one collection version of the user (no error when absent)."""
        ...

    def check(self) -> None:
        """Raise if the store cannot serve requests (readiness probe)."""
        ...

    def close(self) -> None:
        """Flush and release resources."""
        ...


# --------------------------------------------------------------------------- embedder


@runtime_checkable
class Embedder(Protocol):
    """Turns text into dense vectors. Loaded once at start-up, never at import."""

    @property
    def model_id(self) -> str:
        """A stable identifier of the model (used in collection versions and payloads)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every returned vector."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages (L2-normalised vectors, one per text, same order)."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (L2-normalised)."""
        ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Turns text into a BM25-style sparse vector (the engine applies IDF)."""

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """Term-frequency-saturated weights for stored passages."""
        ...

    def encode_query(self, text: str) -> SparseVector:
        """Weights for a query (each distinct term once)."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """The terms the vectors are built from (lower-cased, stemmed, stopwords dropped)."""
        ...


# --------------------------------------------------------------------------- speech and vision


@dataclass(frozen=True, slots=True)
class Word:
    """One transcribed word with its time span in seconds from the start of the recording."""

    text: str
    start: float
    end: float
    probability: float | None = None


@dataclass(frozen=True, slots=True)
class SpeechSegment:
    """A stretch of speech as the recogniser segmented it."""

    text: str
    start: float
    end: float
    words: tuple[Word, ...] = ()
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """The transcription of one recording."""

    segments: tuple[SpeechSegment, ...]
    language: str | None
    language_probability: float | None
    duration_s: float
    model_id: str


@runtime_checkable
class Transcriber(Protocol):
    """Speech to text with segment and word timestamps (faster-whisper here; whisperx where it runs).

    Loaded once at start-up, never at import.  ``audio_path`` is a local file in any format
    the decoder reads (wav, mp3, m4a, ogg, webm...).
    """

    @property
    def model_id(self) -> str:
        """A stable identifier of the model."""
        ...

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Transcribe one recording; raise ``PermanentError`` when it cannot be decoded."""
        ...


@runtime_checkable
class Captioner(Protocol):
    """Describes an image in a sentence or two (any OpenAI-compatible vision endpoint)."""

    @property
    def model_id(self) -> str:
        """A stable identifier of the model."""
        ...

    def caption(self, image: bytes, content_type: str) -> str:
        """A short description of the image; raise ``RetryableError`` when the endpoint is down."""
        ...


# --------------------------------------------------------------------------- metadata

JobStatus = Literal["queued", "running", "succeeded", "failed", "duplicate"]
StageStatus = Literal["pending", "running", "succeeded", "failed", "retrying", "skipped"]
STAGES: tuple[str, ...] = ("fetch", "extract", "chunk", "embed")  # every stage a job can have, in order
FILE_STAGES: tuple[str, ...] = ("extract", "chunk", "embed")  # the stages of an uploaded artifact
URL_STAGES: tuple[str, ...] = STAGES  # a URL is fetched first


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


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation."""

    role: Literal["user", "assistant"]
    content: str
    created_at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)


KeyScope = Literal["user", "admin", "producer"]
KEY_SCOPES: tuple[str, ...] = ("user", "admin", "producer")


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


class ForeignConversation(PermissionError):
    """The conversation id belongs to another user."""


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
class ConversationInfo:
    """A conversation as listed for export."""

    conversation_id: str
    created_at: datetime
    updated_at: datetime
    turns: int


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


@runtime_checkable
class MetadataStore(Protocol):
    """Users, artifacts, documents, jobs (with per-stage status), job events and the outbox.

    Every method that touches user data takes the user id and is scoped by it: a job or source
    of another user is reported as absent and never changed, whatever ids an event carries.
    """

    def migrate(self) -> list[int]:
        """Apply pending versioned migrations; return the versions applied now."""
        ...

    def check(self) -> None:
        """Raise if the database does not answer (readiness probe)."""
        ...

    def ensure_user(self, user_id: str, display_name: str | None = None) -> None:
        """Create the user when missing."""
        ...

    def user_exists(self, user_id: str) -> bool:
        """Whether the user is known."""
        ...

    def submit(self, artifact: ArtifactRecord, job_id: str, outbox: Sequence[OutboxMessage]) -> SubmitResult:
        """In ONE transaction: upsert the artifact, create the job (stages pending) and queue ``outbox``.
        Resubmitting the same ``job_id`` changes nothing and returns ``created=False``."""
        ...

    def register_external(self, artifact: ArtifactRecord, job_id: str) -> SubmitResult:
        """Same as :meth:`submit` without outbox rows: for artifacts published straight to Kafka."""
        ...

    def request_url(self, user_id: str, job_id: str, url: str, title: str | None,
                    outbox: Sequence[OutboxMessage]) -> SubmitResult:
        """In ONE transaction: create a URL job (no artifact yet; stages fetch..embed pending) and
        queue ``outbox``.  An existing ``job_id`` changes nothing and returns ``created=False``."""
        ...

    def attach_artifact(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Record the artifact a URL job fetched and link the job to it; ``False`` when the job is
        unknown or another user's (nothing is written then)."""
        ...

    def find_original_job(self, user_id: str, artifact_id: str, job_id: str) -> str | None:
        """Another job of the user that already extracted the same bytes (its document is current),
        so ``job_id`` is a duplicate of it; ``None`` when there is none."""
        ...

    def supersede_older(self, user_id: str, source_id: str, document_id: str) -> list[str]:
        """Mark every older version of the source superseded by ``document_id``; return the ids of
        all older versions (their chunks must leave the vector index).  Idempotent."""
        ...

    def is_superseded(self, user_id: str, document_id: str) -> bool:
        """Whether a newer version of the document's source exists (or the document is gone)."""
        ...

    def claim_outbox(self, limit: int, lease_seconds: float = 30.0) -> list[OutboxRow]:
        """Lease up to ``limit`` unpublished messages (oldest first, skipping rows leased by others)."""
        ...

    def mark_published(self, ids: Sequence[int]) -> None:
        """Mark leased outbox rows as published."""
        ...

    def release_outbox(self, ids: Sequence[int], error: str) -> None:
        """Give leased rows back after a failed publish (attempts + 1, error kept)."""
        ...

    def requeue_unfinished(self) -> int:
        """Queue the submission message again for every job still queued/running (used when the
        broker lost its data, e.g. an embedded restart); return how many were queued."""
        ...

    def stage_started(self, user_id: str, job_id: str, stage: str, attempt: int) -> None:
        """Mark ``stage`` running (job becomes running)."""
        ...

    def stage_succeeded(self, user_id: str, job_id: str, stage: str, detail: str | None = None) -> None:
        """Mark ``stage`` done; when it is the last stage the job succeeds."""
        ...

    def stage_retrying(self, user_id: str, job_id: str, stage: str, attempt: int, reason: str) -> None:
        """Record a retryable failure of ``stage``."""
        ...

    def job_failed(self, user_id: str, job_id: str, stage: str, reason: str) -> None:
        """Mark the stage and the job failed with a human-readable ``reason``."""
        ...

    def job_duplicate(self, user_id: str, job_id: str, original_job_id: str) -> None:
        """End the job as a duplicate of ``original_job_id``."""
        ...

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        """The job with its stages and events, or ``None`` (also for another user's job)."""
        ...

    def job_events(self, user_id: str, job_id: str) -> list[dict[str, Any]]:
        """The job's event log, oldest first (empty for another user's job)."""
        ...

    def save_document(self, doc: DocumentRecord) -> int:
        """Insert or replace a document (idempotent on ``document_id``); return its version."""
        ...

    def set_chunk_count(self, user_id: str, document_id: str, chunk_count: int) -> None:
        """Record how many chunks a document was indexed as."""
        ...

    def get_document(self, user_id: str, document_id: str) -> DocumentRecord | None:
        """A document of the user, or ``None``."""
        ...

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0, *, source_id: str | None = None,
                     modality: str | None = None, status: str | None = None, start: datetime | None = None,
                     end: datetime | None = None) -> list[SourceView]:
        """The user's jobs with their artifact and document, newest first; optionally only one source's
        (every version), one modality, one job status, or a captured time in [start, end) (a job whose
        captured time is not known yet counts as captured when it was submitted)."""
        ...

    def documents_between(self, user_id: str, start: datetime | None, end: datetime | None, *,
                          field: Literal["captured_at", "ingested_at"] = "captured_at", limit: int = 500,
                          modalities: Sequence[str] | None = None) -> list[DocumentRecord]:
        """The user's current documents whose ``field`` lies in [start, end), newest first."""
        ...

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn (the conversation is created on first use); ``ForeignConversation`` when
        the id belongs to another user."""
        ...

    def get_turns(self, user_id: str, conversation_id: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns of the user's conversation, oldest first (empty for others')."""
        ...

    def create_api_key(self, user_id: str, name: str, scope: KeyScope = "user") -> tuple[ApiKeyInfo, str]:
        """A new key for an existing user: its listing and the secret, shown once and stored hashed."""
        ...

    def list_api_keys(self, user_id: str) -> list[ApiKeyInfo]:
        """The user's keys, newest first (revoked ones included, marked)."""
        ...

    def revoke_api_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's keys; ``False`` when it is not theirs or unknown."""
        ...

    def authenticate(self, secret: str) -> Principal | None:
        """Who a presented key acts for, or ``None`` (unknown, revoked or malformed)."""
        ...

    def signing_key(self, key_id: str) -> SigningKey | None:
        """A live key by id, for checking the signature of an event; ``None`` if unknown or revoked."""
        ...

    def list_users(self) -> list[UserInfo]:
        """Every user, oldest first (for administrators)."""
        ...

    def count_request(self, user_id: str, bucket: str, window_s: int) -> int:
        """Count one request of ``user_id`` in ``bucket``; return the requests in the current window
        of ``window_s`` seconds including this one (shared by every replica)."""
        ...

    def pending_jobs(self, user_id: str) -> int:
        """How many of the user's jobs are queued or running (ingestion backpressure)."""
        ...

    # -- data lifecycle: deleting sources, erasing users, raw-file retention, export

    def delete_source(self, user_id: str, source_id: str) -> SourceDeletion | None:
        """In ONE transaction: remove every job (stages, events, outbox rows), document and artifact of
        the user's source (all versions) and leave a tombstone so work in flight for it is dropped.
        Artifacts another source still uses are kept.  Returns what is left to remove from the vector
        and object stores; a deletion whose cleanup was not confirmed (:meth:`source_cleaned`) is
        returned again.  ``None`` when the user has no such source (another user's is not theirs)."""
        ...

    def source_cleaned(self, user_id: str, source_id: str) -> list[str]:
        """Record that the deleted source's vectors and objects are gone; queue again the jobs of other
        sources that were duplicates of its content (they are indexed in their own name now) and
        return their ids."""
        ...

    def source_deleted(self, user_id: str, source_id: str, job_id: str | None,
                       submitted_at: datetime | None = None) -> bool:
        """Whether work of ``job_id`` for ``source_id`` is left over from deleting that source: the
        source was deleted, the job no longer exists and the work was submitted before the deletion
        (``None``: unknown, taken as before).  A submission made after the deletion is not."""
        ...

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Remove the user and every row that is theirs, in every table; return the rows removed per
        table.  The same user id can be created again afterwards, as new."""
        ...

    def get_artifact(self, user_id: str, artifact_id: str) -> ArtifactRecord | None:
        """The user's artifact (with ``raw_purged_at``), or ``None``."""
        ...

    def list_artifacts(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[ArtifactRecord]:
        """The user's artifacts ordered by id, from after ``after`` (keyset paging)."""
        ...

    def list_documents(self, user_id: str, *, after: str | None = None, limit: int = 500) -> list[DocumentRecord]:
        """The user's documents, every version, ordered by id, from after ``after``."""
        ...

    def list_conversations(self, user_id: str) -> list[ConversationInfo]:
        """The user's conversations, oldest first."""
        ...

    def raw_expired(self, before: datetime, limit: int = 500) -> list[ArtifactRecord]:
        """Artifacts of any user whose raw bytes are still kept although every job using them finished
        before ``before`` (none is queued or running), oldest first."""
        ...

    def mark_raw_purged(self, user_id: str, artifact_ids: Sequence[str]) -> int:
        """Record that retention removed the raw bytes of these artifacts; return how many changed."""
        ...

    # -- vector indexes: which collection version of a user is searched, and re-embedding into a new one

    def vector_indexes(self, user_id: str | None = None, *, status: IndexStatus | None = None) -> list[VectorIndex]:
        """The user's index versions, oldest first (every user's, by user, when ``None``); only those
        with ``status`` when given."""
        ...

    def ensure_active_index(self, user_id: str, model: str, model_id: str, dense_size: int) -> VectorIndex:
        """The user's active index; a user without one gets version 1, active, with this model
        (:class:`LookupError` when the user does not exist)."""
        ...

    def begin_reindex(self, user_id: str, model: str, model_id: str, dense_size: int, *,
                      keep_old: bool = False) -> VectorIndex:
        """The user's building index for ``model_id``: the one in progress (to resume) or a new version.
        Raises :class:`ValueError` when a re-index to another model is in progress (see
        :meth:`cancel_reindex`) and :class:`LookupError` when the user has no active index."""
        ...

    def claim_reindex(self, user_id: str, version: int, owner: str, lease_s: float) -> VectorIndex | None:
        """Take or renew the lease on a building index for ``lease_s`` seconds; ``None`` when it is
        not building or another owner's lease has not expired."""
        ...

    def reindex_progress(self, user_id: str, version: int, owner: str, *, done: int, total: int,
                         resume_from: str | None, lease_s: float) -> bool:
        """Record a re-index's progress and renew its lease; ``False`` when ``owner`` lost the lease
        (or the index is no longer building): the caller must stop."""
        ...

    def release_reindex(self, user_id: str, version: int, owner: str) -> None:
        """Give up ``owner``'s lease on the index (others may continue it at once)."""
        ...

    def activate_index(self, user_id: str, version: int) -> VectorIndex | None:
        """In ONE transaction: retire the user's active index and make the building ``version`` active.
        Returns the retired index (``None`` when there was none); :class:`LookupError` when
        ``version`` is not a building index of the user."""
        ...

    def cancel_reindex(self, user_id: str) -> VectorIndex | None:
        """Retire the user's building index unfinished; returns it (its collection is the caller's to
        drop), or ``None`` when there is none."""
        ...

    def index_dropped(self, user_id: str, version: int) -> None:
        """Record that a retired index's collection was deleted."""
        ...

    def close(self) -> None:
        """Close the connection pool."""
        ...
