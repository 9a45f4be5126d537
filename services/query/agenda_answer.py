"""Questions about what is coming, answered from the agenda: "What do I have next week?", "Anything on
tomorrow?", "Am I free on Friday?", "What's coming up?", "When is my next dentist appointment?".

The answer is the agenda's own lines for the time asked (``secondbrain.agenda_lines``, which the agenda service
provides: the same reading, merging and moves as ``GET /v1/agenda`` and the web page's Upcoming panel), each
with its time, its name, where it moved from and its citation, so the chat and the panel say the same thing.
"When is my next X?" is the first line from now that is about X, within a year.

Which time a question means is read with the one reading of a sentence's time every reader shares
(``secondbrain.temporal.tense``): "on Friday" asked about what is coming is the coming Friday.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from secondbrain.agenda_lines import AgendaLines
from secondbrain.search_hits import SearchHit
from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal import Conventions, understand
from secondbrain.temporal.tense import said_times

COMING_DAYS = 14  # "what's coming up?": as far as the Upcoming panel's first list
NEXT_WITHIN = timedelta(days=365)  # "when is my next X?" looks this far ahead
MAX_WINDOW = timedelta(days=62)

_WHAT_ON = re.compile(
    r"^\s*(?:so\s+|and\s+|ok\s+|okay\s+)?(?:what\s+(?:do|have|did)\s+i\s+(?:have|got)|what\s+have\s+i\s+got|"
    r"what\s+am\s+i\s+doing|what['\u2019]?s\s+(?:on|happening|planned|coming\s+up|next|in\s+my\s+(?:diary|calendar))|"
    r"what\s+is\s+(?:on|happening|planned|coming\s+up|next)|what\s+(?:is|are)\s+my\s+plans|what\s+are\s+my\s+plans|"
    r"anything\s+(?:on|planned|happening|coming\s+up|booked)|is\s+there\s+anything|do\s+i\s+have\s+anything|"
    r"have\s+i\s+got\s+anything|am\s+i\s+(?:free|busy|doing\s+anything)|what\s+is\s+on|what['\u2019]?s\s+coming|"
    r"what\s+(?:events|appointments|plans)\b|any\s+(?:plans|appointments))", re.I)
_COMING = re.compile(r"\b(?:coming\s+up|upcoming|ahead|planned|next|agenda|calendar|diary|schedule)\b", re.I)
_NEXT = re.compile(
    r"^\s*(?:so\s+|and\s+)?when(?:['\u2019]s|\s+is|\s+are)\s+(?:my|the|our)\s+next\s+(?P<a>.+?)\s*\??\s*$|"
    r"^\s*(?:so\s+|and\s+)?when\s+(?:do|will)\s+i\s+next\s+(?:have|see|go\s+to)\s+(?:my\s+|the\s+)?"
    r"(?P<b>.+?)(?:\s+(?:next|again))?\s*\??\s*$", re.I)
_PAST = re.compile(r"\b(?:did|was|were|had|went|last|ago|yesterday)\b", re.I)
_WORDS = Bm25Encoder()
_GENERIC = frozenset(_WORDS.tokenize("appointment appointments booking event thing things plan plans one time"))


@dataclass(frozen=True, slots=True)
class AgendaQuestion:
    """A question the agenda answers: its window, and for "when is my next X?" the words X."""

    start: datetime
    end: datetime
    label: str  # the time asked about, as said ("next week", "tomorrow")
    subject: tuple[str, ...] = ()  # "dentist": the first line about it is the answer

    @property
    def next_of(self) -> bool:
        return bool(self.subject)


def agenda_question(question: str, now: datetime, tz: ZoneInfo, conventions: Conventions) -> AgendaQuestion | None:
    """The agenda question ``question`` asks, or ``None`` when it asks something else."""
    today = datetime.combine(now.astimezone(tz).date(), time(0)).replace(tzinfo=tz)
    m = _NEXT.match(question)
    if m is not None and not _PAST.search(question):
        what = m.group("a") or m.group("b") or ""
        words = tuple(w for w in _WORDS.tokenize(what) if w not in _GENERIC) or tuple(_WORDS.tokenize(what))
        if words:
            return AgendaQuestion(now, today + NEXT_WITHIN, "next", words)
    if not _WHAT_ON.search(question) or _PAST.search(question):
        return None
    window = _window(question, now, tz, conventions)
    if window is not None:
        return AgendaQuestion(max(window[0], today), window[1], window[2])
    if _COMING.search(question):
        return AgendaQuestion(today, today + timedelta(days=COMING_DAYS), f"the next {COMING_DAYS} days")
    return None


def _window(question: str, now: datetime, tz: ZoneInfo,
            conventions: Conventions) -> tuple[datetime, datetime, str] | None:
    """The time a question about what is coming names: the coming one ("on Friday"), or the one it is in
    ("today", "this week"); ``None`` for none, or for one already over."""
    for m in said_times(question, now, tz, conventions=conventions, max_span=MAX_WINDOW):
        if m.end > now:
            return m.start, m.end, _label(m.expression)
    found = understand(question, now, tz, conventions=conventions).time
    if found is None or found.vague or found.start is None or found.end is None or found.end <= now:
        return None
    if found.end - found.start > MAX_WINDOW:
        return None
    return found.start, found.end, _label(found.expression)


def _label(expression: str) -> str:
    """The time asked about as the answer names it: "tomorrow" (not "on tomorrow"), "on Friday", "next week"."""
    return re.sub(r"^(?:on|for|in)\s+(?=today|tonight|tomorrow|this|next)", "", expression.strip(), flags=re.I)


@dataclass(frozen=True, slots=True)
class Told:
    """The agenda's answer: its text, the lines it gives (as ``GET /v1/agenda`` has them, each with ``n``, the
    number of the passage it cites) and those passages, in order."""

    text: str
    lines: list[dict[str, Any]]
    hits: list[SearchHit]
    citations: list[int]


def tell(agenda: AgendaLines, user: str, asked: AgendaQuestion, tz: ZoneInfo, conventions: Conventions) -> Told:
    """The agenda's lines for ``asked``, and the answer that gives them."""
    found = agenda(user, asked.start, asked.end, tz, conventions)
    if asked.next_of:  # the next one that is still on
        found = [a for a in found if a.line["status"] != "cancelled" and _about(a.line, asked.subject)][:1]
    hits: list[SearchHit] = []
    numbers: dict[str, int] = {}
    lines: list[dict[str, Any]] = []
    for a in found:
        if a.hit.chunk_id not in numbers:
            hits.append(a.hit)
            numbers[a.hit.chunk_id] = len(hits)
        lines.append({**a.line, "n": numbers[a.hit.chunk_id]})
    return Told(_text(asked, lines, tz, conventions), lines, hits, sorted(set(numbers.values())))


