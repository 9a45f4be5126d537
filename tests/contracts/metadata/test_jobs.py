"""Contract of the JobLedger role: stage transitions, endings, the event log, and who may change a job."""

from __future__ import annotations

import pytest

from secondbrain import ids
from secondbrain.ports import JobView
from secondbrain.stages import FILE_STAGES as STAGES
from tests.contracts.metadata.helpers import (
    Stores,
    document,
    every_transition,
    in_threads,
    run_all_stages,
    submission,
    submit,
    version_of,
)


def test_stage_lifecycle_to_success(stores: Stores) -> None:
    jobs = stores.jobs
    job, _ = submit(stores)
    jobs.stage_started("alice", job, "extract", 1)
    view = jobs.get_job("alice", job)
    assert view is not None and view.status == "running"
    assert view.stages[0].status == "running" and view.stages[0].started_at is not None
    assert view.updated_at > view.created_at
    jobs.stage_succeeded("alice", job, "extract", "12 chars")
    jobs.stage_started("alice", job, "chunk", 1)
    jobs.stage_succeeded("alice", job, "chunk")
    view = jobs.get_job("alice", job)
    assert view is not None and view.status == "running" and view.finished_at is None
    jobs.stage_started("alice", job, "embed", 2)
    jobs.stage_succeeded("alice", job, "embed", "3 chunks")

    view = jobs.get_job("alice", job)
    assert view is not None
    assert view.status == "succeeded" and view.finished_at is not None and view.error is None
    assert [(s.stage, s.status, s.attempts, s.detail) for s in view.stages] == [
        ("extract", "succeeded", 1, "12 chars"),
        ("chunk", "succeeded", 1, None),
        ("embed", "succeeded", 2, "3 chunks"),
    ]
    assert all(s.started_at is not None and s.finished_at is not None and s.started_at <= s.finished_at
               for s in view.stages)
    events = jobs.job_events("alice", job)
    assert [(e["stage"], e["status"], e["attempt"], e["detail"]) for e in events] == [
        ("gateway", "queued", None, None),
        ("extract", "running", 1, None), ("extract", "succeeded", 1, "12 chars"),
        ("chunk", "running", 1, None), ("chunk", "succeeded", 1, None),
        ("embed", "running", 2, None), ("embed", "succeeded", 2, "3 chunks"),
        ("job", "succeeded", None, None),
    ]
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)


def test_a_stage_succeeding_without_having_started(stores: Stores) -> None:
    job, _ = submit(stores)
    stores.jobs.stage_succeeded("alice", job, "extract", "replayed")
    view = stores.jobs.get_job("alice", job)
    assert view is not None and view.status == "running"
    first = view.stages[0]
    assert (first.status, first.attempts, first.detail) == ("succeeded", 0, "replayed")
    assert first.started_at is not None and first.finished_at is not None
    # a later success without detail keeps the one recorded
    stores.jobs.stage_succeeded("alice", job, "extract")
    assert stores.jobs.get_job("alice", job).stages[0].detail == "replayed"  # type: ignore[union-attr]


def test_concurrent_stage_successes_finish_the_job(stores: Stores) -> None:
    job, _ = submit(stores)
    for stage in STAGES:
        stores.jobs.stage_started("alice", job, stage, 1)
    in_threads(len(STAGES), lambda i: stores.jobs.stage_succeeded("alice", job, STAGES[i]))
    view = stores.jobs.get_job("alice", job)
    assert view is not None and view.status == "succeeded"
    assert [e["status"] for e in stores.jobs.job_events("alice", job) if e["stage"] == "job"] == ["succeeded"]


def test_stage_retry_then_failure_with_reason(stores: Stores) -> None:
    jobs = stores.jobs
    job, _ = submit(stores)
    jobs.stage_started("alice", job, "extract", 1)
    jobs.stage_retrying("alice", job, "extract", 1, "timeout")
    view = jobs.get_job("alice", job)
    assert view is not None and view.status == "running"
    assert (view.stages[0].status, view.stages[0].detail) == ("retrying", "timeout")
    jobs.stage_started("alice", job, "extract", 2)
    jobs.job_failed("alice", job, "extract", "unsupported PDF")

    view = jobs.get_job("alice", job)
    assert view is not None
    assert (view.status, view.error) == ("failed", "unsupported PDF")
    assert view.finished_at is not None
    assert [(s.status, s.attempts) for s in view.stages] == [("failed", 2), ("skipped", 0), ("skipped", 0)]
    assert view.stages[0].detail == "unsupported PDF" and view.stages[0].finished_at is not None
    events = jobs.job_events("alice", job)
    assert [(e["stage"], e["status"], e["attempt"]) for e in events][1:] == [
        ("extract", "running", 1), ("extract", "retrying", 1),
        ("extract", "running", 2), ("extract", "failed", 2),
    ]
    assert events[2]["detail"] == "timeout" and events[-1]["detail"] == "unsupported PDF"


