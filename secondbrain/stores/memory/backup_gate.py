"""The in-memory twin of the backup gate (:class:`secondbrain.ports.backup.BackupGate`): one process's lock."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class MemoryBackupGate:
    """Removals share it; a capture holds it alone (a writer-preferring readers-writer lock)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._removing = 0
        self._capturing = False
        self._waiting = 0  # captures waiting: new removals wait behind them
        self._mine = threading.local()

    @contextlib.contextmanager
    def removing(self) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        if depth:  # already held by this thread: a removal inside a removal
            self._mine.depth = depth + 1
            try:
                yield
            finally:
                self._mine.depth = depth
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._capturing and not self._waiting)
            self._removing += 1
        self._mine.depth = 1
        try:
            yield
        finally:
            self._mine.depth = 0
            with self._cond:
                self._removing -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: not self._capturing and not self._removing)
            finally:
                self._waiting -= 1
            self._capturing = True
        try:
            yield
        finally:
            with self._cond:
                self._capturing = False
                self._cond.notify_all()
