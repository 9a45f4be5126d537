"""PostgreSQL for tests: find a server, start an embedded one, hand out throw-away databases.

Base DSN resolution (:func:`base_dsn`): ``SB_TEST_PG_DSN`` when set, else the machine's
server on 127.0.0.1:5432 (user ``postgres``) when it answers, else an embedded
``pgserver`` started in a temporary directory.
"""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ENV_DSN = "SB_TEST_PG_DSN"
MACHINE_HOST = "127.0.0.1"
MACHINE_PORT = 5432
MACHINE_DSN = f"host={MACHINE_HOST} port={MACHINE_PORT} user=postgres dbname=postgres connect_timeout=5"


def port_open(host: str = MACHINE_HOST, port: int = MACHINE_PORT, timeout: float = 1.0) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def answers(dsn: str) -> bool:
    """Whether a PostgreSQL server at ``dsn`` accepts a connection and runs ``select 1``."""
    try:
        with psycopg.connect(dsn, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def machine_dsn() -> str | None:
    """``SB_TEST_PG_DSN`` when set, else the 127.0.0.1:5432 DSN when a server listens there, else ``None``."""
    env = os.environ.get(ENV_DSN)
    if env:
        return env
    return MACHINE_DSN if port_open() else None


@contextmanager
def embedded_server(directory: str | Path | None = None) -> Iterator[str]:
    """Start an embedded PostgreSQL (``pgserver``) in ``directory`` (a fresh temp dir by default),
    yield its DSN and stop it (deleting its data) afterwards."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        import pgserver

    with ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="sb-pg-"))
        parent = Path(directory)
        parent.mkdir(parents=True, exist_ok=True)
        server = pgserver.get_server(parent / "pgdata", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


@contextmanager
def base_dsn() -> Iterator[str]:
    """Yield a DSN of a server tests may create databases on (resolution order in the module doc)."""
    env = os.environ.get(ENV_DSN)
    if env:
        yield env
        return
    if port_open() and answers(MACHINE_DSN):
        yield MACHINE_DSN
        return
    with embedded_server() as dsn:
        yield dsn


@contextmanager
def fresh_database(base: str) -> Iterator[str]:
    """Create a uniquely named database on the server of ``base``, yield its DSN, drop it afterwards
    (``WITH (FORCE)``, so connections a test leaked do not keep it alive)."""
    name = f"sb_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(base, dbname=name)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
