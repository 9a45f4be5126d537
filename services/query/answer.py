"""Answers grounded in the user's sources, each claim cited as [n].

With a language model: a prompt that allows only the numbered sources (with their dates),
a stream whose citations are checked against the sources sent, and a plain "not in your
data" when nothing supports the question.  Without one: extractive answers, the best
sentences of the best sources, never a sentence that is not in the user's data.
Follow-up questions are made standalone in :mod:`services.query.followup`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from secondbrain.ports import SparseEncoder
from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal.mentions import MONTH_NAMES, Mention, mentioned_times
from services.query.engine import Source
from services.query.retrieval import SearchHit
from services.query.sentences import sentences

NOT_FOUND = "I could not find anything about that in your data."
MAX_QUOTE_CHARS = 320  # a sentence longer than this (an unpunctuated transcript) is quoted around its match

# What kind of fact a question asks for, and how that fact looks in a sentence: the answer's
# sentence is the one that matches the question's words *and* holds such a fact.
_MONTHS = MONTH_NAMES
_DAYS = r"mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun"
_WHEN = re.compile(rf"\b(?:\d{{1,2}}[:.h]\d{{2}}|\d{{1,2}}\s?(?:am|pm|a\.m\.|p\.m\.)|(?:{_MONTHS})\b|"
                   rf"(?:{_DAYS})(?:day)?\b|"
                   r"\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?|\d{1,2}(?:st|nd|rd|th)\b|\b(?:19|20)\d{2}\b|today|tomorrow|"
                   r"tonight|yesterday|noon|midnight|morning|evening|afternoon|week|month|year)", re.I)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                     r"forty|fifty|hundred|thousand|dozen|half)\b", re.I)
_WHO = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")
_WHERE = re.compile(r"\b(?:at|in|on|near|behind|under|inside|room|street|st\.|road|avenue|floor|building|drawer|"
                    r"shelf|box|office|\d+)\b", re.I)
_ASKS = [(re.compile(r"\b(?:when|what time|what date|which day|how long|how soon|deadline|due)\b", re.I), _WHEN),
         (re.compile(r"\b(?:how (?:much|many|old|far|big|tall|long)|cost|price|number|amount|total|budget|"
                     r"code|pin|password)\b", re.I), _NUMBER),
         (re.compile(r"\bwho(?:m|se)?\b", re.I), _WHO),
         (re.compile(r"\bwhere\b", re.I), _WHERE)]
# A sentence that leans on the one before ("It is on 3 December.") is quoted with it.
_LEANS_BACK = re.compile(r"^(?:it|its|it's|this|that|these|those|they|there|he|she|then|so|also|and|but)\b", re.I)


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer with the source numbers it cites (1-based, into the sources sent)."""

    text: str
    citations: list[int]
    grounded: bool


@dataclass(slots=True)
class _Sentence:
    n: int  # the source's number
    pos: int  # the sentence's place in its source
    text: str
    overlap: int
    fact: bool  # holds the kind of fact the question asks for
    score: float = 0.0


