"""Creating the pipeline's Kafka topics (their names: ``secondbrain.topic_names``).

Topics are created explicitly at start-up (never auto-created: brokers that auto-create
pick their own partition count).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secondbrain.topic_names import TopicNames

from secondbrain.pipeline import retry

log = logging.getLogger(__name__)


async def ensure_topics(bootstrap: str, names: TopicNames, *, partitions: int, replication: int,
                        timeout_s: float = 30.0, client_options: Mapping[str, Any] | None = None) -> list[str]:
    """Create the pipeline's topics that do not exist yet; return the ones created.

    Retries while the broker is still starting so a fresh ``docker compose up`` or
    ``secondbrain up`` does not fail on ordering.
    """
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import KafkaConnectionError, KafkaError, TopicAlreadyExistsError

    async def create() -> list[str]:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000,
                                    **dict(client_options or {}))
        try:
            await admin.start()
            existing = set(await admin.list_topics())
            wanted = [t for t in names.all() if t not in existing]
            if wanted:
                with contextlib.suppress(TopicAlreadyExistsError):  # another process won the race: fine
                    await admin.create_topics(
                        [NewTopic(t, num_partitions=partitions, replication_factor=replication) for t in wanted]
                    )
                log.info("topics created", extra={"topics": wanted, "partitions": partitions})
            return wanted
        finally:
            await admin.close()

    try:
        async for attempt in retry.broker_starting(timeout_s, (KafkaConnectionError, KafkaError, OSError)):
            with attempt:
                return await create()
    except (KafkaConnectionError, KafkaError, OSError) as exc:
        raise RuntimeError(
            f"Kafka at {bootstrap} did not answer within {timeout_s:.0f}s ({exc}); "
            "check SB_KAFKA_BOOTSTRAP and that the broker is running."
        ) from exc
    raise AssertionError("unreachable")  # pragma: no cover - the retry loop returns or raises
