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
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from opentelemetry import trace

from secondbrain import telemetry
from secondbrain.agenda_lines import AgendaLines
from secondbrain.answer_events import AnswerEvent, Done, Error, Meta, Quote, Quoted, Revised, Sources, Token
from secondbrain.answer_events import Source as ShownSource
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
        """The answer's steps: understand the question (:meth:`_understand`), say what was understood
        (:func:`_meta`), find the sources (:meth:`_retrieve`), write the answer (:meth:`_write`), then keep
        the exchange when asked to (:func:`_remember`).  A failure once the stream has started is an
        :class:`Error` event."""
        timer = _Timer()
        request_span = trace.get_current_span()  # the HTTP request's span: the stream runs inside it
        query_class = "unknown"
        try:
            plan, followup = await self._understand(q)
            query_class = plan.query_class
            asked_agenda = agenda_question(followup.standalone, q.now or datetime.now(UTC), q.zone, q.calendar) \
                if self.agenda is not None and not q.filters.has_time else None
            if asked_agenda is not None:  # what is coming: the agenda's own lines, as the Upcoming panel shows them
                request_span.set_attribute("sb.answer.mode", "agenda")
                async for event in self._from_agenda(q, plan, asked_agenda, followup, timer):
                    yield event
                return
            u = _understood(plan, followup, has_model=q.llm is not None)
            request_span.set_attribute("sb.query.class", plan.query_class)
            request_span.set_attribute("sb.answer.mode", u.mode)
            timer.mark("understand")
            model = q.llm.model_id if q.llm and u.mode == "llm" else None
            meta = _meta(q, followup, dict(plan.meta()), u.mode, model=model,
                         note=NO_MODEL_NOTE if u.mode == "extractive" else None)
            yield meta
            sources, beyond = await self._retrieve(q, u)
            timer.mark("retrieval")
            shown = Sources([shown_source(n, x, q.zone) for n, x in enumerate(sources, 1)])
            yield shown
            written = _Written()
            async for token in self._write(q, u, sources, beyond, written, timer):
                yield token
            timer.mark("total")
            done = written.done(u.mode, q.conversation_id, timer.ms, beyond)
            if q.body.keep:  # a one-shot question (the CLI's, unless asked to keep it) is kept nowhere
                await asyncio.to_thread(_remember, self.rt, q, followup.standalone, done, meta, shown)
            yield done
        except (RetryableError, PermanentError) as exc:
            yield Error(str(exc), retryable=isinstance(exc, RetryableError))
        except Exception:  # the stream has started: report the error in-band, without its details
            error_id = uuid.uuid4().hex[:12]
            log.exception("answering failed", extra={"error_id": error_id})
            yield Error(f"the answer failed; try again (error id {error_id})", error_id=error_id)
        finally:
            telemetry.QUERY_DURATION.record(time.perf_counter() - timer.t0, {"route": "ask",
                                                                            "query_class": query_class})

    async def _understand(self, q: _Question) -> tuple[Plan, Followup]:
        """The question as it will be searched (a follow-up made standalone from the conversation, unless
        asked afresh) and its plan: the query class, the time range, the filters."""
        with telemetry.tracer().start_as_current_span("query plan"):  # no yield inside a span's block
            followup = await asyncio.to_thread(rewrite_followup, q.question, q.asked, q.llm, q.now or datetime.now(UTC),
                                               q.zone, q.calendar, history=q.history) \
                if q.asked and not q.body.fresh else Followup(q.question, None)
            plan = self.engine.plan(followup.standalone, tz=q.zone, filters=q.filters, now=q.now,
                                    conventions=q.calendar)
        return plan, followup

    async def _retrieve(self, q: _Question, u: _Understood) -> tuple[list[Source], str | None]:
        """The sources, and what is said before an answer from them (``beyond``) when the time asked about
        held nothing and they are the closest from other times."""
        engine, plan = self.engine, u.plan
        with telemetry.tracer().start_as_current_span("query retrieve", attributes={
                "sb.query.class": plan.query_class, "sb.k": q.body.k}) as span:
            if u.subject is not None:  # "what did I save about X?": every source that matches, not the best few
                sources = await asyncio.to_thread(engine.matching_sources, q.user,
                                                  replace(plan, semantic_query=u.subject))
            else:
                sources = await asyncio.to_thread(engine.sources, q.user, plan, k=q.body.k)
            beyond = None  # the time asked about held nothing: what its sources are instead, said first
            wider = plan.beyond_window() if not sources and u.mode != "listing" else None
            if wider is not None:
                sources = await asyncio.to_thread(engine.sources, q.user, wider, k=q.body.k)
                beyond = beyond_label(plan, q.now or datetime.now(UTC), q.calendar) if sources else None
                span.set_attribute("sb.beyond_window", bool(sources))
            span.set_attribute("sb.sources", len(sources))
        return sources, beyond

    async def _write(self, q: _Question, u: _Understood, sources: list[Source], beyond: str | None,
                     written: _Written, timer: _Timer) -> AsyncIterator[Token]:
        """The answer as its tokens stream, kept in ``written``: the listing, the refusal when the sources do
        not bear on the question, the quoted (extractive) answer, or the model's."""
        if u.mode == "listing":
            written.text = matches_answer(u.subject, sources, q.zone, q.now) if u.subject is not None \
                else listing_answer(u.plan, sources)
            written.cited, written.grounded = list(range(1, len(sources) + 1)), bool(sources)
            for line in written.text.splitlines(keepends=True):
                yield Token(line)
        elif not await asyncio.to_thread(self.engine.supported, q.user, u.standalone, sources):
            written.text = NOT_FOUND
            yield Token(written.text)
        elif u.mode == "extractive":
            ans = quoted_answer(u.standalone, sources, beyond, encoder=self.encoder, tz=q.zone,
                                conventions=q.calendar, window=(u.plan.start, u.plan.end) if beyond is None else None)
            written.text, written.cited, written.grounded = ans.text, ans.citations, ans.grounded
            # the answer with its quoted Markdown, and where each quote points
            written.markdown, written.found = ans.markdown or ans.text, ans.found
            written.quotes = quote_places(ans, sources)
            for word in written.text.split(" "):
                yield Token(word + " ")
        else:
            async for token in self._from_model(q, u, sources, beyond, written, timer):
                yield token

    async def _from_model(self, q: _Question, u: _Understood, sources: list[Source], beyond: str | None,
                          written: _Written, timer: _Timer) -> AsyncIterator[Token]:
        """The model's answer as it streams, its citations checked against the sources; beside an answer that
        cites nothing, the best quoted passages."""
        s = self.rt.settings
        assert q.llm is not None
        messages = build_messages(q.question if not q.context else u.standalone, sources, q.zone,
                                  q.now or datetime.now(UTC), q.context, beyond=beyond)
        checker = CitationFilter(len(sources))
        parts: list[str] = []
        async for delta in _stream(q.llm, messages, s.llm_max_tokens, s.llm_temperature):
            if "first_token" not in timer.ms:
                timer.mark("first_token")
            piece = checker.feed(delta)
            if piece:
                parts.append(piece)
                yield Token(piece)
        tail = checker.finish()
        if tail:
            parts.append(tail)
            yield Token(tail)
        # the model writes Markdown: the page renders it safely, the CLI and MCP read it plain
        written.markdown = "".join(parts).strip()
        written.text, written.cited, written.invalid = plain(written.markdown), list(checker.used), checker.invalid
        written.grounded = bool(written.cited)
        if written.invalid:
            log.warning("invalid citations removed", extra={"invalid": written.invalid, "sources": len(sources)})
        if not written.grounded:
            # Nothing the model wrote is backed by a source: it must not read as fact.  Beside
            # it go the best quoted passages, which are (the extractive answer).
            written.unsupported = True
            quoted = quoted_answer(u.standalone, sources, beyond, encoder=self.encoder, tz=q.zone,
                                   conventions=q.calendar)
            if quoted.grounded:
                written.extractive = Quoted(quoted.text, quoted.citations)

    async def _from_agenda(self, q: _Question, plan: Plan, asked: AgendaQuestion, followup: Followup,
                           timer: _Timer) -> AsyncIterator[AnswerEvent]:
        """The answer to a question about what is coming: the agenda's lines for the time asked, each cited."""
        assert self.agenda is not None
        window = {"from": asked.start.isoformat(), "to": asked.end.isoformat(), "next": list(asked.subject) or None}
        meta = _meta(q, followup, dict(plan.meta(), agenda=window), "agenda", model=None, note=AGENDA_NOTE)
        yield meta
        timer.mark("understand")
        told = await asyncio.to_thread(tell, self.agenda, q.user, asked, q.zone, q.calendar)
        timer.mark("retrieval")
        shown = Sources([replace(shown_source(n, QueryEngine._as_source(h), q.zone), agenda=[
            line["id"] for line in told.lines if line["n"] == n]) for n, h in enumerate(told.hits, 1)])
        yield shown
        for line in told.text.splitlines(keepends=True):
            yield Token(line)
        timer.mark("total")
        done = Done(told.text, answer_markdown=told.text, citations=told.citations, found=bool(told.lines),
                    quotes=[], invalid_citations=[], grounded=bool(told.lines), unsupported=False, extractive=None,
                    answer_mode="agenda", conversation_id=q.conversation_id, timings_ms=timer.ms)
        if q.body.keep:
            await asyncio.to_thread(_remember, self.rt, q, followup.standalone, done, meta, shown)
        yield done


