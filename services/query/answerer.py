"""The answer to a question, as a typed service: :meth:`Answerer.start` checks the question and returns the
stream of :data:`~secondbrain.answer_events.AnswerEvent` s that answer it (the events and their order:
:mod:`secondbrain.answer_events`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from opentelemetry import trace

from secondbrain import telemetry
from secondbrain.agenda_lines import AgendaLines
from secondbrain.answer_events import AnswerEvent, Done, Error, Meta, Sources, Token
from secondbrain.errors import PermanentError, RetryableError
from secondbrain.llm import ChatLLM
from secondbrain.ports import ForeignConversation, SparseEncoder
from secondbrain.reading import plain
from secondbrain.runtime import Runtime
from secondbrain.search_hits import SearchHit
from secondbrain.temporal import Conventions
from secondbrain.temporal.mentions import Mention
from secondbrain.temporal.written import Calendar, span_words
from secondbrain.vector_indexes import ActiveIndexes
from services.http_helpers import aware, calendar_conventions, zone_named
from services.query.agenda_answer import AgendaQuestion, agenda_question, tell
from services.query.answer import CitationFilter, build_messages, clock
from services.query.answer_model import AnswerModel
from services.query.engine import Filters, Plan, QueryEngine, Source
from services.query.extractive import MAX_WORDS, NOT_FOUND, Answer, extractive_answer
from services.query.followup import Followup, rewrite_followup
from services.query.params import AskIn
from services.query.revisions import turns_before

# The name the answer's failures have always been logged under (operators filter on it).
log = logging.getLogger("services.query.api")


class QuestionRefused(Exception):
    """A question refused before anything of its answer streams: ``invalid`` (empty, an unknown time zone,
    unreadable calendar settings) or ``foreign`` (another user's conversation).  ``reason`` is said to the
    person; the HTTP layer picks the status."""

    def __init__(self, reason: str, why: Literal["invalid", "foreign"]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.why = why


@dataclass(frozen=True)
class _Question:
    """A question checked and read before its answer streams: who asks, in which zone and calendar, with
    which filters, in which conversation and with what it said before."""

    user: str
    body: AskIn
    llm: ChatLLM | None
    question: str
    zone: ZoneInfo
    calendar: Conventions
    filters: Filters
    conversation_id: str
    now: datetime | None
    history: list[tuple[str, str]]
    asked: list[str]
    context: list[tuple[str, str]]


class Answerer:
    """Answers questions about a user's data: retrieval, the listing, extractive or model answer with its
    citations, and the conversation kept (``keep``).  ``llm`` is the start-up model; ``answer_model``, when
    given, picks it per question instead, following what an admin sets at run time."""

    def __init__(self, rt: Runtime, engine: QueryEngine, encoder: SparseEncoder, *, llm: ChatLLM | None = None,
                 answer_model: AnswerModel | None = None) -> None:
        self.rt = rt
        self.engine = engine
        self.encoder = encoder
        self.default_llm = llm
        self.answer_model = answer_model
        self.agenda: AgendaLines | None = None  # the agenda's lines, when the process serves the agenda too

    @classmethod
    def for_runtime(cls, rt: Runtime, *, llm: ChatLLM | None = None,
                    answer_model: AnswerModel | None = None) -> Answerer:
        """An answerer over the runtime's stores and models, with the query engine the settings describe."""
        if rt.vectors is None or rt.embedder is None or rt.sparse is None:
            raise RuntimeError("the query service needs a vector store and models")
        s = rt.settings
        indexes = ActiveIndexes(rt.metadata.indexes, rt.embedders, rt.embedder) if rt.embedders is not None else None
        engine = QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, candidates=s.search_candidates,
                             budget_tokens=s.ask_context_tokens, per_document=s.ask_max_chunks_per_document,
                             reranker=_load_reranker(s.reranker_model_dir), indexes=indexes)
        return cls(rt, engine, rt.sparse, llm=llm, answer_model=answer_model)

    async def start(self, user: str, body: AskIn) -> AsyncIterator[AnswerEvent]:
        """Check the question and return the events that answer it.  Raises :class:`QuestionRefused` before
        anything streams: ``invalid`` for an empty question, an unknown time zone or unreadable calendar
        settings, ``foreign`` for another user's conversation."""
        return self._events(await self._read(user, body))

    async def _read(self, user: str, body: AskIn) -> _Question:
        rt, s = self.rt, self.rt.settings
        llm = await asyncio.to_thread(self.answer_model.current) if self.answer_model is not None \
            else self.default_llm
        question = body.question.strip()
        if not question:
            raise QuestionRefused("the question is empty", "invalid")
        try:
            zone_ = zone_named(body.tz, s.timezone)
            calendar = calendar_conventions(s, body.locale, body.country, body.hemisphere, body.date_order)
        except ValueError as exc:
            raise QuestionRefused(str(exc), "invalid") from None
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
            raise QuestionRefused(str(exc), "foreign") from None
        return _Question(user, body, llm, question, zone_, calendar, filters, conversation_id, now, history, asked,
                         context)

    async def _events(self, q: _Question) -> AsyncIterator[AnswerEvent]:
        rt, s, engine, encoder = self.rt, self.rt.settings, self.engine, self.encoder
        user, body, llm, question, zone_, calendar = q.user, q.body, q.llm, q.question, q.zone, q.calendar
        conversation_id, now, history, asked, context = q.conversation_id, q.now, q.history, q.asked, q.context
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
                plan = engine.plan(standalone, tz=zone_, filters=q.filters, now=now, conventions=calendar)
            query_class = plan.query_class
            asked_agenda = agenda_question(standalone, now or datetime.now(UTC), zone_, calendar) \
                if self.agenda is not None and not q.filters.has_time else None
            if asked_agenda is not None:  # what is coming: the agenda's own lines, as the Upcoming panel shows them
                request_span.set_attribute("sb.answer.mode", "agenda")
                async for event in self._from_agenda(q, plan, asked_agenda, standalone, followup, timings, mark):
                    yield event
                return
            subject = saved_about(standalone) if plan.query_class == "semantic" else None
            mode = "listing" if plan.query_class == "temporal" or subject else ("llm" if llm else "extractive")
            request_span.set_attribute("sb.query.class", plan.query_class)
            request_span.set_attribute("sb.answer.mode", mode)
            mark("understand")
            meta = Meta(
                dict(plan.meta()), answer_mode=mode, conversation_id=conversation_id,
                standalone_question=standalone if standalone != question else None,
                carried_over=followup.carried.to_json() if followup.carried else None,
                fresh=body.fresh, model=llm.model_id if llm and mode == "llm" else None,
                revises=body.revises.model_dump() if body.revises else None,
                note=None if mode != "extractive" else
                "No language model is configured: the answer quotes your sources.")
            yield meta
            with tracer.start_as_current_span("query retrieve", attributes={
                    "sb.query.class": plan.query_class, "sb.k": body.k}) as span:
                if subject is not None:  # "what did I save about X?": every source that matches, not the best few
                    sources = await asyncio.to_thread(engine.matching_sources, user,
                                                      replace(plan, semantic_query=subject))
                else:
                    sources = await asyncio.to_thread(engine.sources, user, plan, k=body.k)
                beyond = None  # the time asked about held nothing: what its sources are instead, said first
                wider = plan.beyond_window() if not sources and mode != "listing" else None
                if wider is not None:
                    sources = await asyncio.to_thread(engine.sources, user, wider, k=body.k)
                    beyond = beyond_label(plan, now or datetime.now(UTC), calendar) if sources else None
                    span.set_attribute("sb.beyond_window", bool(sources))
                span.set_attribute("sb.sources", len(sources))
            mark("retrieval")
            shown = Sources([source_json(n, x, zone_) for n, x in enumerate(sources, 1)])
            yield shown
            invalid: list[str] = []
            unsupported, extractive = False, None
            answered: dict[str, Any] = {}  # the answer with its quoted Markdown, and where each quote points
            if mode == "listing":
                text = matches_answer(subject, sources, zone_, now) if subject is not None \
                    else listing_answer(plan, sources)
                cited, grounded = list(range(1, len(sources) + 1)), bool(sources)
                for line in text.splitlines(keepends=True):
                    yield Token(line)
            elif not await asyncio.to_thread(engine.supported, user, standalone, sources):
                text, cited, grounded = NOT_FOUND, [], False
                yield Token(text)
            elif mode == "extractive":
                ans = quoted_answer(standalone, sources, beyond, encoder=encoder, tz=zone_, conventions=calendar,
                                    window=(plan.start, plan.end) if beyond is None else None)
                text, cited, grounded = ans.text, ans.citations, ans.grounded
                answered = quoted_json(ans, sources)
                for word in text.split(" "):
                    yield Token(word + " ")
            else:
                assert llm is not None
                messages = build_messages(question if not context else standalone, sources, zone_,
                                          now or datetime.now(UTC), context, beyond=beyond)
                checker = CitationFilter(len(sources))
                parts: list[str] = []
                async for delta in _stream(llm, messages, s.llm_max_tokens, s.llm_temperature):
                    if "first_token" not in timings:
                        mark("first_token")
                    piece = checker.feed(delta)
                    if piece:
                        parts.append(piece)
                        yield Token(piece)
                tail = checker.finish()
                if tail:
                    parts.append(tail)
                    yield Token(tail)
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
                    quoted = quoted_answer(standalone, sources, beyond, encoder=encoder, tz=zone_,
                                           conventions=calendar)
                    if quoted.grounded:
                        extractive = {"answer": quoted.text, "citations": quoted.citations}
            mark("total")
            done = Done(text, answer_markdown=answered.get("answer_markdown", text), citations=cited,
                        found=answered.get("found", grounded), quotes=answered.get("quotes", []),
                        invalid_citations=invalid, grounded=grounded, unsupported=unsupported,
                        extractive=extractive, answer_mode=mode, conversation_id=conversation_id,
                        timings_ms=timings, beyond_window=beyond)
            if body.keep:  # a one-shot question (the CLI's, unless asked to keep it) is kept nowhere
                await asyncio.to_thread(_remember, rt, user, conversation_id, question, standalone, done.data(),
                                        meta.data(), shown.sources)
            yield done
        except (RetryableError, PermanentError) as exc:
            yield Error(str(exc), retryable=isinstance(exc, RetryableError))
        except Exception:  # the stream has started: report the error in-band, without its details
            error_id = uuid.uuid4().hex[:12]
            log.exception("answering failed", extra={"error_id": error_id})
            yield Error(f"the answer failed; try again (error id {error_id})", error_id=error_id)
        finally:
            telemetry.QUERY_DURATION.record(time.perf_counter() - t0, {"route": "ask", "query_class": query_class})


    async def _from_agenda(self, q: _Question, plan: Plan, asked: AgendaQuestion, standalone: str,
                           followup: Followup, timings: dict[str, float],
                           mark: Callable[[str], None]) -> AsyncIterator[AnswerEvent]:
        """The answer to a question about what is coming: the agenda's lines for the time asked, each cited."""
        assert self.agenda is not None
        window = {"from": asked.start.isoformat(), "to": asked.end.isoformat(), "next": list(asked.subject) or None}
        meta = Meta(dict(plan.meta(), agenda=window), answer_mode="agenda", conversation_id=q.conversation_id,
                    standalone_question=standalone if standalone != q.question else None,
                    carried_over=followup.carried.to_json() if followup.carried else None, fresh=q.body.fresh,
                    model=None, revises=q.body.revises.model_dump() if q.body.revises else None,
                    note="Answered from your agenda: the lines the Upcoming panel shows for that time.")
        yield meta
        mark("understand")
        told = await asyncio.to_thread(tell, self.agenda, q.user, asked, q.zone, q.calendar)
        mark("retrieval")
        shown = Sources([{**source_json(n, QueryEngine._as_source(h), q.zone), "agenda": [
            line["id"] for line in told.lines if line["n"] == n]} for n, h in enumerate(told.hits, 1)])
        yield shown
        for line in told.text.splitlines(keepends=True):
            yield Token(line)
        mark("total")
        done = Done(told.text, answer_markdown=told.text, citations=told.citations, found=bool(told.lines),
                    quotes=[], invalid_citations=[], grounded=bool(told.lines), unsupported=False, extractive=None,
                    answer_mode="agenda", conversation_id=q.conversation_id, timings_ms=timings)
        if q.body.keep:
            await asyncio.to_thread(_remember, self.rt, q.user, q.conversation_id, q.question, standalone,
                                    done.data(), meta.data(), shown.sources)
        yield done


