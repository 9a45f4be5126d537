"""Telemetry inside one process, with the SDK's in-memory span exporter and metric reader: the stage
runner on a real broker and Postgres (trace continued from the message headers and passed on,
counters, lag, a stalled consumer failing liveness), the language model's span against a real
local OpenAI-compatible server, log lines carrying trace ids, and the off switch.

The tracing across separate processes (upload to vector write) is in tests/e2e/test_distributed.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from app.serve import Process
from secondbrain import telemetry, topic_names
from secondbrain.infra.tansu import TansuBroker
from secondbrain.logs import JsonFormatter, TraceContextFilter
from secondbrain.pipeline.runner import StageRunner
from secondbrain.pipeline.topology import SEALED_TOPICS
from secondbrain.settings import Settings
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.secondbrain.pipeline.test_runner import CODEC, SEALER, Env, eventually, open_env, opened


@pytest.fixture(scope="module")
def sinks() -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    """Telemetry on for this process, into memory; off again afterwards (the providers are global)."""
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    assert telemetry.setup_telemetry(Settings(), "secondbrain-test", span_exporter=spans,  # type: ignore[call-arg]
                                     metric_reader=reader)
    yield spans, reader
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    PsycopgInstrumentor().uninstrument()
    telemetry.shutdown_telemetry()
    telemetry._state.enabled = False  # later tests in this process run without telemetry


def metric(reader: InMemoryMetricReader, name: str, **attributes: Any) -> float:
    """A counter's value (a histogram's count, a gauge's sum) over the points with these attributes."""
    data = reader.get_metrics_data()
    total = 0.0
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name != name:
                    continue
                for p in m.data.data_points:
                    if all(p.attributes.get(k) == v for k, v in attributes.items()):
                        total += getattr(p, "count", None) or getattr(p, "value", 0)
    return total


def finished(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.name == name]


@pytest.fixture(scope="module")
def dsn(dsn: str) -> str:
    """The module's fresh database, migrated before any store is opened on it."""
    with PostgresMetadataStore(dsn) as s:
        s.migrate()
    return dsn


@pytest.fixture(scope="module")
def store(dsn: str, sinks: Any) -> Iterator[PostgresMetadataStore]:
    with PostgresMetadataStore(dsn) as s:  # made after set-up: its connections are traced
        yield s


@pytest.fixture(scope="module")
async def env(broker: TansuBroker, store: PostgresMetadataStore, dsn: str) -> AsyncIterator[Env]:
    async with open_env(broker, store, dsn, f"ttel{uuid.uuid4().hex[:8]}.") as e:
        await e.new_runner().start()
        yield e


def _record(env: Env, topic: str, job_id: str) -> Any:
    for m in env.collector.records[env.t(topic)]:
        value = CODEC.decode(opened(m) if topic in SEALED_TOPICS else m.value)
        if getattr(value, "job_id", None) == job_id:
            return m
    return None


async def test_the_runner_continues_the_trace_of_its_input_and_passes_it_on(env: Env, sinks: Any) -> None:
    spans, reader = sinks
    before = metric(reader, "secondbrain.stage.events", stage="extract", outcome="processed")
    ev = env.job("ok")
    assert ev.job_id
    with telemetry.tracer().start_as_current_span("upstream", kind=SpanKind.PRODUCER) as upstream:
        headers = telemetry.with_trace_headers(CODEC.headers(ev))
    await env.producer.send_and_wait(env.t(topic_names.ARTIFACTS_SUBMITTED), CODEC.encode(ev), key=b"alice",
                                     headers=headers)
    out = await eventually(lambda: _record(env, topic_names.DOCUMENTS_EXTRACTED, ev.job_id or ""), "the output")

    (process,) = await eventually(lambda: [s for s in finished(spans, "extract process")
                                           if s.attributes and s.attributes.get("sb.job.id") == ev.job_id],
                                  "the consumer span")
    parent = upstream.get_span_context()
    assert process.parent is not None and process.parent.span_id == parent.span_id
    assert process.context.trace_id == parent.trace_id and process.kind == SpanKind.CONSUMER
    attrs = dict(process.attributes or {})
    assert attrs["sb.user.hash"] == telemetry.user_hash("alice") and "alice" not in repr(attrs)
    assert attrs["sb.attempt"] == 1 and attrs["messaging.destination.name"] == env.t(topic_names.ARTIFACTS_SUBMITTED)
    assert attrs["sb.size_bytes"] == ev.size_bytes and attrs["sb.output.modality"] == "text"
    # The output carries the context of its publish span, a child of the consumer span.
    (publish,) = [s for s in finished(spans, f"{env.t(topic_names.DOCUMENTS_EXTRACTED)} publish")
                  if s.parent and s.parent.span_id == process.context.span_id]
    carried = trace.get_current_span(telemetry.context_from_headers(out.headers)).get_span_context()
    assert (carried.trace_id, carried.span_id) == (parent.trace_id, publish.context.span_id)
    assert [k for k, _ in out.headers].count("traceparent") == 1
    assert telemetry.header(out.headers, telemetry.SUBMITTED_AT_HEADER)  # for the end-to-end latency
    # Counted, and timed.
    await eventually(lambda: metric(reader, "secondbrain.stage.events", stage="extract", outcome="processed")
                     == before + 1, "processed + 1")
    assert metric(reader, "secondbrain.stage.duration", stage="extract") >= 1
    # And where its time went: its job read, its work, its stage recorded done, its output published.
    for phase in ("admit", "work", "record", "publish"):
        assert metric(reader, "secondbrain.stage.phase.duration", stage="extract", phase=phase) >= 1, phase


