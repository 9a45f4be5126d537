"""Retrieval and answers on a generated corpus with known answers, through the real stages and stores.

The corpus is dated relative to now in the user's time zone, so "yesterday" and "last week"
mean what they say.  Answers are read over real HTTP (uvicorn on loopback, httpx streaming).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic import SecretStr

from secondbrain import ids, keys
from secondbrain.events.models import ArtifactSubmitted, Chunk, ChunksCreated
from secondbrain.http import create_app
from secondbrain.ports import ArtifactRecord, DocumentRecord
from secondbrain.runtime import Runtime, build_runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from services.query.engine import Filters, QueryEngine
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread

TZ = ZoneInfo("Europe/Paris")
USER = "alice"
OTHER = "bob"


def local(days_ago: int, hour: int = 10) -> datetime:
    """``hour`` o'clock local time, ``days_ago`` days before today."""
    day = datetime.now(TZ).date() - timedelta(days=days_ago)
    return datetime(day.year, day.month, day.day, hour, tzinfo=TZ)


def last_week_friday() -> datetime:
    today = datetime.now(TZ).date()
    monday = today - timedelta(days=today.weekday())
    friday = monday - timedelta(days=3)
    return datetime(friday.year, friday.month, friday.day, 11, tzinfo=TZ)


GARDEN = "\n\n".join(
    f"## Bed {i}\n\nGardening tip {i}: water the tomato bed {i} at dawn, mulch it with straw, and pinch the "
    f"side shoots every week so the plants put their strength into the fruit. " * 3 for i in range(1, 9))

CORPUS: list[dict[str, Any]] = [
    {"key": "invoice", "title": "Acme invoice", "at": lambda: local(3),
     "text": "Invoice 8391 from Acme Ltd: 1,240 euros for the warehouse shelving, due on 15 December."},
    {"key": "plumber", "title": "Plumber visit", "at": lambda: local(20),
     "text": "The plumber fixed the leaking kitchen pipe under the sink; the repair bill came to 240 euros."},
    {"key": "zbigniew", "title": "Call notes", "at": lambda: local(40),
     "text": "Spoke with Zbigniew Brzezinski-Nowak about renewing the Krakow office lease for two years."},
    {"key": "budget-new", "title": "Budget review", "at": last_week_friday,
     "text": "Budget meeting: the marketing budget for the first quarter is cut to 30,000 euros."},
    {"key": "budget-old", "title": "Budget review (autumn)", "at": lambda: local(60),
     "text": "Budget meeting: the marketing budget for the first quarter stays at 45,000 euros."},
    {"key": "errands", "title": "Errands", "at": lambda: local(1, 9),
     "text": "Picked up the dry cleaning and booked the car service for Thursday."},
    {"key": "book", "title": "Reading", "at": lambda: local(1, 18),
     "text": "Started reading The Overstory by Richard Powers; the chapter about the chestnut tree is moving."},
    {"key": "garden", "title": "Garden plan", "at": lambda: local(90), "text": "# Garden plan\n\n" + GARDEN},
]


