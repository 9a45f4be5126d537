"""Another one of the kind: whether a source names the thing a question narrows ("the back door code", "the gate
code for the garage", "caramel ice cream") narrowed otherwise ("Front door code", "codes for the garden", "coconut
milk ice cream"), which is a near miss, not an answer."""

from __future__ import annotations

import re

from secondbrain.sparse import Bm25Encoder
from services.query import coverage
from services.query.question import Asked, Phrase


def rival(narrower: Phrase, asked: frozenset[str], text: str) -> bool:
    """Whether ``text`` narrows the thing a prepositional phrase of the question narrows to something else:
    "codes for the garden" for "the gate code for the garage", "appointment for Mia" for "... for Leo"."""
    if any(narrowed_otherwise(t, asked, text) for t in narrower.governed | {narrower.governor}):
        return True
    enc = Bm25Encoder()
    if narrower.preposition == "'s":  # "Mia's swimming lesson" for "Leo's"
        for m in re.finditer(r"\b([A-Z][\w-]*)['\u2019]s\s+((?:[\w-]+\s+){0,2}[\w-]+)", text):
            if not narrower.modifiers & set(enc.tokenize(m.group(1))) and narrower.governor in enc.tokenize(m.group(2)):
                return True
        return False
    words = re.findall(r"[\w'-]+", text)
    for i, w in enumerate(words[:-2]):
        if enc.tokenize(w)[:1] != [narrower.governor] or words[i + 1].casefold() != narrower.preposition:
            continue
        rest = [x for x in words[i + 2:i + 5] if x.casefold() not in _DETERMINERS]
        if rest and not narrower.modifiers & set(enc.tokenize(" ".join(rest[:2]))):
            return True
    return False


# Words before a noun that say which or what state, not what kind ("the new number" is still the number).
_QUALITIES = frozenset({"new", "old", "current", "latest", "first", "second", "last", "next", "same", "other", "own",
                        "main", "usual", "actual", "correct", "right", "full", "whole", "previous", "former",
                        "the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "that", "its"})
# Of those, the words picking out one of several ("the main hall"): another one than the question's "small hall".
_PICKS = frozenset({"main", "other", "usual"})
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "his", "her", "their", "your", "this", "that", "its"})


def narrowed_otherwise(head: str, asked: frozenset[str], text: str, *, likeness: bool = False,
                       picked: bool = False) -> bool:
    """Whether ``text`` names the phrase's head narrowed by a word the question does not have ("gym locker
    code" for a "bike lock code"), rather than plainly ("the code"); with ``likeness``, by what it is like too
    ("grey sofa" for the "blue sofa", where the question's own word says what it is like); with ``picked`` (the
    question picks one out with a word of its own, "the small hall"), by a word picking out another ("Main hall"),
    and the head in other words too ("Window cleaner" for the "dry cleaning")."""
    enc = Bm25Encoder()
    qualities = _QUALITIES - _PICKS if picked else _QUALITIES
    for part in re.split(r"[\n.,;:!?()\[\]]", text):  # a word on the line before ("16.00\nTOTAL") narrows nothing
        words = re.findall(r"[\w'-]+", part)
        for i, w in enumerate(words[1:], 1):
            prev = coverage.POSSESSIVE.sub("", words[i - 1])  # "Young person's railcard": a kind of railcard too
            if not prev.replace("-", "").isalpha() or prev.casefold() in qualities:
                continue
            same = enc.tokenize(w)[:1] == [head] or (picked and coverage.covers(head, frozenset({w.casefold()})))
            if same and (coverage.known(prev) if likeness else not coverage.describes(prev)):
                # with likeness, a brand says nothing of what the thing is like ("Riverford" veg box: organic?)
                before = enc.tokenize(prev)
                if before and before[0] not in asked:
                    return True
    return False


def compound_otherwise(asked: Asked, word: str, texts: list[str]) -> bool:
    """Whether a source names the rest of the question's compound after ``word`` ("ice cream" of "caramel ice
    cream") narrowed by another noun ("coconut milk ice cream"): another kind of the same thing."""
    from services.query.question import _tagger

    enc = Bm25Encoder()
    for p in asked.phrases:
        written = p.words.split()
        if word not in written[:-1] or len(rest := written[written.index(word) + 1:]) < 2 or word == p.opening:
            continue  # one noun after it: see narrowed_otherwise
        pattern = re.compile(r"\b([\w'-]+)\s+" + r"\s+".join(map(re.escape, rest)) + r"\b", re.I)
        for text in texts:
            for m in pattern.finditer(text):
                w = m.group(1)
                if w.casefold() in _QUALITIES or not w.isalpha() or set(enc.tokenize(w)) & asked.terms:
                    continue
                tagged = _tagger()(text[max(0, m.start() - 80):m.end()])
                if any(tok.text == w and tok.pos_ in ("NOUN", "PROPN") for tok in tagged):
                    return True
    return False


_OLDER = re.compile(r"\b(old|previous|former|new)\s+([\w-]+)", re.I)
_OLD = frozenset({"old", "previous", "former"})


def older_not_there(question: str, texts: list[str]) -> str | None:
    """A question's "old router" when every source naming the router calls it the new one ("New router password"),
    or its "new laptop" when every one calls it the old one ("Warranty on the old laptop"): what they hold is the
    other one; the question's words ("old router") when so."""
    m = _OLDER.search(question)
    if m is None:
        return None
    thing, other = re.escape(m.group(2)), {"new"} if m.group(1).casefold() in _OLD else _OLD
    named = [n for text in texts for n in re.finditer(rf"(?:\b([\w-]+)\s+)?\b{thing}\b", text, re.I)]
    return m.group() if named and all((n.group(1) or "").casefold() in other for n in named) else None
