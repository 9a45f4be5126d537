"""Contract of the Intake role: submissions, external artifacts, URL requests and their idempotency."""

from __future__ import annotations

from dataclasses import replace

import pytest

from secondbrain import ids
from secondbrain.ports import IdempotencyConflict, OutboxMessage
from secondbrain.stages import FILE_STAGES as STAGES
from tests.contracts.metadata.helpers import (
    REFUSED,
    SUBMITTED,
    Stores,
    artifact,
    in_threads,
    submission,
    submit,
    unpublished,
)


def test_submit_creates_job_stages_outbox_and_event(stores: Stores) -> None:
    job, art = submit(stores, title="Notes")
    assert stores.users.user_exists("alice")
    view = stores.jobs.get_job("alice", job)
    assert view is not None
    assert (view.job_id, view.user_id, view.status, view.artifact_id, view.title, view.source_uri) == (
        job, "alice", "queued", art.artifact_id, "Notes", art.source_uri)
    assert [s.stage for s in view.stages] == list(STAGES)
    assert all(s.status == "pending" and s.attempts == 0 and s.started_at is None for s in view.stages)
    assert view.finished_at is None and view.error is None and view.duplicate_of is None
    assert view.created_at == view.updated_at
    events = stores.jobs.job_events("alice", job)
    assert [(e["stage"], e["status"], e["detail"], e["attempt"]) for e in events] == [
        ("gateway", "queued", None, None)]
    assert set(events[0]) == {"stage", "status", "detail", "attempt", "at"}
    [row] = stores.outbox.claim_outbox(10)
    assert (row.message, row.attempts) == (submission(art, job), 0)
    assert row.message.topic == SUBMITTED
    stored = stores.catalog.get_artifact("alice", art.artifact_id)
    assert stored is not None
    assert stored == art  # every field as submitted, the attributes included


def test_duplicate_job_id_is_idempotent(stores: Stores) -> None:
    job, art = submit(stores)
    before = stores.jobs.get_job("alice", job)
    again = stores.intake.submit(art, job, [submission(art, job), submission(art, job)])
    assert (again.created, again.job_id, again.artifact_id) == (False, job, art.artifact_id)
    assert unpublished(stores) == [job.encode()]
    assert [s.job_id for s in stores.catalog.list_sources("alice")] == [job]
    assert stores.jobs.get_job("alice", job) == before
    assert len(stores.jobs.job_events("alice", job)) == 1


def test_an_idempotency_key_reused_with_other_content_is_refused(stores: Stores) -> None:
    art = artifact()
    job = ids.job_id("alice", "idem-1")
    assert stores.intake.submit(art, job, [submission(art, job)], request_hash="h1").created
    assert not stores.intake.submit(art, job, [submission(art, job)], request_hash="h1").created
    assert not stores.intake.submit(art, job, [], request_hash=None).created  # nothing to compare with
    other = artifact(n=1)
    with pytest.raises(IdempotencyConflict):
        stores.intake.submit(other, job, [submission(other, job)], request_hash="h2")
    assert stores.catalog.get_artifact("alice", other.artifact_id) is None  # the refused content left nothing
    assert unpublished(stores) == [job.encode()]
    # A job made without a hash is never in conflict.
    plain = ids.job_id("alice", "idem-2")
    assert stores.intake.submit(art, plain, []).created
    assert not stores.intake.submit(art, plain, [], request_hash="h3").created

    url_job = ids.job_id("alice", "idem-url")
    msg = OutboxMessage(topic="sb.urls.requested", key=b"alice", value=b"req")
    assert stores.intake.request_url("alice", url_job, "https://example.org/", None, [msg], request_hash="u1").created
    assert not stores.intake.request_url("alice", url_job, "https://example.org/", None, [msg],
                                         request_hash="u1").created
    with pytest.raises(IdempotencyConflict):
        stores.intake.request_url("alice", url_job, "https://example.org/other", None, [msg], request_hash="u2")


def test_concurrent_duplicate_submits_create_one_job(stores: Stores) -> None:
    art = artifact()
    job = ids.job_id("alice", "same")
    results = in_threads(4, lambda i: stores.intake.submit(art, job, [submission(art, job)]))
    assert sorted(r.created for r in results) == [False, False, False, True]
    assert unpublished(stores) == [job.encode()]
    assert len(stores.catalog.list_artifacts("alice")) == 1
    assert len(stores.jobs.job_events("alice", job)) == 1


def test_same_artifact_twice_keeps_one_artifact(stores: Stores) -> None:
    art = artifact()
    j1, j2 = ids.job_id("alice", "a"), ids.job_id("alice", "b")
    assert stores.intake.submit(art, j1, [submission(art, j1)]).created
    assert stores.intake.submit(art, j2, [submission(art, j2)]).created
    assert [a.artifact_id for a in stores.catalog.list_artifacts("alice")] == [art.artifact_id]
    assert sorted(s.job_id or "" for s in stores.catalog.list_sources("alice")) == sorted([j1, j2])
    assert unpublished(stores) == [j1.encode(), j2.encode()]


