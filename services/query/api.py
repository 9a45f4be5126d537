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
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from opentelemetry import trace
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from secondbrain import keys, telemetry
from secondbrain.llm import ChatLLM
from secondbrain.pipeline.errors import PermanentError, RetryableError
from secondbrain.ports import ConversationInfo, ForeignConversation, ObjectNotFound, Turn
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.temporal import Conventions
from secondbrain.titles import display_title
from secondbrain.validation import Text
from secondbrain.vector_indexes import ActiveIndexes
from services.query.answer import CitationFilter, build_messages, clock
from services.query.answer_model import AnswerModel
from services.query.engine import Filters, Plan, QueryEngine, Source
from services.query.extractive import NOT_FOUND, Answer, extractive_answer
from services.query.followup import Followup, rewrite_followup
from services.query.reading import plain
from services.query.retrieval import SearchHit
from services.query.revisions import Revision, turns_before

log = logging.getLogger(__name__)

TimeFieldParam = Literal["captured_at", "ingested_at"]
HemisphereParam = Literal["north", "south"]
DateOrderParam = Literal["mdy", "dmy", "ymd"]
LOCALE_HELP = ("The user's locale, e.g. en_GB or de-DE: how '3/12' is read, the holidays and seasons "
               "(default: server's).")
COUNTRY_HELP = "ISO 3166 country whose holidays 'Thanksgiving', 'Mother's Day'... are (default: the locale's)."
HEMISPHERE_HELP = "For 'last summer', 'this winter' (default: from the country)."
DATE_ORDER_HELP = "Numeric dates such as '3/12': month first (mdy), day first (dmy) or ymd (default: the locale's)."


class AskIn(BaseModel):
    """A question about the user's data."""

    question: Text = Field(min_length=1, max_length=2000)
    conversation_id: Text | None = Field(None, max_length=100, description="Continue a conversation (follow-ups).")
    k: int = Field(6, ge=1, le=20, description="How many passages to ground the answer in.")
    modalities: list[Text] | None = Field(None, description="Only these kinds: pdf, web, audio, image, note...")
    source_ids: list[Text] | None = None
    start: datetime | None = Field(None, alias="from", description="Only what happened from then (ISO 8601).")
    end: datetime | None = Field(None, alias="to", description="...until then (exclusive).")
    time_field: TimeFieldParam | None = None
    tz: Text | None = Field(None, description="IANA time zone for 'yesterday', 'last week'... (default: server's).")
    now: datetime | None = Field(None, description="Read 'yesterday', 'last year'... as of this time instead of "
                                                   "the current one (ISO 8601).")
    locale: Text | None = Field(None, max_length=40, description=LOCALE_HELP)
    country: Text | None = Field(None, max_length=2, description=COUNTRY_HELP)
    hemisphere: HemisphereParam | None = Field(None, description=HEMISPHERE_HELP)
    date_order: DateOrderParam | None = Field(None, description=DATE_ORDER_HELP)
    fresh: bool = Field(False, description="Ask it as a new question: take nothing (subject, time) from the "
                                           "conversation's earlier turns, though it is kept in the conversation.")
    keep: bool = Field(True, description="Keep the question and its answer as a conversation (listed, and "
                                         "continued by follow-ups); false: a one-shot answer, kept nowhere.")
    revises: Revision | None = Field(None, description="Regenerate an earlier question's answer, or send it "
                                                       "edited: read with the turns before it, marked as such.")

    model_config = {"populate_by_name": True}


class RenameIn(BaseModel):
    """A conversation's new title; null gives it back its first question as title."""

    title: Text | None = Field(None, max_length=200)


def zone(name: str | None, default: str) -> ZoneInfo:
    """A time zone by IANA name; 422 with an example when unknown."""
    try:
        return ZoneInfo(name or default)
    except (ZoneInfoNotFoundError, ValueError):
        raise HTTPException(422, f"unknown time zone {name!r}; use an IANA name such as Europe/Paris") from None


def conventions(s: Settings, locale: str | None = None, country: str | None = None, hemisphere: str | None = None,
                date_order: str | None = None) -> Conventions:
    """How the user's calendar reads: what the request says, else the settings, else what the locale implies;
    422 when a value is unreadable."""
    try:
        return Conventions.for_locale(locale or s.locale, country=country or s.country,
                                      hemisphere=hemisphere or s.hemisphere, date_order=date_order or s.date_order)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


