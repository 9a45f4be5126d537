"""The pipeline's events as frozen dataclasses, one per Avro schema in ``schemas/``.

Field names match the Avro schemas one to one (except ``schema_version``, which the
codec writes from :attr:`Event.SCHEMA_VERSION`).  Timestamps are timezone-aware
``datetime`` objects; decoded ones are always in UTC.

Enumerated values (modality, stage, status...) are plain strings in the schemas so a
newer producer can add a value without breaking older consumers; the constants below
list the values known today and are deliberately *not* enforced by :meth:`Event.validate`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar, Literal, Self

MODALITIES: frozenset[str] = frozenset({"note", "text", "markdown", "pdf", "web", "audio", "image", "office"})
SEGMENT_KINDS: frozenset[str] = frozenset(
    {"heading", "paragraph", "code", "list", "table", "quote", "page", "speech", "ocr", "text", "turn"}
)
CAPTURED_AT_SOURCES: frozenset[str] = frozenset({"user", "file_metadata", "published", "ingested"})
JOB_STATUSES: frozenset[str] = frozenset(
    {"queued", "running", "succeeded", "failed", "retrying", "duplicate", "dead_lettered"}
)
ERROR_KINDS: frozenset[str] = frozenset({"permanent", "retries_exhausted", "malformed", "unauthorized"})
#: What kind of capture an artifact is (``ArtifactSubmitted.capture``); "" when a producer did not say.
CaptureKind = Literal["", "note", "upload", "page", "import"]
CAPTURE_KINDS: frozenset[str] = frozenset({"note", "upload", "page", "import"})


def unsaid_capture(source_uri: str, attributes: Mapping[str, str]) -> CaptureKind:
    """The capture kind of an artifact whose producer did not say (version 1 events, artifacts stored before):
    a ``note:`` address or a ``kind=note`` attribute marks a note, ``kind=page`` a page the browser sent."""
    if source_uri.startswith("note:") or attributes.get("kind") == "note":
        return "note"
    return "page" if attributes.get("kind") == "page" else ""

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def _to_avro(value: Any) -> Any:
    """Convert a dataclass field value into what fastavro writes (copies containers)."""
    if isinstance(value, Record):
        return value.to_record()
    if isinstance(value, list | tuple):
        return [_to_avro(v) for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


@dataclass(frozen=True, slots=True)
class Record:
    """Base of every Avro record dataclass: generic conversion to and from fastavro dicts."""

    # Fields holding arrays of nested records, mapped to the nested record class.
    _NESTED: ClassVar[Mapping[str, type[Record]]] = {}
    # Fields holding one nested record or null, mapped to its class.
    _ONE: ClassVar[Mapping[str, type[Record]]] = {}

    def to_record(self) -> dict[str, Any]:
        """The dict fastavro writes for this record (nested records converted too)."""
        return {f.name: _to_avro(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """Build the dataclass from a dict fastavro read.

        Keys the dataclass does not know (``schema_version``, fields of a newer schema
        version) are ignored; a missing required key raises ``TypeError``.
        """
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in record:
                continue
            value = record[f.name]
            nested = cls._NESTED.get(f.name)
            one = cls._ONE.get(f.name)
            if nested is not None:
                value = [nested.from_record(item) for item in value]
            elif one is not None:
                value = None if value is None else one.from_record(value)
            elif isinstance(value, list):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            kwargs[f.name] = value
        return cls(**cls._upgraded(kwargs))

    @classmethod
    def _upgraded(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The constructor arguments of a record read from an older shape (unchanged by default)."""
        return kwargs


