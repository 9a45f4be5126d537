"""Whether a statement speaks of what a question asks about: every noun of the question that says what it is
about or narrows it ("hotel" and "Porto" in "the hotel in Porto", "back" in "the back door code"), as the same
word, another form of it ("tyres", "ran"), a true synonym ("bike" for "bicycle") or a kind of it ("jog" for
"run"), from WordNet (``secondbrain.language``).  Nearness in meaning never counts: "flights" is near "hotel"
and covers nothing of it.

The kind of fact a question wants is satisfied by its shape, not by a word: "money" and "cost" by "£20",
"when" by a date, "who" by a name; those words are not things a statement must name.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from secondbrain.language import wordnet
from secondbrain.sparse import Bm25Encoder

_ENC = Bm25Encoder()
# Words that name the kind of fact asked or nothing in particular: satisfied by the fact's shape, never required.
_KIND_TEXT = """
time times date dates day days year years month months week weeks hour hours minute minutes code codes
number numbers price prices cost costs amount amounts total money sum fee fees charge name names place places kind
kinds type types sort sorts thing things something anything stuff way ways lot part reason idea information detail
details fact facts one ones people person everyone anyone someone much many often how what which who whom where when
why i me my we us our you your he him his she her they them their it its address location phone tel telephone
mobile ref reference serial dosage dose entry admission deadline appointment appointments email e-mail
"""
KIND_WORDS = frozenset(_KIND_TEXT.split())
_WORD = re.compile(r"[\w'\u2019-]+")


def words(text: str) -> frozenset[str]:
    """A text's words, lower case, a hyphenated one also written together ("check-in": "checkin"), never as its
    parts ("check" alone is another thing)."""
    out: set[str] = set()
    for w in _WORD.findall(text.casefold()):
        w = re.sub(r"['\u2019]s$", "", w).strip("-'")
        out |= {w, w.replace("-", "")} if w else set()
    return frozenset(out)


@lru_cache(maxsize=65536)
def _forms(word: str) -> frozenset[str]:
    """The base forms of a word as a noun and as a verb ("tyres": "tyre"; "ran": "run"), and its stem; never a
    hyphenated word's parts ("check-in" is not a "check", so it covers no "checkout")."""
    wn = wordnet()
    return frozenset({word, wn.base(word, "n"), wn.base(word, "v"), *(_ENC.tokenize(word) if "-" not in word else ())})


@lru_cache(maxsize=65536)
def _also(word: str) -> frozenset[str]:
    """What ``word`` may also be called: the words of its commonest senses as a noun, and of the shop WordNet
    names after it ("chemist's" is a pharmacy)."""
    wn = wordnet()
    out: set[str] = set()
    for form in _forms(word):
        out |= wn.synonyms(form, "n") | (wn.synonyms(f"{form}'s", "n") if wn.offsets(f"{form}'s", "n") else set())
    return frozenset(w.strip(".") for w in out if "_" not in w)


@lru_cache(maxsize=65536)
def _root_verbs(word: str) -> frozenset[str]:
    """The verbs of the same root WordNet derives from a noun ("renewal": renew, so "renews on 2 April" speaks of the
    renewal; "delivery": deliver)."""
    return frozenset(v for form in _forms(word) for v in wordnet().derived(form, "n", "v"))


@lru_cache(maxsize=65536)
def _named_by(word: str) -> frozenset[str]:
    """The asked word, what it may also be called, and the first words of its names of several words ("tooth" for a
    dentist, a "tooth doctor"): what a note's adjective may be "of or relating to" ("dental": tooth)."""
    wn = wordnet()
    names = {w for form in _forms(word) for w in wn.synonyms(form, "n")}
    return frozenset({*_forms(word), *_also(word), *(n.split("_")[0] for n in names if "_" in n)})


