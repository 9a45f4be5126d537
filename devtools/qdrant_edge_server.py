"""A small Qdrant-REST-compatible server backed by qdrant-edge.

There is no Qdrant server binary on a developer machine, yet in distributed mode the stage
workers and the query service are separate processes that must share one vector store.  An
edge shard can be opened by one process only, so this server owns the shards and lets every
process reach them with the ordinary ``qdrant-client`` over REST
(:class:`secondbrain.stores.vectors_qdrant.QdrantVectorStore`).

Only what that store uses is implemented: collections (exists / get / list / create / delete),
payload indexes, upsert, query (prefetch + fusion + filter), scroll, count and delete points.
Requests are parsed with qdrant-client's own REST models, so anything the client sends for
these endpoints parses as it would on a real server; features the edge engine or this server
lack are answered with HTTP 400 and a clear message.  Responses use Qdrant's envelope
``{"result": ..., "status": "ok", "time": seconds}``.

Run: ``python -m devtools.qdrant_edge_server --host 127.0.0.1 --port 6333 --data DIR``.
It binds to loopback unless ``--allow-remote`` is given, and checks an ``api-key`` header when
``--api-key`` (or ``SB_QDRANT_EDGE_API_KEY``) is set.  It is a development tool: one process,
one lock per collection, no replication, no background optimisation; snapshots are tars of a
collection's directory (create, list, download, delete and upload, as Qdrant's snapshot API).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import qdrant_edge as qe
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import TypeAdapter, ValidationError
from qdrant_client.http import models
from starlette.concurrency import run_in_threadpool

from secondbrain.infra.ports import is_loopback, terminate
from secondbrain.time_formats import rfc3339

__all__ = ["API_VERSION", "EdgeServerProcess", "create_app", "main"]

#: The Qdrant REST revision whose request and response shapes this server follows (the one
#: of the qdrant-client it is tested with); reported by ``GET /`` for the client's version check.
API_VERSION = "1.20.0"
DEFAULT_RRF_K = 2  # Qdrant's default for a plain {"fusion": "rrf"}
DEFAULT_LIMIT = 10
ENV_API_KEY = "SB_QDRANT_EDGE_API_KEY"

# Collection names become directory names: keep them to a portable, traversal-free alphabet.
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,254}")

_DISTANCES = {
    models.Distance.COSINE: qe.Distance.Cosine,
    models.Distance.EUCLID: qe.Distance.Euclid,
    models.Distance.DOT: qe.Distance.Dot,
    models.Distance.MANHATTAN: qe.Distance.Manhattan,
}
_SCHEMAS = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
    "geo": qe.PayloadSchemaType.Geo,
    "text": qe.PayloadSchemaType.Text,
    "bool": qe.PayloadSchemaType.Bool,
    "datetime": qe.PayloadSchemaType.Datetime,
    "uuid": qe.PayloadSchemaType.Uuid,
}


class ApiError(Exception):
    """An error answered with ``status`` and Qdrant's error envelope."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _unsupported(what: str) -> ApiError:
    return ApiError(400, f"Bad request: {what} is not supported by the qdrant-edge dev server")


def _not_found(name: str) -> ApiError:
    return ApiError(404, f"Not found: Collection `{name}` doesn't exist!")


# --------------------------------------------------------------------------- storage


class _Collection:
    """One collection: its edge shard, its creation request and a lock serialising its use."""

    def __init__(self, name: str, path: Path, config: dict[str, Any], shard: qe.EdgeShard) -> None:
        self.name = name
        self.path = path
        self.config = config  # the CreateCollection body as received (JSON), echoed by GET
        self.shard: qe.EdgeShard | None = shard
        self.lock = threading.Lock()
        self.created_at = datetime.fromtimestamp((path / "collection.json").stat().st_mtime, UTC)

    def open_shard(self) -> qe.EdgeShard:
        if self.shard is None:  # closed by a concurrent delete
            raise _not_found(self.name)
        return self.shard


