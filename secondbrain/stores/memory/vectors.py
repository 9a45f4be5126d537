"""The in-memory twin of the :class:`~secondbrain.ports.VectorStore` port: exact (brute-force) search over
per-user collections held in a :class:`VectorTables`, scored as the engines score (cosine for the dense
vector, IDF-weighted dot product for the sparse one, reciprocal rank fusion for ``hybrid``), with the
filters planned as the engines plan them (:mod:`secondbrain.stores.vector_payload`).

It runs the vector contract suite (``tests/contracts/test_vector_store_contract.py``), so logic that only
needs passages stored and found runs on it in tests without writing shards to disk.  Nothing is persisted:
the data lives as long as its :class:`VectorTables` (a store opened again on the same tables reads it back).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from secondbrain.ports import SearchMode, SparseVector, VectorFilter, VectorHit, VectorPoint
from secondbrain.stores.vector_payload import (
    RRF_K,
    RRF_WEIGHTS,
    AllCondition,
    Condition,
    DatetimeRangeCondition,
    EitherCondition,
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

__all__ = ["MemoryVectorStore", "VectorTables"]


@dataclass
class _Point:
    dense: np.ndarray[Any, Any]  # unit length (cosine is then a dot product)
    sparse: dict[int, float]
    payload: str  # as JSON: every read gets its own copy, as from an engine
    fields: dict[str, Any]  # the payload the filters read


@dataclass
class _Collection:
    dense_size: int
    points: dict[str, _Point] = field(default_factory=dict)

    def document_frequency(self, term: int) -> int:
        return sum(1 for p in self.points.values() if term in p.sparse)


class VectorTables:
    """The collections (by name) a process's in-memory vector stores share, and their lock."""

    def __init__(self) -> None:
        self.collections: dict[str, _Collection] = {}
        self.lock = threading.RLock()


