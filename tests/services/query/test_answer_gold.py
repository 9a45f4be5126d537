"""Extractive answers (no language model) hold the fact: the gold suite in tests/gold_answers.py
run through the real answerer, and the sentence cutting it relies on."""

from __future__ import annotations

import re

import pytest

from services.query.extractive import extractive_answer
from services.query.retrieval import SearchHit
from services.query.sentences import sentences
from tests.services.query.gold_answers import GOLD, Gold

MODALITY = {"note": "note", "pdf": "pdf", "ocr": "image", "transcript": "audio"}
# Misses the rules cannot fix: the fact is in a sentence that shares no word with the question.
KNOWN_MISSES: dict[str, str] = {}


def hits(case: Gold) -> list[SearchHit]:
    return [SearchHit(chunk_id=f"c{i}", score=1.0, text=text, title=f"{case.kind} {i}", document_id=f"d{i}",
                      artifact_id=f"a{i}", source_id=f"s{i}", modality=MODALITY[case.kind],
                      captured_at="2026-11-17T08:00:00.000000Z", ingested_at="2026-11-17T09:00:00.000000Z",
                      char_start=0, char_end=len(text), heading_path=[], page=None, t_start=None, t_end=None)
            for i, text in enumerate(case.passages)]


def test_the_gold_suite_is_large_and_covers_every_kind_of_capture() -> None:
    assert len(GOLD) >= 60
    assert {c.kind for c in GOLD} == set(MODALITY)
    assert len({c.id for c in GOLD}) == len(GOLD)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(
    reason=KNOWN_MISSES[c.id], strict=True)] if c.id in KNOWN_MISSES else []) for c in GOLD])
def test_the_answer_quotes_the_fact_with_its_citation(case: Gold) -> None:
    answer = extractive_answer(case.question, hits(case))
    assert case.fact in answer.text, answer.text
    assert answer.grounded and answer.citations
    # The fact's sentence is cited by the source it came from.
    source = next(i for i, p in enumerate(case.passages, 1) if case.fact in " ".join(p.split()))
    assert source in answer.citations
    assert re.search(rf"{re.escape(case.fact)}[^\[]*\[{source}\]", answer.text), answer.text
    assert len(answer.text) < 700  # a quote, not the whole source


def test_the_dentist_note_is_answered_with_the_date_and_time() -> None:
    """The reproduction from issue 23: the answer used to stop at "Dr." ("My dentist appointment with Dr. [1]")."""
    note = "My dentist appointment with Dr. Okafor is on the 3rd of December at 9:30"
    case = Gold("note", (note,), "When is my dentist appointment?", "")
    assert extractive_answer(case.question, hits(case)).text == f"{note} [1]"


@pytest.mark.parametrize(("text", "expected"), [
    ("Dr. Okafor is on the 3rd of Dec. at 9:30. Bring the card.",
     ["Dr. Okafor is on the 3rd of Dec. at 9:30.", "Bring the card."]),
    ("J. R. R. Tolkien wrote it. Mr. Smith paid $3.50 at 10 a.m. and left.",
     ["J. R. R. Tolkien wrote it.", "Mr. Smith paid $3.50 at 10 a.m. and left."]),
    ("Version 3.11.2 runs on 10.0.0.1. See fig. 3 on p. 12. It costs approx. 30 euros.",
     ["Version 3.11.2 runs on 10.0.0.1.", "See fig. 3 on p. 12.", "It costs approx. 30 euros."]),
    ("Sr. Gomez met Capt. Haddock. Ref. no. 8391. Tel. 555-1234.",
     ["Sr. Gomez met Capt. Haddock.", "Ref. no. 8391.", "Tel. 555-1234."]),
    # A hard-wrapped line (OCR, PDF, a transcript's segments) is not a sentence end...
    ("Whiteboard: launch date is\n14 March, owner Priya", ["Whiteboard: launch date is 14 March, owner Priya"]),
    ("okay so the launch date is\nMarch 14th and Priya owns it.",
     ["okay so the launch date is March 14th and Priya owns it."]),
    ("The parental leave starts on\n\n1 October for a year.", ["The parental leave starts on 1 October for a year."]),
    # ...but a list item, a heading, a speaker's turn and a finished paragraph are.
    ("# Garden\n\nWater at dawn.\n- buy straw\n- pinch shoots\nThen rest.",
     ["# Garden", "Water at dawn.", "- buy straw", "- pinch shoots", "Then rest."]),
    ("Alice: when is it?\nBob: on Friday at 3 p.m.\n[00:12] Alice: great", ["Alice: when is it?",
                                                                           "Bob: on Friday at 3 p.m.",
                                                                           "[00:12] Alice: great"]),
    ("First paragraph ends here.\n\nSecond one starts", ["First paragraph ends here.", "Second one starts"]),
])
def test_sentences_are_cut_where_a_reader_would(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected
