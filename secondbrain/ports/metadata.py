"""The metadata ports, one per role.  Each has a Postgres implementation
(:mod:`secondbrain.stores.postgres`), an in-memory twin (:mod:`secondbrain.stores.memory`) and one
contract suite in ``tests/contracts`` run against both.

Every method that touches user data takes the user id and is scoped by it: a job or source of
another user is reported as absent and never changed, whatever ids an event carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from secondbrain.ports.records import (
    FINISHED_JOB_STATUSES,
    AnswerEndpoint,
    ApiKeyInfo,
    ArtifactRecord,
    ConversationInfo,
    DeadLetterRecord,
    DocumentRecord,
    FailedRemoval,
    FeedInfo,
    IndexStatus,
    JobGone,
    JobView,
    KeyScope,
    OutboxMessage,
    OutboxRow,
    Principal,
    PushSubscription,
    Reminder,
    RequestAuth,
    SigningKey,
    SourceDeletion,
    SourceView,
    SubmitResult,
    Turn,
    UserInfo,
    VectorIndex,
)

if TYPE_CHECKING:
    from secondbrain.stores.migrations import Migration


class Database(Protocol):
    """The database itself: migrations, readiness and the pool every role shares."""

    def migrate(self) -> list[int]:
        """Apply pending versioned migrations; return the versions applied now.  Raises
        :class:`secondbrain.stores.migrations.NewerSchema` (applying nothing) when the database has a
        migration this version does not ship."""
        ...

    def applied_migrations(self) -> dict[int, str]:
        """The migrations the database has (version -> name); empty for a new database."""
        ...

    def pending_migrations(self) -> list[Migration]:
        """The migrations :meth:`migrate` would apply now, in order (raises ``NewerSchema`` as it does)."""
        ...

    def check(self) -> None:
        """Raise if the database does not answer (readiness probe)."""
        ...

    def close(self) -> None:
        """Close the connection pool."""
        ...


class Users(Protocol):
    """Who the users are: created, known, listed."""

    def ensure_user(self, user_id: str, display_name: str | None = None) -> None:
        """Create the user when missing."""
        ...

    def user_exists(self, user_id: str) -> bool:
        """Whether the user is known."""
        ...

    def list_users(self) -> list[UserInfo]:
        """Every user, oldest first (for administrators)."""
        ...


class ApiKeys(Protocol):
    """The users' API keys: created (the secret shown once), listed, revoked, and who a presented key
    acts for, also as the HMAC key of a signed event."""

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


class FeedTokens(Protocol):
    """Calendar feed tokens: a read-only capability for one person's agenda as iCalendar, revocable.  A
    token (``sbf_<feed id>_<secret>``) goes in the feed's address, because calendar apps send no header;
    only its hash is stored and it is shown once."""

    def create(self, user_id: str, name: str, timezone: str) -> tuple[FeedInfo, str]:
        """A new feed of an existing user and its token (shown once)."""
        ...

    def list(self, user_id: str) -> list[FeedInfo]:
        """The user's feeds, newest first (revoked ones included, marked)."""
        ...

    def revoke(self, user_id: str, feed_id: str) -> bool:
        """Revoke one of the user's feeds (idempotent); ``False`` for another user's or an unknown one."""
        ...

    def authenticate(self, token: str) -> FeedInfo | None:
        """The live feed a token opens, or ``None`` (unknown, revoked or malformed)."""
        ...


class Reminders(Protocol):
    """Reminders of agenda lines, one per user and line (the line's stable id): asking again moves it."""

    def put(self, user_id: str, event_id: str, title: str, kind: str, starts_at: datetime, remind_at: datetime,
            timezone: str) -> Reminder:
        """Keep a reminder of one agenda line (the same line again: moved, and to be sent again)."""
        ...

    def listed(self, user_id: str) -> list[Reminder]:
        """The user's reminders, the next first."""
        ...

    def delete(self, user_id: str, reminder_id: str) -> bool:
        """Remove one of the user's reminders; ``False`` for another user's or an unknown one."""
        ...

    def due(self, now: datetime, limit: int = 100) -> list[Reminder]:
        """Reminders of every user due by ``now`` and not sent yet, the oldest first."""
        ...

    def mark_sent(self, reminder_id: str, at: datetime) -> None:
        """Note that a reminder went."""
        ...