class Registry:
    """The collections under ``data/collections``: ``<name>/collection.json`` + ``<name>/shard/``."""

    def __init__(self, data: Path) -> None:
        self.root = Path(data) / "collections"
        self.root.mkdir(parents=True, exist_ok=True)
        self._collections: dict[str, _Collection] = {}
        self._lock = threading.Lock()  # guards the dict and create/delete
        self._ops = itertools.count(1)
        for leftover in self.root.glob(".tmp-*"):  # a creation interrupted by a crash
            shutil.rmtree(leftover, ignore_errors=True)
        for leftover in self.root.glob(".del-*"):  # a deletion interrupted by a crash
            shutil.rmtree(leftover, ignore_errors=True)

    def next_op(self) -> int:
        """A sequential operation id for update results."""
        return next(self._ops)

    @staticmethod
    def check_name(name: str) -> str:
        if not _NAME_RE.fullmatch(name):
            raise ApiError(400, f"Wrong input: collection name {name!r} is not supported by this server "
                                "(use letters, digits and _ . @ -)")
        return name

    def names(self) -> list[str]:
        with self._lock:
            return sorted(p.name for p in self.root.iterdir()
                          if not p.name.startswith(".") and (p / "collection.json").is_file())

    def exists(self, name: str) -> bool:
        return _NAME_RE.fullmatch(name) is not None and (self.root / name / "collection.json").is_file()

    def get(self, name: str) -> _Collection:
        """The open collection ``name`` (loaded on first use) or a 404."""
        with self._lock:
            coll = self._collections.get(name)
            if coll is not None:
                return coll
            if not self.exists(name):
                raise _not_found(name)
            path = self.root / name
            config = json.loads((path / "collection.json").read_text())
            coll = _Collection(name, path, config, qe.EdgeShard.load(str(path / "shard")))
            self._collections[name] = coll
            return coll

    def create(self, name: str, request: models.CreateCollection, raw: dict[str, Any]) -> None:
        """Create ``name``; a 409 when it exists.  Built in a temporary directory and renamed into
        place, so a crash never leaves a half-created collection behind."""
        self.check_name(name)
        edge_config = _edge_config(request)
        with self._lock:
            if self.exists(name):
                raise ApiError(409, f"Wrong input: Collection `{name}` already exists!")
            tmp = self.root / f".tmp-{name}-{uuid.uuid4().hex}"
            tmp.mkdir()
            try:
                (tmp / "collection.json").write_text(json.dumps(raw))
                qe.EdgeShard.create(str(tmp / "shard"), edge_config).close()
                tmp.rename(self.root / name)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            path = self.root / name
            self._collections[name] = _Collection(name, path, raw, qe.EdgeShard.load(str(path / "shard")))

    def delete(self, name: str) -> bool:
        """Close and remove ``name``; ``False`` when it did not exist."""
        with self._lock:
            if not self.exists(name):
                return False
            coll = self._collections.pop(name, None)
            if coll is not None:
                with coll.lock:
                    if coll.shard is not None:
                        coll.shard.close()
                        coll.shard = None
            # rename first: the name is free at once, and a crash mid-rmtree leaves only a tombstone
            tomb = self.root / f".del-{name}-{uuid.uuid4().hex}"
            (self.root / name).rename(tomb)
        shutil.rmtree(tomb, ignore_errors=True)
        return True

    # -- snapshots: a collection's directory as a tar, taken under its lock (Qdrant's snapshot API)
    def snapshot_dir(self, name: str) -> Path:
        return self.root.parent / "snapshots" / self.check_name(name)

    def create_snapshot(self, name: str) -> dict[str, Any]:
        """A tar of the collection as it is now: ``collection.json`` and ``shard/``, flushed under its lock."""
        import hashlib
        import tarfile

        coll = self.get(name)
        folder = self.snapshot_dir(name)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC)
        snap = folder / f"{name}-{stamp:%Y-%m-%d-%H-%M-%S}-{uuid.uuid4().hex[:6]}.snapshot"
        with coll.lock:
            coll.open_shard().flush()
            with tarfile.open(snap, "w") as tar:
                tar.add(coll.path / "collection.json", "collection.json")
                tar.add(coll.path / "shard", "shard")
        digest = hashlib.sha256(snap.read_bytes()).hexdigest()
        return {"name": snap.name, "creation_time": rfc3339(stamp), "size": snap.stat().st_size, "checksum": digest}

    def snapshot_path(self, name: str, snapshot: str) -> Path:
        path = self.snapshot_dir(name) / snapshot
        if "/" in snapshot or not snapshot.endswith(".snapshot") or not path.is_file():
            raise ApiError(404, f"Not found: Snapshot {snapshot} not found")
        return path

    def recover(self, name: str, upload: IO[bytes]) -> None:
        """Make ``name`` the collection in an uploaded snapshot (replacing one of that name)."""
        import tarfile

        self.check_name(name)
        tmp = self.root / f".tmp-{name}-{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            with tarfile.open(fileobj=upload, mode="r|") as tar:
                tar.extractall(tmp, filter="data")
            if not (tmp / "collection.json").is_file() or not (tmp / "shard").is_dir():
                raise ApiError(400, "Wrong input: the file is not a snapshot of this server")
            qe.EdgeShard.load(str(tmp / "shard")).close()  # it opens: a whole shard
            self.delete(name)
            with self._lock:
                tmp.rename(self.root / name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def close(self) -> None:
        """Flush and close every open shard."""
        with self._lock:
            for coll in self._collections.values():
                with coll.lock:
                    if coll.shard is not None:
                        coll.shard.flush()
                        coll.shard.close()
                        coll.shard = None
            self._collections.clear()


def _edge_config(request: models.CreateCollection) -> qe.EdgeConfig:
    if request.sharding_method not in (None, models.ShardingMethod.AUTO):
        raise _unsupported("custom sharding")
    vectors: qe.EdgeVectorParams | dict[str, qe.EdgeVectorParams] | None
    if request.vectors is None:
        vectors = None
    elif isinstance(request.vectors, models.VectorParams):
        vectors = _vector_params(request.vectors)
    else:
        vectors = {name: _vector_params(params) for name, params in request.vectors.items()}
    sparse = None
    if request.sparse_vectors:
        sparse = {
            name: qe.EdgeSparseVectorParams(
                modifier=qe.Modifier.Idf if params.modifier == models.Modifier.IDF else None)
            for name, params in request.sparse_vectors.items()
        }
    if vectors is None and sparse is None:
        raise ApiError(400, "Wrong input: a collection needs dense or sparse vectors")
    return qe.EdgeConfig(vectors=vectors, sparse_vectors=sparse)


def _vector_params(params: models.VectorParams) -> qe.EdgeVectorParams:
    if params.multivector_config is not None:
        raise _unsupported("multivector_config")
    return qe.EdgeVectorParams(size=params.size, distance=_DISTANCES[params.distance])


# --------------------------------------------------------------------------- REST -> edge


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _as_datetime(value: datetime | date) -> datetime:
    """A REST date as its midnight (naive: :func:`rfc3339` takes it as UTC); a datetime as is."""
    return value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)


