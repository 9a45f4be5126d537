"""The contract between a stage's logic and the runner that wires it to Kafka.

A stage is a typed ``process(event) -> outputs`` over the ports it was built with: it reads the
event, does its work and returns the events to publish (to its step's output topic, keyed by the
user).  It never imports a broker client and never keeps job bookkeeping: the step core
(:mod:`secondbrain.pipeline.core`) admits, asks once whether the source is still wanted and
decides each event's outcome; the runner (:mod:`secondbrain.pipeline.runner`) decodes, records
each job's progress, retries, dead-letters, publishes and only then commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from secondbrain.pipeline.topology import Step
    from secondbrain.ports import Users

In = TypeVar("In", contravariant=True)
Found = TypeVar("Found")


@dataclass(frozen=True, slots=True)
class JobRef:
    """What an input event is about: its job and user (for progress and dead letters), and the source
    and document it concerns (for the single "is this still wanted?" check before publishing)."""

    job_id: str | None
    user_id: str | None
    source_id: str | None = None
    document_id: str | None = None


class Stage(Protocol[In]):
    """What the runner needs from a stage."""

    step: ClassVar[Step]  # the stage in the pipeline's topology: name, input, output

    def job_of(self, event: In) -> JobRef:
        """The job, user, source and document ``event`` belongs to."""
        ...

    def process(self, event: In) -> list[Any]:
        """Do the stage's work for one event and return the events to publish (may raise)."""
        ...


@runtime_checkable
class AdmittingStage(Protocol[In, Found]):
    """A stage reading a topic other apps publish to (``step.open_input``): each event is checked before
    any job state is touched (an ``unauthorized`` :class:`~secondbrain.errors.PermanentError`
    refuses it), and what the check learned is handed to the stage's work."""

    def admit(self, event: In, value: bytes, headers: Mapping[str, str]) -> Found:
        """Raise unless ``event`` (whose encoded form is ``value``) may enter the pipeline; return what the
        check learned (``None`` when it learned nothing the work can use)."""
        ...

    def process(self, event: In, admitted: Found | None = None) -> list[Any]:
        """``Stage.process`` given what admitting the event learned (``None``: it was not checked, as for
        events a caller feeds the stage itself)."""
        ...


@runtime_checkable
class BatchAdmittingStage(Protocol[In]):
    """An :class:`AdmittingStage` that checks a batch of events with one lookup of their jobs."""

    def admit_many(self, items: Sequence[tuple[In, bytes, Mapping[str, str]]]) -> list[Any]:
        """``AdmittingStage.admit`` of each ``(event, value, headers)``: what it learned, or the exception that
        refuses (or drops) that event."""
        ...


@runtime_checkable
class DiscardingStage(Protocol[In]):
    """A stage whose work leaves something outside its outputs (vectors written): when the runner finds
    the source deleted or the document replaced meanwhile, the stage removes it again."""

    def discard(self, event: In, outputs: list[Any]) -> None:
        """Undo what processing ``event`` left behind."""
        ...


@runtime_checkable
class BatchingStage(Protocol[In]):
    """A stage that does part of its work cheaper for several events at once (the embedder: one model call
    for the chunks of every event waiting in a lane); the rest still happens event by event."""

    def prepare(self, events: Sequence[In]) -> list[Any]:
        """The shared part for each event, in order (e.g. its vectors)."""
        ...

    def process_prepared(self, event: In, prepared: Any) -> list[Any]:
        """``process`` with the shared part already done."""
        ...


@runtime_checkable
class BatchStage(Protocol[In]):
    """A stage that works on a batch of events at once (what the runner took from its input together): the
    shared work (fences, row writes, model calls) is done once for the batch, and each event still has its
    own result, so a bad event fails alone.  A single event is a batch of one."""

    def process_batch(self, events: Sequence[In], admitted: Sequence[Any] | None = None) -> list[list[Any] | Exception]:
        """For each event, in order, the events to publish or the error it failed with (``admitted``: what
        admitting each one learned, for an :class:`AdmittingStage`).  Raising fails the whole batch: the
        runner then takes its events one by one."""
        ...


@runtime_checkable
class WarmingStage(Protocol):
    """A stage that loads models on a background thread: the runner waits for them before consuming."""

    def warm_up(self) -> None:
        """Block until the stage can work; raise when it never will."""
        ...


def require_known_user(users: Users, user_id: str) -> None:
    """Refuse an event whose user id is malformed or unknown (it is dead-lettered, never retried)."""
    from secondbrain import keys
    from secondbrain.errors import PermanentError, Unauthorized

    try:
        keys.check_user_id(user_id)
    except ValueError as exc:
        raise PermanentError(str(exc), kind="malformed") from exc
    if not users.user_exists(user_id):
        raise Unauthorized(f"unknown user {user_id!r}: create the user before publishing for it")

