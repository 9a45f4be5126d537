"""The answer without a language model: the user's own words that state the fact, each cited, or a plain
"not found" when the sources do not cover what the question is about.

How a question is read is :mod:`services.query.question`; how a source is read (headings as context, list
items and table rows as statements, Markdown kept apart) is :mod:`secondbrain.reading`.  Then:

1. **Not there.** When something the question is about (a noun of it: "bike lock", "physiotherapy") is in
   none of the sources, or the only sources are someone else speaking of themselves when the question names
   a person, the answer says it found nothing about that, and may show the closest thing, labelled so.
2. **The sentence that holds the fact.** Statements score by the question's words they share (the words of
   the headings above them count for less), by holding the kind of fact asked (a date, an amount, a code...),
   by being in the kind of capture the question names, and by being said by the person it names.
3. **Lists are gathered**: a question asking for several things quotes the best statement of each source
   that bears on it, once each, in time order.
4. **The newest fact wins**: when sources of different times state the asked fact differently, the newest
   answers and the older ones follow as earlier.
5. **True dates only**: a "when" answer shows the date a relative time word stood for, read against when its
   source was said, unless the sentence pins the date itself; a weekday that disagrees with its date is
   flagged, never corrected; a dated fact with no time words says when it was recorded.
6. **Yes, when it says so**: a yes/no question's answer starts "Yes:" only when the quote has every word of the
   question, is said of the person asked about and negates nothing; otherwise the quote speaks for itself.

Every answer stays within ``max_words`` words of quotation; headings label a quote ("Trip plan \u203a Hotel:"),
never stand for one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from secondbrain.language import wordnet
from secondbrain.ports import SparseEncoder
from secondbrain.reading import Statement, read
from secondbrain.search_hits import SearchHit
from secondbrain.search_hits import said_at as _moment
from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal import Conventions
from secondbrain.temporal.written import Calendar
from secondbrain.word_times import quoted_second
from services.query import coverage, members, rivals, shapes
from services.query.engine import Source
from services.query.glosses import glosses
from services.query.lemmas import Lemmas
from services.query.question import _TIMES, HYPHENATED, NAMED_THINGS, Asked, understand
from services.query.roles import changed_detail, done_by_other
from services.query.shapes import CALENDAR_WORDS as _CALENDAR_WORDS
from services.query.shapes import SHAPES as _SHAPES

_DEFAULT_ENCODER = Bm25Encoder()
NOT_FOUND = "I could not find anything about that in your data."
MAX_WORDS = 60  # of quotation in one answer
LONG_STATEMENT = 45  # words: a longer statement is quoted around its matching clauses
RUNNER_UP = 0.75  # a further statement is quoted when it scores this close to the best
KIND_REACH, KIND_SHARE = 10, 0.5  # how far down, and how close to the best, one naming the kind asked is sought
SELF = 0.6  # a statement of the person the question names, of themselves, is lifted this much
OTHERS = 0.7  # and one of someone else, of themselves, lowered this much
SWAP_TIE = 0.3  # a swap on a tie in the question's words: someone else's ranks within this of the asked one's
SPOKEN_TO = 0.2  # one that another speaker says to them or of them less: it often echoes their own words
UPDATE = 0.5  # or this close, when it is a newer source's fact of the same thing
QA_CONTEXT = 0.5  # a word shared through a statement's context (headings, title, what was said just before)
DISCOURSE = 8  # statements before one, in its source, whose words count as its context

# A sentence that leans on the one before ("It is on 3 December.") is quoted with it.
_LEANS_BACK = re.compile(r"^(?:it|its|it's|this|that|these|those|they|their|them|there|he|his|him|she|her|then|so|"
                         r"also|and|but)\b", re.I)
# ...and one that names its subject only by pointing back ("It gives me a sense of purpose.") needs the one before.
_POINTS_BACK = re.compile(r"^(?:it|its|it's|this|that|these|those|they|they're|he|she|he's|she's)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|our|us)\b", re.I)
_DROPPED_I = re.compile(r"\s*(?:(?:just|recently|finally|also|still|already|actually|totally|really)\s+)?"
                        r"(?:been|got|had|went|made|did|saw|met|took|felt|started|finished|tried|joined|"
                        r"(?!indeed\b|speed\b|need\b)[a-z]{3,}ed)\b(?!\s+(?:by|to be)\b)", re.I)
_THIRD_PERSON = re.compile(r"\b(?:they|them|their|they're|it|its|it's|he|him|his|she|her)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.I)


@dataclass(frozen=True, slots=True)
class Quote:
    """One quoted statement and where it is: the source it cites and the place in it (a page, a second)."""

    n: int  # the source's number
    text: str  # plain words
    markdown: str  # as the source wrote them (inline Markdown kept)
    label: str = ""  # the headings it sits under, when they say what it is about
    note: str = ""  # what follows it: the date a time word stood for, a date the weekday disagrees with
    earlier: str = ""  # set on an older statement of a fact that changed: when it was said
    page: int | None = None
    t_start: float | None = None  # seconds into a recording where the quoted words begin
    speaker: str = ""  # who says it, in a conversation
    by_asked: bool = False  # the speaker is the person the question asks about


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer with the source numbers it cites (1-based, into the sources sent)."""

    text: str  # plain text (no Markdown marks): what the CLI and MCP show
    citations: list[int]
    grounded: bool
    markdown: str = ""  # the same answer with the quoted Markdown kept, for a page that renders it safely
    found: bool = True  # False: the answer says nothing was found (and may show the closest, labelled)
    quotes: list[Quote] = field(default_factory=list)


@dataclass(slots=True)
class _Candidate:
    n: int
    st: Statement
    source: Source | SearchHit
    terms: set[str]
    overlap: float
    fact: bool
    subjects: int  # subject terms the statement (with its headings) covers
    about_other: bool  # said by someone other than the person asked about, of themselves
    asks: bool = False  # a question itself ("How did it go?"): it states nothing
    speaker_bonus: bool = False  # about the person the question names
    said: int = 0  # subject terms in the statement's own words
    score: float = 0.0
    quoted: str = ""  # its words as quoted (see _shown)
    missing: tuple[str, ...] = ()  # what the question is about that it does not speak of (see coverage)


@dataclass(frozen=True, slots=True)
class _Asking:
    """One answer's setting: the question as read, its sources, and how times are read and written."""

    asked: Asked
    hits: Sequence[SearchHit | Source]
    tz: ZoneInfo | None
    conventions: Conventions | None
    cal: Calendar


