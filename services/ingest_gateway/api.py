"""The ingest gateway's HTTP API: accept captures, track jobs, list sources.

A submission stores the raw bytes first, then writes the artifact, the job and the
outgoing ``artifacts.submitted`` message in one Postgres transaction and answers 202 with
the job id.  The outbox relay publishes the message; Kafka being down never loses a
submission.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import uuid
from datetime import UTC, datetime
from typing import IO, Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Header, HTTPException, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from secondbrain import ids, keys
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import topics
from secondbrain.ports import ArtifactRecord, JobView, OutboxMessage, SourceView
from secondbrain.runtime import Runtime
from services.ingest_gateway.relay import OutboxRelay

COPY_BLOCK = 1024 * 1024


class NoteIn(BaseModel):
    """A note typed or pasted by the user (Markdown welcome)."""

    text: str = Field(min_length=1, description="The note's text (Markdown).")
    title: str | None = Field(None, max_length=500)
    captured_at: datetime | None = Field(None, description="When the note's content happened (ISO 8601).")


class Accepted(BaseModel):
    """The answer to a submission."""

    job_id: str
    artifact_id: str
    status: str
    status_url: str


def aware(dt: datetime | None) -> datetime | None:
    """Times without a zone are taken as UTC (the API documents this)."""
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def job_json(job: JobView) -> dict[str, Any]:
    """A job as JSON."""
    return {
        "job_id": job.job_id, "artifact_id": job.artifact_id, "status": job.status, "error": job.error,
        "title": job.title, "source_uri": job.source_uri, "duplicate_of": job.duplicate_of,
        "created_at": job.created_at.isoformat(), "updated_at": job.updated_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "stages": [
            {"stage": s.stage, "status": s.status, "attempts": s.attempts, "detail": s.detail,
             "started_at": s.started_at.isoformat() if s.started_at else None,
             "finished_at": s.finished_at.isoformat() if s.finished_at else None}
            for s in job.stages
        ],
    }


def source_json(s: SourceView) -> dict[str, Any]:
    """A source as JSON."""
    return {
        "source_id": s.source_id, "artifact_id": s.artifact_id, "document_id": s.document_id,
        "job_id": s.job_id, "title": s.title, "source_uri": s.source_uri, "content_type": s.content_type,
        "modality": s.modality, "size_bytes": s.size_bytes, "status": s.status,
        "captured_at": s.captured_at.isoformat() if s.captured_at else None,
        "ingested_at": s.ingested_at.isoformat(), "chunk_count": s.chunk_count,
    }


def create_router(rt: Runtime, relay: OutboxRelay | None, current_user: Any) -> APIRouter:
    """The gateway's routes, bound to a runtime; ``current_user`` is the auth dependency."""
    router = APIRouter(tags=["ingest"])
    s = rt.settings
    auth = Depends(current_user)

    def submit(user: str, *, data: bytes | IO[bytes], size: int, sha256: str, content_type: str,
               filename: str | None, title: str | None, captured_at: datetime | None, source_uri: str,
               idempotency_key: str | None, attributes: dict[str, str]) -> Accepted:
        artifact_id = ids.artifact_id(user, sha256)
        object_key = keys.artifact_key(user, artifact_id)
        if rt.objects.stat(object_key) is None:  # same bytes already stored: keep one copy
            rt.objects.put(object_key, data, size=size, content_type=content_type)
        job_id = ids.job_id(user, idempotency_key or str(uuid.uuid4()))
        now = datetime.now(UTC)
        event = ArtifactSubmitted(
            event_id=ids.event_id(job_id, "submitted"), job_id=job_id, user_id=user, source_uri=source_uri,
            source_id=ids.source_id(user, source_uri), artifact_id=artifact_id, content_type=content_type,
            filename=filename, title=title, object_key=object_key, content=None, size_bytes=size,
            sha256=sha256, captured_at=captured_at, submitted_at=now, producer="gateway", attributes=attributes,
        )
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=user, source_id=event.source_id or "", source_uri=source_uri,
            object_key=object_key, content_type=content_type, size_bytes=size, sha256=sha256,
            filename=filename, title=title, captured_at=captured_at, submitted_at=now, producer="gateway",
            attributes=attributes,
        )
        message = OutboxMessage(topic=rt.names(topics.ARTIFACTS_SUBMITTED), key=user.encode(),
                                value=rt.codec.encode(event), headers=rt.codec.headers(event))
        result = rt.metadata.submit(record, job_id, [message])
        return Accepted(job_id=result.job_id, artifact_id=artifact_id, status="queued",
                        status_url=f"/v1/jobs/{result.job_id}")

    def accepted(body: Accepted) -> JSONResponse:
        if relay is not None:
            relay.wake()
        return JSONResponse(body.model_dump(), status_code=202, headers={"Location": body.status_url})

    @router.post("/v1/notes", status_code=202, response_model=Accepted, summary="Capture a note")
    async def post_note(note: NoteIn, user: str = auth,
                        idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
        if len(note.text) > s.max_note_chars:
            raise HTTPException(413, f"the note has {len(note.text)} characters; the limit is {s.max_note_chars}."
                                     " Upload it as a file instead.")
        if not note.text.strip():
            raise HTTPException(422, "the note is empty")
        raw = note.text.encode("utf-8")
        sha = hashlib.sha256(raw).hexdigest()
        body = await asyncio.to_thread(
            submit, user, data=raw, size=len(raw), sha256=sha, content_type="text/markdown", filename=None,
            title=note.title, captured_at=aware(note.captured_at), source_uri=f"note:{uuid.uuid4()}",
            idempotency_key=idempotency_key, attributes={"kind": "note"},
        )
        return accepted(body)

    @router.post("/v1/artifacts", status_code=202, response_model=Accepted, summary="Upload a file")
    async def post_artifact(
        request: Request,
        file: Annotated[UploadFile, File(description="The file to ingest.")],
        user: str = auth,
        title: Annotated[str | None, Form(max_length=500)] = None,
        captured_at: Annotated[datetime | None, Form()] = None,
        idempotency_key: Annotated[str | None, Header()] = None,
    ) -> JSONResponse:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > s.max_upload_bytes + 64 * 1024:
            raise HTTPException(413, f"the upload is over the {s.max_upload_bytes}-byte limit "
                                     "(SB_MAX_UPLOAD_BYTES); split the file or raise the limit.")
        filename = _safe_filename(file.filename)
        spooled, size, sha = await asyncio.to_thread(_hash_and_copy, file.file, s.max_upload_bytes)
        try:
            if size == 0:
                raise HTTPException(422, "the file is empty: there is nothing to ingest")
            content_type = (file.content_type or "application/octet-stream").split(";")[0].strip().lower()
            body = await asyncio.to_thread(
                submit, user, data=spooled, size=size, sha256=sha, content_type=content_type,
                filename=filename, title=title, captured_at=aware(captured_at),
                source_uri=f"file:{filename or sha[:16]}", idempotency_key=idempotency_key, attributes={},
            )
        finally:
            spooled.close()
        return accepted(body)

    @router.get("/v1/jobs/{job_id}", summary="Job status with per-stage progress")
    async def get_job(job_id: str, user: str = auth) -> dict[str, Any]:
        job = await asyncio.to_thread(rt.metadata.get_job, user, job_id)
        if job is None:
            raise HTTPException(404, "no such job")
        out = job_json(job)
        out["events"] = [
            {**e, "at": e["at"].isoformat() if hasattr(e.get("at"), "isoformat") else e.get("at")}
            for e in await asyncio.to_thread(rt.metadata.job_events, user, job_id)
        ]
        return out

    @router.get("/v1/sources", summary="What was ingested, newest first")
    async def get_sources(user: str = auth, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        limit = max(1, min(limit, 500))
        rows = await asyncio.to_thread(rt.metadata.list_sources, user, limit, max(0, offset))
        return {"sources": [source_json(r) for r in rows], "limit": limit, "offset": offset}

    return router


def _safe_filename(name: str | None) -> str | None:
    """Keep only the last path component of a client-supplied name (no directories, no NUL)."""
    if not name:
        return None
    base = name.replace("\\", "/").split("/")[-1].replace("\x00", "").strip()
    return base[:255] or None


def _hash_and_copy(src: IO[bytes], limit: int) -> tuple[IO[bytes], int, str]:
    """Copy an upload to a temporary file while hashing it, refusing it past ``limit`` bytes."""
    h = hashlib.sha256()
    size = 0
    out = tempfile.TemporaryFile()  # noqa: SIM115 - handed to the caller, who closes it
    while block := src.read(COPY_BLOCK):
        size += len(block)
        if size > limit:
            out.close()
            raise HTTPException(413, f"the upload is over the {limit}-byte limit (SB_MAX_UPLOAD_BYTES); "
                                     "split the file or raise the limit.")
        h.update(block)
        out.write(block)
    out.seek(0)
    return out, size, h.hexdigest()