async def test_retries_and_dead_letters_are_counted_and_the_letter_keeps_the_trace(env: Env, sinks: Any) -> None:
    spans, reader = sinks

    def count(outcome: str) -> float:
        return metric(reader, "secondbrain.stage.events", stage="extract", outcome=outcome)

    retried, dead, failed = count("retried"), count("dead_lettered"), count("failed")
    flaky, broken = env.job("retry2"), env.job("permanent")
    await env.send(flaky)
    await env.send(broken)
    await eventually(lambda: env.outputs(flaky.job_id or ""), "the flaky event's output")
    letter = await eventually(lambda: _record(env, topic_names.DEAD_LETTER, broken.job_id or ""), "the dead letter")
    await eventually(lambda: count("retried") == retried + 2 and count("dead_lettered") == dead + 1
                     and count("failed") == failed + 1, "retried + 2, dead_lettered + 1, failed + 1")
    (process,) = [s for s in finished(spans, "extract process")
                  if (s.attributes or {}).get("sb.job.id") == broken.job_id]
    assert process.status.status_code == StatusCode.ERROR and process.attributes
    assert process.attributes["sb.error.kind"] == "permanent"
    carried = trace.get_current_span(telemetry.context_from_headers(letter.headers)).get_span_context()
    assert carried.trace_id == process.context.trace_id
    (flaky_span,) = [s for s in finished(spans, "extract process")
                     if (s.attributes or {}).get("sb.job.id") == flaky.job_id]
    assert [e.name for e in flaky_span.events] == ["retry", "retry"]
    assert flaky_span.attributes and flaky_span.attributes["sb.attempt"] == 3


async def test_lag_is_reported_and_a_stage_that_stops_reading_fails_liveness(
        broker: TansuBroker, store: PostgresMetadataStore, dsn: str, sinks: Any) -> None:
    _spans, reader = sinks
    async with open_env(broker, store, dsn, f"tstall{uuid.uuid4().hex[:6]}.") as env:
        runner = StageRunner(env.stage, settings=env.settings.model_copy(update={"stage_stall_s": 1.0}),
                             codec=CODEC, jobs=store.jobs, names=env.names, sealer=SEALER)
        env.runners.append(runner)
        await runner.start()
        first = env.job("ok")
        await env.send(first)
        await eventually(lambda: env.outputs(first.job_id or ""), "the first event's output", timeout=30)
        topic = env.t(topic_names.ARTIFACTS_SUBMITTED)
        # Caught up: nothing waits, however long the stage has been idle.
        await eventually(lambda: runner.lag() and all(n == 0 for _s, _t, _p, n in runner.lag()), "lag 0")
        assert runner.stalled() is None
        gauge = await eventually(lambda: [p for p in _gauge(reader) if p["topic"] == topic], "the lag gauge")
        assert {p["stage"] for p in gauge} == {"extract"}

        # The consumer stops fetching (alive, group joined) while a message arrives.
        consumer = runner.app.consumer
        consumer.stop_flow()
        second = env.job("ok")
        await env.send(second)
        reason = await eventually(runner.stalled, "liveness to notice the stall", timeout=30)
        assert "consumed nothing" in reason and "1 messages wait" in reason
        assert sum(n for _s, _t, _p, n in runner.lag()) == 1
        proc = Process(rt=None, runners=[runner])  # type: ignore[arg-type]
        assert proc.liveness() == reason

        consumer.resume_flow()
        await eventually(lambda: env.outputs(second.job_id or ""), "the waiting event, once reading resumes")
        assert runner.stalled() is None and proc.liveness() is None


def _gauge(reader: InMemoryMetricReader) -> list[dict[str, Any]]:
    data = reader.get_metrics_data()
    out = []
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == "secondbrain.consumer.lag":
                    out += [{**dict(p.attributes or {}), "value": p.value} for p in m.data.data_points]
    return out