def _point_id(value: Any) -> Any:
    return str(value) if isinstance(value, uuid.UUID) else value


def _filter(flt: models.Filter | None) -> qe.Filter | None:
    if flt is None:
        return None
    min_should = None
    if flt.min_should is not None:
        conditions = [_condition(c) for c in flt.min_should.conditions]
        min_should = qe.MinShould(conditions, flt.min_should.min_count)
    return qe.Filter(
        must=[_condition(c) for c in _as_list(flt.must)] or None,
        should=[_condition(c) for c in _as_list(flt.should)] or None,
        must_not=[_condition(c) for c in _as_list(flt.must_not)] or None,
        min_should=min_should,
    )


def _condition(cond: Any) -> Any:
    if isinstance(cond, models.FieldCondition):
        if cond.geo_bounding_box or cond.geo_radius or cond.geo_polygon:
            raise _unsupported("geo conditions")
        values_count = None
        if cond.values_count is not None:
            vc = cond.values_count
            values_count = qe.ValuesCount(lt=vc.lt, gt=vc.gt, lte=vc.lte, gte=vc.gte)
        return qe.FieldCondition(cond.key, match=_match(cond.match), range=_range(cond.range),
                                 values_count=values_count, is_empty=cond.is_empty, is_null=cond.is_null)
    if isinstance(cond, models.IsEmptyCondition):
        return qe.IsEmptyCondition(cond.is_empty.key)
    if isinstance(cond, models.IsNullCondition):
        return qe.IsNullCondition(cond.is_null.key)
    if isinstance(cond, models.HasIdCondition):
        return qe.HasIdCondition({_point_id(i) for i in cond.has_id})
    if isinstance(cond, models.HasVectorCondition):
        return qe.HasVectorCondition(cond.has_vector)
    if isinstance(cond, models.NestedCondition):
        nested = _filter(cond.nested.filter)
        assert nested is not None
        return qe.NestedCondition(cond.nested.key, nested)
    if isinstance(cond, models.Filter):
        return _filter(cond)
    raise _unsupported(f"condition {type(cond).__name__}")


