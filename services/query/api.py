"""The query service's HTTP API: search, grounded answers over SSE, the timeline, raw artifacts.

``POST /v1/ask`` streams server-sent events in this order: ``meta`` (the query class and the
time range understood), ``sources`` (numbered passages with title, modality, captured time,
page or time span, snippet and a link to the raw artifact), ``token`` events (the answer as
it is written), then ``done`` (the full answer, the citations actually used, timings) -
or ``error`` once the stream has started and something failed.  A model's answer that cites
none of the sources comes with ``unsupported: true`` and ``extractive`` (the best quoted
passages, cited), so no client shows it as fact.

``/v1/conversations`` lists, opens, renames and deletes the user's conversations; another
user's conversation answers 404, as a missing one does.

Each route names what it uses in its signature (:mod:`services.query.deps`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from secondbrain import keys, telemetry
from secondbrain.answer_events import AnswerEvent
from secondbrain.errors import PermanentError, RetryableError
from secondbrain.ports import ConversationInfo, MetadataStore, ObjectNotFound, Turn
from secondbrain.search_hits import SearchHit
from secondbrain.tags import normalise_tags, tags_in_query
from secondbrain.titles import display_title
from secondbrain.validation import Text
from services.http_helpers import aware, conventions, zone
from services.query.answerer import Answerer, QuestionRefused
from services.query.deps import (
    AnswererDep,
    ConversationsDep,
    CurrentUser,
    EngineDep,
    MetadataDep,
    ObjectsDep,
    SettingsDep,
)
from services.query.engine import Filters
from services.query.params import (
    COUNTRY_HELP,
    DATE_ORDER_HELP,
    HEMISPHERE_HELP,
    LOCALE_HELP,
    AskIn,
    DateOrderParam,
    HemisphereParam,
    TimeFieldParam,
)
from services.query.revisions import mark_edited_sources


class RenameIn(BaseModel):
    """A conversation's new title; null gives it back its first question as title."""

    title: Text | None = Field(None, max_length=200)


# Types a browser shows without running anything: served inline.  Everything else (HTML, XHTML, SVG,
# XML, unknown types) is served as a download, so a script in an uploaded file never runs on this origin.
PASSIVE_INLINE_TYPES = frozenset({
    "application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
    "text/plain", "text/markdown", "text/csv",
})
PASSIVE_INLINE_FAMILIES = ("audio/", "video/")


def raw_file_headers(content_type: str, filename: str | None) -> dict[str, str]:
    """The headers an original file is served with.  ``Content-Security-Policy: sandbox`` always (a
    document opened from this origin gets a unique origin of its own: no cookies, no scripts, no API
    calls with the person's session), ``nosniff`` (the declared type is the type), and ``attachment``
    for every type not known to display inertly."""
    main = content_type.split(";", 1)[0].strip().lower()
    inline = main in PASSIVE_INLINE_TYPES or main.startswith(PASSIVE_INLINE_FAMILIES)
    disposition = "inline" if inline else "attachment"
    if filename:
        ascii_name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename)
        disposition += f'; filename="{ascii_name}"; filename*=UTF-8\'\'{quote(filename, safe="")}'
    return {"Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff",
            "Content-Disposition": disposition}


def sse(event: AnswerEvent) -> dict[str, str]:
    """An answer's event as the server-sent event ``POST /v1/ask`` streams: its name and its JSON data."""
    return {"event": event.name, "data": json.dumps(event.data())}


router = APIRouter(tags=["query"])
TAGS_HELP = "Only sources with every one of these tags (tags=a&tags=b, or tags=a,b); tag:a in q does the same."
NO_SOURCE = "-"  # never a source id (those are UUIDs)


def tagged_sources(metadata: MetadataStore, user: str, tags: list[str], within: list[str] | None) -> list[str]:
    """The user's sources with every one of ``tags`` (among ``within`` when given)."""
    found = metadata.catalog.sources_tagged(user, tags)
    return [s for s in found if s in set(within)] if within else found


NO_SUCH_CONVERSATION = "no such conversation (it was deleted, or it is not yours)"


