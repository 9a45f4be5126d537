"""A passage found for a query, as the query service and the agenda show and cite it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    attributes: dict[str, str] = field(default_factory=dict)  # e.g. a chat chunk's turn_ids and speakers
    mentions: list[dict[str, str]] = field(default_factory=list)  # times the passage speaks of: start, end, expression

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
            "attributes": self.attributes, "mentions": self.mentions,
        }


def hit_from_payload(point_id: str, score: float, p: dict[str, Any]) -> SearchHit:
    """Build a hit from a stored payload."""
    return SearchHit(
        chunk_id=str(p.get("chunk_id", point_id)), score=score, text=p.get("text", ""),
        title=display_title(p.get("title"), p.get("source_uri")) or "",
        document_id=p.get("document_id", ""), artifact_id=p.get("artifact_id", ""),
        source_id=p.get("source_id", ""), modality=p.get("modality", ""), captured_at=p.get("captured_at", ""),
        ingested_at=p.get("ingested_at", ""), char_start=int(p.get("char_start", 0)),
        char_end=int(p.get("char_end", 0)), heading_path=list(p.get("heading_path") or []),
        page=p.get("page"), t_start=p.get("t_start"), t_end=p.get("t_end"), source_uri=p.get("source_uri", ""),
        captured_at_source=p.get("captured_at_source", ""), at_start=p.get("at_start"), at_end=p.get("at_end"),
        chunk_index=int(p.get("chunk_index", 0)), token_count=int(p.get("token_count", 0)),
        kind=str(p.get("kind") or ""), attributes={str(k): str(v) for k, v in (p.get("attributes") or {}).items()},
        mentions=[{"start": str(m.get("start", "")), "end": str(m.get("end", "")),
                   "expression": str(m.get("expression", ""))} for m in (p.get("mentions") or [])],
    )
