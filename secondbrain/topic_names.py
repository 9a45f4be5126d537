"""Every Kafka topic's name, declared in one place, and the deployment prefix that makes them physical.

Messages are keyed by user id so one user's events stay in order on one partition.  The stores read the
submission topics' physical names from here (a ``TopicNames`` handed to them), the pipeline creates the
topics (``secondbrain.pipeline.topics``).
"""

from __future__ import annotations

from dataclasses import dataclass

URLS_REQUESTED = "urls.requested"
ARTIFACTS_SUBMITTED = "artifacts.submitted"
DOCUMENTS_EXTRACTED = "documents.extracted"
CHUNKS_CREATED = "chunks.created"
CHUNKS_INDEXED = "chunks.indexed"
JOBS_STATUS = "jobs.status"
DEAD_LETTER = "pipeline.deadletter"

ALL_TOPICS: tuple[str, ...] = (
    URLS_REQUESTED,
    ARTIFACTS_SUBMITTED,
    DOCUMENTS_EXTRACTED,
    CHUNKS_CREATED,
    CHUNKS_INDEXED,
    JOBS_STATUS,
    DEAD_LETTER,
)


@dataclass(frozen=True, slots=True)
class TopicNames:
    """Physical topic names: the logical names behind an optional deployment prefix."""

    prefix: str = ""

    def __call__(self, logical: str) -> str:
        """The physical name of ``logical``."""
        return f"{self.prefix}{logical}"

    def all(self) -> list[str]:
        """Every physical topic of the pipeline."""
        return [self(t) for t in ALL_TOPICS]

    def submissions(self) -> tuple[str, str]:
        """The physical topics whose messages carry a job's original submission (an artifact, then a URL
        request): what a requeue publishes again."""
        return self(ARTIFACTS_SUBMITTED), self(URLS_REQUESTED)
