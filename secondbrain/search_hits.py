"""A passage found for a query, as the query service and the agenda show and cite it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from secondbrain.events.models import Recurrence, TimeMention, WordTime
from secondbrain.passage import IndexedPassage, mention_json, shown_attributes
from secondbrain.temporal import recurrence
from secondbrain.titles import display_title


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A chunk found for a query, with everything needed to show and cite it."""

    chunk_id: str
    score: float
    text: str
    title: str
    document_id: str
    artifact_id: str
    source_id: str
    modality: str
    captured_at: str
    ingested_at: str
    char_start: int
    char_end: int
    heading_path: list[str]
    page: int | None
    t_start: float | None
    t_end: float | None
    source_uri: str = ""
    captured_at_source: str = ""
    at_start: str | None = None  # wall-clock time of t_start, for recordings whose start is known
    at_end: str | None = None
    chunk_index: int = 0
    token_count: int = 0
    kind: str = ""
    attributes: dict[str, str] = field(default_factory=dict)  # other small facts
    mentions: list[TimeMention] = field(default_factory=list)  # times the passage speaks of
    speakers: tuple[str, ...] = ()  # a chat chunk's speakers
    turn_ids: tuple[str, ...] = ()  # a chat chunk's turns
    links: tuple[str, ...] = ()  # what a Markdown passage links to
    tags: tuple[str, ...] = ()  # the tags of the note the passage is from
    word_times: tuple[WordTime, ...] = ()  # when a recording's words are said
    recurrence: Recurrence | None = None  # the passage is of a recurring event (kept as one)
    occurrence: str | None = None  # its occurrence in the window a search asked about (RFC 3339)

    def to_json(self) -> dict[str, Any]:
        """JSON form for the API."""
        return {
            "chunk_id": self.chunk_id, "score": round(self.score, 6), "text": self.text, "title": self.title,
            "document_id": self.document_id, "artifact_id": self.artifact_id, "source_id": self.source_id,
            "modality": self.modality, "captured_at": self.captured_at, "ingested_at": self.ingested_at,
            "char_start": self.char_start, "char_end": self.char_end, "heading_path": self.heading_path,
            "page": self.page, "t_start": self.t_start, "t_end": self.t_end, "source_uri": self.source_uri,
            "captured_at_source": self.captured_at_source, "at_start": self.at_start, "at_end": self.at_end,
            "chunk_index": self.chunk_index, "token_count": self.token_count, "kind": self.kind,
            "speakers": list(self.speakers), "turn_ids": list(self.turn_ids), "links": list(self.links),
            "word_times": [{"offset": w.offset, "second": w.second} for w in self.word_times],
            # the same lists joined in the attributes, as clients before the lists read them (a note's tags
            # only there: the search route's ``tags`` are the source's own, as the person keeps them)
            "attributes": shown_attributes(self.attributes, speakers=self.speakers, turn_ids=self.turn_ids,
                                           links=self.links, word_times=self.word_times, tags=self.tags),
            "mentions": [mention_json(m) for m in self.mentions],
            **({"repeats": recurrence.describe(self.recurrence), "occurrence": self.occurrence}
               if self.recurrence is not None else {}),
        }


def hit_from_payload(point_id: str, score: float, payload: dict[str, Any]) -> SearchHit:
    """Build a hit from a stored payload."""
    return hit_from_passage(IndexedPassage.from_payload(payload, point_id), score)


def hit_from_passage(p: IndexedPassage, score: float) -> SearchHit:
    """A hit showing passage ``p``."""
    return SearchHit(
        chunk_id=p.chunk_id, score=score, text=p.text, title=display_title(p.title, p.source_uri) or "",
        document_id=p.document_id, artifact_id=p.artifact_id, source_id=p.source_id, modality=p.modality,
        captured_at=p.captured_at, ingested_at=p.ingested_at, char_start=p.char_start, char_end=p.char_end,
        heading_path=list(p.heading_path), page=p.page, t_start=p.t_start, t_end=p.t_end, source_uri=p.source_uri,
        captured_at_source=p.captured_at_source, at_start=p.at_start, at_end=p.at_end, chunk_index=p.chunk_index,
        token_count=p.token_count, kind=p.kind, attributes=dict(p.attributes), mentions=list(p.mentions),
        speakers=p.speakers, turn_ids=p.turn_ids, links=p.links, tags=p.tags, word_times=p.word_times,
        recurrence=p.recurrence,
    )


def said_at(hit: SearchHit) -> datetime | None:
    """When a passage was said: the moment in a recording whose start is known, else its record's time
    (``None`` when neither reads as a time)."""
    for value in (hit.at_start, hit.captured_at):
        if value:
            try:
                return datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
    return None
