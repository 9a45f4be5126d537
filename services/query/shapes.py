"""The shapes of the kinds of fact a question asks for (a date, an amount, a code, a name, a place...): a statement
holds the fact asked when its words have the shape, whatever the words of the question."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from secondbrain.temporal.mentions import MONTH_NAMES
from services.query.question import FactKind, parsed

DAYS = r"mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun"
# Capitalised words that are not names: weekdays and months, whole or short.
CALENDAR_WORDS = (r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun|January|"
                   r"February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|"
                   r"Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b")
# A person's title and the name after it ("Dr Shah") are no place.
_TITLE_WORDS = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof")
_TITLES = f"(?:{'|'.join(_TITLE_WORDS)})"
_AFTER_NO_TITLE = "".join(f"(?<!{t}{dot} )" for t in _TITLE_WORDS for dot in ("", r"\."))
PRICED = re.compile(r"^\D+\s\d{1,5}[.,]\d{2}$")  # a label and its price: a line of a receipt or a price list
# "What time ...?" asks for the time of day: a year, a month or "this week" does not say it.
CLOCK = re.compile(r"\b(?:\d{1,2}[:.h]\d{2}|\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)|noon|midday|midnight|morning|"
                   r"afternoon|evening|tonight|night|lunchtime|teatime|dawn|dusk|o['\u2019]clock)", re.I)
SHAPES: dict[FactKind, re.Pattern[str]] = {
    "when": re.compile(rf"\b(?:\d{{1,2}}[:.h]\d{{2}}|\d{{1,2}}\s?(?:am|pm|a\.m\.|p\.m\.)|(?:{MONTH_NAMES})\b|"
                       rf"(?:{DAYS})(?:day)?\b|\d{{1,4}}[/-]\d{{1,2}}(?:[/-]\d{{1,4}})?|\d{{1,2}}(?:st|nd|rd|th)\b|"
                       r"\b(?:19|20)\d{2}\b|today|tomorrow|tonight|yesterday|noon|midnight|morning|evening|"
                       r"afternoon|weekend|week|month|year|ago|since|until|next|last)", re.I),
    # "a long day" is a kind of day, not how long something took: after "a" only "full", "whole"... may come
    "duration": re.compile(r"\b(?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|few|several|half|"
                           r"couple of)\s+(?:\w+\s)?|an?\s+(?:(?:full|whole|entire|single|extra|few|couple of)\s)?)"
                           r"(?:seconds?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?|decades?)\b",
                           re.I),
    "amount": re.compile(r"[$€£¥₹]\s?\d|(?:\d[\d,.]*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
                         r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|a)"
                         r")\s?(?:€|\$|£|eur|euros?|usd|dollars?|gbp|pounds?|quid|bucks|chf|francs?|k\b|thousand|"
                         r"million)|\b(?:eur|usd|gbp|chf)\s?\d|" + PRICED.pattern, re.I),  # or a receipt's line
    "count": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                        r"forty|fifty|hundred|thousand|dozen|both|once|twice|several|a few|many)\b", re.I),
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "code": re.compile(r"\b(?=[\w-]*\d)[A-Za-z0-9][\w-]{2,}\b"),
    "person": re.compile(r"(?<!^)(?<![.!?]\s)\b(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+[A-Z]|\b[A-Z]\.\s(?:[A-Z]\.\s)*[A-Z][a-z]+|"
                         r"(?<!^)(?<![.!?:]\s)\b"
                         rf"(?!{CALENDAR_WORDS})"
                         r"[A-Z][a-z]+|^[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2}$"),  # or a name alone ("- Ana")
    "frequency": re.compile(r"\b(?:once|twice|thrice|\w+ times?|a (?:few|couple of) times)\s+(?:a|an|per|each|every)\s|"
                            r"\bevery (?:other |single )?(?:\w+ )?(?:day|night|morning|evening|week|weekend|month|year|"
                            r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b|\b(?:daily|nightly|weekly|monthly|yearly|"
                            r"annually|most days|on weekends)\b", re.I),
    "feeling": re.compile(r"\b(?:happy|glad|excit\w*|thrill\w*|proud|grateful|gratitude|thankful|reliev\w*|relief|"
                          r"nervous|anxious|anxiety|worr\w*|scared|afraid|sad|upset|angry|frustrat\w*|stress\w*|"
                          r"overwhelm\w*|calm\w*|peace\w*|joy\w*|awe|touched|moved|inspir\w*|hope\w*|comfort\w*|"
                          r"lonely|content|satisf\w*|surreal|free|alive|lucky|blessed|discourag\w*|determined|"
                          r"disappoint\w*|reward\w*|fulfill\w*|cozy|magical|electric|stoked|pumped|humbl\w*|"
                          r"amaz\w*|awesome|wonderful|fantastic|incredible|great|good|bad|terrible|love[ds]?|"
                          r"enjoy\w*|fun|nostalgi\w*|connected|motivat\w*|confiden\w*|energi[sz]ed)\b", re.I),
    # a place: a preposition of place before something that is not a time, a word for a place, or a name
    "place": re.compile(rf"(?i:\b(?:at|in|on|near|behind|under|inside|next to|mov\w*(?:\s+[\w']+){{0,3}}?\s+to)\s+"
                        rf"(?:the\s|my\s|our\s|a\s|"
                        rf"his\s|her\s|their\s|_\s)?(?!{CALENDAR_WORDS}|\d|noon|night|midnight|morning|evening|"
                        r"afternoon|time|the\s+(?:morning|evening|afternoon|weekend))[a-z]|\b(?:room|street|st\.|"
                        r"road|avenue|floor|building|drawer|shelf|box|office|cafe|restaurant|hotel|address)\b)|"
                        rf"(?<!^)\b(?!{CALENDAR_WORDS}|{_TITLES}\b){_AFTER_NO_TITLE}[A-Z][a-z]+"),
}


def holds(kind: FactKind, shape: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` holds a fact of ``kind`` (its ``shape``): a capitalised word naming a time, a holiday or a
    season ("starts after Easter", "over Christmas"), is no person's name and no place."""
    if kind not in ("person", "place"):
        return shape.search(text) is not None
    places = [m.span(1) for m in _PLACE_NAME.finditer(text) if kind == "person" and _built(m.group(2))]
    return any(not names_time(m.group()) and not any(a <= m.start() < b for a, b in places)
               and not (kind == "place" and _FOR_SOMEONE.search(text, 0, m.start())) for m in shape.finditer(text))


