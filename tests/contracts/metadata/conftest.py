"""The metadata contract suite runs every test against both implementations: ``postgres`` (the test
server, see :mod:`tests.pg`) and ``memory`` (the in-memory twin).  Each test gets an empty store."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from secondbrain.stores.memory import MemoryMetadataStore
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.contracts.metadata.helpers import TOPICS, Stores
from tests.pg import base_dsn, fresh_database


@pytest.fixture(scope="session")
def metadata_dsn() -> Iterator[str]:
    """One migrated database for the whole session (creating one per test costs seconds)."""
    with base_dsn() as base, fresh_database(base) as dsn:
        with PostgresMetadataStore(dsn, min_size=1, max_size=1) as store:
            store.migrate()
        yield dsn


def empty_tables(dsn: str) -> None:
    """Every table of the schema emptied and its sequences restarted: a store as freshly migrated
    (DELETE, not TRUNCATE: on tables this small it is a hundred times faster)."""
    with psycopg.connect(dsn, autocommit=True) as conn, conn.transaction():
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name")]
        for table in tables:  # every foreign key cascades, so any order works
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))
        conn.execute("SELECT setval(c.oid, 1, false) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                     "WHERE c.relkind = 'S' AND n.nspname = current_schema()")


@pytest.fixture
def pg_dsn(metadata_dsn: str) -> str:
    """The session's database, emptied for this test."""
    empty_tables(metadata_dsn)
    return metadata_dsn


# The in-memory twin runs in the fast lane (`make test-fast`); Postgres in `make test`.
@pytest.fixture(params=["postgres", pytest.param("memory", marks=pytest.mark.fast)])
def stores(request: pytest.FixtureRequest) -> Iterator[Stores]:
    """An empty composed metadata store of each implementation."""
    if request.param == "memory":
        with MemoryMetadataStore(topics=TOPICS) as memory:
            yield memory
        return
    with PostgresMetadataStore(request.getfixturevalue("pg_dsn"), min_size=1, max_size=6, topics=TOPICS) as postgres:
        yield postgres