def extractive_answer(question: str, hits: Sequence[SearchHit | Source], *, max_sentences: int = 3,
                      encoder: SparseEncoder | None = None, tz: ZoneInfo | None = None,
                      conventions: Conventions | None = None, max_words: int = MAX_WORDS,
                      window: tuple[datetime | None, datetime | None] | None = None) -> Answer:
    """The user's own words that answer ``question`` from ``hits`` (see the module doc).  Dates are read in
    ``tz`` and written in the order of ``conventions`` (month first by default, as in en_US); ``window`` is the
    time the question asks about (events outside it are not counted)."""
    enc = Lemmas(encoder or _DEFAULT_ENCODER)
    asked = understand(question, enc)
    if not asked.terms or not hits:
        return _not_found()
    asked = _known_persons(asked, hits)
    ctx = _Asking(asked, hits, tz, conventions, Calendar(conventions.date_order if conventions else "mdy"))
    candidates, _source_terms = _candidates(asked, hits, enc)
    # sharing a word, or holding the fact asked of what it speaks of in other words ("Total" under "CITY CABS")
    scored = [c for c in candidates if c.overlap > 0 or c.subjects or (c.fact and asked.things and not c.missing)]
    other = _not_there(asked, candidates, _source_terms)
    ranked = sorted(scored, key=lambda c: -c.score)
    if other is None and (changed := changed_detail(asked, ranked, enc)):  # "... in Lisbon?" / "In Rome I saw"
        other = f"\u201c{changed}\u201d"
    if other is not None and asked.main and asked.main == asked.counted and (
            counted := _count(ctx, candidates, window, max_words)):  # "how many books" over "Finished Piranesi"
        return counted
    if other is not None:
        return _closest(ctx, other, scored or [c for c in candidates if c.n == 1 and not c.asks][:1], max_words)
    stated = [c for c in ranked if not c.asks and c.said][:4]
    first = next((c for c in ranked if not c.asks), None)  # their own words leading: it is about them
    own = first is not None and first.speaker_bonus and _said_by(first.st, {p.casefold() for p in asked.persons})
    if asked.persons and ((any(c.about_other for c in stated) and not any(c.speaker_bonus for c in stated)
                          and not own) or _swapped(asked, ranked, enc)
                          or done_by_other(asked, ranked, candidates, enc)):  # who did it, as parsed
        return _closest(ctx, f"{asked.persons[0]} and that", scored, max_words)
    if (asked.tallies or asked.recalls) and (counted := _count(ctx, candidates, window, max_words)):
        return counted
    gathered = _gather(asked, sorted(candidates, key=lambda c: -c.score), hits) if asked.gathers else []
    if not gathered and not scored:
        return _opening(hits, candidates)
    chosen = gathered or _single(asked, ranked, candidates, max_sentences)
    chosen, apart = members.split(asked.text, chosen, asked.facts)  # what was done listed, the near items apart
    lead = max(chosen, key=lambda c: c.score)
    if len(asked.persons) == 1 and not gathered and lead.about_other:
        # the best statement is someone else speaking of themselves ("Melanie: I'm a fan of Ed Sheeran" for
        # "who is Caroline a fan of?"): that is not about the person asked about
        return _closest(ctx, f"{asked.persons[0]} and that", scored, max_words)
    quotes = _quotes(ctx, chosen) + members.shown_apart(_quotes(ctx, apart))
    if asked.yes_no and _affirms(asked, lead, enc):
        composed = _compose(_fit(quotes, max_words - 1), found=True)  # "Yes:" is a word of the answer too
        return replace(composed, text=f"Yes: {composed.text}", markdown=f"Yes: {composed.markdown}")
    return _compose(_fit(quotes, max_words), found=True)


def _swapped(asked: Asked, ranked: list[_Candidate], enc: SparseEncoder) -> bool:
    """Whether what the question asks of the one person it names is said by someone else of themselves, and not
    of them: the best statement someone else makes of themselves has words of the question that nothing said by
    or of the person asked about has ("What did Caroline realise after her race?" when Melanie ran it)."""
    if len(asked.persons) != 1 or asked.gathers or asked.yes_no or _SPEECH.search(asked.text):
        return False  # a list, a yes or no, or what they said to someone is weighed as it was
    content = asked.terms - _name_terms(asked, enc) - _KIND_TERMS
    leading = [c for c in ranked if not c.asks][:5]  # among the statements an answer may quote
    theirs = next((c for c in leading if c.about_other and _shared(content, c.terms)), None)
    if theirs is None:
        return False
    persons = {p.casefold() for p in asked.persons}
    mine = [c for c in ranked if not c.asks and not c.about_other and (c.speaker_bonus or _said_by(c.st, persons))]
    if mine and mine[0].score - SELF >= theirs.score + OTHERS:  # by relevance alone, the asked person's words lead
        return False
    theirs_n = len(_shared(content, theirs.terms))
    mine_n = max((len(_shared(content, c.terms)) for c in mine), default=0)
    # as many words either way: theirs is what the question echoes when it ranks about as high as the asked one's
    return theirs_n > mine_n or (theirs_n == mine_n and (not mine or theirs.score > mine[0].score - SWAP_TIE))


def _count(ctx: _Asking, candidates: list[_Candidate], window: tuple[datetime | None, datetime | None] | None,
           max_words: int) -> Answer | None:
    """Repeated events (a source's statement with the question's words, in the time asked about; one a day): the
    number first, then each, dated and cited; asked what was done ("When did I go swimming?"), two or more, or the
    one asked for, unnumbered.  ``None`` when a statement states the number ("Ana has three kids") or none match."""
    asked = ctx.asked
    numbered = asked.tallies
    if numbered and any(c.fact and not c.missing and c.overlap > 0 for c in candidates) \
            and not re.search(r"times|often", asked.text):
        return None  # the number is stated: quoted as any fact is
    wanted = {t for t in asked.terms if t not in _KIND_TERMS} - _name_terms(asked, Bm25Encoder())
    kind = asked.counted  # "how many books": a source names them ("Finished Piranesi")
    events: dict[tuple[int, str], _Candidate] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        at = _moment(_hit(c.source))
        # a thing asked is named in a closed compound too ("Parkrun" for "runs")
        said = coverage.words(c.st.text) if c.missing else frozenset()
        compound = bool(c.missing) and all(coverage.headed(m, said) for m in c.missing)
        if c.asks or not (wanted & c.terms or compound) or (c.missing and not compound and not (
                c.missing == (kind,) and _NAMES.search(c.st.text))) or at is None or (not numbered and (
                c.st.speaker or not (c.fact or asked.facts == ("when",)))) or (window is not None and (
                (window[0] and at < window[0]) or (window[1] and at >= window[1]))):  # a conversation tells again
            continue
        day = _day(at, ctx.tz, ctx.cal)
        if not any(d == day for _n, d in events) and c.n not in {n for n, _d in events}:
            events[(c.n, day)] = c
    # what was only meant or not done ("Was going to meet Lucy") is no event: shown apart, not counted
    done, apart = members.split(asked.text, sorted(events.values(), key=lambda c: _moment(_hit(c.source))
                                                   or datetime.min), asked.facts)
    done = done[-1:] if asked.recalls == "last" else done[:1] if asked.recalls == "first" else done
    if len(done) < 1 + (asked.recalls == "each" and not numbered):
        return None
    quotes = [replace(_quote(ctx, c), note="", label=_day(_moment(_hit(c.source)) or datetime.min, ctx.tz, ctx.cal))
              for c in done] + members.shown_apart([replace(_quote(ctx, c), note="") for c in apart])
    noun = "time" if re.search(r"times|often", asked.text) else asked.category.rstrip("s") or "time"
    noun = (kind if len(done) != 1 else wordnet().base(kind, "n")) if kind else noun + "s" * (len(done) != 1)
    head = f"{len(done)} {noun}: " * numbered
    body = _compose(_fit(quotes, max_words - len(head.split())), found=True)
    return replace(body, text=head + body.text, markdown=head + (body.markdown or body.text))


def _affirms(asked: Asked, best: _Candidate, enc: SparseEncoder) -> bool:
    """Whether the statement quoted first says yes to a yes/no question: it has every word of the question
    (bar the person's name), says it of the person asked about, and negates nothing."""
    wanted = asked.terms - _name_terms(asked, enc)
    return bool(wanted) and wanted <= _shared(wanted, best.terms) and not shapes.NEGATED.search(best.st.text) \
        and (not asked.persons or best.speaker_bonus) and not best.asks


def _name_terms(asked: Asked, enc: SparseEncoder) -> set[str]:
    """The terms of the persons the question names, as its own words were read."""
    return {t for p in asked.persons for t in enc.tokenize(p)}


# --------------------------------------------------------------------------- reading the sources


def _hit(source: SearchHit | Source) -> SearchHit:
    return source.hit if isinstance(source, Source) else source


