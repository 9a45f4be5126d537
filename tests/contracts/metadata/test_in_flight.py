"""Contract of the metadata roles while work is in flight: a job's state only moves forward, a newer submission
ends the older jobs of its source, the job fence orders the stages' writes against deletions, erasures and
newer submissions, an erased user id stays erased until it is created again, and an answer that quoted a
deleted source loses its text."""

from __future__ import annotations

from dataclasses import replace

import pytest

from secondbrain import ids
from secondbrain.ports import DELETED_ANSWER, DeadLetterRecord, JobGone, UnknownUser
from tests.contracts.metadata.helpers import (
    Stores,
    document,
    ingest,
    submission,
    submit,
    version_of,
    waits_while_held,
)

# --------------------------------------------------------------------------- progress only moves forward


def test_a_progress_write_landing_after_the_stage_finished_changes_nothing(stores: Stores) -> None:
    """The LoCoMo hang: a stage's "running" write, sent when it took long, arrived after the stage's own
    finish and set it back to running for good (the job then never finished)."""
    job, _ = submit(stores)
    jobs = stores.jobs
    assert jobs.finish_stage("alice", job, "extract") == "done"
    events = len(jobs.job_events("alice", job))
    jobs.stage_started("alice", job, "extract", 1)  # late
    jobs.stage_retrying("alice", job, "extract", 2, "late retry notice")  # late too
    view = jobs.get_job("alice", job)
    assert view is not None
    extract = view.stages[0]
    assert (extract.stage, extract.status, extract.finished_at is not None) == ("extract", "succeeded", True)
    assert len(jobs.job_events("alice", job)) == events  # nothing recorded
    jobs.finish_stage("alice", job, "chunk")
    jobs.finish_stage("alice", job, "embed")
    view = jobs.get_job("alice", job)
    assert view is not None and view.status == "succeeded"
    assert stores.jobs.pending_jobs("alice") == 0


def test_job_state_says_live_ended_or_gone(stores: Stores) -> None:
    job, art = submit(stores)
    assert stores.jobs.job_state("alice", job) == "live"
    assert stores.jobs.job_state("bob", job) == "gone"  # another user's job is none of bob's
    stores.jobs.job_failed("alice", job, "extract", "unreadable")
    assert stores.jobs.job_state("alice", job) == "ended"
    stores.lifecycle.delete_source("alice", art.source_id)
    assert stores.jobs.job_state("alice", job) == "gone"


# --------------------------------------------------------------------------- a newer submission supersedes


def test_a_newer_submission_of_a_source_ends_its_older_unfinished_jobs(stores: Stores) -> None:
    uploads = [version_of("alice", "file:same-name.txt", f"content {n}") for n in range(5)]
    jobs = [ids.job_id("alice", f"upload-{n}") for n in range(5)]
    stores.intake.submit(uploads[0], jobs[0], [submission(uploads[0], jobs[0])])
    stores.jobs.stage_started("alice", jobs[0], "extract", 1)
    for art, job in zip(uploads[1:], jobs[1:], strict=True):
        stores.intake.submit(art, job, [submission(art, job)])
    views = [stores.jobs.get_job("alice", j) for j in jobs]
    assert [v.status for v in views if v] == ["superseded"] * 4 + ["queued"]
    assert [v.superseded_by for v in views if v] == [*jobs[1:], None]
    first = views[0]
    assert first is not None and first.finished_at is not None
    assert {s.status for s in first.stages} == {"skipped"}
    assert stores.jobs.pending_jobs("alice") == 1  # superseded jobs free their slot
    assert ("job", "superseded") in [(e["stage"], e["status"]) for e in stores.jobs.job_events("alice", jobs[0])]
    # finished jobs stay as they are: a new version does not touch what is done
    stores.jobs.finish_stage("alice", jobs[4], "extract")
    stores.jobs.finish_stage("alice", jobs[4], "chunk")
    stores.jobs.finish_stage("alice", jobs[4], "embed")
    newest = version_of("alice", "file:same-name.txt", "content 5")
    stores.intake.submit(newest, ids.job_id("alice", "upload-5"), [submission(newest, "upload-5")])
    assert stores.jobs.get_job("alice", jobs[4]).status == "succeeded"  # type: ignore[union-attr]
    # a restart resumes only the job still wanted
    assert stores.outbox.requeue_unfinished() == 1


def test_the_same_bytes_again_leave_the_job_in_flight_running(stores: Stores) -> None:
    """The same content uploaded again under the same name: the new job ends as a duplicate of (or shares
    the document of) the one in flight; that one is not stopped."""
    art = version_of("alice", "file:plan.md", "same")
    first, second = ids.job_id("alice", "a"), ids.job_id("alice", "b")
    stores.intake.submit(art, first, [])
    stores.intake.submit(replace(art, title="again"), second, [])
    assert stores.jobs.job_state("alice", first) == "live"


