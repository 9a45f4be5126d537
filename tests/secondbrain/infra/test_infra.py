"""The local service launchers (:mod:`secondbrain.infra`, and the S3 stand-in in :mod:`devtools.s3`) really serve
their protocols."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from minio import Minio

from devtools.s3 import MotoS3Server, docker_available, try_testcontainers_minio
from secondbrain.infra import (
    EmbeddedPostgres,
    TansuBroker,
    TansuNotFound,
    TansuStartError,
    find_tansu_binary,
    free_port,
    machine_postgres_dsn,
)
from secondbrain.infra.ports import port_accepts, port_is_bindable

# --------------------------------------------------------------------------- ports


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


# --------------------------------------------------------------------------- tansu


def test_find_tansu_binary() -> None:
    binary = find_tansu_binary()
    assert binary.is_file() and os.access(binary, os.X_OK)


def test_tansu_binary_override_must_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-tansu"
    monkeypatch.setenv("SB_TANSU_BIN", str(missing))
    with pytest.raises(TansuNotFound, match="no-such-tansu"):
        find_tansu_binary()
    with pytest.raises(TansuNotFound, match="no-such-tansu"):
        TansuBroker().start()


def test_tansu_start_failure_names_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "fake-tansu"
    fake.write_text("#!/bin/sh\necho boom-from-fake\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SB_TANSU_BIN", str(fake))
    with pytest.raises(TansuStartError, match="fake-tansu") as excinfo:
        TansuBroker(port=free_port(), startup_timeout=5).start()
    assert "boom-from-fake" in str(excinfo.value)


async def test_tansu_produce_consume(tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "tansu.log"
    broker = TansuBroker(port=port, log_path=log_path)
    with broker:
        assert broker.bootstrap == f"127.0.0.1:{port}"
        assert broker.running
        topic = f"sb.test.{uuid.uuid4().hex[:8]}"

        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        finally:
            await admin.close()

        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        await producer.start()
        try:
            meta = await producer.send_and_wait(topic, b"payload", key=b"user-1",
                                                headers=[("trace", b"abc"), ("kind", b"test")])
        finally:
            await producer.stop()
        assert meta.offset == 0

        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=broker.bootstrap, group_id=f"g-{uuid.uuid4().hex[:6]}",
            enable_auto_commit=False, auto_offset_reset="earliest",
            session_timeout_ms=2000, heartbeat_interval_ms=500,
        )
        await consumer.start()
        try:
            msg = await asyncio.wait_for(consumer.getone(), timeout=30)
            assert (msg.key, msg.value) == (b"user-1", b"payload")
            assert list(msg.headers) == [("trace", b"abc"), ("kind", b"test")]
            await consumer.commit()
            assert await consumer.committed(TopicPartition(topic, 0)) == 1
        finally:
            await consumer.stop()
        pid = broker.pid
    assert not broker.running
    assert not port_accepts(port)
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert log_path.exists()


def test_tansu_free_port_and_restart() -> None:
    broker = TansuBroker()
    broker.start()
    try:
        port = broker.port
        assert port_accepts(port)
        broker.stop()
        assert not port_accepts(port)
        broker.start()  # restarts on the same port when it is still free
        assert broker.port == port and port_accepts(port)
    finally:
        broker.stop()
    broker.stop()  # idempotent


def test_tansu_takes_its_preferred_port_when_free_and_another_when_busy() -> None:
    wanted = free_port()
    with TansuBroker(preferred_port=wanted) as first:
        assert first.port == wanted
        with TansuBroker(preferred_port=wanted) as second:  # taken: any free port, not a failure
            assert second.port != wanted and port_accepts(second.port)


def test_tansu_never_takes_a_broker_that_bound_its_port_first_for_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `secondbrain up` starting at once: the other broker binds the preferred port between this one's
    check and its bind.  The other answers on that address while this one is still starting (it then fails
    to bind): this one must go to another port, never hand its stages the other's broker."""
    from secondbrain.infra import tansu

    with TansuBroker() as other:
        monkeypatch.setattr(tansu, "port_is_bindable", lambda port, host: port == other.port or port_is_bindable(
            port, host))  # the check saw the port free: the other bound it right after
        with TansuBroker(preferred_port=other.port) as mine:
            assert mine.port != other.port and port_accepts(mine.port)
            cluster, _ = tansu.kafka_metadata(mine.host, mine.port)
            assert cluster == mine._cluster_id != tansu.kafka_metadata(other.host, other.port)[0]


def test_tansu_busy_port_is_an_error() -> None:
    with TansuBroker() as first, pytest.raises(TansuStartError, match="in use"):
        TansuBroker(port=first.port).start()


# --------------------------------------------------------------------------- postgres


