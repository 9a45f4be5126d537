"""Implementations of the store Protocols in :mod:`secondbrain.ports`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from secondbrain.ports import ArtifactGone, DocumentRecord, JobGone


def save_each(save: Callable[..., int],
              documents: Sequence[tuple[DocumentRecord, str | None]]) -> list[int | Exception]:
    """``save_documents`` one at a time: each document's version, or the :class:`JobGone` or
    :class:`ArtifactGone` that stopped it, so one gone job or artifact never fails its neighbours."""
    out: list[int | Exception] = []
    for doc, job in documents:
        try:
            out.append(save(doc, job_id=job))
        except (JobGone, ArtifactGone) as exc:
            out.append(exc)
    return out
