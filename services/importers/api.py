"""The import routes.

* ``POST /v1/imports``: an export file (a zip, an ``.enex``, a bookmarks ``.html``, a ``result.json``, a
  WhatsApp ``.txt``, ``My Clippings.txt``, a Readwise ``.csv``...) as multipart ``file`` (with ``format``,
  ``tz`` and ``date_order`` fields when wanted), read here: the web page's import.  Answers with what was
  found and done once the items are submitted.  Its items count against the person's backlog
  (``SB_MAX_PENDING_JOBS``): when the backlog is full the import pauses there, and the answer says so with
  ``Retry-After`` and where to go on (``resume_from``, sent back with the same file).  A client that goes
  away stops it at the next item.  A zip whose files cannot be read (a wrong checksum, cut short, encrypted)
  is refused with 422 naming them, unless other files of it went in (then they are named in the summary).
* ``POST /v1/imports/batch``: captures a client already read from an export (``secondbrain import``), in
  batches (see :mod:`services.importers.wire`).  A batch is one request against the per-minute limit however
  many items it holds, so a person's own import is not throttled like interactive traffic; it takes as many
  as the person's backlog has room for, and answers the rest ``waiting`` (with ``Retry-After``), to be sent
  again.  Notes and chats keep the note limit of ``POST /v1/notes`` (``SB_MAX_NOTE_CHARS``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import IO, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from secondbrain.settings import Settings
from secondbrain.uploads import read_multipart, read_raw
from secondbrain.validation import text_problem
from services.http_helpers import PendingCaptures, backlog_refusal
from services.importers import registry
from services.importers.archive import Export
from services.importers.deps import CaptureSubmitterDep, CurrentUser, RelayDep, SettingsDep
from services.importers.model import Capture, Conversation, Distinct, ExportError, Options, Skipped, failure
from services.importers.submit import CaptureSubmitter, Outcome, capture_from_json, conversation_from_json
from services.importers.wire import Batch, read_batch

log = logging.getLogger(__name__)

MAX_ITEMS_PER_UPLOAD = 20_000
FILE_AT_ONCE = 50  # items of an upload filed together (a progress line every 0.5 s still moves)
UNPACK_FACTOR = 20
RETRY_AFTER_S = 10  # how long an import paused for the backlog waits before it goes on
DISCONNECT_POLL_S = 0.5


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


@dataclass(frozen=True, slots=True)
class Room:
    """How many new jobs an import may make now: the person's ``SB_MAX_PENDING_JOBS`` less what they already
    have in the pipeline (None: no limit)."""

    left: int | None
    pending: int
    limit: int

    @classmethod
    def of(cls, settings: Settings, pending: int) -> Room:
        limit = settings.max_pending_jobs
        return cls(None if limit <= 0 else max(0, limit - pending), pending, limit)

    def paused(self, made: int, resume_from: int | None) -> dict[str, Any]:
        """What the summary says when the import stops to let the pipeline catch up."""
        again = "send the same file again with resume_from" if resume_from is not None else "send the rest again"
        return {"reason": f"you have {self.pending + made} captures still being processed (the limit is "
                          f"{self.limit}, SB_MAX_PENDING_JOBS): the import paused there so that your other "
                          f"captures, and other people's, are not held up; {again} once some have finished "
                          "(the web page and `secondbrain import` do this themselves). Nothing is imported twice.",
                "retry_after_s": RETRY_AFTER_S, "resume_from": resume_from}


class Ticker:
    """How far an import running in its thread has gone, for a client that follows it (``POST /v1/imports``
    with ``Accept: application/x-ndjson``): where it stands, how fast it goes, and what it did since the
    client was last told, all from one consistent point (an item counts once it is filed or skipped)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.begun = threading.Event()
        self.detected: registry.Detected | None = None
        self.total = 0
        self.first = self.at = 0  # where this request started, and the next item to read
        self.started = time.monotonic()
        self.outcomes: list[Outcome] = []
        self.skipped: list[Skipped] = []
        self.seen = (0, 0)  # how many outcomes and skips the point ``at`` covers
        self.told = (0, 0)  # how many of them a line already carried
        self.opened = False  # whether the first line (where this request starts) was given

    def begin(self, detected: registry.Detected, total: int, at: int, outcomes: list[Outcome],
              skipped: list[Skipped]) -> None:
        with self.lock:
            self.detected, self.total, self.first, self.at = detected, total, at, at
            self.outcomes, self.skipped, self.started = outcomes, skipped, time.monotonic()
        self.begun.set()

    def step(self, at: int) -> None:
        """Everything before item ``at`` is done (filed, kept, or skipped)."""
        with self.lock:
            self.at, self.seen = at, (len(self.outcomes), len(self.skipped))

    def line(self) -> dict[str, Any] | None:
        """Where the import stands, with what was done since the last line (``part``, a summary of it)."""
        with self.lock:
            if self.detected is None:
                return None
            if not self.opened:  # the first line says where this request starts, however far it got already
                self.opened = True
                return {"progress": {"done": self.first, "total": max(self.total, self.first), "rate": 0.0,
                                     "eta_s": None, "resume_from": self.first},
                        "part": summary(self.detected, [], [])}
            at, (o, s), (told_o, told_s) = self.at, self.seen, self.told
            self.told = (o, s)
            outcomes, skipped = self.outcomes[told_o:o], self.skipped[told_s:s]
            elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = (at - self.first) / elapsed
        total = max(self.total, at)
        eta = round((total - at) / rate) if rate > 0 else None
        return {"progress": {"done": at, "total": total, "rate": round(rate, 1), "eta_s": eta, "resume_from": at},
                "part": summary(self.detected, outcomes, skipped)}


