"""Avro single-object encoding of the pipeline's events.

Wire format of a message value (Avro specification, "Single-object encoding")::

    C3 01 | CRC-64-AVRO fingerprint of the writer schema's canonical form (8 bytes, LE) | Avro binary body

The fingerprint identifies the exact writer schema, so a consumer that knows every
registered version can decode messages from old and new producers alike: the body is
read with the writer schema and resolved against the latest version of that event.
See ``schemas/README.md`` for the evolution rules.
"""

from __future__ import annotations

import copy
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, overload

from fastavro import schemaless_reader, schemaless_writer
from fastavro.schema import fingerprint, parse_schema, to_parsing_canonical_form
from fastavro.validation import ValidationError, validate

from secondbrain.events.models import EVENTS_BY_NAME, Event

MAGIC = b"\xc3\x01"
FINGERPRINT_SIZE = 8
HEADER_SIZE = len(MAGIC) + FINGERPRINT_SIZE
NAMESPACE = "secondbrain.events"
CONTENT_TYPE = "application/vnd.secondbrain.avro"
HEADER_SCHEMA = "sb-schema"
HEADER_SCHEMA_VERSION = "sb-schema-version"
HEADER_CONTENT_TYPE = "content-type"
# ``schemas/`` at the repository root, reached through the package's ``events/schemas`` link so
# that a wheel (which copies the files there) finds them too.
DEFAULT_SCHEMA_DIR = (Path(__file__).resolve().parent / "schemas").resolve()
# Kafka's default max.message.bytes is ~1 MB; stay below it with room for key and headers.
DEFAULT_MAX_BYTES = 900_000

_FILE_NAME = re.compile(r"(?P<name>[a-z][a-z0-9_]*)\.v(?P<version>[1-9][0-9]*)\.avsc")

E = TypeVar("E", bound=Event)


class MalformedEvent(ValueError):
    """Bytes that are not a valid event of a registered schema (never retry: dead-letter them)."""


class EventTooLarge(ValueError):
    """The encoded event exceeds the codec's ``max_bytes``; move the payload to the object store."""

    def __init__(self, schema: str, size: int, limit: int) -> None:
        super().__init__(
            f"encoded {schema} event is {size} bytes, above the limit of {limit} bytes; "
            "store the payload in the object store and send a claim check instead"
        )
        self.schema = schema
        self.size = size
        self.limit = limit


