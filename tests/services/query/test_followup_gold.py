"""Follow-ups keep to the subject: the gold conversations in tests/gold_followups.py through the rules
(no model), turn by turn as the query service runs them (each turn builds on the one before as understood)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from secondbrain.temporal import parse_time
from services.query.followup import rewrite_followup
from tests.services.query.gold_followups import CONVERSATIONS, Conversation

NOW = datetime(2026, 11, 18, 12, tzinfo=UTC)
TZ = ZoneInfo("Europe/Paris")


def test_the_gold_suite_has_two_and_three_turn_conversations_of_every_kind() -> None:
    assert len(CONVERSATIONS) >= 40
    follow_ups = [t for conv in CONVERSATIONS for t in conv.turns[1:]]
    assert {len(conv.turns) for conv in CONVERSATIONS} == {2, 3}
    assert any(t.carry and t.time for t in follow_ups) and any(t.carry and not t.time for t in follow_ups)
    assert any(not t.carry and t.time for t in follow_ups) and any(not t.carry and not t.time for t in follow_ups)


@pytest.mark.parametrize("conv", CONVERSATIONS, ids=[c.name for c in CONVERSATIONS])
def test_a_follow_up_carries_what_it_points_at_and_nothing_else(conv: Conversation) -> None:
    asked: list[str] = []
    for turn in conv.turns:
        f = rewrite_followup(turn.question, asked, None, NOW, TZ)
        s = f.standalone
        assert (f.carried is not None) == turn.carry, (turn.question, s)
        if not turn.carry:
            assert s == turn.question  # a fresh question is searched as written
        for word in turn.has:
            assert word.casefold() in s.casefold(), (turn.question, s)
        for word in turn.lacks:
            assert word.casefold() not in s.casefold(), (turn.question, s)
        window = parse_time(s, NOW, TZ)
        assert (window.expression if window else None) == turn.time, (turn.question, s)
        if f.carried is not None:
            assert f.carried.why and f.carried.source == asked[-1]
            assert f.carried.time == (turn.time if turn.time and turn.time.casefold() not in
                                      turn.question.casefold() else None), (turn.question, f.carried)
        asked.append(s)
