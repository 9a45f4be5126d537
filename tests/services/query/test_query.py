"""Retrieval and answers on a generated corpus with known answers, through the real stages and stores.

The corpus is dated relative to a fixed moment (questions about time words, at many moments, are
in test_query_time.py).  Answers are read over real HTTP (uvicorn on loopback, httpx streaming).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain import ids, keys
from secondbrain.settings import Settings
from services.query.engine import Filters, QueryEngine
from tests.clock import REFERENCE, Moment
from tests.pg import base_dsn, fresh_database
from tests.query_corpus import BOB_TEXT, CORPUS, SPEECH, Corpus
from tests.query_corpus import ask as ask_as
from tests.serving import serve_in_thread
from tests.sse import sse_events

MOMENT = Moment("reference", REFERENCE)  # time words are tested at many moments in test_query_time.py
TZ = MOMENT.tz
USER = "alice"
OTHER = "bob"
local = MOMENT.local


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("query"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/Paris", kafka_bootstrap="127.0.0.1:9", default_user=USER,
                            auth="off")  # the key-less requests act as Alice; keys are tested in test_auth.py
        rt = build_runtime(settings, vectors=True, models=True)
        c = Corpus(rt, MOMENT, user=USER, other=OTHER).build()
        yield c
        rt.close()


@pytest.fixture(scope="module")
def engine(corpus: Corpus) -> QueryEngine:
    rt = corpus.rt
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, budget_tokens=1500, per_document=3)


def titles(engine: QueryEngine, question: str, k: int = 5, user: str = USER) -> list[str]:
    plan = engine.plan(question, tz=TZ, now=MOMENT.now)
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
    for q in ("invoice 8391", "Bob hardware order", "everything about invoices"):
        assert "Bob's invoice" not in titles(engine, q, k=20)
    assert titles(engine, "hardware order 99 euros", user=OTHER)[0] == "Bob's invoice"


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
    return ask_as(base, question, now=MOMENT.now.isoformat(), **extra)


def test_a_question_with_no_support_gets_an_honest_answer(server: str) -> None:
    done = ask(server, "what is the boiling point of tungsten?")[-1][1]
    assert not done["grounded"] and done["citations"] == []
    assert "could not find" in done["answer"].lower() or "couldn't find" in done["answer"].lower()


def test_follow_up_questions_use_the_conversation(server: str) -> None:
    first = ask(server, "who is Zbigniew?")
    conv = first[-1][1]["conversation_id"]
    follow = ask(server, "what office is it about?", conversation_id=conv)
    assert follow[0][1]["standalone_question"] and "Zbigniew" in follow[0][1]["standalone_question"]
    assert follow[0][1]["carried_over"] == {"subject": "Zbigniew", "time": None, "why": "pronoun 'it'",
                                            "from": "who is Zbigniew?"}
    assert follow[1][1][0]["title"] == "Call notes"
    r = httpx.post(f"{server}/v1/ask", json={"question": "x", "conversation_id": conv})
    assert r.status_code == 200  # the owner may continue it


def test_a_follow_up_with_its_own_subject_leaves_the_earlier_time_behind(server: str) -> None:
    """Issue 23: after "what did I save today?", "what is on the whiteboard?" kept today's filter."""
    first = ask(server, "what did I save today?")
    assert first[0][1]["time_range"] is not None
    conv = first[-1][1]["conversation_id"]
    follow = ask(server, "how much did the plumber charge for the sink repair?", conversation_id=conv)
    meta, sources, done = follow[0][1], follow[1][1], follow[-1][1]
    assert meta["carried_over"] is None and meta["standalone_question"] is None and meta["time_range"] is None
    assert sources[0]["title"] == "Plumber visit"  # saved 20 days before "now": a carried "today" would hide it
    assert "240 euros" in done["answer"] and done["citations"] == [1]
    # ...and one that points back takes the subject, not the time.
    again = ask(server, "and who fixed it?", conversation_id=conv)[0][1]
    assert again["carried_over"]["time"] is None and again["time_range"] is None
    assert again["standalone_question"] == "and who fixed the sink repair?"


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
    art = ids.artifact_id(USER, ids.sha256_hex(CORPUS[0].text.encode()))
    r = httpx.get(f"{server}/v1/artifacts/{art}/raw")
    assert r.status_code == 200 and r.content == CORPUS[0].text.encode()
    bob_art = ids.artifact_id(OTHER, ids.sha256_hex(BOB_TEXT.encode()))
    assert httpx.get(f"{server}/v1/artifacts/{bob_art}/raw").status_code == 404
    assert httpx.get(f"{server}/v1/artifacts/..%2F..%2Fetc/raw").status_code == 404
    assert corpus.rt.objects.stat(keys.artifact_key(OTHER, bob_art)) is not None  # it exists, just not for Alice


