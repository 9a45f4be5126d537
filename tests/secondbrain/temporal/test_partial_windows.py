"""A question whose time words are read only in part is searched with that time as a preference, never as a
filter: the passages inside what was read come first, the others still come (real stores and models).

The corpus is ``tests.query_corpus`` at the fixed reference moment (Tuesday 24 November 2026, Paris): the
first-quarter marketing budget was discussed on 25 September ("Budget review (autumn)") and again on Friday
20 November ("Budget review").
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.query.engine import QueryEngine
from tests.clock import REFERENCE, Moment
from tests.pg import base_dsn, fresh_database
from tests.query_corpus import Corpus

MOMENT = Moment("reference", REFERENCE)


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("partial-windows"),  # type: ignore[call-arg]
                            postgres_dsn=SecretStr(dsn), timezone="UTC", kafka_bootstrap="127.0.0.1:9")
        runtime = build_runtime(settings, vectors=True, models=True)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def corpus(rt: Runtime) -> Corpus:
    return Corpus(rt, MOMENT).build()


@pytest.fixture(scope="module")
def engine(rt: Runtime) -> QueryEngine:
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, budget_tokens=1500, per_document=3)


def titles(engine: QueryEngine, corpus: Corpus, question: str) -> list[str]:
    plan = engine.plan(question, tz=MOMENT.tz, now=MOMENT.now)
    return [s.hit.title for s in engine.sources(corpus.user, plan, k=10)]


def test_a_partly_read_window_ranks_what_is_inside_it_first_and_hides_nothing(engine: QueryEngine,
                                                                              corpus: Corpus) -> None:
    # "the first half of last quarter": the parser reads last quarter (July-September) only.
    question = "what was decided about the marketing budget in the first half of last quarter?"
    plan = engine.plan(question, tz=MOMENT.tz, now=MOMENT.now)
    meta = plan.meta()
    assert meta["time_range"] is None and meta["time_filter"] == "preference"
    understood = meta["understood"]
    assert isinstance(understood, dict) and understood["partial"] is True
    assert understood["expression"] == "the first half of last quarter"
    found = titles(engine, corpus, question)
    assert found.index("Budget review (autumn)") < found.index("Budget review")  # both there, September's first


def test_a_partly_read_window_does_not_hide_what_lies_outside_it(engine: QueryEngine, corpus: Corpus) -> None:
    # "the last working day of last week" (Friday 20 November): read as last week, a preference.
    found = titles(engine, corpus, "what was decided about the marketing budget on the last working day of last week?")
    assert found.index("Budget review") < found.index("Budget review (autumn)")
    # Read in full, a window is a filter: September's review is not in last week (had the person misdated
    # it, it would be hidden), which is why a window read only in part must not be one.
    assert "Budget review (autumn)" not in titles(engine, corpus,
                                                  "what was decided about the marketing budget last week?")
    # A time word the grammar does not cover no longer picks a wrong day as a filter: before, "Friday retro"
    # filtered on last Friday; now it is the subject, and the reviews of both dates are there.
    assert {"Budget review", "Budget review (autumn)"} <= set(
        titles(engine, corpus, "what did the Friday retro decide about the marketing budget?"))
