"""Backups wired to a deployment: what a backup reads in each mode, the backup folder of ``up``, and building
an instance from an archive.

* :func:`sources_for` -- what a backup reads from a runtime's stores: embedded mode hard-links the object
  files and copies the in-process engine's shards; distributed mode reads S3 through its API and takes
  snapshots through Qdrant's snapshot API.
* :func:`back_up_data_dir` -- "back up this data directory now", for a data directory no server holds: one
  call, one archive; :func:`back_up_before_upgrade` -- the same from inside ``up`` before it migrates one.
* :func:`restore_data_dir` -- a new data directory for ``secondbrain up`` from an archive.
* :func:`restore_servers` -- a new distributed deployment's stores (PostgreSQL, S3, Qdrant) from an archive.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from secondbrain.backup import folder as backup_folder
from secondbrain.backup import reconcile, restore
from secondbrain.backup.archive import BackupError, Manifest
from secondbrain.backup.capture import Downloaded, EdgeCapture, LinkedFiles, Sources, VectorCapture, write_backup
from secondbrain.backup.sealed import Secret
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]

# The data directory's keys (what opens its data again) and small state files a backup carries.
KEY_FILES = ("api-key", "pipeline.key", "secrets.key", "vapid.pem")  # vapid.pem: browsers subscribed with it
STATE_FILES = ("watch-state.json", "mail-state.json", "calendar-state.json", "lan/cert.pem", "lan/key.pem",
               "lan/address")


def secret_from(settings: Settings) -> Secret | None:
    """The passphrase or key file ``SB_BACKUP_*`` names, if any."""
    if settings.backup_key_file is not None:
        return Secret.key_file(settings.backup_key_file)
    if settings.backup_passphrase is not None and settings.backup_passphrase.get_secret_value():
        return Secret.passphrase(settings.backup_passphrase.get_secret_value())
    return None


def vector_capture(rt: Runtime) -> VectorCapture:
    """How this deployment's vector collections are copied."""
    assert rt.vectors is not None, "a backup needs the vector store"
    if rt.settings.vector_store == "edge":
        return EdgeCapture(rt.vectors)
    from secondbrain.backup.qdrant_snapshots import QdrantSnapshots

    s = rt.settings
    return QdrantSnapshots(s.qdrant_url, s.qdrant_api_key.get_secret_value() if s.qdrant_api_key else None)


def sources_for(rt: Runtime, data_dir: Path | None) -> Sources:
    """What a backup of this runtime's deployment reads (``data_dir``: embedded mode's, for its keys)."""
    s = rt.settings
    assert rt.gate is not None, "a backup needs the backup gate"
    objects = LinkedFiles(rt.objects) if s.object_store == "files" else Downloaded(rt.objects)
    keys: dict[str, bytes] = {}
    state: dict[str, Path] = {}
    if data_dir is not None:
        for name in KEY_FILES:
            with contextlib.suppress(FileNotFoundError):
                keys[name] = (data_dir / name).read_bytes()
        state = {name: data_dir / name for name in STATE_FILES if (data_dir / name).is_file()}
    else:  # distributed: the keys come from the settings
        for name, value in (("pipeline.key", s.pipeline_key), ("secrets.key", s.secrets_key)):
            if value is not None:
                keys[name] = value.get_secret_value().encode() + b"\n"
    facts = {"embedding_model": s.embedding_model, "topic_prefix": s.topic_prefix, "timezone": s.timezone,
             "object_store": s.object_store, "vector_store": s.vector_store}
    return Sources(dsn=s.dsn(), gate=rt.gate, objects=objects, vectors=vector_capture(rt), mode=s.mode, keys=keys,
                   state=state, facts=facts)


def backups_for(rt: Runtime, data_dir: Path | None) -> Any:
    """The backup folder and schedule of a running ``up`` (:class:`services.backups.service.Backups`)."""
    from services.backups.service import Backups

    s = rt.settings
    staging = data_dir if data_dir is not None else s.backups_dir
    return Backups(folder=s.backups_dir.resolve(), sources=lambda: sources_for(rt, data_dir), staging_root=staging,
                   interval_s=s.backup_interval_s, keep_daily=s.backup_keep_daily, keep_weekly=s.backup_keep_weekly,
                   secret=secret_from(s))


@contextlib.contextmanager
def local_runtime(settings: Settings, *, data_dir: Path | None = None) -> Iterator[tuple[Runtime, Path | None]]:
    """The stores of a deployment no server of this machine holds right now: embedded mode's data directory
    (its PostgreSQL started here, its vectors opened here), or distributed mode's servers.  ``data_dir``: an
    embedded data directory whose PostgreSQL this process has started already (``settings`` carry its address),
    as ``up`` has when it is about to migrate it."""
    from app.assembly import build_runtime
    from secondbrain.infra.postgres import EmbeddedPostgres

    pg = None
    if data_dir is not None:
        data_dir = data_dir.resolve()
    elif settings.postgres_dsn is None:
        data_dir = settings.data_dir.resolve()
        if not (data_dir / "postgres").is_dir():
            raise BackupError(f"{data_dir} is not a secondbrain data directory (no postgres folder in it)")
        pg = EmbeddedPostgres(data_dir / "postgres").start()
        settings = settings.model_copy(update={"postgres_dsn": SecretStr(pg.dsn), "data_dir": data_dir})
    try:
        rt = build_runtime(settings, vectors=True, models=False, migrate=False)  # the data as it is, unchanged
        try:
            yield rt, data_dir
        finally:
            rt.close()
    finally:
        if pg is not None:
            pg.stop()


