"""One contract for every :class:`secondbrain.ports.VectorStore` implementation.

Runs against the edge store (on disk, in a tmp dir), qdrant-client local mode (in memory),
qdrant-client over REST against the qdrant-edge-backed dev server (a subprocess) and the in-memory
twin the fast lane's tests use.  Dense
vectors are real all-MiniLM-L6-v2 embeddings; sparse vectors come from the production
BM25 encoder.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from devtools.qdrant_edge_server import EdgeServerProcess
from secondbrain.embedding import load_embedder
from secondbrain.ports import SparseVector, TimeRange, VectorFilter, VectorHit, VectorPoint, VectorStore
from secondbrain.sparse import Bm25Encoder
from secondbrain.stores.memory.vectors import MemoryVectorStore, VectorTables
from secondbrain.stores.vector_payload import collection_name
from secondbrain.stores.vectors_edge import EdgeVectorStore
from secondbrain.stores.vectors_qdrant import QdrantVectorStore
from secondbrain.time_formats import rfc3339

DIMENSION = 384
_EMBEDDER = None


def embed(texts: list[str]) -> list[list[float]]:
    """Real all-MiniLM-L6-v2 embeddings (the production embedder, loaded once)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = load_embedder()
    return _EMBEDDER.embed_documents(list(texts))

ALICE, BOB, NOBODY = "alice", "bob", "nobody"
ENCODER = Bm25Encoder()


# --------------------------------------------------------------------------- corpus

def _dt(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Doc:
    key: str
    modality: str
    captured_at: str
    ingested_at: str
    title: str
    chunks: tuple[str, ...]


DOCS: tuple[Doc, ...] = (
    Doc("bread", "note", "2024-03-01T00:00:00Z", "2024-06-01T10:00:00Z", "Sourdough notes", (
        "To bake sourdough bread, feed the starter the night before, mix flour, water and salt, "
        "let the dough rise for eight hours and bake it at 230 degrees in a Dutch oven.",
        "A good sourdough crumb needs a long cold fermentation of the dough in the fridge.",
    )),
    Doc("invoices", "pdf", "2024-02-15T12:00:00Z", "2024-06-02T08:00:00Z", "Acme invoices", (
        "Invoice 8391 from Acme Hosting: monthly cloud server rental, total 240 EUR, due 30 March.",
        "Invoice 7204 from Acme Hosting: monthly cloud server rental, total 240 EUR, due 30 April.",
        "Invoice 5512 from Acme Hosting: monthly cloud server rental, total 240 EUR, due 30 May.",
        "Invoice 6630 from Acme Hosting: monthly cloud server rental, total 240 EUR, due 30 June.",
    )),
    Doc("trip", "email", "2024-04-10T07:30:00Z", "2024-06-03T18:00:00Z", "Lisbon trip", (
        "Your flight to Lisbon departs on Friday at 7:40 from gate B12; "
        "hotel check-in is after 3pm in Alfama.",
        "Remember to pack the passport and a power adapter for Portugal.",
    )),
    Doc("health", "note", "2023-12-31T23:59:59Z", "2024-06-01T09:59:59Z", "Health", (
        "The dentist appointment moved to Tuesday morning; bring the insurance card.",
        "Training plan: three easy five kilometre runs per week and one long run on Sunday.",
    )),
    Doc("work", "chat", "2024-05-20T14:00:00Z", "2024-06-04T09:00:00Z", "Planning", (
        "The quarterly planning meeting decided to migrate the billing service from Postgres 12 to 16.",
        "Marta owns the migration runbook and the rollback plan for the billing database.",
    )),
    Doc("garden", "voice", "2024-05-05T06:00:00Z", "2024-06-05T06:00:00Z", "Garden diary", (
        "Garden diary: planted tomatoes and basil along the south fence, mulched the roses, and the "
        "neighbour returned the ladder. Parcel 4471 arrived.",
        "The compost needs turning every two weeks; add dry leaves when it starts to smell.",
    )),
)


def doc_id(user: str, key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"doc/{user}/{key}"))


def point_id(user: str, key: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"chunk/{user}/{key}/{index}"))


@pytest.fixture(scope="session")
def dense_by_text() -> dict[str, list[float]]:
    texts = [c for d in DOCS for c in d.chunks]
    return dict(zip(texts, embed(texts), strict=True))


def corpus(user: str, dense_by_text: dict[str, list[float]]) -> list[VectorPoint]:
    points = []
    for doc in DOCS:
        sparse = ENCODER.encode_documents(doc.chunks)
        for i, text in enumerate(doc.chunks):
            pid = point_id(user, doc.key, i)
            points.append(VectorPoint(id=pid, dense=dense_by_text[text], sparse=sparse[i], payload={
                "user_id": user, "document_id": doc_id(user, doc.key), "source_id": f"src-{doc.key}",
                "chunk_id": pid, "chunk_index": i, "modality": doc.modality, "title": doc.title,
                "text": text, "captured_at": doc.captured_at, "ingested_at": doc.ingested_at,
                "char_start": 0, "char_end": len(text), **MENTIONED.get((doc.key, i), {}), **RECURS.get(doc.key, {}),
            }))
    return points


# The Lisbon e-mail (written 10 April) speaks of its Friday, 12 April: the points of that day.
MENTIONED = {("trip", 0): {"mentioned_at": ["2024-04-12T00:00:00.000000Z", "2024-04-12T23:59:59.999999Z"]}}


