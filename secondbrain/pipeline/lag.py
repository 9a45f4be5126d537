"""Where each input partition of a stage stands: what was read, what is in flight, what the broker holds.

The runner tells a :class:`PartitionPositions` what it reads and finishes; a watcher asks the
broker for end offsets now and then.  From those it answers the ``secondbrain.consumer.lag``
gauge and whether a live stage stopped consuming (see ``StageRunner.stalled``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)
LAG_REFRESH_S = 5.0  # how often a runner asks the broker for its partitions' end offsets
Partition = tuple[str, int]


class PartitionPositions:
    """Read, in-flight and end offsets per partition (all offsets are the broker's)."""

    def __init__(self) -> None:
        self._read_next: dict[Partition, int] = {}
        self._inflight: dict[Partition, set[int]] = {}
        self._ends: dict[Partition, int] = {}  # end offsets the broker last reported
        self._starts: dict[Partition, int] = {}  # and the earliest offsets it still holds

    def read(self, topic: str, partition: int, offset: int) -> None:
        where = (topic, partition)
        self._inflight.setdefault(where, set()).add(offset)
        self._read_next[where] = max(self._read_next.get(where, 0), offset + 1)

    def done(self, topic: str, partition: int, offset: int) -> None:
        self._inflight.get((topic, partition), set()).discard(offset)

    async def watch(self, consumer: Any, stage: str) -> None:
        """Ask the broker for the end offsets of the assigned partitions every :data:`LAG_REFRESH_S`.

        From the broker, not from the fetcher's last response: a consumer that stopped fetching
        would otherwise never learn that messages are waiting.
        """
        while True:
            try:
                assigned = list(consumer().assignment())
                ends = await asyncio.wait_for(consumer().highwaters(*assigned), 10) if assigned else {}
                self._ends = {(tp.topic, tp.partition): int(end) for tp, end in ends.items() if end is not None}
                starts = await asyncio.wait_for(consumer().earliest_offsets(*assigned), 10) if assigned else {}
                self._starts = {(tp.topic, tp.partition): int(o) for tp, o in starts.items() if o is not None}
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # rebalancing, or the broker is away: keep the last reading
                log.debug("end offsets unavailable", extra={"stage": stage, "error": repr(exc)})
            await asyncio.sleep(LAG_REFRESH_S)

    def lag(self, topic: str) -> list[tuple[str, int, int]]:
        """(topic, partition, messages not yet done) per assigned partition of ``topic``: the end offset
        minus the first offset not done yet (the first in flight, else the next to read, else the
        earliest the broker holds)."""
        out = []
        for (t, partition), end in list(self._ends.items()):
            if t != topic:
                continue
            inflight = self._inflight.get((t, partition))
            position = min(inflight) if inflight else self._read_next.get((t, partition),
                                                                          self._starts.get((t, partition)))
            if position is not None:
                out.append((t, partition, max(0, end - position)))
        return out
