"""The events an answer streams, in this order: :class:`Meta` (the query class and the time range understood),
:class:`Sources` (the numbered passages, each a :class:`Source`), :class:`Token` s (the answer as it is
written), then :class:`Done` (the full answer, the citations actually used, where its :class:`Quote` s are,
what the sources say beside a model's answer that cites nothing (:class:`Quoted`), timings) - or
:class:`Error` once the stream has started and something failed.

Each event's :meth:`data` is its JSON payload, written once here: ``POST /v1/ask`` sends it as the
server-sent event of the same name (``event.name``), the MCP ``ask`` tool reads the events in-process, and a
conversation keeps what its answers showed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from secondbrain.search_hits import SearchHit


@dataclass(frozen=True, slots=True)
class Carried:
    """What a follow-up took from the conversation (a subject, a time), why, and the earlier question it came
    from (``source``, as understood; ``from`` in JSON)."""

    subject: str | None
    time: str | None
    why: str
    source: str

    def data(self) -> dict[str, Any]:
        return {"subject": self.subject, "time": self.time, "why": self.why, "from": self.source}


@dataclass(frozen=True)
class Revised:
    """The earlier question of the conversation this one revises: asked again as it was (``regenerate``) or
    edited (``edit``)."""

    question: str
    how: str

    def data(self) -> dict[str, Any]:
        return {"question": self.question, "how": self.how}


@dataclass(frozen=True)
class Meta:
    """What was understood: the plan's query class and time range (``plan``, the plan's own JSON), how it is
    answered, and the conversation it belongs to (what a follow-up carried over, the question it revises)."""

    name: ClassVar[str] = "meta"
    plan: dict[str, Any]
    answer_mode: str
    conversation_id: str
    standalone_question: str | None
    carried_over: Carried | None
    fresh: bool
    model: str | None
    revises: Revised | None
    note: str | None

    def data(self) -> dict[str, Any]:
        return {**self.plan, "answer_mode": self.answer_mode, "conversation_id": self.conversation_id,
                "standalone_question": self.standalone_question,
                "carried_over": self.carried_over.data() if self.carried_over else None, "fresh": self.fresh,
                "model": self.model, "revises": self.revises.data() if self.revises else None, "note": self.note}


@dataclass(frozen=True)
class Source:
    """A numbered passage as the answer shows and cites it: the hit's own fields (less its text and score),
    then where it is in the person's time zone, the span it covers once widened with its neighbours, a
    snippet, the link to the original and, for a recording, its position (``"1:05-1:20"``).  An answer from
    the agenda names the agenda lines each source gives (``agenda``)."""

    n: int
    hit: SearchHit
    captured_at_local: str
    t_start: float | None
    t_end: float | None
    snippet: str
    link: str
    neighbours: int = 0
    position: str | None = None
    agenda: list[str] | None = None

    def data(self) -> dict[str, Any]:
        fields = {k: v for k, v in self.hit.to_json().items() if k not in ("text", "score")}
        # the hit's t_start and t_end keep their place, with the widened span's values
        out = {"n": self.n, **fields, "captured_at_local": self.captured_at_local, "t_start": self.t_start,
               "t_end": self.t_end, "snippet": self.snippet, "link": self.link, "neighbours": self.neighbours}
        if self.position is not None:
            out["position"] = self.position
        if self.agenda is not None:
            out["agenda"] = self.agenda
        return out


@dataclass(frozen=True)
class Quote:
    """Where a quote of an extractive answer is in source ``n``: its page, or the second it is said at (with
    ``position``, that second as a clock), and the link to that place in the original."""

    n: int
    page: int | None
    t_start: float | None
    link: str
    position: str | None = None

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "page": self.page, "t_start": self.t_start, "link": self.link}
        if self.position is not None:
            out["position"] = self.position
        return out


@dataclass(frozen=True)
class Quoted:
    """What the sources themselves say, beside a model's answer that cites nothing: the quoted answer and
    the sources it cites."""

    answer: str
    citations: list[int]

    def data(self) -> dict[str, Any]:
        return {"answer": self.answer, "citations": self.citations}


@dataclass(frozen=True)
class Sources:
    """The numbered passages the answer is grounded in."""

    name: ClassVar[str] = "sources"
    sources: list[Source]

    def data(self) -> list[dict[str, Any]]:
        return [s.data() for s in self.sources]


@dataclass(frozen=True)
class Token:
    """A piece of the answer as it is written."""

    name: ClassVar[str] = "token"
    text: str

    def data(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass(frozen=True)
class Done:
    """The full answer: plain and as Markdown, the citations it uses, whether it is grounded (``unsupported``
    with ``extractive``, the best quoted passages, when a model's answer cites nothing), and timings."""

    name: ClassVar[str] = "done"
    answer: str
    answer_markdown: str
    citations: list[int]
    found: bool
    quotes: list[Quote]
    invalid_citations: list[str]
    grounded: bool
    unsupported: bool
    extractive: Quoted | None
    answer_mode: str
    conversation_id: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    beyond_window: str | None = None  # the time asked about held nothing: said of sources from other times

    def data(self) -> dict[str, Any]:
        return {"answer": self.answer, "answer_markdown": self.answer_markdown, "citations": self.citations,
                "found": self.found, "quotes": [q.data() for q in self.quotes],
                "invalid_citations": self.invalid_citations, "grounded": self.grounded,
                "unsupported": self.unsupported, "extractive": self.extractive.data() if self.extractive else None,
                "answer_mode": self.answer_mode, "conversation_id": self.conversation_id,
                "timings_ms": self.timings_ms, "beyond_window": self.beyond_window}


@dataclass(frozen=True)
class Error:
    """The answer failed after the stream started: a model or embedding error (``retryable`` says whether
    trying again may help), or an unexpected one, logged under ``error_id`` and told without its details."""

    name: ClassVar[str] = "error"
    message: str
    retryable: bool | None = None
    error_id: str | None = None

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.retryable is not None:
            out["retryable"] = self.retryable
        if self.error_id is not None:
            out["error_id"] = self.error_id
        return out


AnswerEvent = Meta | Sources | Token | Done | Error
