"""Contract of the Conversations role: turns in order, each conversation private to its user."""

from __future__ import annotations

import pytest

from secondbrain.ports import ForeignConversation
from tests.contracts.metadata.helpers import REFUSED, Stores


def test_conversation_turns_are_private_and_ordered(stores: Stores) -> None:
    conversations = stores.conversations
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    conv = "conv-1"
    conversations.add_turn("alice", conv, "user", "what did I save about the budget?")
    conversations.add_turn("alice", conv, "assistant", "The travel budget is 4000 euros [1].", {"citations": [1]})
    conversations.add_turn("alice", conv, "user", "and last year?")
    turns = conversations.get_turns("alice", conv)
    assert [(t.role, t.content) for t in turns] == [
        ("user", "what did I save about the budget?"), ("assistant", "The travel budget is 4000 euros [1]."),
        ("user", "and last year?")]
    assert turns[1].meta == {"citations": [1]} and turns[0].meta == {}
    assert [t.created_at for t in turns] == sorted(t.created_at for t in turns)
    assert [t.content for t in conversations.get_turns("alice", conv, limit=1)] == ["and last year?"]
    assert [t.content for t in conversations.get_turns("alice", conv, limit=2)] == [
        "The travel budget is 4000 euros [1].", "and last year?"]
    assert conversations.get_turns("alice", conv, limit=0) == []
    assert conversations.get_turns("bob", conv) == []
    assert conversations.get_turns("alice", "no-such-conversation") == []
    with pytest.raises(ForeignConversation):
        conversations.add_turn("bob", conv, "user", "let me in")
    assert len(conversations.get_turns("alice", conv)) == 3
    assert conversations.list_conversations("bob") == []


def test_conversations_are_listed_oldest_first_with_their_turns(stores: Stores) -> None:
    conversations = stores.conversations
    stores.users.ensure_user("alice")
    for conv, n in (("b-second", 1), ("a-third", 3), ("c-first", 2)):
        for i in range(n):
            conversations.add_turn("alice", conv, "user", f"q{i}")
    # created in that order; a turn added later moves updated_at, not the order
    conversations.add_turn("alice", "b-second", "assistant", "a")
    listed = conversations.list_conversations("alice")
    assert [(c.conversation_id, c.turns) for c in listed] == [("b-second", 2), ("a-third", 3), ("c-first", 2)]
    first = listed[0]
    assert first.created_at < first.updated_at <= conversations.get_turns("alice", "b-second")[-1].created_at


def test_turn_meta_is_kept_as_json(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.conversations.add_turn("alice", "c", "assistant", "x", {"spans": (1, 2), "nested": {"k": None}})
    [turn] = stores.conversations.get_turns("alice", "c")
    assert turn.meta == {"spans": [1, 2], "nested": {"k": None}}


def test_a_conversation_needs_a_known_user_and_a_role(stores: Stores) -> None:
    with pytest.raises(REFUSED):
        stores.conversations.add_turn("nobody", "c", "user", "hello")
    assert stores.conversations.list_conversations("nobody") == []
    stores.users.ensure_user("alice")
    with pytest.raises(REFUSED):
        stores.conversations.add_turn("alice", "c", "system", "hello")  # type: ignore[arg-type]
    assert stores.conversations.get_turns("alice", "c") == []


def test_recent_conversations_come_newest_first_titled_by_their_first_question(stores: Stores) -> None:
    conversations = stores.conversations
    stores.users.ensure_user("alice")
    conversations.add_turn("alice", "older", "user", "what is on the whiteboard?")
    conversations.add_turn("alice", "newer", "user", "when is the dentist?")
    conversations.add_turn("alice", "newer", "assistant", "On the 3rd [1].", {"citations": [1]})
    assert [c.conversation_id for c in conversations.recent_conversations("alice")] == ["newer", "older"]
    conversations.add_turn("alice", "older", "user", "and the launch date?")  # a new turn brings it back up
    listed = conversations.recent_conversations("alice")
    assert [(c.conversation_id, c.title, c.titled, c.turns) for c in listed] == [
        ("older", "what is on the whiteboard?", False, 2), ("newer", "when is the dentist?", False, 2)]
    assert [c.conversation_id for c in conversations.recent_conversations("alice", limit=1)] == ["older"]
    one = conversations.get_conversation("alice", "newer")
    assert one is not None and one.title == "when is the dentist?" and one.turns == 2


def test_only_the_owner_renames_or_deletes_a_conversation(stores: Stores) -> None:
    conversations = stores.conversations
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    conversations.add_turn("alice", "c1", "user", "when is the dentist?")
    conversations.add_turn("alice", "c2", "user", "what is on the whiteboard?")
    # Bob sees Alice's conversation exactly as one that does not exist.
    assert conversations.get_conversation("bob", "c1") is None
    assert conversations.get_conversation("alice", "missing") is None
    assert conversations.rename_conversation("bob", "c1", "mine now") is False
    assert conversations.delete_conversation("bob", "c1") is False
    assert conversations.recent_conversations("bob") == []
    assert conversations.rename_conversation("alice", "missing", "x") is False

    assert conversations.rename_conversation("alice", "c1", "Dentist") is True
    renamed = conversations.get_conversation("alice", "c1")
    assert renamed is not None and (renamed.title, renamed.titled) == ("Dentist", True)
    assert [t.content for t in conversations.get_turns("alice", "c1")] == ["when is the dentist?"]
    assert conversations.rename_conversation("alice", "c1", None) is True  # back to its first question
    assert conversations.get_conversation("alice", "c1").title == "when is the dentist?"  # type: ignore[union-attr]

    assert conversations.delete_conversation("alice", "c1") is True
    assert conversations.get_conversation("alice", "c1") is None and conversations.get_turns("alice", "c1") == []
    assert [c.conversation_id for c in conversations.recent_conversations("alice")] == ["c2"]
    assert conversations.delete_conversation("alice", "c1") is False
    # The id is free again: a new conversation under it starts empty.
    conversations.add_turn("alice", "c1", "user", "a new start")
    assert [t.content for t in conversations.get_turns("alice", "c1")] == ["a new start"]


def test_conversations_are_found_by_their_title_or_any_question(stores: Stores) -> None:
    conversations = stores.conversations
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    conversations.add_turn("alice", "garden", "user", "When did I plant the tulips?")
    conversations.add_turn("alice", "garden", "assistant", "In October [1]; the dentist is unrelated.")
    conversations.add_turn("alice", "garden", "user", "And the 100% organic compost?")
    conversations.add_turn("alice", "trip", "user", "What is the ferry timetable?")
    conversations.rename_conversation("alice", "trip", "Harbour_trip")
    conversations.add_turn("bob", "bobs", "user", "Where are my tulips?")

    def found(words: str, user: str = "alice") -> list[str]:
        return [c.conversation_id for c in conversations.recent_conversations(user, matching=words)]

    assert found("TULIPS") == ["garden"]  # a question, any case
    assert found("compost") == ["garden"]  # a later question too
    assert found("dentist") == []  # answers are not searched
    assert found("harbour_") == ["trip"]  # the title the person gave; "_" is a character, not a wildcard
    assert found("ferry") == ["trip"]  # and its questions still
    assert found("100%") == ["garden"] and found("%") == ["garden"]  # "%" too
    assert found("ha_bour") == []
    assert found("tulips", "bob") == ["bobs"]  # each sees only their own
    assert found("") == ["trip", "garden"]  # nothing typed: all of them