def import_export(submitter: CaptureSubmitter, user: str, name: str, fh: IO[bytes], forced: str | None,
                  options: Options, room: Room | None = None, resume_from: int = 0,
                  cancel: threading.Event | None = None, ticker: Ticker | None = None) -> dict[str, Any]:
    """Read an uploaded export and submit its items, from the ``resume_from``-th on, as long as ``room``
    lasts and ``cancel`` is not set (the client went away, the server is stopping); the summary as JSON,
    and, with a ``ticker``, where it stands as it goes.  Blocking."""
    limit = submitter.settings.max_upload_bytes
    room = room or Room(None, 0, 0)
    cancel = cancel or threading.Event()
    # An uploaded zip may not unpack without bound (a zip bomb): a file at most an upload's size, the whole at most
    # UNPACK_FACTOR uploads.
    with Export.from_file(name, fh, entry_limit=limit, total_limit=UNPACK_FACTOR * limit) as export:
        detected = registry.detect(export, forced)
        outcomes: list[Outcome] = []
        skipped: list[Skipped] = []
        if ticker is not None:  # how many there are is read once more, for a client that shows how long
            ticker.begin(detected, count_items(detected, export, options), resume_from, outcomes, skipped)
        distinct = Distinct()
        paused: dict[str, Any] | None = None
        filing = Filing(submitter, user, outcomes, skipped)
        wave = 0
        stop = resume_from  # the first item not done
        for n, result in enumerate(distinct(registry_results(detected.format, export, options))):
            if n < resume_from:
                continue  # sent by an earlier request of this import
            stop = n
            if cancel.is_set():
                break
            if room.left is not None and filing.made + len(filing.held) >= room.left:
                filing.flush()  # what is held may turn out unchanged: only what was made counts
                if filing.made >= room.left:
                    paused = room.paused(filing.made, n)
                    break
            if n - resume_from >= MAX_ITEMS_PER_UPLOAD:
                skipped.append(Skipped("the rest of the export", f"an upload imports at most {MAX_ITEMS_PER_UPLOAD}"
                                       " items at a time; import the rest with `secondbrain import`", export.name))
                break
            if isinstance(result, Skipped):
                filing.skip(result)
            elif isinstance(result, Conversation):
                outcomes.append(submitter.keep_conversation(user, result))
            else:
                if result.wave > wave:  # an item's next version: once the versions before it are indexed
                    filing.flush()
                    wait_for(submitter, user, [o.job_id for o in outcomes if o.job_id], cancel=cancel)
                    wave = result.wave
                    if cancel.is_set():
                        break
                filing.hold(n, result)
            stop = n + 1
            if ticker is not None:
                ticker.step(filing.done_before(stop))
        if not cancel.is_set():
            filing.flush()
        if ticker is not None:  # items held and not filed (the import was cancelled) are read again next time
            ticker.step(filing.done_before(stop))
        report = export.damage_report()
        if report and not any(o.status in ("imported", "unchanged") for o in outcomes) and not resume_from:
            raise ExportError(report)  # nothing of it could be read: the damage is the answer
        body = summary(detected, outcomes, skipped)
        body["kept_apart"] = [{"label": a, "named_like": b} for a, b in distinct.kept_apart]
        body["damaged"] = [{"entry": path, "reason": why} for path, why in sorted(export.damaged.items())]
        body["paused"] = paused
    return body


