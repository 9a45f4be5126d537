"""Time said inside the text: a passage that speaks of another time ("three weeks ago we went
camping", "can't wait for the weekend") is found by a question about that time, through the real
stages (extract, chunk, embed) and stores, and shows what it speaks of in its hits and the plan.

Each passage here was written outside the window its question names and beyond the week in which
later reports on a window are looked for, so only the time it speaks of can bring it in.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import core
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.temporal import Conventions
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from services.query.answerer import beyond_label, quoted_answer
from services.query.engine import QueryEngine
from services.query.extractive import MAX_WORDS
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread
from tests.sse import sse_events

TZ = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=TZ)  # the questions are asked weeks after everything below
USER = "alice"


def at(day: str, clock: str = "18:00") -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=TZ)


# (key, title, content type, text, written at)
RECORDS = [
    # A note written on 15 April about a meeting on 23 March (a date said outright).
    ("budget", "Finance notes", "text/markdown",
     "# Finance notes\n\nOn 23 March we agreed the marketing budget at 40k, with a review in the autumn.",
     at("2026-04-15")),
    # A chat record of Saturday 25 April about the week of 30 March - 5 April (the past, relatively).
    ("camping", "Conversation between Melanie and Caroline", "text/x-chat",
     "Melanie: Three weeks ago we went camping by the lake with the kids.\n"
     "Caroline: That sounds lovely, did they like it?\n"
     "Melanie: They loved the campfire most.\n", at("2026-04-25")),
    # A chat record of Wednesday 29 April about the weekend to come (2-3 May).
    ("fair", "Conversation between Caroline and Melanie", "text/x-chat",
     "Caroline: I can't wait for the weekend, we're going to the pottery fair in Lyon!\n"
     "Melanie: Bring me back a bowl!\n", at("2026-04-29")),
    # Written in March about February: must not answer questions about March or May.
    ("skiing", "Holiday notes", "text/markdown",
     "# Holiday notes\n\nOn 2 February we went skiing in the Alps and the budget held.", at("2026-03-10")),
    # Written in January about the year after: only what was said before it can answer for it.
    ("marathon", "Conversation between Melanie and Caroline", "text/x-chat",
     "Caroline: Any big plans?\n"
     "Melanie: Next year I want to run the Berlin marathon with my sister.\n", at("2026-01-12")),
]


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("mentions"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/Paris", kafka_bootstrap="127.0.0.1:9", default_user=USER, auth="off")
        runtime = build_runtime(settings, vectors=True, models=True)
        m = runtime.metadata
        m.users.ensure_user(USER)
        extract = ExtractorStage(runtime.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                 fence=m.fence,
                                 catalog=m.catalog,
                                 lifecycle=m.lifecycle, extractors=ExtractorSet({"text": TextExtractor()}),
                                 max_bytes=1 << 20)
        chunk = ChunkerStage(runtime.objects, ChunkingConfig(), fence=m.fence, zone=TZ)
        assert runtime.vectors and runtime.embedder and runtime.sparse
        embed = EmbedderStage(runtime.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                              vectors=runtime.vectors, embedder=runtime.embedder, sparse=runtime.sparse)
        for key, title, ctype, text, when in RECORDS:
            raw = text.encode()
            ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=USER, source_uri=f"file:{key}",
                                   content_type=ctype, size_bytes=len(raw), submitted_at=datetime.now(UTC),
                                   producer="test", content=raw, title=title, captured_at=when.astimezone(UTC),
                                   filename=f"{key}.{'chat' if ctype == 'text/x-chat' else 'md'}")
            (doc,) = core.run(extract, ev, m.jobs, trusted=True)
            (chunks,) = core.run(chunk, doc, m.jobs)
            core.run(embed, chunks, m.jobs)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def engine(rt: Runtime) -> QueryEngine:
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse)


def found(engine: QueryEngine, question: str) -> list[str]:
    plan = engine.plan(question, tz=TZ, now=NOW)
    return [h.text for h in engine.search(USER, plan, k=10)]


@pytest.mark.parametrize(("question", "expected"), [
    ("what did we agree about the marketing budget on 23 March?", "marketing budget at 40k"),
    ("what did Melanie do with the kids in the first week of April?", "went camping by the lake"),
    ("where did Caroline go the first weekend of May?", "pottery fair in Lyon"),
])
def test_a_passage_is_found_by_the_time_it_speaks_of(engine: QueryEngine, question: str, expected: str) -> None:
    texts = found(engine, question)
    assert texts and expected in texts[0], texts


def test_without_the_time_it_speaks_of_those_passages_are_outside_the_window(engine: QueryEngine) -> None:
    """The same questions with the window on the passages' own time alone: nothing written then."""
    from dataclasses import replace

    plan = engine.plan("where did Caroline go the first weekend of May?", tz=TZ, now=NOW)
    assert plan.matches_mentions
    flt = replace(plan.vector_filter(), mentioned_range=None)
    hits = engine.retriever.search(USER, plan.semantic_query, k=10, flt=flt)
    assert not any("pottery fair" in h.text for h in hits)


