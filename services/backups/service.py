"""Backups of a running instance: one at a time, into the backup folder, on a schedule and when asked.

:class:`Backups` owns the backup folder of one process (``secondbrain up``): it takes a backup now (the web
page's "Back up now", ``secondbrain backup`` while ``up`` runs), every ``SB_BACKUP_INTERVAL`` when one is
set, rotates the folder (N daily, M weekly), and says where things stand: the last archive and its size,
whether it is older than twice the interval, the one being written (what it is doing, how far along, the
time left) and the last failure.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secondbrain.backup import folder as backup_folder
from secondbrain.backup.archive import BackupError
from secondbrain.backup.capture import Sources, write_backup
from secondbrain.backup.sealed import Secret

log = logging.getLogger(__name__)

TICK_S = 60.0  # how often the schedule looks whether a backup is due


class BackupBusy(BackupError):
    """A backup is being written already."""


@dataclass
class Running:
    """The backup being written."""

    started: float
    what: str = "starting"
    done: float = 0.0

    def json(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        left = elapsed * (1 - self.done) / self.done if self.done > 0.05 else None
        return {"what": self.what, "done": round(self.done, 3), "elapsed_s": round(elapsed, 1),
                "left_s": round(left, 1) if left is not None else None}


@dataclass
class Backups:
    """The backup folder of one process, and the backups it takes (see the module doc)."""

    folder: Path
    sources: Callable[[], Sources]  # what a backup reads, built when it starts
    staging_root: Path  # where copies wait to be archived (the data directory: objects are hard-linked)
    interval_s: float | None = None
    keep_daily: int = 7
    keep_weekly: int = 4
    secret: Secret | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    running: Running | None = None
    last_error: str | None = None
    last_users: dict[str, Any] = field(default_factory=dict)  # the counts per user of the last backup taken here
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> backup_folder.Archive:
        """Write a backup into the folder now (blocking); :class:`BackupBusy` when one is being written."""
        if not self._lock.acquire(blocking=False):
            raise BackupBusy("a backup is being written right now; wait for it to finish")
        try:
            self.running = Running(time.monotonic())
            return self._take()
        except Exception as exc:
            self.last_error = f"{self.clock().isoformat()}: {exc}"
            raise
        finally:
            self.running = None
            self._lock.release()

    def _take(self) -> backup_folder.Archive:
        self.folder.mkdir(parents=True, exist_ok=True)
        backup_folder.remove_leftovers(self.folder)
        path = self.folder / backup_folder.archive_name(self.clock(), self.folder)
        staging = self.staging_root / f".backup-staging-{path.stem}"
        started = time.monotonic()

        def progress(what: str, done: float) -> None:
            if self.running is not None:
                self.running.what, self.running.done = what, done

        with backup_folder.written_whole(path) as out:
            manifest = write_backup(self.sources(), out, staging, secret=self.secret, progress=progress)
        archive = next(a for a in backup_folder.archives(self.folder) if a.path == path)
        self.last_error = None
        self.last_users = dict(manifest.fields.get("users", {}))
        backup_folder.rotate(self.folder, self.keep_daily, self.keep_weekly,
                             removed=lambda p: log.info("old backup removed", extra={"path": str(p)}))
        log.info("backup written", extra={"path": str(path), "bytes": archive.size,
                                          "seconds": round(time.monotonic() - started, 1),
                                          "users": len(manifest.fields.get("users", {}))})
        return archive

    def due(self) -> bool:
        """Whether the schedule wants a backup now (none yet, or the last one is an interval old)."""
        if self.interval_s is None:
            return False
        last = backup_folder.latest(self.folder)
        return last is None or (self.clock() - last.taken_at).total_seconds() >= self.interval_s

    async def loop(self, tick_s: float = TICK_S) -> None:
        """Back up whenever :meth:`due` (until cancelled); a failure is logged and tried again next tick.  The
        first look is one tick after start: a backup does not compete with the start-up's own work."""
        while True:
            await asyncio.sleep(min(tick_s, self.interval_s or tick_s))
            if self.due() and self.running is None:
                try:
                    await asyncio.to_thread(self.take)
                except BackupBusy:
                    pass
                except Exception as exc:
                    log.warning("scheduled backup failed; trying again later", extra={"error": str(exc)})

    def _first_late(self) -> bool:
        """No backup yet: late once the schedule's first one failed, or should have been written by now (it is
        taken a tick after start), not while it is being written."""
        return self.running is None and (self.last_error is not None or
                                         time.monotonic() - self.started > 2 * TICK_S)

    def status(self) -> dict[str, Any]:
        """Where backups stand, for the web page and ``GET /v1/admin/backups``."""
        found = backup_folder.archives(self.folder)
        last = found[-1] if found else None
        age = (self.clock() - last.taken_at).total_seconds() if last is not None else None
        running = self.running
        stale = self.interval_s is not None and (age > 2 * self.interval_s if age is not None else self._first_late())
        return {"folder": str(self.folder), "interval_s": self.interval_s, "scheduled": self.interval_s is not None,
                "keep": {"daily": self.keep_daily, "weekly": self.keep_weekly}, "sealed": self.secret is not None,
                "last": last.json() if last else None, "age_s": round(age, 1) if age is not None else None,
                "stale": stale, "running": running.json() if running is not None else None,
                "last_error": self.last_error, "archives": [a.json() for a in reversed(found)]}