def _about(line: dict[str, Any], words: tuple[str, ...]) -> bool:
    have = set(_WORDS.tokenize(f"{line['title']} {line['quote']} {line['kind']}"))
    return all(w in have for w in words) or (len(words) > 1 and any(w in have for w in words))


def _text(asked: AgendaQuestion, lines: list[dict[str, Any]], tz: ZoneInfo, conventions: Conventions) -> str:
    if asked.next_of:
        what = " ".join(asked.subject)
        if not lines:
            return f"Nothing about {what} is on your agenda in the coming year."
        line = lines[0]
        return f"Your next {what}: {_one(line)}"
    span = _span(asked, tz, conventions)
    if not lines:
        return f"Nothing is on your agenda for {asked.label} ({span})."
    count = f"{len(lines)} thing{'s' if len(lines) != 1 else ''}"
    off = sum(1 for line in lines if line["status"] == "cancelled")
    if off:
        count += f" ({off} of {'them' if len(lines) > 1 else 'it'} cancelled)"
    return "\n".join([f"For {asked.label} ({span}) your agenda has {count}:", *(f"- {_one(line)}" for line in lines)])


def _one(line: dict[str, Any]) -> str:
    when = line["when"]
    text = f"{when}: {line['title']}"
    if line.get("moved_from"):
        text += f" (moved from {line['moved_from']['when']})"
    if line.get("recurs") and line["recurs"] not in ("yearly", "habit"):
        text += f" ({line['recurs']})"
    if line["status"] == "cancelled":
        text += " (cancelled)"
    return f"{text} \u2014 \u201c{line['quote']}\u201d [{line['n']}]"


def _span(asked: AgendaQuestion, tz: ZoneInfo, conventions: Conventions) -> str:
    first = asked.start.astimezone(tz).date()
    last = (asked.end.astimezone(tz) - timedelta(microseconds=1)).date()
    fmt = "%a %-d %b" if conventions.date_order != "mdy" else "%a, %b %-d"
    return f"{first:{fmt}}" if first == last else f"{first:{fmt}} \u2013 {last:{fmt}}"
