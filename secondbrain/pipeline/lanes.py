"""Lanes per user: a user's events never wait on another user's, and a user's small captures do not wait
behind their own huge document.

The runner puts each consumed message in a lane of its key (the user id).  Each user has up to
``per_user`` lanes; a new event goes to one of them that is idle, else to one whose current work started
recently (``long_after_s``: a lane busy for longer holds a big document), fewest queued first.  A lane is
worked through by one task at a time, at most ``concurrency`` lanes at once; at most ``buffer`` events, and
``buffer_bytes`` of their values, are held in memory (past that, putting waits, and so does reading the
stream, for every user: so the budget is in bytes as well as events, and large enough in events for one
person's whole backlog of small captures, which then never stops another person's event being read).
A batching stage gets up to ``batch_max`` events already waiting in a lane at once while one user has the
stage to themselves, and at most ``shared_max`` while another user has events here or had within
``shared_for_s``: another person's note then waits for a few of the importing user's events (their model
call), not for a batch of 64.

A user's events are therefore not strictly in order: nothing depends on it (a newer submission of a source
supersedes the older one's job whatever runs first, see the job ledger).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from secondbrain.pipeline.dead_letters import Message

Batch = list[Message]
LONG_AFTER_S = 5.0
SHARED_FOR_S = 15.0  # covers the gap between one person's notes sent one after another


@dataclass(eq=False)
class _Lane:
    queue: asyncio.Queue[Message] = field(default_factory=asyncio.Queue)
    busy_since: float | None = None  # when the batch in progress began


class Lanes:
    """Per-key queues of messages (see the module doc)."""

    def __init__(self, work: Callable[[Batch], Awaitable[None]], done: Callable[[Message], Awaitable[None]], *,
                 concurrency: int, buffer: int, batch_max: int, shared_max: int | None = None, per_user: int = 2,
                 long_after_s: float = LONG_AFTER_S, shared_for_s: float = SHARED_FOR_S,
                 buffer_bytes: int | None = None) -> None:
        """``work`` handles a batch and never raises; ``done`` acknowledges one message afterwards."""
        self._work, self._done = work, done
        self._batch_max = batch_max
        self._shared_max = max(1, min(batch_max, batch_max if shared_max is None else shared_max))
        self._shared_for_s = shared_for_s
        self._seen: dict[bytes, float] = {}  # key -> when an event of it was last put
        self._per_user = max(1, per_user)
        self._long_after_s = long_after_s
        self._lanes: dict[tuple[bytes, int], _Lane] = {}
        self.workers: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._buffer, self._buffer_bytes = max(1, buffer), buffer_bytes
        self._freed = asyncio.Event()  # set when a held event is done
        self._waiting = False  # a put waits for room
        self.held = 0  # events put and not done (at most ``buffer``)
        self.held_bytes = 0  # their values' bytes (at most ``buffer_bytes``, or one event's)
        self.last_activity = time.monotonic()  # liveness: when an event was last put or done

    async def put(self, msg: Message) -> None:
        """Queue ``msg`` in a lane of its key (waits while ``buffer`` events, or ``buffer_bytes``, are held)."""
        size = len(msg.value or b"")
        while self.held and not self._fits(size):
            self._freed.clear()
            self._waiting = True
            try:
                await self._freed.wait()
            finally:
                self._waiting = False
        self.held += 1
        self.held_bytes += size
        self.last_activity = time.monotonic()
        key = bytes(msg.key or b"")
        self._seen[key] = self.last_activity
        slot = self._choose(key)
        lane = self._lanes.get(slot)
        if lane is None:
            lane = self._lanes[slot] = _Lane()
            self._spawn(slot, lane)
        lane.queue.put_nowait(msg)

    def _fits(self, size: int) -> bool:
        if self.held >= self._buffer:
            return False
        return self._buffer_bytes is None or self.held_bytes + size <= self._buffer_bytes

    def full(self) -> bool:
        """Whether reading waits for room in the buffer."""
        return self._waiting or self.held >= self._buffer

    def _choose(self, key: bytes) -> tuple[bytes, int]:
        """The key's lane for a new event: an idle one, else the least held up (see the module doc)."""
        now = time.monotonic()
        candidates = []
        for i in range(self._per_user):
            lane = self._lanes.get((key, i))
            if lane is None:
                return key, i
            stuck = lane.busy_since is not None and now - lane.busy_since > self._long_after_s
            candidates.append((stuck, lane.queue.qsize(), i))
        return key, min(candidates)[2]

    def _alone(self, key: bytes) -> bool:
        """Whether ``key`` is the only one with events here now or within ``shared_for_s``."""
        if self._shared_max == self._batch_max:
            return True
        since = time.monotonic() - self._shared_for_s
        for other, seen in list(self._seen.items()):
            if other == key:
                continue
            if seen >= since or any(k == other for k, _i in self._lanes):
                return False
            del self._seen[other]  # gone quiet: forgotten
        return True

    def _spawn(self, slot: tuple[bytes, int], lane: _Lane) -> None:
        worker = asyncio.create_task(self._run(slot, lane))
        self.workers.add(worker)
        worker.add_done_callback(self.workers.discard)

    async def _run(self, slot: tuple[bytes, int], lane: _Lane) -> None:
        async with self._slots:
            while not lane.queue.empty():
                batch = [lane.queue.get_nowait()]
                most = self._batch_max if self._alone(slot[0]) else self._shared_max
                while len(batch) < most and not lane.queue.empty():
                    batch.append(lane.queue.get_nowait())
                lane.busy_since = time.monotonic()
                await self._work(batch)
                lane.busy_since = None
                for msg in batch:
                    try:
                        await self._done(msg)
                    finally:
                        self.held -= 1
                        self.held_bytes -= len(msg.value or b"")
                        self.last_activity = time.monotonic()  # finishing an event is progress too
                        self._freed.set()
        if self._lanes.get(slot) is lane:
            del self._lanes[slot]
            if not lane.queue.empty():  # an event arrived after the loop ended: keep the lane going
                self._lanes[slot] = lane
                self._spawn(slot, lane)