class PushSubscriptions(Protocol):
    """The browsers each user turned reminders on in (web push), one per user and push endpoint: subscribing
    again from the same browser replaces its keys."""

    def put(self, user_id: str, endpoint: str, p256dh: str, auth: str) -> PushSubscription:
        """Keep a browser's subscription (the same endpoint again: its new keys, the same id)."""
        ...

    def listed(self, user_id: str) -> list[PushSubscription]:
        """The user's subscriptions, the oldest first."""
        ...

    def delete(self, user_id: str, subscription_id: str) -> bool:
        """Remove one of the user's subscriptions; ``False`` for another user's or an unknown one."""
        ...


class Sessions(Protocol):
    """The web page's sign-in: one-time sign-in links and the sessions opened with them or with a key."""

    def create_login_link(self, key_id: str, ttl_s: int) -> str:
        """A one-time sign-in token for the web page, acting as the live key ``key_id`` (only its hash is
        stored); ``KeyError`` for an unknown or revoked key."""
        ...

    def open_session(self, *, key_secret: str | None = None, link_token: str | None = None,
                     ttl_s: int) -> tuple[str, Principal] | None:
        """A new web session (its secret and principal) from a live key or an unused, unexpired login
        token (used up by this call); ``None`` when neither is valid."""
        ...

    def authenticate_session(self, secret: str) -> Principal | None:
        """Who a live session acts for (its key still live), or ``None``."""
        ...

    def close_session(self, secret: str) -> None:
        """End a session (idempotent)."""
        ...


class RateCounts(Protocol):
    """Per-user request windows, shared by every replica; a request's check (who its key or session
    acts for) counts it in the same round trip."""

    def count_request(self, user_id: str, bucket: str, window_s: int) -> int:
        """Count one request of ``user_id`` in ``bucket``; return the requests in the current window
        of ``window_s`` seconds including this one (shared by every replica)."""
        ...

    def authenticate_request(self, *, key: str | None = None, session: str | None = None, bucket: str,
                             window_s: int) -> RequestAuth | None:
        """One request's check, in one round trip: who its key (or web session) acts for, the request counted
        in the user's fixed window for ``bucket``, and the user's unfinished captures; ``None`` when the
        key or session is not live."""
        ...


class Intake(Protocol):
    """What comes in: an artifact or a URL, recorded with its job and outgoing messages in one transaction."""

    def submit_many(self, submissions: Sequence[tuple[ArtifactRecord, str, Sequence[OutboxMessage], str | None]], *,
                    lease_s: float | None = None) -> list[SubmitResult | Exception]:
        """:meth:`submit` of several ``(artifact, job_id, outbox, request_hash)`` in one write (an import's
        batch): each one's result, or the :class:`~secondbrain.ports.UnknownUser` or
        :class:`IdempotencyConflict` it met."""
        ...

    def submit(self, artifact: ArtifactRecord, job_id: str, outbox: Sequence[OutboxMessage], *,
               request_hash: str | None = None, lease_s: float | None = None) -> SubmitResult:
        """In ONE transaction: upsert the artifact, create the job (stages pending) and queue ``outbox``;
        the source's older unfinished jobs of other bytes end as ``superseded`` (the newest submission is
        what the source becomes).  The user is created when missing, but an erased user is not
        (:class:`~secondbrain.ports.UnknownUser`: a submission in flight while they were erased).
        Resubmitting the same ``job_id`` changes nothing and returns ``created=False``; with another
        ``request_hash`` than the first time it raises :class:`IdempotencyConflict`.  With ``lease_s`` the
        rows are queued already leased to the caller for that long (their ids in ``leased``): a relay in
        the same process publishes them without claiming them first."""
        ...

    def register_external(self, artifact: ArtifactRecord, job_id: str) -> SubmitResult:
        """Same as :meth:`submit` without outbox rows: for artifacts published straight to Kafka."""
        ...

    def request_url(self, user_id: str, job_id: str, url: str, title: str | None,
                    outbox: Sequence[OutboxMessage], *, request_hash: str | None = None,
                    lease_s: float | None = None) -> SubmitResult:
        """In ONE transaction: create a URL job (no artifact yet; stages fetch..embed pending) and
        queue ``outbox``.  An existing ``job_id`` changes nothing and returns ``created=False`` (or
        raises :class:`IdempotencyConflict` for another ``request_hash``); ``lease_s`` as for
        :meth:`submit`."""
        ...

    def attach_artifact(self, artifact: ArtifactRecord, job_id: str) -> bool:
        """Record the artifact a URL job fetched and link the job to it; ``False`` when the job is
        unknown or another user's (nothing is written then)."""
        ...


