"""One event through one stage: every decision of the pipeline's step, made in one place.

An event is first *admitted* (:func:`admit`): on a topic other apps publish to, the stage checks it
before any job state is touched (a refusal is dead-lettered, work of a source deleted since is
dropped); on the pipeline's own topics it must name a job.  Work that is no longer wanted stops there:
a job that ended (replaced by a newer submission, failed) or, on an internal topic, one that is gone
(its source deleted, its user erased).  Then it is *processed* (:func:`process`): the stage's work,
handed what its admission learned; a failure of a job that went meanwhile is dropped (what was
written is taken back), any other is dead-lettered; on success the stage is recorded done, asking in
the same write whether the work is still wanted (a deleted source or a replaced document: the stage
discards what it wrote, nothing is published).

How the world is touched (threads, retries, job bookkeeping, publishing) is the caller's
(:class:`Effects`): the runner (:mod:`secondbrain.pipeline.runner`) wraps the steps with retries and
a broker; :func:`run` takes them in process, without one (tools, tests, replays).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from secondbrain.errors import PermanentError, SourceGone, Unauthorized, classify
from secondbrain.pipeline.stage import (
    AdmittingStage,
    BatchAdmittingStage,
    BatchingStage,
    BatchStage,
    DiscardingStage,
    JobRef,
    Stage,
)
from secondbrain.ports import JobGone, JobLedger, UnknownUser
from secondbrain.ports.metadata import JobState, StageOutcome

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Admission:
    """What admitting an event found: its job's state then, and what the stage's own check learned (its
    ``admit``'s answer, handed to its ``process``)."""

    state: JobState = "live"
    found: Any = None


@dataclass(frozen=True, slots=True)
class Publish:
    """The stage is done: publish ``outputs`` (``attempts`` tries it took)."""

    outputs: list[Any]
    attempts: int


@dataclass(frozen=True, slots=True)
class Dropped:
    """No longer wanted: nothing is published and nothing fails.  ``where`` it showed (the stage's own admission
    ``check`` of an event from another app, the job's state at ``admission``, a failure in ``processing``, the
    stage's ``finish``, or a ``dead letter`` of an erased user) and ``why``: the source or user ``gone``, the
    document ``superseded``, or the job ``ended`` (finished, failed or replaced; a replay or a duplicate).
    ``counted`` is False for a job that ended meanwhile (it already has its outcome)."""

    where: Literal["check", "admission", "processing", "finish", "dead letter"]
    why: Literal["gone", "ended", "superseded"]
    counted: bool = True

    @property
    def found_at(self) -> str:
        return f"{self.where} ({self.why})"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """The event failed for good: ``kind`` and ``error`` go to the dead-letter topic.  ``of_job``: the job
    fails too (False for an event refused before any job state was touched)."""

    kind: str
    error: BaseException
    attempts: int
    of_job: bool = True


Outcome = Publish | Dropped | DeadLetter


class Effects(Protocol):
    """How a step touches the world."""

    async def admit(self, check: Callable[..., Any], *args: Any) -> Any:
        """Run the stage's admission check (the runner retries it while its stores are away)."""
        ...

    async def job_state(self, ref: JobRef, *, patient: bool) -> JobState:
        """The job's state; ``patient``: kept asking while the store is away."""
        ...

    async def attempts(self, work: Callable[[int], list[Any]]) -> tuple[list[Any] | Exception, int]:
        """Run ``work(attempt)`` until it succeeds (the runner retries what may pass): its outputs, or the
        last error, and the tries it took."""
        ...

    async def finish(self, ref: JobRef, attempts: int) -> StageOutcome:
        """Record the stage done for the job and say whether its work is still wanted."""
        ...

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the stage's own (blocking) code."""
        ...


class BatchEffects(Effects, Protocol):
    """How a batch's step touches the world: the job bookkeeping of many events in one statement each."""

    async def job_states(self, refs: Sequence[JobRef]) -> list[JobState]:
        """The states of the jobs ``refs`` name, in order (kept asking while the store is away)."""
        ...

    async def batch(self, work: Callable[[], list[list[Any] | Exception]]) -> list[list[Any] | Exception] | Exception:
        """Run the stage's batch ``work`` once: each event's outputs or error, or the error of the whole call."""
        ...

    async def finish_many(self, refs: Sequence[JobRef]) -> list[StageOutcome]:
        """:meth:`Effects.finish` for each of ``refs`` (first tries), in order, with one write."""
        ...


async def admit(stage: Stage[Any], event: Any, ref: JobRef, value: bytes, headers: Mapping[str, str],
                fx: Effects, *, trusted: bool = False) -> Admission | Dropped | DeadLetter:
    """Whether ``event`` may be worked on (``trusted``: the caller feeds the stage its own events, the
    stage's check is skipped)."""
    found: Any = None
    if stage.step.open_input and isinstance(stage, AdmittingStage):
        if not trusted:
            try:
                found = await fx.admit(stage.admit, event, value, headers)
            except SourceGone:
                return Dropped("check", "gone")
            except Exception as exc:
                # No job bookkeeping: a refused event must not start or fail anyone's job.
                kind = exc.kind if isinstance(exc, PermanentError) else "retries_exhausted"
                return DeadLetter(kind, exc, attempts=1, of_job=False)
    elif not ref.job_id or not ref.user_id:
        return DeadLetter("unauthorized", Unauthorized(
            "the event names no job: events on the pipeline's internal topics belong to a job"), 0, of_job=False)
    state: JobState = "live"
    if ref.job_id and ref.user_id:
        # Work that is no longer wanted stops here, before it costs anything: a job that ended (replaced by
        # a newer submission, failed), or, on an internal topic, one that is gone (its source deleted, its
        # user erased).  A job another app's signed event names may not exist yet: the stage creates it.
        state = await fx.job_state(ref, patient=True)
        if state == "ended" or (state == "gone" and not stage.step.open_input):
            return Dropped("admission", state)
    return Admission(state, found)


async def admit_batch(stage: Stage[Any], items: Sequence[tuple[Any, JobRef, bytes, Mapping[str, str]]],
                      fx: BatchEffects, *, trusted: bool = False) -> list[Admission | Dropped | DeadLetter]:
    """:func:`admit` for a batch of ``(event, ref, value, headers)``: the stage's own check event by event, and the
    states of all their jobs read in one statement."""
    decided: list[Admission | Dropped | DeadLetter | None] = [None] * len(items)
    found: list[Any] = [None] * len(items)
    checks: list[Any] = []
    checked = stage.step.open_input and isinstance(stage, AdmittingStage) and not trusted
    if checked and isinstance(stage, BatchAdmittingStage) and len(items) > 1:
        checks = await fx.admit(stage.admit_many, [(e, v, h) for e, _r, v, h in items])
    for i, (event, ref, value, headers) in enumerate(items):
        if stage.step.open_input and isinstance(stage, AdmittingStage):
            if checked:
                try:
                    if checks:
                        if isinstance(checks[i], Exception):
                            raise checks[i]
                        found[i] = checks[i]
                    else:
                        found[i] = await fx.admit(stage.admit, event, value, headers)
                except SourceGone:
                    decided[i] = Dropped("check", "gone")
                except Exception as exc:
                    kind = exc.kind if isinstance(exc, PermanentError) else "retries_exhausted"
                    decided[i] = DeadLetter(kind, exc, attempts=1, of_job=False)
        elif not ref.job_id or not ref.user_id:
            decided[i] = DeadLetter("unauthorized", Unauthorized(
                "the event names no job: events on the pipeline's internal topics belong to a job"), 0, of_job=False)
    asked = [i for i, (_e, ref, _v, _h) in enumerate(items) if decided[i] is None and ref.job_id and ref.user_id]
    states = await fx.job_states([items[i][1] for i in asked]) if asked else []
    by_index: dict[int, JobState] = dict(zip(asked, states, strict=True))
    out: list[Admission | Dropped | DeadLetter] = []
    for i, verdict in enumerate(decided):
        if verdict is not None:
            out.append(verdict)
            continue
        state = by_index.get(i, "live")
        if state == "ended" or (state == "gone" and not stage.step.open_input):
            out.append(Dropped("admission", state))
        else:
            out.append(Admission(state, found[i]))
    return out


async def process_batch(stage: BatchStage[Any], works: Sequence[tuple[Any, JobRef, Admission]],
                        fx: BatchEffects) -> list[Outcome | None]:
    """:func:`process` for a batch of admitted events: the stage's batch work once, then every stage recorded done
    in one write.  ``None`` for an event to take alone with :func:`process` (its work failed in a way a retry may
    mend, or the batch's work failed as a whole); an event that failed for good is dead-lettered alone and the
    rest go on."""
    events = [w[0] for w in works]
    results = await fx.batch(lambda: stage.process_batch(events, [w[2].found for w in works]))
    if isinstance(results, Exception):
        return [None] * len(works)
    out: list[Outcome | None] = [None] * len(works)
    done: list[int] = []
    for i, result in enumerate(results):
        event, ref, admission = works[i]
        if isinstance(result, Exception):
            if classify(result) == "retryable" and not isinstance(result, JobGone | SourceGone | UnknownUser):
                continue  # alone, with its retries
            out[i] = await _failed(stage, event, ref, admission, result, 1, fx)
        elif ref.job_id and ref.user_id:
            done.append(i)
        else:
            out[i] = Publish(result, 1)
    outcomes = await fx.finish_many([works[i][1] for i in done]) if done else []
    for i, finished in zip(done, outcomes, strict=True):
        result = results[i]
        assert not isinstance(result, Exception)
        out[i] = await _finished(stage, works[i][0], result, finished, 1, fx)
    return out


async def _failed(stage: Any, event: Any, ref: JobRef, admission: Admission, exc: Exception, attempts: int,
                  fx: Effects) -> Outcome:
    """What becomes of an event whose work failed with ``exc`` after ``attempts`` tries."""
    state = await _state_after_failure(exc, ref, admission, fx)
    if state != "live":
        # Deleted, erased or replaced meanwhile (its bytes or chunk list may have gone with it): a failure
        # of that change's making, not of the input; dropped, not dead-lettered.  Only a job that is gone
        # takes back what was written (an ended job's work may be shared with the newer job of the same
        # bytes, and the fence kept it from writing after it ended).
        if state == "gone" and isinstance(stage, DiscardingStage):
            await fx.call(stage.discard, event, [])
        return Dropped("processing", state)
    kind = exc.kind if isinstance(exc, PermanentError) else (
        "retries_exhausted" if classify(exc) == "retryable" else "permanent")
    return DeadLetter(kind, exc, attempts)


async def _finished(stage: Any, event: Any, outputs: list[Any], outcome: StageOutcome, attempts: int,
                    fx: Effects) -> Outcome:
    """What becomes of an event whose stage was recorded done with ``outcome``."""
    if outcome in ("gone", "superseded"):
        # Deleted or replaced while it was being worked on: what the stage wrote goes again, and nothing is
        # published (the next stage would only bring it back).
        if isinstance(stage, DiscardingStage):
            await fx.call(stage.discard, event, outputs)
        return Dropped("finish", "gone" if outcome == "gone" else "superseded")
    if outcome == "ended":  # the job failed or ended as a duplicate meanwhile: nothing more to do
        return Dropped("finish", outcome, counted=False)
    return Publish(outputs, attempts)


async def process(stage: Stage[Any], event: Any, ref: JobRef, admission: Admission, fx: Effects,
                  prepared: Any = None) -> Outcome:
    """The stage's work on an admitted event, and what becomes of it (``prepared``: the shared part a
    batching stage did for several events at once, used on the first try)."""

    def work(attempt: int) -> list[Any]:
        if prepared is not None and attempt == 1 and isinstance(stage, BatchingStage):
            return stage.process_prepared(event, prepared)
        if isinstance(stage, AdmittingStage):
            return stage.process(event, admission.found)
        return stage.process(event)

    outputs, attempts = await fx.attempts(work)
    if isinstance(outputs, Exception):
        return await _failed(stage, event, ref, admission, outputs, attempts, fx)
    outcome: StageOutcome = await fx.finish(ref, attempts) if ref.job_id and ref.user_id else "done"
    return await _finished(stage, event, outputs, outcome, attempts, fx)


async def _state_after_failure(exc: BaseException, ref: JobRef, admission: Admission, fx: Effects) -> JobState:
    """Whether the failed work's job went meanwhile (deleted, erased), ended (replaced) or is live: only then
    does the failure stand.  ``live`` when unknown (the store is away)."""
    if isinstance(exc, SourceGone | UnknownUser):
        return "gone"
    if isinstance(exc, JobGone):
        return exc.state
    if ref.job_id is None or ref.user_id is None:
        return "live"
    try:
        now = await fx.job_state(ref, patient=False)
    except Exception:  # the store is away: no verdict, the failure stands
        return "live"
    # A job another app's event creates did not exist when the event came in: still missing, its own failure
    # (a bad event) stands.
    return "live" if now == "gone" and admission.state == "gone" else now


# ---------------------------------------------------------------------------- in process


class _InProcess:
    """The steps' effects taken directly on the calling thread: one try, errors as they are."""

    def __init__(self, stage: Stage[Any], jobs: JobLedger) -> None:
        self.stage = stage
        self.jobs = jobs

    async def admit(self, check: Callable[..., Any], *args: Any) -> Any:
        return check(*args)

    async def job_state(self, ref: JobRef, *, patient: bool) -> JobState:
        assert ref.user_id is not None and ref.job_id is not None
        return self.jobs.job_state(ref.user_id, ref.job_id)

    async def attempts(self, work: Callable[[int], list[Any]]) -> tuple[list[Any] | Exception, int]:
        try:
            return work(1), 1
        except Exception as exc:
            return exc, 1

    async def finish(self, ref: JobRef, attempts: int) -> StageOutcome:
        assert ref.user_id is not None and ref.job_id is not None
        return self.jobs.finish_stage(ref.user_id, ref.job_id, self.stage.step.name, document_id=ref.document_id,
                                      attempt=attempts)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)

    async def job_states(self, refs: Sequence[JobRef]) -> list[JobState]:
        return [await self.job_state(ref, patient=True) for ref in refs]

    async def batch(self, work: Callable[[], list[list[Any] | Exception]]) -> list[list[Any] | Exception] | Exception:
        try:
            return work()
        except Exception as exc:
            return exc

    async def finish_many(self, refs: Sequence[JobRef]) -> list[StageOutcome]:
        return [await self.finish(ref, 1) for ref in refs]


