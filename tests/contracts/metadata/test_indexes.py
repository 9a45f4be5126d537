"""Contract of the IndexVersions role: each user's vector index versions and the re-index lease protocol."""

from __future__ import annotations

import pytest

from secondbrain.ports import LeaseLost
from tests.contracts.metadata.helpers import Stores, in_threads, waits_while_held

MINILM = ("minilm-int8", "all-MiniLM-L6-v2-int8", 384)
OTHER = ("openai:nomic-embed-text", "openai:nomic-embed-text@127.0.0.1:11434", 768)


def test_a_users_first_index_is_created_once(stores: Stores) -> None:
    indexes = stores.indexes
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    assert indexes.vector_indexes("alice") == []
    made = in_threads(4, lambda i: indexes.ensure_active_index("alice", *MINILM))
    assert {(i.version, i.status, i.model_id, i.dense_size) for i in made} == {(1, "active", MINILM[1], 384)}
    assert made[0].name == "v1" and made[0].activated_at is not None and made[0].created_at is not None
    assert (made[0].keep_old, made[0].points_done, made[0].points_total, made[0].lease_owner) == (False, 0, None, None)
    assert all(i == made[0] for i in made)
    # once there is one, another model does not replace it (that is what a re-index is for)
    assert indexes.ensure_active_index("alice", *OTHER).model_id == MINILM[1]
    assert [i.version for i in indexes.vector_indexes("alice")] == [1]
    assert indexes.vector_indexes("bob") == []
    indexes.ensure_active_index("bob", *OTHER)
    assert [(i.user_id, i.model) for i in indexes.vector_indexes()] == [("alice", MINILM[0]), ("bob", OTHER[0])]
    assert [i.user_id for i in indexes.vector_indexes(status="active")] == ["alice", "bob"]
    assert indexes.vector_indexes(status="building") == []
    with pytest.raises(LookupError):
        indexes.ensure_active_index("nobody", *MINILM)
    with pytest.raises(ValueError):
        indexes.ensure_active_index("alice", "m", "m", 0)


def test_reindex_builds_under_a_lease_and_switches_atomically(stores: Stores) -> None:
    indexes = stores.indexes
    stores.users.ensure_user("alice")
    stores.users.ensure_user("bob")
    with pytest.raises(LookupError):  # nothing to re-index from
        indexes.begin_reindex("alice", *OTHER)
    indexes.ensure_active_index("alice", *MINILM)
    indexes.ensure_active_index("bob", *MINILM)
    with pytest.raises(ValueError):  # already on that model
        indexes.begin_reindex("alice", *MINILM)
    with pytest.raises(ValueError):
        indexes.begin_reindex("alice", "m", "m", -1)
    building = indexes.begin_reindex("alice", *OTHER)
    assert (building.version, building.status, building.dense_size, building.keep_old) == (2, "building", 768, False)
    assert building.activated_at is None and building.model == OTHER[0]
    again = indexes.begin_reindex("alice", *OTHER, keep_old=True)  # resumed, not a third version
    assert (again.version, again.keep_old) == (2, True)
    assert again == indexes.vector_indexes("alice", status="building")[0]
    with pytest.raises(ValueError):  # one re-index at a time
        indexes.begin_reindex("alice", "openai:other", "openai:other@h", 32)
    # one filler at a time
    claimed = indexes.claim_reindex("alice", 2, "worker-a", 60)
    assert claimed is not None and claimed.lease_owner == "worker-a" and claimed.lease_expires_at is not None
    assert indexes.claim_reindex("alice", 2, "worker-b", 60) is None
    assert indexes.claim_reindex("alice", 2, "worker-a", 60) is not None  # renewing is fine
    assert indexes.claim_reindex("alice", 1, "worker-a", 60) is None  # the active one is not building
    assert indexes.claim_reindex("alice", 9, "worker-a", 60) is None
    assert indexes.claim_reindex("bob", 2, "worker-a", 60) is None
    assert not indexes.reindex_progress("alice", 2, "worker-b", done=5, total=10, resume_from="x", lease_s=60)
    assert indexes.reindex_progress("alice", 2, "worker-a", done=7, total=12, resume_from="p-8", lease_s=60)
    (row,) = indexes.vector_indexes("alice", status="building")
    assert (row.points_done, row.points_total, row.resume_from, row.lease_owner) == (7, 12, "p-8", "worker-a")
    indexes.release_reindex("alice", 2, "worker-b")  # not theirs: ignored
    assert indexes.claim_reindex("alice", 2, "worker-b", 60) is None
    indexes.release_reindex("alice", 2, "worker-a")
    (row,) = indexes.vector_indexes("alice", status="building")
    assert (row.lease_owner, row.lease_expires_at, row.points_done) == (None, None, 7)  # progress kept
    assert indexes.claim_reindex("alice", 2, "worker-b", 60) is not None  # another process continues
    # a lease that ran out is taken over
    assert indexes.claim_reindex("alice", 2, "worker-b", -1) is not None
    assert indexes.claim_reindex("alice", 2, "worker-c", 60) is not None
    with pytest.raises(LookupError):  # Bob has no building index, and Alice's is not his
        indexes.activate_index("bob", 2)
    with pytest.raises(LookupError):
        indexes.activate_index("alice", 1)  # the active one
    retired = indexes.activate_index("alice", 2)
    assert retired is not None and (retired.version, retired.status) == (1, "retired")
    assert retired.retired_at is not None and retired.dropped_at is None
    by_version = {i.version: i for i in indexes.vector_indexes("alice")}
    assert by_version[1] == retired
    assert by_version[2].status == "active" and by_version[2].activated_at is not None
    assert by_version[2].lease_owner is None and by_version[2].lease_expires_at is None
    assert by_version[2].model_id == OTHER[1] and by_version[2].keep_old
    with pytest.raises(LookupError):
        indexes.activate_index("alice", 2)
    assert indexes.claim_reindex("alice", 2, "worker-a", 60) is None  # not building any more
    assert not indexes.reindex_progress("alice", 2, "worker-c", done=1, total=1, resume_from=None, lease_s=60)
    indexes.index_dropped("alice", 1)
    dropped_at = {i.version: i for i in indexes.vector_indexes("alice")}[1].dropped_at
    assert dropped_at is not None
    indexes.index_dropped("alice", 1)  # idempotent: the first time is kept
    indexes.index_dropped("alice", 2)  # the active one: ignored
    by_version = {i.version: i for i in indexes.vector_indexes("alice")}
    assert by_version[1].dropped_at == dropped_at and by_version[2].dropped_at is None
    assert [(i.version, i.status) for i in indexes.vector_indexes("bob")] == [(1, "active")]
    assert [i.version for i in indexes.vector_indexes("alice", status="retired")] == [1]
    # back to the first model: a new version, never a reused number
    assert indexes.begin_reindex("alice", *MINILM).version == 3


