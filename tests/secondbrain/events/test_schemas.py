"""Event schemas and the Avro single-object codec (secondbrain.events)."""

from __future__ import annotations

import dataclasses
import io
import json
import random
import re
import shutil
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import fastavro
import pytest
from fastavro.schema import parse_schema, to_parsing_canonical_form

from secondbrain import ids
from secondbrain.events import (
    CONTENT_TYPE,
    EVENT_TYPES,
    EVENTS_BY_NAME,
    ArtifactSubmitted,
    Chunk,
    ChunksCreated,
    ChunksIndexed,
    DeadLetter,
    DocumentExtracted,
    Event,
    EventCodec,
    EventTooLarge,
    JobStatusChanged,
    MalformedEvent,
    SchemaError,
    Segment,
    TimeMention,
    UrlRequested,
    event_class,
    schema_name,
)
from secondbrain.events.codec import DEFAULT_SCHEMA_DIR
from secondbrain.events.models import Moved, Recurrence, WordTime
from tests.examples import examples
from tests.paths import REPO

pytestmark = pytest.mark.fast  # no services: in the fast lane

SCHEMA_DIR = REPO / "schemas"
FILE_NAME = re.compile(r"(?P<name>[a-z][a-z0-9_]*)\.v(?P<version>[1-9][0-9]*)\.avsc")


@pytest.fixture(scope="module")
def codec() -> EventCodec:
    return EventCodec()


# --------------------------------------------------------------------------- samples

T0 = datetime(2024, 3, 14, 15, 9, 26, 535897, tzinfo=UTC)
USER = "user-ünïcødé-42"
ART = ids.artifact_id(USER, "a" * 64)
DOC = ids.document_id(ART)
SRC = ids.source_id(USER, "file:Réunion 2024 — notes.md")
JOB = ids.job_id(USER, "evt-1")


def _segments() -> list[Segment]:
    title = "Réunion — 東京 🚀"
    para = "Nous avons décidé d'utiliser Kafka. 日本語のテキスト。"
    return [
        Segment(index=0, kind="heading", text=title, char_start=0, char_end=len(title), heading_path=[]),
        Segment(index=1, kind="paragraph", text=para, char_start=len(title) + 2,
                char_end=len(title) + 2 + len(para), heading_path=[title, "Décisions"],
                page=3, attributes={"lang": "fr", "speaker": "Zoë"}),
        Segment(index=2, kind="speech", text="ok", char_start=70, char_end=72, t_start=12.5, t_end=14.25),
    ]


def _chunks() -> list[Chunk]:
    return [
        Chunk(chunk_id=ids.chunk_id(DOC, 0), index=0, text="Réunion — 東京 🚀\n\nNous avons décidé…",
              char_start=0, char_end=40, token_count=17, heading_path=["Réunion — 東京 🚀"],
              kind="heading", page=1),
        Chunk(chunk_id=ids.chunk_id(DOC, 1), index=1, text="ok", char_start=70, char_end=72,
              token_count=1, heading_path=[], kind="speech", t_start=12.5, t_end=14.25,
              word_times=[WordTime(offset=0, second=12.5), WordTime(offset=1, second=12.9)]),
    ]


def _series() -> Recurrence:
    """A weekly meeting in Paris, one week left out, one moved, endless."""
    return Recurrence(start=T0 - timedelta(days=30), zone="Europe/Paris", duration_s=2700,
                      rules=["FREQ=WEEKLY;BYDAY=TU;BYHOUR=17;BYMINUTE=0;BYSECOND=0"],
                      dates=[T0 + timedelta(days=2)], exceptions=[T0 - timedelta(days=16)],
                      moved=[Moved(original=T0 - timedelta(days=9), start=T0 - timedelta(days=8),
                                   end=T0 - timedelta(days=8) + timedelta(minutes=45))])


def _full_events() -> list[Event]:
    """One event per schema with every optional field set, unicode and nested arrays."""
    content = "# Réunion — 東京 🚀\n\nNous avons décidé…".encode()
    return [
        ArtifactSubmitted(
            event_id="evt-1", job_id=JOB, user_id=USER, source_uri="file:Réunion 2024 — notes.md",
            source_id=SRC, artifact_id=ART, content_type="text/markdown; charset=utf-8",
            filename="Réunion 2024 — notes.md", title="Réunion — 東京 🚀", content=content,
            size_bytes=len(content), sha256=ids.sha256_hex(content), captured_at=T0 - timedelta(days=3),
            submitted_at=T0, producer="app:calendar", attributes={"calendar": "travail", "emoji": "🗓️"},
        ),
        DocumentExtracted(
            event_id=ids.event_id(JOB, "extract"), job_id=JOB, user_id=USER, artifact_id=ART, source_id=SRC,
            document_id=DOC, title="Réunion — 東京 🚀", modality="markdown", content_type="text/markdown",
            captured_at=T0 - timedelta(days=3), captured_at_source="user", ingested_at=T0, text_length=120,
            segments=_segments(), body_ref=None, metadata={"language": "fr", "author": "Zoë"},
            text="x" * 120, source_uri="https://exemple.fr/réunion", version=2,
            recording_start=T0 - timedelta(days=3, minutes=1), recurrence=_series(),
        ),
        ChunksCreated(
            event_id=ids.event_id(JOB, "chunk"), job_id=JOB, user_id=USER, artifact_id=ART, source_id=SRC,
            document_id=DOC, title="Réunion — 東京 🚀", modality="audio", content_type="audio/mpeg",
            captured_at=T0 - timedelta(days=3), ingested_at=T0, chunks=_chunks(), chunk_count=2,
            source_uri="https://exemple.fr/réunion", captured_at_source="file_metadata",
            recording_start=T0 - timedelta(days=3, minutes=1), version=3, recurrence=_series(),
        ),
        UrlRequested(
            event_id="evt-url-1", job_id=JOB, user_id=USER, url="https://exemple.fr/réunion?q=東京#ancre",
            title="Réunion — 東京 🚀", captured_at=T0 - timedelta(days=1), requested_at=T0,
            producer="app:browser", attributes={"tab": "🗂️"},
        ),
        ChunksIndexed(
            event_id=ids.event_id(JOB, "embed"), job_id=JOB, user_id=USER, document_id=DOC,
            collection="sb_user_ünïcødé_v1", chunk_count=2,
            point_ids=[ids.chunk_id(DOC, 0), ids.chunk_id(DOC, 1)],
            embedding_model="minilm-l6-int8", indexed_at=T0 + timedelta(seconds=5),
        ),
        JobStatusChanged(
            event_id=ids.event_id(JOB, "embed", "retrying", "2"), job_id=JOB, user_id=USER, stage="embed",
            status="retrying", detail="Qdrant indisponible — nouvel essai", attempt=2,
            occurred_at=T0 + timedelta(seconds=3),
        ),
        DeadLetter(
            event_id=ids.event_id("documents.extracted", "3", "1234"), stage="chunk",
            original_topic="documents.extracted", original_partition=3, original_offset=2**40 + 7,
            original_key=USER.encode(), original_value=b"\xc3\x01\x00\xff garbage",
            original_headers={"sb-schema": "document_extracted", "x-trace": "ünï"},
            error_kind="malformed", error_type="MalformedEvent", error_message="corrupt body: ✗",
            attempts=1, job_id=JOB, user_id=USER, failed_at=T0 + timedelta(minutes=1),
        ),
    ]