@dataclass(frozen=True)
class Taken:
    """An archive written, and what it holds."""

    path: Path
    size: int
    manifest: Manifest


def back_up(settings: Settings, target: Path, *, secret: Secret | None = None,
            progress: Progress | None = None, data_dir: Path | None = None) -> Taken:
    """Back up the deployment ``settings`` describe into ``target`` (written whole, or not at all), when no
    server of this machine holds it (a running ``up`` is asked through its API instead).  ``data_dir``: see
    :func:`local_runtime`."""
    target = target.resolve()
    if target.is_dir():
        raise BackupError(f"{target} is a folder: give the name of the archive file to write")
    if not target.parent.is_dir():
        raise BackupError(f"the folder {target.parent} does not exist: create it or choose another place")
    with local_runtime(settings, data_dir=data_dir) as (rt, data_dir):
        staging = (data_dir or target.parent) / f".backup-staging-{os.getpid()}"
        with backup_folder.written_whole(target) as out:
            manifest = write_backup(sources_for(rt, data_dir), out, staging, secret=secret, progress=progress)
    return Taken(target, target.stat().st_size, manifest)


def back_up_data_dir(data_dir: Path, into: Path | None = None, *, secret: Secret | None = None,
                     progress: Progress | None = None) -> Path:
    """Back up the embedded data directory ``data_dir`` now, while no ``secondbrain up`` holds it (for example
    just before ``up`` migrates it to a new version), and return the archive's path.

    ``into``: a folder (the archive gets a dated name in it) or a file name; by default the backup folder
    (``SB_BACKUP_DIR``, else ``<data dir>-backups``).  ``secret`` seals it (default: ``SB_BACKUP_PASSPHRASE``
    or ``SB_BACKUP_KEY_FILE`` when set).  Raises :class:`~secondbrain.backup.archive.BackupError` with a
    sentence when it cannot."""
    settings = Settings().model_copy(update={"data_dir": Path(data_dir).resolve(), "postgres_dsn": None,  # type: ignore[call-arg]
                                             "object_store": "files", "vector_store": "edge", "mode": "embedded"})
    target = Path(into) if into is not None else settings.backups_dir
    if target.is_dir() or into is None:
        target.mkdir(parents=True, exist_ok=True)
        backup_folder.remove_leftovers(target)
        target = target / backup_folder.archive_name(_now(), target)
    return back_up(settings, target, secret=secret if secret is not None else secret_from(settings),
                   progress=progress).path


def back_up_before_upgrade(settings: Settings) -> Path:
    """The archive ``up`` takes of its data directory before migrating it to a new version, into the backup
    folder (``SB_BACKUP_DIR``, else ``<data dir>-backups``), sealed as the scheduled backups are.  ``settings``
    carry the address of the embedded PostgreSQL ``up`` has started; no other part of it runs yet."""
    folder = settings.backups_dir.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    backup_folder.remove_leftovers(folder)
    target = folder / backup_folder.archive_name(_now(), folder)
    return back_up(settings, target, secret=secret_from(settings), data_dir=settings.data_dir).path


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


# --------------------------------------------------------------------------- restoring


@dataclass(frozen=True)
class Restored:
    """What a restore built."""

    manifest: Manifest
    reconciled: reconcile.Reconciled
    applied_migrations: list[int]
    objects: int
    collections: list[str]

    def json(self) -> dict[str, Any]:
        return {**restore.summary(self.manifest), "applied_migrations": self.applied_migrations,
                "objects_restored": self.objects, "collections": self.collections,
                "reconciled": self.reconciled.json()}