def _candidates(asked: Asked, hits: Sequence[SearchHit | Source],
                enc: SparseEncoder) -> tuple[list[_Candidate], list[tuple[set[str], str]]]:
    """Every statement of every source, scored; and each source's terms (with its title and headings)."""
    out: list[_Candidate] = []
    sources: list[tuple[set[str], str]] = []
    wanted = [(k, shapes.CLOCK if k == "when" and asked.time_of_day else _SHAPES[k]) for k in asked.facts]
    persons = {p.casefold() for p in asked.persons}
    speech = bool(_SPEECH.search(asked.text))
    things = tuple(t for t in asked.things if t.casefold() not in persons)
    for n, source in enumerate(hits, 1):
        hit = _hit(source)
        text = source.text
        speakers = frozenset(hit.speakers)
        statements = read(text, tuple(hit.heading_path), speakers)
        title_terms = set(enc.tokenize(hit.title))
        around = coverage.words(f"{hit.title} {' '.join(hit.heading_path)}") | shapes.bought(text)  # a receipt's
        said_words = [coverage.words(st.text) for st in statements]
        # each statement's terms once (a statement is also the context of the ones after it)
        terms = [set(enc.tokenize(st.text)) for st in statements]
        headings: dict[tuple[str, ...], set[str]] = {}
        whole = set(enc.tokenize(text)) | title_terms | set(enc.tokenize(" ".join(hit.heading_path)))
        sources.append((whole, f"{hit.title}\n{text}"))
        modality = 0.5 if asked.modalities and hit.modality in asked.modalities else 0.0
        prior_about = "neutral"
        abouts: list[str] = []
        for i, st in enumerate(statements):
            own = terms[i]
            if st.headings not in headings:
                headings[st.headings] = set(enc.tokenize(" ".join(st.headings)))
            context = headings[st.headings] | title_terms
            spoken = said_words[i] | around | coverage.words(" ".join((*st.headings, *st.columns)))
            for j in range(max(0, i - DISCOURSE), i):
                # what was just said sets the topic a statement goes on about ("They eat insects." after "my
                # turtles"), and a question someone just asked is what it answers
                prior = statements[j]
                if prior.speaker == st.speaker or _is_question(prior):
                    context |= terms[j]
                    spoken |= said_words[j]
            mine, theirs = _shared(asked.terms, own), _shared(asked.terms, context)
            overlap = len(mine) + QA_CONTEXT * len(theirs - mine)
            bare = _without(st.text, asked.text)
            fact = any(shapes.holds(kind, shape, bare) for kind, shape in wanted) or (
                "person" in asked.facts and not st.speaker and shapes.opens_with_name(st.text, bare))
            covered = sum(1 for t in asked.subjects if t in own or t in context)
            said = sum(1 for t in asked.subjects if t in own)
            about = _about(st, persons, speech)
            if about == "neutral" and i and statements[i - 1].speaker == st.speaker \
                    and (_POINTS_BACK.match(_spoken(st)) or (prior_about == "other" and (
                        _LEANS_BACK.match(_spoken(st)) or _THIRD_PERSON.search(_spoken(st))))):
                # "It's a masterpiece on wheels." after "I got a new Ferrari!": about whom the one before is
                about = prior_about
            if about == "asked" and _said_by(st, persons) and not speech and _yours(_spoken(st), asked, enc):
                about = "other"  # "I love your turtles": the turtles are the other's
            if about == "neutral" and i and _said_by(st, persons) and not speech and st.text != _spoken(st) \
                    and statements[i - 1].speaker != st.speaker and "other" in [
                        abouts[j] for j in range(i - 1, max(-1, i - DISCOURSE), -1)
                        if statements[j].speaker == statements[i - 1].speaker] and _REACTS.match(_spoken(st)):
                # "Wow, that's a great necklace!" opening a reply to the other's news of themselves: about it
                about = "other"
            abouts.append(about)
            prior_about = about
            about_other = about == "other"
            speaker = 0.0 if about != "asked" else SELF if _said_by(st, persons) else SPOKEN_TO
            asks = _is_question(st)  # a question in a source states no fact
            empty = _FILLER.fullmatch(_spoken(st)) is not None  # nor do thanks or a greeting
            c = _Candidate(n, st, source, own, overlap, fact, covered, about_other, asks, about == "asked", said,
                           quoted=_shown(st.text, asked.terms, enc), missing=coverage.missing(things, spoken))
            # Overlap dominates; the fact asked for counts as most of a shared word; the subject and the person
            # asked about lift a statement; among equals better-ranked sources and earlier statements first.
            c.score = (overlap + (0.8 if fact else 0.0) + 0.4 * covered + speaker + modality
                       + (0.3 if "amount" in asked.facts and shapes.priced_total(st.text) else 0.0)
                       - (OTHERS if about_other else 0.0) - (1.5 if asks or empty else 0.0)
                       - 0.05 * (n - 1) - 0.001 * st.index)
            out.append(c)
        if persons:
            _turns_about(out[len(out) - len(statements):])
    return out, sources


# An interjection or an appraisal opening a reply ("Wow", "Nice!", "That sounds great", "Looks yummy").
_REACTS = re.compile(r"(?:wow|whoa|woah|nice|cool|great|awesome|amazing|yum|m+|aw+|oh|haha|congrats|"
                     r"congratulations|that's|that is|that sounds|sounds|looks|what an?)\b", re.I)


def _turns_about(mine: list[_Candidate]) -> None:
    """A turn of a conversation that speaks of the other person and never of the one asked about ("Way to go,
    Nate! Making videos - that's awesome! You'll do great!"): its remarks about neither are the other's too."""
    turn: list[_Candidate] = []
    for c in [*mine, None]:
        if c is None or _opens_turn(c) or (turn and c.st.speaker != turn[0].st.speaker):
            if any(x.about_other for x in turn) and not any(x.speaker_bonus for x in turn):
                for x in turn:
                    if not x.about_other:
                        x.about_other, x.score = True, x.score - OTHERS
            turn = []
        if c is not None:
            turn.append(c)


# What a chat shows after a message ("[shares a photo: ...]"), which does not make it a statement.
_ATTACHED = re.compile(r"(?:\s*\[[^\[\]]*\])+\s*$")


_CAPTION = re.compile(r"\s*\[\s*(?:shares?|shared|sends?|sent|image|photo|picture|attachment|attached)\b", re.I)


def _shown(text: str, asked: frozenset[str], enc: SparseEncoder) -> str:
    """A statement as quoted beside the best one: without the caption of what it showed when that shares no
    word with the question (it takes the room of what answers; the best statement keeps its own, which often
    shows the thing asked about)."""
    attached = _ATTACHED.search(text)
    if attached is None or attached.start() == 0 or not _CAPTION.match(attached.group(0)) \
            or asked & set(enc.tokenize(attached.group(0))):
        return text
    return text[:attached.start()]


# A question that proposes something ("How about biking to work?") states it: it is what was suggested.
_SUGGESTS = re.compile(r"(?:how about|what about|why don't (?:we|you)|why not|shall we|maybe (?:we|you) "
                       r"(?:could|should))\b(?!\s+(?:you|yours|u)\W*$)", re.I)


# A statement with a question tag asks only for agreement: "Sunflowers mean warmth and happiness, right?"
_TAGGED = re.compile(r",\s*(?:right|isn't it|aren't they|don't they|doesn't it|didn't (?:i|you|we|they|it)|"
                     r"wasn't it|weren't they|eh|huh)\?$", re.I)


def _is_question(st: Statement) -> bool:
    said = _ATTACHED.sub("", st.text).rstrip(" \"')]")
    return said.endswith("?") and not _SUGGESTS.match(_spoken(st)) and not _TAGGED.search(said)