class Corpus:
    """The stores, a runtime and the ingested documents (document ids by key)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.doc: dict[str, str] = {}
        self.extract = ExtractorStage(rt.objects, rt.metadata, ExtractorSet({"text": TextExtractor()}),
                                      max_bytes=1 << 20)
        self.chunk = ChunkerStage(rt.objects, ChunkingConfig())
        assert rt.vectors and rt.embedder and rt.sparse
        self.embed = EmbedderStage(rt.objects, rt.metadata, rt.vectors, rt.embedder, rt.sparse)

    def add(self, user: str, key: str, title: str, text: str, at: datetime) -> None:
        raw = text.encode()
        ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user, source_uri=f"note:{key}",
                               content_type="text/markdown", size_bytes=len(raw), submitted_at=datetime.now(UTC),
                               producer="test", content=raw, title=title, captured_at=at.astimezone(UTC),
                               attributes={"kind": "note"})
        (doc,) = self.extract.process(ev)
        (chunks,) = self.chunk.process(doc.event)
        self.embed.process(chunks.event)
        self.doc[f"{user}:{key}"] = doc.event.document_id

    def add_speech(self, user: str, key: str, title: str, windows: list[str], at: datetime) -> None:
        """A recording as the chunker would cut it: one chunk per ~60 s window."""
        doc_id = ids.document_id(ids.artifact_id(user, ids.sha256_hex(key.encode())))
        chunks, pos = [], 0
        for i, text in enumerate(windows):
            chunks.append(Chunk(chunk_id=ids.chunk_id(doc_id, i), index=i, text=text, char_start=pos,
                                char_end=pos + len(text), token_count=len(text.split()), heading_path=[],
                                kind="speech", t_start=60.0 * i, t_end=60.0 * i + 58))
            pos += len(text) + 2
        ev = ChunksCreated(event_id=str(uuid.uuid4()), job_id=str(uuid.uuid4()), user_id=user,
                           artifact_id=ids.artifact_id(user, ids.sha256_hex(key.encode())), source_id=key,
                           document_id=doc_id, title=title, modality="audio", content_type="audio/mpeg",
                           captured_at=at.astimezone(UTC), ingested_at=datetime.now(UTC), chunks=chunks,
                           chunk_count=len(chunks), recording_start=at.astimezone(UTC))
        # The rows the extractor would have written (the embedder indexes only current documents).
        art = ArtifactRecord(artifact_id=ev.artifact_id, user_id=user, source_id=key, source_uri=f"file:{key}.mp3",
                             object_key=keys.artifact_key(user, ev.artifact_id), content_type="audio/mpeg",
                             size_bytes=1, sha256=ids.sha256_hex(key.encode()), filename=f"{key}.mp3", title=title,
                             captured_at=ev.captured_at, submitted_at=ev.ingested_at, producer="test")
        self.rt.metadata.register_external(art, ev.job_id)
        self.rt.metadata.save_document(DocumentRecord(
            document_id=doc_id, user_id=user, artifact_id=ev.artifact_id, source_id=key, title=title,
            modality="audio", content_type="audio/mpeg", captured_at=ev.captured_at, captured_at_source="user",
            ingested_at=ev.ingested_at, char_count=pos))
        assert self.rt.vectors and self.rt.embedder and self.rt.sparse
        self.rt.vectors.ensure_collection(user, self.rt.embedder.dimension)
        assert self.embed.process(ev), "the recording was not indexed"
        self.doc[f"{user}:{key}"] = doc_id


SPEECH = [
    "Good morning everyone, this is the weekly engineering sync, let us go around the room.",
    "The database migration finished on Tuesday night without downtime.",
    "Maria asked who owns the rollback plan if the billing service misbehaves.",
    "We agreed that Tomasz writes the rollback runbook by Friday.",
    "Any other business? No. Thanks everyone, see you next week.",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("query"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/Paris", kafka_bootstrap="127.0.0.1:9", default_user=USER)
        rt = build_runtime(settings, vectors=True, models=True)
        for user in (USER, OTHER):
            rt.metadata.ensure_user(user)
        c = Corpus(rt)
        for d in CORPUS:
            c.add(USER, d["key"], d["title"], d["text"], d["at"]())
        c.add(OTHER, "bob-invoice", "Bob's invoice", "Invoice 8391 is Bob's private hardware order, 99 euros.",
              local(2))
        c.add_speech(USER, "sync", "Engineering sync", SPEECH, local(2, 9))
        yield c
        rt.close()


@pytest.fixture(scope="module")
def engine(corpus: Corpus) -> QueryEngine:
    rt = corpus.rt
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, budget_tokens=1500, per_document=3)


def titles(engine: QueryEngine, question: str, k: int = 5, user: str = USER) -> list[str]:
    plan = engine.plan(question, tz=TZ)
    return [s.hit.title for s in engine.sources(user, plan, k=k)]


# --------------------------------------------------------------------------- retrieval


@pytest.mark.parametrize(("question", "expected"), [
    ("invoice 8391", "Acme invoice"),  # an exact identifier
    ("how much did the sink repair cost", "Plumber visit"),  # a paraphrase
    ("Zbigniew", "Call notes"),  # a rare name
    ("what book am I reading", "Reading"),
    ("who writes the rollback runbook", "Engineering sync"),
])
def test_the_right_source_comes_first(engine: QueryEngine, question: str, expected: str) -> None:
    assert titles(engine, question)[0] == expected


def test_another_users_data_never_shows(engine: QueryEngine) -> None:
    for q in ("invoice 8391", "Bob hardware order", "what did I save today?"):
        assert "Bob's invoice" not in titles(engine, q, k=20)
    assert titles(engine, "hardware order 99 euros", user=OTHER)[0] == "Bob's invoice"


def test_an_explicit_time_is_a_hard_filter(engine: QueryEngine) -> None:
    plan = engine.plan("what did I note about the budget last week?", tz=TZ)
    assert plan.query_class == "temporal+semantic" and plan.time_field == "captured_at"
    assert plan.start is not None and plan.end is not None and plan.end - plan.start == timedelta(days=7)
    assert titles(engine, "what did I note about the budget last week?") == ["Budget review"]
    assert set(titles(engine, "marketing budget")[:2]) == {"Budget review", "Budget review (autumn)"}  # no filter


def test_a_time_only_question_lists_everything_newest_first(engine: QueryEngine) -> None:
    plan = engine.plan("what happened yesterday?", tz=TZ)
    assert plan.query_class == "temporal"
    assert titles(engine, "what happened yesterday?") == ["Reading", "Errands"]
    # "saved" means ingestion time: everything was added today.
    saved = titles(engine, "what did I save today?", k=50)
    assert len(saved) == len(CORPUS) + 1 and "Bob's invoice" not in saved


def test_a_vague_time_boosts_recent_passages(engine: QueryEngine) -> None:
    plan = engine.plan("what was decided about the marketing budget recently?", tz=TZ)
    assert plan.recency_boost and plan.start is None
    found = titles(engine, "what was decided about the marketing budget recently?")
    assert found.index("Budget review") < found.index("Budget review (autumn)")


def test_client_filters_win(engine: QueryEngine) -> None:
    plan = engine.plan("budget", tz=TZ, filters=Filters(start=local(70), end=local(50)))
    assert [s.hit.title for s in engine.sources(USER, plan)] == ["Budget review (autumn)"]
    plan = engine.plan("meeting", tz=TZ, filters=Filters(modalities=("audio",)))
    assert {s.hit.modality for s in engine.sources(USER, plan)} == {"audio"}


def test_diversity_and_token_budget(engine: QueryEngine, corpus: Corpus) -> None:
    plan = engine.plan("gardening tips for the tomato beds", tz=TZ)
    hits = engine.search(USER, plan, k=10)
    assert sum(h.title == "Garden plan" for h in hits) == 3  # at most three chunks of one document
    small = QueryEngine(corpus.rt.vectors, corpus.rt.metadata, corpus.rt.embedder, corpus.rt.sparse,  # type: ignore[arg-type]
                        budget_tokens=400, per_document=10)
    sources = small.sources(USER, plan, k=10)
    assert sources and sum(s.tokens for s in sources[1:]) + sources[0].tokens <= 400 + sources[0].tokens


def test_speech_hits_come_with_the_moments_around_them(engine: QueryEngine) -> None:
    plan = engine.plan("who asked about the rollback plan for billing", tz=TZ)
    sources = [s for s in engine.sources(USER, plan, k=3) if s.hit.title == "Engineering sync"]
    src = sources[0]
    assert src.hit.chunk_index == 2 and src.neighbours >= 1
    assert src.t_start == 60.0 and SPEECH[1] in src.text  # the minute before comes along
    # A neighbour that is a hit of its own is shown once, as its own source, not inside another.
    texts = [s.text for s in sources]
    assert sum(SPEECH[3] in t for t in texts) <= 1 and sum(SPEECH[2] in t for t in texts) == 1
    if src.neighbours == 2:
        assert src.t_end == 238.0 and SPEECH[3] in src.text


# --------------------------------------------------------------------------- HTTP


@pytest.fixture(scope="module")
def server(corpus: Corpus) -> Iterator[str]:
    with serve_in_thread(create_app(corpus.rt, gateway=False, query=True)) as (url, _port):
        yield url


def ask(base: str, question: str, **extra: Any) -> list[tuple[str, Any]]:
    """POST /v1/ask and read the event stream as it arrives."""
    events: list[tuple[str, Any]] = []
    with httpx.stream("POST", f"{base}/v1/ask", json={"question": question, "tz": "Europe/Paris", **extra},
                      timeout=60) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                events.append((event, json.loads(line[5:].strip())))
    return events


def test_ask_streams_meta_sources_tokens_done(server: str) -> None:
    events = ask(server, "what did I note about the budget last week?")
    kinds = [e for e, _ in events]
    assert kinds[0] == "meta" and kinds[1] == "sources" and kinds[-1] == "done"
    assert set(kinds[2:-1]) == {"token"}
    meta, sources, done = events[0][1], events[1][1], events[-1][1]
    assert meta["query_class"] == "temporal+semantic" and meta["answer_mode"] == "extractive"
    assert meta["time_range"]["field"] == "captured_at" and meta["understood"]["expression"]
    assert [s["title"] for s in sources] == ["Budget review"]
    assert sources[0]["link"] == f"/v1/artifacts/{sources[0]['artifact_id']}/raw"
    assert "30,000" in done["answer"] and done["citations"] == [1] and done["grounded"]
    assert "".join(d["text"] for e, d in events if e == "token").strip() == done["answer"]
    assert {"understand", "retrieval", "total"} <= set(done["timings_ms"])


def test_a_question_with_no_support_gets_an_honest_answer(server: str) -> None:
    done = ask(server, "what is the boiling point of tungsten?")[-1][1]
    assert not done["grounded"] and done["citations"] == []
    assert "could not find" in done["answer"].lower() or "couldn't find" in done["answer"].lower()


def test_follow_up_questions_use_the_conversation(server: str) -> None:
    first = ask(server, "who is Zbigniew?")
    conv = first[-1][1]["conversation_id"]
    follow = ask(server, "what office is it about?", conversation_id=conv)
    assert follow[0][1]["standalone_question"] and "Zbigniew" in follow[0][1]["standalone_question"]
    assert follow[1][1][0]["title"] == "Call notes"
    r = httpx.post(f"{server}/v1/ask", json={"question": "x", "conversation_id": conv})
    assert r.status_code == 200  # the owner may continue it


def test_time_only_question_over_http_lists_the_day(server: str) -> None:
    events = ask(server, "what happened yesterday?")
    assert events[0][1]["query_class"] == "temporal" and events[0][1]["answer_mode"] == "listing"
    assert [s["title"] for s in events[1][1]] == ["Reading", "Errands"]
    assert events[-1][1]["citations"] == [1, 2]


def test_search_and_timeline_and_raw(server: str, corpus: Corpus) -> None:
    r = httpx.get(f"{server}/v1/search", params={"q": "invoice 8391", "k": 3, "tz": "Europe/Paris"})
    assert r.status_code == 200 and r.json()["hits"][0]["title"] == "Acme invoice"
    r = httpx.get(f"{server}/v1/search", params={"q": "budget", "from": local(70).isoformat(),
                                                 "to": local(50).isoformat()})
    assert [h["title"] for h in r.json()["hits"]] == ["Budget review (autumn)"]
    r = httpx.get(f"{server}/v1/timeline", params={"from": local(2, 0).isoformat(), "tz": "Europe/Paris"})
    days = r.json()["days"]
    assert [d["date"] for d in days] == [str(local(1).date()), str(local(2).date())]
    assert [i["title"] for i in days[0]["items"]] == ["Reading", "Errands"]
    assert r.json()["total"] == 3  # yesterday's two notes and the recording (Bob's note is not Alice's)
    art = ids.artifact_id(USER, ids.sha256_hex(CORPUS[0]["text"].encode()))
    r = httpx.get(f"{server}/v1/artifacts/{art}/raw")
    assert r.status_code == 200 and r.content == CORPUS[0]["text"].encode()
    bob_art = ids.artifact_id(OTHER, ids.sha256_hex(b"Invoice 8391 is Bob's private hardware order, 99 euros."))
    assert httpx.get(f"{server}/v1/artifacts/{bob_art}/raw").status_code == 404
    assert httpx.get(f"{server}/v1/artifacts/..%2F..%2Fetc/raw").status_code == 404
    assert corpus.rt.objects.stat(keys.artifact_key(OTHER, bob_art)) is not None  # it exists, just not for Alice


def test_bad_requests(server: str) -> None:
    assert httpx.post(f"{server}/v1/ask", json={"question": "  "}).status_code == 422
    assert httpx.post(f"{server}/v1/ask", json={"question": "x", "tz": "Mars/Olympus"}).status_code == 422
    assert httpx.get(f"{server}/v1/search", params={"q": "x", "tz": "nope"}).status_code == 422



class FailingVectors:
    """A vector store whose searches fail with a message that must not reach the client."""

    def search(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("connection to qdrant at 10.0.0.7:6333 refused (api-key=s3cret)")

    def close(self) -> None:
        pass


def test_ask_error_event_hides_the_exception(corpus: Corpus, caplog: pytest.LogCaptureFixture) -> None:
    from dataclasses import replace

    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from services.query.api import create_router

    app = FastAPI()
    app.include_router(create_router(replace(corpus.rt, vectors=FailingVectors()), lambda: USER))  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="services.query.api"), TestClient(app) as client:
        body = client.post("/v1/ask", json={"question": "anything about invoices"}).text
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    error = events[-1]
    assert "s3cret" not in json.dumps(error) and "10.0.0.7" not in json.dumps(error)
    assert error["message"].startswith("the answer failed; try again") and error["error_id"] in error["message"]
    (record,) = [r for r in caplog.records if r.name == "services.query.api"]
    assert record.exc_info is not None and "s3cret" in str(record.exc_info[1])
    assert record.__dict__["error_id"] == error["error_id"]


class KeywordReranker:
    """Stands in for a cross-encoder (no cross-encoder weights can be fetched here): scores by one word."""

    model_id = "test:keyword"

    def __init__(self, word: str) -> None:
        self.word = word

    def score(self, query: str, passages: list[str]) -> list[float]:
        return [1.0 if self.word in p.lower() else 0.0 for p in passages]


def test_a_configured_reranker_reorders_the_fused_candidates(corpus: Corpus) -> None:
    rt = corpus.rt
    plain = QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse)  # type: ignore[arg-type]
    reranked = QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse,  # type: ignore[arg-type]
                           reranker=KeywordReranker("autumn"))
    plan = plain.plan("marketing budget", tz=TZ)
    assert reranked.search(USER, plan, k=2)[0].title == "Budget review (autumn)"
    assert {h.title for h in plain.search(USER, plan, k=2)} == {"Budget review", "Budget review (autumn)"}


def test_a_reranker_directory_without_a_model_is_a_clear_error(tmp_path: Any) -> None:
    from services.query.rerank import OnnxCrossEncoder

    with pytest.raises(RuntimeError, match=r"no model\.onnx"):
        OnnxCrossEncoder(tmp_path)


def test_with_another_users_key_nothing_of_alice_shows(server: str, corpus: Corpus) -> None:
    _, bob_key = corpus.rt.metadata.create_api_key(OTHER, "test")
    bob = {"Authorization": f"Bearer {bob_key}"}
    hits = httpx.get(f"{server}/v1/search", params={"q": "invoice 8391", "k": 20}, headers=bob).json()["hits"]
    assert [h["title"] for h in hits] == ["Bob's invoice"]
    events = []
    with httpx.stream("POST", f"{server}/v1/ask", json={"question": "what did I save today?"}, headers=bob,
                      timeout=60) as r:
        events = [json.loads(line[5:]) for line in r.iter_lines() if line.startswith("data:")]
    assert [s["title"] for s in events[1]] == ["Bob's invoice"]
    timeline = httpx.get(f"{server}/v1/timeline", params={"from": local(400).isoformat()}, headers=bob).json()
    assert timeline["total"] == 1
    alice_art = ids.artifact_id(USER, ids.sha256_hex(CORPUS[0]["text"].encode()))
    assert httpx.get(f"{server}/v1/artifacts/{alice_art}/raw", headers=bob).status_code == 404
    conv = ask(server, "who is Zbigniew?")[-1][1]["conversation_id"]  # Alice's (the loopback default user)
    r = httpx.post(f"{server}/v1/ask", json={"question": "and the lease?", "conversation_id": conv}, headers=bob)
    assert r.status_code == 403
    assert httpx.get(f"{server}/v1/search", params={"q": "x"},
                     headers={"Authorization": "Bearer sb_forged_key"}).status_code == 401
