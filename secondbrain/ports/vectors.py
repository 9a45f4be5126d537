"""Where searchable passages are kept: dense and sparse vectors with payloads, per user collection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector as parallel index/value lists (indices unique, ascending)."""

    indices: list[int]
    values: list[float]


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """One chunk as stored in a user's collection."""

    id: str  # a UUID string, deterministic per chunk (see secondbrain.ids)
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open [start, end) interval; either end may be open."""

    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True, slots=True)
class VectorFilter:
    """Restrictions applied inside the vector store (all conditions AND-ed).

    ``time_field`` names the payload field the time range applies to
    (``captured_at`` or ``ingested_at``; both are RFC 3339 strings in the payload);
    ``mentioned_range`` widens that one condition to "or the passage speaks of a time in it".
    """

    document_ids: Sequence[str] | None = None
    source_ids: Sequence[str] | None = None
    job_ids: Sequence[str] | None = None  # the job that wrote a passage (to take back one job's writes only)
    modalities: Sequence[str] | None = None
    time_range: TimeRange | None = None
    time_field: Literal["captured_at", "ingested_at"] = "captured_at"
    chunk_index_range: tuple[int, int] | None = None  # inclusive [first, last] positions within a document
    # With ``time_range``: a passage also matches when it speaks of a time in this range ("yesterday I
    # ran", said the day after), through the ``mentioned_at`` payload field (see ``secondbrain.temporal.mentions``).
    mentioned_range: TimeRange | None = None
    # Passages of recurring events (``recurs_from``/``recurs_until``, see ``secondbrain.temporal.recurrence``)
    # whose series spans this range: with ``time_range``, they match too; alone, only they match.  Whether an
    # occurrence falls in the range is for the caller to work out.
    recurring_range: TimeRange | None = None


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A scored point returned by a search."""

    id: str
    score: float
    payload: dict[str, Any]


SearchMode = Literal["hybrid", "dense", "sparse"]


@runtime_checkable
class VectorStore(Protocol):
    """Per-user collections holding a dense and a sparse (BM25) vector per chunk.

    A user may have several collection *versions* (``index``: ``v1``, ``v2``...), one per
    embedding model, so a re-embedding builds a new one next to the one being searched.
    Methods taking ``index`` address that version; ``None`` means the store's default (``v1``).
    :meth:`delete_where` and :meth:`drop_user` always act on every version of the user.
    """

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        """Create the user's collection (version ``index``) when missing (idempotent); return its name."""
        ...

    def upsert(self, user_id: str, points: Sequence[VectorPoint], *, index: str | None = None) -> None:
        """Insert or replace points by id (a replay never duplicates)."""
        ...

    def search(self, user_id: str, *, dense: Sequence[float] | None, sparse: SparseVector | None,
               limit: int, mode: SearchMode = "hybrid", flt: VectorFilter | None = None,
               candidates: int = 50, index: str | None = None) -> list[VectorHit]:
        """Rank the user's points.  ``hybrid`` takes ``candidates`` from each of dense and sparse and fuses them
        with reciprocal rank fusion inside the engine.  A user without a collection gets ``[]``."""
        ...

    def scroll(self, user_id: str, *, flt: VectorFilter | None = None, limit: int = 100,
               offset: str | None = None, index: str | None = None) -> tuple[list[VectorHit], str | None]:
        """Page through points matching ``flt`` in id order (score 0); returns the next offset (the id
        the next page starts at) or ``None``."""
        ...

    def count(self, user_id: str, flt: VectorFilter | None = None, *, index: str | None = None) -> int:
        """Number of the user's points matching ``flt`` (0 when there is no collection)."""
        ...

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        """Delete the user's points matching ``flt`` from every version (used to drop a document's chunks)."""
        ...

    def drop_user(self, user_id: str) -> None:
        """Delete every collection version of the user (no error when absent)."""
        ...

    def list_indexes(self, user_id: str) -> list[str]:
        """The versions the user has a collection for, oldest first (``["v1", "v2"]``)."""
        ...

    def drop_index(self, user_id: str, index: str) -> None:
        """Delete one collection version of the user (no error when absent)."""
        ...

    def check(self) -> None:
        """Raise if the store cannot serve requests (readiness probe)."""
        ...

    def close(self) -> None:
        """Flush and release resources."""
        ...
