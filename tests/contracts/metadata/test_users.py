"""Contract of the Users role: users created once, known and listed with their live keys."""

from __future__ import annotations

from tests.contracts.metadata.helpers import Stores


def test_users_are_created_once_and_keep_their_first_name(stores: Stores) -> None:
    users = stores.users
    assert not users.user_exists("u1")
    users.ensure_user("u1")
    users.ensure_user("u1", "Una")  # fills in a missing name...
    users.ensure_user("u1", "Other")  # ...never overwrites one
    assert users.user_exists("u1")
    assert not users.user_exists("u2")
    assert [(u.user_id, u.display_name) for u in users.list_users()] == [("u1", "Una")]


def test_users_are_listed_with_their_live_keys(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("first", "First")
    users.ensure_user("second")
    k, _ = stores.api_keys.create_api_key("first", "a")
    stores.api_keys.create_api_key("first", "b")
    stores.api_keys.revoke_api_key("first", k.key_id)
    listed = users.list_users()
    assert [(u.user_id, u.display_name, u.active_keys) for u in listed] == [
        ("first", "First", 1), ("second", None, 0)]  # oldest first
    assert listed[0].created_at <= listed[1].created_at