def test_the_model_call_has_a_span_with_tokens_and_time_to_first_token(sinks: Any) -> None:
    """Against llama.cpp's OpenAI-compatible server (the packaged SmolLM2-135M)."""
    from devtools.llm_server import LocalLlamaServer, available
    from secondbrain.llm import OpenAICompatibleLLM

    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    spans, reader = sinks
    ttft = metric(reader, "secondbrain.llm.ttft")
    completion = metric(reader, "secondbrain.llm.tokens", kind="completion")
    prompt = metric(reader, "secondbrain.llm.tokens", kind="prompt")
    with (LocalLlamaServer(n_ctx=1024) as server, OpenAICompatibleLLM(server.base_url, server.model_id) as llm,
          telemetry.tracer().start_as_current_span("POST /v1/ask", kind=SpanKind.SERVER) as ask):
        deltas = list(llm.stream_chat([{"role": "user", "content": "Say hello."}], max_tokens=8))
        llm.complete([{"role": "user", "content": "Say hi."}], max_tokens=4)
    chat = finished(spans, f"chat {server.model_id}")
    assert len(chat) == 2 and all(s.parent and s.parent.span_id == ask.get_span_context().span_id for s in chat)
    streamed, whole = (dict(s.attributes or {}) for s in chat)
    assert streamed["gen_ai.request.model"] == server.model_id and streamed["sb.llm.ttft_s"] > 0
    assert len(deltas) >= 1 and streamed["gen_ai.usage.output_tokens"] >= 1
    assert whole["gen_ai.usage.input_tokens"] > 0  # the non-streamed answer reports its usage
    assert metric(reader, "secondbrain.llm.ttft") == ttft + 1
    assert metric(reader, "secondbrain.llm.tokens", kind="completion") >= completion + streamed[
        "gen_ai.usage.output_tokens"]
    assert metric(reader, "secondbrain.llm.tokens", kind="prompt") == prompt + whole["gen_ai.usage.input_tokens"] + (
        streamed.get("gen_ai.usage.input_tokens") or 0)


def test_log_lines_carry_the_trace_and_span_ids(sinks: Any) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(TraceContextFilter())
    logger = logging.getLogger(f"test.telemetry.{uuid.uuid4().hex[:6]}")
    logger.addHandler(handler)
    logger.propagate = False
    logger.warning("outside")
    with telemetry.tracer().start_as_current_span("work") as span:
        logger.warning("inside", extra={"job_id": "j1"})
    outside, inside = (json.loads(line) for line in out.getvalue().splitlines())
    assert "trace_id" not in outside
    ctx = span.get_span_context()
    assert inside["trace_id"] == format(ctx.trace_id, "032x") and inside["span_id"] == format(ctx.span_id, "016x")
    assert inside["job_id"] == "j1"


def test_without_an_endpoint_nothing_is_installed() -> None:
    """No endpoint: no SDK providers, no instrumentation; the API stays a no-op (checked in a fresh process)."""
    code = ("import opentelemetry.trace as t, opentelemetry.metrics as m\n"
            "from secondbrain import telemetry\nfrom secondbrain.settings import Settings\n"
            "assert telemetry.setup_telemetry(Settings(), 'x') is False and not telemetry.enabled()\n"
            "assert type(t.get_tracer_provider()).__name__ == 'ProxyTracerProvider'\n"
            "assert type(m.get_meter_provider()).__name__ == '_ProxyMeterProvider'\n"
            "s = telemetry.tracer().start_span('x'); assert not s.is_recording()\n"
            "assert telemetry.with_trace_headers([('traceparent', b'stale'), ('a', b'1')]) == [('a', b'1')]\n")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("SB_", "OTEL_"))}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_settings_and_service_names() -> None:
    s = Settings(otel_endpoint="http://collector:4317", otel_protocol="grpc")  # type: ignore[call-arg]
    assert (s.otel_endpoint, s.otel_protocol) == ("http://collector:4317", "grpc")
    assert Settings().otel_protocol == "http/protobuf"  # type: ignore[call-arg]
    assert telemetry.service_name_for(gateway=True, query=False, stages=[]) == "secondbrain-gateway"
    assert telemetry.service_name_for(gateway=False, query=False, stages=["extract"]) == "secondbrain-extract"
    assert telemetry.service_name_for(gateway=False, query=False, stages=["chunk", "embed"]) == \
        "secondbrain-chunk-embed"
    assert telemetry.service_name_for(gateway=True, query=True, stages=["fetch"], embedded=True) == "secondbrain"
    assert telemetry.user_hash("alice") == hashlib.sha256(b"alice").hexdigest()[:16]
    assert telemetry.user_hash(None) is None
