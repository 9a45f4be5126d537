"""StageRunner against a real broker (Tansu) and a real Postgres.

A scripted test stage stands in for the extractor: its behaviour for an event is chosen by
the event's title (``"<script>:<unique suffix>"``).  Every assertion polls with a deadline;
"exactly once" is checked behind a barrier (a later event on the same partition whose output
must come after any duplicate), never by sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import os
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import psycopg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import SecretStr

from secondbrain import ids, topic_names
from secondbrain.errors import PermanentError, RetryableError
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import ArtifactSubmitted, DeadLetter, DocumentExtracted, JobStatusChanged, Segment
from secondbrain.events.sealing import Sealer, new_key
from secondbrain.infra.tansu import TansuBroker
from secondbrain.pipeline import topology
from secondbrain.pipeline.runner import StageRunner
from secondbrain.pipeline.stage import JobRef
from secondbrain.pipeline.topics import ensure_topics
from secondbrain.ports import ArtifactRecord
from secondbrain.settings import Settings
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.topic_names import TopicNames

PARTITIONS = 2
MAX_ATTEMPTS = 3
MODULE_PREFIX = f"trun{uuid.uuid4().hex[:8]}."
CODEC = EventCodec()
SEALER = Sealer.from_text(new_key())  # the pipeline key: the runner seals what it writes to documents.extracted


def opened(m: Any) -> bytes:
    """The Avro bytes of a sealed message read from an internal topic."""
    return SEALER.open(m.topic, m.key, m.value, {k: v.decode() for k, v in m.headers})


# --------------------------------------------------------------------------- the scripted stage


class ScriptedStage:
    """An extract stage whose ``process`` does what the event's title says.

    ``ok`` emits one DocumentExtracted; ``retry2`` raises RetryableError twice, then succeeds;
    ``retryforever`` always raises RetryableError; ``permanent`` raises PermanentError; ``bug``
    raises ValueError; ``badout`` returns an output that cannot be encoded; ``gate`` blocks until
    :attr:`gate` is set, then succeeds; ``slow`` takes 30-70 ms.
    """

    step: ClassVar[topology.Step] = topology.EXTRACT

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.gate = threading.Event()
        self._lock = threading.Lock()

    def job_of(self, event: ArtifactSubmitted) -> JobRef:
        return JobRef(event.job_id, event.user_id, event.source_id)

    def process(self, event: ArtifactSubmitted) -> list[DocumentExtracted]:
        assert event.job_id is not None and event.title is not None
        with self._lock:
            self.calls[event.job_id] += 1
            n = self.calls[event.job_id]
        script = event.title.split(":", 1)[0]
        if script == "retry2" and n < 3:
            raise RetryableError(f"store busy (call {n})")
        if script == "retryforever":
            raise RetryableError("the object store did not answer")
        if script == "permanent":
            raise PermanentError("the PDF is encrypted and cannot be read")
        if script == "bug":
            raise ValueError("segment offsets went negative")
        if script == "badout":  # a stage bug: an output the codec refuses to encode
            return [dataclasses.replace(_document(event), text_length=1)]
        if script == "gate" and not self.gate.wait(30):
            raise RuntimeError("the test never opened the gate")
        if script == "slow":  # about as long as the progress delay the race test sets: the two interleave
            time.sleep(random.uniform(0.03, 0.07))
        return [_document(event)]


def _document(ev: ArtifactSubmitted) -> DocumentExtracted:
    assert ev.job_id and ev.artifact_id and ev.source_id and ev.title and ev.content is not None
    text = ev.content.decode()
    now = datetime.now(UTC)
    return DocumentExtracted(
        event_id=ids.event_id(ev.job_id, "extract"), job_id=ev.job_id, user_id=ev.user_id,
        artifact_id=ev.artifact_id, source_id=ev.source_id, document_id=ids.document_id(ev.artifact_id),
        title=ev.title, modality="text", content_type=ev.content_type, captured_at=ev.submitted_at,
        captured_at_source="ingested", ingested_at=now, text_length=len(text),
        segments=[Segment(index=0, kind="paragraph", text=text, char_start=0, char_end=len(text))],
    )


# --------------------------------------------------------------------------- helpers


async def eventually(probe: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    """Poll ``probe`` until it returns a truthy value.  A plain function runs on a thread (it may
    query Postgres); a coroutine function is awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe() if inspect.iscoroutinefunction(probe) else await asyncio.to_thread(probe)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.05)


