"""Lanes: a user's small captures pass their own huge document; other users are never held up; the buffer
bounds what is held (no broker: the lanes alone, with events that block until told)."""

from __future__ import annotations

import asyncio

import pytest

from secondbrain.pipeline.dead_letters import Message
from secondbrain.pipeline.lanes import Lanes

pytestmark = pytest.mark.fast


def message(user: str, name: str) -> Message:
    return Message("t", 0, 0, user.encode(), name.encode(), {}, None)


async def test_small_captures_pass_their_own_users_long_work() -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def work(batch: list[Message]) -> None:
        for msg in batch:
            if msg.value == b"huge":
                await release.wait()
            finished.append((msg.value or b"").decode())

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=100, batch_max=1, long_after_s=0.05)
    await lanes.put(message("alice", "huge"))
    await asyncio.sleep(0.1)  # the huge one has been working for a while
    for n in range(5):
        await lanes.put(message("alice", f"note {n}"))
    await lanes.put(message("bob", "bob's note"))
    for _ in range(100):
        if len(finished) == 6:
            break
        await asyncio.sleep(0.01)
    assert sorted(finished) == ["bob's note", *(f"note {n}" for n in range(5))]  # the huge one still runs
    release.set()
    await asyncio.wait(set(lanes.workers), timeout=5)
    assert finished[-1] == "huge" and lanes.held == 0


async def test_one_user_cannot_take_every_slot() -> None:
    """A user's events use at most two lanes: with four slots, another user still gets one at once."""
    release = asyncio.Event()
    started: list[str] = []

    async def work(batch: list[Message]) -> None:
        for msg in batch:
            started.append((msg.value or b"").decode())
            if msg.key == b"alice":
                await release.wait()

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=100, batch_max=1)
    for n in range(10):
        await lanes.put(message("alice", f"a{n}"))
    await lanes.put(message("bob", "b0"))
    for _ in range(100):
        if "b0" in started:
            break
        await asyncio.sleep(0.01)
    assert "b0" in started and len([s for s in started if s.startswith("a")]) == 2
    release.set()
    await asyncio.wait(set(lanes.workers), timeout=5)
    assert lanes.held == 0


async def test_batches_shrink_while_another_user_waits() -> None:
    """One user alone gets big batches; once another user has events, the first one's batches are small, so
    the other's note waits for a few events' work, not a batch of 64."""
    sizes: list[tuple[str, int]] = []
    gate = asyncio.Event()

    async def work(batch: list[Message]) -> None:
        sizes.append(((batch[0].key or b"").decode(), len(batch)))
        await gate.wait()

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=1000, batch_max=64, shared_max=8, per_user=1)
    for n in range(100):
        await lanes.put(message("alice", f"a{n}"))
    await asyncio.sleep(0.01)
    assert sizes == [("alice", 64)]  # alone: everything waiting, up to 64
    await lanes.put(message("bob", "b0"))
    await asyncio.sleep(0.01)
    assert sizes[1] == ("bob", 1)  # bob's lane runs beside alice's
    gate.set()
    await asyncio.wait(set(lanes.workers), timeout=5)
    rest = [n for user, n in sizes[2:] if user == "alice"]
    assert sum(rest) == 36 and max(rest) <= 8, sizes
    assert lanes.held == 0


async def test_batches_grow_again_once_the_other_user_is_quiet() -> None:
    sizes: list[int] = []

    async def work(batch: list[Message]) -> None:
        sizes.append(len(batch))

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=1000, batch_max=64, shared_max=8, per_user=1,
                  shared_for_s=0.05)
    await lanes.put(message("bob", "b0"))
    await asyncio.wait(set(lanes.workers), timeout=5)
    for n in range(20):
        await lanes.put(message("alice", f"a{n}"))
    await asyncio.wait(set(lanes.workers), timeout=5)
    assert sizes[1:] and max(sizes[1:]) <= 8  # bob was here a moment ago
    await asyncio.sleep(0.1)
    sizes.clear()
    for n in range(20):
        await lanes.put(message("alice", f"b{n}"))
    await asyncio.wait(set(lanes.workers), timeout=5)
    assert sizes == [20]


async def test_one_persons_backlog_of_small_events_never_stops_another_persons_being_read() -> None:
    """The buffer is counted in events and bytes: a thousand small captures of one person fit, so reading never
    waits on them and the other person's event goes in (and through) at once."""
    gate = asyncio.Event()
    started: list[str] = []

    async def work(batch: list[Message]) -> None:
        started.extend((m.key or b"").decode() for m in batch)
        if batch[0].key == b"alice":
            await gate.wait()

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=2048, buffer_bytes=64 * 1024, batch_max=64, shared_max=8)
    for n in range(1000):
        await asyncio.wait_for(lanes.put(message("alice", f"note {n:04}")), 1)
    await asyncio.wait_for(lanes.put(message("bob", "note")), 1)
    for _ in range(100):
        if "bob" in started and lanes.held == 1000:
            break
        await asyncio.sleep(0.01)
    assert "bob" in started and lanes.held_bytes == 1000 * len("note 0000")  # bob's done; alice's all held
    gate.set()
    await asyncio.wait(set(lanes.workers), timeout=5)
    assert (lanes.held, lanes.held_bytes) == (0, 0)


async def test_large_events_fill_the_byte_budget_before_the_event_count() -> None:
    gate = asyncio.Event()

    async def work(_batch: list[Message]) -> None:
        await gate.wait()

    async def done(_msg: Message) -> None:
        return None

    lanes = Lanes(work, done, concurrency=4, buffer=100, buffer_bytes=1000, batch_max=1)
    await lanes.put(Message("t", 0, 0, b"alice", b"x" * 600, {}, None))
    second = asyncio.create_task(lanes.put(Message("t", 0, 1, b"bob", b"y" * 600, {}, None)))
    await asyncio.sleep(0.05)
    assert not second.done() and lanes.full()  # 1,200 bytes would be over the budget: reading waits
    gate.set()
    await asyncio.wait_for(second, 2)  # the first one done, the second fits
    for _ in range(200):
        if lanes.held == 0:
            break
        await asyncio.sleep(0.01)
    assert (lanes.held, lanes.held_bytes) == (0, 0)
