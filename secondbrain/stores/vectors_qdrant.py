"""A :class:`~secondbrain.ports.VectorStore` on qdrant-client (a Qdrant server, or local mode).

This is the store several processes share: stage workers upsert and the query service
searches through one Qdrant server.  ``QdrantVectorStore.local()`` runs the same code path on
qdrant-client's in-process local mode, which the tests use as a stand-in for a server.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any, Literal

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from secondbrain.passage import DATETIME_FIELDS, INTEGER_FIELDS, KEYWORD_FIELDS
from secondbrain.ports import SearchMode, SparseVector, VectorFilter, VectorHit, VectorPoint
from secondbrain.stores.vector_payload import (
    RRF_K,
    RRF_WEIGHTS,
    AllCondition,
    DatetimeRangeCondition,
    EitherCondition,
    EnsuredCollections,
    FilterPlan,
    IntRangeCondition,
    MatchAnyCondition,
    check_index,
    check_sparse,
    collection_name,
    is_empty_filter,
    plan_filter,
    prepare_payload,
    user_indexes,
)

__all__ = ["QdrantVectorStore"]


def _is_local(client: QdrantClient) -> bool:
    # qdrant-client exposes no public "is local" flag; the wrapped implementation tells.
    from qdrant_client.local.qdrant_local import QdrantLocal

    return isinstance(getattr(client, "_client", None), QdrantLocal)


def _parse_dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _is_not_found(exc: Exception) -> bool:
    """Whether ``exc`` says the collection does not exist (server: HTTP 404; local: ValueError)."""
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code == 404
    return isinstance(exc, ValueError) and "not found" in str(exc)


# Quantized collections rank with the int8 copy, then rescore with the original vectors (the
# server's default, stated so that it holds whatever the default becomes); others ignore it.
_RESCORE = models.SearchParams(quantization=models.QuantizationSearchParams(rescore=True))


class QdrantVectorStore:
    """Per-user Qdrant collections ``<prefix>u_<user_id>_<version>`` with a named dense vector
    (cosine) and a named sparse vector whose IDF the server applies (``Modifier.IDF``).

    qdrant-client local mode supports everything used here (IDF modifier, datetime ranges,
    prefetch + RRF fusion, delete by filter); it only ignores payload indexes, which are
    therefore not created there.  Local mode is not thread-safe (its numpy arrays are resized
    in place), so there every call is serialised; a server client is used concurrently.
    """

    def __init__(self, client: QdrantClient, *, collection_prefix: str = "sb_", dense_name: str = "dense",
                 sparse_name: str = "bm25", collection_version: str = "v1",
                 quantization: Literal["none", "int8"] = "none") -> None:
        """Wrap ``client``; the store owns it from now on (:meth:`close` closes it).

        ``quantization="int8"`` creates NEW collections with int8 scalar quantization of the dense
        vector (kept in RAM; searches rescore with the originals); existing ones keep theirs.  The
        server builds HNSW indexes by itself (its optimizer's indexing threshold, 10 MB of vectors
        per segment by default), so nothing here asks for it.
        """
        if quantization not in ("none", "int8"):
            raise ValueError(f"unknown vector quantization {quantization!r}")
        self.quantization = quantization
        self.client = client
        self.collection_prefix = collection_prefix
        self.dense_name = dense_name
        self.sparse_name = sparse_name
        self.collection_version = collection_version
        self._local = _is_local(client)
        self._lock: AbstractContextManager[Any] = threading.RLock() if self._local else nullcontext()
        self._ensured = EnsuredCollections()

    @classmethod
    def from_url(cls, url: str, api_key: str | None = None, **kwargs: Any) -> QdrantVectorStore:
        """A store on the Qdrant server at ``url`` (REST); ``kwargs`` go to the store."""
        return cls(QdrantClient(url=url, api_key=api_key), **kwargs)

    @classmethod
    def local(cls, path: str | None = None, **kwargs: Any) -> QdrantVectorStore:
        """A store on qdrant-client local mode, in memory when ``path`` is ``None``."""
        client = QdrantClient(location=":memory:") if path is None else QdrantClient(path=path)
        return cls(client, **kwargs)

    # ------------------------------------------------------------------ internals

    def _name(self, user_id: str, index: str | None = None) -> str:
        return self.collection_prefix + collection_name(user_id, index or self.collection_version)

    @staticmethod
    def _filter(plan: FilterPlan) -> models.Filter | None:
        if not plan.conditions:
            return None
        must: list[models.Condition] = []
        for cond in plan.conditions:
            if isinstance(cond, MatchAnyCondition):
                match = models.MatchAny(any=list(cond.values))
                must.append(models.FieldCondition(key=cond.field, match=match))
            elif isinstance(cond, DatetimeRangeCondition):
                rng = models.DatetimeRange(gte=_parse_dt(cond.gte), lt=_parse_dt(cond.lt))
                must.append(models.FieldCondition(key=cond.field, range=rng))
            elif isinstance(cond, IntRangeCondition):
                must.append(models.FieldCondition(key=cond.field, range=models.Range(gte=cond.gte, lte=cond.lte)))
            elif isinstance(cond, EitherCondition):
                must.append(models.Filter(should=[
                    _qdrant_range(c) if isinstance(c, DatetimeRangeCondition)
                    else models.Filter(must=[_qdrant_range(x) for x in c.conditions]) for c in cond.conditions]))
            elif isinstance(cond, AllCondition):
                must.extend(_qdrant_range(c) for c in cond.conditions)
        return models.Filter(must=must)

    @staticmethod
    def _hit(point: Any, score: float) -> VectorHit:
        return VectorHit(id=str(point.id), score=float(score), payload=dict(point.payload or {}))

    # ------------------------------------------------------------------ VectorStore

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        """Create the user's collection and its payload indexes when missing; return its name.

        Safe against a concurrent creator in another process: losing the race is not an error.
        An existing collection with another dense size raises :class:`ValueError`.  The checks
        run once per collection and dense size in this store (until :meth:`drop_user`).
        """
        if dense_size <= 0:
            raise ValueError("dense_size must be positive")
        name = self._name(user_id, index)
        token = self._ensured.begin(name, dense_size)
        if token is None:
            return name
        with self._lock:
            try:
                info = self.client.get_collection(name)
            except Exception as exc:
                if not _is_not_found(exc):
                    raise
                self._create(name, dense_size)
                info = self.client.get_collection(name)
            vectors = info.config.params.vectors
            existing = None
            if isinstance(vectors, dict) and self.dense_name in vectors:
                existing = vectors[self.dense_name].size
            if existing is not None and existing != dense_size:
                raise ValueError(f"collection {name} has dense size {existing}, not {dense_size}")
            # Missing indexes are created whenever the collection is checked, not only after
            # creating it: a crash between the two steps heals on the next check.  Local mode
            # ignores payload indexes (it filters by scanning), so they are skipped there.
            if not self._local:
                wanted = [(f, models.PayloadSchemaType.KEYWORD) for f in KEYWORD_FIELDS]
                wanted += [(f, models.PayloadSchemaType.DATETIME) for f in DATETIME_FIELDS]
                wanted += [(f, models.PayloadSchemaType.INTEGER) for f in INTEGER_FIELDS]
                for fieldname, schema in wanted:
                    if fieldname not in info.payload_schema:
                        self.client.create_payload_index(name, fieldname, schema, wait=True)
        self._ensured.done(name, dense_size, token)
        return name

    def _create(self, name: str, dense_size: int) -> None:
        try:
            self.client.create_collection(
                name,
                vectors_config={self.dense_name: models.VectorParams(size=dense_size,
                                                                     distance=models.Distance.COSINE)},
                quantization_config=models.ScalarQuantization(scalar=models.ScalarQuantizationConfig(
                    type=models.ScalarType.INT8, always_ram=True)) if self.quantization == "int8" else None,
                sparse_vectors_config={self.sparse_name: models.SparseVectorParams(
                    modifier=models.Modifier.IDF)},
            )
        except Exception:
            if not self.client.collection_exists(name):  # not merely lost a race to another process
                raise

    def upsert(self, user_id: str, points: Sequence[VectorPoint], *, index: str | None = None) -> None:
        """Insert or replace ``points`` by id, waiting until they are applied."""
        if not points:
            return
        structs = []
        for p in points:
            check_sparse(p.sparse)
            structs.append(models.PointStruct(
                id=p.id,
                vector={
                    self.dense_name: list(p.dense),
                    self.sparse_name: models.SparseVector(indices=list(p.sparse.indices),
                                                          values=list(p.sparse.values)),
                },
                payload=prepare_payload(user_id, p),
            ))
        name = self._name(user_id, index)
        try:
            with self._lock:
                self.client.upsert(name, points=structs, wait=True)
        except Exception as exc:
            if _is_not_found(exc):  # dropped elsewhere (another process): check again on the next ensure
                self._ensured.forget(name)
            raise

    def search(self, user_id: str, *, dense: Sequence[float] | None, sparse: SparseVector | None,
               limit: int, mode: SearchMode = "hybrid", flt: VectorFilter | None = None,
               candidates: int = 50, index: str | None = None) -> list[VectorHit]:
        """Rank the user's points; ``hybrid`` fuses dense and sparse prefetches with RRF.

        In ``hybrid`` mode a missing (``None``) or empty side is left out, so the search
        degrades to the other side instead of failing.
        """
        plan = plan_filter(flt)
        if limit <= 0 or plan.matches_nothing:
            return []
        queries = self._queries(dense, sparse, mode)
        if not queries:
            return []
        qfilter = self._filter(plan)
        name = self._name(user_id, index)
        if len(queries) == 1:
            query, using = queries[0]
            request: dict[str, Any] = {"query": query, "using": using, "search_params": _RESCORE}
        else:
            prefetch_limit = max(candidates, limit)
            request = {
                "prefetch": [models.Prefetch(query=q, using=u, filter=qfilter, limit=prefetch_limit,
                                             params=_RESCORE) for q, u in queries],
                "query": models.RrfQuery(rrf=models.Rrf(k=RRF_K, weights=list(RRF_WEIGHTS))),
            }
        try:
            with self._lock:
                response = self.client.query_points(
                    name, query_filter=qfilter if len(queries) == 1 else None, limit=limit,
                    with_payload=True, **request)
        except Exception as exc:
            if _is_not_found(exc):
                return []
            raise
        return [self._hit(p, p.score) for p in response.points]

    def _queries(self, dense: Sequence[float] | None, sparse: SparseVector | None,
                 mode: SearchMode) -> list[tuple[Any, str]]:
        if mode not in ("hybrid", "dense", "sparse"):
            raise ValueError(f"unknown search mode {mode!r}")
        if mode == "dense" and dense is None:
            raise ValueError("dense search needs a dense vector")
        if mode == "sparse" and sparse is None:
            raise ValueError("sparse search needs a sparse vector")
        queries: list[tuple[Any, str]] = []
        if mode in ("hybrid", "dense") and dense is not None:
            queries.append(([float(x) for x in dense], self.dense_name))
        if mode in ("hybrid", "sparse") and sparse is not None and sparse.indices:
            check_sparse(sparse)
            queries.append((models.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                            self.sparse_name))
        return queries

    def scroll(self, user_id: str, *, flt: VectorFilter | None = None, limit: int = 100,
               offset: str | None = None, index: str | None = None) -> tuple[list[VectorHit], str | None]:
        """Page through matching points in id order; the offset is the next point id."""
        plan = plan_filter(flt)
        if limit <= 0 or plan.matches_nothing:
            return [], None
        try:
            with self._lock:
                records, next_offset = self.client.scroll(
                    self._name(user_id, index), scroll_filter=self._filter(plan), limit=limit, offset=offset,
                    with_payload=True, with_vectors=False)
        except Exception as exc:
            if _is_not_found(exc):
                return [], None
            raise
        return [self._hit(r, 0.0) for r in records], (str(next_offset) if next_offset is not None else None)

    def count(self, user_id: str, flt: VectorFilter | None = None, *, index: str | None = None) -> int:
        """Exact number of the user's points matching ``flt`` (0 without a collection)."""
        plan = plan_filter(flt)
        if plan.matches_nothing:
            return 0
        try:
            with self._lock:
                result = self.client.count(self._name(user_id, index), count_filter=self._filter(plan),
                                           exact=True)
            return int(result.count)
        except Exception as exc:
            if _is_not_found(exc):
                return 0
            raise

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        """Delete the user's points matching ``flt`` from every version of the collection, waiting until
        applied.

        A filter without any condition is refused (it would delete everything; use
        :meth:`drop_user` for that).
        """
        if is_empty_filter(flt):
            raise ValueError("delete_where needs a restricting filter; use drop_user to delete everything")
        plan = plan_filter(flt)
        qfilter = self._filter(plan)
        if plan.matches_nothing or qfilter is None:
            return
        for index in self.list_indexes(user_id):
            name = self._name(user_id, index)
            try:
                with self._lock:
                    # A deleted point's words stay in the engine's BM25 statistics until its segment
                    # is rebuilt; emptying its sparse vector first takes them out of the writable
                    # segment at once (the edge store does the same).
                    emptied = [models.PointVectors(id=i, vector={self.sparse_name: models.SparseVector(
                        indices=[], values=[])}) for i in self._ids(name, qfilter)]
                    if emptied:
                        try:
                            self.client.update_vectors(name, points=emptied, wait=True)
                        except Exception as exc:
                            # a point another process deleted since the scroll: the deletion goes on
                            if not _is_not_found(exc):
                                raise
                    self.client.delete(name, points_selector=models.FilterSelector(filter=qfilter), wait=True)
            except Exception as exc:
                if not _is_not_found(exc):
                    raise

    def _ids(self, name: str, qfilter: models.Filter) -> list[models.ExtendedPointId]:
        """The ids of every point of ``name`` matching ``qfilter`` (lock held)."""
        ids: list[models.ExtendedPointId] = []
        offset: models.ExtendedPointId | None = None
        while True:
            records, offset = self.client.scroll(name, scroll_filter=qfilter, limit=1000, offset=offset,
                                                 with_payload=False, with_vectors=False)
            ids.extend(r.id for r in records)
            if offset is None:
                return ids

    def list_indexes(self, user_id: str) -> list[str]:
        """The versions of the user's collection the server has, oldest first."""
        with self._lock:
            names = [c.name for c in self.client.get_collections().collections]
        return user_indexes(names, user_id, self.collection_prefix)

    def drop_user(self, user_id: str) -> None:
        """Delete every version of the user's collection (no error when absent)."""
        # The default version too, even if unlisted: this store may remember it as ensured.
        for index in dict.fromkeys([*self.list_indexes(user_id), self.collection_version]):
            self.drop_index(user_id, index)

    def drop_index(self, user_id: str, index: str) -> None:
        """Delete one version of the user's collection (no error when absent)."""
        name = self._name(user_id, check_index(index))
        try:
            with self._lock:
                self.client.delete_collection(name)
        except Exception as exc:
            if not _is_not_found(exc):
                raise
        finally:
            self._ensured.forget(name)

    def check(self) -> None:
        """Raise unless the server (or local mode) answers."""
        with self._lock:
            self.client.get_collections()

    def close(self) -> None:
        """Close the client (the server persists its own data)."""
        self._ensured.forget()
        with self._lock:
            self.client.close()


def _qdrant_range(c: DatetimeRangeCondition) -> models.FieldCondition:
    return models.FieldCondition(key=c.field, range=models.DatetimeRange(gte=_parse_dt(c.gte), lt=_parse_dt(c.lt)))