def _minimal_events() -> list[Event]:
    """One event per schema with every optional field unset (null / default)."""
    return [
        ArtifactSubmitted(event_id="evt-2", user_id=USER, source_uri="https://example.org/post?q=1",
                          content_type="text/html", object_key=f"users/{USER}/raw/{ART}",
                          size_bytes=10_000_000, submitted_at=T0, producer="gateway"),
        DocumentExtracted(event_id="e", job_id=JOB, user_id=USER, artifact_id=ART, source_id=SRC,
                          document_id=DOC, title="", modality="pdf", content_type="application/pdf",
                          captured_at=T0, captured_at_source="ingested", ingested_at=T0,
                          text_length=5_000_000, body_ref=f"users/{USER}/bodies/{DOC}.avro"),
        ChunksCreated(event_id="e", job_id=JOB, user_id=USER, artifact_id=ART, source_id=SRC, document_id=DOC,
                      title="t", modality="text", content_type="text/plain", captured_at=T0, ingested_at=T0,
                      chunk_count=9000, chunks_ref=f"users/{USER}/chunks/{DOC}.avro"),
        UrlRequested(event_id="e", job_id=JOB, user_id=USER, url="http://a.b", requested_at=T0,
                     producer="gateway"),
        ChunksIndexed(event_id="e", job_id=JOB, user_id=USER, document_id=DOC, collection="c", chunk_count=0,
                      point_ids=[], embedding_model="m", indexed_at=T0),
        JobStatusChanged(event_id="e", job_id=JOB, user_id=USER, stage="gateway", status="queued",
                         occurred_at=T0),
        DeadLetter(event_id="e", stage="extract", original_topic="artifacts.submitted", original_partition=0,
                   original_offset=0, original_value=b"", error_kind="retries_exhausted",
                   error_type="OSError", error_message="", attempts=5, failed_at=T0),
    ]


# Typed Any: tests replace fields with wrong types on purpose.
FULL: dict[str, Any] = {type(e).SCHEMA_NAME: e for e in _full_events()}
MINIMAL: dict[str, Any] = {type(e).SCHEMA_NAME: e for e in _minimal_events()}
ALL_SAMPLES = [pytest.param(e, id=f"{e.SCHEMA_NAME}-full") for e in FULL.values()] + [
    pytest.param(e, id=f"{e.SCHEMA_NAME}-minimal") for e in MINIMAL.values()
]
NAMES = sorted(FULL)


def test_samples_cover_every_event_type() -> None:
    assert set(FULL) == set(MINIMAL) == set(EVENTS_BY_NAME)
    assert {type(e) for e in FULL.values()} == set(EVENT_TYPES)


# --------------------------------------------------------------------------- schema files


def _schema_files() -> dict[str, dict[int, Path]]:
    found: dict[str, dict[int, Path]] = {}
    for path in sorted(SCHEMA_DIR.glob("*.avsc")):
        m = FILE_NAME.fullmatch(path.name)
        assert m, f"badly named schema file {path.name}"
        found.setdefault(m["name"], {})[int(m["version"])] = path
    return found


SCHEMA_FILES = _schema_files()


def _load(path: Path) -> dict[str, Any]:
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(schema, dict)
    return schema


def _walk_records(schema: Any) -> list[dict[str, Any]]:
    """Every record definition inside ``schema`` (top level first)."""
    out: list[dict[str, Any]] = []
    if isinstance(schema, list):
        for branch in schema:
            out += _walk_records(branch)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            out.append(schema)
            for f in schema["fields"]:
                out += _walk_records(f["type"])
        elif schema.get("type") == "array":
            out += _walk_records(schema["items"])
        elif schema.get("type") == "map":
            out += _walk_records(schema["values"])
    return out