def test_a_cancelled_reindex_is_retired_unfinished(stores: Stores) -> None:
    indexes = stores.indexes
    stores.users.ensure_user("alice")
    indexes.ensure_active_index("alice", *MINILM)
    assert indexes.cancel_reindex("alice") is None
    indexes.begin_reindex("alice", *OTHER)
    indexes.claim_reindex("alice", 2, "worker-a", 60)
    cancelled = indexes.cancel_reindex("alice")
    assert cancelled is not None and (cancelled.version, cancelled.status) == (2, "retired")
    assert cancelled.activated_at is None and cancelled.lease_owner is None and cancelled.retired_at is not None
    assert indexes.cancel_reindex("alice") is None
    assert indexes.reindex_progress("alice", 2, "worker-a", done=1, total=1, resume_from=None, lease_s=60) is False
    assert [i.version for i in indexes.vector_indexes("alice", status="active")] == [1]
    assert indexes.begin_reindex("alice", *OTHER).version == 3  # another model may start now


def test_a_reindex_page_holds_back_a_cancel_and_an_erasure_and_none_is_written_after(stores: Stores) -> None:
    indexes = stores.indexes
    stores.users.ensure_user("alice")
    indexes.ensure_active_index("alice", *MINILM)
    indexes.begin_reindex("alice", *OTHER)
    with pytest.raises(LeaseLost), indexes.hold_reindex("alice", 2, "worker-a"):  # not claimed yet
        pytest.fail("a page was written without the lease")
    assert indexes.claim_reindex("alice", 2, "worker-a", 60) is not None
    with indexes.hold_reindex("alice", 2, "worker-a"):
        pass  # the lease holder may write
    with pytest.raises(LeaseLost), indexes.hold_reindex("alice", 2, "worker-b"):
        pytest.fail("another process wrote a page under worker-a's lease")
    waits_while_held(lambda: indexes.hold_reindex("alice", 2, "worker-a"), lambda: indexes.cancel_reindex("alice"))
    with pytest.raises(LeaseLost), indexes.hold_reindex("alice", 2, "worker-a"):
        pytest.fail("a page was written into a cancelled re-index")
    indexes.begin_reindex("alice", *OTHER)
    assert indexes.claim_reindex("alice", 3, "worker-a", 60) is not None
    waits_while_held(lambda: indexes.hold_reindex("alice", 3, "worker-a"),
                     lambda: stores.lifecycle.erase_user("alice"))
    with pytest.raises(LeaseLost), indexes.hold_reindex("alice", 3, "worker-a"):
        pytest.fail("a page was written for an erased user")
    assert indexes.vector_indexes("alice") == []
