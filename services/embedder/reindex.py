"""Re-embedding a user's chunks with another model into a new collection version.

1. **Begin**: a *building* index (the user's next version) with the new model is recorded.  From
   then on the embedder stage writes new chunks into it as well as into the active one.
2. **Backfill**: the active collection is read in id order, page by page; each page is embedded
   with the new model from the very text the stage embedded (title, section path and chunk text,
   all in the payload) and written with the same ids, passage and BM25 vectors.  Progress and
   the position are recorded under a lease, so one process fills an index at a time and another
   run continues where an interrupted one stopped.
3. **Reconcile**: both collections are compared by id.  Chunks the backfill could not see (written
   to the active version only, by an embed that had looked up the indexes just before step 1)
   are added; chunks deleted meanwhile are removed.  The counts must then match.
4. **Switch**: in one transaction the building index becomes active and the old one retired.
   Searches follow within :data:`~secondbrain.vector_indexes.ACTIVE_INDEX_TTL_S` seconds, so the
   old collection is dropped only after that grace period (or kept, on request).

Search keeps using the old collection, with the old model, until the switch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from secondbrain.embedding import EmbedderPool
from secondbrain.passage import IndexedPassage
from secondbrain.ports import (
    Embedder,
    LeaseLost,
    MetadataStore,
    SparseEncoder,
    VectorFilter,
    VectorHit,
    VectorIndex,
    VectorPoint,
    VectorStore,
)
from secondbrain.vector_indexes import ACTIVE_INDEX_TTL_S, embedder_for

log = logging.getLogger(__name__)

LEASE_S = 120.0  # a re-index that stops renewing its lease (crashed) can be continued after this


class ReindexBusy(RuntimeError):
    """Another process is filling this index (its lease has not expired)."""


class ReindexIncomplete(RuntimeError):
    """The new collection does not match the active one after reconciling: nothing was switched."""


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a backfill is: points written so far (this index, all runs) out of the active count."""

    user_id: str
    version: int
    model_id: str
    done: int
    total: int
    run_points: int  # written by this run
    run_seconds: float

    @property
    def rate(self) -> float:
        """Points per second in this run."""
        return self.run_points / self.run_seconds if self.run_seconds > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this run's rate (``None`` before the first page)."""
        return max(0, self.total - self.done) / self.rate if self.rate > 0 else None

    def line(self) -> str:
        """``bob v2: 1200/5000 points (24%), 35.1 points/s, about 1m48s left``."""
        pct = 100 * self.done // self.total if self.total else 100
        eta = self.eta_s
        left = "" if eta is None else f", about {_duration(eta)} left"
        return (f"{self.user_id} v{self.version}: {self.done}/{self.total} points ({pct}%), "
                f"{self.rate:.1f} points/s{left}")


