"""The dead letters role: what a producer reads about its refused events, scoped to whom it concerns."""

from __future__ import annotations

from secondbrain.ports import DeadLetterRecord
from tests.contracts.metadata.helpers import Stores


def letter(n: int, *, user: str | None, key: str | None = None, kind: str = "unauthorized") -> DeadLetterRecord:
    return DeadLetterRecord(letter_id=f"l{n}", stage="extract", topic="artifacts.submitted", partition=0, offset=n,
                            error_kind=kind, error_message=f"refusal {n}", event_id=f"e{n}", user_id=user,
                            key_id=key, job_id=None, producer="app:calendar")


def test_a_user_sees_letters_naming_them_or_signed_with_their_keys_newest_first(stores: Stores) -> None:
    for user in ("alice", "bob"):
        stores.users.ensure_user(user)
    alice_key, _ = stores.api_keys.create_api_key("alice", "calendar", "producer")
    stores.dead_letters.record_dead_letter(letter(1, user="alice"))
    stores.dead_letters.record_dead_letter(letter(2, user="bob"))
    # Signed with Alice's key but naming Bob: Alice's app sent it, so Alice sees why it was refused.
    stores.dead_letters.record_dead_letter(letter(3, user="bob", key=alice_key.key_id))
    stores.dead_letters.record_dead_letter(letter(4, user=None, kind="malformed"))

    alice = stores.dead_letters.list_dead_letters("alice")
    assert [d.event_id for d in alice] == ["e3", "e1"]
    assert alice[1].error_message == "refusal 1" and alice[1].producer == "app:calendar"
    assert alice[0].failed_at is not None and alice[0].failed_at >= alice[1].failed_at  # type: ignore[operator]
    assert [d.event_id for d in stores.dead_letters.list_dead_letters("bob")] == ["e3", "e2"]
    assert stores.dead_letters.list_dead_letters("carol") == []
    assert [d.event_id for d in stores.dead_letters.list_dead_letters(None)] == ["e4", "e3", "e2", "e1"]
    assert [d.event_id for d in stores.dead_letters.list_dead_letters(None, limit=2)] == ["e4", "e3"]


def test_the_same_letter_twice_is_kept_once(stores: Stores) -> None:
    stores.dead_letters.record_dead_letter(letter(1, user="alice"))
    stores.dead_letters.record_dead_letter(letter(1, user="alice"))
    assert len(stores.dead_letters.list_dead_letters(None)) == 1


def test_erasing_a_user_removes_the_letters_naming_them(stores: Stores) -> None:
    for user in ("alice", "bob"):
        stores.users.ensure_user(user)
    stores.dead_letters.record_dead_letter(letter(1, user="alice"))
    stores.dead_letters.record_dead_letter(letter(2, user="bob"))
    removed = stores.lifecycle.erase_user("alice")
    assert removed["dead_letters"] == 1
    assert [d.event_id for d in stores.dead_letters.list_dead_letters(None)] == ["e2"]