def test_a_failure_outside_the_stages_is_the_jobs(stores: Stores) -> None:
    job, _ = submit(stores)
    stores.jobs.job_failed("alice", job, "gateway", "the bytes were refused")
    view = stores.jobs.get_job("alice", job)
    assert view is not None and (view.status, view.error) == ("failed", "the bytes were refused")
    assert [s.status for s in view.stages] == ["skipped"] * len(STAGES)
    last = stores.jobs.job_events("alice", job)[-1]
    assert (last["stage"], last["status"], last["detail"], last["attempt"]) == (
        "gateway", "failed", "the bytes were refused", None)


def test_finished_jobs_do_not_regress(stores: Stores) -> None:
    jobs = stores.jobs
    job, _ = submit(stores)
    run_all_stages(stores, job)
    before = jobs.get_job("alice", job)
    n_events = len(jobs.job_events("alice", job))

    every_transition(stores, "alice", job)

    assert jobs.get_job("alice", job) == before
    assert len(jobs.job_events("alice", job)) == n_events

    failed, _ = submit(stores, n=1)
    jobs.job_failed("alice", failed, "extract", "boom")
    failed_before = jobs.get_job("alice", failed)
    every_transition(stores, "alice", failed)
    assert jobs.get_job("alice", failed) == failed_before
    view = jobs.get_job("alice", failed)
    assert view is not None and (view.status, view.error) == ("failed", "boom")


def test_job_duplicate(stores: Stores) -> None:
    jobs = stores.jobs
    original, art = submit(stores)
    run_all_stages(stores, original)
    dup = ids.job_id("alice", "again")
    assert stores.intake.submit(art, dup, [submission(art, dup)]).created
    jobs.stage_started("alice", dup, "extract", 1)
    jobs.stage_retrying("alice", dup, "chunk", 1, "slow")
    jobs.job_duplicate("alice", dup, original)
    view = jobs.get_job("alice", dup)
    assert view is not None
    assert (view.status, view.duplicate_of, view.error) == ("duplicate", original, None)
    assert view.finished_at is not None
    assert [(s.status, s.detail) for s in view.stages] == [
        ("succeeded", None), ("skipped", f"duplicate of {original}"), ("skipped", f"duplicate of {original}")]
    last = jobs.job_events("alice", dup)[-1]
    assert (last["stage"], last["status"], last["detail"]) == ("job", "duplicate", f"duplicate of {original}")
    jobs.stage_started("alice", dup, "chunk", 1)
    view = jobs.get_job("alice", dup)
    assert view is not None and view.status == "duplicate"


def test_unknown_stage_is_rejected(stores: Stores) -> None:
    job, _ = submit(stores)
    for call in (lambda: stores.jobs.stage_started("alice", job, "nope", 1),
                 lambda: stores.jobs.stage_succeeded("alice", job, "nope"),
                 lambda: stores.jobs.stage_retrying("alice", job, "nope", 1, "x")):
        with pytest.raises(ValueError):
            call()
    assert len(stores.jobs.job_events("alice", job)) == 1


def test_unknown_job_ids_are_noops(stores: Stores) -> None:
    jobs = stores.jobs
    ghost = "00000000-0000-0000-0000-000000000000"
    every_transition(stores, "alice", ghost)
    assert jobs.get_job("alice", ghost) is None
    assert jobs.job_events("alice", ghost) == []
    assert jobs.pending_jobs("alice") == 0


def test_transitions_never_touch_another_users_job(stores: Stores) -> None:
    """An event of Bob's that carries Alice's job id (or document id) changes nothing of hers."""
    job, art = submit(stores, "alice", n=11)
    doc = document(art)
    stores.catalog.save_document(doc)
    before = stores.jobs.get_job("alice", job)
    n_events = len(stores.jobs.job_events("alice", job))
    every_transition(stores, "bob", job)
    stores.catalog.set_chunk_count("bob", doc.document_id, 99)
    assert stores.jobs.get_job("alice", job) == before
    assert len(stores.jobs.job_events("alice", job)) == n_events
    assert stores.jobs.get_job("bob", job) is None
    assert stores.jobs.job_events("bob", job) == []
    got = stores.catalog.get_document("alice", doc.document_id)
    assert got is not None and got.chunk_count == doc.chunk_count


