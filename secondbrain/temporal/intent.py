"""What a question asks for: the time field a window applies to, and what is left to search for."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from secondbrain.temporal.calendar import Conventions
from secondbrain.temporal.grammar import TimeField, TimeWindow, parse_all

QueryClass = Literal["semantic", "temporal", "temporal+semantic"]


@dataclass(frozen=True, slots=True)
class Understanding:
    """What a question asks for: a time window, content words, or both."""

    query_class: QueryClass
    time: TimeWindow | None
    semantic_query: str


# --------------------------------------------------------------------------- field and class

# Verbs about putting things into the memory engine: the window applies to ``ingested_at``.
_INGEST_RX = re.compile(
    r"\b(?:sav(?:e|ed|es|ing)|upload(?:ed|s|ing)?|add(?:ed|s|ing)?|import(?:ed|s|ing)?|ingest(?:ed|s|ing)?|"
    r"stor(?:e|ed|es|ing)|bookmark(?:ed|s|ing)?|clip(?:ped|s)?|put\s+(?:in|into)|dropp?(?:ed)?\s+(?:in|into)|"
    r"captur(?:e|ed|es|ing)\s+(?:in|into|to)|sen[dt]\s+(?:in|into|to)\s+(?:secondbrain|my\s+second\s+brain))\b", re.I)
# Verbs about the content's own time ("the photo I took", "the meeting I had"): ``captured_at``.
_CONTENT_RX = re.compile(
    r"\b(?:took|take|taken|taking|shot|snapped|photographed|filmed|recorded|record|wrote|written|write|"
    r"happen(?:ed|s)?|had|met|meet|attend(?:ed)?|visit(?:ed)?|said|discuss(?:ed)?|talk(?:ed)?|call(?:ed)?|"
    r"sent|received|went|made|created|captured|signed|listened|watched|read)\b", re.I)

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Question scaffolding that carries no topic: removed before deciding temporal vs temporal+semantic.
_FILLER = _wordset("""
a an the and or but of to in on at for from about with by into onto regarding re as than then
between since until till before after during over within throughout what
whats what's which who whom whose when where how why do did does done doing i i'm me my mine myself
we us our ours you your yours it its is are was were be been being am have has had having can could
would will should shall might must may please any anything something everything all some stuff
things thing items item entries entry content show list give tell find get got see look search fetch
pull bring display remind recall up out that this these those there here just again more else new
save saved saves saving upload uploaded uploads uploading add added adding import imported imports
importing ingest ingested store stored storing put putting capture captured bookmark bookmarked clip
clipped drop dropped happen happened happens happening go going went take took taken write wrote
written make made create created file files document documents doc docs secondbrain brain
second-brain
""")


# Base forms that are also nouns ("her clothing store", "an add", "a clip"): a verb only after a
# subject, an auxiliary or "to", or at the start.
_NOUN_LIKE = frozenset({"store", "stores", "save", "saves", "add", "adds", "import", "imports", "upload",
                        "uploads", "bookmark", "bookmarks", "clip", "clips", "capture", "captures"})
_VERB_BEFORE = frozenset({"i", "we", "you", "they", "he", "she", "it", "did", "do", "does", "didn't", "don't",
                          "to", "will", "would", "can", "could", "should", "might", "must", "just", "also", "ever",
                          "never", "not", "please", "and", "or", "then", "recently", "who", "that", "which"})


def _is_noun(question: str, m: re.Match[str]) -> bool:
    """Whether an ingest-verb match is really a noun ("the store", "my clothing store")."""
    first = m.group(0).split()[0].lower()
    if first not in _NOUN_LIKE:
        return False
    before = re.findall(r"[\w']+", question[: m.start()].lower())
    return bool(before) and before[-1] not in _VERB_BEFORE


def _field_for(question: str, span: tuple[int, int]) -> TimeField:
    """ingested_at when the verb nearest to the time words is about saving into the engine."""
    def distance(m: re.Match[str]) -> int:
        if m.end() <= span[0]:
            return span[0] - m.end()
        if m.start() >= span[1]:
            return m.start() - span[1]
        return 0

    ingest = [distance(m) for m in _INGEST_RX.finditer(question) if not _is_noun(question, m)]
    if not ingest:
        return "captured_at"
    content = [distance(m) for m in _CONTENT_RX.finditer(question)
               if not _INGEST_RX.match(question, m.start())]
    if content and min(content) <= min(ingest):
        return "captured_at"
    return "ingested_at"


# Verbs of writing something down that are also nouns ("a note"): scaffolding only as a verb, after a
# subject or an auxiliary ("what did I note about..."); "the note about..." keeps its topic.
_NOTE_VERBS = frozenset({"note", "jot"})
_ALWAYS_VERBS = frozenset({"noted", "jotted", "wrote"})


def _content_words(text: str) -> list[str]:
    words = re.findall("[\\w][\\w'\u2019&.+-]*[\\w+#]|[\\w]", text)
    out = []
    previous = ""
    for w in words:
        key = w.lower().replace("\u2019", "'")
        key = key[:-2] if key.endswith("'s") else key
        verb = (key in _ALWAYS_VERBS or (key in _NOTE_VERBS and previous in _VERB_BEFORE)
                or (key == "down" and previous in _NOTE_VERBS | _ALWAYS_VERBS | {"write", "written"}))
        previous = key
        if key in _FILLER or verb:
            continue
        out.append(w)
    return out


def understand(question: str, now: datetime, tz: ZoneInfo, *, week_start: int = 0,
               conventions: Conventions | None = None) -> Understanding:
    """Split a question into its time window (if any) and the words to search for semantically.

    ``conventions`` are the person's holiday country, hemisphere and numeric date order
    (:meth:`Conventions.for_locale` builds them from a locale such as ``en_GB``)."""
    window, rest = parse_all(question, now, tz, week_start, conventions)
    if window is None:
        words = _content_words(question)
        return Understanding("semantic", None, " ".join(words) if words else question.strip())
    window = replace(window, field=_field_for(question, window.span))
    words = _content_words(rest)
    if not words:
        return Understanding("temporal", window, "")
    return Understanding("temporal+semantic", window, " ".join(words))


_DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _fmt(dt: datetime, tz: ZoneInfo) -> str:
    local = dt.astimezone(tz)
    return (f"{_DAY_NAMES[local.weekday()]} {local.day} {_MONTH_NAMES[local.month - 1]} {local.year}, "
            f"{local.hour:02d}:{local.minute:02d}")


def describe(window: TimeWindow, tz: ZoneInfo) -> str:
    """Human text for a window, e.g. ``Tue 17 Nov 2026, 00:00 \u2013 Wed 18 Nov 2026, 00:00 (Europe/Paris)``
    ("roughly ..." for a vague one, "partly understood: ..." for one read only in part)."""
    zone = f"({tz.key})"
    if window.start is not None and window.end is not None:
        text = f"{_fmt(window.start, tz)} \u2013 {_fmt(window.end, tz)} {zone}"
    elif window.start is not None:
        text = f"from {_fmt(window.start, tz)} on {zone}"
    elif window.end is not None:
        text = f"before {_fmt(window.end, tz)} {zone}"
    else:
        text = f"any time {zone}"
    if window.partial:
        return f"partly understood: {text}"
    return f"roughly {text}" if window.vague else text
