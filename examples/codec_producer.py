"""Publish one signed ArtifactSubmitted event from Python code that has secondbrain installed.

    SB_PRODUCER_KEY=sb_... SB_KAFKA_BOOTSTRAP=127.0.0.1:9092 python codec_producer.py "some text"

The codec checks the contract's invariants before anything is sent; the Kafka settings are the
services' own (SB_KAFKA_BOOTSTRAP, SB_KAFKA_SECURITY_PROTOCOL, SB_KAFKA_SASL_*, SB_KAFKA_SSL_CAFILE).
"""

import asyncio
import hashlib
import os
import sys
import uuid
from datetime import UTC, datetime

from aiokafka import AIOKafkaProducer

from secondbrain.events import ArtifactSubmitted, EventCodec, signing
from secondbrain.pipeline.kafka_security import aiokafka_options
from secondbrain.settings import Settings


async def main() -> None:
    settings = Settings()
    api_key = os.environ["SB_PRODUCER_KEY"]  # a key of the user below; `--scope producer` is enough
    user_id = os.environ.get("SB_USER_ID", "local")
    body = (sys.argv[1] if len(sys.argv) > 1 else "Meeting notes: the launch moves to 3 March.").encode()
    codec = EventCodec()
    event = ArtifactSubmitted(
        event_id=str(uuid.uuid4()), job_id=None, user_id=user_id, source_uri="app:calendar/evt-42",
        source_id=None, artifact_id=None, content_type="text/markdown", filename=None, title="Launch sync",
        object_key=None, content=body, size_bytes=len(body), sha256=hashlib.sha256(body).hexdigest(),
        captured_at=datetime(2026, 2, 27, 15, 0, tzinfo=UTC), submitted_at=datetime.now(UTC),
        producer="app:calendar", attributes={},
    )
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all",
                                **aiokafka_options(settings))
    await producer.start()
    try:
        value = codec.encode(event)
        await producer.send_and_wait("artifacts.submitted", value, key=user_id.encode(),
                                     headers=[*codec.headers(event), *signing.sign(value, api_key)])
    finally:
        await producer.stop()
    print(event.event_id)


asyncio.run(main())