_FOR_SOMEONE = re.compile(r"\b(?:for|with)\s+$", re.I)  # "a bracelet for Ada", "lunch with Sam": a person


# A name after a preposition of place ending in a noun WordNet files as a built thing or a location ("on Mill Road",
# "at Victoria Station"): a place's name, not a person's.
_PLACE_NAME = re.compile(r"\b(?:on|in|at|near|along|off|by|to|from)\s+((?:[A-Z][a-z]+\s+)+([A-Z][a-z]+))\b")


@cache
def _built(word: str) -> bool:
    from secondbrain.language import wordnet

    return wordnet().lexname(word.casefold()) in (6, 15)  # noun.artifact, noun.location


@cache
def names_time(word: str) -> bool:
    """Whether a capitalised word is a holiday or a season as WordNet files it, its commonest sense no person
    ("Eve" is a name)."""
    from secondbrain.language import wordnet

    wn, low = wordnet(), word.casefold()
    return word.isalpha() and wn.lexname(low) not in (None, _NOUN_PERSON) and any(
        wn.is_kind_of(low, general, depth=6) for general in ("day", "season"))


_NOUN_PERSON = 18  # WordNet's lexicographer file noun.person
_AFTER_LABEL = re.compile(r":\s+([A-Z][a-z]{2,})\b")
_OPENING = re.compile(rf"(?!{CALENDAR_WORDS})[A-Z][a-z]{{2,}}\b")