StageOutcome = Literal["done", "gone", "superseded", "ended"]
JobState = Literal["live", "ended", "gone"]


def job_state_of(status: str | None) -> JobState:
    """The state of a job whose status is ``status`` (``None``: no such job of the user)."""
    return "gone" if status is None else "ended" if status in FINISHED_JOB_STATUSES else "live"


class JobFence(Protocol):
    """What keeps a deletion, an erasure or a newer submission from racing a stage's writes: a stage writes
    outside the job ledger (objects, vectors) only while it holds its job's fence."""

    def hold(self, user_id: str, job_id: str) -> AbstractContextManager[None]:
        """While the block runs, the job stays as it is: deleting its source, erasing its user or
        superseding it waits until the block ends, and afterwards removes what the block wrote.
        Raises :class:`~secondbrain.ports.JobGone` at entry when the job is not the user's and
        queued or running (deleted, erased, finished, replaced), and nothing may be written then."""
        ...

    def hold_live(self, user_id: str, job_ids: Sequence[str]) -> AbstractContextManager[dict[str, JobState]]:
        """The fences of several jobs of the user at once (one round trip instead of one per job): the block
        gets each job's state and holds the fence of every ``live`` one, as :meth:`hold` does; nothing may be
        written for the others (``ended`` or ``gone``)."""
        ...