def test_a_search_for_what_is_not_there_says_nothing_matches(server: str) -> None:
    found = httpx.get(f"{server}/v1/search", params={"q": "quantum chromodynamics lecture"}).json()
    assert found["matched"] is False and found["hits"] == []
    assert 1 <= len(found["closest"]) <= 3  # the closest few, apart
    found = httpx.get(f"{server}/v1/search", params={"q": "budget", "k": 20}).json()
    assert found["matched"] is True and found["closest"] == []
    assert {h["title"] for h in found["hits"]} == {"Budget review", "Budget review (autumn)"}  # nothing else
    # without the cut, the k best however far (rankings compared)
    every = httpx.get(f"{server}/v1/search", params={"q": "budget", "k": 20, "everything": "true"}).json()
    assert len({h["title"] for h in every["hits"]}) > 2


def test_what_did_i_save_about_lists_every_matching_source(server: str) -> None:
    events = ask(server, "What did I save about the budget?")
    sources, done = events[1][1], events[-1][1]
    assert {s["title"] for s in sources} == {"Budget review", "Budget review (autumn)"}
    assert done["answer"].startswith("You saved 2 sources about “the budget”")
    assert done["citations"] == [1, 2] and done["answer_mode"] == "listing"
    nothing = ask(server, "what have I saved about quantum chromodynamics?")[-1][1]
    assert nothing["answer"] == "Nothing you saved matches “quantum chromodynamics”." and not nothing["grounded"]


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

    from services.access import current_user
    from services.query.answerer import Answerer
    from services.query.api import router

    rt = replace(corpus.rt, vectors=FailingVectors())  # type: ignore[arg-type]
    app = FastAPI()
    app.state.runtime, app.state.answerer = rt, Answerer.for_runtime(rt)
    app.dependency_overrides[current_user] = lambda: USER
    app.include_router(router)
    with caplog.at_level(logging.ERROR, logger="services.query.api"), TestClient(app) as client:
        events = [data for _, data in sse_events(client, "POST", "/v1/ask",
                                                 json={"question": "anything about invoices"})]
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
    _, bob_key = corpus.rt.metadata.api_keys.create_api_key(OTHER, "test")
    bob = {"Authorization": f"Bearer {bob_key}"}
    hits = httpx.get(f"{server}/v1/search", params={"q": "invoice 8391", "k": 20}, headers=bob).json()["hits"]
    assert [h["title"] for h in hits] == ["Bob's invoice"]
    # "Today" for ingestion time is the day the corpus was saved (the pipeline stamps the real time).
    saved = corpus.saved_at.astimezone(TZ)
    events = ask_as(server, "what did I save today?", headers=bob, now=saved.isoformat())
    (sources,) = [d for e, d in events if e == "sources"]
    assert [s["title"] for s in sources] == corpus.saved_on_the_day_of(OTHER, saved) == ["Bob's invoice"]
    timeline = httpx.get(f"{server}/v1/timeline", params={"from": local(400).isoformat()}, headers=bob).json()
    assert timeline["total"] == 1
    alice_art = ids.artifact_id(USER, ids.sha256_hex(CORPUS[0].text.encode()))
    assert httpx.get(f"{server}/v1/artifacts/{alice_art}/raw", headers=bob).status_code == 404
    conv = ask(server, "who is Zbigniew?")[-1][1]["conversation_id"]  # Alice's (the loopback default user)
    r = httpx.post(f"{server}/v1/ask", json={"question": "and the lease?", "conversation_id": conv}, headers=bob)
    assert r.status_code == 403
    assert httpx.get(f"{server}/v1/search", params={"q": "x"},
                     headers={"Authorization": "Bearer sb_forged_key"}).status_code == 401