def _shared(asked: frozenset[str], terms: set[str]) -> set[str]:
    """The question's terms a statement has: the same stem, or one a longer form of the other ("attend" and
    "attende" for "attended" and "Attendees": the stemmer leaves them apart)."""
    out = set(asked & terms)
    for t in asked - out:
        if len(t) >= 5 and any(len(u) >= 5 and (u.startswith(t) or t.startswith(u)) for u in terms):
            out.add(t)
    return out


_SPEECH = re.compile(r"\b(?:say|says|said|suggest\w*|advi[cs]\w*|recommend\w*|tell|tells|told|ask|asks|asked|"
                     r"think|thinks|thought|describe\w*|mention\w*|explain\w*|share[sd]?|encourage\w*|"
                     r"remind\w*|warn\w*|propose[sd]?|respond\w*|repl(?:y|ied|ies))\b", re.I)


def _known_persons(asked: Asked, hits: Sequence[SearchHit | Source]) -> Asked:
    """The people the question names who speak in the sources (a conversation's speakers): the only names the
    person rule weighs ("Whispering Falls" is a place, "Harry Potter" a book)."""
    if not asked.persons:
        return asked
    speakers = {s.casefold() for x in hits for s in _hit(x).speakers}
    known = tuple(p for p in asked.persons if p.casefold() in speakers)
    return asked if known == asked.persons else replace(asked, persons=known)


def _about(st: Statement, persons: set[str], speech: bool = False) -> str:
    """Whom a statement of a conversation is about, when the question names someone: ``asked`` (they speak of
    themselves, or someone names them or speaks to them), ``other`` (someone else of themselves, or they of
    the one they speak to: "your charity work") or ``neutral`` (a remark about neither)."""
    if not persons or st.speaker is None:
        return "neutral"
    text = _VOCATIVE.sub(" ", _spoken(st)).casefold()  # "Thanks, Caroline! I ran..." is said to her, not of her
    if any(p in text for p in persons) and st.speaker.casefold() not in persons:
        return "asked"
    first, second = bool(_FIRST_PERSON.search(st.text)), bool(_SECOND_PERSON.search(_TO_YOU.sub(" ", st.text)))
    # a chat drops the "I" ("Just finished 'A Dance with Dragons'.", "Been working on a project."): a turn's
    # statement opening on a verb of the past speaks of its speaker
    first = first or _DROPPED_I.match(_spoken(st)) is not None
    if st.speaker.casefold() in persons:
        if speech:  # "what did Evan suggest": whatever they say, to whomever
            return "asked"
        return "asked" if first else "other" if second else "neutral"
    if speech:  # "what did Evan suggest": what someone else says to them is not what they said
        return "other" if first or second else "neutral"
    if second and first:  # "I took a road trip while you were winning": the one they say more of
        mine, yours = len(_FIRST_PERSON.findall(st.text)), len(_SECOND_PERSON.findall(_TO_YOU.sub(" ", st.text)))
        return "other" if mine > yours else "asked"
    return "asked" if second else "other" if first else "neutral"


# "you" as what is given to or done for ("I'll bring you a souvenir", "thank you", "for you"): not about them by it.
_TO_YOU = re.compile(r"\b(?:(?:to|for|with|at|from|about|of|on|by|like|than|thank)\s+you\b|"
                     r"you(?=\s*(?:[,.!?;]|$|\s(?:a|an|the|some|my|our|this|that|back|soon|too|again)\b)))", re.I)


# "your" and the words of what it gives to the one spoken to ("your turtles", "your dance studio").
_YOUR = re.compile(r"\byour\s+([\w'-]+(?:\s+(?!(?:and|or|to|for|in|with|on|at|so|but)\b)[\w'-]+)?)", re.I)


def _yours(text: str, asked: Asked, enc: SparseEncoder) -> bool:
    """Whether a statement gives a thing the question asks about to the one spoken to ("I love your turtles!"
    for "What does Joanna love about having turtles?", said by Joanna): it is the other's thing, not theirs."""
    wanted = set(enc.tokenize(" ".join(asked.things))) - _name_terms(asked, enc) - _KIND_TERMS
    return any(wanted & set(enc.tokenize(m.group(1))) for m in _YOUR.finditer(text))


# A name the speaker calls the one they speak to: "Thanks, Caroline!", "Hey Mel,", "..., Jon!".
_VOCATIVE = re.compile(r"(?:^|(?<=[.!?]\s))(?:(?i:thanks|thank you|hey|hi|hello|wow|oh|yeah|congrats|"
                       r"congratulations|aw+|sure|yes|no|haha)[\s,!]+|[A-Z][a-z]+!?\s)?[A-Z][a-z]+[,!]|,\s*[A-Z][a-z]+(?=[!.?]*$)")


# Terms that name the kind of fact asked, not what it is about: sharing only them is sharing nothing.
_KIND_TERMS = frozenset(Bm25Encoder().tokenize(
    "code codes number numbers time times date dates day days price cost amount total password pin place name"))


# What a "not found" says it found none of, per kind of fact asked.
_KIND_NAMES = {"amount": "an amount", "when": "a date or time", "person": "a name", "place": "a place",
               "code": "a code or number", "email": "an email address"}
_TIME_OF_DAY = "a time"  # what "what time ...?" asks for, as a "not found" names it
_PAST_QUESTION = re.compile(r"\b(?:did|was|were|had)\b", re.I)


