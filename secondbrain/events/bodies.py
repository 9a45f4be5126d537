"""A document's body as it travels from the extractor to the chunker: the full text once, and segments
that point into it.

From ``document_extracted`` version 2 on, the text is in the event's ``text`` field (or in the
claim-check object ``{"text": ..., "segments": [...]}``) and each segment carries only its offsets; a
consumer slices segment texts out of it.  Version-1 producers sent each segment's text instead, and
:func:`reconstruct` rebuilds the full text for those (consumers read the version before theirs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from secondbrain.errors import PermanentError
from secondbrain.events.models import Segment


def without_texts(segments: Sequence[Segment]) -> list[Segment]:
    """Segments as they travel next to the full text: offsets only."""
    return [replace(s, text="") for s in segments]


def with_texts(text: str, segments: Sequence[Segment]) -> list[Segment]:
    """Segments with their text sliced out of the document's full text (a view, nothing rebuilt)."""
    out = []
    for s in segments:
        if not 0 <= s.char_start <= s.char_end <= len(text):
            raise PermanentError(f"segment {s.index} has offsets outside the document's text")
        out.append(replace(s, text=text[s.char_start:s.char_end]))
    return out


def pack(text: str, segments: Sequence[Segment]) -> dict[str, Any]:
    """The claim-check object of a document too large for one message."""
    return {"text": text, "segments": [s.to_record() for s in without_texts(segments)]}


def unpack(body: Any) -> tuple[str | None, list[Segment]]:
    """The text (None for a version-1 body) and segments of a claim-check object."""
    if isinstance(body, dict):
        return str(body.get("text") or ""), [Segment.from_record(r) for r in body.get("segments") or []]
    return None, [Segment.from_record(r) for r in body]


def reconstruct(segments: Sequence[Segment]) -> str:
    """The full text of a version-1 document from its segments' texts placed at their offsets (gaps become
    newlines).  Segments that overlap (extractors make none) are written in order of their start."""
    parts: list[str] = []
    end = 0
    for s in sorted(segments, key=lambda seg: seg.char_start):
        if s.char_start < 0 or s.char_end - s.char_start != len(s.text):
            raise PermanentError(f"segment {s.index} has offsets that do not match its text")
        if s.char_start >= end:
            parts += ["\n" * (s.char_start - end), s.text]
        else:
            placed = "".join(parts)
            parts = [placed[:s.char_start], s.text, placed[s.char_end:]]
        end = max(end, s.char_end)
    return "".join(parts)