def opens_with_name(statement: str, bare: str) -> bool:
    """Whether a statement opens with a name, which the "person" shape leaves out for the capital every sentence
    opens with: the tagger reads the first word as a name ("Kasia repaired the bike"), and WordNet knows it as no
    verb, adjective or adverb (the tagger reads a note's "Finished Piranesi." the same way). ``bare`` is the
    statement less the question's own words: a name the question gives is no answer to it."""
    from secondbrain.language import wordnet

    wn = wordnet()

    def a_name(token: Any) -> bool:
        return token.pos_ == "PROPN" and not any(wn.offsets(wn.base(token.lower_, p), p) for p in ("v", "a", "r"))

    m = _OPENING.match(bare)
    if m is not None and statement.startswith(m.group()):
        first = parsed(statement)[0]
        return first.text == m.group() and a_name(first)
    # or the value after a label's colon: a table's row ("13 Dec: Martin"), "Key worker: Gemma"
    label = _AFTER_LABEL.search(bare)
    return label is not None and any(t.text == label.group(1) and t.idx >= statement.find(": ") and a_name(t)
                                     for t in parsed(statement))


NEGATED = re.compile(r"\b(?:not|no|never|nothing|nobody|none|neither|nor|without)\b|n['\u2019]t\b", re.I)
TOTAL = re.compile(r"^\W*(?:grand\s+)?(?:total|amount\s+due|balance\s+due|to\s+pay|sum)\b", re.I)


def priced_total(statement: str) -> bool:
    """Whether a statement is a receipt's total ("TOTAL GBP 14.60"): what was spent or paid there, where no line
    names what the question asks about ("Fare GBP 12.40" is part of it)."""
    return bool(TOTAL.match(statement) and PRICED.match(statement))


def bought(text: str) -> frozenset[str]:
    """What a receipt (a source with a total line) speaks of without naming it: itself ("the Lidl receipt"), the
    buying and the shop ("the Tesco shop", "that purchase"): the words of WordNet's commonest sense of "shop",
    "shopping" and "purchase" ("receipt"'s is the act of receiving)."""
    return _buying() if any(priced_total(line.strip()) for line in text.splitlines()) else frozenset()


@cache
def _buying() -> frozenset[str]:
    from secondbrain.language import wordnet

    wn = wordnet()
    return frozenset({"receipt", *(w for word in ("shop", "shopping", "purchase")
                                   for w in wn.synset(wn.offsets(word, "n")[0], "n")[0])})


_DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY = rf"\b({DAYS})(?:day)?s?\b"
_DAY_RANGE = re.compile(rf"{_DAY}\s*(?:-|\u2013|to|through|thru|till|until)\s*{_DAY}", re.I)
_EVERY_DAY = re.compile(r"\b(?:daily|every ?day|7 days|seven days|all week|each day)\b", re.I)


def _day(name: str) -> int:
    return _DAY_NAMES.index(name[:3].casefold())  # "Tues", "Saturdays": 1, 5


def _days(text: str) -> set[int]:
    """The weekdays a text names, a range ("Mon-Fri") as each of its days, "daily" as all seven."""
    if _EVERY_DAY.search(text):
        return set(range(7))
    out: set[int] = set()
    for m in _DAY_RANGE.finditer(text):
        a, b = _day(m.group(1)), _day(m.group(2))
        out |= {(a + k) % 7 for k in range((b - a) % 7 + 1)}
    return out | {_day(m.group(1)) for m in re.finditer(_DAY, text, re.I)}


def day_not_there(question: str, texts: list[str]) -> str | None:
    """The weekday a question asks about ("close on Sunday") when the sources give other weekdays and none of them
    is it, nor a range or "daily" that holds it (opening hours "Mon-Fri", "Sat"): the sources' hours are another
    day's.  ``None`` when the question names no weekday, or the sources name none (hours for every day)."""
    asked = re.search(rf"(?:\bon\s+)?{_DAY}", question, re.I)
    # or the span of days it names ("the weekday opening time", "at the weekend")
    span = re.search(r"\b(?:(?:on|at)\s+)?(?:a\s+|the\s+)?week(day|end)s?\b", question, re.I)
    if asked is None and span is None:
        return None
    given = set().union(*(_days(t) for t in texts)) if texts else set()
    if asked is not None:
        return asked.group() if given and _day(asked.group(1)) not in given else None  # "on Sunday"
    assert span is not None
    if any(re.search(rf"\bweek{span.group(1)}", t, re.I) for t in texts):
        return None  # "on the weekends" said: no other days' hours
    wanted = set(range(5)) if span.group(1).lower() == "day" else {5, 6}
    return span.group() if given and not wanted & given else None