def test_a_job_shows_its_extracted_title(stores: Stores) -> None:
    job, art = submit(stores, title="as submitted")
    assert stores.jobs.get_job("alice", job).title == "as submitted"  # type: ignore[union-attr]
    stores.catalog.save_document(document(art, title="as extracted"))
    assert stores.jobs.get_job("alice", job).title == "as extracted"  # type: ignore[union-attr]


def test_pending_jobs_counts_unfinished_work(stores: Stores) -> None:
    assert stores.jobs.pending_jobs("alice") == 0
    done, _ = submit(stores, "alice", n=1)
    running, _ = submit(stores, "alice", n=2)
    failed, _ = submit(stores, "alice", n=3)
    submit(stores, "bob", n=4)
    stores.jobs.stage_started("alice", running, "extract", 1)
    assert stores.jobs.pending_jobs("alice") == 3
    run_all_stages(stores, done)
    stores.jobs.job_failed("alice", failed, "extract", "x")
    assert stores.jobs.pending_jobs("alice") == 1
    assert stores.jobs.pending_jobs("bob") == 1


def test_find_original_job(stores: Stores) -> None:
    jobs = stores.jobs
    original, art = submit(stores, "alice", n=40)
    again = ids.job_id("alice", "same-bytes")
    stores.intake.submit(art, again, [])
    # Not extracted yet: nothing to be a duplicate of.
    assert jobs.find_original_job("alice", art.artifact_id, again) is None
    assert _view(jobs.get_job("alice", again)).extracted_before is None
    jobs.stage_started("alice", original, "extract", 1)
    stores.catalog.save_document(document(art))
    assert jobs.find_original_job("alice", art.artifact_id, again) == original
    # The job's own view answers the same question (the extractor's admission reads it there).
    assert _view(jobs.get_job("alice", again)).extracted_before == original
    assert jobs.find_original_job("alice", art.artifact_id, original) is None  # never itself (again is queued)
    assert _view(jobs.get_job("alice", original)).extracted_before is None
    assert jobs.find_original_job("bob", art.artifact_id, again) is None
    jobs.job_failed("alice", original, "embed", "boom")
    assert jobs.find_original_job("alice", art.artifact_id, again) is None  # a failed original does not count
    assert _view(jobs.get_job("alice", again)).extracted_before is None


def _view(job: JobView | None) -> JobView:
    assert job is not None
    return job


def test_the_earliest_original_is_found(stores: Stores) -> None:
    first, art = submit(stores, "alice", n=41)
    second = ids.job_id("alice", "second")
    third = ids.job_id("alice", "third")
    stores.intake.submit(art, second, [])
    stores.intake.submit(art, third, [])
    run_all_stages(stores, second)
    stores.jobs.stage_started("alice", first, "extract", 1)
    stores.catalog.save_document(document(art))
    assert stores.jobs.find_original_job("alice", art.artifact_id, third) == first
    stores.jobs.job_failed("alice", first, "chunk", "x")
    assert stores.jobs.find_original_job("alice", art.artifact_id, third) == second


# --------------------------------------------------------------------------- finishing a stage


def test_finishing_every_stage_succeeds_the_job_and_says_done(stores: Stores) -> None:
    job, art = submit(stores)
    stores.catalog.save_document(document(art))
    doc = ids.document_id(art.artifact_id)
    outcomes = [stores.jobs.finish_stage("alice", job, stage, document_id=doc, attempt=2) for stage in STAGES]
    assert outcomes == ["done"] * len(STAGES)
    view = stores.jobs.get_job("alice", job)
    assert view is not None and view.status == "succeeded" and view.finished_at is not None
    assert [(s.status, s.attempts) for s in view.stages] == [("succeeded", 2)] * len(STAGES)
    assert [(e["stage"], e["status"]) for e in stores.jobs.job_events("alice", job)][-2:] == [
        ("embed", "succeeded"), ("job", "succeeded")]
    # a replay of the last stage: still wanted, nothing changes, no event added
    events = len(stores.jobs.job_events("alice", job))
    assert stores.jobs.finish_stage("alice", job, "embed", document_id=doc) == "done"
    assert len(stores.jobs.job_events("alice", job)) == events


