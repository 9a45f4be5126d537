"""Helpers shared by the vector store implementations.

Both :mod:`secondbrain.stores.vectors_edge` and :mod:`secondbrain.stores.vectors_qdrant` name
collections, validate payloads and translate :class:`~secondbrain.ports.VectorFilter` the same
way, so the two behave identically under the one contract suite.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from secondbrain.keys import check_user_id
from secondbrain.passage import TIME_FIELDS, rfc3339
from secondbrain.ports import SparseVector, TimeRange, VectorFilter, VectorPoint

#: Reciprocal rank fusion: a point scores ``weight / (RRF_K + rank)`` summed over the dense and the
#: sparse list (rank from 0); k = 2 is Qdrant's server default.  The sparse side weighs a hair less, so a
#: point ranked first by one side and second by the other never ties with its mirror image.  With equal
#: weights the engine ordered such ties by how the points happened to be stored (their random ids, the
#: order the pipeline wrote them), so two fresh imports of the same data ranked, and answered,
#: differently: 417 of 1,969 LoCoMo questions got their sources in another order.  The hair (a thousandth
#: of the sparse side's share) can otherwise only swap two near-ties.
RRF_K = 2
RRF_WEIGHTS = (1.0, 0.999)  # the dense query, then the sparse one: the order both stores build them in

# Leading alphanumeric and no path separators: the name is used verbatim as a directory name
# (edge store) and a Qdrant collection name, so "..", "/" and "\\" must never get through.
_VERSION_RE = re.compile(r"v[0-9]{1,6}")


def validate_user_id(user_id: str) -> str:
    """Return ``user_id`` unchanged or raise :class:`ValueError` when it is unsafe as a name.

    Allowed: 1-128 characters from ``A-Z a-z 0-9 _ . @ -``, starting with a letter or digit.
    """
    if not isinstance(user_id, str):
        raise ValueError(f"invalid user id for a vector collection: {user_id!r}")
    return check_user_id(user_id)


def collection_name(user_id: str, version: str = "v1") -> str:
    """The collection (and edge shard directory) name of a user's vectors: ``u_<user_id>_<version>``.

    ``version`` (``v`` + digits) lets a re-embedding with another model build a new collection
    next to the old one.  The version contains no ``_``, so the name parses unambiguously from
    the right.  Raises :class:`ValueError` for user ids with path characters.
    """
    validate_user_id(user_id)
    if not _VERSION_RE.fullmatch(version):
        raise ValueError(f"invalid collection version: {version!r}")
    return f"u_{user_id}_{version}"


def check_index(index: str) -> str:
    """Return ``index`` (a collection version, ``v`` + digits) or raise :class:`ValueError`."""
    if not isinstance(index, str) or not _VERSION_RE.fullmatch(index):
        raise ValueError(f"invalid collection version: {index!r}")
    return index


def user_indexes(names: Iterable[str], user_id: str, prefix: str = "") -> list[str]:
    """The versions among collection ``names`` that are ``user_id``'s (``prefix`` + ``u_<user>_<version>``),
    oldest first.  Another user whose id extends this one (``bob`` and ``bob_v2``) never matches."""
    validate_user_id(user_id)
    pattern = re.compile(re.escape(f"{prefix}u_{user_id}_") + r"(v[0-9]{1,6})")
    found = {m.group(1) for m in (pattern.fullmatch(n) for n in names) if m}
    return sorted(found, key=lambda v: int(v[1:]))


class EnsuredCollections:
    """The ``(collection, dense_size)`` pairs a store has already ensured, so that
    ``ensure_collection`` does its checks once per collection and process, not on every call.

    Thread-safe.  :meth:`forget` (on a drop) wins over an ensure running at the same time: an
    ensure that began before the drop is not remembered, so the next call checks again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pairs: set[tuple[str, int]] = set()
        self._generation = 0

    def begin(self, name: str, dense_size: int) -> int | None:
        """``None`` when the pair is already ensured; otherwise a token for :meth:`done`."""
        with self._lock:
            return None if (name, dense_size) in self._pairs else self._generation

    def done(self, name: str, dense_size: int, token: int) -> None:
        """Remember the pair, unless a :meth:`forget` happened since :meth:`begin` gave ``token``."""
        with self._lock:
            if token == self._generation:
                self._pairs.add((name, dense_size))

    def forget(self, name: str | None = None) -> None:
        """Forget ``name`` (every dense size), or everything when ``name`` is ``None``."""
        with self._lock:
            self._generation += 1
            self._pairs = {p for p in self._pairs if name is not None and p[0] != name}


def prepare_payload(user_id: str, point: VectorPoint) -> dict[str, Any]:
    """The payload to store for ``point``: as given, with ``user_id`` filled in when absent.

    Top-level :class:`~datetime.datetime` values become RFC 3339 UTC strings (what the range
    filters compare).  A payload naming another user is refused, so a bug upstream cannot file
    one user's chunk in another user's collection.
    """
    payload = {k: rfc3339(v) if isinstance(v, datetime) else v for k, v in point.payload.items()}
    owner = payload.setdefault("user_id", user_id)
    if owner != user_id:
        raise ValueError(f"point {point.id} has payload user_id {owner!r}, expected {user_id!r}")
    return payload


