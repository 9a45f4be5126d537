"""Taking a backup: one consistent picture of PostgreSQL, the objects and the vectors, written as one archive.

The order is what makes it consistent (see :mod:`secondbrain.ports.backup`):

1. the backup gate is taken alone: removals under way finish, new ones wait;
2. a PostgreSQL transaction (repeatable read) exports its snapshot, and the counts for the manifest are
   read in it: this is the instant the backup is of;
3. the vector collections are copied (each under its own lock) and the objects are hard-linked (files)
   or downloaded (S3): everything the snapshot refers to is there, plus whatever was added since;
4. the gate is released (the pipeline never stopped adding; removals only waited for steps 2-3);
5. ``pg_dump --snapshot`` dumps exactly what the snapshot saw, while the transaction stays open;
6. the archive is written from those copies, sealed when asked, and a restore leaves out what the
   dump does not refer to (:mod:`secondbrain.backup.reconcile`).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import psycopg

from secondbrain import __version__
from secondbrain.backup import pgtools
from secondbrain.backup.archive import ArchiveWriter, BackupError, Manifest
from secondbrain.backup.sealed import SealingWriter, Secret
from secondbrain.ports import ObjectInfo, ObjectStore
from secondbrain.ports.backup import BackupGate

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]  # (what is happening, fraction done 0..1)


class VectorCapture(Protocol):
    """How one vector engine's collections are copied (and put back) whole."""

    engine: str  # "edge" (files of the in-process engine) or "qdrant" (a server's snapshots)

    def capture(self, dest: Path) -> list[tuple[str, Path]]:
        """Copy every collection under ``dest``; (part name, file) for each file to archive."""
        ...


class EdgeCapture:
    """The in-process engine's shard directories, copied under each collection's lock."""

    engine = "edge"

    def __init__(self, store: Any) -> None:
        self.store = store  # an EdgeVectorStore (or a store wrapping one)

    def capture(self, dest: Path) -> list[tuple[str, Path]]:
        self.store.copy_collections(dest)
        return [(f"vectors/edge/{path.relative_to(dest).as_posix()}", path)
                for path in sorted(dest.rglob("*")) if path.is_file()]


class ObjectCapture(Protocol):
    """How the object store's objects are taken (while the gate is held)."""

    def capture(self, dest: Path) -> list[tuple[ObjectInfo, Path]]:
        ...


class LinkedFiles:
    """Objects kept as files: hard links, made in a moment whatever their size."""

    def __init__(self, store: Any) -> None:
        self.store = store  # a FileObjectStore

    def capture(self, dest: Path) -> list[tuple[ObjectInfo, Path]]:
        taken: list[tuple[ObjectInfo, Path]] = self.store.linked_copy(dest)
        return taken


class Downloaded:
    """Objects of an S3 store, read through its API into the staging directory."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def capture(self, dest: Path) -> list[tuple[ObjectInfo, Path]]:
        dest.mkdir(parents=True, exist_ok=True)
        taken: list[tuple[ObjectInfo, Path]] = []
        for info in self.store.list(""):
            target = dest / f"{len(taken):08d}"
            with target.open("wb") as fh:
                for block in self.store.open(info.key):
                    fh.write(block)
            taken.append((info, target))
        return taken


@dataclass
class Sources:
    """Everything one backup reads."""

    dsn: str
    gate: BackupGate
    objects: ObjectCapture
    vectors: VectorCapture
    mode: str  # embedded | distributed
    keys: dict[str, bytes] = field(default_factory=dict)  # keys/<name>: what opens the data again
    state: dict[str, Path] = field(default_factory=dict)  # state/<name>: small files of the data directory
    facts: dict[str, Any] = field(default_factory=dict)  # settings worth knowing at restore time


@dataclass(frozen=True)
class Written:
    """What a backup wrote."""

    manifest: Manifest
    size: int
    seconds: float


# What the manifest counts per user: (name, SQL, the table and columns it reads).  An archive of an older
# data directory (the one ``up`` takes before an upgrade) counts what its tables hold.
_COUNTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sources", "SELECT count(DISTINCT d.source_id) FROM documents d WHERE d.user_id = u.user_id "
                "AND d.superseded_at IS NULL", ("documents", "source_id", "superseded_at")),
    ("versions", "SELECT count(*) FROM documents d WHERE d.user_id = u.user_id", ("documents",)),
    ("passages", "SELECT coalesce(sum(d.chunk_count), 0) FROM documents d WHERE d.user_id = u.user_id "
                 "AND d.superseded_at IS NULL", ("documents", "chunk_count", "superseded_at")),
    ("jobs_succeeded", "SELECT count(*) FROM jobs j WHERE j.user_id = u.user_id AND j.status = 'succeeded'",
     ("jobs", "status")),
    ("jobs_unfinished", "SELECT count(*) FROM jobs j WHERE j.user_id = u.user_id "
                        "AND j.status IN ('queued', 'running')", ("jobs", "status")),
    ("conversations", "SELECT count(*) FROM conversations c WHERE c.user_id = u.user_id", ("conversations",)),
    ("api_keys", "SELECT count(*) FROM api_keys k WHERE k.user_id = u.user_id AND k.revoked_at IS NULL",
     ("api_keys", "revoked_at")),
    ("feeds", "SELECT count(*) FROM feed_tokens f WHERE f.user_id = u.user_id AND f.revoked_at IS NULL",
     ("feed_tokens", "revoked_at")),
)


def _counts_query(conn: psycopg.Connection[Any]) -> str:
    """The per-user counts this database's tables allow (each reads a table with ``user_id``)."""
    have: dict[str, set[str]] = {}
    for table, column in conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                      "WHERE table_schema = current_schema()"):
        have.setdefault(table, set()).add(column)
    parts = [f"({sql}) AS {name}" for name, sql, (table, *columns) in _COUNTS
             if {"user_id", *columns} <= have.get(table, set())]
    return f"SELECT u.user_id{''.join(', ' + p for p in parts)} FROM users u ORDER BY u.user_id"