class JobLedger(Protocol):
    """The job ledger: the stages of each job, their transitions and the event log.

    A job's state only moves forward: a finished stage is never set back by a late progress write, and
    a finished job (succeeded, failed, duplicate, superseded) never changes again."""

    def job_state(self, user_id: str, job_id: str) -> JobState:
        """``live`` (queued or running), ``ended`` (finished: succeeded, failed, duplicate or superseded)
        or ``gone`` (no such job of the user: deleted with its source, the user erased, or never theirs)."""
        ...

    def job_states(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobState]:
        """:meth:`job_state` of several jobs of the user in one statement (a batch's admission)."""
        ...

    def finish_stages(self, user_id: str, stage: str,
                      jobs: Sequence[tuple[str, str | None, int]]) -> dict[str, StageOutcome]:
        """:meth:`finish_stage` for several jobs of the user, ``(job_id, document_id, attempt)`` each, in one
        transaction sent at once (a batch's bookkeeping): each job's outcome, as :meth:`finish_stage` says it."""
        ...

    def finish_stage(self, user_id: str, job_id: str, stage: str, *, document_id: str | None = None,
                     detail: str | None = None, attempt: int = 1) -> StageOutcome:
        """Record ``stage`` done at ``attempt`` (the job succeeds once every stage has) and say, in the same write,
        whether its work is still wanted: ``done`` (publish it), ``gone`` (the job was deleted with its
        source, or never was the user's), ``superseded`` (``document_id`` was replaced by a newer
        version of its source) or ``ended`` (the job already failed or ended as a duplicate)."""
        ...

    def stages_started(self, user_id: str, stage: str, job_ids: Sequence[str]) -> None:
        """:meth:`stage_started` at the first attempt for several jobs of the user, in one write (a batch)."""
        ...

    def stage_started(self, user_id: str, job_id: str, stage: str, attempt: int) -> None:
        """Mark ``stage`` running (job becomes running), unless the stage has finished already (a progress
        write landing after the stage's own finish changes nothing)."""
        ...

    def stage_succeeded(self, user_id: str, job_id: str, stage: str, detail: str | None = None) -> None:
        """Mark ``stage`` done; when it is the last stage the job succeeds."""
        ...

    def stage_retrying(self, user_id: str, job_id: str, stage: str, attempt: int, reason: str) -> None:
        """Record a retryable failure of ``stage`` (not of a stage that has finished)."""
        ...

    def job_failed(self, user_id: str, job_id: str, stage: str, reason: str, attempt: int | None = None, *,
                   retryable: bool = False) -> None:
        """Mark the stage and the job failed with a human-readable ``reason``; ``retryable``: trying the
        capture again may succeed (the failure was of the moment or of the server's set-up)."""
        ...

    def job_duplicate(self, user_id: str, job_id: str, original_job_id: str) -> None:
        """End the job as a duplicate of ``original_job_id``."""
        ...

    def get_job(self, user_id: str, job_id: str) -> JobView | None:
        """The job with its stages and events, or ``None`` (also for another user's job)."""
        ...

    def get_jobs(self, user_id: str, job_ids: Sequence[str]) -> dict[str, JobView]:
        """:meth:`get_job` of several jobs of the user in one statement: those found, by id."""
        ...

    def job_events(self, user_id: str, job_id: str) -> list[dict[str, Any]]:
        """The job's event log, oldest first (empty for another user's job)."""
        ...

    def pending_jobs(self, user_id: str) -> int:
        """How many of the user's jobs are queued or running (ingestion backpressure); superseded jobs
        do not count."""
        ...

    def note_key_job(self, user_id: str, key_id: str, job_id: str) -> None:
        """Remember that the key ``key_id`` made the user's job ``job_id`` (a capture key follows only its own
        jobs); nothing for a job or a key that is not the user's."""
        ...

    def made_by_key(self, user_id: str, key_id: str, job_id: str) -> bool:
        """Whether the user's key ``key_id`` made the job (see :meth:`note_key_job`)."""
        ...

    # -- data lifecycle: deleting sources, erasing users, raw-file retention, export

    def find_original_job(self, user_id: str, artifact_id: str, job_id: str) -> str | None:
        """Another job of the user that already extracted the same bytes (its document is current),
        so ``job_id`` is a duplicate of it; ``None`` when there is none."""
        ...


class Outbox(Protocol):
    """The transactional outbox the relay publishes to Kafka."""

    def claim_outbox(self, limit: int, lease_seconds: float = 30.0, published: Sequence[int] = ()) -> list[OutboxRow]:
        """Mark ``published`` rows published (the previous claim's, sent meanwhile), then lease up to
        ``limit`` unpublished messages (oldest first, skipping rows leased by others)."""
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


