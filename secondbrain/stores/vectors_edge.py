"""A :class:`~secondbrain.ports.VectorStore` on qdrant-edge, Qdrant's in-process engine.

One EdgeShard directory per user collection (version) under ``root``.  A shard's write-ahead
log is locked by the process that opens it, so this store is for a single process (embedded
mode).  The store locks ``root`` itself, so a second process fails on its first call with
:class:`VectorsInUse`, whichever collection it asks for, not only on shards the first one has
open.  Separate processes share vectors through :mod:`secondbrain.stores.vectors_qdrant` instead.

The engine builds a collection's HNSW index only when asked (``EdgeShard.optimize()``), and that
call holds the GIL for its whole run, which would freeze every search and write of the process.
So after bulk writes (``index_after`` points since the last build, then ``index_quiet_s`` without
writes) the store builds the index in a child process (``edge_index.py``) on a copy of the shard
directory, keeps serving from the original meanwhile, records the writes made to that collection
since the copy, and when the child is done swaps the optimized copy in under the collection's
lock and replays those writes onto it.  A failed or killed build leaves the original untouched
and is retried later (with back-off); at most one build runs per process.  Segments hold at most
``segment_kb`` of dense vectors and each gets a graph of its own, so a build's cost grows
linearly with the collection, and points written after a build are indexed in a segment of
their own without touching the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import qdrant_edge as qe

from secondbrain.passage import DATETIME_FIELDS, INTEGER_FIELDS, KEYWORD_FIELDS
from secondbrain.ports import SearchMode, SparseVector, VectorFilter, VectorHit, VectorPoint
from secondbrain.stores.vector_payload import (
    RRF_K,
    RRF_WEIGHTS,
    AllCondition,
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

__all__ = ["EdgeVectorStore", "IndexStatus", "VectorsInUse"]

log = logging.getLogger(__name__)

Quantization = Literal["none", "int8"]
BUILD_DIR = ".index-build"  # under root: copies being optimized, and the original during a swap
_INDEX_SCRIPT = Path(__file__).with_name("edge_index.py")
# At most one index build per process: a build takes every core the machine lends it.
_BUILD_GUARD = threading.Lock()


class VectorsInUse(RuntimeError):
    """Another process has the vectors directory open (a running ``secondbrain up``)."""


# root (resolved) -> (lock file descriptor, stores of this process using it).  flock() locks belong
# to an open file, so stores of one process share one descriptor instead of locking each other out.
_ROOT_LOCKS: dict[str, tuple[int, int]] = {}
_ROOT_LOCKS_GUARD = threading.Lock()


def _lock_root(root: Path) -> tuple[str, bool]:
    """Lock ``root`` for this process; the key and whether this call took the lock (first user)."""
    key = str(root.resolve())
    with _ROOT_LOCKS_GUARD:
        held = _ROOT_LOCKS.get(key)
        if held is not None:
            _ROOT_LOCKS[key] = (held[0], held[1] + 1)
            return key, False
        fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise VectorsInUse(f"the vectors in {root} are open in another process (a running `secondbrain up`?); "
                               "the in-process engine serves one process at a time") from exc
        _ROOT_LOCKS[key] = (fd, 1)
        return key, True


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


def _recover_builds(root: Path) -> None:
    """Undo what a process that died during an index build left (only with ``root`` freshly locked).

    A collection directory missing next to its ``.old`` copy died between the two renames of a
    swap: the original goes back.  Everything else there is an unfinished copy.
    """
    build_dir = root / BUILD_DIR
    if not build_dir.is_dir():
        return
    for entry in build_dir.iterdir():
        if entry.name.endswith(".old") and entry.is_dir() and not (root / entry.name[:-4]).exists():
            log.warning("restoring vector collection %s after an interrupted index swap", entry.name[:-4])
            os.rename(entry, root / entry.name[:-4])
    shutil.rmtree(build_dir, ignore_errors=True)


def _persisted_quantization(path: Path, dense_name: str) -> Any:
    """The dense vector's quantization as the shard's own config file records it (``None``: none).

    Loading a shard with vector params overwrites its config on disk, quantization included, so
    the store passes back what the collection was created with instead of its current option.
    """
    try:
        conf = json.loads((path / "edge_config.json").read_text())
        quant = conf["vectors"][dense_name].get("quantization_config") or {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    scalar = quant.get("scalar") if isinstance(quant, dict) else None
    if isinstance(scalar, dict) and scalar.get("type") == "int8":
        return qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, quantile=scalar.get("quantile"),
                                           always_ram=scalar.get("always_ram"))
    return None


@dataclass(frozen=True)
class IndexStatus:
    """Where a collection's HNSW index stands (:meth:`EdgeVectorStore.index_status`)."""

    points: int
    indexed_vectors: int  # the engine's count: dense vectors in HNSW segments plus sparse vectors
    segments: int
    building: bool  # a child process is building the index of a copy right now
    pending: int  # points written since the last build (or not indexed when the shard was opened)
    builds: int  # builds this store finished for the collection
    failures: int  # builds that failed in a row (retried with back-off)