def _match(match: Any) -> Any:
    if match is None:
        return None
    if isinstance(match, models.MatchValue):
        return qe.MatchValue(match.value)
    if isinstance(match, models.MatchAny):
        return qe.MatchAny(cast(list[str], list(match.any)))
    if isinstance(match, models.MatchExcept):
        return qe.MatchExcept(cast(list[str], list(match.except_)))
    if isinstance(match, models.MatchText):
        return qe.MatchText(match.text)
    if isinstance(match, models.MatchTextAny):
        return qe.MatchTextAny(match.text_any)
    if isinstance(match, models.MatchPhrase):
        return qe.MatchPhrase(match.phrase)
    if isinstance(match, models.MatchPrefix):
        return qe.MatchPrefix(match.prefix)
    if isinstance(match, models.MatchSubstring):
        return qe.MatchSubstring(match.substring)
    raise _unsupported(f"match {type(match).__name__}")


def _range(rng: Any) -> Any:
    if rng is None:
        return None
    if isinstance(rng, models.DatetimeRange):
        def fmt(v: datetime | date | None) -> str | None:
            return None if v is None else rfc3339(_as_datetime(v))
        return qe.RangeDateTime(gte=fmt(rng.gte), gt=fmt(rng.gt), lte=fmt(rng.lte), lt=fmt(rng.lt))
    return qe.RangeFloat(gte=rng.gte, gt=rng.gt, lte=rng.lte, lt=rng.lt)


def _vector(value: Any) -> Any:
    """A REST vector (dense list, multi-dense list, sparse) as an edge vector."""
    if isinstance(value, models.SparseVector):
        if len(value.indices) != len(value.values):
            raise ApiError(400, "Wrong input: sparse vector indices and values differ in length")
        return qe.SparseVector(list(value.indices), list(value.values))
    if isinstance(value, list):
        return value
    raise _unsupported(f"vector input {type(value).__name__} (server-side inference)")


def _query(query: Any, using: str | None) -> Any:
    if query is None:
        return None
    if isinstance(query, models.NearestQuery):
        if query.mmr is not None:
            raise _unsupported("MMR")
        return qe.Query.Nearest(_vector(query.nearest), using=using)
    if isinstance(query, models.FusionQuery):
        if query.fusion == models.Fusion.DBSF:
            return qe.Fusion.Dbsf()
        return qe.Fusion.Rrf(k=DEFAULT_RRF_K)
    if isinstance(query, models.RrfQuery):
        k = query.rrf.k if query.rrf.k is not None else DEFAULT_RRF_K
        return qe.Fusion.Rrf(k=k, weights=query.rrf.weights)
    if isinstance(query, models.OrderByQuery):
        return _order_by(query.order_by)
    if isinstance(query, (list, models.SparseVector)):
        return qe.Query.Nearest(_vector(query), using=using)
    if isinstance(query, (int, str, uuid.UUID)):
        raise _unsupported("query by point id")
    raise _unsupported(f"query {type(query).__name__}")


def _order_by(order_by: Any) -> qe.OrderBy:
    if isinstance(order_by, str):
        return qe.OrderBy(order_by)
    direction = qe.Direction.Desc if order_by.direction == models.Direction.DESC else qe.Direction.Asc
    start = order_by.start_from
    if isinstance(start, (datetime, date)):
        start = rfc3339(_as_datetime(start))
    return qe.OrderBy(order_by.key, direction=direction, start_from=start)


def _params(params: models.SearchParams | None) -> qe.SearchParams | None:
    if params is None:
        return None
    return qe.SearchParams(hnsw_ef=params.hnsw_ef, exact=bool(params.exact),
                           indexed_only=bool(params.indexed_only))


def _prefetch(p: models.Prefetch) -> qe.Prefetch:
    if p.lookup_from is not None:
        raise _unsupported("lookup_from")
    return qe.Prefetch(
        limit=p.limit if p.limit is not None else DEFAULT_LIMIT,
        query=_query(p.query, p.using),
        prefetches=[_prefetch(x) for x in _as_list(p.prefetch)] or None,
        params=_params(p.params),
        filter=_filter(p.filter),
        score_threshold=p.score_threshold,
    )


def _with_payload(value: Any, default: bool) -> Any:
    if value is None:
        return default
    if isinstance(value, models.PayloadSelectorInclude):
        return qe.PayloadSelector.Include(list(value.include))
    if isinstance(value, models.PayloadSelectorExclude):
        return qe.PayloadSelector.Exclude(list(value.exclude))
    return value


# --------------------------------------------------------------------------- edge -> REST


def _vector_out(vector: Any) -> Any:
    if vector is None:
        return None
    if isinstance(vector, dict):
        return {name: _vector_out(v) for name, v in vector.items()}
    if isinstance(vector, qe.SparseVector):
        return {"indices": list(vector.indices), "values": list(vector.values)}
    return vector


