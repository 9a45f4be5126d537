"""Contract of the Outbox role: leases, publishing, giving rows back and requeueing unfinished work."""

from __future__ import annotations

from secondbrain import ids
from secondbrain.ports import OutboxMessage
from tests.contracts.metadata.helpers import (
    SUBMITTED,
    Stores,
    artifact,
    in_threads,
    run_all_stages,
    submission,
    submit,
)


def test_claim_roundtrips_messages_in_id_order(stores: Stores) -> None:
    jobs = [submit(stores, n=i)[0] for i in range(3)]
    rows = stores.outbox.claim_outbox(10)
    assert [r.message.value for r in rows] == [j.encode() for j in jobs]
    assert rows == sorted(rows, key=lambda r: r.id)
    first = rows[0]
    assert first.attempts == 0
    assert first.message.topic == SUBMITTED
    assert list(first.message.headers) == [("job_id", jobs[0].encode()), ("bin", b"\x00\xff")]
    assert isinstance(first.message.key, bytes) and isinstance(first.message.value, bytes)


def test_messages_of_one_submission_keep_their_order(stores: Stores) -> None:
    art = artifact()
    job = ids.job_id("alice", "several")
    messages = [OutboxMessage(topic=f"t{i}", key=b"k", value=str(i).encode(), headers=(("h", b"1"), ("h", b"2")))
                for i in range(5)]
    stores.intake.submit(art, job, messages)
    rows = stores.outbox.claim_outbox(10)
    assert [r.message for r in rows] == messages  # repeated headers kept, in order


def test_claim_lease_publish_release(stores: Stores) -> None:
    outbox = stores.outbox
    for i in range(3):
        submit(stores, n=i)
    first = outbox.claim_outbox(2)
    assert len(first) == 2
    second = outbox.claim_outbox(2)
    assert [r.id for r in second] == [max(r.id for r in first) + 1]  # leased rows are skipped
    assert outbox.claim_outbox(5) == []

    outbox.mark_published([first[0].id])
    outbox.release_outbox([first[1].id], "broker down")
    again = outbox.claim_outbox(5)
    assert [(r.id, r.attempts) for r in again] == [(first[1].id, 1)]
    outbox.release_outbox([first[1].id], "still down")
    assert [(r.id, r.attempts) for r in outbox.claim_outbox(5)] == [(first[1].id, 2)]

    outbox.mark_published([first[1].id] + [r.id for r in second])
    outbox.release_outbox([first[0].id], "late")  # releasing a published row changes nothing
    outbox.mark_published([first[0].id])  # nor does publishing it again
    assert outbox.claim_outbox(5) == []
    outbox.mark_published([])
    outbox.release_outbox([], "nothing")
    outbox.mark_published([10_000])  # unknown ids are ignored
    outbox.release_outbox([10_000], "unknown")
    assert outbox.claim_outbox(0) == []
    assert outbox.claim_outbox(5) == []


def test_a_claim_marks_the_previous_batch_published_first(stores: Stores) -> None:
    outbox = stores.outbox
    for i in range(2):
        submit(stores, n=i)
    # A lease already run out: unless marked published, these rows would be claimed again at once.
    first = outbox.claim_outbox(5, lease_seconds=-1)
    assert len(first) == 2
    submit(stores, n=2)
    then = outbox.claim_outbox(5, published=[r.id for r in first])
    assert [r.id for r in then] == [max(r.id for r in first) + 1]  # only the new row
    assert outbox.claim_outbox(5, lease_seconds=-1, published=[r.id for r in then]) == []
    assert outbox.claim_outbox(0, published=[then[0].id]) == []
    assert outbox.claim_outbox(5) == []  # nothing came back: all three are published


def test_an_expired_lease_is_claimable_again(stores: Stores) -> None:
    submit(stores, n=0)
    submit(stores, n=1)
    [row] = stores.outbox.claim_outbox(1, lease_seconds=-1)  # a lease that has already run out
    [again] = stores.outbox.claim_outbox(1, lease_seconds=60)
    assert (again.id, again.attempts) == (row.id, 0)
    [other] = stores.outbox.claim_outbox(5)  # the row leased for a minute is skipped
    assert other.id > row.id
    assert stores.outbox.claim_outbox(5) == []


def test_concurrent_claimers_never_share_a_row(stores: Stores) -> None:
    art = artifact()
    job = ids.job_id("alice", "many")
    stores.intake.submit(art, job, [OutboxMessage(topic=f"t{i}", key=b"k", value=str(i).encode())
                                    for i in range(120)])

    def drain(i: int) -> list[int]:
        got: list[int] = []
        while rows := stores.outbox.claim_outbox(7):
            got.extend(r.id for r in rows)
        return got

    claimed = [i for r in in_threads(4, drain) for i in r]
    assert len(claimed) == len(set(claimed)) == 120


