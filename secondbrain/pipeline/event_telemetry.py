"""What the runner tells telemetry about an event: sizes and modality on spans, submit-to-searchable time."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from opentelemetry import trace

from secondbrain import telemetry

# Input fields worth a span attribute when an event has them (sizes, modality).
EVENT_ATTRIBUTES = ("modality", "content_type", "size_bytes", "text_length", "chunk_count")


def describe(span: trace.Span, event: Any, prefix: str = "sb") -> None:
    """Sizes and modality of an event as span attributes (never its content or user id)."""
    if not span.is_recording():
        return
    for name in EVENT_ATTRIBUTES:
        value = getattr(event, name, None)
        if isinstance(value, str | int) and not isinstance(value, bool):
            span.set_attribute(f"{prefix}.{name}", value)


def submitted_at(hdrs: dict[str, str], event: Any) -> str | None:
    """The job's submit time (epoch seconds) for the outputs' headers: carried over from the input,
    else taken from the event that starts a job (a submission or a URL request)."""
    carried = hdrs.get(telemetry.SUBMITTED_AT_HEADER)
    if carried:
        return carried
    when = getattr(event, "submitted_at", None) or getattr(event, "requested_at", None)
    return f"{when.timestamp():.3f}" if isinstance(when, datetime) else None


def record_ingest_latency(hdrs: dict[str, str], event: Any) -> None:
    """Submission to searchable, from the submit time the first event's headers carried along."""
    submitted = hdrs.get(telemetry.SUBMITTED_AT_HEADER)
    if not submitted:
        return
    try:
        seconds = time.time() - float(submitted)
    except ValueError:
        return
    telemetry.INGEST_LATENCY.record(max(0.0, seconds), {"modality": getattr(event, "modality", None) or "unknown"})