def test_a_superseded_job_can_no_longer_save_its_document_nor_record_it_indexed(stores: Stores) -> None:
    old = version_of("alice", "file:notes.txt", "older")
    new = version_of("alice", "file:notes.txt", "newer")
    old_job, new_job = ids.job_id("alice", "old"), ids.job_id("alice", "new")
    stores.intake.submit(old, old_job, [])
    assert stores.catalog.save_document(document(old), job_id=old_job) == 1  # saved while live
    stores.intake.submit(new, new_job, [])
    with pytest.raises(JobGone) as info:
        stores.catalog.document_indexed("alice", ids.document_id(old.artifact_id), old.source_id, 3, job_id=old_job)
    assert info.value.state == "ended"
    assert stores.catalog.save_document(document(new), job_id=new_job) == 2
    with pytest.raises(JobGone):
        stores.catalog.save_document(document(old), job_id=old_job)  # its replay: the older bytes stay older
    assert stores.catalog.get_document("alice", ids.document_id(new.artifact_id)).version == 2  # type: ignore[union-attr]
    assert stores.catalog.document_indexed("alice", ids.document_id(new.artifact_id), new.source_id, 2,
                                           job_id=new_job) == [ids.document_id(old.artifact_id)]
    with pytest.raises(JobGone) as gone:
        stores.catalog.save_document(document(old), job_id=ids.job_id("alice", "never"))
    assert gone.value.state == "gone"


# --------------------------------------------------------------------------- the fence


def test_a_deletion_waits_for_a_write_under_the_fence_and_none_starts_after(stores: Stores) -> None:
    job, art = submit(stores)
    waits_while_held(lambda: stores.fence.hold("alice", job),
                     lambda: stores.lifecycle.delete_source("alice", art.source_id))
    with pytest.raises(JobGone) as info, stores.fence.hold("alice", job):
        pytest.fail("the fence of a deleted job let a write through")
    assert info.value.state == "gone"


def test_an_erasure_and_a_newer_submission_wait_for_the_fence_too(stores: Stores) -> None:
    job, _ = submit(stores)
    newer = version_of("alice", "file:///notes/0.md", "rewritten")
    waits_while_held(lambda: stores.fence.hold("alice", job),
                     lambda: stores.intake.submit(newer, ids.job_id("alice", "newer"), []))
    with pytest.raises(JobGone) as info, stores.fence.hold("alice", job):
        pytest.fail("the fence of a replaced job let a write through")
    assert info.value.state == "ended"
    other, _ = submit(stores, n=1)
    waits_while_held(lambda: stores.fence.hold("alice", other), lambda: stores.lifecycle.erase_user("alice"))
    with pytest.raises(JobGone), stores.fence.hold("alice", other):
        pytest.fail("the fence of an erased user's job let a write through")


def test_the_fence_refuses_another_users_job(stores: Stores) -> None:
    job, _ = submit(stores)
    with pytest.raises(JobGone), stores.fence.hold("bob", job):
        pytest.fail("bob held alice's job")


def test_the_fences_of_several_jobs_held_at_once_say_which_may_be_written_for(stores: Stores) -> None:
    live, _ = submit(stores)
    failed, _ = submit(stores, n=1)
    deleted, art = submit(stores, n=2)
    stores.jobs.job_failed("alice", failed, "extract", "unreadable")
    stores.lifecycle.delete_source("alice", art.source_id)
    never = ids.job_id("alice", "never submitted")
    with stores.fence.hold_live("alice", [live, failed, deleted, never, live]) as states:
        assert states == {live: "live", failed: "ended", deleted: "gone", never: "gone"}
    with stores.fence.hold_live("bob", [live]) as states:
        assert states == {live: "gone"}  # another user's job is none of bob's


def test_a_deletion_waits_for_the_fences_held_at_once_too(stores: Stores) -> None:
    other, _ = submit(stores)
    job, art = submit(stores, n=1)
    waits_while_held(lambda: stores.fence.hold_live("alice", [other, job]),
                     lambda: stores.lifecycle.delete_source("alice", art.source_id))
    with stores.fence.hold_live("alice", [other, job]) as states:
        assert states == {other: "live", job: "gone"}
    waits_while_held(lambda: stores.fence.hold_live("alice", [job, other]),
                     lambda: stores.lifecycle.erase_user("alice"))
    with stores.fence.hold_live("alice", [other]) as states:
        assert states == {other: "gone"}


# --------------------------------------------------------------------------- erased users


