"""The thin runner that wires a :class:`~secondbrain.pipeline.stage.Stage` to Kafka.

One faust app (one consumer group) per stage, so each stage scales on its own.  The stage is
known only by its step in the topology (:mod:`secondbrain.pipeline.topology`).  What becomes of an
event (admitted, worked on, dropped, dead-lettered or published) is decided by the step core
(:mod:`secondbrain.pipeline.core`), the same one that runs events in process; for every message
the runner adds what only a broker needs:

1. opens it when the topic is internal (sealed with the pipeline key: anything else is refused as
   ``unauthorized``) and decodes it (a malformed message goes to the dead-letter topic at once);
2. runs the core's admission and the stage's work on one of the stage's threads, retrying retryable
   errors (tenacity, bounded) and recording each retry and the job's progress;
3. dead-letters what the core says failed for good, with the error in headers (the job fails with a
   reason a person can read), and counts what it dropped;
4. publishes the outputs (sealed for internal topics) and waits for the broker's acknowledgement;
5. only then acknowledges the message, so its offset is committed after the outputs are safe
   (at-least-once; deterministic ids make replays harmless).

One user's events run in lanes of their own; different users' lanes side by side.  A stage that works in
batches (:class:`~secondbrain.pipeline.stage.BatchStage`: the extractor, the chunker, the embedder) gets the
events already waiting in a lane (up to 64; a lone event is never held back waiting for more) in one call, and
the runner does their bookkeeping together: one read of their jobs' states to admit them, one write recording
their stage done, their outputs and statuses sent at once and then one wait for the broker.  An event whose
work failed in a way a retry may mend is then taken alone, with its retries; one that failed for good is
dead-lettered alone, and the rest go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import faust
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from tenacity import RetryCallState

from secondbrain import ids, stages, telemetry, topic_names
from secondbrain.errors import Unauthorized, retry_may_help
from secondbrain.events.codec import EventCodec, MalformedEvent
from secondbrain.events.models import JobStatusChanged
from secondbrain.events.sealing import Sealer, SealError
from secondbrain.pipeline import core, dead_letters, event_telemetry, retry
from secondbrain.pipeline.dead_letters import Message
from secondbrain.pipeline.faust_app import build_app
from secondbrain.pipeline.fetch_pacing import WAKEUPS
from secondbrain.pipeline.lag import PartitionPositions
from secondbrain.pipeline.lanes import Lanes
from secondbrain.pipeline.stage import BatchingStage, BatchStage, JobRef, Stage, WarmingStage
from secondbrain.pipeline.topology import SEALED_TOPICS
from secondbrain.ports import DeadLetters, JobLedger
from secondbrain.ports.metadata import JobState, StageOutcome
from secondbrain.settings import Settings
from secondbrain.topic_names import TopicNames

log = logging.getLogger(__name__)
T = TypeVar("T")
BATCH_MAX = 64  # events of one lane handed to a stage at once (those already waiting: nothing waits for more)
SHARED_BATCH_MAX = 8  # the same while another user has events too: their note waits for 8 events' work, not 64
# The URL fetcher's consumer lets the broker hold an empty fetch at least this long: each look costs the process
# CPU whether anything came or not (ten a second at `secondbrain up`'s 100 ms), and a page's own download takes
# longer than the wait anyway; the other stages keep the configured wait (a note's hops between them).
URL_FETCH_WAIT_MS = 500
STOP_DRAIN_S = 4.0  # how long a stopping stage lets its events in flight finish, and then faust leave the group
Output = tuple[str, bytes, bytes, list[tuple[str, bytes]]]
_DROPPED = {  # what the log says of dropped work, by why it was dropped
    "ended": "work of a job that had already ended (finished, failed or replaced) dropped",
    "superseded": "work of a replaced document dropped",
    "gone": "work of a deleted source or erased user dropped",
}


@dataclass
class StageStats:
    """Per-stage event counters."""

    processed: int = 0
    failed: int = 0
    retried: int = 0
    dead_lettered: int = 0
    dropped: int = 0  # work for a source deleted (or a document replaced) meanwhile


@dataclass
class _Work:
    """A decoded, admitted message on its way through the stage."""

    msg: Message
    event: Any
    ref: JobRef
    span: trace.Span
    admission: core.Admission
    opened: bytes | None = None  # the Avro bytes of a sealed message (the record of a dead letter reads them)
    started: float = field(default_factory=time.monotonic)


@contextlib.contextmanager
def _phase(stage: str, phase: str) -> Iterator[None]:
    """Time a phase of a stage's work (``secondbrain.stage.phase.duration``): which of reading jobs, waiting for the
    model, working, recording and publishing holds a stage back."""
    started = time.monotonic()
    try:
        yield
    finally:
        telemetry.STAGE_PHASE.record(time.monotonic() - started, {"stage": stage, "phase": phase})


class StageRunner:
    """Runs one stage as a faust agent (see the module doc)."""

    def __init__(self, stage: Stage[Any], *, settings: Settings, codec: EventCodec, jobs: JobLedger,
                 names: TopicNames, dead_letters: DeadLetters | None = None, sealer: Sealer | None = None) -> None:
        self.stage = stage
        self.dead_letter_log = dead_letters
        self.step = stage.step
        self._seal_input = self.step.input in SEALED_TOPICS
        self._seal_output = self.step.output in SEALED_TOPICS
        if sealer is None and (self._seal_input or self._seal_output):
            raise ValueError(f"stage {self.step.name} reads or writes the pipeline's internal topics, whose events "
                             "are sealed: set SB_PIPELINE_KEY (the same 32-byte base64 key on every pipeline "
                             "process; `secondbrain up` keeps one in the data directory)")
        self.sealer = sealer
        self.settings = settings
        self.codec = codec
        self.jobs = jobs
        self.names = names
        self.stats = StageStats()
        self._stopping = False
        # The stage's own threads: its blocking work never queues behind (or starves) the HTTP
        # handlers and store calls that share the event loop's default pool.
        self._pool = ThreadPoolExecutor(max_workers=max(1, settings.stage_concurrency),
                                        thread_name_prefix=f"stage-{self.step.name}")
        self.lanes = Lanes(self._work, self._ack, concurrency=settings.stage_concurrency,
                           buffer=settings.stage_buffer, buffer_bytes=settings.stage_buffer_bytes,
                           batch_max=BATCH_MAX if isinstance(stage, BatchingStage | BatchStage) else 1,
                           shared_max=SHARED_BATCH_MAX)
        # Where each partition stands, from what this runner read and finished (for the lag gauge).
        self.positions = PartitionPositions()
        # A batching stage's shared part is a model call that takes every core: two at once (two lanes) only
        # split the cores between them, and with them the other stages' share (1,000 notes: 61-62 % of the
        # embedder alone's speed with two at once, 64 % one at a time; bench/bulk.py).
        self._batch_turn = asyncio.Lock()
        self._lag_task: asyncio.Task[None] | None = None
        self.group = f"{settings.consumer_group_prefix}.{names.prefix}{self.step.name}"
        self.app = self._build_app()

    def _build_app(self) -> faust.App:
        async def agent(stream: Any) -> None:
            # Manual acks: an event is acknowledged only after its outputs are published.  faust
            # commits up to the first unacknowledged offset, so out-of-order completion across lanes
            # never commits past an event that is still in flight.
            manual = stream.noack()
            async for event in manual.events():
                await self._dispatch(event, manual)

        wait = self.settings.kafka_fetch_max_wait_ms
        if self.step.name == stages.FETCH and self.settings.kafka_fetch_idle_ms is None:
            wait = max(wait, URL_FETCH_WAIT_MS)
        return build_app(self.settings, self.group, self.names(self.step.input), f"{self.step.name}-agent", agent,
                         fetch_max_wait_ms=wait)

    async def start(self) -> None:
        """Wait for the stage's models, join the consumer group and start consuming."""
        if isinstance(self.stage, WarmingStage):  # models finish loading while the consumer group forms
            await asyncio.gather(self.app.start(), asyncio.to_thread(self.stage.warm_up))
        else:
            await self.app.start()
        self.lanes.last_activity = time.monotonic()
        self._lag_task = asyncio.create_task(self.positions.watch(lambda: self.app.consumer, self.step.name),
                                             name=f"{self.step.name}-lag")
        telemetry.register_lag_source(self)

    async def stop(self, drain_timeout_s: float = STOP_DRAIN_S) -> None:
        """Stop taking events, give those in flight ``drain_timeout_s`` to finish (outputs published, offsets
        acked), then leave the group: bounded, so a stopping process ends in seconds.

        Events still running after that are cancelled unacknowledged, and their offsets are not committed:
        the next owner of their partition processes them again, as after a crash (ids are deterministic and
        the job fence keeps a replay from undoing anything).  A stage thread busy with one of them is left to
        finish on its own (threads cannot be cancelled); nothing it does after that is published.
        """
        self._stopping = True
        telemetry.unregister_lag_source(self)
        if self._lag_task is not None:
            self._lag_task.cancel()
            # Bounded: on Python 3.11 a cancel landing inside wait_for can be swallowed.
            await asyncio.wait({self._lag_task}, timeout=5)
        if self.lanes.workers:
            _done, pending = await asyncio.wait(set(self.lanes.workers), timeout=drain_timeout_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1)
        # faust would otherwise wait, without end, for the cancelled events to be acknowledged; what was
        # acknowledged is still committed.  (Rebalances keep waiting for events in flight.)
        self.app.conf.stream_wait_empty = False
        try:
            # faust's stop can also wait forever on a consumer that lost its broker; a stopping process must
            # still end (offsets not committed are simply processed again).
            await asyncio.wait_for(self.app.stop(), timeout=drain_timeout_s)
        except TimeoutError:
            log.warning("stage did not stop in time; leaving it", extra={"stage": self.step.name})
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def healthy(self) -> bool:
        """False once the faust app crashed or stopped (a liveness probe should restart the process)."""
        return not (self.app.crashed or self.app.should_stop)

    # ------------------------------------------------------------------ lanes
    async def _dispatch(self, event: Any, stream: Any) -> None:
        """Queue ``event`` in its user's lane (see :mod:`secondbrain.pipeline.lanes`)."""
        if self._stopping:
            return  # not acknowledged: whoever owns the partition next processes it
        m = event.message
        msg = Message(m.topic, m.partition, m.offset, event.key, event.value,
                      dead_letters.headers_dict(event.headers), (event, stream))
        self.positions.read(msg.topic, msg.partition, msg.offset)
        await self.lanes.put(msg)

    async def _work(self, batch: list[Message]) -> None:
        try:
            await self._handle(batch)
        except Exception as exc:
            # _handle publishes or dead-letters every event; getting here is a bug in that path.
            # Record what can be recorded, then move on: an event never acked would hold back
            # every later commit of its partition.
            log.exception("stage runner failed on events", extra={"stage": self.step.name})
            for msg in batch:
                await self._last_resort(msg, exc)

    async def _ack(self, msg: Message) -> None:
        event, stream = msg.raw
        try:
            await stream.ack(event)
        finally:
            self.positions.done(msg.topic, msg.partition, msg.offset)

    # ------------------------------------------------------------------ lag and stalls
    def lag(self) -> list[tuple[str, str, int, int]]:
        """Messages not yet done per assigned partition of the input topic: the end offset minus the
        first offset not done yet (the first in flight, else the next to read, else the earliest the
        broker holds).  Feeds the ``secondbrain.consumer.lag`` gauge."""
        return [(self.step.name, t, p, n) for t, p, n in self.positions.lag(self.names(self.step.input))]

    def stalled(self) -> str | None:
        """A reason when the stage is alive but stopped consuming: for ``stage_stall_s`` it neither
        read nor finished an event, while more messages wait than it holds, and its buffer has room."""
        idle = time.monotonic() - self.lanes.last_activity
        if idle < self.settings.stage_stall_s or self.lanes.full() or self._stopping:
            return None
        try:
            waiting = sum(n for _s, _t, _p, n in self.lag()) - self.lanes.held
        except Exception:  # rebalancing: no verdict this time
            return None
        if waiting <= 0:
            return None
        return (f"stage {self.step.name} consumed nothing for {idle:.0f}s while {waiting} messages wait "
                "on its partitions")

    # ------------------------------------------------------------------ processing
    async def handle(self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None,
                     headers: Any) -> None:
        """Process one message end to end, outside the consumer (tests, replays); never raises."""
        await self._handle([Message(topic, partition, offset, key, value, dead_letters.headers_dict(headers), None)])

    async def _handle(self, batch: list[Message]) -> None:
        """Decode and admit each message, process them (together when the stage batches), then finish each."""
        started = time.monotonic()
        spans = [self._span(msg) for msg in batch]
        try:
            if len(batch) > 1 and isinstance(self.stage, BatchStage):
                await self._handle_batch(batch, spans)
                return
            works = []
            for msg, span in zip(batch, spans, strict=True):
                with trace.use_span(span, end_on_exit=False):
                    work = await self._prepare(msg, span)
                if work is not None:
                    works.append(work)
            prepared: list[Any] | None = None
            if len(works) > 1 and isinstance(self.stage, BatchingStage):
                try:  # the shared part (one model call); any failure: each event alone, with its retries
                    prepared = await self._model_turn(self.stage.prepare, [w.event for w in works])
                except Exception as exc:
                    log.warning("batch preparation failed; events go one by one", extra={
                        "stage": self.step.name, "events": len(works), "error": repr(exc)})
            for i, work in enumerate(works):
                with trace.use_span(work.span, end_on_exit=False):
                    await self._process(work, prepared[i] if prepared is not None else None)
        finally:
            took = (time.monotonic() - started) / max(1, len(batch))  # a batch's time, shared by its events
            for span in spans:
                span.end()
                telemetry.STAGE_DURATION.record(took, {"stage": self.step.name})

    async def _handle_batch(self, batch: list[Message], spans: list[trace.Span]) -> None:
        """A batch through a :class:`BatchStage`: decoded event by event, admitted with one read of their jobs,
        worked on in one call, recorded done in one write, their outputs and statuses published together and
        only then acknowledged (by the lanes).  An event whose work failed in a way a retry may mend goes
        alone, with its retries; one that failed for good is dead-lettered alone."""
        decoded: list[tuple[Message, trace.Span, Any, JobRef, bytes | None]] = []
        for msg, span in zip(batch, spans, strict=True):
            with trace.use_span(span, end_on_exit=False):
                got = await self._decode(msg, span)
            if got is not None:
                decoded.append((msg, span, *got))
        fx = _BatchEffects(self)
        with _phase(self.step.name, "admit"):
            admitted = await core.admit_batch(self.stage, [(e, ref, msg.value or b"", msg.headers)
                                                           for msg, _s, e, ref, _o in decoded], fx)
        works: list[_Work] = []
        for (msg, span, event, ref, opened), verdict in zip(decoded, admitted, strict=True):
            with trace.use_span(span, end_on_exit=False):
                work = await self._admitted(msg, span, event, ref, opened, verdict)
            if work is not None:
                works.append(work)
        if not works:
            return
        fx.works = works
        stage = self.stage
        assert isinstance(stage, BatchStage)
        outcomes = await core.process_batch(stage, [(w.event, w.ref, w.admission) for w in works], fx)
        publish: list[tuple[_Work, core.Publish, list[Output]]] = []
        for i, (work, outcome) in enumerate(zip(works, outcomes, strict=True)):
            with trace.use_span(work.span, end_on_exit=False):
                if outcome is None:  # alone, with its retries
                    await self._process(work, None)
                elif isinstance(outcome, core.Publish):
                    publish.append((work, outcome, fx.encoded_each[i]))
                else:
                    await self._outcome(work, outcome, [])
        if publish:
            # One produce batch: every output and every status sent at once, then one wait for the broker (and one
            # wake-up of the next stage, not one an event).
            with _phase(self.step.name, "publish"):
                await asyncio.gather(self._publish_all([out for _w, _o, encoded in publish for out in encoded]),
                                     *(self._status(w.ref, "succeeded", None, o.attempts) for w, o, _e in publish))
            for work, outcome, _e in publish:
                with trace.use_span(work.span, end_on_exit=False):
                    self._published(work, outcome.outputs)

    def _span(self, msg: Message) -> trace.Span:
        return telemetry.tracer().start_span(
            f"{self.step.name} process", context=telemetry.context_from_headers(msg.headers), kind=SpanKind.CONSUMER,
            attributes={**telemetry.kafka_attributes(msg.topic, msg.partition, msg.offset, operation="process",
                                                     group=self.group), "sb.stage": self.step.name})

    async def _prepare(self, msg: Message, span: trace.Span) -> _Work | None:
        """The opened, decoded, attributed and admitted event, or None once it was dead-lettered or dropped."""
        got = await self._decode(msg, span)
        if got is None:
            return None
        event, ref, opened = got
        with _phase(self.step.name, "admit"):
            admitted = await core.admit(self.stage, event, ref, msg.value or b"", msg.headers,
                                        _Effects(self, ref, span))
        return await self._admitted(msg, span, event, ref, opened, admitted)

    async def _decode(self, msg: Message, span: trace.Span) -> tuple[Any, JobRef, bytes | None] | None:
        """The opened and decoded event and what it is about, or None once it was dead-lettered."""
        user = msg.key.decode("utf-8", "replace") if msg.key else None
        opened: bytes | None = None
        if self._seal_input:
            assert self.sealer is not None
            try:
                opened = self.sealer.open(msg.topic, msg.key, msg.value or b"", msg.headers)
            except SealError as exc:  # not the pipeline's own event: nobody's job is touched
                await self._dead_letter(msg, kind="unauthorized", exc=Unauthorized(str(exc)), attempts=0,
                                        ref=JobRef(None, user))
                return None
        try:
            event = self.codec.decode(opened if opened is not None else msg.value or b"",
                                      expected=self.step.input_type)
            ref = self.stage.job_of(event)
        except (MalformedEvent, Exception) as exc:  # an event that is not one, or cannot be attributed
            await self._dead_letter(msg, kind="malformed", exc=exc, attempts=0, ref=JobRef(None, user), opened=opened)
            return None
        event_telemetry.describe(span, event)
        return event, ref, opened

    async def _admitted(self, msg: Message, span: trace.Span, event: Any, ref: JobRef, opened: bytes | None,
                        admitted: core.Admission | core.Dropped | core.DeadLetter) -> _Work | None:
        """The event on its way, or None once its admission dead-lettered or dropped it."""
        if isinstance(admitted, core.Dropped):
            self._dropped(ref, admitted)
            return None
        if isinstance(admitted, core.DeadLetter):
            await self._dead_letter(msg, kind=admitted.kind, exc=admitted.error, attempts=admitted.attempts,
                                    ref=JobRef(None, ref.user_id), opened=opened)
            return None
        if ref.job_id and ref.user_id:
            span.set_attribute("sb.job.id", ref.job_id)
        telemetry.set_user(ref.user_id, span)
        return _Work(msg, event, ref, span, admitted, opened)

    async def _process(self, work: _Work, prepared: Any) -> None:
        """Run the step core on one event (the stage's work with its retries), then publish, drop or
        dead-letter it as the core decides."""
        fx = _Effects(self, work.ref, work.span, work)
        outcome = await core.process(self.stage, work.event, work.ref, work.admission, fx, prepared)
        await self._outcome(work, outcome, fx.encoded)

    async def _outcome(self, work: _Work, outcome: core.Outcome, encoded: list[Output]) -> None:
        """Publish, drop or dead-letter one event as the core decided."""
        if isinstance(outcome, core.Dropped):
            if outcome.counted:
                self._dropped(work.ref, outcome)
        elif isinstance(outcome, core.DeadLetter):
            await self._dead_letter(work.msg, kind=outcome.kind, exc=outcome.error, attempts=outcome.attempts,
                                    ref=work.ref, opened=work.opened)
        else:
            await self._finish(work, outcome.outputs, encoded, outcome.attempts)

    async def _show_running(self, ref: JobRef, finished: asyncio.Event) -> None:
        """Mark the stage running, but only for work that takes a while (a fast stage writes only once).  Once
        begun the write is never cancelled: the caller waits for it before finishing the stage, so the
        finish always comes after it (and the ledger ignores a progress write on a finished stage anyway)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished.wait(), self.settings.stage_progress_after_s)
            return
        with contextlib.suppress(Exception):
            await self._bookkeeping(self.jobs.stage_started, ref, 1, best_effort=True)

    async def _show_running_all(self, refs: list[JobRef], finished: asyncio.Event) -> None:
        """:meth:`_show_running` for a batch's jobs: marked running only when the batch takes a while."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished.wait(), self.settings.stage_progress_after_s)
            return
        by_user: dict[str, list[str]] = {}
        for ref in refs:
            if ref.user_id and ref.job_id:
                by_user.setdefault(ref.user_id, []).append(ref.job_id)
        for user_id, job_ids in by_user.items():
            try:
                await asyncio.to_thread(self.jobs.stages_started, user_id, self.step.name, job_ids)
            except Exception as exc:  # progress is best effort
                log.warning("job bookkeeping failed", extra={"jobs": len(job_ids), "error": repr(exc)})

    async def _finish(self, work: _Work, outputs: list[Any], encoded: list[Output], attempts: int) -> None:
        """Publish the outputs of a stage recorded done (and the job's status)."""
        # The outputs and the status event go to different topics: one wait for both acknowledgements.
        with _phase(self.step.name, "publish"):
            await asyncio.gather(self._publish_all(encoded), self._status(work.ref, "succeeded", None, attempts))
        self._published(work, outputs)

    def _published(self, work: _Work, outputs: list[Any]) -> None:
        """Count, trace and log an event whose outputs the broker acknowledged."""
        ref, span = work.ref, work.span
        for output in outputs[:1]:
            event_telemetry.describe(span, output, prefix="sb.output")
            if getattr(work.event, "modality", None) is None and isinstance(getattr(output, "modality", None), str):
                span.set_attribute("sb.modality", output.modality)  # what the stage found out
        span.set_attribute("sb.outputs", len(outputs))
        self.stats.processed += 1
        telemetry.STAGE_EVENTS.add(1, {"stage": self.step.name, "outcome": "processed"})
        if self.step.final and outputs:  # the job's content is searchable now
            event_telemetry.record_ingest_latency(work.msg.headers, work.event)
        log.info("stage done", extra={"stage": self.step.name, "job_id": ref.job_id, "outputs": len(outputs),
                                      "ms": round((time.monotonic() - work.started) * 1000, 1)})

    def _dropped(self, ref: JobRef, dropped: core.Dropped) -> None:
        self.stats.dropped += 1
        telemetry.STAGE_EVENTS.add(1, {"stage": self.step.name, "outcome": "dropped"})
        # Say which: an ended job's copy (a replay, a duplicate event) is routine, a deletion is the user's doing.
        log.info(_DROPPED[dropped.why], extra={"stage": self.step.name, "job_id": ref.job_id,
                                                "found_at": dropped.found_at})

    def _encode_all(self, outputs: list[Any], submitted_at: str | None) -> list[Output]:
        extra = [(telemetry.SUBMITTED_AT_HEADER, submitted_at.encode())] if submitted_at else []
        topic = self.names(self.step.output)
        encoded: list[Output] = []
        for out in outputs:
            key, value = str(out.user_id).encode(), self.codec.encode(out)
            headers = [*self.codec.headers(out), *extra]
            if self._seal_output:
                assert self.sealer is not None
                value, mark = self.sealer.seal(topic, key, value)
                headers.append(mark)
            encoded.append((topic, key, value, headers))
        return encoded

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the stage's threads, carrying context variables (trace context) along."""
        ctx = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(ctx.run, fn, *args))

    async def _model_turn(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn`` on the stage's threads in the stage's one-model-call-at-a-time turn (see ``__init__``), the wait
        for the turn and the work timed apart."""
        with _phase(self.step.name, "wait"):
            await self._batch_turn.acquire()
        try:
            with _phase(self.step.name, "work"):
                return await self._in_pool(fn, *args)
        finally:
            self._batch_turn.release()

    # ------------------------------------------------------------------ publishing

    async def _publish_all(self, outputs: list[Output]) -> None:
        """Send every output at once (the producer batches them) and wait for all the acknowledgements."""
        await asyncio.gather(*(self._publish_one(*output) for output in outputs))
        for topic in {output[0] for output in outputs}:
            WAKEUPS.published(topic)  # the next stage, when it runs in this process and waits for records

    async def _publish_one(self, topic: str, key: bytes, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        # A producer span per output; the next stage continues the trace from it.  Not when the event's own span
        # is not recorded (tracing off, or the trace not sampled): the producer span would not be either, and
        # making one was most of a send's cost on the event loop; the trace context still travels.
        if not trace.get_current_span().is_recording():
            await self._send(topic, key, value, telemetry.with_trace_headers(headers))
            return
        with telemetry.tracer().start_as_current_span(
                f"{topic} publish", kind=SpanKind.PRODUCER,
                attributes=telemetry.kafka_attributes(topic, operation="send")):
            await self._send(topic, key, value, telemetry.with_trace_headers(headers))

    async def _send(self, topic: str, key: bytes | None, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        """Publish and wait for the broker, retrying while it may come back (bounded: a broker gone for
        longer fails the event unacknowledged, and the process's liveness says so)."""
        try:  # once without the retry machinery: building it cost more than the send (6 % of a busy import)
            await self.app.producer.send_and_wait(topic, key, value, None, None, headers)
            return
        except Exception as exc:
            if not retry.kafka_retryable(exc):
                raise
        async for attempt in retry.publishing(self.settings):
            with attempt:
                await self.app.producer.send_and_wait(topic, key, value, None, None, headers)

    async def _dead_letter(self, msg: Message, *, kind: str, exc: BaseException, attempts: int,
                           ref: JobRef, opened: bytes | None = None) -> None:
        reason = dead_letters.reason(exc)
        if self.dead_letter_log is not None:  # kept in the database too, for producers to read (GET /v1/deadletters)
            kept = await self._bookkeeping_free(self.dead_letter_log.record_dead_letter, dead_letters.record(
                self.codec, msg, stage=self.step.name, kind=kind, exc=exc, job_id=ref.job_id, user_id=ref.user_id,
                opened=opened))
            if kept is False:  # the user was erased: nothing is kept for them, not even a letter
                self._dropped(ref, core.Dropped("dead letter", "gone"))
                return
        self.stats.failed += 1
        self.stats.dead_lettered += 1
        telemetry.STAGE_EVENTS.add(1, {"stage": self.step.name, "outcome": "failed"})
        telemetry.STAGE_EVENTS.add(1, {"stage": self.step.name, "outcome": "dead_lettered"})
        span = trace.get_current_span()
        telemetry.record_exception(span, exc)
        span.set_attribute("sb.error.kind", kind)
        encoded, headers = dead_letters.letter(self.codec, msg, stage=self.step.name, kind=kind, exc=exc,
                                               attempts=attempts, job_id=ref.job_id, user_id=ref.user_id)
        await self._send(self.names(topic_names.DEAD_LETTER), msg.key, encoded, telemetry.with_trace_headers(headers))
        log.error("dead-lettered", extra={"stage": self.step.name, "job_id": ref.job_id, "kind": kind,
                                          "error": reason, "topic": msg.topic, "offset": msg.offset})
        if ref.job_id:
            # Whether trying it again may help (retries ran out, or the server's set-up was missing): the
            # web page offers Retry only then.
            await self._bookkeeping(self.jobs.job_failed, ref, f"{self.step.name} failed: {reason}", attempts or None,
                                    retryable=retry_may_help(exc))
            await self._status(ref, "failed", reason, attempts)

    async def _last_resort(self, msg: Message, exc: BaseException) -> None:
        """Dead-letter a bare record of the event (no payload) when the normal path itself failed."""
        user = msg.key.decode("utf-8", "replace") if msg.key else None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._dead_letter(dataclasses.replace(msg, value=b""), kind="permanent", exc=exc,
                                                     attempts=0, ref=JobRef(None, user)), 30)

    async def _status(self, ref: JobRef, status: str, detail: str | None, attempt: int) -> None:
        """Publish a job status change for other apps (the job ledger is the source of truth)."""
        if not ref.job_id or not ref.user_id:
            return
        ev = JobStatusChanged(
            event_id=ids.event_id(ref.job_id, self.step.name, status, str(attempt)), job_id=ref.job_id,
            user_id=ref.user_id, stage=self.step.name, status=status, detail=detail, attempt=attempt,
            occurred_at=datetime.now(UTC),
        )
        await self._send(self.names(topic_names.JOBS_STATUS), ref.user_id.encode(), self.codec.encode(ev),
                         self.codec.headers(ev))

    async def _bookkeeping_free(self, fn: Callable[..., T], *args: Any) -> T | None:
        """A write not tied to a job, retried while the store is down; a failure is logged, never raised
        (``None``: the letter still goes to the topic)."""
        try:
            async for attempt in retry.bookkeeping(self.settings, "dead letter record"):
                with attempt:
                    return await asyncio.to_thread(fn, *args)
        except Exception as exc:
            log.warning("could not keep the dead letter in the database", extra={"error": repr(exc)})
        return None

    async def _bookkeeping(self, fn: Callable[..., T], ref: JobRef, *args: Any, best_effort: bool = False,
                           **kwargs: Any) -> T | Literal["done"]:
        """A job transition for the event's job, scoped by its user; retried while the store is down.
        ``best_effort``: a failure is logged, never raised (a retry must not turn into a crash)."""
        if ref.job_id is None or ref.user_id is None:
            return "done"
        call = functools.partial(fn, ref.user_id, ref.job_id, self.step.name, *args, **kwargs)
        try:
            async for attempt in retry.bookkeeping(self.settings, "job bookkeeping"):
                with attempt:
                    return await asyncio.to_thread(call)
        except Exception as exc:
            if not best_effort:
                raise
            log.warning("job bookkeeping failed", extra={"job_id": ref.job_id, "error": repr(exc)})
        return "done"


class _Effects:
    """The step core's effects for one event of a :class:`StageRunner`: the stage's code on its threads, its
    admission and work retried (:mod:`secondbrain.pipeline.retry`), job state read and written with the
    bookkeeping's patience, every retry recorded on the job."""

    def __init__(self, runner: StageRunner, ref: JobRef, span: trace.Span, work: _Work | None = None) -> None:
        self.runner = runner
        self.ref = ref
        self.span = span
        self.work = work
        self.encoded: list[Output] = []

    async def admit(self, check: Callable[..., Any], *args: Any) -> Any:
        async for attempt in retry.work(self.runner.settings):
            with attempt:
                return await self.runner._in_pool(check, *args)
        raise AssertionError("unreachable")  # pragma: no cover - the retry loop returns or raises

    async def job_state(self, ref: JobRef, *, patient: bool) -> JobState:
        assert ref.job_id is not None and ref.user_id is not None
        if not patient:
            return await asyncio.to_thread(self.runner.jobs.job_state, ref.user_id, ref.job_id)
        async for attempt in retry.bookkeeping(self.runner.settings, "job state"):
            with attempt:
                return await asyncio.to_thread(self.runner.jobs.job_state, ref.user_id, ref.job_id)
        raise AssertionError("unreachable")  # pragma: no cover - the retry loop returns or raises

    async def attempts(self, work: Callable[[int], list[Any]]) -> tuple[list[Any] | Exception, int]:
        runner, ref, span = self.runner, self.ref, self.span
        assert self.work is not None
        submitted_at = event_telemetry.submitted_at(self.work.msg.headers, self.work.event)
        attempts = 0
        finished = asyncio.Event()
        progress = asyncio.create_task(runner._show_running(ref, finished))

        async def on_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            assert exc is not None
            runner.stats.retried += 1
            telemetry.STAGE_EVENTS.add(1, {"stage": runner.step.name, "outcome": "retried"})
            span.add_event("retry", {"sb.attempt": state.attempt_number, "error.type": type(exc).__name__})
            log.warning("stage failed, retrying", extra={"stage": runner.step.name, "job_id": ref.job_id,
                                                        "attempt": state.attempt_number, "error": repr(exc)})
            why = dead_letters.reason(exc)
            await runner._bookkeeping(runner.jobs.stage_retrying, ref, state.attempt_number, why, best_effort=True)
            await runner._status(ref, "retrying", why, state.attempt_number)

        try:
            try:
                async for attempt in retry.work(runner.settings, before_sleep=on_retry):
                    with attempt:
                        attempts = attempt.retry_state.attempt_number
                        span.set_attribute("sb.attempt", attempts)
                        with _phase(runner.step.name, "work"):
                            outputs = await runner._in_pool(work, attempts)
                        # Encode inside the attempt: an output the codec refuses (invalid, too large) is a
                        # permanent failure of this event, not a crash of the lane.
                        self.encoded = runner._encode_all(outputs, submitted_at)
            finally:
                # The progress write, if it started, lands before anything that finishes the stage.
                finished.set()
                await progress
        except Exception as exc:
            return exc, attempts
        return outputs, attempts

    async def finish(self, ref: JobRef, attempts: int) -> StageOutcome:
        with _phase(self.runner.step.name, "record"):
            return await self.runner._bookkeeping(self.runner.jobs.finish_stage, ref, document_id=ref.document_id,
                                                  attempt=attempts)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.runner._in_pool(fn, *args)


class _BatchEffects(_Effects):
    """The step core's effects for a batch of a :class:`StageRunner`: the jobs' states read and their stages
    recorded done with one statement per user (retried while the store is away), the stage's batch work in one
    call on its threads (one try: an event that fails in a way a retry may mend is then taken alone)."""

    def __init__(self, runner: StageRunner) -> None:
        super().__init__(runner, JobRef(None, None), trace.get_current_span())
        self.works: list[_Work] = []
        self.encoded_each: list[list[Output]] = []  # each work's encoded outputs, in order

    async def job_states(self, refs: Sequence[JobRef]) -> list[JobState]:
        jobs = self.runner.jobs
        by_user: dict[str, list[str]] = {}
        for ref in refs:
            assert ref.user_id is not None and ref.job_id is not None
            by_user.setdefault(ref.user_id, []).append(ref.job_id)
        states: dict[tuple[str, str], JobState] = {}
        for user_id, job_ids in by_user.items():
            async for attempt in retry.bookkeeping(self.runner.settings, "job state"):
                with attempt:
                    found = await asyncio.to_thread(jobs.job_states, user_id, job_ids)
            states.update({(user_id, job): state for job, state in found.items()})
        return [states[(str(ref.user_id), str(ref.job_id))] for ref in refs]

    async def batch(self, work: Callable[[], list[list[Any] | Exception]]) -> list[list[Any] | Exception] | Exception:
        runner = self.runner
        refs = [w.ref for w in self.works]
        finished = asyncio.Event()
        progress = asyncio.create_task(runner._show_running_all(refs, finished))
        try:
            if isinstance(runner.stage, BatchingStage):  # a model call: one at a time (see __init__)
                results = await runner._model_turn(work)
            else:
                with _phase(runner.step.name, "work"):
                    results = await runner._in_pool(work)
        except Exception as exc:
            log.warning("batch failed; its events go one by one", extra={
                "stage": runner.step.name, "events": len(self.works), "error": repr(exc)})
            return exc
        finally:
            finished.set()
            await progress
        out: list[list[Any] | Exception] = []
        self.encoded_each = []
        for w, result in zip(self.works, results, strict=True):
            encoded: list[Output] = []
            if not isinstance(result, Exception):
                try:  # an output the codec refuses (invalid, too large) fails its event alone
                    encoded = runner._encode_all(result, event_telemetry.submitted_at(w.msg.headers, w.event))
                except Exception as exc:
                    result = exc
            out.append(result)
            self.encoded_each.append(encoded)
        return out

    async def finish_many(self, refs: Sequence[JobRef]) -> list[StageOutcome]:
        jobs, stage = self.runner.jobs, self.runner.step.name
        by_user: dict[str, list[tuple[str, str | None, int]]] = {}
        for ref in refs:
            assert ref.user_id is not None and ref.job_id is not None
            by_user.setdefault(ref.user_id, []).append((ref.job_id, ref.document_id, 1))
        outcomes: dict[tuple[str, str], StageOutcome] = {}
        with _phase(stage, "record"):
            for user_id, items in by_user.items():
                async for attempt in retry.bookkeeping(self.runner.settings, "job bookkeeping"):
                    with attempt:
                        found = await asyncio.to_thread(jobs.finish_stages, user_id, stage, items)
                outcomes.update({(user_id, job): outcome for job, outcome in found.items()})
        return [outcomes[(str(ref.user_id), str(ref.job_id))] for ref in refs]
