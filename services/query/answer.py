"""Answers a language model writes, grounded in the user's sources, each claim cited as [n].

A prompt that allows only the numbered sources (with their dates, and the dates their time words stand
for), newest first where they disagree; a stream whose citations are checked against the sources sent;
and a plain "not in your data" when nothing supports the question.  Without a model the answer quotes
the sources (:mod:`services.query.extractive`).  Follow-up questions are made standalone in
:mod:`services.query.followup`.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from secondbrain.ports import SparseEncoder
from secondbrain.temporal.mentions import Mention
from secondbrain.temporal.written import written_span
from secondbrain.time_formats import rfc3339
from services.query.engine import Source
from services.query.glosses import relative

# --------------------------------------------------------------------------- grounded LLM answers

SYSTEM_PROMPT = """You answer questions about the user's own saved notes, documents, web pages, recordings \
and photos. Use ONLY the numbered sources below; never use outside knowledge. Cite every claim with the \
number of its source in square brackets, like [1] or [2][3]. Each source shows when it was captured, so \
you can reason about dates ("the day before", "last week"). When sources disagree, the most recently \
captured one is current: answer with it and give the older one as what it was before. If the sources do \
not contain the answer, say plainly: "I couldn't find that in your data." Be brief."""

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
        spoken = "; ".join(f"“{m.expression}” = {_local_day(m.start, m.end, tz, h.captured_at)}"
                           for m in h.mentions if m.expression and m.expression in s.text and relative(m.expression))
        speaks = f"; speaks of {spoken}" if spoken else ""
        blocks.append(f"[{n}] {h.title} ({h.modality}, captured {when}{loc}{speaks})\n{s.text.strip()}")
    return "\n\n".join(blocks)


def clock(seconds: float) -> str:
    """12:34 or 1:02:03 for a position in a recording."""
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def _local_day(start: datetime, end: datetime, tz: ZoneInfo, said: str) -> str:
    """A stored span of days as the model reads it (a day, a week before a date, a month, a year), written
    as the extractive answer writes it."""
    try:
        said_at = datetime.fromisoformat(said.replace("Z", "+00:00"))
    except ValueError:
        return f"{rfc3339(start)} \u2013 {rfc3339(end)}"
    return written_span(Mention(start, end, "", (0, 0)), tz, said_at)


def _local(iso: str, tz: ZoneInfo) -> str:
    try:
        dt = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return dt.astimezone(tz).strftime("%a %d %b %Y %H:%M")


def build_messages(question: str, sources: list[Source], tz: ZoneInfo, now: datetime,
                   history: list[tuple[str, str]] | None = None, *, beyond: str | None = None) -> list[dict[str, str]]:
    """System prompt, the last exchanges of the conversation, then the sources and the question; ``beyond``
    is the line that says the time the question names held nothing (the sources are from other times)."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for role, content in (history or [])[-4:]:
        messages.append({"role": role, "content": content[:2000]})
    today = now.astimezone(tz).strftime("%A %d %B %Y, %H:%M")
    messages.append({"role": "user", "content": f"Now is {today} ({tz}).\n\nSources:\n\n"
                     f"{format_sources(sources, tz)}\n\n{newest_first(sources)}"
                     f"{beyond_note(beyond)}Question: {question}"})
    return messages


def beyond_note(beyond: str | None) -> str:
    """The line telling the model that no source is from the time asked about, so that it says so first."""
    if not beyond:
        return ""
    return f"{beyond.removesuffix(':')}. Say so first, then answer from them only if they bear on it.\n\n"


def newest_first(sources: list[Source]) -> str:
    """The line telling the model which sources are newer (when their capture times differ)."""
    dated = sorted(((s.hit.at_start or s.hit.captured_at, n) for n, s in enumerate(sources, 1)
                    if s.hit.at_start or s.hit.captured_at), reverse=True)
    if len({when for when, _n in dated}) < 2:
        return ""
    return f"Newest first: {', '.join(f'[{n}]' for _when, n in dated)}.\n\n"


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