class MemoryVectorStore:
    """Per-user collections in memory with a dense (cosine) and a sparse (BM25 with IDF) vector per point.
    ``tables``: the data (a fresh, empty one unless given)."""

    def __init__(self, tables: VectorTables | None = None, *, collection_version: str = "v1") -> None:
        self.tables = tables if tables is not None else VectorTables()
        self.collection_version = collection_version
        self._ensured = EnsuredCollections()

    def _name(self, user_id: str, index: str | None) -> str:
        return collection_name(user_id, index or self.collection_version)

    def _open_collection(self, name: str, dense_size: int) -> None:
        """Create collection ``name`` when missing, or check its dense size (lock held)."""
        found = self.tables.collections.get(name)
        if found is None:
            self.tables.collections[name] = _Collection(dense_size)
        elif found.dense_size != dense_size:
            raise ValueError(f"collection {name} has dense size {found.dense_size}, not {dense_size}")

    # ------------------------------------------------------------------ VectorStore

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        """Create the user's collection when missing (idempotent); return its name.  Another dense size
        raises :class:`ValueError`."""
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        name = self._name(user_id, index)
        token = self._ensured.begin(name, dense_size)
        if token is None:
            return name
        with self.tables.lock:
            self._open_collection(name, dense_size)
        self._ensured.done(name, dense_size, token)
        return name

    def upsert(self, user_id: str, points: Sequence[VectorPoint], *, index: str | None = None) -> None:
        """Insert or replace ``points`` by id; the collection must exist (:class:`LookupError` otherwise)."""
        if not points:
            return
        name = self._name(user_id, index)
        stored = {}
        for p in points:
            check_sparse(p.sparse)
            dense = np.asarray(p.dense, dtype=np.float64)
            norm = float(np.linalg.norm(dense))
            payload = json.dumps(prepare_payload(user_id, p))
            stored[str(p.id)] = _Point(dense / norm if norm else dense,
                                       dict(zip(p.sparse.indices, p.sparse.values, strict=True)), payload,
                                       json.loads(payload))
        with self.tables.lock:
            collection = self.tables.collections.get(name)
            if collection is None:
                raise LookupError(f"vector collection {name} does not exist; call ensure_collection first")
            for pid, point in stored.items():
                if point.dense.shape != (collection.dense_size,):
                    raise ValueError(f"point {pid} has a dense vector of size {point.dense.shape[0]}, "
                                     f"not {collection.dense_size}")
            collection.points.update(stored)

    def search(self, user_id: str, *, dense: Sequence[float] | None, sparse: SparseVector | None,
               limit: int, mode: SearchMode = "hybrid", flt: VectorFilter | None = None,
               candidates: int = 50, index: str | None = None) -> list[VectorHit]:
        """Rank the user's points; ``hybrid`` fuses the dense and sparse rankings with RRF (a missing or empty
        side is left out, as the engines do)."""
        if mode not in ("hybrid", "dense", "sparse"):
            raise ValueError(f"unknown search mode {mode!r}")
        if mode == "dense" and dense is None:
            raise ValueError("dense search needs a dense vector")
        if mode == "sparse" and sparse is None:
            raise ValueError("sparse search needs a sparse vector")
        plan = plan_filter(flt)
        name = self._name(user_id, index)
        if limit <= 0 or plan.matches_nothing:
            return []
        use_dense = mode in ("hybrid", "dense") and dense is not None
        use_sparse = mode in ("hybrid", "sparse") and sparse is not None and bool(sparse.indices)
        if use_sparse:
            assert sparse is not None
            check_sparse(sparse)
        if not use_dense and not use_sparse:
            return []
        with self.tables.lock:
            collection = self.tables.collections.get(name)
            if collection is None:
                return []
            matching = [(pid, p) for pid, p in collection.points.items() if _matches(plan, p.fields)]
            rankings = []
            if use_dense:
                assert dense is not None
                rankings.append(_dense_ranking(matching, dense))
            if use_sparse:
                assert sparse is not None
                rankings.append(_sparse_ranking(collection, matching, sparse))
            payloads = {pid: p.payload for pid, p in matching}
        if len(rankings) == 1:
            ranked = rankings[0][:limit]
        else:
            depth = max(candidates, limit)
            ranked = _fuse([r[:depth] for r in rankings], RRF_WEIGHTS)[:limit]
        return [VectorHit(id=pid, score=score, payload=json.loads(payloads[pid])) for pid, score in ranked]

    def scroll(self, user_id: str, *, flt: VectorFilter | None = None, limit: int = 100,
               offset: str | None = None, index: str | None = None) -> tuple[list[VectorHit], str | None]:
        """Page through matching points in id order; the offset is the id the next page starts at."""
        plan = plan_filter(flt)
        name = self._name(user_id, index)
        if limit <= 0 or plan.matches_nothing:
            return [], None
        with self.tables.lock:
            collection = self.tables.collections.get(name)
            if collection is None:
                return [], None
            ids = sorted(pid for pid, p in collection.points.items()
                         if (offset is None or pid >= offset) and _matches(plan, p.fields))
            page = [VectorHit(id=pid, score=0.0, payload=json.loads(collection.points[pid].payload))
                    for pid in ids[:limit]]
        return page, (ids[limit] if len(ids) > limit else None)

    def count(self, user_id: str, flt: VectorFilter | None = None, *, index: str | None = None) -> int:
        """Exact number of the user's points matching ``flt`` (0 without a collection)."""
        plan = plan_filter(flt)
        name = self._name(user_id, index)
        if plan.matches_nothing:
            return 0
        with self.tables.lock:
            collection = self.tables.collections.get(name)
            if collection is None:
                return 0
            return sum(1 for p in collection.points.values() if _matches(plan, p.fields))

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        """Delete the user's points matching ``flt`` from every version; a filter restricting nothing is
        refused (:meth:`drop_user` deletes everything)."""
        if is_empty_filter(flt):
            raise ValueError("delete_where needs a restricting filter; use drop_user to delete everything")
        plan = plan_filter(flt)
        if plan.matches_nothing:
            return
        with self.tables.lock:
            for index in self.list_indexes(user_id):
                collection = self.tables.collections[self._name(user_id, index)]
                for pid in [pid for pid, p in collection.points.items() if _matches(plan, p.fields)]:
                    del collection.points[pid]

    def list_indexes(self, user_id: str) -> list[str]:
        """The versions the user has a collection for, oldest first."""
        with self.tables.lock:
            return user_indexes(list(self.tables.collections), user_id)

    def drop_user(self, user_id: str) -> None:
        """Delete every version of the user's collection (no error when absent)."""
        for index in self.list_indexes(user_id):
            self.drop_index(user_id, index)

    def drop_index(self, user_id: str, index: str) -> None:
        """Delete one version of the user's collection (no error when absent)."""
        name = self._name(user_id, check_index(index))
        with self.tables.lock:
            self._ensured.forget(name)
            self.tables.collections.pop(name, None)

    def check(self) -> None:
        """Always ready: nothing to reach."""

    def close(self) -> None:
        """Nothing to flush; the data stays with its tables."""
        self._ensured.forget()


