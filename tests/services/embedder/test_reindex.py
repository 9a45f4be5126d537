"""Changing the embedding model: ``secondbrain reindex`` builds a new collection version with the
new model and switches to it only when complete, while search keeps working on the old one.

Real components throughout: PostgreSQL (a fresh database), files for objects, the qdrant-edge
vector store, the stages run by hand (extract -> chunk -> embed, no Kafka), the packaged MiniLM
(384-d) as the first model and SmolLM2-135M behind llama.cpp's OpenAI-compatible server
(576-d) as the second.  The backfill runs on a thread and is paused between pages by its own
progress hook, so what happens "during" the re-index is decided by events, not by timing.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from app import cli
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.embedding import EmbedderPool, OnnxMiniLMEmbedder, load_embedder
from secondbrain.events.models import ArtifactSubmitted, ChunksCreated, DocumentExtracted
from secondbrain.lifecycle import erase_user
from secondbrain.pipeline import core
from secondbrain.ports import Embedder, VectorFilter, VectorPoint
from secondbrain.sparse import Bm25Encoder
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.objects_fs import FileObjectStore
from secondbrain.stores.vectors_edge import EdgeVectorStore, VectorsInUse
from secondbrain.vector_indexes import ActiveIndexes
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.reindex import Progress, ReindexBusy, Reindexer, ReindexWorker
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from services.query.engine import QueryEngine
from services.query.retrieval import Retriever

MINILM_ID = "all-MiniLM-L6-v2-int8"

NOTES = {
    "Sourdough": "Feed the sourdough starter the evening before, then bake the loaf in a cast-iron pot.",
    "Invoice 8391": "Acme Hosting billed 129 EUR for the dedicated server; invoice 8391 is due on 30 March.",
    "Lisbon trip": "We take the night train to Lisbon and stay four nights near the river in Alfama.",
    "Dentist": "The dentist appointment moved to Tuesday morning; bring the insurance card.",
    "Garden": "Planted tomatoes and basil along the south fence and mulched the roses.",
    "Running": "Training plan: three easy five kilometre runs a week and one long run on Sunday.",
}
QUERIES = {  # a question per note, sharing a content word with it
    "Sourdough": "how do I bake the sourdough loaf",
    "Invoice 8391": "when is invoice 8391 due",
    "Lisbon trip": "night train to Lisbon",
    "Dentist": "when is the dentist appointment",
    "Garden": "what did I plant along the fence",
    "Running": "how many runs a week",
}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the re-index tests need llama-cpp-python and the SmolLM2 model ({why})", pytrace=False)
    with LocalLlamaServer(log_path=tmp_path_factory.mktemp("llama") / "server.log", n_ctx=2048,
                          embedding=True) as server:
        yield server


@pytest.fixture(scope="module")
def metadata(dsn: str) -> Iterator[PostgresMetadataStore]:
    store = PostgresMetadataStore(dsn, min_size=1, max_size=6)
    store.database.migrate()
    yield store
    store.database.close()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reindex-data")


@pytest.fixture(scope="module")
def minilm() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder()


@pytest.fixture(scope="module")
def pool(minilm: OnnxMiniLMEmbedder, llama: LocalLlamaServer) -> EmbedderPool:
    """MiniLM configured; the llama.cpp model loaded on first use, as a server process would."""
    return EmbedderPool(minilm, lambda spec: load_embedder(spec, base_url=llama.base_url))


@dataclass
class World:
    metadata: PostgresMetadataStore
    objects: FileObjectStore
    vectors: EdgeVectorStore
    pool: EmbedderPool
    extract: ExtractorStage
    chunk: ChunkerStage
    embed: EmbedderStage
    engine: QueryEngine
    retriever: Retriever
    new_spec: str
    new_model: Embedder

    def ingest(self, user: str, title: str, text: str) -> str:
        """A note through extract -> chunk -> embed; its document id."""
        raw = text.encode()
        ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=f"note:{title}",
                               content_type="text/plain", size_bytes=len(raw), submitted_at=datetime.now(UTC),
                               producer="test", content=raw, title=title)
        jobs = self.metadata.jobs
        (doc,) = core.run(self.extract, ev, jobs, trusted=True)
        assert isinstance(doc, DocumentExtracted)
        (chunks,) = core.run(self.chunk, doc, jobs)
        assert isinstance(chunks, ChunksCreated)
        assert len(core.run(self.embed, chunks, jobs)) == 1
        return doc.document_id

    def top_titles(self, user: str, question: str) -> list[str]:
        from zoneinfo import ZoneInfo

        plan = self.engine.plan(question, tz=ZoneInfo("UTC"))
        return [h.title for h in self.engine.search(user, plan, k=3)]

    def reindexer(self, **kw: Any) -> Reindexer:
        kw.setdefault("batch_size", 2)
        kw.setdefault("drop_grace_s", 0)  # searches here look the index up every time (no cache)
        return Reindexer(self.metadata, self.vectors, self.pool, Bm25Encoder(), **kw)


@pytest.fixture(scope="module")
def world(metadata: PostgresMetadataStore, data_dir: Path, pool: EmbedderPool, minilm: OnnxMiniLMEmbedder,
          llama: LocalLlamaServer) -> Iterator[World]:
    objects = FileObjectStore(data_dir / "objects")
    vectors = EdgeVectorStore(data_dir / "vectors")
    sparse = Bm25Encoder()
    indexes = ActiveIndexes(metadata.indexes, pool, minilm, ttl_s=0)  # every search sees the current index
    new_spec = f"openai:{llama.model_id}"
    yield World(
        metadata, objects, vectors, pool,
        ExtractorStage(objects, users=metadata.users, api_keys=metadata.api_keys, intake=metadata.intake,
                       jobs=metadata.jobs,
                       fence=metadata.fence, catalog=metadata.catalog, lifecycle=metadata.lifecycle,
                       extractors=ExtractorSet({"text": TextExtractor()}), max_bytes=1 << 20),
        ChunkerStage(objects, ChunkingConfig(), fence=metadata.fence),
        EmbedderStage(objects, catalog=metadata.catalog, indexes=metadata.indexes, fence=metadata.fence,
                      vectors=vectors, embedder=minilm, sparse=sparse, embedders=pool,
                      index_ttl_s=0),  # sees a re-index at once (the reconcile covers the real TTL's gap)
        QueryEngine(vectors, metadata, minilm, sparse, indexes=indexes),
        Retriever(vectors, minilm, sparse, indexes=indexes),
        new_spec, pool.get(new_spec),
    )
    vectors.close()


@pytest.fixture
def user(world: World) -> str:
    """A fresh user holding the six notes, indexed with MiniLM."""
    user_id = f"u{uuid.uuid4().hex[:10]}"
    world.metadata.users.ensure_user(user_id)
    for title, text in NOTES.items():
        world.ingest(user_id, title, text)
    return user_id


def payloads(world: World, user: str, index: str) -> dict[str, dict[str, Any]]:
    hits, nxt = world.vectors.scroll(user, limit=1000, index=index)
    assert nxt is None
    return {h.id: h.payload for h in hits}


class Pause:
    """A progress hook that stops the backfill after page ``at`` until :meth:`resume`."""

    def __init__(self, at: int = 1) -> None:
        self.at = at
        self.pages: list[Progress] = []
        self.paused = threading.Event()
        self._resume = threading.Event()

    def __call__(self, progress: Progress) -> None:
        self.pages.append(progress)
        if len(self.pages) == self.at:
            self.paused.set()
            assert self._resume.wait(120), "the test never resumed the backfill"

    def resume(self) -> None:
        self._resume.set()


@contextlib.contextmanager
def in_thread(fn: Any) -> Iterator[dict[str, Any]]:
    """Run ``fn`` on a thread; the dict gets its ``result`` or ``error`` once joined."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        thread.join(300)
        assert not thread.is_alive()


