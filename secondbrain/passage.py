"""The indexed passage: one chunk as kept in a user's vector collection and shown with a search hit.

:class:`IndexedPassage` is the one description of the vector payload: :meth:`IndexedPassage.to_payload`
writes it and :meth:`IndexedPassage.from_payload` reads it back, so the embedder, re-indexing, search
and exports all use the same typed fields instead of dict keys.

Lists are lists here and in new payloads.  Payloads written before (and chunk events before
``chunks_created`` v5) kept a chat chunk's speakers and turn ids and a note's links as joined strings
in ``attributes``, before v6 a recording's word times as JSON there, and before v8 a note's tags space-joined
there; :func:`lift_list_attributes`, :func:`lift_word_times` and :func:`lift_tags` read those, so points already
stored keep working.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from secondbrain.events.models import (
    WORD_TIMES,
    Recurrence,
    TimeMention,
    WordTime,
    lift_list_attributes,
    lift_tags,
    lift_word_times,
    word_time_pairs,
    word_times_from_pairs,
)
from secondbrain.temporal import recurrence
from secondbrain.temporal.mentions import mention_points
from secondbrain.time_formats import rfc3339  # re-exported: the payload's times are written this way

#: Payload fields the vector stores index and filter by keyword (exact match).
KEYWORD_FIELDS: tuple[str, ...] = ("user_id", "document_id", "source_id", "modality")
#: Payload fields holding RFC 3339 timestamps, filtered on by range (``mentioned_at`` is a list:
#: a point matches when any of its values does).
DATETIME_FIELDS: tuple[str, ...] = ("captured_at", "ingested_at", "mentioned_at", "recurs_from", "recurs_until")
TIME_FIELDS: tuple[str, ...] = ("captured_at", "ingested_at")  # what ``VectorFilter.time_field`` may name
INTEGER_FIELDS: tuple[str, ...] = ("chunk_index",)

__all__ = ["DATETIME_FIELDS", "INTEGER_FIELDS", "KEYWORD_FIELDS", "TIME_FIELDS", "IndexedPassage", "embedding_text",
           "lift_list_attributes", "mention_json", "rfc3339", "shown_attributes"]


def _text(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _when(value: Any) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _series(value: Any) -> Recurrence | None:
    """A stored payload's series (None for a passage of anything else, or one this cannot read)."""
    if not isinstance(value, Mapping):
        return None
    try:
        return recurrence.loaded(value)
    except (KeyError, TypeError, ValueError):
        return None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _tags(value: Any) -> tuple[str, ...]:
    """A payload's tags: a list, or (as a payload written with them joined) a string of words."""
    return tuple(value.split()) if isinstance(value, str) else _strings(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexedPassage:
    """A chunk with everything search needs to show and cite it without another lookup.

    Times of the chunk itself are RFC 3339 UTC strings, exactly as stored (the store's range filters
    compare those strings); the times it speaks of are :class:`TimeMention` values.
    """

    chunk_id: str
    user_id: str = ""
    document_id: str = ""
    artifact_id: str = ""
    source_id: str = ""
    job_id: str = ""
    chunk_index: int = 0
    title: str = ""
    modality: str = ""
    content_type: str = ""
    captured_at: str = ""
    ingested_at: str = ""
    text: str = ""
    char_start: int = 0
    char_end: int = 0
    heading_path: tuple[str, ...] = ()
    kind: str = ""
    page: int | None = None
    t_start: float | None = None
    t_end: float | None = None
    token_count: int = 0
    embedding_model: str = ""
    source_uri: str = ""
    captured_at_source: str = ""
    version: int = 1
    at_start: str | None = None  # wall-clock time of t_start, for recordings whose start is known
    at_end: str | None = None
    speakers: tuple[str, ...] = ()  # a chat chunk's speakers, in order of first turn
    turn_ids: tuple[str, ...] = ()  # a chat chunk's turns, when the transcript gave ids
    links: tuple[str, ...] = ()  # what a Markdown passage links to
    tags: tuple[str, ...] = ()  # the tags of the note the passage is from (its front matter's)
    attributes: Mapping[str, str] = field(default_factory=dict)  # other small facts
    mentions: tuple[TimeMention, ...] = ()  # times the passage speaks of
    word_times: tuple[WordTime, ...] = ()  # when a recording's words are said
    recurrence: Recurrence | None = None  # the document is a recurring event (its series, kept as one)

    def to_payload(self) -> dict[str, Any]:
        """The payload stored with the point (``mentioned_at``: the instants a dated search matches)."""
        out: dict[str, Any] = {
            "user_id": self.user_id, "document_id": self.document_id, "artifact_id": self.artifact_id,
            "source_id": self.source_id, "job_id": self.job_id, "chunk_id": self.chunk_id,
            "chunk_index": self.chunk_index, "title": self.title, "modality": self.modality,
            "content_type": self.content_type, "captured_at": self.captured_at, "ingested_at": self.ingested_at,
            "text": self.text, "char_start": self.char_start, "char_end": self.char_end,
            "heading_path": list(self.heading_path), "kind": self.kind, "page": self.page,
            "t_start": self.t_start, "t_end": self.t_end, "token_count": self.token_count,
            "embedding_model": self.embedding_model, "source_uri": self.source_uri,
            "captured_at_source": self.captured_at_source, "version": self.version,
        }
        if self.at_start is not None:
            out["at_start"] = self.at_start
        if self.at_end is not None:
            out["at_end"] = self.at_end
        for name, values in (("speakers", self.speakers), ("turn_ids", self.turn_ids), ("links", self.links),
                             ("tags", self.tags)):
            if values:
                out[name] = list(values)
        if self.attributes:
            out["attributes"] = dict(self.attributes)
        if self.word_times:  # pairs, not records: a passage holds up to 600 of them
            out["word_times"] = word_time_pairs(self.word_times)
        if self.mentions:
            out["mentions"] = [mention_json(m) for m in self.mentions]
            out["mentioned_at"] = [rfc3339(t) for t in mention_points([(m.start, m.end) for m in self.mentions])]
        if self.recurrence is not None:  # the series, and the span a window must overlap to hold an occurrence
            first, last = recurrence.span(self.recurrence)
            out["recurrence"] = recurrence.to_json(self.recurrence)
            out["recurs_from"], out["recurs_until"] = rfc3339(first), rfc3339(last)
        return out

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], point_id: str | None = None) -> IndexedPassage:
        """Read a stored payload, of this shape or of the ones before (lists joined in ``attributes``).
        ``point_id`` stands in for a missing ``chunk_id``."""
        p = payload
        attributes = {str(k): str(v) for k, v in (p.get("attributes") or {}).items()}
        rest, speakers, turn_ids, links = lift_list_attributes(attributes)
        rest, old_word_times = lift_word_times(rest)
        rest, old_tags = lift_tags(rest)
        return cls(
            chunk_id=_text(p.get("chunk_id"), point_id or ""), user_id=_text(p.get("user_id")),
            document_id=_text(p.get("document_id")), artifact_id=_text(p.get("artifact_id")),
            source_id=_text(p.get("source_id")), job_id=_text(p.get("job_id")),
            chunk_index=int(p.get("chunk_index") or 0), title=_text(p.get("title")),
            modality=_text(p.get("modality")), content_type=_text(p.get("content_type")),
            captured_at=_text(p.get("captured_at")), ingested_at=_text(p.get("ingested_at")),
            text=_text(p.get("text")), char_start=int(p.get("char_start") or 0), char_end=int(p.get("char_end") or 0),
            heading_path=_strings(p.get("heading_path")), kind=_text(p.get("kind")), page=p.get("page"),
            t_start=p.get("t_start"), t_end=p.get("t_end"), token_count=int(p.get("token_count") or 0),
            embedding_model=_text(p.get("embedding_model")), source_uri=_text(p.get("source_uri")),
            captured_at_source=_text(p.get("captured_at_source")), version=int(p.get("version") or 1),
            at_start=p.get("at_start"), at_end=p.get("at_end"),
            speakers=_strings(p.get("speakers")) or speakers, turn_ids=_strings(p.get("turn_ids")) or turn_ids,
            links=_strings(p.get("links")) or links, tags=_tags(p.get("tags")) or old_tags, attributes=rest,
            word_times=tuple(word_times_from_pairs(p.get("word_times")) or old_word_times),
            mentions=tuple(TimeMention(start=_when(m["start"]), end=_when(m["end"]), expression=str(m["expression"]))
                           for m in (p.get("mentions") or []) if m.get("start") and m.get("end")),
            recurrence=_series(p.get("recurrence")),
        )

    def embedding_text(self) -> str:
        """The text the models see: title and section path in front give the passage its context."""
        return embedding_text(self.title, self.heading_path, self.text)

    def shown_attributes(self) -> dict[str, str]:
        """The attributes as the API shows them (see :func:`shown_attributes`)."""
        return shown_attributes(self.attributes, speakers=self.speakers, turn_ids=self.turn_ids, links=self.links,
                                word_times=self.word_times, tags=self.tags)

    def placement(self) -> dict[str, Any]:
        """Where the passage is in its document (for exports and the passage list): the fields that are set."""
        fields = {"chunk_id": self.chunk_id, "chunk_index": self.chunk_index, "text": self.text,
                  "char_start": self.char_start, "char_end": self.char_end, "heading_path": list(self.heading_path),
                  "kind": self.kind, "page": self.page, "t_start": self.t_start, "t_end": self.t_end,
                  "at_start": self.at_start, "at_end": self.at_end, "token_count": self.token_count}
        return {k: v for k, v in fields.items() if v is not None}


