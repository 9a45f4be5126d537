"""Contract of the Sessions role: one-time sign-in links and the web sessions they and keys open."""

from __future__ import annotations

import pytest

from secondbrain.ports import Principal
from tests.contracts.metadata.helpers import Stores


def test_a_login_link_opens_one_session_acting_as_its_key(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, _ = stores.api_keys.create_api_key("alice", "laptop")
    token = stores.sessions.create_login_link(info.key_id, 600)
    opened = stores.sessions.open_session(link_token=token, ttl_s=3600)
    assert opened is not None
    secret, principal = opened
    assert principal == Principal("alice", info.key_id, "user")
    assert stores.sessions.authenticate_session(secret) == principal
    assert stores.sessions.open_session(link_token=token, ttl_s=3600) is None  # used up
    keys = stores.api_keys
    assert keys.authenticate(token) is None and keys.authenticate(secret) is None  # neither is a key
    assert stores.sessions.authenticate_session(token) is None
    stores.sessions.close_session(secret)
    stores.sessions.close_session(secret)  # idempotent
    assert stores.sessions.authenticate_session(secret) is None


def test_a_key_opens_sessions_and_revoking_it_ends_them(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, key = stores.api_keys.create_api_key("alice", "laptop")
    other, other_key = stores.api_keys.create_api_key("alice", "phone")
    opened = stores.sessions.open_session(key_secret=key, ttl_s=3600)
    assert opened is not None and opened[1] == Principal("alice", info.key_id, "user")
    kept = stores.sessions.open_session(key_secret=other_key, ttl_s=3600)
    assert kept is not None
    unused = stores.sessions.create_login_link(info.key_id, 600)
    stores.api_keys.revoke_api_key("alice", info.key_id)
    assert stores.sessions.authenticate_session(opened[0]) is None
    assert stores.sessions.open_session(link_token=unused, ttl_s=3600) is None
    assert stores.sessions.open_session(key_secret=key, ttl_s=3600) is None
    assert stores.sessions.authenticate_session(kept[0]) == Principal("alice", other.key_id, "user")  # another key's
    with pytest.raises(KeyError):
        stores.sessions.create_login_link(info.key_id, 600)  # revoked
    with pytest.raises(KeyError):
        stores.sessions.create_login_link("no-such-key", 600)


def test_expired_links_and_sessions_do_not_sign_in(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    info, key = stores.api_keys.create_api_key("alice", "laptop")
    expired = stores.sessions.create_login_link(info.key_id, -1)
    assert stores.sessions.open_session(link_token=expired, ttl_s=3600) is None
    opened = stores.sessions.open_session(key_secret=key, ttl_s=-1)
    assert opened is not None
    assert stores.sessions.authenticate_session(opened[0]) is None


def test_what_cannot_open_a_session(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    producer, producer_secret = stores.api_keys.create_api_key("alice", "app", "producer")
    assert stores.sessions.open_session(key_secret=producer_secret, ttl_s=3600) is None  # producers only sign events
    link = stores.sessions.create_login_link(producer.key_id, 600)
    assert stores.sessions.open_session(link_token=link, ttl_s=3600) is None
    assert stores.sessions.open_session(ttl_s=3600) is None
    for wrong in ("", "sb_nope", "x" * 500):
        assert stores.sessions.open_session(key_secret=wrong, ttl_s=3600) is None
        assert stores.sessions.open_session(link_token=wrong, ttl_s=3600) is None
        assert stores.sessions.authenticate_session(wrong) is None
