"""The pipeline, declared once: each stage, the topic it reads, the topic it writes and the job stage it
advances.  The runner, topic creation, process assembly and the documentation's
diagram (``python -m secondbrain.pipeline.topology``) all read it from here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from secondbrain import stages, topic_names
from secondbrain.events.models import (
    ArtifactSubmitted,
    ChunksCreated,
    ChunksIndexed,
    DocumentExtracted,
    UrlRequested,
)


@dataclass(frozen=True, slots=True)
class Step:
    """One stage of the pipeline.

    ``name`` is also the job stage it advances (a job's progress lists it); ``open_input`` says the
    input topic is one other apps publish to, so every event is admitted (signature, known user)
    before any job state is touched; ``final`` marks the stage after which a job's content is
    searchable.
    """

    name: str
    input: str
    input_type: type[Any]
    output: str  # the one topic every output event of the stage goes to
    output_type: type[Any]
    open_input: bool = False
    final: bool = False


FETCH = Step(stages.FETCH, topic_names.URLS_REQUESTED, UrlRequested, topic_names.ARTIFACTS_SUBMITTED,
             ArtifactSubmitted, open_input=True)
EXTRACT = Step(stages.EXTRACT, topic_names.ARTIFACTS_SUBMITTED, ArtifactSubmitted,
               topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted, open_input=True)
CHUNK = Step(stages.CHUNK, topic_names.DOCUMENTS_EXTRACTED, DocumentExtracted, topic_names.CHUNKS_CREATED,
             ChunksCreated)
EMBED = Step(stages.EMBED, topic_names.CHUNKS_CREATED, ChunksCreated, topic_names.CHUNKS_INDEXED, ChunksIndexed,
             final=True)

PIPELINE: tuple[Step, ...] = (FETCH, EXTRACT, CHUNK, EMBED)


# Topics no other app publishes to: their events are the pipeline's own, sealed (secondbrain.events.sealing).
OPEN_TOPICS: frozenset[str] = frozenset(s.input for s in PIPELINE if s.open_input)
SEALED_TOPICS: frozenset[str] = frozenset(t for s in PIPELINE for t in (s.input, s.output)) - OPEN_TOPICS


def step(name: str) -> Step:
    """The stage called ``name``; ``ValueError`` naming the stages otherwise."""
    for s in PIPELINE:
        if s.name == name:
            return s
    raise ValueError(f"unknown stage {name!r}; stages are {', '.join(stages.STAGES)}")


def diagram() -> str:
    """The pipeline as text: each stage between the topic it reads and the one it writes."""
    lines = []
    for s in PIPELINE:
        lines.append(f"[{s.input}] -> {s.name} -> [{s.output}]"
                     + ("   (searchable)" if s.final else "")
                     + ("   (other apps publish here too)" if s.open_input else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(diagram() + "\n")
