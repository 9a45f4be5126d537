"""The agenda's gold set (devtools/agenda_gold.py): notes, chat turns, transcripts and OCR with the items they
should produce and none where they must not; precision and recall both at least 0.9, and each passage's
misses and false items named when they are not."""

from __future__ import annotations

import pytest

from devtools.agenda_gold import CASES, measure

pytestmark = pytest.mark.fast


def test_the_gold_set_is_large_and_varied() -> None:
    assert len(CASES) >= 80
    assert {c.source for c in CASES} == {"note", "chat", "transcript", "ocr"}
    assert sum(1 for c in CASES if not c.expect) >= 30  # passages that must put nothing on the agenda
    assert len({c.id for c in CASES}) == len(CASES)


def test_precision_and_recall_of_agenda_items() -> None:
    precision, recall, outcomes = measure()
    wrong = [f"{o.case.id}: expected {o.case.expect}, got {o.produced}" for o in outcomes
             if o.false or o.hits < len(o.case.expect)]
    assert precision >= 0.9 and recall >= 0.9, "\n".join(wrong)


@pytest.mark.parametrize("held_out", [True, False])
def test_both_halves_hold_up(held_out: bool) -> None:
    precision, recall, _ = measure([c for c in CASES if c.held_out == held_out])
    assert precision >= 0.9 and recall >= 0.9
