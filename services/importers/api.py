"""The import routes.

* ``POST /v1/imports``: an export file (a zip, an ``.enex``, a bookmarks ``.html``, a ``result.json``, a
  WhatsApp ``.txt``, ``My Clippings.txt``, a Readwise ``.csv``...) as multipart ``file`` (with ``format``,
  ``tz`` and ``date_order`` fields when wanted), read here: the web page's import.  Answers with what was
  found and done once every item is submitted.
* ``POST /v1/imports/batch``: captures a client already read from an export (``secondbrain import``), in
  batches (see :mod:`services.importers.wire`).  A batch is one request against the per-minute limit however
  many items it holds, so a person's own import is not throttled like interactive traffic; it waits, like
  any capture, while the person has ``SB_MAX_PENDING_JOBS`` captures in the pipeline.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from secondbrain.settings import Settings
from secondbrain.uploads import read_multipart, read_raw
from secondbrain.validation import text_problem
from services.importers import registry
from services.importers.archive import Export
from services.importers.deps import CaptureSubmitterDep, CurrentUser, RelayDep, SettingsDep
from services.importers.model import Conversation, ExportError, Options, Skipped
from services.importers.submit import CaptureSubmitter, Outcome, capture_from_json, conversation_from_json
from services.importers.wire import Batch, read_batch

MAX_ITEMS_PER_UPLOAD = 20_000
UNPACK_FACTOR = 20


def backlog_refusal(settings: Settings, pending: int) -> HTTPException | None:
    """429 while the person has ``SB_MAX_PENDING_JOBS`` captures in the pipeline (an import waits for them)."""
    if settings.max_pending_jobs <= 0 or pending < settings.max_pending_jobs:
        return None
    return HTTPException(429, f"you have {pending} captures still being processed (the limit is "
                              f"{settings.max_pending_jobs}); the import goes on once some have finished. "
                              "Operators can raise SB_MAX_PENDING_JOBS.", headers={"Retry-After": "5"})


def options_from(fields: dict[str, str], settings: Settings) -> Options:
    """The zone and date order an upload names (else the server's), or 422 with a sentence."""
    zone_name = (fields.get("tz") or settings.timezone or "UTC").strip()
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        raise HTTPException(422, f"tz {zone_name[:60]!r} is not a time zone name, e.g. Europe/Paris") from None
    order = (fields.get("date_order") or "").strip().lower() or None
    if order not in (None, "dmy", "mdy", "ymd"):
        raise HTTPException(422, "date_order is dmy, mdy or ymd")
    return Options(tz=zone, date_order=order)  # type: ignore[arg-type]


def import_export(submitter: CaptureSubmitter, user: str, name: str, fh: IO[bytes], forced: str | None,
                  options: Options) -> dict[str, Any]:
    """Read an uploaded export and submit every item; the summary as JSON.  Blocking."""
    limit = submitter.settings.max_upload_bytes
    # An uploaded zip may not unpack without bound (a zip bomb): a file at most an upload's size, the whole at most
    # UNPACK_FACTOR uploads.
    with Export.from_file(name, fh, entry_limit=limit, total_limit=UNPACK_FACTOR * limit) as export:
        detected = registry.detect(export, forced)
        outcomes: list[Outcome] = []
        skipped: list[Skipped] = []
        wave = 0
        for result in registry_results(detected.format, export, options):
            if len(outcomes) + len(skipped) >= MAX_ITEMS_PER_UPLOAD:
                skipped.append(Skipped("the rest of the export", f"an upload imports at most {MAX_ITEMS_PER_UPLOAD}"
                                       " items; import the rest with `secondbrain import`", export.name))
                break
            if isinstance(result, Skipped):
                skipped.append(result)
            elif isinstance(result, Conversation):
                outcomes.append(submitter.keep_conversation(user, result))
            else:
                if result.wave > wave:  # an item's next version: once the versions before it are indexed
                    wait_for(submitter, user, [o.job_id for o in outcomes if o.job_id])
                    wave = result.wave
                outcomes.append(submitter.submit(user, result))
    return summary(detected, outcomes, skipped)


WAVE_TIMEOUT_S = 600.0


def wait_for(submitter: CaptureSubmitter, user: str, job_ids: list[str], timeout_s: float = WAVE_TIMEOUT_S) -> None:
    """Until these jobs have finished (the versions of an export's items go in order), at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    pending = list(dict.fromkeys(job_ids))
    while pending and time.monotonic() < deadline:
        pending = [j for j in pending if (job := submitter.job(user, j)) is not None and job.status in
                   ("queued", "running")]
        if pending:
            time.sleep(0.5)


def registry_results(fmt: registry.Format, export: Export, options: Options) -> Any:
    """The format's results, with a failure of the export as a whole (past the first items) as a last skip."""
    try:
        yield from fmt.read(export, options)
    except (ExportError, OSError, ValueError) as exc:
        yield Skipped("the rest of the export", str(exc), export.name)


def summary(detected: registry.Detected, outcomes: list[Outcome], skipped: list[Skipped]) -> dict[str, Any]:
    count = {s: sum(1 for o in outcomes if o.status == s) for s in ("imported", "unchanged", "refused")}
    return {
        "format": detected.format.name, "label": detected.format.label, "found": detected.found,
        "also": [{"format": f.name, "label": f.label, "found": found} for f, found in detected.also],
        "items": len(outcomes) + len(skipped), **count,
        "duplicates": sum(1 for s in skipped if s.duplicate),
        "skipped": [{"label": s.label, "reason": s.reason, "origin": s.origin} for s in skipped if not s.duplicate],
        "refused_items": [o.json() for o in outcomes if o.status == "refused"],
        "jobs": [{"label": o.label, "job_id": o.job_id, "source_uri": o.source_uri, "new": o.status == "imported"}
                 for o in outcomes if o.job_id],
    }


def submit_batch(submitter: CaptureSubmitter, user: str, batch: Batch) -> list[dict[str, Any]]:
    """Submit each capture of a batch (and keep each conversation it carries); a bad one is refused with its
    reason, the others go on.  Blocking."""
    results: list[dict[str, Any]] = []
    conversations = batch.manifest.get("conversations") or []
    for n, item in enumerate(conversations if isinstance(conversations, list) else [], 1):
        try:
            if not isinstance(item, dict):
                raise ValueError(f"conversation {n} is not an object")
            results.append(submitter.keep_conversation(user, conversation_from_json(item)).json())
        except ValueError as exc:
            results.append({"label": f"conversation {n}", "source_uri": None, "status": "refused", "reason": str(exc)})
    for n, item in enumerate(batch.manifest["captures"], 1):
        if not isinstance(item, dict):
            results.append({"status": "refused", "reason": f"capture {n} is not an object"})
            continue
        label = str(item.get("label") or item.get("source_uri") or f"capture {n}")[:300]
        part = item.get("part")
        try:
            if part is not None and (not isinstance(part, str) or part not in batch.parts):
                raise ValueError(f"its part {str(part)[:60]!r} is not in the batch")
            content = batch.read(part) if isinstance(part, str) else b""
            capture = capture_from_json(item, content)
        except ValueError as exc:
            results.append({"label": label, "source_uri": item.get("source_uri"), "status": "refused",
                            "reason": str(exc)})
            continue
        outcome = submitter.submit(user, capture, content if part is not None else None)
        results.append({**outcome.json(), **job_state(submitter, user, outcome)})
    return results


def job_state(submitter: CaptureSubmitter, user: str, outcome: Outcome) -> dict[str, Any]:
    """For an item imported before: how its job ended (a client need not ask for each one again)."""
    if outcome.status != "unchanged" or outcome.job_id is None:
        return {}
    job = submitter.job(user, outcome.job_id)
    if job is None:
        return {}
    return {"job_status": job.status, "error": job.error}


router = APIRouter(tags=["import"])


def backlog(request: Request, settings: Settings) -> None:
    """Refuses an import while the person's backlog is full (read with the request's key)."""
    refusal = backlog_refusal(settings, getattr(request.state, "pending", 0))
    if refusal is not None:
        raise refusal


@router.post("/v1/imports", status_code=202, summary="Import another tool's export (read on the server)",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["file"], "properties": {
                     "file": {"type": "string", "format": "binary"},
                     "format": {"type": "string", "description": "force a format: " + registry.names()},
                     "tz": {"type": "string", "description": "the zone of times written without one"},
                     "date_order": {"type": "string", "enum": ["dmy", "mdy", "ymd"]}}}}}}})
