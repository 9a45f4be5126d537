"""One event through a stage the way the runner takes it, without a broker: for tests, tools and replays.

The same steps as :class:`~secondbrain.pipeline.runner.StageRunner` in the same order (admission for
topics other apps publish to, the stage's work, the job ledger's "still wanted?" write, the stage's
discard when the answer is no), minus what only a broker needs: no retries, no dead letters, no
offsets.  Errors propagate to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from secondbrain.errors import SourceGone
from secondbrain.pipeline.stage import AdmittingStage, DiscardingStage, Stage
from secondbrain.ports import JobGone, JobLedger


def run(stage: Stage[Any], event: Any, jobs: JobLedger, *, value: bytes = b"",
        headers: Mapping[str, str] | None = None, trusted: bool = False) -> list[Any]:
    """The outputs the runner would publish for ``event`` (none when the work was dropped or ended).

    ``trusted``: skip admission (a caller feeding a stage its own events, as a test does).
    """
    ref = stage.job_of(event)
    try:
        if stage.step.open_input and isinstance(stage, AdmittingStage) and not trusted:
            stage.admit(event, value, headers or {})
        outputs = stage.process(event)
    except Exception as exc:
        state = "gone" if isinstance(exc, SourceGone) else exc.state if isinstance(exc, JobGone) else (
            jobs.job_state(ref.user_id, ref.job_id) if ref.job_id is not None and ref.user_id is not None else "live")
        if state == "live":
            raise
        if state == "gone" and isinstance(stage, DiscardingStage):  # deleted meanwhile: dropped, like the runner
            stage.discard(event, [])
        return []
    if ref.job_id is None or ref.user_id is None:
        return outputs
    outcome = jobs.finish_stage(ref.user_id, ref.job_id, stage.step.name, document_id=ref.document_id)
    if outcome in ("gone", "superseded"):
        if isinstance(stage, DiscardingStage):
            stage.discard(event, outputs)
        return []
    return [] if outcome == "ended" else outputs
