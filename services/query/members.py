"""Which of a list's statements say the asked thing was done, read from a dependency parse.

"Which films did I watch this month?" lists what was watched: "Watched Aftersun" belongs, "Want to watch Past
Lives" does not, nor "Couldn't visit Joe", "Will attend the Bjork concert" or "Never finished the pottery
course".  What the grammar says decides, not word
lists: the asked verb is not done when it is denied (a negation), only possible or still to come (a modal: will,
would, could, should), or only the aim of another verb (an infinitive: wanted, hoped, meant, needed, forgot to).
A statement that does not name the verb stays in the list ("Coffee with Lena" for "Which friends did I meet?"),
unless it opens with another verb in the past that shares no sense with it ("Started Middlemarch" for "Which
books did I finish?"; "Saw Aftersun" for "watch" stays) or every verb of it is denied or only aimed at ("Boston
marathon: didn't qualify"): the grammar cannot tell the rest from one that says it was not done in other words
("the Albertina was closed").

Only a question about what was done has members (its verb in the past: "did I watch", "came", "have I read"), and
only a verb that says something (not "do", "go", "get": the question tagger's light verbs; "make" says what was made
when a statement names it, "Must make apricot jam"; for "make" and "do", a statement in other words says it by its
own verbs, "Hiked Ben Nevis" but not "Would like to hike the Cuillin").  The small English
pipeline tags a note's subjectless opening verb as a name ("Finished Piranesi.") and has no lemmas, so a verb is
found by the form WordNet lists it under ("tried" is "try", "met" is "meet"), not by its part of speech.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from secondbrain.language import wordnet
from secondbrain.reading import Statement
from services.query.question import parsed
from services.query.roles import LIGHT


class _Stated(Protocol):
    n: int  # its source
    st: Statement
    fact: bool  # holds the kind of fact asked


class _Labelled(Protocol):
    @property
    def label(self) -> str: ...


C = TypeVar("C", bound=_Stated)
Q = TypeVar("Q", bound=_Labelled)
# Light verbs that still ask what was done to a list's items: a statement naming them says it ("Made plum jam", "Must
# make apricot jam"), and one in other words by its own verbs ("Hiked Ben Nevis", "Would like to hike the Cuillin").
_MAKING = frozenset({"make", "do"})
_HELD = {"amount", "place"}  # kinds of fact that say what was paid, or where a thing went, in any words
_LABEL = re.compile(r"^[^:.!?\n]{1,40}:\s*")  # a note's opening topic ("Festival:", "Scotland:")


def split(question: str, gathered: list[C], facts: Sequence[str] = ()) -> tuple[list[C], list[C]]:
    """The statements of a list (each of its own source) that say the question's verb was done, and the rest (shown
    apart, after them); all of them as members when the question asks no such verb, or none or all of them say it,
    or two are of one source (a statement and the words around it).  Asked an amount or a place (``facts``), a
    statement with one that does not name the verb says it in other words ("Filled up with petrol, £62" for "did I
    spend", "Moved the passports to the safe" for "did I put")."""
    if len(gathered) < 2 or len({c.n for c in gathered}) < len(gathered) or (verb := _asked_verb(question)) is None:
        return gathered, []
    held = not _HELD.isdisjoint(facts)
    done = [_done(c.st.text, verb, held and c.fact) for c in gathered]
    if all(done) or not any(done):
        return gathered, []
    return [c for c, d in zip(gathered, done, strict=True) if d], [c for c, d in zip(gathered, done, strict=True)
                                                                   if not d]


def _asked_verb(question: str) -> str | None:
    """The question's verb (as WordNet lists it) when it asks what was done ("did I watch", "came", "have I read")."""
    # a rare verb after "did" may be tagged otherwise ("did I repot": an adjective); its auxiliary and WordNet say.
    # "do" and "make" ask what was done, unless only aimed at ("did they plan to do", the parser's "plan" a noun)
    verbs = [t for t in parsed(question) if (t.lower_ not in LIGHT or (t.lower_ in _MAKING and not any(
        c.tag_ == "TO" for c in t.children))) and (t.pos_ == "VERB" or (
        any(c.dep_ == "aux" and c.lower_ == "did" for c in t.children) and wordnet().offsets(_base(t.text), "v")))]
    # the one the sentence hangs on: "Which plays did we see?" tags "plays" a verb too, and may hang "did" on it
    verbs = [t for t in verbs if t.i == 0 or t.doc[t.i - 1].lower_ not in ("which", "what")] or verbs
    t = next((t for t in verbs if t.dep_ == "ROOT" or any(c.dep_ == "aux" for c in t.children)), None)
    if t is None or not (t.tag_ in ("VBD", "VBN") or any(c.dep_ == "aux" and c.tag_ == "VBD" for c in t.children)
                         or (any(u.lower_ == "did" for u in t.doc[:t.i])  # "did" hung on the misread "plays"
                             and not any(c.tag_ == "TO" for c in t.children))):  # not "did I want to visit"
        return None
    return _base(t.text)


def _done(text: str, verb: str, held: bool = False) -> bool:
    """Whether the statement may say ``verb`` was done: it does not name the verb ("Coffee with Lena" for "did I
    meet"), or one of its tokens of that verb is neither denied, nor only possible or to come, nor only aimed at."""
    words = re.findall(r"[A-Za-z]+", text)
    if not any(_base(w) == verb for w in words):
        if verb in _MAKING and not held:  # "did I do" says nothing: the statement's own verbs say whether it was
            # the doing is the verb at the end of a chain: "need to clear the gutters" is only aimed at
            verbs = [t for t in parsed(text) if t.pos_ == "VERB" and not any(c.dep_ == "xcomp" and any(
                a.tag_ == "TO" for a in c.children) for c in t.children)]
            return not verbs or any(not _unreal(t) for t in verbs)
        if held:
            return True
        verbs = [t for t in parsed(text) if t.pos_ in ("VERB", "AUX") and t.dep_ not in ("aux", "auxpass")
                 and not _mostly_noun(t.lower_)]  # "The cats jigsaw is ...": the tagger's verb is the thing
        if verbs and all(_unreal(t) for t in verbs):
            return False  # every verb of it denied or only aimed at: "Boston marathon: didn't qualify"
        opening = re.findall(r"[A-Za-z]+", _LABEL.sub("", text))  # "Festival: missed Blur" opens with "missed"
        return not (opening and _other_doing(opening[0], verb))
    return any(_base(t.text) == verb and not _unreal(t) for t in parsed(text))


def _other_doing(word: str, verb: str) -> bool:
    """Whether a statement's opening word is another verb in the past ("Started Middlemarch" for "did I finish"):
    not a light one, and sharing none of its commonest senses' words with the asked verb ("Saw" for "watch" does)."""
    low, base = word.casefold(), _base(word)
    past = low.endswith("ed") or (base != low and not low.endswith(("s", "ing")))  # "saw"; not "books", "hiking"
    wn = wordnet()
    return past and base not in LIGHT and verb not in _MAKING and bool(wn.offsets(base, "v")) and not (
        wn.synonyms(base, "v") & wn.synonyms(verb, "v"))


def _mostly_noun(word: str) -> bool:
    """Whether WordNet makes a word a noun more often than a verb, by its tagged counts, then by its senses ("jigsaw";
    not "done", "qualify", "call")."""
    wn = wordnet()
    noun, verb = wn.base(word, "n"), wn.base(word, "v")
    return (wn.tagged(noun, "n"), len(wn.offsets(noun, "n"))) > (wn.tagged(verb, "v"), len(wn.offsets(verb, "v")))


def _base(word: str) -> str:
    return wordnet().base(word, "v")


def _unreal(t: Any) -> bool:
    if any(c.dep_ == "aux" and c.tag_ == "TO" for c in t.children):
        return True  # "want to watch", "meant to cook", "was going to meet" (not "finished reading")
    if t.dep_ == "pcomp" and t.head.lower_ == "without":
        return True  # "Drove past Hereford without stopping"
    # denied, only possible or to come, or only half done ("The cats jigsaw is still half done")
    return any(c.dep_ == "neg" or (c.dep_ == "aux" and c.tag_ == "MD") or c.lower_ == "half" for c in t.children)


def shown_apart(quotes: list[Q]) -> list[Q]:
    """The quotes of the statements apart, the first labelled "Also mentioned"."""
    if not quotes:
        return quotes
    first = quotes[0]
    label = f"Also mentioned: {first.label}" if first.label else "Also mentioned"
    return [replace(first, label=label), *quotes[1:]]  # type: ignore[type-var]  # Q is the answerer's Quote dataclass