class _Slot:
    """One user collection: its lock, once opened its shard, and its index build bookkeeping."""

    __slots__ = ("builds", "dense_size", "failures", "last_write", "lock", "pending", "replay", "retry_at",
                 "shard", "unsynced")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shard: qe.EdgeShard | None = None
        self.dense_size: int | None = None
        self.pending = 0
        self.last_write = 0.0
        # The updates applied since a build copied the shard (None: no build of this collection).
        self.replay: list[qe.UpdateOperation] | None = None
        self.retry_at = 0.0
        self.failures = 0
        self.builds = 0
        self.unsynced = False  # written since its last sync to disk (see EdgeVectorStore.sync_s)


class EdgeVectorStore:
    """Per-user EdgeShards under ``root`` with a dense (cosine) and a sparse (BM25, IDF) vector.

    Shards open lazily on first use and stay open until :meth:`close`.  Every call on a shard
    holds that shard's lock, so the store may be used from several threads.  ``root`` is locked
    for this process from the first use of a collection until :meth:`close`; another process then
    gets :class:`VectorsInUse` (a :class:`RuntimeError`) from any call that reaches a collection.
    """

    def __init__(self, root: Path, *, dense_name: str = "dense", sparse_name: str = "bm25",
                 collection_version: str = "v1", quantization: Quantization = "none",
                 index_after: int = 5000, index_quiet_s: float = 5.0,
                 indexing_threshold_kb: int = 10_000, segment_kb: int = 150_000, sync_s: float = 5.0) -> None:
        """Store shards under ``root`` (created when missing).

        ``quantization="int8"`` creates NEW collections with int8 scalar quantization of the
        dense vector (kept in RAM, searches rescore with the original vectors); existing
        collections keep the config they were created with.  ``index_after`` points written to a
        collection since its last index build (0: never build), then ``index_quiet_s`` seconds
        without writes to it, start a background build; the engine indexes only segments larger
        than ``indexing_threshold_kb`` (smaller ones are scanned, which is as fast).  A build
        indexes at most ``segment_kb`` of dense vectors per segment (150 MB: 100k 384-d vectors;
        at least twice the indexing threshold; 0: the engine's own limit), so its cost grows
        linearly with the collection (see ``edge_index.py``).

        Every write is in the engine's write-ahead log when the call returns, so a process killed right
        after loses nothing; ``sync_s`` is how long it may wait to be synced to the disk itself (fsync),
        which only a crash of the machine needs.  A sync takes tens to hundreds of milliseconds and the
        engine holds the interpreter lock through it (every other thread of the process stops), so the
        writes of ``sync_s`` seconds share one (Qdrant's server syncs every 5 s too).  0: each write.
        """
        if quantization not in ("none", "int8"):
            raise ValueError(f"unknown vector quantization {quantization!r}")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.dense_name = dense_name
        self.sparse_name = sparse_name
        self.collection_version = collection_version
        self.quantization = quantization
        self.index_after = max(0, index_after)
        self.index_quiet_s = index_quiet_s
        self.indexing_threshold_kb = indexing_threshold_kb
        # A segment under the indexing threshold would never get a graph of its own.
        self.segment_kb = max(segment_kb, 2 * indexing_threshold_kb) if segment_kb > 0 else 0
        self._slots: dict[str, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._ensured = EnsuredCollections()
        self._root_key: str | None = None  # taken on first use (see _slot)
        # Rescoring twice the hits asked for with the original vectors keeps int8's ranking close to
        # float's (bench/query.py --synthetic --quantization int8); ignored without quantization.
        rescore = qe.QuantizationSearchParams(rescore=True, oversampling=2.0)
        self._params = qe.SearchParams(quantization=rescore)
        # A filter can leave a graph without its per-payload-value links (see _hnsw) too sparse to
        # walk; ACORN also follows the neighbours' neighbours when the filter keeps under 60 % of a
        # segment (a filter keeping half of 60k points: recall@10 0.97 without it, 1.00 with it).
        self._filtered_params = qe.SearchParams(quantization=rescore,
                                                acorn=qe.AcornSearchParams(enable=True, max_selectivity=0.6))
        self._stop = threading.Event()
        self._indexer: threading.Thread | None = None
        self._child: tuple[str, subprocess.Popen[bytes]] | None = None  # (collection, build process)
        self.poll_s = 1.0  # how often the indexer looks for a due collection
        self.sync_s = max(0.0, sync_s)
        self._syncer: threading.Thread | None = None
        self._sync_stop = threading.Event()

    # ------------------------------------------------------------------ internals

    def _slot(self, user_id: str, index: str | None = None) -> tuple[str, _Slot]:
        name = collection_name(user_id, index or self.collection_version)
        with self._slots_lock:
            if self._root_key is None:  # first use, or use again after close()
                self._root_key, fresh = _lock_root(self.root)
                if fresh:  # no other store of this process can be building in root
                    _recover_builds(self.root)
            slot = self._slots.get(name)
            if slot is None:
                slot = self._slots[name] = _Slot()
        return name, slot

    def _config(self, dense_size: int, quantization: Any = None) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors={self.dense_name: qe.EdgeVectorParams(size=dense_size, distance=qe.Distance.Cosine,
                                                          quantization_config=quantization)},
            sparse_vectors={self.sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            hnsw_config=self._hnsw(),
            optimizers=self._optimizers(),
        )

    def _hnsw(self) -> qe.HnswIndexConfig | None:
        """The graph without extra links per payload value, and filters matching under a quarter of a
        segment scanned exactly (``None``: the engine's defaults, when segments are not capped).

        Extra links per payload value (what keeps a graph searchable under a selective filter)
        about doubled the build at 60k points with a time field indexed; a filter matching under a
        quarter of a segment is answered exactly from the payload index instead (at most a
        quarter of a segment's vectors compared), and a graph searched with a filter matching
        more than that stays connected without them (the engine's own rule: 4/m of the points).
        """
        if not self.segment_kb:
            return None
        return qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=max(10_000, self.segment_kb // 4),
                                  payload_m=0)

    def _optimizers(self) -> qe.EdgeOptimizersConfig:
        return qe.EdgeOptimizersConfig(indexing_threshold=self.indexing_threshold_kb,
                                       max_segment_size=self.segment_kb or None)

    def _open(self, name: str, slot: _Slot) -> qe.EdgeShard | None:
        """The open shard of ``name`` or ``None`` when the collection does not exist (lock held)."""
        if slot.shard is None:
            path = self.root / name
            if not path.is_dir():
                return None
            slot.shard = self._load(path, None)
            self._opened(slot, slot.shard)
        return slot.shard

    def _opened(self, slot: _Slot, shard: qe.EdgeShard) -> None:
        # What is not indexed yet counts as pending, so a collection filled before a restart (or
        # by a version without background builds) gets its index too.  The engine counts sparse
        # vectors as indexed always, dense ones once in an HNSW segment: estimate the rest.
        if slot.replay is None and slot.builds == 0:
            info = shard.info()
            slot.pending = max(slot.pending, 2 * info.points_count - info.indexed_vectors_count)
            if self.index_after and slot.pending >= self.index_after:
                self._start_indexer()

    def _apply(self, slot: _Slot, shard: qe.EdgeShard, op: qe.UpdateOperation, points: int) -> None:
        """Apply ``op`` (lock held), note it for a running build, count it towards the next one."""
        shard.update(op)
        slot.unsynced = True
        if slot.replay is not None:
            slot.replay.append(op)
        slot.pending += points
        slot.last_write = time.monotonic()
        if self.index_after and slot.pending >= self.index_after:
            self._start_indexer()

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

    def _ensure_indexes(self, shard: qe.EdgeShard, slot_replay: list[qe.UpdateOperation] | None) -> None:
        # Checked on every open, not only at creation: a crash between creating the shard and
        # its indexes must not leave a collection that filters without them forever.
        present = set(shard.info().payload_schema)
        wanted = [(f, qe.PayloadSchemaType.Keyword) for f in KEYWORD_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Datetime) for f in DATETIME_FIELDS]
        wanted += [(f, qe.PayloadSchemaType.Integer) for f in INTEGER_FIELDS]
        missing = [(f, t) for f, t in wanted if f not in present]
        for fieldname, schema in missing:
            op = qe.UpdateOperation.create_field_index(fieldname, schema)
            shard.update(op)
            if slot_replay is not None:
                slot_replay.append(op)
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
            elif isinstance(cond, EitherCondition):
                must.append(qe.Filter(should=[_edge_range(c) if isinstance(c, DatetimeRangeCondition)
                                              else qe.Filter(must=[_edge_range(x) for x in c.conditions])
                                              for c in cond.conditions]))
            elif isinstance(cond, AllCondition):
                must.extend(_edge_range(c) for c in cond.conditions)
        return qe.Filter(must=must)

    @staticmethod
    def _hit(point: Any, score: float | None = None) -> VectorHit:
        return VectorHit(id=str(point.id), score=float(point.score if score is None else score),
                         payload=dict(point.payload or {}))

    # ------------------------------------------------------------------ syncing writes to disk

    def _written(self, slot: _Slot, shard: qe.EdgeShard) -> None:
        """A write applied (lock held): synced now, or by the syncer within ``sync_s``."""
        if self.sync_s <= 0:
            _sync(slot, shard)
            return
        if self._syncer is None or not self._syncer.is_alive():
            with self._slots_lock:
                if self._syncer is None or not self._syncer.is_alive():
                    self._sync_stop.clear()
                    self._syncer = threading.Thread(target=self._sync_loop, name="edge-sync", daemon=True)
                    self._syncer.start()

    def _sync_loop(self) -> None:
        while not self._sync_stop.wait(self.sync_s):
            with self._slots_lock:
                slots = [s for s in self._slots.values() if s.unsynced]
            for slot in slots:
                try:
                    with slot.lock:
                        if slot.shard is not None and slot.unsynced:
                            _sync(slot, slot.shard)
                except Exception:  # the next round tries again; the write-ahead log holds the writes
                    log.exception("syncing vectors to disk failed")

    # ------------------------------------------------------------------ background index builds

    def _start_indexer(self) -> None:
        with self._slots_lock:
            if self._indexer is not None and self._indexer.is_alive():
                return
            self._stop.clear()
            self._indexer = threading.Thread(target=self._index_loop, name="edge-indexer", daemon=True)
            self._indexer.start()

    def _index_loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            due = self._due()
            if due is None:
                continue
            while not _BUILD_GUARD.acquire(timeout=self.poll_s):  # another store's build runs
                if self._stop.is_set():
                    return
            try:
                if not self._stop.is_set():
                    self._build(*due)
            except Exception:
                log.exception("vector index build of %s failed", due[0])
            finally:
                _BUILD_GUARD.release()

    def _due(self) -> tuple[str, _Slot] | None:
        """A collection with enough unindexed writes and quiet for long enough (unlocked peek)."""
        now = time.monotonic()
        with self._slots_lock:
            slots = list(self._slots.items())
        for name, slot in slots:
            if (slot.shard is not None and self.index_after and slot.pending >= self.index_after
                    and now - slot.last_write >= self.index_quiet_s and now >= slot.retry_at):
                return name, slot
        return None

    def _kill_child(self, name: str | None) -> None:
        """Kill the running build (of ``name`` only, unless ``None``); its thread cleans up."""
        child = self._child
        if child is not None and (name is None or child[0] == name):
            with contextlib.suppress(OSError):
                child[1].kill()

    def _build(self, name: str, slot: _Slot) -> None:
        """Copy the collection, optimize the copy in a child process, swap it in (indexer thread)."""
        build_dir = self.root / BUILD_DIR
        copy = build_dir / name
        errors_path = build_dir / f"{name}.log"
        proc: subprocess.Popen[bytes] | None = None
        with slot.lock:
            if slot.shard is None or self._stop.is_set():
                return
            started = time.monotonic()
            counted, slot.pending = slot.pending, 0
            try:
                if copy.exists():
                    shutil.rmtree(copy)
                build_dir.mkdir(exist_ok=True)
                _sync(slot, slot.shard)
                # Under the lock, so that the copy and the replay log start from the same state.
                shutil.copytree(self.root / name, copy)
                with open(errors_path, "wb") as errors:
                    proc = subprocess.Popen(
                        [sys.executable, str(_INDEX_SCRIPT), str(copy), str(os.getpid()),
                         str(self.indexing_threshold_kb), self.sparse_name, str(self.segment_kb)],
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, close_fds=True)
            except Exception as exc:  # no room for the copy, no process: the original goes on alone
                self._build_failed(name, slot, counted, exc)
            else:
                assert proc is not None
                slot.replay = []
                self._child = (name, proc)
                log.info("building the vector index of %s (%d points written since the last build; copy took "
                         "%.1fs)", name, counted, time.monotonic() - started)
        if proc is None:
            shutil.rmtree(copy, ignore_errors=True)
            return
        rc = proc.wait()
        old: Path | None = None
        with slot.lock:
            self._child = None
            replay, slot.replay = slot.replay, None
            try:
                if replay is None or self._stop.is_set() or slot.shard is None:
                    pass  # dropped or closed meanwhile: nothing to swap into
                elif rc != 0:
                    detail = errors_path.read_text(errors="replace")[-2000:] if errors_path.exists() else ""
                    raise RuntimeError(f"index build process exited with status {rc}: {detail}")
                else:
                    old = self._swap(name, slot, copy, replay)
                    slot.failures = 0
                    slot.builds += 1
                    log.info("vector index of %s built in %.1fs (%d updates replayed)", name,
                             time.monotonic() - started, len(replay))
            except Exception as exc:
                self._build_failed(name, slot, counted, exc)
        # Outside the lock (searches go on): what is left of the copy, and the replaced original.
        shutil.rmtree(copy, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        with contextlib.suppress(OSError):
            errors_path.unlink()

    def _build_failed(self, name: str, slot: _Slot, counted: int, exc: BaseException) -> None:
        """Note a failed build (lock held): its points count again, the next try waits longer."""
        slot.failures += 1
        slot.pending += counted
        backoff = min(3600.0, 30.0 * 2 ** (slot.failures - 1))
        slot.retry_at = time.monotonic() + backoff
        log.warning("vector index build of %s failed (retry in %.0fs): %s", name, backoff, exc)

    def _swap(self, name: str, slot: _Slot, copy: Path, replay: list[qe.UpdateOperation]) -> Path:
        """Put the optimized ``copy`` in place of the collection and replay ``replay`` onto it (lock
        held); returns where the original went.  On failure the original is back and open."""
        assert slot.shard is not None
        path = self.root / name
        old = self.root / BUILD_DIR / f"{name}.old"
        if old.exists():
            shutil.rmtree(old)
        # The engine keeps the paths it opened, so the shards are closed before their renames.
        slot.shard.flush()
        slot.shard.close()
        slot.shard = None
        os.rename(path, old)
        os.rename(copy, path)
        shard: qe.EdgeShard | None = None
        try:
            shard = self._load(path, None)
            for op in replay:
                shard.update(op)
            shard.flush()
        except BaseException:
            if shard is not None:
                with contextlib.suppress(Exception):
                    shard.close()
            shutil.rmtree(path, ignore_errors=True)
            os.rename(old, path)
            slot.shard = self._load(path, None)
            raise
        slot.shard = shard
        return old

    def index_status(self, user_id: str, *, index: str | None = None) -> IndexStatus | None:
        """Where the collection's HNSW index stands (``None`` without a collection)."""
        name, slot = self._slot(user_id, index)
        with slot.lock:
            shard = self._open(name, slot)
            if shard is None:
                return None
            info = shard.info()
            child = self._child
            return IndexStatus(points=info.points_count, indexed_vectors=info.indexed_vectors_count,
                               segments=info.segments_count, building=child is not None and child[0] == name,
                               pending=slot.pending, builds=slot.builds, failures=slot.failures)

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
                if path.is_dir():
                    config = self._config(dense_size, _persisted_quantization(path, self.dense_name))
                    slot.shard = self._load(path, config)
                    self._opened(slot, slot.shard)
                else:
                    quant = (qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, always_ram=True)
                             if self.quantization == "int8" else None)
                    slot.shard = qe.EdgeShard.create(str(path), self._config(dense_size, quant))
            slot.dense_size = dense_size
            self._ensure_indexes(slot.shard, slot.replay)
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
            self._apply(slot, shard, qe.UpdateOperation.upsert_points(edge_points), len(edge_points))
            self._written(slot, shard)

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
        params = self._params if edge_filter is None else self._filtered_params
        if len(queries) == 1:
            request = qe.QueryRequest(limit=limit, query=queries[0], filter=edge_filter, with_payload=True,
                                      params=params)
        else:
            prefetch_limit = max(candidates, limit)
            fusion: Any = qe.Fusion.Rrf(k=RRF_K, weights=list(RRF_WEIGHTS))  # the stub's union omits its variants
            request = qe.QueryRequest(
                limit=limit,
                prefetches=[qe.Prefetch(limit=prefetch_limit, query=q, filter=edge_filter, params=params)
                            for q in queries],
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
                ids = self._ids(shard, edge_filter)
                if not ids:
                    continue
                # A deleted point's words stay in the engine's BM25 statistics (how many passages
                # hold a word) until its segment is rebuilt; emptying its sparse vector first takes
                # them out of the writable segment at once.  An indexed segment keeps counting them
                # until a build vacuums it, which these deletions count towards.
                emptied = [qe.PointVectors(i, {self.sparse_name: qe.SparseVector([], [])}) for i in ids]
                self._apply(slot, shard, qe.UpdateOperation.update_vectors(emptied), 0)
                self._apply(slot, shard, qe.UpdateOperation.delete_points_by_filter(edge_filter), len(ids))
                self._written(slot, shard)

    @staticmethod
    def _ids(shard: qe.EdgeShard, edge_filter: qe.Filter) -> list[Any]:
        """The ids of every point matching ``edge_filter`` (lock held)."""
        ids: list[Any] = []
        offset = None
        while True:
            records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=1000, filter=edge_filter,
                                                            with_payload=False, with_vector=False))
            ids.extend(r.id for r in records)
            if offset is None:
                return ids

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
            slot.replay = None  # a build of it finishing later throws its copy away
            self._kill_child(name)
            slot.pending, slot.builds, slot.failures, slot.retry_at = 0, 0, 0, 0.0
            if slot.shard is not None:
                slot.shard.close()
                slot.shard = None
            slot.dense_size = None
            path = self.root / name
            if path.exists():
                shutil.rmtree(path)

    def copy_collections(self, dest: Path) -> list[str]:
        """Copy every collection's shard directory under ``dest`` (``dest/<collection>``), each one flushed and
        copied under its lock, so no write or index swap of that collection falls in the middle of its copy
        (as an index build copies a shard).  Returns the collections copied."""
        copied = []
        names = sorted(e.name for e in self.root.iterdir() if e.is_dir() and not e.name.startswith("."))
        for name in names:
            with self._slots_lock:
                if self._root_key is None:
                    self._root_key, fresh = _lock_root(self.root)
                    if fresh:
                        _recover_builds(self.root)
                slot = self._slots.setdefault(name, _Slot())
            with slot.lock:
                path = self.root / name
                if not path.is_dir():  # dropped meanwhile
                    continue
                if slot.shard is not None:
                    _sync(slot, slot.shard)
                shutil.copytree(path, dest / name)
            copied.append(name)
        return copied

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
        self._stop.set()
        self._sync_stop.set()
        self._kill_child(None)
        indexer = self._indexer
        if indexer is not None and indexer is not threading.current_thread():
            indexer.join(timeout=60)  # it only cleans up once its child is gone
        with self._slots_lock:
            slots = list(self._slots.values())
        for slot in slots:
            with slot.lock:
                if slot.shard is not None:
                    _sync(slot, slot.shard)
                    slot.shard.close()
                    slot.shard = None
        with self._slots_lock:
            key, self._root_key = self._root_key, None
        if key is not None:
            _unlock_root(key)


def _sync(slot: _Slot, shard: qe.EdgeShard) -> None:
    """Sync the shard's writes to disk (the slot's lock held)."""
    shard.flush()
    slot.unsynced = False


def _edge_range(c: DatetimeRangeCondition) -> Any:
    return qe.FieldCondition(c.field, range=qe.RangeDateTime(gte=c.gte, lt=c.lt))
