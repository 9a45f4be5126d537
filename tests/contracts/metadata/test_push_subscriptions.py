"""Contract of the PushSubscriptions role: one subscription per user and browser (its push endpoint), new keys
when the browser subscribes again, each user's own."""

from __future__ import annotations

import pytest

from tests.contracts.metadata.helpers import REFUSED, Stores

PHONE = "https://push.example.invalid/send/phone"
LAPTOP = "https://push.example.invalid/send/laptop"


def test_a_subscription_per_browser_is_each_users_own(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    p = stores.push_subscriptions
    phone = p.put("alice", PHONE, "p256dh-1", "auth-1")
    assert (phone.user_id, phone.endpoint, phone.p256dh, phone.auth) == ("alice", PHONE, "p256dh-1", "auth-1")
    laptop = p.put("alice", LAPTOP, "p256dh-2", "auth-2")
    # The same browser again: the same subscription, its new keys.
    again = p.put("alice", PHONE, "p256dh-3", "auth-3")
    assert again.subscription_id == phone.subscription_id and (again.p256dh, again.auth) == ("p256dh-3", "auth-3")
    assert [s.endpoint for s in p.listed("alice")] == [PHONE, LAPTOP]
    # Bob subscribing at the same endpoint (a shared browser) keeps his own; Alice's are not his to see or remove.
    bobs = p.put("bob", PHONE, "p256dh-b", "auth-b")
    assert bobs.subscription_id != phone.subscription_id and p.listed("bob") == [bobs]
    assert not p.delete("bob", laptop.subscription_id)
    assert p.delete("alice", laptop.subscription_id) and [s.endpoint for s in p.listed("alice")] == [PHONE]
    assert not p.delete("alice", laptop.subscription_id)
    assert p.listed("alice")[0].p256dh == "p256dh-3"


def test_a_subscription_needs_a_known_user(stores: Stores) -> None:
    with pytest.raises(REFUSED):
        stores.push_subscriptions.put("nobody", PHONE, "k", "a")
