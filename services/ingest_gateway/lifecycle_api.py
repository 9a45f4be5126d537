"""Your data's lifecycle over HTTP: a source with all its versions, deleting it, exporting
everything, and erasing your account.

Every route acts for the caller only: another user's source is 404, like one that never
existed.  The work itself is in :mod:`secondbrain.lifecycle`.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Response
from fastapi.responses import StreamingResponse

from secondbrain import lifecycle
from secondbrain.ports import JobNotFailed, MetadataStore, SourceView
from secondbrain.titles import display_title
from services.ingest_gateway.api import job_json
from services.ingest_gateway.deps import CurrentUser, MetadataDep, ObjectsDep, RuntimeDep, VectorsDep, vectors_of

MAX_VERSIONS = 500


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt else None


router = APIRouter(tags=["your data"])


def detail(metadata: MetadataStore, user: str, source_id: str) -> dict[str, Any] | None:
    """A source with every version and its jobs; None when the user has no such source."""
    rows = metadata.catalog.list_sources(user, MAX_VERSIONS, 0, source_id=source_id)
    if not rows:
        return None
    versions: dict[str, dict[str, Any]] = {}
    for r in rows:  # newest job first
        key = r.artifact_id or f"job:{r.job_id}"
        v = versions.get(key)
        if v is None:
            v = versions[key] = _version(r)
        job = metadata.jobs.get_job(user, r.job_id) if r.job_id else None
        if job is not None:
            v["jobs"].append(job_json(job))
    newest = rows[0]
    ordered = sorted(versions.values(), key=lambda v: (v["version"] is None, -(v["version"] or 0)))
    current = next((v for v in ordered if v["version"] is not None and not v["superseded"]), None)
    return {"source_id": source_id, "source_uri": newest.source_uri,
            "title": display_title(newest.title, newest.source_uri),
            "modality": (current or {}).get("modality") or newest.modality, "status": newest.status,
            "current_version": current["version"] if current else None, "versions": ordered,
            "jobs": sum(len(v["jobs"]) for v in ordered),
            "tags": metadata.catalog.source_tags(user, [source_id]).get(source_id, [])}


@router.get("/v1/sources/{source_id}", summary="One source with every version and its jobs")
async def get_source(source_id: str, user: CurrentUser, metadata: MetadataDep) -> dict[str, Any]:
    """Every version of the source (newest first) with its document, raw file state and jobs
    (stages and status).  Another user's source is 404, like an unknown one."""
    out = await asyncio.to_thread(detail, metadata, user, source_id)
    if out is None:
        raise HTTPException(404, "no such source")
    return out


@router.get("/v1/sources/{source_id}/passages", summary="The indexed passages of a source's current version")
async def get_passages(source_id: str, user: CurrentUser, metadata: MetadataDep,
                       store: VectorsDep) -> dict[str, Any]:
    """The passages of the current version in reading order, each with its text and where it is
    (page, second, heading).  Another user's source is 404, like an unknown one."""
    out = await asyncio.to_thread(detail, metadata, user, source_id)
    if out is None:
        raise HTTPException(404, "no such source")
    current = next((v for v in out["versions"] if v["version"] == out["current_version"]), None)
    document_id = current["document_id"] if current else None
    rows = await asyncio.to_thread(lifecycle.passages, store, user, document_id) if document_id else []
    return {"source_id": source_id, "document_id": document_id, "passages": rows}


@router.delete("/v1/sources/{source_id}", status_code=204, summary="Delete a source and all its versions")
async def delete_source(source_id: str, user: CurrentUser, metadata: MetadataDep, objects: ObjectsDep,
                        store: VectorsDep) -> Response:
    """Remove every version of the source from everywhere: jobs and their history, documents,
    indexed passages, the raw files and anything derived from them.  Work still in flight for
    it is dropped.  Uploading the same file again later starts afresh."""
    try:
        await asyncio.to_thread(lifecycle.delete_source, metadata, objects, store, user, source_id)
    except lifecycle.SourceNotFound:
        raise HTTPException(404, "no such source") from None
    return Response(status_code=204)


@router.delete("/v1/jobs/{job_id}", status_code=204, summary="Remove a capture that failed")
async def remove_failed(job_id: str, user: CurrentUser, metadata: MetadataDep, objects: ObjectsDep,
                        store: VectorsDep) -> Response:
    """Remove a failed capture from your list: its job, the earlier failed tries of the same file, and
    the original file when nothing else uses it (a version of the source that worked stays).  Only a
    failed capture can be removed this way (409 otherwise: delete its source instead); another
    user's job is 404, like an unknown one."""
    try:
        await asyncio.to_thread(lifecycle.remove_failed, metadata, objects, store, user, job_id)
    except lifecycle.JobNotFound:
        raise HTTPException(404, "no such job") from None
    except JobNotFailed as exc:
        raise HTTPException(409, f"only a capture that failed can be removed, and this one is {exc.status}; "
                                 "delete its source instead") from None
    return Response(status_code=204)


@router.get("/v1/export", summary="Download all your data as a ZIP archive",
            response_class=StreamingResponse,
            responses={200: {"content": {"application/zip": {}},
                             "description": "raw files, sources, documents with passages, conversations"}})
async def export(user: CurrentUser, metadata: MetadataDep, objects: ObjectsDep,
                 store: VectorsDep) -> StreamingResponse:
    """A ZIP with ``manifest.json``, ``sources.jsonl``, ``raw/<artifact id>/<file>``,
    ``documents/<document id>.json`` and ``conversations.jsonl``, streamed as it is made."""
    stamp = datetime.now(UTC)
    body = lifecycle.export_user(metadata, objects, store, user, now=stamp)
    name = f"secondbrain-export-{user}-{stamp.strftime('%Y%m%dT%H%M%SZ')}.zip"
    return StreamingResponse(body, media_type="application/zip", headers={
        "Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff"})


@router.delete("/v1/me", summary="Erase your account and everything in it")
async def erase_me(user: CurrentUser, rt: RuntimeDep, confirm: str | None = None) -> dict[str, Any]:
    """Remove your user, keys, sources, documents, passages, raw files and conversations for
    good.  Needs ``?confirm=<your user id>``: it cannot be undone (export first)."""
    if confirm != user:
        raise HTTPException(400, "erasing your account deletes everything you stored and cannot be undone "
                                 "(download a copy first with GET /v1/export); to confirm, repeat your "
                                 f"user id: DELETE /v1/me?confirm={user}")
    report = await asyncio.to_thread(lifecycle.erase_user, rt.metadata, rt.objects, vectors_of(rt), user)
    return {"erased": user, **report.to_json()}



def _version(r: SourceView) -> dict[str, Any]:
    return {"version": r.version, "superseded": r.superseded, "document_id": r.document_id,
            "artifact_id": r.artifact_id,
            "title": display_title(r.title, r.source_uri), "modality": r.modality, "content_type": r.content_type,
            "size_bytes": r.size_bytes, "chunk_count": r.chunk_count, "captured_at": _iso(r.captured_at),
            "ingested_at": _iso(r.ingested_at), "raw": lifecycle.raw_state(r.artifact_id, r.raw_purged_at),
            "raw_url": f"/v1/artifacts/{r.artifact_id}/raw" if r.artifact_id and not r.raw_purged_at else None,
            "jobs": []}
