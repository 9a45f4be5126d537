"""The ingest gateway's HTTP API: accept captures, track jobs, list sources.

A submission stores the raw bytes first, then writes the artifact, the job and the
outgoing ``artifacts.submitted`` message in one Postgres transaction and answers 202 with
the job id.  The outbox relay publishes the message; Kafka being down never loses a
submission.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from secondbrain.errors import failure_sentence
from secondbrain.events.models import unsaid_capture
from secondbrain.http_security import short
from secondbrain.ids import normalise_url
from secondbrain.pipeline.relay import OutboxRelay
from secondbrain.ports import FINISHED_JOB_STATUSES, JobStatus, JobView, MetadataStore, Principal, SourceView
from secondbrain.settings import Settings
from secondbrain.submissions import Submissions, Submitted
from secondbrain.submissions import private_target as _private_target
from secondbrain.tags import normalise_tags
from secondbrain.titles import display_title
from secondbrain.uploads import read_form, read_multipart, read_raw
from secondbrain.validation import Text, capture_time, text_problem
from services.http_helpers import PendingCaptures, backlog_refusal
from services.http_helpers import aware as aware_in
from services.ingest_gateway.deps import (
    CurrentUser,
    MetadataDep,
    NetworksDep,
    ObjectsDep,
    RelayDep,
    SettingsDep,
    SubmissionsDep,
)
from services.ingest_gateway.share import MAX_SHARED_FILES, read_small_form, split_share

COPY_BLOCK = 1024 * 1024


class NoteIn(BaseModel):
    """A note typed or pasted by the user (Markdown welcome)."""

    text: Text = Field(min_length=1, description="The note's text (Markdown).")
    title: Text | None = Field(None, max_length=500)
    captured_at: datetime | None = Field(None, description="When the note's content happened (ISO 8601).")


class UrlIn(BaseModel):
    """A web page to fetch and remember."""

    url: Text = Field(min_length=8, max_length=8192, description="An http(s) URL.")
    title: Text | None = Field(None, max_length=500)
    captured_at: datetime | None = Field(None, description="When the content happened (ISO 8601).")


class PageIn(BaseModel):
    """A web page as the browser showed it: its address, title and rendered text (a page behind a
    sign-in, which the fetcher cannot reach, is saved this way by the browser extension)."""

    url: Text = Field(min_length=8, max_length=8192, description="The page's http(s) URL (kept as its source).")
    title: Text | None = Field(None, max_length=500)
    text: Text = Field(min_length=1, description="The page's text as rendered (e.g. document.body.innerText).")


class Already(BaseModel):
    """The source a submission's bytes are already kept as (the new job ends as its duplicate)."""

    job_id: str = Field(description="The job that took the same bytes in first.")
    title: str | None = Field(description="The name the source is listed under.")
    added_at: datetime = Field(description="When it was added.")
    message: str = Field(description='A sentence for people, e.g. "Already in your memory as receipt.jpg, '
                                     '21 Nov."')


class Accepted(BaseModel):
    """The answer to a submission."""

    job_id: str
    artifact_id: str | None
    status: str
    status_url: str
    already: Already | None = Field(default=None, description=(
        "Set when the same bytes are already in your memory: the capture is not kept twice (its job ends as "
        "``duplicate`` and it is not listed in ``GET /v1/sources``). Never told to a capture key."))


def aware(dt: datetime | None) -> datetime | None:
    """Times without a zone are taken as UTC (the API documents this)."""
    return aware_in(dt, UTC)


def job_json(job: JobView) -> dict[str, Any]:
    """A job as JSON."""
    return {
        "job_id": job.job_id, "artifact_id": job.artifact_id, "status": job.status, "error": job.error,
        # failed: the reason as a sentence for people (the page shows it as written), and whether trying
        # again may help (the failure was of the moment or of the server's set-up, not of the file)
        "reason": failure_sentence(job.error, retryable=job.retryable) if job.status == "failed" else None,
        "retryable": job.retryable,
        "title": display_title(job.title, job.source_uri),
        "source_uri": job.source_uri, "duplicate_of": job.duplicate_of, "superseded_by": job.superseded_by,
        "created_at": job.created_at.isoformat(), "updated_at": job.updated_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "stages": [
            {"stage": s.stage, "status": s.status, "attempts": s.attempts, "detail": s.detail,
             "started_at": s.started_at.isoformat() if s.started_at else None,
             "finished_at": s.finished_at.isoformat() if s.finished_at else None}
            for s in job.stages
        ],
    }


