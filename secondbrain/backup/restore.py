"""Restoring an archive: its every part checked, then a new instance built from it.

* :func:`open_archive` reads an archive (sealed or plain) into a staging folder and checks it whole; nothing
  is built unless every part matches the manifest.
* :func:`load_database` restores the PostgreSQL dump with ``pg_restore`` into an empty database and applies
  the migrations this version has and the archive's did not (an archive of an older secondbrain).
* :func:`place_objects` and the engines' placing put the objects and the vector collections back.
* :mod:`secondbrain.backup.reconcile` then removes what the dump does not refer to.

Building a data directory for ``secondbrain up`` from all of it is :func:`app.backups.restore_data_dir`; a
deployment with servers is :func:`app.backups.restore_servers`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psycopg

from secondbrain.backup import pgtools
from secondbrain.backup.archive import BackupError, Manifest, check_layout, inflate_to, read_archive
from secondbrain.backup.sealed import OpeningReader, Secret, is_sealed
from secondbrain.ports import ObjectStore

Progress = Callable[[str, float], None]


@dataclass
class Opened:
    """An archive read and checked into ``staging``: each part's file is ``staging / part.member``."""

    manifest: Manifest
    staging: Path
    sealed: bool

    def part_path(self, name: str) -> Path | None:
        for part in self.manifest.parts:
            if part.name == name:
                return self.staging / part.member
        return None


class _Counting:
    """Hands on what it reads, telling ``progress`` the share of the file read so far."""

    def __init__(self, source: IO[bytes], total: int, progress: Progress | None) -> None:
        self.source, self.total, self.progress, self.done, self.told = source, max(total, 1), progress, 0, -1

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        self.done += len(data)
        percent = int(100 * self.done / self.total)
        if self.progress is not None and percent != self.told:
            self.told = percent
            self.progress("reading and checking the archive", self.done / self.total)
        return data