class Filing:
    """An upload's items filed many at once (one write and one hand-over to the relay for each
    :data:`FILE_AT_ONCE`), as the batch route files them; ``held`` are read and not filed yet."""

    def __init__(self, submitter: CaptureSubmitter, user: str, outcomes: list[Outcome],
                 skipped: list[Skipped]) -> None:
        self.submitter, self.user, self.outcomes, self.skipped = submitter, user, outcomes, skipped
        self.held: list[tuple[int, Capture]] = []
        self.skipped_after: list[Skipped] = []  # skipped behind a held item: told once that item is filed
        self.made = 0  # new jobs made

    def hold(self, n: int, capture: Capture) -> None:
        self.held.append((n, capture))
        if len(self.held) >= FILE_AT_ONCE:
            self.flush()

    def skip(self, skipped: Skipped) -> None:
        (self.skipped_after if self.held else self.skipped).append(skipped)

    def flush(self) -> None:
        if not self.held:
            return
        filed = self.submitter.submit_many(self.user, [(capture, None) for _n, capture in self.held])
        self.held.clear()
        self.made += sum(o.status == "imported" for o in filed)
        self.outcomes.extend(filed)
        self.skipped.extend(self.skipped_after)
        self.skipped_after.clear()

    def done_before(self, n: int) -> int:
        """Where a client may go on from: ``n``, or the first item still held."""
        return self.held[0][0] if self.held else n


def count_items(detected: registry.Detected, export: Export, options: Options) -> int:
    """About how many items the export holds (0 when it cannot say: the reading says what is wrong)."""
    try:
        return detected.format.count(export, options)
    except Exception:
        return 0


WAVE_TIMEOUT_S = 600.0


def wait_for(submitter: CaptureSubmitter, user: str, job_ids: list[str], timeout_s: float = WAVE_TIMEOUT_S,
             cancel: threading.Event | None = None) -> None:
    """Until these jobs have finished (the versions of an export's items go in order), at most ``timeout_s``
    (or until ``cancel`` is set)."""
    deadline = time.monotonic() + timeout_s
    pending = list(dict.fromkeys(job_ids))
    while pending and time.monotonic() < deadline and not (cancel is not None and cancel.is_set()):
        pending = [j for j in pending if (job := submitter.job(user, j)) is not None and job.status in
                   ("queued", "running")]
        if pending:
            time.sleep(0.5)


def registry_results(fmt: registry.Format, export: Export, options: Options) -> Any:
    """The format's results, with a failure of the export as a whole (past the first items) as a last skip."""
    try:
        yield from fmt.read(export, options)
    except Exception as exc:  # whatever a damaged export raises past its items, what was read stays read
        yield Skipped("the rest of the export", failure(exc), export.name)