def test_default_schema_dir_is_the_repository_schemas_dir() -> None:
    assert DEFAULT_SCHEMA_DIR == SCHEMA_DIR
    assert set(SCHEMA_FILES) == {"artifact_submitted", "document_extracted", "chunks_created",
                                 "chunks_indexed", "job_status", "dead_letter", "url_requested"}


@pytest.mark.parametrize("path", sorted(SCHEMA_DIR.glob("*.avsc")), ids=lambda p: p.name)
def test_schema_file_parses_and_follows_conventions(path: Path) -> None:
    version = int(FILE_NAME.fullmatch(path.name)["version"])  # type: ignore[index]
    schema = _load(path)
    parse_schema(schema, named_schemas={})  # raises on an invalid schema
    assert schema["type"] == "record"
    assert schema["namespace"] == "secondbrain.events"
    first = schema["fields"][0]
    assert (first["name"], first["type"], first["default"]) == ("schema_version", "int", version)
    for record in _walk_records(schema):
        assert record.get("doc"), f"record {record['name']} has no doc"
        for f in record["fields"]:
            assert f.get("doc"), f"{record['name']}.{f['name']} has no doc"
            ftype = f["type"]
            if isinstance(ftype, list):
                # Optional fields are ["null", T] with a null default.
                assert ftype[0] == "null" and len(ftype) == 2, f["name"]
                assert f.get("default", "missing") is None, f["name"]
            if isinstance(ftype, dict) and ftype.get("type") == "long" and "logicalType" in ftype:
                assert ftype["logicalType"] == "timestamp-micros"
            if f["name"].endswith("_at"):
                types = ftype if isinstance(ftype, list) else [ftype]
                assert {"type": "long", "logicalType": "timestamp-micros"} in types, f["name"]


def test_artifact_submitted_public_contract_is_documented() -> None:
    schema = _load(SCHEMA_FILES["artifact_submitted"][max(SCHEMA_FILES["artifact_submitted"])])
    assert len(schema["doc"]) > 200
    assert "artifacts.submitted" in schema["doc"]
    for f in schema["fields"]:
        # A public contract needs more than a word per field.
        assert len(f.get("doc", "")) >= 40, f"artifact_submitted.{f['name']} is not documented well"
    docs = {f["name"]: f["doc"] for f in schema["fields"]}
    assert "exactly one" in docs["object_key"].lower() and "exactly one" in docs["content"].lower()
    assert "utc" in docs["captured_at"].lower() and "utc" in docs["submitted_at"].lower()


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


@pytest.mark.parametrize("name", NAMES)
def test_model_matches_latest_schema(codec: EventCodec, name: str) -> None:
    cls = event_class(name)
    assert schema_name(cls) == name == cls.SCHEMA_NAME
    assert codec.latest_version(name) == cls.SCHEMA_VERSION, "model not updated for the newest schema"
    pairs: list[tuple[type[Any], dict[str, Any]]] = [(cls, codec.schema_of(name))]
    nested = {"Segment": Segment, "Chunk": Chunk, "TimeMention": TimeMention, "WordTime": WordTime,
              "Recurrence": Recurrence, "Moved": Moved}
    for record in _walk_records(codec.schema_of(name))[1:]:
        pairs.append((nested[record["name"]], record))
    for model, record in pairs:
        model_fields = {f.name: f for f in dataclasses.fields(model)}
        schema_fields = {f["name"]: f for f in record["fields"] if f["name"] != "schema_version"}
        assert list(model_fields) != [] and set(model_fields) == set(schema_fields), model.__name__
        for fname, sf in schema_fields.items():
            assert _has_default(model_fields[fname]) == ("default" in sf), f"{model.__name__}.{fname}"


def test_registry_maps_both_ways() -> None:
    for cls in EVENT_TYPES:
        assert event_class(cls.SCHEMA_NAME) is cls
        assert EVENTS_BY_NAME[schema_name(cls)] is cls
    with pytest.raises(KeyError):
        event_class("nope")


# --------------------------------------------------------------------------- wire format


def _crc64_avro(data: bytes) -> int:
    """The reference CRC-64-AVRO from the Avro specification (independent of fastavro)."""
    empty = 0xC15D213AA4D7A795
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (empty & -(fp & 1))
        table.append(fp)
    fp = empty
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp


def test_reference_crc64_matches_the_spec_test_vector() -> None:
    # From the Avro spec's test data: the 64-bit fingerprint of the schema "null".
    assert _crc64_avro(b'"null"') == 7195948357588979594


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_single_object_encoding_layout(codec: EventCodec, event: Event) -> None:
    data = codec.encode(event)
    schema = codec.schema_of(event.SCHEMA_NAME, event.SCHEMA_VERSION)
    canonical = to_parsing_canonical_form(schema)
    assert data[:2] == b"\xc3\x01"
    assert data[2:10] == struct.pack("<Q", _crc64_avro(canonical.encode()))
    # The body is plain Avro binary that any Avro library reads with the writer schema.
    buf = io.BytesIO(data[10:])
    record = fastavro.schemaless_reader(buf, parse_schema(schema, named_schemas={}))
    assert buf.tell() == len(data) - 10
    assert record == {**event.to_record(), "schema_version": event.SCHEMA_VERSION}


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_headers(codec: EventCodec, event: Event) -> None:
    assert codec.headers(event) == [
        ("sb-schema", event.SCHEMA_NAME.encode()),
        ("sb-schema-version", str(event.SCHEMA_VERSION).encode()),
        ("content-type", CONTENT_TYPE.encode()),
    ]
    assert CONTENT_TYPE == "application/vnd.secondbrain.avro"


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_round_trip(codec: EventCodec, event: Event) -> None:
    data = codec.encode(event)
    decoded = codec.decode(data)
    assert type(decoded) is type(event)
    assert decoded == event
    assert codec.decode(data, type(event)) == event
    for f in dataclasses.fields(decoded):
        value = getattr(decoded, f.name)
        if isinstance(value, datetime):
            assert value.tzinfo is not None and value.utcoffset() == timedelta(0)


