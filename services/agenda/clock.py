"""Clock times and time zones as people write them in notes, chats and transcripts (pure, no I/O).

The temporal parser reads days, weeks and months and leaves clock times alone; an agenda needs them:
"at 09:40", "7.25pm", "3 pm", "15h30", "noon", "half past nine", "ten o'clock", "6-8pm", "from 10:00 to
11:30".  A time can say its zone: "10:00 Tokyo time", "3pm ET", "14:00 (UTC+2)", "11:05 local time" after a
city; a passage can say it for all its times ("All times are New York time").  Amounts, scores, versions
and durations are not clock times ("3.50 euros", "won 3-1", "v2.10", "a 4h drive").
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo


@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day written in a statement: ``hour:minute`` (24 h), perhaps an end, perhaps a zone."""

    hour: int
    minute: int
    span: tuple[int, int]  # where it is written
    end: tuple[int, int] | None = None  # (hour, minute) of "6-8pm", "from 10:00 to 11:30"
    zone: tzinfo | None = None  # the zone it says it is in
    zone_words: str = ""  # "Tokyo time", "ET": as written

    @property
    def minutes(self) -> int:
        return self.hour * 60 + self.minute


# Zone abbreviations people write beside a time; the ambiguous ones (CST, IST) read the usual way.
_ABBREVIATIONS = {
    "UTC": "UTC", "GMT": "UTC", "Z": "UTC", "BST": "Europe/London", "WET": "Europe/Lisbon", "WEST": "Europe/Lisbon",
    "CET": "Europe/Brussels", "CEST": "Europe/Brussels", "EET": "Europe/Athens", "EEST": "Europe/Athens",
    "MSK": "Europe/Moscow", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "KST": "Asia/Seoul",
    "HKT": "Asia/Hong_Kong", "SGT": "Asia/Singapore", "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
    "ACST": "Australia/Adelaide", "AWST": "Australia/Perth", "NZST": "Pacific/Auckland", "NZDT": "Pacific/Auckland",
    "ET": "America/New_York", "EST": "America/New_York", "EDT": "America/New_York",
    "CT": "America/Chicago", "CDT": "America/Chicago", "CST": "America/Chicago",
    "MT": "America/Denver", "MST": "America/Denver", "MDT": "America/Denver",
    "PT": "America/Los_Angeles", "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
    "AKST": "America/Anchorage", "HST": "Pacific/Honolulu", "BRT": "America/Sao_Paulo",
}
# Cities people name that the zone database files under another city.
_CITY_ALIASES = {
    "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles", "boston": "America/New_York",
    "washington": "America/New_York", "miami": "America/New_York", "atlanta": "America/New_York",
    "dallas": "America/Chicago", "houston": "America/Chicago", "montreal": "America/Toronto",
    "beijing": "Asia/Shanghai", "mumbai": "Asia/Kolkata", "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata", "bengaluru": "Asia/Kolkata", "osaka": "Asia/Tokyo", "kyoto": "Asia/Tokyo",
    "munich": "Europe/Berlin", "frankfurt": "Europe/Berlin", "hamburg": "Europe/Berlin", "barcelona": "Europe/Madrid",
    "milan": "Europe/Rome", "florence": "Europe/Rome", "venice": "Europe/Rome", "geneva": "Europe/Zurich",
    "edinburgh": "Europe/London", "manchester": "Europe/London", "glasgow": "Europe/London",
    "porto": "Europe/Lisbon", "lyon": "Europe/Paris", "nice": "Europe/Paris", "marseille": "Europe/Paris",
    "krakow": "Europe/Warsaw", "cracow": "Europe/Warsaw", "st petersburg": "Europe/Moscow",
    "cape town": "Africa/Johannesburg", "rio": "America/Sao_Paulo", "rio de janeiro": "America/Sao_Paulo",
    "hawaii": "Pacific/Honolulu", "california": "America/Los_Angeles", "new york city": "America/New_York",
    "nyc": "America/New_York", "la": "America/Los_Angeles", "uk": "Europe/London", "japan": "Asia/Tokyo",
}


@cache
def _cities() -> dict[str, str]:
    """Lower-cased city name -> IANA zone, from the zone database's own names plus a few aliases."""
    out: dict[str, str] = {}
    for name in zoneinfo.available_timezones():
        parts = name.split("/")
        if len(parts) < 2 or parts[0] in ("Etc", "SystemV", "US", "Canada", "Mexico", "Brazil", "Chile"):
            continue
        out.setdefault(parts[-1].replace("_", " ").lower(), name)
    out.update(_CITY_ALIASES)
    return out


