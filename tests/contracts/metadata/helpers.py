"""Records and steps the metadata contract tests build their cases from (through the ports only)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

import psycopg

from secondbrain import ids
from secondbrain.ports import (
    ApiKeys,
    ArtifactRecord,
    Catalog,
    Conversations,
    Database,
    DeadLetters,
    DocumentRecord,
    FeedTokens,
    IndexVersions,
    Intake,
    JobLedger,
    Lifecycle,
    Outbox,
    OutboxMessage,
    PushSubscriptions,
    RateCounts,
    Reminders,
    ServerSettings,
    Sessions,
    Users,
)
from secondbrain.stages import FILE_STAGES as STAGES
from secondbrain.stores.memory import IntegrityError
from secondbrain.topic_names import ARTIFACTS_SUBMITTED, TopicNames

# The deployment's topic names the stores are built with (the outbox finds submissions by them).
TOPICS = TopicNames("sb.")
SUBMITTED = TOPICS(ARTIFACTS_SUBMITTED)

# What a store raises for a write its schema refuses (a constraint or a foreign key): Postgres's
# integrity errors, the in-memory twin's IntegrityError.
REFUSED = (psycopg.IntegrityError, IntegrityError)


class Stores(Protocol):
    """A composed metadata store: one attribute per role."""

    @property
    def database(self) -> Database: ...
    @property
    def users(self) -> Users: ...
    @property
    def api_keys(self) -> ApiKeys: ...
    @property
    def feed_tokens(self) -> FeedTokens: ...
    @property
    def reminders(self) -> Reminders: ...
    @property
    def push_subscriptions(self) -> PushSubscriptions: ...
    @property
    def sessions(self) -> Sessions: ...
    @property
    def rate_counts(self) -> RateCounts: ...
    @property
    def intake(self) -> Intake: ...
    @property
    def jobs(self) -> JobLedger: ...
    @property
    def outbox(self) -> Outbox: ...
    @property
    def catalog(self) -> Catalog: ...
    @property
    def lifecycle(self) -> Lifecycle: ...
    @property
    def conversations(self) -> Conversations: ...
    @property
    def indexes(self) -> IndexVersions: ...
    @property
    def server_settings(self) -> ServerSettings: ...
    def dead_letters(self) -> DeadLetters: ...


def artifact(user: str = "alice", n: int = 0, *, title: str | None = None,
             captured_at: datetime | None = None) -> ArtifactRecord:
    content = f"content {user} {n}".encode()
    sha = ids.sha256_hex(content)
    uri = f"file:///notes/{n}.md"
    return ArtifactRecord(
        artifact_id=ids.artifact_id(user, sha), user_id=user, source_id=ids.source_id(user, uri),
        source_uri=uri, object_key=f"users/{user}/artifacts/{sha}", content_type="text/markdown",
        size_bytes=len(content), sha256=sha, filename=f"{n}.md", title=title, captured_at=captured_at,
        submitted_at=datetime.now(UTC), producer="test", attributes={"n": str(n)},
    )


def submission(art: ArtifactRecord, job_id: str) -> OutboxMessage:
    return OutboxMessage(topic=SUBMITTED, key=art.artifact_id.encode(), value=job_id.encode(),
                         headers=(("job_id", job_id.encode()), ("bin", b"\x00\xff")))


def submit(stores: Stores, user: str = "alice", n: int = 0, **kw: Any) -> tuple[str, ArtifactRecord]:
    art = artifact(user, n, **kw)
    job = ids.job_id(user, f"req-{n}")
    result = stores.intake.submit(art, job, [submission(art, job)])
    assert result.created
    return job, art


def document(art: ArtifactRecord, *, chunk_count: int | None = None, title: str = "Doc") -> DocumentRecord:
    return DocumentRecord(
        document_id=ids.document_id(art.artifact_id), user_id=art.user_id, artifact_id=art.artifact_id,
        source_id=art.source_id, title=title, modality="text", content_type=art.content_type,
        captured_at=datetime(2024, 5, 1, 12, tzinfo=UTC), captured_at_source="frontmatter",
        ingested_at=datetime.now(UTC), char_count=42, chunk_count=chunk_count, metadata={"lang": "en"},
    )


def version_of(user: str, uri: str, content: str, *, submitted_at: datetime | None = None) -> ArtifactRecord:
    """An artifact of the source ``uri`` (new content for the same uri is its next version)."""
    sha = ids.sha256_hex(content.encode())
    aid = ids.artifact_id(user, sha)
    return ArtifactRecord(
        artifact_id=aid, user_id=user, source_id=ids.source_id(user, uri), source_uri=uri,
        object_key=f"users/{user}/artifacts/{aid}", content_type="text/plain", size_bytes=len(content),
        sha256=sha, filename=uri.rsplit("/", 1)[-1], title=None, captured_at=None,
        submitted_at=submitted_at or datetime.now(UTC), producer="test")


def ingest(stores: Stores, art: ArtifactRecord, *, extract: bool = True) -> str:
    """Submit like the gateway and, when ``extract``, record its document and finish its job."""
    job = ids.job_id(art.user_id, f"{art.source_uri}:{art.sha256}:{time.monotonic_ns()}")
    assert stores.intake.submit(art, job, [submission(art, job)]).created
    if extract:
        stores.catalog.save_document(replace(document(art), user_id=art.user_id))
        for stage in STAGES:
            stores.jobs.stage_started(art.user_id, job, stage, 1)
            stores.jobs.stage_succeeded(art.user_id, job, stage)
    return job


def every_transition(stores: Stores, user: str, job: str) -> None:
    """Apply each kind of job transition once (callers check that none of them took effect)."""
    stores.jobs.stage_started(user, job, "extract", 1)
    stores.jobs.stage_retrying(user, job, "chunk", 2, "replayed")
    stores.jobs.stage_succeeded(user, job, "embed")
    stores.jobs.job_failed(user, job, "embed", "late failure")
    stores.jobs.job_duplicate(user, job, "other")


def run_all_stages(stores: Stores, job: str, user: str = "alice") -> None:
    for stage in STAGES:
        stores.jobs.stage_started(user, job, stage, 1)
        stores.jobs.stage_succeeded(user, job, stage, f"{stage} ok")


def unpublished(stores: Stores) -> list[bytes]:
    """Claim every message waiting in the outbox and give them back; their values, in id order."""
    rows = stores.outbox.claim_outbox(10_000, lease_seconds=-1)  # an expired lease: claimable again at once
    return [r.message.value for r in rows]


def in_threads(n: int, fn: Callable[[int], Any]) -> list[Any]:
    """Run ``fn(i)`` on ``n`` threads released together; re-raise the first error."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    return results


def waits_while_held(hold: Callable[[], AbstractContextManager[Any]], change: Callable[[], object]) -> None:
    """``change()`` started while a fence (``hold()``) is held waits until the fence is let go."""
    held, release, done = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with hold():
                held.set()
                release.wait(10)
        except BaseException as exc:
            errors.append(exc)
            held.set()

    def changer() -> None:
        held.wait(10)
        change()
        done.set()

    threads = [threading.Thread(target=writer), threading.Thread(target=changer)]
    for t in threads:
        t.start()
    assert held.wait(10) and not errors, errors
    time.sleep(0.3)
    assert not done.is_set(), "the change went ahead while the fence was held"
    release.set()
    assert done.wait(10), "the change never happened"
    for t in threads:
        t.join(10)