def test_requeue_unfinished(stores: Stores) -> None:
    outbox, jobs = stores.outbox, stores.jobs
    art = artifact(n=0)
    running = ids.job_id("alice", "req-0")
    # A later, non-submission message of the running job stays published.
    stores.intake.submit(art, running, [submission(art, running),
                                        OutboxMessage(topic="sb.chunks.ready", key=b"k", value=b"v")])
    done, _ = submit(stores, n=1)
    queued, _ = submit(stores, n=2)
    external = ids.job_id("alice", "ext")
    stores.intake.register_external(artifact(n=3), external)
    outbox.mark_published([r.id for r in outbox.claim_outbox(10)])
    assert outbox.claim_outbox(10) == []

    jobs.stage_started("alice", running, "extract", 1)
    jobs.stage_succeeded("alice", running, "extract")
    jobs.stage_started("alice", running, "chunk", 1)
    jobs.stage_retrying("alice", running, "embed", 1, "slow")
    run_all_stages(stores, done)
    jobs.stage_started("alice", external, "extract", 1)
    before = jobs.get_job("alice", running)
    assert before is not None

    assert outbox.requeue_unfinished() == 2
    rows = outbox.claim_outbox(10)
    assert sorted(r.message.value for r in rows) == sorted([running.encode(), queued.encode()])
    assert all(r.message.topic == SUBMITTED for r in rows)

    view = jobs.get_job("alice", running)
    assert view is not None and view.status == "running" and view.updated_at > before.updated_at
    assert [s.status for s in view.stages] == ["succeeded", "pending", "pending"]
    queued_view = jobs.get_job("alice", queued)
    assert queued_view is not None and queued_view.status == "queued"
    done_view = jobs.get_job("alice", done)
    assert done_view is not None and done_view.status == "succeeded"
    ext_view = jobs.get_job("alice", external)
    assert ext_view is not None and ext_view.stages[0].status == "running"
    last = jobs.job_events("alice", running)[-1]
    assert (last["stage"], last["status"], last["detail"]) == ("gateway", "requeued", None)
    assert jobs.job_events("alice", done)[-1]["status"] == "succeeded"

    outbox.mark_published([r.id for r in rows])
    assert outbox.claim_outbox(10) == []
    assert outbox.requeue_unfinished() == 2


def test_requeue_includes_url_requests(stores: Stores) -> None:
    job = ids.job_id("alice", "url-2")
    msg = OutboxMessage(topic="sb.urls.requested", key=b"alice", value=b"req", headers=())
    stores.intake.request_url("alice", job, "https://example.org/a", None, [msg])
    rows = stores.outbox.claim_outbox(10)
    stores.outbox.mark_published([r.id for r in rows])
    assert stores.outbox.requeue_unfinished() == 1
    assert [r.message.topic for r in stores.outbox.claim_outbox(10)] == ["sb.urls.requested"]


def test_requeue_finds_submissions_by_the_deployments_topic_names(stores: Stores) -> None:
    """Another deployment's topics sharing the database (another prefix) are not this one's submissions."""
    job = ids.job_id("alice", "url-other")
    msg = OutboxMessage(topic="other.urls.requested", key=b"alice", value=b"req", headers=())
    stores.intake.request_url("alice", job, "https://example.org/other", None, [msg])
    stores.outbox.mark_published([r.id for r in stores.outbox.claim_outbox(10)])
    assert stores.outbox.requeue_unfinished() == 0
    assert stores.outbox.claim_outbox(10) == []


def test_nothing_to_requeue(stores: Stores) -> None:
    assert stores.outbox.requeue_unfinished() == 0
    job, _ = submit(stores)
    run_all_stages(stores, job)
    stores.outbox.mark_published([r.id for r in stores.outbox.claim_outbox(10)])
    assert stores.outbox.requeue_unfinished() == 0
    assert stores.outbox.claim_outbox(10) == []


def test_rows_queued_leased_go_to_the_caller_only(stores: Stores) -> None:
    """A gateway hands the rows it just queued to its own relay: no other claimer takes them meanwhile."""
    art = artifact()
    job = ids.job_id("alice", "leased")
    messages = [OutboxMessage(topic=f"t{i}", key=b"k", value=str(i).encode(), headers=()) for i in range(2)]
    result = stores.intake.submit(art, job, messages, lease_s=60)
    assert len(result.leased) == 2 and list(result.leased) == sorted(result.leased)
    assert stores.outbox.claim_outbox(10) == []  # leased to the gateway's relay
    assert stores.outbox.claim_outbox(10, published=list(result.leased)) == []
    again = stores.intake.submit(art, job, messages, lease_s=60)  # an idempotent retry leases nothing
    assert (again.created, again.leased) == (False, ())
    unleased = stores.intake.request_url("alice", ids.job_id("alice", "url"), "https://example.org/", None,
                                         [OutboxMessage(topic="u", key=b"k", value=b"v", headers=())])
    assert unleased.leased == ()
    assert [r.message.topic for r in stores.outbox.claim_outbox(10)] == ["u"]
