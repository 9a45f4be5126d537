"""What goes to the dead-letter topic when an event cannot be processed.

The letter keeps the original message (or, when that is too large to copy, its coordinates) and
the error, in the record and in headers an operator can filter on without decoding it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from secondbrain import ids
from secondbrain.errors import PermanentError
from secondbrain.events import signing
from secondbrain.events.codec import EventCodec, EventTooLarge
from secondbrain.events.models import DeadLetter
from secondbrain.ports import DeadLetterRecord


@dataclass
class Message:
    """One consumed message and where it came from."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: dict[str, str]
    raw: Any  # the consumer's own event, for the acknowledgement


def reason(exc: BaseException) -> str:
    """The error as a person reads it (a permanent error's own reason; else type and message)."""
    if isinstance(exc, PermanentError):
        return exc.reason
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:1000]


def letter(codec: EventCodec, msg: Message, *, stage: str, kind: str, exc: BaseException, attempts: int,
           job_id: str | None, user_id: str | None) -> tuple[bytes, list[tuple[str, bytes]]]:
    """The encoded dead letter for ``msg`` and its headers."""
    why = reason(exc)
    record = DeadLetter(
        event_id=ids.event_id(msg.topic, str(msg.partition), str(msg.offset), "dead"), stage=stage,
        original_topic=msg.topic, original_partition=msg.partition, original_offset=msg.offset,
        original_key=msg.key, original_value=msg.value or b"", original_headers=msg.headers, error_kind=kind,
        error_type=type(exc).__name__, error_message=why, attempts=attempts, job_id=job_id,
        user_id=user_id, failed_at=datetime.now(UTC),
    )
    headers = [*codec.headers(record),
               ("sb-error-kind", kind.encode()), ("sb-error-type", type(exc).__name__.encode()),
               ("sb-error-message", why.encode("utf-8")[:2000]), ("sb-stage", stage.encode()),
               ("sb-original-topic", msg.topic.encode()), ("sb-original-partition", str(msg.partition).encode()),
               ("sb-original-offset", str(msg.offset).encode()), ("sb-attempts", str(attempts).encode())]
    try:
        encoded = codec.encode(record)
    except EventTooLarge:
        # The original message is (nearly) at the size limit itself: keep its coordinates, which
        # still let an operator fetch it from the source topic, and drop the copy.
        encoded = codec.encode(dataclasses.replace(record, original_value=b""))
        headers.append(("sb-original-dropped", b"too large to copy; read it at the original offset"))
    return encoded, headers


def record(codec: EventCodec, msg: Message, *, stage: str, kind: str, exc: BaseException, job_id: str | None,
           user_id: str | None, opened: bytes | None = None) -> DeadLetterRecord:
    """The letter as its producer reads it in the API: which event, whose, and why (``opened``: the Avro
    bytes inside a sealed message, when they were opened)."""
    event_id = producer = None
    with contextlib.suppress(Exception):  # a malformed event has neither; the rest still says what happened
        event = codec.decode(opened if opened is not None else msg.value or b"")
        event_id, producer = getattr(event, "event_id", None), getattr(event, "producer", None)
    content = hashlib.sha256(msg.value or b"").hexdigest()
    return DeadLetterRecord(
        # The same message dead-lettered again (a redelivery) is one letter; the embedded broker
        # reuses offsets after a restart, so the content tells those letters apart.
        letter_id=ids.event_id(msg.topic, str(msg.partition), str(msg.offset), stage, content),
        stage=stage, topic=msg.topic, partition=msg.partition, offset=msg.offset, error_kind=kind,
        error_message=reason(exc), event_id=event_id, user_id=user_id, key_id=msg.headers.get(signing.KEY_ID_HEADER),
        job_id=job_id, producer=producer)


def headers_dict(headers: Any) -> dict[str, str]:
    """Kafka headers (pairs or a mapping, bytes values) as a str -> str dict (the last value wins)."""
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    out: dict[str, str] = {}
    for k, v in items:
        out[str(k)] = v.decode("utf-8", "replace") if isinstance(v, bytes | bytearray) else str(v)
    return out