def covers(asked: str, said: frozenset[str]) -> bool:
    """Whether a statement with the words ``said`` speaks of the question's word ``asked`` (see the module doc);
    a compound written as one word ("roadtrip" for "road trip") covers its parts."""
    asked = asked.casefold()
    if asked in said or asked.replace("-", "") in said:  # "Wi-Fi" is "wifi"
        return True
    if "-" in asked and _covers_parts(asked, said):
        return True  # "ice-cream" is "ice cream"; "Jet-washed the patio" did jet-wash it
    if (hours := _PARTS_OF_DAY.get(wordnet().base(asked, "n"))) and any(
            (h := _hour(w)) is not None and h in hours for w in said):
        return True  # "woke at 3am" was in the night
    mine = _forms(asked)
    also = _also(asked) | _root_verbs(asked)
    wn = wordnet()
    of = wn.pertains(asked)  # an asked adjective's noun ("electric" bill: the "Electricity bill")
    for w in said:
        theirs = _forms(w)
        if theirs & mine or theirs & also or theirs & of:
            return True
        if _compound(w, asked):
            return True  # "roadtrip": not a word of its own, made of the asked one
        if also & _root_verbs(w):
            return True  # the "DRY CLEANERS" did the dry cleaning: two nouns of one verb
        if len(w) > len(asked) and w.startswith(asked) and _short(asked):
            return True  # "physio" for "physiotherapy": a short form WordNet does not list
        if wn.pertains(w) & _named_by(asked):
            return True  # "dental" (of teeth) check-up for the dentist (a "tooth doctor"), "veterinary" for the vet
        # a two-letter word may be a kind too ("GP" is a doctor), but not a pronoun ("us" is a country)
        if any(wn.is_kind_of(t, m, "n", depth=6) for t in theirs for m in mine
               if t.isalpha() and (len(t) > 2 or (len(t) == 2 and t not in KIND_WORDS))):
            return True
    return False


def _covers_parts(asked: str, said: frozenset[str]) -> bool:
    """Whether ``said`` covers each part of a hyphenated word: written apart ("ice cream"), or hyphenated the same way
    with each part covered ("jet-washed" for "jet-wash")."""
    parts = asked.split("-")
    if all(covers(part, said) for part in parts if part):
        return True
    return any(w.count("-") == asked.count("-") and all(
        covers(part, frozenset({other})) for part, other in zip(parts, w.split("-"), strict=True) if part and other)
        for w in said)


def sibling(asked: str, said: frozenset[str]) -> str | None:
    """A word of ``said`` naming another thing of the asked one's kind ("dog" for "cat": both carnivores): a thing one
    can point at, with a kind in common two steps up WordNet's hierarchy, neither a kind of the other."""
    wn = wordnet()
    own = wn.base(asked.casefold(), "n")
    mine = _above(own)
    for w in sorted(said):
        base = wn.base(w, "n")
        if base != own and w.isalpha() and len(w) > 2 and concrete(base) \
                and _above(base) & mine and not covers(asked, frozenset({w})) and not covers(base, frozenset({asked})):
            return w
    return None


@lru_cache(maxsize=65536)
def _above(word: str) -> frozenset[int]:
    """The kinds a noun's commonest senses are, one and two steps up."""
    wn = wordnet()
    first = {up for o in wn.offsets(word, "n")[:1] for up in wn.synset(o, "n")[1]}
    return frozenset(first | {up for o in first for up in wn.synset(o, "n")[1]})


# The hours a part of the day holds, as a clock time written with "am" or "pm" says them.
_PARTS_OF_DAY = {"night": frozenset({*range(0, 5), 22, 23}), "morning": frozenset(range(5, 12)),
                 "afternoon": frozenset(range(12, 17)), "evening": frozenset(range(17, 22))}
_CLOCK = re.compile(r"(\d{1,2})(?:[.:]\d{2})?(am|pm)")


def _hour(word: str) -> int | None:
    """The hour of a clock time written as one word ("3am", "11pm", "7.30pm"), on the 24-hour clock."""
    m = _CLOCK.fullmatch(word)
    if m is None or not 1 <= int(m.group(1)) <= 12:
        return None
    return int(m.group(1)) % 12 + (12 if m.group(2) == "pm" else 0)


def headed(asked: str, said: frozenset[str]) -> bool:
    """Whether a word of ``said`` is a closed compound WordNet does not list that ends with the asked noun, its head
    ("parkrun" is a run: "How many runs"; not a park)."""
    heads = {asked.casefold(), wordnet().base(asked.casefold(), "n")}
    return any(_compound(w, h, head=True) for w in said for h in heads)


def _compound(word: str, part: str, *, head: bool = False) -> bool:
    """Whether ``word`` is a closed compound WordNet does not list, made of ``part`` (at its end, its head, with
    ``head``; at either end otherwise)."""
    wn = wordnet()
    return len(word) > len(part) + 2 and word.isalpha() and (
        word.endswith(part) or (not head and word.startswith(part))) and not wn.offsets(word, "n") \
        and not wn.offsets(word, "v")


def missing(asked: tuple[str, ...], said: frozenset[str]) -> tuple[str, ...]:
    """The question's words (``asked``) a statement with the words ``said`` does not speak of."""
    return tuple(w for w in asked if w.casefold() not in KIND_WORDS and not covers(w, said))


# WordNet's files of things one can point at: body, animal, artifact, food, location, object, person, plant,
# substance (noun.body is 8, noun.animal 5 ...), as opposed to acts, feelings, ideas and what is said.
_CONCRETE = frozenset({5, 6, 8, 13, 15, 17, 18, 20, 27})


