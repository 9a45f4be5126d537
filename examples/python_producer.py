"""Publish one signed ArtifactSubmitted event to secondbrain, with fastavro and aiokafka only.

    SB_PRODUCER_KEY=sb_... SB_KAFKA_BOOTSTRAP=127.0.0.1:9092 python python_producer.py "some text"

Settings come from the environment: SB_KAFKA_BOOTSTRAP (the address `secondbrain up` prints),
SB_PRODUCER_KEY (an API key of the user, `--scope producer` is enough), SB_USER_ID (default
"local", the user of `secondbrain up`), SB_SCHEMA_FILE (default schemas/artifact_submitted.v1.avsc)
and, for an Apache Kafka cluster, SB_KAFKA_SECURITY_PROTOCOL (SASL_SSL, ...),
SB_KAFKA_SASL_MECHANISM, SB_KAFKA_SASL_USERNAME, SB_KAFKA_SASL_PASSWORD and SB_KAFKA_SSL_CAFILE.
"""

import asyncio
import hashlib
import hmac
import io
import json
import os
import ssl
import sys
import uuid
from datetime import UTC, datetime

from aiokafka import AIOKafkaProducer
from fastavro import parse_schema, schemaless_writer
from fastavro.schema import fingerprint, to_parsing_canonical_form

with open(os.environ.get("SB_SCHEMA_FILE", "schemas/artifact_submitted.v1.avsc"), encoding="utf-8") as f:
    RAW_SCHEMA = json.load(f)
SCHEMA = parse_schema(RAW_SCHEMA)
# Single-object encoding: C3 01, then the CRC-64-AVRO fingerprint of the schema (fastavro gives it
# as hex of the little-endian bytes, as on the wire), then the Avro body.
HEADER = b"\xc3\x01" + bytes.fromhex(fingerprint(to_parsing_canonical_form(RAW_SCHEMA), "CRC-64-AVRO"))


def encode(record: dict) -> bytes:
    buf = io.BytesIO()
    buf.write(HEADER)
    schemaless_writer(buf, SCHEMA, record)
    return buf.getvalue()


def signed(value: bytes, api_key: str) -> list[tuple[str, bytes]]:
    """sb-key-id: the <id> of sb_<id>_<secret>; sb-signature: HMAC-SHA256 of the value, keyed with SHA-256(key)."""
    key_id = api_key.split("_")[1]
    mac = hmac.new(hashlib.sha256(api_key.encode()).digest(), value, hashlib.sha256).hexdigest()
    return [("sb-key-id", key_id.encode()), ("sb-signature", f"v1={mac}".encode())]


def kafka_options() -> dict:
    """Plain on the local broker; SASL and/or TLS for a cluster, from the same variables secondbrain reads."""
    env = os.environ.get
    protocol = env("SB_KAFKA_SECURITY_PROTOCOL", "PLAINTEXT")
    options: dict = {"bootstrap_servers": env("SB_KAFKA_BOOTSTRAP", "127.0.0.1:9092"), "security_protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        options["ssl_context"] = ssl.create_default_context(cafile=env("SB_KAFKA_SSL_CAFILE"))
    if protocol.startswith("SASL_"):
        options.update(sasl_mechanism=env("SB_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
                       sasl_plain_username=env("SB_KAFKA_SASL_USERNAME"),
                       sasl_plain_password=env("SB_KAFKA_SASL_PASSWORD"))
    return options


async def main() -> None:
    api_key = os.environ["SB_PRODUCER_KEY"]  # sb_<id>_<secret>, a key of the user below
    user_id = os.environ.get("SB_USER_ID", "local")
    text = (sys.argv[1] if len(sys.argv) > 1 else "Met Ana about the Q3 roadmap; decided to ship the importer first.")
    body = text.encode()
    record = {
        "schema_version": 1,
        "event_id": str(uuid.uuid4()),      # your idempotency key: reuse it when you retry
        "job_id": None,                     # derived from event_id by secondbrain
        "user_id": user_id,
        "source_uri": "calendar:evt-2024-07-02-ana",
        "source_id": None,
        "artifact_id": None,
        "content_type": "text/plain",
        "filename": None,
        "title": "Roadmap meeting with Ana",
        "object_key": None,
        "content": body,                    # exactly one of content / object_key
        "size_bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "captured_at": datetime(2024, 7, 2, 9, 30, tzinfo=UTC),
        "submitted_at": datetime.now(UTC),
        "producer": "app:calendar",
        "attributes": {"calendar": "work"},
    }
    # acks="all" and no enable_idempotence: the local broker refuses idempotent producers, and the
    # event_id already makes a retried event harmless.
    producer = AIOKafkaProducer(acks="all", **kafka_options())
    await producer.start()
    try:
        value = encode(record)
        await producer.send_and_wait(
            "artifacts.submitted",
            value=value,
            key=user_id.encode(),           # one user's events stay in order
            headers=[
                ("sb-schema", b"artifact_submitted"),
                ("sb-schema-version", b"1"),
                ("content-type", b"application/vnd.secondbrain.avro"),
                *signed(value, api_key),
            ],
        )
    finally:
        await producer.stop()
    print(record["event_id"])


asyncio.run(main())