@router.get("/v1/search", summary="Hybrid and temporal search over your data")
async def search(
    q: Annotated[str, Query(min_length=1, max_length=2000, description="What to look for.")],
    user: CurrentUser,
    settings: SettingsDep,
    engine: EngineDep,
    metadata: MetadataDep,
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    mode: Literal["hybrid", "dense", "sparse"] = "hybrid",
    modality: Annotated[list[str] | None, Query()] = None,
    source_id: Annotated[list[str] | None, Query()] = None,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    time_field: TimeFieldParam | None = None,
    tz: str | None = None,
    now: Annotated[datetime | None, Query(
        description="Read 'yesterday', 'last year'... as of this time instead of the current one (ISO 8601).",
    )] = None,
    locale: Annotated[str | None, Query(max_length=40, description=LOCALE_HELP)] = None,
    country: Annotated[str | None, Query(max_length=2, description=COUNTRY_HELP)] = None,
    hemisphere: Annotated[HemisphereParam | None, Query(description=HEMISPHERE_HELP)] = None,
    date_order: Annotated[DateOrderParam | None, Query(description=DATE_ORDER_HELP)] = None,
    everything: Annotated[bool, Query(description=(
        "List the k best passages however far from the query (no relevance cut): for comparing rankings."))] = False,
    tags: Annotated[list[str] | None, Query(description=TAGS_HELP)] = None,
) -> dict[str, Any]:
    """The passages that match ``q`` by its words or its meaning, best first (``matched: true``).  When none
    matches well enough, ``matched`` is false, ``hits`` is empty and ``closest`` holds the closest few, to be
    shown as such ("Nothing matches"; see docs/reminders-and-search.md).  A question that is only a time
    ("what did I save last week?") lists that time's sources, without a cut."""
    if not q.strip():
        raise HTTPException(422, "the query is empty")
    q, wanted = tags_in_query(q)  # "tag:garden" in the words works as tags=garden
    wanted = normalise_tags([*(t for value in tags or () for t in value.split(",")), *wanted])
    q = q or " ".join(wanted)
    if wanted:
        source_id = await asyncio.to_thread(tagged_sources, metadata, user, wanted, source_id)
        if not source_id:  # nothing has these tags: nothing to find
            return {"query": q, "mode": mode, "tags": wanted, "matched": False, "hits": [], "closest": [],
                    "took_ms": 0.0}
    zone_ = zone(tz, settings.timezone)
    calendar = conventions(settings, locale, country, hemisphere, date_order)
    filters = Filters(tuple(modality) if modality else None, tuple(source_id) if source_id else None,
                      aware(start, zone_), aware(end, zone_), time_field)
    t0 = time.perf_counter()
    tracer = telemetry.tracer()
    with tracer.start_as_current_span("query plan"):
        plan = engine.plan(q, tz=zone_, filters=filters, now=aware(now, zone_), conventions=calendar)
    closest: list[SearchHit] = []
    with tracer.start_as_current_span("query retrieve", attributes={
            "sb.query.class": plan.query_class, "sb.search.mode": mode, "sb.k": k}) as span:
        try:
            if plan.query_class == "temporal":
                hits = (await asyncio.to_thread(engine.list_window, user, plan, limit=k))
            else:
                # dense and sparse alone take the same path (plan, time window, diversity) as hybrid,
                # so comparing the modes compares the retrieval signals and nothing else.
                hits = await asyncio.to_thread(engine.search, user, plan, k=k, mode=mode)
                if not everything:
                    found = await asyncio.to_thread(functools.partial(engine.relevant, user, plan, hits,
                                                                      meaning=mode != "sparse"))
                    hits, closest = found.hits, found.closest
        except RetryableError as exc:  # the embedding endpoint is down or overloaded: not the client's fault
            raise HTTPException(503, f"search is unavailable for now: {exc}; try again shortly",
                                headers={"Retry-After": "5"}) from exc
        except PermanentError as exc:  # the embedding endpoint refused the request
            raise HTTPException(502, f"the embedding model refused the query: {exc}") from exc
        span.set_attribute("sb.hits", len(hits))
    took = time.perf_counter() - t0
    telemetry.QUERY_DURATION.record(took, {"route": "search", "query_class": plan.query_class})
    # Each hit with its source's tags as they are now (a list; the passage's own attributes keep the tags its
    # text was indexed with).
    tagged = await asyncio.to_thread(metadata.catalog.source_tags, user,
                                     sorted({h.source_id for h in [*hits, *closest]}))
    return {"query": q, "mode": mode, **plan.meta(), **({"tags": wanted} if wanted else {}),
            "matched": bool(hits), "hits": [{**h.to_json(), "tags": tagged.get(h.source_id, [])} for h in hits],
            "closest": [{**h.to_json(), "tags": tagged.get(h.source_id, [])} for h in closest],
            "took_ms": round(took * 1000, 1)}


