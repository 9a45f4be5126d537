"""The faust app a stage runs in: one consumer group per stage, raw bytes in and out, manual acks.

Only the runner builds one: broker configuration from the process's Settings, on faust's aiokafka
consumer with two corrections (the broker-side fetch wait, and records a paused flow dropped).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, cast

import faust
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import TP

from secondbrain.pipeline.fetch_pacing import pace
from secondbrain.pipeline.kafka_security import faust_credentials
from secondbrain.settings import Settings

log = logging.getLogger(__name__)


def faust_brokers(bootstrap: str) -> list[str]:
    """``host:port,host:port`` -> faust broker URLs."""
    return [f"kafka://{b.strip()}" for b in bootstrap.split(",") if b.strip()]


class _ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    """faust's consumer thread with the broker-side fetch wait taken from the app (faust fixes it at 1.5 s).

    The wait is how long the broker may hold a fetch that has nothing to return.  Kafka answers as soon as
    a record arrives, but the local broker holds every fetch for the whole wait, so there the consumer is
    paced on the client instead (fetch_pacing.py) when the app's ``fetch_idle_ms`` is set.
    """

    _unpace: Callable[[], None] | None = None

    def _create_worker_consumer(self, transport: faust_aiokafka.Transport) -> Any:
        consumer = super()._create_worker_consumer(transport)
        # aiokafka keeps the constructor's value here and hands it to its fetcher in start(); fail loudly
        # if a new aiokafka renames it rather than silently falling back to faust's wait.
        if not hasattr(consumer, "_fetch_max_wait_ms"):
            raise RuntimeError("this aiokafka version keeps the fetch wait elsewhere: update faust_app.py")
        consumer._fetch_max_wait_ms = cast(_App, self.app).fetch_max_wait_ms
        return consumer

    async def on_start(self) -> None:
        await super().on_start()
        app = cast(_App, self.app)
        if app.fetch_idle_ms is not None and app.paced_topic is not None:
            self._unpace = pace(self._ensure_consumer()._fetcher, app.paced_topic, app.fetch_idle_ms / 1000)

    async def on_thread_stop(self) -> None:
        unpace, self._unpace = self._unpace, None
        if unpace is not None:
            unpace()
        await super().on_thread_stop()

    async def rewind(self, targets: dict[TP, int]) -> dict[TP, int]:
        """Move each assigned partition whose position is past its target back to it (on the consumer's
        own loop); the partitions moved."""
        consumer = self._ensure_consumer()
        moved = {}
        try:
            assigned = consumer.assignment()
            for tp, offset in targets.items():
                if tp not in assigned:
                    continue  # revoked meanwhile: its next owner starts from the committed offset
                state = consumer._fetcher._subscriptions.subscription.assignment.state_value(tp)
                if state.has_valid_position and state.position > offset:
                    consumer.seek(tp, offset)
                    moved[tp] = offset
        except Exception as exc:  # a rebalance took the assignment away meanwhile: it resets the positions
            log.warning("could not move partitions back after a pause",
                        extra={"partitions": {str(tp): o for tp, o in targets.items()}, "error": repr(exc)})
        return moved


class _Consumer(faust_aiokafka.Consumer):
    """faust's consumer, made not to lose the records a paused flow drops.

    While the flow is stopped (faust stops it for a rebalance), faust throws away what an
    in-flight fetch returns, or the rest of a batch, and counts on seeking every partition back to its
    committed offset to read them again.  That seek does nothing where nothing was committed yet (nor at
    offset 0), so those records were skipped for good.  A short fetch wait makes an in-flight fetch far more
    likely to return during a pause.  Here each partition goes back to its first record not handed on (a
    record handed on counts as read, as faust counts it).
    """

    _thread: _ConsumerThread
    _batch: tuple[int, Mapping[TP, list[Any]]] | None = None  # the consumer generation, the records
    # For tests and debugging: fetches that ended while the flow was stopped, and partitions moved back.
    ended_paused: int = 0
    rewound: int = 0

    def _new_consumer_thread(self) -> faust_aiokafka.AIOKafkaConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)

    async def _wait_next_records(self, timeout: float) -> tuple[Any, Any]:
        records, active = await super()._wait_next_records(timeout)
        self._batch = (self.app.consumer_generation_id, records) if records else None
        return records, active

    async def getmany(self, timeout: float) -> AsyncIterator[tuple[TP, Any]]:
        self._batch = None
        handed: dict[TP, int] = {}  # per partition, the last offset handed on (as faust counts it: read)
        async for tp, message in super().getmany(timeout):
            handed[tp] = message.offset
            yield tp, message
        batch, self._batch = self._batch, None
        if self.flow_active:
            return
        self.ended_paused += 1
        if batch is None or batch[0] != self.app.consumer_generation_id:
            return  # nothing fetched, or a new generation: its positions come from the committed offsets
        targets = {}
        for tp, records in batch[1].items():
            rest = [r.offset for r in records if r.offset > handed.get(tp, -1)]
            if rest:
                targets[tp] = min(rest)
        if targets:
            moved = await self._thread.call_thread(self._thread.rewind, targets)
            for tp, offset in moved.items():
                self._read_offset[tp] = offset if offset else None  # read again, not dropped as seen
            self.rewound += len(moved)


class _Transport(faust_aiokafka.Transport):
    Consumer = _Consumer


class _App(faust.App):
    """A faust app whose consumer asks the broker to hold an empty fetch ``fetch_max_wait_ms`` at most, and, when
    ``fetch_idle_ms`` is set, itself waits that long after an empty fetch of ``paced_topic`` (fetch_pacing.py)."""

    fetch_max_wait_ms: int = 1500
    fetch_idle_ms: int | None = None
    paced_topic: str | None = None

    def _new_transport(self) -> Any:
        return _Transport(self.conf.broker_consumer, self)


def build_app(settings: Settings, group: str, topic_name: str, agent_name: str,
              agent: Callable[[Any], Awaitable[None]], *, fetch_max_wait_ms: int | None = None) -> faust.App:
    """A faust app named ``group`` whose one agent, ``agent``, reads ``topic_name``; its consumer lets the broker
    hold an empty fetch ``fetch_max_wait_ms`` (default: ``settings.kafka_fetch_max_wait_ms``), and paces its own
    fetches when ``settings.kafka_fetch_idle_ms`` is set."""
    s = settings
    scratch = Path(tempfile.gettempdir()) / "secondbrain-faust"
    scratch.mkdir(parents=True, exist_ok=True)
    app = _App(
        group,
        # faust writes table state to "<app id>-data" in the working directory by default; the
        # stages keep no faust state (job state lives in Postgres), so keep it out of the way.
        datadir=str(scratch / group),
        broker=faust_brokers(s.kafka_bootstrap),
        processing_guarantee="at_least_once",  # exactly_once needs transactions Tansu lacks
        topic_replication_factor=s.replication_factor,
        topic_partitions=s.partitions,
        topic_allow_declare=False,  # topics are created explicitly by ensure_topics()
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=s.kafka_session_timeout_ms / 1000,
        broker_heartbeat_interval=s.kafka_heartbeat_interval_ms / 1000,
        broker_commit_interval=1.0,
        broker_max_poll_records=200,  # a stage takes up to 64 of a user's events at once
        producer_acks=-1,
        web_enabled=False,
        broker_credentials=faust_credentials(s),
        key_serializer="raw",
        value_serializer="raw",
    )
    app.fetch_max_wait_ms = s.kafka_fetch_max_wait_ms if fetch_max_wait_ms is None else fetch_max_wait_ms
    app.fetch_idle_ms, app.paced_topic = s.kafka_fetch_idle_ms, topic_name
    topic = app.topic(topic_name, key_type=bytes, value_type=bytes)
    app.agent(topic, name=agent_name)(agent)
    return app