def _scored_point(p: Any) -> dict[str, Any]:
    out = {"id": _point_id(p.id), "version": p.version, "score": p.score, "payload": p.payload,
           "vector": _vector_out(p.vector)}
    if p.order_value is not None:
        out["order_value"] = p.order_value
    return out


def _record(r: Any) -> dict[str, Any]:
    out = {"id": _point_id(r.id), "payload": r.payload, "vector": _vector_out(r.vector)}
    if r.order_value is not None:
        out["order_value"] = r.order_value
    return out


def _update_result(registry: Registry, wait: bool) -> dict[str, Any]:
    # Updates are applied (and flushed) before answering, so they are complete either way.
    return {"operation_id": registry.next_op(), "status": "completed" if wait else "acknowledged"}


def _collection_info(coll: _Collection, shard: qe.EdgeShard) -> dict[str, Any]:
    info = shard.info()
    schema = {
        field: {"data_type": str(idx.data_type).rsplit(".", 1)[-1].lower(), "points": idx.points}
        for field, idx in info.payload_schema.items()
    }
    params: dict[str, Any] = {"shard_number": 1, "replication_factor": 1, "write_consistency_factor": 1,
                              "on_disk_payload": True}
    if coll.config.get("vectors") is not None:
        params["vectors"] = coll.config["vectors"]
    if coll.config.get("sparse_vectors") is not None:
        params["sparse_vectors"] = coll.config["sparse_vectors"]
    return {
        "status": "green",
        "optimizer_status": "ok",
        "indexed_vectors_count": info.indexed_vectors_count,
        "points_count": info.points_count,
        "segments_count": info.segments_count,
        "config": {
            "params": params,
            "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000},
            "optimizer_config": {"deleted_threshold": 0.2, "vacuum_min_vector_number": 1000,
                                 "default_segment_number": 0, "flush_interval_sec": 5},
            "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
        },
        "payload_schema": schema,
        "created_at": coll.created_at.isoformat().replace("+00:00", "Z"),
    }


# --------------------------------------------------------------------------- app

M = TypeVar("M")


def _parse(adapter: TypeAdapter[M], body: bytes) -> M:
    try:
        return adapter.validate_json(body or b"{}")
    except ValidationError as exc:
        raise ApiError(400, f"Format error in JSON body: {exc}") from exc


_CREATE = TypeAdapter(models.CreateCollection)
_INDEX = TypeAdapter(models.CreateFieldIndex)
_UPSERT: TypeAdapter[Any] = TypeAdapter(models.PointInsertOperations)
_QUERY = TypeAdapter(models.QueryRequest)
_SCROLL = TypeAdapter(models.ScrollRequest)
_COUNT = TypeAdapter(models.CountRequest)
_SELECTOR: TypeAdapter[Any] = TypeAdapter(models.PointsSelector)
_VECTORS = TypeAdapter(models.UpdateVectors)


def _envelope(result: Any, started: float) -> JSONResponse:
    return JSONResponse({"result": result, "status": "ok", "time": time.perf_counter() - started})


def _wait(request: Request) -> bool:
    return request.query_params.get("wait", "false").lower() == "true"