def aware(dt: datetime | None, tz: ZoneInfo) -> datetime | None:
    """A client's time; without a zone it is read in the user's zone."""
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)


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


def raw_link(h: SearchHit) -> str:
    """Where the original file is served, pointing at the page or second when there is one."""
    url = f"/v1/artifacts/{h.artifact_id}/raw"
    if h.page is not None:
        return f"{url}#page={h.page}"
    if h.t_start is not None:
        return f"{url}#t={int(h.t_start)}"
    return url


def source_json(n: int, s: Source, tz: ZoneInfo) -> dict[str, Any]:
    """A numbered source as sent to the client."""
    h = s.hit
    snippet = " ".join(s.text.split())
    fields = {k: v for k, v in h.to_json().items() if k not in ("text", "score")}
    try:
        local = datetime.fromisoformat(h.captured_at.replace("Z", "+00:00")).astimezone(tz).isoformat()
    except ValueError:
        local = h.captured_at
    out = {"n": n, **fields, "captured_at_local": local, "t_start": s.t_start, "t_end": s.t_end,
           "snippet": snippet[:300] + ("…" if len(snippet) > 300 else ""), "link": raw_link(h),
           "neighbours": s.neighbours}
    if s.t_start is not None:
        out["position"] = f"{clock(s.t_start)}-{clock(s.t_end or s.t_start)}"
    return out


def quoted_json(ans: Answer, sources: list[Source]) -> dict[str, Any]:
    """What the page needs beside the plain answer: the answer with its quoted Markdown, whether anything was
    found, and where each quote is in its source (the page of the quoted words, the second they are said at)."""
    quotes = []
    for q in ans.quotes:
        h = sources[q.n - 1].hit
        link = f"/v1/artifacts/{h.artifact_id}/raw" + (f"#page={q.page}" if q.page is not None else
                                                       f"#t={int(q.t_start)}" if q.t_start is not None else "")
        quotes.append({"n": q.n, "page": q.page, "t_start": q.t_start, "link": link,
                       **({"position": clock(q.t_start)} if q.t_start is not None else {})})
    return {"answer_markdown": ans.markdown or ans.text, "found": ans.found, "quotes": quotes}


def listing_answer(plan: Plan, sources: list[Source], now: datetime | None = None) -> str:
    """The answer to a time-only question: what the range holds, the latest first by the time it is
    about (when it was saved, for "what did I save today?"; else when it happened), each with that time
    and cited.  A date outside the current year says its year."""
    if not sources:
        return "Nothing in your data falls in that time."
    saved = plan.time_field == "ingested_at"
    this_year = (now or datetime.now(plan.tz)).astimezone(plan.tz).year
    count = f"{len(sources)} item{'s' if len(sources) != 1 else ''}"
    lines = [f"You saved {count} then, the latest first:" if saved else f"You have {count} from then, newest first:"]
    for n, s in enumerate(sources, 1):
        happened = _local(s.hit.captured_at, plan.tz)
        if saved:
            added = _local(s.hit.ingested_at, plan.tz)
            when = f"saved {_day(added, this_year)} {added:%H:%M}"
            if happened.date() != added.date():  # what it is about happened on another day: said too
                when += f", dated {_day(happened, this_year)}"
        else:
            when = f"{_day(happened, this_year)} {happened:%H:%M}"
        lines.append(f"- {s.hit.title} ({s.hit.modality}, {when}) [{n}]")
    return "\n".join(lines)


def _local(iso: str, tz: ZoneInfo) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(tz)


def _day(d: datetime, this_year: int) -> str:
    """'Thu 20 Nov', with the year when it is not ``this_year`` ('Thu 20 Nov 2025')."""
    return f"{d:%a} {d.day} {d:%b}" + (f" {d.year}" if d.year != this_year else "")


