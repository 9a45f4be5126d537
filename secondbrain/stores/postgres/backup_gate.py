"""The backup gate on PostgreSQL advisory locks, so it holds across every process of a deployment."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from secondbrain.stores.postgres.base import PostgresDatabase

log = logging.getLogger(__name__)

# Arbitrary but fixed: the advisory lock every removal shares and a backup's picture takes alone.
GATE_KEY = 0x5EC0_B7A1_0B0B


class PostgresBackupGate:
    """:class:`secondbrain.ports.backup.BackupGate` as a session-level advisory lock: shared by removals,
    exclusive for a capture.  A process that dies releases what it held with its connection."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._pool = database._pool
        self._mine = threading.local()

    @contextlib.contextmanager
    def removing(self) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        if depth:  # a removal inside a removal, in this thread: the lock is held already
            self._mine.depth = depth + 1
            try:
                yield
            finally:
                self._mine.depth = depth
            return
        with self._held("pg_advisory_lock_shared", "pg_advisory_unlock_shared"):
            self._mine.depth = 1
            try:
                yield
            finally:
                self._mine.depth = 0

    def capturing(self) -> contextlib.AbstractContextManager[None]:
        return self._held("pg_advisory_lock", "pg_advisory_unlock")

    @contextlib.contextmanager
    def _held(self, lock: str, unlock: str) -> Iterator[None]:
        with self._pool.connection() as conn:
            conn.execute(f"SELECT {lock}(%s)", (GATE_KEY,))
            try:
                yield
            finally:
                try:
                    conn.execute(f"SELECT {unlock}(%s)", (GATE_KEY,))
                except Exception:
                    # Never hand a connection that may still hold the lock back to the pool.
                    log.warning("could not release the backup gate; closing its connection", exc_info=True)
                    conn.close()