def summary(detected: registry.Detected, outcomes: list[Outcome], skipped: list[Skipped]) -> dict[str, Any]:
    count = {s: sum(1 for o in outcomes if o.status == s) for s in ("imported", "unchanged", "refused")}
    return {
        "format": detected.format.name, "label": detected.format.label, "found": detected.found,
        "also": [{"format": f.name, "label": f.label, "found": found} for f, found in detected.also],
        "items": len(outcomes) + len(skipped), **count,
        "duplicates": sum(1 for s in skipped if s.duplicate),
        # Records an earlier version made per occurrence of a recurring event, replaced by its one record.
        "replaced_occurrences": sum(o.replaced for o in outcomes),
        # Items the export holds twice: imported once, each named with the one it was found equal to.
        "found_equal": [{"label": s.label, "equal_to": s.equal_to, "reason": s.reason, "origin": s.origin}
                        for s in skipped if s.duplicate],
        "skipped": [{"label": s.label, "reason": s.reason, "origin": s.origin} for s in skipped if not s.duplicate],
        "refused_items": [o.json() for o in outcomes if o.status == "refused"],
        "jobs": [{"label": o.label, "job_id": o.job_id, "source_uri": o.source_uri, "new": o.status == "imported"}
                 for o in outcomes if o.job_id],
    }


def submit_batch(submitter: CaptureSubmitter, user: str, batch: Batch,
                 room: Room | None = None) -> list[dict[str, Any]]:
    """Submit each capture of a batch (and keep each conversation it carries); a bad one is refused with its
    reason, the others go on; past the person's ``room`` the rest wait (``waiting``: sent again later).
    Blocking."""
    results: list[dict[str, Any]] = []
    made = 0
    conversations = batch.manifest.get("conversations") or []
    for n, item in enumerate(conversations if isinstance(conversations, list) else [], 1):
        try:
            if not isinstance(item, dict):
                raise ValueError(f"conversation {n} is not an object")
            results.append(submitter.keep_conversation(user, conversation_from_json(item)).json())
        except ValueError as exc:
            results.append({"label": f"conversation {n}", "source_uri": None, "status": "refused", "reason": str(exc)})
    taken: list[tuple[int, Capture, bytes | None, str]] = []  # read, to be filed together (their place, label)
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
        taken.append((len(results), capture, content if part is not None else None, label))
        results.append({})
    # As many as the person's room takes are filed with one write; those already in (unchanged) take no room,
    # so the next ones may follow; past the room the rest wait.
    while taken:
        left = None if room is None or room.left is None else room.left - made
        if left is not None and left <= 0:
            for at, capture, _data, label in taken:
                results[at] = {"label": label, "source_uri": capture.source_uri, "status": "waiting",
                               "reason": room.paused(made, None)["reason"] if room is not None else None}
            break
        now, taken = (taken, []) if left is None else (taken[:left], taken[left:])
        outcomes = submitter.submit_many(user, [(capture, data) for _at, capture, data, _label in now])
        for (at, _capture, _data, _label), outcome in zip(now, outcomes, strict=True):
            made += outcome.status == "imported"
            results[at] = {**outcome.json(), **job_state(submitter, user, outcome)}
    return results


def job_state(submitter: CaptureSubmitter, user: str, outcome: Outcome) -> dict[str, Any]:
    """For an item imported before: how its job ended (a client need not ask for each one again)."""
    if outcome.status != "unchanged" or outcome.job_id is None:
        return {}
    job = outcome.job or submitter.job(user, outcome.job_id)
    if job is None:
        return {}
    return {"job_status": job.status, "error": job.error}


router = APIRouter(tags=["import"])


def backlog(pending: int, settings: Settings) -> None:
    """Refuses an import while the person's backlog is full (``pending``, read with the request's key)."""
    refusal = backlog_refusal(settings, pending, retry_after_s=5,
                              then="the import goes on once some have finished.")
    if refusal is not None:
        raise refusal


