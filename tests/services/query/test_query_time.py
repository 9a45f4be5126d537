"""Questions with time words, asked at every moment of the every-day check (``tests.clock.MOMENTS``).

Each moment gets its own users and a corpus placed relative to it, in one set of real stores;
the questions go through the engine and over HTTP with that moment as "now".  Seven consecutive
days at different hours, both daylight-saving changes and zones on either side of UTC: what day
or hour the suite runs at cannot decide whether it passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.query.engine import QueryEngine
from tests.clock import MOMENTS, Moment, process_zone
from tests.pg import base_dsn, fresh_database
from tests.query_corpus import CORPUS, Corpus, ask
from tests.serving import serve_in_thread


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("query-time"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="UTC", kafka_bootstrap="127.0.0.1:9", auth="required")
        runtime = build_runtime(settings, vectors=True, models=True)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module", params=MOMENTS, ids=[m.id for m in MOMENTS])
def moment(request: pytest.FixtureRequest) -> Iterator[Moment]:
    m: Moment = request.param
    with process_zone(m.process_tz):  # the machine running the suite is somewhere else
        yield m


@pytest.fixture(scope="module")
def corpus(rt: Runtime, moment: Moment) -> Corpus:
    return Corpus(rt, moment, user=f"alice-{moment.id}", other=f"bob-{moment.id}").build()


@pytest.fixture(scope="module")
def engine(rt: Runtime) -> QueryEngine:
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, budget_tokens=1500, per_document=3)


@pytest.fixture(scope="module")
def server(rt: Runtime) -> Iterator[str]:
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
        yield url


@pytest.fixture(scope="module")
def key(rt: Runtime, corpus: Corpus) -> dict[str, str]:
    _, secret = rt.metadata.api_keys.create_api_key(corpus.user, "test")
    return {"Authorization": f"Bearer {secret}"}


def titles(engine: QueryEngine, corpus: Corpus, question: str, *, k: int = 5,
           now: datetime | None = None) -> list[str]:
    m = corpus.moment
    plan = engine.plan(question, tz=m.tz, now=now or m.now)
    return [s.hit.title for s in engine.sources(corpus.user, plan, k=k)]


def placed_between(corpus: Corpus, start: datetime, end: datetime) -> set[str]:
    """Titles of Alice's items whose event time is in [start, end)."""
    m = corpus.moment
    found = {i.title for i in CORPUS if start <= i.at(m) < end}
    return found | ({"Engineering sync"} if start <= m.local(2, 9) < end else set())


# --------------------------------------------------------------------------- the engine


def test_a_subject_in_a_window_gets_what_is_about_it(engine: QueryEngine, corpus: Corpus) -> None:
    m = corpus.moment
    question = "what did I note about the budget last week?"
    plan = engine.plan(question, tz=m.tz, now=m.now)
    assert plan.query_class == "temporal+semantic" and plan.time_field == "captured_at"
    assert plan.semantic_query == "budget"
    assert plan.start == m.last_week(0, 0) and plan.end == m.last_week(0, 0) + timedelta(days=7)
    # Last week also holds the dentist (and, on some days, the invoice, the errands, the recording):
    # a question about the budget gets the budget review only.
    window = placed_between(corpus, plan.start, plan.end + plan.report_lag)
    assert {"Budget review", "Dentist"} <= window
    assert titles(engine, corpus, question, k=20) == ["Budget review"]
    # Without a subject the whole week is listed.
    assert set(titles(engine, corpus, "what happened last week?", k=50)) == placed_between(
        corpus, plan.start, plan.end)
    # With no passage clearly about the subject, the week's passages stay, the closest first.
    vague = titles(engine, corpus, "what did I note about money last week?", k=20)
    assert set(vague) == window and vague[0] == "Budget review"


