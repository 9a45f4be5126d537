"""Contract of the Reminders role: one reminder per user and agenda line, moved when asked again, due in
order across users, sent once, each user's own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.contracts.metadata.helpers import REFUSED, Stores

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_a_reminder_per_line_moves_when_asked_again_and_goes_once(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    r = stores.reminders
    dentist = r.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "Europe/Lisbon")
    assert (dentist.user_id, dentist.event_id, dentist.title, dentist.sent_at) == ("alice", "line-1", "Dentist", None)
    train = r.put("bob", "line-9", "Train", "travel", T0, T0 - timedelta(hours=3), "UTC")
    assert [x.reminder_id for x in r.due(T0)] == [train.reminder_id, dentist.reminder_id]  # oldest first
    assert r.due(T0 - timedelta(hours=2)) == [train]
    r.mark_sent(train.reminder_id, T0)
    assert [x.reminder_id for x in r.due(T0)] == [dentist.reminder_id]
    assert r.listed("bob")[0].sent_at == T0
    # The same line again: the same reminder, moved, to be sent again.
    moved = r.put("alice", "line-1", "Dentist", "appointment", T0 + timedelta(days=1), T0 + timedelta(hours=23),
                  "Europe/Lisbon")
    assert moved.reminder_id == dentist.reminder_id and moved.remind_at == T0 + timedelta(hours=23)
    assert [x.reminder_id for x in r.listed("alice")] == [dentist.reminder_id]
    assert r.due(T0) == []
    assert not r.delete("bob", dentist.reminder_id)  # not Bob's
    assert r.delete("alice", dentist.reminder_id) and r.listed("alice") == []
    assert not r.delete("alice", dentist.reminder_id)


def test_a_reminder_needs_a_known_user(stores: Stores) -> None:
    with pytest.raises(REFUSED):
        stores.reminders.put("nobody", "line-1", "x", "event", T0, T0, "UTC")