def create_app(data: Path, *, api_key: str | None = None) -> FastAPI:
    """The ASGI app serving the collections stored under ``data``."""
    registry = Registry(data)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        registry.close()

    app = FastAPI(title="qdrant-edge dev server", version=API_VERSION, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None)
    app.state.registry = registry

    @app.middleware("http")
    async def envelope_errors(request: Request, call_next: Callable[[Request], Any]) -> Any:
        started = time.perf_counter()
        if api_key is not None and request.url.path not in ("/healthz", "/livez", "/readyz"):
            given = request.headers.get("api-key") or request.headers.get("authorization", "").removeprefix(
                "Bearer ")
            if given != api_key:
                return JSONResponse({"status": {"error": "Unauthorized: invalid API key"},
                                     "time": time.perf_counter() - started}, status_code=401)
        try:
            return await call_next(request)
        except ApiError as exc:
            return JSONResponse({"status": {"error": exc.message}, "time": time.perf_counter() - started},
                                status_code=exc.status)
        except Exception as exc:  # an engine error: report it the way Qdrant reports service errors
            status = 400 if _is_input_error(exc) else 500
            prefix = "Wrong input" if status == 400 else "Service internal error"
            if str(exc).startswith("No point with id"):  # an update of a point that is not there
                status, prefix = 404, "Not found"
            return JSONResponse({"status": {"error": f"{prefix}: {exc}"},
                                 "time": time.perf_counter() - started}, status_code=status)

    def locked(name: str, fn: Callable[[qe.EdgeShard], Any]) -> Any:
        coll = registry.get(name)
        with coll.lock:
            return fn(coll.open_shard())

    async def applied(name: str, op: qe.UpdateOperation, request: Request, started: float) -> JSONResponse:
        def apply(shard: qe.EdgeShard) -> None:
            shard.update(op)
            shard.flush()  # durable before we answer, like wait=true on a server

        await run_in_threadpool(locked, name, apply)
        return _envelope(_update_result(registry, _wait(request)), started)

    @app.get("/")
    async def root() -> dict[str, str]:
        return {"title": "qdrant - vector search engine", "version": API_VERSION,
                "commit": f"qdrant-edge {_edge_version()}"}

    @app.get("/healthz", response_class=PlainTextResponse)
    @app.get("/livez", response_class=PlainTextResponse)
    @app.get("/readyz", response_class=PlainTextResponse)
    async def health() -> str:
        return "healthz check passed"

    @app.get("/collections")
    async def list_collections() -> JSONResponse:
        started = time.perf_counter()
        names = await run_in_threadpool(registry.names)
        return _envelope({"collections": [{"name": n} for n in names]}, started)

    @app.get("/collections/{name}/exists")
    async def collection_exists(name: str) -> JSONResponse:
        started = time.perf_counter()
        return _envelope({"exists": registry.exists(name)}, started)

    @app.get("/collections/{name}")
    async def get_collection(name: str) -> JSONResponse:
        started = time.perf_counter()
        coll = await run_in_threadpool(registry.get, name)

        def info() -> dict[str, Any]:
            with coll.lock:
                return _collection_info(coll, coll.open_shard())

        return _envelope(await run_in_threadpool(info), started)

    @app.put("/collections/{name}")
    async def create_collection(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        body = await request.body()
        parsed = _parse(_CREATE, body)
        await run_in_threadpool(registry.create, name, parsed, json.loads(body or b"{}"))
        return _envelope(True, started)

    @app.delete("/collections/{name}")
    async def delete_collection(name: str) -> JSONResponse:
        started = time.perf_counter()
        return _envelope(await run_in_threadpool(registry.delete, name), started)

    @app.post("/collections/{name}/snapshots")
    async def create_snapshot(name: str) -> JSONResponse:
        started = time.perf_counter()
        return _envelope(await run_in_threadpool(registry.create_snapshot, name), started)

    @app.get("/collections/{name}/snapshots")
    async def list_snapshots(name: str) -> JSONResponse:
        started = time.perf_counter()
        folder = registry.snapshot_dir(name)
        found = sorted(folder.glob("*.snapshot")) if folder.is_dir() else []
        return _envelope([{"name": p.name, "size": p.stat().st_size} for p in found], started)

    @app.get("/collections/{name}/snapshots/{snapshot}")
    async def download_snapshot(name: str, snapshot: str) -> Any:
        from fastapi.responses import FileResponse

        return FileResponse(registry.snapshot_path(name, snapshot), media_type="application/octet-stream")

    @app.delete("/collections/{name}/snapshots/{snapshot}")
    async def delete_snapshot(name: str, snapshot: str) -> JSONResponse:
        started = time.perf_counter()
        registry.snapshot_path(name, snapshot).unlink()
        return _envelope(True, started)

    @app.post("/collections/{name}/snapshots/upload")
    async def upload_snapshot(name: str, request: Request) -> JSONResponse:
        """Qdrant's ``POST .../snapshots/upload`` (multipart field ``snapshot``): the collection recovered."""
        started = time.perf_counter()
        form = await request.form()
        upload = form.get("snapshot")
        if upload is None or isinstance(upload, str):
            raise ApiError(400, "Wrong input: send the snapshot as the multipart field 'snapshot'")
        await run_in_threadpool(registry.recover, name, upload.file)
        return _envelope(True, started)

    @app.put("/collections/{name}/index")
    async def create_index(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_INDEX, await request.body())
        schema = parsed.field_schema
        if schema is None:
            raise ApiError(400, "Wrong input: field_schema is required")
        # Index parameter objects ({"type": "keyword", "is_tenant": true, ...}) are reduced to their
        # type: the engine builds the default index of that type.
        kind = schema.value if isinstance(schema, models.PayloadSchemaType) else getattr(schema.type, "value", "")
        if kind not in _SCHEMAS:
            raise _unsupported(f"payload index type {kind!r}")

        def apply(shard: qe.EdgeShard) -> None:
            if parsed.field_name not in shard.info().payload_schema:
                shard.update(qe.UpdateOperation.create_field_index(parsed.field_name, _SCHEMAS[kind]))
                shard.flush()

        await run_in_threadpool(locked, name, apply)
        return _envelope(_update_result(registry, _wait(request)), started)

    @app.put("/collections/{name}/points")
    async def upsert_points(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_UPSERT, await request.body())
        points = _points(parsed)
        condition = _filter(parsed.update_filter)
        mode = {None: None, models.UpdateMode.UPSERT: qe.UpdateMode.Upsert,
                models.UpdateMode.INSERT_ONLY: qe.UpdateMode.InsertOnly,
                models.UpdateMode.UPDATE_ONLY: qe.UpdateMode.UpdateOnly}[parsed.update_mode]
        return await applied(name, qe.UpdateOperation.upsert_points(points, condition=condition, update_mode=mode),
                             request, started)

    @app.put("/collections/{name}/points/vectors")
    async def update_vectors(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_VECTORS, await request.body())
        if parsed.shard_key is not None:
            raise _unsupported("shard keys")
        op = qe.UpdateOperation.update_vectors(
            [qe.PointVectors(_point_id(p.id), _vector_struct(p.vector)) for p in parsed.points],
            condition=_filter(parsed.update_filter))
        return await applied(name, op, request, started)

    @app.post("/collections/{name}/points/query")
    async def query_points(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_QUERY, await request.body())
        if parsed.lookup_from is not None:
            raise _unsupported("lookup_from")
        req = qe.QueryRequest(
            limit=parsed.limit if parsed.limit is not None else DEFAULT_LIMIT,
            offset=parsed.offset,
            query=_query(parsed.query, parsed.using),
            prefetches=[_prefetch(p) for p in _as_list(parsed.prefetch)] or None,
            with_vector=parsed.with_vector if parsed.with_vector is not None else False,
            with_payload=_with_payload(parsed.with_payload, False),
            filter=_filter(parsed.filter),
            score_threshold=parsed.score_threshold,
            params=_params(parsed.params),
        )
        points = await run_in_threadpool(locked, name, lambda shard: shard.query(req))
        return _envelope({"points": [_scored_point(p) for p in points]}, started)

    @app.post("/collections/{name}/points/scroll")
    async def scroll_points(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_SCROLL, await request.body())
        req = qe.ScrollRequest(
            offset=_point_id(parsed.offset) if parsed.offset is not None else None,
            limit=parsed.limit if parsed.limit is not None else DEFAULT_LIMIT,
            filter=_filter(parsed.filter),
            with_payload=_with_payload(parsed.with_payload, True),
            with_vector=parsed.with_vector if parsed.with_vector is not None else False,
            order_by=_order_by(parsed.order_by) if parsed.order_by is not None else None,
        )
        records, next_offset = await run_in_threadpool(locked, name, lambda shard: shard.scroll(req))
        return _envelope({"points": [_record(r) for r in records],
                          "next_page_offset": _point_id(next_offset) if next_offset is not None else None},
                         started)

    @app.post("/collections/{name}/points/count")
    async def count_points(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_COUNT, await request.body())
        req = qe.CountRequest(exact=parsed.exact if parsed.exact is not None else True,
                              filter=_filter(parsed.filter))
        count = await run_in_threadpool(locked, name, lambda shard: shard.count(req))
        return _envelope({"count": count}, started)

    @app.post("/collections/{name}/points/delete")
    async def delete_points(name: str, request: Request) -> JSONResponse:
        started = time.perf_counter()
        parsed = _parse(_SELECTOR, await request.body())
        if isinstance(parsed, models.FilterSelector):
            flt = _filter(parsed.filter)
            assert flt is not None
            op = qe.UpdateOperation.delete_points_by_filter(flt)
        else:
            op = qe.UpdateOperation.delete_points([_point_id(i) for i in parsed.points])
        return await applied(name, op, request, started)

    return app


def _points(parsed: Any) -> list[qe.Point]:
    if getattr(parsed, "shard_key", None) is not None:
        raise _unsupported("shard keys")
    if isinstance(parsed, models.PointsList):
        return [qe.Point(_point_id(p.id), _vector_struct(p.vector), p.payload) for p in parsed.points]
    batch = parsed.batch
    n = len(batch.ids)
    payloads = batch.payloads if batch.payloads is not None else [None] * n
    if isinstance(batch.vectors, dict):
        per_point = [{name: _vector(vs[i]) for name, vs in batch.vectors.items()} for i in range(n)]
        return [qe.Point(_point_id(batch.ids[i]), per_point[i], payloads[i]) for i in range(n)]
    return [qe.Point(_point_id(batch.ids[i]), _vector(batch.vectors[i]), payloads[i]) for i in range(n)]


def _vector_struct(vector: Any) -> Any:
    if isinstance(vector, dict):
        return {name: _vector(v) for name, v in vector.items()}
    return _vector(vector)


def _is_input_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("dimension", "wrong input", "bad input", "not found",
                                   "not existing vector", "incompatible", "invalid", "missing"))


