"""The outbox relay: publishes rows the gateway committed to Postgres, in order.

The gateway never talks to Kafka inside a request.  It writes the artifact, the job and
the outgoing message in one transaction; this relay leases unpublished rows, sends them
with acks=all and marks them published.  If Kafka is down the rows wait, and the relay
catches up when it returns: nothing accepted is ever lost.  Leases (not long
transactions) let several gateway replicas relay side by side.

Rows the gateway in the same process just queued come already leased to this relay
(:meth:`OutboxRelay.hand_over`): they are published without being claimed first, and every
batch is marked published by the claim that follows it (or, in a burst of handed-over rows,
before the next batch goes), so one capture costs the relay a single round trip to Postgres.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind
from tenacity import RetryCallState

from secondbrain import telemetry
from secondbrain.pipeline import retry
from secondbrain.pipeline.fetch_pacing import WAKEUPS
from secondbrain.ports import MetadataStore, OutboxMessage, OutboxRow

log = logging.getLogger(__name__)
IDLE_POLL_MAX_S = 1.6  # the longest wait between looks at an idle outbox (see OutboxRelay.idle_wait)


class OutboxRelay:
    """A background task moving outbox rows to Kafka."""

    LEASE_S = 30.0  # how long a claimed or handed-over row is this relay's before another may take it

    def __init__(self, metadata: MetadataStore, bootstrap: str, *, batch: int = 100, poll_s: float = 0.2,
                 request_timeout_ms: int = 10_000, prepare: Callable[[], Awaitable[None]] | None = None,
                 client_options: Mapping[str, Any] | None = None) -> None:
        self.metadata = metadata
        self._prepare = prepare  # e.g. create topics, once the broker answers
        self.bootstrap = bootstrap
        self.batch = batch
        self.poll_s = poll_s
        self.request_timeout_ms = request_timeout_ms
        self.client_options = dict(client_options or {})  # TLS/SASL, see secondbrain.pipeline.kafka_security
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._producer: Any = None
        self._sent: list[int] = []  # published, to be marked so with the next claim
        self._handed: list[OutboxRow] = []  # queued by this process's gateway, leased to this relay
        self._handed_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.published = 0
        self.last_error: str | None = None

    def wake(self) -> None:
        """Ask the relay to look at the outbox now (called after each submission)."""
        self._wake.set()

    def hand_over(self, ids: tuple[int, ...], messages: list[OutboxMessage]) -> None:
        """Publish rows the gateway queued leased to this relay (``lease_s=LEASE_S``) without claiming them;
        callable from any thread."""
        if not ids or len(ids) != len(messages):
            self._wake_soon()
            return
        with self._handed_lock:
            self._handed.extend(OutboxRow(id=i, message=m, attempts=0) for i, m in zip(ids, messages, strict=True))
        self._wake_soon()

    def _wake_soon(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not started: the rows wait for their lease to end and a claim
        try:
            if asyncio.get_running_loop() is loop:
                self._wake.set()
                return
        except RuntimeError:
            pass
        loop.call_soon_threadsafe(self._wake.set)

    async def start(self) -> None:
        """Start the background loop."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._run(), name="outbox-relay")

    async def stop(self) -> None:
        """Stop the loop and the producer."""
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._sent:  # published but not yet marked: mark them now (else they would go out again)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.metadata.outbox.mark_published, self._sent)
            self._sent = []
        await self._close_producer()

    async def _producer_ready(self) -> Any:
        from aiokafka import AIOKafkaProducer

        if self._producer is None:
            producer = AIOKafkaProducer(
                bootstrap_servers=self.bootstrap, acks="all", enable_idempotence=False,
                request_timeout_ms=self.request_timeout_ms, linger_ms=5, **self.client_options,
            )
            try:
                await producer.start()
            except BaseException:
                await producer.stop()
                raise
            self._producer = producer
        return self._producer

    async def _close_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            with contextlib.suppress(Exception):  # already broken; nothing more to release
                await producer.stop()

    async def relay_once(self) -> int:
        """Publish one batch; return how many rows were published."""
        if self._prepare is not None:
            # Before leasing rows: waiting for the broker must not eat into a lease.
            await self._prepare()
            self._prepare = None
        with self._handed_lock:
            rows, self._handed = self._handed[:self.batch], self._handed[self.batch:]
        if rows and self._sent:
            # A burst of handed-over rows: the batch before is marked now, not by a claim that comes only
            # when the burst is over, maybe after its lease ran out (another claim would send it again).
            await asyncio.to_thread(self.metadata.outbox.mark_published, self._sent)
            self._sent = []
        if not rows:
            # Rows sent by the last batch are marked published with this claim (one round trip for both).
            rows = await asyncio.to_thread(self.metadata.outbox.claim_outbox, self.batch, self.LEASE_S, self._sent)
            self._sent = []
        if not rows:
            return 0
        # One producer span per row, continuing the trace of the request that wrote it (its headers).
        spans = [telemetry.tracer().start_span(
            f"{r.message.topic} publish", context=telemetry.context_from_headers(r.message.headers),
            kind=SpanKind.PRODUCER, attributes={**telemetry.kafka_attributes(r.message.topic, operation="send"),
                                                "sb.outbox.attempts": r.attempts}) for r in rows]
        try:
            producer = await self._producer_ready()
            futures = [
                await producer.send(r.message.topic, r.message.value, key=r.message.key,
                                    headers=telemetry.with_trace_headers(r.message.headers,
                                                                         trace.set_span_in_context(span)))
                for r, span in zip(rows, spans, strict=True)
            ]
            await asyncio.gather(*futures)
        except Exception as exc:
            for span in spans:
                telemetry.record_exception(span, exc)
                span.end()
            await asyncio.to_thread(self.metadata.outbox.release_outbox, [r.id for r in rows], repr(exc))
            await self._close_producer()
            raise
        for span in spans:
            span.end()
        self._sent.extend(r.id for r in rows)  # marked with the next claim, or before the next batch
        self.published += len(rows)
        for topic in {r.message.topic for r in rows}:
            WAKEUPS.published(topic)  # a stage of this process waiting for records fetches now
        return len(rows)

    def _failed(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        self.last_error = repr(exc)
        log.warning("outbox relay cannot publish yet", extra={
            "error": repr(exc), "retry_in_s": round(state.upcoming_sleep, 2)})

    async def _run(self) -> None:
        quiet = 0  # looks in a row that found nothing
        while True:
            # Cleared before looking, not after: a wake-up that arrives meanwhile is not lost.
            self._wake.clear()
            n = 0
            async for attempt in retry.relaying(before_sleep=self._failed):
                with attempt:
                    n = await self.relay_once()
            self.last_error = None
            if n:
                quiet = 0
                continue  # more may be waiting
            quiet += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.idle_wait(quiet))

    def idle_wait(self, quiet: int) -> float:
        """How long to wait for a wake-up after ``quiet`` looks in a row found nothing: ``poll_s`` at first, then
        twice as long after each empty look, up to :data:`IDLE_POLL_MAX_S` (or ``poll_s`` when that is longer).
        This process's own captures wake the relay at once; the looks only find rows another process queued or
        whose lease ran out, and an idle server does not ask PostgreSQL five times a second."""
        return max(self.poll_s, min(IDLE_POLL_MAX_S, self.poll_s * 2 ** max(0, quiet - 1)))
