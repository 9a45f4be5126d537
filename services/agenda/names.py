"""The name of an agenda item, as a calendar shows it: "Dentist, Dr. Osei", "Car service at Kwik Fit",
"Flight BA117", "Design review" (pure, no I/O).

A statement names its event before it says when: what stands before its verb or its time, without the words
that only introduce it ("Don't forget:", "Reminder:", "My", "Your") and without the time words.  "X appointment
with Y" is "X, Y".  A line that only gives the time ("When: Thursday 10 December 2026, 10:00-11:00", "Date:
08/12/2026") is named by the heading it sits under (a calendar event's title, a letter's subject).
"""

from __future__ import annotations

import re

MAX_WORDS = 7
MAX_CHARS = 60

_LEAD = re.compile(
    r"^(?:(?:voice\s+(?:memo|note)|memo|note\s+to\s+self|note\s+that|note|reminder|remind\s+me\s+to|"
    r"remember\s+to|remember|fyi|ps|update|okay|ok|so|um|uh|quick\s+heads\s+up|heads\s+up|one\s+more\s+thing|"
    r"don['\u2019]t\s+forget(?:\s+to)?|please\s+note|could|can|shall|would|will|are\s+you|do\s+you|fancy|"
    r"how\s+about|what\s+about)(?:[\s,.:;!-]+|$))+", re.I)
_OWNER = re.compile(r"^(?:my|your|our|the|a|an|this|that)\s+", re.I)
# Where the name of the event ends: a verb, or the words that start saying when.
_VERB = re.compile(
    r"\s(?:is|are|was|were|will|would|has|have|had|'s|gets?|got|goes|went|moved|moves|moving|rescheduled|postponed|"
    r"pushed|booked|confirmed|set|starts?|starting|begins?|ends?|departs?|leaves?|lands?|arrives?|expires?|renews?|"
    r"closes?|opens?|needs?|takes?|comes?|coming|meets?|falls?|happens?|due|on|until|till|between|"
    r"tomorrow|today|tonight|next|this|every|each|in\s+(?:\d|a\b|an\b|one|two|three|four|five|six|ten))\b", re.I)
# "Anna moved my physio to Tuesday": the event is what is moved.
_MOVED = re.compile(r"^(?:[A-Z][a-z]+|they|we|I|he|she|you)\s+(?:has\s+|have\s+|had\s+)?(?:moved|rescheduled|"
                    r"pushed(?:\s+back)?|postponed|brought\s+forward|changed)\s+(?:(?:my|our|your|the|his|her|their)\s+)?"
                    r"(?P<what>\w.*?)\s+(?:to|from|until|till|for)\b")
_DETAIL = re.compile(r"^(?:when|date|time|day|dep(?:arture)?|departs|arr(?:ival)?|appointment|slot|doors|start|"
                     r"starts)\b\s*[:\-]?", re.I)
_INVITE = re.compile(r"^(?:(?:(?:updated\s+)?invitation|invite|accepted|declined|tentative|cancel+ed\s+event|"
                     r"cancel+ed|updated|new\s+event|event|re|fwd?|aw|wg|sv)\s*:\s*)+", re.I)
_ZONE = re.compile(r"\((?:[A-Z][A-Za-z_]+/[A-Za-z_/]+|UTC|GMT|BST|CET|CEST|[A-Z]{2,4}T)\)")
_AT_WHEN = re.compile(r"\s+@\s+.*$")
_APPOINTMENT_WITH = re.compile(r"^(?P<what>[\w'-]+(?:\s+[\w'-]+)?)\s+appointment\s+with\s+(?P<who>.+)$", re.I)
_TRAILING = re.compile(r"[\s,.;:!?(\u2013\u2014-]+$|\s+(?:with|at|for|of|and|to|the|a|on|in|by|re)$", re.I)
_WORD = re.compile(r"[A-Za-z][\w'\u2019.&-]*")


def name(statement: str, words_of_time: list[str], headings: tuple[str, ...] = ()) -> str:
    """The name of the item ``statement`` says, without ``words_of_time`` (its time expressions as written)."""
    text = _LEAD.sub("", statement.strip())
    detail = bool(_DETAIL.match(text))
    if not detail and ":" in text[:30] and _speaker_prefix(text):
        text = text.split(":", 1)[1]
    moved = _MOVED.match(text)
    if moved:
        return _tidy(moved.group("what"))
    first = min((i for w in words_of_time if w and (i := text.find(w)) >= 0), default=-1)
    if first > 0 and _WORD.search(text[:first]) and not _VERB.match(" " + text[:first]):
        text = text[:first]  # "Exam on Thursday 10 December, 09:00 until 11:20, sports hall": what comes first
    for words in sorted((w for w in words_of_time if w), key=len, reverse=True):
        text = text.replace(words, " ")
    text = " ".join(_ZONE.sub(" ", text).split())
    head = heading_name(headings[-1]) if headings else ""
    if detail or len(_WORD.findall(text)) < 2:
        return head or _tidy(text)
    if _VERB.match(" " + text):
        return head  # "is perfect, see you then": the statement does not name it
    found = _tidy(_cut(_OWNER.sub("", text)))
    return found or head


def heading_name(heading: str) -> str:
    """A heading as an event's name: a calendar invitation's subject without "Invitation:" and its "@ time"."""
    return _tidy(_AT_WHEN.sub("", _INVITE.sub("", heading.strip())))


def _speaker_prefix(text: str) -> bool:
    head = text.split(":", 1)[0].strip()
    return bool(re.fullmatch(r"(?:[A-Z][\w'.-]*)(?:\s[A-Z][\w'.-]*){0,2}|Speaker\s*\d+", head))


def _cut(text: str) -> str:
    """The words before the verb or the time, when there are some."""
    m = _VERB.search(" " + text)
    if m and m.start() > 0:
        text = text[:m.start()]
    m = _APPOINTMENT_WITH.match(text.strip())
    if m:
        text = f"{m.group('what')}, {m.group('who')}"
    return text


def _tidy(text: str) -> str:
    text = text.strip()
    for _ in range(4):
        text = _TRAILING.sub("", text)
    words = text.split()
    if len(words) > MAX_WORDS:
        text = " ".join(words[:MAX_WORDS])
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS - 1].rstrip() + "\u2026"
    return text[:1].upper() + text[1:] if text else ""