NO_MODEL_NOTE = "No language model is configured: the answer quotes your sources."
AGENDA_NOTE = "Answered from your agenda: the lines the Upcoming panel shows for that time."


class _Timer:
    """When each step of an answer ended, in milliseconds since it started (``timings_ms``)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.ms: dict[str, float] = {}

    def mark(self, name: str) -> None:
        self.ms[name] = round((time.perf_counter() - self.t0) * 1000, 1)


@dataclass(frozen=True)
class _Understood:
    """A question understood: its plan, its reading as a follow-up, the subject of a "what did I save about
    X?" question, and how it is answered (``listing``, ``llm`` or ``extractive``)."""

    plan: Plan
    followup: Followup
    subject: str | None
    mode: Literal["listing", "llm", "extractive"]

    @property
    def standalone(self) -> str:
        return self.followup.standalone


def _understood(plan: Plan, followup: Followup, *, has_model: bool) -> _Understood:
    """How a question is answered: a time-only question, or one after every source about a subject, by a
    listing; else by the model when there is one, or by quoting the sources."""
    subject = saved_about(followup.standalone) if plan.query_class == "semantic" else None
    mode: Literal["listing", "llm", "extractive"] = \
        "listing" if plan.query_class == "temporal" or subject else ("llm" if has_model else "extractive")
    return _Understood(plan, followup, subject, mode)