# What a capture key is told of a finished job: that it was taken in, never whether the same thing was there
# already (a duplicate), what replaced it or what the stages did, so that it learns nothing of what is stored.
CAPTURE_STATUS = {"succeeded": "accepted", "duplicate": "accepted", "superseded": "accepted"}


def capture_job_json(job: JobView) -> dict[str, Any]:
    """A job as a capture key (a browser extension's) sees one of its own: ``queued``, ``running``,
    ``accepted`` (taken in: searchable, or the same as something already there) or ``failed`` with why."""
    failed = job.status == "failed"
    return {"job_id": job.job_id, "status": CAPTURE_STATUS.get(job.status, job.status),
            "reason": failure_sentence(job.error, retryable=job.retryable) if failed else None,
            "created_at": job.created_at.isoformat(),
            "finished": job.status in FINISHED_JOB_STATUSES}


def _capture_key(request: Request) -> Principal | None:
    """The request's principal when it is a capture key (which follows only the jobs it made)."""
    principal: Principal | None = getattr(request.state, "principal", None)
    return principal if principal is not None and principal.scope == "capture" else None


async def _owned(request: Request, metadata: MetadataStore, done: Submitted) -> None:
    """A capture key's new job is remembered as its own (the only jobs it may follow)."""
    key = _capture_key(request)
    if key is not None and key.key_id and done.created:
        await asyncio.to_thread(metadata.jobs.note_key_job, key.user_id, key.key_id, done.job_id)


async def _job_for(request: Request, metadata: MetadataStore, user: str, job_id: str) -> JobView:
    """The user's job, or 404; for a capture key only one it made itself (another is as unknown)."""
    key = _capture_key(request)
    if key is not None:
        mine: bool = bool(key.key_id) and await asyncio.to_thread(metadata.jobs.made_by_key, user,
                                                                   str(key.key_id), job_id)
        if not mine:
            raise HTTPException(404, "no such job")
    job = await asyncio.to_thread(metadata.jobs.get_job, user, job_id)
    if job is None:
        raise HTTPException(404, "no such job")
    return job


def source_json(s: SourceView) -> dict[str, Any]:
    """A source as JSON."""
    return {
        "source_id": s.source_id, "artifact_id": s.artifact_id, "document_id": s.document_id,
        "job_id": s.job_id, "title": display_title(s.title, s.source_uri),
        "source_uri": s.source_uri, "content_type": s.content_type,
        "modality": s.modality, "size_bytes": s.size_bytes, "status": s.status, "error": s.error,
        "reason": failure_sentence(s.error, retryable=s.retryable) if s.status == "failed" else None,
        "retryable": s.retryable,
        "captured_at": s.captured_at.isoformat() if s.captured_at else None,
        "ingested_at": s.ingested_at.isoformat(), "chunk_count": s.chunk_count,
        "version": s.version, "superseded": s.superseded,
        # kept | expired (removed by SB_RAW_RETENTION_DAYS; the text stays searchable) | None (not stored yet)
        "raw": None if s.artifact_id is None else ("expired" if s.raw_purged_at else "kept"),
    }


router = APIRouter(tags=["ingest"])
SOURCE_URI_HELP = ("Where the file lives for good, e.g. file:///home/me/notes/a.md: the same one again is a new "
                   "version of the same source (default: file:<its name>).")


def check_backlog(pending: int, settings: Settings) -> None:
    """Backpressure: a user who floods the queue waits for their own work, everyone else keeps going
    (``pending``: the backlog, read with the request's key in the same round trip, :data:`PendingCaptures`)."""
    refusal = backlog_refusal(settings, pending, retry_after_s=10, then=(
        "wait for some to finish (GET /v1/jobs/<id> or `secondbrain jobs`) and send the rest then."))
    if refusal is not None:
        raise refusal


