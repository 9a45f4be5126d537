"""Answers grounded in the user's sources, each claim cited as [n].

With a language model: a prompt that allows only the numbered sources (with their dates),
a stream whose citations are checked against the sources sent, and a plain "not in your
data" when nothing supports the question.  Without one: extractive answers, the best
sentences of the best sources, never a sentence that is not in the user's data.
Follow-up questions are made standalone with the conversation before them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from secondbrain.llm import ChatLLM
from secondbrain.pipeline.errors import RetryableError
from secondbrain.ports import SparseEncoder
from secondbrain.sparse import Bm25Encoder
from services.query.engine import Source
from services.query.retrieval import SearchHit
from services.query.temporal import parse_time

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n{2,}|\n(?=\s*[-*•]\s)")
NOT_FOUND = "I could not find anything about that in your data."


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer with the source numbers it cites (1-based, into the sources sent)."""

    text: str
    citations: list[int]
    grounded: bool


def extractive_answer(question: str, hits: list[SearchHit], *, max_sentences: int = 3,
                      encoder: SparseEncoder | None = None) -> Answer:
    """Pick the sentences that share the most question terms, best-ranked sources first."""
    enc = encoder or Bm25Encoder()
    terms = set(enc.tokenize(question))
    if not terms or not hits:
        return Answer(NOT_FOUND, [], False)
    scored: list[tuple[float, int, int, str]] = []
    for n, hit in enumerate(hits, 1):
        for pos, sentence in enumerate(s.strip() for s in _SENTENCE.split(hit.text)):
            if not sentence:
                continue
            overlap = len(terms & set(enc.tokenize(sentence)))
            if overlap:
                # Overlap dominates; among equals prefer better-ranked sources and earlier sentences.
                scored.append((overlap - 0.01 * n - 0.001 * pos, n, pos, sentence))
    if not scored:
        return Answer(NOT_FOUND, [], False)
    best = sorted(scored, reverse=True)[:max_sentences]
    best.sort(key=lambda t: (t[1], t[2]))  # read in source order
    parts = [f"{sentence} [{n}]" for _score, n, _pos, sentence in best]
    return Answer(" ".join(parts), sorted({n for _s, n, _p, _t in best}), True)


# --------------------------------------------------------------------------- grounded LLM answers

SYSTEM_PROMPT = """You answer questions about the user's own saved notes, documents, web pages, recordings \
and photos. Use ONLY the numbered sources below; never use outside knowledge. Cite every claim with the \
number of its source in square brackets, like [1] or [2][3]. Each source shows when it was captured, so \
you can reason about dates ("the day before", "last week"). If the sources do not contain the answer, \
say plainly: "I couldn't find that in your data." Be brief."""

_CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")


def format_sources(sources: list[Source], tz: ZoneInfo) -> str:
    """The sources as the model sees them: number, title, kind, date, location, text."""
    blocks = []
    for n, s in enumerate(sources, 1):
        h = s.hit
        when = _local(h.captured_at, tz)
        where = []
        if h.page is not None:
            where.append(f"page {h.page}")
        if s.t_start is not None:
            where.append(f"{clock(s.t_start)}-{clock(s.t_end or s.t_start)} into the recording")
        if h.heading_path:
            where.append(" > ".join(h.heading_path))
        loc = f"; {', '.join(where)}" if where else ""
        blocks.append(f"[{n}] {h.title} ({h.modality}, captured {when}{loc})\n{s.text.strip()}")
    return "\n\n".join(blocks)


def clock(seconds: float) -> str:
    """12:34 or 1:02:03 for a position in a recording."""
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def _local(iso: str, tz: ZoneInfo) -> str:
    try:
        dt = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return dt.astimezone(tz).strftime("%a %d %b %Y %H:%M")