def test_finishing_the_stage_of_a_deleted_source_says_gone(stores: Stores) -> None:
    job, art = submit(stores)
    assert stores.jobs.job_state("alice", job) == "live"
    assert stores.lifecycle.delete_source("alice", art.source_id) is not None
    assert stores.jobs.finish_stage("alice", job, "extract") == "gone"
    assert stores.jobs.get_job("alice", job) is None
    assert stores.jobs.job_state("alice", job) == "gone"
    # another user's job id is gone for bob, and left as it was for alice
    other, _ = submit(stores, n=1)
    assert stores.jobs.finish_stage("bob", other, "extract") == "gone"
    assert stores.jobs.job_state("bob", other) == "gone"
    assert stores.jobs.job_state("alice", other) == "live"
    assert stores.jobs.get_job("alice", other).stages[0].status == "pending"  # type: ignore[union-attr]


def test_finishing_work_on_a_replaced_version_says_superseded(stores: Stores) -> None:
    old = version_of("alice", "file:plan.md", "first draft")
    new = version_of("alice", "file:plan.md", "second draft")
    old_job = ids.job_id("alice", "v1")
    new_job = ids.job_id("alice", "v2")
    stores.intake.submit(old, old_job, [submission(old, old_job)])
    stores.intake.submit(new, new_job, [submission(new, new_job)])
    stores.catalog.save_document(document(old))
    stores.catalog.save_document(document(new))  # version 2 of the same source
    assert stores.jobs.finish_stage("alice", old_job, "chunk", document_id=ids.document_id(old.artifact_id)) \
        == "superseded"
    # the newer submission ended the older job already: its stages still to run were skipped
    view = stores.jobs.get_job("alice", old_job)
    assert view is not None and view.status == "superseded" and view.superseded_by == new_job
    assert view.stages[1].status == "skipped"
    assert stores.jobs.finish_stage("alice", new_job, "chunk", document_id=ids.document_id(new.artifact_id)) \
        == "done"
    # a document that was never saved (its artifact went) is not wanted either
    assert stores.jobs.finish_stage("alice", new_job, "embed", document_id="no-such-document") == "superseded"


def test_finishing_a_failed_or_duplicate_job_says_ended(stores: Stores) -> None:
    failed, _ = submit(stores)
    stores.jobs.job_failed("alice", failed, "extract", "unreadable", attempt=3)
    view = stores.jobs.get_job("alice", failed)
    assert view is not None and (view.stages[0].status, view.stages[0].attempts) == ("failed", 3)
    assert stores.jobs.finish_stage("alice", failed, "chunk") == "ended"
    dup, _ = submit(stores, n=1)
    stores.jobs.stage_started("alice", dup, "extract", 1)
    stores.jobs.job_duplicate("alice", dup, failed)
    assert stores.jobs.finish_stage("alice", dup, "chunk") == "ended"
    assert stores.jobs.get_job("alice", dup).status == "duplicate"  # type: ignore[union-attr]


def test_a_key_made_only_the_jobs_noted_for_it_and_the_note_goes_with_the_job(stores: Stores) -> None:
    job, _ = submit(stores)
    other, _ = submit(stores, n=1)
    stores.users.ensure_user("bob")
    bobs_job, _ = submit(stores, user="bob", n=2)
    key, _ = stores.api_keys.create_api_key("alice", "extension", "capture")
    bobs_key, _ = stores.api_keys.create_api_key("bob", "extension", "capture")
    stores.jobs.note_key_job("alice", key.key_id, job)
    stores.jobs.note_key_job("alice", key.key_id, job)  # again: no change
    stores.jobs.note_key_job("alice", key.key_id, bobs_job)  # not alice's job: nothing
    stores.jobs.note_key_job("alice", bobs_key.key_id, job)  # not alice's key: nothing
    assert stores.jobs.made_by_key("alice", key.key_id, job)
    assert not stores.jobs.made_by_key("alice", key.key_id, other)
    assert not stores.jobs.made_by_key("bob", key.key_id, bobs_job)
    assert not stores.jobs.made_by_key("alice", bobs_key.key_id, job)
    assert not stores.jobs.made_by_key("bob", key.key_id, job)  # asked as another user
    stores.lifecycle.delete_source("alice", ids.source_id("alice", "file:///notes/0.md"))
    assert not stores.jobs.made_by_key("alice", key.key_id, job)
