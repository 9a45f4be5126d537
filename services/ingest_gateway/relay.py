"""The outbox relay: publishes rows the gateway committed to Postgres, in order.

The gateway never talks to Kafka inside a request.  It writes the artifact, the job and
the outgoing message in one transaction; this relay leases unpublished rows, sends them
with acks=all and marks them published.  If Kafka is down the rows wait, and the relay
catches up when it returns: nothing accepted is ever lost.  Leases (not long
transactions) let several gateway replicas relay side by side.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from secondbrain import telemetry
from secondbrain.pipeline.errors import backoff_delay
from secondbrain.ports import MetadataStore

log = logging.getLogger(__name__)


class OutboxRelay:
    """A background task moving outbox rows to Kafka."""

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
        self.published = 0
        self.last_error: str | None = None

    def wake(self) -> None:
        """Ask the relay to look at the outbox now (called after each submission)."""
        self._wake.set()

    async def start(self) -> None:
        """Start the background loop."""
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
        # Rows sent by the last batch are marked published with this claim (one round trip for both).
        rows = await asyncio.to_thread(self.metadata.outbox.claim_outbox, self.batch, 30.0, self._sent)
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
        self._sent = [r.id for r in rows]  # marked by the next claim, which follows at once
        self.published += len(rows)
        return len(rows)

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                n = await self.relay_once()
                failures = 0
                self.last_error = None
                if n:
                    continue  # more may be waiting
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                self.last_error = repr(exc)
                delay = backoff_delay(failures, 0.5, 10.0)
                log.warning("outbox relay cannot publish yet", extra={"error": repr(exc), "retry_in_s": delay})
                await asyncio.sleep(delay)
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_s)