def snapshot_facts(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """What the manifest says of the database, read inside the backup's snapshot."""
    migrations = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    version_num = int(conn.execute("SHOW server_version_num").fetchone()[0])  # type: ignore[index]
    cur = conn.execute(_counts_query(conn))
    names = [c.name for c in cur.description or ()]
    users = {row[0]: dict(zip(names[1:], (int(v) for v in row[1:]), strict=True)) for row in cur}
    return {"schema_version": max(migrations, default=0), "migrations": migrations,
            "postgres_major": pgtools.server_major(version_num), "users": users}


@contextlib.contextmanager
def exported_snapshot(dsn: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A repeatable-read transaction that exports its snapshot (for ``pg_dump --snapshot``) and stays open
    until the block ends; yields the snapshot's name and the facts read in it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        try:
            name = str(conn.execute("SELECT pg_export_snapshot()").fetchone()[0])  # type: ignore[index]
            yield name, snapshot_facts(conn)
        finally:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")


def dump(dsn: str, snapshot: str, target: Path, major: int) -> int:
    """``pg_dump`` of the whole database as the snapshot saw it (custom format, compressed); the tool's major
    version (a restore needs a pg_restore at least as new)."""
    tools = pgtools.tools_for(major)
    pgtools.run([str(tools.pg_dump), "--format=custom", "--no-owner", "--no-privileges", f"--snapshot={snapshot}",
                 f"--file={target}", f"--dbname={dsn}"], "pg_dump")
    return tools.major


def _say(progress: Progress | None, what: str, done: float) -> None:
    if progress is not None:
        progress(what, done)


def capture_parts(sources: Sources, staging: Path, progress: Progress | None = None
                  ) -> tuple[dict[str, Any], list[tuple[ObjectInfo, Path]], list[tuple[str, Path]], Path]:
    """Steps 1-5 of the module doc: the copies under ``staging`` and the facts of the snapshot."""
    _say(progress, "waiting for removals under way", 0.0)
    started = time.monotonic()
    with exported_snapshot_under(sources) as (snapshot, facts, held):
        _say(progress, "copying the vector collections", 0.05)
        vectors = sources.vectors.capture(staging / "vectors")
        _say(progress, "taking the objects", 0.15)
        objects = sources.objects.capture(staging / "objects")
        held.close()  # the gate goes: removals go on while PostgreSQL is dumped
        log.info("backup picture taken", extra={"ms": round((time.monotonic() - started) * 1000),
                                                "objects": len(objects), "vector_files": len(vectors)})
        _say(progress, "dumping PostgreSQL", 0.25)
        target = staging / "postgres.dump"
        facts["pg_dump_major"] = dump(sources.dsn, snapshot, target, facts["postgres_major"])
    return facts, objects, vectors, target


@contextlib.contextmanager
def exported_snapshot_under(sources: Sources) -> Iterator[tuple[str, dict[str, Any], contextlib.ExitStack]]:
    """The gate held alone, then the snapshot exported; the gate is released when the caller closes the
    stack it is given (or at the end), the snapshot at the end."""
    with contextlib.ExitStack() as held:
        held.enter_context(sources.gate.capturing())
        # The gate outlives this block only if the caller does not close it; the snapshot is opened after it.
        with exported_snapshot(sources.dsn) as (snapshot, facts):
            yield snapshot, facts, held


def write_backup(sources: Sources, out: IO[bytes], staging: Path, *, secret: Secret | None = None,
                 progress: Progress | None = None) -> Manifest:
    """Take the picture and write the archive to ``out`` (sealed with ``secret`` when given)."""
    staging.mkdir(parents=True, exist_ok=False)
    try:
        facts, objects, vectors, dumped = capture_parts(sources, staging, progress)
        sink: IO[bytes] = SealingWriter(out, secret) if secret is not None else out  # type: ignore[assignment]
        writer = ArchiveWriter(sink, sealed=secret is not None)
        writer.add_file("postgres.dump", dumped)
        for name, data in sorted(sources.keys.items()):
            writer.add_bytes(f"keys/{name}", data)
        for name, path in sorted(sources.state.items()):
            if path.is_file():
                writer.add_file(f"state/{name}", path)
        total = sum(info.size for info, _ in objects) + sum(p.stat().st_size for _, p in vectors) or 1
        done = 0
        for info, path in objects:
            writer.add_file(f"objects/{info.key}", path, content_type=info.content_type)
            done += info.size
            _say(progress, "writing the archive", 0.3 + 0.7 * done / total)
        for name, path in vectors:
            writer.add_file(name, path, compress=True)
            done += path.stat().st_size
            _say(progress, "writing the archive", 0.3 + 0.7 * done / total)
        manifest = Manifest(datetime.now(UTC).isoformat(), {
            "secondbrain_version": __version__, "mode": sources.mode, "vector_engine": sources.vectors.engine,
            "objects": {"count": len(objects), "bytes": sum(i.size for i, _ in objects)},
            **facts, **({"settings": sources.facts} if sources.facts else {})})
        writer.finish(manifest)
        if isinstance(sink, SealingWriter):
            sink.close()
        return manifest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def ensure_writable(path: Path) -> None:
    """A clear error before any work when the archive's folder cannot take it."""
    folder = path.parent
    if not folder.is_dir():
        raise BackupError(f"the folder {folder} does not exist: create it or choose another place for the backup")
    if path.is_dir():
        raise BackupError(f"{path} is a folder: give the name of the archive file to write")