def test_round_trip_keeps_nested_values_and_unicode(codec: EventCodec) -> None:
    doc = codec.decode(codec.encode(FULL["document_extracted"]), DocumentExtracted)
    assert [s.kind for s in doc.segments] == ["heading", "paragraph", "speech"]
    assert doc.segments[0].text == "Réunion — 東京 🚀"
    assert doc.segments[1].heading_path == ["Réunion — 東京 🚀", "Décisions"]
    assert (doc.segments[1].page, doc.segments[1].attributes) == (3, {"lang": "fr", "speaker": "Zoë"})
    assert (doc.segments[2].t_start, doc.segments[2].t_end, doc.segments[2].page) == (12.5, 14.25, None)
    chunks = codec.decode(codec.encode(FULL["chunks_created"]), ChunksCreated)
    assert chunks.chunks[1].chunk_id == ids.chunk_id(DOC, 1)
    art = codec.decode(codec.encode(FULL["artifact_submitted"]), ArtifactSubmitted)
    assert art.content is not None and art.content.decode().startswith("# Réunion")
    assert art.captured_at == T0 - timedelta(days=3)


def test_non_utc_datetimes_are_decoded_as_the_same_instant_in_utc(codec: EventCodec) -> None:
    paris = timezone(timedelta(hours=2))
    local = T0.astimezone(paris)
    event = dataclasses.replace(FULL["job_status"], occurred_at=local)
    decoded = codec.decode(codec.encode(event), JobStatusChanged)
    assert decoded.occurred_at == T0 and decoded.occurred_at.tzinfo == UTC


def test_timestamps_keep_microseconds(codec: EventCodec) -> None:
    event = dataclasses.replace(FULL["chunks_indexed"], indexed_at=T0)
    assert codec.decode(codec.encode(event), ChunksIndexed).indexed_at.microsecond == 535897


def test_accepts_bytearray_and_memoryview(codec: EventCodec) -> None:
    data = codec.encode(FULL["job_status"])
    assert codec.decode(bytearray(data)) == FULL["job_status"]
    assert codec.decode(memoryview(data)) == FULL["job_status"]


# --------------------------------------------------------------------------- encode rejections


def _wrong_value(value: Any) -> Any:
    if isinstance(value, Recurrence):
        return {"start": "soon"}
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 123
    if isinstance(value, int):
        return "12"
    if isinstance(value, float):
        return "1.5"
    if isinstance(value, datetime):
        return "2024-03-14T15:09:26Z"
    if isinstance(value, bytes):
        return "not bytes"
    if isinstance(value, list):
        return 5
    if isinstance(value, dict):
        return {"k": 5}
    raise AssertionError(f"no wrong value for {value!r}")


WRONG_TYPE_CASES = [
    pytest.param(name, f.name, id=f"{name}.{f.name}")
    for name, event in FULL.items()
    for f in dataclasses.fields(event)
]


@pytest.mark.parametrize(("name", "field"), WRONG_TYPE_CASES)
def test_encode_rejects_a_wrong_type_naming_the_field(codec: EventCodec, name: str, field: str) -> None:
    # Every optional field is set in one of the two samples (object_key/content are exclusive).
    event = FULL[name] if getattr(FULL[name], field) is not None else MINIMAL[name]
    bad = dataclasses.replace(event, **{field: _wrong_value(getattr(event, field))})
    with pytest.raises(ValueError, match=rf"\.{field}\b") as info:
        codec.encode(bad)
    assert not isinstance(info.value, MalformedEvent | EventTooLarge)


def test_encode_rejects_a_wrong_type_inside_a_nested_record(codec: EventCodec) -> None:
    event = FULL["document_extracted"]
    assert isinstance(event, DocumentExtracted)
    segs = [event.segments[0], dataclasses.replace(event.segments[1], text=None)]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Segment\.text"):
        codec.encode(dataclasses.replace(event, segments=segs))
    chunks_event = FULL["chunks_created"]
    assert isinstance(chunks_event, ChunksCreated)
    chunks = [dataclasses.replace(chunks_event.chunks[0], heading_path=[1, 2])]  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"Chunk\.heading_path"):
        codec.encode(dataclasses.replace(chunks_event, chunks=chunks, chunk_count=1))


def test_encode_rejects_out_of_range_int(codec: EventCodec) -> None:
    with pytest.raises(ValueError, match=r"\.attempt\b"):
        codec.encode(dataclasses.replace(FULL["job_status"], attempt=2**31))


def test_encode_rejects_naive_datetimes(codec: EventCodec) -> None:
    naive = datetime(2024, 1, 1, 12, 0)
    with pytest.raises(ValueError, match="submitted_at must be a timezone-aware"):
        codec.encode(dataclasses.replace(FULL["artifact_submitted"], submitted_at=naive))


@pytest.mark.parametrize("name", NAMES)
def test_encode_record_rejects_missing_required_fields(codec: EventCodec, name: str) -> None:
    record = FULL[name].to_record()
    schema = codec.schema_of(name)
    required = [f["name"] for f in schema["fields"] if "default" not in f]
    assert required
    for field in required:
        partial = {k: v for k, v in record.items() if k != field}
        with pytest.raises(ValueError, match=rf"\.{field}\b"):
            codec.encode_record(name, partial)
    # Fields with a default may be omitted: the schema default is written.
    optional = {f["name"] for f in schema["fields"] if "default" in f} - {"schema_version"}
    minimal = {k: v for k, v in record.items() if k not in optional}
    decoded = codec.decode_record(codec.encode_record(name, minimal))[1]
    for f in schema["fields"]:
        if f["name"] in optional:
            assert decoded[f["name"]] == f["default"]