def known(word: str) -> bool:
    """Whether WordNet knows the word, or it is a short form of one ("physio"); a misspelt word says nothing either
    way ("fesetival")."""
    return _listed(word) or _begins_noun(word)


POSSESSIVE = re.compile(r"['\u2019]s$")  # a word's possessive ending, with either apostrophe ("Surveyor's")


def known_parts(word: str) -> bool:
    """Whether a hyphenated word WordNet lacks is made of words it knows ("bake-off")."""
    return "-" in word.strip("-") and all(_listed(part) for part in word.split("-") if part)


def misspelt(word: str, said: frozenset[str]) -> bool:
    """Whether a word WordNet does not know may be a slip for one a source has: spelt nearly alike ("fesetival" for
    "festival"); a word no source spells like ("wellies" over "trainers") is a word WordNet lacks, not a slip."""
    low = word.casefold()
    if not low.replace("-", "").isalpha():
        return True  # a stray mark ("-" of "Co-op"), a code: no word to look up
    return any(abs(len(w) - len(low)) <= 2 and SequenceMatcher(None, low, w).ratio() >= _ALIKE for w in said)


_ALIKE = 0.75  # "fesetival"/"festival" 0.94, "reciept"/"receipt" 0.86; "wellies"/"trainers" 0.13


def _listed(word: str) -> bool:
    wn = wordnet()
    return any(wn.offsets(f, p) for f in _forms(word.casefold()) for p in ("n", "v", "a", "r"))


def _begins_noun(word: str) -> bool:
    return len(word) >= 4 and word.isalpha() and wordnet().begins(word.casefold(), "n")


def _short(word: str) -> bool:
    """Whether a word WordNet does not list begins one of its nouns ("physio": physiotherapy; "fesetival" none)."""
    return not _listed(word) and _begins_noun(word)


def concrete(word: str) -> bool:
    """Whether the commonest sense of a noun is a thing one can point at ("hotel", "puppy"), not an act, a
    feeling or what is said ("reaction", "suggestion"), which people put in other words."""
    return wordnet().lexname(word.casefold(), "n") in _CONCRETE


# A word shaped like an adjective or a participle ("a frustrating issue", "a shiny finish") says what the thing is
# like, not which thing it is; unless WordNet knows it only as a noun ("fantasy shows", "pottery class": a kind).
_DESCRIBES = re.compile(r"\w{3,}(?:ed|ful|ous|ive|able|ible|ic|ish|less|ly|y)$", re.I)


def describes(word: str) -> bool:
    """Whether a word before a noun says what the thing is like rather than which kind it is (see above)."""
    if not _DESCRIBES.search(word):
        return False
    wn, low = wordnet(), word.casefold()
    participle = wn.base(low, "v") != low and bool(wn.offsets(wn.base(low, "v"), "v"))  # "painted", "knitted"
    return participle or bool(wn.offsets(low, "a")) or not wn.offsets(wn.base(low, "n"), "n")


ORDINAL = re.compile(r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)|final|"
                     r"last)$", re.I)


def opposed(word: str, phrases: list[str], texts: list[str]) -> bool:
    """Whether a source names the thing a question's adjective picks out ("back" door, "late" checkout, "second"
    dose) with the adjective WordNet opposes to it, another ordinal, or another span it recurs by ("monthly" permit):
    "Front door code", "Early check-in", "First vaccine dose", "Annual parking permit".  Only the opposite counts: a
    "local organization" is no answer to a "prominent organization", nor its near miss."""
    wn = wordnet()
    against, every = wn.antonyms(word.casefold(), "a"), wn.period(word.casefold())
    for p in phrases:  # the question's phrases that ``word`` opens
        after = p.split()[1]
        for text in texts:
            for m in re.finditer(rf"\b([\w-]+)\s+{re.escape(after)}", text, re.I):
                said = m.group(1).casefold()
                if said in against or (ORDINAL.match(said) and ORDINAL.match(word) and said != word.casefold()
                                       and not wn.synonyms(said, "a") & wn.synonyms(word.casefold(), "a")) or (
                        every and (other := wn.period(said)) and not other & every):  # "Annual" for "monthly"
                    return True
    return False


_LEAST = re.compile(r"\bleast\s+([\w-]+)", re.I)


def least_not_there(question: str, texts: list[str]) -> str | None:
    """A question's "least favourite" when the sources say "favourite" and never "least": what they name is the
    most, the opposite of what was asked ("My favourite food is Thai curry" for "Kira's least favourite food")."""
    m = _LEAST.search(question)
    said = " ".join(texts)
    if m is None or re.search(r"\bleast\b", said, re.I) or not re.search(rf"\b{re.escape(m.group(1))}\b", said, re.I):
        return None
    return m.group()