# --------------------------------------------------------------------------- tests


def test_a_users_first_chunks_create_their_first_index(world: World, user: str) -> None:
    (index,) = world.metadata.indexes.vector_indexes(user)
    assert (index.version, index.status, index.model, index.model_id, index.dense_size) == (
        1, "active", "minilm-int8", MINILM_ID, 384)
    assert world.vectors.list_indexes(user) == ["v1"]
    assert {p["embedding_model"] for p in payloads(world, user, "v1").values()} == {MINILM_ID}
    for title, question in QUERIES.items():
        assert world.top_titles(user, question)[0] == title


def test_reindex_switches_only_when_complete_and_search_keeps_working(world: World, user: str) -> None:
    before = payloads(world, user, "v1")
    pause = Pause(at=1)
    reindexer = world.reindexer(on_progress=pause)
    with in_thread(lambda: reindexer.reindex(user, world.new_spec)) as run:
        assert pause.paused.wait(120), run
        # ---- the backfill is half way: one page of two points written to v2
        building = world.metadata.indexes.vector_indexes(user, status="building")
        assert [(i.version, i.model_id, i.dense_size, i.points_done) for i in building] == [
            (2, world.new_model.model_id, 576, 2)]
        assert world.engine.target(user).index == "v1" and world.engine.target(user).embedder.dimension == 384
        for title, question in QUERIES.items():  # searches still answer, from v1 with MiniLM
            assert world.top_titles(user, question)[0] == title
        assert world.retriever.search(user, "bread starter", mode="dense", k=1)[0].title == "Sourdough"
        # a note arriving now is embedded into both versions, each with its own model
        added = world.ingest(user, "Parcel", "Parcel 4471 from the bike shop arrived at the post office.")
        only_new = VectorFilter(document_ids=[added])
        assert world.vectors.count(user, only_new, index="v1") == 1
        assert world.vectors.count(user, only_new, index="v2") == 1
        (new_point,) = world.vectors.scroll(user, flt=only_new, index="v2")[0]
        assert new_point.payload["embedding_model"] == world.new_model.model_id
        assert world.top_titles(user, "parcel from the bike shop")[0] == "Parcel"
        pause.resume()
    outcome = run["result"]
    # ---- switched
    assert outcome.status == "switched", outcome
    assert outcome.points == len(NOTES) + 1 and outcome.retired is not None and outcome.retired.version == 1
    indexes = {i.version: i for i in world.metadata.indexes.vector_indexes(user)}
    assert indexes[2].status == "active" and indexes[2].model_id == world.new_model.model_id
    assert indexes[1].status == "retired" and indexes[1].dropped_at is not None
    assert world.vectors.list_indexes(user) == ["v2"]  # the old collection is gone
    assert world.vectors.count(user, index="v2") == len(NOTES) + 1
    after = payloads(world, user, "v2")
    assert {p["embedding_model"] for p in after.values()} == {world.new_model.model_id}
    # same ids, same payloads (but the model), the late note included
    assert set(before) < set(after)
    for pid, payload in before.items():
        assert {**payload, "embedding_model": world.new_model.model_id} == after[pid]
    # searches now embed the question with the new model (a 576-d query only fits v2)
    target = world.engine.target(user)
    assert (target.index, target.embedder.model_id, target.embedder.dimension) == (
        "v2", world.new_model.model_id, 576)
    for title, question in QUERIES.items():  # SmolLM2 is a weak embedder, but the BM25 side still finds it
        assert title in world.top_titles(user, question)
    dense = world.retriever.search(user, "when is invoice 8391 due", mode="dense", k=3)
    assert len(dense) == 3 and all(h.score != 0 for h in dense)
    # progress was reported page by page up to the whole collection (the late note is copied again
    # if its id sorts after the page the backfill stopped at)
    assert [p.done for p in pause.pages][:3] == [2, 4, 6]
    assert pause.pages[-1].done == pause.pages[-1].total in (len(NOTES), len(NOTES) + 1)
    assert all(p.rate > 0 for p in pause.pages)
    # new notes now go to v2 only, with the new model
    late = world.ingest(user, "Plumber", "The plumber comes on Thursday to fix the kitchen tap.")
    assert world.vectors.count(user, VectorFilter(document_ids=[late]), index="v2") == 1
    assert world.vectors.list_indexes(user) == ["v2"]
    # ---- again, to the same model: nothing to do
    again = world.reindexer().reindex(user, world.new_spec)
    assert again.status == "unchanged" and "already uses" in again.message
    assert [i.version for i in world.metadata.indexes.vector_indexes(user)] == [1, 2]


