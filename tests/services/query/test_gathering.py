"""The query plan for questions that gather across a conversation: which questions gather, and the
boost toward the person a question names (a boost, never a filter)."""

from __future__ import annotations

import pytest

from secondbrain.search_hits import SearchHit
from services.query.engine import _named_speakers, _toward_speakers, is_gathering

pytestmark = pytest.mark.fast  # no services: in the fast lane


@pytest.mark.parametrize("question", [
    "What activities does Melanie partake in?", "Which cities has John been to?",
    "How many children does Melanie have?", "What are Joanna's hobbies?", "What video games does Nate play?",
    "What animal do both Nate and Joanna like?", "what books has Tim read",
])
def test_questions_that_gather(question: str) -> None:
    assert is_gathering(question)


@pytest.mark.parametrize("question", [
    "When did Caroline go to the support group?", "What did Caroline research?", "What is Caroline's identity?",
    "where is the acme invoice", "what did I save about the budget last week?", "Who is Marta?",
])
def test_questions_that_do_not(question: str) -> None:
    assert not is_gathering(question)


def hit(i: int, text: str, speakers: str = "Melanie, Caroline", kind: str = "chat", doc: str = "d1") -> SearchHit:
    return SearchHit(chunk_id=f"c{i}", score=1.0, text=text, title="t", document_id=doc, artifact_id="a",
                     source_id="s", modality="text", captured_at="", ingested_at="", char_start=0, char_end=len(text),
                     heading_path=[], page=None, t_start=None, t_end=None, kind=kind, token_count=60,
                     speakers=tuple(s.strip() for s in speakers.split(",")))


def test_the_named_person_is_matched_to_the_speakers() -> None:
    hits = [hit(0, "Caroline: hi"), hit(1, "Mel Smith: yo", speakers="Mel Smith, Jo")]
    assert _named_speakers("What are Caroline's hobbies?", hits) == {"Caroline"}
    assert _named_speakers("What does Mel do on Sundays?", hits) == {"Mel Smith"}
    assert _named_speakers("what does caroline do", hits) == set()  # a name is written with a capital
    assert _named_speakers("What does Bob do?", [hit(0, "Bob: hi", kind="text", speakers="Bob")]) == set()


def test_passages_where_the_person_talks_rise_and_nothing_is_dropped() -> None:
    hits = [hit(0, "Caroline: I love painting.\nMelanie: Nice!\nCaroline: And pottery."),
            hit(1, "Melanie: We went camping.\nCaroline: Fun!\nMelanie: The kids swam."),
            hit(2, "A note that is not a conversation", kind="text", speakers="")]
    out = _toward_speakers("What activities does Melanie partake in?", hits)
    assert [h.chunk_id for h in out] == ["c1", "c0", "c2"]
    assert _toward_speakers("What activities are there?", hits) == hits  # nobody named: as it was