@cache
def _city_pattern() -> re.Pattern[str]:
    names = sorted(_cities(), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b", re.I)


_ABBR = "|".join(sorted((re.escape(a) for a in _ABBREVIATIONS if a != "Z"), key=len, reverse=True))
_OFFSET = r"(?:UTC|GMT)\s?([+\u2212-])\s?(\d{1,2})(?::?(\d{2}))?"
# What may follow a time to say its zone.
_ZONE_AFTER = re.compile(
    rf"^\s*\(?\s*(?:(?P<offset>{_OFFSET})|(?P<abbr>{_ABBR})\b|(?P<city>[A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*){{0,2}})\s+time\b|"
    r"(?P<local>local\s+time)\b|(?P<iana>(?<=\()[A-Z][A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)(?=\)))\)?")
_ALL_TIMES = re.compile(
    rf"\b(?i:all\s+times?\s+(?:are\s+)?(?:in\s+)?|times?\s+(?:are\s+)?(?:given\s+)?in\s+|time\s*zone\s*[:=]\s*)"
    rf"(?:(?P<offset>{_OFFSET})|(?P<abbr>{_ABBR})\b|(?P<iana>[A-Z][a-z]+/[A-Za-z_]+)|"
    r"(?P<city>[A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*){0,2})(?:\s+time)?)")

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_HOUR_WORD = "|".join(_NUMBER_WORDS)
_MERIDIEM = r"(?P<mer>[ap]\.?\s?m\.?|o['\u2019]clock|ish|in\s+the\s+(?:morning|afternoon|evening)|at\s+night|tonight)"
_END_MERIDIEM = r"(?P<emer>[ap]\.?\s?m\.?\b)"
_CLOCK = re.compile(
    r"(?<![\w.,:/\u00a3$\u20ac+-])"
    r"(?:(?P<from>from|between)\s+)?"
    rf"(?:(?P<h>[01]?\d|2[0-3])(?:(?P<sep>[:.h])(?P<m>[0-5]\d))?|(?P<hw>{_HOUR_WORD})(?:\s(?P<mw>thirty|fifteen|"
    r"forty-five|o-?five))?|(?P<noon>noon|midday|midnight)|(?P<half>half|quarter)\s+(?P<rel>past|to|after)\s+"
    rf"(?P<hr>[01]?\d|2[0-3]|{_HOUR_WORD}))"
    rf"(?:\s?{_MERIDIEM})?"
    rf"(?:\s?(?:-|\u2013|to|until|till|and)\s?(?P<eh>[01]?\d|2[0-3])(?:[:.](?P<em>[0-5]\d))?(?:\s?{_END_MERIDIEM})?)?"
    r"(?![\w\u00a3$\u20ac%]|[.,:]\d)", re.I)
# A bare hour is a time only after a word that introduces one ("at 7", "from 10"), or with am/pm.
_INTRO = re.compile(r"(?:\b(?:make\s+it|say|at|from|by|until|till|before|after|around|about|between|starts?|begins?|"
                    r"ends?|opens?|closes?|departs?|leaves?|lands?|arrives?)|\u2013|\u2014|-|@)\s*$", re.I)
_DURATION_BEFORE = re.compile(r"\b(?:in|time\s+of|took|lasted|record\s+of)\s*$", re.I)
_EARLY = re.compile(r"\b(?:flights?|fly|flying|departs?|departure|trains?|ferry|coach|bus|taxi|cab|airport|"
                    r"alarm|wake|sunrise|dawn|early|a\.?m\.?)\b", re.I)
_EVENING = re.compile(r"\b(?:dinner|supper|evening|tonight|party|drinks|concert|gig|show|theatre|theater|club|quiz|"
                      r"movie|cinema|pub|bar|night)\b", re.I)


def clocks(text: str, context: str = "") -> list[Clock]:
    """The times of day written in ``text``, in order (see the module doc); ``context`` is what was said
    just before (a dinner proposed in the turn before makes "Saturday at 7.30" an evening)."""
    out: list[Clock] = []
    for m in _CLOCK.finditer(text):
        clock = _read(m, text, context)
        if clock is not None:
            out.append(clock)
    return out


def _read(m: re.Match[str], text: str, context: str) -> Clock | None:
    before = text[:m.start()]
    if _DURATION_BEFORE.search(before):
        return None  # "ran it in 1:52", "a time of 3:05": a duration
    introduced = bool(_INTRO.search(before)) or bool(m.group("from"))
    mer = (m.group("mer") or "").lower().replace(".", "").replace(" ", "")
    emer = (m.group("emer") or "").lower().replace(".", "").replace(" ", "")
    if m.group("noon"):
        hour, minute = (0, 0) if m.group("noon").lower() == "midnight" else (12, 0)
    elif m.group("half"):
        base = _hour(m.group("hr"))
        if base is None:
            return None
        hour, minute = (base, 30 if m.group("half").lower() == "half" else 15)
        if m.group("rel").lower() == "to":
            hour, minute = (base - 1) % 24, 45
            if m.group("half").lower() == "half":
                return None  # "half to" is not English
    elif m.group("hw"):
        hour = _NUMBER_WORDS[m.group("hw").lower()]
        minute = {"thirty": 30, "fifteen": 15, "forty-five": 45, "o-five": 5, "ofive": 5}.get(
            (m.group("mw") or "").lower(), 0)
        if not (mer or introduced):
            return None  # "one of them", "two people": a number, not a time
    else:
        hour = int(m.group("h"))
        minute = int(m.group("m") or 0)
        sep = m.group("sep")
        ranged = bool(m.group("eh")) and int(m.group("eh")) > hour and bool(
            re.match(r"\s?(?:to|until|till)\s", text[m.end("h"):]))
        if sep is None and not (mer or emer or introduced or ranged):
            return None  # a bare number: "3 people", "won 3-1" ("10 till 12" is a time)
        if sep == "." and not (mer or introduced):
            return None  # "3.50": an amount unless something says it is a time
    evening = mer in ("intheafternoon", "intheevening", "atnight", "tonight")
    if mer.startswith("pm") or mer == "p" or evening:
        hour = hour % 12 + 12
    elif mer.startswith("am") or mer == "a" or mer == "inthemorning":
        hour = hour % 12
    elif emer.startswith("p") and hour < 12:
        end_h = int(m.group("eh") or 0)
        if hour % 12 <= end_h % 12 or end_h == 12:
            hour = hour % 12 + 12  # "6-8pm": both in the evening
    elif not m.group("noon") and 1 <= hour <= 11 and not (m.group("h") or "").startswith("0"):
        # "at 7", "half past three", "dinner at 7.30": in the evening for dinner and the like, in the
        # afternoon up to 6 when no minutes are written, else as written ("09:40", "9:30")
        if _EVENING.search(text) or _EVENING.search(context) or (m.group("sep") is None and hour <= 6):
            hour += 12
        elif hour <= 5 and not _EARLY.search(text):
            hour += 12  # "pick her up at 3:15": few things but journeys start between 1 and 6 in the morning
    end = None
    if m.group("eh"):
        eh, em = int(m.group("eh")), int(m.group("em") or 0)
        if emer.startswith("p") or (mer.startswith("p") and not emer and eh < 12):
            eh = eh % 12 + 12
        elif emer.startswith("a"):
            eh = eh % 12
        elif eh < hour % 24 and eh + 12 > hour:
            eh += 12  # "2-4" after 14:00: the afternoon
        if eh * 60 + em > hour * 60 + minute:
            end = (eh, em)
    if hour > 23 or minute > 59:
        return None
    zone, words, zone_end = zone_after(text, m.end())
    return Clock(hour, minute, (m.start(), max(m.end(), zone_end)), end, zone, words)


def _hour(word: str | None) -> int | None:
    if word is None:
        return None
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word.lower())