def _duration(value: float) -> str:
    seconds = round(value)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a re-index of one user did."""

    user_id: str
    status: Literal["switched", "unchanged", "stopped"]
    message: str
    index: VectorIndex | None = None  # the new (or already) active index
    retired: VectorIndex | None = None
    points: int = 0  # points in the new index
    run_points: int = 0  # re-embedded by this run
    seconds: float = 0.0


def default_owner() -> str:
    """A lease owner name that tells an operator which process holds it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Reindexer:
    """Moves users' vectors to another embedding model (see the module documentation).

    ``on_progress`` is called after every page (from the calling thread); ``drop_grace_s`` is how
    long the replaced collection stays after the switch so searches that looked up the old index
    just before it finish (0 in tests that search without the cache).
    """

    def __init__(self, metadata: MetadataStore, vectors: VectorStore, embedders: EmbedderPool,
                 sparse: SparseEncoder, *, batch_size: int = 64, owner: str | None = None,
                 lease_s: float = LEASE_S, drop_grace_s: float = ACTIVE_INDEX_TTL_S + 2.0,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.metadata = metadata
        self.vectors = vectors
        self.embedders = embedders
        self.sparse = sparse
        self.batch_size = max(1, batch_size)
        self.owner = owner or default_owner()
        self.lease_s = lease_s
        self.drop_grace_s = drop_grace_s
        self.on_progress = on_progress

    # ------------------------------------------------------------------ steps

    def begin(self, user_id: str, spec: str, *, keep_old: bool = False) -> tuple[VectorIndex | None, str]:
        """Record the building index for model ``spec`` (or find the one in progress).

        Returns ``(None, why)`` when there is nothing to re-embed: the user is on that model already,
        or has no index yet (then the model becomes their first index directly).
        """
        model = self.embedders.get(spec)
        active = self.metadata.indexes.vector_indexes(user_id, status="active")
        if not active:
            first = self.metadata.indexes.ensure_active_index(user_id, spec, model.model_id, model.dimension)
            return None, f"{user_id} had nothing indexed: new chunks will use {first.model_id} (v{first.version})"
        if active[0].model_id == model.model_id:
            return None, f"{user_id} already uses {model.model_id} (v{active[0].version}): nothing to do"
        index = self.metadata.indexes.begin_reindex(user_id, spec, model.model_id, model.dimension, keep_old=keep_old)
        log.info("re-index begun", extra={"user_id": user_id, "version": index.version, "model_id": index.model_id,
                                          "from_version": active[0].version})
        return index, f"{user_id}: v{active[0].version} ({active[0].model_id}) -> v{index.version} ({index.model_id})"

    def run(self, user_id: str, index: VectorIndex, *, stop: threading.Event | None = None) -> Outcome:
        """Backfill, reconcile and switch ``index`` (a building index from :meth:`begin`).

        Raises :class:`ReindexBusy` when another process holds the index's lease and
        :class:`ReindexIncomplete` when the collections still differ after reconciling.  A set
        ``stop`` ends the run after the current page (``status="stopped"``; run again to continue).
        """
        claimed = self.metadata.indexes.claim_reindex(user_id, index.version, self.owner, self.lease_s)
        if claimed is None:
            current = [i for i in self.metadata.indexes.vector_indexes(user_id) if i.version == index.version]
            if current and current[0].status == "active":
                return Outcome(user_id, "unchanged", f"{user_id}: v{index.version} is active already", current[0])
            holder = current[0].lease_owner if current else "?"
            raise ReindexBusy(f"{user_id} v{index.version} is being filled by {holder} "
                              "(run again once it stops; its lease then expires)")
        started = time.monotonic()
        try:
            source = self.metadata.indexes.vector_indexes(user_id, status="active")
            if not source:
                raise ReindexIncomplete(f"{user_id} has no active index to copy from")
            active = source[0]
            model = embedder_for(self.embedders, claimed)
            with self.metadata.indexes.hold_reindex(user_id, claimed.version, self.owner):
                self.vectors.ensure_collection(user_id, claimed.dense_size, index=claimed.name)
            run_points = self._backfill(user_id, active, claimed, model, stop, started)
            if run_points is None:
                self.metadata.indexes.release_reindex(user_id, index.version, self.owner)
                return Outcome(user_id, "stopped", f"{user_id}: stopped; run again to continue", claimed)
            added, removed = self._reconcile(user_id, active, claimed, model)
            source_count = self.vectors.count(user_id, index=active.name)
            target_count = self.vectors.count(user_id, index=claimed.name)
            if source_count != target_count:
                raise ReindexIncomplete(
                    f"{user_id}: v{active.version} holds {source_count} points but v{claimed.version} "
                    f"{target_count} after reconciling; nothing switched (run again)")
            retired = self.metadata.indexes.activate_index(user_id, claimed.version)
        except LeaseLost as exc:
            self.metadata.indexes.release_reindex(user_id, index.version, self.owner)
            raise ReindexBusy(f"{user_id} v{index.version}: stopped, the re-index was cancelled, the user "
                              "erased or the lease taken over") from exc
        except BaseException:
            self.metadata.indexes.release_reindex(user_id, index.version, self.owner)
            raise
        seconds = time.monotonic() - started
        log.info("re-index switched", extra={"user_id": user_id, "version": claimed.version,
                                             "model_id": claimed.model_id, "points": target_count,
                                             "re_embedded": run_points + added, "removed": removed,
                                             "seconds": round(seconds, 1)})
        kept = self._after_switch(user_id, retired, stop)
        new = next(i for i in self.metadata.indexes.vector_indexes(user_id) if i.version == claimed.version)
        note = "" if retired is None else (f"; v{retired.version} kept" if kept else f"; v{retired.version} dropped")
        return Outcome(user_id, "switched",
                       f"{user_id}: now searching v{new.version} ({new.model_id}), {target_count} points{note}",
                       new, retired, target_count, run_points + added, seconds)

    def reindex(self, user_id: str, spec: str, *, keep_old: bool = False,
                stop: threading.Event | None = None) -> Outcome:
        """:meth:`begin` then :meth:`run`: the whole re-index of one user, in this process."""
        index, why = self.begin(user_id, spec, keep_old=keep_old)
        if index is None:
            active = self.metadata.indexes.vector_indexes(user_id, status="active")
            return Outcome(user_id, "unchanged", why, active[0] if active else None)
        return self.run(user_id, index, stop=stop)

    # ------------------------------------------------------------------ internals

    def _pages(self, user_id: str, index: str, offset: str | None = None,
               limit: int | None = None) -> Iterator[tuple[list[VectorHit], str | None]]:
        while True:
            page, offset = self.vectors.scroll(user_id, limit=limit or self.batch_size, offset=offset, index=index)
            yield page, offset
            if offset is None:
                return

    def _embed_into(self, user_id: str, hits: list[VectorHit], target: VectorIndex, model: Embedder) -> None:
        """Embed ``hits`` with ``model`` and write them into ``target`` under the re-index's fence, so an
        erasure or a cancel that comes meanwhile waits for the write and then removes it, and none is
        written after it (:class:`~secondbrain.ports.LeaseLost`)."""
        passages = [IndexedPassage.from_payload(h.payload, h.id) for h in hits]
        inputs = [p.embedding_text() for p in passages]
        dense = model.embed_documents(inputs)
        sparse = self.sparse.encode_documents(inputs)
        # Written in the current shape: a passage stored with its lists joined is copied with them as lists.
        points = [VectorPoint(h.id, d, s, replace(p, embedding_model=model.model_id).to_payload())
                  for h, p, d, s in zip(hits, passages, dense, sparse, strict=True)]
        with self.metadata.indexes.hold_reindex(user_id, target.version, self.owner):
            self.vectors.upsert(user_id, points, index=target.name)

    def _backfill(self, user_id: str, source: VectorIndex, target: VectorIndex, model: Embedder,
                  stop: threading.Event | None, started: float) -> int | None:
        """Copy every page from the recorded position on; the points written, or ``None`` when stopped."""
        total = self.vectors.count(user_id, index=source.name)
        done = target.points_done
        if done > 0 and target.resume_from is None:
            return 0  # an earlier run got to the end: only reconciling is left
        run_points = 0
        for page, next_offset in self._pages(user_id, source.name, target.resume_from):
            if page:
                self._embed_into(user_id, page, target, model)
            done += len(page)
            run_points += len(page)
            total = max(total, done)  # chunks written to both meanwhile make the source grow
            if not self.metadata.indexes.reindex_progress(user_id, target.version, self.owner, done=done, total=total,
                                                  resume_from=next_offset, lease_s=self.lease_s):
                raise ReindexBusy(f"{user_id} v{target.version}: stopped, the re-index was cancelled, the user "
                                  "erased or the lease taken over after a stall")
            if self.on_progress is not None:
                self.on_progress(Progress(user_id, target.version, target.model_id, done, total, run_points,
                                          time.monotonic() - started))
            if stop is not None and stop.is_set() and next_offset is not None:
                return None
        return run_points

    def _reconcile(self, user_id: str, source: VectorIndex, target: VectorIndex, model: Embedder) -> tuple[int, int]:
        """Make ``target`` hold exactly ``source``'s points; how many were added and removed."""
        page_size = max(256, self.batch_size)
        target_docs: dict[str, str] = {}
        for page, _ in self._pages(user_id, target.name, limit=page_size):
            target_docs.update((h.id, IndexedPassage.from_payload(h.payload).document_id) for h in page)
        source_ids: set[str] = set()
        source_docs: set[str] = set()
        missing: list[VectorHit] = []
        for page, _ in self._pages(user_id, source.name, limit=page_size):
            for h in page:
                source_ids.add(h.id)
                source_docs.add(IndexedPassage.from_payload(h.payload).document_id)
                if h.id not in target_docs:
                    missing.append(h)
        for start in range(0, len(missing), self.batch_size):
            self._embed_into(user_id, missing[start:start + self.batch_size], target, model)
        extra = [pid for pid in target_docs if pid not in source_ids]
        # Deleted from the active version after the backfill copied them: their whole document went
        # (a newer version replaced it, or its source was deleted), so remove it by document.
        stale = sorted({target_docs[pid] for pid in extra} - source_docs - {""})
        if stale:
            self.vectors.delete_where(user_id, VectorFilter(document_ids=stale))
        if missing or extra:
            log.info("re-index reconciled", extra={"user_id": user_id, "version": target.version,
                                                    "added": len(missing), "removed": len(extra)})
        return len(missing), len(extra)

    def _after_switch(self, user_id: str, retired: VectorIndex | None, stop: threading.Event | None) -> bool:
        """Drop the replaced collection after the grace period unless it is to be kept (True when kept), and
        any collection version no index record accounts for (left by a write that raced a drop)."""
        indexes = self.metadata.indexes.vector_indexes(user_id)
        active = next(i for i in indexes if i.status == "active")
        if retired is not None and not active.keep_old:
            if self.drop_grace_s > 0:  # for searches that looked the old index up just before the switch
                (stop or threading.Event()).wait(self.drop_grace_s)  # a stopping process drops it at once
            self.vectors.drop_index(user_id, retired.name)
            self.metadata.indexes.index_dropped(user_id, retired.version)
        drop_orphans(self.metadata, self.vectors, user_id)
        return retired is not None and active.keep_old


def drop_orphans(metadata: MetadataStore, vectors: VectorStore, user_id: str) -> list[str]:
    """Drop the user's collection versions that no live or kept index accounts for: versions without
    a record, dropped ones written to again by a late write, and cancelled re-indexes."""
    records = {i.name: i for i in metadata.indexes.vector_indexes(user_id)}
    orphans = []
    for name in vectors.list_indexes(user_id):
        record = records.get(name)
        if record is not None and (record.status != "retired"
                                   or (record.activated_at is not None and record.dropped_at is None)):
            continue
        if record is None and name == "v1" and not records:
            continue  # the store's default version of a user with no records yet (nothing re-indexed)
        vectors.drop_index(user_id, name)
        if record is not None:
            metadata.indexes.index_dropped(user_id, record.version)
        orphans.append(name)
    if orphans:
        log.info("orphan vector collections dropped", extra={"user_id": user_id, "versions": orphans})
    return orphans


class ReindexWorker:
    """Continues re-indexes recorded in the database from inside a process that owns the vectors.

    ``secondbrain reindex`` against a running embedded server cannot open the in-process vector
    engine (one process at a time), so it records the building index and this worker, running in
    the server, fills and switches it.  In distributed mode it also continues a re-index whose
    CLI stopped (its lease expired).  Failures are logged and retried after ``retry_s``.
    """

    def __init__(self, reindexer: Reindexer, *, poll_s: float = 5.0, retry_s: float = 300.0) -> None:
        self.reindexer = reindexer
        self.poll_s = poll_s
        self.retry_s = retry_s
        self._stop = threading.Event()
        self._task: asyncio.Task[None] | None = None
        self._failed: dict[tuple[str, int], float] = {}

    async def start(self) -> None:
        """Start polling in the background."""
        self._task = asyncio.create_task(self._loop(), name="reindex-worker")

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Stop after the current page (the re-index continues on the next start)."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
            self._task.cancel()

    def pending(self) -> list[VectorIndex]:
        """Building indexes nobody holds a live lease on (and that did not fail just now)."""
        now = datetime.now(UTC)
        out = []
        for index in self.reindexer.metadata.indexes.vector_indexes(status="building"):
            if index.lease_owner is not None and index.lease_expires_at is not None \
                    and index.lease_expires_at > now - timedelta(seconds=1):
                continue
            if self._failed.get((index.user_id, index.version), 0.0) > time.monotonic():
                continue
            out.append(index)
        return out

    def run_pending(self) -> list[Outcome]:
        """Run every pending re-index to its end (or until stopped); returns what each did."""
        outcomes = []
        for index in self.pending():
            if self._stop.is_set():
                break
            try:
                outcomes.append(self.reindexer.run(index.user_id, index, stop=self._stop))
            except ReindexBusy:
                continue
            except Exception as exc:
                self._failed[(index.user_id, index.version)] = time.monotonic() + self.retry_s
                log.error("re-index failed", extra={"user_id": index.user_id, "version": index.version,
                                                    "error": str(exc), "retry_in_s": self.retry_s})
        return outcomes

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                await asyncio.to_thread(self.run_pending)
            except Exception as exc:  # the database was away: try again on the next poll
                log.warning("re-index poll failed", extra={"error": str(exc)})
            await asyncio.to_thread(self._stop.wait, self.poll_s)
