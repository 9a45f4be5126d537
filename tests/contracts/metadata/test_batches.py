"""Contract of the metadata roles' batch calls: each says, for every item of a batch, what its one-item call says,
and one item that cannot be written leaves the others written (the pipeline's stages and the import route take
many events or captures at once)."""

from __future__ import annotations

from dataclasses import replace

from secondbrain import ids
from secondbrain.ports import ArtifactGone, JobGone
from tests.contracts.metadata.helpers import Stores, artifact, document, submission, submit, version_of


def test_job_states_read_many_jobs_as_job_state_reads_one(stores: Stores) -> None:
    live, _ = submit(stores, n=1)
    ended, _ = submit(stores, n=2)
    stores.jobs.job_failed("alice", ended, "extract", "unreadable")
    never = ids.job_id("alice", "never")
    states = stores.jobs.job_states("alice", [live, ended, never, live])
    assert states == {live: "live", ended: "ended", never: "gone"}
    assert stores.jobs.job_states("bob", [live]) == {live: "gone"}  # another user's job is none of bob's
    assert stores.jobs.get_jobs("alice", [live, never]).keys() == {live}
    view = stores.jobs.get_jobs("alice", [live])[live]
    assert view == stores.jobs.get_job("alice", live)


def test_finishing_a_stage_of_many_jobs_says_what_became_of_each(stores: Stores) -> None:
    done, art = submit(stores, n=1)
    failed, _ = submit(stores, n=2)
    stores.jobs.job_failed("alice", failed, "extract", "unreadable")
    gone = ids.job_id("alice", "never")
    old = version_of("alice", "file:plan.md", "first")
    old_job = ids.job_id("alice", "old")
    assert stores.intake.submit(old, old_job, [submission(old, old_job)]).created
    stores.catalog.save_document(document(old), job_id=old_job)
    newer = version_of("alice", "file:plan.md", "second")
    newer_job = ids.job_id("alice", "newer")
    assert stores.intake.submit(newer, newer_job, [submission(newer, newer_job)]).created
    stores.catalog.save_document(document(newer))  # a newer version of the source: the old document is replaced
    outcomes = stores.jobs.finish_stages("alice", "extract", [
        (done, None, 1), (failed, None, 1), (gone, None, 1), (old_job, ids.document_id(old.artifact_id), 2)])
    assert outcomes == {done: "done", failed: "ended", gone: "gone", old_job: "superseded"}
    view = stores.jobs.get_job("alice", done)
    assert view is not None and {s.stage: s.status for s in view.stages}["extract"] == "succeeded"
    stores.jobs.stages_started("alice", "chunk", [done, failed])
    view = stores.jobs.get_job("alice", done)
    assert view is not None and {s.stage: s.status for s in view.stages}["chunk"] == "running"
    failed_view = stores.jobs.get_job("alice", failed)
    assert failed_view is not None and failed_view.status == "failed"  # an ended job is not set running
    assert art.user_id == "alice"


def test_finishing_every_stage_of_many_jobs_at_once_ends_them_as_one_by_one(stores: Stores) -> None:
    """The batch write and the one-job write leave the same jobs and the same event logs: each stage succeeds with
    the most attempts it took, and the job succeeds with its last stage (after it, in its log)."""
    alone, _ = submit(stores, n=1)
    together = [submit(stores, n=2)[0], submit(stores, n=3)[0]]
    for stage in ("fetch", "extract", "chunk", "embed"):
        stores.jobs.finish_stage("alice", alone, stage, attempt=2)
        assert stores.jobs.finish_stages("alice", stage, [(job, None, 2) for job in together]) == {
            job: "done" for job in together}
    assert stores.jobs.finish_stages("bob", "embed", [(together[0], None, 1)]) == {together[0]: "gone"}

    def log(job: str) -> list[tuple[str, str, int | None]]:
        return [(e["stage"], e["status"], e["attempt"]) for e in stores.jobs.job_events("alice", job)]

    for job in together:
        view, expected = stores.jobs.get_job("alice", job), stores.jobs.get_job("alice", alone)
        assert view is not None and expected is not None and view.status == expected.status == "succeeded"
        assert [(s.stage, s.status, s.attempts) for s in view.stages] == [
            (s.stage, s.status, s.attempts) for s in expected.stages]
        assert log(job) == log(alone) and log(job)[-1] == ("job", "succeeded", None)


def test_many_documents_saved_at_once_each_as_one_alone(stores: Stores) -> None:
    first, a1 = submit(stores, n=1)
    second, a2 = submit(stores, n=2)
    ended, a3 = submit(stores, n=3)
    stores.jobs.job_failed("alice", ended, "extract", "unreadable")
    saved = stores.catalog.save_documents([(document(a1), first), (document(a2), second), (document(a3), ended)])
    assert saved[:2] == [1, 1]
    assert isinstance(saved[2], JobGone) and saved[2].state == "ended"
    assert stores.catalog.get_document("alice", ids.document_id(a3.artifact_id)) is None
    again = stores.catalog.save_documents([(document(a1), first)])
    assert again == [1]  # a replay keeps its version
    gone = artifact("alice", 9)  # never registered: its artifact is not there
    lost = stores.catalog.save_documents([(document(a2), second), (document(gone), None)])
    assert lost[0] == 1 and isinstance(lost[1], ArtifactGone)
    recorded = stores.catalog.documents_indexed("alice", [
        (ids.document_id(a1.artifact_id), a1.source_id, 3, first),
        (ids.document_id(a3.artifact_id), a3.source_id, 2, ended)])
    assert recorded[0] == [] and isinstance(recorded[1], JobGone)
    doc = stores.catalog.get_document("alice", ids.document_id(a1.artifact_id))
    assert doc is not None and doc.chunk_count == 3