async def post_import(request: Request, user: CurrentUser, settings: SettingsDep, submitter: CaptureSubmitterDep,
                      relay: RelayDep) -> JSONResponse:
    """Upload an export (multipart ``file``, or the raw body with its name in ``X-Filename``); its format
    is decided from its content (``format`` forces one).  Every item becomes a capture with its own time,
    title, tags and provenance; items imported before (unchanged) add nothing."""
    backlog(request, settings)
    header = request.headers.get("content-type", "")
    if header.lower().startswith("multipart/form-data"):
        upload = await read_multipart(request.stream(), header, limit=settings.max_upload_bytes)
    else:
        upload = await read_raw(request.stream(), limit=settings.max_upload_bytes,
                                filename=request.headers.get("x-filename"), content_type=header or None)
    try:
        if upload.size == 0:
            raise HTTPException(422, "the file is empty: there is nothing to import")
        for value in (upload.filename or "", *upload.fields.values()):
            problem = text_problem(value)
            if problem:
                raise HTTPException(422, f"a field {problem}")
        options = options_from(upload.fields, settings)
        name = (upload.filename or "export").replace("\\", "/").rsplit("/", 1)[-1][:255] or "export"
        try:
            body = await asyncio.to_thread(import_export, submitter, user, name, upload.file,
                                           upload.fields.get("format") or None, options)
        except ExportError as exc:
            raise HTTPException(422, str(exc)) from None
    finally:
        upload.close()
    if relay is not None:
        relay.wake()
    return JSONResponse(body, status_code=202)


@router.post("/v1/imports/batch", summary="Submit captures read from an export (secondbrain import)",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["manifest"], "properties": {
                     "manifest": {"type": "string", "description": "JSON {\"captures\": [...]}, each with "
                                  "source_uri, kind, title, captured_at, content_type, filename, url, "
                                  "attributes and the name of the part holding its bytes"}}}}}}})
async def post_batch(request: Request, user: CurrentUser, settings: SettingsDep, submitter: CaptureSubmitterDep,
                     relay: RelayDep) -> JSONResponse:
    """Captures a client read from an export, each submitted like ``POST /v1/imports`` would; one
    request however many captures (up to 1000 parts).  ``results`` says for each: ``imported`` (its job),
    ``unchanged`` (imported before: nothing written) or ``refused`` (why)."""
    backlog(request, settings)
    batch = await read_batch(request.stream(), request.headers.get("content-type", ""),
                             limit=settings.max_upload_bytes)
    try:
        results = await asyncio.to_thread(submit_batch, submitter, user, batch)
    finally:
        batch.close()
    if relay is not None:
        relay.wake()
    pending = getattr(request.state, "pending", 0)
    return JSONResponse({"results": results, "pending": pending + sum(r["status"] == "imported" for r in results),
                         "max_pending": settings.max_pending_jobs})