def test_a_time_only_question_lists_everything_newest_first(engine: QueryEngine, corpus: Corpus) -> None:
    m = corpus.moment
    plan = engine.plan("what happened yesterday?", tz=m.tz, now=m.now)
    assert plan.query_class == "temporal" and plan.start == m.local(1, 0) and plan.end == m.local(0, 0)
    assert titles(engine, corpus, "what happened yesterday?") == ["Reading", "Errands"]
    # "saved" means ingestion time, stamped by the pipeline with the real clock: ask as of then.
    saved = corpus.saved_at.astimezone(m.tz)
    listed = titles(engine, corpus, "what did I save today?", k=50, now=saved)
    assert sorted(listed) == sorted(corpus.saved_on_the_day_of(corpus.user, saved))
    assert len(listed) == len(CORPUS) + 1 and not any(t.startswith("Bob") for t in listed)


def test_a_vague_time_boosts_recent_passages(engine: QueryEngine, corpus: Corpus) -> None:
    m = corpus.moment
    question = "what was decided about the marketing budget recently?"
    plan = engine.plan(question, tz=m.tz, now=m.now)
    assert plan.recency_boost and plan.start is None
    found = titles(engine, corpus, question)
    assert found.index("Budget review") < found.index("Budget review (autumn)")


# --------------------------------------------------------------------------- over HTTP


def test_ask_streams_meta_sources_tokens_done(server: str, corpus: Corpus, key: dict[str, str]) -> None:
    m = corpus.moment
    events = ask(server, "what did I note about the budget last week?", headers=key, tz=m.tz.key,
                 now=m.now.isoformat())
    kinds = [e for e, _ in events]
    assert kinds[0] == "meta" and kinds[1] == "sources" and kinds[-1] == "done"
    assert set(kinds[2:-1]) == {"token"}
    meta, sources, done = events[0][1], events[1][1], events[-1][1]
    assert meta["query_class"] == "temporal+semantic" and meta["answer_mode"] == "extractive"
    assert meta["time_range"]["field"] == "captured_at" and meta["understood"]["expression"] == "last week"
    assert meta["time_range"]["start"] == m.last_week(0, 0).isoformat()
    assert [s["title"] for s in sources] == ["Budget review"]
    assert sources[0]["link"] == f"/v1/artifacts/{sources[0]['artifact_id']}/raw"
    assert "30,000" in done["answer"] and done["citations"] == [1] and done["grounded"]
    assert "".join(d["text"] for e, d in events if e == "token").strip() == done["answer"]
    assert {"understand", "retrieval", "total"} <= set(done["timings_ms"])


def test_time_only_question_over_http_lists_the_day(server: str, corpus: Corpus, key: dict[str, str]) -> None:
    m = corpus.moment
    events = ask(server, "what happened yesterday?", headers=key, tz=m.tz.key, now=m.now.isoformat())
    assert events[0][1]["query_class"] == "temporal" and events[0][1]["answer_mode"] == "listing"
    assert [s["title"] for s in events[1][1]] == ["Reading", "Errands"]
    assert events[-1][1]["citations"] == [1, 2]


def test_search_reads_time_words_as_of_now(server: str, corpus: Corpus, key: dict[str, str]) -> None:
    m = corpus.moment
    body = httpx.get(f"{server}/v1/search", headers=key, timeout=30, params={
        "q": "budget last week", "tz": m.tz.key, "now": m.now.isoformat()}).json()
    assert body["time_range"]["start"] == m.last_week(0, 0).isoformat()
    assert [h["title"] for h in body["hits"]] == ["Budget review"]


def test_timeline_groups_by_the_users_day(server: str, corpus: Corpus, key: dict[str, str]) -> None:
    m = corpus.moment
    r = httpx.get(f"{server}/v1/timeline", headers=key, timeout=30, params={
        "from": m.local(2, 0).isoformat(), "to": m.local(0, 0).isoformat(), "tz": m.tz.key})
    days = r.json()["days"]
    assert [d["date"] for d in days] == [str(m.local(1).date()), str(m.local(2).date())]
    assert [i["title"] for i in days[0]["items"]] == ["Reading", "Errands"]
    assert r.json()["total"] == 3  # yesterday's two notes and the recording (Bob's note is not Alice's)