def test_an_interrupted_reindex_continues_where_it_stopped(world: World, user: str) -> None:
    stop = threading.Event()
    first = world.reindexer(on_progress=lambda p: stop.set(), owner="first")
    stopped = first.reindex(user, world.new_spec, keep_old=True, stop=stop)
    assert stopped.status == "stopped"
    (building,) = world.metadata.indexes.vector_indexes(user, status="building")
    assert building.points_done == 2 and building.resume_from is not None and building.lease_owner is None
    assert world.engine.target(user).index == "v1"  # nothing switched
    assert world.top_titles(user, QUERIES["Dentist"])[0] == "Dentist"
    pages: list[Progress] = []
    second = world.reindexer(on_progress=pages.append, owner="second")
    done = second.reindex(user, world.new_spec, keep_old=True)
    assert done.status == "switched"
    assert [p.done for p in pages] == [4, 6] and done.run_points == len(NOTES) - 2  # only the rest
    assert world.vectors.count(user, index="v2") == len(NOTES)
    assert world.vectors.list_indexes(user) == ["v1", "v2"]  # --keep-old
    retired = world.metadata.indexes.vector_indexes(user, status="retired")
    assert [(i.version, i.dropped_at) for i in retired] == [(1, None)]


def test_reconciling_adds_what_the_backfill_missed_and_drops_what_was_deleted(world: World, user: str) -> None:
    """A chunk written to v1 only (an embed that looked the indexes up just before the re-index
    began) and a stale copy in v2 (of a document deleted after the backfill copied it) are both
    fixed before the switch."""
    pause = Pause(at=3)  # the backfill has passed every existing point
    reindexer = world.reindexer(on_progress=pause)
    sparse = Bm25Encoder()
    text = "Missed note: the window cleaner comes every second Monday."
    missed = VectorPoint(str(uuid.uuid4()), world.pool.default.embed_documents([text])[0],
                         sparse.encode_documents([text])[0],
                         {"user_id": user, "document_id": "doc-missed", "title": "Windows", "text": text,
                          "heading_path": [], "chunk_index": 0, "modality": "text",
                          "captured_at": "2024-01-01T00:00:00.000000Z", "ingested_at": "2024-01-01T00:00:00.000000Z",
                          "embedding_model": MINILM_ID})
    stale = VectorPoint(str(uuid.uuid4()), world.new_model.embed_documents(["gone"])[0],
                        sparse.encode_documents(["gone"])[0],
                        {**missed.payload, "document_id": "doc-deleted", "text": "gone"})
    with in_thread(lambda: reindexer.reindex(user, world.new_spec)) as run:
        assert pause.paused.wait(120), run
        world.vectors.upsert(user, [missed], index="v1")
        world.vectors.upsert(user, [stale], index="v2")
        pause.resume()
    assert run["result"].status == "switched", run
    after = payloads(world, user, "v2")
    assert missed.id in after and stale.id not in after
    assert after[missed.id]["embedding_model"] == world.new_model.model_id
    assert world.top_titles(user, "when does the window cleaner come")[0] == "Windows"