class Collector:
    """Reads every partition of some topics from offset 0 (no consumer group) into lists."""

    def __init__(self, bootstrap: str, physical_topics: list[str]) -> None:
        self.records: dict[str, list[Any]] = defaultdict(list)
        self._consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                          auto_offset_reset="earliest")
        self._topics = physical_topics
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._consumer.start()
        tps = [TopicPartition(t, p) for t in self._topics for p in range(PARTITIONS)]
        self._consumer.assign(tps)
        for tp in tps:
            self._consumer.seek(tp, 0)
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            batch = await self._consumer.getmany(timeout_ms=200)
            for tp, msgs in batch.items():
                self.records[tp.topic].extend(msgs)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._consumer.stop()


@dataclass
class Env:
    """One topic prefix (so one consumer group) with its collector and producer."""

    broker: TansuBroker
    store: PostgresMetadataStore
    prefix: str
    settings: Settings
    names: TopicNames
    collector: Collector
    producer: AIOKafkaProducer
    stage: ScriptedStage = field(default_factory=ScriptedStage)
    runners: list[StageRunner] = field(default_factory=list)

    def new_runner(self) -> StageRunner:
        runner = StageRunner(self.stage, settings=self.settings, codec=CODEC, jobs=self.store.jobs,
                             names=self.names, sealer=SEALER)
        self.runners.append(runner)
        return runner

    def t(self, logical: str) -> str:
        return self.names(logical)

    def job(self, script: str, user: str = "alice") -> ArtifactSubmitted:
        """Create the user, the artifact and a job in Postgres; return the event to publish."""
        suffix = uuid.uuid4().hex[:10]
        content = f"{script} note {suffix}: the boiler code is B-{suffix}.".encode()
        sha = ids.sha256_hex(content)
        artifact_id = ids.artifact_id(user, sha)
        uri = f"test:runner/{suffix}"
        source_id = ids.source_id(user, uri)
        event_id = str(uuid.uuid4())
        job_id = ids.job_id(user, f"event:{event_id}")
        now = datetime.now(UTC)
        title = f"{script}:{suffix}"
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=user, source_id=source_id, source_uri=uri,
            object_key=f"users/{user}/artifacts/{artifact_id}", content_type="text/plain",
            size_bytes=len(content), sha256=sha, filename=None, title=title, captured_at=None,
            submitted_at=now, producer="test:runner",
        )
        assert self.store.intake.submit(record, job_id, []).created
        return ArtifactSubmitted(
            event_id=event_id, job_id=job_id, user_id=user, source_uri=uri, source_id=source_id,
            artifact_id=artifact_id, content_type="text/plain", filename=None, title=title, content=content,
            size_bytes=len(content), sha256=sha, submitted_at=now, producer="test:runner",
        )

    async def send(self, ev: ArtifactSubmitted) -> Any:
        return await self.producer.send_and_wait(self.t(topic_names.ARTIFACTS_SUBMITTED), CODEC.encode(ev),
                                                 key=ev.user_id.encode(), headers=CODEC.headers(ev))

    # ---- what came out
    def outputs(self, job_id: str) -> list[DocumentExtracted]:
        out = [CODEC.decode(opened(m), expected=DocumentExtracted)
               for m in self.collector.records[self.t(topic_names.DOCUMENTS_EXTRACTED)]]
        return [d for d in out if d.job_id == job_id]

    def letters(self, predicate: Callable[[DeadLetter], bool]) -> list[tuple[DeadLetter, dict[str, str]]]:
        out = []
        for m in self.collector.records[self.t(topic_names.DEAD_LETTER)]:
            letter = CODEC.decode(m.value, expected=DeadLetter)
            if predicate(letter):
                out.append((letter, {k: v.decode() for k, v in m.headers}))
        return out

    def statuses(self, job_id: str) -> list[JobStatusChanged]:
        out = [CODEC.decode(m.value, expected=JobStatusChanged)
               for m in self.collector.records[self.t(topic_names.JOBS_STATUS)]]
        return [s for s in out if s.job_id == job_id]

    def stage_view(self, ev: ArtifactSubmitted) -> Any:
        assert ev.job_id
        job = self.store.jobs.get_job(ev.user_id, ev.job_id)
        assert job is not None
        return job, next(s for s in job.stages if s.stage == "extract")

    async def barrier(self, user: str = "alice") -> str:
        """Push one more event for ``user`` through and wait for its output: everything the runner
        emitted for earlier events of that user is on the output partition before it.  Its job id."""
        ev = self.job("ok", user)
        await self.send(ev)
        assert ev.job_id
        await eventually(lambda: self.outputs(ev.job_id or ""), "the barrier event's output")
        return ev.job_id


