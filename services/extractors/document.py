"""The one contract every extractor fulfils: raw bytes in, a document of typed blocks out.

An extractor is a pure function of the bytes and an :class:`ExtractionContext` (no broker,
no database).  It returns :class:`Extracted`: ordered :class:`Block` objects that carry
their provenance (heading path, page, time span in a recording, OCR box...), plus the
document's title, metadata and any time the content itself states.  :func:`assemble`
turns blocks into segments with exact character offsets into the document's full text,
so a chunk, and therefore a citation, can point at a span, a page or a second of audio.

Bad input raises :class:`~secondbrain.errors.PermanentError` with a sentence a
person can act on; a temporary problem (a model server down) raises ``RetryableError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from secondbrain.events.models import Recurrence, Segment

SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Block:
    """One structural piece of a document, before offsets are assigned.

    ``kind`` is one of heading|paragraph|code|list|table|quote|page|speech|ocr|text.
    ``page`` counts from 1; ``t_start``/``t_end`` are seconds from the start of a recording.
    ``attributes`` holds small extractor-specific facts as strings (heading level, code
    language, OCR confidence, detected language, speaker...).
    """

    kind: str
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    t_start: float | None = None
    t_end: float | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Extracted:
    """What an extractor found in one artifact.

    ``stated_time`` is a time the content itself states (EXIF DateTimeOriginal, PDF
    CreationDate, an audio tag, a page's published date); ``stated_time_source`` says which
    kind it is: ``file_metadata`` or ``published``.  ``recording_start`` is the wall-clock
    time at second 0 of a recording, when known, so speech can get absolute times.  ``recurrence``:
    the document is a recurring event, kept as one (a calendar's series imported as a note).
    """

    title: str | None
    modality: str
    blocks: list[Block]
    metadata: dict[str, str] = field(default_factory=dict)
    stated_time: datetime | None = None
    stated_time_source: str = "file_metadata"
    language: str | None = None
    recording_start: datetime | None = None
    recurrence: Recurrence | None = None  # the document is a recurring event (a note's front matter says so)
    tags: list[str] = field(default_factory=list)  # the tags the document brings (a note's front matter)


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """What an extractor may know besides the bytes."""

    content_type: str
    filename: str | None = None
    source_uri: str = ""
    is_note: bool = False


class Extractor(Protocol):
    """Turns the bytes of one format family into an :class:`Extracted` document."""

    modality: str

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract ``raw``; raise ``PermanentError`` for bad input, ``RetryableError`` for outages."""
        ...


def assemble(blocks: list[Block]) -> tuple[list[Segment], str]:
    """Give blocks offsets in the full text (blocks joined by a blank line): the document's segments, the
    one shape a piece of text keeps from here to the chunker, and the full text they point into."""
    segments: list[Segment] = []
    pos = 0
    pieces: list[str] = []
    for idx, b in enumerate(blocks):
        if idx:
            pieces.append(SEPARATOR)
            pos += len(SEPARATOR)
        segments.append(Segment(index=idx, kind=b.kind, text=b.text, char_start=pos, char_end=pos + len(b.text),
                                heading_path=list(b.heading_path), page=b.page, t_start=b.t_start, t_end=b.t_end,
                                attributes=dict(b.attributes)))
        pieces.append(b.text)
        pos += len(b.text)
    return segments, "".join(pieces)