@dataclass(frozen=True, slots=True)
class Event(Record):
    """Base of every top-level event.

    Subclasses set ``SCHEMA_NAME`` (the file stem before ``.v<N>.avsc``) and
    ``SCHEMA_VERSION`` (the schema version this class is written against and encoded with).
    """

    SCHEMA_NAME: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1

    def validate(self) -> None:
        """Check invariants the Avro schema cannot express; raise ``ValueError`` when violated."""
        for f in fields(self):
            value = getattr(self, f.name)
            # fastavro would silently read a naive datetime as UTC; refuse the ambiguity.
            if isinstance(value, datetime) and value.utcoffset() is None:
                raise ValueError(f"{self.SCHEMA_NAME}.{f.name} must be a timezone-aware datetime")
        self._check()

    def _check(self) -> None:
        """Event-specific invariants (overridden by subclasses)."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


# --------------------------------------------------------------------------- artifact_submitted


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactSubmitted(Event):
    """A raw artifact handed to the pipeline (public contract, see ``schemas/artifact_submitted.v2.avsc``).

    Exactly one of ``object_key`` (claim check) and ``content`` (inline bytes) is set.
    """

    SCHEMA_NAME: ClassVar[str] = "artifact_submitted"
    SCHEMA_VERSION: ClassVar[int] = 2

    event_id: str
    user_id: str
    source_uri: str
    content_type: str
    size_bytes: int
    submitted_at: datetime
    producer: str
    job_id: str | None = None
    source_id: str | None = None
    artifact_id: str | None = None
    filename: str | None = None
    title: str | None = None
    object_key: str | None = None
    content: bytes | None = None
    sha256: str | None = None
    captured_at: datetime | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    capture: CaptureKind = ""  # v2

    def __post_init__(self) -> None:
        # A producer that does not say (a v1 event, code written before) gets the kind its address and
        # attributes mark, so a note is a note however it arrives.
        # Fields of the wrong type are left for the codec to name.
        if not self.capture and isinstance(self.source_uri, str) and isinstance(self.attributes, Mapping):
            object.__setattr__(self, "capture", unsaid_capture(self.source_uri, self.attributes))

    def _check(self) -> None:
        name = self.SCHEMA_NAME
        for attr in ("event_id", "user_id", "source_uri", "content_type", "producer"):
            _require(bool(getattr(self, attr)), f"{name}.{attr} must not be empty")
        _require((self.object_key is None) != (self.content is None),
                 f"{name}: exactly one of object_key and content must be set "
                 f"(object_key={'set' if self.object_key is not None else 'null'}, "
                 f"content={'set' if self.content is not None else 'null'})")
        _require(self.object_key is None or bool(self.object_key), f"{name}.object_key must not be empty")
        _require(self.size_bytes >= 0, f"{name}.size_bytes must be >= 0, got {self.size_bytes}")
        if self.content is not None:
            _require(len(self.content) == self.size_bytes,
                     f"{name}.size_bytes is {self.size_bytes} but content has {len(self.content)} bytes")
        if self.sha256 is not None:
            _require(_SHA256_HEX.fullmatch(self.sha256) is not None,
                     f"{name}.sha256 must be 64 lower-case hex characters, got {self.sha256!r}")


# --------------------------------------------------------------------------- url_requested


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlRequested(Event):
    """A web page to fetch and ingest (see ``schemas/url_requested.v1.avsc``)."""

    SCHEMA_NAME: ClassVar[str] = "url_requested"
    SCHEMA_VERSION: ClassVar[int] = 1

    event_id: str
    job_id: str
    user_id: str
    url: str
    requested_at: datetime
    producer: str
    title: str | None = None
    captured_at: datetime | None = None
    attributes: dict[str, str] = field(default_factory=dict)

    def _check(self) -> None:
        name = self.SCHEMA_NAME
        for attr in ("event_id", "job_id", "user_id", "url", "producer"):
            _require(bool(getattr(self, attr)), f"{name}.{attr} must not be empty")
        _require(self.url.lower().startswith(("http://", "https://")),
                 f"{name}.url must be an http or https URL, got {self.url[:100]!r}")
        _require(len(self.url) <= 8192, f"{name}.url is longer than 8192 characters")


# --------------------------------------------------------------------------- recurrence


@dataclass(frozen=True, slots=True, kw_only=True)
class Moved(Record):
    """An occurrence of a series that happens at another time (an iCalendar override)."""

    original: datetime  # the occurrence it replaces
    start: datetime
    end: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Recurrence(Record):
    """A recurring event kept as one (RFC 5545): see ``schemas/document_extracted.v3.avsc``.  Its occurrences
    are worked out for a window when asked (:mod:`secondbrain.temporal.recurrence`), never ahead of time."""

    start: datetime  # the first occurrence (DTSTART); an all-day series: midnight of its first day in ``zone``
    zone: str  # the IANA zone whose wall clock the rules repeat in
    all_day: bool = False
    duration_s: int = 0
    rules: list[str] = field(default_factory=list)  # RRULE values, defaults written out, COUNT made UNTIL
    dates: list[datetime] = field(default_factory=list)  # RDATE
    exceptions: list[datetime] = field(default_factory=list)  # EXDATE and the cancelled
    moved: list[Moved] = field(default_factory=list)
    until: datetime | None = None  # no occurrence starts after this; None: endless
    count: int | None = None  # the COUNT the calendar wrote
    capped: bool = False  # kept up to secondbrain's cap, not to its own end

    _NESTED: ClassVar[Mapping[str, type[Record]]] = {"moved": Moved}


# --------------------------------------------------------------------------- document_extracted


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment(Record):
    """A structural piece of a document's text; offsets index the document's full text."""

    index: int
    kind: str
    text: str
    char_start: int
    char_end: int
    heading_path: list[str] = field(default_factory=list)
    page: int | None = None
    t_start: float | None = None
    t_end: float | None = None
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentExtracted(Event):
    """The text of one artifact as ordered segments (or a claim check in ``body_ref``)."""

    SCHEMA_NAME: ClassVar[str] = "document_extracted"
    SCHEMA_VERSION: ClassVar[int] = 4
    _NESTED: ClassVar[Mapping[str, type[Record]]] = {"segments": Segment}
    _ONE: ClassVar[Mapping[str, type[Record]]] = {"recurrence": Recurrence}

    event_id: str
    job_id: str
    user_id: str
    artifact_id: str
    source_id: str
    document_id: str
    title: str
    modality: str
    content_type: str
    captured_at: datetime
    captured_at_source: str
    ingested_at: datetime
    text_length: int
    segments: list[Segment] = field(default_factory=list)
    body_ref: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    text: str = ""  # the full text, once (version 2); segments point into it
    source_uri: str = ""
    version: int = 1
    recording_start: datetime | None = None
    recurrence: Recurrence | None = None  # v3: a recurring event, kept as one
    tags: list[str] = field(default_factory=list)  # v4: the tags the document brings (a note's front matter)

    @classmethod
    def _upgraded(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Before v4 a note's tags came space-joined in ``metadata["tags"]`` (still written, for those readers)."""
        if kwargs.get("tags"):
            return kwargs
        return {**kwargs, "tags": ((kwargs.get("metadata") or {}).get(TAGS) or "").split()}

    def _check(self) -> None:
        name = self.SCHEMA_NAME
        _require(self.text_length >= 0, f"{name}.text_length must be >= 0, got {self.text_length}")
        _require(self.version >= 1, f"{name}.version must be >= 1, got {self.version}")
        if self.body_ref is not None:
            _require(not self.segments and not self.text,
                     f"{name}: segments and text must be empty when body_ref is set")
        elif self.text:
            _require(len(self.text) == self.text_length,
                     f"{name}: text has {len(self.text)} characters but text_length says {self.text_length}")
        for seg in self.segments:
            _require(0 <= seg.char_start <= seg.char_end <= self.text_length,
                     f"{name}: segment {seg.index} has offsets [{seg.char_start}, {seg.char_end}) "
                     f"outside the text of length {self.text_length}")