def _not_there(asked: Asked, candidates: list[_Candidate], sources: list[tuple[set[str], str]]) -> str | None:
    """What the question asks about that no source speaks of ("the hotel in Porto" over the flights there), what
    narrows it that a source narrows otherwise ("the back door code" over the front door's), or the kind of fact
    it asks for that no statement about it holds (the price of the tyres): how the "not found" names it; ``None``
    when a statement answers it."""
    said = [coverage.words(text) | shapes.bought(text) for _terms, text in sources]
    persons = {p.casefold() for p in asked.persons}
    # "Jolene and her partner": the one they do it with, whom their "we" speaks of
    along = {m.group(1).casefold() for p in asked.persons
             for m in re.finditer(rf"\b{re.escape(p)}\s+and\s+(?:his|her|their)\s+(\w+)", asked.text)}
    modifiers = {w for p in asked.phrases for w in p.words.casefold().split()[:-1]}  # "evening" yoga class: a kind
    things = [t for t in asked.things if t.casefold() not in persons and t.casefold() not in coverage.KIND_WORDS
              and (t.casefold() not in _TIMES or t.casefold() in modifiers) and t.casefold() not in along]
    notes = not any(c.st.speaker for c in candidates)  # people chatting coin words ("transgender-specific")
    absent = [t for t in things if not any(coverage.covers(t, w) for w in said) and (
        t[:1].isupper() or coverage.known(t) or (notes and not any(coverage.misspelt(t, w) for w in said)))]
    main = asked.main or None
    if asked.persons and any(t[:1].islower() and coverage.concrete(t) for t in things) and not any(
            coverage.covers(t, w) for t in things for w in said):
        return f"\u201c{_phrase(asked, things[0])}\u201d"  # the sources share only the person's name with it
    if main is not None and not notes and not coverage.concrete(main):
        main = None  # in a conversation, what people did and felt is put in other words than the question's
    if main is not None and main in absent:
        return f"\u201c{_phrase(asked, main)}\u201d"
    if (named := [t for t in absent if t.istitle()]) and notes:
        return f"\u201c{_phrase(asked, named[0])}\u201d"  # notes never name the place or thing ("flat in Leeds")
    if notes and (other := [t for t in absent if t[:1].islower() and coverage.concrete(t)
                            and any(coverage.sibling(t, w) for w in said)]):
        return f"\u201c{_phrase(asked, other[0])}\u201d"  # another of its kind named: the dog's, not the cat's
    # a topic ("about the hiring plan") must be there; asked for no kind of fact, even a word that could name one
    # ("about the school fees"); a hyphenated one, even where people coin such words ("about the bake-off")
    topic = absent + [t for t in asked.things if (
        (not asked.facts and t.casefold() in coverage.KIND_WORDS and t[:1].islower() and coverage.known(t))
        or coverage.known_parts(t)) and not any(coverage.covers(t, w) for w in said)]
    for n in (n for n in asked.narrowers if n.preposition == "about"):
        for t in topic:  # (a hyphenated one as the tagger split it: "about the bake-off" narrows by "the bake")
            if (part := t.casefold().split("-")[0]) in coverage.words(n.words):
                said_as = re.sub(rf"\b{re.escape(part)}\b", t, n.words, count=1, flags=re.I) if "-" in t else n.words
                return f"\u201c{said_as}\u201d"
    texts = [text for _terms, text in sources]
    # a hyphenated noun the tagger split, as the head of the question's first phrase ("morning drop-off")
    split_heads = [Bm25Encoder().tokenize(m.group())[0] for m in HYPHENATED.finditer(asked.text)
                   if Bm25Encoder().tokenize(m.group().split("-")[0])[:1] == [p.head for p in asked.phrases][:1]]
    for t in absent:
        # an adjective saying which one ("blue" sofa, "joint" account) only over notes: people chatting describe;
        # a span or an order ("annual" review, "second" dose) picks out only another span or order (opposed)
        opens = notes and any(p.opening == t for p in asked.phrases) and not wordnet().period(t.casefold()) \
            and not coverage.ORDINAL.match(t)
        last = t.casefold().rsplit("-", 1)[-1]  # the tagger splits "off-peak" day return: "peak day return"
        heads = [h for p in asked.phrases if last in (w := p.words.casefold().split())[:-1] and (
                 t != p.opening or opens) for h in {p.head, *Bm25Encoder().tokenize(w[w.index(last) + 1])[:1]}]
        heads += split_heads
        narrowed = [n for n in asked.narrowers if t.casefold() in coverage.words(n.words)]
        if any(rivals.narrowed_otherwise(h, asked.terms, text, likeness=opens, picked=True) for h in heads
               for text in texts) or any(
                rivals.rival(n, asked.terms, text) for n in narrowed for text in texts) or rivals.compound_otherwise(
                asked, t, texts) or coverage.opposed(t, [p.words for p in asked.phrases if p.opening == t], texts):
            return f"\u201c{_phrase(asked, t)}\u201d"
    if not _PAST_QUESTION.search(asked.text) and (day := shapes.day_not_there(asked.text, texts)):
        thing = _phrase(asked, main) if main else ""  # "pharmacy on Sunday": hours of others
        return f"\u201c{thing if day.split()[-1] in thing.split() else f'{thing} {day}'.strip()}\u201d"
    if older := rivals.older_not_there(asked.text, texts):
        return f"\u201c{older}\u201d"  # "the old router" over "New router password"
    if least := coverage.least_not_there(asked.text, texts):
        return f"\u201c{least}{f' {main}' if main else ''}\u201d"  # "least favourite food" over "my favourite food"
    # a slip for a word a source has ("fesetival") is no thing missing from it
    slip = main is not None and not coverage.known(main) and any(coverage.misspelt(main, w) for w in said)
    kinds = [k for k in asked.facts if k in _KIND_NAMES
             and (k not in ("when", "place") or not _PAST_QUESTION.search(asked.text))
             and (k != "amount" or _MONEY_QUESTION.search(asked.text))]
    if kinds and things and not asked.gathers and notes \
            and not any(c.fact for c in candidates if not c.asks and ((main or "") not in c.missing or slip)
                        and not (c.missing and shapes.PRICED.match(c.st.text))):  # a price list names its items
        kind = _TIME_OF_DAY if kinds[0] == "when" and asked.time_of_day else _KIND_NAMES[kinds[0]]
        return f"{kind} for \u201c{_phrase(asked, main or things[0])}\u201d"
    return None


_MONEY_QUESTION = re.compile(r"\bhow much\b|\b(?:cost|costs|price|paid|pay|spen[dt]|charge|fee)\b", re.I)


_ENDING_VERB = re.compile(r"\b(?:do|does|did|will)\b.*\s(\w+)\W*$", re.I)


def _phrase(asked: Asked, word: str) -> str:
    """The longest phrase of the question that holds ``word`` ("hotel in Porto" for "hotel"), else the word with
    the thing after it ("biggest stressor") or the name before it ("Diwali party"), else the word."""
    held = [p.words for p in (*asked.narrowers, *asked.phrases) if word.casefold() in p.words.casefold().split()]
    if (ending := _ENDING_VERB.search(asked.text)) and ending[1].casefold() in coverage.KIND_WORDS:
        # "did the haircut cost?": the tagger's noun is the verb
        held = [h.rsplit(" ", 1)[0] if h.casefold().endswith(f" {ending[1].casefold()}") else h for h in held]
    after = re.search(rf"\b{re.escape(word)}(?:['\u2019]s)?\s+([\w'-]+)", asked.text)  # "landlord's agent"
    named = re.search(rf"\b([A-Z][\w-]*)\s+{re.escape(word)}\b", asked.text)
    found = max(held, key=len) if held else after[0] if after and after[1] in asked.things \
        else named[0] if named and named.start() > 0 else word
    before = re.search(rf"\b([a-z]+)\s+{re.escape(found)}", asked.text)
    if before and wordnet().offsets(f"{before[1]}_{found.split()[0].casefold()}", "n"):
        return f"{before[1]} {found}"  # "first aid course": WordNet's "first aid", which the tagger splits
    return found


def _without(sentence: str, question: str) -> str:
    """The sentence less the words the question already has (a "when" question's own "December" is no answer)."""
    asked = {coverage.POSSESSIVE.sub("", w.casefold()) for w in re.findall(r"[\w']+", question)}
    # a removed word leaves a mark, so the first word left is not taken for the sentence's first
    return " ".join("_" if coverage.POSSESSIVE.sub("", w.strip(".,;:!?()\"'")).casefold() in asked else w
                    for w in sentence.split())  # "Surveyor's report" for "the surveyor": the question's own word


# --------------------------------------------------------------------------- choosing what to quote


def _said_by(st: Statement, persons: set[str]) -> bool:
    """Whether a statement is said by one of ``persons`` (casefolded names)."""
    return st.speaker is not None and st.speaker.casefold() in persons


def _single(asked: Asked, ranked: list[_Candidate], everything: list[_Candidate],
            max_sentences: int) -> list[_Candidate]:
    """The best statement, its neighbour when that completes it, and close runners-up that add the fact."""
    best = _lead(asked, ranked, everything)
    best.quoted = best.st.text
    chosen = _whole_turn(asked, best, everything) if best.st.speaker is not None else [best]
    chosen = _with_neighbours(asked, best, chosen, everything)
    chosen = _with_runners_up(asked, best, chosen, ranked, everything, max_sentences)
    return _trimmed(best, chosen)