class Catalog(Protocol):
    """Artifacts, documents and their versions: what a user has, and what each source is now."""

    def save_document(self, doc: DocumentRecord, *, job_id: str | None = None) -> int:
        """Insert or replace a document (idempotent on ``document_id``); return its version.  With
        ``job_id``: only while that job is queued or running, atomically with a newer submission that
        supersedes it or a deletion (:class:`~secondbrain.ports.JobGone` otherwise, nothing saved)."""
        ...

    def save_documents(self, documents: Sequence[tuple[DocumentRecord, str | None]]) -> list[int | Exception]:
        """:meth:`save_document` of several ``(document, job_id)`` in one write: each one's version, or the
        :class:`~secondbrain.ports.JobGone` or :class:`~secondbrain.ports.ArtifactGone` that kept it out."""
        ...

    def set_chunk_count(self, user_id: str, document_id: str, chunk_count: int) -> None:
        """Record how many chunks a document was indexed as."""
        ...

    def get_document(self, user_id: str, document_id: str) -> DocumentRecord | None:
        """A document of the user, or ``None``."""
        ...

    def list_sources(self, user_id: str, limit: int = 50, offset: int = 0, *, source_id: str | None = None,
                     modality: str | None = None, status: str | None = None, start: datetime | None = None,
                     end: datetime | None = None, failed_once: bool = False,
                     duplicates: bool = True, tags: Sequence[str] | None = None) -> list[SourceView]:
        """The user's jobs with their artifact and document, newest first; optionally only one source's
        (every version), one modality, one job status, or a captured time in [start, end) (a job whose
        captured time is not known yet counts as captured when it was submitted).  ``failed_once``: a
        failed job is left out when a newer job of the same source exists (its retry, or a later
        upload), so each failed file is listed once.  ``duplicates=False`` leaves out jobs that ended as a
        copy of bytes already kept.  ``tags``: only sources tagged with every one."""
        ...

    # -- tags: a list of names per source (secondbrain.tags), the source's whatever its version

    def known_sources(self, user_id: str, source_ids: Sequence[str]) -> list[str]:
        """Which of ``source_ids`` are sources of the user (each once, sorted)."""
        ...

    def source_tags(self, user_id: str, source_ids: Sequence[str]) -> dict[str, list[str]]:
        """The tags of each of these sources of the user (sorted; a source without tags is left out)."""
        ...

    def set_source_tags(self, user_id: str, source_id: str, tags: Sequence[str]) -> None:
        """The source's tags become exactly ``tags`` (normalised already)."""
        ...

    def add_source_tags(self, user_id: str, tags: Mapping[str, Sequence[str]]) -> None:
        """Each source (key) gets these tags (normalised already) besides those it has, in one statement."""
        ...

    def tag_sources(self, user_id: str, tag: str, source_ids: Sequence[str], *, add: bool) -> int:
        """Add ``tag`` to (or with ``add=False`` remove it from) each of these sources of the user; return
        how many sources changed.  Ids that are not the user's sources are left alone."""
        ...

    def tag_counts(self, user_id: str) -> list[tuple[str, int]]:
        """Every tag of the user with how many sources have it, most used first, then by name."""
        ...

    def sources_tagged(self, user_id: str, tags: Sequence[str]) -> list[str]:
        """The ids of the user's sources tagged with every one of ``tags`` (sorted)."""
        ...

    def retitle_source(self, user_id: str, source_id: str, title: str) -> bool:
        """Give the source's current version (its document, and the job that made it) a new title; False
        when the source has no current version yet."""
        ...

    def documents_between(self, user_id: str, start: datetime | None, end: datetime | None, *,
                          field: Literal["captured_at", "ingested_at"] = "captured_at", limit: int = 500,
                          modalities: Sequence[str] | None = None) -> list[DocumentRecord]:
        """The user's current documents whose ``field`` lies in [start, end), newest first."""
        ...

    def document_indexed(self, user_id: str, document_id: str, source_id: str, chunk_count: int, *,
                         job_id: str | None = None) -> list[str]:
        """The document is searchable: record its chunk count and mark older versions of its source
        superseded, in one write; return every older version's id (their passages leave the index).
        With ``job_id``: only while that job is queued or running (:class:`~secondbrain.ports.JobGone`
        otherwise, nothing recorded)."""
        ...

    def documents_indexed(self, user_id: str,
                          documents: Sequence[tuple[str, str, int, str | None]]) -> list[list[str] | JobGone]:
        """:meth:`document_indexed` for several documents of the user, ``(document_id, source_id, chunk_count,
        job_id)`` each, in one transaction sent at once: for each, in order, the older versions' ids, or the
        :class:`~secondbrain.ports.JobGone` of a job no longer queued or running (nothing recorded for it)."""
        ...

    def supersede_older(self, user_id: str, source_id: str, document_id: str) -> list[str]:
        """Mark every older version of the source superseded by ``document_id``; return the ids of
        all older versions (their chunks must leave the vector index).  Idempotent."""
        ...

    def is_superseded(self, user_id: str, document_id: str) -> bool:
        """Whether a newer version of the document's source exists (or the document is gone)."""
        ...

    def superseded(self, user_id: str, document_ids: Sequence[str]) -> set[str]:
        """Those of ``document_ids`` that :meth:`is_superseded` would say yes to, asked in one go (an import
        sent again checks a whole batch of items it finds unchanged)."""
        ...

    def sources_under(self, user_id: str, uri_prefix: str, limit: int = 10_000) -> list[str]:
        """The ids of the user's sources whose ``source_uri`` starts with ``uri_prefix`` (at most ``limit``,
        sorted): the records a calendar import once made per occurrence of a series, ``import:ics:<uid>/...``."""
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

    def raw_expired(self, before: datetime, limit: int = 500) -> list[ArtifactRecord]:
        """Artifacts of any user whose raw bytes are still kept although every job using them finished
        before ``before`` (none is queued or running), oldest first."""
        ...

    def mark_raw_purged(self, user_id: str, artifact_ids: Sequence[str]) -> int:
        """Record that retention removed the raw bytes of these artifacts; return how many changed."""
        ...

    # -- vector indexes: which collection version of a user is searched, and re-embedding into a new one


