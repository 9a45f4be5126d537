"""Contract of the Lifecycle role: deleting a source (tombstones, shared bytes, copies indexed again)
and erasing a user."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from secondbrain import ids
from secondbrain.ports import DeadLetterRecord, JobNotFailed
from tests.contracts.metadata.helpers import Stores, ingest, unpublished, version_of

MINILM = ("minilm-int8", "all-MiniLM-L6-v2-int8", 384)
OTHER = ("openai:nomic-embed-text", "openai:nomic-embed-text@127.0.0.1:11434", 768)


def test_delete_source_removes_every_version_and_leaves_a_tombstone(stores: Stores) -> None:
    catalog, lifecycle = stores.catalog, stores.lifecycle
    v1, v2 = version_of("alice", "file:plan.md", "plan one"), version_of("alice", "file:plan.md", "plan two")
    jobs = [ingest(stores, v1), ingest(stores, v2)]
    other = ingest(stores, version_of("alice", "file:other.md", "other"))
    bobs = ingest(stores, version_of("bob", "file:plan.md", "plan one"))
    source = v1.source_id
    docs = [ids.document_id(v1.artifact_id), ids.document_id(v2.artifact_id)]
    assert [s.version for s in catalog.list_sources("alice", source_id=source)] == [2, 1]

    assert lifecycle.delete_source("bob", source) is None  # bob's plan.md is another source id
    assert lifecycle.delete_source("alice", "no-such-source") is None
    plan = lifecycle.delete_source("alice", source)
    assert plan is not None
    assert (plan.user_id, plan.source_id) == ("alice", source)
    assert plan.deleted_at is not None
    assert plan.job_ids == sorted(jobs)
    assert plan.document_ids == sorted(docs)
    assert plan.artifact_ids == sorted([v1.artifact_id, v2.artifact_id])
    assert plan.object_keys == sorted([v1.object_key, v2.object_key])
    assert plan.kept_artifact_ids == [] and plan.requeue_job_ids == []
    for job in jobs:
        assert stores.jobs.get_job("alice", job) is None
        assert stores.jobs.job_events("alice", job) == []
    for doc in docs:
        assert catalog.get_document("alice", doc) is None
    for art in (v1, v2):
        assert catalog.get_artifact("alice", art.artifact_id) is None
    assert sorted(unpublished(stores)) == sorted([other.encode(), bobs.encode()])  # their messages went too
    assert catalog.list_sources("alice", source_id=source) == []
    assert [s.job_id for s in catalog.list_sources("alice")] == [other]
    assert [s.job_id for s in catalog.list_sources("bob")] == [bobs]
    assert catalog.get_artifact("bob", version_of("bob", "file:plan.md", "plan one").artifact_id) is not None

    # Until the cleanup outside the store is confirmed, asking again returns what is left to do.
    again = lifecycle.delete_source("alice", source)
    assert again is not None
    assert (again.job_ids, again.document_ids, again.object_keys, again.artifact_ids) == (
        plan.job_ids, plan.document_ids, plan.object_keys, [])
    assert again.deleted_at == plan.deleted_at
    assert lifecycle.source_cleaned("alice", source) == []
    assert lifecycle.delete_source("alice", source) is None
    assert lifecycle.source_cleaned("alice", source) == []
    assert lifecycle.source_cleaned("alice", "no-such-source") == []


def test_deleting_again_before_the_cleanup_adds_to_what_is_left(stores: Stores) -> None:
    v1 = version_of("alice", "file:n.md", "n one")
    first_job = ingest(stores, v1)
    first = stores.lifecycle.delete_source("alice", v1.source_id)
    assert first is not None
    v2 = version_of("alice", "file:n.md", "n two")
    second_job = ingest(stores, v2)  # submitted again before the first cleanup was confirmed
    second = stores.lifecycle.delete_source("alice", v2.source_id)
    assert second is not None and second.deleted_at > first.deleted_at
    assert second.job_ids == sorted([first_job, second_job])
    assert second.object_keys == sorted([v1.object_key, v2.object_key])
    assert second.artifact_ids == [v2.artifact_id]  # removed by this call
    stores.lifecycle.source_cleaned("alice", v2.source_id)
    third_job = ingest(stores, version_of("alice", "file:n.md", "n three"))
    third = stores.lifecycle.delete_source("alice", v2.source_id)
    assert third is not None and third.job_ids == [third_job]  # what was cleaned is not asked again


def test_left_over_work_of_a_deleted_source_is_told_from_new_work(stores: Stores) -> None:
    lifecycle, intake = stores.lifecycle, stores.intake
    before = datetime.now(UTC) - timedelta(seconds=5)
    old = version_of("alice", "file:notes.md", "old notes", submitted_at=before)
    old_job = ingest(stores, old, extract=False)
    assert not lifecycle.source_deleted("alice", old.source_id, old_job, before)
    assert lifecycle.delete_source("alice", old.source_id) is not None
    assert lifecycle.source_deleted("alice", old.source_id, old_job, before)
    assert lifecycle.source_deleted("alice", old.source_id, old_job)  # time unknown: taken as before
    assert lifecycle.source_deleted("alice", old.source_id, None, before)
    assert not lifecycle.source_deleted("bob", old.source_id, old_job, before)
    assert not lifecycle.source_deleted("alice", old.source_id, old_job, datetime.now(UTC) + timedelta(seconds=5))
    # A stage registering the old event cannot bring the job back...
    result = intake.register_external(old, old_job)
    assert (result.created, result.job_id, result.artifact_id) == (False, old_job, old.artifact_id)
    assert stores.jobs.get_job("alice", old_job) is None
    assert stores.catalog.get_artifact("alice", old.artifact_id) is None
    # ...while the same name submitted again is new work.
    new = version_of("alice", "file:notes.md", "new notes")
    new_job = ingest(stores, new, extract=False)
    assert not lifecycle.source_deleted("alice", new.source_id, new_job, new.submitted_at)
    assert not lifecycle.source_deleted("alice", new.source_id, new_job, before)  # the job exists
    later = version_of("alice", "file:notes.md", "from an app", submitted_at=datetime.now(UTC) + timedelta(seconds=1))
    assert intake.register_external(later, ids.job_id("alice", "app-event")).created


def test_shared_bytes_stay_and_copies_are_indexed_again(stores: Stores) -> None:
    outbox, jobs, lifecycle, catalog = stores.outbox, stores.jobs, stores.lifecycle, stores.catalog
    a = version_of("alice", "file:a.md", "same words")
    b = replace(a, source_id=ids.source_id("alice", "file:b.md"), source_uri="file:b.md", filename="b.md")
    ja = ingest(stores, a)
    jb = ingest(stores, b, extract=False)
    jobs.stage_started("alice", jb, "extract", 1)
    jobs.job_duplicate("alice", jb, ja)
    outbox.mark_published([r.id for r in outbox.claim_outbox(100)])
    listed = {s.job_id: s for s in catalog.list_sources("alice")}
    assert (listed[jb].source_id, listed[jb].source_uri) == (b.source_id, "file:b.md")  # its own name

    plan = lifecycle.delete_source("alice", a.source_id)
    assert plan is not None
    assert plan.kept_artifact_ids == [a.artifact_id] and plan.object_keys == [] and plan.artifact_ids == []
    assert plan.job_ids == [ja] and plan.requeue_job_ids == [jb]
    assert plan.document_ids == [ids.document_id(a.artifact_id)]
    art = catalog.get_artifact("alice", a.artifact_id)
    assert art is not None and (art.source_id, art.source_uri) == (b.source_id, "file:b.md")  # renamed
    assert catalog.get_document("alice", ids.document_id(a.artifact_id)) is None
    assert lifecycle.source_cleaned("alice", a.source_id) == [jb]
    job = jobs.get_job("alice", jb)
    assert job is not None and (job.status, job.duplicate_of, job.finished_at, job.error) == (
        "queued", None, None, None)
    assert {(s.status, s.attempts, s.started_at, s.finished_at, s.detail) for s in job.stages} == {
        ("pending", 0, None, None, None)}
    last = jobs.job_events("alice", jb)[-1]
    assert (last["stage"], last["status"]) == ("gateway", "requeued") and last["detail"]
    assert [r.message.value for r in outbox.claim_outbox(100)] == [jb.encode()]  # published again
    assert lifecycle.source_cleaned("alice", a.source_id) == []


def test_a_copy_whose_bytes_expired_is_not_indexed_again(stores: Stores) -> None:
    a = version_of("alice", "file:a.md", "same words")
    b = replace(a, source_id=ids.source_id("alice", "file:b.md"), source_uri="file:b.md")
    ja = ingest(stores, a)
    jb = ingest(stores, b, extract=False)
    stores.jobs.stage_started("alice", jb, "extract", 1)
    stores.jobs.job_duplicate("alice", jb, ja)
    stores.catalog.mark_raw_purged("alice", [a.artifact_id])
    plan = stores.lifecycle.delete_source("alice", a.source_id)
    assert plan is not None and plan.kept_artifact_ids == [a.artifact_id] and plan.requeue_job_ids == []
    assert stores.lifecycle.source_cleaned("alice", a.source_id) == []
    assert stores.jobs.get_job("alice", jb).status == "duplicate"  # type: ignore[union-attr]


def test_erase_user_leaves_nothing_of_theirs(stores: Stores) -> None:
    users, conversations = stores.users, stores.conversations
    ingest(stores, version_of("alice", "file:x.md", "x"))
    bob_job = ingest(stores, version_of("bob", "file:x.md", "x"))
    ingest(stores, version_of("alice", "file:gone.md", "gone"))
    stores.lifecycle.delete_source("alice", ids.source_id("alice", "file:gone.md"))
    conversations.add_turn("alice", "c-alice", "user", "what is x?")
    conversations.add_turn("bob", "c-bob", "user", "what is x?")
    alice_key, alice_secret = stores.api_keys.create_api_key("alice", "laptop")
    stores.api_keys.create_api_key("bob", "laptop")
    link = stores.sessions.create_login_link(alice_key.key_id, 600)
    opened = stores.sessions.open_session(key_secret=alice_secret, ttl_s=600)
    assert opened is not None
    stores.rate_counts.count_request("alice", "act", 60)
    feeds = stores.feed_tokens
    feeds.create("alice", "phone", "Europe/Lisbon")
    feeds.create("bob", "phone", "Europe/Lisbon")
    reminders = stores.reminders
    for who in ("alice", "bob"):
        reminders.put(who, "line-1", "Dentist", "appointment", datetime.now(UTC), datetime.now(UTC), "Europe/Lisbon")
        stores.push_subscriptions.put(who, "https://push.example.invalid/phone", "key", "auth")
    stores.indexes.ensure_active_index("alice", *MINILM)
    stores.indexes.ensure_active_index("bob", *MINILM)
    for n, who in enumerate(("alice", "bob")):
        stores.dead_letters.record_dead_letter(DeadLetterRecord(
            letter_id=f"l{n}", stage="extract", topic="artifacts.submitted", partition=0, offset=n,
            error_kind="unauthorized", error_message="not signed", user_id=who))
    for who in ("alice", "bob"):
        stores.catalog.set_source_tags(who, ids.source_id(who, "file:x.md"), ["letters"])
    alice_jobs = [s.job_id for s in stores.catalog.list_sources("alice") if s.job_id]

    def bobs() -> tuple[object, ...]:
        return (stores.catalog.list_sources("bob"), stores.catalog.list_documents("bob"),
                stores.catalog.list_artifacts("bob"), stores.jobs.job_events("bob", bob_job),
                conversations.get_turns("bob", "c-bob"), stores.api_keys.list_api_keys("bob"),
                stores.indexes.vector_indexes("bob"), stores.dead_letters.list_dead_letters("bob"),
                [f.feed_id for f in feeds.list("bob")], reminders.listed("bob"), stores.catalog.tag_counts("bob"),
                stores.push_subscriptions.listed("bob"))

    bob_before = bobs()
    removed = stores.lifecycle.erase_user("alice")
    assert removed == {
        "api_keys": 1, "artifacts": 1, "conversation_turns": 1, "conversations": 1, "dead_letters": 1,
        "deleted_sources": 1,
        "documents": 1, "feed_tokens": 1, "job_events": 8, "job_stages": 3, "jobs": 1, "outbox": 1,
        "push_subscriptions": 1, "reminders": 1,
        "request_windows": 1, "source_tags": 1, "users": 1, "vector_indexes": 1}
    assert list(removed) == sorted(removed)
    assert bobs() == bob_before
    assert [s.user_id for s in users.list_users()] == ["bob"]
    assert stores.api_keys.authenticate(alice_secret) is None and not users.user_exists("alice")
    assert stores.sessions.authenticate_session(opened[0]) is None
    assert feeds.list("alice") == [] and stores.push_subscriptions.listed("alice") == []
    assert reminders.listed("alice") == [] and reminders.due(datetime.now(UTC)) == reminders.listed("bob")
    assert stores.sessions.open_session(link_token=link, ttl_s=600) is None
    assert stores.api_keys.signing_key(alice_key.key_id) is None
    assert all(stores.jobs.job_events("alice", j) == [] for j in alice_jobs)
    assert [r.message.value for r in stores.outbox.claim_outbox(100)] == [bob_job.encode()]
    assert not stores.lifecycle.source_deleted("alice", ids.source_id("alice", "file:gone.md"), None)
    again = stores.lifecycle.erase_user("alice")  # idempotent
    assert again == dict.fromkeys(removed, 0)
    users.ensure_user("alice")  # the id can be used again, and starts empty
    assert stores.catalog.list_sources("alice") == [] and conversations.get_turns("alice", "c-alice") == []
    assert conversations.list_conversations("alice") == [] and stores.api_keys.list_api_keys("alice") == []
    assert stores.rate_counts.count_request("alice", "act", 60) == 1


def test_erasing_a_user_removes_their_indexes(stores: Stores) -> None:
    stores.users.ensure_user("alice")
    stores.indexes.ensure_active_index("alice", *MINILM)
    stores.indexes.begin_reindex("alice", *OTHER)
    stores.lifecycle.erase_user("alice")
    assert stores.indexes.vector_indexes("alice") == []
    stores.users.ensure_user("alice")  # the same id starts over at v1
    assert stores.indexes.ensure_active_index("alice", *OTHER).version == 1


def test_a_failed_capture_is_listed_once_says_whether_to_retry_and_can_be_removed(stores: Stores) -> None:
    catalog, jobs, lifecycle = stores.catalog, stores.jobs, stores.lifecycle
    good, bad = version_of("alice", "file:plan.md", "plan one"), version_of("alice", "file:plan.md", "plan two")
    kept = ingest(stores, good)
    failed = [ingest(stores, bad, extract=False) for _ in range(3)]  # uploaded, failed, retried twice
    jobs.job_failed("alice", failed[0], "extract", "extract failed: the file is named 'plan.md' but its content is "
                    "a PNG image")
    jobs.job_failed("alice", failed[1], "embed", "embed failed: ConnectError: refused", retryable=True)
    jobs.job_failed("alice", failed[2], "embed", "embed failed: ConnectError: refused", retryable=True)
    other = ingest(stores, version_of("alice", "file:scan.pdf", "not a pdf"), extract=False)
    jobs.job_failed("alice", other, "extract", "extract failed: not a PDF")
    bobs = ingest(stores, version_of("bob", "file:plan.md", "plan two"), extract=False)
    jobs.job_failed("bob", bobs, "extract", "extract failed: broken")

    # Every job is in the history; the list shows each failed file once: its newest try.
    assert len(catalog.list_sources("alice")) == 5
    listed = catalog.list_sources("alice", failed_once=True)
    assert [s.job_id for s in listed] == [other, failed[2], kept]
    assert [s.retryable for s in listed] == [False, True, False]
    assert [s.job_id for s in catalog.list_sources("alice", status="failed", failed_once=True)] == [other, failed[2]]
    view = jobs.get_job("alice", failed[2])
    assert view is not None and view.retryable and not jobs.get_job("alice", failed[0]).retryable  # type: ignore[union-attr]

    # Removing one: not another user's, not a job that has not failed.
    assert lifecycle.remove_failed("bob", failed[2]) is None
    assert lifecycle.remove_failed("alice", "no-such-job") is None
    with pytest.raises(JobNotFailed):
        lifecycle.remove_failed("alice", kept)
    removed = lifecycle.remove_failed("alice", failed[2])
    assert removed is not None and removed.source_id == good.source_id
    assert removed.job_ids == sorted(failed)  # the earlier tries of the same file go with it
    assert removed.artifact_ids == [bad.artifact_id] and removed.object_keys == [bad.object_key]
    assert catalog.get_artifact("alice", bad.artifact_id) is None
    assert catalog.get_artifact("alice", good.artifact_id) is not None  # the version that worked stays
    assert [s.job_id for s in catalog.list_sources("alice")] == [other, kept]
    assert all(jobs.get_job("alice", j) is None for j in failed)
    assert sorted(unpublished(stores)) == sorted(j.encode() for j in (kept, other, bobs))
    # A failed file that shares its bytes with a good one keeps them.
    twin = ingest(stores, replace(good, source_id=ids.source_id("alice", "file:copy.md"), source_uri="file:copy.md"),
                  extract=False)
    jobs.job_failed("alice", twin, "chunk", "chunk failed: boom")
    again = lifecycle.remove_failed("alice", twin)
    assert again is not None and again.job_ids == [twin] and again.object_keys == []
    assert catalog.get_artifact("alice", good.artifact_id) is not None
    assert [s.job_id for s in catalog.list_sources("bob")] == [bobs]
