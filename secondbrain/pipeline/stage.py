"""The contract between a stage's logic and the runner that wires it to Kafka.

A stage is an object with a typed ``process(event) -> list[Emit]``: it reads the event,
uses the store Protocols it was built with, and returns the events to publish.  It never
imports a broker client; :mod:`secondbrain.pipeline.runner` does the Kafka part (decode,
retry, dead-letter, publish, and only then commit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from secondbrain.ports import MetadataStore

In = TypeVar("In", contravariant=True)
E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Emit(Generic[E]):
    """An event a stage wants published: logical topic, partition key (the user id), event."""

    topic: str
    key: str
    event: E


@dataclass(frozen=True, slots=True)
class JobRef:
    """Which job and user an input event belongs to (for status tracking and dead letters)."""

    job_id: str | None
    user_id: str | None


class Stage(Protocol[In]):
    """What the runner needs from a stage."""

    name: ClassVar[str]  # "extract" | "chunk" | "embed": the job stage it advances
    input_topic: ClassVar[str]  # logical topic name
    input_type: ClassVar[type[Any]]
    completes_stage: ClassVar[bool]  # whether a successful process() marks the stage succeeded

    def job_of(self, event: In) -> JobRef:
        """The job and user ``event`` belongs to."""
        ...

    def process(self, event: In) -> list[Emit[Any]]:
        """Do the stage's work for one event and return what to publish (may raise)."""
        ...


class AdmittingStage(Stage[In], Protocol[In]):
    """A stage reading a topic other apps publish to: it checks each event before any job state
    is touched (an ``unauthorized`` :class:`~secondbrain.pipeline.errors.PermanentError` refuses it)."""

    def admit(self, event: In, value: bytes, headers: Mapping[str, str]) -> None:
        """Raise unless ``event`` (whose encoded form is ``value``) may enter the pipeline."""
        ...


def require_known_user(metadata: MetadataStore, user_id: str) -> None:
    """Refuse an event whose user id is malformed or unknown (it is dead-lettered, never retried)."""
    from secondbrain import keys
    from secondbrain.pipeline.errors import PermanentError, Unauthorized

    try:
        keys.check_user_id(user_id)
    except ValueError as exc:
        raise PermanentError(str(exc), kind="malformed") from exc
    if not metadata.user_exists(user_id):
        raise Unauthorized(f"unknown user {user_id!r}: create the user before publishing for it")
