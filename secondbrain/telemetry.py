"""OpenTelemetry for secondbrain: traces, metrics and the trace ids in the logs.

:func:`setup_telemetry` runs once per process, from ``main()`` (never at import).  With
``SB_OTEL_ENDPOINT`` set it installs an SDK tracer and meter provider exporting over OTLP
(``SB_OTEL_PROTOCOL``: ``http/protobuf`` or ``grpc``), instruments FastAPI and psycopg, and
everything below records for real.  Without an endpoint nothing is installed: the
OpenTelemetry API stays a no-op, so the spans and instruments the code creates cost a
function call each.

Trace context travels in W3C ``traceparent`` headers: the gateway writes the context of the
upload into the outbox row's headers, the relay publishes it with a producer span, and every
stage runner continues the trace in a consumer span and passes it on in the headers of each
message it publishes.  One artifact is one trace, from the HTTP upload to the vector write.

The instruments are the ones ``deploy/README.md`` lists (the Grafana dashboard reads them);
their names, units and attributes are a contract.  Users appear in telemetry only as
:func:`user_hash` (never the raw id).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import SpanKind

if TYPE_CHECKING:
    from secondbrain.settings import Settings

log = logging.getLogger(__name__)

# Headers that carry trace context (the W3C propagators); replaced, never duplicated, on re-publish.
TRACE_HEADERS = frozenset({"traceparent", "tracestate", "baggage"})
# Carried from the first event of a job to the last stage, for the end-to-end latency.
SUBMITTED_AT_HEADER = "sb-submitted-at"

_tracer = trace.get_tracer("secondbrain")  # a proxy: real once setup_telemetry() installs a provider
_meter = metrics.get_meter("secondbrain")

_S_STAGE = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0)
_S_INGEST = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0, 3600.0)
_S_QUERY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_S_TTFT = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)

# The instruments (names, units and attributes as deploy/README.md lists them).  A unit in
# braces is an annotation: Prometheus names get no unit suffix from it.
STAGE_EVENTS = _meter.create_counter(
    "secondbrain.stage.events", unit="{event}",
    description="Events a stage handled, by outcome: processed, failed, retried, dead_lettered")
STAGE_DURATION = _meter.create_histogram(
    "secondbrain.stage.duration", unit="s", description="Time a stage spent on one event, retries included",
    explicit_bucket_boundaries_advisory=_S_STAGE)
STAGE_PHASE = _meter.create_histogram(
    "secondbrain.stage.phase.duration", unit="s",
    description="Where a stage's time goes, by phase: admit (its jobs read), wait (for the model's turn), work, "
                "record (the stage recorded done), publish (outputs sent and acknowledged); a batch's once",
    explicit_bucket_boundaries_advisory=_S_STAGE)
INGEST_LATENCY = _meter.create_histogram(
    "secondbrain.ingest.latency", unit="s", description="From submission to searchable (the embed stage done)",
    explicit_bucket_boundaries_advisory=_S_INGEST)
QUERY_DURATION = _meter.create_histogram(
    "secondbrain.query.duration", unit="s", description="Search and answer time, by route and query class",
    explicit_bucket_boundaries_advisory=_S_QUERY)
LLM_TOKENS = _meter.create_counter(
    "secondbrain.llm.tokens", unit="{token}", description="Tokens the language model read (prompt) and wrote")
LLM_TTFT = _meter.create_histogram(
    "secondbrain.llm.ttft", unit="s", description="Time from the request to the model's first token",
    explicit_bucket_boundaries_advisory=_S_TTFT)


class LagSource(Protocol):
    """Something that knows its consumer lag (a stage runner)."""

    def lag(self) -> Iterable[tuple[str, str, int, int]]:
        """``(stage, topic, partition, messages behind)`` per assigned partition the broker reported."""
        ...


_LAG_SOURCES: weakref.WeakSet[Any] = weakref.WeakSet()
_LAG_LOCK = threading.Lock()


def register_lag_source(source: LagSource) -> None:
    """Report ``source``'s consumer lag in the ``secondbrain.consumer.lag`` gauge while it lives."""
    with _LAG_LOCK:
        _LAG_SOURCES.add(source)


def unregister_lag_source(source: LagSource) -> None:
    """Stop reporting ``source`` (a stopped runner)."""
    with _LAG_LOCK:
        _LAG_SOURCES.discard(source)


