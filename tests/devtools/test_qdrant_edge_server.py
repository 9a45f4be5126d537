"""The qdrant-edge-backed Qdrant REST dev server: wire format, errors, processes, durability.

The full VectorStore behaviour through this server is covered by the contract suite
(``tests/contracts/test_vector_store_contract.py``, parametrisation ``qdrant-rest-edge``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import qdrant_edge as qe
from qdrant_client import QdrantClient, models

from devtools import qdrant_edge_server
from devtools.qdrant_edge_server import API_VERSION, EdgeServerProcess, main
from secondbrain.ports import SparseVector, VectorFilter, VectorPoint
from secondbrain.stores.vectors_qdrant import QdrantVectorStore
from tests.paths import REPO as ROOT

CREATE = {"vectors": {"dense": {"size": 3, "distance": "Cosine"}},
          "sparse_vectors": {"bm25": {"modifier": "idf"}}}
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EdgeServerProcess]:
    with EdgeServerProcess(tmp_path_factory.mktemp("edge-server")) as srv:
        yield srv


@pytest.fixture
def http(server: EdgeServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def _name() -> str:
    return f"c_{uuid.uuid4().hex[:12]}"


def _point(i: int, doc: str = "d") -> VectorPoint:
    return VectorPoint(str(uuid.uuid5(uuid.NAMESPACE_URL, f"srv/{doc}/{i}")), [1.0, float(i), 0.5],
                       SparseVector([i, 1000], [1.0, 0.5]), {"document_id": doc, "n": i})


def test_root_reports_a_version(http: httpx.Client) -> None:
    body = http.get("/").json()
    assert body["version"] == API_VERSION
    assert http.get("/healthz").status_code == 200


def test_datetime_ranges_use_the_stores_fixed_width_timestamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """REST datetimes reach the engine as the stores write payloads: ``...HH:MM:SS.ffffffZ``."""
    monkeypatch.setattr(qe, "RangeDateTime", lambda **kw: kw)
    monkeypatch.setattr(qe, "OrderBy", lambda key, **kw: kw)
    bounds: Any = qdrant_edge_server._range(models.DatetimeRange(
        gte=datetime(2024, 1, 1, tzinfo=UTC), lt=date(2024, 2, 1),
        lte=datetime(2024, 3, 1, 9, 30, 0, 250, tzinfo=timezone(timedelta(hours=2)))))
    assert bounds == {"gte": "2024-01-01T00:00:00.000000Z", "gt": None,
                      "lte": "2024-03-01T07:30:00.000250Z", "lt": "2024-02-01T00:00:00.000000Z"}
    order: Any = qdrant_edge_server._order_by(models.OrderBy(key="captured_at", start_from=datetime(2024, 5, 6)))
    assert order["start_from"] == "2024-05-06T00:00:00.000000Z"


def test_collection_lifecycle_and_envelopes(http: httpx.Client) -> None:
    name = _name()
    assert http.get(f"/collections/{name}/exists").json()["result"] == {"exists": False}
    missing = http.get(f"/collections/{name}")
    assert missing.status_code == 404
    assert "doesn't exist" in missing.json()["status"]["error"]
    created = http.put(f"/collections/{name}", json=CREATE)
    assert created.status_code == 200
    body = created.json()
    assert body["result"] is True and body["status"] == "ok" and isinstance(body["time"], float)
    assert http.put(f"/collections/{name}", json=CREATE).status_code == 409
    assert {"name": name} in http.get("/collections").json()["result"]["collections"]
    index = http.put(f"/collections/{name}/index?wait=true", json={"field_name": "document_id",
                                                                    "field_schema": "keyword"})
    assert index.json()["result"]["status"] == "completed"
    info = http.get(f"/collections/{name}").json()["result"]
    assert info["config"]["params"]["vectors"]["dense"] == {"size": 3, "distance": "Cosine"}
    assert info["payload_schema"]["document_id"]["data_type"] == "keyword"
    assert http.delete(f"/collections/{name}").json()["result"] is True
    assert http.delete(f"/collections/{name}").json()["result"] is False


def test_bad_requests_are_400(http: httpx.Client) -> None:
    name = _name()
    http.put(f"/collections/{name}", json=CREATE)
    bad_json = http.post(f"/collections/{name}/points/count", content=b"{not json",
                         headers={"content-type": "application/json"})
    assert bad_json.status_code == 400 and "Format error" in bad_json.json()["status"]["error"]
    by_id = http.post(f"/collections/{name}/points/query", json={"query": 5})
    assert by_id.status_code == 400 and "not supported" in by_id.json()["status"]["error"]
    assert http.put("/collections/..%2Fescape", json=CREATE).status_code in (400, 404)
    wrong_dim = http.put(f"/collections/{name}/points?wait=true", json={"points": [
        {"id": 1, "vector": {"dense": [1.0, 2.0]}, "payload": {}}]})
    assert wrong_dim.status_code == 400


def test_qdrant_client_round_trip(server: EdgeServerProcess) -> None:
    client = QdrantClient(url=server.url)
    name = _name()
    client.create_collection(
        name, vectors_config={"dense": models.VectorParams(size=3, distance=models.Distance.COSINE)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    # the column-wise batch form of upsert
    sparse: list[models.Vector] = [models.SparseVector(indices=[1], values=[1.0]),
                                   models.SparseVector(indices=[2], values=[1.0])]
    batch = models.Batch(ids=[1, 2], vectors={"dense": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], "bm25": sparse},
                         payloads=[{"k": "a"}, {"k": "b"}])
    client.upsert(name, points=batch, wait=True)
    assert client.count(name).count == 2
    hits = client.query_points(name, query=[0.0, 1.0, 0.0], using="dense", limit=1, with_vectors=True).points
    assert hits[0].id == 2 and hits[0].payload == {"k": "b"}
    assert isinstance(hits[0].vector, dict) and hits[0].vector["dense"] == pytest.approx([0.0, 1.0, 0.0])
    prefetch = [models.Prefetch(query=[1.0, 0.0, 0.0], using="dense", limit=5)]
    dbsf = client.query_points(name, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.DBSF),
                               limit=5).points
    assert len(dbsf) == 2
    records, _ = client.scroll(name, scroll_filter=models.Filter(must=[models.FieldCondition(
        key="k", match=models.MatchValue(value="a"))]), limit=10)
    assert [r.id for r in records] == [1]
    client.delete(name, points_selector=models.PointIdsList(points=[1]), wait=True)
    assert client.count(name).count == 1
    client.close()


def test_api_key(tmp_path: Path) -> None:
    with EdgeServerProcess(tmp_path / "data", api_key="s3cret") as srv:
        assert httpx.get(srv.url + "/collections").status_code == 401
        assert httpx.get(srv.url + "/healthz").status_code == 200
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "api key over http": fine on loopback
            store = QdrantVectorStore.from_url(srv.url, api_key="s3cret")
            store.ensure_collection("alice", 3)
            assert store.count("alice") == 0
            store.close()


def test_separate_processes_share_the_store(server: EdgeServerProcess) -> None:
    # The reason this server exists: a worker process writes, another process reads.
    prefix = f"x{uuid.uuid4().hex[:8]}_"
    writer = textwrap.dedent(f"""
        from secondbrain.ports import SparseVector, VectorPoint
        from secondbrain.stores.vectors_qdrant import QdrantVectorStore
        store = QdrantVectorStore.from_url({server.url!r}, collection_prefix={prefix!r})
        store.ensure_collection("alice", 3)
        store.upsert("alice", [VectorPoint("6f1c1d5e-2a4b-4c1e-9a57-000000000001", [1.0, 0.0, 0.0],
                                           SparseVector([7], [1.0]), {{"document_id": "d"}})])
        store.close()
    """)
    subprocess.run([sys.executable, "-c", writer], env=ENV, check=True, timeout=60)
    reader = QdrantVectorStore.from_url(server.url, collection_prefix=prefix)
    hits = reader.search("alice", dense=[1.0, 0.0, 0.0], sparse=SparseVector([7], [1.0]), limit=5)
    assert [h.id for h in hits] == ["6f1c1d5e-2a4b-4c1e-9a57-000000000001"]
    reader.close()


def test_updates_survive_a_crash(tmp_path: Path) -> None:
    srv = EdgeServerProcess(tmp_path / "data").start()
    try:
        store = QdrantVectorStore.from_url(srv.url)
        store.ensure_collection("alice", 3)
        store.upsert("alice", [_point(i, "a") for i in range(5)] + [_point(i, "b") for i in range(3)])
        store.delete_where("alice", VectorFilter(document_ids=["b"]))
        store.close()
        srv.kill()  # no graceful flush on the way out
        srv.start()
        store = QdrantVectorStore.from_url(srv.url)
        assert store.count("alice") == 5
        assert store.count("alice", VectorFilter(document_ids=["b"])) == 0
        store.close()
    finally:
        srv.stop()


def test_second_server_on_same_data_fails(server: EdgeServerProcess) -> None:
    with pytest.raises(RuntimeError, match="exited"):
        EdgeServerProcess(server.data).start(timeout=30)


def test_loopback_only_by_default(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["--host", "0.0.0.0", "--port", "0", "--data", str(tmp_path)])
    assert not any(tmp_path.iterdir())  # refused before touching anything
