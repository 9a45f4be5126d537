"""Contract of the ApiKeys role: keys stored hashed, scoped, listed and revoked, and signing keys."""

from __future__ import annotations

import hashlib

import pytest

from secondbrain.ports import Principal
from tests.contracts.metadata.helpers import Stores


def test_api_keys_are_hashed_scoped_and_revocable(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    users.ensure_user("bob")
    info, secret = stores.api_keys.create_api_key("alice", "laptop")
    assert secret.startswith(f"sb_{info.key_id}_") and len(secret) > 40
    assert (info.user_id, info.name, info.scope, info.revoked_at) == ("alice", "laptop", "user", None)
    assert stores.api_keys.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert [k.key_id for k in stores.api_keys.list_api_keys("alice")] == [info.key_id]
    assert stores.api_keys.list_api_keys("alice")[0].last_used_at is not None
    assert stores.api_keys.list_api_keys("bob") == []
    assert not stores.api_keys.revoke_api_key("bob", info.key_id)  # not Bob's to revoke
    assert not stores.api_keys.revoke_api_key("alice", "no-such-key")
    assert stores.api_keys.authenticate(secret) == Principal("alice", info.key_id, "user")
    assert stores.api_keys.revoke_api_key("alice", info.key_id)
    assert stores.api_keys.revoke_api_key("alice", info.key_id)  # idempotent
    assert stores.api_keys.authenticate(secret) is None
    assert stores.api_keys.list_api_keys("alice")[0].revoked_at is not None
    for wrong in ("", "sb_", secret[:-1], "Bearer " + secret, "x" * 500, "sb_" + "x" * 300):
        assert stores.api_keys.authenticate(wrong) is None
    with pytest.raises(KeyError):
        stores.api_keys.create_api_key("nobody", "x")


def test_keys_are_listed_newest_first(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    made = [stores.api_keys.create_api_key("alice", f"k{i}")[0] for i in range(3)]
    listed = stores.api_keys.list_api_keys("alice")
    assert [k.key_id for k in listed] == [k.key_id for k in reversed(made)]
    assert [k.created_at for k in listed] == [k.created_at for k in reversed(made)]


def test_key_scopes_and_signing_keys(stores: Stores) -> None:
    users = stores.users
    users.ensure_user("alice")
    admin, admin_secret = stores.api_keys.create_api_key("alice", "ops", "admin")
    producer, producer_secret = stores.api_keys.create_api_key("alice", "calendar app", "producer")
    assert stores.api_keys.authenticate(admin_secret) == Principal("alice", admin.key_id, "admin")
    assert stores.api_keys.authenticate(producer_secret) == Principal("alice", producer.key_id, "producer")
    assert {k.key_id: k.scope for k in stores.api_keys.list_api_keys("alice")} == {admin.key_id: "admin",
                                                                         producer.key_id: "producer"}
    with pytest.raises(ValueError, match="unknown key scope"):
        stores.api_keys.create_api_key("alice", "x", "root")  # type: ignore[arg-type]
    signing = stores.api_keys.signing_key(producer.key_id)
    assert signing is not None and signing.user_id == "alice" and signing.scope == "producer"
    assert signing.secret_hash == hashlib.sha256(producer_secret.encode()).digest()
    assert stores.api_keys.signing_key("nope") is None
    stores.api_keys.revoke_api_key("alice", producer.key_id)
    assert stores.api_keys.signing_key(producer.key_id) is None