def quoted_answer(question: str, sources: list[Source], beyond: str | None, *, encoder: SparseEncoder, tz: ZoneInfo,
                  conventions: Conventions, window: tuple[datetime | None, datetime | None] | None = None) -> Answer:
    """The extractive answer, the answer itself without a model and the quoted passages beside a model's answer
    that cites nothing: led by ``beyond`` (sources from other times than the one asked) within the same word
    budget, so neither reads as from the time asked."""
    ans = extractive_answer(question, sources, encoder=encoder, tz=tz, conventions=conventions, window=window,
                            max_words=MAX_WORDS - len(beyond.split()) if beyond else MAX_WORDS)
    if beyond and ans.found:
        ans = replace(ans, text=f"{beyond} {ans.text}", markdown=f"{beyond} {ans.markdown or ans.text}")
    return ans


def beyond_label(plan: Plan, now: datetime, calendar: Conventions) -> str:
    """What an answer says first when the time its question names held nothing and its sources are from other
    times: "Nothing in your data is from summer 2024, Jun 1 \u2013 Aug 31; the closest from other times:"."""
    window = plan.window  # a bounded one: beyond_window() is only for soft windows
    assert window is not None and window.start is not None and window.end is not None
    when = span_words(Mention(window.start, window.end, window.expression, (0, 0)), plan.tz, now,
                      Calendar(calendar.date_order))
    return f"Nothing in your data is from {when}; the closest from other times:"


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


