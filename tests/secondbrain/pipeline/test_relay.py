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
