"""Every decision of the pipeline's step, one row each: an event is admitted or refused, its work published,
dropped (no longer wanted) or dead-lettered, with the job ledger (the in-memory twin) in each state a job can
be in.  The stage in each row does what the row says (returns outputs, raises, or changes the job meanwhile),
so that the row checks the core's decision, not a stage's work."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import pytest

from secondbrain import ids
from secondbrain.errors import PermanentError, RetryableError, SourceGone, Unauthorized
from secondbrain.pipeline import core
from secondbrain.pipeline.core import Admission, DeadLetter, Dropped, Publish
from secondbrain.pipeline.stage import JobRef
from secondbrain.pipeline.topology import CHUNK, EXTRACT, Step
from secondbrain.ports import JobGone, UnknownUser
from secondbrain.stores.memory import MemoryMetadataStore
from tests.contracts.metadata.helpers import TOPICS, document, submission, version_of

pytestmark = pytest.mark.fast  # the in-memory ledger: no services

USER = "alice"
OUTPUTS = ["the stage's output"]


@dataclass
class World:
    """The store the step reads and a live job of ``USER``, with its source and document."""

    store: MemoryMetadataStore
    job: str
    source_id: str
    document_id: str
    discarded: list[list[Any]] = field(default_factory=list)

    def fail_job(self) -> None:
        self.store.jobs.job_failed(USER, self.job, CHUNK.name, "failed elsewhere")

    def delete_source(self) -> None:
        assert self.store.lifecycle.delete_source(USER, self.source_id) is not None

    def replace_document(self) -> None:
        """A newer version of the source arrives and is extracted: the job's document is superseded."""
        newer = version_of(USER, "file:note.md", "the second version")
        job = ids.job_id(USER, "newer")
        assert self.store.intake.submit(newer, job, [submission(newer, job)]).created
        doc = replace(document(newer), source_id=self.source_id)
        self.store.catalog.save_document(doc)
        self.store.catalog.supersede_older(USER, self.source_id, doc.document_id)


Act = Callable[[World], Any]


def returns(world: World) -> list[Any]:
    return OUTPUTS


def raises(exc: BaseException, before: Act | None = None) -> Act:
    def act(world: World) -> Any:
        if before is not None:
            before(world)
        raise exc
    return act


def then_returns(before: Act) -> Act:
    def act(world: World) -> list[Any]:
        before(world)
        return OUTPUTS
    return act


def make_stage(step: Step, world: World, ref: JobRef, *, admit: Act | None, process: Act) -> Any:
    """A stage on ``step`` whose admission check (open topics only) and work do what the row says, and
    which keeps what it is asked to discard."""

    class RowStage:
        step: ClassVar[Step]

        def job_of(self, event: Any) -> JobRef:
            return ref

        def process(self, event: Any, admitted: Any = None) -> list[Any]:
            return list(process(world))

        def discard(self, event: Any, outputs: list[Any]) -> None:
            world.discarded.append(outputs)

    class AdmittingRowStage(RowStage):
        def admit(self, event: Any, value: bytes, headers: Mapping[str, str]) -> Any:
            assert admit is not None
            return admit(world)

    made = RowStage() if admit is None else AdmittingRowStage()
    made.step = step
    return made


@pytest.fixture
def world() -> Iterator[World]:
    with MemoryMetadataStore(topics=TOPICS) as store:
        store.users.ensure_user(USER)
        art = version_of(USER, "file:note.md", "the first version")
        job = ids.job_id(USER, "first")
        assert store.intake.submit(art, job, [submission(art, job)]).created
        doc = document(art)
        store.catalog.save_document(doc)
        yield World(store, job, art.source_id, doc.document_id)


@dataclass(frozen=True)
class Row:
    """One event: the step it is on (an open topic has the stage's admission ``check``), the job it names
    (``live``, ``ended``, ``gone``: never the user's, or ``none``), what the stage does, and the outcome."""

    step: Step
    job: str
    process: Act
    expected: Publish | Dropped | DeadLetter
    check: Act | None = None
    trusted: bool = False
    discarded: list[list[Any]] = field(default_factory=list)


def admitted(check: Act = returns) -> Act:
    return check