@router.post("/v1/imports", status_code=202, summary="Import another tool's export (read on the server)",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["file"], "properties": {
                     "file": {"type": "string", "format": "binary"},
                     "format": {"type": "string", "description": "force a format: " + registry.names()},
                     "tz": {"type": "string", "description": "the zone of times written without one"},
                     "date_order": {"type": "string", "enum": ["dmy", "mdy", "ymd"]}}}}}}})
async def post_import(request: Request, user: CurrentUser, pending: PendingCaptures,
                      settings: SettingsDep, submitter: CaptureSubmitterDep,
                      relay: RelayDep) -> Response:
    """Upload an export (multipart ``file``, or the raw body with its name in ``X-Filename``); its format
    is decided from its content (``format`` forces one).  Every item becomes a capture with its own time,
    title, tags and provenance; items imported before (unchanged) add nothing.  With ``Accept:
    application/x-ndjson`` the answer is a line of JSON about every half second while the items go in
    (``progress``: done, total, rate, eta_s, resume_from; ``part``: what was done since the line before), then
    one with the ``result`` (the summary a plain request gets) or the ``error``: a client whose connection
    drops (the server restarted) sends the file again with the last ``resume_from`` and loses nothing."""
    backlog(pending, settings)
    header = request.headers.get("content-type", "")
    if header.lower().startswith("multipart/form-data"):
        upload = await read_multipart(request.stream(), header, limit=settings.max_upload_bytes)
    else:
        upload = await read_raw(request.stream(), limit=settings.max_upload_bytes,
                                filename=request.headers.get("x-filename"), content_type=header or None)
    streamed = "application/x-ndjson" in request.headers.get("accept", "").lower()
    handed = False  # to the stream, which closes the upload once the import is over
    work: asyncio.Future[dict[str, Any]] | None = None
    try:
        if upload.size == 0:
            raise HTTPException(422, "the file is empty: there is nothing to import")
        for value in (upload.filename or "", *upload.fields.values()):
            problem = text_problem(value)
            if problem:
                raise HTTPException(422, f"a field {problem}")
        options = options_from(upload.fields, settings)
        resume_from = _resume_from(upload.fields.get("resume_from"))
        name = (upload.filename or "export").replace("\\", "/").rsplit("/", 1)[-1][:255] or "export"
        room = Room.of(settings, pending)
        cancel = threading.Event()
        ticker = Ticker() if streamed else None
        work = asyncio.ensure_future(asyncio.to_thread(import_export, submitter, user, name, upload.file,
                                                       upload.fields.get("format") or None, options, room,
                                                       resume_from, cancel, ticker))
        try:
            if ticker is not None and await _begun_or_done(request, work, cancel, ticker):
                handed = True
                return StreamingResponse(_lines(request, work, cancel, ticker, relay, upload), status_code=202,
                                         media_type="application/x-ndjson", headers={"Cache-Control": "no-store"})
            body = await _until_done_or_gone(request, work, cancel)
        except ExportError as exc:
            raise HTTPException(422, str(exc)) from None
    finally:
        if not handed:
            _close_after(work, upload)
    if relay is not None:
        relay.wake()
    headers = {"Retry-After": str(RETRY_AFTER_S)} if body.get("paused") else None
    return JSONResponse(body, status_code=202, headers=headers)


PROGRESS_EVERY_S = 0.5


async def _begun_or_done(request: Request, work: asyncio.Future[dict[str, Any]], cancel: threading.Event,
                         ticker: Ticker) -> bool:
    """Whether the import got as far as its first item (then it is followed in lines, even when it is over
    already: a quick one); False when it ended before (an export refused goes back as a plain error, with its
    status)."""
    try:
        while not ticker.begun.is_set():
            done, _ = await asyncio.wait({work}, timeout=0.1)
            if done:
                return ticker.begun.is_set()
            if not cancel.is_set() and await request.is_disconnected():
                cancel.set()
        return True
    except BaseException:
        cancel.set()
        raise