# Two recurring events kept as one each: the compost turning, fortnightly through the summer of 2024, and the
# planning meeting, from 20 May 2024 without end (its span runs to the end of time).
RECURS = {"garden": {"recurs_from": "2024-05-05T06:00:00Z", "recurs_until": "2024-09-01T00:00:00Z"},
          "work": {"recurs_from": "2024-05-20T14:00:00Z", "recurs_until": "9999-12-31T00:00:00Z"}}


def pid_of(user: str, key: str, index: int = 0) -> str:
    return point_id(user, key, index)


def query(store: VectorStore, user: str, text: str, **kw: Any) -> list[VectorHit]:
    kw.setdefault("limit", 5)
    return store.search(user, dense=embed([text])[0], sparse=ENCODER.encode_query(text), **kw)


# --------------------------------------------------------------------------- implementations

@pytest.fixture(scope="session")
def edge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EdgeServerProcess]:
    with EdgeServerProcess(tmp_path_factory.mktemp("qdrant-edge-server")) as server:
        yield server


@dataclass
class Harness:
    kind: str
    store: VectorStore
    # Close the store and open a new one on the same data; None when the data is in memory only.
    reopen: Callable[[], VectorStore] | None


@pytest.fixture(params=["edge", "qdrant-local", "qdrant-rest-edge", "memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    kind = request.param
    h: Harness
    if kind == "edge":
        root = tmp_path / "vectors"

        def reopen_edge() -> VectorStore:
            h.store.close()
            h.store = EdgeVectorStore(root)
            return h.store

        h = Harness(kind, EdgeVectorStore(root), reopen_edge)
    elif kind == "qdrant-local":
        path = str(tmp_path / "qdrant-local")  # on disk, so persistence is checked too

        def reopen_local() -> VectorStore:
            h.store.close()
            h.store = QdrantVectorStore.local(path)
            return h.store

        h = Harness(kind, QdrantVectorStore.local(path), reopen_local)
    elif kind == "memory":
        tables = VectorTables()  # what outlives a store object, as a directory does

        def reopen_memory() -> VectorStore:
            h.store.close()
            h.store = MemoryVectorStore(tables)
            return h.store

        h = Harness(kind, MemoryVectorStore(tables), reopen_memory)
    else:
        server: EdgeServerProcess = request.getfixturevalue("edge_server")
        # The server is shared by the session: a fresh prefix keeps each test's collections apart.
        prefix = f"t{uuid.uuid4().hex[:10]}_"

        def reopen_rest() -> VectorStore:
            h.store.close()
            server.restart()  # the server process too, so its on-disk state is what is read back
            h.store = QdrantVectorStore.from_url(server.url, collection_prefix=prefix)
            return h.store

        h = Harness(kind, QdrantVectorStore.from_url(server.url, collection_prefix=prefix), reopen_rest)
    try:
        yield h
    finally:
        h.store.close()


@pytest.fixture
def loaded(harness: Harness, dense_by_text: dict[str, list[float]]) -> Harness:
    """Alice and Bob each hold the whole corpus (with their own ids)."""
    for user in (ALICE, BOB):
        harness.store.ensure_collection(user, DIMENSION)
        harness.store.upsert(user, corpus(user, dense_by_text))
    return harness


N_POINTS = sum(len(d.chunks) for d in DOCS)


# --------------------------------------------------------------------------- tests

def test_implements_protocol(harness: Harness) -> None:
    assert isinstance(harness.store, VectorStore)
    harness.store.check()


def test_ensure_collection_is_idempotent(harness: Harness, dense_by_text: dict[str, list[float]]) -> None:
    store = harness.store
    name = store.ensure_collection(ALICE, DIMENSION)
    assert name.endswith(collection_name(ALICE))
    store.upsert(ALICE, corpus(ALICE, dense_by_text))
    assert store.ensure_collection(ALICE, DIMENSION) == name
    assert store.count(ALICE) == N_POINTS
    with pytest.raises(ValueError):
        store.ensure_collection(ALICE, DIMENSION + 1)


def _count_collection_checks(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the calls ``ensure_collection`` makes to check a collection (store internals)."""
    calls: list[str] = []
    store: Any = harness.store

    def spy(obj: Any, method: str) -> None:
        real = getattr(obj, method)

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(method)
            return real(*args, **kwargs)

        monkeypatch.setattr(obj, method, counted)

    if isinstance(store, EdgeVectorStore):
        spy(store, "_ensure_indexes")  # shard.info() and the index creation
    elif isinstance(store, MemoryVectorStore):
        spy(store, "_open_collection")
    else:
        spy(store.client, "get_collection")
        spy(store.client, "collection_exists")
    return calls


def test_ensure_collection_checks_once_until_dropped(harness: Harness, monkeypatch: pytest.MonkeyPatch,
                                                     dense_by_text: dict[str, list[float]]) -> None:
    store = harness.store
    calls = _count_collection_checks(harness, monkeypatch)
    name = store.ensure_collection(ALICE, DIMENSION)
    checks = len(calls)
    assert checks >= 1
    for _ in range(5):  # an embed event each: no more round trips to the engine
        assert store.ensure_collection(ALICE, DIMENSION) == name
    assert len(calls) == checks
    with pytest.raises(ValueError):  # another size is still checked (and refused)
        store.ensure_collection(ALICE, DIMENSION + 1)
    store.ensure_collection(BOB, DIMENSION)  # another user has its own collection
    assert store.count(BOB) == 0
    store.upsert(ALICE, corpus(ALICE, dense_by_text)[:2])
    store.drop_user(ALICE)
    calls.clear()
    assert store.ensure_collection(ALICE, DIMENSION) == name  # dropped: created again
    assert calls
    store.upsert(ALICE, corpus(ALICE, dense_by_text)[:3])
    assert store.count(ALICE) == 3


def test_rejects_unsafe_user_ids(harness: Harness) -> None:
    for bad in ("../etc", "a/b", "a\\b", "", ".hidden", "x" * 200):
        with pytest.raises(ValueError):
            harness.store.ensure_collection(bad, DIMENSION)
        with pytest.raises(ValueError):
            harness.store.count(bad)


def test_upsert_replay_does_not_duplicate(loaded: Harness, dense_by_text: dict[str, list[float]]) -> None:
    store = loaded.store
    points = corpus(ALICE, dense_by_text)
    store.upsert(ALICE, points)
    store.upsert(ALICE, points[:3])
    assert store.count(ALICE) == N_POINTS
    # a replay with a changed payload replaces the point
    first = points[0]
    store.upsert(ALICE, [VectorPoint(first.id, first.dense, first.sparse, {**first.payload, "title": "v2"})])
    assert store.count(ALICE) == N_POINTS
    hits, _ = store.scroll(ALICE, flt=VectorFilter(document_ids=[first.payload["document_id"]]), limit=100)
    assert {h.id: h.payload["title"] for h in hits}[first.id] == "v2"


def test_payload_round_trips(loaded: Harness, dense_by_text: dict[str, list[float]]) -> None:
    expected = {p.id: p.payload for p in corpus(ALICE, dense_by_text)}
    hits, _ = loaded.store.scroll(ALICE, limit=100)
    assert {h.id: h.payload for h in hits} == expected
    assert all(h.score == 0.0 for h in hits)


def test_upsert_refuses_payload_of_another_user(harness: Harness,
                                                dense_by_text: dict[str, list[float]]) -> None:
    harness.store.ensure_collection(ALICE, DIMENSION)
    with pytest.raises(ValueError):
        harness.store.upsert(ALICE, corpus(BOB, dense_by_text)[:1])


@pytest.mark.parametrize(("text", "key", "index"), [
    ("how long should sourdough dough rise before baking", "bread", 0),
    ("when does my flight to Lisbon leave", "trip", 0),
    ("who is responsible for the database migration rollback", "work", 1),
    ("when is my dentist appointment", "health", 0),
])
def test_hybrid_ranks_relevant_chunk_first(loaded: Harness, text: str, key: str, index: int) -> None:
    for mode in ("hybrid", "dense"):
        hits = query(loaded.store, ALICE, text, mode=mode)
        assert hits[0].id == pid_of(ALICE, key, index), (mode, [h.payload["text"] for h in hits])
        assert hits[0].payload["text"] == DOCS[[d.key for d in DOCS].index(key)].chunks[index]
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert len({h.id for h in hits}) == len(hits)


def test_exact_identifier_is_found_by_sparse(loaded: Harness) -> None:
    store = loaded.store
    target = pid_of(ALICE, "invoices", 0)  # "Invoice 8391 ..."
    sparse_hits = query(store, ALICE, "invoice 8391", mode="sparse")
    assert sparse_hits[0].id == target
    assert sparse_hits[0].score > sparse_hits[1].score  # the rare number outweighs the common word
    hybrid_hits = query(store, ALICE, "invoice 8391", mode="hybrid")
    assert hybrid_hits[0].id == target



def test_identifier_is_found_by_sparse_when_dense_misses_it(loaded: Harness) -> None:
    store = loaded.store
    target = pid_of(ALICE, "garden", 0)  # "... Parcel 4471 arrived." inside a chunk about gardening
    dense_hits = query(store, ALICE, "4471", mode="dense")
    assert dense_hits[0].id != target  # the bare number means little to the embedding model
    assert query(store, ALICE, "4471", mode="sparse")[0].id == target
    assert query(store, ALICE, "4471", mode="hybrid")[0].id == target


def test_a_hybrid_tie_ranks_the_same_whatever_ids_the_points_got(harness: Harness) -> None:
    # One point is first by meaning and second by words, the other the mirror image: equal under plain RRF.
    # Point ids are random per import, so breaking that tie by id would rank the same data differently after
    # a fresh import; the dense side wins it, whichever id is the lower and whichever point came first.
    store, low, high = harness.store, "00000000-0000-4000-8000-000000000001", "ffffffff-ffff-4fff-bfff-ffffffffffff"
    axis = np.eye(DIMENSION, dtype=np.float64)
    by_meaning = axis[0].tolist()
    by_words = (axis[0] + 0.5 * axis[1]) / np.linalg.norm(axis[0] + 0.5 * axis[1])

    def point(user: str, pid: str, dense: list[float], weight: float) -> VectorPoint:
        return VectorPoint(id=pid, dense=dense, sparse=SparseVector([7], [weight]), payload={
            "user_id": user, "document_id": pid, "source_id": "src", "chunk_id": pid, "chunk_index": 0,
            "modality": "note", "title": "t", "text": pid, "captured_at": "2024-01-01T00:00:00Z",
            "ingested_at": "2024-01-01T00:00:00Z", "char_start": 0, "char_end": 1})

    for user, meaning_id, words_id, meaning_first in (("tiea", low, high, True), ("tieb", high, low, False)):
        store.ensure_collection(user, DIMENSION)  # and in both orders of writing
        points = [point(user, meaning_id, by_meaning, 1.0), point(user, words_id, by_words.tolist(), 2.0)]
        store.upsert(user, points if meaning_first else points[::-1])
        assert [h.id for h in store.search(user, dense=by_meaning, sparse=None, limit=2, mode="dense")] == \
            [meaning_id, words_id]
        assert [h.id for h in store.search(user, dense=None, sparse=SparseVector([7], [1.0]), limit=2,
                                           mode="sparse")] == [words_id, meaning_id]
        hits = store.search(user, dense=by_meaning, sparse=SparseVector([7], [1.0]), limit=2)
        assert [h.id for h in hits] == [meaning_id, words_id], user
        assert hits[0].score == pytest.approx(hits[1].score, rel=1e-3)  # a tie but for the hair that breaks it


def test_a_deleted_document_no_longer_weighs_in_the_word_ranking(harness: Harness) -> None:
    # BM25 weighs a word by how many of the user's passages hold it.  Once a document is deleted its
    # passages must stop counting, or a note the person removed keeps reordering what they search for.
    store = harness.store
    kept = ["Invoice 8391 from Acme Hosting, total 240 EUR.", "The plumber comes on Tuesday about the leak.",
            "Garden plan: tomatoes by the fence, basil in pots.", "Lisbon flight departs at 7:40 from gate B12."]
    gone = [f"Invoice {n} from Acme Hosting, paid by card." for n in range(1000, 1040)]

    def points(user: str, key: str, texts: list[str]) -> list[VectorPoint]:
        sparse = ENCODER.encode_documents(texts)
        return [VectorPoint(id=point_id(user, key, i), dense=[1.0] + [0.0] * (DIMENSION - 1), sparse=sparse[i],
                            payload={"user_id": user, "document_id": key, "source_id": key, "chunk_id": f"{key}{i}",
                                     "chunk_index": i, "modality": "note", "title": key, "text": t,
                                     "captured_at": "2024-01-01T00:00:00Z", "ingested_at": "2024-01-01T00:00:00Z",
                                     "char_start": 0, "char_end": len(t)})
                for i, t in enumerate(texts)]

    def ranked(user: str) -> list[tuple[str, float]]:
        hits = store.search(user, dense=None, sparse=ENCODER.encode_query("Acme invoice plumber"), limit=4,
                            mode="sparse")
        return [(str(h.payload["text"]), round(h.score, 4)) for h in hits]

    for user in ("never", "deleted"):
        store.ensure_collection(user, DIMENSION)
        store.upsert(user, points(user, "kept", kept))
    store.upsert("deleted", points("deleted", "gone", gone))
    assert ranked("deleted") != ranked("never")  # forty invoices make "invoice" a common word
    store.delete_where("deleted", VectorFilter(document_ids=["gone"]))
    assert store.count("deleted") == len(kept)
    assert ranked("deleted") == ranked("never")


def test_a_deletion_racing_another_process_still_deletes(edge_server: EdgeServerProcess,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Two processes delete from one collection on the server: the other one removes one of the points between
    # this one's listing of them and its emptying of their sparse vectors.  The deletion must still finish.
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    mine = QdrantVectorStore.from_url(edge_server.url, collection_prefix=prefix)
    other = QdrantVectorStore.from_url(edge_server.url, collection_prefix=prefix)
    try:
        mine.ensure_collection(ALICE, DIMENSION)
        texts = ["Invoice 8391 from Acme Hosting.", "Invoice 7204 from Acme Hosting.", "The plumber comes Tuesday."]
        sparse = ENCODER.encode_documents(texts)
        mine.upsert(ALICE, [VectorPoint(
            id=point_id(ALICE, "race", i), dense=[1.0] + [0.0] * (DIMENSION - 1), sparse=sparse[i],
            payload={"user_id": ALICE, "document_id": "invoices" if i < 2 else "plumber", "source_id": f"s{i}",
                     "chunk_id": f"c{i}", "chunk_index": i, "modality": "note", "title": "t", "text": t,
                     "captured_at": "2024-01-01T00:00:00Z", "ingested_at": "2024-01-01T00:00:00Z",
                     "char_start": 0, "char_end": len(t)}) for i, t in enumerate(texts)])
        listed = mine._ids

        def listed_then_raced(*args: Any) -> Any:
            ids = listed(*args)
            other.delete_where(ALICE, VectorFilter(source_ids=["s0"]))  # one of the two invoices
            return ids

        monkeypatch.setattr(mine, "_ids", listed_then_raced)
        mine.delete_where(ALICE, VectorFilter(document_ids=["invoices"]))
        assert mine.count(ALICE) == 1
        assert [h.payload["text"] for h in mine.search(ALICE, dense=None, sparse=ENCODER.encode_query("invoice"),
                                                       limit=3, mode="sparse")] == []
    finally:
        mine.close()
        other.close()


def test_sparse_only_and_dense_only_inputs(loaded: Harness) -> None:
    store = loaded.store
    # hybrid with one side missing degrades to the other side
    hits = store.search(ALICE, dense=None, sparse=ENCODER.encode_query("passport adapter"), limit=3)
    assert hits[0].id == pid_of(ALICE, "trip", 1)
    hits = store.search(ALICE, dense=embed(["passport and power adapter"])[0],
                        sparse=SparseVector([], []), limit=3)
    assert hits[0].id == pid_of(ALICE, "trip", 1)
    # a query made only of stopwords matches nothing in sparse mode
    assert store.search(ALICE, dense=None, sparse=ENCODER.encode_query("the of and"), limit=3,
                        mode="sparse") == []
    assert store.search(ALICE, dense=None, sparse=None, limit=3) == []
    with pytest.raises(ValueError):
        store.search(ALICE, dense=None, sparse=None, limit=3, mode="dense")
    assert len(query(store, ALICE, "bread", limit=2)) == 2
    assert query(store, ALICE, "bread", limit=0) == []


def test_filters_restrict_search(loaded: Harness) -> None:
    store = loaded.store
    text = "sourdough bread baking"
    pdf = query(store, ALICE, text, limit=20, flt=VectorFilter(modalities=["pdf"]))
    assert pdf and {h.payload["modality"] for h in pdf} == {"pdf"}
    assert len(pdf) == 4
    trip = query(store, ALICE, text, limit=20, flt=VectorFilter(document_ids=[doc_id(ALICE, "trip")]))
    assert {h.id for h in trip} == {pid_of(ALICE, "trip", 0), pid_of(ALICE, "trip", 1)}
    by_source = query(store, ALICE, text, limit=20, mode="sparse", flt=VectorFilter(source_ids=["src-bread"]))
    assert {h.payload["source_id"] for h in by_source} == {"src-bread"}
    both = query(store, ALICE, text, limit=20, flt=VectorFilter(
        document_ids=[doc_id(ALICE, "bread"), doc_id(ALICE, "health")], modalities=["note"],
        time_range=TimeRange(start=_dt("2024-01-01T00:00:00Z"))))
    assert {h.id for h in both} == {pid_of(ALICE, "bread", 0), pid_of(ALICE, "bread", 1)}
    assert query(store, ALICE, text, flt=VectorFilter(document_ids=[])) == []
    assert query(store, ALICE, text, flt=VectorFilter(modalities=["video"])) == []


def test_chunk_index_range_selects_neighbours(loaded: Harness) -> None:
    store = loaded.store
    trip = doc_id(ALICE, "trip")
    hits, _ = store.scroll(ALICE, flt=VectorFilter(document_ids=[trip], chunk_index_range=(1, 1)), limit=10)
    assert [h.id for h in hits] == [pid_of(ALICE, "trip", 1)]
    hits, _ = store.scroll(ALICE, flt=VectorFilter(document_ids=[trip], chunk_index_range=(0, 5)), limit=10)
    assert {h.id for h in hits} == {pid_of(ALICE, "trip", 0), pid_of(ALICE, "trip", 1)}
    assert store.count(ALICE, VectorFilter(document_ids=[trip], chunk_index_range=(2, 1))) == 0
    assert store.count(ALICE, VectorFilter(document_ids=[trip], chunk_index_range=(7, 9))) == 0


def _keys(hits: list[VectorHit]) -> set[str]:
    return {h.payload["title"] for h in hits}


def test_time_range_is_half_open_on_captured_at(loaded: Harness) -> None:
    store = loaded.store
    march = VectorFilter(time_range=TimeRange(_dt("2024-03-01T00:00:00Z"), _dt("2024-04-01T00:00:00Z")))
    assert store.count(ALICE, march) == 2  # bread, captured exactly at the start
    assert _keys(query(store, ALICE, "anything at all", limit=20, flt=march)) == {"Sourdough notes"}
    february = VectorFilter(time_range=TimeRange(_dt("2024-02-01T00:00:00Z"), _dt("2024-03-01T00:00:00Z")))
    assert _keys(query(store, ALICE, "sourdough bread", limit=20, flt=february)) == {"Acme invoices"}
    # the same instant written with another UTC offset
    plus_one = timezone(timedelta(hours=1))
    shifted = VectorFilter(time_range=TimeRange(datetime(2024, 3, 1, 1, 0, tzinfo=plus_one), None))
    assert _keys(query(store, ALICE, "anything", limit=20, flt=shifted)) == {
        "Sourdough notes", "Lisbon trip", "Planning", "Garden diary"}
    until = VectorFilter(time_range=TimeRange(None, _dt("2024-01-01T00:00:00Z")))
    assert _keys(query(store, ALICE, "anything", limit=20, flt=until)) == {"Health"}
    assert store.count(ALICE, VectorFilter(time_range=TimeRange(None, None))) == N_POINTS
    empty = VectorFilter(time_range=TimeRange(_dt("2024-03-01T00:00:00Z"), _dt("2024-03-01T00:00:00Z")))
    assert store.count(ALICE, empty) == 0


def test_time_range_on_ingested_at(loaded: Harness) -> None:
    store = loaded.store
    from_ten = VectorFilter(time_field="ingested_at",
                            time_range=TimeRange(_dt("2024-06-01T10:00:00Z"), _dt("2024-06-02T08:00:00Z")))
    assert _keys(query(store, ALICE, "dentist appointment", limit=20, flt=from_ten)) == {"Sourdough notes"}
    before_ten = VectorFilter(time_field="ingested_at",
                              time_range=TimeRange(None, _dt("2024-06-01T10:00:00Z")))
    assert _keys(query(store, ALICE, "sourdough", limit=20, flt=before_ten)) == {"Health"}
    assert store.count(ALICE, before_ten) == 2
    # the captured_at of "Health" is 2023, so the same range on captured_at finds nothing of it
    on_captured = VectorFilter(time_range=TimeRange(_dt("2024-06-01T00:00:00Z"), _dt("2024-06-05T00:00:00Z")))
    assert store.count(ALICE, on_captured) == 0


def test_a_time_range_can_also_match_the_times_a_passage_speaks_of(loaded: Harness) -> None:
    store = loaded.store
    friday = TimeRange(_dt("2024-04-12T00:00:00Z"), _dt("2024-04-13T00:00:00Z"))
    assert store.count(ALICE, VectorFilter(time_range=friday)) == 0  # written on the 10th
    either = VectorFilter(time_range=friday, mentioned_range=friday)
    assert store.count(ALICE, either) == 1
    assert [h.id for h in query(store, ALICE, "flight gate", limit=20, flt=either)] == [pid_of(ALICE, "trip")]
    # Its own time still matches as before: March holds the bread notes (and no point speaks of March).
    march = TimeRange(_dt("2024-03-01T00:00:00Z"), _dt("2024-04-01T00:00:00Z"))
    assert store.count(ALICE, VectorFilter(time_range=march, mentioned_range=march)) == 2
    # It is one condition among the others (AND-ed), and only for the asking user.
    assert store.count(ALICE, VectorFilter(time_range=friday, mentioned_range=friday, modalities=["note"])) == 0
    assert store.count(NOBODY, either) == 0


def test_a_time_range_can_also_match_the_recurring_events_whose_series_spans_it(loaded: Harness) -> None:
    store = loaded.store
    june = TimeRange(_dt("2024-06-01T00:00:00Z"), _dt("2024-07-01T00:00:00Z"))
    assert store.count(ALICE, VectorFilter(time_range=june)) == 0
    # With the time range: the two series span June (two passages each), as well as what was captured in June.
    assert {h.payload["title"] for h in query(store, ALICE, "compost planning", limit=20,
                                               flt=VectorFilter(time_range=june, recurring_range=june))} == {
        "Garden diary", "Planning"}
    assert store.count(ALICE, VectorFilter(time_range=june, recurring_range=june)) == 4
    # Alone: only the series.  2030 holds the endless one only; April 2024 neither (before both began).
    assert store.count(ALICE, VectorFilter(recurring_range=TimeRange(_dt("2030-01-01T00:00:00Z"),
                                                                      _dt("2030-02-01T00:00:00Z")))) == 2
    assert store.count(ALICE, VectorFilter(recurring_range=TimeRange(_dt("2024-04-01T00:00:00Z"),
                                                                      _dt("2024-05-01T00:00:00Z")))) == 0
    # With the words a passage speaks of, and the other conditions AND-ed; only the asking user's.
    friday = TimeRange(_dt("2024-04-12T00:00:00Z"), _dt("2024-04-13T00:00:00Z"))
    assert store.count(ALICE, VectorFilter(time_range=friday, mentioned_range=friday, recurring_range=june)) == 5
    assert store.count(ALICE, VectorFilter(recurring_range=june, modalities=["chat"])) == 2
    assert store.count(NOBODY, VectorFilter(recurring_range=june)) == 0


def test_users_are_isolated(loaded: Harness) -> None:
    store = loaded.store
    alice_ids = {p for d in DOCS for p in (pid_of(ALICE, d.key, i) for i in range(len(d.chunks)))}
    for mode in ("hybrid", "dense", "sparse"):
        hits = query(store, ALICE, "invoice 8391 sourdough Lisbon", limit=50, mode=mode)
        assert hits and {h.id for h in hits} <= alice_ids
        assert {h.payload["user_id"] for h in hits} == {ALICE}
    hits, _ = store.scroll(ALICE, limit=100)
    assert {h.id for h in hits} == alice_ids
    # a filter naming Bob's document does not reach into Bob's collection
    assert query(store, ALICE, "bread", flt=VectorFilter(document_ids=[doc_id(BOB, "bread")])) == []
    store.delete_where(ALICE, VectorFilter(document_ids=[doc_id(BOB, "bread")]))
    assert store.count(BOB) == N_POINTS
    store.drop_user(ALICE)
    assert store.count(BOB) == N_POINTS


def test_unknown_user_has_nothing(loaded: Harness) -> None:
    store = loaded.store
    assert query(store, NOBODY, "sourdough bread") == []
    assert store.count(NOBODY) == 0
    assert store.count(NOBODY, VectorFilter(modalities=["note"])) == 0
    assert store.scroll(NOBODY) == ([], None)
    store.delete_where(NOBODY, VectorFilter(document_ids=["x"]))
    store.drop_user(NOBODY)
    assert store.count(NOBODY) == 0


def test_delete_where_removes_exactly_one_document(loaded: Harness) -> None:
    store = loaded.store
    invoices = VectorFilter(document_ids=[doc_id(ALICE, "invoices")])
    assert store.count(ALICE, invoices) == 4
    store.delete_where(ALICE, invoices)
    assert store.count(ALICE, invoices) == 0
    assert store.count(ALICE) == N_POINTS - 4
    assert store.count(BOB) == N_POINTS
    hits = query(store, ALICE, "invoice 8391", limit=50)
    assert "Acme invoices" not in _keys(hits)
    assert len(hits) == N_POINTS - 4
    with pytest.raises(ValueError):
        store.delete_where(ALICE, VectorFilter())  # would delete everything: refused
    store.delete_where(ALICE, VectorFilter(document_ids=[]))  # matches nothing
    assert store.count(ALICE) == N_POINTS - 4


def test_drop_user_removes_everything(loaded: Harness, dense_by_text: dict[str, list[float]]) -> None:
    store = loaded.store
    store.drop_user(ALICE)
    assert store.count(ALICE) == 0
    assert query(store, ALICE, "sourdough") == []
    assert store.scroll(ALICE) == ([], None)
    store.drop_user(ALICE)  # absent: no error
    assert store.count(BOB) == N_POINTS
    store.ensure_collection(ALICE, DIMENSION)  # and the user can start over
    assert store.count(ALICE) == 0
    store.upsert(ALICE, corpus(ALICE, dense_by_text)[:2])
    assert store.count(ALICE) == 2


def test_count_with_filters(loaded: Harness) -> None:
    store = loaded.store
    assert store.count(ALICE) == N_POINTS
    assert store.count(ALICE, VectorFilter(modalities=["note"])) == 4
    assert store.count(ALICE, VectorFilter(modalities=["note", "pdf"])) == 8
    assert store.count(ALICE, VectorFilter(source_ids=["src-trip"])) == 2
    assert store.count(ALICE, VectorFilter(document_ids=[doc_id(ALICE, "work")], modalities=["note"])) == 0
    assert store.count(ALICE, VectorFilter(document_ids=[])) == 0


def test_scroll_pages_without_duplicates(harness: Harness) -> None:
    store = harness.store
    store.ensure_collection(ALICE, DIMENSION)
    rng = np.random.default_rng(7)
    points = []
    for i in range(53):
        vec = rng.normal(size=DIMENSION)
        vec /= np.linalg.norm(vec)
        points.append(VectorPoint(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"scroll/{i}")), dense=vec.tolist(),
            sparse=ENCODER.encode_documents([f"note number {i}"])[0],
            payload={"user_id": ALICE, "document_id": f"d{i % 4}", "modality": "note",
                     "captured_at": rfc3339(datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=i)),
                     "ingested_at": "2024-06-01T00:00:00Z", "text": f"note number {i}"},
        ))
    for start in range(0, len(points), 20):
        store.upsert(ALICE, points[start:start + 20])

    def scroll_all(flt: VectorFilter | None, limit: int) -> list[str]:
        seen: list[str] = []
        offset: str | None = None
        for _ in range(100):
            page, offset = store.scroll(ALICE, flt=flt, limit=limit, offset=offset)
            assert len(page) <= limit
            seen.extend(h.id for h in page)
            if offset is None:
                return seen
        raise AssertionError("scroll did not terminate")

    ids = scroll_all(None, 7)
    assert len(ids) == len(set(ids)) == 53
    assert set(ids) == {p.id for p in points}
    d1 = scroll_all(VectorFilter(document_ids=["d1"]), 4)
    assert len(d1) == len(set(d1)) == 13
    assert set(d1) == {p.id for p in points if p.payload["document_id"] == "d1"}
    january = VectorFilter(time_range=TimeRange(datetime(2024, 1, 1, tzinfo=UTC),
                                                datetime(2024, 2, 1, tzinfo=UTC)))
    assert len(scroll_all(january, 10)) == 31
    assert store.scroll(ALICE, limit=100)[1] is None


def test_data_survives_close_and_reopen(loaded: Harness) -> None:
    assert loaded.reopen is not None
    store = loaded.reopen()
    assert store.count(ALICE) == N_POINTS
    assert store.count(BOB) == N_POINTS
    with pytest.raises(ValueError):  # the reopened collection still knows its dense size
        store.ensure_collection(ALICE, DIMENSION + 1)
    assert store.ensure_collection(ALICE, DIMENSION)
    assert query(store, ALICE, "invoice 8391", mode="sparse")[0].id == pid_of(ALICE, "invoices", 0)
    assert query(store, ALICE, "when does my flight to Lisbon leave")[0].id == pid_of(ALICE, "trip", 0)
    assert store.count(ALICE, VectorFilter(modalities=["pdf"])) == 4
    store.delete_where(ALICE, VectorFilter(document_ids=[doc_id(ALICE, "trip")]))
    store = loaded.reopen()
    assert store.count(ALICE) == N_POINTS - 2


def test_concurrent_use_from_threads(harness: Harness, dense_by_text: dict[str, list[float]]) -> None:
    store = harness.store
    points = {user: corpus(user, dense_by_text) for user in ("u1", "u2", "u3")}
    for user in points:
        store.ensure_collection(user, DIMENSION)
    errors: list[BaseException] = []

    def work(user: str, part: int) -> None:
        try:
            for p in points[user][part::2]:
                store.upsert(user, [p])
                store.search(user, dense=p.dense, sparse=None, limit=3)
                store.count(user)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(u, part)) for u in points for part in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for user in points:
        assert store.count(user) == N_POINTS


# --------------------------------------------------------------------------- collection versions (re-index)

SMALL = 16  # another model's dimension: a second version need not match the first


def _small_points(user: str, n: int, doc: str = "d-small") -> list[VectorPoint]:
    rng = np.random.default_rng(11)
    out = []
    for i in range(n):
        vec = rng.normal(size=SMALL)
        vec /= np.linalg.norm(vec)
        text = f"small note {i} about {'herons' if i % 2 else 'kettles'}"
        out.append(VectorPoint(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"small/{user}/{i}")), dense=vec.tolist(),
            sparse=ENCODER.encode_documents([text])[0],
            payload={"user_id": user, "document_id": doc, "modality": "note", "text": text, "chunk_index": i,
                     "captured_at": "2024-01-01T00:00:00Z", "ingested_at": "2024-01-01T00:00:00Z"}))
    return out


def test_versions_are_separate_collections(loaded: Harness) -> None:
    store = loaded.store
    assert store.list_indexes(ALICE) == ["v1"]
    name = store.ensure_collection(ALICE, SMALL, index="v2")
    assert name.endswith(collection_name(ALICE, "v2")) and name != store.ensure_collection(ALICE, DIMENSION)
    assert store.ensure_collection(ALICE, SMALL, index="v2") == name
    with pytest.raises(ValueError):  # each version keeps its own dense size
        store.ensure_collection(ALICE, DIMENSION, index="v2")
    points = _small_points(ALICE, 5)
    store.upsert(ALICE, points, index="v2")
    assert store.list_indexes(ALICE) == ["v1", "v2"]
    assert store.list_indexes(BOB) == ["v1"]
    assert store.count(ALICE, index="v2") == 5
    assert store.count(ALICE) == store.count(ALICE, index="v1") == N_POINTS  # the default version is v1
    hits = store.search(ALICE, dense=points[3].dense, sparse=None, limit=2, mode="dense", index="v2")
    assert hits[0].id == points[3].id
    assert query(store, ALICE, "invoice 8391")[0].id == pid_of(ALICE, "invoices", 0)  # v1 unchanged
    sparse_hits = store.search(ALICE, dense=None, sparse=ENCODER.encode_query("herons"), limit=10, mode="sparse",
                               index="v2")
    assert {h.id for h in sparse_hits} == {p.id for p in points if "herons" in p.payload["text"]}
    page, _ = store.scroll(ALICE, limit=100, index="v2")
    assert {h.id for h in page} == {p.id for p in points}
    assert store.count(ALICE, VectorFilter(document_ids=["d-small"]), index="v2") == 5
    assert store.count(ALICE, index="v7") == 0 and store.scroll(ALICE, index="v7") == ([], None)
    assert store.search(ALICE, dense=points[0].dense, sparse=None, limit=3, index="v7") == []


def test_delete_where_and_drop_user_reach_every_version(loaded: Harness) -> None:
    store = loaded.store
    store.ensure_collection(ALICE, SMALL, index="v2")
    store.upsert(ALICE, _small_points(ALICE, 4, doc=doc_id(ALICE, "trip")), index="v2")
    trip = VectorFilter(document_ids=[doc_id(ALICE, "trip")])
    assert store.count(ALICE, trip, index="v1") == 2 and store.count(ALICE, trip, index="v2") == 4
    store.delete_where(ALICE, trip)
    assert store.count(ALICE, trip, index="v1") == 0 and store.count(ALICE, trip, index="v2") == 0
    assert store.count(ALICE) == N_POINTS - 2
    store.ensure_collection(ALICE, SMALL, index="v3")
    store.upsert(ALICE, _small_points(ALICE, 3), index="v3")
    store.drop_index(ALICE, "v1")
    assert store.list_indexes(ALICE) == ["v2", "v3"]
    assert store.count(ALICE) == 0 and store.count(ALICE, index="v3") == 3
    store.drop_index(ALICE, "v1")  # absent: no error
    store.drop_user(ALICE)
    assert store.list_indexes(ALICE) == []
    assert store.count(ALICE, index="v3") == 0
    assert store.count(BOB) == N_POINTS and store.list_indexes(BOB) == ["v1"]
    store.ensure_collection(ALICE, SMALL, index="v3")  # and the user can start over
    store.upsert(ALICE, _small_points(ALICE, 2), index="v3")
    assert store.count(ALICE, index="v3") == 2


def test_versions_of_a_user_whose_id_extends_another(harness: Harness) -> None:
    store = harness.store
    for user in ("carol", "carol_v2", "carol_v2_v3"):
        store.ensure_collection(user, SMALL, index="v3")
        store.upsert(user, _small_points(user, 2), index="v3")
    assert store.list_indexes("carol") == ["v3"]
    store.drop_user("carol")
    assert store.list_indexes("carol") == []
    assert store.count("carol_v2", index="v3") == 2 and store.count("carol_v2_v3", index="v3") == 2


def test_rejects_unsafe_versions(harness: Harness) -> None:
    store = harness.store
    for bad in ("../v1", "v1/..", "2", "v", "V1", "v1_x", "v1234567"):
        with pytest.raises(ValueError):
            store.ensure_collection(ALICE, SMALL, index=bad)
        with pytest.raises(ValueError):
            store.count(ALICE, index=bad)
        with pytest.raises(ValueError):
            store.drop_index(ALICE, bad)


def test_delete_where_takes_back_one_jobs_writes_only(loaded: Harness) -> None:
    """A job that ended just after writing takes back its own passages, not those a newer job of the same
    document wrote (the same point ids, its own job id), nor those of a document that was never named."""
    store = loaded.store
    store.ensure_collection(ALICE, SMALL, index="v2")
    mine = [replace(p, payload={**p.payload, "job_id": "job-old"}) for p in _small_points(ALICE, 3, doc="d-same")]
    store.upsert(ALICE, mine, index="v2")
    newer = [replace(p, id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"newer/{p.id}")),
                     payload={**p.payload, "job_id": "job-new"}) for p in _small_points(ALICE, 2, doc="d-same")]
    store.upsert(ALICE, newer, index="v2")
    same_doc = VectorFilter(document_ids=["d-same"])
    assert store.count(ALICE, same_doc, index="v2") == 5
    store.delete_where(ALICE, VectorFilter(document_ids=["d-same"], job_ids=["job-old"]))
    assert store.count(ALICE, same_doc, index="v2") == 2
    assert store.count(ALICE, VectorFilter(job_ids=["job-new"]), index="v2") == 2
    store.delete_where(ALICE, VectorFilter(job_ids=[]))  # matches nothing
    assert store.count(ALICE, same_doc, index="v2") == 2