def _observe_lag(_options: CallbackOptions) -> Iterator[Observation]:
    with _LAG_LOCK:
        sources = list(_LAG_SOURCES)
    for source in sources:
        try:
            rows = list(source.lag())
        except Exception:  # a runner mid-rebalance: no reading this time
            continue
        for stage, topic, partition, lag in rows:
            yield Observation(lag, {"stage": stage, "topic": topic, "partition": partition})


CONSUMER_LAG = _meter.create_observable_gauge(
    "secondbrain.consumer.lag", callbacks=[_observe_lag], unit="{message}",
    description="Messages of a stage's input partition not yet processed (end offset minus committed offset)")


# --------------------------------------------------------------------------- set-up


class _State:
    enabled = False
    tracer_provider: Any = None
    meter_provider: Any = None
    service_name: str | None = None


_state = _State()


def service_name_for(*, gateway: bool, query: bool, stages: list[str], embedded: bool = False) -> str:
    """The default service name of a process role (``OTEL_SERVICE_NAME`` wins over it)."""
    if embedded:
        return "secondbrain"
    parts = (["gateway"] if gateway else []) + (["query"] if query else []) + list(stages)
    return "secondbrain-" + "-".join(parts or ["cli"])


def enabled() -> bool:
    """Whether this process exports telemetry (an endpoint is configured and set up)."""
    return _state.enabled


def setup_telemetry(settings: Settings, service_name: str, *, span_exporter: Any = None,
                    metric_reader: Any = None) -> bool:
    """Install tracing and metrics for this process, once; return whether telemetry is on.

    On when ``settings.otel_endpoint`` is set (or, for tests, an exporter or reader is given).
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` refine the resource; the standard
    ``OTEL_BSP_*`` and ``OTEL_METRIC_EXPORT_INTERVAL`` variables tune the batching.
    """
    if _state.enabled:
        return True
    endpoint = settings.otel_endpoint
    if not endpoint and span_exporter is None and metric_reader is None:
        return False
    # The FastAPI instrumentation emits the stable HTTP conventions (http.server.request.duration,
    # seconds) only when asked; the dashboard reads those.  Must be set before it is instrumented.
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "http")

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    from secondbrain import __version__

    attributes: dict[str, Any] = {"service.version": __version__,
                                  "service.instance.id": f"{socket.gethostname()}-{os.getpid()}"}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = service_name
    resource = Resource.create(attributes)  # merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME

    tracer_provider = TracerProvider(resource=resource, sampler=_sampler())
    readers = []
    if endpoint:
        traces, metrics_ = _otlp_exporters(endpoint, settings.otel_protocol)
        tracer_provider.add_span_processor(BatchSpanProcessor(traces))
        readers.append(PeriodicExportingMetricReader(metrics_))
    if span_exporter is not None:
        tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    if metric_reader is not None:
        readers.append(metric_reader)
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    _state.tracer_provider, _state.meter_provider = tracer_provider, meter_provider
    _state.service_name = str(resource.attributes.get("service.name"))
    _state.enabled = True

    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    PsycopgInstrumentor().instrument(tracer_provider=tracer_provider, enable_commenter=False)
    log.info("telemetry on", extra={"otel_endpoint": endpoint, "otel_protocol": settings.otel_protocol,
                                    "service_name": _state.service_name})
    return True


def shutdown_telemetry() -> None:
    """Flush and stop the exporters (at process exit; spans still queued are sent)."""
    if not _state.enabled:
        return
    for provider in (_state.tracer_provider, _state.meter_provider):
        try:
            provider.shutdown()
        except Exception as exc:  # the collector is gone: nothing more to do at exit
            log.warning("telemetry shutdown failed", extra={"error": repr(exc)})


def force_flush() -> None:
    """Export what is buffered now (tests, and before a deliberate exit)."""
    for provider in (_state.tracer_provider, _state.meter_provider):
        if provider is not None:
            provider.force_flush()


def _otlp_exporters(endpoint: str, protocol: str) -> tuple[Any, Any]:
    """Span and metric exporters for ``endpoint`` (the collector's base URL)."""
    base = endpoint.rstrip("/")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetrics
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

        return GrpcSpans(endpoint=base), GrpcMetrics(endpoint=base)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    # As with OTEL_EXPORTER_OTLP_ENDPOINT, the base URL gets the per-signal paths.
    return OTLPSpanExporter(endpoint=f"{base}/v1/traces"), OTLPMetricExporter(endpoint=f"{base}/v1/metrics")


