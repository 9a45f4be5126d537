"""A small OTLP/HTTP receiver for tests: the in-memory exporter shared by separate processes.

It accepts ``POST /v1/traces`` and ``POST /v1/metrics`` (protobuf, as the OTLP/HTTP exporters
send them), decodes them with opentelemetry-proto and keeps every span and the latest value of
every metric point per process, so a test can assert on what the services exported.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind)


def _attrs(kvs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass(frozen=True)
class Span:
    """One received span, flattened."""

    service: str
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int


@dataclass
class Received:
    """What the receiver holds; guarded by ``lock``."""

    spans: list[Span] = field(default_factory=list)
    # (service, instance, metric name, frozen attributes) -> latest point (value, or histogram count/sum)
    points: dict[tuple[str, str, str, tuple[tuple[str, Any], ...]], dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class OtlpReceiver:
    """An OTLP/HTTP endpoint on a free loopback port; ``endpoint`` goes into SB_OTEL_ENDPOINT."""

    def __init__(self) -> None:
        self.data = Received()
        data = self.data

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    _spans(data, body)
                    reply = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    _metrics(data, body)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        """Stop listening."""
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------ reading
    def spans(self, predicate: Callable[[Span], bool] = lambda s: True) -> list[Span]:
        """A copy of the spans received so far that match ``predicate``."""
        with self.data.lock:
            return [s for s in self.data.spans if predicate(s)]

    def trace(self, trace_id: str) -> list[Span]:
        """Every span of one trace received so far."""
        return self.spans(lambda s: s.trace_id == trace_id)

    def metric(self, name: str, **attributes: Any) -> float:
        """A counter's total (summed over processes) for points with these attributes, or a gauge's sum;
        for a histogram, its count.  0 when nothing was received."""
        total = 0.0
        with self.data.lock:
            for (_svc, _inst, metric, attrs), point in self.data.points.items():
                if metric == name and all(dict(attrs).get(k) == v for k, v in attributes.items()):
                    total += point.get("count", point.get("value", 0.0))
        return total

    def metric_points(self, name: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """``(service, attributes, point)`` of every series of ``name``."""
        with self.data.lock:
            return [(svc, dict(attrs), dict(point)) for (svc, _inst, metric, attrs), point
                    in self.data.points.items() if metric == name]

    def wait_for(self, probe: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
        """Poll ``probe`` until it returns something truthy (exports arrive in batches)."""
        deadline = time.monotonic() + timeout
        while True:
            value = probe()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(0.2)


def _spans(data: Received, body: bytes) -> None:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for rs in request.resource_spans:
        service = str(_attrs(rs.resource.attributes).get("service.name"))
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(Span(service=service, name=s.name, kind=s.kind, trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(), parent_id=s.parent_span_id.hex(),
                                attributes=_attrs(s.attributes),
                                events=[(e.name, _attrs(e.attributes)) for e in s.events],
                                status_code=s.status.code))
    with data.lock:
        data.spans.extend(out)


def _metrics(data: Received, body: bytes) -> None:
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    updates = {}
    for rm in request.resource_metrics:
        resource = _attrs(rm.resource.attributes)
        service, instance = str(resource.get("service.name")), str(resource.get("service.instance.id"))
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                if kind in ("sum", "gauge"):
                    for p in getattr(m, kind).data_points:
                        value = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        key = (service, instance, m.name, tuple(sorted(_attrs(p.attributes).items())))
                        updates[key] = {"value": float(value), "unit": m.unit, "kind": kind}
                elif kind == "histogram":
                    for p in m.histogram.data_points:
                        key = (service, instance, m.name, tuple(sorted(_attrs(p.attributes).items())))
                        updates[key] = {"count": float(p.count), "sum": p.sum, "unit": m.unit, "kind": kind}
    with data.lock:
        data.points.update(updates)
