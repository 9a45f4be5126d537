"""One lane per user: a user's events run in order, different users' side by side.

The runner puts each consumed message in the lane of its key (the user id).  A lane is worked
through by one task at a time, at most ``concurrency`` lanes at once; at most ``buffer`` events are
held in memory (past that, putting waits, and so does reading the stream).  A batching stage gets
up to ``batch_max`` events already waiting in a lane at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from secondbrain.pipeline.dead_letters import Message

Batch = list[Message]


class Lanes:
    """Per-key queues of messages (see the module doc)."""

    def __init__(self, work: Callable[[Batch], Awaitable[None]], done: Callable[[Message], Awaitable[None]], *,
                 concurrency: int, buffer: int, batch_max: int) -> None:
        """``work`` handles a batch and never raises; ``done`` acknowledges one message afterwards."""
        self._work, self._done = work, done
        self._batch_max = batch_max
        self._lanes: dict[bytes, asyncio.Queue[Message]] = {}
        self.workers: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._room = asyncio.Semaphore(max(1, buffer))
        self.held = 0  # events put and not done (at most ``buffer``)
        self.last_activity = time.monotonic()  # liveness: when an event was last put or done

    async def put(self, msg: Message) -> None:
        """Queue ``msg`` in the lane of its key (waits while ``buffer`` events are held)."""
        await self._room.acquire()
        self.held += 1
        self.last_activity = time.monotonic()
        key = bytes(msg.key or b"")
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = asyncio.Queue()
            self._spawn(key, lane)
        lane.put_nowait(msg)

    def _spawn(self, key: bytes, lane: asyncio.Queue[Message]) -> None:
        worker = asyncio.create_task(self._run(key, lane))
        self.workers.add(worker)
        worker.add_done_callback(self.workers.discard)

    async def _run(self, key: bytes, lane: asyncio.Queue[Message]) -> None:
        async with self._slots:
            while not lane.empty():
                batch = [lane.get_nowait()]
                while len(batch) < self._batch_max and not lane.empty():
                    batch.append(lane.get_nowait())
                await self._work(batch)
                for msg in batch:
                    try:
                        await self._done(msg)
                    finally:
                        self.held -= 1
                        self.last_activity = time.monotonic()  # finishing an event is progress too
                        self._room.release()
        if self._lanes.get(key) is lane:
            del self._lanes[key]
            if not lane.empty():  # an event arrived after the loop ended: keep the lane going
                self._lanes[key] = lane
                self._spawn(key, lane)