def test_encode_record_rejects_unknown_fields(codec: EventCodec) -> None:
    record = {**FULL["job_status"].to_record(), "priority": 3}
    with pytest.raises(ValueError, match=r"unknown fields.*priority"):
        codec.encode_record("job_status", record)


def test_encode_rejects_non_events(codec: EventCodec) -> None:
    with pytest.raises(TypeError):
        codec.encode({"event_id": "x"})  # type: ignore[arg-type]


INVALID_EVENTS: list[tuple[str, Callable[[], Event], str]] = [
    ("artifact-both-payloads", lambda: dataclasses.replace(
        FULL["artifact_submitted"], object_key="users/u/raw/x"), "exactly one of object_key and content"),
    ("artifact-no-payload", lambda: dataclasses.replace(
        FULL["artifact_submitted"], content=None), "exactly one of object_key and content"),
    ("artifact-size-mismatch", lambda: dataclasses.replace(
        FULL["artifact_submitted"], size_bytes=1), "size_bytes is 1 but content has"),
    ("artifact-negative-size", lambda: dataclasses.replace(
        MINIMAL["artifact_submitted"], size_bytes=-1), "size_bytes must be >= 0"),
    ("artifact-bad-sha", lambda: dataclasses.replace(
        FULL["artifact_submitted"], sha256="ABC"), "sha256 must be 64"),
    ("artifact-empty-user", lambda: dataclasses.replace(
        FULL["artifact_submitted"], user_id=""), "user_id must not be empty"),
    ("document-body-ref-and-segments", lambda: dataclasses.replace(
        FULL["document_extracted"], body_ref="users/u/b"), "segments and text must be empty when body_ref"),
    ("document-offsets-outside-text", lambda: dataclasses.replace(
        FULL["document_extracted"], text="x" * 10, text_length=10), "outside the text of length 10"),
    ("chunks-count-mismatch", lambda: dataclasses.replace(
        FULL["chunks_created"], chunk_count=3), "chunk_count is 3 but 2 chunks"),
    ("chunks-ref-and-chunks", lambda: dataclasses.replace(
        FULL["chunks_created"], chunks_ref="users/u/c"), "chunks must be empty when chunks_ref"),
    ("job-negative-attempt", lambda: dataclasses.replace(
        FULL["job_status"], attempt=-1), "attempt must be >= 0"),
    ("url-not-http", lambda: dataclasses.replace(
        FULL["url_requested"], url="file:///etc/passwd"), "url must be an http or https URL"),
    ("url-empty-job", lambda: dataclasses.replace(
        MINIMAL["url_requested"], job_id=""), "job_id must not be empty"),
    ("url-too-long", lambda: dataclasses.replace(
        MINIMAL["url_requested"], url="https://a.b/" + "x" * 9000), "longer than 8192"),
]


@pytest.mark.parametrize(("make", "message"), [pytest.param(m, msg, id=i) for i, m, msg in INVALID_EVENTS])
def test_encode_rejects_events_failing_validate(codec: EventCodec, make: Callable[[], Event],
                                                message: str) -> None:
    event = make()
    with pytest.raises(ValueError, match=re.escape(message)):
        event.validate()
    with pytest.raises(ValueError, match=re.escape(message)):
        codec.encode(event)


def test_size_guard(codec: EventCodec) -> None:
    content = b"x" * 1_000_000
    big = dataclasses.replace(FULL["artifact_submitted"], content=content, size_bytes=len(content),
                              sha256=ids.sha256_hex(content))
    with pytest.raises(EventTooLarge) as info:
        codec.encode(big)
    assert isinstance(info.value, ValueError)
    assert info.value.size > 1_000_000 and info.value.limit == 900_000
    assert "claim check" in str(info.value)
    # The claim-check form of the same artifact fits.
    small = dataclasses.replace(big, content=None, object_key=f"users/{USER}/raw/{ART}")
    assert len(codec.encode(small)) < 1_000
    tight = EventCodec(max_bytes=100)
    data = codec.encode(FULL["job_status"])
    assert len(data) > 100
    with pytest.raises(EventTooLarge):
        tight.encode(FULL["job_status"])
    assert len(EventCodec(max_bytes=len(data)).encode(FULL["job_status"])) == len(data)


# --------------------------------------------------------------------------- decode rejections


@pytest.mark.parametrize("name", NAMES)
def test_decode_rejects_short_input(codec: EventCodec, name: str) -> None:
    data = codec.encode(FULL[name])
    for n in range(10):
        with pytest.raises(MalformedEvent, match="too short"):
            codec.decode(data[:n])


@pytest.mark.parametrize("bad", [None, "text", 42, [0xC3, 0x01]])
def test_decode_rejects_non_bytes(codec: EventCodec, bad: Any) -> None:
    with pytest.raises(MalformedEvent, match="must be bytes"):
        codec.decode(bad)


@pytest.mark.parametrize("name", NAMES)
def test_decode_rejects_wrong_marker(codec: EventCodec, name: str) -> None:
    data = codec.encode(FULL[name])
    for marker in (b"\x00\x00", b"\xc3\x00", b"\x01\xc3", b"\x4f\x62"):  # b"Ob" starts an Avro container file
        with pytest.raises(MalformedEvent, match="marker"):
            codec.decode(marker + data[2:])
    with pytest.raises(MalformedEvent, match="marker"):
        codec.decode(json.dumps({"event_id": "x", "padding": "...."}).encode())