class Lifecycle(Protocol):
    """Deleting a source (leaving a tombstone so in-flight work is dropped) and erasing a user."""

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

    def remove_failed(self, user_id: str, job_id: str) -> FailedRemoval | None:
        """In ONE transaction: remove the user's failed job and the other failed jobs of its source
        (stages, events, outbox rows), and the artifacts of theirs that nothing else uses (no other job,
        no document).  Returns the object keys left to remove; ``None`` when the user has no such job;
        :class:`~secondbrain.ports.JobNotFailed` when the job has not failed."""
        ...


class Conversations(Protocol):
    """Conversations and their turns."""

    def add_turn(self, user_id: str, conversation_id: str, role: Literal["user", "assistant"], content: str,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Append a turn (the conversation is created on first use); ``ForeignConversation`` when
        the id belongs to another user.  An answer whose ``meta["sources"]`` shows a source deleted
        meanwhile (while the answer was written) is stored as the deletion leaves such answers."""
        ...

    def get_turns(self, user_id: str, conversation_id: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns of the user's conversation, oldest first (empty for others')."""
        ...

    def list_conversations(self, user_id: str) -> list[ConversationInfo]:
        """The user's conversations, oldest first."""
        ...

    def recent_conversations(self, user_id: str, limit: int = 100, *, matching: str | None = None
                             ) -> list[ConversationInfo]:
        """The user's last ``limit`` conversations, the one with the latest turn first; ``matching``: only
        those whose title or one of whose questions contains these words (case-insensitive, as typed)."""
        ...

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationInfo | None:
        """One of the user's conversations; None for a missing one and for another user's alike."""
        ...

    def rename_conversation(self, user_id: str, conversation_id: str, title: str | None) -> bool:
        """Give the conversation a title (None: back to its first question); False when it is not the user's."""
        ...

    def delete_conversation(self, user_id: str, conversation_id: str) -> bool:
        """Remove the conversation and its turns; False when it is not the user's."""
        ...

    def import_conversation(self, user_id: str, conversation_id: str, title: str | None, created_at: datetime,
                            turns: Sequence[Turn]) -> bool:
        """Keep a conversation brought from elsewhere (an export) with its own times, title and turns; False
        (nothing written) when the user has it already; ``ForeignConversation`` when the id is another's."""
        ...


class IndexVersions(Protocol):
    """The vector index versions of each user and the leases of a re-index."""

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

    def hold_reindex(self, user_id: str, version: int, owner: str) -> AbstractContextManager[None]:
        """The re-index's fence: while the block writes a page into the building collection, erasing the
        user, cancelling or switching the re-index and another owner's claim wait until it ends (and
        then remove what it wrote).  Raises :class:`~secondbrain.ports.LeaseLost` at entry when the
        index is not building or not leased to ``owner``; nothing may be written then.  The block must
        not record progress (that row is the one held)."""
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


class ServerSettings(Protocol):
    """What an administrator changes while the server runs (one value for the whole server, not per
    user): the endpoint answers come from."""

    def answer_endpoint(self) -> AnswerEndpoint | None:
        """The stored answer endpoint, with its API key; ``None`` when none is set."""
        ...

    def set_answer_endpoint(self, base_url: str, model: str, api_key: str | None, *,
                            keep_key: bool = False) -> AnswerEndpoint:
        """Store the answer endpoint (replacing the one before).  ``api_key=None`` stores none, unless
        ``keep_key``: then the stored key stays (changing the model need not resend the key)."""
        ...

    def clear_answer_endpoint(self) -> bool:
        """Forget the stored endpoint (the start-up one applies again); ``False`` when none was set."""
        ...


class DeadLetters(Protocol):
    """The refused and failed events, kept so a producer can read why (the broker's dead-letter topic
    may be gone: the embedded broker keeps its topics in memory)."""

    def record_dead_letter(self, letter: DeadLetterRecord) -> bool:
        """Keep ``letter`` (with the time now); the same ``letter_id`` again changes nothing.  ``False``
        (nothing kept) when the letter names an erased user."""
        ...

    def list_dead_letters(self, user_id: str | None, limit: int = 100) -> list[DeadLetterRecord]:
        """The newest letters first: those of events naming ``user_id`` or signed with one of that user's
        keys; every letter when ``user_id`` is ``None`` (administrators)."""
        ...


class MetadataStore(Protocol):
    """Every role at once, by attribute (what a process built on one database has); callers take the roles
    they use.  The store itself only migrates, answers readiness and closes."""

    def migrate(self) -> list[int]:
        """Apply pending migrations; the versions applied."""
        ...

    def check(self) -> None:
        """Raise if the database does not answer (readiness)."""
        ...

    def close(self) -> None:
        """Release the store's connections."""
        ...

    @property
    def database(self) -> Database:
        """The database role."""
        ...

    @property
    def users(self) -> Users:
        """The users role."""
        ...

    @property
    def api_keys(self) -> ApiKeys:
        """The API keys role."""
        ...

    @property
    def feed_tokens(self) -> FeedTokens:
        """The calendar feed tokens role."""
        ...

    @property
    def reminders(self) -> Reminders:
        """The agenda reminders role."""
        ...

    @property
    def push_subscriptions(self) -> PushSubscriptions:
        """The web push subscriptions role."""
        ...

    @property
    def sessions(self) -> Sessions:
        """The web sessions role."""
        ...

    @property
    def rate_counts(self) -> RateCounts:
        """The request windows role."""
        ...

    @property
    def intake(self) -> Intake:
        """The intake role."""
        ...

    @property
    def jobs(self) -> JobLedger:
        """The jobs role."""
        ...

    @property
    def outbox(self) -> Outbox:
        """The outbox role."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The catalog role."""
        ...

    @property
    def lifecycle(self) -> Lifecycle:
        """The lifecycle role."""
        ...

    @property
    def conversations(self) -> Conversations:
        """The conversations role."""
        ...

    @property
    def indexes(self) -> IndexVersions:
        """The indexes role."""
        ...

    @property
    def server_settings(self) -> ServerSettings:
        """The server settings role."""
        ...

    @property
    def dead_letters(self) -> DeadLetters:
        """The dead letters role."""
        ...

    @property
    def fence(self) -> JobFence:
        """The job fence (the stages' writes outside the ledger)."""
        ...
