"""The backup gate: what keeps a backup's picture of the stores whole while the pipeline runs.

A backup dumps PostgreSQL at one instant and copies the objects and vector points just after it; what
the dump says exists must still exist when they are copied.  Everything that removes objects or vector
points first commits, in PostgreSQL, what makes them unreferenced (a tombstone, a superseded version, an
erased user), then removes them while holding the gate shared (:meth:`BackupGate.removing`); a backup
holds it alone (:meth:`BackupGate.capturing`) from before its PostgreSQL snapshot until the objects and
vectors are copied.  So a removal either committed before the snapshot (the dump no longer refers to what
it removes) or waits until the copies are made.  What is added meanwhile is only extra, and a restore
leaves out what the dump does not refer to.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable


@runtime_checkable
class BackupGate(Protocol):
    """Removals share the gate; a backup's picture holds it alone (across processes where the store is shared)."""

    def removing(self) -> AbstractContextManager[None]:
        """Held while objects or vector points are removed (re-entrant within a thread)."""
        ...

    def capturing(self) -> AbstractContextManager[None]:
        """Held alone while a backup takes its picture: waits for removals under way, holds back new ones."""
        ...