def restore_data_dir(archive: Path, data_dir: Path, *, secret: Secret | None = None,
                     progress: Progress | None = None, migrate: bool = True) -> Restored:
    """Build a new embedded data directory at ``data_dir`` (missing or empty) from ``archive``.  ``migrate``
    False keeps the database at the archive's schema, for the version that wrote it (going back after an
    upgrade): nothing of this version's is applied, and the orphans are left for that version's own start."""
    from secondbrain.infra.private import PRIVATE_UMASK
    from secondbrain.stores.objects_fs import FileObjectStore
    from secondbrain.stores.vectors_edge import EdgeVectorStore

    data_dir = data_dir.resolve()
    if data_dir.exists() and any(data_dir.iterdir()):
        raise BackupError(f"{data_dir} is not empty: restore into a new data directory (a restore never writes over "
                          "an instance); move the old one aside first if you mean to replace it")
    old_umask = os.umask(PRIVATE_UMASK)
    made = not data_dir.exists()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with restore.staged(data_dir / ".restore-staging") as staging:
            opened = restore.open_archive(archive, staging, secret, progress)
            for name, data in restore.keys_of(opened).items():
                restore.write_private(data_dir / name, data)
            for name, path in restore.state_of(opened).items():
                restore.write_private(data_dir / name, path.read_bytes())
            collections = restore.place_edge_collections(opened, data_dir / "vectors")
            objects = FileObjectStore(data_dir / "objects")
            count = restore.place_objects(opened, objects, progress)
            with _embedded_pg(data_dir) as dsn:
                if not migrate:  # this version's reading of the tables may not be the archive's
                    restore.load_database(opened, dsn)
                    return Restored(opened.manifest, reconcile.Reconciled(), [], count, collections)
                applied = _load_and_migrate(opened, dsn, progress)
                vectors = EdgeVectorStore(data_dir / "vectors", index_after=0)
                try:
                    if progress is not None:
                        progress("leaving out what the dump does not refer to", 0.95)
                    report = reconcile.reconcile(dsn, objects, vectors)
                finally:
                    vectors.close()
        return Restored(opened.manifest, report, applied, count, collections)
    except BaseException:
        if made:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)
        raise
    finally:
        os.umask(old_umask)


@contextlib.contextmanager
def _embedded_pg(data_dir: Path) -> Iterator[str]:
    from secondbrain.infra.postgres import EmbeddedPostgres

    pg = EmbeddedPostgres(data_dir / "postgres").start()
    try:
        yield pg.dsn
    finally:
        pg.stop()


def _load_and_migrate(opened: restore.Opened, dsn: str, progress: Progress | None) -> list[int]:
    """The dump restored, then the migrations this version has and the archive's did not."""
    from secondbrain.stores.postgres.base import PostgresDatabase

    if progress is not None:
        progress("restoring PostgreSQL", 0.8)
    restore.load_database(opened, dsn)
    db = PostgresDatabase(dsn, min_size=0, max_size=2)
    try:
        return db.migrate()
    finally:
        db.close()


def restore_servers(archive: Path, settings: Settings, *, secret: Secret | None = None,
                    progress: Progress | None = None, staging_dir: Path | None = None) -> Restored:
    """Restore ``archive`` into the (empty) stores of a distributed deployment: PostgreSQL at SB_POSTGRES_DSN,
    the S3 bucket and the Qdrant server; unfinished jobs are queued again for its pipeline."""
    from app.assembly import build_gated_stores, build_metadata, build_objects

    if settings.postgres_dsn is None:
        raise BackupError("restoring into servers needs SB_POSTGRES_DSN (and SB_OBJECT_STORE=s3, SB_VECTOR_STORE="
                          "qdrant): to build a data directory for `secondbrain up`, give --data-dir instead")
    dsn = settings.dsn()
    base = staging_dir or Path.cwd()
    with restore.staged(base / f".restore-staging-{os.getpid()}") as staging:
        opened = restore.open_archive(archive, staging, secret, progress)
        objects = build_objects(settings)
        ensure = getattr(objects, "ensure_bucket", None)
        if ensure is not None:  # an S3 bucket is made when missing
            ensure()
        if objects.list("users/"):
            raise BackupError("the object store already holds secondbrain objects: restore into an empty bucket")
        applied = _load_and_migrate(opened, dsn, progress)
        count = restore.place_objects(opened, objects, progress)
        collections = _place_vectors(opened, settings)
        metadata = build_metadata(settings)
        # The leftovers are removed holding the deployment's backup gate, like every other removal.
        _gate, gated_objects, vectors = build_gated_stores(settings, metadata, vectors=True)
        assert vectors is not None
        try:
            report = reconcile.reconcile(dsn, gated_objects, vectors)
            requeued = metadata.outbox.requeue_unfinished()
            log.info("restored into servers", extra={"requeued": requeued})
        finally:
            vectors.close()
            metadata.close()
        _check_keys(opened, settings)
    return Restored(opened.manifest, report, applied, count, collections)


def _place_vectors(opened: restore.Opened, settings: Settings) -> list[str]:
    if settings.vector_store == "qdrant":
        from secondbrain.backup.qdrant_snapshots import QdrantSnapshots

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantSnapshots(settings.qdrant_url, key).restore(opened)
    return restore.place_edge_collections(opened, settings.vectors_dir)


def _check_keys(opened: restore.Opened, settings: Settings) -> None:
    """Warn when the deployment's keys are not the archive's (stored secrets would not open)."""
    keys = restore.keys_of(opened)
    for name, value in (("secrets.key", settings.secrets_key), ("pipeline.key", settings.pipeline_key)):
        archived = keys.get(name, b"").decode().strip()
        if archived and (value is None or value.get_secret_value().strip() != archived):
            log.warning("the deployment's %s is not the backup's: set SB_%s to the backup's (restore --show-keys "
                        "prints it)", name, name.split(".")[0].upper() + "_KEY")
