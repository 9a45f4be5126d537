"""Who did what in a conversation, read from a dependency parse of the question and of the few statements an
answer would quote first: the doer of the question's verb, and what the doing is done to, in or at.

**Done by someone else.** The doer of a verb is its grammatical subject, read as a person: "I" and "we" are the
speaker, "you" the one spoken to (the other speaker of a two-person conversation), a name that person, and "my
daughter" the speaker too (what someone's own people did is asked as theirs: "What did Ivy's daughter draw?").  A
verb without a subject of its own takes its head's ("I flew to Berlin and gave my talk").  What is only advised
("You should try yoga") or denied ("if you've never played it") is no one's doing, and the asked person's own
"you" is often anyone's ("you always need to communicate").  A reply that names no verb ("Yes, at the lido")
answers the question just asked of its speaker ("Do you still swim in the mornings?").  When the first leading
statement that says who did the asked thing says someone other than the person asked about did it, the answer
says it found nothing about that person; their own words of themselves leading first keep the answer theirs,
in whatever words.

**A changed detail.** When a leading statement of the asked person doing the asked thing does it to, in or at
another thing of the same kind ("What did Lucia see in Lisbon?" / "In Rome I saw the Colosseum"; "donate to a
luxury store" / "donated my old car to a homeless shelter"), and none of the leading statements names the
question's thing, the answer says it found nothing about it.  Of the same kind: two names, or two things one can
point at (WordNet); an act or a quality is often put in other words ("a speech" for "my school event").

Parsed by spaCy's small English pipeline, the question tagger's model with its parser kept
(``services.query.question.parsed``); a statement is parsed only when it has the question's verb.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from secondbrain.ports import SparseEncoder
from secondbrain.reading import Statement
from secondbrain.search_hits import SearchHit
from services.query import coverage
from services.query.question import _TIMES, Asked
from services.query.question import parsed as _parse

LEADING = 5  # the statements an answer may quote first (as the person swap weighs them)
# Verbs that say little of what someone did: auxiliaries, light verbs and what is said or felt (measured: reading
# "get", "go", "make" and "take" too gains nothing and refuses one more answerable question on LoCoMo).
LIGHT = frozenset({"be", "is", "are", "was", "were", "been", "do", "does", "did", "have", "has", "had", "think",
                    "say", "said", "tell", "told", "know", "let", "like", "want", "feel", "get", "gets", "got", "go",
                    "goes", "went", "make", "made", "take", "took"})
_SPEAKER = frozenset({"i", "we", "me", "us", "my", "our"})
_ADVICE = frozenset({"should", "could", "might", "can", "would", "may", "must", "ought", "'d"})


@dataclass(frozen=True, slots=True)
class Action:
    """What a question asks someone did: the term of its verb, whose doing it is (a name, casefolded), what it is
    done to, in or at, and the one of theirs who did it ("father" in "When did Deborah's father pass away?")."""

    verb: str
    doer: str
    slots: tuple[tuple[str, str], ...] = ()  # ("dobj", "graduation"), ("in", "Lisbon")
    kin: str = ""


class Said(Protocol):
    """A candidate statement of the answerer (``extractive._Candidate``)."""

    n: int  # its source's place among the sources
    st: Statement
    source: Any
    asks: bool  # a question itself
    speaker_bonus: bool  # about the person the question names


def asked_action(question: str, persons: tuple[str, ...], enc: SparseEncoder) -> Action | None:
    """The question's main verb and its doer, when the doer is (or belongs to) the one person it names."""
    if len(persons) != 1:
        return None
    for t in _parse(question):
        if t.pos_ != "VERB" or t.lower_ in LIGHT:
            continue
        subject = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is None or _owner(subject).casefold() != persons[0].casefold():
            continue
        terms = enc.tokenize(t.text)
        if terms:
            kin = str(subject.text) if subject.pos_ == "NOUN" else ""
            return Action(terms[0], persons[0].casefold(), _slots(t), kin)
    return None


def done_by_other(asked: Asked, ranked: Sequence[Said], everything: Sequence[Said], enc: SparseEncoder) -> bool:
    """Whether the first leading statement that says who did what the question asks says someone other than the
    person asked about did it (see the module doc)."""
    action = _action(asked, enc)
    if action is None:
        return False
    at = {(c.n, c.st.index): c for c in everything}
    for c in [c for c in ranked if not c.asks][:LEADING]:
        speaker = (c.st.speaker or "").casefold()
        if not speaker:
            continue
        others = [s.casefold() for s in _speakers(c.source) if s.casefold() != speaker]
        addressee = others[0] if len(others) == 1 else "?"
        doers = _doers(_parse(_spoken(c.st)), action, speaker, addressee, enc) if _has(c.st, action, enc) else []
        if speaker == action.doer and c.speaker_bonus and action.doer not in doers:
            return False  # their own words of themselves lead: it is theirs, in whatever words
        before = at.get((c.n, c.st.index - 1))
        if not doers and before is not None and before.asks and before.st.speaker \
                and before.st.speaker.casefold() != speaker and _has(before.st, action, enc):
            # "Yes, at the lido" after "Do you still swim in the mornings?": the question asked of its speaker
            of = _asked_of(_parse(_spoken(before.st)), action, enc)
            doers = [speaker] if of == "you" else [before.st.speaker.casefold()] if of == "i" else []
        if action.doer in doers:
            return False
        if any(d != "?" for d in doers):
            return True
    return False