def _edge_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qdrant-edge-py")
    except PackageNotFoundError:
        return "unknown"


# --------------------------------------------------------------------------- process


@contextlib.contextmanager
def _data_lock(data: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``data`` so a second server on the same directory fails at once
    (the engine would otherwise fail later, on the first shard both try to open)."""
    data.mkdir(parents=True, exist_ok=True)
    with open(data / ".lock", "a+b") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: rely on the engine's WAL lock
            yield
            return
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise SystemExit(f"{data} is in use by another qdrant-edge server") from exc
        yield


def main(argv: list[str] | None = None) -> None:
    """Command line entry point (see the module docstring)."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m devtools.qdrant_edge_server",
                                     description="Qdrant REST subset served from qdrant-edge shards.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6333, help="0 picks a free port (see --port-file)")
    parser.add_argument("--data", type=Path, required=True, help="directory holding the collections")
    parser.add_argument("--api-key", default=os.environ.get(ENV_API_KEY),
                        help=f"require this api-key header (default: ${ENV_API_KEY})")
    parser.add_argument("--allow-remote", action="store_true", help="allow binding to a non-loopback address")
    parser.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    if not is_loopback(args.host) and not args.allow_remote:
        parser.error(f"refusing to listen on {args.host}: "
                     "this dev server is loopback-only unless --allow-remote")

    with _data_lock(args.data):
        # Bind before starting so --port 0 works and the port file names the real port.
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        port = sock.getsockname()[1]
        config = uvicorn.Config(create_app(args.data, api_key=args.api_key), log_level=args.log_level,
                                access_log=False)
        server = uvicorn.Server(config)
        if args.port_file is not None:
            _announce(server, args.port_file, port)
        server.run(sockets=[sock])


def _announce(server: Any, port_file: Path, port: int) -> None:
    """Write ``port`` to ``port_file`` once the server accepts connections."""
    def watch() -> None:
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.01)
        tmp = port_file.with_name(port_file.name + ".tmp")
        tmp.write_text(str(port))
        tmp.replace(port_file)  # readers never see a half-written file

    threading.Thread(target=watch, daemon=True).start()