# "What did I save about X?", "what have I got on X?", "what do I have about X?": a question after every source on X.
_SAVED_ABOUT = re.compile(
    r"^\s*(?:what|which\s+(?:notes|things|sources))\s+(?:did|have|do)\s+i\s+"
    r"(?:(?:ever\s+)?(?:save|saved|keep|kept|note|noted|write|written|store|stored|add|added)(?:\s+down)?|have|got|"
    r"have\s+got)\s+(?:about|on|regarding|concerning)\s+(?P<subject>.+?)\s*[?.!]*\s*$", re.I)


def saved_about(question: str) -> str | None:
    """The subject of a question after every source about it ("what did I save about the boiler?"), or None."""
    m = _SAVED_ABOUT.match(question)
    return m.group("subject").strip() if m and m.group("subject").strip() else None


def matches_answer(subject: str, sources: list[Source], tz: ZoneInfo, now: datetime | None = None) -> str:
    """Every source found about ``subject``, each with when it was saved and cited; or that nothing matches."""
    if not sources:
        return f"Nothing you saved matches “{subject}”."
    this_year = (now or datetime.now(tz)).astimezone(tz).year
    count = f"{len(sources)} source{'s' if len(sources) != 1 else ''}"
    lines = [f"You saved {count} about “{subject}”, the closest first:"]
    for n, s in enumerate(sources, 1):
        added = _local(s.hit.ingested_at, tz)
        lines.append(f"- {s.hit.title} ({s.hit.modality}, saved {_day(added, this_year)}) [{n}]")
    return "\n".join(lines)


def _local(iso: str, tz: ZoneInfo) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(tz)


def _day(d: datetime, this_year: int) -> str:
    """'Thu 20 Nov', with the year when it is not ``this_year`` ('Thu 20 Nov 2025')."""
    return f"{d:%a} {d.day} {d:%b}" + (f" {d.year}" if d.year != this_year else "")


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


def _load_reranker(model_dir: Any) -> Any:
    """A cross-encoder from a local directory, when one is configured."""
    if model_dir is None:
        return None
    from services.query.rerank import OnnxCrossEncoder

    return OnnxCrossEncoder(model_dir)