def _lead(asked: Asked, ranked: list[_Candidate], everything: list[_Candidate]) -> _Candidate:
    """The statement the answer is built on: the best, the reply to it when it is a question, or one nearly as
    good that holds the fact it lacks."""
    best = ranked[0]
    if best.asks and (reply := _reply(asked, best, everything)) is not None:
        # the words that match best are someone's question ("What would you say is the toughest part?"): its reply
        best = reply
    completed = _completion(asked, best, everything)
    next_gives = completed is not None and completed.fact and not _opens_turn(completed)
    if asked.facts and not best.fact and not next_gives:
        # the best statement lacks the fact, and its next words do not give it ("...wrote me a letter." / "Their
        # words touched me."): one nearly as good that has it comes first
        holder = next((c for c in ranked[1:6]
                       if c.fact and c.score >= 0.6 * best.score and c.subjects >= best.subjects
                       and (c.said >= best.said or c.overlap >= best.overlap - 0.5)), None)
        if holder is not None:
            best = holder
    return best


def _whole_turn(asked: Asked, best: _Candidate, everything: list[_Candidate]) -> list[_Candidate]:
    """A turn of a conversation is quoted whole: what someone says in one breath goes together (when too long,
    the statements of it that bear on the question)."""
    turn = [c for c in everything if c.n == best.n and c.st.speaker == best.st.speaker
            and abs(c.st.index - best.st.index) <= 3 and not c.asks]
    at = {c.st.index: c for c in turn}
    run = [best]
    while not _opens_turn(run[0]) and (before := at.get(run[0].st.index - 1)) is not None:  # to its first words,
        run.insert(0, before)
    run = run[next(k for k, c in enumerate(run) if c is best or not _FILLER.fullmatch(_spoken(c.st))):]  # bar "Hi!"
    i = best.st.index + 1
    while (nxt := at.get(i)) is not None and not _opens_turn(nxt):  # on until the speaker's next turn
        run.append(nxt)
        i += 1
    if _words(run) > LONG_STATEMENT:  # too long to quote whole: the statements of it that bear on the question
        # and the first after the best with the fact it lacks ("...wrote me a letter. Their words touched me")
        gives = next((c for c in run if c.st.index > best.st.index and c.fact), None) \
            if asked.facts and not best.fact else None
        bearing = [c for c in run if c is best or c is gives or c.overlap >= 1]
        run = bearing if _words(bearing) <= LONG_STATEMENT else [c for c in run if c is best or c is gives]
    return run


def _with_neighbours(asked: Asked, best: _Candidate, chosen: list[_Candidate],
                     everything: list[_Candidate]) -> list[_Candidate]:
    """What the statement before leads in with, the one after when it completes it, a follow-up's reply."""
    if (before := _lead_in(chosen[0], everything)) is not None:
        chosen.insert(0, before)
    after = _beside(chosen[-1], everything, 1)
    if after is not None and after.st.headings == best.st.headings and after.st.speaker == best.st.speaker and (
            (asked.facts and not best.fact and after.fact
             and (not asked.main or coverage.covers(asked.main, coverage.words(after.st.text))))
            or _LEANS_BACK.match(after.st.text)
            or (len(best.st.text) < 30 and not (asked.facts and best.fact))  # "TOTAL GBP 14.60" needs no more
            or bool((asked.terms & after.terms) - best.terms)) and not after.asks and not _other_row(best, after):
        chosen.append(after)
    reply = _reply_to_follow_up(chosen[-1], everything)
    if reply is not None and _words([*chosen, reply]) <= MAX_WORDS:
        chosen.append(reply)
        # the reply's first words are often only how it felt ("I was really excited."); what it was comes next
        on = _beside(reply, everything, 1)
        if on is not None and on.st.speaker == reply.st.speaker and not _opens_turn(on) and not on.asks \
                and _words([*chosen, on]) <= MAX_WORDS:
            chosen.append(on)
    elif reply is not None and _words([best, reply]) <= MAX_WORDS and not any(
            c is not best and _shared(asked.terms, c.terms) for c in chosen):
        # the turn and the reply are too long together: the reply says more than the rest of the turn, when
        # that shares no word with the question
        chosen = [best, reply]
    return chosen


def _with_runners_up(asked: Asked, best: _Candidate, chosen: list[_Candidate], ranked: list[_Candidate],
                     everything: list[_Candidate], max_sentences: int) -> list[_Candidate]:
    """Statements nearly as good that add the fact (or a newer source's change of it); one naming the kind asked."""
    newest = _moment(_hit(best.source))
    group = len(chosen) - 1  # the best statement with its turn, lead-in and reply counts as one
    for c in ranked[1:]:
        if len(chosen) - group >= max_sentences:
            break
        # a newer source giving the fact of the same thing may be a change ("Dentist moved to Thursday 10
        # December") though it words it less like the question than the first booking did
        said_at = _moment(_hit(c.source))
        shares = c.said > 0 or c.overlap >= 1 or (not asked.subjects and c.overlap > 0)
        update = (asked.facts and c.fact and shares and c.n != best.n and c.score >= UPDATE * best.score
                  and said_at is not None and newest is not None and said_at > newest)
        if c in chosen or (c.score < RUNNER_UP * best.score and not update) or c.about_other or c.asks:
            continue
        # another statement must be about the same thing, not merely share a word: by its own words, or
        # going on about it (in a conversation's turn, leaning back on the one before, or right after it)
        goes_on = c.subjects and (c.st.speaker is not None or _LEANS_BACK.match(c.st.text) is not None
                                  or any(x.n == c.n and x.st.index == c.st.index - 1 for x in chosen))
        if asked.subjects and not update and not (c.said or goes_on):
            continue
        if (asked.facts and not c.fact) or (best.fact and c.n == best.n and (c.st.kind == best.st.kind != "sentence"
                                                                            or shapes.PRICED.match(c.st.text))):
            continue  # lacks the fact; or another row, item or priced line of the list that holds it ("Coffee 2.80")
        if _other_row(best, c):
            continue
        if c.st.text.casefold() in {x.st.text.casefold() for x in chosen}:
            continue
        if (before := _lead_in(c, everything)) is not None and before not in chosen:
            chosen.append(before)
        chosen.append(c)
        more = _completion(asked, c, everything)
        if more is not None and more not in chosen:
            chosen.append(more)
    if asked.answer_kind and not any(_names_kind(asked, x) for x in chosen):
        # "which tournament": none chosen names one ("a big Valorant tournament"); one nearly as good that does
        named = next((c for c in ranked[1:KIND_REACH] if c not in chosen and not c.asks and not c.about_other
                      and c.score >= KIND_SHARE * best.score and _names_kind(asked, c) and not _other_row(best, c)),
                     None)
        if named is not None:
            chosen.append(named)
    return chosen


def _other_row(best: _Candidate, c: _Candidate) -> bool:
    """Whether ``c`` is another row of the table the question picked ``best`` from by its words ("Jo" of the
    children: "Sam: Stage 6" is no answer to Jo's swimming badge)."""
    return c.n == best.n and c.st.kind == best.st.kind == "row" and c.overlap < best.overlap


def _trimmed(best: _Candidate, chosen: list[_Candidate]) -> list[_Candidate]:
    """The chosen statements within the words an answer quotes."""
    # too long to quote all: the statements that bear least on the question go first (quoted in source order, a
    # runner-up early in its source would otherwise crowd out the best statement's own words), never the best
    # nor what its "it" points back to
    kept = {id(best)} | {id(x) for x in chosen if x.n == best.n and x.st.index == best.st.index - 1
                            and _POINTS_BACK.match(_spoken(best.st))}
    while len(chosen) > 2 and _words(chosen) + len(chosen) > MAX_WORDS:
        chosen.remove(min((c for c in chosen if id(c) not in kept), key=lambda c: c.score))
    return chosen