def test_two_versions_of_a_source_saved_in_one_batch_are_numbered_in_order(stores: Stores) -> None:
    """A batch holding two versions of one source numbers them as one by one would (the later after the earlier),
    beside a document of another source."""
    first = version_of("alice", "file:list.md", "eggs")
    second = version_of("alice", "file:list.md", "eggs and milk")
    _, other = submit(stores, n=5)
    jobs = [ids.job_id("alice", "v1"), ids.job_id("alice", "v2")]
    for art, job in zip((first, second), jobs, strict=True):
        assert stores.intake.submit(art, job, [submission(art, job)]).created
    assert stores.catalog.save_documents([(document(first), None), (document(second), None),
                                          (document(other), None)]) == [1, 2, 1]
    # saved again: replays, which keep their versions
    assert stores.catalog.save_documents([(document(first), None), (document(other), None)]) == [1, 1]


def test_tags_added_to_many_sources_at_once(stores: Stores) -> None:
    _, a1 = submit(stores, n=1)
    _, a2 = submit(stores, n=2)
    stores.catalog.set_source_tags("alice", a1.source_id, ["home"])
    stores.catalog.add_source_tags("alice", {a1.source_id: ["garden"], a2.source_id: ["pantry", "home"]})
    assert stores.catalog.source_tags("alice", [a1.source_id, a2.source_id]) == {
        a1.source_id: ["garden", "home"], a2.source_id: ["home", "pantry"]}


def test_many_captures_filed_at_once_each_as_one_alone(stores: Stores) -> None:
    arts = [artifact("alice", n) for n in range(3)]
    jobs = [ids.job_id("alice", f"batch-{n}") for n in range(3)]
    results = stores.intake.submit_many([(a, j, [submission(a, j)], None) for a, j in zip(arts, jobs, strict=True)])
    assert [r.created for r in results if not isinstance(r, Exception)] == [True, True, True]
    assert stores.jobs.pending_jobs("alice") == 3
    again = stores.intake.submit_many([(arts[0], jobs[0], [submission(arts[0], jobs[0])], None),
                                       (replace(arts[1], title="other"), ids.job_id("alice", "batch-new"),
                                        [submission(arts[1], ids.job_id("alice", "batch-new"))], None)])
    assert not isinstance(again[0], Exception) and again[0].created is False  # filed before: nothing written
    assert not isinstance(again[1], Exception) and again[1].created is True


def test_a_batch_of_documents_made_searchable_records_only_those_whose_jobs_still_run(stores: Stores) -> None:
    """Documents of distinct sources recorded searchable at once (one statement on Postgres): a document whose job
    has finished meanwhile (succeeded, or failed) keeps its row as it was, and says why; the others are recorded,
    and each supersedes the older versions of its own source only."""
    older = version_of("alice", "file:///notes/1.md", "the first version")  # an older version of a1's source
    older_job = ids.job_id("alice", "older")
    assert stores.intake.submit(older, older_job, [submission(older, older_job)]).created
    stores.catalog.save_document(document(older), job_id=older_job)
    stores.catalog.document_indexed("alice", ids.document_id(older.artifact_id), older.source_id, 1)
    live, a1 = submit(stores, n=1)
    done, a2 = submit(stores, n=2)
    failed, a3 = submit(stores, n=3)
    for art, job in ((a1, live), (a2, done), (a3, failed)):
        stores.catalog.save_document(document(art), job_id=job)
    for stage in ("fetch", "extract", "chunk", "embed"):
        stores.jobs.finish_stage("alice", done, stage, attempt=1)
    stores.jobs.job_failed("alice", failed, "chunk", "unreadable")
    recorded = stores.catalog.documents_indexed("alice", [
        (ids.document_id(a1.artifact_id), a1.source_id, 4, live),
        (ids.document_id(a2.artifact_id), a2.source_id, 7, done),
        (ids.document_id(a3.artifact_id), a3.source_id, 5, failed)])
    assert recorded[0] == [ids.document_id(older.artifact_id)]
    assert isinstance(recorded[1], JobGone) and isinstance(recorded[2], JobGone)
    counts = {d.document_id: d.chunk_count for d in stores.catalog.list_documents("alice")}
    assert counts[ids.document_id(a1.artifact_id)] == 4
    assert counts[ids.document_id(a2.artifact_id)] is None and counts[ids.document_id(a3.artifact_id)] is None
    assert stores.catalog.is_superseded("alice", ids.document_id(older.artifact_id))
    assert not stores.catalog.is_superseded("alice", ids.document_id(a2.artifact_id))