class EdgeServerProcess:
    """Runs the server in a subprocess (for tests and for local multi-process setups).

    >>> with EdgeServerProcess(Path("/tmp/vectors")) as server:   # doctest: +SKIP
    ...     QdrantVectorStore.from_url(server.url)
    """

    def __init__(self, data: Path, *, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None,
                 log: IO[bytes] | int | None = None) -> None:
        """Configure; nothing runs until :meth:`start`.  ``port=0`` picks a free port."""
        self.data = Path(data)
        self.host = host
        self.requested_port = port
        self.port: int | None = None
        self.api_key = api_key
        self.log = log
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://host:port``) of the running server."""
        if self.port is None:
            raise RuntimeError("server not started")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 30.0) -> EdgeServerProcess:
        """Start the subprocess and wait until it listens."""
        self.data.mkdir(parents=True, exist_ok=True)
        port_file = self.data / f".port-{uuid.uuid4().hex}"
        cmd = [sys.executable, "-m", "devtools.qdrant_edge_server", "--host", self.host,
               "--port", str(self.port or self.requested_port), "--data", str(self.data),
               "--port-file", str(port_file)]
        env = dict(os.environ)
        # devtools is never installed: the child finds it (and this checkout's secondbrain) from the root
        package_root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        if self.api_key is not None:
            env[ENV_API_KEY] = self.api_key
        self._proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + timeout
        try:
            while not port_file.exists():
                if self._proc.poll() is not None:
                    raise RuntimeError(f"qdrant-edge server exited with {self._proc.returncode}")
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError("qdrant-edge server did not start")
                time.sleep(0.02)
            self.port = int(port_file.read_text())
        finally:
            port_file.unlink(missing_ok=True)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Stop gracefully (SIGTERM: shards are flushed and closed), killing after ``timeout``."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc, timeout)

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash would: nothing is flushed on the way out."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def restart(self) -> None:
        """Stop and start again on the same data directory and port."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        """Whether the subprocess is alive."""
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> EdgeServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    main()