@contextlib.asynccontextmanager
async def open_env(broker: TansuBroker, store: PostgresMetadataStore, dsn: str, prefix: str) -> AsyncIterator[Env]:
    settings = Settings(
        topic_prefix=prefix, kafka_bootstrap=broker.bootstrap, postgres_dsn=SecretStr(dsn), partitions=PARTITIONS,
        max_attempts=MAX_ATTEMPTS, retry_backoff_s=0.05, retry_backoff_max_s=0.2, default_user="local",
        kafka_session_timeout_ms=3000, kafka_heartbeat_interval_ms=750,
        kafka_fetch_max_wait_ms=100,  # unpaced: the test's own producer is another client, as in distributed mode
    )
    names = TopicNames(prefix)
    await ensure_topics(broker.bootstrap, names, partitions=PARTITIONS, replication=1)
    collector = Collector(broker.bootstrap, [names(topic_names.DOCUMENTS_EXTRACTED), names(topic_names.DEAD_LETTER),
                                             names(topic_names.JOBS_STATUS)])
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", enable_idempotence=False)
    await collector.start()
    await producer.start()
    env = Env(broker, store, prefix, settings, names, collector, producer)
    try:
        yield env
    finally:
        env.stage.gate.set()  # never leave a stage blocked (a failed test would stall stop())
        for runner in env.runners:
            with contextlib.suppress(Exception):
                await runner.stop(drain_timeout_s=15)
        # Bounded: a client stuck on a broker that went away must not hang the whole test run.
        for stop in (producer.stop, collector.stop):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(stop(), timeout=30)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def dsn(dsn: str) -> str:
    """The module's fresh database, migrated before any store is opened on it."""
    with PostgresMetadataStore(dsn) as s:
        s.migrate()
    return dsn


@pytest.fixture(scope="module")
def store(dsn: str) -> Iterator[PostgresMetadataStore]:
    with PostgresMetadataStore(dsn) as s:
        yield s