def _reply(asked: Asked, question: _Candidate, everything: list[_Candidate]) -> _Candidate | None:
    """The other speaker's first statement after ``question`` in its source (thanks and greetings skipped), when
    it states something and is said by the person the question names (if it names one)."""
    if question.st.speaker is None:
        return None
    persons = {p.casefold() for p in asked.persons}
    for step in range(1, 5):
        x = _beside(question, everything, step)
        if x is None:
            return None
        if x.st.speaker == question.st.speaker:
            continue
        if x.st.speaker is None or x.asks or (persons and x.st.speaker.casefold() not in persons):
            return None
        if not _FILLER.fullmatch(_spoken(x.st)):
            return x
    return None


def _names_kind(asked: Asked, c: _Candidate) -> bool:
    """Whether a statement names a thing of the kind the question asks for by what sets it apart ("coconut
    cream frosting" for "what kind of frosting"), not plainly ("the frosting")."""
    return any(rivals.narrowed_otherwise(k, asked.terms, c.st.text) for k in asked.answer_kind)


def _reply_to_follow_up(c: _Candidate, everything: list[_Candidate]) -> _Candidate | None:
    """In a conversation, what the speaker of ``c`` answers when the other asks about it right after ("Here's
    a cake I made!" / "What flavor?" / "Vanilla with coconut cream frosting."): the rest of what they said."""
    if c.st.speaker is None:
        return None
    nxt = [x for x in everything if x.n == c.n and x.st.index > c.st.index]
    nxt.sort(key=lambda x: x.st.index)
    asking = list(itertools.takewhile(lambda x: x.st.speaker not in (None, c.st.speaker), nxt))
    rest = nxt[len(asking):]
    if not asking or not any(x.asks for x in asking):
        return None
    # the reply's first words are often only thanks or a greeting ("Thanks, Caroline!"); the answer follows
    reply = list(itertools.takewhile(lambda x: x.st.speaker == c.st.speaker and not x.asks, rest))
    return next((x for x in reply[:3] if not _FILLER.fullmatch(_spoken(x.st))), None)


# A statement that is only thanks, a greeting or an exclamation, with perhaps the name of who it is said to.
_FILLER = re.compile(r"(?:(?:thanks|thank you|thx|ty|hey|hi|hello|oh|wow|yeah|yes|yep|yup|sure|totally|definitely|"
                     r"absolutely|haha|aw+|cool|great|awesome|nice|so|much|a lot|for sure|of course|no problem)"
                     r"[\s,!.]*)+(?-i:[A-Z][a-z]+)?[\s,!.]*", re.I)  # the name said to is capitalised


def _beside(c: _Candidate, everything: list[_Candidate], step: int) -> _Candidate | None:
    """The statement ``step`` places after ``c`` in its source (before it, for a negative step)."""
    return next((x for x in everything if x.n == c.n and x.st.index == c.st.index + step), None)


def _words(run: list[_Candidate]) -> int:
    return sum(len(c.quoted.split()) for c in run)


def _lead_in(c: _Candidate, everything: list[_Candidate]) -> _Candidate | None:
    """The statement before ``c`` when ``c`` names its subject only by pointing back to it ("It gives me a sense
    of purpose." after "I'm passionate about fixing up things."): the same speaker's, not a question."""
    before = _beside(c, everything, -1)
    if before is None or not _POINTS_BACK.match(_spoken(c.st)) or before.st.speaker != c.st.speaker \
            or before.st.headings != c.st.headings or before.asks:
        return None
    return before


def _completion(asked: Asked, c: _Candidate, everything: list[_Candidate]) -> _Candidate | None:
    """The statement after ``c`` when it completes it: it leans back ("It is on..."), ``c`` is too short to
    stand alone ("Anna moved!"), or it holds the fact ``c`` lacks."""
    after = _beside(c, everything, 1)
    if after is None or after.asks or after.st.headings != c.st.headings or after.st.speaker != c.st.speaker:
        return None
    if (asked.facts and not c.fact and after.fact) or _LEANS_BACK.match(after.st.text) or len(c.st.text) < 30:
        return after
    return None


def _spoken(st: Statement) -> str:
    """A statement's words without the speaker's name that opens a turn."""
    prefix = f"{st.speaker}:"
    return st.text[len(prefix):].lstrip() if st.speaker and st.text.startswith(prefix) else st.text


def _opens_turn(c: _Candidate) -> bool:
    """Whether the statement starts a turn ("Caroline: ...")."""
    return c.st.speaker is not None and c.st.text.startswith(f"{c.st.speaker}:")


def _gather(asked: Asked, ranked: list[_Candidate], hits: Sequence[SearchHit | Source]) -> list[_Candidate]:
    """One statement per source that bears on the question, deduplicated, in time order.  A list of named
    things ("which places", "which books") takes a source's statement that names one ("Two days in Lyon")
    even when it shares no word with the question, if the source ranked near the best."""
    named = NAMED_THINGS.search(asked.category) is not None
    best = max((c.score for c in ranked if c.overlap > 0 or c.subjects), default=0.0)
    top = max((_hit(h).score for h in hits), default=0.0)
    per_source: dict[int, _Candidate] = {}
    for c in ranked:
        if c.n in per_source or c.about_other or c.asks:
            continue
        shares = (c.overlap > 0 or c.subjects > 0) and c.score >= 0.4 * best
        if asked.facts and not c.fact and c.overlap < 1:
            shares = False
        names = named and _NAMES.search(c.st.text) is not None and _hit(hits[c.n - 1]).score >= 0.5 * top
        if shares or names:
            per_source[c.n] = c
    seen: set[str] = set()
    out = []
    for c in per_source.values():
        key = re.sub(r"\W+", " ", c.st.text.casefold()).strip()
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return sorted(out, key=lambda c: (_time(_hit(hits[c.n - 1])), c.n, c.st.index))


# A name in a statement (not its first word, a month or a weekday).
_NAMES = re.compile(rf"(?<!^)(?<![.!?:]\s)\b(?!{_CALENDAR_WORDS})[A-Z][a-z]{{2,}}")


def _time(hit: SearchHit) -> str:
    return hit.at_start or hit.captured_at or ""


# --------------------------------------------------------------------------- the quotes


def _quotes(ctx: _Asking, chosen: list[_Candidate]) -> list[Quote]:
    """Each chosen statement as quoted: clipped around its matches, labelled, dated; a changed fact newest first."""
    chosen = sorted(chosen, key=lambda c: (c.n, c.st.index))  # read in source order
    quotes = [_quote(ctx, c) for c in chosen]
    for i, c in enumerate(chosen):
        # who says it, when the quote starts inside a turn of someone other than who was quoted just before:
        # quoted on from another speaker's words, it would read as theirs
        if c.st.speaker and not _opens_turn(c) and i > 0 and chosen[i - 1].n == c.n \
                and chosen[i - 1].st.speaker != c.st.speaker:
            q = quotes[i]
            quotes[i] = replace(q, text=f"{c.st.speaker}: {q.text}", markdown=f"{c.st.speaker}: {q.markdown}")
    if len({c.n for c in chosen if c.fact}) > 1 and not ctx.asked.gathers and ctx.asked.facts:
        quotes = _newest_first(ctx, quotes, chosen)
    # one passage's "(recorded ...)" once, after its last statement, not after each
    return [replace(q, note="") if q.note and i + 1 < len(quotes) and quotes[i + 1].n == q.n
            and quotes[i + 1].note == q.note and not quotes[i + 1].earlier else q for i, q in enumerate(quotes)]


