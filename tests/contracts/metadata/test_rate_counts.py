"""Contract of the RateCounts role: requests counted per user and bucket, and a request's check."""

from __future__ import annotations

from secondbrain.ports import Principal
from tests.contracts.metadata.helpers import Stores, submit


def test_request_windows_count_per_user_and_bucket(stores: Stores) -> None:
    counts = [stores.rate_counts.count_request("alice", "act", 3600) for _ in range(3)]
    assert counts == [1, 2, 3]
    assert stores.rate_counts.count_request("alice", "read", 3600) == 1
    assert stores.rate_counts.count_request("bob", "act", 3600) == 1


def test_a_bucket_with_short_windows_does_not_reset_a_longer_one(stores: Stores) -> None:
    long_window = 10**9  # one window from 2001 to 2033: no boundary falls inside the test
    assert stores.rate_counts.count_request("alice", "daily", long_window) == 1
    for _ in range(300):  # old short windows are pruned now and then on the way
        stores.rate_counts.count_request("alice", "burst", 1)
    assert stores.rate_counts.count_request("alice", "daily", long_window) == 2


def test_a_request_is_authenticated_counted_and_told_the_backlog_at_once(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    info, key = stores.api_keys.create_api_key("alice", "laptop")
    _bob_info, bob_key = stores.api_keys.create_api_key("bob", "phone")
    first = stores.rate_counts.authenticate_request(key=key, bucket="act", window_s=3600)
    assert first is not None
    assert (first.principal, first.hits, first.pending) == (Principal("alice", info.key_id, "user"), 1, 0)
    submit(stores, "alice")  # a queued capture
    again = stores.rate_counts.authenticate_request(key=key, bucket="act", window_s=3600)
    assert again is not None and (again.hits, again.pending) == (2, 1)
    bob = stores.rate_counts.authenticate_request(key=bob_key, bucket="act", window_s=3600)
    assert bob is not None and (bob.principal.user_id, bob.hits, bob.pending) == ("bob", 1, 0)
    # through a web session opened with the key: the same user, the same window
    opened = stores.sessions.open_session(key_secret=key, ttl_s=600)
    assert opened is not None
    by_session = stores.rate_counts.authenticate_request(session=opened[0], bucket="act", window_s=3600)
    assert by_session is not None and (by_session.principal.user_id, by_session.hits) == ("alice", 3)
    # what is not a live key or session counts nothing
    assert stores.rate_counts.authenticate_request(key="sb_nope_nope", bucket="act", window_s=3600) is None
    assert stores.rate_counts.authenticate_request(key="not-a-key", bucket="act", window_s=3600) is None
    assert stores.rate_counts.authenticate_request(session="x" * 40, bucket="act", window_s=3600) is None
    assert stores.rate_counts.authenticate_request(bucket="act", window_s=3600) is None
    stores.api_keys.revoke_api_key("alice", info.key_id)
    assert stores.rate_counts.authenticate_request(key=key, bucket="act", window_s=3600) is None
    assert stores.rate_counts.authenticate_request(session=opened[0], bucket="act", window_s=3600) is None
    assert stores.rate_counts.count_request("alice", "act", 3600) == 4  # refused requests were not counted
