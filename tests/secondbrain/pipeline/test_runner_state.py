"""The runner keeps job state moving forward and admits on internal topics only the pipeline's own events
(a real broker and a real Postgres, as in :mod:`tests.secondbrain.pipeline.test_runner`)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, ClassVar

import pytest

from secondbrain import ids, topic_names
from secondbrain.events.models import DocumentExtracted, Segment
from secondbrain.events.sealing import Sealer, new_key
from secondbrain.infra.tansu import TansuBroker
from secondbrain.pipeline import topology
from secondbrain.pipeline.runner import StageRunner
from secondbrain.pipeline.stage import JobRef
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.secondbrain.pipeline.test_runner import CODEC, SEALER, Env, eventually, open_env


@pytest.fixture(scope="module")
def dsn(dsn: str) -> str:
    with PostgresMetadataStore(dsn) as s:
        s.migrate()
    return dsn


@pytest.fixture(scope="module")
def store(dsn: str) -> Any:
    with PostgresMetadataStore(dsn) as s:
        yield s


# --------------------------------------------------------------------------- progress races finishes


class SlowProgress:
    """The real job ledger, with its "running" writes slowed (a busy database): a write begun just before
    the stage finished lands after the finish unless something orders them."""

    def __init__(self, jobs: Any, delay_s: float) -> None:
        self._jobs, self._delay_s = jobs, delay_s

    def stage_started(self, *args: Any) -> None:
        time.sleep(self._delay_s)
        self._jobs.stage_started(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jobs, name)


async def test_a_progress_write_racing_the_finish_never_leaves_a_stage_running(
        broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> None:
    """The "running" write is due after 50 ms (SB_STAGE_PROGRESS_AFTER_S) and takes 150 ms; the work takes
    30-70 ms: the write and the stage's own finish interleave, and the stage must end succeeded (LoCoMo's
    jobs stuck "running")."""
    async with open_env(broker, store, dsn, f"tprog{uuid.uuid4().hex[:6]}.") as env:
        settings = env.settings.model_copy(update={"stage_progress_after_s": 0.05})
        runner = StageRunner(env.stage, settings=settings, codec=CODEC, jobs=SlowProgress(store.jobs, 0.15),
                             names=env.names, sealer=SEALER)
        env.runners.append(runner)
        await runner.start()
        events = [env.job("slow", user) for user in ("alice", "bob", "carol", "dan") for _ in range(25)]
        await asyncio.gather(*(env.send(ev) for ev in events))
        for ev in events:
            await eventually(lambda ev=ev: env.outputs(ev.job_id or ""), "every output", timeout=60)

        def settled() -> bool:
            views = [env.stage_view(ev)[1] for ev in events]
            return all(v.status == "succeeded" and v.finished_at is not None for v in views)

        await eventually(settled, "every extract stage recorded succeeded")
        for ev in events:
            job, extract = env.stage_view(ev)
            assert (extract.status, job.status) == ("succeeded", "running"), (job.job_id, extract)
            log = [(e["stage"], e["status"]) for e in store.jobs.job_events(ev.user_id, ev.job_id or "")]
            assert log[-1] == ("extract", "succeeded"), log  # nothing after the finish


# --------------------------------------------------------------------------- internal topics


class RecordingChunker:
    """A stage reading an internal topic (documents.extracted) that records what it was given."""

    step: ClassVar[topology.Step] = topology.CHUNK

    def __init__(self) -> None:
        self.seen: list[str] = []

    def job_of(self, event: DocumentExtracted) -> JobRef:
        return JobRef(event.job_id or None, event.user_id, event.source_id, event.document_id)

    def process(self, event: DocumentExtracted) -> list[Any]:
        self.seen.append(event.text)
        return []


def _document(job_id: str, user: str, text: str) -> DocumentExtracted:
    now = datetime.now(UTC)
    artifact = ids.artifact_id(user, ids.sha256_hex(text.encode()))
    return DocumentExtracted(
        event_id=str(uuid.uuid4()), job_id=job_id, user_id=user, artifact_id=artifact,
        source_id=ids.source_id(user, f"test:{text}"), document_id=ids.document_id(artifact), title="t",
        modality="text", content_type="text/plain", captured_at=now, captured_at_source="ingested", ingested_at=now,
        text_length=len(text), segments=[Segment(index=0, kind="paragraph", text="", char_start=0, char_end=len(text))],
        text=text)


@pytest.fixture(scope="module")
async def chunk_env(broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> AsyncIterator[tuple[Env, Any]]:
    async with open_env(broker, store, dsn, f"tseal{uuid.uuid4().hex[:6]}.") as env:
        stage = RecordingChunker()
        runner = StageRunner(stage, settings=env.settings, codec=CODEC, jobs=store.jobs, names=env.names,
                             dead_letters=store.dead_letters, sealer=SEALER)
        env.runners.append(runner)
        await runner.start()
        yield env, stage


async def _publish(env: Env, doc: DocumentExtracted, *, sealer: Sealer | None) -> None:
    topic = env.t(topic_names.DOCUMENTS_EXTRACTED)
    key, value, headers = doc.user_id.encode(), CODEC.encode(doc), list(CODEC.headers(doc))
    if sealer is not None:
        value, mark = sealer.seal(topic, key, value)
        headers.append(mark)
    await env.producer.send_and_wait(topic, value, key=key, headers=headers)


async def test_an_internal_topic_takes_only_sealed_events_of_live_jobs(chunk_env: tuple[Env, Any]) -> None:
    env, stage = chunk_env
    live = env.job("ok")  # a live job of alice's
    assert live.job_id
    forged = [
        ("unsealed", _document(live.job_id, "alice", "forged: unsealed text"), None, "not sealed"),
        ("other key", _document(live.job_id, "alice", "forged: another key"), Sealer.from_text(new_key()),
         "another pipeline key"),
        ("no job", _document("", "alice", "forged: no job at all"), SEALER, "names no job"),
    ]
    for _name, doc, sealer, _why in forged:
        await _publish(env, doc, sealer=sealer)
    # a sealed event of a job that does not exist (deleted, erased): dropped, no letter, no work
    await _publish(env, _document(ids.job_id("alice", "gone"), "alice", "forged: a job that is gone"), sealer=SEALER)
    # and the real thing, behind them on alice's lane: processed
    real = _document(live.job_id, "alice", "the real extracted text")
    await _publish(env, real, sealer=SEALER)
    await eventually(lambda: "the real extracted text" in stage.seen, "the sealed event of the live job")
    assert not any(text.startswith("forged") for text in stage.seen)
    for name, _doc, _sealer, why in forged:
        await eventually(lambda why=why: env.letters(
            lambda letter, why=why: letter.original_topic == env.t(topic_names.DOCUMENTS_EXTRACTED)
            and letter.error_kind == "unauthorized" and why in letter.error_message), f"the {name} event's letter")
    assert not env.letters(lambda letter: "a job that is gone" in str(letter.original_value))
    # nothing of the job was touched by the refusals
    job, _extract = env.stage_view(live)
    assert job.status == "queued" and all(s.status == "pending" for s in job.stages)