def _meta(q: _Question, followup: Followup, understood: dict[str, Any], mode: str, *, model: str | None,
          note: str | None) -> Meta:
    """What was understood, as the ``meta`` event says it."""
    standalone = followup.standalone
    revises = q.body.revises
    return Meta(understood, answer_mode=mode, conversation_id=q.conversation_id,
                standalone_question=standalone if standalone != q.question else None,
                carried_over=followup.carried, fresh=q.body.fresh, model=model,
                revises=Revised(revises.question, revises.how) if revises else None, note=note)


@dataclass
class _Written:
    """An answer as it is written: its plain text, the citations it uses, whether it is grounded, its
    Markdown and quotes (when they differ from the text), and for a model's answer the citations removed
    and what the sources say beside an answer that cites nothing."""

    text: str = ""
    cited: list[int] = field(default_factory=list)
    grounded: bool = False
    markdown: str | None = None
    found: bool | None = None
    quotes: list[Quote] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    unsupported: bool = False
    extractive: Quoted | None = None

    def done(self, mode: str, conversation_id: str, timings: dict[str, float], beyond: str | None) -> Done:
        return Done(self.text, answer_markdown=self.text if self.markdown is None else self.markdown,
                    citations=self.cited, found=self.grounded if self.found is None else self.found,
                    quotes=self.quotes, invalid_citations=self.invalid, grounded=self.grounded,
                    unsupported=self.unsupported, extractive=self.extractive, answer_mode=mode,
                    conversation_id=conversation_id, timings_ms=timings, beyond_window=beyond)


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


def shown_source(n: int, s: Source, tz: ZoneInfo) -> ShownSource:
    """A numbered source as sent to the client."""
    h = s.hit
    snippet = " ".join(s.text.split())
    try:
        local = datetime.fromisoformat(h.captured_at.replace("Z", "+00:00")).astimezone(tz).isoformat()
    except ValueError:
        local = h.captured_at
    return ShownSource(n, h, captured_at_local=local, t_start=s.t_start, t_end=s.t_end,
                       snippet=snippet[:300] + ("…" if len(snippet) > 300 else ""), link=raw_link(h),
                       neighbours=s.neighbours,
                       position=f"{clock(s.t_start)}-{clock(s.t_end or s.t_start)}" if s.t_start is not None else None)


def quote_places(ans: Answer, sources: list[Source]) -> list[Quote]:
    """Where each quote of an extractive answer is in its source (the page of the quoted words, the second they
    are said at), for the page to point at."""
    out = []
    for q in ans.quotes:
        h = sources[q.n - 1].hit
        link = f"/v1/artifacts/{h.artifact_id}/raw" + (f"#page={q.page}" if q.page is not None else
                                                       f"#t={int(q.t_start)}" if q.t_start is not None else "")
        out.append(Quote(q.n, q.page, q.t_start, link, clock(q.t_start) if q.t_start is not None else None))
    return out


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


def _remember(rt: Runtime, q: _Question, standalone: str, done: Done, understood: Meta, shown: Sources) -> None:
    """Keep the exchange, and the question as understood, so a follow-up can be understood; the answer keeps
    what the person saw with it (sources, what was understood), so the conversation can be shown again."""
    user, conversation_id, question = q.user, q.conversation_id, q.question
    turns = rt.metadata.conversations.get_turns(user, conversation_id, 1)
    if not (turns and turns[-1].role == "user" and turns[-1].content == question):
        rt.metadata.conversations.add_turn(user, conversation_id, "user", question, {"standalone": standalone})
    kept = ("citations", "grounded", "unsupported", "extractive", "answer_mode", "answer_markdown", "found", "quotes")
    answer = done.data()
    rt.metadata.conversations.add_turn(user, conversation_id, "assistant", done.answer, {
        **{k: answer[k] for k in kept}, "standalone": standalone, "meta": understood.data(), "sources": shown.data()})


def _load_reranker(model_dir: Any) -> Any:
    """A cross-encoder from a local directory, when one is configured."""
    if model_dir is None:
        return None
    from services.query.rerank import OnnxCrossEncoder

    return OnnxCrossEncoder(model_dir)
