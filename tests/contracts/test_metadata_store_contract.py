"""Contract of :class:`secondbrain.ports.MetadataStore`, run against every real backend.

Backends: the machine's PostgreSQL (``SB_TEST_PG_DSN`` or 127.0.0.1:5432; skipped only
when nothing listens there) and an embedded ``pgserver`` (always).  Every test gets a
freshly created database.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from secondbrain import ids
from secondbrain.ports import (
    FILE_STAGES as STAGES,
)
from secondbrain.ports import (
    ArtifactRecord,
    DocumentRecord,
    MetadataStore,
    OutboxMessage,
    Principal,
)
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.migrations import load_migrations
from tests.pg import embedded_server, fresh_database, machine_dsn

SUBMITTED = "sb.artifacts.submitted"
ALL_VERSIONS = [m.version for m in load_migrations()]

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def embedded_dsn() -> Iterator[str]:
    """One embedded PostgreSQL for the whole session.

    Its data lives in its own temp dir, not pytest's basetemp: concurrent pytest runs prune
    old basetemps and would delete a running server's data directory.
    """
    with embedded_server() as dsn:
        yield dsn


@pytest.fixture(scope="session", params=["server", "embedded"])
def base_dsn(request: pytest.FixtureRequest) -> str:
    """DSN of the backend under test; databases are created on it."""
    if request.param == "server":
        dsn = machine_dsn()
        if dsn is None:
            pytest.skip("no PostgreSQL server: nothing listens on 127.0.0.1:5432 and SB_TEST_PG_DSN is unset")
        return dsn
    return str(request.getfixturevalue("embedded_dsn"))


@pytest.fixture
def dsn(base_dsn: str) -> Iterator[str]:
    """A fresh, empty database."""
    with fresh_database(base_dsn) as d:
        yield d


@pytest.fixture
def store(dsn: str) -> Iterator[PostgresMetadataStore]:
    """A migrated store on a fresh database."""
    s = PostgresMetadataStore(dsn, min_size=1, max_size=6)
    s.migrate()
    yield s
    s.close()


# --------------------------------------------------------------------------- helpers


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


def submit(store: PostgresMetadataStore, user: str = "alice", n: int = 0,
           **kw: Any) -> tuple[str, ArtifactRecord]:
    art = artifact(user, n, **kw)
    job = ids.job_id(user, f"req-{n}")
    result = store.submit(art, job, [submission(art, job)])
    assert result.created
    return job, art


def scalar(dsn: str, query: str, *params: Any) -> Any:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query.encode(), params or None).fetchone()
        return row[0] if row else None


def count(dsn: str, table: str) -> int:
    return int(scalar(dsn, f"SELECT count(*) FROM {table}"))


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


def every_transition(store: PostgresMetadataStore, user: str, job: str) -> None:
    """Apply each kind of job transition once (callers check that none of them took effect)."""
    store.stage_started(user, job, "extract", 1)
    store.stage_retrying(user, job, "chunk", 2, "replayed")
    store.stage_succeeded(user, job, "embed")
    store.job_failed(user, job, "embed", "late failure")
    store.job_duplicate(user, job, "other")


def run_all_stages(store: PostgresMetadataStore, job: str) -> None:
    for stage in STAGES:
        store.stage_started("alice", job, stage, 1)
        store.stage_succeeded("alice", job, stage, f"{stage} ok")


# --------------------------------------------------------------------------- migrations


def test_is_a_metadata_store(store: PostgresMetadataStore) -> None:
    assert isinstance(store, MetadataStore)
    store.check()


def test_migrations_apply_once_and_are_idempotent(dsn: str) -> None:
    with PostgresMetadataStore(dsn) as s:
        assert s.migrate() == ALL_VERSIONS
        assert s.migrate() == []
    with PostgresMetadataStore(dsn) as s:
        assert s.migrate() == []
    assert count(dsn, "schema_migrations") == len(ALL_VERSIONS)
    assert scalar(dsn, "SELECT name FROM schema_migrations WHERE version = 1") == "init"


def test_concurrent_migrate_does_not_fail(dsn: str) -> None:
    stores = [PostgresMetadataStore(dsn) for _ in range(3)]
    try:
        results = in_threads(3, lambda i: stores[i].migrate())
    finally:
        for s in stores:
            s.close()
    applied = sorted(v for r in results for v in r)
    assert applied == ALL_VERSIONS  # each version applied by exactly one of them
    assert count(dsn, "schema_migrations") == len(ALL_VERSIONS)


# --------------------------------------------------------------------------- users


def test_users(store: PostgresMetadataStore) -> None:
    assert not store.user_exists("u1")
    store.ensure_user("u1")
    store.ensure_user("u1", "Una")
    store.ensure_user("u1", "Other")
    assert store.user_exists("u1")
    assert not store.user_exists("u2")


# --------------------------------------------------------------------------- submit


def test_submit_creates_job_stages_outbox_and_event(store: PostgresMetadataStore, dsn: str) -> None:
    job, art = submit(store, title="Notes")
    assert store.user_exists("alice")
    view = store.get_job("alice", job)
    assert view is not None
    assert (view.status, view.artifact_id, view.title, view.source_uri) == (
        "queued", art.artifact_id, "Notes", art.source_uri)
    assert [s.stage for s in view.stages] == list(STAGES)
    assert all(s.status == "pending" and s.attempts == 0 for s in view.stages)
    assert view.finished_at is None and view.error is None
    events = store.job_events("alice", job)
    assert [(e["stage"], e["status"]) for e in events] == [("gateway", "queued")]
    assert set(events[0]) >= {"stage", "status", "detail", "attempt", "at"}
    assert count(dsn, "outbox") == 1
    assert scalar(dsn, "SELECT job_id FROM outbox") == job
    assert scalar(dsn, "SELECT attributes->>'n' FROM artifacts") == "0"


def test_duplicate_job_id_is_idempotent(store: PostgresMetadataStore, dsn: str) -> None:
    job, art = submit(store)
    again = store.submit(art, job, [submission(art, job), submission(art, job)])
    assert (again.created, again.job_id, again.artifact_id) == (False, job, art.artifact_id)
    assert count(dsn, "outbox") == 1
    assert count(dsn, "jobs") == 1
    assert count(dsn, "job_stages") == len(STAGES)
    assert len(store.job_events("alice", job)) == 1


def test_concurrent_duplicate_submits_create_one_job(store: PostgresMetadataStore, dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "same")
    results = in_threads(4, lambda i: store.submit(art, job, [submission(art, job)]))
    assert sorted(r.created for r in results) == [False, False, False, True]
    assert count(dsn, "outbox") == 1
    assert count(dsn, "artifacts") == 1


def test_same_artifact_twice_keeps_one_artifact_row(store: PostgresMetadataStore, dsn: str) -> None:
    art = artifact()
    j1, j2 = ids.job_id("alice", "a"), ids.job_id("alice", "b")
    assert store.submit(art, j1, [submission(art, j1)]).created
    assert store.submit(art, j2, [submission(art, j2)]).created
    assert count(dsn, "artifacts") == 1
    assert count(dsn, "jobs") == 2
    assert count(dsn, "outbox") == 2


def test_failed_submit_leaves_nothing(store: PostgresMetadataStore, dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "bad")
    bad = OutboxMessage(topic="", key=b"k", value=b"v")  # violates the non-empty topic check
    with pytest.raises(psycopg.errors.CheckViolation):
        store.submit(art, job, [submission(art, job), bad])
    for table in ("users", "artifacts", "jobs", "job_stages", "job_events", "outbox"):
        assert count(dsn, table) == 0, table
    assert store.get_job("alice", job) is None
    # The store is still usable and the same submission now succeeds.
    assert store.submit(art, job, [submission(art, job)]).created


def test_register_external_has_no_outbox(store: PostgresMetadataStore, dsn: str) -> None:
    art = artifact("bob")
    job = ids.job_id("bob", "ext")
    assert store.register_external(art, job).created
    assert not store.register_external(art, job).created
    assert count(dsn, "outbox") == 0
    view = store.get_job("bob", job)
    assert view is not None and view.status == "queued"
    assert [(e["stage"], e["status"]) for e in store.job_events("bob", job)] == [("gateway", "queued")]


# --------------------------------------------------------------------------- outbox


def test_claim_roundtrips_messages_in_id_order(store: PostgresMetadataStore) -> None:
    jobs = [submit(store, n=i)[0] for i in range(3)]
    rows = store.claim_outbox(10)
    assert [r.message.value for r in rows] == [j.encode() for j in jobs]
    assert rows == sorted(rows, key=lambda r: r.id)
    first = rows[0]
    assert first.attempts == 0
    assert first.message.topic == SUBMITTED
    assert list(first.message.headers) == [("job_id", jobs[0].encode()), ("bin", b"\x00\xff")]
    assert isinstance(first.message.key, bytes)


def test_claim_lease_publish_release(store: PostgresMetadataStore, dsn: str) -> None:
    for i in range(3):
        submit(store, n=i)
    first = store.claim_outbox(2)
    assert len(first) == 2
    second = store.claim_outbox(2)
    assert [r.id for r in second] == [max(r.id for r in first) + 1]  # leased rows are skipped
    assert store.claim_outbox(5) == []

    store.mark_published([first[0].id])
    store.release_outbox([first[1].id], "broker down")
    again = store.claim_outbox(5)
    assert [(r.id, r.attempts) for r in again] == [(first[1].id, 1)]
    assert scalar(dsn, "SELECT last_error FROM outbox WHERE id = %s", first[1].id) == "broker down"

    store.mark_published([r.id for r in again + second])
    store.release_outbox([first[0].id], "late")  # releasing a published row changes nothing
    assert store.claim_outbox(5) == []
    assert count(dsn, "outbox WHERE published_at IS NULL") == 0
    assert scalar(dsn, "SELECT attempts FROM outbox WHERE id = %s", first[0].id) == 0
    store.mark_published([])
    store.release_outbox([], "nothing")
    assert store.claim_outbox(0) == []


def test_expired_lease_is_claimable_again(store: PostgresMetadataStore) -> None:
    submit(store)
    [row] = store.claim_outbox(1, lease_seconds=0.2)
    assert store.claim_outbox(1) == []
    time.sleep(0.4)
    [again] = store.claim_outbox(1)
    assert again.id == row.id


def test_concurrent_claimers_never_share_a_row(store: PostgresMetadataStore, dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "many")
    messages = [OutboxMessage(topic=f"t{i}", key=b"k", value=str(i).encode()) for i in range(120)]
    store.submit(art, job, messages)
    claimers = [PostgresMetadataStore(dsn, max_size=1) for _ in range(4)]

    def drain(i: int) -> list[int]:
        got: list[int] = []
        while rows := claimers[i].claim_outbox(7):
            got.extend(r.id for r in rows)
        return got

    try:
        results = in_threads(4, drain)
    finally:
        for c in claimers:
            c.close()
    claimed = [i for r in results for i in r]
    assert len(claimed) == len(set(claimed)) == 120


# --------------------------------------------------------------------------- stages


def test_stage_lifecycle_to_success(store: PostgresMetadataStore) -> None:
    job, _ = submit(store)
    store.stage_started("alice", job, "extract", 1)
    view = store.get_job("alice", job)
    assert view is not None and view.status == "running"
    assert view.stages[0].status == "running" and view.stages[0].started_at is not None
    store.stage_succeeded("alice", job, "extract", "12 chars")
    store.stage_started("alice", job, "chunk", 1)
    store.stage_succeeded("alice", job, "chunk")
    view = store.get_job("alice", job)
    assert view is not None and view.status == "running" and view.finished_at is None
    store.stage_started("alice", job, "embed", 2)
    store.stage_succeeded("alice", job, "embed", "3 chunks")

    view = store.get_job("alice", job)
    assert view is not None
    assert view.status == "succeeded" and view.finished_at is not None and view.error is None
    assert [(s.stage, s.status, s.attempts, s.detail) for s in view.stages] == [
        ("extract", "succeeded", 1, "12 chars"),
        ("chunk", "succeeded", 1, None),
        ("embed", "succeeded", 2, "3 chunks"),
    ]
    assert all(s.finished_at is not None for s in view.stages)
    events = store.job_events("alice", job)
    assert [(e["stage"], e["status"]) for e in events] == [
        ("gateway", "queued"),
        ("extract", "running"), ("extract", "succeeded"),
        ("chunk", "running"), ("chunk", "succeeded"),
        ("embed", "running"), ("embed", "succeeded"),
        ("job", "succeeded"),
    ]
    assert events[5]["attempt"] == 2
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)


def test_concurrent_stage_successes_finish_the_job(store: PostgresMetadataStore) -> None:
    job, _ = submit(store)
    for stage in STAGES:
        store.stage_started("alice", job, stage, 1)
    in_threads(len(STAGES), lambda i: store.stage_succeeded("alice", job, STAGES[i]))
    view = store.get_job("alice", job)
    assert view is not None and view.status == "succeeded"


def test_stage_retry_then_failure_with_reason(store: PostgresMetadataStore) -> None:
    job, _ = submit(store)
    store.stage_started("alice", job, "extract", 1)
    store.stage_retrying("alice", job, "extract", 1, "timeout")
    view = store.get_job("alice", job)
    assert view is not None and view.status == "running"
    assert (view.stages[0].status, view.stages[0].detail) == ("retrying", "timeout")
    store.stage_started("alice", job, "extract", 2)
    store.job_failed("alice", job, "extract", "unsupported PDF")

    view = store.get_job("alice", job)
    assert view is not None
    assert (view.status, view.error) == ("failed", "unsupported PDF")
    assert view.finished_at is not None
    assert [(s.status, s.attempts) for s in view.stages] == [("failed", 2), ("skipped", 0), ("skipped", 0)]
    assert view.stages[0].detail == "unsupported PDF"
    events = store.job_events("alice", job)
    assert [(e["stage"], e["status"], e["attempt"]) for e in events][1:] == [
        ("extract", "running", 1), ("extract", "retrying", 1),
        ("extract", "running", 2), ("extract", "failed", 2),
    ]
    assert events[-1]["detail"] == "unsupported PDF"


def test_finished_jobs_do_not_regress(store: PostgresMetadataStore) -> None:
    job, _ = submit(store)
    run_all_stages(store, job)
    before = store.get_job("alice", job)
    n_events = len(store.job_events("alice", job))

    every_transition(store, "alice", job)

    after = store.get_job("alice", job)
    assert after == before
    assert len(store.job_events("alice", job)) == n_events

    failed, _ = submit(store, n=1)
    store.job_failed("alice", failed, "extract", "boom")
    store.stage_started("alice", failed, "extract", 2)
    store.stage_succeeded("alice", failed, "extract")
    view = store.get_job("alice", failed)
    assert view is not None and (view.status, view.error) == ("failed", "boom")


def test_job_duplicate(store: PostgresMetadataStore) -> None:
    original, art = submit(store)
    run_all_stages(store, original)
    dup = ids.job_id("alice", "again")
    assert store.submit(art, dup, [submission(art, dup)]).created
    store.stage_started("alice", dup, "extract", 1)
    store.job_duplicate("alice", dup, original)
    view = store.get_job("alice", dup)
    assert view is not None
    assert (view.status, view.duplicate_of) == ("duplicate", original)
    assert view.finished_at is not None
    assert [s.status for s in view.stages] == ["succeeded", "skipped", "skipped"]
    assert store.job_events("alice", dup)[-1]["status"] == "duplicate"
    store.stage_started("alice", dup, "chunk", 1)
    view = store.get_job("alice", dup)
    assert view is not None and view.status == "duplicate"


def test_unknown_stage_is_rejected(store: PostgresMetadataStore) -> None:
    job, _ = submit(store)
    with pytest.raises(ValueError):
        store.stage_started("alice", job, "nope", 1)


def test_unknown_job_ids_are_noops(store: PostgresMetadataStore, dsn: str) -> None:
    ghost = "00000000-0000-0000-0000-000000000000"
    store.stage_started("alice", ghost, "extract", 1)
    store.stage_succeeded("alice", ghost, "extract")
    store.stage_retrying("alice", ghost, "chunk", 1, "x")
    store.job_failed("alice", ghost, "embed", "x")
    store.job_duplicate("alice", ghost, "y")
    assert store.get_job("alice", ghost) is None
    assert store.job_events("alice", ghost) == []
    assert count(dsn, "job_events") == 0


# --------------------------------------------------------------------------- requeue


def test_requeue_unfinished(store: PostgresMetadataStore, dsn: str) -> None:
    running, _ = submit(store, n=0)
    done, _ = submit(store, n=1)
    queued, _ = submit(store, n=2)
    ext_art = artifact(n=3)
    external = ids.job_id("alice", "ext")
    store.register_external(ext_art, external)
    # A non-submission message of the running job stays published.
    with psycopg.connect(dsn) as conn:
        conn.execute("INSERT INTO outbox (topic, key, value, job_id, published_at) "
                     "VALUES ('sb.chunks.ready', 'k', 'v', %s, now())", (running,))
    store.mark_published([r.id for r in store.claim_outbox(10)])
    assert store.claim_outbox(10) == []

    store.stage_started("alice", running, "extract", 1)
    store.stage_succeeded("alice", running, "extract")
    store.stage_started("alice", running, "chunk", 1)
    run_all_stages(store, done)
    store.stage_started("alice", external, "extract", 1)

    assert store.requeue_unfinished() == 2
    rows = store.claim_outbox(10)
    assert sorted(r.message.value for r in rows) == sorted([running.encode(), queued.encode()])
    assert all(r.message.topic == SUBMITTED for r in rows)

    view = store.get_job("alice", running)
    assert view is not None and view.status == "running"
    assert [s.status for s in view.stages] == ["succeeded", "pending", "pending"]
    queued_view = store.get_job("alice", queued)
    assert queued_view is not None and queued_view.status == "queued"
    done_view = store.get_job("alice", done)
    assert done_view is not None and done_view.status == "succeeded"
    ext_view = store.get_job("alice", external)
    assert ext_view is not None and ext_view.stages[0].status == "running"
    assert store.job_events("alice", running)[-1]["status"] == "requeued"

    store.mark_published([r.id for r in rows])
    assert count(dsn, "outbox WHERE published_at IS NULL") == 0
    assert store.requeue_unfinished() == 2


# --------------------------------------------------------------------------- documents & sources


def document(art: ArtifactRecord, *, chunk_count: int | None = None, title: str = "Doc") -> DocumentRecord:
    return DocumentRecord(
        document_id=ids.document_id(art.artifact_id), user_id=art.user_id, artifact_id=art.artifact_id,
        source_id=art.source_id, title=title, modality="text", content_type=art.content_type,
        captured_at=datetime(2024, 5, 1, 12, tzinfo=UTC), captured_at_source="frontmatter",
        ingested_at=datetime.now(UTC), char_count=42, chunk_count=chunk_count, metadata={"lang": "en"},
    )


def test_documents(store: PostgresMetadataStore) -> None:
    _, art = submit(store)
    doc = document(art)
    store.save_document(doc)
    store.save_document(doc)  # idempotent
    assert store.get_document("alice", doc.document_id) == doc
    store.set_chunk_count("alice", doc.document_id, 3)
    got = store.get_document("alice", doc.document_id)
    assert got is not None and got.chunk_count == 3
    store.save_document(document(art, title="Renamed"))  # replay keeps the count
    got = store.get_document("alice", doc.document_id)
    assert got is not None
    assert (got.title, got.chunk_count, dict(got.metadata)) == ("Renamed", 3, {"lang": "en"})
    store.set_chunk_count("alice", "missing", 1)
    assert store.get_document("alice", "missing") is None


def test_list_sources(store: PostgresMetadataStore) -> None:
    captured = datetime(2023, 1, 2, tzinfo=UTC)
    j0, a0 = submit(store, n=0, title="zero", captured_at=captured)
    j1, a1 = submit(store, n=1)
    j2, _ = submit(store, n=2, title="two")
    doc = document(a1, chunk_count=5, title="one (extracted)")
    store.save_document(doc)
    run_all_stages(store, j1)
    store.job_failed("alice", j2, "extract", "bad")

    sources = store.list_sources("alice")
    assert [s.job_id for s in sources] == [j2, j1, j0]
    s2, s1, s0 = sources
    assert (s2.status, s2.title, s2.document_id, s2.modality, s2.chunk_count) == (
        "failed", "two", None, None, None)
    assert (s1.status, s1.document_id, s1.modality, s1.chunk_count, s1.title) == (
        "succeeded", doc.document_id, "text", 5, "one (extracted)")
    assert s1.captured_at == doc.captured_at
    assert s1.ingested_at == doc.ingested_at
    assert (s0.status, s0.captured_at, s0.title) == ("queued", captured, "zero")
    assert (s0.artifact_id, s0.source_id, s0.source_uri, s0.content_type, s0.size_bytes) == (
        a0.artifact_id, a0.source_id, a0.source_uri, a0.content_type, a0.size_bytes)
    assert s0.ingested_at is not None

    assert [s.job_id for s in store.list_sources("alice", limit=2)] == [j2, j1]
    assert [s.job_id for s in store.list_sources("alice", limit=2, offset=2)] == [j0]
    assert store.list_sources("alice", offset=3) == []


def test_per_user_isolation(store: PostgresMetadataStore) -> None:
    job, art = submit(store, "alice")
    store.stage_started("alice", job, "extract", 1)
    doc = document(art)
    store.save_document(doc)
    bob_job, _ = submit(store, "bob", n=7)

    assert store.get_job("bob", job) is None
    assert store.job_events("bob", job) == []
    assert store.get_document("bob", doc.document_id) is None
    assert [s.job_id for s in store.list_sources("bob")] == [bob_job]
    assert store.list_sources("carol") == []
    assert store.get_job("alice", bob_job) is None

    # Bob cannot overwrite Alice's document by reusing its id.
    store.save_document(DocumentRecord(
        document_id=doc.document_id, user_id="bob", artifact_id=art.artifact_id, source_id="x",
        title="stolen",
        modality="text", content_type="text/plain", captured_at=doc.captured_at, captured_at_source="x",
        ingested_at=doc.ingested_at + timedelta(seconds=1), char_count=1,
    ))
    got = store.get_document("alice", doc.document_id)
    assert got is not None and got.title == doc.title


def test_transitions_never_touch_another_users_job(store: PostgresMetadataStore) -> None:
    """An event of Bob's that carries Alice's job id (or document id) changes nothing of hers."""
    job, art = submit(store, "alice", n=11)
    doc = document(art)
    store.save_document(doc)
    before = store.get_job("alice", job)
    n_events = len(store.job_events("alice", job))
    every_transition(store, "bob", job)
    store.set_chunk_count("bob", doc.document_id, 99)
    assert store.get_job("alice", job) == before
    assert len(store.job_events("alice", job)) == n_events
    got = store.get_document("alice", doc.document_id)
    assert got is not None and got.chunk_count == doc.chunk_count


def test_a_job_never_shows_another_users_artifact(store: PostgresMetadataStore) -> None:
    """Bob registering a job against Alice's artifact id does not reveal her artifact's metadata."""
    _, alice_art = submit(store, "alice", n=12, title="alice's secret plan")
    bob_job = ids.job_id("bob", "borrowed-artifact")
    store.register_external(replace(alice_art, user_id="bob", title=None, source_uri="app:x"), bob_job)
    view = store.get_job("bob", bob_job)
    assert view is None or view.title != "alice's secret plan"
    assert all(s.title != "alice's secret plan" for s in store.list_sources("bob"))



# --------------------------------------------------------------------------- URL jobs, versions, duplicates


def test_url_job_has_no_artifact_until_fetched(store: PostgresMetadataStore, dsn: str) -> None:
    job = ids.job_id("alice", "url-1")
    msg = OutboxMessage(topic="sb.urls.requested", key=b"alice", value=b"req", headers=())
    result = store.request_url("alice", job, "https://example.org/post", "A post", [msg])
    assert result.created
    assert not store.request_url("alice", job, "https://example.org/post", "A post", [msg]).created
    view = store.get_job("alice", job)
    assert view is not None
    assert (view.artifact_id, view.source_uri, view.title, view.status) == (
        None, "https://example.org/post", "A post", "queued")
    assert [s.stage for s in view.stages] == ["fetch", "extract", "chunk", "embed"]
    [listed] = store.list_sources("alice")
    assert (listed.job_id, listed.artifact_id, listed.source_uri, listed.status) == (
        job, None, "https://example.org/post", "queued")
    assert count(dsn, "outbox") == 1

    # Another user cannot attach an artifact to Alice's job.
    page = replace(artifact("bob", 1), source_uri="https://example.org/post")
    assert not store.attach_artifact(page, job)
    assert store.get_job("alice", job).artifact_id is None  # type: ignore[union-attr]

    fetched = replace(artifact("alice", 1), source_uri="https://example.org/post")
    assert store.attach_artifact(fetched, job)
    assert store.get_job("alice", job).artifact_id == fetched.artifact_id  # type: ignore[union-attr]
    # A URL job succeeds only when all four stages have.
    for stage in ["fetch", "extract", "chunk"]:
        store.stage_started("alice", job, stage, 1)
        store.stage_succeeded("alice", job, stage)
        assert store.get_job("alice", job).status == "running"  # type: ignore[union-attr]
    store.stage_succeeded("alice", job, "embed")
    assert store.get_job("alice", job).status == "succeeded"  # type: ignore[union-attr]


def test_requeue_includes_url_requests(store: PostgresMetadataStore, dsn: str) -> None:
    job = ids.job_id("alice", "url-2")
    msg = OutboxMessage(topic="sb.urls.requested", key=b"alice", value=b"req", headers=())
    store.request_url("alice", job, "https://example.org/a", None, [msg])
    rows = store.claim_outbox(10)
    store.mark_published([r.id for r in rows])
    assert store.requeue_unfinished() == 1
    assert [r.message.topic for r in store.claim_outbox(10)] == ["sb.urls.requested"]


def test_versions_of_a_source(store: PostgresMetadataStore) -> None:
    """New content for one source becomes the next version; older ones are superseded once asked."""
    _, a1 = submit(store, "alice", n=21)
    a2 = replace(artifact("alice", 22), source_id=a1.source_id, source_uri=a1.source_uri)
    store.submit(a2, ids.job_id("alice", "v2"), [])
    d1, d2 = document(a1), document(a2)
    assert store.save_document(d1) == 1
    assert store.save_document(d1) == 1  # a replay keeps its version
    assert store.save_document(d2) == 2
    assert store.is_superseded("alice", d1.document_id)
    assert not store.is_superseded("alice", d2.document_id)
    assert store.supersede_older("alice", a1.source_id, d2.document_id) == [d1.document_id]
    assert store.supersede_older("alice", a1.source_id, d2.document_id) == [d1.document_id]  # idempotent
    got = store.get_document("alice", d1.document_id)
    assert got is not None and got.superseded_at is not None and got.version == 1
    # The old content uploaded again becomes the newest version, current again.
    assert store.save_document(d1) == 3
    assert not store.is_superseded("alice", d1.document_id)
    assert store.is_superseded("alice", d2.document_id)
    # Bob sees and changes nothing of this.
    assert store.supersede_older("bob", a1.source_id, d1.document_id) == []
    assert store.is_superseded("bob", d1.document_id)  # unknown to Bob: treated as gone


def test_concurrent_versions_get_distinct_numbers(store: PostgresMetadataStore) -> None:
    _, first = submit(store, "alice", n=30)
    arts = [replace(artifact("alice", 31 + i), source_id=first.source_id) for i in range(6)]
    for i, a in enumerate(arts):
        store.submit(a, ids.job_id("alice", f"cv{i}"), [])
    versions = in_threads(len(arts), lambda i: store.save_document(document(arts[i])))
    assert sorted(versions) == list(range(1, len(arts) + 1))


def test_find_original_job(store: PostgresMetadataStore) -> None:
    original, art = submit(store, "alice", n=40)
    again = ids.job_id("alice", "same-bytes")
    store.submit(art, again, [])
    # Not extracted yet: nothing to be a duplicate of.
    assert store.find_original_job("alice", art.artifact_id, again) is None
    store.stage_started("alice", original, "extract", 1)
    store.save_document(document(art))
    assert store.find_original_job("alice", art.artifact_id, again) == original
    assert store.find_original_job("alice", art.artifact_id, original) is None  # never itself
    assert store.find_original_job("bob", art.artifact_id, again) is None
    store.job_failed("alice", original, "embed", "boom")
    assert store.find_original_job("alice", art.artifact_id, again) is None  # a failed original does not count


# --------------------------------------------------------------------------- time listing and conversations


def test_documents_between_lists_current_documents_newest_first(store: PostgresMetadataStore) -> None:
    docs = []
    for n, day in enumerate([1, 5, 9, 12]):
        _, art = submit(store, "alice", n=50 + n)
        doc = replace(document(art, title=f"day {day}"), captured_at=datetime(2026, 3, day, 9, tzinfo=UTC),
                      modality="pdf" if day == 5 else "note")
        store.save_document(doc)
        docs.append(doc)
    _, bob_art = submit(store, "bob", n=60)
    store.save_document(replace(document(bob_art), captured_at=datetime(2026, 3, 6, tzinfo=UTC)))
    got = store.documents_between("alice", datetime(2026, 3, 5, 9, tzinfo=UTC), datetime(2026, 3, 12, 9, tzinfo=UTC))
    assert [d.title for d in got] == ["day 9", "day 5"]  # [start, end), newest first, Bob's not there
    assert [d.title for d in store.documents_between("alice", None, None, limit=2)] == ["day 12", "day 9"]
    assert [d.title for d in store.documents_between("alice", None, None, modalities=["pdf"])] == ["day 5"]
    recent = store.documents_between("alice", datetime.now(UTC) - timedelta(minutes=5), None, field="ingested_at")
    assert len(recent) == 4
    # A superseded version is history, not a current document.
    newer = replace(artifact("alice", 70), source_id=docs[0].source_id)
    store.submit(newer, ids.job_id("alice", "v-new"), [])
    store.save_document(replace(document(newer, title="day 1 v2"), captured_at=datetime(2026, 3, 1, 10, tzinfo=UTC)))
    store.supersede_older("alice", docs[0].source_id, ids.document_id(newer.artifact_id))
    titles = [d.title for d in store.documents_between("alice", None, datetime(2026, 3, 2, tzinfo=UTC))]
    assert titles == ["day 1 v2"]
    with pytest.raises(ValueError):
        store.documents_between("alice", None, None, field="title")  # type: ignore[arg-type]


def test_conversation_turns_are_private_and_ordered(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    conv = "conv-1"
    store.add_turn("alice", conv, "user", "what did I save about the budget?")
    store.add_turn("alice", conv, "assistant", "The travel budget is 4000 euros [1].", {"citations": [1]})
    store.add_turn("alice", conv, "user", "and last year?")
    turns = store.get_turns("alice", conv)
    assert [(t.role, t.content) for t in turns] == [
        ("user", "what did I save about the budget?"), ("assistant", "The travel budget is 4000 euros [1]."),
        ("user", "and last year?")]
    assert turns[1].meta == {"citations": [1]}
    assert [t.content for t in store.get_turns("alice", conv, limit=1)] == ["and last year?"]
    assert store.get_turns("bob", conv) == []
    with pytest.raises(PermissionError):
        store.add_turn("bob", conv, "user", "let me in")
    assert len(store.get_turns("alice", conv)) == 3


# --------------------------------------------------------------------------- API keys


def test_api_keys_are_hashed_scoped_and_revocable(store: PostgresMetadataStore, dsn: str) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    info, secret = store.create_api_key("alice", "laptop")
    assert secret.startswith(f"sb_{info.key_id}_") and len(secret) > 40
    assert store.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert scalar(dsn, "SELECT count(*) FROM api_keys WHERE secret_hash = %s", secret.encode()) == 0
    assert secret not in str(scalar(dsn, "SELECT secret_hash FROM api_keys"))  # only a hash is stored
    assert [k.key_id for k in store.list_api_keys("alice")] == [info.key_id]
    assert store.list_api_keys("alice")[0].last_used_at is not None
    assert store.list_api_keys("bob") == []
    assert not store.revoke_api_key("bob", info.key_id)  # not Bob's to revoke
    assert store.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert store.revoke_api_key("alice", info.key_id)
    assert store.authenticate(secret) is None
    assert store.list_api_keys("alice")[0].revoked_at is not None
    for wrong in ("", "sb_", secret[:-1], "Bearer " + secret, "x" * 500):
        assert store.authenticate(wrong) is None
    with pytest.raises(KeyError):
        store.create_api_key("nobody", "x")


def test_key_scopes_and_signing_keys(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    admin, admin_secret = store.create_api_key("alice", "ops", "admin")
    producer, producer_secret = store.create_api_key("alice", "calendar app", "producer")
    assert store.authenticate(admin_secret) == Principal("alice", admin.key_id, "admin")
    assert store.authenticate(producer_secret) == Principal("alice", producer.key_id, "producer")
    assert {k.key_id: k.scope for k in store.list_api_keys("alice")} == {admin.key_id: "admin",
                                                                         producer.key_id: "producer"}
    with pytest.raises(ValueError, match="unknown key scope"):
        store.create_api_key("alice", "x", "root")  # type: ignore[arg-type]
    signing = store.signing_key(producer.key_id)
    assert signing is not None and signing.user_id == "alice" and signing.scope == "producer"
    assert signing.secret_hash == hashlib.sha256(producer_secret.encode()).digest()
    assert store.signing_key("nope") is None
    store.revoke_api_key("alice", producer.key_id)
    assert store.signing_key(producer.key_id) is None


def test_users_are_listed_with_their_live_keys(store: PostgresMetadataStore) -> None:
    store.ensure_user("first", "First")
    store.ensure_user("second")
    k, _ = store.create_api_key("first", "a")
    store.create_api_key("first", "b")
    store.revoke_api_key("first", k.key_id)
    users = {u.user_id: u for u in store.list_users()}
    assert users["first"].active_keys == 1 and users["first"].display_name == "First"
    assert users["second"].active_keys == 0
    assert list(users).index("first") < list(users).index("second")  # oldest first


def test_request_windows_count_per_user_and_bucket(store: PostgresMetadataStore) -> None:
    counts = [store.count_request("alice", "act", 3600) for _ in range(3)]
    assert counts == [1, 2, 3]
    assert store.count_request("alice", "read", 3600) == 1
    assert store.count_request("bob", "act", 3600) == 1


def test_pending_jobs_counts_unfinished_work(store: PostgresMetadataStore) -> None:
    assert store.pending_jobs("alice") == 0
    done, _ = submit(store, "alice", n=1)
    submit(store, "alice", n=2)
    submit(store, "bob", n=3)
    assert store.pending_jobs("alice") == 2
    for stage in ("extract", "chunk", "embed"):
        store.stage_started("alice", done, stage, 1)
        store.stage_succeeded("alice", done, stage)
    assert store.pending_jobs("alice") == 1


# --------------------------------------------------------------------------- data lifecycle


def version_of(user: str, uri: str, content: str, *, submitted_at: datetime | None = None) -> ArtifactRecord:
    """An artifact of the source ``uri`` (new content for the same uri is its next version)."""
    sha = ids.sha256_hex(content.encode())
    aid = ids.artifact_id(user, sha)
    return ArtifactRecord(
        artifact_id=aid, user_id=user, source_id=ids.source_id(user, uri), source_uri=uri,
        object_key=f"users/{user}/artifacts/{aid}", content_type="text/plain", size_bytes=len(content),
        sha256=sha, filename=uri.rsplit("/", 1)[-1], title=None, captured_at=None,
        submitted_at=submitted_at or datetime.now(UTC), producer="test")


def ingest(store: PostgresMetadataStore, art: ArtifactRecord, *, extract: bool = True) -> str:
    """Submit like the gateway and, when ``extract``, record its document and finish its job."""
    job = ids.job_id(art.user_id, f"{art.source_uri}:{art.sha256}:{time.monotonic_ns()}")
    assert store.submit(art, job, [submission(art, job)]).created
    if extract:
        store.save_document(replace(document(art), user_id=art.user_id))
        for stage in STAGES:
            store.stage_started(art.user_id, job, stage, 1)
            store.stage_succeeded(art.user_id, job, stage)
    return job


def rows_of(dsn: str, table: str, column: str, values: list[str]) -> int:
    return int(scalar(dsn, f"SELECT count(*) FROM {table} WHERE {column} = ANY(%s)", values))


def test_delete_source_removes_every_version_and_leaves_a_tombstone(store: PostgresMetadataStore, dsn: str) -> None:
    v1, v2 = version_of("alice", "file:plan.md", "plan one"), version_of("alice", "file:plan.md", "plan two")
    jobs = [ingest(store, v1), ingest(store, v2)]
    other = ingest(store, version_of("alice", "file:other.md", "other"))
    bobs = ingest(store, version_of("bob", "file:plan.md", "plan one"))
    source = v1.source_id
    docs = [ids.document_id(v1.artifact_id), ids.document_id(v2.artifact_id)]
    assert [s.version for s in store.list_sources("alice", source_id=source)] == [2, 1]

    assert store.delete_source("bob", source) is None  # bob's plan.md is another source id
    assert store.delete_source("alice", "no-such-source") is None
    plan = store.delete_source("alice", source)
    assert plan is not None
    assert sorted(plan.job_ids) == sorted(jobs)
    assert set(docs) <= set(plan.document_ids)
    assert sorted(plan.artifact_ids) == sorted([v1.artifact_id, v2.artifact_id])
    assert sorted(plan.object_keys) == sorted([v1.object_key, v2.object_key])
    assert plan.kept_artifact_ids == [] and plan.requeue_job_ids == []
    for table in ("jobs", "job_stages", "job_events", "outbox"):
        assert rows_of(dsn, table, "job_id", jobs) == 0, table
    assert rows_of(dsn, "documents", "document_id", docs) == 0
    assert rows_of(dsn, "artifacts", "artifact_id", [v1.artifact_id, v2.artifact_id]) == 0
    assert store.list_sources("alice", source_id=source) == []
    assert [s.job_id for s in store.list_sources("alice")] == [other]
    assert [s.job_id for s in store.list_sources("bob")] == [bobs]

    # Until the cleanup outside Postgres is confirmed, asking again returns what is left to do.
    again = store.delete_source("alice", source)
    assert again is not None and sorted(again.object_keys) == sorted(plan.object_keys)
    assert store.source_cleaned("alice", source) == []
    assert store.delete_source("alice", source) is None
    assert scalar(dsn, "SELECT object_keys FROM deleted_sources WHERE source_id = %s", source) == []


def test_left_over_work_of_a_deleted_source_is_told_from_new_work(store: PostgresMetadataStore) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    old = version_of("alice", "file:notes.md", "old notes", submitted_at=before)
    old_job = ingest(store, old, extract=False)
    assert not store.source_deleted("alice", old.source_id, old_job, before)
    assert store.delete_source("alice", old.source_id) is not None
    assert store.source_deleted("alice", old.source_id, old_job, before)
    assert store.source_deleted("alice", old.source_id, old_job)  # time unknown: taken as before
    assert not store.source_deleted("bob", old.source_id, old_job, before)
    assert not store.source_deleted("alice", old.source_id, old_job, datetime.now(UTC) + timedelta(seconds=5))
    # A stage registering the old event cannot bring the job back...
    assert not store.register_external(old, old_job).created
    assert store.get_job("alice", old_job) is None
    # ...while the same name submitted again is new work.
    new = version_of("alice", "file:notes.md", "new notes")
    new_job = ingest(store, new, extract=False)
    assert not store.source_deleted("alice", new.source_id, new_job, new.submitted_at)
    later = version_of("alice", "file:notes.md", "from an app", submitted_at=datetime.now(UTC) + timedelta(seconds=1))
    assert store.register_external(later, ids.job_id("alice", "app-event")).created


def test_shared_bytes_stay_and_copies_are_indexed_again(store: PostgresMetadataStore, dsn: str) -> None:
    a = version_of("alice", "file:a.md", "same words")
    b = replace(a, source_id=ids.source_id("alice", "file:b.md"), source_uri="file:b.md", filename="b.md")
    ja = ingest(store, a)
    jb = ingest(store, b, extract=False)
    store.stage_started("alice", jb, "extract", 1)
    store.job_duplicate("alice", jb, ja)
    store.mark_published([r.id for r in store.claim_outbox(100)])
    listed = {s.job_id: s for s in store.list_sources("alice")}
    assert (listed[jb].source_id, listed[jb].source_uri) == (b.source_id, "file:b.md")  # its own name

    plan = store.delete_source("alice", a.source_id)
    assert plan is not None
    assert plan.kept_artifact_ids == [a.artifact_id] and plan.object_keys == [] and plan.artifact_ids == []
    assert plan.job_ids == [ja] and plan.requeue_job_ids == [jb]
    art = store.get_artifact("alice", a.artifact_id)
    assert art is not None and art.source_id == b.source_id  # renamed to the source still using it
    assert store.get_document("alice", ids.document_id(a.artifact_id)) is None
    assert store.source_cleaned("alice", a.source_id) == [jb]
    job = store.get_job("alice", jb)
    assert job is not None and job.status == "queued" and job.duplicate_of is None
    assert {s.status for s in job.stages} == {"pending"}
    assert [r.message.value for r in store.claim_outbox(100)] == [jb.encode()]  # published again
    assert store.source_cleaned("alice", a.source_id) == []


def test_erase_user_leaves_no_row_anywhere(store: PostgresMetadataStore, dsn: str) -> None:
    ingest(store, version_of("alice", "file:x.md", "x"))
    ingest(store, version_of("bob", "file:x.md", "x"))
    gone = ingest(store, version_of("alice", "file:gone.md", "gone"))
    store.delete_source("alice", ids.source_id("alice", "file:gone.md"))
    store.add_turn("alice", "c-alice", "user", "what is x?")
    store.add_turn("bob", "c-bob", "user", "what is x?")
    _, alice_key = store.create_api_key("alice", "laptop")
    store.create_api_key("bob", "laptop")
    store.count_request("alice", "act", 60)
    alice_jobs = [s.job_id for s in store.list_sources("alice") if s.job_id]
    with psycopg.connect(dsn) as conn:
        tables = [r for (r,) in conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
            "AND table_schema = current_schema()").fetchall()]
    bob_before = {t: int(scalar(dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'bob'")) for t in tables}

    removed = store.erase_user("alice")
    assert removed["users"] == 1 and removed["jobs"] == 1 and removed["api_keys"] == 1
    assert removed["conversation_turns"] == 1 and removed["deleted_sources"] == 1
    for t in tables:
        assert int(scalar(dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'alice'")) == 0, t
    for table in ("job_stages", "job_events", "outbox"):
        assert rows_of(dsn, table, "job_id", [*alice_jobs, gone]) == 0, table
    assert scalar(dsn, "SELECT count(*) FROM conversation_turns WHERE conversation_id = 'c-alice'") == 0
    assert {t: int(scalar(dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'bob'")) for t in tables} == bob_before
    assert store.authenticate(alice_key) is None and not store.user_exists("alice")
    assert store.erase_user("alice")["users"] == 0  # idempotent
    store.ensure_user("alice")  # the id can be used again, and starts empty
    assert store.list_sources("alice") == [] and store.get_turns("alice", "c-alice") == []


def test_raw_files_expire_only_when_their_work_is_done(store: PostgresMetadataStore, dsn: str) -> None:
    old, recent, busy = (version_of("alice", f"file:{n}.md", n) for n in ("old", "recent", "busy"))
    old_job = ingest(store, old)
    ingest(store, recent)
    busy_job = ingest(store, busy, extract=False)
    with psycopg.connect(dsn) as conn:  # as if ten days had passed for two of them
        conn.execute("UPDATE jobs SET finished_at = now() - interval '10 days', created_at = now() - interval "
                     "'10 days' WHERE job_id = ANY(%s)", ([old_job, busy_job],))
        conn.execute("UPDATE artifacts SET submitted_at = now() - interval '10 days'")
    cutoff = datetime.now(UTC) - timedelta(days=7)
    assert [a.artifact_id for a in store.raw_expired(cutoff)] == [old.artifact_id]  # busy is still queued
    assert store.mark_raw_purged("bob", [old.artifact_id]) == 0  # scoped by user
    assert store.mark_raw_purged("alice", [old.artifact_id]) == 1
    assert store.raw_expired(cutoff) == []
    got = store.get_artifact("alice", old.artifact_id)
    assert got is not None and got.raw_purged_at is not None
    assert store.get_artifact("bob", old.artifact_id) is None
    (row,) = store.list_sources("alice", source_id=old.source_id)
    assert row.raw_purged_at is not None
    ingest(store, old, extract=False)  # the same bytes submitted again are stored again
    got = store.get_artifact("alice", old.artifact_id)
    assert got is not None and got.raw_purged_at is None


def test_source_filters_and_export_listings(store: PostgresMetadataStore) -> None:
    v1, v2 = version_of("alice", "file:p.md", "p one"), version_of("alice", "file:p.md", "p two")
    j1, j2 = ingest(store, v1), ingest(store, v2)
    store.supersede_older("alice", v2.source_id, ids.document_id(v2.artifact_id))
    failed = ingest(store, version_of("alice", "file:bad.md", "bad"), extract=False)
    store.job_failed("alice", failed, "extract", "no text")
    assert [s.job_id for s in store.list_sources("alice", status="failed")] == [failed]
    assert [s.job_id for s in store.list_sources("alice", modality="text")] == [j2, j1]
    assert [s.job_id for s in store.list_sources("alice", source_id=v1.source_id)] == [j2, j1]
    assert store.list_sources("bob", source_id=v1.source_id) == []
    arts = store.list_artifacts("alice", limit=2)
    assert len(arts) == 2 and arts == sorted(arts, key=lambda a: a.artifact_id)
    assert len(arts + store.list_artifacts("alice", after=arts[-1].artifact_id)) == 3
    docs = store.list_documents("alice")
    assert sorted(d.version for d in docs) == [1, 2] and sum(d.superseded_at is not None for d in docs) == 1
    assert store.list_documents("bob") == []
    store.add_turn("alice", "c1", "user", "q")
    store.add_turn("alice", "c1", "assistant", "a")
    (conv,) = store.list_conversations("alice")
    assert (conv.conversation_id, conv.turns) == ("c1", 2) and store.list_conversations("bob") == []


def test_sources_filtered_by_captured_time(store: PostgresMetadataStore) -> None:
    extracted = ingest(store, version_of("alice", "file:may.md", "may"))  # the document says 2024-05-01 12:00
    declared = ingest(store, replace(version_of("alice", "file:jan.md", "jan"),
                                     captured_at=datetime(2025, 1, 10, tzinfo=UTC)), extract=False)
    pending = ingest(store, version_of("alice", "file:new.md", "new"), extract=False)  # no time known yet
    ingest(store, version_of("bob", "file:may.md", "may"))

    def between(start: datetime | None, end: datetime | None, user: str = "alice") -> list[str | None]:
        return [s.job_id for s in store.list_sources(user, start=start, end=end)]

    may = datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert between(datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)) == [extracted]
    assert between(may, may + timedelta(seconds=1)) == [extracted]  # the start is included...
    assert between(may - timedelta(days=1), may) == []  # ...the end is not
    assert between(datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC)) == [declared]
    # until extraction says when it happened, a capture counts as captured when it was submitted
    assert between(datetime.now(UTC) - timedelta(hours=1), None) == [pending]
    assert between(None, datetime(2025, 6, 1, tzinfo=UTC)) == [declared, extracted]
    assert len(between(None, None)) == 3
    assert len(between(datetime(2024, 1, 1, tzinfo=UTC), None, user="bob")) == 1


# --------------------------------------------------------------------------- vector indexes (re-index)

MINILM = ("minilm-int8", "all-MiniLM-L6-v2-int8", 384)
OTHER = ("openai:nomic-embed-text", "openai:nomic-embed-text@127.0.0.1:11434", 768)


def test_a_users_first_index_is_created_once(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    assert store.vector_indexes("alice") == []
    made = in_threads(4, lambda i: store.ensure_active_index("alice", *MINILM))
    assert {(i.version, i.status, i.model_id, i.dense_size) for i in made} == {(1, "active", MINILM[1], 384)}
    assert made[0].name == "v1" and made[0].activated_at is not None
    # once there is one, another model does not replace it (that is what a re-index is for)
    assert store.ensure_active_index("alice", *OTHER).model_id == MINILM[1]
    assert [i.version for i in store.vector_indexes("alice")] == [1]
    assert store.vector_indexes("bob") == []
    store.ensure_active_index("bob", *OTHER)
    assert [(i.user_id, i.model) for i in store.vector_indexes()] == [("alice", MINILM[0]), ("bob", OTHER[0])]
    assert [i.user_id for i in store.vector_indexes(status="active")] == ["alice", "bob"]
    assert store.vector_indexes(status="building") == []
    with pytest.raises(LookupError):
        store.ensure_active_index("nobody", *MINILM)


def test_reindex_builds_under_a_lease_and_switches_atomically(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    with pytest.raises(LookupError):  # nothing to re-index from
        store.begin_reindex("alice", *OTHER)
    store.ensure_active_index("alice", *MINILM)
    store.ensure_active_index("bob", *MINILM)
    with pytest.raises(ValueError):  # already on that model
        store.begin_reindex("alice", *MINILM)
    building = store.begin_reindex("alice", *OTHER)
    assert (building.version, building.status, building.dense_size, building.keep_old) == (2, "building", 768, False)
    again = store.begin_reindex("alice", *OTHER, keep_old=True)  # resumed, not a third version
    assert (again.version, again.keep_old) == (2, True)
    with pytest.raises(ValueError):  # one re-index at a time
        store.begin_reindex("alice", "openai:other", "openai:other@h", 32)
    # one filler at a time
    claimed = store.claim_reindex("alice", 2, "worker-a", 60)
    assert claimed is not None and claimed.lease_owner == "worker-a"
    assert store.claim_reindex("alice", 2, "worker-b", 60) is None
    assert store.claim_reindex("alice", 2, "worker-a", 60) is not None  # renewing is fine
    assert not store.reindex_progress("alice", 2, "worker-b", done=5, total=10, resume_from="x", lease_s=60)
    assert store.reindex_progress("alice", 2, "worker-a", done=7, total=12, resume_from="p-8", lease_s=60)
    (row,) = store.vector_indexes("alice", status="building")
    assert (row.points_done, row.points_total, row.resume_from) == (7, 12, "p-8")
    store.release_reindex("alice", 2, "worker-b")  # not theirs: ignored
    assert store.claim_reindex("alice", 2, "worker-b", 60) is None
    store.release_reindex("alice", 2, "worker-a")
    assert store.claim_reindex("alice", 2, "worker-b", 60) is not None  # another process continues
    # a lease that ran out is taken over
    assert store.claim_reindex("alice", 2, "worker-b", -1) is not None
    assert store.claim_reindex("alice", 2, "worker-c", 60) is not None
    with pytest.raises(LookupError):  # Bob has no building index, and Alice's is not his
        store.activate_index("bob", 2)
    retired = store.activate_index("alice", 2)
    assert retired is not None and (retired.version, retired.status) == (1, "retired")
    by_version = {i.version: i for i in store.vector_indexes("alice")}
    assert by_version[1].status == "retired" and by_version[1].retired_at is not None
    assert by_version[2].status == "active" and by_version[2].activated_at is not None
    assert by_version[2].lease_owner is None
    assert by_version[2].model_id == OTHER[1] and by_version[2].keep_old
    with pytest.raises(LookupError):
        store.activate_index("alice", 2)
    assert store.claim_reindex("alice", 2, "worker-a", 60) is None  # not building any more
    assert not store.reindex_progress("alice", 2, "worker-c", done=1, total=1, resume_from=None, lease_s=60)
    assert by_version[1].dropped_at is None
    store.index_dropped("alice", 1)
    store.index_dropped("alice", 2)  # the active one: ignored
    by_version = {i.version: i for i in store.vector_indexes("alice")}
    assert by_version[1].dropped_at is not None and by_version[2].dropped_at is None
    assert [(i.version, i.status) for i in store.vector_indexes("bob")] == [(1, "active")]
    # back to the first model: a new version, never a reused number
    assert store.begin_reindex("alice", *MINILM).version == 3


def test_a_cancelled_reindex_is_retired_unfinished(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    store.ensure_active_index("alice", *MINILM)
    assert store.cancel_reindex("alice") is None
    store.begin_reindex("alice", *OTHER)
    store.claim_reindex("alice", 2, "worker-a", 60)
    cancelled = store.cancel_reindex("alice")
    assert cancelled is not None and (cancelled.version, cancelled.status) == (2, "retired")
    assert cancelled.activated_at is None and cancelled.lease_owner is None
    assert store.cancel_reindex("alice") is None
    assert store.reindex_progress("alice", 2, "worker-a", done=1, total=1, resume_from=None, lease_s=60) is False
    assert [i.version for i in store.vector_indexes("alice", status="active")] == [1]
    assert store.begin_reindex("alice", *OTHER).version == 3  # another model may start now


def test_migration_records_the_index_existing_users_already_have(dsn: str) -> None:
    # A database from before index versions: every indexed user's vectors are MiniLM vectors in v1.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        for m in load_migrations():
            if m.version < 5:
                conn.execute(m.sql.encode())
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (m.version, m.name))
        for user, chunks in (("indexed", 3), ("nothing-indexed", None)):
            conn.execute("INSERT INTO users (user_id) VALUES (%s)", (user,))
            conn.execute("INSERT INTO artifacts (artifact_id, user_id, source_id, source_uri, object_key, "
                         "content_type, size_bytes, sha256, submitted_at, producer) VALUES (%s, %s, 's', 'u', 'k', "
                         "'text/plain', 1, 'x', now(), 'test')", (f"a-{user}", user))
            conn.execute("INSERT INTO documents (document_id, user_id, artifact_id, source_id, title, modality, "
                         "content_type, captured_at, captured_at_source, ingested_at, char_count, chunk_count) "
                         "VALUES (%s, %s, %s, 's', 't', 'note', 'text/plain', now(), 'ingested', now(), 1, %s)",
                         (f"d-{user}", user, f"a-{user}", chunks))
    s = PostgresMetadataStore(dsn, min_size=1, max_size=2)
    try:
        assert 5 in s.migrate()
        (index,) = s.vector_indexes()
        assert (index.user_id, index.version, index.status, index.model, index.model_id, index.dense_size) == (
            "indexed", 1, "active", "minilm-int8", "all-MiniLM-L6-v2-int8", 384)
    finally:
        s.close()


def test_erasing_a_user_removes_their_indexes(store: PostgresMetadataStore) -> None:
    store.ensure_user("alice")
    store.ensure_active_index("alice", *MINILM)
    store.begin_reindex("alice", *OTHER)
    store.erase_user("alice")
    assert store.vector_indexes("alice") == []
    store.ensure_user("alice")  # the same id starts over at v1
    assert store.ensure_active_index("alice", *OTHER).version == 1