def create_router(rt: Runtime, current_user: Any, *, llm: ChatLLM | None = None,
                  answer_model: AnswerModel | None = None) -> APIRouter:
    """Query routes bound to a runtime (and a language model, when one is configured; ``answer_model``
    picks it per question instead, following what an admin sets at run time)."""
    if rt.vectors is None or rt.embedder is None or rt.sparse is None:
        raise RuntimeError("the query service needs a vector store and models")
    s = rt.settings
    default_llm = llm
    indexes = ActiveIndexes(rt.metadata, rt.embedders, rt.embedder) if rt.embedders is not None else None
    engine = QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, candidates=s.search_candidates,
                         budget_tokens=s.ask_context_tokens, per_document=s.ask_max_chunks_per_document,
                         reranker=_load_reranker(s.reranker_model_dir), indexes=indexes)
    encoder = rt.sparse
    router = APIRouter(tags=["query"])
    auth = Depends(current_user)

    @router.get("/v1/search", summary="Hybrid and temporal search over your data")
    async def search(
        q: Annotated[str, Query(min_length=1, max_length=2000, description="What to look for.")],
        user: str = auth,
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
    ) -> dict[str, Any]:
        if not q.strip():
            raise HTTPException(422, "the query is empty")
        zone_ = zone(tz, s.timezone)
        calendar = conventions(s, locale, country, hemisphere, date_order)
        filters = Filters(tuple(modality) if modality else None, tuple(source_id) if source_id else None,
                          aware(start, zone_), aware(end, zone_), time_field)
        t0 = time.perf_counter()
        tracer = telemetry.tracer()
        with tracer.start_as_current_span("query plan"):
            plan = engine.plan(q, tz=zone_, filters=filters, now=aware(now, zone_), conventions=calendar)
        with tracer.start_as_current_span("query retrieve", attributes={
                "sb.query.class": plan.query_class, "sb.search.mode": mode, "sb.k": k}) as span:
            try:
                if plan.query_class == "temporal":
                    hits = (await asyncio.to_thread(engine.list_window, user, plan, limit=k))
                else:
                    # dense and sparse alone take the same path (plan, time window, diversity) as hybrid,
                    # so comparing the modes compares the retrieval signals and nothing else.
                    hits = await asyncio.to_thread(engine.search, user, plan, k=k, mode=mode)
            except RetryableError as exc:  # the embedding endpoint is down or overloaded: not the client's fault
                raise HTTPException(503, f"search is unavailable for now: {exc}; try again shortly",
                                    headers={"Retry-After": "5"}) from exc
            except PermanentError as exc:  # the embedding endpoint refused the request
                raise HTTPException(502, f"the embedding model refused the query: {exc}") from exc
            span.set_attribute("sb.hits", len(hits))
        took = time.perf_counter() - t0
        telemetry.QUERY_DURATION.record(took, {"route": "search", "query_class": plan.query_class})
        return {"query": q, "mode": mode, **plan.meta(), "hits": [h.to_json() for h in hits],
                "took_ms": round(took * 1000, 1)}

    @router.post("/v1/ask", summary="Ask a question; the answer streams as server-sent events")
    async def ask(body: AskIn, user: str = auth) -> EventSourceResponse:
        llm = await asyncio.to_thread(answer_model.current) if answer_model is not None else default_llm
        question = body.question.strip()
        if not question:
            raise HTTPException(422, "the question is empty")
        zone_ = zone(body.tz, s.timezone)
        calendar = conventions(s, body.locale, body.country, body.hemisphere, body.date_order)
        filters = Filters(tuple(body.modalities) if body.modalities else None,
                          tuple(body.source_ids) if body.source_ids else None,
                          aware(body.start, zone_), aware(body.end, zone_), body.time_field)
        conversation_id = body.conversation_id or str(uuid.uuid4())
        now = aware(body.now, zone_)
        try:  # refuse another user's conversation before the stream starts
            turns = await asyncio.to_thread(rt.metadata.conversations.get_turns, user, conversation_id, 12)
            if body.revises is not None:  # asked again: read as it was then, from the turns before it
                turns = await asyncio.to_thread(turns_before, rt.metadata.conversations, user, conversation_id,
                                                body.revises.question)
            history: list[tuple[str, str]] = [(t.role, t.content) for t in turns]
            # the earlier questions as they were understood, so a third turn builds on the second's reading
            asked = [str(t.meta.get("standalone") or t.content) for t in turns if t.role == "user"]
            # asked afresh (the person undid what a follow-up took over): nothing from before is used
            context = [] if body.fresh else history
            if body.conversation_id and not history:
                await asyncio.to_thread(rt.metadata.conversations.add_turn, user, conversation_id, "user", question,
                                        {"pending": True})
                history = []
        except ForeignConversation as exc:
            raise HTTPException(403, str(exc)) from None

        async def events() -> AsyncIterator[dict[str, str]]:
            t0 = time.perf_counter()
            timings: dict[str, float] = {}
            tracer = telemetry.tracer()
            request_span = trace.get_current_span()  # the HTTP request's span: the stream runs inside it
            query_class = "unknown"

            def mark(name: str) -> None:
                timings[name] = round((time.perf_counter() - t0) * 1000, 1)

            try:
                with tracer.start_as_current_span("query plan"):  # no yield inside a span's block
                    followup = await asyncio.to_thread(rewrite_followup, question, asked, llm,
                                                       now or datetime.now(UTC), zone_, calendar, history=history) \
                        if asked and not body.fresh else Followup(question, None)
                    standalone = followup.standalone
                    plan = engine.plan(standalone, tz=zone_, filters=filters, now=now, conventions=calendar)
                query_class = plan.query_class
                mode = "listing" if plan.query_class == "temporal" else ("llm" if llm else "extractive")
                request_span.set_attribute("sb.query.class", plan.query_class)
                request_span.set_attribute("sb.answer.mode", mode)
                mark("understand")
                understood = {
                    **plan.meta(), "answer_mode": mode, "conversation_id": conversation_id,
                    "standalone_question": standalone if standalone != question else None,
                    "carried_over": followup.carried.to_json() if followup.carried else None,
                    "fresh": body.fresh, "model": llm.model_id if llm and mode == "llm" else None,
                    "revises": body.revises.model_dump() if body.revises else None,
                    "note": None if mode != "extractive" else
                    "No language model is configured: the answer quotes your sources."}
                yield {"event": "meta", "data": json.dumps(understood)}
                with tracer.start_as_current_span("query retrieve", attributes={
                        "sb.query.class": plan.query_class, "sb.k": body.k}) as span:
                    sources = await asyncio.to_thread(engine.sources, user, plan, k=body.k)
                    span.set_attribute("sb.sources", len(sources))
                mark("retrieval")
                shown_sources = [source_json(n, x, zone_) for n, x in enumerate(sources, 1)]
                yield {"event": "sources", "data": json.dumps(shown_sources)}
                invalid: list[str] = []
                unsupported, extractive = False, None
                answered: dict[str, Any] = {}  # the answer with its quoted Markdown, and where each quote points
                if mode == "listing":
                    text, cited, grounded = listing_answer(plan, sources), list(range(1, len(sources) + 1)), \
                        bool(sources)
                    for line in text.splitlines(keepends=True):
                        yield {"event": "token", "data": json.dumps({"text": line})}
                elif not await asyncio.to_thread(engine.supported, user, standalone, sources):
                    text, cited, grounded = NOT_FOUND, [], False
                    yield {"event": "token", "data": json.dumps({"text": text})}
                elif mode == "extractive":
                    ans = extractive_answer(standalone, sources, encoder=encoder, tz=zone_, conventions=calendar)
                    text, cited, grounded = ans.text, ans.citations, ans.grounded
                    answered = quoted_json(ans, sources)
                    for word in text.split(" "):
                        yield {"event": "token", "data": json.dumps({"text": word + " "})}
                else:
                    assert llm is not None
                    messages = build_messages(question if not context else standalone, sources, zone_,
                                              now or datetime.now(UTC), context)
                    checker = CitationFilter(len(sources))
                    parts: list[str] = []
                    async for delta in _stream(llm, messages, s.llm_max_tokens, s.llm_temperature):
                        if "first_token" not in timings:
                            mark("first_token")
                        shown = checker.feed(delta)
                        if shown:
                            parts.append(shown)
                            yield {"event": "token", "data": json.dumps({"text": shown})}
                    tail = checker.finish()
                    if tail:
                        parts.append(tail)
                        yield {"event": "token", "data": json.dumps({"text": tail})}
                    text, cited, invalid = "".join(parts).strip(), list(checker.used), checker.invalid
                    grounded = bool(cited)
                    # the model writes Markdown: the page renders it safely, the CLI and MCP read it plain
                    text, answered = plain(text), {"answer_markdown": text}
                    if invalid:
                        log.warning("invalid citations removed", extra={"invalid": invalid, "sources": len(sources)})
                    if not grounded:
                        # Nothing the model wrote is backed by a source: it must not read as fact.  Beside
                        # it go the best quoted passages, which are (the extractive answer).
                        unsupported = True
                        quoted = extractive_answer(standalone, sources, encoder=encoder, tz=zone_,
                                                   conventions=calendar)
                        if quoted.grounded:
                            extractive = {"answer": quoted.text, "citations": quoted.citations}
                mark("total")
                done = {"answer": text, "answer_markdown": answered.get("answer_markdown", text), "citations": cited,
                        "found": answered.get("found", grounded), "quotes": answered.get("quotes", []),
                        "invalid_citations": invalid, "grounded": grounded,
                        "unsupported": unsupported, "extractive": extractive, "answer_mode": mode,
                        "conversation_id": conversation_id, "timings_ms": timings}
                if body.keep:  # a one-shot question (the CLI's, unless asked to keep it) is kept nowhere
                    await asyncio.to_thread(_remember, rt, user, conversation_id, question, standalone, done,
                                            understood, shown_sources)
                yield {"event": "done", "data": json.dumps(done)}
            except (RetryableError, PermanentError) as exc:
                yield {"event": "error", "data": json.dumps({"message": str(exc), "retryable":
                                                             isinstance(exc, RetryableError)})}
            except Exception:  # the stream has started: report the error in-band, without its details
                error_id = uuid.uuid4().hex[:12]
                log.exception("answering failed", extra={"error_id": error_id})
                yield {"event": "error", "data": json.dumps({
                    "message": f"the answer failed; try again (error id {error_id})", "error_id": error_id})}
            finally:
                telemetry.QUERY_DURATION.record(time.perf_counter() - t0, {"route": "ask", "query_class": query_class})

        return EventSourceResponse(events(), ping=10)

    convs = rt.metadata.conversations
    no_such_conversation = "no such conversation (it was deleted, or it is not yours)"

    @router.get("/v1/conversations", summary="Your conversations, the latest first")
    async def list_conversations(user: str = auth,
                                 limit: Annotated[int, Query(ge=1, le=500)] = 100,
                                 q: Annotated[Text | None, Query(max_length=200, description=(
                                     "Only conversations whose title or one of whose questions contains "
                                     "this (case-insensitive)."))] = None) -> dict[str, Any]:
        listed = await asyncio.to_thread(functools.partial(convs.recent_conversations, user, limit,
                                                           matching=q.strip() if q and q.strip() else None))
        return {"conversations": [conversation_json(c) for c in listed]}

    @router.get("/v1/conversations/{conversation_id}",
                summary="One conversation: each question with its answer, sources and what was understood")
    async def get_conversation(conversation_id: str, user: str = auth) -> dict[str, Any]:
        found = await asyncio.to_thread(convs.get_conversation, user, conversation_id)
        if found is None:
            raise HTTPException(404, no_such_conversation)
        turns = await asyncio.to_thread(convs.get_turns, user, conversation_id, found.turns)
        return {**conversation_json(found), "turns": exchanges(turns)}

    @router.patch("/v1/conversations/{conversation_id}", summary="Rename a conversation")
    async def rename_conversation(conversation_id: str, body: RenameIn, user: str = auth) -> dict[str, Any]:
        title = body.title.strip() if body.title else None
        if not await asyncio.to_thread(convs.rename_conversation, user, conversation_id, title or None):
            raise HTTPException(404, no_such_conversation)
        found = await asyncio.to_thread(convs.get_conversation, user, conversation_id)
        if found is None:  # deleted meanwhile
            raise HTTPException(404, no_such_conversation)
        return conversation_json(found)

    @router.delete("/v1/conversations/{conversation_id}", status_code=204,
                   summary="Delete a conversation and everything asked in it")
    async def delete_conversation(conversation_id: str, user: str = auth) -> Response:
        if not await asyncio.to_thread(convs.delete_conversation, user, conversation_id):
            raise HTTPException(404, no_such_conversation)
        return Response(status_code=204)

    @router.get("/v1/timeline", summary="What was captured when, grouped by day")
    async def timeline(
        user: str = auth,
        start: Annotated[datetime | None, Query(alias="from")] = None,
        end: Annotated[datetime | None, Query(alias="to")] = None,
        tz: str | None = None,
        field: TimeFieldParam = "captured_at",
        modality: Annotated[list[str] | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
    ) -> dict[str, Any]:
        zone_ = zone(tz, s.timezone)
        lo = aware(start, zone_) or datetime.now(zone_).replace(hour=0, minute=0, second=0, microsecond=0) \
            - timedelta(days=30)
        hi = aware(end, zone_)
        docs = await asyncio.to_thread(rt.metadata.catalog.documents_between, user, lo, hi, field=field, limit=limit,
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
    async def raw(artifact_id: str, user: str = auth) -> StreamingResponse:
        try:
            key = keys.artifact_key(user, artifact_id)
        except ValueError:
            raise HTTPException(404, "no such artifact") from None
        info = await asyncio.to_thread(rt.objects.stat, key)
        if info is None:
            art = await asyncio.to_thread(rt.metadata.catalog.get_artifact, user, artifact_id)
            if art is not None and art.raw_purged_at is not None:
                days = s.raw_retention_days
                raise HTTPException(410, f"the original file was removed on {art.raw_purged_at.date().isoformat()} "
                                         "by the raw-file retention setting (SB_RAW_RETENTION_DAYS"
                                         f"{'=' + str(days) if days is not None else ''}); its text is still "
                                         "indexed and searchable")
            raise HTTPException(404, "no such artifact")

        def body() -> Iterator[bytes]:
            try:
                yield from rt.objects.open(key)
            except ObjectNotFound:
                return

        media_type = info.content_type or "application/octet-stream"
        art = await asyncio.to_thread(rt.metadata.catalog.get_artifact, user, artifact_id)
        headers = {"Content-Length": str(info.size), "Cache-Control": "private, max-age=3600",
                   **raw_file_headers(media_type, art.filename if art is not None else None)}
        return StreamingResponse(body(), media_type=media_type, headers=headers)

    return router


async def _stream(llm: ChatLLM, messages: list[dict[str, str]], max_tokens: int,
                  temperature: float) -> AsyncIterator[str]:
    """The model's blocking token stream, consumed on a worker thread."""
    queue: asyncio.Queue[tuple[str, object]] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def produce() -> None:
        try:
            for delta in llm.stream_chat(messages, max_tokens=max_tokens, temperature=temperature):
                loop.call_soon_threadsafe(queue.put_nowait, ("delta", delta))
            loop.call_soon_threadsafe(queue.put_nowait, ("end", None))
        except BaseException as exc:
            loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))

    # The model's span is made in the worker: it must see this request's trace context.
    worker = loop.run_in_executor(None, contextvars.copy_context().run, produce)
    while True:
        kind, value = await queue.get()
        if kind == "delta":
            yield str(value)
        elif kind == "error":
            await worker
            raise value  # type: ignore[misc]
        else:
            await worker
            return


def _remember(rt: Runtime, user: str, conversation_id: str, question: str, standalone: str, done: dict[str, Any],
              understood: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    """Keep the exchange, and the question as understood, so a follow-up can be understood; the answer keeps
    what the person saw with it (sources, what was understood), so the conversation can be shown again."""
    turns = rt.metadata.conversations.get_turns(user, conversation_id, 1)
    if not (turns and turns[-1].role == "user" and turns[-1].content == question):
        rt.metadata.conversations.add_turn(user, conversation_id, "user", question, {"standalone": standalone})
    kept = ("citations", "grounded", "unsupported", "extractive", "answer_mode", "answer_markdown", "found", "quotes")
    rt.metadata.conversations.add_turn(user, conversation_id, "assistant", done["answer"], {
        **{k: done[k] for k in kept}, "standalone": standalone, "meta": understood, "sources": sources})


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


def _load_reranker(model_dir: Any) -> Any:
    """A cross-encoder from a local directory, when one is configured."""
    if model_dir is None:
        return None
    from services.query.rerank import OnnxCrossEncoder

    return OnnxCrossEncoder(model_dir)