def test_failed_submit_leaves_nothing(stores: Stores) -> None:
    art = artifact()
    job = ids.job_id("alice", "bad")
    bad = OutboxMessage(topic="", key=b"k", value=b"v")  # an outbox message needs a topic
    with pytest.raises(REFUSED):
        stores.intake.submit(art, job, [submission(art, job), bad])
    assert not stores.users.user_exists("alice")
    assert stores.jobs.get_job("alice", job) is None
    assert stores.catalog.get_artifact("alice", art.artifact_id) is None
    assert stores.outbox.claim_outbox(10) == []
    with pytest.raises(REFUSED):
        stores.intake.submit(replace(art, size_bytes=-1), job, [submission(art, job)])
    assert stores.jobs.get_job("alice", job) is None
    # The store is still usable and the same submission now succeeds.
    assert stores.intake.submit(art, job, [submission(art, job)]).created


def test_register_external_has_no_outbox(stores: Stores) -> None:
    art = artifact("bob")
    job = ids.job_id("bob", "ext")
    result = stores.intake.register_external(art, job)
    assert (result.created, result.job_id, result.artifact_id) == (True, job, art.artifact_id)
    assert not stores.intake.register_external(art, job).created
    assert stores.outbox.claim_outbox(10) == []
    view = stores.jobs.get_job("bob", job)
    assert view is not None and view.status == "queued" and [s.stage for s in view.stages] == list(STAGES)
    assert [(e["stage"], e["status"]) for e in stores.jobs.job_events("bob", job)] == [("gateway", "queued")]


def test_a_job_never_shows_another_users_artifact(stores: Stores) -> None:
    """Bob registering a job against Alice's artifact id does not reveal her artifact's metadata."""
    _, alice_art = submit(stores, "alice", n=12, title="alice's secret plan")
    bob_job = ids.job_id("bob", "borrowed-artifact")
    stores.intake.register_external(replace(alice_art, user_id="bob", title=None, source_uri="app:x"), bob_job)
    view = stores.jobs.get_job("bob", bob_job)
    assert view is None or view.title != "alice's secret plan"
    assert all(s.title != "alice's secret plan" for s in stores.catalog.list_sources("bob"))
    assert stores.catalog.get_artifact("bob", alice_art.artifact_id) is None
    assert stores.catalog.list_artifacts("bob") == []
    got = stores.catalog.get_artifact("alice", alice_art.artifact_id)
    assert got is not None and got.title == "alice's secret plan"


def test_url_job_has_no_artifact_until_fetched(stores: Stores) -> None:
    job = ids.job_id("alice", "url-1")
    msg = OutboxMessage(topic="sb.urls.requested", key=b"alice", value=b"req", headers=())
    result = stores.intake.request_url("alice", job, "https://example.org/post", "A post", [msg])
    assert (result.created, result.job_id, result.artifact_id) == (True, job, "")
    assert not stores.intake.request_url("alice", job, "https://example.org/post", "A post", [msg]).created
    view = stores.jobs.get_job("alice", job)
    assert view is not None
    assert (view.artifact_id, view.source_uri, view.title, view.status) == (
        None, "https://example.org/post", "A post", "queued")
    assert [s.stage for s in view.stages] == ["fetch", "extract", "chunk", "embed"]
    [listed] = stores.catalog.list_sources("alice")
    assert (listed.job_id, listed.artifact_id, listed.source_uri, listed.status, listed.content_type,
            listed.size_bytes) == (job, None, "https://example.org/post", "queued", "", 0)
    # The source of a URL is the URL without its fragment.
    assert listed.source_id == ids.source_id("alice", "https://example.org/post")
    assert unpublished(stores) == [b"req"]

    # Another user cannot attach an artifact to Alice's job.
    page = replace(artifact("bob", 1), source_uri="https://example.org/post")
    assert not stores.intake.attach_artifact(page, job)
    assert stores.catalog.get_artifact("bob", page.artifact_id) is None
    assert stores.jobs.get_job("alice", job).artifact_id is None  # type: ignore[union-attr]
    assert not stores.intake.attach_artifact(artifact("alice", 9), ids.job_id("alice", "no-such-job"))

    fetched = replace(artifact("alice", 1), source_uri="https://example.org/post")
    assert stores.intake.attach_artifact(fetched, job)
    view = stores.jobs.get_job("alice", job)
    assert view is not None and (view.artifact_id, view.title) == (fetched.artifact_id, "A post")
    assert stores.catalog.get_artifact("alice", fetched.artifact_id) == fetched
    # A URL job succeeds only when all four stages have.
    for stage in ["fetch", "extract", "chunk"]:
        stores.jobs.stage_started("alice", job, stage, 1)
        stores.jobs.stage_succeeded("alice", job, stage)
        assert stores.jobs.get_job("alice", job).status == "running"  # type: ignore[union-attr]
    stores.jobs.stage_succeeded("alice", job, "embed")
    assert stores.jobs.get_job("alice", job).status == "succeeded"  # type: ignore[union-attr]


def test_a_url_with_a_fragment_is_the_same_source(stores: Stores) -> None:
    one, two = ids.job_id("alice", "frag-1"), ids.job_id("alice", "frag-2")
    stores.intake.request_url("alice", one, "https://example.org/page", None, [])
    stores.intake.request_url("alice", two, "https://example.org/page#part-2", None, [])
    sources = {s.job_id: s.source_id for s in stores.catalog.list_sources("alice")}
    assert sources[one] == sources[two] == ids.source_id("alice", "https://example.org/page")