def check_sparse(vector: SparseVector) -> None:
    """Raise :class:`ValueError` unless indices are unique, ascending and parallel to values."""
    if len(vector.indices) != len(vector.values):
        raise ValueError("sparse vector indices and values differ in length")
    if any(b <= a for a, b in zip(vector.indices, vector.indices[1:], strict=False)):
        raise ValueError("sparse vector indices must be unique and ascending")


@dataclass(frozen=True, slots=True)
class MatchAnyCondition:
    """``field`` equals one of ``values``."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DatetimeRangeCondition:
    """``field`` lies in the half-open interval [``gte``, ``lt``) (RFC 3339 strings; ``None`` = open)."""

    field: str
    gte: str | None
    lt: str | None


@dataclass(frozen=True, slots=True)
class IntRangeCondition:
    """``field`` is an integer in the closed interval [``gte``, ``lte``]."""

    field: str
    gte: int
    lte: int


@dataclass(frozen=True, slots=True)
class AllCondition:
    """Every one of ``conditions`` holds (a branch of an :class:`EitherCondition`)."""

    conditions: tuple[DatetimeRangeCondition, ...]


@dataclass(frozen=True, slots=True)
class EitherCondition:
    """At least one of ``conditions`` holds."""

    conditions: tuple[DatetimeRangeCondition | AllCondition, ...]


Condition = MatchAnyCondition | DatetimeRangeCondition | IntRangeCondition | EitherCondition | AllCondition


@dataclass(frozen=True, slots=True)
class FilterPlan:
    """A :class:`VectorFilter` reduced to engine-neutral conditions (all AND-ed).

    ``matches_nothing`` is set when a list restriction is empty (``document_ids=[]``): like SQL's
    ``IN ()`` it selects no point, and the stores answer without asking the engine.
    """

    conditions: tuple[Condition, ...]
    matches_nothing: bool = False


def plan_filter(flt: VectorFilter | None) -> FilterPlan:
    """Translate ``flt`` into a :class:`FilterPlan`; ``None`` means no restriction."""
    if flt is None:
        return FilterPlan(())
    conditions: list[Condition] = []
    nothing = False
    for fieldname, values in (("document_id", flt.document_ids), ("source_id", flt.source_ids),
                              ("job_id", flt.job_ids), ("modality", flt.modalities)):
        if values is None:
            continue
        if isinstance(values, str):  # a bare string would otherwise be split into characters
            raise TypeError(f"{fieldname} filter must be a sequence of strings, not a string")
        if len(values) == 0:
            nothing = True
        conditions.append(MatchAnyCondition(fieldname, tuple(_as_str_list(values))))
    if flt.time_range is not None and (flt.time_range.start is not None or flt.time_range.end is not None):
        if flt.time_field not in TIME_FIELDS:
            raise ValueError(f"time_field must be one of {TIME_FIELDS}, not {flt.time_field!r}")
        start, end = flt.time_range.start, flt.time_range.end
        if start is not None and end is not None and _utc(end) <= _utc(start):
            nothing = True  # an empty interval
        own = _range(flt.time_field, start, end)
        branches: list[DatetimeRangeCondition | AllCondition] = [own]
        mentioned = flt.mentioned_range
        if mentioned is not None and (mentioned.start is not None or mentioned.end is not None):
            branches.append(_range("mentioned_at", mentioned.start, mentioned.end))
        if flt.recurring_range is not None:
            branches.append(_spans(flt.recurring_range))
        conditions.append(EitherCondition(tuple(branches)) if len(branches) > 1 else own)
    elif flt.recurring_range is not None:
        conditions.extend(_spans(flt.recurring_range).conditions)
    if flt.chunk_index_range is not None:
        first, last = flt.chunk_index_range
        if last < first:
            nothing = True
        conditions.append(IntRangeCondition("chunk_index", int(first), int(last)))
    return FilterPlan(tuple(conditions), nothing)


def _spans(window: TimeRange) -> AllCondition:
    """A recurring event's passages whose series spans the window: it begins before the window ends and ends
    after it begins (``recurs_until`` is far in the future for a series without end)."""
    return AllCondition((_range("recurs_from", None, window.end), _range("recurs_until", window.start, None)))


def _range(fieldname: str, start: datetime | None, end: datetime | None) -> DatetimeRangeCondition:
    return DatetimeRangeCondition(fieldname, rfc3339(start) if start is not None else None,
                                  rfc3339(end) if end is not None else None)


def _as_str_list(values: Sequence[str]) -> list[str]:
    return [str(v) for v in values]


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def is_empty_filter(flt: VectorFilter) -> bool:
    """Whether ``flt`` restricts nothing (every point would match)."""
    plan = plan_filter(flt)
    return not plan.conditions and not plan.matches_nothing