async def _lines(request: Request, work: asyncio.Future[dict[str, Any]], cancel: threading.Event,
                 ticker: Ticker, relay: Any, upload: Any) -> AsyncIterator[bytes]:
    """The progress lines of an import, then its result; when the client goes away or the server stops
    (this is cancelled), the import stops at the next item."""
    try:
        while True:
            line = ticker.line()
            if line is not None:
                yield _ndjson(line)
            done, _ = await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
            if done:
                break
            if await request.is_disconnected():
                return
        try:
            body = work.result()
        except ExportError as exc:
            yield _ndjson({"error": {"status": 422, "detail": str(exc)}})
            return
        except Exception as exc:  # said as the last line: the answer had begun (a client must not try again)
            log.exception("an import failed")
            yield _ndjson({"error": {"status": 500, "detail": f"the import failed: {type(exc).__name__}"}})
            return
        if relay is not None:
            relay.wake()
        yield _ndjson({"result": body})
    finally:
        cancel.set()
        _close_after(work, upload)


def _close_after(work: asyncio.Future[Any] | None, upload: Any) -> None:
    """Closes the upload's file once the import reading it has stopped (now, if it has)."""
    if work is None or work.done():
        upload.close()
    else:
        work.add_done_callback(lambda _work: upload.close())


def _ndjson(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _resume_from(value: str | None) -> int:
    """Where a paused import goes on (the ``resume_from`` its summary gave); 422 for anything else."""
    if not value:
        return 0
    if not value.strip().isdigit() or len(value.strip()) > 9:
        raise HTTPException(422, "resume_from is the item number an earlier answer gave (a whole number)")
    return int(value.strip())


async def _until_done_or_gone(request: Request, work: asyncio.Future[dict[str, Any]],
                              cancel: threading.Event) -> dict[str, Any]:
    """The import's summary; when the client goes away first, ``cancel`` stops the import at the next item
    (what was sent stays sent: importing the file again goes on from there); so does a server stopping."""
    try:
        while True:
            done, _ = await asyncio.wait({work}, timeout=DISCONNECT_POLL_S)
            if done:
                return work.result()
            if not cancel.is_set() and await request.is_disconnected():
                cancel.set()
    except asyncio.CancelledError:
        cancel.set()
        raise


@router.post("/v1/imports/batch", summary="Submit captures read from an export (secondbrain import)",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["manifest"], "properties": {
                     "manifest": {"type": "string", "description": "JSON {\"captures\": [...]}, each with "
                                  "source_uri, kind, title, captured_at, content_type, filename, url, "
                                  "attributes and the name of the part holding its bytes"}}}}}}})
async def post_batch(request: Request, user: CurrentUser, pending: PendingCaptures,
                     settings: SettingsDep, submitter: CaptureSubmitterDep,
                     relay: RelayDep) -> JSONResponse:
    """Captures a client read from an export, each submitted like ``POST /v1/imports`` would; one
    request however many captures (up to 1000 parts).  ``results`` says for each: ``imported`` (its job),
    ``unchanged`` (imported before: nothing written) or ``refused`` (why)."""
    backlog(pending, settings)
    batch = await read_batch(request.stream(), request.headers.get("content-type", ""),
                             limit=settings.max_upload_bytes)
    try:
        results = await asyncio.to_thread(submit_batch, submitter, user, batch, Room.of(settings, pending))
    finally:
        batch.close()
    if relay is not None:
        relay.wake()
    waiting = sum(r["status"] == "waiting" for r in results)
    headers = {"Retry-After": str(RETRY_AFTER_S)} if waiting else None
    return JSONResponse({"results": results, "pending": pending + sum(r["status"] == "imported" for r in results),
                         "max_pending": settings.max_pending_jobs, "waiting": waiting}, headers=headers)


