"""Contract of the FeedTokens role: calendar feed tokens stored hashed, listed, revoked, and the feed a
token opens."""

from __future__ import annotations

import pytest

from tests.contracts.metadata.helpers import REFUSED, Stores


def test_a_feed_token_opens_its_feed_until_revoked(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    feeds = stores.feed_tokens
    feed, token = feeds.create("alice", "phone", "Europe/Lisbon")
    assert token.startswith(f"sbf_{feed.feed_id}_") and len(token) > 40
    assert (feed.user_id, feed.name, feed.timezone, feed.last_used_at, feed.revoked_at) == (
        "alice", "phone", "Europe/Lisbon", None, None)
    opened = feeds.authenticate(token)
    assert opened is not None and (opened.feed_id, opened.user_id, opened.timezone) == (
        feed.feed_id, "alice", "Europe/Lisbon")
    assert opened.last_used_at is not None
    assert [f.feed_id for f in feeds.list("alice")] == [feed.feed_id]
    assert feeds.list("alice")[0].last_used_at is not None
    assert feeds.list("bob") == []
    assert not feeds.revoke("bob", feed.feed_id)  # not Bob's to revoke
    assert not feeds.revoke("alice", "no-such-feed")
    assert feeds.authenticate(token) is not None
    assert feeds.revoke("alice", feed.feed_id)
    revoked_at = feeds.list("alice")[0].revoked_at
    assert revoked_at is not None
    assert feeds.revoke("alice", feed.feed_id)  # idempotent: the first revocation's time stays
    assert feeds.list("alice")[0].revoked_at == revoked_at
    assert feeds.authenticate(token) is None


def test_malformed_and_unknown_tokens_open_nothing(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    _, token = stores.feed_tokens.create("alice", "phone", "UTC")
    for wrong in ("", "sbf_", token[:-1], "Bearer " + token, "x" * 500, "sbf_" + "x" * 300, token.replace(
            "sbf_", "sb_", 1)):
        assert stores.feed_tokens.authenticate(wrong) is None


def test_feeds_are_listed_newest_first_and_need_a_known_user(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    made = [stores.feed_tokens.create("alice", f"f{i}", "UTC")[0] for i in range(3)]
    listed = stores.feed_tokens.list("alice")
    assert [f.feed_id for f in listed] == [f.feed_id for f in reversed(made)]
    assert [f.created_at for f in listed] == [f.created_at for f in reversed(made)]
    with pytest.raises(REFUSED):
        stores.feed_tokens.create("nobody", "phone", "UTC")