def build_messages(question: str, sources: list[Source], tz: ZoneInfo, now: datetime,
                   history: list[tuple[str, str]] | None = None) -> list[dict[str, str]]:
    """System prompt, the last exchanges of the conversation, then the sources and the question."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for role, content in (history or [])[-4:]:
        messages.append({"role": role, "content": content[:2000]})
    today = now.astimezone(tz).strftime("%A %d %B %Y, %H:%M")
    messages.append({"role": "user", "content": f"Now is {today} ({tz}).\n\nSources:\n\n"
                     f"{format_sources(sources, tz)}\n\nQuestion: {question}"})
    return messages


class CitationFilter:
    """Checks ``[n]`` citations in a token stream against the sources that were sent.

    Text streams through unchanged except bracketed groups, which are held back until they
    close: valid citations pass, invalid ones (``[7]`` with 3 sources) are dropped and recorded.
    """

    def __init__(self, n_sources: int) -> None:
        self.n_sources = n_sources
        self.used: list[int] = []
        self.invalid: list[str] = []
        self._held = ""

    def feed(self, delta: str) -> str:
        """Text that can be shown now."""
        out = []
        for ch in delta:
            if self._held:
                self._held += ch
                if ch == "]":
                    out.append(self._resolve(self._held))
                    self._held = ""
                elif len(self._held) > 16 or not re.fullmatch(r"\[[\d,\s]*", self._held):
                    out.append(self._held)  # not a citation after all ("[see above]")
                    self._held = ""
            elif ch == "[":
                self._held = ch
            else:
                out.append(ch)
        return "".join(out)

    def finish(self) -> str:
        """Whatever was held back at the end of the stream."""
        held, self._held = self._held, ""
        return held if not _CITATION.fullmatch(held) else self._resolve(held)

    def _resolve(self, group: str) -> str:
        m = _CITATION.fullmatch(group)
        if m is None:
            return group
        numbers = [int(x) for x in re.split(r"\s*,\s*", m.group(1))]
        valid = [n for n in numbers if 1 <= n <= self.n_sources]
        for n in numbers:
            if n in valid:
                if n not in self.used:
                    self.used.append(n)
            else:
                self.invalid.append(str(n))
        return "".join(f"[{n}]" for n in valid)


def content_terms(text: str, encoder: SparseEncoder) -> set[str]:
    """The searchable terms of a text (stemmed, stopwords dropped)."""
    return set(encoder.tokenize(text))


REWRITE_PROMPT = """Rewrite the user's last question so that it can be understood without the conversation: \
replace pronouns and vague references with what they refer to, keep any time expressions exactly as written. \
Reply with the rewritten question only."""

_REFERS_BACK = re.compile(r"\b(it|its|that|this|those|these|they|them|he|she|him|her|there|same|more|else|"
                          r"also|another|again|what about|and)\b", re.I)


def _names_a_time(question: str) -> bool:
    """Whether the question carries its own time expression (the zone does not matter here)."""
    return parse_time(question, datetime.now(UTC), ZoneInfo("UTC")) is not None


def rewrite_followup(question: str, history: list[tuple[str, str]], llm: ChatLLM | None,
                     encoder: SparseEncoder) -> str:
    """The question made standalone with the conversation before it.

    With a model: the model rewrites it.  Without: a question that refers back (pronouns,
    "what about ...", very short) gets the previous question's content terms appended, so
    retrieval still knows what "it" is.
    """
    previous = [c for role, c in history if role == "user"]
    if not previous:
        return question
    if llm is not None:
        convo = "\n".join(f"{role}: {c[:500]}" for role, c in history[-6:])
        try:
            rewritten = llm.complete([{"role": "system", "content": REWRITE_PROMPT},
                                      {"role": "user", "content": f"{convo}\nuser: {question}\n\nRewritten:"}],
                                     max_tokens=80, temperature=0.0).strip().strip('"')
        except RetryableError:
            rewritten = ""
        if rewritten and len(rewritten) < 4 * len(question) + 200:
            return rewritten.splitlines()[0]
    terms = content_terms(question, encoder)
    if not _REFERS_BACK.search(question) and (len(terms) >= 4 or _names_a_time(question)):
        return question  # it says what it is about ("what did I add today?" is not about the last topic)
    carry = [w for w in re.findall(r"[\w-]+", previous[-1])
             if set(encoder.tokenize(w)) and not set(encoder.tokenize(w)) <= terms]
    return f"{question} ({' '.join(carry)})" if carry else question