@pytest.fixture
def pg_parent_dir() -> Iterator[Path]:
    """A directory outside pytest's tmp tree for PostgreSQL data.

    Run as root, pgserver starts postgres as the system user ``pgserver`` and opens up the
    parents of the data directory; any concurrent pytest session resets its private
    ``pytest-of-<user>`` directory to 0700, which would lock that user out mid-test.
    """
    parent = Path(tempfile.mkdtemp(prefix="sb-test-pg-"))
    yield parent
    shutil.rmtree(parent, ignore_errors=True)


def test_embedded_postgres_keeps_data(pg_parent_dir: Path) -> None:
    pg = EmbeddedPostgres(pg_parent_dir / "pgdata")
    with pg, psycopg.connect(pg.dsn, autocommit=True) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        conn.execute("create table kept (v text)")
        conn.execute("insert into kept values ('survives')")
    assert not pg.running
    with pytest.raises(RuntimeError):
        _ = pg.dsn
    pg.start()
    try:
        with psycopg.connect(pg.dsn) as conn:
            assert conn.execute("select v from kept").fetchall() == [("survives",)]
    finally:
        pg.stop()


def test_a_new_data_directory_starts_as_a_copy_of_the_template_and_refuses_one_in_use(pg_parent_dir: Path) -> None:
    """SB_POSTGRES_TEMPLATE: a new cluster is the template's copy (what was in it is there, no initdb ran); a running
    template, or a folder that is no cluster, is refused with what to do."""
    template = pg_parent_dir / "template"
    with EmbeddedPostgres(template) as pg, psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("create table from_template (v text)")
        conn.execute("insert into from_template values ('copied')")
        with pytest.raises(RuntimeError, match="in use by a server"):
            EmbeddedPostgres(pg_parent_dir / "early", template=template).start()
    (template / "left-open.log").write_text("made under a loose umask")
    (template / "left-open.log").chmod(0o644)
    with EmbeddedPostgres(pg_parent_dir / "copy", template=template) as pg, psycopg.connect(pg.dsn) as conn:
        assert conn.execute("select v from from_template").fetchall() == [("copied",)]
        assert stat.S_IMODE((pg_parent_dir / "copy" / "left-open.log").stat().st_mode) == 0o600  # the owner's only
        conn.execute("insert into from_template values ('only in the copy')")
    with EmbeddedPostgres(template) as pg, psycopg.connect(pg.dsn) as conn:  # the template is left as it was
        assert conn.execute("select count(*) from from_template").fetchone() == (1,)
    (pg_parent_dir / "not-a-cluster").mkdir()
    with pytest.raises(RuntimeError, match="no initialised data directory"):
        EmbeddedPostgres(pg_parent_dir / "other", template=pg_parent_dir / "not-a-cluster").start()


def test_embedded_postgres_runs_in_a_folder_with_spaces_in_its_path(pg_parent_dir: Path) -> None:
    # macOS keeps application data in "~/Library/Application Support": pg_ctl splits its socket option
    # on spaces, and a libpq URI may not hold one.
    where = pg_parent_dir / "Application Support" / "secondbrain" / "postgres"
    where.parent.mkdir(parents=True)
    where.parent.parent.chmod(0o755)  # as pg_parent_dir: run as root, the postgres user passes through
    with EmbeddedPostgres(where) as pg, psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("create table kept (v text)")
        conn.execute("insert into kept values ('spaced')")
    # A second process on the same folder (the CLI beside a running `up`) reaches it the same way.
    with EmbeddedPostgres(where) as pg, psycopg.connect(pg.dsn) as conn:
        assert conn.execute("select v from kept").fetchall() == [("spaced",)]


def test_machine_postgres_dsn_is_quick() -> None:
    started = time.monotonic()
    dsn = machine_postgres_dsn()
    assert time.monotonic() - started < 3
    assert dsn is None or dsn.startswith("postgresql://")


# --------------------------------------------------------------------------- s3


def test_moto_s3_with_minio_sdk() -> None:
    with MotoS3Server() as server:
        assert server.endpoint.startswith("127.0.0.1:")
        client = Minio(server.endpoint, access_key=server.access_key, secret_key=server.secret_key,
                       secure=False, region=server.region)
        bucket = f"sb-infra-{uuid.uuid4().hex[:8]}"
        client.make_bucket(bucket)
        client.put_object(bucket, "k", io.BytesIO(b"value"), length=5, content_type="text/plain")
        response = client.get_object(bucket, "k")
        try:
            assert response.read() == b"value"
        finally:
            response.close()
            response.release_conn()
        port = server.port
    assert not port_accepts(port)


def test_testcontainers_minio_returns_quickly_without_docker() -> None:
    if docker_available():
        pytest.skip("a Docker engine is reachable; the contract suite covers MinIO")
    started = time.monotonic()
    assert try_testcontainers_minio() is None
    assert time.monotonic() - started < 3
