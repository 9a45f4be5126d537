"""Paced fetches for the embedded broker: a consumer that found nothing waits on the client, not the broker.

The embedded broker (Tansu) holds every fetch for its whole ``fetch_max_wait_ms``, records or not, and does
not answer early when one arrives.  With a broker-side wait, an idle stage asks it ten times a second and each
hop between stages costs up to two waits.  Paced instead, the broker is asked not to hold a fetch (a few ms);
after a fetch that brought nothing the consumer waits ``idle_s`` itself, and is woken at once when this process
publishes to the topic it reads (in embedded mode every stage, and the outbox relay, share one process).
Records another process publishes are found within ``idle_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any

_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


class Wakeups:
    """Which paced consumers of this process read which topic; :meth:`published` wakes them (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, list[_Waiter]] = {}

    def register(self, topic: str, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> Callable[[], None]:
        """Wake ``event`` (on ``loop``) whenever this process publishes to ``topic``; returns the undo."""
        waiter = (loop, event)
        with self._lock:
            self._waiters.setdefault(topic, []).append(waiter)

        def undo() -> None:
            with self._lock:
                waiters = self._waiters.get(topic, [])
                if waiter in waiters:
                    waiters.remove(waiter)
        return undo

    def published(self, topic: str) -> None:
        """Records were just acknowledged on ``topic``: wake its paced consumers in this process."""
        with self._lock:
            waiters = list(self._waiters.get(topic, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that consumer's loop has closed: nothing to wake
                loop.call_soon_threadsafe(event.set)


WAKEUPS = Wakeups()


def pace(fetcher: Any, topic: str, idle_s: float, wakeups: Wakeups = WAKEUPS) -> Callable[[], None]:
    """Make aiokafka's ``fetcher`` (running on the current loop) wait up to ``idle_s`` after a fetch that brought
    nothing, or until ``wakeups`` says ``topic`` was published to; returns the undo (for the consumer's stop)."""
    if not hasattr(fetcher, "_proc_fetch_request"):  # fail loudly rather than silently fetch unpaced
        raise RuntimeError("this aiokafka version fetches elsewhere: update secondbrain/pipeline/fetch_pacing.py")
    event = asyncio.Event()
    undo = wakeups.register(topic, asyncio.get_running_loop(), event)
    # The fetcher starts each node's fetch as a task of this method; while it runs no other fetch goes to
    # that node, so waiting inside it is what paces the node.
    fetch: Callable[..., Awaitable[bool]] = fetcher._proc_fetch_request

    async def paced(assignment: Any, node_id: int, request: Any) -> bool:
        event.clear()  # before the fetch: a publish acknowledged while it is out is not missed
        got = await fetch(assignment, node_id, request)
        task = asyncio.current_task()
        # aiokafka's fetch swallows its cancellation (the consumer stops, or lost its partitions): no wait then.
        if got or not assignment.active or (task is not None and task.cancelling()):
            return got
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):  # cancelled while waiting: the same
            await asyncio.wait_for(event.wait(), idle_s)
        return got

    fetcher._proc_fetch_request = paced
    return undo
