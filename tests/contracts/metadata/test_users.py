"""Contract of the Users role: users, API keys, sign-in links, web sessions and request windows."""

from __future__ import annotations

import hashlib

import pytest

from secondbrain.ports import Principal
from tests.contracts.metadata.helpers import Stores, submit


def test_users_are_created_once_and_keep_their_first_name(stores: Stores) -> None:
    users = stores.users
    assert not users.user_exists("u1")
    users.ensure_user("u1")
    users.ensure_user("u1", "Una")  # fills in a missing name...
    users.ensure_user("u1", "Other")  # ...never overwrites one
    assert users.user_exists("u1")
    assert not users.user_exists("u2")
    assert [(u.user_id, u.display_name) for u in users.list_users()] == [("u1", "Una")]


def test_api_keys_are_hashed_scoped_and_revocable(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    users.ensure_user("bob")
    info, secret = users.create_api_key("alice", "laptop")
    assert secret.startswith(f"sb_{info.key_id}_") and len(secret) > 40
    assert (info.user_id, info.name, info.scope, info.revoked_at) == ("alice", "laptop", "user", None)
    assert users.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert [k.key_id for k in users.list_api_keys("alice")] == [info.key_id]
    assert users.list_api_keys("alice")[0].last_used_at is not None
    assert users.list_api_keys("bob") == []
    assert not users.revoke_api_key("bob", info.key_id)  # not Bob's to revoke
    assert not users.revoke_api_key("alice", "no-such-key")
    assert users.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert users.revoke_api_key("alice", info.key_id)
    assert users.revoke_api_key("alice", info.key_id)  # idempotent
    assert users.authenticate(secret) is None
    assert users.list_api_keys("alice")[0].revoked_at is not None
    for wrong in ("", "sb_", secret[:-1], "Bearer " + secret, "x" * 500, "sb_" + "x" * 300):
        assert users.authenticate(wrong) is None
    with pytest.raises(KeyError):
        users.create_api_key("nobody", "x")


def test_keys_are_listed_newest_first(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    made = [stores.users.create_api_key("alice", f"k{i}")[0] for i in range(3)]
    listed = stores.users.list_api_keys("alice")
    assert [k.key_id for k in listed] == [k.key_id for k in reversed(made)]
    assert [k.created_at for k in listed] == [k.created_at for k in reversed(made)]


def test_key_scopes_and_signing_keys(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    admin, admin_secret = users.create_api_key("alice", "ops", "admin")
    producer, producer_secret = users.create_api_key("alice", "calendar app", "producer")
    assert users.authenticate(admin_secret) == Principal("alice", admin.key_id, "admin")
    assert users.authenticate(producer_secret) == Principal("alice", producer.key_id, "producer")
    assert {k.key_id: k.scope for k in users.list_api_keys("alice")} == {admin.key_id: "admin",
                                                                         producer.key_id: "producer"}
    with pytest.raises(ValueError, match="unknown key scope"):
        users.create_api_key("alice", "x", "root")  # type: ignore[arg-type]
    signing = users.signing_key(producer.key_id)
    assert signing is not None and signing.user_id == "alice" and signing.scope == "producer"
    assert signing.secret_hash == hashlib.sha256(producer_secret.encode()).digest()
    assert users.signing_key("nope") is None
    users.revoke_api_key("alice", producer.key_id)
    assert users.signing_key(producer.key_id) is None


def test_users_are_listed_with_their_live_keys(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("first", "First")
    users.ensure_user("second")
    k, _ = users.create_api_key("first", "a")
    users.create_api_key("first", "b")
    users.revoke_api_key("first", k.key_id)
    listed = users.list_users()
    assert [(u.user_id, u.display_name, u.active_keys) for u in listed] == [
        ("first", "First", 1), ("second", None, 0)]  # oldest first
    assert listed[0].created_at <= listed[1].created_at


def test_a_login_link_opens_one_session_acting_as_its_key(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, _ = users.create_api_key("alice", "laptop")
    token = users.create_login_link(info.key_id, 600)
    opened = users.open_session(link_token=token, ttl_s=3600)
    assert opened is not None
    secret, principal = opened
    assert principal == Principal("alice", info.key_id, "user")
    assert users.authenticate_session(secret) == principal
    assert users.open_session(link_token=token, ttl_s=3600) is None  # used up
    assert users.authenticate(token) is None and users.authenticate(secret) is None  # neither is a key
    assert users.authenticate_session(token) is None
    users.close_session(secret)
    users.close_session(secret)  # idempotent
    assert users.authenticate_session(secret) is None


def test_a_key_opens_sessions_and_revoking_it_ends_them(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, key = users.create_api_key("alice", "laptop")
    other, other_key = users.create_api_key("alice", "phone")
    opened = users.open_session(key_secret=key, ttl_s=3600)
    assert opened is not None and opened[1] == Principal("alice", info.key_id, "user")
    kept = users.open_session(key_secret=other_key, ttl_s=3600)
    assert kept is not None
    unused = users.create_login_link(info.key_id, 600)
    users.revoke_api_key("alice", info.key_id)
    assert users.authenticate_session(opened[0]) is None
    assert users.open_session(link_token=unused, ttl_s=3600) is None
    assert users.open_session(key_secret=key, ttl_s=3600) is None
    assert users.authenticate_session(kept[0]) == Principal("alice", other.key_id, "user")  # another key's
    with pytest.raises(KeyError):
        users.create_login_link(info.key_id, 600)  # revoked
    with pytest.raises(KeyError):
        users.create_login_link("no-such-key", 600)


def test_expired_links_and_sessions_do_not_sign_in(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, key = users.create_api_key("alice", "laptop")
    expired = users.create_login_link(info.key_id, -1)
    assert users.open_session(link_token=expired, ttl_s=3600) is None
    opened = users.open_session(key_secret=key, ttl_s=-1)
    assert opened is not None
    assert users.authenticate_session(opened[0]) is None


def test_what_cannot_open_a_session(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    producer, producer_secret = users.create_api_key("alice", "app", "producer")
    assert users.open_session(key_secret=producer_secret, ttl_s=3600) is None  # producers only sign events
    assert users.open_session(link_token=users.create_login_link(producer.key_id, 600), ttl_s=3600) is None
    assert users.open_session(ttl_s=3600) is None
    for wrong in ("", "sb_nope", "x" * 500):
        assert users.open_session(key_secret=wrong, ttl_s=3600) is None
        assert users.open_session(link_token=wrong, ttl_s=3600) is None
        assert users.authenticate_session(wrong) is None


def test_request_windows_count_per_user_and_bucket(stores: Stores) -> None:
    users = stores.users
    counts = [users.count_request("alice", "act", 3600) for _ in range(3)]
    assert counts == [1, 2, 3]
    assert users.count_request("alice", "read", 3600) == 1
    assert users.count_request("bob", "act", 3600) == 1


def test_a_bucket_with_short_windows_does_not_reset_a_longer_one(stores: Stores) -> None:
    users = stores.users
    long_window = 10**9  # one window from 2001 to 2033: no boundary falls inside the test
    assert users.count_request("alice", "daily", long_window) == 1
    for _ in range(300):  # old short windows are pruned now and then on the way
        users.count_request("alice", "burst", 1)
    assert users.count_request("alice", "daily", long_window) == 2


def test_a_request_is_authenticated_counted_and_told_the_backlog_at_once(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    users.ensure_user("bob")
    info, key = users.create_api_key("alice", "laptop")
    _bob_info, bob_key = users.create_api_key("bob", "phone")
    first = users.authenticate_request(key=key, bucket="act", window_s=3600)
    assert first is not None
    assert (first.principal, first.hits, first.pending) == (Principal("alice", info.key_id, "user"), 1, 0)
    submit(stores, "alice")  # a queued capture
    again = users.authenticate_request(key=key, bucket="act", window_s=3600)
    assert again is not None and (again.hits, again.pending) == (2, 1)
    bob = users.authenticate_request(key=bob_key, bucket="act", window_s=3600)
    assert bob is not None and (bob.principal.user_id, bob.hits, bob.pending) == ("bob", 1, 0)
    # through a web session opened with the key: the same user, the same window
    opened = users.open_session(key_secret=key, ttl_s=600)
    assert opened is not None
    by_session = users.authenticate_request(session=opened[0], bucket="act", window_s=3600)
    assert by_session is not None and (by_session.principal.user_id, by_session.hits) == ("alice", 3)
    # what is not a live key or session counts nothing
    assert users.authenticate_request(key="sb_nope_nope", bucket="act", window_s=3600) is None
    assert users.authenticate_request(key="not-a-key", bucket="act", window_s=3600) is None
    assert users.authenticate_request(session="x" * 40, bucket="act", window_s=3600) is None
    assert users.authenticate_request(bucket="act", window_s=3600) is None
    users.revoke_api_key("alice", info.key_id)
    assert users.authenticate_request(key=key, bucket="act", window_s=3600) is None
    assert users.authenticate_request(session=opened[0], bucket="act", window_s=3600) is None
    assert users.count_request("alice", "act", 3600) == 4  # refused requests were not counted