def open_archive(path: Path, staging: Path, secret: Secret | None, progress: Progress | None = None) -> Opened:
    """Read and check the archive at ``path`` into ``staging`` (made here; removed again on failure)."""
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    sealed = is_sealed(path)
    if sealed and secret is None:
        raise BackupError("this backup is sealed: give its passphrase (--passphrase, --passphrase-file or "
                          "SB_BACKUP_PASSPHRASE) or its key file (--key-file)")
    if not sealed:
        check_layout(path)
    staging.mkdir(parents=True, exist_ok=False)
    try:
        with path.open("rb") as raw:
            counted = _Counting(raw, path.stat().st_size, progress)
            source: Any = OpeningReader(counted, secret) if sealed and secret is not None else counted  # type: ignore[arg-type]
            manifest = read_archive(source, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Opened(manifest, staging, sealed)


def check_only(path: Path, secret: Secret | None, progress: Progress | None = None) -> Manifest:
    """Check every part of the archive without unpacking it."""
    sealed = is_sealed(path)
    if sealed and secret is None:
        raise BackupError("this backup is sealed: give its passphrase or key file to check it")
    if not sealed:
        check_layout(path)
    with path.open("rb") as raw:
        counted = _Counting(raw, path.stat().st_size, progress)
        source: Any = OpeningReader(counted, secret) if sealed and secret is not None else counted  # type: ignore[arg-type]
        return read_archive(source, None)


def database_is_empty(dsn: str) -> bool:
    """Whether the database has no secondbrain tables yet (a restore never writes over an instance)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('public.schema_migrations') IS NULL AND "
                           "to_regclass('public.users') IS NULL").fetchone()
    return bool(row and row[0])


def server_major(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return pgtools.server_major(int(conn.execute("SHOW server_version_num").fetchone()[0]))  # type: ignore[index]


def load_database(opened: Opened, dsn: str) -> None:
    """``pg_restore`` the dump into the (empty) database at ``dsn``."""
    dumped = opened.part_path("postgres.dump")
    if dumped is None:
        raise BackupError("the archive has no PostgreSQL dump (postgres.dump)")
    if not database_is_empty(dsn):
        raise BackupError("the database to restore into already holds secondbrain data: restore into a new, empty "
                          "database (a restore never writes over an instance)")
    archive_major = int(opened.manifest.fields.get("postgres_major") or 0)
    target_major = server_major(dsn)
    if archive_major > target_major:
        raise BackupError(f"the backup was dumped from PostgreSQL {archive_major}, and the server to restore into is "
                          f"PostgreSQL {target_major}: restore into PostgreSQL {archive_major} or newer")
    # A pg_restore at least as new as the pg_dump that wrote the dump, and of the target's own version when the
    # dump allows it.
    tools = pgtools.tools_for(max(int(opened.manifest.fields.get("pg_dump_major") or archive_major), target_major))
    pgtools.run([str(tools.pg_restore), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
                 f"--dbname={dsn}", str(dumped)], "pg_restore")


def place_objects(opened: Opened, objects: ObjectStore, progress: Progress | None = None) -> int:
    """Put every archived object back under its key (with its content type); how many."""
    parts = opened.manifest.named("objects/")
    total = sum(p.size for p in parts) or 1
    done = 0
    for part in parts:
        path = opened.staging / part.member
        with path.open("rb") as fh:
            objects.put(part.name[len("objects/"):], fh, size=part.size,
                        content_type=part.content_type or "application/octet-stream")
        done += part.size
        if progress is not None:
            progress("putting the objects back", done / total)
    return len(parts)


def place_edge_collections(opened: Opened, vectors_dir: Path) -> list[str]:
    """Move the archived edge shards into ``vectors_dir`` (which must not hold them)."""
    if opened.manifest.fields.get("vector_engine") != "edge":
        raise BackupError("the backup's vectors are snapshots of a Qdrant server, and this instance keeps its vectors "
                          "with the in-process engine: restore it into a deployment with a Qdrant server "
                          "(SB_VECTOR_STORE=qdrant)")
    vectors_dir.mkdir(parents=True, exist_ok=True)
    names = set()
    for part in opened.manifest.named("vectors/edge/"):
        relative = Path(part.name[len("vectors/edge/"):])
        target = vectors_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if part.encoding == "zlib":
            with (opened.staging / part.member).open("rb") as packed:
                inflate_to(packed, target)
            (opened.staging / part.member).unlink()
        else:
            os.replace(opened.staging / part.member, target)
        names.add(relative.parts[0])
    return sorted(names)


def write_private(path: Path, data: bytes) -> None:
    """A file only its owner reads (keys, state)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def keys_of(opened: Opened) -> dict[str, bytes]:
    """The keys the archive carries (keys/<name>)."""
    return {p.name[len("keys/"):]: (opened.staging / p.member).read_bytes() for p in opened.manifest.named("keys/")}


def state_of(opened: Opened) -> dict[str, Path]:
    """The small state files the archive carries (state/<name>), where they were unpacked."""
    return {p.name[len("state/"):]: opened.staging / p.member for p in opened.manifest.named("state/")}


def summary(manifest: Manifest) -> dict[str, Any]:
    """What the archive holds, for people: when, which version, counts per user."""
    return {"created_at": manifest.created_at, "format_version": manifest.format_version,
            "secondbrain_version": manifest.fields.get("secondbrain_version"),
            "schema_version": manifest.fields.get("schema_version"), "mode": manifest.fields.get("mode"),
            "vector_engine": manifest.fields.get("vector_engine"), "objects": manifest.fields.get("objects"),
            "users": manifest.fields.get("users", {})}


@contextlib.contextmanager
def staged(where: Path) -> Iterator[Path]:
    """A staging folder removed at the end, whatever happens."""
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


__all__ = ["Opened", "check_only", "keys_of", "load_database", "open_archive", "place_edge_collections",
           "place_objects", "state_of", "summary", "write_private"]
