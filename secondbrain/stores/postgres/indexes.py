"""Vector index versions per user and the re-index leases."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row

from secondbrain.ports import IndexStatus, LeaseLost, VectorIndex
from secondbrain.stores.postgres.base import PgRole


class PostgresIndexes(PgRole):
    """Vector index versions per user and the re-index leases."""

    _INDEX_COLUMNS = ("user_id, version, model, model_id, dense_size, status, created_at, activated_at, retired_at, "
                      "dropped_at, keep_old, points_total, points_done, resume_from, lease_owner, lease_expires_at")

    @staticmethod
    def _lock_indexes(conn: psycopg.Connection[Any], user_id: str) -> None:
        # One writer of a user's index set at a time: "next version" and "the active one" stay unique.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('vector_indexes'), hashtext(%s))", (user_id,))

    def _index_where(self, conn: psycopg.Connection[Any], where: str, params: Sequence[Any]) -> VectorIndex | None:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(f"SELECT {self._INDEX_COLUMNS} FROM vector_indexes WHERE {where}", params).fetchone()
        return VectorIndex(**row) if row else None

    def _insert_index(self, conn: psycopg.Connection[Any], user_id: str, model: str, model_id: str,
                      dense_size: int, status: str, keep_old: bool) -> VectorIndex:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"""
                INSERT INTO vector_indexes (user_id, version, model, model_id, dense_size, status, keep_old,
                                            activated_at)
                VALUES (%(user)s, (SELECT coalesce(max(version), 0) + 1 FROM vector_indexes WHERE user_id = %(user)s),
                        %(model)s, %(model_id)s, %(size)s, %(status)s, %(keep)s,
                        CASE WHEN %(status)s = 'active' THEN now() END)
                RETURNING {self._INDEX_COLUMNS}
                """,
                {"user": user_id, "model": model, "model_id": model_id, "size": dense_size, "status": status,
                 "keep": keep_old}).fetchone()
        assert row is not None
        return VectorIndex(**row)

    def vector_indexes(self, user_id: str | None = None, *, status: IndexStatus | None = None) -> list[VectorIndex]:
        """The user's index versions, oldest first (every user's, by user, when ``None``), optionally one status."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(f"SELECT {self._INDEX_COLUMNS} FROM vector_indexes "
                               "WHERE (%(user)s::text IS NULL OR user_id = %(user)s) "
                               "AND (%(status)s::text IS NULL OR status = %(status)s) ORDER BY user_id, version",
                               {"user": user_id, "status": status}).fetchall()
        return [VectorIndex(**r) for r in rows]

    def ensure_active_index(self, user_id: str, model: str, model_id: str, dense_size: int) -> VectorIndex:
        """The user's active index, created (the next version, normally 1) when the user has none;
        :class:`LookupError` for an unknown user."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as conn:
            found = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if found is not None:
                return found
            self._lock_indexes(conn, user_id)
            found = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if found is not None:
                return found
            if conn.execute("SELECT 1 FROM users WHERE user_id = %s", (user_id,)).fetchone() is None:
                raise LookupError(f"unknown user {user_id!r}")
            return self._insert_index(conn, user_id, model, model_id, dense_size, "active", False)

    def begin_reindex(self, user_id: str, model: str, model_id: str, dense_size: int, *,
                      keep_old: bool = False) -> VectorIndex:
        """The building index for ``model_id`` (resumed, with ``keep_old`` updated) or a new version."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        with self._tx() as conn:
            self._lock_indexes(conn, user_id)
            active = self._index_where(conn, "user_id = %s AND status = 'active'", (user_id,))
            if active is None:
                raise LookupError(f"user {user_id!r} has no active vector index")
            if active.model_id == model_id:
                raise ValueError(f"{user_id}'s active index v{active.version} already uses {model_id}")
            building = self._index_where(conn, "user_id = %s AND status = 'building'", (user_id,))
            if building is not None:
                if building.model_id != model_id:
                    raise ValueError(f"a re-index of {user_id} to {building.model_id} (v{building.version}) is "
                                     "in progress: let it finish, or cancel it first")
                conn.execute("UPDATE vector_indexes SET keep_old = %s WHERE user_id = %s AND version = %s",
                             (keep_old, user_id, building.version))
                return dataclasses.replace(building, keep_old=keep_old)
            return self._insert_index(conn, user_id, model, model_id, dense_size, "building", keep_old)

    def claim_reindex(self, user_id: str, version: int, owner: str, lease_s: float) -> VectorIndex | None:
        """Lease a building index to ``owner`` (free, expired, or already theirs)."""
        with self._pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"""
                UPDATE vector_indexes SET lease_owner = %(owner)s,
                       lease_expires_at = now() + make_interval(secs => %(lease)s)
                WHERE user_id = %(user)s AND version = %(version)s AND status = 'building'
                  AND (lease_owner IS NULL OR lease_owner = %(owner)s OR lease_expires_at < now())
                RETURNING {self._INDEX_COLUMNS}
                """, {"owner": owner, "lease": float(lease_s), "user": user_id, "version": version}).fetchone()
        return VectorIndex(**row) if row else None

    def reindex_progress(self, user_id: str, version: int, owner: str, *, done: int, total: int,
                         resume_from: str | None, lease_s: float) -> bool:
        """Record progress and renew ``owner``'s lease; ``False`` when the lease is someone else's now."""
        with self._pool.connection() as conn:
            row = conn.execute(
                """
                UPDATE vector_indexes SET points_done = %(done)s, points_total = %(total)s,
                       resume_from = %(resume)s, lease_expires_at = now() + make_interval(secs => %(lease)s)
                WHERE user_id = %(user)s AND version = %(version)s AND status = 'building'
                  AND lease_owner = %(owner)s
                RETURNING 1
                """, {"done": done, "total": total, "resume": resume_from, "lease": float(lease_s),
                      "user": user_id, "version": version, "owner": owner}).fetchone()
        return row is not None

    def hold_reindex(self, user_id: str, version: int, owner: str) -> AbstractContextManager[None]:
        """The re-index's fence (see :class:`~secondbrain.ports.IndexVersions`)."""
        return self._hold(user_id, version, owner)

    @contextmanager
    def _hold(self, user_id: str, version: int, owner: str) -> Iterator[None]:
        # The index row is share-locked for the block: an erasure's DELETE and a cancel's, a switch's
        # or a claim's UPDATE of that row wait for the page being written, and see it afterwards.
        with self._rows_held("SELECT 1 FROM vector_indexes WHERE user_id = %s AND version = %s "
                             "AND status = 'building' AND lease_owner = %s FOR SHARE",
                             (user_id, version, owner)) as rows:
            if not rows:
                raise LeaseLost(user_id, version)
            yield

    def release_reindex(self, user_id: str, version: int, owner: str) -> None:
        """Clear ``owner``'s lease (someone else's is left alone)."""
        with self._pool.connection() as conn:
            conn.execute("UPDATE vector_indexes SET lease_owner = NULL, lease_expires_at = NULL "
                         "WHERE user_id = %s AND version = %s AND lease_owner = %s", (user_id, version, owner))

    def activate_index(self, user_id: str, version: int) -> VectorIndex | None:
        """Switch the user's searched index to the building ``version`` in one transaction."""
        with self._tx() as conn:
            self._lock_indexes(conn, user_id)
            if self._index_where(conn, "user_id = %s AND version = %s AND status = 'building'",
                                 (user_id, version)) is None:
                raise LookupError(f"v{version} is not a building vector index of {user_id!r}")
            with conn.cursor(row_factory=dict_row) as cur:
                old = cur.execute(
                    f"UPDATE vector_indexes SET status = 'retired', retired_at = now() "
                    f"WHERE user_id = %s AND status = 'active' RETURNING {self._INDEX_COLUMNS}", (user_id,)).fetchone()
            conn.execute("UPDATE vector_indexes SET status = 'active', activated_at = now(), lease_owner = NULL, "
                         "lease_expires_at = NULL WHERE user_id = %s AND version = %s", (user_id, version))
        return VectorIndex(**old) if old else None

    def cancel_reindex(self, user_id: str) -> VectorIndex | None:
        """Retire the user's building index unfinished."""
        with self._tx() as conn, conn.cursor(row_factory=dict_row) as cur:
            self._lock_indexes(conn, user_id)
            row = cur.execute(
                f"UPDATE vector_indexes SET status = 'retired', retired_at = now(), lease_owner = NULL, "
                f"lease_expires_at = NULL WHERE user_id = %s AND status = 'building' "
                f"RETURNING {self._INDEX_COLUMNS}", (user_id,)).fetchone()
        return VectorIndex(**row) if row else None

    def index_dropped(self, user_id: str, version: int) -> None:
        """Set ``dropped_at`` on a retired index (idempotent)."""
        with self._pool.connection() as conn:
            conn.execute("UPDATE vector_indexes SET dropped_at = coalesce(dropped_at, now()) "
                         "WHERE user_id = %s AND version = %s AND status = 'retired'", (user_id, version))
