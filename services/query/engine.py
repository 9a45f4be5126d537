"""From a question to the passages an answer should be grounded in.

1. **Understand** the question: its time window (``secondbrain.temporal``) and class —
   ``semantic``, ``temporal`` (only a time: list what was captured then, by metadata, newest
   first, complete) or ``temporal+semantic``.  An explicit window is a hard filter on event
   time (ingestion time when the question says saved/uploaded/added); a vague one
   ("recently") only boosts recent passages, and one read only in part ("the last working day
   of March": March) only ranks the passages inside it first.
2. **Retrieve** (semantic classes): dense and BM25 candidates fused by RRF inside Qdrant, in
   the asking user's collection only, with the filters applied in the engine; an optional
   cross-encoder reranks them; a recency boost is fused in for vague times.
3. **Select**: at most N chunks per document (diversity; small conversation windows count by
   their tokens), neighbouring chunks added around a short hit or a stretch of speech,
   everything within a token budget.

An explicit window understood from a question with a subject ("what did Caroline say about
the trip in May?") filters on event time, with one day of grace after its end (what happened
on a day is often written down the day after, "yesterday I..."), and is open forwards to
passages that *report* on it later: those captured up to one window-length after it (at least a
week) that share the question's words (BM25 matches, not mere closeness in meaning) are fused
in at a lower weight, so the
window leads while "two weeks ago I read Avalanche" still answers "which book did Jolene read
in January?".  Nothing from before the window is added (a record cannot report on what had not
happened yet).  A time-only question, a cut-off ("as of March"), a client's explicit range and
ingestion time ("what did I save last week?") stay hard filters.

**Time said inside the text.**  The same windows (a bounded window understood from a question
with a subject, on event time) also match passages that *speak of* a time in them ("three weeks
ago we went camping", said later; "can't wait for the weekend", said before), through the times
the chunker stored with each passage (``secondbrain.temporal.mentions``).

**Questions that gather** ("what activities does Melanie do?", "which cities has John been
to?") are answered across several sessions of a conversation, in the named person's words:
for them, passages where a person the question names does the talking rise (a boost by the
share of their turns, never a filter).

**Relevance inside a window.**  A window holds few passages, so a question with a subject would
otherwise get every one of them back ("what did I note about the budget last week?" listing last
week's invoice and meeting too).  When at least one passage in the window is clearly about the
subject (it shares a word with it, or is close in meaning), passages that share no word and are
well below the best in meaning are left out; when none is clearly about it, the window's
passages stay, best first (nothing better can be said about them).  A time-only question still
lists the whole window.

Pure of HTTP and of the LLM: the API streams what this returns.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from secondbrain import telemetry
from secondbrain.ports import (
    Embedder,
    MetadataStore,
    Reranker,
    SearchMode,
    SparseEncoder,
    TimeRange,
    VectorFilter,
    VectorStore,
)
from secondbrain.search_hits import SearchHit, hit_from_payload
from secondbrain.temporal import Conventions, TimeWindow, recurrence, understand
from secondbrain.temporal.mentions import widen
from secondbrain.vector_indexes import ActiveIndexes, SearchTarget
from services.query.relevance import Cut, cut
from services.query.retrieval import Retriever

log = logging.getLogger(__name__)

QueryClass = Literal["semantic", "temporal", "temporal+semantic"]
TimeField = Literal["captured_at", "ingested_at"]
RRF_K = 60
RECENCY_WEIGHT = 0.5  # a vague time nudges, it does not decide
PARTIAL_WINDOW_WEIGHT = 0.5  # so does a time read only in part
MAX_SERIES = 2_000  # recurring events a window lists at most (each is checked for an occurrence in it)
REPORT_LAG = timedelta(days=1)  # records made the day after a window still report on it
# Later reports on a window (see the module doc) are fused in at this weight with a top-heavy RRF
# constant: the best of them comes after about the fourth passage inside the window.
OUTSIDE_WINDOW_WEIGHT = 0.5
# Reports on a window are looked for until one window-length after it, at least a week: news of
# a weekend comes within days, of a month within weeks; much later mentions are about other things.
REPORT_HORIZON = timedelta(days=7)
SOFT_WINDOW_K = 2
# Relevance inside a window (module doc): a passage this close in meaning (cosine, all-MiniLM-L6-v2
# scale) is clearly about the subject; then passages with no shared word more than the margin below
# the best one are not.  Chosen on the test corpus and LoCoMo conversations 1-5.
ON_SUBJECT_COSINE = 0.35
OFF_SUBJECT_MARGIN = 0.15
CHUNK_TOKENS = 300  # the size of an ordinary chunk: what one chunk counts for in diversity
_POSSESSIVE_S = re.compile("['\u2019]s$")
# Questions that gather (``is_gathering``): a passage all in the named person's words counts as if it
# ranked about twice as high.  Chosen on LoCoMo conversations 1-5 (0.5 and 2 did no better); on
# every question it cost overall recall, so it is for these questions only.
SPEAKER_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions a client asks for explicitly (they win over what the question implies)."""

    modalities: tuple[str, ...] | None = None
    source_ids: tuple[str, ...] | None = None
    start: datetime | None = None
    end: datetime | None = None
    time_field: TimeField | None = None

    @property
    def has_time(self) -> bool:
        """Whether the client gave a time range."""
        return self.start is not None or self.end is not None


