"""The events an answer streams, in this order: :class:`Meta` (the query class and the time range understood),
:class:`Sources` (the numbered passages), :class:`Token` s (the answer as it is written), then :class:`Done`
(the full answer, the citations actually used, timings) - or :class:`Error` once the stream has started and
something failed.

Each event's :meth:`data` is its JSON payload, written once here: ``POST /v1/ask`` sends it as the
server-sent event of the same name (``event.name``), and the MCP ``ask`` tool reads the events in-process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Meta:
    """What was understood: the plan's query class and time range (``plan``), how it is answered, and the
    conversation it belongs to."""

    name: ClassVar[str] = "meta"
    plan: dict[str, Any]
    answer_mode: str
    conversation_id: str
    standalone_question: str | None
    carried_over: dict[str, Any] | None
    fresh: bool
    model: str | None
    revises: dict[str, Any] | None
    note: str | None

    def data(self) -> dict[str, Any]:
        return {**self.plan, "answer_mode": self.answer_mode, "conversation_id": self.conversation_id,
                "standalone_question": self.standalone_question, "carried_over": self.carried_over,
                "fresh": self.fresh, "model": self.model, "revises": self.revises, "note": self.note}


@dataclass(frozen=True)
class Sources:
    """The numbered passages the answer is grounded in, as :func:`source_json` shows them."""

    name: ClassVar[str] = "sources"
    sources: list[dict[str, Any]]

    def data(self) -> list[dict[str, Any]]:
        return self.sources


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
    quotes: list[dict[str, Any]]
    invalid_citations: list[str]
    grounded: bool
    unsupported: bool
    extractive: dict[str, Any] | None
    answer_mode: str
    conversation_id: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    beyond_window: str | None = None  # the time asked about held nothing: said of sources from other times

    def data(self) -> dict[str, Any]:
        return {"answer": self.answer, "answer_markdown": self.answer_markdown, "citations": self.citations,
                "found": self.found, "quotes": self.quotes, "invalid_citations": self.invalid_citations,
                "grounded": self.grounded, "unsupported": self.unsupported, "extractive": self.extractive,
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