def test_an_erased_user_is_not_created_again_by_work_in_flight(stores: Stores) -> None:
    submit(stores)
    stores.lifecycle.erase_user("alice")
    assert not stores.users.user_exists("alice")
    late = version_of("alice", "file:late.md", "a late upload")
    with pytest.raises(UnknownUser):
        stores.intake.submit(late, ids.job_id("alice", "late"), [submission(late, "late")])
    with pytest.raises(UnknownUser):
        stores.intake.register_external(late, ids.job_id("alice", "late-event"))
    assert not stores.users.user_exists("alice")
    assert stores.catalog.list_sources("alice") == []
    letter = DeadLetterRecord(letter_id="l1", stage="embed", topic="t", partition=0, offset=1,
                              error_kind="permanent", error_message="late", event_id=None, user_id="alice",
                              key_id=None, job_id=None, producer=None)
    assert stores.dead_letters.record_dead_letter(letter) is False
    assert stores.dead_letters.list_dead_letters(None) == []
    # someone who was never erased still gets letters (an unknown user's refused event)
    assert stores.dead_letters.record_dead_letter(replace(letter, letter_id="l2", user_id="zed")) is True
    # an administrator creating the id again: it starts empty, and works
    stores.users.ensure_user("alice")
    assert stores.catalog.list_sources("alice") == []
    assert stores.intake.submit(late, ids.job_id("alice", "late"), []).created


# --------------------------------------------------------------------------- answers quoting a deleted source


def test_deleting_a_source_removes_its_text_from_the_answers_that_quoted_it(stores: Stores) -> None:
    _, secret = submit(stores, n=1)
    _, kept = submit(stores, n=2)
    stores.conversations.add_turn("alice", "c1", "user", "what is the alarm code?")
    stores.conversations.add_turn("alice", "c1", "assistant", "The alarm code is 4711 [1].", {
        "citations": [1], "extractive": {"answer": "The alarm code is 4711", "citations": [1]},
        "answer_markdown": "The alarm code is **4711** [1].", "quotes": [{"n": 1, "link": "/v1/artifacts/a/raw"}],
        "standalone": "alarm code 4711?",
        "sources": [{"n": 1, "source_id": secret.source_id, "title": "secret.md", "snippet": "alarm code is 4711"},
                    {"n": 2, "source_id": kept.source_id, "title": "other.md", "snippet": "the garden"}]})
    stores.conversations.add_turn("alice", "c1", "user", "and the garden?")
    stores.conversations.add_turn("alice", "c1", "assistant", "Water it on Mondays [1].", {
        "sources": [{"n": 1, "source_id": kept.source_id, "title": "other.md", "snippet": "the garden"}]})
    stores.lifecycle.delete_source("alice", secret.source_id)
    turns = stores.conversations.get_turns("alice", "c1")
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    redacted = turns[1]
    assert redacted.content == DELETED_ANSWER
    assert "4711" not in repr(redacted.meta) and "secret.md" not in repr(redacted.meta)
    assert redacted.meta["source_deleted"] is True
    assert redacted.meta["sources"][0]["deleted"] is True and redacted.meta["sources"][0]["n"] == 1
    assert redacted.meta["sources"][1]["title"] == "other.md"  # the other source stays as shown
    assert turns[3].content == "Water it on Mondays [1]."  # an answer that did not quote it stays


def test_an_answer_written_while_its_source_was_deleted_is_stored_without_its_text(stores: Stores) -> None:
    """The question was answered from the source, the person deleted it before the answer was kept:
    the answer is kept as the deletion would have left it, unless the source was captured again."""
    secret = version_of("alice", "file:///notes/secret.md", "The alarm code is 4711.")
    garden = version_of("alice", "file:///notes/garden.md", "Water the garden on Mondays.")
    ingest(stores, secret)
    ingest(stores, garden)
    shown = [{"n": 1, "source_id": secret.source_id, "title": "secret.md", "snippet": "alarm code is 4711"},
             {"n": 2, "source_id": garden.source_id, "title": "garden.md", "snippet": "the garden"}]
    stores.lifecycle.delete_source("alice", secret.source_id)  # while the answer was being written
    stores.conversations.add_turn("alice", "c1", "user", "what is the alarm code?")
    stores.conversations.add_turn("alice", "c1", "assistant", "The alarm code is 4711 [1].", {
        "citations": [1], "answer_markdown": "The alarm code is **4711** [1].", "sources": shown})
    late = stores.conversations.get_turns("alice", "c1")[-1]
    assert late.content == DELETED_ANSWER and "4711" not in repr(late.meta)
    assert late.meta["sources"][0]["deleted"] is True and late.meta["sources"][1]["title"] == "garden.md"
    # captured again (a new version of the same note): answers quoting it are kept as written
    ingest(stores, version_of("alice", "file:///notes/secret.md", "The alarm code is now 9000."))
    stores.conversations.add_turn("alice", "c2", "assistant", "The alarm code is now 9000 [1].", {
        "sources": [{**shown[0], "snippet": "alarm code is now 9000"}]})
    assert stores.conversations.get_turns("alice", "c2")[-1].content == "The alarm code is now 9000 [1]."
    # an answer quoting only sources that are still there is kept as written
    stores.conversations.add_turn("alice", "c3", "assistant", "Water the garden on Mondays [2].",
                                  {"sources": shown[1:]})
    assert stores.conversations.get_turns("alice", "c3")[-1].content == "Water the garden on Mondays [2]."
