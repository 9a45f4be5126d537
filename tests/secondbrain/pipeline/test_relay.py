"""The outbox relay against a real Postgres and a real Kafka-protocol broker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from secondbrain import ids
from secondbrain.infra.tansu import TansuBroker
from secondbrain.pipeline.relay import OutboxRelay
from secondbrain.ports import OutboxMessage
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.contracts.metadata.helpers import TOPICS, artifact


@pytest.fixture
def metadata(dsn: str) -> Iterator[PostgresMetadataStore]:
    with PostgresMetadataStore(dsn, min_size=1, max_size=4, topics=TOPICS) as store:
        store.migrate()
        yield store


def test_a_burst_of_captures_is_published_once(metadata: PostgresMetadataStore, broker: TansuBroker) -> None:
    # Captures handed to the relay one after another are sent batch after batch with no claim in between.
    # Each batch must be marked published before its lease runs out, or a claim after the lease sends it
    # again: a second copy of the capture's work, which ran the whole pipeline twice.
    lease_s = 1.0  # the relay's own lease is 30 s; short here so that running out is quick to see

    async def burst() -> None:
        relay = OutboxRelay(metadata, broker.bootstrap)
        try:
            for n in range(3):
                art = artifact("alice", n)
                result = metadata.intake.submit(art, ids.job_id("alice", f"burst-{n}"), [OutboxMessage(
                    topic="artifacts.submitted", key=b"alice", value=str(n).encode(), headers=())], lease_s=lease_s)
                relay.hand_over(result.leased, [OutboxMessage(topic="artifacts.submitted", key=b"alice",
                                                              value=str(n).encode(), headers=())])
                assert await relay.relay_once() == 1
            assert relay.published == 3
        finally:
            await relay.stop()

    asyncio.run(burst())
    time.sleep(lease_s + 0.5)
    assert metadata.outbox.claim_outbox(10) == []  # nothing left to send again


@pytest.mark.fast
def test_an_idle_relay_looks_less_often_and_a_wake_up_still_comes_at_once() -> None:
    """Looks that find nothing space out (0.2, 0.4, 0.8 s, ... up to 1.6 s), so an idle server does not ask the
    store five times a second; a capture of this process (a wake-up) is still looked for at once."""
    from secondbrain.pipeline import relay as relay_module
    from secondbrain.stores.memory.store import MemoryMetadataStore

    assert [OutboxRelay(MemoryMetadataStore(), "unused:9092").idle_wait(q) for q in range(1, 7)] == \
        [0.2, 0.4, 0.8, 1.6, 1.6, 1.6]
    assert OutboxRelay(MemoryMetadataStore(), "unused:9092", poll_s=5.0).idle_wait(3) == 5.0  # never below poll_s
    assert relay_module.IDLE_POLL_MAX_S == 1.6

    async def scenario() -> tuple[int, float]:
        metadata = MemoryMetadataStore()
        looks: list[float] = []
        claim = metadata.outbox.claim_outbox

        def counted(*args: object, **kwargs: object) -> list[object]:
            looks.append(time.monotonic())
            return claim(*args, **kwargs)  # type: ignore[arg-type]

        metadata.outbox.claim_outbox = counted  # type: ignore[method-assign]
        relay = OutboxRelay(metadata, "unused:9092", poll_s=0.2)
        await relay.start()
        try:
            await asyncio.sleep(2.0)
            idle_looks = len(looks)
            woken = time.monotonic()
            relay.wake()
            while len(looks) == idle_looks:
                await asyncio.sleep(0.01)
            return idle_looks, looks[-1] - woken
        finally:
            await relay.stop()

    idle_looks, after_wake = asyncio.run(scenario())
    assert idle_looks <= 5  # at 0, 0.2, 0.6, 1.4 s (and one more on a slow machine); ten without the back-off
    assert after_wake < 0.5
