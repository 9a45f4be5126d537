"""Vector index versions per user and the re-index leases (in memory)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

from secondbrain.ports import IndexStatus, LeaseLost, VectorIndex
from secondbrain.stores.memory.base import MemoryRole


class MemoryIndexes(MemoryRole):
    """Vector index versions per user and the re-index leases."""

    def _with_status(self, user_id: str, status: IndexStatus) -> VectorIndex | None:
        # At most one active and one building index per user (Postgres's unique partial indexes).
        return next((i for (u, _), i in self._t.vector_indexes.items() if u == user_id and i.status == status), None)

    def _put(self, index: VectorIndex) -> VectorIndex:
        self._t.vector_indexes[(index.user_id, index.version)] = index
        return index

    def _insert(self, user_id: str, model: str, model_id: str, dense_size: int, status: IndexStatus,
                keep_old: bool, now: datetime) -> VectorIndex:
        version = 1 + max((v for u, v in self._t.vector_indexes if u == user_id), default=0)
        return self._put(VectorIndex(user_id=user_id, version=version, model=model, model_id=model_id,
                                     dense_size=dense_size, status=status, created_at=now, keep_old=keep_old,
                                     activated_at=now if status == "active" else None))

    def vector_indexes(self, user_id: str | None = None, *, status: IndexStatus | None = None) -> list[VectorIndex]:
        """The user's index versions, oldest first (every user's, by user, when ``None``), optionally one status."""
        with self._tx():
            return [i for _, i in sorted(self._t.vector_indexes.items())
                    if (user_id is None or i.user_id == user_id) and (status is None or i.status == status)]

    def ensure_active_index(self, user_id: str, model: str, model_id: str, dense_size: int) -> VectorIndex:
        """The user's active index, created (the next version, normally 1) when the user has none;
        :class:`LookupError` for an unknown user."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as now:
            found = self._with_status(user_id, "active")
            if found is not None:
                return found
            if user_id not in self._t.users:
                raise LookupError(f"unknown user {user_id!r}")
            return self._insert(user_id, model, model_id, dense_size, "active", False, now)

    def begin_reindex(self, user_id: str, model: str, model_id: str, dense_size: int, *,
                      keep_old: bool = False) -> VectorIndex:
        """The building index for ``model_id`` (resumed, with ``keep_old`` updated) or a new version."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as now:
            active = self._with_status(user_id, "active")
            if active is None:
                raise LookupError(f"user {user_id!r} has no active vector index")
            if active.model_id == model_id:
                raise ValueError(f"{user_id}'s active index v{active.version} already uses {model_id}")
            building = self._with_status(user_id, "building")
            if building is not None:
                if building.model_id != model_id:
                    raise ValueError(f"a re-index of {user_id} to {building.model_id} (v{building.version}) is "
                                     "in progress: let it finish, or cancel it first")
                return self._put(replace(building, keep_old=keep_old))
            return self._insert(user_id, model, model_id, dense_size, "building", keep_old, now)

    def claim_reindex(self, user_id: str, version: int, owner: str, lease_s: float) -> VectorIndex | None:
        """Lease a building index to ``owner`` (free, expired, or already theirs)."""
        with self._tx() as now:
            index = self._t.vector_indexes.get((user_id, version))
            if index is None or index.status != "building":
                return None
            if not (index.lease_owner is None or index.lease_owner == owner
                    or (index.lease_expires_at is not None and index.lease_expires_at < now)):
                return None
            return self._put(replace(index, lease_owner=owner,
                                     lease_expires_at=now + timedelta(seconds=float(lease_s))))

    def reindex_progress(self, user_id: str, version: int, owner: str, *, done: int, total: int,
                         resume_from: str | None, lease_s: float) -> bool:
        """Record progress and renew ``owner``'s lease; ``False`` when the lease is someone else's now."""
        with self._tx() as now:
            index = self._t.vector_indexes.get((user_id, version))
            if index is None or index.status != "building" or index.lease_owner != owner:
                return False
            self._put(replace(index, points_done=done, points_total=total, resume_from=resume_from,
                              lease_expires_at=now + timedelta(seconds=float(lease_s))))
            return True

    def hold_reindex(self, user_id: str, version: int, owner: str) -> AbstractContextManager[None]:
        """The re-index's fence (see :class:`~secondbrain.ports.IndexVersions`)."""
        return self._hold(user_id, version, owner)

    @contextmanager
    def _hold(self, user_id: str, version: int, owner: str) -> Iterator[None]:
        # The store's lock for the block: stronger than Postgres's row lock, and re-entrant.
        with self._tx():
            index = self._t.vector_indexes.get((user_id, version))
            if index is None or index.status != "building" or index.lease_owner != owner:
                raise LeaseLost(user_id, version)
            yield

    def release_reindex(self, user_id: str, version: int, owner: str) -> None:
        """Clear ``owner``'s lease (someone else's is left alone)."""
        with self._tx():
            index = self._t.vector_indexes.get((user_id, version))
            if index is not None and index.lease_owner == owner:
                self._put(replace(index, lease_owner=None, lease_expires_at=None))

    def activate_index(self, user_id: str, version: int) -> VectorIndex | None:
        """Switch the user's searched index to the building ``version`` in one step."""
        with self._tx() as now:
            building = self._t.vector_indexes.get((user_id, version))
            if building is None or building.status != "building":
                raise LookupError(f"v{version} is not a building vector index of {user_id!r}")
            active = self._with_status(user_id, "active")
            old = self._put(replace(active, status="retired", retired_at=now)) if active is not None else None
            self._put(replace(building, status="active", activated_at=now, lease_owner=None, lease_expires_at=None))
            return old

    def cancel_reindex(self, user_id: str) -> VectorIndex | None:
        """Retire the user's building index unfinished."""
        with self._tx() as now:
            building = self._with_status(user_id, "building")
            if building is None:
                return None
            return self._put(replace(building, status="retired", retired_at=now, lease_owner=None,
                                     lease_expires_at=None))

    def index_dropped(self, user_id: str, version: int) -> None:
        """Set ``dropped_at`` on a retired index (idempotent)."""
        with self._tx() as now:
            index = self._t.vector_indexes.get((user_id, version))
            if index is not None and index.status == "retired":
                self._put(replace(index, dropped_at=index.dropped_at or now))