@pytest.fixture(scope="module")
async def env(broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> AsyncIterator[Env]:
    async with open_env(broker, store, dsn, MODULE_PREFIX) as e:
        await e.new_runner().start()
        yield e


# --------------------------------------------------------------------------- tests


async def test_retryable_error_is_retried_then_succeeds_once(env: Env) -> None:
    ev = env.job("retry2")
    assert ev.job_id
    job_id = ev.job_id
    await env.send(ev)

    await eventually(lambda: env.stage_view(ev)[1].status == "succeeded", "the extract stage to succeed")
    job, stage = env.stage_view(ev)
    assert stage.attempts == 3
    assert job.status == "running"  # chunk and embed are still pending
    assert env.stage.calls[job_id] == 3

    await env.barrier()
    outputs = env.outputs(job_id)
    assert len(outputs) == 1
    assert outputs[0].event_id == ids.event_id(job_id, "extract")

    events = [(e["stage"], e["status"], e["attempt"]) for e in env.store.jobs.job_events(ev.user_id, job_id)]
    # A stage shows as running only when its work takes a while; retries and the end are always recorded.
    assert [e for e in events if e[1] != "running"] == [("gateway", "queued", None), ("extract", "retrying", 1),
                                                        ("extract", "retrying", 2), ("extract", "succeeded", 3)]
    retry_details = [e["detail"] for e in env.store.jobs.job_events(ev.user_id, job_id) if e["status"] == "retrying"]
    assert retry_details == ["RetryableError: store busy (call 1)", "RetryableError: store busy (call 2)"]

    statuses = await eventually(lambda: (s := env.statuses(job_id)) and len(s) >= 3 and s, "jobs.status events")
    assert [(s.status, s.attempt) for s in statuses] == [("retrying", 1), ("retrying", 2), ("succeeded", 3)]
    assert {s.stage for s in statuses} == {"extract"}
    assert statuses[0].detail == "RetryableError: store busy (call 1)"
    assert env.runners[0].stats.retried >= 2


async def test_exhausted_retries_dead_letter_and_do_not_block_the_partition(env: Env) -> None:
    bad = env.job("retryforever", user="bob")
    good = env.job("ok", user="bob")
    assert bad.job_id and good.job_id
    bad_meta = await env.send(bad)
    good_meta = await env.send(good)
    assert bad_meta.partition == good_meta.partition and bad_meta.offset < good_meta.offset

    # the good event behind the failing one on the same partition still gets through
    await eventually(lambda: env.outputs(good.job_id or ""), "the good event's output")
    letters = await eventually(lambda: env.letters(lambda d: d.job_id == bad.job_id), "the dead letter")
    assert len(letters) == 1
    letter, headers = letters[0]
    assert headers["sb-error-kind"] == "retries_exhausted"
    assert headers["sb-attempts"] == str(MAX_ATTEMPTS)
    assert headers["sb-stage"] == "extract"
    assert headers["sb-error-type"] == "RetryableError"
    assert headers["sb-original-topic"] == env.t(topic_names.ARTIFACTS_SUBMITTED)
    assert headers["sb-original-partition"] == str(bad_meta.partition)
    assert headers["sb-original-offset"] == str(bad_meta.offset)
    assert headers["sb-schema"] == "dead_letter"
    assert letter.original_value == CODEC.encode(bad)
    assert letter.original_key == b"bob"
    assert letter.original_headers["sb-schema"] == "artifact_submitted"
    assert (letter.error_kind, letter.attempts, letter.stage) == ("retries_exhausted", MAX_ATTEMPTS, "extract")
    assert (letter.original_partition, letter.original_offset) == (bad_meta.partition, bad_meta.offset)
    assert letter.user_id == "bob"
    assert env.stage.calls[bad.job_id] == MAX_ATTEMPTS

    job, stage = await eventually(lambda: (v := env.stage_view(bad)) and v[0].status == "failed" and v,
                                  "the failed job")
    assert job.error == "extract failed: RetryableError: the object store did not answer"
    assert (stage.status, stage.attempts) == ("failed", MAX_ATTEMPTS)
    assert [s.status for s in job.stages if s.stage != "extract"] == ["skipped", "skipped"]
    statuses = await eventually(lambda: [s for s in env.statuses(bad.job_id or "") if s.status == "failed"],
                                "the failed status event")
    assert statuses[0].detail == "RetryableError: the object store did not answer"
    await eventually(lambda: env.stage_view(good)[1].status == "succeeded", "the good job's stage")


@pytest.mark.parametrize(("script", "error_type", "reason"), [
    ("permanent", "PermanentError", "the PDF is encrypted and cannot be read"),
    ("bug", "ValueError", "ValueError: segment offsets went negative"),
])
async def test_permanent_errors_and_bugs_dead_letter_after_one_attempt(env: Env, script: str, error_type: str,
                                                                       reason: str) -> None:
    ev = env.job(script, user="carol")
    assert ev.job_id
    meta = await env.send(ev)
    letters = await eventually(lambda: env.letters(lambda d: d.job_id == ev.job_id), "the dead letter")
    letter, headers = letters[0]
    assert (headers["sb-error-kind"], headers["sb-attempts"], headers["sb-error-type"]) == (
        "permanent", "1", error_type)
    assert headers["sb-error-message"] == reason
    assert headers["sb-original-offset"] == str(meta.offset)
    assert (letter.error_kind, letter.attempts, letter.error_message) == ("permanent", 1, reason)
    assert letter.original_value == CODEC.encode(ev)

    job, stage = await eventually(lambda: (v := env.stage_view(ev)) and v[0].status == "failed" and v,
                                  "the failed job")
    assert job.error == f"extract failed: {reason}"
    assert (stage.status, stage.attempts, stage.detail) == ("failed", 1, f"extract failed: {reason}")
    assert env.stage.calls[ev.job_id] == 1
    events = [(e["stage"], e["status"]) for e in env.store.jobs.job_events(ev.user_id, ev.job_id)]
    assert ("extract", "retrying") not in events and events[-1] == ("extract", "failed")
    await env.barrier("carol")
    assert len(env.letters(lambda d: d.job_id == ev.job_id)) == 1


async def test_an_output_the_codec_refuses_is_dead_lettered_not_dropped(env: Env) -> None:
    # Regression: encoding used to happen outside the error handling, so the agent crashed,
    # faust restarted it past the event and the job stayed "running" with no dead letter.
    bad = env.job("badout", user="dave")
    assert bad.job_id
    await env.send(bad)
    letters = await eventually(lambda: env.letters(lambda d: d.job_id == bad.job_id), "the dead letter")
    letter, headers = letters[0]
    assert (headers["sb-error-kind"], headers["sb-error-type"], letter.attempts) == ("permanent", "ValueError", 1)
    assert "outside the text of length 1" in letter.error_message
    job, stage = await eventually(lambda: (v := env.stage_view(bad)) and v[0].status == "failed" and v,
                                  "the failed job")
    assert (stage.status, stage.attempts) == ("failed", 1)
    assert job.error is not None and job.error.startswith("extract failed: ValueError: ")
    await env.barrier("dave")
    assert env.outputs(bad.job_id) == []


async def test_malformed_message_is_dead_lettered_without_touching_jobs(env: Env, dsn: str) -> None:
    def job_event_count() -> int:
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM job_events").fetchone()
            assert row is not None
            return int(row[0])

    ghost = f"ghost-{uuid.uuid4().hex[:6]}"
    await env.barrier()  # earlier tests' work is finished, so the count below is stable
    before = job_event_count()
    garbage = os.urandom(64)
    meta = await env.producer.send_and_wait(env.t(topic_names.ARTIFACTS_SUBMITTED), garbage, key=ghost.encode())
    letters = await eventually(lambda: env.letters(lambda d: d.original_value == garbage), "the dead letter")
    letter, headers = letters[0]
    assert (headers["sb-error-kind"], headers["sb-attempts"]) == ("malformed", "0")
    assert headers["sb-error-type"] == "MalformedEvent"
    assert headers["sb-original-offset"] == str(meta.offset)
    assert (letter.error_kind, letter.job_id, letter.user_id, letter.original_key) == (
        "malformed", None, ghost, ghost.encode())
    barrier = await env.barrier()
    assert len(env.letters(lambda d: d.original_value == garbage)) == 1
    # the barrier's own job added its events; the malformed message added none and no user
    assert job_event_count() - before == len(env.store.jobs.job_events("alice", barrier))
    assert not env.store.users.user_exists(ghost)


async def test_offsets_are_committed_only_after_outputs_and_restart_does_not_replay(
        broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> None:
    async with open_env(broker, store, dsn, f"{MODULE_PREFIX}r.") as e:
        group = f"{e.settings.consumer_group_prefix}.{e.prefix}extract"
        # a group member that never subscribes: it only reads the group's committed offsets
        reader = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
        await reader.start()
        try:
            async def committed(partition: int) -> int:
                offset = await reader.committed(TopicPartition(e.t(topic_names.ARTIFACTS_SUBMITTED), partition))
                return -1 if offset is None else offset

            runner = e.new_runner()
            await runner.start()
            commits = 0
            faust_commit = runner.app.consumer.commit

            async def counting_commit(*args: Any, **kwargs: Any) -> bool:
                nonlocal commits
                commits += 1
                return bool(await faust_commit(*args, **kwargs))

            runner.app.consumer.commit = counting_commit  # type: ignore[method-assign]
            first = e.job("gate")
            assert first.job_id
            m1 = await e.send(first)
            # while the stage is busy nothing is published and, even after periodic commits ran,
            # the offset is not committed
            await eventually(lambda: e.stage.calls[first.job_id or ""] == 1, "the stage to start")
            seen = commits
            await eventually(lambda: commits >= seen + 2, "two periodic offset commits")
            assert await committed(m1.partition) <= m1.offset
            assert e.outputs(first.job_id) == []
            e.stage.gate.set()
            await eventually(lambda: e.outputs(first.job_id or ""), "the first output")
            await eventually(lambda: e.stage_view(first)[1].status == "succeeded", "the stage to succeed")
            async def first_committed() -> bool:
                return await committed(m1.partition) > m1.offset

            await eventually(first_committed, "the offset commit")

            await e.runners[0].stop()
            await e.new_runner().start()  # same consumer group
            await e.barrier()
            assert len(e.outputs(first.job_id)) == 1
            assert e.stage.calls[first.job_id] == 1
        finally:
            await reader.stop()


async def test_events_that_arrive_while_the_consumer_is_paused_are_read_once_it_resumes(
        broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> None:
    """A paused consumer (what a rebalance does; a stalled stage looks the same) drops what its fetch in
    flight brings back, and faust then seeks to the committed offsets, which does nothing before a
    partition's first commit.  Paused just after an event was handed to the stage (faust's next fetch is
    in flight then, and in this new group nothing is committed yet), the events sent meanwhile are still
    each processed once after resuming."""
    async with open_env(broker, store, dsn, f"{MODULE_PREFIX}p.") as e:
        runner = e.new_runner()
        await runner.start()
        consumer = runner.app.consumer
        users = ["alice", "bob", "carol", "dave"]
        assert {_partition_of(u, PARTITIONS) for u in users} == set(range(PARTITIONS))
        sent: list[ArtifactSubmitted] = []
        waiting: list[ArtifactSubmitted] = []
        fetched_while_paused = False
        for _round in range(5):  # a try whose fetch in flight came back empty (faust polls 1 s) proves nothing
            trigger = e.job("ok")
            await e.send(trigger)
            await eventually(lambda: e.stage.calls[trigger.job_id or ""] == 1, "the event handed to the stage")  # noqa: B023
            ended, rewound = consumer.ended_paused, consumer.rewound
            consumer.stop_flow()
            waiting = [e.job("ok", user) for user in users]
            for ev in waiting:
                await e.send(ev)
            sent += [trigger, *waiting]
            await eventually(lambda: consumer.ended_paused > ended, "the fetch in flight to end")  # noqa: B023
            fetched_while_paused = consumer.rewound > rewound
            consumer.resume_flow()
            if fetched_while_paused:
                break
        assert fetched_while_paused, "in five tries no fetch in flight came back with events during the pause"
        for ev in sent:
            await eventually(lambda: e.outputs(ev.job_id or ""), f"the output of {ev.title}")  # noqa: B023
        for user in users:
            await e.barrier(user)  # anything published twice for these events is out before this
        # Read again from where each partition stopped, not from the start of the batch: no event twice.
        assert all(len(e.outputs(ev.job_id or "")) == 1 and e.stage.calls[ev.job_id or ""] == 1 for ev in waiting)


async def test_events_sent_while_the_group_rebalances_twice_are_all_processed(
        broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> None:
    """A second member joins the stage's group, then the first one leaves, while events keep coming: each
    rebalance pauses the members with their fetches in flight.  Every event is processed."""
    async with open_env(broker, store, dsn, f"{MODULE_PREFIX}rb.") as e:
        first = e.new_runner()
        await first.start()
        users = ["alice", "bob", "carol", "dave"]
        sent: list[ArtifactSubmitted] = []
        sending = True

        async def keep_sending() -> None:
            while sending:
                ev = e.job("ok", users[len(sent) % len(users)])
                await e.send(ev)
                sent.append(ev)
                await asyncio.sleep(0.05)  # a steady trickle through both rebalances

        sender = asyncio.create_task(keep_sending())
        try:
            await eventually(lambda: sent and e.outputs(sent[0].job_id or ""), "the first member at work")
            second = e.new_runner()
            await second.start()
            await eventually(lambda: second.app.consumer.assignment() and second.stats.processed > 0,
                             "the second member taking partitions and processing")
            await first.stop()
            done_before = second.stats.processed
            await eventually(lambda: second.stats.processed >= done_before + 8, "the second member alone at work")
        finally:
            sending = False
            await sender
        for ev in sent:
            await eventually(lambda: e.outputs(ev.job_id or ""), f"the output of {ev.title}")  # noqa: B023


async def test_a_blocked_artifact_holds_up_neither_other_users_nor_its_own_users_small_captures(env: Env) -> None:
    slow = env.job("gate", user="carol")
    behind = env.job("ok", user="carol")
    slow_meta = await env.send(slow)
    # another user whose events land on the same partition as carol's
    other_user = next(u for u in (f"dave{i}" for i in range(200))
                      if _partition_of(u, PARTITIONS) == _partition_of("carol", PARTITIONS))
    other = env.job("ok", user=other_user)
    await env.send(behind)
    other_meta = await env.send(other)
    assert other_meta.partition == slow_meta.partition
    await eventually(lambda: env.stage.calls[slow.job_id or ""] == 1, "carol's slow event to start")

    # the other user's event, behind carol's on the same partition, is not held up...
    await eventually(lambda: env.outputs(other.job_id or ""), "the other user's output")
    # ...nor is carol's own later capture (her second lane), while her first is still blocked
    await eventually(lambda: env.outputs(behind.job_id or ""), "carol's second output")
    assert env.outputs(slow.job_id or "") == []

    env.stage.gate.set()
    await eventually(lambda: env.outputs(slow.job_id or ""), "carol's blocked output, once unblocked")


def _partition_of(user: str, partitions: int) -> int:
    """The partition the Java/aiokafka default partitioner picks for ``user`` as the key."""
    from aiokafka.partitioner import murmur2

    return (murmur2(user.encode()) & 0x7FFFFFFF) % partitions


async def test_an_input_too_large_to_copy_is_still_dead_lettered_by_its_coordinates(env: Env) -> None:
    small = env.job("permanent", user="erin")
    # An input just under the message limit: it fits, a dead letter carrying a copy of it does not.
    empty = dataclasses.replace(small, content=b"", size_bytes=0, sha256=None)
    size = CODEC.max_bytes - len(CODEC.encode(empty)) - 16
    big = b"x" * size
    ev = dataclasses.replace(small, content=big, size_bytes=size, sha256=None)
    assert CODEC.max_bytes - 64 < len(CODEC.encode(ev)) <= CODEC.max_bytes
    meta = await env.send(ev)
    after = env.job("ok", user="erin")
    await env.send(after)
    letters = await eventually(lambda: env.letters(lambda d: d.job_id == ev.job_id), "the dead letter")
    letter, headers = letters[0]
    assert letter.original_value == b""
    assert "too large" in headers["sb-original-dropped"]
    assert (headers["sb-original-topic"], headers["sb-original-offset"]) == (
        env.t(topic_names.ARTIFACTS_SUBMITTED), str(meta.offset))
    assert env.stage_view(ev)[0].status == "failed"
    # and the runner moved on to the user's next event
    await eventually(lambda: env.outputs(after.job_id or ""), "the next event's output")


@pytest.mark.fast
def test_the_url_fetchers_consumer_looks_less_often_than_the_other_stages() -> None:
    """Every look at the broker costs the process CPU, ten a second per stage at a 100 ms broker-side wait; the
    URL fetcher's consumer waits at least URL_FETCH_WAIT_MS (a page's download takes longer anyway), the other
    stages keep the configured wait (a note's hops between them)."""
    from secondbrain.pipeline import runner as runner_module

    class _Stage:
        def __init__(self, step: object) -> None:
            self.step = step

    def wait_of(step: object, configured: int, idle_ms: int | None = None) -> int:
        settings = Settings(kafka_fetch_max_wait_ms=configured, kafka_fetch_idle_ms=idle_ms)
        runner = StageRunner(_Stage(step), settings=settings, codec=CODEC, jobs=None,  # type: ignore[arg-type]
                             names=TopicNames(""), sealer=SEALER)
        return int(runner.app.fetch_max_wait_ms)  # type: ignore[attr-defined]

    assert runner_module.URL_FETCH_WAIT_MS == 500
    assert wait_of(topology.FETCH, 100) == 500
    assert wait_of(topology.EXTRACT, 100) == 100
    assert wait_of(topology.FETCH, 1500) == 1500  # a longer configured wait stands
    # Paced (`secondbrain up`): the consumer waits itself after an empty fetch, so the broker is not asked to.
    assert wait_of(topology.FETCH, 5, idle_ms=1000) == 5
