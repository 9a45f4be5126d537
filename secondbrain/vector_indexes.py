"""Which collection version of a user is searched and written, and with which embedding model.

Each user's vectors live in a collection version recorded in the metadata store
(:class:`~secondbrain.ports.VectorIndex`): the *active* one is searched; while a re-index
runs, a *building* one is written too.  The embedder stage (which versions to write) and the query
side (which one to search) both ask :class:`ActiveIndexes`, which remembers the answer for a few
seconds so an event or a search costs no extra database query; a re-index reconciles what was
written during that gap before it switches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from secondbrain.errors import PermanentError
from secondbrain.ports import Embedder, IndexVersions, VectorIndex

log = logging.getLogger(__name__)

#: How long a search may keep using the index it looked up: a switch is seen within this time.
ACTIVE_INDEX_TTL_S = 3.0


class EmbedderSource(Protocol):
    """Where models come from: :class:`secondbrain.embedding.EmbedderPool`, or anything with its ``get``."""

    def get(self, spec: str) -> Embedder:
        """The embedder for ``spec`` (loaded once)."""
        ...


_warned: set[tuple[str, str]] = set()


def embedder_for(embedders: EmbedderSource, index: VectorIndex) -> Embedder:
    """The model that embeds for ``index``, checked against what the index holds.

    A model whose vectors have another length than the index's cannot be used at all
    (:class:`PermanentError`, saying what to do); a model that calls itself differently (the
    endpoint moved to another host) is used with a warning, once.
    """
    embedder = embedders.get(index.model)
    if embedder.dimension != index.dense_size:
        raise PermanentError(
            f"index v{index.version} of {index.user_id} holds {index.dense_size}-d vectors of {index.model_id}, but "
            f"the embedding model {index.model!r} now gives {embedder.dimension}-d ones: configure the endpoint "
            "that served it again, or re-index with `secondbrain reindex`")
    if embedder.model_id != index.model_id and (index.model_id, embedder.model_id) not in _warned:
        _warned.add((index.model_id, embedder.model_id))
        log.warning("embedding model answers under another id than the index records",
                    extra={"user_id": index.user_id, "version": index.version, "recorded": index.model_id,
                           "loaded": embedder.model_id})
    return embedder


@dataclass(frozen=True, slots=True)
class SearchTarget:
    """Where to search a user's vectors: a collection version and the model for the query."""

    index: str | None  # None: the store's default version (the user has no index record yet)
    embedder: Embedder
    record: VectorIndex | None = None


class ActiveIndexes:
    """Each user's live index versions (the active one first, then one being built) and the active one's
    embedder, remembered for ``ttl_s`` seconds."""

    def __init__(self, indexes: IndexVersions, embedders: EmbedderSource, default: Embedder, *,
                 ttl_s: float = ACTIVE_INDEX_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.indexes = indexes
        self.embedders = embedders
        self.default = default
        self.ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[float, list[VectorIndex]]] = {}
        self._lock = threading.Lock()

    def live(self, user_id: str) -> list[VectorIndex]:
        """The user's active index (none yet: an empty list), then the one being built, if any."""
        now = self._clock()
        with self._lock:
            cached = self._cache.get(user_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        versions = [i for i in self.indexes.vector_indexes(user_id) if i.status != "retired"]
        found = [*(i for i in versions if i.status == "active"), *(i for i in versions if i.status == "building")]
        self.remember(user_id, found, now)
        return found

    def remember(self, user_id: str, found: list[VectorIndex], now: float | None = None) -> None:
        """Keep ``found`` as the user's live indexes (the embedder creates a new user's first one)."""
        if self.ttl_s <= 0:
            return
        now = self._clock() if now is None else now
        with self._lock:
            if len(self._cache) > 10_000:  # many users: forget the expired answers
                self._cache = {u: v for u, v in self._cache.items() if v[0] > now}
            self._cache[user_id] = (now + self.ttl_s, found)

    def target(self, user_id: str) -> SearchTarget:
        """The user's active index and the embedder of its model."""
        live = self.live(user_id)
        if live and live[0].status == "active":
            return SearchTarget(live[0].name, embedder_for(self.embedders, live[0]), live[0])
        return SearchTarget(None, self.default)

    def forget(self, user_id: str | None = None) -> None:
        """Drop the remembered answer for ``user_id`` (everyone's when ``None``)."""
        with self._lock:
            if user_id is None:
                self._cache.clear()
            else:
                self._cache.pop(user_id, None)