async def test_the_answerer_yields_typed_events_that_the_route_sends_unchanged(corpus: Corpus, server: str) -> None:
    """``Answerer`` in-process and ``POST /v1/ask`` give the same events: meta, sources, tokens, done."""
    from secondbrain.answer_events import Done, Meta, Sources, Token
    from services.query.answerer import Answerer
    from services.query.api import sse
    from services.query.params import AskIn

    question = "who is Zbigniew?"
    answerer = Answerer.for_runtime(corpus.rt)
    asked = AskIn.model_validate({"question": question, "tz": "Europe/Paris", "now": MOMENT.now.isoformat(),
                                  "keep": False})
    events = [e async for e in await answerer.start(USER, asked)]
    assert isinstance(events[0], Meta) and isinstance(events[1], Sources) and isinstance(events[-1], Done)
    assert events[2:-1] and all(isinstance(e, Token) for e in events[2:-1])
    assert events[-1].grounded and events[-1].citations
    over_http = ask(server, question, keep=False)
    assert [name for name, _ in over_http] == [e.name for e in events]
    varying = ("conversation_id", "timings_ms")  # a new conversation each time; the time taken
    for (name, data), event in zip(over_http, events, strict=True):
        here = json.loads(sse(event)["data"])
        if name in ("meta", "done"):
            here, data = ({k: v for k, v in d.items() if k not in varying} for d in (here, data))
        assert data == here, name


async def test_a_refused_question_is_a_domain_error_the_route_answers_with_its_status(corpus: Corpus) -> None:
    """The answerer says why it refuses; ``POST /v1/ask`` (and MCP's ask) pick the status (test_bad_requests)."""
    from services.query.answerer import Answerer, QuestionRefused
    from services.query.api import refusal
    from services.query.params import AskIn

    answerer = Answerer.for_runtime(corpus.rt)
    corpus.rt.metadata.conversations.add_turn(USER, "c-refused", "user", "who is Zbigniew?")
    cases = [({"question": "  "}, "invalid", "the question is empty"),
             ({"question": "x", "tz": "Mars/Olympus"}, "invalid", "unknown time zone 'Mars/Olympus'"),
             ({"question": "x", "country": "1!"}, "invalid", "country must be an ISO 3166 two-letter code"),
             ({"question": "x", "conversation_id": "c-refused"}, "foreign", "belongs to someone else")]
    for body, why, said in cases:
        with pytest.raises(QuestionRefused) as refused:
            await answerer.start(OTHER, AskIn.model_validate(body))
        assert refused.value.why == why and said in refused.value.reason, body
        assert refusal(refused.value).status_code == (403 if why == "foreign" else 422)


