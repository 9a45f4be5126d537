"""The admin commands that remove data without a server (``users erase``, ``retention run``) hold the backup
gate: while a backup takes its picture (here another process holding the gate, as ``up`` or ``secondbrain
backup`` does), they wait, and nothing the picture may still copy is gone."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from devtools.processes import REPO, cli_env
from secondbrain import keys
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.stores.postgres.backup_gate import PostgresBackupGate
from secondbrain.stores.postgres.base import PostgresDatabase
from secondbrain.submissions import Submissions

RECEIPT = b"# Receipt\n\nA kumquat tree, 34 euros.\n"


@dataclass
class World:
    dsn: str
    data_dir: Path
    object_key: str
    artifact_id: str


def runtime(dsn: str, data_dir: Path) -> Runtime:
    settings = Settings(data_dir=data_dir, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9")  # type: ignore[call-arg]
    return build_runtime(settings, vectors=True, models=False)


@pytest.fixture()
def world(dsn: str, tmp_path: Path) -> Iterator[World]:
    """bob with a raw file whose job finished ten days ago, and a vector collection."""
    rt = runtime(dsn, tmp_path / "data")
    try:
        rt.metadata.users.ensure_user("bob")
        done = Submissions(rt, None).file(
            "bob", data=RECEIPT, size=len(RECEIPT), sha256=hashlib.sha256(RECEIPT).hexdigest(),
            content_type="text/markdown", filename="receipt.md", title=None, captured_at=None,
            source_uri="file:receipt.md", idempotency_key=None, attributes={}, capture="upload")
        assert rt.vectors is not None
        rt.vectors.ensure_collection("bob", 8)
    finally:
        rt.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE jobs SET status = 'succeeded', finished_at = now() - interval '10 days' "
                     "WHERE job_id = %s", (done.job_id,))
        conn.execute("UPDATE artifacts SET submitted_at = now() - interval '10 days' WHERE artifact_id = %s",
                     (done.artifact_id,))
    assert done.artifact_id is not None
    yield World(dsn, tmp_path / "data", keys.artifact_key("bob", done.artifact_id), done.artifact_id)


def waiting_on_the_gate(dsn: str, proc: subprocess.Popen[str], timeout: float = 120.0) -> None:
    """Until another session waits for the gate's advisory lock (the command reached its first removal)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            if conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone() \
                    != (0,):
                return
            if proc.poll() is not None:
                raise AssertionError(f"the command ended without waiting for the backup: {proc.communicate()}")
            time.sleep(0.1)
    raise AssertionError("the command never reached the backup gate")


@pytest.mark.parametrize("command", [["users", "erase", "bob", "--yes"], ["retention", "run", "--days", "7"]])
def test_a_removal_from_the_cli_waits_while_a_backup_takes_its_picture(world: World, command: list[str]) -> None:
    env = cli_env({"SB_POSTGRES_DSN": world.dsn, "SB_DATA_DIR": str(world.data_dir)})
    database = PostgresDatabase(world.dsn, min_size=0, max_size=2)
    raw = world.data_dir / "objects" / world.object_key
    try:
        with PostgresBackupGate(database).capturing():
            proc = subprocess.Popen([sys.executable, "-m", "app.cli", *command, "--json"], env=env, cwd=REPO,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                waiting_on_the_gate(world.dsn, proc)
                # What the backup copies is all still there: the raw file, and (retention) its row says it is kept.
                assert raw.read_bytes() == RECEIPT
                assert any(p.name.startswith("u_bob") for p in (world.data_dir / "vectors").iterdir())
                with psycopg.connect(world.dsn) as conn:
                    assert conn.execute("SELECT count(*) FROM artifacts WHERE artifact_id = %s AND raw_purged_at IS "
                                        "NOT NULL", (world.artifact_id,)).fetchone() == (0,)
                assert proc.poll() is None
            except BaseException:
                proc.kill()
                raise
        _out, err = proc.communicate(timeout=120)
    finally:
        database.close()
    assert proc.returncode == 0, err
    assert not raw.exists()  # once the picture is taken, the removal goes on
    if command[0] == "users":
        assert not any(p.name.startswith("u_bob") for p in (world.data_dir / "vectors").iterdir())