def _sampler() -> Any:
    """Every trace is kept, except background database calls with no request or event around them
    (the outbox relay's polling, the rate-limit sweeps): as roots they would flood the trace store."""
    from opentelemetry.sdk.trace.sampling import (
        ALWAYS_ON,
        Decision,
        ParentBased,
        Sampler,
        SamplingResult,
    )

    class NoOrphanClientSpans(Sampler):
        def should_sample(self, parent_context: Context | None, trace_id: int, name: str,
                          kind: SpanKind | None = None, attributes: Any = None, links: Any = None,
                          trace_state: Any = None) -> SamplingResult:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            return ALWAYS_ON.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

        def get_description(self) -> str:
            return "NoOrphanClientSpans"

    return ParentBased(root=NoOrphanClientSpans())


def instrument_app(app: Any) -> None:
    """Trace and measure a FastAPI app's requests (health probes excepted); no-op when telemetry is off."""
    if not _state.enabled:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    # No spans per ASGI send/receive: a streamed answer would make one per token.
    FastAPIInstrumentor.instrument_app(app, tracer_provider=_state.tracer_provider,
                                       meter_provider=_state.meter_provider, excluded_urls="/healthz,/readyz",
                                       exclude_spans=["receive", "send"], server_request_hook=_redact_query)


def _redact_query(span: trace.Span, scope: Mapping[str, Any]) -> None:
    """Keep a request's query parameter names, not their values: ``/v1/search?q=`` holds what a user
    searched for, which is theirs, not the operator's."""
    raw = scope.get("query_string") or b""
    if span.is_recording() and raw:
        from urllib.parse import parse_qsl

        names = [k for k, _v in parse_qsl(raw.decode("latin-1"), keep_blank_values=True)]
        span.set_attribute("url.query", "&".join(f"{k}=" for k in names))


# --------------------------------------------------------------------------- spans and context


def tracer() -> trace.Tracer:
    """secondbrain's tracer (a no-op until telemetry is set up)."""
    return _tracer


def user_hash(user_id: str | None) -> str | None:
    """How a user appears in telemetry: the first 16 hex digits of the SHA-256 of their id."""
    if not user_id:
        return None
    return hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:16]


def set_user(user_id: str | None, span: trace.Span | None = None) -> None:
    """Tag ``span`` (default: the current one) with the hashed user id."""
    hashed = user_hash(user_id)
    if hashed:
        (span or trace.get_current_span()).set_attribute("sb.user.hash", hashed)


def context_from_headers(headers: Mapping[str, str] | Iterable[tuple[str, Any]]) -> Context:
    """The trace context a message carries (an empty context when it carries none)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    carrier: dict[str, str] = {}
    for key, value in items:
        if key in TRACE_HEADERS:
            carrier[key] = value.decode("utf-8", "replace") if isinstance(value, bytes | bytearray) else str(value)
    return propagate.extract(carrier) if carrier else Context()


def with_trace_headers(headers: Iterable[tuple[str, bytes]], context: Context | None = None) -> list[tuple[str, bytes]]:
    """``headers`` with the trace context of ``context`` (default: the current one) in place of any it had."""
    out = [(k, v) for k, v in headers if k not in TRACE_HEADERS]
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=context)
    out.extend((k, v.encode("ascii")) for k, v in carrier.items())
    return out


def header(headers: Iterable[tuple[str, Any]], name: str) -> str | None:
    """One header's value as text (the first one of that name)."""
    for key, value in headers:
        if key == name:
            return value.decode("utf-8", "replace") if isinstance(value, bytes | bytearray) else str(value)
    return None


def kafka_attributes(topic: str, partition: int | None = None, offset: int | None = None, *,
                     operation: str, group: str | None = None) -> dict[str, Any]:
    """Messaging attributes of the semantic conventions for a Kafka span."""
    out: dict[str, Any] = {"messaging.system": "kafka", "messaging.destination.name": topic,
                           "messaging.operation.type": operation}
    if partition is not None:
        out["messaging.destination.partition.id"] = str(partition)
    if offset is not None:
        out["messaging.kafka.offset"] = offset
    if group is not None:
        out["messaging.consumer.group.name"] = group
    return out


def current_ids() -> tuple[str, str] | None:
    """``(trace id, span id)`` in hex of the current span, or None outside one."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


def record_exception(span: trace.Span, exc: BaseException) -> None:
    """Mark ``span`` failed with ``exc`` (type and message; no stack for expected errors)."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:300]))
    span.set_attribute("error.type", type(exc).__name__)