def _settle(steps: Coroutine[Any, Any, T]) -> T:
    """The result of coroutine ``steps`` whose every effect completes at once (nothing it awaits suspends), on
    the calling thread, whether or not an event loop runs there."""
    try:
        steps.send(None)
    except StopIteration as done:
        return done.value
    steps.close()
    raise RuntimeError("an in-process step waited on something that does not complete at once")


def outcome(stage: Stage[Any], event: Any, jobs: JobLedger, *, value: bytes = b"",
            headers: Mapping[str, str] | None = None, trusted: bool = False) -> Outcome:
    """What the runner would make of ``event`` (without a broker: one try, no dead letters written).

    ``trusted``: skip the stage's admission check (a caller feeding a stage its own events, as a test does).
    """
    fx = _InProcess(stage, jobs)

    async def steps() -> Outcome:
        ref = stage.job_of(event)
        admitted = await admit(stage, event, ref, value, headers or {}, fx, trusted=trusted)
        if not isinstance(admitted, Admission):
            return admitted
        return await process(stage, event, ref, admitted, fx)

    return _settle(steps())


def outcomes(stage: Stage[Any], events: Sequence[Any], jobs: JobLedger, *, trusted: bool = False) -> list[Outcome]:
    """What the runner would make of ``events`` taken as one batch (without a broker: one try, no dead letters
    written); a stage without :class:`BatchStage` takes them one by one."""
    fx = _InProcess(stage, jobs)

    async def steps() -> list[Outcome]:
        refs = [stage.job_of(e) for e in events]
        admitted = await admit_batch(stage, [(e, r, b"", {}) for e, r in zip(events, refs, strict=True)], fx,
                                     trusted=trusted)
        out: list[Outcome | None] = [a if not isinstance(a, Admission) else None for a in admitted]
        works = [(i, (events[i], refs[i], a)) for i, a in enumerate(admitted) if isinstance(a, Admission)]
        if isinstance(stage, BatchStage) and works:
            got = await process_batch(stage, [w for _i, w in works], fx)
        else:
            got = [None] * len(works)
        for (i, (event, ref, admission)), result in zip(works, got, strict=True):
            out[i] = result if result is not None else await process(stage, event, ref, admission, fx)
        return [o for o in out if o is not None]

    return _settle(steps())


def run(stage: Stage[Any], event: Any, jobs: JobLedger, *, value: bytes = b"",
        headers: Mapping[str, str] | None = None, trusted: bool = False) -> list[Any]:
    """The outputs the runner would publish for ``event`` (none when the work was dropped or ended); the
    error that would dead-letter it is raised."""
    result = outcome(stage, event, jobs, value=value, headers=headers, trusted=trusted)
    if isinstance(result, DeadLetter):
        raise result.error
    return result.outputs if isinstance(result, Publish) else []