def changed_detail(asked: Asked, ranked: Sequence[Said], enc: SparseEncoder) -> str:
    """The question's word for what the asked doing is done to, in or at, when a leading statement of the asked
    person doing it names another thing of the same kind there and no leading statement names the question's (see
    the module doc); "" otherwise."""
    action = _action(asked, enc)
    if action is None:
        return ""
    slots = [(k, w) for k, w in action.slots if w in asked.things and w.casefold() not in coverage.KIND_WORDS
             and w.casefold() not in _TIMES]
    leading = [c for c in ranked if not c.asks][:LEADING]
    near = frozenset().union(*(coverage.words(c.st.text) for c in leading))
    for c in leading:
        if not slots or (c.st.speaker or "").casefold() != action.doer or not _has(c.st, action, enc):
            continue
        for t in _parse(_spoken(c.st)):
            if t.pos_ not in ("VERB", "AUX") or enc.tokenize(t.text)[:1] != [action.verb]:
                continue
            theirs: dict[str, list[str]] = {}
            for k, w in _slots(t):
                theirs.setdefault(k, []).append(w)
            for slot, word in slots:
                if any(_alike(word, o) for o in theirs.get(slot, [])) and not coverage.covers(word, near) \
                        and not any(coverage.covers(word, coverage.words(o)) for o in theirs[slot]):
                    return word
    return ""


def _action(asked: Asked, enc: SparseEncoder) -> Action | None:
    if asked.gathers or asked.yes_no:
        return None  # a list, or a yes or no: weighed as they were
    return asked_action(asked.text, asked.persons, enc)


def _slots(verb: Any) -> tuple[tuple[str, str], ...]:
    """The things a verb is done to, in or at, by slot: its object, and the objects of its prepositions."""
    out: list[tuple[str, str]] = []
    # a preposition the parser hangs on the object ("organized a playdate with the neighbours' dogs") is the verb's
    for c in [*verb.children, *(p for o in verb.children if o.dep_ == "dobj" for p in o.children if p.dep_ == "prep")]:
        things = [c] if c.dep_ == "dobj" else [o for o in c.children if o.dep_ == "pobj"] if c.dep_ == "prep" else []
        out.extend(("dobj" if c.dep_ == "dobj" else c.lower_, str(o.text)) for o in things
                   if o.pos_ in ("NOUN", "PROPN"))
    return tuple(out)


def _owner(t: Any) -> str:
    """A subject as the person it is or belongs to ("Ivy's daughter": Ivy), as written; "" when neither."""
    if t.pos_ == "PROPN":
        return str(t.text)
    owner = next((c for c in t.children if c.dep_ == "poss"), None)
    return str(owner.text) if owner is not None else str(t.text) if t.pos_ == "PRON" else ""


def _doers(doc: Any, action: Action, speaker: str, addressee: str, enc: SparseEncoder) -> list[str]:
    """Who does the asked verb in a parsed statement: the people (casefolded names) its subjects stand for;
    "?" for a subject that is no one known, nothing for what is only advised or not done."""
    out: list[str] = []
    for t in doc:
        if t.pos_ not in ("VERB", "AUX") or enc.tokenize(t.text)[:1] != [action.verb]:
            continue
        head, subject = t, None
        while subject is None:  # "I flew to Berlin and gave my talk": "gave" is done by the "I" of "flew"
            subject = next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subject is not None or head.dep_ not in ("conj", "xcomp", "advcl") or head.head is head:
                break
            head = head.head
        if subject is None or any(c.lower_ in _ADVICE for c in head.children if c.dep_ == "aux") \
                or any(c.dep_ == "neg" for c in (*t.children, *head.children)):
            continue  # advised, or not done ("if you've never played it")
        owner = next((c for c in subject.children if c.dep_ == "poss"), subject)  # "my daughter": mine
        if action.kin and (owner is subject or not coverage.covers(action.kin, coverage.words(subject.text))):
            out.append("?")  # asked of their father: only a father's doing says whose it is
            continue
        who = owner.lower_
        out.append(speaker if who in _SPEAKER else addressee if who in ("you", "your") and speaker != action.doer
                   else who if owner.pos_ == "PROPN" else "?")  # their own "you" is often anyone's
    return out


def _asked_of(doc: Any, action: Action, enc: SparseEncoder) -> str:
    """Of whom a question asks the verb: "you", "i" (the asker, or "we") or ""."""
    for t in doc:
        if t.pos_ in ("VERB", "AUX") and enc.tokenize(t.text)[:1] == [action.verb]:
            subject = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subject is not None and subject.lower_ in ("you", "i", "we"):
                return "you" if subject.lower_ == "you" else "i"
    return ""


def _has(st: Statement, action: Action, enc: SparseEncoder) -> bool:
    """Whether a statement has the asked verb's term at all (only then is it parsed)."""
    return action.verb in enc.tokenize(st.text)


def _alike(asked: str, said: str) -> bool:
    """Whether two fillers of one slot are things of a kind a changed detail swaps: two names ("Lisbon", "Rome")
    or two things one can point at ("store", "shelter"), not acts or qualities put in other words."""
    if asked[:1].isupper():
        return said[:1].isupper()
    return said.islower() and coverage.concrete(asked) and coverage.concrete(said)


def _speakers(source: Any) -> frozenset[str]:
    hit = source if isinstance(source, SearchHit) else source.hit
    return frozenset(hit.speakers)


def _spoken(st: Statement) -> str:
    prefix = f"{st.speaker}:"
    return st.text[len(prefix):].lstrip() if st.speaker and st.text.startswith(prefix) else st.text
