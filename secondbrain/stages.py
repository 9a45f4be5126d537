"""The job stages by name, in pipeline order: the job ledger (the stores) and the pipeline's topology
(``secondbrain.pipeline.topology``, which checks that its steps are these) share them from here."""

from __future__ import annotations

FETCH = "fetch"
EXTRACT = "extract"
CHUNK = "chunk"
EMBED = "embed"

STAGES: tuple[str, ...] = (FETCH, EXTRACT, CHUNK, EMBED)  # every stage a job can have, in order
URL_STAGES: tuple[str, ...] = STAGES  # a URL is fetched first
FILE_STAGES: tuple[str, ...] = STAGES[STAGES.index(EXTRACT):]  # an uploaded artifact starts at extraction
JOB_STAGES: frozenset[str] = frozenset({"gateway", *STAGES})  # where a job status can come from
