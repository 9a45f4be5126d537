"""Paced fetches: an idle consumer of the embedded broker does not ask it again and again, and a record this
process publishes is fetched at once."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from secondbrain.infra.tansu import TansuBroker
from secondbrain.pipeline.fetch_pacing import Wakeups, pace


class _Fetcher:
    """aiokafka's fetcher as the pacing sees it: one fetch per call, answering what the test queued."""

    def __init__(self) -> None:
        self.answers: list[bool] = []
        self.calls = 0
        self.during: Any = None  # run while a fetch is out, as a publish that lands meanwhile

    async def _proc_fetch_request(self, assignment: Any, node_id: int, request: Any) -> bool:
        self.calls += 1
        if self.during is not None:
            self.during()
        return self.answers.pop(0) if self.answers else False


class _Assignment:
    active = True


@pytest.mark.fast
async def test_an_empty_fetch_waits_until_the_topic_is_published_to() -> None:
    wakeups, fetcher = Wakeups(), _Fetcher()
    undo = pace(fetcher, "notes", idle_s=30, wakeups=wakeups)
    fetch = asyncio.create_task(fetcher._proc_fetch_request(_Assignment(), 0, None))
    await asyncio.sleep(0.05)
    assert not fetch.done(), "an empty fetch returned at once: the next one would follow at once"
    wakeups.published("other-topic")
    await asyncio.sleep(0.05)
    assert not fetch.done(), "a publish to another topic woke it"
    wakeups.published("notes")
    assert await asyncio.wait_for(fetch, 1) is False
    undo()
    wakeups.published("notes")  # no consumer left: nothing to wake, nothing raised


@pytest.mark.fast
async def test_a_fetch_that_brought_records_is_followed_at_once_and_a_publish_meanwhile_is_not_lost() -> None:
    wakeups, fetcher = Wakeups(), _Fetcher()
    pace(fetcher, "notes", idle_s=30, wakeups=wakeups)
    fetcher.answers = [True]
    assert await asyncio.wait_for(fetcher._proc_fetch_request(_Assignment(), 0, None), 1) is True
    # Published after the broker looked but before its empty answer came back: the next fetch goes at once.
    fetcher.during = lambda: wakeups.published("notes")
    assert await asyncio.wait_for(fetcher._proc_fetch_request(_Assignment(), 0, None), 1) is False


@pytest.mark.fast
async def test_the_wait_is_bounded_for_records_other_processes_publish() -> None:
    fetcher = _Fetcher()
    pace(fetcher, "notes", idle_s=0.05, wakeups=Wakeups())
    t0 = time.monotonic()
    assert await asyncio.wait_for(fetcher._proc_fetch_request(_Assignment(), 0, None), 5) is False
    assert time.monotonic() - t0 >= 0.04


@pytest.mark.fast
async def test_a_consumer_that_stops_mid_fetch_does_not_wait_on() -> None:
    class _Slow(_Fetcher):
        async def _proc_fetch_request(self, assignment: Any, node_id: int, request: Any) -> bool:
            try:  # as aiokafka's fetch: a cancellation ends it with False, not an exception
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                return False
            return True

    fetcher = _Slow()
    pace(fetcher, "notes", idle_s=30, wakeups=Wakeups())
    fetch = asyncio.create_task(fetcher._proc_fetch_request(_Assignment(), 0, None))
    await asyncio.sleep(0.05)
    fetch.cancel()
    done, _ = await asyncio.wait({fetch}, timeout=2)
    assert done, "a stopping consumer waited out the idle wait"


async def _topic(bootstrap: str) -> str:
    topic = f"paced-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])
    finally:
        await admin.close()
    return topic


async def test_on_the_embedded_broker_an_idle_consumer_rests_and_a_publish_here_is_fetched_at_once(
        broker: TansuBroker) -> None:
    topic = await _topic(broker.bootstrap)
    wakeups = Wakeups()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=f"g-{topic}",
                                auto_offset_reset="earliest", fetch_max_wait_ms=5)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await consumer.start()
    await producer.start()
    try:
        fetcher = consumer._fetcher
        fetches = 0
        fetch = fetcher._proc_fetch_request

        async def counted(*args: Any) -> bool:
            nonlocal fetches
            fetches += 1
            return bool(await fetch(*args))
        fetcher._proc_fetch_request = counted
        pace(fetcher, topic, idle_s=60, wakeups=wakeups)
        assert await consumer.getmany(timeout_ms=1500) == {}  # joined, positions found, first fetch out
        before = fetches
        await asyncio.sleep(2)
        # Unpaced, a 5 ms fetch wait is hundreds of fetches in 2 s; paced, the consumer waits for a wake-up.
        assert fetches - before <= 1
        await producer.send_and_wait(topic, b"note", key=b"alice")
        wakeups.published(topic)
        t0 = time.monotonic()
        got: dict[Any, Any] = {}
        while not got and time.monotonic() - t0 < 20:
            got = await consumer.getmany(timeout_ms=500)
        assert [r.value for records in got.values() for r in records] == [b"note"]
        assert time.monotonic() - t0 < 20, "found only after the idle wait: the publish did not wake it"
    finally:
        await producer.stop()
        await consumer.stop()
