"""What only Postgres has: its migrations, rows as the tables hold them (looked at in SQL), and
several processes' pools working on one database at once.  Everything a caller of the ports can
observe is in the role contracts, run on both implementations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from secondbrain import ids
from secondbrain.ports import OutboxMessage
from secondbrain.stages import FILE_STAGES as STAGES
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.migrations import NewerSchema, load_migrations
from tests.contracts.metadata.helpers import (
    TOPICS,
    artifact,
    in_threads,
    ingest,
    submission,
    submit,
    version_of,
)
from tests.pg import base_dsn, fresh_database

ALL_VERSIONS = [m.version for m in load_migrations()]


@pytest.fixture
def fresh_dsn() -> Iterator[str]:
    """A new, empty database (not migrated)."""
    with base_dsn() as base, fresh_database(base) as dsn:
        yield dsn


@pytest.fixture
def pg(pg_dsn: str) -> Iterator[PostgresMetadataStore]:
    with PostgresMetadataStore(pg_dsn, min_size=1, max_size=6, topics=TOPICS) as store:
        yield store


def scalar(dsn: str, query: str, *params: Any) -> Any:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query.encode(), params or None).fetchone()
        return row[0] if row else None


def count(dsn: str, table: str) -> int:
    return int(scalar(dsn, f"SELECT count(*) FROM {table}"))


def rows_of(dsn: str, table: str, column: str, values: list[str]) -> int:
    return int(scalar(dsn, f"SELECT count(*) FROM {table} WHERE {column} = ANY(%s)", values))


# --------------------------------------------------------------------------- migrations


def test_migrations_apply_once_and_are_idempotent(fresh_dsn: str) -> None:
    with PostgresMetadataStore(fresh_dsn) as s:
        assert s.database.migrate() == ALL_VERSIONS
        assert s.database.migrate() == []
        s.database.check()
    with PostgresMetadataStore(fresh_dsn) as s:
        assert s.migrate() == []  # the transitional flat call reaches the database
    assert count(fresh_dsn, "schema_migrations") == len(ALL_VERSIONS)
    assert scalar(fresh_dsn, "SELECT name FROM schema_migrations WHERE version = 1") == "init"


def test_pending_migrations_are_those_migrate_would_apply(fresh_dsn: str) -> None:
    with PostgresMetadataStore(fresh_dsn) as s:
        assert s.database.applied_migrations() == {}
        assert [m.version for m in s.database.pending_migrations()] == ALL_VERSIONS
        s.database.migrate()
        assert s.database.pending_migrations() == []
        assert s.database.applied_migrations() == {m.version: m.name for m in load_migrations()}


def test_a_database_a_newer_version_migrated_is_refused_untouched(fresh_dsn: str) -> None:
    with PostgresMetadataStore(fresh_dsn) as s:
        s.database.migrate()
    newest = ALL_VERSIONS[-1]
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:  # what a newer secondbrain leaves behind
        conn.execute("DELETE FROM schema_migrations WHERE version = %s", (newest,))
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (9001, 'from_the_future')")
    with PostgresMetadataStore(fresh_dsn) as s:
        for call in (s.database.migrate, s.database.pending_migrations):
            with pytest.raises(NewerSchema) as refused:
                call()
            assert refused.value.unknown == {9001: "from_the_future"} and refused.value.known == newest
            assert "written by a newer secondbrain" in str(refused.value) and "9001 (from_the_future)" in str(
                refused.value)
            assert "git pull" in str(refused.value) and "restore the backup the newer one took" in str(refused.value)
    # Nothing was applied: the migration it took out is still missing.
    assert scalar(fresh_dsn, "SELECT count(*) FROM schema_migrations WHERE version = %s", newest) == 0


def test_concurrent_migrate_does_not_fail(fresh_dsn: str) -> None:
    stores = [PostgresMetadataStore(fresh_dsn) for _ in range(3)]
    try:
        results = in_threads(3, lambda i: stores[i].database.migrate())
    finally:
        for s in stores:
            s.close()
    applied = sorted(v for r in results for v in r)
    assert applied == ALL_VERSIONS  # each version applied by exactly one of them
    assert count(fresh_dsn, "schema_migrations") == len(ALL_VERSIONS)


def test_migration_records_the_index_existing_users_already_have(fresh_dsn: str) -> None:
    # A database from before index versions: every indexed user's vectors are MiniLM vectors in v1.
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:
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
    with PostgresMetadataStore(fresh_dsn, min_size=1, max_size=2) as s:
        assert 5 in s.database.migrate()
        (index,) = s.indexes.vector_indexes()
        assert (index.user_id, index.version, index.status, index.model, index.model_id, index.dense_size) == (
            "indexed", 1, "active", "minilm-int8", "all-MiniLM-L6-v2-int8", 384)


# --------------------------------------------------------------------------- rows as stored


def test_a_submission_writes_its_rows_in_one_transaction(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    job, art = submit(pg)
    assert scalar(pg_dsn, "SELECT job_id FROM outbox") == job  # the outbox row names its job
    assert scalar(pg_dsn, "SELECT attributes->>'n' FROM artifacts") == "0"
    again = pg.intake.submit(art, job, [submission(art, job), submission(art, job)])
    assert not again.created
    for table, rows in (("outbox", 1), ("jobs", 1), ("job_stages", len(STAGES)), ("job_events", 1),
                        ("artifacts", 1), ("users", 1)):
        assert count(pg_dsn, table) == rows, table


def test_concurrent_duplicate_submits_write_one_set_of_rows(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "same")
    in_threads(4, lambda i: pg.intake.submit(art, job, [submission(art, job)]))
    assert (count(pg_dsn, "outbox"), count(pg_dsn, "artifacts"), count(pg_dsn, "jobs")) == (1, 1, 1)


def test_a_refused_submission_leaves_no_row(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "bad")
    with pytest.raises(psycopg.errors.CheckViolation):  # the outbox's non-empty topic check
        pg.intake.submit(art, job, [submission(art, job), OutboxMessage(topic="", key=b"k", value=b"v")])
    for table in ("users", "artifacts", "jobs", "job_stages", "job_events", "outbox"):
        assert count(pg_dsn, table) == 0, table


def test_the_outbox_keeps_the_last_error_and_published_rows_unchanged(pg: PostgresMetadataStore,
                                                                       pg_dsn: str) -> None:
    submit(pg, n=0)
    submit(pg, n=1)
    first, second = pg.outbox.claim_outbox(2)
    pg.outbox.release_outbox([first.id], "broker down")
    assert scalar(pg_dsn, "SELECT last_error FROM outbox WHERE id = %s", first.id) == "broker down"
    pg.outbox.mark_published([second.id])
    pg.outbox.release_outbox([second.id], "late")
    assert scalar(pg_dsn, "SELECT attempts FROM outbox WHERE id = %s", second.id) == 0
    assert scalar(pg_dsn, "SELECT last_error FROM outbox WHERE id = %s", second.id) is None
    assert count(pg_dsn, "outbox WHERE published_at IS NULL") == 1


def test_transitions_of_unknown_jobs_write_no_event(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    ghost = "00000000-0000-0000-0000-000000000000"
    pg.jobs.stage_started("alice", ghost, "extract", 1)
    pg.jobs.stage_succeeded("alice", ghost, "extract")
    pg.jobs.job_failed("alice", ghost, "embed", "x")
    assert count(pg_dsn, "job_events") == 0


def test_claimers_in_several_processes_never_share_a_row(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    art = artifact()
    job = ids.job_id("alice", "many")
    pg.intake.submit(art, job, [OutboxMessage(topic=f"t{i}", key=b"k", value=str(i).encode()) for i in range(120)])
    claimers = [PostgresMetadataStore(pg_dsn, max_size=1) for _ in range(4)]

    def drain(i: int) -> list[int]:
        got: list[int] = []
        while rows := claimers[i].outbox.claim_outbox(7):
            got.extend(r.id for r in rows)
        return got

    try:
        results = in_threads(4, drain)
    finally:
        for c in claimers:
            c.close()
    claimed = [i for r in results for i in r]
    assert len(claimed) == len(set(claimed)) == 120


def test_only_a_hash_of_a_key_is_stored(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    pg.users.ensure_user("alice")
    info, secret = pg.api_keys.create_api_key("alice", "laptop")
    token = pg.sessions.create_login_link(info.key_id, 600)
    opened = pg.sessions.open_session(key_secret=secret, ttl_s=600)
    assert opened is not None
    assert scalar(pg_dsn, "SELECT count(*) FROM api_keys WHERE secret_hash = %s", secret.encode()) == 0
    with psycopg.connect(pg_dsn) as conn:
        stored = b"".join(bytes(r[0]) for r in conn.execute(
            "SELECT secret_hash FROM api_keys UNION ALL SELECT token_hash FROM login_links "
            "UNION ALL SELECT session_hash FROM web_sessions").fetchall())
    for plain in (secret, token, opened[0]):
        assert plain.encode() not in stored


def test_deleting_a_source_removes_its_rows_and_cleaning_empties_the_tombstone(
        pg: PostgresMetadataStore, pg_dsn: str) -> None:
    v1, v2 = version_of("alice", "file:plan.md", "plan one"), version_of("alice", "file:plan.md", "plan two")
    jobs = [ingest(pg, v1), ingest(pg, v2)]
    plan = pg.lifecycle.delete_source("alice", v1.source_id)
    assert plan is not None
    for table in ("jobs", "job_stages", "job_events", "outbox"):
        assert rows_of(pg_dsn, table, "job_id", jobs) == 0, table
    assert rows_of(pg_dsn, "documents", "document_id", [ids.document_id(v1.artifact_id),
                                                          ids.document_id(v2.artifact_id)]) == 0
    assert rows_of(pg_dsn, "artifacts", "artifact_id", [v1.artifact_id, v2.artifact_id]) == 0
    assert sorted(scalar(pg_dsn, "SELECT object_keys FROM deleted_sources WHERE source_id = %s", v1.source_id)) == \
        sorted(plan.object_keys)
    pg.lifecycle.source_cleaned("alice", v1.source_id)
    assert scalar(pg_dsn, "SELECT object_keys FROM deleted_sources WHERE source_id = %s", v1.source_id) == []
    assert scalar(pg_dsn, "SELECT cleaned_at IS NOT NULL FROM deleted_sources") is True


def test_erase_user_leaves_no_row_in_any_table(pg: PostgresMetadataStore, pg_dsn: str) -> None:
    ingest(pg, version_of("alice", "file:x.md", "x"))
    ingest(pg, version_of("bob", "file:x.md", "x"))
    gone = ingest(pg, version_of("alice", "file:gone.md", "gone"))
    pg.lifecycle.delete_source("alice", ids.source_id("alice", "file:gone.md"))
    pg.conversations.add_turn("alice", "c-alice", "user", "what is x?")
    pg.conversations.add_turn("bob", "c-bob", "user", "what is x?")
    key, _ = pg.api_keys.create_api_key("alice", "laptop")
    pg.sessions.create_login_link(key.key_id, 600)
    pg.api_keys.create_api_key("bob", "laptop")
    pg.rate_counts.count_request("alice", "act", 60)
    alice_jobs = [s.job_id for s in pg.catalog.list_sources("alice") if s.job_id]
    with psycopg.connect(pg_dsn) as conn:
        tables = [r for (r,) in conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
            "AND table_schema = current_schema() AND table_name <> 'erased_users'").fetchall()]
    bob_before = {t: int(scalar(pg_dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'bob'")) for t in tables}

    removed = pg.lifecycle.erase_user("alice")
    assert set(removed) == {*tables, "outbox", "job_events", "job_stages", "conversation_turns"}
    for t in tables:
        assert int(scalar(pg_dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'alice'")) == 0, t
    for table in ("job_stages", "job_events", "outbox"):
        assert rows_of(pg_dsn, table, "job_id", [*alice_jobs, gone]) == 0, table
    assert scalar(pg_dsn, "SELECT count(*) FROM conversation_turns WHERE conversation_id = 'c-alice'") == 0
    assert count(pg_dsn, "login_links") == 0
    assert {t: int(scalar(pg_dsn, f"SELECT count(*) FROM {t} WHERE user_id = 'bob'")) for t in tables} == bob_before
    # what is left is the id's tombstone, nothing else: so that work in flight creates nothing for it
    assert scalar(pg_dsn, "SELECT count(*) FROM erased_users WHERE user_id = 'alice'") == 1
    assert scalar(pg_dsn, "SELECT count(*) FROM erased_users WHERE user_id = 'bob'") == 0