@pytest.mark.parametrize("name", NAMES)
def test_decode_rejects_unknown_fingerprint(codec: EventCodec, name: str) -> None:
    data = codec.encode(FULL[name])
    flipped = data[:2] + bytes([data[2] ^ 0x01]) + data[3:]
    with pytest.raises(MalformedEvent, match="unknown writer schema fingerprint"):
        codec.decode(flipped)
    # A schema the codec does not know (e.g. another application's record).
    other = to_parsing_canonical_form(
        {"type": "record", "name": "Other", "fields": [{"name": "a", "type": "int"}]}
    )
    foreign = b"\xc3\x01" + struct.pack("<Q", _crc64_avro(other.encode())) + b"\x02"
    with pytest.raises(MalformedEvent, match="unknown writer schema fingerprint"):
        codec.decode(foreign)


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_decode_rejects_every_truncation(codec: EventCodec, event: Event) -> None:
    data = codec.encode(event)
    for n in range(10, len(data)):
        with pytest.raises(MalformedEvent):
            codec.decode(data[:n])


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_decode_rejects_trailing_bytes(codec: EventCodec, event: Event) -> None:
    data = codec.encode(event)
    for tail in (b"\x00", b"garbage", data):
        with pytest.raises(MalformedEvent, match="trailing bytes"):
            codec.decode(data + tail)


def test_decode_rejects_a_corrupt_body(codec: EventCodec) -> None:
    data = codec.encode(FULL["job_status"])
    # Invalid UTF-8 inside a string.
    marker = b"indisponible"
    assert marker in data
    with pytest.raises(MalformedEvent, match="corrupt"):
        codec.decode(data.replace(marker, b"\xff" * len(marker)))
    # A string length pointing far beyond the message.
    event_id = FULL["job_status"].event_id.encode()
    length_at = data.index(event_id) - 1
    huge = data[:length_at] + b"\xfe\xff\xff\xff\x0f" + data[length_at + 1:]
    with pytest.raises(MalformedEvent, match="corrupt"):
        codec.decode(huge)
    # A union branch index that does not exist (detail is ["null","string"]).
    record = {**FULL["job_status"].to_record(), "detail": None}
    ok = codec.encode_record("job_status", record)
    branch_at = ok.rindex(b"\x00", 0, len(ok) - 9)  # the null branch precedes attempt and occurred_at
    with pytest.raises(MalformedEvent):
        codec.decode(ok[:branch_at] + b"\x08" + ok[branch_at + 1:])


@pytest.mark.parametrize("name", NAMES)
def test_decode_rejects_the_wrong_expected_type(codec: EventCodec, name: str) -> None:
    data = codec.encode(FULL[name])
    assert name == type(codec.decode(data, Event)).SCHEMA_NAME  # the base class accepts any event
    for other in EVENT_TYPES:
        if name == other.SCHEMA_NAME:
            assert isinstance(codec.decode(data, other), other)
        else:
            expected = f"expected a {other.SCHEMA_NAME} event, got {name} v{FULL[name].SCHEMA_VERSION}"
            with pytest.raises(MalformedEvent, match=expected):
                codec.decode(data, other)


def test_decode_rejects_records_failing_validate(codec: EventCodec) -> None:
    # encode_record bypasses Event.validate, like a foreign producer could.
    record = {**MINIMAL["artifact_submitted"].to_record(), "object_key": None}
    data = codec.encode_record("artifact_submitted", record)
    with pytest.raises(MalformedEvent, match="exactly one of object_key and content"):
        codec.decode(data)
    record = {**FULL["chunks_created"].to_record(), "chunk_count": 7}
    with pytest.raises(MalformedEvent, match="chunk_count is 7"):
        codec.decode(codec.encode_record("chunks_created", record))


# --------------------------------------------------------------------------- fuzzing


def _assert_only_malformed(codec: EventCodec, data: bytes) -> None:
    try:
        event = codec.decode(data)
    except MalformedEvent:
        return
    # Avro has no checksum: a mutation can still be a valid event, but then a well-formed one.
    assert isinstance(event, Event)
    event.validate()


def test_fuzz_random_bytes_only_raise_malformed(codec: EventCodec) -> None:
    rng = random.Random(20240314)
    prefixes = [b"", b"\xc3\x01"] + [b"\xc3\x01" + codec.registered(n).fingerprint for n in codec.names()]
    for _ in range(6000):
        prefix = rng.choice(prefixes)
        body = rng.randbytes(rng.choice([0, 1, 2, 5, 9, 10, 17, 64, 300]))
        _assert_only_malformed(codec, prefix + body)


@pytest.mark.parametrize("event", ALL_SAMPLES)
def test_fuzz_mutated_messages_only_raise_malformed(codec: EventCodec, event: Event) -> None:
    rng = random.Random(event.SCHEMA_NAME)
    data = codec.encode(event)
    for _ in range(800):
        m = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(10, len(m)) if len(m) > 10 else 10
            if op < 0.5 and pos < len(m):
                m[pos] = rng.randrange(256)
            elif op < 0.7 and pos < len(m):
                m[pos] ^= 1 << rng.randrange(8)
            elif op < 0.85:
                m[pos:pos] = rng.randbytes(rng.randint(1, 4))
            else:
                del m[pos:pos + rng.randint(1, 4)]
        _assert_only_malformed(codec, bytes(m))