def test_each_event_has_its_wire_shape() -> None:
    from secondbrain.answer_events import Carried, Done, Error, Meta, Quote, Quoted, Revised, Source, Sources, Token
    from secondbrain.search_hits import SearchHit
    from services.query.api import sse

    assert sse(Token("Hi ")) == {"event": "token", "data": '{"text": "Hi "}'}
    assert sse(Error("down", retryable=True)) == {"event": "error", "data": '{"message": "down", "retryable": true}'}
    assert sse(Error("failed", error_id="ab12")) == {"event": "error",
                                                    "data": '{"message": "failed", "error_id": "ab12"}'}
    meta = Meta({"query_class": "semantic"}, answer_mode="extractive", conversation_id="c", standalone_question=None,
                carried_over=None, fresh=False, model=None, revises=None, note="n")
    assert list(json.loads(sse(meta)["data"])) == ["query_class", "answer_mode", "conversation_id",
                                                   "standalone_question", "carried_over", "fresh", "model",
                                                   "revises", "note"]
    followed = Meta({}, answer_mode="llm", conversation_id="c", standalone_question="who fixed it, the boiler?",
                    carried_over=Carried("the boiler", None, "a follow-up", "who fixed the boiler?"), fresh=False,
                    model="m", revises=Revised("who fixed it?", "edit"), note=None)
    said = json.loads(sse(followed)["data"])
    assert said["carried_over"] == {"subject": "the boiler", "time": None, "why": "a follow-up",
                                    "from": "who fixed the boiler?"}
    assert said["revises"] == {"question": "who fixed it?", "how": "edit"}
    done = Done("a", answer_markdown="a", citations=[1], found=True, quotes=[], invalid_citations=[], grounded=True,
                unsupported=False, extractive=None, answer_mode="extractive", conversation_id="c",
                timings_ms={"total": 1.0})
    assert list(json.loads(sse(done)["data"])) == ["answer", "answer_markdown", "citations", "found", "quotes",
                                                   "invalid_citations", "grounded", "unsupported", "extractive",
                                                   "answer_mode", "conversation_id", "timings_ms", "beyond_window"]
    # A source: the hit's own fields in their order (less text and score; t_start and t_end those of the span
    # shown), then where it is; a recording's position and an agenda answer's lines only when there are some.
    hit = SearchHit(chunk_id="c1", score=0.5, text="the words", title="Memo", document_id="d", artifact_id="a",
                    source_id="s", modality="audio", captured_at="2026-03-01T09:00:00Z",
                    ingested_at="2026-03-01T09:05:00Z", char_start=0, char_end=9, heading_path=[], page=None,
                    t_start=65.0, t_end=70.0)
    source = Source(1, hit, captured_at_local="2026-03-01T10:00:00+01:00", t_start=60.0, t_end=80.0,
                    snippet="the words", link="/v1/artifacts/a/raw#t=65", neighbours=1, position="1:00-1:20")
    sent = json.loads(sse(Sources([source]))["data"])
    assert list(sent[0]) == ["n", "chunk_id", "title", "document_id", "artifact_id", "source_id", "modality",
                             "captured_at", "ingested_at", "char_start", "char_end", "heading_path", "page", "t_start",
                             "t_end", "source_uri", "captured_at_source", "at_start", "at_end", "chunk_index",
                             "token_count", "kind", "speakers", "turn_ids", "links", "word_times", "attributes",
                             "mentions", "captured_at_local", "snippet", "link", "neighbours", "position"]
    assert (sent[0]["t_start"], sent[0]["t_end"], sent[0]["position"]) == (60.0, 80.0, "1:00-1:20")
    told = Source(2, hit, captured_at_local="x", t_start=None, t_end=None, snippet="", link="l", agenda=["e1"])
    assert list(told.data())[-2:] == ["neighbours", "agenda"] and "position" not in told.data()
    quoted = Done("a [1]", answer_markdown="a [1]", citations=[], found=True, grounded=False, invalid_citations=[],
                  quotes=[Quote(1, None, 65.0, "/v1/artifacts/a/raw#t=65", "1:05"), Quote(2, 3, None, "l#page=3")],
                  unsupported=True, extractive=Quoted("a [1]", [1]), answer_mode="llm", conversation_id="c")
    data = json.loads(sse(quoted)["data"])
    assert data["quotes"] == [{"n": 1, "page": None, "t_start": 65.0, "link": "/v1/artifacts/a/raw#t=65",
                               "position": "1:05"}, {"n": 2, "page": 3, "t_start": None, "link": "l#page=3"}]
    assert data["extractive"] == {"answer": "a [1]", "citations": [1]}
