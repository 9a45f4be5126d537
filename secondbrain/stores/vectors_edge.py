"""A :class:`~secondbrain.ports.VectorStore` on qdrant-edge, Qdrant's in-process engine.

One EdgeShard directory per user collection (version) under ``root``.  A shard's write-ahead
log is locked by the process that opens it, so this store is for a single process (embedded
mode).  The store locks ``root`` itself, so a second process fails on its first call with
:class:`VectorsInUse`, whichever collection it asks for, not only on shards the first one has
open.  Separate processes share vectors through :mod:`secondbrain.stores.vectors_qdrant` instead.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from secondbrain.ports import SearchMode, SparseVector, VectorFilter, VectorHit, VectorPoint
from secondbrain.stores.vector_payload import (
    DATETIME_FIELDS,
    INTEGER_FIELDS,
    KEYWORD_FIELDS,
    RRF_K,
    DatetimeRangeCondition,
    EnsuredCollections,
    FilterPlan,
    IntRangeCondition,
    MatchAnyCondition,
    check_index,
    check_sparse,
    collection_name,
    is_empty_filter,
    plan_filter,
    prepare_payload,
    user_indexes,
)

__all__ = ["EdgeVectorStore", "VectorsInUse"]


class VectorsInUse(RuntimeError):
    """Another process has the vectors directory open (a running ``secondbrain up``)."""


# root (resolved) -> (lock file descriptor, stores of this process using it).  flock() locks belong
# to an open file, so stores of one process share one descriptor instead of locking each other out.
_ROOT_LOCKS: dict[str, tuple[int, int]] = {}
_ROOT_LOCKS_GUARD = threading.Lock()


def _lock_root(root: Path) -> str:
    key = str(root.resolve())
    with _ROOT_LOCKS_GUARD:
        held = _ROOT_LOCKS.get(key)
        if held is not None:
            _ROOT_LOCKS[key] = (held[0], held[1] + 1)
            return key
        fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise VectorsInUse(f"the vectors in {root} are open in another process (a running `secondbrain up`?); "
                               "the in-process engine serves one process at a time") from exc
        _ROOT_LOCKS[key] = (fd, 1)
        return key


def _unlock_root(key: str) -> None:
    with _ROOT_LOCKS_GUARD:
        held = _ROOT_LOCKS.pop(key, None)
        if held is None:
            return
        fd, users = held
        if users > 1:
            _ROOT_LOCKS[key] = (fd, users - 1)
        else:
            os.close(fd)  # closing the last descriptor releases the flock


class _Slot:
    """One user collection: its lock and, once opened, its shard."""

    __slots__ = ("dense_size", "lock", "shard")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shard: qe.EdgeShard | None = None
        self.dense_size: int | None = None


class EdgeVectorStore:
    """Per-user EdgeShards under ``root`` with a dense (cosine) and a sparse (BM25, IDF) vector.

    Shards open lazily on first use and stay open until :meth:`close`.  Every call on a shard
    holds that shard's lock, so the store may be used from several threads.  ``root`` is locked
    for this process from the first use of a collection until :meth:`close`; another process then
    gets :class:`VectorsInUse` (a :class:`RuntimeError`) from any call that reaches a collection.
    """

    def __init__(self, root: Path, *, dense_name: str = "dense", sparse_name: str = "bm25",
                 collection_version: str = "v1") -> None:
        """Store shards under ``root`` (created when missing)."""
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.dense_name = dense_name
        self.sparse_name = sparse_name
        self.collection_version = collection_version
        self._slots: dict[str, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._ensured = EnsuredCollections()
        self._root_key: str | None = None  # taken on first use (see _slot)

    # ------------------------------------------------------------------ internals

    def _slot(self, user_id: str, index: str | None = None) -> tuple[str, _Slot]:
        name = collection_name(user_id, index or self.collection_version)
        with self._slots_lock:
            if self._root_key is None:  # first use, or use again after close()
                self._root_key = _lock_root(self.root)
            slot = self._slots.get(name)
            if slot is None:
                slot = self._slots[name] = _Slot()
        return name, slot

    def _config(self, dense_size: int) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors={self.dense_name: qe.EdgeVectorParams(size=dense_size, distance=qe.Distance.Cosine)},
            sparse_vectors={self.sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )

    def _open(self, name: str, slot: _Slot) -> qe.EdgeShard | None:
        """The open shard of ``name`` or ``None`` when the collection does not exist (lock held)."""
        if slot.shard is None:
            path = self.root / name
            if not path.is_dir():
                return None
            slot.shard = self._load(path, None)
        return slot.shard

    @staticmethod
    def _load(path: Path, config: qe.EdgeConfig | None) -> qe.EdgeShard:
        try:
            return qe.EdgeShard.load(str(path), config)
        except Exception as exc:
            if config is not None and "incompatible" in str(exc).lower():
                raise ValueError(f"vector shard {path} does not match the expected config: {exc}") from exc
            if "WAL" in str(exc):
                raise RuntimeError(
                    f"cannot open vector shard {path}: it is locked, probably by another process "
                    "(an edge shard serves one process; use the Qdrant store to share vectors)"
                ) from exc
            raise

    def _ensure_indexes(self, shard: qe.EdgeShard) -> None:
        # Checked on every open, not only at creation: a crash between creating the shard and
        # its indexes must not leave a collection that filters without them forever.
        present = set(shard.info().payload_schema)
        wanted = [(f, qe.PayloadSchemaType.Keyword) for f in KEYWORD_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Datetime) for f in DATETIME_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Integer) for f in INTEGER_FIELDS]
        missing = [(f, t) for f, t in wanted if f not in present]
        for fieldname, schema in missing:
            shard.update(qe.UpdateOperation.create_field_index(fieldname, schema))
        if missing:
            shard.flush()

    @staticmethod
    def _filter(plan: FilterPlan) -> qe.Filter | None:
        if not plan.conditions:
            return None
        must: list[Any] = []
        for cond in plan.conditions:
            if isinstance(cond, MatchAnyCondition):
                must.append(qe.FieldCondition(cond.field, match=qe.MatchAny(list(cond.values))))
            elif isinstance(cond, DatetimeRangeCondition):
                must.append(qe.FieldCondition(cond.field, range=qe.RangeDateTime(gte=cond.gte, lt=cond.lt)))
            elif isinstance(cond, IntRangeCondition):
                must.append(qe.FieldCondition(cond.field, range=qe.RangeFloat(gte=cond.gte, lte=cond.lte)))
        return qe.Filter(must=must)

    @staticmethod
    def _hit(point: Any, score: float | None = None) -> VectorHit:
        return VectorHit(id=str(point.id), score=float(point.score if score is None else score),
                         payload=dict(point.payload or {}))

    # ------------------------------------------------------------------ VectorStore

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        """Create the user's shard when missing (idempotent); return the collection name.

        An existing shard with another dense size raises :class:`ValueError` (checked by the engine
        when the shard is opened with its expected config).  The checks run once per collection
        and dense size until :meth:`drop_user` or :meth:`close`.
        """
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        name, slot = self._slot(user_id, index)
        token = self._ensured.begin(name, dense_size)
        if token is None:
            return name
        with slot.lock:
            if slot.shard is not None and slot.dense_size is None:
                # opened lazily (by a read) without a config to check: reopen it with one below
                slot.shard.close()
                slot.shard = None
            if slot.shard is not None:
                if slot.dense_size != dense_size:
                    raise ValueError(f"collection {name} has dense size {slot.dense_size}, not {dense_size}")
            else:
                path = self.root / name
                config = self._config(dense_size)
                if path.is_dir():
                    slot.shard = self._load(path, config)
                else:
                    slot.shard = qe.EdgeShard.create(str(path), config)
            slot.dense_size = dense_size
            self._ensure_indexes(slot.shard)
        self._ensured.done(name, dense_size, token)
        return name

    def upsert(self, user_id: str, points: Sequence[VectorPoint], *, index: str | None = None) -> None:
        """Insert or replace ``points`` by id and flush them to disk.

        The collection must exist (:meth:`ensure_collection`); otherwise this raises.
        """
        if not points:
            return
        edge_points = []
        for p in points:
            check_sparse(p.sparse)
            edge_points.append(qe.Point(p.id, {
                self.dense_name: list(p.dense),
                self.sparse_name: qe.SparseVector(list(p.sparse.indices), list(p.sparse.values)),
            }, prepare_payload(user_id, p)))
        name, slot = self._slot(user_id, index)
        with slot.lock:
            shard = self._open(name, slot)
            if shard is None:
                raise LookupError(f"vector collection {name} does not exist; call ensure_collection first")
            shard.update(qe.UpdateOperation.upsert_points(edge_points))
            shard.flush()

    def search(self, user_id: str, *, dense: Sequence[float] | None, sparse: SparseVector | None,
               limit: int, mode: SearchMode = "hybrid", flt: VectorFilter | None = None,
               candidates: int = 50, index: str | None = None) -> list[VectorHit]:
        """Rank the user's points; ``hybrid`` fuses dense and sparse prefetches with RRF.

        In ``hybrid`` mode a missing (``None``) or empty side is left out, so the search
        degrades to the other side instead of failing.
        """
        plan = plan_filter(flt)
        if limit <= 0 or plan.matches_nothing:
            return []
        queries = self._queries(dense, sparse, mode)
        if not queries:
            return []
        edge_filter = self._filter(plan)
        if len(queries) == 1:
            request = qe.QueryRequest(limit=limit, query=queries[0], filter=edge_filter, with_payload=True)
        else:
            prefetch_limit = max(candidates, limit)
            fusion: Any = qe.Fusion.Rrf(k=RRF_K)  # the stub's query union omits Fusion's variants
            request = qe.QueryRequest(
                limit=limit,
                prefetches=[qe.Prefetch(limit=prefetch_limit, query=q, filter=edge_filter) for q in queries],
                query=fusion,
                with_payload=True,
            )
        name, slot = self._slot(user_id, index)
        with slot.lock:
            shard = self._open(name, slot)
            if shard is None:
                return []
            points = shard.query(request)
        return [self._hit(p) for p in points]

    def _queries(self, dense: Sequence[float] | None, sparse: SparseVector | None,
                 mode: SearchMode) -> list[Any]:
        if mode not in ("hybrid", "dense", "sparse"):
            raise ValueError(f"unknown search mode {mode!r}")
        if mode == "dense" and dense is None:
            raise ValueError("dense search needs a dense vector")
        if mode == "sparse" and sparse is None:
            raise ValueError("sparse search needs a sparse vector")
        queries: list[Any] = []
        if mode in ("hybrid", "dense") and dense is not None:
            queries.append(qe.Query.Nearest(list(dense), using=self.dense_name))
        if mode in ("hybrid", "sparse") and sparse is not None and sparse.indices:
            check_sparse(sparse)
            queries.append(qe.Query.Nearest(qe.SparseVector(list(sparse.indices), list(sparse.values)),
                                            using=self.sparse_name))
        return queries

    def scroll(self, user_id: str, *, flt: VectorFilter | None = None, limit: int = 100,
               offset: str | None = None, index: str | None = None) -> tuple[list[VectorHit], str | None]:
        """Page through matching points in engine (id) order; the offset is the next point id."""
        plan = plan_filter(flt)
        if limit <= 0 or plan.matches_nothing:
            return [], None
        request = qe.ScrollRequest(offset=offset, limit=limit, filter=self._filter(plan),
                                   with_payload=True, with_vector=False)
        name, slot = self._slot(user_id, index)
        with slot.lock:
            shard = self._open(name, slot)
            if shard is None:
                return [], None
            records, next_offset = shard.scroll(request)
        return [self._hit(r, 0.0) for r in records], (str(next_offset) if next_offset is not None else None)

    def count(self, user_id: str, flt: VectorFilter | None = None, *, index: str | None = None) -> int:
        """Exact number of the user's points matching ``flt`` (0 without a collection)."""
        plan = plan_filter(flt)
        if plan.matches_nothing:
            return 0
        name, slot = self._slot(user_id, index)
        with slot.lock:
            shard = self._open(name, slot)
            if shard is None:
                return 0
            return int(shard.count(qe.CountRequest(exact=True, filter=self._filter(plan))))

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        """Delete the user's points matching ``flt`` from every version of the collection, and flush.

        A filter without any condition is refused (it would delete everything; use
        :meth:`drop_user` for that).
        """
        if is_empty_filter(flt):
            raise ValueError("delete_where needs a restricting filter; use drop_user to delete everything")
        plan = plan_filter(flt)
        if plan.matches_nothing:
            return
        edge_filter = self._filter(plan)
        assert edge_filter is not None
        for index in self.list_indexes(user_id):
            name, slot = self._slot(user_id, index)
            with slot.lock:
                shard = self._open(name, slot)
                if shard is None:
                    continue
                shard.update(qe.UpdateOperation.delete_points_by_filter(edge_filter))
                shard.flush()

    def list_indexes(self, user_id: str) -> list[str]:
        """The versions of the user's collection that exist on disk, oldest first."""
        names = [entry.name for entry in self.root.iterdir() if entry.is_dir()] if self.root.is_dir() else []
        return user_indexes(names, user_id)

    def drop_user(self, user_id: str) -> None:
        """Close and delete every version of the user's collection (no error when absent)."""
        with self._slots_lock:
            opened = [n for n in self._slots if n.startswith(f"u_{user_id}_")]
        for index in set(self.list_indexes(user_id)) | set(user_indexes(opened, user_id)):
            self.drop_index(user_id, index)

    def drop_index(self, user_id: str, index: str) -> None:
        """Close one version of the user's collection and delete its directory (no error when absent)."""
        name, slot = self._slot(user_id, check_index(index))
        with slot.lock:
            self._ensured.forget(name)  # under the lock: an ensure waiting for it checks again
            if slot.shard is not None:
                slot.shard.close()
                slot.shard = None
            slot.dense_size = None
            path = self.root / name
            if path.exists():
                shutil.rmtree(path)

    def check(self) -> None:
        """Raise unless ``root`` exists and is writable."""
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.root, prefix=".check-", delete=True) as fh:
            fh.write(b"ok")
            fh.flush()

    def close(self) -> None:
        """Flush and close every open shard and unlock ``root`` (shards reopen lazily if the store is
        used again)."""
        self._ensured.forget()
        with self._slots_lock:
            slots = list(self._slots.values())
        for slot in slots:
            with slot.lock:
                if slot.shard is not None:
                    slot.shard.flush()
                    slot.shard.close()
                    slot.shard = None
        with self._slots_lock:
            key, self._root_key = self._root_key, None
        if key is not None:
            _unlock_root(key)
