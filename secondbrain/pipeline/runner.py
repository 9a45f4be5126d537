"""The thin runner that wires a :class:`~secondbrain.pipeline.stage.Stage` to Kafka.

One faust app (one consumer group) per stage, so each stage scales on its own.  For every
message the runner:

1. decodes it (a malformed message goes to the dead-letter topic at once);
2. calls the stage on a worker thread, retrying retryable errors with bounded exponential
   backoff; permanent errors and exhausted retries go to the dead-letter topic with the
   error in headers, and the job is marked failed with a human-readable reason;
3. publishes the stage's outputs and waits for the broker's acknowledgement;
4. records the stage's success in the metadata store;
5. only then lets faust acknowledge the message, so its offset is committed after the
   outputs are safe (at-least-once; deterministic ids make the replays harmless).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import logging
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import faust
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from secondbrain import ids, telemetry
from secondbrain.events.codec import EventCodec, EventTooLarge, MalformedEvent
from secondbrain.events.models import DeadLetter, JobStatusChanged
from secondbrain.pipeline import topics
from secondbrain.pipeline.errors import PermanentError, backoff_delay, classify
from secondbrain.pipeline.kafka_security import faust_credentials
from secondbrain.pipeline.stage import Emit, JobRef, Stage
from secondbrain.pipeline.topics import TopicNames
from secondbrain.ports import MetadataStore
from secondbrain.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
LAG_REFRESH_S = 5.0  # how often a runner asks the broker for its partitions' end offsets
# Input fields worth a span attribute when an event has them (sizes, modality).
_EVENT_ATTRIBUTES = ("modality", "content_type", "size_bytes", "text_length", "chunk_count")
Output = tuple[str, bytes, bytes, list[tuple[str, bytes]]]


def faust_brokers(bootstrap: str) -> list[str]:
    """``host:port,host:port`` -> faust broker URLs."""
    return [f"kafka://{b.strip()}" for b in bootstrap.split(",") if b.strip()]


@dataclass
class StageStats:
    """Per-stage event counters."""

    processed: int = 0
    failed: int = 0
    retried: int = 0
    dead_lettered: int = 0


class StageRunner:
    """Runs one stage as a faust agent."""

    def __init__(self, stage: Stage[Any], *, settings: Settings, codec: EventCodec, metadata: MetadataStore,
                 names: TopicNames) -> None:
        self.stage = stage
        self.settings = settings
        self.codec = codec
        self.metadata = metadata
        self.names = names
        self.stats = StageStats()
        self._lanes: dict[bytes, asyncio.Task[None]] = {}
        self._inflight: set[asyncio.Task[None]] = set()
        self._stopping = False
        # The stage's own threads: its blocking work never queues behind (or starves) the HTTP
        # handlers and store calls that share the event loop's default pool.
        self._pool = ThreadPoolExecutor(max_workers=max(1, settings.stage_concurrency),
                                        thread_name_prefix=f"stage-{stage.name}")
        self._pending = asyncio.Semaphore(max(1, settings.stage_buffer))
        self._held = 0  # events read and not finished (at most stage_buffer)
        self._last_read = time.monotonic()  # liveness: when an event was last read or finished
        self._ends: dict[tuple[str, int], int] = {}  # end offsets the broker last reported, per partition
        self._starts: dict[tuple[str, int], int] = {}  # and the earliest offsets it still holds
        self._lag_task: asyncio.Task[None] | None = None
        self.group = f"{settings.consumer_group_prefix}.{names.prefix}{stage.name}"
        self.app = self._build_app()

    # ------------------------------------------------------------------ wiring
    def _build_app(self) -> faust.App:
        s = self.settings
        app_id = self.group
        scratch = Path(tempfile.gettempdir()) / "secondbrain-faust"
        scratch.mkdir(parents=True, exist_ok=True)
        app = faust.App(
            app_id,
            # faust writes table state to "<app id>-data" in the working directory by default; the
            # stages keep no faust state (job state lives in Postgres), so keep it out of the way.
            datadir=str(scratch / app_id),
            broker=faust_brokers(s.kafka_bootstrap),
            processing_guarantee="at_least_once",  # exactly_once needs transactions Tansu lacks
            topic_replication_factor=s.replication_factor,
            topic_partitions=s.partitions,
            topic_allow_declare=False,  # topics are created explicitly by ensure_topics()
            consumer_auto_offset_reset="earliest",
            broker_session_timeout=s.kafka_session_timeout_ms / 1000,
            broker_heartbeat_interval=s.kafka_heartbeat_interval_ms / 1000,
            broker_commit_interval=1.0,
            broker_max_poll_records=50,
            producer_acks=-1,
            web_enabled=False,
            broker_credentials=faust_credentials(s),
            key_serializer="raw",
            value_serializer="raw",
        )
        topic = app.topic(self.names(self.stage.input_topic), key_type=bytes, value_type=bytes)

        async def agent(stream: Any) -> None:
            # Manual acks: an event is acknowledged only after handle() has published its outputs.
            # faust commits up to the first unacknowledged offset, so out-of-order completion across
            # lanes never commits past an event that is still in flight.
            manual = stream.noack()
            async for event in manual.events():
                await self._dispatch(event, manual)

        app.agent(topic, name=f"{self.stage.name}-agent")(agent)
        return app

    async def _dispatch(self, event: Any, stream: Any) -> None:
        """Run ``event`` in its user's lane: one user's events in order, different users side by side.

        So a slow or failing artifact delays only its owner's later events, never another user's.
        """
        if self._stopping:
            return  # not acknowledged: whoever owns the partition next processes it
        # Bound the events held in memory; past it, reading the stream waits.  A single user
        # queueing more than this many events ahead of another can still delay them.
        await self._pending.acquire()
        self._held += 1
        self._last_read = time.monotonic()
        key = bytes(event.key or b"")
        previous = self._lanes.get(key)
        task = asyncio.create_task(self._run_in_lane(previous, event, stream))
        self._lanes[key] = task
        self._inflight.add(task)

        def done(t: asyncio.Task[None], k: bytes = key) -> None:
            self._inflight.discard(t)
            if self._lanes.get(k) is t:
                del self._lanes[k]

        task.add_done_callback(done)

    async def _run_in_lane(self, previous: asyncio.Task[None] | None, event: Any, stream: Any) -> None:
        try:
            if previous is not None:
                await asyncio.wait([previous])  # ordering only; its outcome is its own business
            msg = event.message
            try:
                await self.handle(msg.topic, msg.partition, msg.offset, event.key, event.value, event.headers)
            except Exception as exc:
                # handle() publishes or dead-letters every event; getting here is a bug in that
                # path. Record what can be recorded, then move on: an event that is never acked
                # would hold back every later commit of its partition forever.
                log.exception("stage runner failed on an event", extra={
                    "stage": self.stage.name, "topic": msg.topic, "offset": msg.offset})
                await self._last_resort(msg.topic, msg.partition, msg.offset, event.key, exc)
            await stream.ack(event)
        finally:
            self._held -= 1
            self._last_read = time.monotonic()  # finishing an event is progress too
            self._pending.release()

    async def _last_resort(self, topic: str, partition: int, offset: int, key: bytes | None,
                           exc: BaseException) -> None:
        """Dead-letter a bare record of the event (no payload) when the normal path itself failed."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._dead_letter(topic, partition, offset, key, b"", {}, kind="permanent",
                                                     exc=exc, attempts=0, ref=JobRef(None, None)), 30)

    async def start(self) -> None:
        """Join the consumer group and start consuming."""
        await self.app.start()
        self._last_read = time.monotonic()
        self._lag_task = asyncio.create_task(self._watch_ends(), name=f"{self.stage.name}-lag")
        telemetry.register_lag_source(self)

    async def stop(self, drain_timeout_s: float = 30.0) -> None:
        """Stop taking events, let those in flight finish (outputs published, offsets acked), leave the group.

        Events still running after ``drain_timeout_s`` are cancelled unacknowledged: the next owner of
        their partition processes them again (ids are deterministic, so nothing is duplicated).
        """
        self._stopping = True
        telemetry.unregister_lag_source(self)
        if self._lag_task is not None:
            self._lag_task.cancel()
            # Bounded: on Python 3.11 a cancel landing inside wait_for can be swallowed.
            await asyncio.wait({self._lag_task}, timeout=5)
        if self._inflight:
            _done, pending = await asyncio.wait(set(self._inflight), timeout=drain_timeout_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=5)
        try:
            # faust's stop can wait forever on a consumer that lost its broker or its flow; a stopping
            # process must still end (offsets not committed are simply processed again).
            await asyncio.wait_for(self.app.stop(), timeout=drain_timeout_s)
        except TimeoutError:
            log.warning("stage did not stop in time; leaving it", extra={"stage": self.stage.name})
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def healthy(self) -> bool:
        """False once the faust app crashed or stopped (a liveness probe should restart the process)."""
        return not (self.app.crashed or self.app.should_stop)

    # ------------------------------------------------------------------ lag and stalls
    async def _watch_ends(self) -> None:
        """Ask the broker for the end offsets of the assigned partitions now and then.

        From the broker, not from the fetcher's last response: a consumer that stopped fetching
        would otherwise never learn that messages are waiting.
        """
        while True:
            try:
                consumer = self.app.consumer
                assigned = list(consumer.assignment())
                ends = await asyncio.wait_for(consumer.highwaters(*assigned), 10) if assigned else {}
                self._ends = {(tp.topic, tp.partition): int(end) for tp, end in ends.items() if end is not None}
                # Where a partition nothing was committed or read from yet starts (offset reset: earliest).
                starts = await asyncio.wait_for(consumer.earliest_offsets(*assigned), 10) if assigned else {}
                self._starts = {(tp.topic, tp.partition): int(o) for tp, o in starts.items() if o is not None}
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # rebalancing, or the broker is away: keep the last reading
                log.debug("end offsets unavailable", extra={"stage": self.stage.name, "error": repr(exc)})
            await asyncio.sleep(LAG_REFRESH_S)

    def lag(self) -> list[tuple[str, str, int, int]]:
        """Messages not yet done per assigned partition of the input topic: the end offset minus the
        committed one (the earliest offset while nothing was committed or read).  Feeds the
        ``secondbrain.consumer.lag`` gauge."""
        topic = self.names(self.stage.input_topic)
        consumer = self.app.consumer
        committed = {(tp.topic, tp.partition): v for tp, v in list(getattr(consumer, "_committed_offset", {}).items())}
        read = {(tp.topic, tp.partition): v for tp, v in list(getattr(consumer, "_read_offset", {}).items())}
        out = []
        for (t, partition), end in list(self._ends.items()):
            if t != topic:
                continue
            position = committed.get((t, partition))
            if position is None:
                last = read.get((t, partition))
                position = last + 1 if last is not None else self._starts.get((t, partition))
            if position is not None:
                out.append((self.stage.name, t, partition, max(0, end - position)))
        return out

    def stalled(self) -> str | None:
        """A reason when the stage is alive but stopped consuming: for ``stage_stall_s`` it neither
        read nor finished an event, while more messages wait than it holds, and its buffer has room.
        A stage busy with long events keeps finishing them or fills its buffer: not reported."""
        idle = time.monotonic() - self._last_read
        if idle < self.settings.stage_stall_s or self._held >= self.settings.stage_buffer or self._stopping:
            return None
        try:
            waiting = sum(n for _s, _t, _p, n in self.lag()) - self._held
        except Exception:  # rebalancing: no verdict this time
            return None
        if waiting <= 0:
            return None
        return (f"stage {self.stage.name} consumed nothing for {idle:.0f}s while {waiting} messages wait "
                "on its partitions")

    # ------------------------------------------------------------------ processing
    async def handle(self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None,
                     headers: Any) -> None:
        """Process one message end to end; never raises (a crash would stall the partition).

        Runs inside a consumer span that continues the trace the message's headers carry.
        """
        hdrs = _headers_dict(headers)
        started = time.monotonic()
        span = telemetry.tracer().start_span(
            f"{self.stage.name} process", context=telemetry.context_from_headers(hdrs), kind=SpanKind.CONSUMER,
            attributes={**telemetry.kafka_attributes(topic, partition, offset, operation="process",
                                                     group=self.group), "sb.stage": self.stage.name})
        try:
            with trace.use_span(span, end_on_exit=False):
                await self._handle(topic, partition, offset, key, value, hdrs)
        finally:
            span.end()
            telemetry.STAGE_DURATION.record(time.monotonic() - started, {"stage": self.stage.name})

    async def _handle(self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None,
                      hdrs: dict[str, str]) -> None:
        span = trace.get_current_span()
        try:
            event = self.codec.decode(value or b"", expected=self.stage.input_type)
        except MalformedEvent as exc:
            user = key.decode("utf-8", "replace") if key else None
            await self._dead_letter(topic, partition, offset, key, value, hdrs, kind="malformed", exc=exc,
                                    attempts=0, ref=JobRef(None, user))
            return
        _describe(span, event)
        try:
            ref = self.stage.job_of(event)
        except Exception as exc:  # an event the stage cannot even attribute to a job
            user = key.decode("utf-8", "replace") if key else None
            await self._dead_letter(topic, partition, offset, key, value, hdrs, kind="malformed", exc=exc,
                                    attempts=0, ref=JobRef(None, user))
            return
        admit = getattr(self.stage, "admit", None)  # stages reading topics other apps publish to
        if admit is not None:
            refused = await self._admit(admit, event, value or b"", hdrs)
            if refused is not None:
                # No job bookkeeping: a refused event must not start or fail anyone's job.
                kind = refused.kind if isinstance(refused, PermanentError) else "retries_exhausted"
                await self._dead_letter(topic, partition, offset, key, value, hdrs, kind=kind, exc=refused,
                                        attempts=1, ref=JobRef(None, ref.user_id))
                return
        if ref.job_id:
            span.set_attribute("sb.job.id", ref.job_id)
        telemetry.set_user(ref.user_id, span)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            span.set_attribute("sb.attempt", attempt)
            try:
                await self._metadata(self.metadata.stage_started, ref, self.stage.name, attempt)
                emits = await self._in_pool(self.stage.process, event)
                # Encode before leaving the try: an output the codec refuses (invalid, too large)
                # is a permanent failure of this event, not a crash of the agent.
                outputs = self._encode_all(emits, _submitted_at(hdrs, event))
                break
            except Exception as exc:
                kind = classify(exc)
                if kind == "retryable" and attempt < self.settings.max_attempts:
                    self.stats.retried += 1
                    telemetry.STAGE_EVENTS.add(1, {"stage": self.stage.name, "outcome": "retried"})
                    span.add_event("retry", {"sb.attempt": attempt, "error.type": type(exc).__name__})
                    delay = backoff_delay(attempt, self.settings.retry_backoff_s, self.settings.retry_backoff_max_s)
                    log.warning("stage failed, retrying", extra={
                        "stage": self.stage.name, "job_id": ref.job_id, "attempt": attempt,
                        "delay_s": delay, "error": repr(exc)})
                    await self._best_effort(self.metadata.stage_retrying, ref, self.stage.name, attempt,
                                            _reason(exc))
                    await self._status(ref, "retrying", _reason(exc), attempt)
                    await asyncio.sleep(delay)
                    continue
                dl_kind = exc.kind if isinstance(exc, PermanentError) else (
                    "retries_exhausted" if kind == "retryable" else "permanent")
                await self._dead_letter(topic, partition, offset, key, value, hdrs, kind=dl_kind, exc=exc,
                                        attempts=attempt, ref=ref)
                return
        for emit in emits[:1]:
            _describe(span, emit.event, prefix="sb.output")
            if getattr(event, "modality", None) is None and isinstance(getattr(emit.event, "modality", None), str):
                span.set_attribute("sb.modality", emit.event.modality)  # what the stage found out
        span.set_attribute("sb.outputs", len(emits))
        await self._publish_all(outputs)
        if self.stage.completes_stage:
            await self._until_done(self.metadata.stage_succeeded, ref, self.stage.name, None)
        await self._status(ref, "succeeded", None, attempt)
        self.stats.processed += 1
        telemetry.STAGE_EVENTS.add(1, {"stage": self.stage.name, "outcome": "processed"})
        if self.stage.name == "embed" and emits:  # the last stage: the job's content is searchable now
            self._record_ingest_latency(hdrs, event)
        log.info("stage done", extra={"stage": self.stage.name, "job_id": ref.job_id, "outputs": len(emits),
                                      "ms": round((time.monotonic() - started) * 1000, 1)})

    async def _admit(self, admit: Callable[..., None], event: Any, value: bytes,
                     hdrs: dict[str, str]) -> BaseException | None:
        """Run the stage's admission check, retrying while its stores are unreachable; return the
        refusal (or the last error) instead of raising."""
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                await self._in_pool(admit, event, value, hdrs)
                return None
            except Exception as exc:
                if classify(exc) != "retryable" or attempt == self.settings.max_attempts:
                    return exc
                await asyncio.sleep(backoff_delay(attempt, self.settings.retry_backoff_s,
                                                  self.settings.retry_backoff_max_s))
        return None  # pragma: no cover - the loop always returns

    def _encode_all(self, emits: list[Emit[Any]], submitted_at: str | None) -> list[Output]:
        extra = [(telemetry.SUBMITTED_AT_HEADER, submitted_at.encode())] if submitted_at else []
        return [(self.names(emit.topic), emit.key.encode(), self.codec.encode(emit.event),
                 [*self.codec.headers(emit.event), *extra]) for emit in emits]

    def _record_ingest_latency(self, hdrs: dict[str, str], event: Any) -> None:
        """Submission to searchable, from the submit time the first event's headers carried along."""
        submitted = hdrs.get(telemetry.SUBMITTED_AT_HEADER)
        if not submitted:
            return
        try:
            seconds = time.time() - float(submitted)
        except ValueError:
            return
        telemetry.INGEST_LATENCY.record(max(0.0, seconds), {"modality": getattr(event, "modality", None) or "unknown"})

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the stage's threads, carrying context variables (trace context) along."""
        ctx = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(ctx.run, fn, *args))

    async def _publish_all(self, outputs: list[Output]) -> None:
        for topic, key, value, headers in outputs:
            # A producer span per output; the next stage continues the trace from it.
            with telemetry.tracer().start_as_current_span(
                    f"{topic} publish", kind=SpanKind.PRODUCER,
                    attributes=telemetry.kafka_attributes(topic, operation="send")):
                await self._send(topic, key, value, telemetry.with_trace_headers(headers))

    async def _send(self, topic: str, key: bytes | None, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        """Publish and wait for the broker; keep trying while it is unreachable (never drop an output)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                await self.app.producer.send_and_wait(topic, key, value, None, None, headers)
                return
            except Exception as exc:  # the broker is down or restarting
                delay = backoff_delay(attempt, self.settings.retry_backoff_s, self.settings.retry_backoff_max_s)
                log.warning("publish failed, retrying", extra={"topic": topic, "attempt": attempt,
                                                               "error": repr(exc)})
                await asyncio.sleep(delay)

    async def _dead_letter(self, topic: str, partition: int, offset: int, key: bytes | None,
                           value: bytes | None, hdrs: dict[str, str], *, kind: str, exc: BaseException,
                           attempts: int, ref: JobRef) -> None:
        reason = _reason(exc)
        self.stats.failed += 1
        self.stats.dead_lettered += 1
        telemetry.STAGE_EVENTS.add(1, {"stage": self.stage.name, "outcome": "failed"})
        telemetry.STAGE_EVENTS.add(1, {"stage": self.stage.name, "outcome": "dead_lettered"})
        span = trace.get_current_span()
        telemetry.record_exception(span, exc)
        span.set_attribute("sb.error.kind", kind)
        now = datetime.now(UTC)
        letter = DeadLetter(
            event_id=ids.event_id(topic, str(partition), str(offset), "dead"), stage=self.stage.name,
            original_topic=topic, original_partition=partition, original_offset=offset, original_key=key,
            original_value=value or b"", original_headers=hdrs, error_kind=kind, error_type=type(exc).__name__,
            error_message=reason, attempts=attempts, job_id=ref.job_id, user_id=ref.user_id, failed_at=now,
        )
        headers = [*self.codec.headers(letter),
                   ("sb-error-kind", kind.encode()), ("sb-error-type", type(exc).__name__.encode()),
                   ("sb-error-message", reason.encode("utf-8")[:2000]), ("sb-stage", self.stage.name.encode()),
                   ("sb-original-topic", topic.encode()), ("sb-original-partition", str(partition).encode()),
                   ("sb-original-offset", str(offset).encode()), ("sb-attempts", str(attempts).encode())]
        try:
            encoded = self.codec.encode(letter)
        except EventTooLarge:
            # The original message is (nearly) at the size limit itself: keep its coordinates, which
            # still let an operator fetch it from the source topic, and drop the copy.
            letter = dataclasses.replace(letter, original_value=b"")
            encoded = self.codec.encode(letter)
            headers.append(("sb-original-dropped", b"too large to copy; read it at the original offset"))
        await self._send(self.names(topics.DEAD_LETTER), key, encoded, telemetry.with_trace_headers(headers))
        log.error("dead-lettered", extra={"stage": self.stage.name, "job_id": ref.job_id, "kind": kind,
                                          "error": reason, "topic": topic, "offset": offset})
        if ref.job_id:
            await self._until_done(self.metadata.job_failed, ref, self.stage.name,
                                   f"{self.stage.name} failed: {reason}")
            await self._status(ref, "failed", reason, attempts)

    async def _status(self, ref: JobRef, status: str, detail: str | None, attempt: int) -> None:
        """Publish a job status change for other apps (the metadata store is the source of truth)."""
        if not ref.job_id or not ref.user_id:
            return
        ev = JobStatusChanged(
            event_id=ids.event_id(ref.job_id, self.stage.name, status, str(attempt)), job_id=ref.job_id,
            user_id=ref.user_id, stage=self.stage.name, status=status, detail=detail, attempt=attempt,
            occurred_at=datetime.now(UTC),
        )
        await self._send(self.names(topics.JOBS_STATUS), ref.user_id.encode(), self.codec.encode(ev),
                         self.codec.headers(ev))

    async def _metadata(self, fn: Callable[..., T], ref: JobRef, *args: Any) -> T | None:
        """Call a job transition of the metadata store, scoped by the event's user."""
        if ref.job_id is None or ref.user_id is None:
            return None
        return await asyncio.to_thread(fn, ref.user_id, ref.job_id, *args)

    async def _best_effort(self, fn: Callable[..., Any], ref: JobRef, *args: Any) -> None:
        try:
            await self._metadata(fn, ref, *args)
        except Exception as exc:  # bookkeeping must not turn a retry into a crash
            log.warning("job bookkeeping failed", extra={"job_id": ref.job_id, "error": repr(exc)})

    async def _until_done(self, fn: Callable[..., Any], ref: JobRef, *args: Any, limit: int = 30) -> None:
        """Job state must not be lost: keep trying (bounded) while the metadata store is down."""
        for attempt in range(1, limit + 1):
            try:
                await self._metadata(fn, ref, *args)
                return
            except Exception as exc:
                delay = backoff_delay(attempt, self.settings.retry_backoff_s, self.settings.retry_backoff_max_s)
                log.warning("job bookkeeping failed, retrying", extra={"job_id": ref.job_id, "error": repr(exc)})
                await asyncio.sleep(delay)
        log.error("job bookkeeping abandoned", extra={"job_id": ref.job_id, "call": getattr(fn, "__name__", "?")})


def _describe(span: trace.Span, event: Any, prefix: str = "sb") -> None:
    """Sizes and modality of an event as span attributes (never its content or user id)."""
    if not span.is_recording():
        return
    for name in _EVENT_ATTRIBUTES:
        value = getattr(event, name, None)
        if isinstance(value, str | int) and not isinstance(value, bool):
            span.set_attribute(f"{prefix}.{name}", value)


def _submitted_at(hdrs: dict[str, str], event: Any) -> str | None:
    """The job's submit time (epoch seconds) for the outputs' headers: carried over from the input,
    else taken from the event that starts a job (a submission or a URL request)."""
    carried = hdrs.get(telemetry.SUBMITTED_AT_HEADER)
    if carried:
        return carried
    when = getattr(event, "submitted_at", None) or getattr(event, "requested_at", None)
    return f"{when.timestamp():.3f}" if isinstance(when, datetime) else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, PermanentError):
        return exc.reason
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:1000]


def _headers_dict(headers: Any) -> dict[str, str]:
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    out: dict[str, str] = {}
    for k, v in items:
        out[str(k)] = v.decode("utf-8", "replace") if isinstance(v, bytes | bytearray) else str(v)
    return out