class HeldModel:
    """The new model, holding its ``at``-th batch of vectors until released: a re-index stopped between
    embedding a page and writing it, where an erasure or a cancel can arrive."""

    def __init__(self, inner: Embedder, at: int = 2) -> None:
        self.inner, self.at, self.calls = inner, at, 0
        self.embedded, self.release = threading.Event(), threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self.inner.embed_documents(texts)
        self.calls += 1
        if self.calls == self.at:
            self.embedded.set()
            assert self.release.wait(120), "the test never released the page"
        return vectors


@pytest.mark.parametrize("how", ["erase", "cancel"])
def test_a_page_embedded_before_an_erasure_or_a_cancel_is_not_written_after_it(world: World, user: str,
                                                                               how: str) -> None:
    """The erasure (or cancel) waits for a page being written and removes it; a page embedded before it
    is refused afterwards (no write into a collection that is gone), and the re-index stops saying why
    instead of failing on a missing collection and being retried."""
    held = HeldModel(world.new_model)
    pool = EmbedderPool(world.pool.default, lambda spec: held)
    reindexer = Reindexer(world.metadata, world.vectors, pool, Bm25Encoder(), batch_size=2, drop_grace_s=0)
    with in_thread(lambda: reindexer.reindex(user, world.new_spec)) as run:
        assert held.embedded.wait(120), run
        assert world.vectors.count(user, index="v2") == 2  # the first page is written, the second embedded
        if how == "erase":
            erase_user(world.metadata, world.objects, world.vectors, user)
        else:
            world.metadata.indexes.cancel_reindex(user)
            world.vectors.drop_index(user, "v2")
        held.release.set()
    assert world.vectors.list_indexes(user) == ([] if how == "erase" else ["v1"])
    if how == "erase":
        assert not any(user in p.name for p in world.vectors.root.iterdir())  # nothing of theirs on disk
    assert isinstance(run.get("error"), ReindexBusy) and "cancelled" in str(run["error"]), run