def test_fuzz_with_hypothesis(codec: EventCodec) -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    valid = [codec.encode(e) for e in FULL.values()]

    @hypothesis.settings(max_examples=examples(400), deadline=None, database=None)
    @hypothesis.given(st.binary(max_size=200) | st.builds(
        lambda i, cut, junk: valid[i][:cut] + junk,
        st.integers(0, len(valid) - 1), st.integers(0, 400), st.binary(max_size=20)))
    def check(data: bytes) -> None:
        _assert_only_malformed(codec, data)

    check()


def test_readme_producer_example_writes_what_the_codec_reads(codec: EventCodec) -> None:
    readme = (SCHEMA_DIR / "README.md").read_text(encoding="utf-8")
    example = re.findall(r"```python\n(.*?)```", readme, re.S)[0]
    for needle in ("AIOKafkaProducer", '"artifacts.submitted"', "key=user_id.encode()"):
        assert needle in example
    namespace: dict[str, Any] = {}
    # Run the example's definitions (absolute schema path), without connecting to Kafka.
    source = example.replace("asyncio.run(main())", "").replace(
        '"schemas/artifact_submitted.v1.avsc"', repr(str(SCHEMA_DIR / "artifact_submitted.v1.avsc")))
    exec(compile(source, "README.md", "exec"), namespace)
    record = {**FULL["artifact_submitted"].to_record(), "schema_version": 1}
    assert codec.decode(namespace["encode"](record)) == FULL["artifact_submitted"]


# --------------------------------------------------------------------------- evolution


def _sample_value(schema: Any, named: dict[str, Any], variant: str) -> Any:
    """A value of ``schema``: unions take the non-null branch when ``variant == 'set'``."""
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"] if variant == "set" else ["null"]
        return _sample_value(branches[0], named, variant)
    if isinstance(schema, str):
        if schema in named:
            return _sample_value(named[schema], named, variant)
        return {"null": None, "boolean": True, "int": 7, "long": 2**40, "float": 1.5, "double": 2.25,
                "bytes": b"\x00\xffb", "string": "ünï 東京 🚀"}[schema]
    kind = schema["type"]
    if schema.get("logicalType") == "timestamp-micros":
        return T0
    if kind == "record":
        named[schema["name"]] = schema
        named[f"{schema.get('namespace', 'secondbrain.events')}.{schema['name']}"] = schema
        return {f["name"]: _sample_value(f["type"], named, variant) for f in schema["fields"]}
    if kind == "array":
        return [_sample_value(schema["items"], named, variant) for _ in range(2)]
    if kind == "map":
        return {"k1": _sample_value(schema["values"], named, variant), "k2": _sample_value(
            schema["values"], named, variant)}
    if kind == "enum":
        return schema["symbols"][0]
    if kind == "fixed":
        return b"\x01" * schema["size"]
    return _sample_value(kind, named, variant)


def _kept(read: Any, written: Any) -> bool:
    """Whether ``read`` holds every value of ``written``; records nested in it may have gained
    fields (a new version can add a field with a default to a nested record, such as Chunk)."""
    if isinstance(written, dict) and isinstance(read, dict):
        return all(k in read and _kept(read[k], v) for k, v in written.items())
    if isinstance(written, list) and isinstance(read, list):
        return len(read) == len(written) and all(_kept(r, w) for r, w in zip(read, written, strict=True))
    return bool(read == written)


def _check_can_read(writer: dict[str, Any], reader: dict[str, Any]) -> None:
    """Assert ``reader`` reads data written with ``writer`` (values kept, new fields defaulted)."""
    writer_fields = {f["name"]: f for f in writer["fields"]}
    reader_fields = {f["name"]: f for f in reader["fields"]}
    assert writer["name"] == reader["name"], "the record must keep its name"
    removed = set(writer_fields) - set(reader_fields)
    assert not removed, f"fields removed: {sorted(removed)}"
    for name in set(reader_fields) - set(writer_fields):
        assert "default" in reader_fields[name], f"new field {name!r} has no default"
    for variant in ("set", "null"):
        record = _sample_value(writer, {}, variant)
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parse_schema(writer, named_schemas={}), record)
        written = io.BytesIO(buf.getvalue())
        out: Any = fastavro.schemaless_reader(written, parse_schema(writer, named_schemas={}),
                                              parse_schema(reader, named_schemas={}))
        for name, value in record.items():
            assert _kept(out[name], value), name
        for name in set(reader_fields) - set(writer_fields):
            new_field = reader_fields[name]
            # fastavro converts logical-type defaults (e.g. a timestamp) to Python objects.
            if not (isinstance(new_field["type"], dict) and "logicalType" in new_field["type"]):
                assert out[name] == new_field["default"], name


COMPAT_PAIRS = [
    pytest.param(name, old, new, id=f"{name}-v{old}-read-by-v{new}")
    for name, versions in sorted(SCHEMA_FILES.items())
    for old in sorted(versions)
    for new in sorted(versions)
    if old <= new
]


@pytest.mark.parametrize(("name", "old", "new"), COMPAT_PAIRS)
def test_later_versions_read_earlier_ones(codec: EventCodec, name: str, old: int, new: int) -> None:
    writer = _load(SCHEMA_FILES[name][old])
    reader = _load(SCHEMA_FILES[name][new])
    _check_can_read(writer, reader)
    # And through the codec, which resolves every version against the latest one.
    if new == codec.latest_version(name):
        record = FULL[name].to_record()
        known = {f["name"] for f in writer["fields"]}
        data = codec.encode_record(name, {k: v for k, v in record.items() if k in known}, version=old)
        assert codec.identify(data).version == old
        assert isinstance(codec.decode(data), event_class(name))