def extractive_answer(question: str, hits: Sequence[SearchHit | Source], *, max_sentences: int = 3,
                      encoder: SparseEncoder | None = None, tz: ZoneInfo | None = None) -> Answer:
    """The best complete sentences of the best sources, each cited, enough to carry the fact.

    A sentence scores by the question terms it shares; one that also holds the kind of fact asked
    for (a date for "when", a number for "how much", a name for "who") ranks above one that only
    repeats the question.  The best sentence comes with the next one of its source when that one
    carries the fact the best lacks, or leans back on it ("It is at 9:30.").  Other sentences
    follow only when they score close to the best.

    When the question asks when, a quoted sentence that speaks of a time relative to when it was
    said ("I went yesterday") is followed by the date that was ("yesterday" = Sun 7 May 2023), read
    in ``tz`` against the source's own time: the words stay the user's, the arithmetic is shown.
    """
    enc = encoder or Bm25Encoder()
    terms = set(enc.tokenize(question))
    if not terms or not hits:
        return Answer(NOT_FOUND, [], False)
    wanted = [shape for asks, shape in _ASKS if asks.search(question)]
    by_source: list[list[_Sentence]] = []
    for n, text in enumerate((x.text for x in hits), 1):  # a source's widened passage, or a hit's chunk
        found = []
        for pos, sentence in enumerate(sentences(text)):
            overlap = len(terms & set(enc.tokenize(sentence)))
            fact = bool(wanted) and any(shape.search(_without(sentence, question)) for shape in wanted)
            found.append(_Sentence(n, pos, sentence, overlap, fact))
        by_source.append(found)
    scored = [s for found in by_source for s in found if s.overlap]
    for s in scored:
        # Overlap dominates; the fact asked for counts as most of a shared word; among equals
        # better-ranked sources and earlier sentences come first.
        s.score = s.overlap + (0.8 if s.fact else 0.0) - 0.05 * (s.n - 1) - 0.001 * s.pos
    if not scored:
        return _opening(by_source)
    ranked = sorted(scored, key=lambda s: -s.score)
    best = ranked[0]
    chosen = [best]
    following = by_source[best.n - 1][best.pos + 1:best.pos + 2]
    if following and ((wanted and not best.fact and following[0].fact) or _LEANS_BACK.match(following[0].text)
                      or len(best.text) < 30 or _adds_terms(following[0].text, best.text, terms, enc)):
        chosen.append(following[0])
    for s in ranked[1:]:
        if len(chosen) >= max_sentences:
            break
        if s not in chosen and s.score >= 0.75 * best.score and (not wanted or s.fact or s.overlap > best.overlap):
            chosen.append(s)
    chosen.sort(key=lambda s: (s.n, s.pos))  # read in source order
    # Only the quoted sentences of a "when" answer are read for the dates their time words stood for.
    dated = tz is not None and _WHEN in wanted
    parts: list[str] = []
    for i, s in enumerate(chosen):
        nxt = chosen[i + 1] if i + 1 < len(chosen) else None
        quote = _quote(s.text, terms, enc)
        # consecutive sentences of one source read as one passage with one citation
        resolved = _resolved(s.text, hits[s.n - 1], quote, tz) if dated and tz is not None else ""
        parts.append(quote + resolved if nxt is not None and nxt.n == s.n and nxt.pos == s.pos + 1
                     else f"{quote} [{s.n}]{resolved}")
    return Answer(" ".join(parts), sorted({s.n for s in chosen}), True)


def _said_at(hit: SearchHit) -> datetime | None:
    """When a passage was said: the moment in a recording whose start is known, else the record's time."""
    for value in (hit.at_start, hit.captured_at):
        if value:
            try:
                return datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
    return None


def _resolved(sentence: str, source: SearchHit | Source, quote: str, tz: ZoneInfo) -> str:
    """`` ("yesterday" = Sun 7 May 2023)`` for the relative times a quoted sentence speaks of, read
    against when its source was said (an explicit date, "on 3 May 2023", needs no help)."""
    said_at = _said_at(source.hit if isinstance(source, Source) else source)
    times = mentioned_times(sentence, said_at, tz) if said_at is not None else []
    shown = [f"“{m.expression}” = {_span(m, tz)}" for m in times
             if m.expression in quote and _relative(m.expression)]
    return f" ({'; '.join(shown)})" if shown else ""


_NAMED_DATE = re.compile(rf"\b(?:{_MONTHS})\b|\b\d{{4}}\b|\d[/.-]\d", re.I)


def _relative(expression: str) -> bool:
    """Whether time words depend on when they were said ("yesterday", "last week", "on Friday"); a
    date that names its month or year ("on 3 May") is the user's own words and needs no arithmetic."""
    return not _NAMED_DATE.search(expression)