def shown_attributes(attributes: Mapping[str, str], *, speakers: Sequence[str], turn_ids: Sequence[str],
                     links: Sequence[str], word_times: Sequence[WordTime] = (),
                     tags: Sequence[str] = ()) -> dict[str, str]:
    """A passage's attributes as the API has always shown them, the lists joined (speakers with ", ",
    turn ids with spaces, links with " | ", word times as compact JSON ``[[offset, second], ...]``, tags with
    spaces), so the web page, the CLI and scripts read them unchanged."""
    out = dict(attributes)
    if tags:
        out["tags"] = " ".join(tags)
    if word_times:
        out[WORD_TIMES] = json.dumps(word_time_pairs(word_times), separators=(",", ":"))
    if links:
        out["links"] = " | ".join(links)
    if speakers:
        out["speakers"] = ", ".join(speakers)
    if turn_ids:
        out["turn_ids"] = " ".join(turn_ids)
    return out


def mention_json(mention: TimeMention) -> dict[str, str]:
    """A time a passage speaks of, as stored and as the API shows it (times as RFC 3339 UTC)."""
    return {"start": rfc3339(mention.start), "end": rfc3339(mention.end), "expression": mention.expression}


def embedding_text(title: str, heading_path: tuple[str, ...] | list[str], text: str) -> str:
    """Title, then the section path (less any heading equal to the title), then the text."""
    path = " > ".join(p for p in heading_path if p and p != title)
    head = f"{title}\n{path}" if path else title
    return f"{head}\n\n{text}"