def refusal(exc: QuestionRefused) -> HTTPException:
    """How a refused question is answered over HTTP: 422 for one that cannot be read, 403 for another user's
    conversation."""
    return HTTPException(403 if exc.why == "foreign" else 422, exc.reason)


async def answer_events(answerer: Answerer, user: str, body: AskIn) -> AsyncIterator[AnswerEvent]:
    """The events answering ``body``, or its refusal over HTTP before anything streams (this route's, and MCP's
    ask where this process answers)."""
    try:
        return await answerer.start(user, body)
    except QuestionRefused as exc:
        raise refusal(exc) from None


@router.post("/v1/ask", summary="Ask a question; the answer streams as server-sent events")
async def ask(body: AskIn, user: CurrentUser, answerer: AnswererDep, metadata: MetadataDep) -> EventSourceResponse:
    """Answer ``question`` from your data; ``tags`` (or ``tag:garden`` in the question) keeps to sources
    with every one of those tags."""
    question, wanted = tags_in_query(body.question)
    wanted = normalise_tags([*(body.tags or ()), *wanted])
    if wanted:
        found = await asyncio.to_thread(tagged_sources, metadata, user, wanted, body.source_ids)
        # No source has these tags: an id no source has, so that nothing is found rather than everything.
        revises = body.revises
        if revises is not None:  # the earlier question was kept without its tag: words too
            revises = revises.model_copy(update={"question": tags_in_query(revises.question)[0] or revises.question})
        body = body.model_copy(update={"question": question or " ".join(wanted), "revises": revises,
                                       "source_ids": found or [NO_SOURCE], "tags": wanted})
    events = await answer_events(answerer, user, body)  # refusals (422, 403) before the stream starts
    return EventSourceResponse((sse(event) async for event in events), ping=10)


@router.get("/v1/conversations", summary="Your conversations, the latest first")
async def list_conversations(user: CurrentUser, convs: ConversationsDep,
                             limit: Annotated[int, Query(ge=1, le=500)] = 100,
                             q: Annotated[Text | None, Query(max_length=200, description=(
                                 "Only conversations whose title or one of whose questions contains "
                                 "this (case-insensitive)."))] = None) -> dict[str, Any]:
    listed = await asyncio.to_thread(functools.partial(convs.recent_conversations, user, limit,
                                                       matching=q.strip() if q and q.strip() else None))
    return {"conversations": [conversation_json(c) for c in listed]}


@router.get("/v1/conversations/{conversation_id}",
            summary="One conversation: each question with its answer, sources and what was understood")
async def get_conversation(conversation_id: str, user: CurrentUser, convs: ConversationsDep,
                           metadata: MetadataDep) -> dict[str, Any]:
    """Each question with its answer; a source edited since an answer quoted it carries ``edited_since``
    (the version quoted, the version now, and links to both)."""
    found = await asyncio.to_thread(convs.get_conversation, user, conversation_id)
    if found is None:
        raise HTTPException(404, NO_SUCH_CONVERSATION)
    turns = await asyncio.to_thread(convs.get_turns, user, conversation_id, found.turns)
    shown = exchanges(turns)
    await asyncio.to_thread(mark_edited_sources, metadata.catalog, user, shown)
    return {**conversation_json(found), "turns": shown}


@router.patch("/v1/conversations/{conversation_id}", summary="Rename a conversation")
async def rename_conversation(conversation_id: str, body: RenameIn, user: CurrentUser,
                              convs: ConversationsDep) -> dict[str, Any]:
    title = body.title.strip() if body.title else None
    if not await asyncio.to_thread(convs.rename_conversation, user, conversation_id, title or None):
        raise HTTPException(404, NO_SUCH_CONVERSATION)
    found = await asyncio.to_thread(convs.get_conversation, user, conversation_id)
    if found is None:  # deleted meanwhile
        raise HTTPException(404, NO_SUCH_CONVERSATION)
    return conversation_json(found)


@router.delete("/v1/conversations/{conversation_id}", status_code=204,
               summary="Delete a conversation and everything asked in it")
async def delete_conversation(conversation_id: str, user: CurrentUser, convs: ConversationsDep) -> Response:
    if not await asyncio.to_thread(convs.delete_conversation, user, conversation_id):
        raise HTTPException(404, NO_SUCH_CONVERSATION)
    return Response(status_code=204)