def _quote(ctx: _Asking, c: _Candidate) -> Quote:
    asked = ctx.asked
    source = ctx.hits[c.n - 1]
    hit = _hit(source)
    text, markdown = _clip(c.quoted, asked.terms), c.st.markdown
    if text != c.st.text:
        markdown = text  # a clipped statement loses its marks rather than leave one half open
    label = ""
    if c.st.headings and (c.st.kind in ("item", "row") or len(c.st.text.split()) < 8
                          or asked.terms & set(Bm25Encoder().tokenize(" ".join(c.st.headings)))):
        label = " \u203a ".join(c.st.headings[-2:])
    note = glosses(c.st.text, text, hit, ctx.tz, ctx.conventions, ctx.cal) if asked.wants("when") else ""
    page, t_start = _where(source, c.st)
    return Quote(c.n, text, markdown, label, note, "", page, t_start, c.st.speaker or "",
                 _said_by(c.st, {p.casefold() for p in asked.persons}))


def _clip(text: str, terms: frozenset[str]) -> str:
    """The statement, or, when it runs long, the clauses around the words the question shares with it."""
    words = text.split()
    if len(words) <= LONG_STATEMENT:
        return text
    enc = Bm25Encoder()
    clauses = re.split(r"(?<=[,;:])\s+", text)
    hits = [len(terms & set(enc.tokenize(c))) for c in clauses]
    centre = max(range(len(clauses)), key=lambda i: hits[i])
    lo = hi = centre
    while True:  # widen towards the following side first (facts follow), then the one before
        grown = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(clauses) and len(" ".join(clauses[min(lo, j):max(hi, j) + 1]).split()) <= LONG_STATEMENT:
                lo, hi = min(lo, j), max(hi, j)
                grown = True
        if not grown:
            break
    clipped = " ".join(" ".join(clauses[lo:hi + 1]).split()[:LONG_STATEMENT])
    return ("\u2026 " if lo > 0 else "") + clipped + (" \u2026" if not text.endswith(clipped) else "")


def _where(source: SearchHit | Source, st: Statement) -> tuple[int | None, float | None]:
    """The page of a quoted statement, and the second of a recording its words begin at: from the times of
    the words its passage carries, else spread over the passage's span of the recording."""
    hit = _hit(source)
    if isinstance(source, Source):  # possibly widened with its neighbours: the hit's text lies inside it
        start, end, text, shift = source.t_start, source.t_end, source.text, hit.char_start - source.char_start
    else:
        start, end, text, shift = hit.t_start, hit.t_end, hit.text, 0
    if start is None:
        return hit.page, None
    offset = st.start - shift
    if 0 <= offset < len(hit.text):
        return hit.page, quoted_second(hit.word_times, hit.t_start, hit.t_end, len(hit.text), offset)
    return hit.page, quoted_second((), start, end, len(text), st.start)


def _newest_first(ctx: _Asking, quotes: list[Quote], chosen: list[_Candidate]) -> list[Quote]:
    """A fact stated differently by sources of different times: the newest first, the older as earlier."""
    when = {c.n: _moment(_hit(ctx.hits[c.n - 1])) for c in chosen}
    order = sorted(range(len(quotes)), key=lambda i: when.get(quotes[i].n) or datetime.min, reverse=True)
    out = [quotes[i] for i in order]
    newest = when.get(out[0].n)
    for i, q in enumerate(out[1:], 1):
        said = when.get(q.n)
        if said is not None and newest is not None and said < newest and q.n != out[0].n and q.n != out[i - 1].n:
            out[i] = Quote(q.n, q.text, q.markdown, q.label, q.note, _day(said, ctx.tz, ctx.cal), q.page, q.t_start)
    return out


def _day(at: datetime, tz: ZoneInfo | None, cal: Calendar) -> str:
    return cal.date(at.astimezone(tz) if tz is not None else at)


# --------------------------------------------------------------------------- not there


def _closest(ctx: _Asking, about: str, scored: list[_Candidate], max_words: int) -> Answer:
    """Nothing covers what the question is about: say so, then show the closest statement, labelled."""
    kind = about.startswith((*_KIND_NAMES.values(), _TIME_OF_DAY))  # "a date or time for ..."
    head = NOT_FOUND if not about or about == "that" else f"I could not find {about} in your data." if kind \
        else f"I could not find anything about {about} in your data."
    if not scored:
        return Answer(head, [], False, head, found=False)
    best = max(scored, key=lambda c: c.score)
    quote = _quote(ctx, best)
    closest = _fit([quote], max(10, max_words - len(head.split())))
    body = _compose(closest, found=False)
    text = f"{head} The closest I found: {body.text}"
    markdown = f"{head} The closest I found: {body.markdown}"
    return Answer(text, body.citations, True, markdown, found=False, quotes=body.quotes)


def _not_found() -> Answer:
    return Answer(NOT_FOUND, [], False, NOT_FOUND, found=False)


def _opening(hits: Sequence[SearchHit | Source], candidates: list[_Candidate]) -> Answer:
    """No statement shares a word with the question, yet the engine judged the best source relevant (by
    meaning, or by its title): its opening, which is what a label, a receipt or a photo leads with."""
    first = [c for c in candidates if c.n == 1][:3]
    if not first:
        return _not_found()
    quotes = [Quote(1, c.st.text, c.st.markdown, "", "", "", *_where(hits[0], c.st)) for c in first]
    return _compose(_fit(quotes, 40), found=True)


# --------------------------------------------------------------------------- writing it out


def _fit(quotes: list[Quote], max_words: int) -> list[Quote]:
    """As many quotes, in order, as fit ``max_words`` with what goes with them (label, dates, citation); the
    first always, clipped if it must be."""
    out, used = list[Quote](), 0
    for q in quotes:
        extra = len(q.label.split()) + len(q.note.split()) + (len(q.earlier.split()) + 1 if q.earlier else 0) + 1
        extra += len(_speaks(q, out[-1] if out else None).split())
        n = len(q.text.split()) + extra
        if out and used + n > max_words:
            continue
        if not out and n > max_words:
            clipped = " ".join(q.text.split()[:max(5, max_words - extra)]) + " \u2026"
            q = replace(q, text=clipped, markdown=clipped)
            n = max_words
        out.append(q)
        used += n
    return out


def _speaks(q: Quote, before: Quote | None) -> str:
    """Who says a statement from within a turn of a conversation ("Dave: "): said when the quote before it, in
    the same source, is someone else's, and when it leads its source's quotes and is not the person asked
    about (whose words the question expects).  A statement opening a turn names its speaker already."""
    if not q.speaker or q.text.startswith(f"{q.speaker}:"):
        return ""
    goes_on = before is not None and before.n == q.n
    named = before.speaker != q.speaker if goes_on and before is not None else not q.by_asked
    return f"{q.speaker}: " if named else ""


def _compose(quotes: list[Quote], *, found: bool) -> Answer:
    """The quotes as one answer: consecutive statements of one source read as one passage with one citation."""
    plain, marked = list[str](), list[str]()
    for i, q in enumerate(quotes):
        nxt = quotes[i + 1] if i + 1 < len(quotes) else None
        lead = f"earlier ({q.earlier}): " if q.earlier else ""
        label = f"{q.label}: " if q.label and (i == 0 or quotes[i - 1].label != q.label
                                               or quotes[i - 1].n != q.n) else ""
        label += _speaks(q, quotes[i - 1] if i else None)
        cite = "" if nxt is not None and nxt.n == q.n and not nxt.earlier and not q.note else f" [{q.n}]"
        plain.append(f"{lead}{label}{q.text}{cite}{q.note}")
        marked.append(f"{lead}{label}{q.markdown}{cite}{q.note}")
    joiner = "; " if len({q.n for q in quotes}) > 1 and all(q.text.rstrip()[-1:] not in ".!?" for q in quotes) else " "
    text = joiner.join(plain)
    return Answer(text, sorted({q.n for q in quotes}), bool(quotes), joiner.join(marked), found=found, quotes=quotes)