def accepted(done: Submitted | Accepted, relay: OutboxRelay | None, already: Already | None = None) -> JSONResponse:
    body = done if isinstance(done, Accepted) else _accepted_body(done)
    if already is not None:
        body = body.model_copy(update={"already": already})
    if relay is not None:
        relay.wake()
    return JSONResponse(body.model_dump(mode="json"), status_code=202, headers={"Location": body.status_url})


def already_sentence(title: str | None, added_at: datetime, tz: str, today: datetime | None = None) -> str:
    """"Already in your memory as receipt.jpg, 21 Nov." (the year when it is not this year's)."""
    zone = ZoneInfo(tz)
    local = added_at.astimezone(zone)
    now = (today or datetime.now(UTC)).astimezone(zone)
    day = f"{local.day} {local:%b}" + (f" {local.year}" if local.year != now.year else "")
    return f"Already in your memory as {title or 'an earlier capture'}, {day}."


async def _already(request: Request, metadata: MetadataStore, settings: Settings, user: str,
                   done: Submitted) -> Already | None:
    """The source the submitted bytes are already kept as, if any; never for a capture key (which learns
    nothing of what is stored)."""
    # The intake read the earlier copy in its own statement: a new capture costs no lookup here.
    original = done.original_job
    if _capture_key(request) is not None or done.artifact_id is None or original is None:
        return None
    job = await asyncio.to_thread(metadata.jobs.get_job, user, original)
    if job is None:
        return None
    title = display_title(job.title, job.source_uri)
    return Already(job_id=original, title=title, added_at=job.created_at,
                   message=already_sentence(title, job.created_at, settings.timezone))


@router.post("/v1/notes", status_code=202, response_model=Accepted, summary="Capture a note")
async def post_note(note: NoteIn, request: Request, user: CurrentUser, pending: PendingCaptures, settings: SettingsDep,
                    submissions: SubmissionsDep, relay: RelayDep,
                    idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
    if len(note.text) > settings.max_note_chars:
        raise HTTPException(413, f"the note has {len(note.text)} characters; the limit is {settings.max_note_chars}."
                                 " Upload it as a file instead.")
    if not note.text.strip():
        raise HTTPException(422, "the note is empty")
    check_backlog(pending, settings)
    raw = note.text.encode("utf-8")
    sha = hashlib.sha256(raw).hexdigest()
    body = await asyncio.to_thread(
        submissions.file, user, data=raw, size=len(raw), sha256=sha, content_type="text/markdown", filename=None,
        title=note.title, captured_at=aware(note.captured_at), source_uri=f"note:{uuid.uuid4()}",
        idempotency_key=idempotency_key, attributes={"kind": "note"}, capture="note",
    )
    await _owned(request, submissions.rt.metadata, body)
    return accepted(body, relay, await _already(request, submissions.rt.metadata, settings, user, body))


@router.post("/v1/artifacts", status_code=202, response_model=Accepted, summary="Upload a file",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["file"], "properties": {
                     "file": {"type": "string", "format": "binary"}, "title": {"type": "string"},
                     "captured_at": {"type": "string", "format": "date-time"},
                     "source_uri": {"type": "string", "description": SOURCE_URI_HELP}}}}}}})