@router.get("/v1/timeline", summary="What was captured when, grouped by day")
async def timeline(
    user: CurrentUser,
    settings: SettingsDep,
    metadata: MetadataDep,
    start: Annotated[datetime | None, Query(alias="from")] = None,
    end: Annotated[datetime | None, Query(alias="to")] = None,
    tz: str | None = None,
    field: TimeFieldParam = "captured_at",
    modality: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
) -> dict[str, Any]:
    zone_ = zone(tz, settings.timezone)
    lo = aware(start, zone_) or datetime.now(zone_).replace(hour=0, minute=0, second=0, microsecond=0) \
        - timedelta(days=30)
    hi = aware(end, zone_)
    docs = await asyncio.to_thread(metadata.catalog.documents_between, user, lo, hi, field=field, limit=limit,
                                   modalities=modality)
    days: dict[date, list[dict[str, Any]]] = {}
    for d in docs:
        when: datetime = getattr(d, field)
        local = when.astimezone(zone_)
        days.setdefault(local.date(), []).append({
            "document_id": d.document_id, "artifact_id": d.artifact_id,
            "title": display_title(d.title, d.metadata.get("source_uri")),
            "modality": d.modality, field: local.isoformat(), "source_uri": d.metadata.get("source_uri"),
            "chunk_count": d.chunk_count, "captured_at_source": d.captured_at_source})
    return {"from": lo.isoformat(), "to": hi.isoformat() if hi else None, "timezone": str(zone_), "field": field,
            "days": [{"date": day.isoformat(), "count": len(items), "items": items}
                     for day, items in sorted(days.items(), reverse=True)],
            "total": len(docs), "truncated": len(docs) >= limit}


@router.get("/v1/artifacts/{artifact_id}/raw", summary="The original file of a source")
async def raw(artifact_id: str, user: CurrentUser, settings: SettingsDep, metadata: MetadataDep,
              objects: ObjectsDep) -> StreamingResponse:
    try:
        key = keys.artifact_key(user, artifact_id)
    except ValueError:
        raise HTTPException(404, "no such artifact") from None
    info = await asyncio.to_thread(objects.stat, key)
    if info is None:
        art = await asyncio.to_thread(metadata.catalog.get_artifact, user, artifact_id)
        if art is not None and art.raw_purged_at is not None:
            days = settings.raw_retention_days
            raise HTTPException(410, f"the original file was removed on {art.raw_purged_at.date().isoformat()} "
                                     "by the raw-file retention setting (SB_RAW_RETENTION_DAYS"
                                     f"{'=' + str(days) if days is not None else ''}); its text is still "
                                     "indexed and searchable")
        raise HTTPException(404, "no such artifact")

    def body() -> Iterator[bytes]:
        try:
            yield from objects.open(key)
        except ObjectNotFound:
            return

    media_type = info.content_type or "application/octet-stream"
    art = await asyncio.to_thread(metadata.catalog.get_artifact, user, artifact_id)
    headers = {"Content-Length": str(info.size), "Cache-Control": "private, max-age=3600",
               **raw_file_headers(media_type, art.filename if art is not None else None)}
    return StreamingResponse(body(), media_type=media_type, headers=headers)



def conversation_json(c: ConversationInfo) -> dict[str, Any]:
    """A conversation as listed."""
    return {"conversation_id": c.conversation_id, "title": c.title, "titled": c.titled,
            "created_at": c.created_at.isoformat(), "updated_at": c.updated_at.isoformat(), "messages": c.turns}


def exchanges(turns: list[Turn]) -> list[dict[str, Any]]:
    """A conversation's turns as the person saw them: each question with its answer (None when it failed)."""
    out: list[dict[str, Any]] = []
    for t in turns:
        if t.role == "user":
            out.append({"question": t.content, "asked_at": t.created_at.isoformat(), "answer": None})
        elif out and out[-1]["answer"] is None:
            m = t.meta
            out[-1].update({
                "answer": t.content, "answered_at": t.created_at.isoformat(), "citations": m.get("citations", []),
                "grounded": m.get("grounded", bool(m.get("citations"))), "unsupported": m.get("unsupported", False),
                "extractive": m.get("extractive"), "answer_mode": m.get("answer_mode"),
                "answer_markdown": m.get("answer_markdown", t.content), "found": m.get("found", True),
                "quotes": m.get("quotes", []), "sources": m.get("sources", []), "meta": m.get("meta")})
    return out