# --------------------------------------------------------------------------- chunks_created


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeMention(Record):
    """A time a chunk speaks of ("yesterday", "on 3 May"), resolved against the chunk's own time."""

    start: datetime  # inclusive
    end: datetime  # exclusive
    expression: str

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """From fastavro's dict, or from a claim check's JSON (times as ISO 8601 strings)."""
        def when(value: Any) -> datetime:
            return datetime.fromisoformat(value) if isinstance(value, str) else value

        return cls(start=when(record["start"]), end=when(record["end"]), expression=str(record["expression"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class WordTime(Record):
    """When a word of a recording's passage is said: where it starts in the passage's text, and the second."""

    offset: int
    second: float


#: Where chunk events before v6 (and payloads stored then) kept a recording's word times: compact JSON.
WORD_TIMES = "word_times"


def word_time_pairs(word_times: Sequence[WordTime]) -> list[list[float]]:
    """``[[offset, second], ...]``: how a passage payload and the attribute shown before v6 write them."""
    return [[w.offset, w.second] for w in word_times]


def word_times_from_pairs(rows: Any) -> list[WordTime]:
    """Word times from ``[[offset, second], ...]`` pairs, sorted by offset; empty when not of that shape, and
    without negative or non-finite seconds (a stored payload must not carry them back in)."""
    try:
        marks = [(int(r[0]), float(r[1])) for r in rows or ()]
    except (ValueError, TypeError, IndexError, KeyError):
        return []
    return [WordTime(offset=at, second=s) for at, s in sorted(marks) if math.isfinite(s) and s >= 0]


def read_word_times(raw: str) -> list[WordTime]:
    """Word times kept as compact JSON ``[[offset, second], ...]`` (before v6); see :func:`word_times_from_pairs`."""
    if not raw:
        return []
    try:
        rows = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    return word_times_from_pairs(rows)


def lift_word_times(attributes: Mapping[str, str]) -> tuple[dict[str, str], list[WordTime]]:
    """The attributes without ``word_times``, and the word times they held (see :func:`read_word_times`)."""
    rest = {k: v for k, v in attributes.items() if k != WORD_TIMES}
    return rest, read_word_times(attributes.get(WORD_TIMES, ""))


#: Where chunk events before v8 (and payloads stored then) kept a note's tags: space-joined.
TAGS = "tags"


def lift_tags(attributes: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The attributes without ``tags``, and the tags they held (``"garden plans"``: two tags)."""
    rest = {k: v for k, v in attributes.items() if k != TAGS}
    return rest, tuple(attributes.get(TAGS, "").split())


#: How chunk events before v5 (and payloads stored then) joined a chunk's lists in its attributes.
_JOINED: tuple[tuple[str, str], ...] = (("speakers", ","), ("turn_ids", " "), ("links", " | "))


def lift_list_attributes(
        attributes: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The attributes without the joined lists, then the speakers, turn ids and links they held
    (``"Ana, Bo"``, ``"t1 t2"``, ``"a | b"``); empty lists when absent."""
    rest = {k: v for k, v in attributes.items() if k not in dict(_JOINED)}
    speakers, turn_ids, links = (
        tuple(p.strip() for p in (attributes.get(name) or "").split(sep) if p.strip()) for name, sep in _JOINED)
    return rest, speakers, turn_ids, links


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk(Record):
    """A passage embedded and indexed as one vector point (``chunk_id`` is the point id)."""

    chunk_id: str
    index: int
    text: str
    char_start: int
    char_end: int
    token_count: int
    heading_path: list[str]
    kind: str
    page: int | None = None
    t_start: float | None = None
    t_end: float | None = None
    attributes: dict[str, str] = field(default_factory=dict)  # v3: small facts (a note's tags, before v8)
    mentions: list[TimeMention] = field(default_factory=list)  # v4: times the chunk speaks of
    speakers: list[str] = field(default_factory=list)  # v5: a chat chunk's speakers, in order of first turn
    turn_ids: list[str] = field(default_factory=list)  # v5: a chat chunk's turns, when the transcript gave ids
    links: list[str] = field(default_factory=list)  # v5: what a Markdown passage links to
    word_times: list[WordTime] = field(default_factory=list)  # v6: when a recording's words are said
    tags: list[str] = field(default_factory=list)  # v8: the tags of the note the passage is from

    _NESTED: ClassVar[Mapping[str, type[Record]]] = {"mentions": TimeMention, "word_times": WordTime}

    @classmethod
    def _upgraded(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """A v3/v4 chunk (or a claim check written then) kept its lists joined in ``attributes``, a v3-v5
        one its word times as JSON there, and a v3-v7 one its note's tags space-joined there."""
        rest, speakers, turn_ids, links = lift_list_attributes(kwargs.get("attributes") or {})
        rest, word_times = lift_word_times(rest)
        rest, tags = lift_tags(rest)
        return {**kwargs, "attributes": rest, "speakers": kwargs.get("speakers") or list(speakers),
                "turn_ids": kwargs.get("turn_ids") or list(turn_ids), "links": kwargs.get("links") or list(links),
                "word_times": kwargs.get("word_times") or word_times, "tags": kwargs.get("tags") or list(tags)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunksCreated(Event):
    """A document split into chunks (or a claim check in ``chunks_ref``)."""

    SCHEMA_NAME: ClassVar[str] = "chunks_created"
    SCHEMA_VERSION: ClassVar[int] = 8
    _NESTED: ClassVar[Mapping[str, type[Record]]] = {"chunks": Chunk}
    _ONE: ClassVar[Mapping[str, type[Record]]] = {"recurrence": Recurrence}

    event_id: str
    job_id: str
    user_id: str
    artifact_id: str
    source_id: str
    document_id: str
    title: str
    modality: str
    content_type: str
    captured_at: datetime
    ingested_at: datetime
    chunk_count: int
    chunks: list[Chunk] = field(default_factory=list)
    chunks_ref: str | None = None
    source_uri: str = ""
    captured_at_source: str = ""
    recording_start: datetime | None = None
    version: int = 1
    recurrence: Recurrence | None = None  # v7: a recurring event, kept as one

    def _check(self) -> None:
        name = self.SCHEMA_NAME
        _require(self.chunk_count >= 0, f"{name}.chunk_count must be >= 0, got {self.chunk_count}")
        if self.chunks_ref is not None:
            _require(not self.chunks, f"{name}: chunks must be empty when chunks_ref is set")
        else:
            _require(self.chunk_count == len(self.chunks),
                     f"{name}.chunk_count is {self.chunk_count} but {len(self.chunks)} chunks are inline")


# --------------------------------------------------------------------------- chunks_indexed


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunksIndexed(Event):
    """A document's chunks written to the user's vector collection."""

    SCHEMA_NAME: ClassVar[str] = "chunks_indexed"
    SCHEMA_VERSION: ClassVar[int] = 1

    event_id: str
    job_id: str
    user_id: str
    document_id: str
    collection: str
    chunk_count: int
    point_ids: list[str]
    embedding_model: str
    indexed_at: datetime

    def _check(self) -> None:
        _require(self.chunk_count >= 0,
                 f"{self.SCHEMA_NAME}.chunk_count must be >= 0, got {self.chunk_count}")


# --------------------------------------------------------------------------- job_status


@dataclass(frozen=True, slots=True, kw_only=True)
class JobStatusChanged(Event):
    """A change of a job's progress at one stage."""

    SCHEMA_NAME: ClassVar[str] = "job_status"
    SCHEMA_VERSION: ClassVar[int] = 1

    event_id: str
    job_id: str
    user_id: str
    stage: str
    status: str
    occurred_at: datetime
    detail: str | None = None
    attempt: int = 0

    def _check(self) -> None:
        _require(self.attempt >= 0, f"{self.SCHEMA_NAME}.attempt must be >= 0, got {self.attempt}")


# --------------------------------------------------------------------------- dead_letter


@dataclass(frozen=True, slots=True, kw_only=True)
class DeadLetter(Event):
    """A message a stage gave up on, kept byte for byte for inspection and replay."""

    SCHEMA_NAME: ClassVar[str] = "dead_letter"
    SCHEMA_VERSION: ClassVar[int] = 1

    event_id: str
    stage: str
    original_topic: str
    original_partition: int
    original_offset: int
    original_value: bytes
    error_kind: str
    error_type: str
    error_message: str
    attempts: int
    failed_at: datetime
    original_key: bytes | None = None
    original_headers: dict[str, str] = field(default_factory=dict)
    job_id: str | None = None
    user_id: str | None = None


# --------------------------------------------------------------------------- registry

EVENT_TYPES: tuple[type[Event], ...] = (
    ArtifactSubmitted,
    UrlRequested,
    DocumentExtracted,
    ChunksCreated,
    ChunksIndexed,
    JobStatusChanged,
    DeadLetter,
)

EVENTS_BY_NAME: Mapping[str, type[Event]] = {cls.SCHEMA_NAME: cls for cls in EVENT_TYPES}


def event_class(schema_name: str) -> type[Event]:
    """The event class for a schema name; raise ``KeyError`` for an unknown name."""
    try:
        return EVENTS_BY_NAME[schema_name]
    except KeyError:
        raise KeyError(f"no event class for schema {schema_name!r}") from None


def schema_name(event: Event | type[Event]) -> str:
    """The schema name of an event instance or class."""
    return event.SCHEMA_NAME