def test_a_running_server_fills_the_index_the_cli_recorded(world: World, user: str, dsn: str,
                                                           llama: LocalLlamaServer, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With `secondbrain up` holding the vectors, `secondbrain reindex` only records the new index;
    the server's worker fills and switches it."""
    data_dir = world.vectors.root.parent
    world.vectors.close()  # this process lets go of the vectors (it takes them again on next use)...
    # ...and another process holds them, as a running embedded server does
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from secondbrain.stores.vectors_edge import EdgeVectorStore as S; "
         f"s = S({str(world.vectors.root)!r}); s.count('someone'); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        other = EdgeVectorStore(world.vectors.root)
        with pytest.raises(VectorsInUse):
            other.count(user)
        monkeypatch.setenv("SB_POSTGRES_DSN", dsn)
        monkeypatch.setenv("SB_DATA_DIR", str(data_dir))
        monkeypatch.setenv("SB_EMBEDDING_BASE_URL", llama.base_url)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli.main(["reindex", "--user", user, "--model", world.new_spec, "--no-wait"])
        assert code == 0, err.getvalue()
        assert "re-embeds in the background" in err.getvalue()
    finally:
        holder.communicate("", timeout=30)
    (building,) = world.metadata.indexes.vector_indexes(user, status="building")
    assert building.model_id == world.new_model.model_id and building.points_done == 0
    assert world.engine.target(user).index == "v1"
    assert world.top_titles(user, QUERIES["Garden"])[0] == "Garden"  # this process has the vectors again
    worker = ReindexWorker(world.reindexer())
    assert [i.version for i in worker.pending() if i.user_id == user] == [2]
    (outcome,) = [o for o in worker.run_pending() if o.user_id == user]
    assert outcome.status == "switched"
    assert world.engine.target(user).index == "v2" and world.vectors.list_indexes(user) == ["v2"]
    assert worker.pending() == []


def test_the_cli_reindexes_with_progress_and_shows_status(world: World, user: str, dsn: str,
                                                          llama: LocalLlamaServer,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SB_POSTGRES_DSN", dsn)
    monkeypatch.setenv("SB_DATA_DIR", str(world.vectors.root.parent))
    monkeypatch.setenv("SB_EMBEDDING_BASE_URL", llama.base_url)
    world.vectors.close()  # the CLI opens the vectors itself, like a separate process (no server running)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = cli.main(["reindex", "--user", user, "--model", world.new_spec, "--batch-size", "4", "--json"])
    assert code == 0, err.getvalue()
    (result,) = json.loads(out.getvalue())
    assert result["status"] == "switched" and result["points"] == len(NOTES)
    assert result["index"]["version"] == 2 and result["index"]["dense_size"] == 576
    text = err.getvalue()
    assert f"{user} v2: {len(NOTES)}/{len(NOTES)} points (100%)" in text and "points/s" in text
    assert f"{user}: now searching v2 ({world.new_model.model_id})" in text
    # the same again: a clear no-op
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli.main(["reindex", "--user", user, "--model", world.new_spec]) == 0
    assert "already uses" in err.getvalue() and "nothing to do" in err.getvalue()
    # --status lists every version with its model
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["reindex", "--status", "--user", user, "--json"]) == 0
    rows = json.loads(out.getvalue())
    assert [(r["version"], r["status"], r["dense_size"], r["dropped"]) for r in rows] == [
        (1, "retired", 384, True), (2, "active", 576, False)]
    # usage errors say what to do
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli.main(["reindex", "--model", world.new_spec]) == 2
        assert cli.main(["reindex", "--user", user, "--model", "bert-huge"]) == 2
    assert "--user USER or --all" in err.getvalue() and "unknown embedding model" in err.getvalue()


def test_settings_name_the_embedding_model() -> None:
    from secondbrain.settings import Settings

    s = Settings(embedding_model="openai:text-embedding-3-small", embedding_base_url="https://api.example/v1",
                 embedding_api_key=SecretStr("sk-x"))  # type: ignore[call-arg]
    assert s.embedding_model == "openai:text-embedding-3-small"
    with pytest.raises(ValueError):
        Settings(embedding_model="bert-huge")  # type: ignore[call-arg]


def test_searches_follow_a_switch_within_the_cache_time(world: World, minilm: OnnxMiniLMEmbedder) -> None:
    user_id = f"u{uuid.uuid4().hex[:10]}"
    world.metadata.users.ensure_user(user_id)
    now = [100.0]
    indexes = ActiveIndexes(world.metadata.indexes, world.pool, minilm, ttl_s=3.0, clock=lambda: now[0])
    assert indexes.target(user_id).index is None  # nothing indexed yet: the store's default, the configured model
    world.metadata.indexes.ensure_active_index(user_id, "minilm-int8", MINILM_ID, 384)
    now[0] += 3.5
    assert indexes.target(user_id).index == "v1"
    building = world.metadata.indexes.begin_reindex(user_id, world.new_spec, world.new_model.model_id, 576)
    world.metadata.indexes.activate_index(user_id, building.version)
    now[0] += 1.0
    assert indexes.target(user_id).index == "v1"  # remembered: no database query per search
    now[0] += 2.5
    target = indexes.target(user_id)
    assert (target.index, target.embedder.model_id) == ("v2", world.new_model.model_id)