@dataclass(frozen=True, slots=True)
class Plan:
    """What the engine understood and will do."""

    question: str
    query_class: QueryClass
    semantic_query: str
    window: TimeWindow | None  # understood from the question (None when the client set the range)
    start: datetime | None  # the hard time filter, if any
    end: datetime | None
    time_field: TimeField
    recency_boost: bool
    tz: ZoneInfo
    filters: Filters = field(default_factory=Filters)
    report_lag: timedelta = timedelta(0)  # extra event time searched after ``end``
    conventions: Conventions = field(default_factory=Conventions)  # holidays, seasons, "3/12" read with these

    @property
    def soft_window(self) -> bool:
        """Whether later reports are fused in: a bounded window understood from a question that has a
        subject, about event time (a client's range, a time-only question, "as of X" and "saved ..."
        are hard filters)."""
        return (self.window is not None and not self.window.vague and self.query_class == "temporal+semantic"
                and self.time_field == "captured_at" and not self.filters.has_time
                and self.start is not None and self.end is not None)

    @property
    def prefers_window(self) -> bool:
        """Whether the question's time words were read only in part: the window read ranks the hits inside
        it first and filters nothing."""
        return self.window is not None and self.window.partial and self.start is None and self.end is None

    @property
    def matches_mentions(self) -> bool:
        """Whether passages that speak of a time in the window match it too ("yesterday I ran", said the
        day after): for the same windows as ``soft_window``."""
        return self.soft_window

    @property
    def subject_in_window(self) -> bool:
        """Whether the plan searches a subject inside a time range (where the relevance floor applies)."""
        return self.query_class == "temporal+semantic" and bool(self.semantic_query) and (
            self.start is not None or self.end is not None)

    def beyond_window(self) -> Plan | None:
        """The same question searched at every time: for when the window the question names holds nothing
        about its subject ("what is she planning for next year?" is answered by what was said before it, "in
        2010" by a later memory of it).  Only for a soft window (see ``soft_window``): a client's range, a
        time-only question, a cut-off ("as of March") and "saved ..." stay what they were asked as."""
        if not self.soft_window:
            return None
        # the whole question embeds better than its keywords, and its time words still match ("next year")
        return replace(self, query_class="semantic", semantic_query=self.question, start=None, end=None,
                       report_lag=timedelta(0))

    def vector_filter(self, *, later: bool = False) -> VectorFilter:
        """The filter applied inside the vector store (``later``: from the window's start to the end of
        the time in which reports on it are looked for, see ``REPORT_HORIZON``)."""
        end = self.end + self.report_lag if self.end is not None else None
        if later and self.start is not None and self.end is not None:
            end = self.end + max(REPORT_HORIZON, self.end - self.start)
        time_range = TimeRange(self.start, end) if self.start or end else None
        mentioned = None
        if self.matches_mentions and self.start is not None and self.end is not None:
            mentioned = TimeRange(*widen(self.start, self.end))
        # A recurring event kept as one matches a window of event time its series spans (whether one of its
        # occurrences falls in the window is checked on the hits: see ``in_window``).
        recurring = time_range if self.time_field == "captured_at" and time_range is not None else None
        return VectorFilter(modalities=self.filters.modalities, source_ids=self.filters.source_ids,
                            time_range=time_range, time_field=self.time_field, mentioned_range=mentioned,
                            recurring_range=recurring)

    def in_window(self, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits, less those of recurring events with no occurrence in the window, each of the others with its
        first occurrence there (``occurrence``)."""
        if self.time_field != "captured_at" or not (self.start or self.end):
            return hits
        lo = self.start or datetime.min.replace(tzinfo=UTC)
        hi = self.end or datetime.max.replace(tzinfo=UTC)
        out = []
        for h in hits:
            if h.recurrence is None:
                out.append(h)
                continue
            found = recurrence.occurs(h.recurrence, lo, hi)
            if found is not None:
                out.append(replace(h, occurrence=found.start.astimezone(UTC).isoformat()))
        return out

    def meta(self) -> dict[str, object]:
        """The plan as the ``meta`` event shows it."""
        from secondbrain.temporal import describe

        understood: dict[str, object] | None = None
        if self.window is not None:
            understood = {"expression": self.window.expression, "vague": self.window.vague,
                          "partial": self.window.partial, "description": describe(self.window, self.tz)}
            reading = self.window.reading
            if reading is not None:  # "3/12": say which day was taken and which was not
                understood["ambiguous"] = {"text": reading.text, "chosen": reading.chosen.isoformat(),
                                           "other": reading.other.isoformat(), "order": reading.order}
        calendar = self.conventions
        return {
            "query_class": self.query_class, "semantic_query": self.semantic_query,
            "time_range": None if not (self.start or self.end) else {
                "start": self.start.isoformat() if self.start else None,
                "end": self.end.isoformat() if self.end else None, "field": self.time_field,
                "source": "question" if self.window is not None else "request"},
            "understood": understood, "recency_boost": self.recency_boost, "timezone": str(self.tz),
            "calendar": {"country": calendar.country, "hemisphere": calendar.hemisphere,
                         "date_order": calendar.date_order},
            "time_filter": "soft" if self.soft_window else ("hard" if self.start or self.end else
                                                            "preference" if self.prefers_window else None),
            "mentioned_times": self.matches_mentions,
            **({"report_lag_hours": self.report_lag.total_seconds() / 3600} if self.report_lag else {}),
        }


@dataclass(frozen=True, slots=True)
class Source:
    """A passage to show and cite: a hit, possibly widened with its neighbouring chunks."""

    hit: SearchHit
    text: str
    char_start: int
    char_end: int
    t_start: float | None
    t_end: float | None
    tokens: int
    neighbours: int = 0


class QueryEngine:
    """Plans and runs retrieval for one user at a time (never across users).

    With ``indexes`` every call reads the user's active collection version and embeds with its
    model (looked up at most every few seconds, so a re-index's switch is followed quickly);
    without, the store's default version with ``embedder``.
    """

    def __init__(self, vectors: VectorStore, metadata: MetadataStore, embedder: Embedder, sparse: SparseEncoder, *,
                 reranker: Reranker | None = None, candidates: int = 50, budget_tokens: int = 1500,
                 per_document: int = 3, indexes: ActiveIndexes | None = None) -> None:
        self.vectors = vectors
        self.metadata = metadata
        self.sparse = sparse
        self.reranker = reranker
        self.candidates = candidates
        self.budget_tokens = budget_tokens
        self.per_document = per_document
        # The models and the user's active index are looked up through the retriever (see target()).
        self.retriever = Retriever(vectors, embedder, sparse, candidates=candidates, indexes=indexes)

    def target(self, user_id: str) -> SearchTarget:
        """The collection version and query model for ``user_id``."""
        return self.retriever.target(user_id)

    # ------------------------------------------------------------------ planning

    def plan(self, question: str, *, tz: ZoneInfo, now: datetime | None = None,
             filters: Filters | None = None, conventions: Conventions | None = None) -> Plan:
        """Understand the question (time window, class) and combine it with the client's filters;
        ``conventions`` are the person's holiday country, hemisphere and numeric date order."""
        plan = self._plan(question, tz=tz, now=now, filters=filters, conventions=conventions or Conventions())
        return replace(plan, conventions=conventions) if conventions is not None else plan

    def _plan(self, question: str, *, tz: ZoneInfo, now: datetime | None, filters: Filters | None,
              conventions: Conventions) -> Plan:
        filters = filters or Filters()
        now = now or datetime.now(UTC)
        u = understand(question, now.astimezone(tz), tz, conventions=conventions)
        window = u.time
        semantic = u.semantic_query.strip()
        if filters.has_time:  # the client's range replaces whatever the question implied
            cls: QueryClass = "temporal+semantic" if semantic else "temporal"
            return Plan(question, cls, semantic, None, filters.start, filters.end,
                        filters.time_field or (window.field if window else "captured_at"), False, tz, filters)
        if window is None:
            # No time words: the whole question embeds better than its keywords.
            return Plan(question, "semantic", question, None, None, None, filters.time_field or "captured_at",
                        False, tz, filters)
        if window.vague:
            cls = "semantic" if semantic else "temporal"
            if window is not None and not semantic:
                # "what did I save recently?": nothing to match, so list the recent window itself.
                return Plan(question, "temporal", "", window, window.start, window.end, window.field, False, tz,
                            filters)
            return Plan(question, cls, semantic or question, window, None, None, filters.time_field or window.field,
                        True, tz, filters)
        if window.partial:
            # Time words read only in part ("the last working day of March"): never a filter that could hide
            # what was asked for; the part read (March) ranks the passages inside it first.
            return Plan(question, "semantic", semantic or question, window, None, None,
                        filters.time_field or window.field, False, tz, filters)
        field_ = filters.time_field or window.field
        # Passages about a subject may report on the window a little after it ended; a time-only
        # question lists exactly the window.
        lag = REPORT_LAG if u.query_class == "temporal+semantic" and field_ == "captured_at" else timedelta(0)
        return Plan(question, u.query_class, semantic, window, window.start, window.end, field_, False, tz, filters,
                    lag)

    # ------------------------------------------------------------------ retrieval

    def search(self, user_id: str, plan: Plan, *, k: int = 10, mode: SearchMode = "hybrid") -> list[SearchHit]:
        """Ranked chunks for a semantic plan: candidates (``hybrid``: dense and BM25 fused; ``dense`` or
        ``sparse`` alone, for comparison), a soft time window fused in, reranked, boosted, diversified."""
        query = plan.semantic_query or plan.question
        limit = max(self.candidates, k)
        hits = self.retriever.search(user_id, query, k=limit, mode=mode, flt=plan.vector_filter())
        if plan.subject_in_window and mode != "sparse" and hits:
            hits = self._on_subject(user_id, query, hits, plan.vector_filter())
        if plan.soft_window and mode != "dense":
            later = self.retriever.search(user_id, query, k=limit, mode="sparse", flt=plan.vector_filter(later=True))
            hits = _fuse_outside(hits, later)[:limit]
        if hits and is_gathering(plan.question):
            hits = _toward_speakers(plan.question, hits)
        if self.reranker is not None and hits:
            with telemetry.tracer().start_as_current_span("rerank", attributes={
                    "sb.rerank.model": self.reranker.model_id, "sb.candidates": len(hits)}):
                scores = self.reranker.score(query, [f"{h.title}\n{h.text}" for h in hits])
            hits = [replace(h, score=s) for s, h in sorted(zip(scores, hits, strict=True), key=lambda p: -p[0])]
        if plan.recency_boost and hits:
            hits = _boost_recent(hits, plan.time_field)
        if plan.prefers_window and plan.window is not None and hits:
            hits = _toward_window(hits, plan.window, plan.time_field)
        return _diversify(plan.in_window(hits), self.per_document)[:k]

    def _on_subject(self, user_id: str, query: str, hits: list[SearchHit], flt: VectorFilter) -> list[SearchHit]:
        """The window's hits without those that share nothing with the subject (see the module doc).

        BM25 hits match a query word by construction (``sparse`` mode never comes here); the
        cosines come from one dense query over the same window."""
        terms = set(self.sparse.tokenize(query))
        lexical = {h.chunk_id for h in hits if terms & set(self.sparse.tokenize(f"{h.title} {h.text}"))}
        cosine = self.retriever.cosines(user_id, query, flt, limit=len(hits))
        best = max(cosine.values(), default=0.0)
        if not lexical and best < ON_SUBJECT_COSINE:
            return hits  # nothing is clearly about the subject: keep the window's passages, best first
        floor = best - OFF_SUBJECT_MARGIN
        return [h for h in hits if h.chunk_id in lexical or cosine.get(h.chunk_id, -1.0) >= floor]

    def relevant(self, user_id: str, plan: Plan, hits: list[SearchHit], *, meaning: bool = True) -> Cut:
        """The ranked ``hits`` of a source search less those that do not match its subject
        (:mod:`services.query.relevance`): the cosines come from one dense query over their documents
        (``meaning=False``: by the words alone, as a keyword-only search needs no embedding model)."""
        if not hits:
            return Cut(False, [], [])
        query = plan.semantic_query or plan.question
        documents = sorted({h.document_id for h in hits})
        cosine = self.retriever.cosines(user_id, query, VectorFilter(document_ids=documents),
                                        limit=max(100, 2 * len(hits))) if meaning else {}
        return cut(query, hits, cosine, self.sparse.tokenize)

    def matching_sources(self, user_id: str, plan: Plan, *, limit: int = 20) -> list[Source]:
        """Every source that matches the plan's subject (the relevance cut of a source search), each once with
        its best passage, best first: for "what did I save about X?"."""
        found = self.relevant(user_id, plan, self.search(user_id, plan, k=max(self.candidates, limit)))
        best: dict[str, SearchHit] = {}
        for h in found.hits:
            best.setdefault(h.source_id or h.document_id, h)
        return [self._as_source(h) for h in list(best.values())[:limit]]

    def list_window(self, user_id: str, plan: Plan, *, limit: int = 100) -> list[SearchHit]:
        """Temporal-only: every document of the window, newest first, each with its opening chunk."""
        docs = self.metadata.catalog.documents_between(
            user_id, plan.start, plan.end, field=plan.time_field, limit=limit, modalities=plan.filters.modalities)
        if plan.filters.source_ids is not None:
            docs = [d for d in docs if d.source_id in set(plan.filters.source_ids)]
        firsts: dict[str, SearchHit] = {}
        offset: str | None = None
        flt = VectorFilter(document_ids=[d.document_id for d in docs], chunk_index_range=(0, 0))
        index = self.target(user_id).index
        while docs:
            page, offset = self.vectors.scroll(user_id, flt=flt, limit=256, offset=offset, index=index)
            for h in page:
                hit = hit_from_payload(h.id, 0.0, h.payload)
                firsts[hit.document_id] = hit
            if offset is None:
                break
        # Documents whose chunks are not indexed yet (still in the pipeline) are left out.
        found = [firsts[d.document_id] for d in docs if d.document_id in firsts]
        return (found + self._series_in(user_id, plan, index, exclude=set(firsts)))[:limit]

    def _series_in(self, user_id: str, plan: Plan, index: str | None, *, exclude: set[str]) -> list[SearchHit]:
        """Recurring events with an occurrence in the plan's window (event time), each once with its opening
        passage, by that occurrence."""
        if plan.time_field != "captured_at" or plan.start is None or plan.end is None:
            return []
        flt = VectorFilter(recurring_range=TimeRange(plan.start, plan.end), chunk_index_range=(0, 0),
                           modalities=plan.filters.modalities, source_ids=plan.filters.source_ids)
        found: dict[str, SearchHit] = {}
        offset: str | None = None
        while len(found) < MAX_SERIES:
            page, offset = self.vectors.scroll(user_id, flt=flt, limit=256, offset=offset, index=index)
            for h in page:
                hit = hit_from_payload(h.id, 0.0, h.payload)
                if hit.document_id not in exclude:
                    found.setdefault(hit.document_id, hit)
            if offset is None:
                break
        return sorted(plan.in_window(list(found.values())), key=lambda h: h.occurrence or "", reverse=True)

    def sources(self, user_id: str, plan: Plan, *, k: int = 6) -> list[Source]:
        """The passages to ground an answer in, within the token budget."""
        if plan.query_class == "temporal":
            hits = self.list_window(user_id, plan)
            return self._fit([self._as_source(h) for h in hits], limit=max(k, len(hits)))
        hits = self.search(user_id, plan, k=k)
        return self._fit(_merge_overlapping([self._with_neighbours(user_id, h, hits) for h in hits]), limit=k)

    def supported(self, user_id: str, question: str, sources: list[Source], *, min_cosine: float = 0.3) -> bool:
        """Whether the sources plausibly bear on the question: a shared content term, or a chunk of
        theirs close in meaning (cosine from the stored vectors: one engine query, no re-embedding).
        Without support no model is asked: an honest "not in your data" beats a fluent invention."""
        if not sources:
            return False
        terms = set(self.sparse.tokenize(question))
        if any(terms & set(self.sparse.tokenize(s.text)) for s in sources):
            return True
        target = self.target(user_id)
        best = self.vectors.search(user_id, dense=target.embedder.embed_query(question), sparse=None, limit=1,
                                   mode="dense", flt=VectorFilter(document_ids=[s.hit.document_id for s in sources]),
                                   index=target.index)
        return bool(best) and best[0].score >= min_cosine

    # ------------------------------------------------------------------ selection

    @staticmethod
    def _as_source(h: SearchHit) -> Source:
        return Source(h, h.text, h.char_start, h.char_end, h.t_start, h.t_end, max(1, h.token_count))

    def _with_neighbours(self, user_id: str, hit: SearchHit, selected: list[SearchHit]) -> Source:
        """Widen a short hit, or a stretch of speech, with the chunks just before and after it."""
        src = self._as_source(hit)
        if hit.modality != "audio" and hit.token_count >= 120:
            return src  # a full-size chunk carries its own context
        taken = {(h.document_id, h.chunk_index) for h in selected}
        lo, hi = max(0, hit.chunk_index - 1), hit.chunk_index + 1
        page, _ = self.vectors.scroll(user_id, flt=VectorFilter(document_ids=[hit.document_id],
                                                               chunk_index_range=(lo, hi)), limit=3,
                                      index=self.target(user_id).index)
        around = sorted((hit_from_payload(p.id, 0.0, p.payload) for p in page), key=lambda h: h.chunk_index)
        parts = [h for h in around if h.chunk_index == hit.chunk_index
                 or (h.document_id, h.chunk_index) not in taken]
        if len(parts) <= 1:
            return src
        starts = [h.t_start for h in parts if h.t_start is not None]
        ends = [h.t_end for h in parts if h.t_end is not None]
        text, tokens = _stitch(parts)
        return Source(hit, text, min(h.char_start for h in parts), max(h.char_end for h in parts),
                      min(starts) if starts else None, max(ends) if ends else None, tokens, len(parts) - 1)

    def _fit(self, sources: list[Source], *, limit: int) -> list[Source]:
        """The best sources whose tokens fit the budget (the first one always; widened ones shrink back)."""
        out: list[Source] = []
        used = 0
        for src in sources[:limit]:
            if out and used + src.tokens > self.budget_tokens:
                narrow = self._as_source(src.hit)
                if used + narrow.tokens > self.budget_tokens:
                    continue
                src = narrow
            out.append(src)
            used += src.tokens
        return out


def _merge_overlapping(sources: list[Source]) -> list[Source]:
    """One source per stretch of a document: a source whose span overlaps a better-ranked one of the
    same document (two windows of one conversation sharing turns) is merged into it, so the model
    reads each passage once and cites it by one number."""
    out: list[Source] = []
    for src in sources:
        for i, kept in enumerate(out):
            if (kept.hit.document_id == src.hit.document_id and _contiguous(kept) and _contiguous(src)
                    and src.char_start < kept.char_end and kept.char_start < src.char_end):
                out[i] = _union(kept, src)
                break
        else:
            out.append(src)
    return out


def _contiguous(src: Source) -> bool:
    """Whether a source's text is exactly its span of the document (no gap joined by a newline)."""
    return len(src.text) == src.char_end - src.char_start


def _union(kept: Source, other: Source) -> Source:
    """Two overlapping contiguous sources as one, citing the better-ranked one's hit."""
    a, b = (kept, other) if kept.char_start <= other.char_start else (other, kept)
    added = b.text[a.char_end - b.char_start:] if b.char_end > a.char_end else ""
    tokens = a.tokens + round(b.tokens * len(added) / max(1, len(b.text)))
    starts = [t for t in (kept.t_start, other.t_start) if t is not None]
    ends = [t for t in (kept.t_end, other.t_end) if t is not None]
    return Source(kept.hit, a.text + added, a.char_start, max(a.char_end, b.char_end),
                  min(starts) if starts else None, max(ends) if ends else None, tokens,
                  kept.neighbours + other.neighbours + 1)


def _stitch(parts: list[SearchHit]) -> tuple[str, int]:
    """Neighbouring chunks (in document order) joined without repeating what they share.

    Chunk texts are exact spans of the document, so an overlap (a conversation window repeating
    the turns of the one before, sentences carried over between text chunks) is cut by offsets;
    tokens are counted for the part each chunk adds.
    """
    text, end, tokens = "", -1, 0.0
    for h in parts:
        if h.char_end <= end:
            continue  # wholly inside what is already there
        new = h.text if h.char_start >= end else h.text[end - h.char_start:]
        if not text:
            text = new
        elif h.char_start > end:
            text += "\n" + new
        else:
            text += new
        tokens += max(1, h.token_count) * len(new) / max(1, len(h.text))
        end = h.char_end
    return text, max(1, round(tokens))


def _diversify(hits: list[SearchHit], per_document: int) -> list[SearchHit]:
    """At most ``per_document`` chunks' worth of any one document, order kept.

    A window of a conversation (kind ``chat``, a few turns) counts for the share of an ordinary
    chunk's tokens that its *new* turns bring: the turns that answer a question tend to sit in
    one conversation, and overlapping windows repeat most of what is already taken.
    """
    seen: dict[str, float] = {}
    turns: dict[str, set[str]] = {}
    out = []
    for h in hits:
        used = seen.get(h.document_id, 0.0)
        if used >= per_document:
            continue
        out.append(h)
        ids = h.turn_ids
        if h.kind == "chat":
            taken = turns.setdefault(h.document_id, set())
            share = sum(i not in taken for i in ids) / len(ids) if ids else 1.0
            taken.update(ids)
            weight = min(1.0, max(1, h.token_count) * share / CHUNK_TOKENS)
        else:
            weight = 1.0
        seen[h.document_id] = used + weight
    return out


def _fuse_outside(inside: list[SearchHit], later: list[SearchHit]) -> list[SearchHit]:
    """Fuse the in-window ranking with the term matches from the window's start on (weighted lower):
    the window leads, the best later reports on it follow closely instead of disappearing."""
    score: dict[str, float] = {}
    by_id: dict[str, SearchHit] = {}
    for weight, ranking in ((1.0, inside), (OUTSIDE_WINDOW_WEIGHT, later)):
        for rank, h in enumerate(ranking):
            score[h.chunk_id] = score.get(h.chunk_id, 0.0) + weight / (SOFT_WINDOW_K + rank + 1)
            by_id.setdefault(h.chunk_id, h)
    return [replace(by_id[c], score=score[c]) for c in sorted(score, key=lambda c: -score[c])]


_GATHER = re.compile(
    r"^\s*(?:(?:what|which)\s+(?:[\w'-]+\s+){0,3}?[\w-]+s\s+(?:has|have|does|do|did|is|are|was|were)\b"
    r"|how\s+many\b|what\s+(?:are|were)\s+\w+['\u2019]s\s+\w+s\b)|\bboth\b", re.I)


def is_gathering(question: str) -> bool:
    """Whether a question gathers several things, likely said on several occasions: "what activities
    does Melanie do?", "which cities has John been to?", "how many times...", "what do both..."."""
    return bool(_GATHER.search(question))


def _named_speakers(question: str, hits: list[SearchHit]) -> set[str]:
    """The speakers of the candidate conversations that the question names ("What does Melanie paint?",
    "Caroline's plans"), by first name or whole name."""
    speakers = {name for h in hits if h.kind == "chat" for name in h.speakers}
    if not speakers:
        return set()
    words = {_POSSESSIVE_S.sub("", w).lower() for w in re.findall(r"[A-Z][\w'\u2019-]*", question)}
    return {name for name in speakers if name.lower() in words or name.split()[0].lower() in words}


def _toward_speakers(question: str, hits: list[SearchHit]) -> list[SearchHit]:
    """Conversation passages where a person the question names does the talking rise (a boost by the
    share of their turns, never a filter): "what activities does Melanie do" is answered in Melanie's
    words, though both people speak in every session."""
    named = _named_speakers(question, hits)
    if not named:
        return hits
    prefixes = tuple(f"{name}:" for name in named)

    def share(h: SearchHit) -> float:
        if h.kind != "chat":
            return 0.0
        speakers = tuple(f"{n}:" for n in h.speakers)
        lines = [line for line in h.text.splitlines() if line.startswith(speakers)]
        return sum(line.startswith(prefixes) for line in lines) / len(lines) if lines else 0.0

    scored = [((1 + SPEAKER_WEIGHT * share(h)) / (RRF_K + rank), h) for rank, h in enumerate(hits)]
    return [h for _s, h in sorted(scored, key=lambda p: -p[0])]


def _toward_window(hits: list[SearchHit], window: TimeWindow, time_field: TimeField) -> list[SearchHit]:
    """Fuse the relevance order with the order of the hits inside a partly read window (lower weight): those
    from it, or speaking of a time in it, rise; the others stay, after them."""
    def at(value: str | None) -> datetime | None:
        try:
            d = datetime.fromisoformat(value) if value else None
        except ValueError:
            return None
        return d.replace(tzinfo=UTC) if d is not None and d.tzinfo is None else d

    def overlaps(a: datetime | None, b: datetime | None) -> bool:
        return (a is not None and b is not None and (window.start is None or b > window.start)
                and (window.end is None or a < window.end))

    def inside(h: SearchHit) -> bool:
        own = at(h.ingested_at if time_field == "ingested_at" else h.captured_at)
        if own is not None and (window.start is None or own >= window.start) and (window.end is None
                                                                                 or own < window.end):
            return True
        return time_field == "captured_at" and any(overlaps(m.start, m.end) for m in h.mentions)

    by_window = {id(h): r for r, h in enumerate(h for h in hits if inside(h))}
    fused = [(1 / (RRF_K + r) + (PARTIAL_WINDOW_WEIGHT / (RRF_K + by_window[id(h)]) if id(h) in by_window else 0.0),
              h) for r, h in enumerate(hits)]
    return [replace(h, score=s) for s, h in sorted(fused, key=lambda p: -p[0])]


def _boost_recent(hits: list[SearchHit], time_field: TimeField) -> list[SearchHit]:
    """Fuse the relevance order with a newest-first order (lower weight): recent passages rise."""
    def when(h: SearchHit) -> str:
        return h.ingested_at if time_field == "ingested_at" else h.captured_at

    by_time = {id(h): r for r, h in enumerate(sorted(hits, key=when, reverse=True))}
    fused = [(1 / (RRF_K + r) + RECENCY_WEIGHT / (RRF_K + by_time[id(h)]), h) for r, h in enumerate(hits)]
    return [replace(h, score=s) for s, h in sorted(fused, key=lambda p: -p[0])]