def _span(m: Mention, tz: ZoneInfo) -> str:
    first = m.start.astimezone(tz)
    last = (m.end - timedelta(microseconds=1)).astimezone(tz)
    if first.date() == last.date():
        return first.strftime("%a %-d %b %Y")
    same_year = first.year == last.year
    return f"{first.strftime('%-d %b' if same_year else '%-d %b %Y')} \u2013 {last.strftime('%-d %b %Y')}"


def _adds_terms(text: str, best: str, terms: set[str], enc: SparseEncoder) -> bool:
    """Whether ``text`` shares question terms that ``best`` lacks ("Gate B12." after the flight's times)."""
    return bool((terms & set(enc.tokenize(text))) - set(enc.tokenize(best)))


def _opening(by_source: list[list[_Sentence]]) -> Answer:
    """No sentence shares a word with the question, yet the engine judged the best source relevant
    (by meaning, or by its title): its opening, which is what a label, a receipt or a photo leads with."""
    opening: list[str] = []
    for s in by_source[0] if by_source else []:
        if opening and len(" ".join(opening)) + len(s.text) > 240:
            break
        opening.append(_quote(s.text, set(), Bm25Encoder()))
    if not opening:
        return Answer(NOT_FOUND, [], False)
    return Answer(f"{' '.join(opening)} [1]", [1], True)


def _without(sentence: str, question: str) -> str:
    """The sentence less the words the question already has (a "when" question's own "December" is no answer)."""
    asked = {w.casefold() for w in re.findall(r"[\w']+", question)}
    # a removed word leaves a mark, so the first word left is not taken for the sentence's first
    return " ".join("_" if w.strip(".,;:!?()\"'").casefold() in asked else w for w in sentence.split())


def _quote(sentence: str, terms: set[str], enc: SparseEncoder) -> str:
    """The sentence, or, when it runs on, the clauses around the words the question shares with it."""
    if len(sentence) <= MAX_QUOTE_CHARS:
        return sentence
    clauses = re.split(r"(?<=[,;:])\s+", sentence)
    hits = [len(terms & set(enc.tokenize(c))) for c in clauses]
    centre = max(range(len(clauses)), key=lambda i: hits[i])
    lo = hi = centre
    while True:  # widen towards the side with more shared words, then the following side (facts follow)
        grown = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(clauses) and len(" ".join(clauses[min(lo, j):max(hi, j) + 1])) <= MAX_QUOTE_CHARS:
                lo, hi = min(lo, j), max(hi, j)
                grown = True
        if not grown:
            break
    text = " ".join(clauses[lo:hi + 1])
    if len(text) > MAX_QUOTE_CHARS:
        text = text[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0]
    return ("… " if lo > 0 else "") + text + (" …" if hi < len(clauses) - 1 or not sentence.endswith(text) else "")


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
        spoken = "; ".join(f"“{m['expression']}” = {_local_day(m['start'], m['end'], tz)}"
                           for m in h.mentions if m.get("expression") and m["expression"] in s.text
                           and _relative(m["expression"]))
        speaks = f"; speaks of {spoken}" if spoken else ""
        blocks.append(f"[{n}] {h.title} ({h.modality}, captured {when}{loc}{speaks})\n{s.text.strip()}")
    return "\n\n".join(blocks)


def clock(seconds: float) -> str:
    """12:34 or 1:02:03 for a position in a recording."""
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def _local_day(start: str, end: str, tz: ZoneInfo) -> str:
    """A stored span of days as the model reads it ("Sun 7 May 2023", "1 May - 7 May 2023", with an en dash)."""
    try:
        m = Mention(datetime.fromisoformat(start.replace("Z", "+00:00")),
                    datetime.fromisoformat(end.replace("Z", "+00:00")), "", (0, 0))
    except ValueError:
        return f"{start} \u2013 {end}"
    return _span(m, tz)


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