ROWS = {
    # Admission: an open topic's check, before any job state is touched.
    "open: admitted and published": Row(EXTRACT, "live", returns, Publish(OUTPUTS, 1), check=admitted()),
    "open: a signed event's job is made by its check": Row(
        EXTRACT, "new", returns, Publish(OUTPUTS, 1), check=lambda w: w.store.intake.submit(
            version_of(USER, "file:new.md", "new"), "job-new", []).created),
    "open: the check finds the source deleted": Row(
        EXTRACT, "live", returns, Dropped("check", "gone"), check=raises(SourceGone("deleted"))),
    "open: the check refuses the event": Row(
        EXTRACT, "live", returns, DeadLetter("unauthorized", Unauthorized("not signed"), 1, of_job=False),
        check=raises(Unauthorized("not signed"))),
    "open: the check fails for good": Row(
        EXTRACT, "live", returns, DeadLetter("retries_exhausted", RuntimeError("store away"), 1, of_job=False),
        check=raises(RuntimeError("store away"))),
    "open: a trusted event skips the check": Row(
        EXTRACT, "live", returns, Publish(OUTPUTS, 1), check=raises(Unauthorized("not signed")), trusted=True),
    "open: a trusted event without a job is published unrecorded": Row(
        EXTRACT, "none", returns, Publish(OUTPUTS, 1), check=admitted(), trusted=True),
    "open: the job ended": Row(EXTRACT, "ended", returns, Dropped("admission", "ended"), check=admitted()),
    # Admission on the pipeline's own topics: the event must name a job, which must still be wanted.
    "sealed: no job named": Row(
        CHUNK, "none", returns, DeadLetter("unauthorized", Unauthorized("names no job"), 0, of_job=False)),
    "sealed: the job is gone": Row(CHUNK, "gone", returns, Dropped("admission", "gone")),
    "sealed: the job ended": Row(CHUNK, "ended", returns, Dropped("admission", "ended")),
    "sealed: published": Row(CHUNK, "live", returns, Publish(OUTPUTS, 1)),
    # A failure of the work: dead-lettered, unless the job went meanwhile.
    "failure: bad input": Row(
        CHUNK, "live", raises(PermanentError("not a note", kind="malformed")),
        DeadLetter("malformed", PermanentError("not a note", kind="malformed"), 1)),
    "failure: retries ran out": Row(
        CHUNK, "live", raises(RetryableError("away")), DeadLetter("retries_exhausted", RetryableError("away"), 1)),
    "failure: a bug": Row(CHUNK, "live", raises(ValueError("bug")), DeadLetter("permanent", ValueError("bug"), 1)),
    "failure: the source went (said by the stage)": Row(
        CHUNK, "live", raises(SourceGone("deleted")), Dropped("processing", "gone"), discarded=[[]]),
    "failure: the user went (said by the store)": Row(
        CHUNK, "live", raises(UnknownUser("alice")), Dropped("processing", "gone"), discarded=[[]]),
    "failure: the job ended (said by the fence)": Row(
        CHUNK, "live", raises(JobGone("j", "ended")), Dropped("processing", "ended")),
    "failure: the source was deleted meanwhile": Row(
        CHUNK, "live", raises(ValueError("bytes gone"), World.delete_source), Dropped("processing", "gone"),
        discarded=[[]]),
    "failure: the job failed meanwhile": Row(
        CHUNK, "live", raises(ValueError("chunks gone"), World.fail_job), Dropped("processing", "ended")),
    "failure: a new job still missing fails as itself": Row(
        EXTRACT, "new", raises(ValueError("bad event")), DeadLetter("permanent", ValueError("bad event"), 1),
        check=admitted()),
    # Success: the stage is recorded done, asking in the same write whether the work is still wanted.
    "finish: the source was deleted meanwhile": Row(
        CHUNK, "live", then_returns(World.delete_source), Dropped("finish", "gone"), discarded=[OUTPUTS]),
    "finish: the document was replaced meanwhile": Row(
        CHUNK, "live", then_returns(World.replace_document), Dropped("finish", "superseded"),
        discarded=[OUTPUTS]),
    "finish: the job failed meanwhile": Row(
        CHUNK, "live", then_returns(World.fail_job), Dropped("finish", "ended", counted=False)),
}


def job_ref(world: World, which: str) -> JobRef:
    job = {"live": world.job, "ended": world.job, "gone": ids.job_id(USER, "never submitted"), "new": "job-new",
           "none": None}[which]
    if which == "ended":
        world.fail_job()
    return JobRef(job, USER if job else None, world.source_id, world.document_id)