# ---------------------------------------------------------------------------- scoring and filters


def _dense_ranking(points: list[tuple[str, _Point]], dense: Sequence[float]) -> list[tuple[str, float]]:
    query = np.asarray(dense, dtype=np.float64)
    norm = float(np.linalg.norm(query))
    query = query / norm if norm else query
    return _ranked((pid, float(np.dot(query, p.dense))) for pid, p in points)


def _sparse_ranking(collection: _Collection, points: list[tuple[str, _Point]],
                    sparse: SparseVector) -> list[tuple[str, float]]:
    """The engines' sparse score with the IDF modifier: each query term weighted by
    ``ln((N - n + 0.5) / (n + 0.5) + 1)`` over the collection's points; points sharing no term are left out."""
    total = len(collection.points)
    weights = {}
    for term, value in zip(sparse.indices, sparse.values, strict=True):
        df = collection.document_frequency(term)
        weights[term] = value * math.log((total - df + 0.5) / (df + 0.5) + 1)
    scored = []
    for pid, p in points:
        shared = [t for t in weights if t in p.sparse]
        if shared:
            scored.append((pid, sum(weights[t] * p.sparse[t] for t in shared)))
    return _ranked(scored)


def _ranked(scored: Any) -> list[tuple[str, float]]:
    return sorted(scored, key=lambda s: (-s[1], s[0]))


def _fuse(rankings: list[list[tuple[str, float]]], weights: Sequence[float]) -> list[tuple[str, float]]:
    """Reciprocal rank fusion as the engines compute it: ``1 / ((rank + 1) / weight + k - 1)`` summed."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=False):
        for rank, (pid, _) in enumerate(ranking):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / ((rank + 1.0) / weight + RRF_K - 1.0)
    return _ranked(fused.items())


def _matches(plan: FilterPlan, payload: dict[str, Any]) -> bool:
    return all(_holds(c, payload) for c in plan.conditions)


def _values(payload: dict[str, Any], name: str) -> list[Any]:
    """A payload field's values (an array matches when one of its elements does, as in the engines)."""
    value = payload.get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _in_range(c: DatetimeRangeCondition, payload: dict[str, Any]) -> bool:
    low = _instant(c.gte) if c.gte is not None else None
    high = _instant(c.lt) if c.lt is not None else None
    for value in _values(payload, c.field):
        at = _instant(value)
        if at is not None and (low is None or at >= low) and (high is None or at < high):
            return True
    return False


def _holds(c: Condition, payload: dict[str, Any]) -> bool:
    if isinstance(c, MatchAnyCondition):
        return any(isinstance(v, str) and v in c.values for v in _values(payload, c.field))
    if isinstance(c, DatetimeRangeCondition):
        return _in_range(c, payload)
    if isinstance(c, IntRangeCondition):
        return any(isinstance(v, int) and not isinstance(v, bool) and c.gte <= v <= c.lte
                   for v in _values(payload, c.field))
    if isinstance(c, AllCondition):
        return all(_in_range(x, payload) for x in c.conditions)
    if isinstance(c, EitherCondition):
        return any(_holds(x, payload) for x in c.conditions)
    raise TypeError(f"unknown filter condition {c!r}")