def test_a_passage_about_another_time_stays_out(engine: QueryEngine) -> None:
    # The skiing note speaks of February and was written in March: it answers neither.
    assert not any("skiing" in t for t in found(engine, "what did we do about the budget on 23 March?"))
    assert not any("skiing" in t for t in found(engine, "what happened the first weekend of May?"))
    assert any("skiing" in t for t in found(engine, "where did we go on holiday on 2 February?"))


def test_search_hits_and_the_plan_show_the_times_spoken_of(rt: Runtime) -> None:
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
        r = httpx.get(f"{url}/v1/search", params={"q": "where did Caroline go the first weekend of May?",
                                                 "tz": "Europe/Paris", "now": NOW.isoformat()}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mentioned_times"] is True and body["time_filter"] == "soft"
    top = body["hits"][0]
    assert "pottery fair" in top["text"]
    (mention,) = top["mentions"]
    assert mention["expression"] == "the weekend"
    assert mention["start"].startswith("2026-05-01T22:00") and mention["end"].startswith("2026-05-03T22:00")


def ask(rt: Runtime, question: str) -> dict[str, dict]:
    """The question through ``POST /v1/ask``: each event's data by its name."""
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port), \
            httpx.Client(timeout=60) as client:
        return dict(sse_events(client, "POST", f"{url}/v1/ask", json={
            "question": question, "tz": "Europe/Paris", "now": NOW.isoformat()}))


def test_a_window_that_holds_nothing_answers_from_other_times_and_says_so(rt: Runtime) -> None:
    """Next year has no records yet: what was said before about it answers, labelled as from other times."""
    done = ask(rt, "What is Melanie planning for next year?")["done"]
    assert done["answer"].startswith("Nothing in your data is from 2027; the closest from other times:"), done
    assert "Berlin marathon" in done["answer"] and done["found"] and done["citations"]
    assert done["beyond_window"] == "Nothing in your data is from 2027; the closest from other times:"


def test_the_quoted_passages_beside_a_model_answer_carry_the_label_too(rt: Runtime, engine: QueryEngine) -> None:
    """The passages quoted beside a model's answer that cites nothing come from the same call as the answer
    without a model: from other times than the one asked, they say so, within the same word budget."""
    question = "What is Melanie planning for next year?"
    plan = engine.plan(question, tz=TZ, now=NOW)
    wider = plan.beyond_window()
    assert wider is not None
    sources = engine.sources(USER, wider, k=6)
    label = beyond_label(plan, NOW, Conventions())
    quoted = quoted_answer(question, sources, label, encoder=rt.sparse, tz=TZ, conventions=Conventions())
    assert quoted.text.startswith(f"{label} ") and "Berlin marathon" in quoted.text, quoted.text
    assert len(quoted.text.split()) <= MAX_WORDS


def test_a_window_that_holds_the_answer_is_not_labelled(rt: Runtime) -> None:
    done = ask(rt, "What did Melanie do with the kids in the first week of April?")["done"]
    assert "went camping by the lake" in done["answer"] and done["beyond_window"] is None
    assert not done["answer"].startswith("Nothing")


def test_a_subject_that_is_nowhere_is_not_found_at_any_time(rt: Runtime) -> None:
    done = ask(rt, "What did Melanie buy for the piano lessons in 2010?")["done"]
    assert not done["found"] and "could not find" in done["answer"], done


@pytest.mark.parametrize(("question", "widened"), [
    ("What is Melanie planning for next year?", True),  # a soft window: its subject may be spoken of elsewhere
    ("What had Melanie planned as of March?", False),  # a cut-off excludes what came after, whatever it finds
    ("What did I save about the marathon last week?", False),  # when it was saved is what is asked
    ("What happened last week?", False),  # a time-only question lists the window, empty or not
])
def test_only_a_soft_window_is_searched_beyond(engine: QueryEngine, question: str, widened: bool) -> None:
    plan = engine.plan(question, tz=TZ, now=NOW)
    wider = plan.beyond_window()
    assert (wider is not None) == widened, plan
    if wider is not None:
        assert wider.start is None and wider.end is None and wider.semantic_query == question