def same(got: Any, expected: Any) -> bool:
    """Outcomes compared by what the runner acts on (an error by its type and message)."""
    if isinstance(expected, DeadLetter):
        return (isinstance(got, DeadLetter) and (got.kind, got.attempts, got.of_job) == (
            expected.kind, expected.attempts, expected.of_job) and type(got.error) is type(expected.error)
            and str(expected.error) in str(got.error))
    return bool(got == expected)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_outcome(world: World, name: str) -> None:
    row = ROWS[name]
    ref = job_ref(world, row.job)
    stage = make_stage(row.step, world, ref, admit=row.check, process=row.process)
    got = core.outcome(stage, object(), world.store.jobs, trusted=row.trusted)
    assert same(got, row.expected), f"{name}: {got!r}"
    assert world.discarded == row.discarded, name
    if isinstance(got, Publish) and ref.job_id:  # what was published is recorded as the stage done
        view = world.store.jobs.get_job(USER, ref.job_id)
        assert view is not None
        assert {s.stage: s.status for s in view.stages}.get(row.step.name) == "succeeded"


def test_every_outcome_has_a_row() -> None:
    """Each kind of outcome, and each place a drop shows, is in the table."""
    outcomes = {type(r.expected) for r in ROWS.values()}
    drops = {(r.expected.where, r.expected.why) for r in ROWS.values() if isinstance(r.expected, Dropped)}
    letters = {(r.expected.kind, r.expected.of_job) for r in ROWS.values() if isinstance(r.expected, DeadLetter)}
    assert outcomes == {Publish, Dropped, DeadLetter}
    assert drops == {("check", "gone"), ("admission", "gone"), ("admission", "ended"), ("processing", "gone"),
                     ("processing", "ended"), ("finish", "gone"), ("finish", "superseded"), ("finish", "ended")}
    assert letters == {("unauthorized", False), ("retries_exhausted", False), ("malformed", True),
                       ("retries_exhausted", True), ("permanent", True)}
    assert Admission().state == "live"


def test_run_raises_what_would_be_dead_lettered_and_returns_what_would_be_published(world: World) -> None:
    ref = job_ref(world, "live")
    stage = make_stage(CHUNK, world, ref, admit=None, process=returns)
    assert core.run(stage, object(), world.store.jobs) == OUTPUTS
    failing = make_stage(CHUNK, world, ref, admit=None, process=raises(ValueError("bug")))
    with pytest.raises(ValueError, match="bug"):
        core.run(failing, object(), world.store.jobs)
    ended = make_stage(CHUNK, world, job_ref(world, "ended"), admit=None, process=returns)
    assert core.run(ended, object(), world.store.jobs) == []


GOOD = ["a good neighbour's output"]


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_outcome_in_a_batch_and_its_neighbour_goes_on(world: World, name: str) -> None:
    """The same row taken in a batch beside a good event of another job: the row's event ends as it does alone,
    and the good one is published whatever became of the other (a bad event fails alone)."""
    row = ROWS[name]
    ref = job_ref(world, row.job)
    other = version_of(USER, "file:other.md", "another note")
    other_job = ids.job_id(USER, "other")
    assert world.store.intake.submit(other, other_job, [submission(other, other_job)]).created
    other_doc = document(other)
    world.store.catalog.save_document(other_doc)
    good_ref = JobRef(other_job, USER, other.source_id, other_doc.document_id)
    row_stage = make_stage(row.step, world, ref, admit=row.check, process=row.process)
    good, calls = object(), []

    class BatchRowStage:
        step = row.step

        def job_of(self, event: Any) -> JobRef:
            return good_ref if event is good else ref

        def process(self, event: Any, admitted: Any = None) -> list[Any]:
            return GOOD if event is good else row_stage.process(event, admitted)

        def process_batch(self, events: Any, admitted: Any = None) -> list[Any]:
            calls.append(len(events))
            out: list[Any] = []
            for event in events:
                try:
                    out.append(self.process(event))
                except Exception as exc:
                    out.append(exc)
            return out

        def discard(self, event: Any, outputs: list[Any]) -> None:
            row_stage.discard(event, outputs)

        def admit(self, event: Any, value: bytes, headers: Mapping[str, str]) -> Any:
            return None if event is good else row_stage.admit(event, value, headers)

    stage: Any = BatchRowStage()
    got = core.outcomes(stage, [object(), good], world.store.jobs, trusted=row.trusted)
    assert len(got) == 2 and same(got[0], row.expected), f"{name}: {got[0]!r}"
    assert got[1] == Publish(GOOD, 1), f"{name}: the neighbour {got[1]!r}"
    refused = (isinstance(row.expected, Dropped) and row.expected.where in ("check", "admission")) or (
        isinstance(row.expected, DeadLetter) and not row.expected.of_job)
    assert calls[0] == (1 if refused else 2), "the stage's work is done once for the events admitted"
    assert world.discarded == row.discarded, name
    view = world.store.jobs.get_job(USER, other_job)
    assert view is not None and {s.stage: s.status for s in view.stages}.get(row.step.name) == "succeeded"