async def post_artifact(request: Request, user: CurrentUser, pending: PendingCaptures,
                        settings: SettingsDep, submissions: SubmissionsDep,
                        relay: RelayDep,
                        idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
    """Upload one file as multipart/form-data (field ``file``, optional ``title`` and
    ``captured_at``), or as the raw body with its name in ``X-Filename``.  The body is read
    as it streams in and refused with 413 as soon as it passes the limit.  ``source_uri`` (or
    ``X-Source-URI``) names the file for good, e.g. ``file:///home/me/notes/a.md``: uploading
    under the same one again makes a new version of the same source."""
    # A Content-Length over the limit was refused before this route ran (secondbrain.http_security).
    check_backlog(pending, settings)  # before reading the body: no point receiving what must wait
    header = request.headers.get("content-type", "")
    if header.lower().startswith("multipart/form-data"):
        upload = await read_multipart(request.stream(), header, limit=settings.max_upload_bytes)
    else:
        upload = await read_raw(request.stream(), limit=settings.max_upload_bytes,
                                filename=request.headers.get("x-filename"), content_type=header or None)
    try:
        for name, value in (("title", upload.fields.get("title")), ("file name", upload.filename),
                            ("captured_at", upload.fields.get("captured_at"))):
            problem = text_problem(value or "")
            if problem:
                raise HTTPException(422, f"the {name} {problem}")
        source_uri = _source_uri(upload.fields.get("source_uri") or request.headers.get("x-source-uri"))
        title = (upload.fields.get("title") or "").strip()[:500] or None
        captured_at = _parse_time(upload.fields.get("captured_at"))
        if upload.size == 0:
            raise HTTPException(422, "the file is empty: there is nothing to ingest")
        filename = _safe_filename(upload.filename)
        # Parameters stay (a declared charset matters for text); the extractor trusts the bytes.
        content_type = (upload.content_type or "application/octet-stream").strip().lower()[:200]
        body = await asyncio.to_thread(
            submissions.file, user, data=upload.file, size=upload.size, sha256=upload.sha256,
            content_type=content_type, filename=filename, title=title, captured_at=captured_at,
            source_uri=source_uri or f"file:{filename or upload.sha256[:16]}", idempotency_key=idempotency_key,
            attributes={}, capture="upload",
        )
    finally:
        upload.close()
    await _owned(request, submissions.rt.metadata, body)
    return accepted(body, relay, await _already(request, submissions.rt.metadata, settings, user, body))


@router.post("/v1/urls", status_code=202, response_model=Accepted, summary="Fetch and remember a web page")
async def post_url(page: UrlIn, request: Request, user: CurrentUser, pending: PendingCaptures, settings: SettingsDep,
                   submissions: SubmissionsDep, relay: RelayDep, networks: NetworksDep,
                   idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
    """Queue a web page: the fetcher downloads it (robots.txt, timeouts and size limits apply),
    the snapshot is kept, and its main content is indexed.  The same URL again is a new version."""
    url = page.url.strip()
    if not url.lower().startswith(("http://", "https://")) or "://" not in url or not url.split("://", 1)[1]:
        raise HTTPException(422, "only http and https URLs can be fetched, e.g. https://example.org/post")
    refusal = None if settings.fetch_allow_private else _private_target(url, networks)
    if refusal:
        raise HTTPException(422, refusal)
    check_backlog(pending, settings)
    done = await asyncio.to_thread(submissions.url, user, url, page.title, aware(page.captured_at), idempotency_key)
    await _owned(request, submissions.rt.metadata, done)
    return accepted(done, relay)


@router.post("/v1/pages", status_code=202, response_model=Accepted,
             summary="Remember a web page's rendered text (sent by the browser)")
async def post_page(page: PageIn, request: Request, user: CurrentUser, pending: PendingCaptures, settings: SettingsDep,
                    submissions: SubmissionsDep, relay: RelayDep,
                    idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
    """The text of a page as the browser rendered it, for pages the fetcher cannot see (behind a
    sign-in).  Nothing is fetched.  The URL without its fragment is the source, as for ``POST
    /v1/urls``: the same page saved again, or fetched, is a new version of one source, and the same
    text again is a duplicate.  Dated now: when the person saw it."""
    url = page.url.strip()
    if not url.lower().startswith(("http://", "https://")) or not url.split("://", 1)[1].strip("/"):
        raise HTTPException(422, "only pages with an http or https address can be saved, e.g. "
                                 "https://example.org/post (not a browser's own or a file: page)")
    if len(page.text) > settings.max_note_chars:
        raise HTTPException(413, f"the page's text has {len(page.text)} characters; the limit is "
                                 f"{settings.max_note_chars} (SB_MAX_NOTE_CHARS). Save a selection instead.")
    if not page.text.strip():
        raise HTTPException(422, "the page has no text to save")
    check_backlog(pending, settings)
    raw = page.text.encode("utf-8")
    title = (page.title or "").strip() or None
    body = await asyncio.to_thread(
        submissions.file, user, data=raw, size=len(raw), sha256=hashlib.sha256(raw).hexdigest(),
        content_type="text/plain; charset=utf-8", filename=None, title=title,
        # No time: the extractor dates it when it is taken in, i.e. now (and a retry with the same
        # Idempotency-Key still asks for the same thing).
        captured_at=None, source_uri=normalise_url(url), idempotency_key=idempotency_key,
        attributes={"kind": "page"}, capture="page",
    )
    await _owned(request, submissions.rt.metadata, body)
    return accepted(body, relay, await _already(request, submissions.rt.metadata, settings, user, body))


async def queue_url(submissions: Submissions, user: str, url: str, title: str | None, captured_at: datetime | None,
                    idempotency_key: str | None) -> Accepted:
    return _accepted_body(await asyncio.to_thread(submissions.url, user, url, title, captured_at,
                                                  idempotency_key))


@router.post("/share", status_code=303, response_class=RedirectResponse,
             summary="What another app shares to the installed web app (Web Share Target)",
             responses={303: {"description": "to the page, which shows the captures' progress"}},
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "properties": {
                     "title": {"type": "string"}, "text": {"type": "string"}, "url": {"type": "string"},
                     "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}}})
async def post_share(request: Request, user: CurrentUser, pending: PendingCaptures,
                     settings: SettingsDep, submissions: SubmissionsDep,
                     relay: RelayDep, networks: NetworksDep) -> RedirectResponse:
    """The manifest's ``share_target``: the phone's share sheet posts ``title``, ``text``, ``url`` and
    ``files`` here as multipart/form-data.  The link is fetched as a web page (Android often sends it in
    ``text``), the words become a note, each file is uploaded; each through the same submission as
    ``/v1/urls``, ``/v1/notes`` and ``/v1/artifacts`` (limits, backlog, the same bytes kept once).  The
    answer is a redirect to the page with the new job ids, where their progress shows."""
    check_backlog(pending, settings)
    header = request.headers.get("content-type", "")
    if header.lower().startswith("multipart/form-data"):
        fields, uploads = await read_form(request.stream(), header, limit=settings.max_upload_bytes,
                                          file_field="files", max_files=MAX_SHARED_FILES)
    elif header.lower().startswith("application/x-www-form-urlencoded"):  # a share without files
        fields, uploads = await read_small_form(request.stream()), []
    else:
        raise HTTPException(415, "a share is sent as multipart/form-data (the web app's share target)")
    try:
        for name in ("title", "text", "url"):
            problem = text_problem(fields.get(name) or "")
            if problem:
                raise HTTPException(422, f"the shared {name} {problem}")
        shared = split_share(fields.get("title"), fields.get("text"), fields.get("url"))
        if shared.url and not settings.fetch_allow_private and _private_target(shared.url, networks):
            shared = split_share(shared.title, shared.text, shared.url, fetch=False)
        files = [u for u in uploads if u.size > 0]
        jobs: list[str] = []
        if shared.url:
            key = "share:" + hashlib.sha256(f"{shared.url}\x1f{shared.title}".encode()).hexdigest()
            jobs.append((await queue_url(submissions, user, shared.url, shared.title, None, key)).job_id)
        if shared.text:
            raw = shared.text.encode("utf-8")
            note = await asyncio.to_thread(
                submissions.file, user, data=raw, size=len(raw), sha256=hashlib.sha256(raw).hexdigest(),
                content_type="text/markdown", filename=None, title=shared.title if not shared.url else None,
                captured_at=None, source_uri=f"note:{uuid.uuid4()}", idempotency_key=None,
                attributes={"kind": "note"}, capture="note")
            jobs.append(note.job_id)
        for upload in files:
            filename = _safe_filename(upload.filename)
            alone = len(files) == 1 and not shared.url and not shared.text
            done = await asyncio.to_thread(
                submissions.file, user, data=upload.file, size=upload.size, sha256=upload.sha256,
                content_type=(upload.content_type or "application/octet-stream").strip().lower()[:200],
                filename=filename, title=(shared.title if alone else None) or filename, captured_at=None,
                # Named by its content: phones give many files the same name (image.jpg), and a name
                # would make each new one the next version of the last.
                source_uri=f"share:{upload.sha256[:32]}", idempotency_key=None, attributes={}, capture="upload")
            jobs.append(done.job_id)
    finally:
        for upload in uploads:
            upload.close()
    if jobs and relay is not None:
        relay.wake()
    return RedirectResponse("/?shared=" + ",".join(jobs), status_code=303)


MAX_JOBS_ASKED = 200  # ids in one ``GET /v1/jobs`` (about 8 KB of query): an importer follows a window of them


@router.get("/v1/jobs", summary="Status of several jobs at once")
async def get_jobs(user: CurrentUser, metadata: MetadataDep,
                   ids: Annotated[list[str], Query(alias="id", min_length=1, max_length=MAX_JOBS_ASKED,
                                                   description="A job id; repeat the parameter for each job.")],
                   ) -> dict[str, Any]:
    """Each job asked about as ``GET /v1/jobs/{id}`` shows it, without its event log, in the order asked, with
    one look at the database (an import follows thousands of captures); ids that are no job of the user
    (unknown, deleted with their source, or someone else's) are listed under ``unknown``."""
    asked = list(dict.fromkeys(ids))
    found = await asyncio.to_thread(metadata.jobs.get_jobs, user, asked)
    return {"jobs": [job_json(found[j]) for j in asked if j in found],
            "unknown": [j for j in asked if j not in found]}


@router.get("/v1/jobs/{job_id}", summary="Job status with per-stage progress")
async def get_job(job_id: str, request: Request, user: CurrentUser, metadata: MetadataDep) -> dict[str, Any]:
    """The job with its stages and events; a capture key sees only a job it made, and only how it went
    (``accepted`` once taken in, whether or not the same thing was there already)."""
    job = await _job_for(request, metadata, user, job_id)
    if _capture_key(request) is not None:
        return capture_job_json(job)
    out = job_json(job)
    out["events"] = [
        {**e, "at": e["at"].isoformat() if hasattr(e.get("at"), "isoformat") else e.get("at")}
        for e in await asyncio.to_thread(metadata.jobs.job_events, user, job_id)
    ]
    return out


@router.get("/v1/jobs/{job_id}/stream", summary="Live job progress as server-sent events")
async def stream_job(job_id: str, request: Request, user: CurrentUser, metadata: MetadataDep,
                     poll_s: float = 0.25) -> EventSourceResponse:
    """A ``job`` event (the same JSON as ``GET /v1/jobs/{id}``) whenever the job changes, ending
    with the finished job; a job of another user is 404, like an unknown one."""
    first: JobView | None = await _job_for(request, metadata, user, job_id)
    interval = min(max(poll_s, 0.05), 5.0)
    shown = capture_job_json if _capture_key(request) is not None else job_json

    async def events() -> AsyncIterator[dict[str, str]]:
        last: str | None = None
        job: JobView | None = first
        while True:
            if job is None:
                return  # deleted meanwhile
            body = json.dumps(shown(job))
            if body != last:
                yield {"event": "job", "data": body}
                last = body
            if job.status in FINISHED_JOB_STATUSES:
                return
            await asyncio.sleep(interval)
            job = await asyncio.to_thread(metadata.jobs.get_job, user, job_id)

    return EventSourceResponse(events(), ping=15)


@router.post("/v1/jobs/{job_id}/retry", status_code=202, response_model=Accepted,
             summary="Try a failed capture again")
async def retry_job(job_id: str, request: Request, user: CurrentUser, pending: PendingCaptures,
                    settings: SettingsDep, metadata: MetadataDep,
                    objects: ObjectsDep, submissions: SubmissionsDep, relay: RelayDep,
                    networks: NetworksDep) -> JSONResponse:
    """Submit a failed capture's stored file again, as a new job (a web page that could not be
    fetched is fetched again).  Only a failed job can be retried; another user's job is 404,
    like an unknown one."""
    job = await asyncio.to_thread(metadata.jobs.get_job, user, job_id)
    if job is None:
        raise HTTPException(404, "no such job")
    if job.status != "failed":
        raise HTTPException(409, f"only a failed capture can be tried again, and this one is {job.status}")
    check_backlog(pending, settings)
    if job.artifact_id is None:  # nothing stored: a page whose fetch failed
        url = job.source_uri or ""
        if not url.lower().startswith(("http://", "https://")):
            raise HTTPException(409, "nothing was stored for this capture, so it cannot be tried again; "
                                     "add it again instead")
        refusal = None if settings.fetch_allow_private else _private_target(url, networks)
        if refusal:
            raise HTTPException(422, refusal)
        return accepted(await queue_url(submissions, user, url, job.title, None, None), relay)
    record = await asyncio.to_thread(metadata.catalog.get_artifact, user, job.artifact_id)
    if record is None or record.raw_purged_at is not None or \
            await asyncio.to_thread(objects.stat, record.object_key) is None:
        raise HTTPException(410, "the original file of this capture is no longer kept, so it cannot be "
                                 "tried again; add the file again instead")
    body = await asyncio.to_thread(
        submissions.register, user, record.artifact_id, record.object_key, size=record.size_bytes,
        sha256=record.sha256,
        content_type=record.content_type, filename=record.filename, title=record.title,
        captured_at=record.captured_at, source_uri=record.source_uri, idempotency_key=None,
        attributes=dict(record.attributes), capture=unsaid_capture(record.source_uri, record.attributes))
    return accepted(body, relay)


@router.get("/v1/sources", summary="What was ingested, newest first")
async def get_sources(user: CurrentUser, metadata: MetadataDep, limit: int = 50, offset: int = 0,
                      modality: str | None = None,
                      status: JobStatus | None = None,
                      start: Annotated[datetime | None, Query(alias="from")] = None,
                      end: Annotated[datetime | None, Query(alias="to")] = None,
                      copies: Annotated[bool, Query(description=(
                          "Also list re-sent copies of bytes already kept (jobs ended as duplicate)."))] = False,
                      tags: Annotated[list[str] | None, Query(
                          description="Only sources with every one of these tags (tags=a&tags=b, or tags=a,b).")
                      ] = None) -> dict[str, Any]:
    """One row per submission (each version of a source), newest first; a re-sent copy of bytes already
    kept (a ``duplicate``) is listed only when ``copies=true`` or ``status=duplicate`` asks for it.
    ``modality`` (pdf, web, audio, note...), ``status`` (queued, running, succeeded, failed, duplicate) and a captured
    time in [``from``, ``to``) narrow it (ISO 8601; without a zone, UTC; a capture whose time is
    not known yet counts as captured when it was submitted).  A failed submission is listed only
    while it is its source's newest (its retries and later uploads replace it here; every try stays
    in ``GET /v1/sources/{id}``); ``reason`` says why in a sentence, ``retryable`` whether trying
    again may help.  ``tags`` keeps the sources tagged with every one given; each row lists its ``tags``."""
    limit = max(1, min(limit, 500))
    wanted = normalise_tags(t for value in tags or () for t in value.split(",")) or None
    rows = await asyncio.to_thread(functools.partial(metadata.catalog.list_sources, user, limit, max(0, offset),
                                                     modality=modality, status=status, start=aware(start),
                                                     end=aware(end), failed_once=True,
                                                     duplicates=copies or status == "duplicate", tags=wanted))
    tagged = await asyncio.to_thread(metadata.catalog.source_tags, user,
                                     sorted({r.source_id for r in rows if r.source_id}))
    return {"sources": [{**source_json(r), "tags": tagged.get(r.source_id or "", [])} for r in rows],
            "limit": limit, "offset": offset}



def _accepted_body(done: Submitted) -> Accepted:
    return Accepted(job_id=done.job_id, artifact_id=done.artifact_id, status="queued",
                    status_url=f"/v1/jobs/{done.job_id}")


_URI_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,31}:\S", re.I)
# Schemes the server itself gives out: a client naming one would graft its upload onto a note or a page.
_RESERVED_SCHEMES = ("note:", "http:", "https:")


def _source_uri(value: str | None) -> str | None:
    """A client's name for an uploaded file's source; 422 when it is not a URI this server accepts."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    problem = text_problem(value)
    if problem:
        raise HTTPException(422, f"the source_uri {problem}")
    if len(value) > 2000 or not _URI_SCHEME.match(value) or value.lower().startswith(_RESERVED_SCHEMES):
        raise HTTPException(422, f"source_uri {short(value)!r} is not accepted: give a URI of at most 2000 "
                                 "characters such as file:///home/me/notes/a.md (not note:, http: or https:)")
    return value


def _safe_filename(name: str | None) -> str | None:
    """Keep only the last path component of a client-supplied name (no directories, no NUL)."""
    if not name:
        return None
    base = name.replace("\\", "/").split("/")[-1].replace("\x00", "").strip()
    return base[:255] or None


def _parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 form field as an aware datetime (UTC when it has no zone)."""
    try:
        return capture_time(value)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