def test_compatibility_check_catches_breaking_changes() -> None:
    v1 = _load(SCHEMA_FILES["job_status"][1])
    no_default = json.loads(json.dumps(v1))
    no_default["fields"].append({"name": "priority", "type": "int", "doc": "d"})
    with pytest.raises(AssertionError, match="no default"):
        _check_can_read(v1, no_default)
    retyped = json.loads(json.dumps(v1))
    next(f for f in retyped["fields"] if f["name"] == "stage")["type"] = "int"
    with pytest.raises(Exception):  # noqa: B017 - fastavro's resolution error or a value mismatch
        _check_can_read(v1, retyped)
    removed = json.loads(json.dumps(v1))
    removed["fields"] = [f for f in removed["fields"] if f["name"] != "detail"]
    with pytest.raises(AssertionError, match="removed"):
        _check_can_read(v1, removed)


def _copy_schemas(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(SCHEMA_DIR, target)
    return target


def _write_v2_url_requested(schema_dir: Path) -> None:
    v2 = _load(SCHEMA_DIR / "url_requested.v1.avsc")
    v2["fields"][0]["default"] = 2
    v2["fields"].append({"name": "priority", "type": "int", "default": 0, "doc": "Processing priority."})
    (schema_dir / "url_requested.v2.avsc").write_text(json.dumps(v2), encoding="utf-8")


def test_old_producers_keep_working_after_a_new_version(tmp_path: Path) -> None:
    schema_dir = _copy_schemas(tmp_path)
    _write_v2_url_requested(schema_dir)
    old = EventCodec()  # a producer still on v1 only
    new = EventCodec(schema_dir)
    assert new.latest_version("url_requested") == 2 and new.versions("url_requested") == [1, 2]
    event = FULL["url_requested"]
    data_v1 = old.encode(event)
    assert new.decode(data_v1) == event
    writer, record = new.decode_record(data_v1)
    assert (writer.version, record["schema_version"], record["priority"]) == (1, 1, 0)
    data_v2 = new.encode_record("url_requested", {**event.to_record(), "priority": 5}, version=2)
    assert new.decode(data_v2) == event  # the v1 model ignores the field it does not know yet
    assert new.decode_record(data_v2)[1]["priority"] == 5
    with pytest.raises(MalformedEvent, match="unknown writer schema fingerprint"):
        old.decode(data_v2)  # hence: deploy consumers before producers switch


def test_schema_of_and_versions(codec: EventCodec) -> None:
    schema = codec.schema_of("artifact_submitted")
    assert schema["name"] == "ArtifactSubmitted"
    assert schema == _load(SCHEMA_DIR / "artifact_submitted.v2.avsc")
    schema["fields"].clear()  # a copy: the registry is not affected
    assert codec.schema_of("artifact_submitted")["fields"]
    assert codec.latest_version("dead_letter") == 1
    assert codec.names() == NAMES
    with pytest.raises(KeyError):
        codec.schema_of("nope")
    with pytest.raises(KeyError):
        codec.latest_version("nope")
    with pytest.raises(KeyError):
        codec.schema_of("job_status", 9)


# --------------------------------------------------------------------------- loading errors


def _broken_dir(tmp_path: Path, edit: Callable[[Path], Any]) -> Path:
    schema_dir = _copy_schemas(tmp_path)
    edit(schema_dir)
    return schema_dir


def _rename(old: str, new: str) -> Callable[[Path], Any]:
    return lambda d: (d / old).rename(d / new)


def _same_as_v1_with_other_doc(d: Path) -> None:
    v2 = _load(d / "job_status.v1.avsc")
    v2["doc"], v2["fields"][0]["default"] = "changed", 2
    (d / "job_status.v2.avsc").write_text(json.dumps(v2))


def _renamed_record(d: Path) -> None:
    v2 = _load(d / "job_status.v1.avsc")
    v2["name"], v2["fields"][0]["default"] = "JobStatus", 2
    v2["fields"].append({"name": "x", "type": "int", "default": 0, "doc": "x"})
    (d / "job_status.v2.avsc").write_text(json.dumps(v2))


def _version_gap(d: Path) -> None:
    v3 = _load(d / "job_status.v1.avsc")
    v3["fields"][0]["default"] = 3
    v3["fields"].append({"name": "x", "type": "int", "default": 0, "doc": "x"})
    (d / "job_status.v3.avsc").write_text(json.dumps(v3))


def _wrong_version_default(d: Path) -> None:
    v = _load(d / "job_status.v1.avsc")
    v["fields"][0]["default"] = 3
    (d / "job_status.v1.avsc").write_text(json.dumps(v))


@pytest.mark.parametrize(("edit", "message"), [
    pytest.param(_rename("job_status.v1.avsc", "job_status.avsc"), "must be named", id="bad-name"),
    pytest.param(_version_gap, "without gaps", id="version-gap"),
    pytest.param(lambda d: (d / "x.v1.avsc").write_text("{not json"), "cannot parse", id="bad-json"),
    pytest.param(lambda d: (d / "x.v1.avsc").write_text(
        '{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nope"}]}'),
        "cannot parse", id="bad-type"),
    pytest.param(_same_as_v1_with_other_doc, "same fingerprint", id="doc-only-version"),
    pytest.param(_renamed_record, "one record name", id="renamed-record"),
    pytest.param(_wrong_version_default, "schema_version", id="version-default"),
])
def test_inconsistent_schema_dirs_are_refused(tmp_path: Path, edit: Callable[[Path], Any],
                                              message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        EventCodec(_broken_dir(tmp_path, edit))


def test_empty_schema_dir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="no"):
        EventCodec(tmp_path)