def zone_after(text: str, at: int) -> tuple[tzinfo | None, str, int]:
    """The zone written right after a time at ``at`` ("Tokyo time", "ET", "(UTC+2)"), if any; "local time"
    is the zone of the last city named before it.  Returns the zone, its words and where they end."""
    m = _ZONE_AFTER.match(text[at:at + 40])
    if not m:
        return None, "", at
    words = m.group(0).strip(" ()")
    end = at + m.end()
    if m.group("offset"):
        return _offset(m), words, end
    if m.group("abbr"):
        return ZoneInfo(_ABBREVIATIONS[m.group("abbr").upper()]), words, end
    if m.group("iana"):  # "09:00-09:30 (America/New_York)", as calendar records write it
        try:
            return ZoneInfo(m.group("iana")), words, end
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None, "", at
    if m.group("city"):
        found = city_zone(m.group("city"))
        return (found, words, end) if found is not None else (None, "", at)
    cities = list(_city_pattern().finditer(text[:at]))
    if cities:
        found = city_zone(cities[-1].group(1))
        if found is not None:
            return found, f"{cities[-1].group(1)} {words}", end
    return None, "", at


def city_zone(name: str) -> ZoneInfo | None:
    """The zone of a city people name ("New York", "Tokyo", "San Francisco"), if it is known."""
    key = " ".join(name.lower().split())
    found = _cities().get(key)
    return ZoneInfo(found) if found else None


def passage_zone(text: str) -> tzinfo | None:
    """A zone a passage states for all its times: "All times are Tokyo time", "Time zone: Europe/Paris"."""
    m = _ALL_TIMES.search(text)
    if not m:
        return None
    if m.group("offset"):
        return _offset(m)
    if m.group("abbr"):
        return ZoneInfo(_ABBREVIATIONS[m.group("abbr").upper()])
    if m.group("iana"):
        try:
            return ZoneInfo(m.group("iana"))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None
    return city_zone(m.group("city")) if m.group("city") else None


def _offset(m: re.Match[str]) -> tzinfo | None:
    found = re.search(r"([+\u2212-])\s?(\d{1,2})(?::?(\d{2}))?", m.group(0))
    if not found:
        return None
    delta = timedelta(hours=int(found.group(2)), minutes=int(found.group(3) or 0))
    if delta > timedelta(hours=14):
        return None
    return timezone(-delta if found.group(1) in ("-", "\u2212") else delta)