class SchemaError(RuntimeError):
    """The schema directory is inconsistent (bad file name, unparsable schema, version gap...)."""


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema file: ``<name>.v<version>.avsc``."""

    name: str
    version: int
    path: Path
    schema: Mapping[str, Any]  # the JSON as written in the file
    parsed: Any  # fastavro's parsed form
    canonical: str  # Parsing Canonical Form
    fingerprint: bytes  # CRC-64-AVRO of ``canonical``, 8 bytes little-endian, as on the wire

    @property
    def record_name(self) -> str:
        """Full name of the top-level record."""
        return f"{self.schema.get('namespace', NAMESPACE)}.{self.schema['name']}"


def _load(path: Path) -> RegisteredSchema:
    match = _FILE_NAME.fullmatch(path.name)
    if match is None:
        raise SchemaError(f"{path}: schema files must be named <event_name>.v<N>.avsc")
    name, version = match["name"], int(match["version"])
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        # A fresh named-type table per file: every version defines its own nested records
        # (e.g. secondbrain.events.Segment) and they must not clash with each other.
        parsed = parse_schema(raw, named_schemas={})
        canonical = to_parsing_canonical_form(raw)
    except Exception as exc:  # fastavro raises assorted types on odd schemas
        raise SchemaError(f"{path}: cannot parse schema: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("type") != "record":
        raise SchemaError(f"{path}: the top level must be a record")
    if raw.get("namespace") != NAMESPACE:
        raise SchemaError(f"{path}: namespace must be {NAMESPACE!r}")
    first = raw["fields"][0] if raw.get("fields") else {}
    if first.get("name") != "schema_version" or first.get("type") != "int" or first.get("default") != version:
        raise SchemaError(f"{path}: the first field must be schema_version (int, default {version})")
    return RegisteredSchema(
        name=name,
        version=version,
        path=path,
        schema=raw,
        parsed=parsed,
        canonical=canonical,
        fingerprint=bytes.fromhex(fingerprint(canonical, "CRC-64-AVRO")),
    )


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors:
        field = getattr(err, "field", "?")
        datum = getattr(err, "datum", None)
        expected = getattr(err, "schema", "?")
        shown = repr(datum)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        parts.append(f"field {field!s} is {shown} ({type(datum).__name__}), expected {expected}")
    return "; ".join(parts) or str(exc)


class EventCodec:
    """Encodes events to and decodes them from Avro single-object encoded bytes.

    Loads every ``<name>.v<N>.avsc`` in ``schema_dir`` (default: the repository's
    ``schemas/`` directory).  Thread-safe after construction (read-only state).
    """

    def __init__(self, schema_dir: Path | str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.schema_dir = Path(schema_dir) if schema_dir is not None else DEFAULT_SCHEMA_DIR
        self.max_bytes = max_bytes
        self._schemas: dict[str, dict[int, RegisteredSchema]] = {}
        self._by_fingerprint: dict[bytes, RegisteredSchema] = {}
        paths = sorted(self.schema_dir.glob("*.avsc"))
        if not paths:
            raise SchemaError(f"no *.avsc schema files in {self.schema_dir}")
        for path in paths:
            reg = _load(path)
            other = self._by_fingerprint.get(reg.fingerprint)
            if other is not None:
                # The canonical form drops docs and defaults: a "new version" that only
                # changes those would be indistinguishable on the wire.
                raise SchemaError(f"{path} has the same fingerprint as {other.path} (same canonical form)")
            self._by_fingerprint[reg.fingerprint] = reg
            self._schemas.setdefault(reg.name, {})[reg.version] = reg
        for name, versions in self._schemas.items():
            numbers = sorted(versions)
            if numbers != list(range(1, len(numbers) + 1)):
                raise SchemaError(f"versions of {name} must be 1..N without gaps, found {numbers}")
            record_names = {reg.record_name for reg in versions.values()}
            if len(record_names) != 1:
                # Avro resolution matches records by name: renaming breaks old data.
                raise SchemaError(f"all versions of {name} must keep one record name, found {record_names}")

    # ------------------------------------------------------------------ registry

    def names(self) -> list[str]:
        """Every registered schema name, sorted."""
        return sorted(self._schemas)

    def versions(self, name: str) -> list[int]:
        """The registered versions of ``name``, ascending; ``KeyError`` when unknown."""
        return sorted(self._versions(name))

    def latest_version(self, name: str) -> int:
        """The highest registered version of ``name``; ``KeyError`` when unknown."""
        return max(self._versions(name))

    def registered(self, name: str, version: int | None = None) -> RegisteredSchema:
        """The registered schema ``name`` at ``version`` (default: the latest)."""
        versions = self._versions(name)
        number = max(versions) if version is None else version
        try:
            return versions[number]
        except KeyError:
            raise KeyError(f"schema {name!r} has no version {number}") from None

    def schema_of(self, name: str, version: int | None = None) -> dict[str, Any]:
        """A copy of the JSON schema ``name`` at ``version`` (default: the latest)."""
        return copy.deepcopy(dict(self.registered(name, version).schema))

    def _versions(self, name: str) -> dict[int, RegisteredSchema]:
        try:
            return self._schemas[name]
        except KeyError:
            raise KeyError(f"unknown schema {name!r}") from None

    # ------------------------------------------------------------------ encode

    def encode(self, event: Event) -> bytes:
        """Validate ``event`` and encode it with its class's schema version.

        Raises ``ValueError`` naming the field when a value does not match the schema or
        :meth:`Event.validate` fails, and :class:`EventTooLarge` above ``max_bytes``.
        """
        if not isinstance(event, Event) or not event.SCHEMA_NAME:
            raise TypeError(f"not an event: {type(event).__name__}")
        reg = self.registered(event.SCHEMA_NAME, event.SCHEMA_VERSION)
        record = self._checked(reg, event.to_record())
        # Schema types first, so validate() only ever sees well-typed values.
        event.validate()
        return self._write(reg, record)

    def encode_record(self, name: str, record: Mapping[str, Any], *, version: int | None = None) -> bytes:
        """Encode a raw record (the dict fastavro writes) with schema ``name`` at ``version``.

        ``schema_version`` is filled in.  For tools and compatibility tests; services
        should encode dataclasses with :meth:`encode`, which also checks invariants.
        """
        reg = self.registered(name, version)
        return self._write(reg, self._checked(reg, record))

    def _checked(self, reg: RegisteredSchema, record: Mapping[str, Any]) -> dict[str, Any]:
        what = f"{reg.name} v{reg.version}"
        data = {**record, "schema_version": reg.version}
        unknown = sorted(set(data) - {f["name"] for f in reg.schema["fields"]})
        if unknown:
            raise ValueError(f"cannot encode {what}: unknown fields {unknown}")
        # Asked for a yes or no first: with raise_errors every optional field that is set fails its union's
        # "null" branch with an exception that serialises its data to JSON (4 % of a busy import's time).
        if validate(data, reg.parsed, raise_errors=False):
            return data
        try:
            validate(data, reg.parsed, raise_errors=True)
        except ValidationError as exc:
            raise ValueError(f"cannot encode {what}: {_describe(exc)}") from None
        raise ValueError(f"cannot encode {what}: it does not match the schema")

    def _write(self, reg: RegisteredSchema, data: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        buf.write(MAGIC)
        buf.write(reg.fingerprint)
        try:
            schemaless_writer(buf, reg.parsed, data, disable_tuple_notation=True)
        except Exception as exc:  # validate() should have caught it; keep the ValueError contract anyway
            raise ValueError(f"cannot encode {reg.name} v{reg.version}: {type(exc).__name__}: {exc}") from exc
        out = buf.getvalue()
        if len(out) > self.max_bytes:
            raise EventTooLarge(reg.name, len(out), self.max_bytes)
        return out

    def headers(self, event: Event) -> list[tuple[str, bytes]]:
        """Kafka headers to send with ``encode(event)``: schema name, version, content type."""
        return [
            (HEADER_SCHEMA, event.SCHEMA_NAME.encode()),
            (HEADER_SCHEMA_VERSION, str(event.SCHEMA_VERSION).encode()),
            (HEADER_CONTENT_TYPE, CONTENT_TYPE.encode()),
        ]

    # ------------------------------------------------------------------ decode

    def identify(self, data: bytes | bytearray | memoryview) -> RegisteredSchema:
        """The writer schema of a message, from its header only; :class:`MalformedEvent` if unknown."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise MalformedEvent(f"event must be bytes, got {type(data).__name__}")
        view = memoryview(data)
        if len(view) < HEADER_SIZE:
            raise MalformedEvent(
                f"event too short: {len(view)} bytes, "
                f"an Avro single-object message has at least {HEADER_SIZE}"
            )
        if view[:2] != MAGIC:
            raise MalformedEvent(
                f"missing Avro single-object marker c301 (got {bytes(view[:2]).hex()}): "
                "not a secondbrain event"
            )
        fp = bytes(view[2:HEADER_SIZE])
        reg = self._by_fingerprint.get(fp)
        if reg is None:
            raise MalformedEvent(
                f"unknown writer schema fingerprint {fp.hex()} (not a registered schema version)"
            )
        return reg

    def decode_record(self, data: bytes | bytearray | memoryview) -> tuple[RegisteredSchema, dict[str, Any]]:
        """Decode to the writer's schema entry and the raw record resolved to the latest version."""
        writer = self.identify(data)
        body = memoryview(data)[HEADER_SIZE:]
        return writer, self._read_body(writer, body)

    @overload
    def decode(self, data: bytes | bytearray | memoryview, expected: None = None) -> Event: ...

    @overload
    def decode(self, data: bytes | bytearray | memoryview, expected: type[E]) -> E: ...

    def decode(self, data: bytes | bytearray | memoryview, expected: type[Event] | None = None) -> Event:
        """Decode a message into its event dataclass.

        The body is read with the writer schema named by the fingerprint and resolved
        against the latest version of that event.  Every problem with the bytes (short,
        no marker, unknown fingerprint, corrupt or truncated body, trailing bytes, wrong
        event type when ``expected`` is given, failed :meth:`Event.validate`) raises
        :class:`MalformedEvent` and nothing else.
        """
        writer = self.identify(data)
        cls = EVENTS_BY_NAME.get(writer.name)
        if cls is None:
            raise MalformedEvent(f"no event class for schema {writer.name!r}")
        if expected is not None and not issubclass(cls, expected):
            raise MalformedEvent(
                f"expected a {expected.SCHEMA_NAME or expected.__name__} event, "
                f"got {writer.name} v{writer.version}"
            )
        record = self._read_body(writer, memoryview(data)[HEADER_SIZE:])
        try:
            event = cls.from_record(record)
        except Exception as exc:
            raise MalformedEvent(
                f"{writer.name} v{writer.version}: cannot build {cls.__name__}: {exc}"
            ) from exc
        try:
            event.validate()
        except Exception as exc:
            raise MalformedEvent(f"invalid {writer.name} v{writer.version} event: {exc}") from exc
        return event

    def _read_body(self, writer: RegisteredSchema, body: memoryview) -> dict[str, Any]:
        reader = self.registered(writer.name)
        buf = io.BytesIO(body)
        what = f"{writer.name} v{writer.version}"
        try:
            record = schemaless_reader(
                buf,
                writer.parsed,
                None if reader is writer else reader.parsed,
            )
        # fastavro raises many types on bad input (EOFError, UnicodeDecodeError, IndexError,
        # OverflowError, struct.error...); callers must only ever see MalformedEvent.
        except Exception as exc:
            raise MalformedEvent(f"corrupt or truncated {what} body: {type(exc).__name__}: {exc}") from exc
        trailing = len(body) - buf.tell()
        if trailing:
            raise MalformedEvent(f"{trailing} trailing bytes after the {what} body")
        if not isinstance(record, dict):
            raise MalformedEvent(f"{what} body did not decode to a record")
        return record
